// SPDX-License-Identifier: GPL-2.0
/*
 * PEA_FLAG_FLUSH: a record that raised no wake-up wakes a sleeping reader
 * flush_us later, however far below the watermark it is; one wake-up per
 * burst; nothing when the reader caught up first or when no record came;
 * with wakeup_events 1 no timer wake-up at all; with adaptive wake-ups it
 * bounds the latency of a reader that is behind; every errno of the
 * fields; libpea's flush_us. The storm test (phase F) covers NMI writers.
 */
#include <sys/epoll.h>
#include <time.h>
#include "pea_test.h"
#include "libpea.h"

#define MAP "flush"
#define PAGES 4
#define PAYLOAD 20	/* 32-byte records */
#define REC 32
#define FLUSH_US 50000	/* 50 ms: far above TCG's timer jitter */
#define FLUSH_MS (FLUSH_US / 1000)
#define LATE_MS 1000	/* a wake-up later than this misses the bound */

static unsigned char buf[65536];

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

static int fl_event_open(struct perf_event_attr *attr, __u32 flags,
			 __u32 flush_us)
{
	struct pea_event_open o = {
		.attr = (uintptr_t)attr, .cpu = 0,
		.flags = PEA_FLAG_FD_CLOEXEC | flags, .flush_us = flush_us,
	};
	int fd = ioctl(pt_dev(), PEA_IOC_EVENT_OPEN, &o);

	return fd < 0 ? -errno : fd;
}

/*
 * An event on CPU 0 whose watermark is the whole ring (it never wakes
 * by itself) unless @wakeup_events is set, plus @flags and @flush_us.
 */
static void fl_open(struct pt_polled *f, __u32 flags, __u32 flush_us,
		    __u32 wakeup_events)
{
	struct perf_event_attr attr = pt_output_attr(PERF_SAMPLE_RAW);
	if (wakeup_events) {
		attr.wakeup_events = wakeup_events;
	} else {
		attr.watermark = 1;
		attr.wakeup_watermark = PAGES * pt_page_size();
	}
	pt_polled_open(f, MAP, fl_event_open(&attr, flags, flush_us), PAGES);
}

/* epoll_wait() for up to @ms: 1 on EPOLLIN, 0 on timeout. */
static int ep_wait(int ep, int ms)
{
	struct epoll_event e[2];
	int n;

	do {
		n = epoll_wait(ep, e, 2, ms);
	} while (n < 0 && errno == EINTR);
	return n == 1 && e[0].events != EPOLLIN ? -1 : n;
}

static void out_n(unsigned int n)
{
	__u32 ok = 0;

	if (pt_output_n(MAP, 0, buf, PAYLOAD, n, &ok) || ok != n)
		pt_fatal("pt_output_n");
}

/* Write @n records, sleep in epoll_wait(): ms until EPOLLIN, or -1. */
static long out_wake_ms(struct pt_polled *f, unsigned int n)
{
	__u64 t0 = now_ms();

	out_n(n);
	if (ep_wait(f->ep, 3 * LATE_MS) != 1)
		return -1;
	return (long)(now_ms() - t0);
}

static void test_errors(void)
{
	struct perf_event_attr attr = pt_output_attr(PERF_SAMPLE_RAW);
	struct perf_event_attr clk;
	struct pea_event_open o;
	int fd;

	PT_EQ(fl_event_open(&attr, PEA_FLAG_FLUSH, 0), -EINVAL,
	      "PEA_FLAG_FLUSH with flush_us 0: EINVAL");
	PT_EQ(fl_event_open(&attr, 0, 100), -EINVAL,
	      "flush_us without PEA_FLAG_FLUSH: EINVAL");
	PT_EQ(fl_event_open(&attr, PEA_FLAG_FLUSH, PEA_FLUSH_US_MAX + 1),
	      -EINVAL, "flush_us PEA_FLUSH_US_MAX + 1: EINVAL");
	fd = fl_event_open(&attr, PEA_FLAG_FLUSH, PEA_FLUSH_US_MAX);
	PT_OK(fd >= 0, "flush_us PEA_FLUSH_US_MAX (1 s) is accepted");
	if (fd >= 0)
		close(fd);
	fd = fl_event_open(&attr, PEA_FLAG_FLUSH, 1);
	PT_OK(fd >= 0, "flush_us 1 is accepted");
	if (fd >= 0)
		close(fd);
	fd = fl_event_open(&attr, PEA_FLAG_FLUSH | PEA_FLAG_ADAPTIVE_WAKEUP,
			   1000);
	PT_OK(fd >= 0,
	      "PEA_FLAG_FLUSH with PEA_FLAG_ADAPTIVE_WAKEUP is accepted");
	if (fd >= 0)
		close(fd);
	attr.write_backward = 1;
	fd = fl_event_open(&attr, PEA_FLAG_FLUSH, 1000);
	PT_OK(fd >= 0, "PEA_FLAG_FLUSH with write_backward is accepted");
	if (fd >= 0)
		close(fd);
	attr.write_backward = 0;
	PT_EQ(fl_event_open(&attr, 1U << 10, 0), -EINVAL,
	      "event open: unknown flag bit 10: EINVAL");

	memset(&o, 0, sizeof(o));
	o.attr = (uintptr_t)&attr;
	o.reserved32 = 1;
	PT_EQ(pt_ioctl_errno(pt_dev(), PEA_IOC_EVENT_OPEN, &o), EINVAL,
	      "event open: non-zero reserved32: EINVAL");

	/* A counter has no ring: wake-up flags are refused. */
	memset(&clk, 0, sizeof(clk));
	clk.size = sizeof(clk);
	clk.type = PERF_TYPE_SOFTWARE;
	clk.config = PERF_COUNT_SW_CPU_CLOCK;
	PT_EQ(fl_event_open(&clk, PEA_FLAG_FLUSH, 1000), -EINVAL,
	      "counter event with PEA_FLAG_FLUSH: EINVAL");
	PT_EQ(fl_event_open(&clk, PEA_FLAG_ADAPTIVE_WAKEUP, 0), -EINVAL,
	      "counter event with PEA_FLAG_ADAPTIVE_WAKEUP: EINVAL");
	fd = fl_event_open(&clk, 0, 0);
	PT_OK(fd >= 0, "the same counter event without the flags opens");
	if (fd >= 0)
		close(fd);
}

