// SPDX-License-Identifier: GPL-2.0
/*
 * Overwrite mode (read-only mapping) and write_backward: data_tail is
 * ignored, nothing is dropped for space, the newest ring's worth of
 * records is intact. PAUSE_OUTPUT on an overwrite ring. Hostile data_tail
 * values in normal mode only ever drop (counted) records, and an exactly
 * full ring.
 */
#include "pea_test.h"

#define MAP "overwrite"
#define P256 256	/* payload of a 272-byte record */
#define R272 272
#define SIZE 8192	/* 2 data pages */

static unsigned char payload[65536];
static unsigned char rec[65536];

static __u8 pat(__u32 i, __u32 j)
{
	return (__u8)(i * 7 + j * 13 + 1);
}

/* Payload of record @i: the index, then a pattern. */
static void fill(__u32 i, size_t len)
{
	size_t j;

	for (j = 0; j < len; j++)
		payload[j] = pat(i, j);
	if (len >= 4)
		memcpy(payload, &i, 4);
}

/*
 * Is the RAW-only sample record of @len payload bytes for index @i intact
 * at ring position @pos? Returns NULL or what differs.
 */
static const char *check_sample(struct pt_ring *r, __u64 pos, __u32 i,
				size_t len)
{
	struct perf_event_header *h = (void *)rec;
	size_t size = 8 + ((4 + len + 7) & ~7UL), j;
	__u32 raw, idx;

	pt_ring_copy(r, pos, rec, size);
	if (h->type != PERF_RECORD_SAMPLE || h->misc != PERF_RECORD_MISC_KERNEL)
		return "header type/misc";
	if (h->size != size)
		return "header size";
	memcpy(&raw, rec + 8, 4);
	if (raw != size - 12)
		return "raw size";
	if (len >= 4) {
		memcpy(&idx, rec + 12, 4);
		if (idx != i)
			return "record index";
	}
	for (j = 4; j < len; j++)
		if (rec[12 + j] != pat(i, j))
			return "payload";
	for (j = len; j < raw; j++)
		if (rec[12 + j])
			return "padding";
	return NULL;
}

/* Is a PERF_RECORD_LOST with @lost for event @id at @pos? */
static bool check_lost(struct pt_ring *r, __u64 pos, __u64 id, __u64 lost)
{
	struct perf_event_header *h = (void *)rec;
	__u64 body[2];

	pt_ring_copy(r, pos, rec, 24);
	memcpy(body, rec + 8, 16);
	if (h->type != PERF_RECORD_LOST || h->misc != 0 || h->size != 24 ||
	    body[0] != id || body[1] != lost) {
		pt_diag("at %llu: type %u misc %u size %u id %llu lost %llu (want id %llu lost %llu)",
			(unsigned long long)pos, h->type, h->misc, h->size,
			(unsigned long long)body[0], (unsigned long long)body[1],
			(unsigned long long)id, (unsigned long long)lost);
		return false;
	}
	return true;
}

static struct pea_event_stats stats(int fd)
{
	struct pea_event_stats st;

	if (ioctl(fd, PEA_EVENT_IOC_STATS, &st))
		pt_fatal("PEA_EVENT_IOC_STATS");
	return st;
}

static __u64 event_id(int fd)
{
	__u64 id = 0;

	if (ioctl(fd, PERF_EVENT_IOC_ID, &id))
		pt_fatal("PERF_EVENT_IOC_ID");
	return id;
}

static int setup(bool backward, int prot, struct pt_ring *r, int *map)
{
	struct perf_event_attr attr = pt_output_attr(PERF_SAMPLE_RAW);
	int fd;

	attr.write_backward = backward;
	*map = pt_map_create(MAP, 1, 0);
	fd = pt_event_open_attr(&attr, 0);
	if (*map < 0 || fd < 0)
		pt_fatal("map/event");
	if (pt_map_update(*map, 0, fd))
		pt_fatal("update");
	if (pt_ring_map(r, fd, 2, prot))
		pt_fatal("mmap");
	return fd;
}

static void teardown(int fd, int map, struct pt_ring *r)
{
	pt_ring_unmap(r);
	close(fd);
	close(map);
}

