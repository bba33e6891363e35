// SPDX-License-Identifier: GPL-2.0
/*
 * libpea against the real module: pea_buffer__new() arguments and what it
 * sets up (events, rings, map slots, epoll), delivery through __poll,
 * __consume and __consume_buffer, records that wrap the ring end, lost
 * accounting (PERF_RECORD_LOST in the ring and the lost hint when the
 * ring stays full), sample_type fields, wake-up options and __free.
 */
#include <pthread.h>
#include <time.h>
#include <sys/epoll.h>
#include "pea_test.h"
#include "libpea.h"

#define MAP "libpea"
#define MAX_CPUS 64

/* ---- collecting what the callbacks get ---- */

struct rec {
	int cpu;
	__u32 size;
	unsigned char *data;
	struct pea_sample_info info;
	int info_ret;
};

struct sink {
	struct rec *recs;
	size_t n, cap;
	__u64 sample_type;	/* for pea_sample_info() in the callback */
	__u64 lost[MAX_CPUS];	/* lost_cb totals per CPU */
	__u64 lost_calls;
	int bad_lost_cpu;
};

static struct sink sink;

static void sink_reset(void)
{
	size_t i;

	for (i = 0; i < sink.n; i++)
		free(sink.recs[i].data);
	sink.n = 0;
	memset(sink.lost, 0, sizeof(sink.lost));
	sink.lost_calls = 0;
	sink.bad_lost_cpu = 0;
}

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct sink *s = ctx;
	struct rec *r;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->recs = realloc(s->recs, s->cap * sizeof(*s->recs));
		if (!s->recs)
			pt_fatal("realloc");
	}
	r = &s->recs[s->n++];
	r->cpu = cpu;
	r->size = size;
	r->data = malloc(size ? size : 1);
	if (!r->data)
		pt_fatal("malloc");
	memcpy(r->data, data, size);
	r->info_ret = pea_sample_info(data, s->sample_type, &r->info);
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	struct sink *s = ctx;

	s->lost_calls++;
	if (cpu < 0 || cpu >= MAX_CPUS) {
		s->bad_lost_cpu++;
		return;
	}
	s->lost[cpu] += cnt;
}

/* ---- payloads ---- */

/* A payload: u32 cpu, u32 tag, then bytes derived from both. */
static unsigned char payload[65536];

static size_t make_payload(int cpu, __u32 tag, size_t len)
{
	__u32 hdr[2] = { cpu, tag };
	size_t i;

	memcpy(payload, hdr, sizeof(hdr));
	for (i = sizeof(hdr); i < len; i++)
		payload[i] = (unsigned char)((i * 13 + tag * 7 + cpu * 5) | 1);
	return len;
}

static __u32 raw_size(size_t len)
{
	return (__u32)(((4 + len + 7) & ~7UL) - 4);
}

/*
 * Whether @r is the record that make_payload(cpu, tag, len) described:
 * same CPU, raw size with padding, payload bytes and zero padding.
 */
static bool rec_matches(const struct rec *r, int cpu, __u32 tag, size_t len)
{
	size_t i;

	if (r->cpu != cpu || r->size != raw_size(len))
		return false;
	make_payload(cpu, tag, len);
	if (memcmp(r->data, payload, len))
		return false;
	for (i = len; i < r->size; i++)
		if (r->data[i])
			return false;
	return true;
}

static __u32 rec_tag(const struct rec *r)
{
	__u32 tag;

	memcpy(&tag, r->data + 4, sizeof(tag));
	return tag;
}

static int ncpu;

static int make_map(const char *name, __u32 entries, __u32 flags)
{
	int fd = pea_map_create(name, entries, flags);

	if (fd < 0)
		pt_fatal("pea_map_create");
	return fd;
}

static __u32 map_nr_used(int map)
{
	struct pea_map_info info;

	if (pea_map_get_info(map, &info))
		return ~0U;
	return info.nr_used;
}

/* The lowest free fd number, to see that nothing was left open. */
static int lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd;
}

/* ---- pea_buffer__new() and what it sets up ---- */

