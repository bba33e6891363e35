// SPDX-License-Identifier: GPL-2.0
/*
 * Ordered delivery (PEA_FLAG_ORDERED, PEA_BUFFER_FLAG_ORDERED).
 *
 *   abi:   the flag's and the clock's EINVALs; the writers word is 0 when
 *          idle; a PERF_RECORD_LOST with sample_id_all carries pid, tid,
 *          the time of the record after it and the CPU.
 *   mid:   an NMI writer inside a task writer's reservation (between its
 *          head load and its cmpxchg, forced by a kprobe every time):
 *          the NMI's record comes first in the ring, with an earlier time.
 *   token: a token passed between random CPUs, received in task, hardirq
 *          and NMI context: the record written before each hand-off is
 *          delivered before the record written after it, every time; the
 *          stream is non-decreasing in time and complete.
 *   storm: every context on every CPU into 2-page rings and a slow
 *          reader: non-decreasing, received + lost == attempted exactly.
 *   idle:  the other CPUs idle for a second, one record is delivered
 *          within 200 ms, with a time between the writer's clock_gettime()
 *          before it and the reader's after it.
 */
#include <pthread.h>
#include <time.h>
#include "pea_test.h"
#include "pt_storm.h"
#include "libpea.h"
#include "pt_consumer.h"

#define MAX_CPUS	PEA_ST_MAX_CPUS
#define NSRC		PEA_ST_NR_SOURCES
#define MID_COUNT	2000
#define TOKEN_HANDOFFS	50000
#define STORM_MS	2000
#define IDLE_ROUNDS	3
#define IDLE_BOUND_NS	200000000ULL	/* 200 ms */

static int ncpu;

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static struct pea_buffer *ordered_buffer(int map, size_t pages,
					 pea_buffer_sample_fn s,
					 pea_buffer_lost_fn l, void *ctx)
{
	LIBPEA_OPTS(pea_buffer_opts, opts, .flags = PEA_BUFFER_FLAG_ORDERED);
	struct pea_buffer *pb = pea_buffer__new(map, pages, s, l, ctx, &opts);

	if (!pb)
		pt_fatal("pea_buffer__new(ORDERED)");
	return pb;
}

/* The sample time libpea's ORDERED buffers select (TIME | RAW). */
static __u64 rec_time(const void *data)
{
	struct pea_sample_info info;

	pea_sample_info(data, PERF_SAMPLE_TIME, &info);
	return info.time;
}

/* ---- abi ---- */

static int open_ordered(int cpu, __u64 st, int use_clockid, int clockid,
			__u32 flags)
{
	struct perf_event_attr attr = pt_output_attr(st);
	struct pea_event_open req = { .cpu = cpu, .flags = flags };
	int fd;

	attr.use_clockid = use_clockid;
	attr.clockid = clockid;
	attr.sample_id_all = 1;
	req.attr = (uintptr_t)&attr;
	fd = ioctl(pt_dev(), PEA_IOC_EVENT_OPEN, &req);
	return fd < 0 ? -errno : fd;
}

