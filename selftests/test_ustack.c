// SPDX-License-Identifier: GPL-2.0
/*
 * User stacks of probe and tracepoint hits (ustack_depth,
 * PEA_REC_F_USTACK): a uprobe at a function's entry, a uretprobe at its
 * return, a kprobe and a syscall tracepoint hit in a syscall this test
 * makes from a known chain of frame-pointer functions; every entry
 * checked against the return addresses the functions recorded
 * themselves. Also the budget both stacks share (perf_event_max_stack),
 * the errnos, and no user stack for a kernel thread's hit.
 */
#include <sched.h>
#include <setjmp.h>
#include "pea_test.h"
#include "pt_tp.h"
#include <sys/mman.h>
#include "pt_maps.h"
#include "pt_counter.h"
#include "pt_perm.h"
#include "pt_ustack.h"

#define NCPU_MAX	64
#define TRACEFS		"/sys/kernel/tracing/events/"
#define MAX_STACK	"/proc/sys/kernel/perf_event_max_stack"

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];
static char self[256];
static pid_t self_pid;	/* getpid() is a syscall: raw_syscalls sees it */

/* What the chain's functions saw: their own return addresses. */
static volatile unsigned long ret_leaf, ret_mid, ret_run, ret_sys;
/* Whether Linux's callchain had the real returns under uretprobes (-1: not seen). */
static int linux_fixes = -1;

extern char pt_us_sys_after[];

__attribute__((noinline, used)) long pt_us_leaf(long a)
{
	/* Once, before any uretprobe replaces it with its trampoline. */
	if (!ret_leaf)
		ret_leaf = (unsigned long)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
	return a + 1;
}

__attribute__((noinline, used)) long pt_us_mid(long a)
{
	long r;

	ret_mid = (unsigned long)__builtin_return_address(0);
	r = pt_us_leaf(a);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

/* getppid() by a syscall instruction of its own, so its ip is known. */
__attribute__((noinline, used)) long pt_us_sys(void)
{
	long ret;

	ret_sys = (unsigned long)__builtin_return_address(0);
	__asm__ volatile("syscall\n"
			 ".globl pt_us_sys_after\n"
			 "pt_us_sys_after:\n"
			 : "=a"(ret) : "a"((long)SYS_getppid)
			 : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline, used)) long pt_us_run(int sys)
{
	long r;

	ret_run = (unsigned long)__builtin_return_address(0);
	r = sys ? pt_us_sys() : pt_us_mid(1);
	__asm__ volatile("" : "+r"(r));
	return r;
}


/* Linux's user callchain and pea's (@g, if it has one), for the log. */
static void chains_diag(const char *what, const __u64 *pips, int pn,
			const struct pt_stacks *g)
{
	int i;

	for (i = 0; i < pn; i++)
		pt_diag("%s: Linux user entry %d: %#llx", what, i,
			(unsigned long long)pips[i]);
	for (i = 0; g && i < (int)g->unr; i++)
		pt_diag("%s: pea   user entry %d: %#llx", what, i,
			(unsigned long long)g->uips[i]);
}

/* pea's user entries against Linux's, entry by entry, @max at most. */
static void chains_equal(const char *what, const struct pt_stacks *g,
			 const __u64 *pips, int pn, int max)
{
	int i;

	for (i = 0; i < max && i < pn && i < (int)g->unr; i++)
		PT_EQ(g->uips[i], pips[i], "%s: pea's user entry %d is Linux's",
		      what, i);
}

/* The records of this process in CPU 0's ring: probe records. */
static int collect_probe(struct pt_stacks *g, int max)
{
	struct perf_event_header *h = (void *)rec;
	struct pea_probe_record *r = (void *)(rec + 12);
	__u32 raw;
	int n = 0;

	while (pt_ring_next(&rings[0], rec)) {
		if (h->type != PERF_RECORD_SAMPLE || r->tgid != (__u32)self_pid)
			continue;
		memcpy(&raw, rec + 8, 4);
		if (n < 0 || n >= max)
			continue;
		if (pt_stacks_parse(rec + 12, raw, sizeof(*r), r->flags,
				    &g[n])) {
			pt_diag("malformed record: raw %u flags 0x%x", raw,
				r->flags);
			n = -100;
		} else {
			n++;
		}
	}
	return n;
}

static int collect_tp(struct pt_stacks *g, int max)
{
	struct perf_event_header *h = (void *)rec;
	struct pea_tp_record *r = (void *)(rec + 12);
	__u32 raw;
	int n = 0;

	while (pt_ring_next(&rings[0], rec)) {
		if (h->type != PERF_RECORD_SAMPLE || r->tgid != (__u32)self_pid)
			continue;
		memcpy(&raw, rec + 8, 4);
		if (n < 0 || n >= max)
			continue;
		if (pt_stacks_parse(rec + 12, raw, sizeof(*r) + r->raw_size, r->flags,
			  &g[n])) {
			pt_diag("malformed record: raw %u raw_size %u flags 0x%x",
				raw, r->raw_size, r->flags);
			n = -100;
		} else {
			n++;
		}
	}
	return n;
}

static int attach_uprobe(const void *fn, __u32 flags, __u32 depth)
{
	struct pea_uprobe_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags | PEA_UPROBE_F_CLOEXEC;
	a.path = (uintptr_t)self;
	a.path_fd = -1;
	a.filter_tgid = getpid();
	a.offset = pt_file_off(fn);
	a.ustack_depth = depth;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_UPROBE, &a);
	return fd < 0 ? -errno : fd;
}

static int attach_kprobe(const char *sym, __u32 kdepth, __u32 udepth,
			 int tgid)
{
	struct pea_probe_attr a = pt_probe_attr(sym, 0);
	int fd;

	a.filter_tgid = tgid;
	a.kstack_depth = kdepth;
	a.ustack_depth = udepth;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);
	return fd < 0 ? -errno : fd;
}

static void drain(void)
{
	pt_rings_drain(rings, ncpu);
}

static void test_uprobe_entry(void)
{
	struct pt_stacks g[4];
	int link = attach_uprobe(pt_us_leaf, 0, 8), n;

	PT_OK(link >= 0, "uprobe with ustack_depth 8 attaches (%d)", link);
	if (link < 0)
		return;
	drain();
	pt_us_run(0);
	n = collect_probe(g, 4);
	close(link);
	PT_EQ(n, 1, "uprobe: one record");
	if (n != 1)
		return;
	PT_EQ(g[0].flags, PEA_REC_F_UPROBE | PEA_REC_F_USTACK,
	      "uprobe: flags PEA_REC_F_UPROBE | PEA_REC_F_USTACK");
	PT_OK(g[0].unr >= 3, "uprobe: at least 3 user entries (%u)",
	      g[0].unr);
	if (g[0].unr < 3)
		return;
	/*
	 * At the entry the frame is still the caller's: as perf, the walk
	 * goes on from pt_us_mid's frame, whose return is into pt_us_run.
	 */
	PT_EQ(g[0].uips[0], (__u64)(uintptr_t)pt_us_leaf,
	      "uprobe: entry 0 is the probed instruction, pt_us_leaf");
	PT_EQ(g[0].uips[1], ret_mid,
	      "uprobe: entry 1 is pt_us_mid's return into pt_us_run");
	PT_EQ(g[0].uips[2], ret_run,
	      "uprobe: entry 2 is pt_us_run's return into its caller");
}

