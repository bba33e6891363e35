// SPDX-License-Identifier: GPL-2.0
/*
 * libpea's flight recorder (PEA_BUFFER_FLAG_OVERWRITE + pea_buffer__snapshot)
 * and pea_buffer__pause(), against the real module:
 *
 *   - a snapshot delivers exactly the whole records that fit in one ring,
 *     the newest ones, oldest first, with exact bytes; it consumes nothing;
 *     before the ring wraps it delivers everything written;
 *   - drops are reported once each through the lost callback (the growth
 *     of the event's lost counter), also those of a ring the user paused;
 *   - sample fields (TID, CPU) are readable with pea_sample_info();
 *   - reading calls that make no sense in this mode are refused;
 *   - while the test module's storm writes from every context on every
 *     CPU, every record a snapshot delivers is intact and in order, the
 *     final snapshot of the quiet rings equals an independent parse of the
 *     ring, and the drops reported equal the storm's -ENOSPC count;
 *   - __pause on a normal buffer: output dropped and reported, resumed.
 */
#include <time.h>
#include "pea_test.h"
#include "pt_tagged.h"
#include "pt_storm.h"
#include "libpea.h"

#define MAP		"snapshot"
#define MAX_CPUS	PEA_ST_MAX_CPUS
#define PAYLOAD		100	/* record: 8 + 4 + 100 = 112 bytes */
#define REC_SIZE	112
#define MAX_RECS	4096
#define SNAPSHOTS	20	/* during the storm */

static int ncpu;

/* ---- what the callbacks saw ---- */

struct got {
	int cpu;
	__u32 size;
	__u32 tag;			/* test records: the tag */
	struct pea_st_record st;	/* storm records: the header */
	struct pea_sample_info info;
	unsigned char data[PAYLOAD + 4];
};

static struct sink {
	struct got recs[MAX_RECS];
	size_t n;
	__u64 lost[MAX_CPUS];
	__u64 lost_calls;
	__u64 sample_type;
	bool storm;
	__u64 bad;
	int diags;
} sink;

static void sink_reset(bool storm, __u64 sample_type)
{
	sink.n = 0;
	memset(sink.lost, 0, sizeof(sink.lost));
	sink.lost_calls = 0;
	sink.storm = storm;
	sink.sample_type = sample_type;
	sink.bad = 0;
	sink.diags = 0;
}

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct got *g;
	const char *why;

	(void)ctx;
	if (sink.n == MAX_RECS) {
		sink.bad++;
		return;
	}
	g = &sink.recs[sink.n++];
	memset(g, 0, sizeof(*g));
	g->cpu = cpu;
	g->size = size;
	if (sink.storm) {
		why = pt_storm_check(cpu, data, size, &g->st);
		if (why) {
			if (sink.diags++ < 5)
				pt_diag("ring %d: %s", cpu, why);
			sink.bad++;
		}
		return;
	}
	memcpy(g->data, data, size < sizeof(g->data) ? size : sizeof(g->data));
	memcpy(&g->tag, g->data + 4, sizeof(g->tag));
	pea_sample_info(data, sink.sample_type, &g->info);
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	(void)ctx;
	sink.lost_calls++;
	if (cpu < 0 || cpu >= MAX_CPUS)
		sink.bad++;
	else
		sink.lost[cpu] += cnt;
}

/* ---- records ---- */

static void make_payload(unsigned char *p, int cpu, __u32 tag)
{
	pt_tagged_payload(p, PAYLOAD, cpu, tag);
}

/* Tags @from .. @to - 1 on @cpu. Returns how many gave 0. */
static __u32 produce(int cpu, __u32 from, __u32 to)
{
	return pt_tagged_produce(MAP, PAYLOAD, cpu, from, to);
}

