// SPDX-License-Identifier: GPL-2.0
/*
 * Wide keys and several fetch parts in one key (PEA_AGG_F_WIDE_KEY,
 * key_fetch_more[]) on the test module's pea_st_fetch_target(), called
 * with known user strings and numbers (pea_st_fetch.c): comm with a
 * 64-byte user string (11 words) counted exactly per string, a 70-byte
 * one cut at 64 and marked, a NULL one under its fault key; a log2
 * histogram per 64-byte string; two integer fetches in the four words of
 * struct pea_agg_entry, and an integer with a kernel string in a wide
 * key; entries of struct pea_agg_entry_wide's size; a wide table shared
 * by a second kprobe with the same fetch types; the older attr size; and
 * every bad attr's errno.
 */
#include <stddef.h>
#include <sys/prctl.h>
#include "pea_test.h"

#define NCPU_MAX	64
#define W		PEA_AGG_WIDE_KEY_WORDS

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];

/*
 * The fetch set: 0: n (argument 4, s64); 1: ustr (argument 2, a user
 * string of up to 100); 2: kstr (argument 1, a kernel string of 32);
 * 3: neg (argument 5, s32: -5).
 */
static struct pea_fetch fset[4];

static void fetch_set(void)
{
	memset(fset, 0, sizeof(fset));
	fset[0].base = PEA_FETCH_BASE_ARG;
	fset[0].arg = 4;
	fset[0].type = PEA_FETCH_S64;
	fset[1].base = PEA_FETCH_BASE_ARG;
	fset[1].arg = 2;
	fset[1].type = PEA_FETCH_STR;
	fset[1].size = 100;
	fset[1].user = 1;
	fset[2].base = PEA_FETCH_BASE_ARG;
	fset[2].arg = 1;
	fset[2].type = PEA_FETCH_STR;
	fset[2].size = 32;
	fset[3].base = PEA_FETCH_BASE_ARG;
	fset[3].arg = 5;
	fset[3].type = PEA_FETCH_S32;
}

static int flink(const struct pea_fetch *f)
{
	struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target", 0);
	int fd;

	a.fetches = (uintptr_t)f;
	a.nr_fetches = 4;
	a.filter_tgid = getpid();
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);
	if (fd < 0)
		pt_fatal("attach kprobe:pea_st_fetch_target with fetches");
	return fd;
}

static struct pea_agg_attr attr(__u32 flags)
{
	struct pea_agg_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags;
	a.max_keys = 16;
	return a;
}

static int agg_create(int link, struct pea_agg_attr *a)
{
	return pt_ioctl_errno(link, PEA_LINK_IOC_AGG_CREATE, a);
}

static void call(const char *ustr, __s64 n, __u32 count)
{
	struct pea_st_fetch f = {
		.ustr = (uintptr_t)ustr, .n = n, .count = count,
	};

	if (ioctl(pt_st(), PEA_ST_IOC_FETCH, &f))
		pt_fatal("PEA_ST_IOC_FETCH");
}

/* Entries of either layout, the same key's summed. */
struct merged {
	__u64 key[W];
	__u64 count;
	__s64 sum, min, max;
	__u64 buckets[PEA_AGG_LOG2_BUCKETS];
};

struct table {
	int nr;
	__u32 entry_size, nr_buckets;
	__u64 hits, dropped, errors;
	struct merged e[32];
};

static unsigned char rbuf[1 << 20];

