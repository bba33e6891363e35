// SPDX-License-Identifier: GPL-2.0
/*
 * pea-bench -f icount: instructions per record (issue 23).
 *
 * Run by `make bench-icount` (scripts/bench-icount.sh) in a guest with
 * one vCPU under QEMU's -icount shift=0,sleep=off: guest time advances
 * one nanosecond per instruction executed, so a duration measured in the
 * guest is an instruction count, the same on every run. The figures are
 * those of kcost.c, measured the same way (pea_bench's loop for
 * pea_output() and its pieces, a bpf_loop() in a raw_tp program run with
 * BPF_PROG_TEST_RUN for bpf_perf_event_output() and the ring buffer, the
 * consumer's drain in user space between rounds), plus the event
 * settings the ordered protocol distinguishes: TIME on CLOCK_MONOTONIC
 * and CLOCK_MONOTONIC_RAW, unordered and PEA_FLAG_ORDERED, and the
 * BPF ring buffer's bpf_ringbuf_reserve() + bpf_ringbuf_submit().
 *
 * A figure is the cheapest of IC_ROUNDS rounds of IC_N records (a timer
 * interrupt that lands in a round adds its instructions to it), less the
 * cheapest round of the empty loop of the same kind and length (the
 * loop, the call and the two clock reads), over IC_N. Before the timed
 * rounds each channel writes and drains 1.25 rings' worth of records, so
 * that every page of the consumer's mapping is faulted in. The whole
 * measurement is made twice (two passes, each channel opened afresh);
 * a figure whose passes differ by more than IC_SPREAD_MAX percent fails
 * the run (bench_icount() returns false).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "libpea.h"
#include "module/pea_bench.h"
#include "bench.h"
#include "bench.skel.h"

#define IC_CPU		0
#define IC_PAGES	256		/* 1 MiB per ring */
#define IC_N		64		/* records per timed round */
#define IC_ROUNDS	12
#define IC_PASSES	2
#define IC_SPREAD_MAX	1.0		/* percent */
#define IC_NSIZES	4

static const unsigned int ic_sizes[IC_NSIZES] = { 8, 64, 512, 4096 };

enum ic_prog {
	IC_MODULE,		/* pea_bench's loop */
	IC_BPF_PERF,		/* kc_perf */
	IC_BPF_RING,		/* kc_ring */
	IC_BPF_RING_RESERVE,	/* kc_ring_reserve */
};

enum ic_open {
	IC_NONE,		/* the memcpy floor: no channel */
	IC_CHAN,		/* chan_open_pea(): libpea or libbpf reads */
	IC_RAW,			/* a pea event of our own, emptied by data_tail */
};

/* One kernel path, and the consumer that reads what it wrote. */
struct ic_row {
	const char *name;	/* the kernel path */
	const char *reader;	/* the consumer figure's channel, or NULL */
	enum ic_prog prog;
	enum pea_bench_op op;	/* IC_MODULE */
	enum ic_open open;
	enum chan_kind kind;	/* IC_CHAN */
	enum wake_mode wake;	/* IC_CHAN */
	uint64_t pea_flags;	/* IC_CHAN, CH_PEA: pea_buffer_opts.flags */
	uint64_t sample_type;	/* PERF_SAMPLE_TIME or 0 (besides RAW) */
	int clockid;		/* IC_RAW: the TIME clock */
	uint32_t ev_flags;	/* IC_RAW: PEA_FLAG_ORDERED or 0 */
};

/*
 * Each library's default wake-up, as kcost.c: every record, ring adaptive;
 * and, for the wake-up accounting's share, pea with a watermark of the
 * whole ring and the ring buffer with BPF_RB_NO_WAKEUP ("-nowake").
 */