static void test_new_args(void)
{
	LIBPEA_OPTS(pea_buffer_opts, opts);
	int map = make_map(MAP, ncpu, 0), ev, low;
	struct pea_buffer *pb;

	low = lowest_free_fd();
	errno = 0;
	pb = pea_buffer__new(map, 3, on_sample, on_lost, &sink, NULL);
	PT_OK(!pb && errno == EINVAL, "new: page_cnt 3 gives NULL, EINVAL (errno %d)",
	      errno);
	errno = 0;
	pb = pea_buffer__new(map, 0, on_sample, on_lost, &sink, NULL);
	PT_OK(!pb && errno == EINVAL, "new: page_cnt 0 gives NULL, EINVAL");
	errno = 0;
	pb = pea_buffer__new(-1, 4, on_sample, on_lost, &sink, NULL);
	PT_OK(!pb && errno == EBADF, "new: map fd -1 gives NULL, EBADF (errno %d)",
	      errno);
	ev = pt_event_open(0, PERF_SAMPLE_RAW);
	errno = 0;
	pb = pea_buffer__new(ev, 4, on_sample, on_lost, &sink, NULL);
	PT_OK(!pb && errno == ENOTTY,
	      "new: an event fd as map fd gives NULL, ENOTTY (errno %d)", errno);
	close(ev);

	opts.flags = 1ULL << 63;
	errno = 0;
	pb = pea_buffer__new(map, 4, on_sample, on_lost, &sink, &opts);
	PT_OK(!pb && errno == EINVAL, "new: an unknown opts.flags bit gives EINVAL");
	opts.flags = 0;
	opts.wakeup_events = 2;
	opts.wakeup_watermark = 100;
	errno = 0;
	pb = pea_buffer__new(map, 4, on_sample, on_lost, &sink, &opts);
	PT_OK(!pb && errno == EINVAL,
	      "new: wakeup_events with wakeup_watermark gives EINVAL");
	opts.wakeup_events = 0;
	opts.wakeup_watermark = 0;
	opts.sample_type = PERF_SAMPLE_IP;
	errno = 0;
	pb = pea_buffer__new(map, 4, on_sample, on_lost, &sink, &opts);
	PT_OK(!pb && errno == EINVAL, "new: sample_type IP gives EINVAL");
	PT_EQ(map_nr_used(map), 0, "new: failed calls left no slot filled");
	PT_EQ(lowest_free_fd(), low, "new: failed calls left no fd open");
	close(map);

	/* A failure after some events were set up undoes them. */
	map = make_map(MAP, ncpu, PEA_F_RDONLY);
	low = lowest_free_fd();
	errno = 0;
	pb = pea_buffer__new(map, 4, on_sample, on_lost, &sink, NULL);
	PT_OK(!pb && errno == EPERM,
	      "new: a read-only map gives NULL, EPERM (errno %d)", errno);
	PT_EQ(lowest_free_fd(), low,
	      "new: the events opened before the failure were closed");
	close(map);

	/* Only CPUs below max_entries get a ring. */
	map = make_map(MAP, 1, 0);
	pb = pea_buffer__new(map, 4, on_sample, on_lost, &sink, NULL);
	PT_OK(pb, "new: a 1-slot map succeeds");
	PT_EQ(pea_buffer__buffer_cnt(pb), 1, "new: a 1-slot map gets 1 ring");
	PT_EQ(pea_buffer__buffer_cpu(pb, 0), 0, "new: ... for CPU 0");
	pea_buffer__free(pb);
	close(map);
}

static void test_new_setup(void)
{
	int map = make_map(MAP, ncpu, 0), i, good_fd = 0, good_lookup = 0;
	long psz = pt_page_size();
	struct pea_buffer *pb;
	void *base;
	size_t sz;

	pb = pea_buffer__new(map, 4, on_sample, on_lost, &sink, NULL);
	if (!pb)
		pt_fatal("pea_buffer__new(page_cnt 4)");
	PT_OK(pb, "new: page_cnt 4 on a map of %d slots succeeds", ncpu);
	PT_EQ(pea_buffer__buffer_cnt(pb), ncpu, "new: one ring per online CPU");
	PT_OK(pea_buffer__epoll_fd(pb) >= 0, "new: epoll fd is valid");
	PT_EQ(map_nr_used(map), ncpu, "new: every map slot is filled");

	for (i = 0; i < ncpu; i++) {
		struct pea_event_stats st;
		struct pea_map_elem e = { .key = i };
		int fd = pea_buffer__buffer_fd(pb, i);
		__u64 id = 0;

		memset(&st, 0xff, sizeof(st));
		if (fd >= 0 && !ioctl(fd, PEA_EVENT_IOC_STATS, &st) &&
		    st.cpu == (__u32)pea_buffer__buffer_cpu(pb, i) &&
		    st.cpu == (__u32)i && st.data_pages == 4 && st.records == 0 &&
		    st.lost == 0)
			good_fd++;
		else
			pt_diag("ring %d: fd %d cpu %u pages %u", i, fd, st.cpu,
				st.data_pages);
		if (!ioctl(fd, PERF_EVENT_IOC_ID, &id) &&
		    !ioctl(map, PEA_MAP_IOC_LOOKUP, &e) && e.id == id &&
		    e.cpu == i)
			good_lookup++;
		else
			pt_diag("slot %d: id %llu, lookup id %llu cpu %d", i,
				(unsigned long long)id,
				(unsigned long long)e.id, e.cpu);
	}
	PT_EQ(good_fd, ncpu,
	      "new: each buffer fd is an event of its CPU with 4 data pages");
	PT_EQ(good_lookup, ncpu,
	      "new: slot i holds the event of buffer i (LOOKUP id == IOC_ID)");
	PT_EQ(pea_buffer__buffer(pb, 0, &base, &sz), 0, "__buffer(0) succeeds");
	PT_OK(sz == (size_t)(4 * psz) && base &&
	      ((struct perf_event_mmap_page *)base)->data_size == sz,
	      "__buffer: data size 4 pages, control page first");
	PT_EQ(pea_buffer__buffer_fd(pb, ncpu), -EINVAL,
	      "__buffer_fd(cnt) gives -EINVAL");
	PT_EQ(pea_buffer__buffer_cpu(pb, ncpu), -EINVAL,
	      "__buffer_cpu(cnt) gives -EINVAL");
	PT_EQ(pea_buffer__buffer(pb, ncpu, &base, &sz), -EINVAL,
	      "__buffer(cnt) gives -EINVAL");
	PT_EQ(pea_buffer__lost(pb, ncpu, &(__u64){ 0 }), -EINVAL,
	      "__lost(cnt) gives -EINVAL");
	PT_EQ(pea_buffer__poll(pb, 0), 0, "poll(0) on fresh rings returns 0");
	pea_buffer__free(pb);
	close(map);
}

