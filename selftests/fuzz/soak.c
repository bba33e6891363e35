// SPDX-License-Identifier: GPL-2.0
/*
 * test_fuzz --soak: the test module's storm writes at full speed on every
 * CPU from task, softirq, hardirq and NMI context into the map "soak",
 * for --seconds, while one consumer per CPU reads and checks every
 * record and, now and then, pauses its event, replaces it by a new one,
 * or takes it out of the map and puts a new one in after a gap; a churn
 * thread meanwhile creates and destroys maps, rings, kprobes, kretprobes
 * and counters. At the end, per CPU and source:
 *
 *   received == the storm's ok          (every record written was read)
 *   lost     == the storm's nospc       (PERF_RECORD_LOST + TAKE_LOST,
 *                                        and the events' stats.lost)
 *   received + lost + other == attempted
 *
 * where other counts the attempts that found no event in the slot
 * (ENOENT) during the gaps. Then debugfs objects, Slab and VmallocUsed go
 * back to the baseline taken after a warm-up (tolerances in
 * docs/fuzzing.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <linux/pea.h>
#include "../module/pea_selftest.h"
#include "fuzz.h"

#define SK_PAGES	128		/* 512 KiB rings: a leak shows */
#define SK_MAP		"soak"
#define SK_SLAB_TOL	(2048)		/* KiB */
#define SK_VMALLOC_TOL	(256)		/* KiB */

struct sk_cpu {
	int cpu;
	int fd;			/* the event in the slot, or -1 */
	void *ring;
	__u64 got[PEA_ST_NR_SOURCES];	/* records received, per source */
	__u64 lost_rec;		/* PERF_RECORD_LOST + TAKE_LOST */
	__u64 st_records;	/* sum of retired events' stats.records */
	__u64 st_lost;		/* ... and stats.lost */
	__u64 bad;		/* records that failed the check */
	__u64 events, pauses, gaps;
	char why[128];
	pthread_t tid;
};

static struct sk_cpu sk_cpus[PEA_ST_MAX_CPUS];
static int sk_map = -1;
static int sk_done;	/* __atomic */
static __u64 sk_churn_rounds, sk_churn_records, sk_churn_bad;

static __u64 sk_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* Slab and VmallocUsed from /proc/meminfo, in KiB. */
static void sk_meminfo(long *slab, long *vmalloc)
{
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	*slab = *vmalloc = -1;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Slab: %ld", slab) == 1)
			continue;
		if (sscanf(line, "VmallocUsed: %ld", vmalloc) == 1)
			continue;
	}
	fclose(f);
}

/*
 * /proc/vmallocinfo: every vmalloc and vmap area in use (rings are
 * vmap()ed, not counted in VmallocUsed), in KiB, and those pea's code
 * made (the caller is named).
 */
static void sk_vmallocinfo(long *total, long *pea)
{
	char line[512];
	FILE *f = fopen("/proc/vmallocinfo", "r");
	long sz;

	*total = *pea = 0;
	if (!f) {
		*total = *pea = -1;
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		/* Lazily freed areas wait for a purge: not in use. */
		if (sscanf(line, "%*s %ld", &sz) != 1 ||
		    strstr(line, "unpurged"))
			continue;
		*total += sz / 1024;
		if (strstr(line, "[pea]"))
			*pea += sz / 1024;
	}
	fclose(f);
}

static void sk_settle_memory(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);

	sleep(1);	/* RCU-deferred frees */
	if (fd >= 0) {
		if (write(fd, "3", 1) < 0)
			perror("drop_caches");
		close(fd);
	}
	sleep(1);
}

static int sk_open_event(int cpu)
{
	struct perf_event_attr a;
	struct pea_event_open o = { .attr = (uintptr_t)&a, .cpu = cpu,
				    .flags = PEA_FLAG_FD_CLOEXEC };

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_BPF_OUTPUT;
	a.sample_type = PERF_SAMPLE_RAW;
	a.sample_period = 1;
	a.watermark = 1;
	a.wakeup_watermark = SK_PAGES * 4096 / 4;
	return ioctl(fz_dev, PEA_IOC_EVENT_OPEN, &o);
}

