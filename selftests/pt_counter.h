/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the counter selftests (test_counter*.c): raw counter
 * fds through /dev/pea, reads, the test module's PEA_ST_IOC_READ, clocks
 * and sysfs. Include after pea_test.h.
 */
#ifndef _PT_COUNTER_H
#define _PT_COUNTER_H

#include <time.h>
#include <sys/wait.h>

#define PT_TIMES	(PERF_FORMAT_TOTAL_TIME_ENABLED | \
			 PERF_FORMAT_TOTAL_TIME_RUNNING)

/* The module's default counter_refresh_ms, in ns. */
#define PT_REFRESH_NS	10000000ULL

struct pt_cval {
	__u64 value;
	__u64 enabled;
	__u64 running;
};

static inline struct perf_event_attr pt_counter_attr(__u32 type, __u64 config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.read_format = PT_TIMES;
	return a;
}

/* A counter with read_format enabled|running; returns the fd or -errno. */
static inline int pt_counter_open(__u32 type, __u64 config, int cpu)
{
	struct perf_event_attr a = pt_counter_attr(type, config);

	return pt_event_open_attr(&a, cpu);
}

static inline int pt_sw_counter(__u64 config, int cpu)
{
	return pt_counter_open(PERF_TYPE_SOFTWARE, config, cpu);
}

/* read(2) of a PT_TIMES counter: 0, 1 for end of file, or -errno. */
static inline int pt_cread(int fd, struct pt_cval *v)
{
	ssize_t n = read(fd, v, sizeof(*v));

	if (n < 0)
		return -errno;
	if (n == 0)
		return 1;
	return n == sizeof(*v) ? 0 : -EIO;
}

static inline struct pt_cval pt_cread_ok(int fd)
{
	struct pt_cval v = { 0, 0, 0 };

	if (pt_cread(fd, &v))
		pt_fatal("read counter");
	return v;
}

static inline __u64 pt_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Spin on this CPU for @ns nanoseconds. */
static inline void pt_busy_ns(__u64 ns)
{
	__u64 end = pt_mono_ns() + ns;

	while (pt_mono_ns() < end)
		;
}

static inline void pt_sleep_ns(__u64 ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL,
			       .tv_nsec = ns % 1000000000ULL };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The dynamic type of a PMU from sysfs, or -errno. */
static inline int pt_pmu_type(const char *pmu)
{
	char path[256], buf[32];
	int err;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type",
		 pmu);
	err = pt_read_file(path, buf, sizeof(buf));
	return err ? err : atoi(buf);
}

/*
 * PEA_ST_IOC_READ: pea_read_value(map, flags, buf, size) then pea_read()
 * in context @ctx on this CPU. Returns 0 or -errno of the ioctl itself.
 */
static inline int pt_st_read(const char *map, __u64 flags, __u32 size,
			     __u32 ctx, struct pea_st_read *r)
{
	memset(r, 0, sizeof(*r));
	strncpy(r->map, map, sizeof(r->map) - 1);
	r->flags = flags;
	r->size = size;
	r->ctx = ctx;
	return ioctl(pt_st(), PEA_ST_IOC_READ, r) ? -errno : 0;
}

/* The struct pea_event_value in a pea_st_read's buffer. */
static inline struct pea_event_value pt_st_value(const struct pea_st_read *r)
{
	struct pea_event_value v;

	memcpy(&v, r->buf, sizeof(v));
	return v;
}

static inline const char *pt_ctx_name(__u32 ctx)
{
	static const char *const names[] = { "task", "hardirq", "NMI",
					     "kprobe" };

	return ctx < PEA_ST_READ_NR_CTX ? names[ctx] : "?";
}

/* a <= b <= c, for a reading bracketed by two others. */
static inline bool pt_between(__u64 a, __u64 b, __u64 c)
{
	return a <= b && b <= c;
}

#endif /* _PT_COUNTER_H */
