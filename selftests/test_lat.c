// SPDX-License-Identifier: GPL-2.0
/*
 * Latency between two probes (PEA_LINK_IOC_LAT_CREATE, _INFO and
 * PEA_AGG_VAL_PAIRED): kprobes on the test module's pea_st_lat_begin(key)
 * and pea_st_lat_end(key), which PEA_ST_IOC_LAT calls a known sleep apart:
 * paired by the key argument every elapsed time lands in the linear
 * bucket that starts at its sleep, exactly (the buckets are wide: a
 * busy host stretches sleeps); paired by the thread, the last begin of a round
 * replaces the ones before and the ends after the first are unpaired,
 * exactly; a full pairing table counts every start it cannot keep; ends
 * without starts are unpaired; closing the start link leaves its ends
 * unpaired; a syscall's enter -> exit (raw_syscalls, paired by thread,
 * in the log2 bucket of 140 ms); runqlat's sched_wakeup's pid ->
 * sched_switch's next_pid (paired by field); off-CPU time (sched_switch
 * paired with itself, keyed by pid and next_comm); the memory charged
 * and given back; every bad argument's errno.
 */
#include <stddef.h>
#include <pthread.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sched.h>
#include <linux/futex.h>
#include "pea_test.h"
#include "pt_agg.h"
#include "pt_exit.h"
#include "pt_perm.h"
#include "pt_quota.h"

#define NCPU_MAX	64
#define TRACEFS		"/sys/kernel/tracing/events/"
#define MS		1000000ULL

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];

/* ---- helpers ---- */

static int probe(const char *sym)
{
	struct pea_probe_attr a = pt_probe_attr(sym, 0);
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);

	if (fd < 0)
		pt_fatal("attach kprobe");
	return fd;
}

static struct pea_lat_attr lat_attr(__u32 max_pending, __u32 kind)
{
	struct pea_lat_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_LAT_F_NO_RECORDS;
	a.max_pending = max_pending;
	a.key.kind = kind;
	return a;
}

static int lat_create(int link, struct pea_lat_attr *a)
{
	return pt_ioctl_errno(link, PEA_LINK_IOC_LAT_CREATE, a);
}

static struct pea_lat_info lat_info(int link)
{
	struct pea_lat_info i;

	memset(&i, 0xff, sizeof(i));
	if (ioctl(link, PEA_LINK_IOC_LAT_INFO, &i))
		pt_fatal("PEA_LINK_IOC_LAT_INFO");
	return i;
}

/* An end table: elapsed ns since the start of @start_fd, log2 buckets. */
static struct pea_agg_attr end_attr(int start_fd, __u32 kind)
{
	struct pea_agg_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_AGG_F_NO_RECORDS;
	a.max_keys = 4;
	a.value = PEA_AGG_VAL_PAIRED;
	a.hist = PEA_AGG_HIST_LOG2;
	a.pair_fd = start_fd;
	a.pair_key.kind = kind;
	return a;
}

static int agg_create(int link, struct pea_agg_attr *a)
{
	return pt_ioctl_errno(link, PEA_LINK_IOC_AGG_CREATE, a);
}

/* A keyless table's one entry, summed over CPUs. */
struct table {
	int nr;
	__u64 hits, dropped, errors, unpaired;
	__u64 count;
	__s64 sum, min, max;
	__u64 buckets[PEA_AGG_LOG2_BUCKETS];
};

static unsigned char rbuf[1 << 20];

static int agg_read(int link, bool clear, struct table *t)
{
	struct pea_agg_read r;
	__u32 i, b;
	int err;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.flags = clear ? PEA_AGG_READ_F_CLEAR : 0;
	r.buf = (uintptr_t)rbuf;
	r.buf_len = sizeof(rbuf);
	err = pt_ioctl_errno(link, PEA_LINK_IOC_AGG_READ, &r);
	memset(t, 0, sizeof(*t));
	t->min = INT64_MAX;
	if (err)
		return err;
	t->nr = r.nr_entries;
	t->hits = r.hits;
	t->dropped = r.dropped;
	t->errors = r.errors;
	t->unpaired = r.unpaired;
	for (i = 0; i < r.nr_entries; i++) {
		struct pea_agg_entry *e = (void *)(rbuf + i * r.entry_size);

		t->count += e->count;
		t->sum += e->sum;
		if (e->min < t->min)
			t->min = e->min;
		if (e->max > t->max)
			t->max = e->max;
		for (b = 0; b < r.nr_buckets && b < PEA_AGG_LOG2_BUCKETS; b++)
			t->buckets[b] += e->buckets[b];
	}
	return 0;
}

/* The count of every bucket but @b (which may be -1). */
static __u64 others(const struct table *t, int b)
{
	__u64 s = 0;
	int i;

	for (i = 0; i < PEA_AGG_LOG2_BUCKETS; i++)
		if (i != b)
			s += t->buckets[i];
	return s;
}

static void st_lat(__u64 key_base, __u32 nkeys, __u32 rounds,
		   __u32 delay_us, __u32 flags)
{
	struct pea_st_lat a = {
		.key_base = key_base, .nkeys = nkeys, .rounds = rounds,
		.delay_us = delay_us, .flags = flags,
	};

	if (ioctl(pt_st(), PEA_ST_IOC_LAT, &a))
		pt_fatal("PEA_ST_IOC_LAT");
}

#define BOTH	(PEA_ST_LAT_BEGIN | PEA_ST_LAT_END)

/* ---- paired by an argument: exact buckets ---- */

