// SPDX-License-Identifier: GPL-2.0
/*
 * Fetched values in in-kernel tables (PEA_AGG_KEY_FETCH, PEA_AGG_VAL_FETCH)
 * on the test module's pea_st_fetch_target(), called with known arguments
 * and struct fields (pea_st_fetch.c): exact counts per fetched integer
 * and per user string, a log2 and a linear histogram of a fetched signed
 * integer with every bucket exact, a failed fetch (a NULL pointer in the
 * chain, a NULL string) counted under its own marked key, a string cut
 * at the key's room marked truncated, keys that do not fit counted in
 * dropped exactly, a failed value fetch counted in errors, the record
 * and the table fed by the same evaluation, a kretprobe's return value
 * as a key, a uprobe's user string as a key with a histogram per key and
 * a uretprobe's return value as a key, and every bad attr's errno.
 */
#include <stddef.h>
#include <sys/prctl.h>
#include "pea_test.h"
#include "pt_maps.h"
#include "pt_agg.h"
#include "pt_fetch.h"

#define NCPU_MAX	64
#define FO(f)		((__s32)offsetof(struct pea_st_fobj, f))
#define NF		8

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];

/* ---- helpers ---- */

/*
 * The fetch set every link here has:
 * 0: n (argument 4, s64)       1: ustr (argument 2, a user string of 32)
 * 2: o->small (u16, 0xbeef)    3: *o->null (u32: fails at read 1)
 * 4: o->next->name (16)        5: kstr (argument 1, a kernel string)
 * 6: neg (argument 5, s32: -5) 7: o->bytes (an array of 8)
 */
static void fetch_set(struct pea_fetch *f)
{
	f[0] = pt_fx(PEA_FETCH_BASE_ARG, 4, PEA_FETCH_S64, 0, 0);
	f[1] = pt_fx(PEA_FETCH_BASE_ARG, 2, PEA_FETCH_STR, 32, 0);
	f[2] = pt_at(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_U16, 0,
			   PEA_FETCH_F_LOAD), FO(small));
	f[3] = pt_deref(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_U32, 0,
			      PEA_FETCH_F_LOAD), FO(null));
	f[4] = pt_at(pt_deref(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_STR, 16, 0),
			      FO(next)), FO(name));
	f[5] = pt_fx(PEA_FETCH_BASE_ARG, 1, PEA_FETCH_STR, 32, 0);
	f[6] = pt_fx(PEA_FETCH_BASE_ARG, 5, PEA_FETCH_S32, 0, 0);
	f[7] = pt_at(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_ARRAY, 8, 0), FO(bytes));
}

static struct pea_fetch fset[NF];

/* A kprobe (or kretprobe) on the target with @nr fetches of fset. */
static int flink(__u32 flags, __u32 nr)
{
	struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target", flags);
	int fd;

	a.fetches = nr ? (uintptr_t)fset : 0;
	a.nr_fetches = nr;
	a.filter_tgid = getpid();
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);
	if (fd < 0)
		pt_fatal("attach kprobe:pea_st_fetch_target with fetches");
	return fd;
}

static void call(const char *ustr, __s64 n, __u32 count)
{
	struct pea_st_fetch f = {
		.ustr = (uintptr_t)ustr, .n = n, .count = count,
	};

	if (ioctl(pt_st(), PEA_ST_IOC_FETCH, &f))
		pt_fatal("PEA_ST_IOC_FETCH");
}

/*
 * Give @link table @a (@what says which), make the calls of
 * call(@ustr, @n, @count), read and clear the table into @t, and close
 * @link (its records drained).
 */
static void one_table(int link, struct pea_agg_attr *a, const char *what,
		      const char *ustr, __s64 n, __u32 count,
		      struct pt_agg_table *t)
{
	PT_EQ(pt_agg_create(link, a), 0, "%s", what);
	call(ustr, n, count);
	PT_EQ(pt_agg_read(link, true, t), 0, "read-and-clear");
	close(link);
	pt_rings_drain(rings, ncpu);
}

/* The status word of a fetch key part. */
static __u64 sw(__u8 status, __u8 step, __u16 len)
{
	return status | (__u64)step << 8 | (__u64)len << 16;
}

/* The entry of @t whose first @words words are @key, or NULL. */
static const struct pt_agg_merged *find(const struct pt_agg_table *t,
					 const __u64 *key)
{
	int j;

	for (j = 0; j < t->nr; j++)
		if (!memcmp(t->e[j].key, key, sizeof(t->e[j].key)))
			return &t->e[j];
	return NULL;
}

