/* SPDX-License-Identifier: GPL-2.0 */
/*
 * When a task that exited no longer runs. pthread_join() returns when the
 * exiting thread clears its tid (mm_release(), from exit_mm() in
 * do_exit()), and waitpid() when the child's exit_notify() has woken its
 * parent; both tasks still run the rest of do_exit(): exit_files(),
 * exit_task_work(), cgroup_exit(), exit_notify() (the thread's release),
 * and, after it, until do_task_dead()'s final __schedule(). There they
 * can still block, be preempted and switched in again, take timer
 * interrupts, be woken: hits of probes on the scheduler, of samplers and
 * of any process filter that names them (current's tgid is theirs until
 * the end).
 *
 * Two ways to keep that out of what a test asserts. Where the exit's own
 * events would count (a wakeup of an rtlock wait on the RT kernels, its
 * blocked time), the task parks, asleep (pt_tid_asleep()), until the
 * counts are read or the tool stopped, and exits after. Where they could
 * only add what the test bounds, or race with a read, the test waits
 * until the task has been freed (pt_free_watch(), pt_free_wait()).
 *
 * The proof that a task has run its last instruction is its
 * sched:sched_process_free event: delayed_put_task_struct() fires it, an
 * RCU callback queued when the last of the task's two rcu_users is put,
 * one by release_task(), the other by finish_task_switch() of the task
 * the CPU switched to from the dead one (prev_state TASK_DEAD). The
 * watch counts that event with perf (a tracepoint counter on every CPU,
 * filtered on the field pid: no pea object, so nothing a test counts
 * changes): armed before the task can exit, waited for after the join
 * or the wait.
 */
#ifndef PT_EXIT_H
#define PT_EXIT_H

#include <sys/wait.h>
#include "pea_test.h"

#define PT_FREE_CPUS	64

/*
 * Wait until task @tid (a thread of this process or another process) is
 * asleep off its runqueue: its /proc wchan is answered only then
 * (get_wchan(): not running, not waking, !on_rq; the switch-out is then
 * under way, with interrupts off). A thread parked so before it exits
 * keeps its exit's own blocking, wakeups and switches out of what a test
 * counts. 10 s at most (scaled): 0, or -1.
 */
static inline int pt_tid_asleep(pid_t tid)
{
	char path[64], wchan[128];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)tid);
	for (i = 0; i < 10000 * pt_time_scale(); i++) {
		if (pt_read_file(path, wchan, sizeof(wchan)) >= 0 &&
		    wchan[0] && strcmp(wchan, "0"))
			return 0;
		usleep(1000);
	}
	return -1;
}

struct pt_free_watch {
	int fd[PT_FREE_CPUS];
	int n;
	pid_t pid;
};

/*
 * Arm a watch for the free of task @pid (a thread id or a process id),
 * before it can exit: 0, or a negative errno (the test should fail).
 */
static inline int pt_free_watch(struct pt_free_watch *w, pid_t pid)
{
	int cpu, ncpu = (int)sysconf(_SC_NPROCESSORS_CONF), err = -ENODEV;
	struct perf_event_attr a;
	char buf[32], filter[32];

	w->n = 0;
	w->pid = pid;
	if (pt_read_file("/sys/kernel/tracing/events/sched/sched_process_free/id",
			 buf, sizeof(buf)) < 0)
		return -ENOENT;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = strtoull(buf, NULL, 10);
	snprintf(filter, sizeof(filter), "pid == %d", (int)pid);
	for (cpu = 0; cpu < ncpu && cpu < PT_FREE_CPUS; cpu++) {
		int fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1,
				 PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			err = -errno;
			continue;	/* an offline CPU runs no callback */
		}
		if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter)) {
			err = -errno;
			close(fd);
			continue;
		}
		w->fd[w->n++] = fd;
	}
	return w->n ? 0 : err;
}

/*
 * After the join or the wait: until the watched task has been freed,
 * 10 s at most (scaled); then the watch is closed. 0, or -1 if it was
 * not freed in time or the watch was not armed.
 */
static inline int pt_free_wait(struct pt_free_watch *w)
{
	int i, k, ret = -1;

	for (i = 0; w->n && i < 10000 * pt_time_scale() && ret; i++) {
		__u64 sum = 0, c;

		for (k = 0; k < w->n; k++)
			if (read(w->fd[k], &c, sizeof(c)) == sizeof(c))
				sum += c;
		if (sum)
			ret = 0;
		else
			usleep(1000);
	}
	for (k = 0; k < w->n; k++)
		close(w->fd[k]);
	w->n = 0;
	return ret;
}

/*
 * Fork a child that exits (_exit(0), do_group_exit()) as soon as a watch
 * for its free is armed; reap it, then wait until it has been freed: the
 * kernel holds nothing of its task any more (a kretprobe instance it
 * exited with goes back to its pool in delayed_put_task_struct(), just
 * before the event). 0, or -1.
 */
static inline int pt_child_exit_freed(void)
{
	struct pt_free_watch w;
	bool armed, reaped;
	int go[2], st;
	pid_t k;
	char c;

	if (pipe(go))
		return -1;
	fflush(stdout);
	k = fork();
	if (!k) {
		close(go[1]);
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	armed = k > 0 && !pt_free_watch(&w, k);
	close(go[1]);		/* the child's read sees the end */
	reaped = k > 0 && waitpid(k, &st, 0) == k;
	/* pt_free_wait() closes the watch */
	return armed && !pt_free_wait(&w) && reaped ? 0 : -1;
}

#endif
