// SPDX-License-Identifier: GPL-2.0
/*
 * In-kernel aggregation tables (PEA_LINK_IOC_AGG_CREATE, _READ): a
 * kprobe and a kretprobe on the test module's pea_st_kstack_target(i),
 * called N times in a row from task, hardirq (a hard irq_work) and NMI
 * context on every CPU, into a map whose one-page rings lose most
 * records: the table's count, sum, min, max and log2 / linear buckets are
 * the exact figures of i = 0 .. N-1 all the same, and hits == the sum of
 * the buckets; a tracepoint field (raw_syscalls:sys_exit's ret of
 * getppid()); keys that do not fit counted in dropped exactly;
 * read-and-clear while writers run loses nothing (the intervals add up
 * to the calls made); PEA_AGG_F_NO_RECORDS; the memory charged and given
 * back; every bad argument's errno.
 */
#include <stddef.h>
#include <sys/mman.h>
#include "pea_test.h"
#include "pt_perm.h"
#include "pt_quota.h"
#include "pt_agg.h"

#define NCPU_MAX	64
#define N		2000
#define TRACEFS		"/sys/kernel/tracing/events/"

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];

enum ctx { CTX_TASK, CTX_HARDIRQ, CTX_NMI, CTX_NR };
static const char *const ctx_name[CTX_NR] = { "task", "hardirq", "NMI" };

/* ---- helpers ---- */

static int probe(const char *sym, __u32 flags)
{
	struct pea_probe_attr a = pt_probe_attr(sym, flags);
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);

	if (fd < 0)
		pt_fatal("attach kprobe");
	return fd;
}

