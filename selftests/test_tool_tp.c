// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace tracepoint:/tp: and pea list, through /bin/pea in the guest:
 * every tracepoint format in tracefs parses, exact fields (filename, pid,
 * comm) of execs and openat calls this test makes, --filter evaluated in
 * the kernel with exact written and filtered counts, context terms
 * (ctx.comm, ctx.uid, ctx.cgroup "PATH") mixed with the event's own field
 * named pid, usage and lookup errors.
 */
#include <dirent.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_tool.h"
#include "pt_exec.h"
#include "pt_perm.h"

#define EVENTS	"/sys/kernel/tracing/events"

static char line[65536];
static char self_exe[256];

/* Format files in tracefs, counted here independently of the tool. */
static int count_formats(void)
{
	DIR *d = opendir(EVENTS), *sd;
	struct dirent *s, *e;
	char path[1024], f[1400];
	int n = 0;

	if (!d)
		return -1;
	while ((s = readdir(d))) {
		if (s->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), EVENTS "/%s", s->d_name);
		sd = opendir(path);
		if (!sd)
			continue;
		while ((e = readdir(sd))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(f, sizeof(f), "%s/%s/format", path, e->d_name);
			if (!access(f, R_OK))
				n++;
		}
		closedir(sd);
	}
	closedir(d);
	return n;
}

