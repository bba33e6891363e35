// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoint fetch chains (struct pea_tp_attr's @fetches, base
 * PEA_FETCH_BASE_FIELD): a chain that starts at a field of the entry, as
 * an eprobe's "+0($filename):ustring" does, evaluated in the kernel.
 *
 * syscalls:sys_enter_openat, the link filtered to this process (no other
 * task's call counts; every call is made by this thread, and its hit is
 * written before the call returns, so the link's counts are final when
 * the last call returns): openat(DFD0 + i, path i) for known paths, the
 * filename followed as a user string (marked user, and unmarked: by the
 * address, as a kprobe's), cut at 8 bytes, dfd taken as it is; a NULL, a
 * low and an unmapped filename marked failed at read 0 with nothing lost
 * (written == calls, dropped 0); predicates on the fetched string with
 * and without the field filter; the field table's refusals (EINVAL), the
 * bounds (E2BIG, EINVAL), and the attr's older size through its old
 * number.
 *
 * timer:hrtimer_start, hit by this thread's nanosleep() (the sleeper's
 * hrtimer is on its kernel stack): the kernel pointer field hrtimer
 * followed to struct hrtimer's function, _softexpires and node.expires
 * (offsets 40, 32, 24 on x86-64, 6.1 and 6.12 alike), which must equal
 * the entry's own function, softexpires and expires fields in every
 * record.
 *
 * nmi:nmi_handler in NMI context (the test module's PEA_ST_IOC_KSTACK_NMI
 * NMIs on this process): its handler field taken as it is (the module's
 * handler, from kallsyms), followed into kernel text (8 bytes, the same
 * in every record), and its handled field (1) followed as a pointer,
 * which faults at read 0 in the NMI: one record per NMI, none lost.
 */
#include <sys/mman.h>
#include <time.h>
#include "pea_test.h"
#include "pt_fetch.h"
#include "pt_tp.h"

#define NCPU_MAX	64
#define TRACEFS		"/sys/kernel/tracing/events/"
#define DFD0		1000
#define NPATH		6

/* The attach ioctl's number for the attr's size before @fetches. */
#define ATTACH_TP_VER2 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x15, PEA_TP_ATTR_SIZE_VER2)

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];
static int openat_id, hrt_id, nmi_id;
static __u64 nmi_fn;

static struct pt_tp_field f_dfd, f_filename, f_hrtimer, f_function, f_expires,
	f_softexpires, f_mode, f_handler, f_handled;

static char paths[NPATH][256];

/* A chain from field @f: @type of @size, no pointer read yet. */
static struct pea_fetch field_fx(const struct pt_tp_field *f, __u8 type,
				 __u16 size, __u8 flags)
{
	struct pea_fetch x = pt_fx(PEA_FETCH_BASE_FIELD, 0, type, size, flags);

	x.field_offset = f->offset;
	x.field_size = f->size;
	return x;
}

static void set_fetches(struct pea_tp_attr *a, struct pea_fetch *f, int n)
{
	a->fetches = (uintptr_t)f;
	a->nr_fetches = n;
}

static int attach_cmd(unsigned long cmd, struct pea_tp_attr *a)
{
	int fd = ioctl(map_fd, cmd, a);

	return fd < 0 ? -errno : fd;
}

/* Attach @a, return 0 or the errno, and detach. */
static int attach_errno(struct pea_tp_attr *a)
{
	int fd = attach_cmd(PEA_MAP_IOC_ATTACH_TP, a);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? -fd : 0;
}

/* One fetched value of a record. */
struct val {
	int status, step, len;
	unsigned char data[1024];
};

#define NVAL	8

/* A record: its entry's fields we look at, and its values. */
struct hit {
	__u64 field[4];
	int nval;
	struct val v[NVAL];
};

/*
 * The block of record @tr (PEA_REC_F_FETCH): after the entry, at the
 * next 8-byte boundary from the record's start. -1 if it is malformed.
 */
static int parse_block(const struct pea_tp_record *tr, size_t recsize,
		       struct hit *h)
{
	const unsigned char *base = (const void *)tr;
	size_t foff = (sizeof(*tr) + tr->raw_size + 7) & ~7UL;
	struct pea_fetch_block b;
	struct pea_fetch_value fv;
	int i;

