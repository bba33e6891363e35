// SPDX-License-Identifier: GPL-2.0
/*
 * libpea's flight recorder ordered across CPUs (PEA_BUFFER_FLAG_OVERWRITE
 * with PEA_BUFFER_FLAG_ORDERED), against the real module:
 *
 *   - the combination is accepted (not with AUTO_CALLBACK: EINVAL), the
 *     reading calls stay refused, an empty snapshot delivers 0, horizon 0;
 *   - rings that did not wrap: every record, merged in time order, exact;
 *   - one ring wrapped: the horizon is the time of its oldest record left,
 *     and the stream is exactly the records at or after it of every CPU,
 *     in the order they were written (the writer moves between CPUs);
 *   - two rings wrapped: the later of their oldest records is the horizon;
 *   - a storm from every context on every CPU: each snapshot is
 *     non-decreasing in time, at or after its horizon, per CPU and source
 *     in sequence; the final snapshot of the quiet rings equals an
 *     independent parse of the rings (horizon, filter, merge) record for
 *     record, and the drops reported equal the storm's -ENOSPC count.
 */
#include <time.h>
#include "pea_test.h"
#include "pt_tagged.h"
#include "pt_storm.h"
#include "libpea.h"

#define MAP		"snap_ord"
#define MAX_CPUS	PEA_ST_MAX_CPUS
#define PAYLOAD		100	/* record: 8 + 8 (time) + 4 + 100 = 120 */
#define REC_SIZE	120
#define MAX_RECS	8192
#define SNAPSHOTS	10	/* during the storm */

static int ncpu;

/* ---- what the callbacks saw ---- */

struct got {
	int cpu;
	__u32 size;
	__u32 tag;			/* test records: the tag */
	__u32 tag_cpu;			/* test records: the CPU in the payload */
	struct pea_st_record st;	/* storm records: the header */
	__u64 time;
};

static struct sink {
	struct got recs[MAX_RECS];
	size_t n;
	__u64 lost[MAX_CPUS];
	bool storm;
	__u64 bad;
	int diags;
} sink;

static void sink_reset(bool storm)
{
	memset(&sink, 0, sizeof(sink));
	sink.storm = storm;
}

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct pea_sample_info info;
	unsigned char want[PAYLOAD];
	const char *why;
	struct got *g;

	(void)ctx;
	if (sink.n == MAX_RECS) {
		sink.bad++;
		return;
	}
	g = &sink.recs[sink.n++];
	memset(g, 0, sizeof(*g));
	g->cpu = cpu;
	g->size = size;
	memset(&info, 0, sizeof(info));
	if (pea_sample_info(data, PERF_SAMPLE_TIME, &info))
		sink.bad++;
	g->time = info.time;
	if (sink.storm) {
		why = pt_storm_check(cpu, data, size, &g->st);
		if (why) {
			if (sink.diags++ < 5)
				pt_diag("ring %d: %s", cpu, why);
			sink.bad++;
		}
		return;
	}
	if (size != PAYLOAD) {
		sink.bad++;
		return;
	}
	memcpy(&g->tag_cpu, data, 4);
	memcpy(&g->tag, (char *)data + 4, 4);
	pt_tagged_payload(want, PAYLOAD, (int)g->tag_cpu, g->tag);
	if (memcmp((char *)data + 8, want + 8, PAYLOAD - 8))
		sink.bad++;
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	(void)ctx;
	if (cpu < 0 || cpu >= MAX_CPUS)
		sink.bad++;
	else
		sink.lost[cpu] += cnt;
}

/* ---- records ---- */

/* Tags @from .. @to - 1 on @cpu. Returns how many gave 0. */
static __u32 produce(int cpu, __u32 from, __u32 to)
{
	return pt_tagged_produce(MAP, PAYLOAD, cpu, from, to);
}

/* The expected stream: (cpu, tag) pairs. */
struct want {
	int cpu;
	__u32 tag;
};

static struct want wants[MAX_RECS];
static size_t nwant;

static void want_add(int cpu, __u32 from, __u32 to)
{
	for (; from < to && nwant < MAX_RECS; from++)
		wants[nwant++] = (struct want){ cpu, from };
}

