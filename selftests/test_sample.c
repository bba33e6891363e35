// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling producers (PEA_MAP_IOC_ATTACH_SAMPLE, issue 24): cpu-clock at
 * a frequency on every CPU, filtered on a workload child that spends, by
 * construction, three quarters of its time in a() and one quarter in b(),
 * each calling spin() (this program is built with frame pointers, and
 * spin() has a frame of its own); then
 * the records: the task, user mode, the user stacks spin <- a|b <- main
 * exactly, the a:b ratio within a stated tolerance, kernel and user
 * stacks joined in the samples taken in a read(2), walks that end at a
 * frame pointer into the kernel or unmapped memory, and the counts
 * (records + lost == overflows exactly, also with a ring too small);
 * kernel-only and user-only sampling; the attr's refusals.
 *
 * a, b, spin, k and main sit in sections of their own, whose bounds the
 * linker names (__start_SECTION, __stop_SECTION): an address is in a
 * function if it is within its section.
 */
#include <elf.h>
#include <linux/io_uring.h>
#include "pea_test.h"
#include "pt_perm.h"

#define NCPU_MAX	64
#define PAGES		256
#define SPIN_N		50000
#define TOL		0.08	/* a's share: 0.75 +- TOL */

#define PT_FN(sec)	__attribute__((noinline, noipa, section(#sec)))
#define PT_RANGE(sec)	extern const char __start_##sec[], __stop_##sec[]
PT_RANGE(pt_spin);
PT_RANGE(pt_a);
PT_RANGE(pt_b);
PT_RANGE(pt_k);
PT_RANGE(pt_main);
PT_RANGE(pt_badfp);
#define IN(sec, x)	((x) >= (__u64)(uintptr_t)__start_##sec && \
			 (x) < (__u64)(uintptr_t)__stop_##sec)

/* The shared object the Makefile builds (selftests/pt_prof_so.c). */
__asm__(".pushsection .rodata\n"
	".balign 64\n"
	".globl pt_so_start\npt_so_start:\n"
	".incbin \"" PT_PROF_SO "\"\n"
	".globl pt_so_end\npt_so_end:\n"
	".popsection\n");
extern const unsigned char pt_so_start[], pt_so_end[];

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];
static volatile unsigned long sink;

/*
 * The counter lives on the stack (volatile): gcc 12 gives a leaf function
 * that touches no stack no frame, even with -mno-omit-leaf-frame-pointer,
 * and its caller would then be missing from every stack.
 */
