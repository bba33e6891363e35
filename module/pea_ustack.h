/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: user call stacks by frame pointers (pea_ustack.c). Nothing here
 * is ABI.
 */
#ifndef _PEA_USTACK_H
#define _PEA_USTACK_H

#include <linux/types.h>

struct pt_regs;

struct pea_link;

struct pt_regs *pea_ustack_regs(struct pt_regs *regs);
u32 pea_ustack_save(struct pt_regs *hregs, u64 *ips, u32 max);
int pea_ustack_check(u32 depth);
void pea_ustack_link(struct pea_link *l, u32 depth);
u64 *pea_ustack_buf_get(void);
void pea_ustack_buf_put(void);
u32 pea_ustack_hit(struct pea_link *l, struct pt_regs *regs, u32 knr,
		   u64 *ips);
int pea_ustack_init(void);
void pea_ustack_exit(void);

#endif /* _PEA_USTACK_H */
