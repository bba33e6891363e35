// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel stacks in records (kstack_depth, PEA_REC_F_KSTACK, struct
 * pea_kstack): kprobe, kretprobe and tracepoint records of getppid()
 * calls the test makes itself, whose stacks, symbolised with
 * /proc/kallsyms, start at the probed address and reach do_syscall_64
 * (a syscalls:* tracepoint, whose registers are the user's, too);
 * depth limits; a counter reading, a capture and a stack in one record;
 * a kprobe in NMI and in hardirq context (the test
 * module's target) with exact accounting; the attr's size versions and errnos; records without a
 * stack unchanged.
 */
#include <stddef.h>
#include <time.h>
#include "pea_test.h"
#include "pt_tp.h"
#include "pt_ksyms.h"

#define NCPU_MAX	64
#define K		25
#define TRACEFS		"/sys/kernel/tracing/events/"

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];

static bool stack_has(const struct pea_kstack *ks, const char *sym)
{
	__u32 i;

	for (i = 0; i < ks->nr; i++)
		if (!strcmp(pt_ksym_name(ks->ips[i]), sym))
			return true;
	return false;
}

static void stack_diag(const struct pea_kstack *ks)
{
	__u32 i;

	for (i = 0; i < ks->nr && i < 16; i++)
		pt_diag("  %llx %s", (unsigned long long)ks->ips[i],
			pt_ksym_name(ks->ips[i]));
}

/* ---- fixture ---- */

static void setup_map(void)
{
	ncpu = pt_cpu_map("kstack", 64, &map_fd, ev_fd, rings);
}

static struct pea_probe_attr probe_attr(const char *sym, __u32 flags,
					__u32 depth)
{
	struct pea_probe_attr a = pt_probe_attr(sym, flags);

	a.kstack_depth = depth;
	return a;
}

static int attach(struct pea_probe_attr *a)
{
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, a);

	return fd < 0 ? -errno : fd;
}

static int attach_tp(struct pea_tp_attr *a)
{
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, a);

	return fd < 0 ? -errno : fd;
}

/* The sample raw size perf gives a record of @size bytes. */
static __u32 raw_size(__u32 size)
{
	return ((4 + size + 7) & ~7U) - 4;
}

/* Bytes of a record whose other parts take @used and whose stack @nr. */
static __u32 stack_rec_size(__u32 used, __u32 nr)
{
	return ((used + 7) & ~7U) + 8 + 8 * nr;
}

/*
 * The next sample of this process on @cpu (its raw size in *@size), or
 * NULL. Skips non-sample records and other processes'.
 */
static void *next_rec(int cpu, __u32 *size)
{
	struct perf_event_header *h = (void *)rec;
	struct pea_probe_record *r;

	while (pt_ring_next(&rings[cpu], rec)) {
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		memcpy(size, rec + 8, 4);
		r = (void *)(rec + 12);
		if (r->tgid != (__u32)getpid())
			continue;
		return r;
	}
	return NULL;
}

static const struct pea_kstack *rec_stack(const void *r, __u32 used)
{
	return (const void *)((const char *)r + ((used + 7) & ~7U));
}

/*
 * Check the stack of one record: nr in 1..@depth, the raw size exact,
 * padding zero. Returns the stack or NULL.
 */
static const struct pea_kstack *check_stack(const void *r, __u32 used,
					    __u32 rawsize, __u32 depth,
					    const char *what)
{
	const struct pea_kstack *ks = rec_stack(r, used);
	const unsigned char *p = r;
	__u32 i;

	if (rawsize < ((used + 7) & ~7U) + 8) {
		PT_OK(0, "%s: record too short for a stack (%u)", what,
		      rawsize);
		return NULL;
	}
	if (ks->nr < 1 || ks->nr > depth || ks->reserved) {
		PT_OK(0, "%s: nr %u out of 1..%u (reserved %u)", what, ks->nr,
		      depth, ks->reserved);
		return NULL;
	}
	if (rawsize != raw_size(stack_rec_size(used, ks->nr))) {
		PT_EQ(rawsize, raw_size(stack_rec_size(used, ks->nr)),
		      "%s: raw size is exactly the record with its stack",
		      what);
		return NULL;
	}
	for (i = used; i < ((used + 7) & ~7U); i++)
		if (p[i]) {
			PT_OK(0, "%s: padding before the stack not zero", what);
			return NULL;
		}
	return ks;
}

