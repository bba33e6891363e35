// SPDX-License-Identifier: GPL-2.0
/*
 * Not a test: the program with DWARF whose functions test_udwarf resolves
 * (selftests/pt_udwarf.h), built as every host program is (-g).
 */
#include "../pt_udwarf.h"

int main(void)
{
	struct pt_ud_inner in = { 1, "x" };
	pt_ud_outer_t o = { .in = &in };

	return pt_ud_fn(1, 2, PT_UD_BLUE, true, "s", &o) +
	       (int)pt_ud_refuse(1, (struct pt_ud_pair){ 1, 2 }, 3, 4, 5, 6,
				 7, 8, 9) + (int)pt_ud_big(3).v[0] +
	       (int)pt_ud_stack(1, 2, 3, 4, 5, 6, 7, 8, 9,
				(struct pt_ud_big){ { 1, 2, 3, 4 } });
}