/* ---- delivery ---- */

#define PER_CPU 5

static size_t plen(int cpu, int k)
{
	return 8 + (cpu * 7 + k * 13) % 50;
}

/* Write PER_CPU records on @cpu, tags base + k. */
static int produce_on(const char *map, int cpu, __u32 base)
{
	int k, bad = 0;

	pt_pin(cpu);
	for (k = 0; k < PER_CPU; k++) {
		size_t len = make_payload(cpu, base + k, plen(cpu, k));

		if (pt_output(map, PEA_F_CURRENT_CPU, payload, len))
			bad++;
	}
	return bad;
}

/*
 * Check that sink holds exactly PER_CPU records of each CPU in @mask
 * (tags base + k, in order per CPU). Returns the number of problems.
 */
static int check_delivered(const bool *mask, __u32 base)
{
	int seen[MAX_CPUS] = { 0 }, bad = 0, cpu;
	size_t i;

	for (i = 0; i < sink.n; i++) {
		const struct rec *r = &sink.recs[i];
		int k;

		cpu = r->cpu;
		if (cpu < 0 || cpu >= ncpu || !mask[cpu] || r->size < 8) {
			bad++;
			continue;
		}
		k = seen[cpu]++;
		if (k >= PER_CPU || rec_tag(r) != base + k ||
		    !rec_matches(r, cpu, base + k, plen(cpu, k))) {
			pt_diag("record %zu (cpu %d, size %u) unexpected", i,
				cpu, r->size);
			bad++;
		}
	}
	for (cpu = 0; cpu < ncpu; cpu++)
		if (seen[cpu] != (mask[cpu] ? PER_CPU : 0)) {
			pt_diag("cpu %d: %d records", cpu, seen[cpu]);
			bad++;
		}
	return bad;
}

static void test_poll_consume(void)
{
	int map = make_map(MAP, ncpu, 0), cpu, bad = 0;
	bool all[MAX_CPUS], only[MAX_CPUS];
	struct pea_buffer *pb;

	for (cpu = 0; cpu < ncpu; cpu++)
		all[cpu] = true;
	pb = pea_buffer__new(map, 4, on_sample, on_lost, &sink, NULL);
	if (!pb)
		pt_fatal("pea_buffer__new");

	/* __poll */
	sink_reset();
	for (cpu = 0; cpu < ncpu; cpu++)
		bad += produce_on(MAP, cpu, 100);
	PT_EQ(bad, 0, "produced %d records on each of %d CPUs", PER_CPU, ncpu);
	PT_EQ(pea_buffer__poll(pb, 1000), ncpu,
	      "poll(1000) returns the number of rings with data");
	PT_EQ(check_delivered(all, 100), 0,
	      "poll: every record once, right cpu, raw size and bytes");
	PT_EQ(sink.n, ncpu * PER_CPU, "poll: %d samples", ncpu * PER_CPU);
	PT_EQ(sink.lost_calls, 0, "poll: no lost callback");
	PT_EQ(pea_buffer__poll(pb, 0), 0, "a second poll(0) returns 0");
	PT_EQ(sink.n, ncpu * PER_CPU, "... and delivers nothing more");

	/* __consume: no waiting, every ring */
	sink_reset();
	for (cpu = 0; cpu < ncpu; cpu++)
		produce_on(MAP, cpu, 200);
	PT_EQ(pea_buffer__consume(pb), 0, "consume returns 0");
	PT_EQ(check_delivered(all, 200), 0,
	      "consume: every record of every ring, once");
	PT_EQ(pea_buffer__consume(pb), 0, "consume again returns 0");
	PT_EQ(sink.n, ncpu * PER_CPU, "... and delivers nothing more");
	/* The wake-ups are still pending: poll consumes them, reads nothing. */
	PT_EQ(pea_buffer__poll(pb, 1000), ncpu,
	      "poll after consume reports the pending wake-ups");
	PT_EQ(sink.n, ncpu * PER_CPU, "... and delivers nothing more");

	/* __consume_buffer: one ring only */
	for (cpu = 0; cpu < ncpu; cpu++) {
		int other = (cpu + 1) % ncpu;

		sink_reset();
		produce_on(MAP, cpu, 300);
		if (other != cpu)
			produce_on(MAP, other, 400);
		memset(only, 0, sizeof(only));
		only[cpu] = true;
		if (pea_buffer__consume_buffer(pb, cpu) ||
		    check_delivered(only, 300)) {
			pt_diag("consume_buffer(%d) delivered wrongly", cpu);
			bad++;
		}
		sink_reset();
		memset(only, 0, sizeof(only));
		only[other] = true;
		if (other != cpu && (pea_buffer__consume_buffer(pb, other) ||
				     check_delivered(only, 400))) {
			pt_diag("consume_buffer(%d) after %d", other, cpu);
			bad++;
		}
	}
	PT_EQ(bad, 0, "consume_buffer(i) drains ring i and no other");
	errno = 0;
	PT_EQ(pea_buffer__consume_buffer(pb, ncpu), -EINVAL,
	      "consume_buffer(cnt) gives -EINVAL");
	PT_EQ(errno, EINVAL, "... and errno EINVAL");
	PT_EQ(pea_buffer__consume_buffer(pb, (size_t)-1), -EINVAL,
	      "consume_buffer(SIZE_MAX) gives -EINVAL");
	pea_buffer__poll(pb, 0);	/* take the pending wake-ups */
	pea_buffer__free(pb);
	close(map);
}

