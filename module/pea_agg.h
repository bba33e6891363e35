/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: a link's in-kernel aggregation table (pea_agg.c). The link core
 * creates and reads it (PEA_LINK_IOC_AGG_*); a kind's handler hands each
 * hit to pea_agg_hit() with what it knows of the hit. Nothing here is ABI.
 */
#ifndef _PEA_AGG_H
#define _PEA_AGG_H

#include <linux/types.h>
#include <linux/pea.h>
#include "pea_link.h"
#include "pea_lat.h"

struct pea_agg;
struct pt_regs;

/**
 * struct pea_agg_sample - what a hit offers a table's value
 * @args:    the six arguments (probes), else NULL
 * @ret:     a return's value
 * @latency: a return's entry-to-return ns
 * @raw:     a tracepoint's raw entry, else NULL
 * @raw_len: its bytes
 * @regs:    PEA_AGG_KEY_KSTACK: the registers to unwind the kernel stack
 *           from (pea_kstack_save()), unless @kips is set
 * @ip0:     with @regs: pea_kstack_save()'s @ip0
 * @kips:    PEA_AGG_KEY_KSTACK: a kernel stack unwound already, else NULL
 * @knr:     its entries (0: no stack, id 0)
 * @uips:    PEA_AGG_KEY_USTACK: the user stack (samplers)
 * @unr:     its entries (0: no stack, id 0)
 * @fetch:   the hit's fetched values (pea_fetch_eval()), evaluated once
 *           for the table and the record; NULL without fetches
 * @rec_id:  PEA_AGG_KEY_PROBE: the hit's record id (an fprobe's names
 *           its function); 0: the link's
 *
 * Which of them a kind fills is what its provider's agg_check accepts.
 * A stack is cut to the table's stack_depth.
 */
struct pea_agg_sample {
	const u64 *args;
	s64 ret;
	u64 latency;
	const u8 *raw;
	u32 raw_len;
	u32 knr;
	struct pt_regs *regs;
	u64 ip0;
	const u64 *kips;
	const u64 *uips;
	u32 unr;
	const struct pea_fetch_block *fetch;
	u64 rec_id;
};

bool pea_agg_attr_has_key(const struct pea_agg_attr *a, u8 part);
bool pea_agg_update(struct pea_agg *agg, struct pea_link *l,
		    const struct pea_agg_sample *s);
long pea_agg_check(struct pea_link *l, const struct pea_agg_attr *a,
		   u32 *nr_lin);
long pea_agg_create(struct pea_link *l, const struct pea_agg_attr *a,
		    struct pea_lat *pair);
long pea_agg_share(struct pea_link *l, struct pea_link *owner);
long pea_agg_read(struct pea_link *l, struct pea_agg_read *r,
		  void __user *ua, u32 usize);
void pea_agg_retire(struct pea_link *l);
void pea_agg_free(struct pea_link *l);

/*
 * Hand a hit to @l's pairing table (a start, pea_lat.c) and to its
 * aggregation table, if it has them. Called by the kinds' handlers with
 * preemption off, before pea_link_count_hit() (any context). The
 * acquires pair with pea_agg_create()'s and pea_lat_create()'s releases:
 * a table seen is filled.
 *
 * Return: true if the link writes no record for the hit: it has a table
 * and each it has says so (PEA_AGG_F_NO_RECORDS, PEA_LAT_F_NO_RECORDS).
 */
static inline bool pea_agg_hit(struct pea_link *l,
			       const struct pea_agg_sample *s)
{
	/* Acquire: pairs with pea_lat_create()'s release. */
	struct pea_lat *lat = smp_load_acquire(&l->lat);
	/* Acquire: pairs with pea_agg_create()'s release. */
	struct pea_agg *agg = smp_load_acquire(&l->agg);
	bool no_rec = lat || agg;

	if (lat && !pea_lat_start(lat, s))
		no_rec = false;
	if (agg && !pea_agg_update(agg, l, s))
		no_rec = false;
	return no_rec;
}

#endif /* _PEA_AGG_H */
