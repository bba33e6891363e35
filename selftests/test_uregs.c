// SPDX-License-Identifier: GPL-2.0
/*
 * A sample's user registers and user stack copy (PEA_SAMPLE_F_USER_REGS,
 * struct pea_user_regs; issue 24), checked byte for byte against what
 * this program put there.
 *
 * A thread runs pt_uregs_spin(), which moves its stack pointer into a
 * region this program mapped, with a PROT_NONE page right above it and
 * every byte from the stack pointer up filled with a known pattern, sets
 * every other general register to a known value and spins on a flag
 * (user mode: no register changes). A task sampler on that thread must
 * then give, in every record taken while it spins: each register
 * exactly, the stack pointer, an ip on the loop's two instructions, and
 * exactly min(stack_user, bytes up to the guard page) bytes of stack,
 * equal to the pattern, with zeroes to the next 8 bytes. The stack
 * pointer is put 4 bytes off 8 in one run, so that the copied size is not
 * a multiple of 8. pt_uregs_sys() does the same around read(2) of
 * /dev/zero: a sample in the kernel gives the registers the thread
 * entered the kernel with (task_pt_regs(), as perf_sample_regs_user()),
 * its ip after the syscall instruction, and the kernel stack, user stack
 * and user registers of one record joined. Then the attr's refusals, and
 * a CPU-wide sampler: idle and kernel threads' samples carry none. A
 * 32-bit program (selftests/m32/pt_uregs32.c, embedded) spinning the same
 * way: PEA_UREGS_ABI_32, its 32-bit registers zero-extended, r8..r15 zero,
 * its stack bytes exact.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include "pea_test.h"
#include "pt_perm.h"

#define NCPU_MAX	64
#define PAGES		64
#define AREA		(16 << 10)	/* the spinning thread's stack */
/* The most a record without stacks holds: past the area's top. */
#define STACK_ALL	(PEA_SAMPLE_RECORD_MAX - 72 - 144)

/* Register n's value (DWARF number n) while the thread spins. */
#define PAT(n)		(0x5ea0000000000000ULL | ((__u64)(n) << 8) | (n))

/* The 32-bit program the Makefile builds (selftests/m32/pt_uregs32.c). */
__asm__(".pushsection .rodata\n"
	".balign 64\n"
	".globl pt_m32_start\npt_m32_start:\n"
	".incbin \"" PT_UREGS32 "\"\n"
	".globl pt_m32_end\npt_m32_end:\n"
	".popsection\n");
extern const unsigned char pt_m32_start[], pt_m32_end[];

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];

volatile unsigned char pt_uregs_stop, pt_uregs_spinning;
unsigned long pt_uregs_saved_sp;

/*
 * pt_uregs_spin(sp): spin with %rsp = @sp and every other register at
 * PAT(its DWARF number) until pt_uregs_stop; pt_uregs_l1 and _l2 are the
 * loop's two instructions.
 */
void pt_uregs_spin(unsigned long sp);
extern const char pt_uregs_l1[], pt_uregs_l2[];
/* pt_uregs_sys(sp, fd, buf, len): read(2) in a loop with that %rsp. */
void pt_uregs_sys(unsigned long sp, unsigned long fd, void *buf,
		  unsigned long len);
extern const char pt_uregs_s0[], pt_uregs_s1[], pt_uregs_s2[];

