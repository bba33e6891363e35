// SPDX-License-Identifier: GPL-2.0
/*
 * libpea's PEA_BUFFER_FLAG_AUTO_CALLBACK mode against the real module:
 * records reach the callbacks on a library thread without any poll;
 * __poll, __consume and __consume_buffer are refused with -EINVAL, and so
 * is the ORDERED flag with it (EINVAL at __new); drops
 * announced only by the lost hint are reported by the thread on its own;
 * __free delivers what was published before it, then joins the thread; a
 * storm from every context on every CPU is accounted for exactly.
 */
#include <pthread.h>
#include <time.h>
#include "pea_test.h"
#include "pt_storm.h"
#include "libpea.h"

#define MAP		"autocb"
#define MAX_CPUS	PEA_ST_MAX_CPUS
#define PER_CPU		10
#define WAIT_MS		20000	/* generous: the guest is emulated */

static int ncpu;

/* ---- what the callbacks saw, shared with the library thread ---- */

struct seen {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	__u64 recs[MAX_CPUS];		/* records per ring */
	__u64 lost[MAX_CPUS];		/* lost_cb totals per ring */
	__u32 next_tag[MAX_CPUS];	/* the tag expected next */
	__u64 bad;			/* wrong content or order */
	__u64 storm_recv[MAX_CPUS][PEA_ST_NR_SOURCES];
	bool storm;			/* records are storm records */
	pid_t tid;			/* the thread the callbacks ran on */
	__u64 other_tids;		/* callbacks on any other thread */
	int diags;
};

static struct seen seen = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static void seen_reset(bool storm)
{
	pthread_mutex_lock(&seen.lock);
	memset(seen.recs, 0, sizeof(seen.recs));
	memset(seen.lost, 0, sizeof(seen.lost));
	memset(seen.next_tag, 0, sizeof(seen.next_tag));
	memset(seen.storm_recv, 0, sizeof(seen.storm_recv));
	seen.bad = 0;
	seen.storm = storm;
	seen.tid = 0;
	seen.other_tids = 0;
	seen.diags = 0;
	pthread_mutex_unlock(&seen.lock);
}

/* Payload of test record @tag on @cpu: u32 cpu, u32 tag, 12 + tag bytes. */
static size_t make_payload(unsigned char *p, int cpu, __u32 tag)
{
	size_t len = 8 + 12 + tag, i;
	__u32 hdr[2] = { cpu, tag };

	memcpy(p, hdr, sizeof(hdr));
	for (i = sizeof(hdr); i < len; i++)
		p[i] = (unsigned char)(i * 3 + tag * 5 + cpu);
	return len;
}

static void note_thread(void)
{
	pid_t tid = syscall(SYS_gettid);

	if (!seen.tid)
		seen.tid = tid;
	else if (seen.tid != tid)
		seen.other_tids++;
}

static void check_test_record(int cpu, const unsigned char *d, __u32 size)
{
	unsigned char want[64];
	size_t len = make_payload(want, cpu, seen.next_tag[cpu]);
	__u32 raw = ((4 + len + 7) & ~7UL) - 4;

	if (size != raw || memcmp(d, want, len)) {
		if (seen.diags++ < 5)
			pt_diag("ring %d: record %u of %u bytes does not match",
				cpu, seen.next_tag[cpu], size);
		seen.bad++;
	}
	seen.next_tag[cpu]++;
}

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct pea_st_record r;
	const char *why;

	(void)ctx;
	pthread_mutex_lock(&seen.lock);
	note_thread();
	if (cpu < 0 || cpu >= ncpu) {
		seen.bad++;
	} else if (seen.storm) {
		why = pt_storm_check(cpu, data, size, &r);
		if (why) {
			if (seen.diags++ < 5)
				pt_diag("ring %d: %s", cpu, why);
			seen.bad++;
		} else {
			seen.storm_recv[cpu][r.source]++;
		}
		seen.recs[cpu]++;
	} else {
		check_test_record(cpu, data, size);
		seen.recs[cpu]++;
	}
	pthread_cond_broadcast(&seen.cond);
	pthread_mutex_unlock(&seen.lock);
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	(void)ctx;
	pthread_mutex_lock(&seen.lock);
	note_thread();
	if (cpu < 0 || cpu >= ncpu)
		seen.bad++;
	else
		seen.lost[cpu] += cnt;
	pthread_cond_broadcast(&seen.cond);
	pthread_mutex_unlock(&seen.lock);
}