static __u64 bucket_sum(const struct pt_agg_merged *m, __u32 nb)
{
	__u64 s = 0;
	__u32 b;

	for (b = 0; b < nb; b++)
		s += m->buckets[b];
	return s;
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

/* ---- exact counts from every context, while the ring loses records ---- */

static void test_contexts(void)
{
	struct pea_agg_attr a = pt_agg_attr(4, PEA_AGG_KEY_CPU, PEA_AGG_VAL_ARG,
					    PEA_AGG_HIST_LOG2);
	struct pea_link_info info;
	struct pt_agg_table t;
	__u64 want[PEA_AGG_LOG2_BUCKETS];
	int link, cpu, ctx, i, good;

	memset(want, 0, sizeof(want));
	for (i = 0; i < N; i++)
		want[pt_log2_bucket(i)]++;
	link = probe("pea_st_kstack_target", 0);
	PT_EQ(pt_agg_create(link, &a), 0,
	      "kprobe: a table keyed by cpu of arg0, log2 histogram");
	PT_EQ(pt_agg_read(link, true, &t), 0, "read-and-clear of a new table");
	PT_EQ(t.nr, 0, "a new table is empty");
	PT_EQ(t.nr_buckets, PEA_AGG_LOG2_BUCKETS, "65 log2 buckets");
	for (cpu = 0; cpu < ncpu; cpu++) {
		pt_pin(cpu);
		for (ctx = 0; ctx < CTX_NR; ctx++) {
			calls(ctx, N);
			if (pt_agg_read(link, true, &t) || t.nr != 1) {
				PT_OK(0, "CPU %d %s: one entry (%d)", cpu,
				      ctx_name[ctx], t.nr);
				continue;
			}
			good = !memcmp(t.e[0].buckets, want, sizeof(want));
			PT_OK(t.e[0].key[0] == (__u64)cpu && t.hits == N &&
			      t.dropped == 0 && t.errors == 0 &&
			      t.e[0].count == N &&
			      bucket_sum(&t.e[0], t.nr_buckets) == N &&
			      t.e[0].sum == (__s64)N * (N - 1) / 2 &&
			      t.e[0].min == 0 && t.e[0].max == N - 1 && good,
			      "CPU %d %s: %d hits, key cpu %llu, count %llu == sum of buckets %llu, sum %lld min %lld max %lld, every bucket exact: %s",
			      cpu, ctx_name[ctx], N,
			      (unsigned long long)t.e[0].key[0],
			      (unsigned long long)t.e[0].count,
			      (unsigned long long)bucket_sum(&t.e[0],
							     t.nr_buckets),
			      (long long)t.e[0].sum, (long long)t.e[0].min,
			      (long long)t.e[0].max, good ? "yes" : "no");
		}
	}
	PT_EQ(ioctl(link, PEA_LINK_IOC_INFO, &info), 0, "link info");
	PT_OK(info.dropped > 0 && info.written + info.dropped == info.hits,
	      "meanwhile the one-page rings lost records: %llu hits, %llu written, %llu dropped",
	      (unsigned long long)info.hits,
	      (unsigned long long)info.written,
	      (unsigned long long)info.dropped);
	PT_EQ(info.errors, 0,
	      "a drop of a full ring is not a probe error: errors 0");
	{
		/*
		 * A binary built before dropped: the old size's number, with
		 * errors as they were then, the drops included (review F2).
		 */
		unsigned char old[sizeof(info) + 8];
		struct pea_link_info then = info;

		then.errors += info.dropped;
		memset(old, 0xa5, sizeof(old));
		PT_EQ(ioctl(link, _IOC(_IOC_READ, PEA_IOC_MAGIC, 0x30,
				       PEA_LINK_INFO_SIZE_VER0), old), 0,
		      "link info of the old size (%d bytes) succeeds",
		      PEA_LINK_INFO_SIZE_VER0);
		PT_OK(!memcmp(old, &then, offsetof(struct pea_link_info, dropped)) &&
		      offsetof(struct pea_link_info, dropped) == PEA_LINK_INFO_SIZE_VER0 &&
		      old[PEA_LINK_INFO_SIZE_VER0] == 0xa5,
		      "link info of the old size: the same fields, errors %llu = the drops as then, nothing past them",
		      (unsigned long long)then.errors);
	}
	close(link);
	pt_rings_drain(rings, ncpu);
}

/* kretprobe: the return value in linear buckets, the latency in log2. */
static void test_kretprobe(void)
{
	struct pea_agg_attr a = pt_agg_attr(4, PEA_AGG_KEY_NONE, PEA_AGG_VAL_RET,
					    PEA_AGG_HIST_LINEAR);
	struct pea_agg_attr l = pt_agg_attr(4, PEA_AGG_KEY_PROBE,
					    PEA_AGG_VAL_LATENCY,
					 PEA_AGG_HIST_LOG2);
	int ret_link, lat_link, ctx, b, ok;
	struct pea_link_info info;
	struct pt_agg_table t;

	/* Buckets: < 100, [100, 100+300), ... (7 of 300: 100..2200), >= 2200. */
	a.lin_min = 100;
	a.lin_max = 2050;	/* ceil(1950 / 300) = 7 buckets */
	a.lin_step = 300;
	ret_link = probe("pea_st_kstack_target", PEA_PROBE_F_RETPROBE);
	lat_link = probe("pea_st_kstack_target", PEA_PROBE_F_RETPROBE);
	PT_EQ(pt_agg_create(ret_link, &a), 0,
	      "kretprobe: a table of ret, linear 100..2050 by 300");
	PT_EQ(pt_agg_create(lat_link, &l), 0,
	      "kretprobe: a table of the latency keyed by probe, log2");
	PT_EQ(ioctl(lat_link, PEA_LINK_IOC_INFO, &info), 0, "link info");
	pt_pin(ncpu - 1);
	for (ctx = 0; ctx < CTX_NMI; ctx++) {
		calls(ctx, N);
		if (pt_agg_read(ret_link, true, &t) || t.nr != 1) {
			PT_OK(0, "%s: ret table has one entry (%d)",
			      ctx_name[ctx], t.nr);
			continue;
		}
		ok = t.nr_buckets == 9 && t.e[0].buckets[0] == 100 &&
		     t.e[0].buckets[8] == 0;
		for (b = 1; b <= 6; b++)
			ok = ok && t.e[0].buckets[b] == 300;
		/* 1900 .. 1999: the 7th bucket, [1900, 2200). */
		ok = ok && t.e[0].buckets[7] == 100;
		PT_OK(ok && t.hits == N && t.e[0].count == N &&
		      bucket_sum(&t.e[0], t.nr_buckets) == N &&
		      t.e[0].sum == (__s64)N * (N - 1) / 2 &&
		      t.e[0].min == 0 && t.e[0].max == N - 1,
		      "%s: ret linear buckets 100, 300 x 6, 100, 0 exact, count %llu, sum %lld",
		      ctx_name[ctx], (unsigned long long)t.e[0].count,
		      (long long)t.e[0].sum);
		if (pt_agg_read(lat_link, true, &t) || t.nr != 1) {
			PT_OK(0, "%s: latency table has one entry (%d)",
			      ctx_name[ctx], t.nr);
			continue;
		}
		PT_OK(t.e[0].key[0] == info.id && t.e[0].count == N &&
		      bucket_sum(&t.e[0], t.nr_buckets) == N &&
		      t.e[0].buckets[0] == 0 && t.e[0].min >= 0 &&
		      t.e[0].max >= t.e[0].min,
		      "%s: latency: key the link id, %llu calls == sum of buckets, min %lld ns, max %lld ns",
		      ctx_name[ctx], (unsigned long long)t.e[0].count,
		      (long long)t.e[0].min, (long long)t.e[0].max);
	}
	close(ret_link);
	close(lat_link);
	pt_rings_drain(rings, ncpu);
}

/* ---- a tracepoint's field ---- */

static int tp_field_offset(const char *event, const char *decl)
{
	static char buf[8192];
	char path[256], pat[128];
	char *p;
	int off;

	snprintf(path, sizeof(path), TRACEFS "%s/format", event);
	if (pt_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, decl);
	snprintf(pat, sizeof(pat), "%s\toffset:%%d;", decl);
	if (!p || sscanf(p, pat, &off) != 1)
		return -1;
	return off;
}

static void test_tracepoint(void)
{
	int id_off = tp_field_offset("raw_syscalls/sys_exit", "long id;");
	int ret_off = tp_field_offset("raw_syscalls/sys_exit", "long ret;");
	struct pea_agg_attr a = pt_agg_attr(8, PEA_AGG_KEY_PID, PEA_AGG_VAL_FIELD,
					    PEA_AGG_HIST_LOG2);
	struct pea_tp_attr t;
	char buf[32];
	struct pt_agg_table tb;
	int link, i, id;

	if (pt_read_file(TRACEFS "raw_syscalls/sys_exit/id", buf,
			 sizeof(buf)) < 0 || id_off < 0 || ret_off < 0) {
		PT_OK(0, "raw_syscalls:sys_exit id and format");
		return;
	}
	id = atoi(buf);
	memset(&t, 0, sizeof(t));
	t.size = sizeof(t);
	t.flags = PEA_TP_F_CLOEXEC;
	t.event_id = id;
	t.filter_cpu = -1;
	t.filter_tgid = getpid();
	strcpy(t.name, "raw_syscalls:sys_exit");
	t.nr_preds = 1;
	t.preds[0].offset = id_off;
	t.preds[0].size = 8;
	t.preds[0].kind = PEA_TP_FIELD_SINT;
	t.preds[0].op = PEA_TP_OP_EQ;
	t.preds[0].value = SYS_getppid;
	link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &t);
	if (link < 0)
		pt_fatal("attach raw_syscalls:sys_exit");
	a.val_offset = ret_off;
	a.val_size = 8;
	a.flags = PEA_AGG_F_SIGNED | PEA_AGG_F_NO_RECORDS;
	PT_EQ(pt_agg_create(link, &a), 0,
	      "tracepoint: a table of the field ret (offset %d), keyed by pid, no records",
	      ret_off);
	for (i = 0; i < N; i++)
		syscall(SYS_getppid);
	PT_EQ(pt_agg_read(link, false, &tb), 0, "read");
	PT_OK(tb.nr == 1 && tb.e[0].key[0] == (__u64)getpid() &&
	      tb.e[0].count == N && tb.hits == N &&
	      tb.e[0].sum == (__s64)N * getppid() &&
	      tb.e[0].min == getppid() && tb.e[0].max == getppid() &&
	      tb.e[0].buckets[pt_log2_bucket(getppid())] == N,
	      "%d getppid() exits: key pid %d, count %llu, sum == %d x ppid %d, one bucket",
	      N, getpid(), (unsigned long long)tb.e[0].count, N, getppid());
	{
		struct pea_link_info info;

		PT_EQ(ioctl(link, PEA_LINK_IOC_INFO, &info), 0, "link info");
		PT_EQ(info.written, 0, "PEA_AGG_F_NO_RECORDS: no record written");
	}
	close(link);
}

