// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace -- CMD ARGS (issue 21): the command is forked held before its
 * exec, the probes attached with its pid as every probe's --pid, then it
 * runs, and the session ends when it exits. Through /bin/pea in the
 * guest, the command being this program again ("writer"):
 *   - sched_process_exec sees the command's exec: the probes were
 *     attached before it;
 *   - sys_enter_write sees exactly the command's N_WRITES writes, not
 *     pea's own (it prints a JSON line per event), nor those of a child
 *     the command forks (another process), nor this test's during the
 *     session; each event's pid is the command's;
 *   - pea ends by itself when the command exits, exit 0, and says the
 *     command's status on stderr;
 *   - --pid with -- CMD, and -- without a command: exit 2 with the
 *     reason; a command that cannot run: its error, pea still ends.
 */
#include <sys/syscall.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_tool.h"

#define N_WRITES	7
#define N_CHILD		3
#define CMD_STATUS	3

static char line[65536];
static char out[1 << 18], err[1 << 16];
static char self[256];

/* The command: N_WRITES writes, a child's N_CHILD more, exit status 3. */
static int writer(void)
{
	int fd = open("/dev/null", O_WRONLY), i;
	pid_t c;

	for (i = 0; i < N_WRITES; i++)
		if (write(fd, "x", 1) != 1)
			return 1;
	c = fork();
	if (c == 0) {
		for (i = 0; i < N_CHILD; i++)
			if (write(fd, "y", 1) != 1)
				_exit(1);
		_exit(0);
	}
	waitpid(c, NULL, 0);
	/* A moment for the test's own writes during the session. */
	usleep(300000);
	return CMD_STATUS;
}

static void test_cmd(void)
{
	char want[512];
	struct pt_proc p;
	long long cmd_pid = -1;
	int writes = 0, execs = 0, other = 0, wrong_pid = 0, rc, fd, i;
	const char *s;

	pt_spawn(&p, (char *[]){ PT_PEA, "trace", "--json",
		 "tp:syscalls:sys_enter_write", "tp:sched:sched_process_exec",
		 "--", self, "writer", NULL }, NULL, NULL);
	/* This process's writes while pea runs: not the command's. */
	fd = open("/dev/null", O_WRONLY);
	for (i = 0; i < 5; i++) {
		if (write(fd, "z", 1) != 1)
			pt_diag("write /dev/null");
		usleep(20000);
	}
	close(fd);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_streq(line, "type", "event"))
			continue;
		if (pt_json_streq(line, "probe", "tp:sched:sched_process_exec"))
			execs++;
		else if (pt_json_streq(line, "probe",
				       "tp:syscalls:sys_enter_write"))
			writes++;
		else
			other++;
		if (cmd_pid < 0)
			cmd_pid = pt_json_num(line, "pid", -1);
		else if (pt_json_num(line, "pid", -1) != cmd_pid)
			wrong_pid++;
	}
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	snprintf(err, sizeof(err), "%s", p.err_all ? p.err_all : "");
	pt_proc_close(&p);
	PT_EQ(rc, 0, "-- CMD: pea ends with the command, exit 0");
	if (rc)
		pt_diag("stderr: %s", err);
	PT_EQ(execs, 1, "-- CMD: its exec is seen (the probes were attached first)");
	PT_EQ(writes, N_WRITES,
	      "-- CMD: exactly its %d writes (not pea's, its child's or ours)",
	      N_WRITES);
	PT_EQ(other, 0, "-- CMD: no event of another probe");
	PT_EQ(wrong_pid, 0, "-- CMD: every event is the command's process");
	s = strstr(err, "(pid ");
	PT_OK(s && atoll(s + 5) == cmd_pid, "-- CMD: stderr names its pid %lld",
	      cmd_pid);
	snprintf(want, sizeof(want), "pea: %s (pid %lld) exited with status %d\n",
		 self, cmd_pid, CMD_STATUS);
	PT_OK(strstr(err, want), "-- CMD: stderr says it exited with status %d",
	      CMD_STATUS);
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
}

int main(int argc, char **argv)
{
	ssize_t n;

	if (argc == 2 && !strcmp(argv[1], "writer"))
		return writer();
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	self[n] = 0;
	test_cmd();
	test_usage();
	return pt_done();
}
