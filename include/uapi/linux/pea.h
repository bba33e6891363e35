/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pea: per-CPU perf-protocol ring buffers without BPF.
 *
 * This header is the whole user-space ABI of the pea module. It is shared
 * by the module and by user space (libpea, the selftests, the pea tool).
 *
 * The ABI mirrors two Linux interfaces:
 *   - bpf(BPF_MAP_CREATE) of a BPF_MAP_TYPE_PERF_EVENT_ARRAY and the map
 *     element commands, as ioctls on /dev/pea and on a map fd;
 *   - perf_event_open() of a PERF_TYPE_SOFTWARE/PERF_COUNT_SW_BPF_OUTPUT
 *     event bound to one CPU, as an ioctl on /dev/pea that takes a real
 *     struct perf_event_attr. The event fd then speaks the perf protocol:
 *     mmap of 1 + 2^n pages with a struct perf_event_mmap_page first,
 *     PERF_RECORD_SAMPLE / PERF_RECORD_LOST records, poll/epoll and the
 *     PERF_EVENT_IOC_* ioctls that make sense for an output event.
 */
#ifndef _UAPI_LINUX_PEA_H
#define _UAPI_LINUX_PEA_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/perf_event.h>

#define PEA_DEVICE_PATH		"/dev/pea"
#define PEA_ABI_VERSION		1

#define PEA_IOC_MAGIC		0xEA

/* Map limits. */
#define PEA_MAX_ENTRIES		65536	/* largest max_entries accepted */
#define PEA_OBJ_NAME_LEN	16	/* as BPF_OBJ_NAME_LEN, NUL included */

/* Ring limit: at most this many data pages per event (64 MiB at 4 KiB). */
#define PEA_MAX_RING_PAGES	16384

/* Map flags: the same bit values as the BPF map flags they mirror. */
#define PEA_F_NUMA_NODE		(1U << 2)	/* BPF_F_NUMA_NODE */
#define PEA_F_RDONLY		(1U << 3)	/* BPF_F_RDONLY: fd may only look up */
#define PEA_F_WRONLY		(1U << 4)	/* BPF_F_WRONLY: fd may only update */
#define PEA_F_PRESERVE_ELEMS	(1U << 11)	/* BPF_F_PRESERVE_ELEMS */
/*
 * Beyond Linux: BPF programs may write into the map with pea's kfuncs
 * (docs/kfuncs.md), naming it by its BPF handle (pea_map_info.bpf_handle):
 * a random 64-bit value made when the map is created, known only through
 * the map's fd, as a program in Linux writes only into the maps its
 * loader holds an fd of. A map without the flag has no handle (0), and no
 * program can name it. Who may load a program that calls the kfuncs:
 * what loading that program type needs, and
 * CAP_SYS_ADMIN, which the kernel asks for pea's module BTF fd
 * (BPF_BTF_GET_FD_BY_ID) that the program's kfunc call needs
 * (docs/security.md).
 */
#define PEA_F_BPF_WRITE		(1U << 31)
#define PEA_MAP_FLAGS_MASK	(PEA_F_NUMA_NODE | PEA_F_RDONLY | \
				 PEA_F_WRONLY | PEA_F_PRESERVE_ELEMS | \
				 PEA_F_BPF_WRITE)

/* pea_output() flags: the same layout as bpf_perf_event_output()'s. */
#define PEA_F_INDEX_MASK	0xffffffffULL
#define PEA_F_CURRENT_CPU	PEA_F_INDEX_MASK
#define PEA_F_CTXLEN_MASK	(0xfffffULL << 32)

/* Element update flags, as the BPF ones (perf event arrays take only ANY). */
#define PEA_ANY			0ULL

/**
 * struct pea_map_attr - argument of PEA_IOC_MAP_CREATE
 * @key_size:    must be 4 (a u32 index)
 * @value_size:  must be 4 (an event fd)
 * @max_entries: number of slots, 1 .. PEA_MAX_ENTRIES
 * @map_flags:   PEA_F_* map flags
 * @numa_node:   node for the slot array, used with PEA_F_NUMA_NODE
 * @open_flags:  O_CLOEXEC and/or O_NONBLOCK for the new fd
 * @name:        optional NUL-terminated name ([A-Za-z0-9_.]), unique among
 *               live maps, by which kernel producers find the map
 */
struct pea_map_attr {
	__u32 key_size;
	__u32 value_size;
	__u32 max_entries;
	__u32 map_flags;
	__u32 numa_node;
	__u32 open_flags;
	char name[PEA_OBJ_NAME_LEN];
};

/**
 * struct pea_event_open - argument of PEA_IOC_EVENT_OPEN
 * @attr:  user pointer to a struct perf_event_attr (attr.size as perf)
 * @cpu:   the CPU the event is bound to (pid is always -1: CPU-wide)
 * @flags: PEA_FLAG_FD_CLOEXEC, the wake-up modes below
 *         (PEA_FLAG_ADAPTIVE_WAKEUP, PEA_FLAG_FLUSH) and PEA_FLAG_ORDERED
 * @flush_us: with PEA_FLAG_FLUSH, the latency bound in microseconds
 *         (1 .. PEA_FLUSH_US_MAX); otherwise zero
 * @reserved32: must be zero
 * @reserved: must be zero
 *
 * The attr must describe an output event: type PERF_TYPE_SOFTWARE, config
 * PERF_COUNT_SW_BPF_OUTPUT, sample_type PERF_SAMPLE_RAW optionally with
 * PERF_SAMPLE_TID, PERF_SAMPLE_TIME and PERF_SAMPLE_CPU. Honoured bits:
 * disabled, watermark with wakeup_watermark or wakeup_events,
 * write_backward, use_clockid with clockid CLOCK_MONOTONIC or
 * CLOCK_MONOTONIC_RAW, sample_id_all (see "Ordered delivery");
 * sample_period may be 0 or 1. Anything else is EINVAL.
 */
struct pea_event_open {
	__aligned_u64 attr;
	__s32 cpu;
	__u32 flags;
	__u32 flush_us;
	__u32 reserved32;
	__u64 reserved;
};

