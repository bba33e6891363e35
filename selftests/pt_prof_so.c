// SPDX-License-Identifier: GPL-2.0
/*
 * A shared object for test_sample's workload mode 3 (built with -shared
 * -nostdlib and frame pointers, its entry point pt_prof_so_spin): the
 * workload maps its text after its exec and spins in it, so only a
 * snapshot of its maps taken later (pea profile's, at the exit stop)
 * can name the samples.
 */
__attribute__((noinline, used)) void pt_prof_so_spin(unsigned long n)
{
	volatile unsigned long i;	/* on the stack: a frame (test_sample.c) */

	for (i = 0; i < n; i++)
		;
}
