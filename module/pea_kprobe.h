/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: what a kprobe link's attach shares with an fprobe link's
 * (pea_kprobe.c, pea_fprobe.c): the same record fields, rules and
 * privilege for each function. Nothing here is ABI.
 */
#ifndef _PEA_KPROBE_H
#define _PEA_KPROBE_H

#include <linux/types.h>

struct pea_link;
struct pea_map;
struct pea_provider;

/**
 * struct pea_kprobe_common - the fields of struct pea_probe_attr that
 * struct pea_fprobe_attr repeats, checked already (as the attrs' own)
 * @id:            the records' id
 * @flags:         the attr's flags (its RETURN flag is @ret)
 * @filter_tgid:   the attr's
 * @filter_cpu:    the attr's
 * @ret:           a return link (its fetches are PEA_FETCH_KIND_RET)
 * @fetches:       the attr's fetch chains (user pointer), @nr_fetches of
 *                 them, its reserved word after them @fetch_reserved
 * @nr_fetches:    see @fetches
 * @fetch_reserved: see @fetches
 * @preds:         the attr's predicates (user pointer), @nr_preds of them,
 *                 its reserved word after them @pred_reserved
 * @nr_preds:      see @preds
 * @pred_reserved: see @preds
 * @capture_arg:   the attr's
 * @capture_mode:  the attr's
 * @capture_len:   the attr's
 * @capture_flags: the attr's
 * @kstack_depth:  the attr's
 * @ustack_depth:  the attr's
 */
struct pea_kprobe_common {
	u64 id;
	u32 flags;
	int filter_tgid;
	int filter_cpu;
	bool ret;
	u64 fetches;
	u32 nr_fetches;
	u32 fetch_reserved;
	u64 preds;
	u32 nr_preds;
	u32 pred_reserved;
	u32 capture_arg;
	u32 capture_mode;
	u32 capture_len;
	u32 capture_flags;
	u32 kstack_depth;
	u32 ustack_depth;
};

struct pea_link *pea_kprobe_link_alloc(struct pea_map *map,
				       const struct pea_provider *provider,
				       const struct pea_kprobe_common *c);

#endif /* _PEA_KPROBE_H */
