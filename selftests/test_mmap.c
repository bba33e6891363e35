// SPDX-License-Identifier: GPL-2.0
/*
 * What a ring or counter mapping survives, as a perf mapping does (perf
 * supplies its pages from a .fault handler): MADV_DONTNEED of all or part
 * of it keeps the pages and their bytes (the next access faults them back)
 * and the writer keeps writing. mremap, munmap of a part, mprotect and
 * fork give what they give on a real perf mapping of the same shape,
 * opened with perf_event_open() next to it: writes to the data pages are
 * SIGBUS, the control page is writable, a fork()ed child has no mapping.
 */
#include <setjmp.h>
#include <signal.h>
#include <sys/wait.h>
#include "pea_test.h"

#define MAP "mmap_t"
#define PAGES 4
#define PAYLOAD 100	/* 112-byte records */
#define REC 112

static sigjmp_buf jb;
static int last_sig;	/* set by the handler: atomic accesses only */

static void on_signal(int sig)
{
	__atomic_store_n(&last_sig, sig, __ATOMIC_RELAXED);
	siglongjmp(jb, 1);
}

static int took_signal(void)
{
	return __atomic_load_n(&last_sig, __ATOMIC_RELAXED);
}

/* Touch @p (read, or write the byte back): 0, SIGBUS or SIGSEGV. */
static int touch(unsigned char *p, bool write)
{
	unsigned char v;

	__atomic_store_n(&last_sig, 0, __ATOMIC_RELAXED);
	if (sigsetjmp(jb, 1))
		return took_signal();
	v = __atomic_load_n(p, __ATOMIC_RELAXED);
	if (write)
		__atomic_store_n(p, v, __ATOMIC_RELAXED);
	return 0;
}

/* Compare @len bytes at @p with @want, faulting safely: 0 if equal. */
static int same_bytes(const unsigned char *p, const unsigned char *want,
		      size_t len)
{
	__atomic_store_n(&last_sig, 0, __ATOMIC_RELAXED);
	if (sigsetjmp(jb, 1))
		return took_signal();
	return memcmp(p, want, len) ? -1 : 0;
}

static int perf_open(struct perf_event_attr *attr)
{
	return syscall(SYS_perf_event_open, attr, -1, 0, -1, 0);
}

static void test_ring_dontneed(void)
{
	long ps = pt_page_size();
	size_t len = (PAGES + 1) * ps;
	static unsigned char copy[(PAGES + 1) * 65536], payload[PAYLOAD];
	unsigned char rec[65536];
	int map, fd, i, n = 0;
	struct pt_ring r = { 0 };
	__u64 head;

	map = pt_map_create(MAP, 1, 0);
	fd = pt_event_open(0, PERF_SAMPLE_RAW);
	if (map < 0 || fd < 0 || pt_map_update(map, 0, fd) ||
	    pt_ring_map(&r, fd, PAGES, PROT_READ | PROT_WRITE))
		pt_fatal("ring map/event");
	memset(payload, 0x5a, sizeof(payload));
	/* Records over the first three data pages, one read. */
	for (i = 0; i < 3 * ps / REC; i++)
		n += !pt_output(MAP, 0, payload, PAYLOAD);
	PT_EQ(n, 3 * ps / REC, "dontneed: records written");
	PT_EQ(pt_ring_next(&r, rec), REC, "dontneed: one record read");
	head = pt_head(&r);
	memcpy(copy, r.pg, len);

	PT_EQ(madvise(r.pg, len, MADV_DONTNEED), 0,
	      "MADV_DONTNEED of the whole ring mapping succeeds");
	if (same_bytes((void *)r.pg, copy, len)) {
		PT_OK(0, "after MADV_DONTNEED (whole): every byte is still there (signal %d)",
		      took_signal());
		pt_ring_unmap(&r);
		close(fd);
		close(map);
		return;
	}
	PT_OK(1, "after MADV_DONTNEED (whole): every byte is still there");
	PT_EQ(touch((void *)r.pg, false) ? 0 : pt_head(&r), head,
	      "after MADV_DONTNEED (whole): data_head unchanged");
	PT_EQ(r.pg->data_tail, REC, "after MADV_DONTNEED: data_tail kept");

	PT_EQ(madvise((char *)r.pg + 2 * ps, ps, MADV_DONTNEED), 0,
	      "MADV_DONTNEED of one data page succeeds");
	PT_EQ(madvise(r.pg, ps, MADV_DONTNEED), 0,
	      "MADV_DONTNEED of the control page succeeds");
	PT_EQ(same_bytes((void *)r.pg, copy, len), 0,
	      "after MADV_DONTNEED (parts): every byte is still there");

	/* The writer goes on; the reader reads on from data_tail. */
	PT_EQ(pt_output(MAP, 0, payload, PAYLOAD), 0,
	      "after MADV_DONTNEED: the writer still writes");
	PT_EQ(pt_head(&r), head + REC, "after MADV_DONTNEED: data_head advanced");
	n = 0;
	while (pt_ring_next(&r, rec) == REC &&
	       !memcmp(rec + 12, payload, PAYLOAD))
		n++;
	PT_EQ(n, 3 * ps / REC, "after MADV_DONTNEED: every record reads back");
	pt_ring_unmap(&r);
	close(fd);
	close(map);
}

