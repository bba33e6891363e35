// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace on a tracepoint with fetch expressions (issue 21): the
 * event's pointer fields followed in the kernel (tpfetch.c, struct
 * pea_tp_attr's @fetches), through /bin/pea in the guest, on calls this
 * test makes (--pid its own):
 *   - tracepoint:syscalls:sys_enter_openat filename 'args->flags': three
 *     openat(2) of known paths and flags: the text line shows the path as
 *     a string (never the pointer in hex), the flags by their type; JSON
 *     "params" exact; CTF read by babeltrace2 holds the strings; a NULL
 *     filename prints (fault@0) and every call is written;
 *   - --filter on the fetched string and a field, in the kernel: exact
 *     hits, written and filtered counts;
 *   - --count-by the fetched string: exact rows;
 *   - 'str(args->filename,8)' cut at 8 bytes;
 *   - tp:syscalls:sys_enter_execve 'join(args->argv)': a child's
 *     /bin/true with its arguments, space-joined (two user reads each);
 *   - what the tool refuses: a field the event lacks, a string stored in
 *     the entry (exit 2 with the reason).
 * Without the kernel's BTF (the debug kernel) bare field names still work
 * (the text, JSON, CTF and --filter cases, flags then an 8-byte integer),
 * and str() and join() are refused with the reason.
 */
#include <sys/syscall.h>
#include "pea_test.h"
#include "pt_tool.h"
#include "pt_exec.h"

#define DIR		"/tmp/pea-tptool"
#define A		DIR "/alpha"
#define B		DIR "/beta-longer-name"
#define C		DIR "/gamma"
#define CTF_DIR		"/tmp/pea-tptool-ctf"
#define TRUE_BIN	"/bin/true"
#define OPENAT		"tracepoint:syscalls:sys_enter_openat"

static char line[65536];
static char out[1 << 18], err[1 << 16];
static char bt[1 << 16];
static bool btf;	/* the kernel has BTF: expressions beyond a bare name */

static void sys_openat(const char *path, int flags)
{
	long fd = syscall(SYS_openat, AT_FDCWD, path, flags, 0);

	if (fd >= 0)
		close((int)fd);
}

static int babeltrace(const char *dir)
{
	char cmd[256];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "/usr/bin/babeltrace2 %s 2>&1", dir);
	f = popen(cmd, "r");
	n = f ? fread(bt, 1, sizeof(bt) - 1, f) : 0;
	bt[n] = 0;
	return f ? pclose(f) : -1;
}

static void test_text(void)
{
	char want[256], buf[4096];
	struct pt_proc p;
	int rc;

	PT_OK(pt_trace_start_self(&p, OPENAT,
				  (char *[]){ "filename", "args->flags", NULL }),
	      OPENAT " filename 'args->flags': attached");
	sys_openat(A, O_RDONLY);
	sys_openat(B, O_RDONLY | O_CLOEXEC);
	sys_openat(NULL, O_RDONLY);
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "text: exit 0");
	snprintf(want, sizeof(want), "  filename=\"" A "\" args->flags=%d\n",
		 O_RDONLY);
	PT_OK(strstr(out, want), "text: %s(got %s)", want, out);
	snprintf(want, sizeof(want), "  filename=\"" B "\" args->flags=%d\n",
		 O_RDONLY | O_CLOEXEC);
	PT_OK(strstr(out, want), "text: %s(got %s)", want, out);
	snprintf(want, sizeof(want), "  filename=(fault@0) args->flags=%d\n",
		 O_RDONLY);
	PT_OK(strstr(out, want), "text: a NULL filename: %s(got %s)", want,
	      out);
	PT_OK(!pt_find_line(out, "filename=0x", NULL, buf, sizeof(buf)),
	      "text: no filename printed as a pointer (%s)", out);
	PT_OK(strstr(err, "3 hits, 3 written"),
	      "text: 3 hits, 3 written (%s)", err);
}