static void test_abi(void)
{
	const __u64 st = PERF_SAMPLE_RAW | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU;
	struct pea_map_elem elem = { .key = 0 };
	char payload[1000] = { 0 };
	struct pt_ring r = { 0 };
	__u64 body[8], t_sample;
	struct perf_event_header *h = (void *)body;
	static char buf[65536];
	int fd, map, n, cpu = 0;
	__u32 ok = 0;

	PT_EQ(open_ordered(0, PERF_SAMPLE_RAW, 1, CLOCK_MONOTONIC,
			   PEA_FLAG_ORDERED), -EINVAL,
	      "abi: ORDERED without PERF_SAMPLE_TIME is EINVAL");
	PT_EQ(open_ordered(0, st, 0, 0, PEA_FLAG_ORDERED), -EINVAL,
	      "abi: ORDERED without use_clockid is EINVAL");
	PT_EQ(open_ordered(0, st, 1, CLOCK_REALTIME, 0), -EINVAL,
	      "abi: clockid CLOCK_REALTIME is EINVAL");
	fd = open_ordered(0, st, 1, CLOCK_MONOTONIC_RAW, PEA_FLAG_ORDERED);
	PT_OK(fd >= 0, "abi: ORDERED on CLOCK_MONOTONIC_RAW opens");
	if (fd >= 0)
		close(fd);

	pt_pin(cpu);
	fd = open_ordered(cpu, st, 1, CLOCK_MONOTONIC, PEA_FLAG_ORDERED);
	if (fd < 0)
		pt_fatal("open ordered event");
	if (pt_ring_map(&r, fd, 1, PROT_READ | PROT_WRITE))
		pt_fatal("mmap");
	PT_EQ(PEA_PAGE_WRITERS(r.pg), 0, "abi: no writer in flight when idle");
	map = pt_map_create("ordabi", 1, 0);
	elem.fd = fd;
	if (map < 0 || ioctl(map, PEA_MAP_IOC_UPDATE, &elem))
		pt_fatal("map");

	/* 1040-byte records: three fit in 4096 bytes, then drops. */
	pt_output_n("ordabi", 0, payload, sizeof(payload), 5, &ok);
	PT_EQ(ok, 3, "abi: three records fit, two dropped");
	pt_ring_drain(&r);
	PT_EQ(pt_output("ordabi", 0, payload, 8), 0, "abi: a record after the drops");
	PT_EQ(PEA_PAGE_WRITERS(r.pg), 0, "abi: writers back to 0");
	n = pt_ring_next(&r, buf);
	memcpy(body, buf, sizeof(body));
	PT_EQ(n, 48, "abi: PERF_RECORD_LOST with sample_id is 48 bytes");
	PT_EQ(h->type, PERF_RECORD_LOST, "abi: it is a PERF_RECORD_LOST");
	PT_EQ(body[2], 2, "abi: lost 2");
	PT_EQ((__u32)body[3], getpid(), "abi: sample_id pid");
	PT_EQ((__u32)(body[3] >> 32), gettid(), "abi: sample_id tid");
	PT_EQ((__u32)body[5], cpu, "abi: sample_id cpu");
	n = pt_ring_next(&r, buf);
	memcpy(&t_sample, buf + 16, 8);
	PT_EQ(n, 48, "abi: then the 8-byte sample");
	PT_EQ(body[4], t_sample, "abi: the loss has the time of the record after it");
	PT_OK(t_sample && t_sample <= now_ns(),
	      "abi: the time is CLOCK_MONOTONIC (%llu)",
	      (unsigned long long)t_sample);
	pt_ring_unmap(&r);
	close(map);
	close(fd);
}

/* ---- mid: an NMI inside a reservation ---- */

struct mid {
	__u64 n, bad_order, bad_time, last_t;
	int last_kind;
	__u64 last_k;
};

static void mid_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct mid *m = ctx;
	struct pea_st_tok_rec r;
	__u64 t = rec_time(data);

	(void)cpu;
	memcpy(&r, data, sizeof(r));
	if (size < sizeof(r))
		return;
	/* INNER(i) must come right before OUTER(i). */
	if (r.kind == PEA_ST_MID_OUTER &&
	    (m->last_kind != PEA_ST_MID_INNER || m->last_k != r.k))
		m->bad_order++;
	if (r.kind == PEA_ST_MID_INNER && m->last_kind == PEA_ST_MID_INNER)
		m->bad_order++;
	if (m->n && t <= m->last_t)
		m->bad_time++;
	m->last_t = t;
	m->last_kind = r.kind;
	m->last_k = r.k;
	m->n++;
}

static void test_mid(void)
{
	struct pea_st_midres a = { .count = MID_COUNT };
	int map = pt_map_create("ordmid", ncpu, 0);
	struct mid m = { 0 };
	struct pea_buffer *pb;

	pb = ordered_buffer(map, 64, mid_sample, NULL, &m);
	pt_pin(1 % ncpu);
	strcpy(a.map, "ordmid");
	PT_EQ(pt_ioctl_errno(pt_st(), PEA_ST_IOC_MIDRES, &a), 0,
	      "mid: %u task writes, each with a kprobe in its reservation",
	      MID_COUNT);
	PT_EQ(a.ret, 0, "mid: no error");
	PT_EQ(a.outer_ok, MID_COUNT, "mid: every task record written");
	PT_EQ(a.nested, MID_COUNT,
	      "mid: an NMI wrote inside every reservation (between head load and cmpxchg)");
	PT_EQ(pea_buffer__consume(pb), 0, "mid: consume");
	PT_EQ(m.n, 2 * MID_COUNT, "mid: all %u records delivered", 2 * MID_COUNT);
	PT_EQ(m.bad_order, 0,
	      "mid: each NMI record precedes the task record it interrupted");
	PT_EQ(m.bad_time, 0, "mid: times strictly increase along the ring");
	pea_buffer__free(pb);
	close(map);
}

