// SPDX-License-Identifier: GPL-2.0
/*
 * Stack keys of aggregation tables (PEA_AGG_KEY_KSTACK, _USTACK; the
 * stack store; struct pea_agg_stack in PEA_LINK_IOC_AGG_READ): a kprobe
 * on the test module's pea_st_kstack_target(), called from three known
 * call chains (the ioctl in task context, a hard irq_work, an NMI
 * handler), counted per stack exactly, each stack named by its second
 * frame; one stack stored once for every CPU; a kretprobe's and a
 * tracepoint's stacks; the store's overflow and the key overflow counted
 * exactly, the store emptied by read-and-clear; read-and-clear under a
 * writer that switches between the three chains loses nothing (per
 * chain, the intervals add up to the calls made); a sampler counting
 * its user and kernel stacks in the kernel (spin <- a|b <- caller);
 * ENOSPC and EFAULT clear nothing; the memory charged; every bad
 * argument's errno; the previous ioctl numbers (VER0 structs) still
 * answer, and a request too short for a stack table's stacks is EINVAL.
 */
#include <stddef.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_ksyms.h"
#include "pt_perm.h"
#include "pt_quota.h"

#define NCPU_MAX	64
#define MAXE		512
#define MAXS		64

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned long long target_addr;

enum ctx { CTX_TASK, CTX_HARDIRQ, CTX_NMI, CTX_NR };
static const char *const ctx_name[CTX_NR] = { "task", "hardirq", "NMI" };
/* The function that calls the target in each context (its frame 1). */
static const char *const ctx_caller[CTX_NR] = {
	"st_kstack_nmi", "pea_st_kstack_irq_work", "pea_st_kstack_nmi",
};

/* ---- helpers ---- */

static struct pea_agg_attr stk_attr(__u32 max_keys, __u8 key0, __u8 key1,
				    __u32 max_stacks, __u32 depth)
{
	struct pea_agg_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_AGG_F_NO_RECORDS;
	a.max_keys = max_keys;
	a.keys[0] = key0;
	a.keys[1] = key1;
	a.max_stacks = max_stacks;
	a.stack_depth = depth;
	return a;
}

static int agg_create(int link, struct pea_agg_attr *a)
{
	return pt_ioctl_errno(link, PEA_LINK_IOC_AGG_CREATE, a);
}

static int probe(const char *sym, __u32 flags)
{
	struct pea_probe_attr a = pt_probe_attr(sym, flags);
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);

	if (fd < 0)
		pt_fatal("attach kprobe");
	return fd;
}

struct stack {
	__u32 id;
	__u16 nr, kind;
	__u64 ips[PEA_KSTACK_MAX];
};

/* A read, entries as they come (per CPU), stacks resolved. */
struct table {
	int nr, nr_stacks;
	__u64 hits, dropped, errors, stack_dropped, stacks_size;
	struct {
		__u64 key[PEA_AGG_KEY_WORDS];
		__u32 cpu;
		__u64 count;
	} e[MAXE];
	struct stack s[MAXS];
};

static unsigned char rbuf[1 << 20];
static unsigned char sbuf[1 << 20];

/*
 * Read (with @clear, and clear) @link's table into @t, the stacks into a
 * buffer of @slen bytes at @sp; the errno or 0.
 */
static int stk_read_buf(int link, bool clear, struct table *t, void *sp,
			__u64 slen)
{
	struct pea_agg_read r;
	unsigned char *p = sbuf;
	__u32 i;
	int err;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.flags = clear ? PEA_AGG_READ_F_CLEAR : 0;
	r.buf = (uintptr_t)rbuf;
	r.buf_len = sizeof(rbuf);
	r.stacks = (uintptr_t)sp;
	r.stacks_len = slen;
	err = pt_ioctl_errno(link, PEA_LINK_IOC_AGG_READ, &r);
	memset(t, 0, sizeof(*t));
	t->nr_stacks = r.nr_stacks;
	t->stacks_size = r.stacks_size;
	if (err)
		return err;
	t->hits = r.hits;
	t->dropped = r.dropped;
	t->errors = r.errors;
	t->stack_dropped = r.stack_dropped;
	if (r.nr_entries > MAXE || r.nr_stacks > MAXS)
		return E2BIG;
	t->nr = r.nr_entries;
	for (i = 0; i < r.nr_entries; i++) {
		struct pea_agg_entry *e = (void *)(rbuf + i * r.entry_size);

		memcpy(t->e[i].key, e->key, sizeof(e->key));
		t->e[i].cpu = e->cpu;
		t->e[i].count = e->count;
	}
	if (sp != sbuf)
		return 0;
	for (i = 0; i < r.nr_stacks; i++) {
		struct pea_agg_stack *s = (void *)p;

		t->s[i].id = s->id;
		t->s[i].nr = s->nr;
		t->s[i].kind = s->kind;
		if (s->nr > PEA_KSTACK_MAX)
			return ERANGE;
		memcpy(t->s[i].ips, s->ips, s->nr * 8);
		p += sizeof(*s) + s->nr * 8;
	}
	if ((__u64)(p - sbuf) != r.stacks_size)
		return EPROTO;
	return 0;
}