static void test_pair_arg(void)
{
	struct pea_lat_attr la = lat_attr(16, PEA_LAT_KEY_ARG);
	int start = probe("pea_st_lat_begin"), end = probe("pea_st_lat_end");
	struct pea_agg_attr aa = end_attr(start, PEA_LAT_KEY_ARG);
	struct pea_link_info li;
	struct pea_lat_info i;
	struct table t;

	/*
	 * Linear buckets at the two delays, each 480 ms wide: a sleep is
	 * never shorter than asked, and a busy host may stretch it a lot.
	 * 0: < 20 ms, 1: [20, 500) ms, 2: [500, 980) ms, 3: 980 ms or more.
	 */
	aa.hist = PEA_AGG_HIST_LINEAR;
	aa.lin_min = 20 * MS;
	aa.lin_max = 980 * MS;
	aa.lin_step = 480 * MS;
	PT_EQ(lat_create(start, &la), 0,
	      "a pairing table of 16 starts on kprobe:pea_st_lat_begin, keyed by arg0");
	PT_EQ(agg_create(end, &aa), 0,
	      "kprobe:pea_st_lat_end: a linear table of the ns since its arg0's start");
	/* 4 keys begun together, ended together 20 ms later, 5 times. */
	st_lat(0xffff888000001000ULL, 4, 5, 20000, BOTH);
	/* and 4 keys 500 ms apart, once */
	st_lat(0x1000, 4, 1, 500000, BOTH);
	PT_EQ(agg_read(end, true, &t), 0, "read-and-clear the end's table");
	PT_OK(t.hits == 24 && t.count == 24 && t.unpaired == 0 &&
	      t.dropped == 0 && t.errors == 0,
	      "24 ends, 24 paired: hits %llu count %llu unpaired %llu",
	      (unsigned long long)t.hits, (unsigned long long)t.count,
	      (unsigned long long)t.unpaired);
	PT_OK(t.buckets[0] == 0 && t.buckets[1] == 20 && t.buckets[2] == 4 &&
	      t.buckets[3] == 0,
	      "buckets: < 20 ms %llu, [20, 500) ms %llu, [500, 980) ms %llu, more %llu (0, 20, 4, 0)",
	      (unsigned long long)t.buckets[0], (unsigned long long)t.buckets[1],
	      (unsigned long long)t.buckets[2], (unsigned long long)t.buckets[3]);
	PT_OK(t.min >= (__s64)(20 * MS) && t.max >= (__s64)(500 * MS),
	      "min %lld ns >= 20 ms, max %lld ns >= 500 ms",
	      (long long)t.min, (long long)t.max);
	i = lat_info(start);
	PT_OK(i.started == 24 && i.paired == 24 && i.replaced == 0 &&
	      i.overflow == 0 && i.errors == 0 && i.pending == 0 &&
	      i.max_pending == 16,
	      "start info: started %llu paired %llu replaced %llu overflow %llu pending %u",
	      (unsigned long long)i.started, (unsigned long long)i.paired,
	      (unsigned long long)i.replaced,
	      (unsigned long long)i.overflow, i.pending);
	PT_EQ(ioctl(start, PEA_LINK_IOC_INFO, &li), 0, "start link info");
	PT_EQ(li.written, 0, "PEA_LAT_F_NO_RECORDS: the start wrote no record");
	close(end);
	close(start);
}

/* ---- paired by thread: replaced starts, unpaired ends ---- */

static void test_pair_tid(void)
{
	struct pea_lat_attr la = lat_attr(16, PEA_LAT_KEY_TID);
	int start = probe("pea_st_lat_begin"), end = probe("pea_st_lat_end");
	struct pea_agg_attr aa = end_attr(start, PEA_LAT_KEY_TID);
	int b = 1;		/* [20 ms, 10.02 s) */
	struct pea_lat_info i;
	struct table t;

	aa.hist = PEA_AGG_HIST_LINEAR;
	aa.lin_min = 20 * MS;
	aa.lin_max = 10020 * MS;
	aa.lin_step = 10000 * MS;
	PT_EQ(lat_create(start, &la), 0, "a pairing table keyed by thread");
	PT_EQ(agg_create(end, &aa), 0, "an end table keyed by thread");
	/* 3 begins (the 2nd and 3rd replace), 20 ms, 3 ends: 4 times */
	st_lat(1, 3, 4, 20000, BOTH);
	PT_EQ(agg_read(end, false, &t), 0, "read the end's table");
	PT_OK(t.hits == 12 && t.count == 4 && t.unpaired == 8 &&
	      t.buckets[b] == 4 && others(&t, b) == 0,
	      "12 ends: 4 paired (all in bucket %d, 20 ms or more: %llu), 8 unpaired (%llu)",
	      b, (unsigned long long)t.buckets[b],
	      (unsigned long long)t.unpaired);
	i = lat_info(start);
	PT_OK(i.started == 12 && i.replaced == 8 && i.paired == 4 &&
	      i.pending == 0 && i.overflow == 0,
	      "12 starts: 8 replaced a kept one, 4 paired (%llu, %llu, %llu)",
	      (unsigned long long)i.started, (unsigned long long)i.replaced,
	      (unsigned long long)i.paired);
	close(end);
	close(start);
}

/* ---- a full pairing table, ends without starts ---- */

