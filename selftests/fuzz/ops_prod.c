// SPDX-License-Identifier: GPL-2.0
/*
 * test_fuzz: producers and their consumers' side channels. Kprobe and
 * kretprobe attach and detach at random offsets into a few symbols that
 * are safe to probe, with random capture specs and filters; closing a
 * link fd while the attach that returns it is still running; counters
 * with random attrs (software events and the test PMU pea_st); the test
 * module's all-context storm started and stopped on random maps, its
 * on-demand and nested output; reads of /sys/kernel/debug/pea/.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/perf_event.h>
#include <linux/pea.h>
#include "../module/pea_selftest.h"
#include "fuzz.h"

/*
 * Functions that are safe to probe: ordinary system-call paths, none of
 * which the kprobe, ftrace, NMI or printk machinery calls itself (a
 * probe there can legitimately hang a kernel). Random offsets land
 * inside them; a kprobe refuses those that are not at an instruction.
 */
static const char *const fz_symbols[] = {
	"do_sys_openat2", "ksys_read", "ksys_write", "ksys_mmap_pgoff",
	"__x64_sys_getpid", "__x64_sys_getppid", "__x64_sys_sched_yield",
	"vfs_read", "vfs_write", "do_sys_poll", "__x64_sys_ioctl",
	"__x64_sys_close", "__x64_sys_madvise", "do_epoll_wait",
};

#define FZ_NR_SYMBOLS ARRAY_SIZE(fz_symbols)

static pthread_mutex_t fz_storm_lock = PTHREAD_MUTEX_INITIALIZER;
static bool fz_storm_on;
static int fz_fz0 = -1;		/* fz0 lives the whole run, whatever is closed */
static char fz_scratch[1 << 16];	/* data for on-demand output */

static struct pea_probe_attr fz_probe_attr(struct fz_rng *r, const char **invalid)
{
	struct pea_probe_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	strcpy(a.symbol, fz_symbols[fz_below(r, FZ_NR_SYMBOLS)]);
	a.filter_cpu = -1;
	a.flags = PEA_PROBE_F_CLOEXEC;
	*invalid = NULL;
	if (fz_chance(r, 3)) {
		a.flags |= PEA_PROBE_F_RETPROBE;
		a.maxactive = fz_chance(r, 2) ? 0 : (__u32)fz_below(r, 65);
	} else if (fz_chance(r, 3)) {
		a.offset = fz_below(r, 96);
	}
	if (fz_chance(r, 4))
		a.id = fz_u64(r);
	if (fz_chance(r, 4))
		a.filter_tgid = fz_chance(r, 2) ? getpid() : (__s32)fz_below(r, 100);
	if (a.filter_tgid && fz_chance(r, 3))	/* the process's tree */
		a.flags |= PEA_PROBE_F_DESCENDANTS |
			   (fz_chance(r, 2) ? PEA_PROBE_F_DESC_ONLY : 0);
	if (fz_chance(r, 4))
		a.filter_cpu = (int)fz_below(r, fz_ncpu + 1) - 1;
	if (fz_chance(r, 3)) {
		a.capture_mode = 1 + (__u32)fz_below(r, 2);
		a.capture_arg = (__u32)fz_below(r, 6);
		a.capture_len = 1 + (__u32)fz_below(r, PEA_CAPTURE_MAX);
		a.capture_flags = (__u32)fz_below(r, 2);
	}
	if (fz_chance(r, 3))
		a.kstack_depth = 1 + (__u32)fz_below(r, PEA_KSTACK_MAX);
	switch (fz_below(r, 16)) {
	case 0:
		a.flags |= fz_unknown_flag(r, 3, PEA_PROBE_FLAGS);
		*invalid = "unknown flag";
		break;
	case 1:
		a.capture_mode = 3 + (__u32)fz_below(r, 100);
		a.capture_len = 8;
		*invalid = "capture_mode";
		break;
	case 2:
		a.capture_mode = PEA_CAPTURE_STR;
		a.capture_len = fz_chance(r, 2) ? 0 : PEA_CAPTURE_MAX + 1 +
			(fz_u32(r) & 0xffff);
		*invalid = "capture_len";
		break;
	case 3:
		a.capture_mode = PEA_CAPTURE_FIXED;
		a.capture_len = 8;
		a.capture_arg = 6 + (__u32)fz_below(r, 100);
		*invalid = "capture_arg";
		break;
	case 4:
		a.filter_cpu = -2 - (int)fz_below(r, 100);
		*invalid = "filter_cpu";
		break;
	case 5:
		a.filter_tgid = -1 - (int)fz_below(r, 100);
		*invalid = "filter_tgid";
		break;
	case 6:
		a.flags |= PEA_PROBE_F_RETPROBE;
		a.offset = 1 + fz_below(r, 64);
		*invalid = "kretprobe offset";
		break;
	case 7:
		a.size = (__u32)fz_below(r, PEA_PROBE_ATTR_SIZE_VER0);
		*invalid = "short size";
		break;
	case 8:
		fz_fill(r, a.symbol, sizeof(a.symbol));
		break;	/* ENOENT or EINVAL, not asserted */
	case 9:
		a.counter_map = fz_fd_peek(r, FZ_MAP);
		if (fz_chance(r, 2))
			a.flags |= PEA_PROBE_F_COUNTERS;
		else
			*invalid = a.counter_map ?
				"counter_map without the flag" : NULL;
		break;
	case 10:
		/* Known defect (3): an offset past 4 GiB was truncated. */
		if (!fz_opts.avoid_known && !(a.flags & PEA_PROBE_F_RETPROBE)) {
			a.offset = (1ULL << 32) + (fz_chance(r, 2) ? 0 :
						   fz_below(r, 1ULL << 40));
			*invalid = "offset past 4 GiB";
		}
		break;
	case 11:
		a.kstack_depth = PEA_KSTACK_MAX + 1 + fz_u32(r) % 1000000;
		*invalid = "kstack_depth past PEA_KSTACK_MAX";
		break;
	case 12:
		/* Was @reserved (a value from 1 was EINVAL): now a depth. */
		a.ustack_depth = PEA_USTACK_MAX + 1 + fz_u32(r) % 1000000;
		*invalid = "ustack_depth past PEA_USTACK_MAX";
		break;
	case 13:
		/* The first version: what follows is not read. */
		a.size = PEA_PROBE_ATTR_SIZE_VER0 +
			 (__u32)fz_below(r, sizeof(a) - PEA_PROBE_ATTR_SIZE_VER0);
		break;
	}
	return a;
}

