// SPDX-License-Identifier: GPL-2.0
/*
 * Every context at once on every CPU: the test module's storm writes from
 * a bound kthread (task), a pinned timer (softirq), a pinned hrtimer
 * (hardirq) and NMIs nested in the hrtimer's reservation, while libpea
 * consumes.
 *
 *   A: 64-page rings and a polling consumer: every record intact, on the
 *      ring of its CPU, in its context, in order; received == ok and
 *      lost == nospc exactly, per CPU and source. A2: the same with
 *      2-page rings and a slow consumer, so drops and reads interleave.
 *   B: 2-page rings nobody reads during the storm: the rings end full
 *      with drops that never got a PERF_RECORD_LOST, and libpea still
 *      accounts for every attempt.
 *   C: teardown while producing: pea_buffer__free/new, mmap/munmap/close
 *      races, closing the map fd, delete_module refused.
 *   F: PEA_FLAG_FLUSH with NMI writers only: the bounded-latency flush
 *      wakes the reader from records written in NMI context, and the
 *      accounting stays exact.
 */
#include <pthread.h>
#include <time.h>
#include "pea_test.h"
#include "pt_storm.h"
#include "libpea.h"
#include "pt_consumer.h"

#define MAX_CPUS	PEA_ST_MAX_CPUS
#define NSRC		PEA_ST_NR_SOURCES

/* Durations, scaled for a 4-vCPU guest under TCG. */
#define PHASE_A_MS	3000
#define PHASE_A2_MS	2000
#define PHASE_B_MS	1000
#define PHASE_C_STEP_MS	150
#define PHASE_F_MS	2000
#define PHASE_F_FLUSH_US 2000

static const char *const src_name[NSRC] = {
	"task", "softirq", "hardirq", "nmi",
};

static int ncpu;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- checking every record the callbacks see ---- */

struct storm {
	__u64 recv[MAX_CPUS][NSRC];
	__u64 last_seq[MAX_CPUS][NSRC];
	bool have_seq[MAX_CPUS][NSRC];
	__u64 lost[MAX_CPUS];
	__u64 bad;		/* malformed records */
	__u64 bad_lost;		/* lost_cb with an impossible cpu */
	int diags;
};

static void storm_bad(struct storm *s, int cpu, const char *what,
		      unsigned long long a, unsigned long long b)
{
	s->bad++;
	if (s->diags++ < 10)
		pt_diag("ring %d: %s (%llu, %llu)", cpu, what, a, b);
}

static void on_record(void *ctx, int cpu, void *data, __u32 size)
{
	unsigned char buf[sizeof(struct pea_st_record) + 256];
	struct storm *s = ctx;
	struct pea_st_record r;
	const unsigned char *d = data;
	__u32 want_size, i, csum;

	if (cpu < 0 || cpu >= ncpu) {
		storm_bad(s, cpu, "ring cpu out of range", cpu, ncpu);
		return;
	}
	if (size < sizeof(r)) {
		storm_bad(s, cpu, "record too short", size, sizeof(r));
		return;
	}
	memcpy(&r, d, sizeof(r));
	if (r.source >= NSRC) {
		storm_bad(s, cpu, "bad source", r.source, 0);
		return;
	}
	if (r.cpu != (__u32)cpu) {
		storm_bad(s, cpu, "record cpu != ring cpu", r.cpu, cpu);
		return;
	}
	if (r.len != pea_st_len(r.source, r.seq)) {
		storm_bad(s, cpu, "len", r.len, pea_st_len(r.source, r.seq));
		return;
	}
	want_size = ((4 + sizeof(r) + r.len + 7) & ~7U) - 4;
	if (size != want_size) {
		storm_bad(s, cpu, "raw size", size, want_size);
		return;
	}
	if (r.ctx != (1U << r.source)) {
		storm_bad(s, cpu, src_name[r.source], r.ctx, 1U << r.source);
		return;
	}
	if (r.pad) {
		storm_bad(s, cpu, "pad", r.pad, 0);
		return;
	}
	memcpy(buf, d, sizeof(r) + r.len);
	((struct pea_st_record *)buf)->csum = 0;
	csum = pea_st_csum(buf, sizeof(r) + r.len);
	if (csum != r.csum) {
		storm_bad(s, cpu, "checksum", r.csum, csum);
		return;
	}
	for (i = 0; i < r.len; i++)
		if (d[sizeof(r) + i] !=
		    pea_st_pattern(r.source, r.cpu, r.seq, i)) {
			storm_bad(s, cpu, "pattern byte", i, r.seq);
			return;
		}
	for (i = sizeof(r) + r.len; i < size; i++)
		if (d[i]) {
			storm_bad(s, cpu, "padding", i, d[i]);
			return;
		}
	if (s->have_seq[cpu][r.source] &&
	    r.seq <= s->last_seq[cpu][r.source]) {
		storm_bad(s, cpu, "seq not increasing", r.seq,
			  s->last_seq[cpu][r.source]);
		return;
	}
	s->have_seq[cpu][r.source] = true;
	s->last_seq[cpu][r.source] = r.seq;
	s->recv[cpu][r.source]++;
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	struct storm *s = ctx;

	if (cpu < 0 || cpu >= ncpu) {
		s->bad_lost++;
		return;
	}
	s->lost[cpu] += cnt;
}

