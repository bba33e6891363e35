/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the pea selftests: TAP output, raw ABI calls, the
 * test module's ioctls and a plain ring reader. Tests assert exact values.
 */
#ifndef _PEA_TEST_H
#define _PEA_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <linux/pea.h>
#include "module/pea_selftest.h"

#define PT_SELFTEST_KO	"/lib/modules/pea/pea_selftest.ko"

static int pt_count, pt_failed;

static inline void pt_result(bool ok, const char *fmt, ...)
{
	va_list ap;

	pt_count++;
	if (!ok)
		pt_failed++;
	printf("%sok %d - ", ok ? "" : "not ", pt_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

#define PT_OK(cond, ...) pt_result(!!(cond), __VA_ARGS__)

/* Exact comparison of two integers; prints both when they differ. */
#define PT_EQ(got, want, ...) do {					\
	long long __g = (long long)(got), __w = (long long)(want);	\
	if (__g != __w)							\
		printf("# %s: got %lld, want %lld\n", #got, __g, __w);	\
	pt_result(__g == __w, __VA_ARGS__);				\
} while (0)

static inline void pt_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline int pt_done(void)
{
	printf("1..%d\n", pt_count);
	printf("# %d passed, %d failed\n", pt_count - pt_failed, pt_failed);
	return pt_failed ? 1 : 0;
}

/*
 * How many times slower than a production kernel the guest's kernel runs:
 * PEA_TIME_SCALE from the harness (scripts/guest-init.sh's
 * pea.time_scale=; 3 on the debug kernel, see docs/checking.md), else 1.
 * Only waits and deadlines that bound how long the kernel may take scale
 * with it; what a test asserts about the result does not.
 */
static inline int pt_time_scale(void)
{
	const char *s = getenv("PEA_TIME_SCALE");
	int v = s ? atoi(s) : 1;

	return v < 1 ? 1 : (v > 100 ? 100 : v);
}

/*
 * @read(@arg) once it has given the same value @still times in a row,
 * @period_ms apart: for counts the kernel or a process settles after the
 * event that changed them (work items, grace periods, a drain). At most
 * @tries reads, as many times more on a slower kernel; then the last.
 */
static inline long pt_settled(long (*read)(void *arg), void *arg,
			      unsigned int period_ms, int still, int tries)
{
	long r = read(arg);
	int i, same = 0;

	for (i = 0; i < tries * pt_time_scale() && same < still; i++) {
		long n;

		usleep(period_ms * 1000);
		n = read(arg);
		same = n == r ? same + 1 : 0;
		r = n;
	}
	return r;
}

/*
 * The cgroup v2 id of directory @path, as the kernel gives it
 * (cgroup_id(), bpf_get_current_cgroup_id()): its 8-byte file handle, as
 * bpftrace's cgroupid() reads it. 0 if it has none.
 */
static inline __u64 pt_cgroup_id(const char *path)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + 64];
	} h;
	__u64 id = 0;
	int mnt;

	h.fh.handle_bytes = 64;
	if (!name_to_handle_at(AT_FDCWD, path, &h.fh, &mnt, 0) &&
	    h.fh.handle_bytes == 8)
		memcpy(&id, h.fh.f_handle, 8);
	return id;
}

static inline void pt_fatal(const char *what)
{
	printf("not ok %d - %s: %s\n", ++pt_count, what, strerror(errno));
	pt_failed++;
	exit(pt_done());
}

/* ioctl returning 0 or the errno it failed with. */
static inline int pt_ioctl_errno(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

static inline long pt_page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

static inline int pt_nr_cpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

static inline void pt_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		pt_fatal("sched_setaffinity");
}

/*
 * One thread per CPU 0 .. @ncpu - 1 running @fn, whose argument is the
 * CPU: started when @start, else joined (the caller has told them to
 * stop).
 */
static inline void pt_cpu_threads(pthread_t *th, int ncpu,
				  void *(*fn)(void *), bool start)
{
	int cpu;

	for (cpu = 0; cpu < ncpu; cpu++) {
		if (start)
			pthread_create(&th[cpu], NULL, fn, (void *)(long)cpu);
		else
			pthread_join(th[cpu], NULL);
	}
}

/*
 * Run on every online CPU in turn, then where the caller ran before. A
 * task that was running on a CPU when this began has been switched out
 * by the time it returns, unless it was preempted and queued again.
 */
static inline void pt_visit_cpus(void)
{
	int cpu, n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t old, set;

	if (sched_getaffinity(0, sizeof(old), &old))
		pt_fatal("sched_getaffinity");
	for (cpu = 0; cpu < n; cpu++) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (!sched_setaffinity(0, sizeof(set), &set))
			sched_yield();
	}
	if (sched_setaffinity(0, sizeof(old), &old))
		pt_fatal("sched_setaffinity");
}

