/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: who may attach a producer, as Linux's own interface for the same
 * thing decides (pea_perm.c). Nothing here is ABI.
 */
#ifndef _PEA_PERM_H
#define _PEA_PERM_H

#include <linux/types.h>

struct task_struct;

int pea_perm_kprobe(void);
int pea_perm_kernel_read(void);
int pea_perm_probe_lockdown(bool kernel_read);
int pea_perm_tracepoint(void);
int pea_perm_tp_read(bool kernel_read);
int pea_perm_netfilter(void);
int pea_perm_sample(bool kernel);
int pea_perm_task(struct task_struct *task);
int pea_perm_task_mem(struct task_struct *task);

#endif /* _PEA_PERM_H */
