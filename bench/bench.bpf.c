// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF side of `make bench`: the kernel's own channels doing what
 * bench/module/pea_bench.c does with pea_output().
 *
 * kc_*: run with BPF_PROG_TEST_RUN on one CPU, loop kc_count times with
 *       bpf_loop() writing kc_size bytes of kc_payload, and time the loop
 *       with bpf_ktime_get_ns() (kc_empty times the loop alone).
 *       kc_ring_reserve_N: bpf_ringbuf_reserve() and bpf_ringbuf_submit()
 *       of an N-byte record without writing its payload (the size must
 *       be a constant for the verifier).
 * kp_*: kprobes on the same syscall as pea_bench's kprobe, each writing a
 *       64-byte payload whose first 8 bytes are bpf_ktime_get_ns().
 * kp_*_rec: the same kprobes writing what a pea kprobe producer writes
 *       (struct pea_probe_record: time, id, address, CPU, pid, tgid,
 *       comm, six arguments), to compare with pea's own producers.
 * kp_agg_*: the same kprobes aggregating in BPF maps instead, as bcc's
 *       tools do, against pea's in-kernel tables (bench/agg.c): a count
 *       in a hash map (one key), a log2 histogram of the first argument
 *       in a hash map keyed by bucket, and stackcount's way: a stack id
 *       from bpf_get_stackid() into a stack map, counted in a hash map
 *       keyed by it.
 * tp_*_rec: programs on the syscalls:sys_enter_getppid tracepoint writing
 *       what pea's tracepoint producer writes there: a struct
 *       pea_tp_record and the event's raw entry (BENCH_TP_RAW_SIZE
 *       bytes: perf's 16-byte entry and its 4 bytes of zero padding).
 */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <linux/pea.h>

#define KC_MAX_PAYLOAD	4096
#define KP_PAYLOAD	64
/* What perf's raw sample of a syscall entry without arguments holds. */
#define BENCH_TP_RAW_SIZE	20

/* Ring buffer wake-up modes of kp_ring (bench_rb_mode). */
#define RB_MODE_ADAPTIVE	0
#define RB_MODE_FORCE		1
#define RB_MODE_NONE		2
#define RB_MODE_BATCH		3

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} perf_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);	/* set by pea-bench before load */
} ring_map SEC(".maps");

char kc_payload[KC_MAX_PAYLOAD];
__u32 kc_size;
__u32 kc_count;
__u64 kc_rb_flags;
__u64 kc_ns;
__u64 kc_ok;
__s64 kc_err;

__u32 tp_event_id;	/* syscalls:sys_enter_getppid, set by pea-bench */
__u32 bench_rb_mode;
__u64 bench_rb_batch;	/* RB_MODE_BATCH: wake once this many bytes wait */
__u64 kp_fail;

struct kc_ctx {
	void *ctx;
	__u64 size;
	__u64 flags;
	__u64 ok;
	__s64 err;
};

static long kc_perf_cb(__u32 i, void *data)
{
	struct kc_ctx *c = data;
	long r;

	r = bpf_perf_event_output(c->ctx, &perf_map, BPF_F_CURRENT_CPU,
				  kc_payload, c->size);
	if (r)
		c->err = r;
	else
		c->ok++;
	return 0;
}

static long kc_ring_cb(__u32 i, void *data)
{
	struct kc_ctx *c = data;
	long r;

	r = bpf_ringbuf_output(&ring_map, kc_payload, c->size, c->flags);
	if (r)
		c->err = r;
	else
		c->ok++;
	return 0;
}

/*
 * bpf_ringbuf_reserve() wants a constant size: one callback and one
 * program per size (a switch on kc_size in one callback ran the 4096-byte
 * branch for every size on 6.1: its verifier walks a bpf_loop() callback
 * once and hard-wired the branches it did not walk).
 */
#define KC_RESERVE(n)							\
static long kc_ring_reserve_cb_##n(__u32 i, void *data)		\
{									\
	struct kc_ctx *c = data;					\
	void *p;							\
									\
	p = bpf_ringbuf_reserve(&ring_map, n, 0);			\
	if (!p) {							\
		c->err = -28;	/* -ENOSPC */				\
		return 0;						\
	}								\
	bpf_ringbuf_submit(p, c->flags);				\
	c->ok++;							\
	return 0;							\
}

KC_RESERVE(8)
KC_RESERVE(64)
KC_RESERVE(512)
KC_RESERVE(4096)

static long kc_empty_cb(__u32 i, void *data)
{
	struct kc_ctx *c = data;

	c->ok++;
	return 0;
}

