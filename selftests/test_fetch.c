// SPDX-License-Identifier: GPL-2.0
/*
 * Fetch chains (struct pea_fetch) on kprobes, kretprobes, uprobes and
 * uretprobes: every value's exact bytes, length and status for a test
 * module function with known arguments (integers of each width and sign,
 * pointers followed through a struct, kernel and user strings, a byte
 * array), a NULL and a non-canonical pointer marked at the failing read
 * with the hit kept, the record's layout with a capture and a stack, the
 * bounds' and the malformed descriptors' errnos, the attr sizes of older
 * binaries, the privilege of kernel reads, and predicates on the fetched
 * values (each operator, AND, OR, NOT, strings and globs, signed and
 * unsigned, faulted values) with exact written and filtered counts and
 * their errnos; context values (PEA_FETCH_BASE_CTX: comm, ids, cgroup,
 * CPU) of a child with known ones, a predicate on them, their errnos and
 * their privilege.
 */
#include <fcntl.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_maps.h"
#include "pt_fetch.h"
#include "pt_perm.h"
#include "pt_quota.h"

#define NCPU_MAX	64
#define FO(f)		((__s32)offsetof(struct pea_st_fobj, f))

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];

/* One record of this process, its fetch block copied out. */
struct got {
	struct pea_probe_record r;
	__u32 size;			/* the raw record's bytes */
	__u32 block_off;		/* where the block starts in it */
	unsigned char raw[8192];	/* the raw record */
	struct pea_fetch_block *b;	/* in @raw, or NULL */
};

static struct got g;

/* The next record of process @tgid on @cpu into g; false if none. */
static bool next_rec_of(int cpu, pid_t tgid)
{
	struct perf_event_header *h = (void *)rec;
	struct pea_probe_record *r;
	__u32 raw;

	while (pt_ring_next(&rings[cpu], rec)) {
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		memcpy(&raw, rec + 8, 4);
		r = (void *)(rec + 12);
		if (r->tgid != (__u32)tgid)
			continue;
		memset(&g, 0, sizeof(g));
		memcpy(&g.r, r, sizeof(g.r));
		g.size = raw < sizeof(g.raw) ? raw : sizeof(g.raw);
		memcpy(g.raw, r, g.size);
		if (g.r.flags & PEA_REC_F_FETCH) {
			__u32 off = sizeof(*r) + g.r.capture_len;

			if (g.r.flags & PEA_REC_F_COUNTERS)
				off += sizeof(struct pea_event_value);
			g.block_off = (off + 7) & ~7U;
			g.b = (void *)(g.raw + g.block_off);
		}
		return true;
	}
	return false;
}

/* The next record of this process on @cpu. */
static bool next_rec(int cpu)
{
	return next_rec_of(cpu, getpid());
}

static int attach(struct pea_probe_attr *a)
{
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, a);

	return fd < 0 ? -errno : fd;
}

static int call_target(const char *ustr, __s64 n, __u32 count, __s64 *ret)
{
	struct pea_st_fetch f = {
		.ustr = (uintptr_t)ustr, .n = n, .count = count,
	};

	if (ioctl(pt_st(), PEA_ST_IOC_FETCH, &f))
		return -errno;
	if (ret)
		*ret = f.ret;
	return 0;
}

static const struct pea_fetch_value *val(int i)
{
	return &g.b->values[i];
}

static const unsigned char *vbytes(int i)
{
	return (unsigned char *)g.b + g.b->values[i].offset;
}

/* Value @i is OK with exactly @len bytes equal to @want. */
static void expect_bytes(int i, const void *want, __u16 len, __u8 status,
			 const char *what)
{
	const struct pea_fetch_value *v = val(i);

	PT_OK(v->status == status && v->len == len && v->step == 0 &&
	      v->reserved == 0 && v->offset % 8 == 0 &&
	      !memcmp(vbytes(i), want, len),
	      "%s: status %u len %u bytes exact (got status %u len %u)",
	      what, status, len, v->status, v->len);
}

static void expect_fault(int i, __u8 step, const char *what)
{
	const struct pea_fetch_value *v = val(i);

	PT_OK(v->status == PEA_FETCH_FAULT && v->step == step && v->len == 0,
	      "%s: marked PEA_FETCH_FAULT at read %u (got status %u step %u len %u)",
	      what, step, v->status, v->step, v->len);
}

/* Every byte of the block past each value up to its 8-byte end is 0. */
static void expect_padding(const char *what)
{
	__u32 i, j, end;
	bool ok = g.b->reserved == 0 && g.b->size % 8 == 0;

	for (i = 0; i < g.b->nr; i++) {
		end = (val(i)->len + 7) & ~7U;
		for (j = val(i)->len; j < end; j++)
			ok = ok && vbytes(i)[j] == 0;
		if (i + 1 < g.b->nr)
			ok = ok && val(i + 1)->offset == val(i)->offset + end;
	}
	PT_OK(ok, "%s: values packed at 8-byte boundaries, padding zero", what);
}

static void test_kprobe(void)
{
	static const char ustr[] = "user-path-xyz";
	struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target", 0);
	struct pea_fetch f[8];
	__u64 magic = PEA_ST_FETCH_MAGIC;
	__s32 neg = -5;
	__u8 bytes[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	int link, cpu = 1 % ncpu;
	__u32 want_size;

	f[0] = pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_U64, 0, PEA_FETCH_F_LOAD);
	f[1] = pt_at(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_S32, 0,
			   PEA_FETCH_F_LOAD), FO(neg));
	f[2] = pt_at(pt_deref(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_STR, 16, 0),
			      FO(next)), FO(name));
	f[3] = pt_fx(PEA_FETCH_BASE_ARG, 1, PEA_FETCH_STR, 32, 0);
	f[4] = pt_fx(PEA_FETCH_BASE_ARG, 2, PEA_FETCH_STR, 5, 0);
	f[5] = pt_deref(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_U32, 0,
			      PEA_FETCH_F_LOAD), FO(null));
	f[6] = pt_deref(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_STR, 64, 0), FO(bad));
	f[7] = pt_at(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_ARRAY, 8, 0), FO(bytes));
	a.fetches = (uintptr_t)f;
	a.nr_fetches = 8;
	a.filter_tgid = getpid();
	/* A capture too: the block follows it at an 8-byte boundary. */
	a.capture_arg = 1;
	a.capture_mode = PEA_CAPTURE_STR;
	a.capture_len = 64;
	link = attach(&a);
	PT_OK(link >= 0, "kprobe:pea_st_fetch_target with 8 fetches attaches (%d)",
	      link);
	if (link < 0)
		return;
	pt_pin(cpu);
	pt_rings_drain(rings, ncpu);
	PT_EQ(call_target(ustr, 42, 1, NULL), 0, "PEA_ST_IOC_FETCH");
	PT_OK(next_rec(cpu), "kprobe: the call left a record");
	if (!g.b) {
		PT_OK(0, "kprobe: the record has PEA_REC_F_FETCH (flags 0x%x)",
		      g.r.flags);
		goto out;
	}
	PT_EQ(g.r.flags, PEA_REC_F_FETCH | PEA_REC_F_CAPTURE,
	      "kprobe: flags FETCH and CAPTURE only");
	PT_EQ(g.r.capture_len, 13, "kprobe: the capture is the kernel string");
	PT_EQ(g.block_off, 136, "kprobe: the block at ALIGN(120 + 13, 8)");
	PT_OK(g.raw[133] == 0 && g.raw[134] == 0 && g.raw[135] == 0,
	      "kprobe: the bytes between capture and block are zero");
	PT_EQ(g.b->nr, 8, "kprobe: 8 values");
	expect_bytes(0, &magic, 8, PEA_FETCH_OK, "o->magic (u64)");
	expect_bytes(1, &neg, 4, PEA_FETCH_OK, "o->neg (s32)");
	expect_bytes(2, "inner-name", 10, PEA_FETCH_OK,
		     "o->next->name (string)");
	expect_bytes(3, PEA_ST_FETCH_KSTR, 13, PEA_FETCH_OK,
		     "kernel string argument");
	expect_bytes(4, "user-", 5, PEA_FETCH_TRUNCATED,
		     "user string argument, cut at 5");
	expect_fault(5, 1, "*o->null (NULL)");
	expect_fault(6, 1, "o->bad string (non-canonical)");
	expect_bytes(7, bytes, 8, PEA_FETCH_OK, "o->bytes (array of 8)");
	expect_padding("kprobe");
	/* 8 + 8 * 8 header, then 8 + 8 + 16 + 16 + 8 + 0 + 0 + 8 */
	want_size = 72 + 64;
	PT_EQ(g.b->size, want_size, "kprobe: block size exact");
	PT_EQ(g.size, ((g.block_off + want_size + 4 + 7) & ~7U) - 4,
	      "kprobe: the raw record ends with the block (perf padding)");
	PT_OK(!next_rec(cpu), "kprobe: exactly one record");