#define MOVPAT(n, reg)	"	movabs $" #n "*0x101 + 0x5ea0000000000000, %" reg "\n"
__asm__(".text\n"
	".globl pt_uregs_spin\n"
	"pt_uregs_spin:\n"
	"	push %rbx\n	push %rbp\n	push %r12\n"
	"	push %r13\n	push %r14\n	push %r15\n"
	"	mov %rsp, pt_uregs_saved_sp(%rip)\n"
	"	mov %rdi, %rsp\n"
	MOVPAT(0, "rax") MOVPAT(1, "rdx") MOVPAT(2, "rcx") MOVPAT(3, "rbx")
	MOVPAT(4, "rsi") MOVPAT(5, "rdi") MOVPAT(6, "rbp")
	MOVPAT(8, "r8") MOVPAT(9, "r9") MOVPAT(10, "r10") MOVPAT(11, "r11")
	MOVPAT(12, "r12") MOVPAT(13, "r13") MOVPAT(14, "r14")
	MOVPAT(15, "r15")
	"	movb $1, pt_uregs_spinning(%rip)\n"
	".globl pt_uregs_l1\n"
	"pt_uregs_l1:\n"
	"	cmpb $0, pt_uregs_stop(%rip)\n"
	".globl pt_uregs_l2\n"
	"pt_uregs_l2:\n"
	"	je pt_uregs_l1\n"
	"	mov pt_uregs_saved_sp(%rip), %rsp\n"
	"	pop %r15\n	pop %r14\n	pop %r13\n"
	"	pop %r12\n	pop %rbp\n	pop %rbx\n"
	"	ret\n"
	".globl pt_uregs_sys\n"
	"pt_uregs_sys:\n"
	"	push %rbx\n	push %rbp\n	push %r12\n"
	"	push %r13\n	push %r14\n	push %r15\n"
	"	mov %rsp, pt_uregs_saved_sp(%rip)\n"
	"	mov %rdi, %rsp\n"
	"	mov %rsi, %rdi\n"	/* fd */
	"	mov %rdx, %rsi\n"	/* buf */
	"	mov %rcx, %rdx\n"	/* len */
	MOVPAT(3, "rbx") MOVPAT(6, "rbp")
	MOVPAT(8, "r8") MOVPAT(9, "r9") MOVPAT(10, "r10")
	MOVPAT(12, "r12") MOVPAT(13, "r13") MOVPAT(14, "r14")
	MOVPAT(15, "r15")
	"	movb $1, pt_uregs_spinning(%rip)\n"
	".globl pt_uregs_s0\n"
	"pt_uregs_s0:\n"
	"	mov $0, %eax\n"		/* SYS_read */
	"	syscall\n"
	".globl pt_uregs_s1\n"
	"pt_uregs_s1:\n"
	"	cmpb $0, pt_uregs_stop(%rip)\n"
	"	je pt_uregs_s0\n"
	".globl pt_uregs_s2\n"
	"pt_uregs_s2:\n"
	"	mov pt_uregs_saved_sp(%rip), %rsp\n"
	"	pop %r15\n	pop %r14\n	pop %r13\n"
	"	pop %r12\n	pop %rbp\n	pop %rbx\n"
	"	ret\n");

static unsigned char *area;	/* AREA bytes, a PROT_NONE page above */
static unsigned long spin_sp;
static int spin_mode;		/* 0: pt_uregs_spin, 1: pt_uregs_sys */
static volatile pid_t spin_tid;
static char zbuf[1 << 20];

static unsigned char pat_byte(unsigned long addr)
{
	return (unsigned char)(addr * 131 + (addr >> 8) + 7);
}

static void *spinner(void *arg)
{
	int fd;

	(void)arg;
	spin_tid = (pid_t)syscall(SYS_gettid);
	if (spin_mode == 0) {
		pt_uregs_spin(spin_sp);
		return NULL;
	}
	fd = open("/dev/zero", O_RDONLY);
	if (fd < 0)
		pt_fatal("open /dev/zero");
	pt_uregs_sys(spin_sp, fd, zbuf, sizeof(zbuf));
	close(fd);
	return NULL;
}

static struct pea_sample_attr sattr(__u32 flags, pid_t tid, __u32 stack)
{
	struct pea_sample_attr s;

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.flags = PEA_SAMPLE_F_CLOEXEC | PEA_SAMPLE_F_FREQ | flags;
	s.id = 0x5b;
	s.type = PERF_TYPE_SOFTWARE;
	s.config = PERF_COUNT_SW_CPU_CLOCK;
	s.sample = 499;
	s.filter_tgid = tid;
	s.filter_cpu = -1;
	s.stack_user = stack;
	return s;
}