/* ---- keys that do not fit ---- */

static void *tid_thread(void *arg)
{
	calls(CTX_TASK, 50);
	return arg;
}

static void test_overflow(void)
{
	struct pea_agg_attr a = pt_agg_attr(3, PEA_AGG_KEY_TID, PEA_AGG_VAL_NONE,
					    PEA_AGG_HIST_NONE);
	struct pt_agg_table t;
	pthread_t th;
	int link, i, ok = 1;

	link = probe("pea_st_kstack_target", 0);
	a.flags = PEA_AGG_F_NO_RECORDS;
	PT_EQ(pt_agg_create(link, &a), 0, "a table keyed by tid, max_keys 3");
	pt_pin(0);
	for (i = 0; i < 7; i++) {
		if (pthread_create(&th, NULL, tid_thread, NULL))
			pt_fatal("pthread_create");
		pthread_join(th, NULL);
	}
	PT_EQ(pt_agg_read(link, false, &t), 0, "read");
	for (i = 0; i < t.nr; i++)
		ok = ok && t.e[i].count == 50;
	PT_OK(t.nr == 3 && ok && t.dropped == 4 * 50 && t.hits == 7 * 50,
	      "7 threads x 50 calls on one CPU: 3 keys of 50, dropped %llu == 200, hits %llu == 350",
	      (unsigned long long)t.dropped, (unsigned long long)t.hits);
	PT_EQ(pt_agg_read(link, true, &t), 0, "read-and-clear");
	PT_OK(t.nr == 3 && t.dropped == 200, "read-and-clear returns the same");
	PT_EQ(pt_agg_read(link, false, &t), 0, "read");
	PT_OK(t.nr == 0 && t.hits == 0 && t.dropped == 0,
	      "the table is empty after read-and-clear");
	for (i = 0; i < 2; i++) {
		if (pthread_create(&th, NULL, tid_thread, NULL))
			pt_fatal("pthread_create");
		pthread_join(th, NULL);
	}
	PT_EQ(pt_agg_read(link, false, &t), 0, "read");
	PT_OK(t.nr == 2 && t.dropped == 0 && t.hits == 100,
	      "cleared keys are free again: 2 new threads, 2 keys, none dropped");
	close(link);
}

