// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace -- CMD ARGS (issue 21): the command is forked held before its
 * exec, the probes attached, then it runs, and the session ends when it
 * exits. What it and every process below it do is traced (pea is their
 * child subreaper and filters on its own descendants, not itself); with
 * --no-children only the command's process. Through /bin/pea in the
 * guest, the command being this program again ("writer"), whose writes
 * of /dev/null say who made them by their size: the command 7 of 1 byte,
 * its child 3 of 2, a grandchild orphaned by the child's exit 5 of 3
 * (after it was reparented); this test writes 4 bytes meanwhile:
 *   - sched_process_exec sees the command's exec: the probes were
 *     attached before it;
 *   - sys_enter_write sees exactly the tree's 15 writes, each by the
 *     right process, not pea's own (it prints a JSON line per event) nor
 *     this test's; with --no-children exactly the command's 7;
 *   - pea ends by itself when the command exits, exit 0, and says the
 *     command's status on stderr, also while a child of it still runs;
 *   - a chain of 67 processes below pea: the 64 within the kernel's bound
 *     traced, the 3 below filtered and said on stderr;
 *   - --pid PID follows PID's children too (7 + 3), but not an orphan,
 *     which Linux reparents away from PID (to init): 0 of its 5;
 *   - --pid with -- CMD, -- without a command, --no-children alone:
 *     exit 2 with the reason; a command that cannot run: its error, pea
 *     still ends.
 */
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_tool.h"

#define N_CMD		7
#define N_CHILD		3
#define N_ORPHAN	5
#define CMD_STATUS	3
#define CHAIN		(PEA_TREE_DEPTH_MAX + 3)

static char line[65536];
static char out[1 << 18], err[1 << 16];
static char self[256];

static void writes(int fd, int n, size_t size)
{
	int i;

	for (i = 0; i < n; i++)
		if (write(fd, "xxxx", size) != (ssize_t)size)
			_exit(1);
}

/*
 * The tree: N_CMD writes of 1 byte here, a child's N_CHILD of 2, then the
 * child exits and its child, reparented, makes N_ORPHAN of 3. Returns
 * when the orphan has ended too.
 */
static void family(void)
{
	int fd = open("/dev/null", O_WRONLY), done[2], i;
	pid_t c, parent;
	char ch;

	writes(fd, N_CMD, 1);
	if (pipe(done))
		_exit(1);
	c = fork();
	if (c == 0) {
		writes(fd, N_CHILD, 2);
		if (fork() == 0) {
			close(done[0]);
			parent = getppid();
			/* Until the child is gone: reparented. */
			for (i = 0; i < 10000 && getppid() == parent; i++)
				usleep(1000);
			writes(fd, N_ORPHAN, 3);
			_exit(0);
		}
		_exit(0);
	}
	close(done[1]);
	waitpid(c, NULL, 0);
	while (read(done[0], &ch, 1) > 0)	/* the orphan's end */
		;
	close(done[0]);
	close(fd);
}

/* The command: the tree, a moment for the test's writes, exit status 3. */
static int writer(void)
{
	family();
	usleep(300000);
	return CMD_STATUS;
}

/*
 * A command that ends while its child still runs (a minute asleep), once
 * the child has written.
 */
static int leaver(void)
{
	int fd = open("/dev/null", O_WRONLY), wrote[2];
	char ch;

	if (pipe(wrote))
		return 1;
	if (fork() == 0) {
		writes(fd, 1, 2);
		/* Not holding pea's output open: the test reads it to EOF. */
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(wrote[0]);
		close(wrote[1]);	/* it has written */
		sleep(60);
		_exit(0);
	}
	close(wrote[1]);
	if (read(wrote[0], &ch, 1) != 0)
		return 1;
	writes(fd, 1, 1);
	return 0;
}

/*
 * A chain of processes below the command, each writing 1 byte once: the
 * command is 1 generation below pea, the last 67.
 */
static int deep(void)
{
	int fd = open("/dev/null", O_WRONLY), level, st;
	pid_t c;

	for (level = 1; level <= CHAIN; level++) {
		writes(fd, 1, 1);
		if (level == CHAIN)
			break;
		c = fork();
		if (c < 0)
			return 1;
		if (c) {
			waitpid(c, &st, 0);
			return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
		}
	}
	return 0;
}

/* Events of sys_enter_write by size (1..4, 0 for anything else). */
struct tally {
	int by_size[5];
	long long pid[5];	/* the first pid of each size */
	int mixed[5];		/* events of that size by another pid */
	int execs, other;
};

