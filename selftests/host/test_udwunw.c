// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): DWARF unwinding of a user stack copy
 * (tools/pea/udwunw.c), as pea profile --call-graph dwarf does it with
 * the kernel's struct pea_user_regs. A program built here without frame
 * pointers (-O2 -fomit-frame-pointer, a PIE linked with the shared libc:
 * both placed at a load bias) runs main -> a -> spin, spinning for ever;
 * it is stopped with ptrace, and its registers (PTRACE_GETREGS, put in
 * DWARF order as the kernel does) and the top of its stack
 * (process_vm_readv(), cut at the first page that cannot be read, as the
 * kernel cuts it) make the record. Its maps are read (usyms_snap()) and
 * the stack unwound: spin, a, main exactly, then libc's start; with 8
 * bytes of stack: spin and a only (a's return address is the word at the
 * stack pointer, main's is past it); with none: spin only; a 32-bit ABI:
 * the ip only; a record shorter than its stack_size: EINVAL. TAP on
 * stdout.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <linux/pea.h>
#include "udwunw.h"
#include "usym.h"

#define HOST_TAP_NAME "udwunw"
#include "host_tap.h"

#define STACK	8192

static char dir[64];

static const char prog[] =
	"#include <stdio.h>\n"
	"volatile unsigned long sink;\n"
	"__attribute__((noinline, noipa)) void spin(void)\n"
	"{\n"
	"	for (;;)\n"
	"		sink++;\n"
	"}\n"
	"__attribute__((noinline, noipa)) void a(void)\n"
	"{\n"
	"	spin();\n"
	"	sink--;\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"	printf(\"go\\n\");\n"
	"	fflush(stdout);\n"
	"	a();\n"
	"	return 0;\n"
	"}\n";

static union {
	struct pea_user_regs ur;
	unsigned char b[sizeof(struct pea_user_regs) + STACK];
} rec;

/* The record of stopped @pid: its registers and up to STACK bytes. */
static int take(pid_t pid)
{
	struct user_regs_struct r;
	__u64 *v = rec.ur.regs;
	size_t done = 0;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &r))
		return -1;
	v[PEA_UREG_AX] = r.rax;
	v[PEA_UREG_DX] = r.rdx;
	v[PEA_UREG_CX] = r.rcx;
	v[PEA_UREG_BX] = r.rbx;
	v[PEA_UREG_SI] = r.rsi;
	v[PEA_UREG_DI] = r.rdi;
	v[PEA_UREG_BP] = r.rbp;
	v[PEA_UREG_SP] = r.rsp;
	v[PEA_UREG_R8 + 0] = r.r8;
	v[PEA_UREG_R8 + 1] = r.r9;
	v[PEA_UREG_R8 + 2] = r.r10;
	v[PEA_UREG_R8 + 3] = r.r11;
	v[PEA_UREG_R8 + 4] = r.r12;
	v[PEA_UREG_R8 + 5] = r.r13;
	v[PEA_UREG_R8 + 6] = r.r14;
	v[PEA_UREG_R8 + 7] = r.r15;
	v[PEA_UREG_IP] = r.rip;
	rec.ur.abi = PEA_UREGS_ABI_64;
	/* Page by page, as the kernel: stop at the first unreadable one. */
	while (done < STACK) {
		__u64 at = r.rsp + done;
		size_t n = 4096 - (at & 4095);
		struct iovec l, rm;

		if (n > STACK - done)
			n = STACK - done;
		l.iov_base = rec.ur.stack + done;
		l.iov_len = n;
		rm.iov_base = (void *)(unsigned long)at;
		rm.iov_len = n;
		if (process_vm_readv(pid, &l, 1, &rm, 1, 0) != (ssize_t)n)
			break;
		done += n;
	}
	rec.ur.stack_size = done;
	return 0;
}

/* Unwind with @stack bytes; the frames' names, ';'-joined, in @names. */
static int unwind(struct udwunw *w, const struct usyms *us, pid_t pid,
		  __u32 stack, char *names, size_t len)
{
	__u64 ips[64];
	char one[256];
	__u32 keep = rec.ur.stack_size;
	int n, i;

	if (stack < keep)
		rec.ur.stack_size = stack;
	n = udwunw_unwind(w, pid, &rec.ur,
			  sizeof(rec.ur) + rec.ur.stack_size, ips, 64);
	rec.ur.stack_size = keep;
	names[0] = '\0';
	for (i = 0; i < n; i++) {
		usyms_name(us, pid, ips[i] - (i ? 1 : 0), one, sizeof(one));
		if (strlen(names) + strlen(one) + 2 < len) {
			if (i)
				strcat(names, ";");
			strcat(names, one);
		}
	}
	return n;
}

