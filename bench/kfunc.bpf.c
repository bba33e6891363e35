// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF side of pea-bench -f kfunc: one XDP program per channel and
 * record size, each the same loop writing the same records (issue 20):
 *
 * kx_perf_N:     bpf_perf_event_output() into a perf event array
 * kx_ring_N:     bpf_ringbuf_output() into a BPF ring buffer
 * kx_ringres_N:  bpf_ringbuf_reserve(), the payload copied in,
 *                bpf_ringbuf_submit()
 * kx_pea_N:      pea_kf_output() into a pea map
 * kx_pearres_N:  pea_kf_reserve(), pea_kf_rec_data(), the payload copied
 *                in, pea_kf_commit()
 * kx_empty:      the loop alone
 *
 * Run with BPF_PROG_TEST_RUN on a CPU: bpf_loop() of kx_count records
 * of N bytes of kx_payload (N a constant: the reserves want one), timed
 * with bpf_ktime_get_ns(). XDP: the one program type in which 6.1 and
 * 6.12 both let a program call pea's zero-copy kfuncs (docs/kfuncs.md).
 * perf_map and ring_map are pea-bench's own (bench.bpf.c), reused by fd.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define KX_MAX	512

struct pea_kf_rec {
	__u64 opaque;
};

extern long pea_kf_output(__u64 map_handle, __u64 flags, const void *data,
			  __u32 data__sz) __ksym;
extern struct pea_kf_rec *pea_kf_reserve(__u64 map_handle, __u64 flags,
					 __u32 rdwr_buf_size) __ksym;
extern __u8 *pea_kf_rec_data(struct pea_kf_rec *rec,
			     __u32 rdwr_buf_size) __ksym;
extern void pea_kf_commit(struct pea_kf_rec *rec) __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} perf_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} ring_map SEC(".maps");

unsigned char kx_payload[KX_MAX];
__u64 kx_handle;
__u32 kx_count;
__u64 kx_ns;
__u64 kx_ok;
__s64 kx_err;
__u64 kx_tried;		/* records the channel programs tried, all runs */

struct kx_ctx {
	void *ctx;
	__u64 ok;
	__s64 err;
};

#define KX_CBS(n)							\
static long kx_perf_cb_##n(__u32 i, void *data)			\
{									\
	struct kx_ctx *c = data;					\
	long r = bpf_perf_event_output(c->ctx, &perf_map,		\
				       BPF_F_CURRENT_CPU, kx_payload, n); \
									\
	if (r)								\
		c->err = r;						\
	else								\
		c->ok++;						\
	return 0;							\
}									\
static long kx_ring_cb_##n(__u32 i, void *data)			\
{									\
	struct kx_ctx *c = data;					\
	long r = bpf_ringbuf_output(&ring_map, kx_payload, n, 0);	\
									\
	if (r)								\
		c->err = r;						\
	else								\
		c->ok++;						\
	return 0;							\
}									\
static long kx_ringres_cb_##n(__u32 i, void *data)			\
{									\
	struct kx_ctx *c = data;					\
	void *p = bpf_ringbuf_reserve(&ring_map, n, 0);		\
									\
	if (!p) {							\
		c->err = -28;						\
		return 0;						\
	}								\
	__builtin_memcpy(p, kx_payload, n);				\
	bpf_ringbuf_submit(p, 0);					\
	c->ok++;							\
	return 0;							\
}									\
static long kx_pea_cb_##n(__u32 i, void *data)				\
{									\
	struct kx_ctx *c = data;					\
	long r = pea_kf_output(kx_handle, BPF_F_CURRENT_CPU,		\
			       kx_payload, n);				\
									\
	if (r)								\
		c->err = r;						\
	else								\
		c->ok++;						\
	return 0;							\
}									\
static long kx_pearres_cb_##n(__u32 i, void *data)			\
{									\
	struct kx_ctx *c = data;					\
	struct pea_kf_rec *rec;						\
	__u8 *p;							\
									\
	rec = pea_kf_reserve(kx_handle, BPF_F_CURRENT_CPU, n);		\
	if (!rec) {							\
		c->err = -28;						\
		return 0;						\
	}								\
	p = pea_kf_rec_data(rec, n);					\
	if (p)								\
		__builtin_memcpy(p, kx_payload, n);			\
	pea_kf_commit(rec);						\
	c->ok++;							\
	return 0;							\
}

KX_CBS(64)
KX_CBS(512)

static long kx_empty_cb(__u32 i, void *data)
{
	struct kx_ctx *c = data;

	c->ok++;
	return 0;
}

static __always_inline int kx_run(void *ctx, void *cb, int counts)
{
	struct kx_ctx c = { .ctx = ctx };
	__u64 t0, t1;

	t0 = bpf_ktime_get_ns();
	bpf_loop(kx_count, cb, &c, 0);
	t1 = bpf_ktime_get_ns();
	kx_ns = t1 - t0;
	kx_ok = c.ok;
	kx_err = c.err;
	if (counts)
		__sync_fetch_and_add(&kx_tried, kx_count);
	return XDP_PASS;
}

#define KX_PROG(name, n)						\
SEC("xdp")								\
int kx_##name##_##n(struct xdp_md *ctx)				\
{									\
	return kx_run(ctx, kx_##name##_cb_##n, 1);			\
}

KX_PROG(perf, 64)
KX_PROG(ring, 64)
KX_PROG(ringres, 64)
KX_PROG(pea, 64)
KX_PROG(pearres, 64)
KX_PROG(perf, 512)
KX_PROG(ring, 512)
KX_PROG(ringres, 512)
KX_PROG(pea, 512)
KX_PROG(pearres, 512)

SEC("xdp")
int kx_empty(struct xdp_md *ctx)
{
	return kx_run(ctx, kx_empty_cb, 0);
}

char LICENSE[] SEC("license") = "GPL";
