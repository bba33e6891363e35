// SPDX-License-Identifier: GPL-2.0
/*
 * Counters on a PMU that puts its events on another CPU than the one asked
 * for and moves them on CPU hotplug, as uncore, RAPL and cstate PMUs do:
 * the test module's "pea_st_pkg" (one designated CPU in its sysfs
 * cpumask). Checked:
 *  - a counter opened for another CPU lives on the designated CPU, and
 *    PEA_MAP_IOC_LOOKUP reports that CPU;
 *  - with no read(2) at all, its page is refreshed from that CPU: the
 *    published count keeps up with the published time_running (the PMU
 *    counts ns while active), and the PMU saw no read on any other CPU;
 *    with PERF_EV_CAP_READ_ACTIVE_PKG too, where any CPU of the package
 *    could read it;
 *  - pea_read_value() on the designated CPU reads it (between two
 *    read(2)s), on every other CPU gives EINVAL as Linux's
 *    perf_event_read_local() does for an event of another CPU;
 *  - offlining the designated CPU moves the event (the PMU's
 *    perf_pmu_migrate_context()) and pea follows: LOOKUP reports the new
 *    CPU, the page is refreshed from it, the published count never goes
 *    back, pea_read_value() works there; no wrong-CPU read;
 *  - after DISABLE, read(2) equals exactly the ns the PMU itself counted;
 *  - on kernels with PMU scopes (6.12), "pea_st_scope": perf keeps the
 *    event on the CPU asked for and pea_read_value() reads it from every
 *    CPU of the scope (PERF_EV_CAP_READ_SCOPE), as perf_event_read_local()
 *    does there.
 * Timing bounds are generous (an emulated vCPU may be descheduled): the
 * count must cover at least half the running time; in the defect it
 * stays where the last read(2) left it.
 */
#include "pea_test.h"
#include "pt_counter.h"
#include "libpea.h"

#define MAP		"ctr_cpu"
#define PKG_DIR		"/sys/bus/event_source/devices/" PEA_ST_PKG_PMU_NAME
#define WAIT_NS		300000000ULL
#define SKEW_NS		5000000ULL	/* count ahead of running, at most */

static int pkg_type, map_fd;
static int offlined = -1;	/* a CPU this test took offline */

/* Earlier tests may have moved the PMU's CPU: any CPU may be offline. */
static bool cpu_is_online(int cpu)
{
	char path[64], buf[8];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online",
		 cpu);
	if (pt_read_file(path, buf, sizeof(buf)))
		return cpu == 0;	/* CPU 0 may have no online file */
	return buf[0] == '1';
}

static int nr_cpus_conf(void)
{
	return (int)sysconf(_SC_NPROCESSORS_CONF);
}

/* However the test ends, the CPU it took offline comes back. */
static void restore_cpu(void)
{
	char path[64];

	if (offlined < 0)
		return;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online",
		 offlined);
	pt_write_file(path, "1");
	offlined = -1;
}

static long long pkg_attr(const char *name)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), PKG_DIR "/%s", name);
	if (pt_read_file(path, buf, sizeof(buf)))
		pt_fatal(path);
	return atoll(buf);
}

static int pkg_cpu(void)
{
	return (int)pkg_attr("cpumask");
}

/*
 * The lowest CPU other than @a and @b: not where the PMU moves its events
 * (the highest other CPU), so that following the CPU asked for is wrong
 * before and after the move.
 */
static int other_cpu(int a, int b)
{
	int cpu;

	for (cpu = 0; cpu < nr_cpus_conf(); cpu++)
		if (cpu != a && cpu != b && cpu_is_online(cpu))
			return cpu;
	return -1;
}

static int lookup_cpu(__u32 key)
{
	struct pea_map_elem e = { .key = key };

	if (ioctl(map_fd, PEA_MAP_IOC_LOOKUP, &e))
		return -errno;
	return e.cpu;
}

static struct perf_event_mmap_page *map_page(int fd)
{
	void *p = mmap(NULL, pt_page_size(), PROT_READ, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		pt_fatal("mmap counter page");
	return p;
}

static struct pea_counter_value page_read(const void *pg, __u64 *stamp)
{
	struct pea_counter_value v;