static void test_uretprobe(void)
{
	struct pt_stacks g[4];
	int link = attach_uprobe(pt_us_leaf, PEA_UPROBE_F_RETPROBE, 8), n;

	PT_OK(link >= 0, "uretprobe with ustack_depth 8 attaches (%d)", link);
	if (link < 0)
		return;
	drain();
	pt_us_run(0);
	n = collect_probe(g, 4);
	close(link);
	PT_EQ(n, 1, "uretprobe: one record");
	if (n != 1 || g[0].unr < 3) {
		PT_OK(0, "uretprobe: at least 3 user entries");
		return;
	}
	PT_EQ(g[0].flags, PEA_REC_F_UPROBE | PEA_REC_F_RETPROBE |
	      PEA_REC_F_USTACK, "uretprobe: flags with PEA_REC_F_USTACK");
	PT_EQ(g[0].uips[0], ret_leaf,
	      "uretprobe: entry 0 is where pt_us_leaf returns, in pt_us_mid");
	PT_EQ(g[0].uips[1], ret_mid, "uretprobe: entry 1 pt_us_mid's return");
	PT_EQ(g[0].uips[2], ret_run, "uretprobe: entry 2 pt_us_run's return");
}

/* A kprobe in the syscall: the task's user registers at its entry. */
static void test_kprobe(void)
{
	struct pt_stacks g[4];
	int link = attach_kprobe("__x64_sys_getppid", 0, 3, getpid()), n;

	PT_OK(link >= 0, "kprobe with ustack_depth 3 attaches (%d)", link);
	if (link < 0)
		return;
	drain();
	pt_us_run(1);
	n = collect_probe(g, 4);
	close(link);
	PT_EQ(n, 1, "kprobe: one record");
	if (n != 1 || g[0].unr != 3) {
		PT_OK(0, "kprobe: 3 user entries (%u)", n == 1 ? g[0].unr : 0);
		return;
	}
	PT_EQ(g[0].flags, PEA_REC_F_USTACK, "kprobe: flags PEA_REC_F_USTACK");
	PT_EQ(g[0].uips[0], (__u64)(uintptr_t)pt_us_sys_after,
	      "kprobe: entry 0 is the user ip after the syscall instruction");
	PT_EQ(g[0].uips[1], ret_sys, "kprobe: entry 1 pt_us_sys's return");
	PT_EQ(g[0].uips[2], ret_run, "kprobe: entry 2 pt_us_run's return");
}

/*
 * Both stacks share perf_event_max_stack: 4, a kernel stack of 2 (the
 * syscall path is deeper) leaves 2 user entries of the 8 asked for.
 */
static void test_budget(void)
{
	long orig = pt_perm_read_int(MAX_STACK);
	struct pt_stacks g[4];
	int link, n;

	PT_EQ(pt_perm_write_int(MAX_STACK, 4), 0, "perf_event_max_stack 4");
	PT_EQ(-attach_kprobe("__x64_sys_getppid", 0, 5, getpid()), EOVERFLOW,
	      "ustack_depth 5 past perf_event_max_stack 4: EOVERFLOW");
	link = attach_kprobe("__x64_sys_getppid", 2, 4, getpid());
	PT_OK(link >= 0, "kstack 2 + ustack 4 with max_stack 4 attaches");
	if (link >= 0) {
		drain();
		pt_us_run(1);
		n = collect_probe(g, 4);
		close(link);
		PT_EQ(n, 1, "budget: one record");
		if (n == 1) {
			PT_EQ(g[0].knr, 2, "budget: 2 kernel entries");
			PT_EQ(g[0].unr, 2, "budget: 2 user entries, the rest");
			PT_OK(g[0].uips[0] == (__u64)(uintptr_t)pt_us_sys_after &&
			      g[0].uips[1] == ret_sys,
			      "budget: the 2 innermost user entries");
		}
	}
	PT_EQ(pt_perm_write_int(MAX_STACK, orig), 0,
	      "perf_event_max_stack restored");
}

static int attach_tp(const char *name, int id, __u32 depth)
{
	struct pea_tp_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_TP_F_CLOEXEC;
	strncpy(a.name, name, sizeof(a.name) - 1);
	a.event_id = id;
	a.filter_tgid = getpid();
	a.filter_cpu = -1;
	a.ustack_depth = depth;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &a);
	return fd < 0 ? -errno : fd;
}

/* syscalls: (user registers) and raw_syscalls: (kernel ones). */
static void test_tracepoints(void)
{
	static const char *const ev[][2] = {
		{ "syscalls", "sys_enter_getppid" },
		{ "raw_syscalls", "sys_enter" },
	};
	struct pt_stacks g[4];
	char name[64];
	int i, link, n;

	for (i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "%s:%s", ev[i][0], ev[i][1]);
		link = attach_tp(name, pt_tp_id(ev[i][0], ev[i][1]), 3);
		PT_OK(link >= 0, "%s with ustack_depth 3 attaches (%d)", name,
		      link);
		if (link < 0)
			continue;
		drain();
		pt_us_run(1);
		n = collect_tp(g, 4);
		close(link);
		PT_EQ(n, 1, "%s: one record", name);
		if (n != 1 || g[0].unr != 3) {
			PT_OK(0, "%s: 3 user entries", name);
			continue;
		}
		PT_EQ(g[0].flags, PEA_REC_F_TRACEPOINT | PEA_REC_F_USTACK,
		      "%s: flags with PEA_REC_F_USTACK", name);
		PT_OK(g[0].uips[0] == (__u64)(uintptr_t)pt_us_sys_after &&
		      g[0].uips[1] == ret_sys && g[0].uips[2] == ret_run,
		      "%s: the syscall's ip, pt_us_sys's and pt_us_run's returns",
		      name);
	}
}

/* Whether @pid is a kernel thread: an empty /proc/PID/cmdline. */
static bool kthread_pid(__u32 pid)
{
	char path[64], buf[64];
	int fd;
	ssize_t n;

	if (!pid)
		return true;	/* the idle task */
	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;	/* gone: a user task (kernel threads stay) */
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n == 0;
}

/*
 * A kernel thread's hit has no user stack: kprobe:schedule on every CPU
 * for a while, kernel threads (an empty cmdline) told from the others.
 */
static void test_kthread(void)
{
	struct perf_event_header *h = (void *)rec;
	struct pea_probe_record *r = (void *)(rec + 12);
	int link = attach_kprobe("schedule", 0, 4, 0), kthread = 0, bad = 0;
	int user = 0, cpu;
	__u32 raw;
	struct pt_stacks g;

	PT_OK(link >= 0, "kprobe:schedule with ustack_depth 4 attaches");
	if (link < 0)
		return;
	drain();
	usleep(300000 * pt_time_scale());
	close(link);
	for (cpu = 0; cpu < ncpu; cpu++)
		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			memcpy(&raw, rec + 8, 4);
			if (pt_stacks_parse(rec + 12, raw, sizeof(*r),
					    r->flags, &g)) {
				bad++;
				continue;
			}
			if (kthread_pid(r->pid)) {
				kthread++;
				if (g.flags & PEA_REC_F_USTACK)
					bad++;
			} else if (g.flags & PEA_REC_F_USTACK) {
				user++;
			}
		}
	pt_diag("schedule: %d kernel-thread hits, %d user hits with a user stack",
		kthread, user);
	PT_OK(kthread > 0, "kprobe:schedule: kernel threads hit it");
	PT_OK(user > 0, "kprobe:schedule: user tasks' hits have a user stack");
	PT_EQ(bad, 0, "no kernel thread's record has a user stack");
}