/* A key of a status word and up to three words of @bytes (@len). */
static void skey(__u64 *key, __u64 status, const void *bytes, size_t len)
{
	memset(key, 0, PEA_AGG_KEY_WORDS * 8);
	key[0] = status;
	memcpy(&key[1], bytes, len);
}

static __u64 count_of(const struct pt_agg_table *t, const __u64 *key)
{
	const struct pt_agg_merged *m = find(t, key);

	return m ? m->count : 0;
}

/* ---- counts per fetched integer ---- */

static void test_int_key(void)
{
	struct pea_agg_attr a = pt_agg_attr(16, PEA_AGG_KEY_FETCH, PEA_AGG_VAL_NONE,
					    PEA_AGG_HIST_NONE);
	int link = flink(0, NF);
	__u64 k[PEA_AGG_KEY_WORDS];
	__s64 minus1 = -1;
	struct pt_agg_table t;

	a.key_fetch = 0;
	PT_EQ(pt_agg_create(link, &a), 0,
	      "kprobe: a table keyed by fetch 0 (n, s64)");
	call("x", 5, 3);
	call("x", -1, 2);
	call("x", 7, 1);
	call("x", 0, 4);
	PT_EQ(pt_agg_read(link, true, &t), 0, "read-and-clear");
	PT_OK(t.nr == 4 && t.hits == 10 && t.dropped == 0 && t.errors == 0,
	      "4 keys, 10 hits, none dropped, no errors (%d, %llu, %llu, %llu)",
	      t.nr, (unsigned long long)t.hits,
	      (unsigned long long)t.dropped, (unsigned long long)t.errors);
	skey(k, sw(PEA_FETCH_OK, 0, 8), &(__s64){ 5 }, 8);
	PT_EQ(count_of(&t, k), 3, "n == 5: status OK, 8 bytes: count 3");
	skey(k, sw(PEA_FETCH_OK, 0, 8), &minus1, 8);
	PT_EQ(count_of(&t, k), 2,
	      "n == -1: its 8 bytes (0xffffffffffffffff): count 2");
	skey(k, sw(PEA_FETCH_OK, 0, 8), &(__s64){ 7 }, 8);
	PT_EQ(count_of(&t, k), 1, "n == 7: count 1");
	skey(k, sw(PEA_FETCH_OK, 0, 8), &(__s64){ 0 }, 8);
	PT_EQ(count_of(&t, k), 4, "n == 0: count 4");
	close(link);

	/* A struct field of the object, and an s32 argument zero-extended. */
	link = flink(0, NF);
	a.key_fetch = 2;
	one_table(link, &a, "a table keyed by o->small (u16)", "x", 1, 6, &t);
	skey(k, sw(PEA_FETCH_OK, 0, 2), &(__u16){ 0xbeef }, 2);
	PT_OK(t.nr == 1 && count_of(&t, k) == 6 && t.hits == 6,
	      "o->small: one key, status OK, 2 bytes, 0xbeef: count 6 (%d keys, key 0x%llx 0x%llx)",
	      t.nr, (unsigned long long)t.e[0].key[0],
	      (unsigned long long)t.e[0].key[1]);

	link = flink(0, NF);
	a.key_fetch = 6;
	one_table(link, &a, "a table keyed by neg (s32)", "x", 1, 2, &t);
	skey(k, sw(PEA_FETCH_OK, 0, 4), &(__s32){ -5 }, 4);
	PT_OK(t.nr == 1 && count_of(&t, k) == 2 && k[1] == 0xfffffffbULL,
	      "neg == -5: its 4 bytes zero-extended (0xfffffffb), count 2");
	pt_rings_drain(rings, ncpu);
}

/* ---- a failed fetch: a key of its own ---- */

static void test_failed_key(void)
{
	struct pea_agg_attr a = pt_agg_attr(16, PEA_AGG_KEY_FETCH, PEA_AGG_VAL_NONE,
					    PEA_AGG_HIST_NONE);
	int link = flink(0, NF);
	__u64 k[PEA_AGG_KEY_WORDS];
	struct pt_agg_table t;

	a.key_fetch = 3;
	one_table(link, &a, "a table keyed by *o->null (u32)", "x", 1, 5, &t);
	skey(k, sw(PEA_FETCH_FAULT, 1, 0), NULL, 0);
	PT_OK(t.nr == 1 && count_of(&t, k) == 5 && t.hits == 5 &&
	      t.errors == 0 && t.dropped == 0,
	      "*o->null: 5 hits under one key: status FAULT at read 1, no bytes (key 0x%llx 0x%llx, %d keys)",
	      (unsigned long long)t.e[0].key[0],
	      (unsigned long long)t.e[0].key[1], t.nr);
	skey(k, sw(PEA_FETCH_OK, 0, 4), NULL, 0);
	PT_EQ(count_of(&t, k), 0,
	      "not folded into the key of a value 0 that was read");
	pt_rings_drain(rings, ncpu);
}

