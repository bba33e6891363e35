/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: the context values a probe's fetch can take instead of an
 * argument ('ctx.comm', 'ctx.tid', 'ctx.pid', 'ctx.uid', 'ctx.gid',
 * 'ctx.cgroup', 'ctx.cpu': PEA_FETCH_BASE_CTX), for kprobes and uprobes
 * alike: ctxfetch.c.
 */
#ifndef _PEA_CTXFETCH_H
#define _PEA_CTXFETCH_H

#include <stddef.h>
#include "kfetch.h"

/*
 * If @expr (after a "NAME=" the caller removed) is "ctx.NAME", fill @out's
 * fetch, type and string flag and return 1; 0 if it is no ctx. expression;
 * -EINVAL with the reason in @why for an unknown ctx. name.
 */
int ctxfetch_parse(const char *expr, struct kfetch *out, char *why,
		   size_t len);

/* Whether fetch @f is ctx.cgroup: its filter value may be a path. */
bool ctxfetch_is_cgroup(const struct pea_fetch *f);

/*
 * The cgroup v2 id of directory @path, as bpftrace's cgroupid() finds it
 * (name_to_handle_at()'s 8-byte handle): 0, or -errno with @why.
 */
int ctxfetch_cgroup_id(const char *path, __u64 *id, char *why, size_t len);

#endif /* _PEA_CTXFETCH_H */
