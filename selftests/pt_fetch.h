/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fetch chains in the selftests (struct pea_fetch): a base and a type,
 * then the reads along the chain, built step by step.
 */
#ifndef _PT_FETCH_H
#define _PT_FETCH_H

#include <string.h>
#include <linux/pea.h>

static inline struct pea_fetch pt_fx(__u8 base, __u8 arg, __u8 type,
				     __u16 size, __u8 flags)
{
	struct pea_fetch f;

	memset(&f, 0, sizeof(f));
	f.base = base;
	f.arg = arg;
	f.type = type;
	f.size = size;
	f.flags = flags;
	return f;
}

/* Add a pointer read at @off before the value's read. */
static inline struct pea_fetch pt_deref(struct pea_fetch f, __s32 off)
{
	f.offset[f.nr_deref] = off;
	f.nr_deref++;
	return f;
}

/* The value's read at @off. */
static inline struct pea_fetch pt_at(struct pea_fetch f, __s32 off)
{
	f.offset[f.nr_deref] = off;
	return f;
}

#endif /* _PT_FETCH_H */
