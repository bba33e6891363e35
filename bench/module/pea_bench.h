/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pea_bench: the benchmark-only module's ioctls, shared by the module and
 * bench/pea-bench. Not part of pea's ABI.
 */
#ifndef _PEA_BENCH_H
#define _PEA_BENCH_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PEA_BENCH_DEVICE	"/dev/pea_bench"
#define PEA_BENCH_MAGIC		0xEC
#define PEA_BENCH_MAX_PAYLOAD	65536

/* What PEA_BENCH_IOC_LOOP does @count times. */
enum pea_bench_op {
	PEA_BENCH_EMPTY = 0,	/* the loop alone */
	PEA_BENCH_OUTPUT,	/* pea_output() */
	PEA_BENCH_RESERVE,	/* pea_output_reserve() + memcpy + commit */
	PEA_BENCH_MEMCPY,	/* memcpy into a ring-sized buffer: the floor */
	PEA_BENCH_RESERVE_ONLY,	/* reserve + commit, no payload copy */
	/*
	 * pea_output()'s parts before the ring, alone (issue 23's profile):
	 * GUARD fails at the flag check (-EINVAL: the call, preemption and
	 * the nesting slot), CHECKS at the payload size (-E2BIG: also the
	 * slot lookup and the event's checks; an empty record goes through
	 * first, untimed, so that the index is known good). Counted ok on
	 * that error.
	 */
	PEA_BENCH_GUARD,
	PEA_BENCH_CHECKS,
	PEA_BENCH_NR_OPS,
};

/**
 * struct pea_bench_loop - argument of PEA_BENCH_IOC_LOOP
 * @map:        the pea map's name (ops that output)
 * @op:         enum pea_bench_op
 * @size:       payload bytes
 * @count:      iterations
 * @ring_bytes: PEA_BENCH_MEMCPY: size of the buffer written (power of 2)
 * @ns:         out: ns the loop took (preemption disabled, this CPU)
 * @n_ok:       out: calls that returned 0
 * @ret:        out: the last non-zero return value (0 if none)
 * @cpu:        out: the CPU the loop ran on
 */
struct pea_bench_loop {
	char map[16];
	__u32 op;
	__u32 size;
	__u32 count;
	__u32 ring_bytes;
	__u64 ns;
	__u64 n_ok;
	__s64 ret;
	__s32 cpu;
	__u32 pad;
};

/* The kprobe's payload, as the BPF kprobe programs' (a fixed size). */
#define PEA_BENCH_KP_PAYLOAD	64

/* Kprobe modes. */
enum pea_bench_kp_mode {
	PEA_BENCH_KP_OFF = 0,	/* unregistered */
	PEA_BENCH_KP_EMPTY,	/* registered, the handler returns at once */
	PEA_BENCH_KP_OUTPUT,	/* the handler calls pea_output() */
};

/**
 * struct pea_bench_kprobe - argument of PEA_BENCH_IOC_KPROBE
 * @map:    the pea map's name (PEA_BENCH_KP_OUTPUT)
 * @symbol: the probed function
 * @mode:   enum pea_bench_kp_mode
 * @size:   payload bytes: PEA_BENCH_KP_PAYLOAD; the first 8 are
 *          ktime_get_mono_fast_ns() (CLOCK_MONOTONIC), the rest zero
 */
struct pea_bench_kprobe {
	char map[16];
	char symbol[64];
	__u32 mode;
	__u32 size;
};

/**
 * struct pea_bench_kstats - filled by PEA_BENCH_IOC_KSTATS (and cleared)
 * @hits:  handler calls
 * @ok:    pea_output() returned 0
 * @nospc: pea_output() returned -ENOSPC (dropped, counted lost)
 * @other: any other error
 */
struct pea_bench_kstats {
	__u64 hits;
	__u64 ok;
	__u64 nospc;
	__u64 other;
};

#define PEA_BENCH_IOC_LOOP	_IOWR(PEA_BENCH_MAGIC, 1, struct pea_bench_loop)
#define PEA_BENCH_IOC_KPROBE	_IOW(PEA_BENCH_MAGIC, 2, struct pea_bench_kprobe)
#define PEA_BENCH_IOC_KSTATS	_IOR(PEA_BENCH_MAGIC, 3, struct pea_bench_kstats)

/* Functions of this module that fprobe and kprobe figures probe. */
#define PEA_BENCH_FP_NR		200	/* pea_bench_fp_000 .. _199 */

/**
 * struct pea_bench_fpcall - argument of PEA_BENCH_IOC_FPCALL: call
 * pea_bench_fp_000 .. (@nfuncs - 1) each @rounds times (round by round),
 * preemption off, on the calling CPU
 * @nfuncs: 1..PEA_BENCH_FP_NR
 * @rounds: at least 1
 * @ns:     out: ns the calls took
 */
struct pea_bench_fpcall {
	__u32 nfuncs;
	__u32 rounds;
	__u64 ns;
};

#define PEA_BENCH_IOC_FPCALL	_IOWR(PEA_BENCH_MAGIC, 4, struct pea_bench_fpcall)

#endif /* _PEA_BENCH_H */