static int fz_attach(int map_fd, struct pea_probe_attr *a)
{
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, a);

	return fd;
}

static int op_attach(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	const char *invalid;
	struct pea_probe_attr a = fz_probe_attr(r, &invalid);
	int s = fz_fd_lock(r, FZ_MAP), fd, err, free_slot;

	if (s < 0)
		return -ENOENT;
	if (fz_count_kind(FZ_LINK) >= 16) {
		fz_fd_unlock(s);
		return -EMLINK;
	}
	fd = fz_attach(fz_fds[s].fd, &a);
	err = fd < 0 ? errno : 0;
	fz_fd_unlock(s);
	if (invalid) {
		if (fd >= 0)
			close(fd);
		return fz_expect_fail("attach", invalid, err);
	}
	if (fd < 0)
		return err;
	free_slot = fz_fd_lock_free(r);
	if (free_slot < 0) {
		close(fd);
		return 0;
	}
	fz_fds[free_slot].fd = fd;
	fz_fds[free_slot].kind = FZ_LINK;
	fz_fd_unlock(free_slot);
	/* Make it fire now and then. */
	if (fz_chance(r, 2))
		close(open("/dev/null", O_RDONLY));
	return 0;
}

/* Known defect (2): maxactive was unbounded (the fix: past 4096 EINVAL). */
static int op_maxactive(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	struct pea_probe_attr a;
	int s = fz_fd_lock(r, FZ_MAP), fd, err;

	if (s < 0)
		return -ENOENT;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_PROBE_F_RETPROBE | PEA_PROBE_F_CLOEXEC;
	a.filter_cpu = -1;
	strcpy(a.symbol, fz_symbols[fz_below(r, FZ_NR_SYMBOLS)]);
	a.maxactive = 4097 + (__u32)fz_below(r, 0x7fffffff - 4097);
	if (fz_chance(r, 2))
		a.maxactive = fz_chance(r, 2) ? 0x7fffffff : 0xffffffff;
	fd = fz_attach(fz_fds[s].fd, &a);
	err = fd < 0 ? errno : 0;
	fz_fd_unlock(s);
	if (fd >= 0)
		close(fd);
	return fz_expect("attach", "maxactive past 4096", err, EINVAL);
}

/*
 * Known defect (1): close the fd number PEA_MAP_IOC_ATTACH_PROBE is about
 * to return while it runs. Everything else is held still meanwhile, so
 * that number can only be the new link.
 */
struct fz_closer {
	int fd;
	int done;	/* __atomic */
};