/* ---- records wrapping the ring end ---- */

static void test_wrap(__u64 sample_type, const char *what)
{
	LIBPEA_OPTS(pea_buffer_opts, opts, .sample_type = sample_type);
	int map = make_map(MAP, 1, 0), i, bad = 0, bad_info = 0, n = 300;
	size_t size = 2 * pt_page_size(), len;
	size_t fixed = 8 + 8 * __builtin_popcountll(sample_type);
	struct perf_event_mmap_page *pg;
	int wrapped = 0, wrapped_fields = 0;
	struct pea_buffer *pb;
	__u64 pos = 0;
	void *base;

	pb = pea_buffer__new(map, 2, on_sample, on_lost, &sink, &opts);
	if (!pb)
		pt_fatal("pea_buffer__new(2 pages)");
	pea_buffer__buffer(pb, 0, &base, NULL);
	pg = base;
	pt_pin(0);
	sink_reset();
	sink.sample_type = sample_type;
	for (i = 0; i < n; i++) {
		__u64 rec, off;

		len = 8 + (i * 389) % 1500;
		make_payload(0, i, len);
		if (pt_output(MAP, PEA_F_CURRENT_CPU, payload, len)) {
			bad++;
			break;
		}
		rec = fixed + 4 + raw_size(len);
		off = pos & (size - 1);
		if (off + rec > size)
			wrapped++;
		/* The ring end falls inside the header or the fields. */
		if (off + fixed + 4 > size)
			wrapped_fields++;
		pos += rec;
		/* Read every third record, so several wait in the ring. */
		if (i % 3 == 2 && pea_buffer__consume_buffer(pb, 0))
			bad++;
	}
	if (pea_buffer__consume(pb))
		bad++;
	PT_EQ(bad, 0, "wrap %s: %d records written and consumed", what, n);
	PT_EQ(sink.n, n, "wrap %s: %d samples delivered", what, n);
	for (i = 0; i < (int)sink.n && i < n; i++) {
		const struct rec *r = &sink.recs[i];

		if (!rec_matches(r, 0, i, 8 + (i * 389) % 1500)) {
			pt_diag("wrap %s: record %d differs", what, i);
			bad++;
		}
		if (r->info_ret ||
		    ((sample_type & PERF_SAMPLE_TID) &&
		     (r->info.pid != (__u32)getpid() ||
		      r->info.tid != (__u32)gettid())) ||
		    ((sample_type & PERF_SAMPLE_TIME) && !r->info.time) ||
		    r->info.cpu || r->info.reserved)
			bad_info++;
	}
	PT_EQ(bad, 0, "wrap %s: every record intact and in order", what);
	PT_EQ(bad_info, 0, "wrap %s: pea_sample_info right for every record",
	      what);
	PT_OK(wrapped >= 10, "wrap %s: %d records straddled the ring end (%d in "
	      "the header or fields)", what, wrapped, wrapped_fields);
	PT_EQ(pg->data_head, pos,
	      "wrap %s: data_head is the sum of record sizes", what);
	PT_EQ(pg->data_tail, pg->data_head, "wrap %s: data_tail caught up", what);
	sink.sample_type = 0;
	pea_buffer__free(pb);
	close(map);
}

/* ---- lost accounting ---- */

static __u32 payload_ok[60];	/* records written per mixed batch */

static __u64 lost_of(struct pea_buffer *pb, int i)
{
	__u64 lost = ~0ULL;

	pea_buffer__lost(pb, i, &lost);
	return lost;
}

static struct pea_event_stats stats_of(struct pea_buffer *pb, int i)
{
	struct pea_event_stats st;

	memset(&st, 0xff, sizeof(st));
	ioctl(pea_buffer__buffer_fd(pb, i), PEA_EVENT_IOC_STATS, &st);
	return st;
}

