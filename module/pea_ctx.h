/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: the context values of a hit, what the task that hit a probe or a
 * tracepoint is (pea_ctx.c), for fetches (PEA_FETCH_BASE_CTX) and for
 * tracepoint filter terms (PEA_TP_FIELD_CTX). Nothing here is ABI.
 */
#ifndef _PEA_CTX_H
#define _PEA_CTX_H

#include <linux/sched.h>
#include <linux/types.h>

struct pid_namespace;

u32 pea_ctx_comm(char comm[TASK_COMM_LEN]);
u64 pea_ctx_int(struct pid_namespace *pid_ns, u32 key);
u32 pea_ctx_width(u32 key);
bool pea_ctx_is_cred(u32 key);

#endif /* _PEA_CTX_H */
