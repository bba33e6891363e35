// SPDX-License-Identifier: GPL-2.0
/*
 * pea_output()'s contract, errno by errno, in bpf_perf_event_output()'s
 * order; nesting beyond the slots; disabled and paused events; output
 * while nothing is mapped.
 */
#include "pea_test.h"

#define MAP "output"

static unsigned char buf[65536];

static void test_errnos(void)
{
	int ncpu = pt_nr_cpus();
	int map = pt_map_create(MAP, 2, 0);
	int ev0 = pt_event_open(0, PERF_SAMPLE_RAW);
	int ev1 = pt_event_open(1 % ncpu, PERF_SAMPLE_RAW);
	struct pea_event_stats st;
	struct pt_ring r;

	pt_ring_map(&r, ev0, 2, PROT_READ | PROT_WRITE);
	PT_EQ(pt_output("no_such_map", PEA_F_CURRENT_CPU, buf, 8), -ENOENT,
	      "pea_map_get_by_name: unknown name gives ENOENT");
	PT_EQ(pt_output(MAP, PEA_F_CURRENT_CPU, buf, 8), -ENOENT,
	      "pea_output: empty slot gives ENOENT");
	PT_EQ(pt_output(MAP, 2, buf, 8), -E2BIG,
	      "pea_output: index == max_entries gives E2BIG");
	PT_EQ(pt_output(MAP, 0xfffffffeULL, buf, 8), -E2BIG,
	      "pea_output: index 0xfffffffe gives E2BIG");
	PT_EQ(pt_output(MAP, 1ULL << 32, buf, 8), -EINVAL,
	      "pea_output: a CTXLEN bit gives EINVAL");
	PT_EQ(pt_output(MAP, 1ULL << 63, buf, 8), -EINVAL,
	      "pea_output: bit 63 gives EINVAL");
	PT_EQ(pt_output(MAP, (1ULL << 40) | 5, buf, 8), -EINVAL,
	      "pea_output: bad flags are checked before the index");

	pt_map_update(map, 0, ev0);
	pt_map_update(map, 1, ev1);
	PT_EQ(pt_output(MAP, PEA_F_CURRENT_CPU, buf, 8), 0,
	      "pea_output: PEA_F_CURRENT_CPU on CPU 0 succeeds");
	PT_EQ(pt_output(MAP, 0, buf, 8), 0, "pea_output: index 0 on CPU 0 succeeds");
	if (ncpu > 1)
		PT_EQ(pt_output(MAP, 1, buf, 8), -EOPNOTSUPP,
		      "pea_output: another CPU's event gives EOPNOTSUPP");
	else
		PT_OK(0, "the guest has more than one CPU");
	PT_EQ(pt_output(MAP, 0, buf, 65517), -E2BIG,
	      "pea_output: payload 65517 gives E2BIG");

	ioctl(ev0, PERF_EVENT_IOC_DISABLE, 0);
	PT_EQ(pt_output(MAP, 0, buf, 8), -EOPNOTSUPP,
	      "pea_output: a disabled event gives EOPNOTSUPP (as Linux)");
	ioctl(ev0, PERF_EVENT_IOC_ENABLE, 0);
	PT_EQ(pt_output(MAP, 0, buf, 8), 0, "pea_output: enabled again succeeds");

	/* A slot holding an event whose fd was closed still works. */
	close(ev0);
	PT_EQ(pt_output(MAP, 0, buf, 8), 0,
	      "pea_output: an event whose fd was closed still takes output");
	PT_EQ(ioctl(r.fd, PEA_EVENT_IOC_STATS, &st) < 0 ? errno : 0, EBADF,
	      "the closed fd itself is gone");
	pt_ring_unmap(&r);
	close(ev1);
	close(map);
}

static void test_nesting(void)
{
	int map = pt_map_create(MAP, 1, 0);
	int fd = pt_event_open(0, PERF_SAMPLE_RAW);
	struct pea_st_nest n = { .size = 16 };
	unsigned char rec[256];
	int i, good = 0;
	struct pt_ring r;

	pt_map_update(map, 0, fd);
	pt_ring_map(&r, fd, 2, PROT_READ | PROT_WRITE);
	strcpy(n.map, MAP);
	PT_EQ(ioctl(pt_st(), PEA_ST_IOC_NEST, &n), 0, "nest ioctl succeeds");
	PT_EQ(n.depth, 4, "nesting: 4 slots (task, softirq, hardirq, NMI)");
	PT_EQ(n.ret, -EBUSY, "nesting: the 5th level gives EBUSY");
	for (i = 0; i < 4; i++) {
		size_t got = pt_ring_next(&r, rec);

		if (got == 32 && rec[12] == 0xa0 + i && rec[27] == 0xa0 + i)
			good++;
	}
	PT_EQ(good, 4, "nesting: the 4 nested records are in the ring in order");
	PT_EQ(pt_head(&r), r.pg->data_tail, "nesting: nothing else was written");
	PT_EQ(pt_output(MAP, 0, buf, 8), 0, "nesting: the slots are free again");
	pt_ring_unmap(&r);
	close(fd);
	close(map);
}

