/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stacks of a pea record (PEA_REC_F_KSTACK, then PEA_REC_F_USTACK)
 * and the user part of a Linux perf sample's callchain, for the tests
 * that compare pea's user stacks with Linux's.
 */
#ifndef _PT_USTACK_H
#define _PT_USTACK_H

#include "pea_test.h"

struct pt_stacks {
	__u16 flags;
	__u32 knr, unr;
	__u64 uips[PEA_USTACK_MAX];
};

/*
 * The stacks of a record of @size raw bytes whose other bytes are @used:
 * the kernel one at the next 8-byte boundary, then the user one.
 * Return: 0, or -1 for a malformed record.
 */
static inline int pt_stacks_parse(const unsigned char *p, __u32 size,
				  __u32 used, __u16 flags, struct pt_stacks *g)
{
	struct pea_kstack ks;
	__u32 off = (used + 7) & ~7U;

	g->flags = flags;
	g->knr = g->unr = 0;
	if (flags & PEA_REC_F_KSTACK) {
		if (off + sizeof(ks) > size)
			return -1;
		memcpy(&ks, p + off, sizeof(ks));
		g->knr = ks.nr;
		off += sizeof(ks) + ks.nr * 8;
	}
	if (flags & PEA_REC_F_USTACK) {
		if (off + sizeof(ks) > size)
			return -1;
		memcpy(&ks, p + off, sizeof(ks));
		if (ks.nr > PEA_USTACK_MAX || ks.reserved ||
		    off + sizeof(ks) + ks.nr * 8 > size)
			return -1;
		g->unr = ks.nr;
		memcpy(g->uips, p + off + sizeof(ks), ks.nr * 8);
		off += sizeof(ks) + ks.nr * 8;
	}
	/* The raw size counts the ring's padding, under 8 bytes. */
	return off <= size && size - off < 8 ? 0 : -1;
}

/*
 * The user entries of the first sample in Linux's ring @pr (a
 * PERF_SAMPLE_CALLCHAIN event), @max at most, read through @buf (64 KiB);
 * the samples seen in @samples if not NULL.
 */
static inline int pt_perf_user_ips(struct pt_ring *pr, void *buf,
				   __u64 *pips, int max, int *samples)
{
	struct perf_event_header *h = buf;
	unsigned char *b = buf;
	int pn = 0, seen = 0, i;

	while (pt_ring_next(pr, buf)) {
		__u64 nr, *ips;

		if (h->type != PERF_RECORD_SAMPLE || seen++)
			continue;
		memcpy(&nr, b + 8, 8);
		ips = (__u64 *)(b + 16);
		for (i = 0; i < (int)nr && pn < max; i++)
			if (ips[i] < (__u64)-4095)	/* not a context mark */
				pips[pn++] = ips[i];
	}
	if (samples)
		*samples = seen;
	return pn;
}

#endif /* _PT_USTACK_H */