static void *fz_closer_fn(void *arg)
{
	struct fz_closer *c = arg;

	while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
		close(c->fd);
	return NULL;
}

static int op_attach_close_race(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	struct fz_closer c = { .done = 0 };
	struct pea_probe_attr a;
	pthread_t tid;
	int s, fd, err;

	pthread_rwlock_unlock(&fz_world);
	pthread_rwlock_wrlock(&fz_world);
	s = fz_fd_lock(r, FZ_MAP);
	if (s < 0)
		return -ENOENT;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.filter_cpu = -1;
	a.flags = fz_chance(r, 2) ? PEA_PROBE_F_RETPROBE : 0;
	strcpy(a.symbol, fz_symbols[fz_below(r, FZ_NR_SYMBOLS)]);
	c.fd = dup(0);
	if (c.fd < 0) {
		fz_fd_unlock(s);
		return errno;
	}
	close(c.fd);
	if (pthread_create(&tid, NULL, fz_closer_fn, &c)) {
		fz_fd_unlock(s);
		return -EAGAIN;
	}
	fd = fz_attach(fz_fds[s].fd, &a);
	err = fd < 0 ? errno : 0;
	__atomic_store_n(&c.done, 1, __ATOMIC_RELEASE);
	pthread_join(tid, NULL);
	if (fd >= 0)
		close(fd);	/* EBADF if the closer got it */
	fz_fd_unlock(s);
	return err;
}

static int fz_pmu_attr(struct fz_rng *r, struct perf_event_attr *a,
		       const char **invalid)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->read_format = fz_below(r, 32) & PEA_COUNTER_READ_FORMAT;
	*invalid = NULL;
	switch (fz_below(r, 8)) {
	case 0:
	case 1:
	case 2:
		a->type = PERF_TYPE_SOFTWARE;
		a->config = fz_below(r, PERF_COUNT_SW_MAX + 2);
		if (a->config == PERF_COUNT_SW_BPF_OUTPUT)
			a->config = PERF_COUNT_SW_DUMMY;
		break;
	case 3:
	case 4:
		if (fz_pmu_type > 0) {
			a->type = (__u32)fz_pmu_type;
			a->config = fz_chance(r, 4) ? fz_u64(r) : fz_below(r, 2);
			break;
		}
		fallthrough;
	case 5:
		a->type = (__u32)fz_below(r, 64);
		if (a->type == PERF_TYPE_BREAKPOINT)
			a->type = PERF_TYPE_RAW;	/* no breakpoints anywhere */
		a->config = fz_u64(r);
		break;
	default:
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_CPU_CLOCK + fz_below(r, 2);
		break;
	}
	a->disabled = fz_chance(r, 4);
	a->pinned = fz_chance(r, 6);
	a->exclusive = fz_chance(r, 8);
	a->inherit = fz_chance(r, 8);
	a->exclude_user = fz_chance(r, 4);
	a->exclude_kernel = fz_chance(r, 4);
	a->exclude_idle = fz_chance(r, 6);
	switch (fz_below(r, 10)) {
	case 0:
		a->sample_period = 1 + fz_below(r, 100000);
		*invalid = "sample_period";
		break;
	case 1:
		a->sample_type = 1ULL << fz_below(r, 24);
		*invalid = "sample_type";
		break;
	case 2:
		a->read_format |= 1ULL << (5 + fz_below(r, 59));
		*invalid = "read_format";
		break;
	case 3:
		/* Sampling and side-band bits: mmap, comm, freq, task... */
		((__u64 *)a)[5] |= 1ULL << (8 + fz_below(r, 11));
		*invalid = "a sampling or side-band bit";
		break;
	}
	return 0;
}

static int op_counter_open(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	struct perf_event_attr a;
	const char *invalid;
	struct pea_event_open o = { .attr = (uintptr_t)&a,
				    .flags = PEA_FLAG_FD_CLOEXEC };
	int fd, err, s;

	fz_pmu_attr(r, &a, &invalid);
	o.cpu = (int)fz_below(r, fz_ncpu);
	if (fz_chance(r, 10)) {
		o.flags |= PEA_FLAG_FLUSH;	/* output events only */
		o.flush_us = 100;
		invalid = "PEA_FLAG_FLUSH on a counter";
	}
	fd = ioctl(fz_dev, PEA_IOC_EVENT_OPEN, &o);
	err = fd < 0 ? errno : 0;
	if (invalid) {
		if (fd >= 0)
			close(fd);
		return fz_expect_fail("counter_open", invalid, err);
	}
	if (fd < 0)
		return err;
	s = fz_fd_lock_free(r);
	if (s < 0) {
		close(fd);
		return 0;
	}
	fz_fds[s].fd = fd;
	fz_fds[s].kind = FZ_COUNTER;
	fz_fds[s].cpu = o.cpu;
	fz_fds[s].pages = 0;
	fz_fd_unlock(s);
	return 0;
}