#define PEA_FLAG_FD_CLOEXEC	PERF_FLAG_FD_CLOEXEC

/* Sample bits an output event accepts. */
#define PEA_SAMPLE_TYPES	(PERF_SAMPLE_RAW | PERF_SAMPLE_TID | \
				 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

/**
 * struct pea_map_elem - argument of the map element ioctls
 * @key:   slot index
 * @fd:    UPDATE: the event fd to store
 * @flags: UPDATE: PEA_ANY (0); anything else is EINVAL. DELETE and
 *         LOOKUP: 0. Errors come in BPF's order (flags before the key)
 * @id:    LOOKUP: the id of the event in the slot (PERF_EVENT_IOC_ID's)
 * @cpu:   LOOKUP: the CPU that event is bound to; for a counter, the CPU
 *         perf put it on, which a package-wide PMU (uncore, RAPL) chooses
 *         and moves when that CPU goes offline
 * @pad:   zero; anything else is EINVAL, before any other check (as BPF's
 *         unused bpf_attr bytes)
 */
struct pea_map_elem {
	__u32 key;
	__s32 fd;
	__u64 flags;
	__u64 id;
	__s32 cpu;
	__u32 pad;
};

/**
 * struct pea_map_info - filled by PEA_MAP_IOC_INFO
 */
struct pea_map_info {
	__u32 key_size;
	__u32 value_size;
	__u32 max_entries;
	__u32 map_flags;
	__u32 numa_node;
	__u32 nr_used;		/* slots holding an event */
	__u64 id;		/* unique map id */
	char name[PEA_OBJ_NAME_LEN];
	__u64 bpf_handle;	/* PEA_F_BPF_WRITE: the kfuncs' handle; else 0 */
	__u64 reserved[2];	/* zero */
};

/* The size of struct pea_map_info before @bpf_handle (still answered). */
#define PEA_MAP_INFO_SIZE_VER0	48

/**
 * struct pea_event_stats - filled by PEA_EVENT_IOC_STATS
 * @records:      records written since the event was opened
 * @bytes:        bytes of those records (headers included)
 * @lost:         records dropped since the event was opened, for any
 *                reason (ring full, paused, not mapped, larger than the ring)
 * @lost_pending: drops not yet reported, neither by a PERF_RECORD_LOST in
 *                the ring nor taken with PEA_EVENT_IOC_TAKE_LOST
 * @wakeups:      wake-ups raised for pollers
 * @cpu:          the CPU the event is bound to
 * @data_pages:   data pages of the current ring (0: not mapped)
 */
struct pea_event_stats {
	__u64 records;
	__u64 bytes;
	__u64 lost;
	__u64 lost_pending;
	__u64 wakeups;
	__u32 cpu;
	__u32 data_pages;
};

/* ioctls on an open /dev/pea. Both return a new fd. */
#define PEA_IOC_VERSION		_IO(PEA_IOC_MAGIC, 0x00)
#define PEA_IOC_MAP_CREATE	_IOW(PEA_IOC_MAGIC, 0x01, struct pea_map_attr)
#define PEA_IOC_EVENT_OPEN	_IOW(PEA_IOC_MAGIC, 0x02, struct pea_event_open)

/* ioctls on a map fd. */
#define PEA_MAP_IOC_UPDATE	_IOW(PEA_IOC_MAGIC, 0x10, struct pea_map_elem)
#define PEA_MAP_IOC_DELETE	_IOW(PEA_IOC_MAGIC, 0x11, struct pea_map_elem)
#define PEA_MAP_IOC_LOOKUP	_IOWR(PEA_IOC_MAGIC, 0x12, struct pea_map_elem)
#define PEA_MAP_IOC_INFO	_IOR(PEA_IOC_MAGIC, 0x13, struct pea_map_info)

/*
 * ioctls on an event fd: PERF_EVENT_IOC_ENABLE, _DISABLE, _RESET, _ID and
 * _PAUSE_OUTPUT from <linux/perf_event.h>, plus:
 */
#define PEA_EVENT_IOC_STATS	_IOR(PEA_IOC_MAGIC, 0x20, struct pea_event_stats)
/* Take (and clear) the pending lost count; stores a __u64. */
#define PEA_EVENT_IOC_TAKE_LOST	_IOR(PEA_IOC_MAGIC, 0x21, __u64)

/*
 * Beyond Linux: the data page of an event publishes a hint that records
 * were dropped and not yet reported. It sits in the reserved hole of
 * struct perf_event_mmap_page; when it reads non-zero, a consumer calls
 * PEA_EVENT_IOC_TAKE_LOST to collect the exact count.
 */
#define PEA_PAGE_LOST_HINT(pg)	(((__u64 *)(pg)->__reserved)[0])

/* ---- Wake-up modes beyond Linux (struct pea_event_open.flags) ---- */

/*
 * PEA_FLAG_ADAPTIVE_WAKEUP: wake the reader only when it had caught up,
 * as the BPF ring buffer does by default. The writer that publishes
 * data_head raises a wake-up exactly when data_tail equals the data_head
 * it replaced (for a record not nested in another, that is the record's
 * start): a reader still behind is not woken, it will find the record
 * when it next reads. attr.wakeup_events and attr.watermark are then not
 * used for wake-ups. The reader must, after storing data_tail and before
 * sleeping, issue a full barrier and load data_head again (libpea does,
 * with PEA_BUFFER_ADAPTIVE_WAKEUP), or a record published meanwhile may
 * wait for the next wake-up. Not with attr.write_backward (EINVAL); with
 * a read-only mapping data_tail stays 0 and only the first record wakes.
 * Without the flag, wake-ups follow Linux's rules.
 */
#define PEA_FLAG_ADAPTIVE_WAKEUP	(1U << 8)