/*
 * Wait (up to WAIT_MS) until ring @cpu has seen @recs records and @lost
 * drops. Returns true if it got there.
 */
static bool wait_for(int cpu, __u64 recs, __u64 lost)
{
	struct timespec dl;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += WAIT_MS / 1000;
	pthread_mutex_lock(&seen.lock);
	while (seen.recs[cpu] < recs || seen.lost[cpu] < lost)
		if (pthread_cond_timedwait(&seen.cond, &seen.lock, &dl))
			break;
	ok = seen.recs[cpu] >= recs && seen.lost[cpu] >= lost;
	pthread_mutex_unlock(&seen.lock);
	return ok;
}

static int make_map(void)
{
	int fd = pea_map_create(MAP, ncpu, 0);

	if (fd < 0)
		pt_fatal("pea_map_create");
	return fd;
}

static struct pea_buffer *auto_buffer(int map, size_t pages, __u32 watermark)
{
	LIBPEA_OPTS(pea_buffer_opts, opts,
		.flags = PEA_BUFFER_FLAG_AUTO_CALLBACK,
		.wakeup_watermark = watermark,
	);
	struct pea_buffer *pb;

	pb = pea_buffer__new(map, pages, on_sample, on_lost, NULL, &opts);
	if (!pb)
		pt_fatal("pea_buffer__new(AUTO_CALLBACK)");
	return pb;
}

/* Produce records 0 .. @n - 1 of the test pattern on @cpu. */
static long produce(int cpu, __u32 n)
{
	unsigned char p[64];
	long ret = 0;
	__u32 tag;

	pt_pin(cpu);
	for (tag = 0; tag < n; tag++) {
		ret = pt_output(MAP, PEA_F_CURRENT_CPU, p,
				make_payload(p, cpu, tag));
		if (ret)
			break;
	}
	return ret;
}

static void test_flags(void)
{
	LIBPEA_OPTS(pea_buffer_opts, opts);
	int map = make_map();
	struct pea_buffer *pb;

	opts.flags = PEA_BUFFER_FLAG_AUTO_CALLBACK | PEA_BUFFER_FLAG_OVERWRITE;
	errno = 0;
	pb = pea_buffer__new(map, 2, on_sample, on_lost, NULL, &opts);
	PT_OK(!pb && errno == EINVAL,
	      "AUTO_CALLBACK with OVERWRITE gives NULL, EINVAL (errno %d)",
	      errno);

	/*
	 * The thread drains each ring as it wakes, so it cannot hold a
	 * record back until every other ring is proven to have nothing
	 * older: ORDERED with AUTO_CALLBACK is refused.
	 */
	opts.flags = PEA_BUFFER_FLAG_AUTO_CALLBACK | PEA_BUFFER_FLAG_ORDERED;
	errno = 0;
	pb = pea_buffer__new(map, 2, on_sample, on_lost, NULL, &opts);
	PT_OK(!pb && errno == EINVAL,
	      "AUTO_CALLBACK with ORDERED gives NULL, EINVAL (errno %d)",
	      errno);
	/* And the map is still usable: ORDERED alone is accepted. */
	opts.flags = PEA_BUFFER_FLAG_ORDERED;
	pb = pea_buffer__new(map, 2, on_sample, on_lost, NULL, &opts);
	PT_OK(pb != NULL, "ORDERED alone is accepted (errno %d)",
	      pb ? 0 : errno);
	pea_buffer__free(pb);
	close(map);
}