static int attach_errno(struct pea_sample_attr *s)
{
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_SAMPLE, s);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct tally {
	unsigned long samples, lost, checked, user, kern, bad, joined;
	unsigned long after;	/* taken after the stop: not checked */
};

static void bad(struct tally *t, const char *why, unsigned long long v)
{
	if (t->bad++ < 5)
		pt_diag("bad record: %s (0x%llx)", why, v);
}

static bool kaddr(__u64 x)
{
	return x >= 0xffff800000000000ULL;
}

/* One record of the spinning thread, taken before @stop_ns. */
static void check(struct tally *t, const unsigned char *p, __u32 raw,
		  __u32 stack_user, __u32 kdepth, __u32 udepth, __u64 stop_ns)
{
	unsigned long want = AREA - (spin_sp - (unsigned long)area);
	struct pea_sample_record r;
	struct pea_user_regs ur;
	const unsigned char *st;
	bool user;
	__u64 ip;

	memcpy(&r, p, sizeof(r));
	if (r.pid != (__u32)spin_tid)
		return bad(t, "pid", r.pid);
	t->samples++;
	if (r.time_ns >= stop_ns) {
		t->after++;
		return;
	}
	user = r.flags & PEA_REC_F_USER_MODE;
	if (user)
		t->user++;
	else
		t->kern++;
	if ((r.flags & ~PEA_REC_F_USER_MODE) !=
	    (PEA_REC_F_SAMPLE | PEA_REC_F_UREGS))
		return bad(t, "flags", r.flags);
	if (r.tgid != (__u32)getpid() || r.id != 0x5b)
		return bad(t, "tgid/id", r.tgid);
	if (r.kstack_nr > kdepth || r.ustack_nr > udepth ||
	    (udepth && !r.ustack_nr) || (user && r.kstack_nr))
		return bad(t, "stack entries", r.kstack_nr);
	if (!user && kdepth && !r.kstack_nr)
		return bad(t, "no kernel stack", 0);
	for (int i = 0; i < r.kstack_nr; i++) {
		__u64 k;

		memcpy(&k, p + sizeof(r) + i * 8, 8);
		if (!kaddr(k))
			return bad(t, "kernel frame", i);
	}
	p += sizeof(r) + (r.kstack_nr + r.ustack_nr) * 8;
	memcpy(&ur, p, sizeof(ur));
	want = want < stack_user ? want : stack_user;
	if (raw != sizeof(r) + (r.kstack_nr + r.ustack_nr) * 8 + sizeof(ur) +
	    ((want + 7) & ~7UL) + 4)
		return bad(t, "record size", raw);
	if (ur.abi != PEA_UREGS_ABI_64)
		return bad(t, "abi", ur.abi);
	if (ur.stack_size != want)
		return bad(t, "stack_size", ur.stack_size);
	if (ur.regs[PEA_UREG_SP] != spin_sp)
		return bad(t, "sp", ur.regs[PEA_UREG_SP]);
	ip = ur.regs[PEA_UREG_IP];
	if (udepth) {
		__u64 u0;

		memcpy(&u0, p - r.ustack_nr * 8, 8);
		if (u0 != ip)
			return bad(t, "ustack[0] != regs ip", ip);
	}
	if (spin_mode == 0) {
		if (ip != (__u64)(uintptr_t)pt_uregs_l1 &&
		    ip != (__u64)(uintptr_t)pt_uregs_l2)
			return bad(t, "ip", ip);
		for (int n = 0; n < PEA_UREGS_NR; n++)
			if (n != PEA_UREG_SP && n != PEA_UREG_IP &&
			    ur.regs[n] != PAT(n))
				return bad(t, "register", n);
	} else {
		static const int saved[] = { 3, 6, 8, 9, 10, 12, 13, 14, 15 };

		if (ip < (__u64)(uintptr_t)pt_uregs_s0 ||
		    ip >= (__u64)(uintptr_t)pt_uregs_s2)
			return bad(t, "ip", ip);
		for (unsigned int i = 0; i < sizeof(saved) / sizeof(*saved); i++)
			if (ur.regs[saved[i]] != PAT(saved[i]))
				return bad(t, "register", saved[i]);
		if (ur.regs[PEA_UREG_SI] != (__u64)(uintptr_t)zbuf)
			return bad(t, "rsi", ur.regs[PEA_UREG_SI]);
		if (!user) {
			/*
			 * In read(2): the registers it entered with, ip
			 * (and rcx, which syscall loads with it) the next
			 * instruction, the arguments.
			 */
			if (ip != (__u64)(uintptr_t)pt_uregs_s1 ||
			    ur.regs[PEA_UREG_CX] != ip ||
			    ur.regs[PEA_UREG_DX] != sizeof(zbuf))
				return bad(t, "syscall registers", ip);
			if (r.kstack_nr && r.ustack_nr)
				t->joined++;
		}
	}
	st = p + sizeof(ur);
	for (unsigned long i = 0; i < want; i++)
		if (st[i] != pat_byte(spin_sp + i))
			return bad(t, "stack byte", i);
	for (unsigned long i = want; i < ((want + 7) & ~7UL); i++)
		if (st[i])
			return bad(t, "padding", i);
	t->checked++;
}

