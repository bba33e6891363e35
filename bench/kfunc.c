// SPDX-License-Identifier: GPL-2.0
/*
 * pea-bench -f kfunc: BPF programs writing records into a perf event
 * array, a BPF ring buffer and a pea map (issue 20).
 *
 * The same XDP program (bench/kfunc.bpf.c) writes the same 64-byte and
 * 512-byte records through bpf_perf_event_output(), bpf_ringbuf_output(),
 * bpf_ringbuf_reserve() + submit, pea_kf_output() and pea_kf_reserve() +
 * pea_kf_rec_data() + pea_kf_commit().
 *
 * kfunc-ns: per record in the kernel, as kcost.c measures its rows: on
 * one CPU a bpf_loop() of records timed inside the program
 * (BPF_PROG_TEST_RUN), less the empty loop, rounds that fit in the ring
 * drained by the channel's library between them (nothing dropped). Under
 * `make bench-icount` (one vCPU, icount) the figures are instructions.
 *
 * kfunc-retained: end to end. Producer threads on CPUs 1 and 2 run the
 * program (KX_E2E_N records per run) back to back while a consumer on
 * CPU 3 reads with the channel's library (each library's default
 * wake-up); the runs per second divided by those of the empty loop's
 * program in the phases before and after it. kfunc-lost: the share of
 * records written that never reached the consumer; kfunc-silent: of
 * those, the share its library never reported as lost.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "libpea.h"
#include "bench.h"
#include "bench.skel.h"
#include "bench_kfunc.skel.h"

#define KX_PAGES	256		/* 1 MiB per CPU */
#define KX_EMPTY_N	16384
#define KX_E2E_N	64		/* records per run, end to end */
#define KX_E2E_MS	400
#define KX_CONS_CPU	3

enum kx_row { KX_PERF, KX_RING, KX_RINGRES, KX_PEA, KX_PEARES, KX_NR };

static const char *const kx_names[KX_NR] = {
	[KX_PERF] = "perf", [KX_RING] = "ring",
	[KX_RINGRES] = "ring-reserve", [KX_PEA] = "pea",
	[KX_PEARES] = "pea-reserve",
};

static const enum chan_kind kx_chan[KX_NR] = {
	[KX_PERF] = CH_PERF, [KX_RING] = CH_RING, [KX_RINGRES] = CH_RING,
	[KX_PEA] = CH_PEA, [KX_PEARES] = CH_PEA,
};

static const unsigned int kx_sizes[] = { 64, 512 };

static struct bench_kfunc *kx;
static int kx_rows = KX_NR;	/* KX_PEARES without zero-copy kfuncs */

static struct bpf_program *kx_prog(enum kx_row row, unsigned int size)
{
	bool big = size == 512;

	switch (row) {
	case KX_PERF:
		return big ? kx->progs.kx_perf_512 : kx->progs.kx_perf_64;
	case KX_RING:
		return big ? kx->progs.kx_ring_512 : kx->progs.kx_ring_64;
	case KX_RINGRES:
		return big ? kx->progs.kx_ringres_512 : kx->progs.kx_ringres_64;
	case KX_PEA:
		return big ? kx->progs.kx_pea_512 : kx->progs.kx_pea_64;
	default:
		return big ? kx->progs.kx_pearres_512 : kx->progs.kx_pearres_64;
	}
}

/* One run of @prog, @count records, on the calling thread's CPU. */
static int kx_run(struct bpf_program *prog, unsigned int count)
{
	unsigned char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt,
		    .data_size_in = sizeof(pkt));

	kx->bss->kx_count = count;
	return bpf_prog_test_run_opts(bpf_program__fd(prog), &o);
}

/* The loop's ns (under icount: instructions); all @count written. */
static double kx_loop(struct bpf_program *prog, unsigned int count)
{
	int err = kx_run(prog, count);

	if (err)
		die("BPF_PROG_TEST_RUN %s: %s", bpf_program__name(prog),
		    strerror(-err));
	if (kx->bss->kx_ok != count)
		die("%s: %llu of %u records written (last error %lld)",
		    bpf_program__name(prog),
		    (unsigned long long)kx->bss->kx_ok, count,
		    (long long)kx->bss->kx_err);
	return (double)kx->bss->kx_ns;
}

static void kx_drain(struct chan *c, unsigned int count)
{
	uint64_t before = c->n;
	int err = chan_consume(c);

	if (err < 0)
		die("%s: consume: %s", chan_name(c->kind), strerror(-err));
	if (c->n - before != count || c->lost)
		die("%s: drained %llu of %u records, %llu lost",
		    chan_name(c->kind), (unsigned long long)(c->n - before),
		    count, (unsigned long long)c->lost);
}