out:
	close(link);
}

static void test_kretprobe(void)
{
	struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target",
						PEA_PROBE_F_RETPROBE);
	struct pea_fetch f[6];
	__s64 ret = PEA_ST_FETCH_RET, n = 0x0102030405060708LL, got_ret = 0;
	__u16 small = 0x1234;
	__s32 neg = -5;
	__u64 sp;
	int link, cpu = 1 % ncpu;
	struct pea_link_info info;

	f[0] = pt_fx(PEA_FETCH_BASE_RET, 0, PEA_FETCH_S64, 0, 0);
	f[1] = pt_fx(PEA_FETCH_BASE_ARG, 4, PEA_FETCH_U64, 0, 0);
	f[2] = pt_at(pt_deref(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_U16, 0,
				    PEA_FETCH_F_LOAD), FO(next)), FO(small));
	f[3] = pt_fx(PEA_FETCH_BASE_ARG, 5, PEA_FETCH_S32, 0, 0);
	f[4] = pt_fx(PEA_FETCH_BASE_SP, 0, PEA_FETCH_U64, 0, 0);
	f[5] = pt_fx(PEA_FETCH_BASE_ARG, 3, PEA_FETCH_STR, 8, 0);
	a.fetches = (uintptr_t)f;
	a.nr_fetches = 6;
	a.filter_tgid = getpid();
	a.kstack_depth = 4;
	link = attach(&a);
	PT_OK(link >= 0, "kretprobe with 6 fetches and a stack attaches (%d)",
	      link);
	if (link < 0)
		return;
	pt_pin(cpu);
	pt_rings_drain(rings, ncpu);
	PT_EQ(call_target(NULL, n, 3, &got_ret), 0, "PEA_ST_IOC_FETCH x3");
	PT_EQ(got_ret, PEA_ST_FETCH_RET, "the target returned -22");
	PT_OK(next_rec(cpu) && g.b, "kretprobe: a record with fetches");
	if (!g.b)
		goto out;
	PT_EQ(g.r.flags, PEA_REC_F_RETPROBE | PEA_REC_F_FETCH |
	      PEA_REC_F_KSTACK, "kretprobe: flags RETPROBE, FETCH, KSTACK");
	PT_EQ(g.block_off, 120, "kretprobe: the block right after the record");
	expect_bytes(0, &ret, 8, PEA_FETCH_OK, "ret (s64)");
	expect_bytes(1, &n, 8, PEA_FETCH_OK, "arg4 as it is (u64)");
	expect_bytes(2, &small, 2, PEA_FETCH_OK, "o->next->small (u16)");
	expect_bytes(3, &neg, 4, PEA_FETCH_OK, "arg5 cut to s32");
	memcpy(&sp, vbytes(4), 8);
	/* 4- or 5-level paging: the top byte of a kernel address is 0xff. */
	PT_OK(val(4)->status == PEA_FETCH_OK && val(4)->len == 8 &&
	      sp >> 56 == 0xff && sp % 8 == 0,
	      "the stack pointer is an aligned kernel address (0x%llx)",
	      (unsigned long long)sp);
	expect_fault(5, 0, "a string at NULL");
	expect_padding("kretprobe");
	{
		struct pea_kstack ks;
		__u32 koff = (g.block_off + g.b->size + 7) & ~7U;

		memcpy(&ks, g.raw + koff, sizeof(ks));
		PT_OK(ks.nr >= 1 && ks.nr <= 4 && ks.reserved == 0 &&
		      g.size >= koff + sizeof(ks) + ks.nr * 8,
		      "kretprobe: the stack follows the block (%u frames)",
		      ks.nr);
	}
	PT_OK(next_rec(cpu) && g.b && next_rec(cpu) && g.b && !next_rec(cpu),
	      "kretprobe: three calls, three records");
	PT_EQ(ioctl(link, PEA_LINK_IOC_INFO, &info), 0, "link info");
	PT_OK(info.hits == 3 && info.written == 3 && info.errors == 0,
	      "kretprobe: 3 hits, 3 written, no error: a fault fails no hit");
out:
	close(link);
}

/* A kernel address read as user memory (a user bit) faults. */
static void test_user_bit(void)
{
	struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target", 0);
	static const char ustr[] = "ustr";
	struct pea_fetch f[3];
	int link, cpu = 1 % ncpu;

	f[0] = pt_fx(PEA_FETCH_BASE_ARG, 1, PEA_FETCH_STR, 32, 0);
	f[0].user = 1;
	f[1] = pt_fx(PEA_FETCH_BASE_ARG, 2, PEA_FETCH_STR, 32, 0);
	f[1].user = 1;
	/* A kernel pointer read, then a user read through it. */
	f[2] = pt_at(pt_deref(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_U8, 0,
				    PEA_FETCH_F_LOAD), FO(next)), FO(byte));
	f[2].user = 2;
	a.fetches = (uintptr_t)f;
	a.nr_fetches = 3;
	a.filter_tgid = getpid();
	link = attach(&a);
	PT_OK(link >= 0, "kprobe with user-marked reads attaches (%d)", link);
	if (link < 0)
		return;
	pt_pin(cpu);
	pt_rings_drain(rings, ncpu);
	call_target(ustr, 0, 1, NULL);
	PT_OK(next_rec(cpu) && g.b, "user bits: a record");
	if (g.b) {
		expect_fault(0, 0, "a kernel string read as user memory");
		expect_bytes(1, "ustr", 4, PEA_FETCH_OK,
			     "a user string read as user memory");
		expect_fault(2, 1, "a kernel field read as user memory");
	}
	close(link);
}

static int attach_errno(struct pea_probe_attr a)
{
	int fd = attach(&a);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -fd;
}

