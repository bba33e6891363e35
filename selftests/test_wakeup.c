// SPDX-License-Identifier: GPL-2.0
/*
 * Wake-ups through poll and epoll, exactly as perf raises them: every
 * wakeup_events-th record, when data_head passes the next watermark
 * position (attr.wakeup_watermark, or half the ring by default), once per
 * wake-up (poll consumes the flag); EPOLLHUP without a ring; a blocked
 * epoll_wait woken by a record from another thread.
 */
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include "pea_test.h"

#define MAP "wakeup"
#define PAYLOAD 20	/* 32-byte records: 8 + round_up(4 + 20, 8) */
#define REC 32

static unsigned char buf[4096];

/* wakeup_events @we, or watermark mode with @wm bytes when @watermark. */
static void wk_open(struct pt_polled *w, __u32 we, bool watermark, __u32 wm,
		    int pages)
{
	struct perf_event_attr attr = pt_output_attr(PERF_SAMPLE_RAW);
	attr.wakeup_events = we;
	if (watermark) {
		attr.watermark = 1;
		attr.wakeup_watermark = wm;
	}
	pt_polled_open(w, MAP, pt_event_open_attr(&attr, 0), pages);
}

/* epoll_wait(ep, .., @timeout): returns n, stores the events of the fd. */
static int ep_wait(int ep, int timeout, __u32 *events)
{
	struct epoll_event e[2];
	int n = epoll_wait(ep, e, 2, timeout);

	*events = n > 0 ? e[0].events : 0;
	return n;
}

/*
 * Produce records @from..@to (1-based) and check epoll after each: only
 * record @wake (0: none) reports EPOLLIN. Returns the first record that
 * behaved otherwise, 0 if all did.
 */
static int produce_expect(struct pt_polled *w, int from, int to, int wake)
{
	__u32 ev;
	int i, n;

	for (i = from; i <= to; i++) {
		if (pt_output(MAP, 0, buf, PAYLOAD))
			return i;
		n = ep_wait(w->ep, 0, &ev);
		if (i == wake ? (n != 1 || ev != EPOLLIN) : n != 0) {
			pt_diag("record %d: epoll_wait gave %d, events %#x",
				i, n, ev);
			return i;
		}
	}
	return 0;
}

static void test_wakeup_events(void)
{
	struct pt_polled w;
	__u32 ev;

	wk_open(&w, 3, false, 0, 4);
	PT_EQ(ep_wait(w.ep, 0, &ev), 0, "wakeup_events 3: nothing before output");
	PT_EQ(produce_expect(&w, 1, 2, 0), 0,
	      "wakeup_events 3: records 1 and 2 do not wake");
	PT_EQ(produce_expect(&w, 3, 3, 3), 0,
	      "wakeup_events 3: record 3 wakes with EPOLLIN");
	PT_EQ(ep_wait(w.ep, 0, &ev), 0,
	      "wakeup_events 3: the flag is consumed, a second epoll_wait gives 0");
	PT_EQ(produce_expect(&w, 4, 5, 0), 0,
	      "wakeup_events 3: records 4 and 5 do not wake");
	PT_EQ(produce_expect(&w, 6, 6, 6), 0,
	      "wakeup_events 3: record 6 wakes with EPOLLIN");
	PT_EQ(ep_wait(w.ep, 0, &ev), 0,
	      "wakeup_events 3: consumed again");
	PT_EQ(produce_expect(&w, 7, 8, 0), 0,
	      "wakeup_events 3: records 7 and 8 do not wake");
	PT_EQ(pt_wakeups(w.fd), 2, "wakeup_events 3: stats.wakeups == 2 after 8 records");
	PT_EQ(pt_head(&w.r), 8 * REC, "wakeup_events 3: data_head 256");
	pt_polled_close(&w);

	wk_open(&w, 1, false, 0, 4);
	PT_EQ(produce_expect(&w, 1, 1, 1) + produce_expect(&w, 2, 2, 2) +
	      produce_expect(&w, 3, 3, 3) + produce_expect(&w, 4, 4, 4) +
	      produce_expect(&w, 5, 5, 5), 0,
	      "wakeup_events 1: each of 5 records wakes once");
	PT_EQ(ep_wait(w.ep, 0, &ev), 0, "wakeup_events 1: then nothing pending");
	PT_EQ(pt_wakeups(w.fd), 5, "wakeup_events 1: stats.wakeups == 5");
	pt_polled_close(&w);
}