/* ---- kprobe ---- */

/* On CPU 0, its ring drained first: K getppid() calls. */
static void getppid_k_on_cpu0(void)
{
	int i;

	pt_pin(0);
	pt_rings_drain(rings, ncpu);
	for (i = 0; i < K; i++)
		syscall(SYS_getppid);
}

/*
 * Attach @a (for this process only), then call getppid() K times on CPU
 * 0 with its ring drained first: the link fd with @info filled, or -1.
 */
static int attach_and_call(struct pea_probe_attr *a, const char *what,
			   struct pea_link_info *info)
{
	int link;

	a->filter_tgid = getpid();
	link = attach(a);
	PT_OK(link >= 0, "%s attaches (%d)", what, link);
	if (link < 0)
		return -1;
	PT_EQ(ioctl(link, PEA_LINK_IOC_INFO, info), 0, "link info");
	getppid_k_on_cpu0();
	return link;
}

static void test_kprobe(void)
{
	struct pea_probe_attr a = probe_attr("__x64_sys_getppid", 0, 127);
	struct pea_link_info info;
	struct pea_probe_record *r;
	int link, n = 0, good = 0, first = 1, nr_min = 999, nr_max = 0;
	__u32 size;

	link = attach_and_call(&a, "kprobe:__x64_sys_getppid kstack_depth 127",
			       &info);
	if (link < 0)
		return;
	while ((r = next_rec(0, &size))) {
		const struct pea_kstack *ks;

		n++;
		if (r->flags != PEA_REC_F_KSTACK || r->addr != info.addr)
			continue;
		ks = check_stack(r, sizeof(*r), size, 127, "kprobe");
		if (!ks)
			continue;
		if (ks->nr < (__u32)nr_min)
			nr_min = ks->nr;
		if (ks->nr > (__u32)nr_max)
			nr_max = ks->nr;
		if (first) {
			pt_diag("kprobe stack (nr %u):", ks->nr);
			stack_diag(ks);
			first = 0;
		}
		if (ks->ips[0] == r->addr && stack_has(ks, "do_syscall_64") &&
		    !strcmp(pt_ksym_name(ks->ips[0]), "__x64_sys_getppid"))
			good++;
	}
	PT_EQ(n, K, "kprobe: exactly %d records for %d getppid()", K, K);
	PT_EQ(good, K,
	      "kprobe: every record has PEA_REC_F_KSTACK, ips[0] == addr (__x64_sys_getppid), a frame in do_syscall_64");
	PT_OK(nr_min >= 2 && nr_max <= 127, "kprobe: nr in 2..127 (%d..%d)",
	      nr_min, nr_max);
	PT_EQ(ioctl(link, PEA_LINK_IOC_INFO, &info), 0, "link info");
	PT_EQ(info.written, K, "kprobe: written == %d", K);
	PT_EQ(info.errors, 0, "kprobe: no errors");
	close(link);
}

