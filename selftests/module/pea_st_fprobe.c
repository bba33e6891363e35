// SPDX-License-Identifier: GPL-2.0
/*
 * pea_selftest: PEA_ST_IOC_FPROBE calls each of the functions
 * pea_st_fp_0() .. pea_st_fp_7() a number of times the caller chose, with
 * known arguments and known return values; test_fprobe attaches one
 * fprobe link to all of them (the pattern pea_st_fp_*) and to N kprobes,
 * and compares every count. pea_st_nofp_notrace() has no ftrace location
 * and pea_st_nofp_blacklisted() is in the kprobe blacklist: an fprobe
 * link must refuse both, as a kprobe link does. pea_st_fpn_outer() calls
 * pea_st_fpn_inner(): a return link on both with one node misses one.
 */
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/uaccess.h>
#include "pea_selftest.h"
#include "pea_st_fprobe.h"

/*
 * pea_st_fp_N(a, b): returns b * 1000 - a - N (negative for N 0 with
 * a > 0), so that each function's return is told apart.
 */
#define PEA_ST_FP(n)							\
noinline long pea_st_fp_##n(long a, long b);				\
noinline long pea_st_fp_##n(long a, long b)				\
{									\
	asm volatile("" : : "r"(a), "r"(b) : "memory");		\
	return b * 1000 - a - (n);					\
}

PEA_ST_FP(0)
PEA_ST_FP(1)
PEA_ST_FP(2)
PEA_ST_FP(3)
PEA_ST_FP(4)
PEA_ST_FP(5)
PEA_ST_FP(6)
PEA_ST_FP(7)

static long (* const st_fp_funcs[PEA_ST_FP_NR])(long a, long b) = {
	pea_st_fp_0, pea_st_fp_1, pea_st_fp_2, pea_st_fp_3,
	pea_st_fp_4, pea_st_fp_5, pea_st_fp_6, pea_st_fp_7,
};

/* Two calls in flight at once: the outer's and the inner's. */
noinline long pea_st_fpn_inner(long a);
noinline long pea_st_fpn_inner(long a)
{
	asm volatile("" : : "r"(a) : "memory");
	return a + 3;
}

noinline long pea_st_fpn_outer(long a);
noinline long pea_st_fpn_outer(long a)
{
	long r = pea_st_fpn_inner(a);

	asm volatile("" : : "r"(r) : "memory");
	return r + 1;
}

/* No ftrace location: neither a kprobe event nor an fprobe may take it. */
noinline notrace long pea_st_nofp_notrace(long a);
noinline notrace long pea_st_nofp_notrace(long a)
{
	asm volatile("" : : "r"(a) : "memory");
	return a + 1;
}

/* In the kprobe blacklist, with an ftrace location. */
noinline long pea_st_nofp_blacklisted(long a);
noinline long pea_st_nofp_blacklisted(long a)
{
	asm volatile("" : : "r"(a) : "memory");
	return a + 2;
}

NOKPROBE_SYMBOL(pea_st_nofp_blacklisted);

/**
 * st_fprobe() - PEA_ST_IOC_FPROBE
 * @uarg: struct pea_st_fprobe
 *
 * Return: 0, -EFAULT, or -EINVAL (a count past PEA_ST_FP_COUNT_MAX,
 * @reserved not zero).
 */
long st_fprobe(void __user *uarg)
{
	struct pea_st_fprobe a;
	long sum = 0;
	u32 i, k;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	for (i = 0; i < PEA_ST_FP_NR; i++)
		if (a.counts[i] > PEA_ST_FP_COUNT_MAX)
			return -EINVAL;
	if (a.nested > PEA_ST_FP_COUNT_MAX || a.reserved)
		return -EINVAL;
	for (i = 0; i < PEA_ST_FP_NR; i++)
		for (k = 0; k < a.counts[i]; k++)
			sum += st_fp_funcs[i](a.arg + k, i);
	sum += pea_st_nofp_notrace(a.arg) + pea_st_nofp_blacklisted(a.arg);
	for (k = 0; k < a.nested; k++)
		sum += pea_st_fpn_outer(a.arg + k);
	a.sum = sum;
	return copy_to_user(uarg, &a, sizeof(a)) ? -EFAULT : 0;
}
