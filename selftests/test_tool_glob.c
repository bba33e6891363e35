// SPDX-License-Identifier: GPL-2.0
/*
 * PROBE globs in `pea trace` (issue 21): one probe per match, each with
 * the options after the glob, through /bin/pea in the guest:
 *   - one session of kprobe:__x64_sys_getp*id, kretprobe: the same,
 *     tp:syscalls:sys_enter_getp*id and uprobe:SELF:pt_glob_fn_*: stderr
 *     states each glob's count, which is what the test finds in tracefs
 *     (the kprobe globs take only available_filter_functions: on 6.1
 *     __x64_sys_getpgid alone of the three) and its own symbols; the
 *     calls this test makes give every probe its exact count of events,
 *     the kretprobes their return values;
 *   - more than 256 probes, which was 64: tp:syscalls:sys_enter_* is
 *     refused at the default --max-probes with the reason, and with
 *     --max-probes 1024 every one attaches (the stated count is the
 *     tracefs one) and sys_enter_getppid sees exactly this test's calls;
 *   - a kprobe glob skips the kprobes blacklist, as bpftrace and perf do:
 *     a function on the blacklist that ftrace can trace, named by a glob
 *     that matches only it, matches nothing (stating the one skipped),
 *     and named as it is the kernel refuses it (EINVAL, said so);
 *   - a glob that matches nothing, a glob with +OFFSET, and one past
 *     --max-probes: exit 2 with the reason.
 */
#include <dirent.h>
#include <fnmatch.h>
#include <sys/syscall.h>
#include "pea_test.h"
#include "pt_tool.h"

#define TRACEFS		"/sys/kernel/tracing"
#define BLACKLIST	"/sys/kernel/debug/kprobes/blacklist"

static char line[65536];
static char out[1 << 20], err[1 << 16];
static char self[256], pid_s[16];

__attribute__((noipa, used)) long pt_glob_fn_a(long n)
{
	__asm__ volatile("" : : "r"(n) : "memory");
	return n + 1;
}

__attribute__((noipa, used)) long pt_glob_fn_b(long n)
{
	__asm__ volatile("" : : "r"(n) : "memory");
	return n + 2;
}

__attribute__((noipa, used)) long pt_glob_fn_c(long n)
{
	__asm__ volatile("" : : "r"(n) : "memory");
	return n + 3;
}

#define N_PID	3
#define N_PPID	5
#define N_PGID	2

/* The calls every probe of the first session counts. */
static void workload(void)
{
	int i;

	for (i = 0; i < N_PPID; i++) {
		if (i < N_PID)
			syscall(SYS_getpid);
		syscall(SYS_getppid);
		if (i < N_PGID)
			syscall(SYS_getpgid, 0);
	}
	pt_glob_fn_a(10);
	pt_glob_fn_b(20);
	pt_glob_fn_b(20);
	pt_glob_fn_c(30);
	pt_glob_fn_c(30);
	pt_glob_fn_c(30);
}

/* Lines of @path (first word of each) matching glob @pat. */
static int count_matches(const char *path, const char *pat)
{
	FILE *f = fopen(path, "r");
	char l[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(l, sizeof(l), f)) {
		l[strcspn(l, " \t\n")] = 0;
		if (!fnmatch(pat, l, 0))
			n++;
	}
	fclose(f);
	return n;
}

/* Events of tracefs events/@subsys/ whose names match @pat. */
static int count_events(const char *subsys, const char *pat)
{
	char path[512];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), TRACEFS "/events/%s", subsys);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && !fnmatch(pat, e->d_name, 0))
			n++;
	closedir(d);
	return n;
}

struct probe_count {
	const char *name;
	long long want, got, bad;
};

/*
 * Read a JSON session in @p to its end: events counted per probe of @pc
 * (@n), events of no probe in *@other. The kretprobes' ret and the
 * uprobes' arg0 are checked against what the calls return and pass.
 */