	if (!(tr->flags & PEA_REC_F_FETCH) || foff + sizeof(b) > recsize)
		return -1;
	memcpy(&b, base + foff, sizeof(b));
	if (b.nr > NVAL || foff + b.size > recsize || b.reserved)
		return -1;
	h->nval = b.nr;
	for (i = 0; i < b.nr; i++) {
		memcpy(&fv, base + foff + sizeof(b) + i * sizeof(fv),
		       sizeof(fv));
		if (fv.offset + fv.len > b.size || fv.offset % 8)
			return -1;
		h->v[i].status = fv.status;
		h->v[i].step = fv.step;
		h->v[i].len = fv.len;
		memset(h->v[i].data, 0, sizeof(h->v[i].data));
		memcpy(h->v[i].data, base + foff + fv.offset, fv.len);
	}
	return 0;
}

struct run {
	__u64 written, filtered, dropped, errors;
	int records, bad;
	struct hit hits[64];
};

static void load_fields(const struct pea_tp_record *tr, struct hit *h,
			const struct pt_tp_field *const *fl, int nf)
{
	int i;

	for (i = 0; i < nf; i++) {
		h->field[i] = 0;
		memcpy(&h->field[i], (const unsigned char *)(tr + 1) +
		       fl[i]->offset, fl[i]->size);
	}
}

/*
 * Read every record of event @id from the rings into @r (at most 64),
 * their fields @fl.
 */
static void collect(int id, struct run *r, const struct pt_tp_field *const *fl,
		    int nf)
{
	struct perf_event_header *h = (void *)rec;
	const struct pea_tp_record *tr;
	int cpu;

	for (cpu = 0; cpu < ncpu; cpu++)
		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			tr = (const void *)(rec + 12);
			if (tr->event_id != (__u64)id)
				continue;
			if (r->records >= 64) {
				r->bad++;
				continue;
			}
			load_fields(tr, &r->hits[r->records], fl, nf);
			if (parse_block(tr, h->size - 12,
					&r->hits[r->records]))
				r->bad++;
			r->records++;
		}
}

static void link_counts(int link, struct run *r)
{
	struct pea_link_info li;

	memset(&li, 0, sizeof(li));
	if (ioctl(link, PEA_LINK_IOC_INFO, &li))
		pt_fatal("PEA_LINK_IOC_INFO");
	r->written = li.written;
	r->filtered = li.filtered;
	r->dropped = li.dropped;
	r->errors = li.errors;
}

/* The openat() calls of a run: dfd DFD0 + i, filename @names[i]. */
static int run_openat(struct pea_tp_attr *a, const char *const *names, int n,
		      struct run *r)
{
	static const struct pt_tp_field *const fl[] = { &f_dfd, &f_filename };
	int link, i;

	memset(r, 0, sizeof(*r));
	pt_rings_drain(rings, ncpu);
	link = attach_cmd(PEA_MAP_IOC_ATTACH_TP, a);
	if (link < 0)
		return -link;
	for (i = 0; i < n; i++)
		syscall(SYS_openat, (long)(DFD0 + i), names[i],
			(long)O_RDONLY);
	link_counts(link, r);
	close(link);
	collect(openat_id, r, fl, 2);
	return 0;
}

/* The record of dfd DFD0 + @i in @r, or NULL. */
static const struct hit *hit_of(const struct run *r, int i)
{
	int k;

	for (k = 0; k < r->records; k++)
		if (r->hits[k].field[0] == (__u64)(DFD0 + i))
			return &r->hits[k];
	return NULL;
}

static bool val_str(const struct val *v, const char *s, int status)
{
	return v->status == status && v->step == 0 &&
	       v->len == (int)strlen(s) && !memcmp(v->data, s, v->len);
}

static __u64 val_u64(const struct val *v)
{
	__u64 x = 0;

	memcpy(&x, v->data, v->len < 8 ? v->len : 8);
	return x;
}

