// SPDX-License-Identifier: GPL-2.0
/*
 * pea's kfunc pea_kf_output() called by BPF programs (docs/kfuncs.md):
 * /sys/kernel/btf/pea and the state in debugfs and pea stat; a SYSCALL
 * and an XDP program run through BPF_PROG_TEST_RUN and an fentry program
 * on bpf_fentry_test1() (which the kernel calls when the test runs a
 * tracing program through BPF_PROG_TEST_RUN), each writing known bytes
 * that libpea reads back exactly; a kprobe, a tracepoint and a perf_event
 * program on a cpu-clock event (its hrtimer interrupt), which the kernel
 * lets call module kfuncs or refuses with the verifier's message, as the
 * module says it registered; the verifier's refusal of a size it cannot
 * bound; the errnos in bpf_perf_event_output()'s order and their per-map
 * counters; a full ring's losses; records of a BPF program and of
 * pea_output() on every CPU in one ordered stream; examples/bpf/opensnoop
 * run as a user runs it; maps destroyed under a running program; and the
 * module held while a program that calls the kfunc is loaded. The
 * zero-copy kfuncs (pea_kf_reserve(), pea_kf_rec_data(), pea_kf_commit()):
 * the program types named per kernel; an XDP program's known bytes read
 * back exactly; more payload than reserved refused (NULL) and the record
 * still committed; a bad handle, CTXLEN flags and a bad index counted; a
 * full one-page ring's exact losses; a kprobe program allowed on 6.12 and
 * refused on 6.1; and the verifier's refusals of a record held at exit,
 * a size that is not a constant, a write past the size, a write after
 * the commit, and a SYSCALL program.
 *
 * Where pea.ko has no kfuncs the test asserts the state says so, and
 * why: on a kernel with module BTF (/sys/kernel/btf/vmlinux) the build
 * must have given pea.ko BTF, so there the kfuncs must be on.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_perm.h"
#include "libpea.h"
#include "test_kfunc.h"
#include "test_kfunc.skel.h"
#include "test_kfunc_zc.skel.h"

#define KFUNC_FILE	"/sys/kernel/debug/pea/kfunc"
#define PAGES		32	/* 128 KiB rings: a 65516-byte payload fits */

static unsigned char got[2][KF_PAYLOAD_MAX];
static __u32 got_size[2];
static int got_cpu[2];
static int nrec;
static __u64 nlost;
static char vlog[65536];
static size_t vlog_len;

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	if (nrec < 2 && size <= sizeof(got[0])) {
		memcpy(got[nrec], data, size);
		got_size[nrec] = size;
		got_cpu[nrec] = cpu;
	}
	nrec++;
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	nlost += cnt;
}

static int on_print(enum libbpf_print_level level, const char *fmt,
		    va_list ap)
{
	int n;

	if (vlog_len < sizeof(vlog) - 1) {
		n = vsnprintf(vlog + vlog_len, sizeof(vlog) - vlog_len, fmt, ap);
		if (n > 0)
			vlog_len += (size_t)n;
		if (vlog_len >= sizeof(vlog))
			vlog_len = sizeof(vlog) - 1;
	}
	return 0;
}

/* The kfunc file: the "state" line's value into @state, or -1. */
static int kf_state(char *state, size_t len, char *types, size_t tlen)
{
	char buf[8192], *p, *nl;

	if (pt_read_file(KFUNC_FILE, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "state ");
	if (!p)
		return -1;
	nl = strchr(p, '\n');
	snprintf(state, len, "%.*s", (int)(nl ? nl - p - 6 : (long)strlen(p + 6)),
		 p + 6);
	types[0] = 0;
	p = strstr(buf, "program_types ");
	if (p) {
		nl = strchr(p, '\n');
		snprintf(types, tlen, "%.*s",
			 (int)(nl ? nl - p - 14 : (long)strlen(p + 14)), p + 14);
	}
	return 0;
}

static long long kf_bad_handle(void)
{
	char buf[8192], *p;

	if (pt_read_file(KFUNC_FILE, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "bad_handle ");
	return p ? atoll(p + 11) : -1;
}

/*
 * A map's line of the kfunc file: bpf_write, then the counters in the
 * order of its header (einval e2big enoent eopnotsupp ebusy enospc efault).
 */
enum { C_BPFW, C_EINVAL, C_E2BIG, C_ENOENT, C_EOPNOTSUPP, C_EBUSY,
	C_ENOSPC, C_EFAULT, C_NR };

/* The zero-copy kfuncs' column after them: reserves where it may sleep. */
static long long kf_map_may_sleep(__u64 id)
{
	char buf[65536], *line, *save = NULL;
	unsigned long long mid;
	long long c[C_NR + 1];
	char name[32];

	if (pt_read_file(KFUNC_FILE, buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%llu %31s %lld %lld %lld %lld %lld %lld %lld %lld %lld",
			   &mid, name, &c[0], &c[1], &c[2], &c[3], &c[4], &c[5],
			   &c[6], &c[7], &c[8]) == 11 && mid == id)
			return c[8];
	}
	return -1;
}

static int kf_map_counters(__u64 id, long long c[C_NR])
{
	char buf[65536], *line, *save = NULL;
	unsigned long long mid;
	char name[32];

	if (pt_read_file(KFUNC_FILE, buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%llu %31s %lld %lld %lld %lld %lld %lld %lld %lld",
			   &mid, name, &c[0], &c[1], &c[2], &c[3], &c[4], &c[5],
			   &c[6], &c[7]) == 10 && mid == id)
			return 0;
	}
	return -1;
}

static __u64 map_id_of(int fd)
{
	struct pea_map_info info;

	if (pea_map_get_info(fd, &info))
		pt_fatal("pea_map_get_info");
	return info.id;
}

/* The BPF handle a program names the map by (PEA_F_BPF_WRITE), or 0. */
static __u64 handle_of(int fd)
{
	struct pea_map_info info;

	if (pea_map_get_info(fd, &info))
		pt_fatal("pea_map_get_info");
	return info.bpf_handle;
}

/* The main map's id, for its counters (the tests get its handle). */
static __u64 main_id;

static long run_syscall(struct test_kfunc *skel, __u64 handle, __u64 flags,
			__u32 size)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int err;

	skel->bss->map_handle = handle;
	skel->bss->out_flags = flags;
	skel->bss->out_size = size;
	skel->bss->ret_syscall = 12345;
	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.kf_syscall),
				     &opts);
	if (err)
		return 1000 + err;
	return skel->bss->ret_syscall;
}

static int module_refcnt(void)
{
	char buf[32];

	if (pt_read_file("/sys/module/pea/refcnt", buf, sizeof(buf)) < 0)
		return -1;
	return atoi(buf);
}

/*
 * pea's reference count once it has held still for a second: the
 * programs an earlier test loaded (test_fuzz's kfunc family) are freed
 * after a grace period and a work item, and drop their references on
 * pea then, which the RT kernels did while this test counted its own
 * (refcnt 2 -> 2 for a program that takes one). At most 10 s (scaled).
 */
static long module_refcnt_read(void *arg)
{
	return module_refcnt();
}

static int module_refcnt_settled(void)
{
	return (int)pt_settled(module_refcnt_read, NULL, 100, 10, 100);
}

/* The record @i holds @len bytes of @want, zero padding, perf's size. */
static bool rec_is(int i, const void *want, __u32 len)
{
	__u32 raw = ((len + 4 + 7) & ~7U) - 4, k;

	if (got_size[i] != raw || memcmp(got[i], want, len)) {
		pt_diag("record %d: size %u (want %u)", i, got_size[i], raw);
		return false;
	}
	for (k = len; k < raw; k++)
		if (got[i][k])
			return false;
	return true;
}

/* What `pea stat @args` prints (stdout and stderr), into @buf. */
static void pea_stat(const char *args, char *buf, size_t len)
{
	char cmd[128];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "/bin/pea stat %s 2>&1", args);
	buf[0] = 0;
	p = popen(cmd, "r");
	if (!p)
		return;
	while (n < len - 1 && fgets(buf + n, (int)(len - n), p))
		n += strlen(buf + n);
	pclose(p);
}

/*
 * Whether `pea stat --json` has map @id's kfunc_map object with a
 * MAY_SLEEP count of @n, as its last field.
 */
static bool pea_stat_may_sleep(__u64 id, long long n)
{
	static char out[65536];
	char want[128], *p, *nl;

	pea_stat("--json", out, sizeof(out));
	snprintf(want, sizeof(want), "{\"type\":\"kfunc_map\",\"map_id\":%llu,",
		 (unsigned long long)id);
	p = strstr(out, want);
	if (!p)
		return false;
	nl = strchr(p, '\n');
	if (nl)
		*nl = 0;
	snprintf(want, sizeof(want), ",\"MAY_SLEEP\":%lld}", n);
	return strstr(p, want) != NULL;
}

/* The skeleton with only @keep loaded (the kprobe fails on 6.1). */
static struct test_kfunc *kf_load_only(struct bpf_program *(*keep)(struct test_kfunc *))
{
	struct test_kfunc *k = test_kfunc__open();
	struct bpf_program *p, *want;
	int err;

	if (!k)
		return NULL;
	want = keep(k);
	bpf_object__for_each_program(p, k->obj)
		bpf_program__set_autoload(p, p == want);
	err = test_kfunc__load(k);
	if (err) {
		test_kfunc__destroy(k);
		errno = -err;
		return NULL;
	}
	return k;
}