/* ---- strings: counts per user string, a NULL one, one cut ---- */

static void test_string_key(void)
{
	static const char longs[] = "abcdefghijklmnopqrstuvwxyz";
	struct pea_agg_attr a = pt_agg_attr(16, PEA_AGG_KEY_FETCH, PEA_AGG_VAL_NONE,
					    PEA_AGG_HIST_NONE);
	int link = flink(0, NF);
	__u64 k[PEA_AGG_KEY_WORDS];
	struct pt_agg_table t;

	a.key_fetch = 1;
	a.key_fetch_size = 16;
	PT_EQ(pt_agg_create(link, &a), 0,
	      "a table keyed by fetch 1 (a user string), 16 bytes");
	call("/tmp/pea-alpha", 1, 2);
	call("/tmp/pea-beta", 2, 3);
	call(NULL, 3, 1);
	call(longs, 4, 1);
	call("", 5, 2);
	PT_EQ(pt_agg_read(link, true, &t), 0, "read-and-clear");
	PT_OK(t.nr == 5 && t.hits == 9 && t.dropped == 0 && t.errors == 0,
	      "5 keys, 9 hits (%d, %llu)", t.nr, (unsigned long long)t.hits);
	skey(k, sw(PEA_FETCH_OK, 0, 14), "/tmp/pea-alpha", 14);
	PT_EQ(count_of(&t, k), 2, "\"/tmp/pea-alpha\": OK, 14 bytes: count 2");
	skey(k, sw(PEA_FETCH_OK, 0, 13), "/tmp/pea-beta", 13);
	PT_EQ(count_of(&t, k), 3, "\"/tmp/pea-beta\": OK, 13 bytes: count 3");
	skey(k, sw(PEA_FETCH_FAULT, 0, 0), NULL, 0);
	PT_EQ(count_of(&t, k), 1,
	      "a NULL string: status FAULT at read 0, no bytes: count 1");
	skey(k, sw(PEA_FETCH_TRUNCATED, 0, 16), longs, 16);
	PT_EQ(count_of(&t, k), 1,
	      "26 bytes: cut at the key's 16, marked TRUNCATED: count 1");
	skey(k, sw(PEA_FETCH_OK, 0, 0), NULL, 0);
	PT_EQ(count_of(&t, k), 2,
	      "the empty string: OK, 0 bytes (not the NULL's key): count 2");
	close(link);

	/* comm and 8 bytes of a kernel string: 2 + 1 + 1 words. */
	link = flink(0, NF);
	a.keys[0] = PEA_AGG_KEY_COMM;
	a.keys[1] = PEA_AGG_KEY_FETCH;
	a.key_fetch = 5;
	a.key_fetch_size = 8;
	one_table(link, &a, "a table keyed by comm and fetch 5 (a kernel string), 8 bytes: 4 words",
		  "x", 1, 3, &t);
	{
		char comm[16] = { 0 };

		prctl(PR_GET_NAME, comm);
		PT_OK(t.nr == 1 && t.e[0].count == 3 &&
		      !memcmp(t.e[0].key, comm, 16) &&
		      t.e[0].key[2] == sw(PEA_FETCH_TRUNCATED, 0, 8) &&
		      !memcmp(&t.e[0].key[3], "kernel-s", 8),
		      "comm, then TRUNCATED, 8 bytes \"kernel-s\" (of \"%s\"): count 3",
		      PEA_ST_FETCH_KSTR);
	}

	/* An array's bytes; a string through two pointers. */
	link = flink(0, NF);
	memset(a.keys, 0, sizeof(a.keys));
	a.keys[0] = PEA_AGG_KEY_FETCH;
	a.key_fetch = 7;
	a.key_fetch_size = 8;
	one_table(link, &a, "a table keyed by o->bytes (8)", "x", 1, 2, &t);
	skey(k, sw(PEA_FETCH_OK, 0, 8), (__u8[]){ 1, 2, 3, 4, 5, 6, 7, 8 },
	     8);
	PT_OK(t.nr == 1 && count_of(&t, k) == 2,
	      "o->bytes: OK, 8 bytes 1..8: count 2");
	link = flink(0, NF);
	a.key_fetch = 4;
	a.key_fetch_size = 24;
	one_table(link, &a, "a table keyed by o->next->name, 24 bytes: 4 words",
		  "x", 1, 1, &t);
	skey(k, sw(PEA_FETCH_OK, 0, 10), "inner-name", 10);
	PT_OK(t.nr == 1 && count_of(&t, k) == 1,
	      "o->next->name: OK, \"inner-name\": count 1");
	pt_rings_drain(rings, ncpu);
}

