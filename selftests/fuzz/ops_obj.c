// SPDX-License-Identifier: GPL-2.0
/*
 * test_fuzz: creating maps and events, every ioctl on every fd kind
 * (/dev/pea, map, output event, counter, link, a link's aggregation
 * table) with random and boundary
 * arguments, wrong and closed fds, and close. Where Linux defines the
 * answer (a bad pointer is EFAULT, an unknown command ENOTTY, an unknown
 * flag or a reserved field EINVAL) the result is checked.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/perf_event.h>
#include <linux/pea.h>
#include "fuzz.h"
#include "../pt_fprobe.h"

/* The attach commands as binaries built before kstack_depth encode them. */
#define FZ_ATTACH_PROBE_VER0 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x14, PEA_PROBE_ATTR_SIZE_VER0)
#define FZ_ATTACH_TP_VER0 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x15, PEA_TP_ATTR_SIZE_VER0)

const char *const fz_names[FZ_NR_NAMES] = { "fz0", "fz1", "fz2", "fz3" };

/* A valid map attr, maybe named fz_names[name]. */
/* Whether the kernel has netfilter (PEA_MAP_IOC_ATTACH_NF works). */
int fz_have_netfilter(void)
{
	static int have = -1;
	struct stat st;

	if (have < 0)
		have = stat("/proc/net/netfilter", &st) == 0;
	return have;
}

/*
 * Whether the kernel has fprobes (PEA_MAP_IOC_ATTACH_FPROBE works; else
 * it answers EOPNOTSUPP before reading the attr): kallsyms names
 * register_fprobe_ips (pt_fprobe.h).
 */
int fz_have_fprobe(void)
{
	static int have = -1;

	if (have < 0)
		have = pt_kernel_has_fprobe();
	return have;
}

static struct pea_map_attr fz_map_attr(struct fz_rng *r, int name,
				       __u32 max_entries)
{
	static const __u32 flag_sets[] = {
		0, 0, 0, PEA_F_PRESERVE_ELEMS, PEA_F_RDONLY, PEA_F_WRONLY,
	};
	struct pea_map_attr a = {
		.key_size = 4, .value_size = 4, .max_entries = max_entries,
		.open_flags = O_CLOEXEC,
	};

	a.map_flags = flag_sets[fz_below(r, ARRAY_SIZE(flag_sets))];
	if (fz_chance(r, 2))
		a.map_flags |= PEA_F_BPF_WRITE;	/* BPF programs write too */
	if (fz_chance(r, 4))
		a.open_flags |= O_NONBLOCK;
	if (name >= 0)
		strcpy(a.name, fz_names[name]);
	return a;
}

/* Create a map; 0, *fd and the flags it got, or the errno. */
int fz_new_map(struct fz_rng *r, int name, __u32 max_entries, int *fd,
	       __u32 *map_flags)
{
	struct pea_map_attr a = fz_map_attr(r, name, max_entries);

	if (name >= 0)
		a.map_flags &= ~PEA_F_RDONLY;	/* producers must find slots */
	if (name == 0)
		a.map_flags |= PEA_F_BPF_WRITE;	/* the kfunc family's target */
	*map_flags = a.map_flags;
	*fd = ioctl(fz_dev, PEA_IOC_MAP_CREATE, &a);
	return *fd < 0 ? errno : 0;
}

static struct perf_event_attr fz_output_attr(struct fz_rng *r)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_BPF_OUTPUT;
	a.sample_type = PERF_SAMPLE_RAW | (fz_below(r, 16) & (PERF_SAMPLE_TID |
			PERF_SAMPLE_TIME | PERF_SAMPLE_CPU));
	a.sample_period = fz_below(r, 2);
	a.disabled = fz_chance(r, 8);
	a.write_backward = fz_chance(r, 8);
	if (fz_chance(r, 2)) {
		a.watermark = 1;
		a.wakeup_watermark = (__u32)fz_below(r, 8192);
	} else {
		a.wakeup_events = (__u32)fz_below(r, 4);
	}
	return a;
}

int fz_new_output(struct fz_rng *r, int cpu, int *fd)
{
	struct perf_event_attr a = fz_output_attr(r);
	struct pea_event_open o = {
		.attr = (uintptr_t)&a, .cpu = cpu, .flags = PEA_FLAG_FD_CLOEXEC,
	};

	if (!a.write_backward && fz_chance(r, 4))
		o.flags |= PEA_FLAG_ADAPTIVE_WAKEUP;
	if (fz_chance(r, 4)) {
		o.flags |= PEA_FLAG_FLUSH;
		o.flush_us = 1 + (__u32)fz_below(r, 2000);
	}
	*fd = ioctl(fz_dev, PEA_IOC_EVENT_OPEN, &o);
	return *fd < 0 ? errno : 0;
}

