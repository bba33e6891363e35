// SPDX-License-Identifier: GPL-2.0
/*
 * pea-bench: ordered delivery (PEA_BUFFER_FLAG_ORDERED) against unordered
 * reading of the same kind of stream (issue 10). Four figures, each with
 * the channel "ordered" and its baselines, printed side by side with the
 * ratio ordered/baseline (report.c):
 *
 *  - ord-kernel-ns: pea_output()'s cost per 64-byte record on CPU 1
 *    (pea_bench's loop, the best of rounds of 512 less the best empty
 *    loop: the host preempts vCPUs at times; no wake-ups), for an
 *    event without TIME ("plain"), with TIME on local_clock()
 *    ("time-local", perf's default clock), with TIME on CLOCK_MONOTONIC
 *    ("time-mono": the fast accessor, not ordered) and ordered (TIME on
 *    CLOCK_MONOTONIC plus the writers-in-flight word).
 *  - ord-consume-ns: the reader's cost per record of one stream written
 *    by pea_bench's loop on the 4 CPUs in turns of 32 records, drained
 *    with pea_buffer__consume(): ordered (the k-way merge with its
 *    quiet checks) and unordered (ring after ring), the records of both
 *    the same size (unordered selects TIME on local_clock()); the best
 *    of 3 drains after one that faults the mapping in.
 *  - ord-retained: producers on CPUs 1 and 2 call getppid() as fast as
 *    they can, pea_bench's kprobe writes a 64-byte record per call, one
 *    consumer on CPU 3 reads (64 KiB watermark); the syscall rate with
 *    the channel over the mean of the baselines (kprobe returning at
 *    once) around it, as figure 2 does. Also ord-delivered (records/s)
 *    and ord-lost (records dropped per phase).
 *  - ord-latency-p50-us / -p99-us: paced producers (one getppid() every
 *    200 us on CPUs 1 and 2), a wake-up on every record; latency from
 *    the record's output (the payload's first word, CLOCK_MONOTONIC) to
 *    its delivery. "ordered": ordered delivery; "window-10ms": the
 *    unordered stream of the same workload (a separate phase) through a
 *    re-orderer with a guessed 10 ms window, which releases, after every
 *    poll (1 ms timeout at most), every record at least 10 ms old in
 *    time order; "unordered": the raw per-CPU delivery of that phase
 *    (not ordered across CPUs: the floor, for reference).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include "libpea.h"
#include "module/pea_bench.h"
#include "bench.h"

#define OR_PAGES	256		/* 1 MiB per CPU */
#define OR_SIZE		64
#define OR_KCPU		1		/* the kernel-cost CPU */
#define OR_EMPTY_N	16384
#define OR_TURN		32		/* consumer stream: records per turn */
#define OR_CONS_CPU	3
#define OR_WINDOW_NS	10000000ULL	/* the guessed window */
#define OR_PACE_NS	200000ULL	/* latency phase: one call per 200 us */
#define OR_MAX_LAT	(1 << 18)

enum or_var {
	OR_PLAIN,	/* no TIME */
	OR_TIME_LOCAL,	/* TIME, local_clock() */
	OR_TIME_MONO,	/* TIME on CLOCK_MONOTONIC, not ordered */
	OR_ORDERED,	/* ORDERED: TIME on CLOCK_MONOTONIC, writers word */
	OR_NR_VARS,
};

static const char *const or_var_names[OR_NR_VARS] = {
	[OR_PLAIN] = "plain", [OR_TIME_LOCAL] = "time-local",
	[OR_TIME_MONO] = "time-mono", [OR_ORDERED] = "ordered",
};

/*
 * OR_TIME_MONO has no libpea flag (ORDERED implies PEA_FLAG_ORDERED): one
 * event of our own on OR_KCPU, whose ring is emptied by moving data_tail.
 */
struct or_raw {
	int map_fd, fd;
	void *base;
	size_t len;
};

