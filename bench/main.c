// SPDX-License-Identifier: GPL-2.0
/*
 * pea-bench: pea against the kernel's perf buffer and BPF ring buffer.
 *
 * Usage: pea-bench [-q] [-r RUNS] [-o JSON] [-f FIGURES]
 *   -q          quick: fewer records and shorter phases
 *   -r RUNS     repetitions of each figure (default 5, at least 3)
 *   -o JSON     where to write the JSON (default /tmp/pea-bench.json)
 *   -f FIGURES  comma separated subset of kcost,e2e,lossfree,latency,kfunc,
 *               ordered, agg, fprobe (default all), or icount and sample (only
 *               when named: the instruction counts of `make bench-icount`,
 *               see icount.c and sample.c)
 *
 * Needs pea.ko and pea_bench.ko loaded, root, 4 CPUs (-f icount, -f agg,
 * -f fprobe or -f kfunc alone: one; kfunc then measures the in-kernel cost only). Prints notes to stderr, the table and the JSON to stdout (see
 * report.c). Exits with 1 if icount's two passes differ by more than 1%.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include "libpea.h"
#include "module/pea_bench.h"
#include "bench.h"
#include "bench.skel.h"

struct bench *g_skel;
int g_bench_fd = -1;
int g_ncpus;
int g_runs = 5;
bool g_quick;
int g_nprod_first = 1;

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity(%d): %m", cpu);
}

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pea-bench: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

void note(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	FILE *k;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "pea-bench: %s\n", buf);
	/* Also in the kernel log, to place any kernel message in time. */
	k = fopen("/dev/kmsg", "w");
	if (k) {
		fprintf(k, "pea-bench: %s\n", buf);
		fclose(k);
	}
}

/* Set pea_bench's kprobe on BENCH_KP_SYMBOL: off, empty or pea_output(). */
void module_kprobe(enum pea_bench_kp_mode mode)
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

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level != LIBBPF_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static bool wanted(const char *list, const char *fig)
{
	const char *p = list;
	size_t n = strlen(fig);

	if (!list)
		return true;
	while ((p = strstr(p, fig))) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
		p += n;
	}
	return false;
}

int main(int argc, char **argv)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	const char *json = "/tmp/pea-bench.json", *figs = NULL;
	char title[256];
	struct utsname u;
	bool icount_ok = true;
	int opt, err;

	while ((opt = getopt(argc, argv, "qr:o:f:p:")) != -1) {
		switch (opt) {
		case 'q':
			g_quick = true;
			break;
		case 'r':
			g_runs = atoi(optarg);
			break;
		case 'o':
			json = optarg;
			break;
		case 'f':
			figs = optarg;
			break;
		case 'p':
			g_nprod_first = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-q] [-r RUNS] [-o JSON] [-f FIGURES]\n",
				argv[0]);
			return 2;
		}
	}
	if (g_runs < 3)
		g_runs = 3;
	if (g_runs > 15)
		g_runs = 15;
	setvbuf(stdout, NULL, _IOLBF, 0);
	g_ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (g_ncpus < 4 && !(figs && (!strcmp(figs, "icount") ||
				      !strcmp(figs, "agg") ||
				      !strcmp(figs, "fprobe") ||
				      !strcmp(figs, "kfunc") ||
				      !strcmp(figs, "sample") ||
				      !strcmp(figs, "icount,sample"))))
		die("needs 4 CPUs, %d online", g_ncpus);
	setrlimit(RLIMIT_MEMLOCK, &rl);
	libbpf_set_print(libbpf_print);

	g_bench_fd = open(PEA_BENCH_DEVICE, O_RDWR | O_CLOEXEC);
	if (g_bench_fd < 0)
		die("open %s: %m", PEA_BENCH_DEVICE);

	g_skel = bench__open();
	if (!g_skel)
		die("bench__open: %m");
	/* One ring for all CPUs, as much memory as the per-CPU rings. */
	bpf_map__set_max_entries(g_skel->maps.ring_map,
				 256 * getpagesize() * g_ncpus);
	err = bench__load(g_skel);
	if (err)
		die("bench__load: %s", strerror(-err));

	if (wanted(figs, "kcost"))
		bench_kcost();
	if (wanted(figs, "e2e"))
		bench_e2e();
	if (wanted(figs, "lossfree"))
		bench_lossfree();
	if (wanted(figs, "latency"))
		bench_latency();
	if (wanted(figs, "ordered"))
		bench_ordered();
	if (wanted(figs, "kfunc"))
		bench_kfunc(g_ncpus >= 4 ? 1 : 0, g_ncpus >= 4);
	if (wanted(figs, "agg"))
		bench_agg();
	if (wanted(figs, "fprobe"))
		bench_fprobe();
	/* Not in the default set: it wants a guest of its own (icount). */
	if (figs && wanted(figs, "icount"))
		icount_ok = bench_icount();
	if (figs && wanted(figs, "sample"))
		bench_sample();

	uname(&u);
	if (figs && (!strcmp(figs, "icount") || !strcmp(figs, "sample") ||
		     !strcmp(figs, "icount,sample")))
		snprintf(title, sizeof(title),
			 "# pea-bench: kernel %s, %d CPU, instruction counts (icount)",
			 u.release, g_ncpus);
	else
		snprintf(title, sizeof(title),
			 "# pea-bench: kernel %s, %d CPUs, %d runs per figure%s",
			 u.release, g_ncpus, g_runs, g_quick ? " (quick)" : "");
	report_print(json, title);
	printf("# pea-bench: json in %s\n", json);
	if (!icount_ok)
		printf("# pea-bench: icount: repeatability check FAILED: %s\n",
		       "two passes differ by more than 1% (see the notes)");
	bench__destroy(g_skel);
	close(g_bench_fd);
	return icount_ok ? 0 : 1;
}
