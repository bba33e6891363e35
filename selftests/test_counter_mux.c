// SPDX-License-Identifier: GPL-2.0
/*
 * Multiplexing, forced: software events never multiplex (perf always
 * schedules them) and this guest has no hardware PMU, so the test module
 * registers "pea_st", a CPU-only PMU with one counter slot per CPU whose
 * event counts the ns it is scheduled. Two such counters on one CPU take
 * turns (perf rotates them every 4 ms): each one's time_running falls
 * below its time_enabled, and value * enabled / running recovers the
 * whole count (within 10%: the rotation is timer-driven).
 *
 * Also pinned counters: a second pinned counter cannot go on, goes to
 * perf's ERROR state and reads end of file (as perf), pea_read_value()
 * gives EBUSY, libpea's pea_counter_read() -ENODATA; a flexible counter
 * behind a pinned one never runs: "not counted", scaled to 0.
 */
#include "pea_test.h"
#include "pt_counter.h"
#include "libpea.h"

#define MAP	"ctr_mux"

static int type;

static int st_counter(__u64 config, int cpu, bool pinned)
{
	struct perf_event_attr a = pt_counter_attr(type, config);

	a.pinned = pinned;
	return pt_event_open_attr(&a, cpu);
}

static struct pt_cval diff(struct pt_cval b, struct pt_cval a)
{
	struct pt_cval d = { b.value - a.value, b.enabled - a.enabled,
			     b.running - a.running };

	return d;
}

static __u64 scale(struct pt_cval d)
{
	struct pea_counter_value v = { d.value, d.enabled, d.running };

	return pea_counter_scale(&v);
}

static bool within(__u64 got, __u64 want, double frac)
{
	double diff = (double)got - (double)want;

	return diff <= want * frac && -diff <= want * frac;
}

static void test_pmu(void)
{
	struct perf_event_attr a;
	int fd;

	pt_st();
	type = pt_pmu_type(PEA_ST_PMU_NAME);
	PT_OK(type > PERF_TYPE_MAX, "the test PMU " PEA_ST_PMU_NAME
	      " has a dynamic type (%d)", type);
	a = pt_counter_attr(type, PEA_ST_PMU_UNSUPPORTED);
	fd = pt_event_open_attr(&a, 1);
	PT_EQ(fd, -EOPNOTSUPP, "create: the PMU's EOPNOTSUPP passes through");
	a = pt_counter_attr(type, 7);
	fd = pt_event_open_attr(&a, 1);
	PT_EQ(fd, -EINVAL, "create: the PMU's EINVAL passes through");
}

