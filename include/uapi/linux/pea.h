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
 * PEA_MAP_IOC_EXCLUDE_TGID: hits in task context of one process are
 * recorded by no link of this map, attached now or later (kprobes,
 * kretprobes, tracepoints, uprobes, uretprobes), and count as the link's
 * filtered hits (a uretprobe's return, not as missed); a tracer's own
 * reads and writes stay out of what it traces. Interrupts, softirqs and
 * NMIs that land on the process (samplers' samples among them) are not
 * its doing and are recorded. The argument: a pointer to the process id
 * (__s32) in the caller's pid namespace, 0 for the caller's own process.
 * The process is kept as its struct pid, so the exclusion follows it (not
 * a later holder of the number) for the map's life. Once per map: EBUSY
 * after that; ESRCH for no such process, EINVAL for a negative id or a
 * thread's (as pidfd_open()), EPERM on a PEA_F_RDONLY map. It takes
 * nothing beyond the map fd: it only narrows what the map records.
 */
#define PEA_MAP_IOC_EXCLUDE_TGID _IOW(PEA_IOC_MAGIC, 0x44, __s32)

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
/*
 * The process tree (issue 21, `pea trace -- CMD` and `-p PID`): bits 12
 * and 13 of every attach attr that has @filter_tgid (probes, tracepoints,
 * uprobes: the same values under each kind's name).
 *
 * PEA_*_F_DESCENDANTS: @filter_tgid's process and every process below it
 * (its children, theirs, ...) match. The hit's task is matched when its
 * process, or the process of one of the first PEA_TREE_DEPTH_MAX tasks up
 * its real_parent chain, has @filter_tgid in the attacher's pid namespace
 * (the chain Linux's getppid() reads; threads share their process's
 * parent). Numbers are compared, as the plain filter compares them: a
 * @filter_tgid that dies and is reused names the new process. The walk
 * stops at a task that namespace does not see (no process above it can be
 * one it sees: a process's pid namespace is its parent's or below it) and
 * at the idle task. A thread already reaped (running its exit's last
 * steps) is taken as its process's leader; a kernel thread already
 * reaped (every kernel thread is, at its exit) as kthreadd's child, or
 * as @filter_tgid's own thread when its number is @filter_tgid in the
 * initial namespace. A process further than
 * PEA_TREE_DEPTH_MAX parents down, or one whose whole process was
 * already reaped (its last steps after its parent's wait: common, every
 * autoreaped child's), is filtered and also counted in
 * struct pea_link_info's @deep: every hit so counted may have been a
 * descendant; none of the others was missed. A process whose parent
 * exits is reparented to the nearest child subreaper above it, or its pid
 * namespace's init: it stays matched only if that one is @filter_tgid's
 * process or below it (a uretprobe's call entered before that returns
 * recorded: the entry decides). A tracer that makes itself a child subreaper
 * (prctl(PR_SET_CHILD_SUBREAPER)) and names itself, with
 * PEA_*_F_DESC_ONLY, follows its command's whole tree exactly.
 *
 * PEA_*_F_DESC_ONLY: with PEA_*_F_DESCENDANTS, only the processes below
 * @filter_tgid's, not that process itself (the tracer).
 *
 * Either bit with @filter_tgid 0, or PEA_*_F_DESC_ONLY alone: EINVAL.
 * Like the plain filter, it only narrows what is written: no privilege.
 */
#define PEA_TREE_DEPTH_MAX	64	/* parents walked up from a hit */

#define PEA_PROBE_F_DESCENDANTS	(1U << 12)	/* and its descendants */
#define PEA_PROBE_F_DESC_ONLY	(1U << 13)	/* only its descendants */
#define PEA_PROBE_FLAGS		(PEA_PROBE_F_RETPROBE | PEA_PROBE_F_CLOEXEC | \
				 PEA_PROBE_F_COUNTERS | \
				 PEA_PROBE_F_DESCENDANTS | PEA_PROBE_F_DESC_ONLY)

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
 * @capture_flags: PEA_CAPTURE_USER for a user pointer, else kernel; any
 *                 capture needs CAP_BPF and CAP_PERFMON (EPERM), a kernel
 *                 one also no lockdown (docs/security.md)
 * @maxactive:     kretprobe instances in flight (0: the kernel default,
 *                 at most PEA_MAXACTIVE_MAX); 0 for a kprobe
 * @counter_map:   with PEA_PROBE_F_COUNTERS, a map fd whose slots hold
 *                 counter events (one per CPU): every record then carries
 *                 this CPU's reading (struct pea_event_value) right after
 *                 struct pea_probe_record, before the capture; else 0
 * @kstack_depth:  record the kernel call stack of every hit, at most this
 *                 many frames (1..PEA_KSTACK_MAX; 0: no stack): a
 *                 kretprobe records the stack at entry
 * @ustack_depth:  record the user call stack of the task, where the hit
 *                 has one (a task's syscall, fault or interrupt), at most
 *                 this many entries (0..PEA_USTACK_MAX and
 *                 perf_event_max_stack; 0: none), at the hit (a
 *                 kretprobe's: at the return); kernel and user stacks
 *                 together hold perf_event_max_stack entries at most, the
 *                 user part getting what the kernel part left, as perf's
 *                 callchains (PEA_REC_F_USTACK). Was @reserved.
 * @fetches:       user pointer to @nr_fetches struct pea_fetch (see
 *                 "Fetch chains" below), or 0
 * @nr_fetches:    fetches per hit, 0..PEA_FETCH_MAX
 * @reserved2:     zero
 * @preds:         user pointer to @nr_preds struct pea_pred: a predicate
 *                 on the fetched values ("Predicates" below), or 0
 * @nr_preds:      its instructions, 0..PEA_PRED_MAX
 * @reserved3:     zero
 *
 * A kretprobe captures at function entry and writes its record at
 * return, with the entry arguments, the return value and the latency;
 * its fetches are evaluated at return (with the entry's arguments).
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
	union {
		__u32 ustack_depth;
		__u32 reserved;		/* its name before ustack_depth */
	};
	__aligned_u64 fetches;
	__u32 nr_fetches;
	__u32 reserved2;
	__aligned_u64 preds;
	__u32 nr_preds;
	__u32 reserved3;
};

/* The size of struct pea_probe_attr before @kstack_depth (still taken). */
#define PEA_PROBE_ATTR_SIZE_VER0	184
/* Its size before @fetches (still taken). */
#define PEA_PROBE_ATTR_SIZE_VER1	192

/* struct pea_probe_record.flags */
#define PEA_REC_F_RETPROBE	(1U << 0)	/* written at function return */
#define PEA_REC_F_CAPTURE	(1U << 1)	/* a capture was asked for */
#define PEA_REC_F_FAULT		(1U << 2)	/* the capture faulted: empty */
#define PEA_REC_F_TRUNCATED	(1U << 3)	/* string longer than capture_len */
#define PEA_REC_F_COUNTERS	(1U << 4)	/* a struct pea_event_value follows */
#define PEA_REC_F_COUNTER_ERR	(1U << 5)	/* pea_read_value() failed: zeroes */
#define PEA_REC_F_KSTACK	(1U << 8)	/* a struct pea_kstack ends it */
#define PEA_REC_F_USTACK	(1U << 14)	/* then one of the user stack */

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
 *
 * With PEA_REC_F_USTACK (a probe's or tracepoint's ustack_depth) a second
 * struct pea_kstack, the user stack of the task, follows at the next
 * 8-byte boundary after everything else, the kernel stack included, and
 * ends the record: @ips then hold the user instruction pointer (the
 * probed instruction of a uprobe; where the task entered the kernel for a
 * kprobe or tracepoint), for a uprobe on a function's first instruction
 * (push %rbp, endbr64) the return address at the stack pointer, then the
 * return addresses of its callers found by frame pointers, as struct
 * pea_sample_record's user part. A hit
 * without a user context (a kernel thread, a user worker, an exiting
 * task) has none, and no PEA_REC_F_USTACK.
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
	__u64 hits;		/* records attempted (not the hits of a table
				 * with PEA_AGG_F_NO_RECORDS)
				 */
	__u64 written;		/* records pea_output() accepted */
	__u64 filtered;		/* hits skipped by the tgid/cpu filters */
	__u64 errors;		/* outputs that failed, drops (@dropped) not
				 * included
				 */
	__u64 missed;		/* hits the kprobe layer itself missed */
	__u32 flags;		/* the attach flags */
	__u32 map_id;
	char symbol[PEA_SYM_LEN];
	__u64 dropped;		/* outputs the ring had no room for (ENOSPC:
				 * full, paused, not mapped; the event counts
				 * them lost): not errors of the probe.
				 * Before it (PEA_LINK_INFO_SIZE_VER0),
				 * @errors counted them
				 */
	__u64 deep;		/* of @filtered, hits of a process further
				 * than PEA_TREE_DEPTH_MAX parents down, or
				 * already reaped (PEA_*_F_DESCENDANTS):
				 * maybe a descendant
				 */
};

/*
 * The size of struct pea_link_info before @dropped: its PEA_LINK_IOC_INFO
 * (the size is part of the number) is still answered, that many bytes,
 * with @errors as it was then: the drops included.
 */
#define PEA_LINK_INFO_SIZE_VER0	192
/* Its size before @deep: answered, that many bytes. */
#define PEA_LINK_INFO_SIZE_VER1	200

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
#define PEA_TP_TERM_MAX		32	/* a filter program's terms */
#define PEA_TP_PROG_MAX		96	/* its instructions */
#define PEA_TP_STR_MAX		64	/* string operand, NUL included */

/* struct pea_tp_pred.kind: how the field is stored in the entry */
#define PEA_TP_FIELD_UINT	1	/* unsigned integer of size 1, 2, 4, 8 */
#define PEA_TP_FIELD_SINT	2	/* signed integer of size 1, 2, 4, 8 */
#define PEA_TP_FIELD_STR	3	/* char array of size bytes */
#define PEA_TP_FIELD_DATA_LOC	4	/* __data_loc: u32 (len << 16 | offset) */
#define PEA_TP_FIELD_REL_LOC	5	/* __rel_loc: offset from the field's end */
#define PEA_TP_FIELD_CTX	6	/* a program's term only: the hit's task */

/* struct pea_tp_pred.op */
#define PEA_TP_OP_EQ		1	/* numbers and strings */
#define PEA_TP_OP_NE		2	/* numbers and strings */
#define PEA_TP_OP_LT		3	/* numbers */
#define PEA_TP_OP_GT		4	/* numbers */
#define PEA_TP_OP_AND		5	/* numbers: (field & value) != 0 */
#define PEA_TP_OP_GLOB		6	/* strings: '*' any run, '?' one byte */

/**
 * struct pea_tp_pred - one filter predicate on a field of the raw entry
 * @offset:   the field's offset in the entry (tracefs format "offset:");
 *            PEA_TP_FIELD_CTX: the PEA_FETCH_CTX_* value compared
 * @size:     its size ("size:"); 4 for __data_loc and __rel_loc; 0 for
 *            PEA_TP_FIELD_CTX
 * @kind:     PEA_TP_FIELD_*
 * @op:       PEA_TP_OP_*
 * @reserved: zero
 * @value:    numbers: the operand (sign-extended for PEA_TP_FIELD_SINT)
 * @str:      strings: the NUL-terminated operand or glob pattern
 *
 * A string field's value ends at its first NUL or at its end. A field the
 * entry does not hold (past the entry's end, or a __data_loc pointing
 * outside it) fails the predicate: the kernel never reads past the entry.
 *
 * PEA_TP_FIELD_CTX (a filter program's term, not @preds) compares a value
 * of the task that hit the tracepoint instead of a field: @offset is the
 * PEA_FETCH_CTX_* value (below, "Fetch chains"), read as a probe's
 * context fetch reads it, @size 0. The comm is a string (PEA_TP_OP_EQ,
 * _NE, _GLOB); the others unsigned integers of 4 bytes (the tid and pid
 * in the attacher's pid namespace, the uid and gid in the initial user
 * namespace, the CPU) or 8 (the cgroup v2 id), with the integer
 * operators, @value in that range. The uid and gid need CAP_BPF and
 * CAP_PERFMON (EPERM), as bpf_get_current_uid_gid() in a tracepoint
 * program, the one Linux interface that gives them there, asked before
 * the terms and the program are checked (after the counts' E2BIG and
 * the copy's EFAULT), as bpf() asks before its verifier; the others
 * only the tracepoint's rule (the event's own filter has comm, cpu and
 * common_pid; perf's samples the cgroup id).
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
#define PEA_TP_F_DESCENDANTS	(1U << 12)	/* PEA_PROBE_F_DESCENDANTS */
#define PEA_TP_F_DESC_ONLY	(1U << 13)	/* PEA_PROBE_F_DESC_ONLY */
#define PEA_TP_FLAGS		(PEA_TP_F_CLOEXEC | PEA_TP_F_DESCENDANTS | \
				 PEA_TP_F_DESC_ONLY)

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
 * @ustack_depth: record the user call stack of the task that hit it, as
 *               struct pea_probe_attr's @ustack_depth (was @reserved)
 * @terms:       user pointer to @nr_terms struct pea_tp_pred: the
 *               comparisons a filter program joins (below), or 0
 * @nr_terms:    its terms, 0..PEA_TP_TERM_MAX
 * @nr_prog:     the program's instructions, 0..PEA_TP_PROG_MAX
 * @prog:        user pointer to @nr_prog struct pea_pred, or 0
 * @fetches:     user pointer to @nr_fetches struct pea_fetch, or 0: fetch
 *               chains whose base is a field of the entry
 *               (PEA_FETCH_BASE_FIELD; "Fetch chains" below), as an
 *               eprobe's "+0($field):string" (trace_eprobe.c); each hit
 *               then carries PEA_REC_F_FETCH and a struct pea_fetch_block
 *               after the raw entry (added by branch tpchain, issue 21;
 *               no new flag bit: @nr_fetches says it)
 * @nr_fetches:  fetches per hit, 0..PEA_FETCH_MAX
 * @reserved3:   zero
 * @fetch_preds: user pointer to @nr_fetch_preds struct pea_pred: a
 *               predicate on the fetched values, as a kprobe's @preds
 *               ("Predicates on fetched values"), or 0; it and the field
 *               filter (@preds or the program) must both hold
 * @nr_fetch_preds: its instructions, 0..PEA_PRED_MAX
 * @reserved4:   zero
 *
 * A filter program joins its terms with ||, && and !, and parentheses, as
 * the tracefs filter of the event does: a postfix program of struct
 * pea_pred ("Predicates on fetched values" below) whose PEA_PRED_CMP
 * pushes the truth of term @fetch (its index in @terms) and leaves @cmp,
 * @value and @str zero; the term is a struct pea_tp_pred as @preds hold,
 * whose @op may also be PEA_PRED_OP_LE or _GE on a number, and whose
 * integer @value must be one the field holds (as struct pea_pred's). A
 * hit the program leaves false counts as filtered. Bounds: more than
 * PEA_TP_TERM_MAX terms, PEA_TP_PROG_MAX instructions or
 * PEA_PRED_DEPTH_MAX values pending: E2BIG. A program without terms or
 * terms without one, a program and @preds both, an instruction naming a
 * term past @nr_terms, a program that does not leave exactly one value,
 * or a malformed term or instruction: EINVAL.
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
	union {
		__u32 ustack_depth;
		__u32 reserved;		/* its name before ustack_depth */
	};
	__aligned_u64 terms;
	__u32 nr_terms;
	__u32 nr_prog;
	__aligned_u64 prog;
	__aligned_u64 fetches;
	__u32 nr_fetches;
	__u32 reserved3;
	__aligned_u64 fetch_preds;
	__u32 nr_fetch_preds;
	__u32 reserved4;
};

/* The size of struct pea_tp_attr before @kstack_depth (still taken). */
#define PEA_TP_ATTR_SIZE_VER0	(160 + PEA_TP_PRED_MAX * 80)
/* Its size before @terms (still taken). */
#define PEA_TP_ATTR_SIZE_VER1	(PEA_TP_ATTR_SIZE_VER0 + 8)
/* Its size before @fetches (still taken). */
#define PEA_TP_ATTR_SIZE_VER2	(PEA_TP_ATTR_SIZE_VER1 + 24)

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
 * @flags:    PEA_REC_F_TRACEPOINT, and PEA_REC_F_FETCH, _KSTACK, _USTACK
 * @reserved: zero
 * @comm:     the task's comm
 * @raw_size: bytes of the raw entry following this struct
 * @reserved2: zero
 *
 * The fields up to @comm sit where struct pea_probe_record has them. With
 * PEA_REC_F_FETCH (a link with fetches) a struct pea_fetch_block follows
 * the raw entry at the next 8-byte boundary from the record's start,
 * before a struct pea_kstack, as a probe record's.
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
#define PEA_UPROBE_F_DESCENDANTS (1U << 12)	/* PEA_PROBE_F_DESCENDANTS */
#define PEA_UPROBE_F_DESC_ONLY	(1U << 13)	/* PEA_PROBE_F_DESC_ONLY */
#define PEA_UPROBE_FLAGS	(PEA_UPROBE_F_RETPROBE | PEA_UPROBE_F_CLOEXEC | \
				 PEA_UPROBE_F_DESCENDANTS | \
				 PEA_UPROBE_F_DESC_ONLY)

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
 * @fetches:      user pointer to @nr_fetches struct pea_fetch, or 0: every
 *                read is of the probed process's memory (@user zero)
 * @nr_fetches:   fetches per hit, 0..PEA_FETCH_MAX
 * @reserved2:    zero
 * @preds:        user pointer to @nr_preds struct pea_pred, or 0
 * @nr_preds:     its instructions, 0..PEA_PRED_MAX
 * @ustack_depth: record the user call stack of every hit (a uretprobe's:
 *                at the return), as struct pea_probe_attr's @ustack_depth
 *                (was @reserved3)
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
	__aligned_u64 fetches;
	__u32 nr_fetches;
	__u32 reserved2;
	__aligned_u64 preds;
	__u32 nr_preds;
	union {
		__u32 ustack_depth;
		__u32 reserved3;	/* its name before ustack_depth */
	};
};