/* Output records @from..@to-1 of @len payload; returns the failures. */
static int produce(__u32 from, __u32 to, size_t len)
{
	int bad = 0;
	__u32 i;

	for (i = from; i < to; i++) {
		fill(i, len);
		if (pt_output(MAP, 0, payload, len))
			bad++;
	}
	return bad;
}

static void test_readonly(void)
{
	struct pea_event_stats st;
	struct pt_ring r;
	int map, fd, i, bad = -1;

	fd = setup(false, PROT_READ, &r, &map);
	PT_EQ(produce(0, 100, P256), 0,
	      "read-only: 100 records of 272 bytes into 8192 all succeed");
	st = stats(fd);
	PT_EQ(st.lost, 0, "read-only: stats.lost 0");
	PT_EQ(st.records, 100, "read-only: stats.records 100");
	PT_EQ(st.bytes, 27200, "read-only: stats.bytes 27200");
	PT_EQ(pt_head(&r), 27200, "read-only: data_head 27200");
	PT_EQ(r.pg->data_tail, 0, "read-only: data_tail still 0");
	for (i = 70; i < 100 && bad < 0; i++) {
		const char *why = check_sample(&r, (__u64)i * R272, i, P256);

		if (why) {
			pt_diag("record %d: %s", i, why);
			bad = i;
		}
	}
	PT_EQ(bad, -1, "read-only: the newest 30 records (70..99) are intact");
	PT_OK(check_sample(&r, 69 * R272, 69, P256) != NULL,
	      "read-only: record 69 was overwritten by record 99");
	teardown(fd, map, &r);
}

static void test_backward(void)
{
	struct pea_event_stats st;
	struct pt_ring r;
	int map, fd, i, k, bad = -1;
	__u64 head;

	fd = setup(true, PROT_READ | PROT_WRITE, &r, &map);
	for (i = 0; i < 5 && bad < 0; i++) {
		if (produce(i, i + 1, P256) ||
		    pt_head(&r) != -(__u64)((i + 1) * R272))
			bad = i;
	}
	PT_EQ(bad, -1, "backward: data_head == -(n * 272) after each of 5 records");
	PT_EQ(pt_head(&r), (__u64)-1360, "backward: data_head (u64)-1360");
	head = pt_head(&r);
	for (k = 0, bad = -1; k < 5 && bad < 0; k++)
		if (check_sample(&r, head + (__u64)k * R272, 4 - k, P256))
			bad = k;
	PT_EQ(bad, -1, "backward: reading forward from data_head gives records 4, 3, 2, 1, 0");

	/* data_tail is ignored: set it to data_head and to nonsense. */
	__atomic_store_n(&r.pg->data_tail, head, __ATOMIC_RELEASE);
	PT_EQ(produce(5, 50, P256), 0,
	      "backward: data_tail == data_head: 45 more records succeed");
	__atomic_store_n(&r.pg->data_tail, head + 12345, __ATOMIC_RELEASE);
	PT_EQ(produce(50, 75, P256), 0,
	      "backward: data_tail == old head + 12345: 25 more succeed");
	__atomic_store_n(&r.pg->data_tail, pt_head(&r), __ATOMIC_RELEASE);
	PT_EQ(produce(75, 100, P256), 0,
	      "backward: data_tail == data_head again: 25 more succeed");
	head = pt_head(&r);
	PT_EQ(head, (__u64)-27200, "backward: data_head (u64)-27200 after 100");
	for (k = 0, bad = -1; k < 30 && bad < 0; k++) {
		const char *why = check_sample(&r, head + (__u64)k * R272,
					       99 - k, P256);

		if (why) {
			pt_diag("record %d: %s", 99 - k, why);
			bad = k;
		}
	}
	PT_EQ(bad, -1, "backward: the 30 newest (99 down to 70) are intact");
	st = stats(fd);
	PT_EQ(st.lost, 0, "backward: stats.lost 0");
	PT_EQ(st.records, 100, "backward: stats.records 100");
	teardown(fd, map, &r);
}

