// SPDX-License-Identifier: GPL-2.0
/*
 * libpea's counter API: the normalisation value * enabled / running in
 * 128-bit arithmetic against hand-computed values (including results whose
 * intermediate product overflows 64 bits, and saturation), single counters
 * (open, read, enable, disable, reset, the control page) and
 * one-counter-per-CPU sets (CPU lists, errors with the failing CPU, sums,
 * storing every counter in a map for in-kernel readers).
 */
#include "pea_test.h"
#include "pt_counter.h"
#include "libpea.h"

#define MAP	"ctr_lib"

static void test_scale(void)
{
	static const struct {
		__u64 value, enabled, running, want;
	} cases[] = {
		{ 1000, 300, 100, 3000 },
		{ 1000, 100, 100, 1000 },	/* not multiplexed */
		{ 1000, 100, 0, 0 },		/* never ran */
		{ 0, 100, 50, 0 },
		{ 7, 10, 3, 23 },		/* 70 / 3, rounded down */
		{ 123456789, 1000000007, 999999937, 123456797 },
		/* The products below overflow 64 bits. */
		{ 1000000000000ULL, 1000000000000ULL, 300000000000ULL,
		  3333333333333ULL },
		{ 1ULL << 63, 3, 2, 13835058055282163712ULL },
		{ UINT64_MAX, 1, 2, 9223372036854775807ULL },
		{ UINT64_MAX, 2, 3, 12297829382473034410ULL },
		{ UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX },
		/* 2^64 does not fit: saturates. */
		{ 1ULL << 63, 4, 2, UINT64_MAX },
	};
	struct pea_counter_value v;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v.value = cases[i].value;
		v.enabled = cases[i].enabled;
		v.running = cases[i].running;
		PT_EQ(pea_counter_scale(&v), cases[i].want,
		      "pea_counter_scale(%llu * %llu / %llu) = %llu",
		      (unsigned long long)v.value,
		      (unsigned long long)v.enabled,
		      (unsigned long long)v.running,
		      (unsigned long long)cases[i].want);
	}
	PT_EQ(pea_counter_scale(NULL), 0, "pea_counter_scale(NULL) = 0");
}

static void test_single(void)
{
	struct perf_event_attr a = pt_counter_attr(PERF_TYPE_SOFTWARE,
						   PERF_COUNT_SW_CPU_CLOCK);
	struct pea_counter_value v1, v2, p;
	void *page;
	__u64 stamp;
	int fd;

	a.read_format = 0;	/* libpea adds the times */
	a.disabled = 1;
	fd = pea_counter_open(1, &a);
	PT_OK(fd >= 0, "pea_counter_open: cpu-clock on CPU 1, disabled");
	PT_EQ(pea_counter_read(fd, &v1), 0, "pea_counter_read succeeds");
	PT_OK(!v1.value && !v1.enabled && !v1.running,
	      "a disabled counter reads 0, 0, 0");
	PT_EQ(pea_counter_enable(fd), 0, "pea_counter_enable");
	pt_sleep_ns(10000000);
	PT_EQ(pea_counter_disable(fd), 0, "pea_counter_disable");
	pea_counter_read(fd, &v1);
	PT_OK(v1.value >= 10000000 && v1.enabled == v1.running,
	      "enabled 10 ms: %llu ns counted", (unsigned long long)v1.value);
	page = pea_counter_mmap(fd);
	PT_OK(page != NULL, "pea_counter_mmap");
	PT_EQ(pea_counter_read_page(page, &p, &stamp), 0,
	      "pea_counter_read_page succeeds");
	PT_OK(!memcmp(&p, &v1, sizeof(p)) && stamp > 0,
	      "the page of a disabled counter equals read(2)");
	PT_EQ(pea_counter_reset(fd), 0, "pea_counter_reset");
	pea_counter_read(fd, &v2);
	PT_OK(v2.value == 0 && v2.enabled == v1.enabled,
	      "after reset: value 0, times kept");
	PT_EQ(pea_counter_read_page(NULL, &p, NULL), -EINVAL,
	      "pea_counter_read_page(NULL) gives -EINVAL");
	pea_counter_munmap(page);
	close(fd);
	a = pt_counter_attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	PT_EQ(pea_counter_open(1, &a), -ENOENT,
	      "pea_counter_open(cycles) gives -ENOENT in this guest");
	PT_EQ(errno, ENOENT, "and sets errno");
	PT_EQ(pea_counter_open(1, NULL), -EINVAL,
	      "pea_counter_open(NULL) gives -EINVAL");
}