static int stk_read(int link, bool clear, struct table *t)
{
	return stk_read_buf(link, clear, t, sbuf, sizeof(sbuf));
}

static const struct stack *stack_of(const struct table *t, __u64 id)
{
	int i;

	for (i = 0; i < t->nr_stacks; i++)
		if (t->s[i].id == id)
			return &t->s[i];
	return NULL;
}

static bool stack_has(const struct stack *s, const char *sym)
{
	int i;

	for (i = 0; i < s->nr; i++)
		if (!strcmp(pt_ksym_name(s->ips[i]), sym))
			return true;
	return false;
}

static void stack_diag(const struct stack *s)
{
	int i;

	for (i = 0; i < s->nr && i < 12; i++)
		pt_diag("  %llx %s", (unsigned long long)s->ips[i],
			pt_ksym_name(s->ips[i]));
}

/*
 * The context whose chain a kprobe stack of the target is (ips[0] the
 * target, ips[1] in its caller), or -1.
 */
static int stack_ctx(const struct stack *s)
{
	int c;

	if (!s || s->kind != PEA_AGG_STACK_KERNEL || s->nr < 3 ||
	    s->ips[0] != target_addr)
		return -1;
	for (c = 0; c < CTX_NR; c++)
		if (!strcmp(pt_ksym_name(s->ips[1]), ctx_caller[c]))
			return c;
	return -1;
}

/* Call pea_st_kstack_target(0 .. @count-1) in @ctx on this CPU. */
static void calls(enum ctx ctx, __u32 count)
{
	struct pea_st_kstack_nmi c = {
		.count = count, .hardirq = ctx == CTX_HARDIRQ,
		.task = ctx == CTX_TASK,
	};
	int err = pt_ioctl_errno(pt_st(), PEA_ST_IOC_KSTACK_NMI, &c);

	if (err || c.calls != count) {
		errno = err;
		pt_fatal("PEA_ST_IOC_KSTACK_NMI");
	}
	if ((ctx == CTX_NMI && !c.in_nmi) ||
	    (ctx == CTX_HARDIRQ && !c.in_hardirq) ||
	    (ctx == CTX_TASK && (c.in_nmi || c.in_hardirq)))
		PT_OK(0, "the calls ran in %s context", ctx_name[ctx]);
}

/* ---- three known chains, counted exactly ---- */

static void test_known_stacks(void)
{
	static const __u32 want[CTX_NR] = { 1000, 500, 300 };
	struct pea_agg_attr a = stk_attr(8, PEA_AGG_KEY_KSTACK, 0, 8, 127);
	struct pea_link_info info;
	int link, c, i, seen[CTX_NR] = { 0 }, ok = 1;
	struct table t;

	link = probe("pea_st_kstack_target", 0);
	PT_EQ(ioctl(link, PEA_LINK_IOC_INFO, &info), 0, "link info");
	target_addr = info.addr;
	PT_EQ(agg_create(link, &a), 0,
	      "kprobe: a table keyed by kernel stack, 8 stacks of 127");
	pt_pin(0);
	for (c = 0; c < CTX_NR; c++)
		calls(c, want[c]);
	PT_EQ(stk_read(link, true, &t), 0, "read-and-clear");
	PT_OK(t.hits == 1800 && t.dropped == 0 && t.errors == 0 &&
	      t.stack_dropped == 0,
	      "hits %llu == 1800, nothing dropped",
	      (unsigned long long)t.hits);
	PT_OK(t.nr == 3 && t.nr_stacks == 3,
	      "3 entries (%d), 3 stacks stored (%d)", t.nr, t.nr_stacks);
	for (i = 0; i < t.nr; i++) {
		const struct stack *s = stack_of(&t, t.e[i].key[0]);

		c = stack_ctx(s);
		if (c < 0 || seen[c]++ || t.e[i].count != want[c] ||
		    t.e[i].cpu != 0 || t.e[i].key[1]) {
			ok = 0;
			pt_diag("entry %d: id %llx count %llu, ctx %d", i,
				(unsigned long long)t.e[i].key[0],
				(unsigned long long)t.e[i].count, c);
			if (s)
				stack_diag(s);
			continue;
		}
		if (c == CTX_TASK) {
			pt_diag("task stack (nr %u):", s->nr);
			stack_diag(s);
		}
		/* The task's chain goes through the syscall's entry. */
		if (c == CTX_TASK && !stack_has(s, "do_syscall_64"))
			ok = 0;
	}
	PT_OK(ok && seen[0] == 1 && seen[1] == 1 && seen[2] == 1,
	      "each chain one entry, counted exactly: 1000 via st_kstack_nmi (task, through do_syscall_64), 500 via pea_st_kstack_irq_work (hardirq), 300 via pea_st_kstack_nmi (NMI); ips[0] the probed address");
	PT_EQ(stk_read(link, false, &t), 0, "read");
	PT_OK(t.nr == 0 && t.nr_stacks == 0 && t.stacks_size == 0,
	      "read-and-clear emptied the table and its store");
	close(link);
}