/* kstack_depth @depth: every record's nr is 1..@depth, ips[0] the address. */
static void test_depth(__u32 depth)
{
	struct pea_probe_attr a = probe_attr("__x64_sys_getppid", 0, depth);
	struct pea_link_info info;
	struct pea_probe_record *r;
	int link, n = 0, good = 0;
	__u32 size, want_nr = depth;
	char what[64];

	snprintf(what, sizeof(what), "kstack_depth %u", depth);
	link = attach_and_call(&a, what, &info);
	if (link < 0)
		return;
	while ((r = next_rec(0, &size))) {
		const struct pea_kstack *ks;

		n++;
		ks = check_stack(r, sizeof(*r), size, depth, "depth");
		/* A syscall's stack is deeper than 3: the limit cuts it. */
		if (ks && r->flags == PEA_REC_F_KSTACK &&
		    ks->nr == want_nr && ks->ips[0] == info.addr)
			good++;
	}
	PT_EQ(n, K, "depth %u: %d records", depth, K);
	PT_EQ(good, K, "depth %u: every stack has exactly %u entries, ips[0] == addr",
	      depth, want_nr);
	close(link);
}

/*
 * Every part at once: a counter reading (PEA_PROBE_F_COUNTERS), then a
 * 5-byte capture, then the stack at the next 8-byte boundary.
 */
static void test_counters_capture(void)
{
	struct pea_probe_attr a = probe_attr("__x64_sys_getppid",
					     PEA_PROBE_F_COUNTERS, 127);
	struct pea_link_info info;
	struct pea_probe_record *r;
	int cmap, cfd[NCPU_MAX], cpu, link, n = 0, good = 0;
	__u32 size, used = sizeof(*r) + sizeof(struct pea_event_value) + 5;

	cmap = pt_cpu_clock_map(cfd, ncpu);
	a.counter_map = cmap;
	a.capture_mode = PEA_CAPTURE_FIXED;
	a.capture_arg = 0;	/* the pt_regs pointer: kernel memory */
	a.capture_len = 5;
	link = attach_and_call(&a, "counters, a capture and a stack", &info);
	if (link >= 0) {
		while ((r = next_rec(0, &size))) {
			const struct pea_kstack *ks;
			struct pea_event_value v;

			n++;
			if (r->flags != (PEA_REC_F_COUNTERS | PEA_REC_F_CAPTURE |
					 PEA_REC_F_KSTACK) || r->capture_len != 5)
				continue;
			memcpy(&v, r + 1, sizeof(v));
			ks = check_stack(r, used, size, 127, "counters+capture");
			if (ks && v.enabled > 0 && ks->ips[0] == info.addr &&
			    stack_has(ks, "do_syscall_64"))
				good++;
		}
		close(link);
	}
	PT_EQ(n, K, "counters+capture: %d records", K);
	PT_EQ(good, K,
	      "counters+capture: reading, 5 captured bytes, padding 3, then the stack (ips[0] == addr, do_syscall_64), raw size exact");
	for (cpu = 0; cpu < ncpu; cpu++)
		close(cfd[cpu]);
	close(cmap);
}

/* ---- kretprobe ---- */

static void test_kretprobe(void)
{
	struct pea_probe_attr a = probe_attr("__x64_sys_getppid",
					     PEA_PROBE_F_RETPROBE, 127);
	struct pea_link_info info;
	struct pea_probe_record *r;
	int link, n = 0, good = 0, first = 1;
	long ppid = getppid();
	__u32 size;

	a.capture_mode = PEA_CAPTURE_FIXED;
	a.capture_arg = 0;
	a.capture_len = 5;	/* a capture before the stack: padding 3 */
	link = attach_and_call(&a, "kretprobe with kstack_depth 127 and a capture",
			       &info);
	if (link < 0)
		return;
	while ((r = next_rec(0, &size))) {
		const struct pea_kstack *ks;

		n++;
		if (r->flags != (PEA_REC_F_RETPROBE | PEA_REC_F_CAPTURE |
				 PEA_REC_F_KSTACK) || r->capture_len != 5 ||
		    r->ret != ppid)
			continue;
		ks = check_stack(r, sizeof(*r) + 5, size, 127, "kretprobe");
		if (!ks)
			continue;
		if (first) {
			pt_diag("kretprobe entry stack (nr %u):", ks->nr);
			stack_diag(ks);
			first = 0;
		}
		if (ks->ips[0] == info.addr && stack_has(ks, "do_syscall_64"))
			good++;
	}
	PT_EQ(n, K, "kretprobe: %d records", K);
	PT_EQ(good, K,
	      "kretprobe: the entry stack (ips[0] == addr, do_syscall_64) after the capture, return value exact");
	close(link);
}