static void test_overflow(void)
{
	struct pea_lat_attr la = lat_attr(4, PEA_LAT_KEY_ARG);
	int start = probe("pea_st_lat_begin"), end = probe("pea_st_lat_end");
	struct pea_agg_attr aa = end_attr(start, PEA_LAT_KEY_ARG);
	struct pea_lat_info i;
	struct table t;

	PT_EQ(lat_create(start, &la), 0, "a pairing table of 4 starts");
	PT_EQ(agg_create(end, &aa), 0, "its end table");
	st_lat(100, 10, 1, 0, PEA_ST_LAT_BEGIN);
	i = lat_info(start);
	PT_OK(i.started == 4 && i.overflow == 6 && i.pending == 4,
	      "10 keys begun: 4 kept, 6 overflow (%llu, %llu, pending %u)",
	      (unsigned long long)i.started, (unsigned long long)i.overflow,
	      i.pending);
	st_lat(100, 10, 1, 0, PEA_ST_LAT_END);
	st_lat(5000, 7, 1, 0, PEA_ST_LAT_END);
	PT_EQ(agg_read(end, true, &t), 0, "read-and-clear");
	PT_OK(t.hits == 17 && t.count == 4 && t.unpaired == 13,
	      "17 ends: the 4 kept starts paired, 6 overflowed and 7 never begun unpaired (%llu, %llu)",
	      (unsigned long long)t.count, (unsigned long long)t.unpaired);
	i = lat_info(start);
	PT_OK(i.paired == 4 && i.pending == 0, "all kept starts taken");
	/* The slots are free again: 4 more are kept. */
	st_lat(200, 5, 1, 0, PEA_ST_LAT_BEGIN);
	i = lat_info(start);
	PT_OK(i.started == 8 && i.overflow == 7 && i.pending == 4,
	      "freed slots are reused: 4 of 5 more kept (%llu, %llu)",
	      (unsigned long long)i.started, (unsigned long long)i.overflow);
	PT_EQ(agg_read(end, true, &t), 0, "read-and-clear");
	PT_OK(t.hits == 0 && t.unpaired == 0, "the clear took the unpaired too");
	/* The start link closes: its ends are unpaired from then on. */
	close(start);
	st_lat(200, 5, 1, 0, PEA_ST_LAT_END);
	PT_EQ(agg_read(end, false, &t), 0, "read after the start closed");
	PT_OK(t.hits == 5 && t.count == 0 && t.unpaired == 5,
	      "the start link closed: 5 ends unpaired (%llu)",
	      (unsigned long long)t.unpaired);
	close(end);
}

/* ---- a syscall's enter -> exit, paired by thread ---- */

static int tp_id(const char *event)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), TRACEFS "%s/id", event);
	if (pt_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return atoi(buf);
}

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

/* A tracepoint link on @event (a:b), its field at @off equal to @value. */
static int tp_link(const char *event, int off, __u32 size, __s64 value,
		   int tgid)
{
	struct pea_tp_attr t;
	char path[128];
	int id, fd;

	snprintf(path, sizeof(path), "%s", event);
	*strchr(path, ':') = '/';
	id = tp_id(path);
	if (id < 0 || off < 0)
		pt_fatal("tracepoint id or format");
	memset(&t, 0, sizeof(t));
	t.size = sizeof(t);
	t.flags = PEA_TP_F_CLOEXEC;
	t.event_id = id;
	t.filter_cpu = -1;
	t.filter_tgid = tgid;
	snprintf(t.name, sizeof(t.name), "%s", event);
	t.nr_preds = 1;
	t.preds[0].offset = off;
	t.preds[0].size = size;
	t.preds[0].kind = PEA_TP_FIELD_SINT;
	t.preds[0].op = PEA_TP_OP_EQ;
	t.preds[0].value = value;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &t);
	if (fd < 0)
		pt_fatal("attach tracepoint");
	return fd;
}

/*
 * Replace link @fd by one on @event with two predicates: the field at
 * @off (4 bytes) equal to @v and the long at @off2 equal to @v2; 0 or -1.
 */
static int tp_add_pred(int fd, const char *event, int off, __s64 v, int off2,
		       __s64 v2)
{
	struct pea_tp_attr t;
	char path[128];
	int nfd;

	snprintf(path, sizeof(path), "%s", event);
	*strchr(path, ':') = '/';
	memset(&t, 0, sizeof(t));
	t.size = sizeof(t);
	t.flags = PEA_TP_F_CLOEXEC;
	t.event_id = tp_id(path);
	t.filter_cpu = -1;
	snprintf(t.name, sizeof(t.name), "%s", event);
	t.nr_preds = 2;
	t.preds[0].offset = off;
	t.preds[0].size = 4;
	t.preds[0].kind = PEA_TP_FIELD_SINT;
	t.preds[0].op = PEA_TP_OP_EQ;
	t.preds[0].value = v;
	t.preds[1].offset = off2;
	t.preds[1].size = 8;
	t.preds[1].kind = PEA_TP_FIELD_SINT;
	t.preds[1].op = PEA_TP_OP_EQ;
	t.preds[1].value = v2;
	nfd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &t);
	if (nfd < 0)
		return -1;
	/* the same fd number, so that the caller's stays good */
	if (dup2(nfd, fd) < 0)
		return -1;
	close(nfd);
	return 0;
}

