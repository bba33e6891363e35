/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: memory charging and perf's sysctls (pea_limits.c). Nothing here
 * is ABI.
 */
#ifndef _PEA_LIMITS_H
#define _PEA_LIMITS_H

#include <linux/types.h>
#include <linux/list.h>

struct user_struct;
struct mm_struct;
struct seq_file;

/*
 * struct pea_charge - what one ring costs its user, as perf's rb->mmap_*
 * @user:         the user charged (a reference)
 * @mm:           the mm whose pinned_vm was charged (an mmgrab() reference)
 * @user_pages:   pages charged to @user->perf_mlock
 * @pinned_pages: pages charged to @mm->pinned_vm (over the perf budget)
 * @event_id:     the ring's event, for debugfs
 * @node:         entry in the debugfs list
 */
struct pea_charge {
	struct user_struct *user;
	struct mm_struct *mm;
	unsigned long user_pages;
	unsigned long pinned_pages;
	u64 event_id;
	struct list_head node;
};

int pea_perf_paranoid(void);
int pea_perf_max_stack(void);
int pea_perf_max_sample_rate(void);
int pea_mlock_charge(struct pea_charge *c, unsigned long pages, u64 event_id);
void pea_mlock_track(struct pea_charge *dst, const struct pea_charge *src);
void pea_mlock_uncharge(struct pea_charge *c);
int pea_mlock_show(struct seq_file *m, void *v);
void pea_limits_init(void);
void pea_limits_exit(void);

#endif /* _PEA_LIMITS_H */