static void or_raw_open(struct or_raw *w)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	attr.sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_TIME;
	attr.sample_period = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.watermark = 1;
	attr.wakeup_watermark = OR_PAGES * getpagesize();
	w->map_fd = pea_map_create(BENCH_MAP_NAME, g_ncpus, 0);
	if (w->map_fd < 0)
		die("pea_map_create: %s", strerror(-w->map_fd));
	w->fd = pea_event_open_output(OR_KCPU, &attr);
	if (w->fd < 0)
		die("pea_event_open_output: %s", strerror(-w->fd));
	w->len = (size_t)(OR_PAGES + 1) * getpagesize();
	w->base = mmap(NULL, w->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       w->fd, 0);
	if (w->base == MAP_FAILED)
		die("mmap: %m");
	if (ioctl(w->fd, PERF_EVENT_IOC_ENABLE, 0) ||
	    pea_map_update(w->map_fd, OR_KCPU, w->fd))
		die("enable / map update: %m");
}

static void or_raw_empty(struct or_raw *w)
{
	struct perf_event_mmap_page *pg = w->base;

	__atomic_store_n(&pg->data_tail,
			 __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
}

static void or_raw_close(struct or_raw *w)
{
	munmap(w->base, w->len);
	close(w->fd);
	close(w->map_fd);
}

/* The reader: counts, and the latency of each record if asked. */
struct or_reader {
	int map_fd;
	struct pea_buffer *pb;
	uint64_t n, lost, sum;
	uint64_t phase_ns;	/* e2e: the phase's length */
	bool lat;		/* record latencies */
	bool window;		/* ... through the 10 ms window */
	int64_t *lat_v;		/* delivery latencies, ns */
	size_t lat_n;
	int64_t *win_v;		/* window re-orderer's latencies, ns */
	size_t win_n;
	uint64_t *heap;		/* the window's held records: output times */
	size_t heap_n;
	int stop;
};

/* ---- the window re-orderer: a min-heap of output times ---- */

static void heap_push(struct or_reader *r, uint64_t t)
{
	size_t i = r->heap_n++, p;

	while (i) {
		p = (i - 1) / 2;
		if (r->heap[p] <= t)
			break;
		r->heap[i] = r->heap[p];
		i = p;
	}
	r->heap[i] = t;
}

static uint64_t heap_pop(struct or_reader *r)
{
	uint64_t top = r->heap[0], last = r->heap[--r->heap_n];
	size_t i = 0, c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= r->heap_n)
			break;
		if (c + 1 < r->heap_n && r->heap[c + 1] < r->heap[c])
			c++;
		if (r->heap[c] >= last)
			break;
		r->heap[i] = r->heap[c];
		i = c;
	}
	if (r->heap_n)
		r->heap[i] = last;
	return top;
}

/* Release every held record at least a window old, oldest first. */
static void window_release(struct or_reader *r, bool all)
{
	uint64_t now = now_ns(), t;

	while (r->heap_n && (all || r->heap[0] + OR_WINDOW_NS <= now)) {
		t = heap_pop(r);
		if (r->win_n < OR_MAX_LAT)
			r->win_v[r->win_n++] = (int64_t)(now - t);
	}
}

static void or_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct or_reader *r = ctx;
	uint64_t first = 0;

	(void)cpu;
	if (size >= sizeof(first))
		memcpy(&first, data, sizeof(first));
	r->n++;
	r->sum += first;
	if (!r->lat)
		return;
	if (r->lat_n < OR_MAX_LAT)
		r->lat_v[r->lat_n++] = (int64_t)(now_ns() - first);
	if (r->window && r->heap_n < OR_MAX_LAT)
		heap_push(r, first);
}

static void or_lost(void *ctx, int cpu, __u64 cnt)
{
	(void)cpu;
	((struct or_reader *)ctx)->lost += cnt;
}

/*
 * A reader of the pea_bench map: @var's event settings, @watermark bytes
 * per wake-up (0: a wake-up on every record).
 */