static void test_errnos(void)
{
	int id = pt_tp_id("syscalls", "sys_enter_getppid");

	PT_EQ(-attach_kprobe("__x64_sys_getppid", 0, PEA_USTACK_MAX + 1, 0),
	      EINVAL, "kprobe: ustack_depth past PEA_USTACK_MAX: EINVAL");
	PT_EQ(-attach_uprobe(pt_us_leaf, 0, PEA_USTACK_MAX + 1), EINVAL,
	      "uprobe: ustack_depth past PEA_USTACK_MAX: EINVAL");
	PT_EQ(-attach_tp("syscalls:sys_enter_getppid", id,
			 PEA_USTACK_MAX + 1), EINVAL,
	      "tracepoint: ustack_depth past PEA_USTACK_MAX: EINVAL");
}

/*
 * The same uprobe hit (pt_us_mid's entry, a push %rbp) seen by Linux's
 * own uprobe PMU with PERF_SAMPLE_CALLCHAIN (user part) and by pea's
 * ustack_depth: every entry compared; at a function's entry both read
 * the direct caller from the stack pointer (is_uprobe_at_func_entry(),
 * both Debian kernels). The review of prof2, F3.
 */
static void test_f3_vs_perf(void)
{
	struct perf_event_attr pa;
	struct pt_ring pr = { 0 };
	__u64 pips[64];
	struct pt_stacks g[4];
	int type = pt_pmu_type("uprobe"), fd, link, n, pn;

	pa = pt_uprobe_pmu_attr(type, self, pt_file_off(pt_us_mid), false);
	pa.sample_type = PERF_SAMPLE_CALLCHAIN;
	pa.exclude_callchain_kernel = 1;
	fd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	PT_OK(fd >= 0, "entry vs perf: Linux's uprobe event with a callchain (%d)",
	      fd < 0 ? -errno : fd);
	if (fd < 0)
		return;
	if (pt_ring_map(&pr, fd, 1, PROT_READ | PROT_WRITE)) {
		PT_OK(0, "entry vs perf: perf ring mapped");
		close(fd);
		return;
	}
	link = attach_uprobe(pt_us_mid, 0, 8);
	PT_OK(link >= 0, "entry vs perf: pea uprobe (%d)", link);
	drain();
	while (pt_ring_next(&pr, rec))
		;
	pt_us_run(0);
	n = collect_probe(g, 4);
	pn = pt_perf_user_ips(&pr, rec, pips, 64, NULL);
	pt_ring_unmap(&pr);
	close(fd);
	if (link >= 0)
		close(link);
	pt_diag("entry vs perf: ret_leaf %#lx ret_mid %#lx ret_run %#lx", ret_leaf,
		ret_mid, ret_run);
	chains_diag("entry vs perf", pips, pn, n == 1 ? &g[0] : NULL);
	PT_EQ(n, 1, "entry vs perf: pea wrote one record");
	if (n != 1)
		return;
	chains_equal("entry vs perf: uprobe at entry", &g[0], pips, pn, 4);
}

/* pt_us_run's one call site of the pending cases: ret_run is its return. */
static __attribute__((noinline)) void pending_run(void)
{
	pt_us_run(0);
	__asm__ volatile("" ::: "memory");
}

/*
 * A user stack taken while uretprobes are pending: pt_us_run and
 * pt_us_mid have pea uretprobes (no stacks), so their return addresses
 * on the stack are the uretprobe trampoline; pt_us_leaf's entry (@ret
 * false) or return (@ret true) is probed by pea with a user stack and by
 * Linux's uprobe PMU with PERF_SAMPLE_CALLCHAIN. 6.12's perf replaces
 * each trampoline by the return address it stands for
 * (fixup_uretprobe_trampoline_entries()); 6.1's keeps the trampoline.
 * pea's entries must be perf's, whichever the kernel, and each must be
 * either the real return or, where perf keeps it, the trampoline.
 */
static void test_pending_vs_perf(bool ret)
{
	const char *what = ret ? "pending, at a uretprobe" :
				 "pending, at a uprobe";
	unsigned long r_leaf, r_mid, r_run;
	struct perf_event_attr pa;
	struct pt_ring pr = { 0 };
	__u64 pips[64], want[3];
	struct pt_stacks g[4];
	int type = pt_pmu_type("uprobe"), fd, link, lmid, lrun, n, pn, i, k;

	/* The real returns, before any uretprobe hides them. */
	pending_run();
	r_leaf = ret_leaf;
	r_mid = ret_mid;
	r_run = ret_run;

	lrun = attach_uprobe(pt_us_run, PEA_UPROBE_F_RETPROBE, 0);
	lmid = attach_uprobe(pt_us_mid, PEA_UPROBE_F_RETPROBE, 0);
	PT_OK(lrun >= 0 && lmid >= 0, "%s: uretprobes on pt_us_run and pt_us_mid (%d %d)",
	      what, lrun, lmid);
	pa = pt_uprobe_pmu_attr(type, self, pt_file_off(pt_us_leaf), ret);
	pa.sample_type = PERF_SAMPLE_CALLCHAIN;
	pa.exclude_callchain_kernel = 1;
	fd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	PT_OK(fd >= 0, "%s: Linux's uprobe event with a callchain (%d)", what,
	      fd < 0 ? -errno : fd);
	if (fd >= 0 && pt_ring_map(&pr, fd, 1, PROT_READ | PROT_WRITE)) {
		PT_OK(0, "%s: perf ring mapped", what);
		close(fd);
		fd = -1;
	}
	link = attach_uprobe(pt_us_leaf, ret ? PEA_UPROBE_F_RETPROBE : 0, 16);
	PT_OK(link >= 0, "%s: pea probe with ustack_depth 16 (%d)", what, link);
	drain();
	if (fd >= 0)
		while (pt_ring_next(&pr, rec))
			;
	pending_run();
	n = collect_probe(g, 4);
	pn = fd >= 0 ? pt_perf_user_ips(&pr, rec, pips, 64, NULL) : 0;
	if (fd >= 0) {
		pt_ring_unmap(&pr);
		close(fd);
	}
	if (link >= 0)
		close(link);
	if (lmid >= 0)
		close(lmid);
	if (lrun >= 0)
		close(lrun);
	pt_diag("%s: ret_leaf %#lx ret_mid %#lx ret_run %#lx", what, r_leaf,
		r_mid, r_run);
	/* pt_us_mid's and pt_us_run's uretprobes wrote theirs, stackless. */
	PT_EQ(n, 3, "%s: pea wrote three records", what);
	for (i = k = 0; i < n; i++)
		if (g[i].flags & PEA_REC_F_USTACK) {
			g[0] = g[i];
			k++;
		}
	n = k;
	chains_diag(what, pips, pn, n == 1 ? &g[0] : NULL);
	PT_EQ(n, 1, "%s: one of them with a user stack", what);
	PT_OK(pn >= 5, "%s: Linux's callchain has at least 5 user entries (%d)",
	      what, pn);
	if (n != 1 || fd < 0 || pn < 5)
		return;
	/*
	 * Both walks name the test's own frames (pt_us_leaf or its return,
	 * then the returns into pt_us_run, pending_run, this function and
	 * main) then libc's; below, where the frame pointer no longer goes up
	 * the stack, pea stops and perf reads on until a read fails: pea's
	 * entries are a prefix of Linux's, at least those five.
	 */
	PT_OK(g[0].unr >= 5 && g[0].unr <= (__u32)pn,
	      "%s: pea's %u user entries are at least 5 and at most Linux's %d",
	      what, g[0].unr, pn);
	chains_equal(what, &g[0], pips, pn, pn);
	if (!ret)
		linux_fixes = pips[1] == r_mid;
	/*
	 * The entries that stand for pt_us_mid's and pt_us_run's returns:
	 * 1 and 2 at both (pt_us_leaf's first instruction is not its push
	 * %rbp: no direct caller from the stack pointer, test_uprobe_entry).
	 */
	i = 1;
	want[0] = ret ? r_leaf : (__u64)(uintptr_t)pt_us_leaf;
	want[1] = r_mid;
	want[2] = r_run;
	PT_EQ(g[0].uips[0], want[0], "%s: entry 0 is %s", what,
	      ret ? "pt_us_leaf's return into pt_us_mid" : "pt_us_leaf");
	PT_OK(g[0].uips[i] == want[1] ||
	      (pips[i] != want[1] && g[0].uips[i] == pips[i]),
	      "%s: entry %d is pt_us_mid's return, or the trampoline where Linux keeps it",
	      what, i);
	PT_OK(g[0].uips[i + 1] == want[2] ||
	      (pips[i + 1] != want[2] && g[0].uips[i + 1] == pips[i + 1] &&
	       pips[i + 1] == pips[i]),
	      "%s: entry %d is pt_us_run's return, or the same trampoline where Linux keeps it",
	      what, i + 1);
}

