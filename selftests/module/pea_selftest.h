/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pea_selftest: the test-only module's ioctls, shared by the module and
 * the user-space selftests. Not part of pea's ABI.
 */
#ifndef _PEA_SELFTEST_H
#define _PEA_SELFTEST_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PEA_ST_DEVICE		"/dev/pea_selftest"
#define PEA_ST_MAGIC		0xEB

/* Producer sources of the storm, one per context. */
enum pea_st_source {
	PEA_ST_TASK = 0,	/* a kthread bound to the CPU */
	PEA_ST_SOFTIRQ,		/* a pinned timer_list */
	PEA_ST_HARDIRQ,		/* a pinned hrtimer */
	PEA_ST_NMI,		/* an NMI self-IPI sent by the hrtimer */
	PEA_ST_NR_SOURCES,
};

/* Context bits each storm record carries, as seen by the producer. */
#define PEA_ST_CTX_TASK		(1U << 0)
#define PEA_ST_CTX_SOFTIRQ	(1U << 1)
#define PEA_ST_CTX_HARDIRQ	(1U << 2)
#define PEA_ST_CTX_NMI		(1U << 3)

/* Payload of every storm record; @len bytes of pattern follow. */
struct pea_st_record {
	__u32 source;
	__u32 cpu;
	__u64 seq;		/* per CPU and source, counts every attempt */
	__u32 ctx;		/* PEA_ST_CTX_* */
	__u32 len;		/* pattern bytes after this header */
	__u32 csum;		/* pea_st_csum() of the header (csum 0) + data */
	__u32 pad;
};

/* Pattern byte i of record (src, cpu, seq). */
static inline __u8 pea_st_pattern(__u32 src, __u32 cpu, __u64 seq, __u32 i)
{
	return (__u8)(seq * 31 + i * 7 + src * 3 + cpu);
}

/* Pattern bytes of record (src, seq): 0 .. 255. */
static inline __u32 pea_st_len(__u32 src, __u64 seq)
{
	return (__u32)((seq * 37 + src * 11) % 256);
}

