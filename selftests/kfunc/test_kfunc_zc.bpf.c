// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF side of test_kfunc's zero-copy part: programs calling
 * pea_kf_reserve(), pea_kf_rec_data() and pea_kf_commit().
 *
 * zc_xdp:      run with BPF_PROG_TEST_RUN on a packet; reserves ZC_BYTES,
 *              copies the packet's first ZC_BYTES bytes into the record
 *              and commits it; counts reserves that returned NULL.
 * zc_short:    reserves ZC_SHORT bytes and asks for ZC_BYTES of payload:
 *              pea_kf_rec_data() returns NULL, the record is committed.
 * zc_kprobe:   a kprobe program on getppid(2) (6.12 lets it reserve, 6.1
 *              does not); writes a struct kf_event.
 * Misuse, each refused by the verifier:
 * zc_leak:     a path that exits holding the record.
 * zc_nonconst: a size that is not a constant.
 * zc_past:     a write past the constant size.
 * zc_after:    a write into the payload after the commit.
 * zc_syscall:  a SYSCALL program (it may sleep: bpf_sys_bpf()).
 * zc_throw:    a reservation held across a global subprogram that may
 *              bpf_throw() (6.12): the throw would unwind past the
 *              commit, which the verifier does not see (review finding 1).
 * Nesting and the record's bytes:
 * zc_two:      a second reservation while one is held (the same context
 *              level): NULL (review findings 2 and 3); pea_kf_output()
 *              into the map meanwhile still writes.
 * zc_tail:     a reservation held across a static subprogram that
 *              tail-calls zc_tail_target: the tail call returns to the
 *              caller, which commits.
 * zc_wq:       (6.12) starts a bpf_wq whose callback, which runs where it
 *              may sleep (a kworker, preemptible), reserves: NULL,
 *              counted per map as may_sleep (review finding 5).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "test_kfunc.h"

/* Opaque: programs only pass it back to pea's kfuncs. */
struct pea_kf_rec {
	__u64 opaque;
};

extern struct pea_kf_rec *pea_kf_reserve(__u64 map_handle, __u64 flags,
					 __u32 rdwr_buf_size) __ksym;
extern __u8 *pea_kf_rec_data(struct pea_kf_rec *rec,
			     __u32 rdwr_buf_size) __ksym;
extern void pea_kf_commit(struct pea_kf_rec *rec) __ksym;
extern long pea_kf_output(__u64 map_handle, __u64 flags, const void *data,
			  __u32 data__sz) __ksym;
/* 6.7 and later; weak so that 6.1 loads the other programs. */
extern void bpf_throw(__u64 cookie) __ksym __weak;

/* bpf_wq (6.10): the kernel finds it in a map value by its name. */
struct bpf_wq {
	__u64 __opaque[2];
} __attribute__((aligned(8)));
extern int bpf_wq_init(struct bpf_wq *wq, void *p__map,
		       unsigned int flags) __ksym __weak;
extern int bpf_wq_start(struct bpf_wq *wq, unsigned int flags) __ksym __weak;
extern int bpf_wq_set_callback_impl(struct bpf_wq *wq,
				    int (callback_fn)(void *map, int *key,
						      void *value),
				    unsigned int flags,
				    void *aux__ign) __ksym __weak;

__u64 zc_handle;
__u64 zc_flags;
__u32 zc_size;
__u32 zc_pid;
__u64 zc_ok;
__u64 zc_null;
__u64 zc_nodata;
__u64 zc_seq;
long zc_out_ret;
__u64 zc_got2;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} zc_jmp SEC(".maps");

SEC("xdp")
int zc_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct pea_kf_rec *rec;
	__u8 *p;

	if (data + ZC_BYTES > end)
		return XDP_ABORTED;
	rec = pea_kf_reserve(zc_handle, zc_flags, ZC_BYTES);
	if (!rec) {
		zc_null++;
		return XDP_PASS;
	}
	p = pea_kf_rec_data(rec, ZC_BYTES);
	if (p)
		__builtin_memcpy(p, data, ZC_BYTES);
	else
		zc_nodata++;
	pea_kf_commit(rec);
	zc_ok++;
	return XDP_PASS;
}

SEC("xdp")
int zc_short(struct xdp_md *ctx)
{
	struct pea_kf_rec *rec;
	__u8 *p;

	rec = pea_kf_reserve(zc_handle, zc_flags, ZC_SHORT);
	if (!rec) {
		zc_null++;
		return XDP_PASS;
	}
	p = pea_kf_rec_data(rec, ZC_BYTES);
	if (p)
		p[0] = 1;
	else
		zc_nodata++;
	pea_kf_commit(rec);
	zc_ok++;
	return XDP_PASS;
}

SEC("kprobe/__x64_sys_getppid")
int zc_kprobe(void *ctx)
{
	struct kf_event *ev;
	struct pea_kf_rec *rec;
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if ((__u32)(pid_tgid >> 32) != zc_pid)
		return 0;
	rec = pea_kf_reserve(zc_handle, zc_flags, sizeof(*ev));
	if (!rec) {
		zc_null++;
		return 0;
	}
	ev = (struct kf_event *)pea_kf_rec_data(rec, sizeof(*ev));
	if (ev) {
		ev->magic = KF_MAGIC;
		ev->kind = KF_KIND_KPROBE;
		ev->pid = pid_tgid >> 32;
		ev->seq = __sync_fetch_and_add(&zc_seq, 1);
	}
	pea_kf_commit(rec);
	zc_ok++;
	return 0;
}