/*
 * A sampler's hits under pending uretprobes: pt_us_sp_out calls
 * pt_us_sp_in, which spins in a loop of its own between two labels; both
 * have pea uretprobes. Every user-mode sample in the loop has pt_us_sp_in's
 * and pt_us_sp_out's return slots as entries 1 and 2: the real returns
 * where Linux's callchain had them (test_pending_vs_perf), else the
 * trampoline, the start of the [uprobes] mapping.
 */
extern char pt_us_sp_loop[], pt_us_sp_loop_end[];
static volatile unsigned long ret_sp_in, ret_sp_out;
static volatile int sp_ms;

__attribute__((noinline, used)) long pt_us_sp_in(long a)
{
	struct timespec t0, t;
	long n;

	ret_sp_in = (unsigned long)__builtin_return_address(0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		n = 200000;
		__asm__ volatile(".globl pt_us_sp_loop\n"
				 "pt_us_sp_loop:\n"
				 "1: dec %0\n"
				 "jnz 1b\n"
				 ".globl pt_us_sp_loop_end\n"
				 "pt_us_sp_loop_end:\n"
				 : "+r"(n));
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < sp_ms);
	return a + n;
}

__attribute__((noinline, used)) long pt_us_sp_out(long a)
{
	long r;

	ret_sp_out = (unsigned long)__builtin_return_address(0);
	r = pt_us_sp_in(a);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

/* pt_us_sp_out's one call site: ret_sp_out is its return. */
static __attribute__((noinline)) void sp_run(void)
{
	pt_us_sp_out(1);
	__asm__ volatile("" ::: "memory");
}

/* The start of this process's [uprobes] mapping (0: none). */
static unsigned long uprobes_vma(void)
{
	char line[512];
	unsigned long start = 0, s, e;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[uprobes]") &&
		    sscanf(line, "%lx-%lx", &s, &e) == 2)
			start = s;
	if (f)
		fclose(f);
	return start;
}

static void test_pending_sampler(void)
{
	struct perf_event_header *h = (void *)rec;
	struct pea_sample_record *r = (void *)(rec + 12);
	struct pea_sample_attr sa;
	unsigned long r_in, r_out, tramp;
	__u64 want1, want2;
	int lin, lout, fd, in_loop = 0, good = 0, bad = 0;

	sp_ms = 0;
	sp_run();	/* the real returns, before any uretprobe */
	r_in = ret_sp_in;
	r_out = ret_sp_out;
	lout = attach_uprobe(pt_us_sp_out, PEA_UPROBE_F_RETPROBE, 0);
	lin = attach_uprobe(pt_us_sp_in, PEA_UPROBE_F_RETPROBE, 0);
	PT_OK(lin >= 0 && lout >= 0, "sampler, pending: uretprobes on pt_us_sp_out and pt_us_sp_in (%d %d)",
	      lin, lout);
	memset(&sa, 0, sizeof(sa));
	sa.size = sizeof(sa);
	sa.flags = PEA_SAMPLE_F_CLOEXEC | PEA_SAMPLE_F_TASK |
		   PEA_SAMPLE_F_NO_KERNEL;
	sa.id = 0x5a5a5a;
	sa.type = PERF_TYPE_SOFTWARE;
	sa.config = PERF_COUNT_SW_CPU_CLOCK;
	sa.sample = 2000000;	/* every 2 ms of the task's CPU time */
	sa.filter_cpu = -1;
	sa.ustack_depth = 16;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_SAMPLE, &sa);
	PT_OK(fd >= 0, "sampler, pending: a task sampler with ustack_depth 16 (%d)",
	      fd < 0 ? -errno : fd);
	drain();
	sp_ms = 300;
	sp_run();
	tramp = uprobes_vma();
	if (fd >= 0)
		close(fd);
	if (lin >= 0)
		close(lin);
	if (lout >= 0)
		close(lout);
	want1 = linux_fixes == 1 ? r_in : tramp;
	want2 = linux_fixes == 1 ? r_out : tramp;
	while (pt_ring_next(&rings[0], rec)) {
		__u64 ip, e1, e2;

		if (h->type != PERF_RECORD_SAMPLE || r->id != 0x5a5a5a ||
		    r->tgid != (__u32)self_pid || r->ustack_nr < 3)
			continue;
		memcpy(&ip, rec + 12 + sizeof(*r) + r->kstack_nr * 8, 8);
		if (ip < (uintptr_t)pt_us_sp_loop ||
		    ip >= (uintptr_t)pt_us_sp_loop_end)
			continue;
		in_loop++;
		memcpy(&e1, rec + 12 + sizeof(*r) + (r->kstack_nr + 1) * 8, 8);
		memcpy(&e2, rec + 12 + sizeof(*r) + (r->kstack_nr + 2) * 8, 8);
		if (e1 == want1 && e2 == want2) {
			good++;
		} else if (bad++ < 3) {
			pt_diag("sampler, pending: ip %#llx entries %#llx %#llx",
				(unsigned long long)ip, (unsigned long long)e1,
				(unsigned long long)e2);
		}
	}
	pt_diag("sampler, pending: linux_fixes %d, [uprobes] %#lx, returns %#lx %#lx",
		linux_fixes, tramp, r_in, r_out);
	PT_OK(linux_fixes >= 0 && tramp, "sampler, pending: Linux's way known and a [uprobes] mapping (%d %#lx)",
	      linux_fixes, tramp);
	PT_OK(in_loop >= 10, "sampler, pending: at least 10 samples in pt_us_sp_in's loop (%d)",
	      in_loop);
	PT_EQ(good, in_loop,
	      "sampler, pending: each has entries 1 and 2 as Linux has them (%s)",
	      linux_fixes == 1 ? "the real returns" : "the trampoline");
}

