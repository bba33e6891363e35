/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Storm helpers for the tests that read the test module's storm records
 * through libpea (test_storm, and the auto-callback and snapshot modes):
 * start/stop and a compact check of one record.
 */
#ifndef _PT_STORM_H
#define _PT_STORM_H

#include "pea_test.h"

#define PT_ALL_SOURCES	((1U << PEA_ST_NR_SOURCES) - 1)

static struct pea_st_result pt_storm_result;

/* Start the storm on every CPU: @sources, a mask of 1 << enum pea_st_source. */
static inline int pt_storm_start(const char *map, __u32 sources)
{
	struct pea_st_storm cfg = {
		.sources = sources,
		.hrtimer_us = 200,
		.task_burst = 32,
		.task_sleep_us = 200,
		.nmi_every = 2,
	};

	strncpy(cfg.map, map, sizeof(cfg.map) - 1);
	return pt_ioctl_errno(pt_st(), PEA_ST_IOC_STORM_START, &cfg);
}

static inline int pt_storm_stop(void)
{
	memset(&pt_storm_result, 0, sizeof(pt_storm_result));
	return pt_ioctl_errno(pt_st(), PEA_ST_IOC_STORM_STOP, &pt_storm_result);
}

/*
 * Check a storm record as a sample callback received it from the ring of
 * @cpu: size, CPU, length, checksum, pattern and zero padding. Returns
 * NULL if it is intact, else what is wrong; fills *@out.
 */
static inline const char *pt_storm_check(int cpu, const void *data,
					 __u32 size, struct pea_st_record *out)
{
	unsigned char buf[sizeof(struct pea_st_record) + 256];
	const unsigned char *d = data;
	struct pea_st_record r;
	__u32 i, want;

	if (size < sizeof(r))
		return "record too short";
	memcpy(&r, d, sizeof(r));
	*out = r;
	if (r.source >= PEA_ST_NR_SOURCES)
		return "bad source";
	if (r.cpu != (__u32)cpu)
		return "record cpu != ring cpu";
	if (r.len != pea_st_len(r.source, r.seq))
		return "bad length";
	want = ((4 + sizeof(r) + r.len + 7) & ~7U) - 4;
	if (size != want)
		return "bad raw size";
	if (r.ctx != (1U << r.source) || r.pad)
		return "bad context bits";
	memcpy(buf, d, sizeof(r) + r.len);
	((struct pea_st_record *)buf)->csum = 0;
	if (pea_st_csum(buf, sizeof(r) + r.len) != r.csum)
		return "bad checksum";
	for (i = 0; i < r.len; i++)
		if (d[sizeof(r) + i] !=
		    pea_st_pattern(r.source, r.cpu, r.seq, i))
			return "bad pattern";
	for (i = sizeof(r) + r.len; i < size; i++)
		if (d[i])
			return "padding not zero";
	return NULL;
}

#endif /* _PT_STORM_H */