static void or_open(struct or_reader *r, enum or_var var, size_t watermark)
{
	LIBPEA_OPTS(pea_buffer_opts, opts);

	memset(r, 0, sizeof(*r));
	r->map_fd = pea_map_create(BENCH_MAP_NAME, g_ncpus, 0);
	if (r->map_fd < 0)
		die("pea_map_create: %s", strerror(-r->map_fd));
	if (watermark)
		opts.wakeup_watermark = watermark;
	else
		opts.wakeup_events = 1;
	if (var == OR_TIME_LOCAL)
		opts.sample_type = PERF_SAMPLE_TIME;
	else if (var == OR_ORDERED)
		opts.flags = PEA_BUFFER_FLAG_ORDERED;
	r->pb = pea_buffer__new(r->map_fd, OR_PAGES, or_sample, or_lost, r,
				&opts);
	if (!r->pb)
		die("pea_buffer__new(%s): %m", or_var_names[var]);
}

static void or_close(struct or_reader *r)
{
	pea_buffer__free(r->pb);
	close(r->map_fd);
	free(r->lat_v);
	free(r->win_v);
	free(r->heap);
	r->pb = NULL;
	r->lat_v = r->win_v = NULL;
	r->heap = NULL;
}

static void or_want_latency(struct or_reader *r, bool window)
{
	r->lat = true;
	r->window = window;
	r->lat_v = calloc(OR_MAX_LAT, sizeof(*r->lat_v));
	r->win_v = calloc(OR_MAX_LAT, sizeof(*r->win_v));
	r->heap = calloc(OR_MAX_LAT, sizeof(*r->heap));
	if (!r->lat_v || !r->win_v || !r->heap)
		die("out of memory");
}

/* Read until @want records arrived in all; die on a loss. */
static void or_drain(struct or_reader *r, uint64_t want)
{
	int err, tries = 0;

	while (r->n < want) {
		err = pea_buffer__consume(r->pb);
		if (err < 0)
			die("consume: %s", strerror(-err));
		if (r->n < want && ++tries > 1000)
			die("drained %llu of %llu records",
			    (unsigned long long)r->n, (unsigned long long)want);
	}
	if (r->lost || r->n != want)
		die("drained %llu of %llu records, %llu lost",
		    (unsigned long long)r->n, (unsigned long long)want,
		    (unsigned long long)r->lost);
}

/* pea_bench's loop on the current CPU: ns it took. */
static double or_loop(enum pea_bench_op op, unsigned int count)
{
	struct pea_bench_loop a;

	memset(&a, 0, sizeof(a));
	snprintf(a.map, sizeof(a.map), "%s", BENCH_MAP_NAME);
	a.op = op;
	a.size = op == PEA_BENCH_EMPTY ? 0 : OR_SIZE;
	a.count = count;
	if (ioctl(g_bench_fd, PEA_BENCH_IOC_LOOP, &a))
		die("PEA_BENCH_IOC_LOOP op %d: %m", op);
	if (a.n_ok != count)
		die("loop op %d: %llu of %u records written (last error %lld)",
		    op, (unsigned long long)a.n_ok, count, (long long)a.ret);
	return (double)a.ns;
}

/* ---- 1. the kernel's cost per record ---- */

