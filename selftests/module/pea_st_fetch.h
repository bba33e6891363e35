/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea_selftest: the function pea's fetch chains are tested on
 * (pea_st_fetch.c).
 */
#ifndef _PEA_ST_FETCH_H
#define _PEA_ST_FETCH_H

#include <linux/types.h>

struct pea_st_fobj;

long pea_st_fetch_target(struct pea_st_fobj *o, const char *kstr,
			 const char __user *ustr, void *null, s64 n,
			 int neg);
long st_fetch(void __user *uarg);

#endif /* _PEA_ST_FETCH_H */