static void kx_cost(struct chan *ch, int cpu)
{
	unsigned int s, run, total, done, n;
	double cost[KX_NR][32], loop[32], ns;
	int k;

	pin_cpu(cpu);
	for (s = 0; s < sizeof(kx_sizes) / sizeof(kx_sizes[0]); s++) {
		unsigned int size = kx_sizes[s];
		unsigned int per_round = KX_PAGES * getpagesize() / 2 /
					 (size + 16);

		if (per_round > 4096)
			per_round = 4096;
		total = g_quick ? 4096 : 16384;
		for (run = 0; run < (unsigned int)g_runs && run < 32; run++) {
			loop[run] = kx_loop(kx->progs.kx_empty, KX_EMPTY_N) /
				    KX_EMPTY_N;
			for (k = 0; k < kx_rows; k++) {
				struct bpf_program *p = kx_prog(k, size);
				struct chan *c = &ch[kx_chan[k]];

				kx_loop(p, per_round);	/* warm-up */
				kx_drain(c, per_round);
				for (ns = 0, done = 0; done < total; done += n) {
					n = per_round;
					if (n > total - done)
						n = total - done;
					ns += kx_loop(p, n);
					kx_drain(c, n);
				}
				cost[k][run] = ns / done - loop[run];
			}
		}
		for (k = 0; k < kx_rows; k++)
			fig_add("kfunc-ns", kx_names[k], size, cost[k], run,
				"ns/rec");
		fig_add("kfunc-ns", "loop-xdp", size, loop, run, "ns/rec");
	}
}

struct kx_prod {
	pthread_t thread;
	int cpu;
	uint64_t runs;
};

static struct bpf_program *kx_e2e_prog;	/* what producers run now */
static int kx_stop, kx_cons_stop;

