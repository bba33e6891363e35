/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: kernel call stacks at the end of a record (pea_kstack.c). Nothing
 * here is ABI.
 */
#ifndef _PEA_KSTACK_H
#define _PEA_KSTACK_H

#include <linux/align.h>
#include <linux/types.h>
#include <linux/pea.h>

struct pt_regs;

int pea_kstack_check(u32 depth, u32 reserved);
u32 pea_kstack_save(struct pt_regs *regs, u64 ip0, u64 *ips, u32 max);
void pea_kstack_put(void *rec, u32 used, const u64 *ips, u32 nr);

/* Where struct pea_kstack starts in a record whose other bytes are @used. */
static inline u32 pea_kstack_offset(u32 used)
{
	return ALIGN(used, 8);
}

/*
 * The size of a record whose other bytes are @used, with a stack of @nr
 * entries after them (none for 0).
 */
static inline u32 pea_kstack_rec_size(u32 used, u32 nr)
{
	return nr ? pea_kstack_offset(used) + sizeof(struct pea_kstack) +
		    nr * sizeof(__u64) : used;
}

#endif /* _PEA_KSTACK_H */