static void test_errnos(void)
{
	struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target", 0);
	struct pea_fetch f[PEA_FETCH_MAX + 1], good;
	unsigned long cmd;
	int i, fd;

	good = pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_U64, 0, PEA_FETCH_F_LOAD);
	for (i = 0; i <= PEA_FETCH_MAX; i++)
		f[i] = good;
	a.fetches = (uintptr_t)f;
	a.nr_fetches = PEA_FETCH_MAX;
	PT_EQ(attach_errno(a), 0, "PEA_FETCH_MAX fetches attach");
	a.nr_fetches = PEA_FETCH_MAX + 1;
	PT_EQ(attach_errno(a), E2BIG, "PEA_FETCH_MAX + 1 fetches: E2BIG");

	a.nr_fetches = 1;
	f[0] = good;
	for (i = 0; i < PEA_FETCH_DEPTH_MAX; i++)
		f[0] = pt_deref(f[0], 0);
	PT_EQ(attach_errno(a), 0, "PEA_FETCH_DEPTH_MAX pointer reads attach");
	f[0].nr_deref++;
	PT_EQ(attach_errno(a), EINVAL,
	      "one pointer read more: EINVAL (trace_probe's TOO_MANY_OPS)");

	a.nr_fetches = 2;
	f[0] = pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_ARRAY, 1016, 0);
	f[1] = pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_STR, 8, 0);
	PT_EQ(attach_errno(a), 0, "values of PEA_FETCH_DATA_MAX bytes attach");
	f[1].size = 9;
	PT_EQ(attach_errno(a), E2BIG,
	      "values of PEA_FETCH_DATA_MAX + 8 rounded: E2BIG");
	f[0].size = PEA_FETCH_DATA_MAX + 1;
	a.nr_fetches = 1;
	PT_EQ(attach_errno(a), EINVAL, "an array past PEA_FETCH_DATA_MAX: EINVAL");

#define BAD(stmt, what) do {						\
		f[0] = good;						\
		stmt;							\
		PT_EQ(attach_errno(a), EINVAL, what ": EINVAL");	\
	} while (0)
	BAD(f[0].base = 0, "base 0");
	BAD(f[0].base = 4, "base 4");
	BAD(f[0].arg = 6, "argument 6");
	BAD((f[0].base = PEA_FETCH_BASE_SP, f[0].arg = 1), "an argument with SP");
	BAD(f[0].base = PEA_FETCH_BASE_RET, "the return value at a kprobe");
	BAD(f[0].type = 0, "type 0");
	BAD(f[0].type = PEA_FETCH_ARRAY + 1, "type 11");
	BAD(f[0].size = 8, "a size for an integer");
	BAD((f[0].type = PEA_FETCH_STR, f[0].flags = 0), "a string of size 0");
	BAD((f[0].type = PEA_FETCH_STR, f[0].size = 8),
	    "PEA_FETCH_F_LOAD on a string");
	BAD(f[0].flags = 0x80, "an unknown flag");
	BAD(f[0].flags |= PEA_FETCH_F_PTR32, "PEA_FETCH_F_PTR32 at a kprobe");
	BAD(f[0].reserved = 1, "reserved");
	BAD(f[0].offset[1] = 8, "an offset past the reads");
	BAD(f[0].user = 2, "a user bit past the reads");
	BAD((f[0].flags = 0, f[0].user = 1), "a user bit without a read");
	BAD((f[0].flags = 0, f[0].offset[0] = 8),
	    "an offset on a value taken as it is");
	f[0] = good;
	a.reserved2 = 1;
	PT_EQ(attach_errno(a), EINVAL, "attr reserved2: EINVAL");
	a.reserved2 = 0;
	a.nr_fetches = 0;
	PT_EQ(attach_errno(a), EINVAL, "fetches without nr_fetches: EINVAL");
	a.nr_fetches = 1;
	a.fetches = 8;
	PT_EQ(attach_errno(a), EFAULT, "a bad fetches pointer: EFAULT");

	/* An attr of the size before fetches, on its ioctl number. */
	a = pt_probe_attr("pea_st_fetch_target", 0);
	a.size = PEA_PROBE_ATTR_SIZE_VER1;
	cmd = _IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x14, PEA_PROBE_ATTR_SIZE_VER1);
	fd = ioctl(map_fd, cmd, &a);
	PT_OK(fd >= 0, "an attr of PEA_PROBE_ATTR_SIZE_VER1 still attaches");
	if (fd >= 0)
		close(fd);
	PT_EQ(sizeof(struct pea_fetch), 32, "struct pea_fetch is 32 bytes");
	PT_EQ(sizeof(struct pea_probe_attr), 224, "pea_probe_attr is 224 bytes");
	PT_EQ(sizeof(struct pea_uprobe_attr), 216,
	      "pea_uprobe_attr is 216 bytes");
	PT_EQ(sizeof(struct pea_pred), 80, "struct pea_pred is 80 bytes");
}

/* @a with two fetches: ctx.uid, and argument 9 (no such argument). */
static int perm_uid_malformed(struct pea_probe_attr *a)
{
	struct pea_fetch f2[2];

	f2[0] = pt_fx(PEA_FETCH_BASE_CTX, PEA_FETCH_CTX_UID, PEA_FETCH_U32, 0, 0);
	f2[1] = pt_fx(PEA_FETCH_BASE_ARG, 9, PEA_FETCH_U64, 0, 0);
	a->fetches = (uintptr_t)f2;
	a->nr_fetches = 2;
	return attach_errno(*a);
}

/*
 * Every memory read at a kprobe needs CAP_BPF and CAP_PERFMON, as
 * bpf_probe_read_kernel() and bpf_probe_read_user() in a kprobe program:
 * with CAP_PERFMON alone a kernel read, a user-marked read and a user
 * capture are EPERM, a register taken as it is attaches (review of this
 * branch, finding 1: user-marked reads and user captures attached).
 */
static int perm_child(void *arg)
{
	struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target", 0);
	struct pea_fetch f = pt_fx(PEA_FETCH_BASE_ARG, 1, PEA_FETCH_STR, 8, 0);
	int bad = 0, e;

	(void)arg;
	if (pt_drop_to_nobody(CAP_PERFMON))
		return 100;
	a.fetches = (uintptr_t)&f;
	a.nr_fetches = 1;
	e = attach_errno(a);
	pt_diag("perm: a kernel read: %d", e);
	bad |= e != EPERM;
	f.user = 1;
	e = attach_errno(a);
	pt_diag("perm: a user-marked read: %d", e);
	bad |= (e != EPERM) << 1;
	f = pt_fx(PEA_FETCH_BASE_ARG, 1, PEA_FETCH_U64, 0, 0);
	e = attach_errno(a);
	pt_diag("perm: a register: %d", e);
	bad |= (e != 0) << 2;
	a.nr_fetches = 0;
	a.fetches = 0;
	a.capture_arg = 2;
	a.capture_mode = PEA_CAPTURE_STR;
	a.capture_len = 8;
	a.capture_flags = PEA_CAPTURE_USER;
	e = attach_errno(a);
	pt_diag("perm: a user capture: %d", e);
	bad |= (e != EPERM) << 3;
	/* The task's comm, ids and cgroup read no memory. */
	a.capture_mode = PEA_CAPTURE_NONE;
	a.capture_len = 0;
	a.capture_flags = 0;
	a.capture_arg = 0;
	f = pt_fx(PEA_FETCH_BASE_CTX, PEA_FETCH_CTX_COMM, PEA_FETCH_STR, 16, 0);
	a.fetches = (uintptr_t)&f;
	a.nr_fetches = 1;
	e = attach_errno(a);
	pt_diag("perm: ctx.comm: %d", e);
	bad |= (e != 0) << 4;
	/* The uid and gid: only a BPF program gets them at a kprobe. */
	f = pt_fx(PEA_FETCH_BASE_CTX, PEA_FETCH_CTX_UID, PEA_FETCH_U32, 0, 0);
	e = attach_errno(a);
	pt_diag("perm: ctx.uid: %d", e);
	bad |= (e != EPERM) << 5;
	f.arg = PEA_FETCH_CTX_GID;
	e = attach_errno(a);
	pt_diag("perm: ctx.gid: %d", e);
	bad |= (e != EPERM) << 6;
	/*
	 * Before the fetches are checked, as bpf(BPF_PROG_LOAD) answers EPERM
	 * before its verifier (review of tpctx, L1): ctx.uid and a malformed
	 * fetch (argument 9) are EPERM.
	 */
	e = perm_uid_malformed(&a);
	pt_diag("perm: ctx.uid and a malformed fetch: %d", e);
	bad |= (e != EPERM) << 7;
	return bad;
}

