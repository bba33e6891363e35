// SPDX-License-Identifier: GPL-2.0
/*
 * pea-bench: one fprobe link over N functions against N kprobe links
 * (figure "fprobe", issue 21).
 *
 * The functions are pea_bench's pea_bench_fp_000 .. (N - 1), N 50 and 200,
 * which PEA_BENCH_IOC_FPCALL calls round by round, preemption off, on the
 * pinned CPU. For each N and each way (one PEA_MAP_IOC_ATTACH_FPROBE, or
 * N PEA_MAP_IOC_ATTACH_PROBE):
 *   - attach: the wall time of the attach ioctls;
 *   - detach: the wall time of closing the link fds (each kprobe link's
 *     close waits for its own grace period; the fprobe's for one);
 *   - per hit, filtered: the links filter on another process (a child
 *     that waits), so every hit runs the probe mechanism and the filter
 *     and writes nothing; the calls' time above the same calls without a
 *     probe (before and after), over the calls;
 *   - per hit, record: the record written into a 1 MiB ring per CPU,
 *     drained after each loop (nothing lost).
 * Where the kernel has no fprobe (6.1) the kprobe figures alone, noted.
 * Under `make bench-icount` (BENCH_ARGS="-f fprobe", one vCPU) the per-hit
 * figures are instructions.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <linux/pea.h>
#include "libpea.h"
#include "module/pea_bench.h"
#include "bench.h"

#define FP_PAGES	256	/* 1 MiB per CPU: a loop's records fit */
#define FP_CALLS	5000	/* calls per loop (quick: 2000) */

enum fp_way { FP_FPROBE, FP_KPROBES };

static char fp_names[PEA_BENCH_FP_NR][PEA_SYM_LEN];
static pid_t fp_other;		/* the process the filtered links wait on */

/* ns of @rounds rounds of the first @n functions. */
static double fp_calls(unsigned int n, unsigned int rounds)
{
	struct pea_bench_fpcall c = { .nfuncs = n, .rounds = rounds };

	if (ioctl(g_bench_fd, PEA_BENCH_IOC_FPCALL, &c))
		die("PEA_BENCH_IOC_FPCALL: %m");
	return (double)c.ns;
}

/*
 * Attach @n functions @way to @map_fd, filtered on @tgid (0: none), into
 * @fds (one fd for the fprobe); how many fds, or -errno.
 */
static int fp_attach(enum fp_way way, int map_fd, unsigned int n, int tgid,
		     int *fds)
{
	unsigned int i;

	if (way == FP_FPROBE) {
		struct pea_fprobe_attr a;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.flags = PEA_FPROBE_F_CLOEXEC;
		a.syms = (uintptr_t)fp_names;
		a.nr_syms = n;
		a.id = 1;
		a.filter_tgid = tgid;
		a.filter_cpu = -1;
		fds[0] = ioctl(map_fd, PEA_MAP_IOC_ATTACH_FPROBE, &a);
		return fds[0] < 0 ? -errno : 1;
	}
	for (i = 0; i < n; i++) {
		struct pea_probe_attr a;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.flags = PEA_PROBE_F_CLOEXEC;
		memcpy(a.symbol, fp_names[i], sizeof(a.symbol));
		a.id = 1 + i;
		a.filter_tgid = tgid;
		a.filter_cpu = -1;
		fds[i] = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);
		if (fds[i] < 0)
			die("PEA_MAP_IOC_ATTACH_PROBE %s: %m", fp_names[i]);
	}
	return (int)n;
}

static void fp_close(const int *fds, int nfd)
{
	int i;

	for (i = 0; i < nfd; i++)
		close(fds[i]);
}

/* Attach and detach times of @n functions @way, in ms. */
static void fp_attach_time(enum fp_way way, int map_fd, unsigned int n,
			   double *att, double *det)
{
	static int fds[PEA_BENCH_FP_NR];
	uint64_t t0 = now_ns();
	int nfd = fp_attach(way, map_fd, n, 0, fds);

	if (nfd < 0)
		die("fprobe attach of %u functions: %s", n, strerror(-nfd));
	*att = (now_ns() - t0) / 1e6;
	t0 = now_ns();
	fp_close(fds, nfd);
	*det = (now_ns() - t0) / 1e6;
}

/*
 * ns per hit above no probe, @n functions @way, each hit filtered
 * (@filtered) or written into @ch's map.
 */
