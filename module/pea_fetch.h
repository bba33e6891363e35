/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: fetch chains, evaluated at a probe's hit (pea_fetch.c), and the
 * fault-safe reads they and captures use. Nothing here is ABI.
 */
#ifndef _PEA_FETCH_H
#define _PEA_FETCH_H

#include <linux/bits.h>
#include <linux/types.h>
#include <linux/pea.h>

struct pt_regs;
struct pid_namespace;

/**
 * struct pea_fetch_set - a probe's fetches, checked
 * @nr:          fetches in @f
 * @block_max:   the largest struct pea_fetch_block they write
 * @mem_read:    whether any fetch reads memory (user or kernel)
 * @kernel_read: whether a read may be of kernel memory
 * @f:           the fetches, as the attacher gave them
 *
 * @mem_read also marks a context value that only a BPF program gets at a
 * kprobe (the uid and gid: bpf_get_current_uid_gid()), so that it takes
 * what a memory read takes there: CAP_BPF and CAP_PERFMON.
 */
struct pea_fetch_set {
	u32 nr;
	u32 block_max;
	bool mem_read;
	bool kernel_read;
	struct pea_fetch f[];
};

/* The largest block: the bound of pea_fetch_copy(). */
#define PEA_FETCH_BLOCK_MAX	(sizeof(struct pea_fetch_block) + \
				 PEA_FETCH_MAX * sizeof(struct pea_fetch_value) + \
				 PEA_FETCH_DATA_MAX)

/* pea_fetch_copy()'s kinds of probe */
#define PEA_FETCH_KIND_USER	BIT(0)	/* uprobes: user memory only */
#define PEA_FETCH_KIND_RET	BIT(1)	/* returns: BASE_RET allowed */
#define PEA_FETCH_KIND_TP	BIT(2)	/* tracepoints: BASE_FIELD and CTX only */

struct pea_fetch_set *pea_fetch_copy(u64 uptr, u32 nr, u32 reserved,
				     u32 kind);
void pea_fetch_free(struct pea_fetch_set *fs);
size_t pea_fetch_size(const struct pea_fetch_set *fs);
u32 pea_fetch_width(u8 type);
void pea_fetch_prefault(const struct pea_fetch_set *fs, struct pt_regs *regs,
			const u64 *args, s64 ret);
u32 pea_fetch_eval(const struct pea_fetch_set *fs, struct pt_regs *regs,
		   const u64 *args, s64 ret, bool user,
		   struct pid_namespace *pid_ns, void *block);
u32 pea_fetch_eval_entry(const struct pea_fetch_set *fs, const void *entry,
			 u32 len, struct pid_namespace *pid_ns, void *block);
int pea_fetch_init(void);
void pea_fetch_exit(void);
void *pea_fetch_buf_get(void);
void pea_fetch_buf_put(void);

long pea_read_nofault(void *dst, const void *src, size_t len, bool user);
long pea_strncpy_nofault(u8 *dst, const u8 *src, size_t count, bool user);

#endif /* _PEA_FETCH_H */
