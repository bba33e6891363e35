// SPDX-License-Identifier: GPL-2.0
/*
 * fprobe links (PEA_MAP_IOC_ATTACH_FPROBE, issue 21): one link on every
 * function of the test module that matches pea_st_fp_*, found in
 * /proc/kallsyms, each called a known number of times with known
 * arguments (PEA_ST_IOC_FPROBE): per-function counts, arguments, return
 * values, fetches and filtered counts exact, compared with one kprobe per
 * function; the errnos (bad attr, too many functions, unknown, notrace
 * and blacklisted functions, as a kprobe link answers them); detach under
 * load; the test module unloaded under a live link (the link does not
 * pin it) and loaded again, most likely at the same addresses: the new
 * module's functions are not traced. Where the kernel has no fprobe (no register_fprobe_ips in
 * kallsyms: Debian's 6.1) every attach answers EOPNOTSUPP.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_fprobe.h"
#include "pt_perm.h"
#include "pt_quota.h"

#define NCPU_MAX	64
#define NF		PEA_ST_FP_NR
#define ARG		100
#define ID_ENTRY	1000
#define ID_RET		2000
#define ID_KP		3000
#define PARAM		"/sys/module/pea/parameters/max_fprobe_funcs"

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];
static char names[64][PEA_SYM_LEN];
static int nnames;
static const __u32 counts[NF] = { 1, 2, 3, 4, 5, 6, 7, 8 };

/* The test module's functions matching pea_st_fp_*, sorted by name. */
static void find_names(void)
{
	char line[512], sym[PEA_SYM_LEN], mod[64], type;
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		pt_fatal("/proc/kallsyms");
	while (fgets(line, sizeof(line), f) && nnames < 64) {
		if (sscanf(line, "%llx %c %127s [%63[^]]]", &addr, &type, sym,
			   mod) != 4)
			continue;
		if (strcmp(mod, "pea_selftest") || (type != 't' && type != 'T') ||
		    strncmp(sym, "pea_st_fp_", 10))
			continue;
		memcpy(names[nnames++], sym, PEA_SYM_LEN);
	}
	fclose(f);
	qsort(names, nnames, PEA_SYM_LEN,
	      (int (*)(const void *, const void *))strcmp);
}

static struct pea_fprobe_attr fp_attr(__u32 flags, __u64 id)
{
	struct pea_fprobe_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags | PEA_FPROBE_F_CLOEXEC;
	a.syms = (uintptr_t)names;
	a.nr_syms = nnames;
	a.id = id;
	a.filter_cpu = -1;
	return a;
}

static int fp_attach(struct pea_fprobe_attr *a)
{
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_FPROBE, a);

	return fd < 0 ? -errno : fd;
}

/* A kprobe attr on @sym, as pt_probe_attr() makes it. */
static struct pea_probe_attr kp_attr(const char *sym)
{
	struct pea_probe_attr a = pt_probe_attr("", 0);

	memcpy(a.symbol, sym, strnlen(sym, PEA_SYM_LEN - 1));
	return a;
}

static int kp_attach(struct pea_probe_attr *a)
{
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, a);

	return fd < 0 ? -errno : fd;
}

static long call_nested(const __u32 *c, __s64 arg, __u32 nested)
{
	struct pea_st_fprobe f;

	memset(&f, 0, sizeof(f));
	memcpy(f.counts, c, sizeof(f.counts));
	f.arg = arg;
	f.nested = nested;
	if (ioctl(pt_st(), PEA_ST_IOC_FPROBE, &f))
		pt_fatal("PEA_ST_IOC_FPROBE");
	return f.sum;
}

static long call_funcs(const __u32 *c, __s64 arg)
{
	return call_nested(c, arg, 0);
}

/* What the records of this process said, per function. */
struct tally {
	int n[NF];		/* records */
	long long argsum[NF];	/* args[0] */
	long long retsum[NF];	/* ret */
	int badarg1;		/* args[1] not the function's index */
	int badaddr;		/* a function's records with two addresses */
	int other;		/* ids outside the range */
	int fetch_ok;		/* fetched arg1 equal to args[1] */
	__u64 addr[NF];
};

