// SPDX-License-Identifier: GPL-2.0
/*
 * Context payload append (PEA_F_CTXLEN_MASK): pea_skb_output() and
 * pea_output_ctx(). Records hold the metadata then the context bytes,
 * byte for byte, with the raw size and zeroed padding of
 * bpf_event_output(); errors in bpf_skb_event_output()'s order; the
 * record limit on metadata and context together; exact accounting.
 */
#include "pea_test.h"

#define MAP "ctxlen"

static unsigned char meta[65536];
static unsigned char rec[65536];

/* The kernel has networking (CONFIG_NET), hence pea_skb_output(). */
static int have_net;

static __u64 ctxlen(__u64 n)
{
	return n << 32;
}

/* Write with the test module; returns the last call's return value. */
static long ctx_out(struct pea_st_ctx_output *a, __u32 kind, __u64 flags,
		    __u64 meta_size, __u32 len)
{
	struct pea_st_ctx_output b = *a;

	strcpy(b.map, MAP);
	b.kind = kind;
	b.flags = flags;
	b.meta = (uintptr_t)meta;
	b.meta_size = meta_size;
	b.len = len;
	if (!b.count)
		b.count = 1;
	if (ioctl(pt_st(), PEA_ST_IOC_CTX_OUTPUT, &b))
		return -1000 - errno;
	*a = b;
	return b.ret;
}

/*
 * The next record is a sample of @msize metadata bytes then @clen context
 * bytes (zeroes from @zero_from on), raw size padded, padding zero.
 */
static bool rec_ok(struct pt_ring *r, __u32 msize, __u32 clen,
		   __u32 zero_from)
{
	__u32 want = (12 + msize + clen + 7) & ~7U, raw, i;
	struct perf_event_header *h = (void *)rec;
	size_t got = pt_ring_next(r, rec);
	unsigned char *p = rec + 12;

	if (got != want || h->type != PERF_RECORD_SAMPLE) {
		pt_diag("record size %zu, want %u", got, want);
		return false;
	}
	memcpy(&raw, rec + 8, 4);
	if (raw != want - 12) {
		pt_diag("raw size %u, want %u", raw, want - 12);
		return false;
	}
	if (memcmp(p, meta, msize)) {
		pt_diag("metadata differs");
		return false;
	}
	for (i = 0; i < clen; i++) {
		__u8 b = i < zero_from ? pea_st_ctx_byte(i) : 0;

		if (p[msize + i] != b) {
			pt_diag("context byte %u is %#x, want %#x", i,
				p[msize + i], b);
			return false;
		}
	}
	for (i = msize + clen; i < raw; i++)
		if (p[i]) {
			pt_diag("padding byte %u is %#x", i, p[i]);
			return false;
		}
	return true;
}

struct fixture {
	int map, ev;
	struct pt_ring r;
};

static void fx_open(struct fixture *f, int pages)
{
	int ncpu = pt_nr_cpus();

	f->map = pt_map_create(MAP, ncpu, 0);
	f->ev = pt_event_open(0, PERF_SAMPLE_RAW);
	pt_map_update(f->map, 0, f->ev);
	if (ncpu > 1) {
		int ev1 = pt_event_open(1, PERF_SAMPLE_RAW);

		pt_map_update(f->map, 1, ev1);
		close(ev1);
	}
	if (pt_ring_map(&f->r, f->ev, pages, PROT_READ | PROT_WRITE))
		pt_fatal("mmap");
}

static void fx_close(struct fixture *f)
{
	pt_ring_unmap(&f->r);
	close(f->ev);
	close(f->map);
}

