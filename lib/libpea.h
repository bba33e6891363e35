/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libpea: the user-space consumer library of pea.
 *
 * struct pea_buffer has the shape and the semantics of libbpf's
 * struct perf_buffer, so a consumer written for a BPF perf event array
 * ports to a pea map by renaming perf_buffer__* to pea_buffer__*. The
 * helpers below wrap the /dev/pea ioctls of pea.h (<pea/pea.h> when
 * installed; include/uapi/linux/pea.h in the source tree).
 *
 * Conventions (those of libbpf 1.x): functions returning int return a
 * negative errno on failure and also leave that error, positive, in errno;
 * pea_buffer__new() returns NULL with errno set.
 *
 * A struct pea_buffer is not thread-safe: poll or consume it from one
 * thread at a time. Different buffers of one pea_buffer may be consumed
 * concurrently with pea_buffer__consume_buffer().
 */
#ifndef __LIBPEA_H
#define __LIBPEA_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>
#include <linux/perf_event.h>
/*
 * The ABI header: include/uapi/linux/pea.h in the source tree (found there
 * through -Iinclude/uapi/linux), pea/pea.h beside this file when installed.
 */
#include "pea.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef LIBPEA_API
#define LIBPEA_API __attribute__((visibility("default")))
#endif

/**
 * LIBPEA_OPTS() - declare and initialise an options struct
 * @TYPE: struct name without "struct", e.g. pea_buffer_opts
 * @NAME: variable name
 * @...:  designated initialisers of the fields to set
 *
 * Zeroes the whole struct (padding included) and sets ->sz, as libbpf's
 * LIBBPF_OPTS() does.
 */
#define LIBPEA_OPTS(TYPE, NAME, ...)					\
	struct TYPE NAME = ({						\
		memset(&NAME, 0, sizeof(struct TYPE));			\
		(struct TYPE) {						\
			.sz = sizeof(struct TYPE),			\
			__VA_ARGS__					\
		};							\
	})

struct pea_buffer;

/**
 * typedef pea_buffer_sample_fn - called for each PERF_RECORD_SAMPLE
 * @ctx:  the ctx given to pea_buffer__new()
 * @cpu:  the CPU of the ring the record came from
 * @data: the raw payload (valid only until the callback returns)
 * @size: the raw size as the kernel recorded it: the payload length
 *        rounded so that the record is 8-byte aligned (Linux's behaviour)
 */
typedef void (*pea_buffer_sample_fn)(void *ctx, int cpu, void *data,
				     __u32 size);

/**
 * typedef pea_buffer_lost_fn - called when records were dropped
 * @ctx: the ctx given to pea_buffer__new()
 * @cpu: the CPU of the ring that dropped them
 * @cnt: how many records were dropped since the last report
 */
typedef void (*pea_buffer_lost_fn)(void *ctx, int cpu, __u64 cnt);

/**
 * struct pea_buffer_opts - optional settings of pea_buffer__new()
 * @sz:               sizeof(struct pea_buffer_opts), for compatibility
 * @flags:            PEA_BUFFER_FLAG_* below, and PEA_BUFFER_ADAPTIVE_WAKEUP
 *                    (wake the poller only when it had read everything:
 *                    see PEA_FLAG_ADAPTIVE_WAKEUP in <linux/pea.h>; the
 *                    wake-up fields are then not used; not with
 *                    OVERWRITE); 0 is libbpf's behaviour; unknown bits
 *                    are EINVAL
 * @wakeup_events:    wake the poller every this many records (0 means 1);
 *                    must not be set together with @wakeup_watermark
 * @wakeup_watermark: if non-zero, wake the poller once this many bytes are
 *                    pending instead (attr.watermark = 1)
 * @sample_type:      0 means PERF_SAMPLE_RAW; PERF_SAMPLE_TID,
 *                    PERF_SAMPLE_TIME and PERF_SAMPLE_CPU may be added
 *                    (PERF_SAMPLE_RAW is always implied). The sample
 *                    callback still receives the raw payload only; see
 *                    pea_sample_info() for the other fields.
 * @flush_us:         if non-zero, bound the wake-up latency: a record that
 *                    woke nobody wakes the poller at most this many
 *                    microseconds later (PEA_FLAG_FLUSH in <linux/pea.h>),
 *                    up to PEA_FLUSH_US_MAX; combines with the fields above
 * @busy_poll_us:     if non-zero, pea_buffer__poll() first spins up to this
 *                    many microseconds (at most PEA_BUSY_POLL_US_MAX)
 *                    looking at the rings' data_head, and consumes what
 *                    arrives without sleeping; only then epoll_wait()s.
 *                    Trades consumer CPU for fewer sleeps and wake-up
 *                    interrupts under load; not with AUTO_CALLBACK or
 *                    OVERWRITE (EINVAL)
 */