static double fp_per_hit(enum fp_way way, struct chan *ch, unsigned int n,
			 bool filtered)
{
	static int fds[PEA_BENCH_FP_NR];
	unsigned int rounds = (g_quick ? 2000 : FP_CALLS) / n;
	uint64_t calls = (uint64_t)rounds * n;
	double b0, b1, t;
	int nfd;

	b0 = fp_calls(n, rounds);
	nfd = fp_attach(way, ch->pea_map_fd, n, filtered ? fp_other : 0, fds);
	if (nfd < 0)
		die("fprobe attach of %u functions: %s", n, strerror(-nfd));
	fp_calls(n, 1);		/* warm */
	if (!filtered)
		chan_consume(ch);
	t = fp_calls(n, rounds);
	fp_close(fds, nfd);
	if (!filtered) {
		uint64_t before = ch->n;

		chan_consume(ch);
		if (ch->n - before < calls || ch->lost)
			die("fprobe record: %llu of %llu records read, %llu lost",
			    (unsigned long long)(ch->n - before),
			    (unsigned long long)calls,
			    (unsigned long long)ch->lost);
	}
	b1 = fp_calls(n, rounds);
	return (t - (b0 + b1) / 2) / calls;
}

void bench_fprobe(void)
{
	static const unsigned int ns[] = { 50, 200 };
	static const char *const way_name[] = { "fprobe", "kprobes" };
	double v[2][2][4][16];	/* [n][way][attach, detach, filt, rec][run] */
	int cpu = g_ncpus > 1 ? 1 : 0, r, w, nways = 2, fd1, rc;
	struct chan ch;
	unsigned int k, i;
	char name[96];

	for (i = 0; i < PEA_BENCH_FP_NR; i++)
		snprintf(fp_names[i], PEA_SYM_LEN, "pea_bench_fp_%03u", i);
	pin_cpu(cpu);
	if (chan_open(&ch, CH_PEA, WAKE_BATCH, FP_PAGES))
		die("fprobe: opening the pea channel");
	/* Whether the kernel has fprobe links at all. */
	rc = fp_attach(FP_FPROBE, ch.pea_map_fd, 1, 0, &fd1);
	if (rc == -EOPNOTSUPP) {
		note("fprobe: this kernel has no fprobe (EOPNOTSUPP): kprobes only");
		nways = 1;
	} else if (rc < 0) {
		die("fprobe: PEA_MAP_IOC_ATTACH_FPROBE: %s", strerror(-rc));
	} else {
		close(fd1);
	}
	fp_other = fork();
	if (fp_other < 0)
		die("fprobe: fork: %m");
	if (!fp_other) {
		pause();	/* the other process, until killed */
		_exit(0);
	}
	note("fprobe: pea_bench_fp_000.. of pea_bench, CPU %d, %d runs, %u calls per loop",
	     cpu, g_runs, g_quick ? 2000 : FP_CALLS);
	for (r = 0; r < g_runs; r++)
		for (k = 0; k < 2; k++)
			for (w = nways == 2 ? 0 : 1; w < 2; w++) {
				fp_attach_time(w, ch.pea_map_fd, ns[k],
					       &v[k][w][0][r], &v[k][w][1][r]);
				v[k][w][2][r] = fp_per_hit(w, &ch, ns[k], true);
				v[k][w][3][r] = fp_per_hit(w, &ch, ns[k], false);
			}
	kill(fp_other, SIGKILL);
	waitpid(fp_other, NULL, 0);
	chan_close(&ch);
	for (k = 0; k < 2; k++)
		for (w = nways == 2 ? 0 : 1; w < 2; w++) {
			snprintf(name, sizeof(name), "fprobe %u funcs: attach",
				 ns[k]);
			fig_add(name, way_name[w], 0, v[k][w][0], g_runs, "ms");
			snprintf(name, sizeof(name), "fprobe %u funcs: detach",
				 ns[k]);
			fig_add(name, way_name[w], 0, v[k][w][1], g_runs, "ms");
			snprintf(name, sizeof(name), "fprobe %u funcs: hit, filtered",
				 ns[k]);
			fig_add(name, way_name[w], 0, v[k][w][2], g_runs, "ns");
			snprintf(name, sizeof(name), "fprobe %u funcs: hit, record",
				 ns[k]);
			fig_add(name, way_name[w], 0, v[k][w][3], g_runs, "ns");
		}
}
