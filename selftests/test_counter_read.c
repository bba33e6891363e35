// SPDX-License-Identifier: GPL-2.0
/*
 * pea_read_value() and pea_read(), through the test module:
 *  - every errno in bpf_perf_event_read_value()'s order (EINVAL size,
 *    EINVAL flags, E2BIG, ENOENT, EINVAL output event, EOPNOTSUPP inherit,
 *    EINVAL another CPU's counter, EBUSY pinned and not running), with
 *    the buffer zeroed over exactly @size bytes, and pea_read() returning
 *    the same errno as a u64;
 *  - reads from task, hardirq (hrtimer), NMI and kprobe context on every
 *    CPU, each bracketed by read(2)s before and after: the in-kernel
 *    lock-free read agrees with perf's own (perf_event_read_value())
 *    for the count, time_enabled and time_running;
 *  - a disabled counter reads exactly what read(2) reads; RESET applies.
 */
#include "pea_test.h"
#include "pt_counter.h"

#define MAP	"ctr_read"
#define CPU	1

enum {
	SLOT_OUTPUT = 4,	/* an output event */
	SLOT_PINNED,		/* pinned, disabled: EBUSY */
	SLOT_INHERIT,		/* inherit: EOPNOTSUPP */
	SLOT_EMPTY,
	NSLOTS,
};

static int ctr[4];		/* cpu-clock on CPU i, in slot i */

static void check_fill(const struct pea_st_read *r, __u32 zeroed,
		       const char *what)
{
	const unsigned char *b = (const unsigned char *)r->buf;
	bool ok = true;
	__u32 i;

	for (i = 0; i < sizeof(r->buf); i++)
		if (b[i] != (i < zeroed ? 0 : 0xa5))
			ok = false;
	PT_OK(ok, "%s: the first %u bytes zeroed, the rest untouched", what,
	      zeroed);
}

/*
 * pea_read_value() must fail with @err; pea_read(), which has no size,
 * with @read_err, or (@read_err 0) return a count.
 */
static void expect_err2(__u64 flags, __u32 size, __u32 ctx, int err,
			int read_err, const char *what)
{
	struct pea_st_read r;

	PT_EQ(pt_st_read(MAP, flags, size, ctx, &r), 0, "%s: ioctl", what);
	PT_EQ(r.ret, -err, "%s (%s): pea_read_value gives %s", what,
	      pt_ctx_name(ctx), strerror(err));
	if (read_err)
		PT_EQ(r.read_ret, (__u64)(__s64)-read_err,
		      "%s (%s): pea_read gives %s", what, pt_ctx_name(ctx),
		      strerror(read_err));
	else
		PT_OK(r.read_ret < (__u64)-4095,
		      "%s (%s): pea_read, which has no size, reads the count (%llu)",
		      what, pt_ctx_name(ctx), (unsigned long long)r.read_ret);
	check_fill(&r, size, what);
}

static void expect_err(__u64 flags, __u32 size, __u32 ctx, int err,
		       const char *what)
{
	expect_err2(flags, size, ctx, err, err, what);
}

static void setup(void)
{
	struct perf_event_attr a = pt_counter_attr(PERF_TYPE_SOFTWARE,
						   PERF_COUNT_SW_CPU_CLOCK);
	int map = pt_map_create(MAP, NSLOTS, 0), fd, i;

	PT_OK(map >= 0, "map " MAP " created");
	for (i = 0; i < 4; i++) {
		ctr[i] = pt_event_open_attr(&a, i);
		pt_map_update(map, i, ctr[i]);
	}
	fd = pt_event_open(CPU, PERF_SAMPLE_RAW);
	PT_EQ(pt_map_update(map, SLOT_OUTPUT, fd), 0, "an output event in slot 4");
	a.pinned = 1;
	a.disabled = 1;
	fd = pt_event_open_attr(&a, CPU);
	PT_EQ(pt_map_update(map, SLOT_PINNED, fd), 0,
	      "a pinned, disabled counter in slot 5");
	a.pinned = 0;
	a.disabled = 0;
	a.inherit = 1;
	fd = pt_event_open_attr(&a, CPU);
	PT_EQ(pt_map_update(map, SLOT_INHERIT, fd), 0,
	      "an inherit counter in slot 6");
	/* The map fd stays open: the slots live as long as the test. */
}

