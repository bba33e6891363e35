// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): libpea's ordered merge (lib/pea_ordered.c) on
 * rings laid out in memory as the kernel writes them, no writer in
 * flight. Records of random payload sizes (some wrapping at the ring's
 * end), TIME with and without TID, PERF_RECORD_LOST with its sample_id,
 * ties across rings, 1 to 16 rings (the merge's heap), and headers that
 * cannot be valid. Every delivery is
 * compared, in order and byte for byte, with a reference: all records
 * sorted by (time, ring, position in its ring). TAP on stdout.
 *
 * With PEA_MERGE_PROFILE=MODE:RINGS:TURN it only drains records, for
 * scripts/reader-profile.sh to count the readers' instructions under
 * valgrind --tool=callgrind (profile() below).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pea.h>
#include "libpea_internal.h"

#define HOST_TAP_NAME "ordered_merge"
#include "host_tap.h"

#define RINGS_MAX	16
#define DATA_SIZE	4096
#define RECS_MAX	4096
#define PAYLOAD_MAX	60

/* One record as written, and as the callbacks saw it. */
struct rec {
	int ring;
	__u64 time;
	__u64 seq;		/* order of writing within its ring */
	bool lost;
	__u32 len;		/* payload bytes (lost: the count) */
	unsigned char payload[PAYLOAD_MAX];
};

struct world {
	struct pea_buffer pb;
	struct pea_cpu_buf bufs[RINGS_MAX];
	struct pea_heap_ent heap[RINGS_MAX];
	void *pages[RINGS_MAX];
	__u64 head[RINGS_MAX];
	struct rec written[RECS_MAX];
	size_t nwritten;
	struct rec got[RECS_MAX];
	size_t ngot;
	__u64 seq[RINGS_MAX];
};

static unsigned int rnd_state = 12345;

static unsigned int rnd(unsigned int n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 8) % n;
}

static void sample_cb(void *ctx, int cpu, void *data, __u32 size)
{
	struct world *w = ctx;
	struct rec *r = &w->got[w->ngot++];

	memset(r, 0, sizeof(*r));
	r->ring = cpu;
	r->len = size;
	if (size <= PAYLOAD_MAX)
		memcpy(r->payload, data, size);
}

static void lost_cb(void *ctx, int cpu, __u64 cnt)
{
	struct world *w = ctx;
	struct rec *r = &w->got[w->ngot++];

	memset(r, 0, sizeof(*r));
	r->ring = cpu;
	r->lost = true;
	r->len = (__u32)cnt;
}

static void world_init(struct world *w, int nrings, __u64 sample_type)
{
	int i;

	memset(w, 0, sizeof(*w));
	for (i = 0; i < nrings; i++) {
		struct pea_cpu_buf *b = &w->bufs[i];

		w->pages[i] = aligned_alloc(4096, 4096 + DATA_SIZE);
		memset(w->pages[i], 0, 4096 + DATA_SIZE);
		b->ring.page = w->pages[i];
		b->ring.data = (char *)w->pages[i] + 4096;
		b->ring.data_size = DATA_SIZE;
		b->ring.cpu = i;
		b->ring.sample_type = sample_type | PERF_SAMPLE_RAW;
		b->cpu = i;
	}
	w->pb.sample_cb = sample_cb;
	w->pb.lost_cb = lost_cb;
	w->pb.ctx = w;
	w->pb.flags = PEA_BUFFER_FLAG_ORDERED;
	w->pb.bufs = w->bufs;
	w->pb.cnt = nrings;
	w->pb.o_heap = w->heap;
}

static void world_free(struct world *w)
{
	size_t i;

	for (i = 0; i < w->pb.cnt; i++) {
		pea_ring_release(&w->bufs[i].ring);
		free(w->pages[i]);
	}
}

/* Copy @len bytes into ring @i at its head, wrapping at the end. */
static void put(struct world *w, int i, const void *src, size_t len)
{
	char *data = w->bufs[i].ring.data;
	size_t k;

	for (k = 0; k < len; k++)
		data[(w->head[i] + k) % DATA_SIZE] = ((const char *)src)[k];
	w->head[i] += len;
}

static void publish(struct world *w, int i)
{
	struct perf_event_mmap_page *pg = w->bufs[i].ring.page;

	__atomic_store_n(&pg->data_head, w->head[i], __ATOMIC_RELEASE);
}

/* The fields before TIME, as the kernel writes them. */
static void put_fields(struct world *w, int i, __u64 time)
{
	__u64 tid = 0x0000002a0000002aull;

	if (w->bufs[i].ring.sample_type & PERF_SAMPLE_TID)
		put(w, i, &tid, 8);
	put(w, i, &time, 8);
}

static size_t fields_size(const struct world *w, int i)
{
	return w->bufs[i].ring.sample_type & PERF_SAMPLE_TID ? 16 : 8;
}