static void test_watermark(void)
{
	struct pt_polled w;
	__u32 ev;

	/* Watermark 1000 on a 4-page ring: wake when head > 1000, > 2000. */
	wk_open(&w, 0, true, 1000, 4);
	PT_EQ(produce_expect(&w, 1, 31, 0), 0,
	      "watermark 1000: no wake-up through record 31 (head 992)");
	PT_EQ(pt_wakeups(w.fd), 0, "watermark 1000: stats.wakeups 0 at head 992");
	PT_EQ(produce_expect(&w, 32, 32, 32), 0,
	      "watermark 1000: record 32 (head 1024) wakes");
	PT_EQ(produce_expect(&w, 33, 62, 0), 0,
	      "watermark 1000: none through record 62 (head 1984)");
	PT_EQ(produce_expect(&w, 63, 63, 63), 0,
	      "watermark 1000: record 63 (head 2016) wakes");
	PT_EQ(ep_wait(w.ep, 0, &ev), 0, "watermark 1000: consumed");
	PT_EQ(pt_wakeups(w.fd), 2, "watermark 1000: stats.wakeups == 2");
	PT_EQ(pt_head(&w.r), 63 * REC, "watermark 1000: data_head 2016");
	pt_polled_close(&w);

	/* Default: no watermark, wakeup_events 0: half of an 8192-byte ring. */
	wk_open(&w, 0, false, 0, 2);
	PT_EQ(produce_expect(&w, 1, 128, 0), 0,
	      "default watermark: no wake-up through record 128 (head 4096)");
	PT_EQ(produce_expect(&w, 129, 129, 129), 0,
	      "default watermark: record 129 (head 4128) wakes");
	PT_EQ(ep_wait(w.ep, 0, &ev), 0, "default watermark: consumed");
	PT_EQ(pt_wakeups(w.fd), 1, "default watermark: stats.wakeups == 1");
	pt_polled_close(&w);

	/* watermark set with wakeup_watermark 0 also means half the ring. */
	wk_open(&w, 0, true, 0, 2);
	PT_EQ(produce_expect(&w, 1, 128, 0), 0,
	      "watermark 0: no wake-up through record 128 (head 4096)");
	PT_EQ(produce_expect(&w, 129, 129, 129), 0,
	      "watermark 0: record 129 (head 4128) wakes");
	PT_EQ(pt_wakeups(w.fd), 1, "watermark 0: stats.wakeups == 1");
	pt_polled_close(&w);
}

