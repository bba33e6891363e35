// SPDX-License-Identifier: GPL-2.0
/*
 * pea-bench -f sample: what a sample costs, and what unwinding its stacks
 * costs, in instructions (issue 24).
 *
 * Run by `BENCH_ARGS=-f sample make bench-icount` (or -f icount,sample) in
 * the guest of one vCPU under QEMU's -icount shift=0,sleep=off, where a
 * guest nanosecond is an instruction. A workload of a fixed number of
 * instructions runs once without a sampler and once under a cpu-clock
 * sampler of this task (PEA_SAMPLE_F_TASK) every SMP_PERIOD ns; the extra
 * time over the samples taken is the cost of one sample: the hrtimer
 * interrupt, perf's cpu-clock handling and pea's overflow handler with
 * its record. Workloads:
 *   - user: spin() at the bottom of SMP_DEPTH frames of recursion (frame
 *     pointers: this file is built with them), in user mode: without
 *     stacks, then with ustack_depth 127, which walks the SMP_DEPTH + 2
 *     frames (spin, the recursion, main's callers as far as rbp goes);
 *   - kernel: read(2) of /dev/zero, 64 KiB at a time, most samples in the
 *     kernel: without stacks, then with kstack_depth 127.
 * The difference between with and without stacks, over the mean entries
 * the records held, is the unwinding cost per frame. For comparison, the
 * same runs under Linux's own sampler of the task (perf_event_open() of
 * the same cpu-clock event, IP, TID, TIME, CPU and PERIOD into a perf
 * ring, with PERF_SAMPLE_CALLCHAIN for the stacks; its entries per sample
 * count perf's context markers too). Each figure is the
 * median of SMP_RUNS runs; the baseline is the cheapest run without a
 * sampler (a tick that lands in a run adds to it).
 *
 * Then, for DWARF unwinding in user space (pea profile --call-graph
 * dwarf), the user workload with its registers and SMP_STACK_USER bytes of
 * user stack in each record (PEA_SAMPLE_F_USER_REGS), against perf's
 * PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER of the same size: the
 * cost over no stacks, next to the frame-pointer walk's.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include "libpea.h"
#include "bench.h"

#define SMP_PERIOD	50000ULL	/* ns (instructions under icount) */
#define SMP_DEPTH	16		/* user frames below main's */
#define SMP_SPIN	4000000UL	/* spin() iterations per run */
#define SMP_READS	1000		/* 64 KiB reads per run */
#define SMP_RUNS	5
#define SMP_PAGES	4096		/* 16 MiB: every run's records fit */
#define SMP_STACK_USER	8192		/* perf's --call-graph dwarf default */

static volatile unsigned long smp_sink;

struct smp_tally {
	unsigned long samples, lost, knr, unr, user;
	unsigned long ubytes;	/* stack bytes copied (pea_user_regs) */
};

/* What the callbacks count: the run's records. */
static struct smp_tally smp_t;
/* Registers and this much stack per sample (0: none). */
static __u32 smp_stack_user;

/*
 * Linux's own sampler for comparison: perf_event_open() of the same
 * cpu-clock event of this task (PERF_SAMPLE_IP | TID | TIME | CPU |
 * PERIOD, and PERF_SAMPLE_CALLCHAIN with @chain), its ring read after the
 * run. Returns the event fd; *@ring its mapping.
 */
static int smp_perf_open(bool chain, bool user_only, void **ring)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = SMP_PERIOD;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			(chain ? PERF_SAMPLE_CALLCHAIN : 0);
	a.exclude_callchain_kernel = user_only;
	a.exclude_callchain_user = !user_only;
	if (smp_stack_user) {
		/* x86-64's general registers and ip, as pea copies them. */
		a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a.sample_regs_user = 0xff01ffULL;	/* ax..ip, r8..r15 */
		a.sample_stack_user = smp_stack_user;
	}
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		die("perf_event_open: %m");
	*ring = mmap(NULL, (SMP_PAGES + 1) * (size_t)getpagesize(),
		     PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*ring == MAP_FAILED)
		die("mmap of the perf ring: %m");
	return fd;
}

