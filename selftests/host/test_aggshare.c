// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): the tool's side of tables in the kernel
 * (tools/pea/aggregate.c) against a fake ioctl() that answers as
 * module/pea_agg.c would:
 *   - --count-by probe and --count-by comm of two probes: one table,
 *     created on probe 0's link (keys probe, comm; no records), which
 *     probe 1's link shares (PEA_LINK_IOC_AGG_SHARE with probe 0's fd);
 *     entries of several CPUs and both probes read once from probe 0's
 *     link and split: the probe table per probe, each probe's comm table
 *     its own entries, a dropped hit as the probe table's other; the
 *     header says complete;
 *   - a probe that cannot join the shared table is the session's error;
 *   - --count-by filename (a 64-byte string fetch): a wide table
 *     (PEA_AGG_F_WIDE_KEY, key_fetch_size 64), whose struct
 *     pea_agg_entry_wide entries are read after their 16-word key: the
 *     whole string, a truncated one marked, a failed fetch's row;
 *   - --count-by comm,filename: a list with a fetch, comm then the fetch
 *     part in the same wide key.
 * TAP on stdout.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include "pea_tool.h"
#include "probe_kind.h"
#include "kfetch.h"
#include "aggregate.h"

#define HOST_TAP_NAME "aggshare"
#include "host_tap.h"

/* ---- the fake kernel ---- */

static struct pea_agg_attr created[4];
static int created_fd[4], ncreated;
static int shared_fd[4], shared_to[4], nshared;
static int share_errno;
static unsigned char entries[65536];
static __u32 nentries, entry_size;
static __u64 e_hits, e_dropped;
static int reads, read_other_fd;

int ioctl(int fd, unsigned long cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (cmd == PEA_LINK_IOC_AGG_CREATE) {
		created[ncreated] = *(struct pea_agg_attr *)arg;
		created_fd[ncreated++] = fd;
		return 0;
	}
	if (cmd == PEA_LINK_IOC_AGG_SHARE) {
		if (share_errno) {
			errno = share_errno;
			return -1;
		}
		shared_fd[nshared] = fd;
		shared_to[nshared++] = (int)(long)arg;
		return 0;
	}
	if (cmd == PEA_LINK_IOC_AGG_READ) {
		struct pea_agg_read *r = arg;

		reads++;
		if (fd != 10)
			read_other_fd++;
		r->nr_entries = nentries;
		r->entry_size = entry_size;
		r->nr_buckets = 0;
		r->hits = e_hits;
		r->dropped = e_dropped;
		r->errors = 0;
		r->stacks_size = 0;
		r->nr_stacks = 0;
		r->unpaired = 0;
		if ((__u64)nentries * entry_size > r->buf_len) {
			errno = ENOSPC;
			return -1;
		}
		memcpy((void *)(uintptr_t)r->buf, entries,
		       (size_t)nentries * entry_size);
		/* Read once: a second read finds it cleared. */
		nentries = 0;
		e_hits = e_dropped = 0;
		return 0;
	}
	errno = ENOTTY;
	return -1;
}

/* Append an entry: @kw key words from @key, then the fields. */
static void entry(const __u64 *key, __u32 kw, __u32 cpu, __u64 count)
{
	unsigned char *p = entries + (size_t)nentries * entry_size;
	struct pea_agg_entry *f;

	memset(p, 0, entry_size);
	memcpy(p, key, kw * 8);
	/* The fields sit where struct pea_agg_entry has them after its key. */
	f = (void *)(p + (kw - PEA_AGG_KEY_WORDS) * 8);
	f->cpu = cpu;
	f->count = count;
	nentries++;
	e_hits += count;
}

/* ---- the probes ---- */

static struct trace_fmt fmt[2];
static const struct trace_fmt *probes[2] = { &fmt[0], &fmt[1] };
static struct kfetch fetches[1];
static char out[65536];

static size_t print(struct agg *a)
{
	FILE *f = fmemopen(out, sizeof(out) - 1, "w");
	size_t n;

	agg_print(a, f, 0, 0);
	n = ftell(f);
	fclose(f);
	out[n] = 0;
	return n;
}

static void show(void)
{
	if (failed)
		printf("# %s\n", out);
}

static void reset(void)
{
	ncreated = nshared = share_errno = reads = read_other_fd = 0;
	nentries = 0;
	e_hits = e_dropped = 0;
	memset(created, 0, sizeof(created));
}