static void test_multiplex(void)
{
	int map = pt_map_create(MAP, 4, 0);
	int a = st_counter(PEA_ST_PMU_NS, 1, false), b;
	struct pt_cval a0, a1, b0, b1, da, db;
	struct pea_event_value v;
	struct pea_st_read r;
	__u64 sa, sb;

	pt_sleep_ns(50000000);
	a0 = pt_cread_ok(a);
	PT_EQ(a0.enabled, a0.running, "alone on its PMU: enabled == running");
	/* The PMU reads local_clock(): tick-accurate on this idle guest CPU. */
	PT_OK(a0.running > 0 && within(a0.value, a0.running, 0.1),
	      "alone: it counts the ns it ran (%llu in %llu ns)",
	      (unsigned long long)a0.value, (unsigned long long)a0.running);

	b = st_counter(PEA_ST_PMU_NS, 1, false);
	pt_map_update(map, 1, a);
	pt_map_update(map, 2, b);
	a0 = pt_cread_ok(a);
	b0 = pt_cread_ok(b);
	pt_sleep_ns(400000000);
	a1 = pt_cread_ok(a);
	b1 = pt_cread_ok(b);
	da = diff(a1, a0);
	db = diff(b1, b0);
	pt_diag("A: %llu in %llu/%llu ns; B: %llu in %llu/%llu ns",
		(unsigned long long)da.value, (unsigned long long)da.running,
		(unsigned long long)da.enabled, (unsigned long long)db.value,
		(unsigned long long)db.running, (unsigned long long)db.enabled);
	PT_OK(da.running > 0 && da.running < da.enabled,
	      "two on a one-slot PMU: A multiplexed (0 < running < enabled)");
	PT_OK(db.running > 0 && db.running < db.enabled,
	      "two on a one-slot PMU: B multiplexed (0 < running < enabled)");
	PT_OK(within(da.running + db.running, da.enabled, 0.1),
	      "A and B share the slot: running times add up to the enabled time");
	sa = scale(da);
	sb = scale(db);
	PT_EQ(sa, (__u64)((unsigned __int128)da.value * da.enabled / da.running),
	      "pea_counter_scale(A) is value * enabled / running");
	PT_OK(within(sa, da.enabled, 0.1) && within(sb, db.enabled, 0.1),
	      "scaling recovers the full count: %llu and %llu for %llu ns enabled",
	      (unsigned long long)sa, (unsigned long long)sb,
	      (unsigned long long)da.enabled);

	/* In-kernel reads of a multiplexed counter, active or not. */
	pt_pin(1);
	a0 = pt_cread_ok(a);
	pt_st_read(MAP, 1, 24, PEA_ST_READ_NMI, &r);
	a1 = pt_cread_ok(a);
	v = pt_st_value(&r);
	PT_OK(r.ret == 0 && pt_between(a0.value, v.counter, a1.value) &&
	      pt_between(a0.enabled, v.enabled, a1.enabled) &&
	      pt_between(a0.running, v.running, a1.running),
	      "NMI read of a multiplexed counter: between two read(2)s");
	b0 = pt_cread_ok(b);
	pt_st_read(MAP, 2, 24, PEA_ST_READ_HARDIRQ, &r);
	b1 = pt_cread_ok(b);
	v = pt_st_value(&r);
	PT_OK(r.ret == 0 && pt_between(b0.value, v.counter, b1.value) &&
	      pt_between(b0.enabled, v.enabled, b1.enabled) &&
	      pt_between(b0.running, v.running, b1.running),
	      "hardirq read of the other: between two read(2)s");

	/* DISABLE is synchronous; the release after close is not. */
	ioctl(b, PERF_EVENT_IOC_DISABLE, 0);
	close(b);
	pt_map_delete(map, 2);
	pt_sleep_ns(20000000);
	a0 = pt_cread_ok(a);
	pt_sleep_ns(50000000);
	a1 = pt_cread_ok(a);
	da = diff(a1, a0);
	PT_EQ(da.running, da.enabled, "alone again: running keeps up with enabled");
	close(a);
	close(map);
}

static void test_pinned(void)
{
	int map = pt_map_create(MAP "_p", 4, 0);
	int c = st_counter(PEA_ST_PMU_NS, 2, true);
	int d = st_counter(PEA_ST_PMU_NS, 2, true);
	int e = st_counter(PEA_ST_PMU_NS, 2, false);
	struct pea_counter_value lv;
	struct pt_cval cv, ev;
	struct pea_st_read r;
	__u64 buf[3];

	PT_OK(c >= 0 && d >= 0 && e >= 0,
	      "two pinned and one flexible counter on a one-slot PMU");
	pt_sleep_ns(50000000);
	cv = pt_cread_ok(c);
	PT_OK(cv.running > 0 && cv.running == cv.enabled,
	      "the first pinned counter runs all the time");
	PT_EQ(read(d, buf, sizeof(buf)), 0,
	      "the second pinned counter reads end of file (perf's ERROR state)");
	PT_EQ(pea_counter_read(d, &lv), -ENODATA,
	      "libpea: pea_counter_read gives -ENODATA for it");
	pt_map_update(map, 2, d);
	pt_pin(2);
	pt_st_read(MAP "_p", 2, 24, PEA_ST_READ_NMI, &r);
	PT_EQ(r.ret, -EBUSY, "pea_read_value of the failed pinned counter: EBUSY");
	ev = pt_cread_ok(e);
	PT_OK(ev.enabled > 0 && ev.running == 0,
	      "the flexible one behind a pinned one never ran (running 0)");
	PT_EQ(scale(ev), 0, "pea_counter_scale of a counter that never ran is 0");

	ioctl(c, PERF_EVENT_IOC_DISABLE, 0);
	PT_EQ(ioctl(d, PERF_EVENT_IOC_ENABLE, 0), 0,
	      "the slot is free: ENABLE the failed pinned counter");
	pt_sleep_ns(20000000);
	PT_EQ(read(d, buf, sizeof(buf)), 24, "now it reads");
	pt_st_read(MAP "_p", 2, 24, PEA_ST_READ_NMI, &r);
	PT_EQ(r.ret, 0, "and pea_read_value succeeds");
	close(c);
	close(d);
	close(e);
	close(map);
}

int main(void)
{
	test_pmu();
	test_multiplex();
	test_pinned();
	return pt_done();
}