static inline __u32 pea_st_csum(const void *buf, __u32 n)
{
	const __u8 *p = (const __u8 *)buf;
	__u32 h = 2166136261u;
	__u32 i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

/* PEA_ST_IOC_OUTPUT: call pea_output() @count times from task context. */
struct pea_st_output {
	char map[16];
	__u64 flags;
	__aligned_u64 data;	/* user pointer to @size bytes */
	__u64 size;
	__u32 count;
	__u32 n_ok;		/* out: calls that returned 0 */
	__s64 ret;		/* out: the last call's return value */
	__s32 cpu;		/* out: the CPU the calls ran on */
	__u32 pad;
};

/* PEA_ST_IOC_NEST: nest reservations on this CPU until one fails. */
struct pea_st_nest {
	char map[16];
	__u32 size;		/* payload bytes of each record */
	__u32 depth;		/* out: reservations that succeeded */
	__s64 ret;		/* out: the return value of the one that failed */
	__s32 cpu;		/* out */
	__u32 pad;
};

struct pea_st_storm {
	char map[16];
	__u32 sources;		/* bit mask of 1 << enum pea_st_source */
	__u32 hrtimer_us;	/* hrtimer period */
	__u32 task_burst;	/* records per kthread round */
	__u32 task_sleep_us;	/* kthread pause between rounds */
	__u32 nmi_every;	/* send an NMI every this many hrtimer ticks */
	__u32 pad;
};

/* Per CPU and source counters, filled by PEA_ST_IOC_STORM_STOP. */
struct pea_st_counts {
	__u64 attempts;
	__u64 ok;
	__u64 nospc;
	__u64 other;		/* any other error */
	__s64 last_other;	/* the last such error */
};

#define PEA_ST_MAX_CPUS		64

struct pea_st_result {
	__u32 nr_cpus;
	__u32 pad;
	struct pea_st_counts c[PEA_ST_MAX_CPUS][PEA_ST_NR_SOURCES];
};

/* PEA_ST_IOC_HOLD / _RELEASE: the module keeps a reference on a map. */
struct pea_st_hold {
	char map[16];
};

#define PEA_ST_IOC_OUTPUT	_IOWR(PEA_ST_MAGIC, 1, struct pea_st_output)
#define PEA_ST_IOC_NEST		_IOWR(PEA_ST_MAGIC, 2, struct pea_st_nest)
#define PEA_ST_IOC_STORM_START	_IOW(PEA_ST_MAGIC, 3, struct pea_st_storm)
#define PEA_ST_IOC_STORM_STOP	_IOR(PEA_ST_MAGIC, 4, struct pea_st_result)
#define PEA_ST_IOC_HOLD		_IOW(PEA_ST_MAGIC, 5, struct pea_st_hold)
#define PEA_ST_IOC_RELEASE	_IO(PEA_ST_MAGIC, 6)

/*
 * PEA_ST_IOC_CONTEXTS: call pea_output() once from each of these execution
 * contexts, all on the calling CPU, and report what each context was.
 * Their nature is what PREEMPT_RT changes: there timers and non-hard
 * hrtimers expire in a softirq thread and non-hard irq_work runs in a
 * thread, all preemptible, where other kernels run them in interrupts.
 */
enum pea_st_exec {
	PEA_ST_EXEC_TASK,		/* the ioctl itself */
	PEA_ST_EXEC_TIMER,		/* a pinned timer_list */
	PEA_ST_EXEC_HRTIMER,		/* a pinned hrtimer, HRTIMER_MODE_REL_PINNED */
	PEA_ST_EXEC_HRTIMER_HARD,	/* ... HRTIMER_MODE_REL_PINNED_HARD */
	PEA_ST_EXEC_IRQ_WORK,		/* init_irq_work() */
	PEA_ST_EXEC_IRQ_WORK_HARD,	/* IRQ_WORK_INIT_HARD() */
	PEA_ST_EXEC_NR,
};

struct pea_st_exec_info {
	__u32 ctx;		/* PEA_ST_CTX_* as the storm records it */
	__u32 preemptible;	/* preemptible() was true before pea_output() */
	__u32 kthread;		/* current is a kernel thread */
	__s32 cpu;		/* where it ran */
	__s64 ret;		/* pea_output()'s return value */
	char comm[16];		/* current->comm */
};

struct pea_st_contexts {
	char map[16];		/* pea_output(map, PEA_F_CURRENT_CPU, ...) */
	__u32 preempt_rt;	/* out: the module was built for PREEMPT_RT */
	__s32 cpu;		/* out: the calling CPU */
	struct pea_st_exec_info e[PEA_ST_EXEC_NR];
};

#define PEA_ST_IOC_CONTEXTS	_IOWR(PEA_ST_MAGIC, 0x22, struct pea_st_contexts)

/* ---- Counter reads (pea_read_value(), pea_read()) ---- */

/* Where PEA_ST_IOC_READ makes its calls, always on the calling CPU. */
enum pea_st_read_ctx {
	PEA_ST_READ_TASK = 0,	/* the ioctl itself, preemptible */
	PEA_ST_READ_HARDIRQ,	/* a pinned hrtimer */
	PEA_ST_READ_NMI,	/* an NMI self-IPI */
	PEA_ST_READ_KPROBE,	/* a kprobe on a test-module function */
	PEA_ST_READ_NR_CTX,
};

/* Every byte of pea_st_read.buf before the call. */
#define PEA_ST_READ_FILL	0xa5a5a5a5a5a5a5a5ULL

/*
 * PEA_ST_IOC_READ: call pea_read_value(map, flags, buf, size) and then
 * pea_read(map, flags) in the chosen context on the calling CPU.
 */
struct pea_st_read {
	char map[16];
	__u64 flags;
	__u32 size;		/* passed to pea_read_value(); at most 32 */
	__u32 ctx;		/* enum pea_st_read_ctx */
	__s64 ret;		/* out: pea_read_value()'s return */
	__u64 buf[4];		/* out: its buffer, PEA_ST_READ_FILL before */
	__u64 read_ret;		/* out: pea_read()'s return */
	__s32 cpu;		/* out: the CPU the calls ran on */
	__u32 seen_ctx;		/* out: PEA_ST_CTX_* the calls ran in */
};

#define PEA_ST_IOC_READ		_IOWR(PEA_ST_MAGIC, 0x20, struct pea_st_read)

/*
 * PEA_ST_IOC_EXIT_MARK: mark the calling task. When it passes
 * proc_exit_connector() in do_exit() (or mpol_put_task_policy(), right
 * after it, on kernels without CONFIG_PROC_EVENTS), that is after
 * exit_notify(), where an autoreaped task has no pids any more, a kprobe
 * calls pea_output(map, PEA_F_CURRENT_CPU) with the 8 bytes
 * PEA_ST_EXIT_PAYLOAD. One task at a time.
 */
struct pea_st_exit {
	char map[16];
};

#define PEA_ST_EXIT_PAYLOAD	"st_exit"
#define PEA_ST_IOC_EXIT_MARK	_IOW(PEA_ST_MAGIC, 0x21, struct pea_st_exit)

/*
 * The test PMU, registered while pea_selftest is loaded: a CPU-only PMU
 * (like an uncore PMU) with PEA_ST_PMU_SLOTS counters per CPU, so that a
 * second counter on a CPU must be multiplexed. Its type is in
 * /sys/bus/event_source/devices/pea_st/type; format "event" is
 * config:0-7; event alias "ns" is event=0x00.
 */
#define PEA_ST_PMU_NAME		"pea_st"
#define PEA_ST_PMU_SLOTS	1
#define PEA_ST_PMU_NS		0	/* config: ns while on the PMU */
#define PEA_ST_PMU_UNSUPPORTED	1	/* config: event_init gives EOPNOTSUPP */

/*
 * The package test PMU, "pea_st_pkg", also registered while pea_selftest
 * is loaded: like an uncore PMU, one counter serves the whole system from
 * one designated CPU, the one in its sysfs "cpumask" (at load, the last
 * online CPU). event_init puts every event on that CPU, whatever CPU was
 * asked for; when that CPU goes offline the PMU designates the highest
 * other online CPU and moves its events there with
 * perf_pmu_migrate_context(). It counts ns while active (local_clock()).
 * Its sysfs directory also holds "st_total", the ns it has added to the
 * counts of all its events, "st_reads", the calls of its read method, and
 * "st_wrong_reads", those made on a CPU other than the event's active one.
 */
#define PEA_ST_PKG_PMU_NAME	"pea_st_pkg"
#define PEA_ST_PKG_NS		0	/* config: ns while active */
#define PEA_ST_PKG_NS_PKGREAD	1	/* the same, PERF_EV_CAP_READ_ACTIVE_PKG */

/*
 * On kernels with PMU scopes (6.12), "pea_st_scope": the same counter
 * (config PEA_ST_PKG_NS, counting into st_total) with the system-wide
 * scope: perf keeps its events on the CPU asked for and lets any online
 * CPU read them (PERF_EV_CAP_READ_SCOPE). Absent on older kernels.
 */
#define PEA_ST_SCOPE_PMU_NAME	"pea_st_scope"

/* ---- Ordered delivery (pea_st_order.c) ---- */

/* Payload of the token and nesting records: 24 bytes. */
struct pea_st_tok_rec {
	__u32 kind;		/* PEA_ST_TOK_* */
	__u32 cpu;		/* the CPU that wrote it */
	__u64 k;		/* hand-off (or round) number */
	__u32 ctx;		/* PEA_ST_CTX_* the writer ran in */
	__u32 pad;
};

#define PEA_ST_TOK_BEFORE	1	/* written before hand-off k */
#define PEA_ST_TOK_AFTER	2	/* written after receiving hand-off k */
#define PEA_ST_MID_INNER	3	/* NMI writer inside the reservation */
#define PEA_ST_MID_OUTER	4	/* the task writer it interrupted */

/* Receiving contexts of the token. */
enum pea_st_tok_ctx {
	PEA_ST_TOK_TASK = 0,	/* a bound kthread, woken */
	PEA_ST_TOK_HARDIRQ,	/* a function call IPI to the CPU */
	PEA_ST_TOK_NMI,		/* an NMI IPI to the CPU */
	PEA_ST_TOK_NR_CTX,
};

/*
 * PEA_ST_IOC_TOKEN: pass a token @handoffs times between random online
 * CPUs, each receiver in a random context. The holder writes BEFORE(k)
 * and passes hand-off k; the receiver writes AFTER(k), then BEFORE(k + 1)
 * and passes on. Records go to @map with PEA_F_CURRENT_CPU.
 */
struct pea_st_token {
	char map[16];
	__u32 handoffs;
	__u32 seed;
	__u32 timeout_ms;
	__u32 done;		/* out: hand-offs completed */
	__u64 recv[PEA_ST_TOK_NR_CTX];	/* out: receptions per context seen */
	__u64 written;		/* out: records pea_output() accepted */
	__u64 failed;		/* out: records it refused */
	__s64 last_err;		/* out: its last error */
};

/*
 * PEA_ST_IOC_MIDRES: @count times, on the calling CPU, a task writer
 * writes OUTER(i); a kprobe on pea_ring_clock() (inside its reservation,
 * between the head load and the cmpxchg) sends an NMI to this CPU and
 * waits for it; the NMI writes INNER(i).
 */
struct pea_st_midres {
	char map[16];
	__u32 count;
	__u32 nested;		/* out: NMIs that wrote inside the window */
	__u32 outer_ok;		/* out: OUTER records accepted */
	__s32 cpu;		/* out */
	__s64 ret;		/* out: first error */
};

/*
 * PEA_ST_IOC_CLAIMLOOP: on the calling CPU, one task writer writes a
 * record while a kprobe on pea_ring_clock() (inside its claim loop)
 * writes a nested record each time the loop reads the clock, @limit
 * times at most: each nested record makes the task writer's cmpxchg fail
 * and read the clock again. pea gives up after PEA_ST_CLAIM_TRIES tries
 * (module/pea_ring.c's PEA_RING_CLAIM_TRIES) and drops the record.
 */
struct pea_st_claimloop {
	char map[16];
	__u32 limit;
	__u32 nested;		/* out: nested records written */
	__s32 cpu;		/* out */
	__u32 pad;
	__s64 ret;		/* out: the task writer's pea_output() */
};

#define PEA_ST_CLAIM_TRIES	16

#define PEA_ST_IOC_TOKEN	_IOWR(PEA_ST_MAGIC, 0x30, struct pea_st_token)
#define PEA_ST_IOC_MIDRES	_IOWR(PEA_ST_MAGIC, 0x31, struct pea_st_midres)
#define PEA_ST_IOC_CLAIMLOOP	_IOWR(PEA_ST_MAGIC, 0x32, struct pea_st_claimloop)

/* ---- Context payload append (pea_st_ctx.c) ---- */

/* What PEA_ST_IOC_CTX_OUTPUT appends after the metadata. */
enum pea_st_ctx_kind {
	PEA_ST_SKB_LINEAR = 0,	/* pea_skb_output(), all bytes linear */
	PEA_ST_SKB_PAGED,	/* ... @headlen linear, the rest in page frags */
	PEA_ST_SKB_NULL,	/* ... with a NULL skb */
	PEA_ST_CTX_COPY,	/* pea_output_ctx() with a copy callback */
	PEA_ST_CTX_SHORT,	/* ... whose callback stops after @short_at bytes */
	PEA_ST_CTX_MEMCPY,	/* ... with no callback (plain memory) */
	PEA_ST_CTX_NULL,	/* ... with a NULL context */
	PEA_ST_CTX_NR_KINDS,
};

/* Byte i of every test context (skb or not). */
static inline __u8 pea_st_ctx_byte(__u32 i)
{
	return (__u8)(i * 13 + 5);
}

/* Byte offset in its page of paged fragment i. */
static inline __u32 pea_st_frag_off(__u32 i)
{
	return 8 * i + 3;
}

/*
 * PEA_ST_IOC_CTX_OUTPUT: build a context of @len bytes (byte i is
 * pea_st_ctx_byte(i)) and write @meta_size bytes of @meta plus the context
 * length in @flags from it, @count times, from task context on the calling
 * CPU, or from an NMI on it with @nmi. A paged skb has @headlen linear
 * bytes and fragments of at most @frag_size bytes, fragment i at
 * pea_st_frag_off(i) in its page.
 * Metadata sizes past 1 MiB are passed on with a 1-byte buffer.
 */
struct pea_st_ctx_output {
	char map[16];
	__u64 flags;
	__aligned_u64 meta;	/* user pointer to @meta_size bytes */
	__u64 meta_size;
	__u32 kind;		/* enum pea_st_ctx_kind */
	__u32 len;		/* context bytes (skb->len) */
	__u32 headlen;		/* paged skb: linear bytes */
	__u32 frag_size;	/* paged skb: bytes per fragment */
	__u32 short_at;		/* PEA_ST_CTX_SHORT: bytes the callback copies */
	__u32 count;
	__u32 n_ok;		/* out: calls that returned 0 */
	__u32 nr_frags;		/* out: the skb's paged fragments */
	__u32 data_len;		/* out: skb->data_len */
	__u32 copies;		/* out: calls of the copy callback */
	__u64 copy_off;		/* out: the last call's offset */
	__u64 copy_len;		/* out: the last call's length */
	__s64 ret;		/* out: the last call's return value */
	__s32 cpu;		/* out: the CPU the calls ran on */
	__u32 nmi;		/* make the calls in an NMI on the calling CPU */
	__u32 in_nmi;		/* out: in_nmi() was true during the calls */
	__u32 pad;
};

#define PEA_ST_IOC_CTX_OUTPUT	_IOWR(PEA_ST_MAGIC, 0x40, struct pea_st_ctx_output)

/* ---- Kernel stacks from NMI (pea_st_kstack.c) ---- */

/*
 * PEA_ST_IOC_KSTACK_NMI: call pea_st_kstack_target(i) for i in 0..@count-1
 * from pea_st_kstack_nmi(), an NMI handler, in an NMI the module sends to
 * the calling CPU (a kprobe on the target records a stack that crosses
 * from the NMI stack to the task's); with @hardirq, from
 * pea_st_kstack_irq_work(), a hard irq_work on the calling CPU, instead;
 * with @task, from the ioctl itself (task context, test_agg).
 */
struct pea_st_kstack_nmi {
	__u32 count;
	__u32 calls;		/* out: calls made */
	__s32 cpu;		/* out: the CPU they ran on */
	__u32 in_nmi;		/* out: in_nmi() was true during them */
	__u32 hardirq;		/* in hardirq context, not NMI */
	__u32 in_hardirq;	/* out: in_hardirq() && !in_nmi() was true */
	__u32 task;		/* in the ioctl itself (task context) instead */
	__u32 pad;
};

#define PEA_ST_IOC_KSTACK_NMI	_IOWR(PEA_ST_MAGIC, 0x50, struct pea_st_kstack_nmi)

/*
 * PEA_ST_IOC_DROP_ARM: at the next return of pea.ko's pea_ring_alloc(),
 * one pea_output(map, flags, 8 bytes). PEA_ST_IOC_DROP_END disarms and
 * says whether it ran and what pea_output() returned.
 */
struct pea_st_drop {
	char map[16];
	__u64 flags;		/* pea_output()'s flags */
	__s64 ret;		/* out: its return value */
	__u32 fired;		/* out: it ran */
	__u32 pad;
};

#define PEA_ST_IOC_DROP_ARM	_IOW(PEA_ST_MAGIC, 0x60, struct pea_st_drop)
#define PEA_ST_IOC_DROP_END	_IOR(PEA_ST_MAGIC, 0x61, struct pea_st_drop)

/* ---- Fetch chains (pea_st_fetch.c) ---- */

/*
 * The object pea_st_fetch_target() gets, as the module lays it out (its
 * pointers are kernel pointers, in __u64 here so that the tests know the
 * offsets). PEA_ST_IOC_FETCH builds two: the outer one (@next is the
 * inner one, @null is NULL, @bad a non-canonical "freed" pointer) and
 * the inner one (@next NULL).
 */
struct pea_st_fobj {
	__u64 magic;		/* outer PEA_ST_FETCH_MAGIC, inner ~it */
	__s32 neg;		/* outer -5, inner -7 */
	__u16 small;		/* outer 0xbeef, inner 0x1234 */
	__u8 byte;		/* outer 0x7f, inner 0x80 */
	__u8 pad;
	__aligned_u64 str;	/* outer "outer-str", inner "inner" */
	__aligned_u64 next;
	__aligned_u64 null;	/* NULL */
	__aligned_u64 bad;	/* PEA_ST_FETCH_BAD */
	__u8 bytes[8];		/* 1..8 (outer), 11..18 (inner) */
	char name[16];		/* "outer-name", "inner-name" */
};

#define PEA_ST_FETCH_MAGIC	0x1122334455667788ULL
#define PEA_ST_FETCH_BAD	0xdead000000000100ULL	/* as LIST_POISON1 */
#define PEA_ST_FETCH_KSTR	"kernel-string"
#define PEA_ST_FETCH_RET	(-22)

/*
 * PEA_ST_IOC_FETCH: call, @count times,
 * pea_st_fetch_target(outer, PEA_ST_FETCH_KSTR, @ustr, NULL, @n, -5),
 * which returns PEA_ST_FETCH_RET; @ret gets its return.
 */
struct pea_st_fetch {
	__aligned_u64 ustr;	/* a user pointer passed on as argument 2 */
	__s64 n;		/* argument 4 */
	__u32 count;
	__u32 pad;
	__s64 ret;		/* out */
};

#define PEA_ST_IOC_FETCH	_IOWR(PEA_ST_MAGIC, 0x70, struct pea_st_fetch)

/* ---- Latency between two probes (pea_st_lat.c) ---- */

/* struct pea_st_lat.flags: which calls each round makes */
#define PEA_ST_LAT_BEGIN	(1U << 0)	/* pea_st_lat_begin(key) each */
#define PEA_ST_LAT_END		(1U << 1)	/* pea_st_lat_end(key) each */

/*
 * PEA_ST_IOC_LAT: @rounds times: with PEA_ST_LAT_BEGIN,
 * pea_st_lat_begin(@key_base + k) for k = 0 .. @nkeys-1; then, if both
 * flags are set, a sleep of @delay_us (an hrtimer, usleep_range() to
 * 1/16 more); with PEA_ST_LAT_END, pea_st_lat_end(@key_base + k) for the
 * same k. Returns when all are made (EINTR: a signal in a sleep).
 */
struct pea_st_lat {
	__aligned_u64 key_base;
	__u32 nkeys;
	__u32 rounds;
	__u32 delay_us;		/* at most 1,000,000 */
	__u32 flags;		/* PEA_ST_LAT_* */
};

#define PEA_ST_IOC_LAT		_IOW(PEA_ST_MAGIC, 0x80, struct pea_st_lat)

#define PEA_ST_FP_NR		8	/* pea_st_fp_0() .. pea_st_fp_7() */
#define PEA_ST_FP_COUNT_MAX	1000000	/* calls of one function per ioctl */

/*
 * PEA_ST_IOC_FPROBE: for i in 0..PEA_ST_FP_NR-1, call pea_st_fp_<i>(@arg
 * + k, i) for k = 0 .. @counts[i]-1 (each returns i * 1000 - (@arg + k)
 * - i), then pea_st_nofp_notrace(@arg) and pea_st_nofp_blacklisted(@arg)
 * once, and pea_st_fpn_outer(@arg + k) (which calls pea_st_fpn_inner(),
 * so that two calls are in flight at once) for k = 0 .. @nested-1; @sum
 * gets the sum of every return.
 */
struct pea_st_fprobe {
	__u32 counts[PEA_ST_FP_NR];
	__s64 arg;
	__s64 sum;		/* out */
	__u32 nested;
	__u32 reserved;
};

#define PEA_ST_IOC_FPROBE	_IOWR(PEA_ST_MAGIC, 0x90, struct pea_st_fprobe)

#endif /* _PEA_SELFTEST_H */
