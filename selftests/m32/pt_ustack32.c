// SPDX-License-Identifier: GPL-2.0
/*
 * A 32-bit program for test_ustack32, which embeds it: a known chain of
 * frame-pointer functions (main -> pt32_a -> pt32_b -> pt32_leaf) in a
 * compat task, whose user stacks pea and Linux's perf unwind in 4-byte
 * words. Usage: pt_ustack32 RFD WFD. It writes the file offsets of
 * pt32_leaf and pt32_a to WFD, then for each 'r' read from RFD runs the
 * chain once (pt32_leaf makes a getppid() syscall by int $0x80) and
 * writes what the chain saw: pt32_leaf's address, the address after its
 * int $0x80, and the return addresses into pt32_b, pt32_a and main (the
 * last is the uretprobe trampoline's while one on pt32_a is pending). It
 * exits 0 at the end of RFD.
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "../pt_maps.h"

static volatile uint32_t seen[5];
extern char pt32_after_int80[];

__attribute__((noipa, used)) int pt32_leaf(int n)
{
	int ret;

	seen[0] = (uint32_t)(uintptr_t)pt32_leaf;
	seen[1] = (uint32_t)(uintptr_t)pt32_after_int80;
	seen[2] = (uint32_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("int $0x80\n"
			 ".globl pt32_after_int80\n"
			 "pt32_after_int80:\n"
			 : "=a"(ret) : "a"(SYS_getppid) : "memory");
	return ret + n;
}

__attribute__((noipa, used)) int pt32_b(int n)
{
	int r = pt32_leaf(n);

	seen[3] = (uint32_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

__attribute__((noipa, used)) int pt32_a(int n)
{
	/* The trampoline's address while a uretprobe on pt32_a is pending. */
	seen[4] = (uint32_t)(uintptr_t)__builtin_return_address(0);
	n = pt32_b(n);
	__asm__ volatile("" : "+r"(n));
	return n + 1;
}

int main(int argc, char **argv)
{
	unsigned long long off[2];
	uint32_t out[5];
	int rfd, wfd, i;
	char c;

	if (argc < 3)
		return 2;
	rfd = atoi(argv[1]);
	wfd = atoi(argv[2]);
	off[0] = pt_file_off(pt32_leaf);
	off[1] = pt_file_off(pt32_a);
	if (write(wfd, off, sizeof(off)) != sizeof(off))
		return 3;
	while (read(rfd, &c, 1) == 1) {
		pt32_a(c);
		for (i = 0; i < 5; i++)
			out[i] = seen[i];
		if (write(wfd, out, sizeof(out)) != sizeof(out))
			return 4;
	}
	return 0;
}