static void test_delivery(void)
{
	struct pea_buffer *pb;
	int map = make_map(), cpu, all = 1, order = 1;
	pid_t me = syscall(SYS_gettid);
	long ret;

	seen_reset(false);
	pb = auto_buffer(map, 4, 0);

	for (cpu = 0; cpu < ncpu; cpu++) {
		ret = produce(cpu, PER_CPU);
		if (ret)
			pt_diag("cpu %d: pt_output gave %ld", cpu, ret);
		all &= !ret && wait_for(cpu, PER_CPU, 0);
	}
	PT_OK(all, "every CPU's %d records reached the callback without a poll",
	      PER_CPU);

	pthread_mutex_lock(&seen.lock);
	for (cpu = 0; cpu < ncpu; cpu++)
		order &= seen.recs[cpu] == PER_CPU &&
			 seen.next_tag[cpu] == PER_CPU;
	PT_OK(order, "exactly %d records per ring, no extra", PER_CPU);
	PT_EQ(seen.bad, 0, "every record has its exact bytes, in order");
	PT_OK(seen.tid && seen.tid != me,
	      "callbacks ran on a library thread (tid %d, main %d)",
	      seen.tid, me);
	PT_EQ(seen.other_tids, 0, "all callbacks ran on that one thread");
	pthread_mutex_unlock(&seen.lock);

	errno = 0;
	ret = pea_buffer__poll(pb, 0);
	PT_OK(ret == -EINVAL && errno == EINVAL,
	      "__poll is refused: -EINVAL, errno EINVAL (got %ld)", ret);
	ret = pea_buffer__poll(pb, 100);
	PT_EQ(ret, -EINVAL, "__poll with a timeout is refused too");
	ret = pea_buffer__consume(pb);
	PT_EQ(ret, -EINVAL, "__consume is refused: -EINVAL");
	ret = pea_buffer__consume_buffer(pb, 0);
	PT_EQ(ret, -EINVAL, "__consume_buffer is refused: -EINVAL");
	PT_EQ(pea_buffer__buffer_cnt(pb), ncpu, "__buffer_cnt still works");
	PT_OK(pea_buffer__epoll_fd(pb) >= 0, "__epoll_fd still works");

	pea_buffer__free(pb);
	pthread_mutex_lock(&seen.lock);
	PT_EQ(seen.recs[0], PER_CPU, "nothing more was delivered by __free");
	pthread_mutex_unlock(&seen.lock);
	close(map);
}

/* Drops with no record after them: only the lost hint tells. */
static void test_lost_hint(void)
{
	unsigned char p[64];
	struct pea_buffer *pb;
	int map = make_map(), i, nospc = 0;
	__u64 lost = 0;
	long ret;

	seen_reset(false);
	pb = auto_buffer(map, 2, 0);
	PT_EQ(pea_buffer__pause(pb, 0, true), 0, "pause ring 0 (auto mode)");
	pt_pin(pea_buffer__buffer_cpu(pb, 0));
	for (i = 0; i < 5; i++)
		nospc += pt_output(MAP, PEA_F_CURRENT_CPU, p,
				   make_payload(p, 0, 0)) == -ENOSPC;
	PT_EQ(nospc, 5, "5 outputs into the paused ring give -ENOSPC");
	PT_OK(wait_for(0, 0, 5),
	      "the thread reported the 5 drops with no poll and no record");
	PT_EQ(pea_buffer__lost(pb, 0, &lost), 0, "__lost");
	PT_EQ(lost, 5, "__lost is 5");

	PT_EQ(pea_buffer__pause(pb, 0, false), 0, "resume ring 0");
	ret = produce(pea_buffer__buffer_cpu(pb, 0), 1);
	PT_EQ(ret, 0, "output after resume succeeds");
	PT_OK(wait_for(0, 1, 5), "the record after resume arrives");
	pea_buffer__free(pb);
	pthread_mutex_lock(&seen.lock);
	PT_EQ(seen.lost[0], 5, "the drops were reported once, not again");
	PT_EQ(seen.recs[0], 1, "one record");
	PT_EQ(seen.bad, 0, "intact");
	pthread_mutex_unlock(&seen.lock);
	close(map);
}