/*
 * PEA_FLAG_FLUSH: bounded latency. A record that raised no wake-up wakes
 * the reader at most pea_event_open.flush_us microseconds after it was
 * published, however far below the watermark (or wakeup_events) it is.
 * When that time comes, the reader is woken if the ring holds unread
 * records and no earlier wake-up is still unconsumed (EPOLLIN pending);
 * otherwise nothing happens. Records that keep arriving below the
 * watermark thus wake the reader about once per flush_us, never more
 * often. The first record after such a flush (or after the reader caught
 * up) starts the clock: the writer, in any context including NMI, queues
 * an irq_work that arms a per-event hrtimer on the event's CPU, so the
 * write path stays lock-free. Combines with watermark, wakeup_events and
 * PEA_FLAG_ADAPTIVE_WAKEUP; output events only.
 */
#define PEA_FLAG_FLUSH			(1U << 9)
#define PEA_FLUSH_US_MAX		1000000U	/* one second */

/* ---- Ordered delivery (struct pea_event_open.flags) ---- */

/*
 * Clocks. attr.use_clockid with attr.clockid CLOCK_MONOTONIC (1) or
 * CLOCK_MONOTONIC_RAW (4) makes PERF_SAMPLE_TIME that clock, read with
 * the kernel's NMI-safe fast accessor, as perf encodes it (other clockids:
 * EINVAL); without use_clockid it is local_clock(), perf's default, which
 * is not comparable across CPUs. attr.sample_id_all appends perf's
 * sample_id (the TID, TIME and CPU fields selected) to PERF_RECORD_LOST,
 * so that a loss has a time too.
 *
 * Whatever the clock, the time is read inside the reservation, after the
 * writer loads the ring's head and before it claims its space: a writer
 * that interrupts another there (an NMI inside a task's reservation)
 * makes the interrupted one start over and read the clock again, so the
 * records of one ring are always in the order of their times.
 *
 * PEA_FLAG_ORDERED (needs PERF_SAMPLE_TIME and use_clockid, else EINVAL)
 * lets a reader prove that a ring has nothing older to come. The control
 * page's PEA_PAGE_WRITERS() word is non-zero while a writer on the
 * ring's CPU is between its entry (before it reads the clock) and the
 * publication of its record in data_head. The writer:
 *
 *	smp_store_mb(writers, 1);			(E)
 *	t = clock;  reserve;  write the record with time t;
 *	smp_wmb(); STORE data_head;			(B)
 *	smp_store_release(writers, 0);			(H)
 *
 * The reader (libpea's PEA_BUFFER_FLAG_ORDERED does this):
 *
 *	LOAD-acquire data_head of every ring; read records up to it
 *	for a ring X with nothing unread:
 *		w = LOAD-acquire writers(X);		(F)
 *		h = LOAD-acquire data_head(X);		(G)
 *		if (w == 0 && h == what was consumed of X)
 *			X is quiet
 *
 * If X is quiet, every record X publishes later has a time at or after
 * the time of every record the reader loaded before (F), on any CPU:
 * that writer's STORE writers = 1 came after (F), (E) (the store, then a
 * full barrier: one XCHG on x86) orders the store before its clock read,
 * and the records already loaded read their clock before their data_head
 * was published. The clock read is no memory
 * access: the fast accessors read the TSC with rdtsc_ordered() (LFENCE or
 * RDTSCP first), HPET or ACPI PM with uncached reads, all ordered by (E)
 * and (B). So a reader that holds records of some rings and finds every
 * other ring quiet may deliver the oldest record it holds: nothing older
 * can appear. A ring with writers != 0 is in the middle of one record
 * (writers run with preemption disabled) and is looked at again shortly.
 *
 * The times are CLOCK_MONOTONIC as clock_gettime() reads it. That
 * clock's fast accessor can run a few ns ahead of itself across a
 * timekeeping update that lowers the NTP frequency (a documented property
 * of ktime_get_mono_fast_ns()), so two records on different CPUs written
 * within ns of such an update may carry times a few ns out of their
 * causal order; CLOCK_MONOTONIC_RAW never does. Records of one ring are
 * always in time order. Records with equal times on different CPUs are
 * not ordered by anything but their CPU.
 */
#define PEA_FLAG_ORDERED		(1U << 10)

/* Writers in flight on the ring's CPU: see PEA_FLAG_ORDERED. */
#define PEA_PAGE_WRITERS(pg)	(((__u64 *)(pg)->__reserved)[3])

/* Every flag PEA_IOC_EVENT_OPEN knows. */
#define PEA_EVENT_OPEN_FLAGS	(PEA_FLAG_FD_CLOEXEC | \
				 PEA_FLAG_ADAPTIVE_WAKEUP | PEA_FLAG_FLUSH | \
				 PEA_FLAG_ORDERED)

/* ---- Kprobe producers (ioctl on a map fd, returns a link fd) ---- */

#define PEA_SYM_LEN		128	/* symbol name, NUL included */
#define PEA_CAPTURE_MAX		256	/* bytes captured from an argument */
#define PEA_MAX_LINKS		1024	/* live links, all maps together */
#define PEA_MAXACTIVE_MAX	4096	/* kretprobe maxactive, as tracefs */

/* struct pea_probe_attr.flags */
#define PEA_PROBE_F_RETPROBE	(1U << 0)	/* kretprobe, not kprobe */
#define PEA_PROBE_F_CLOEXEC	(1U << 1)	/* O_CLOEXEC on the link fd */
#define PEA_PROBE_F_COUNTERS	(1U << 2)	/* append counter_map's reading */
#define PEA_PROBE_FLAGS		(PEA_PROBE_F_RETPROBE | PEA_PROBE_F_CLOEXEC | \
				 PEA_PROBE_F_COUNTERS)

/* struct pea_probe_attr.capture_mode */
#define PEA_CAPTURE_NONE	0
#define PEA_CAPTURE_STR		1	/* NUL-terminated string, NUL not kept */
#define PEA_CAPTURE_FIXED	2	/* exactly capture_len bytes */

/* struct pea_probe_attr.capture_flags */
#define PEA_CAPTURE_USER	(1U << 0)	/* the pointer is a user pointer */

