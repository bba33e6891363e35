/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libpea internals: the perf ring reader and small helpers, shared by the
 * library's own files and by tests that link them directly. Not installed,
 * not part of the public API.
 */
#ifndef __LIBPEA_INTERNAL_H
#define __LIBPEA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <linux/perf_event.h>

#include "libpea.h"

#define PEA_HIDDEN __attribute__((visibility("hidden")))

/* The size field of a PERF_SAMPLE_RAW body. */
#define PEA_RAW_SIZE_LEN	sizeof(__u32)

/**
 * struct pea_ring - one mapped perf ring as the reader sees it
 * @page:        the control page (struct perf_event_mmap_page)
 * @data:        the first byte of the data area
 * @data_size:   bytes in the data area, a power of two
 * @cpu:         the CPU passed to the callbacks
 * @sample_type: the sample_type the event was opened with (RAW implied)
 * @scratch:     buffer for records that wrap around the end of the ring
 * @scratch_sz:  its size
 * @lost:        total drops reported on this ring so far
 * @recheck:     after storing data_tail, load data_head again (behind a
 *               full barrier) and go on if it moved: what an adaptive
 *               wake-up (PEA_FLAG_ADAPTIVE_WAKEUP) needs of the reader
 *
 * The owner fills @page, @data, @data_size, @cpu and @sample_type, zeroes
 * the rest, and calls pea_ring_release() when done.
 */
struct pea_ring {
	struct perf_event_mmap_page *page;
	void *data;
	__u64 data_size;
	int cpu;
	__u64 sample_type;
	void *scratch;
	size_t scratch_sz;
	__u64 lost;
	bool recheck;
};

/**
 * struct pea_ring_cbs - where the reader delivers records
 * @sample_cb: for PERF_RECORD_SAMPLE; may be NULL
 * @lost_cb:   for PERF_RECORD_LOST and taken drop counts; may be NULL
 * @ctx:       passed to both
 */
struct pea_ring_cbs {
	pea_buffer_sample_fn sample_cb;
	pea_buffer_lost_fn lost_cb;
	void *ctx;
};

/**
 * typedef pea_ring_take_lost_fn - fetch and clear the pending drop count
 * @arg: the caller's argument
 * @cnt: set to the count taken
 *
 * Return: 0 or -errno.
 */
typedef int (*pea_ring_take_lost_fn)(void *arg, __u64 *cnt);

/**
 * pea_ring_read() - deliver all published records of a ring
 * @ring: the ring
 * @cbs:  the callbacks
 *
 * Reads data_head once (acquire), walks the records from data_tail to it,
 * hands each to the callbacks (copying one that wraps around the ring end
 * into @ring->scratch first), and stores the new data_tail (release).
 *
 * A record of a type other than SAMPLE or LOST, or a SAMPLE or LOST whose
 * body is too short, is consumed and ends the walk with -EINVAL (libbpf
 * stops on an unknown type too). A record header that cannot be valid
 * (size below 8, beyond the published data or the ring) means the stream
 * cannot be resynchronised: everything up to data_head is discarded and
 * -EINVAL returned, so the ring does not stay wedged. If the scratch
 * buffer cannot grow, the walk stops before that record with -ENOMEM.
 *
 * Return: 0 or a negative errno as above.
 */
PEA_HIDDEN int pea_ring_read(struct pea_ring *ring,
			     const struct pea_ring_cbs *cbs);

/**
 * pea_ring_check_lost() - report drops published only by the lost hint
 * @ring: the ring
 * @cbs:  the callbacks
 * @take: called when PEA_PAGE_LOST_HINT() of the control page is non-zero
 * @arg:  passed to @take
 *
 * A non-zero count taken is added to @ring->lost and passed to the lost
 * callback.
 *
 * Return: 0, or the error of @take.
 */
PEA_HIDDEN int pea_ring_check_lost(struct pea_ring *ring,
				   const struct pea_ring_cbs *cbs,
				   pea_ring_take_lost_fn take, void *arg);

/**
 * pea_ring_release() - free what the reader allocated for a ring
 * @ring: the ring
 */
PEA_HIDDEN void pea_ring_release(struct pea_ring *ring);

/**
 * pea_sample_raw_offset() - where the raw size field sits in a sample body
 * @sample_type: the sample_type of the event
 *
 * Return: bytes after the record header before the u32 raw size.
 */
PEA_HIDDEN size_t pea_sample_raw_offset(__u64 sample_type);

/**
 * pea_parse_cpu_list() - parse a sysfs CPU list such as "0-3,8,10-11\n"
 * @s:    the NUL-terminated text
 * @mask: set to a malloc'ed array, @mask[i] true if CPU i is listed
 * @n:    set to the array length (highest CPU listed + 1)
 *
 * Return: 0, -EINVAL for malformed text, or -ENOMEM.
 */
PEA_HIDDEN int pea_parse_cpu_list(const char *s, bool **mask, int *n);

#endif /* __LIBPEA_INTERNAL_H */