struct pea_buffer_opts {
	size_t sz;
	__u64 flags;
	int wakeup_events;
	__u32 wakeup_watermark;
	__u64 sample_type;
	__u32 flush_us;
	__u32 busy_poll_us;
};
#define pea_buffer_opts__last_field busy_poll_us
#define PEA_BUSY_POLL_US_MAX	1000000U	/* one second */

/* pea_buffer_opts.flags */
#define PEA_BUFFER_ADAPTIVE_WAKEUP	PEA_FLAG_ADAPTIVE_WAKEUP

/*
 * struct pea_buffer_opts.flags
 *
 * PEA_BUFFER_FLAG_AUTO_CALLBACK: the callbacks run on a thread of the
 * library as records arrive (the PERFBUF_FLAG_AUTO_CALLBACK extension of
 * other perf buffer implementations). pea_buffer__poll(), __consume() and
 * __consume_buffer() are refused with -EINVAL in this mode, since the
 * thread owns the rings. The thread wakes on the rings' wake-ups (as set
 * by wakeup_events or wakeup_watermark) and at least every 100 ms to
 * report drops published only through the lost hint. The callbacks of
 * one buffer never run concurrently with each other. pea_buffer__free()
 * stops the thread after one last pass that delivers every record
 * published before the call, then joins it; it must not be called from a
 * callback. All signals are blocked on the thread.
 *
 * PEA_BUFFER_FLAG_OVERWRITE: a flight recorder. The events are opened
 * with attr.write_backward and mapped read-only, so the producers never
 * wait for the reader: the newest records overwrite the oldest. Nothing
 * is consumed; pea_buffer__snapshot() delivers the newest records of each
 * ring. pea_buffer__poll(), __consume() and __consume_buffer() are
 * refused with -EINVAL. Cannot be combined with AUTO_CALLBACK (EINVAL).
 *
 * PEA_BUFFER_FLAG_ORDERED: pea_buffer__poll() and __consume() deliver the
 * records of all CPUs as one stream in non-decreasing time order
 * (CLOCK_MONOTONIC, as clock_gettime() reads it). The events are opened
 * with PEA_FLAG_ORDERED, PERF_SAMPLE_TIME added to the sample type
 * (pea_sample_info() reads it), use_clockid with CLOCK_MONOTONIC and
 * sample_id_all. A record is delivered as soon as every other ring is
 * proven to hold nothing older (see <linux/pea.h>): no window, and an
 * idle CPU holds nothing back. Lost records are reported at their place
 * in the stream; drops that never made it into a ring (it stayed full)
 * are reported when their ring has been read to the end. A paused ring
 * and the ring of an offline CPU have no writer, so they never hold the
 * stream; a writer in the middle of a record does, for that record, and
 * pea_buffer__poll() then waits at most a millisecond before it looks
 * again. A consumer that falls behind only makes the producers drop (and
 * report) records, as without the flag. Equal times on different CPUs
 * come in CPU order. pea_buffer__consume_buffer() is refused (-EINVAL).
 * Not with AUTO_CALLBACK (EINVAL): its thread drains each ring as it
 * wakes and could not hold a record back for the others. With OVERWRITE
 * the snapshot is ordered across CPUs after a horizon (see
 * pea_buffer__snapshot()); the events then carry the time but not
 * PEA_FLAG_ORDERED, since a snapshot pauses the rings anyway.
 */
#define PEA_BUFFER_FLAG_AUTO_CALLBACK	(1ULL << 0)
#define PEA_BUFFER_FLAG_OVERWRITE	(1ULL << 1)
#define PEA_BUFFER_FLAG_ORDERED		(1ULL << 2)
#define PEA_BUFFER_FLAGS		(PEA_BUFFER_FLAG_AUTO_CALLBACK | \
					 PEA_BUFFER_FLAG_OVERWRITE | \
					 PEA_BUFFER_FLAG_ORDERED)