/* The same chain on every CPU: one stack, an entry per CPU. */
static void test_one_stack_all_cpus(void)
{
	struct pea_agg_attr a = stk_attr(8, PEA_AGG_KEY_KSTACK, 0, 8, 127);
	int link, cpu, i, ok = 1, cpus = 0;
	struct table t;

	link = probe("pea_st_kstack_target", 0);
	PT_EQ(agg_create(link, &a), 0, "a stack table");
	for (cpu = 0; cpu < ncpu; cpu++) {
		pt_pin(cpu);
		calls(CTX_TASK, 100 + cpu);
	}
	PT_EQ(stk_read(link, false, &t), 0, "read");
	for (i = 0; i < t.nr; i++) {
		if (t.e[i].key[0] != t.e[0].key[0] ||
		    t.e[i].count != 100 + t.e[i].cpu)
			ok = 0;
		cpus |= 1 << t.e[i].cpu;
	}
	PT_OK(ok && t.nr == ncpu && cpus == (1 << ncpu) - 1 &&
	      t.nr_stacks == 1 && stack_ctx(&t.s[0]) == CTX_TASK &&
	      t.s[0].id == t.e[0].key[0],
	      "%d CPUs, 100 + cpu calls each: %d entries of one id, each CPU's count exact, the stack stored once (%d)",
	      ncpu, t.nr, t.nr_stacks);
	close(link);
}

/* kretprobe: the caller's stack, from the return address up. */
static void test_kretprobe(void)
{
	struct pea_agg_attr a = stk_attr(8, PEA_AGG_KEY_KSTACK, 0, 8, 127);
	const struct stack *s;
	struct table t;
	int link;

	link = probe("pea_st_kstack_target", PEA_PROBE_F_RETPROBE);
	PT_EQ(agg_create(link, &a), 0, "kretprobe: a stack table");
	pt_pin(0);
	calls(CTX_TASK, 400);
	PT_EQ(stk_read(link, true, &t), 0, "read");
	s = t.nr == 1 ? stack_of(&t, t.e[0].key[0]) : NULL;
	if (s) {
		pt_diag("kretprobe stack (nr %u):", s->nr);
		stack_diag(s);
	}
	PT_OK(s && t.e[0].count == 400 && t.hits == 400 &&
	      !strcmp(pt_ksym_name(s->ips[0]), "st_kstack_nmi") &&
	      stack_has(s, "do_syscall_64") &&
	      strcmp(pt_ksym_name(s->ips[1]), "st_kstack_nmi"),
	      "400 returns: one stack, counted 400, from the return address in st_kstack_nmi up through do_syscall_64, the caller once");
	close(link);
}

/* A tracepoint: the stack of its call site. */
static void test_tracepoint(void)
{
	struct pea_agg_attr a = stk_attr(8, PEA_AGG_KEY_KSTACK, 0, 8, 127);
	struct pea_tp_attr tp;
	const struct stack *s;
	char buf[32];
	struct table t;
	int link, i;

	memset(&tp, 0, sizeof(tp));
	if (pt_read_file("/sys/kernel/tracing/events/sched/sched_process_fork/id",
			 buf, sizeof(buf)) < 0) {
		PT_OK(0, "sched:sched_process_fork id");
		return;
	}
	tp.size = sizeof(tp);
	tp.flags = PEA_TP_F_CLOEXEC;
	tp.event_id = atoi(buf);
	tp.filter_cpu = -1;
	tp.filter_tgid = getpid();
	strcpy(tp.name, "sched:sched_process_fork");
	link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &tp);
	if (link < 0)
		pt_fatal("attach sched:sched_process_fork");
	PT_EQ(agg_create(link, &a), 0, "tracepoint: a stack table");
	for (i = 0; i < 20; i++) {
		pid_t p = fork();

		if (!p)
			_exit(0);
		waitpid(p, NULL, 0);
	}
	PT_EQ(stk_read(link, true, &t), 0, "read");
	s = t.nr == 1 ? stack_of(&t, t.e[0].key[0]) : NULL;
	if (s) {
		pt_diag("sched_process_fork stack (nr %u):", s->nr);
		stack_diag(s);
	}
	PT_OK(s && t.e[0].count == 20 && t.hits == 20 &&
	      !strcmp(pt_ksym_name(s->ips[0]), "kernel_clone") &&
	      stack_has(s, "do_syscall_64"),
	      "20 forks: one stack, counted 20, from the call site in kernel_clone up through do_syscall_64");
	close(link);
}