static void test_nonblock_and_hup(void)
{
	struct pollfd p;
	__u64 val = ~0ULL;
	struct pt_polled w;
	__u32 ev;
	int fd, ep;
	struct epoll_event e = { .events = EPOLLIN };
	struct pt_ring r;

	/* wakeup_events 0: the default watermark, nothing wakes below 4096. */
	wk_open(&w, 0, false, 0, 2);
	PT_EQ(fcntl(w.fd, F_SETFL, fcntl(w.fd, F_GETFL) | O_NONBLOCK), 0,
	      "fcntl O_NONBLOCK on the event fd");
	p = (struct pollfd){ .fd = w.fd, .events = POLLIN };
	PT_EQ(poll(&p, 1, 0), 0, "poll(0) on a mapped empty ring returns 0");
	PT_EQ(p.revents, 0, "poll(0) on a mapped empty ring: revents 0");
	PT_EQ(ep_wait(w.ep, 0, &ev), 0, "epoll_wait(0) on a mapped empty ring: 0");
	PT_EQ(read(w.fd, &val, sizeof(val)), 8,
	      "read() of a non-blocking event fd returns 8 bytes at once");
	PT_EQ(val, 0, "read(): the count is 0");
	PT_EQ(pt_output(MAP, 0, buf, PAYLOAD), 0, "one record");
	PT_EQ(pt_output(MAP, 0, buf, PAYLOAD), 0, "another record");
	PT_EQ(read(w.fd, &val, sizeof(val)), 8, "read() again: 8 bytes");
	PT_EQ(val, 2, "read(): the count is 2");
	p.revents = 0;
	PT_EQ(poll(&p, 1, 0), 0,
	      "poll(0) with unread data but no wake-up returns 0 (as perf)");
	PT_EQ(pt_wakeups(w.fd), 0, "no wake-up was raised");
	pt_polled_close(&w);

	/* Never mapped: EPOLLHUP. */
	fd = pt_event_open(0, PERF_SAMPLE_RAW);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	PT_EQ(poll(&p, 1, 0), 1, "poll on an unmapped event returns 1");
	PT_EQ(p.revents, POLLHUP, "poll on an unmapped event: revents POLLHUP");
	ep = epoll_create1(EPOLL_CLOEXEC);
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
	PT_EQ(ep_wait(ep, 0, &ev), 1, "epoll_wait on an unmapped event returns 1");
	PT_EQ(ev, EPOLLHUP, "epoll_wait on an unmapped event: EPOLLHUP");
	PT_EQ(ep_wait(ep, 0, &ev), 1, "EPOLLHUP is level: reported again");
	PT_EQ(ev, EPOLLHUP, "again EPOLLHUP");

	/* Mapped: no HUP; unmapped again: HUP. */
	pt_ring_map(&r, fd, 1, PROT_READ | PROT_WRITE);
	p.revents = 0;
	PT_EQ(poll(&p, 1, 0), 0, "mapped: poll returns 0");
	PT_EQ(ep_wait(ep, 0, &ev), 0, "mapped: epoll_wait returns 0");
	pt_ring_unmap(&r);
	p.revents = 0;
	PT_EQ(poll(&p, 1, 0), 1, "unmapped again: poll returns 1");
	PT_EQ(p.revents, POLLHUP, "unmapped again: revents POLLHUP");
	/*
	 * Linux's ring_buffer_attach() wakes the event's waiters when the
	 * ring is detached, so an epoll (or a blocked poll) registered while
	 * the ring was mapped learns about the hang-up.
	 */
	PT_EQ(ep_wait(ep, 0, &ev), 1,
	      "unmapped again: the epoll set registered while mapped reports it");
	PT_EQ(ev, EPOLLHUP, "unmapped again: epoll_wait gives EPOLLHUP");
	close(ep);
	close(fd);
}

struct producer {
	int delay_ms;
	long ret;
};

