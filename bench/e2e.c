// SPDX-License-Identifier: GPL-2.0
/*
 * pea-bench: end to end through a kprobe (figure 2).
 *
 * Producer threads pinned to CPUs 1 (and 2) call getppid() in a loop; a
 * kprobe on the syscall writes a 64-byte record per call into the channel;
 * one consumer thread on CPU 3 reads it with the channel's library. The
 * kprobe is pea_bench's (pre-handler calling pea_output()) for pea and a
 * BPF kprobe program for perf and ring; the baseline is pea_bench's kprobe
 * returning at once. Phases alternate baseline, channel, baseline, ...
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
	int paused;	/* acknowledges producers_pause */
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
	uint64_t n = 0;

	pin_cpu(p->cpu);
	while (!__atomic_load_n(&producers_stop, __ATOMIC_RELAXED)) {
		if (__atomic_load_n(&producers_pause, __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&p->paused, 1, __ATOMIC_RELEASE);
			while (__atomic_load_n(&producers_pause,
					       __ATOMIC_ACQUIRE))
				;
			__atomic_store_n(&p->paused, 0, __ATOMIC_RELEASE);
			continue;
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

static void module_kprobe(enum pea_bench_kp_mode mode)
{
	struct pea_bench_kprobe a;

	memset(&a, 0, sizeof(a));
	snprintf(a.map, sizeof(a.map), "%s", BENCH_MAP_NAME);
	snprintf(a.symbol, sizeof(a.symbol), "%s", BENCH_KP_SYMBOL);
	a.mode = mode;
	a.size = BENCH_KP_SIZE;
	if (ioctl(g_bench_fd, PEA_BENCH_IOC_KPROBE, &a))
		die("PEA_BENCH_IOC_KPROBE mode %d: %m", mode);
}

static struct pea_bench_kstats module_kstats(void)
{
	struct pea_bench_kstats s;

	if (ioctl(g_bench_fd, PEA_BENCH_IOC_KSTATS, &s))
		die("PEA_BENCH_IOC_KSTATS: %m");
	return s;
}

/* What a channel phase runs: pea_bench's kprobe or a BPF program. */
struct e2e_chan {
	const char *name;		/* figure channel */
	enum chan_kind kind;
	struct bpf_program *prog;	/* NULL: pea_bench's kprobe output */
};

static void pause_producers(struct producer *p, int n, bool pause)
{
	int i;

	__atomic_store_n(&producers_pause, pause, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++)
		while (__atomic_load_n(&p[i].paused, __ATOMIC_ACQUIRE) != pause)
			usleep(100);
}

static struct bpf_link *phase_on(const struct e2e_chan *ec,
				 struct producer *p, int n)
{
	struct bpf_link *link = NULL;

	pause_producers(p, n, true);
	if (!ec->prog) {
		module_kprobe(PEA_BENCH_KP_OUTPUT);
	} else {
		module_kprobe(PEA_BENCH_KP_OFF);
		link = bpf_program__attach_kprobe(ec->prog, false,
						  BENCH_KP_SYMBOL);
		if (!link)
			die("attach %s: %m", bpf_program__name(ec->prog));
	}
	pause_producers(p, n, false);
	return link;
}

static void phase_off(struct bpf_link *link, struct producer *p, int n)
{
	pause_producers(p, n, true);
	bpf_link__destroy(link);
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
	double base[E2E_MAX_PHASES + 1];	/* baseline syscalls/s */
};

/* Producer-side drops of a channel so far (and cleared for pea). */
static uint64_t producer_lost(const struct e2e_chan *ec)
{
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

	module_kprobe(PEA_BENCH_KP_EMPTY);
	producers_stop = 0;
	for (i = 0; i < nprod; i++) {
		prod[i].cpu = 1 + i;
		prod[i].count = 0;
		prod[i].paused = 0;
		if (pthread_create(&prod[i].thread, NULL, producer_fn, &prod[i]))
			die("pthread_create");
	}

	producer_lost(ec);
	res->base[0] = phase_rate(prod, nprod, ms);
	for (i = 0; i < g_runs && i < E2E_MAX_PHASES; i++) {
		struct bpf_link *link;
		uint64_t n0, l0, lost, t_on, t_off;
		double rate;

		consumer_flush(&k);
		n0 = c.n;
		l0 = c.lost;
		link = phase_on(ec, prod, nprod);
		t_on = now_ns();
		rate = phase_rate(prod, nprod, ms);
		t_off = now_ns();
		phase_off(link, prod, nprod);
		consumer_flush(&k);
		lost = producer_lost(ec);
		/*
		 * Records delivered per second the channel was attached with
		 * the producers running (they pause around the switches).
		 */
		res->delivered[i] = (double)(c.n - n0) * 1e9 /
				    (double)(t_off - t_on);
		res->lost[i] = (double)lost;
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

static void e2e_record(const char *chan, enum wake_mode wake, int nprod,
		       const struct e2e_result *r, bool base)
{
	char name[40];

	snprintf(name, sizeof(name), "e2e-retained-%s-%dp", wake_name(wake),
		 nprod);
	fig_add(name, chan, BENCH_KP_SIZE, r->retained, r->n, "ratio");
	snprintf(name, sizeof(name), "e2e-delivered-%s-%dp", wake_name(wake),
		 nprod);
	fig_add(name, chan, BENCH_KP_SIZE, r->delivered, r->n, "rec/s");
	if (base)
		fig_add(name, "base-syscalls", BENCH_KP_SIZE, r->base,
			r->n + 1, "rec/s");
	snprintf(name, sizeof(name), "e2e-lost-%s-%dp", wake_name(wake), nprod);
	fig_add(name, chan, BENCH_KP_SIZE, r->lost, r->n, "rec");
	snprintf(name, sizeof(name), "e2e-unreported-%s-%dp", wake_name(wake),
		 nprod);
	fig_add(name, chan, BENCH_KP_SIZE, r->silent, r->n, "rec");
}

void bench_e2e(void)
{
	const struct e2e_chan chans[] = {
		{ "pea", CH_PEA, NULL },
		{ "perf", CH_PERF, g_skel->progs.kp_perf },
		{ "ring", CH_RING, g_skel->progs.kp_ring },
	};
	const struct e2e_chan empty = {
		"bpf-empty", CH_RING, g_skel->progs.kp_empty,
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
		e2e_record("bpf-empty", WAKE_EVERY, nprod, &r, false);
		for (w = 0; w < WAKE_NR; w++) {
			for (i = 0; i < 3; i++) {
				if (!chan_supports(chans[i].kind, w))
					continue;
				e2e_config(&chans[i], w, nprod, ms, &r);
				e2e_record(chans[i].name, w, nprod, &r, i == 0);
			}
			note("%dp %s done", nprod, wake_name(w));
		}
	}
}