/* ---- the storm ---- */


/*
 * The exact accounting shared by phases A and B: for every CPU and
 * source received == ok; no other error; per CPU, attempts - received ==
 * lost as libpea reported it (callback and pea_buffer__lost) == nospc.
 */
static void check_accounting(const char *phase, struct storm *s,
			     struct pea_buffer *pb)
{
	int cpu, src, bad_ok = 0, bad_other = 0, bad_lost = 0, bad_sum = 0;
	int bad_stats = 0;
	__u64 tot_att[NSRC] = { 0 }, tot_ok[NSRC] = { 0 };
	__u64 tot_nospc[NSRC] = { 0 }, tot_lost = 0;

	for (cpu = 0; cpu < ncpu; cpu++) {
		__u64 att = 0, recv = 0, nospc = 0, ok = 0, lib_lost = ~0ULL;
		struct pea_event_stats st;

		for (src = 0; src < NSRC; src++) {
			struct pea_st_counts *c = &pt_storm_result.c[cpu][src];

			if (c->attempts != c->ok + c->nospc + c->other)
				bad_sum++;
			if (s->recv[cpu][src] != c->ok) {
				pt_diag("%s: cpu %d %s: received %llu, ok %llu",
					phase, cpu, src_name[src],
					(unsigned long long)s->recv[cpu][src],
					(unsigned long long)c->ok);
				bad_ok++;
			}
			if (c->other) {
				pt_diag("%s: cpu %d %s: %llu other errors, last %lld",
					phase, cpu, src_name[src],
					(unsigned long long)c->other,
					(long long)c->last_other);
				bad_other++;
			}
			att += c->attempts;
			ok += c->ok;
			recv += s->recv[cpu][src];
			nospc += c->nospc;
			tot_att[src] += c->attempts;
			tot_ok[src] += c->ok;
			tot_nospc[src] += c->nospc;
		}
		pea_buffer__lost(pb, cpu, &lib_lost);
		if (att - recv != s->lost[cpu] || s->lost[cpu] != nospc ||
		    lib_lost != nospc) {
			pt_diag("%s: cpu %d: attempts %llu - received %llu != lost_cb %llu / __lost %llu / nospc %llu",
				phase, cpu, (unsigned long long)att,
				(unsigned long long)recv,
				(unsigned long long)s->lost[cpu],
				(unsigned long long)lib_lost,
				(unsigned long long)nospc);
			bad_lost++;
		}
		tot_lost += s->lost[cpu];
		memset(&st, 0xff, sizeof(st));
		ioctl(pea_buffer__buffer_fd(pb, cpu), PEA_EVENT_IOC_STATS, &st);
		if (st.records != ok || st.lost != nospc || st.lost_pending) {
			pt_diag("%s: cpu %d: stats records %llu lost %llu pending %llu",
				phase, cpu, (unsigned long long)st.records,
				(unsigned long long)st.lost,
				(unsigned long long)st.lost_pending);
			bad_stats++;
		}
	}
	for (src = 0; src < NSRC; src++)
		pt_diag("%s: %-7s %8llu attempts %8llu received %8llu lost",
			phase, src_name[src], (unsigned long long)tot_att[src],
			(unsigned long long)tot_ok[src],
			(unsigned long long)tot_nospc[src]);
	pt_diag("%s: lost reported by libpea: %llu", phase,
		(unsigned long long)tot_lost);

	PT_EQ(s->bad, 0, "%s: every record intact (checksum, pattern, padding, "
	      "cpu, context, seq order)", phase);
	PT_EQ(s->bad_lost, 0, "%s: lost_cb only for real CPUs", phase);
	PT_EQ(bad_sum, 0, "%s: attempts == ok + nospc + other", phase);
	PT_EQ(bad_ok, 0, "%s: received == ok for every CPU and source", phase);
	PT_EQ(bad_other, 0, "%s: no error other than ENOSPC", phase);
	PT_EQ(bad_lost, 0,
	      "%s: per CPU attempts - received == lost_cb == __lost == nospc",
	      phase);
	PT_EQ(bad_stats, 0, "%s: event stats agree, nothing pending", phase);
}