static void test_shared(void)
{
	struct agg_opts o;
	struct agg *a = NULL;
	__u64 k[PEA_AGG_KEY_WORDS];
	int rc;

	reset();
	memset(&o, 0, sizeof(o));
	o.count[0] = "probe";
	o.count[1] = "comm";
	o.count_probe[0] = o.count_probe[1] = -1;
	o.ncount = 2;
	o.top = 10;
	o.max_keys = 100;
	o.json = true;
	rc = agg_new(&a, &o, probes, 2);
	ok(rc == 0 && a, "agg_new: two probes, --count-by probe --count-by comm (%d)",
	   rc);
	if (!a)
		return;
	ok(agg_kernel(a, 0, 10, true) == 0 && ncreated == 1 &&
	   created_fd[0] == 10 &&
	   created[0].keys[0] == PEA_AGG_KEY_PROBE &&
	   created[0].keys[1] == PEA_AGG_KEY_COMM &&
	   created[0].keys[2] == PEA_AGG_KEY_NONE &&
	   created[0].flags == PEA_AGG_F_NO_RECORDS &&
	   created[0].max_keys == 100,
	   "probe 0's link: a table keyed by probe and comm, no records");
	ok(!agg_kernel_needed(a, 0) && agg_kernel_needed(a, 1),
	   "probe 1 must join: its failure would be the session's");
	ok(agg_kernel(a, 1, 11, true) == 0 && ncreated == 1 && nshared == 1 &&
	   shared_fd[0] == 11 && shared_to[0] == 10,
	   "probe 1's link shares it (PEA_LINK_IOC_AGG_SHARE with fd 10), no table of its own");
	entry_size = sizeof(struct pea_agg_entry);
	memset(k, 0, sizeof(k));
	k[0] = 1;		/* probe 0's records carry id 1 */
	memcpy(&k[1], "alpha", 5);
	entry(k, PEA_AGG_KEY_WORDS, 0, 3);
	entry(k, PEA_AGG_KEY_WORDS, 1, 2);
	memset(k, 0, sizeof(k));
	k[0] = 2;
	memcpy(&k[1], "beta", 4);
	entry(k, PEA_AGG_KEY_WORDS, 1, 7);
	e_dropped = 1;
	e_hits += 1;
	print(a);
	/* The first read finds no room (ENOSPC), the second reads it. */
	ok(reads == 2 && !read_other_fd,
	   "the shared table read through probe 0's link only (%d reads, %d of other fds)",
	   reads, read_other_fd);
	ok(strstr(out, "{\"type\":\"count\",\"probe\":\"all probes\",\"by\":\"probe\",\"source\":\"context\",\"complete\":true,\"in_kernel\":true,\"count\":13,\"keys\":2,\"rows\":[{\"key\":\"kprobe:b\",\"count\":7},{\"key\":\"kprobe:a\",\"count\":5}],\"rest\":{\"keys\":0,\"count\":0},\"other\":1,") != NULL,
	   "the probe table: kprobe:a 5 (two CPUs), kprobe:b 7, the dropped hit as other, complete");
	ok(strstr(out, "{\"type\":\"count\",\"probe\":\"kprobe:a\",\"by\":\"comm\",\"source\":\"context\",\"complete\":true,\"in_kernel\":true,\"count\":5,\"keys\":1,\"rows\":[{\"key\":\"alpha\",\"count\":5}]") != NULL,
	   "probe 0's comm table: its own entries, alpha 5");
	ok(strstr(out, "{\"type\":\"count\",\"probe\":\"kprobe:b\",\"by\":\"comm\",\"source\":\"context\",\"complete\":true,\"in_kernel\":true,\"count\":7,\"keys\":1,\"rows\":[{\"key\":\"beta\",\"count\":7}]") != NULL,
	   "probe 1's comm table: its own entries, beta 7");
	show();
	agg_kernel_detach(a, 0);
	agg_kernel_detach(a, 1);
	agg_free(a);

	/* A probe that cannot join. */
	reset();
	rc = agg_new(&a, &o, probes, 2);
	share_errno = EINVAL;
	ok(rc == 0 && agg_kernel(a, 0, 10, true) == 0 &&
	   agg_kernel(a, 1, 11, true) == -EINVAL && agg_kernel_needed(a, 1),
	   "probe 1 refused (EINVAL): agg_kernel() fails and the session must stop");
	agg_free(a);

	/* One probe: no shared table, --count-by probe from the records. */
	reset();
	rc = agg_new(&a, &o, probes, 1);
	ok(rc == 0 && agg_kernel(a, 0, 10, true) == 0 && ncreated == 1 &&
	   created[0].keys[0] == PEA_AGG_KEY_COMM &&
	   created[0].keys[1] == PEA_AGG_KEY_NONE && !(created[0].flags & PEA_AGG_F_NO_RECORDS),
	   "one probe: its own table of comm, records kept for --count-by probe");
	agg_free(a);
}

