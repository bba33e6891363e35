// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoint producers (PEA_MAP_IOC_ATTACH_TP): exact records of
 * syscalls:sys_enter_openat and sched:sched_process_exec for calls the
 * test makes itself, the raw entry checked field by field against the
 * tracefs format file, filters (numbers, char arrays, __data_loc strings,
 * glob) with exact written and filtered counts, the link's counters and
 * debugfs line, errnos, and attach/detach under load with exact
 * accounting.
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <sys/prctl.h>
#include "pea_test.h"
#include "pt_tp.h"
#include "pt_exec.h"

#define NCPU_MAX	64
#define TRACEFS		"/sys/kernel/tracing/events/"

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];

struct field {
	unsigned int offset, size;
	bool is_signed;
};

static void setup_map(void)
{
	ncpu = pt_cpu_map("tp", 64, &map_fd, ev_fd, rings);
}

static void drain_all(void)
{
	pt_rings_drain(rings, ncpu);
}

/* Field @fname of SYS/NAME's format: 0, or -1 if there is none. */
static int get_field(const char *sys, const char *name, const char *fname,
		     struct field *f)
{
	static char buf[16384];
	char path[256], pat[96], *p, *q;

	snprintf(path, sizeof(path), TRACEFS "%s/%s/format", sys, name);
	if (pt_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	for (p = strstr(buf, "field:"); p; p = strstr(p + 1, "field:")) {
		q = strchr(p, ';');
		if (!q)
			return -1;
		snprintf(pat, sizeof(pat), " %s", fname);
		/* The declaration ends with " NAME" or " NAME[N]". */
		*q = 0;
		if ((strlen(p) > strlen(pat) &&
		     !strcmp(p + strlen(p) - strlen(pat), pat)) ||
		    (strstr(p, pat) && strstr(p, pat)[strlen(pat)] == '[')) {
			*q = ';';
			if (sscanf(q, "; offset:%u; size:%u; signed:%d",
				   &f->offset, &f->size, (int *)&f->is_signed) != 3)
				return -1;
			return 0;
		}
		*q = ';';
	}
	return -1;
}

static int attach(struct pea_tp_attr *a)
{
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, a);

	return fd < 0 ? -errno : fd;
}

static void link_info(int link, struct pea_link_info *li)
{
	memset(li, 0, sizeof(*li));
	if (ioctl(link, PEA_LINK_IOC_INFO, li))
		pt_fatal("PEA_LINK_IOC_INFO");
}

/*
 * The next tracepoint record with event id @id on any CPU ring,
 * optionally only those of @tgid (0: any). Returns the raw entry.
 */
static struct pea_tp_record *next_tp(int id, __u32 tgid, int *cpu_out)
{
	struct perf_event_header *h = (void *)rec;
	struct pea_tp_record *r;
	int cpu;

	for (cpu = 0; cpu < ncpu; cpu++) {
		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			r = (void *)(rec + 12);
			if (r->event_id != (__u64)id ||
			    (tgid && r->tgid != tgid))
				continue;
			if (cpu_out)
				*cpu_out = cpu;
			return r;
		}
	}
	return NULL;
}

static __u64 field_u(const struct pea_tp_record *r, const struct field *f)
{
	const unsigned char *e = (const unsigned char *)(r + 1);
	__u64 v = 0;

	memcpy(&v, e + f->offset, f->size);	/* little endian */
	return v;
}

/* ---- syscalls:sys_enter_openat ---- */