static void tally(struct tally *t, __u64 id0, bool fetch)
{
	struct perf_event_header *h = (void *)rec;
	struct pea_probe_record *r;
	int cpu, i;

	memset(t, 0, sizeof(*t));
	for (cpu = 0; cpu < ncpu; cpu++) {
		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			r = (void *)(rec + 12);
			if (r->tgid != (__u32)getpid())
				continue;
			if (r->id < id0 || r->id >= id0 + NF) {
				t->other++;
				continue;
			}
			i = r->id - id0;
			t->n[i]++;
			t->argsum[i] += (long long)r->args[0];
			t->retsum[i] += r->ret;
			if (r->args[1] != (__u64)i)
				t->badarg1++;
			if (t->addr[i] && t->addr[i] != r->addr)
				t->badaddr++;
			t->addr[i] = r->addr;
			if (fetch && (r->flags & PEA_REC_F_FETCH)) {
				struct pea_fetch_block *b =
					(void *)((unsigned char *)r +
						 sizeof(*r));
				__s64 v;

				memcpy(&v, (unsigned char *)b +
				       b->values[0].offset, sizeof(v));
				if (b->nr == 1 && !b->values[0].status &&
				    v == i)
					t->fetch_ok++;
			}
		}
	}
}

/* Sum of arg + k for k < n. */
static long long argsum(int n)
{
	return (long long)n * ARG + (long long)n * (n - 1) / 2;
}

static void link_info(int fd, struct pea_link_info *info)
{
	memset(info, 0, sizeof(*info));
	if (ioctl(fd, PEA_LINK_IOC_INFO, info))
		pt_fatal("PEA_LINK_IOC_INFO");
}

static void test_entry(void)
{
	struct pea_fprobe_attr a = fp_attr(0, ID_ENTRY);
	struct pea_link_info info;
	struct tally t;
	int fd, i, total = 0, good = 0;

	pt_rings_drain(rings, ncpu);
	fd = fp_attach(&a);
	PT_OK(fd >= 0, "entry: one fprobe link on %d functions (%d)", nnames,
	      fd);
	if (fd < 0)
		return;
	call_funcs(counts, ARG);
	tally(&t, ID_ENTRY, false);
	for (i = 0; i < NF; i++) {
		total += counts[i];
		good += t.n[i] == (int)counts[i] &&
			t.argsum[i] == argsum(counts[i]);
		if (t.n[i] != (int)counts[i])
			pt_diag("pea_st_fp_%d: %d records, want %u", i, t.n[i],
				counts[i]);
	}
	PT_EQ(good, NF, "entry: each function's records and arguments exact");
	PT_EQ(t.badarg1 + t.badaddr + t.other, 0,
	      "entry: every record names its function (id, addr, args[1])");
	for (i = 1; i < NF; i++)
		if (t.addr[i] == t.addr[i - 1])
			break;
	PT_EQ(i, NF, "entry: the %d functions have %d addresses", NF, NF);
	link_info(fd, &info);
	PT_EQ(info.hits, total, "entry: link hits");
	PT_EQ(info.written, total, "entry: link written");
	PT_EQ(info.missed + info.errors + info.dropped, 0,
	      "entry: nothing missed, failed or dropped");
	PT_EQ(info.id, ID_ENTRY, "entry: link info id is the first function's");
	PT_EQ(strcmp(info.symbol, names[0]), 0,
	      "entry: link info symbol is the first name");
	PT_EQ(info.addr, t.addr[0], "entry: link info addr is its address");
	close(fd);
	call_funcs(counts, ARG);
	tally(&t, ID_ENTRY, false);
	for (i = 0, total = 0; i < NF; i++)
		total += t.n[i];
	PT_EQ(total, 0, "entry: nothing after close");
}

/* The same calls through one kprobe per function: the same records. */
static void test_versus_kprobes(void)
{
	struct pea_fprobe_attr fa = fp_attr(0, ID_ENTRY);
	struct tally tf, tk;
	int fds[NF], fd, i, same = 0;

	for (i = 0; i < NF; i++) {
		struct pea_probe_attr a = kp_attr(names[i]);

		a.id = ID_KP + i;
		fds[i] = kp_attach(&a);
		if (fds[i] < 0)
			pt_fatal("kprobe attach");
	}
	pt_rings_drain(rings, ncpu);
	call_funcs(counts, ARG);
	tally(&tk, ID_KP, false);
	for (i = 0; i < NF; i++)
		close(fds[i]);
	fd = fp_attach(&fa);
	if (fd < 0)
		pt_fatal("fprobe attach");
	call_funcs(counts, ARG);
	tally(&tf, ID_ENTRY, false);
	close(fd);
	for (i = 0; i < NF; i++)
		same += tf.n[i] == tk.n[i] && tf.argsum[i] == tk.argsum[i] &&
			tf.addr[i] == tk.addr[i];
	PT_EQ(same, NF,
	      "fprobe and kprobes: same counts, arguments and addresses");
}