/* Lengths 0, 1, odd, one short of, exactly and past the skb. */
static void test_skb(const char *what, __u32 kind, __u32 len, __u32 headlen,
		     __u32 frag_size, __u32 want_frags)
{
	__u32 mid = headlen + 1 <= len ? headlen + 1 : len / 2;
	__u32 lens[] = { 0, 1, 7, mid, len - 1, len };
	struct pea_st_ctx_output a = { .headlen = headlen,
				       .frag_size = frag_size };
	struct fixture f;
	unsigned int i, good = 0;
	__u32 msize = 12;

	fx_open(&f, 4);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		msize = 12 + i;		/* odd and even metadata sizes */
		if (ctx_out(&a, kind, ctxlen(lens[i]), msize, len) == 0 &&
		    rec_ok(&f.r, msize, lens[i], ~0U))
			good++;
		else
			pt_diag("%s: ctx_len %u failed", what, lens[i]);
	}
	PT_EQ(a.nr_frags, want_frags, "%s: the skb has %u paged fragments",
	      what, want_frags);
	PT_EQ(a.data_len, len - headlen, "%s: skb->data_len %u", what,
	      len - headlen);
	PT_EQ(good, i, "%s (len %u): ctx_len 0, 1, 7, %u, %u, %u: metadata "
	      "then packet bytes, raw size and padding exact", what, len,
	      mid, len - 1, len);
	PT_EQ(ctx_out(&a, kind, ctxlen(len + 1), msize, len), -EFAULT,
	      "%s: ctx_len skb->len + 1 gives EFAULT", what);
	PT_EQ(ctx_out(&a, kind, ctxlen(0xfffff), msize, len), -EFAULT,
	      "%s: ctx_len 0xfffff gives EFAULT", what);
	PT_EQ(pt_head(&f.r), f.r.pg->data_tail,
	      "%s: the refused calls wrote nothing", what);
	fx_close(&f);
}

static void test_errnos(void)
{
	int ncpu = pt_nr_cpus();
	__u32 k = have_net ? PEA_ST_SKB_LINEAR : PEA_ST_CTX_COPY;
	const char *kn = have_net ? "skb" : "ctx";
	struct pea_st_ctx_output a = { 0 };
	struct fixture f;
	int map = pt_map_create(MAP, 1, 0);

	PT_EQ(ctx_out(&a, k, ctxlen(4), 8, 16), -ENOENT,
	      "%s: an empty slot gives ENOENT", kn);
	PT_EQ(ctx_out(&a, k, ctxlen(4) | 1, 8, 16), -E2BIG,
	      "%s: index == max_entries gives E2BIG", kn);
	PT_EQ(ctx_out(&a, k, ctxlen(4) | (1ULL << 63), 8, 16),
	      -EINVAL, "%s: bit 63 gives EINVAL", kn);
	PT_EQ(ctx_out(&a, PEA_ST_CTX_COPY, ctxlen(4) | (1ULL << 52), 8, 16),
	      -EINVAL, "ctx: bit 52 gives EINVAL");
	if (have_net) {
		PT_EQ(ctx_out(&a, k, ctxlen(17) | 1, 8, 16), -EFAULT,
		      "skb: EFAULT (ctx past the skb) comes before the index's E2BIG");
		PT_EQ(ctx_out(&a, k, ctxlen(17) | (1ULL << 52), 8, 16),
		      -EINVAL, "skb: bit 52 gives EINVAL, before EFAULT");
		PT_EQ(ctx_out(&a, PEA_ST_SKB_NULL, ctxlen(0), 8, 0), -EFAULT,
		      "skb: a NULL skb gives EFAULT, even with ctx_len 0");
	}
	PT_EQ(ctx_out(&a, PEA_ST_CTX_NULL, ctxlen(4), 8, 0), -EFAULT,
	      "ctx: a NULL context with ctx_len 4 gives EFAULT");
	close(map);

	fx_open(&f, 16);
	PT_EQ(ctx_out(&a, PEA_ST_CTX_NULL, ctxlen(0), 8, 0), 0,
	      "ctx: a NULL context with ctx_len 0 is valid");
	PT_OK(rec_ok(&f.r, 8, 0, ~0U), "ctx: ... and writes the data alone");
	PT_EQ(pt_output(MAP, ctxlen(1), meta, 8), -EINVAL,
	      "pea_output: still refuses a CTXLEN bit with EINVAL");
	if (ncpu > 1)
		PT_EQ(ctx_out(&a, k, ctxlen(4) | 1, 8, 16), -EOPNOTSUPP,
		      "%s: another CPU's event gives EOPNOTSUPP", kn);
	else
		PT_OK(0, "the guest has more than one CPU");

	/* The record limit applies to metadata and context together. */
	a.headlen = 10;
	a.frag_size = 1000;
	k = have_net ? PEA_ST_SKB_PAGED : PEA_ST_CTX_COPY;
	PT_EQ(ctx_out(&a, k, ctxlen(3010), 65516 - 3010, 3010), 0,
	      "%s: metadata 62506 + ctx 3010 = 65516 bytes fits", kn);
	PT_OK(rec_ok(&f.r, 65516 - 3010, 3010, ~0U),
	      "%s: ... the 65528-byte record is exact", kn);
	PT_EQ(ctx_out(&a, k, ctxlen(3010), 65517 - 3010, 3010), -E2BIG,
	      "%s: metadata 62507 + ctx 3010 gives E2BIG", kn);
	PT_EQ(ctx_out(&a, k, ctxlen(4), ~0ULL - 1, 16), -E2BIG,
	      "%s: metadata size 2^64 - 2 + ctx 4 (wrapping) gives E2BIG", kn);
	PT_EQ(ctx_out(&a, PEA_ST_CTX_COPY, ctxlen(0xfffff), 0, 0xfffff), -E2BIG,
	      "ctx: ctx_len 0xfffff gives E2BIG");
	PT_EQ(ctx_out(&a, PEA_ST_CTX_COPY, ctxlen(65516), 0, 65516), 0,
	      "ctx: ctx_len 65516 alone fits");
	PT_OK(rec_ok(&f.r, 0, 65516, ~0U), "ctx: ... bytes exact");
	PT_EQ(ctx_out(&a, PEA_ST_CTX_COPY, ctxlen(65517), 0, 65517), -E2BIG,
	      "ctx: ctx_len 65517 gives E2BIG");
	PT_EQ(pt_head(&f.r), f.r.pg->data_tail, "nothing else was written");
	fx_close(&f);
}