/* Count sink records of @cpu with tag @tag. */
static size_t count_tag(int cpu, __u32 tag)
{
	size_t i, n = 0;

	for (i = 0; i < sink.n; i++)
		if (sink.recs[i].cpu == cpu && sink.recs[i].size >= 8 &&
		    rec_tag(&sink.recs[i]) == tag)
			n++;
	return n;
}

static void test_lost(void)
{
	int map = make_map(MAP, ncpu, 0), cpu = ncpu - 1, i, bad = 0;
	__u64 attempts = 0, drops = 0, total_lost = 0;
	struct perf_event_mmap_page *pg;
	struct pea_event_stats st;
	struct pea_buffer *pb;
	__u32 ok = 0;
	void *base;
	long ret;

	pb = pea_buffer__new(map, 2, on_sample, on_lost, &sink, NULL);
	if (!pb)
		pt_fatal("pea_buffer__new(2 pages)");
	pea_buffer__buffer(pb, cpu, &base, NULL);
	pg = base;
	pt_pin(cpu);
	sink_reset();

	/*
	 * Drops followed by a record that fits: 72 records of 112 bytes
	 * leave 128 of 8192 free; 216-byte records do not fit, a 24-byte
	 * one does, with the 24-byte PERF_RECORD_LOST before it.
	 */
	make_payload(cpu, 1, 100);
	ret = pt_output_n(MAP, PEA_F_CURRENT_CPU, payload, 100, 72, &ok);
	PT_OK(ret == 0 && ok == 72, "lost: 72 records of 112 bytes fit");
	make_payload(cpu, 2, 200);
	ret = pt_output_n(MAP, PEA_F_CURRENT_CPU, payload, 200, 10, &ok);
	PT_OK(ret == -ENOSPC && ok == 0, "lost: 10 records of 216 bytes dropped");
	PT_EQ(PEA_PAGE_LOST_HINT(pg), 1, "lost: the hint is set");
	make_payload(cpu, 3, 8);
	PT_EQ(pt_output(MAP, PEA_F_CURRENT_CPU, payload, 8), 0,
	      "lost: a 24-byte record still fits");
	st = stats_of(pb, cpu);
	PT_OK(st.lost == 10 && st.lost_pending == 0 && PEA_PAGE_LOST_HINT(pg) == 0,
	      "lost: the drops went into the ring as PERF_RECORD_LOST");
	PT_EQ(pea_buffer__consume_buffer(pb, cpu), 0, "lost: consume_buffer");
	PT_EQ(sink.n, 73, "lost: 73 samples delivered");
	PT_OK(count_tag(cpu, 1) == 72 && count_tag(cpu, 3) == 1 &&
	      count_tag(cpu, 2) == 0, "lost: ... the ones that fit");
	PT_EQ(sink.lost[cpu], 10, "lost: lost_cb reports the 10 drops");
	PT_EQ(sink.lost_calls, 1, "lost: in one call (one PERF_RECORD_LOST)");
	PT_EQ(lost_of(pb, cpu), 10, "lost: pea_buffer__lost agrees");
	attempts = 83;
	drops = 10;

	/* Drops with no later record that fits: the ring stays full. */
	make_payload(cpu, 4, 100);
	ret = pt_output_n(MAP, PEA_F_CURRENT_CPU, payload, 100, 200, &ok);
	PT_OK(ret == -ENOSPC && ok == 73,
	      "full: 73 of 200 records fit, 127 dropped (ok %u)", ok);
	attempts += 200;
	drops += 200 - ok;
	st = stats_of(pb, cpu);
	PT_EQ(st.lost_pending, 200 - ok, "full: the drops are pending");
	PT_EQ(PEA_PAGE_LOST_HINT(pg), 1, "full: the hint is set");
	PT_EQ(pea_buffer__consume(pb), 0, "full: consume");
	PT_EQ(count_tag(cpu, 4), ok, "full: the %u that fit are delivered", ok);
	PT_EQ(sink.lost[cpu], drops,
	      "full: lost_cb reports the drops without a PERF_RECORD_LOST");
	PT_EQ(lost_of(pb, cpu), drops, "full: pea_buffer__lost agrees");
	st = stats_of(pb, cpu);
	PT_OK(st.lost_pending == 0 && PEA_PAGE_LOST_HINT(pg) == 0,
	      "full: nothing pending, hint clear after consume");
	PT_EQ(pea_buffer__consume(pb), 0, "full: consume again");
	PT_EQ(sink.lost[cpu], drops, "full: no drop reported twice");

	/* Mixed sizes and batches, consuming now and then. */
	for (i = 0; i < 60; i++) {
		size_t len = (i * 211) % 1200;
		__u32 count = 1 + (i * 17) % 40;

		make_payload(cpu, 1000 + i, len < 8 ? 8 : len);
		ret = pt_output_n(MAP, PEA_F_CURRENT_CPU, payload,
				  len < 8 ? 8 : len, count, &ok);
		if (ret && ret != -ENOSPC)
			bad++;
		attempts += count;
		drops += count - ok;
		if (i % 4 == 3 && pea_buffer__consume_buffer(pb, cpu))
			bad++;
		payload_ok[i] = ok;
	}
	if (pea_buffer__consume(pb))
		bad++;
	for (i = 0; i < 60; i++)
		if (count_tag(cpu, 1000 + i) != payload_ok[i]) {
			pt_diag("batch %d: %zu received, %u written", i,
				count_tag(cpu, 1000 + i), payload_ok[i]);
			bad++;
		}
	PT_EQ(bad, 0, "mixed: every batch delivered exactly as written");
	PT_OK(drops > 127 + 10, "mixed: some batches were dropped (%llu drops)",
	      (unsigned long long)drops);
	PT_EQ(sink.lost[cpu], drops, "mixed: lost_cb totals the drops");
	PT_EQ(lost_of(pb, cpu), drops, "mixed: pea_buffer__lost agrees");
	for (i = 0; i < ncpu; i++)
		total_lost += sink.lost[i];
	PT_EQ(total_lost, drops, "mixed: no drop reported on another CPU");
	PT_EQ(sink.n + sink.lost[cpu], attempts,
	      "samples + lost == attempted (%llu)", (unsigned long long)attempts);
	st = stats_of(pb, cpu);
	PT_OK(st.lost == drops && st.records == sink.n,
	      "stats: lost %llu, records %llu", (unsigned long long)st.lost,
	      (unsigned long long)st.records);
	pea_buffer__free(pb);
	close(map);
}

