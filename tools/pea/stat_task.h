/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea stat -- CMD / -p PID: per-task counts of one event over a command's
 * or a process's tasks and their descendants (stat_task.c).
 */
#ifndef _PEA_STAT_TASK_H
#define _PEA_STAT_TASK_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include "libpea.h"

/*
 * struct task_ctr - one event over some tasks
 * @fds:  one perf event per task counted from the start (-p: each thread)
 * @nfds: how many
 */
struct task_ctr {
	int *fds;
	int nfds;
};

/* Open @attr on @child (forked by task_cmd_fork()), enabled at its exec. */
int task_ctr_open_cmd(struct task_ctr *t, const struct perf_event_attr *attr,
		      pid_t child);
/* Open @attr, disabled, on each thread of @pid; -ESRCH if there is none. */
int task_ctr_open_pid(struct task_ctr *t, const struct perf_event_attr *attr,
		      pid_t pid);
void task_ctr_enable(struct task_ctr *t, bool on);
/* The sum over the events (and their inherited children): 0 or -EIO. */
int task_ctr_read(const struct task_ctr *t, struct pea_counter_value *sum);
void task_ctr_close(struct task_ctr *t);

/*
 * Fork @argv stopped before its exec; *@go_fd lets it go (task_cmd_go()).
 * Returns the child's pid or -1 with errno.
 */
pid_t task_cmd_fork(char **argv, int *go_fd, const char *me);
int task_cmd_go(int go_fd);
/*
 * Make this process the child subreaper of what it forks: a process whose
 * parent exits below it is reparented to it, not to init, so it stays in
 * the tree (reap them with task_cmd_reap()). 0 or -errno.
 */
int task_cmd_subreaper(void);
/*
 * Reap every child that ended, without waiting: true if @child was one
 * (its wait status in *@status).
 */
bool task_cmd_reap(pid_t child, int *status);

#endif /* _PEA_STAT_TASK_H */
