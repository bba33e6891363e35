/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What test_fuzz's kfunc family (selftests/fuzz/ops_kfunc.c) and its BPF
 * programs (fuzz_kfunc.bpf.c) share: the arguments of one call, passed as
 * the program's context (SYSCALL) or packet (XDP), results written back.
 */
#ifndef _FUZZ_KFUNC_H
#define _FUZZ_KFUNC_H

#define FZK_PAYLOAD	4096

/* Reserve sizes (rsel) and payload sizes asked (dsel): constants. */
#define FZK_R0	0
#define FZK_R1	8
#define FZK_R2	64
#define FZK_R3	4096
#define FZK_R4	65516
#define FZK_R5	65517
#define FZK_D0	1
#define FZK_D1	8
#define FZK_D2	64
#define FZK_D3	4096
#define FZK_D4	65516

struct fzk_args {
	__u64 handle;
	__u64 flags;
	__u64 handle2;		/* the second reservation's map */
	__u32 size;		/* pea_kf_output(): payload bytes */
	__u32 rsel;		/* reserve size: FZK_R<rsel> */
	__u32 dsel;		/* payload asked: FZK_D<dsel> */
	__u32 hold2;		/* 0 none; 1: a second, committed first; 2: last */
	__s64 ret;		/* pea_kf_output()'s return */
	__u32 got_rec;		/* the reserve returned a record */
	__u32 got_data;		/* pea_kf_rec_data() returned memory */
	__u32 got_rec2;
	__u32 pad;
};

#endif /* _FUZZ_KFUNC_H */
