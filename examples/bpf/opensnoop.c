// SPDX-License-Identifier: GPL-2.0
/*
 * opensnoop: every file opened (do_sys_openat2()), as one time-ordered
 * stream across CPUs. The loader of opensnoop.bpf.c: what a libbpf tool
 * reading a perf event array does, moved to pea (docs/kfuncs.md).
 *
 *   opensnoop [-r] [-p PID] [-n COUNT] [-d SECONDS]
 *
 * Prints "ready" once attached, then "TIME_NS CPU PID COMM FILENAME" per
 * open, in time order, until COUNT events, SECONDS or SIGINT. With -r,
 * pea's own kretprobe producer on the same function writes into the same
 * map beside the BPF program (PEA_MAP_IOC_ATTACH_PROBE), and its records
 * ("TIME_NS CPU PID COMM = RET (LATENCY ns)", the fd or -errno) come in
 * the same time-ordered stream: each open's entry by BPF, then its
 * return by pea (`DEMO=kfunc make demo`).
 *
 * From a perf event array, two things change: the program calls
 * pea_kf_output() on a pea map's handle instead of bpf_perf_event_output() on
 * its map, and the loader reads with pea_buffer__new() instead of
 * perf_buffer__new(). The map is created here, with PEA_F_BPF_WRITE, which
 * lets BPF programs write into it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <bpf/libbpf.h>
#include "libpea.h"
#include "opensnoop.h"
#include "opensnoop.skel.h"

static volatile sig_atomic_t stop;
static long count, limit;

static void on_signal(int sig)
{
	stop = 1;
}

static void on_event(void *ctx, int cpu, void *data, __u32 size)
{
	const struct pea_probe_record *r = data;
	const struct open_event *ev = data;
	struct pea_sample_info info;

	/* The ordered buffer adds PERF_SAMPLE_TIME: CLOCK_MONOTONIC. */
	pea_sample_info(data, PERF_SAMPLE_TIME, &info);
	if (size >= sizeof(*ev)) {
		printf("%llu %d %u %.16s %.128s\n",
		       (unsigned long long)info.time, cpu, ev->tgid, ev->comm,
		       ev->filename);
	} else if (size >= sizeof(*r) && (r->flags & PEA_REC_F_RETPROBE)) {
		/* pea's kretprobe (-r): a struct pea_probe_record. */
		printf("%llu %d %u %.16s = %lld (%llu ns)\n",
		       (unsigned long long)info.time, cpu, r->tgid, r->comm,
		       (long long)r->ret, (unsigned long long)r->latency_ns);
	} else {
		return;
	}
	if (limit && ++count >= limit)
		stop = 1;
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	fprintf(stderr, "opensnoop: %llu events lost on CPU %d\n",
		(unsigned long long)cnt, cpu);
}

int main(int argc, char **argv)
{
	struct pea_buffer_opts opts = {
		.sz = sizeof(opts), .flags = PEA_BUFFER_FLAG_ORDERED,
	};
	struct pea_map_info info;
	struct opensnoop *skel;
	struct pea_buffer *pb;
	struct pea_probe_attr pa = {
		.size = sizeof(pa), .flags = PEA_PROBE_F_RETPROBE,
		.symbol = "do_sys_openat2", .filter_cpu = -1,
	};
	long seconds = 0, pid = 0;
	int c, map, link = -1, err = 1;
	int ret_probe = 0;
	time_t end;

	while ((c = getopt(argc, argv, "rp:n:d:")) != -1) {
		switch (c) {
		case 'r':
			ret_probe = 1;
			break;
		case 'p':
			pid = atol(optarg);
			break;
		case 'n':
			limit = atol(optarg);
			break;
		case 'd':
			seconds = atol(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-r] [-p PID] [-n COUNT] [-d SECONDS]\n",
				argv[0]);
			return 2;
		}
	}

	/* The pea map (one slot per CPU), open to BPF writers. */
	map = pea_map_create(NULL, libbpf_num_possible_cpus(), PEA_F_BPF_WRITE);
	if (map < 0 || pea_map_get_info(map, &info)) {
		fprintf(stderr, "opensnoop: pea map: %s\n", strerror(errno));
		return 1;
	}
	/* Was: perf_buffer__new(bpf_map__fd(skel->maps.events), ...). */
	pb = pea_buffer__new(map, 64, on_event, on_lost, NULL, &opts);
	if (!pb) {
		fprintf(stderr, "opensnoop: pea_buffer__new: %s\n", strerror(errno));
		return 1;
	}

	skel = opensnoop__open();
	if (!skel)
		goto out;
	skel->rodata->map_handle = info.bpf_handle;
	skel->rodata->target_tgid = pid;
	if (opensnoop__load(skel) || opensnoop__attach(skel)) {
		fprintf(stderr, "opensnoop: load or attach failed (is pea.ko loaded, with kfuncs on?)\n");
		goto out;
	}

	if (ret_probe) {
		/* pea's own producer, into the same map. */
		pa.filter_tgid = (__s32)pid;
		link = ioctl(map, PEA_MAP_IOC_ATTACH_PROBE, &pa);
		if (link < 0) {
			fprintf(stderr, "opensnoop: pea kretprobe: %s\n",
				strerror(errno));
			goto out;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("ready\n");
	fflush(stdout);
	end = seconds ? time(NULL) + seconds : 0;
	while (!stop && (!end || time(NULL) < end)) {
		err = pea_buffer__poll(pb, 100);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "opensnoop: poll: %s\n", strerror(-err));
			break;
		}
		fflush(stdout);
		err = 0;
	}
	if (skel->bss->errors)
		fprintf(stderr, "opensnoop: pea_kf_output() failed %llu times\n",
			(unsigned long long)skel->bss->errors);
out:
	if (link >= 0)
		close(link);
	opensnoop__destroy(skel);
	pea_buffer__free(pb);
	close(map);
	return err ? 1 : 0;
}