static void test_list(void)
{
	static char out[1 << 20], err[65536];
	char want[128];
	int rc, n = count_formats(), lines = 0;
	char *l;

	PT_OK(n > 500, "tracefs has %d tracepoint formats", n);
	rc = pt_run((char *[]){ PT_PEA, "list", "--tracepoints", "--check", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 0, "pea list --check: exit 0");
	snprintf(want, sizeof(want), "pea: %d formats parsed, 0 failed", n);
	PT_OK(strstr(err, want), "every format parses: \"%s\"", want);
	if (!strstr(err, want))
		pt_diag("stderr: %.2000s", err);
	for (l = out; (l = strchr(l, '\n')); l++)
		lines++;
	PT_EQ(lines, n, "one line per tracepoint");

	rc = pt_run((char *[]){ PT_PEA, "list", "sched:sched_process_e*", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 0 && !strcmp(out, "tracepoint:sched:sched_process_exec\n"
					"tracepoint:sched:sched_process_exit\n"),
	      "pea list 'sched:sched_process_e*': exec and exit");
	rc = pt_run((char *[]){ PT_PEA, "list", "-k", "do_sys_openat2", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 0 && !strcmp(out, "kprobe:do_sys_openat2\n"),
	      "pea list -k do_sys_openat2: the function (%s)", out);
	rc = pt_run((char *[]){ PT_PEA, "list", "kprobe:vfs_rea*", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 0 && strstr(out, "kprobe:vfs_read\n") &&
	      !strstr(out, "tracepoint:"),
	      "pea list 'kprobe:vfs_rea*' has kprobe:vfs_read only");
}

static void test_exec(void)
{
	static const char *const names[] = { "/tmp/pea_tp_tool_a",
					      "/tmp/pea_tp_tool_b" };
	char fields[4096], buf[1024];
	pid_t pids[2];
	struct pt_proc p;
	int i, events = 0, rc;
	bool ok = true;

	for (i = 0; i < 2; i++) {
		unlink(names[i]);
		if (symlink(self_exe, names[i]))
			pt_fatal("symlink");
	}
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "tp:sched:sched_process_exec",
					  "--json", "-c", "2", "--filter",
					  "filename ~ \"/tmp/pea_tp_tool_*\"",
					  NULL }),
	      "pea trace tp:sched:sched_process_exec --filter attaches");
	pids[0] = pt_exec_exit(names[0]);
	pt_exec_exit(self_exe);
	pids[1] = pt_exec_exit(names[1]);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_valid(line)) {
			ok = false;
			pt_diag("bad JSON: %s", line);
			continue;
		}
		if (pt_json_streq(line, "type", "summary")) {
			PT_EQ(pt_json_num(line, "events", -1), 2,
			      "summary: 2 events");
			PT_OK(pt_json_get(line, "link", buf, sizeof(buf), NULL) &&
			      pt_json_num(buf, "written", -1) == 2 &&
			      pt_json_num(buf, "filtered", -1) == 1,
			      "summary: the link wrote 2, filtered 1 (%s)", buf);
			continue;
		}
		if (!pt_json_streq(line, "type", "event") || events >= 2)
			continue;
		i = events++;
		PT_OK(pt_json_streq(line, "probe", "tp:sched:sched_process_exec"),
		      "exec %d: probe", i);
		PT_EQ(pt_json_num(line, "pid", -1), pids[i], "exec %d: pid", i);
		PT_OK(pt_json_streq(line, "comm", names[i] + 5),
		      "exec %d: comm %s", i, names[i] + 5);
		PT_OK(pt_json_get(line, "fields", fields, sizeof(fields), NULL) &&
		      pt_json_streq(fields, "filename", names[i]) &&
		      pt_json_num(fields, "pid", -1) == pids[i] &&
		      pt_json_num(fields, "old_pid", -1) == pids[i],
		      "exec %d: fields filename, pid, old_pid (%s)", i, fields);
	}
	rc = pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_EQ(rc, 0, "-c 2: pea trace exits 0");
	PT_EQ(events, 2, "two exec events");
	PT_OK(ok, "every line is valid JSON");

	/* The human format: name=value. */
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "tracepoint:sched:sched_process_exec",
					  "-c", "1", "--filter",
					  "filename == \"/tmp/pea_tp_tool_a\"", NULL }),
	      "pea trace tracepoint:sched:sched_process_exec attaches");
	pids[0] = pt_exec_exit(names[0]);
	snprintf(buf, sizeof(buf), "filename=\"%s\" pid=%d old_pid=%d",
		 names[0], pids[0], pids[0]);
	for (i = 0; pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS);)
		if (strstr(line, buf))
			i++;
	pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_EQ(i, 1, "the line has %s", buf);

	/*
	 * == on a string is exact, as Linux's: "..._*" is no pattern there,
	 * so only ~ matches b (a's exec is filtered).
	 */
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "tp:sched:sched_process_exec",
					  "--json", "-c", "1", "--filter",
					  "filename == \"/tmp/pea_tp_tool_*\" || filename ~ \"*_b\"",
					  NULL }),
	      "sched_process_exec with == \"..._*\" || ~ \"*_b\" attaches");
	pids[0] = pt_exec_exit(names[0]);
	pids[1] = pt_exec_exit(names[1]);
	for (i = 0, events = 0;
	     pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS);) {
		if (pt_json_streq(line, "type", "event")) {
			events++;
			i = pt_json_num(line, "pid", -1) == pids[1];
		}
		if (pt_json_streq(line, "type", "summary"))
			PT_OK(pt_json_get(line, "link", buf, sizeof(buf), NULL) &&
			      pt_json_num(buf, "written", -1) == 1 &&
			      pt_json_num(buf, "filtered", -1) == 1,
			      "== is exact: the link wrote 1 (b), filtered 1 (a) (%s)",
			      buf);
	}
	pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_OK(events == 1 && i, "== is exact: the one event is b's exec (%d events)",
	      events);

	/* Single quotes, as Linux's filter takes them (review finding 1). */
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "tp:sched:sched_process_exec",
					  "--json", "-d", "3", "--filter",
					  "filename == '/tmp/pea_tp_tool_b'", NULL }),
	      "sched_process_exec with a '...' string attaches");
	pids[0] = pt_exec_exit(names[0]);
	pids[1] = pt_exec_exit(names[1]);
	for (i = 0, events = 0;
	     pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS);)
		if (pt_json_streq(line, "type", "event")) {
			events++;
			i = pt_json_num(line, "pid", -1) == pids[1];
		}
	pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_OK(events == 1 && i,
	      "filename == '...': the one event is b's exec (%d events)", events);
	unlink(names[0]);
	unlink(names[1]);
}