static void drain(struct tally *t, __u32 stack_user, __u32 kdepth,
		  __u32 udepth, __u64 stop_ns)
{
	struct perf_event_header *h = (void *)rec;
	__u32 raw;
	__u64 lost;

	for (int cpu = 0; cpu < ncpu; cpu++) {
		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type == PERF_RECORD_LOST) {
				memcpy(&lost, rec + 16, 8);
				t->lost += lost;
				continue;
			}
			memcpy(&raw, rec + 8, 4);
			check(t, rec + 12, raw, stack_user, kdepth, udepth,
			      stop_ns);
		}
	}
}

/*
 * Run the spinner (@mode) with its stack pointer @off bytes below the
 * guard page, sampled with @stack_user bytes and the stack depths given.
 */
static void run(int mode, unsigned long off, __u32 stack_user,
		__u32 kdepth, __u32 udepth)
{
	struct pea_sample_attr s;
	struct pea_link_info li;
	struct tally t = { 0 };
	struct timespec ts;
	double end;
	pthread_t th;
	__u64 stop_ns;
	int link;

	pt_rings_drain(rings, ncpu);
	spin_mode = mode;
	spin_sp = (unsigned long)area + AREA - off;
	for (unsigned long a = spin_sp; a < (unsigned long)area + AREA; a++)
		*(unsigned char *)a = pat_byte(a);
	pt_uregs_stop = 0;
	pt_uregs_spinning = 0;
	spin_tid = 0;
	if (pthread_create(&th, NULL, spinner, NULL))
		pt_fatal("pthread_create");
	while (!pt_uregs_spinning)
		usleep(1000);
	s = sattr(PEA_SAMPLE_F_TASK | PEA_SAMPLE_F_USER_REGS, spin_tid,
		  stack_user);
	s.kstack_depth = kdepth;
	s.ustack_depth = udepth;
	link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_SAMPLE, &s);
	PT_OK(link >= 0, "attach (stack_user %u): %s", stack_user,
	      link < 0 ? strerror(errno) : "a link");
	end = now() + 0.4 * pt_time_scale();
	while (link >= 0 && now() < end) {
		usleep(20000);
		drain(&t, stack_user, kdepth, udepth, ~0ULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	stop_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	pt_uregs_stop = 1;
	pthread_join(th, NULL);
	if (link < 0)
		return;
	memset(&li, 0, sizeof(li));
	if (ioctl(link, PEA_LINK_IOC_INFO, &li))
		pt_fatal("PEA_LINK_IOC_INFO");
	close(link);
	drain(&t, stack_user, kdepth, udepth, stop_ns);
	for (int cpu = 0; cpu < ncpu; cpu++) {
		__u64 lost = 0;

		if (ioctl(ev_fd[cpu], PEA_EVENT_IOC_TAKE_LOST, &lost))
			pt_fatal("PEA_EVENT_IOC_TAKE_LOST");
		t.lost += lost;
	}
	pt_diag("mode %d sp top-%lu stack_user %u: %lu samples (%lu user, %lu kernel, %lu after the stop, %lu joined), %lu lost; hits %llu written %llu",
		mode, off, stack_user, t.samples, t.user, t.kern, t.after,
		t.joined, t.lost, (unsigned long long)li.hits,
		(unsigned long long)li.written);
	PT_EQ(t.bad, 0, "mode %d stack_user %u sp top-%lu: every record exact",
	      mode, stack_user, off);
	PT_OK(t.checked >= 10, "mode %d stack_user %u: %lu records checked (>= 10)",
	      mode, stack_user, t.checked);
	PT_EQ(t.samples + t.lost, li.hits, "mode %d stack_user %u: records + lost == overflows",
	      mode, stack_user);
	PT_EQ(t.samples, li.written, "mode %d stack_user %u: records == written",
	      mode, stack_user);
	if (mode == 1 && kdepth && udepth)
		PT_OK(t.joined >= 1, "in read(2): kernel stack, user stack and user registers in one record (%lu)",
		      t.joined);
}

/*
 * A CPU-wide sampler while the thread spins: a record without a user
 * context (idle) has no uregs, every user-mode one has them.
 */
static void test_cpu_wide(void)
{
	pthread_t th;

	struct perf_event_header *h = (void *)rec;
	unsigned long idle = 0, idle_uregs = 0, user = 0, user_uregs = 0;
	struct pea_sample_attr s;
	struct pea_sample_record r;
	int link;

	pt_rings_drain(rings, ncpu);
	spin_mode = 0;
	spin_sp = (unsigned long)area + AREA - 64;
	pt_uregs_stop = 0;
	pt_uregs_spinning = 0;
	if (pthread_create(&th, NULL, spinner, NULL))
		pt_fatal("pthread_create");
	while (!pt_uregs_spinning)
		usleep(1000);
	s = sattr(PEA_SAMPLE_F_USER_REGS, 0, 64);
	link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_SAMPLE, &s);
	PT_OK(link >= 0, "CPU-wide attach: %s",
	      link < 0 ? strerror(errno) : "a link");
	if (link >= 0) {
		usleep(300000 * pt_time_scale());
		close(link);
	}
	pt_uregs_stop = 1;
	pthread_join(th, NULL);
	if (link < 0)
		return;
	for (int cpu = 0; cpu < ncpu; cpu++) {
		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			memcpy(&r, rec + 12, sizeof(r));
			if (r.pid == 0) {
				idle++;
				idle_uregs += !!(r.flags & PEA_REC_F_UREGS);
			} else if (r.flags & PEA_REC_F_USER_MODE) {
				user++;
				user_uregs += !!(r.flags & PEA_REC_F_UREGS);
			}
		}
	}
	pt_diag("CPU-wide: %lu idle samples (%lu with uregs), %lu user-mode (%lu)",
		idle, idle_uregs, user, user_uregs);
	PT_OK(idle > 0, "CPU-wide: idle samples (%lu)", idle);
	PT_EQ(idle_uregs, 0, "CPU-wide: idle samples carry no user registers");
	PT_OK(user > 0, "CPU-wide: user-mode samples (%lu)", user);
	PT_EQ(user_uregs, user, "CPU-wide: every user-mode sample carries them");
}