/* ---- claimloop: a nested writer at every clock read ---- */

struct cl {
	__u64 n, lost, nested_ok;
};

static void cl_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct cl *c = ctx;
	__u64 v;

	(void)cpu;
	memcpy(&v, data, sizeof(v));
	if (size >= sizeof(v) && v == c->n)
		c->nested_ok++;		/* nested record k carries k */
	c->n++;
}

static void cl_lost(void *ctx, int cpu, __u64 cnt)
{
	(void)cpu;
	((struct cl *)ctx)->lost += cnt;
}

/*
 * A probe inside the claim loop that writes a nested record at every
 * clock read kept the task writer's cmpxchg failing for as long as it
 * wrote (review of perf, F1: with a probe that always writes, for ever,
 * preemption off). The loop gives up after PEA_ST_CLAIM_TRIES tries:
 * the record is dropped and counted lost.
 */
static void test_claimloop(void)
{
	struct pea_st_claimloop a = { .limit = 1000 };
	int map = pt_map_create("ordloop", ncpu, 0);
	struct cl c = { 0 };
	struct pea_buffer *pb;

	pb = ordered_buffer(map, 64, cl_sample, cl_lost, &c);
	pt_pin(1 % ncpu);
	strcpy(a.map, "ordloop");
	PT_EQ(pt_ioctl_errno(pt_st(), PEA_ST_IOC_CLAIMLOOP, &a), 0,
	      "claimloop: a writer with a nested writer at each clock read");
	PT_EQ(a.ret, -ENOSPC,
	      "claimloop: the writer gives up: -ENOSPC (got %lld)",
	      (long long)a.ret);
	PT_EQ(a.nested, PEA_ST_CLAIM_TRIES,
	      "claimloop: after %u tries (nested records written: %u)",
	      PEA_ST_CLAIM_TRIES, a.nested);
	PT_EQ(pea_buffer__consume(pb), 0, "claimloop: consume");
	PT_EQ(c.n, a.nested, "claimloop: every nested record delivered");
	PT_EQ(c.nested_ok, a.nested, "claimloop: in order");
	PT_EQ(c.lost, 1, "claimloop: the writer's record counted lost");
	pea_buffer__free(pb);
	close(map);
}

/* ---- token ---- */

struct tok {
	__u64 n, lost, bad, dup, bad_time, last_t, max_gap;
	__u32 *before_pos, *after_pos;	/* position + 1 in the stream */
	__u64 ctx[3];
};

static void tok_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct tok *s = ctx;
	struct pea_st_tok_rec r;
	__u64 t = rec_time(data);
	__u32 *slot;

	if (size < sizeof(r)) {
		s->bad++;
		return;
	}
	memcpy(&r, data, sizeof(r));
	if (r.k >= TOKEN_HANDOFFS || (int)r.cpu != cpu ||
	    (r.kind != PEA_ST_TOK_BEFORE && r.kind != PEA_ST_TOK_AFTER)) {
		s->bad++;
		return;
	}
	if (s->n && t < s->last_t)
		s->bad_time++;
	s->last_t = t;
	slot = r.kind == PEA_ST_TOK_BEFORE ? &s->before_pos[r.k] :
					     &s->after_pos[r.k];
	if (*slot)
		s->dup++;
	*slot = ++s->n;
	if (r.kind == PEA_ST_TOK_AFTER)
		s->ctx[r.ctx == PEA_ST_CTX_NMI ? 2 :
		       r.ctx == PEA_ST_CTX_HARDIRQ ? 1 : 0]++;
}

