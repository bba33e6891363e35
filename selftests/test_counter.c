// SPDX-License-Identifier: GPL-2.0
/*
 * Counter events, the ABI: creation and every errno of PEA_IOC_EVENT_OPEN
 * for a counter (pea's checks, then perf's: hardware events in this guest
 * without a PMU give ENOENT), the read(2) layouts, ENABLE, DISABLE,
 * RESET and ID, the control page's mmap rules, and counters in map slots.
 */
#include "pea_test.h"
#include "pt_counter.h"

static void test_create(void)
{
	struct perf_event_attr good = pt_counter_attr(PERF_TYPE_SOFTWARE,
						      PERF_COUNT_SW_PAGE_FAULTS);
	struct perf_event_attr a;
	int fd, i, type;

	fd = pt_event_open_attr(&good, 0);
	PT_OK(fd >= 0, "create: a software page-faults counter on CPU 0");
	PT_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC,
	      "create: PEA_FLAG_FD_CLOEXEC sets FD_CLOEXEC");
	close(fd);

	/* Counters count; nothing of sampling or side-band is honoured. */
	a = good; a.sample_period = 1;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL, "create: sample_period gives EINVAL");
	a = good; a.freq = 1; a.sample_freq = 100;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL, "create: freq gives EINVAL");
	a = good; a.sample_type = PERF_SAMPLE_IP;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL, "create: sample_type gives EINVAL");
	a = good; a.read_format |= PERF_FORMAT_GROUP;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL,
	      "create: read_format GROUP gives EINVAL");
	a = good; a.read_format = 1ULL << 10;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL,
	      "create: an unknown read_format bit gives EINVAL");
	a = good; a.mmap = 1;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL, "create: mmap records give EINVAL");
	a = good; a.comm = 1;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL, "create: comm records give EINVAL");
	a = good; a.enable_on_exec = 1;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL, "create: enable_on_exec gives EINVAL");
	a = good; a.watermark = 1; a.wakeup_watermark = 64;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL, "create: watermark gives EINVAL");
	a = good; a.wakeup_events = 1;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL, "create: wakeup_events gives EINVAL");
	a = good; a.precise_ip = 1;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL, "create: precise_ip gives EINVAL");
	a = good; a.use_clockid = 1;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL, "create: use_clockid gives EINVAL");
	a = good; a.sample_regs_user = 1;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL,
	      "create: sample_regs_user gives EINVAL");
	PT_EQ(pt_event_open_errno(&good, -1), EINVAL, "create: cpu -1 gives EINVAL");
	PT_EQ(pt_event_open_errno(&good, 1 << 20), EINVAL,
	      "create: cpu past nr_cpu_ids gives EINVAL");
	a = good; a.size = 32;
	PT_EQ(pt_event_open_errno(&a, 0), E2BIG, "create: attr.size 32 gives E2BIG");
	a = good; a.size = PERF_ATTR_SIZE_VER0;
	PT_EQ(pt_event_open_errno(&a, 0), 0, "create: attr.size VER0 succeeds");

	/* Honoured bits, one at a time. */
	a = good; a.disabled = 1;
	PT_EQ(pt_event_open_errno(&a, 0), 0, "create: disabled is accepted");
	a = good; a.inherit = 1;
	PT_EQ(pt_event_open_errno(&a, 0), 0, "create: inherit is accepted");
	a = good; a.pinned = 1;
	PT_EQ(pt_event_open_errno(&a, 0), 0, "create: pinned is accepted");
	a = good; a.exclusive = 1;
	PT_EQ(pt_event_open_errno(&a, 0), 0, "create: exclusive is accepted");
	a = good; a.exclude_user = 1; a.exclude_hv = 1; a.exclude_idle = 1;
	PT_EQ(pt_event_open_errno(&a, 0), 0,
	      "create: exclude_user, exclude_hv, exclude_idle are accepted");
	a = good; a.exclude_kernel = 1; a.exclude_host = 1;
	a.exclude_guest = 1;
	PT_EQ(pt_event_open_errno(&a, 0), 0,
	      "create: exclude_kernel, exclude_host, exclude_guest are accepted");
	a = good; a.read_format = PEA_COUNTER_READ_FORMAT;
	PT_EQ(pt_event_open_errno(&a, 0), 0,
	      "create: read_format ENABLED|RUNNING|ID|LOST is accepted");

	/* perf's own errors pass through. */
	a = good; a.type = 1000;
	PT_EQ(pt_event_open_errno(&a, 0), ENOENT, "create: unknown type 1000 gives ENOENT");
	a = good; a.config = 1000;
	PT_EQ(pt_event_open_errno(&a, 0), ENOENT,
	      "create: software config 1000 gives ENOENT");
	for (i = 0; i < PERF_COUNT_HW_MAX; i++) {
		a = pt_counter_attr(PERF_TYPE_HARDWARE, i);
		PT_EQ(pt_event_open_errno(&a, 1), ENOENT,
		      "create: hardware event %d gives ENOENT (no PMU in this guest)",
		      i);
	}
	a = pt_counter_attr(PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_L1D |
			    PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
	PT_EQ(pt_event_open_errno(&a, 1), ENOENT,
	      "create: hw-cache L1-dcache-load-misses gives ENOENT");
	a = pt_counter_attr(PERF_TYPE_RAW, 0x3c);
	PT_EQ(pt_event_open_errno(&a, 1), ENOENT, "create: raw 0x3c gives ENOENT");

	/* A dynamic PMU type from sysfs: msr (tsc is event 0). */
	type = pt_pmu_type("msr");
	PT_OK(type > PERF_TYPE_MAX, "sysfs: the msr PMU has a dynamic type (%d)",
	      type);
	a = pt_counter_attr(type, 0);
	PT_EQ(pt_event_open_errno(&a, 2), 0, "create: msr/tsc/ (a dynamic type) succeeds");
	a.exclude_kernel = 1;
	PT_EQ(pt_event_open_errno(&a, 2), EINVAL,
	      "create: msr/tsc/ with exclude_kernel gives EINVAL (the PMU cannot exclude)");
	a = pt_counter_attr(type, 99);
	PT_EQ(pt_event_open_errno(&a, 2), EINVAL,
	      "create: msr config 99 gives EINVAL (the PMU's answer)");
}