/* ---- overflow ---- */

static void test_store_overflow(void)
{
	struct pea_agg_attr a = stk_attr(8, PEA_AGG_KEY_CPU,
					 PEA_AGG_KEY_KSTACK, 1, 127);
	struct table t;
	int link;

	link = probe("pea_st_kstack_target", 0);
	PT_EQ(agg_create(link, &a), 0, "keys cpu,kstack; a store of 1 stack");
	pt_pin(0);
	calls(CTX_TASK, 100);
	calls(CTX_HARDIRQ, 50);
	calls(CTX_NMI, 30);
	calls(CTX_TASK, 7);
	PT_EQ(stk_read(link, false, &t), 0, "read");
	PT_OK(t.nr == 1 && t.nr_stacks == 1 && t.e[0].count == 107 &&
	      t.e[0].key[0] == 0 && stack_ctx(stack_of(&t, t.e[0].key[1])) ==
	      CTX_TASK && t.hits == 187 && t.dropped == 80 &&
	      t.stack_dropped == 80 && t.errors == 0,
	      "task 100 + 7 counted, hardirq 50 and NMI 30 dropped: dropped %llu == stack_dropped %llu == 80, hits %llu == 187",
	      (unsigned long long)t.dropped,
	      (unsigned long long)t.stack_dropped,
	      (unsigned long long)t.hits);
	PT_EQ(stk_read(link, true, &t), 0, "read-and-clear");
	PT_OK(t.nr == 1 && t.dropped == 80, "read-and-clear returns the same");
	calls(CTX_NMI, 30);
	calls(CTX_TASK, 5);
	PT_EQ(stk_read(link, true, &t), 0, "read-and-clear");
	PT_OK(t.nr == 1 && t.nr_stacks == 1 &&
	      stack_ctx(stack_of(&t, t.e[0].key[1])) == CTX_NMI &&
	      t.e[0].count == 30 && t.dropped == 5 && t.stack_dropped == 5,
	      "the cleared store is free again: the NMI chain stored (30), the task's dropped (5)");
	close(link);

	/* The key limit: the stack is stored, the key does not fit. */
	a = stk_attr(1, PEA_AGG_KEY_KSTACK, 0, 4, 127);
	link = probe("pea_st_kstack_target", 0);
	PT_EQ(agg_create(link, &a), 0, "max_keys 1, a store of 4");
	calls(CTX_TASK, 100);
	calls(CTX_HARDIRQ, 50);
	PT_EQ(stk_read(link, true, &t), 0, "read-and-clear");
	PT_OK(t.nr == 1 && t.e[0].count == 100 && t.hits == 150 &&
	      t.dropped == 50 && t.stack_dropped == 0,
	      "key overflow: 50 dropped (%llu), none for the store (%llu)",
	      (unsigned long long)t.dropped,
	      (unsigned long long)t.stack_dropped);
	close(link);
}

/* ---- read-and-clear under a writer ---- */

static volatile int writer_stop;
static __u64 writer_calls[CTX_NR];

static void *writer(void *arg)
{
	int cpu = (int)(long)arg, ctx = 0;

	pt_pin(cpu);
	while (!writer_stop) {
		calls(ctx, 300);
		writer_calls[ctx] += 300;
		ctx = (ctx + 1) % CTX_NR;
	}
	return NULL;
}