/* ---- tracepoint ---- */

/* The offset of raw_syscalls:sys_enter's "id" field, or -1. */
static int sys_enter_id_offset(void)
{
	static char buf[8192];
	char *p;
	int off;

	if (pt_read_file(TRACEFS "raw_syscalls/sys_enter/format", buf,
			 sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "long id;");
	if (!p || sscanf(p, "long id;\toffset:%d;", &off) != 1)
		return -1;
	return off;
}

static struct pea_tp_attr tp_attr(int id, __u32 depth)
{
	struct pea_tp_attr a;
	int off = sys_enter_id_offset();

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_TP_F_CLOEXEC;
	a.event_id = id;
	a.filter_cpu = -1;
	a.filter_tgid = getpid();
	strcpy(a.name, "raw_syscalls:sys_enter");
	a.nr_preds = 1;
	a.preds[0].offset = off;
	a.preds[0].size = 8;
	a.preds[0].kind = PEA_TP_FIELD_SINT;
	a.preds[0].op = PEA_TP_OP_EQ;
	a.preds[0].value = SYS_getppid;
	a.kstack_depth = depth;
	return a;
}

static void test_tracepoint(void)
{
	int id = pt_tp_id("raw_syscalls", "sys_enter");
	struct pea_tp_attr a;
	struct pea_tp_record *r;
	int link, n = 0, good = 0, first = 1;
	__u32 size;

	PT_OK(id > 0 && sys_enter_id_offset() > 0,
	      "raw_syscalls:sys_enter id and format");
	if (id <= 0)
		return;
	a = tp_attr(id, 127);
	link = attach_tp(&a);
	PT_OK(link >= 0, "tracepoint raw_syscalls:sys_enter with kstack_depth 127 attaches (%d)",
	      link);
	if (link < 0)
		return;
	getppid_k_on_cpu0();
	while ((r = next_rec(0, &size))) {
		const struct pea_kstack *ks;

		n++;
		if (r->flags != (PEA_REC_F_TRACEPOINT | PEA_REC_F_KSTACK) ||
		    r->event_id != (__u64)id)
			continue;
		ks = check_stack(r, sizeof(*r) + r->raw_size, size, 127,
				 "tracepoint");
		if (!ks)
			continue;
		if (first) {
			pt_diag("tracepoint stack (nr %u, raw %u):", ks->nr,
				r->raw_size);
			stack_diag(ks);
			first = 0;
		}
		if (stack_has(ks, "do_syscall_64") &&
		    !stack_has(ks, "pea_kstack_save"))
			good++;
	}
	PT_EQ(n, K, "tracepoint: %d records", K);
	PT_EQ(good, K,
	      "tracepoint: every stack reaches do_syscall_64, without pea's own frames");
	close(link);
}

/*
 * syscalls:sys_enter_getppid: perf hands the handler the user's
 * registers, which hold no kernel stack; the unwinder starts in pea's
 * handler and still reaches do_syscall_64.
 */
static void test_tracepoint_user_regs(void)
{
	int id = pt_tp_id("syscalls", "sys_enter_getppid");
	struct pea_tp_attr a;
	struct pea_tp_record *r;
	int link, n = 0, good = 0;
	__u32 size;

	PT_OK(id > 0, "syscalls:sys_enter_getppid id");
	if (id <= 0)
		return;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_TP_F_CLOEXEC;
	a.event_id = id;
	a.filter_cpu = -1;
	a.filter_tgid = getpid();
	strcpy(a.name, "syscalls:sys_enter_getppid");
	a.kstack_depth = 127;
	link = attach_tp(&a);
	PT_OK(link >= 0, "tracepoint syscalls:sys_enter_getppid with kstack_depth 127 attaches (%d)",
	      link);
	if (link < 0)
		return;
	getppid_k_on_cpu0();
	while ((r = next_rec(0, &size))) {
		const struct pea_kstack *ks;

		n++;
		if (r->flags != (PEA_REC_F_TRACEPOINT | PEA_REC_F_KSTACK))
			continue;
		ks = check_stack(r, sizeof(*r) + r->raw_size, size, 127,
				 "syscalls tracepoint");
		if (n == 1 && ks) {
			pt_diag("syscalls:sys_enter_getppid stack (nr %u):",
				ks->nr);
			stack_diag(ks);
		}
		if (ks && stack_has(ks, "do_syscall_64"))
			good++;
	}
	PT_EQ(n, K, "syscalls tracepoint: %d records", K);
	PT_EQ(good, K,
	      "syscalls tracepoint (user registers): every stack reaches do_syscall_64");
	close(link);
}

/* ---- NMI ---- */

/*
 * A kprobe hit in NMI (@hardirq false) or in a hard irq_work: the stack
 * has the target, the handler that called it, and crosses to the task
 * stack of the ioctl; every hit is a record or a counted error.
 */
static void test_ctx(bool hardirq)
{
	struct pea_probe_attr a = probe_attr("pea_st_kstack_target", 0, 127);
	struct pea_st_kstack_nmi c = { .count = 20, .hardirq = hardirq };
	const char *what = hardirq ? "hardirq" : "NMI";
	const char *caller = hardirq ? "pea_st_kstack_irq_work" :
				       "pea_st_kstack_nmi";
	struct pea_link_info info;
	struct pea_probe_record *r;
	int link, err, n = 0, good = 0, first = 1;
	__u32 size;

	pt_st();
	link = attach(&a);
	PT_OK(link >= 0, "%s: kprobe:pea_st_kstack_target (test module) attaches (%d)",
	      what, link);
	if (link < 0)
		return;
	PT_EQ(ioctl(link, PEA_LINK_IOC_INFO, &info), 0, "link info");
	pt_pin(1 % ncpu);
	pt_rings_drain(rings, ncpu);
	err = pt_ioctl_errno(pt_st(), PEA_ST_IOC_KSTACK_NMI, &c);
	PT_EQ(err, 0, "PEA_ST_IOC_KSTACK_NMI (%s)", what);
	PT_OK((hardirq ? c.in_hardirq && !c.in_nmi : c.in_nmi) &&
	      c.calls == 20 && c.cpu == 1 % ncpu,
	      "the 20 calls ran in %s on CPU %d", what, 1 % ncpu);
	while ((r = next_rec(1 % ncpu, &size))) {
		const struct pea_kstack *ks;

		n++;
		ks = check_stack(r, sizeof(*r), size, 127, what);
		if (!ks || r->flags != PEA_REC_F_KSTACK)
			continue;
		if (first) {
			pt_diag("%s stack (nr %u):", what, ks->nr);
			stack_diag(ks);
			first = 0;
		}
		if (ks->ips[0] == info.addr && ks->nr >= 2 &&
		    !strcmp(pt_ksym_name(ks->ips[1]), caller) &&
		    stack_has(ks, "do_syscall_64"))
			good++;
	}
	PT_EQ(ioctl(link, PEA_LINK_IOC_INFO, &info), 0, "link info");
	PT_OK(n > 0, "%s: records received (%d)", what, n);
	PT_EQ(n + info.dropped, 20, "%s: received + dropped == 20 attempted", what);
	PT_EQ(info.errors, 0, "%s: the drops are not errors", what);
	PT_EQ(info.hits, 20, "%s: 20 hits", what);
	PT_EQ(n, info.written, "%s: received == written", what);
	PT_EQ(good, n,
	      "%s: every stack has the target, then %s, and crosses to the task stack (do_syscall_64)",
	      what, caller);
	close(link);
}

/* ---- cost ---- */

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The time of @n getppid() calls under a kprobe with @depth, in ns per
 * call; every call must have left its record.
 */
static double probed_call_ns(__u32 depth, int n)
{
	struct pea_probe_attr a = probe_attr("__x64_sys_getppid", 0, depth);
	struct pea_link_info info;
	__u64 t0, t1;
	int link, i;

	a.filter_tgid = getpid();
	link = attach(&a);
	if (link < 0)
		return -1;
	pt_pin(0);
	pt_rings_drain(rings, ncpu);
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		syscall(SYS_getppid);
		if (i % 256 == 255)
			pt_ring_drain(&rings[0]);
	}
	t1 = now_ns();
	if (ioctl(link, PEA_LINK_IOC_INFO, &info) ||
	    info.written != (__u64)n || info.errors)
		t1 = t0 - 1;
	close(link);
	pt_rings_drain(rings, ncpu);
	return t1 < t0 ? -1 : (double)(t1 - t0) / n;
}