static void or_kernel(void)
{
	unsigned int per_round = 512, total = g_quick ? 4096 : 16384;
	double cost[OR_NR_VARS][32], loop, l;
	struct or_reader r;
	int run, v;

	note("ordered: kernel cost per %u-byte record on CPU %d, %d runs",
	     OR_SIZE, OR_KCPU, g_runs);
	pin_cpu(OR_KCPU);
	for (run = 0; run < g_runs && run < 32; run++) {
		/* Best of rounds: the host preempts the vCPU at times. */
		loop = 1e18;
		for (v = 0; v < 4; v++) {
			l = or_loop(PEA_BENCH_EMPTY, OR_EMPTY_N) / OR_EMPTY_N;
			if (l < loop)
				loop = l;
		}
		for (v = 0; v < OR_NR_VARS; v++) {
			unsigned int done = 0, n;
			double best = 1e18;
			struct or_raw w;

			/* No wake-ups: the record path alone. */
			if (v == OR_TIME_MONO)
				or_raw_open(&w);
			else
				or_open(&r, v, (size_t)OR_PAGES * getpagesize());
			or_loop(PEA_BENCH_OUTPUT, per_round);	/* warm-up */
			if (v == OR_TIME_MONO)
				or_raw_empty(&w);
			else
				or_drain(&r, per_round);
			while (done < total) {
				n = total - done < per_round ? total - done :
							       per_round;
				l = or_loop(PEA_BENCH_OUTPUT, n) / n;
				if (l < best)
					best = l;
				done += n;
				if (v == OR_TIME_MONO)
					or_raw_empty(&w);
				else
					or_drain(&r, per_round + done);
			}
			cost[v][run] = best - loop;
			if (v == OR_TIME_MONO)
				or_raw_close(&w);
			else
				or_close(&r);
		}
	}
	for (v = 0; v < OR_NR_VARS; v++)
		fig_add("ord-kernel-ns", or_var_names[v], OR_SIZE, cost[v], run,
			"ns/rec");
}

/* ---- 2. the reader's cost per record ---- */

static void or_consume(void)
{
	unsigned int total = g_quick ? 2048 : 8192, done;
	double cost[2][32];
	struct or_reader r;
	uint64_t t0, t1;
	int run, k, cpu;

	note("ordered: consumer cost per record, %u records from %d CPUs in turns of %d, %d runs",
	     total, g_ncpus, OR_TURN, g_runs);
	for (run = 0; run < g_runs && run < 32; run++) {
		for (k = 0; k < 2; k++) {
			double best = 1e18;
			uint64_t all = 0;
			int rep;

			or_open(&r, k ? OR_ORDERED : OR_TIME_LOCAL,
				(size_t)OR_PAGES * getpagesize());
			/*
			 * The first drain also faults the reader's mapping in:
			 * a warm-up. Then the best of 3 (host preemption).
			 */
			for (rep = 0; rep < 4; rep++) {
				for (done = 0, cpu = 0; done < total;
				     done += OR_TURN,
				     cpu = (cpu + 1) % g_ncpus) {
					pin_cpu(cpu);
					or_loop(PEA_BENCH_OUTPUT, OR_TURN);
				}
				all += done;
				pin_cpu(OR_CONS_CPU);
				t0 = now_ns();
				or_drain(&r, all);
				t1 = now_ns();
				if (rep && (double)(t1 - t0) / done < best)
					best = (double)(t1 - t0) / done;
			}
			cost[k][run] = best;
			or_close(&r);
		}
	}
	fig_add("ord-consume-ns", "unordered", OR_SIZE, cost[0], run, "ns/rec");
	fig_add("ord-consume-ns", "ordered", OR_SIZE, cost[1], run, "ns/rec");
}

/* ---- 3. and 4. end to end through the kprobe ---- */

struct or_prod {
	pthread_t thread;
	int cpu;
	uint64_t count;
	uint64_t pace_ns;	/* 0: as fast as it can */
	int paused;
};

static int or_prod_stop, or_prod_pause;

