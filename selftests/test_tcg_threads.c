// SPDX-License-Identifier: GPL-2.0
/*
 * Whether two vCPUs of the test guest run at the same time, as the
 * harness says (PEA_TCG from pea.tcg=, scripts/vm-run.sh):
 *
 *   single: QEMU runs every vCPU on one host thread, in turn; no two
 *           vCPUs ever execute at once (what `make check` uses for the
 *           tests that patch kernel text, docs/checking.md).
 *   multi:  each vCPU on a host thread of its own (-accel
 *           tcg,thread=multi): the mt-* kernels of `make check` run the
 *           ring, storm and ordered-delivery tests with real parallelism.
 *
 * A writer pinned to CPU 1 increments a shared counter as fast as it can
 * while a reader pinned to CPU 0 loads it back to back and counts, per
 * 100 ms window, the loads that found a value other than the one before.
 * The reader's two loads are a few instructions apart: the counter can
 * only move between them if the writer's vCPU runs while the reader's
 * does. One host thread switches vCPUs on interrupts and its kick timer,
 * some 100 times a second here (about 10 moves a window); two vCPUs
 * running at once move it some 20,000 times a window. The host is shared
 * (two cores, other guests, builds), so two vCPU threads are not always
 * on a core together: multi needs one window of WINDOW_MOVES moves within
 * MULTI_MAX_S seconds, single must stay below that for SINGLE_WINDOWS
 * windows. (The tasks' CPU time proves nothing here: the guest charges a
 * running task for wall time whether or not QEMU executes its vCPU.)
 */
#include <time.h>
#include "pea_test.h"

#define WINDOW_MS	100
#define WINDOW_MOVES	1000
#define MULTI_MAX_S	30
#define SINGLE_WINDOWS	10

static unsigned long counter;
static int stop;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *writer(void *arg)
{
	unsigned long v = 0;

	(void)arg;
	pt_pin(1);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		__atomic_store_n(&counter, ++v, __ATOMIC_RELAXED);
	return NULL;
}

/* One window on CPU 0: how many of its loads saw the counter move. */
static unsigned long long window(unsigned long long *loads)
{
	unsigned long long end = now_ns() + WINDOW_MS * 1000000ULL, m = 0;
	unsigned long prev, v;
	int i;

	prev = __atomic_load_n(&counter, __ATOMIC_RELAXED);
	do {
		for (i = 0; i < 4096; i++) {
			v = __atomic_load_n(&counter, __ATOMIC_RELAXED);
			m += v != prev;
			prev = v;
		}
		*loads += 4096;
	} while (now_ns() < end);
	return m;
}

/* The test module's anchors parameter: 'Y', 'N' or 0. */
static char anchors(void)
{
	FILE *f = fopen("/sys/module/pea_selftest/parameters/anchors", "r");
	char v[8] = "";

	if (!f)
		return 0;
	if (!fgets(v, sizeof(v), f))
		v[0] = 0;
	fclose(f);
	return v[0];
}

int main(void)
{
	unsigned long long loads = 0, moves = 0, m, best = 0;
	const char *mode = getenv("PEA_TCG");
	int w, windows, multi, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char a;
	pthread_t t;

	PT_OK(mode && (!strcmp(mode, "single") || !strcmp(mode, "multi")),
	      "the harness says how QEMU runs the vCPUs: PEA_TCG=%s",
	      mode ? mode : "(unset)");
	if (!mode || ncpu < 2) {
		pt_diag("%d CPUs", ncpu);
		PT_OK(0, "two CPUs to run on");
		return pt_done();
	}
	multi = !strcmp(mode, "multi");
	/* The test module leaves its anchors out there (pt_st()). */
	pt_st();
	a = anchors();
	PT_OK(a == (multi ? 'N' : 'Y'),
	      "the test module holds its software-counter anchors only under one thread: anchors=%c",
	      a ? a : '?');
	windows = multi ? MULTI_MAX_S * 1000 / WINDOW_MS : SINGLE_WINDOWS;
	pt_pin(0);
	if (pthread_create(&t, NULL, writer, NULL))
		pt_fatal("pthread_create");
	/* The writer has reached CPU 1 once it wrote. */
	while (!__atomic_load_n(&counter, __ATOMIC_RELAXED))
		;
	for (w = 0; w < windows; w++) {
		m = window(&loads);
		moves += m;
		if (m > best)
			best = m;
		if (multi && best >= WINDOW_MOVES)
			break;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	pt_diag("%d windows of %d ms: %llu of %llu back-to-back loads on CPU 0 saw CPU 1's counter move, at most %llu in one window",
		w < windows ? w + 1 : w, WINDOW_MS, moves, loads, best);
	if (multi)
		PT_OK(best >= WINDOW_MOVES,
		      "multi: in one %d ms window CPU 0 saw CPU 1 write between two of its loads %llu times (>= %d): the vCPUs ran at once",
		      WINDOW_MS, best, WINDOW_MOVES);
	else
		PT_OK(best < WINDOW_MOVES,
		      "single: in no %d ms window did CPU 0 see CPU 1 write between two of its loads %d times (at most %llu): the vCPUs ran in turn",
		      WINDOW_MS, WINDOW_MOVES, best);
	return pt_done();
}
