// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libpea: pause/resume of a ring's output, and the snapshot reader of
 * PEA_BUFFER_FLAG_OVERWRITE (flight recorder) buffers.
 *
 * A write_backward ring grows downwards: data_head starts at 0 and
 * decreases by each record's size, so the newest record starts at
 * data_head and older ones follow it at increasing positions. Of the
 * bytes ever written (-data_head, while that is below the ring size) or
 * of one whole ring, the records that lie entirely in
 * [data_head, data_head + ring size) are intact; the one crossing the
 * upper end was partly overwritten by the newest records.
 *
 * A snapshot pauses the rings so that producers stop writing, waits for
 * writers that were already past the pause check, copies each window,
 * resumes, and only then walks and delivers the copies, so the producers
 * are held up for one RCU grace period and one memcpy per ring.
 *
 * With PEA_BUFFER_FLAG_ORDERED the copies are merged on their records'
 * times into one stream, after a horizon: a ring that wrapped lost its
 * records older than the oldest one it still holds, so a record of
 * another ring older than that would come without the history of the
 * wrapped ring's CPU beside it. The horizon is the latest of the oldest
 * sample times of the rings that wrapped (0 when none did); only samples
 * at or after it are delivered, so from the horizon on the stream has
 * every record of every CPU. A ring "wrapped" when the records found do
 * not cover every byte ever written to it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/membarrier.h>
#include <linux/pea.h>

#include "libpea.h"
#include "libpea_internal.h"

/* The smallest record: a header and the u32 raw size, padded. */
#define PEA_MIN_RECORD		16

struct snap_walk {
	size_t n;		/* whole records found */
	__u64 end;		/* bytes of the window they cover */
};

int pea_buffer__pause(struct pea_buffer *pb, size_t buf_idx, bool pause)
{
	struct pea_cpu_buf *buf;

	if (!pb || buf_idx >= pb->cnt)
		return pea_err(-EINVAL);
	buf = &pb->bufs[buf_idx];
	if (ioctl(buf->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, pause ? 1 : 0) < 0)
		return pea_err(-errno);
	buf->user_paused = pause;
	return 0;
}

void pea_snapshot_release(struct pea_cpu_buf *buf)
{
	free(buf->snap_buf);
	buf->snap_buf = NULL;
	free(buf->snap_offs);
	buf->snap_offs = NULL;
}

/* Whether a SAMPLE's raw size accounts exactly for its header size. */
static bool sample_consistent(const struct pea_ring *ring, const char *rec,
			      __u16 size)
{
	size_t off = sizeof(struct perf_event_header) +
		     pea_sample_raw_offset(ring->sample_type);
	__u32 raw;

	if (size < off + PEA_RAW_SIZE_LEN)
		return false;
	memcpy(&raw, rec + off, sizeof(raw));
	return (__u64)off + PEA_RAW_SIZE_LEN + raw == size;
}

/*
 * Walk the copied window of @avail bytes from its start (the newest
 * record) and note the offset of every whole record in buf->snap_offs,
 * stopping at the first header that cannot be valid.
 */
static struct snap_walk snap_walk(const struct pea_buffer *pb,
				  const struct pea_cpu_buf *buf, __u64 avail)
{
	__u64 st = buf->ring.sample_type;
	const char *copy = buf->snap_buf;
	struct snap_walk w = { 0, 0 };
	size_t lost_size = sizeof(struct perf_event_header) + 2 * sizeof(__u64);

	/* ORDERED sets sample_id_all: LOST records end with TID, TIME, CPU. */
	if (pb->flags & PEA_BUFFER_FLAG_ORDERED)
		lost_size += 8 * (!!(st & PERF_SAMPLE_TID) +
				  !!(st & PERF_SAMPLE_TIME) +
				  !!(st & PERF_SAMPLE_CPU));

	while (avail - w.end >= sizeof(struct perf_event_header)) {
		struct perf_event_header hdr;
		const char *rec = copy + w.end;

		memcpy(&hdr, rec, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size % 8 ||
		    hdr.size > avail - w.end)
			break;
		if (hdr.type == PERF_RECORD_SAMPLE) {
			if (!sample_consistent(&buf->ring, rec, hdr.size))
				break;
		} else if (hdr.type != PERF_RECORD_LOST ||
			   hdr.size != lost_size) {
			break;
		}
		buf->snap_offs[w.n++] = w.end;
		w.end += hdr.size;
	}
	return w;
}