/* ---- histograms of a fetched value ---- */

static void test_hist(void)
{
	struct pea_agg_attr a = pt_agg_attr(4, PEA_AGG_KEY_NONE, PEA_AGG_VAL_FETCH,
					    PEA_AGG_HIST_LOG2);
	__u64 want[PEA_AGG_LOG2_BUCKETS];
	int link = flink(0, NF), i, good;
	struct pt_agg_table t;

	memset(want, 0, sizeof(want));
	a.val_fetch = 0;
	PT_EQ(pt_agg_create(link, &a), 0,
	      "a log2 histogram of fetch 0 (n, s64: signed)");
	for (i = 0; i < 100; i++) {
		call("x", i, 1);
		want[pt_log2_bucket(i)]++;
	}
	call("x", -3, 2);
	want[0] += 2;
	call("x", 1LL << 40, 1);
	want[pt_log2_bucket(1ULL << 40)]++;
	PT_EQ(pt_agg_read(link, true, &t), 0, "read-and-clear");
	if (t.nr != 1) {
		PT_OK(0, "one entry (%d)", t.nr);
		close(link);
		return;
	}
	good = t.nr_buckets == PEA_AGG_LOG2_BUCKETS &&
	       !memcmp(t.e[0].buckets, want, sizeof(want));
	PT_OK(good && t.hits == 103 && t.e[0].count == 103,
	      "103 values: every log2 bucket exact (2 below 0, 1 at 0, 1 at 1, 2 in [2,4), .. 1 in [2^40, 2^41))");
	PT_OK(t.e[0].sum == 4950 - 6 + (1LL << 40) && t.e[0].min == -3 &&
	      t.e[0].max == 1LL << 40,
	      "sum %lld, min %lld, max %lld: signed as the fetch's type",
	      (long long)t.e[0].sum, (long long)t.e[0].min,
	      (long long)t.e[0].max);
	close(link);

	/* Linear, keyed by a string: a histogram per key. */
	link = flink(0, NF);
	a = pt_agg_attr(4, PEA_AGG_KEY_FETCH, PEA_AGG_VAL_FETCH, PEA_AGG_HIST_LINEAR);
	a.key_fetch = 1;
	a.key_fetch_size = 8;
	a.val_fetch = 0;
	a.lin_min = -10;
	a.lin_max = 10;
	a.lin_step = 5;
	PT_EQ(pt_agg_create(link, &a), 0,
	      "linear -10..10 by 5 of n, keyed by the user string");
	for (i = -12; i < 12; i++)
		call(i < 0 ? "neg" : "pos", i, 1);
	PT_EQ(pt_agg_read(link, true, &t), 0, "read-and-clear");
	{
		__u64 k[PEA_AGG_KEY_WORDS];
		const struct pt_agg_merged *n, *p;

		skey(k, sw(PEA_FETCH_OK, 0, 3), "neg", 3);
		n = find(&t, k);
		skey(k, sw(PEA_FETCH_OK, 0, 3), "pos", 3);
		p = find(&t, k);
		PT_OK(t.nr == 2 && n && p && t.nr_buckets == 6 &&
		      n->count == 12 && n->buckets[0] == 2 &&
		      n->buckets[1] == 5 && n->buckets[2] == 5 &&
		      n->buckets[3] == 0 && n->buckets[5] == 0 &&
		      n->min == -12 && n->max == -1,
		      "\"neg\": -12..-1: buckets 2 (< -10), 5, 5, 0, 0, 0 exact");
		PT_OK(p && p->count == 12 && p->buckets[0] == 0 &&
		      p->buckets[1] == 0 && p->buckets[2] == 0 &&
		      p->buckets[3] == 5 && p->buckets[4] == 5 &&
		      p->buckets[5] == 2 && p->sum == 66,
		      "\"pos\": 0..11: buckets 0, 0, 0, 5, 5, 2 (>= 10) exact, sum 66");
	}
	close(link);

	/* A value fetch that fails: in errors, in no entry. */
	link = flink(0, NF);
	a = pt_agg_attr(4, PEA_AGG_KEY_NONE, PEA_AGG_VAL_FETCH, PEA_AGG_HIST_NONE);
	a.val_fetch = 3;
	one_table(link, &a, "a sum of fetch 3 (*o->null, u32)", "x", 1, 4, &t);
	PT_OK(t.nr == 0 && t.hits == 4 && t.errors == 4,
	      "the failed value: 4 hits, 4 errors, no entry (%d, %llu, %llu)",
	      t.nr, (unsigned long long)t.hits,
	      (unsigned long long)t.errors);
	pt_rings_drain(rings, ncpu);
}