static void tok_lost(void *ctx, int cpu, __u64 cnt)
{
	(void)cpu;
	((struct tok *)ctx)->lost += cnt;
}

static void test_token(void)
{
	struct pea_st_token a = {
		.handoffs = TOKEN_HANDOFFS, .seed = 12345,
		.timeout_ms = 120000 * pt_time_scale(),
	};
	int map = pt_map_create("ordtok", ncpu, 0), k, inv = 0, missing = 0;
	struct pt_consumer c = { 0 };
	struct tok s = { 0 };
	__u64 t0;

	s.before_pos = calloc(TOKEN_HANDOFFS, sizeof(__u32));
	s.after_pos = calloc(TOKEN_HANDOFFS, sizeof(__u32));
	if (!s.before_pos || !s.after_pos)
		pt_fatal("calloc");
	c.pb = ordered_buffer(map, 64, tok_sample, tok_lost, &s);
	if (pthread_create(&c.thr, NULL, pt_consumer_fn, &c))
		pt_fatal("pthread_create");
	strcpy(a.map, "ordtok");
	t0 = now_ns();
	PT_EQ(pt_ioctl_errno(pt_st(), PEA_ST_IOC_TOKEN, &a), 0,
	      "token: %u hand-offs between random CPUs", TOKEN_HANDOFFS);
	pt_diag("token: %u hand-offs in %llu ms; received in task %llu, hardirq %llu, nmi %llu",
		a.done, (unsigned long long)(now_ns() - t0) / 1000000,
		(unsigned long long)a.recv[0], (unsigned long long)a.recv[1],
		(unsigned long long)a.recv[2]);
	c.stop = 1;
	pthread_join(c.thr, NULL);
	PT_EQ(c.errors, 0, "token: reader: no error (last %ld)", c.last_err);
	PT_EQ(pea_buffer__consume(c.pb), 0, "token: final consume");
	PT_EQ(a.done, TOKEN_HANDOFFS, "token: every hand-off made");
	PT_EQ(a.failed, 0, "token: pea_output() refused nothing (%lld)",
	      (long long)a.last_err);
	PT_OK(a.recv[0] > TOKEN_HANDOFFS / 10 && a.recv[1] > TOKEN_HANDOFFS / 10 &&
	      a.recv[2] > TOKEN_HANDOFFS / 10,
	      "token: received in task, hardirq and NMI context alike");
	PT_EQ(s.ctx[0], a.recv[0], "token: task receptions delivered");
	PT_EQ(s.ctx[1], a.recv[1], "token: hardirq receptions delivered");
	PT_EQ(s.ctx[2], a.recv[2], "token: NMI receptions delivered");
	PT_EQ(s.n, a.written, "token: received == written (%llu)",
	      (unsigned long long)a.written);
	PT_EQ(a.written, 2 * TOKEN_HANDOFFS, "token: two records per hand-off");
	PT_EQ(s.lost, 0, "token: nothing lost");
	PT_EQ(s.bad + s.dup, 0, "token: every record well-formed, on its CPU's ring, once");
	for (k = 0; k < TOKEN_HANDOFFS; k++) {
		if (!s.before_pos[k] || !s.after_pos[k])
			missing++;
		else if (s.before_pos[k] >= s.after_pos[k])
			inv++;
	}
	PT_EQ(missing, 0, "token: both records of every hand-off delivered");
	PT_EQ(inv, 0, "token: the record before each hand-off precedes the one after it");
	PT_EQ(s.bad_time, 0, "token: the stream is non-decreasing in time");
	pea_buffer__free(c.pb);
	close(map);
	free(s.before_pos);
	free(s.after_pos);
}

/* ---- storm: overflow and exactness ---- */

struct ostorm {
	__u64 recv[MAX_CPUS][NSRC], lost[MAX_CPUS];
	__u64 n, bad, bad_time, last_t, last_seq[MAX_CPUS][NSRC];
	bool have[MAX_CPUS][NSRC];
};