/*
 * @link's info once its own hits (hits - filtered), written, dropped and
 * errors have stayed the same over three reads 20 ms apart, each after a
 * visit of every CPU: for counts read after the workload was reaped. A
 * reaped process still runs its last kernel instructions after waitpid()
 * returns (do_exit() goes on past exit_notify() to its final schedule),
 * and a per-CPU sampler that filters on its tgid can still count it.
 */
static inline void pt_link_settled(int link, struct pea_link_info *li)
{
	struct pea_link_info n;
	int i, same = 0;

	pt_visit_cpus();
	memset(li, 0, sizeof(*li));
	if (ioctl(link, PEA_LINK_IOC_INFO, li))
		pt_fatal("PEA_LINK_IOC_INFO");
	for (i = 0; i < 100 * pt_time_scale() && same < 3; i++) {
		usleep(20000);
		pt_visit_cpus();
		memset(&n, 0, sizeof(n));
		if (ioctl(link, PEA_LINK_IOC_INFO, &n))
			pt_fatal("PEA_LINK_IOC_INFO");
		same = n.hits - n.filtered == li->hits - li->filtered &&
		       n.written == li->written && n.dropped == li->dropped &&
		       n.errors == li->errors ? same + 1 : 0;
		*li = n;
	}
}

/* Write @s to the file at @path (a sysfs or proc knob): 0 or -errno. */
static inline int pt_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -errno;
}

/* Read the file at @path into @buf, NUL-terminated: 0 or -errno. */
static inline int pt_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/*
 * The live object counts of debugfs pea/objects, in its column order
 * (maps, events, rings, links): 0, or -1 if unreadable.
 */
static inline int pt_read_objects(int v[4])
{
	FILE *f = fopen("/sys/kernel/debug/pea/objects", "r");
	char line[256];
	int n = 0;

	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f) && fgets(line, sizeof(line), f))
		n = sscanf(line, "%d %d %d %d", &v[0], &v[1], &v[2], &v[3]);
	fclose(f);
	return n == 4 ? 0 : -1;
}

/*
 * pt_read_objects() once the counts have settled: the objects of the
 * program that ran before are freed after an RCU grace period and a work
 * item (longer on PREEMPT_RT), so a baseline taken at once can count
 * them. Waits until three reads 100 ms apart agree, 10 s at most.
 */
static inline int pt_read_objects_settled(int v[4])
{
	int prev[4], i, same = 0;

	if (pt_read_objects(prev))
		return -1;
	for (i = 0; i < 100 && same < 3; i++) {
		usleep(100000);
		if (pt_read_objects(v))
			return -1;
		same = memcmp(prev, v, sizeof(prev)) ? 0 : same + 1;
		memcpy(prev, v, sizeof(prev));
	}
	return 0;
}

static inline int pt_dev(void)
{
	static int fd = -1;

	if (fd < 0) {
		fd = open(PEA_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			pt_fatal("open " PEA_DEVICE_PATH);
	}
	return fd;
}

/* Returns a map fd, or -errno. */
static inline int pt_map_create(const char *name, __u32 max_entries,
				__u32 flags)
{
	struct pea_map_attr a = {
		.key_size = 4, .value_size = 4,
		.max_entries = max_entries, .map_flags = flags,
		.open_flags = O_CLOEXEC,
	};
	int fd;

	if (name)
		strncpy(a.name, name, sizeof(a.name) - 1);
	fd = ioctl(pt_dev(), PEA_IOC_MAP_CREATE, &a);
	return fd < 0 ? -errno : fd;
}

static inline struct perf_event_attr pt_output_attr(__u64 sample_type)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	attr.sample_type = sample_type;
	attr.sample_period = 1;
	attr.wakeup_events = 1;
	return attr;
}

/* Returns an event fd, or -errno. */
static inline int pt_event_open_attr(const struct perf_event_attr *attr,
				     int cpu)
{
	struct pea_event_open o = {
		.attr = (uintptr_t)attr, .cpu = cpu,
		.flags = PEA_FLAG_FD_CLOEXEC,
	};
	int fd = ioctl(pt_dev(), PEA_IOC_EVENT_OPEN, &o);

	return fd < 0 ? -errno : fd;
}

/* Open and close an event: 0 if it opened, else the errno. */
static inline int pt_event_open_errno(const struct perf_event_attr *attr,
				      int cpu)
{
	int fd = pt_event_open_attr(attr, cpu);

	if (fd < 0)
		return -fd;
	close(fd);
	return 0;
}