/* Every record attempted is counted once: ok, dropped or failed. */
static void fz_storm_check(const struct pea_st_result *res)
{
	__u32 cpu, src;

	for (cpu = 0; cpu < res->nr_cpus && cpu < PEA_ST_MAX_CPUS; cpu++)
		for (src = 0; src < PEA_ST_NR_SOURCES; src++) {
			const struct pea_st_counts *c = &res->c[cpu][src];

			if (c->ok + c->nospc + c->other != c->attempts)
				fz_violation("storm",
					     "cpu %u source %u: %llu ok + %llu nospc + %llu other != %llu",
					     cpu, src,
					     (unsigned long long)c->ok,
					     (unsigned long long)c->nospc,
					     (unsigned long long)c->other,
					     (unsigned long long)c->attempts);
			__atomic_add_fetch(&fz_soak_records, c->ok,
					   __ATOMIC_RELAXED);
		}
}

static int fz_storm_start_on(struct fz_rng *r, int name)
{
	struct pea_st_storm cfg = {
		.sources = (__u32)(fz_chance(r, 2) ? 0xf : 1 + fz_below(r, 15)),
		.hrtimer_us = 100 + (__u32)fz_below(r, 900),
		.task_burst = 1 + (__u32)fz_below(r, 64),
		.task_sleep_us = 100 + (__u32)fz_below(r, 1000),
		.nmi_every = 1 + (__u32)fz_below(r, 4),
	};

	strcpy(cfg.map, fz_names[name]);
	return fz_ioctl(fz_st, PEA_ST_IOC_STORM_START, &cfg);
}

static int fz_storm_stop_locked(void)
{
	static struct pea_st_result res;
	int err;

	memset(&res, 0, sizeof(res));
	err = fz_ioctl(fz_st, PEA_ST_IOC_STORM_STOP, &res);
	if (!err)
		fz_storm_check(&res);
	fz_storm_on = false;
	return err;
}

/* The storm needs a named map: make fz0 with one event per CPU. */
int fz_prod_start(void)
{
	struct fz_rng r = { fz_opts.seed ^ 0x5eed };
	int fd, err, cpu, ev;
	__u32 map_flags;

	err = fz_new_map(&r, 0, (__u32)fz_ncpu, &fd, &map_flags);
	if (err)
		return err;
	for (cpu = 0; cpu < fz_ncpu; cpu++) {
		struct pea_map_elem e = { .key = (__u32)cpu };

		err = fz_new_output(&r, cpu, &ev);
		if (err)
			return err;
		e.fd = ev;
		if (fz_ioctl(fd, PEA_MAP_IOC_UPDATE, &e))
			return errno;
		fz_fds[cpu + 1].fd = ev;
		fz_fds[cpu + 1].kind = FZ_OUTPUT;
		fz_fds[cpu + 1].cpu = cpu;
		/* Mapped, so that the storm's records land somewhere. */
		if (cpu < FZ_NR_MAPS) {
			size_t len = (size_t)(1 + 16) * fz_page;
			void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_SHARED, ev, 0);

			if (p == MAP_FAILED)
				return errno;
			fz_maps[cpu].addr = p;
			fz_maps[cpu].len = len;
			fz_maps[cpu].prot = PROT_READ | PROT_WRITE;
			fz_maps[cpu].fd_slot = cpu + 1;
			fz_maps[cpu].pages = 16;
			fz_fds[cpu + 1].pages = 16;
		}
	}
	fz_fds[0].fd = fd;
	fz_fds[0].kind = FZ_MAP;
	fz_fds[0].map_flags = map_flags;	/* the errnos the ops expect */
	fz_fds[0].name = 0;
	fz_fz0 = fcntl(fd, F_DUPFD_CLOEXEC, 902);
	err = fz_storm_start_on(&r, 0);
	fz_storm_on = !err;
	return err;
}

/* fz0's fd, open for the whole run (-1 before fz_prod_start()). */
int fz_prod_fz0(void)
{
	return fz_fz0;
}