static void test_syscall(void)
{
	int off = tp_field_offset("raw_syscalls/sys_enter", "long id;");
	int xoff = tp_field_offset("raw_syscalls/sys_exit", "long id;");
	int start = tp_link("raw_syscalls:sys_enter", off, 8, SYS_nanosleep,
			    getpid());
	int end = tp_link("raw_syscalls:sys_exit", xoff, 8, SYS_nanosleep,
			  getpid());
	struct pea_lat_attr la = lat_attr(64, PEA_LAT_KEY_TID);
	struct pea_agg_attr aa = end_attr(start, PEA_LAT_KEY_TID);
	/* 2^27 ns and a little: its log2 bucket has 128 ms of room */
	struct timespec ts = { 0, 140 * MS };
	int b = pt_log2_bucket(140 * MS), n;
	struct pea_lat_info i;
	struct table t;

	PT_EQ(lat_create(start, &la), 0, "raw_syscalls:sys_enter (nanosleep) starts, by thread");
	PT_EQ(agg_create(end, &aa), 0, "raw_syscalls:sys_exit (nanosleep) ends");
	for (n = 0; n < 3; n++)
		syscall(SYS_nanosleep, &ts, NULL);	/* not clock_nanosleep */
	PT_EQ(agg_read(end, false, &t), 0, "read");
	PT_OK(t.hits == 3 && t.count == 3 && t.unpaired == 0 &&
	      t.buckets[b] == 3 && others(&t, b) == 0 &&
	      t.min >= (__s64)(140 * MS),
	      "3 nanosleep(140 ms): 3 in log2 bucket %d (%llu), min %lld ns",
	      b, (unsigned long long)t.buckets[b], (long long)t.min);
	i = lat_info(start);
	PT_OK(i.started == 3 && i.paired == 3 && i.pending == 0,
	      "3 enters kept, 3 taken");
	close(end);
	close(start);
}

/* ---- runqlat: sched_wakeup's pid -> sched_switch's next_pid ---- */

#define WAKES	8

static int go_pipe[2], park_pipe[2], go_word;
static volatile pid_t sleeper_tid;
static volatile int sleeper_parking;

/*
 * runqlat's thread is woken by a futex, on one CPU: on PREEMPT_RT a
 * wakeup whose wakee then contends for a lock its waker still holds (a
 * pipe's wait queue lock) or a nanosleep whose hrtimer callback still
 * runs on another CPU (hrtimer_cancel_wait_running()) blocks it on an
 * rtlock, one more wakeup than the workload's. FUTEX_WAKE wakes after
 * dropping its bucket lock, and the futex waiter takes no lock after.
 */
static volatile long go_blocked, sleeps_blocked;

/* The calling thread's voluntary switches: its blocked periods. */
static long nvcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? -1 : ru.ru_nvcsw;
}

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, 10 * MS };
	long v0, v1;
	char c;
	int n;

	pt_pin(1 % pt_nr_cpus());
	v0 = nvcsw();
	sleeper_tid = syscall(SYS_gettid);
	while (!__atomic_load_n(&go_word, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &go_word, FUTEX_WAIT_PRIVATE, 0, NULL,
			NULL, 0);
	v1 = nvcsw();
	for (n = 0; n < WAKES; n++)
		nanosleep(&ts, NULL);
	/*
	 * Which of them blocked, as the scheduler counted it: a nanosleep
	 * whose timer fired before do_nanosleep() reached schedule() (a
	 * vCPU the host left unscheduled that long) is woken (its
	 * sched_wakeup: ttwu_runnable()) but never switched out or in.
	 */
	go_blocked = v1 - v0;
	sleeps_blocked = nvcsw() - v1;
	/* Parked until the counts are read: its exit is not counted. */
	sleeper_parking = 1;
	if (read(park_pipe[0], &c, 1) < 0)
		return arg;
	return NULL;
}