static void test_return(void)
{
	struct pea_fprobe_attr a = fp_attr(PEA_FPROBE_F_RETURN, ID_RET);
	struct pea_link_info info;
	struct tally t;
	int fd, i, total = 0, good = 0;

	pt_rings_drain(rings, ncpu);
	fd = fp_attach(&a);
	PT_OK(fd >= 0, "return: one fprobe link (%d)", fd);
	if (fd < 0)
		return;
	call_funcs(counts, ARG);
	tally(&t, ID_RET, false);
	for (i = 0; i < NF; i++) {
		long long want = (long long)counts[i] * (i * 1000 - i) -
				 argsum(counts[i]);

		total += counts[i];
		good += t.n[i] == (int)counts[i] && t.retsum[i] == want &&
			t.argsum[i] == argsum(counts[i]);
		if (t.retsum[i] != want)
			pt_diag("pea_st_fp_%d: returns sum %lld, want %lld", i,
				t.retsum[i], want);
	}
	PT_EQ(good, NF, "return: each function's records, returns and entry arguments exact");
	PT_EQ(t.badarg1 + t.badaddr + t.other, 0,
	      "return: every record names its function");
	link_info(fd, &info);
	PT_EQ(info.hits, total, "return: link hits");
	PT_EQ(info.written, total, "return: link written");
	PT_EQ(info.missed, 0, "return: nothing missed");
	close(fd);
}

/* A fetch of arg1 (the function's index) and a predicate arg1 >= 4. */
static void test_fetch_pred(__u32 flags, const char *what)
{
	struct pea_fprobe_attr a = fp_attr(flags, ID_ENTRY);
	struct pea_link_info info;
	struct pea_fetch f;
	struct pea_pred p;
	struct tally t;
	int fd, i, want = 0, filt = 0, good = 0;

	memset(&f, 0, sizeof(f));
	f.base = PEA_FETCH_BASE_ARG;
	f.arg = 1;
	f.type = PEA_FETCH_S64;
	memset(&p, 0, sizeof(p));
	p.op = PEA_PRED_CMP;
	p.fetch = 0;
	p.cmp = PEA_PRED_OP_GE;
	p.value = 4;
	a.fetches = (uintptr_t)&f;
	a.nr_fetches = 1;
	a.preds = (uintptr_t)&p;
	a.nr_preds = 1;
	pt_rings_drain(rings, ncpu);
	fd = fp_attach(&a);
	PT_OK(fd >= 0, "%s fetch and predicate: attached (%d)", what, fd);
	if (fd < 0)
		return;
	call_funcs(counts, ARG);
	tally(&t, ID_ENTRY, true);
	for (i = 0; i < NF; i++) {
		if (i >= 4)
			want += counts[i];
		else
			filt += counts[i];
		good += t.n[i] == (i >= 4 ? (int)counts[i] : 0);
	}
	PT_EQ(good, NF, "%s predicate: functions 4..7 recorded, 0..3 not",
	      what);
	PT_EQ(t.fetch_ok, want, "%s fetch: arg1 fetched exactly in each record",
	      what);
	link_info(fd, &info);
	PT_EQ(info.filtered, filt, "%s predicate: filtered counted", what);
	PT_EQ(info.written, want, "%s predicate: written", what);
	close(fd);
}

/* What attaching @a answers, the link closed. */
static int fp_errno(struct pea_fprobe_attr *a)
{
	int fd = fp_attach(a);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return fd;
}

static int kp_errno(const char *sym)
{
	struct pea_probe_attr a = kp_attr(sym);
	int fd = kp_attach(&a);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return fd;
}

