/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea_selftest: the function pair pea's two-probe latency is tested on
 * (pea_st_lat.c).
 */
#ifndef _PEA_ST_LAT_H
#define _PEA_ST_LAT_H

#include <linux/types.h>

u64 pea_st_lat_begin(u64 key);
u64 pea_st_lat_end(u64 key);
long st_lat(void __user *uarg);

#endif /* _PEA_ST_LAT_H */