static void test_json_ctf(void)
{
	static const struct {
		const char *path;
		int flags;
	} c[] = {
		{ A, O_RDONLY },
		{ C, O_WRONLY | O_CREAT | O_TRUNC },
	};
	char params[1024], want[1024];
	struct pt_proc p;
	int n = 0, bad = 0, i;

	if (system("rm -rf " CTF_DIR))
		pt_diag("rm -rf " CTF_DIR);
	PT_OK(pt_trace_start_self(&p, OPENAT,
				  (char *[]){ "filename", "args->flags",
					      "--json", "--output", CTF_DIR,
					      "--format", "ctf", NULL }),
	      OPENAT " --json --output ctf: attached");
	for (i = 0; i < 2; i++)
		sys_openat(c[i].path, c[i].flags);
	kill(p.pid, SIGINT);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_streq(line, "type", "event"))
			continue;
		if (n < 2) {
			pt_json_get(line, "params", params, sizeof(params),
				    NULL);
			snprintf(want, sizeof(want),
				 "{\"filename\":\"%s\",\"args->flags\":%d}",
				 c[n].path, c[n].flags);
			if (strcmp(params, want)) {
				bad++;
				pt_diag("call %d: params %s, want %s", n,
					params, want);
			}
			if (!strstr(line, "\"fields\":{")) {
				bad++;
				pt_diag("call %d: no fields: %s", n, line);
			}
		}
		n++;
	}
	pt_proc_drain_err(&p);
	PT_EQ(pt_proc_wait(&p), 0, "JSON: exit 0");
	pt_proc_close(&p);
	PT_EQ(n, 2, "JSON: 2 events");
	PT_EQ(bad, 0, "JSON: each event's params exact, its fields kept");
	PT_EQ(babeltrace(CTF_DIR), 0, "CTF: babeltrace2 reads it");
	PT_OK(strstr(bt, "\"" A "\"") && strstr(bt, "\"" C "\""),
	      "CTF: both paths as strings (%s)", bt);
}

/* Without BTF: what needs types is refused with the reason. */
static void refused_no_btf(const char *probe, const char *expr,
			   const char *msg)
{
	char *argv[] = { PT_PEA, "trace", (char *)probe, (char *)expr, NULL };
	int rc = pt_run(argv, out, sizeof(out), err, sizeof(err), NULL, NULL);

	PT_OK(rc == 2 && strstr(err, msg), "no BTF: %s %s: exit 2, %s (got %d, %s)",
	      probe, expr, msg, rc, err);
}

/* --filter on the fetched string (a predicate in the kernel). */
static void test_filter(void)
{
	struct pt_proc p;
	int rc;

	if (!btf) {
		char *argv[] = { PT_PEA, "trace", OPENAT, "filename", "--filter",
				 "args->filename ~ \"*beta*\"", NULL };

		rc = pt_run(argv, out, sizeof(out), err, sizeof(err), NULL,
			    NULL);
		PT_OK(rc == 2 && strstr(err, "a filter on what a field points to needs the kernel's BTF"),
		      "no BTF: --filter on the string refused (%d, %s)", rc,
		      err);
		return;
	}
	PT_OK(pt_trace_start_self(&p, OPENAT,
				  (char *[]){ "filename", "--filter",
					      "args->filename ~ \"*beta*\" && flags != 1",
					      NULL }),
	      "--filter 'args->filename ~ \"*beta*\" && flags != 1': attached");
	sys_openat(A, O_RDONLY);
	sys_openat(B, O_RDONLY);
	sys_openat(C, O_RDONLY);
	sys_openat(B, 1);
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "--filter: exit 0");
	PT_OK(strstr(out, "  filename=\"" B "\"\n") && !strstr(out, A) &&
	      !strstr(out, C) && strstr(err, "4 hits, 1 written, 3 filtered out"),
	      "--filter: beta's first open only, 4 hits, 1 written, 3 filtered out (%s%s)",
	      out, err);
}