/* The same with CAP_BPF and CAP_PERFMON: every one attaches. */
static int perm_bpf_child(void *arg)
{
	struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target", 0);
	struct pea_fetch f = pt_fx(PEA_FETCH_BASE_ARG, 1, PEA_FETCH_STR, 8, 0);
	int bad = 0;

	(void)arg;
	if (pt_drop_to_nobody_caps((1ULL << CAP_PERFMON) | (1ULL << CAP_BPF)))
		return 100;
	a.fetches = (uintptr_t)&f;
	a.nr_fetches = 1;
	bad |= attach_errno(a) != 0;
	f.user = 1;
	bad |= (attach_errno(a) != 0) << 1;
	a.nr_fetches = 0;
	a.fetches = 0;
	a.capture_arg = 2;
	a.capture_mode = PEA_CAPTURE_STR;
	a.capture_len = 8;
	a.capture_flags = PEA_CAPTURE_USER;
	bad |= (attach_errno(a) != 0) << 3;
	a.capture_mode = PEA_CAPTURE_NONE;
	a.capture_len = 0;
	a.capture_flags = 0;
	a.capture_arg = 0;
	f = pt_fx(PEA_FETCH_BASE_CTX, PEA_FETCH_CTX_UID, PEA_FETCH_U32, 0, 0);
	a.fetches = (uintptr_t)&f;
	a.nr_fetches = 1;
	bad |= (attach_errno(a) != 0) << 4;
	/* Allowed ctx.uid: the malformed fetch is what is refused. */
	bad |= (perm_uid_malformed(&a) != EINVAL) << 5;
	return bad;
}

static void test_perm(void)
{
	static const char *path = "/proc/sys/kernel/perf_event_paranoid";
	long old = pt_perm_read_int(path);

	/* Debian's paranoid 3 lets only CAP_SYS_ADMIN attach a kprobe. */
	PT_EQ(pt_perm_write_int(path, 2), 0, "perf_event_paranoid 2");
	PT_EQ(pt_in_child(perm_child, NULL), 0,
	      "CAP_PERFMON only: a kernel read, a user-marked read, a user capture, ctx.uid and ctx.gid EPERM (ctx.uid with a malformed fetch too), a register and ctx.comm attach");
	PT_EQ(pt_in_child(perm_bpf_child, NULL), 0,
	      "CAP_PERFMON and CAP_BPF: each of them attaches, ctx.uid too (with a malformed fetch: EINVAL)");
	pt_perm_write_int(path, old);
}

/* The uprobe's target: a struct in this program's memory. */
struct ufobj {
	long tag;
	const char *name;
	struct ufobj *next;
};

__attribute__((noipa, used)) int fetch_user_fn(struct ufobj *o, const char *s)
{
	__asm__ volatile("" : : "r"(o), "r"(s) : "memory");
	return (int)o->tag;
}

/*
 * A string in a page of a file mapped and never touched: uprobe_events
 * reads it (its handler faults the page in); so does pea (review of this
 * branch, finding 3: it was PEA_FETCH_FAULT).
 */
static void test_uprobe_untouched(const char *self)
{
	static const char text[] = "not-yet-faulted";
	static const char path[] = "/tmp/pea-fetch-page";
	struct ufobj o = { 1, "o", NULL };
	struct pea_uprobe_attr a;
	struct pea_fetch f;
	int fd, link, cpu = 1 % ncpu;
	char *m;

	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
	if (fd < 0 || write(fd, text, sizeof(text)) != sizeof(text)) {
		PT_OK(0, "untouched page: the file");
		return;
	}
	/* Dropped from the page cache: the first touch faults it in. */
	fsync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_UPROBE_F_CLOEXEC;
	a.path = (uintptr_t)self;
	a.path_fd = -1;
	a.offset = pt_file_off((void *)fetch_user_fn);
	a.filter_tgid = getpid();
	f = pt_fx(PEA_FETCH_BASE_ARG, 1, PEA_FETCH_STR, 32, 0);
	a.fetches = (uintptr_t)&f;
	a.nr_fetches = 1;
	link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_UPROBE, &a);
	PT_OK(m != MAP_FAILED && link >= 0, "untouched page: mapped, attached");
	if (m == MAP_FAILED || link < 0)
		goto out;
	pt_pin(cpu);
	pt_rings_drain(rings, ncpu);
	fetch_user_fn(&o, m);
	PT_OK(next_rec(cpu) && g.b, "untouched page: a record");
	if (g.b)
		expect_bytes(0, text, sizeof(text) - 1, PEA_FETCH_OK,
			     "uprobe: a string in a page not yet faulted in");
out:
	if (link >= 0)
		close(link);
	if (m != MAP_FAILED)
		munmap(m, 4096);
	unlink(path);
}

