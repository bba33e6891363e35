// SPDX-License-Identifier: GPL-2.0
/*
 * pea-storm: the all-context storm demo (`pea-demo storm` in the guest,
 * `DEMO=storm make demo` on the host).
 *
 * Creates a map and one ring per CPU through libpea, has the test module
 * write records into them from every context at once (a kthread, a timer
 * softirq, an hrtimer hardirq and real NMIs) on every CPU, prints a few
 * decoded records as they arrive and a per-CPU summary at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/pea.h>
#include "libpea.h"
#include "module/pea_selftest.h"

#define MAP_NAME	"demo"
#define MAX_CPUS	PEA_ST_MAX_CPUS
#define SHOW		12

static const char *const source_name[PEA_ST_NR_SOURCES] = {
	"task", "softirq", "hardirq", "nmi",
};

struct demo {
	unsigned long long records[MAX_CPUS][PEA_ST_NR_SOURCES];
	unsigned long long bytes[MAX_CPUS];
	unsigned long long lost[MAX_CPUS];
	unsigned long long bad;
	int shown;
};

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct pea_st_record *r = data;
	struct demo *d = ctx;
	__u32 csum = r->csum;

	r->csum = 0;
	if (size < sizeof(*r) || r->source >= PEA_ST_NR_SOURCES ||
	    cpu >= MAX_CPUS ||
	    pea_st_csum(r, sizeof(*r) + r->len) != csum) {
		d->bad++;
		return;
	}
	d->records[cpu][r->source]++;
	d->bytes[cpu] += size;
	if (d->shown < SHOW) {
		d->shown++;
		printf("  cpu %d  %-8s seq %-6llu payload %3u bytes  checksum ok\n",
		       cpu, source_name[r->source],
		       (unsigned long long)r->seq, size);
	}
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	struct demo *d = ctx;

	if (cpu < MAX_CPUS)
		d->lost[cpu] += cnt;
}

static int selftest_dev(void)
{
	int fd = open(PEA_ST_DEVICE, O_RDWR | O_CLOEXEC);
	int ko;

	if (fd >= 0)
		return fd;
	ko = open("/lib/modules/pea/pea_selftest.ko", O_RDONLY | O_CLOEXEC);
	if (ko < 0 || syscall(SYS_finit_module, ko, "", 0)) {
		perror("loading pea_selftest.ko");
		return -1;
	}
	close(ko);
	return open(PEA_ST_DEVICE, O_RDWR | O_CLOEXEC);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	struct pea_st_storm storm = {
		.sources = (1U << PEA_ST_NR_SOURCES) - 1,
		.hrtimer_us = 500, .task_burst = 16, .task_sleep_us = 500,
		.nmi_every = 2,
	};
	static struct pea_st_result res;
	struct pea_buffer *pb;
	struct demo d = { 0 };
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int map, st, cpu, s, mismatches = 0;
	double t0;

	st = selftest_dev();
	map = pea_map_create(MAP_NAME, ncpu, 0);
	if (st < 0 || map < 0) {
		fprintf(stderr, "pea-storm: setup failed: %s\n",
			strerror(map < 0 ? -map : errno));
		return 1;
	}
	pb = pea_buffer__new(map, 16, on_sample, on_lost, &d, NULL);
	if (!pb) {
		perror("pea_buffer__new");
		return 1;
	}
	printf("pea-storm: map \"%s\", %zu rings of 16 pages, producers in task,"
	       " softirq, hardirq and NMI context on %d CPUs for %.1f s\n",
	       MAP_NAME, pea_buffer__buffer_cnt(pb), ncpu, seconds);
	strcpy(storm.map, MAP_NAME);
	if (ioctl(st, PEA_ST_IOC_STORM_START, &storm)) {
		perror("PEA_ST_IOC_STORM_START");
		return 1;
	}
	t0 = now();
	while (now() - t0 < seconds)
		pea_buffer__poll(pb, 100);
	ioctl(st, PEA_ST_IOC_STORM_STOP, &res);
	pea_buffer__consume(pb);

	printf("\n%4s %9s %9s %9s %9s %10s %8s %10s  %s\n", "cpu", "task",
	       "softirq", "hardirq", "nmi", "bytes", "lost", "attempted",
	       "received+lost");
	for (cpu = 0; cpu < ncpu && cpu < MAX_CPUS; cpu++) {
		unsigned long long att = 0, got = d.lost[cpu];

		printf("%4d", cpu);
		for (s = 0; s < PEA_ST_NR_SOURCES; s++) {
			printf(" %9llu", d.records[cpu][s]);
			att += res.c[cpu][s].attempts;
			got += d.records[cpu][s];
		}
		mismatches += got != att;
		printf(" %10llu %8llu %10llu  %s\n", d.bytes[cpu], d.lost[cpu],
		       att, got == att ? "== attempted" : "MISMATCH");
	}
	printf("\n%d CPUs with a mismatch, %llu bad records\n", mismatches,
	       d.bad);
	pea_buffer__free(pb);
	close(map);
	return d.bad || mismatches ? 1 : 0;
}