/* Write a sample of @len payload bytes (or a LOST of @len) to ring @i. */
static void write_rec(struct world *w, int i, __u64 time, bool lost,
		      __u32 len)
{
	struct rec *r = &w->written[w->nwritten++];
	struct perf_event_header hdr;
	__u64 zero = 0, body[2];
	__u32 k, rawlen;

	memset(r, 0, sizeof(*r));
	r->ring = i;
	r->time = time;
	r->seq = w->seq[i]++;
	r->lost = lost;
	r->len = len;
	if (lost) {
		hdr.type = PERF_RECORD_LOST;
		hdr.misc = 0;
		hdr.size = sizeof(hdr) + 16 + fields_size(w, i);
		body[0] = 7;
		body[1] = len;
		put(w, i, &hdr, sizeof(hdr));
		put(w, i, body, sizeof(body));
		put_fields(w, i, time);
		return;
	}
	for (k = 0; k < len; k++)
		r->payload[k] = (unsigned char)rnd(256);
	rawlen = (len + 4 + 7) / 8 * 8 - 4;
	hdr.type = PERF_RECORD_SAMPLE;
	hdr.misc = PERF_RECORD_MISC_KERNEL;
	hdr.size = sizeof(hdr) + fields_size(w, i) + 4 + rawlen;
	put(w, i, &hdr, sizeof(hdr));
	put_fields(w, i, time);
	put(w, i, &rawlen, 4);
	put(w, i, r->payload, len);
	while (len++ < rawlen)
		put(w, i, &zero, 1);
}

/* The reference order: time, then ring, then position in the ring. */
static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->ring != y->ring)
		return x->ring - y->ring;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Whether got[@from..] is written[@from..] in reference order. */
static bool same(struct world *w, size_t from, size_t to, const char *what)
{
	size_t k;

	qsort(w->written + from, to - from, sizeof(w->written[0]), rec_cmp);
	if (w->ngot != to) {
		printf("# %s: %zu delivered, %zu written\n", what, w->ngot, to);
		return false;
	}
	for (k = from; k < to; k++) {
		const struct rec *x = &w->written[k], *y = &w->got[k];

		if (x->ring != y->ring || x->lost != y->lost ||
		    (x->lost ? x->len != y->len :
		     (y->len < x->len || y->len > x->len + 7 ||
		      memcmp(x->payload, y->payload, x->len)))) {
			printf("# %s: record %zu: want ring %d %s len %u (t %llu), got ring %d %s len %u\n",
			       what, k, x->ring, x->lost ? "lost" : "sample",
			       x->len, (unsigned long long)x->time, y->ring,
			       y->lost ? "lost" : "sample", y->len);
			return false;
		}
	}
	return true;
}

/*
 * Rounds of: random records on random rings (times increasing across
 * rounds, ties inside a round), published, then one ordered consume.
 * Every consume delivers all published records: no writer is in flight.
 */
static void test_random(int nrings, __u64 sample_type, bool with_lost,
			const char *name)
{
	static struct world w;
	__u64 t = 1000;
	size_t from, room[RINGS_MAX];
	int round, i, k, n, err = 0;
	bool good = true;

	world_init(&w, nrings, sample_type);
	for (round = 0; round < 200 && good; round++) {
		from = w.nwritten;
		for (i = 0; i < nrings; i++)
			room[i] = DATA_SIZE;
		n = 1 + rnd(12);
		for (k = 0; k < n; k++) {
			int r = rnd(nrings);
			bool lost = with_lost && !rnd(8);
			__u32 len = rnd(PAYLOAD_MAX + 1);

			if (room[r] < 200)
				continue;
			room[r] -= 100;
			t += rnd(3);	/* ties across rings */
			write_rec(&w, r, t, lost, lost ? 1 + rnd(9) : len);
		}
		for (i = 0; i < nrings; i++)
			publish(&w, i);
		t++;
		err = pea_ordered_consume(&w.pb);
		if (err < 0)
			break;
		good = same(&w, from, w.nwritten, name);
	}
	ok(err >= 0 && good && round == 200,
	   "%s: 200 rounds, %zu records in (time, ring) order, bytes identical (err %d)",
	   name, w.nwritten, err);
	world_free(&w);
}

/* A header that cannot be valid: the records before it, -EINVAL, resync. */
static void test_bad(void)
{
	static struct world w;
	struct perf_event_header bad = { .type = 99, .size = 16 };
	__u64 pad = 0;
	int err1, err2;
	bool good;

	world_init(&w, 2, PERF_SAMPLE_TIME);
	write_rec(&w, 0, 10, false, 8);
	write_rec(&w, 1, 11, false, 8);
	put(&w, 0, &bad, sizeof(bad));
	put(&w, 0, &pad, sizeof(pad));
	write_rec(&w, 0, 20, false, 8);	/* lost with the resync */
	w.nwritten--;
	publish(&w, 0);
	publish(&w, 1);
	err1 = pea_ordered_consume(&w.pb);
	good = same(&w, 0, 1, "bad header");
	/* After the resync both rings deliver again. */
	write_rec(&w, 0, 30, false, 8);
	write_rec(&w, 1, 31, false, 8);
	publish(&w, 0);
	publish(&w, 1);
	err2 = pea_ordered_consume(&w.pb);
	good = good && same(&w, 1, w.nwritten, "after resync");
	ok(err1 == -EINVAL && err2 >= 0 && good,
	   "bad header: the older record delivered, -EINVAL (%d), the ring resynced, then 3 more in order (%d)",
	   err1, err2);
	world_free(&w);
}