SEC("xdp")
int zc_leak(struct xdp_md *ctx)
{
	struct pea_kf_rec *rec = pea_kf_reserve(zc_handle, zc_flags, ZC_BYTES);

	if (!rec)
		return XDP_PASS;
	if (zc_size)
		return XDP_DROP;	/* exits holding the record */
	pea_kf_commit(rec);
	return XDP_PASS;
}

SEC("xdp")
int zc_nonconst(struct xdp_md *ctx)
{
	__u32 size = zc_size & 255;
	struct pea_kf_rec *rec = pea_kf_reserve(zc_handle, zc_flags, size);

	if (rec)
		pea_kf_commit(rec);
	return XDP_PASS;
}

SEC("xdp")
int zc_past(struct xdp_md *ctx)
{
	struct pea_kf_rec *rec = pea_kf_reserve(zc_handle, zc_flags, ZC_BYTES);
	__u8 *p;

	if (!rec)
		return XDP_PASS;
	p = pea_kf_rec_data(rec, ZC_BYTES);
	if (p)
		p[ZC_BYTES] = 1;
	pea_kf_commit(rec);
	return XDP_PASS;
}

SEC("xdp")
int zc_after(struct xdp_md *ctx)
{
	struct pea_kf_rec *rec = pea_kf_reserve(zc_handle, zc_flags, ZC_BYTES);
	__u8 *p;

	if (!rec)
		return XDP_PASS;
	p = pea_kf_rec_data(rec, ZC_BYTES);
	pea_kf_commit(rec);
	if (p)
		p[0] = 1;
	return XDP_PASS;
}

SEC("syscall")
int zc_syscall(void *ctx)
{
	struct pea_kf_rec *rec = pea_kf_reserve(zc_handle, zc_flags, ZC_BYTES);

	if (rec)
		pea_kf_commit(rec);
	return 0;
}

SEC("xdp")
int zc_two(struct xdp_md *ctx)
{
	struct pea_kf_rec *rec, *rec2;
	unsigned char buf[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	rec = pea_kf_reserve(zc_handle, zc_flags, ZC_SHORT);
	if (!rec) {
		zc_null++;
		return XDP_PASS;
	}
	rec2 = pea_kf_reserve(zc_handle, zc_flags, ZC_SHORT);
	if (rec2) {
		zc_got2++;
		pea_kf_commit(rec2);
	}
	zc_out_ret = pea_kf_output(zc_handle, zc_flags, buf, sizeof(buf));
	pea_kf_commit(rec);
	zc_ok++;
	return XDP_PASS;
}

SEC("xdp")
int zc_tail_target(struct xdp_md *ctx)
{
	zc_seq++;
	return XDP_PASS;
}

static __attribute__((noinline)) int zc_jumper(struct xdp_md *ctx)
{
	bpf_tail_call(ctx, &zc_jmp, 0);
	return 0;
}

SEC("xdp")
int zc_tail(struct xdp_md *ctx)
{
	struct pea_kf_rec *rec = pea_kf_reserve(zc_handle, zc_flags, ZC_SHORT);

	if (!rec) {
		zc_null++;
		return XDP_PASS;
	}
	zc_jumper(ctx);
	pea_kf_commit(rec);
	zc_ok++;
	return XDP_PASS;
}

__attribute__((noinline)) int zc_thrower(int x)
{
	if (x)
		bpf_throw(0);
	return 0;
}

SEC("xdp")
int zc_throw(struct xdp_md *ctx)
{
	struct pea_kf_rec *rec = pea_kf_reserve(zc_handle, zc_flags, ZC_SHORT);

	if (!rec)
		return XDP_PASS;
	zc_thrower(zc_size);
	pea_kf_commit(rec);
	return XDP_PASS;
}

struct zc_wq_val {
	struct bpf_wq wq;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct zc_wq_val);
} zc_wqmap SEC(".maps");

__u64 zc_wq_ran;

static int zc_wq_cb(void *map, int *key, void *value)
{
	struct pea_kf_rec *rec = pea_kf_reserve(zc_handle, zc_flags, ZC_SHORT);

	if (rec) {
		zc_ok++;
		pea_kf_commit(rec);
	} else {
		zc_null++;
	}
	zc_wq_ran++;
	return 0;
}

SEC("xdp")
int zc_wq(struct xdp_md *ctx)
{
	struct zc_wq_val *v;
	int k = 0;

	v = bpf_map_lookup_elem(&zc_wqmap, &k);
	if (!v)
		return XDP_ABORTED;
	if (bpf_wq_init(&v->wq, &zc_wqmap, 0))
		return XDP_ABORTED;
	if (bpf_wq_set_callback_impl(&v->wq, zc_wq_cb, 0, NULL))
		return XDP_ABORTED;
	if (bpf_wq_start(&v->wq, 0))
		return XDP_ABORTED;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