/* --count-by a fetched string: exact rows. */
static void test_count(void)
{
	char hdr[512];
	struct pt_proc p;
	int rc, i;

	PT_OK(pt_trace_start_self(&p, OPENAT,
				  (char *[]){ "filename", "--count-by",
					      "filename", NULL }),
	      "--count-by filename: attached");
	for (i = 0; i < 3; i++)
		sys_openat(A, O_RDONLY);
	for (i = 0; i < 2; i++)
		sys_openat(B, O_RDONLY);
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "--count-by: exit 0");
	PT_OK(pt_find_line(out, "count by filename, 5 events, 2 keys", NULL,
			   hdr, sizeof(hdr)) &&
	      strstr(out, "         3  " A "\n") &&
	      strstr(out, "         2  " B "\n"),
	      "--count-by filename: 5 events, 2 keys: 3 " A ", 2 " B " (%s)",
	      out);
	pt_diag("%s", pt_find_line(out, "count by", NULL, hdr, sizeof(hdr)) ?
		hdr : "no header");
}

static void test_cut(void)
{
	struct pt_proc p;
	int rc;

	if (!btf) {
		refused_no_btf(OPENAT, "str(args->filename,8)",
			       "without the kernel's BTF a tracepoint's fetch is a field's bare name");
		return;
	}
	PT_OK(pt_trace_start_self(&p, OPENAT,
				  (char *[]){ "str(args->filename,8)", NULL }),
	      "str(args->filename,8): attached");
	sys_openat(B, O_RDONLY);
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "str(,8): exit 0");
	PT_OK(strstr(out, "  str(args->filename,8)=\"/tmp/pea\"...\n"),
	      "str(,8): the first 8 bytes, marked cut (%s)", out);
}

static void test_execve(void)
{
	char *const alpha[] = { TRUE_BIN, "alpha", "-b", "--gamma=3", NULL };
	struct pt_proc p;
	int rc;

	if (!btf) {
		refused_no_btf("tp:syscalls:sys_enter_execve", "join(args->argv)",
			       "without the kernel's BTF a tracepoint's fetch is a field's bare name");
		return;
	}
	PT_OK(pt_trace_start_self(&p, "tp:syscalls:sys_enter_execve",
				  (char *[]){ "join(args->argv)", NULL }),
	      "sys_enter_execve 'join(args->argv)': attached");
	PT_EQ(pt_exec_copied(alpha), 0, "/bin/true alpha -b --gamma=3 ran");
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "execve: exit 0");
	PT_OK(strstr(out, "  join(args->argv)=\"" TRUE_BIN
		      " alpha -b --gamma=3\"\n"),
	      "execve: the whole argv, space-joined (%s)", out);
}

static void test_refused(void)
{
	static const struct {
		const char *probe, *expr, *msg;
	} c[] = {
		{ OPENAT, "nothing",
		  "'nothing': syscalls:sys_enter_openat has no field 'nothing'" },
		{ "tracepoint:sched:sched_process_exec", "filename",
		  "'filename': field filename (__data_loc char[]) is in the event itself" },
	};
	char *argv[8];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		argv[0] = PT_PEA;
		argv[1] = "trace";
		argv[2] = (char *)c[i].probe;
		argv[3] = (char *)c[i].expr;
		argv[4] = NULL;
		rc = pt_run(argv, out, sizeof(out), err, sizeof(err), NULL,
			    NULL);
		PT_OK(rc == 2 && strstr(err, c[i].msg),
		      "%s %s: exit 2, %s (got %d, %s)", c[i].probe, c[i].expr,
		      c[i].msg, rc, err);
	}
}

int main(void)
{
	int fd;

	btf = !access("/sys/kernel/btf/vmlinux", R_OK);
	pt_diag("kernel BTF: %s", btf ? "yes" : "no (bare field names only)");
	if (system("mkdir -p " DIR))
		pt_diag("mkdir " DIR);
	fd = open(A, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	test_text();
	test_json_ctf();
	test_filter();
	test_count();
	test_cut();
	test_execve();
	test_refused();
	return pt_done();
}