static void *or_prod_fn(void *arg)
{
	struct or_prod *p = arg;
	uint64_t n = 0, next = 0, t, iv;

	pin_cpu(p->cpu);
	while (!__atomic_load_n(&or_prod_stop, __ATOMIC_RELAXED)) {
		if (__atomic_load_n(&or_prod_pause, __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&p->paused, 1, __ATOMIC_RELEASE);
			while (__atomic_load_n(&or_prod_pause, __ATOMIC_ACQUIRE))
				;
			__atomic_store_n(&p->paused, 0, __ATOMIC_RELEASE);
			next = 0;
			continue;
		}
		iv = __atomic_load_n(&p->pace_ns, __ATOMIC_RELAXED);
		if (iv) {
			t = now_ns();
			if (t < next)
				continue;
			next = t - next > 10000000 ? t + iv : next + iv;
		}
		syscall(SYS_getppid);
		__atomic_store_n(&p->count, ++n, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * Producers stay out of the probed syscall while the kprobe changes
 * (see e2e.c: patching it under two running vCPUs crashes TCG guests).
 */
static void or_kprobe(struct or_prod *p, int n, enum pea_bench_kp_mode mode)
{
	int i;

	__atomic_store_n(&or_prod_pause, 1, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++)
		while (!__atomic_load_n(&p[i].paused, __ATOMIC_ACQUIRE))
			usleep(100);
	module_kprobe(mode);
	__atomic_store_n(&or_prod_pause, 0, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++)
		while (__atomic_load_n(&p[i].paused, __ATOMIC_ACQUIRE))
			usleep(100);
}

static uint64_t or_prod_sum(struct or_prod *p, int n)
{
	uint64_t s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += __atomic_load_n(&p[i].count, __ATOMIC_RELAXED);
	return s;
}

/* The consumer thread: poll and read until told to stop. */
static void *or_cons_fn(void *arg)
{
	struct or_reader *r = arg;
	int err;

	pin_cpu(OR_CONS_CPU);
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		err = pea_buffer__poll(r->pb, r->window ? 1 : 20);
		if (err < 0 && err != -EINTR)
			die("poll: %s", strerror(-err));
		if (r->window)
			window_release(r, false);
	}
	return NULL;
}

/* Syscalls per second over @ms. */
static double or_rate(struct or_prod *p, int n, int ms)
{
	uint64_t c0, c1, t0, t1;

	usleep(20000);
	t0 = now_ns();
	c0 = or_prod_sum(p, n);
	usleep(ms * 1000);
	c1 = or_prod_sum(p, n);
	t1 = now_ns();
	return (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
}

/*
 * One channel phase: open @var's reader, run the consumer, switch the
 * kprobe to output for @ms; returns the syscall rate, fills @r (closed by
 * the caller).
 */
static double or_phase(struct or_reader *r, enum or_var var, bool latency,
		       bool window, struct or_prod *p, int n, int ms)
{
	pthread_t th;
	double rate;
	uint64_t t0;

	or_open(r, var, latency ? 0 : BENCH_BATCH);
	if (latency)
		or_want_latency(r, window);
	if (pthread_create(&th, NULL, or_cons_fn, r))
		die("pthread_create");
	or_kprobe(p, n, PEA_BENCH_KP_OUTPUT);
	t0 = now_ns();
	rate = or_rate(p, n, ms);
	or_kprobe(p, n, PEA_BENCH_KP_EMPTY);
	/* Let the consumer catch up, then read the rest. */
	usleep(latency ? 50000 : 20000);
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	pea_buffer__consume(r->pb);
	if (window)
		window_release(r, true);
	r->phase_ns = now_ns() - t0;
	return rate;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct_us(int64_t *v, size_t n, double q)
{
	size_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_i64);
	i = (size_t)(q * (double)(n - 1) + 0.5);
	return (double)v[i] / 1000.0;
}

static void or_e2e(void)
{
	int ms = g_quick ? 300 : 1000, lat_ms = g_quick ? 500 : 1500;
	double ret[2][32], dlv[2][32], lost[2][32];
	double p50[3][32], p99[3][32], base0, base1, rate;
	struct or_prod p[2];
	struct or_reader r;
	int run, k, i;

	note("ordered: end to end through the kprobe, producers on CPUs 1-2, consumer on CPU %d, %d runs",
	     OR_CONS_CPU, g_runs);
	memset(p, 0, sizeof(p));
	__atomic_store_n(&or_prod_stop, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&or_prod_pause, 0, __ATOMIC_RELAXED);
	/* No channel: the map the kprobe writes to is created per phase. */
	module_kprobe(PEA_BENCH_KP_EMPTY);
	for (i = 0; i < 2; i++) {
		p[i].cpu = 1 + i;
		if (pthread_create(&p[i].thread, NULL, or_prod_fn, &p[i]))
			die("pthread_create");
	}
	for (run = 0; run < g_runs && run < 32; run++) {
		/* Retained rate: baseline, unordered, baseline, ordered, baseline. */
		for (i = 0; i < 2; i++)
			__atomic_store_n(&p[i].pace_ns, 0, __ATOMIC_RELAXED);
		base0 = or_rate(p, 2, ms);
		for (k = 0; k < 2; k++) {
			rate = or_phase(&r, k ? OR_ORDERED : OR_TIME_LOCAL,
					false, false, p, 2, ms);
			dlv[k][run] = (double)r.n * 1e9 / (double)r.phase_ns;
			lost[k][run] = (double)r.lost;
			or_close(&r);
			base1 = or_rate(p, 2, ms);
			ret[k][run] = rate / ((base0 + base1) / 2);
			base0 = base1;
		}
		/* Latency: paced producers, a wake-up on every record. */
		for (i = 0; i < 2; i++)
			__atomic_store_n(&p[i].pace_ns, OR_PACE_NS,
					 __ATOMIC_RELAXED);
		or_phase(&r, OR_TIME_LOCAL, true, true, p, 2, lat_ms);
		p50[1][run] = pct_us(r.win_v, r.win_n, 0.50);
		p99[1][run] = pct_us(r.win_v, r.win_n, 0.99);
		p50[2][run] = pct_us(r.lat_v, r.lat_n, 0.50);
		p99[2][run] = pct_us(r.lat_v, r.lat_n, 0.99);
		if (r.lost)
			note("ordered: window phase lost %llu records",
			     (unsigned long long)r.lost);
		or_close(&r);
		or_phase(&r, OR_ORDERED, true, false, p, 2, lat_ms);
		p50[0][run] = pct_us(r.lat_v, r.lat_n, 0.50);
		p99[0][run] = pct_us(r.lat_v, r.lat_n, 0.99);
		if (r.lost)
			note("ordered: ordered latency phase lost %llu records",
			     (unsigned long long)r.lost);
		or_close(&r);
		note("ordered: run %d: retained %.3f / %.3f, p99 %.0f us ordered, %.0f us window",
		     run, ret[1][run], ret[0][run], p99[0][run], p99[1][run]);
	}
	__atomic_store_n(&or_prod_stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 2; i++)
		pthread_join(p[i].thread, NULL);
	module_kprobe(PEA_BENCH_KP_OFF);

	fig_add("ord-retained", "unordered", OR_SIZE, ret[0], run, "ratio");
	fig_add("ord-retained", "ordered", OR_SIZE, ret[1], run, "ratio");
	fig_add("ord-delivered", "unordered", OR_SIZE, dlv[0], run, "rec/s");
	fig_add("ord-delivered", "ordered", OR_SIZE, dlv[1], run, "rec/s");
	fig_add("ord-lost", "unordered", OR_SIZE, lost[0], run, "records");
	fig_add("ord-lost", "ordered", OR_SIZE, lost[1], run, "records");
	fig_add("ord-latency-p50-us", "ordered", OR_SIZE, p50[0], run, "us");
	fig_add("ord-latency-p50-us", "window-10ms", OR_SIZE, p50[1], run, "us");
	fig_add("ord-latency-p50-us", "unordered", OR_SIZE, p50[2], run, "us");
	fig_add("ord-latency-p99-us", "ordered", OR_SIZE, p99[0], run, "us");
	fig_add("ord-latency-p99-us", "window-10ms", OR_SIZE, p99[1], run, "us");
	fig_add("ord-latency-p99-us", "unordered", OR_SIZE, p99[2], run, "us");
}

void bench_ordered(void)
{
	or_kernel();
	or_consume();
	or_e2e();
}