/* ---- keys past max_keys: dropped, exactly ---- */

static void test_overflow(void)
{
	struct pea_agg_attr a = pt_agg_attr(2, PEA_AGG_KEY_FETCH, PEA_AGG_VAL_NONE,
					    PEA_AGG_HIST_NONE);
	int link = flink(0, NF);
	__u64 k[PEA_AGG_KEY_WORDS];
	struct pt_agg_table t;

	a.key_fetch = 1;
	a.key_fetch_size = 8;
	PT_EQ(pt_agg_create(link, &a), 0, "a table of 2 string keys");
	pt_pin(0);
	call("a", 1, 2);
	call("b", 1, 1);
	call("c", 1, 3);
	call(NULL, 1, 2);
	call("a", 1, 1);
	PT_EQ(pt_agg_read(link, true, &t), 0, "read-and-clear");
	skey(k, sw(PEA_FETCH_OK, 0, 1), "a", 1);
	PT_OK(t.nr == 2 && count_of(&t, k) == 3 && t.hits == 9 &&
	      t.dropped == 5,
	      "\"a\" 3, \"b\" 1; \"c\" x3 and the failed x2 dropped: 9 hits, dropped %llu",
	      (unsigned long long)t.dropped);
	close(link);
	pt_rings_drain(rings, ncpu);
}

/* ---- the record and the table from one evaluation ---- */

static unsigned char rec[65536];

static void test_record_too(void)
{
	struct pea_agg_attr a = pt_agg_attr(4, PEA_AGG_KEY_FETCH, PEA_AGG_VAL_NONE,
					    PEA_AGG_HIST_NONE);
	struct perf_event_header *h = (void *)rec;
	int link = flink(0, NF), cpu = 1 % ncpu, recs = 0, same = 0;
	__u64 k[PEA_AGG_KEY_WORDS];
	struct pea_link_info info;
	struct pt_agg_table t;

	a.key_fetch = 1;
	a.key_fetch_size = 16;
	PT_EQ(pt_agg_create(link, &a), 0, "a table with records too");
	pt_pin(cpu);
	pt_rings_drain(rings, ncpu);
	call("/etc/pea-rec", 1, 3);
	while (pt_ring_next(&rings[cpu], rec)) {
		struct pea_probe_record *r = (void *)(rec + 12);
		struct pea_fetch_block *b;
		__u32 off;

		if (h->type != PERF_RECORD_SAMPLE ||
		    r->tgid != (__u32)getpid())
			continue;
		recs++;
		off = (sizeof(*r) + r->capture_len + 7) & ~7U;
		b = (void *)((unsigned char *)r + off);
		if ((r->flags & PEA_REC_F_FETCH) && b->nr == NF &&
		    b->values[1].len == 12 &&
		    !memcmp((unsigned char *)b + b->values[1].offset,
			    "/etc/pea-rec", 12))
			same++;
	}
	PT_EQ(pt_agg_read(link, true, &t), 0, "read-and-clear");
	skey(k, sw(PEA_FETCH_OK, 0, 12), "/etc/pea-rec", 12);
	PT_OK(recs == 3 && same == 3 && t.nr == 1 && count_of(&t, k) == 3,
	      "3 records with the string and 3 hits under its key (%d, %d)",
	      recs, same);
	PT_EQ(ioctl(link, PEA_LINK_IOC_INFO, &info), 0, "link info");
	PT_OK(info.hits == 3 && info.written == 3,
	      "the link: 3 hits, 3 written");
	close(link);

	/* PEA_AGG_F_NO_RECORDS: the table only. */
	link = flink(0, NF);
	a.flags = PEA_AGG_F_NO_RECORDS;
	PT_EQ(pt_agg_create(link, &a), 0, "a table without records");
	pt_rings_drain(rings, ncpu);
	call("/etc/pea-rec", 1, 2);
	recs = 0;
	while (pt_ring_next(&rings[cpu], rec))
		if (h->type == PERF_RECORD_SAMPLE)
			recs++;
	PT_EQ(pt_agg_read(link, true, &t), 0, "read-and-clear");
	PT_OK(recs == 0 && count_of(&t, k) == 2,
	      "no record, 2 hits under the key");
	close(link);
	pt_rings_drain(rings, ncpu);
}

