/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: struct pea_probe_record, written for kprobes, kretprobes, uprobes
 * and uretprobes (pea_probe_rec.c). Nothing here is ABI.
 */
#ifndef _PEA_PROBE_REC_H
#define _PEA_PROBE_REC_H

#include <linux/types.h>

struct pea_agg_attr;
struct pea_link;
struct pt_regs;

void pea_read_args(struct pt_regs *regs, u64 *args);
u32 pea_capture(struct pea_link *l, const u64 *args, u8 *buf, u16 *flags);
void pea_link_write_at(struct pea_link *l, u64 id, u64 addr,
		       struct pt_regs *regs, const u64 *args, s64 ret,
		       u64 latency, u16 flags, const void *cap, u32 caplen,
		       const u64 *ips, u32 nr);
void pea_link_write_stack(struct pea_link *l, struct pt_regs *regs,
			  const u64 *args, s64 ret, u64 latency, u16 flags,
			  const void *cap, u32 caplen, const u64 *ips, u32 nr);
void pea_link_write(struct pea_link *l, struct pt_regs *regs,
		    const u64 *args, s64 ret, u64 latency, u16 flags,
		    const void *cap, u32 caplen);
void pea_probe_hit_at(struct pea_link *l, u64 id, u64 addr, const u64 *args,
		      u16 flags, struct pt_regs *regs);
void pea_probe_hit(struct pea_link *l, const u64 *args, u16 flags,
		   struct pt_regs *regs);
int pea_probe_agg_check(struct pea_link *l, const struct pea_agg_attr *a);

#endif /* _PEA_PROBE_REC_H */
