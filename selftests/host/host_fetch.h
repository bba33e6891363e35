/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host fetch tests' expected struct pea_fetch, built field by field
 * (test_kfetch: kprobe expressions, test_ufetch: uprobe ones).
 */
#ifndef _HOST_FETCH_H
#define _HOST_FETCH_H

#include <string.h>
#include <linux/pea.h>

static inline struct pea_fetch host_fetch(__u8 base, __u8 arg, __u8 nd,
					  __u8 type, __u16 size, __u8 flags,
					  __s32 o0, __s32 o1, __s32 o2,
					  __s32 o3, __s32 o4)
{
	struct pea_fetch f;

	memset(&f, 0, sizeof(f));
	f.base = base;
	f.arg = arg;
	f.nr_deref = nd;
	f.type = type;
	f.size = size;
	f.flags = flags;
	f.offset[0] = o0;
	f.offset[1] = o1;
	f.offset[2] = o2;
	f.offset[3] = o3;
	f.offset[4] = o4;
	return f;
}

#endif /* _HOST_FETCH_H */
