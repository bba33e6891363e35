/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: a tracepoint link's filter on the fields of its event's entry
 * (pea_tp_filter.c): the predicates of struct pea_tp_attr, all ANDed, or
 * a program joining terms with ||, && and ! (pea_pred_run()), whose
 * terms may also be values of the hit's task (pea_ctx.c). Nothing
 * here is ABI.
 */
#ifndef _PEA_TP_FILTER_H
#define _PEA_TP_FILTER_H

#include <linux/types.h>
#include <linux/pea.h>

struct pid_namespace;
struct pea_fetch_set;
struct trace_event_call;

/**
 * struct pea_tp_prog - a tracepoint link's filter program, checked
 * @nr_terms: terms in @terms
 * @nr_prog:  instructions in @prog
 * @terms:    the terms, after @prog in the same allocation
 * @prog:     the program, postfix
 */
struct pea_tp_prog {
	u32 nr_terms;
	u32 nr_prog;
	const struct pea_tp_pred *terms;
	struct pea_pred prog[];
};

int pea_tp_preds_check(const struct pea_tp_attr *a);
bool pea_tp_preds_match(const struct pea_tp_pred *preds, u32 nr,
			const u8 *e, u32 len);
struct pea_tp_prog *pea_tp_prog_copy(const struct pea_tp_attr *a);
size_t pea_tp_prog_size(const struct pea_tp_prog *tpp);
void pea_tp_prog_free(struct pea_tp_prog *tpp);
bool pea_tp_prog_match(const struct pea_tp_prog *tpp, const u8 *e, u32 len,
		       struct pid_namespace *pid_ns);

/* pea_tp_field.c: a link's fetches against the event's field table */
int pea_tp_fields_check(struct trace_event_call *call,
			const struct pea_fetch_set *fs);

#endif /* _PEA_TP_FILTER_H */
