// SPDX-License-Identifier: GPL-2.0
/*
 * Map lifetime: closing the last map fd with and without
 * PEA_F_PRESERVE_ELEMS while a kernel producer holds the map by name,
 * slots holding events whose fd is closed, replacing a slot's event, one
 * event in two maps, create/close cycles; and the module reference every
 * pea fd holds (delete_module() of pea fails while any is open).
 */
#include "pea_test.h"

#define PAYLOAD 8	/* 24-byte records */
#define REC 24

static unsigned char buf[4096];
static unsigned char rec[65536];

static int st_hold(const char *name)
{
	struct pea_st_hold h = { 0 };

	strncpy(h.map, name, sizeof(h.map) - 1);
	return pt_ioctl_errno(pt_st(), PEA_ST_IOC_HOLD, &h);
}

static int st_release(void)
{
	return pt_ioctl_errno(pt_st(), PEA_ST_IOC_RELEASE, NULL);
}

/* Output one record whose payload starts with @tag. */
static long out_tag(const char *map, __u32 tag)
{
	memset(buf, 0, PAYLOAD);
	memcpy(buf, &tag, 4);
	return pt_output(map, 0, buf, PAYLOAD);
}

/* The tag of the record at @pos, or ~0 if it is not a 24-byte sample. */
static __u32 tag_at(struct pt_ring *r, __u64 pos)
{
	struct perf_event_header *h = (void *)rec;
	__u32 tag;

	pt_ring_copy(r, pos, rec, REC);
	if (h->type != PERF_RECORD_SAMPLE || h->size != REC)
		return ~0U;
	memcpy(&tag, rec + 12, 4);
	return tag;
}

static __u64 records(int fd)
{
	struct pea_event_stats st;

	if (ioctl(fd, PEA_EVENT_IOC_STATS, &st))
		pt_fatal("PEA_EVENT_IOC_STATS");
	return st.records;
}

/* The use count /proc/modules shows for @name, -1 if not loaded. */
static int mod_refcnt(const char *name)
{
	char line[512], n[64];
	unsigned long size;
	int cnt, ret = -1;
	FILE *f = fopen("/proc/modules", "r");

	if (!f)
		pt_fatal("/proc/modules");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lu %d", n, &size, &cnt) == 3 &&
		    !strcmp(n, name)) {
			ret = cnt;
			break;
		}
	fclose(f);
	return ret;
}

static int delete_module(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? errno : 0;
}

static int ev_mapped(struct pt_ring *r)
{
	int fd = pt_event_open(0, PERF_SAMPLE_RAW);

	if (fd < 0 || pt_ring_map(r, fd, 1, PROT_READ | PROT_WRITE))
		pt_fatal("event");
	return fd;
}

static void test_close_held(bool preserve)
{
	const char *what = preserve ? "PRESERVE_ELEMS" : "no PRESERVE_ELEMS";
	const char *name = preserve ? "map_pres" : "map_nopres";
	int map, other, ev;
	struct pt_ring r;

	map = pt_map_create(name, 1, preserve ? PEA_F_PRESERVE_ELEMS : 0);
	ev = ev_mapped(&r);
	pt_map_update(map, 0, ev);
	PT_EQ(out_tag(name, 1), 0, "%s: output through the map", what);
	PT_EQ(st_hold(name), 0, "%s: the test module holds the map", what);
	PT_EQ(close(map), 0, "%s: close the only map fd", what);
	if (preserve) {
		PT_EQ(out_tag(name, 2), 0,
		      "%s: after close, the held map still outputs", what);
		PT_EQ(pt_head(&r), 2 * REC, "%s: the record arrived", what);
		PT_EQ(tag_at(&r, REC), 2, "%s: it is the second record", what);
	} else {
		PT_EQ(out_tag(name, 2), -ENOENT,
		      "%s: after close, the slot is empty: ENOENT", what);
		PT_EQ(pt_head(&r), REC, "%s: nothing arrived", what);
	}
	PT_EQ(pt_map_create(name, 1, 0), -EEXIST,
	      "%s: the held map keeps its name (create gives EEXIST)", what);
	PT_EQ(st_release(), 0, "%s: the test module releases it", what);
	PT_EQ(out_tag(name, 3), -ENOENT,
	      "%s: after release, the name is gone: ENOENT", what);
	PT_EQ(st_hold(name), ENOENT, "%s: HOLD of the released name: ENOENT", what);

	/* A live second map shows HOLD works by name; the first is gone. */
	other = pt_map_create("map_other", 1, 0);
	PT_EQ(st_hold("map_other"), 0, "%s: HOLD of a live map succeeds", what);
	PT_EQ(st_release(), 0, "%s: and RELEASE", what);
	close(other);
	PT_EQ(st_hold("map_other"), ENOENT,
	      "%s: its name is gone after its fd closed", what);
	map = pt_map_create(name, 1, 0);
	PT_OK(map >= 0, "%s: the released name can be created again", what);
	close(map);
	PT_EQ(records(ev), preserve ? 2 : 1, "%s: event records exact", what);
	PT_EQ(pt_head(&r), (preserve ? 2 : 1) * REC,
	      "%s: the ring holds exactly those", what);
	pt_ring_unmap(&r);
	close(ev);
}