/* Known paths, their filenames followed three ways, and dfd as it is. */
static void test_strings(void)
{
	struct pea_tp_attr a = pt_tp_attr("syscalls:sys_enter_openat", openat_id, getpid());
	const char *names[NPATH];
	struct pea_fetch f[4];
	const struct hit *h;
	struct run r;
	char cut[9];
	int i, err, ok = 0;

	for (i = 0; i < NPATH; i++)
		names[i] = paths[i];
	f[0] = field_fx(&f_filename, PEA_FETCH_STR, 255, 0);
	f[0].user = 1;		/* read 0, the value's: a user string */
	f[1] = field_fx(&f_dfd, PEA_FETCH_S64, 0, 0);
	f[2] = field_fx(&f_filename, PEA_FETCH_STR, 8, 0);
	f[2].user = 1;
	f[3] = field_fx(&f_filename, PEA_FETCH_STR, 255, 0);	/* by address */
	set_fetches(&a, f, 4);
	err = run_openat(&a, names, NPATH, &r);
	PT_OK(!err && r.written == NPATH && r.records == NPATH && !r.bad &&
	      !r.dropped && !r.errors && !r.filtered,
	      "openat of %d known paths: %d written, %d records with fetches, none dropped (err %d, %llu written, %d records, %d bad, %llu dropped, %llu errors)",
	      NPATH, NPATH, NPATH, err, (unsigned long long)r.written,
	      r.records, r.bad, (unsigned long long)r.dropped,
	      (unsigned long long)r.errors);
	for (i = 0; i < NPATH; i++) {
		h = hit_of(&r, i);
		memcpy(cut, paths[i], 8);
		cut[8] = 0;
		if (h && h->nval == 4 &&
		    val_str(&h->v[0], paths[i], PEA_FETCH_OK) &&
		    h->v[1].status == PEA_FETCH_OK && h->v[1].len == 8 &&
		    val_u64(&h->v[1]) == (__u64)(DFD0 + i) &&
		    val_str(&h->v[2], cut, strlen(paths[i]) > 8 ?
			    PEA_FETCH_TRUNCATED : PEA_FETCH_OK) &&
		    val_str(&h->v[3], paths[i], PEA_FETCH_OK))
			ok++;
		else
			PT_OK(0, "path %d (%s): fetched %.*s (status %d len %d), dfd %llu, cut %.*s (status %d)",
			      i, paths[i], h ? h->v[0].len : 0,
			      h ? (const char *)h->v[0].data : "",
			      h ? h->v[0].status : -1, h ? h->v[0].len : -1,
			      h ? (unsigned long long)val_u64(&h->v[1]) : 0ULL,
			      h ? h->v[2].len : 0,
			      h ? (const char *)h->v[2].data : "",
			      h ? h->v[2].status : -1);
	}
	PT_EQ(ok, NPATH,
	      "each record: filename exact (user-marked and by address), cut at 8 bytes exactly where longer (TRUNCATED), dfd exact");
}

/* NULL, a low and an unmapped filename: marked failed, nothing lost. */
static void test_faults(void)
{
	struct pea_tp_attr a = pt_tp_attr("syscalls:sys_enter_openat", openat_id, getpid());
	long pg = sysconf(_SC_PAGESIZE);
	const char *names[4];
	struct pea_fetch f[2];
	const struct hit *h;
	struct run r;
	void *gone;
	int i, err, ok = 0;

	gone = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (gone == MAP_FAILED || munmap(gone, pg))
		pt_fatal("mmap/munmap");
	names[0] = NULL;
	names[1] = (const char *)16;
	names[2] = gone;
	names[3] = paths[0];
	f[0] = field_fx(&f_filename, PEA_FETCH_STR, 255, 0);
	f[0].user = 1;
	f[1] = field_fx(&f_dfd, PEA_FETCH_S64, 0, 0);
	set_fetches(&a, f, 2);
	err = run_openat(&a, names, 4, &r);
	PT_OK(!err && r.written == 4 && r.records == 4 && !r.bad &&
	      !r.dropped && !r.errors,
	      "NULL, 16, unmapped, a path: 4 calls, 4 written, 4 records, 0 dropped, 0 errors (err %d, %llu, %d, %llu, %llu)",
	      err, (unsigned long long)r.written, r.records,
	      (unsigned long long)r.dropped, (unsigned long long)r.errors);
	for (i = 0; i < 3; i++) {
		h = hit_of(&r, i);
		if (h && h->v[0].status == PEA_FETCH_FAULT &&
		    h->v[0].step == 0 && h->v[0].len == 0 &&
		    h->v[1].status == PEA_FETCH_OK &&
		    val_u64(&h->v[1]) == (__u64)(DFD0 + i))
			ok++;
	}
	h = hit_of(&r, 3);
	PT_OK(ok == 3 && h && val_str(&h->v[0], paths[0], PEA_FETCH_OK),
	      "the three bad filenames FAULT at read 0, no bytes, dfd kept; the path after them exact (%d of 3)",
	      ok);
}