/* A CPU taken offline: ENODEV from perf; online again: fine. */
static void test_offline(void)
{
	const char *online = "/sys/devices/system/cpu/cpu3/online";
	struct perf_event_attr a = pt_counter_attr(PERF_TYPE_SOFTWARE,
						   PERF_COUNT_SW_CPU_CLOCK);

	PT_EQ(pt_write_file(online, "0"), 0, "CPU 3 taken offline");
	PT_EQ(pt_event_open_errno(&a, 3), ENODEV, "create: an offline CPU gives ENODEV");
	PT_EQ(pt_write_file(online, "1"), 0, "CPU 3 back online");
	PT_EQ(pt_event_open_errno(&a, 3), 0, "create: CPU 3 online again succeeds");
}

static void test_read_layouts(void)
{
	struct perf_event_attr a = pt_counter_attr(PERF_TYPE_SOFTWARE,
						   PERF_COUNT_SW_CPU_CLOCK);
	__u64 v[6], id;
	int fd;

	a.read_format = 0;
	fd = pt_event_open_attr(&a, 1);
	PT_EQ(read(fd, v, sizeof(v)), 8, "read: read_format 0 gives 8 bytes");
	PT_EQ(read(fd, v, 7) < 0 ? errno : 0, ENOSPC,
	      "read: a 7-byte buffer gives ENOSPC");
	PT_EQ(syscall(SYS_read, fd, 8UL, 8UL) < 0 ? errno : 0, EFAULT,
	      "read: a bad buffer gives EFAULT");
	close(fd);

	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED;
	fd = pt_event_open_attr(&a, 1);
	PT_EQ(read(fd, v, sizeof(v)), 16, "read: ENABLED gives 16 bytes");
	close(fd);

	a.read_format = PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
	fd = pt_event_open_attr(&a, 1);
	PT_EQ(read(fd, v, sizeof(v)), 24, "read: RUNNING|ID gives 24 bytes");
	PT_EQ(ioctl(fd, PERF_EVENT_IOC_ID, &id), 0, "ioctl ID succeeds");
	PT_EQ(v[2], id, "read: the id field is PERF_EVENT_IOC_ID's");
	close(fd);

	a.read_format = PEA_COUNTER_READ_FORMAT;
	fd = pt_event_open_attr(&a, 1);
	PT_EQ(read(fd, v, 39) < 0 ? errno : 0, ENOSPC,
	      "read: all four formats in 39 bytes give ENOSPC");
	PT_EQ(read(fd, v, sizeof(v)), 40,
	      "read: ENABLED|RUNNING|ID|LOST gives 40 bytes");
	PT_EQ(v[4], 0, "read: lost is 0 (a counter never samples)");
	PT_EQ(v[1], v[2], "read: a software counter's enabled == running");
	close(fd);
}