/* The size of struct pea_uprobe_attr before @fetches (still taken). */
#define PEA_UPROBE_ATTR_SIZE_VER0	184

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

/* ---- In-kernel aggregation tables (ioctls on a link fd) ---- */

/*
 * PEA_LINK_IOC_AGG_CREATE gives a link a table that its producer updates
 * in the kernel at every hit, per CPU and lock-free, from any context
 * (NMI included): a count, and with a value a sum, a minimum, a maximum
 * and a histogram, per key. No hit is lost to a full ring: every hit the
 * table sees is in one entry's count or in @dropped (a key that did not
 * fit). PEA_LINK_IOC_AGG_READ copies the per-CPU entries out, and with
 * PEA_AGG_READ_F_CLEAR empties the table at the same time without
 * stopping the producer and without losing a hit (docs/aggregations.md).
 * A link has at most one table, its own or one it shares with other
 * links (PEA_LINK_IOC_AGG_SHARE), freed with the last link using it.
 */

/* struct pea_agg_attr.keys[]: the parts of a key, in order. */
#define PEA_AGG_KEY_NONE	0	/* ends the list (all zero: one entry) */
#define PEA_AGG_KEY_CPU		1	/* the CPU of the hit: 1 word */
#define PEA_AGG_KEY_PID		2	/* tgid, in the attacher's pid namespace */
#define PEA_AGG_KEY_TID		3	/* pid (thread id), the same namespace */
#define PEA_AGG_KEY_COMM	4	/* current->comm: 2 words (16 bytes) */
#define PEA_AGG_KEY_PROBE	5	/* the link's record id: 1 word */
#define PEA_AGG_KEY_KSTACK	6	/* the hit's kernel stack: 1 word, a stack id */
#define PEA_AGG_KEY_USTACK	7	/* a sample's user stack: 1 word, a stack id */
#define PEA_AGG_KEY_PAIR	8	/* PEA_AGG_VAL_PAIRED: the pairing key
					 * the end took its start by: 1 word
					 */