/* The outcomes of one mapping's hostile operations. */
struct outcome {
	int write_data;		/* signal writing a data page */
	int write_ctrl;		/* signal writing the control page */
	int grow;		/* mremap to one page more: errno */
	int shrink;		/* mremap to one page less: errno */
	int unmap_part;		/* munmap of the last page: errno */
	int move;		/* mremap to another address: errno */
	int moved_same;		/* the moved mapping reads the same bytes */
	int ro_mprotect;	/* mprotect(RW) of a read-only mapping: errno */
	int ro_write_ctrl;	/* then writing its control page: signal */
	int ro_write_data;	/* then writing a data page: signal */
	int child_sig;		/* a fork()ed child reading it: signal */
};

static int err_of(long ret)
{
	return ret < 0 ? errno : 0;
}

static void run_ops(int fd, int pages, struct outcome *o)
{
	long ps = pt_page_size();
	size_t len = (pages + 1) * ps;
	unsigned char *p, *q, *dst, *other;
	static unsigned char before[(PAGES + 2) * 65536];
	int status, tries;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		pt_fatal("mmap");
	o->write_ctrl = touch(p + 64, true);
	o->write_data = pages ? touch(p + ps, true) : -1;
	q = mremap(p, len, len + ps, 0);
	o->grow = q == MAP_FAILED ? errno : 0;
	q = mremap(p, len, len - ps, 0);
	o->shrink = q == MAP_FAILED ? errno : 0;
	o->unmap_part = pages ? err_of(munmap(p + len - ps, ps)) : -1;

	/*
	 * A second mapping of the same fd stays where it is: the moved one
	 * must show what it shows. A counter page is republished every
	 * counter_refresh_ms, so a refresh may fall between the two reads
	 * (often on a slow debug kernel): compare again, up to 100 times,
	 * 1 ms apart; a mapping of the wrong pages never matches.
	 */
	other = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (other == MAP_FAILED)
		pt_fatal("second mmap");
	dst = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	q = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	o->move = q == MAP_FAILED ? errno : 0;
	if (q != MAP_FAILED)
		p = q;
	for (tries = 0; tries < 100; tries++) {
		memcpy(before, other, len);
		o->moved_same = !same_bytes(p, before, len);
		if (o->moved_same || took_signal())
			break;
		usleep(1000);
	}
	munmap(other, len);

	pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		_exit(p[0] + 100);
	}
	waitpid(pid, &status, 0);
	o->child_sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	munmap(p, len);

	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		pt_fatal("mmap read-only");
	o->ro_mprotect = err_of(mprotect(p, len, PROT_READ | PROT_WRITE));
	o->ro_write_ctrl = touch(p + 64, true);
	o->ro_write_data = pages ? touch(p + ps, true) : -1;
	munmap(p, len);
}