/* Records that raised no wake-up are delivered by __free's last pass. */
static void test_free_drains(void)
{
	struct pea_buffer *pb;
	int map = make_map(), cpu, all = 1;
	size_t page = pt_page_size();

	seen_reset(false);
	/* A watermark of the whole ring: a few records never wake anyone. */
	pb = auto_buffer(map, 4, 4 * page);
	for (cpu = 0; cpu < ncpu; cpu++)
		all &= produce(cpu, 7) == 0;
	PT_OK(all, "7 records on every CPU");
	pea_buffer__free(pb);
	pthread_mutex_lock(&seen.lock);
	for (cpu = 0; cpu < ncpu; cpu++)
		all &= seen.recs[cpu] == 7 && seen.next_tag[cpu] == 7;
	PT_OK(all, "__free delivered all 7 records of every ring before returning");
	PT_EQ(seen.bad, 0, "intact and in order");
	pthread_mutex_unlock(&seen.lock);
	close(map);
}

/* Every context on every CPU while the thread consumes. */
static void test_storm(void)
{
	__u64 att, ok, nospc, other, recv;
	struct pea_buffer *pb;
	int map = make_map(), cpu, s, exact = 1;
	struct timespec ts = { 1, 500000000L };

	seen_reset(true);
	pb = auto_buffer(map, 8, 0);
	PT_EQ(pt_storm_start(MAP, PT_ALL_SOURCES), 0, "storm started");
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	PT_EQ(pt_storm_stop(), 0, "storm stopped");
	/* Every producer is done: __free delivers the rest. */
	pea_buffer__free(pb);

	pthread_mutex_lock(&seen.lock);
	for (cpu = 0; cpu < ncpu; cpu++) {
		att = ok = nospc = other = recv = 0;
		for (s = 0; s < PEA_ST_NR_SOURCES; s++) {
			struct pea_st_counts *c = &pt_storm_result.c[cpu][s];

			att += c->attempts;
			ok += c->ok;
			nospc += c->nospc;
			other += c->other;
			recv += seen.storm_recv[cpu][s];
			if (seen.storm_recv[cpu][s] != c->ok) {
				exact = 0;
				pt_diag("cpu %d source %d: received %llu, ok %llu",
					cpu, s,
					(unsigned long long)seen.storm_recv[cpu][s],
					(unsigned long long)c->ok);
			}
		}
		if (recv + seen.lost[cpu] != att || seen.lost[cpu] != nospc ||
		    other) {
			exact = 0;
			pt_diag("cpu %d: attempts %llu ok %llu nospc %llu other %llu; received %llu lost %llu",
				cpu, (unsigned long long)att,
				(unsigned long long)ok,
				(unsigned long long)nospc,
				(unsigned long long)other,
				(unsigned long long)recv,
				(unsigned long long)seen.lost[cpu]);
		}
		if (!att)
			exact = 0;
	}
	PT_OK(exact,
	      "storm: per CPU and source received == ok, lost == nospc, received + lost == attempts");
	PT_EQ(seen.bad, 0, "storm: every record intact");
	PT_EQ(seen.other_tids, 0, "storm: callbacks on one thread");
	pthread_mutex_unlock(&seen.lock);
	close(map);
}

int main(void)
{
	ncpu = pt_setup(MAX_CPUS);
	test_flags();
	test_delivery();
	test_lost_hint();
	test_free_drains();
	test_storm();
	return pt_done();
}