static void test_uprobe(void)
{
	static char self[256];
	struct ufobj inner = { 7, "inner-user", NULL };
	struct ufobj outer = { 3, "outer-user", &inner };
	struct pea_uprobe_attr a;
	struct pea_fetch f[4];
	int link, cpu = 1 % ncpu, i;
	long tag = 7;
	__s32 ret = 3;
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	for (i = 0; i < 2; i++) {
		bool retp = i == 1;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.flags = PEA_UPROBE_F_CLOEXEC |
			  (retp ? PEA_UPROBE_F_RETPROBE : 0);
		a.path = (uintptr_t)self;
		a.path_fd = -1;
		a.offset = pt_file_off((void *)fetch_user_fn);
		a.filter_tgid = getpid();
		f[0] = pt_fx(PEA_FETCH_BASE_ARG, 1, PEA_FETCH_STR, 32, 0);
		f[1] = pt_deref(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_STR, 32, 0),
				offsetof(struct ufobj, name));
		f[2] = pt_at(pt_deref(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_S64, 0,
					    PEA_FETCH_F_LOAD),
				offsetof(struct ufobj, next)),
			  offsetof(struct ufobj, tag));
		f[3] = pt_deref(pt_deref(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_STR, 8,
					       0), offsetof(struct ufobj, next)),
			     offsetof(struct ufobj, next));
		if (retp)
			f[3] = pt_fx(PEA_FETCH_BASE_RET, 0, PEA_FETCH_S32, 0, 0);
		a.fetches = (uintptr_t)f;
		a.nr_fetches = 4;
		link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_UPROBE, &a);
		PT_OK(link >= 0, "%s with 4 fetches attaches",
		      retp ? "uretprobe" : "uprobe");
		if (link < 0)
			continue;
		pt_pin(cpu);
		pt_rings_drain(rings, ncpu);
		fetch_user_fn(&outer, "arg-string");
		PT_OK(next_rec(cpu) && g.b, "%s: a record with fetches",
		      retp ? "uretprobe" : "uprobe");
		if (g.b) {
			PT_EQ(g.r.flags, PEA_REC_F_UPROBE | PEA_REC_F_FETCH |
			      (retp ? PEA_REC_F_RETPROBE : 0), "uprobe flags");
			expect_bytes(0, "arg-string", 10, PEA_FETCH_OK,
				     "uprobe: a user string argument");
			expect_bytes(1, "outer-user", 10, PEA_FETCH_OK,
				     "uprobe: o->name");
			expect_bytes(2, &tag, 8, PEA_FETCH_OK,
				     "uprobe: o->next->tag");
			if (retp)
				expect_bytes(3, &ret, 4, PEA_FETCH_OK,
					     "uretprobe: ret (s32)");
			else
				expect_fault(3, 2,
					     "uprobe: o->next->next (NULL) string");
			expect_padding("uprobe");
		}
		close(link);
	}
	test_uprobe_untouched(self);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_UPROBE_F_CLOEXEC;
	a.path = (uintptr_t)self;
	a.path_fd = -1;
	a.offset = pt_file_off((void *)fetch_user_fn);
	f[0] = pt_fx(PEA_FETCH_BASE_ARG, 1, PEA_FETCH_STR, 32, 0);
	f[0].user = 1;
	a.fetches = (uintptr_t)f;
	a.nr_fetches = 1;
	link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_UPROBE, &a);
	PT_OK(link < 0 && errno == EINVAL, "uprobe: a user bit: EINVAL");
	if (link >= 0)
		close(link);
	f[0].user = 0;
	f[0].base = PEA_FETCH_BASE_RET;
	f[0].arg = 0;
	link = ioctl(map_fd, PEA_MAP_IOC_ATTACH_UPROBE, &a);
	PT_OK(link < 0 && errno == EINVAL, "uprobe: ret at entry: EINVAL");
	if (link >= 0)
		close(link);
}

/* ---- Predicates ---- */

static struct pea_pred cmp(__u8 fetch, __u8 op, __u64 value, const char *str)
{
	struct pea_pred p;

	memset(&p, 0, sizeof(p));
	p.op = PEA_PRED_CMP;
	p.fetch = fetch;
	p.cmp = op;
	p.value = value;
	if (str)
		snprintf(p.str, sizeof(p.str), "%s", str);
	return p;
}

static struct pea_pred join(__u8 op)
{
	struct pea_pred p;

	memset(&p, 0, sizeof(p));
	p.op = op;
	return p;
}

/* The fetches every predicate test uses: 0 n, 1 kstr, 2 neg, 3 *null. */
static void pred_fetches(struct pea_fetch *f)
{
	f[0] = pt_fx(PEA_FETCH_BASE_ARG, 4, PEA_FETCH_U64, 0, 0);
	f[1] = pt_fx(PEA_FETCH_BASE_ARG, 1, PEA_FETCH_STR, 32, 0);
	f[2] = pt_at(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_S32, 0,
			   PEA_FETCH_F_LOAD), FO(neg));
	f[3] = pt_deref(pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_U32, 0,
			      PEA_FETCH_F_LOAD), FO(null));
}

/*
 * Attach with @p (@np instructions), call the target with n = 1..20 and
 * n = -1, and compare the n of the records written with @want (a bit
 * per n, bit 0 for -1) and the link's filtered count.
 */
static void pred_case(const char *what, const struct pea_pred *p, int np,
		      __u32 want)
{
	struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target", 0);
	struct pea_fetch f[4];
	struct pea_link_info info;
	int link, cpu = 1 % ncpu, i, nwant = 0, bad = 0;
	__u32 got = 0;
	__u64 n;

	pred_fetches(f);
	a.fetches = (uintptr_t)f;
	a.nr_fetches = 4;
	a.preds = (uintptr_t)p;
	a.nr_preds = np;
	a.filter_tgid = getpid();
	link = attach(&a);
	PT_OK(link >= 0, "%s: attaches (%d)", what, link);
	if (link < 0)
		return;
	pt_pin(cpu);
	pt_rings_drain(rings, ncpu);
	for (i = 1; i <= 20; i++)
		call_target("u", i, 1, NULL);
	call_target("u", -1, 1, NULL);
	while (next_rec(cpu)) {
		if (!g.b || val(0)->len != 8) {
			bad++;
			continue;
		}
		memcpy(&n, vbytes(0), 8);
		if (n == (__u64)-1)
			got |= 1;
		else if (n >= 1 && n <= 20)
			got |= 1U << n;
		else
			bad++;
	}
	for (i = 0; i < 21; i++)
		nwant += (want >> i) & 1;
	PT_OK(got == want && !bad, "%s: records for exactly n in 0x%x (got 0x%x, %d odd)",
	      what, want, got, bad);
	PT_EQ(ioctl(link, PEA_LINK_IOC_INFO, &info), 0, "%s: link info", what);
	/* PEA_LINK_IOC_INFO's hits count the filtered ones too. */
	PT_OK(info.written == (__u64)nwant && info.hits == 21 &&
	      info.filtered == (__u64)(21 - nwant) && info.errors == 0,
	      "%s: 21 hits, %d written, %d filtered (got hits %llu written %llu filtered %llu)",
	      what, nwant, 21 - nwant, (unsigned long long)info.hits,
	      (unsigned long long)info.written,
	      (unsigned long long)info.filtered);
	close(link);
}

#define NBIT(n)		(1U << (n))
#define NRANGE(a, b)	(((2U << (b)) - 1) & ~((1U << (a)) - 1))

static void test_preds(void)
{
	struct pea_pred p[8];
	__u32 even = 0;
	int i;

	for (i = 2; i <= 20; i += 2)
		even |= NBIT(i);
	/* n >= 5 && n <= 8 || n == 15 */
	p[0] = cmp(0, PEA_PRED_OP_GE, 5, NULL);
	p[1] = cmp(0, PEA_PRED_OP_LE, 8, NULL);
	p[2] = join(PEA_PRED_AND);
	p[3] = cmp(0, PEA_TP_OP_EQ, 15, NULL);
	p[4] = join(PEA_PRED_OR);
	pred_case("n >= 5 && n <= 8 || n == 15", p, 5,
		  NRANGE(5, 8) | NBIT(15));
	/* !(n & 1) && kstr ~ "kernel-*" */
	p[0] = cmp(0, PEA_TP_OP_AND, 1, NULL);
	p[1] = join(PEA_PRED_NOT);
	p[2] = cmp(1, PEA_TP_OP_GLOB, 0, "kernel-*");
	p[3] = join(PEA_PRED_AND);
	pred_case("!(n & 1) && kstr ~ \"kernel-*\"", p, 4, even);
	/* neg < 0 && n > 18: n unsigned, so -1 passes; neg signed */
	p[0] = cmp(2, PEA_TP_OP_LT, 0, NULL);
	p[1] = cmp(0, PEA_TP_OP_GT, 18, NULL);
	p[2] = join(PEA_PRED_AND);
	pred_case("neg < 0 && n > 18 (signed, unsigned)", p, 3,
		  NBIT(19) | NBIT(20) | 1);
	/* neg == -5 && kstr == "kernel-string" && kstr != "kernel" */
	p[0] = cmp(2, PEA_TP_OP_EQ, (__u64)-5, NULL);
	p[1] = cmp(1, PEA_TP_OP_EQ, 0, PEA_ST_FETCH_KSTR);
	p[2] = join(PEA_PRED_AND);
	p[3] = cmp(1, PEA_TP_OP_NE, 0, "kernel");
	p[4] = join(PEA_PRED_AND);
	pred_case("neg == -5 && kstr == \"kernel-string\" && kstr != \"kernel\"",
		  p, 5, NRANGE(1, 20) | 1);
	/* a faulted value: every comparison on it is false */
	p[0] = cmp(3, PEA_TP_OP_EQ, 0, NULL);
	pred_case("*null == 0 (a fault)", p, 1, 0);
	p[0] = cmp(3, PEA_TP_OP_NE, 0, NULL);
	pred_case("*null != 0 (a fault)", p, 1, 0);
	p[1] = join(PEA_PRED_NOT);
	pred_case("!(*null != 0) (a fault)", p, 2, NRANGE(1, 20) | 1);
}