static void os_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct ostorm *s = ctx;
	struct pea_st_record r;
	__u64 t = rec_time(data);

	if (cpu < 0 || cpu >= ncpu || pt_storm_check(cpu, data, size, &r)) {
		s->bad++;
		return;
	}
	if (s->have[cpu][r.source] && r.seq <= s->last_seq[cpu][r.source])
		s->bad++;
	s->have[cpu][r.source] = true;
	s->last_seq[cpu][r.source] = r.seq;
	if (s->n && t < s->last_t)
		s->bad_time++;
	s->last_t = t;
	s->n++;
	s->recv[cpu][r.source]++;
}

static void os_lost(void *ctx, int cpu, __u64 cnt)
{
	struct ostorm *s = ctx;

	if (cpu < 0 || cpu >= ncpu)
		s->bad++;
	else
		s->lost[cpu] += cnt;
}

static void test_storm(void)
{
	int map = pt_map_create("ordstorm", ncpu, 0), cpu, src, bad = 0;
	struct pt_consumer c = { .pause_us = 2000 };
	struct ostorm *s = calloc(1, sizeof(*s));
	__u64 att = 0, recv = 0, lost = 0;

	if (!s)
		pt_fatal("calloc");
	c.pb = ordered_buffer(map, 2, os_sample, os_lost, s);
	if (pthread_create(&c.thr, NULL, pt_consumer_fn, &c))
		pt_fatal("pthread_create");
	PT_EQ(pt_storm_start("ordstorm", PT_ALL_SOURCES), 0,
	      "storm: started, every context, 2-page rings, slow reader");
	sleep_ms(STORM_MS);
	PT_EQ(pt_storm_stop(), 0, "storm: stopped");
	c.stop = 1;
	pthread_join(c.thr, NULL);
	PT_EQ(c.errors, 0, "storm: reader: no error (last %ld)", c.last_err);
	PT_EQ(pea_buffer__consume(c.pb), 0, "storm: final consume");
	for (cpu = 0; cpu < ncpu; cpu++) {
		__u64 a = 0, r = 0, ok = 0, nospc = 0;

		for (src = 0; src < NSRC; src++) {
			struct pea_st_counts *k = &pt_storm_result.c[cpu][src];

			a += k->attempts;
			ok += k->ok;
			nospc += k->nospc;
			r += s->recv[cpu][src];
			if (s->recv[cpu][src] != k->ok || k->other)
				bad++;
		}
		if (r + s->lost[cpu] != a || s->lost[cpu] != nospc) {
			pt_diag("storm: cpu %d: received %llu + lost %llu != attempted %llu (nospc %llu)",
				cpu, (unsigned long long)r,
				(unsigned long long)s->lost[cpu],
				(unsigned long long)a, (unsigned long long)nospc);
			bad++;
		}
		att += a;
		recv += r;
		lost += s->lost[cpu];
	}
	pt_diag("storm: %llu attempted, %llu received, %llu lost",
		(unsigned long long)att, (unsigned long long)recv,
		(unsigned long long)lost);
	PT_EQ(s->bad, 0, "storm: every record intact, in its source's order");
	PT_EQ(bad, 0, "storm: per CPU received + lost == attempted, received == ok");
	PT_EQ(recv + lost, att, "storm: in total received + lost == attempted");
	PT_OK(lost > 0, "storm: the rings overflowed (%llu lost)",
	      (unsigned long long)lost);
	PT_EQ(s->bad_time, 0, "storm: the stream is non-decreasing in time, losses included");
	pea_buffer__free(c.pb);
	close(map);
	free(s);
}

/* ---- idle: no CPU holds the stream back ---- */

struct idle {
	volatile __u64 t_recv, t_rec;
	volatile int got;
};

static void idle_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct idle *s = ctx;

	(void)cpu;
	(void)size;
	s->t_rec = rec_time(data);
	s->t_recv = now_ns();
	__atomic_store_n(&s->got, s->got + 1, __ATOMIC_RELEASE);
}