static void tally_line(struct tally *t, const char *l)
{
	char fields[4096];
	long long n, pid;

	if (!pt_json_streq(l, "type", "event"))
		return;
	if (pt_json_streq(l, "probe", "tp:sched:sched_process_exec")) {
		t->execs++;
		return;
	}
	if (!pt_json_streq(l, "probe", "tp:syscalls:sys_enter_write") ||
	    !pt_json_get(l, "fields", fields, sizeof(fields), NULL)) {
		t->other++;
		return;
	}
	n = pt_json_num(fields, "count", -1);
	if (n < 1 || n > 4)
		n = 0;
	pid = pt_json_num(l, "pid", -1);
	if (!t->by_size[n]++)
		t->pid[n] = pid;
	else if (t->pid[n] != pid)
		t->mixed[n]++;
}

/* This process's writes while pea runs: 4 bytes, not the command's. */
static void own_writes(void)
{
	int fd = open("/dev/null", O_WRONLY), i;

	for (i = 0; i < 5; i++) {
		if (write(fd, "zzzz", 4) != 4)
			pt_diag("write /dev/null");
		usleep(20000);
	}
	close(fd);
}

static void test_cmd(bool children)
{
	const char *what = children ? "-- CMD" : "-- CMD --no-children";
	char *argv[] = { PT_PEA, "trace", "--json",
			 "tp:syscalls:sys_enter_write",
			 "tp:sched:sched_process_exec", "--no-children", "--",
			 self, "writer", NULL };
	struct tally t;
	char want[512];
	struct pt_proc p;
	const char *s;
	int rc;

	if (children)	/* without --no-children */
		memmove(&argv[5], &argv[6], 4 * sizeof(argv[0]));
	memset(&t, 0, sizeof(t));
	pt_spawn(&p, argv, NULL, NULL);
	own_writes();
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		tally_line(&t, line);
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	snprintf(err, sizeof(err), "%s", p.err_all ? p.err_all : "");
	pt_proc_close(&p);
	PT_EQ(rc, 0, "%s: pea ends with the command, exit 0", what);
	if (rc)
		pt_diag("stderr: %s", err);
	PT_EQ(t.execs, 1, "%s: its exec is seen (the probes were attached first)",
	      what);
	PT_EQ(t.by_size[1], N_CMD, "%s: exactly the command's %d writes",
	      what, N_CMD);
	PT_EQ(t.by_size[2], children ? N_CHILD : 0,
	      "%s: its child's %d writes", what, children ? N_CHILD : 0);
	PT_EQ(t.by_size[3], children ? N_ORPHAN : 0,
	      "%s: the orphaned grandchild's %d writes", what,
	      children ? N_ORPHAN : 0);
	PT_EQ(t.by_size[4] + t.by_size[0] + t.other, 0,
	      "%s: none of this test's writes, pea's or another probe's",
	      what);
	PT_EQ(t.mixed[1] + t.mixed[2] + t.mixed[3], 0,
	      "%s: each size from one process", what);
	if (children)
		PT_OK(t.pid[1] != t.pid[2] && t.pid[2] != t.pid[3] &&
		      t.pid[1] != t.pid[3],
		      "%s: three processes (%lld %lld %lld)", what, t.pid[1],
		      t.pid[2], t.pid[3]);
	s = strstr(err, "(pid ");
	PT_OK(s && atoll(s + 5) == t.pid[1], "%s: stderr names its pid %lld",
	      what, t.pid[1]);
	snprintf(want, sizeof(want), "pea: %s (pid %lld) exited with status %d\n",
		 self, t.pid[1], CMD_STATUS);
	PT_OK(strstr(err, want), "%s: stderr says it exited with status %d",
	      what, CMD_STATUS);
}

/* The command exits first: pea ends with it, not with its child. */
static void test_leaver(void)
{
	struct tally t;
	struct pt_proc p;
	long long t0 = pt_now_ms(), ms;
	int rc;

	memset(&t, 0, sizeof(t));
	pt_spawn(&p, (char *[]){ PT_PEA, "trace", "--json",
		 "tp:syscalls:sys_enter_write", "--", self, "leaver", NULL },
		 NULL, NULL);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		tally_line(&t, line);
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	ms = pt_now_ms() - t0;
	snprintf(err, sizeof(err), "%s", p.err_all ? p.err_all : "");
	pt_proc_close(&p);
	PT_EQ(rc, 0, "a command whose child outlives it: pea exits 0");
	PT_OK(ms < 30000, "pea ended with the command, not its child asleep for a minute (%lld ms)",
	      ms);
	PT_OK(t.by_size[1] == 1 && t.by_size[2] == 1,
	      "the command's write and its child's (%d %d)", t.by_size[1],
	      t.by_size[2]);
	PT_OK(strstr(err, "exited with status 0"), "stderr: the command exited");
	if (t.by_size[2] && t.pid[2] > 0)
		kill((pid_t)t.pid[2], SIGKILL);
}

/*
 * A tree deeper than the kernel's bound: the 64 generations below pea
 * traced, the 3 below them filtered and said on stderr.
 */