static inline int pt_event_open(int cpu, __u64 sample_type)
{
	struct perf_event_attr attr = pt_output_attr(sample_type);

	return pt_event_open_attr(&attr, cpu);
}

static inline int pt_map_update(int map_fd, __u32 key, int ev_fd)
{
	struct pea_map_elem e = { .key = key, .fd = ev_fd };

	return pt_ioctl_errno(map_fd, PEA_MAP_IOC_UPDATE, &e);
}

/*
 * A counter map for PEA_PROBE_F_COUNTERS: a cpu-clock counter on each of
 * @ncpu CPUs (fds in @cfd) in the slot of its CPU. Returns the map fd.
 */
static inline int pt_cpu_clock_map(int *cfd, int ncpu)
{
	struct perf_event_attr ca;
	int cmap = pt_map_create(NULL, ncpu, 0), cpu;

	memset(&ca, 0, sizeof(ca));
	ca.size = sizeof(ca);
	ca.type = PERF_TYPE_SOFTWARE;
	ca.config = PERF_COUNT_SW_CPU_CLOCK;
	for (cpu = 0; cpu < ncpu; cpu++) {
		cfd[cpu] = pt_event_open_attr(&ca, cpu);
		pt_map_update(cmap, cpu, cfd[cpu]);
	}
	return cmap;
}

static inline int pt_map_delete(int map_fd, __u32 key)
{
	struct pea_map_elem e = { .key = key };

	return pt_ioctl_errno(map_fd, PEA_MAP_IOC_DELETE, &e);
}

/* A mapped ring, read with the perf protocol. */
struct pt_ring {
	struct perf_event_mmap_page *pg;
	unsigned char *data;
	size_t size;		/* data bytes */
	size_t map_len;
	int fd;
};