/**
 * pea_buffer__new() - create a consumer for a pea map
 * @map_fd:    fd of a pea map (from pea_map_create())
 * @page_cnt:  data pages per CPU ring; a power of two
 * @sample_cb: called for each sample record; may be NULL
 * @lost_cb:   called when records were lost; may be NULL
 * @ctx:       passed to both callbacks
 * @opts:      optional settings; may be NULL
 *
 * Opens one output event per online CPU whose number is below the map's
 * max_entries, maps its ring ((1 + @page_cnt) pages), enables it, stores
 * it in the map at key = CPU and adds it to an epoll instance.
 *
 * Return: a new pea_buffer, or NULL with errno set (EINVAL for a bad
 * @page_cnt or @opts; the errno of the failing call otherwise). On failure
 * nothing is left behind: map slots already filled are cleared again.
 */
LIBPEA_API struct pea_buffer *
pea_buffer__new(int map_fd, size_t page_cnt, pea_buffer_sample_fn sample_cb,
		pea_buffer_lost_fn lost_cb, void *ctx,
		const struct pea_buffer_opts *opts);

/**
 * pea_buffer__free() - release a pea_buffer
 * @pb: the buffer; NULL (or an error pointer) is a no-op
 *
 * Clears the map slots it filled, disables, unmaps and closes every event,
 * and closes the epoll instance. Unread records are discarded unreported,
 * except in AUTO_CALLBACK mode, where the library thread first delivers
 * everything published before the call, then exits and is joined.
 */
LIBPEA_API void pea_buffer__free(struct pea_buffer *pb);

/**
 * pea_buffer__epoll_fd() - the epoll fd watching all the rings
 * @pb: the buffer
 *
 * The fd may be added to an outer epoll set or poll()ed; it becomes
 * readable when a ring has pending records (level-triggered).
 *
 * Return: the epoll fd.
 */
LIBPEA_API int pea_buffer__epoll_fd(const struct pea_buffer *pb);

/**
 * pea_buffer__poll() - wait for records and consume the ready rings
 * @pb:         the buffer
 * @timeout_ms: as epoll_wait(): -1 waits forever, 0 does not wait
 *
 * Waits until at least one ring is readable or @timeout_ms elapses, then
 * drains every readable ring, calling the callbacks, and reports drops
 * that the kernel could not put in the ring as a PERF_RECORD_LOST.
 *
 * Return: the number of rings consumed (0 on timeout), or a negative
 * errno: -EINTR if a signal interrupted the wait, -EINVAL for a malformed
 * or unexpected record (or a buffer in AUTO_CALLBACK or OVERWRITE mode),
 * the first error met otherwise.
 */
LIBPEA_API int pea_buffer__poll(struct pea_buffer *pb, int timeout_ms);

/**
 * pea_buffer__consume() - drain every ring without waiting
 * @pb: the buffer
 *
 * Return: 0, or the first negative errno met (rings after the failing one
 * are left unread); -EINVAL in AUTO_CALLBACK or OVERWRITE mode.
 */
LIBPEA_API int pea_buffer__consume(struct pea_buffer *pb);

/**
 * pea_buffer__consume_buffer() - drain one ring without waiting
 * @pb:      the buffer
 * @buf_idx: index of the ring, below pea_buffer__buffer_cnt()
 *
 * Return: 0, -EINVAL if @buf_idx is out of range (as libbpf) or in
 * AUTO_CALLBACK or OVERWRITE mode, or a negative errno from reading the
 * ring.
 */
LIBPEA_API int pea_buffer__consume_buffer(struct pea_buffer *pb,
					  size_t buf_idx);

/**
 * pea_buffer__buffer_cnt() - number of rings (one per CPU used)
 * @pb: the buffer
 *
 * Return: the number of rings; ring indexes run from 0 to this minus one.
 */
LIBPEA_API size_t pea_buffer__buffer_cnt(const struct pea_buffer *pb);

/**
 * pea_buffer__buffer_fd() - the event fd of one ring
 * @pb:      the buffer
 * @buf_idx: index of the ring
 *
 * Return: the fd, or -EINVAL if @buf_idx is out of range.
 */
LIBPEA_API int pea_buffer__buffer_fd(const struct pea_buffer *pb,
				     size_t buf_idx);

