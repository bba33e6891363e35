// SPDX-License-Identifier: GPL-2.0
/*
 * cx16-flags: does CMPXCHG16B leave RFLAGS as the architecture says?
 *
 * A user program, no pea involved (docs/qemu-cmpxchg16b.md). CMPXCHG16B
 * writes ZF and leaves every other flag alone. QEMU 7.2's TCG computes the
 * other flags in its helper from the condition-code state *as it was when
 * the translation block was entered* (the translator does not store its
 * cc_op before calling the helper), so when the block was entered with
 * cc_op == CC_OP_EFLAGS (after POPF, IRET, or an earlier CMPXCHG16B that
 * ended a block) and an instruction earlier in the block left a register
 * value in CC_SRC (CMP/SUB/ADD keep their source operand there), the
 * flags after CMPXCHG16B are that register's low 32 bits, ZF forced.
 * An interrupt taken before the next flag-setting instruction pushes those
 * bits as RFLAGS, and IRET then loads TF, DF, AC, NT... from them.
 *
 *   A  deterministic: POPF (ends the block), CMP with a chosen operand,
 *      CMPXCHG16B (success and failure, with and without LOCK, plain and
 *      %fs-relative), then PUSHF; JNE and SETZ are checked too. Every
 *      case is compared with the architectural value: the CMP's flags
 *      with ZF replaced.
 *   B  interrupts: a loop of CMP; CMPXCHG16B; JNE, while ITIMER_REAL
 *      signals arrive; SIGALRM handlers look at the RFLAGS the kernel saved
 *      from the interrupt frame and SIGTRAP counts the trap flag that IRET
 *      loaded from the garbage. B1 keeps cc_op == CC_OP_EFLAGS from one
 *      iteration to the next; B2 puts a flag-setting instruction between
 *      iterations, as the kernel's code does, so it takes an interrupt at
 *      the block's entry and another one after the JNE.
 *
 * Output: one line per case and a summary; exit 0 when every flag was
 * right, 1 when any was wrong, 2 when the CPU has no CMPXCHG16B (then
 * there is nothing to test: that is the workaround, -cpu max,-cx16).
 *
 * Usage: cx16-flags [SECONDS_PER_B_PHASE]   (default 10)
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <linux/types.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>

#define F_CF	0x0001UL
#define F_PF	0x0004UL
#define F_AF	0x0010UL
#define F_ZF	0x0040UL
#define F_SF	0x0080UL
#define F_TF	0x0100UL
#define F_OF	0x0800UL
#define F_ARITH	(F_CF | F_PF | F_AF | F_ZF | F_SF | F_OF)
/* Bits a user program can never see set: 3, 5, 15, 22-63 reserved; VM. */
#define F_RESERVED	(0xffffffffffc08028UL | 0x20000UL)

/* 16-byte aligned, as CMPXCHG16B requires: __int128 is. */
struct pair {
	union {
		unsigned __int128 align;
		struct {
			__u64 lo, hi;
		};
	};
};

static __thread struct pair tls_pair;

static int bad;

/* The architectural flags of CMP src, dst (AT&T: dst - src). */
static __u64 cmp_flags(__u64 src, __u64 dst)
{
	__u64 f;

	asm volatile("cmpq %[s], %[d]\n\t"
		     "pushfq\n\t"
		     "popq %[f]"
		     : [f] "=r" (f)
		     : [s] "r" (src), [d] "r" (dst)
		     : "cc");
	return f;
}

/*
 * One case: POPF ends the translation block (cc_op becomes CC_OP_EFLAGS in
 * env), CMP src, dst puts src into CC_SRC, CMPXCHG16B, then SETZ and PUSHF.
 * The XOR closes the window before the block can end. Returns the flags
 * PUSHF saw; *z is what SETZ saw.
 */
#define CASE_DST	0x123456789abcdef0ULL

#define DEFINE_CASE(fn, insn)						\
static __u64 fn(struct pair *mem, __u64 src, __u64 a, __u64 d, __u8 *z)	\
{									\
	__u64 f0 = 0x202, dst = CASE_DST, f, t;				\
	__u64 b = 0xaaaabbbbccccddddULL, c = 0xeeeeffff00001111ULL;	\
									\
	asm volatile("pushq %[f0]\n\t"					\
		     "popfq\n\t"					\
		     "cmpq %[s], %[d]\n\t"				\
		     insn "\n\t"					\
		     "setz %[z]\n\t"					\
		     "pushfq\n\t"					\
		     "popq %[f]\n\t"					\
		     "xorl %k[t], %k[t]"				\
		     : [f] "=&r" (f), [z] "=&r" (*z), [t] "=&r" (t),	\
		       "+a" (a), "+d" (d), [m] "+m" (*mem)		\
		     : [f0] "r" (f0), [s] "r" (src), [d] "r" (dst),	\
		       "b" (b), "c" (c)					\
		     : "cc", "memory");					\
	return f;							\
}

