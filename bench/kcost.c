// SPDX-License-Identifier: GPL-2.0
/*
 * pea-bench: in-kernel output cost (figure 1) and consumer cost (figure 3).
 *
 * On one CPU, each channel writes a round of records in a tight loop
 * timed inside the kernel: pea_output() in pea_bench's loop (ioctl), and
 * bpf_perf_event_output() / bpf_ringbuf_output() in a bpf_loop() of a
 * raw_tp program run with BPF_PROG_TEST_RUN, timed with
 * bpf_ktime_get_ns(). The loop's own cost (an empty loop of each kind) is
 * subtracted. A round fits in the ring, and the ring is drained with the
 * channel's library between rounds, so nothing is dropped; the drain is
 * timed too: that is the consumer cost. The floor is a memcpy of the same
 * bytes into a ring-sized buffer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "libpea.h"
#include "module/pea_bench.h"
#include "bench.h"
#include "bench.skel.h"

#define KC_CPU		1
#define KC_PAGES	256		/* 1 MiB per CPU */
#define KC_EMPTY_N	16384

static const unsigned int kc_sizes[] = { 8, 64, 512, 4096 };

enum kc_row {
	KC_FLOOR,	/* memcpy */
	KC_PEA,
	KC_PEA_RESERVE,	/* pea_output_reserve + memcpy + pea_output_commit */
	KC_PEA_NOCOPY,	/* reserve + commit without the payload copy */
	KC_PERF,
	KC_RING,
	KC_NR,
};

static const char *const kc_row_names[KC_NR] = {
	[KC_FLOOR] = "memcpy", [KC_PEA] = "pea", [KC_PEA_NOCOPY] = "pea-nocopy",
	[KC_PEA_RESERVE] = "pea-reserve",
	[KC_PERF] = "perf", [KC_RING] = "ring",
};

/**
 * kc_module_loop() - pea_bench's in-kernel loop of @count records
 * @op: what each iteration does
 * @size: record bytes
 * @count: iterations
 * @ring_bytes: the ring's size
 * @cpu: the CPU the loop must have run on
 *
 * Return: the ns (under icount: instructions) the loop took.
 */
double kc_module_loop(enum pea_bench_op op, unsigned int size,
		      unsigned int count, unsigned int ring_bytes, int cpu)
{
	struct pea_bench_loop a;

	memset(&a, 0, sizeof(a));
	snprintf(a.map, sizeof(a.map), "%s", BENCH_MAP_NAME);
	a.op = op;
	a.size = size;
	a.count = count;
	a.ring_bytes = ring_bytes;
	if (ioctl(g_bench_fd, PEA_BENCH_IOC_LOOP, &a))
		die("PEA_BENCH_IOC_LOOP op %d: %m", op);
	if (a.cpu != cpu)
		die("the loop ran on CPU %d, not %d", a.cpu, cpu);
	if (a.n_ok != count)
		die("op %d size %u: %llu of %u records written (last error %lld)",
		    op, size, (unsigned long long)a.n_ok, count,
		    (long long)a.ret);
	return (double)a.ns;
}

/**
 * kc_bpf_loop() - the BPF program @prog's loop of @count records on @cpu
 * @prog: one of bench.bpf.c's kc_* programs
 * @size: record bytes
 * @count: iterations
 * @cpu: where BPF_PROG_TEST_RUN runs it
 *
 * Return: the ns (under icount: instructions) the loop took.
 */
double kc_bpf_loop(struct bpf_program *prog, unsigned int size,
		   unsigned int count, int cpu)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);
	int err;

	g_skel->bss->kc_size = size;
	g_skel->bss->kc_count = count;
	g_skel->bss->kc_ok = 0;
	g_skel->bss->kc_err = 0;
	err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);
	if (err)
		die("BPF_PROG_TEST_RUN %s: %s", bpf_program__name(prog),
		    strerror(-err));
	if (g_skel->bss->kc_ok != count)
		die("%s size %u: %llu of %u records written (last error %lld)",
		    bpf_program__name(prog), size,
		    (unsigned long long)g_skel->bss->kc_ok, count,
		    (long long)g_skel->bss->kc_err);
	return (double)g_skel->bss->kc_ns;
}

/* Drain @c, check that @count records arrived; return the ns it took. */
static double drain(struct chan *c, unsigned int count)
{
	uint64_t before = c->n, t0, t1;
	int err;

	t0 = now_ns();
	err = chan_consume(c);
	t1 = now_ns();
	if (err < 0)
		die("%s: consume: %s", chan_name(c->kind), strerror(-err));
	if (c->n - before != count || c->lost)
		die("%s: drained %llu of %u records, %llu lost",
		    chan_name(c->kind), (unsigned long long)(c->n - before),
		    count, (unsigned long long)c->lost);
	return (double)(t1 - t0);
}