/* Whether the sink is exactly @wants, in order, with rising times. */
static bool sink_is_wants(void)
{
	size_t i;

	if (sink.bad) {
		pt_diag("%llu bad records", (unsigned long long)sink.bad);
		return false;
	}
	for (i = 0; i < nwant || i < sink.n; i++) {
		const struct got *g = &sink.recs[i];

		if (i >= nwant || i >= sink.n || g->cpu != wants[i].cpu ||
		    g->tag_cpu != (__u32)wants[i].cpu || g->tag != wants[i].tag) {
			pt_diag("record %zu: cpu %d tag %u, want cpu %d tag %u",
				i, i < sink.n ? g->cpu : -1,
				i < sink.n ? g->tag : 0,
				i < nwant ? wants[i].cpu : -1,
				i < nwant ? wants[i].tag : 0);
			return false;
		}
		if (i && g->time <= sink.recs[i - 1].time) {
			pt_diag("record %zu: time %llu after %llu", i,
				(unsigned long long)g->time,
				(unsigned long long)sink.recs[i - 1].time);
			return false;
		}
	}
	return true;
}

static int make_map(void)
{
	int fd = pea_map_create(MAP, ncpu, 0);

	if (fd < 0)
		pt_fatal("pea_map_create");
	return fd;
}

static struct pea_buffer *ordered_recorder(int map, size_t pages)
{
	LIBPEA_OPTS(pea_buffer_opts, opts,
		.flags = PEA_BUFFER_FLAG_OVERWRITE | PEA_BUFFER_FLAG_ORDERED,
	);
	struct pea_buffer *pb;

	pb = pea_buffer__new(map, pages, on_sample, on_lost, NULL, &opts);
	if (!pb)
		pt_fatal("pea_buffer__new(OVERWRITE | ORDERED)");
	return pb;
}

/* ---- tests ---- */

static void test_abi(void)
{
	LIBPEA_OPTS(pea_buffer_opts, opts);
	struct pea_buffer *pb;
	int map = make_map();

	opts.flags = PEA_BUFFER_FLAG_OVERWRITE | PEA_BUFFER_FLAG_ORDERED |
		     PEA_BUFFER_FLAG_AUTO_CALLBACK;
	errno = 0;
	pb = pea_buffer__new(map, 1, on_sample, on_lost, NULL, &opts);
	PT_OK(!pb && errno == EINVAL,
	      "OVERWRITE | ORDERED | AUTO_CALLBACK: NULL, EINVAL (errno %d)",
	      errno);

	sink_reset(false);
	pb = ordered_recorder(map, 1);
	PT_EQ(pea_buffer__poll(pb, 0), -EINVAL, "ordered recorder: __poll is -EINVAL");
	PT_EQ(pea_buffer__consume(pb), -EINVAL, "ordered recorder: __consume is -EINVAL");
	PT_EQ(pea_buffer__consume_buffer(pb, 0), -EINVAL,
	      "ordered recorder: __consume_buffer is -EINVAL");
	PT_EQ(pea_buffer__snapshot(pb), 0, "empty rings: the snapshot delivers 0");
	PT_EQ(pea_buffer__snapshot_horizon(pb), 0, "empty rings: horizon 0");
	PT_EQ(pea_buffer__snapshot_horizon(NULL), 0, "horizon of NULL: 0");
	pea_buffer__free(pb);
	close(map);
}

/* Round robin over every CPU, no ring full: everything, in time order. */
static void test_unwrapped(void)
{
	struct pea_buffer *pb;
	int map = make_map(), cpu, ret, all = 1;
	__u32 tag;

	sink_reset(false);
	nwant = 0;
	pb = ordered_recorder(map, 1);
	for (tag = 0; tag < 5; tag++)
		for (cpu = 0; cpu < ncpu; cpu++) {
			all &= produce(cpu, tag, tag + 1) == 1;
			want_add(cpu, tag, tag + 1);
		}
	PT_OK(all, "unwrapped: 5 records on each CPU, round robin");
	ret = pea_buffer__snapshot(pb);
	PT_EQ(ret, 5 * ncpu, "unwrapped: the snapshot delivers all %d", 5 * ncpu);
	PT_OK(sink_is_wants(),
	      "unwrapped: tag 0 of CPU 0..%d, tag 1 of CPU 0..%d, ...: the order written, times rising",
	      ncpu - 1, ncpu - 1);
	PT_EQ(pea_buffer__snapshot_horizon(pb), 0, "unwrapped: horizon 0");
	pea_buffer__free(pb);
	close(map);
}