/*
 * Count the samples and callchain entries (as kernel ones for the
 * @kernel workload) in a perf ring, then free it.
 */
static void smp_perf_close(int fd, void *ring, bool kernel,
			   struct smp_tally *t)
{
	struct perf_event_mmap_page *pg = ring;
	unsigned char *data = (unsigned char *)ring + getpagesize();
	size_t size = SMP_PAGES * (size_t)getpagesize();
	__u64 pos = pg->data_tail, head;

	close(fd);
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	while (pos < head) {
		struct perf_event_header h;
		__u64 nr = 0;

		memcpy(&h, data + (pos % size), sizeof(h));
		if (h.size < sizeof(h))
			break;
		if (h.type == PERF_RECORD_SAMPLE) {
			t->samples++;
			/* ip, pid/tid, time, cpu, period, then nr */
			if (h.size >= sizeof(h) + 48)
				memcpy(&nr, data + ((pos + sizeof(h) + 40) % size),
				       sizeof(nr));
			/* The entries, with perf's context marker. */
			if (h.size > sizeof(h) + 40 && !smp_stack_user) {
				if (kernel)
					t->knr += nr;
				else
					t->unr += nr;
			}
		} else if (h.type == PERF_RECORD_LOST) {
			t->lost++;
		}
		pos += h.size;
	}
	munmap(ring, (SMP_PAGES + 1) * (size_t)getpagesize());
}

static __attribute__((noinline)) void smp_spin(unsigned long n)
{
	volatile unsigned long i;

	for (i = 0; i < n; i++)
		smp_sink += i;
}

static __attribute__((noinline)) void smp_rec(int d, unsigned long n)
{
	if (d > 0)
		smp_rec(d - 1, n);
	else
		smp_spin(n);
	__asm__ volatile("" ::: "memory");
}

/*
 * The user workload 16 KiB below this frame: a stack copy of
 * SMP_STACK_USER bytes is then always whole, not cut where the stack's
 * top happens to be (its place in the page is randomised).
 */
static __attribute__((noinline)) void smp_deep(int d, unsigned long n)
{
	volatile char pad[16384];
	size_t i;

	/* Every page touched: the copy stops at one not present. */
	for (i = 0; i < sizeof(pad); i += 64)
		pad[i] = 0;
	smp_rec(d, n);
	__asm__ volatile("" : : "r"(pad) : "memory");
}

static void smp_reads(int fd, int n)
{
	static char buf[65536];
	int i;

	for (i = 0; i < n; i++)
		if (read(fd, buf, sizeof(buf)) != sizeof(buf))
			die("read /dev/zero: %m");
}

static unsigned long long smp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void smp_on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct smp_tally *t = ctx;
	struct pea_sample_record r;

	(void)cpu;
	if (size < sizeof(r))
		return;
	memcpy(&r, data, sizeof(r));
	t->samples++;
	t->knr += r.kstack_nr;
	t->unr += r.ustack_nr;
	if (r.flags & PEA_REC_F_UREGS) {
		struct pea_user_regs ur;
		size_t off = sizeof(r) + (r.kstack_nr + r.ustack_nr) * 8;

		if (size >= off + sizeof(ur)) {
			memcpy(&ur, (unsigned char *)data + off, sizeof(ur));
			t->ubytes += ur.stack_size;
		}
	}
	if (r.flags & PEA_REC_F_USER_MODE)
		t->user++;
}

static void smp_on_lost(void *ctx, int cpu, __u64 cnt)
{
	(void)cpu;
	((struct smp_tally *)ctx)->lost += cnt;
}

