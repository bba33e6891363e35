/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: --filter on a kprobe, kretprobe, uprobe or uretprobe: a predicate on fetch
 * expressions compiled into the kernel's postfix program (struct
 * pea_pred), evaluated before a record is written (kfilter.c).
 */
#ifndef _PEA_KFILTER_H
#define _PEA_KFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/pea.h>
#include "kfetch.h"

/**
 * struct kfilter_ctx - what a filter compiles against and into
 * @sig:      the function's signature (BTF; a uprobe's from DWARF, or NULL)
 * @ret:      a kretprobe: ret is a name
 * @fetches:  the probe's fetches; an expression the filter names that is
 *            not among them is added after them (not printed)
 * @nfetches: how many there are, updated
 * @max:      room in @fetches
 * @preds:    the program, PEA_PRED_MAX instructions of room
 * @npreds:   its length
 * @uprobe:   the expressions are a uprobe's (ufetch.c), not BTF's
 */
struct kfilter_ctx {
	const struct ksig *sig;
	bool ret, uprobe;
	struct kfetch *fetches;
	unsigned int nfetches, max;
	struct pea_pred *preds;
	unsigned int npreds;
};

/* Compile @text; 0, or -EINVAL with the reason in @msg. */
int kfilter_compile(struct kfilter_ctx *c, const char *text, char *msg,
		    size_t len);

#endif /* _PEA_KFILTER_H */
