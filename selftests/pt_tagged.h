/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tagged records for the snapshot tests: the CPU and a tag in the first
 * 8 bytes, then bytes derived from both, so a reader can check every byte
 * it got and tell which output wrote it.
 */
#ifndef PT_TAGGED_H
#define PT_TAGGED_H

#include "pea_test.h"

/* Fill @len (at least 8) bytes at @p for @cpu and @tag. */
static inline void pt_tagged_payload(unsigned char *p, size_t len, int cpu,
				     __u32 tag)
{
	__u32 hdr[2] = { cpu, tag };
	size_t i;

	memcpy(p, hdr, sizeof(hdr));
	for (i = sizeof(hdr); i < len; i++)
		p[i] = (unsigned char)(i * 7 + tag * 3 + cpu);
}

/*
 * Output tags @from .. @to - 1 of @len bytes into @map on @cpu (pinned
 * there). Returns how many outputs gave 0.
 */
static inline __u32 pt_tagged_produce(const char *map, size_t len, int cpu,
				      __u32 from, __u32 to)
{
	unsigned char p[len];
	__u32 tag, ok = 0;

	pt_pin(cpu);
	for (tag = from; tag < to; tag++) {
		pt_tagged_payload(p, len, cpu, tag);
		ok += pt_output(map, PEA_F_CURRENT_CPU, p, len) == 0;
	}
	return ok;
}

#endif /* PT_TAGGED_H */
