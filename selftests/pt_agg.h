/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-kernel aggregation tables in the selftests (PEA_LINK_IOC_AGG_CREATE,
 * _READ): an attr with one key part, and a table read back with the
 * entries of one key (one per CPU in the kernel) merged, buckets too.
 */
#ifndef _PT_AGG_H
#define _PT_AGG_H

#include <stdint.h>
#include "pea_test.h"

#define PT_AGG_ENTRIES	256	/* distinct keys a read keeps */

/* Where pt_agg_read() has the kernel copy a table's entries. */
static unsigned char pt_agg_rbuf[1 << 22] __attribute__((unused));

static inline struct pea_agg_attr pt_agg_attr(__u32 max_keys, __u8 key0,
					      __u32 value, __u32 hist)
{
	struct pea_agg_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.max_keys = max_keys;
	a.keys[0] = key0;
	a.value = value;
	a.hist = hist;
	return a;
}

static inline int pt_agg_create(int link, struct pea_agg_attr *a)
{
	return pt_ioctl_errno(link, PEA_LINK_IOC_AGG_CREATE, a);
}

/* A table's entries with the same key summed (buckets too). */
struct pt_agg_merged {
	__u64 key[PEA_AGG_KEY_WORDS];
	__u64 count;
	__s64 sum, min, max;
	__u64 buckets[PEA_AGG_LINEAR_MAX + 2];
};

struct pt_agg_table {
	int nr;
	__u32 nr_buckets;
	__u64 hits, dropped, errors;
	struct pt_agg_merged e[PT_AGG_ENTRIES];
};

/*
 * Read (and with @clear, clear) @link's table into @t, the entries of a
 * key merged: 0, the ioctl's errno, or E2BIG past PT_AGG_ENTRIES keys.
 */
static inline int pt_agg_read(int link, bool clear, struct pt_agg_table *t)
{
	struct pea_agg_read r;
	__u32 i, b;
	int j, err;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.flags = clear ? PEA_AGG_READ_F_CLEAR : 0;
	r.buf = (uintptr_t)pt_agg_rbuf;
	r.buf_len = sizeof(pt_agg_rbuf);
	err = pt_ioctl_errno(link, PEA_LINK_IOC_AGG_READ, &r);
	memset(t, 0, sizeof(*t));
	if (err)
		return err;
	t->nr_buckets = r.nr_buckets;
	t->hits = r.hits;
	t->dropped = r.dropped;
	t->errors = r.errors;
	for (i = 0; i < r.nr_entries; i++) {
		struct pea_agg_entry *e =
			(void *)(pt_agg_rbuf + i * r.entry_size);
		struct pt_agg_merged *m = NULL;

		for (j = 0; j < t->nr; j++)
			if (!memcmp(t->e[j].key, e->key, sizeof(e->key)))
				m = &t->e[j];
		if (!m) {
			if (t->nr == PT_AGG_ENTRIES)
				return E2BIG;
			m = &t->e[t->nr++];
			memcpy(m->key, e->key, sizeof(e->key));
			m->min = INT64_MAX;
			m->max = INT64_MIN;
		}
		m->count += e->count;
		m->sum += e->sum;
		if (e->min < m->min)
			m->min = e->min;
		if (e->max > m->max)
			m->max = e->max;
		for (b = 0; b < r.nr_buckets && b < PEA_AGG_LINEAR_MAX + 2; b++)
			m->buckets[b] += e->buckets[b];
	}
	return 0;
}

/* The log2 bucket of v >= 0: 1 for 0, else 2 + ilog2(v). */
static inline int pt_log2_bucket(__u64 v)
{
	int b = 1;

	while (v) {
		b++;
		v >>= 1;
	}
	return b;
}

#endif /* _PT_AGG_H */