/**
 * struct pea_probe_attr - argument of PEA_MAP_IOC_ATTACH_PROBE
 * @size:          sizeof(struct pea_probe_attr)
 * @flags:         PEA_PROBE_F_*
 * @symbol:        the function to probe, NUL-terminated
 * @offset:        bytes into the function (kprobe only; 0 for kretprobes),
 *                 at most UINT_MAX (kprobe.offset is an unsigned int)
 * @id:            producer id written into every record (0: the link's id)
 * @filter_tgid:   only record this process (0: any), in the attacher's
 *                 pid namespace
 * @filter_cpu:    only record on this CPU (-1: any); for a kretprobe the
 *                 CPU the call returns on, where the record is written
 * @capture_arg:   argument (0..5) pointing at the memory to capture
 * @capture_mode:  PEA_CAPTURE_NONE, _STR or _FIXED
 * @capture_len:   at most this many bytes (1..PEA_CAPTURE_MAX)
 * @capture_flags: PEA_CAPTURE_USER for a user pointer, else kernel
 * @maxactive:     kretprobe instances in flight (0: the kernel default,
 *                 at most PEA_MAXACTIVE_MAX); 0 for a kprobe
 * @counter_map:   with PEA_PROBE_F_COUNTERS, a map fd whose slots hold
 *                 counter events (one per CPU): every record then carries
 *                 this CPU's reading (struct pea_event_value) right after
 *                 struct pea_probe_record, before the capture; else 0
 * @kstack_depth:  record the kernel call stack of every hit, at most this
 *                 many frames (1..PEA_KSTACK_MAX; 0: no stack): a
 *                 kretprobe records the stack at entry
 * @reserved:      zero
 *
 * A kretprobe captures at function entry and writes its record at
 * return, with the entry arguments, the return value and the latency.
 */
struct pea_probe_attr {
	__u32 size;
	__u32 flags;
	char symbol[PEA_SYM_LEN];
	__u64 offset;
	__u64 id;
	__s32 filter_tgid;
	__s32 filter_cpu;
	__u32 capture_arg;
	__u32 capture_mode;
	__u32 capture_len;
	__u32 capture_flags;
	__u32 maxactive;
	__s32 counter_map;
	__u32 kstack_depth;
	__u32 reserved;
};

/* The size of struct pea_probe_attr before @kstack_depth (still taken). */
#define PEA_PROBE_ATTR_SIZE_VER0	184

/* struct pea_probe_record.flags */
#define PEA_REC_F_RETPROBE	(1U << 0)	/* written at function return */
#define PEA_REC_F_CAPTURE	(1U << 1)	/* a capture was asked for */
#define PEA_REC_F_FAULT		(1U << 2)	/* the capture faulted: empty */
#define PEA_REC_F_TRUNCATED	(1U << 3)	/* string longer than capture_len */
#define PEA_REC_F_COUNTERS	(1U << 4)	/* a struct pea_event_value follows */
#define PEA_REC_F_COUNTER_ERR	(1U << 5)	/* pea_read_value() failed: zeroes */
#define PEA_REC_F_KSTACK	(1U << 8)	/* a struct pea_kstack ends it */

#define PEA_KSTACK_MAX		127	/* frames, as perf's PERF_MAX_STACK_DEPTH */

/**
 * struct pea_kstack - the kernel call stack of a hit (PEA_REC_F_KSTACK)
 * @nr:       entries in @ips (1..the kstack_depth asked for)
 * @reserved: zero
 * @ips:      the hit's address (the probed instruction; a tracepoint's
 *            call site), then the return addresses of its callers,
 *            innermost first
 *
 * It follows everything else the record holds (counters, capture, a
 * tracepoint's raw entry), at the next 8-byte boundary from the record's
 * start, and ends the record.
 */
struct pea_kstack {
	__u32 nr;
	__u32 reserved;
	__u64 ips[];
};

/**
 * struct pea_probe_record - the payload every probe hit writes
 * @time_ns:     CLOCK_MONOTONIC, ns
 * @id:          the producer id (struct pea_probe_attr.id or the link id)
 * @addr:        the probed address
 * @cpu:         the CPU of the hit
 * @pid:         thread id, in the attacher's pid namespace
 * @tgid:        process id, in the attacher's pid namespace
 * @flags:       PEA_REC_F_*
 * @capture_len: bytes captured, following this struct
 * @comm:        the task's comm
 * @args:        the first six function arguments (at entry)
 * @ret:         kretprobe: the return value
 * @latency_ns:  kretprobe: entry to return
 */
struct pea_probe_record {
	__u64 time_ns;
	__u64 id;
	__u64 addr;
	__u32 cpu;
	__u32 pid;
	__u32 tgid;
	__u16 flags;
	__u16 capture_len;
	char comm[16];
	__u64 args[6];
	__s64 ret;
	__u64 latency_ns;
};

/**
 * struct pea_link_info - filled by PEA_LINK_IOC_INFO
 */
struct pea_link_info {
	__u64 id;		/* the producer id records carry */
	__u64 addr;		/* the probed address */
	__u64 hits;		/* records attempted */
	__u64 written;		/* records pea_output() accepted */
	__u64 filtered;		/* hits skipped by the tgid/cpu filters */
	__u64 errors;		/* pea_output() errors (ENOSPC counts lost) */
	__u64 missed;		/* hits the kprobe layer itself missed */
	__u32 flags;		/* the attach flags */
	__u32 map_id;
	char symbol[PEA_SYM_LEN];
};

#define PEA_MAP_IOC_ATTACH_PROBE _IOW(PEA_IOC_MAGIC, 0x14, struct pea_probe_attr)
#define PEA_LINK_IOC_INFO	_IOR(PEA_IOC_MAGIC, 0x30, struct pea_link_info)

/* ---- Tracepoint producers (ioctl on a map fd, returns a link fd) ---- */

/*
 * PEA_MAP_IOC_ATTACH_TP attaches to a kernel trace event by its id (tracefs
 * events/SUBSYS/NAME/id): a kernel perf tracepoint event per online CPU
 * whose overflow handler writes, per hit, a struct pea_tp_record followed
 * by the event's raw entry exactly as perf's PERF_SAMPLE_RAW carries it
 * (the common fields, then the fields the tracefs format file describes,
 * __data_loc data included, then perf's zero padding up to raw_size).
 * Links share kprobe links' rules: link fd lifetime, PEA_LINK_IOC_INFO
 * (addr is the event id, symbol the name given), the debugfs "links" file
 * and PEA_MAX_LINKS. CPUs brought online after the attach are not traced.
 */