static void test_generic(void)
{
	struct pea_st_ctx_output a = { 0 };
	struct fixture f;

	fx_open(&f, 4);
	PT_EQ(ctx_out(&a, PEA_ST_CTX_COPY, ctxlen(301), 20, 400), 0,
	      "ctx: 20 bytes of data + 301 of a 400-byte context");
	PT_OK(rec_ok(&f.r, 20, 301, ~0U), "ctx: bytes, raw size, padding exact");
	PT_OK(a.copies == 1 && a.copy_off == 0 && a.copy_len == 301,
	      "ctx: the callback ran once, offset 0, length 301 (%u, %llu, %llu)",
	      a.copies, (unsigned long long)a.copy_off,
	      (unsigned long long)a.copy_len);
	PT_EQ(ctx_out(&a, PEA_ST_CTX_COPY, ctxlen(0), 20, 400), 0,
	      "ctx: ctx_len 0");
	PT_OK(rec_ok(&f.r, 20, 0, ~0U) && a.copies == 0,
	      "ctx: ctx_len 0 writes the data alone, no callback");
	PT_EQ(ctx_out(&a, PEA_ST_CTX_MEMCPY, ctxlen(33), 3, 40), 0,
	      "ctx: no callback (plain memory)");
	PT_OK(rec_ok(&f.r, 3, 33, ~0U), "ctx: plain memory bytes exact");
	a.short_at = 5;
	PT_EQ(ctx_out(&a, PEA_ST_CTX_SHORT, ctxlen(40), 8, 64), 0,
	      "ctx: a callback that copies 5 of 40 bytes still writes (as Linux)");
	PT_OK(rec_ok(&f.r, 8, 40, 5),
	      "ctx: ... the 35 bytes it did not copy are zero");
	a.short_at = 0;
	PT_EQ(ctx_out(&a, PEA_ST_CTX_SHORT, ctxlen(1), 0, 1), 0,
	      "ctx: a callback that copies nothing of 1 byte");
	PT_OK(rec_ok(&f.r, 0, 1, 0), "ctx: ... the byte is zero");
	PT_EQ(pt_head(&f.r), f.r.pg->data_tail, "ctx: nothing else was written");
	fx_close(&f);
}