/* One CMP of fetch 0 (a string) with @s, @op. */
static struct pea_pred str_cmp(int op, const char *s)
{
	struct pea_pred p;

	memset(&p, 0, sizeof(p));
	p.op = PEA_PRED_CMP;
	p.fetch = 0;
	p.cmp = op;
	snprintf(p.str, sizeof(p.str), "%s", s);
	return p;
}

static void test_preds(void)
{
	struct pea_tp_attr a = pt_tp_attr("syscalls:sys_enter_openat", openat_id, getpid());
	const char *names[NPATH + 1];
	struct pea_fetch f[2];
	struct pea_pred p[3];
	struct run r;
	int i, err;

	for (i = 0; i < NPATH; i++)
		names[i] = paths[i];
	names[NPATH] = NULL;
	f[0] = field_fx(&f_filename, PEA_FETCH_STR, 255, 0);
	f[0].user = 1;
	f[1] = field_fx(&f_dfd, PEA_FETCH_S64, 0, 0);
	set_fetches(&a, f, 2);
	p[0] = str_cmp(PEA_TP_OP_EQ, paths[2]);
	a.fetch_preds = (uintptr_t)p;
	a.nr_fetch_preds = 1;
	err = run_openat(&a, names, NPATH + 1, &r);
	PT_OK(!err && r.written == 1 && r.filtered == NPATH &&
	      r.records == 1 && hit_of(&r, 2),
	      "filename == path 2: 1 written, %d filtered (the NULL one too), its record (err %d, %llu, %llu, %d)",
	      NPATH, err, (unsigned long long)r.written,
	      (unsigned long long)r.filtered, r.records);
	/* paths 0, 1, 2 share "/tmp/pea-tpf-s*"; a NOT of it. */
	p[0] = str_cmp(PEA_TP_OP_GLOB, "/tmp/pea-tpf-s*");
	err = run_openat(&a, names, NPATH + 1, &r);
	PT_OK(!err && r.written == 3 && r.filtered == NPATH - 2 &&
	      hit_of(&r, 0) && hit_of(&r, 1) && hit_of(&r, 2),
	      "filename ~ \"/tmp/pea-tpf-s*\": 3 written, %d filtered (err %d, %llu, %llu)",
	      NPATH - 2, err, (unsigned long long)r.written,
	      (unsigned long long)r.filtered);
	memset(&p[1], 0, sizeof(p[1]));
	p[1].op = PEA_PRED_NOT;
	a.nr_fetch_preds = 2;
	err = run_openat(&a, names, NPATH + 1, &r);
	PT_OK(!err && r.written == NPATH - 2 && r.filtered == 3 &&
	      hit_of(&r, NPATH),
	      "!(filename ~ glob): %d written (the NULL one's comparison is false, its NOT true), 3 filtered (err %d, %llu, %llu)",
	      NPATH - 2, err, (unsigned long long)r.written,
	      (unsigned long long)r.filtered);
	/* With the field filter: dfd > DFD0 + 1 (inline) and the glob. */
	a.nr_fetch_preds = 1;
	a.nr_preds = 1;
	a.preds[0].offset = f_dfd.offset;
	a.preds[0].size = 8;
	a.preds[0].kind = PEA_TP_FIELD_SINT;
	a.preds[0].op = PEA_TP_OP_GT;
	a.preds[0].value = DFD0 + 1;
	err = run_openat(&a, names, NPATH + 1, &r);
	PT_OK(!err && r.written == 1 && r.filtered == NPATH && hit_of(&r, 2),
	      "dfd > %d (field filter) and the glob: 1 written (path 2), %d filtered (err %d, %llu, %llu)",
	      DFD0 + 1, NPATH, err, (unsigned long long)r.written,
	      (unsigned long long)r.filtered);
}

/* What the kernel refuses, with its errno. */
static void test_bounds(void)
{
	struct pea_tp_attr a;
	struct pea_fetch f[PEA_FETCH_MAX + 1];
	struct pea_pred p[PEA_PRED_MAX + 1];
	int i;

#define REFUSE(want, what) do {						\
		int e_ = attach_errno(&a);				\
		PT_OK(e_ == (want), "%s: %s (got %d)", what,		\
		      strerror(want), e_);				\
	} while (0)
