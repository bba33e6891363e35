/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea_selftest: calls of a probed function from NMI (pea_st_kstack.c).
 */
#ifndef _PEA_ST_KSTACK_H
#define _PEA_ST_KSTACK_H

#include <linux/ptrace.h>
#include <linux/types.h>

u32 pea_st_kstack_target(u32 i);
int pea_st_kstack_nmi(unsigned int type, struct pt_regs *regs);
struct irq_work;
void pea_st_kstack_irq_work(struct irq_work *work);
long st_kstack_nmi(void __user *uarg);

#endif /* _PEA_ST_KSTACK_H */