/*
 * One run of the workload (@kernel: the reads; else the spin), under a
 * sampler with @kdepth/@udepth (@sampled false: none). The time in ns
 * (instructions), the records in @t.
 */
static double smp_run(int map_fd, struct pea_buffer *pb, int zero_fd,
		      bool kernel, int sampled, __u32 kdepth, __u32 udepth,
		      struct smp_tally *t)
{
	struct pea_sample_attr a;
	unsigned long long t0, t1;
	int link = -1, pfd = -1;
	void *ring = NULL;

	pea_buffer__consume(pb);
	memset(&smp_t, 0, sizeof(smp_t));
	if (sampled == 2)	/* perf's, with a callchain for depths */
		pfd = smp_perf_open(kdepth || udepth, !kernel, &ring);
	if (sampled == 1) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.flags = PEA_SAMPLE_F_CLOEXEC | PEA_SAMPLE_F_TASK;
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.sample = SMP_PERIOD;
		a.filter_cpu = -1;
		a.kstack_depth = kdepth;
		a.ustack_depth = udepth;
		if (smp_stack_user) {
			a.flags |= PEA_SAMPLE_F_USER_REGS;
			a.stack_user = smp_stack_user;
		}
		link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_SAMPLE, &a);
		if (link < 0)
			die("PEA_MAP_IOC_ATTACH_SAMPLE: %m");
	}
	t0 = smp_now();
	if (kernel)
		smp_reads(zero_fd, SMP_READS);
	else
		smp_deep(SMP_DEPTH, SMP_SPIN);
	t1 = smp_now();
	if (link >= 0)
		close(link);
	pea_buffer__consume(pb);
	*t = smp_t;
	if (pfd >= 0)
		smp_perf_close(pfd, ring, kernel, t);
	return (double)(t1 - t0);
}

/* The median of SMP_RUNS runs of one configuration. */
static double smp_config(int map_fd, struct pea_buffer *pb, int zero_fd,
			 bool kernel, int sampled, __u32 kdepth,
			 __u32 udepth, struct smp_tally *sum, bool min)
{
	double v[SMP_RUNS], best;
	struct smp_tally t;
	int i;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < SMP_RUNS; i++) {
		v[i] = smp_run(map_fd, pb, zero_fd, kernel, sampled, kdepth,
			       udepth, &t);
		sum->samples += t.samples;
		sum->lost += t.lost;
		sum->knr += t.knr;
		sum->unr += t.unr;
		sum->user += t.user;
		sum->ubytes += t.ubytes;
	}
	if (!min)
		return median(v, SMP_RUNS);
	best = v[0];
	for (i = 1; i < SMP_RUNS; i++)
		if (v[i] < best)
			best = v[i];
	return best;
}

static void smp_figure(const char *name, double base, double t,
		       const struct smp_tally *s, double *per_sample)
{
	double n = (double)s->samples / SMP_RUNS;

	*per_sample = n ? (t - base) / n : 0;
	printf("pea-bench: sample: %-28s %9.0f instructions per run over %9.0f without, %6.1f samples per run (%lu lost), %7.0f instructions per sample, %5.1f kernel + %5.1f user entries per sample\n",
	       name, t, base, n, s->lost, *per_sample,
	       s->samples ? (double)s->knr / s->samples : 0,
	       s->samples ? (double)s->unr / s->samples : 0);
	fig_add_one(name, "sampler", 0, *per_sample, "instructions/sample");
}

/**
 * bench_sample() - the sampler's cost per sample and per unwound frame
 *
 * Return: true (the figures are printed and added to the report).
 */