static struct storm sa, sa2, sb, sc, sf;

#define OPTS_FLUSH(o)	((o) && (o)->sz >= sizeof(struct pea_buffer_opts) && \
			 (o)->flush_us)

/*
 * Before the final consume: on every CPU the reader was woken, and got
 * records, more often than the watermark alone can explain.
 */
static void check_flush_wakeups(const char *phase, struct storm *s,
				struct pea_buffer *pb, size_t pages)
{
	__u64 ring_bytes = pages * pt_page_size(), recv, tot_w = 0;
	int cpu, src, bad = 0;

	for (cpu = 0; cpu < ncpu; cpu++) {
		struct pea_event_stats st;

		if (ioctl(pea_buffer__buffer_fd(pb, cpu), PEA_EVENT_IOC_STATS,
			  &st))
			pt_fatal("PEA_EVENT_IOC_STATS");
		for (recv = 0, src = 0; src < NSRC; src++)
			recv += s->recv[cpu][src];
		tot_w += st.wakeups;
		if (st.wakeups <= st.bytes / ring_bytes || !recv) {
			pt_diag("%s: cpu %d: %llu wake-ups for %llu bytes, %llu records read",
				phase, cpu, (unsigned long long)st.wakeups,
				(unsigned long long)st.bytes,
				(unsigned long long)recv);
			bad++;
		}
	}
	pt_diag("%s: %llu wake-ups on %d CPUs", phase,
		(unsigned long long)tot_w, ncpu);
	PT_EQ(bad, 0, "%s: every CPU's reader was woken by the flush timer "
	      "(more wake-ups than bytes / ring size) and read during the storm",
	      phase);
}

/*
 * A storm with a consumer thread polling all along: @pages per ring,
 * @pause_us between polls.
 */
static void storm_with_consumer(const char *phase, const char *name,
				struct storm *s, size_t pages, int pause_us,
				long ms, __u32 sources,
				const struct pea_buffer_opts *opts)
{
	int map = pea_map_create(name, ncpu, 0), cpu, src, bad = 0;
	struct pt_consumer c = { .pause_us = pause_us };
	struct pea_buffer *pb;
	__u64 lost = 0;

	if (map < 0)
		pt_fatal("pea_map_create");
	pb = pea_buffer__new(map, pages, on_record, on_lost, s, opts);
	if (!pb)
		pt_fatal("pea_buffer__new");
	PT_EQ(pea_buffer__buffer_cnt(pb), ncpu, "%s: %zu-page rings on %d CPUs",
	      phase, pages, ncpu);
	c.pb = pb;
	if (pthread_create(&c.thr, NULL, pt_consumer_fn, &c))
		pt_fatal("pthread_create");
	PT_EQ(pt_storm_start(name, sources), 0, "%s: storm started (sources %#x)",
	      phase, sources);
	sleep_ms(ms);
	PT_EQ(pt_storm_stop(), 0, "%s: storm stopped", phase);
	c.stop = 1;
	pthread_join(c.thr, NULL);
	PT_EQ(c.errors, 0, "%s: consumer: %ld polls, no error (last %ld)",
	      phase, c.polls, c.last_err);
	if (OPTS_FLUSH(opts))
		check_flush_wakeups(phase, s, pb, pages);
	PT_EQ(pea_buffer__consume(pb), 0, "%s: final consume", phase);
	check_accounting(phase, s, pb);
	for (cpu = 0; cpu < ncpu; cpu++) {
		lost += s->lost[cpu];
		for (src = 0; src < NSRC; src++)
			if ((sources & (1U << src)) && !s->recv[cpu][src]) {
				pt_diag("%s: cpu %d got no %s record", phase,
					cpu, src_name[src]);
				bad++;
			}
	}
	PT_EQ(bad, 0,
	      "%s: every CPU received records of every source started (NMI too)",
	      phase);
	if (pages <= 2)
		PT_OK(lost > 0, "%s: the slow reader lost records (%llu)",
		      phase, (unsigned long long)lost);
	pea_buffer__free(pb);
	close(map);
}

static void phase_a(void)
{
	storm_with_consumer("A", "stormA", &sa, 64, 0, PHASE_A_MS,
			    PT_ALL_SOURCES, NULL);
	/* Drops while reading: LOST records, the hint and TAKE_LOST race. */
	storm_with_consumer("A2", "stormA2", &sa2, 2, 2000, PHASE_A2_MS,
			    PT_ALL_SOURCES, NULL);
}