static void test_runqlat(void)
{
	const char *wk = "sched/sched_wakeup", *sw = "sched/sched_switch";
	int poff = tp_field_offset(wk, "pid_t pid;");
	int noff = tp_field_offset(sw, "pid_t next_pid;");
	struct pea_lat_attr la = lat_attr(64, PEA_LAT_KEY_FIELD);
	struct pea_agg_attr aa;
	struct pea_lat_info i;
	struct table t;
	__u64 sb;
	pthread_t th;
	int start, end;

	sleeper_parking = 0;
	go_word = 0;
	if (pipe(park_pipe) || pthread_create(&th, NULL, sleeper, NULL))
		pt_fatal("pipe, pthread_create");
	while (!sleeper_tid)
		usleep(1000);
	/* asleep on the futex, so that the go is a wakeup (not a sleep's guess) */
	PT_EQ(pt_tid_asleep(sleeper_tid), 0,
	      "runqlat: the thread is asleep on its futex before the go");
	start = tp_link("sched:sched_wakeup", poff, 4, sleeper_tid, 0);
	end = tp_link("sched:sched_switch", noff, 4, sleeper_tid, 0);
	la.key.offset = poff;
	la.key.size = 4;
	aa = end_attr(start, PEA_LAT_KEY_FIELD);
	aa.pair_key.offset = noff;
	aa.pair_key.size = 4;
	PT_EQ(lat_create(start, &la), 0,
	      "sched:sched_wakeup starts, keyed by its field pid (offset %d)", poff);
	PT_EQ(agg_create(end, &aa), 0,
	      "sched:sched_switch ends, keyed by its field next_pid (offset %d)", noff);
	__atomic_store_n(&go_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &go_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	/*
	 * Read while the thread is parked, asleep: not after the join,
	 * which returns at its mm_release(). The rest of its do_exit()
	 * can still block (an rtlock on the RT kernels), be woken and be
	 * switched in: on 6.1-rt, 14 of 300 joined threads had a wakeup
	 * or a switch-in after the join.
	 */
	while (!sleeper_parking)
		usleep(1000);
	PT_EQ(pt_tid_asleep(sleeper_tid), 0,
	      "runqlat: the thread parked, asleep, after its %d sleeps", WAKES);
	PT_EQ(agg_read(end, false, &t), 0, "read");
	i = lat_info(start);
	PT_OK(go_blocked == 1 && sleeps_blocked >= WAKES / 2 &&
	      sleeps_blocked <= WAKES,
	      "runqlat: the thread blocked on its futex once and in %ld of its %d sleeps (its voluntary switches)",
	      sleeps_blocked, WAKES);
	/*
	 * The go and each of the 8 sleeps: one wakeup; each that blocked
	 * one switch-in, paired; the wakeup of one that did not is kept
	 * until the next replaces it, or pending.
	 */
	sb = sleeps_blocked > 0 ? (__u64)sleeps_blocked : 0;
	PT_OK(i.started == WAKES + 1 &&
	      t.count == 1 + sb && i.paired == 1 + sb &&
	      i.replaced + i.pending == WAKES - sb &&
	      t.hits == t.count + t.unpaired && others(&t, -1) == 1 + sb,
	      "runqlat of a thread woken %d times: %llu wakeups kept, %llu paired with its switch-in (%ld blocked), %llu replaced + %u pending, %llu switch-ins unpaired (preempted)",
	      WAKES + 1, (unsigned long long)i.started,
	      (unsigned long long)t.count, 1 + sleeps_blocked,
	      (unsigned long long)i.replaced, i.pending,
	      (unsigned long long)t.unpaired);
	close(end);
	close(start);
	close(park_pipe[1]);	/* the thread's read sees the end */
	pthread_join(th, NULL);
	close(park_pipe[0]);
}

/* ---- off-CPU time: sched_switch paired with itself ---- */

#define SLEEPS	5

static void *offcpu_thread(void *arg)
{
	struct timespec ts = { 0, 30 * MS };
	char c;
	int n;

	prctl(PR_SET_NAME, "pea-offcpu");
	/*
	 * One CPU: each switch-in counts in the table of the CPU it is on,
	 * and the read gives each CPU's entry apart (the RT kernels moved
	 * the thread: 3 periods in the first entry of 5 paired).
	 */
	pt_pin(0);
	sleeper_tid = syscall(SYS_gettid);
	if (read(go_pipe[0], &c, 1) != 1)
		return arg;
	for (n = 0; n < SLEEPS; n++)
		nanosleep(&ts, NULL);
	return NULL;
}

static void test_offcpu(void)
{
	const char *sw = "sched/sched_switch";
	int poff = tp_field_offset(sw, "pid_t prev_pid;");
	int noff = tp_field_offset(sw, "pid_t next_pid;");
	int coff = tp_field_offset(sw, "char next_comm[16];");
	int soff = tp_field_offset(sw, "long prev_state;");
	struct pea_lat_attr la = lat_attr(64, PEA_LAT_KEY_FIELD);
	struct pea_agg_read r;
	struct pea_agg_attr aa;
	struct pea_agg_entry *e;
	struct pea_lat_info i;
	struct pt_free_watch fw;
	char comm[17] = "";
	pthread_t th;
	int start, end;

	sleeper_tid = 0;
	if (pipe(go_pipe) || pthread_create(&th, NULL, offcpu_thread, NULL))
		pt_fatal("pipe, pthread_create");
	while (!sleeper_tid)
		usleep(1000);
	PT_EQ(pt_free_watch(&fw, sleeper_tid), 0,
	      "off-CPU: a watch for the thread's free");
	/* asleep in read() before the links: that block is not a start */
	PT_EQ(pt_tid_asleep(sleeper_tid), 0,
	      "off-CPU: the thread is asleep in read() before the links");
	start = tp_link("sched:sched_switch", poff, 4, sleeper_tid, 0);
	end = tp_link("sched:sched_switch", noff, 4, sleeper_tid, 0);
	la.key.offset = poff;
	/* Blocked (TASK_INTERRUPTIBLE) switch-outs only, not preemptions. */
	PT_OK(soff >= 0 && !tp_add_pred(start, "sched:sched_switch", poff,
					sleeper_tid, soff, 1),
	      "the start also takes prev_state == TASK_INTERRUPTIBLE");
	la.key.size = 4;
	memset(&aa, 0, sizeof(aa));
	aa.size = sizeof(aa);
	aa.flags = PEA_AGG_F_NO_RECORDS;
	aa.max_keys = 8;
	aa.keys[0] = PEA_AGG_KEY_PAIR;
	aa.keys[1] = PEA_AGG_KEY_FIELD;
	aa.key_offset = coff;
	aa.key_size = 16;
	aa.value = PEA_AGG_VAL_PAIRED;
	/* 0: < 30 ms, 1: [30 ms, 10.03 s), 2: more (a busy host stretches) */
	aa.hist = PEA_AGG_HIST_LINEAR;
	aa.lin_min = 30 * MS;
	aa.lin_max = 10030 * MS;
	aa.lin_step = 10000 * MS;
	aa.pair_fd = start;
	aa.pair_key.kind = PEA_LAT_KEY_FIELD;
	aa.pair_key.offset = noff;
	aa.pair_key.size = 4;
	PT_EQ(lat_create(start, &la), 0,
	      "off-CPU: sched_switch starts, keyed by prev_pid (offset %d)", poff);
	PT_EQ(agg_create(end, &aa), 0,
	      "off-CPU: sched_switch ends by next_pid, keyed by it and next_comm (offset %d)",
	      coff);
	if (write(go_pipe[1], "g", 1) != 1)
		pt_fatal("write");
	pthread_join(th, NULL);
	/*
	 * The join returns at the thread's mm_release(): the rest of its
	 * do_exit() can still be preempted and switched in (an unpaired
	 * end, in hits) while the table is read, field by field. Its
	 * blocking there is never a start (an rtlock wait reads as D, then
	 * exit_state), so read once it has been freed (pt_exit.h).
	 */
	PT_EQ(pt_free_wait(&fw), 0,
	      "off-CPU: the thread ran its last instruction (sched_process_free)");
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.buf = (uintptr_t)rbuf;
	r.buf_len = sizeof(rbuf);
	PT_EQ(pt_ioctl_errno(end, PEA_LINK_IOC_AGG_READ, &r), 0, "read");
	e = (void *)rbuf;
	if (r.nr_entries)
		memcpy(comm, &e->key[1], 16);
	/*
	 * A sleep is off the CPU for its 30 ms less the time between arming
	 * the timer and the switch-out (the debug kernel: 29.87 ms): at
	 * least 20 ms.
	 */
	PT_OK(r.nr_entries == 1 && r.nr_buckets == 3 &&
	      e->key[0] == (__u64)sleeper_tid && !strcmp(comm, "pea-offcpu") &&
	      e->key[3] == 0 && e->count == SLEEPS &&
	      e->buckets[0] + e->buckets[1] + e->buckets[2] == SLEEPS &&
	      e->min >= (__s64)(20 * MS) &&
	      r.unpaired >= 1 && r.errors == 0 &&
	      r.hits == e->count + r.unpaired,
	      "a thread that slept 5 x 30 ms: key (%llu, %s), %llu off-CPU periods, each of 20 ms or more (%llu of 30 ms or more), sum %lld ns, min %lld; unpaired: its wakeup from the pipe and any switch-in after a preemption: %llu",
	      r.nr_entries ? (unsigned long long)e->key[0] : 0ULL, comm,
	      r.nr_entries ? (unsigned long long)e->count : 0ULL,
	      r.nr_entries ? (unsigned long long)e->buckets[1] : 0ULL,
	      r.nr_entries ? (long long)e->sum : 0LL,
	      r.nr_entries ? (long long)e->min : 0LL,
	      (unsigned long long)r.unpaired);
	i = lat_info(start);
	PT_OK(i.started == SLEEPS && i.paired == SLEEPS && i.pending == 0,
	      "%d blocked switch-outs kept, %d paired, none left (%llu, %llu, %u)",
	      SLEEPS, SLEEPS, (unsigned long long)i.started,
	      (unsigned long long)i.paired, i.pending);
	close(end);
	close(start);
	close(go_pipe[0]);
	close(go_pipe[1]);
}

/*
 * Review F5: an end whose table key cannot be read (a field past its
 * entry) is counted in errors and leaves the start where it is.
 */
static void test_key_error_keeps_start(void)
{
	int off = tp_field_offset("raw_syscalls/sys_enter", "long id;");
	int xoff = tp_field_offset("raw_syscalls/sys_exit", "long id;");
	int start = tp_link("raw_syscalls:sys_enter", off, 8, SYS_getppid,
			    getpid());
	int end = tp_link("raw_syscalls:sys_exit", xoff, 8, SYS_getppid,
			  getpid());
	struct pea_lat_attr la = lat_attr(64, PEA_LAT_KEY_TID);
	struct pea_agg_attr aa = end_attr(start, PEA_LAT_KEY_TID);
	struct pea_lat_info i;
	struct table t;
	int n;

	aa.keys[0] = PEA_AGG_KEY_FIELD;
	aa.key_offset = 4000;	/* past any sys_exit entry */
	aa.key_size = 8;
	PT_EQ(lat_create(start, &la), 0, "F5: sys_enter (getppid) starts");
	PT_EQ(agg_create(end, &aa), 0, "F5: sys_exit ends, keyed by a field past the entry");
	for (n = 0; n < 10; n++)
		syscall(SYS_getppid);
	PT_EQ(agg_read(end, false, &t), 0, "F5: read");
	i = lat_info(start);
	PT_OK(t.hits == 10 && t.errors == 10 && t.count == 0 &&
	      i.started == 10 && i.replaced == 9 && i.paired == 0 &&
	      i.pending == 1,
	      "F5: 10 ends whose key fails: 10 errors, and no start taken (started %llu, replaced %llu, paired %llu, pending %u)",
	      (unsigned long long)i.started, (unsigned long long)i.replaced,
	      (unsigned long long)i.paired, i.pending);
	close(end);
	close(start);
}

/*
 * Review F1: the ioctl numbers carry the struct's size; binaries built
 * with an older pea.h send the older numbers, which the module answers.
 */
#define AGG_CREATE_VER0	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x38, \
			     PEA_AGG_ATTR_SIZE_VER0)