static void test_wide(void)
{
	struct agg_opts o;
	struct agg *a = NULL;
	__u64 k[PEA_AGG_WIDE_KEY_WORDS];
	char s64[65];
	int rc, i;

	reset();
	for (i = 0; i < 64; i++)
		s64[i] = 'a' + i % 26;
	s64[64] = 0;
	memset(&o, 0, sizeof(o));
	o.count[0] = "filename";
	o.count_probe[0] = -1;
	o.ncount = 1;
	o.top = 10;
	o.max_keys = 100;
	o.json = true;
	rc = agg_new(&a, &o, probes, 1);
	ok(rc == 0 && a && agg_kernel(a, 0, 10, true) == 0 && ncreated == 1 &&
	   created[0].keys[0] == PEA_AGG_KEY_FETCH &&
	   created[0].key_fetch == 0 && created[0].key_fetch_size == 64 &&
	   (created[0].flags & PEA_AGG_F_WIDE_KEY) &&
	   (created[0].flags & PEA_AGG_F_NO_RECORDS),
	   "--count-by filename (64 bytes): a wide kernel table, key_fetch_size 64");
	if (!a)
		return;
	entry_size = sizeof(struct pea_agg_entry_wide);
	memset(k, 0, sizeof(k));
	k[0] = PEA_FETCH_OK | 13ULL << 16;
	memcpy(&k[1], "/tmp/pea-file", 13);
	entry(k, PEA_AGG_WIDE_KEY_WORDS, 0, 4);
	memset(k, 0, sizeof(k));
	k[0] = PEA_FETCH_TRUNCATED | 64ULL << 16;
	memcpy(&k[1], s64, 64);
	entry(k, PEA_AGG_WIDE_KEY_WORDS, 1, 2);
	memset(k, 0, sizeof(k));
	k[0] = PEA_FETCH_FAULT | 1ULL << 8;
	entry(k, PEA_AGG_WIDE_KEY_WORDS, 1, 1);
	print(a);
	ok(strstr(out, "\"complete\":true,\"in_kernel\":true,\"count\":7,\"keys\":3,\"rows\":[{\"key\":\"/tmp/pea-file\",\"count\":4},{\"key\":{\"str\":\"") != NULL &&
	   strstr(out, s64) && strstr(out, "\",\"truncated\":true},\"count\":2},{\"key\":{\"fault\":1},\"count\":1}]"),
	   "wide entries read after their 16-word key: the path 4, the 64 bytes cut and marked 2, (fault@1) 1");
	show();
	agg_free(a);

	/* comm and the string: 2 + 9 words. */
	reset();
	o.count[0] = "comm,filename";
	rc = agg_new(&a, &o, probes, 1);
	ok(rc == 0 && a && agg_kernel(a, 0, 10, true) == 0 &&
	   created[0].keys[0] == PEA_AGG_KEY_COMM &&
	   created[0].keys[1] == PEA_AGG_KEY_FETCH &&
	   created[0].key_fetch_size == 64 &&
	   (created[0].flags & PEA_AGG_F_WIDE_KEY),
	   "--count-by comm,filename: one wide kernel key, comm then the fetch");
	if (!a)
		return;
	entry_size = sizeof(struct pea_agg_entry_wide);
	memset(k, 0, sizeof(k));
	memcpy(&k[0], "cat", 3);
	k[2] = PEA_FETCH_OK | 13ULL << 16;
	memcpy(&k[3], "/tmp/pea-file", 13);
	entry(k, PEA_AGG_WIDE_KEY_WORDS, 0, 5);
	print(a);
	ok(strstr(out, "\"rows\":[{\"key\":[\"cat\",\"/tmp/pea-file\"],\"count\":5}]") != NULL &&
	   strstr(out, "\"complete\":true,\"in_kernel\":true"),
	   "the list's row: [\"cat\",\"/tmp/pea-file\"] 5, complete");
	show();
	agg_free(a);
}

int main(void)
{
	struct kfetch *k = &fetches[0];

	snprintf(k->expr, sizeof(k->expr), "filename");
	k->f.type = PEA_FETCH_STR;
	k->f.size = 64;
	k->str = true;
	k->type.cls = KT_CHAR_PTR;
	k->type.size = 8;
	snprintf(k->type.name, sizeof(k->type.name), "const char *");
	fmt[0].probe = "kprobe:a";
	fmt[0].kind = &kprobe_kind;
	fmt[0].args = true;
	fmt[0].fetches = fetches;
	fmt[0].nfetches = 1;
	fmt[1].probe = "kprobe:b";
	fmt[1].kind = &kprobe_kind;
	fmt[1].args = true;
	test_shared();
	test_wide();
	return host_tap_done();
}
