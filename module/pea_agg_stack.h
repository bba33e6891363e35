/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: the stack store of an aggregation table (pea_agg_stack.c), for
 * PEA_AGG_KEY_KSTACK and PEA_AGG_KEY_USTACK. Nothing here is ABI.
 */
#ifndef _PEA_AGG_STACK_H
#define _PEA_AGG_STACK_H

#include <linux/types.h>
#include <linux/compiler.h>

struct pea_stk;

/* Where a read puts the stacks, and what it has seen. */
struct pea_stk_out {
	u8 __user *buf;
	u64 room;	/* bytes at @buf */
	u64 size;	/* bytes the stacks seen take */
	u64 nr;		/* stacks seen */
};

size_t pea_stk_gen_size(u32 max, u32 depth);
size_t pea_stk_charge(u32 max, u32 depth);
struct pea_stk *pea_stk_alloc(u32 max, u32 depth);
void pea_stk_free(struct pea_stk *stk);
long pea_stk_id(struct pea_stk *stk, unsigned int gen, u16 kind,
		const u64 *ips, u32 nr);
int pea_stk_copy(const struct pea_stk *stk, unsigned int gen,
		 struct pea_stk_out *o);
void pea_stk_clear(struct pea_stk *stk, unsigned int gen);
u64 *pea_stk_scratch_get(struct pea_stk *stk);
void pea_stk_scratch_put(struct pea_stk *stk);

#endif /* _PEA_AGG_STACK_H */