#define FRESH(n) do {							\
		a = pt_tp_attr("syscalls:sys_enter_openat", openat_id, getpid());	\
		for (i = 0; i < PEA_FETCH_MAX + 1; i++) {		\
			f[i] = field_fx(&f_filename, PEA_FETCH_STR, 16, 0); \
			f[i].user = 1;					\
		}							\
		set_fetches(&a, f, n);					\
	} while (0)

	FRESH(1);
	PT_EQ(attach_errno(&a), 0, "a filename fetch attaches");
	FRESH(1);
	f[0].field_offset = f_filename.offset + 1;
	REFUSE(EINVAL, "a field offset inside filename, no field there");
	FRESH(1);
	f[0].field_offset = 4000;
	REFUSE(EINVAL, "a field offset past the entry (4000)");
	FRESH(1);
	f[0].field_size = 3;
	REFUSE(EINVAL, "a field size of 3");
	FRESH(1);
	f[0].field_size = 16;
	REFUSE(EINVAL, "a field size of 16");
	FRESH(1);
	f[0].field_size = 4;
	REFUSE(EINVAL, "filename's offset with 4 bytes, not its size");
	FRESH(1);
	f[0].field_offset = 4;	/* common_pid */
	f[0].field_size = 4;
	REFUSE(EINVAL, "common_pid (a common field, as an eprobe's $field)");
	FRESH(PEA_FETCH_MAX + 1);
	REFUSE(E2BIG, "9 fetches (PEA_FETCH_MAX 8)");
	FRESH(2);
	f[0].size = 600;
	f[1].size = 600;
	REFUSE(E2BIG, "two strings of 600 bytes (PEA_FETCH_DATA_MAX 1024)");
	FRESH(1);
	for (i = 0; i <= PEA_FETCH_DEPTH_MAX; i++)
		f[0] = pt_deref(f[0], 0);
	f[0].user = 0;
	REFUSE(EINVAL, "5 pointer reads (PEA_FETCH_DEPTH_MAX 4)");
	FRESH(1);
	f[0].base = PEA_FETCH_BASE_ARG;
	f[0].field_offset = 0;
	f[0].field_size = 0;
	REFUSE(EINVAL, "an argument base at a tracepoint");
	FRESH(1);
	f[0].base = PEA_FETCH_BASE_SP;
	f[0].field_offset = 0;
	f[0].field_size = 0;
	REFUSE(EINVAL, "a stack-pointer base at a tracepoint");
	FRESH(1);
	f[0].arg = 1;
	REFUSE(EINVAL, "a field base with arg 1");
	FRESH(1);
	f[0].user = 2;
	REFUSE(EINVAL, "a user bit past the chain's reads");
	FRESH(1);
	a.reserved3 = 1;
	REFUSE(EINVAL, "reserved3 not zero");
	FRESH(1);
	a.reserved4 = 1;
	REFUSE(EINVAL, "reserved4 not zero");
	FRESH(0);
	p[0] = str_cmp(PEA_TP_OP_EQ, "x");
	a.fetch_preds = (uintptr_t)p;
	a.nr_fetch_preds = 1;
	REFUSE(EINVAL, "a fetch predicate without fetches");
	FRESH(1);
	for (i = 0; i < PEA_PRED_MAX + 1; i++)
		p[i] = str_cmp(PEA_TP_OP_EQ, "x");
	a.fetch_preds = (uintptr_t)p;
	a.nr_fetch_preds = PEA_PRED_MAX + 1;
	REFUSE(E2BIG, "33 predicate instructions (PEA_PRED_MAX 32)");
	FRESH(1);
	p[0] = str_cmp(PEA_TP_OP_LT, "x");
	a.fetch_preds = (uintptr_t)p;
	a.nr_fetch_preds = 1;
	REFUSE(EINVAL, "< on a string");
	FRESH(1);
	a.fetches = 8;
	REFUSE(EFAULT, "fetches at an unmapped address");
#undef REFUSE
#undef FRESH
}