static void test_errnos(void)
{
	static char one[2][PEA_SYM_LEN];
	struct pea_fprobe_attr a;
	char buf[32];
	int e;

	a = fp_attr(0, 0);
	a.flags |= 1U << 5;
	PT_EQ(fp_errno(&a), -EINVAL, "errno: unknown flag");
	a = fp_attr(0, 0);
	a.nr_syms = 0;
	PT_EQ(fp_errno(&a), -EINVAL, "errno: no functions");
	a = fp_attr(0, 0);
	a.syms = 0;
	PT_EQ(fp_errno(&a), -EINVAL, "errno: no name list");
	a = fp_attr(0, 0);
	a.syms = 8;
	PT_EQ(fp_errno(&a), -EFAULT, "errno: name list unreadable");
	a = fp_attr(0, 0);
	a.maxactive = 4;
	PT_EQ(fp_errno(&a), -EINVAL, "errno: maxactive on an entry link");
	a = fp_attr(PEA_FPROBE_F_RETURN, 0);
	a.maxactive = PEA_FPROBE_MAXACTIVE_MAX + 1;
	PT_EQ(fp_errno(&a), -EINVAL, "errno: maxactive past the bound");
	a.maxactive = PEA_FPROBE_MAXACTIVE_MAX;
	PT_EQ(PEA_FPROBE_MAXACTIVE_MAX, 4096, "the bound is a kretprobe's");
	PT_EQ(fp_errno(&a), 0, "maxactive 4096 accepted");
	a = fp_attr(0, ~0ULL - 2);
	PT_EQ(fp_errno(&a), -EINVAL, "errno: id + nr_syms - 1 wraps");
	a = fp_attr(0, 0);
	a.size = PEA_FPROBE_ATTR_SIZE_VER0 - 8;
	PT_EQ(fp_errno(&a), -EINVAL, "errno: size below VER0");
	a = fp_attr(0, 0);
	a.reserved2 = 1;
	PT_EQ(fp_errno(&a), -EINVAL, "errno: reserved2 not zero");
	a = fp_attr(0, 0);
	a.capture_mode = PEA_CAPTURE_STR;
	PT_EQ(fp_errno(&a), -EINVAL, "errno: capture without a length");
	a = fp_attr(0, 0);
	a.filter_cpu = -2;
	PT_EQ(fp_errno(&a), -EINVAL, "errno: filter_cpu -2");
	a = fp_attr(0, 0);
	a.flags |= PEA_FPROBE_F_DESCENDANTS;
	PT_EQ(fp_errno(&a), -EINVAL, "errno: descendants without a tgid");

	/* One name: an empty one, an unterminated one. */
	memset(one, 0, sizeof(one));
	a = fp_attr(0, 0);
	a.syms = (uintptr_t)one;
	a.nr_syms = 1;
	PT_EQ(fp_errno(&a), -EINVAL, "errno: an empty name");
	memset(one[0], 'x', PEA_SYM_LEN);
	PT_EQ(fp_errno(&a), -EINVAL, "errno: an unterminated name");

	/* Functions a kprobe link refuses, refused the same way. */
	memset(one, 0, sizeof(one));
	strcpy(one[0], "pea_st_fp_0");
	strcpy(one[1], "pea_no_such_function_xyz");
	a.nr_syms = 2;
	e = kp_errno(one[1]);
	PT_EQ(e, -ENOENT, "kprobe link: unknown function ENOENT");
	PT_EQ(fp_errno(&a), e, "errno: an unknown function, as the kprobe");
	strcpy(one[1], "pea_st_nofp_notrace");
	e = kp_errno(one[1]);
	PT_EQ(e, -EINVAL, "kprobe link: notrace function EINVAL");
	PT_EQ(fp_errno(&a), e, "errno: a notrace function, as the kprobe");
	strcpy(one[1], "pea_st_nofp_blacklisted");
	e = kp_errno(one[1]);
	PT_EQ(e, -EINVAL, "kprobe link: blacklisted function EINVAL");
	PT_EQ(fp_errno(&a), e, "errno: a blacklisted function, as the kprobe");
	strcpy(one[1], "pea_st_fp_0");
	PT_EQ(fp_errno(&a), -EINVAL, "errno: a function twice");
	strcpy(one[1], "pea_selftest:pea_st_fp_0");
	PT_EQ(fp_errno(&a), -EINVAL,
	      "errno: one function by two names (module:name)");
	strcpy(one[1], "pea_selftest:pea_st_fp_1");
	PT_EQ(fp_errno(&a), 0, "module:name accepted");

	/* max_fprobe_funcs: 4 allows 4, refuses 5 (E2BIG), then restored. */
	if (pt_read_file(PARAM, buf, sizeof(buf)) < 0)
		pt_fatal(PARAM);
	PT_EQ(atoi(buf), 4096, "max_fprobe_funcs defaults to 4096");
	pt_write_file(PARAM, "4");
	a = fp_attr(0, 0);
	a.nr_syms = 4;
	PT_EQ(fp_errno(&a), 0, "max_fprobe_funcs 4: 4 functions");
	a.nr_syms = 5;
	PT_EQ(fp_errno(&a), -E2BIG, "max_fprobe_funcs 4: 5 functions E2BIG");
	pt_write_file(PARAM, "4096");
	PT_EQ(fp_errno(&a), 0, "max_fprobe_funcs 4096: 5 functions");
}

/*
 * A return link with one node on pea_st_fpn_outer() and _inner(): each
 * outer call holds the node while the inner one runs, which fprobe
 * counts missed. Recorded plus missed is every call.
 */