/*
 * CPU 1 writes tags 0..2, then CPU 0 tags 0..99 (its one-page ring keeps
 * the newest 34), then the writer alternates: CPU 0 tag 100 + i, CPU 1 tag
 * 3 + i for i < 10. CPU 0 wrapped; its oldest record left is tag 110 - 34
 * = 76, the horizon: CPU 1's tags 0..2 are older and left out.
 */
static void test_one_wrapped(void)
{
	__u32 keep = pt_page_size() / REC_SIZE, i, c0 = 110 - keep;
	struct pea_buffer *pb;
	int map = make_map(), ret, all = 1;

	sink_reset(false);
	nwant = 0;
	pb = ordered_recorder(map, 1);
	all &= produce(1, 0, 3) == 3;
	all &= produce(0, 0, 100) == 100;
	want_add(0, c0, 100);
	for (i = 0; i < 10; i++) {
		all &= produce(0, 100 + i, 101 + i) == 1;
		want_add(0, 100 + i, 101 + i);
		all &= produce(1, 3 + i, 4 + i) == 1;
		want_add(1, 3 + i, 4 + i);
	}
	PT_OK(all, "one wrapped: every output succeeded");
	ret = pea_buffer__snapshot(pb);
	PT_EQ(ret, (int)nwant, "one wrapped: %zu records delivered", nwant);
	PT_OK(sink_is_wants(),
	      "one wrapped: CPU 0 tags %u..99, then CPU 0 100+i and CPU 1 3+i alternating; CPU 1 tags 0..2 (before the horizon) left out",
	      c0);
	PT_OK(sink.n && pea_buffer__snapshot_horizon(pb) == sink.recs[0].time,
	      "one wrapped: the horizon is the time of CPU 0's oldest record left (tag %u)",
	      c0);

	/* Nothing consumed: the same again. */
	sink_reset(false);
	ret = pea_buffer__snapshot(pb);
	PT_OK(ret == (int)nwant && sink_is_wants(),
	      "one wrapped: a second snapshot delivers the same stream");
	pea_buffer__free(pb);
	close(map);
}

/*
 * CPU 0 writes tags 0..99, CPU 1 tags 0..49, CPU 0 tags 100..109: both
 * wrapped. CPU 0's oldest left is tag 76 (before CPU 1 wrote anything),
 * CPU 1's is tag 50 - 34 = 16: the later one is the horizon.
 */
static void test_two_wrapped(void)
{
	__u32 keep = pt_page_size() / REC_SIZE, c1 = 50 - keep;
	struct pea_buffer *pb;
	int map = make_map(), ret, all = 1;

	sink_reset(false);
	nwant = 0;
	pb = ordered_recorder(map, 1);
	all &= produce(0, 0, 100) == 100;
	all &= produce(1, 0, 50) == 50;
	all &= produce(0, 100, 110) == 10;
	want_add(1, c1, 50);
	want_add(0, 100, 110);
	PT_OK(all, "two wrapped: every output succeeded");
	ret = pea_buffer__snapshot(pb);
	PT_EQ(ret, (int)nwant, "two wrapped: %zu records delivered", nwant);
	PT_OK(sink_is_wants(),
	      "two wrapped: CPU 1 tags %u..49 then CPU 0 tags 100..109; CPU 0's older records left out",
	      c1);
	PT_OK(sink.n && pea_buffer__snapshot_horizon(pb) == sink.recs[0].time,
	      "two wrapped: the horizon is CPU 1's oldest record left (tag %u), the later of the two",
	      c1);
	pea_buffer__free(pb);
	close(map);
}