#define PEA_AGG_KEY_FIELD	9	/* a tracepoint's field: key_size bytes
					 * at key_offset, as in the entry, zero
					 * padded: 1 word, 2 past 8 bytes
					 */
#define PEA_AGG_KEY_FETCH	10	/* a probe's fetched value (key_fetch):
					 * a status word, then its bytes
					 * (PEA_AGG_FETCH_KEY_*)
					 */
#define PEA_AGG_KEY_PARTS	4	/* entries of keys[] */
#define PEA_AGG_KEY_WORDS	4	/* __u64 words of a key */

/* struct pea_agg_attr.value: what sum, min, max and the histogram take. */
#define PEA_AGG_VAL_NONE	0	/* counts only */
#define PEA_AGG_VAL_LATENCY	1	/* a return's entry-to-return ns */
#define PEA_AGG_VAL_RET		2	/* a return's value, signed */
#define PEA_AGG_VAL_ARG		3	/* argument val_arg (0..5) of a probe */
#define PEA_AGG_VAL_FIELD	4	/* a tracepoint's integer field */
#define PEA_AGG_VAL_PAIRED	5	/* ns since the paired start (pair_fd) */
#define PEA_AGG_VAL_FETCH	6	/* a probe's integer fetch (val_fetch),
					 * signed as its type
					 */

/*
 * A PEA_AGG_KEY_FETCH part: its first word says what the fetch gave,
 * the next ones hold its bytes, zero-padded. The status word is
 * PEA_AGG_FETCH_KEY_STATUS (PEA_FETCH_OK, _FAULT or _TRUNCATED), the
 * failing read's number (_FAULT) and the bytes kept (PEA_AGG_FETCH_KEY_LEN).
 * An integer fetch takes one word, its bytes zero-extended (a signed type
 * is sign-extended by the reader, as a record's); a string or an array
 * takes key_fetch_size bytes, in ceil(key_fetch_size / 8) words, and a
 * longer one is cut there and marked _TRUNCATED. A fetch that failed
 * keeps no bytes: its key is the status word alone (the others zero),
 * which no value that was read has, so failed hits are counted under
 * keys of their own, one per failing read, never with a value.
 */
#define PEA_AGG_FETCH_KEY_STATUS(w)	((__u8)((w) & 0xff))
#define PEA_AGG_FETCH_KEY_STEP(w)	((__u8)(((w) >> 8) & 0xff))
#define PEA_AGG_FETCH_KEY_LEN(w)	((__u16)(((w) >> 16) & 0xffff))
#define PEA_AGG_FETCH_KEY_MAX	((PEA_AGG_KEY_WORDS - 1) * 8)	/* bytes */

/*
 * Wide keys (PEA_AGG_F_WIDE_KEY): a key of PEA_AGG_WIDE_KEY_WORDS words,
 * read as struct pea_agg_entry_wide entries, so that a fetch part keeps
 * up to PEA_AGG_WIDE_FETCH_KEY_MAX bytes (a 64-byte string: 9 words)
 * and goes with other parts (comm and a 64-byte string: 11). A table
 * without the flag keeps struct pea_agg_entry and its four words, which
 * the binaries built before wide keys read.
 */
#define PEA_AGG_WIDE_KEY_WORDS	16
#define PEA_AGG_WIDE_FETCH_KEY_MAX	((PEA_AGG_WIDE_KEY_WORDS - 1) * 8)

/* struct pea_agg_attr.hist */
#define PEA_AGG_HIST_NONE	0
#define PEA_AGG_HIST_LOG2	1	/* PEA_AGG_LOG2_BUCKETS buckets */
#define PEA_AGG_HIST_LINEAR	2	/* lin_min .. lin_max by lin_step */

/*
 * Values are signed for PEA_AGG_VAL_RET and with PEA_AGG_F_SIGNED (an
 * argument or a field), else unsigned (__u64). Log2 buckets of a value
 * v: 0: v < 0 (signed only); 1: v == 0; i >= 2: 2^(i-2) <= v < 2^(i-1),
 * up to 65: [2^63, 2^64) (unsigned only). Linear: 0: v < lin_min; i in
 * 1..n: lin_min + (i-1)*lin_step <= v < lin_min + i*lin_step, n =
 * ceil((lin_max - lin_min) / lin_step); n + 1: v >= the last bound (an
 * unsigned v past 2^63 too).
 */
#define PEA_AGG_LOG2_BUCKETS	66
#define PEA_AGG_LINEAR_MAX	1024	/* n at most */
#define PEA_AGG_MAX_KEYS	65536	/* max_keys at most */
#define PEA_AGG_MAX_STACKS	65536	/* max_stacks at most */

/* struct pea_agg_attr.flags */
#define PEA_AGG_F_NO_RECORDS	(1U << 0)	/* the link writes no records */
#define PEA_AGG_F_SIGNED	(1U << 1)	/* an argument or field is signed */
#define PEA_AGG_F_WIDE_KEY	(1U << 2)	/* PEA_AGG_WIDE_KEY_WORDS words */
#define PEA_AGG_FLAGS		(PEA_AGG_F_NO_RECORDS | PEA_AGG_F_SIGNED | \
				 PEA_AGG_F_WIDE_KEY)

/* struct pea_lat_key.kind: what pairs a start with its end. */
#define PEA_LAT_KEY_TID		0	/* the hit's thread id (init pid ns) */
#define PEA_LAT_KEY_ARG		1	/* argument @arg (0..5) of a probe */
#define PEA_LAT_KEY_FIELD	2	/* a tracepoint's integer field */

/**
 * struct pea_lat_key - a pairing key: how a start or an end hit names
 * what it starts or ends
 * @kind:   PEA_LAT_KEY_*
 * @arg:    PEA_LAT_KEY_ARG: the argument, 0 .. 5; else 0
 * @offset: PEA_LAT_KEY_FIELD: the field's offset in the raw entry; else 0
 * @size:   PEA_LAT_KEY_FIELD: 1, 2, 4 or 8 (read unsigned);
 *          PEA_LAT_KEY_ARG: the parameter's width, 1, 2, 4 or 8 (0 is
 *          8): the register's bits above it, which the calling convention
 *          leaves undefined, are not part of the key; else 0
 *
 * A thread id is the kernel's pid of the thread in the initial pid
 * namespace, as tracepoint fields carry it (sched_wakeup's pid,
 * sched_switch's next_pid), so that a PEA_LAT_KEY_TID start pairs with
 * a PEA_LAT_KEY_FIELD end and back. The all-zero key is PEA_LAT_KEY_TID.
 */
struct pea_lat_key {
	__u32 kind;
	__u32 arg;
	__u32 offset;
	__u32 size;
};