/*
 * As nobody without capabilities, a kernel-mode sampler of its own task
 * with a bad stack_user of |@arg| bytes (12, 65536): pea's errno for
 * @arg > 0, perf_event_open()'s of the same event for @arg < 0.
 */
static int nobody_bad_stack(void *arg)
{
	long v = (long)arg;
	__u32 stack = (__u32)(v < 0 ? -v : v);
	struct pea_sample_attr s;
	struct perf_event_attr a;
	int fd;

	if (pt_drop_to_nobody(-1))
		return 250;
	if (v > 0) {
		s = sattr(PEA_SAMPLE_F_TASK | PEA_SAMPLE_F_USER_REGS, 0, stack);
		fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_SAMPLE, &s);
		if (fd >= 0)
			close(fd);
		return fd < 0 ? errno : 0;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 1;
	a.sample_freq = 499;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER |
			PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = 0xff01ffULL;	/* ax..ip, r8..r15 */
	a.sample_stack_user = stack;
	return pt_perf_open_errno(&a, 0, -1);
}

/* As nobody: flag combinations pea refuses, @arg the flags. */
static int nobody_flags(void *arg)
{
	struct pea_sample_attr s;
	int fd;

	if (pt_drop_to_nobody(-1))
		return 250;
	s = sattr((__u32)(long)arg | PEA_SAMPLE_F_TASK, 0, 64);
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_SAMPLE, &s);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? errno : 0;
}