/* Keep a new fd in a free slot, or close it when the table is full. */
static void fz_keep(struct fz_rng *r, int fd, enum fz_kind kind, int cpu,
		    __u32 map_flags, int name)
{
	int s = fz_fd_lock_free(r);

	if (s < 0) {
		close(fd);
		return;
	}
	fz_fds[s].fd = fd;
	fz_fds[s].kind = kind;
	fz_fds[s].cpu = cpu;
	fz_fds[s].map_flags = map_flags;
	fz_fds[s].name = name;
	fz_fds[s].pages = 0;
	fz_fd_unlock(s);
}

static int op_map_create(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	int name = fz_chance(r, 2) ? (int)fz_below(r, FZ_NR_NAMES) : -1;
	struct pea_map_attr a = fz_map_attr(r, name, 1 + fz_below(r, 2 * fz_ncpu));
	int fd, err;

	switch (fz_below(r, 12)) {
	case 0:
		err = fz_ioctl(fz_dev, PEA_IOC_MAP_CREATE, fz_bad_ptr(r));
		return fz_expect("map_create", "bad pointer", err, EFAULT);
	case 1:
		a.map_flags |= 1U << (5 + fz_below(r, 27));
		if (a.map_flags & ~PEA_MAP_FLAGS_MASK) {
			fd = ioctl(fz_dev, PEA_IOC_MAP_CREATE, &a);
			err = fd < 0 ? errno : 0;
			if (fd >= 0)
				close(fd);
			return fz_expect("map_create", "unknown map flag", err,
					 EINVAL);
		}
		break;
	case 2:
		a.key_size = fz_u32(r);
		a.value_size = fz_chance(r, 2) ? 4 : fz_u32(r);
		if (a.key_size != 4) {
			fd = ioctl(fz_dev, PEA_IOC_MAP_CREATE, &a);
			err = fd < 0 ? errno : 0;
			if (fd >= 0)
				close(fd);
			return fz_expect("map_create", "key_size != 4", err,
					 EINVAL);
		}
		break;
	case 3:
		a.max_entries = fz_chance(r, 2) ? 0 : PEA_MAX_ENTRIES + 1 +
			(fz_u32(r) & 0x7fffffff);
		fd = ioctl(fz_dev, PEA_IOC_MAP_CREATE, &a);
		err = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
		return fz_expect("map_create", "max_entries out of range", err,
				 a.max_entries ? E2BIG : EINVAL);
	case 4:
		a.open_flags |= 1U << fz_below(r, 32);
		a.map_flags &= ~PEA_F_NUMA_NODE;
		if (a.open_flags & ~(O_CLOEXEC | O_NONBLOCK)) {
			fd = ioctl(fz_dev, PEA_IOC_MAP_CREATE, &a);
			err = fd < 0 ? errno : 0;
			if (fd >= 0)
				close(fd);
			return fz_expect("map_create", "unknown open flag",
					 err, EINVAL);
		}
		break;
	case 5:
		fz_fill(r, a.name, sizeof(a.name));
		name = -1;
		break;
	case 6:
		a.map_flags |= PEA_F_NUMA_NODE;
		a.numa_node = fz_chance(r, 2) ? 0 : fz_u32(r);
		break;
	case 7:
		a.max_entries = 1 + fz_below(r, PEA_MAX_ENTRIES);
		break;
	}
	fd = ioctl(fz_dev, PEA_IOC_MAP_CREATE, &a);
	if (fd < 0)
		return errno;
	fz_keep(r, fd, FZ_MAP, -1, a.map_flags, name);
	return 0;
}