/* A field fetch at a kprobe: EINVAL (its bases are registers). */
static void test_kprobe_refuses(void)
{
	struct pea_fetch f = pt_fx(PEA_FETCH_BASE_FIELD, 0, PEA_FETCH_U64, 0,
				   0);
	struct pea_probe_attr a;
	int fd;

	f.field_offset = 16;
	f.field_size = 8;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_PROBE_F_CLOEXEC;
	strcpy(a.symbol, "ksys_mmap_pgoff");
	a.filter_cpu = -1;
	a.fetches = (uintptr_t)&f;
	a.nr_fetches = 1;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);
	PT_OK(fd < 0 && errno == EINVAL,
	      "a field base at a kprobe: EINVAL (got %d, %s)", fd,
	      fd < 0 ? strerror(errno) : "attached");
	if (fd >= 0)
		close(fd);
}

/*
 * ftrace:print's table holds a field of size 0 (its dynamic array buf):
 * a field table as the kernel makes it, taken (review of the F1 fix: it
 * answered EOPNOTSUPP and warned of another struct layout). Its ip
 * field, taken as it is, attaches.
 */
static void test_ftrace_print(void)
{
	int id = pt_tp_id("ftrace", "print");
	struct pt_tp_field f_ip;
	struct pea_tp_attr a;
	struct pea_fetch f;

	if (id <= 0 || pt_tp_get_field("ftrace", "print", "ip", &f_ip)) {
		PT_OK(0, "ftrace:print and its ip field");
		return;
	}
	a = pt_tp_attr("ftrace:print", id, 0);
	f = field_fx(&f_ip, PEA_FETCH_U64, 0, 0);
	set_fetches(&a, &f, 1);
	PT_EQ(attach_errno(&a), 0,
	      "ftrace:print (a field of size 0 in its table): its ip field fetched");
}

/* The attr of the size before @fetches, through its old number. */
static void test_old_size(void)
{
	struct pea_tp_attr a = pt_tp_attr("syscalls:sys_enter_openat", openat_id, getpid());
	struct pea_fetch f = field_fx(&f_filename, PEA_FETCH_STR, 16, 0);
	int fd;

	PT_EQ(sizeof(a), PEA_TP_ATTR_SIZE_VER2 + 32,
	      "struct pea_tp_attr: 864 bytes");
	PT_EQ(PEA_TP_ATTR_SIZE_VER2, 832, "PEA_TP_ATTR_SIZE_VER2: 832");
	/* What lies past the old size is not read: fetches ignored. */
	set_fetches(&a, &f, 1);
	a.size = PEA_TP_ATTR_SIZE_VER2;
	fd = attach_cmd(ATTACH_TP_VER2, &a);
	PT_OK(fd >= 0, "a VER2 attr through the old number attaches (%d)",
	      fd);
	if (fd >= 0)
		close(fd);
}

/*
 * The kernel pointer field hrtimer of timer:hrtimer_start, followed into
 * struct hrtimer: function (40), _softexpires (32), node.expires (24).
 * Every record of this process's nanosleep()s must carry the entry's own
 * function, softexpires and expires; the function field taken as it is
 * too; mode (a small integer) followed as a pointer faults.
 */