/* Whether the sink holds, for each CPU in order, tags @from .. @to - 1. */
static bool sink_has(__u32 from, __u32 to)
{
	unsigned char want[PAYLOAD];
	size_t i = 0;
	int cpu;
	__u32 tag;

	for (cpu = 0; cpu < ncpu; cpu++)
		for (tag = from; tag < to; tag++, i++) {
			const struct got *g = &sink.recs[i];

			if (i >= sink.n || g->cpu != cpu || g->size != PAYLOAD) {
				pt_diag("record %zu: cpu %d size %u, want cpu %d tag %u",
					i, i < sink.n ? g->cpu : -1,
					i < sink.n ? g->size : 0, cpu, tag);
				return false;
			}
			make_payload(want, cpu, tag);
			if (memcmp(g->data, want, PAYLOAD)) {
				pt_diag("record %zu: cpu %d tag %u, want tag %u",
					i, cpu, g->tag, tag);
				return false;
			}
		}
	return i == sink.n;
}

static int make_map(void)
{
	int fd = pea_map_create(MAP, ncpu, 0);

	if (fd < 0)
		pt_fatal("pea_map_create");
	return fd;
}

static struct pea_buffer *overwrite_buffer(int map, size_t pages,
					   __u64 sample_type)
{
	LIBPEA_OPTS(pea_buffer_opts, opts,
		.flags = PEA_BUFFER_FLAG_OVERWRITE,
		.sample_type = sample_type,
	);
	struct pea_buffer *pb;

	pb = pea_buffer__new(map, pages, on_sample, on_lost, NULL, &opts);
	if (!pb)
		pt_fatal("pea_buffer__new(OVERWRITE)");
	return pb;
}

/* ---- tests ---- */

static void test_refusals(void)
{
	struct pea_buffer *pb;
	int map = make_map(), ret, err;
	void *base = NULL;
	size_t size = 0;

	pb = overwrite_buffer(map, 1, 0);
	errno = 0;
	ret = pea_buffer__poll(pb, 0);
	err = errno;
	PT_EQ(ret, -EINVAL, "overwrite: __poll gives -EINVAL");
	PT_EQ(err, EINVAL, "overwrite: __poll sets errno EINVAL");
	PT_EQ(pea_buffer__consume(pb), -EINVAL,
	      "overwrite: __consume gives -EINVAL");
	PT_EQ(pea_buffer__consume_buffer(pb, 0), -EINVAL,
	      "overwrite: __consume_buffer gives -EINVAL");
	PT_EQ(pea_buffer__snapshot(pb), 0,
	      "overwrite: snapshot of empty rings delivers 0");
	PT_EQ(pea_buffer__buffer(pb, 0, &base, &size), 0, "__buffer");
	PT_EQ(((struct perf_event_mmap_page *)base)->data_head, 0,
	      "overwrite: data_head starts at 0");
	pea_buffer__free(pb);

	pb = pea_buffer__new(map, 1, on_sample, on_lost, NULL, NULL);
	if (!pb)
		pt_fatal("pea_buffer__new");
	PT_EQ(pea_buffer__snapshot(pb), -EINVAL,
	      "snapshot of a normal buffer gives -EINVAL");
	PT_EQ(pea_buffer__snapshot(NULL), -EINVAL, "snapshot(NULL) gives -EINVAL");
	pea_buffer__free(pb);
	close(map);
}

static void test_window(void)
{
	__u32 size = pt_page_size(), keep = size / REC_SIZE, total = 100;
	struct pea_buffer *pb;
	int map = make_map(), cpu, ret, all = 1;

	sink_reset(false, 0);
	pb = overwrite_buffer(map, 1, 0);
	for (cpu = 0; cpu < ncpu; cpu++)
		all &= produce(cpu, 0, total) == total;
	PT_OK(all, "overwrite: %u outputs of %d bytes succeed on every CPU (no drop for space)",
	      total, PAYLOAD);

	ret = pea_buffer__snapshot(pb);
	PT_EQ(ret, keep * ncpu, "snapshot returns %u per CPU: the whole records in a %u-byte ring",
	      keep, size);
	PT_OK(sink_has(total - keep, total),
	      "snapshot: tags %u..%u of every CPU, oldest first, exact bytes",
	      total - keep, total - 1);
	PT_EQ(sink.lost_calls, 0, "snapshot: no loss reported");

	sink_reset(false, 0);
	ret = pea_buffer__snapshot(pb);
	PT_EQ(ret, keep * ncpu, "a second snapshot delivers the same count");
	PT_OK(sink_has(total - keep, total),
	      "a second snapshot delivers the same records: nothing consumed");

	/* A few more: the window slides to the newest. */
	for (cpu = 0; cpu < ncpu; cpu++)
		all &= produce(cpu, total, total + 5) == 5;
	sink_reset(false, 0);
	ret = pea_buffer__snapshot(pb);
	PT_EQ(ret, keep * ncpu, "after 5 more: same count");
	PT_OK(all && sink_has(total + 5 - keep, total + 5),
	      "after 5 more: the window moved by 5 records");
	pea_buffer__free(pb);

	/* Before the ring wraps: everything written. */
	sink_reset(false, 0);
	pb = overwrite_buffer(map, 1, 0);
	for (cpu = 0; cpu < ncpu; cpu++)
		all &= produce(cpu, 0, 10) == 10;
	ret = pea_buffer__snapshot(pb);
	PT_EQ(ret, 10 * ncpu, "unwrapped ring: 10 records per CPU");
	PT_OK(all && sink_has(0, 10), "unwrapped ring: tags 0..9, oldest first");
	pea_buffer__free(pb);
	close(map);
}