static void test_openat(void)
{
	char fields[4096], want[64], pid[16];
	struct pt_proc p;
	int events = 0;

	snprintf(pid, sizeof(pid), "%d", getpid());
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "tp:syscalls:sys_enter_openat",
					  "--json", "-c", "1", "--pid", pid, "--filter",
					  "dfd == 4242 && flags & 0x10000", NULL }),
	      "sys_enter_openat with a numeric filter attaches");
	syscall(SYS_openat, 4241L, "pea-x", (long)O_DIRECTORY);
	syscall(SYS_openat, 4242L, "pea-x", (long)O_RDONLY);
	syscall(SYS_openat, 4242L, "pea-x", (long)O_DIRECTORY);
	snprintf(want, sizeof(want), "0x%lx", (unsigned long)"pea-x");
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_streq(line, "type", "event"))
			continue;
		events++;
		PT_OK(pt_json_get(line, "fields", fields, sizeof(fields), NULL) &&
		      pt_json_num(fields, "dfd", -1) == 4242 &&
		      pt_json_num(fields, "flags", -1) == O_DIRECTORY &&
		      pt_json_streq(fields, "filename", want) &&
		      pt_json_num(fields, "__syscall_nr", -1) == SYS_openat,
		      "openat: fields exact (%s)", fields);
		PT_EQ(pt_json_num(line, "tid", -1), gettid(), "openat: tid");
	}
	pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_EQ(events, 1, "openat: only the call that matches both predicates");
}

/* raw_syscalls:sys_enter: a long and an unsigned long[6], as a JSON array. */
static void test_array(void)
{
	char fields[4096], args[256], pid[16];
	struct pt_proc p;
	int events = 0;

	snprintf(pid, sizeof(pid), "%d", getpid());
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "tp:raw_syscalls:sys_enter",
					  "--json", "-c", "1", "--pid", pid, "--filter",
					  "id == 4242", NULL }),
	      "raw_syscalls:sys_enter with id == 4242 attaches");
	/* No such system call: ENOSYS, but the tracepoint sees it. */
	syscall(4241, 1L, 2L, 3L, 4L, 5L, 6L);
	syscall(4242, 11L, 22L, 33L, -1L, 0x7fffffffffffL, 66L);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_streq(line, "type", "event"))
			continue;
		events++;
		PT_OK(pt_json_get(line, "fields", fields, sizeof(fields), NULL) &&
		      pt_json_num(fields, "id", -1) == 4242 &&
		      pt_json_get(fields, "args", args, sizeof(args), NULL) &&
		      !strcmp(args, "[11,22,33,18446744073709551615,140737488355327,66]"),
		      "sys_enter: id and the args array exact (%s)", fields);
	}
	pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_EQ(events, 1, "sys_enter: one event, the filtered call's");
}

/*
 * ||, ! and parentheses in --filter, evaluated in the kernel: six calls,
 * three match; the summary's written and filtered are exact.
 */