static void test_kernel_pointer(void)
{
	static const struct pt_tp_field *const fl[] = {
		&f_function, &f_softexpires, &f_expires, &f_hrtimer,
	};
	struct pea_tp_attr a = pt_tp_attr("timer:hrtimer_start", hrt_id, getpid());
	struct timespec ts = { 0, 1000000 };
	struct pea_fetch f[5];
	struct run r;
	int i, link, ok = 0, nsleep = 5;

	f[0] = pt_at(field_fx(&f_hrtimer, PEA_FETCH_U64, 0, PEA_FETCH_F_LOAD),
		     40);
	f[1] = pt_at(field_fx(&f_hrtimer, PEA_FETCH_S64, 0, PEA_FETCH_F_LOAD),
		     32);
	f[2] = pt_at(field_fx(&f_hrtimer, PEA_FETCH_S64, 0, PEA_FETCH_F_LOAD),
		     24);
	f[3] = field_fx(&f_function, PEA_FETCH_U64, 0, 0);
	f[4] = field_fx(&f_mode, PEA_FETCH_U64, 0, PEA_FETCH_F_LOAD);
	set_fetches(&a, f, 5);
	memset(&r, 0, sizeof(r));
	pt_rings_drain(rings, ncpu);
	link = attach_cmd(PEA_MAP_IOC_ATTACH_TP, &a);
	PT_OK(link >= 0, "timer:hrtimer_start with the hrtimer followed (%s)",
	      link < 0 ? strerror(-link) : "attached");
	if (link < 0)
		return;
	for (i = 0; i < nsleep; i++)
		nanosleep(&ts, NULL);
	link_counts(link, &r);
	close(link);
	collect(hrt_id, &r, fl, 4);
	for (i = 0; i < r.records; i++) {
		const struct hit *h = &r.hits[i];

		if (h->nval == 5 && h->v[0].status == PEA_FETCH_OK &&
		    val_u64(&h->v[0]) == h->field[0] &&
		    h->v[1].status == PEA_FETCH_OK &&
		    val_u64(&h->v[1]) == h->field[1] &&
		    h->v[2].status == PEA_FETCH_OK &&
		    val_u64(&h->v[2]) == h->field[2] &&
		    h->v[3].status == PEA_FETCH_OK &&
		    val_u64(&h->v[3]) == h->field[0] &&
		    h->v[4].status == PEA_FETCH_FAULT && h->v[4].step == 0 &&
		    !h->v[4].len)
			ok++;
		else
			PT_OK(0, "record %d: hrtimer %#llx: function %#llx (fetched %#llx, %d), softexpires %lld (%lld, %d), expires %lld (%lld, %d), mode read %d",
			      i, (unsigned long long)h->field[3],
			      (unsigned long long)h->field[0],
			      (unsigned long long)val_u64(&h->v[0]),
			      h->v[0].status, (long long)h->field[1],
			      (long long)val_u64(&h->v[1]), h->v[1].status,
			      (long long)h->field[2],
			      (long long)val_u64(&h->v[2]), h->v[2].status,
			      h->v[4].status);
	}
	/*
	 * An interrupt may start an hrtimer while this process is current
	 * until the link is closed, after its counts were read: the records
	 * (read after the close) are at least what it had written then.
	 */
	PT_OK(r.records >= nsleep && ok == r.records && !r.bad &&
	      r.written <= (__u64)r.records && !r.dropped && !r.errors,
	      "%d nanosleep()s: every record (%d; written %llu before the close, 0 dropped, 0 errors) carries hrtimer->function, ->_softexpires, ->node.expires equal to its own fields, mode followed FAULTs (%d good)",
	      nsleep, r.records, (unsigned long long)r.written, ok);
}

/* The address of kernel symbol @sym (kallsyms), 0 if none. */
static __u64 ksym_addr(const char *sym)
{
	char line[512], name[256];
	unsigned long long a, found = 0;
	char t;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &t, name) == 3 &&
		    !strcmp(name, sym)) {
			found = a;
			break;
		}
	fclose(f);
	return found;
}

static void test_nmi(void)
{
	static const struct pt_tp_field *const fl[] = { &f_handler, &f_handled };
	struct pea_tp_attr a = pt_tp_attr("nmi:nmi_handler", nmi_id, getpid());
	struct pea_st_kstack_nmi c;
	struct pea_fetch f[3];
	struct pea_tp_pred *t;
	struct pt_tp_prog g;
	int i, link, in_nmi = 0, ok = 0, n = 5;
	__u64 code = 0;
	struct run r;

	pt_st();	/* the test module, loaded */
	nmi_fn = ksym_addr("pea_st_kstack_nmi");
	PT_OK(nmi_fn, "pea_st_kstack_nmi in kallsyms");
	if (!nmi_fn)
		return;
	/* The module's handler only. */
	pt_tp_prog_reset(&g);
	t = pt_tp_put_term(&g);
	t->offset = f_handler.offset;
	t->size = 8;
	t->kind = PEA_TP_FIELD_UINT;
	t->op = PEA_TP_OP_EQ;
	t->value = nmi_fn;
	pt_tp_prog_attr(&a, &g);
	f[0] = field_fx(&f_handler, PEA_FETCH_U64, 0, 0);
	f[1] = field_fx(&f_handler, PEA_FETCH_U64, 0, PEA_FETCH_F_LOAD);
	f[2] = field_fx(&f_handled, PEA_FETCH_U64, 0, PEA_FETCH_F_LOAD);
	set_fetches(&a, f, 3);
	memset(&r, 0, sizeof(r));
	pt_rings_drain(rings, ncpu);
	link = attach_cmd(PEA_MAP_IOC_ATTACH_TP, &a);
	PT_OK(link >= 0, "nmi:nmi_handler with fetches (%s)",
	      link < 0 ? strerror(-link) : "attached");
	if (link < 0)
		return;
	for (i = 0; i < n; i++) {
		memset(&c, 0, sizeof(c));
		if (!ioctl(pt_st(), PEA_ST_IOC_KSTACK_NMI, &c) && c.in_nmi)
			in_nmi++;
	}
	/* Each NMI's handler returned before its ioctl did. */
	link_counts(link, &r);
	close(link);
	collect(nmi_id, &r, fl, 2);
	for (i = 0; i < r.records; i++) {
		const struct hit *h = &r.hits[i];

		if (!i)
			code = val_u64(&h->v[1]);
		if (h->nval == 3 && h->field[0] == nmi_fn &&
		    h->v[0].status == PEA_FETCH_OK &&
		    val_u64(&h->v[0]) == nmi_fn &&
		    h->v[1].status == PEA_FETCH_OK && h->v[1].len == 8 &&
		    val_u64(&h->v[1]) == code && code &&
		    h->v[2].status == PEA_FETCH_FAULT && h->v[2].step == 0 &&
		    !h->v[2].len && h->field[1] == 1)
			ok++;
	}
	PT_OK(in_nmi == n && r.records == n && ok == n && !r.bad &&
	      r.written == (__u64)n && !r.dropped && !r.errors,
	      "%d NMIs: %d records written in NMI context, each with the handler exact, its first 8 code bytes read (the same in all, %#llx), handled (1) followed FAULTs at read 0 (in NMI %d, records %d, good %d, written %llu, dropped %llu, errors %llu)",
	      n, n, (unsigned long long)code, in_nmi, r.records, ok,
	      (unsigned long long)r.written, (unsigned long long)r.dropped,
	      (unsigned long long)r.errors);
}