static int op_event_open(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	struct perf_event_attr a = fz_output_attr(r);
	struct pea_event_open o = {
		.attr = (uintptr_t)&a, .flags = PEA_FLAG_FD_CLOEXEC,
	};
	int fd, err, cpu = (int)fz_below(r, fz_ncpu);
	const char *what = NULL;
	int want = EINVAL;

	o.cpu = cpu;
	switch (fz_below(r, 14)) {
	case 0:
		o.flags |= 1U << fz_below(r, 32);
		if (o.flags & ~PEA_EVENT_OPEN_FLAGS)
			what = "unknown flag";
		else if (o.flags & PEA_FLAG_FLUSH)
			what = "flush without flush_us";
		break;
	case 1:
		o.reserved = fz_u64(r) | 1;
		what = "reserved";
		break;
	case 2:
		o.reserved32 = fz_u32(r) | 0x100;
		what = "reserved32";
		break;
	case 3:
		o.attr = (uintptr_t)fz_bad_ptr(r);
		what = "bad attr pointer";
		want = EFAULT;
		break;
	case 4:
		err = fz_ioctl(fz_dev, PEA_IOC_EVENT_OPEN, fz_bad_ptr(r));
		return fz_expect("event_open", "bad pointer", err, EFAULT);
	case 5:
		o.cpu = fz_chance(r, 2) ? -1 - (int)fz_below(r, 3) :
			fz_ncpu + (int)fz_below(r, 1000);
		if (o.cpu >= 1024 || o.cpu < 0)
			what = "cpu out of range";
		break;
	case 6:
		a.size = fz_chance(r, 2) ? 1 + fz_below(r, PERF_ATTR_SIZE_VER0 - 1)
			: 4097 + fz_u32(r) % 100000;
		what = "attr.size out of range";
		want = E2BIG;
		break;
	case 7:
		/* Bits an output event does not honour. */
		((__u64 *)&a)[5] |= 1ULL << (fz_below(r, 64));
		break;
	case 8:
		a.sample_type = fz_u64(r);
		if (!(a.sample_type & PERF_SAMPLE_RAW) ||
		    (a.sample_type & ~PEA_SAMPLE_TYPES))
			what = "sample_type";
		break;
	case 9:
		a.sample_period = 2 + fz_below(r, 1000);
		what = "sample_period";
		break;
	case 10:
		o.flags |= PEA_FLAG_FLUSH;
		o.flush_us = fz_u32(r);
		if (!o.flush_us || o.flush_us > PEA_FLUSH_US_MAX)
			what = "flush_us out of range";
		break;
	case 11:
		/*
		 * A big attr with a non-zero tail: E2BIG as perf. The tail
		 * starts past any kernel's struct (6.12's is bigger than the
		 * headers this is built with).
		 */
		{
			static __thread char big[8192];

			memset(big, 0, sizeof(big));
			memcpy(big, &a, sizeof(a));
			big[256 + fz_below(r, 256)] = 1;
			((struct perf_event_attr *)big)->size = 512;
			o.attr = (uintptr_t)big;
			what = "non-zero attr tail";
			want = E2BIG;
		}
		break;
	}
	fd = ioctl(fz_dev, PEA_IOC_EVENT_OPEN, &o);
	err = fd < 0 ? errno : 0;
	if (what) {
		if (fd >= 0)
			close(fd);
		return fz_expect("event_open", what, err, want);
	}
	if (fd < 0)
		return err;
	fz_keep(r, fd, FZ_OUTPUT, o.cpu, 0, -1);
	return 0;
}

static int op_dev_ioctl(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	unsigned long cmd;
	char buf[256];
	int err;

	if (fz_chance(r, 4)) {
		err = fz_ioctl(fz_dev, PEA_IOC_VERSION, NULL);
		if (ioctl(fz_dev, PEA_IOC_VERSION, NULL) != PEA_ABI_VERSION)
			fz_violation("dev_ioctl", "PEA_IOC_VERSION is not %d",
				     PEA_ABI_VERSION);
		return err;
	}
	/* Commands /dev/pea does not know: ENOTTY whatever the argument. */
	{
		static const unsigned long known[] = {
			PEA_IOC_VERSION, PEA_IOC_MAP_CREATE, PEA_IOC_EVENT_OPEN,
		};

		cmd = fz_unknown_cmd(r, known, 3);
	}
	fz_fill(r, buf, sizeof(buf));
	err = fz_ioctl(fz_dev, cmd, fz_chance(r, 2) ? (void *)buf : fz_bad_ptr(r));
	return fz_expect("dev_ioctl", "unknown command", err, ENOTTY);
}

/* An fd that is not an event of this process's table. */
static int fz_wrong_fd(struct fz_rng *r)
{
	switch (fz_below(r, 7)) {
	case 0: return -1;
	case 1: return 0;	/* /dev/null or a console */
	case 2: return fz_dev;
	case 3: return 1000 + (int)fz_below(r, 1000);	/* closed */
	case 4: return (int)fz_u32(r);
	case 5: return fz_fd_peek(r, FZ_MAP);
	default: return fz_fd_peek(r, FZ_LINK);
	}
}