#define PEA_TP_PRED_MAX		8	/* predicates per link, ANDed */
#define PEA_TP_STR_MAX		64	/* string operand, NUL included */

/* struct pea_tp_pred.kind: how the field is stored in the entry */
#define PEA_TP_FIELD_UINT	1	/* unsigned integer of size 1, 2, 4, 8 */
#define PEA_TP_FIELD_SINT	2	/* signed integer of size 1, 2, 4, 8 */
#define PEA_TP_FIELD_STR	3	/* char array of size bytes */
#define PEA_TP_FIELD_DATA_LOC	4	/* __data_loc: u32 (len << 16 | offset) */
#define PEA_TP_FIELD_REL_LOC	5	/* __rel_loc: offset from the field's end */

/* struct pea_tp_pred.op */
#define PEA_TP_OP_EQ		1	/* numbers and strings */
#define PEA_TP_OP_NE		2	/* numbers and strings */
#define PEA_TP_OP_LT		3	/* numbers */
#define PEA_TP_OP_GT		4	/* numbers */
#define PEA_TP_OP_AND		5	/* numbers: (field & value) != 0 */
#define PEA_TP_OP_GLOB		6	/* strings: '*' any run, '?' one byte */

/**
 * struct pea_tp_pred - one filter predicate on a field of the raw entry
 * @offset:   the field's offset in the entry (tracefs format "offset:")
 * @size:     its size ("size:"); 4 for __data_loc and __rel_loc
 * @kind:     PEA_TP_FIELD_*
 * @op:       PEA_TP_OP_*
 * @reserved: zero
 * @value:    numbers: the operand (sign-extended for PEA_TP_FIELD_SINT)
 * @str:      strings: the NUL-terminated operand or glob pattern
 *
 * A string field's value ends at its first NUL or at its end. A field the
 * entry does not hold (past the entry's end, or a __data_loc pointing
 * outside it) fails the predicate: the kernel never reads past the entry.
 */
struct pea_tp_pred {
	__u16 offset;
	__u16 size;
	__u8 kind;
	__u8 op;
	__u16 reserved;
	__u64 value;
	char str[PEA_TP_STR_MAX];
};

/* struct pea_tp_attr.flags */
#define PEA_TP_F_CLOEXEC	(1U << 1)	/* O_CLOEXEC on the link fd */
#define PEA_TP_FLAGS		PEA_TP_F_CLOEXEC

/**
 * struct pea_tp_attr - argument of PEA_MAP_IOC_ATTACH_TP
 * @size:        sizeof(struct pea_tp_attr)
 * @flags:       PEA_TP_F_*
 * @id:          producer id written into every record (0: the link's id)
 * @event_id:    the trace event's id (tracefs events/SUBSYS/NAME/id)
 * @nr_preds:    predicates used in @preds (0..PEA_TP_PRED_MAX); the rest
 *               must be zero
 * @filter_tgid: only record this process (0: any), attacher's pid namespace
 * @filter_cpu:  only record on this CPU (-1: any)
 * @name:        "SUBSYS:NAME", NUL-terminated: a label the link reports
 *               (PEA_LINK_IOC_INFO, debugfs), not looked up
 * @preds:       filter predicates, all of which must hold for a record to
 *               be written; a hit they reject counts as filtered
 * @kstack_depth: record the kernel call stack of every hit, at most this
 *               many frames (1..PEA_KSTACK_MAX; 0: no stack)
 * @reserved:    zero
 */
struct pea_tp_attr {
	__u32 size;
	__u32 flags;
	__u64 id;
	__u32 event_id;
	__u32 nr_preds;
	__s32 filter_tgid;
	__s32 filter_cpu;
	char name[PEA_SYM_LEN];
	struct pea_tp_pred preds[PEA_TP_PRED_MAX];
	__u32 kstack_depth;
	__u32 reserved;
};

/* The size of struct pea_tp_attr before @kstack_depth (still taken). */
#define PEA_TP_ATTR_SIZE_VER0	(160 + PEA_TP_PRED_MAX * 80)

/* struct pea_tp_record.flags (struct pea_probe_record's bits, plus:) */
#define PEA_REC_F_TRACEPOINT	(1U << 6)	/* a struct pea_tp_record */

/**
 * struct pea_tp_record - the payload every tracepoint hit writes
 * @time_ns:  CLOCK_MONOTONIC, ns
 * @id:       the producer id (struct pea_tp_attr.id or the link id)
 * @event_id: the trace event's id
 * @cpu:      the CPU of the hit
 * @pid:      thread id, in the attacher's pid namespace
 * @tgid:     process id, in the attacher's pid namespace
 * @flags:    PEA_REC_F_TRACEPOINT
 * @reserved: zero
 * @comm:     the task's comm
 * @raw_size: bytes of the raw entry following this struct
 * @reserved2: zero
 *
 * The fields up to @comm sit where struct pea_probe_record has them.
 */
struct pea_tp_record {
	__u64 time_ns;
	__u64 id;
	__u64 event_id;
	__u32 cpu;
	__u32 pid;
	__u32 tgid;
	__u16 flags;
	__u16 reserved;
	char comm[16];
	__u32 raw_size;
	__u32 reserved2;
};

#define PEA_MAP_IOC_ATTACH_TP	_IOW(PEA_IOC_MAGIC, 0x15, struct pea_tp_attr)

/* ---- Uprobe producers (ioctl on a map fd, returns a link fd) ---- */

/*
 * PEA_MAP_IOC_ATTACH_UPROBE attaches to an instruction of an executable
 * file (a file offset, as the uprobe PMU's): every process that maps the
 * file, now or later, hits it. Records are struct pea_probe_record with
 * PEA_REC_F_UPROBE (plus PEA_REC_F_RETPROBE for a uretprobe); @addr is
 * the probed file offset, @args the user registers of the calling
 * convention at entry, @ret and @latency_ns as kretprobes'. A capture
 * reads the probed process's memory without faulting pages in: a
 * pointer that cannot be read gives an empty capture and
 * PEA_REC_F_FAULT. Links share kprobe links' rules (link fd lifetime,
 * PEA_LINK_IOC_INFO with addr the file offset, the debugfs "links" file,
 * PEA_MAX_LINKS).
 */

