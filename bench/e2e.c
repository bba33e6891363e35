// SPDX-License-Identifier: GPL-2.0
/*
 * pea-bench: end to end through a kprobe (figure 2).
 *
 * Producer threads pinned to CPUs 1 (and 2) call getppid() in a loop; a
 * kprobe on the syscall writes a 64-byte record per call into the channel;
 * one consumer thread on CPU 3 reads it with the channel's library. The
 * kprobe is pea_bench's (pre-handler calling pea_output()) for pea and a
 * BPF kprobe program for perf and ring; the baseline is pea_bench's kprobe
 * returning at once. A second set runs pea's own kprobe producer
 * (PEA_MAP_IOC_ATTACH_PROBE: a struct pea_probe_record per hit) against
 * BPF programs writing the same 120-byte record, and a third pea's
 * tracepoint producer (PEA_MAP_IOC_ATTACH_TP on syscalls:sys_enter_getppid:
 * a struct pea_tp_record and the 20-byte raw entry per call) against BPF
 * tracepoint programs writing the same 84 bytes. Phases alternate
 * baseline, channel, baseline, ...
 * within one run, and each channel phase's syscall rate divided by the
 * mean of the baselines around it is its retained rate: under TCG the
 * absolute rates swing from run to run, the retained rate does not.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/pea.h>
#include <bpf/libbpf.h>
#include "libpea.h"
#include "module/pea_bench.h"
#include "bench.h"
#include "bench.skel.h"

#define E2E_PAGES	256
#define E2E_CONS_CPU	3
#define E2E_MAX_PHASES	16

struct producer {
	pthread_t thread;
	int cpu;
	uint64_t count;
	int paused;		/* acknowledges producers_pause */
	uint64_t interval_ns;	/* 0: as fast as it can; else paced */
};

struct consumer {
	pthread_t thread;
	struct chan *c;
	bool busy;
	int stop;
	unsigned int flush_req, flush_ack;
	int err;
};

static int producers_stop;
/*
 * Producers stay out of the probed syscall while a kprobe is registered
 * or unregistered: patching the ftrace site while two vCPUs run through
 * it crashes the TCG guest (a jump to 0 from the ftrace trampoline, seen
 * with two producers only).
 */
static int producers_pause;