static void test_sample_info(void)
{
	__u64 st = PERF_SAMPLE_TID | PERF_SAMPLE_CPU;
	struct pea_buffer *pb;
	int map = make_map(), cpu, ret, ok = 1;
	size_t i;

	sink_reset(false, st);
	pb = overwrite_buffer(map, 2, st);
	for (cpu = 0; cpu < ncpu; cpu++)
		produce(cpu, 0, 3);
	ret = pea_buffer__snapshot(pb);
	PT_EQ(ret, 3 * ncpu, "TID|CPU: 3 records per CPU");
	PT_OK(sink_has(0, 3), "TID|CPU: payloads exact");
	for (i = 0; i < sink.n; i++) {
		const struct got *g = &sink.recs[i];

		ok &= g->info.pid == (__u32)getpid() &&
		      g->info.tid == (__u32)syscall(SYS_gettid) &&
		      g->info.cpu == (__u32)g->cpu;
	}
	PT_OK(ok, "TID|CPU: pea_sample_info() reads pid, tid, cpu of each record");
	pea_buffer__free(pb);
	close(map);
}

static void test_lost(void)
{
	unsigned char p[PAYLOAD];
	struct pea_buffer *pb;
	int map = make_map(), ret, cpu0;
	__u64 lost = 0;

	sink_reset(false, 0);
	pb = overwrite_buffer(map, 1, 0);
	cpu0 = pea_buffer__buffer_cpu(pb, 0);
	PT_EQ(produce(cpu0, 0, 2), 2, "2 records on ring 0");
	PT_EQ(pea_buffer__pause(pb, 0, true), 0, "pause ring 0");
	PT_EQ(produce(cpu0, 2, 5), 0, "3 outputs while paused all fail");
	ret = pea_buffer__snapshot(pb);
	PT_EQ(ret, 2, "snapshot of the paused ring: its 2 records");
	PT_EQ(sink.lost[cpu0], 3, "snapshot reports the 3 drops");
	PT_EQ(sink.lost_calls, 1, "in one lost callback");

	make_payload(p, cpu0, 5);
	PT_EQ(pt_output(MAP, PEA_F_CURRENT_CPU, p, PAYLOAD), -ENOSPC,
	      "a user-paused ring stays paused after a snapshot");
	PT_EQ(pea_buffer__pause(pb, 0, false), 0, "resume ring 0");
	PT_EQ(produce(cpu0, 6, 7), 1, "output after resume succeeds");

	sink_reset(false, 0);
	ret = pea_buffer__snapshot(pb);
	PT_EQ(ret, 3, "next snapshot: 3 records (the LOST record is not a sample)");
	PT_OK(sink.n == 3 && sink.recs[0].tag == 0 && sink.recs[1].tag == 1 &&
	      sink.recs[2].tag == 6, "tags 0, 1, 6 in that order");
	PT_EQ(sink.lost[cpu0], 1, "only the one new drop is reported");
	PT_EQ(pea_buffer__lost(pb, 0, &lost), 0, "__lost");
	PT_EQ(lost, 4, "__lost is 4: every drop once");

	sink_reset(false, 0);
	pea_buffer__snapshot(pb);
	PT_EQ(sink.lost_calls, 0, "a snapshot with no new drop reports none");
	pea_buffer__free(pb);
	close(map);
}

