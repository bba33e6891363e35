// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libpea: per-CPU ring buffer consumer for pea maps, and /dev/pea helpers.
 *
 * The consumer follows libbpf's perf_buffer: one output event per online
 * CPU, each mmapped as a perf ring, stored in the map at key = CPU and
 * watched by one epoll instance. Reading a ring is pea_ring_read() (see
 * pea_ring_reader.c); on top of Linux, drops that never made it into a
 * ring as PERF_RECORD_LOST are collected through the control page's lost
 * hint and PEA_EVENT_IOC_TAKE_LOST.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/pea.h>

#include "libpea.h"
#include "libpea_internal.h"

#define PEA_ONLINE_CPUS_FILE	"/sys/devices/system/cpu/online"
/* Sanity bound on CPU numbers read from sysfs. */
#define PEA_CPU_LIMIT		(1 << 22)

/* Set errno from a negative error and return NULL, for constructors. */
static inline void *pea_err_ptr(int err)
{
	errno = -err;
	return NULL;
}

static inline bool pea_is_err_ptr(const void *p)
{
	return (uintptr_t)p >= (uintptr_t)-4095;
}

/* ------------------------------------------------------------------ */
/* /dev/pea helpers                                                    */
/* ------------------------------------------------------------------ */

int pea_open_dev(void)
{
	int fd = open(PEA_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	return fd < 0 ? pea_err(-errno) : fd;
}

int pea_map_create(const char *name, __u32 max_entries, __u32 map_flags)
{
	struct pea_map_attr attr;
	int devfd, fd, err;

	memset(&attr, 0, sizeof(attr));
	attr.key_size = sizeof(__u32);
	attr.value_size = sizeof(__u32);
	attr.max_entries = max_entries;
	attr.map_flags = map_flags;
	attr.open_flags = O_CLOEXEC;
	if (name) {
		size_t len = strlen(name);

		if (len >= sizeof(attr.name))
			return pea_err(-EINVAL);
		memcpy(attr.name, name, len);
	}

	devfd = pea_open_dev();
	if (devfd < 0)
		return devfd;
	fd = ioctl(devfd, PEA_IOC_MAP_CREATE, &attr);
	err = fd < 0 ? -errno : 0;
	close(devfd);
	return err ? pea_err(err) : fd;
}

int pea_map_get_info(int map_fd, struct pea_map_info *info)
{
	if (!info)
		return pea_err(-EINVAL);
	memset(info, 0, sizeof(*info));
	if (ioctl(map_fd, PEA_MAP_IOC_INFO, info) == 0)
		return 0;
	/* A module older than bpf_handle knows the old size only. */
	if (errno != ENOTTY ||
	    ioctl(map_fd, _IOC(_IOC_READ, PEA_IOC_MAGIC, 0x13,
			       PEA_MAP_INFO_SIZE_VER0), info) < 0)
		return pea_err(-errno);
	return 0;
}

static int pea_event_open_on(int devfd, int cpu,
			     const struct perf_event_attr *attr, __u32 flags,
			     __u32 flush_us)
{
	struct pea_event_open req;
	int fd;

	memset(&req, 0, sizeof(req));
	req.attr = (__u64)(uintptr_t)attr;
	req.cpu = cpu;
	req.flags = PEA_FLAG_FD_CLOEXEC | flags;
	if (flush_us) {
		req.flags |= PEA_FLAG_FLUSH;
		req.flush_us = flush_us;
	}
	fd = ioctl(devfd, PEA_IOC_EVENT_OPEN, &req);
	return fd < 0 ? -errno : fd;
}

int pea_event_open_output(int cpu, const struct perf_event_attr *attr)
{
	int devfd, fd;

	if (!attr)
		return pea_err(-EINVAL);
	devfd = pea_open_dev();
	if (devfd < 0)
		return devfd;
	fd = pea_event_open_on(devfd, cpu, attr, 0, 0);
	close(devfd);
	return pea_err(fd);
}

int pea_map_update(int map_fd, __u32 key, int event_fd)
{
	struct pea_map_elem elem;

	memset(&elem, 0, sizeof(elem));
	elem.key = key;
	elem.fd = event_fd;
	elem.flags = PEA_ANY;
	if (ioctl(map_fd, PEA_MAP_IOC_UPDATE, &elem) < 0)
		return pea_err(-errno);
	return 0;
}

int pea_map_delete(int map_fd, __u32 key)
{
	struct pea_map_elem elem;

	memset(&elem, 0, sizeof(elem));
	elem.key = key;
	if (ioctl(map_fd, PEA_MAP_IOC_DELETE, &elem) < 0)
		return pea_err(-errno);
	return 0;
}

/* ------------------------------------------------------------------ */
/* CPU list                                                            */
/* ------------------------------------------------------------------ */

static int parse_cpu_num(const char **p, unsigned long *val)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*val = strtoul(*p, &end, 10);
	if (errno || *val >= PEA_CPU_LIMIT)
		return -EINVAL;
	*p = end;
	return 0;
}

