// SPDX-License-Identifier: GPL-2.0
/*
 * Record bytes: every payload size from 0 to 4096 and at the size limit,
 * with and without TID/TIME/CPU, records that wrap the ring end, and a
 * record larger than the whole ring; PERF_SAMPLE_TID of a live task and
 * of one that has exited (-1, as perf_event_tid()).
 */
#include <signal.h>
#include <sys/wait.h>
#include "pea_test.h"

#define MAP "records"
#define ALL_FIELDS (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

static unsigned char payload[65536];
static unsigned char rec[65536];

static void fill_payload(size_t len, unsigned int seed)
{
	size_t i;

	/* Never zero, so stale bytes in padding would show. */
	for (i = 0; i < len; i++)
		payload[i] = (unsigned char)((i * 7 + seed * 13) | 1);
}

static size_t fixed_size(__u64 sample_type)
{
	return 8 + 8 * __builtin_popcountll(sample_type & ALL_FIELDS);
}

/*
 * Check one record: header, fields, raw size, payload and zero padding.
 * Returns a description of the first difference, or NULL.
 */
static const char *check_record(const unsigned char *r, size_t got,
				__u64 sample_type, size_t len, __u64 *time)
{
	const struct perf_event_header *h = (const void *)r;
	size_t fixed = fixed_size(sample_type);
	size_t size = fixed + ((4 + len + 7) & ~7UL);
	const unsigned char *p = r + 8;
	__u32 raw;
	size_t i;

	if (got != size || h->size != size)
		return "record size";
	if (h->type != PERF_RECORD_SAMPLE)
		return "header type";
	if (h->misc != PERF_RECORD_MISC_KERNEL)
		return "header misc";
	if (sample_type & PERF_SAMPLE_TID) {
		const __u32 *t = (const void *)p;

		if (t[0] != (__u32)getpid() || t[1] != (__u32)gettid())
			return "pid/tid";
		p += 8;
	}
	if (sample_type & PERF_SAMPLE_TIME) {
		__u64 t;

		memcpy(&t, p, 8);
		if (!t || t < *time)
			return "time";
		*time = t;
		p += 8;
	}
	if (sample_type & PERF_SAMPLE_CPU) {
		const __u32 *c = (const void *)p;

		if (c[0] != 0 || c[1] != 0)
			return "cpu/res";
		p += 8;
	}
	memcpy(&raw, p, 4);
	if (raw != size - fixed - 4)
		return "raw size";
	p += 4;
	if (memcmp(p, payload, len))
		return "payload";
	for (i = len; i < raw; i++)
		if (p[i])
			return "padding not zero";
	return NULL;
}

static void test_sizes(__u64 sample_type, const char *what)
{
	int map = pt_map_create(MAP, 1, 0);
	int fd = pt_event_open(0, PERF_SAMPLE_RAW | sample_type);
	const char *bad = NULL;
	size_t len, bad_len = 0, got;
	struct pt_ring r;
	__u64 time = 0;
	long ret;

	pt_map_update(map, 0, fd);
	if (pt_ring_map(&r, fd, 16, PROT_READ | PROT_WRITE))
		pt_fatal("mmap");
	for (len = 0; len <= 4096 && !bad; len++) {
		fill_payload(len, len);
		ret = pt_output(MAP, PEA_F_CURRENT_CPU, payload, len);
		if (ret) {
			bad = "pea_output failed";
			bad_len = len;
			break;
		}
		got = pt_ring_next(&r, rec);
		bad = check_record(rec, got, PERF_SAMPLE_RAW | sample_type,
				   len, &time);
		bad_len = len;
	}
	if (bad)
		pt_diag("payload %zu: %s", bad_len, bad);
	PT_OK(!bad, "%s: records byte-exact for payloads 0..4096", what);
	PT_EQ(pt_head(&r), r.pg->data_tail, "%s: ring empty after reading", what);

	/* The largest payload that fits the u16 record size, and one more. */
	len = 65528 - fixed_size(PERF_SAMPLE_RAW | sample_type) - 4;
	fill_payload(len, 3);
	PT_EQ(pt_output(MAP, PEA_F_CURRENT_CPU, payload, len), 0,
	      "%s: payload %zu (record 65528) succeeds", what, len);
	got = pt_ring_next(&r, rec);
	bad = check_record(rec, got, PERF_SAMPLE_RAW | sample_type, len, &time);
	if (bad)
		pt_diag("payload %zu: %s", len, bad);
	PT_OK(!bad, "%s: the 65528-byte record is byte-exact", what);
	PT_EQ(pt_output(MAP, PEA_F_CURRENT_CPU, payload, len + 1), -E2BIG,
	      "%s: payload %zu gives E2BIG", what, len + 1);
	PT_EQ(pt_output(MAP, PEA_F_CURRENT_CPU, payload, 1ULL << 40), -E2BIG,
	      "%s: payload 2^40 gives E2BIG", what);
	PT_EQ(pt_head(&r), r.pg->data_tail, "%s: nothing written by E2BIG", what);
	pt_ring_unmap(&r);
	close(fd);
	close(map);
}