static void test_logic(void)
{
	/* Matching: the first, fourth and sixth. */
	static const struct { long dfd; int flags; } calls[] = {
		{ 4301, O_RDONLY }, { 4301, O_DIRECTORY }, { 4303, O_RDONLY },
		{ 4306, O_RDONLY }, { 4307, O_DIRECTORY }, { 4308, O_RDONLY },
	};
	char fields[4096], buf[1024], pid[16], expr[4096];
	int events = 0, summaries = 0, i, rc;
	static char out[65536], err[8192];
	struct pt_proc p;
	size_t n;

	snprintf(pid, sizeof(pid), "%d", getpid());
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "tp:syscalls:sys_enter_openat",
					  "--json", "-c", "3", "--pid", pid, "--filter",
					  "(dfd == 4301 || dfd >= 4305) && !(flags & 0x10000)",
					  NULL }),
	      "sys_enter_openat with (a || b) && !c attaches");
	for (i = 0; i < 6; i++)
		syscall(SYS_openat, calls[i].dfd, "pea-x", (long)calls[i].flags);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (pt_json_streq(line, "type", "summary")) {
			summaries++;
			PT_OK(pt_json_get(line, "link", buf, sizeof(buf), NULL) &&
			      pt_json_num(buf, "written", -1) == 3 &&
			      pt_json_num(buf, "filtered", -1) == 3,
			      "(a || b) && !c: the link wrote 3, filtered 3 (%s)",
			      buf);
			continue;
		}
		if (!pt_json_streq(line, "type", "event"))
			continue;
		PT_OK(pt_json_get(line, "fields", fields, sizeof(fields), NULL),
		      "(a || b) && !c: event %d has fields", events + 1);
		events++;
		PT_OK(pt_json_num(fields, "dfd", -1) == (events == 1 ? 4301 :
							 events == 2 ? 4306 : 4308) &&
		      pt_json_num(fields, "flags", -1) == O_RDONLY,
		      "(a || b) && !c: event %d is the matching call's (%s)",
		      events, fields);
	}
	pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_EQ(events, 3, "(a || b) && !c: three events");
	PT_EQ(summaries, 1, "(a || b) && !c: one summary");

	/* 33 different comparisons: refused by the tool, with the bound. */
	for (i = 0, n = 0; i < 33; i++)
		n += snprintf(expr + n, sizeof(expr) - n, "%sdfd == %d",
			      i ? " || " : "", i);
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:syscalls:sys_enter_openat",
				"--filter", expr, NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "more than 32 different comparisons"),
	      "--filter with 33 comparisons: usage error with the bound (%s)",
	      err);
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:syscalls:sys_enter_openat",
				"--filter", "(dfd == 1 || dfd == 2", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "expected ')'"),
	      "--filter with an unclosed '(': usage error (%s)", err);
	/*
	 * A ~ pattern with what Linux's glob_match() means and pea's glob
	 * has not ([classes], \ escapes, a leading ! negation): a usage
	 * error, not a pattern matching otherwise (review finding 1).
	 */
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:sched:sched_process_exec",
				"-d", "1", "--filter", "filename ~ \"/tmp/pea_tp_tool_[ab]\"",
				NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "a ~ pattern takes '*' and '?' only"),
	      "--filter ~ with [ab]: usage error (%d: %s)", rc, err);
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:sched:sched_process_exec",
				"-d", "1", "--filter", "filename ~ \"!/tmp/*\"", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "starting with '!'"),
	      "--filter ~ \"!...\": usage error (%d: %s)", rc, err);
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:syscalls:sys_enter_openat",
				"--filter", "dfd == 1 ||", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "expected a field name"),
	      "--filter ending in ||: usage error (%s)", err);
}

/* ---- context terms: getpgid(GP0 + i), which nothing else calls ---- */

#define GP0		0x40000000L
#define CG_MNT		"/tmp/pea-tt-cg2"
#define CG_DIR		CG_MNT "/pea-tt"

/* Calls 0..5 as "pea-tt-x", 6..7 as "pea-tt-y". */
static void wl_comm(void)
{
	int i;

	for (i = 0; i < 8; i++) {
		prctl(PR_SET_NAME, i < 6 ? "pea-tt-x" : "pea-tt-y");
		syscall(SYS_getpgid, GP0 + i);
	}
	prctl(PR_SET_NAME, "test_tool_tp");
}

