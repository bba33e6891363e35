// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace syscall:NAME (issue 21): a kretprobe on the syscall's entry
 * point with its arguments named and typed by its trace event, the path
 * read as a string, the return value signed; through /bin/pea in the
 * guest, on calls this test makes (--pid its own):
 *   - syscall:openat on three openat(2) calls with known paths, flags and
 *     modes: JSON "params" exact (dfd -100 as an int, the path as a
 *     string, flags, mode as umode_t), "ret" the fd, -2 (ENOENT) for a
 *     missing file; the text line's PARAMS exact;
 *   - --filter on an argument by its name: filename ~ "*missing*";
 *   - syscall:getp*id: one probe per syscall, each with its exact count;
 *   - sysenter:GLOB: sysenter:gete[ug]id (no arguments: the matches'
 *     fetches agree) as one fprobe link where the kernel has fprobes
 *     (6.12), a kprobe each where not (6.1), said so; sysenter:getp*id
 *     (getpgid's pid is an argument the others lack) a kprobe each, said
 *     why; each syscall's events exact, each named as its own probe,
 *     getpgid's pid exact; sysenter:f*sync (fsync's and fdatasync's
 *     fd in one register) the same way as gete[ug]id, each fd exact
 *     through the shared link; sysenter:* past the default --max-probes
 *     refused with the bound and how to raise it;
 *   - a syscall with no trace event: exit 2 with the reason.
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include "pea_test.h"
#include "pt_tool.h"
#include "pt_fprobe.h"

#define SC_DIR		"/tmp/pea-sc"
#define KNOWN		SC_DIR "/known"
#define MISSING		SC_DIR "/missing"
#define NEW		SC_DIR "/new"

static char line[65536];
static char out[1 << 18], err[1 << 16];

static long sys_openat(const char *path, int flags, int mode)
{
	long fd = syscall(SYS_openat, AT_FDCWD, path, flags, mode);

	if (fd < 0)
		return -errno;
	close((int)fd);
	return fd;
}

static void test_openat_json(void)
{
	static const struct {
		const char *path;
		int flags, mode;
	} c[] = {
		{ KNOWN, O_RDONLY, 0 },
		{ MISSING, O_RDONLY, 0 },
		{ NEW, O_WRONLY | O_CREAT | O_TRUNC, 0640 },
	};
	char params[1024], want[1024];
	long long ret[3], got_ret[3];
	struct pt_proc p;
	int n = 0, i, bad = 0;

	PT_OK(pt_trace_start_self(&p, "syscall:openat",
				  (char *[]){ "--json", NULL }),
	      "syscall:openat --json: attached");
	for (i = 0; i < 3; i++)
		ret[i] = sys_openat(c[i].path, c[i].flags, c[i].mode);
	kill(p.pid, SIGINT);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_streq(line, "type", "event"))
			continue;
		if (n < 3) {
			pt_json_get(line, "params", params, sizeof(params),
				    NULL);
			snprintf(want, sizeof(want),
				 "{\"dfd\":-100,\"filename\":\"%s\",\"flags\":%d,\"mode\":%d}",
				 c[n].path, c[n].flags, c[n].mode);
			got_ret[n] = pt_json_num(line, "ret", -12345);
			if (strcmp(params, want)) {
				bad++;
				pt_diag("call %d: params %s, want %s", n,
					params, want);
			}
			if (pt_json_num(line, "latency_ns", -1) <= 0) {
				bad++;
				pt_diag("call %d: no latency: %s", n, line);
			}
		}
		n++;
	}
	pt_proc_drain_err(&p);
	PT_EQ(pt_proc_wait(&p), 0, "syscall:openat: exit 0");
	pt_proc_close(&p);
	PT_EQ(n, 3, "syscall:openat: 3 events");
	PT_EQ(bad, 0, "syscall:openat: each call's params exact, a latency");
	PT_OK(ret[0] >= 3 && ret[1] == -ENOENT && ret[2] >= 3,
	      "the calls: fd %lld, %lld, fd %lld", ret[0], ret[1], ret[2]);
	for (i = 0; i < 3 && i < n; i++)
		PT_EQ(got_ret[i], ret[i], "call %d: \"ret\":%lld", i, ret[i]);
}