int main(void)
{
	char cmd[256], path[128], line[16], names[4096];
	struct usyms *us = usyms_new();
	struct udwunw *w = udwunw_new(us);
	int fds[2], st, n;
	FILE *f;
	pid_t pid;

	snprintf(dir, sizeof(dir), "/tmp/pea-udwunw.XXXXXX");
	if (!us || !w || !mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/prog.c", dir);
	f = fopen(path, "w");
	if (!f || fputs(prog, f) < 0 || fclose(f))
		return 1;
	snprintf(cmd, sizeof(cmd),
		 "cc -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -fasynchronous-unwind-tables -pie -fPIE -o %s/prog %s/prog.c",
		 dir, dir);
	ok(!system(cmd), "built without frame pointers (-O2 -fomit-frame-pointer, PIE)");
	snprintf(path, sizeof(path), "%s/prog", dir);
	if (pipe(fds))
		return 1;
	pid = fork();
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	ok(f && fgets(line, sizeof(line), f) && !strcmp(line, "go\n"),
	   "the program runs");
	usleep(200000);		/* into spin() */
	ok(!ptrace(PTRACE_ATTACH, pid, NULL, NULL) &&
	   waitpid(pid, &st, 0) == pid && WIFSTOPPED(st),
	   "stopped with ptrace");
	st = take(pid);
	ok(!st && rec.ur.stack_size >= 64,
	   "registers and %u bytes of stack taken", rec.ur.stack_size);
	ok(!usyms_snap(us, pid), "its maps read");
	n = unwind(w, us, pid, STACK, names, sizeof(names));
	printf("# %d frames: %s\n", n, names);
	ok(!strncmp(names, "spin;a;main;", 12),
	   "spin, a, main exactly, then more (%.80s)", names);
	ok(n >= 4 && strstr(names, "__libc_start") != NULL,
	   "then libc's start (%d frames)", n);
	n = unwind(w, us, pid, 8, names, sizeof(names));
	ok(n == 2 && !strcmp(names, "spin;a"),
	   "8 bytes of stack: spin;a (%d: %s)", n, names);
	n = unwind(w, us, pid, 0, names, sizeof(names));
	ok(n == 1 && !strcmp(names, "spin"),
	   "no stack: spin (%d: %s)", n, names);
	/* What one unwind costs here (printed, not asserted). */
	{
		struct timespec t0, t1;
		__u64 ips[64];
		int k;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (k = 0; k < 2000; k++)
			n = udwunw_unwind(w, pid, &rec.ur,
					  sizeof(rec.ur) + rec.ur.stack_size,
					  ips, 64);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("# one unwind of %d frames: %.1f us\n", n,
		       ((t1.tv_sec - t0.tv_sec) * 1e9 +
			(t1.tv_nsec - t0.tv_nsec)) / 2000 / 1e3);
	}
	/* Again from the kept Dwfl: the same. */
	n = unwind(w, us, pid, STACK, names, sizeof(names));
	ok(!strncmp(names, "spin;a;main;", 12), "again: spin;a;main;...");
	/* Its maps read again: the modules reported anew, the same. */
	ok(!usyms_snap(us, pid), "its maps read again");
	n = unwind(w, us, pid, STACK, names, sizeof(names));
	ok(!strncmp(names, "spin;a;main;", 12), "after a new snapshot: spin;a;main;...");
	rec.ur.abi = PEA_UREGS_ABI_32;
	n = unwind(w, us, pid, STACK, names, sizeof(names));
	ok(n == 1 && !strcmp(names, "spin"), "a 32-bit ABI: the ip only (%d)",
	   n);
	rec.ur.abi = PEA_UREGS_ABI_64;
	{
		__u64 ips[4];

		ok(udwunw_unwind(w, pid, &rec.ur, sizeof(rec.ur) + 8, ips, 4) ==
		   -EINVAL, "a record shorter than its stack_size: EINVAL");
		ok(udwunw_unwind(w, pid, &rec.ur, 8, ips, 4) == -EINVAL,
		   "a record shorter than the registers: EINVAL");
		n = udwunw_unwind(w, pid, &rec.ur,
				  sizeof(rec.ur) + rec.ur.stack_size, ips, 2);
		ok(n == 2, "at most max frames (%d)", n);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	/* An unknown process: the ip only. */
	{
		__u64 ips[4];

		n = udwunw_unwind(w, 0x7ffffff0, &rec.ur,
				  sizeof(rec.ur) + rec.ur.stack_size, ips, 4);
		ok(n == 1 && ips[0] == rec.ur.regs[PEA_UREG_IP],
		   "no maps for the process: the ip only (%d)", n);
	}
	udwunw_free(w);
	usyms_free(us);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	if (f)
		fclose(f);
	return host_tap_done();
}