/**
 * pea_buffer__buffer() - the raw mapping of one ring
 * @pb:       the buffer
 * @buf_idx:  index of the ring
 * @buf:      set to the start of the mapping: the
 *            struct perf_event_mmap_page, followed by the data pages
 * @buf_size: set to the size of the data area (page_cnt * page size), as
 *            libbpf's perf_buffer__buffer() reports it
 *
 * For custom readers; follow the perf protocol when touching the control
 * page (acquire-load data_head, release-store data_tail).
 *
 * Return: 0, or -EINVAL if @buf_idx is out of range.
 */
LIBPEA_API int pea_buffer__buffer(struct pea_buffer *pb, int buf_idx,
				  void **buf, size_t *buf_size);

/**
 * pea_buffer__buffer_cpu() - the CPU a ring is bound to
 * @pb:      the buffer
 * @buf_idx: index of the ring
 *
 * Return: the CPU number, or -EINVAL if @buf_idx is out of range.
 */
LIBPEA_API int pea_buffer__buffer_cpu(const struct pea_buffer *pb,
				      size_t buf_idx);

/**
 * pea_buffer__lost() - total drops reported so far on one ring
 * @pb:      the buffer
 * @buf_idx: index of the ring
 * @lost:    set to the sum of all counts passed to the lost callback for
 *           this ring (counted even when no lost callback was given), from
 *           PERF_RECORD_LOST records and from PEA_EVENT_IOC_TAKE_LOST
 *
 * Return: 0, or -EINVAL if @buf_idx is out of range or @lost is NULL.
 */
LIBPEA_API int pea_buffer__lost(const struct pea_buffer *pb, size_t buf_idx,
				__u64 *lost);

/**
 * pea_buffer__pause() - pause or resume the output into one ring
 * @pb:      the buffer
 * @buf_idx: index of the ring
 * @pause:   true to pause, false to resume
 *
 * PERF_EVENT_IOC_PAUSE_OUTPUT on the ring's event. While a ring is paused
 * its producers' records are dropped and counted lost (as in Linux), and
 * reported as usual once it is resumed. A paused ring can still be read.
 *
 * Return: 0, -EINVAL if @buf_idx is out of range, or the ioctl's -errno.
 */
LIBPEA_API int pea_buffer__pause(struct pea_buffer *pb, size_t buf_idx,
				 bool pause);

/**
 * pea_buffer__snapshot() - deliver the newest records of every ring
 * @pb: a buffer created with PEA_BUFFER_FLAG_OVERWRITE
 *
 * Pauses the output of every ring (PERF_EVENT_IOC_PAUSE_OUTPUT; records
 * produced meanwhile are dropped and counted lost), waits until writers
 * already inside pea_output() are done (membarrier(MEMBARRIER_CMD_GLOBAL),
 * an RCU grace period: pea's writers run with preemption disabled),
 * copies the whole records found from each data_head over at most one
 * ring's worth of bytes, resumes the output (of rings pea_buffer__pause()
 * did not pause), then calls the sample callback for each copied record,
 * ring by ring, OLDEST FIRST, so the callbacks see each CPU's records in
 * the order they were written. Nothing is consumed: the next snapshot
 * delivers the records still in the ring again, together with newer ones.
 *
 * No torn record is delivered: the walk stops at the first header that
 * cannot be valid (a size that is not a multiple of 8, a record reaching
 * past what was written or past the ring, a type other than SAMPLE and
 * LOST, a SAMPLE whose raw size does not match its header), and should
 * the wait be unavailable (membarrier refused under nohz_full or by
 * seccomp), records that a writer in flight overwrote before the copy
 * ended are still left out when data_head shows it published meanwhile.
 * PERF_RECORD_LOST records in the ring are not
 * delivered; instead the lost callback gets, per ring, the growth of the
 * event's lost counter (PEA_EVENT_IOC_STATS) since the previous snapshot,
 * which counts every drop exactly once (pea_buffer__lost() sums them).
 *
 * With PEA_BUFFER_FLAG_ORDERED too, the records of all rings come as one
 * stream in non-decreasing time order (equal times in ring order), from a
 * horizon on: a ring that wrapped (its whole records no longer cover every
 * byte written to it) has lost its history before its oldest record, so
 * the horizon is the latest time of the oldest sample still present in
 * each ring that wrapped, 0 if none did (the latest possible time if a
 * ring that wrapped holds no whole sample). Only samples at or after the
 * horizon are delivered, those of every ring: the stream misses no CPU's
 * record newer than the horizon that was in a ring. Equal times at the
 * horizon itself are the one ambiguity (a record overwritten at the very
 * same nanosecond). pea_buffer__snapshot_horizon() returns it.
 *
 * Return: the number of samples delivered, or a negative errno: -EINVAL
 * without PEA_BUFFER_FLAG_OVERWRITE, -ENOMEM, or the first ioctl error
 * (the rings are still all read).
 */