/* Without callbacks pea_buffer__lost still counts. */
static void test_lost_no_cb(void)
{
	int map = make_map(MAP, 1, 0);
	struct pea_buffer *pb;
	__u32 ok = 0;
	long ret;

	pb = pea_buffer__new(map, 2, NULL, NULL, NULL, NULL);
	if (!pb)
		pt_fatal("pea_buffer__new(no callbacks)");
	pt_pin(0);
	ret = pt_output_n(MAP, PEA_F_CURRENT_CPU, payload, 100, 100, &ok);
	PT_OK(ret == -ENOSPC && ok == 73, "no callbacks: 73 of 100 fit");
	PT_EQ(pea_buffer__consume(pb), 0, "no callbacks: consume");
	PT_EQ(lost_of(pb, 0), 27, "no callbacks: pea_buffer__lost counts 27");
	make_payload(0, 1, 100);
	ret = pt_output_n(MAP, PEA_F_CURRENT_CPU, payload, 100, 80, &ok);
	PT_EQ(pea_buffer__consume(pb), 0, "no callbacks: consume again");
	PT_EQ(lost_of(pb, 0), 27 + 80 - ok, "no callbacks: %u more counted",
	      80 - ok);
	pea_buffer__free(pb);
	close(map);
}

/* opts from a newer caller (bigger sz) and an older one (smaller sz). */
static void test_opts_sz(void)
{
	struct {
		struct pea_buffer_opts o;
		__u64 extra;
	} big;
	struct pea_buffer_opts small;
	int map = make_map(MAP, 1, 0);
	struct pea_buffer *pb;

	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.extra = 1;
	errno = 0;
	pb = pea_buffer__new(map, 2, on_sample, on_lost, &sink, &big.o);
	PT_OK(!pb && errno == EINVAL,
	      "opts: a non-zero field past the known ones gives EINVAL");
	big.extra = 0;
	pb = pea_buffer__new(map, 2, on_sample, on_lost, &sink, &big.o);
	PT_OK(pb, "opts: zero fields past the known ones are accepted");
	pea_buffer__free(pb);

	/* An older caller's opts end before sample_type: it is not read. */
	memset(&small, 0, sizeof(small));
	small.sz = offsetof(struct pea_buffer_opts, sample_type);
	small.sample_type = PERF_SAMPLE_IP;
	pb = pea_buffer__new(map, 2, on_sample, on_lost, &sink, &small);
	PT_OK(pb, "opts: fields past a smaller sz are ignored");
	pea_buffer__free(pb);
	small.sz = 4;
	errno = 0;
	pb = pea_buffer__new(map, 2, on_sample, on_lost, &sink, &small);
	PT_OK(!pb && errno == EINVAL, "opts: sz smaller than sz gives EINVAL");
	close(map);
}

/* ---- sample_type fields ---- */