/*
 * Chained return instances: pt_us_ch1 is a tail jump into pt_us_ch2, so
 * with a uretprobe on each the second instance shares the first's return
 * slot (prepare_uretprobe()'s chained case). pt_us_ch_out, uretprobed
 * too, calls pt_us_ch1. At pt_us_ch2's return the kernel pops one
 * instance and calls the handlers while the chained sibling is still
 * pending, its slot below the stack pointer (and, with 6.12's syscall
 * trampoline, overwritten by the trampoline's pushes). pea's entries at
 * that uretprobe must be Linux's: 6.12's perf gives pt_us_ch_out's slot
 * the sibling's (duplicate) return address, 6.1's keeps the trampoline.
 */
long pt_us_ch1(long a);
__attribute__((noinline, used)) long pt_us_ch2(long a)
{
	__asm__ volatile("" ::: "memory");
	return a * 3 + 7;
}

__asm__(".text\n"
	".globl pt_us_ch1\n"
	".type pt_us_ch1, @function\n"
	"pt_us_ch1:\n"
	"\tjmp pt_us_ch2\n"
	".size pt_us_ch1, .-pt_us_ch1\n");

__attribute__((noinline, used)) long pt_us_ch_out(long a)
{
	long r = pt_us_ch1(a);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

static __attribute__((noinline)) void ch_run(void)
{
	pt_us_ch_out(5);
	__asm__ volatile("" ::: "memory");
}

static void test_chained_vs_perf(void)
{
	struct perf_event_attr pa;
	struct pt_ring pr = { 0 };
	__u64 pips[64];
	struct pt_stacks g[8];
	int type = pt_pmu_type("uprobe"), fd, link, l1, lout, n, pn, i, k;

	lout = attach_uprobe(pt_us_ch_out, PEA_UPROBE_F_RETPROBE, 0);
	l1 = attach_uprobe(pt_us_ch1, PEA_UPROBE_F_RETPROBE, 0);
	PT_OK(lout >= 0 && l1 >= 0, "chained: uretprobes on pt_us_ch_out and pt_us_ch1 (%d %d)",
	      lout, l1);
	pa = pt_uprobe_pmu_attr(type, self, pt_file_off(pt_us_ch2), true);
	pa.sample_type = PERF_SAMPLE_CALLCHAIN;
	pa.exclude_callchain_kernel = 1;
	fd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	PT_OK(fd >= 0, "chained: Linux's uretprobe event with a callchain (%d)",
	      fd < 0 ? -errno : fd);
	if (fd >= 0 && pt_ring_map(&pr, fd, 1, PROT_READ | PROT_WRITE)) {
		close(fd);
		fd = -1;
	}
	link = attach_uprobe(pt_us_ch2, PEA_UPROBE_F_RETPROBE, 16);
	PT_OK(link >= 0, "chained: pea uretprobe on pt_us_ch2, ustack_depth 16 (%d)",
	      link);
	drain();
	if (fd >= 0)
		while (pt_ring_next(&pr, rec))
			;
	ch_run();
	n = collect_probe(g, 8);
	pn = fd >= 0 ? pt_perf_user_ips(&pr, rec, pips, 64, NULL) : 0;
	if (fd >= 0) {
		pt_ring_unmap(&pr);
		close(fd);
	}
	if (link >= 0)
		close(link);
	if (l1 >= 0)
		close(l1);
	if (lout >= 0)
		close(lout);
	for (i = k = 0; i < n; i++)
		if (g[i].flags & PEA_REC_F_USTACK) {
			g[0] = g[i];
			k++;
		}
	chains_diag("chained", pips, pn, k == 1 ? &g[0] : NULL);
	PT_EQ(n, 3, "chained: pea wrote three records");
	PT_EQ(k, 1, "chained: one of them with a user stack");
	PT_OK(pn >= 4, "chained: Linux's callchain has at least 4 user entries (%d)",
	      pn);
	if (k != 1 || pn < 4)
		return;
	PT_OK(g[0].unr >= 4 && g[0].unr <= (__u32)pn,
	      "chained: pea's %u user entries are at least 4 and at most Linux's %d",
	      g[0].unr, pn);
	chains_equal("chained", &g[0], pips, pn, pn);
}

/*
 * The review's F2 (b): chained instances with no outer one pending. At
 * pt_us_cr2's return the sibling's slot, below the stack pointer, holds
 * the return value (6.12's trampoline pushed rax over it); pt_us_cr2
 * returns cr_run's own return address, which is the chain's entry 1 there.
 * Linux has no trampoline in that chain and replaces nothing: neither may
 * pea.
 */
static volatile unsigned long ret_cr_run;
long pt_us_cr1(long a);
__attribute__((noinline, used)) long pt_us_cr2(long a)
{
	__asm__ volatile("" ::: "memory");
	return (long)ret_cr_run + a * 0;
}

__asm__(".text\n"
	".globl pt_us_cr1\n"
	".type pt_us_cr1, @function\n"
	"pt_us_cr1:\n"
	"\tjmp pt_us_cr2\n"
	".size pt_us_cr1, .-pt_us_cr1\n");

static __attribute__((noinline)) long cr_run(void)
{
	long r;

	ret_cr_run = (unsigned long)__builtin_return_address(0);
	r = pt_us_cr1(1);
	__asm__ volatile("" : "+r"(r));
	return r;
}

static void test_chained_rax(void)
{
	struct perf_event_attr pa;
	struct pt_ring pr = { 0 };
	__u64 pips[64];
	struct pt_stacks g[8];
	int type = pt_pmu_type("uprobe"), fd, link, l1, n, pn, i, k;

	l1 = attach_uprobe(pt_us_cr1, PEA_UPROBE_F_RETPROBE, 0);
	PT_OK(l1 >= 0, "chained, none outer: uretprobe on pt_us_cr1 (%d)", l1);
	pa = pt_uprobe_pmu_attr(type, self, pt_file_off(pt_us_cr2), true);
	pa.sample_type = PERF_SAMPLE_CALLCHAIN;
	pa.exclude_callchain_kernel = 1;
	fd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	PT_OK(fd >= 0, "chained, none outer: Linux's uretprobe event (%d)",
	      fd < 0 ? -errno : fd);
	if (fd >= 0 && pt_ring_map(&pr, fd, 1, PROT_READ | PROT_WRITE)) {
		close(fd);
		fd = -1;
	}
	link = attach_uprobe(pt_us_cr2, PEA_UPROBE_F_RETPROBE, 16);
	PT_OK(link >= 0, "chained, none outer: pea uretprobe on pt_us_cr2 (%d)",
	      link);
	drain();
	if (fd >= 0)
		while (pt_ring_next(&pr, rec))
			;
	cr_run();
	n = collect_probe(g, 8);
	pn = fd >= 0 ? pt_perf_user_ips(&pr, rec, pips, 64, NULL) : 0;
	if (fd >= 0) {
		pt_ring_unmap(&pr);
		close(fd);
	}
	if (link >= 0)
		close(link);
	if (l1 >= 0)
		close(l1);
	for (i = k = 0; i < n; i++)
		if (g[i].flags & PEA_REC_F_USTACK) {
			g[0] = g[i];
			k++;
		}
	chains_diag("chained, none outer", pips, pn, k == 1 ? &g[0] : NULL);
	PT_EQ(k, 1, "chained, none outer: one record with a user stack");
	PT_OK(pn >= 3, "chained, none outer: Linux's callchain has at least 3 user entries (%d)",
	      pn);
	if (k != 1 || pn < 3)
		return;
	PT_EQ(pips[1], ret_cr_run,
	      "chained, none outer: Linux's entry 1 is cr_run's return, the value pt_us_cr2 returned");
	chains_equal("chained, none outer", &g[0], pips, pn, pn);
}

/*
 * The review's F1: a user stack taken while cleanup_return_instances()
 * frees stale instances, the list head still on a freed one.
 * pt_us_lj_out (uretprobed) calls pt_us_lj_stale (uretprobed), which
 * longjmp()s back, leaving its instance stale; pt_us_lj_out then calls
 * pt_us_lj_next (uretprobed), whose prepare_uretprobe() frees the stale
 * instance and asks arch_uretprobe_is_alive() about pt_us_lj_out's with
 * the head not yet moved. A kprobe there with a user stack is the third
 * hit of arch_uretprobe_is_alive(): pea must not walk the freed instance
 * (more instances reachable than the task's depth): pt_us_lj_out's slot
 * keeps the trampoline, the start of the [uprobes] mapping.
 */
static jmp_buf lj_buf;

__attribute__((noinline, used)) void pt_us_lj_stale(void)
{
	longjmp(lj_buf, 1);
}

__attribute__((noinline, used)) long pt_us_lj_next(long a)
{
	__asm__ volatile("" ::: "memory");
	return a + 1;
}

__attribute__((noinline, used)) long pt_us_lj_out(long a)
{
	if (!setjmp(lj_buf))
		pt_us_lj_stale();
	return pt_us_lj_next(a);
}

static void test_stale_free(void)
{
	struct pt_stacks g[16];
	int lo, ls, ln, kp, n, i, k = 0;
	unsigned long tramp;
	__u64 e1 = 0;

	lo = attach_uprobe(pt_us_lj_out, PEA_UPROBE_F_RETPROBE, 0);
	ls = attach_uprobe(pt_us_lj_stale, PEA_UPROBE_F_RETPROBE, 0);
	ln = attach_uprobe(pt_us_lj_next, PEA_UPROBE_F_RETPROBE, 0);
	kp = attach_kprobe("arch_uretprobe_is_alive", 0, 8, getpid());
	PT_OK(lo >= 0 && ls >= 0 && ln >= 0 && kp >= 0,
	      "stale free: three uretprobes and a kprobe on arch_uretprobe_is_alive (%d %d %d %d)",
	      lo, ls, ln, kp);
	drain();
	pt_us_lj_out(1);
	tramp = uprobes_vma();
	n = collect_probe(g, 16);
	if (kp >= 0)
		close(kp);
	if (ln >= 0)
		close(ln);
	if (ls >= 0)
		close(ls);
	if (lo >= 0)
		close(lo);
	for (i = 0; i < n; i++) {
		if (g[i].flags & PEA_REC_F_UPROBE)
			continue;
		pt_diag("stale free: kprobe hit %d: %u user entries, entry 1 %#llx",
			k, g[i].unr, g[i].unr > 1 ?
			(unsigned long long)g[i].uips[1] : 0ULL);
		if (k++ == 2 && g[i].unr > 1)
			e1 = g[i].uips[1];
	}
	PT_OK(k >= 3, "stale free: at least 3 hits of arch_uretprobe_is_alive (%d)",
	      k);
	PT_EQ(e1, tramp,
	      "stale free: at the third, in cleanup_return_instances(), pt_us_lj_out's slot is the trampoline (not fixed up)");
}

/*
 * The re-review's R2: at the uretprobe syscall's entry (6.12's syscall
 * trampoline: push %rax, %rcx, %r11, then syscall), the slot of the
 * instance being returned through is above the stack pointer and holds
 * the pushed rax, the function's return value. pt_us_rx_leaf returns
 * pt_us_rx_mid's own return address, the chain's entry 1 there: a value
 * taken as the trampoline because it is an entry of the chain would
 * replace it by pt_us_rx_leaf's return. Linux's callchain of the same
 * raw_syscalls:sys_enter hit has no trampoline (its ip is 13 bytes into
 * it) and replaces nothing. On a kernel whose trampoline is an int3
 * (6.1) no syscall is made there.
 */
static volatile unsigned long ret_rx_mid, ret_rx_leaf;

__attribute__((noinline, used)) long pt_us_rx_leaf(long a)
{
	if (!ret_rx_leaf)
		ret_rx_leaf = (unsigned long)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
	return (long)ret_rx_mid + a * 0;
}

__attribute__((noinline, used)) long pt_us_rx_mid(long a)
{
	long r;

	ret_rx_mid = (unsigned long)__builtin_return_address(0);
	r = pt_us_rx_leaf(a);
	__asm__ volatile("" : "+r"(r));
	return r;
}

static __attribute__((noinline)) long rx_run(void)
{
	long r = pt_us_rx_mid(1);

	__asm__ volatile("" : "+r"(r));
	return r;
}

/* The user entries of the first sample in @pr whose ip is in [@lo, @hi). */
static int perf_user_ips_at(struct pt_ring *pr, __u64 lo, __u64 hi,
			    __u64 *pips, int max, int *samples)
{
	struct perf_event_header *h = (void *)rec;
	int pn = 0, i, k;

	*samples = 0;
	while (pt_ring_next(pr, rec)) {
		__u64 nr, *ips, u[64];

		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		memcpy(&nr, rec + 8, 8);
		ips = (__u64 *)(rec + 16);
		for (i = k = 0; i < (int)nr && k < 64; i++)
			if (ips[i] < (__u64)-4095)	/* not a context mark */
				u[k++] = ips[i];
		if (!k || u[0] < lo || u[0] >= hi || (*samples)++)
			continue;
		for (i = 0; i < k && i < max; i++)
			pips[pn++] = u[i];
	}
	return pn;
}

/*
 * The first bytes at @addr of this process, read in place (the [uprobes]
 * mapping is VM_IO: /proc/self/mem and process_vm_readv() refuse it);
 * a fault is caught.
 */
static sigjmp_buf rs_jmp;

static void rs_segv(int sig)
{
	(void)sig;
	siglongjmp(rs_jmp, 1);
}

static int read_self(unsigned long addr, unsigned char *b, size_t n)
{
	struct sigaction sa = { .sa_handler = rs_segv }, old;
	volatile int ret = -EFAULT;
	size_t i;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old);
	if (!sigsetjmp(rs_jmp, 1)) {
		for (i = 0; i < n; i++)
			b[i] = ((volatile unsigned char *)addr)[i];
		ret = 0;
	}
	sigaction(SIGSEGV, &old, NULL);
	return ret;
}