LIBPEA_API int pea_buffer__snapshot(struct pea_buffer *pb);

/**
 * pea_buffer__snapshot_horizon() - the horizon of the last ordered snapshot
 * @pb: a buffer created with PEA_BUFFER_FLAG_OVERWRITE and _ORDERED
 *
 * Return: the CLOCK_MONOTONIC time (ns) from which the last
 * pea_buffer__snapshot() delivered every ring's records, 0 if no ring had
 * wrapped (everything was delivered), or before any snapshot, for other
 * buffers or NULL.
 */
LIBPEA_API __u64 pea_buffer__snapshot_horizon(const struct pea_buffer *pb);

/**
 * struct pea_sample_info - the fields of a sample other than the payload
 * @pid:  PERF_SAMPLE_TID: process id of the writer's context
 * @tid:  PERF_SAMPLE_TID: thread id
 * @time: PERF_SAMPLE_TIME: the perf clock (local_clock()) when written;
 *        CLOCK_MONOTONIC with PEA_BUFFER_FLAG_ORDERED
 * @cpu:  PERF_SAMPLE_CPU: the CPU that wrote the record
 * @reserved: zero
 *
 * Fields whose PERF_SAMPLE_* bit is not selected are set to 0.
 */
struct pea_sample_info {
	__u32 pid;
	__u32 tid;
	__u64 time;
	__u32 cpu;
	__u32 reserved;
};

/**
 * pea_sample_info() - read the non-payload fields of a sample
 * @data:        the data pointer a pea_buffer_sample_fn received, used
 *               inside that callback only
 * @sample_type: the sample_type of the buffer (pea_buffer_opts.sample_type;
 *               0 means PERF_SAMPLE_RAW)
 * @info:        filled with the fields @sample_type selects
 *
 * The sample callback gets the raw payload, as with libbpf; the fields
 * PERF_SAMPLE_TID, _TIME and _CPU sit just before it in the same record,
 * which libpea always hands over contiguous, and this reads them back.
 *
 * Return: 0, or -EINVAL for a NULL argument or unsupported sample bits.
 */
LIBPEA_API int pea_sample_info(const void *data, __u64 sample_type,
			       struct pea_sample_info *info);

/**
 * pea_open_dev() - open the pea control device
 *
 * Return: an fd for PEA_DEVICE_PATH opened O_RDWR | O_CLOEXEC, or -errno.
 */
LIBPEA_API int pea_open_dev(void);

/**
 * pea_map_create() - create a pea map (a perf event array)
 * @name:        optional name ([A-Za-z0-9_.], shorter than
 *               PEA_OBJ_NAME_LEN) by which kernel producers find the map;
 *               NULL or "" for none
 * @max_entries: number of slots, 1 .. PEA_MAX_ENTRIES
 * @map_flags:   PEA_F_* flags
 *
 * Opens and closes /dev/pea internally. The map fd is O_CLOEXEC.
 *
 * Return: the map fd, or -errno (-EINVAL for a name too long).
 */
LIBPEA_API int pea_map_create(const char *name, __u32 max_entries,
			      __u32 map_flags);

/**
 * pea_map_get_info() - read a map's parameters
 * @map_fd: the map
 * @info:   filled by PEA_MAP_IOC_INFO (bpf_handle: the handle BPF
 *          programs name the map by with pea's kfunc, for a map created
 *          with PEA_F_BPF_WRITE; 0 from a module older than it)
 *
 * Return: 0 or -errno.
 */
LIBPEA_API int pea_map_get_info(int map_fd, struct pea_map_info *info);

/**
 * pea_event_open_output() - open an output event bound to one CPU
 * @cpu:  the CPU
 * @attr: a perf_event_attr describing an output event (type
 *        PERF_TYPE_SOFTWARE, config PERF_COUNT_SW_BPF_OUTPUT, ...)
 *
 * Opens and closes /dev/pea internally. The event fd is O_CLOEXEC.
 *
 * Return: the event fd, or -errno.
 */
LIBPEA_API int pea_event_open_output(int cpu,
				     const struct perf_event_attr *attr);