static int json_collect(struct pt_proc *p, struct probe_count *pc, int n,
			int *other)
{
	int i, rc;

	*other = 0;
	/*
	 * The records come at the end, after every probe is detached: with
	 * hundreds of probes that is seconds after the SIGINT (45 s on
	 * 6.12-rt when pea closed them one after another), so each line
	 * may take twice the usual wait.
	 */
	while (pt_proc_line(p, false, line, sizeof(line),
			    2 * PT_TOOL_WAIT_MS)) {
		char name[256];

		if (!pt_json_streq(line, "type", "event"))
			continue;
		if (!pt_json_get(line, "probe", name, sizeof(name), NULL))
			name[0] = 0;
		for (i = 0; i < n; i++)
			if (!strcmp(name, pc[i].name))
				break;
		if (i == n) {
			++*other;
			continue;
		}
		pc[i].got++;
		if (!strcmp(name, "kretprobe:__x64_sys_getpid") &&
		    pt_json_num(line, "ret", -1) != getpid())
			pc[i].bad++;
		if (!strcmp(name, "kretprobe:__x64_sys_getppid") &&
		    pt_json_num(line, "ret", -1) != getppid())
			pc[i].bad++;
	}
	PT_OK(p->oeof, "the tool's output read to its end");
	pt_proc_drain_err(p);
	rc = pt_proc_wait(p);
	snprintf(err, sizeof(err), "%s", p->err_all ? p->err_all : "");
	pt_proc_close(p);
	return rc;
}

/*
 * Whether kernel function @name is in available_filter_functions: a
 * kprobe glob takes only those (the getp*id syscalls are not all there:
 * 6.1 lists __x64_sys_getpgid alone).
 */
static bool traceable(const char *name)
{
	return count_matches(TRACEFS "/available_filter_functions", name) > 0;
}

static void test_session(void)
{
	static const char *const sc[3] = { "getpgid", "getpid", "getppid" };
	static const long long sc_n[3] = { N_PGID, N_PID, N_PPID };
	char up[512], up_fn[3][300], names[6][96];
	struct probe_count pc[12];
	char want[600];
	struct pt_proc p;
	int i, rc, other, kn = 0, np = 0;

	snprintf(up, sizeof(up), "uprobe:%s:pt_glob_fn_*", self);
	/* The kprobe and kretprobe globs: the traceable ones of the three. */
	for (i = 0; i < 3; i++) {
		char fn[64];

		snprintf(fn, sizeof(fn), "__x64_sys_%s", sc[i]);
		if (!traceable(fn))
			continue;
		kn++;
		snprintf(names[2 * i], sizeof(names[0]), "kprobe:%s", fn);
		snprintf(names[2 * i + 1], sizeof(names[0]), "kretprobe:%s", fn);
		pc[np++] = (struct probe_count){ .name = names[2 * i],
						 .want = sc_n[i] };
		pc[np++] = (struct probe_count){ .name = names[2 * i + 1],
						 .want = sc_n[i] };
	}
	PT_EQ(count_matches(TRACEFS "/available_filter_functions",
			    "__x64_sys_getp*id"), kn,
	      "tracefs: %d of the getp*id syscalls' functions are traceable, and no other match",
	      kn);
	PT_OK(kn >= 1, "at least one (%d)", kn);
	pc[np++] = (struct probe_count){ .name = "tp:syscalls:sys_enter_getpgid",
					 .want = N_PGID };
	pc[np++] = (struct probe_count){ .name = "tp:syscalls:sys_enter_getpid",
					 .want = N_PID };
	pc[np++] = (struct probe_count){ .name = "tp:syscalls:sys_enter_getppid",
					 .want = N_PPID };
	for (i = 0; i < 3; i++) {
		snprintf(up_fn[i], sizeof(up_fn[i]), "uprobe:%s:pt_glob_fn_%c",
			 self, 'a' + i);
		pc[np++] = (struct probe_count){ .name = up_fn[i],
						 .want = i + 1 };
	}
	PT_EQ(count_events("syscalls", "sys_enter_getp*id"), 3,
	      "tracefs: 3 events match syscalls:sys_enter_getp*id");
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "--json",
		"--pid", pid_s, "kprobe:__x64_sys_getp*id",
		"kretprobe:__x64_sys_getp*id", "tp:syscalls:sys_enter_getp*id",
		up, NULL }), "4 globs, %d probes: attached", np);
	workload();
	kill(p.pid, SIGINT);
	rc = json_collect(&p, pc, np, &other);
	PT_EQ(rc, 0, "globs: exit 0");
	if (rc)
		pt_diag("stderr: %s", err);
	snprintf(want, sizeof(want),
		 "pea: 'kprobe:__x64_sys_getp*id': %d functions kprobes can probe\n"
		 "pea: 'kretprobe:__x64_sys_getp*id': %d functions kprobes can probe\n"
		 "pea: 'tp:syscalls:sys_enter_getp*id': 3 tracepoints\n", kn, kn);
	PT_OK(strstr(err, want), "stderr states %d functions per kprobe glob, 3 tracepoints",
	      kn);
	snprintf(want, sizeof(want), "pea: '%s': 3 functions in its symbol tables\n",
		 up);
	PT_OK(strstr(err, want), "stderr states 3 functions of the uprobe glob");
	for (i = 0; i < np; i++)
		PT_OK(pc[i].got == pc[i].want && !pc[i].bad,
		      "%s: %lld events (got %lld, %lld with a wrong value)",
		      pc[i].name, pc[i].want, pc[i].got, pc[i].bad);
	PT_EQ(other, 0, "no event of another probe");
}