static void test_missed(void)
{
	static const __u32 none[NF];
	static char two[2][PEA_SYM_LEN] = { "pea_st_fpn_inner",
					    "pea_st_fpn_outer" };
	struct pea_fprobe_attr a = fp_attr(PEA_FPROBE_F_RETURN, ID_RET);
	struct pea_link_info info;
	int fd;

	a.syms = (uintptr_t)two;
	a.nr_syms = 2;
	a.maxactive = 1;
	pt_rings_drain(rings, ncpu);
	fd = fp_attach(&a);
	PT_OK(fd >= 0, "missed: a return link with one node (%d)", fd);
	if (fd < 0)
		return;
	call_nested(none, ARG, 25);
	link_info(fd, &info);
	PT_EQ(info.written, 25, "missed: the 25 outer calls recorded");
	PT_EQ(info.hits, 25, "missed: 25 hits");
	PT_EQ(info.missed, 25, "missed: the 25 inner calls found no node");
	PT_EQ(info.hits + info.missed, 50, "missed: hits + missed is every call");
	close(fd);
	pt_rings_drain(rings, ncpu);
}

static volatile int sk_stop, sk_park;

static void *sk_load(void *arg __attribute__((unused)))
{
	struct pea_st_fprobe f;

	memset(&f, 0, sizeof(f));
	f.counts[0] = 20000;
	while (!sk_stop)
		if (ioctl(pt_st(), PEA_ST_IOC_FPROBE, &f))
			break;
	while (sk_park)
		usleep(10000);	/* alive, blocked: slots it holds look live */
	return NULL;
}

/* Whether tracefs' enabled_functions lists @fn (an ftrace_ops on it). */
static bool ftrace_enabled_on(const char *fn)
{
	char line[512];
	bool found = false;
	size_t n = strlen(fn);
	FILE *f = fopen("/sys/kernel/tracing/enabled_functions", "r");

	if (!f)
		pt_fatal("/sys/kernel/tracing/enabled_functions");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, fn, n) && (line[n] == ' ' || line[n] == '\t'))
			found = true;
	fclose(f);
	return found;
}

/*
 * Review F1: fprobe skips a return's exit handler when its recursion
 * guard fails at the return (fprobe_exit_handler()), so the slot the
 * entry took was never given back while its task lived. Return link A on
 * irq_exit_rcu (entered in hardirq context, returning in the interrupted
 * one), 8 nodes; entry link B on pea_st_fp_0 and pea_link_write_at, which
 * B's handler calls (a nested ftrace callback): a timer interrupt that
 * lands there returns from irq_exit_rcu with the guard's bits held. After
 * the load, its threads alive and parked, A must still record; closed
 * while they live, A's ftrace hook must go within seconds (the review's
 * PoC, test_rv_fpleak.c).
 */
static void test_skipped_exits(void)
{
	static char a_syms[1][PEA_SYM_LEN] = { "irq_exit_rcu" };
	static char b_syms[2][PEA_SYM_LEN] = { "pea_st_fp_0",
					       "pea_link_write_at" };
	struct pea_fprobe_attr fa = fp_attr(PEA_FPROBE_F_RETURN, 0);
	struct pea_fprobe_attr fb = fp_attr(0, 0);
	struct pea_link_info i0, i1, i2, i3;
	pthread_t th[NCPU_MAX];
	int a, b, t, waited;
	int o0[4] = { -1, -1, -1, -1 }, o1[4] = { -2, -2, -2, -2 };

	fa.syms = (uintptr_t)a_syms;
	fa.nr_syms = 1;
	fa.maxactive = 8;
	fb.syms = (uintptr_t)b_syms;
	fb.nr_syms = 2;
	fb.kstack_depth = 64;
	pt_read_objects_settled(o0);
	a = fp_attach(&fa);
	b = fp_attach(&fb);
	PT_OK(a >= 0 && b >= 0, "skipped exits: links A (%d) and B (%d)", a, b);
	if (a < 0 || b < 0)
		return;
	link_info(a, &i0);
	sleep(1);
	link_info(a, &i1);
	pt_diag("skipped exits: idle before: A written +%llu missed +%llu",
		(unsigned long long)(i1.written - i0.written),
		(unsigned long long)(i1.missed - i0.missed));
	sk_stop = 0;
	sk_park = 1;
	for (t = 0; t < ncpu; t++)
		pthread_create(&th[t], NULL, sk_load, NULL);
	for (t = 0; t < 6; t++) {
		sleep(1);
		pt_rings_drain(rings, ncpu);
	}
	sk_stop = 1;
	usleep(300000);
	pt_rings_drain(rings, ncpu);
	link_info(a, &i2);
	sleep(1);
	link_info(a, &i3);
	pt_diag("skipped exits: after the load, its threads parked: A written +%llu missed +%llu (missed during the load %llu)",
		(unsigned long long)(i3.written - i2.written),
		(unsigned long long)(i3.missed - i2.missed),
		(unsigned long long)(i2.missed - i1.missed));
	PT_OK(i3.written > i2.written,
	      "skipped exits: A still records irq_exit_rcu's returns (no slot kept by a skipped exit)");
	close(b);
	close(a);
	/* 5 s after the close, then text patching: 15 s (scaled) at most */
	for (waited = 0; waited < 15 * pt_time_scale() &&
	     ftrace_enabled_on("irq_exit_rcu"); waited++)
		sleep(1);
	PT_OK(!ftrace_enabled_on("irq_exit_rcu"),
	      "skipped exits: closed A's ftrace hook gone within 15 s (scaled), its load threads alive (%d s)",
	      waited);
	/*
	 * Review of the fixes, F1: the slots of skipped exits, held by
	 * tasks that live on (the parked threads, idle tasks), free the
	 * retired link once those tasks have no return in flight.
	 */
	for (waited = 0; waited < 30 * pt_time_scale(); waited++) {
		if (!pt_read_objects(o1) && o1[3] == o0[3])
			break;
		usleep(500000);
	}
	PT_EQ(o1[3], o0[3],
	      "skipped exits: closed A freed while its load threads live (links before %d, after close %d)",
	      o0[3], o1[3]);
	sk_park = 0;
	for (t = 0; t < ncpu; t++)
		pthread_join(th[t], NULL);
	pt_rings_drain(rings, ncpu);
}