/**
 * struct pea_agg_attr - argument of PEA_LINK_IOC_AGG_CREATE
 * @size:       sizeof(struct pea_agg_attr) (PEA_AGG_ATTR_SIZE_VER0 or more)
 * @flags:      PEA_AGG_F_*
 * @max_keys:   keys each CPU's table holds, 1 .. PEA_AGG_MAX_KEYS (E2BIG
 *              when one CPU's table would pass INT_MAX bytes); a hit
 *              whose key is new when its CPU's table is full is counted
 *              in dropped, never folded into another key
 * @keys:       PEA_AGG_KEY_* parts, at most PEA_AGG_KEY_WORDS words in
 *              all (PEA_AGG_WIDE_KEY_WORDS with PEA_AGG_F_WIDE_KEY), the
 *              rest PEA_AGG_KEY_NONE; each part once, but
 *              PEA_AGG_KEY_FETCH, which may come up to PEA_AGG_KEY_PARTS
 *              times (one per fetch: key_fetch, then key_fetch_more[])
 * @value:      PEA_AGG_VAL_*
 * @val_arg:    PEA_AGG_VAL_ARG: the argument, 0 .. 5; else 0
 * @val_offset: PEA_AGG_VAL_FIELD: the field's offset in the raw entry
 * @val_size:   PEA_AGG_VAL_FIELD: 1, 2, 4 or 8; else 0
 * @hist:       PEA_AGG_HIST_* (a histogram needs a value)
 * @reserved:   zero
 * @lin_min:    PEA_AGG_HIST_LINEAR: the lowest bound; else 0
 * @lin_max:    PEA_AGG_HIST_LINEAR: the highest bound, above lin_min
 * @lin_step:   PEA_AGG_HIST_LINEAR: the width of a bucket, at least 1
 * @pair_fd:    PEA_AGG_VAL_PAIRED: a link fd with a pairing table
 *              (PEA_LINK_IOC_LAT_CREATE; EBADF: no fd; EINVAL: not such
 *              a link); else 0
 * @reserved2:  zero
 * @pair_key:   PEA_AGG_VAL_PAIRED: this link's pairing key, which the
 *              start link's must equal for the hits to pair (the kinds
 *              as in struct pea_lat_attr); else zero
 * @key_offset: PEA_AGG_KEY_FIELD: the field's offset in the raw entry;
 *              else 0
 * @key_size:   PEA_AGG_KEY_FIELD: its bytes, 1 .. 16 (a comm is 16); else
 *              0. A hit whose entry is too short is counted in errors
 *
 * @key_fetch:  PEA_AGG_KEY_FETCH: the fetch of the link's fetch set
 *              (its index in the probe attr's @fetches); else 0
 * @key_fetch_size: PEA_AGG_KEY_FETCH of a string or an array: the bytes
 *              its key keeps, 1 .. PEA_AGG_FETCH_KEY_MAX; of an integer:
 *              0 (one word); else 0
 * @val_fetch:  PEA_AGG_VAL_FETCH: the fetch, an integer one; else 0
 * @reserved3:  zero
 * @key_fetch_more: (PEA_AGG_ATTR_SIZE_VER4) the fetch of the second,
 *              third and fourth PEA_AGG_KEY_FETCH part of @keys, as
 *              @key_fetch is the first's; else 0
 * @key_fetch_size_more: their sizes, as @key_fetch_size (the bound:
 *              PEA_AGG_FETCH_KEY_MAX, or PEA_AGG_WIDE_FETCH_KEY_MAX with
 *              PEA_AGG_F_WIDE_KEY); else 0
 *
 * @max_stacks: with a PEA_AGG_KEY_KSTACK or _USTACK part: the distinct
 *              stacks the table stores, 1 .. PEA_AGG_MAX_STACKS; else 0
 * @stack_depth: with a stack part: frames kept of each stack, 1 ..
 *              PEA_KSTACK_MAX (EOVERFLOW past perf_event_max_stack; a
 *              deeper stack is cut there); else 0
 *
 * Which values a link gives depends on its kind: kprobes and uprobes
 * PEA_AGG_VAL_ARG (and _FETCH with fetches), their returns also
 * _LATENCY and _RET, tracepoints
 * PEA_AGG_VAL_FIELD, samplers none (EINVAL otherwise); netfilter links
 * have no tables (EOPNOTSUPP).
 *
 * Stack keys. A PEA_AGG_KEY_KSTACK word names the kernel stack of the hit
 * (kprobes: from the probed address up; kretprobes: the caller's, from
 * the return address up, where its records carry the entry's;
 * tracepoints: from the call site up, except the syscalls:* events,
 * whose registers are the user's: from pea's own frames up, as their
 * records' stacks; samplers: the interrupted kernel stack, and a
 * sampler's stack_depth at most its
 * kstack_depth); a PEA_AGG_KEY_USTACK word the user stack of a sample
 * (samplers only, stack_depth at most their ustack_depth). Uprobes take
 * neither (EINVAL), nor other kinds (EOPNOTSUPP, as above). Each stack
 * is stored once, shared by every CPU's entries, in a store of
 * max_stacks stacks per generation (memory charged with the table); the
 * word is its id, which PEA_LINK_IOC_AGG_READ's stacks buffer resolves
 * (struct pea_agg_stack). Id 0 means no stack (a sample taken in user
 * mode has no kernel stack, a kernel thread's no user stack). A hit
 * whose stack is new when the store is full is counted in dropped and in
 * stack_dropped, never folded into another stack. Ids are valid within
 * the read that returns them.
 *
 * Every kind with tables gives PEA_AGG_VAL_PAIRED with a thread key,
 * probes also with PEA_LAT_KEY_ARG, tracepoints with _FIELD, and
 * PEA_AGG_KEY_PAIR with it (a thread in the link's pid namespace, as
 * PEA_AGG_KEY_TID; an argument or field as paired); PEA_AGG_KEY_FIELD is a tracepoint's. Off-CPU
 * time is sched_switch paired with itself: a start keyed by prev_pid, an
 * end by next_pid whose table is keyed by PEA_AGG_KEY_PAIR and the field
 * next_comm, summing the time each task spent switched out.
 *
 * Fetched values (probes with fetches: kprobes, kretprobes, uprobes,
 * uretprobes, tracepoints). PEA_AGG_KEY_FETCH and PEA_AGG_VAL_FETCH take a value of
 * the link's fetch set, evaluated once per hit for the table and the
 * record alike, after the predicate (a hit it rejects is filtered, in no
 * table). A fetch index past the set, a link without fetches, a value
 * fetch that is not an integer, or a key size that does not fit its
 * fetch's type: EINVAL; a key whose parts with the fetch's take more
 * than PEA_AGG_KEY_WORDS words (or a key_fetch_size past
 * PEA_AGG_FETCH_KEY_MAX; with PEA_AGG_F_WIDE_KEY, PEA_AGG_WIDE_KEY_WORDS
 * and PEA_AGG_WIDE_FETCH_KEY_MAX): E2BIG, checked after everything else, so that
 * an attr that is also malformed gets EINVAL. (A key of the other parts
 * past the words stays EINVAL, as before fetch keys, for the binaries
 * of then.) A value fetch that failed counts the hit in errors.
 */
struct pea_agg_attr {
	__u32 size;
	__u32 flags;
	__u32 max_keys;
	__u8 keys[PEA_AGG_KEY_PARTS];
	__u32 value;
	__u32 val_arg;
	__u32 val_offset;
	__u32 val_size;
	__u32 hist;
	__u32 reserved;
	__s64 lin_min;
	__s64 lin_max;
	__u64 lin_step;
	__u32 max_stacks;
	__u32 stack_depth;
	__s32 pair_fd;
	__u32 reserved2;
	struct pea_lat_key pair_key;
	__u32 key_offset;
	__u32 key_size;
	__u32 key_fetch;
	__u32 key_fetch_size;
	__u32 val_fetch;
	__u32 reserved3;
	__u32 key_fetch_more[PEA_AGG_KEY_PARTS - 1];
	__u32 key_fetch_size_more[PEA_AGG_KEY_PARTS - 1];
};

#define PEA_AGG_ATTR_SIZE_VER0	64
#define PEA_AGG_ATTR_SIZE_VER1	72	/* max_stacks, stack_depth */
#define PEA_AGG_ATTR_SIZE_VER2	104	/* pair_fd, pair_key, key_* */
#define PEA_AGG_ATTR_SIZE_VER3	120	/* key_fetch*, val_fetch */
#define PEA_AGG_ATTR_SIZE_VER4	144	/* key_fetch_more, _size_more */

/**
 * struct pea_agg_entry - one key of one CPU, as PEA_LINK_IOC_AGG_READ
 * writes it (pea_agg_read.entry_size bytes each)
 * @key:      the key's parts in keys[] order (a comm in two words, its
 *            bytes as in memory), the unused words zero
 * @cpu:      the CPU whose table holds it
 * @reserved: zero
 * @count:    hits
 * @sum:      the values' sum (wraps past 64 bits); 0 without a value
 * @min:      the smallest value (without a value: 0)
 * @max:      the largest value (without a value: 0); @sum, @min and
 *            @max are __u64 for unsigned values (see the buckets)
 * @buckets:  pea_agg_read.nr_buckets counts (none without a histogram)
 *
 * The same key may come in several entries (each CPU's, and a read
 * without PEA_AGG_READ_F_CLEAR of a table cleared before reads two
 * generations): the reader adds them up.
 */
struct pea_agg_entry {
	__u64 key[PEA_AGG_KEY_WORDS];
	__u32 cpu;
	__u32 reserved;
	__u64 count;
	__s64 sum;
	__s64 min;
	__s64 max;
	__u64 buckets[];
};

/**
 * struct pea_agg_entry_wide - struct pea_agg_entry of a table with
 * PEA_AGG_F_WIDE_KEY: the same fields after a key of
 * PEA_AGG_WIDE_KEY_WORDS words (pea_agg_read.entry_size bytes each)
 * @key:      the key's parts in keys[] order, the unused words zero
 * @cpu:      as struct pea_agg_entry's, and the fields below
 * @reserved: zero
 * @count:    hits
 * @sum:      the values' sum
 * @min:      the smallest value
 * @max:      the largest value
 * @buckets:  pea_agg_read.nr_buckets counts
 */
struct pea_agg_entry_wide {
	__u64 key[PEA_AGG_WIDE_KEY_WORDS];
	__u32 cpu;
	__u32 reserved;
	__u64 count;
	__s64 sum;
	__s64 min;
	__s64 max;
	__u64 buckets[];
};

/* struct pea_agg_stack.kind */
#define PEA_AGG_STACK_KERNEL	1
#define PEA_AGG_STACK_USER	2

/**
 * struct pea_agg_stack - one stored stack, as PEA_LINK_IOC_AGG_READ
 * writes it into its stacks buffer (8 + 8 * @nr bytes each, one after
 * the other)
 * @id:   the id the entries' PEA_AGG_KEY_KSTACK or _USTACK words hold
 * @nr:   entries in @ips, 1 .. the table's stack_depth
 * @kind: PEA_AGG_STACK_*
 * @ips:  the addresses, innermost first (a kernel stack: as struct
 *        pea_kstack's; a user stack: the instruction pointer, then the
 *        return addresses, as struct pea_sample_record's)
 */
struct pea_agg_stack {
	__u32 id;
	__u16 nr;
	__u16 kind;
	__u64 ips[];
};

