/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A consumer thread: polls a pea_buffer until told to stop, optionally
 * pausing between polls (a slow reader), and counts its polls and errors.
 */
#ifndef _PT_CONSUMER_H
#define _PT_CONSUMER_H

#include <pthread.h>
#include <unistd.h>
#include "libpea.h"

struct pt_consumer {
	pthread_t thr;
	struct pea_buffer *pb;
	int pause_us;		/* between polls: a slow reader */
	volatile int stop;
	long polls, errors, last_err;
};

static void *pt_consumer_fn(void *arg)
{
	struct pt_consumer *c = arg;

	while (!c->stop) {
		int ret = pea_buffer__poll(c->pb, 100);

		c->polls++;
		if (ret < 0) {
			c->errors++;
			c->last_err = ret;
		}
		if (c->pause_us)
			usleep(c->pause_us);
	}
	return NULL;
}

#endif /* _PT_CONSUMER_H */