static int agg_read(int link, __u32 kw, struct table *t)
{
	struct pea_agg_read r;
	__u32 i, b;
	int j, err;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.flags = PEA_AGG_READ_F_CLEAR;
	r.buf = (uintptr_t)rbuf;
	r.buf_len = sizeof(rbuf);
	err = pt_ioctl_errno(link, PEA_LINK_IOC_AGG_READ, &r);
	memset(t, 0, sizeof(*t));
	if (err)
		return err;
	t->entry_size = r.entry_size;
	t->nr_buckets = r.nr_buckets;
	t->hits = r.hits;
	t->dropped = r.dropped;
	t->errors = r.errors;
	for (i = 0; i < r.nr_entries; i++) {
		const unsigned char *p = rbuf + (size_t)i * r.entry_size;
		const __u64 *key = (const void *)p;
		/* The fields after the key: struct pea_agg_entry's. */
		const struct pea_agg_entry *e =
			(const void *)(p + kw * 8 - PEA_AGG_KEY_WORDS * 8);
		struct merged *m = NULL;
		__u64 k[W];

		memset(k, 0, sizeof(k));
		memcpy(k, key, kw * 8);
		for (j = 0; j < t->nr; j++)
			if (!memcmp(t->e[j].key, k, sizeof(k)))
				m = &t->e[j];
		if (!m) {
			if (t->nr == 32)
				return E2BIG;
			m = &t->e[t->nr++];
			memcpy(m->key, k, sizeof(k));
			m->min = INT64_MAX;
			m->max = INT64_MIN;
		}
		m->count += e->count;
		m->sum += e->sum;
		if (e->min < m->min)
			m->min = e->min;
		if (e->max > m->max)
			m->max = e->max;
		for (b = 0; b < r.nr_buckets && b < PEA_AGG_LOG2_BUCKETS; b++)
			m->buckets[b] += e->buckets[b];
	}
	return 0;
}

static const struct merged *find(const struct table *t, const __u64 *k)
{
	int i;

	for (i = 0; i < t->nr; i++)
		if (!memcmp(t->e[i].key, k, sizeof(t->e[i].key)))
			return &t->e[i];
	return NULL;
}

static __u64 count_of(const struct table *t, const __u64 *k)
{
	const struct merged *m = find(t, k);

	return m ? m->count : 0;
}

static __u64 sw(__u8 status, __u8 step, __u16 len)
{
	return status | (__u64)step << 8 | (__u64)len << 16;
}

/* A key: comm (2 words) if @comm, then a fetch part of @s, @len bytes. */
static void ckey(__u64 *k, bool comm, __u64 status, const char *s,
		 size_t len)
{
	int w = 0;

	memset(k, 0, W * 8);
	if (comm) {
		char c[16];

		memset(c, 0, sizeof(c));
		if (prctl(PR_GET_NAME, c))
			pt_fatal("PR_GET_NAME");
		memcpy(k, c, 16);
		w = 2;
	}
	k[w] = status;
	if (s)
		memcpy(&k[w + 1], s, len);
}

static int log2_bucket(__u64 v)
{
	int b = 1;

	while (v) {
		b++;
		v >>= 1;
	}
	return b;
}

/* ---- comm and a 64-byte string ---- */

static char s40[41], s64[65], s70[71];

static void strings(void)
{
	int i;

	for (i = 0; i < 40; i++)
		s40[i] = 'a' + i % 26;
	for (i = 0; i < 64; i++)
		s64[i] = 'A' + i % 26;
	for (i = 0; i < 70; i++)
		s70[i] = '0' + i % 10;
}

static void test_comm_string(void)
{
	struct pea_agg_attr a = attr(PEA_AGG_F_WIDE_KEY);
	int link = flink(fset);
	__u64 k[W];
	struct table t;

	a.keys[0] = PEA_AGG_KEY_COMM;
	a.keys[1] = PEA_AGG_KEY_FETCH;
	a.key_fetch = 1;
	a.key_fetch_size = 64;
	PT_EQ(agg_create(link, &a), 0,
	      "a wide table keyed by comm and a 64-byte user string (11 words)");
	call(s40, 1, 3);
	call(s64, 2, 4);
	call(s70, 3, 5);
	call(NULL, 4, 2);
	call("", 5, 1);
	PT_EQ(agg_read(link, W, &t), 0, "read-and-clear");
	PT_EQ(t.entry_size, sizeof(struct pea_agg_entry_wide),
	      "entries of struct pea_agg_entry_wide's 176 bytes");
	PT_OK(t.nr == 5 && t.hits == 15 && !t.dropped && !t.errors,
	      "5 keys, 15 hits (%d, %llu)", t.nr, (unsigned long long)t.hits);
	ckey(k, true, sw(PEA_FETCH_OK, 0, 40), s40, 40);
	PT_EQ(count_of(&t, k), 3, "comm + 40 bytes: count 3");
	ckey(k, true, sw(PEA_FETCH_OK, 0, 64), s64, 64);
	PT_EQ(count_of(&t, k), 4, "comm + 64 bytes, whole: count 4");
	ckey(k, true, sw(PEA_FETCH_TRUNCATED, 0, 64), s70, 64);
	PT_EQ(count_of(&t, k), 5,
	      "comm + 70 bytes: cut at 64 and marked TRUNCATED: count 5");
	ckey(k, true, sw(PEA_FETCH_FAULT, 0, 0), NULL, 0);
	PT_EQ(count_of(&t, k), 2, "comm + a NULL string: FAULT at read 0: count 2");
	ckey(k, true, sw(PEA_FETCH_OK, 0, 0), NULL, 0);
	PT_EQ(count_of(&t, k), 1, "comm + the empty string: count 1");
	close(link);
}

