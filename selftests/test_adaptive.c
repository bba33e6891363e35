// SPDX-License-Identifier: GPL-2.0
/*
 * PEA_FLAG_ADAPTIVE_WAKEUP: a record wakes the reader exactly when
 * data_tail equals the data_head it replaced (the reader had read
 * everything); libpea's PEA_BUFFER_ADAPTIVE_WAKEUP; the flag is refused
 * with write_backward; and Linux's every-record wake-ups, coalesced
 * while a wake-up is unconsumed, still count and report as Linux does.
 */
#include <sys/epoll.h>
#include "pea_test.h"
#include "libpea.h"

#define MAP "adaptive"
#define PAYLOAD 20	/* 32-byte records: 8 + round_up(4 + 20, 8) */
#define REC 32

static unsigned char buf[65536];

static int ad_event_open(struct perf_event_attr *attr, __u32 flags)
{
	struct pea_event_open o = {
		.attr = (uintptr_t)attr, .cpu = 0,
		.flags = PEA_FLAG_FD_CLOEXEC | flags,
	};
	int fd = ioctl(pt_dev(), PEA_IOC_EVENT_OPEN, &o);

	return fd < 0 ? -errno : fd;
}

static void ad_open(struct pt_polled *a, __u32 flags, __u32 wakeup_events)
{
	struct perf_event_attr attr = pt_output_attr(PERF_SAMPLE_RAW);
	attr.wakeup_events = wakeup_events;
	pt_polled_open(a, MAP, ad_event_open(&attr, flags), 4);
}

static int ep_wait0(int ep)
{
	struct epoll_event e[2];
	int n = epoll_wait(ep, e, 2, 0);

	return n == 1 && e[0].events != EPOLLIN ? -1 : n;
}

/* Output one record; then epoll_wait(0): 1 if it woke, 0 if not. */
static int out_woke(struct pt_polled *a)
{
	if (pt_output(MAP, 0, buf, PAYLOAD))
		pt_fatal("pt_output");
	return ep_wait0(a->ep);
}

static void test_which_record_wakes(void)
{
	struct pt_polled a;

	ad_open(&a, PEA_FLAG_ADAPTIVE_WAKEUP, 1);
	PT_EQ(ep_wait0(a.ep), 0, "adaptive: nothing before output");
	PT_EQ(out_woke(&a), 1, "adaptive: record 1 (tail 0 == its start 0) wakes");
	PT_EQ(out_woke(&a), 0, "adaptive: record 2 (tail 0, start 32) does not");
	PT_EQ(out_woke(&a), 0, "adaptive: record 3 (tail 0, start 64) does not");
	PT_EQ(pt_wakeups(a.fd), 1, "adaptive: stats.wakeups 1 after 3 records");

	pt_ring_drain(&a.r);	/* tail 96 */
	PT_EQ(out_woke(&a), 1, "adaptive: after a full drain record 4 wakes");
	PT_EQ(out_woke(&a), 0, "adaptive: record 5 (tail 96, start 128) does not");
	PT_EQ(pt_ring_next(&a.r, buf), REC, "adaptive: read record 4 only");
	PT_EQ(a.r.pg->data_tail, 4 * REC, "adaptive: data_tail 128");
	PT_EQ(out_woke(&a), 0,
	      "adaptive: record 6 (tail 128, start 160: one unread) does not");
	PT_EQ(pt_ring_next(&a.r, buf) + pt_ring_next(&a.r, buf), 2 * REC,
	      "adaptive: read records 5 and 6");
	PT_EQ(out_woke(&a), 1, "adaptive: record 7 (tail 192 == start) wakes");
	PT_EQ(pt_wakeups(a.fd), 3, "adaptive: stats.wakeups 3 after 7 records");
	PT_EQ(pt_head(&a.r), 7 * REC, "adaptive: data_head 224");
	pt_polled_close(&a);

	/* wakeup_events is not used for wake-ups: 4 records, one wake. */
	ad_open(&a, PEA_FLAG_ADAPTIVE_WAKEUP, 2);
	PT_EQ(out_woke(&a) + out_woke(&a) + out_woke(&a) + out_woke(&a), 1,
	      "adaptive with wakeup_events 2: only record 1 wakes");
	PT_EQ(pt_wakeups(a.fd), 1, "adaptive with wakeup_events 2: stats.wakeups 1");
	pt_polled_close(&a);
}

