// SPDX-License-Identifier: GPL-2.0
/*
 * --count-by and --hist of a tracepoint field whose print fmt names its
 * values (__print_flags, __print_symbolic: tools/pea/tpsym.c): the
 * tables show the names the event lines show, exactly counted.
 *
 *   - tp:filelock:posix_lock_inode --pid us, on 3 fcntl(F_SETLKW,
 *     F_WRLCK) and 2 fcntl(F_SETLK, F_UNLCK) of a file the test made:
 *     --count-by TYPE (__print_symbolic) is 3 F_WRLCK and 2 F_UNLCK,
 *     --count-by FLAGS (__print_flags) 3 FL_POSIX|FL_SLEEP and 2
 *     FL_POSIX; in --json each row keeps the number as "key" and adds
 *     "key_name"; --hist TYPE --lhist 0,3,1 labels its one-value buckets
 *     with the names ("[1, 2) F_WRLCK"; JSON "name"). 6.1 calls the
 *     fields fl_flags and fl_type, 6.12 flags and type;
 *   - tp:sched:sched_switch --filter 'prev_pid == CHILD && prev_state !=
 *     0 && prev_state != 256' --count-by prev_state, on a child blocked
 *     in read(2) of a pipe: 2 bytes written (each a wake-up and a new
 *     block: S) and 2 SIGSTOP/SIGCONT (each a stop, T, then the restarted
 *     read blocking, S): 4 S and 2 T exactly (a preempted child, 0 or
 *     256, is filtered: how often it happens is not the test's to say).
 */
#include <fcntl.h>
#include <sys/stat.h>
#include "pt_tool.h"

#define FLOCK		"tp:filelock:posix_lock_inode"
#define SWITCH		"tp:sched:sched_switch"
#define LOCK_FILE	"/tmp/pea-tpsym-agg.lock"

static char line[8192];
static char out[65536], err[65536];
static const char *f_flags, *f_type;	/* the tracepoint's field names */
static int lock_fd = -1;

/* @text holds the line @want exactly. */
static void has_line(const char *text, const char *want, const char *what)
{
	char buf[8192];
	bool ok = pt_find_line(text, want, NULL, buf, sizeof(buf)) &&
		  !strcmp(buf, want);

	PT_OK(ok, "%s", what);
	if (!ok)
		pt_diag("want the line '%s' in: %.2000s", want, text);
}

/* Lock, unlock, lock, unlock, lock: 3 F_SETLKW of F_WRLCK, 2 F_UNLCK. */
static void locks(void)
{
	struct flock fl = { .l_whence = SEEK_SET, .l_start = 0, .l_len = 10 };
	int i;

	for (i = 0; i < 5; i++) {
		fl.l_type = i % 2 ? F_UNLCK : F_WRLCK;
		PT_EQ(fcntl(lock_fd, i % 2 ? F_SETLK : F_SETLKW, &fl), 0,
		      "fcntl %d (%s)", i, i % 2 ? "F_UNLCK" : "F_WRLCK");
	}
}

/* pea trace --pid us FLOCK with @extra (NULL-ended) over locks(). */
static int lock_session(char **extra)
{
	char *argv[32] = { PT_PEA, "trace", FLOCK, "--pid" };
	char pid[16];
	struct pt_proc p;
	int n = 4;

	snprintf(pid, sizeof(pid), "%d", getpid());
	argv[n++] = pid;
	argv[n++] = "-c";
	argv[n++] = "5";
	while (*extra && n < 31)
		argv[n++] = *extra++;
	argv[n] = NULL;
	if (!pt_trace_start(&p, argv)) {
		pt_proc_close(&p);
		return -1;
	}
	locks();
	return pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			       sizeof(err));
}

static void test_locks_text(void)
{
	char want[256];

	PT_EQ(lock_session((char *[]){ "--count-by", (char *)f_type,
				       "--count-by", (char *)f_flags,
				       "--hist", (char *)f_type, "--lhist",
				       "0,3,1", NULL }), 0,
	      "text: pea trace exits 0");
	pt_diag("text:\n%s", out);
	snprintf(want, sizeof(want), "%s: count by %s, 5 events, 2 keys",
		 FLOCK, f_type);
	PT_OK(strstr(out, want) != NULL, "text: %s", want);
	has_line(out, "         3  F_WRLCK", "text: count by type: 3 F_WRLCK");
	has_line(out, "         2  F_UNLCK", "text: count by type: 2 F_UNLCK");
	has_line(out, "         3  FL_POSIX|FL_SLEEP",
		 "text: count by flags: 3 FL_POSIX|FL_SLEEP");
	has_line(out, "         2  FL_POSIX", "text: count by flags: 2 FL_POSIX");
	has_line(out, "[1, 2) F_WRLCK            3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|",
		 "text: --lhist 0,3,1 labels [1, 2) F_WRLCK");
	has_line(out, "[2, 3) F_UNLCK            2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@             |",
		 "text: --lhist 0,3,1 labels [2, 3) F_UNLCK");
}

/*
 * The JSON table of @out whose line holds @sel (with @type), valid JSON
 * (case "json: the @what is valid JSON"), and holding @want (case
 * @what_want).
 */
static void json_table(const char *type, const char *sel, const char *what,
		       const char *want, const char *what_want)
{
	char buf[8192];
	const char *l = pt_find_line(out, type, sel, buf, sizeof(buf));

	PT_OK(l && pt_json_valid(l), "json: the %s is valid JSON", what);
	PT_OK(l && strstr(l, want), "%s", what_want);
	if (l)
		pt_diag("%s", l);
}