/* ---- a histogram per 64-byte string ---- */

static void test_hist_per_string(void)
{
	struct pea_agg_attr a = attr(PEA_AGG_F_WIDE_KEY);
	int link = flink(fset), i;
	__u64 k[W], want[PEA_AGG_LOG2_BUCKETS];
	const struct merged *m;
	struct table t;

	a.keys[0] = PEA_AGG_KEY_FETCH;
	a.key_fetch = 1;
	a.key_fetch_size = 64;
	a.value = PEA_AGG_VAL_FETCH;
	a.val_fetch = 0;
	a.hist = PEA_AGG_HIST_LOG2;
	PT_EQ(agg_create(link, &a), 0,
	      "a wide table: a log2 histogram of n per 64-byte string");
	memset(want, 0, sizeof(want));
	for (i = 0; i < 100; i++) {
		call(s64, i, 1);
		want[log2_bucket(i)]++;
	}
	call(s40, -7, 3);
	PT_EQ(agg_read(link, W, &t), 0, "read-and-clear");
	PT_EQ(t.entry_size, sizeof(struct pea_agg_entry_wide) + 66 * 8,
	      "entries of 176 + 66 x 8 bytes");
	ckey(k, false, sw(PEA_FETCH_OK, 0, 64), s64, 64);
	m = find(&t, k);
	PT_OK(m && m->count == 100 && m->sum == 4950 && m->min == 0 &&
	      m->max == 99 && !memcmp(m->buckets, want, sizeof(want)),
	      "the 64-byte string: n = 0..99, every bucket exact (count %llu)",
	      m ? (unsigned long long)m->count : 0);
	ckey(k, false, sw(PEA_FETCH_OK, 0, 40), s40, 40);
	m = find(&t, k);
	PT_OK(m && m->count == 3 && m->sum == -21 && m->buckets[0] == 3,
	      "the 40-byte string: three -7 in the negative bucket");
	close(link);
}

/* ---- two fetch parts ---- */