/* struct pea_agg_read.flags */
#define PEA_AGG_READ_F_CLEAR	(1U << 0)	/* empty what was read */

/**
 * struct pea_agg_read - argument of PEA_LINK_IOC_AGG_READ
 * @size:       sizeof(struct pea_agg_read) (PEA_AGG_READ_SIZE_VER0 or more)
 * @flags:      PEA_AGG_READ_F_*
 * @buf:        user pointer to @buf_len bytes for the entries
 * @buf_len:    bytes at @buf
 * @nr_entries: out: entries written; with ENOSPC, the entries there are
 *              (nothing is cleared then)
 * @entry_size: out: bytes of each entry (struct pea_agg_entry, or
 *              struct pea_agg_entry_wide with PEA_AGG_F_WIDE_KEY, and its
 *              buckets)
 * @nr_buckets: out: histogram buckets per entry
 * @hits:       out: hits the entries read count, and dropped ones
 * @dropped:    out: hits whose key did not fit in its CPU's table
 * @errors:     out: hits whose value or key could not be read (a
 *              tracepoint field past the entry, a pairing key, a
 *              PEA_AGG_VAL_FETCH fetch that failed), or, with
 *              a stack key, nested deeper than PEA_NEST_MAX on their CPU
 *              (no room to unwind in); in no entry
 * @stacks:     user pointer to @stacks_len bytes for the stacks the
 *              entries name (tables with a stack key; else unused)
 * @stacks_len: bytes at @stacks
 * @stacks_size: out: bytes of the stacks written; with ENOSPC, the bytes
 *              they take (nothing is cleared then)
 * @nr_stacks:  out: stacks written (struct pea_agg_stack each); with
 *              ENOSPC, the stacks there are
 * @reserved2:  zero
 * @stack_dropped: out: hits whose stack did not fit in the store (also
 *              counted in @dropped)
 * @unpaired:   out (PEA_AGG_READ_SIZE_VER2): PEA_AGG_VAL_PAIRED hits
 *              whose key had no start kept (never started, taken by
 *              another end, lost to a full pairing table, or its start
 *              link closed), in no entry
 *
 * A table with a stack key takes requests of PEA_AGG_READ_SIZE_VER1
 * bytes or more (EINVAL otherwise, before anything is read or cleared).
 * The out fields are written back before anything is cleared: a
 * request that cannot be written back (EFAULT) clears nothing. The read
 * may sleep (a grace period) and is interrupted by a signal (EINTR,
 * nothing read nor cleared).
 *
 * Without PEA_AGG_READ_F_CLEAR a read sees a live table: each entry's
 * fields are read one by one while hits may land. With it the read
 * switches each CPU's writers to the table's other generation, waits
 * until no writer still uses the one read, then copies it out and
 * empties it: hits == sum of count + dropped + errors + unpaired
 * exactly, and every hit is in exactly one such read. Each generation
 * has its own stack store: a read copies the stacks of the generations
 * it reads (those its entries name, and those of hits dropped because
 * their key did not fit after their stack was stored), and a
 * read-and-clear empties the store with the table.
 */
struct pea_agg_read {
	__u32 size;
	__u32 flags;
	__aligned_u64 buf;
	__u64 buf_len;
	__u32 nr_entries;
	__u32 entry_size;
	__u32 nr_buckets;
	__u32 reserved;
	__u64 hits;
	__u64 dropped;
	__u64 errors;
	__aligned_u64 stacks;
	__u64 stacks_len;
	__u64 stacks_size;
	__u32 nr_stacks;
	__u32 reserved2;
	__u64 stack_dropped;
	__u64 unpaired;
};

#define PEA_AGG_READ_SIZE_VER0	64
#define PEA_AGG_READ_SIZE_VER1	104	/* the stacks */
#define PEA_AGG_READ_SIZE_VER2	112	/* unpaired */

#define PEA_LINK_IOC_AGG_CREATE	_IOW(PEA_IOC_MAGIC, 0x38, struct pea_agg_attr)
#define PEA_LINK_IOC_AGG_READ	_IOWR(PEA_IOC_MAGIC, 0x39, struct pea_agg_read)

/* ---- Latency between two probes (ioctls on a link fd) ---- */

/*
 * PEA_LINK_IOC_LAT_CREATE makes a link a start link: each of its hits
 * keeps its time (CLOCK_MONOTONIC ns) under its pairing key in the
 * link's pairing table, one table shared by all CPUs, lock-free, NMI-safe
 * and bounded by @max_pending. An end link is any link whose aggregation
 * table takes PEA_AGG_VAL_PAIRED with this link's fd as pair_fd: its hit
 * computes its own key, takes the start kept under it out of the table
 * and counts the ns between them as its table's value (a histogram, or a
 * sum per key). A start whose key is already kept replaces the kept time
 * (@replaced), as a BPF hash map's update does (two starts of one key on
 * two CPUs at the same moment may both be kept, and two ends then take
 * them one after the other); a start that finds no
 * room is counted in @overflow and kept nowhere; an end that finds no
 * start is counted in its table's unpaired. A start may be taken by one
 * end only. Closing the start link frees the table: its end links count
 * their hits as unpaired from then on. docs/aggregations.md shows
 * runqlat and a syscall's latency done this way.
 */

/* struct pea_lat_attr.flags */
#define PEA_LAT_F_NO_RECORDS	(1U << 0)	/* the start writes no records */
#define PEA_LAT_FLAGS		PEA_LAT_F_NO_RECORDS

#define PEA_LAT_MAX_PENDING	65536	/* max_pending at most */

/**
 * struct pea_lat_attr - argument of PEA_LINK_IOC_LAT_CREATE
 * @size:        sizeof(struct pea_lat_attr) (PEA_LAT_ATTR_SIZE_VER0 or more)
 * @flags:       PEA_LAT_F_*
 * @max_pending: starts kept at once, 1 .. PEA_LAT_MAX_PENDING
 * @reserved:    zero
 * @key:         the start's pairing key: PEA_LAT_KEY_ARG for probes,
 *               _FIELD for tracepoints, _TID for any kind with tables
 *
 * The table has twice @max_pending slots (a power of two); a start
 * looks for room among the PEA_LAT_WINDOW slots from its key's hash, so
 * in a table of more slots than that a start may, rarely, overflow with
 * fewer than @max_pending kept (counted the same). Memory is charged to the link's
 * user as an aggregation table's is. Errors: EINVAL (the attr, a key the
 * link's kind does not give), EOPNOTSUPP (a kind without tables), EEXIST
 * (the link has a pairing table), ENOMEM.
 */
struct pea_lat_attr {
	__u32 size;
	__u32 flags;
	__u32 max_pending;
	__u32 reserved;
	struct pea_lat_key key;
};

#define PEA_LAT_ATTR_SIZE_VER0	32
#define PEA_LAT_WINDOW		32

/**
 * struct pea_lat_info - filled by PEA_LINK_IOC_LAT_INFO (ENOENT: the link
 * has no pairing table)
 * @started:     starts kept (a replaced one included)
 * @replaced:    starts whose key was kept already: its time replaced
 * @overflow:    starts not kept: no room (@max_pending, or the window)
 * @errors:      starts whose key could not be read (a field past the
 *               entry), not kept
 * @paired:      starts ends took out
 * @pending:     starts kept now
 * @max_pending: the attr's
 */
struct pea_lat_info {
	__u64 started;
	__u64 replaced;
	__u64 overflow;
	__u64 errors;
	__u64 paired;
	__u32 pending;
	__u32 max_pending;
};

#define PEA_LINK_IOC_LAT_CREATE	_IOW(PEA_IOC_MAGIC, 0x3A, struct pea_lat_attr)
#define PEA_LINK_IOC_LAT_INFO	_IOR(PEA_IOC_MAGIC, 0x3B, struct pea_lat_info)

/* ---- Aggregation tables shared by several links (ioctl on a link fd) ---- */

/*
 * PEA_LINK_IOC_AGG_SHARE (0x3C; 0x3D is kept for this feature too): the
 * link whose fd the ioctl is made on counts its hits in the table of the
 * link whose fd is its argument (an int, as PERF_EVENT_IOC_SET_OUTPUT's),
 * instead of in a table of its own, so that one table counts the hits of
 * several probes: PEA_AGG_KEY_PROBE (the links' ids) tells them apart,
 * and PEA_LINK_IOC_AGG_READ on any of the links reads, or reads and
 * clears, every link's hits, with the guarantees of a table of one link.
 *
 * A link fd rather than a table object of its own: a table is made for
 * a link's kind of hits and read through a link's fd already, and every
 * other reference pea takes to another link's object is a link fd too
 * (pair_fd); no new kind of file is needed, and holding the fd is what
 * reading the table takes, so the one who may share a table is the one
 * who may read it, as perf's SET_OUTPUT takes the fd of the event whose
 * ring it writes into, and a BPF program the fd of the map it updates.
 *
 * Rules. The link must be able to create the same table itself: the
 * table's attr passes PEA_LINK_IOC_AGG_CREATE's checks for it (its kind
 * gives the keys and the value; the same errnos), the fetches a fetch
 * key or value takes are of the same types in its fetch set, and its pid
 * namespace is the table's creator's (pid and tid keys name pids there).
 * PEA_AGG_F_NO_RECORDS holds for every link that shares it. A table
 * keyed by PEA_AGG_KEY_PROBE tells its links apart by their record ids
 * (the attach attr's id, or the link's own), which user space chooses:
 * a link whose id one of the table's links has already is refused
 * (EINVAL), so that their rows never merge. The table
 * lives while any of its links does (closing the link that created it
 * leaves the others counting and reading), and its memory stays charged
 * once, to its creator's user, until the last link is closed.
 * Errors: EBADF (no fd, or not a link's), EINVAL (the same link; a key
 * or value this link's kind does not give, a fetch of another type,
 * another pid namespace, a record id the table counts already under
 * PEA_AGG_KEY_PROBE), EOPNOTSUPP (a kind without tables), ENOENT (the
 * other link has no table), EEXIST (this link has one), ENOMEM.
 */