/* ---- a kretprobe: the return value as a key, n as a value ---- */

static void test_kretprobe(void)
{
	struct pea_agg_attr a = pt_agg_attr(4, PEA_AGG_KEY_FETCH, PEA_AGG_VAL_FETCH,
					    PEA_AGG_HIST_NONE);
	struct pea_fetch saved[2];
	__u64 k[PEA_AGG_KEY_WORDS];
	struct pt_agg_table t;
	int link;

	memcpy(saved, fset, sizeof(saved));
	fset[0] = pt_fx(PEA_FETCH_BASE_RET, 0, PEA_FETCH_S32, 0, 0);
	fset[1] = pt_fx(PEA_FETCH_BASE_ARG, 4, PEA_FETCH_U64, 0, 0);
	link = flink(PEA_PROBE_F_RETPROBE, 2);
	memcpy(fset, saved, sizeof(saved));
	a.key_fetch = 0;
	a.val_fetch = 1;
	PT_EQ(pt_agg_create(link, &a), 0,
	      "kretprobe: keyed by ret (s32), a sum of n (u64)");
	call("x", 10, 2);
	call("x", 5, 1);
	PT_EQ(pt_agg_read(link, true, &t), 0, "read-and-clear");
	skey(k, sw(PEA_FETCH_OK, 0, 4), &(__s32){ PEA_ST_FETCH_RET }, 4);
	PT_OK(t.nr == 1 && count_of(&t, k) == 3 && t.e[0].sum == 25 &&
	      t.e[0].min == 5 && t.e[0].max == 10,
	      "ret -22: count 3, sum 25, min 5, max 10");
	close(link);
	pt_rings_drain(rings, ncpu);
}

/* ---- a uprobe and a uretprobe: user strings and values ---- */

__attribute__((noipa, used)) int agg_user_fn(const char *s, long n)
{
	__asm__ volatile("" : : "r"(s), "r"(n) : "memory");
	return (int)(n % 5);
}

static int ulink(bool ret, struct pea_fetch *f, __u32 nr)
{
	static char self[256];
	struct pea_uprobe_attr a;
	ssize_t n;
	int fd;

	if (!self[0]) {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = 0;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_UPROBE_F_CLOEXEC | (ret ? PEA_UPROBE_F_RETPROBE : 0);
	a.path = (uintptr_t)self;
	a.path_fd = -1;
	a.offset = pt_file_off((void *)agg_user_fn);
	a.filter_tgid = getpid();
	a.fetches = (uintptr_t)f;
	a.nr_fetches = nr;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_UPROBE, &a);
	if (fd < 0)
		pt_fatal("attach a uprobe on agg_user_fn with fetches");
	return fd;
}

static void user_calls(void)
{
	int i;

	for (i = 0; i < 2; i++)
		agg_user_fn("u-one", 3);
	agg_user_fn(NULL, -2);
	for (i = 0; i < 3; i++)
		agg_user_fn("u-two", 100);
}