static void test_cost(void)
{
	double base = probed_call_ns(0, 2000), deep = probed_call_ns(127, 2000);

	PT_OK(base > 0 && deep > 0,
	      "cost: 2000 probed getppid() each, every record written");
	pt_diag("cost: getppid() under a kprobe %.0f ns without a stack, %.0f ns with kstack_depth 127 (+%.0f ns per hit, 3 frames)",
		base, deep, deep - base);
}

/* ---- sizes, errnos, layout ---- */

static void test_errors(void)
{
	struct pea_probe_attr a = probe_attr("__x64_sys_getppid", 0, 128);
	int id = pt_tp_id("raw_syscalls", "sys_enter");
	struct pea_tp_attr t;
	struct pea_probe_record *r;
	int link, n = 0, good = 0;
	__u32 size;

	PT_EQ(-attach(&a), EINVAL, "kprobe: kstack_depth 128 gives EINVAL");
	a = probe_attr("__x64_sys_getppid", 0, 4);
	a.ustack_depth = PEA_USTACK_MAX + 1;	/* the word was reserved */
	PT_EQ(-attach(&a), EINVAL, "kprobe: ustack_depth %d gives EINVAL",
	      PEA_USTACK_MAX + 1);
	a = probe_attr("__x64_sys_getppid", PEA_PROBE_F_RETPROBE, 128);
	PT_EQ(-attach(&a), EINVAL, "kretprobe: kstack_depth 128 gives EINVAL");
	a = probe_attr("__x64_sys_getppid", 0, 4);
	a.size = PEA_PROBE_ATTR_SIZE_VER0 - 1;
	PT_EQ(-attach(&a), EINVAL, "kprobe: size VER0 - 1 gives EINVAL");
	t = tp_attr(id, 128);
	PT_EQ(-attach_tp(&t), EINVAL, "tracepoint: kstack_depth 128 gives EINVAL");
	t = tp_attr(id, 4);
	t.ustack_depth = PEA_USTACK_MAX + 1;	/* the word was reserved */
	PT_EQ(-attach_tp(&t), EINVAL, "tracepoint: ustack_depth %d gives EINVAL",
	      PEA_USTACK_MAX + 1);
	t = tp_attr(id, 4);
	t.size = PEA_TP_ATTR_SIZE_VER0 - 1;
	PT_EQ(-attach_tp(&t), EINVAL, "tracepoint: size VER0 - 1 gives EINVAL");

	/*
	 * Size VER0: the fields past it are not read (kstack_depth 4 in
	 * memory is ignored), and the records are exactly the old ones.
	 */
	a = probe_attr("__x64_sys_getppid", 0, 4);
	a.size = PEA_PROBE_ATTR_SIZE_VER0;
	a.filter_tgid = getpid();
	link = attach(&a);
	PT_OK(link >= 0, "kprobe: size VER0 is accepted (%d)", link);
	if (link >= 0) {
		getppid_k_on_cpu0();
		while ((r = next_rec(0, &size))) {
			n++;
			if (r->flags == 0 && size == raw_size(sizeof(*r)) &&
			    r->capture_len == 0)
				good++;
		}
		PT_EQ(n, K, "VER0: %d records", K);
		PT_EQ(good, K,
		      "VER0: no PEA_REC_F_KSTACK, records of exactly sizeof(struct pea_probe_record)");
		close(link);
	}
	/* The ioctl number of VER0 binaries (the old size in it) works. */
	a = probe_attr("__x64_sys_getppid", 0, 0);
	a.size = PEA_PROBE_ATTR_SIZE_VER0;
	link = ioctl(map_fd, _IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x14,
				  PEA_PROBE_ATTR_SIZE_VER0), &a);
	PT_OK(link >= 0, "the VER0 ioctl number of PEA_MAP_IOC_ATTACH_PROBE works (%d)",
	      link < 0 ? -errno : link);
	if (link >= 0)
		close(link);
	t = tp_attr(id, 0);
	t.size = PEA_TP_ATTR_SIZE_VER0;
	link = ioctl(map_fd, _IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x15,
				  PEA_TP_ATTR_SIZE_VER0), &t);
	PT_OK(link >= 0, "the VER0 ioctl number of PEA_MAP_IOC_ATTACH_TP with size VER0 works (%d)",
	      link < 0 ? -errno : link);
	if (link >= 0)
		close(link);

	/* A tracepoint record without a stack is exactly the old one. */
	t = tp_attr(id, 0);
	link = attach_tp(&t);
	PT_OK(link >= 0, "tracepoint without kstack attaches (%d)", link);
	if (link >= 0) {
		struct pea_tp_record *tr;

		n = good = 0;
		getppid_k_on_cpu0();
		while ((tr = next_rec(0, &size))) {
			n++;
			if (tr->flags == PEA_REC_F_TRACEPOINT &&
			    size == raw_size(sizeof(*tr) + tr->raw_size))
				good++;
		}
		PT_EQ(n, K, "tracepoint without kstack: %d records", K);
		PT_EQ(good, K,
		      "tracepoint without kstack: no flag, the old record size");
		close(link);
	}
}