/* tp:syscalls:sys_enter_*: past 256 probes with --max-probes 1024. */
static void test_many(void)
{
	struct probe_count pc = { .name = "tp:syscalls:sys_enter_getppid", .want = N_PPID };
	int n = count_events("syscalls", "sys_enter_*"), rc, i, other;
	long long t0;
	char want[256];
	struct pt_proc p;

	PT_OK(n > 256, "tracefs: %d syscalls:sys_enter_* events, more than 256",
	      n);
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:syscalls:sys_enter_*",
			NULL }, out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "more than 256 probes in one session ('tp:syscalls:") &&
	      strstr(err, "of 'tp:syscalls:sys_enter_*' is one more): --max-probes N takes up to 1024"),
	      "sys_enter_* at the default --max-probes: exit 2, the reason");
	if (rc != 2)
		pt_diag("exit %d: %s", rc, err);
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "--json",
		"--max-probes", "1024", "--pid", pid_s,
		"tp:syscalls:sys_enter_*", NULL }),
	      "%d tracepoints: attached", n);
	for (i = 0; i < N_PPID; i++)
		syscall(SYS_getppid);
	t0 = pt_now_ms();
	kill(p.pid, SIGINT);
	rc = json_collect(&p, &pc, 1, &other);
	pt_diag("%d tracepoints: %lld ms from the SIGINT to the tool's exit", n,
		pt_now_ms() - t0);
	PT_EQ(rc, 0, "sys_enter_*: exit 0");
	snprintf(want, sizeof(want), "pea: 'tp:syscalls:sys_enter_*': %d tracepoints\n",
		 n);
	PT_OK(strstr(err, want), "stderr: %d tracepoints", n);
	PT_EQ(pc.got, N_PPID, "sys_enter_getppid: %d events among %d probes",
	      N_PPID, n);
	PT_OK(other >= 1, "and the test's other system calls (%d)", other);
	if (pc.got != N_PPID || other < 1)
		pt_diag("stderr: %s", err);
}

/*
 * A function on the kprobes blacklist that ftrace can trace (so in
 * available_filter_functions): the first in the blacklist's order.
 */
static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool blacklisted(char *name, size_t len)
{
	FILE *f = fopen(BLACKLIST, "r");
	char l[512], *s, **bl = NULL, *key = l;
	size_t n = 0, cap = 0, i;
	bool found = false;

	if (!f)
		return false;
	while (fgets(l, sizeof(l), f)) {
		s = strchr(l, '\t');
		if (!s)
			continue;
		s++;
		s[strcspn(s, " \t\n")] = 0;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			bl = realloc(bl, cap * sizeof(*bl));
			if (!bl)
				pt_fatal("realloc");
		}
		bl[n++] = strdup(s);
	}
	fclose(f);
	qsort(bl, n, sizeof(*bl), str_cmp);
	f = fopen(TRACEFS "/available_filter_functions", "r");
	while (f && !found && fgets(l, sizeof(l), f)) {
		l[strcspn(l, " \t\n")] = 0;
		if (bsearch(&key, bl, n, sizeof(*bl), str_cmp)) {
			snprintf(name, len, "%.200s", l);
			found = true;
		}
	}
	if (f)
		fclose(f);
	for (i = 0; i < n; i++)
		free(bl[i]);
	free(bl);
	return found;
}

