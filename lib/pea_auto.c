// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libpea: PEA_BUFFER_FLAG_AUTO_CALLBACK, the callbacks on a library thread.
 *
 * The thread waits on the buffer's epoll instance, which watches every
 * ring and an eventfd that pea_buffer__free() writes to stop it. It
 * drains each ring epoll reports, and on every quiet tick it looks at the
 * rings' lost hints, since drops that never reached a ring as a
 * PERF_RECORD_LOST (the ring stayed full, output paused) raise no
 * wake-up. Before exiting it drains every ring once more, so that
 * records published before pea_buffer__free() reach the callbacks.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "libpea.h"
#include "libpea_internal.h"

/* The longest a drop announced only by the lost hint waits unreported. */
#define PEA_AUTO_TICK_MS	100

static void auto_drain_all(struct pea_buffer *pb)
{
	size_t i;

	for (i = 0; i < pb->cnt; i++)
		pea_cpu_buf_consume(pb, &pb->bufs[i]);
}

static void *auto_thread(void *arg)
{
	struct pea_buffer *pb = arg;
	bool stop = false;

	while (!stop) {
		int i, cnt;

		cnt = epoll_wait(pb->epoll_fd, pb->events, pb->events_cnt,
				 PEA_AUTO_TICK_MS);
		if (cnt < 0) {
			if (errno == EINTR)
				continue;
			break;	/* the epoll fd is unusable: nothing to wait on */
		}
		if (!cnt) {
			size_t j;

			for (j = 0; j < pb->cnt; j++)
				pea_cpu_buf_check_lost(pb, &pb->bufs[j]);
			continue;
		}
		for (i = 0; i < cnt; i++) {
			__u64 key = pb->events[i].data.u64;

			if (key == PEA_AUTO_STOP_KEY)
				stop = true;
			else if (key < pb->cnt)
				/*
				 * A malformed record ends that ring's pass
				 * (the reader resynchronises); carry on.
				 */
				pea_cpu_buf_consume(pb, &pb->bufs[key]);
		}
	}
	auto_drain_all(pb);
	return NULL;
}

int pea_auto_start(struct pea_buffer *pb)
{
	struct epoll_event ev;
	sigset_t all, old;
	int err;

	pb->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (pb->stop_fd < 0)
		return -errno;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = PEA_AUTO_STOP_KEY;
	if (epoll_ctl(pb->epoll_fd, EPOLL_CTL_ADD, pb->stop_fd, &ev) < 0)
		return -errno;

	/* Signals stay with the application's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&pb->thread, NULL, auto_thread, pb);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	pb->thread_on = true;
	return 0;
}

void pea_auto_stop(struct pea_buffer *pb)
{
	__u64 one = 1;

	if (pb->thread_on) {
		/* An eventfd write of 1 only fails on counter overflow. */
		while (write(pb->stop_fd, &one, sizeof(one)) < 0 &&
		       errno == EINTR)
			;
		pthread_join(pb->thread, NULL);
		pb->thread_on = false;
	}
	if (pb->stop_fd >= 0) {
		close(pb->stop_fd);
		pb->stop_fd = -1;
	}
}
