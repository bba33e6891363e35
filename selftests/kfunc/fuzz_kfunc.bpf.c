// SPDX-License-Identifier: GPL-2.0
/*
 * test_fuzz's kfunc family: pea's kfuncs called with the arguments the
 * fuzzer drew (struct fzk_args), from programs it runs with
 * BPF_PROG_TEST_RUN.
 *
 * fzk_out: SYSCALL, the arguments in its context: pea_kf_output() of
 *          size bytes (bounded by the payload) with handle and flags.
 * fzk_zc:  XDP, the arguments at the start of the packet: a reserve of
 *          FZK_R<rsel> bytes, the payload asked as FZK_D<dsel> bytes
 *          (first and last byte written), optionally a second
 *          reservation of 8 bytes on handle2 committed before or after
 *          the first; what it got written back into the packet.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "fuzz_kfunc.h"

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

unsigned char payload[FZK_PAYLOAD];

SEC("syscall")
int fzk_out(struct fzk_args *a)
{
	__u32 size = a->size;

	if (size > sizeof(payload))
		size = sizeof(payload);
	a->ret = pea_kf_output(a->handle, a->flags, payload, size);
	return 0;
}

static __always_inline struct pea_kf_rec *fzk_reserve(__u64 h, __u64 f,
						      __u32 sel)
{
	switch (sel) {
	case 0:
		return pea_kf_reserve(h, f, FZK_R0);
	case 1:
		return pea_kf_reserve(h, f, FZK_R1);
	case 2:
		return pea_kf_reserve(h, f, FZK_R2);
	case 3:
		return pea_kf_reserve(h, f, FZK_R3);
	case 4:
		return pea_kf_reserve(h, f, FZK_R4);
	default:
		return pea_kf_reserve(h, f, FZK_R5);
	}
}

#define FZK_DATA(n)							\
	do {								\
		__u8 *p = pea_kf_rec_data(rec, n);			\
									\
		if (!p)							\
			return 0;					\
		p[0] = 0xab;						\
		p[(n) - 1] = 0xcd;					\
		return 1;						\
	} while (0)

/* 1 if pea_kf_rec_data() gave memory (written at both ends), else 0. */
static __always_inline int fzk_data(struct pea_kf_rec *rec, __u32 sel)
{
	switch (sel) {
	case 0:
		FZK_DATA(FZK_D0);
	case 1:
		FZK_DATA(FZK_D1);
	case 2:
		FZK_DATA(FZK_D2);
	case 3:
		FZK_DATA(FZK_D3);
	default:
		FZK_DATA(FZK_D4);
	}
}

SEC("xdp")
int fzk_zc(struct xdp_md *ctx)
{
	struct fzk_args *a = (void *)(long)ctx->data;
	struct pea_kf_rec *rec, *rec2 = NULL;

	if ((void *)(a + 1) > (void *)(long)ctx->data_end)
		return XDP_ABORTED;
	a->got_rec = 0;
	a->got_data = 0;
	a->got_rec2 = 0;
	rec = fzk_reserve(a->handle, a->flags, a->rsel);
	if (!rec)
		return XDP_PASS;
	a->got_rec = 1;
	if (a->hold2) {
		rec2 = pea_kf_reserve(a->handle2, a->flags, 8);
		a->got_rec2 = !!rec2;
	}
	if (rec2 && a->hold2 == 1) {
		pea_kf_commit(rec2);
		rec2 = NULL;
	}
	a->got_data = fzk_data(rec, a->dsel);
	pea_kf_commit(rec);
	if (rec2)
		pea_kf_commit(rec2);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