/* One round of row @row: returns the loop's ns, adds the drain's. */
static double kc_round(enum kc_row row, struct chan *ch, unsigned int size,
		       unsigned int count, double *drain_ns)
{
	unsigned int ring_bytes = KC_PAGES * getpagesize();
	double ns;

	switch (row) {
	case KC_FLOOR:
		return kc_module_loop(PEA_BENCH_MEMCPY, size, count,
				      ring_bytes, KC_CPU);
	case KC_PEA:
	case KC_PEA_RESERVE:
	case KC_PEA_NOCOPY:
		ns = kc_module_loop(row == KC_PEA ? PEA_BENCH_OUTPUT :
				    row == KC_PEA_RESERVE ? PEA_BENCH_RESERVE :
				    PEA_BENCH_RESERVE_ONLY, size, count, 0,
				    KC_CPU);
		*drain_ns += drain(&ch[CH_PEA], count);
		return ns;
	case KC_PERF:
		ns = kc_bpf_loop(g_skel->progs.kc_perf, size, count, KC_CPU);
		*drain_ns += drain(&ch[CH_PERF], count);
		return ns;
	case KC_RING:
		ns = kc_bpf_loop(g_skel->progs.kc_ring, size, count, KC_CPU);
		*drain_ns += drain(&ch[CH_RING], count);
		return ns;
	default:
		return 0;
	}
}

void bench_kcost(void)
{
	struct chan ch[CH_NR];
	unsigned int s, run, total;
	int k, r;

	note("in-kernel output cost: CPU %d, %d KiB rings, %d runs",
	     KC_CPU, KC_PAGES * getpagesize() / 1024, g_runs);
	pin_cpu(KC_CPU);
	/* Each library's default wake-up: perf and pea every record, ring adaptive. */
	if (chan_open(&ch[CH_PEA], CH_PEA, WAKE_EVERY, KC_PAGES) ||
	    chan_open(&ch[CH_PERF], CH_PERF, WAKE_EVERY, KC_PAGES) ||
	    chan_open(&ch[CH_RING], CH_RING, WAKE_ADAPTIVE, KC_PAGES))
		die("cannot open the channels: %m");

	for (s = 0; s < sizeof(kc_sizes) / sizeof(kc_sizes[0]); s++) {
		unsigned int size = kc_sizes[s];
		unsigned int rec = size + 16;
		unsigned int per_round = KC_PAGES * getpagesize() / 2 / rec;
		double cost[KC_NR][32], cons[KC_NR][32];
		double loop_pea[32], loop_bpf[32];

		if (per_round > 4096)
			per_round = 4096;
		total = size >= 4096 ? 2048 : g_quick ? 4096 : 16384;
		if (total < per_round)
			total = per_round;

		for (run = 0; run < (unsigned int)g_runs && run < 32; run++) {
			/* The loops alone, per iteration. */
			loop_pea[run] = kc_module_loop(PEA_BENCH_EMPTY, 0,
						       KC_EMPTY_N, 0, KC_CPU) /
					KC_EMPTY_N;
			loop_bpf[run] = kc_bpf_loop(g_skel->progs.kc_empty, 0,
						    KC_EMPTY_N, KC_CPU) /
					KC_EMPTY_N;
			for (k = 0; k < KC_NR; k++) {
				double ns = 0, dns = 0, loop;
				unsigned int done = 0, n;

				/* Warm-up round, not counted. */
				kc_round(k, ch, size, per_round, &dns);
				dns = 0;
				for (r = 0; done < total; r++) {
					n = per_round;
					if (n > total - done)
						n = total - done;
					ns += kc_round(k, ch, size, n, &dns);
					done += n;
				}
				loop = (k == KC_PERF || k == KC_RING) ?
					loop_bpf[run] : loop_pea[run];
				if (k == KC_FLOOR)
					loop = 0;
				cost[k][run] = ns / done - loop;
				cons[k][run] = dns / done;
			}
		}
		for (k = 0; k < KC_NR; k++) {
			fig_add("output-ns", kc_row_names[k], size, cost[k],
				run, "ns/rec");
			if (k != KC_FLOOR && k != KC_PEA_NOCOPY &&
			    k != KC_PEA_RESERVE)
				fig_add("consume-ns", kc_row_names[k], size,
					cons[k], run, "ns/rec");
		}
		fig_add("output-ns", "loop-module", size, loop_pea, run,
			"ns/rec");
		fig_add("output-ns", "loop-bpf", size, loop_bpf, run, "ns/rec");
		note("size %u done", size);
	}
	for (k = 0; k < CH_NR; k++)
		chan_close(&ch[k]);
	for (k = 0; k < CH_NR; k++)
		fig_add_one("mem-bytes-per-cpu", chan_name(k), 0,
			    (double)chan_mem_per_cpu(k, KC_PAGES), "bytes");
}