static struct bpf_program *kf_syscall_prog(struct test_kfunc *k)
{
	return k->progs.kf_syscall;
}

static struct bpf_program *kf_kprobe_prog(struct test_kfunc *k)
{
	return k->progs.kf_kprobe;
}

static void test_off(const char *state)
{
	static char out[65536];
	char want[512];
	struct stat st;
	bool vmlinux_btf = stat("/sys/kernel/btf/vmlinux", &st) == 0;

	PT_OK(!vmlinux_btf,
	      "kfuncs are off only where the kernel has no BTF: state \"%s\"",
	      state);
	PT_OK(!strcmp(state, "off: the kernel has no module BTF (CONFIG_DEBUG_INFO_BTF_MODULES)"),
	      "the state says why: \"%s\"", state);
	PT_OK(stat("/sys/kernel/btf/pea", &st) != 0,
	      "no /sys/kernel/btf/pea where the kfuncs are off");
	pea_stat("", out, sizeof(out));
	snprintf(want, sizeof(want), "\nkfuncs: %s; ", state);
	PT_OK(strstr(out, want), "pea stat shows \"kfuncs: %s\"", state);
}

static void test_output(struct test_kfunc *skel, struct pea_buffer *pb,
			__u64 id)
{
	unsigned char pkt[64];
	LIBBPF_OPTS(bpf_test_run_opts, xo, .data_in = pkt,
		    .data_size_in = sizeof(pkt));
	LIBBPF_OPTS(bpf_test_run_opts, fo);
	struct kf_event *ev;
	struct bpf_link *link;
	int i;

	for (i = 0; i < KF_PAYLOAD_MAX; i++)
		skel->bss->payload[i] = (unsigned char)(i * 7 + 3);

	/* SYSCALL program */
	nrec = 0;
	PT_EQ(run_syscall(skel, id, PEA_F_CURRENT_CPU, 37), 0,
	      "syscall program: pea_kf_output(CURRENT_CPU, 37 bytes) returns 0");
	PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes");
	PT_EQ(nrec, 1, "one record");
	PT_OK(nrec == 1 && got_cpu[0] == 0 && rec_is(0, skel->bss->payload, 37),
	      "syscall program: the 37 bytes read back exactly, on CPU 0, raw size 44");
	nrec = 0;
	PT_EQ(run_syscall(skel, id, 0, 0), 0,
	      "syscall program: index 0, an empty payload, returns 0");
	PT_EQ(run_syscall(skel, id, PEA_F_CURRENT_CPU, 65516), 0,
	      "syscall program: the largest payload (65516 bytes) returns 0");
	PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes");
	PT_EQ(nrec, 2, "two records");
	PT_OK(nrec == 2 && rec_is(0, "", 0) &&
	      rec_is(1, skel->bss->payload, 65516),
	      "syscall program: an empty record and 65516 bytes read back exactly");

	/* XDP program */
	for (i = 0; i < (int)sizeof(pkt); i++)
		pkt[i] = (unsigned char)(0xa0 + i);
	nrec = 0;
	skel->bss->ret_xdp = 12345;
	skel->bss->out_flags = PEA_F_CURRENT_CPU;
	PT_EQ(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.kf_xdp), &xo), 0,
	      "xdp program: BPF_PROG_TEST_RUN");
	PT_EQ(xo.retval, XDP_PASS, "xdp program: XDP_PASS");
	PT_EQ(skel->bss->ret_xdp, 0, "xdp program: pea_kf_output returns 0");
	PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes");
	PT_OK(nrec == 1 && rec_is(0, pkt, XDP_BYTES),
	      "xdp program: the packet's first %d bytes read back exactly",
	      XDP_BYTES);

	/* fentry program on bpf_fentry_test1() */
	nrec = 0;
	skel->bss->target_pid = (__u32)getpid();
	skel->bss->seq = 0;
	link = bpf_program__attach(skel->progs.kf_fentry);
	PT_OK(link != NULL, "fentry program: attached to bpf_fentry_test1");
	for (i = 0; i < 2; i++)
		PT_EQ(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.kf_fentry),
					     &fo), 0,
		      "fentry program: BPF_PROG_TEST_RUN calls bpf_fentry_test1()");
	bpf_link__destroy(link);
	PT_EQ(skel->bss->fentry_calls, 2, "fentry program: ran twice");
	PT_EQ(skel->bss->ret_fentry, 0, "fentry program: pea_kf_output returns 0");
	PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes");
	PT_EQ(nrec, 2, "fentry program: two records");
	for (i = 0; i < 2 && i < nrec; i++) {
		ev = (struct kf_event *)got[i];
		PT_OK(got_size[i] == sizeof(*ev) + 4 && ev->magic == KF_MAGIC &&
		      ev->seq == (__u64)i && ev->kind == KF_KIND_FENTRY &&
		      ev->pid == (__u32)getpid(),
		      "fentry program: record %d is its event exactly (seq %d)",
		      i, i);
	}
}

static struct bpf_program *kf_tp_prog(struct test_kfunc *k)
{
	return k->progs.kf_tp;
}

/*
 * A kprobe or tracepoint program on getppid(2): 6.12 lets it call the
 * kfunc, 6.1 refuses it with the verifier's message.
 */
static void test_probe_prog(const char *types, __u64 id, struct pea_buffer *pb,
			    const char *what, const char *where, __u32 kind,
			    struct bpf_program *(*prog)(struct test_kfunc *))
{
	bool all = !strcmp(types, "all program types");
	struct test_kfunc *k;
	struct bpf_link *link;
	struct kf_event *ev;
	int err;

	vlog_len = 0;
	vlog[0] = 0;
	k = kf_load_only(prog);
	err = k ? 0 : -errno;
	if (!all) {
		PT_EQ(err, -EACCES,
		      "%s program: refused with EACCES where kfuncs serve %s",
		      what, types);
		PT_OK(strstr(vlog, "calling kernel function pea_kf_output is not allowed"),
		      "%s program: the verifier says \"calling kernel function pea_kf_output is not allowed\"",
		      what);
		test_kfunc__destroy(k);
		return;
	}
	PT_EQ(err, 0, "%s program: loaded where kfuncs serve all types", what);
	if (err) {
		pt_diag("%s", vlog);
		return;
	}
	k->bss->map_handle = id;
	k->bss->out_flags = PEA_F_CURRENT_CPU;
	k->bss->target_pid = (__u32)getpid();
	link = bpf_program__attach(prog(k));
	PT_OK(link != NULL, "%s program: attached to %s", what, where);
	nrec = 0;
	syscall(SYS_getppid);
	bpf_link__destroy(link);
	PT_EQ(k->bss->probe_calls, 1, "%s program: ran once", what);
	PT_EQ(k->bss->ret_probe, 0, "%s program: pea_kf_output returns 0", what);
	PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes");
	ev = (struct kf_event *)got[0];
	PT_OK(nrec == 1 && got_size[0] == sizeof(*ev) + 4 &&
	      ev->magic == KF_MAGIC && ev->kind == kind &&
	      ev->seq == 0 && ev->pid == (__u32)getpid(),
	      "%s program: its event read back exactly", what);
	test_kfunc__destroy(k);
}

static struct bpf_program *kf_perf_prog(struct test_kfunc *k)
{
	return k->progs.kf_perf;
}

/*
 * A perf_event program on a cpu-clock event of this task, every
 * millisecond of its CPU time: pea_kf_output() from the event's hrtimer
 * interrupt. 6.12 lets it call the kfunc; 6.1 refuses it.
 */
static void test_perf(const char *types, __u64 id, struct pea_buffer *pb)
{
	bool all = !strcmp(types, "all program types");
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1000000,
	};
	struct bpf_link *link;
	struct test_kfunc *k;
	struct kf_event *ev;
	struct timespec t0, t;
	int pfd, err;
	bool good = true;
	__u64 calls;

	vlog_len = 0;
	vlog[0] = 0;
	k = kf_load_only(kf_perf_prog);
	err = k ? 0 : -errno;
	if (!all) {
		PT_EQ(err, -EACCES,
		      "perf_event program: refused with EACCES where kfuncs serve %s",
		      types);
		PT_OK(strstr(vlog, "calling kernel function pea_kf_output is not allowed"),
		      "perf_event program: the verifier says \"calling kernel function pea_kf_output is not allowed\"");
		test_kfunc__destroy(k);
		return;
	}
	PT_EQ(err, 0, "perf_event program: loaded where kfuncs serve all types");
	if (err) {
		pt_diag("%s", vlog);
		return;
	}
	k->bss->map_handle = id;
	k->bss->out_flags = PEA_F_CURRENT_CPU;
	k->bss->target_pid = (__u32)getpid();
	pfd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	link = pfd < 0 ? NULL : bpf_program__attach_perf_event(k->progs.kf_perf, pfd);
	PT_OK(link != NULL, "perf_event program: attached to a cpu-clock event of this task");
	nrec = 0;
	/*
	 * Spin until the program has run 5 times, for 2 s of CPU time at
	 * most. Not a fixed 20 ms: the guest's clock runs on while the
	 * host leaves the vCPU unscheduled, and the event's hrtimer then
	 * fires once for all the periods it missed (2 runs in 20 ms once,
	 * on 6.12 under load).
	 */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while (*(volatile __u64 *)&k->bss->perf_calls < 5 &&
		 (t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec <
		 2000000000L);
	bpf_link__destroy(link);
	if (pfd >= 0)
		close(pfd);
	calls = k->bss->perf_calls;
	PT_OK(calls >= 5, "perf_event program: ran %llu times (5 or more) in %ld ms of CPU time",
	      (unsigned long long)calls,
	      (long)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000));
	PT_EQ(k->bss->ret_perf, 0, "perf_event program: pea_kf_output returns 0");
	PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes");
	ev = (struct kf_event *)got[0];
	if (nrec < 2 || got_size[0] != sizeof(*ev) + 4 || ev->magic != KF_MAGIC ||
	    ev->kind != KF_KIND_PERF || ev->seq != 0 || ev->pid != (__u32)getpid())
		good = false;
	ev = (struct kf_event *)got[1];
	if (nrec < 2 || ev->kind != KF_KIND_PERF || ev->seq != 1)
		good = false;
	PT_OK((__u64)nrec == calls && good,
	      "perf_event program: one record per run, read back exactly (%d records)",
	      nrec);
	test_kfunc__destroy(k);
}