static int op_map_ioctl(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	int s = fz_fd_lock(r, FZ_MAP), err = 0, fd;
	struct pea_map_elem e;
	struct pea_map_info info;
	__u32 max;

	if (s < 0)
		return -ENOENT;
	fd = fz_fds[s].fd;
	memset(&info, 0, sizeof(info));
	if (fz_ioctl(fd, PEA_MAP_IOC_INFO, &info))
		fz_violation("map_ioctl", "PEA_MAP_IOC_INFO failed");
	max = info.max_entries;
	memset(&e, 0, sizeof(e));
	e.key = fz_chance(r, 4) ? fz_u32(r) : (__u32)fz_below(r, max + 1);
	switch (fz_below(r, 10)) {
	case 0:
	case 1:
	case 2:
		e.fd = fz_chance(r, 6) ? fz_wrong_fd(r) :
			fz_fd_peek(r, fz_chance(r, 5) ? FZ_COUNTER : FZ_OUTPUT);
		if (fz_chance(r, 10)) {
			/* One fault at a time: their order differs by kernel. */
			e.flags = fz_u64(r);
			e.key = (__u32)fz_below(r, max);
		}
		err = fz_ioctl(fd, PEA_MAP_IOC_UPDATE, &e);
		if (fz_fds[s].map_flags & PEA_F_RDONLY)
			fz_expect("map_update", "read-only map", err, EPERM);
		else if (e.key >= max)
			fz_expect("map_update", "key past max_entries", err, E2BIG);
		else if (e.flags)
			fz_expect("map_update", "flags not ANY", err, EINVAL);
		else if (!err && info.max_entries == 0)
			fz_violation("map_update", "success on an empty map");
		break;
	case 3:
	case 4:
		err = fz_ioctl(fd, PEA_MAP_IOC_DELETE, &e);
		if (fz_fds[s].map_flags & PEA_F_RDONLY)
			fz_expect("map_delete", "read-only map", err, EPERM);
		else if (e.key >= max)
			fz_expect("map_delete", "key past max_entries", err, E2BIG);
		break;
	case 5:
		err = fz_ioctl(fd, PEA_MAP_IOC_LOOKUP, &e);
		if (fz_fds[s].map_flags & PEA_F_WRONLY)
			fz_expect("map_lookup", "write-only map", err, EPERM);
		else if (e.key >= max)
			fz_expect("map_lookup", "key past max_entries", err, E2BIG);
		else if (!err && (e.cpu < 0 || e.cpu >= fz_ncpu))
			fz_violation("map_lookup", "cpu %d", e.cpu);
		break;
	case 6: {
		static const unsigned long cmds[] = {
			PEA_MAP_IOC_UPDATE, PEA_MAP_IOC_DELETE,
			PEA_MAP_IOC_LOOKUP, PEA_MAP_IOC_INFO,
			PEA_MAP_IOC_ATTACH_PROBE, PEA_MAP_IOC_ATTACH_UPROBE,
			PEA_MAP_IOC_ATTACH_NF, FZ_ATTACH_PROBE_VER0,
			PEA_MAP_IOC_ATTACH_FPROBE,
		};
		unsigned long cmd = cmds[fz_below(r, ARRAY_SIZE(cmds))];

		err = fz_ioctl(fd, cmd, fz_bad_ptr(r));
		/* A kernel without netfilter or fprobe refuses before reading. */
		fz_expect("map_ioctl", "bad pointer", err,
			  (cmd == PEA_MAP_IOC_ATTACH_NF && !fz_have_netfilter()) ||
			  (cmd == PEA_MAP_IOC_ATTACH_FPROBE && !fz_have_fprobe()) ?
			  EOPNOTSUPP : EFAULT);
		break;
	}
	case 7: {
		static const unsigned long known[] = {
			PEA_MAP_IOC_UPDATE, PEA_MAP_IOC_DELETE,
			PEA_MAP_IOC_LOOKUP, PEA_MAP_IOC_INFO,
			PEA_MAP_IOC_ATTACH_PROBE, PEA_MAP_IOC_ATTACH_TP,
			PEA_MAP_IOC_ATTACH_UPROBE, PEA_MAP_IOC_ATTACH_NF,
			FZ_ATTACH_PROBE_VER0, FZ_ATTACH_TP_VER0,
			PEA_MAP_IOC_ATTACH_FPROBE,
		};
		unsigned long cmd = fz_unknown_cmd(r, known, ARRAY_SIZE(known));

		err = fz_ioctl(fd, cmd, &e);
		fz_expect("map_ioctl", "unknown command", err, ENOTTY);
		break;
	}
	case 8:
		/* The output-event and link commands on a map fd. */
		err = fz_ioctl(fd, fz_chance(r, 2) ? PEA_EVENT_IOC_STATS :
			       PEA_LINK_IOC_INFO, &info);
		fz_expect("map_ioctl", "foreign command", err, ENOTTY);
		break;
	default:
		/* A map as an event (EBADF or EINVAL, never success). */
		e.fd = fd;
		e.key = 0;
		err = fz_ioctl(fd, PEA_MAP_IOC_UPDATE, &e);
		if (!(fz_fds[s].map_flags & PEA_F_RDONLY))
			fz_expect_fail("map_update", "a map fd as the value", err);
		break;
	}
	fz_fd_unlock(s);
	return err;
}