static void *producer_fn(void *arg)
{
	struct producer *p = arg;
	uint64_t n = 0, next = 0, iv, t;

	pin_cpu(p->cpu);
	while (!__atomic_load_n(&producers_stop, __ATOMIC_RELAXED)) {
		if (__atomic_load_n(&producers_pause, __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&p->paused, 1, __ATOMIC_RELEASE);
			while (__atomic_load_n(&producers_pause,
					       __ATOMIC_ACQUIRE))
				;
			__atomic_store_n(&p->paused, 0, __ATOMIC_RELEASE);
			next = 0;
			continue;
		}
		iv = __atomic_load_n(&p->interval_ns, __ATOMIC_RELAXED);
		if (iv) {
			/* Paced: one call per interval; a stall of up to
			 * 10 ms (a vCPU preempted on the host) is caught up.
			 */
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

static void *consumer_fn(void *arg)
{
	struct consumer *k = arg;
	unsigned int req;
	int err;

	pin_cpu(E2E_CONS_CPU);
	while (!__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE)) {
		if (k->busy)
			err = chan_consume(k->c);
		else
			err = chan_poll(k->c, 20);
		if (err < 0 && err != -EINTR && !k->err)
			k->err = err;
		req = __atomic_load_n(&k->flush_req, __ATOMIC_ACQUIRE);
		if (req != k->flush_ack) {
			err = chan_consume(k->c);
			if (err < 0 && !k->err)
				k->err = err;
			__atomic_store_n(&k->flush_ack, req, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

/* Have the consumer drain everything; wait for it. */
static void consumer_flush(struct consumer *k)
{
	unsigned int req = k->flush_req + 1;

	__atomic_store_n(&k->flush_req, req, __ATOMIC_RELEASE);
	while (__atomic_load_n(&k->flush_ack, __ATOMIC_ACQUIRE) != req)
		usleep(1000);
}

static struct pea_bench_kstats module_kstats(void)
{
	struct pea_bench_kstats s;

	if (ioctl(g_bench_fd, PEA_BENCH_IOC_KSTATS, &s))
		die("PEA_BENCH_IOC_KSTATS: %m");
	return s;
}

/*
 * What a channel phase runs: pea_bench's kprobe, pea's own kprobe
 * producer, or a BPF program.
 */
struct e2e_chan {
	const char *name;		/* figure channel */
	enum chan_kind kind;
	struct bpf_program *prog;	/* NULL: pea_bench's or pea's kprobe */
	bool pea_probe;			/* pea's PEA_MAP_IOC_ATTACH_PROBE */
	bool tp;			/* on BENCH_TP_SYS:BENCH_TP_NAME: pea's
					 * PEA_MAP_IOC_ATTACH_TP (no @prog) or
					 * a BPF tracepoint program */
};

/* What phase_on() attached. */
struct e2e_attach {
	struct bpf_link *link;
	int pea_link;			/* link fd of pea's producer, or -1 */
};

static int pea_probe_attach(int map_fd)
{
	struct pea_probe_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_PROBE_F_CLOEXEC;
	snprintf(a.symbol, sizeof(a.symbol), "%s", BENCH_KP_SYMBOL);
	a.id = 1;
	a.filter_cpu = -1;	/* every CPU; filter_tgid 0: every task */
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);
	if (fd < 0)
		die("PEA_MAP_IOC_ATTACH_PROBE %s: %m", BENCH_KP_SYMBOL);
	return fd;
}

/* The trace event id of BENCH_TP_SYS:BENCH_TP_NAME, from tracefs. */
static unsigned int bench_tp_id(void)
{
	static unsigned int id;
	char buf[32];
	FILE *f;

	if (id)
		return id;
	f = fopen("/sys/kernel/tracing/events/" BENCH_TP_SYS "/" BENCH_TP_NAME
		  "/id", "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		die("tracefs id of %s:%s: %m", BENCH_TP_SYS, BENCH_TP_NAME);
	fclose(f);
	id = (unsigned int)strtoul(buf, NULL, 10);
	return id;
}

static int pea_tp_attach(int map_fd)
{
	struct pea_tp_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_TP_F_CLOEXEC;
	a.id = 1;
	a.event_id = bench_tp_id();
	a.filter_cpu = -1;
	snprintf(a.name, sizeof(a.name), "%s:%s", BENCH_TP_SYS, BENCH_TP_NAME);
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &a);
	if (fd < 0)
		die("PEA_MAP_IOC_ATTACH_TP %s: %m", a.name);
	return fd;
}

static void pause_producers(struct producer *p, int n, bool pause)
{
	int i;

	__atomic_store_n(&producers_pause, pause, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++)
		while (__atomic_load_n(&p[i].paused, __ATOMIC_ACQUIRE) != pause)
			usleep(100);
}

static struct e2e_attach phase_on(const struct e2e_chan *ec,
				  const struct chan *c, struct producer *p,
				  int n)
{
	struct e2e_attach at = { NULL, -1 };

	pause_producers(p, n, true);
	if (ec->tp && !ec->prog) {
		module_kprobe(PEA_BENCH_KP_OFF);
		at.pea_link = pea_tp_attach(c->pea_map_fd);
	} else if (ec->tp) {
		module_kprobe(PEA_BENCH_KP_OFF);
		g_skel->bss->tp_event_id = bench_tp_id();
		at.link = bpf_program__attach_tracepoint(ec->prog, BENCH_TP_SYS,
							 BENCH_TP_NAME);
		if (!at.link)
			die("attach %s: %m", bpf_program__name(ec->prog));
	} else if (ec->pea_probe) {
		module_kprobe(PEA_BENCH_KP_OFF);
		at.pea_link = pea_probe_attach(c->pea_map_fd);
	} else if (!ec->prog) {
		module_kprobe(PEA_BENCH_KP_OUTPUT);
	} else {
		module_kprobe(PEA_BENCH_KP_OFF);
		at.link = bpf_program__attach_kprobe(ec->prog, false,
						     BENCH_KP_SYMBOL);
		if (!at.link)
			die("attach %s: %m", bpf_program__name(ec->prog));
	}
	pause_producers(p, n, false);
	return at;
}

static void phase_off(struct e2e_attach *at, struct producer *p, int n)
{
	pause_producers(p, n, true);
	bpf_link__destroy(at->link);
	if (at->pea_link >= 0)
		close(at->pea_link);
	module_kprobe(PEA_BENCH_KP_EMPTY);
	pause_producers(p, n, false);
}

static uint64_t prod_sum(struct producer *p, int n)
{
	uint64_t s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += __atomic_load_n(&p[i].count, __ATOMIC_RELAXED);
	return s;
}

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Syscalls per second over one phase of @ms milliseconds. */
static double phase_rate(struct producer *p, int n, int ms)
{
	uint64_t c0, c1, t0, t1;

	usleep(20000);		/* let the switch settle */
	t0 = now_ns();
	c0 = prod_sum(p, n);
	usleep(ms * 1000);
	c1 = prod_sum(p, n);
	t1 = now_ns();
	return (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
}

struct e2e_result {
	int n;
	double retained[E2E_MAX_PHASES];
	double delivered[E2E_MAX_PHASES];	/* records/s */
	double lost[E2E_MAX_PHASES];		/* producer-side drops */
	double silent[E2E_MAX_PHASES];		/* drops never reported */
	double cons_cpu[E2E_MAX_PHASES];	/* consumer CPU time / wall */
	double base[E2E_MAX_PHASES + 1];	/* baseline syscalls/s */
};

/* Records dropped by pea's events of @c since the last call. */
static uint64_t pea_events_lost(const struct chan *c)
{
	static uint64_t seen;
	uint64_t sum = 0, d;
	int i, n = (int)pea_buffer__buffer_cnt(c->pb);

	for (i = 0; i < n; i++) {
		struct pea_event_stats st;

		if (ioctl(pea_buffer__buffer_fd(c->pb, i), PEA_EVENT_IOC_STATS,
			  &st))
			die("PEA_EVENT_IOC_STATS: %m");
		sum += st.lost;
	}
	d = sum >= seen ? sum - seen : sum;	/* a new channel starts at 0 */
	seen = sum;
	return d;
}

/* Producer-side drops of a channel so far (and cleared for pea). */
static uint64_t producer_lost(const struct e2e_chan *ec, const struct chan *c)
{
	if (ec->pea_probe || (ec->tp && !ec->prog))
		return pea_events_lost(c);
	if (!ec->prog) {
		struct pea_bench_kstats s = module_kstats();

		return s.nospc + s.other;
	}
	return __atomic_exchange_n(&g_skel->bss->kp_fail, 0, __ATOMIC_RELAXED);
}

static void e2e_config(const struct e2e_chan *ec, enum wake_mode wake,
		       int nprod, int ms, struct e2e_result *res)
{
	struct producer prod[2];
	clockid_t cons_clock;
	struct consumer k;
	struct chan c;
	int i, err;

	memset(res, 0, sizeof(*res));
	note("%s/%s/%dp", ec->name, wake_name(wake), nprod);
	err = chan_open(&c, ec->kind, wake, E2E_PAGES);
	if (err)
		die("%s/%s: open: %s", ec->name, wake_name(wake), strerror(-err));
	memset(&k, 0, sizeof(k));
	k.c = &c;
	k.busy = wake == WAKE_NONE;
	if (pthread_create(&k.thread, NULL, consumer_fn, &k))
		die("pthread_create");
	if (pthread_getcpuclockid(k.thread, &cons_clock))
		die("pthread_getcpuclockid");

	module_kprobe(PEA_BENCH_KP_EMPTY);
	producers_stop = 0;
	for (i = 0; i < nprod; i++) {
		prod[i].cpu = 1 + i;
		prod[i].count = 0;
		prod[i].paused = 0;
		prod[i].interval_ns = 0;
		if (pthread_create(&prod[i].thread, NULL, producer_fn, &prod[i]))
			die("pthread_create");
	}

	producer_lost(ec, &c);
	res->base[0] = phase_rate(prod, nprod, ms);
	for (i = 0; i < g_runs && i < E2E_MAX_PHASES; i++) {
		struct e2e_attach at;
		uint64_t n0, l0, lost, t_on, t_off, c_on, c_off;
		double rate;

		consumer_flush(&k);
		n0 = c.n;
		l0 = c.lost;
		at = phase_on(ec, &c, prod, nprod);
		t_on = now_ns();
		c_on = clock_ns(cons_clock);
		rate = phase_rate(prod, nprod, ms);
		c_off = clock_ns(cons_clock);
		t_off = now_ns();
		phase_off(&at, prod, nprod);
		consumer_flush(&k);
		lost = producer_lost(ec, &c);
		/*
		 * Records delivered per second the channel was attached with
		 * the producers running (they pause around the switches).
		 */
		res->delivered[i] = (double)(c.n - n0) * 1e9 /
				    (double)(t_off - t_on);
		res->lost[i] = (double)lost;
		res->cons_cpu[i] = (double)(c_off - c_on) /
				   (double)(t_off - t_on);
		res->silent[i] = lost > c.lost - l0 ?
				 (double)(lost - (c.lost - l0)) : 0;
		res->base[i + 1] = phase_rate(prod, nprod, ms);
		res->retained[i] = rate / ((res->base[i] + res->base[i + 1]) / 2);
		res->n = i + 1;
	}

	__atomic_store_n(&producers_stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < nprod; i++)
		pthread_join(prod[i].thread, NULL);
	module_kprobe(PEA_BENCH_KP_OFF);
	__atomic_store_n(&k.stop, 1, __ATOMIC_RELEASE);
	pthread_join(k.thread, NULL);
	if (k.err)
		note("%s/%s: consumer error %s", ec->name, wake_name(wake),
		     strerror(-k.err));
	chan_close(&c);
}

/* Figures e2e-WHAT-[TAG-]WAKE-Np of one configuration. */
static void e2e_record(const char *chan, const char *tag, unsigned int size,
		       enum wake_mode wake, int nprod,
		       const struct e2e_result *r, bool base)
{
	static const char *const what[] = {
		"retained", "delivered", "lost", "unreported", "consumer-cpu",
	};
	const double *v[] = {
		r->retained, r->delivered, r->lost, r->silent, r->cons_cpu,
	};
	static const char *const unit[] = {
		"ratio", "rec/s", "rec", "rec", "cpus",
	};
	char name[64];
	int i;

	for (i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "e2e-%s-%s%s%s-%dp", what[i],
			 tag, *tag ? "-" : "", wake_name(wake), nprod);
		fig_add(name, chan, size, v[i], r->n, unit[i]);
		if (i == 1 && base)
			fig_add(name, "base-syscalls", size, r->base,
				r->n + 1, "rec/s");
	}
}

void bench_e2e(void)
{
	const struct e2e_chan chans[] = {
		{ "pea", CH_PEA, NULL, false, false },
		{ "perf", CH_PERF, g_skel->progs.kp_perf, false, false },
		{ "ring", CH_RING, g_skel->progs.kp_ring, false, false },
	};
	const struct e2e_chan probe[] = {
		{ "pea", CH_PEA, NULL, true, false },
		{ "perf", CH_PERF, g_skel->progs.kp_perf_rec, false, false },
		{ "ring", CH_RING, g_skel->progs.kp_ring_rec, false, false },
	};
	const struct e2e_chan tp[] = {
		{ "pea", CH_PEA, NULL, false, true },
		{ "perf", CH_PERF, g_skel->progs.tp_perf_rec, false, true },
		{ "ring", CH_RING, g_skel->progs.tp_ring_rec, false, true },
	};
	const struct e2e_chan empty = {
		"bpf-empty", CH_RING, g_skel->progs.kp_empty, false, false,
	};
	int ms = g_quick ? 150 : 300;
	struct e2e_result r;
	int nprod, w, i;

	note("end to end: kprobe on %s, %d-byte records, %d ms phases",
	     BENCH_KP_SYMBOL, BENCH_KP_SIZE, ms);
	pin_cpu(0);
	for (nprod = g_nprod_first; nprod <= 2; nprod++) {
		/* The BPF kprobe mechanism alone, for the record. */
		e2e_config(&empty, WAKE_NONE, nprod, ms, &r);
		e2e_record("bpf-empty", "", BENCH_KP_SIZE, WAKE_EVERY, nprod,
			   &r, false);
		for (w = 0; w < WAKE_NR; w++) {
			for (i = 0; i < 3; i++) {
				if (!chan_supports(chans[i].kind, w))
					continue;
				e2e_config(&chans[i], w, nprod, ms, &r);
				e2e_record(chans[i].name, "", BENCH_KP_SIZE, w,
					   nprod, &r, i == 0);
			}
			note("%dp %s done", nprod, wake_name(w));
		}
	}

	/* pea's own kprobe producer against BPF writing the same record. */
	for (w = 0; w < WAKE_NR; w++) {
		for (i = 0; i < 3; i++) {
			if (!chan_supports(probe[i].kind, w))
				continue;
			e2e_config(&probe[i], w, 1, ms, &r);
			e2e_record(probe[i].name, "probe",
				   sizeof(struct pea_probe_record), w, 1, &r,
				   i == 0);
		}
		note("probe 1p %s done", wake_name(w));
	}

	/*
	 * pea's tracepoint producer against BPF tracepoint programs writing
	 * the same bytes (a struct pea_tp_record and the raw entry).
	 */
	for (w = 0; w < WAKE_NR; w++) {
		for (i = 0; i < 3; i++) {
			if (!chan_supports(tp[i].kind, w))
				continue;
			e2e_config(&tp[i], w, 1, ms, &r);
			e2e_record(tp[i].name, "tp",
				   sizeof(struct pea_tp_record) + BENCH_TP_RAW,
				   w, 1, &r, i == 0);
		}
		note("tracepoint 1p %s done", wake_name(w));
	}
}

/*
 * Loss-free rate (issue 5: "zero loss at the highest rate the kernel
 * perf buffer sustains without loss"). One producer paced at a target
 * rate, small rings (LF_PAGES per CPU), a wake-up on every record (both
 * libraries' default): the rate rises by LF_STEP per phase from LF_START
 * until a phase loses a record or the producer reaches less than half
 * the pace (it tops out). The highest rate reached by a lossless phase
 * is the channel's loss-free rate. Then pea
 * and perf run again paced at perf's median loss-free rate, and their
 * losses there are reported. The BPF ring buffer is left out: its one
 * ring was sized at load time, 64x larger than these.
 */
#define LF_PAGES	8
#define LF_START	10000.0
#define LF_STEP		1.4
#define LF_MAX_STEPS	12

struct lf_ctx {
	const struct e2e_chan *ec;
	struct chan c;
	struct consumer k;
	struct producer prod;
};

static void lf_start(struct lf_ctx *x, const struct e2e_chan *ec)
{
	int err;

	memset(x, 0, sizeof(*x));
	x->ec = ec;
	err = chan_open(&x->c, ec->kind, WAKE_EVERY, LF_PAGES);
	if (err)
		die("%s: open: %s", ec->name, strerror(-err));
	x->k.c = &x->c;
	if (pthread_create(&x->k.thread, NULL, consumer_fn, &x->k))
		die("pthread_create");
	module_kprobe(PEA_BENCH_KP_EMPTY);
	producers_stop = 0;
	x->prod.cpu = 1;
	if (pthread_create(&x->prod.thread, NULL, producer_fn, &x->prod))
		die("pthread_create");
	producer_lost(ec, &x->c);
}

static void lf_stop(struct lf_ctx *x)
{
	__atomic_store_n(&producers_stop, 1, __ATOMIC_RELAXED);
	pthread_join(x->prod.thread, NULL);
	module_kprobe(PEA_BENCH_KP_OFF);
	__atomic_store_n(&x->k.stop, 1, __ATOMIC_RELEASE);
	pthread_join(x->k.thread, NULL);
	chan_close(&x->c);
}

/* One phase paced at @rate: the rate reached; *lost gets the drops. */
static double lf_phase(struct lf_ctx *x, double rate, int ms, uint64_t *lost)
{
	struct e2e_attach at;
	double got;

	__atomic_store_n(&x->prod.interval_ns, (uint64_t)(1e9 / rate),
			 __ATOMIC_RELAXED);
	consumer_flush(&x->k);
	producer_lost(x->ec, &x->c);
	at = phase_on(x->ec, &x->c, &x->prod, 1);
	got = phase_rate(&x->prod, 1, ms);
	phase_off(&at, &x->prod, 1);
	consumer_flush(&x->k);
	*lost = producer_lost(x->ec, &x->c);
	return got;
}

/* The loss-free rate of @ec, one sweep. */
static double lf_sweep(const struct e2e_chan *ec, int ms)
{
	double rate = LF_START, got, best = 0;
	struct lf_ctx x;
	uint64_t lost;
	int i;

	lf_start(&x, ec);
	for (i = 0; i < LF_MAX_STEPS; i++, rate *= LF_STEP) {
		got = lf_phase(&x, rate, ms, &lost);
		if (lost) {
			note("%s: %.0f/s lost %llu", ec->name, got,
			     (unsigned long long)lost);
			break;
		}
		if (got > best)
			best = got;
		if (got < 0.5 * rate) {
			note("%s: the producer tops out at %.0f/s, no loss",
			     ec->name, got);
			break;
		}
	}
	lf_stop(&x);
	return best;
}

void bench_lossfree(void)
{
	const struct e2e_chan chans[] = {
		{ "pea", CH_PEA, NULL, false, false },
		{ "perf", CH_PERF, g_skel->progs.kp_perf, false, false },
	};
	double max[2][16], lost_at[2][16], perf_max;
	int ms = g_quick ? 150 : 300, run, k, runs = g_runs < 16 ? g_runs : 16;
	struct lf_ctx x;
	uint64_t lost;

	note("loss-free rate: %d-page rings, wake-up on every record, %d ms phases",
	     LF_PAGES, ms);
	pin_cpu(0);
	for (run = 0; run < runs; run++)
		for (k = 0; k < 2; k++)
			max[k][run] = lf_sweep(&chans[k], ms);
	perf_max = median(max[1], runs);
	note("perf's loss-free rate: %.0f/s (median)", perf_max);
	for (k = 0; k < 2; k++) {
		lf_start(&x, &chans[k]);
		for (run = 0; run < runs; run++) {
			lf_phase(&x, perf_max, ms, &lost);
			lost_at[k][run] = (double)lost;
		}
		lf_stop(&x);
	}
	for (k = 0; k < 2; k++) {
		fig_add("lossfree-max-rate", chans[k].name, BENCH_KP_SIZE,
			max[k], runs, "rec/s");
		fig_add("lossfree-lost-at-perf-max", chans[k].name,
			BENCH_KP_SIZE, lost_at[k], runs, "rec");
	}
}
