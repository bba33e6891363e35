// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libpea: counters. One counter fd per CPU through /dev/pea, read with
 * read(2) (the perf read_format layout) or, without a system call, from
 * the control page the counter's CPU publishes under the perf seqcount;
 * and the normalisation of multiplexed counts in 128-bit arithmetic.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/pea.h>

#include "libpea.h"
#include "libpea_internal.h"

#define PEA_TIMES_FORMAT	(PERF_FORMAT_TOTAL_TIME_ENABLED | \
				 PERF_FORMAT_TOTAL_TIME_RUNNING)

static inline int pea_cerr(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

static int counter_open_on(int devfd, int cpu,
			   const struct perf_event_attr *attr)
{
	struct perf_event_attr a = *attr;
	struct pea_event_open req;
	int fd;

	a.read_format |= PEA_TIMES_FORMAT;
	memset(&req, 0, sizeof(req));
	req.attr = (__u64)(uintptr_t)&a;
	req.cpu = cpu;
	req.flags = PEA_FLAG_FD_CLOEXEC;
	fd = ioctl(devfd, PEA_IOC_EVENT_OPEN, &req);
	return fd < 0 ? -errno : fd;
}

int pea_counter_open(int cpu, const struct perf_event_attr *attr)
{
	int devfd, fd;

	if (!attr)
		return pea_cerr(-EINVAL);
	devfd = pea_open_dev();
	if (devfd < 0)
		return devfd;
	fd = counter_open_on(devfd, cpu, attr);
	close(devfd);
	return pea_cerr(fd);
}

int pea_counter_read(int fd, struct pea_counter_value *val)
{
	/* value, enabled, running, then maybe id and lost */
	__u64 buf[5];
	ssize_t n;

	if (!val)
		return pea_cerr(-EINVAL);
	memset(val, 0, sizeof(*val));
	do {
		n = read(fd, buf, sizeof(buf));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return pea_cerr(-errno);
	if (n == 0)
		return pea_cerr(-ENODATA);
	if ((size_t)n < 3 * sizeof(__u64))
		return pea_cerr(-EINVAL);	/* not opened by libpea */
	val->value = buf[0];
	val->enabled = buf[1];
	val->running = buf[2];
	return 0;
}

void *pea_counter_mmap(int fd)
{
	long page_size = sysconf(_SC_PAGESIZE);
	void *p;

	if (page_size <= 0) {
		errno = EINVAL;
		return NULL;
	}
	p = mmap(NULL, page_size, PROT_READ, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

void pea_counter_munmap(void *page)
{
	if (page)
		munmap(page, sysconf(_SC_PAGESIZE));
}

int pea_counter_read_page(const void *page, struct pea_counter_value *val,
			  __u64 *stamp)
{
	const struct perf_event_mmap_page *pg = page;
	__u64 value, enabled, running, when;
	__u32 seq;

	if (!pg || !val)
		return pea_cerr(-EINVAL);
	for (;;) {
		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
		if (seq & 1)
			continue;	/* the counter's CPU is writing */
		value = __atomic_load_n((const __u64 *)&pg->offset,
					__ATOMIC_RELAXED);
		enabled = __atomic_load_n(&pg->time_enabled, __ATOMIC_RELAXED);
		running = __atomic_load_n(&pg->time_running, __ATOMIC_RELAXED);
		when = __atomic_load_n(&PEA_PAGE_COUNTER_TIME(pg),
				       __ATOMIC_RELAXED);
		/* The loads above complete before the lock is re-read. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pg->lock, __ATOMIC_RELAXED) == seq)
			break;
	}
	val->value = value;
	val->enabled = enabled;
	val->running = running;
	if (stamp)
		*stamp = when;
	return 0;
}

__u64 pea_counter_scale(const struct pea_counter_value *val)
{
	unsigned __int128 scaled;

	if (!val || !val->running)
		return 0;
	if (val->running == val->enabled)
		return val->value;
	scaled = (unsigned __int128)val->value * val->enabled / val->running;
	return scaled > UINT64_MAX ? UINT64_MAX : (__u64)scaled;
}

static int counter_ioctl(int fd, unsigned long cmd)
{
	return ioctl(fd, cmd, 0) < 0 ? pea_cerr(-errno) : 0;
}

int pea_counter_enable(int fd)
{
	return counter_ioctl(fd, PERF_EVENT_IOC_ENABLE);
}

int pea_counter_disable(int fd)
{
	return counter_ioctl(fd, PERF_EVENT_IOC_DISABLE);
}

int pea_counter_reset(int fd)
{
	return counter_ioctl(fd, PERF_EVENT_IOC_RESET);
}

/* ------------------------------------------------------------------ */
/* One counter per CPU                                                 */
/* ------------------------------------------------------------------ */

struct pea_counter_cpu {
	int fd;
	int cpu;
	void *page;
};

struct pea_counters {
	struct pea_counter_cpu *c;
	size_t cnt;
};

#define PEA_ONLINE_FILE		"/sys/devices/system/cpu/online"

static int read_online(char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(PEA_ONLINE_FILE, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EINVAL;
	buf[n] = '\0';
	return 0;
}

static bool opts_ok(const struct pea_counters_opts *opts)
{
	const char *p = (const char *)opts;
	size_t i;

	if (!opts)
		return true;
	if (opts->sz < sizeof(opts->sz))
		return false;
	for (i = sizeof(*opts); i < opts->sz; i++)
		if (p[i])
			return false;
	return true;
}

#define COPTS_HAS(opts, field)						\
	((opts) && (opts)->sz >= offsetof(struct pea_counters_opts, field) + \
				 sizeof((opts)->field))

struct pea_counters *pea_counters__new(const struct perf_event_attr *attr,
				       const char *cpus,
				       struct pea_counters_opts *opts)
{
	bool want_mmap = COPTS_HAS(opts, mmap) && opts->mmap;
	struct pea_counters *cs = NULL;
	char online[4096];
	bool *mask = NULL;
	int n = 0, err, devfd = -1, cpu, failed = -1;
	size_t want = 0;

	if (COPTS_HAS(opts, err_cpu))
		opts->err_cpu = -1;
	if (!attr || !opts_ok(opts)) {
		errno = EINVAL;
		return NULL;
	}
	if (!cpus) {
		err = read_online(online, sizeof(online));
		if (err)
			goto fail;
		cpus = online;
	}
	err = pea_parse_cpu_list(cpus, &mask, &n);
	if (err)
		goto fail;
	for (cpu = 0; cpu < n; cpu++)
		want += mask[cpu];

	cs = calloc(1, sizeof(*cs));
	if (!cs || !(cs->c = calloc(want, sizeof(*cs->c)))) {
		err = -ENOMEM;
		goto fail;
	}
	devfd = pea_open_dev();
	if (devfd < 0) {
		err = devfd;
		goto fail;
	}
	for (cpu = 0; cpu < n; cpu++) {
		struct pea_counter_cpu *c = &cs->c[cs->cnt];

		if (!mask[cpu])
			continue;
		c->cpu = cpu;
		c->fd = counter_open_on(devfd, cpu, attr);
		if (c->fd < 0) {
			err = c->fd;
			failed = cpu;
			goto fail;
		}
		cs->cnt++;
		if (want_mmap) {
			c->page = pea_counter_mmap(c->fd);
			if (!c->page) {
				err = -errno;
				failed = cpu;
				goto fail;
			}
		}
	}
	close(devfd);
	free(mask);
	return cs;

fail:
	if (devfd >= 0)
		close(devfd);
	free(mask);
	pea_counters__free(cs);
	if (COPTS_HAS(opts, err_cpu))
		opts->err_cpu = failed;
	errno = -err;
	return NULL;
}

void pea_counters__free(struct pea_counters *cs)
{
	size_t i;

	if (!cs)
		return;
	for (i = 0; i < cs->cnt; i++) {
		pea_counter_munmap(cs->c[i].page);
		close(cs->c[i].fd);
	}
	free(cs->c);
	free(cs);
}

size_t pea_counters__cnt(const struct pea_counters *cs)
{
	return cs ? cs->cnt : 0;
}

int pea_counters__cpu(const struct pea_counters *cs, size_t i)
{
	return cs && i < cs->cnt ? cs->c[i].cpu : pea_cerr(-EINVAL);
}

int pea_counters__fd(const struct pea_counters *cs, size_t i)
{
	return cs && i < cs->cnt ? cs->c[i].fd : pea_cerr(-EINVAL);
}

int pea_counters__read(struct pea_counters *cs, size_t i,
		       struct pea_counter_value *val)
{
	if (!cs || i >= cs->cnt)
		return pea_cerr(-EINVAL);
	return pea_counter_read(cs->c[i].fd, val);
}

int pea_counters__read_page(struct pea_counters *cs, size_t i,
			    struct pea_counter_value *val, __u64 *stamp)
{
	if (!cs || i >= cs->cnt || !cs->c[i].page)
		return pea_cerr(-EINVAL);
	return pea_counter_read_page(cs->c[i].page, val, stamp);
}

int pea_counters__sum(struct pea_counters *cs, struct pea_counter_value *total)
{
	struct pea_counter_value v;
	size_t i;
	int err;

	if (!cs || !total)
		return pea_cerr(-EINVAL);
	memset(total, 0, sizeof(*total));
	for (i = 0; i < cs->cnt; i++) {
		err = pea_counter_read(cs->c[i].fd, &v);
		if (err == -ENODATA)
			continue;
		if (err)
			return err;
		total->value += v.value;
		total->enabled += v.enabled;
		total->running += v.running;
	}
	return 0;
}

static int counters_ioctl(struct pea_counters *cs, unsigned long cmd)
{
	size_t i;

	if (!cs)
		return pea_cerr(-EINVAL);
	for (i = 0; i < cs->cnt; i++)
		if (ioctl(cs->c[i].fd, cmd, 0) < 0)
			return pea_cerr(-errno);
	return 0;
}

int pea_counters__enable(struct pea_counters *cs)
{
	return counters_ioctl(cs, PERF_EVENT_IOC_ENABLE);
}

int pea_counters__disable(struct pea_counters *cs)
{
	return counters_ioctl(cs, PERF_EVENT_IOC_DISABLE);
}

int pea_counters__reset(struct pea_counters *cs)
{
	return counters_ioctl(cs, PERF_EVENT_IOC_RESET);
}

int pea_counters__store(struct pea_counters *cs, int map_fd)
{
	size_t i;
	int err;

	if (!cs)
		return pea_cerr(-EINVAL);
	for (i = 0; i < cs->cnt; i++) {
		err = pea_map_update(map_fd, cs->c[i].cpu, cs->c[i].fd);
		if (err)
			return err;
	}
	return 0;
}