/* ---- the storm, and an independent parse ---- */

struct ref {
	int cpu;
	__u64 time;
	__u32 source;
	__u64 seq;
};

static struct ref refs[MAX_RECS];
static struct ref ring_refs[MAX_CPUS][MAX_RECS / 2];
static size_t ring_n[MAX_CPUS];

/*
 * Parse a quiet backward ring by hand: its samples oldest first into
 * ring_refs[idx]; returns whether it wrapped and sets *@oldest.
 */
static bool parse_ring(struct pea_buffer *pb, size_t idx, __u64 *oldest)
{
	static unsigned char lin[1 << 20];
	struct perf_event_mmap_page *pg;
	const unsigned char *data;
	size_t size, n = 0, k, i;
	__u64 head, avail, pos = 0, offs[MAX_RECS / 2];
	int cpu = pea_buffer__buffer_cpu(pb, idx);
	void *base;

	pea_buffer__buffer(pb, idx, &base, &size);
	pg = base;
	data = (const unsigned char *)base + pt_page_size();
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	avail = -head < size ? -head : size;
	for (i = 0; i < avail; i++)
		lin[i] = data[(head + i) & (size - 1)];
	while (pos + 8 <= avail && n < MAX_RECS / 2) {
		struct perf_event_header h;
		__u32 raw;

		memcpy(&h, lin + pos, sizeof(h));
		if (h.size < 8 || h.size % 8 || pos + h.size > avail)
			break;
		if (h.type == PERF_RECORD_SAMPLE) {
			memcpy(&raw, lin + pos + 16, 4);
			if (20 + raw != h.size)
				break;
			offs[n++] = pos;
		} else if (h.type != PERF_RECORD_LOST) {
			break;
		}
		pos += h.size;
	}
	/* Newest first in offs: reverse. */
	for (k = 0; k < n; k++) {
		struct ref *r = &ring_refs[idx][k];
		const unsigned char *rec = lin + offs[n - 1 - k];
		struct pea_st_record st;

		r->cpu = cpu;
		memcpy(&r->time, rec + 8, 8);
		memcpy(&st, rec + 20, sizeof(st));
		r->source = st.source;
		r->seq = st.seq;
	}
	ring_n[idx] = n;
	*oldest = n ? ring_refs[idx][0].time : ~0ULL;
	return -head > pos;
}

/* The expected final snapshot: horizon, filter, merge; returns count. */
static size_t expect_snapshot(struct pea_buffer *pb, __u64 *horizon)
{
	size_t cnt = pea_buffer__buffer_cnt(pb), next[MAX_CPUS], n = 0, i;
	__u64 oldest;

	*horizon = 0;
	for (i = 0; i < cnt; i++)
		if (parse_ring(pb, i, &oldest) && oldest > *horizon)
			*horizon = oldest;
	for (i = 0; i < cnt; i++) {
		next[i] = 0;
		while (next[i] < ring_n[i] &&
		       ring_refs[i][next[i]].time < *horizon)
			next[i]++;
	}
	for (;;) {
		size_t best = cnt;

		for (i = 0; i < cnt; i++)
			if (next[i] < ring_n[i] &&
			    (best == cnt || ring_refs[i][next[i]].time <
					    ring_refs[best][next[best]].time))
				best = i;
		if (best == cnt || n == MAX_RECS)
			return n;
		refs[n++] = ring_refs[best][next[best]++];
	}
}