static void test_two_fetches(void)
{
	struct pea_agg_attr a = attr(0);
	int link = flink(fset);
	__u64 k[W];
	struct table t;

	/* n and neg: (1 + 1) + (1 + 1) words, struct pea_agg_entry's four */
	a.keys[0] = PEA_AGG_KEY_FETCH;
	a.keys[1] = PEA_AGG_KEY_FETCH;
	a.key_fetch = 0;
	a.key_fetch_more[0] = 3;
	PT_EQ(agg_create(link, &a), 0,
	      "a table keyed by two integer fetches, n and neg, in 4 words");
	call(s40, 11, 2);
	call(s40, 12, 3);
	PT_EQ(agg_read(link, PEA_AGG_KEY_WORDS, &t), 0, "read-and-clear");
	PT_EQ(t.entry_size, sizeof(struct pea_agg_entry),
	      "entries of struct pea_agg_entry's 80 bytes");
	memset(k, 0, sizeof(k));
	k[0] = sw(PEA_FETCH_OK, 0, 8);
	k[1] = 11;
	k[2] = sw(PEA_FETCH_OK, 0, 4);
	k[3] = (__u32)-5;
	PT_EQ(count_of(&t, k), 2, "(11, -5): count 2");
	k[1] = 12;
	PT_EQ(count_of(&t, k), 3, "(12, -5): count 3");
	PT_EQ(t.nr, 2, "two keys");
	close(link);

	/* n and 32 bytes of the kernel string: 2 + 5 words, wide */
	link = flink(fset);
	a = attr(PEA_AGG_F_WIDE_KEY);
	a.keys[0] = PEA_AGG_KEY_FETCH;
	a.keys[1] = PEA_AGG_KEY_COMM;
	a.keys[2] = PEA_AGG_KEY_FETCH;
	a.key_fetch = 0;
	a.key_fetch_more[0] = 2;
	a.key_fetch_size_more[0] = 32;
	PT_EQ(agg_create(link, &a), 0,
	      "a wide table keyed by n, comm and a kernel string");
	call(NULL, 7, 4);
	PT_EQ(agg_read(link, W, &t), 0, "read-and-clear");
	memset(k, 0, sizeof(k));
	k[0] = sw(PEA_FETCH_OK, 0, 8);
	k[1] = 7;
	if (prctl(PR_GET_NAME, (char *)&k[2]))
		pt_fatal("PR_GET_NAME");
	k[4] = sw(PEA_FETCH_OK, 0, strlen(PEA_ST_FETCH_KSTR));
	memcpy(&k[5], PEA_ST_FETCH_KSTR, strlen(PEA_ST_FETCH_KSTR));
	PT_OK(t.nr == 1 && count_of(&t, k) == 4,
	      "(7, comm, \"%s\"): count 4 (%d keys)", PEA_ST_FETCH_KSTR, t.nr);
	close(link);
}

/* ---- a wide table shared by two links ---- */

static void test_shared(void)
{
	struct pea_fetch other[4];
	struct pea_agg_attr a = attr(PEA_AGG_F_WIDE_KEY);
	int l1 = flink(fset), l2 = flink(fset), l3;
	__u64 k[W];
	struct table t;

	a.keys[0] = PEA_AGG_KEY_PROBE;
	a.keys[1] = PEA_AGG_KEY_FETCH;
	a.keys[2] = PEA_AGG_KEY_FETCH;
	a.key_fetch = 1;
	a.key_fetch_size = 64;
	a.key_fetch_more[0] = 3;
	PT_EQ(agg_create(l1, &a), 0, "a wide table: probe, a string, neg");
	memcpy(other, fset, sizeof(other));
	other[3].type = PEA_FETCH_U32;
	l3 = flink(other);
	PT_EQ(pt_ioctl_errno(l3, PEA_LINK_IOC_AGG_SHARE, (void *)(long)l1),
	      EINVAL, "a link whose second key fetch is a u32, not an s32: EINVAL");
	PT_EQ(pt_ioctl_errno(l2, PEA_LINK_IOC_AGG_SHARE, (void *)(long)l1), 0,
	      "a second kprobe with the same fetches shares it");
	call(s64, 1, 6);
	PT_EQ(agg_read(l2, W, &t), 0, "read-and-clear through the sharer");
	PT_OK(t.nr == 2 && t.hits == 12, "two keys, 12 hits (%d, %llu)",
	      t.nr, (unsigned long long)t.hits);
	memset(k, 0, sizeof(k));
	k[1] = sw(PEA_FETCH_OK, 0, 64);
	memcpy(&k[2], s64, 64);
	k[10] = sw(PEA_FETCH_OK, 0, 4);
	k[11] = (__u32)-5;
	{
		struct pea_link_info i1, i2;

		if (ioctl(l1, PEA_LINK_IOC_INFO, &i1) ||
		    ioctl(l2, PEA_LINK_IOC_INFO, &i2))
			pt_fatal("PEA_LINK_IOC_INFO");
		k[0] = i1.id;
		PT_EQ(count_of(&t, k), 6, "the creator's 6 hits under its id");
		k[0] = i2.id;
		PT_EQ(count_of(&t, k), 6, "the sharer's 6 hits under its id");
	}
	close(l1);
	close(l2);
	close(l3);
}