static void test_pause(bool backward)
{
	const char *what = backward ? "backward" : "read-only";
	struct pea_event_stats st;
	struct pt_ring r;
	int map, fd;
	__u64 head, id, want;
	__u32 ok = 99;

	fd = setup(backward, backward ? PROT_READ | PROT_WRITE : PROT_READ,
		   &r, &map);
	id = event_id(fd);
	PT_EQ(produce(0, 3, P256), 0, "%s pause: 3 records", what);
	head = pt_head(&r);
	PT_EQ(ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1), 0,
	      "%s pause: PAUSE_OUTPUT 1", what);
	fill(3, P256);
	PT_EQ(pt_output_n(MAP, 0, payload, P256, 4, &ok), -ENOSPC,
	      "%s pause: paused output gives ENOSPC", what);
	PT_EQ(ok, 0, "%s pause: none of 4 succeeded", what);
	PT_EQ(pt_head(&r), head, "%s pause: data_head unchanged", what);
	st = stats(fd);
	PT_OK(st.lost == 4 && st.lost_pending == 4 && st.records == 3,
	      "%s pause: stats lost 4, pending 4, records 3", what);
	PT_EQ(PEA_PAGE_LOST_HINT(r.pg), 1, "%s pause: the lost hint is set", what);
	PT_EQ(ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0), 0,
	      "%s pause: PAUSE_OUTPUT 0", what);
	PT_EQ(produce(3, 4, P256), 0, "%s pause: resumed output succeeds", what);
	want = backward ? head - 24 - R272 : head + 24 + R272;
	PT_EQ(pt_head(&r), want, "%s pause: data_head moved by 24 + 272", what);
	if (backward) {
		PT_OK(check_lost(&r, want, id, 4),
		      "%s pause: the newest is PERF_RECORD_LOST {id, 4}", what);
		PT_OK(!check_sample(&r, want + 24, 3, P256),
		      "%s pause: then the resumed record", what);
		PT_OK(!check_sample(&r, want + 24 + R272, 2, P256),
		      "%s pause: then the record before the pause", what);
	} else {
		PT_OK(check_lost(&r, head, id, 4),
		      "%s pause: PERF_RECORD_LOST {id, 4} at the old head", what);
		PT_OK(!check_sample(&r, head + 24, 3, P256),
		      "%s pause: followed by the resumed record", what);
	}
	st = stats(fd);
	PT_OK(st.lost == 4 && st.lost_pending == 0 && st.records == 4,
	      "%s pause: stats lost 4, pending 0, records 4", what);
	PT_EQ(PEA_PAGE_LOST_HINT(r.pg), 0, "%s pause: the hint is clear", what);
	teardown(fd, map, &r);
}

static __u64 rng_state = 0x9e3779b97f4a7c15ULL;

static __u64 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static __u64 hostile_tail(int step, __u64 head, __u64 need)
{
	switch (step % 12) {
	case 0:  return head + 12345;
	case 1:  return head - 2 * SIZE;
	case 2:  return 0xffffffffffffff00ULL;
	case 3:  return rnd();
	case 4:  return head - rnd() % (2 * SIZE);
	case 5:  return head - (SIZE - need);		/* exactly fits */
	case 6:  return head - (SIZE - need) - 1;	/* one byte short */
	case 7:  return head + 1;
	case 8:  return head - SIZE;
	case 9:  return rnd() & ~7ULL;
	case 10: return head;				/* empty */
	default: return head - rnd() % SIZE;
	}
}