/*
 * raw_syscalls:sys_enter of the uretprobe syscall that @run's return from
 * @leaf (uretprobed) makes: pea's entries against Linux's callchain of
 * the same hit, entry 1 @want1 (a pointer to it: read after @run's first
 * call, which sets it up).
 */
static void sysenter_case(const char *what, const void *leaf,
			  long (*run)(void), const volatile unsigned long *want1)
{
	struct perf_event_header *h = (void *)rec;
	struct pea_tp_record *r = (void *)(rec + 12);
	int id = pt_tp_id("raw_syscalls", "sys_enter"), fd, link, lleaf;
	int n = 0, pn, psamples = 0;
	struct perf_event_attr pa;
	struct pt_ring pr = { 0 };
	unsigned char code[17] = { 0 };
	unsigned long tramp;
	__u64 pips[64];
	struct pt_stacks g = { 0 }, got;
	__u32 raw;

	run();	/* the real returns, before the uretprobe */
	lleaf = attach_uprobe(leaf, PEA_UPROBE_F_RETPROBE, 0);
	PT_OK(lleaf >= 0, "%s: the uretprobe (%d)", what, lleaf);
	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.config = id;
	pa.sample_period = 1;
	pa.sample_type = PERF_SAMPLE_CALLCHAIN;
	pa.exclude_callchain_kernel = 1;
	fd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	PT_OK(fd >= 0, "%s: Linux's raw_syscalls:sys_enter with a callchain (%d)",
	      what, fd < 0 ? -errno : fd);
	if (fd >= 0 && pt_ring_map(&pr, fd, 8, PROT_READ | PROT_WRITE)) {
		close(fd);
		fd = -1;
	}
	link = attach_tp("raw_syscalls:sys_enter", id, 8);
	PT_OK(link >= 0, "%s: pea raw_syscalls:sys_enter, ustack_depth 8 (%d)",
	      what, link);
	drain();
	if (fd >= 0)
		while (pt_ring_next(&pr, rec))
			;
	run();
	if (link >= 0)
		close(link);
	if (lleaf >= 0)
		close(lleaf);
	if (fd >= 0)
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	tramp = uprobes_vma();
	PT_OK(tramp && !read_self(tramp, code, sizeof(code)),
	      "%s: the [uprobes] mapping %#lx read", what, tramp);
	/* pea's tracepoint records whose ip is in the [uprobes] page. */
	while (pt_ring_next(&rings[0], rec)) {
		if (h->type != PERF_RECORD_SAMPLE || r->tgid != (__u32)self_pid ||
		    !(r->flags & PEA_REC_F_TRACEPOINT))
			continue;
		memcpy(&raw, rec + 8, 4);
		if (pt_stacks_parse(rec + 12, raw, sizeof(*r) + r->raw_size,
				    r->flags, &got)) {
			pt_diag("%s: malformed record", what);
			n = -100;
			continue;
		}
		if (!got.unr || got.uips[0] < tramp ||
		    got.uips[0] >= tramp + 4096 || n++)
			continue;
		g = got;
	}
	pn = fd >= 0 ? perf_user_ips_at(&pr, tramp, tramp + 4096, pips, 64,
					 &psamples) : 0;
	if (fd >= 0) {
		pt_ring_unmap(&pr);
		close(fd);
	}
	pt_diag("%s: [uprobes] %#lx: %02x %02x %02x %02x %02x %02x %02x %02x %02x %02x %02x %02x %02x %02x %02x %02x %02x",
		what, tramp, code[0], code[1], code[2], code[3], code[4], code[5],
		code[6], code[7], code[8], code[9], code[10], code[11],
		code[12], code[13], code[14], code[15], code[16]);
	pt_diag("%s: entry 1 to be %#lx", what, *want1);
	chains_diag(what, pips, pn, n == 1 ? &g : NULL);
	if (code[0] == 0xcc) {
		PT_EQ(n, 0, "%s: int3 trampoline: no pea sys_enter hit in [uprobes]",
		      what);
		PT_EQ(psamples, 0,
		      "%s: int3 trampoline: no Linux sys_enter hit in [uprobes]",
		      what);
		return;
	}
	{
		/* x86-64's __NR_uretprobe is 335 */
		static const unsigned char want[17] = {
			0x50, 0x51, 0x41, 0x53, 0x48, 0xc7, 0xc0, 0x4f, 0x01,
			0x00, 0x00, 0x0f, 0x05, 0x41, 0x5b, 0x59, 0xc3,
		};

		PT_OK(!memcmp(code, want, sizeof(want)),
		      "%s: the trampoline is push %%rax; push %%rcx; push %%r11; mov $335,%%rax; syscall; pop %%r11; pop %%rcx; ret (or an int3)",
		      what);
	}
	PT_EQ(n, 1, "%s: one pea sys_enter hit in [uprobes]", what);
	PT_EQ(psamples, 1, "%s: one Linux sys_enter hit in [uprobes]", what);
	if (n != 1 || pn < 2)
		return;
	PT_EQ(g.uips[0], (__u64)tramp + 13,
	      "%s: entry 0 is the trampoline's syscall return, 13 bytes in",
	      what);
	PT_EQ(g.uips[1], *want1,
	      "%s: entry 1 is %#lx (the pushed rax is not the trampoline)",
	      what, *want1);
	PT_OK(g.unr >= 2 && g.unr <= (__u32)pn,
	      "%s: pea's %u user entries are at least 2 and at most Linux's %d",
	      what, g.unr, pn);
	chains_equal(what, &g, pips, pn, pn);
}