/* Output and counter event fds share most commands. */
static int op_event_ioctl(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	int s = fz_fd_lock(r, fz_chance(r, 3) ? FZ_COUNTER : FZ_OUTPUT);
	bool counter;
	struct pea_event_stats st;
	__u64 v[8];
	int err = 0, fd;

	if (s < 0)
		return -ENOENT;
	fd = fz_fds[s].fd;
	counter = fz_fds[s].kind == FZ_COUNTER;
	switch (fz_below(r, 12)) {
	case 0:
		err = fz_ioctl(fd, PERF_EVENT_IOC_ENABLE,
			       (void *)(uintptr_t)fz_below(r, 2));
		break;
	case 1:
		err = fz_ioctl(fd, PERF_EVENT_IOC_DISABLE,
			       (void *)(uintptr_t)fz_below(r, 2));
		break;
	case 2:
		err = fz_ioctl(fd, PERF_EVENT_IOC_RESET, NULL);
		break;
	case 3:
		err = fz_ioctl(fd, PERF_EVENT_IOC_ID,
			       fz_chance(r, 3) ? fz_bad_ptr(r) : (void *)v);
		break;
	case 4:
		err = fz_ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT,
			       (void *)(uintptr_t)(fz_chance(r, 4) ? fz_u64(r) :
						   fz_below(r, 2)));
		if (counter && !err)
			fz_violation("event_ioctl", "PAUSE_OUTPUT on a counter");
		break;
	case 5:
		err = fz_ioctl(fd, PEA_EVENT_IOC_STATS, &st);
		if (!err && (st.cpu != (__u32)fz_fds[s].cpu || st.lost <
			     st.lost_pending))
			fz_violation("event_stats", "cpu %u (want %d), lost %llu < pending %llu",
				     st.cpu, fz_fds[s].cpu,
				     (unsigned long long)st.lost,
				     (unsigned long long)st.lost_pending);
		break;
	case 6:
		err = fz_ioctl(fd, PEA_EVENT_IOC_TAKE_LOST, v);
		break;
	case 7: {
		static const unsigned long cmds[] = {
			PERF_EVENT_IOC_ID, PEA_EVENT_IOC_STATS,
			PEA_EVENT_IOC_TAKE_LOST,
		};
		unsigned long cmd = cmds[fz_below(r, 3)];

		err = fz_ioctl(fd, cmd, fz_bad_ptr(r));
		if (!counter || cmd == PERF_EVENT_IOC_ID)
			fz_expect("event_ioctl", "bad pointer", err, EFAULT);
		break;
	}
	case 8: {
		/* Perf commands an output event or a counter does not take. */
		static const unsigned long cmds[] = {
			PERF_EVENT_IOC_REFRESH, PERF_EVENT_IOC_PERIOD,
			PERF_EVENT_IOC_SET_OUTPUT, PERF_EVENT_IOC_SET_FILTER,
			PERF_EVENT_IOC_SET_BPF, PERF_EVENT_IOC_QUERY_BPF,
			PERF_EVENT_IOC_MODIFY_ATTRIBUTES,
			PEA_MAP_IOC_INFO, PEA_LINK_IOC_INFO,
		};

		fz_fill(r, v, sizeof(v));
		err = fz_ioctl(fd, cmds[fz_below(r, 9)], v);
		fz_expect_fail("event_ioctl", "a command events do not take",
			       err);
		break;
	}
	case 9: {
		static const unsigned long known[] = {
			PERF_EVENT_IOC_ENABLE, PERF_EVENT_IOC_DISABLE,
			PERF_EVENT_IOC_RESET, PERF_EVENT_IOC_ID,
			PERF_EVENT_IOC_PAUSE_OUTPUT, PEA_EVENT_IOC_STATS,
			PEA_EVENT_IOC_TAKE_LOST,
		};
		unsigned long cmd = fz_unknown_cmd(r, known, 7);

		err = fz_ioctl(fd, cmd, v);
		fz_expect("event_ioctl", "unknown command", err, ENOTTY);
		break;
	}
	default: {
		/* read(2): the counter's read_format, EINVAL or so on output. */
		char buf[128];
		size_t n = fz_below(r, sizeof(buf) + 1);
		ssize_t got = fz_chance(r, 8) ? read(fd, fz_bad_ptr(r), n) :
			read(fd, buf, n);

		err = got < 0 ? errno : 0;
		break;
	}
	}
	fz_fd_unlock(s);
	return err;
}

static int op_link_ioctl(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	int s = fz_fd_lock(r, FZ_LINK), err, fd;
	struct pea_link_info li;

	if (s < 0)
		return -ENOENT;
	fd = fz_fds[s].fd;
	switch (fz_below(r, 4)) {
	case 0:
		err = fz_ioctl(fd, PEA_LINK_IOC_INFO, fz_bad_ptr(r));
		fz_expect("link_ioctl", "bad pointer", err, EFAULT);
		break;
	case 1: {
		static const unsigned long known[] = {
			PEA_LINK_IOC_INFO, PEA_LINK_IOC_AGG_CREATE,
			PEA_LINK_IOC_AGG_READ, PEA_LINK_IOC_LAT_CREATE,
			PEA_LINK_IOC_LAT_INFO, PEA_LINK_IOC_AGG_SHARE,
			/* the older sizes' numbers, answered too */
			_IOC(_IOC_READ, PEA_IOC_MAGIC, 0x30,
			     PEA_LINK_INFO_SIZE_VER0),
			_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x38,
			     PEA_AGG_ATTR_SIZE_VER0),
			_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x38,
			     PEA_AGG_ATTR_SIZE_VER1),
			_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x38,
			     PEA_AGG_ATTR_SIZE_VER2),
			_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x38,
			     PEA_AGG_ATTR_SIZE_VER3),
			_IOC(_IOC_READ | _IOC_WRITE, PEA_IOC_MAGIC, 0x39,
			     PEA_AGG_READ_SIZE_VER0),
			_IOC(_IOC_READ | _IOC_WRITE, PEA_IOC_MAGIC, 0x39,
			     PEA_AGG_READ_SIZE_VER1),
		};
		unsigned long cmd = fz_unknown_cmd(r, known, ARRAY_SIZE(known));

		err = fz_ioctl(fd, cmd, &li);
		fz_expect("link_ioctl", "unknown command", err, ENOTTY);
		break;
	}
	default:
		err = fz_ioctl(fd, PEA_LINK_IOC_INFO, &li);
		if (!err && (li.written + li.errors + li.dropped +
			     li.filtered > li.hits ||
			     !memchr(li.symbol, 0, sizeof(li.symbol))))
			fz_violation("link_info",
				     "written %llu + errors %llu + dropped %llu + filtered %llu > hits %llu",
				     (unsigned long long)li.written,
				     (unsigned long long)li.errors,
				     (unsigned long long)li.dropped,
				     (unsigned long long)li.filtered,
				     (unsigned long long)li.hits);
		break;
	}
	fz_fd_unlock(s);
	return err;
}

