// SPDX-License-Identifier: GPL-2.0
/*
 * The test guest's CPU has no CMPXCHG16B. QEMU 7.2's TCG computes the
 * flags of CMPXCHG16B from stale condition-code state, and an interrupt
 * in the window after it loads a register's low bits into RFLAGS; the
 * 6.12 guest kernel died of that under test_storm. scripts/vm-run.sh
 * therefore boots `-cpu max,-cx16` and the kernel falls back to its
 * emulation (docs/qemu-cmpxchg16b.md). This test keeps the workaround
 * from disappearing silently: on every CPU, CPUID.1:ECX.CX16 is clear,
 * /proc/cpuinfo does not list cx16, and the instruction raises #UD
 * (SIGILL).
 */
#include <cpuid.h>
#include <sys/wait.h>
#include "pea_test.h"

#define CPUINFO	"/proc/cpuinfo"

/* Count "processor" lines and flags lines that list cx16. */
static int scan_cpuinfo(int *cpus, int *flag_lines, int *with_cx16)
{
	char line[8192];
	FILE *f = fopen(CPUINFO, "r");

	*cpus = *flag_lines = *with_cx16 = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "processor", 9)) {
			(*cpus)++;
		} else if (!strncmp(line, "flags", 5)) {
			char *tok, *save = NULL;

			(*flag_lines)++;
			for (tok = strtok_r(strchr(line, ':'), ":\t\n ", &save);
			     tok; tok = strtok_r(NULL, "\t\n ", &save))
				if (!strcmp(tok, "cx16"))
					(*with_cx16)++;
		}
	}
	fclose(f);
	return 0;
}

/* Run CMPXCHG16B on @cpu in a child: the signal that killed it, or 0. */
static int cmpxchg16b_signal(int cpu)
{
	static unsigned __int128 v;	/* 16-byte aligned */
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		unsigned long a = 0, d = 0;

		pt_pin(cpu);
		asm volatile("cmpxchg16b %[m]"
			     : [m] "+m" (v), "+a" (a), "+d" (d)
			     : "b" (1UL), "c" (2UL)
			     : "cc", "memory");
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

int main(void)
{
	int ncpu = pt_nr_cpus(), cpus, flag_lines, with_cx16, cpu;

	PT_OK(ncpu >= 1, "%d CPUs online", ncpu);
	for (cpu = 0; cpu < ncpu; cpu++) {
		unsigned int eax, ebx, ecx, edx;

		pt_pin(cpu);
		__cpuid(1, eax, ebx, ecx, edx);
		PT_EQ(ecx & bit_CMPXCHG16B, 0,
		      "CPU %d: CPUID.1:ECX.CX16 is clear (ecx %#x)", cpu, ecx);
		PT_EQ(cmpxchg16b_signal(cpu), SIGILL,
		      "CPU %d: cmpxchg16b raises #UD (SIGILL)", cpu);
	}
	PT_EQ(scan_cpuinfo(&cpus, &flag_lines, &with_cx16), 0,
	      "read " CPUINFO);
	PT_EQ(cpus, ncpu, CPUINFO " lists every CPU");
	PT_EQ(flag_lines, ncpu, CPUINFO " has a flags line per CPU");
	PT_EQ(with_cx16, 0, "no CPU's flags list cx16");
	return pt_done();
}