DEFINE_CASE(case_plain, "cmpxchg16b %[m]")
DEFINE_CASE(case_lock, "lock cmpxchg16b %[m]")
DEFINE_CASE(case_fs, "cmpxchg16b %%fs:tls_pair@tpoff")
DEFINE_CASE(case_lock_fs, "lock cmpxchg16b %%fs:tls_pair@tpoff")

static void run_case(const char *name, int lock, int fs, int succeed,
		     __u64 src)
{
	struct pair heap_pair = { .lo = 0x1111222233334444ULL,
				  .hi = 0x5555666677778888ULL };
	struct pair *mem = fs ? &tls_pair : &heap_pair;
	__u64 a, d, f, want;
	__u8 z;

	tls_pair.lo = 0x1111222233334444ULL;
	tls_pair.hi = 0x5555666677778888ULL;
	a = succeed ? mem->lo : mem->lo + 1;
	d = mem->hi;

	if (fs && lock)
		f = case_lock_fs(mem, src, a, d, &z);
	else if (fs)
		f = case_fs(mem, src, a, d, &z);
	else if (lock)
		f = case_lock(mem, src, a, d, &z);
	else
		f = case_plain(mem, src, a, d, &z);

	want = (cmp_flags(src, CASE_DST) & ~F_ZF) | (succeed ? F_ZF : 0);
	printf("%s %-28s src %#018llx flags %#010llx want %#010llx setz %u\n",
	       f == want && z == succeed ? "ok  " : "BAD ", name,
	       (unsigned long long)src, (unsigned long long)f,
	       (unsigned long long)want, z);
	if (f != want || z != succeed)
		bad++;
	if (f != want && (__u32)(f & ~(F_ZF | 0x200 | 0x2)) ==
	    (__u32)(src & ~(F_ZF | 0x200 | 0x2)))
		printf("     flags == %s | 0x202, ZF = result\n",
		       "low 32 bits of the CMP's source register");
}

/* ---- B: interrupts in the window ---- */

/* TF and reserved bits: an interrupt in the window makes IRET single-step. */
#define B_SRC	0xa5000100ULL

static struct pair b1_mem = { .lo = 0x0123456789abcdefULL,
			      .hi = 0xfedcba9876543210ULL };
static volatile double b1_deadline;
static volatile sig_atomic_t alarms, alarm_garbage, traps, trap_garbage;
static volatile __u64 first_garbage[4];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void note(__u64 fl)
{
	int i;

	for (i = 0; i < 4; i++)
		if (!first_garbage[i]) {
			first_garbage[i] = fl;
			break;
		}
}

static void on_alarm(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	__u64 fl = uc->uc_mcontext.gregs[REG_EFL];

	(void)sig;
	(void)si;
	alarms++;
	if (fl & (F_RESERVED | F_TF)) {
		alarm_garbage++;
		note(fl);
		uc->uc_mcontext.gregs[REG_EFL] &= ~F_TF;
	}
	if (b1_deadline && now() > b1_deadline) {
		b1_mem.lo ^= 1;
		b1_deadline = 0;
	}
}

static void on_trap(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	__u64 fl = uc->uc_mcontext.gregs[REG_EFL];

	(void)sig;
	(void)si;
	traps++;
	if (fl & F_RESERVED)
		trap_garbage++;
	note(fl | (1ULL << 63));
	/* Single-stepping came from the garbage: stop it, carry on. */
	uc->uc_mcontext.gregs[REG_EFL] &= ~F_TF;
}

/*
 * B1: JE back to the CMP ends every block with cc_op == CC_OP_EFLAGS, so
 * every iteration computes its flags from CC_SRC; the loop runs until the
 * SIGALRM handler changes the memory (the CMPXCHG16B fails).
 */

static __u64 loop_b1(struct pair *mem, long n)
{
	__u64 a = mem->lo, d = mem->hi, iters = 0;
	__u64 src = B_SRC, dst = 1;

	(void)n;
	asm volatile("pushq $0x202\n\t"
		     "popfq\n\t"
		     "1:\n\t"
		     "leaq 1(%[i]), %[i]\n\t"
		     "cmpq %[s], %[d]\n\t"
		     "cmpxchg16b %[m]\n\t"
		     "je 1b"
		     : [i] "+r" (iters), "+a" (a), "+d" (d), [m] "+m" (*mem)
		     : [s] "r" (src), [d] "r" (dst), "b" (a), "c" (d)
		     : "cc", "memory");
	return iters;
}