static void test_ioctls(void)
{
	struct perf_event_attr a = pt_counter_attr(PERF_TYPE_SOFTWARE,
						   PERF_COUNT_SW_CPU_CLOCK);
	struct pea_event_stats st;
	struct pt_cval v1, v2, v3;
	__u64 id, lost;
	int fd;

	a.disabled = 1;
	fd = pt_event_open_attr(&a, 1);
	v1 = pt_cread_ok(fd);
	PT_OK(v1.value == 0 && v1.enabled == 0 && v1.running == 0,
	      "disabled at creation: value, enabled and running are 0");
	PT_EQ(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0, "ioctl ENABLE succeeds");
	pt_sleep_ns(20000000);
	v1 = pt_cread_ok(fd);
	PT_OK(v1.value >= 20000000 && v1.enabled >= 20000000,
	      "enabled for 20 ms: cpu-clock and enabled count (%llu, %llu ns)",
	      (unsigned long long)v1.value, (unsigned long long)v1.enabled);
	PT_EQ(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0, "ioctl DISABLE succeeds");
	v2 = pt_cread_ok(fd);
	pt_sleep_ns(20000000);
	v3 = pt_cread_ok(fd);
	PT_OK(!memcmp(&v2, &v3, sizeof(v2)),
	      "disabled: two reads 20 ms apart are identical");

	PT_EQ(ioctl(fd, PERF_EVENT_IOC_RESET, 0), 0, "ioctl RESET succeeds");
	v3 = pt_cread_ok(fd);
	PT_EQ(v3.value, 0, "RESET: a disabled counter reads 0");
	PT_OK(v3.enabled == v2.enabled && v3.running == v2.running,
	      "RESET leaves time_enabled and time_running alone (as perf)");
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	pt_sleep_ns(5000000);
	v3 = pt_cread_ok(fd);
	/* cpu-clock counts enabled time: now only what followed ENABLE. */
	PT_OK(v3.value >= 5000000 &&
	      v3.value <= v3.enabled - v2.enabled + 1000000,
	      "after RESET the count restarts from 0 (%llu ns in %llu ns enabled)",
	      (unsigned long long)v3.value,
	      (unsigned long long)(v3.enabled - v2.enabled));

	PT_EQ(ioctl(fd, PERF_EVENT_IOC_ID, &id), 0, "ioctl ID succeeds");
	PT_OK(id > 0, "ioctl ID: a non-zero id");
	PT_EQ(pt_ioctl_errno(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, (void *)1),
	      EINVAL, "ioctl PAUSE_OUTPUT gives EINVAL (no ring, as perf)");
	PT_EQ(pt_ioctl_errno(fd, PEA_EVENT_IOC_STATS, &st), ENOTTY,
	      "ioctl PEA_EVENT_IOC_STATS on a counter gives ENOTTY");
	PT_EQ(pt_ioctl_errno(fd, PEA_EVENT_IOC_TAKE_LOST, &lost), ENOTTY,
	      "ioctl PEA_EVENT_IOC_TAKE_LOST on a counter gives ENOTTY");
	PT_EQ(pt_ioctl_errno(fd, _IO(0x24, 0x7f), NULL), ENOTTY,
	      "an unknown ioctl gives ENOTTY");
	close(fd);
}

