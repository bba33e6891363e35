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
 * A snapshot pauses the ring so that producers stop writing, copies that
 * window, resumes, and only then walks and delivers the copy, so the
 * producers are held up for one memcpy of the ring at most.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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

static int snapshot_one(struct pea_buffer *pb, struct pea_cpu_buf *buf)
{
	struct pea_ring *ring = &buf->ring;
	size_t raw_off = sizeof(struct perf_event_header) +
			 pea_sample_raw_offset(ring->sample_type) +
			 PEA_RAW_SIZE_LEN;
	__u64 size = ring->data_size, head, head2, avail, moved, keep;
	bool pause = !buf->user_paused;
	struct snap_walk w;
	int err, delivered = 0;
	size_t i;

	err = snap_alloc(pb, buf);
	if (err)
		return err;

	if (pause && ioctl(buf->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1) < 0)
		return -errno;
	head = __atomic_load_n(&ring->page->data_head, __ATOMIC_ACQUIRE);
	/* Bytes ever written, as the head went down from 0; one ring at most. */
	avail = -head;
	if (avail > size)
		avail = size;
	pea_ring_copy(ring, head, buf->snap_buf, avail);
	/*
	 * A writer that reserved space before the pause took effect may
	 * have published since: what it wrote, [head2, head), lies in the
	 * same bytes as the top (head - head2) of the window.
	 */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	head2 = __atomic_load_n(&ring->page->data_head, __ATOMIC_ACQUIRE);
	if (pause && ioctl(buf->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0) < 0)
		err = -errno;

	moved = head - head2;
	keep = moved >= size ? 0 : size - moved;
	if (keep < avail)
		avail = keep;
	w = snap_walk(buf, avail);

	/* Oldest first: the walk went from the newest. */
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

	if (!err)
		err = snap_report_lost(pb, buf);
	else
		snap_report_lost(pb, buf);
	return err ? err : delivered;
}

int pea_buffer__snapshot(struct pea_buffer *pb)
{
	int total = 0, first_err = 0, ret;
	size_t i;

	if (!pb || !(pb->flags & PEA_BUFFER_FLAG_OVERWRITE))
		return pea_err(-EINVAL);
	for (i = 0; i < pb->cnt; i++) {
		ret = snapshot_one(pb, &pb->bufs[i]);
		if (ret < 0) {
			if (!first_err)
				first_err = ret;
			continue;
		}
		total += ret;
	}
	return first_err ? pea_err(first_err) : total;
}
