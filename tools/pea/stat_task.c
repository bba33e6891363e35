// SPDX-License-Identifier: GPL-2.0
/*
 * pea stat -- CMD and pea stat -p PID: count a command's or a process's
 * own tasks, as `perf stat` does, with per-task perf events that follow
 * every thread and child the tasks create (attr.inherit). pea's counters
 * are CPU-wide (what a perf event array holds); a per-task count needs
 * nothing pea adds, so these are Linux's own events from
 * perf_event_open(2), with exactly its permission checks (ptrace access to
 * the task, perf_event_paranoid, CAP_PERFMON).
 *
 * A command is forked stopped on a pipe; its events are opened with
 * enable_on_exec, then it execs: counting starts at its exec, as perf's.
 * A process's threads are those of /proc/PID/task when counting starts.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include "stat_task.h"

#define TASK_READ_FORMAT	(PERF_FORMAT_TOTAL_TIME_ENABLED | \
				 PERF_FORMAT_TOTAL_TIME_RUNNING)

static int perf_open(struct perf_event_attr *attr, pid_t pid)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

static int add_fd(struct task_ctr *t, int fd)
{
	int *fds = realloc(t->fds, (t->nfds + 1) * sizeof(*fds));

	if (!fds)
		return -ENOMEM;
	t->fds = fds;
	t->fds[t->nfds++] = fd;
	return 0;
}

static int open_one(struct task_ctr *t, const struct perf_event_attr *base,
		    pid_t tid, bool on_exec)
{
	struct perf_event_attr attr = *base;
	int fd, err;

	attr.size = sizeof(attr);
	attr.read_format = TASK_READ_FORMAT;
	attr.disabled = 1;
	attr.inherit = 1;
	attr.enable_on_exec = on_exec;
	fd = perf_open(&attr, tid);
	if (fd < 0)
		return fd;
	err = add_fd(t, fd);
	if (err)
		close(fd);
	return err;
}

int task_ctr_open_cmd(struct task_ctr *t, const struct perf_event_attr *attr,
		      pid_t child)
{
	int err = open_one(t, attr, child, true);

	if (err)
		task_ctr_close(t);
	return err;
}

int task_ctr_open_pid(struct task_ctr *t, const struct perf_event_attr *attr,
		      pid_t pid)
{
	char path[64];
	struct dirent *d;
	int err = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((d = readdir(dir))) {
		char *end;
		long tid = strtol(d->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		err = open_one(t, attr, (pid_t)tid, false);
		/* A thread that exited since the listing is not an error. */
		if (err == -ESRCH)
			err = 0;
		if (err)
			break;
	}
	closedir(dir);
	if (!err && !t->nfds)
		err = -ESRCH;
	if (err)
		task_ctr_close(t);
	return err;
}

void task_ctr_enable(struct task_ctr *t, bool on)
{
	int i;

	for (i = 0; i < t->nfds; i++)
		(void)ioctl(t->fds[i], on ? PERF_EVENT_IOC_ENABLE :
			    PERF_EVENT_IOC_DISABLE, 0);
}

int task_ctr_read(const struct task_ctr *t, struct pea_counter_value *sum)
{
	__u64 v[3];
	int i;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < t->nfds; i++) {
		/* Each event's count includes its exited inherited children. */
		if (read(t->fds[i], v, sizeof(v)) != sizeof(v))
			return -EIO;
		sum->value += v[0];
		sum->enabled += v[1];
		sum->running += v[2];
	}
	return 0;
}

void task_ctr_close(struct task_ctr *t)
{
	int i;

	for (i = 0; i < t->nfds; i++)
		close(t->fds[i]);
	free(t->fds);
	t->fds = NULL;
	t->nfds = 0;
}

pid_t task_cmd_fork(char **argv, int *go_fd, const char *me)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		char c;

		close(p[1]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* Until the counters are open; EOF without a byte: give up. */
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: cannot run '%s': %s\n", me, argv[0],
			strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*go_fd = p[1];
	return pid;
}

int task_cmd_subreaper(void)
{
	return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) ? -errno : 0;
}

bool task_cmd_reap(pid_t child, int *status)
{
	bool done = false;
	pid_t w;
	int st;

	while ((w = waitpid(-1, &st, WNOHANG)) > 0)
		if (w == child) {
			*status = st;
			done = true;
		}
	return done;
}

int task_cmd_go(int go_fd)
{
	ssize_t n = write(go_fd, "g", 1);

	close(go_fd);
	return n == 1 ? 0 : -EIO;
}