/*
 * A random aggregation table on a random link (random keys, values,
 * fetched values of the link's fetches, histograms and limits; refused
 * with EINVAL, EOPNOTSUPP, E2BIG, EEXIST
 * or ENOMEM, nothing else), a broken attr (EINVAL, EFAULT), or a read
 * (and clear) into a random buffer: a read-and-clear returns a
 * generation no writer touches any more, so its hits must equal its
 * entries' counts, dropped and errors exactly.
 */
static int op_link_agg(struct fz_thread *t)
{
	static __thread unsigned char buf[32768];
	struct fz_rng *r = &t->rng;
	int s = fz_fd_lock(r, FZ_LINK), err, fd, i;
	struct pea_agg_attr a;
	struct pea_agg_read rd;
	__u64 sum = 0;
	__u32 k;

	if (s < 0)
		return -ENOENT;
	fd = fz_fds[s].fd;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.max_keys = 1 + (__u32)fz_below(r, fz_chance(r, 8) ? 70000 : 64);
	for (i = 0; i < (int)fz_below(r, 4); i++)
		a.keys[i] = (__u8)(fz_chance(r, 4) ? PEA_AGG_KEY_FETCH :
				   fz_below(r, 6));
	/* Wide keys (16 words), sometimes. */
	if (fz_chance(r, 4))
		a.flags |= PEA_AGG_F_WIDE_KEY;
	/*
	 * Fetched values: an index and a key size per fetch part, mostly in
	 * range (a wide key's strings up to 120 bytes), sometimes set for a
	 * part there is not.
	 */
	for (i = 0, k = 0; i < PEA_AGG_KEY_PARTS; i++) {
		__u32 f = (__u32)fz_below(r, fz_chance(r, 8) ? 12 : 4);
		__u32 size = fz_chance(r, 2) ? 0 :
			     (__u32)fz_below(r, fz_chance(r, 8) ? 130 :
					     a.flags & PEA_AGG_F_WIDE_KEY ?
					     121 : 25);

		if (a.keys[i] != PEA_AGG_KEY_FETCH && !fz_chance(r, 32))
			continue;
		if (!k) {
			a.key_fetch = f;
			a.key_fetch_size = size;
		} else if (k < PEA_AGG_KEY_PARTS) {
			a.key_fetch_more[k - 1] = f;
			a.key_fetch_size_more[k - 1] = size;
		}
		k++;
	}
	/* Not PAIRED: op_link_lat's (it names a pair_fd). */
	a.value = fz_chance(r, 6) ? PEA_AGG_VAL_FETCH : (__u32)fz_below(r, 5);
	if (a.value == PEA_AGG_VAL_ARG)
		a.val_arg = (__u32)fz_below(r, 6);
	if (a.value == PEA_AGG_VAL_FETCH)
		a.val_fetch = (__u32)fz_below(r, fz_chance(r, 8) ? 12 : 4);
	if (a.value == PEA_AGG_VAL_FIELD) {
		a.val_offset = (__u32)fz_below(r, 64);
		a.val_size = 1U << fz_below(r, 4);
		a.flags |= fz_chance(r, 2) ? PEA_AGG_F_SIGNED : 0;
	}
	if (a.value)
		a.hist = (__u32)fz_below(r, 3);
	if (a.hist == PEA_AGG_HIST_LINEAR) {
		a.lin_min = (__s64)fz_below(r, 1000) - 500;
		a.lin_max = a.lin_min + 1 + (__s64)fz_below(r, 2000);
		a.lin_step = 1 + fz_below(r, 50);
	}
	a.flags |= fz_chance(r, 4) ? PEA_AGG_F_NO_RECORDS : 0;
	switch (fz_below(r, 5)) {
	case 0:
	case 1:
		err = fz_ioctl(fd, PEA_LINK_IOC_AGG_CREATE, &a);
		if (err && err != EINVAL && err != EOPNOTSUPP &&
		    err != E2BIG && err != EEXIST && err != ENOMEM)
			fz_violation("link_agg", "create: errno %d", err);
		break;
	case 2:
		if (fz_chance(r, 2)) {
			err = fz_ioctl(fd, PEA_LINK_IOC_AGG_CREATE,
				       fz_bad_ptr(r));
			fz_expect("link_agg", "create, bad pointer", err,
				  EFAULT);
		} else {
			a.reserved = 1 + fz_u32(r) % 7;
			err = fz_ioctl(fd, PEA_LINK_IOC_AGG_CREATE, &a);
			fz_expect("link_agg", "create, reserved", err, EINVAL);
		}
		break;
	default:
		memset(&rd, 0, sizeof(rd));
		rd.size = sizeof(rd);
		rd.flags = fz_chance(r, 2) ? PEA_AGG_READ_F_CLEAR : 0;
		rd.buf = fz_chance(r, 16) ? (__u64)(uintptr_t)fz_bad_ptr(r) :
					    (__u64)(uintptr_t)buf;
		rd.buf_len = fz_below(r, sizeof(buf) + 1);
		err = fz_ioctl(fd, PEA_LINK_IOC_AGG_READ, &rd);
		if (err && err != ENOENT && err != ENOSPC && err != EFAULT)
			fz_violation("link_agg", "read: errno %d", err);
		if (err || !rd.entry_size)
			break;
		if ((__u64)rd.nr_entries * rd.entry_size > rd.buf_len)
			fz_violation("link_agg", "%u entries of %u bytes in %llu",
				     rd.nr_entries, rd.entry_size,
				     (unsigned long long)rd.buf_len);
		if (!(rd.flags & PEA_AGG_READ_F_CLEAR) ||
		    rd.buf != (__u64)(uintptr_t)buf)
			break;
		for (k = 0; k < rd.nr_entries; k++) {
			/* Either layout: the fields after the key. */
			size_t key = rd.entry_size - 8ULL * rd.nr_buckets -
				     (sizeof(struct pea_agg_entry) -
				      8 * PEA_AGG_KEY_WORDS);
			__u64 count;

			memcpy(&count, buf + (size_t)k * rd.entry_size + key +
			       offsetof(struct pea_agg_entry, count) -
			       8 * PEA_AGG_KEY_WORDS, sizeof(count));
			sum += count;
		}
		if (sum + rd.dropped + rd.errors + rd.unpaired != rd.hits)
			fz_violation("link_agg",
				     "read-and-clear: counts %llu + dropped %llu + errors %llu + unpaired %llu != hits %llu",
				     (unsigned long long)sum,
				     (unsigned long long)rd.dropped,
				     (unsigned long long)rd.errors,
				     (unsigned long long)rd.unpaired,
				     (unsigned long long)rd.hits);
		break;
	}
	fz_fd_unlock(s);
	return err;
}