static void test_refused(void)
{
	struct perf_event_attr attr = pt_output_attr(PERF_SAMPLE_RAW);

	attr.write_backward = 1;
	PT_EQ(ad_event_open(&attr, PEA_FLAG_ADAPTIVE_WAKEUP), -EINVAL,
	      "adaptive with write_backward: EINVAL");
	attr.write_backward = 0;
	PT_EQ(ad_event_open(&attr, 1U << 10), -EINVAL,
	      "event open: unknown flag bit 10: EINVAL");
}

/* Linux semantics without the flag: every record counts a wake-up. */
static void test_every_record_coalesced(void)
{
	struct pt_polled a;
	int i;

	ad_open(&a, 0, 1);
	for (i = 0; i < 5; i++)
		if (pt_output(MAP, 0, buf, PAYLOAD))
			pt_fatal("pt_output");
	PT_EQ(pt_wakeups(a.fd), 5, "wakeup_events 1: 5 records, stats.wakeups 5");
	PT_EQ(ep_wait0(a.ep), 1, "wakeup_events 1: epoll reports EPOLLIN once");
	PT_EQ(ep_wait0(a.ep), 0, "wakeup_events 1: then nothing until the next wake-up");
	PT_EQ(out_woke(&a), 1, "wakeup_events 1: record 6 wakes again");
	PT_EQ(pt_wakeups(a.fd), 6, "wakeup_events 1: stats.wakeups 6");
	pt_polled_close(&a);
}

static int n_samples;

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	(void)ctx;
	(void)cpu;
	(void)data;
	if (size == REC - 8 - 4)
		n_samples++;
}

static void test_libpea(void)
{
	LIBPEA_OPTS(pea_buffer_opts, opts, .flags = PEA_BUFFER_ADAPTIVE_WAKEUP);
	struct pea_event_stats st;
	struct pea_buffer *pb;
	int map, i;

	map = pt_map_create(MAP, 1, 0);
	if (map < 0)
		pt_fatal("map");
	pb = pea_buffer__new(map, 4, on_sample, NULL, NULL, &opts);
	PT_OK(pb != NULL, "libpea: pea_buffer__new with PEA_BUFFER_ADAPTIVE_WAKEUP");
	if (!pb)
		pt_fatal("pea_buffer__new");
	PT_EQ(pt_output(MAP, 0, buf, PAYLOAD), 0, "libpea: record 1 written");
	PT_EQ(pea_buffer__poll(pb, 1000), 1, "libpea: poll returns one ring");
	PT_EQ(n_samples, 1, "libpea: 1 sample");
	for (i = 0; i < 3; i++)
		if (pt_output(MAP, 0, buf, PAYLOAD))
			pt_fatal("pt_output");
	PT_EQ(pea_buffer__poll(pb, 1000), 1, "libpea: records 2-4: poll returns one ring");
	PT_EQ(n_samples, 4, "libpea: 4 samples");
	PT_EQ(pea_buffer__poll(pb, 0), 0, "libpea: then nothing");
	if (ioctl(pea_buffer__buffer_fd(pb, 0), PEA_EVENT_IOC_STATS, &st))
		pt_fatal("stats");
	PT_EQ(st.wakeups, 2, "libpea: records 1 and 2 woke, 3 and 4 did not");
	opts.flags = PEA_BUFFER_ADAPTIVE_WAKEUP << 1;
	PT_OK(pea_buffer__new(map, 4, on_sample, NULL, NULL, &opts) == NULL &&
	      errno == EINVAL, "libpea: an unknown opts flag gives EINVAL");
	pea_buffer__free(pb);
	close(map);
}

int main(void)
{
	pt_pin(0);
	pt_st();
	memset(buf, 0x5a, sizeof(buf));
	test_which_record_wakes();
	test_refused();
	test_every_record_coalesced();
	test_libpea();
	return pt_done();
}
