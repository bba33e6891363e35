/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libpea internals: the perf ring reader and small helpers, shared by the
 * library's own files and by tests that link them directly. Not installed,
 * not part of the public API.
 */
#ifndef __LIBPEA_INTERNAL_H
#define __LIBPEA_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <linux/perf_event.h>

#include <sys/epoll.h>

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
 * pea_ring_ready() - whether a ring has records or hinted drops to read
 * @ring: the ring
 *
 * Return: true if data_head moved past data_tail or the lost hint is set.
 */
PEA_HIDDEN bool pea_ring_ready(const struct pea_ring *ring);

/**
 * pea_ring_release() - free what the reader allocated for a ring
 * @ring: the ring
 */
PEA_HIDDEN void pea_ring_release(struct pea_ring *ring);

/**
 * pea_ring_grow_scratch() - make the ring's scratch buffer hold @size bytes
 * @ring: the ring (its scratch holds records that wrap at the ring's end)
 * @size: bytes needed
 *
 * Return: 0 or -ENOMEM.
 */
PEA_HIDDEN int pea_ring_grow_scratch(struct pea_ring *ring, size_t size);

/**
 * pea_ring_deliver_lost() - count a PERF_RECORD_LOST and report it
 * @ring:     the ring it came from
 * @cbs:      the callbacks (@cbs->lost_cb may be NULL)
 * @body:     the record after its header
 * @body_len: bytes of @body
 *
 * Return: 0, or -EINVAL if @body is too short.
 */
PEA_HIDDEN int pea_ring_deliver_lost(struct pea_ring *ring,
				     const struct pea_ring_cbs *cbs,
				     const char *body, size_t body_len);

/**
 * pea_ring_deliver_sample() - hand a sample's raw payload to @sample_cb
 * @rec:       the whole record, contiguous
 * @rec_size:  its header's size
 * @raw_off:   where the raw size sits: header plus pea_sample_raw_offset()
 * @sample_cb: may be NULL
 * @ctx:       passed to @sample_cb
 * @cpu:       passed to @sample_cb
 *
 * Inline: the per-record loop of pea_ring_read() passes what it loaded
 * once, outside the loop.
 *
 * Return: 0, or -EINVAL if the raw size does not fit the record.
 */
static inline int pea_ring_deliver_sample(const char *rec, __u32 rec_size,
					  size_t raw_off,
					  pea_buffer_sample_fn sample_cb,
					  void *ctx, int cpu)
{
	__u32 raw_size;

	if (rec_size < raw_off + PEA_RAW_SIZE_LEN)
		return -EINVAL;
	__builtin_memcpy(&raw_size, rec + raw_off, sizeof(raw_size));
	if (raw_size > rec_size - raw_off - PEA_RAW_SIZE_LEN)
		return -EINVAL;
	if (sample_cb)
		sample_cb(ctx, cpu, (void *)(rec + raw_off + PEA_RAW_SIZE_LEN),
			  raw_size);
	return 0;
}

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

/* ---- struct pea_buffer, shared by libpea.c, pea_auto.c, pea_snapshot.c ---- */

/**
 * struct pea_cpu_buf - one CPU's ring of a pea_buffer
 * @ring:        the reader's view of the ring
 * @base:        the mapping: control page + data
 * @fd:          the output event
 * @cpu:         the CPU it is bound to
 * @map_key:     the map slot it fills
 * @in_map:      @map_key holds our event
 * @user_paused: pea_buffer__pause() paused it (a snapshot leaves it so)
 * @snap_lost:   OVERWRITE: the event's lost counter at the last snapshot
 * @snap_buf:    OVERWRITE: copy of the ring taken by a snapshot
 * @snap_offs:   OVERWRITE: offsets of the whole records in @snap_buf
 * @snap_len:    OVERWRITE: bytes of @snap_buf that may hold whole records
 * @snap_paused: OVERWRITE: this snapshot paused the ring (and resumes it)
 * @snap_written: OVERWRITE: bytes ever written when the copy was taken
 * @snap_n:      OVERWRITE + ORDERED: whole records found in @snap_buf
 * @snap_next:   OVERWRITE + ORDERED: the merge's next record (an index
 *               into @snap_offs, counting down to the newest), or 0
 * @o_pos:       ORDERED: bytes consumed (data_tail once stored)
 * @o_head:      ORDERED: data_head as last loaded
 * @o_quiet:     ORDERED: found quiet since the last load of data_head
 * @o_done:      ORDERED: delivered a record in this call
 * @o_peeked:    ORDERED: @o_hdr and @o_time hold the record at @o_pos
 * @o_hdr:       ORDERED: the header of the first unread record
 * @o_time:      ORDERED: its time
 * @o_raw_off:   ORDERED: where a sample's raw size sits (header included),
 *               set by the first read (0 before)
 * @o_t_off:     ORDERED: where a sample's time sits, set with @o_raw_off
 */