/* ---- the older attr ---- */

static void test_older_attr(void)
{
	struct pea_agg_attr a = attr(0);
	int link = flink(fset);
	struct table t;

	a.size = PEA_AGG_ATTR_SIZE_VER3;
	a.keys[0] = PEA_AGG_KEY_FETCH;
	a.key_fetch = 2;
	a.key_fetch_size = 24;
	PT_EQ(pt_ioctl_errno(link, _IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x38,
					PEA_AGG_ATTR_SIZE_VER3), &a), 0,
	      "the 120-byte attr and its ioctl number: a table");
	call(NULL, 1, 2);
	PT_EQ(agg_read(link, PEA_AGG_KEY_WORDS, &t), 0, "read-and-clear");
	PT_OK(t.nr == 1 && t.e[0].count == 2 &&
	      t.entry_size == sizeof(struct pea_agg_entry),
	      "2 hits in 80-byte entries (%d keys)", t.nr);
	close(link);
}

/* ---- errnos ---- */

static void test_errors(void)
{
	struct pea_agg_attr a, ok = attr(PEA_AGG_F_WIDE_KEY);
	int link = flink(fset);

	ok.keys[0] = PEA_AGG_KEY_FETCH;
	ok.keys[1] = PEA_AGG_KEY_FETCH;
	ok.key_fetch = 1;
	ok.key_fetch_size = 64;
	ok.key_fetch_more[0] = 0;

#define BAD(stmt, want, what) do {					\
		a = ok;							\
		stmt;							\
		PT_EQ(agg_create(link, &a), want, what);		\
	} while (0)

	BAD(a.key_fetch_size = 121, E2BIG,
	    "a fetch part of 121 bytes in a wide key (120 at most): E2BIG");
	BAD(a.key_fetch_size_more[0] = 1, EINVAL,
	    "an integer fetch part with a size: EINVAL");
	BAD((a.key_fetch_more[0] = 1, a.key_fetch_size_more[0] = 64), E2BIG,
	    "two 64-byte strings: 18 words of 16: E2BIG");
	BAD((a.key_fetch_more[0] = 2, a.key_fetch_size_more[0] = 0), EINVAL,
	    "a string fetch part without a size: EINVAL");
	BAD(a.key_fetch_more[0] = 4, EINVAL,
	    "a fetch part past the link's 4 fetches: EINVAL");
	BAD(a.key_fetch_more[0] = PEA_FETCH_MAX, EINVAL,
	    "a fetch part past PEA_FETCH_MAX: EINVAL");
	BAD(a.key_fetch_more[1] = 3, EINVAL,
	    "key_fetch_more[1] without a third fetch part: EINVAL");
	BAD(a.key_fetch_size_more[2] = 8, EINVAL,
	    "key_fetch_size_more[2] without a fourth fetch part: EINVAL");
	BAD((a.keys[1] = PEA_AGG_KEY_NONE, a.key_fetch_more[0] = 2), EINVAL,
	    "key_fetch_more[0] with one fetch part: EINVAL");
	BAD(a.flags = 0, E2BIG,
	    "a 64-byte string without PEA_AGG_F_WIDE_KEY: E2BIG");
	BAD((a.flags = 0, a.key_fetch_size = 24), E2BIG,
	    "24 bytes and an integer: 6 words of 4: E2BIG");
	BAD((a.keys[2] = PEA_AGG_KEY_COMM, a.keys[3] = PEA_AGG_KEY_COMM),
	    EINVAL, "comm twice: EINVAL");
	BAD(a.flags = 1U << 3, EINVAL, "an unknown flag: EINVAL");
#undef BAD
	close(link);
}

int main(void)
{
	ncpu = pt_setup(NCPU_MAX);
	ncpu = pt_cpu_map("aggwide", 1, &map_fd, ev_fd, rings);
	fetch_set();
	strings();
	test_comm_string();
	test_hist_per_string();
	test_two_fetches();
	test_shared();
	test_older_attr();
	test_errors();
	return pt_done();
}