/* Check one storm record (the raw payload of a sample). */
static const char *sk_check(int cpu, const unsigned char *d, __u32 size,
			    struct pea_st_record *out)
{
	unsigned char buf[sizeof(struct pea_st_record) + 256];
	struct pea_st_record r;
	__u32 i;

	if (size < sizeof(r))
		return "short";
	memcpy(&r, d, sizeof(r));
	*out = r;
	if (r.source >= PEA_ST_NR_SOURCES || r.cpu != (__u32)cpu)
		return "source or cpu";
	if (r.len != pea_st_len(r.source, r.seq) ||
	    size != ((4 + sizeof(r) + r.len + 7) & ~7U) - 4)
		return "length";
	if (r.ctx != (1U << r.source))
		return "context";
	memcpy(buf, d, sizeof(r) + r.len);
	((struct pea_st_record *)buf)->csum = 0;
	if (pea_st_csum(buf, sizeof(r) + r.len) != r.csum)
		return "checksum";
	for (i = 0; i < r.len; i++)
		if (d[sizeof(r) + i] != pea_st_pattern(r.source, r.cpu, r.seq, i))
			return "pattern";
	return NULL;
}

/* Drain the ring of @c completely. */
static void sk_drain(struct sk_cpu *c, void *ring)
{
	static __thread unsigned char rec[65536];
	struct perf_event_mmap_page *pg = ring;
	unsigned char *data = (unsigned char *)ring + fz_page;
	size_t size = (size_t)SK_PAGES * fz_page;
	__u64 head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = pg->data_tail;

	while (tail < head) {
		struct perf_event_header *h = (void *)rec;
		size_t off = tail & (size - 1), first;

		memcpy(h, data + off, sizeof(*h));	/* 8-byte aligned */
		if (h->size < sizeof(*h) || h->size > head - tail) {
			snprintf(c->why, sizeof(c->why), "header size %u", h->size);
			c->bad++;
			tail = head;
			break;
		}
		first = size - off < h->size ? size - off : h->size;
		memcpy(rec, data + off, first);
		memcpy(rec + first, data, h->size - first);
		if (h->type == PERF_RECORD_SAMPLE) {
			__u32 raw;
			struct pea_st_record r;
			const char *why;

			memcpy(&raw, rec + sizeof(*h), 4);
			why = sk_check(c->cpu, rec + sizeof(*h) + 4, raw, &r);
			if (why) {
				snprintf(c->why, sizeof(c->why), "%s", why);
				c->bad++;
			} else {
				c->got[r.source]++;
			}
		} else if (h->type == PERF_RECORD_LOST) {
			__u64 lost;

			memcpy(&lost, rec + sizeof(*h) + 8, 8);
			c->lost_rec += lost;
		}
		tail += h->size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

static int sk_attach(struct sk_cpu *c)
{
	struct pea_map_elem e = { .key = (__u32)c->cpu };
	int fd = sk_open_event(c->cpu);
	void *p;

	if (fd < 0)
		return -errno;
	p = mmap(NULL, (SK_PAGES + 1) * fz_page, PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return -errno;
	}
	e.fd = fd;
	if (ioctl(sk_map, PEA_MAP_IOC_UPDATE, &e)) {
		munmap(p, (SK_PAGES + 1) * fz_page);
		close(fd);
		return -errno;
	}
	c->fd = fd;
	c->ring = p;
	c->events++;
	return 0;
}

/*
 * Retire an event of @c, already out of the slot (deleted or replaced):
 * give writers that picked it up before a moment, drain it, collect its
 * pending lost count and its stats.
 */
static void sk_retire(struct sk_cpu *c, int fd, void *ring)
{
	struct pea_event_stats st;
	__u64 lost = 0;
	int i;

	for (i = 0; i < 3; i++) {
		usleep(20000);
		sk_drain(c, ring);
	}
	if (ioctl(fd, PEA_EVENT_IOC_TAKE_LOST, &lost) == 0)
		c->lost_rec += lost;
	if (ioctl(fd, PEA_EVENT_IOC_STATS, &st) == 0) {
		c->st_records += st.records;
		c->st_lost += st.lost;
	}
	munmap(ring, (SK_PAGES + 1) * fz_page);
	close(fd);
}

static void *sk_consumer(void *arg)
{
	struct sk_cpu *c = arg;
	struct fz_rng r = { (fz_opts.seed ^ (__u64)c->cpu * 0x9e37) | 1 };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	while (!__atomic_load_n(&sk_done, __ATOMIC_ACQUIRE)) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };

		poll(&p, 1, 10);
		sk_drain(c, c->ring);
		switch (fz_below(&r, 400)) {
		case 0: {	/* pause for a while: drops, counted lost */
			ioctl(c->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1);
			usleep(5000);
			ioctl(c->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
			c->pauses++;
			break;
		}
		case 1: {	/* a new event replaces this one */
			int old = c->fd;
			void *ring = c->ring;

			if (!sk_attach(c))
				sk_retire(c, old, ring);
			break;
		}
		case 2: {	/* out of the map for a gap: ENOENT meanwhile */
			struct pea_map_elem e = { .key = (__u32)c->cpu };
			int old = c->fd;
			void *ring = c->ring;

			if (ioctl(sk_map, PEA_MAP_IOC_DELETE, &e))
				break;
			sk_retire(c, old, ring);
			c->fd = -1;
			c->ring = NULL;
			usleep(2000);
			c->gaps++;
			while (sk_attach(c) && !__atomic_load_n(&sk_done, __ATOMIC_ACQUIRE))
				usleep(1000);
			break;
		}
		}
	}
	return NULL;
}

/* Maps, rings, kprobes, kretprobes and counters coming and going. */
static void *sk_churn(void *arg)
{
	static const char *const syms[] = { "ksys_read", "do_sys_openat2",
					     "__x64_sys_getppid" };
	struct fz_rng r = { fz_opts.seed | 1 };
	(void)arg;

	while (!__atomic_load_n(&sk_done, __ATOMIC_ACQUIRE)) {
		struct pea_map_attr ma = { .key_size = 4, .value_size = 4,
					   .max_entries = (__u32)fz_ncpu,
					   .open_flags = O_CLOEXEC };
		struct pea_probe_attr pa;
		int map, ev[PEA_ST_MAX_CPUS], link, ctr, cpu, i;
		void *ring[PEA_ST_MAX_CPUS];
		struct perf_event_attr ca;
		struct pea_event_open co = { .attr = (uintptr_t)&ca,
					     .flags = PEA_FLAG_FD_CLOEXEC };
		struct pea_link_info li;
		__u64 read_recs = 0;
		char b;

		map = ioctl(fz_dev, PEA_IOC_MAP_CREATE, &ma);
		if (map < 0) {
			usleep(10000);
			continue;
		}
		for (cpu = 0; cpu < fz_ncpu; cpu++) {
			struct pea_map_elem e = { .key = (__u32)cpu };

			ev[cpu] = sk_open_event(cpu);
			ring[cpu] = mmap(NULL, 9 * fz_page, PROT_READ | PROT_WRITE,
					 MAP_SHARED, ev[cpu], 0);
			e.fd = ev[cpu];
			ioctl(map, PEA_MAP_IOC_UPDATE, &e);
		}
		memset(&pa, 0, sizeof(pa));
		pa.size = sizeof(pa);
		pa.filter_cpu = -1;
		pa.flags = fz_chance(&r, 2) ? PEA_PROBE_F_RETPROBE : 0;
		strcpy(pa.symbol, syms[fz_below(&r, 3)]);
		link = ioctl(map, PEA_MAP_IOC_ATTACH_PROBE, &pa);
		memset(&ca, 0, sizeof(ca));
		ca.size = sizeof(ca);
		ca.type = fz_pmu_type > 0 && fz_chance(&r, 2) ?
			(__u32)fz_pmu_type : PERF_TYPE_SOFTWARE;
		ca.config = ca.type == PERF_TYPE_SOFTWARE ?
			PERF_COUNT_SW_CPU_CLOCK : PEA_ST_PMU_NS;
		co.cpu = (int)fz_below(&r, fz_ncpu);
		ctr = ioctl(fz_dev, PEA_IOC_EVENT_OPEN, &co);
		for (i = 0; i < 50; i++) {
			int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

			if (fd >= 0) {
				if (read(fd, &b, 1) < 0)
					break;
				close(fd);
			}
			syscall(SYS_getppid);
		}
		if (ctr >= 0) {
			__u64 v[3];

			if (read(ctr, v, sizeof(v)) < 0)
				sk_churn_bad++;
			close(ctr);
		}
		if (link >= 0)
			close(link);	/* detach: no more records */
		for (cpu = 0; cpu < fz_ncpu; cpu++) {
			struct perf_event_mmap_page *pg = ring[cpu];
			struct pea_event_stats st;

			if (ring[cpu] == MAP_FAILED) {
				sk_churn_bad++;
				if (ev[cpu] >= 0)
					close(ev[cpu]);
				continue;
			}
			/* Count the records: each is a header. */
			{
				__u64 head = pg->data_head, tail = pg->data_tail;
				unsigned char *d = (unsigned char *)pg + fz_page;

				while (tail < head) {
					struct perf_event_header *h =
						(void *)(d + (tail & (8 * fz_page - 1)));

					if (h->type == PERF_RECORD_SAMPLE)
						read_recs++;
					if (!h->size)
						break;
					tail += h->size;
				}
			}
			if (ioctl(ev[cpu], PEA_EVENT_IOC_STATS, &st) == 0 &&
			    st.records + st.lost < st.records)
				sk_churn_bad++;
			munmap(ring[cpu], 9 * fz_page);
			close(ev[cpu]);
		}
		(void)li;
		sk_churn_records += read_recs;
		close(map);
		sk_churn_rounds++;
		usleep(50000);
	}
	return NULL;
}

int fz_soak(void)
{
	struct pea_map_attr ma = { .key_size = 4, .value_size = 4,
				   .open_flags = O_CLOEXEC, .name = SK_MAP };
	struct pea_st_storm cfg = {
		.map = SK_MAP, .sources = 0xf, .hrtimer_us = 100,
		.task_burst = 64, .task_sleep_us = 100, .nmi_every = 1,
	};
	static struct pea_st_result res;
	long slab0, vm0, slab1, vm1, base[4], now[4], va0, vp0, va1, vp1;
	__u64 t0, total_ok = 0, total_att = 0, total_lost = 0, total_other = 0;
	pthread_t churn;
	bool exact = true, intact = true, settled = false;
	int cpu, err;
	double secs;

	ma.max_entries = (__u32)fz_ncpu;
	if (fz_debugfs_objects(base)) {
		printf("Bail out! /sys/kernel/debug/pea/objects unreadable\n");
		return 1;
	}

	/*
	 * Warm-up: the same objects and storm once, so that the caches the
	 * kernel keeps (slabs, the per-CPU cache of kthread stacks) reach
	 * their size before the baseline is taken.
	 */
	sk_map = ioctl(fz_dev, PEA_IOC_MAP_CREATE, &ma);
	if (sk_map < 0) {
		printf("Bail out! map create: %s\n", strerror(errno));
		return 1;
	}
	for (cpu = 0; cpu < fz_ncpu; cpu++) {
		sk_cpus[cpu].cpu = cpu;
		if (sk_attach(&sk_cpus[cpu])) {
			printf("Bail out! event: %s\n", strerror(errno));
			return 1;
		}
	}
	if (fz_ioctl(fz_st, PEA_ST_IOC_STORM_START, &cfg)) {
		printf("Bail out! storm start: %s\n", strerror(errno));
		return 1;
	}
	sleep(2);
	fz_ioctl(fz_st, PEA_ST_IOC_STORM_STOP, &res);
	for (cpu = 0; cpu < fz_ncpu; cpu++) {
		munmap(sk_cpus[cpu].ring, (SK_PAGES + 1) * fz_page);
		close(sk_cpus[cpu].fd);
	}
	close(sk_map);
	sk_settle_memory();
	fz_objects_wait(base, now, 10);
	sk_meminfo(&slab0, &vm0);
	sk_vmallocinfo(&va0, &vp0);
	sk_map = ioctl(fz_dev, PEA_IOC_MAP_CREATE, &ma);
	if (sk_map < 0) {
		printf("Bail out! map create: %s\n", strerror(errno));
		return 1;
	}
	printf("# soak baseline: Slab %ld KiB, VmallocUsed %ld KiB, ", slab0, vm0);
	printf("vmallocinfo %ld KiB (pea %ld)\n", va0, vp0);
	memset(sk_cpus, 0, sizeof(sk_cpus));
	for (cpu = 0; cpu < fz_ncpu; cpu++) {
		sk_cpus[cpu].cpu = cpu;
		if (sk_attach(&sk_cpus[cpu])) {
			printf("Bail out! event: %s\n", strerror(errno));
			return 1;
		}
	}
	err = fz_ioctl(fz_st, PEA_ST_IOC_STORM_START, &cfg);
	fz_tap(!err, "soak: storm started on every CPU, all four contexts");
	if (err)
		return 1;
	t0 = sk_now_ns();
	for (cpu = 0; cpu < fz_ncpu; cpu++)
		pthread_create(&sk_cpus[cpu].tid, NULL, sk_consumer, &sk_cpus[cpu]);
	pthread_create(&churn, NULL, sk_churn, NULL);
	while (sk_now_ns() - t0 < (__u64)fz_opts.seconds * 1000000000ULL) {
		sleep(10);
		printf("# soak: %.0f s\n", (sk_now_ns() - t0) / 1e9);
	}
	memset(&res, 0, sizeof(res));
	err = fz_ioctl(fz_st, PEA_ST_IOC_STORM_STOP, &res);
	secs = (sk_now_ns() - t0) / 1e9;
	__atomic_store_n(&sk_done, 1, __ATOMIC_RELEASE);
	for (cpu = 0; cpu < fz_ncpu; cpu++)
		pthread_join(sk_cpus[cpu].tid, NULL);
	pthread_join(churn, NULL);
	fz_tap(!err, "soak: storm stopped");

	/* Retire the last events: everything written is now read. */
	for (cpu = 0; cpu < fz_ncpu; cpu++) {
		struct sk_cpu *c = &sk_cpus[cpu];
		struct pea_map_elem e = { .key = (__u32)cpu };

		if (c->fd < 0)
			continue;	/* stopped in a gap */
		ioctl(sk_map, PEA_MAP_IOC_DELETE, &e);
		sk_retire(c, c->fd, c->ring);
	}
	close(sk_map);

	for (cpu = 0; cpu < fz_ncpu; cpu++) {
		struct sk_cpu *c = &sk_cpus[cpu];
		__u64 ok = 0, nospc = 0, other = 0, att = 0, got = 0;
		int s;

		for (s = 0; s < PEA_ST_NR_SOURCES; s++) {
			const struct pea_st_counts *k = &res.c[cpu][s];

			ok += k->ok;
			nospc += k->nospc;
			other += k->other;
			att += k->attempts;
			got += c->got[s];
			if (c->got[s] != k->ok) {
				exact = false;
				printf("# cpu %d source %d: received %llu, written %llu\n",
				       cpu, s, (unsigned long long)c->got[s],
				       (unsigned long long)k->ok);
			}
		}
		printf("# cpu %d: attempted %llu = received %llu + lost %llu + other %llu; ",
		       cpu, (unsigned long long)att, (unsigned long long)got,
		       (unsigned long long)nospc, (unsigned long long)other);
		printf("stats records %llu lost %llu; lost records %llu; ",
		       (unsigned long long)c->st_records,
		       (unsigned long long)c->st_lost,
		       (unsigned long long)c->lost_rec);
		printf("events %llu pauses %llu gaps %llu bad %llu%s%s\n",
		       (unsigned long long)c->events,
		       (unsigned long long)c->pauses,
		       (unsigned long long)c->gaps, (unsigned long long)c->bad,
		       c->bad ? ": " : "", c->why);
		if (got + nospc + other != att || c->st_records != got ||
		    c->st_lost != nospc || c->lost_rec != nospc)
			exact = false;
		if (c->bad)
			intact = false;
		total_ok += got;
		total_att += att;
		total_lost += nospc;
		total_other += other;
	}
	printf("# soak: %.0f s, %llu attempted, %llu received (%.0f records/s), ",
	       secs, (unsigned long long)total_att, (unsigned long long)total_ok,
	       total_ok / secs);
	printf("%llu lost, %llu other; churn: %llu rounds, %llu probe records\n",
	       (unsigned long long)total_lost, (unsigned long long)total_other,
	       (unsigned long long)sk_churn_rounds,
	       (unsigned long long)sk_churn_records);
	fz_tap(intact, "soak: every record received intact");
	fz_tap(exact,
	       "soak: per CPU, received + lost + other == attempted, received == written, lost == dropped");
	fz_tap(total_ok > 0 && total_lost < total_att, "soak: records flowed (%llu)",
	       (unsigned long long)total_ok);
	fz_tap(sk_churn_rounds > 0 && !sk_churn_bad,
	       "soak: maps, rings, probes and counters came and went (%llu rounds)",
	       (unsigned long long)sk_churn_rounds);
	settled = fz_objects_wait(base, now, 20);
	if (!settled) {
		printf("# objects: %ld maps %ld events %ld rings %ld links",
		       now[0], now[1], now[2], now[3]);
		printf(" (baseline %ld %ld %ld %ld)\n", base[0], base[1],
		       base[2], base[3]);
	}
	fz_tap(settled, "soak: debugfs objects back to the baseline");
	sk_settle_memory();
	sk_meminfo(&slab1, &vm1);
	sk_vmallocinfo(&va1, &vp1);
	printf("# soak after: Slab %ld KiB (%+ld), VmallocUsed %ld KiB (%+ld), ",
	       slab1, slab1 - slab0, vm1, vm1 - vm0);
	printf("vmallocinfo %ld KiB (%+ld, pea %ld)\n", va1, va1 - va0, vp1);
	fz_tap(slab1 - slab0 <= SK_SLAB_TOL,
	       "soak: Slab back to its baseline (%+ld KiB, tolerance %d)",
	       slab1 - slab0, SK_SLAB_TOL);
	fz_tap(vm1 - vm0 <= SK_VMALLOC_TOL && va1 - va0 <= SK_VMALLOC_TOL,
	       "soak: VmallocUsed and all vmalloc/vmap areas back to their baseline (%+ld, %+ld KiB, tolerance %d)",
	       vm1 - vm0, va1 - va0, SK_VMALLOC_TOL);
	fz_tap(vp1 == vp0, "soak: no vmap area of pea left (%ld KiB, baseline %ld)",
	       vp1, vp0);
	return 0;
}
