// SPDX-License-Identifier: GPL-2.0
/*
 * header.misc of pea's records against Linux's own record of the same
 * hit, in the same guest: perf_event_open() of the uprobe PMU, of a
 * tracepoint and of the kprobe PMU, whose records carry
 * perf_misc_flags(regs) as bpf_perf_event_output() from those programs
 * does (PERF_RECORD_MISC_USER for a uprobe's or a syscall event's user
 * registers, PERF_RECORD_MISC_KERNEL for kernel ones); and the sampler's
 * records, USER exactly when they interrupted user mode.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include "pea_test.h"
#include "pt_tp.h"
#include "pt_counter.h"
#include "pt_maps.h"
#include "pt_perm.h"

#define NCPU_MAX	64
#define TRACEFS		"/sys/kernel/tracing/events/"

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];
static char self[256];

__attribute__((noipa, used)) long pt_misc_target(long a)
{
	__asm__ volatile("" ::: "memory");
	return a + 1;
}

static void drain_all(void)
{
	pt_rings_drain(rings, ncpu);
}

/* The misc of the first sample of this process in pea's ring of CPU 0. */
static int pea_misc(__u32 *nrec)
{
	struct perf_event_header *h = (void *)rec;
	int misc = -1;

	*nrec = 0;
	while (pt_ring_next(&rings[0], rec)) {
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		if (misc < 0)
			misc = h->misc;
		(*nrec)++;
	}
	return misc;
}

/* A perf event of this task on any CPU with one data page mapped. */
static int perf_open(struct perf_event_attr *pa, struct pt_ring *r)
{
	int fd = syscall(SYS_perf_event_open, pa, 0, -1, -1,
			 PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (pt_ring_map(r, fd, 1, PROT_READ | PROT_WRITE)) {
		close(fd);
		return -EIO;
	}
	return fd;
}

/* The misc of the first sample in a perf ring, and the samples in it. */
static int perf_misc(struct pt_ring *r, __u32 *nrec)
{
	struct perf_event_header *h = (void *)rec;
	int misc = -1;

	*nrec = 0;
	while (pt_ring_next(r, rec)) {
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		if (misc < 0)
			misc = h->misc;
		(*nrec)++;
	}
	return misc;
}

static void perf_close(int fd, struct pt_ring *r)
{
	pt_ring_unmap(r);
	close(fd);
}

/*
 * One hit of @what seen by pea's link @link and by Linux's perf event
 * @pa: both records' misc must be @want. @hit makes the hit.
 */
static void compare(const char *what, int link, struct perf_event_attr *pa,
		    void (*hit)(void), int want)
{
	struct pt_ring pr = { 0 };
	__u32 np, nl;
	int pfd, pm, lm;

	PT_OK(link >= 0, "%s: pea link attached (%d)", what, link);
	pfd = perf_open(pa, &pr);
	PT_OK(pfd >= 0, "%s: Linux's perf event opened (%d)", what, pfd);
	if (link < 0 || pfd < 0)
		goto out;
	/* What opening and mapping hit (raw_syscalls) is not this hit. */
	perf_misc(&pr, &np);
	drain_all();
	hit();
	pm = perf_misc(&pr, &np);
	lm = pea_misc(&nl);
	PT_EQ(np, 1, "%s: Linux wrote one sample", what);
	PT_EQ(nl, 1, "%s: pea wrote one sample", what);
	PT_EQ(pm, want, "%s: Linux's header.misc is %d", what, want);
	PT_EQ(lm, pm, "%s: pea's header.misc is Linux's (%d)", what, pm);
	perf_close(pfd, &pr);
out:
	if (link >= 0)
		close(link);
}

static void hit_target(void)
{
	pt_misc_target(41);
}

static void hit_getppid(void)
{
	syscall(SYS_getppid);
}

static int attach_uprobe(__u32 flags)
{
	struct pea_uprobe_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags | PEA_UPROBE_F_CLOEXEC;
	a.path = (uintptr_t)self;
	a.path_fd = -1;
	a.filter_tgid = getpid();
	a.offset = pt_file_off(pt_misc_target);
	return ioctl(map_fd, PEA_MAP_IOC_ATTACH_UPROBE, &a);
}

static void test_uprobes(void)
{
	__u64 off = pt_file_off(pt_misc_target);
	int type = pt_pmu_type("uprobe");
	struct perf_event_attr pa;

	pa = pt_uprobe_pmu_attr(type, self, off, false);
	compare("uprobe", attach_uprobe(0), &pa, hit_target,
		PERF_RECORD_MISC_USER);
	pa = pt_uprobe_pmu_attr(type, self, off, true);
	compare("uretprobe", attach_uprobe(PEA_UPROBE_F_RETPROBE), &pa,
		hit_target, PERF_RECORD_MISC_USER);
}

static int attach_tp(const char *name, int id)
{
	struct pea_tp_attr a;

	memset(&a, 0, sizeof(a));
	strncpy(a.name, name, sizeof(a.name) - 1);
	a.size = sizeof(a);
	a.flags = PEA_TP_F_CLOEXEC;
	a.event_id = id;
	a.filter_tgid = getpid();
	a.filter_cpu = -1;
	return ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &a);
}