#define AGG_READ_VER0	_IOC(_IOC_READ | _IOC_WRITE, PEA_IOC_MAGIC, 0x39, \
			     PEA_AGG_READ_SIZE_VER0)
#define AGG_CREATE_VER1	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x38, \
			     PEA_AGG_ATTR_SIZE_VER1)
#define AGG_READ_VER1	_IOC(_IOC_READ | _IOC_WRITE, PEA_IOC_MAGIC, 0x39, \
			     PEA_AGG_READ_SIZE_VER1)

static void test_old_numbers(void)
{
	unsigned long create[2] = { AGG_CREATE_VER0, AGG_CREATE_VER1 };
	unsigned long rd[2] = { AGG_READ_VER0, AGG_READ_VER1 };
	__u32 asz[2] = { PEA_AGG_ATTR_SIZE_VER0, PEA_AGG_ATTR_SIZE_VER1 };
	__u32 rsz[2] = { PEA_AGG_READ_SIZE_VER0, PEA_AGG_READ_SIZE_VER1 };
	struct pea_agg_attr a;
	struct pea_agg_read r;
	int v, link;

	for (v = 0; v < 2; v++) {
		link = probe("pea_st_lat_end");
		memset(&a, 0, sizeof(a));
		a.size = asz[v];
		a.max_keys = 4;
		PT_EQ(pt_ioctl_errno(link, create[v], &a), 0,
		      "F1: PEA_LINK_IOC_AGG_CREATE of a %u-byte attr (VER%d's number)",
		      asz[v], v);
		st_lat(1, 3, 1, 0, PEA_ST_LAT_END);
		memset(&r, 0, sizeof(r));
		r.size = rsz[v];
		r.buf = (uintptr_t)rbuf;
		r.buf_len = sizeof(rbuf);
		PT_EQ(pt_ioctl_errno(link, rd[v], &r), 0,
		      "F1: PEA_LINK_IOC_AGG_READ of a %u-byte request (VER%d's number)",
		      rsz[v], v);
		PT_OK(r.hits == 3 && r.nr_entries >= 1,
		      "F1: it reads the 3 hits (%llu)",
		      (unsigned long long)r.hits);
		close(link);
	}
}