/* ---- read-and-clear under running writers ---- */

static volatile int writers_stop;
static __u64 writer_calls;

static void *writer(void *arg)
{
	int cpu = (int)(long)arg;
	__u64 n = 0;
	int ctx = 0;

	pt_pin(cpu);
	while (!writers_stop) {
		calls(ctx, 500);
		n += 500;
		ctx = (ctx + 1) % CTX_NR;
	}
	__atomic_fetch_add(&writer_calls, n, __ATOMIC_RELAXED);
	return NULL;
}

static void test_clear_under_writers(void)
{
	struct pea_agg_attr a = pt_agg_attr(16, PEA_AGG_KEY_CPU,
					    PEA_AGG_VAL_ARG, PEA_AGG_HIST_LOG2);
	__u64 count = 0, hits = 0, buckets = 0;
	__s64 sum = 0;
	int link, i, reads = 0, nonempty = 0, bad = 0;
	pthread_t th;
	struct pt_agg_table t;

	link = probe("pea_st_kstack_target", 0);
	a.flags = PEA_AGG_F_NO_RECORDS;
	PT_EQ(pt_agg_create(link, &a), 0, "a table for read-and-clear");
	if (pthread_create(&th, NULL, writer, (void *)(long)(ncpu - 1)))
		pt_fatal("pthread_create");
	pt_pin(0);
	for (i = 0; i < 40; i++) {
		usleep(20000);
		if (pt_agg_read(link, true, &t)) {
			bad++;
			continue;
		}
		reads++;
		hits += t.hits;
		if (t.nr)
			nonempty++;
		if (t.nr > 1 || t.dropped || t.errors)
			bad++;
		if (t.nr) {
			count += t.e[0].count;
			sum += t.e[0].sum;
			buckets += bucket_sum(&t.e[0], t.nr_buckets);
			if (t.e[0].count != t.hits)
				bad++;
		}
	}
	writers_stop = 1;
	pthread_join(th, NULL);
	if (!pt_agg_read(link, true, &t) && t.nr) {
		count += t.e[0].count;
		sum += t.e[0].sum;
		hits += t.hits;
		buckets += bucket_sum(&t.e[0], t.nr_buckets);
	}
	pt_diag("%d reads-and-clears, %d non-empty, %llu calls", reads,
		nonempty, (unsigned long long)writer_calls);
	PT_OK(nonempty >= 2 && !bad,
	      "read-and-clear while a writer runs: %d intervals with hits, each exact (count == hits, no drop)",
	      nonempty);
	PT_EQ(count, writer_calls,
	      "the intervals' counts add up to the calls made (%llu)",
	      (unsigned long long)writer_calls);
	PT_EQ(hits, writer_calls, "and their hits");
	PT_EQ(buckets, writer_calls, "and their buckets");
	PT_EQ(sum, (__s64)(writer_calls / 500) * 500 * 499 / 2,
	      "and their sums");
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
		pt_fatal("cpu/possible");
	if (sscanf(buf, "%d-%d", &lo, &hi) == 2)
		return hi - lo + 1;
	return 1;
}

