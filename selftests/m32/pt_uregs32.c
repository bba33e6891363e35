// SPDX-License-Identifier: GPL-2.0
/*
 * A 32-bit program for test_uregs, which embeds it: a compat task's user
 * registers and stack copy (PEA_UREGS_ABI_32). It maps AREA bytes at
 * PT32_AREA with a PROT_NONE page above, fills them with the pattern
 * test_uregs knows (pat_byte()), writes "L1 L2 SP\n" (the spin loop's two
 * instructions and the stack pointer it will spin with) to stdout, then
 * spins with %esp = SP and eax, ecx, edx, ebx, ebp, esi, edi at
 * 0x5ea00000 + 0x101 * (their x86-64 DWARF number) until killed.
 */
#include <stdio.h>
#include <sys/mman.h>

#define PT32_AREA	0x20000000UL
#define AREA		(16 << 10)
#define OFF		1000	/* the stack pointer, below the area's top */

void pt32_spin(unsigned long sp);
extern const char pt32_l1[], pt32_l2[];
static volatile unsigned char pt32_stop;

#define MOVPAT(n, reg)	"	movl $" #n "*0x101 + 0x5ea00000, %" reg "\n"
__asm__(".text\n"
	".globl pt32_spin\n"
	"pt32_spin:\n"
	"	movl 4(%esp), %esp\n"
	MOVPAT(0, "eax") MOVPAT(1, "edx") MOVPAT(2, "ecx") MOVPAT(3, "ebx")
	MOVPAT(4, "esi") MOVPAT(5, "edi") MOVPAT(6, "ebp")
	".globl pt32_l1\n"
	"pt32_l1:\n"
	"	cmpb $0, pt32_stop\n"
	".globl pt32_l2\n"
	"pt32_l2:\n"
	"	je pt32_l1\n"
	"	ud2\n");

static unsigned char pat_byte(unsigned long addr)
{
	return (unsigned char)(addr * 131 + (addr >> 8) + 7);
}

int main(void)
{
	unsigned char *a = mmap((void *)PT32_AREA, AREA + 4096,
				PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	unsigned long sp = PT32_AREA + AREA - OFF, x;

	if (a == MAP_FAILED || mprotect(a + AREA, 4096, PROT_NONE))
		return 2;
	for (x = sp; x < PT32_AREA + AREA; x++)
		*(unsigned char *)x = pat_byte(x);
	printf("%lx %lx %lx\n", (unsigned long)pt32_l1, (unsigned long)pt32_l2,
	       sp);
	fflush(stdout);
	pt32_spin(sp);
	return 3;
}