static void test_sample_type(void)
{
	__u64 st = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	LIBPEA_OPTS(pea_buffer_opts, opts, .sample_type = st);
	int map = make_map(MAP, ncpu, 0), cpu, bad = 0, bad_info = 0;
	bool all[MAX_CPUS];
	__u64 last_time[MAX_CPUS] = { 0 };
	struct pea_buffer *pb;
	size_t i;

	pb = pea_buffer__new(map, 4, on_sample, on_lost, &sink, &opts);
	if (!pb)
		pt_fatal("pea_buffer__new(TID|TIME|CPU)");
	sink_reset();
	sink.sample_type = st;
	for (cpu = 0; cpu < ncpu; cpu++) {
		all[cpu] = true;
		bad += produce_on(MAP, cpu, 500);
	}
	PT_EQ(pea_buffer__poll(pb, 1000), ncpu, "TID|TIME|CPU: poll");
	PT_EQ(bad + check_delivered(all, 500), 0,
	      "TID|TIME|CPU: sample_cb gets the raw payload");
	for (i = 0; i < sink.n; i++) {
		const struct rec *r = &sink.recs[i];

		if (r->info_ret || r->info.pid != (__u32)getpid() ||
		    r->info.tid != (__u32)gettid() ||
		    r->info.cpu != (__u32)r->cpu || r->info.reserved ||
		    !r->info.time || r->info.time < last_time[r->cpu]) {
			pt_diag("record %zu: pid %u tid %u cpu %u time %llu", i,
				r->info.pid, r->info.tid, r->info.cpu,
				(unsigned long long)r->info.time);
			bad_info++;
		}
		last_time[r->cpu] = r->info.time;
	}
	PT_EQ(bad_info, 0,
	      "pea_sample_info: pid, tid, cpu right, time non-zero and rising");
	sink.sample_type = 0;
	PT_EQ(pea_sample_info(NULL, st, &(struct pea_sample_info){ 0 }), -EINVAL,
	      "pea_sample_info(NULL) gives -EINVAL");
	PT_EQ(pea_sample_info(payload, PERF_SAMPLE_IP,
			      &(struct pea_sample_info){ 0 }), -EINVAL,
	      "pea_sample_info: PERF_SAMPLE_IP gives -EINVAL");
	pea_buffer__free(pb);
	close(map);
}

/* ---- wake-up options ---- */

static void test_watermark(void)
{
	LIBPEA_OPTS(pea_buffer_opts, opts, .wakeup_watermark = 1024);
	int map = make_map(MAP, 1, 0), epfd;
	struct epoll_event ev;
	struct pea_buffer *pb;
	__u32 ok = 0;

	pb = pea_buffer__new(map, 4, on_sample, on_lost, &sink, &opts);
	if (!pb)
		pt_fatal("pea_buffer__new(wakeup_watermark)");
	epfd = pea_buffer__epoll_fd(pb);
	pt_pin(0);
	sink_reset();
	/* 9 records of 112 bytes: 1008 <= 1024, no wake-up yet. */
	make_payload(0, 7, 100);
	pt_output_n(MAP, PEA_F_CURRENT_CPU, payload, 100, 9, &ok);
	PT_EQ(ok, 9, "watermark 1024: 9 records of 112 bytes written");
	PT_EQ(epoll_wait(epfd, &ev, 1, 0), 0,
	      "watermark: the epoll fd stays quiet below the watermark");
	PT_EQ(pea_buffer__poll(pb, 0), 0, "watermark: poll(0) returns 0");
	PT_EQ(sink.n, 0, "watermark: nothing delivered");
	PT_EQ(stats_of(pb, 0).wakeups, 0, "watermark: no wake-up raised");
	PT_EQ(pt_output(MAP, PEA_F_CURRENT_CPU, payload, 100), 0,
	      "watermark: the 10th record passes 1024 bytes");
	PT_EQ(pea_buffer__poll(pb, 1000), 1, "watermark: poll returns 1 ring");
	PT_EQ(sink.n, 10, "watermark: all 10 records delivered");
	PT_EQ(stats_of(pb, 0).wakeups, 1, "watermark: one wake-up raised");
	PT_EQ(pea_buffer__poll(pb, 0), 0, "watermark: then poll(0) returns 0");
	pea_buffer__free(pb);
	close(map);

	/* wakeup_events = 4: every 4th record wakes. */
	{
		LIBPEA_OPTS(pea_buffer_opts, o4, .wakeup_events = 4);

		map = make_map(MAP, 1, 0);
		pb = pea_buffer__new(map, 4, on_sample, on_lost, &sink, &o4);
		if (!pb)
			pt_fatal("pea_buffer__new(wakeup_events)");
		sink_reset();
		pt_output_n(MAP, PEA_F_CURRENT_CPU, payload, 16, 3, &ok);
		PT_EQ(pea_buffer__poll(pb, 0), 0,
		      "wakeup_events 4: no wake-up after 3 records");
		PT_EQ(sink.n, 0, "wakeup_events 4: nothing delivered");
		pt_output(MAP, PEA_F_CURRENT_CPU, payload, 16);
		PT_EQ(pea_buffer__poll(pb, 1000), 1,
		      "wakeup_events 4: the 4th record wakes");
		PT_EQ(sink.n, 4, "wakeup_events 4: 4 records delivered");
		pea_buffer__free(pb);
		close(map);
	}
}

/* ---- busy polling ---- */

static __u64 mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

static void *late_writer(void *arg)
{
	(void)arg;
	pt_pin(0);
	usleep(100000);
	if (pt_output(MAP, PEA_F_CURRENT_CPU, payload, 40))
		pt_fatal("late_writer: pt_output");
	return NULL;
}

/*
 * busy_poll_us: pea_buffer__poll(pb, 0) spins and finds a record that
 * raised no wake-up (watermark = the whole ring); with nothing coming it
 * spins the whole time, then returns 0; bad settings give EINVAL.
 */