static void test_closed_event(void)
{
	int map = pt_map_create("map_closed", 1, 0);
	struct pt_ring r;
	int ev = ev_mapped(&r);

	pt_map_update(map, 0, ev);
	close(ev);
	PT_EQ(out_tag("map_closed", 1), 0,
	      "closed event fd, ring still mapped: output succeeds");
	PT_EQ(tag_at(&r, 0), 1, "closed event fd: the record is in the ring");
	pt_ring_unmap(&r);
	PT_EQ(out_tag("map_closed", 2), -ENOSPC,
	      "closed event fd, ring unmapped, still in a slot: ENOSPC");
	PT_EQ(out_tag("map_closed", 3), -ENOSPC, "and again ENOSPC");
	PT_EQ(pt_map_delete(map, 0), 0, "delete the slot");
	PT_EQ(out_tag("map_closed", 4), -ENOENT, "then output gives ENOENT");
	PT_EQ(pt_map_delete(map, 0), ENOENT, "delete again gives ENOENT");

	/* Never mapped and closed. */
	ev = pt_event_open(0, PERF_SAMPLE_RAW);
	pt_map_update(map, 0, ev);
	close(ev);
	PT_EQ(out_tag("map_closed", 5), -ENOSPC,
	      "closed, never-mapped event in a slot: ENOSPC");
	close(map);
	PT_EQ(out_tag("map_closed", 6), -ENOENT, "map closed: ENOENT");
}

static void test_replace(void)
{
	int map = pt_map_create("map_repl", 1, 0);
	struct pea_map_elem e = { .key = 0 };
	struct pt_ring ra, rb;
	int a = ev_mapped(&ra), b = ev_mapped(&rb);
	__u64 id_b = 0;

	ioctl(b, PERF_EVENT_IOC_ID, &id_b);
	PT_EQ(pt_map_update(map, 0, a), 0, "replace: slot 0 = A");
	PT_EQ(out_tag("map_repl", 1), 0, "replace: output 1");
	PT_EQ(pt_map_update(map, 0, b), 0, "replace: slot 0 = B");
	PT_EQ(out_tag("map_repl", 2), 0, "replace: output 2");
	PT_EQ(out_tag("map_repl", 3), 0, "replace: output 3");
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_LOOKUP, &e), 0, "replace: LOOKUP");
	PT_EQ(e.id, id_b, "replace: LOOKUP gives B's id");
	PT_OK(pt_head(&ra) == REC && tag_at(&ra, 0) == 1 && records(a) == 1,
	      "replace: A has only record 1");
	PT_OK(pt_head(&rb) == 2 * REC && tag_at(&rb, 0) == 2 &&
	      tag_at(&rb, REC) == 3 && records(b) == 2,
	      "replace: B has records 2 and 3");
	/* B replaced by itself, then its fd closed: still B. */
	PT_EQ(pt_map_update(map, 0, b), 0, "replace: slot 0 = B again");
	close(b);
	PT_EQ(out_tag("map_repl", 4), 0, "replace: output 4 with B's fd closed");
	PT_OK(pt_head(&rb) == 3 * REC && tag_at(&rb, 2 * REC) == 4 &&
	      pt_head(&ra) == REC, "replace: record 4 went to B only");
	close(map);
	pt_ring_unmap(&ra);
	pt_ring_unmap(&rb);
	close(a);
}