/* Whole records of a quiet backward ring, newest first, by hand. */
static size_t parse_ring(struct pea_buffer *pb, size_t idx, __u32 *sizes,
			 const unsigned char **payloads, size_t max)
{
	struct perf_event_mmap_page *pg;
	const unsigned char *data;
	size_t size, n = 0;
	__u64 head, avail, pos = 0;
	void *base;

	pea_buffer__buffer(pb, idx, &base, &size);
	pg = base;
	data = (const unsigned char *)base + pt_page_size();
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	avail = -head < size ? -head : size;
	while (pos + 8 <= avail && n < max) {
		struct perf_event_header h;
		size_t off = (head + pos) & (size - 1);

		/* Records are 8-aligned, the ring too: a header never wraps. */
		memcpy(&h, data + off, sizeof(h));
		if (h.size < 8 || pos + h.size > avail)
			break;
		if (h.type == PERF_RECORD_SAMPLE) {
			/* A storm record never wraps in the copy below. */
			if (off + h.size > size)
				payloads[n] = NULL;
			else
				payloads[n] = data + off + 12;
			memcpy(&sizes[n], data + ((off + 8) & (size - 1)), 4);
			n++;
		}
		pos += h.size;
	}
	return n;
}

static void test_storm(void)
{
	static __u32 sizes[MAX_RECS];
	static const unsigned char *payloads[MAX_RECS];
	__u64 last[MAX_CPUS][PEA_ST_NR_SOURCES];
	bool have[MAX_CPUS][PEA_ST_NR_SOURCES];
	struct timespec ts;
	struct pea_buffer *pb;
	int map = make_map(), round, ret, cpu, s;
	int order = 1, per_cpu = 1, errors = 0, match = 1;
	__u64 nospc, other = 0, lost_total[MAX_CPUS] = { 0 };
	size_t i, idx, k;

	pb = overwrite_buffer(map, 4, 0);
	PT_EQ(pt_storm_start(MAP, PT_ALL_SOURCES), 0, "storm started");
	for (round = 0; round < SNAPSHOTS; round++) {
		ts.tv_sec = 0;
		ts.tv_nsec = 100000000L;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		sink_reset(true, 0);
		ret = pea_buffer__snapshot(pb);
		errors += ret < 0 || (size_t)ret != sink.n || sink.bad;
		memset(have, 0, sizeof(have));
		for (cpu = 0; cpu < ncpu; cpu++)
			lost_total[cpu] += sink.lost[cpu];
		for (i = 0; i < sink.n; i++) {
			const struct got *g = &sink.recs[i];

			if (i && g->cpu < sink.recs[i - 1].cpu)
				order = 0;
			s = g->st.source % PEA_ST_NR_SOURCES;
			if (have[g->cpu][s] && g->st.seq <= last[g->cpu][s])
				order = 0;
			have[g->cpu][s] = true;
			last[g->cpu][s] = g->st.seq;
		}
		for (cpu = 0; cpu < ncpu; cpu++) {
			bool any = false;

			for (s = 0; s < PEA_ST_NR_SOURCES; s++)
				any |= have[cpu][s];
			per_cpu &= any;
		}
	}
	PT_EQ(errors, 0, "storm: %d snapshots while producing, every record intact",
	      SNAPSHOTS);
	PT_OK(order, "storm: each snapshot oldest first: per CPU and source, seq increasing");
	PT_OK(per_cpu, "storm: each snapshot has records of every CPU");
	PT_EQ(pt_storm_stop(), 0, "storm stopped");

	/* Quiet now: the final snapshot must equal the ring, by hand. */
	sink_reset(true, 0);
	ret = pea_buffer__snapshot(pb);
	PT_EQ(sink.bad, 0, "final snapshot: every record intact");
	k = 0;
	for (idx = 0; idx < pea_buffer__buffer_cnt(pb); idx++) {
		size_t n = parse_ring(pb, idx, sizes, payloads, MAX_RECS);

		cpu = pea_buffer__buffer_cpu(pb, idx);
		/* The snapshot is oldest first, the parse newest first. */
		for (i = n; i-- > 0; k++) {
			const struct got *g = &sink.recs[k];
			struct pea_st_record r;

			if (k >= sink.n || g->cpu != cpu || g->size != sizes[i]) {
				match = 0;
				break;
			}
			if (payloads[i]) {
				memcpy(&r, payloads[i], sizeof(r));
				if (r.seq != g->st.seq || r.source != g->st.source)
					match = 0;
			}
		}
		lost_total[cpu] += sink.lost[cpu];
	}
	PT_OK(match && k == sink.n && ret == (int)k,
	      "final snapshot equals an independent parse of every ring (%zu records)",
	      k);

	match = 1;
	for (cpu = 0; cpu < ncpu; cpu++) {
		__u64 lost = 0;

		nospc = 0;
		for (s = 0; s < PEA_ST_NR_SOURCES; s++) {
			nospc += pt_storm_result.c[cpu][s].nospc;
			other += pt_storm_result.c[cpu][s].other;
		}
		pea_buffer__lost(pb, cpu, &lost);
		if (lost_total[cpu] != nospc || lost != nospc) {
			match = 0;
			pt_diag("cpu %d: lost reported %llu, __lost %llu, storm nospc %llu",
				cpu, (unsigned long long)lost_total[cpu],
				(unsigned long long)lost,
				(unsigned long long)nospc);
		}
	}
	PT_OK(match, "storm: drops reported (during the pauses) == the storm's -ENOSPC, per CPU");
	PT_EQ(other, 0, "storm: no other error");
	pea_buffer__free(pb);
	close(map);
}