static void test_wrap(void)
{
	int map = pt_map_create(MAP, 1, 0);
	int fd = pt_event_open(0, PERF_SAMPLE_RAW);
	size_t size = 2 * pt_page_size(), len, got;
	int i, wrapped = 0, bad = -1;
	struct pt_ring r;
	__u64 time = 0, tail;

	pt_map_update(map, 0, fd);
	pt_ring_map(&r, fd, 2, PROT_READ | PROT_WRITE);
	for (i = 0; i < 200; i++) {
		len = 100 + (i * 389) % 1500;
		fill_payload(len, i);
		tail = r.pg->data_tail;
		if (pt_output(MAP, PEA_F_CURRENT_CPU, payload, len)) {
			bad = i;
			break;
		}
		got = pt_ring_next(&r, rec);
		if (check_record(rec, got, PERF_SAMPLE_RAW, len, &time)) {
			bad = i;
			break;
		}
		if ((tail & (size - 1)) + got > size)
			wrapped++;
	}
	PT_EQ(bad, -1, "wrap: 200 records through a 2-page ring are byte-exact");
	PT_OK(wrapped >= 10, "wrap: %d of them straddled the ring end", wrapped);
	PT_OK(pt_head(&r) > 10 * size, "wrap: data_head grows without wrapping");

	/* A record larger than the whole ring is lost, not a hang. */
	fill_payload(size, 1);
	PT_EQ(pt_output(MAP, PEA_F_CURRENT_CPU, payload, size), -ENOSPC,
	      "a record larger than the ring gives ENOSPC");
	PT_EQ(pt_output(MAP, PEA_F_CURRENT_CPU, payload, 8), 0,
	      "the next record fits");
	got = pt_ring_next(&r, rec);
	PT_OK(got == 24 && ((struct perf_event_header *)rec)->type ==
	      PERF_RECORD_LOST && ((__u64 *)rec)[2] == 1,
	      "it is preceded by PERF_RECORD_LOST with lost 1");
	pt_ring_unmap(&r);
	close(fd);
	close(map);
}

/*
 * The sample pid/tid of a task whose pids are gone: a single-threaded
 * child, autoreaped (SIGCHLD ignored), writes a record from do_exit()
 * after exit_notify() (the test module's exit kprobe). Linux writes -1
 * for both (perf_event_pid_type(): !nr && !pid_alive()).
 */
static void test_exited_tid(void)
{
	struct pea_st_exit mark = { .map = "rec_exit" };
	struct perf_event_header *h = (void *)rec;
	const __u32 *t = (const void *)(rec + 8);
	struct sigaction sa = { .sa_handler = SIG_IGN }, old;
	int map, fd, found = 0, pfd[2], mark_err, tries, tries_after = 0;
	struct pt_ring r;
	size_t n;
	pid_t child;

	map = pt_map_create("rec_exit", 1, 0);
	fd = pt_event_open(0, PERF_SAMPLE_TID | PERF_SAMPLE_RAW);
	if (map < 0 || fd < 0 || pt_map_update(map, 0, fd) ||
	    pt_ring_map(&r, fd, 4, PROT_READ | PROT_WRITE))
		pt_fatal("exit map/event");

	/* A live task: its own pid and tid. */
	PT_EQ(pt_output("rec_exit", 0, "live", 4), 0, "exit: live output");
	n = pt_ring_next(&r, rec);
	PT_OK(n == 24 && t[0] == (__u32)getpid() && t[1] == (__u32)gettid(),
	      "exit: a live task's record has pid %u tid %u (want %d %d)",
	      n ? t[0] : 0, n ? t[1] : 0, getpid(), gettid());

	if (pipe(pfd))
		pt_fatal("pipe");
	sigaction(SIGCHLD, &sa, &old);
	child = fork();
	if (child == 0) {
		int e;

		pt_pin(0);
		e = ioctl(pt_st(), PEA_ST_IOC_EXIT_MARK, &mark) ? errno : 0;
		if (write(pfd[1], &e, sizeof(e)) != sizeof(e))
			_exit(3);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &mark_err, sizeof(mark_err)) != sizeof(mark_err))
		mark_err = -1;
	close(pfd[0]);
	/* Autoreaped: waitpid() returns once it is gone, with ECHILD. */
	while (waitpid(child, NULL, 0) == child)
		;
	sigaction(SIGCHLD, &old, NULL);
	PT_EQ(mark_err, 0, "exit: the child marked itself (PEA_ST_IOC_EXIT_MARK errno %d)",
	      mark_err);

	/*
	 * The child is reaped inside exit_notify(), before it reaches the
	 * probed function, so waitpid() can return before the record is
	 * written: wait for it (up to 5 s), then for anything after it.
	 */
	for (tries = 0; tries < 500; tries++) {
		while ((n = pt_ring_next(&r, rec))) {
			if (h->type != PERF_RECORD_SAMPLE || n != 32 ||
			    memcmp(rec + 20, PEA_ST_EXIT_PAYLOAD, 8))
				continue;
			found++;
			PT_OK(t[0] == 0xffffffffu && t[1] == 0xffffffffu,
			      "exit: an exited task's record has pid 0x%x tid 0x%x (want 0xffffffff 0xffffffff)",
			      t[0], t[1]);
		}
		if (found && tries_after++ >= 10)
			break;
		usleep(10000);
	}
	PT_EQ(found, 1, "exit: one record from the exiting task");
	pt_ring_unmap(&r);
	close(fd);
	close(map);
}

int main(void)
{
	pt_pin(0);
	pt_st();
	test_sizes(0, "RAW");
	test_sizes(PERF_SAMPLE_TID, "TID|RAW");
	test_sizes(PERF_SAMPLE_TIME, "TIME|RAW");
	test_sizes(PERF_SAMPLE_CPU, "CPU|RAW");
	test_sizes(ALL_FIELDS, "TID|TIME|CPU|RAW");
	test_wrap();
	test_exited_tid();
	return pt_done();
}