static void test_two_maps(void)
{
	int m1 = pt_map_create("map_one", 1, 0);
	int m2 = pt_map_create("map_two", 4, 0);
	struct pt_ring r;
	int ev = ev_mapped(&r);

	PT_EQ(pt_map_update(m1, 0, ev), 0, "two maps: the event in map_one slot 0");
	PT_EQ(pt_map_update(m2, 0, ev), 0, "two maps: and in map_two slot 0");
	PT_EQ(out_tag("map_one", 1), 0, "two maps: output through map_one");
	PT_EQ(out_tag("map_two", 2), 0, "two maps: output through map_two");
	PT_EQ(out_tag("map_one", 3), 0, "two maps: map_one again");
	PT_OK(pt_head(&r) == 3 * REC && tag_at(&r, 0) == 1 &&
	      tag_at(&r, REC) == 2 && tag_at(&r, 2 * REC) == 3,
	      "two maps: all three records in the one ring, in order");
	PT_EQ(records(ev), 3, "two maps: stats.records 3");
	close(m1);
	PT_EQ(out_tag("map_one", 4), -ENOENT, "two maps: map_one closed: ENOENT");
	PT_EQ(out_tag("map_two", 5), 0, "two maps: map_two still outputs");
	PT_EQ(tag_at(&r, 3 * REC), 5, "two maps: its record arrived");
	close(m2);
	pt_ring_unmap(&r);
	close(ev);
}

static void test_fd_refs(void)
{
	int r0 = mod_refcnt("pea"), m1, m2, ev;
	struct pt_ring r;

	PT_OK(r0 > 0, "refs: /proc/modules shows pea with use count %d", r0);
	m1 = pt_map_create(NULL, 1, 0);
	PT_EQ(mod_refcnt("pea"), r0 + 1, "refs: a map fd takes one reference");
	m2 = pt_map_create(NULL, 1, 0);
	ev = pt_event_open(0, PERF_SAMPLE_RAW);
	PT_EQ(mod_refcnt("pea"), r0 + 3, "refs: an event fd takes one too");
	pt_ring_map(&r, ev, 1, PROT_READ);
	PT_EQ(mod_refcnt("pea"), r0 + 3, "refs: mmap takes none of its own");
	close(ev);
	PT_EQ(mod_refcnt("pea"), r0 + 3, "refs: a mapped event's file stays");
	pt_ring_unmap(&r);
	PT_EQ(mod_refcnt("pea"), r0 + 2, "refs: munmap of the last mapping drops it");
	close(m1);
	close(m2);
	PT_EQ(mod_refcnt("pea"), r0, "refs: back to the start");
}

static void test_cycles(void)
{
	int ncpu = pt_nr_cpus(), r0 = mod_refcnt("pea");
	int cycle, cpu, bad = -1, ev[64];
	struct pt_ring r;
	int map;

	if (ncpu > 64)
		ncpu = 64;
	for (cycle = 0; cycle < 1000 && bad < 0; cycle++) {
		map = pt_map_create("map_cycle", ncpu, 0);
		if (map < 0) {
			pt_diag("cycle %d: create: %s", cycle, strerror(-map));
			bad = cycle;
			break;
		}
		for (cpu = 0; cpu < ncpu; cpu++) {
			ev[cpu] = pt_event_open(cpu, PERF_SAMPLE_RAW);
			if (ev[cpu] < 0 || pt_map_update(map, cpu, ev[cpu]))
				bad = cycle;
		}
		if (pt_ring_map(&r, ev[0], 1, PROT_READ | PROT_WRITE))
			bad = cycle;
		else if (out_tag("map_cycle", cycle) || tag_at(&r, 0) != (__u32)cycle)
			bad = cycle;
		if (cycle % 100 == 0 && mod_refcnt("pea") != r0 + 1 + ncpu) {
			pt_diag("cycle %d: use count %d, want %d", cycle,
				mod_refcnt("pea"), r0 + 1 + ncpu);
			bad = cycle;
		}
		pt_ring_unmap(&r);
		for (cpu = 0; cpu < ncpu; cpu++)
			close(ev[cpu]);
		close(map);
		if (cycle % 100 == 99 &&
		    (out_tag("map_cycle", 0) != -ENOENT ||
		     st_hold("map_cycle") != ENOENT))
			bad = cycle;
	}
	PT_EQ(bad, -1, "cycles: 1000 create/update/output/close cycles on %d CPUs",
	      ncpu);
	PT_EQ(mod_refcnt("pea"), r0, "cycles: the use count is back to %d", r0);
	PT_EQ(st_hold("map_cycle"), ENOENT, "cycles: the name is free at the end");
}