/*
 * As nobody, Linux's answer to what perf takes and pea refuses as its own
 * rule: user registers and stack with exclude_user (@arg 1), and
 * sample_stack_user without PERF_SAMPLE_STACK_USER (@arg 0).
 */
static int nobody_perf_taken(void *arg)
{
	struct perf_event_attr a;

	if (pt_drop_to_nobody(-1))
		return 250;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 1;
	a.sample_freq = 499;
	a.sample_type = PERF_SAMPLE_IP;
	a.sample_stack_user = 64;
	if (arg) {
		a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a.sample_regs_user = 0xff01ffULL;
		a.exclude_user = 1;
	}
	return pt_perf_open_errno(&a, 0, -1);
}

/*
 * perf_copy_attr() checks sample_stack_user before any permission
 * check: so does pea (review of dwunw, finding 1), at paranoid 2 and 3;
 * what perf takes comes after them (review of dwunw's fix, finding 1).
 */
static void test_errors_order(void)
{
	long paranoid = pt_perm_read_int(PT_PARANOID);
	static const long levels[] = { 2, 3 };
	static const long sizes[] = { 12, 65536 };

	for (unsigned int i = 0; i < 2; i++) {
		PT_EQ(pt_perm_write_int(PT_PARANOID, levels[i]), 0,
		      "perf_event_paranoid %ld", levels[i]);
		for (unsigned int j = 0; j < 2; j++) {
			int perf = pt_in_child(nobody_bad_stack,
					       (void *)-sizes[j]);

			PT_EQ(perf, EINVAL, "paranoid %ld, nobody: perf_event_open(), sample_stack_user %ld: EINVAL",
			      levels[i], sizes[j]);
			PT_EQ(pt_in_child(nobody_bad_stack, (void *)sizes[j]),
			      perf, "paranoid %ld, nobody: pea, stack_user %ld: as perf",
			      levels[i], sizes[j]);
		}
		PT_EQ(pt_in_child(nobody_perf_taken, (void *)1L), EACCES,
		      "paranoid %ld, nobody: perf_event_open(), user registers and stack with exclude_user: EACCES",
		      levels[i]);
		PT_EQ(pt_in_child(nobody_flags, (void *)(long)
				  (PEA_SAMPLE_F_USER_REGS |
				   PEA_SAMPLE_F_NO_USER)),
		      EACCES, "paranoid %ld, nobody: PEA_SAMPLE_F_USER_REGS with PEA_SAMPLE_F_NO_USER: EACCES first, as perf",
		      levels[i]);
		PT_EQ(pt_in_child(nobody_perf_taken, (void *)0L), EACCES,
		      "paranoid %ld, nobody: perf_event_open(), sample_stack_user without PERF_SAMPLE_STACK_USER: EACCES",
		      levels[i]);
		PT_EQ(pt_in_child(nobody_flags, (void *)0L), EACCES,
		      "paranoid %ld, nobody: stack_user without PEA_SAMPLE_F_USER_REGS: EACCES first, as perf",
		      levels[i]);
	}
	PT_EQ(pt_perm_write_int(PT_PARANOID, paranoid), 0,
	      "perf_event_paranoid restored (%ld)", paranoid);
}