/**
 * pea_map_update() - store an event in a map slot
 * @map_fd:   the map
 * @key:      the slot
 * @event_fd: an output event fd
 *
 * Return: 0 or -errno.
 */
LIBPEA_API int pea_map_update(int map_fd, __u32 key, int event_fd);

/**
 * pea_map_delete() - clear a map slot
 * @map_fd: the map
 * @key:    the slot
 *
 * Return: 0 or -errno from the module (an empty slot gives -ENOENT, as a
 * BPF perf event array does).
 */
LIBPEA_API int pea_map_delete(int map_fd, __u32 key);

/* ------------------------------------------------------------------ */
/* Counters (lib/pea_counter.c)                                        */
/* ------------------------------------------------------------------ */

/**
 * struct pea_counter_value - one reading of a counter
 * @value:   the count (since creation or the last reset)
 * @enabled: ns the counter was enabled (time_enabled)
 * @running: ns it was counting on its PMU (time_running); less than
 *           @enabled when the PMU multiplexed it, 0 if it never ran
 */
struct pea_counter_value {
	__u64 value;
	__u64 enabled;
	__u64 running;
};

/**
 * pea_counter_open() - open a counter bound to one CPU
 * @cpu:  the CPU
 * @attr: what to count: any perf type and config (not a BPF_OUTPUT
 *        event); see <linux/pea.h> for the honoured fields
 *
 * The counter is opened with @attr's read_format plus
 * PERF_FORMAT_TOTAL_TIME_ENABLED and PERF_FORMAT_TOTAL_TIME_RUNNING, which
 * pea_counter_read() relies on. Opens and closes /dev/pea internally; the
 * fd is O_CLOEXEC.
 *
 * Return: the counter fd, or -errno: the module's (see the README's
 * "Counters" section), e.g. -ENOENT when no PMU provides the event (a
 * hardware event in a guest without a virtual PMU), -EACCES for
 * perf_event_paranoid, -ENODEV for an offline CPU.
 */
LIBPEA_API int pea_counter_open(int cpu, const struct perf_event_attr *attr);

/**
 * pea_counter_read() - read a counter with read(2)
 * @fd:  a counter opened by pea_counter_open()
 * @val: filled with the value and times
 *
 * Return: 0, -ENODATA for a pinned counter its PMU could not schedule
 * (read(2) returns end of file, as perf), or -errno.
 */
LIBPEA_API int pea_counter_read(int fd, struct pea_counter_value *val);

/**
 * pea_counter_mmap() - map a counter's control page
 * @fd: a counter fd
 *
 * Return: the page (a struct perf_event_mmap_page, read-only), or NULL
 * with errno set.
 */
LIBPEA_API void *pea_counter_mmap(int fd);

/**
 * pea_counter_munmap() - unmap a page from pea_counter_mmap()
 * @page: the page; NULL is a no-op
 */
LIBPEA_API void pea_counter_munmap(void *page);

/**
 * pea_counter_read_page() - read a counter from its control page
 * @page:  from pea_counter_mmap()
 * @val:   filled with the value and times last published
 * @stamp: if not NULL, set to the CLOCK_MONOTONIC time (ns) they were
 *         published (PEA_PAGE_COUNTER_TIME)
 *
 * No system call: the counter's CPU publishes into the page on every read
 * and every counter_refresh_ms, under the perf seqcount, which this reads
 * with acquire ordering and retries while an update is in progress.
 *
 * Return: 0, or -EINVAL if @page or @val is NULL.
 */
LIBPEA_API int pea_counter_read_page(const void *page,
				     struct pea_counter_value *val,
				     __u64 *stamp);

/**
 * pea_counter_scale() - normalise a multiplexed count
 * @val: a reading (or the difference of two readings, field by field)
 *
 * Return: value * enabled / running computed in 128 bits and rounded
 * down; value itself when running == enabled; 0 when running is 0 (the
 * counter never ran); UINT64_MAX if the result does not fit in 64 bits.
 */
LIBPEA_API __u64 pea_counter_scale(const struct pea_counter_value *val);

/* PERF_EVENT_IOC_ENABLE, _DISABLE and _RESET on one counter: 0 or -errno. */
LIBPEA_API int pea_counter_enable(int fd);
LIBPEA_API int pea_counter_disable(int fd);
LIBPEA_API int pea_counter_reset(int fd);