static struct perf_event_attr tp_pmu_attr(int id)
{
	struct perf_event_attr pa;

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.config = id;
	pa.sample_period = 1;
	pa.sample_type = PERF_SAMPLE_RAW;
	return pa;
}

/*
 * A syscall event's registers are the task's user ones
 * (perf_syscall_enter()); raw_syscalls' are the call site's, kernel
 * (perf_fetch_caller_regs()).
 */
static void test_tracepoints(void)
{
	int id = pt_tp_id("syscalls", "sys_enter_getppid");
	struct perf_event_attr pa;

	PT_OK(id > 0, "syscalls:sys_enter_getppid has an id (%d)", id);
	pa = tp_pmu_attr(id);
	compare("syscalls:sys_enter_getppid",
		attach_tp("syscalls:sys_enter_getppid", id), &pa,
		hit_getppid, PERF_RECORD_MISC_USER);
	id = pt_tp_id("syscalls", "sys_exit_getppid");
	pa = tp_pmu_attr(id);
	compare("syscalls:sys_exit_getppid",
		attach_tp("syscalls:sys_exit_getppid", id), &pa,
		hit_getppid, PERF_RECORD_MISC_USER);
	id = pt_tp_id("raw_syscalls", "sys_enter");
	pa = tp_pmu_attr(id);
	compare("raw_syscalls:sys_enter",
		attach_tp("raw_syscalls:sys_enter", id), &pa, hit_getppid,
		PERF_RECORD_MISC_KERNEL);
}

/* getppid() itself: a kprobe's registers are always the kernel's. */
static void test_kprobe(void)
{
	struct pea_probe_attr a = pt_probe_attr("__x64_sys_getppid", 0);
	struct perf_event_attr pa;
	static const char sym[] = "__x64_sys_getppid";

	a.filter_tgid = getpid();
	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = pt_pmu_type("kprobe");
	pa.config1 = (uintptr_t)sym;
	pa.sample_period = 1;
	pa.sample_type = PERF_SAMPLE_RAW;
	compare("kprobe:__x64_sys_getppid",
		ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a), &pa, hit_getppid,
		PERF_RECORD_MISC_KERNEL);
}

static volatile int stop;

/* Half in user mode, half in the kernel (getppid()). */
static void *worker(void *arg)
{
	long i;

	(void)arg;
	pt_pin(0);
	while (!stop) {
		for (i = 0; i < 20000; i++)
			pt_misc_target(i);
		for (i = 0; i < 200; i++)
			syscall(SYS_getppid);
	}
	return NULL;
}

/*
 * The sampler: header.misc is PERF_RECORD_MISC_USER exactly when the
 * record says it interrupted user mode (PEA_REC_F_USER_MODE, from
 * user_mode(regs), what perf_misc_flags() tests), else _KERNEL; both
 * come in a workload that does both.
 */
static void test_sampler(void)
{
	struct perf_event_header *h = (void *)rec;
	struct pea_sample_record *r = (void *)(rec + 12);
	struct pea_sample_attr a;
	__u32 user = 0, kernel = 0, bad = 0;
	pthread_t th;
	int link;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_SAMPLE_F_CLOEXEC | PEA_SAMPLE_F_FREQ;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample = 1000;
	a.filter_tgid = getpid();
	a.filter_cpu = 0;
	link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_SAMPLE, &a);
	PT_OK(link >= 0, "sampler attached (%d)", link);
	if (link < 0)
		return;
	drain_all();
	stop = 0;
	pthread_create(&th, NULL, worker, NULL);
	pt_sleep_ns(1500000000ULL);
	stop = 1;
	pthread_join(th, NULL);
	close(link);
	while (pt_ring_next(&rings[0], rec)) {
		bool um;

		if (h->type != PERF_RECORD_SAMPLE ||
		    !(r->flags & PEA_REC_F_SAMPLE))
			continue;
		um = r->flags & PEA_REC_F_USER_MODE;
		if (h->misc != (um ? PERF_RECORD_MISC_USER :
				PERF_RECORD_MISC_KERNEL))
			bad++;
		if (um)
			user++;
		else
			kernel++;
	}
	pt_diag("sampler: %u samples in user mode, %u in the kernel", user,
		kernel);
	PT_OK(user > 0 && kernel > 0,
	      "sampler: samples in user mode and in the kernel");
	PT_EQ(bad, 0, "sampler: header.misc is USER exactly for user mode");
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	self[n] = 0;
	pt_pin(0);
	ncpu = pt_cpu_map("misc", 16, &map_fd, ev_fd, rings);
	test_uprobes();
	test_tracepoints();
	test_kprobe();
	test_sampler();
	return pt_done();
}