static void test_clear_under_writer(void)
{
	struct pea_agg_attr a = stk_attr(16, PEA_AGG_KEY_KSTACK, 0, 16, 127);
	__u64 got[CTX_NR] = { 0 }, hits = 0;
	int link, i, j, reads = 0, nonempty = 0, bad = 0;
	struct table t;
	pthread_t th;

	link = probe("pea_st_kstack_target", 0);
	PT_EQ(agg_create(link, &a), 0, "a stack table for read-and-clear");
	if (pthread_create(&th, NULL, writer, (void *)(long)(ncpu - 1)))
		pt_fatal("pthread_create");
	pt_pin(0);
	for (i = 0; i <= 40; i++) {
		if (i == 40) {
			writer_stop = 1;
			pthread_join(th, NULL);
		} else {
			usleep(20000);
		}
		if (stk_read(link, true, &t)) {
			bad++;
			continue;
		}
		reads++;
		hits += t.hits;
		if (t.nr)
			nonempty++;
		if (t.dropped || t.errors)
			bad++;
		for (j = 0; j < t.nr; j++) {
			int c = stack_ctx(stack_of(&t, t.e[j].key[0]));

			if (c < 0) {
				bad++;
				continue;
			}
			got[c] += t.e[j].count;
		}
	}
	pt_diag("%d reads-and-clears, %d non-empty; calls %llu %llu %llu",
		reads, nonempty, (unsigned long long)writer_calls[0],
		(unsigned long long)writer_calls[1],
		(unsigned long long)writer_calls[2]);
	PT_OK(nonempty >= 2 && !bad,
	      "%d intervals with hits, every entry's id resolved in its own read to one of the three chains, nothing dropped",
	      nonempty);
	for (i = 0; i < CTX_NR; i++)
		PT_EQ(got[i], writer_calls[i],
		      "%s chain: the intervals add up to the calls made (%llu)",
		      ctx_name[i], (unsigned long long)writer_calls[i]);
	PT_EQ(hits, writer_calls[0] + writer_calls[1] + writer_calls[2],
	      "and the hits");
	close(link);
}

/* ---- a sampler: user and kernel stacks counted in the kernel ---- */

#define PT_FN(sec)	__attribute__((noinline, noipa, section(#sec)))
#define PT_RANGE(sec)	extern const char __start_##sec[], __stop_##sec[]
PT_RANGE(pt_stk_spin);
PT_RANGE(pt_stk_a);
PT_RANGE(pt_stk_b);
PT_RANGE(pt_stk_work);
#define IN(sec, x)	((x) >= (__u64)(uintptr_t)__start_##sec && \
			 (x) < (__u64)(uintptr_t)__stop_##sec)

static volatile unsigned long sink;

/* The counter on the stack: the function keeps a frame (test_sample.c). */
PT_FN(pt_stk_spin) void spin(unsigned long n)
{
	volatile unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

PT_FN(pt_stk_a) void a(void)
{
	spin(150000);
}

PT_FN(pt_stk_b) void b(void)
{
	spin(50000);
}

PT_FN(pt_stk_work) void work(double secs)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		a();
		b();
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9 <
		 secs);
}

/* A cpu-clock sampler of this process at @freq Hz: its fd (or fatal). */
static int sampler(__u64 freq, __u32 kdepth, __u32 udepth)
{
	struct pea_sample_attr s;
	int fd;

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.flags = PEA_SAMPLE_F_CLOEXEC | PEA_SAMPLE_F_FREQ;
	s.type = PERF_TYPE_SOFTWARE;
	s.config = PERF_COUNT_SW_CPU_CLOCK;
	s.sample = freq;
	s.filter_tgid = getpid();
	s.filter_cpu = -1;
	s.kstack_depth = kdepth;
	s.ustack_depth = udepth;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_SAMPLE, &s);
	if (fd < 0)
		pt_fatal("attach a sampler");
	return fd;
}

static void test_sampler(void)
{
	struct pea_agg_attr a = stk_attr(256, PEA_AGG_KEY_USTACK,
					 PEA_AGG_KEY_KSTACK, 256, 32);
	__u64 count = 0, in_a = 0, in_b = 0, other = 0, kern = 0;
	struct pea_link_info info0, info;
	struct table t;
	int link, i;

	link = sampler(997, 32, 32);
	PT_EQ(agg_create(link, &a), 0,
	      "sampler: a table keyed by user and kernel stack, no records");
	/* Samples before the table was there were records. */
	PT_EQ(ioctl(link, PEA_LINK_IOC_INFO, &info0), 0, "link info");
	PT_EQ(stk_read(link, true, &t), 0, "read-and-clear");
	pt_pin(0);
	work(1.0);
	PT_EQ(ioctl(link, PEA_LINK_IOC_INFO, &info), 0, "link info");
	PT_EQ(stk_read(link, true, &t), 0, "read-and-clear");
	for (i = 0; i < t.nr; i++) {
		const struct stack *u = stack_of(&t, t.e[i].key[0]);
		const struct stack *k = t.e[i].key[1] ?
					stack_of(&t, t.e[i].key[1]) : NULL;

		count += t.e[i].count;
		if (t.e[i].key[1] && (!k || k->kind != PEA_AGG_STACK_KERNEL))
			other += 1000000;	/* an unresolved kernel stack */
		if (k)
			kern += t.e[i].count;
		if (!u || u->kind != PEA_AGG_STACK_USER) {
			other += t.e[i].count;
			continue;
		}
		if (k || !IN(pt_stk_spin, u->ips[0]) || u->nr < 3 ||
		    !IN(pt_stk_work, u->ips[2]))
			other += t.e[i].count;
		else if (IN(pt_stk_a, u->ips[1]))
			in_a += t.e[i].count;
		else if (IN(pt_stk_b, u->ips[1]))
			in_b += t.e[i].count;
		else
			other += t.e[i].count;
	}
	pt_diag("samples %llu: spin<-a<-work %llu, spin<-b<-work %llu, in the kernel %llu, elsewhere %llu",
		(unsigned long long)count, (unsigned long long)in_a,
		(unsigned long long)in_b, (unsigned long long)kern,
		(unsigned long long)other);
	PT_OK(t.hits == count + t.dropped + t.errors && t.dropped == 0 &&
	      t.errors == 0 && info.written == info0.written &&
	      info.hits - info.filtered == info0.hits - info0.filtered,
	      "hits %llu == the entries' counts, none dropped, no record written (%llu before, %llu after) nor link hit counted (%llu, %llu; the other tasks' are filtered)",
	      (unsigned long long)t.hits, (unsigned long long)info0.written,
	      (unsigned long long)info.written,
	      (unsigned long long)(info0.hits - info0.filtered),
	      (unsigned long long)(info.hits - info.filtered));
	PT_OK(count >= 100 && in_a + in_b >= count * 8 / 10,
	      "at least 100 samples (%llu), 80%% of them in spin <- a|b <- work by their user stack (%llu)",
	      (unsigned long long)count, (unsigned long long)(in_a + in_b));
	PT_OK(in_a + in_b && in_a * 100 / (in_a + in_b) >= 65 &&
	      in_a * 100 / (in_a + in_b) <= 85,
	      "a's share %llu%% within 75 +- 10",
	      (unsigned long long)(in_a * 100 / (in_a + in_b + !(in_a + in_b))));
	close(link);
}