struct pea_counters;

/**
 * struct pea_counters_opts - optional settings of pea_counters__new()
 * @sz:      sizeof(struct pea_counters_opts)
 * @mmap:    also map every counter's control page, for
 *           pea_counters__read_page()
 * @err_cpu: out: on failure, the CPU whose counter failed (-1 if none)
 */
struct pea_counters_opts {
	size_t sz;
	bool mmap;
	int err_cpu;
};
#define pea_counters_opts__last_field err_cpu

/**
 * pea_counters__new() - open one counter per CPU
 * @attr: what to count (as pea_counter_open())
 * @cpus: a CPU list such as "0-3,8" (sysfs format), or NULL for every
 *        online CPU
 * @opts: optional settings; may be NULL
 *
 * The counters are opened in CPU order with @attr as given (with
 * attr.disabled they start disabled: see pea_counters__enable()).
 *
 * Return: the set, or NULL with errno set (EINVAL for a malformed @cpus,
 * else the error of the first counter that failed; @opts->err_cpu names
 * its CPU). Nothing is left open on failure.
 */
LIBPEA_API struct pea_counters *
pea_counters__new(const struct perf_event_attr *attr, const char *cpus,
		  struct pea_counters_opts *opts);

/**
 * pea_counters__free() - close every counter and free the set
 * @cs: the set; NULL is a no-op
 */
LIBPEA_API void pea_counters__free(struct pea_counters *cs);

/**
 * pea_counters__cnt() - the number of counters (CPUs) in the set
 * @cs: the set
 *
 * Return: the count; counter indexes run from 0 to this minus one.
 */
LIBPEA_API size_t pea_counters__cnt(const struct pea_counters *cs);

/**
 * pea_counters__cpu() - the CPU a counter of the set is bound to
 * @cs: the set
 * @i:  the counter's index
 *
 * Return: the CPU, or -EINVAL for a bad @i.
 */
LIBPEA_API int pea_counters__cpu(const struct pea_counters *cs, size_t i);

/**
 * pea_counters__fd() - the fd of a counter of the set
 * @cs: the set
 * @i:  the counter's index
 *
 * Return: the fd, or -EINVAL for a bad @i.
 */
LIBPEA_API int pea_counters__fd(const struct pea_counters *cs, size_t i);

/**
 * pea_counters__read() - read counter @i with read(2)
 * @cs:  the set
 * @i:   the counter's index, below pea_counters__cnt()
 * @val: filled as pea_counter_read()
 *
 * Return: 0, -EINVAL for a bad @i, or the error of pea_counter_read().
 */
LIBPEA_API int pea_counters__read(struct pea_counters *cs, size_t i,
				  struct pea_counter_value *val);

/**
 * pea_counters__read_page() - read counter @i from its control page
 * @cs:    the set, created with opts.mmap
 * @i:     the counter's index
 * @val:   filled as pea_counter_read_page()
 * @stamp: as pea_counter_read_page(); may be NULL
 *
 * Return: 0, or -EINVAL for a bad @i or a set without mappings.
 */
LIBPEA_API int pea_counters__read_page(struct pea_counters *cs, size_t i,
				       struct pea_counter_value *val,
				       __u64 *stamp);

/**
 * pea_counters__sum() - read every counter and add them up
 * @cs:    the set
 * @total: the sums of the values, of the enabled and of the running
 *         times, which pea_counter_scale() turns into a system-wide
 *         estimate as perf stat -a does
 *
 * Counters that read end of file (a pinned counter that failed) add
 * nothing.
 *
 * Return: 0, or the first read error.
 */
LIBPEA_API int pea_counters__sum(struct pea_counters *cs,
				 struct pea_counter_value *total);

/* ENABLE, DISABLE or RESET every counter: 0 or the first -errno. */
LIBPEA_API int pea_counters__enable(struct pea_counters *cs);
LIBPEA_API int pea_counters__disable(struct pea_counters *cs);
LIBPEA_API int pea_counters__reset(struct pea_counters *cs);

/**
 * pea_counters__store() - put every counter in a map at key = its CPU
 * @cs:     the set
 * @map_fd: a pea map, for kernel readers (pea_read_value())
 *
 * Return: 0 or the first -errno (E2BIG: a CPU past the map's size).
 */
LIBPEA_API int pea_counters__store(struct pea_counters *cs, int map_fd);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* __LIBPEA_H */