static void test_openat(void)
{
	static const char path[] = "/tmp/pea-tp-openat-file";
	struct field fnr, fdfd, ffile, fflags, fmode, ftype, fpid;
	int id = pt_tp_id("syscalls", "sys_enter_openat");
	struct pea_tp_attr a;
	struct pea_link_info li;
	struct pea_tp_record *r;
	char dbg[8192];
	int link, fd, cpu = -1;
	__u32 want_raw;

	PT_OK(id > 0, "syscalls:sys_enter_openat has an id in tracefs (%d)",
	      id);
	if (id <= 0 ||
	    get_field("syscalls", "sys_enter_openat", "__syscall_nr", &fnr) ||
	    get_field("syscalls", "sys_enter_openat", "dfd", &fdfd) ||
	    get_field("syscalls", "sys_enter_openat", "filename", &ffile) ||
	    get_field("syscalls", "sys_enter_openat", "flags", &fflags) ||
	    get_field("syscalls", "sys_enter_openat", "mode", &fmode) ||
	    get_field("syscalls", "sys_enter_openat", "common_type", &ftype) ||
	    get_field("syscalls", "sys_enter_openat", "common_pid", &fpid)) {
		PT_OK(0, "sys_enter_openat: the format has every field");
		return;
	}
	a = pt_tp_attr("syscalls:sys_enter_openat", id, 0);
	a.id = 0x7a;
	a.filter_tgid = getpid();
	link = attach(&a);
	PT_OK(link >= 0, "syscalls:sys_enter_openat attaches (%d)", link);
	if (link < 0)
		return;
	PT_EQ(fcntl(link, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC,
	      "PEA_TP_F_CLOEXEC sets FD_CLOEXEC on the link");
	pt_pin(1 % ncpu);
	drain_all();
	fd = syscall(SYS_openat, (long)AT_FDCWD, path, O_RDWR | O_CREAT | O_EXCL,
		     0640);
	if (fd >= 0)
		close(fd);
	r = next_tp(id, getpid(), &cpu);
	PT_OK(r, "sys_enter_openat: the call left a record");
	if (r) {
		const unsigned char *e = (const unsigned char *)(r + 1);

		PT_EQ(cpu, 1 % ncpu, "sys_enter_openat: in the ring of the CPU");
		PT_EQ(r->cpu, 1 % ncpu, "sys_enter_openat: cpu");
		PT_EQ(r->pid, gettid(), "sys_enter_openat: pid is the thread");
		PT_EQ(r->tgid, getpid(), "sys_enter_openat: tgid");
		PT_OK(!strcmp(r->comm, "test_tp"), "sys_enter_openat: comm");
		PT_EQ(r->id, 0x7a, "sys_enter_openat: producer id");
		PT_EQ(r->event_id, id, "sys_enter_openat: event id");
		PT_EQ(r->flags, PEA_REC_F_TRACEPOINT,
		      "sys_enter_openat: flags PEA_REC_F_TRACEPOINT");
		PT_OK(!r->reserved && !r->reserved2,
		      "sys_enter_openat: reserved fields zero");
		/* perf: the entry, padded so that u32 size + data is 8-aligned. */
		want_raw = ((fmode.offset + fmode.size + 4 + 7) & ~7U) - 4;
		PT_EQ(r->raw_size, want_raw,
		      "sys_enter_openat: raw size is perf's (%u)", want_raw);
		PT_EQ(field_u(r, &ftype), id, "raw: common_type is the id");
		PT_EQ(field_u(r, &fpid), gettid(), "raw: common_pid");
		PT_EQ(field_u(r, &fnr), SYS_openat, "raw: __syscall_nr");
		PT_EQ((__s64)field_u(r, &fdfd), AT_FDCWD, "raw: dfd");
		PT_EQ(field_u(r, &ffile), (unsigned long)path,
		      "raw: filename is the pointer passed");
		PT_EQ(field_u(r, &fflags), O_RDWR | O_CREAT | O_EXCL,
		      "raw: flags");
		PT_EQ(field_u(r, &fmode), 0640, "raw: mode");
		PT_OK(e[want_raw - 1] == 0 && e[want_raw - 2] == 0 &&
		      e[want_raw - 3] == 0 && e[want_raw - 4] == 0,
		      "raw: perf's padding is zero");
	}
	r = next_tp(id, getpid(), NULL);
	PT_OK(!r, "sys_enter_openat: exactly one record");
	link_info(link, &li);
	PT_EQ(li.id, 0x7a, "info: id");
	PT_EQ(li.addr, id, "info: addr is the event id");
	PT_OK(!strcmp(li.symbol, "syscalls:sys_enter_openat"),
	      "info: symbol is the name");
	PT_EQ(li.written, 1, "info: one record written");
	PT_EQ(li.errors, 0, "info: no errors");
	PT_EQ(li.missed, 0, "info: missed 0");
	PT_EQ(li.dropped, 0, "info: no drops");
	PT_EQ(li.hits, li.written + li.filtered + li.errors + li.dropped,
	      "info: hits = written + filtered + errors + dropped");
	PT_OK(pt_read_file("/sys/kernel/debug/pea/links", dbg, sizeof(dbg)) == 0 &&
	      strstr(dbg, " syscalls:sys_enter_openat "),
	      "debugfs links lists the tracepoint link");
	close(link);
	unlink(path);
	PT_OK(pt_read_file("/sys/kernel/debug/pea/links", dbg, sizeof(dbg)) == 0 &&
	      !strstr(dbg, " syscalls:sys_enter_openat "),
	      "debugfs: the link is gone after close");
}

/* ---- sched:sched_process_exec ---- */

static char self_exe[256];

/* Fork a child that execs @path (this program) and exits at once. */
static void test_exec(void)
{
	static const char other[] = "/tmp/pea_tp_other";
	struct field ffile, fpid, fold;
	int id = pt_tp_id("sched", "sched_process_exec");
	struct pea_tp_attr a;
	struct pea_link_info li;
	struct pea_tp_record *r;
	int link, n;
	pid_t child;

	PT_OK(id > 0, "sched:sched_process_exec has an id (%d)", id);
	if (id <= 0 ||
	    get_field("sched", "sched_process_exec", "filename", &ffile) ||
	    get_field("sched", "sched_process_exec", "pid", &fpid) ||
	    get_field("sched", "sched_process_exec", "old_pid", &fold)) {
		PT_OK(0, "sched_process_exec: the format has every field");
		return;
	}
	PT_EQ(ffile.size, 4, "sched_process_exec: filename is a __data_loc");
	a = pt_tp_attr("sched:sched_process_exec", id, 0);
	link = attach(&a);
	PT_OK(link >= 0, "sched:sched_process_exec attaches (%d)", link);
	if (link < 0)
		return;
	drain_all();
	child = pt_exec_exit(self_exe);
	r = next_tp(id, child, NULL);
	PT_OK(r, "sched_process_exec: the child's exec left a record");
	if (r) {
		const char *e = (const char *)(r + 1);
		__u32 loc = field_u(r, &ffile);
		__u32 off = loc & 0xffff, len = loc >> 16;

		PT_EQ(r->pid, child, "sched_process_exec: pid is the child");
		PT_EQ(r->tgid, child, "sched_process_exec: tgid is the child");
		PT_OK(!strcmp(r->comm, "test_tp"),
		      "sched_process_exec: comm is the new program's (%s)",
		      r->comm);
		PT_EQ(field_u(r, &fpid), child, "raw: pid field");
		PT_EQ(field_u(r, &fold), child, "raw: old_pid field");
		PT_EQ(len, strlen(self_exe) + 1,
		      "raw: the __data_loc length is the path's with its NUL");
		PT_OK(off + len <= r->raw_size &&
		      !memcmp(e + off, self_exe, strlen(self_exe) + 1),
		      "raw: the __data_loc filename is %s", self_exe);
	}
	link_info(link, &li);
	PT_EQ(li.written, 1, "sched_process_exec: one record written");
	close(link);

	/* A __data_loc glob: only the exec through the other name. */
	unlink(other);
	if (symlink(self_exe, other))
		pt_fatal("symlink");
	a = pt_tp_attr("sched:sched_process_exec", id, 0);
	a.nr_preds = 1;
	a.preds[0].offset = ffile.offset;
	a.preds[0].size = 4;
	a.preds[0].kind = PEA_TP_FIELD_DATA_LOC;
	a.preds[0].op = PEA_TP_OP_GLOB;
	strcpy(a.preds[0].str, "/tmp/pea_tp_o*er");
	link = attach(&a);
	PT_OK(link >= 0, "exec with a glob filter attaches (%d)", link);
	if (link < 0)
		return;
	drain_all();
	for (n = 0; n < 3; n++) {
		pt_exec_exit(self_exe);
		child = pt_exec_exit(other);
	}
	link_info(link, &li);
	PT_EQ(li.written, 3, "glob: the 3 execs of %s written", other);
	PT_EQ(li.filtered, 3, "glob: the 3 other execs filtered");
	PT_EQ(li.hits, 6, "glob: 6 hits");
	for (n = 0; next_tp(id, 0, NULL); n++)
		;
	PT_EQ(n, 3, "glob: 3 records in the rings");
	close(link);

	/* String inequality: everything but the other name. */
	a.preds[0].op = PEA_TP_OP_NE;
	strcpy(a.preds[0].str, other);
	link = attach(&a);
	PT_OK(link >= 0, "exec with a != filter attaches (%d)", link);
	if (link < 0)
		return;
	pt_exec_exit(self_exe);
	pt_exec_exit(other);
	link_info(link, &li);
	PT_OK(li.written == 1 && li.filtered == 1,
	      "!= on a __data_loc string: 1 written, 1 filtered (%llu, %llu)",
	      (unsigned long long)li.written,
	      (unsigned long long)li.filtered);
	close(link);
	unlink(other);
}

/* ---- filters on numbers and char arrays ---- */

static struct pea_tp_pred num_pred(const struct field *f, int op, __u64 v)
{
	struct pea_tp_pred p;

	memset(&p, 0, sizeof(p));
	p.offset = f->offset;
	p.size = f->size;
	p.kind = f->is_signed ? PEA_TP_FIELD_SINT : PEA_TP_FIELD_UINT;
	p.op = op;
	p.value = v;
	return p;
}

/* openat(dfd, "x", flags) for each dfd, then the records written. */
static __u64 openat_filtered(int id, const struct pea_tp_pred *preds, int n,
			     const int *dfds, int nd, int flags, int *seen)
{
	struct pea_tp_attr a = pt_tp_attr("syscalls:sys_enter_openat", id, 0);
	struct pea_link_info li;
	struct field fdfd;
	struct pea_tp_record *r;
	int link, i;

	memcpy(a.preds, preds, n * sizeof(*preds));
	a.nr_preds = n;
	link = attach(&a);
	if (link < 0) {
		pt_diag("attach: %d", link);
		return ~0ULL;
	}
	drain_all();
	for (i = 0; i < nd; i++)
		syscall(SYS_openat, (long)dfds[i], "pea-tp-no-such-file",
			(long)flags);
	link_info(link, &li);
	close(link);
	get_field("syscalls", "sys_enter_openat", "dfd", &fdfd);
	for (i = 0; i < nd; i++)
		seen[i] = 0;
	while ((r = next_tp(id, getpid(), NULL)))
		for (i = 0; i < nd; i++)
			if ((__s64)field_u(r, &fdfd) == dfds[i])
				seen[i]++;
	return li.written;
}

static void test_num_filters(void)
{
	static const int dfds[] = { 1000, 2000, 3000, -100 };
	struct field fdfd, fpid, fflags;
	int id = pt_tp_id("syscalls", "sys_enter_openat");
	struct pea_tp_pred p[4];
	int seen[4];
	__u64 w;

	if (id <= 0 ||
	    get_field("syscalls", "sys_enter_openat", "dfd", &fdfd) ||
	    get_field("syscalls", "sys_enter_openat", "flags", &fflags) ||
	    get_field("syscalls", "sys_enter_openat", "common_pid", &fpid)) {
		PT_OK(0, "filters: sys_enter_openat format");
		return;
	}
	/* Syscall arguments are unsigned longs in the format (signed:0). */
	PT_EQ(fdfd.size, 8, "dfd: 8 bytes, as every syscall argument");
	p[0] = num_pred(&fpid, PEA_TP_OP_EQ, gettid());
	p[1] = num_pred(&fdfd, PEA_TP_OP_GT, 1000);
	p[2] = num_pred(&fdfd, PEA_TP_OP_NE, 3000);
	p[1].kind = PEA_TP_FIELD_SINT;
	p[2].kind = PEA_TP_FIELD_SINT;
	w = openat_filtered(id, p, 3, dfds, 4, O_RDONLY, seen);
	PT_OK(w == 1 && seen[1] == 1 && !seen[0] && !seen[2] && !seen[3],
	      "pid == && dfd > 1000 && dfd != 3000: only dfd 2000 (%llu)",
	      (unsigned long long)w);
	p[1].kind = PEA_TP_FIELD_UINT;
	w = openat_filtered(id, p, 3, dfds, 4, O_RDONLY, seen);
	PT_OK(w == 2 && seen[1] == 1 && seen[3] == 1,
	      "unsigned dfd > 1000: 2000 and -100 (%llu)",
	      (unsigned long long)w);
	p[1] = num_pred(&fdfd, PEA_TP_OP_LT, 0);
	p[1].kind = PEA_TP_FIELD_SINT;
	w = openat_filtered(id, p, 2, dfds, 4, O_RDONLY, seen);
	PT_OK(w == 1 && seen[3] == 1 && !seen[0] && !seen[1] && !seen[2],
	      "signed dfd < 0: only -100 (%llu)",
	      (unsigned long long)w);
	p[1] = num_pred(&fdfd, PEA_TP_OP_GT, 0);
	p[1].kind = PEA_TP_FIELD_SINT;
	w = openat_filtered(id, p, 2, dfds, 4, O_RDONLY, seen);
	PT_OK(w == 3 && !seen[3], "signed dfd > 0: three calls (%llu)",
	      (unsigned long long)w);
	p[1] = num_pred(&fflags, PEA_TP_OP_AND, O_DIRECTORY);
	w = openat_filtered(id, p, 2, dfds, 4, O_RDONLY | O_DIRECTORY, seen);
	PT_OK(w == 4, "flags & O_DIRECTORY: all four (%llu)",
	      (unsigned long long)w);
	w = openat_filtered(id, p, 2, dfds, 4, O_RDONLY, seen);
	PT_OK(w == 0, "flags & O_DIRECTORY without it: none (%llu)",
	      (unsigned long long)w);
	/* A field past the entry fails the predicate, never reads past it. */
	p[1] = num_pred(&fdfd, PEA_TP_OP_NE, 12345);
	p[1].offset = 4000;
	w = openat_filtered(id, p, 2, dfds, 4, O_RDONLY, seen);
	PT_OK(w == 0, "a field past the entry's end never matches (%llu)",
	      (unsigned long long)w);
}

/* sched:sched_process_fork's parent_comm, a char[16]. */
static void test_str_filters(void)
{
	int id = pt_tp_id("sched", "sched_process_fork");
	struct pea_tp_attr a = pt_tp_attr("sched:sched_process_fork", id, 0);
	struct field fcomm;
	struct pea_link_info li;
	int link, i;

	if (id <= 0 ||
	    get_field("sched", "sched_process_fork", "parent_comm", &fcomm)) {
		PT_OK(0, "sched_process_fork: format");
		return;
	}
	PT_EQ(fcomm.size, 16, "parent_comm is a char[16]");
	a.nr_preds = 1;
	a.preds[0].offset = fcomm.offset;
	a.preds[0].size = fcomm.size;
	a.preds[0].kind = PEA_TP_FIELD_STR;
	a.preds[0].op = PEA_TP_OP_EQ;
	strcpy(a.preds[0].str, "pea_tp_fork_a");
	link = attach(&a);
	PT_OK(link >= 0, "fork with a comm == filter attaches (%d)", link);
	if (link < 0)
		return;
	for (i = 0; i < 4; i++) {
		prctl(PR_SET_NAME, i & 1 ? "pea_tp_fork_b" : "pea_tp_fork_a");
		pt_exec_exit(self_exe);
	}
	prctl(PR_SET_NAME, "test_tp");
	link_info(link, &li);
	PT_OK(li.written == 2 && li.filtered == 2,
	      "parent_comm == \"pea_tp_fork_a\": 2 written, 2 filtered (%llu, %llu)",
	      (unsigned long long)li.written,
	      (unsigned long long)li.filtered);
	close(link);
	a.preds[0].op = PEA_TP_OP_GLOB;
	strcpy(a.preds[0].str, "pea_tp_?ork_*b");
	link = attach(&a);
	for (i = 0; i < 3; i++) {
		prctl(PR_SET_NAME, i ? "pea_tp_fork_b" : "pea_tp_fork_a");
		pt_exec_exit(self_exe);
	}
	prctl(PR_SET_NAME, "test_tp");
	link_info(link, &li);
	PT_OK(li.written == 2 && li.filtered == 1,
	      "parent_comm glob \"pea_tp_?ork_*b\": 2 written, 1 filtered (%llu, %llu)",
	      (unsigned long long)li.written,
	      (unsigned long long)li.filtered);
	close(link);
	drain_all();
}

/* ---- errnos ---- */

static int attach_errno(struct pea_tp_attr a)
{
	int fd = attach(&a);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -fd;
}

static void test_errors(void)
{
	int id = pt_tp_id("syscalls", "sys_enter_openat");
	struct pea_tp_attr good = pt_tp_attr("syscalls:sys_enter_openat", id, 0);
	struct pea_tp_attr a;
	struct {
		struct pea_tp_attr a;
		char tail[8];
	} big;
	int status;
	pid_t child;

	PT_EQ(attach_errno(good), 0, "errors: the good attr attaches");
	a = good;
	a.event_id = 0;
	PT_EQ(attach_errno(a), EINVAL, "event id 0: EINVAL");
	a.event_id = 0x7ffffff0;
	PT_EQ(attach_errno(a), EINVAL,
	      "an id no trace event has: EINVAL (perf_event_open's)");
	a = good;
	a.name[0] = 0;
	PT_EQ(attach_errno(a), EINVAL, "empty name: EINVAL");
	a = good;
	memset(a.name, 'x', sizeof(a.name));
	PT_EQ(attach_errno(a), EINVAL, "unterminated name: EINVAL");
	a = good;
	a.flags |= 1;
	PT_EQ(attach_errno(a), EINVAL, "unknown flag: EINVAL");
	a = good;
	a.size = PEA_TP_ATTR_SIZE_VER0 - 8;
	PT_EQ(attach_errno(a), EINVAL, "attr shorter than VER0: EINVAL");
	memset(&big, 0, sizeof(big));
	big.a = good;
	big.a.size = sizeof(big);
	PT_EQ(-(ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &big) < 0 ? errno : 0) +
	      0, 0, "zero tail: accepted");
	big.tail[3] = 1;
	PT_EQ(pt_ioctl_errno(map_fd, PEA_MAP_IOC_ATTACH_TP, &big), E2BIG,
	      "non-zero tail: E2BIG");
	a = good;
	a.filter_cpu = -2;
	PT_EQ(attach_errno(a), EINVAL, "filter_cpu -2: EINVAL");
	a = good;
	a.filter_tgid = -1;
	PT_EQ(attach_errno(a), EINVAL, "negative filter_tgid: EINVAL");
	a = good;
	a.nr_preds = PEA_TP_PRED_MAX + 1;
	PT_EQ(attach_errno(a), EINVAL, "nr_preds past the maximum: EINVAL");
	a = good;
	a.nr_preds = 1;
	a.preds[0].kind = PEA_TP_FIELD_UINT;
	a.preds[0].size = 4;
	a.preds[0].op = PEA_TP_OP_EQ;
	PT_EQ(attach_errno(a), 0, "a good predicate attaches");
	a.preds[0].size = 3;
	PT_EQ(attach_errno(a), EINVAL, "number of size 3: EINVAL");
	a.preds[0].size = 4;
	a.preds[0].op = PEA_TP_OP_GLOB;
	PT_EQ(attach_errno(a), EINVAL, "glob on a number: EINVAL");
	a.preds[0].op = 0;
	PT_EQ(attach_errno(a), EINVAL, "op 0: EINVAL");
	a.preds[0].op = PEA_TP_OP_EQ;
	a.preds[0].kind = 9;
	PT_EQ(attach_errno(a), EINVAL, "unknown kind: EINVAL");
	a.preds[0].kind = PEA_TP_FIELD_DATA_LOC;
	a.preds[0].size = 8;
	PT_EQ(attach_errno(a), EINVAL, "__data_loc of size 8: EINVAL");
	a.preds[0].size = 4;
	a.preds[0].op = PEA_TP_OP_LT;
	PT_EQ(attach_errno(a), EINVAL, "< on a string: EINVAL");
	a.preds[0].op = PEA_TP_OP_EQ;
	memset(a.preds[0].str, 'a', sizeof(a.preds[0].str));
	PT_EQ(attach_errno(a), EINVAL, "unterminated string operand: EINVAL");
	a.preds[0].str[PEA_TP_STR_MAX - 1] = 0;
	PT_EQ(attach_errno(a), 0, "a 63-byte string operand attaches");
	a.preds[0].reserved = 1;
	PT_EQ(attach_errno(a), EINVAL, "reserved bits in a predicate: EINVAL");
	a = good;
	a.preds[2].op = 1;
	PT_EQ(attach_errno(a), EINVAL, "a non-zero unused predicate: EINVAL");

	child = fork();
	if (child == 0) {
		if (setresuid(65534, 65534, 65534))
			_exit(100);
		_exit(attach_errno(good));
	}
	waitpid(child, &status, 0);
	PT_EQ(WEXITSTATUS(status), EACCES,
	      "attach: an unprivileged user gets EACCES (as a raw tracepoint event)");
}