static void test_errnos(void)
{
	struct pea_st_read r;
	__u32 ctx;

	pt_pin(CPU);
	PT_EQ(pt_st_read("no_such_map", 0, 24, 0, &r), -ENOENT,
	      "pea_map_get_by_name: an unknown map gives ENOENT");
	expect_err2(PEA_F_CURRENT_CPU, 16, PEA_ST_READ_TASK, EINVAL, 0,
		    "size 16");
	expect_err2(PEA_F_CURRENT_CPU, 32, PEA_ST_READ_TASK, EINVAL, 0,
		    "size 32");
	expect_err2(PEA_F_CURRENT_CPU, 0, PEA_ST_READ_TASK, EINVAL, 0,
		    "size 0");
	expect_err(1ULL << 32 | CPU, 24, PEA_ST_READ_TASK, EINVAL,
		   "a CTXLEN flag bit");
	expect_err(1ULL << 63 | NSLOTS, 24, PEA_ST_READ_TASK, EINVAL,
		   "bad flags before a bad index");
	expect_err(NSLOTS, 24, PEA_ST_READ_TASK, E2BIG, "index == max_entries");
	expect_err(0xfffffffeULL, 24, PEA_ST_READ_TASK, E2BIG,
		   "index 0xfffffffe");
	expect_err(SLOT_EMPTY, 24, PEA_ST_READ_TASK, ENOENT, "an empty slot");
	expect_err(SLOT_OUTPUT, 24, PEA_ST_READ_TASK, EINVAL,
		   "an output event (not a counter)");
	expect_err(SLOT_INHERIT, 24, PEA_ST_READ_TASK, EOPNOTSUPP,
		   "an inherit counter");
	expect_err(CPU + 1, 24, PEA_ST_READ_TASK, EINVAL,
		   "another CPU's counter");
	expect_err(SLOT_PINNED, 24, PEA_ST_READ_TASK, EBUSY,
		   "a pinned counter that is not running");
	for (ctx = PEA_ST_READ_HARDIRQ; ctx < PEA_ST_READ_NR_CTX; ctx++) {
		expect_err(CPU + 1, 24, ctx, EINVAL, "another CPU's counter");
		expect_err(SLOT_PINNED, 24, ctx, EBUSY, "pinned, disabled");
		expect_err2(SLOT_EMPTY, 16, ctx, EINVAL, ENOENT,
			    "size 16, empty slot");
	}
}

/* One in-kernel read between two read(2)s of the same counter. */
static void bracketed(int cpu, __u32 ctx, __u64 flags)
{
	struct pt_cval a, b;
	struct pea_event_value v;
	struct pea_st_read r;

	pt_pin(cpu);
	a = pt_cread_ok(ctr[cpu]);
	PT_EQ(pt_st_read(MAP, flags, 24, ctx, &r), 0, "ioctl");
	b = pt_cread_ok(ctr[cpu]);
	v = pt_st_value(&r);
	PT_EQ(r.ret, 0, "CPU %d, %s: pea_read_value succeeds", cpu,
	      pt_ctx_name(ctx));
	PT_EQ(r.cpu, cpu, "CPU %d, %s: the read ran on CPU %d", cpu,
	      pt_ctx_name(ctx), cpu);
	PT_OK(pt_between(a.value, v.counter, b.value) &&
	      pt_between(a.enabled, v.enabled, b.enabled) &&
	      pt_between(a.running, v.running, b.running),
	      "CPU %d, %s: value, enabled, running between two read(2)s (%llu <= %llu <= %llu)",
	      cpu, pt_ctx_name(ctx), (unsigned long long)a.value,
	      (unsigned long long)v.counter, (unsigned long long)b.value);
	PT_OK(pt_between(v.counter, r.read_ret, b.value),
	      "CPU %d, %s: pea_read, just after, between the two (%llu)", cpu,
	      pt_ctx_name(ctx), (unsigned long long)r.read_ret);
}

