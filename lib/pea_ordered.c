// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libpea: PEA_BUFFER_FLAG_ORDERED, one stream in time order from the
 * per-CPU rings, without a guessed window.
 *
 * Each ring is in time order (the kernel takes the time inside the
 * reservation). The reader merges the rings on the time of their first
 * unread record, and may deliver the oldest one it holds as soon as every
 * ring it holds nothing of is "quiet": PEA_PAGE_WRITERS() reads 0 and its
 * data_head has not moved, which proves that whatever that ring publishes
 * later carries a later time than everything the reader loaded before the
 * check (the protocol is in <linux/pea.h>, PEA_FLAG_ORDERED). A round is:
 *
 *   A. load-acquire every ring's data_head;
 *   B. for each ring with nothing unread, load-acquire its writers word,
 *      then its data_head again: quiet if 0 and unchanged;
 *   C. merge: deliver the oldest first record among the rings, while
 *      every ring either has an unread record from A or is quiet; stop at
 *      the first ring that runs dry without having been found quiet;
 *   D. store each ring's data_tail (release), and collect drops that only
 *      the lost hint shows for rings read to the end.
 *
 * Rounds repeat while they deliver something. An idle CPU's ring is quiet
 * at once, so it holds nothing back; a ring with a writer in flight (one
 * record's reservation, copy and commit, preemption disabled) holds the
 * stream until the next round, which pea_buffer__poll() runs within a
 * millisecond. PERF_RECORD_LOST carries its time (attr.sample_id_all), so
 * the lost callback runs at the loss's place in the stream.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pea.h>

#include "libpea.h"
#include "libpea_internal.h"

/*
 * Rounds per call at most: under a constant stream a call still returns,
 * and what is left is read by the next one.
 */
#define PEA_ORDERED_ROUNDS	64

/* Body of PERF_RECORD_LOST before its sample_id: id, lost. */
#define PEA_LOST_BODY	16

static inline __u64 load_acquire(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Where the TIME field sits in a SAMPLE or (with sample_id) a LOST body. */
static inline size_t time_off(const struct pea_ring *ring, __u32 type)
{
	size_t off = sizeof(struct perf_event_header);

	if (type == PERF_RECORD_LOST)
		off += PEA_LOST_BODY;
	if (ring->sample_type & PERF_SAMPLE_TID)
		off += 8;
	return off;
}

/*
 * The first unread record of @buf: header and time. Returns 0, or
 * -EINVAL for a record that cannot be valid (the caller drops the rest
 * of the ring, as pea_ring_read() does).
 */
static int peek(struct pea_cpu_buf *buf, struct perf_event_header *hdr,
		__u64 *time)
{
	struct pea_ring *ring = &buf->ring;
	__u64 avail = buf->o_head - buf->o_pos;
	__u64 off = buf->o_pos & (ring->data_size - 1);
	const char *p = (const char *)ring->data + off;

	if (avail < sizeof(*hdr))
		return -EINVAL;
	if (off + sizeof(*hdr) <= ring->data_size)
		memcpy(hdr, p, sizeof(*hdr));
	else	/* only if a bad size misaligned the stream */
		pea_ring_copy(ring, buf->o_pos, hdr, sizeof(*hdr));
	if (off + hdr->size <= ring->data_size &&
	    hdr->size >= time_off(ring, hdr->type) + sizeof(*time) &&
	    hdr->size <= avail &&
	    (hdr->type == PERF_RECORD_SAMPLE || hdr->type == PERF_RECORD_LOST)) {
		/* The common case: the record does not wrap. */
		memcpy(time, p + time_off(ring, hdr->type), sizeof(*time));
		return 0;
	}
	if (hdr->size < sizeof(*hdr) || hdr->size > avail ||
	    (hdr->type != PERF_RECORD_SAMPLE && hdr->type != PERF_RECORD_LOST) ||
	    hdr->size < time_off(ring, hdr->type) + sizeof(*time))
		return -EINVAL;
	pea_ring_copy(ring, buf->o_pos + time_off(ring, hdr->type), time,
		      sizeof(*time));
	return 0;
}

/* Deliver the record at o_pos (header @hdr) and step over it. */
static int deliver(struct pea_buffer *pb, struct pea_cpu_buf *buf,
		   const struct perf_event_header *hdr)
{
	const struct pea_ring_cbs cbs = {
		.sample_cb = pb->sample_cb,
		.lost_cb = pb->lost_cb,
		.ctx = pb->ctx,
	};
	struct pea_ring *ring = &buf->ring;
	__u64 off = buf->o_pos & (ring->data_size - 1);
	size_t raw_off = sizeof(*hdr) + pea_sample_raw_offset(ring->sample_type);
	const char *rec;
	int err;

	if (off + hdr->size <= ring->data_size) {
		rec = (const char *)ring->data + off;
	} else {
		err = pea_ring_grow_scratch(ring, hdr->size);
		if (err)
			return err;
		pea_ring_copy(ring, buf->o_pos, ring->scratch, hdr->size);
		rec = ring->scratch;
	}
	if (hdr->type == PERF_RECORD_LOST)
		err = pea_ring_deliver_lost(ring, &cbs, rec + sizeof(*hdr),
					    hdr->size - sizeof(*hdr));
	else
		err = pea_ring_deliver_sample(rec, hdr->size, raw_off,
					      pb->sample_cb, pb->ctx, ring->cpu);
	buf->o_pos += hdr->size;
	buf->o_done = true;
	return err;
}

/*
 * Phase B: nothing unread in @buf; is it quiet? Sets *@moved when
 * records arrived since A (the next round reads them).
 */
static bool quiet(struct pea_cpu_buf *buf, bool *moved)
{
	const struct perf_event_mmap_page *pg = buf->ring.page;

	if (load_acquire(&PEA_PAGE_WRITERS(pg)))		/* (F) */
		return false;
	if (load_acquire(&pg->data_head) == buf->o_pos)		/* (G) */
		return true;
	*moved = true;
	return false;
}

/*
 * Deliver a run of @buf's records (the ring at index @idx of the buffer),
 * starting with the one at o_pos, whose header o_hdr holds, while they
 * come before the next oldest ring's first record (@next_t of ring
 * @next_i; on a tie, while @idx is the lower), or to the end of what it
 * holds if @next_i is pb->cnt (no other ring has records). The other
 * rings do not change meanwhile. The first record is always delivered.
 * Returns 0 or a negative errno.
 *
 * This is the reader's per-record loop. What does not change between
 * records is loaded once; a sample that does not wrap is peeked and
 * delivered inline, with the checks of peek() and deliver(), which take
 * anything else (a LOST, a record that wraps, a bad header).
 */
static inline __attribute__((always_inline)) int
run_ring(struct pea_buffer *pb, struct pea_cpu_buf *buf, size_t idx,
	 size_t next_i, __u64 next_t, const bool bounded)
{
	const struct pea_ring *ring = &buf->ring;
	const char *data = ring->data;
	const __u64 size = ring->data_size, mask = size - 1;
	const size_t raw_off = buf->o_raw_off;
	const size_t t_off = buf->o_t_off;
	const __u32 min_size = t_off + sizeof(__u64);
	const pea_buffer_sample_fn sample_cb = pb->sample_cb;
	void *const ctx = pb->ctx;
	const int cpu = ring->cpu;
	const __u64 head = buf->o_head;
	struct perf_event_header hdr;
	__u64 pos = buf->o_pos, off = pos & mask, avail, t, stop = UINT64_MAX;
	/* The header's type and size, as scalars: kept in registers. */
	__u32 type = buf->o_hdr.type, rsize = buf->o_hdr.size;
	__u16 size16;
	int err;

	/*
	 * Go on while a record's time is below @stop: the next oldest's
	 * time, plus one unless a tie stops the run. Saturated at
	 * UINT64_MAX, where a run may stop one record early: never out of
	 * order, since merge() then picks the oldest ring again.
	 */
	if (bounded) {
		stop = next_t;
		if (idx < next_i && stop != UINT64_MAX)
			stop++;
	}
	buf->o_peeked = false;
	buf->o_done = true;
	hdr = buf->o_hdr;
	if (type != PERF_RECORD_SAMPLE || off + rsize > size)
		goto slow;
	for (;;) {
		err = pea_ring_deliver_sample(data + off, rsize, raw_off,
					      sample_cb, ctx, cpu);
		pos += rsize;
delivered:
		if (err) {
			buf->o_pos = pos;
			return err;
		}
		/*
		 * The next record, as peek() reads it: a header not all
		 * published (or none: pos at head) is read inside the
		 * mapping and refused by its size, as pea_ring_read() does.
		 * A record that starts before head is all published, so its
		 * fields may be loaded one by one.
		 */
		avail = head - pos;
		off = pos & mask;
		if (off + sizeof(hdr) <= size) {
			memcpy(&type, data + off +
			       offsetof(struct perf_event_header, type),
			       sizeof(type));
			memcpy(&size16, data + off +
			       offsetof(struct perf_event_header, size),
			       sizeof(size16));
			rsize = size16;
			if (type == PERF_RECORD_SAMPLE && rsize >= min_size &&
			    rsize <= avail && off + rsize <= size) {
				if (!bounded)
					continue;
				memcpy(&t, data + off + t_off, sizeof(t));
				if (t < stop)
					continue;
				memcpy(&hdr, data + off, sizeof(hdr));
				break;
			}
		}
		if (!avail) {
			/* Dry, and not proven quiet since the load. */
			buf->o_pos = pos;
			buf->o_quiet = false;
			return 0;
		}
		buf->o_pos = pos;
		err = peek(buf, &hdr, &t);
		if (err) {
			buf->o_pos = buf->o_head;	/* resync */
			return err;
		}
		type = hdr.type;
		rsize = hdr.size;
		if (t >= stop)
			break;
		if (type == PERF_RECORD_SAMPLE && off + rsize <= size)
			continue;
slow:
		buf->o_pos = pos;
		err = deliver(pb, buf, &hdr);
		pos = buf->o_pos;
		goto delivered;
	}
	/* Held for the next oldest ring: peeked already. */
	buf->o_hdr = hdr;
	buf->o_pos = pos;
	buf->o_time = t;
	buf->o_peeked = true;
	return 0;
}

/*
 * A run bounded by another ring's first record, or a ring alone: when no
 * other ring holds records (every other one is quiet and empty), its own
 * order is the stream's, and its records' times need not be read.
 */
static int run(struct pea_buffer *pb, struct pea_cpu_buf *buf, size_t idx,
	       size_t next_i, __u64 next_t)
{
	/* The ring's sample_type never changes: its offsets, once. */
	if (!buf->o_t_off) {
		buf->o_raw_off = sizeof(struct perf_event_header) +
				 pea_sample_raw_offset(buf->ring.sample_type);
		buf->o_t_off = time_off(&buf->ring, PERF_RECORD_SAMPLE);
	}
	if (next_i < pb->cnt)
		return run_ring(pb, buf, idx, next_i, next_t, true);
	return run_ring(pb, buf, idx, next_i, next_t, false);
}

/* Whether entry @a comes before entry @b: time, then CPU. */
static inline bool before(const struct pea_heap_ent *a,
			  const struct pea_heap_ent *b)
{
	return a->time < b->time || (a->time == b->time && a->idx < b->idx);
}

/* Restore the heap @h of @n entries below entry @k. */
static inline void sift_down(struct pea_heap_ent *h, size_t n, size_t k)
{
	struct pea_heap_ent top = h[k];
	size_t c;

	while ((c = 2 * k + 1) < n) {
		if (c + 1 < n && before(&h[c + 1], &h[c]))
			c++;
		if (!before(&h[c], &top))
			break;
		h[k] = h[c];
		k = c;
	}
	h[k] = top;
}

/*
 * Phase C; returns 1 if it delivered records, 0 if not, or a negative
 * errno. The rings with records form a binary heap on their first
 * record's (time, CPU), peeked once; the oldest ring delivers a run up
 * to the next oldest's first record (one of the root's children), then
 * goes back down the heap, so a record mostly costs one peek and one
 * comparison, and a change of ring O(log rings). A ring that runs dry
 * leaves the heap if it is quiet then; if not, it ends the phase: it may
 * hold older records.
 */
static long merge(struct pea_buffer *pb)
{
	struct pea_heap_ent *h = pb->o_heap;
	size_t i, n = 0, next;
	bool moved = false;	/* the next round sees it */
	long done = 0;
	int err;

	for (i = 0; i < pb->cnt; i++) {
		struct pea_cpu_buf *buf = &pb->bufs[i];

		if (buf->o_pos == buf->o_head) {
			if (!buf->o_quiet)
				return 0;	/* may hold older */
			continue;
		}
		err = peek(buf, &buf->o_hdr, &buf->o_time);
		if (err) {
			buf->o_pos = buf->o_head;	/* resync */
			return err;
		}
		h[n].time = buf->o_time;
		h[n++].idx = i;
	}
	for (i = n / 2; i-- > 0;)
		sift_down(h, n, i);
	while (n) {
		struct pea_cpu_buf *best = &pb->bufs[h[0].idx];

		next = 0;
		if (n > 1)
			next = 1;
		if (n > 2 && before(&h[2], &h[1]))
			next = 2;
		err = run(pb, best, h[0].idx, next ? h[next].idx : pb->cnt,
			  h[next].time);
		if (err)
			return err;
		done = 1;
		if (best->o_peeked) {
			h[0].time = best->o_time;
			/*
			 * It stopped at a record after the next oldest's
			 * first: of two rings, they swap.
			 */
			if (n == 2) {
				struct pea_heap_ent e = h[0];

				h[0] = h[1];
				h[1] = e;
				continue;
			}
		} else {
			/*
			 * Dry. Quiet now, it holds nothing back: (F) and (G)
			 * come after phase A's loads of every data_head whose
			 * records the heap holds, as in phase B. If not, it
			 * may hold older records: the phase ends.
			 */
			if (!quiet(best, &moved))
				break;
			best->o_quiet = true;
			h[0] = h[--n];
		}
		sift_down(h, n, 0);
	}
	return done;
}

int pea_ordered_consume(struct pea_buffer *pb)
{
	int err = 0, rings = 0, rounds = 0;
	bool moved;
	size_t i;
	long n;

	for (i = 0; i < pb->cnt; i++)
		pb->bufs[i].o_done = false;
	do {
		moved = false;
		/* A: what every ring holds now. */
		for (i = 0; i < pb->cnt; i++) {
			struct pea_cpu_buf *buf = &pb->bufs[i];

			buf->o_head = load_acquire(&buf->ring.page->data_head);
			if (buf->o_head - buf->o_pos > buf->ring.data_size) {
				buf->o_pos = buf->o_head;	/* cannot be */
				err = -EINVAL;
			}
		}
		/* B: after every load of A. */
		for (i = 0; i < pb->cnt; i++) {
			struct pea_cpu_buf *buf = &pb->bufs[i];

			buf->o_quiet = buf->o_pos == buf->o_head &&
				       quiet(buf, &moved);
		}
		n = merge(pb);
		if (n < 0 && !err)
			err = n;
		/* D: release what was read. */
		for (i = 0; i < pb->cnt; i++) {
			struct pea_cpu_buf *buf = &pb->bufs[i];

			__atomic_store_n(&buf->ring.page->data_tail, buf->o_pos,
					 __ATOMIC_RELEASE);
			/* As pea_ring_check_lost(), without a call if no hint. */
			if (buf->o_pos == buf->o_head &&
			    __atomic_load_n(&PEA_PAGE_LOST_HINT(buf->ring.page),
					    __ATOMIC_RELAXED)) {
				int e = pea_cpu_buf_check_lost(pb, buf);

				if (e && !err)
					err = e;
			}
		}
		/* Go on while it delivers, or records arrived during B. */
	} while (!err && (n > 0 || moved) && ++rounds < PEA_ORDERED_ROUNDS);

	/* Whether the stream is held by a ring that was not quiet. */
	pb->o_held = false;
	for (i = 0; i < pb->cnt; i++) {
		if (pb->bufs[i].o_done)
			rings++;
		if (pb->bufs[i].o_pos != pb->bufs[i].o_head ||
		    load_acquire(&PEA_PAGE_WRITERS(pb->bufs[i].ring.page)))
			pb->o_held = true;
	}
	return err ? err : rings;
}