static int pred_errno(const struct pea_pred *p, int np, int nf)
{
	struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target", 0);
	struct pea_fetch f[4];
	int fd;

	pred_fetches(f);
	a.fetches = nf ? (uintptr_t)f : 0;
	a.nr_fetches = nf;
	a.preds = (uintptr_t)p;
	a.nr_preds = np;
	fd = attach(&a);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -fd;
}

static void test_pred_errnos(void)
{
	struct pea_pred p[PEA_PRED_MAX + 1];
	int i;

	/* n == 0 || n == 1 || ...: a comparison, then (comparison OR)s */
	for (i = 0; i < PEA_PRED_MAX + 1; i++)
		p[i] = i && !(i % 2) ? join(PEA_PRED_OR) :
				      cmp(0, PEA_TP_OP_EQ, i, NULL);
	PT_EQ(pred_errno(p, PEA_PRED_MAX - 1, 4), 0,
	      "31 instructions (16 comparisons ORed) attach");
	PT_EQ(pred_errno(p, PEA_PRED_MAX + 1, 4), E2BIG,
	      "PEA_PRED_MAX + 1 instructions: E2BIG");
	for (i = 0; i < 17; i++)
		p[i] = cmp(0, PEA_TP_OP_EQ, i, NULL);
	for (; i < 32; i++)
		p[i] = join(PEA_PRED_AND);
	PT_EQ(pred_errno(p, 32, 4), E2BIG,
	      "17 values pending: E2BIG (PEA_PRED_DEPTH_MAX 16)");
	p[0] = cmp(0, PEA_TP_OP_EQ, 1, NULL);
	PT_EQ(pred_errno(p, 1, 0), EINVAL, "a predicate without fetches: EINVAL");
	PT_EQ(pred_errno(p, 0, 4), EINVAL, "preds without nr_preds: EINVAL");
#define PBAD(n, stmt, what) do {					\
		p[0] = cmp(0, PEA_TP_OP_EQ, 1, NULL);			\
		p[1] = cmp(1, PEA_TP_OP_EQ, 0, "x");			\
		p[2] = join(PEA_PRED_AND);				\
		stmt;							\
		PT_EQ(pred_errno(p, n, 4), EINVAL, what ": EINVAL");	\
	} while (0)
	PBAD(1, p[0] = join(PEA_PRED_AND), "AND without operands");
	PBAD(1, p[0] = join(PEA_PRED_NOT), "NOT without an operand");
	PBAD(2, (void)0, "two values left");
	PBAD(3, p[0].fetch = 4, "a fetch index past the fetches");
	PBAD(3, p[0].cmp = PEA_TP_OP_GLOB, "a glob on an integer");
	PBAD(3, p[1].cmp = PEA_TP_OP_LT, "< on a string");
	PBAD(3, p[1].value = 1, "a number on a string");
	PBAD(3, p[0].str[0] = 'x', "a string on an integer");
	PBAD(3, memset(p[1].str, 'x', sizeof(p[1].str)), "a string without NUL");
	PBAD(3, p[2].op = 5, "op 5");
	PBAD(3, p[2].op = 0, "op 0");
	PBAD(3, p[0].cmp = 9, "cmp 9");
	PBAD(3, p[0].reserved[4] = 1, "reserved");
	PBAD(3, p[2].fetch = 1, "a fetch on AND");
	p[0] = cmp(0, PEA_TP_OP_EQ, 1, NULL);
	p[1] = cmp(1, PEA_TP_OP_EQ, 0, "x");
	p[2] = join(PEA_PRED_AND);
	PT_EQ(pred_errno(p, 3, 4), 0, "the well-formed program attaches");
	{
		struct pea_fetch f = pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_ARRAY,
					   8, 0);
		struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target",
							0);

		a.fetches = (uintptr_t)&f;
		a.nr_fetches = 1;
		a.preds = (uintptr_t)p;
		a.nr_preds = 1;
		i = attach(&a);
		PT_EQ(i < 0 ? -i : 0, EINVAL, "a comparison on an array: EINVAL");
		if (i >= 0)
			close(i);
	}
	{
		struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target",
							0);
		struct pea_fetch f[4];

		pred_fetches(f);
		a.fetches = (uintptr_t)f;
		a.nr_fetches = 4;
		a.preds = (uintptr_t)p;
		a.nr_preds = 3;
		a.reserved3 = 1;
		i = attach(&a);
		PT_EQ(i < 0 ? -i : 0, EINVAL, "attr reserved3: EINVAL");
		if (i >= 0)
			close(i);
	}
}

/*
 * An integer operand the fetch's type cannot hold is EINVAL at attach
 * (the predicate review's F2: it was taken and compared at 64 bits, so
 * "== -1" on a u32 never matched and "& 0x100" on an s8 always did).
 * Linux's filter reads an unsigned field's operand with kstrtoull and a
 * signed one's with kstrtoll (trace_events_filter.c parse_pred()); here
 * the range is the width's. "&" takes a mask of the width's bits, as a
 * signed or an unsigned number.
 */
static int width_errno(__u8 type, __u8 op, __u64 value)
{
	struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target", 0);
	struct pea_fetch f = pt_at(pt_fx(PEA_FETCH_BASE_ARG, 0, type, 0,
					 PEA_FETCH_F_LOAD), FO(neg));
	struct pea_pred p = cmp(0, op, value, NULL);
	int fd;

	a.fetches = (uintptr_t)&f;
	a.nr_fetches = 1;
	a.preds = (uintptr_t)&p;
	a.nr_preds = 1;
	fd = attach(&a);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -fd;
}