static void test_uprobe(void)
{
	struct pea_fetch f[2] = {
		pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_STR, 16, 0),
		pt_fx(PEA_FETCH_BASE_ARG, 1, PEA_FETCH_S64, 0, 0),
	};
	struct pea_agg_attr a = pt_agg_attr(8, PEA_AGG_KEY_FETCH, PEA_AGG_VAL_FETCH,
					    PEA_AGG_HIST_LOG2);
	__u64 k[PEA_AGG_KEY_WORDS];
	const struct pt_agg_merged *m;
	struct pt_agg_table t;
	int link = ulink(false, f, 2);

	a.key_fetch = 0;
	a.key_fetch_size = 16;
	a.val_fetch = 1;
	PT_EQ(pt_agg_create(link, &a), 0,
	      "uprobe: keyed by a user string, a log2 histogram of n (s64)");
	pt_pin(1 % ncpu);
	user_calls();
	PT_EQ(pt_agg_read(link, true, &t), 0, "read-and-clear");
	skey(k, sw(PEA_FETCH_OK, 0, 5), "u-one", 5);
	m = find(&t, k);
	PT_OK(t.nr == 3 && t.hits == 6 && m && m->count == 2 && m->sum == 6 &&
	      m->buckets[pt_log2_bucket(3)] == 2,
	      "uprobe: \"u-one\" 2 calls, sum 6, both in [2, 4)");
	skey(k, sw(PEA_FETCH_FAULT, 0, 0), NULL, 0);
	m = find(&t, k);
	PT_OK(m && m->count == 1 && m->sum == -2 && m->min == -2 &&
	      m->buckets[0] == 1,
	      "uprobe: the NULL string under its FAULT key: 1 call, n -2 in the negative bucket");
	skey(k, sw(PEA_FETCH_OK, 0, 5), "u-two", 5);
	m = find(&t, k);
	PT_OK(m && m->count == 3 && m->sum == 300 && m->max == 100 &&
	      m->buckets[pt_log2_bucket(100)] == 3,
	      "uprobe: \"u-two\" 3 calls, sum 300, all in [64, 128)");
	close(link);

	/* The return value (s32, at the return) as the key. */
	f[0] = pt_fx(PEA_FETCH_BASE_RET, 0, PEA_FETCH_S32, 0, 0);
	link = ulink(true, f, 2);
	a = pt_agg_attr(8, PEA_AGG_KEY_FETCH, PEA_AGG_VAL_NONE, PEA_AGG_HIST_NONE);
	PT_EQ(pt_agg_create(link, &a), 0, "uretprobe: keyed by ret (s32)");
	user_calls();
	PT_EQ(pt_agg_read(link, true, &t), 0, "read-and-clear");
	skey(k, sw(PEA_FETCH_OK, 0, 4), &(__s32){ 3 }, 4);
	PT_EQ(count_of(&t, k), 2, "uretprobe: ret 3: 2 calls");
	skey(k, sw(PEA_FETCH_OK, 0, 4), &(__s32){ -2 }, 4);
	PT_EQ(count_of(&t, k), 1, "uretprobe: ret -2 (4 bytes, 0xfffffffe): 1 call");
	skey(k, sw(PEA_FETCH_OK, 0, 4), &(__s32){ 0 }, 4);
	PT_OK(count_of(&t, k) == 3 && t.nr == 3 && t.hits == 6,
	      "uretprobe: ret 0: 3 calls; 3 keys, 6 hits");
	close(link);
	pt_rings_drain(rings, ncpu);
}

/* ---- errnos ---- */

