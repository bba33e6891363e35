/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: --filter on a tracepoint (tp:SUBSYS:NAME), compiled against the
 * event's format into the terms and postfix program PEA_MAP_IOC_ATTACH_TP
 * evaluates in the kernel (tpfilter.c).
 */
#ifndef _PEA_TPFILTER_H
#define _PEA_TPFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/pea.h>
#include "tpformat.h"

/**
 * struct tp_filter - a compiled tracepoint filter
 * @terms:  the comparisons, each once
 * @prog:   the program over them, postfix
 * @nterms: terms used
 * @nprog:  instructions used
 */
struct tp_filter {
	struct pea_tp_pred terms[PEA_TP_TERM_MAX];
	struct pea_pred prog[PEA_TP_PROG_MAX];
	unsigned int nterms, nprog;
};

/*
 * Compile @expr (FIELD OP VALUE joined by ||, && and !, with parentheses;
 * OP: == != < <= > >= & ~) for @fmt into @f: 0, or -EINVAL with a
 * message in @msg.
 */
int tp_filter_compile(const struct tp_format *fmt, const char *expr,
		      struct tp_filter *f, char *msg, size_t msg_len);

/*
 * Whether @f has a context term (ctx.NAME); with @cred, one on ctx.uid or
 * ctx.gid, which the kernel lets only CAP_BPF and CAP_PERFMON attach.
 */
bool tp_filter_has_ctx(const struct tp_filter *f, bool cred);

#endif /* _PEA_TPFILTER_H */