	pea_counter_read_page(pg, &v, stamp);
	return v;
}

/* The page kept up: its count covers at least half of its running time. */
static bool fresh(struct pea_counter_value from, struct pea_counter_value to)
{
	__u64 dv = to.value - from.value, dr = to.running - from.running;

	return to.value >= from.value && to.running > from.running &&
	       dv >= dr / 2 && dv <= dr + SKEW_NS;
}

static void show(const char *what, struct pea_counter_value v)
{
	pt_diag("%s: count %llu enabled %llu running %llu", what,
		(unsigned long long)v.value, (unsigned long long)v.enabled,
		(unsigned long long)v.running);
}

/* pea_read_value() on @cpu, in task context. */
static struct pea_st_read kread(int cpu, __u32 key)
{
	struct pea_st_read r;

	pt_pin(cpu);
	if (pt_st_read(MAP, key, sizeof(struct pea_event_value),
		       PEA_ST_READ_TASK, &r))
		pt_fatal("PEA_ST_IOC_READ");
	return r;
}

static void check_kreads(int fd, int home, __u32 key, const char *when)
{
	struct pt_cval r1, r2;
	struct pea_event_value v;
	struct pea_st_read r;
	bool einval = true;
	int cpu;

	pt_pin(home);
	r1 = pt_cread_ok(fd);
	r = kread(home, key);
	r2 = pt_cread_ok(fd);
	v = pt_st_value(&r);
	PT_EQ(r.ret, 0, "%s: pea_read_value() on CPU %d, the event's, reads it",
	      when, home);
	PT_OK(pt_between(r1.value, v.counter, r2.value) &&
	      pt_between(r1.running, v.running, r2.running),
	      "%s: its count and time running fall between two read(2)s (%llu <= %llu <= %llu)",
	      when, (unsigned long long)r1.value,
	      (unsigned long long)v.counter, (unsigned long long)r2.value);
	for (cpu = 0; cpu < nr_cpus_conf(); cpu++) {
		if (cpu == home || !cpu_is_online(cpu))
			continue;
		r = kread(cpu, key);
		if (r.ret != -EINVAL) {
			pt_diag("CPU %d: pea_read_value gave %lld", cpu,
				(long long)r.ret);
			einval = false;
		}
	}
	PT_OK(einval, "%s: on every other CPU it gives EINVAL", when);
}

/* The counter of slot 0: from creation to migration and exact totals. */
static void test_follow(void)
{
	char online[64];
	struct pea_counter_value p0, p1, p2, prev;
	long long total0, wrong0, reads0;
	struct perf_event_mmap_page *pg;
	int home, req, fd, new_home, i;
	struct pt_cval v;
	bool mono = true;
	__u64 stamp;

	home = pkg_cpu();
	req = other_cpu(home, 0);
	PT_OK(home > 0 && req >= 0,
	      PEA_ST_PKG_PMU_NAME ": designated CPU %d, counter asked for CPU %d",
	      home, req);
	if (home <= 0 || req < 0)
		return;
	total0 = pkg_attr("st_total");
	wrong0 = pkg_attr("st_wrong_reads");
	reads0 = pkg_attr("st_reads");
	fd = pt_counter_open(pkg_type, PEA_ST_PKG_NS, req);
	PT_OK(fd >= 0, "counter opened for CPU %d", req);
	if (fd < 0)
		return;
	PT_EQ(pt_map_update(map_fd, 0, fd), 0, "in slot 0 of " MAP);
	PT_EQ(lookup_cpu(0), home,
	      "PEA_MAP_IOC_LOOKUP reports the CPU perf put it on");
	pg = map_page(fd);

	pt_pin(0);
	p0 = page_read(pg, NULL);
	pt_sleep_ns(WAIT_NS);
	p1 = page_read(pg, &stamp);
	show("page at start", p0);
	show("page 300 ms later", p1);
	PT_OK(fresh(p0, p1),
	      "no read(2): the page is refreshed from CPU %d, its count keeps up with time running",
	      home);
	PT_OK(pkg_attr("st_reads") > reads0,
	      "the PMU was read (%lld times) by the refresh",
	      pkg_attr("st_reads") - reads0);
	PT_EQ(pkg_attr("st_wrong_reads") - wrong0, 0,
	      "the PMU was never read on another CPU than the event's");

	check_kreads(fd, home, 0, "before hotplug");

	/* Offline the designated CPU: the PMU moves the event, pea follows. */
	pt_pin(0);
	p1 = page_read(pg, NULL);
	snprintf(online, sizeof(online),
		 "/sys/devices/system/cpu/cpu%d/online", home);
	PT_EQ(pt_write_file(online, "0"), 0, "CPU %d taken offline", home);
	offlined = home;
	new_home = pkg_cpu();
	PT_OK(new_home >= 0 && new_home != home && new_home != req,
	      PEA_ST_PKG_PMU_NAME " moved its events to CPU %d", new_home);
	PT_EQ(lookup_cpu(0), new_home,
	      "PEA_MAP_IOC_LOOKUP reports the CPU the event moved to");
	prev = p1;
	for (i = 0; i < 30; i++) {
		pt_sleep_ns(WAIT_NS / 30);
		p2 = page_read(pg, NULL);
		if (p2.value < prev.value || p2.running < prev.running)
			mono = false;
		prev = p2;
	}
	show("page before offline", p1);
	show("page 300 ms after", p2);
	PT_OK(mono, "30 page reads across the move: count and times never go back");
	PT_OK(fresh(p1, p2),
	      "no read(2): the page is refreshed from CPU %d, the count keeps up with time running",
	      new_home);
	check_kreads(fd, new_home, 0, "after the move");
	PT_EQ(pt_write_file(online, "1"), 0, "CPU %d back online", home);
	offlined = -1;
	PT_EQ(pkg_cpu(), new_home, "the event stays on CPU %d (as uncore)",
	      new_home);

	pt_pin(0);
	PT_EQ(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0, "DISABLE");
	pt_sleep_ns(20000000);
	v = pt_cread_ok(fd);
	PT_EQ(v.value, pkg_attr("st_total") - total0,
	      "read(2) gives exactly the ns the PMU counted (%llu)",
	      (unsigned long long)v.value);
	p2 = page_read(pg, NULL);
	PT_OK(p2.value == v.value && p2.enabled == v.enabled &&
	      p2.running == v.running,
	      "and the page holds exactly what read(2) returned");
	PT_EQ(pkg_attr("st_wrong_reads") - wrong0, 0,
	      "the PMU was never read on another CPU than the event's (%lld reads)",
	      pkg_attr("st_reads") - reads0);
	PT_EQ(pt_map_delete(map_fd, 0), 0, "slot 0 emptied");
	munmap(pg, pt_page_size());
	close(fd);
}

/*
 * PERF_EV_CAP_READ_ACTIVE_PKG: perf lets any CPU of the package read the
 * event, but the page is still refreshed from the event's CPU only.
 */
static void test_pkg_read(void)
{
	struct pea_counter_value p0, p1;
	struct perf_event_mmap_page *pg;
	long long wrong0, total0;
	struct pea_st_read r;
	int home, req, fd;
	struct pt_cval v;

	home = pkg_cpu();
	req = other_cpu(home, 0);
	if (req < 0)
		req = 0;
	total0 = pkg_attr("st_total");
	wrong0 = pkg_attr("st_wrong_reads");
	fd = pt_counter_open(pkg_type, PEA_ST_PKG_NS_PKGREAD, req);
	PT_OK(fd >= 0, "READ_ACTIVE_PKG counter opened for CPU %d", req);
	if (fd < 0)
		return;
	PT_EQ(pt_map_update(map_fd, 1, fd), 0, "in slot 1 of " MAP);
	PT_EQ(lookup_cpu(1), home, "LOOKUP reports CPU %d", home);
	pg = map_page(fd);
	/* perf's read(2) reads a package event on the reader's CPU. */
	pt_pin(home);
	p0 = page_read(pg, NULL);
	pt_sleep_ns(WAIT_NS);
	p1 = page_read(pg, NULL);
	show("READ_ACTIVE_PKG page at start", p0);
	show("300 ms later", p1);
	PT_OK(fresh(p0, p1), "READ_ACTIVE_PKG: the page is refreshed");
	PT_EQ(pkg_attr("st_wrong_reads") - wrong0, 0,
	      "READ_ACTIVE_PKG: the refresh never read the PMU on another CPU than the event's");
	r = kread(req, 1);
	PT_EQ(r.ret, 0,
	      "READ_ACTIVE_PKG: pea_read_value() on CPU %d, same package, reads it",
	      req);
	pt_pin(home);
	PT_EQ(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0, "DISABLE");
	v = pt_cread_ok(fd);
	PT_EQ(v.value, pkg_attr("st_total") - total0,
	      "READ_ACTIVE_PKG: read(2) gives exactly the ns the PMU counted");
	PT_EQ(pt_map_delete(map_fd, 1), 0, "slot 1 emptied");
	munmap(pg, pt_page_size());
	close(fd);
}

/* PERF_EV_CAP_READ_SCOPE: readable from any CPU of the PMU's scope. */
static void test_scope(void)
{
	struct pea_counter_value p0, p1;
	struct perf_event_mmap_page *pg;
	struct pt_cval r1, r2, v;
	struct pea_event_value kv;
	int type, req, fd, cpu;
	struct pea_st_read r;
	bool ok = true;
	long long total0;

	type = pt_pmu_type(PEA_ST_SCOPE_PMU_NAME);
	if (type == -ENOENT) {
		pt_diag("no " PEA_ST_SCOPE_PMU_NAME
			": this kernel has no PMU scopes (pmu->scope)");
		return;
	}
	PT_OK(type > 0, PEA_ST_SCOPE_PMU_NAME " PMU registered (type %d)", type);
	req = other_cpu(0, -1);
	total0 = pkg_attr("st_total");
	fd = pt_counter_open(type, PEA_ST_PKG_NS, req);
	PT_OK(fd >= 0, "scope counter opened for CPU %d", req);
	if (fd < 0)
		return;
	PT_EQ(pt_map_update(map_fd, 1, fd), 0, "in slot 1 of " MAP);
	PT_EQ(lookup_cpu(1), req,
	      "LOOKUP reports CPU %d: perf keeps a scoped event where asked",
	      req);
	pg = map_page(fd);
	pt_pin(0);
	p0 = page_read(pg, NULL);
	pt_sleep_ns(WAIT_NS);
	p1 = page_read(pg, NULL);
	show("scope page 300 ms later", p1);
	PT_OK(fresh(p0, p1), "scope: the page is refreshed from CPU %d", req);
	for (cpu = 0; cpu < nr_cpus_conf(); cpu++) {
		if (!cpu_is_online(cpu))
			continue;
		pt_pin(cpu);
		r1 = pt_cread_ok(fd);
		r = kread(cpu, 1);
		r2 = pt_cread_ok(fd);
		kv = pt_st_value(&r);
		if (r.ret || !pt_between(r1.value, kv.counter, r2.value) ||
		    !pt_between(r1.running, kv.running, r2.running)) {
			pt_diag("CPU %d: ret %lld, %llu <= %llu <= %llu?", cpu,
				(long long)r.ret, (unsigned long long)r1.value,
				(unsigned long long)kv.counter,
				(unsigned long long)r2.value);
			ok = false;
		}
	}
	PT_OK(ok, "scope: pea_read_value() reads it on every CPU, between two read(2)s");
	pt_pin(0);
	PT_EQ(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0, "DISABLE");
	v = pt_cread_ok(fd);
	PT_EQ(v.value, pkg_attr("st_total") - total0,
	      "scope: read(2) gives exactly the ns the PMU counted");
	PT_EQ(pt_map_delete(map_fd, 1), 0, "slot 1 emptied");
	munmap(pg, pt_page_size());
	close(fd);
}

int main(void)
{
	pt_st();	/* loads the test module and its PMUs */
	atexit(restore_cpu);
	pkg_type = pt_pmu_type(PEA_ST_PKG_PMU_NAME);
	PT_OK(pkg_type > 0, PEA_ST_PKG_PMU_NAME " PMU registered (type %d)",
	      pkg_type);
	if (pkg_type <= 0)
		return pt_done();
	map_fd = pt_map_create(MAP, 2, 0);
	PT_OK(map_fd >= 0, "map " MAP " created");
	test_follow();
	test_pkg_read();
	test_scope();
	return pt_done();
}