static void test_hostile_tail(void)
{
	int map, fd, step, nospc = 0, ok = 0, model_bad = -1;
	int move_bad = -1, lost_bad = -1, err_bad = -1, hint_bad = -1;
	struct pea_event_stats st0, st;
	__u64 head, tail, id, pending = 0, need, nh;
	struct pt_ring r;
	size_t len, size;
	long ret;

	fd = setup(false, PROT_READ | PROT_WRITE, &r, &map);
	id = event_id(fd);
	st0 = stats(fd);
	for (step = 0; step < 600; step++) {
		len = (rnd() % 4) ? rnd() % 300 : rnd() % 3000;
		size = 8 + ((4 + len + 7) & ~7UL);
		need = size + (pending && size + 24 <= SIZE ? 24 : 0);
		head = pt_head(&r);
		tail = hostile_tail(step, head, need);
		__atomic_store_n(&r.pg->data_tail, tail, __ATOMIC_RELEASE);
		fill(step, len);
		ret = pt_output(MAP, 0, payload, len);
		nh = pt_head(&r);
		if (ret != 0 && ret != -ENOSPC && err_bad < 0) {
			pt_diag("step %d: pea_output returned %ld", step, ret);
			err_bad = step;
		}
		/* The rule: a record fits iff need <= size - (head - tail). */
		if ((ret == 0) != (head - tail <= SIZE - need) &&
		    model_bad < 0) {
			pt_diag("step %d: head %llu tail %llu need %llu: ret %ld",
				step, (unsigned long long)head,
				(unsigned long long)tail,
				(unsigned long long)need, ret);
			model_bad = step;
		}
		if (ret == 0) {
			ok++;
			if (nh - head != need && move_bad < 0) {
				pt_diag("step %d: head moved by %llu, want %llu",
					step, (unsigned long long)(nh - head),
					(unsigned long long)need);
				move_bad = step;
			}
			if (pending && lost_bad < 0 &&
			    (!check_lost(&r, head, id, pending) ||
			     check_sample(&r, head + 24, step, len)))
				lost_bad = step;
			if (!pending && lost_bad < 0 &&
			    check_sample(&r, head, step, len))
				lost_bad = step;
			pending = 0;
		} else {
			nospc++;
			pending++;
			if (nh != head && move_bad < 0) {
				pt_diag("step %d: a drop moved head by %llu",
					step, (unsigned long long)(nh - head));
				move_bad = step;
			}
			if (PEA_PAGE_LOST_HINT(r.pg) != 1 && hint_bad < 0)
				hint_bad = step;
		}
	}
	pt_diag("hostile data_tail: %d written, %d dropped", ok, nospc);
	PT_EQ(err_bad, -1, "hostile tail: pea_output returns only 0 or -ENOSPC");
	PT_EQ(model_bad, -1,
	      "hostile tail: a record is written iff it fits: len <= size - (head - tail)");
	PT_EQ(move_bad, -1,
	      "hostile tail: data_head moves only by whole records (+24 with a LOST)");
	PT_EQ(lost_bad, -1,
	      "hostile tail: every written record is intact, after a LOST with the exact count");
	PT_EQ(hint_bad, -1, "hostile tail: every drop sets the lost hint");
	PT_OK(ok > 50 && nospc > 50, "hostile tail: both outcomes happened (%d, %d)",
	      ok, nospc);

	/* End with drops, then restore the tail. */
	head = pt_head(&r);
	__atomic_store_n(&r.pg->data_tail, head + 12345, __ATOMIC_RELEASE);
	PT_EQ(produce(1000, 1003, 20), 3, "hostile tail: 3 more drops");
	pending += 3;
	nospc += 3;
	st = stats(fd);
	PT_EQ(st.lost - st0.lost, nospc,
	      "hostile tail: stats.lost grew by exactly the %d ENOSPC returns", nospc);
	PT_EQ(st.lost_pending, pending, "hostile tail: stats.lost_pending exact");
	PT_EQ(st.records, ok, "hostile tail: stats.records exact");
	PT_EQ(pt_head(&r), head, "hostile tail: drops did not move data_head");
	__atomic_store_n(&r.pg->data_tail, head, __ATOMIC_RELEASE);
	fill(2000, 20);
	PT_EQ(pt_output(MAP, 0, payload, 20), 0,
	      "hostile tail: data_tail = data_head: output works");
	PT_EQ(pt_head(&r) - head, 24 + 32, "hostile tail: LOST + record written");
	PT_OK(check_lost(&r, head, id, pending),
	      "hostile tail: first a PERF_RECORD_LOST with the exact %llu drops",
	      (unsigned long long)pending);
	PT_OK(!check_sample(&r, head + 24, 2000, 20),
	      "hostile tail: then the record");
	st = stats(fd);
	PT_EQ(st.lost_pending, 0, "hostile tail: nothing pending");
	PT_EQ(PEA_PAGE_LOST_HINT(r.pg), 0, "hostile tail: the hint is clear");
	teardown(fd, map, &r);
}

