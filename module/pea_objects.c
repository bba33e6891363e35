// SPDX-License-Identifier: GPL-2.0
/*
 * pea: what every part of the module shares and no part owns: the counts
 * of live objects (the debugfs "objects" file, for leak checks), the
 * workqueue deferred frees run on (pea_dev.c allocates it at load), and
 * the ids of maps, events and links. It calls no other file of pea, so
 * any file may use it without a circle through the module's init.
 */
#include <linux/atomic.h>
#include <linux/workqueue.h>
#include "pea_internal.h"

struct workqueue_struct *pea_wq;
struct pea_objects pea_objects;

static atomic64_t pea_last_id = ATOMIC64_INIT(0);

/**
 * pea_next_id() - a new id for a map, an event or a link, unique while
 * loaded
 *
 * Return: the id, never 0.
 */
u64 pea_next_id(void)
{
	return atomic64_inc_return(&pea_last_id);
}