int pea_parse_cpu_list(const char *s, bool **mask, int *n)
{
	const char *p = s;
	bool *m = NULL;
	int cnt = 0;

	while (*p && *p != '\n') {
		unsigned long a, b, i;

		if (parse_cpu_num(&p, &a))
			goto einval;
		b = a;
		if (*p == '-') {
			p++;
			if (parse_cpu_num(&p, &b) || b < a)
				goto einval;
		}
		if (b >= (unsigned long)cnt) {
			bool *nm = realloc(m, (b + 1) * sizeof(*m));

			if (!nm) {
				free(m);
				return -ENOMEM;
			}
			memset(nm + cnt, 0, (b + 1 - cnt) * sizeof(*m));
			m = nm;
			cnt = b + 1;
		}
		for (i = a; i <= b; i++)
			m[i] = true;

		if (*p == ',') {
			p++;
			if (!isdigit((unsigned char)*p))
				goto einval;
		} else if (*p && *p != '\n') {
			goto einval;
		}
	}
	if (!cnt)
		goto einval;
	*mask = m;
	*n = cnt;
	return 0;
einval:
	free(m);
	return -EINVAL;
}

static int read_online_cpus(bool **mask, int *n)
{
	size_t len = 0, cap = 256;
	char *buf = NULL, *nbuf;
	ssize_t r;
	int fd, err;

	fd = open(PEA_ONLINE_CPUS_FILE, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (!buf || len + 1 >= cap) {
			cap = buf ? cap * 2 : cap;
			nbuf = realloc(buf, cap);
			if (!nbuf) {
				err = -ENOMEM;
				goto out;
			}
			buf = nbuf;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		if (!r)
			break;
		len += r;
	}
	buf[len] = '\0';
	err = pea_parse_cpu_list(buf, mask, n);
out:
	free(buf);
	close(fd);
	return err;
}

/* ------------------------------------------------------------------ */
/* pea_buffer                                                          */
/* ------------------------------------------------------------------ */

static bool opts_valid(const struct pea_buffer_opts *opts)
{
	const char *p;
	size_t i;

	if (!opts)
		return true;
	if (opts->sz < sizeof(opts->sz))
		return false;
	/* A newer caller's extra fields must be zero: we cannot honour them. */
	p = (const char *)opts;
	for (i = sizeof(*opts); i < opts->sz; i++)
		if (p[i])
			return false;
	return true;
}

#define OPTS_HAS(opts, field)						\
	((opts) && (opts)->sz >= offsetof(struct pea_buffer_opts, field) + \
				 sizeof((opts)->field))
#define OPTS_GET(opts, field, def)					\
	(OPTS_HAS(opts, field) ? (opts)->field : (def))

static int build_attr(const struct pea_buffer_opts *opts,
		      struct perf_event_attr *attr, __u64 *sample_type)
{
	__u64 flags = OPTS_GET(opts, flags, 0);
	int wakeup_events = OPTS_GET(opts, wakeup_events, 0);
	__u32 watermark = OPTS_GET(opts, wakeup_watermark, 0);
	__u64 st = OPTS_GET(opts, sample_type, 0);

	if ((flags & ~(PEA_BUFFER_FLAGS | (__u64)PEA_BUFFER_ADAPTIVE_WAKEUP)) ||
	    ((flags & PEA_BUFFER_FLAG_AUTO_CALLBACK) &&
	     (flags & PEA_BUFFER_FLAG_OVERWRITE)) ||
	    ((flags & PEA_BUFFER_ADAPTIVE_WAKEUP) &&
	     (flags & PEA_BUFFER_FLAG_OVERWRITE)) ||
	    ((flags & PEA_BUFFER_FLAG_ORDERED) &&
	     (flags & PEA_BUFFER_FLAG_AUTO_CALLBACK)))
		return -EINVAL;
	if (wakeup_events < 0 || (wakeup_events && watermark))
		return -EINVAL;
	if (st & ~(__u64)PEA_SAMPLE_TYPES)
		return -EINVAL;
	if (OPTS_GET(opts, flush_us, 0) > PEA_FLUSH_US_MAX ||
	    OPTS_GET(opts, busy_poll_us, 0) > PEA_BUSY_POLL_US_MAX ||
	    (OPTS_GET(opts, busy_poll_us, 0) &&
	     (flags & (PEA_BUFFER_FLAG_AUTO_CALLBACK |
		       PEA_BUFFER_FLAG_OVERWRITE))))
		return -EINVAL;
	st |= PERF_SAMPLE_RAW;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_BPF_OUTPUT;
	attr->sample_type = st;
	attr->sample_period = 1;
	if (watermark) {
		attr->watermark = 1;
		attr->wakeup_watermark = watermark;
	} else {
		attr->wakeup_events = wakeup_events ? wakeup_events : 1;
	}
	/* One clock for all CPUs, and the loss records placed in time. */
	if (flags & PEA_BUFFER_FLAG_ORDERED) {
		st |= PERF_SAMPLE_TIME;
		attr->sample_type = st;
		attr->use_clockid = 1;
		attr->clockid = CLOCK_MONOTONIC;
		attr->sample_id_all = 1;
	}
	/* A flight recorder: the newest records overwrite the oldest. */
	if (flags & PEA_BUFFER_FLAG_OVERWRITE)
		attr->write_backward = 1;
	*sample_type = st;
	return 0;
}

static void cpu_buf_release(struct pea_buffer *pb, struct pea_cpu_buf *buf)
{
	if (buf->in_map) {
		pea_map_delete(pb->map_fd, buf->map_key);
		buf->in_map = false;
	}
	if (buf->fd >= 0)
		ioctl(buf->fd, PERF_EVENT_IOC_DISABLE, 0);
	if (buf->base) {
		munmap(buf->base, pb->mmap_size);
		buf->base = NULL;
	}
	if (buf->fd >= 0) {
		close(buf->fd);
		buf->fd = -1;
	}
	pea_ring_release(&buf->ring);
	pea_snapshot_release(buf);
}

/*
 * Set up the ring of @cpu in the next free slot of pb->bufs. pb->cnt counts
 * the slot from the moment it holds anything, so that pea_buffer__free()
 * undoes a half-done setup.
 */
static int cpu_buf_open(struct pea_buffer *pb, int devfd, int cpu,
			const struct perf_event_attr *attr, __u64 sample_type)
{
	size_t idx = pb->cnt;
	struct pea_cpu_buf *buf = &pb->bufs[idx];
	struct epoll_event ev;
	void *base;
	int fd, err, prot;

	memset(buf, 0, sizeof(*buf));
	buf->fd = -1;
	buf->cpu = cpu;
	buf->map_key = cpu;
	pb->cnt++;

	fd = pea_event_open_on(devfd, cpu, attr, pb->open_flags,
			       pb->flush_us);
	if (fd < 0)
		return fd;
	buf->fd = fd;

	/* Read-only: overwrite mode, the writer ignores data_tail. */
	prot = PROT_READ;
	if (!(pb->flags & PEA_BUFFER_FLAG_OVERWRITE))
		prot |= PROT_WRITE;
	base = mmap(NULL, pb->mmap_size, prot, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	buf->base = base;
	buf->ring.page = base;
	buf->ring.data = (char *)base + pb->page_size;
	buf->ring.data_size = pb->data_size;
	buf->ring.cpu = cpu;
	buf->ring.sample_type = sample_type;
	buf->ring.recheck = pb->open_flags & PEA_FLAG_ADAPTIVE_WAKEUP;

	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
		return -errno;

	err = pea_map_update(pb->map_fd, buf->map_key, fd);
	if (err)
		return err;
	buf->in_map = true;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = idx;
	if (epoll_ctl(pb->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	return 0;
}

struct pea_buffer *pea_buffer__new(int map_fd, size_t page_cnt,
				   pea_buffer_sample_fn sample_cb,
				   pea_buffer_lost_fn lost_cb, void *ctx,
				   const struct pea_buffer_opts *opts)
{
	struct perf_event_attr attr;
	struct pea_map_info info;
	struct pea_buffer *pb = NULL;
	bool *online = NULL;
	int n_online = 0, devfd = -1, err, cpu, limit;
	__u64 sample_type;
	size_t nbufs = 0;
	long page_size;

	if (!opts_valid(opts))
		return pea_err_ptr(-EINVAL);
	if (!page_cnt || (page_cnt & (page_cnt - 1)))
		return pea_err_ptr(-EINVAL);
	err = build_attr(opts, &attr, &sample_type);
	if (err)
		return pea_err_ptr(err);

	page_size = sysconf(_SC_PAGESIZE);
	if (page_size <= 0)
		return pea_err_ptr(-EINVAL);
	if (page_cnt > (SIZE_MAX / (size_t)page_size) - 1)
		return pea_err_ptr(-EINVAL);

	err = pea_map_get_info(map_fd, &info);
	if (err)
		return pea_err_ptr(err);

	err = read_online_cpus(&online, &n_online);
	if (err)
		return pea_err_ptr(err);
	limit = n_online;
	if (info.max_entries < (__u32)limit)
		limit = info.max_entries;
	for (cpu = 0; cpu < limit; cpu++)
		if (online[cpu])
			nbufs++;

	pb = calloc(1, sizeof(*pb));
	if (!pb) {
		err = -ENOMEM;
		goto err_out;
	}
	pb->sample_cb = sample_cb;
	pb->lost_cb = lost_cb;
	pb->ctx = ctx;
	pb->flags = OPTS_GET(opts, flags, 0);
	pb->stop_fd = -1;
	pb->page_size = page_size;
	pb->data_size = page_cnt * page_size;
	pb->mmap_size = pb->data_size + page_size;
	pb->map_fd = map_fd;
	pb->epoll_fd = -1;
	pb->open_flags = OPTS_GET(opts, flags, 0) & PEA_BUFFER_ADAPTIVE_WAKEUP;
	/*
	 * A snapshot pauses the rings and waits for the writers, so a flight
	 * recorder needs only the times, not the writers in flight.
	 */
	if ((pb->flags & PEA_BUFFER_FLAG_ORDERED) &&
	    !(pb->flags & PEA_BUFFER_FLAG_OVERWRITE))
		pb->open_flags |= PEA_FLAG_ORDERED;
	pb->flush_us = OPTS_GET(opts, flush_us, 0);
	pb->busy_poll_ns = (__u64)OPTS_GET(opts, busy_poll_us, 0) * 1000;

	/*
	 * At least one slot each, so that epoll_wait() gets maxevents > 0,
	 * and one more for the stop eventfd of the AUTO_CALLBACK thread.
	 */
	pb->events_cnt = nbufs ? (int)nbufs : 1;
	if (pb->flags & PEA_BUFFER_FLAG_AUTO_CALLBACK)
		pb->events_cnt++;
	pb->bufs = calloc(pb->events_cnt, sizeof(*pb->bufs));
	pb->events = calloc(pb->events_cnt, sizeof(*pb->events));
	pb->o_heap = calloc(pb->events_cnt, sizeof(*pb->o_heap));
	if (!pb->bufs || !pb->events || !pb->o_heap) {
		err = -ENOMEM;
		goto err_out;
	}

	pb->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (pb->epoll_fd < 0) {
		err = -errno;
		goto err_out;
	}

	devfd = pea_open_dev();
	if (devfd < 0) {
		err = devfd;
		goto err_out;
	}

	for (cpu = 0; cpu < limit; cpu++) {
		if (!online[cpu])
			continue;
		err = cpu_buf_open(pb, devfd, cpu, &attr, sample_type);
		if (err)
			goto err_out;
	}

	if (pb->flags & PEA_BUFFER_FLAG_AUTO_CALLBACK) {
		err = pea_auto_start(pb);
		if (err)
			goto err_out;
	}

	close(devfd);
	free(online);
	return pb;

err_out:
	if (devfd >= 0)
		close(devfd);
	free(online);
	pea_buffer__free(pb);
	return pea_err_ptr(err);
}

void pea_buffer__free(struct pea_buffer *pb)
{
	size_t i;

	if (!pb || pea_is_err_ptr(pb))
		return;
	pea_auto_stop(pb);
	for (i = 0; i < pb->cnt; i++)
		cpu_buf_release(pb, &pb->bufs[i]);
	if (pb->epoll_fd >= 0)
		close(pb->epoll_fd);
	free(pb->bufs);
	free(pb->events);
	free(pb->o_heap);
	free(pb);
}

static int take_lost(void *arg, __u64 *cnt)
{
	struct pea_cpu_buf *buf = arg;

	if (ioctl(buf->fd, PEA_EVENT_IOC_TAKE_LOST, cnt) < 0)
		return -errno;
	return 0;
}

int pea_cpu_buf_check_lost(struct pea_buffer *pb, struct pea_cpu_buf *buf)
{
	struct pea_ring_cbs cbs = {
		.sample_cb = pb->sample_cb,
		.lost_cb = pb->lost_cb,
		.ctx = pb->ctx,
	};

	return pea_ring_check_lost(&buf->ring, &cbs, take_lost, buf);
}

int pea_cpu_buf_consume(struct pea_buffer *pb, struct pea_cpu_buf *buf)
{
	struct pea_ring_cbs cbs = {
		.sample_cb = pb->sample_cb,
		.lost_cb = pb->lost_cb,
		.ctx = pb->ctx,
	};
	int err;

	err = pea_ring_read(&buf->ring, &cbs);
	if (err)
		return err;
	/*
	 * Drops the kernel could not report in the ring (it stayed full up
	 * to now) are only visible through the hint: check after draining.
	 */
	return pea_cpu_buf_check_lost(pb, buf);
}

/*
 * Whether the caller may read the rings itself: not in AUTO_CALLBACK mode
 * (the thread owns them), not in OVERWRITE mode (only snapshots read).
 */
static bool pb_consumable(const struct pea_buffer *pb)
{
	return pb && !(pb->flags & (PEA_BUFFER_FLAG_AUTO_CALLBACK |
				    PEA_BUFFER_FLAG_OVERWRITE));
}

static __u64 pb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static inline void pb_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * Busy polling: look at every ring's data_head (and lost hint) for up to
 * pb->busy_poll_ns, and consume the rings that have something. No system
 * call, and while this runs no poll() takes the rings' EPOLLIN, so the
 * writers raise no further wake-up interrupt (see pea_event_wakeup()).
 * Returns the number of rings consumed, 0 when none had anything in time.
 */
static int pb_busy_poll(struct pea_buffer *pb)
{
	__u64 deadline = 0, now;
	size_t i;
	int cnt, err;

	for (;;) {
		cnt = 0;
		for (i = 0; i < pb->cnt; i++) {
			if (!pea_ring_ready(&pb->bufs[i].ring))
				continue;
			if (pb->flags & PEA_BUFFER_FLAG_ORDERED) {
				cnt = pea_ordered_consume(pb);
				if (cnt)
					return cnt;
				break;
			}
			err = pea_cpu_buf_consume(pb, &pb->bufs[i]);
			if (err)
				return err;
			cnt++;
		}
		if (cnt)
			return cnt;
		now = pb_now_ns();
		if (!deadline)
			deadline = now + pb->busy_poll_ns;
		else if (now >= deadline)
			return 0;
		pb_cpu_relax();
	}
}

int pea_buffer__poll(struct pea_buffer *pb, int timeout_ms)
{
	int i, cnt, err;

	if (!pb_consumable(pb))
		return pea_err(-EINVAL);
	if (pb->busy_poll_ns) {
		cnt = pb_busy_poll(pb);
		if (cnt)
			return pea_err(cnt);
	}
	/* ORDERED: records held back for a writer in flight need a look soon. */
	if (pb->o_held && (timeout_ms < 0 || timeout_ms > 1))
		timeout_ms = 1;
	cnt = epoll_wait(pb->epoll_fd, pb->events, pb->events_cnt,
			 timeout_ms);
	if (cnt < 0)
		return pea_err(-errno);
	if (pb->flags & PEA_BUFFER_FLAG_ORDERED)
		return (cnt || pb->o_held) ? pea_err(pea_ordered_consume(pb)) : 0;

	for (i = 0; i < cnt; i++) {
		__u64 idx = pb->events[i].data.u64;

		if (idx >= pb->cnt)
			continue;
		err = pea_cpu_buf_consume(pb, &pb->bufs[idx]);
		if (err)
			return pea_err(err);
	}
	return cnt;
}

int pea_buffer__consume(struct pea_buffer *pb)
{
	size_t i;
	int err;

	if (!pb_consumable(pb))
		return pea_err(-EINVAL);
	if (pb->flags & PEA_BUFFER_FLAG_ORDERED) {
		err = pea_ordered_consume(pb);
		return pea_err(err < 0 ? err : 0);
	}
	for (i = 0; i < pb->cnt; i++) {
		err = pea_cpu_buf_consume(pb, &pb->bufs[i]);
		if (err)
			return pea_err(err);
	}
	return 0;
}

int pea_buffer__consume_buffer(struct pea_buffer *pb, size_t buf_idx)
{
	if (!pb_consumable(pb) || buf_idx >= pb->cnt ||
	    (pb->flags & PEA_BUFFER_FLAG_ORDERED))
		return pea_err(-EINVAL);
	return pea_err(pea_cpu_buf_consume(pb, &pb->bufs[buf_idx]));
}

size_t pea_buffer__buffer_cnt(const struct pea_buffer *pb)
{
	return pb ? pb->cnt : 0;
}

int pea_buffer__buffer_fd(const struct pea_buffer *pb, size_t buf_idx)
{
	if (!pb || buf_idx >= pb->cnt)
		return pea_err(-EINVAL);
	return pb->bufs[buf_idx].fd;
}

int pea_buffer__epoll_fd(const struct pea_buffer *pb)
{
	if (!pb)
		return pea_err(-EINVAL);
	return pb->epoll_fd;
}

int pea_buffer__buffer(struct pea_buffer *pb, int buf_idx, void **buf,
		       size_t *buf_size)
{
	if (!pb || buf_idx < 0 || (size_t)buf_idx >= pb->cnt)
		return pea_err(-EINVAL);
	if (buf)
		*buf = pb->bufs[buf_idx].base;
	if (buf_size)
		*buf_size = pb->data_size;
	return 0;
}

int pea_buffer__buffer_cpu(const struct pea_buffer *pb, size_t buf_idx)
{
	if (!pb || buf_idx >= pb->cnt)
		return pea_err(-EINVAL);
	return pb->bufs[buf_idx].cpu;
}

int pea_buffer__lost(const struct pea_buffer *pb, size_t buf_idx,
		     __u64 *lost)
{
	if (!pb || !lost || buf_idx >= pb->cnt)
		return pea_err(-EINVAL);
	/* The AUTO_CALLBACK thread may be adding to it. */
	*lost = __atomic_load_n(&pb->bufs[buf_idx].ring.lost,
				__ATOMIC_RELAXED);
	return 0;
}

int pea_sample_info(const void *data, __u64 sample_type,
		    struct pea_sample_info *info)
{
	const char *p;

	if (!data || !info || (sample_type & ~(__u64)PEA_SAMPLE_TYPES))
		return pea_err(-EINVAL);
	sample_type |= PERF_SAMPLE_RAW;
	memset(info, 0, sizeof(*info));

	/* Walk back from the payload over the raw size, then the fields. */
	p = (const char *)data - PEA_RAW_SIZE_LEN;
	if (sample_type & PERF_SAMPLE_CPU) {
		p -= sizeof(__u32) * 2;
		memcpy(&info->cpu, p, sizeof(info->cpu));
	}
	if (sample_type & PERF_SAMPLE_TIME) {
		p -= sizeof(__u64);
		memcpy(&info->time, p, sizeof(info->time));
	}
	if (sample_type & PERF_SAMPLE_TID) {
		p -= sizeof(__u32) * 2;
		memcpy(&info->pid, p, sizeof(info->pid));
		memcpy(&info->tid, p + sizeof(__u32), sizeof(info->tid));
	}
	return 0;
}