/* PERF_EVENT_IOC_PAUSE_OUTPUT on a normal buffer. */
static void test_pause(void)
{
	unsigned char p[PAYLOAD];
	struct pea_buffer *pb;
	int map = make_map(), cpu0;

	sink_reset(false, 0);
	pb = pea_buffer__new(map, 2, on_sample, on_lost, NULL, NULL);
	if (!pb)
		pt_fatal("pea_buffer__new");
	cpu0 = pea_buffer__buffer_cpu(pb, 0);
	PT_EQ(pea_buffer__pause(pb, pea_buffer__buffer_cnt(pb), true), -EINVAL,
	      "pause: index out of range gives -EINVAL");
	PT_EQ(pea_buffer__pause(NULL, 0, true), -EINVAL, "pause: NULL gives -EINVAL");
	PT_EQ(pea_buffer__pause(pb, 0, true), 0, "pause ring 0");
	pt_pin(cpu0);
	make_payload(p, cpu0, 0);
	PT_EQ(pt_output(MAP, PEA_F_CURRENT_CPU, p, PAYLOAD), -ENOSPC,
	      "paused: output gives -ENOSPC");
	PT_EQ(pt_output(MAP, PEA_F_CURRENT_CPU, p, PAYLOAD), -ENOSPC,
	      "paused: again -ENOSPC");
	PT_EQ(pea_buffer__consume(pb), 0, "consume while paused");
	PT_EQ(sink.n, 0, "paused: nothing in the ring");
	PT_EQ(sink.lost[cpu0], 2, "paused: the 2 drops are reported (lost hint)");
	PT_EQ(pea_buffer__pause(pb, 0, false), 0, "resume ring 0");
	PT_EQ(produce(cpu0, 1, 3), 2, "resumed: 2 outputs succeed");
	PT_EQ(pea_buffer__consume(pb), 0, "consume");
	PT_OK(sink.n == 2 && sink.recs[0].tag == 1 && sink.recs[1].tag == 2,
	      "resumed: the 2 records arrive");
	PT_EQ(sink.lost[cpu0], 2, "resumed: no drop counted twice");
	pea_buffer__free(pb);
	close(map);
}

int main(void)
{
	ncpu = pt_setup(MAX_CPUS);
	test_refusals();
	test_window();
	test_sample_info();
	test_lost();
	test_pause();
	test_storm();
	return pt_done();
}