static void test_memory(void)
{
	struct pea_agg_attr a = pt_agg_attr(100, PEA_AGG_KEY_PID, PEA_AGG_VAL_ARG,
					    PEA_AGG_HIST_LINEAR);
	long l0, b0, l1, b1, l2, b2, want;
	int link;

	/* 256 slots of 72 + 8 * 1026 bytes, two generations per CPU. */
	a.lin_max = 1024;
	a.lin_step = 1;
	/* Past KMALLOC_MAX_SIZE (4 MiB): vmalloc, whole pages. */
	want = possible_cpus() *
	       ((2L * (32 + 256L * (72 + 8 * 1026)) + 4095) & ~4095L);
	link = probe("pea_st_kstack_target", 0);
	pt_quota(-1, &l0, &b0);
	PT_EQ(pt_agg_create(link, &a), 0, "a table of 100 keys, 1026 buckets");
	pt_quota(-1, &l1, &b1);
	PT_OK(b1 - b0 >= want && b1 - b0 < want + 4096,
	      "charged like the link's memory: %ld bytes (slots: %ld)",
	      b1 - b0, want);
	a.max_keys = PEA_AGG_MAX_KEYS;
	close(link);
	pt_quota(-1, &l2, &b2);
	PT_OK(b2 < b1 && b1 - b2 >= want,
	      "closing the link gives it back (%ld -> %ld)", b1, b2);
	link = probe("pea_st_kstack_target", 0);
	PT_EQ(pt_agg_create(link, &a), E2BIG,
	      "65536 keys of 1026 buckets: 2.2 GB per CPU, past one kvmalloc(): E2BIG");
	a.max_keys = 32768;
	PT_EQ(pt_agg_create(link, &a), ENOMEM,
	      "32768 keys of 1026 buckets: 1.1 GB per CPU, past max_probe_kb: ENOMEM");
	close(link);
}

/* ---- bad arguments ---- */