static void test_errors(void)
{
	struct pea_sample_attr s;

	s = sattr(0, 0, 64);
	PT_EQ(attach_errno(&s), EINVAL, "stack_user without PEA_SAMPLE_F_USER_REGS: EINVAL");
	s = sattr(PEA_SAMPLE_F_USER_REGS, 0, 12);
	PT_EQ(attach_errno(&s), EINVAL, "stack_user 12 (not a multiple of 8): EINVAL");
	s = sattr(PEA_SAMPLE_F_USER_REGS, 0, PEA_STACK_USER_MAX + 8);
	PT_EQ(attach_errno(&s), EINVAL, "stack_user past PEA_STACK_USER_MAX: EINVAL");
	s = sattr(PEA_SAMPLE_F_USER_REGS, 0, 0xfffffff8);
	PT_EQ(attach_errno(&s), EINVAL, "stack_user 0xfffffff8: EINVAL");
	s = sattr(PEA_SAMPLE_F_USER_REGS | PEA_SAMPLE_F_NO_USER, 0, 0);
	PT_EQ(attach_errno(&s), EINVAL, "user registers of a kernel-only sampler: EINVAL");
	s = sattr(PEA_SAMPLE_F_USER_REGS, 0, 64);
	s.reserved3 = 1;
	PT_EQ(attach_errno(&s), EINVAL, "reserved3: EINVAL");
	PT_EQ(STACK_ALL, 65272, "STACK_ALL is 65272");
	/* The record at its largest: 72 + 144 + stack_user bytes. */
	s = sattr(PEA_SAMPLE_F_USER_REGS, 0,
		  PEA_SAMPLE_RECORD_MAX - sizeof(struct pea_sample_record) -
		  sizeof(struct pea_user_regs));
	s.filter_cpu = 0;
	PT_EQ(s.stack_user, 65272, "the largest stack_user without stacks is 65272");
	PT_EQ(attach_errno(&s), 0, "stack_user 65272: the record fits: taken");
	s.stack_user += 8;
	PT_EQ(attach_errno(&s), E2BIG, "stack_user 65280: a record past PEA_SAMPLE_RECORD_MAX: E2BIG");
	s = sattr(PEA_SAMPLE_F_USER_REGS, 0, 65272 - 16);
	s.kstack_depth = 1;
	s.ustack_depth = 1;
	s.filter_cpu = 0;
	PT_EQ(attach_errno(&s), 0, "stack_user 65256 with one frame each: taken");
	s.ustack_depth = 2;
	PT_EQ(attach_errno(&s), E2BIG, "one more frame: E2BIG");
	s = sattr(PEA_SAMPLE_F_USER_REGS, 0, PEA_STACK_USER_MAX);
	s.kstack_depth = 127;
	s.ustack_depth = 127;
	PT_EQ(attach_errno(&s), E2BIG, "stack_user max with both stacks 127 deep: E2BIG");
	s = sattr(0, 0, 0);
	s.reserved2 = 1ULL << 32;
	PT_EQ(attach_errno(&s), EINVAL, "reserved2's upper half (reserved3): EINVAL");
	PT_EQ(sizeof(struct pea_sample_attr), 64, "struct pea_sample_attr is still 64 bytes");
	PT_EQ(sizeof(struct pea_user_regs), 144, "struct pea_user_regs is 144 bytes");
}

