/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: per-user and global bounds on probe links (pea_quota.c). Nothing
 * here is ABI.
 */
#ifndef _PEA_QUOTA_H
#define _PEA_QUOTA_H

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/types.h>

struct pea_link;
struct pea_quota;
struct seq_file;

int pea_quota_link(struct pea_link *l);
void pea_quota_unlink(struct pea_link *l);
void pea_quota_retire(struct pea_link *l);

int pea_link_charge(struct pea_link *l, size_t bytes);
int pea_link_charge_caller(struct pea_link *l, size_t bytes);
void pea_link_uncharge(struct pea_link *l, size_t bytes);
struct pea_quota *pea_quota_charge_obj(struct pea_link *l, size_t bytes);
void pea_quota_uncharge_obj(struct pea_quota *q, size_t bytes);
int pea_quota_show(struct seq_file *m, void *v);
void pea_quota_init(void);

/**
 * pea_alloc_size() - the bytes kvmalloc() takes for @n: kmalloc's
 * rounding, or whole pages
 * @n: the size asked for
 *
 * Return: what memory of @n bytes is charged at.
 */
static inline size_t pea_alloc_size(size_t n)
{
	return n <= KMALLOC_MAX_SIZE ? kmalloc_size_roundup(n) : PAGE_ALIGN(n);
}

#endif /* _PEA_QUOTA_H */