#define PEA_LINK_IOC_AGG_SHARE	_IO(PEA_IOC_MAGIC, 0x3C)
/* ---- Fetch chains (kprobes to uretprobes, tracepoints) ---- */

/*
 * A probe may carry up to PEA_FETCH_MAX fetches (struct pea_probe_attr
 * and struct pea_uprobe_attr: @fetches, @nr_fetches), each evaluated in
 * the kernel at every hit, as the fetch arguments of kprobe_events and
 * uprobe_events are (Documentation/trace/kprobetrace.rst):
 *
 *	v = the base (an argument register, the return value, the stack
 *	    pointer);
 *	for i in 0 .. nr_deref - 1:	v = *(pointer *)(v + offset[i]);
 *	the value:  PEA_FETCH_F_LOAD or a string or an array: the type read
 *		    at v + offset[nr_deref]; otherwise v itself, cut to the
 *		    type's width (offset[nr_deref] 0).
 *
 * Every read is fault-safe: a kprobe's reads of an address below the
 * task's TASK_SIZE read user memory and the others kernel memory, as
 * Linux's own kprobe fetches do on x86 (probe_mem_read()); a set bit i
 * of @user makes read i a user read whatever the address (kprobe_events'
 * "+u" and ustring). A uprobe's reads are all of the probed process's
 * memory (@user zero). A read that fails (a NULL or unmapped pointer, a
 * non-canonical address) does not fail the hit: that value is marked
 * PEA_FETCH_FAULT with the failing read's number, and the others are
 * kept. A kretprobe's or uretprobe's fetches are evaluated at the
 * return: memory as it is then, the arguments as they were at entry.
 *
 * Bounds, with Linux's errno for the same refusal in trace_probe.c:
 * more than PEA_FETCH_MAX fetches (its TOO_MANY_ARGS) or values (each
 * rounded up to 8 bytes) of more than PEA_FETCH_DATA_MAX bytes in all
 * (EVENT_TOO_BIG): E2BIG; more than PEA_FETCH_DEPTH_MAX pointer reads
 * before the value (TOO_MANY_OPS), one value of more than
 * PEA_FETCH_DATA_MAX bytes (ARRAY_TOO_BIG) and anything else malformed
 * (a base, type, size, flag or offset out of its range, a reserved field
 * not zero, a return value outside a return probe): EINVAL. At a kprobe,
 * any fetch that reads memory, user or kernel, needs CAP_BPF and
 * CAP_PERFMON (EPERM), as a kprobe program's bpf_probe_read_user() and
 * bpf_probe_read_kernel() do; one that may read kernel memory (a read
 * @user does not mark) also lockdown's LOCKDOWN_BPF_READ_KERNEL; a
 * register taken as it is needs only the kprobe's rule
 * (docs/security.md).
 */
#define PEA_FETCH_MAX		8	/* fetches per probe */
#define PEA_FETCH_DEPTH_MAX	4	/* pointer reads before the value */
#define PEA_FETCH_DATA_MAX	1024	/* value bytes per record, rounded */

/* struct pea_fetch.base */
#define PEA_FETCH_BASE_ARG	1	/* argument @arg (0..5), at entry */
#define PEA_FETCH_BASE_RET	2	/* the return value (returns only) */
#define PEA_FETCH_BASE_SP	3	/* the stack pointer at the hit */
#define PEA_FETCH_BASE_CTX	4	/* the hit's task: @arg PEA_FETCH_CTX_* */
#define PEA_FETCH_BASE_FIELD	5	/* tracepoints: a field of the entry */

/*
 * PEA_FETCH_BASE_FIELD (struct pea_tp_attr's fetches only; a probe's
 * EINVAL) starts the chain at the value of a field of the tracepoint's
 * entry, as an eprobe's $field (kernel/trace/trace_eprobe.c,
 * get_event_field()): @field_offset and @field_size must be those of a
 * field of the event's own field table (tracefs format, common_* fields
 * excluded, as trace_probe.c's parse_trace_event_arg() looks them up) that
 * is an integer or a pointer of 1, 2, 4 or 8 bytes; else EINVAL (and
 * EOPNOTSUPP where the kernel's field table is not laid out as pea reads
 * it: kernel/trace/trace.h's struct ftrace_event_field). The value
 * is zero-extended to 64 bits; @arg is 0. The rest of the chain is a
 * kprobe's: a set @user bit makes that read a user-memory read of the
 * task that hit the tracepoint (a syscall event's pointer arguments are
 * __user pointers: kprobe_events' "+u" and ustring), any other read goes
 * by the address as a kprobe's does, and takes the kernel-read rule.
 * Privilege is a kprobe fetch's: any read of memory needs CAP_BPF and
 * CAP_PERFMON (EPERM), as a tracepoint program's bpf_probe_read_user()
 * and bpf_probe_read_kernel(); a read @user does not mark also lockdown's
 * LOCKDOWN_BPF_READ_KERNEL; a field taken as it is (no read) only the
 * tracepoint's rule.
 */

/*
 * struct pea_fetch.arg of PEA_FETCH_BASE_CTX: what the task that hit the
 * probe is, as bpf_get_current_comm(), _pid_tgid(), _uid_gid() and
 * _cgroup_id() give a tracing program. Such a fetch reads no memory: no
 * deref, no flags, no offsets, @user 0. The comm, ids, cgroup and CPU
 * need nothing beyond the probe's own rule (perf's samples carry them:
 * PERF_SAMPLE_TID, _CPU, _CGROUP, attr.comm); at a kprobe the uid and gid,
 * which only a BPF program gets there, need CAP_BPF and CAP_PERFMON as a
 * memory read does (EPERM, asked before the fetches are checked, as
 * bpf() asks before its verifier). COMM takes PEA_FETCH_STR (@size bytes kept
 * at most, of at most 15); the others any integer type (cut to its
 * width).
 */
#define PEA_FETCH_CTX_COMM	1	/* the task's comm */
#define PEA_FETCH_CTX_TID	2	/* thread id, attacher's pid ns (0: not in it/released) */
#define PEA_FETCH_CTX_PID	3	/* process id (tgid), the same */
#define PEA_FETCH_CTX_UID	4	/* real uid, initial user namespace */
#define PEA_FETCH_CTX_GID	5	/* real gid, the same */
#define PEA_FETCH_CTX_CGROUP	6	/* cgroup v2 id (its directory's file handle) */
#define PEA_FETCH_CTX_CPU	7	/* the CPU of the hit */
#define PEA_FETCH_CTX_MAX	7

/* struct pea_fetch.type */
#define PEA_FETCH_U8		1
#define PEA_FETCH_U16		2
#define PEA_FETCH_U32		3
#define PEA_FETCH_U64		4
#define PEA_FETCH_S8		5
#define PEA_FETCH_S16		6
#define PEA_FETCH_S32		7
#define PEA_FETCH_S64		8
#define PEA_FETCH_STR		9	/* NUL-terminated, at most @size bytes */
#define PEA_FETCH_ARRAY		10	/* exactly @size bytes */

/* struct pea_fetch.flags */
#define PEA_FETCH_F_LOAD	(1U << 0)	/* integers: read at the address */
#define PEA_FETCH_F_PTR32	(1U << 1)	/* pointers are 4 bytes (compat) */
#define PEA_FETCH_FLAGS		(PEA_FETCH_F_LOAD | PEA_FETCH_F_PTR32)

/**
 * struct pea_fetch - one fetch chain
 * @base:     PEA_FETCH_BASE_*
 * @arg:      PEA_FETCH_BASE_ARG: the argument, 0..5; PEA_FETCH_BASE_CTX:
 *            PEA_FETCH_CTX_*; else 0
 * @nr_deref: pointer reads before the value, 0..PEA_FETCH_DEPTH_MAX
 * @type:     PEA_FETCH_U8 .. PEA_FETCH_ARRAY
 * @size:     strings: bytes kept at most (1..PEA_FETCH_DATA_MAX, the NUL
 *            not kept); arrays: bytes (1..PEA_FETCH_DATA_MAX); integers: 0
 * @flags:    PEA_FETCH_F_*
 * @user:     kprobes: bit i set makes read i (0..nr_deref, nr_deref the
 *            value's) a user-memory read; uprobes: 0
 * @offset:   added to the address of each read, offset[nr_deref] for the
 *            value's; the entries past nr_deref are 0
 * @field_offset: PEA_FETCH_BASE_FIELD: the field's offset in the entry
 *            (tracefs format "offset:"); else 0
 * @field_size: PEA_FETCH_BASE_FIELD: its size, 1, 2, 4 or 8; else 0
 * @reserved: zero but for a PEA_FETCH_BASE_FIELD fetch (the two above)
 */
struct pea_fetch {
	__u8 base;
	__u8 arg;
	__u8 nr_deref;
	__u8 type;
	__u16 size;
	__u8 flags;
	__u8 user;
	__s32 offset[PEA_FETCH_DEPTH_MAX + 1];
	union {
		struct {
			__u16 field_offset;
			__u16 field_size;
		};
		__u32 reserved;		/* its name before the fields */
	};
};

/* struct pea_probe_record.flags: a struct pea_fetch_block follows */
#define PEA_REC_F_FETCH		(1U << 10)