int main(void)
{
	int i;

	pt_dev();
	ncpu = pt_cpu_map("tpfetch", 64, &map_fd, ev_fd, rings);
	openat_id = pt_tp_id("syscalls", "sys_enter_openat");
	hrt_id = pt_tp_id("timer", "hrtimer_start");
	nmi_id = pt_tp_id("nmi", "nmi_handler");
	if (openat_id <= 0 || hrt_id <= 0 ||
	    pt_tp_get_field("syscalls", "sys_enter_openat", "dfd", &f_dfd) ||
	    pt_tp_get_field("syscalls", "sys_enter_openat", "filename",
		      &f_filename) ||
	    pt_tp_get_field("timer", "hrtimer_start", "hrtimer", &f_hrtimer) ||
	    pt_tp_get_field("timer", "hrtimer_start", "function", &f_function) ||
	    pt_tp_get_field("timer", "hrtimer_start", "expires", &f_expires) ||
	    pt_tp_get_field("timer", "hrtimer_start", "softexpires",
		      &f_softexpires) ||
	    pt_tp_get_field("timer", "hrtimer_start", "mode", &f_mode) ||
	    nmi_id <= 0 ||
	    pt_tp_get_field("nmi", "nmi_handler", "handler", &f_handler) ||
	    pt_tp_get_field("nmi", "nmi_handler", "handled", &f_handled)) {
		PT_OK(0, "sys_enter_openat, hrtimer_start, nmi_handler and their fields");
		return pt_done();
	}
	PT_OK(f_filename.size == 8 && f_hrtimer.size == 8 &&
	      f_function.size == 8 && f_mode.size == 4,
	      "filename, hrtimer, function: 8 bytes; mode: 4");
	/* Three under "/tmp/pea-tpf-s", one long, one of one byte. */
	snprintf(paths[0], sizeof(paths[0]), "/tmp/pea-tpf-s0");
	snprintf(paths[1], sizeof(paths[1]), "/tmp/pea-tpf-s1-no-such-file");
	snprintf(paths[2], sizeof(paths[2]), "/tmp/pea-tpf-s2");
	snprintf(paths[3], sizeof(paths[3]), "/etc/hostname");
	memset(paths[4], 'x', 200);
	paths[4][0] = '/';
	paths[4][200] = 0;
	snprintf(paths[5], sizeof(paths[5]), "x");
	for (i = 0; i < NPATH; i++)
		PT_OK(strlen(paths[i]) < 256, "path %d fits", i);
	test_strings();
	test_faults();
	test_preds();
	test_bounds();
	test_kprobe_refuses();
	test_old_size();
	test_ftrace_print();
	test_kernel_pointer();
	test_nmi();
	return pt_done();
}