static void test_pred_width(void)
{
	static const struct {
		__u8 type, op;
		__u64 value;
		int err;
		const char *what;
	} c[] = {
		{ PEA_FETCH_U32, PEA_TP_OP_EQ, (__u64)-1, EINVAL, "u32 == -1" },
		{ PEA_FETCH_U32, PEA_TP_OP_LT, (__u64)-1, EINVAL, "u32 < -1" },
		{ PEA_FETCH_U32, PEA_TP_OP_EQ, 1ULL << 32, EINVAL,
		  "u32 == 1 << 32" },
		{ PEA_FETCH_U32, PEA_TP_OP_EQ, 0xffffffff, 0,
		  "u32 == 0xffffffff" },
		{ PEA_FETCH_U8, PEA_TP_OP_EQ, 256, EINVAL, "u8 == 256" },
		{ PEA_FETCH_U8, PEA_PRED_OP_GE, 255, 0, "u8 >= 255" },
		{ PEA_FETCH_U16, PEA_TP_OP_GT, 0x10000, EINVAL,
		  "u16 > 0x10000" },
		{ PEA_FETCH_S8, PEA_TP_OP_AND, 0x100, EINVAL, "s8 & 0x100" },
		{ PEA_FETCH_S8, PEA_TP_OP_AND, 0xff, 0, "s8 & 0xff" },
		{ PEA_FETCH_S8, PEA_TP_OP_EQ, 0xff, EINVAL, "s8 == 0xff" },
		{ PEA_FETCH_S8, PEA_TP_OP_EQ, (__u64)-128, 0, "s8 == -128" },
		{ PEA_FETCH_S8, PEA_TP_OP_EQ, (__u64)-129, EINVAL,
		  "s8 == -129" },
		{ PEA_FETCH_S16, PEA_TP_OP_LT, 0x8000, EINVAL,
		  "s16 < 0x8000" },
		{ PEA_FETCH_S32, PEA_TP_OP_EQ, 0x80000000, EINVAL,
		  "s32 == 0x80000000" },
		{ PEA_FETCH_S32, PEA_TP_OP_EQ, (__u64)-0x80000000LL, 0,
		  "s32 == -0x80000000" },
		{ PEA_FETCH_S32, PEA_TP_OP_AND, 0x80000000, 0,
		  "s32 & 0x80000000" },
		{ PEA_FETCH_S32, PEA_TP_OP_AND, 1ULL << 32, EINVAL,
		  "s32 & 1 << 32" },
		{ PEA_FETCH_U32, PEA_TP_OP_AND, (__u64)-8, 0, "u32 & -8" },
		{ PEA_FETCH_U64, PEA_TP_OP_EQ, (__u64)-1, 0, "u64 == -1" },
		{ PEA_FETCH_S64, PEA_TP_OP_GT, 1ULL << 63, 0, "s64 > 1 << 63" },
	};
	struct pea_pred p[2];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		PT_EQ(width_errno(c[i].type, c[i].op, c[i].value), c[i].err,
		      "operand width: %s: %s", c[i].what,
		      c[i].err ? "EINVAL" : "attaches");
	/* neg is -5 (0xfffffffb): as a u32 it is 4294967291 */
	p[0] = cmp(2, PEA_TP_OP_AND, 0x80000000, NULL);
	pred_case("neg & 0x80000000 (s32, the sign bit)", p, 1,
		  NRANGE(1, 20) | 1);
	p[0] = cmp(2, PEA_TP_OP_AND, 0x4, NULL);
	pred_case("neg & 0x4 (s32 -5 has bit 2 clear)", p, 1, 0);
}

/* Whether @n is the size of one of the kernel's kmalloc caches. */
static bool kmalloc_size(long n)
{
	static const long sizes[] = {
		8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192,
	};
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (n == sizes[i])
			return true;
	return false;
}

/*
 * A link's fetch set and predicate are charged what the allocator gives
 * them (a kmalloc cache's size), as every other part of a link is: the
 * charge of a link with them less one without is a sum of two such
 * sizes (the predicate review's F1: they were charged their exact size).
 */
static void test_charge(void)
{
	struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target", 0);
	struct pea_fetch f[8];
	struct pea_pred p[32];
	long l0, b0, l1, b1, l2, b2, fc;
	int plain, link, i;

	for (i = 0; i < 8; i++)
		f[i] = pt_fx(PEA_FETCH_BASE_ARG, 0, PEA_FETCH_U64, 0, 0);
	p[0] = cmp(0, PEA_TP_OP_EQ, 1, NULL);
	for (i = 1; i < 31; i += 2) {
		p[i] = cmp(0, PEA_TP_OP_EQ, i, NULL);
		p[i + 1] = join(PEA_PRED_OR);
	}
	pt_quota(0, &l0, &b0);
	plain = attach(&a);
	pt_quota(0, &l1, &b1);
	a.fetches = (uintptr_t)f;
	a.nr_fetches = 8;
	link = attach(&a);
	pt_quota(0, &l2, &b2);
	PT_OK(plain >= 0 && link >= 0 && l2 == l1 + 1 && l1 == l0 + 1,
	      "two links, one with 8 fetches (%d, %d)", plain, link);
	fc = (b2 - b1) - (b1 - b0);
	PT_OK(kmalloc_size(fc),
	      "8 fetches are charged a kmalloc cache's size (%ld bytes)", fc);
	if (link >= 0)
		close(link);
	a.preds = (uintptr_t)p;
	a.nr_preds = 31;
	link = attach(&a);
	pt_quota(0, &l2, &b2);
	PT_OK(link >= 0, "and with a predicate of 31 instructions (%d)", link);
	PT_OK(kmalloc_size((b2 - b1) - (b1 - b0) - fc),
	      "its predicate too: %ld bytes past the %ld of its fetches",
	      (b2 - b1) - (b1 - b0) - fc, fc);
	if (link >= 0)
		close(link);
	if (plain >= 0)
		close(plain);
}

/* ---- context values (PEA_FETCH_BASE_CTX) ---- */

#define CTX_UID		1234
#define CTX_GID		4321
#define CTX_CG		"/tmp/pea-cg2"
#define CTX_CG_DIR	CTX_CG "/pea-ctx"

static struct pea_fetch ctxf(__u8 arg, __u8 type, __u16 size)
{
	return pt_fx(PEA_FETCH_BASE_CTX, arg, type, size, 0);
}

/*
 * The child that hits the probe: in cgroup CTX_CG_DIR, comm
 * "ctx-child-name", uid CTX_UID, gid CTX_GID, pinned to @arg's CPU.
 */