/* struct pea_fetch_value.status */
#define PEA_FETCH_OK		0
#define PEA_FETCH_FAULT		1	/* read @step failed: no bytes */
#define PEA_FETCH_TRUNCATED	2	/* a string longer than @size: cut */

/**
 * struct pea_fetch_value - where one fetch's value sits in its block
 * @offset:   of its bytes, from the start of struct pea_fetch_block (a
 *            multiple of 8)
 * @len:      its bytes: an integer's width, a string's length (no NUL),
 *            an array's size; 0 on a fault
 * @status:   PEA_FETCH_OK, _FAULT or _TRUNCATED
 * @step:     PEA_FETCH_FAULT: the read that failed (0..nr_deref); else 0
 * @reserved: zero
 *
 * Integers are stored in the CPU's byte order at their width; a signed
 * type's reader sign-extends.
 */
struct pea_fetch_value {
	__u16 offset;
	__u16 len;
	__u8 status;
	__u8 step;
	__u16 reserved;
};

/**
 * struct pea_fetch_block - the fetched values of a hit (PEA_REC_F_FETCH)
 * @nr:       values, one per fetch of the probe, in their order
 * @size:     bytes of the block, values included (a multiple of 8)
 * @reserved: zero
 * @values:   where each value sits; the values' bytes follow
 *
 * It follows the record's other parts (counters, capture) at the next
 * 8-byte boundary from the record's start, before a struct pea_kstack.
 */
struct pea_fetch_block {
	__u16 nr;
	__u16 size;
	__u32 reserved;
	struct pea_fetch_value values[];
};

/* ---- Predicates on fetched values (kprobes to uretprobes) ---- */

/*
 * A probe with fetches may carry a predicate on their values (@preds,
 * @nr_preds of its attr): a program of struct pea_pred in postfix order,
 * evaluated in the kernel after the fetches and before the record is
 * reserved. PEA_PRED_CMP pushes one comparison's truth, PEA_PRED_AND and
 * PEA_PRED_OR pop two and push one, PEA_PRED_NOT negates the top; the
 * program must leave exactly one value, which decides: true writes the
 * record, false counts the hit as filtered (PEA_LINK_IOC_INFO's
 * @filtered) and writes nothing. "a == 1 || !(b > 2 && c ~ "x*")" is
 *
 *	CMP(a == 1) CMP(b > 2) CMP(c ~ "x*") AND NOT OR
 *
 * A comparison on a value whose fetch faulted is false. Integers compare
 * as their fetch's type (signed or not) with @value: PEA_TP_OP_EQ, _NE,
 * _LT, _GT, PEA_PRED_OP_LE, _GE and _AND (bits in common, within the
 * type's width); @value must be one the type holds (for a signed type
 * sign-extended to 64 bits; for _AND either range of the width).
 * Strings (a truncated one by its kept bytes) compare with @str:
 * PEA_TP_OP_EQ, _NE and _GLOB ('*' any run, '?' one byte). Arrays take
 * no comparison.
 *
 * Bounds: more than PEA_PRED_MAX instructions, or more than
 * PEA_PRED_DEPTH_MAX values pending at once: E2BIG. A program that does
 * not leave one value, an operator without its operands, a fetch index
 * past the probe's fetches, an operator its value's type does not take,
 * an operand of the other kind not zero, an integer @value the fetch's
 * type cannot hold (-1 on a u32, 0x100 on an s8), a @str without its
 * NUL, a reserved field not zero, or a predicate on a probe without
 * fetches: EINVAL.
 */
#define PEA_PRED_MAX		32	/* instructions per probe */
#define PEA_PRED_DEPTH_MAX	16	/* values pending at once */
#define PEA_PRED_STR_MAX	64	/* string operand, NUL included */

/* struct pea_pred.op */
#define PEA_PRED_CMP		1
#define PEA_PRED_AND		2
#define PEA_PRED_OR		3
#define PEA_PRED_NOT		4

/* struct pea_pred.cmp: PEA_TP_OP_EQ .. PEA_TP_OP_GLOB, and: */
#define PEA_PRED_OP_LE		7	/* numbers */
#define PEA_PRED_OP_GE		8	/* numbers */

/**
 * struct pea_pred - one instruction of a predicate
 * @op:       PEA_PRED_*
 * @fetch:    PEA_PRED_CMP: the fetch whose value it compares (its index in
 *            the probe's fetches); else 0
 * @cmp:      PEA_PRED_CMP: PEA_TP_OP_* or PEA_PRED_OP_*; else 0
 * @reserved: zero
 * @value:    integers: the operand; else 0
 * @str:      strings: the NUL-terminated operand or pattern; else zeroes
 */
struct pea_pred {
	__u8 op;
	__u8 fetch;
	__u8 cmp;
	__u8 reserved[5];
	__u64 value;
	char str[PEA_PRED_STR_MAX];
};

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
#define PEA_SAMPLE_F_TASK	(1U << 5)	/* per task: see @filter_tgid */
/*
 * PEA_SAMPLE_F_USER_REGS (issue 24, branch dwunw): every record of a
 * task with a user context also holds its user registers and a copy of
 * the top @stack_user bytes of its user stack (struct pea_user_regs), as
 * perf's PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER, for DWARF
 * unwinding in user space. Not with PEA_SAMPLE_F_NO_USER.
 */
#define PEA_SAMPLE_F_USER_REGS	(1U << 6)
#define PEA_SAMPLE_FLAGS	(PEA_SAMPLE_F_CLOEXEC | PEA_SAMPLE_F_FREQ | \
				 PEA_SAMPLE_F_NO_KERNEL | PEA_SAMPLE_F_NO_USER | \
				 PEA_SAMPLE_F_TASK | PEA_SAMPLE_F_USER_REGS)

/*
 * The largest @stack_user: a multiple of 8 below USHRT_MAX, as
 * perf_event_open() takes sample_stack_user. The whole record at its
 * largest (struct pea_sample_record, both stacks at their depths, struct
 * pea_user_regs and @stack_user bytes) must also fit in one record:
 * PEA_SAMPLE_RECORD_MAX bytes (E2BIG otherwise). A ring smaller than a
 * record drops it, counted as lost.
 */
#define PEA_STACK_USER_MAX	65528
#define PEA_SAMPLE_RECORD_MAX	65488

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
 *                namespace; other tasks' overflows count as filtered.
 *                With PEA_SAMPLE_F_TASK: the task to sample (a thread id,
 *                0: the caller), with the tasks it creates from then on
 *                (as perf_event_open(pid, cpu) with attr.inherit): one
 *                event follows the task instead of one per CPU, and the
 *                rule is perf's for a task's event, not the CPU-wide one
 *                (ESRCH: no such task; the PMU's errors; EACCES: another
 *                process's task without CAP_PERFMON, unless pea is
 *                loaded with task_ptrace=1, which admits ptrace read
 *                access without the LSM's ptrace hook)
 * @filter_cpu:   only sample this CPU (-1: every online CPU); with
 *                PEA_SAMPLE_F_TASK the task's event counts on that CPU
 *                only, as perf_event_open(pid, cpu) (-1: wherever it
 *                runs)
 * @kstack_depth: kernel frames per record at most (0..PEA_KSTACK_MAX and
 *                perf_event_max_stack); 0 with PEA_SAMPLE_F_NO_KERNEL
 * @ustack_depth: user frames per record at most (0..PEA_USTACK_MAX and
 *                perf_event_max_stack); 0 with PEA_SAMPLE_F_NO_USER. A
 *                record holds perf_event_max_stack entries at most (as
 *                at the attach), kernel and user together: the user part
 *                gets what the kernel part left, as perf's callchains
 * @stack_user:   with PEA_SAMPLE_F_USER_REGS, the bytes of user stack
 *                each record copies from the stack pointer up (0: the
 *                registers only; a multiple of 8, at most
 *                PEA_STACK_USER_MAX: EINVAL otherwise); 0 without it
 * @reserved3:    zero
 * @reserved2:    @stack_user and @reserved3 under their old name
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
	union {
		struct {
			__u32 stack_user;
			__u32 reserved3;
		};
		__u64 reserved2;	/* its name before stack_user */
	};
};

/* struct pea_sample_record.flags (struct pea_probe_record's bits, plus:) */
#define PEA_REC_F_SAMPLE	(1U << 12)	/* a struct pea_sample_record */
#define PEA_REC_F_USER_MODE	(1U << 13)	/* interrupted in user mode */
#define PEA_REC_F_UREGS		(1U << 15)	/* struct pea_user_regs ends it */

/* struct pea_user_regs.abi, perf's PERF_SAMPLE_REGS_ABI_* values */
#define PEA_UREGS_ABI_32	1
#define PEA_UREGS_ABI_64	2

/* struct pea_user_regs.regs[]: x86-64's DWARF register numbers 0..16 */
#define PEA_UREG_AX	0
#define PEA_UREG_DX	1
#define PEA_UREG_CX	2
#define PEA_UREG_BX	3
#define PEA_UREG_SI	4
#define PEA_UREG_DI	5
#define PEA_UREG_BP	6
#define PEA_UREG_SP	7
#define PEA_UREG_R8	8	/* r8..r15: 8..15 */
#define PEA_UREG_IP	16
#define PEA_UREGS_NR	17