int main(void)
{
	pt_dev();
	pt_st();	/* loaded first: its symbols are in the table */
	pt_ksyms_read();
	PT_OK(pt_nr_ksyms > 1000 && pt_ksyms[0].addr,
	      "/proc/kallsyms shows addresses (%zu text symbols)", pt_nr_ksyms);
	PT_EQ(sizeof(struct pea_kstack), 8, "struct pea_kstack is 8 bytes");
	PT_EQ(PEA_PROBE_ATTR_SIZE_VER1, PEA_PROBE_ATTR_SIZE_VER0 + 8,
	      "struct pea_probe_attr: VER1 is VER0 + kstack_depth + reserved");
	PT_EQ(offsetof(struct pea_probe_attr, kstack_depth),
	      PEA_PROBE_ATTR_SIZE_VER0, "kstack_depth at VER0");
	PT_EQ(PEA_TP_ATTR_SIZE_VER1, PEA_TP_ATTR_SIZE_VER0 + 8,
	      "struct pea_tp_attr: VER1 is VER0 + kstack_depth + reserved");
	PT_EQ(offsetof(struct pea_tp_attr, kstack_depth),
	      PEA_TP_ATTR_SIZE_VER0, "kstack_depth at VER0");
	setup_map();
	test_kprobe();
	test_depth(1);
	test_depth(3);
	test_kretprobe();
	test_counters_capture();
	test_tracepoint();
	test_tracepoint_user_regs();
	test_errors();
	test_ctx(false);
	test_ctx(true);
	test_cost();
	return pt_done();
}