/* Below the watermark: no wake-up without the flag, flush_us with it. */
static void test_bound(void)
{
	struct pt_polled f;
	long ms;

	fl_open(&f, 0, 0, 0);
	out_n(1);
	PT_EQ(ep_wait(f.ep, 4 * FLUSH_MS), 0,
	      "no flag: a record below the watermark never wakes the reader");
	PT_EQ(pt_wakeups(f.fd), 0, "no flag: stats.wakeups 0");
	pt_polled_close(&f);

	fl_open(&f, PEA_FLAG_FLUSH, FLUSH_US, 0);
	PT_EQ(ep_wait(f.ep, 0), 0, "flush: nothing before the first record");
	ms = out_wake_ms(&f, 1);
	PT_OK(ms >= FLUSH_MS && ms < LATE_MS,
	      "flush 50 ms: one record wakes the sleeping reader after %ld ms "
	      "(bound 50, late %d)", ms, LATE_MS);
	PT_EQ(pt_wakeups(f.fd), 1, "flush: stats.wakeups 1");
	PT_EQ(ep_wait(f.ep, 4 * FLUSH_MS), 0,
	      "flush: the wake-up was taken and no record came: no other");

	/* Unread records stay; a new one gets its own deadline. */
	ms = out_wake_ms(&f, 1);
	PT_OK(ms >= FLUSH_MS && ms < LATE_MS,
	      "flush: record 2 (record 1 unread) wakes after %ld ms", ms);
	PT_EQ(pt_wakeups(f.fd), 2, "flush: stats.wakeups 2");

	/* A burst: one deadline, one wake-up. */
	ms = out_wake_ms(&f, 60);
	PT_OK(ms >= FLUSH_MS && ms < LATE_MS,
	      "flush: a burst of 60 records wakes once after %ld ms", ms);
	PT_EQ(ep_wait(f.ep, 4 * FLUSH_MS), 0,
	      "flush: no second wake-up for the burst");
	PT_EQ(pt_wakeups(f.fd), 3, "flush: stats.wakeups 3 after 62 records");
	PT_EQ(pt_head(&f.r), 62 * REC, "flush: data_head 62 records");

	/* The reader catches up before the deadline: nothing to wake for. */
	pt_ring_drain(&f.r);
	out_n(1);
	pt_ring_drain(&f.r);
	PT_EQ(ep_wait(f.ep, 4 * FLUSH_MS), 0,
	      "flush: a record read before its deadline wakes nobody");
	PT_EQ(pt_wakeups(f.fd), 3, "flush: stats.wakeups still 3");

	/* And the next record after that is bounded again. */
	ms = out_wake_ms(&f, 1);
	PT_OK(ms >= FLUSH_MS && ms < LATE_MS,
	      "flush: the next record wakes after %ld ms", ms);
	PT_EQ(pt_wakeups(f.fd), 4, "flush: stats.wakeups 4");
	pt_polled_close(&f);
}