/*
 * Review F3: an argument key of 4 bytes pairs by the parameter's low 32
 * bits whatever the caller left above them.
 */
static void test_arg_width(void)
{
	struct pea_lat_attr la = lat_attr(8, PEA_LAT_KEY_ARG);
	int start = probe("pea_st_lat_begin"), end = probe("pea_st_lat_end");
	struct pea_agg_attr aa = end_attr(start, PEA_LAT_KEY_ARG);
	struct table t;

	la.key.size = 4;
	aa.pair_key.size = 4;
	PT_EQ(lat_create(start, &la), 0, "F3: an argument key of 4 bytes");
	PT_EQ(agg_create(end, &aa), 0, "F3: its end, 4 bytes too");
	st_lat(0x100000007ULL, 1, 1, 0, PEA_ST_LAT_BEGIN);
	st_lat(0x200000007ULL, 1, 1, 0, PEA_ST_LAT_END);
	PT_EQ(agg_read(end, false, &t), 0, "F3: read");
	PT_OK(t.hits == 1 && t.count == 1 && t.unpaired == 0,
	      "F3: begin(0x100000007) pairs with end(0x200000007) by the low 32 bits (%llu paired)",
	      (unsigned long long)t.count);
	close(end);
	close(start);
}

/*
 * Review F6: in a child pid namespace, a table keyed by the pairing key
 * of a thread pairing shows the thread as that namespace sees it (1,
 * the namespace's first process), as PEA_AGG_KEY_TID does.
 */
static int pair_ns_child(void)
{
	struct pea_lat_attr la = lat_attr(8, PEA_LAT_KEY_TID);
	int start = probe("pea_st_lat_begin"), end = probe("pea_st_lat_end");
	struct pea_agg_attr aa = end_attr(start, PEA_LAT_KEY_TID);
	struct pea_agg_read r;
	struct pea_agg_entry *e = (void *)rbuf;

	aa.keys[0] = PEA_AGG_KEY_PAIR;
	aa.hist = PEA_AGG_HIST_NONE;
	if (lat_create(start, &la) || agg_create(end, &aa))
		return 3;
	st_lat(1, 1, 1, 0, BOTH);
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.buf = (uintptr_t)rbuf;
	r.buf_len = sizeof(rbuf);
	if (ioctl(end, PEA_LINK_IOC_AGG_READ, &r) || r.nr_entries != 1)
		return 4;
	return e->key[0] == 1 && e->count == 1 ? 0 : 2;
}

static void test_pair_ns(void)
{
	pid_t a = fork(), b;
	int st = -1;

	if (!a) {
		/* A: its next child is the first of a new pid namespace */
		if (unshare(CLONE_NEWPID))
			_exit(5);
		b = fork();
		if (!b)
			_exit(pair_ns_child());
		if (b < 0 || waitpid(b, &st, 0) != b || !WIFEXITED(st))
			_exit(6);
		_exit(WEXITSTATUS(st));
	}
	if (a > 0 && waitpid(a, &st, 0) == a && WIFEXITED(st))
		st = WEXITSTATUS(st);
	PT_EQ(st, 0,
	      "F6: in a new pid namespace the pairing key of a thread is its pid there (1); 2: another, 3..6: setup");
}

/* ---- memory ---- */

static void test_memory(void)
{
	struct pea_lat_attr la = lat_attr(1000, PEA_LAT_KEY_ARG);
	int start = probe("pea_st_lat_begin");
	long l0, b0, l1, b1;

	/* 2048 slots of 24 bytes: 49,152, which kmalloc takes as 64 KiB */
	pt_quota(-1, &l0, &b0);
	PT_EQ(lat_create(start, &la), 0, "1000 starts at most");
	pt_quota(-1, &l1, &b1);
	PT_OK(b1 - b0 >= 65536 && b1 - b0 <= 65536 + 256,
	      "charged %ld bytes: 64 KiB of slots and the table's struct",
	      b1 - b0);
	close(start);
	pt_quota(-1, &l1, &b1);
	PT_OK(b1 < b0, "given back with the link (%ld -> %ld)", b0, b1);
}

/* ---- errors ---- */