static struct bpf_program *kf_unbounded_prog(struct test_kfunc *k)
{
	return k->progs.kf_unbounded;
}

/*
 * The verifier refuses a size it cannot bound, as for any helper: EACCES,
 * except that 6.1's check of a kfunc's arguments answers EINVAL for it
 * ("arg#2 arg#3 memory, len pair leads to invalid memory access").
 */
static void test_unbounded(void)
{
	struct test_kfunc *k;
	struct utsname u;
	bool v61 = !uname(&u) && !strncmp(u.release, "6.1.", 4);
	int err;

	vlog_len = 0;
	vlog[0] = 0;
	k = kf_load_only(kf_unbounded_prog);
	err = k ? 0 : -errno;
	PT_EQ(err, v61 ? -EINVAL : -EACCES,
	      "a size the verifier cannot bound: %s", v61 ? "EINVAL (6.1)" : "EACCES");
	PT_OK(strstr(vlog, "R4 unbounded memory access") &&
	      (!v61 || strstr(vlog, "arg#2 arg#3 memory, len pair leads to invalid memory access")),
	      "the verifier says \"R4 unbounded memory access\"");
	test_kfunc__destroy(k);
}

static struct bpf_program *kf_rodata_prog(struct test_kfunc *k)
{
	return k->progs.kf_rodata;
}

/*
 * Read-only memory is refused as data (the verifier checks a kfunc's
 * memory argument for writing too), where bpf_perf_event_output() takes
 * it: a constant global, EACCES ("write into map forbidden"), which
 * 6.1's check of kfunc arguments turns into EINVAL (docs/kfuncs.md).
 */
static void test_rodata(void)
{
	struct test_kfunc *k;
	struct utsname u;
	bool v61 = !uname(&u) && !strncmp(u.release, "6.1.", 4);
	int err;

	vlog_len = 0;
	vlog[0] = 0;
	k = kf_load_only(kf_rodata_prog);
	err = k ? 0 : -errno;
	PT_EQ(err, v61 ? -EINVAL : -EACCES,
	      "a constant global (.rodata) as data: refused, %s",
	      v61 ? "EINVAL (6.1)" : "EACCES");
	PT_OK(strstr(vlog, "write into map forbidden"),
	      "the verifier says \"write into map forbidden\"");
	if (!strstr(vlog, "write into map forbidden"))
		pt_diag("%s", vlog);
	test_kfunc__destroy(k);
}

static struct bpf_program *kf_fentry_find_prog(struct test_kfunc *k)
{
	return k->progs.kf_fentry_find;
}

static struct bpf_program *kf_fentry_output_prog(struct test_kfunc *k)
{
	return k->progs.kf_fentry_output;
}

/*
 * What the kfunc runs before pea_output()'s nesting guard cannot be
 * traced: fentry programs there, each calling the kfunc, would nest
 * without the guard's bound (only pea_kf_output() itself can be, as
 * bpf_perf_event_output() can in Linux).
 */
static void test_notrace(void)
{
	static const char *const fn[] = { "pea_map_find_rcu", "pea_output" };
	struct bpf_program *(*prog[])(struct test_kfunc *) = {
		kf_fentry_find_prog, kf_fentry_output_prog,
	};
	struct bpf_link *link;
	struct test_kfunc *k;
	int i, lerr, aerr;

	for (i = 0; i < 2; i++) {
		vlog_len = 0;
		vlog[0] = 0;
		k = kf_load_only(prog[i]);
		lerr = k ? 0 : -errno;
		link = k ? bpf_program__attach(prog[i](k)) : NULL;
		aerr = k && !link ? -errno : 0;
		PT_OK(lerr == 0 && aerr == -EINVAL,
		      "fentry on %s (before the nesting guard) loads but cannot attach: EINVAL (load %d, attach %d)",
		      fn[i], lerr, aerr);
		bpf_link__destroy(link);
		test_kfunc__destroy(k);
	}
}

static struct bpf_program *kf_maybe_null_prog(struct test_kfunc *k)
{
	return k->progs.kf_maybe_null;
}

/*
 * A map value that may be NULL passed as data, unchecked: 6.12's
 * verifier refuses it (the kfunc's arguments are trusted); 6.1's does not
 * check it, so the kfunc answers EFAULT for a NULL with a size, counted,
 * and writes nothing.
 */
static void test_maybe_null(__u64 id, struct pea_buffer *pb)
{
	static const unsigned char zero[KF_NULL_BYTES];
	struct test_kfunc *k;
	struct utsname u;
	bool v61 = !uname(&u) && !strncmp(u.release, "6.1.", 4);
	LIBBPF_OPTS(bpf_test_run_opts, o);
	long long c[C_NR];
	int err, fd;

	vlog_len = 0;
	vlog[0] = 0;
	k = kf_load_only(kf_maybe_null_prog);
	err = k ? 0 : -errno;
	if (!v61) {
		PT_EQ(err, -EACCES,
		      "a map value that may be NULL as data: refused, EACCES");
		PT_OK(strstr(vlog, "Possibly NULL pointer passed to trusted arg2"),
		      "the verifier says \"Possibly NULL pointer passed to trusted arg2\"");
		test_kfunc__destroy(k);
		return;
	}
	PT_EQ(err, 0, "a map value that may be NULL as data: 6.1's verifier loads it");
	if (err) {
		pt_diag("%s", vlog);
		return;
	}
	fd = bpf_program__fd(k->progs.kf_maybe_null);
	k->bss->map_handle = id;
	k->bss->out_flags = PEA_F_CURRENT_CPU;
	k->bss->null_key = 0;
	nrec = 0;
	PT_EQ(bpf_prog_test_run_opts(fd, &o), 0, "maybe-NULL program: run (a value)");
	PT_EQ(k->bss->ret_null, 0, "with a value: pea_kf_output returns 0");
	PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes");
	PT_OK(nrec == 1 && rec_is(0, zero, KF_NULL_BYTES),
	      "with a value: its %d bytes read back exactly", KF_NULL_BYTES);
	k->bss->null_key = 1;	/* past max_entries: the lookup gives NULL */
	nrec = 0;
	PT_EQ(bpf_prog_test_run_opts(fd, &o), 0, "maybe-NULL program: run (NULL)");
	PT_EQ(k->bss->ret_null, -EFAULT, "NULL with %d bytes: EFAULT",
	      KF_NULL_BYTES);
	PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes");
	PT_EQ(nrec, 0, "NULL: no record");
	memset(c, 0xff, sizeof(c));
	err = kf_map_counters(main_id, c);
	PT_OK(!err && c[C_EFAULT] == 1, "the map counts efault 1 (%lld)",
	      c[C_EFAULT]);
	test_kfunc__destroy(k);
}

/* pea's BTF object id (BPF_BTF_GET_NEXT_ID, as root), or 0. */
static __u32 pea_btf_obj_id(void)
{
	struct bpf_btf_info info;
	__u32 id = 0, found = 0, len;
	char name[64];
	int fd;

	while (!found && !bpf_btf_get_next_id(id, &id)) {
		fd = bpf_btf_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		info.name = (uintptr_t)name;
		info.name_len = sizeof(name);
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.kernel_btf && !strcmp(name, "pea"))
			found = id;
		close(fd);
	}
	return found;
}

struct priv_result {
	__u32 btf_id;
	int btf_errno;	/* BPF_BTF_GET_FD_BY_ID of pea's BTF: 0 or errno */
	int load_err;	/* libbpf's load of kf_syscall */
	int log_iterate;	/* libbpf said "failed to iterate BTF objects" */
};

static struct priv_result *priv;

/* As nobody keeping @arg's capabilities: pea's BTF fd, then libbpf. */
static int load_as(void *arg)
{
	__u64 caps = *(__u64 *)arg;
	struct test_kfunc *k;
	int fd;

	if (pt_drop_to_nobody_caps(caps))
		return 1;
	fd = bpf_btf_get_fd_by_id(priv->btf_id);
	priv->btf_errno = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	vlog_len = 0;
	vlog[0] = 0;
	k = kf_load_only(kf_syscall_prog);
	priv->load_err = k ? 0 : -errno;
	priv->log_iterate = !!strstr(vlog, "failed to iterate BTF objects");
	test_kfunc__destroy(k);
	return 0;
}