/* received + lost == attempted, with records that fill the ring. */
static void test_accounting(void)
{
	struct pea_st_ctx_output a = { .headlen = 50, .frag_size = 333 };
	struct pea_event_stats st;
	struct fixture f;
	__u32 rec_size = (12 + 24 + 997 + 7) & ~7U;
	unsigned int i, good = 0;
	__u32 n_ok;
	long ret;

	__u32 k = have_net ? PEA_ST_SKB_PAGED : PEA_ST_CTX_COPY;

	fx_open(&f, 1);
	a.count = 100;
	ret = ctx_out(&a, k, ctxlen(997), 24, 1000);
	PT_EQ(ret, -ENOSPC, "full ring: the last of 100 calls gives ENOSPC");
	PT_EQ(a.n_ok, (__u32)(f.r.size / rec_size),
	      "full ring: %zu records of %u bytes fit", f.r.size / rec_size,
	      rec_size);
	n_ok = a.n_ok;
	for (i = 0; i < n_ok; i++)
		good += rec_ok(&f.r, 24, 997, ~0U);
	PT_EQ(good, n_ok, "full ring: every written record is exact");
	PT_EQ(pt_head(&f.r), f.r.pg->data_tail, "full ring: nothing more");
	ioctl(f.ev, PEA_EVENT_IOC_STATS, &st);
	PT_EQ(st.records + st.lost, 100, "stats: records + lost == 100 attempts");
	PT_EQ(st.records, a.n_ok, "stats: records == successful calls");
	PT_EQ(st.bytes, (__u64)a.n_ok * rec_size, "stats: bytes exact");
	a.count = 1;
	PT_EQ(ctx_out(&a, k, ctxlen(5), 24, 1000), 0,
	      "after draining: output succeeds");
	PT_OK(pt_ring_next(&f.r, rec) == 24 &&
	      ((struct perf_event_header *)rec)->type == PERF_RECORD_LOST &&
	      ((__u64 *)rec)[2] == 100 - n_ok,
	      "after draining: PERF_RECORD_LOST reports the %u drops",
	      100 - n_ok);
	PT_OK(rec_ok(&f.r, 24, 5, ~0U), "after draining: then the record");
	fx_close(&f);
}

/* The same writes from an NMI on the calling CPU. */
static void test_nmi(void)
{
	struct pea_st_ctx_output a = { .headlen = 40, .frag_size = 700,
				       .nmi = 1, .count = 3 };
	struct fixture f;
	unsigned int i, good = 0;

	__u32 k = have_net ? PEA_ST_SKB_PAGED : PEA_ST_CTX_COPY;

	fx_open(&f, 4);
	PT_EQ(ctx_out(&a, k, ctxlen(2501), 13, 2501), 0,
	      "NMI: %s of 2501 context bytes, 3 times",
	      have_net ? "pea_skb_output() of a whole paged skb" :
	      "pea_output_ctx()");
	PT_OK(a.in_nmi && a.n_ok == 3 && a.cpu == 0,
	      "NMI: the calls ran in an NMI on CPU 0, all succeeded");
	for (i = 0; i < 3; i++)
		good += rec_ok(&f.r, 13, 2501, ~0U);
	PT_EQ(good, 3, "NMI: the 3 records are exact");
	a.count = 1;
	PT_EQ(ctx_out(&a, PEA_ST_CTX_COPY, ctxlen(77), 5, 100), 0,
	      "NMI: pea_output_ctx() with a copy callback");
	PT_OK(a.in_nmi && a.copies == 1 && rec_ok(&f.r, 5, 77, ~0U),
	      "NMI: one callback, the record is exact");
	if (have_net)
		PT_EQ(ctx_out(&a, k, ctxlen(2502), 13, 2501), -EFAULT,
		      "NMI: ctx_len past the skb gives EFAULT");
	PT_EQ(pt_head(&f.r), f.r.pg->data_tail, "NMI: nothing else was written");
	fx_close(&f);
}

int main(void)
{
	struct pea_st_ctx_output probe = { 0 };
	unsigned int i;

	for (i = 0; i < sizeof(meta); i++)
		meta[i] = (unsigned char)(i * 7 + 1);
	pt_pin(0);
	pt_setup(64);
	/* The module refuses socket buffers on a kernel without networking. */
	if (ctx_out(&probe, PEA_ST_SKB_NULL, 0, 0, 0) == -1000 - EOPNOTSUPP) {
		pt_diag("a kernel without CONFIG_NET: no pea_skb_output(), "
			"contexts through pea_output_ctx() only");
	} else {
		have_net = 1;
		test_skb("linear skb", PEA_ST_SKB_LINEAR, 101, 101, 0, 0);
		test_skb("paged skb", PEA_ST_SKB_PAGED, 2501, 40, 700, 4);
		test_skb("skb all in frags", PEA_ST_SKB_PAGED, 1537, 0, 512, 4);
	}
	test_errnos();
	test_generic();
	test_accounting();
	test_nmi();
	return pt_done();
}