static void test_errors(void)
{
	int start = probe("pea_st_lat_begin"), end = probe("pea_st_lat_end");
	int plain = probe("pea_st_lat_end");
	int off = tp_field_offset("raw_syscalls/sys_enter", "long id;");
	int tp = tp_link("raw_syscalls:sys_enter", off, 8, SYS_getppid,
			 getpid());
	struct pea_lat_attr la;
	struct pea_agg_attr aa;
	struct pea_lat_info info;

	la = lat_attr(8, PEA_LAT_KEY_ARG);
	la.flags = 2;
	PT_EQ(lat_create(start, &la), EINVAL, "unknown flag: EINVAL");
	la = lat_attr(0, PEA_LAT_KEY_ARG);
	PT_EQ(lat_create(start, &la), EINVAL, "max_pending 0: EINVAL");
	la = lat_attr(PEA_LAT_MAX_PENDING + 1, PEA_LAT_KEY_ARG);
	PT_EQ(lat_create(start, &la), EINVAL, "max_pending past 65536: EINVAL");
	la = lat_attr(8, 3);
	PT_EQ(lat_create(start, &la), EINVAL, "key kind 3: EINVAL");
	la = lat_attr(8, PEA_LAT_KEY_ARG);
	la.key.arg = 6;
	PT_EQ(lat_create(start, &la), EINVAL, "argument 6: EINVAL");
	la = lat_attr(8, PEA_LAT_KEY_TID);
	la.key.size = 4;
	PT_EQ(lat_create(start, &la), EINVAL, "a thread key with a size: EINVAL");
	la = lat_attr(8, PEA_LAT_KEY_FIELD);
	la.key.size = 4;
	PT_EQ(lat_create(start, &la), EINVAL, "a field key on a kprobe: EINVAL");
	la = lat_attr(8, PEA_LAT_KEY_FIELD);
	la.key.size = 3;
	PT_EQ(lat_create(tp, &la), EINVAL, "a field of 3 bytes: EINVAL");
	la = lat_attr(8, PEA_LAT_KEY_ARG);
	PT_EQ(lat_create(tp, &la), EINVAL, "an argument key on a tracepoint: EINVAL");
	la = lat_attr(8, PEA_LAT_KEY_ARG);
	la.reserved = 1;
	PT_EQ(lat_create(start, &la), EINVAL, "reserved: EINVAL");
	la = lat_attr(8, PEA_LAT_KEY_ARG);
	la.size = 16;
	PT_EQ(lat_create(start, &la), EINVAL, "size 16: EINVAL");
	PT_EQ(pt_ioctl_errno(start, PEA_LINK_IOC_LAT_INFO, &info), ENOENT,
	      "LAT_INFO without a pairing table: ENOENT");
	la = lat_attr(8, PEA_LAT_KEY_ARG);
	PT_EQ(lat_create(start, &la), 0, "a good one");
	PT_EQ(lat_create(start, &la), EEXIST, "a second one: EEXIST");

	aa = end_attr(-1, PEA_LAT_KEY_ARG);
	PT_EQ(agg_create(end, &aa), EBADF, "pair_fd -1: EBADF");
	aa = end_attr(map_fd, PEA_LAT_KEY_ARG);
	PT_EQ(agg_create(end, &aa), EINVAL, "pair_fd a map: EINVAL");
	aa = end_attr(plain, PEA_LAT_KEY_ARG);
	PT_EQ(agg_create(end, &aa), EINVAL, "pair_fd a link without a pairing table: EINVAL");
	aa = end_attr(start, PEA_LAT_KEY_FIELD);
	aa.pair_key.size = 8;
	PT_EQ(agg_create(end, &aa), EINVAL, "a field key on a kprobe end: EINVAL");
	aa = end_attr(start, PEA_LAT_KEY_ARG);
	aa.value = PEA_AGG_VAL_ARG;
	PT_EQ(agg_create(end, &aa), EINVAL, "pair_fd without PEA_AGG_VAL_PAIRED: EINVAL");
	aa = end_attr(start, PEA_LAT_KEY_ARG);
	aa.reserved2 = 1;
	PT_EQ(agg_create(end, &aa), EINVAL, "reserved2: EINVAL");
	aa = end_attr(start, PEA_LAT_KEY_ARG);
	aa.flags |= PEA_AGG_F_SIGNED;
	PT_EQ(agg_create(end, &aa), EINVAL, "a signed elapsed time: EINVAL");
	aa = end_attr(start, PEA_LAT_KEY_ARG);
	aa.value = PEA_AGG_VAL_ARG;
	aa.pair_fd = 0;
	memset(&aa.pair_key, 0, sizeof(aa.pair_key));
	aa.keys[0] = PEA_AGG_KEY_PAIR;
	PT_EQ(agg_create(end, &aa), EINVAL, "a pairing key part without a pairing: EINVAL");
	aa = end_attr(start, PEA_LAT_KEY_ARG);
	aa.keys[0] = PEA_AGG_KEY_FIELD;
	aa.key_size = 4;
	PT_EQ(agg_create(end, &aa), EINVAL, "a field key part on a kprobe: EINVAL");
	aa.key_size = 17;
	PT_EQ(agg_create(end, &aa), EINVAL, "a field key of 17 bytes: EINVAL");
	aa = end_attr(start, PEA_LAT_KEY_ARG);
	aa.key_size = 4;
	PT_EQ(agg_create(end, &aa), EINVAL, "key_size without a field key part: EINVAL");
	/* Review F2: the attr's errno, not the fd's */
	aa = end_attr(-1, PEA_LAT_KEY_ARG);
	aa.flags = 0x80;
	PT_EQ(agg_create(end, &aa), EINVAL, "F2: bad flags and pair_fd -1: EINVAL (the attr first)");
	aa = end_attr(start, PEA_LAT_KEY_ARG);
	PT_EQ(agg_create(end, &aa), 0, "a good end");
	aa = end_attr(map_fd, PEA_LAT_KEY_ARG);
	PT_EQ(agg_create(end, &aa), EEXIST, "F2: a second table, pair_fd a map: EEXIST (the link first)");
	close(tp);
	close(plain);
	close(end);
	close(start);
}

int main(void)
{
	ncpu = pt_setup(NCPU_MAX);
	ncpu = pt_cpu_map("lat", 1, &map_fd, ev_fd, rings);
	test_pair_arg();
	test_pair_tid();
	test_overflow();
	test_syscall();
	test_runqlat();
	test_offcpu();
	test_key_error_keeps_start();
	test_old_numbers();
	test_arg_width();
	test_memory();
	test_errors();
	test_pair_ns();		/* last: it forks */
	return pt_done();
}