static void test_errors(void)
{
	struct pea_agg_attr a, ok = pt_agg_attr(4, PEA_AGG_KEY_CPU,
						PEA_AGG_VAL_ARG, PEA_AGG_HIST_LOG2);
	unsigned char big[sizeof(a) + 8];
	struct pea_agg_read r;
	struct pt_agg_table t;
	int kp, ret, tp_id_link;

	kp = probe("pea_st_kstack_target", 0);
	ret = probe("pea_st_kstack_target", PEA_PROBE_F_RETPROBE);
	PT_EQ(pt_agg_read(kp, false, &t), ENOENT, "read without a table: ENOENT");

#define BAD(field_stmt, want, what) do {				\
		a = ok;							\
		field_stmt;						\
		PT_EQ(pt_agg_create(kp, &a), want, what);			\
	} while (0)
	BAD(a.size = PEA_AGG_ATTR_SIZE_VER0 - 1, EINVAL, "size below VER0: EINVAL");
	BAD(a.size = 8192, EINVAL, "size past a page: EINVAL");
	BAD(a.flags = 1U << 7, EINVAL, "unknown flag: EINVAL");
	BAD(a.max_keys = 0, EINVAL, "max_keys 0: EINVAL");
	BAD(a.max_keys = PEA_AGG_MAX_KEYS + 1, EINVAL, "max_keys past 65536: EINVAL");
	BAD(a.keys[0] = 6, EINVAL, "unknown key: EINVAL");
	BAD(a.keys[1] = PEA_AGG_KEY_CPU, EINVAL, "a key part twice: EINVAL");
	BAD((a.keys[0] = 0, a.keys[1] = PEA_AGG_KEY_PID), EINVAL,
	    "a key part after the end: EINVAL");
	BAD((a.keys[0] = PEA_AGG_KEY_COMM, a.keys[1] = PEA_AGG_KEY_PID,
	     a.keys[2] = PEA_AGG_KEY_TID, a.keys[3] = PEA_AGG_KEY_CPU),
	    EINVAL, "a key of 5 words: EINVAL");
	BAD(a.value = 5, EINVAL, "unknown value: EINVAL");
	BAD(a.val_arg = 6, EINVAL, "arg 6: EINVAL");
	BAD((a.value = PEA_AGG_VAL_NONE, a.hist = 0, a.val_arg = 1), EINVAL,
	    "val_arg without VAL_ARG: EINVAL");
	BAD(a.value = PEA_AGG_VAL_LATENCY, EINVAL, "latency on a kprobe: EINVAL");
	BAD(a.value = PEA_AGG_VAL_RET, EINVAL, "ret on a kprobe: EINVAL");
	BAD((a.value = PEA_AGG_VAL_FIELD, a.val_size = 8), EINVAL,
	    "a tracepoint field on a kprobe: EINVAL");
	BAD((a.value = PEA_AGG_VAL_NONE, a.hist = 0, a.flags = PEA_AGG_F_SIGNED),
	    EINVAL, "PEA_AGG_F_SIGNED without an argument or a field: EINVAL");
	BAD(a.value = PEA_AGG_VAL_NONE, EINVAL, "a histogram without a value: EINVAL");
	BAD(a.hist = 3, EINVAL, "unknown histogram: EINVAL");
	BAD(a.lin_step = 1, EINVAL, "linear bounds on a log2 histogram: EINVAL");
	BAD((a.hist = PEA_AGG_HIST_LINEAR, a.lin_min = 5, a.lin_max = 5,
	     a.lin_step = 1), EINVAL, "linear max == min: EINVAL");
	BAD((a.hist = PEA_AGG_HIST_LINEAR, a.lin_max = 5), EINVAL,
	    "linear step 0: EINVAL");
	BAD((a.hist = PEA_AGG_HIST_LINEAR, a.lin_max = PEA_AGG_LINEAR_MAX + 1,
	     a.lin_step = 1), EINVAL, "1025 linear buckets: EINVAL");
	BAD((a.hist = PEA_AGG_HIST_LINEAR, a.lin_min = INT64_MIN,
	     a.lin_max = INT64_MAX, a.lin_step = UINT64_MAX), 0,
	    "linear over all of s64 in one bucket: taken");
	close(kp);
	kp = probe("pea_st_kstack_target", 0);
	BAD(a.reserved = 1, EINVAL, "reserved: EINVAL");
	memset(big, 0, sizeof(big));
	a = ok;
	a.size = sizeof(big);
	memcpy(big, &a, sizeof(a));
	big[sizeof(a) + 3] = 1;
	PT_EQ(pt_ioctl_errno(kp, PEA_LINK_IOC_AGG_CREATE, big), E2BIG,
	      "a larger attr with a non-zero tail: E2BIG");
	big[sizeof(a) + 3] = 0;
	PT_EQ(pt_ioctl_errno(kp, PEA_LINK_IOC_AGG_CREATE, big), 0,
	      "a larger attr with a zero tail: taken");
	a = ok;
	PT_EQ(pt_agg_create(kp, &a), EEXIST, "a second table: EEXIST");
	PT_EQ(pt_ioctl_errno(kp, PEA_LINK_IOC_AGG_CREATE, NULL), EFAULT,
	      "attr NULL: EFAULT");

	a = pt_agg_attr(4, 0, PEA_AGG_VAL_LATENCY, PEA_AGG_HIST_LOG2);
	PT_EQ(pt_agg_create(ret, &a), 0, "latency on a kretprobe: taken");

	/* A tracepoint takes a field, not an argument. */
	{
		struct pea_tp_attr tp;
		char buf[32];

		if (pt_read_file(TRACEFS "raw_syscalls/sys_exit/id", buf,
				 sizeof(buf)) < 0)
			pt_fatal("sys_exit id");
		memset(&tp, 0, sizeof(tp));
		tp.size = sizeof(tp);
		tp.flags = PEA_TP_F_CLOEXEC;
		tp.event_id = atoi(buf);
		tp.filter_cpu = -1;
		tp.filter_tgid = getpid();
		strcpy(tp.name, "raw_syscalls:sys_exit");
		tp_id_link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &tp);
		if (tp_id_link < 0)
			pt_fatal("attach tracepoint");
		a = ok;
		PT_EQ(pt_agg_create(tp_id_link, &a), EINVAL,
		      "an argument on a tracepoint: EINVAL");
		a = pt_agg_attr(4, 0, PEA_AGG_VAL_FIELD, 0);
		a.val_size = 3;
		PT_EQ(pt_agg_create(tp_id_link, &a), EINVAL,
		      "a field of 3 bytes: EINVAL");
		a.val_size = 8;
		a.val_offset = 4000;
		PT_EQ(pt_agg_create(tp_id_link, &a), 0,
		      "a field past the entry: taken");
		syscall(SYS_getppid);
		PT_EQ(pt_agg_read(tp_id_link, false, &t), 0, "read");
		PT_OK(t.errors >= 1 && t.hits == t.errors && t.nr == 0,
		      "hits whose field is past the entry count as errors (%llu of %llu)",
		      (unsigned long long)t.errors,
		      (unsigned long long)t.hits);
		close(tp_id_link);
	}

	/* Reads. */
	pt_pin(0);
	calls(CTX_TASK, 10);
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.buf = (uintptr_t)pt_agg_rbuf;
	r.buf_len = sizeof(pt_agg_rbuf);
	r.flags = 2;
	PT_EQ(pt_ioctl_errno(kp, PEA_LINK_IOC_AGG_READ, &r), EINVAL,
	      "read flag unknown: EINVAL");
	r.flags = 0;
	r.reserved = 1;
	PT_EQ(pt_ioctl_errno(kp, PEA_LINK_IOC_AGG_READ, &r), EINVAL,
	      "read reserved: EINVAL");
	r.reserved = 0;
	r.size = 8;
	PT_EQ(pt_ioctl_errno(kp, PEA_LINK_IOC_AGG_READ, &r), EINVAL,
	      "read size below VER0: EINVAL");
	r.size = sizeof(r);
	r.flags = PEA_AGG_READ_F_CLEAR;
	r.buf_len = 16;
	PT_EQ(pt_ioctl_errno(kp, PEA_LINK_IOC_AGG_READ, &r), ENOSPC,
	      "read-and-clear into 16 bytes: ENOSPC");
	PT_OK(r.nr_entries == 1 && r.entry_size == 72 + 8 * PEA_AGG_LOG2_BUCKETS,
	      "ENOSPC says 1 entry of %u bytes", r.entry_size);
	r.buf_len = sizeof(pt_agg_rbuf);
	r.buf = 8;
	PT_EQ(pt_ioctl_errno(kp, PEA_LINK_IOC_AGG_READ, &r), EFAULT,
	      "read-and-clear into a bad pointer: EFAULT");
	r.flags = 0;
	PT_EQ(pt_ioctl_errno(kp, PEA_LINK_IOC_AGG_READ, &r), EFAULT,
	      "read into a bad pointer: EFAULT");
	calls(CTX_TASK, 5);
	PT_EQ(pt_agg_read(kp, true, &t), 0, "read-and-clear");
	PT_OK(t.nr == 1 && t.e[0].count == 10 && t.hits == 10,
	      "the next read-and-clear returns what the failed ones did not clear: the 10 calls before (%llu)",
	      (unsigned long long)t.e[0].count);
	PT_EQ(pt_agg_read(kp, true, &t), 0, "read-and-clear");
	PT_OK(t.nr == 1 && t.e[0].count == 5 && t.hits == 5,
	      "then the 5 calls made since (%llu)",
	      (unsigned long long)t.e[0].count);
	PT_EQ(pt_ioctl_errno(kp, PEA_LINK_IOC_AGG_READ, NULL), EFAULT,
	      "read NULL: EFAULT");
	PT_EQ(pt_ioctl_errno(kp, _IO(PEA_IOC_MAGIC, 0x3f), NULL), ENOTTY,
	      "an unknown link ioctl: ENOTTY");
	close(kp);
	close(ret);