/* ---- ENOSPC, EFAULT: nothing cleared ---- */

static void test_read_room(void)
{
	struct pea_agg_attr a = stk_attr(8, PEA_AGG_KEY_KSTACK, 0, 8, 127);
	struct table t;
	__u64 need;
	int link;

	link = probe("pea_st_kstack_target", 0);
	PT_EQ(agg_create(link, &a), 0, "a stack table");
	pt_pin(0);
	calls(CTX_TASK, 10);
	calls(CTX_HARDIRQ, 20);
	PT_EQ(stk_read(link, false, &t), 0, "read");
	need = t.stacks_size;
	PT_OK(t.nr_stacks == 2 && need == 16 + 8 * (__u64)(t.s[0].nr + t.s[1].nr),
	      "2 stacks take %llu bytes: 8 + 8 * nr each",
	      (unsigned long long)need);
	PT_EQ(stk_read_buf(link, true, &t, sbuf, need - 1), ENOSPC,
	      "read-and-clear with one byte too few for the stacks: ENOSPC");
	PT_OK(t.nr_stacks == 2 && t.stacks_size == need,
	      "ENOSPC says the stacks there are (%d) and their bytes (%llu)",
	      t.nr_stacks, (unsigned long long)t.stacks_size);
	PT_EQ(stk_read_buf(link, true, &t, (void *)8, need), EFAULT,
	      "read-and-clear into an unwritable stacks buffer: EFAULT");
	PT_EQ(stk_read(link, true, &t), 0, "read-and-clear");
	PT_OK(t.nr == 2 && t.nr_stacks == 2 && t.hits == 30,
	      "nothing was cleared before: 2 entries, 2 stacks, 30 hits");
	PT_EQ(stk_read(link, true, &t), 0, "read-and-clear");
	PT_OK(t.nr == 0 && t.nr_stacks == 0 && t.hits == 0, "then empty");
	close(link);
}

/* ---- memory ---- */

/* CPUs in /sys/devices/system/cpu/possible ("0-N" or "0"). */
static int possible_cpus(void)
{
	char buf[64];
	int lo, hi;

	if (pt_read_file("/sys/devices/system/cpu/possible", buf,
			 sizeof(buf)) < 0)
		pt_fatal("possible CPUs");
	if (sscanf(buf, "%d-%d", &lo, &hi) == 2)
		return hi - lo + 1;
	return 1;
}

/*
 * kmalloc_size_roundup(): the kmalloc caches (8 .. 8192: powers of two,
 * and 96 and 192), then a power of two of pages.
 */
static long kmalloc_round(long n)
{
	long s = 8;

	while (s < n) {
		if (s == 64 && n <= 96)
			return 96;
		if (s == 128 && n <= 192)
			return 192;
		s *= 2;
	}
	return s;
}

