/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: counter events, shared by pea_counter.c (the fd, its creation, the
 * control page and its refresh timer) and pea_counter_read.c (the
 * NMI-safe read behind pea_read_value()). Nothing here is ABI.
 */
#ifndef _PEA_COUNTER_H
#define _PEA_COUNTER_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <asm/local.h>
#include "pea_internal.h"

/*
 * struct pea_counter - the counting side of a PEA_EVENT_COUNTER event
 * @pe:         the kernel perf event (perf_event_create_kernel_counter())
 * @page:       the control page user space maps: struct perf_event_mmap_page
 * @base:       raw count at the last PERF_EVENT_IOC_RESET; reads report
 *              the raw count minus @base
 * @seq:        the page's lock, written only by the owning CPU
 * @publishing: a sample-and-publish is in progress on the owning CPU (an
 *              NMI that finds it set samples without publishing)
 * @lock:       serialises read(2), the ioctls and their page refresh
 * @node:       entry in the owning CPU's list, walked by its refresh timer
 * @move:       entry in a private list while the counter changes CPU
 * @cpu:        the owning CPU: the one whose list holds @node and the only
 *              one that publishes the page; the CPU perf put @pe on
 *              (@pe->cpu, which a PMU may choose and later migrate), or
 *              -1 while the counter moves to a new owner
 */
struct pea_counter {
	struct perf_event *pe;
	struct perf_event_mmap_page *page;
	atomic64_t base;
	u32 seq;
	local_t publishing;
	struct mutex lock;	/* read(2), ioctls: see @lock above */
	struct list_head node;
	struct list_head move;
	int cpu;
};

/* pea_counter.c */
extern const struct file_operations pea_counter_fops;
long pea_counter_open(struct perf_event_attr *attr,
		      const struct pea_event_open *arg);
int pea_counter_init(void);
void pea_counter_exit(void);

/* pea_counter_read.c */
void pea_counter_sample(struct pea_counter *c, struct pea_event_value *v);
void pea_counter_refresh(struct pea_counter *c, struct pea_event_value *v);

#endif /* _PEA_COUNTER_H */
