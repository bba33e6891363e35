/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: user call stacks by frame pointers (pea_ustack.c). Nothing here
 * is ABI.
 */
#ifndef _PEA_USTACK_H
#define _PEA_USTACK_H

#include <linux/types.h>

struct pt_regs;

struct pt_regs *pea_ustack_regs(struct pt_regs *regs);
u32 pea_ustack_save(struct pt_regs *regs, u64 *ips, u32 max);

#endif /* _PEA_USTACK_H */
