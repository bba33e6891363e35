/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: calls in flight, each held by the task that made it
 * (pea_inflight.c). Nothing here is ABI.
 */
#ifndef _PEA_INFLIGHT_H
#define _PEA_INFLIGHT_H

#include <linux/atomic.h>
#include <linux/types.h>

/*
 * A table of @nr slots, each free or held by one call of one task: the
 * slot's owner word (the task's global thread id + 1, a PENDING bit, a
 * generation) and who the owner is (pea_inflight.c).
 */
struct pea_inflight_who;

struct pea_inflight {
	u32 nr;
	atomic_t cursor;		/* where the next stale scan starts */
	atomic64_t next_reclaim;	/* jiffies_64: the next stale scan */
	atomic64_t *owner;
	struct pea_inflight_who *who;
};

size_t pea_inflight_size(u32 nr);
int pea_inflight_init(struct pea_inflight *f, u32 nr);
void pea_inflight_free(struct pea_inflight *f);
int pea_inflight_claim(struct pea_inflight *f, u64 *owner);
void pea_inflight_release(struct pea_inflight *f, u32 slot, u64 owner);
bool pea_inflight_busy(struct pea_inflight *f);

#endif /* _PEA_INFLIGHT_H */