struct pea_cpu_buf {
	struct pea_ring ring;
	void *base;
	int fd;
	int cpu;
	__u32 map_key;
	bool in_map;
	bool user_paused;
	__u64 snap_lost;
	void *snap_buf;
	__u32 *snap_offs;
	__u64 snap_len;
	bool snap_paused;
	__u64 snap_written;
	size_t snap_n;
	size_t snap_next;
	__u64 o_pos;
	__u64 o_head;
	bool o_quiet;
	bool o_done;
	bool o_peeked;
	struct perf_event_header o_hdr;
	__u64 o_time;
	__u32 o_raw_off;
	__u32 o_t_off;
};

/**
 * struct pea_heap_ent - an entry of the ordered merge's heap
 * @time: the time of the ring's first unread record
 * @idx:  the ring, an index into the buffer's rings
 */
struct pea_heap_ent {
	__u64 time;
	size_t idx;
};

/**
 * struct pea_buffer - what pea_buffer__new() returns
 * @sample_cb:   the sample callback
 * @lost_cb:     the lost callback
 * @ctx:         their argument
 * @flags:       PEA_BUFFER_FLAG_*
 * @page_size:   the system page size
 * @data_size:   data bytes of each ring (page_cnt * page_size)
 * @mmap_size:   bytes of each mapping (page_size + data_size)
 * @open_flags:  PEA_FLAG_ADAPTIVE_WAKEUP or 0, for each event
 * @flush_us:    PEA_FLAG_FLUSH's bound for each event, 0 for none
 * @busy_poll_ns: pea_buffer__poll() spins this long before sleeping
 * @map_fd:      the map the rings are stored in
 * @epoll_fd:    watches every ring (and @stop_fd in AUTO_CALLBACK mode)
 * @bufs:        the rings
 * @cnt:         entries of @bufs in use
 * @events:      epoll_wait()'s array
 * @events_cnt:  its length
 * @stop_fd:     AUTO_CALLBACK: eventfd that tells the thread to stop
 * @thread:      AUTO_CALLBACK: the library thread
 * @thread_on:   @thread was started and not yet joined
 * @o_held:      ORDERED: the last read left records held back or saw a
 *               writer in flight, so the next poll must come soon
 * @o_heap:      ORDERED: the merge's heap, one entry per ring
 * @snap_horizon: OVERWRITE + ORDERED: the horizon of the last snapshot
 */
struct pea_buffer {
	pea_buffer_sample_fn sample_cb;
	pea_buffer_lost_fn lost_cb;
	void *ctx;
	__u64 flags;

	size_t page_size;
	size_t data_size;
	size_t mmap_size;
	__u32 open_flags;
	__u32 flush_us;
	__u64 busy_poll_ns;
	int map_fd;
	int epoll_fd;

	struct pea_cpu_buf *bufs;
	size_t cnt;
	struct epoll_event *events;
	int events_cnt;

	int stop_fd;
	pthread_t thread;
	bool thread_on;
	bool o_held;
	__u64 snap_horizon;
	struct pea_heap_ent *o_heap;
};

/* The epoll key of @stop_fd: never a ring index. */
#define PEA_AUTO_STOP_KEY	UINT64_MAX

/* As libbpf_err(): keep errno in step with a negative return. */
static inline int pea_err(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

/**
 * pea_cpu_buf_consume() - drain one ring and collect hinted drops
 * @pb:  the buffer
 * @buf: one of its rings
 *
 * Return: 0 or a negative errno from pea_ring_read() or the lost check.
 */
PEA_HIDDEN int pea_cpu_buf_consume(struct pea_buffer *pb,
				   struct pea_cpu_buf *buf);

/**
 * pea_cpu_buf_check_lost() - report drops published only by the lost hint
 * @pb:  the buffer
 * @buf: one of its rings
 *
 * Return: 0 or the -errno of PEA_EVENT_IOC_TAKE_LOST.
 */
PEA_HIDDEN int pea_cpu_buf_check_lost(struct pea_buffer *pb,
				      struct pea_cpu_buf *buf);

/**
 * pea_ordered_consume() - deliver every ring's records in time order
 * @pb: a buffer with PEA_BUFFER_FLAG_ORDERED
 *
 * Return: the number of rings that delivered a record, or a negative
 * errno as pea_ring_read().
 */
PEA_HIDDEN int pea_ordered_consume(struct pea_buffer *pb);

/**
 * pea_auto_start() - start the AUTO_CALLBACK thread
 * @pb: a buffer whose rings are all set up
 *
 * Return: 0 or a negative errno.
 */
PEA_HIDDEN int pea_auto_start(struct pea_buffer *pb);

/**
 * pea_auto_stop() - stop and join the AUTO_CALLBACK thread, if running
 * @pb: the buffer
 *
 * The thread delivers what is published in the rings before it exits.
 */
PEA_HIDDEN void pea_auto_stop(struct pea_buffer *pb);

/**
 * pea_snapshot_release() - free what snapshots allocated for a ring
 * @buf: the ring
 */
PEA_HIDDEN void pea_snapshot_release(struct pea_cpu_buf *buf);

/**
 * pea_ring_copy() - copy bytes out of a ring, wrapping at its end
 * @ring: the ring
 * @pos:  ring position (masked with data_size - 1)
 * @dst:  destination
 * @len:  bytes, at most data_size
 */
PEA_HIDDEN void pea_ring_copy(const struct pea_ring *ring, __u64 pos,
			      void *dst, size_t len);

#endif /* __LIBPEA_INTERNAL_H */
