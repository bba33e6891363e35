/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea_selftest: the context payload append producer (pea_st_ctx.c).
 */
#ifndef _PEA_ST_CTX_H
#define _PEA_ST_CTX_H

long st_ctx_output(void __user *uarg);

#endif /* _PEA_ST_CTX_H */