/* Run the 32-bit program under a task sampler; check its records. */
static void test_compat(void)
{
	const char *path = "/tmp/pt_uregs32";
	unsigned long l1 = 0, l2 = 0, sp = 0, checked = 0, nrec = 0, bad32 = 0;
	struct perf_event_header *h = (void *)rec;
	struct pea_sample_attr s;
	char line[128];
	int fd, p[2], link, st;
	FILE *f;
	pid_t pid;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd < 0 || write(fd, pt_m32_start, pt_m32_end - pt_m32_start) !=
	    pt_m32_end - pt_m32_start || close(fd))
		pt_fatal("writing the 32-bit program");
	if (pipe(p))
		pt_fatal("pipe");
	pid = fork();
	if (!pid) {
		dup2(p[1], 1);
		close(p[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	st = f && fgets(line, sizeof(line), f) &&
	     sscanf(line, "%lx %lx %lx", &l1, &l2, &sp) == 3;
	PT_OK(st, "the 32-bit program runs (loop at 0x%lx, sp 0x%lx)", l1, sp);
	pt_rings_drain(rings, ncpu);
	s = sattr(PEA_SAMPLE_F_TASK | PEA_SAMPLE_F_USER_REGS, pid, 4096);
	link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_SAMPLE, &s);
	PT_OK(link >= 0, "attach to the 32-bit task: %s",
	      link < 0 ? strerror(errno) : "a link");
	usleep(400000 * pt_time_scale());
	if (link >= 0)
		close(link);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (f)
		fclose(f);
	for (int cpu = 0; cpu < ncpu; cpu++) {
		while (pt_ring_next(&rings[cpu], rec)) {
			struct pea_sample_record r;
			struct pea_user_regs ur;
			const unsigned char *q = rec + 12, *stk;
			bool ok = true;

			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			memcpy(&r, q, sizeof(r));
			if (r.pid != (__u32)pid)
				continue;
			nrec++;
			if (!(r.flags & PEA_REC_F_UREGS)) {
				bad32++;
				continue;
			}
			q += sizeof(r) + (r.kstack_nr + r.ustack_nr) * 8;
			memcpy(&ur, q, sizeof(ur));
			if (ur.abi != PEA_UREGS_ABI_32) {
				bad32++;
				continue;
			}
			/* Before the loop (its start): only the ABI. */
			if (ur.regs[PEA_UREG_IP] != l1 &&
			    ur.regs[PEA_UREG_IP] != l2)
				continue;
			for (int n = 0; n <= PEA_UREG_BP; n++)
				if (ur.regs[n] != 0x5ea00000ULL + 0x101ULL * n)
					ok = false;
			for (int n = PEA_UREG_R8; n < PEA_UREG_R8 + 8; n++)
				if (ur.regs[n])
					ok = false;
			if (ur.regs[PEA_UREG_SP] != sp || ur.stack_size != 1000)
				ok = false;
			stk = q + sizeof(ur);
			for (unsigned long i = 0; ok && i < 1000; i++)
				if (stk[i] != pat_byte(sp + i))
					ok = false;
			if (ok)
				checked++;
			else if (bad32++ < 3)
				pt_diag("32-bit record: ip 0x%llx sp 0x%llx ax 0x%llx r8 0x%llx size %u",
					(unsigned long long)ur.regs[PEA_UREG_IP],
					(unsigned long long)ur.regs[PEA_UREG_SP],
					(unsigned long long)ur.regs[PEA_UREG_AX],
					(unsigned long long)ur.regs[PEA_UREG_R8],
					ur.stack_size);
		}
	}
	pt_diag("32-bit task: %lu records, %lu in the loop checked", nrec,
		checked);
	PT_EQ(bad32, 0, "32-bit task: every record PEA_UREGS_ABI_32, exact in the loop");
	PT_OK(checked >= 5, "32-bit task: %lu records in the loop: 7 registers, sp, r8..r15 zero, 1000 stack bytes exact",
	      checked);
}

int main(void)
{
	area = mmap(NULL, AREA + 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		pt_fatal("mmap");
	if (mprotect(area + AREA, 4096, PROT_NONE))
		pt_fatal("mprotect");
	ncpu = pt_cpu_map("uregs", PAGES, &map_fd, ev_fd, rings);
	if (ncpu > NCPU_MAX)
		pt_fatal("too many CPUs");
	test_errors();
	test_errors_order();
	/* Registers only; a part of the stack; cut at the guard page. */
	run(0, 12424, 0, 0, 0);
	run(0, 12424, 512, 0, 0);
	run(0, 12424, STACK_ALL, 0, 0);
	/* 4 bytes off 8: a size that is not a multiple of 8, padded. */
	run(0, 12428, 8192, 0, 0);
	run(0, 12428, STACK_ALL, 0, 0);
	/* After both stacks' entries. */
	run(0, 1000, 4096, 16, 16);
	/* In the kernel: the registers read(2) was entered with, joined. */
	run(1, 2000, 4096, 32, 16);
	test_cpu_wide();
	test_compat();
	return pt_done();
}