static void test_openat_text(void)
{
	struct pt_proc p;
	long long r = 0;
	char *s;
	int rc;

	PT_OK(pt_trace_start_self(&p, "syscall:openat",
				  (char *[]){ "--filter",
					      "filename ~ \"*missing*\"", NULL }),
	      "syscall:openat --filter: attached");
	sys_openat(KNOWN, O_RDONLY, 0);
	sys_openat(MISSING, O_RDONLY | O_CLOEXEC, 0);
	sys_openat(KNOWN, O_RDONLY, 0);
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "syscall:openat --filter: exit 0");
	snprintf(line, sizeof(line),
		 "  dfd=-100 filename=\"" MISSING "\" flags=%d mode=0\n",
		 O_RDONLY | O_CLOEXEC);
	s = strstr(out, line);
	PT_OK(s && !strstr(out, KNOWN),
	      "--filter keeps the missing file's call only: %s(got %s)", line,
	      out);
	/* TIME CPU COMM PID TID RET LAT(us) PARAMS: RET is -2 */
	while (s && s > out && s[-1] != '\n')
		s--;
	PT_OK(s && sscanf(s, "%*s %*s %*s %*s %*s %lld", &r) == 1 && r == -2,
	      "its RET column: -2 (%lld)", r);
	PT_OK(strstr(err, "probe: 3 hits, 1 written, 2 filtered out"),
	      "the summary: 3 hits, 1 written, 2 filtered out");
}

static void calls_pid(void)
{
	int i;

	for (i = 0; i < 5; i++) {
		if (i < 2)
			syscall(SYS_getpgid, 0);
		if (i < 3)
			syscall(SYS_getpid);
		syscall(SYS_getppid);
	}
}

static void test_glob(void)
{
	static const char *const names[3] = {
		"syscall:getpgid", "syscall:getpid", "syscall:getppid",
	};
	static const int want[3] = { 2, 3, 5 };
	int got[3] = { 0 }, other = 0, i;
	struct pt_proc p;

	PT_OK(pt_trace_start_self(&p, "syscall:getp*id",
				  (char *[]){ "--json", NULL }),
	      "syscall:getp*id: attached");
	calls_pid();
	kill(p.pid, SIGINT);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_streq(line, "type", "event"))
			continue;
		for (i = 0; i < 3; i++)
			if (pt_json_streq(line, "probe", names[i]))
				break;
		if (i < 3)
			got[i]++;
		else
			other++;
	}
	pt_proc_drain_err(&p);
	PT_OK(strstr(p.err_all ? p.err_all : "", "pea: 'syscall:getp*id': 3 syscalls\n"),
	      "syscall:getp*id: 3 syscalls stated");
	PT_EQ(pt_proc_wait(&p), 0, "syscall:getp*id: exit 0");
	pt_proc_close(&p);
	for (i = 0; i < 3; i++)
		PT_EQ(got[i], want[i], "%s: %d events", names[i], want[i]);
	PT_EQ(other, 0, "no other events");
}

/*
 * One sysenter:GLOB session over the syscalls @names (@n of them, each
 * called want[i] times by @calls(), each event's JSON params @params[i]
 * unless NULL), stderr saying @how.
 */
static void sysenter_glob(const char *glob, const char *const *names,
			  const int *want, const char *const *params, int n,
			  void (*calls)(void), const char *how)
{
	int got[4] = { 0 }, other = 0, badparams = 0, i;
	char msg[512], pidv[64];
	struct pt_proc p;

	PT_OK(pt_trace_start_self(&p, glob, (char *[]){ "--json", NULL }),
	      "%s: attached", glob);
	calls();
	kill(p.pid, SIGINT);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_streq(line, "type", "event"))
			continue;
		for (i = 0; i < n; i++)
			if (pt_json_streq(line, "probe", names[i]))
				break;
		if (i == n) {
			other++;
			continue;
		}
		got[i]++;
		if (params[i] &&
		    (!pt_json_get(line, "params", pidv, sizeof(pidv), NULL) ||
		     strcmp(pidv, params[i]))) {
			badparams++;
			pt_diag("%s: params %s, want %s", names[i], pidv,
				params[i]);
		}
		if (pt_json_num(line, "ret", -12345) != -12345) {
			other++;	/* an entry has no return value */
			pt_diag("%s", line);
		}
	}
	pt_proc_drain_err(&p);
	snprintf(msg, sizeof(msg), "pea: '%s': %d syscalls\n", glob, n);
	PT_OK(strstr(p.err_all ? p.err_all : "", msg), "%s: %d syscalls stated",
	      glob, n);
	snprintf(msg, sizeof(msg), "pea: '%s': %s\n", glob, how);
	PT_OK(strstr(p.err_all ? p.err_all : "", msg), "%s: stderr says \"%s\"",
	      glob, how);
	if (!strstr(p.err_all ? p.err_all : "", msg))
		pt_diag("stderr: %s", p.err_all ? p.err_all : "");
	PT_EQ(pt_proc_wait(&p), 0, "%s: exit 0", glob);
	pt_proc_close(&p);
	for (i = 0; i < n; i++)
		PT_EQ(got[i], want[i], "%s: %d events", names[i], want[i]);
	PT_EQ(other, 0, "%s: no other events, none with a ret", glob);
	PT_EQ(badparams, 0, "%s: the arguments exact in each", glob);
}