/* One outcome: pea's equals perf's, and both are @want. */
static void cmp_one(const char *what, const char *name, int pea, int perf,
		    int want)
{
	PT_EQ(pea, perf, "%s: %s: pea %d, perf %d", what, name, pea, perf);
	PT_EQ(pea, want, "%s: %s is %d", what, name, want);
}

static void compare(const char *what, const struct outcome *pea,
		    const struct outcome *perf, bool counter)
{
	cmp_one(what, "write_ctrl", pea->write_ctrl, perf->write_ctrl, 0);
	cmp_one(what, "write_data", pea->write_data, perf->write_data,
		counter ? -1 : SIGBUS);
	cmp_one(what, "grow", pea->grow, perf->grow, EFAULT);
	cmp_one(what, "shrink", pea->shrink, perf->shrink, EINVAL);
	cmp_one(what, "unmap_part", pea->unmap_part, perf->unmap_part,
		counter ? -1 : EINVAL);
	cmp_one(what, "move", pea->move, perf->move, 0);
	cmp_one(what, "moved_same", pea->moved_same, perf->moved_same, 1);
	cmp_one(what, "child_sig", pea->child_sig, perf->child_sig, SIGSEGV);
	cmp_one(what, "ro_mprotect", pea->ro_mprotect, perf->ro_mprotect, 0);
	cmp_one(what, "ro_write_ctrl", pea->ro_write_ctrl, perf->ro_write_ctrl,
		0);
	cmp_one(what, "ro_write_data", pea->ro_write_data, perf->ro_write_data,
		counter ? -1 : SIGBUS);
}

static void test_ring_ops(void)
{
	struct perf_event_attr attr = pt_output_attr(PERF_SAMPLE_RAW);
	struct outcome pea, perf;
	int fd, pfd;

	fd = pt_event_open(0, PERF_SAMPLE_RAW);
	pfd = perf_open(&attr);
	if (fd < 0 || pfd < 0)
		pt_fatal("ring event / perf_event_open");
	run_ops(fd, PAGES, &pea);
	run_ops(pfd, PAGES, &perf);
	compare("ring", &pea, &perf, false);
	close(fd);
	close(pfd);
}

static void test_counter(void)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pg;
	long ps = pt_page_size();
	static unsigned char copy[65536];
	struct pea_event_open o = { .cpu = 0, .flags = PEA_FLAG_FD_CLOEXEC };
	struct outcome pea, perf;
	__u64 vals[1];
	int fd, pfd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	o.attr = (uintptr_t)&attr;
	fd = ioctl(pt_dev(), PEA_IOC_EVENT_OPEN, &o);
	pfd = perf_open(&attr);
	if (fd < 0 || pfd < 0)
		pt_fatal("counter / perf_event_open");
	pg = mmap(NULL, ps, PROT_READ, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED)
		pt_fatal("counter mmap");
	if (read(fd, vals, sizeof(vals)) != sizeof(vals))
		pt_fatal("counter read");
	memcpy(copy, pg, ps);
	PT_EQ(madvise(pg, ps, MADV_DONTNEED), 0,
	      "MADV_DONTNEED of the counter page succeeds");
	PT_EQ(touch((void *)pg, false), 0,
	      "after MADV_DONTNEED: the counter page reads");
	PT_OK(!took_signal() && pg->size == ((struct perf_event_mmap_page *)copy)->size &&
	      pg->cap_bit0_is_deprecated,
	      "after MADV_DONTNEED: the counter page is the same page");
	if (read(fd, vals, sizeof(vals)) != sizeof(vals))
		pt_fatal("counter read");
	PT_OK(!took_signal() && pg->offset >= ((struct perf_event_mmap_page *)copy)->offset &&
	      pg->lock != ((struct perf_event_mmap_page *)copy)->lock,
	      "after MADV_DONTNEED: the counter page is still updated");
	munmap(pg, ps);

	run_ops(fd, 0, &pea);
	run_ops(pfd, 0, &perf);
	compare("counter", &pea, &perf, true);
	close(fd);
	close(pfd);
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	pt_pin(0);
	pt_setup(1);
	test_ring_dontneed();
	test_ring_ops();
	test_counter();
	return pt_done();
}