/*
 * F: PEA_FLAG_FLUSH with NMI writers only, so every flush deadline was
 * started from NMI context (irq_work, then the hrtimer). The watermark
 * is the whole ring, so the watermark raises at most one wake-up per
 * ring's worth of bytes written; the rest came from the flush timer.
 */
static void phase_f(void)
{
	LIBPEA_OPTS(pea_buffer_opts, opts, .flush_us = PHASE_F_FLUSH_US,
		    .wakeup_watermark = 64 * 4096);

	storm_with_consumer("F", "stormF", &sf, 64, 0, PHASE_F_MS,
			    1U << PEA_ST_NMI, &opts);
}

static void phase_b(void)
{
	int map = pea_map_create("stormB", ncpu, 0), cpu, full = 0;
	struct pea_buffer *pb;

	if (map < 0)
		pt_fatal("pea_map_create");
	pb = pea_buffer__new(map, 2, on_record, on_lost, &sb, NULL);
	if (!pb)
		pt_fatal("pea_buffer__new(2 pages)");
	PT_EQ(pt_storm_start("stormB", PT_ALL_SOURCES), 0,
	      "B: storm started, nobody reading");
	sleep_ms(PHASE_B_MS);
	PT_EQ(pt_storm_stop(), 0, "B: storm stopped");
	for (cpu = 0; cpu < ncpu; cpu++) {
		struct pea_event_stats st;
		void *base = NULL;

		memset(&st, 0, sizeof(st));
		ioctl(pea_buffer__buffer_fd(pb, cpu), PEA_EVENT_IOC_STATS, &st);
		pea_buffer__buffer(pb, cpu, &base, NULL);
		if (st.lost_pending && base &&
		    PEA_PAGE_LOST_HINT((struct perf_event_mmap_page *)base))
			full++;
		else
			pt_diag("B: cpu %d: lost_pending %llu", cpu,
				(unsigned long long)st.lost_pending);
	}
	PT_EQ(full, ncpu,
	      "B: every ring ended full with drops not in the ring (hint set)");
	PT_EQ(pea_buffer__consume(pb), 0, "B: consume after the storm");
	check_accounting("B", &sb, pb);
	pea_buffer__free(pb);
	close(map);
}

/* ---- phase C: teardown while producing ---- */

struct racer {
	pthread_t thr;
	int *fds;
	void **maps;
	size_t len;
	int rounds;
	long errors;
};

/* mmap and munmap every ring over and over (another racer does too). */
static void *mapper_fn(void *arg)
{
	struct racer *r = arg;
	int i, cpu;

	for (i = 0; i < r->rounds; i++)
		for (cpu = 0; cpu < ncpu; cpu++) {
			void *p = mmap(NULL, r->len, PROT_READ | PROT_WRITE,
				       MAP_SHARED, r->fds[cpu], 0);

			if (p == MAP_FAILED) {
				r->errors++;
				continue;
			}
			if (munmap(p, r->len))
				r->errors++;
		}
	return NULL;
}

static void *unmapper_fn(void *arg)
{
	struct racer *r = arg;
	int cpu;

	for (cpu = 0; cpu < ncpu; cpu++)
		if (munmap(r->maps[cpu], r->len))
			r->errors++;
	return NULL;
}

static void *closer_fn(void *arg)
{
	struct racer *r = arg;
	int cpu;

	for (cpu = 0; cpu < ncpu; cpu++)
		if (close(r->fds[cpu]))
			r->errors++;
	return NULL;
}

