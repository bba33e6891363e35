/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea trace: fetch expressions after a tracepoint ('filename',
 * 'args->filename', 'str(args->pathname,128)', 'join(argv)'): chains
 * whose base is a field of the event's entry (PEA_FETCH_BASE_FIELD), the
 * fields typed from the kernel's BTF by their format's C types, parsed by
 * the kprobes' fetch parser (kfetch.c) and printed as theirs (tpfetch.c).
 */
#ifndef _PEA_TPFETCH_H
#define _PEA_TPFETCH_H

#include <stdbool.h>
#include <stddef.h>
#include "kfetch.h"
#include "probe_kind.h"
#include "tpformat.h"

/**
 * struct tp_fetches - a tracepoint probe's fetches
 * @sig:      the fields the expressions name, as a function's parameters
 *            (parameter i is field @field[i]), typed from BTF
 * @field:    their fields' indexes in the format
 * @k:        the fetches, @n of them, printed and decoded as a kprobe's
 * @f:        what the kernel evaluates, @n of them
 * @n:        their number
 * @user:     the event's pointers are user addresses
 * @preds:    a --filter on them (tp_fetch_filter()), @npreds instructions
 */
struct tp_fetches {
	struct ksig *sig;
	int field[KSIG_MAX_PARAMS];
	struct kfetch k[PROBE_MAX_PARAMS];
	struct pea_fetch f[PROBE_MAX_PARAMS];
	unsigned int n;
	bool user;
	struct pea_pred preds[PEA_PRED_MAX];
	unsigned int npreds;
};

/*
 * Resolve the @nexpr expressions @exprs against the fields of @fmt (of
 * event @event, "SUBSYS:NAME", for messages) into @out. @user: the
 * event's pointer fields are user addresses (a syscall's event): every
 * read of their chains is marked user. 0, or -EINVAL with the reason in
 * @why.
 */
int tp_fetch_parse(const struct tp_format *fmt, const char *event, bool user,
		   const char *const *exprs, unsigned int nexpr,
		   struct tp_fetches *out, char *why, size_t len);
/*
 * --filter @filter as a predicate on fetch expressions (kfilter.c's
 * grammar, args-> dropped): the expressions @t prints are reused, others
 * added to @t after them (fetched, not printed). @t from
 * tp_fetch_parse() (none: zeroed, with @t->user set). 0, or -EINVAL with
 * the reason in @why.
 */
int tp_fetch_filter(const struct tp_format *fmt, const char *filter,
		    struct tp_fetches *t, char *why, size_t len);
void tp_fetch_release(struct tp_fetches *t);

#endif /* _PEA_TPFETCH_H */
