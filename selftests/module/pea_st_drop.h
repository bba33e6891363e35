/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea_selftest: a record dropped while a ring is being mapped
 * (pea_st_drop.c).
 */
#ifndef _PEA_ST_DROP_H
#define _PEA_ST_DROP_H

long st_drop_arm(void __user *uarg);
long st_drop_end(void __user *uarg);
void st_drop_exit(void);

#endif /* _PEA_ST_DROP_H */