static __always_inline int kc_run(void *ctx, void *cb)
{
	struct kc_ctx c = {
		.ctx = ctx,
		.size = kc_size,
		.flags = kc_rb_flags,
	};
	__u64 t0, t1;

	if (c.size > KC_MAX_PAYLOAD)
		c.size = KC_MAX_PAYLOAD;
	t0 = bpf_ktime_get_ns();
	bpf_loop(kc_count, cb, &c, 0);
	t1 = bpf_ktime_get_ns();
	kc_ns = t1 - t0;
	kc_ok = c.ok;
	kc_err = c.err;
	return 0;
}

SEC("raw_tp")
int kc_perf(void *ctx)
{
	return kc_run(ctx, kc_perf_cb);
}

SEC("raw_tp")
int kc_ring(void *ctx)
{
	return kc_run(ctx, kc_ring_cb);
}

#define KC_RESERVE_PROG(n)						\
SEC("raw_tp")								\
int kc_ring_reserve_##n(void *ctx)					\
{									\
	return kc_run(ctx, kc_ring_reserve_cb_##n);			\
}

KC_RESERVE_PROG(8)
KC_RESERVE_PROG(64)
KC_RESERVE_PROG(512)
KC_RESERVE_PROG(4096)

SEC("raw_tp")
int kc_empty(void *ctx)
{
	return kc_run(ctx, kc_empty_cb);
}

SEC("kprobe/__x64_sys_getppid")
int kp_empty(struct pt_regs *ctx)
{
	return 0;
}

SEC("kprobe/__x64_sys_getppid")
int kp_perf(struct pt_regs *ctx)
{
	__u64 buf[KP_PAYLOAD / 8] = {};

	buf[0] = bpf_ktime_get_ns();
	if (bpf_perf_event_output(ctx, &perf_map, BPF_F_CURRENT_CPU, buf,
				  sizeof(buf)))
		__sync_fetch_and_add(&kp_fail, 1);
	return 0;
}

static __always_inline __u64 kp_ring_flags(void)
{
	__u64 flags = 0;

	switch (bench_rb_mode) {
	case RB_MODE_FORCE:
		flags = BPF_RB_FORCE_WAKEUP;
		break;
	case RB_MODE_NONE:
		flags = BPF_RB_NO_WAKEUP;
		break;
	case RB_MODE_BATCH:
		/* The documented pattern: wake once enough data waits. */
		if (bpf_ringbuf_query(&ring_map, BPF_RB_AVAIL_DATA) >=
		    bench_rb_batch)
			flags = BPF_RB_FORCE_WAKEUP;
		else
			flags = BPF_RB_NO_WAKEUP;
		break;
	}
	return flags;
}

SEC("kprobe/__x64_sys_getppid")
int kp_ring(struct pt_regs *ctx)
{
	__u64 buf[KP_PAYLOAD / 8] = {};
	__u64 flags = kp_ring_flags();

	buf[0] = bpf_ktime_get_ns();
	if (bpf_ringbuf_output(&ring_map, buf, sizeof(buf), flags))
		__sync_fetch_and_add(&kp_fail, 1);
	return 0;
}

static __always_inline void kp_rec_fill(struct pea_probe_record *r,
					struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	r->time_ns = bpf_ktime_get_ns();
	r->id = 1;
	r->addr = bpf_get_func_ip(ctx);
	r->cpu = bpf_get_smp_processor_id();
	r->pid = (__u32)pid_tgid;
	r->tgid = pid_tgid >> 32;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	r->args[0] = ctx->rdi;
	r->args[1] = ctx->rsi;
	r->args[2] = ctx->rdx;
	r->args[3] = ctx->rcx;
	r->args[4] = ctx->r8;
	r->args[5] = ctx->r9;
}

SEC("kprobe/__x64_sys_getppid")
int kp_perf_rec(struct pt_regs *ctx)
{
	struct pea_probe_record r = {};

	kp_rec_fill(&r, ctx);
	if (bpf_perf_event_output(ctx, &perf_map, BPF_F_CURRENT_CPU, &r,
				  sizeof(r)))
		__sync_fetch_and_add(&kp_fail, 1);
	return 0;
}

SEC("kprobe/__x64_sys_getppid")
int kp_ring_rec(struct pt_regs *ctx)
{
	struct pea_probe_record r = {};
	__u64 flags = kp_ring_flags();

	kp_rec_fill(&r, ctx);
	if (bpf_ringbuf_output(&ring_map, &r, sizeof(r), flags))
		__sync_fetch_and_add(&kp_fail, 1);
	return 0;
}

/* struct pea_tp_record, then the raw entry: 84 bytes are written. */
struct tp_rec {
	struct pea_tp_record hdr;
	__u64 raw[3];
};

#define TP_REC_SIZE	(sizeof(struct pea_tp_record) + BENCH_TP_RAW_SIZE)

static __always_inline void tp_rec_fill(struct tp_rec *r, void *ctx)
{
	const __u32 *e = ctx;
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	r->hdr.time_ns = bpf_ktime_get_ns();
	r->hdr.id = 1;
	r->hdr.event_id = tp_event_id;
	r->hdr.cpu = bpf_get_smp_processor_id();
	r->hdr.pid = (__u32)pid_tgid;
	r->hdr.tgid = pid_tgid >> 32;
	r->hdr.flags = PEA_REC_F_TRACEPOINT;
	bpf_get_current_comm(r->hdr.comm, sizeof(r->hdr.comm));
	r->hdr.raw_size = BENCH_TP_RAW_SIZE;
	/*
	 * The entry: the common fields (type, flags and preempt count 0,
	 * pid; a BPF program's context holds the registers' address in
	 * their place, and the verifier refuses reading it), __syscall_nr
	 * from the context (the last field the event has: a program reading
	 * past it cannot attach), then perf's zero padding.
	 */
	r->raw[0] = (__u16)tp_event_id | (pid_tgid & 0xffffffffULL) << 32;
	r->raw[1] = e[2];
	r->raw[2] = 0;
}

SEC("tracepoint/syscalls/sys_enter_getppid")
int tp_perf_rec(void *ctx)
{
	struct tp_rec r = {};

	tp_rec_fill(&r, ctx);
	if (bpf_perf_event_output(ctx, &perf_map, BPF_F_CURRENT_CPU, &r,
				  TP_REC_SIZE))
		__sync_fetch_and_add(&kp_fail, 1);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_getppid")
int tp_ring_rec(void *ctx)
{
	struct tp_rec r = {};
	__u64 flags = kp_ring_flags();

	tp_rec_fill(&r, ctx);
	if (bpf_ringbuf_output(&ring_map, &r, TP_REC_SIZE, flags))
		__sync_fetch_and_add(&kp_fail, 1);
	return 0;
}

/* ---- kp_agg_*: aggregation in BPF maps (bench/agg.c) ---- */

#define AGG_KEYS	10240
#define AGG_STACKS	10240
#define AGG_DEPTH	127

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AGG_KEYS);
	__type(key, __u64);
	__type(value, __u64);
} agg_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, AGG_STACKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, AGG_DEPTH * sizeof(__u64));
} agg_stacks SEC(".maps");