/* B2: returns the number of wrong ZFs (the loop counts the failures). */
static __u64 loop_b2(struct pair *mem, long n)
{
	__u64 a = mem->lo, d = mem->hi, zbad = 0;
	__u64 src = B_SRC, dst = 1;

	asm volatile("1:\n\t"
		     "cmpq %[s], %[d]\n\t"
		     "cmpxchg16b %[m]\n\t"
		     "jne 2f\n\t"
		     "3: decq %[n]\n\t"	/* a new block: flags rewritten */
		     "jnz 1b\n\t"
		     "jmp 4f\n\t"
		     "2: incq %[zb]\n\t"
		     "jmp 3b\n\t"
		     "4:"
		     : [n] "+r" (n), [zb] "+r" (zbad), "+a" (a), "+d" (d),
		       [m] "+m" (*mem)
		     : [s] "r" (src), [d] "r" (dst), "b" (a), "c" (d)
		     : "cc", "memory");
	return zbad;
}

static void run_b(const char *name, int b1, double secs)
{
	static struct pair mem = { .lo = 0x0123456789abcdefULL,
				   .hi = 0xfedcba9876543210ULL };
	struct itimerval it = { { 0, 200 }, { 0, 200 } };	/* 5 kHz */
	__u64 zbad = 0, iters = 0;
	double t0 = now();
	int i;

	alarms = 0;
	alarm_garbage = 0;
	traps = 0;
	trap_garbage = 0;
	memset((void *)first_garbage, 0, sizeof(first_garbage));
	setitimer(ITIMER_REAL, &it, NULL);
	if (b1) {
		b1_deadline = t0 + secs;
		iters = loop_b1(&b1_mem, 0);
	} else {
		while (now() - t0 < secs) {
			zbad += loop_b2(&mem, 100000);
			iters += 100000;
		}
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);

	printf("%s %s: %.1f s, %llu cmpxchg16b, %d SIGALRM (%d with %s), ",
	       alarm_garbage || traps || zbad ? "BAD " : "ok  ", name,
	       now() - t0, (unsigned long long)iters, alarms, alarm_garbage,
	       "reserved bits or TF in the saved RFLAGS");
	printf("%d SIGTRAP from a TF nobody set (%d with reserved bits), %llu wrong ZF\n",
	       traps, trap_garbage, (unsigned long long)zbad);
	for (i = 0; i < 4 && first_garbage[i]; i++)
		printf("     saved RFLAGS (%s) %#010llx, CMP source register %#llx\n",
		       first_garbage[i] >> 63 ? "SIGTRAP" : "SIGALRM",
		       (unsigned long long)(first_garbage[i] & ~(1ULL << 63)),
		       (unsigned long long)B_SRC);
	if (alarm_garbage || traps || zbad)
		bad++;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	unsigned int eax, ebx, ecx, edx;
	struct sigaction sa;
	int lock, fs, ok;

	setvbuf(stdout, NULL, _IOLBF, 0);
	__cpuid(1, eax, ebx, ecx, edx);
	if (!(ecx & bit_CMPXCHG16B)) {
		printf("cx16-flags: CPUID.1:ECX.CX16 is clear: no CMPXCHG16B, nothing to test\n");
		return 2;
	}

	for (lock = 0; lock < 2; lock++)
		for (fs = 0; fs < 2; fs++)
			for (ok = 0; ok < 2; ok++) {
				char name[64];

				snprintf(name, sizeof(name), "A %s%s %s",
					 lock ? "lock " : "",
					 fs ? "%fs:" : "mem",
					 ok ? "success" : "failure");
				run_case(name, lock, fs, ok, 0xa50000c5ULL);
				run_case(name, lock, fs, ok, 0x81b466a0ULL);
			}

	memset(&sa, 0, sizeof(sa));
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sa.sa_sigaction = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_sigaction = on_trap;
	sigaction(SIGTRAP, &sa, NULL);

	run_b("B1 loop, cc_op stays EFLAGS", 1, secs);
	run_b("B2 loop, kernel-like", 0, secs);

	printf("cx16-flags: %s (%d bad)\n", bad ? "FLAGS WRONG" : "flags right",
	       bad);
	return bad ? 1 : 0;
}
