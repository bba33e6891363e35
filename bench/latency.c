// SPDX-License-Identifier: GPL-2.0
/*
 * pea-bench: wake-up latency (figure 4).
 *
 * A producer thread on CPU 1 calls getppid() once every millisecond; the
 * kprobe writes a record whose first word is the CLOCK_MONOTONIC time of
 * the output call; the consumer on CPU 3 sleeps in the channel's poll
 * and its callback takes the difference.
 *
 * Two settings: a wake-up on every record; and batched wake-ups (a 64 KiB
 * watermark, which 200 records never reach), where the perf buffer and
 * the ring buffer deliver only because the consumer consumes every ring
 * when its BENCH_POLL_MS poll times out (what their users do to bound the
 * latency), while pea adds PEA_FLAG_FLUSH with BENCH_FLUSH_US.
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

#define LAT_SAMPLES	200
#define LAT_PAGES	64

struct lat_consumer {
	struct chan *c;
	bool batch;
	int stop;
};

static void *lat_consumer_fn(void *arg)
{
	struct lat_consumer *k = arg;

	pin_cpu(3);
	while (!__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE)) {
		if (!chan_poll(k->c, BENCH_POLL_MS) && k->batch)
			chan_consume(k->c);
	}
	return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* One run: p50 and p99 in microseconds. */
static void lat_run(enum chan_kind kind, bool batch, double *p50, double *p99)
{
	enum wake_mode wake = !batch ? WAKE_EVERY :
			      kind == CH_PEA ? WAKE_FLUSH : WAKE_BATCH;
	struct bpf_program *prog = kind == CH_PERF ? g_skel->progs.kp_perf :
				   g_skel->progs.kp_ring;
	struct bpf_link *link = NULL;
	struct lat_consumer k;
	struct chan c;
	pthread_t t;
	int i, err;

	err = chan_open(&c, kind, wake, LAT_PAGES);
	if (err)
		die("latency %s: open: %s", chan_name(kind), strerror(-err));
	c.lat_cap = LAT_SAMPLES;
	c.lat = calloc(c.lat_cap, sizeof(*c.lat));
	if (!c.lat)
		die("out of memory");
	memset(&k, 0, sizeof(k));
	k.c = &c;
	k.batch = batch;
	if (pthread_create(&t, NULL, lat_consumer_fn, &k))
		die("pthread_create");
	if (kind == CH_PEA) {
		module_kprobe(PEA_BENCH_KP_OUTPUT);
	} else {
		link = bpf_program__attach_kprobe(prog, false, BENCH_KP_SYMBOL);
		if (!link)
			die("attach: %m");
	}
	pin_cpu(1);
	usleep(20000);
	for (i = 0; i < LAT_SAMPLES; i++) {
		syscall(SYS_getppid);
		usleep(1000);
	}
	usleep(100000);
	if (link)
		bpf_link__destroy(link);
	else
		module_kprobe(PEA_BENCH_KP_OFF);
	__atomic_store_n(&k.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	pin_cpu(0);

	if (!c.lat_n)
		die("latency %s: no record arrived", chan_name(kind));
	qsort(c.lat, c.lat_n, sizeof(*c.lat), cmp_i64);
	*p50 = c.lat[c.lat_n / 2] / 1000.0;
	*p99 = c.lat[(c.lat_n * 99) / 100] / 1000.0;
	chan_close(&c);
}

void bench_latency(void)
{
	static const char *const names[2][2] = {
		{ "latency-p50-us", "latency-p99-us" },
		{ "latency-batch-p50-us", "latency-batch-p99-us" },
	};
	double p50[CH_NR][16], p99[CH_NR][16];
	int run, k, batch;

	for (batch = 0; batch < 2; batch++) {
		note("wake-up latency (%s): %d records per run, one per ms",
		     batch ? "64 KiB watermark; pea with a 1 ms flush" :
		     "every record", LAT_SAMPLES);
		for (run = 0; run < g_runs && run < 16; run++)
			for (k = 0; k < CH_NR; k++)
				lat_run(k, batch, &p50[k][run], &p99[k][run]);
		for (k = 0; k < CH_NR; k++) {
			fig_add(names[batch][0], chan_name(k), BENCH_KP_SIZE,
				p50[k], run, "us");
			fig_add(names[batch][1], chan_name(k), BENCH_KP_SIZE,
				p99[k], run, "us");
		}
	}
}