static void test_memory(void)
{
	struct pea_agg_attr a = stk_attr(8, PEA_AGG_KEY_KSTACK, 0, 8, 127);
	struct pea_agg_attr b = stk_attr(8, PEA_AGG_KEY_PID, 0, 0, 0);
	long l0, b0, l1, b1, l2, b2, l3, b3, gen, want;
	int la, lb;

	/*
	 * The struct; two generations: header 8, index 16 words, 8 entries
	 * of 8 + 8 * 127 bytes; per possible CPU 4 levels of 127 addresses
	 * to unwind in, after an 8-byte level.
	 */
	gen = 8 + 64 + 8 * (8 + 8 * 127);
	want = kmalloc_round(56) + 2 * kmalloc_round(gen) +
	       possible_cpus() * (8 + 4 * 127 * 8);
	la = probe("pea_st_kstack_target", 0);
	lb = probe("pea_st_kstack_target", 0);
	pt_quota(-1, &l0, &b0);
	PT_EQ(agg_create(lb, &b), 0, "a table keyed by pid");
	pt_quota(-1, &l1, &b1);
	PT_EQ(agg_create(la, &a), 0, "the same keyed by kernel stack");
	pt_quota(-1, &l2, &b2);
	PT_EQ((b2 - b1) - (b1 - b0), want,
	      "the store is charged at what the allocators take: %ld bytes",
	      want);
	close(la);
	pt_quota(-1, &l3, &b3);
	PT_OK(b2 - b3 >= b2 - b1,
	      "closing the link gives its table and store back (%ld -> %ld)",
	      b2, b3);
	close(lb);
}

/* ---- binaries built before the stack keys ---- */

/* The ioctl numbers of the previous pea.h: their structs' sizes then. */
#define AGG_CREATE_VER0 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x38, PEA_AGG_ATTR_SIZE_VER0)
#define AGG_READ_VER0 \
	_IOC(_IOC_READ | _IOC_WRITE, PEA_IOC_MAGIC, 0x39, \
	     PEA_AGG_READ_SIZE_VER0)

static void test_ver0(void)
{
	struct pea_agg_attr a = stk_attr(8, PEA_AGG_KEY_PID, 0, 0, 0);
	struct pea_agg_read r;
	int link;

	/* The review's F3: the old numbers were ENOTTY. */
	link = probe("pea_st_kstack_target", 0);
	a.size = PEA_AGG_ATTR_SIZE_VER0;
	PT_EQ(pt_ioctl_errno(link, AGG_CREATE_VER0, &a), 0,
	      "the previous PEA_LINK_IOC_AGG_CREATE number with a VER0 attr: a table");
	pt_pin(0);
	calls(CTX_TASK, 10);
	memset(&r, 0, sizeof(r));
	r.size = PEA_AGG_READ_SIZE_VER0;
	r.flags = PEA_AGG_READ_F_CLEAR;
	r.buf = (uintptr_t)rbuf;
	r.buf_len = sizeof(rbuf);
	PT_EQ(pt_ioctl_errno(link, AGG_READ_VER0, &r), 0,
	      "the previous PEA_LINK_IOC_AGG_READ number with a VER0 request: read");
	PT_OK(r.nr_entries == 1 && r.hits == 10,
	      "and it reads the table (%u entries, %llu hits)", r.nr_entries,
	      (unsigned long long)r.hits);
	close(link);

	/*
	 * The review's F1: a request too short for the stacks of a stack
	 * table was ENOSPC forever and its clear never cleared.
	 */
	a = stk_attr(8, PEA_AGG_KEY_KSTACK, 0, 8, 8);
	link = probe("pea_st_kstack_target", 0);
	PT_EQ(agg_create(link, &a), 0, "a stack table");
	calls(CTX_TASK, 10);
	memset(&r, 0, sizeof(r));
	r.size = PEA_AGG_READ_SIZE_VER0;
	r.flags = PEA_AGG_READ_F_CLEAR;
	r.buf = (uintptr_t)rbuf;
	r.buf_len = sizeof(rbuf);
	PT_EQ(pt_ioctl_errno(link, AGG_READ_VER0, &r), EINVAL,
	      "a VER0 read-and-clear of a stack table: EINVAL, not ENOSPC");
	r.size = PEA_AGG_READ_SIZE_VER1 - 8;
	PT_EQ(pt_ioctl_errno(link, PEA_LINK_IOC_AGG_READ, &r), EINVAL,
	      "a read without stack_dropped (96 bytes): EINVAL");
	{
		struct table t;

		PT_EQ(stk_read(link, true, &t), 0, "a VER1 read-and-clear");
		PT_OK(t.hits == 10 && t.nr == 1 && t.nr_stacks == 1,
		      "nothing was flipped nor cleared before: 10 hits, 1 stack");
	}
	close(link);
}

/* ---- bad arguments ---- */