static void test_blacklist(void)
{
	char name[256], pat[300], probe[300], want[600];
	size_t n;
	int rc;

	PT_OK(blacklisted(name, sizeof(name)),
	      "a blacklisted function ftrace can trace: %s", name);
	/* NAME with its last letter as a class: a glob only it matches. */
	n = strlen(name);
	snprintf(pat, sizeof(pat), "kprobe:%.*s[%c]", (int)n - 1, name,
		 name[n - 1]);
	PT_OK(count_matches(TRACEFS "/available_filter_functions", pat + 7) >= 1,
	      "tracefs: '%s' matches that function (listed once or more)", pat);
	rc = pt_run((char *[]){ PT_PEA, "trace", pat, NULL }, out, sizeof(out),
		    err, sizeof(err), NULL, NULL);
	snprintf(want, sizeof(want), "'%s' matches no functions kprobes can probe (1 on the kprobes blacklist, which the kernel refuses)",
		 pat);
	PT_OK(rc == 2 && strstr(err, want), "%s: exit 2, skipped", pat);
	if (rc != 2 || !strstr(err, want))
		pt_diag("exit %d: %s", rc, err);
	snprintf(probe, sizeof(probe), "kprobe:%s", name);
	rc = pt_run((char *[]){ PT_PEA, "trace", probe, "--duration", "1",
			NULL }, out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 1 && strstr(err, "the kernel refuses to probe"),
	      "%s by name: the kernel refuses it (exit 1)", probe);
	if (rc != 1)
		pt_diag("exit %d: %s", rc, err);
}

/*
 * Note 3's open question, why a kprobe on vfs_fsync saw no fsync(2) on
 * 6.1: kprobes on vfs_fsync and vfs_fsync_range in one session; of
 * N_FSYNC fsync() calls vfs_fsync_range sees every one (it is what
 * fsync(2) runs); what vfs_fsync sees is reported, not asserted: fs/sync.c
 * calls it from do_fsync() in the same file, where the compiler may
 * inline it, and an inlined copy has no kprobe (the exported out-of-line
 * one is what the probe is on).
 */
#define N_FSYNC	3
static void test_fsync(void)
{
	struct probe_count pc[2] = {
		{ .name = "kprobe:vfs_fsync", .want = -1 },
		{ .name = "kprobe:vfs_fsync_range", .want = N_FSYNC },
	};
	int fd = open("/tmp/pea-glob-fsync", O_CREAT | O_WRONLY | O_TRUNC,
		      0644), i, rc, other;
	struct pt_proc p;

	PT_OK(fd >= 0 && write(fd, "x", 1) == 1, "a file to fsync");
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "--json",
		"--pid", pid_s, "kprobe:vfs_fsync", "kprobe:vfs_fsync_range",
		NULL }), "vfs_fsync and vfs_fsync_range: attached");
	for (i = 0; i < N_FSYNC; i++)
		fsync(fd);
	close(fd);
	kill(p.pid, SIGINT);
	rc = json_collect(&p, pc, 2, &other);
	PT_EQ(rc, 0, "fsync: exit 0");
	PT_EQ(pc[1].got, N_FSYNC, "vfs_fsync_range: %d events of %d fsync()",
	      N_FSYNC, N_FSYNC);
	pt_diag("vfs_fsync: %lld events of %d fsync() (0: inlined into do_fsync)",
		pc[0].got, N_FSYNC);
}

static void test_usage(void)
{
	static const struct {
		const char *probe, *extra, *msg;
	} c[] = {
		{ "kprobe:pea_no_such_fn_*", NULL,
		  "'kprobe:pea_no_such_fn_*' matches no functions kprobes can probe" },
		{ "tp:pea_no_such:*", NULL,
		  "'tp:pea_no_such:*' matches no tracepoints" },
		{ "kprobe:vfs_rea*+4", NULL,
		  "'kprobe:vfs_rea*+4': a glob takes no +OFFSET" },
		{ "uprobe:/nonexistent:f*", NULL,
		  "'uprobe:/nonexistent:f*': cannot read the symbols of /nonexistent: No such file or directory" },
		{ "tp:syscalls:sys_enter_getp*id", "2",
		  "more than 2 probes in one session ('tp:syscalls:sys_enter_getppid' of 'tp:syscalls:sys_enter_getp*id' is one more)" },
	};
	size_t i;
	int rc;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *argv[] = { PT_PEA, "trace", (char *)c[i].probe,
				 c[i].extra ? "--max-probes" : NULL,
				 (char *)c[i].extra, NULL };

		rc = pt_run(argv, out, sizeof(out), err, sizeof(err), NULL,
			    NULL);
		PT_OK(rc == 2 && strstr(err, c[i].msg), "%s: exit 2, \"%s\"",
		      c[i].probe, c[i].msg);
		if (rc != 2 || !strstr(err, c[i].msg))
			pt_diag("exit %d: %s", rc, err);
	}
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	self[n] = 0;
	snprintf(pid_s, sizeof(pid_s), "%d", getpid());
	test_session();
	test_many();
	test_blacklist();
	test_fsync();
	test_usage();
	return pt_done();
}
