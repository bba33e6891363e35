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
static struct snap_walk snap_walk(const struct pea_cpu_buf *buf, __u64 avail)
{
	const char *copy = buf->snap_buf;
	struct snap_walk w = { 0, 0 };

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
			   hdr.size != sizeof(hdr) + 2 * sizeof(__u64)) {
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
	struct snap_walk w = snap_walk(buf, buf->snap_len);
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

	for (i = 0; i < pb->cnt; i++) {
		buf = &pb->bufs[i];
		total += snap_deliver(pb, buf);
		ret = snap_report_lost(pb, buf);
		if (ret && !err)
			err = ret;
	}
	return err ? pea_err(err) : total;
}