static void test_errors(void)
{
	struct pea_agg_attr a;
	struct pea_agg_read r;
	char old[32];
	int link, s;

	link = probe("pea_st_kstack_target", 0);
	a = stk_attr(8, PEA_AGG_KEY_KSTACK, 0, 0, 127);
	PT_EQ(agg_create(link, &a), EINVAL, "a stack key with max_stacks 0: EINVAL");
	a = stk_attr(8, PEA_AGG_KEY_KSTACK, 0, 8, 0);
	PT_EQ(agg_create(link, &a), EINVAL, "stack_depth 0: EINVAL");
	a = stk_attr(8, PEA_AGG_KEY_KSTACK, 0, PEA_AGG_MAX_STACKS + 1, 8);
	PT_EQ(agg_create(link, &a), EINVAL, "max_stacks past 65536: EINVAL");
	a = stk_attr(8, PEA_AGG_KEY_KSTACK, 0, 8, PEA_KSTACK_MAX + 1);
	PT_EQ(agg_create(link, &a), EINVAL, "stack_depth 128: EINVAL");
	a = stk_attr(8, PEA_AGG_KEY_PID, 0, 8, 0);
	PT_EQ(agg_create(link, &a), EINVAL, "max_stacks without a stack key: EINVAL");
	a = stk_attr(8, PEA_AGG_KEY_PID, 0, 0, 8);
	PT_EQ(agg_create(link, &a), EINVAL, "stack_depth without a stack key: EINVAL");
	a = stk_attr(8, PEA_AGG_KEY_KSTACK, PEA_AGG_KEY_KSTACK, 8, 8);
	PT_EQ(agg_create(link, &a), EINVAL, "the kernel stack twice: EINVAL");
	a = stk_attr(8, PEA_AGG_KEY_USTACK + 1, 0, 8, 8);
	PT_EQ(agg_create(link, &a), EINVAL, "key part 8: EINVAL");
	a = stk_attr(8, PEA_AGG_KEY_USTACK, 0, 8, 8);
	PT_EQ(agg_create(link, &a), EINVAL, "a user stack on a kprobe: EINVAL");
	a = stk_attr(8, PEA_AGG_KEY_KSTACK, 0, 8, 8);
	a.size = PEA_AGG_ATTR_SIZE_VER0;
	PT_EQ(agg_create(link, &a), EINVAL,
	      "a stack key in a VER0 attr (no max_stacks): EINVAL");
	if (pt_read_file("/proc/sys/kernel/perf_event_max_stack", old,
			 sizeof(old)) > 0) {
		pt_write_file("/proc/sys/kernel/perf_event_max_stack", "10");
		a = stk_attr(8, PEA_AGG_KEY_KSTACK, 0, 8, 11);
		PT_EQ(agg_create(link, &a), EOVERFLOW,
		      "stack_depth 11 past perf_event_max_stack 10: EOVERFLOW");
		pt_write_file("/proc/sys/kernel/perf_event_max_stack", old);
	}
	a = stk_attr(8, PEA_AGG_KEY_KSTACK, 0, 8, 8);
	PT_EQ(agg_create(link, &a), 0, "then a good one");
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.reserved2 = 1;
	PT_EQ(pt_ioctl_errno(link, PEA_LINK_IOC_AGG_READ, &r), EINVAL,
	      "a read with reserved2 set: EINVAL");
	close(link);

	/* Samplers: their own depths, no value. */
	s = sampler(10, 16, 8);
	a = stk_attr(8, PEA_AGG_KEY_KSTACK, 0, 8, 17);
	PT_EQ(agg_create(s, &a), EINVAL,
	      "sampler: a kernel stack deeper than its kstack_depth: EINVAL");
	a = stk_attr(8, PEA_AGG_KEY_USTACK, 0, 8, 9);
	PT_EQ(agg_create(s, &a), EINVAL,
	      "sampler: a user stack deeper than its ustack_depth: EINVAL");
	a = stk_attr(8, PEA_AGG_KEY_USTACK, 0, 8, 8);
	a.value = PEA_AGG_VAL_ARG;
	PT_EQ(agg_create(s, &a), EINVAL, "sampler: a value: EINVAL");
	a = stk_attr(8, PEA_AGG_KEY_USTACK, PEA_AGG_KEY_KSTACK, 8, 8);
	PT_EQ(agg_create(s, &a), 0, "sampler: user and kernel stack of 8");
	close(s);
}

int main(void)
{
	ncpu = pt_setup(NCPU_MAX);
	ncpu = pt_cpu_map("aggstk", 1, &map_fd, ev_fd, rings);
	if (ncpu > 30)
		ncpu = 30;
	pt_ksyms_read();
	test_known_stacks();
	test_one_stack_all_cpus();
	test_kretprobe();
	test_tracepoint();
	test_store_overflow();
	test_clear_under_writer();
	test_sampler();
	test_read_room();
	test_memory();
	test_errors();
	test_ver0();
	return pt_done();
}
