/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: a sample's user registers and user stack copy (pea_uregs.c).
 * Nothing here is ABI.
 */
#ifndef _PEA_UREGS_H
#define _PEA_UREGS_H

#include <linux/types.h>

struct pt_regs;
struct pea_user_regs;

u32 pea_uregs_save(struct pt_regs *regs, struct pea_user_regs *ur,
		   u32 stack_user);

#endif /* _PEA_UREGS_H */