static void test_idle(void)
{
	int map = pt_map_create("ordidle", ncpu, 0), i, bad_bound = 0;
	int bad_clock = 0;
	struct pt_consumer c = { 0 };
	struct idle s = { 0 };
	__u64 worst = 0;

	c.pb = ordered_buffer(map, 8, idle_sample, NULL, &s);
	if (pthread_create(&c.thr, NULL, pt_consumer_fn, &c))
		pt_fatal("pthread_create");
	for (i = 0; i < IDLE_ROUNDS; i++) {
		int cpu = i % ncpu, want = i + 1;
		__u64 t0, lat, deadline;
		__u64 x = 0x1122334455667788ULL;

		pt_pin(cpu);
		sleep_ms(1000);		/* every CPU idle */
		t0 = now_ns();
		if (pt_output("ordidle", PEA_F_CURRENT_CPU, &x, sizeof(x)))
			pt_fatal("pt_output");
		deadline = t0 + 5000000000ULL;
		while (__atomic_load_n(&s.got, __ATOMIC_ACQUIRE) < want &&
		       now_ns() < deadline)
			usleep(100);
		if (s.got < want) {
			bad_bound++;
			continue;
		}
		lat = s.t_recv - t0;
		pt_diag("idle: record on cpu %d delivered after %llu us", cpu,
			(unsigned long long)lat / 1000);
		if (lat > worst)
			worst = lat;
		if (lat > IDLE_BOUND_NS)
			bad_bound++;
		if (s.t_rec < t0 || s.t_rec > s.t_recv)
			bad_clock++;
	}
	c.stop = 1;
	pthread_join(c.thr, NULL);
	PT_EQ(bad_bound, 0,
	      "idle: each record delivered within 200 ms while the other CPUs idle (worst %llu us)",
	      (unsigned long long)worst / 1000);
	PT_EQ(bad_clock, 0,
	      "idle: record times lie between the writer's and the reader's clock_gettime(CLOCK_MONOTONIC)");
	PT_EQ(c.errors, 0, "idle: reader: no error");
	pea_buffer__free(c.pb);
	close(map);
}

/* ---- cost: figures only (no timing is asserted) ---- */

#define COST_ROUNDS	5
#define COST_N		2000	/* 88-byte records: fit a 64-page ring */

/* Best ns per 64-byte pea_output() of COST_ROUNDS rounds of COST_N. */
static double cost_ns(int use_clockid, __u32 flags)
{
	const __u64 st = PERF_SAMPLE_RAW | PERF_SAMPLE_TIME;
	struct pea_map_elem elem = { .key = 0 };
	struct pt_ring r = { 0 };
	char payload[64] = { 0 };
	double best = 0;
	int fd, map, i;
	__u32 ok;

	fd = open_ordered(1, st, use_clockid, CLOCK_MONOTONIC, flags);
	map = pt_map_create("ordcost", 2, 0);
	elem.key = 1;
	elem.fd = fd;
	if (fd < 0 || map < 0 || pt_ring_map(&r, fd, 64, PROT_READ | PROT_WRITE) ||
	    ioctl(map, PEA_MAP_IOC_UPDATE, &elem))
		pt_fatal("cost: set-up");
	for (i = 0; i < COST_ROUNDS; i++) {
		__u64 t0 = now_ns();
		double ns;

		pt_output_n("ordcost", 1, payload, sizeof(payload), COST_N, &ok);
		ns = (double)(now_ns() - t0) / COST_N;
		if (ok != COST_N)
			pt_fatal("cost: records dropped");
		if (!i || ns < best)
			best = ns;
		pt_ring_drain(&r);
	}
	pt_ring_unmap(&r);
	close(map);
	close(fd);
	return best;
}

static void test_cost(void)
{
	double local, mono, ordered;

	pt_pin(1);
	local = cost_ns(0, 0);
	mono = cost_ns(1, 0);
	ordered = cost_ns(1, PEA_FLAG_ORDERED);
	pt_diag("cost: 64-byte pea_output() with TIME, ns/record (guest, ioctl loop included): local_clock %.0f, CLOCK_MONOTONIC %.0f, ORDERED %.0f (%+.1f%% over local_clock)",
		local, mono, ordered, 100.0 * (ordered - local) / local);
	PT_OK(ordered > 0, "cost: measured");
}

int main(void)
{
	ncpu = pt_setup(MAX_CPUS);
	if (ncpu < 2) {
		pt_diag("needs two CPUs");
		return pt_done();
	}
	test_abi();
	test_mid();
	test_claimloop();
	test_token();
	test_storm();
	test_idle();
	test_cost();
	return pt_done();
}