#undef BAD
}


/* ---- what the hostile review found ---- */

/*
 * F1: a read-and-clear whose request cannot be written back (EFAULT)
 * must clear nothing: the next one returns the hits.
 */
static void test_efault_after_clear(void)
{
	struct pea_agg_attr a = pt_agg_attr(4, PEA_AGG_KEY_NONE, PEA_AGG_VAL_NONE,
					    PEA_AGG_HIST_NONE);
	long pg = pt_page_size();
	struct pea_agg_read *r;
	struct pt_agg_table t;
	int link;

	link = probe("pea_st_kstack_target", 0);
	a.flags = PEA_AGG_F_NO_RECORDS;
	PT_EQ(pt_agg_create(link, &a), 0, "F1: a table");
	pt_pin(0);
	calls(CTX_TASK, 100);
	r = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (r == MAP_FAILED)
		pt_fatal("mmap");
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->flags = PEA_AGG_READ_F_CLEAR;
	r->buf = (uintptr_t)pt_agg_rbuf;
	r->buf_len = sizeof(pt_agg_rbuf);
	mprotect(r, pg, PROT_READ);
	PT_EQ(pt_ioctl_errno(link, PEA_LINK_IOC_AGG_READ, r), EFAULT,
	      "F1: read-and-clear whose request is read-only: EFAULT");
	munmap(r, pg);
	PT_EQ(pt_agg_read(link, true, &t), 0, "F1: read-and-clear again");
	PT_OK(t.hits == 100 && t.nr == 1 && t.e[0].count == 100,
	      "F1: the 100 hits are in the next read-and-clear (hits %llu)",
	      (unsigned long long)t.hits);
	close(link);
}

/*
 * F2: a link whose table takes its hits without records attempts no
 * record: INFO's hits == written + errors + filtered.
 */
static void test_no_records_info(void)
{
	struct pea_agg_attr a = pt_agg_attr(4, PEA_AGG_KEY_NONE, PEA_AGG_VAL_NONE,
					    PEA_AGG_HIST_NONE);
	struct pea_link_info li;
	struct pt_agg_table t;
	int link;

	link = probe("pea_st_kstack_target", 0);
	a.flags = PEA_AGG_F_NO_RECORDS;
	PT_EQ(pt_agg_create(link, &a), 0, "F2: a table, no records");
	pt_pin(0);
	calls(CTX_TASK, 100);
	PT_EQ(ioctl(link, PEA_LINK_IOC_INFO, &li), 0, "F2: link info");
	PT_OK(li.hits == li.written + li.errors + li.dropped + li.filtered,
	      "F2: INFO hits %llu == written %llu + errors %llu + dropped %llu + filtered %llu",
	      (unsigned long long)li.hits, (unsigned long long)li.written,
	      (unsigned long long)li.errors, (unsigned long long)li.dropped,
	      (unsigned long long)li.filtered);
	PT_EQ(pt_agg_read(link, false, &t), 0, "F2: read");
	PT_EQ(t.hits, 100, "F2: the table has the 100 hits");
	close(link);
}