/*
 * Whether @pid sleeps (state S, not preempted on its way) in
 * clock_nanosleep() (/proc/PID/syscall): inside do_nanosleep().
 */
static bool in_nanosleep(pid_t pid)
{
	char path[64], line[512], *p;
	bool in = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	if (!p || strncmp(p, ") S ", 4))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f))
		in = atoi(line) == SYS_clock_nanosleep ||
		     atoi(line) == SYS_nanosleep;
	fclose(f);
	return in;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Review of the fixes' fix (M1): return links A and B on do_nanosleep,
 * both for child S only; S sleeps 8 s, then an hour. A is closed while
 * S's first call is in flight: the kernel keeps A's return nodes until
 * that call returns, so A stays retired and charged until then; once it
 * returned, A must be freed and its charge given back although S sits in
 * B's (another return probe's) function from then on. A fix that asked
 * whether S had any return hooked kept A for the hour.
 */
static void test_retired_elsewhere(void)
{
	static char syms[1][PEA_SYM_LEN] = { "do_nanosleep" };
	struct pea_fprobe_attr fa = fp_attr(PEA_FPROBE_F_RETURN, 0);
	int o0[4] = { -1, -1, -1, -1 }, o1[4] = { -2, -2, -2, -2 };
	long lk, b0, ba, bab, b1;
	int go[2], a, b, i;
	double t0, t1;
	pid_t s;
	char c = 0;

	if (pipe(go))
		pt_fatal("pipe");
	s = fork();
	if (s < 0)
		pt_fatal("fork");
	if (!s) {
		struct timespec first = { 8, 0 }, second = { 3600, 0 };

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		nanosleep(&first, NULL);
		nanosleep(&second, NULL);
		_exit(0);
	}
	close(go[0]);
	pt_read_objects_settled(o0);
	pt_quota(0, &lk, &b0);
	fa.syms = (uintptr_t)syms;
	fa.nr_syms = 1;
	fa.maxactive = 4;
	fa.filter_tgid = s;
	a = fp_attach(&fa);
	pt_quota(0, &lk, &ba);
	b = fp_attach(&fa);
	pt_quota(0, &lk, &bab);
	PT_OK(a >= 0 && b >= 0, "retired elsewhere: links A (%d) and B (%d) on do_nanosleep for S",
	      a, b);
	if (a < 0 || b < 0)
		goto out;
	if (write(go[1], &c, 1) != 1)
		pt_fatal("write");
	t0 = now_s();
	for (i = 0; i < 500 && !in_nanosleep(s); i++)
		usleep(10000);
	PT_OK(in_nanosleep(s), "retired elsewhere: S in its first sleep");
	close(a);
	/* S's first call is in flight for 8 s: A retired, charged. */
	sleep(2);
	pt_read_objects(o1);
	pt_quota(0, &lk, &b1);
	PT_EQ(o1[3], o0[3] + 2,
	      "retired elsewhere: closed A kept while S's call is in flight (links %d, before %d)",
	      o1[3], o0[3]);
	PT_EQ(b1, bab, "retired elsewhere: A's charge kept meanwhile (%ld bytes)",
	      b1 - b0);
	/* S returns at 8 s, then sleeps in B's function for the hour. */
	for (i = 0; i < 200; i++) {
		if (!pt_read_objects(o1) && o1[3] == o0[3] + 1)
			break;
		usleep(100000);
	}
	t1 = now_s();
	/* S enters its second sleep microseconds after its first return. */
	for (i = 0; i < 500 && !in_nanosleep(s); i++)
		usleep(10000);
	PT_OK(t1 - t0 >= 8 && in_nanosleep(s),
	      "retired elsewhere: S in its second sleep (%.1f s after its first began)",
	      t1 - t0);
	PT_EQ(o1[3], o0[3] + 1,
	      "retired elsewhere: A freed once S's call returned, S in B's function (links %d, before %d; %.1f s)",
	      o1[3], o0[3], t1 - t0);
	pt_quota(0, &lk, &b1);
	PT_EQ(b1 - b0, bab - ba,
	      "retired elsewhere: A's charge given back, B's kept (%ld bytes, B %ld)",
	      b1 - b0, bab - ba);
out:
	kill(s, SIGKILL);
	waitpid(s, NULL, 0);
	close(go[1]);
	if (b >= 0)
		close(b);
}