__u64 agg_fail;

static __always_inline void agg_inc(__u64 key)
{
	__u64 one = 1, *v;

	v = bpf_map_lookup_elem(&agg_counts, &key);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	if (bpf_map_update_elem(&agg_counts, &key, &one, BPF_NOEXIST)) {
		v = bpf_map_lookup_elem(&agg_counts, &key);
		if (v)
			__sync_fetch_and_add(v, 1);
		else
			__sync_fetch_and_add(&agg_fail, 1);
	}
}

/*
 * The log2 bucket as pea's: 1 for 0, else 2 + ilog2(v), by halving the
 * width (six steps, no loop), as a BPF tool would compute it.
 */
static __always_inline __u64 agg_log2(__u64 v)
{
	__u64 b = 0;

	if (!v)
		return 1;
	if (v >> 32) {
		v >>= 32;
		b += 32;
	}
	if (v >> 16) {
		v >>= 16;
		b += 16;
	}
	if (v >> 8) {
		v >>= 8;
		b += 8;
	}
	if (v >> 4) {
		v >>= 4;
		b += 4;
	}
	if (v >> 2) {
		v >>= 2;
		b += 2;
	}
	if (v >> 1)
		b += 1;
	return b + 2;
}

SEC("kprobe/__x64_sys_getppid")
int kp_agg_count(struct pt_regs *ctx)
{
	agg_inc(0);
	return 0;
}

SEC("kprobe/__x64_sys_getppid")
int kp_agg_hist(struct pt_regs *ctx)
{
	agg_inc(agg_log2(ctx->rdi));
	return 0;
}

SEC("kprobe/__x64_sys_getppid")
int kp_agg_stack(struct pt_regs *ctx)
{
	long id = bpf_get_stackid(ctx, &agg_stacks, 0);

	if (id < 0) {
		__sync_fetch_and_add(&agg_fail, 1);
		return 0;
	}
	agg_inc(id);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
