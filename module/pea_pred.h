/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: predicates on a probe's fetched values (pea_pred.c), and the glob
 * match tracepoint filters share. Nothing here is ABI.
 */
#ifndef _PEA_PRED_H
#define _PEA_PRED_H

#include <linux/types.h>
#include <linux/pea.h>

struct pea_fetch_set;

/**
 * struct pea_pred_set - a probe's predicate, checked
 * @nr: instructions in @p
 * @p:  the program, postfix, as the attacher gave it
 */
struct pea_pred_set {
	u32 nr;
	struct pea_pred p[];
};

struct pea_pred_set *pea_pred_copy(u64 uptr, u32 nr, u32 reserved,
				   const struct pea_fetch_set *fs);
void pea_pred_free(struct pea_pred_set *ps);
size_t pea_pred_size(const struct pea_pred_set *ps);
bool pea_pred_eval(const struct pea_pred_set *ps,
		   const struct pea_fetch_set *fs, const void *block);
bool pea_glob(const char *pat, const char *s, size_t len);

#endif /* _PEA_PRED_H */