/* Calls 0..2 by a child in CG_DIR as uid 1234, 3..7 by this process. */
static void wl_kid(void)
{
	char pid[16];
	pid_t k;
	int i, fd, st;

	fflush(stdout);
	k = fork();
	if (!k) {
		snprintf(pid, sizeof(pid), "%d", getpid());
		fd = open(CG_DIR "/cgroup.procs", O_WRONLY);
		if (fd < 0 || write(fd, pid, strlen(pid)) < 0 ||
		    setresuid(1234, 1234, 1234))
			_exit(1);
		for (i = 0; i < 3; i++)
			syscall(SYS_getpgid, GP0 + i);
		_exit(0);
	}
	PT_OK(k > 0 && waitpid(k, &st, 0) == k && WIFEXITED(st) &&
	      !WEXITSTATUS(st), "the child's calls in its cgroup as uid 1234");
	for (i = 3; i < 8; i++)
		syscall(SYS_getpgid, GP0 + i);
}

/*
 * pea trace tp:syscalls:sys_enter_getpgid --filter @expr over @wl: the
 * events (bit i: the call with pid GP0 + i) and the summary's counts.
 */
static void ctx_run(const char *expr, void (*wl)(void), int count,
		    unsigned int want, int filtered)
{
	char fields[4096], buf[1024], n[16];
	unsigned int seen = 0;
	int events = 0, summaries = 0;
	long long v;
	struct pt_proc p;
	bool ok;

	snprintf(n, sizeof(n), "%d", count);
	ok = pt_trace_start(&p, (char *[]){ PT_PEA, "trace",
					  "tp:syscalls:sys_enter_getpgid",
					  "--json", "-c", n, "--filter",
					  (char *)expr, NULL });
	PT_OK(ok, "--filter '%s' attaches", expr);
	if (!ok) {
		pt_proc_close(&p);
		return;
	}
	wl();
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (pt_json_streq(line, "type", "summary")) {
			summaries++;
			PT_OK(pt_json_get(line, "link", buf, sizeof(buf), NULL) &&
			      pt_json_num(buf, "written", -1) == count &&
			      pt_json_num(buf, "filtered", -1) == filtered,
			      "'%s': the link wrote %d, filtered %d (%s)", expr,
			      count, filtered, buf);
			continue;
		}
		if (!pt_json_streq(line, "type", "event") ||
		    !pt_json_get(line, "fields", fields, sizeof(fields), NULL))
			continue;
		events++;
		v = pt_json_num(fields, "pid", -1);
		if (v >= GP0 && v < GP0 + 8)
			seen |= 1U << (v - GP0);
	}
	pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_OK(events == count && summaries == 1 && seen == want,
	      "'%s': %d events, the calls %#x (%d, %#x)", expr, count, want,
	      events, seen);
}

/* Root without CAP_BPF and CAP_SYS_ADMIN: CAP_PERFMON, not a BPF loader. */
static void no_bpf(void *arg)
{
	(void)arg;
	if (prctl(PR_CAPBSET_DROP, CAP_BPF, 0, 0, 0) ||
	    prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0))
		_exit(125);
}

/*
 * ctx.uid and ctx.gid take CAP_BPF and CAP_PERFMON: without CAP_BPF the
 * attach fails with a message that says so; ctx.comm attaches.
 */
static void test_ctx_perm(void)
{
	static const char *path = "/proc/sys/kernel/perf_event_paranoid";
	static char out[65536], err[8192];
	long old = pt_perm_read_int(path);
	int rc;

	/* Debian's paranoid 3 lets only CAP_SYS_ADMIN attach a tracepoint. */
	PT_EQ(pt_perm_write_int(path, 2), 0, "perf_event_paranoid 2");
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:syscalls:sys_enter_getpgid",
				"--filter", "ctx.comm == \"x\" || ctx.gid == 7",
				"-d", "1", NULL },
		    out, sizeof(out), err, sizeof(err), no_bpf, NULL);
	PT_OK(rc == 1 && strstr(err, "a filter on ctx.uid or ctx.gid CAP_BPF and CAP_PERFMON"),
	      "without CAP_BPF: a ctx.gid filter is refused, the message names CAP_BPF and CAP_PERFMON (%d: %s)",
	      rc, err);
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:syscalls:sys_enter_getpgid",
				"--filter", "ctx.comm == \"x\" || ctx.pid == 7",
				"-d", "1", NULL },
		    out, sizeof(out), err, sizeof(err), no_bpf, NULL);
	PT_OK(rc == 0, "without CAP_BPF: ctx.comm and ctx.pid attach (%d: %s)",
	      rc, err);
	pt_perm_write_int(path, old);
}