/* The address kallsyms gives pea_st_fp_0, or 0. */
static unsigned long long fp0_addr(void)
{
	char line[512], sym[PEA_SYM_LEN], type;
	unsigned long long addr, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %127s", &addr, &type, sym) == 3 &&
		    !strcmp(sym, "pea_st_fp_0"))
			found = addr;
	fclose(f);
	return found;
}

/*
 * The test module goes while an entry link on its functions lives, and
 * comes back: the link keeps its counts and takes no hit of the new
 * module's functions. Calls through the module's own device, opened
 * apart from pt_st()'s (which keeps its fd open: no unload).
 */
static void test_module_reload(void)
{
	struct pea_fprobe_attr a = fp_attr(0, ID_ENTRY);
	struct pea_st_fprobe c;
	struct pea_link_info info;
	unsigned long long before, after;
	int fd, st, ko, total = 0, i;
	long rc;

	pt_rings_drain(rings, ncpu);
	fd = fp_attach(&a);
	PT_OK(fd >= 0, "reload: entry link (%d)", fd);
	if (fd < 0)
		return;
	call_funcs(counts, ARG);
	for (i = 0; i < NF; i++)
		total += counts[i];
	before = fp0_addr();
	/* pt_st()'s fd is the only other user: closed by number below. */
	close(pt_st());
	rc = syscall(SYS_delete_module, "pea_selftest", O_NONBLOCK);
	PT_EQ(rc, 0, "reload: the module unloads under the live link (%s)",
	      rc ? strerror(errno) : "ok");
	link_info(fd, &info);
	PT_EQ(info.hits, total, "reload: the link kept its %d hits", total);
	ko = open(PT_SELFTEST_KO, O_RDONLY | O_CLOEXEC);
	if (ko < 0 || syscall(SYS_finit_module, ko, "", 0))
		pt_fatal("finit_module pea_selftest");
	close(ko);
	after = fp0_addr();
	pt_diag("reload: pea_st_fp_0 at %s address after the reload",
		before == after ? "the same" : "another");
	st = open(PEA_ST_DEVICE, O_RDWR | O_CLOEXEC);
	if (st < 0)
		pt_fatal("open " PEA_ST_DEVICE);
	memset(&c, 0, sizeof(c));
	memcpy(c.counts, counts, sizeof(c.counts));
	c.arg = ARG;
	PT_EQ(ioctl(st, PEA_ST_IOC_FPROBE, &c), 0, "reload: the new module's functions called");
	close(st);
	link_info(fd, &info);
	PT_EQ(info.hits, total, "reload: no hit of the new module's functions");
	PT_EQ(info.errors + info.missed, 0, "reload: nothing failed or missed");
	close(fd);
	pt_rings_drain(rings, ncpu);
}

/*
 * Review of the fprobe fixes, N3: an attach racing the unload of its
 * functions' module. The test module is unloaded and loaded again in a
 * loop while entry links on its functions are attached: each attach
 * succeeds (the module went after the fprobe was live: its functions are
 * only gone) or fails ENOENT (it went before), never with another errno
 * (ftrace refusing a released address said EINVAL; so did
 * register_kprobe() once on 6.12, 1 of 1920 attaches, finding the name's
 * module freed between its lookups). Last: the module is loaded at the
 * end, with no fd of ours on it.
 */