static void test_unmapped_and_paused(void)
{
	int map = pt_map_create(MAP, 1, 0);
	int fd = pt_event_open(0, PERF_SAMPLE_RAW);
	struct pea_event_stats st;
	unsigned char rec[256];
	struct pt_ring r;
	__u64 lost = 0;
	__u32 ok = 0;
	size_t got;

	pt_map_update(map, 0, fd);
	PT_EQ(pt_output_n(MAP, 0, buf, 8, 5, &ok), -ENOSPC,
	      "unmapped: pea_output gives ENOSPC");
	ioctl(fd, PEA_EVENT_IOC_STATS, &st);
	PT_OK(st.lost == 5 && st.lost_pending == 5 && st.records == 0,
	      "unmapped: 5 records counted lost and pending");

	pt_ring_map(&r, fd, 2, PROT_READ | PROT_WRITE);
	PT_EQ(PEA_PAGE_LOST_HINT(r.pg), 1, "a fresh mapping shows the lost hint");
	PT_EQ(ioctl(fd, PEA_EVENT_IOC_TAKE_LOST, &lost), 0, "TAKE_LOST succeeds");
	PT_EQ(lost, 5, "TAKE_LOST returns the 5 pending");
	PT_EQ(PEA_PAGE_LOST_HINT(r.pg), 0, "TAKE_LOST clears the hint");

	PT_EQ(ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1), 0, "PAUSE_OUTPUT 1");
	PT_EQ(pt_output_n(MAP, 0, buf, 8, 3, &ok), -ENOSPC,
	      "paused: pea_output gives ENOSPC");
	PT_EQ(pt_head(&r), 0, "paused: nothing written");
	PT_EQ(PEA_PAGE_LOST_HINT(r.pg), 1, "paused: the lost hint is set");
	PT_EQ(ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0), 0, "PAUSE_OUTPUT 0");
	PT_EQ(pt_output(MAP, 0, buf, 8), 0, "resumed: pea_output succeeds");
	got = pt_ring_next(&r, rec);
	PT_OK(got == 24 && ((struct perf_event_header *)rec)->type ==
	      PERF_RECORD_LOST && ((__u64 *)rec)[2] == 3,
	      "resumed: PERF_RECORD_LOST with lost 3 comes first");
	got = pt_ring_next(&r, rec);
	PT_OK(got == 24 && ((struct perf_event_header *)rec)->type ==
	      PERF_RECORD_SAMPLE, "resumed: then the sample");
	ioctl(fd, PEA_EVENT_IOC_STATS, &st);
	PT_OK(st.lost == 8 && st.lost_pending == 0 && st.records == 1,
	      "stats: lost 8, none pending, 1 record");
	pt_ring_unmap(&r);
	close(fd);
	close(map);
}

/*
 * A record dropped while the first mmap allocates the ring, before the
 * event points to it (the test module's kretprobe on pea_ring_alloc()
 * makes it): the mapping must still show the lost hint.
 */
static void test_drop_while_mapping(void)
{
	int map = pt_map_create(MAP, 1, 0);
	int fd = pt_event_open(0, PERF_SAMPLE_RAW);
	struct pea_event_stats st;
	struct pea_st_drop d;
	struct pt_ring r;
	__u64 lost = 0;

	pt_map_update(map, 0, fd);
	memset(&d, 0, sizeof(d));
	strcpy(d.map, MAP);
	PT_EQ(ioctl(pt_st(), PEA_ST_IOC_DROP_ARM, &d), 0,
	      "drop while mapping: armed at pea_ring_alloc()'s return");
	pt_ring_map(&r, fd, 2, PROT_READ | PROT_WRITE);
	PT_EQ(ioctl(pt_st(), PEA_ST_IOC_DROP_END, &d), 0,
	      "drop while mapping: disarmed");
	PT_OK(d.fired && d.ret == -ENOSPC,
	      "drop while mapping: a record was dropped between the ring's allocation and its publication (fired %u, ret %lld)",
	      d.fired, (long long)d.ret);
	ioctl(fd, PEA_EVENT_IOC_STATS, &st);
	PT_OK(st.lost == 1 && st.lost_pending == 1,
	      "drop while mapping: counted lost and pending (%llu, %llu)",
	      (unsigned long long)st.lost,
	      (unsigned long long)st.lost_pending);
	PT_EQ(PEA_PAGE_LOST_HINT(r.pg), 1,
	      "drop while mapping: the new mapping shows the lost hint");
	PT_EQ(ioctl(fd, PEA_EVENT_IOC_TAKE_LOST, &lost), 0,
	      "drop while mapping: TAKE_LOST succeeds");
	PT_EQ(lost, 1, "drop while mapping: TAKE_LOST returns the 1 pending");
	pt_ring_unmap(&r);
	close(fd);
	close(map);
}

int main(void)
{
	pt_pin(0);
	pt_st();
	test_errnos();
	test_nesting();
	test_unmapped_and_paused();
	test_drop_while_mapping();
	return pt_done();
}