/**
 * struct pea_user_regs - a sample's user registers and stack copy
 * @abi:        PEA_UREGS_ABI_64, or PEA_UREGS_ABI_32 for a 32-bit task
 *              (then each register holds its 32-bit value; 8..15 zero)
 * @stack_size: bytes of @stack that were copied (perf's dyn_size): from
 *              @regs[PEA_UREG_SP] up, at most the attr's @stack_user,
 *              cut at the first page that cannot be read without a
 *              fault (past the top of the stack, not present) and at
 *              TASK_SIZE
 * @regs:       the task's user registers, in DWARF order (PEA_UREG_*):
 *              the interrupted ones when the sample came in user mode,
 *              else those the task entered the kernel with (as
 *              perf_sample_regs_user())
 * @stack:      @stack_size bytes, then zeroes to the next 8-byte boundary
 *
 * With PEA_SAMPLE_F_USER_REGS, a sample of a task with a user context
 * (not a kernel thread, a user worker or an exiting task that has given
 * up its memory) ends with one, after @ips, and has PEA_REC_F_UREGS.
 */
struct pea_user_regs {
	__u32 abi;
	__u32 stack_size;
	__u64 regs[PEA_UREGS_NR];
	__u8 stack[];
};

/**
 * struct pea_sample_record - the payload every overflow writes
 * @time_ns:   CLOCK_MONOTONIC, ns
 * @id:        the producer id (struct pea_sample_attr.id or the link id)
 * @ip:        the interrupted instruction pointer (user or kernel; with
 *             PEA_SAMPLE_F_NO_KERNEL always the user's, even when a PMU's
 *             skid let the overflow land in the kernel)
 * @cpu:       the CPU
 * @pid:       thread id, in the attacher's pid namespace (0: idle; -1:
 *             a task being reaped, which has no pid any more, as perf)
 * @tgid:      process id, in the attacher's pid namespace (-1 likewise)
 * @flags:     PEA_REC_F_SAMPLE, maybe PEA_REC_F_USER_MODE and
 *             PEA_REC_F_UREGS
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
 * @ips:       @kstack_nr + @ustack_nr addresses, then with
 *             PEA_REC_F_UREGS a struct pea_user_regs
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

/* ---- Fprobe producers: one link on many functions (issue 21) ---- */

/*
 * PEA_MAP_IOC_ATTACH_FPROBE (0x19, the fprobe branch's number) attaches
 * one producer to a list of kernel functions, by name, through one fprobe
 * (Linux's ftrace-based multi-function probe, CONFIG_FPROBE): one ftrace
 * update for the whole list, where a kprobe per function patches each
 * one apart. Where the kernel has no fprobe (Debian's 6.1; a Kbuild
 * probe decides) it answers EOPNOTSUPP, and a tool attaches one kprobe
 * per function instead.
 *
 * Every hit writes the struct pea_probe_record a kprobe on that function
 * writes (a kretprobe's with PEA_FPROBE_F_RETURN), with @addr the
 * function's ftrace location (its entry, after an endbr64: the address
 * a kprobe on the function's name has) and @id telling which function
 * hit: @id + i for the attr's i-th name when @id is not 0; with @id 0,
 * the link's id for all of them, @addr alone telling them apart. The
 * link's PEA_AGG_KEY_PROBE is the record's @id. Fetches, predicates,
 * context values, captures, stacks, the process-tree bits and in-kernel
 * tables are a kprobe link's (struct pea_probe_attr), with the same
 * rules; a return link's fetches are evaluated at return, as a
 * kretprobe's.
 *
 * Each name is resolved and judged as a kprobe on it is: registered
 * (disabled, never armed) with the kprobe layer, which refuses what it
 * refuses (ENOENT: no such function; EINVAL: the kprobe blacklist,
 * NOKPROBE_SYMBOL, __kprobes; EILSEQ ...), then unregistered; a function
 * without an ftrace location at its entry (notrace: trace_kprobe's rule)
 * is EINVAL. A name twice, or two names of one function: EINVAL. A module
 * whose function is on the list may be unloaded: its functions stop
 * hitting, and a later module loaded at the same address is not traced
 * (one gone before the fprobe is registered: ENOENT, also when it goes
 * while the kprobe layer judges its name, whose EINVAL for an address
 * in no module's text is tried again; one that goes later in the attach
 * is only gone, as a kprobe's function). A caller killed while the names
 * are judged stops there (EINTR, never seen by it).
 *
 * The privilege is the kprobe's for the same functions (the kprobe PMU's
 * rule, then CAP_BPF and CAP_PERFMON for a capture or fetch that reads
 * memory; lockdown's kprobe and kernel-read rules): the records are the
 * ones a kprobe per function would give (docs/security.md).
 *
 * Limits: @nr_syms at most the module parameter max_fprobe_funcs
 * (default 4096, at most PEA_FPROBE_FUNCS_MAX; E2BIG beyond). The link is
 * charged as a kretprobe's instances are (max_user_probe_kb,
 * max_probe_kb): its function table, the ftrace filter
 * hash and trampoline, and with PEA_FPROBE_F_RETURN its @maxactive
 * return nodes (each with the entry's arguments, capture and stack). A
 * return link closed while calls are in flight keeps its charge until
 * the kernel freed its nodes: their calls returned (or their tasks are
 * gone).
 *
 * Missed hits (struct pea_link_info @missed): fprobe's own count (a hit
 * inside another ftrace callback of the same context: its recursion
 * guard, at the entry or at the return; a return with every node in use)
 * plus hits where RCU is not watching (a return link's); hits + missed is every
 * call, up to fprobe's own count, an unlocked increment of one word from
 * every CPU (as a kprobe's nmissed): misses on several CPUs at the same
 * instant may count once.
 */

#define PEA_FPROBE_FUNCS_MAX	65536	/* max_fprobe_funcs' ceiling */
/*
 * Return nodes of one link, all functions together: a kretprobe's bound
 * (each node's call holds a slot of the link's in-flight table, which a
 * claim scans).
 */
#define PEA_FPROBE_MAXACTIVE_MAX PEA_MAXACTIVE_MAX

/* struct pea_fprobe_attr.flags: the bits of struct pea_probe_attr's */
#define PEA_FPROBE_F_RETURN	PEA_PROBE_F_RETPROBE	/* at return */
#define PEA_FPROBE_F_CLOEXEC	PEA_PROBE_F_CLOEXEC
#define PEA_FPROBE_F_DESCENDANTS PEA_PROBE_F_DESCENDANTS
#define PEA_FPROBE_F_DESC_ONLY	PEA_PROBE_F_DESC_ONLY
#define PEA_FPROBE_FLAGS	(PEA_FPROBE_F_RETURN | PEA_FPROBE_F_CLOEXEC | \
				 PEA_FPROBE_F_DESCENDANTS | \
				 PEA_FPROBE_F_DESC_ONLY)

/**
 * struct pea_fprobe_attr - argument of PEA_MAP_IOC_ATTACH_FPROBE
 * @size:          sizeof(struct pea_fprobe_attr) (at least
 *                 PEA_FPROBE_ATTR_SIZE_VER0; larger with a zero tail)
 * @flags:         PEA_FPROBE_F_*: entry records, or return records with
 *                 PEA_FPROBE_F_RETURN (both: two links)
 * @syms:          user pointer to @nr_syms names, PEA_SYM_LEN bytes each
 *                 (NUL-terminated, as struct pea_probe_attr's @symbol,
 *                 "module:name" accepted as the kprobe layer takes it)
 * @nr_syms:       1..max_fprobe_funcs
 * @maxactive:     PEA_FPROBE_F_RETURN: calls in flight at once, all
 *                 functions together, 1..PEA_FPROBE_MAXACTIVE_MAX (0:
 *                 fprobe's default, @nr_syms * 2 * possible CPUs, at most
 *                 PEA_FPROBE_MAXACTIVE_MAX); else 0
 * @id:            records of the i-th function carry @id + i (0: the link
 *                 id, for every function); @id + @nr_syms - 1 must not wrap
 * @filter_tgid:   as struct pea_probe_attr's (a return link: at entry)
 * @filter_cpu:    as struct pea_probe_attr's (a return link: at return)
 * @capture_arg:   as struct pea_probe_attr's
 * @capture_mode:  as struct pea_probe_attr's
 * @capture_len:   as struct pea_probe_attr's
 * @capture_flags: as struct pea_probe_attr's
 * @kstack_depth:  as struct pea_probe_attr's
 * @ustack_depth:  as struct pea_probe_attr's
 * @fetches:       as struct pea_probe_attr's
 * @nr_fetches:    as struct pea_probe_attr's
 * @reserved2:     zero
 * @preds:         as struct pea_probe_attr's
 * @nr_preds:      as struct pea_probe_attr's
 * @reserved3:     zero
 *
 * Names rather than addresses: they are resolved as a kprobe's @symbol
 * is (the same rules, the same errnos), need no kallsyms addresses
 * (hidden from callers without CAP_SYSLOG under kptr_restrict), and name
 * the same function at the ioctl whatever was loaded since the caller
 * listed them.
 */
struct pea_fprobe_attr {
	__u32 size;
	__u32 flags;
	__aligned_u64 syms;
	__u32 nr_syms;
	__u32 maxactive;
	__u64 id;
	__s32 filter_tgid;
	__s32 filter_cpu;
	__u32 capture_arg;
	__u32 capture_mode;
	__u32 capture_len;
	__u32 capture_flags;
	__u32 kstack_depth;
	__u32 ustack_depth;
	__aligned_u64 fetches;
	__u32 nr_fetches;
	__u32 reserved2;
	__aligned_u64 preds;
	__u32 nr_preds;
	__u32 reserved3;
};

#define PEA_FPROBE_ATTR_SIZE_VER0	96

#define PEA_MAP_IOC_ATTACH_FPROBE _IOW(PEA_IOC_MAGIC, 0x19, struct pea_fprobe_attr)

#endif /* _UAPI_LINUX_PEA_H */