/* ---- attach and detach under load ---- */

static volatile int load_stop;

static void *load_thread(void *arg)
{
	int cpu = (int)(long)arg;

	pt_pin(cpu);
	while (!load_stop)
		syscall(SYS_getppid);
	return NULL;
}

static void load_start(pthread_t *th)
{
	int i;

	load_stop = 0;
	for (i = 0; i < ncpu; i++)
		pthread_create(&th[i], NULL, load_thread, (void *)(long)i);
}

static void load_end(pthread_t *th)
{
	int i;

	load_stop = 1;
	for (i = 0; i < ncpu; i++)
		pthread_join(th[i], NULL);
}

/* Records and lost counts in every ring; clears the pending lost. */
static void count_rings(__u64 *got, __u64 *lost)
{
	struct perf_event_header *h = (void *)rec;
	int cpu;

	for (cpu = 0; cpu < ncpu; cpu++) {
		__u64 pend = 0;

		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type == PERF_RECORD_LOST)
				*lost += ((__u64 *)(rec + 8))[1];
			else if (h->type == PERF_RECORD_SAMPLE)
				(*got)++;
		}
		if (!ioctl(ev_fd[cpu], PEA_EVENT_IOC_TAKE_LOST, &pend))
			*lost += pend;
	}
}

static void test_load(void)
{
	int id = pt_tp_id("syscalls", "sys_enter_getppid");
	__u64 written = 0, hits = 0, errors = 0, other = 0, got = 0, lost = 0;
	pthread_t th[NCPU_MAX];
	int objs[4] = { 0 }, objs0[4] = { 0 };
	int i, link, bad = 0;

	PT_OK(id > 0, "syscalls:sys_enter_getppid has an id (%d)", id);
	if (id <= 0)
		return;
	pt_read_objects_settled(objs0);
	/* Attach and detach while every CPU hits the tracepoint. */
	load_start(th);
	for (i = 0; i < 30; i++) {
		struct pea_tp_attr a = pt_tp_attr("syscalls:sys_enter_getppid", id, 0);

		a.filter_tgid = getpid();
		link = attach(&a);
		if (link < 0) {
			bad++;
			continue;
		}
		usleep(2000);
		close(link);
		count_rings(&got, &lost);
	}
	load_end(th);
	PT_EQ(bad, 0, "30 attaches and detaches under load");
	PT_OK(got > 0, "under load: %llu records, %llu lost",
	      (unsigned long long)got, (unsigned long long)lost);
	count_rings(&got, &lost);

	/*
	 * Exact accounting: attach under load, stop the load, read the
	 * counters, detach: every hit is in a ring or counted lost, and a
	 * record the ring could not take is the link's drop (ENOSPC).
	 */
	got = 0;
	lost = 0;
	for (i = 0; i < 10; i++) {
		struct pea_tp_attr a = pt_tp_attr("syscalls:sys_enter_getppid", id, 0);
		struct pea_link_info li;

		load_start(th);
		a.filter_tgid = getpid();
		link = attach(&a);
		usleep(3000);
		load_end(th);
		if (link < 0) {
			bad++;
			continue;
		}
		link_info(link, &li);
		close(link);
		written += li.written;
		errors += li.dropped;
		other += li.errors;
		hits += li.hits - li.filtered;
		count_rings(&got, &lost);
	}
	PT_EQ(bad, 0, "10 more attaches under load");
	PT_OK(hits > 0 && got + lost == hits,
	      "accounting: %llu received + %llu lost == %llu attempted",
	      (unsigned long long)got, (unsigned long long)lost,
	      (unsigned long long)hits);
	PT_OK(got == written && lost == errors && other == 0,
	      "received == written (%llu), lost == the link's drops (%llu), no errors",
	      (unsigned long long)written, (unsigned long long)errors);

	/* Counters exact for a known count of calls. */
	written = 0;
	hits = 0;
	for (i = 0; i < 5; i++) {
		struct pea_tp_attr a = pt_tp_attr("syscalls:sys_enter_getppid", id, 0);
		struct pea_link_info li;
		int k;

		a.filter_tgid = getpid();
		link = attach(&a);
		if (link < 0)
			continue;
		for (k = 0; k < 200; k++)
			syscall(SYS_getppid);
		link_info(link, &li);
		close(link);
		written += li.written;
		hits += li.hits;
	}
	PT_EQ(written, 1000, "5 links x 200 getppid(): 1000 written");
	PT_EQ(hits, 1000, "and 1000 hits");
	drain_all();
	for (i = 0; i < 1000 && pt_read_objects(objs) == 0 &&
	     objs[3] != objs0[3]; i++)
		usleep(1000);
	PT_EQ(objs[3], objs0[3], "no link left after attach/detach (%d)",
	      objs[3]);
}

int main(int argc, char **argv)
{
	pt_exec_init(argc, argv, self_exe, sizeof(self_exe));
	pt_dev();
	setup_map();
	test_openat();
	test_exec();
	test_num_filters();
	test_str_filters();
	test_errors();
	test_load();
	return pt_done();
}