static void calls_ugid(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (i < 2)
			syscall(SYS_geteuid);
		syscall(SYS_getegid);
	}
}

static int sync_fd = -1;

static void calls_sync(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (i < 2)
			syscall(SYS_fsync, sync_fd);
		syscall(SYS_fdatasync, sync_fd);
	}
}

static void test_sysenter_glob(void)
{
	static const char *const ugid[] = {
		"sysenter:getegid", "sysenter:geteuid",
	};
	static const int ugid_n[] = { 3, 2 };
	static const char *const pids[] = {
		"sysenter:getpgid", "sysenter:getpid", "sysenter:getppid",
	};
	static const int pids_n[] = { 2, 3, 5 };
	static const char *const pids_p[] = { "{\"pid\":0}", NULL, NULL };
	static const char *const syncs[] = {
		"sysenter:fdatasync", "sysenter:fsync",
	};
	static const int syncs_n[] = { 3, 2 };
	static const char *const none[] = { NULL, NULL };
	const char *syncs_p[2];
	char fdp[32];
	bool fp = pt_kernel_has_fprobe();
	int rc;

	pt_diag("the kernel %s fprobes", fp ? "has" : "has no");
	sysenter_glob("sysenter:gete[ug]id", ugid, ugid_n, none, 2, calls_ugid,
		      fp ? "one fprobe link for 2 functions" :
		      "one kprobe per function, 2 links (this kernel has no fprobe)");
	sysenter_glob("sysenter:getp*id", pids, pids_n, pids_p, 3, calls_pid,
		      "one kprobe per function, 3 links (the fetches of 'sysenter:getpid' differ from those of 'sysenter:getpgid' (their BTF signatures))");
	/* Both take an unsigned int fd in rdi: one fprobe link on 6.12. */
	sync_fd = open(KNOWN, O_RDONLY | O_CLOEXEC);
	PT_OK(sync_fd >= 0, "open " KNOWN);
	snprintf(fdp, sizeof(fdp), "{\"fd\":%d}", sync_fd);
	syncs_p[0] = syncs_p[1] = fdp;
	sysenter_glob("sysenter:f*sync", syncs, syncs_n, syncs_p, 2,
		      calls_sync, fp ? "one fprobe link for 2 functions" :
		      "one kprobe per function, 2 links (this kernel has no fprobe)");
	close(sync_fd);
	rc = pt_run((char *[]){ PT_PEA, "trace", "sysenter:*", NULL }, out,
		    sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "more than 256 probes in one session ('sysenter:") &&
	      strstr(err, "of 'sysenter:*' is one more): --max-probes N takes up to 1024"),
	      "sysenter:* at the default --max-probes: exit 2, the bound and how to raise it");
	if (rc != 2)
		pt_diag("exit %d: %s", rc, err);
}

static void test_usage(void)
{
	int rc = pt_run((char *[]){ PT_PEA, "trace", "syscall:pea_nosuch",
				    NULL }, out, sizeof(out), err, sizeof(err),
			NULL, NULL);

	PT_OK(rc == 2 && strstr(err, "no trace event syscalls:sys_enter_pea_nosuch"),
	      "syscall:pea_nosuch: exit 2, no such event");
	if (rc != 2)
		pt_diag("exit %d: %s", rc, err);
}

int main(void)
{
	int fd;

	mkdir(SC_DIR, 0755);
	unlink(MISSING);
	fd = open(KNOWN, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		pt_fatal("create " KNOWN);
	close(fd);
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		/* The debug kernel: no BTF, and the reason said. */
		int rc = pt_run((char *[]){ PT_PEA, "trace", "syscall:openat",
					    NULL }, out, sizeof(out), err,
				sizeof(err), NULL, NULL);

		PT_OK(rc == 2 && strstr(err, "no BTF"),
		      "no BTF: syscall:openat refused with the reason");
		return pt_done();
	}
	test_openat_json();
	test_openat_text();
	test_glob();
	test_sysenter_glob();
	test_usage();
	return pt_done();
}