/* A sample whose raw size overruns the record: delivered up to it. */
static void test_bad_raw(void)
{
	static struct world w;
	struct perf_event_header hdr = { .type = PERF_RECORD_SAMPLE,
					 .size = 24 };
	__u64 time = 15;
	__u32 raw = 100, zero = 0;
	int err;

	world_init(&w, 1, PERF_SAMPLE_TIME);
	write_rec(&w, 0, 10, false, 8);
	put(&w, 0, &hdr, sizeof(hdr));
	put(&w, 0, &time, 8);
	put(&w, 0, &raw, 4);
	put(&w, 0, &zero, 4);
	write_rec(&w, 0, 20, false, 8);
	publish(&w, 0);
	err = pea_ordered_consume(&w.pb);
	ok(err == -EINVAL && w.ngot == 1 && w.bufs[0].o_pos == 32 + 24,
	   "raw size past the record: 1 delivered, -EINVAL (%d), the reader past it (%llu)",
	   err, (unsigned long long)w.bufs[0].o_pos);
	err = pea_ordered_consume(&w.pb);
	ok(err >= 0 && w.ngot == 2 && w.got[1].len == 12,
	   "and the next consume delivers the record after it (%d, %zu)",
	   err, w.ngot);
	world_free(&w);
}

/* The profile's callback: reads the first word, as pea-bench's does. */
static __u64 prof_sum;

static void prof_cb(void *ctx __attribute__((unused)),
		    int cpu __attribute__((unused)), void *data,
		    __u32 size __attribute__((unused)))
{
	__u64 v;

	memcpy(&v, data, sizeof(v));
	prof_sum += v;
}

/*
 * PROF_DRAINS drains of PROF_RECS records of 8 bytes with TIME, written
 * to @nrings rings in turns of @turn records each (times increasing
 * along the turns), then drained by one ordered consume, or by
 * pea_cpu_buf_consume() on each ring (what pea_buffer__consume() does
 * unordered). callgrind's --toggle-collect=pea_ordered_consume (or
 * pea_cpu_buf_consume) with --toggle-collect=prof_cb counts the
 * readers' instructions without the callback's.
 */
#define PROF_DRAINS	1000
#define PROF_RECS	64

static int profile(bool ordered, int nrings, int turn)
{
	static struct world w;
	__u64 t = 1;
	int d, k, i, got;

	world_init(&w, nrings, PERF_SAMPLE_TIME);
	w.pb.sample_cb = prof_cb;
	for (d = 0; d < PROF_DRAINS; d++) {
		w.nwritten = 0;
		for (k = 0; k < PROF_RECS; k++)
			write_rec(&w, (k / turn) % nrings, t++, false, 8);
		for (i = 0; i < nrings; i++)
			publish(&w, i);
		if (ordered) {
			if (pea_ordered_consume(&w.pb) < 0)
				return 1;
		} else {
			for (i = 0; i < nrings; i++)
				if (pea_cpu_buf_consume(&w.pb, &w.bufs[i]))
					return 1;
		}
		for (got = 0, i = 0; i < nrings; i++)
			got += w.bufs[i].ring.page->data_tail == w.head[i];
		if (got != nrings)
			return 1;
	}
	world_free(&w);
	return 0;
}

int main(void)
{
	const char *prof = getenv("PEA_MERGE_PROFILE");

	if (prof) {
		/* MODE:RINGS:TURN, MODE ordered or unordered */
		int nrings = 1, turn = PROF_RECS;

		sscanf(prof, "%*[a-z]:%d:%d", &nrings, &turn);
		if (nrings < 1 || nrings > RINGS_MAX || turn < 1)
			return 2;
		return profile(strncmp(prof, "unordered", 9) != 0, nrings,
			       turn);
	}
	test_random(1, PERF_SAMPLE_TIME, false, "1 ring");
	test_random(2, PERF_SAMPLE_TIME, false, "2 rings");
	test_random(4, PERF_SAMPLE_TIME, true, "4 rings, lost records");
	test_random(3, PERF_SAMPLE_TID | PERF_SAMPLE_TIME, true,
		    "3 rings, TID, lost records");
	test_random(16, PERF_SAMPLE_TIME, true, "16 rings, lost records");
	test_bad();
	test_bad_raw();
	return host_tap_done();
}