static long rx_run_l(void)
{
	return rx_run();
}

static void test_sysenter_rax(void)
{
	sysenter_case("sys_enter rax", pt_us_rx_leaf, rx_run_l, &ret_rx_mid);
}

/*
 * The review of ustk's F1: the same hit, the pushed rax the address of a
 * page never touched (what mmap() returns), page-aligned and unreadable
 * as the trampoline's page is before it first runs, and an entry of the
 * chain: pt_us_pg_mid calls pt_us_pg_leaf with rbp at pg_frame, a frame
 * whose return address is that page and whose next is 0 (the chain is
 * the ip, the page). Linux keeps the page as entry 1.
 */
static volatile unsigned long pg_p;
unsigned long pt_us_pg_frame[2];	/* { next, ret } */
long pt_us_pg_mid(long a);

__attribute__((noinline, used)) long pt_us_pg_leaf(long a)
{
	__asm__ volatile("" ::: "memory");
	return (long)pg_p + a * 0;
}

__asm__(".text\n"
	".globl pt_us_pg_mid\n"
	".type pt_us_pg_mid, @function\n"
	"pt_us_pg_mid:\n"
	"\tpush %rbp\n"
	"\tlea pt_us_pg_frame(%rip), %rbp\n"
	"\tcall pt_us_pg_leaf\n"
	"\tpop %rbp\n"
	"\tret\n"
	".size pt_us_pg_mid, .-pt_us_pg_mid\n");

static long pg_run(void)
{
	return pt_us_pg_mid(1);
}

static void test_sysenter_rax_unfaulted(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	PT_OK(p != MAP_FAILED, "sys_enter rax, untouched page: mmap");
	if (p == MAP_FAILED)
		return;
	/* Never touched, by the test or the walk: no page behind it. */
	pg_p = (unsigned long)p;
	pt_us_pg_frame[0] = 0;
	pt_us_pg_frame[1] = pg_p;
	sysenter_case("sys_enter rax, untouched page", pt_us_pg_leaf, pg_run,
		      &pg_p);
	munmap(p, 4096);
}

/*
 * The review of ustk's F2: a uprobe inside a uretprobed leaf before it
 * moves the stack pointer (pt_us_lf: a nop, where its uretprobe is, then
 * the probed instruction), so the leaf's instance's slot is at the user
 * stack pointer during that breakpoint's handling. Linux's uprobe event
 * there takes a callchain; a pea kprobe on get_perf_callchain() takes the
 * user stack of the same moment, inside the uprobe's consumers: its
 * entries must be Linux's (on 6.12 pt_us_lg's slot, the trampoline,
 * replaced as perf replaces it).
 */
