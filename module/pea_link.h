/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: links, what a producer attach returns: the part every kind shares
 * (pea_link.c). Each kind's link is a struct of its own file whose first
 * member is this struct pea_link, and the core reaches the kind through
 * the link's provider (pea_provider.h). Nothing here is ABI.
 */
#ifndef _PEA_LINK_H
#define _PEA_LINK_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/list.h>
#include <linux/percpu.h>
#include <linux/types.h>
#include <linux/pea.h>
#include "pea_quota.h"

struct pea_agg;
struct pea_lat;
struct pea_fetch_set;
struct pea_pred_set;
struct pea_map;
struct pea_provider;
struct pea_quota;
struct pid_namespace;

struct pea_link_stats {
	u64 hits;
	u64 written;
	u64 filtered;
	u64 errors;
	u64 missed;	/* uretprobes: returns whose entry was not kept */
	u64 dropped;	/* outputs the ring had no room for (ENOSPC) */
	u64 deep;	/* filtered past PEA_TREE_DEPTH_MAX parents */
};

/* struct pea_link.filter_tree: the kind's PEA_*_F_DESCENDANTS, _DESC_ONLY */
#define PEA_LINK_TREE		BIT(0)
#define PEA_LINK_TREE_ONLY	BIT(1)

struct pea_link {
	const struct pea_provider *provider;	/* its kind */
	struct pea_map *map;
	struct pea_map *counter_map;	/* PEA_PROBE_F_COUNTERS, else NULL */
	u64 id;			/* the link's own id */
	u64 rec_id;		/* what records carry */
	u64 addr;		/* kprobes: the address; tracepoints: event id */
	struct pea_quota *quota;	/* the attacher's, pea_quota.c */
	size_t charged;		/* bytes charged to it */
	bool quota_asked;	/* quota_exempt is known (pea_quota.c) */
	bool quota_exempt;	/* the attacher had CAP_SYS_RESOURCE/ADMIN */
	u32 flags;
	int filter_tgid;
	int filter_cpu;
	u32 filter_tree;	/* PEA_LINK_TREE* (pea_link_tree()) */
	u32 capture_arg;
	u32 capture_mode;
	u32 capture_len;
	u32 capture_flags;
	u32 kstack_depth;	/* frames per record at most (0: no stack) */
	u32 ustack_depth;	/* user entries at most (0: no user stack) */
	u32 max_stack;		/* both stacks together, at most */
	struct pea_fetch_set *fetch;	/* probes' fetch chains, or NULL */
	struct pea_pred_set *pred;	/* a predicate on them, or NULL */
	struct pid_namespace *pid_ns;
	bool retired;		/* closed, kept while calls are in flight */
	struct pea_link_stats __percpu *stats;
	struct pea_agg *agg;	/* its table (pea_agg.c), else NULL */
	struct pea_lat *lat;	/* a start link's pairing table (pea_lat.c) */
	struct list_head node;	/* pea_links, or retired ones (pea_link.c) */
	char symbol[PEA_SYM_LEN];
};

/* pea_link.c: what every kind of link shares */
struct pea_link *pea_link_alloc(struct pea_map *map,
				const struct pea_provider *provider, u64 id,
				u32 flags, int filter_tgid, int filter_cpu);
void pea_link_free(struct pea_link *l);
long pea_link_install(struct pea_link *l, bool cloexec, const void *arg);
bool pea_link_filtered(struct pea_link *l);
bool pea_link_filtered_cpu(struct pea_link *l);
bool pea_link_filtered_tgid(struct pea_link *l);
bool pea_link_excluded(struct pea_link *l);
bool pea_link_other_tgid(struct pea_link *l);

/*
 * Count a hit in this CPU's stats, before its outcome (written, errors).
 * The counters are this_cpu_inc()s: one instruction on x86, so an NMI
 * handler nesting on this CPU cannot lose an update. The barrier pairs
 * with pea_link_sum()'s: a snapshot of a live link never holds an
 * outcome whose hit it misses (hits >= written + errors + dropped per
 * CPU).
 */
static inline void pea_link_count_hit(struct pea_link *l)
{
	this_cpu_inc(l->stats->hits);
	smp_wmb();	/* the hit before its outcome: pea_link_sum() */
}

/*
 * Count a failed output, a hit's outcome: a drop when the ring had no
 * room (-ENOSPC, which the event counted lost), not an error of the
 * probe; any other failure an error. This CPU's counters, as
 * pea_link_count_hit()'s.
 */
static inline void pea_link_count_err(struct pea_link *l, long err)
{
	if (err == -ENOSPC)
		this_cpu_inc(l->stats->dropped);
	else
		this_cpu_inc(l->stats->errors);
}

/*
 * A kind's process-tree flags (PEA_*_F_DESCENDANTS @desc, PEA_*_F_DESC_ONLY
 * @only, both bits 12 and 13 of its attr's flags), checked before the link
 * is made: either without a tgid filter, or @only alone, is EINVAL.
 */
static inline int pea_link_tree_check(u32 flags, int filter_tgid)
{
	u32 desc = flags & PEA_PROBE_F_DESCENDANTS;
	u32 only = flags & PEA_PROBE_F_DESC_ONLY;

	if ((desc || only) && !filter_tgid)
		return -EINVAL;
	return only && !desc ? -EINVAL : 0;
}

static_assert((PEA_TP_F_DESCENDANTS | PEA_UPROBE_F_DESCENDANTS) ==
	      PEA_PROBE_F_DESCENDANTS);
static_assert((PEA_TP_F_DESC_ONLY | PEA_UPROBE_F_DESC_ONLY) ==
	      PEA_PROBE_F_DESC_ONLY);

/* The link's PEA_LINK_TREE* from its kind's checked flags. */
static inline u32 pea_link_tree(u32 flags)
{
	return (flags & PEA_PROBE_F_DESCENDANTS ? PEA_LINK_TREE : 0) |
	       (flags & PEA_PROBE_F_DESC_ONLY ? PEA_LINK_TREE_ONLY : 0);
}

int pea_link_copy_attr(void *a, size_t ksize, size_t minsize,
		       const void __user *ua);

/*
 * A handler's per-CPU scratch space, one slot per nesting level: the
 * capture and the kernel stack, before the record is reserved.
 */
struct pea_scratch {
	u8 cap[PEA_CAPTURE_MAX + 1];
	u64 ips[PEA_KSTACK_MAX];
};

struct pea_scratch *pea_scratch_get(void);
void pea_scratch_put(void);

#endif /* _PEA_LINK_H */
