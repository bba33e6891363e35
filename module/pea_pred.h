/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: predicates on a probe's fetched values (pea_pred.c), and what the
 * tracepoint filter shares with them: the program's check and evaluator,
 * the operand width rule and the glob match. Nothing here is ABI.
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
bool pea_pred_fits(u64 value, u32 width, bool sgn, u32 cmp);
int pea_pred_prog_check(const struct pea_pred *prog, u32 nr,
			int (*check_cmp)(const struct pea_pred *p,
					 const void *ctx),
			const void *ctx);

/**
 * pea_pred_run() - run a checked postfix program
 * @prog: the program (pea_pred_prog_check() accepted it)
 * @nr: its instructions
 * @cmp: the truth of one PEA_PRED_CMP instruction
 * @ctx: what @cmp reads (a hit's values)
 *
 * The one evaluator of pea's predicate programs: the fetch predicates'
 * (pea_pred.c) and the tracepoint filter's (pea_tp_filter.c). Inlined so
 * that each caller's @cmp is a direct call. The stack is the bits of one
 * u32 (PEA_PRED_DEPTH_MAX <= 32, checked at attach): no locks, no
 * allocation, any context, NMI included.
 *
 * Return: the value the program leaves.
 */
static __always_inline bool
pea_pred_run(const struct pea_pred *prog, u32 nr,
	     bool (*cmp)(const struct pea_pred *p, const void *ctx),
	     const void *ctx)
{
	u32 stack = 0, depth = 0, i;
	bool a, b;

	for (i = 0; i < nr; i++) {
		const struct pea_pred *p = &prog[i];

		switch (p->op) {
		case PEA_PRED_CMP:
			a = cmp(p, ctx);
			stack = (stack << 1) | a;
			depth++;
			break;
		case PEA_PRED_AND:
		case PEA_PRED_OR:
			a = stack & 1;
			b = (stack >> 1) & 1;
			stack >>= 2;
			stack = (stack << 1) |
				(p->op == PEA_PRED_AND ? a && b : a || b);
			depth--;
			break;
		default:	/* PEA_PRED_NOT */
			stack ^= 1;
			break;
		}
	}
	return depth == 1 && (stack & 1);
}

#endif /* _PEA_PRED_H */