/* struct pea_uprobe_attr.flags: the same bits as struct pea_probe_attr's */
#define PEA_UPROBE_F_RETPROBE	(1U << 0)	/* uretprobe, not uprobe */
#define PEA_UPROBE_F_CLOEXEC	(1U << 1)	/* O_CLOEXEC on the link fd */
#define PEA_UPROBE_FLAGS	(PEA_UPROBE_F_RETPROBE | PEA_UPROBE_F_CLOEXEC)

/**
 * struct pea_uprobe_attr - argument of PEA_MAP_IOC_ATTACH_UPROBE
 * @size:         sizeof(struct pea_uprobe_attr)
 * @flags:        PEA_UPROBE_F_*
 * @path:         user pointer to the file's NUL-terminated path (relative
 *                paths from the caller's working directory), or 0 to use
 *                @path_fd
 * @path_fd:      with @path 0, an fd open on the file; else -1
 * @filter_tgid:  only record this process (0: any), in the attacher's
 *                pid namespace
 * @offset:       the probed instruction's file offset (a uretprobe: the
 *                function's first instruction), within the file
 * @id:           producer id written into every record (0: the link's id)
 * @capture_arg:  argument (0..5) pointing at the memory to capture
 * @capture_mode: PEA_CAPTURE_NONE, _STR or _FIXED (user memory always)
 * @capture_len:  at most this many bytes (1..PEA_CAPTURE_MAX)
 * @maxactive:    uretprobes: how many tasks' calls are paired with their
 *                returns at once, each task up to 4 nested calls (0: 64;
 *                at most PEA_MAXACTIVE_MAX, the bound of kretprobes'
 *                maxactive, which counts calls); uprobes: 0. Formerly
 *                @reserved (zero), which still names it
 * @name:         a label the link reports (PEA_LINK_IOC_INFO, debugfs),
 *                NUL-terminated; empty: "FILENAME+0xOFFSET"
 */
struct pea_uprobe_attr {
	__u32 size;
	__u32 flags;
	__aligned_u64 path;
	__s32 path_fd;
	__s32 filter_tgid;
	__u64 offset;
	__u64 id;
	__u32 capture_arg;
	__u32 capture_mode;
	__u32 capture_len;
	union {
		__u32 maxactive;
		__u32 reserved;		/* its name before maxactive */
	};
	char name[PEA_SYM_LEN];
};

/* struct pea_probe_record.flags of a uprobe hit */
#define PEA_REC_F_UPROBE	(1U << 7)	/* a uprobe or uretprobe */

#define PEA_MAP_IOC_ATTACH_UPROBE _IOW(PEA_IOC_MAGIC, 0x16, struct pea_uprobe_attr)
/* ---- Netfilter producers (ioctl on a map fd, returns a link fd) ---- */

/*
 * PEA_MAP_IOC_ATTACH_NF registers a netfilter hook (nf_register_net_hook())
 * in the caller's network namespace, for IPv4 or IPv6 and one of the five
 * inet hooks. It always accepts the packet; for each packet it writes one
 * record, in one reservation on the current CPU: a struct pea_nf_record,
 * then the first packet_len bytes of the packet from its network header
 * (skb->data: the IP header), fewer when the packet is shorter. The link
 * holds a reference on the namespace. Links share kprobe links' rules:
 * link fd lifetime, PEA_LINK_IOC_INFO (addr is the priority, sign-extended;
 * symbol "netfilter:ipv4:PRE_ROUTING" and the like), the debugfs "links"
 * file and PEA_MAX_LINKS. Needs CAP_BPF and CAP_NET_ADMIN (or
 * CAP_SYS_ADMIN) in the initial user namespace, as a BPF program at a
 * network hook does (EPERM); kernels without CONFIG_NETFILTER answer
 * EOPNOTSUPP.
 */
#define PEA_NF_PACKET_MAX	4096	/* packet bytes a record may carry */

/* struct pea_nf_attr.family: NFPROTO_IPV4 and NFPROTO_IPV6 */
#define PEA_NF_IPV4		2
#define PEA_NF_IPV6		10

/* struct pea_nf_attr.hook: enum nf_inet_hooks */
#define PEA_NF_PRE_ROUTING	0
#define PEA_NF_LOCAL_IN		1
#define PEA_NF_FORWARD		2
#define PEA_NF_LOCAL_OUT	3
#define PEA_NF_POST_ROUTING	4

/*
 * The priority without PEA_NF_F_PRIORITY: NF_IP_PRI_FIRST + 1, before
 * every hook Linux registers itself (defragmentation, conntrack, raw,
 * mangle, nat, filter, security), so the packet is seen as it arrived or
 * as the socket layer built it. NF_IP_PRI_FIRST and NF_IP_PRI_LAST
 * themselves are refused (ERANGE), as for BPF netfilter links.
 */
#define PEA_NF_PRI_DEFAULT	(-2147483647)

/* struct pea_nf_attr.flags */
#define PEA_NF_F_CLOEXEC	(1U << 1)	/* O_CLOEXEC on the link fd */
#define PEA_NF_F_PRIORITY	(1U << 2)	/* use attr.priority */
#define PEA_NF_FLAGS		(PEA_NF_F_CLOEXEC | PEA_NF_F_PRIORITY)

/**
 * struct pea_nf_attr - argument of PEA_MAP_IOC_ATTACH_NF
 * @size:       sizeof(struct pea_nf_attr)
 * @flags:      PEA_NF_F_*
 * @id:         producer id written into every record (0: the link's id)
 * @family:     PEA_NF_IPV4 or PEA_NF_IPV6 (else EAFNOSUPPORT)
 * @hook:       PEA_NF_PRE_ROUTING .. PEA_NF_POST_ROUTING (else EPROTO)
 * @priority:   with PEA_NF_F_PRIORITY, the hook priority (NF_IP_PRI_*
 *              scale, INT_MIN and INT_MAX excluded: ERANGE); else 0, and
 *              the link uses PEA_NF_PRI_DEFAULT
 * @packet_len: packet bytes per record, 1..PEA_NF_PACKET_MAX (0: EINVAL,
 *              more: E2BIG), clamped to the packet's length
 * @reserved:   zero
 */