/*
 * A link shares another's table (PEA_LINK_IOC_AGG_SHARE): an fd of any
 * kind, possibly closed meanwhile, or a bad number. Refused with EBADF,
 * EINVAL, EOPNOTSUPP, ENOENT, EEXIST, ENOMEM or a stack depth's EOVERFLOW,
 * nothing else; op_link_agg's reads and clears then run on shared
 * tables, and closing either link leaves the other's table whole.
 */
static int op_link_agg_share(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	int s = fz_fd_lock(r, FZ_LINK), err, fd, other;

	if (s < 0)
		return -ENOENT;
	fd = fz_fds[s].fd;
	switch (fz_below(r, 8)) {
	case 0:
		other = fz_chance(r, 2) ? -1 : (int)fz_u32(r);
		break;
	case 1:
		other = fz_fd_peek(r, FZ_NONE);
		break;
	case 2:
		other = fd;
		break;
	default:
		other = fz_fd_peek(r, FZ_LINK);
		break;
	}
	err = ioctl(fd, PEA_LINK_IOC_AGG_SHARE, other) ? errno : 0;
	if (err && err != EBADF && err != EINVAL && err != EOPNOTSUPP &&
	    err != ENOENT && err != EEXIST && err != EOVERFLOW &&
	    err != ENOMEM)
		fz_violation("link_agg_share", "errno %d", err);
	if (other == fd && err != EINVAL)
		fz_violation("link_agg_share", "itself: errno %d", err);
	fz_fd_unlock(s);
	return err;
}

/* A random pairing key: mostly valid kinds, sizes and arguments. */
static void fz_lat_key(struct fz_rng *r, struct pea_lat_key *k)
{
	memset(k, 0, sizeof(*k));
	k->kind = (__u32)fz_below(r, fz_chance(r, 16) ? 8 : 3);
	if (k->kind == PEA_LAT_KEY_ARG)
		k->arg = (__u32)fz_below(r, fz_chance(r, 16) ? 9 : 6);
	if (k->kind == PEA_LAT_KEY_FIELD) {
		k->offset = (__u32)fz_below(r, 64);
		k->size = fz_chance(r, 16) ? 3 : 1U << fz_below(r, 4);
	}
}