/* F3: the charge is what the allocator takes (kmalloc rounds up). */
static void test_charge_rounded(void)
{
	struct pea_agg_attr a = pt_agg_attr(4096, PEA_AGG_KEY_PID, PEA_AGG_VAL_ARG,
					    PEA_AGG_HIST_LINEAR);
	long l0, b0, l1, b1, want;
	int link;

	/* slot 72 + 8 x 8 = 136 B, 8192 slots: 2 x 1,114,144 B per CPU */
	a.lin_max = 6;
	a.lin_step = 1;
	want = 4194304L * possible_cpus();	/* kmalloc: 4 MiB each */
	link = probe("pea_st_kstack_target", 0);
	pt_quota(-1, &l0, &b0);
	PT_EQ(pt_agg_create(link, &a), 0, "F3: 4096 keys, 8 buckets");
	pt_quota(-1, &l1, &b1);
	PT_OK(b1 - b0 >= want && b1 - b0 < want + 4096,
	      "F3: charged %ld bytes for %ld allocated (4 MiB per CPU)",
	      b1 - b0, want);
	close(link);
}

static int block_pipe[2];

static void *blocked_reader(void *arg)
{
	char c;

	if (read(block_pipe[0], &c, 1) != 1)
		return arg;
	return NULL;
}

/*
 * F5: a kretprobe closed with a call in flight is retired; its table is
 * not the kernel's and goes at once, with its charge.
 */
static void test_retired_table(void)
{
	struct pea_agg_attr a = pt_agg_attr(100, PEA_AGG_KEY_PID, PEA_AGG_VAL_ARG,
					    PEA_AGG_HIST_LINEAR);
	long l0, b0, l1, b1, table;
	pthread_t th;
	int link;

	a.lin_max = 1024;
	a.lin_step = 1;
	table = 2L * possible_cpus() * (32 + 256L * (72 + 8 * 1026));
	if (pipe(block_pipe))
		pt_fatal("pipe");
	link = probe("pipe_read", PEA_PROBE_F_RETPROBE);
	if (pthread_create(&th, NULL, blocked_reader, NULL))
		pt_fatal("pthread_create");
	usleep(200000);		/* in pipe_read(), asleep */
	PT_EQ(pt_agg_create(link, &a), 0, "F5: a 17 MB table on kretprobe:pipe_read");
	pt_quota(-1, &l0, &b0);
	close(link);		/* retired: a call is in flight */
	pt_quota(-1, &l1, &b1);
	PT_OK(b0 - b1 >= table,
	      "F5: closing the retired link gives its table's %ld bytes back at once (%ld -> %ld)",
	      table, b0, b1);
	if (write(block_pipe[1], "x", 1) != 1)
		pt_fatal("write");
	pthread_join(th, NULL);
	close(block_pipe[0]);
	close(block_pipe[1]);
}

/*
 * F6: unsigned 64-bit values past 2^63 (a kernel pointer argument) go to
 * the top log2 bucket, and min and max compare them unsigned.
 */
static void test_unsigned(void)
{
	struct pea_agg_attr a = pt_agg_attr(4, PEA_AGG_KEY_NONE,
					    PEA_AGG_VAL_ARG, PEA_AGG_HIST_LOG2);
	struct pt_agg_table t;
	int link, nb;

	a.val_arg = 1;	/* pea_st_kstack_nmi(type, regs): regs */
	link = probe("pea_st_kstack_nmi", 0);
	PT_EQ(pt_agg_create(link, &a), 0, "F6: a table of a pointer argument");
	pt_pin(0);
	calls(CTX_NMI, 1);
	PT_EQ(pt_agg_read(link, false, &t), 0, "F6: read");
	nb = (int)t.nr_buckets;
	PT_OK(t.nr >= 1 && nb == 66 && t.e[0].buckets[nb - 1] == t.e[0].count &&
	      t.e[0].buckets[0] == 0 && (__u64)t.e[0].min >= (1ULL << 63) &&
	      t.e[0].min <= t.e[0].max,
	      "F6: %llu hit(s) of regs %llx in the top bucket of %d ([2^63, 2^64)), none negative",
	      t.nr ? (unsigned long long)t.e[0].count : 0,
	      t.nr ? (unsigned long long)t.e[0].min : 0, nb);
	close(link);
}

int main(void)
{
	ncpu = pt_setup(NCPU_MAX);
	ncpu = pt_cpu_map("agg", 1, &map_fd, ev_fd, rings);
	test_contexts();
	test_kretprobe();
	test_tracepoint();
	test_overflow();
	test_clear_under_writers();
	test_memory();
	test_errors();
	test_efault_after_clear();
	test_no_records_info();
	test_charge_rounded();
	test_retired_table();
	test_unsigned();
	return pt_done();
}