static int ctx_child(void *arg)
{
	char pid[16];
	int fd;

	pt_pin(*(int *)arg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	fd = open(CTX_CG_DIR "/cgroup.procs", O_WRONLY);
	if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
		return 101;
	close(fd);
	prctl(PR_SET_NAME, "ctx-child-name");
	if (setresgid(CTX_GID, CTX_GID, CTX_GID) ||
	    setresuid(CTX_UID, CTX_UID, CTX_UID))
		return 102;
	return call_target("u", 7, 1, NULL) ? 103 : 0;
}

static void test_ctx(void)
{
	struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target", 0);
	struct pea_fetch f[8];
	struct pea_pred pr[1];
	__u32 u32v;
	__u64 cg = 0, info_filtered;
	struct pea_link_info li;
	int link, cpu = 1 % ncpu, rc, n;
	pid_t child;

	mkdir(CTX_CG, 0755);
	if (mount("none", CTX_CG, "cgroup2", 0, NULL) && errno != EBUSY)
		pt_diag("mount cgroup2: %s", strerror(errno));
	rmdir(CTX_CG_DIR);
	PT_EQ(mkdir(CTX_CG_DIR, 0755), 0, "ctx: a cgroup v2 directory for the child");
	cg = pt_cgroup_id(CTX_CG_DIR);
	PT_OK(cg != 0, "ctx: its id (%llu)", (unsigned long long)cg);

	f[0] = ctxf(PEA_FETCH_CTX_COMM, PEA_FETCH_STR, 16);
	f[1] = ctxf(PEA_FETCH_CTX_COMM, PEA_FETCH_STR, 4);
	f[2] = ctxf(PEA_FETCH_CTX_TID, PEA_FETCH_U32, 0);
	f[3] = ctxf(PEA_FETCH_CTX_PID, PEA_FETCH_U32, 0);
	f[4] = ctxf(PEA_FETCH_CTX_UID, PEA_FETCH_U32, 0);
	f[5] = ctxf(PEA_FETCH_CTX_GID, PEA_FETCH_U16, 0);
	f[6] = ctxf(PEA_FETCH_CTX_CGROUP, PEA_FETCH_U64, 0);
	f[7] = ctxf(PEA_FETCH_CTX_CPU, PEA_FETCH_U8, 0);
	/* Only the child's call is written: uid == CTX_UID. */
	memset(pr, 0, sizeof(pr));
	pr[0].op = PEA_PRED_CMP;
	pr[0].fetch = 4;
	pr[0].cmp = PEA_TP_OP_EQ;
	pr[0].value = CTX_UID;
	a.fetches = (uintptr_t)f;
	a.nr_fetches = 8;
	a.preds = (uintptr_t)pr;
	a.nr_preds = 1;
	link = attach(&a);
	PT_OK(link >= 0, "ctx: a kprobe with 8 context fetches and a predicate attaches (%d)",
	      link);
	if (link < 0)
		return;
	pt_pin(cpu);
	pt_rings_drain(rings, ncpu);
	PT_EQ(call_target("u", 7, 1, NULL), 0, "ctx: root's call");
	fflush(stdout);
	child = fork();
	if (child == 0)
		_exit(ctx_child(&cpu));
	rc = -1;
	if (child > 0 && waitpid(child, &rc, 0) == child)
		rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : 255;
	PT_EQ(rc, 0, "ctx: the child called the target as uid %d in its cgroup",
	      CTX_UID);
	n = 0;
	while (child > 0 && next_rec_of(cpu, child)) {
		n++;
		if (n > 1 || !g.b)
			continue;
		PT_EQ(g.b->nr, 8, "ctx: 8 values");
		expect_bytes(0, "ctx-child-name", 14, PEA_FETCH_OK, "ctx.comm");
		expect_bytes(1, "ctx-", 4, PEA_FETCH_TRUNCATED, "ctx.comm cut at 4");
		u32v = child;
		expect_bytes(2, &u32v, 4, PEA_FETCH_OK, "ctx.tid (the child's)");
		expect_bytes(3, &u32v, 4, PEA_FETCH_OK, "ctx.pid (the child's)");
		u32v = CTX_UID;
		expect_bytes(4, &u32v, 4, PEA_FETCH_OK, "ctx.uid");
		u32v = CTX_GID;
		expect_bytes(5, &u32v, 2, PEA_FETCH_OK, "ctx.gid (as u16)");
		expect_bytes(6, &cg, 8, PEA_FETCH_OK, "ctx.cgroup (the directory's id)");
		u32v = cpu;
		expect_bytes(7, &u32v, 1, PEA_FETCH_OK, "ctx.cpu (as u8)");
		expect_padding("ctx");
		PT_EQ(g.b->size, 8 + 8 * 8 + 16 + 8 * 7, "ctx: block size exact");
	}
	PT_EQ(n, 1, "ctx: exactly one record, the child's");
	memset(&li, 0, sizeof(li));
	info_filtered = ioctl(link, PEA_LINK_IOC_INFO, &li) ? ~0ULL : li.filtered;
	pt_diag("ctx: hits %llu written %llu filtered %llu errors %llu",
		(unsigned long long)li.hits, (unsigned long long)li.written,
		(unsigned long long)li.filtered, (unsigned long long)li.errors);
	PT_EQ(info_filtered, 1, "ctx: root's call counted as filtered");
	PT_EQ(li.written, 1, "ctx: one record written in all");
	close(link);
	rmdir(CTX_CG_DIR);
	umount(CTX_CG);
}

static void test_ctx_errnos(void)
{
	static const struct {
		struct pea_fetch f;
		const char *what;
	} bad[] = {
		{ { .base = PEA_FETCH_BASE_CTX, .arg = 0, .type = PEA_FETCH_U32 }, "arg 0" },
		{ { .base = PEA_FETCH_BASE_CTX, .arg = PEA_FETCH_CTX_MAX + 1, .type = PEA_FETCH_U32 }, "arg past the last" },
		{ { .base = PEA_FETCH_BASE_CTX, .arg = PEA_FETCH_CTX_TID, .type = PEA_FETCH_STR, .size = 8 }, "a tid as a string" },
		{ { .base = PEA_FETCH_BASE_CTX, .arg = PEA_FETCH_CTX_COMM, .type = PEA_FETCH_U64 }, "the comm as an integer" },
		{ { .base = PEA_FETCH_BASE_CTX, .arg = PEA_FETCH_CTX_COMM, .type = PEA_FETCH_ARRAY, .size = 16 }, "the comm as an array" },
		{ { .base = PEA_FETCH_BASE_CTX, .arg = PEA_FETCH_CTX_COMM, .type = PEA_FETCH_STR }, "the comm with size 0" },
		{ { .base = PEA_FETCH_BASE_CTX, .arg = PEA_FETCH_CTX_UID, .type = PEA_FETCH_U32, .size = 4 }, "an integer with a size" },
		{ { .base = PEA_FETCH_BASE_CTX, .arg = PEA_FETCH_CTX_UID, .type = PEA_FETCH_U32, .nr_deref = 1 }, "a deref" },
		{ { .base = PEA_FETCH_BASE_CTX, .arg = PEA_FETCH_CTX_UID, .type = PEA_FETCH_U32, .flags = PEA_FETCH_F_LOAD }, "LOAD" },
		{ { .base = PEA_FETCH_BASE_CTX, .arg = PEA_FETCH_CTX_UID, .type = PEA_FETCH_U32, .user = 1 }, "a user bit" },
		{ { .base = PEA_FETCH_BASE_CTX, .arg = PEA_FETCH_CTX_UID, .type = PEA_FETCH_U32, .offset = { 8 } }, "an offset" },
		{ { .base = PEA_FETCH_BASE_CTX, .arg = PEA_FETCH_CTX_UID, .type = PEA_FETCH_U32, .offset = { 0, 0, 0, 0, 8 } }, "a last offset" },
		{ { .base = PEA_FETCH_BASE_CTX, .arg = PEA_FETCH_CTX_CPU, .type = PEA_FETCH_U32, .reserved = 1 }, "reserved" },
	};
	struct pea_probe_attr a = pt_probe_attr("pea_st_fetch_target", 0);
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		a.fetches = (uintptr_t)&bad[i].f;
		a.nr_fetches = 1;
		PT_EQ(attach_errno(a), EINVAL, "ctx: %s: EINVAL", bad[i].what);
	}
}

int main(void)
{
	int i;

	ncpu = pt_setup(NCPU_MAX);
	ncpu = pt_cpu_map("fetch", 16, &map_fd, ev_fd, rings);
	test_kprobe();
	test_kretprobe();
	test_user_bit();
	test_errnos();
	test_perm();
	test_uprobe();
	test_preds();
	test_pred_errnos();
	test_pred_width();
	test_ctx();
	test_ctx_errnos();
	test_charge();
	for (i = 0; i < ncpu; i++)
		close(ev_fd[i]);
	close(map_fd);
	return pt_done();
}