static int snap_alloc(struct pea_buffer *pb, struct pea_cpu_buf *buf)
{
	if (!buf->snap_buf)
		buf->snap_buf = malloc(pb->data_size);
	if (!buf->snap_offs)
		buf->snap_offs = calloc(pb->data_size / PEA_MIN_RECORD,
					sizeof(*buf->snap_offs));
	return buf->snap_buf && buf->snap_offs ? 0 : -ENOMEM;
}

/* Deliver the growth of the event's lost counter since the last time. */
static int snap_report_lost(struct pea_buffer *pb, struct pea_cpu_buf *buf)
{
	struct pea_event_stats st;
	__u64 delta;

	memset(&st, 0, sizeof(st));
	if (ioctl(buf->fd, PEA_EVENT_IOC_STATS, &st) < 0)
		return -errno;
	delta = st.lost - buf->snap_lost;
	buf->snap_lost = st.lost;
	if (!delta)
		return 0;
	buf->ring.lost += delta;
	if (pb->lost_cb)
		pb->lost_cb(pb->ctx, buf->cpu, delta);
	return 0;
}

/*
 * Wait until every writer that may have missed the pause is done: pea's
 * writers run with preemption disabled, so an RCU grace period, which
 * membarrier(MEMBARRIER_CMD_GLOBAL) waits for (libbpf's selftests use it
 * the same way), covers them. Where it is unavailable (nohz_full,
 * seccomp), the data_head re-check in snap_copy() is the only guard.
 */
static void snap_wait_writers(void)
{
	syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
}

/* Copy the whole-record window of a paused ring into buf->snap_buf. */
static void snap_copy(struct pea_buffer *pb, struct pea_cpu_buf *buf)
{
	struct pea_ring *ring = &buf->ring;
	__u64 size = pb->data_size, head, head2, avail, moved, keep;

	head = __atomic_load_n(&ring->page->data_head, __ATOMIC_ACQUIRE);
	/* Bytes ever written, as the head went down from 0; one ring at most. */
	avail = -head;
	buf->snap_written = avail;
	if (avail > size)
		avail = size;
	pea_ring_copy(ring, head, buf->snap_buf, avail);
	/*
	 * A writer still in flight that published since wrote [head2, head),
	 * the same bytes as the top (head - head2) of the window: leave
	 * those out.
	 */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	head2 = __atomic_load_n(&ring->page->data_head, __ATOMIC_ACQUIRE);
	moved = head - head2;
	keep = moved >= size ? 0 : size - moved;
	buf->snap_len = keep < avail ? keep : avail;
}

/* Deliver the copied records oldest first; return how many samples. */
static int snap_deliver(struct pea_buffer *pb, struct pea_cpu_buf *buf)
{
	size_t raw_off = sizeof(struct perf_event_header) +
			 pea_sample_raw_offset(buf->ring.sample_type) +
			 PEA_RAW_SIZE_LEN;
	struct snap_walk w = snap_walk(pb, buf, buf->snap_len);
	int delivered = 0;
	size_t i;

	/* The walk went from the newest. */
	for (i = w.n; i-- > 0;) {
		char *rec = (char *)buf->snap_buf + buf->snap_offs[i];
		struct perf_event_header hdr;
		__u32 raw;

		memcpy(&hdr, rec, sizeof(hdr));
		if (hdr.type != PERF_RECORD_SAMPLE)
			continue;	/* counted through the lost counter */
		memcpy(&raw, rec + raw_off - PEA_RAW_SIZE_LEN, sizeof(raw));
		if (pb->sample_cb)
			pb->sample_cb(pb->ctx, buf->cpu, rec + raw_off, raw);
		delivered++;
	}
	return delivered;
}

/* Hand the SAMPLE at @off in the copy of @buf to the sample callback. */
static void snap_emit(struct pea_buffer *pb, struct pea_cpu_buf *buf,
		      size_t off)
{
	size_t raw_off = sizeof(struct perf_event_header) +
			 pea_sample_raw_offset(buf->ring.sample_type) +
			 PEA_RAW_SIZE_LEN;
	char *rec = (char *)buf->snap_buf + off;
	__u32 raw;

	memcpy(&raw, rec + raw_off - PEA_RAW_SIZE_LEN, sizeof(raw));
	if (pb->sample_cb)
		pb->sample_cb(pb->ctx, buf->cpu, rec + raw_off, raw);
}

/* The time of the SAMPLE at @off in the copy (TIME follows TID). */
static __u64 snap_time(const struct pea_cpu_buf *buf, size_t off)
{
	size_t t = sizeof(struct perf_event_header) +
		   (buf->ring.sample_type & PERF_SAMPLE_TID ? 8 : 0);
	__u64 time;

	memcpy(&time, (const char *)buf->snap_buf + off + t, sizeof(time));
	return time;
}