static void test_errors(void)
{
	struct pea_agg_attr a;
	int link = flink(0, NF), few = flink(0, 3), none = flink(0, 0);
	unsigned char old[PEA_AGG_ATTR_SIZE_VER2];

#define BAD(fd, want, ...) PT_EQ(pt_agg_create(fd, &a), want, __VA_ARGS__)
	a = pt_agg_attr(4, PEA_AGG_KEY_FETCH, 0, 0);
	a.key_fetch = NF;
	BAD(link, EINVAL, "key_fetch 8 (PEA_FETCH_MAX): EINVAL");
	a.key_fetch = 5;
	BAD(few, EINVAL, "key_fetch 5 of a set of 3: EINVAL");
	a.key_fetch = 0;
	BAD(none, EINVAL, "a fetch key on a link without fetches: EINVAL");
	a.key_fetch_size = 8;
	BAD(link, EINVAL, "an integer fetch key with key_fetch_size 8: EINVAL");
	a.key_fetch = 1;
	a.key_fetch_size = 0;
	BAD(link, EINVAL, "a string fetch key with key_fetch_size 0: EINVAL");
	a.key_fetch = 7;
	BAD(link, EINVAL, "an array fetch key with key_fetch_size 0: EINVAL");
	a.key_fetch_size = 25;
	BAD(link, E2BIG, "key_fetch_size 25 (past 3 words): E2BIG");
	a.key_fetch_size = 0xffffffff;
	BAD(link, E2BIG, "key_fetch_size 0xffffffff: E2BIG");
	a.keys[0] = PEA_AGG_KEY_COMM;
	a.keys[1] = PEA_AGG_KEY_FETCH;
	a.key_fetch = 1;
	a.key_fetch_size = 9;
	BAD(link, E2BIG, "comm and a 9-byte string: 5 words: E2BIG");
	a.keys[2] = PEA_AGG_KEY_CPU;
	a.key_fetch = 0;
	a.key_fetch_size = 0;
	BAD(link, E2BIG, "comm, an integer fetch and cpu: 5 words: E2BIG");
	/*
	 * Review F1: a fetch part that cannot be what it says is EINVAL,
	 * even when its size would also be too big.
	 */
	a = pt_agg_attr(4, PEA_AGG_KEY_COMM, 0, 0);
	a.keys[1] = PEA_AGG_KEY_FETCH;
	a.key_fetch = 2;
	a.key_fetch_size = 16;
	BAD(link, EINVAL,
	    "comm and the u16 fetch with key_fetch_size 16 (an integer takes 0; 5 words if it were a size): EINVAL");
	a = pt_agg_attr(4, PEA_AGG_KEY_FETCH, 0, 0);
	a.key_fetch_size = 25;
	BAD(none, EINVAL,
	    "a fetch key of 25 bytes on a link without fetches: EINVAL");
	a.key_fetch = 5;
	BAD(few, EINVAL, "key_fetch 5 of a set of 3, 25 bytes: EINVAL");
	a.key_fetch = 0;
	a.key_fetch_size = 0xffffffff;
	BAD(link, EINVAL,
	    "the s64 fetch with key_fetch_size 0xffffffff: EINVAL");
	a = pt_agg_attr(4, PEA_AGG_KEY_FETCH, 0, 0);
	a.keys[1] = PEA_AGG_KEY_FETCH;
	a.key_fetch_more[0] = 12;
	BAD(link, EINVAL,
	    "a second fetch part whose fetch is past PEA_FETCH_MAX: EINVAL");
	a.key_fetch_more[0] = 0;
	a.key_fetch_more[1] = 1;
	BAD(link, EINVAL,
	    "key_fetch_more[1] without a third fetch part: EINVAL");
	a = pt_agg_attr(4, PEA_AGG_KEY_CPU, 0, 0);
	a.key_fetch = 1;
	BAD(link, EINVAL, "key_fetch without a fetch part: EINVAL");
	a.key_fetch = 0;
	a.key_fetch_size = 8;
	BAD(link, EINVAL, "key_fetch_size without a fetch part: EINVAL");
	a = pt_agg_attr(4, PEA_AGG_KEY_NONE, PEA_AGG_VAL_NONE, 0);
	a.val_fetch = 1;
	BAD(link, EINVAL, "val_fetch without PEA_AGG_VAL_FETCH: EINVAL");
	a = pt_agg_attr(4, PEA_AGG_KEY_NONE, PEA_AGG_VAL_FETCH, 0);
	a.val_fetch = 1;
	BAD(link, EINVAL, "a value of a string fetch: EINVAL");
	a.val_fetch = 7;
	BAD(link, EINVAL, "a value of an array fetch: EINVAL");
	a.val_fetch = 5;
	BAD(few, EINVAL, "val_fetch 5 of a set of 3: EINVAL");
	a.val_fetch = NF;
	BAD(link, EINVAL, "val_fetch 8: EINVAL");
	a.val_fetch = 0;
	BAD(none, EINVAL, "a fetch value on a link without fetches: EINVAL");
	a.flags = PEA_AGG_F_SIGNED;
	BAD(link, EINVAL,
	    "PEA_AGG_F_SIGNED with a fetch value (its type says): EINVAL");
	a.flags = 0;
	a.reserved3 = 1;
	BAD(link, EINVAL, "reserved3 not zero: EINVAL");
	a.reserved3 = 0;
	a.value = PEA_AGG_VAL_FETCH + 1;
	BAD(link, EINVAL, "value 7: EINVAL");
	a = pt_agg_attr(4, PEA_AGG_KEY_FETCH + 1, 0, 0);
	BAD(link, EINVAL, "key part 11: EINVAL");
	/* The previous size's number still works (no fetch fields). */
	a = pt_agg_attr(4, PEA_AGG_KEY_CPU, 0, 0);
	a.size = PEA_AGG_ATTR_SIZE_VER2;
	memcpy(old, &a, sizeof(old));
	PT_EQ(pt_ioctl_errno(link, _IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x38,
					 PEA_AGG_ATTR_SIZE_VER2), old), 0,
	      "an attr of %d bytes by its own ioctl number: created",
	      PEA_AGG_ATTR_SIZE_VER2);
	PT_EQ((int)sizeof(struct pea_agg_attr), PEA_AGG_ATTR_SIZE_VER4,
	      "struct pea_agg_attr is PEA_AGG_ATTR_SIZE_VER4 (144) bytes");
	/* Good ones on fresh links after the bad ones. */
	a = pt_agg_attr(4, PEA_AGG_KEY_FETCH, PEA_AGG_VAL_FETCH, PEA_AGG_HIST_LOG2);
	a.key_fetch = 1;
	a.key_fetch_size = 24;
	a.val_fetch = 0;
	BAD(few, 0, "a 24-byte string key and an s64 value: created");
#undef BAD
	close(link);
	close(few);
	close(none);
}

int main(void)
{
	ncpu = pt_setup(NCPU_MAX);
	ncpu = pt_cpu_map("aggfetch", 16, &map_fd, ev_fd, rings);
	fetch_set(fset);
	test_int_key();
	test_failed_key();
	test_string_key();
	test_hist();
	test_overflow();
	test_record_too();
	test_kretprobe();
	test_uprobe();
	test_errors();
	return pt_done();
}
