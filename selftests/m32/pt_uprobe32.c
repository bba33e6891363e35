// SPDX-License-Identifier: GPL-2.0
/*
 * A 32-bit program for test_uprobe, which embeds it: uretprobes on the
 * functions of a compat task, whose returns pop a 4-byte return address
 * (and, for a function returning a struct, the hidden pointer too:
 * "ret $4"). Usage: pt_uprobe32 RFD WFD. It writes the file offsets of
 * pt32_fn and pt32_struct to WFD, waits for a byte on RFD, calls
 * pt32_fn(0..2) and pt32_struct(10..11), and exits 0 if they returned
 * what they should.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "../pt_maps.h"

struct pt32_big {
	int a, b, c, d;
};

__attribute__((noipa, used)) int pt32_fn(int n)
{
	__asm__ volatile("" : : "r"(n) : "memory");
	return 100 + n;
}

__attribute__((noipa, used)) struct pt32_big pt32_struct(int n)
{
	struct pt32_big r = { n, n + 1, n + 2, 200 + n };

	return r;
}

int main(int argc, char **argv)
{
	unsigned long long off[2];
	int rfd, wfd, i, bad = 0;
	char c;

	if (argc < 3)
		return 2;
	rfd = atoi(argv[1]);
	wfd = atoi(argv[2]);
	off[0] = pt_file_off(pt32_fn);
	off[1] = pt_file_off(pt32_struct);
	if (write(wfd, off, sizeof(off)) != sizeof(off) ||
	    read(rfd, &c, 1) != 1)
		return 3;
	for (i = 0; i < 3; i++)
		bad += pt32_fn(i) != 100 + i;
	for (i = 10; i < 12; i++)
		bad += pt32_struct(i).d != 200 + i;
	return bad ? 4 : 0;
}