/*
 * The next SAMPLE of @buf at or after @horizon, going from the oldest:
 * its index + 1 in snap_offs (the walk went from the newest), or 0.
 */
static size_t snap_next(const struct pea_cpu_buf *buf, size_t i,
			__u64 horizon)
{
	for (; i > 0; i--) {
		const char *rec = (const char *)buf->snap_buf +
				  buf->snap_offs[i - 1];
		struct perf_event_header hdr;

		memcpy(&hdr, rec, sizeof(hdr));
		if (hdr.type == PERF_RECORD_SAMPLE &&
		    snap_time(buf, buf->snap_offs[i - 1]) >= horizon)
			return i;
	}
	return 0;
}

/*
 * ORDERED: the horizon (see the top of the file), then the records of
 * every ring at or after it, merged on their times; equal times come in
 * ring order. Returns how many samples were delivered.
 */
static int snap_deliver_ordered(struct pea_buffer *pb)
{
	__u64 horizon = 0, t, best_t;
	size_t i, best_i;
	struct pea_cpu_buf *buf;
	int delivered = 0;

	for (i = 0; i < pb->cnt; i++) {
		struct snap_walk w;
		size_t oldest;

		buf = &pb->bufs[i];
		w = snap_walk(pb, buf, buf->snap_len);
		buf->snap_n = w.n;
		if (buf->snap_written <= w.end)
			continue;	/* every byte written is in the copy */
		oldest = snap_next(buf, w.n, 0);
		/* Wrapped with no whole sample left: nothing is proven. */
		t = oldest ? snap_time(buf, buf->snap_offs[oldest - 1]) :
			     ~0ULL;
		if (t > horizon)
			horizon = t;
	}
	pb->snap_horizon = horizon;
	for (i = 0; i < pb->cnt; i++) {
		buf = &pb->bufs[i];
		buf->snap_next = snap_next(buf, buf->snap_n, horizon);
	}
	for (;;) {
		best_i = pb->cnt;
		best_t = 0;
		for (i = 0; i < pb->cnt; i++) {
			buf = &pb->bufs[i];
			if (!buf->snap_next)
				continue;
			t = snap_time(buf, buf->snap_offs[buf->snap_next - 1]);
			if (best_i == pb->cnt || t < best_t) {
				best_i = i;
				best_t = t;
			}
		}
		if (best_i == pb->cnt)
			return delivered;
		buf = &pb->bufs[best_i];
		snap_emit(pb, buf, buf->snap_offs[buf->snap_next - 1]);
		delivered++;
		/* Newer records of the ring are all past the horizon. */
		buf->snap_next = snap_next(buf, buf->snap_next - 1, 0);
	}
}

int pea_buffer__snapshot(struct pea_buffer *pb)
{
	int total = 0, err = 0, ret;
	struct pea_cpu_buf *buf;
	size_t i;

	if (!pb || !(pb->flags & PEA_BUFFER_FLAG_OVERWRITE))
		return pea_err(-EINVAL);
	for (i = 0; i < pb->cnt; i++) {
		ret = snap_alloc(pb, &pb->bufs[i]);
		if (ret)
			return pea_err(ret);
	}

	/* Stop every ring, let writers in flight finish, copy, resume. */
	for (i = 0; i < pb->cnt; i++) {
		buf = &pb->bufs[i];
		buf->snap_paused = false;
		if (buf->user_paused)
			continue;
		if (ioctl(buf->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1) < 0) {
			if (!err)
				err = -errno;
			continue;
		}
		buf->snap_paused = true;
	}
	snap_wait_writers();
	for (i = 0; i < pb->cnt; i++)
		snap_copy(pb, &pb->bufs[i]);
	for (i = 0; i < pb->cnt; i++) {
		buf = &pb->bufs[i];
		if (buf->snap_paused &&
		    ioctl(buf->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0) < 0 && !err)
			err = -errno;
		buf->snap_paused = false;
	}

	if (pb->flags & PEA_BUFFER_FLAG_ORDERED)
		total = snap_deliver_ordered(pb);
	for (i = 0; i < pb->cnt; i++) {
		buf = &pb->bufs[i];
		if (!(pb->flags & PEA_BUFFER_FLAG_ORDERED))
			total += snap_deliver(pb, buf);
		ret = snap_report_lost(pb, buf);
		if (ret && !err)
			err = ret;
	}
	return err ? pea_err(err) : total;
}

__u64 pea_buffer__snapshot_horizon(const struct pea_buffer *pb)
{
	return pb ? pb->snap_horizon : 0;
}