static void test_locks_json(void)
{
	char sel[64], what[64];

	PT_EQ(lock_session((char *[]){ "--json", "--count-by", (char *)f_type,
				       "--count-by", (char *)f_flags,
				       "--hist", (char *)f_type, "--lhist",
				       "0,3,1", NULL }), 0,
	      "json: pea trace exits 0");
	snprintf(sel, sizeof(sel), "\"by\":\"%s\"", f_type);
	snprintf(what, sizeof(what), "count by %s", f_type);
	json_table("\"type\":\"count\"", sel, what,
		   "\"rows\":[{\"key\":1,\"key_name\":\"F_WRLCK\",\"count\":3},{\"key\":2,\"key_name\":\"F_UNLCK\",\"count\":2}]",
		   "json: count by type: key 1 F_WRLCK 3, key 2 F_UNLCK 2");
	snprintf(sel, sizeof(sel), "\"by\":\"%s\"", f_flags);
	snprintf(what, sizeof(what), "count by %s", f_flags);
	json_table("\"type\":\"count\"", sel, what,
		   "\"rows\":[{\"key\":129,\"key_name\":\"FL_POSIX|FL_SLEEP\",\"count\":3},{\"key\":1,\"key_name\":\"FL_POSIX\",\"count\":2}]",
		   "json: count by flags: 129 FL_POSIX|FL_SLEEP 3, 1 FL_POSIX 2");
	json_table("\"type\":\"hist\"", NULL, "histogram",
		   "\"buckets\":[{\"lo\":1,\"hi\":2,\"name\":\"F_WRLCK\",\"count\":3},{\"lo\":2,\"hi\":3,\"name\":\"F_UNLCK\",\"count\":2}]",
		   "json: --lhist 0,3,1 buckets named F_WRLCK 3, F_UNLCK 2");
}

/*
 * Wait up to 10 s until task @pid is in state @want (/proc/PID/stat's
 * letter) and off its CPU: /proc/PID/wchan names a function only once
 * the scheduler has taken the task off its run queue (get_wchan()), in
 * the same locked step as the switch sched_switch reports. A state seen
 * before that (set, but schedule() not yet run) could be undone by the
 * next signal or wake-up, and the switch would then say R.
 */
static bool wait_state(pid_t pid, char want)
{
	long long end = pt_now_ms() + 10000 * pt_time_scale();
	char path[64], buf[512], wchan[128], *rp;

	while (pt_now_ms() < end) {
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (pt_read_file(path, buf, sizeof(buf)) >= 0) {
			rp = strrchr(buf, ')');
			snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
			if (rp && rp[1] == ' ' && rp[2] == want &&
			    pt_read_file(path, wchan, sizeof(wchan)) >= 0) {
				wchan[strcspn(wchan, "\n")] = 0;
				if (wchan[0] && strcmp(wchan, "0"))
					return true;
			}
		}
		usleep(2000);
	}
	return false;
}

static void test_switch(void)
{
	char filter[128];
	struct pt_proc p;
	int fds[2], i, rc;
	pid_t child;
	char c;

	PT_EQ(pipe(fds), 0, "pipe");
	fflush(stdout);
	child = fork();
	if (!child) {
		close(fds[1]);
		while (read(fds[0], &c, 1) == 1 || errno == EINTR)
			;
		_exit(0);
	}
	close(fds[0]);
	PT_OK(wait_state(child, 'S'), "switch: the child blocks in read");
	snprintf(filter, sizeof(filter),
		 "prev_pid == %d && prev_state != 0 && prev_state != 256",
		 child);
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace", SWITCH,
					     "--filter", filter, "--count-by",
					     "prev_state", NULL }),
	      "switch: pea trace attaches");
	for (i = 0; i < 2; i++) {
		PT_EQ(write(fds[1], "x", 1), 1, "switch: write %d", i);
		PT_OK(wait_state(child, 'S'), "switch: blocked again %d", i);
	}
	for (i = 0; i < 2; i++) {
		PT_EQ(kill(child, SIGSTOP), 0, "switch: SIGSTOP %d", i);
		PT_OK(wait_state(child, 'T'), "switch: stopped %d", i);
		PT_EQ(kill(child, SIGCONT), 0, "switch: SIGCONT %d", i);
		PT_OK(wait_state(child, 'S'), "switch: blocked again %d", i);
	}
	kill(p.pid, SIGINT);
	rc = pt_proc_collect(&p, line, sizeof(line), out, sizeof(out), err,
			     sizeof(err));
	PT_EQ(rc, 0, "switch: pea trace exits 0");
	close(fds[1]);
	waitpid(child, NULL, 0);
	pt_diag("switch:\n%s", out);
	PT_OK(strstr(out, SWITCH ": count by prev_state, 6 events, 2 keys") !=
	      NULL, "switch: 6 events, 2 keys");
	has_line(out, "         4  S", "switch: 4 S (blocked in read)");
	has_line(out, "         2  T", "switch: 2 T (stopped)");
}

int main(void)
{
	bool k612;

	/* 6.9 renamed the fields with struct file_lock_core. */
	k612 = !system("grep -q 'field:unsigned int flags;' "
		       "/sys/kernel/tracing/events/filelock/posix_lock_inode/format");
	f_flags = k612 ? "flags" : "fl_flags";
	f_type = k612 ? "type" : "fl_type";
	lock_fd = open(LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	PT_OK(lock_fd >= 0, "open " LOCK_FILE);
	test_locks_text();
	test_locks_json();
	test_switch();
	close(lock_fd);
	unlink(LOCK_FILE);
	return pt_done();
}