/* Records that wake by themselves never start the timer. */
static void test_every_record(void)
{
	struct pt_polled f;

	fl_open(&f, PEA_FLAG_FLUSH, FLUSH_US, 1);
	out_n(1);
	PT_EQ(ep_wait(f.ep, 0), 1,
	      "flush + wakeup_events 1: record 1 wakes at once");
	out_n(1);
	PT_EQ(ep_wait(f.ep, 0), 1,
	      "flush + wakeup_events 1: record 2 wakes at once");
	PT_EQ(ep_wait(f.ep, 4 * FLUSH_MS), 0,
	      "flush + wakeup_events 1: no timer wake-up afterwards");
	PT_EQ(pt_wakeups(f.fd), 2, "flush + wakeup_events 1: stats.wakeups 2");
	pt_polled_close(&f);

	/* wakeup_events 4: records 1-3 get a deadline, record 4 wakes. */
	fl_open(&f, PEA_FLAG_FLUSH, FLUSH_US, 4);
	out_n(3);
	PT_EQ(ep_wait(f.ep, 0), 0, "flush + wakeup_events 4: 3 records: no wake yet");
	out_n(1);
	PT_EQ(ep_wait(f.ep, 0), 1, "flush + wakeup_events 4: record 4 wakes at once");
	pt_ring_drain(&f.r);
	PT_EQ(ep_wait(f.ep, 4 * FLUSH_MS), 0,
	      "flush + wakeup_events 4: the reader read all 4 before the "
	      "deadline of records 1-3: no second wake-up");
	PT_EQ(pt_wakeups(f.fd), 1, "flush + wakeup_events 4: stats.wakeups 1");
	pt_polled_close(&f);

	/*
	 * A slow reader: woken by record 4, it reads only after the deadline
	 * of records 1-3 has passed. That wake-up covered them: no second
	 * one (the debug kernel under load once took longer than 50 ms
	 * between the two, and the timer woke the reader again).
	 */
	fl_open(&f, PEA_FLAG_FLUSH, FLUSH_US, 4);
	out_n(3);
	out_n(1);
	PT_EQ(ep_wait(f.ep, 0), 1, "flush, slow reader: record 4 wakes at once");
	usleep(3 * FLUSH_US);
	PT_EQ(ep_wait(f.ep, 0), 0,
	      "flush, slow reader: the deadline of records 1-3 passes: no second wake-up");
	pt_ring_drain(&f.r);
	PT_EQ(pt_wakeups(f.fd), 1, "flush, slow reader: stats.wakeups 1");
	/* A record after that wake-up still gets its deadline. */
	out_n(1);
	PT_EQ(ep_wait(f.ep, LATE_MS), 1,
	      "flush, slow reader: a later record is woken for within the bound");
	PT_EQ(pt_wakeups(f.fd), 2, "flush, slow reader: stats.wakeups 2");
	pt_polled_close(&f);
}

/* Adaptive: a reader that is behind is woken within the bound too. */
static void test_adaptive(void)
{
	struct pt_polled f;
	long ms;

	fl_open(&f, PEA_FLAG_FLUSH | PEA_FLAG_ADAPTIVE_WAKEUP, FLUSH_US, 0);
	out_n(1);
	PT_EQ(ep_wait(f.ep, 0), 1, "flush + adaptive: record 1 wakes at once");
	ms = out_wake_ms(&f, 1);
	PT_OK(ms >= FLUSH_MS && ms < LATE_MS,
	      "flush + adaptive: record 2 (reader behind) wakes after %ld ms",
	      ms);
	PT_EQ(pt_wakeups(f.fd), 2, "flush + adaptive: stats.wakeups 2");
	pt_polled_close(&f);
}

static int n_samples;

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	(void)ctx;
	(void)cpu;
	(void)data;
	if (size == PAYLOAD)
		n_samples++;
}

static void test_libpea(void)
{
	LIBPEA_OPTS(pea_buffer_opts, opts, .flush_us = FLUSH_US,
		    .wakeup_watermark = PAGES * 4096);
	struct pea_buffer *pb;
	__u64 t0;
	long ms;
	int map, n;

	map = pt_map_create(MAP, 1, 0);
	if (map < 0)
		pt_fatal("map");
	pb = pea_buffer__new(map, PAGES, on_sample, NULL, NULL, &opts);
	PT_OK(pb != NULL, "libpea: pea_buffer__new with flush_us");
	if (!pb)
		pt_fatal("pea_buffer__new");
	t0 = now_ms();
	out_n(5);
	n = pea_buffer__poll(pb, 3 * LATE_MS);
	ms = (long)(now_ms() - t0);
	PT_EQ(n, 1, "libpea: poll returns the ring");
	PT_EQ(n_samples, 5, "libpea: 5 samples, watermark not reached");
	PT_OK(ms >= FLUSH_MS && ms < LATE_MS, "libpea: after %ld ms", ms);
	PT_EQ(pea_buffer__poll(pb, 4 * FLUSH_MS), 0, "libpea: then nothing");
	pea_buffer__free(pb);

	opts.flush_us = PEA_FLUSH_US_MAX + 1;
	PT_OK(pea_buffer__new(map, PAGES, on_sample, NULL, NULL, &opts) ==
	      NULL && errno == EINVAL,
	      "libpea: flush_us above PEA_FLUSH_US_MAX: EINVAL");
	close(map);
}

int main(void)
{
	pt_pin(0);
	pt_st();
	memset(buf, 0x5a, sizeof(buf));
	test_errors();
	test_bound();
	test_every_record();
	test_adaptive();
	test_libpea();
	return pt_done();
}