static void test_deep(void)
{
	struct tally t;
	struct pt_proc p;
	char want[256];
	int rc;

	memset(&t, 0, sizeof(t));
	pt_spawn(&p, (char *[]){ PT_PEA, "trace", "--json",
		 "tp:syscalls:sys_enter_write", "--", self, "deep", NULL },
		 NULL, NULL);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		tally_line(&t, line);
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	snprintf(err, sizeof(err), "%s", p.err_all ? p.err_all : "");
	pt_proc_close(&p);
	PT_EQ(rc, 0, "a chain of %d below pea: pea exits 0", CHAIN);
	PT_EQ(t.by_size[1], PEA_TREE_DEPTH_MAX,
	      "a chain of %d: the %d within the kernel's bound traced", CHAIN,
	      PEA_TREE_DEPTH_MAX);
	snprintf(want, sizeof(want), "pea: %d hits of processes more than %d generations below",
		 CHAIN - PEA_TREE_DEPTH_MAX, PEA_TREE_DEPTH_MAX);
	PT_OK(strstr(err, want), "a chain of %d: stderr says %d were filtered past the bound",
	      CHAIN, CHAIN - PEA_TREE_DEPTH_MAX);
	if (!strstr(err, want))
		pt_diag("stderr: %s", err);
}

/* --pid of a process with children: the process's, its child's; not an orphan's. */
static void test_pid(void)
{
	char pid_s[16];
	struct tally t;
	struct pt_proc p;
	int go[2], rc;
	pid_t f;
	char ch;

	memset(&t, 0, sizeof(t));
	if (pipe(go)) {
		PT_OK(0, "--pid: a pipe");
		return;
	}
	fflush(stdout);
	f = fork();
	if (f == 0) {
		close(go[1]);
		if (read(go[0], &ch, 1) != 1)
			_exit(1);
		family();
		_exit(0);
	}
	close(go[0]);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)f);
	if (!pt_trace_start(&p, (char *[]){ PT_PEA, "trace", "--json",
			    "tp:syscalls:sys_enter_write", "--pid", pid_s,
			    NULL })) {
		PT_OK(0, "--pid: pea attached");
		close(go[1]);
		waitpid(f, NULL, 0);
		pt_proc_close(&p);
		return;
	}
	if (write(go[1], "g", 1) != 1)
		pt_diag("--pid: no go");
	close(go[1]);
	waitpid(f, NULL, 0);	/* the family, orphan included, has ended */
	own_writes();
	kill(p.pid, SIGINT);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		tally_line(&t, line);
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_EQ(rc, 0, "--pid: pea exits 0 at SIGINT");
	PT_EQ(t.by_size[1], N_CMD, "--pid: the process's %d writes", N_CMD);
	PT_EQ(t.pid[1], f, "--pid: by that process");
	PT_EQ(t.by_size[2], N_CHILD, "--pid: its child's %d writes", N_CHILD);
	PT_EQ(t.by_size[3], 0,
	      "--pid: not the orphan's, reparented away from the process");
	PT_EQ(t.by_size[4] + t.by_size[0] + t.other, 0,
	      "--pid: none of this test's writes or pea's");
}

static void test_usage(void)
{
	int rc;

	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:syscalls:sys_enter_write",
			"--pid", "1", "--", "/bin/true", NULL }, out, sizeof(out),
		    err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "--pid or -- CMD, not both"),
	      "--pid with -- CMD: exit 2, the reason");
	if (rc != 2)
		pt_diag("exit %d: %s", rc, err);
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:syscalls:sys_enter_write",
			"--", NULL }, out, sizeof(out), err, sizeof(err), NULL,
		    NULL);
	PT_OK(rc == 2 && strstr(err, "-- needs a command to run"),
	      "-- without a command: exit 2, the reason");
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:syscalls:sys_enter_write",
			"--", "/nonexistent/cmd", NULL }, out, sizeof(out), err,
		    sizeof(err), NULL, NULL);
	PT_OK(rc == 0 && strstr(err, "cannot run '/nonexistent/cmd': No such file or directory") &&
	      strstr(err, "exited with status 127"),
	      "a command that cannot run: its error, status 127, pea ends");
	if (rc)
		pt_diag("exit %d: %s", rc, err);
	rc = pt_run((char *[]){ PT_PEA, "trace", "tp:syscalls:sys_enter_write",
			"--no-children", NULL }, out, sizeof(out), err,
		    sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "--no-children goes with --pid or -- CMD"),
	      "--no-children alone: exit 2, the reason");
}

int main(int argc, char **argv)
{
	ssize_t n;

	if (argc == 2 && !strcmp(argv[1], "writer"))
		return writer();
	if (argc == 2 && !strcmp(argv[1], "leaver"))
		return leaver();
	if (argc == 2 && !strcmp(argv[1], "deep"))
		return deep();
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	self[n] = 0;
	test_cmd(true);
	test_cmd(false);
	test_leaver();
	test_deep();
	test_pid();
	test_usage();
	return pt_done();
}
