/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea_selftest: the ordered-delivery producers (pea_st_order.c).
 */
#ifndef _PEA_ST_ORDER_H
#define _PEA_ST_ORDER_H

long st_order_ioctl(unsigned int cmd, void __user *uarg);

#endif /* _PEA_ST_ORDER_H */