static void test_exactly_full(void)
{
	struct pea_event_stats st;
	struct pt_ring r;
	int map, fd;
	__u64 id, lost = 0;
	__u32 n_ok = 0;

	/* 64-byte records (payload 52): 128 of them fill 8192 exactly. */
	fd = setup(false, PROT_READ | PROT_WRITE, &r, &map);
	id = event_id(fd);
	fill(0, 52);
	PT_EQ(pt_output_n(MAP, 0, payload, 52, 128, &n_ok), 0,
	      "full: 128 records of 64 bytes");
	PT_EQ(n_ok, 128, "full: all 128 fit");
	PT_EQ(pt_head(&r), SIZE, "full: data_head == 8192 == size, tail 0");
	PT_EQ(pt_output(MAP, 0, payload, 52), -ENOSPC, "full: the 129th gives ENOSPC");
	PT_EQ(pt_head(&r), SIZE, "full: data_head unchanged");
	PT_OK(pt_head(&r) - r.pg->data_tail <= SIZE &&
	      SIZE - (pt_head(&r) - r.pg->data_tail) < 64,
	      "full: head - tail <= size and the 64-byte record did not fit");
	PT_EQ(pt_output(MAP, 0, payload, 0), -ENOSPC,
	      "full: even a 16-byte record gives ENOSPC");

	/* 87 free bytes: LOST (24) + 64 = 88 does not fit; 88 does. */
	__atomic_store_n(&r.pg->data_tail, 87, __ATOMIC_RELEASE);
	PT_EQ(pt_output(MAP, 0, payload, 52), -ENOSPC,
	      "full: with 87 bytes free, LOST + record (88) gives ENOSPC");
	__atomic_store_n(&r.pg->data_tail, 88, __ATOMIC_RELEASE);
	PT_EQ(pt_output(MAP, 0, payload, 52), 0,
	      "full: with exactly 88 bytes free, LOST + record fit");
	PT_EQ(pt_head(&r), SIZE + 88, "full: data_head 8280");
	PT_EQ(pt_head(&r) - r.pg->data_tail, SIZE, "full: exactly full again");
	PT_OK(check_lost(&r, SIZE, id, 3), "full: the LOST record counts 3 drops");
	PT_OK(!check_sample(&r, SIZE + 24, 0, 52), "full: then the record");
	teardown(fd, map, &r);

	/* 272-byte records: 30 fit (8160), then a 32-byte one fills it. */
	fd = setup(false, PROT_READ | PROT_WRITE, &r, &map);
	PT_EQ(produce(0, 30, P256), 0, "full: 30 records of 272 bytes");
	PT_EQ(pt_head(&r), 8160, "full: data_head 8160");
	PT_EQ(produce(30, 31, P256), 1, "full: the 31st gives ENOSPC");
	PT_OK(SIZE - (pt_head(&r) - r.pg->data_tail) < R272,
	      "full: 32 bytes left, the 272-byte record did not fit");
	PT_EQ(ioctl(fd, PEA_EVENT_IOC_TAKE_LOST, &lost), 0, "full: TAKE_LOST");
	PT_EQ(lost, 1, "full: 1 lost taken");
	fill(31, 20);
	PT_EQ(pt_output(MAP, 0, payload, 20), 0,
	      "full: a 32-byte record fills the last 32 bytes");
	PT_EQ(pt_head(&r), SIZE, "full: data_head 8192: exactly full");
	PT_OK(!check_sample(&r, 8160, 31, 20), "full: the last record is intact");
	PT_OK(!check_sample(&r, 0, 0, P256), "full: the first is still intact");
	PT_EQ(pt_output(MAP, 0, payload, 0), -ENOSPC,
	      "full: a 16-byte record gives ENOSPC");
	st = stats(fd);
	PT_OK(st.records == 31 && st.lost == 2 && st.lost_pending == 1 &&
	      st.bytes == 8192, "full: stats records 31, lost 2, pending 1, bytes 8192");
	teardown(fd, map, &r);
}

int main(void)
{
	pt_pin(0);
	pt_st();
	test_readonly();
	test_backward();
	test_pause(false);
	test_pause(true);
	test_hostile_tail();
	test_exactly_full();
	return pt_done();
}