/*
 * Latency between two probes: a pairing table with a random limit and
 * key on a random link (refused with EINVAL, EOPNOTSUPP, EEXIST or
 * ENOMEM, nothing else), its counts (at most max_pending kept), or an
 * end table paired with another random slot's fd, which may be any
 * kind, closed or reused meanwhile (EBADF, EINVAL as well).
 */
static int op_link_lat(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	int s = fz_fd_lock(r, FZ_LINK), err, fd;
	struct pea_lat_attr la;
	struct pea_lat_info li;
	struct pea_agg_attr a;

	if (s < 0)
		return -ENOENT;
	fd = fz_fds[s].fd;
	switch (fz_below(r, 3)) {
	case 0:
		memset(&la, 0, sizeof(la));
		la.size = sizeof(la);
		la.flags = fz_chance(r, 2) ? PEA_LAT_F_NO_RECORDS : 0;
		if (fz_chance(r, 16))
			la.flags |= 1U << fz_below(r, 32);
		la.max_pending = (__u32)fz_below(r, fz_chance(r, 8) ? 70000 :
								 64);
		fz_lat_key(r, &la.key);
		err = fz_ioctl(fd, PEA_LINK_IOC_LAT_CREATE, &la);
		if (err && err != EINVAL && err != EOPNOTSUPP &&
		    err != EEXIST && err != ENOMEM)
			fz_violation("link_lat", "create: errno %d", err);
		break;
	case 1:
		memset(&li, 0, sizeof(li));
		err = fz_ioctl(fd, PEA_LINK_IOC_LAT_INFO, &li);
		if (err && err != ENOENT)
			fz_violation("link_lat", "info: errno %d", err);
		if (!err && (li.pending > li.max_pending ||
			     li.replaced > li.started))
			fz_violation("link_lat",
				     "pending %u of %u, replaced %llu of %llu started",
				     li.pending, li.max_pending,
				     (unsigned long long)li.replaced,
				     (unsigned long long)li.started);
		break;
	default:
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.max_keys = 1 + (__u32)fz_below(r, 64);
		a.keys[0] = (__u8)fz_below(r, 6);
		a.value = PEA_AGG_VAL_PAIRED;
		a.hist = (__u32)fz_below(r, 2);
		a.flags = fz_chance(r, 4) ? PEA_AGG_F_NO_RECORDS : 0;
		/* Unlocked: another thread may close or reuse it. */
		a.pair_fd = fz_chance(r, 8) ? (int)fz_u32(r) :
			    fz_fds[fz_below(r, FZ_NR_FDS)].fd;
		fz_lat_key(r, &a.pair_key);
		err = fz_ioctl(fd, PEA_LINK_IOC_AGG_CREATE, &a);
		if (err && err != EINVAL && err != EOPNOTSUPP &&
		    err != EEXIST && err != ENOMEM && err != EBADF)
			fz_violation("link_lat", "end: errno %d", err);
		break;
	}
	fz_fd_unlock(s);
	return err;
}

/* Close a random table fd: events in maps and mapped rings live on. */
static int op_close(struct fz_thread *t)
{
	int s = fz_fd_lock(&t->rng, FZ_NONE);

	if (s < 0)
		return -ENOENT;
	fz_fd_close(s);
	fz_fd_unlock(s);
	return 0;
}

/* A map full of this CPU's events, as a consumer sets it up. */
static int op_map_fill(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	int s = fz_fd_lock(r, FZ_MAP), cpu, err = 0, ev;

	if (s < 0)
		return -ENOENT;
	for (cpu = 0; cpu < fz_ncpu && !err; cpu++) {
		struct pea_map_elem e = { .key = (__u32)cpu };

		err = fz_new_output(r, cpu, &ev);
		if (err)
			break;
		e.fd = ev;
		err = fz_ioctl(fz_fds[s].fd, PEA_MAP_IOC_UPDATE, &e);
		if (fz_chance(r, 2))
			fz_keep(r, ev, FZ_OUTPUT, cpu, 0, -1);
		else
			close(ev);	/* the map keeps it */
	}
	fz_fd_unlock(s);
	return err;
}

const struct fz_op fz_ops_obj[] = {
	{ "map_create", op_map_create, 6, false },
	{ "event_open", op_event_open, 8, false },
	{ "dev_ioctl", op_dev_ioctl, 2, false },
	{ "map_ioctl", op_map_ioctl, 12, false },
	{ "map_fill", op_map_fill, 3, false },
	{ "event_ioctl", op_event_ioctl, 12, false },
	{ "link_ioctl", op_link_ioctl, 3, false },
	{ "link_agg", op_link_agg, 3, false },
	{ "link_agg_share", op_link_agg_share, 2, false },
	{ "link_lat", op_link_lat, 3, false },
	{ "close", op_close, 6, false },
	{ NULL, NULL, 0, false },
};