struct pea_nf_attr {
	__u32 size;
	__u32 flags;
	__u64 id;
	__u32 family;
	__u32 hook;
	__s32 priority;
	__u32 packet_len;
	__u64 reserved;
};

/* struct pea_nf_record.flags (struct pea_probe_record's bits, plus:) */
#define PEA_REC_F_NETFILTER	(1U << 9)	/* a struct pea_nf_record */

/**
 * struct pea_nf_record - the payload every packet writes
 * @time_ns:     CLOCK_MONOTONIC, ns
 * @id:          the producer id (struct pea_nf_attr.id or the link id)
 * @family:      PEA_NF_IPV4 or PEA_NF_IPV6
 * @hook:        PEA_NF_PRE_ROUTING .. PEA_NF_POST_ROUTING
 * @cpu:         the CPU
 * @pid:         thread id of the task the hook runs in, in the attacher's
 *               pid namespace; 0 in interrupt context (softirq receive)
 * @tgid:        its process id; 0 in interrupt context
 * @flags:       PEA_REC_F_NETFILTER
 * @protocol:    IPv4: the header's protocol; IPv6: the header's next
 *               header (IPPROTO_*)
 * @comm:        the task's comm; zeroes in interrupt context
 * @ifindex_in:  the input device's ifindex (0: none, as at LOCAL_OUT)
 * @ifindex_out: the output device's ifindex (0: none, as at LOCAL_IN)
 * @skb_len:     the packet's length from the network header (skb->len)
 * @packet_len:  packet bytes following this struct: min(packet_len asked,
 *               skb_len)
 *
 * The fields from @time_ns to @comm sit where struct pea_probe_record
 * has them (@family and @hook in its @addr).
 */
struct pea_nf_record {
	__u64 time_ns;
	__u64 id;
	__u32 family;
	__u32 hook;
	__u32 cpu;
	__u32 pid;
	__u32 tgid;
	__u16 flags;
	__u16 protocol;
	char comm[16];
	__s32 ifindex_in;
	__s32 ifindex_out;
	__u32 skb_len;
	__u32 packet_len;
};

#define PEA_MAP_IOC_ATTACH_NF	_IOW(PEA_IOC_MAGIC, 0x17, struct pea_nf_attr)

/* ---- Counters (PEA_IOC_EVENT_OPEN with a counting attr) ---- */

/*
 * PEA_IOC_EVENT_OPEN with an attr whose type/config is not
 * PERF_TYPE_SOFTWARE/PERF_COUNT_SW_BPF_OUTPUT returns a counter event fd:
 * a kernel perf counter (any PMU type: hardware, software, hw-cache, raw,
 * breakpoint or a dynamic type from /sys/bus/event_source/devices) bound
 * to one CPU. It counts, it never samples: sample_period, sample_type and
 * every sampling or side-band bit must be zero. Honoured: config,
 * config1, config2 (config3 where the kernel has it), bp_type, disabled,
 * inherit, pinned, exclusive, exclude_user, exclude_kernel, exclude_hv,
 * exclude_idle, exclude_host, exclude_guest, and read_format bits in
 * PEA_COUNTER_READ_FORMAT. The fd takes read(2) (the perf read_format
 * layout), PERF_EVENT_IOC_ENABLE, _DISABLE, _RESET and _ID, and mmap of
 * exactly one page: the control page below. A counter may sit in a map
 * slot like an output event; pea_output() into it gives EINVAL.
 */
/* PERF_FORMAT_LOST is 1 << 4 (an enum constant, Linux 6.0 and later). */
#define PEA_COUNTER_READ_FORMAT	(PERF_FORMAT_TOTAL_TIME_ENABLED | \
				 PERF_FORMAT_TOTAL_TIME_RUNNING | \
				 PERF_FORMAT_ID | (1U << 4))

/**
 * struct pea_event_value - a counter reading, as struct bpf_perf_event_value
 * @counter: the count since creation (or the last PERF_EVENT_IOC_RESET)
 * @enabled: ns the counter was enabled (time_enabled)
 * @running: ns it was actually counting on its PMU (time_running); below
 *           @enabled when the PMU multiplexed it
 */
struct pea_event_value {
	__u64 counter;
	__u64 enabled;
	__u64 running;
};

/*
 * The control page of a counter (mmap of one page, MAP_SHARED, offset 0)
 * is a struct perf_event_mmap_page that the counter's CPU publishes under
 * the perf seqcount @lock: @offset is the count (@index is 0: nothing to
 * add from rdpmc), @time_enabled and @time_running the times. @lock is odd
 * while an update is in progress. Read it from any CPU, without a system
 * call, as:
 *
 *	do {
 *		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
 *		count = pg->offset;
 *		enabled = pg->time_enabled;
 *		running = pg->time_running;
 *		__atomic_thread_fence(__ATOMIC_ACQUIRE);
 *	} while ((seq & 1) || __atomic_load_n(&pg->lock, __ATOMIC_RELAXED) != seq);
 *
 * (pea_counter_read_page() in libpea does this.) The page is refreshed on
 * every read(2), ioctl and in-kernel read on the owning CPU, and by a timer
 * on the owning CPU every PEA_PAGE_COUNTER_PERIOD ns (the module parameter
 * counter_refresh_ms; 0 = no timer). PEA_PAGE_COUNTER_TIME is the
 * CLOCK_MONOTONIC time of the last refresh: the values are that old.
 */
#define PEA_PAGE_COUNTER_TIME(pg)	(((__u64 *)(pg)->__reserved)[1])
#define PEA_PAGE_COUNTER_PERIOD(pg)	(((__u64 *)(pg)->__reserved)[2])