static const struct ic_row ic_rows[] = {
	{ .name = "memcpy", .op = PEA_BENCH_MEMCPY, .open = IC_NONE },
	{ .name = "pea", .reader = "pea", .op = PEA_BENCH_OUTPUT,
	  .open = IC_CHAN, .kind = CH_PEA, .wake = WAKE_EVERY },
	{ .name = "pea-reserve", .op = PEA_BENCH_RESERVE,
	  .open = IC_CHAN, .kind = CH_PEA, .wake = WAKE_EVERY },
	{ .name = "pea-nocopy", .op = PEA_BENCH_RESERVE_ONLY,
	  .open = IC_CHAN, .kind = CH_PEA, .wake = WAKE_EVERY },
	{ .name = "pea-nowake", .op = PEA_BENCH_OUTPUT,
	  .open = IC_CHAN, .kind = CH_PEA, .wake = WAKE_NONE },
	{ .name = "pea-local", .reader = "pea-time", .op = PEA_BENCH_OUTPUT,
	  .open = IC_CHAN, .kind = CH_PEA, .wake = WAKE_EVERY,
	  .sample_type = PERF_SAMPLE_TIME },
	{ .name = "pea-mono", .op = PEA_BENCH_OUTPUT, .open = IC_RAW,
	  .sample_type = PERF_SAMPLE_TIME, .clockid = CLOCK_MONOTONIC },
	{ .name = "ordered-mono", .reader = "ordered",
	  .op = PEA_BENCH_OUTPUT, .open = IC_CHAN, .kind = CH_PEA,
	  .wake = WAKE_EVERY, .pea_flags = PEA_BUFFER_FLAG_ORDERED },
	{ .name = "pea-raw", .op = PEA_BENCH_OUTPUT, .open = IC_RAW,
	  .sample_type = PERF_SAMPLE_TIME, .clockid = CLOCK_MONOTONIC_RAW },
	{ .name = "ordered-raw", .op = PEA_BENCH_OUTPUT, .open = IC_RAW,
	  .sample_type = PERF_SAMPLE_TIME, .clockid = CLOCK_MONOTONIC_RAW,
	  .ev_flags = PEA_FLAG_ORDERED },
	/* pea_output() stopped before the ring: the per-part profile. */
	{ .name = "pea-guard", .op = PEA_BENCH_GUARD, .open = IC_RAW,
	  .clockid = CLOCK_MONOTONIC },
	{ .name = "pea-checks", .op = PEA_BENCH_CHECKS, .open = IC_RAW,
	  .clockid = CLOCK_MONOTONIC },
	{ .name = "perf", .reader = "perf", .prog = IC_BPF_PERF,
	  .open = IC_CHAN, .kind = CH_PERF, .wake = WAKE_EVERY },
	{ .name = "ring", .reader = "ring", .prog = IC_BPF_RING,
	  .open = IC_CHAN, .kind = CH_RING, .wake = WAKE_ADAPTIVE },
	{ .name = "ring-nowake", .prog = IC_BPF_RING,
	  .open = IC_CHAN, .kind = CH_RING, .wake = WAKE_NONE },
	{ .name = "ring-reserve", .prog = IC_BPF_RING_RESERVE,
	  .open = IC_CHAN, .kind = CH_RING, .wake = WAKE_ADAPTIVE },
};

#define IC_NROWS	(sizeof(ic_rows) / sizeof(ic_rows[0]))	/* no ARRAY_SIZE here */

/* Per pass, size and row: instructions per record, kernel and consumer. */
static double ic_kern[IC_PASSES][IC_NSIZES][IC_NROWS];
static double ic_cons[IC_PASSES][IC_NSIZES][IC_NROWS];
static double ic_loop[IC_PASSES][IC_NSIZES][2];
static bool ic_done;

/* A pea event of our own on IC_CPU with flags libpea does not set. */
struct ic_raw {
	int map_fd, fd;
	void *base;
	size_t len;
};