PT_FN(pt_spin) void spin(unsigned long n)
{
	volatile unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

PT_FN(pt_a) void a(void)
{
	spin(3 * SPIN_N);
}

PT_FN(pt_b) void b(void)
{
	spin(SPIN_N);
}

/* Time in the kernel: reads of /dev/zero. */
PT_FN(pt_k) void k(int fd)
{
	static char buf[1 << 16];

	if (read(fd, buf, sizeof(buf)) < 0)
		_exit(3);
}

/* Spin with rbp at @fp: a frame pointer the walk must not follow. */
/*
 * Only between pt_badfp_in and pt_badfp_out does rbp hold @fp: at the
 * push and at the pop and ret it is the caller's, a good frame.
 */
void pt_badfp_fn(unsigned long n, unsigned long fp);
extern const char pt_badfp_in[], pt_badfp_out[];
__asm__(".pushsection pt_badfp,\"ax\",@progbits\n"
	".globl pt_badfp_fn\n"
	"pt_badfp_fn:\n"
	"	push %rbp\n"
	"	mov %rsi, %rbp\n"
	".globl pt_badfp_in\n"
	"pt_badfp_in:\n"
	"1:	dec %rdi\n"
	"	jnz 1b\n"
	".globl pt_badfp_out\n"
	"pt_badfp_out:\n"
	"	pop %rbp\n"
	"	ret\n"
	".popsection\n");

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The workload's modes: a() and b(); k(); bad frame pointers; spinning in
 * a shared object mapped after the exec (pea profile's test only); an
 * io_uring SQPOLL thread spinning in the kernel while main() sleeps.
 */
enum { W_AB, W_K, W_BADFP, W_SO, W_IOU, W_FORK };	/* W_FORK: 5 */

static char self[256];

/*
 * Fork the workload: it waits for a byte on @go, then runs this program
 * again as "--work MODE SECS", whose main() calls a(), b(), k() itself.
 */
static pid_t start_work(int mode, double secs, int *go)
{
	char m[16], t[32];
	int p[2];
	pid_t pid;

	if (pipe(p))
		pt_fatal("pipe");
	snprintf(m, sizeof(m), "%d", mode);
	snprintf(t, sizeof(t), "%f", secs);
	pid = fork();
	if (pid == 0) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(2);
		execl(self, self, "--work", m, t, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		pt_fatal("fork");
	close(p[0]);
	*go = p[1];
	return pid;
}

static void go_and_wait(pid_t pid, int go)
{
	int status;

	if (write(go, "g", 1) != 1)
		pt_fatal("write go");
	close(go);
	waitpid(pid, &status, 0);
	PT_OK(WIFEXITED(status) && !WEXITSTATUS(status),
	      "the workload ran (status 0x%x)", status);
}

static struct pea_sample_attr sattr(__u32 flags, __u64 hz, pid_t tgid)
{
	struct pea_sample_attr s;

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.flags = PEA_SAMPLE_F_CLOEXEC | PEA_SAMPLE_F_FREQ | flags;
	s.id = 0x5a;
	s.type = PERF_TYPE_SOFTWARE;
	s.config = PERF_COUNT_SW_CPU_CLOCK;
	s.sample = hz;
	s.filter_tgid = tgid;
	s.filter_cpu = -1;
	s.kstack_depth = flags & PEA_SAMPLE_F_NO_KERNEL ? 0 : 64;
	s.ustack_depth = flags & PEA_SAMPLE_F_NO_USER ? 0 : 64;
	return s;
}

static int attach(struct pea_sample_attr *s)
{
	return ioctl(map_fd, PEA_MAP_IOC_ATTACH_SAMPLE, s);
}

static int attach_errno(struct pea_sample_attr *s)
{
	int fd = attach(s);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

static bool kaddr(__u64 x)
{
	return x >= 0xffff800000000000ULL;
}

/* What one run's records held. */
struct tally {
	unsigned long samples, lost, bad, user, kern;
	unsigned long in_spin, spin_a, spin_b, spin_other;
	unsigned long joined, badfp, badfp_one;
	unsigned long nokstack_kernel;
	unsigned long no_ustack;	/* kernel samples of the exiting task */
	unsigned long reaped;		/* ... once reaped: pid -1 */
	unsigned long max_nr;		/* most entries in one record */
	unsigned long worker, worker_ustack;	/* W_IOU's SQPOLL thread */
};

static void bad(struct tally *t, const struct pea_sample_record *r,
		const char *why)
{
	if (t->bad++ < 3)
		pt_diag("bad record (%s): pid %u tgid %u cpu %u flags 0x%x comm %.16s ip 0x%llx knr %u unr %u",
			why, r->pid, r->tgid, r->cpu, r->flags, r->comm,
			(unsigned long long)r->ip, r->kstack_nr, r->ustack_nr);
}

/* One sample record (at @p, unaligned) of @pid: checked and counted. */
static void tally_sample(struct tally *t, const unsigned char *p, int cpu,
			 pid_t pid, int mode, __u32 flags)
{
	static __u64 ips[PEA_KSTACK_MAX + PEA_USTACK_MAX];
	struct pea_sample_record r;
	const __u64 *u;
	bool user;

	memcpy(&r, p, sizeof(r));
	if (r.kstack_nr + r.ustack_nr > PEA_KSTACK_MAX + PEA_USTACK_MAX) {
		bad(t, &r, "size");
		return;
	}
	memcpy(ips, p + sizeof(r), (r.kstack_nr + r.ustack_nr) * 8);
	t->samples++;
	if (r.kstack_nr + r.ustack_nr > t->max_nr)
		t->max_nr = r.kstack_nr + r.ustack_nr;
	/* A user worker of the process (io_uring's SQPOLL thread). */
	if (mode == W_IOU && r.pid != (__u32)pid && r.tgid == (__u32)pid) {
		t->worker++;
		if (r.ustack_nr)
			t->worker_ustack++;
		return;
	}
	user = r.flags & PEA_REC_F_USER_MODE;
	/*
	 * The workload on its way out while the test reaps it on another
	 * CPU: its pid is gone, -1 as perf reports it (seen once in 2,000 on
	 * 6.12; its SQPOLL thread's once on the debug kernel). In the
	 * kernel, and still named.
	 */
	if (r.pid == (__u32)-1 && r.tgid == (__u32)-1 && !user &&
	    (!strcmp(r.comm, "test_sample") ||
	     (mode == W_IOU && !strncmp(r.comm, "iou-sqp-", 8))) &&
	    kaddr(r.ip)) {
		t->reaped++;
		return;
	}
	if (r.pid != (__u32)pid || r.tgid != (__u32)pid || r.cpu != (__u32)cpu ||
	    r.id != 0x5a || strcmp(r.comm, "test_sample") ||
	    (r.flags & ~PEA_REC_F_USER_MODE) != PEA_REC_F_SAMPLE ||
	    r.reserved || r.reserved2 || !r.period) {
		bad(t, &r, "fields");
		return;
	}
	/*
	 * Kernel only: no user stack. Else one, from the user's ip, unless
	 * the task had no user memory any more (exiting, past exit_mm()).
	 */
	if ((flags & PEA_SAMPLE_F_NO_USER) ? r.ustack_nr || user :
	    !r.ustack_nr && user) {
		bad(t, &r, "user stack");
		return;
	}
	if (!r.ustack_nr && !(flags & PEA_SAMPLE_F_NO_USER))
		t->no_ustack++;
	u = ips + r.kstack_nr;
	if (user) {
		t->user++;
		/* In user mode: no kernel stack, the user stack from ip. */
		if (r.kstack_nr || u[0] != r.ip || kaddr(r.ip))
			bad(t, &r, "user mode");
	} else {
		t->kern++;
		if (!r.kstack_nr)
			t->nokstack_kernel++;
		else if (ips[0] != r.ip || !kaddr(r.ip))
			bad(t, &r, "kernel ip");
		for (int i = 0; i < r.kstack_nr; i++)
			if (!kaddr(ips[i]))
				bad(t, &r, "kernel frame");
		for (int i = 0; i < r.ustack_nr; i++)
			if (kaddr(u[i]))
				bad(t, &r, "user frame");
	}
	if (mode == W_AB && user && IN(pt_spin, u[0])) {
		t->in_spin++;
		if (r.ustack_nr >= 3 && IN(pt_a, u[1]) &&
		    IN(pt_main, u[2]))
			t->spin_a++;
		else if (r.ustack_nr >= 3 && IN(pt_b, u[1]) &&
			 IN(pt_main, u[2]))
			t->spin_b++;
		else
			t->spin_other++;
	}
	if (mode == W_K && !user && r.kstack_nr) {
		for (int i = 1; i < r.ustack_nr; i++)
			if (IN(pt_main, u[i]))
				t->joined++;
	}
	if (mode == W_BADFP && user &&
	    u[0] >= (__u64)(uintptr_t)pt_badfp_in &&
	    u[0] < (__u64)(uintptr_t)pt_badfp_out) {
		t->badfp++;
		if (r.ustack_nr == 1)
			t->badfp_one++;
	}
}

/*
 * Read every ring to its end, then take the drops the rings could not
 * report in a PERF_RECORD_LOST (a ring that stayed full), as a reader
 * does at its end.
 */
static void drain(struct tally *t, pid_t pid, int mode, __u32 flags)
{
	struct perf_event_header *h = (void *)rec;
	__u64 lost;
	int cpu;

	for (cpu = 0; cpu < ncpu; cpu++) {
		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type == PERF_RECORD_LOST) {
				memcpy(&lost, rec + 16, 8);
				t->lost += lost;
				continue;
			}
			if (h->type != PERF_RECORD_SAMPLE) {
				pt_diag("record type %u", h->type);
				t->bad++;
				continue;
			}
			tally_sample(t, rec + 12, cpu, pid, mode, flags);
		}
		lost = 0;
		if (ioctl(ev_fd[cpu], PEA_EVENT_IOC_TAKE_LOST, &lost))
			pt_fatal("PEA_EVENT_IOC_TAKE_LOST");
		t->lost += lost;
	}
}

static unsigned int depth_override;	/* both depths, if set */

/*
 * Sample @mode's workload for @secs at @hz with @flags; the link's info
 * in @li, the records' tally in @t.
 */
static int run(int mode, double secs, __u64 hz, __u32 flags,
	       struct pea_link_info *li, struct tally *t)
{
	struct pea_sample_attr s;
	int go, link;
	pid_t pid;

	memset(t, 0, sizeof(*t));
	pt_rings_drain(rings, ncpu);
	pid = start_work(mode, secs, &go);
	s = sattr(flags, hz, pid);
	if (depth_override) {
		s.kstack_depth = depth_override;
		s.ustack_depth = depth_override;
	}
	link = attach(&s);
	PT_OK(link >= 0, "attach: %s", link < 0 ? strerror(errno) : "a link");
	if (link < 0) {
		kill(pid, SIGKILL);
		go_and_wait(pid, go);
		return -1;
	}
	go_and_wait(pid, go);
	pt_link_settled(link, li);
	close(link);
	drain(t, pid, mode, flags);
	pt_diag("mode %d: %lu samples (%lu user, %lu kernel, %lu without a user stack, %lu being reaped), %lu lost; hits %llu written %llu errors %llu filtered %llu",
		mode, t->samples, t->user, t->kern, t->no_ustack, t->reaped,
		t->lost,
		(unsigned long long)li->hits, (unsigned long long)li->written,
		(unsigned long long)li->errors,
		(unsigned long long)li->filtered);
	/* Overflows of the workload: hits minus the other tasks'. */
	PT_EQ(t->samples + t->lost, li->hits - li->filtered,
	      "mode %d: records + lost == overflows", mode);
	PT_EQ(t->samples, li->written, "mode %d: records == written", mode);
	PT_EQ(t->lost, li->dropped, "mode %d: lost == dropped", mode);
	PT_EQ(li->errors, 0, "mode %d: no errors (drops are not)", mode);
	PT_EQ(t->bad, 0, "mode %d: every record is the workload's and well-formed",
	      mode);
	return 0;
}

static void test_ab(void)
{
	struct pea_link_info li;
	struct tally t;
	double share;

	if (run(W_AB, 4.0 * pt_time_scale(), 499, 0, &li, &t))
		return;
	PT_EQ(t.lost, 0, "a/b: nothing lost");
	PT_OK(t.in_spin >= 200, "a/b: %lu samples in spin (>= 200)", t.in_spin);
	PT_OK(t.spin_a + t.spin_b >= t.in_spin * 95 / 100,
	      "a/b: %lu of %lu samples in spin have the user stack spin <- a|b <- main exactly (>= 95%%; %lu others)",
	      t.spin_a + t.spin_b, t.in_spin, t.spin_other);
	share = t.spin_a + t.spin_b ?
		(double)t.spin_a / (t.spin_a + t.spin_b) : 0;
	PT_OK(share > 0.75 - TOL && share < 0.75 + TOL,
	      "a/b: a's share %.3f (%lu:%lu) is 0.75 +- %.2f", share,
	      t.spin_a, t.spin_b, TOL);
	PT_EQ(li.id, 0x5a, "info: id");
	PT_EQ(li.addr, PERF_COUNT_SW_CPU_CLOCK, "info: addr is the config");
	PT_OK(!strcmp(li.symbol, "sample:cpu-clock"), "info: symbol %s",
	      li.symbol);
}

/*
 * PEA_SAMPLE_F_TASK: one task's event with inheritance, on the workload
 * before its exec. Its samples and its child's come (the child is another
 * process: nothing is filtered), a sibling workload's never do, the link
 * says which task, and records + lost == overflows.
 */
static void test_task(void)
{
	struct perf_event_header *h = (void *)rec;
	struct pea_sample_record r;
	unsigned long own = 0, child = 0, sib = 0, other = 0, lost = 0;
	unsigned long stack_ok = 0, in_spin = 0, reaped = 0;
	struct pea_sample_attr s;
	struct pea_link_info li;
	int go, go2, link, cpu;
	pid_t pid, pid2, cpid = 0;
	char want[PEA_SYM_LEN];

	s = sattr(PEA_SAMPLE_F_TASK, 499, 0x7ffffff0);
	PT_EQ(attach_errno(&s), ESRCH, "task: no such task: ESRCH");
	s = sattr(PEA_SAMPLE_F_TASK, 499, -2);
	PT_EQ(attach_errno(&s), EINVAL, "task: a negative task: EINVAL");
	pt_rings_drain(rings, ncpu);
	pid = start_work(W_FORK, 2.0 * pt_time_scale(), &go);
	pid2 = start_work(W_AB, 2.0 * pt_time_scale(), &go2);
	s = sattr(PEA_SAMPLE_F_TASK, 499, pid);
	link = attach(&s);
	PT_OK(link >= 0, "task: attach to the workload: %s",
	      link < 0 ? strerror(errno) : "a link");
	if (link < 0) {
		kill(pid, SIGKILL);
		kill(pid2, SIGKILL);
		go_and_wait(pid, go);
		go_and_wait(pid2, go2);
		return;
	}
	if (write(go2, "g", 1) != 1)
		pt_fatal("write go");
	go_and_wait(pid, go);
	waitpid(pid2, NULL, 0);
	close(go2);
	pt_link_settled(link, &li);
	snprintf(want, sizeof(want), "sample:cpu-clock:task %d", (int)pid);
	PT_OK(!strcmp(li.symbol, want), "task: symbol %s (%s)", want,
	      li.symbol);
	close(link);
	for (cpu = 0; cpu < ncpu; cpu++) {
		__u64 n;

		while (pt_ring_next(&rings[cpu], rec)) {
			__u64 ips[PEA_KSTACK_MAX + PEA_USTACK_MAX];
			const __u64 *u;

			if (h->type == PERF_RECORD_LOST) {
				memcpy(&n, rec + 16, 8);
				lost += n;
				continue;
			}
			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			memcpy(&r, rec + 12, sizeof(r));
			if (r.kstack_nr + r.ustack_nr >
			    PEA_KSTACK_MAX + PEA_USTACK_MAX) {
				other++;
				continue;
			}
			memcpy(ips, rec + 12 + sizeof(r),
			       (r.kstack_nr + r.ustack_nr) * 8);
			u = ips + r.kstack_nr;
			if (r.tgid == (__u32)pid) {
				own++;
			} else if (r.tgid == (__u32)pid2) {
				sib++;
			} else if (r.tgid == (__u32)-1) {
				reaped++;	/* as in drain() */
			} else if (!strcmp(r.comm, "test_sample") &&
				   (!cpid || r.tgid == (__u32)cpid)) {
				cpid = r.tgid;
				child++;
			} else {
				other++;
			}
			if ((r.flags & PEA_REC_F_USER_MODE) && r.ustack_nr &&
			    IN(pt_spin, u[0])) {
				in_spin++;
				if (r.ustack_nr >= 3 &&
				    (IN(pt_a, u[1]) || IN(pt_b, u[1])) &&
				    IN(pt_main, u[2]))
					stack_ok++;
			}
		}
		n = 0;
		if (ioctl(ev_fd[cpu], PEA_EVENT_IOC_TAKE_LOST, &n))
			pt_fatal("PEA_EVENT_IOC_TAKE_LOST");
		lost += n;
	}
	pt_diag("task: %lu samples of the task, %lu of its child %d, %lu of the sibling, %lu others, %lu being reaped, %lu lost; hits %llu written %llu filtered %llu",
		own, child, (int)cpid, sib, other, reaped, lost,
		(unsigned long long)li.hits, (unsigned long long)li.written,
		(unsigned long long)li.filtered);
	PT_OK(own >= 100, "task: the task's samples (%lu >= 100)", own);
	PT_OK(child >= 100, "task: its child's, inherited (%lu >= 100)",
	      child);
	PT_EQ(sib, 0, "task: none of the sibling workload");
	PT_EQ(other, 0, "task: none of any other task");
	PT_EQ(li.filtered, 0, "task: nothing filtered");
	PT_EQ(own + child + reaped + lost, li.hits,
	      "task: records + lost == overflows");
	PT_OK(stack_ok >= in_spin * 95 / 100 && in_spin >= 100,
	      "task: %lu of %lu samples in spin have spin <- a|b <- main",
	      stack_ok, in_spin);
}

static void test_kernel(void)
{
	struct pea_link_info li;
	struct tally t;

	if (run(W_K, 3.0 * pt_time_scale(), 499, 0, &li, &t))
		return;
	PT_OK(t.kern >= 20, "read(2): %lu samples in the kernel (>= 20)",
	      t.kern);
	PT_EQ(t.nokstack_kernel, 0, "read(2): every kernel sample has a kernel stack");
	PT_OK(t.joined >= t.kern / 2,
	      "read(2): %lu of %lu kernel samples join a user stack reaching main",
	      t.joined, t.kern);
	/* Kernel only: no user-mode sample, no user stack (tally_sample()). */
	if (run(W_K, 2.0 * pt_time_scale(), 499, PEA_SAMPLE_F_NO_USER, &li, &t))
		return;
	PT_OK(t.kern >= 20 && !t.user,
	      "kernel only: %lu kernel samples, %lu user", t.kern, t.user);
}

static void test_badfp(void)
{
	struct pea_link_info li;
	struct tally t;

	if (run(W_BADFP, 3.0 * pt_time_scale(), 499, PEA_SAMPLE_F_NO_KERNEL,
		&li, &t))
		return;
	PT_EQ(t.kern, 0, "user only: no kernel-mode sample");
	PT_OK(t.badfp >= 50, "bad frame pointers: %lu samples (>= 50)",
	      t.badfp);
	PT_EQ(t.badfp_one, t.badfp,
	      "bad frame pointers (a kernel address, unmapped memory): the walk stops at the ip");
}

/*
 * perf_event_max_stack bounds a sample's whole callchain, kernel and
 * user parts together (get_perf_callchain()'s one entry count): at 10,
 * a record holds 10 entries at most, whatever the two depths.
 */
static void test_depth(void)
{
	long maxst = pt_perm_read_int("/proc/sys/kernel/perf_event_max_stack");
	struct pea_link_info li;
	struct tally t;
	int err;

	PT_EQ(pt_perm_write_int("/proc/sys/kernel/perf_event_max_stack", 10), 0,
	      "perf_event_max_stack 10");
	depth_override = 10;
	err = run(W_K, 2.0 * pt_time_scale(), 499, 0, &li, &t);
	depth_override = 0;
	PT_EQ(pt_perm_write_int("/proc/sys/kernel/perf_event_max_stack", maxst), 0,
	      "perf_event_max_stack restored");
	if (err)
		return;
	PT_OK(t.kern >= 20, "max_stack 10: %lu kernel samples", t.kern);
	PT_OK(t.max_nr <= 10,
	      "max_stack 10, depths 10 and 10: at most 10 entries a record (%lu)",
	      t.max_nr);
}

/*
 * A user worker (io_uring's SQPOLL thread) has a memory map but no user
 * context of its own: its pt_regs are copies from its creator's clone
 * (ip 0, the creator's old rbp). No user stack, as get_perf_callchain()
 * skips one for it (6.12's is_user_task()).
 */
static void test_worker(void)
{
	struct pea_link_info li;
	struct tally t;

	if (run(W_IOU, 1.5 * pt_time_scale(), 499, 0, &li, &t))
		return;
	PT_OK(t.worker >= 20, "io_uring SQPOLL thread: %lu samples", t.worker);
	PT_EQ(t.worker_ustack, 0,
	      "io_uring SQPOLL thread: no user stack in its samples");
}

/* A one-page ring at 4999 Hz on a busy child: losses, counted exactly. */
static void test_lost(void)
{
	struct pea_link_info li;
	struct tally t;
	int cpu;

	for (cpu = 0; cpu < ncpu; cpu++)
		pt_ring_unmap(&rings[cpu]);
	for (cpu = 0; cpu < ncpu; cpu++)
		if (pt_ring_map(&rings[cpu], ev_fd[cpu], 1,
				PROT_READ | PROT_WRITE))
			pt_fatal("mmap");
	if (!run(W_AB, 3.0 * pt_time_scale(), 4999, 0, &li, &t))
		PT_OK(t.lost > 0, "one-page rings: %lu lost", t.lost);
	for (cpu = 0; cpu < ncpu; cpu++)
		pt_ring_unmap(&rings[cpu]);
	for (cpu = 0; cpu < ncpu; cpu++)
		if (pt_ring_map(&rings[cpu], ev_fd[cpu], PAGES,
				PROT_READ | PROT_WRITE))
			pt_fatal("mmap");
}

/* What perf_event_open() says of a sampling cycles event on CPU 0. */
static int lin_hw_errno(void)
{
	struct perf_event_attr pa;
	int fd;

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = PERF_TYPE_HARDWARE;
	pa.config = PERF_COUNT_HW_CPU_CYCLES;
	pa.freq = 1;
	pa.sample_freq = 99;
	fd = syscall(SYS_perf_event_open, &pa, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * The CPU-wide rule comes before pea's own limits, as perf_event_open()
 * has no such limits: nobody at paranoid 1 asking for a user-only
 * sampler (which the kernel rule lets through) with max_user_links 0 is
 * refused EACCES, as perf_event_open() of the same event, not EMLINK.
 */
static void test_cpu_rule_first(void)
{
	const char *links = "/sys/module/pea/parameters/max_user_links";
	long paranoid = pt_perm_read_int(PT_PARANOID);
	long max_links = pt_perm_read_int(links);
	int p[2], got[2] = { -1, -1 }, status;
	struct stat st;
	pid_t pid;

	if (stat(PEA_DEVICE_PATH, &st))
		pt_fatal("stat " PEA_DEVICE_PATH);
	PT_EQ(chmod(PEA_DEVICE_PATH, 0666), 0, "/dev/pea opened to others");
	PT_EQ(pt_perm_write_int(PT_PARANOID, 1), 0, "perf_event_paranoid 1");
	PT_EQ(pt_perm_write_int(links, 0), 0, "max_user_links 0");
	if (pipe(p))
		pt_fatal("pipe");
	pid = fork();
	if (pid == 0) {
		struct pea_sample_attr s = sattr(PEA_SAMPLE_F_NO_KERNEL, 99, 0);
		struct perf_event_attr pa;
		int r[2], m, fd;

		if (pt_drop_to_nobody_caps(0))
			_exit(1);
		memset(&pa, 0, sizeof(pa));
		pa.size = sizeof(pa);
		pa.type = PERF_TYPE_SOFTWARE;
		pa.config = PERF_COUNT_SW_CPU_CLOCK;
		pa.freq = 1;
		pa.sample_freq = 99;
		pa.exclude_kernel = 1;
		pa.sample_type = PERF_SAMPLE_CALLCHAIN;
		fd = syscall(SYS_perf_event_open, &pa, -1, 0, -1,
			     PERF_FLAG_FD_CLOEXEC);
		r[0] = fd < 0 ? errno : 0;
		m = pt_map_create(NULL, 4, 0);
		fd = m < 0 ? -1 : ioctl(m, PEA_MAP_IOC_ATTACH_SAMPLE, &s);
		r[1] = m < 0 ? 1000 : fd < 0 ? errno : 0;
		if (write(p[1], r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], got, sizeof(got)) != sizeof(got))
		got[0] = got[1] = -1;
	close(p[0]);
	waitpid(pid, &status, 0);
	PT_EQ(got[0], EACCES, "nobody, paranoid 1, cpu-clock:u pid -1: perf_event_open() EACCES");
	PT_EQ(got[1], EACCES, "nobody, paranoid 1, user-only sampler, max_user_links 0: EACCES as Linux");
	PT_EQ(pt_perm_write_int(links, max_links), 0, "max_user_links restored");
	PT_EQ(pt_perm_write_int(PT_PARANOID, paranoid), 0,
	      "perf_event_paranoid restored");
	PT_EQ(chmod(PEA_DEVICE_PATH, st.st_mode & 07777), 0,
	      "device mode restored");
}

static void test_errors(void)
{
	struct pea_sample_attr s;
	struct perf_event_attr pa;
	long rate = pt_perm_read_int("/proc/sys/kernel/perf_event_max_sample_rate");
	long maxst = pt_perm_read_int("/proc/sys/kernel/perf_event_max_stack");
	int lin, fd;

	s = sattr(0, 99, 0);
	s.flags |= 1U << 20;
	PT_EQ(attach_errno(&s), EINVAL, "unknown flag: EINVAL");
	s = sattr(PEA_SAMPLE_F_NO_KERNEL | PEA_SAMPLE_F_NO_USER, 99, 0);
	PT_EQ(attach_errno(&s), EINVAL, "neither kernel nor user: EINVAL");
	s = sattr(0, 99, 0);
	s.kstack_depth = 1;
	s.flags |= PEA_SAMPLE_F_NO_KERNEL;
	PT_EQ(attach_errno(&s), EINVAL, "kernel stack of a user-only sampler: EINVAL");
	s = sattr(0, 99, 0);
	s.ustack_depth = PEA_USTACK_MAX + 1;
	PT_EQ(attach_errno(&s), EINVAL, "ustack_depth past PEA_USTACK_MAX: EINVAL");
	s = sattr(0, rate + 1, 0);
	PT_EQ(attach_errno(&s), EINVAL, "frequency past perf_event_max_sample_rate (%ld): EINVAL",
	      rate);
	s = sattr(0, rate, 0);
	s.filter_cpu = 0;
	PT_EQ(attach_errno(&s), 0, "frequency perf_event_max_sample_rate: taken");
	s = sattr(0, 0, 0);
	PT_EQ(attach_errno(&s), EINVAL, "frequency 0: EINVAL");
	s = sattr(0, 99, 0);
	s.flags &= ~PEA_SAMPLE_F_FREQ;
	s.sample = 1ULL << 63;
	PT_EQ(attach_errno(&s), EINVAL, "period with bit 63: EINVAL");
	s = sattr(0, 99, 0);
	s.config = PERF_COUNT_SW_PAGE_FAULTS;
	PT_EQ(attach_errno(&s), EINVAL, "software event other than cpu-clock: EINVAL");
	s = sattr(0, 99, 0);
	s.type = PERF_TYPE_TRACEPOINT;
	PT_EQ(attach_errno(&s), EINVAL, "tracepoint type: EINVAL");
	s = sattr(0, 99, 0);
	s.filter_cpu = ncpu;
	PT_EQ(attach_errno(&s), EINVAL, "filter_cpu past the CPUs: EINVAL");
	s = sattr(0, 99, 0);
	s.reserved2 = 1;
	PT_EQ(attach_errno(&s), EINVAL, "reserved2: EINVAL");
	s = sattr(0, 99, 0);
	s.size = 8;
	PT_EQ(attach_errno(&s), EINVAL, "size 8: EINVAL");
	PT_EQ(pt_perm_write_int("/proc/sys/kernel/perf_event_max_stack", 10), 0,
	      "perf_event_max_stack 10");
	s = sattr(0, 99, 0);
	s.kstack_depth = 0;
	s.ustack_depth = 11;
	PT_EQ(attach_errno(&s), EOVERFLOW, "ustack_depth past perf_event_max_stack: EOVERFLOW");
	s.ustack_depth = 10;
	PT_EQ(attach_errno(&s), 0, "ustack_depth perf_event_max_stack: taken");
	PT_EQ(pt_perm_write_int("/proc/sys/kernel/perf_event_max_stack", maxst), 0,
	      "perf_event_max_stack restored");
	/*
	 * Branch instructions at period 1 is BTS on Intel, whose records
	 * perf writes into its own ring, which a kernel counter has none of:
	 * such a sampler would never fire. Refused, PMU or not.
	 */
	s = sattr(0, 1, 0);
	s.flags &= ~PEA_SAMPLE_F_FREQ;
	s.type = PERF_TYPE_HARDWARE;
	s.config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS;
	s.filter_cpu = 0;
	PT_EQ(attach_errno(&s), EOPNOTSUPP,
	      "branch instructions at period 1 (BTS): EOPNOTSUPP");
	s.sample = 2;
	PT_EQ(attach_errno(&s), lin_hw_errno(),
	      "branch instructions at period 2: as perf_event_open() of cycles");
	/* Cycles: what perf_event_open() says of a sampling cycles event. */
	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = PERF_TYPE_HARDWARE;
	pa.config = PERF_COUNT_HW_CPU_CYCLES;
	pa.freq = 1;
	pa.sample_freq = 99;
	fd = syscall(SYS_perf_event_open, &pa, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	lin = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	s = sattr(0, 99, 0);
	s.type = PERF_TYPE_HARDWARE;
	s.config = PERF_COUNT_HW_CPU_CYCLES;
	s.filter_cpu = 0;
	PT_EQ(attach_errno(&s), lin, "cycles: as perf_event_open() (%s)",
	      lin ? strerror(lin) : "taken");
}

/* The workload, in main() itself: main -> a|b|k|pt_badfp. */
static int work_main(char **argv);

PT_FN(pt_main) int main(int argc, char **argv)
{
	ssize_t n;

	if (argc == 4 && !strcmp(argv[1], "--work"))
		return work_main(argv);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	self[n] = 0;
	ncpu = pt_cpu_map("sample", PAGES, &map_fd, ev_fd, rings);
	if (ncpu > NCPU_MAX)
		pt_fatal("too many CPUs");
	test_errors();
	test_ab();
	test_task();
	test_kernel();
	test_badfp();
	test_depth();
	test_worker();
	test_cpu_rule_first();
	test_lost();
	return pt_done();
}

/*
 * Write the shared object to /tmp, map its text and return its entry
 * point (pt_prof_so_spin), or NULL.
 */
static void (*map_so(void))(unsigned long)
{
	const Elf64_Ehdr *eh = (const void *)pt_so_start;
	const Elf64_Phdr *ph = (const void *)(pt_so_start + eh->e_phoff);
	__u64 off = ~0ULL, moff = 0;
	size_t len = 0, n = pt_so_end - pt_so_start;
	char path[64], *base;
	int fd, i;

	snprintf(path, sizeof(path), "/tmp/pt_prof_so.%d.so", (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0 || write(fd, pt_so_start, n) != (ssize_t)n)
		return NULL;
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) &&
		    eh->e_entry >= ph[i].p_vaddr &&
		    eh->e_entry < ph[i].p_vaddr + ph[i].p_filesz) {
			off = eh->e_entry - ph[i].p_vaddr + ph[i].p_offset;
			moff = ph[i].p_offset & ~(__u64)4095;
			len = ph[i].p_offset + ph[i].p_filesz - moff;
		}
	if (off == ~0ULL)
		return NULL;
	base = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, moff);
	close(fd);
	if (base == MAP_FAILED)
		return NULL;
	return (void (*)(unsigned long))(base + (off - moff));
}

/*
 * Keep an io_uring SQPOLL thread of this process busy until @end: fill
 * the submission ring with NOPs, which the thread takes, and empty the
 * completion ring. Returns main()'s status.
 */
static int iou_busy(double end)
{
	const int rw = PROT_READ | PROT_WRITE;
	struct io_uring_params up;
	struct io_uring_sqe *sqes;
	unsigned int *tail_p, *head_p, *flags_p, *array, *cqh, *cqt;
	size_t sqsz, cqsz;
	char *sq, *cq;
	int fd;

	memset(&up, 0, sizeof(up));
	up.flags = IORING_SETUP_SQPOLL;
	up.sq_thread_idle = 2000;
	fd = syscall(SYS_io_uring_setup, 64, &up);
	if (fd < 0)
		return 6;
	sqsz = up.sq_off.array + up.sq_entries * sizeof(unsigned int);
	cqsz = up.cq_off.cqes + up.cq_entries * sizeof(struct io_uring_cqe);
	if (up.features & IORING_FEAT_SINGLE_MMAP)
		sqsz = cqsz = sqsz > cqsz ? sqsz : cqsz;
	sq = mmap(NULL, sqsz, rw, MAP_SHARED | MAP_POPULATE, fd,
		  IORING_OFF_SQ_RING);
	cq = (up.features & IORING_FEAT_SINGLE_MMAP) ? sq :
	     mmap(NULL, cqsz, rw, MAP_SHARED | MAP_POPULATE, fd,
		  IORING_OFF_CQ_RING);
	sqes = mmap(NULL, up.sq_entries * sizeof(*sqes), rw,
		    MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		return 7;
	tail_p = (unsigned int *)(sq + up.sq_off.tail);
	head_p = (unsigned int *)(sq + up.sq_off.head);
	flags_p = (unsigned int *)(sq + up.sq_off.flags);
	array = (unsigned int *)(sq + up.sq_off.array);
	cqh = (unsigned int *)(cq + up.cq_off.head);
	cqt = (unsigned int *)(cq + up.cq_off.tail);
	while (now() < end) {
		unsigned int tail = *tail_p;
		unsigned int head = __atomic_load_n(head_p, __ATOMIC_ACQUIRE);

		for (; tail - head < up.sq_entries; tail++) {
			unsigned int i = tail & (up.sq_entries - 1);

			memset(&sqes[i], 0, sizeof(sqes[i]));
			sqes[i].opcode = IORING_OP_NOP;
			array[i] = i;
		}
		__atomic_store_n(tail_p, tail, __ATOMIC_RELEASE);
		__atomic_store_n(cqh, __atomic_load_n(cqt, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		if (__atomic_load_n(flags_p, __ATOMIC_ACQUIRE) &
		    IORING_SQ_NEED_WAKEUP)
			syscall(SYS_io_uring_enter, fd, 0, 0,
				IORING_ENTER_SQ_WAKEUP, NULL, 0);
	}
	close(fd);
	return 0;
}

/*
 * Inlined into main() (always_inline), so that the workload's functions
 * return into main's section.
 */
static inline __attribute__((always_inline)) int work_main(char **argv)
{
	int mode = atoi(argv[2]), fd = open("/dev/zero", O_RDONLY);
	double end = now() + atof(argv[3]);
	void (*so_spin)(unsigned long) = NULL;

	if (fd < 0)
		return 4;
	if (mode == W_SO) {
		so_spin = map_so();
		if (!so_spin)
			return 5;
	}
	if (mode == W_IOU)
		return iou_busy(end);
	/* a() in this process, b() in a child it forks. */
	if (mode == W_FORK) {
		pid_t c = fork();
		int st;

		while (now() < end) {
			if (c)
				a();
			else
				b();
		}
		if (c == 0)
			_exit(0);
		return c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) &&
		       !WEXITSTATUS(st) ? 0 : 8;
	}
	while (now() < end) {
		switch (mode) {
		case W_AB:
			a();
			b();
			break;
		case W_K:
			k(fd);
			break;
		case W_SO:
			so_spin(SPIN_N);
			break;
		default:
			pt_badfp_fn(SPIN_N, 0xffff888000000000UL);
			pt_badfp_fn(SPIN_N, 0x1000);
			break;
		}
	}
	return 0;
}