/* ---- Sampling producers (ioctl on a map fd, returns a link fd) ---- */

/*
 * PEA_MAP_IOC_ATTACH_SAMPLE attaches a sampling producer: a kernel perf
 * event per online CPU (every task on it, as perf_event_open() with pid
 * -1), cpu-clock at a frequency or a period, or a hardware event where
 * the CPU has a PMU, whose overflow handler writes one struct
 * pea_sample_record per overflow into the ring of the CPU it overflowed
 * on: the task, the interrupted instruction pointer, the kernel stack
 * (interrupted in the kernel) and the user stack, by frame pointers,
 * read with fault-safe copies (a task without frame pointers gives a
 * shorter stack, never a fault). A hardware event's handler runs in NMI.
 * Links share kprobe links' rules (PEA_LINK_IOC_INFO: hits are the
 * overflows, written the records, errors the records the ring dropped;
 * the debugfs "links" file; PEA_MAX_LINKS). CPUs brought online after
 * the attach, or taken offline and back, are not sampled.
 */
#define PEA_USTACK_MAX		127	/* user frames, as PEA_KSTACK_MAX */

/* struct pea_sample_attr.flags */
#define PEA_SAMPLE_F_CLOEXEC	(1U << 1)	/* O_CLOEXEC on the link fd */
#define PEA_SAMPLE_F_FREQ	(1U << 2)	/* sample is a frequency in Hz */
#define PEA_SAMPLE_F_NO_KERNEL	(1U << 3)	/* exclude_kernel */
#define PEA_SAMPLE_F_NO_USER	(1U << 4)	/* exclude_user */
#define PEA_SAMPLE_FLAGS	(PEA_SAMPLE_F_CLOEXEC | PEA_SAMPLE_F_FREQ | \
				 PEA_SAMPLE_F_NO_KERNEL | PEA_SAMPLE_F_NO_USER)

/**
 * struct pea_sample_attr - argument of PEA_MAP_IOC_ATTACH_SAMPLE
 * @size:         sizeof(struct pea_sample_attr)
 * @flags:        PEA_SAMPLE_F_*
 * @id:           producer id written into every record (0: the link's id)
 * @type:         PERF_TYPE_SOFTWARE (@config PERF_COUNT_SW_CPU_CLOCK) or
 *                PERF_TYPE_HARDWARE (ENOENT where the CPU has no PMU;
 *                branch instructions at period 1, which is BTS on Intel
 *                and never reaches an overflow handler: EOPNOTSUPP)
 * @reserved:     zero
 * @config:       the event, as perf_event_attr.config
 * @sample:       with PEA_SAMPLE_F_FREQ, samples per second per CPU (1 ..
 *                kernel.perf_event_max_sample_rate); else the period in
 *                events (cpu-clock: ns), 1..2^63-1
 * @filter_tgid:  only record this process (0: any), in the attacher's pid
 *                namespace; other tasks' overflows count as filtered
 * @filter_cpu:   only sample this CPU (-1: every online CPU)
 * @kstack_depth: kernel frames per record at most (0..PEA_KSTACK_MAX and
 *                perf_event_max_stack); 0 with PEA_SAMPLE_F_NO_KERNEL
 * @ustack_depth: user frames per record at most (0..PEA_USTACK_MAX and
 *                perf_event_max_stack); 0 with PEA_SAMPLE_F_NO_USER. A
 *                record holds perf_event_max_stack entries at most (as
 *                at the attach), kernel and user together: the user part
 *                gets what the kernel part left, as perf's callchains
 * @reserved2:    zero
 */
struct pea_sample_attr {
	__u32 size;
	__u32 flags;
	__u64 id;
	__u32 type;
	__u32 reserved;
	__u64 config;
	__u64 sample;
	__s32 filter_tgid;
	__s32 filter_cpu;
	__u32 kstack_depth;
	__u32 ustack_depth;
	__u64 reserved2;
};

/* struct pea_sample_record.flags (struct pea_probe_record's bits, plus:) */
#define PEA_REC_F_SAMPLE	(1U << 12)	/* a struct pea_sample_record */
#define PEA_REC_F_USER_MODE	(1U << 13)	/* interrupted in user mode */

/**
 * struct pea_sample_record - the payload every overflow writes
 * @time_ns:   CLOCK_MONOTONIC, ns
 * @id:        the producer id (struct pea_sample_attr.id or the link id)
 * @ip:        the interrupted instruction pointer (user or kernel; with
 *             PEA_SAMPLE_F_NO_KERNEL always the user's, even when a PMU's
 *             skid let the overflow land in the kernel)
 * @cpu:       the CPU
 * @pid:       thread id, in the attacher's pid namespace (0: idle)
 * @tgid:      process id, in the attacher's pid namespace
 * @flags:     PEA_REC_F_SAMPLE, maybe PEA_REC_F_USER_MODE
 * @reserved:  zero
 * @comm:      the task's comm
 * @period:    the events this sample stands for (cpu-clock: ns)
 * @kstack_nr: kernel entries in @ips: the interrupted address, then the
 *             return addresses of its callers, innermost first; 0 when
 *             interrupted in user mode
 * @ustack_nr: user entries in @ips after the kernel ones: the user
 *             instruction pointer (where the task entered the kernel, if
 *             interrupted there), then return addresses by frame pointer,
 *             innermost first; 0 for a kernel thread
 * @reserved2: zero
 * @ips:       @kstack_nr + @ustack_nr addresses
 *
 * The fields up to @comm sit where struct pea_probe_record has them
 * (@ip in its @addr).
 */
struct pea_sample_record {
	__u64 time_ns;
	__u64 id;
	__u64 ip;
	__u32 cpu;
	__u32 pid;
	__u32 tgid;
	__u16 flags;
	__u16 reserved;
	char comm[16];
	__u64 period;
	__u16 kstack_nr;
	__u16 ustack_nr;
	__u32 reserved2;
	__u64 ips[];
};

#define PEA_MAP_IOC_ATTACH_SAMPLE _IOW(PEA_IOC_MAGIC, 0x18, struct pea_sample_attr)

#endif /* _UAPI_LINUX_PEA_H */