static void test_ctx(void)
{
	static char out[65536], err[8192];
	char expr[512];
	int rc;

	/* The event's field pid is the field; ctx.comm is the task's. */
	ctx_run("ctx.comm == \"pea-tt-x\" && pid > 0x40000002", wl_comm, 3,
		0x38, 5);
	ctx_run("ctx.comm ~ \"pea-tt-?\" && !(pid & 1) || comm == \"pea-tt-y\"",
		wl_comm, 5, 0xd5, 3);
	mkdir(CG_MNT, 0755);
	if (mount("none", CG_MNT, "cgroup2", 0, NULL) && errno != EBUSY)
		pt_diag("mount cgroup2: %s", strerror(errno));
	rmdir(CG_DIR);
	PT_EQ(mkdir(CG_DIR, 0755), 0, "a cgroup v2 directory");
	snprintf(expr, sizeof(expr),
		 "ctx.cgroup == \"%s\" && ctx.uid == 1234 && pid != 0x40000001 || pid == 0x40000007",
		 CG_DIR);
	ctx_run(expr, wl_kid, 3, 0x85, 5);
	snprintf(expr, sizeof(expr), "ctx.cgroup != '%s' && ctx.pid == %d",
		 CG_DIR, getpid());
	ctx_run(expr, wl_kid, 5, 0xf8, 3);
	rmdir(CG_DIR);
	umount(CG_MNT);

	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:syscalls:sys_enter_getpgid",
				"--filter", "ctx.cgroup == \"/proc\"", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "'/proc' is not in a cgroup v2 file system"),
	      "--filter ctx.cgroup == \"/proc\": usage error (%d: %s)", rc, err);
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:syscalls:sys_enter_getpgid",
				"--filter", "ctx.uid == -1", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "'ctx.uid': -1 is out of range (0..4294967295)"),
	      "--filter ctx.uid == -1: usage error (%d: %s)", rc, err);
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:syscalls:sys_enter_getpgid",
				"--filter", "ctx.name == 1", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "'ctx.name': no such context value"),
	      "--filter ctx.name == 1: usage error (%d: %s)", rc, err);
}

static void test_errors(void)
{
	static char out[65536], err[8192];
	int rc;

	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:nosuch:event", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 1 && strstr(err, "no tracepoint nosuch:event"),
	      "an unknown tracepoint: exit 1, 'no tracepoint' (%s)", err);
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:sched", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 2, "tp:sched without a name: usage error");
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:sched:sched_process_exec",
				"--filter", "nosuch == 1", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "no field 'nosuch'"),
	      "--filter on an unknown field: usage error (%s)", err);
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:sched:sched_process_exec",
				"--filter", "filename < 3", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 2, "--filter: < on a string is a usage error");
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:sched:sched_process_exec",
				"--filter", "pid == abc", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 2, "--filter: a number field with a word is a usage error");
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:sched:sched_process_exec",
				"--filter", "pid == 1 pid", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 2, "--filter: trailing garbage is a usage error");
	rc = pt_run((char *[]){ PT_PEA, "trace", "kprobe:vfs_read",
				"--filter", "pid == 1", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 2, "--filter with a kprobe is a usage error");
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:sched:sched_process_exec",
				"--str", "ARG1", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 2, "--str with a tracepoint is a usage error");
}

int main(int argc, char **argv)
{
	pt_exec_init(argc, argv, self_exe, sizeof(self_exe));
	test_list();
	test_exec();
	test_openat();
	test_array();
	test_logic();
	test_ctx();
	test_ctx_perm();
	test_errors();
	return pt_done();
}