static void test_sets(void)
{
	struct perf_event_attr a = pt_counter_attr(PERF_TYPE_SOFTWARE,
						   PERF_COUNT_SW_CPU_CLOCK);
	LIBPEA_OPTS(pea_counters_opts, opts);
	struct pea_counter_value v, total;
	struct pea_counters *cs;
	struct pea_st_read r;
	int map, cpu;
	bool ok;
	size_t i;

	cs = pea_counters__new(&a, "x", NULL);
	PT_OK(!cs && errno == EINVAL, "pea_counters__new: a bad CPU list gives EINVAL");
	cs = pea_counters__new(&a, "5", &opts);
	PT_OK(!cs && errno == EINVAL && opts.err_cpu == 5,
	      "pea_counters__new: CPU 5 (past nr_cpu_ids) gives EINVAL, err_cpu 5");
	a = pt_counter_attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	cs = pea_counters__new(&a, NULL, &opts);
	PT_OK(!cs && errno == ENOENT && opts.err_cpu == 0,
	      "pea_counters__new: instructions gives ENOENT, err_cpu 0");

	a = pt_counter_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	cs = pea_counters__new(&a, "1,3", NULL);
	PT_OK(cs && pea_counters__cnt(cs) == 2 && pea_counters__cpu(cs, 0) == 1 &&
	      pea_counters__cpu(cs, 1) == 3,
	      "pea_counters__new(\"1,3\"): counters on CPUs 1 and 3");
	PT_EQ(pea_counters__cpu(cs, 2), -EINVAL, "pea_counters__cpu: bad index");
	PT_EQ(pea_counters__fd(cs, 2), -EINVAL, "pea_counters__fd: bad index");
	PT_EQ(pea_counters__read(cs, 2, &v), -EINVAL,
	      "pea_counters__read: bad index");
	pea_counters__free(cs);

	cs = pea_counters__new(&a, NULL, NULL);
	PT_EQ(pea_counters__cnt(cs), pt_nr_cpus(),
	      "pea_counters__new(NULL): every online CPU");
	pt_sleep_ns(10000000);
	PT_EQ(pea_counters__disable(cs), 0, "pea_counters__disable");
	PT_EQ(pea_counters__sum(cs, &total), 0, "pea_counters__sum");
	ok = true;
	v.value = v.enabled = v.running = 0;
	for (i = 0; i < pea_counters__cnt(cs); i++) {
		struct pea_counter_value one;

		pea_counters__read(cs, i, &one);
		v.value += one.value;
		v.enabled += one.enabled;
		v.running += one.running;
	}
	PT_OK(!memcmp(&v, &total, sizeof(v)),
	      "disabled: the sum is the sum of the reads (%llu ns on %d CPUs)",
	      (unsigned long long)total.value, pt_nr_cpus());
	PT_EQ(pea_counters__reset(cs), 0, "pea_counters__reset");
	pea_counters__sum(cs, &total);
	PT_EQ(total.value, 0, "after reset the sum is 0");
	PT_EQ(pea_counters__enable(cs), 0, "pea_counters__enable");

	/* In a map, for kernel readers. */
	map = pt_map_create(MAP, pt_nr_cpus(), 0);
	PT_EQ(pea_counters__store(cs, map), 0, "pea_counters__store");
	ok = true;
	for (cpu = 0; cpu < pt_nr_cpus(); cpu++) {
		pt_pin(cpu);
		if (pt_st_read(MAP, PEA_F_CURRENT_CPU, 24, PEA_ST_READ_NMI, &r) ||
		    r.ret || r.cpu != cpu)
			ok = false;
	}
	PT_OK(ok, "pea_read_value(PEA_F_CURRENT_CPU) from NMI on every CPU reads its own");
	close(map);
	pea_counters__free(cs);

	{
		struct {
			struct pea_counters_opts o;
			char tail[8];
		} big;

		memset(&big, 0, sizeof(big));
		big.o.sz = sizeof(big);
		cs = pea_counters__new(&a, NULL, &big.o);
		PT_OK(cs != NULL,
		      "opts larger than known with a zero tail: accepted");
		pea_counters__free(cs);
		big.tail[3] = 1;
		cs = pea_counters__new(&a, NULL, &big.o);
		PT_OK(!cs && errno == EINVAL,
		      "opts with a non-zero unknown tail: EINVAL");
	}
}

int main(void)
{
	pt_st();	/* anchors the software events' jump labels */
	test_scale();
	test_single();
	test_sets();
	return pt_done();
}
