/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Closing many links at once. Each close of a probe or tracepoint link
 * waits for an RCU grace period (unregister_kprobe(), pea_tp.c): tens of
 * milliseconds on PREEMPT_RT under TCG, so a thousand closes in a row
 * take tens of seconds. Closes from several threads wait on the same
 * grace periods.
 */
#ifndef PT_CLOSE_H
#define PT_CLOSE_H

#include <pthread.h>
#include <unistd.h>

#define PT_CLOSERS	16

struct pt_close_job {
	const int *fds;
	int n, next;
};

static inline void *pt_closer(void *arg)
{
	struct pt_close_job *j = arg;
	int i;

	while ((i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->n)
		if (j->fds[i] >= 0)
			close(j->fds[i]);
	return NULL;
}

/*
 * Close @fds[0 .. @n) (negative entries skipped) from PT_CLOSERS threads;
 * every close has returned when this does. Returns 0, or -1 if no thread
 * could be started (then it closed them all itself).
 */
static inline int pt_close_parallel(const int *fds, int n)
{
	struct pt_close_job j = { fds, n, 0 };
	pthread_t th[PT_CLOSERS];
	int i, started = 0;

	for (i = 0; i < PT_CLOSERS; i++)
		if (!pthread_create(&th[started], NULL, pt_closer, &j))
			started++;
	pt_closer(&j);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	return started ? 0 : -1;
}

#endif
