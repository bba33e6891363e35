// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libpea: the reader side of the perf ring protocol.
 *
 * The kernel writes records at data_head and publishes data_head with a
 * release barrier; the reader loads data_head with acquire semantics,
 * reads the records up to it, then publishes data_tail with a release
 * store so that the writer never overwrites bytes still being read.
 * data_head and data_tail only grow; offsets into the data area are taken
 * modulo its size, a power of two.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pea.h>

#include "libpea_internal.h"

struct pea_lost_body {
	__u64 id;
	__u64 lost;
};

static inline __u64 ring_load_head(const struct perf_event_mmap_page *page)
{
	return __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
}

static inline __u64 ring_load_tail(const struct perf_event_mmap_page *page)
{
	/* Only the reader writes data_tail; a plain (single-copy) load. */
	return __atomic_load_n(&page->data_tail, __ATOMIC_RELAXED);
}

static inline void ring_store_tail(struct perf_event_mmap_page *page,
				   __u64 tail)
{
	/* Orders all reads of the records before the slots are released. */
	__atomic_store_n(&page->data_tail, tail, __ATOMIC_RELEASE);
}

void pea_ring_copy(const struct pea_ring *ring, __u64 pos, void *dst,
		   size_t len)
{
	__u64 off = pos & (ring->data_size - 1);
	size_t first = len;

	if (off + len > ring->data_size)
		first = ring->data_size - off;
	memcpy(dst, (const char *)ring->data + off, first);
	if (first < len)
		memcpy((char *)dst + first, ring->data, len - first);
}

/* pea_buffer__lost() may read the total from another thread. */
static inline void ring_add_lost(struct pea_ring *ring, __u64 cnt)
{
	__atomic_store_n(&ring->lost, ring->lost + cnt, __ATOMIC_RELAXED);
}

int pea_ring_grow_scratch(struct pea_ring *ring, size_t size)
{
	void *p;

	if (ring->scratch_sz >= size)
		return 0;
	p = realloc(ring->scratch, size);
	if (!p)
		return -ENOMEM;
	ring->scratch = p;
	ring->scratch_sz = size;
	return 0;
}

size_t pea_sample_raw_offset(__u64 sample_type)
{
	size_t off = 0;

	/* Linux's field order: ..., TID, TIME, ..., CPU, ..., RAW. */
	if (sample_type & PERF_SAMPLE_TID)
		off += sizeof(__u32) * 2;	/* pid, tid */
	if (sample_type & PERF_SAMPLE_TIME)
		off += sizeof(__u64);
	if (sample_type & PERF_SAMPLE_CPU)
		off += sizeof(__u32) * 2;	/* cpu, reserved */
	return off;
}

int pea_ring_deliver_lost(struct pea_ring *ring, const struct pea_ring_cbs *cbs,
			  const char *body, size_t body_len)
{
	struct pea_lost_body lost;

	if (body_len < sizeof(lost))
		return -EINVAL;
	memcpy(&lost, body, sizeof(lost));
	ring_add_lost(ring, lost.lost);
	if (cbs->lost_cb)
		cbs->lost_cb(cbs->ctx, ring->cpu, lost.lost);
	return 0;
}

/*
 * The per-record loop runs for every sample a consumer reads, so what
 * does not change between records (the ring's geometry, where the raw
 * size sits for this sample_type, the callback) is loaded once, out of
 * the loop: an indirect call per record would otherwise make the
 * compiler load all of it again each time. Samples take the straight
 * path; anything else goes to pea_ring_deliver_lost() or is an error.
 */
int pea_ring_read(struct pea_ring *ring, const struct pea_ring_cbs *cbs)
{
	struct perf_event_mmap_page *page = ring->page;
	const char *data = ring->data;
	const __u64 size = ring->data_size, mask = size - 1;
	const size_t raw_off = sizeof(struct perf_event_header) +
			       pea_sample_raw_offset(ring->sample_type);
	const pea_buffer_sample_fn sample_cb = cbs->sample_cb;
	void *const ctx = cbs->ctx;
	const int cpu = ring->cpu;
	__u64 head, tail;
	int err = 0;

	head = ring_load_head(page);
	tail = ring_load_tail(page);
	if (head == tail)
		return 0;
again:

	/* A writer never gets more than the ring size ahead of the reader. */
	if (head - tail > size) {
		err = -EINVAL;
		tail = head;
		goto out;
	}

	while (tail != head) {
		struct perf_event_header hdr;
		__u64 avail = head - tail;
		__u64 off = tail & mask;
		const char *rec;

		/*
		 * Records are 8-byte multiples, so a header only wraps if
		 * data_tail was misaligned: the common case is one load
		 * (a fixed-size copy), not a call to memcpy(). A header
		 * not all published (avail < 8) is read inside the mapping
		 * and refused below, since a valid size is at least 8.
		 */
		if (off + sizeof(hdr) <= size)
			memcpy(&hdr, data + off, sizeof(hdr));
		else if (avail >= sizeof(hdr))
			pea_ring_copy(ring, tail, &hdr, sizeof(hdr));
		else
			hdr.size = 0;
		if (hdr.size < sizeof(hdr) || hdr.size > avail) {
			/* Cannot find the next record: drop the rest. */
			err = -EINVAL;
			tail = head;
			break;
		}

		if (off + hdr.size <= size) {
			rec = data + off;
		} else {
			err = pea_ring_grow_scratch(ring, hdr.size);
			if (err)
				break;
			pea_ring_copy(ring, tail, ring->scratch, hdr.size);
			rec = ring->scratch;
		}

		if (hdr.type == PERF_RECORD_SAMPLE) {
			err = pea_ring_deliver_sample(rec, hdr.size, raw_off,
						      sample_cb, ctx, cpu);
		} else if (hdr.type == PERF_RECORD_LOST) {
			err = pea_ring_deliver_lost(ring, cbs, rec + sizeof(hdr),
						    hdr.size - sizeof(hdr));
		} else {
			err = -EINVAL;
		}
		tail += hdr.size;
		if (err)
			break;
	}
out:
	ring_store_tail(page, tail);
	if (!err && ring->recheck) {
		/*
		 * Store data_tail, then load data_head: see
		 * PEA_FLAG_ADAPTIVE_WAKEUP.
		 */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		head = ring_load_head(page);
		if (head != tail)
			goto again;
	}
	return err;
}

int pea_ring_check_lost(struct pea_ring *ring, const struct pea_ring_cbs *cbs,
			pea_ring_take_lost_fn take, void *arg)
{
	__u64 cnt = 0;
	int err;

	if (!__atomic_load_n(&PEA_PAGE_LOST_HINT(ring->page), __ATOMIC_RELAXED))
		return 0;
	err = take(arg, &cnt);
	if (err)
		return err;
	if (!cnt)
		return 0;
	ring_add_lost(ring, cnt);
	if (cbs->lost_cb)
		cbs->lost_cb(cbs->ctx, ring->cpu, cnt);
	return 0;
}

bool pea_ring_ready(const struct pea_ring *ring)
{
	return ring_load_head(ring->page) != ring_load_tail(ring->page) ||
	       __atomic_load_n(&PEA_PAGE_LOST_HINT(ring->page),
			       __ATOMIC_RELAXED);
}

void pea_ring_release(struct pea_ring *ring)
{
	free(ring->scratch);
	ring->scratch = NULL;
	ring->scratch_sz = 0;
}