/* Load pea_selftest again and put its fd where pt_st() cached it. */
static int reload_selftest(int st_fd)
{
	int ko = open(PT_SELFTEST_KO, O_RDONLY | O_CLOEXEC), fd;

	if (ko < 0 || syscall(SYS_finit_module, ko, "", 0))
		return errno;
	close(ko);
	fd = open(PEA_ST_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (fd != st_fd) {
		if (dup3(fd, st_fd, O_CLOEXEC) < 0)
			return errno;
		close(fd);
	}
	return 0;
}

static int reopen_dev(int dev_fd)
{
	int fd = open(PEA_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return errno;
	if (fd != dev_fd) {
		if (dup3(fd, dev_fd, O_CLOEXEC) < 0)
			return errno;
		close(fd);
	}
	return 0;
}

/* Runs last: unloads and reloads pea_selftest. pea itself stays. */
static void test_module_refs(void)
{
	int dev_fd = pt_dev(), st_fd = pt_st(), r0, cnt, map, ev;

	r0 = mod_refcnt("pea");
	map = pt_map_create("map_mod", 1, 0);
	/* A closed, unmapped event in the slot: output gives ENOSPC. */
	ev = pt_event_open(0, PERF_SAMPLE_RAW);
	pt_map_update(map, 0, ev);
	close(ev);
	PT_EQ(mod_refcnt("pea"), r0 + 1, "module: a map fd is open: use count %d",
	      r0 + 1);
	PT_EQ(delete_module("pea"), EWOULDBLOCK,
	      "module: delete_module(pea) with a map fd open: EWOULDBLOCK");
	PT_EQ(st_release(), ENOENT, "module: pea_selftest holds no map");
	close(st_fd);
	PT_EQ(delete_module("pea_selftest"), 0,
	      "module: delete_module(pea_selftest) succeeds");
	PT_EQ(mod_refcnt("pea_selftest"), -1, "module: pea_selftest is gone");
	PT_EQ(mod_refcnt("pea"), r0, "module: pea dropped the dependency reference (map + /dev/pea fds left)");

	/* Only the map fd is left (the /dev/pea fd is closed too). */
	close(dev_fd);
	cnt = mod_refcnt("pea");
	PT_EQ(cnt, 1, "module: with only a map fd open, pea's use count is 1");
	if (cnt > 0)
		PT_EQ(delete_module("pea"), EWOULDBLOCK,
		      "module: delete_module(pea) with only a map fd: EWOULDBLOCK");
	else
		PT_OK(0, "module: delete_module(pea) not tried: nothing holds pea");
	PT_EQ(mod_refcnt("pea"), 1, "module: still loaded, use count 1");

	PT_EQ(reopen_dev(dev_fd), 0, "module: /dev/pea reopened");
	PT_EQ(reload_selftest(st_fd), 0, "module: pea_selftest loaded again");
	PT_EQ(out_tag("map_mod", 0), -ENOSPC,
	      "module: the new pea_selftest finds the map and its event (ENOSPC)");
	close(map);
	PT_EQ(out_tag("map_mod", 0), -ENOENT, "module: map closed");
	PT_EQ(mod_refcnt("pea"), r0, "module: pea's use count is back to %d", r0);
}

int main(void)
{
	pt_pin(0);
	pt_st();
	pt_dev();
	test_close_held(false);
	test_close_held(true);
	test_closed_event();
	test_replace();
	test_two_maps();
	test_fd_refs();
	test_cycles();
	test_module_refs();
	return pt_done();
}