bool bench_sample(void)
{
	struct smp_tally s0, s1, s2;
	struct pea_buffer *pb;
	cpu_set_t set;
	double base, nost, st;
	double c_user, c_ustack, c_kern, c_kstack, c_perf, c_dwarf;
	int map_fd, zero_fd;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (zero_fd < 0)
		die("open /dev/zero: %m");
	map_fd = pea_map_create(NULL, g_ncpus, 0);
	if (map_fd < 0)
		die("pea_map_create: %s", strerror(-map_fd));
	pb = pea_buffer__new(map_fd, SMP_PAGES, smp_on_sample, smp_on_lost,
			     &smp_t, NULL);
	if (!pb)
		die("pea_buffer__new: %m");

	/* User mode: spin at the bottom of SMP_DEPTH frames. */
	base = smp_config(map_fd, pb, zero_fd, false, 0, 0, 0, &s0, true);
	nost = smp_config(map_fd, pb, zero_fd, false, 1, 0, 0, &s1, false);
	smp_figure("user, no stacks", base, nost, &s1, &c_user);
	st = smp_config(map_fd, pb, zero_fd, false, 1, 0, 127, &s2, false);
	smp_figure("user, user stack", base, st, &s2, &c_ustack);
	st = smp_config(map_fd, pb, zero_fd, false, 2, 0, 0, &s0, false);
	smp_figure("perf, user, no callchain", base, st, &s0, &c_perf);
	st = smp_config(map_fd, pb, zero_fd, false, 2, 0, 127, &s0, false);
	smp_figure("perf, user, user callchain", base, st, &s0, &c_perf);
	if (s2.unr)
		printf("pea-bench: sample: user stack unwinding: %.0f instructions per sample, %.1f per frame (%.1f frames)\n",
		       c_ustack - c_user,
		       (c_ustack - c_user) / ((double)s2.unr / s2.samples),
		       (double)s2.unr / s2.samples);
	/* Registers and the stack's top for DWARF unwinding in user space. */
	smp_stack_user = SMP_STACK_USER;
	st = smp_config(map_fd, pb, zero_fd, false, 1, 0, 0, &s1, false);
	smp_figure("user, regs + 8 KiB stack", base, st, &s1, &c_dwarf);
	st = smp_config(map_fd, pb, zero_fd, false, 2, 0, 0, &s0, false);
	smp_figure("perf, user, regs + 8 KiB stack", base, st, &s0, &c_perf);
	smp_stack_user = 0;
	printf("pea-bench: sample: user registers and %u bytes of stack (%.0f copied per sample): %.0f instructions per sample over no stacks (the frame-pointer walk of %.1f frames: %.0f)\n",
	       SMP_STACK_USER,
	       s1.samples ? (double)s1.ubytes / s1.samples : 0,
	       c_dwarf - c_user,
	       s2.samples ? (double)s2.unr / s2.samples : 0,
	       c_ustack - c_user);

	/* Kernel mode: reads of /dev/zero. */
	base = smp_config(map_fd, pb, zero_fd, true, 0, 0, 0, &s0, true);
	nost = smp_config(map_fd, pb, zero_fd, true, 1, 0, 0, &s1, false);
	smp_figure("kernel, no stacks", base, nost, &s1, &c_kern);
	st = smp_config(map_fd, pb, zero_fd, true, 1, 127, 0, &s2, false);
	smp_figure("kernel, kernel stack", base, st, &s2, &c_kstack);
	if (s2.knr)
		printf("pea-bench: sample: kernel stack unwinding: %.0f instructions per sample, %.1f per frame (%.1f frames)\n",
		       c_kstack - c_kern,
		       (c_kstack - c_kern) / ((double)s2.knr / s2.samples),
		       (double)s2.knr / s2.samples);
	st = smp_config(map_fd, pb, zero_fd, true, 2, 0, 0, &s0, false);
	smp_figure("perf, kernel, no callchain", base, st, &s0, &c_perf);
	st = smp_config(map_fd, pb, zero_fd, true, 2, 127, 0, &s0, false);
	smp_figure("perf, kernel, kernel callchain", base, st, &s0, &c_perf);
	pea_buffer__free(pb);
	close(map_fd);
	close(zero_fd);
	return true;
}