static void test_mmap_rules(void)
{
	long ps = pt_page_size();
	int fd = pt_sw_counter(PERF_COUNT_SW_CPU_CLOCK, 1);
	struct perf_event_mmap_page *pg;
	void *p;

	p = mmap(NULL, 2 * ps, PROT_READ, MAP_SHARED, fd, 0);
	PT_OK(p == MAP_FAILED && errno == EINVAL,
	      "mmap: two pages give EINVAL (only the control page)");
	p = mmap(NULL, ps, PROT_READ, MAP_PRIVATE, fd, 0);
	PT_OK(p == MAP_FAILED && errno == EINVAL, "mmap: MAP_PRIVATE gives EINVAL");
	p = mmap(NULL, ps, PROT_READ, MAP_SHARED, fd, ps);
	PT_OK(p == MAP_FAILED && errno == EINVAL,
	      "mmap: a non-zero offset gives EINVAL");
	p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	PT_OK(p != MAP_FAILED, "mmap: one page read-write succeeds");
	munmap(p, ps);
	pg = mmap(NULL, ps, PROT_READ, MAP_SHARED, fd, 0);
	PT_OK(pg != MAP_FAILED, "mmap: one page read-only succeeds");
	PT_EQ(pg->cap_bit0_is_deprecated, 1, "page: cap_bit0_is_deprecated is 1");
	PT_EQ(pg->cap_user_rdpmc, 0, "page: cap_user_rdpmc is 0");
	PT_EQ(pg->index, 0, "page: index is 0 (offset is the whole count)");
	PT_EQ(PEA_PAGE_COUNTER_PERIOD(pg), PT_REFRESH_NS,
	      "page: the refresh period is counter_refresh_ms (10 ms)");
	PT_EQ(pg->lock % 2, 0, "page: published at creation (lock even)");
	PT_OK(pg->lock >= 2, "page: lock advanced by the first publication");
	close(fd);
	PT_OK(pg->time_enabled > 0, "page: still readable after close");
	munmap(pg, ps);
}

static void test_map_slots(void)
{
	int map = pt_map_create("ctr_abi", 4, 0);
	int ctr = pt_sw_counter(PERF_COUNT_SW_PAGE_FAULTS, 0);
	struct pea_map_elem e = { .key = 0 };
	char payload[8] = { 0 };
	__u64 id;

	pt_pin(0);
	PT_EQ(pt_map_update(map, 0, ctr), 0, "map: a counter fits a slot");
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_LOOKUP, &e), 0, "map: LOOKUP succeeds");
	ioctl(ctr, PERF_EVENT_IOC_ID, &id);
	PT_OK(e.id == id && e.cpu == 0,
	      "map: LOOKUP gives the counter's id and CPU");
	PT_EQ(pt_output("ctr_abi", PEA_F_CURRENT_CPU, payload, 8), -EINVAL,
	      "pea_output into a counter slot gives EINVAL");
	PT_EQ(pt_output("ctr_abi", 0, payload, 8), -EINVAL,
	      "pea_output into a counter slot by index gives EINVAL");
	close(ctr);
	PT_EQ(pt_output("ctr_abi", 0, payload, 8), -EINVAL,
	      "the slot keeps the counter after its fd is closed");
	PT_EQ(pt_map_delete(map, 0), 0, "map: DELETE of a counter slot succeeds");
	close(map);
}

int main(void)
{
	pt_st();	/* anchors the software events' jump labels */
	test_create();
	test_offline();
	test_read_layouts();
	test_ioctls();
	test_mmap_rules();
	test_map_slots();
	return pt_done();
}