static void test_storm(void)
{
	__u64 last[MAX_CPUS][PEA_ST_NR_SOURCES], nospc, other = 0;
	__u64 lost_total[MAX_CPUS] = { 0 }, horizon, want_h;
	bool have[MAX_CPUS][PEA_ST_NR_SOURCES];
	int map = make_map(), round, ret, cpu, s, errors = 0;
	int timeord = 1, after = 1, seqord = 1, match = 1, wrapped = 0;
	struct pea_buffer *pb;
	struct timespec ts;
	size_t i, n;

	pb = ordered_recorder(map, 2);
	PT_EQ(pt_storm_start(MAP, PT_ALL_SOURCES), 0, "storm started");
	for (round = 0; round < SNAPSHOTS; round++) {
		ts.tv_sec = 0;
		ts.tv_nsec = 100000000L;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		sink_reset(true);
		ret = pea_buffer__snapshot(pb);
		horizon = pea_buffer__snapshot_horizon(pb);
		wrapped += horizon != 0;
		errors += ret < 0 || (size_t)ret != sink.n || sink.bad;
		memset(have, 0, sizeof(have));
		for (cpu = 0; cpu < ncpu; cpu++)
			lost_total[cpu] += sink.lost[cpu];
		for (i = 0; i < sink.n; i++) {
			const struct got *g = &sink.recs[i];

			if (i && g->time < sink.recs[i - 1].time)
				timeord = 0;
			if (g->time < horizon)
				after = 0;
			s = g->st.source % PEA_ST_NR_SOURCES;
			if (have[g->cpu][s] && g->st.seq <= last[g->cpu][s])
				seqord = 0;
			have[g->cpu][s] = true;
			last[g->cpu][s] = g->st.seq;
		}
	}
	PT_EQ(errors, 0, "storm: %d snapshots while producing, every record intact",
	      SNAPSHOTS);
	PT_OK(timeord, "storm: every snapshot is one stream, non-decreasing in time");
	PT_OK(after, "storm: no record before its snapshot's horizon");
	PT_OK(seqord, "storm: per CPU and source, seq increasing");
	PT_OK(wrapped > 0, "storm: the rings wrapped (%d snapshots had a horizon)",
	      wrapped);
	PT_EQ(pt_storm_stop(), 0, "storm stopped");

	/* Quiet now: the final snapshot must equal the rings, by hand. */
	sink_reset(true);
	ret = pea_buffer__snapshot(pb);
	horizon = pea_buffer__snapshot_horizon(pb);
	n = expect_snapshot(pb, &want_h);
	PT_EQ(sink.bad, 0, "final snapshot: every record intact");
	PT_OK(horizon == want_h && want_h,
	      "final snapshot: the horizon is the latest oldest-record time of the wrapped rings (%llu)",
	      (unsigned long long)want_h);
	for (i = 0; i < n && i < sink.n; i++) {
		const struct got *g = &sink.recs[i];

		if (g->cpu != refs[i].cpu || g->time != refs[i].time ||
		    g->st.source != refs[i].source || g->st.seq != refs[i].seq) {
			if (match)
				pt_diag("record %zu: cpu %d seq %llu, want cpu %d seq %llu",
					i, g->cpu,
					(unsigned long long)g->st.seq,
					refs[i].cpu,
					(unsigned long long)refs[i].seq);
			match = 0;
		}
	}
	PT_OK(match && n == sink.n && ret == (int)n && n > 0,
	      "final snapshot equals the independent parse: horizon, filter, merge (%zu records)",
	      n);
	for (cpu = 0; cpu < ncpu; cpu++)
		lost_total[cpu] += sink.lost[cpu];

	match = 1;
	for (cpu = 0; cpu < ncpu; cpu++) {
		nospc = 0;
		for (s = 0; s < PEA_ST_NR_SOURCES; s++) {
			nospc += pt_storm_result.c[cpu][s].nospc;
			other += pt_storm_result.c[cpu][s].other;
		}
		if (lost_total[cpu] != nospc) {
			match = 0;
			pt_diag("cpu %d: lost reported %llu, storm nospc %llu",
				cpu, (unsigned long long)lost_total[cpu],
				(unsigned long long)nospc);
		}
	}
	PT_OK(match, "storm: drops reported == the storm's -ENOSPC, per CPU");
	PT_EQ(other, 0, "storm: no other error");
	pea_buffer__free(pb);
	close(map);
}

int main(void)
{
	ncpu = pt_setup(MAX_CPUS);
	test_abi();
	test_unwrapped();
	PT_OK(ncpu >= 2, "the guest has 2 CPUs or more (%d)", ncpu);
	if (ncpu >= 2) {
		test_one_wrapped();
		test_two_wrapped();
	}
	test_storm();
	return pt_done();
}