static void test_attach_unload_race(void)
{
	struct pea_fprobe_attr a = fp_attr(0, ID_ENTRY);
	int ok = 0, enoent = 0, other = 0, other_err = 0, cycles = 0;
	int pfd[2], fd, ko, st;
	double t0 = now_s();
	pid_t c;

	if (pipe(pfd))
		pt_fatal("pipe");
	c = fork();
	if (c < 0)
		pt_fatal("fork");
	if (!c) {
		close(pfd[0]);
		while (now_s() - t0 < 10) {
			/* Busy while a kprobe that judges a name holds it. */
			while (syscall(SYS_delete_module, "pea_selftest",
				       O_NONBLOCK))
				if ((errno != EAGAIN && errno != EBUSY) ||
				    now_s() - t0 > 30)
					_exit(10);
			ko = open(PT_SELFTEST_KO, O_RDONLY | O_CLOEXEC);
			if (ko < 0 || syscall(SYS_finit_module, ko, "", 0))
				_exit(11);
			close(ko);
			cycles++;
		}
		if (write(pfd[1], &cycles, sizeof(cycles)) != sizeof(cycles))
			_exit(12);
		_exit(0);
	}
	close(pfd[1]);
	while (now_s() - t0 < 10) {
		/* Into the windows where the module may go: it is there. */
		if (access("/sys/module/pea_selftest/initstate", F_OK)) {
			usleep(1000);
			continue;
		}
		fd = fp_attach(&a);
		if (fd >= 0) {
			ok++;
			close(fd);
		} else if (fd == -ENOENT) {
			enoent++;
		} else {
			other++;
			other_err = -fd;
		}
	}
	if (read(pfd[0], &cycles, sizeof(cycles)) != sizeof(cycles))
		cycles = -1;
	close(pfd[0]);
	waitpid(c, &st, 0);
	PT_OK(WIFEXITED(st) && !WEXITSTATUS(st) && cycles > 0,
	      "unload race: the test module unloaded and loaded %d times (exit %d)",
	      cycles, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	pt_diag("unload race: %d attached, %d ENOENT, %d else", ok, enoent,
		other);
	PT_EQ(other, 0,
	      "unload race: every attach attached or answered ENOENT (%d else, the last %s)",
	      other, other ? strerror(other_err) : "-");
	pt_rings_drain(rings, ncpu);
}

static volatile int stop;

static void *caller(void *arg __attribute__((unused)))
{
	static const __u32 one[NF] = { 1, 1, 1, 1, 1, 1, 1, 1 };

	while (!stop)
		call_funcs(one, ARG);
	return NULL;
}

/* Close entry and return links while another thread calls them. */
static void test_detach_load(void)
{
	pthread_t th;
	int i, ok = 0, fd;

	stop = 0;
	if (pthread_create(&th, NULL, caller, NULL))
		pt_fatal("pthread_create");
	for (i = 0; i < 20; i++) {
		struct pea_fprobe_attr a = fp_attr(i & 1 ? PEA_FPROBE_F_RETURN :
						   0, ID_ENTRY);

		fd = fp_attach(&a);
		if (fd < 0)
			continue;
		usleep(2000);
		pt_rings_drain(rings, ncpu);
		close(fd);
		ok++;
	}
	stop = 1;
	pthread_join(th, NULL);
	PT_EQ(ok, 20, "detach under load: 20 links attached and closed");
	pt_rings_drain(rings, ncpu);
}

static void test_absent(void)
{
	struct pea_fprobe_attr a = fp_attr(0, ID_ENTRY);
	struct pea_fprobe_attr b = fp_attr(0, 0);

	PT_EQ(fp_errno(&a), -EOPNOTSUPP,
	      "no fprobe in this kernel: EOPNOTSUPP");
	b.flags = ~0U;
	PT_EQ(fp_errno(&b), -EOPNOTSUPP,
	      "no fprobe in this kernel: EOPNOTSUPP before the attr");
}

int main(void)
{
	ncpu = pt_setup(NCPU_MAX);
	ncpu = pt_cpu_map("fprobe", 16, &map_fd, ev_fd, rings);
	find_names();
	PT_EQ(nnames, NF, "kallsyms: %d functions match pea_st_fp_*", NF);
	if (nnames != NF)
		return pt_done();
	if (!pt_kernel_has_fprobe()) {
		pt_diag("kernel without fprobe: EOPNOTSUPP expected");
		test_absent();
		return pt_done();
	}
	test_entry();
	test_versus_kprobes();
	test_return();
	test_fetch_pred(0, "entry");
	test_fetch_pred(PEA_FPROBE_F_RETURN, "return");
	test_errnos();
	test_missed();
	test_detach_load();
	test_skipped_exits();
	test_retired_elsewhere();
	test_module_reload();	/* last: pt_st()'s fd is gone */
	test_attach_unload_race();	/* after it: no fd on the module */
	return pt_done();
}