static void test_contexts(void)
{
	static const __u32 want[] = {
		[PEA_ST_READ_TASK] = PEA_ST_CTX_TASK,
		[PEA_ST_READ_HARDIRQ] = PEA_ST_CTX_HARDIRQ,
		[PEA_ST_READ_NMI] = PEA_ST_CTX_NMI,
	};
	struct pea_st_read r;
	__u32 ctx;
	int cpu;

	for (ctx = 0; ctx < PEA_ST_READ_NR_CTX; ctx++) {
		pt_pin(CPU);
		PT_EQ(pt_st_read(MAP, PEA_F_CURRENT_CPU, 24, ctx, &r), 0,
		      "ioctl");
		if (ctx < PEA_ST_READ_KPROBE)
			PT_EQ(r.seen_ctx, want[ctx],
			      "%s: the read ran in %s context", pt_ctx_name(ctx),
			      pt_ctx_name(ctx));
		else
			PT_EQ(r.ret, 0, "kprobe: pea_read_value succeeds in the handler (context bits 0x%x)",
			      r.seen_ctx);
	}
	for (cpu = 0; cpu < pt_nr_cpus(); cpu++)
		for (ctx = 0; ctx < PEA_ST_READ_NR_CTX; ctx++)
			bracketed(cpu, ctx, ctx % 2 ? (__u64)cpu :
				  PEA_F_CURRENT_CPU);
}

static void test_disabled_and_reset(void)
{
	struct pea_event_value v;
	struct pea_st_read r;
	struct pt_cval a;
	__u32 ctx;

	pt_pin(CPU);
	ioctl(ctr[CPU], PERF_EVENT_IOC_DISABLE, 0);
	a = pt_cread_ok(ctr[CPU]);
	for (ctx = 0; ctx < PEA_ST_READ_NR_CTX; ctx++) {
		pt_st_read(MAP, CPU, 24, ctx, &r);
		v = pt_st_value(&r);
		PT_OK(r.ret == 0 && v.counter == a.value &&
		      v.enabled == a.enabled && v.running == a.running,
		      "disabled, %s: exactly what read(2) reads (%llu, %llu, %llu)",
		      pt_ctx_name(ctx), (unsigned long long)v.counter,
		      (unsigned long long)v.enabled,
		      (unsigned long long)v.running);
	}
	PT_EQ(r.read_ret, a.value, "disabled: pea_read gives the same count");
	ioctl(ctr[CPU], PERF_EVENT_IOC_RESET, 0);
	pt_st_read(MAP, CPU, 24, PEA_ST_READ_NMI, &r);
	v = pt_st_value(&r);
	PT_OK(r.ret == 0 && v.counter == 0 && v.enabled == a.enabled,
	      "after RESET, NMI: count 0, times kept");
	ioctl(ctr[CPU], PERF_EVENT_IOC_ENABLE, 0);
	pt_sleep_ns(2000000);
	pt_st_read(MAP, CPU, 24, PEA_ST_READ_TASK, &r);
	v = pt_st_value(&r);
	PT_OK(r.ret == 0 && v.counter >= 2000000 &&
	      v.counter <= v.enabled - a.enabled + 1000000,
	      "enabled again: counting from the reset (%llu ns)",
	      (unsigned long long)v.counter);
}

static void test_pinned_enabled(void)
{
	struct perf_event_attr a = pt_counter_attr(PERF_TYPE_SOFTWARE,
						   PERF_COUNT_SW_CPU_CLOCK);
	int map = pt_map_create("ctr_read_pin", 2, 0);
	struct pea_st_read r;
	int fd;

	a.pinned = 1;
	a.disabled = 1;
	fd = pt_event_open_attr(&a, CPU);
	pt_map_update(map, CPU, fd);
	pt_pin(CPU);
	pt_st_read("ctr_read_pin", CPU, 24, PEA_ST_READ_NMI, &r);
	PT_EQ(r.ret, -EBUSY, "pinned and disabled: EBUSY");
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	pt_st_read("ctr_read_pin", CPU, 24, PEA_ST_READ_NMI, &r);
	PT_EQ(r.ret, 0, "pinned and enabled: it runs, the read succeeds");
	close(fd);
	close(map);
}

int main(void)
{
	pt_st();	/* anchors the software events' jump labels */
	setup();
	test_errnos();
	test_contexts();
	test_disabled_and_reset();
	test_pinned_enabled();
	return pt_done();
}