static void test_busy_poll(void)
{
	LIBPEA_OPTS(pea_buffer_opts, opts, .wakeup_watermark = 4 * 4096,
		    .busy_poll_us = 1000000);
	int map = make_map(MAP, 1, 0);
	struct pea_buffer *pb;
	pthread_t thr;
	__u64 t0, ms;
	int n;

	pt_pin(1);
	sink_reset();
	pb = pea_buffer__new(map, 4, on_sample, on_lost, &sink, &opts);
	PT_OK(pb != NULL, "busy poll: pea_buffer__new with busy_poll_us 1 s");
	if (!pb)
		pt_fatal("pea_buffer__new(busy_poll_us)");
	make_payload(0, 9, 40);
	if (pthread_create(&thr, NULL, late_writer, NULL))
		pt_fatal("pthread_create");
	t0 = mono_ms();
	n = pea_buffer__poll(pb, 0);
	ms = mono_ms() - t0;
	pthread_join(thr, NULL);
	PT_EQ(n, 1, "busy poll: poll(pb, 0) returns the ring written 100 ms later");
	PT_OK(ms >= 90 && ms < 1000, "busy poll: after %llu ms",
	      (unsigned long long)ms);
	PT_EQ(sink.n, 1, "busy poll: the record was delivered");
	PT_EQ(sink.n ? sink.recs[0].size : 0, 44,
	      "busy poll: raw size 44 (40 bytes, padded as Linux does)");
	PT_EQ(sink.n ? memcmp(sink.recs[0].data, payload, 40) : 1, 0,
	      "busy poll: the 40 payload bytes");
	PT_EQ(stats_of(pb, 0).wakeups, 0,
	      "busy poll: found without a wake-up (below the watermark)");
	pea_buffer__free(pb);

	opts.busy_poll_us = 50000;
	pb = pea_buffer__new(map, 4, on_sample, on_lost, &sink, &opts);
	if (!pb)
		pt_fatal("pea_buffer__new(busy_poll_us 50 ms)");
	t0 = mono_ms();
	n = pea_buffer__poll(pb, 0);
	ms = mono_ms() - t0;
	PT_EQ(n, 0, "busy poll: nothing written: poll(pb, 0) returns 0");
	PT_OK(ms >= 50, "busy poll: after spinning %llu ms (50 asked)",
	      (unsigned long long)ms);
	pea_buffer__free(pb);

	opts.busy_poll_us = PEA_BUSY_POLL_US_MAX + 1;
	PT_OK(!pea_buffer__new(map, 4, on_sample, on_lost, &sink, &opts) &&
	      errno == EINVAL, "busy poll: above PEA_BUSY_POLL_US_MAX: EINVAL");
	opts.busy_poll_us = 10;
	opts.flags = PEA_BUFFER_FLAG_AUTO_CALLBACK;
	PT_OK(!pea_buffer__new(map, 4, on_sample, on_lost, &sink, &opts) &&
	      errno == EINVAL, "busy poll: with AUTO_CALLBACK: EINVAL");
	close(map);
	pt_pin(0);
}

/* ---- __free ---- */

static void test_free(void)
{
	int map = make_map(MAP, ncpu, 0), fds[MAX_CPUS], i, closed = 0, epfd;
	struct pea_buffer *pb;

	pb = pea_buffer__new(map, 4, on_sample, on_lost, &sink, NULL);
	if (!pb)
		pt_fatal("pea_buffer__new");
	for (i = 0; i < ncpu; i++)
		fds[i] = pea_buffer__buffer_fd(pb, i);
	epfd = pea_buffer__epoll_fd(pb);
	/* Unread records are discarded without a callback. */
	sink_reset();
	produce_on(MAP, 0, 600);
	pea_buffer__free(pb);
	PT_EQ(sink.n, 0, "free: unread records are not delivered");
	PT_EQ(map_nr_used(map), 0, "free: every map slot is cleared");
	for (i = 0; i < ncpu; i++)
		if (fcntl(fds[i], F_GETFD) < 0 && errno == EBADF)
			closed++;
	PT_EQ(closed, ncpu, "free: every event fd is closed");
	PT_OK(fcntl(epfd, F_GETFD) < 0 && errno == EBADF,
	      "free: the epoll fd is closed");
	PT_EQ(pt_output(MAP, PEA_F_CURRENT_CPU, payload, 8), -ENOENT,
	      "free: output now finds an empty slot");
	pea_buffer__free(NULL);
	PT_OK(1, "free(NULL) is a no-op");
	close(map);
}

int main(void)
{
	ncpu = pt_setup(MAX_CPUS);
	test_new_args();
	test_new_setup();
	test_poll_consume();
	test_wrap(0, "RAW");
	test_wrap(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
		  "TID|TIME|CPU");
	test_lost();
	test_lost_no_cb();
	test_opts_sz();
	test_sample_type();
	test_watermark();
	test_busy_poll();
	test_free();
	sink_reset();
	return pt_done();
}