long pt_us_lf(long a);
extern char pt_us_lf_in[];

__asm__(".text\n"
	".globl pt_us_lf\n"
	".type pt_us_lf, @function\n"
	"pt_us_lf:\n"
	"\tnop\n"
	".globl pt_us_lf_in\n"
	"pt_us_lf_in:\n"
	"\tlea 1(%rdi), %rax\n"
	"\tret\n"
	".size pt_us_lf, .-pt_us_lf\n");

__attribute__((noinline, used)) long pt_us_lg(long a)
{
	long r = pt_us_lf(a);

	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

static __attribute__((noinline)) void lf_run(void)
{
	pt_us_lg(3);
	__asm__ volatile("" ::: "memory");
}

static void test_uprobe_in_leaf(void)
{
	struct perf_event_attr pa;
	struct pt_ring pr = { 0 };
	__u64 pips[64];
	struct pt_stacks g[8];
	int type = pt_pmu_type("uprobe"), fd, kp, lf, lg, n, pn, i, k;

	lg = attach_uprobe(pt_us_lg, PEA_UPROBE_F_RETPROBE, 0);
	lf = attach_uprobe(pt_us_lf, PEA_UPROBE_F_RETPROBE, 0);
	PT_OK(lg >= 0 && lf >= 0, "uprobe in a leaf: uretprobes on pt_us_lg and pt_us_lf (%d %d)",
	      lg, lf);
	pa = pt_uprobe_pmu_attr(type, self, pt_file_off(pt_us_lf_in), false);
	pa.sample_type = PERF_SAMPLE_CALLCHAIN;
	pa.exclude_callchain_kernel = 1;
	fd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	PT_OK(fd >= 0, "uprobe in a leaf: Linux's uprobe event at pt_us_lf's second instruction (%d)",
	      fd < 0 ? -errno : fd);
	if (fd >= 0 && pt_ring_map(&pr, fd, 1, PROT_READ | PROT_WRITE)) {
		close(fd);
		fd = -1;
	}
	kp = attach_kprobe("get_perf_callchain", 0, 16, getpid());
	PT_OK(kp >= 0, "uprobe in a leaf: pea kprobe on get_perf_callchain, ustack_depth 16 (%d)",
	      kp);
	drain();
	if (fd >= 0)
		while (pt_ring_next(&pr, rec))
			;
	lf_run();
	if (kp >= 0)
		close(kp);
	n = collect_probe(g, 8);
	pn = fd >= 0 ? pt_perf_user_ips(&pr, rec, pips, 64, NULL) : 0;
	if (fd >= 0) {
		pt_ring_unmap(&pr);
		close(fd);
	}
	if (lf >= 0)
		close(lf);
	if (lg >= 0)
		close(lg);
	for (i = k = 0; i < n; i++)
		if (!(g[i].flags & PEA_REC_F_UPROBE) &&
		    (g[i].flags & PEA_REC_F_USTACK)) {
			g[0] = g[i];
			k++;
		}
	chains_diag("uprobe in a leaf", pips, pn, k == 1 ? &g[0] : NULL);
	PT_EQ(k, 1, "uprobe in a leaf: one kprobe hit with a user stack");
	PT_OK(pn >= 3, "uprobe in a leaf: Linux's callchain has at least 3 user entries (%d)",
	      pn);
	if (k != 1 || pn < 3)
		return;
	PT_EQ(g[0].uips[0], (__u64)(uintptr_t)pt_us_lf_in,
	      "uprobe in a leaf: entry 0 is the probed instruction");
	PT_OK(g[0].unr >= 3 && g[0].unr <= (__u32)pn,
	      "uprobe in a leaf: pea's %u user entries are at least 3 and at most Linux's %d",
	      g[0].unr, pn);
	chains_equal("uprobe in a leaf", &g[0], pips, pn, pn);
}

/*
 * The re-review's R1: the same stale free, seen by a kretprobe on kfree():
 * cleanup_return_instances() has freed the stale instance and not yet
 * lowered the task's depth nor moved the list head, so the count of
 * reachable instances is the depth's and only what the freed instance
 * holds tells it apart. The first kfree() return with the user ip at
 * pt_us_lj_next's breakpoint is that free: pt_us_lj_out's slot keeps the
 * trampoline (the freed instance's return address is not taken).
 */
static void test_stale_free_kfree(void)
{
	struct pea_probe_attr a = pt_probe_attr("kfree", PEA_PROBE_F_RETPROBE);
	int lo, ls, ln, kp, n, i, hits = 0;
	static struct pt_stacks g[256];
	unsigned long tramp;
	__u64 e1 = 0;

	lo = attach_uprobe(pt_us_lj_out, PEA_UPROBE_F_RETPROBE, 0);
	ls = attach_uprobe(pt_us_lj_stale, PEA_UPROBE_F_RETPROBE, 0);
	ln = attach_uprobe(pt_us_lj_next, PEA_UPROBE_F_RETPROBE, 0);
	a.filter_tgid = getpid();
	a.ustack_depth = 8;
	kp = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);
	PT_OK(lo >= 0 && ls >= 0 && ln >= 0 && kp >= 0,
	      "stale free, kfree: three uretprobes and a kretprobe on kfree (%d %d %d %d)",
	      lo, ls, ln, kp < 0 ? -errno : kp);
	drain();
	pt_us_lj_out(1);
	if (kp >= 0)
		close(kp);
	n = collect_probe(g, 256);
	if (ln >= 0)
		close(ln);
	if (ls >= 0)
		close(ls);
	if (lo >= 0)
		close(lo);
	tramp = uprobes_vma();
	for (i = 0; i < n; i++) {
		if (g[i].flags & PEA_REC_F_UPROBE || g[i].unr < 2 ||
		    g[i].uips[0] != (__u64)(uintptr_t)pt_us_lj_next)
			continue;
		pt_diag("stale free, kfree: return %d at pt_us_lj_next's breakpoint: entry 1 %#llx",
			hits, (unsigned long long)g[i].uips[1]);
		if (!hits++)
			e1 = g[i].uips[1];
	}
	PT_OK(n >= 0, "stale free, kfree: records well-formed (%d)", n);
	PT_OK(hits >= 1, "stale free, kfree: a kfree() return at pt_us_lj_next's breakpoint (%d)",
	      hits);
	PT_EQ(e1, tramp,
	      "stale free, kfree: at the first, the stale instance just freed, pt_us_lj_out's slot is the trampoline (not fixed up)");
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	self[n] = 0;
	self_pid = getpid();
	pt_pin(0);
	ncpu = pt_cpu_map("ustack", 16, &map_fd, ev_fd, rings);
	test_uprobe_entry();
	test_f3_vs_perf();
	test_uretprobe();
	test_pending_vs_perf(false);
	test_pending_vs_perf(true);
	test_pending_sampler();
	test_chained_vs_perf();
	test_chained_rax();
	test_stale_free();
	test_stale_free_kfree();
	test_sysenter_rax();
	test_sysenter_rax_unfaulted();
	test_uprobe_in_leaf();
	test_kprobe();
	test_budget();
	test_tracepoints();
	test_kthread();
	test_errnos();
	return pt_done();
}