static inline int pt_ring_map(struct pt_ring *r, int fd, int pages, int prot)
{
	void *p;

	r->map_len = (size_t)(pages + 1) * pt_page_size();
	p = mmap(NULL, r->map_len, prot, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	r->pg = p;
	r->data = (unsigned char *)p + pt_page_size();
	r->size = (size_t)pages * pt_page_size();
	r->fd = fd;
	return 0;
}

static inline void pt_ring_unmap(struct pt_ring *r)
{
	munmap(r->pg, r->map_len);
	r->pg = NULL;
}

static inline __u64 pt_head(struct pt_ring *r)
{
	return __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
}

/* Copy @len bytes at ring position @pos (wrapping) into @buf. */
static inline void pt_ring_copy(struct pt_ring *r, __u64 pos, void *buf,
				size_t len)
{
	size_t off = pos & (r->size - 1);
	size_t first = len < r->size - off ? len : r->size - off;

	memcpy(buf, r->data + off, first);
	memcpy((char *)buf + first, r->data, len - first);
}

/*
 * Read the record at data_tail into @buf (at least 65536 bytes) and
 * advance data_tail past it. Returns its size, 0 if the ring is empty.
 */
static inline size_t pt_ring_next(struct pt_ring *r, void *buf)
{
	__u64 head = pt_head(r), tail = r->pg->data_tail;
	struct perf_event_header *h = buf;

	if (head == tail)
		return 0;
	pt_ring_copy(r, tail, buf, sizeof(*h));
	if (h->size < sizeof(*h) || h->size > head - tail)
		return 0;
	pt_ring_copy(r, tail, buf, h->size);
	__atomic_store_n(&r->pg->data_tail, tail + h->size, __ATOMIC_RELEASE);
	return h->size;
}

/* Skip everything pending. */
static inline void pt_ring_drain(struct pt_ring *r)
{
	__atomic_store_n(&r->pg->data_tail, pt_head(r), __ATOMIC_RELEASE);
}

/*
 * The producer tests' fixture: a map @name whose slot N holds an output
 * event (PERF_SAMPLE_RAW) on CPU N, each ring of @pages pages mapped
 * writable. Returns the number of CPUs.
 */
static inline int pt_cpu_map(const char *name, int pages, int *map_fd,
			     int ev_fd[], struct pt_ring rings[])
{
	int cpu, ncpu = pt_nr_cpus();

	*map_fd = pt_map_create(name, ncpu, 0);
	if (*map_fd < 0)
		pt_fatal("map create");
	for (cpu = 0; cpu < ncpu; cpu++) {
		ev_fd[cpu] = pt_event_open(cpu, PERF_SAMPLE_RAW);
		pt_map_update(*map_fd, cpu, ev_fd[cpu]);
		if (pt_ring_map(&rings[cpu], ev_fd[cpu], pages,
				PROT_READ | PROT_WRITE))
			pt_fatal("mmap");
	}
	return ncpu;
}

/* Skip everything pending in @n rings. */
static inline void pt_rings_drain(struct pt_ring rings[], int n)
{
	int i;

	for (i = 0; i < n; i++)
		pt_ring_drain(&rings[i]);
}

/*
 * The wake-up tests' fixture: an output event in slot 0 of a one-slot
 * map, its ring mapped writable, an epoll fd watching it for EPOLLIN.
 */
struct pt_polled {
	int map, fd, ep;
	struct pt_ring r;
};

/* @ev_fd: a new event fd (or -errno: fatal); @pages: data pages. */
static inline void pt_polled_open(struct pt_polled *p, const char *name,
				  int ev_fd, int pages)
{
	struct epoll_event e = { .events = EPOLLIN };

	p->fd = ev_fd;
	p->map = pt_map_create(name, 1, 0);
	if (p->map < 0 || p->fd < 0)
		pt_fatal("map/event");
	if (pt_map_update(p->map, 0, p->fd))
		pt_fatal("update");
	if (pt_ring_map(&p->r, p->fd, pages, PROT_READ | PROT_WRITE))
		pt_fatal("mmap");
	p->ep = epoll_create1(EPOLL_CLOEXEC);
	if (p->ep < 0 || epoll_ctl(p->ep, EPOLL_CTL_ADD, p->fd, &e))
		pt_fatal("epoll");
}

static inline void pt_polled_close(struct pt_polled *p)
{
	close(p->ep);
	pt_ring_unmap(&p->r);
	close(p->fd);
	close(p->map);
}

/* The event's stats.wakeups. */
static inline __u64 pt_wakeups(int fd)
{
	struct pea_event_stats st;

	if (ioctl(fd, PEA_EVENT_IOC_STATS, &st))
		pt_fatal("PEA_EVENT_IOC_STATS");
	return st.wakeups;
}

/* ---- the test module ---- */

/*
 * Loads the test module on first use. Under multi-threaded TCG (PEA_TCG,
 * scripts/vm-run.sh) without its software-counter anchors: creating and
 * releasing them patches jump labels that other vCPUs run through, which
 * QEMU does not keep coherent there (README.md, known issues), and no test
 * that runs there needs them (scripts/mt-tests).
 */
static inline int pt_st(void)
{
	static int fd = -1;

	if (fd >= 0)
		return fd;
	fd = open(PEA_ST_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		const char *tcg = getenv("PEA_TCG");
		const char *params = tcg && !strcmp(tcg, "multi") ?
				     "anchors=0" : "";
		int ko = open(PT_SELFTEST_KO, O_RDONLY | O_CLOEXEC);

		if (ko < 0)
			pt_fatal("open " PT_SELFTEST_KO);
		if (syscall(SYS_finit_module, ko, params, 0) && errno != EEXIST)
			pt_fatal("finit_module pea_selftest");
		close(ko);
		fd = open(PEA_ST_DEVICE, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			pt_fatal("open " PEA_ST_DEVICE);
	}
	return fd;
}

/*
 * A test program's start: open /dev/pea and load the test module; returns
 * the online CPUs, at most @max (the size of the test's per-CPU arrays).
 */
static inline int pt_setup(int max)
{
	int ncpu = pt_nr_cpus();

	pt_dev();
	pt_st();
	return ncpu > max ? max : ncpu;
}

/*
 * Call pea_output() @count times from task context on this CPU (pin
 * first). Returns the last call's return value; *n_ok gets the successes.
 */
static inline long pt_output_n(const char *map, __u64 flags, const void *data,
			       __u64 size, __u32 count, __u32 *n_ok)
{
	struct pea_st_output o = {
		.flags = flags, .data = (uintptr_t)data, .size = size,
		.count = count,
	};

	strncpy(o.map, map, sizeof(o.map) - 1);
	if (ioctl(pt_st(), PEA_ST_IOC_OUTPUT, &o))
		return -errno;
	if (n_ok)
		*n_ok = o.n_ok;
	return o.ret;
}

static inline long pt_output(const char *map, __u64 flags, const void *data,
			     __u64 size)
{
	return pt_output_n(map, flags, data, size, 1, NULL);
}

/* A kprobe attr on @sym with @flags (and CLOEXEC), any CPU, no capture. */
static inline struct pea_probe_attr pt_probe_attr(const char *sym,
						  __u32 flags)
{
	struct pea_probe_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags | PEA_PROBE_F_CLOEXEC;
	strncpy(a.symbol, sym, sizeof(a.symbol) - 1);
	a.filter_cpu = -1;
	return a;
}

#endif /* _PEA_TEST_H */