static void *kx_prod_fn(void *arg)
{
	struct kx_prod *p = arg;
	struct bpf_program *prog;
	unsigned char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt,
		    .data_size_in = sizeof(pkt));

	pin_cpu(p->cpu);
	while (!__atomic_load_n(&kx_stop, __ATOMIC_ACQUIRE)) {
		prog = __atomic_load_n(&kx_e2e_prog, __ATOMIC_ACQUIRE);
		if (bpf_prog_test_run_opts(bpf_program__fd(prog), &o))
			break;
		__atomic_store_n(&p->runs, p->runs + 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *kx_cons_fn(void *arg)
{
	struct chan *c = arg;

	pin_cpu(KX_CONS_CPU);
	while (!__atomic_load_n(&kx_cons_stop, __ATOMIC_ACQUIRE))
		chan_poll(c, 20);
	chan_consume(c);
	return NULL;
}

/* Runs per second of @prog over a phase; their sum into *@runs. */
static double kx_phase(struct kx_prod *p, int np, struct bpf_program *prog,
		       uint64_t *runs)
{
	uint64_t r0 = 0, r1 = 0, t0, t1;
	int i;

	__atomic_store_n(&kx_e2e_prog, prog, __ATOMIC_RELEASE);
	usleep(20000);
	for (i = 0; i < np; i++)
		r0 += __atomic_load_n(&p[i].runs, __ATOMIC_RELAXED);
	t0 = now_ns();
	usleep(KX_E2E_MS * 1000);
	for (i = 0; i < np; i++)
		r1 += __atomic_load_n(&p[i].runs, __ATOMIC_RELAXED);
	t1 = now_ns();
	if (runs)
		*runs = r1 - r0;
	return (double)(r1 - r0) * 1e9 / (double)(t1 - t0);
}

/*
 * One channel end to end: baseline, channel, baseline. The records
 * tried are the programs' own count (kx_tried); the consumer drains
 * everything before the count of what it received is taken.
 */
static void kx_e2e_row(enum kx_row k, unsigned int size, struct chan *c,
		       double *retained, double *lost, double *silent)
{
	struct kx_prod p[2] = { { .cpu = 1 }, { .cpu = 2 } };
	uint64_t before = c->n, lost0 = c->lost, tried0, tried;
	pthread_t cons;
	double b0, r, b1;
	int i;

	kx_stop = 0;
	kx_cons_stop = 0;
	kx->bss->kx_count = KX_E2E_N;
	tried0 = __atomic_load_n(&kx->bss->kx_tried, __ATOMIC_RELAXED);
	__atomic_store_n(&kx_e2e_prog, kx->progs.kx_empty, __ATOMIC_RELEASE);
	if (pthread_create(&cons, NULL, kx_cons_fn, c))
		die("pthread_create");
	for (i = 0; i < 2; i++)
		if (pthread_create(&p[i].thread, NULL, kx_prod_fn, &p[i]))
			die("pthread_create");
	b0 = kx_phase(p, 2, kx->progs.kx_empty, NULL);
	r = kx_phase(p, 2, kx_prog(k, size), NULL);
	b1 = kx_phase(p, 2, kx->progs.kx_empty, NULL);
	__atomic_store_n(&kx_stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++)
		pthread_join(p[i].thread, NULL);
	usleep(50000);
	__atomic_store_n(&kx_cons_stop, 1, __ATOMIC_RELEASE);
	pthread_join(cons, NULL);
	*retained = 100.0 * r / ((b0 + b1) / 2);
	tried = __atomic_load_n(&kx->bss->kx_tried, __ATOMIC_RELAXED) - tried0;
	*lost = 100.0 * (double)(tried - (c->n - before)) / (double)tried;
	/* Lost and never reported to the reader (the ring buffer has no
	 * report: all its losses are silent).
	 */
	*silent = 100.0 * ((double)tried - (double)(c->n - before) -
			   (double)(c->lost - lost0)) / (double)tried;
}

static void kx_e2e(struct chan *ch)
{
	double ret[KX_NR][32], lost[KX_NR][32], silent[KX_NR][32];
	unsigned int s, run;
	int k;

	for (s = 0; s < sizeof(kx_sizes) / sizeof(kx_sizes[0]); s++) {
		for (run = 0; run < (unsigned int)g_runs && run < 32; run++)
			for (k = 0; k < kx_rows; k++)
				kx_e2e_row(k, kx_sizes[s], &ch[kx_chan[k]],
					   &ret[k][run], &lost[k][run],
					   &silent[k][run]);
		for (k = 0; k < kx_rows; k++) {
			fig_add("kfunc-retained", kx_names[k], kx_sizes[s],
				ret[k], run, "%");
			fig_add("kfunc-lost", kx_names[k], kx_sizes[s],
				lost[k], run, "%");
			fig_add("kfunc-silent", kx_names[k], kx_sizes[s],
				silent[k], run, "%");
		}
	}
}

/**
 * bench_kfunc() - the kfunc figures
 * @cpu: where the in-kernel cost is measured
 * @e2e: also the end-to-end figures (they want 4 CPUs)
 *
 * Return: false when pea has no zero-copy kfuncs here (noted; the
 * programs do not load), true otherwise.
 */
bool bench_kfunc(int cpu, bool e2e)
{
	struct pea_map_info info;
	struct chan ch[CH_NR];
	int err, k;

	kx = bench_kfunc__open();
	if (!kx)
		die("bench_kfunc__open: %m");
	if (bpf_map__reuse_fd(kx->maps.perf_map,
			      bpf_map__fd(g_skel->maps.perf_map)) ||
	    bpf_map__reuse_fd(kx->maps.ring_map,
			      bpf_map__fd(g_skel->maps.ring_map)))
		die("bpf_map__reuse_fd: %m");
	err = bench_kfunc__load(kx);
	if (err) {
		/* No zero-copy kfuncs here (PREEMPT_RT): the other rows. */
		bench_kfunc__destroy(kx);
		kx = bench_kfunc__open();
		if (!kx)
			die("bench_kfunc__open: %m");
		bpf_program__set_autoload(kx->progs.kx_pearres_64, false);
		bpf_program__set_autoload(kx->progs.kx_pearres_512, false);
		if (bpf_map__reuse_fd(kx->maps.perf_map,
				      bpf_map__fd(g_skel->maps.perf_map)) ||
		    bpf_map__reuse_fd(kx->maps.ring_map,
				      bpf_map__fd(g_skel->maps.ring_map)))
			die("bpf_map__reuse_fd: %m");
		err = bench_kfunc__load(kx);
		if (err) {
			note("kfunc: pea's kfuncs do not load here (%s): no figures",
			     strerror(-err));
			bench_kfunc__destroy(kx);
			return false;
		}
		note("kfunc: no zero-copy kfuncs here: no pea-reserve rows");
		kx_rows = KX_PEARES;
	}
	if (chan_open(&ch[CH_PEA], CH_PEA, WAKE_EVERY, KX_PAGES) ||
	    chan_open(&ch[CH_PERF], CH_PERF, WAKE_EVERY, KX_PAGES) ||
	    chan_open(&ch[CH_RING], CH_RING, WAKE_ADAPTIVE, KX_PAGES))
		die("cannot open the channels: %m");
	if (pea_map_get_info(ch[CH_PEA].pea_map_fd, &info) || !info.bpf_handle)
		die("the pea map has no BPF handle");
	kx->bss->kx_handle = info.bpf_handle;
	for (k = 0; k < (int)sizeof(kx->bss->kx_payload); k++)
		kx->bss->kx_payload[k] = (unsigned char)(k * 7 + 1);
	note("kfunc: in-kernel cost on CPU %d, %d runs", cpu, g_runs);
	kx_cost(ch, cpu);
	if (e2e) {
		note("kfunc: end to end, producers on CPUs 1 and 2");
		kx_e2e(ch);
	}
	for (k = 0; k < CH_NR; k++)
		chan_close(&ch[k]);
	bench_kfunc__destroy(kx);
	return true;
}