static void ic_raw_open(struct ic_raw *w, const struct ic_row *row)
{
	struct perf_event_attr attr;
	struct pea_event_open req;
	int devfd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	attr.sample_type = PERF_SAMPLE_RAW | row->sample_type;
	attr.sample_period = 1;
	attr.wakeup_events = 1;
	/* As libpea's PEA_BUFFER_FLAG_ORDERED sets them. */
	attr.use_clockid = 1;
	attr.clockid = row->clockid;
	attr.sample_id_all = 1;
	w->map_fd = pea_map_create(BENCH_MAP_NAME, 1, 0);
	if (w->map_fd < 0)
		die("pea_map_create: %s", strerror(-w->map_fd));
	devfd = open(PEA_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (devfd < 0)
		die("open %s: %m", PEA_DEVICE_PATH);
	memset(&req, 0, sizeof(req));
	req.attr = (__u64)(uintptr_t)&attr;
	req.cpu = IC_CPU;
	req.flags = PEA_FLAG_FD_CLOEXEC | row->ev_flags;
	w->fd = ioctl(devfd, PEA_IOC_EVENT_OPEN, &req);
	if (w->fd < 0)
		die("PEA_IOC_EVENT_OPEN (%s): %m", row->name);
	close(devfd);
	w->len = (size_t)(IC_PAGES + 1) * getpagesize();
	w->base = mmap(NULL, w->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       w->fd, 0);
	if (w->base == MAP_FAILED)
		die("mmap: %m");
	if (ioctl(w->fd, PERF_EVENT_IOC_ENABLE, 0) ||
	    pea_map_update(w->map_fd, IC_CPU, w->fd))
		die("enable / map update: %m");
}

static void ic_raw_empty(struct ic_raw *w)
{
	struct perf_event_mmap_page *pg = w->base;

	__atomic_store_n(&pg->data_tail,
			 __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
}

static void ic_raw_close(struct ic_raw *w)
{
	munmap(w->base, w->len);
	close(w->fd);
	close(w->map_fd);
}

/* pea_bench's loop on IC_CPU: the ns (instructions) it took. */
static double ic_module(enum pea_bench_op op, unsigned int size,
			unsigned int count)
{
	return kc_module_loop(op, size, count, IC_PAGES * getpagesize(),
			      IC_CPU);
}

static double ic_bpf(struct bpf_program *prog, unsigned int size,
		     unsigned int count)
{
	return kc_bpf_loop(prog, size, count, IC_CPU);
}

static double ic_write(const struct ic_row *row, unsigned int size,
		       unsigned int count)
{
	switch (row->prog) {
	case IC_BPF_PERF:
		return ic_bpf(g_skel->progs.kc_perf, size, count);
	case IC_BPF_RING:
		return ic_bpf(g_skel->progs.kc_ring, size, count);
	case IC_BPF_RING_RESERVE:
		return ic_bpf(size == 8 ? g_skel->progs.kc_ring_reserve_8 :
			      size == 64 ? g_skel->progs.kc_ring_reserve_64 :
			      size == 512 ? g_skel->progs.kc_ring_reserve_512 :
			      g_skel->progs.kc_ring_reserve_4096, size, count);
	default:
		return ic_module(row->op, size, count);
	}
}

/* Read what the round wrote; the ns the reader took (with two clock reads). */
static double ic_read(const struct ic_row *row, struct chan *c,
		      struct ic_raw *w, unsigned int count)
{
	uint64_t before = c->n, t0, t1;
	int err;

	if (row->open == IC_NONE)
		return 0;
	if (row->open == IC_RAW) {
		ic_raw_empty(w);
		return 0;
	}
	t0 = now_ns();
	err = chan_consume(c);
	t1 = now_ns();
	if (err < 0)
		die("%s: consume: %s", row->name, strerror(-err));
	if (c->n - before != count || c->lost)
		die("%s: drained %llu of %u records, %llu lost", row->name,
		    (unsigned long long)(c->n - before), count,
		    (unsigned long long)c->lost);
	return (double)(t1 - t0);
}

/* The cheapest of IC_ROUNDS of @fn's empty loop of IC_N iterations. */
static double ic_empty(bool bpf)
{
	double best = 1e18, v;
	int r;

	for (r = 0; r <= IC_ROUNDS; r++) {
		v = bpf ? ic_bpf(g_skel->progs.kc_empty, 0, IC_N) :
			  ic_module(PEA_BENCH_EMPTY, 0, IC_N);
		if (r && v < best)
			best = v;
	}
	return best;
}

/* Two clock reads in a row: what ic_read()'s timing adds to a drain. */
static double ic_clock_pair(void)
{
	double best = 1e18, v;
	uint64_t t0;
	int r;

	for (r = 0; r <= IC_ROUNDS; r++) {
		t0 = now_ns();
		v = (double)(now_ns() - t0);
		if (r && v < best)
			best = v;
	}
	return best;
}

static void ic_row_run(int pass, int s, int k, double loop_mod,
		       double loop_bpf, double clk)
{
	const struct ic_row *row = &ic_rows[k];
	unsigned int size = ic_sizes[s], rec = size + 16;
	unsigned int ring = IC_PAGES * getpagesize();
	unsigned int per_round = ring / 2 / rec, warm, n;
	double kbest = 1e18, cbest = 1e18, v, d;
	struct ic_raw w;
	struct chan c;
	int r;

	memset(&c, 0, sizeof(c));
	if (row->open == IC_CHAN &&
	    chan_open_pea(&c, row->kind, row->wake, IC_PAGES, row->pea_flags,
			  row->sample_type))
		die("cannot open the channel of %s: %m", row->name);
	if (row->open == IC_RAW)
		ic_raw_open(&w, row);

	/* Fault every page of the reader's mapping in. */
	if (per_round > 4096)
		per_round = 4096;
	for (warm = 0; warm < ring + ring / 4; warm += n * rec) {
		n = per_round;
		ic_write(row, size, n);
		ic_read(row, &c, &w, n);
		if (row->open == IC_NONE)
			break;
	}
	for (r = 0; r < IC_ROUNDS; r++) {
		v = ic_write(row, size, IC_N);
		d = ic_read(row, &c, &w, IC_N);
		if (v < kbest)
			kbest = v;
		if (d < cbest)
			cbest = d;
	}
	v = row->prog == IC_MODULE ? loop_mod : loop_bpf;
	ic_kern[pass][s][k] = (kbest - v) / IC_N;
	ic_cons[pass][s][k] = row->reader ? (cbest - clk) / IC_N : 0;

	if (row->open == IC_CHAN)
		chan_close(&c);
	if (row->open == IC_RAW)
		ic_raw_close(&w);
}

static double ic_spread(double a, double b)
{
	double lo = a < b ? a : b, hi = a < b ? b : a;

	if (hi == 0)
		return 0;
	if (lo <= 0)
		return 100;
	return (hi - lo) / lo * 100;
}

static bool ic_check(const char *what, const char *name, unsigned int size,
		     const double *v)
{
	double sp = ic_spread(v[0], v[1]);

	if (sp <= IC_SPREAD_MAX)
		return true;
	note("icount: %s %s at %u bytes: %.1f and %.1f, %.2f%% apart (> %.0f%%)",
	     what, name, size, v[0], v[1], sp, IC_SPREAD_MAX);
	return false;
}

/**
 * bench_icount() - instructions per record, measured twice
 *
 * Return: true if every figure of the second pass is within
 * IC_SPREAD_MAX percent of the first.
 */
bool bench_icount(void)
{
	double loop_mod, loop_bpf, clk, v[IC_PASSES], sp[1];
	unsigned int s, k;
	bool ok = true;
	int pass, p;

	note("icount: CPU %d, %d KiB rings, %d rounds of %d records, %d passes",
	     IC_CPU, IC_PAGES * getpagesize() / 1024, IC_ROUNDS, IC_N,
	     IC_PASSES);
	pin_cpu(IC_CPU);
	for (pass = 0; pass < IC_PASSES; pass++) {
		for (s = 0; s < IC_NSIZES; s++) {
			loop_mod = ic_empty(false);
			loop_bpf = ic_empty(true);
			clk = ic_clock_pair();
			ic_loop[pass][s][0] = loop_mod / IC_N;
			ic_loop[pass][s][1] = loop_bpf / IC_N;
			for (k = 0; k < IC_NROWS; k++)
				ic_row_run(pass, s, k, loop_mod, loop_bpf, clk);
			note("icount: pass %d size %u done", pass + 1,
			     ic_sizes[s]);
		}
	}

	for (s = 0; s < IC_NSIZES; s++) {
		unsigned int size = ic_sizes[s];

		for (k = 0; k < IC_NROWS; k++) {
			const struct ic_row *row = &ic_rows[k];

			for (p = 0; p < IC_PASSES; p++)
				v[p] = ic_kern[p][s][k];
			fig_add("ic-output", row->name, size, v, IC_PASSES,
				"instr/rec");
			sp[0] = ic_spread(v[0], v[1]);
			fig_add("ic-output-spread", row->name, size, sp, 1,
				"%");
			ok &= ic_check("output", row->name, size, v);
			if (!row->reader)
				continue;
			for (p = 0; p < IC_PASSES; p++)
				v[p] = ic_cons[p][s][k];
			fig_add("ic-consume", row->reader, size, v, IC_PASSES,
				"instr/rec");
			sp[0] = ic_spread(v[0], v[1]);
			fig_add("ic-consume-spread", row->reader, size, sp, 1,
				"%");
			ok &= ic_check("consume", row->reader, size, v);
		}
		for (p = 0; p < IC_PASSES; p++)
			v[p] = ic_loop[p][s][0];
		fig_add("ic-output", "loop-module", size, v, IC_PASSES,
			"instr/rec");
		for (p = 0; p < IC_PASSES; p++)
			v[p] = ic_loop[p][s][1];
		fig_add("ic-output", "loop-bpf", size, v, IC_PASSES,
			"instr/rec");
	}
	ic_done = true;
	return ok;
}

static double ic_mean(const double (*fig)[IC_NSIZES][IC_NROWS], int s,
		      int k)
{
	double sum = 0;
	int p;

	for (p = 0; p < IC_PASSES; p++)
		sum += fig[p][s][k];
	return sum / IC_PASSES;
}

static int ic_find(const char *name)
{
	unsigned int k;

	for (k = 0; k < IC_NROWS; k++)
		if (!strcmp(ic_rows[k].name, name))
			return (int)k;
	die("icount: no row %s", name);
}

static void ic_print_rows(const char *what,
			  const double (*fig)[IC_NSIZES][IC_NROWS], int s,
			  bool reader, int ring)
{
	unsigned int k;

	for (k = 0; k < IC_NROWS; k++) {
		const struct ic_row *row = &ic_rows[k];
		double a = fig[0][s][k], b = fig[1][s][k];
		double rb = ic_mean(fig, s, ring);

		if (reader && !row->reader)
			continue;
		printf("%-8s %5u %-14s| %10.1f | %10.1f | %6.2f%% | %7.3f\n",
		       what, ic_sizes[s], reader ? row->reader : row->name,
		       a, b, ic_spread(a, b), rb ? (a + b) / 2 / rb : 0);
	}
}

/*
 * issue 23's per-part profile of pea_output(), from rows that stop
 * before a part or leave it out, and the ring buffer's for comparison:
 * each part is the difference of two rows' means (a row alone when @b
 * is NULL; less the memcpy floor's when @less_copy).
 */
static const struct ic_part {
	const char *name;
	const char *a, *b;
	bool less_copy;
} ic_parts[] = {
	{ "pea: call, preemption, nest slot, flags", "pea-guard", NULL, false },
	{ "pea: map slot, event checks", "pea-checks", "pea-guard", false },
	{ "pea: claim, header, stats, publish", "pea-nowake", "pea-checks",
	  true },
	{ "pea: payload copy (memcpy floor)", "memcpy", NULL, false },
	{ "pea: wake-up accounting", "pea", "pea-nowake", false },
	{ "pea: TIME on local_clock()", "pea-local", "pea", false },
	{ "pea: TIME on CLOCK_MONOTONIC", "pea-mono", "pea", false },
	{ "pea: ordered protocol", "ordered-mono", "pea-mono", false },
	{ "ring: reserve + submit", "ring-reserve", NULL, false },
	{ "ring: output's rest, less the copy", "ring-nowake", "ring-reserve",
	  true },
	{ "ring: wake-up accounting", "ring", "ring-nowake", false },
};

#define IC_NPARTS	(sizeof(ic_parts) / sizeof(ic_parts[0]))

static double ic_part(const struct ic_part *pt, int pass, int s)
{
	double v = ic_kern[pass][s][ic_find(pt->a)];

	if (pt->b)
		v -= ic_kern[pass][s][ic_find(pt->b)];
	if (pt->less_copy)
		v -= ic_kern[pass][s][ic_find("memcpy")];
	return v;
}

static void ic_print_parts(void)
{
	double v[IC_PASSES];
	unsigned int k, s;
	int p;

	printf("# per-part profile (instructions per record, mean of the passes):\n");
	printf("%-42s", "part");
	for (s = 0; s < IC_NSIZES; s++)
		printf(" | %6u B", ic_sizes[s]);
	printf("\n");
	for (k = 0; k < IC_NPARTS; k++) {
		printf("%-42s", ic_parts[k].name);
		for (s = 0; s < IC_NSIZES; s++) {
			for (p = 0; p < IC_PASSES; p++)
				v[p] = ic_part(&ic_parts[k], p, s);
			printf(" | %8.1f", (v[0] + v[1]) / 2);
			fig_add("ic-part", ic_parts[k].name, ic_sizes[s], v,
				IC_PASSES, "instr/rec");
		}
		printf("\n");
	}
}

/* "a/b" of the means, and whether it is at most @target. */
static void ic_print_target(const char *label, int s, const char *a,
			    const char *b, double target, bool reader)
{
	const double (*fig)[IC_NSIZES][IC_NROWS] = reader ? ic_cons : ic_kern;
	double x = ic_mean(fig, s, ic_find(a)), y = ic_mean(fig, s, ic_find(b));
	double r = y ? x / y : 0;

	printf("#   %5u B  %-34s %6.3f  (target <= %.2f: %s)\n", ic_sizes[s],
	       label, r, target, r <= target ? "met" : "missed");
}

/**
 * icount_print() - the icount table, if bench_icount() ran
 *
 * One row per path and size: the instructions per record of each pass,
 * their spread and the ratio of their mean to the BPF ring buffer's
 * (bpf_ringbuf_output() for the kernel, ring_buffer__consume() for the
 * readers); then issue 23's targets.
 */
void icount_print(void)
{
	int ring = ic_find("ring");
	unsigned int s;

	if (!ic_done)
		return;
	printf("\n# instructions per record (guest ns under QEMU -icount %s), %s\n",
	       "shift=0,sleep=off", "1 vCPU,");
	printf("# the cheapest of %d rounds of %d records less the empty loop; two passes\n",
	       IC_ROUNDS, IC_N);
	printf("%-8s %5s %-14s| %10s | %10s | %7s | %7s\n", "side", "size",
	       "path", "pass 1", "pass 2", "spread", "/ring");
	for (s = 0; s < IC_NSIZES; s++) {
		ic_print_rows("kernel", ic_kern, s, false, ring);
		ic_print_rows("reader", ic_cons, s, true, ring);
	}
	printf("# issue 23's targets (ratios of the means of the two passes):\n");
	for (s = 0; s < IC_NSIZES; s++) {
		ic_print_target("pea / ring", s, "pea", "ring", 1.0, false);
		ic_print_target("pea-reserve / ring", s, "pea-reserve", "ring",
				1.0, false);
		ic_print_target("pea-nocopy / ring-reserve", s, "pea-nocopy",
				"ring-reserve", 1.0, false);
		ic_print_target("ordered-mono / pea-mono", s, "ordered-mono",
				"pea-mono", 1.10, false);
		ic_print_target("ordered-raw / pea-raw", s, "ordered-raw",
				"pea-raw", 1.10, false);
		ic_print_target("reader ordered / pea-time", s, "ordered-mono",
				"pea-local", 1.15, true);
	}
	ic_print_parts();
}
