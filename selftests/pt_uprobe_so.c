// SPDX-License-Identifier: GPL-2.0
/*
 * A shared object for test_uprobe (built with -shared -nostdlib, its
 * entry point set to pt_so_fn): the guest has no dynamic libc, so the
 * test maps this library's text itself and calls pt_so_fn.
 */
__attribute__((noinline, used)) long pt_so_fn(long a, long b)
{
	__asm__ volatile("" ::: "memory");
	return a * 3 + b;
}