static void phase_c(void)
{
	size_t len = 3 * pt_page_size();
	int map = pea_map_create("stormC", ncpu, 0), i, cpu, bad = 0;
	int fds[MAX_CPUS], cycles = 0, racer_err = 0, setup_err = 0;
	void *maps[MAX_CPUS];
	struct pea_buffer *pb;
	struct racer r1, r2;
	long ret;

	if (map < 0)
		pt_fatal("pea_map_create");
	pb = pea_buffer__new(map, 4, on_record, on_lost, &sc, NULL);
	if (!pb)
		pt_fatal("pea_buffer__new");
	PT_EQ(pt_storm_start("stormC", PT_ALL_SOURCES), 0, "C: storm started");

	/* pea_buffer__free and __new on the same map, under fire. */
	for (i = 0; i < 4; i++) {
		sleep_ms(PHASE_C_STEP_MS);
		if (pea_buffer__consume(pb))
			bad++;
		pea_buffer__free(pb);
		pb = pea_buffer__new(map, 4, on_record, on_lost, &sc, NULL);
		if (!pb)
			pt_fatal("pea_buffer__new during the storm");
		cycles++;
	}
	PT_EQ(cycles, 4, "C: 4 free/new cycles while producing");
	PT_EQ(bad, 0, "C: consuming between them succeeds");
	pea_buffer__free(pb);

	/* Two threads mmap/munmap the same events in the slots. */
	for (cpu = 0; cpu < ncpu; cpu++) {
		fds[cpu] = pt_event_open(cpu, PERF_SAMPLE_RAW);
		if (fds[cpu] < 0 || pt_map_update(map, cpu, fds[cpu]))
			setup_err++;
	}
	r1 = (struct racer){ .fds = fds, .maps = maps, .len = len, .rounds = 40 };
	r2 = r1;
	pthread_create(&r1.thr, NULL, mapper_fn, &r1);
	pthread_create(&r2.thr, NULL, mapper_fn, &r2);
	pthread_join(r1.thr, NULL);
	pthread_join(r2.thr, NULL);
	racer_err += r1.errors + r2.errors;

	/* munmap on one thread while another closes the fds. */
	for (cpu = 0; cpu < ncpu; cpu++) {
		maps[cpu] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
				 fds[cpu], 0);
		if (maps[cpu] == MAP_FAILED)
			setup_err++;
	}
	sleep_ms(PHASE_C_STEP_MS);
	r1 = (struct racer){ .fds = fds, .maps = maps, .len = len };
	r2 = r1;
	pthread_create(&r1.thr, NULL, unmapper_fn, &r1);
	pthread_create(&r2.thr, NULL, closer_fn, &r2);
	pthread_join(r1.thr, NULL);
	pthread_join(r2.thr, NULL);
	racer_err += r1.errors + r2.errors;
	PT_EQ(setup_err, 0, "C: events opened, stored and mapped under fire");
	PT_EQ(racer_err, 0, "C: concurrent mmap/munmap/close all succeed");
	/* The slots still hold the closed, unmapped events: ENOSPC. */
	sleep_ms(PHASE_C_STEP_MS);

	/* A live pea_buffer, then the map fd goes away under it. */
	pb = pea_buffer__new(map, 4, on_record, on_lost, &sc, NULL);
	PT_OK(pb, "C: pea_buffer__new replaces the slots of closed events");
	sleep_ms(PHASE_C_STEP_MS);
	PT_EQ(close(map), 0, "C: close the map fd while producing");
	errno = 0;
	ret = syscall(SYS_delete_module, "pea", O_NONBLOCK);
	PT_OK(ret == -1 && errno == EWOULDBLOCK,
	      "C: delete_module(pea) fails with EWOULDBLOCK (ret %ld errno %d)",
	      ret, errno);
	sleep_ms(3 * PHASE_C_STEP_MS);
	PT_EQ(pea_buffer__consume(pb), 0,
	      "C: consuming rings whose slots were cleared succeeds");
	pea_buffer__free(pb);
	PT_EQ(pt_storm_stop(), 0, "C: storm stopped");

	bad = 0;
	for (cpu = 0; cpu < ncpu; cpu++)
		for (i = 0; i < NSRC; i++) {
			struct pea_st_counts *c = &pt_storm_result.c[cpu][i];

			if (c->attempts != c->ok + c->nospc + c->other ||
			    !c->other || c->last_other != -ENOENT) {
				pt_diag("C: cpu %d %s: attempts %llu ok %llu nospc %llu other %llu last %lld",
					cpu, src_name[i],
					(unsigned long long)c->attempts,
					(unsigned long long)c->ok,
					(unsigned long long)c->nospc,
					(unsigned long long)c->other,
					(long long)c->last_other);
				bad++;
			}
		}
	PT_EQ(bad, 0, "C: after the map fd closed every producer got ENOENT");
	PT_EQ(sc.bad + sc.bad_lost, 0, "C: every record received was intact");
	PT_EQ(pt_output("stormC", PEA_F_CURRENT_CPU, &bad, 4), -ENOENT,
	      "C: the map is gone once the storm let go of it");
	map = pea_map_create("stormC", ncpu, 0);
	PT_OK(map >= 0, "C: its name can be used again");
	close(map);
}

int main(void)
{
	ncpu = pt_nr_cpus();
	if (ncpu > MAX_CPUS)
		pt_fatal("too many CPUs for the test module");
	pt_dev();
	pt_st();
	phase_a();
	phase_b();
	phase_c();
	phase_f();
	return pt_done();
}