void fz_prod_stop(void)
{
	pthread_mutex_lock(&fz_storm_lock);
	if (fz_storm_on)
		fz_storm_stop_locked();
	pthread_mutex_unlock(&fz_storm_lock);
	fz_ioctl(fz_st, PEA_ST_IOC_RELEASE, NULL);
	if (fz_fz0 >= 0)
		close(fz_fz0);
	fz_fz0 = -1;
}

static int op_storm(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	int err;

	if (pthread_mutex_trylock(&fz_storm_lock))
		return -EBUSY;
	if (fz_storm_on) {
		err = fz_storm_stop_locked();
	} else {
		err = fz_storm_start_on(r, (int)fz_below(r, FZ_NR_NAMES));
		fz_storm_on = !err;
	}
	pthread_mutex_unlock(&fz_storm_lock);
	return err;
}

static int op_output(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	struct pea_st_output o;
	int err;

	memset(&o, 0, sizeof(o));
	/* fz0 exists from the start: most records go there. */
	strcpy(o.map, fz_names[fz_chance(r, 2) ? 0 : fz_below(r, FZ_NR_NAMES)]);
	switch (fz_below(r, 4)) {
	case 0:
		o.flags = fz_u64(r);
		break;
	case 1:
		o.flags = fz_below(r, fz_ncpu + 2);
		break;
	default:
		o.flags = PEA_F_CURRENT_CPU;
		break;
	}
	if (fz_chance(r, 8))
		o.flags |= (fz_below(r, 1 << 20)) << 32;	/* ctxlen: ignored */
	o.size = fz_chance(r, 8) ? fz_u64(r) : fz_below(r, fz_chance(r, 4) ?
							sizeof(fz_scratch) : 512);
	if (o.size > sizeof(fz_scratch) && o.size <= (1U << 20))
		o.size = sizeof(fz_scratch);
	o.data = (uintptr_t)fz_scratch;
	o.count = 1 + (__u32)fz_below(r, 64);
	if (fz_chance(r, 2))
		fz_drain_all(t);
	err = fz_ioctl(fz_st, PEA_ST_IOC_OUTPUT, &o);
	if (!err && o.size > (1U << 20) && o.n_ok)
		fz_violation("output", "a %llu-byte record was accepted",
			     (unsigned long long)o.size);
	if (!err && o.ret)
		return (int)-o.ret;
	return err;
}

static int op_nest(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	struct pea_st_nest n;

	memset(&n, 0, sizeof(n));
	strcpy(n.map, fz_names[fz_below(r, FZ_NR_NAMES)]);
	n.size = (__u32)fz_below(r, 4096);
	return fz_ioctl(fz_st, PEA_ST_IOC_NEST, &n);
}

static int op_hold(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	struct pea_st_hold h;

	memset(&h, 0, sizeof(h));
	if (fz_chance(r, 2))
		return fz_ioctl(fz_st, PEA_ST_IOC_RELEASE, NULL);
	strcpy(h.map, fz_names[fz_below(r, FZ_NR_NAMES)]);
	return fz_ioctl(fz_st, PEA_ST_IOC_HOLD, &h);
}

int fz_debugfs_objects(long v[4])
{
	char buf[256], *p;
	int fd = open("/sys/kernel/debug/pea/objects", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	/* A "#" line names the columns: maps events rings links. */
	p = buf[0] == '#' ? strchr(buf, '\n') : buf;
	if (!p)
		return -EIO;
	return sscanf(p, "%ld %ld %ld %ld", &v[0], &v[1], &v[2], &v[3]) == 4 ?
		0 : -EIO;
}

static int op_debugfs(struct fz_thread *t)
{
	static const char *const files[] = { "maps", "links", "objects" };
	struct fz_rng *r = &t->rng;
	char path[64], buf[512];
	int fd, err = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/kernel/debug/pea/%s",
		 files[fz_below(r, 3)]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (fz_chance(r, 4))
		lseek(fd, (off_t)fz_below(r, 4096), SEEK_SET);
	do {
		n = read(fd, buf, 1 + fz_below(r, sizeof(buf)));
	} while (n > 0);
	if (n < 0)
		err = errno;
	close(fd);
	return err;
}

const struct fz_op fz_ops_prod[] = {
	{ "attach", op_attach, 4, false },
	{ "attach_maxactive", op_maxactive, 1, true },
	{ "attach_close_race", op_attach_close_race, 1, true },
	{ "counter_open", op_counter_open, 5, false },
	{ "storm", op_storm, 1, false },
	{ "output", op_output, 8, false },
	{ "nest", op_nest, 2, false },
	{ "hold", op_hold, 1, false },
	{ "debugfs", op_debugfs, 3, false },
	{ NULL, NULL, 0, false },
};