/*
 * Who may load a program calling the kfunc: the program needs pea's
 * module BTF fd, which only BPF_BTF_GET_FD_BY_ID gives, to CAP_SYS_ADMIN
 * (docs/security.md): CAP_BPF and CAP_PERFMON are not enough.
 */
static void test_privilege(void)
{
	__u64 bp = (1ULL << CAP_BPF) | (1ULL << CAP_PERFMON);
	__u64 bps = bp | (1ULL << CAP_SYS_ADMIN);

	priv = mmap(NULL, sizeof(*priv), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (priv == MAP_FAILED)
		pt_fatal("mmap");
	priv->btf_id = pea_btf_obj_id();
	PT_OK(priv->btf_id > 0, "pea's BTF object: id %u", priv->btf_id);
	memset(&priv->btf_errno, 0xff, sizeof(*priv) - sizeof(priv->btf_id));
	PT_EQ(pt_in_child(load_as, &bp), 0, "a child as nobody with CAP_BPF, CAP_PERFMON");
	PT_EQ(priv->btf_errno, EPERM,
	      "CAP_BPF+CAP_PERFMON: BPF_BTF_GET_FD_BY_ID of pea's BTF: EPERM");
	PT_OK(priv->load_err == -EINVAL && priv->log_iterate,
	      "CAP_BPF+CAP_PERFMON: libbpf cannot load a program calling pea_kf_output (%d, \"failed to iterate BTF objects\": %d)",
	      priv->load_err, priv->log_iterate);
	memset(&priv->btf_errno, 0xff, sizeof(*priv) - sizeof(priv->btf_id));
	PT_EQ(pt_in_child(load_as, &bps), 0,
	      "a child as nobody with CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN");
	PT_EQ(priv->btf_errno, 0, "with CAP_SYS_ADMIN: pea's BTF fd");
	PT_EQ(priv->load_err, 0, "with CAP_SYS_ADMIN: the program loads");
	munmap(priv, sizeof(*priv));
}

/* The handles table of the kfunc file: maps with a handle, buckets. */
static int kf_handles(unsigned int *n, unsigned int *buckets)
{
	char buf[8192], *p;

	if (pt_read_file(KFUNC_FILE, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "handles ");
	if (!p || sscanf(p, "handles %u buckets %u", n, buckets) != 2)
		return -1;
	return 0;
}

static void test_errnos(struct test_kfunc *skel, int map, __u64 handle)
{
	long long c[C_NR], e[C_NR], bad0;
	int ncpu = pt_nr_cpus();
	int closed, plain, empty, cached, other = 0;
	__u64 plain_id, empty_id, empty_h, closed_h, cached_h, h, k;
	static char out[65536];
	char want[256];
	bool ok;

	plain = pea_map_create(NULL, 1, 0);
	empty = pea_map_create(NULL, 1, PEA_F_BPF_WRITE);
	closed = pea_map_create(NULL, 1, PEA_F_BPF_WRITE);
	if (plain < 0 || empty < 0 || closed < 0)
		pt_fatal("pea_map_create");
	plain_id = map_id_of(plain);
	empty_id = map_id_of(empty);
	empty_h = handle_of(empty);
	closed_h = handle_of(closed);
	PT_EQ(handle_of(plain), 0, "a map without PEA_F_BPF_WRITE has no handle (0)");
	PT_OK(empty_h && closed_h && empty_h != closed_h && empty_h != empty_id,
	      "maps with PEA_F_BPF_WRITE have handles of their own, not their ids");
	close(closed);

	bad0 = kf_bad_handle();
	PT_EQ(run_syscall(skel, 0, PEA_F_CURRENT_CPU, 8), -EBADF,
	      "handle 0: EBADF");
	PT_EQ(run_syscall(skel, ~0ULL, PEA_F_CURRENT_CPU, 8), -EBADF,
	      "an unused handle: EBADF");
	PT_EQ(run_syscall(skel, closed_h, PEA_F_CURRENT_CPU, 8), -EBADF,
	      "a destroyed map's handle: EBADF");
	PT_EQ(run_syscall(skel, main_id, PEA_F_CURRENT_CPU, 8), -EBADF,
	      "a writable map's id, not its handle: EBADF");
	PT_EQ(run_syscall(skel, plain_id, PEA_F_CURRENT_CPU, 8), -EBADF,
	      "a map without PEA_F_BPF_WRITE, by its id: EBADF");
	PT_EQ(run_syscall(skel, handle ^ 1, PEA_F_CURRENT_CPU, 8), -EBADF,
	      "a guessed handle (one bit off a live one): EBADF");
	/*
	 * The kfuncs keep the map a handle found last per CPU
	 * (pea_kf_map()): a map destroyed right after a call found it is
	 * gone for the next call all the same.
	 */
	cached = pea_map_create(NULL, 1, PEA_F_BPF_WRITE);
	if (cached < 0)
		pt_fatal("pea_map_create");
	cached_h = handle_of(cached);
	PT_EQ(run_syscall(skel, cached_h, PEA_F_CURRENT_CPU, 8), -ENOENT,
	      "a map's handle, twice: found (its empty slot: ENOENT)");
	PT_EQ(run_syscall(skel, cached_h, PEA_F_CURRENT_CPU, 8), -ENOENT,
	      "and found again (the per-CPU cache)");
	close(cached);
	PT_EQ(run_syscall(skel, cached_h, PEA_F_CURRENT_CPU, 8), -EBADF,
	      "the map destroyed after it was found: its handle is EBADF at once");
	PT_EQ(kf_bad_handle() - bad0, 7, "7 calls without a live map counted");
	/* No oracle: every id, writable or not, answers as nothing. */
	for (k = 1; k <= 1000; k++)
		other += run_syscall(skel, k, (1ULL << 32) | PEA_F_CURRENT_CPU,
				     8) != -EBADF;
	PT_EQ(other, 0, "ids 1..1000 with a CTXLEN flag: all EBADF, nothing to enumerate");

	PT_OK(!kf_map_counters(plain_id, c) && c[C_BPFW] == 0 &&
	      c[C_EINVAL] == 0,
	      "the plain map: bpf_write 0, no errors");
	PT_EQ(run_syscall(skel, empty_h, PEA_F_CURRENT_CPU, 8), -ENOENT,
	      "an empty slot: ENOENT");
	PT_OK(!kf_map_counters(empty_id, e) && e[C_BPFW] == 1 &&
	      e[C_ENOENT] == 1 && e[C_EINVAL] == 0,
	      "its enoent counter is 1, bpf_write 1");
	pea_stat("--json", out, sizeof(out));
	snprintf(want, sizeof(want),
		 "{\"type\":\"kfunc_map\",\"map_id\":%llu,\"bpf_write\":1,\"EINVAL\":0,\"E2BIG\":0,\"ENOENT\":1,\"EOPNOTSUPP\":0,\"EBUSY\":0,\"ENOSPC\":0,\"EFAULT\":0,\"MAY_SLEEP\":0}\n",
		 (unsigned long long)empty_id);
	PT_OK(strstr(out, "{\"type\":\"kfunc\",\"state\":\"on\",") &&
	      strstr(out, want),
	      "pea stat --json shows the kfuncs on and the map's ENOENT");
	pea_stat("", out, sizeof(out));
	PT_OK(strstr(out, "\nkfuncs: on ("),
	      "pea stat shows \"kfuncs: on (...)\"");
	PT_OK(strstr(out, " EFAULT  MAY_SLEEP\n"),
	      "pea stat's kfunc table has a MAY_SLEEP column, after EFAULT");
	if (!strstr(out, "\nkfuncs: on (") || !strstr(out, want))
		pt_diag("pea stat: %s", out);

	h = handle;
	PT_EQ(run_syscall(skel, h, (1ULL << 32) | PEA_F_CURRENT_CPU, 8), -EINVAL,
	      "a CTXLEN bit: EINVAL, as pea_output()");
	PT_EQ(run_syscall(skel, h, 1ULL << 63, 8), -EINVAL, "bit 63: EINVAL");
	PT_EQ(run_syscall(skel, h, (1ULL << 40) | (__u64)ncpu, 8), -EINVAL,
	      "bad flags are checked before the index");
	PT_EQ(run_syscall(skel, h, (__u64)ncpu, 8), -E2BIG,
	      "index == max_entries: E2BIG");
	PT_EQ(run_syscall(skel, h, PEA_F_CURRENT_CPU, 65517), -E2BIG,
	      "a 65517-byte payload: E2BIG");
	if (ncpu > 1)
		PT_EQ(run_syscall(skel, h, 1, 8), -EOPNOTSUPP,
		      "another CPU's slot: EOPNOTSUPP");
	else
		PT_OK(0, "the guest has more than one CPU");
	memset(c, 0xff, sizeof(c));
	ok = !kf_map_counters(main_id, c);
	PT_OK(ok && c[C_EINVAL] == 3 && c[C_E2BIG] == 2 &&
	      c[C_EOPNOTSUPP] == 1 && c[C_ENOENT] == 0 &&
	      c[C_EBUSY] == 0 && c[C_ENOSPC] == 0 && c[C_EFAULT] == 0,
	      "the map counts einval 3, e2big 2, eopnotsupp 1, nothing else (%lld %lld %lld)",
	      c[C_EINVAL], c[C_E2BIG], c[C_EOPNOTSUPP]);
	(void)map;
	close(plain);
	close(empty);
}

/*
 * Many maps: the handle table grows with them, so a lookup walks about
 * one map whatever their number (a count, not a time), and live and
 * absent handles still answer right.
 */
#define MANY_MAPS	3000
static void test_many(struct test_kfunc *skel, __u64 handle,
		      struct pea_buffer *pb)
{
	static int fds[MANY_MAPS];
	struct rlimit rl = { MANY_MAPS + 256, MANY_MAPS + 256 };
	unsigned int n0 = 0, b0 = 0, n = 0, b = 0;
	int i, made = 0;

	PT_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0, "RLIMIT_NOFILE %d", MANY_MAPS + 256);
	PT_EQ(kf_handles(&n0, &b0), 0, "the kfunc file has the handle table: %u in %u buckets",
	      n0, b0);
	for (i = 0; i < MANY_MAPS; i++) {
		fds[i] = pea_map_create(NULL, 1, PEA_F_BPF_WRITE);
		made += fds[i] >= 0;
	}
	PT_EQ(made, MANY_MAPS, "%d more maps with PEA_F_BPF_WRITE", MANY_MAPS);
	/* The table grows from a worker: wait for it. */
	for (i = 0; i < 100 * pt_time_scale(); i++) {
		if (!kf_handles(&n, &b) && n * 4 <= b * 3)
			break;
		usleep(20000);
	}
	PT_EQ(n, n0 + MANY_MAPS, "the table holds %u handles", n0 + MANY_MAPS);
	PT_OK(n * 4 <= b * 3,
	      "it grew to %u buckets: at most 3/4 full, a chain of about one map", b);
	nrec = 0;
	PT_EQ(run_syscall(skel, handle, PEA_F_CURRENT_CPU, 8), 0,
	      "with %d maps: the first map's handle writes", MANY_MAPS);
	PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes");
	PT_OK(nrec == 1 && rec_is(0, skel->bss->payload, 8),
	      "its record read back exactly");
	PT_EQ(run_syscall(skel, handle_of(fds[MANY_MAPS / 2]), PEA_F_CURRENT_CPU, 8),
	      -ENOENT, "a map among them: found (its empty slot: ENOENT)");
	PT_EQ(run_syscall(skel, handle + 1, PEA_F_CURRENT_CPU, 8), -EBADF,
	      "an absent handle: EBADF");
	for (i = 0; i < MANY_MAPS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/*
 * The counters are per CPU, summed when shown: errors on every CPU
 * (an EINVAL and a call naming no map each) sum exactly.
 */
static void test_percpu_counts(struct test_kfunc *skel, __u64 handle)
{
	long long c0[C_NR], c1[C_NR], bad0, bad1;
	int ncpu = pt_nr_cpus(), cpu, bad = 0;

	if (kf_map_counters(main_id, c0))
		pt_fatal("kfunc counters");
	bad0 = kf_bad_handle();
	for (cpu = 0; cpu < ncpu; cpu++) {
		pt_pin(cpu);
		bad += run_syscall(skel, handle, 1ULL << 63, 8) != -EINVAL;
		bad += run_syscall(skel, 1, PEA_F_CURRENT_CPU, 8) != -EBADF;
	}
	pt_pin(0);
	bad1 = kf_bad_handle();
	PT_OK(!bad && !kf_map_counters(main_id, c1) &&
	      c1[C_EINVAL] - c0[C_EINVAL] == ncpu && bad1 - bad0 == ncpu,
	      "an EINVAL and an EBADF on each of %d CPUs: the per-CPU counters sum to %d each",
	      ncpu, ncpu);
}

/* A one-page ring: every drop is an ENOSPC, counted per map and lost. */
static void test_full(struct test_kfunc *skel)
{
	int map = pea_map_create(NULL, pt_nr_cpus(), PEA_F_BPF_WRITE);
	int i, ok = 0, nospc = 0, other = 0;
	int want = (int)(pt_page_size() / 216);
	struct pea_buffer *pb;
	long long c[C_NR];
	__u64 id;
	long r;

	if (map < 0)
		pt_fatal("pea_map_create");
	id = handle_of(map);
	pb = pea_buffer__new(map, 1, on_sample, on_lost, NULL, NULL);
	if (!pb)
		pt_fatal("pea_buffer__new");
	for (i = 0; i < 40; i++) {
		r = run_syscall(skel, id, PEA_F_CURRENT_CPU, 200);
		if (r == 0)
			ok++;
		else if (r == -ENOSPC)
			nospc++;
		else
			other++;
	}
	nrec = 0;
	nlost = 0;
	PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes the full ring");
	PT_EQ(other, 0, "a full ring: only 0 and ENOSPC");
	/* A page holds this many records of 216 bytes (header, size, 200). */
	PT_EQ(ok, want, "a full ring: %d records of 216 bytes written", want);
	PT_EQ(nospc, 40 - want, "a full ring: %d ENOSPC", 40 - want);
	PT_EQ(nrec, want, "libpea reads %d records", want);
	PT_EQ(nlost, 40 - want, "libpea reports %d lost", 40 - want);
	memset(c, 0xff, sizeof(c));
	i = kf_map_counters(map_id_of(map), c);
	PT_OK(!i && c[C_ENOSPC] == 40 - want,
	      "the map counts enospc %d (%lld)", 40 - want, c[C_ENOSPC]);
	pea_buffer__free(pb);
	close(map);
}

/*
 * One ordered stream (PEA_BUFFER_FLAG_ORDERED): records of the syscall
 * program and of pea_output() (pea's in-kernel producer API, through the
 * test module), written one after the other by one thread hopping over
 * the CPUs, come out in the order they were written, whatever their CPU.
 */
#define ORD_N	64
static __u64 ord_seq[ORD_N];
static int ord_cpu[ORD_N];
static int ord_n, ord_bad;

static void on_ordered(void *ctx, int cpu, void *data, __u32 size)
{
	__u64 rec[2];

	if (size < sizeof(rec)) {
		ord_bad++;
		return;
	}
	memcpy(rec, data, sizeof(rec));
	if (rec[0] != KF_MAGIC)
		ord_bad++;
	if (ord_n < ORD_N) {
		ord_seq[ord_n] = rec[1];
		ord_cpu[ord_n] = cpu;
	}
	ord_n++;
}

static void test_ordered(struct test_kfunc *skel)
{
	struct pea_buffer_opts o = {
		.sz = sizeof(o), .flags = PEA_BUFFER_FLAG_ORDERED,
	};
	int ncpu = pt_nr_cpus(), map, n, i, wrong = 0, bpf_ok = 0, mod_ok = 0;
	struct pea_buffer *pb;
	__u64 rec[2], id;

	map = pea_map_create("kf_ordered", ncpu, PEA_F_BPF_WRITE);
	if (map < 0)
		pt_fatal("pea_map_create kf_ordered");
	id = handle_of(map);
	pb = pea_buffer__new(map, 8, on_ordered, NULL, NULL, &o);
	if (!pb)
		pt_fatal("pea_buffer__new (ordered)");
	for (n = 0; n < ORD_N; n++) {
		pt_pin(n % ncpu);
		rec[0] = KF_MAGIC;
		rec[1] = n;
		/* BPF and the module alternate, and so do the CPUs. */
		if ((n + n / ncpu) % 2 == 0) {
			memcpy(skel->bss->payload, rec, sizeof(rec));
			bpf_ok += run_syscall(skel, id, PEA_F_CURRENT_CPU,
					      sizeof(rec)) == 0;
		} else {
			mod_ok += pt_output("kf_ordered", PEA_F_CURRENT_CPU, rec,
					    sizeof(rec)) == 0;
		}
	}
	pt_pin(0);
	PT_EQ(bpf_ok + mod_ok, ORD_N,
	      "ordered: %d records written, %d by the BPF program, %d by pea_output()",
	      ORD_N, bpf_ok, mod_ok);
	for (i = 0; i < 50 * pt_time_scale() && ord_n < ORD_N; i++)
		if (pea_buffer__poll(pb, 100) < 0)
			break;
	for (n = 0; n < ORD_N && n < ord_n; n++)
		if (ord_seq[n] != (__u64)n || ord_cpu[n] != n % ncpu)
			wrong++;
	PT_OK(ord_n == ORD_N && !wrong && !ord_bad,
	      "ordered: the %d records of BPF and pea_output() on %d CPUs come out in the order written (%d read, %d out of place)",
	      ORD_N, ncpu, ord_n, wrong);
	pea_buffer__free(pb);
	close(map);
}

/*
 * examples/bpf/opensnoop, as a user runs it: attached to this process, it
 * prints the three files this test then opens, in order, with their
 * process and command.
 */
static void test_example(void)
{
	char line[512], want[64], comm[32], file[256], buf[8192];
	int fds[2], status, i, n = 0, ready = 0, good = 0;
	unsigned long long t, prev = 0;
	unsigned int tgid;
	size_t len = 0;
	char *nl;
	pid_t pid;
	FILE *f;

	if (pipe(fds))
		pt_fatal("pipe");
	pid = fork();
	if (pid == 0) {
		char spid[16];

		snprintf(spid, sizeof(spid), "%d", (int)getppid());
		dup2(fds[1], 1);
		close(fds[0]);
		execl("/usr/bin/opensnoop", "opensnoop", "-p", spid, "-n", "3",
		      "-d", "60", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (f && fgets(line, sizeof(line), f))
		ready = !strcmp(line, "ready\n");
	PT_OK(ready, "example: opensnoop attached (ready)");
	for (i = 0; ready && i < 3; i++) {
		snprintf(want, sizeof(want), "/tmp/kfunc-example-%d", i);
		close(open(want, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	}
	while (f && fgets(line, sizeof(line), f) && len < sizeof(buf) - 1) {
		len += snprintf(buf + len, sizeof(buf) - len, "%s", line);
		if (sscanf(line, "%llu %*d %u %31s %255s", &t, &tgid, comm,
			   file) != 4)
			continue;
		snprintf(want, sizeof(want), "/tmp/kfunc-example-%d", n);
		if (tgid == (unsigned int)getpid() && !strcmp(comm, "test_kfunc") &&
		    !strcmp(file, want) && t >= prev)
			good++;
		prev = t;
		n++;
	}
	if (f)
		fclose(f);
	waitpid(pid, &status, 0);
	PT_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "example: opensnoop exits 0 after 3 events");
	PT_OK(n == 3 && good == 3,
	      "example: it printed the 3 opens of this test in order (%d lines, %d right)",
	      n, good);
	if (good != 3) {
		for (nl = strtok(buf, "\n"); nl; nl = strtok(NULL, "\n"))
			pt_diag("opensnoop: %s", nl);
	}
}

/*
 * Maps destroyed while the program runs: a thread runs the program on
 * the handle of the current map while maps come and go. The program finds
 * the map or not (EBADF), never a freed one.
 */
static volatile int churn_stop;
static volatile __u64 churn_id;
static long churn_bad;

static void *churn_runner(void *arg)
{
	struct test_kfunc *skel = arg;
	long r;

	pt_pin(1 % pt_nr_cpus());
	while (!churn_stop) {
		r = run_syscall(skel, churn_id, PEA_F_CURRENT_CPU, 16);
		if (r && r != -EBADF && r != -ENOENT && r != -EOPNOTSUPP &&
		    r != -ENOSPC)
			churn_bad++;
	}
	return NULL;
}

static void test_churn(void)
{
	struct test_kfunc *skel = kf_load_only(kf_syscall_prog);
	struct pea_buffer *pb;
	pthread_t th;
	int i, map;

	if (!skel) {
		PT_OK(0, "the syscall program loads");
		return;
	}
	if (pthread_create(&th, NULL, churn_runner, skel))
		pt_fatal("pthread_create");
	for (i = 0; i < 100; i++) {
		map = pea_map_create(NULL, pt_nr_cpus(), PEA_F_BPF_WRITE);
		if (map < 0)
			pt_fatal("pea_map_create");
		pb = pea_buffer__new(map, 1, NULL, NULL, NULL, NULL);
		churn_id = handle_of(map);
		usleep(1000);
		pea_buffer__free(pb);
		close(map);
	}
	churn_stop = 1;
	pthread_join(th, NULL);
	PT_EQ(churn_bad, 0,
	      "100 maps destroyed under a running program: only 0, EBADF, ENOENT, EOPNOTSUPP, ENOSPC");
	test_kfunc__destroy(skel);
}

/*
 * A loaded program that calls the kfunc holds pea (the verifier takes a
 * reference on the module whose BTF has the kfunc): delete_module()
 * refuses with EWOULDBLOCK (EAGAIN), as for any module in use; the
 * reference goes when the program is freed.
 */
static void test_module_held(void)
{
	struct test_kfunc *k;
	int r0, r1, r2 = -1, i;

	r0 = module_refcnt_settled();	/* the earlier cases' programs gone */
	k = kf_load_only(kf_syscall_prog);
	PT_OK(k, "one program calling the kfunc loaded");
	if (!k)
		return;
	r1 = module_refcnt();
	PT_EQ(r1 - r0, 1, "the program holds a reference on pea (refcnt %d -> %d)",
	      r0, r1);
	if (r1 >= 1) {
		long rc = syscall(SYS_delete_module, "pea", O_NONBLOCK);
		int err = rc ? errno : 0;

		PT_OK(rc == -1 && err == EWOULDBLOCK,
		      "delete_module(pea) while it is loaded: EWOULDBLOCK (%s)",
		      strerror(err));
	} else {
		PT_OK(0, "delete_module not tried: pea's refcnt is %d", r1);
	}
	test_kfunc__destroy(k);
	for (i = 0; i < 100 * pt_time_scale(); i++) {
		r2 = module_refcnt();
		if (r2 == r0)
			break;
		usleep(50000);
	}
	PT_EQ(r2, r0, "the reference goes with the program");
}

/*
 * The zero-copy kfuncs (test_kfunc_zc.bpf.c): pea_kf_reserve(),
 * pea_kf_rec_data(), pea_kf_commit().
 */

/* The zero-copy skeleton with only the program @name loaded. */
static struct test_kfunc_zc *zc_load_only(const char *name)
{
	struct test_kfunc_zc *k = test_kfunc_zc__open();
	struct bpf_program *p;
	int err;

	if (!k)
		return NULL;
	bpf_object__for_each_program(p, k->obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
	err = test_kfunc_zc__load(k);
	if (err) {
		test_kfunc_zc__destroy(k);
		errno = -err;
		return NULL;
	}
	return k;
}

/* The zero-copy skeleton with the programs @a and @b loaded. */
static struct test_kfunc_zc *zc_load_two(const char *a, const char *b)
{
	struct test_kfunc_zc *k = test_kfunc_zc__open();
	struct bpf_program *p;
	const char *n;
	int err;

	if (!k)
		return NULL;
	bpf_object__for_each_program(p, k->obj) {
		n = bpf_program__name(p);
		bpf_program__set_autoload(p, !strcmp(n, a) || !strcmp(n, b));
	}
	err = test_kfunc_zc__load(k);
	if (err) {
		test_kfunc_zc__destroy(k);
		errno = -err;
		return NULL;
	}
	return k;
}

/* Loading @prog fails with @err and the verifier's @msg. */
static void zc_refused(const char *prog, int err, const char *msg,
		       const char *what)
{
	struct test_kfunc_zc *k;
	int e;

	vlog_len = 0;
	vlog[0] = 0;
	k = zc_load_only(prog);
	e = k ? 0 : -errno;
	PT_EQ(e, err, "%s: refused, errno %d", what, -err);
	PT_OK(strstr(vlog, msg), "%s: the verifier says \"%s\"", what, msg);
	if (!strstr(vlog, msg))
		pt_diag("%s", vlog);
	test_kfunc_zc__destroy(k);
}

/* The kfunc file's "zero_copy" line's value, or "". */
static void zc_state(char *out, size_t len)
{
	char buf[8192], *p, *nl;

	out[0] = 0;
	if (pt_read_file(KFUNC_FILE, buf, sizeof(buf)) < 0)
		return;
	p = strstr(buf, "\nzero_copy ");
	if (!p)
		return;
	p += 11;
	nl = strchr(p, '\n');
	snprintf(out, len, "%.*s", (int)(nl ? nl - p : (long)strlen(p)), p);
}

static long zc_run(struct test_kfunc_zc *k, struct bpf_program *prog,
		   void *pkt, __u32 len, int repeat)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt,
		    .data_size_in = len, .repeat = repeat);
	int err = bpf_prog_test_run_opts(bpf_program__fd(prog), &o);

	return err ? err : (long)o.retval;
}

/*
 * One reservation per context level (review findings 2 and 3): a second
 * one while the first is held is NULL, counted ebusy; the program's
 * pea_kf_output() meanwhile writes. Before, the second was granted: one
 * program could hold every nesting slot of the CPU, and two records
 * committed in the order reserved lost the watermark's wake-up.
 */
static void test_zc_two(__u64 handle, struct pea_buffer *pb)
{
	unsigned char pkt[ZC_BYTES] = { 0 };
	struct test_kfunc_zc *k = zc_load_only("zc_two");
	long long c0[C_NR], c[C_NR];

	PT_OK(k != NULL, "zc_two: the program loads");
	if (!k)
		return;
	memset(c0, 0xff, sizeof(c0));
	kf_map_counters(main_id, c0);
	k->bss->zc_handle = handle;
	k->bss->zc_flags = PEA_F_CURRENT_CPU;
	nrec = 0;
	PT_EQ(zc_run(k, k->progs.zc_two, pkt, sizeof(pkt), 1), XDP_PASS,
	      "zc_two: runs");
	PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes");
	PT_EQ(k->bss->zc_got2, 0,
	      "a second reservation while one is held (the same context level): NULL");
	PT_OK(k->bss->zc_ok == 1 && k->bss->zc_out_ret == 0,
	      "the first committed; pea_kf_output() meanwhile returned %ld",
	      k->bss->zc_out_ret);
	PT_EQ(nrec, 2, "two records: the output's and the reservation's");
	memset(c, 0xff, sizeof(c));
	kf_map_counters(main_id, c);
	PT_EQ(c[C_EBUSY] - c0[C_EBUSY], 1, "the refused reservation counted ebusy");
	test_kfunc_zc__destroy(k);
}

/*
 * A reservation held across a static subprogram that tail-calls: the
 * tail call replaces the subprogram's frame and returns to its caller,
 * which commits (the verifier knows: it checks held references at a
 * tail call only in the main program's frame). Twice: nothing leaks.
 */
static void test_zc_tail(__u64 handle, struct pea_buffer *pb)
{
	unsigned char pkt[ZC_BYTES] = { 0 };
	struct test_kfunc_zc *k = zc_load_two("zc_tail", "zc_tail_target");
	__u32 key = 0;
	int fd, i;

	PT_OK(k != NULL, "zc_tail: the programs load");
	if (!k)
		return;
	fd = bpf_program__fd(k->progs.zc_tail_target);
	PT_EQ(bpf_map_update_elem(bpf_map__fd(k->maps.zc_jmp), &key, &fd, 0), 0,
	      "zc_tail: the tail call's target in the program array");
	k->bss->zc_handle = handle;
	k->bss->zc_flags = PEA_F_CURRENT_CPU;
	nrec = 0;
	for (i = 0; i < 2; i++)
		zc_run(k, k->progs.zc_tail, pkt, sizeof(pkt), 1);
	PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes");
	PT_OK(k->bss->zc_seq == 2 && k->bss->zc_ok == 2 && k->bss->zc_null == 0,
	      "zc_tail: the tail call ran twice, both records committed (seq %llu ok %llu null %llu)",
	      (unsigned long long)k->bss->zc_seq,
	      (unsigned long long)k->bss->zc_ok,
	      (unsigned long long)k->bss->zc_null);
	PT_EQ(nrec, 2, "zc_tail: two records");
	test_kfunc_zc__destroy(k);
}

/*
 * Payload bytes a program does not write are zeroes, never what the ring
 * held there (review finding 4): a one-page ring written full of a
 * pattern and read, then reservations of 8 bytes that write nothing,
 * which land on the old records.
 */
static void test_zc_zeroed(struct test_kfunc_zc *k, unsigned char *pkt)
{
	int map = pea_map_create(NULL, pt_nr_cpus(), PEA_F_BPF_WRITE);
	int want = (int)(pt_page_size() / 80);
	static const unsigned char zero[ZC_SHORT];
	struct pea_buffer *pb;

	if (map < 0)
		pt_fatal("pea_map_create");
	pb = pea_buffer__new(map, 1, on_sample, on_lost, NULL, NULL);
	if (!pb)
		pt_fatal("pea_buffer__new");
	k->bss->zc_handle = handle_of(map);
	k->bss->zc_ok = k->bss->zc_null = 0;
	zc_run(k, k->progs.zc_xdp, pkt, ZC_BYTES, want);
	nrec = 0;
	pea_buffer__consume(pb);
	PT_EQ(nrec, want, "zeroed: the ring written full (%d records) and read",
	      want);
	nrec = 0;
	k->bss->zc_ok = 0;
	zc_run(k, k->progs.zc_short, pkt, ZC_BYTES, 10);
	pea_buffer__consume(pb);
	PT_OK(k->bss->zc_ok == 10 && nrec == 10,
	      "zeroed: 10 records of %d bytes over the old ones (%d read)",
	      ZC_SHORT, nrec);
	PT_OK(nrec >= 2 && rec_is(0, zero, ZC_SHORT) && rec_is(1, zero, ZC_SHORT),
	      "zeroed: the unwritten payloads read back as zeroes, not the ring's old bytes");
	pea_buffer__free(pb);
	close(map);
}

/*
 * A bpf_wq callback runs where it may sleep (a kworker, preemptible,
 * under RCU tasks trace only), though its program cannot: the reserve
 * refuses there at run time, and counts it on the map (review finding
 * 5: it was counted only globally). 6.12: 6.1 has no bpf_wq.
 */
static void test_zc_wq(__u64 handle)
{
	unsigned char pkt[ZC_BYTES] = { 0 };
	struct test_kfunc_zc *k;
	long long s0, s1 = -1;
	int i;

	vlog_len = 0;
	k = zc_load_only("zc_wq");
	PT_OK(k != NULL, "zc_wq: an XDP program starting a bpf_wq loads");
	if (!k) {
		pt_diag("%s", vlog);
		return;
	}
	k->bss->zc_handle = handle;
	k->bss->zc_flags = PEA_F_CURRENT_CPU;
	s0 = kf_map_may_sleep(main_id);
	PT_EQ(zc_run(k, k->progs.zc_wq, pkt, sizeof(pkt), 1), XDP_PASS,
	      "zc_wq: the program started its bpf_wq");
	for (i = 0; i < 1000 * pt_time_scale() && !k->bss->zc_wq_ran; i++)
		usleep(10000);	/* a work item: 10 s (scaled) at most */
	PT_OK(k->bss->zc_wq_ran == 1 && k->bss->zc_null == 1 && k->bss->zc_ok == 0,
	      "zc_wq: its callback's reserve is NULL (ran %llu, null %llu, ok %llu)",
	      (unsigned long long)k->bss->zc_wq_ran,
	      (unsigned long long)k->bss->zc_null,
	      (unsigned long long)k->bss->zc_ok);
	s1 = kf_map_may_sleep(main_id);
	PT_OK(s0 >= 0 && s1 == s0 + 1,
	      "zc_wq: counted on the map as may_sleep (%lld, was %lld)", s1, s0);
	PT_OK(pea_stat_may_sleep(main_id, s1),
	      "zc_wq: pea stat --json shows the map's MAY_SLEEP %lld", s1);
	test_kfunc_zc__destroy(k);
}

/* Every loss of a full one-page ring counted, by libpea and the map. */
static void test_zc_full(struct test_kfunc_zc *k, unsigned char *pkt)
{
	int map = pea_map_create(NULL, pt_nr_cpus(), PEA_F_BPF_WRITE);
	/* A record: header 8, raw size 4, ZC_BYTES: 76, padded to 80. */
	int want = (int)(pt_page_size() / 80), runs = want + 29;
	struct pea_buffer *pb;
	long long c[C_NR];
	int i;

	if (map < 0)
		pt_fatal("pea_map_create");
	pb = pea_buffer__new(map, 1, on_sample, on_lost, NULL, NULL);
	if (!pb)
		pt_fatal("pea_buffer__new");
	k->bss->zc_handle = handle_of(map);
	k->bss->zc_ok = k->bss->zc_null = k->bss->zc_nodata = 0;
	PT_EQ(zc_run(k, k->progs.zc_xdp, pkt, ZC_BYTES, runs), XDP_PASS,
	      "zero-copy, full ring: the xdp program run %d times", runs);
	nrec = 0;
	nlost = 0;
	PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes the full ring");
	PT_EQ(k->bss->zc_ok, want, "zero-copy, full ring: %d records of 80 bytes committed",
	      want);
	PT_EQ(k->bss->zc_null, runs - want,
	      "zero-copy, full ring: %d reserves returned NULL", runs - want);
	PT_EQ(nrec, want, "libpea reads %d records", want);
	PT_EQ(nlost, runs - want, "libpea reports %d lost", runs - want);
	memset(c, 0xff, sizeof(c));
	i = kf_map_counters(map_id_of(map), c);
	PT_OK(!i && c[C_ENOSPC] == runs - want && c[C_EINVAL] == 0 &&
	      c[C_EBUSY] == 0,
	      "the map counts enospc %d (%lld), nothing else", runs - want,
	      c[C_ENOSPC]);
	pea_buffer__free(pb);
	close(map);
}

static void test_zc(const char *types, __u64 handle, struct pea_buffer *pb)
{
	bool common = !strcmp(types, "all program types");
	unsigned char pkt[ZC_BYTES];
	struct test_kfunc_zc *k;
	struct bpf_program *prog;
	struct kf_event *ev;
	struct bpf_link *link;
	long long c[C_NR], c0[C_NR], bad0;
	char st[256];
	int i;

	zc_state(st, sizeof(st));
	if (!strncmp(st, "off: ", 5)) {
		PT_OK(1, "zero-copy off on PREEMPT_RT: %s", st);
		zc_refused("zc_xdp", -EACCES,
			   "calling kernel function pea_kf_reserve is not allowed",
			   "PREEMPT_RT: an xdp program calling pea_kf_reserve");
		return;
	}
	PT_OK(!strcmp(st, common ?
		      "programs that cannot sleep or throw (not sleepable, syscall, extension or calling bpf_throw)" :
		      "xdp tc programs"),
	      "zero-copy kfuncs for the program types named: %s", st);

	vlog_len = 0;
	k = test_kfunc_zc__open();
	if (!k)
		pt_fatal("test_kfunc_zc__open");
	bpf_object__for_each_program(prog, k->obj)
		bpf_program__set_autoload(prog,
					  !strcmp(bpf_program__name(prog), "zc_xdp") ||
					  !strcmp(bpf_program__name(prog), "zc_short"));
	if (test_kfunc_zc__load(k)) {
		pt_diag("%s", vlog);
		PT_OK(0, "xdp programs calling the zero-copy kfuncs load");
		test_kfunc_zc__destroy(k);
		return;
	}
	PT_OK(1, "xdp programs calling the zero-copy kfuncs load");

	/* Known bytes through reserve, data, commit. */
	for (i = 0; i < ZC_BYTES; i++)
		pkt[i] = (unsigned char)(0x5a ^ (i * 13));
	k->bss->zc_handle = handle;
	k->bss->zc_flags = PEA_F_CURRENT_CPU;
	nrec = 0;
	PT_EQ(zc_run(k, k->progs.zc_xdp, pkt, sizeof(pkt), 1), XDP_PASS,
	      "zero-copy: the xdp program runs");
	PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes");
	PT_OK(k->bss->zc_ok == 1 && k->bss->zc_null == 0 && k->bss->zc_nodata == 0,
	      "zero-copy: reserved, payload given, committed (ok %llu null %llu nodata %llu)",
	      (unsigned long long)k->bss->zc_ok,
	      (unsigned long long)k->bss->zc_null,
	      (unsigned long long)k->bss->zc_nodata);
	PT_EQ(nrec, 1, "zero-copy: one record");
	PT_OK(nrec == 1 && got_cpu[0] == 0 && rec_is(0, pkt, ZC_BYTES),
	      "zero-copy: the packet's %d bytes read back exactly, raw size %d",
	      ZC_BYTES, ZC_BYTES + 4);

	/* More payload than reserved: no payload, the record committed. */
	k->bss->zc_ok = 0;
	nrec = 0;
	PT_EQ(zc_run(k, k->progs.zc_short, pkt, sizeof(pkt), 1), XDP_PASS,
	      "zero-copy: the short program runs");
	PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes");
	PT_OK(k->bss->zc_nodata == 1 && k->bss->zc_ok == 1,
	      "zero-copy: pea_kf_rec_data() past the %d bytes reserved returns NULL",
	      ZC_SHORT);
	PT_OK(nrec == 1 && got_size[0] == ZC_SHORT + 4,
	      "zero-copy: its record of %d bytes is committed (raw size %u)",
	      ZC_SHORT, nrec == 1 ? got_size[0] : 0);

	/* Errors a program may ignore: counted. */
	memset(c0, 0xff, sizeof(c0));
	kf_map_counters(main_id, c0);
	bad0 = kf_bad_handle();
	k->bss->zc_null = 0;
	k->bss->zc_handle = handle ^ 1;
	zc_run(k, k->progs.zc_xdp, pkt, sizeof(pkt), 1);
	k->bss->zc_handle = handle;
	k->bss->zc_flags = PEA_F_CURRENT_CPU | (8ULL << 32);
	zc_run(k, k->progs.zc_xdp, pkt, sizeof(pkt), 1);
	k->bss->zc_flags = 1000;
	zc_run(k, k->progs.zc_xdp, pkt, sizeof(pkt), 1);
	k->bss->zc_flags = PEA_F_CURRENT_CPU;
	PT_EQ(k->bss->zc_null, 3, "zero-copy: a bad handle, CTXLEN flags and a bad index: NULL");
	PT_EQ(kf_bad_handle() - bad0, 1, "zero-copy: the bad handle counted");
	memset(c, 0xff, sizeof(c));
	kf_map_counters(main_id, c);
	PT_OK(c[C_EINVAL] - c0[C_EINVAL] == 1 && c[C_E2BIG] - c0[C_E2BIG] == 1,
	      "zero-copy: einval +1 (CTXLEN) and e2big +1 (index 1000) counted for the map");
	nrec = 0;
	pea_buffer__consume(pb);
	PT_EQ(nrec, 0, "zero-copy: no record from the refused reserves");

	test_zc_full(k, pkt);
	test_zc_zeroed(k, pkt);
	test_kfunc_zc__destroy(k);
	test_zc_two(handle, pb);
	test_zc_tail(handle, pb);

	/* A kprobe program: 6.12 lets it reserve, 6.1 does not. */
	if (!common) {
		zc_refused("zc_kprobe", -EACCES,
			   "calling kernel function pea_kf_reserve is not allowed",
			   "6.1: a kprobe program calling pea_kf_reserve");
	} else {
		vlog_len = 0;
		k = zc_load_only("zc_kprobe");
		PT_OK(k != NULL, "6.12: a kprobe program calling pea_kf_reserve loads");
		if (!k) {
			pt_diag("%s", vlog);
		} else {
			k->bss->zc_handle = handle;
			k->bss->zc_flags = PEA_F_CURRENT_CPU;
			k->bss->zc_pid = (__u32)getpid();
			link = bpf_program__attach(k->progs.zc_kprobe);
			PT_OK(link != NULL, "the kprobe program attaches");
			nrec = 0;
			syscall(SYS_getppid);
			syscall(SYS_getppid);
			bpf_link__destroy(link);
			PT_EQ(pea_buffer__consume(pb), 0, "libpea consumes");
			PT_EQ(k->bss->zc_ok, 2, "the kprobe program committed twice");
			PT_EQ(nrec, 2, "two records");
			for (i = 0; i < 2 && i < nrec; i++) {
				ev = (struct kf_event *)got[i];
				PT_OK(got_size[i] == sizeof(*ev) + 4 &&
				      ev->magic == KF_MAGIC && ev->seq == (__u64)i &&
				      ev->kind == KF_KIND_KPROBE &&
				      ev->pid == (__u32)getpid(),
				      "kprobe record %d is its event exactly", i);
			}
			test_kfunc_zc__destroy(k);
		}
	}

	/* Misuse the verifier refuses. */
	zc_refused("zc_leak", -EINVAL, "Unreleased reference",
		   "a path that exits holding the record");
	zc_refused("zc_nonconst", -EINVAL, "R3 is not a const",
		   "a size that is not a constant");
	zc_refused("zc_past", -EACCES, "invalid access to memory, mem_size=64 off=64 size=1",
		   "a write past the constant size");
	zc_refused("zc_after", -EACCES, "invalid mem access 'scalar'",
		   "a write into the payload after the commit");
	zc_refused("zc_syscall", -EACCES,
		   "calling kernel function pea_kf_reserve is not allowed",
		   "a syscall program (it may sleep)");
	if (common)
		test_zc_wq(handle);
	/* 6.12 (bpf_throw() is 6.7's): review finding 1. */
	if (common)
		zc_refused("zc_throw", -EACCES,
			   "calling kernel function pea_kf_reserve is not allowed",
			   "a program that may bpf_throw() past the commit");
}

int main(void)
{
	char state[256], types[128];
	struct test_kfunc *skel;
	struct pea_buffer *pb;
	struct stat st;
	int map, i, r0, r1 = -1;
	__u64 id;

	pt_pin(0);
	pt_st();	/* the test module, before pea's references are counted */
	r0 = module_refcnt_settled();
	if (kf_state(state, sizeof(state), types, sizeof(types)))
		pt_fatal("read " KFUNC_FILE);
	pt_diag("kfuncs: %s; program types: %s", state, types);
	if (strcmp(state, "on")) {
		test_off(state);
		return pt_done();
	}
	PT_OK(stat("/sys/kernel/btf/pea", &st) == 0, "/sys/kernel/btf/pea exists");
	PT_OK(!strcmp(types, "all program types") ||
	      !strcmp(types, "tracing lsm xdp tc syscall programs"),
	      "the program types are named: %s", types);

	libbpf_set_print(on_print);
	/* test_module_held() first: pea must have no open fd of this test. */
	test_module_held();

	map = pea_map_create(NULL, pt_nr_cpus(), PEA_F_BPF_WRITE);
	if (map < 0)
		pt_fatal("pea_map_create");
	id = handle_of(map);
	main_id = map_id_of(map);
	pb = pea_buffer__new(map, PAGES, on_sample, on_lost, NULL, NULL);
	if (!pb)
		pt_fatal("pea_buffer__new");

	skel = test_kfunc__open();
	if (!skel)
		pt_fatal("test_kfunc__open");
	bpf_program__set_autoload(skel->progs.kf_kprobe, false);
	bpf_program__set_autoload(skel->progs.kf_perf, false);
	bpf_program__set_autoload(skel->progs.kf_tp, false);
	bpf_program__set_autoload(skel->progs.kf_unbounded, false);
	bpf_program__set_autoload(skel->progs.kf_maybe_null, false);
	bpf_program__set_autoload(skel->progs.kf_rodata, false);
	bpf_program__set_autoload(skel->progs.kf_fentry_find, false);
	bpf_program__set_autoload(skel->progs.kf_fentry_output, false);
	vlog_len = 0;
	if (test_kfunc__load(skel)) {
		pt_diag("%s", vlog);
		PT_OK(0, "syscall, xdp and fentry programs calling pea_kf_output load");
		return pt_done();
	}
	PT_OK(1, "syscall, xdp and fentry programs calling pea_kf_output load");

	test_output(skel, pb, id);
	test_probe_prog(types, id, pb, "kprobe", "__x64_sys_getppid",
			KF_KIND_KPROBE, kf_kprobe_prog);
	test_probe_prog(types, id, pb, "tracepoint", "syscalls:sys_enter_getppid",
			KF_KIND_TP, kf_tp_prog);
	test_perf(types, id, pb);
	test_unbounded();
	test_notrace();
	test_rodata();
	test_privilege();
	test_errnos(skel, map, id);
	test_percpu_counts(skel, id);
	test_full(skel);
	test_zc(types, id, pb);
	test_many(skel, id, pb);
	test_ordered(skel);
	test_example();
	test_churn();
	/* Last: before its fix, 6.1's kernel oopses here. */
	test_maybe_null(id, pb);

	test_kfunc__destroy(skel);
	pea_buffer__free(pb);
	close(map);
	/*
	 * The kernel frees programs after a grace period and drops their
	 * module references then: wait, so that the next test starts from
	 * the references it expects (test_map counts them).
	 */
	for (i = 0; i < 100 * pt_time_scale(); i++) {
		r1 = module_refcnt();
		if (r1 == r0)
			break;
		usleep(50000);
	}
	PT_EQ(r1, r0, "every reference the test took on pea is gone");
	return pt_done();
}