static void *producer_fn(void *arg)
{
	struct producer *p = arg;

	pt_pin(0);
	usleep(p->delay_ms * 1000);
	p->ret = pt_output(MAP, 0, buf, PAYLOAD);
	return NULL;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static void test_blocking(void)
{
	struct producer p = { .delay_ms = 100, .ret = 1 };
	struct timespec t0;
	pthread_t th;
	int n, status = -1;
	struct pt_polled w;
	pid_t pid;
	long ms;
	__u32 ev;

	wk_open(&w, 1, false, 0, 2);
	/* Wait on another CPU than the producer's when there is one. */
	pt_pin(1 % pt_nr_cpus());
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (pthread_create(&th, NULL, producer_fn, &p))
		pt_fatal("pthread_create");
	n = ep_wait(w.ep, 5000, &ev);
	ms = ms_since(&t0);
	pthread_join(th, NULL);
	pt_pin(0);
	PT_EQ(p.ret, 0, "blocking: the other thread's record succeeded");
	PT_EQ(n, 1, "blocking: epoll_wait(5000) returned 1");
	PT_EQ(ev, EPOLLIN, "blocking: with EPOLLIN");
	PT_OK(ms < 5000, "blocking: woken after %ld ms, before the timeout", ms);
	PT_EQ(pt_wakeups(w.fd), 1, "blocking: stats.wakeups == 1");
	PT_EQ(pt_head(&w.r), REC, "blocking: the record is in the ring");
	pt_polled_close(&w);

	/* The same from a forked process (the fds are shared). */
	wk_open(&w, 1, false, 0, 2);
	pt_pin(1 % pt_nr_cpus());
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fflush(stdout);
	pid = fork();

	if (pid == 0) {
		pt_pin(0);
		usleep(100000);
		_exit(pt_output(MAP, 0, buf, PAYLOAD) ? 1 : 0);
	}
	n = ep_wait(w.ep, 5000, &ev);
	ms = ms_since(&t0);
	waitpid(pid, &status, 0);
	pt_pin(0);
	PT_EQ(status, 0, "blocking: the child process's record succeeded");
	PT_EQ(n, 1, "blocking: epoll_wait(5000) woken by another process returned 1");
	PT_EQ(ev, EPOLLIN, "blocking: with EPOLLIN");
	PT_OK(ms < 5000, "blocking: woken after %ld ms, before the timeout", ms);
	pt_polled_close(&w);
}

/* The EPOLLIN flag lives in the ring, as in Linux: a new mapping has none. */
static void test_flag_per_ring(void)
{
	struct pollfd p;
	struct pt_polled w;

	wk_open(&w, 1, false, 0, 1);
	pt_output(MAP, 0, buf, PAYLOAD);
	pt_ring_unmap(&w.r);
	pt_ring_map(&w.r, w.fd, 1, PROT_READ | PROT_WRITE);
	p = (struct pollfd){ .fd = w.fd, .events = POLLIN };
	poll(&p, 1, 0);
	PT_EQ(p.revents, 0,
	      "a wake-up not polled before munmap does not reach the new ring");
	pt_polled_close(&w);
}

/*
 * perf's wake-up is EPOLLIN | EPOLLRDNORM (perf_output_wakeup()), so a
 * poller asking for either sees it; EPOLLHUP alone without a ring.
 */
static void test_rdnorm(void)
{
	struct pollfd p;
	struct pt_polled w;
	int fd;

	wk_open(&w, 1, false, 0, 1);
	pt_output(MAP, 0, buf, PAYLOAD);
	p = (struct pollfd){ .fd = w.fd, .events = POLLRDNORM };
	PT_EQ(poll(&p, 1, 0), 1, "poll(POLLRDNORM) sees a wake-up");
	PT_EQ(p.revents, POLLRDNORM, "poll(POLLRDNORM): revents POLLRDNORM");
	p.revents = 0;
	PT_EQ(poll(&p, 1, 0), 0, "poll(POLLRDNORM) took the wake-up");
	pt_output(MAP, 0, buf, PAYLOAD);
	p = (struct pollfd){ .fd = w.fd, .events = POLLIN };
	PT_EQ(poll(&p, 1, 0), 1, "poll(POLLIN) sees the next wake-up");
	PT_EQ(p.revents, POLLIN, "poll(POLLIN): revents POLLIN");
	pt_output(MAP, 0, buf, PAYLOAD);
	p = (struct pollfd){ .fd = w.fd, .events = POLLIN | POLLRDNORM };
	PT_EQ(poll(&p, 1, 0), 1, "poll(POLLIN|POLLRDNORM) sees a wake-up");
	PT_EQ(p.revents, POLLIN | POLLRDNORM,
	      "poll(POLLIN|POLLRDNORM): revents POLLIN|POLLRDNORM, as perf");
	pt_polled_close(&w);

	fd = pt_event_open(0, PERF_SAMPLE_RAW);
	p = (struct pollfd){ .fd = fd, .events = POLLIN | POLLRDNORM };
	PT_EQ(poll(&p, 1, 0), 1, "poll(POLLIN|POLLRDNORM) unmapped returns 1");
	PT_EQ(p.revents, POLLHUP, "unmapped: revents POLLHUP alone, as perf");
	close(fd);
}

int main(void)
{
	pt_pin(0);
	pt_st();
	test_wakeup_events();
	test_watermark();
	test_nonblock_and_hup();
	test_blocking();
	test_flag_per_ring();
	test_rdnorm();
	return pt_done();
}
