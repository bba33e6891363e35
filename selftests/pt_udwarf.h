/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user functions whose DWARF pea reads (tools/pea/udwarf.c): traced
 * by name in the guest (test_tool_udwarf) and resolved on the host
 * (selftests/host/udwarf_target, test_udwarf). Built with -g, as every
 * test program is. Their parameters cover each class the x86-64 SysV ABI
 * passes differently, the stack included.
 */
#ifndef _PT_UDWARF_H
#define _PT_UDWARF_H

#include <stdbool.h>

enum pt_ud_color { PT_UD_RED = -1, PT_UD_GREEN = 1, PT_UD_BLUE = 7 };

struct pt_ud_inner {
	int depth;
	const char *label;
};

/* offsets: id 0, flags 8, in 16, tag 24, vals 32, bits 44, anon_x 48 */
struct pt_ud_outer {
	long id;
	unsigned short flags;
	struct pt_ud_inner *in;
	char tag[8];
	int vals[3];
	unsigned int bits : 3;
	struct {
		int anon_x;
	};
};

typedef struct pt_ud_outer pt_ud_outer_t;
typedef unsigned long pt_ud_len_t;

struct pt_ud_pair {
	int a, b;
};

struct pt_ud_big {
	long v[4];
};

/* Integer-class parameters in rdi, rsi, rdx, rcx, r8, r9; a negative int. */
__attribute__((noipa, used)) int pt_ud_fn(int i, unsigned int u,
					  enum pt_ud_color c, bool b,
					  const char *s, pt_ud_outer_t *o)
{
	__asm__ volatile("" : : "r"(u), "r"(c), "r"(b), "r"(s), "r"(o) :
			 "memory");
	return -22 - i;
}

/*
 * d: xmm0; pr: one eightbyte of integers, rdi; a..e: rsi..r9; f and g:
 * the stack; returns a double (xmm0).
 */
__attribute__((noipa, used)) double pt_ud_refuse(double d,
						 struct pt_ud_pair pr, long a,
						 long b, long c, long e,
						 long h, long f, long g)
{
	return d + pr.a + pr.b + a + b + c + e + h + f + g;
}

/* Returned in memory: its address takes rdi, x is in rsi. */
__attribute__((noipa, used)) struct pt_ud_big pt_ud_big(pt_ud_len_t x)
{
	struct pt_ud_big r = { { (long)x, 1, 2, 3 } };

	__asm__ volatile("" : : "r"(&r) : "memory");
	return r;
}

/*
 * a..k: rdi..r9; f, g, n and big on the stack, at the entry's stack
 * pointer + 8, 16, 24 and 32 (the return address at + 0).
 */
__attribute__((noipa, used)) long pt_ud_stack(long a, long b, long c, long e,
					      long h, long k, long f, int g,
					      unsigned char n,
					      struct pt_ud_big big)
{
	return a + b + c + e + h + k + f + g + n + big.v[0] + big.v[3];
}

#endif /* _PT_UDWARF_H */
