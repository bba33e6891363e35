// SPDX-License-Identifier: GPL-2.0
/*
 * The ABI: mmap page layout, every errno of /dev/pea, map and event
 * ioctls, and mmap validation.
 */
#include <stddef.h>
#include "pea_test.h"

#define OFF(f) offsetof(struct perf_event_mmap_page, f)

static void test_page_layout(void)
{
	/* The offsets Linux's perf_event_mmap_page has had since 4.x. */
	PT_EQ(OFF(version), 0, "mmap page: version at 0");
	PT_EQ(OFF(compat_version), 4, "mmap page: compat_version at 4");
	PT_EQ(OFF(lock), 8, "mmap page: lock at 8");
	PT_EQ(OFF(index), 12, "mmap page: index at 12");
	PT_EQ(OFF(offset), 16, "mmap page: offset at 16");
	PT_EQ(OFF(time_enabled), 24, "mmap page: time_enabled at 24");
	PT_EQ(OFF(time_running), 32, "mmap page: time_running at 32");
	PT_EQ(OFF(capabilities), 40, "mmap page: capabilities at 40");
	PT_EQ(OFF(pmc_width), 48, "mmap page: pmc_width at 48");
	PT_EQ(OFF(time_shift), 50, "mmap page: time_shift at 50");
	PT_EQ(OFF(time_mult), 52, "mmap page: time_mult at 52");
	PT_EQ(OFF(time_offset), 56, "mmap page: time_offset at 56");
	PT_EQ(OFF(time_zero), 64, "mmap page: time_zero at 64");
	PT_EQ(OFF(size), 72, "mmap page: size at 72");
	PT_EQ(OFF(time_cycles), 80, "mmap page: time_cycles at 80");
	PT_EQ(OFF(time_mask), 88, "mmap page: time_mask at 88");
	PT_EQ(OFF(__reserved), 96, "mmap page: __reserved at 96");
	PT_EQ(OFF(data_head), 1024, "mmap page: data_head at 1024");
	PT_EQ(OFF(data_tail), 1032, "mmap page: data_tail at 1032");
	PT_EQ(OFF(data_offset), 1040, "mmap page: data_offset at 1040");
	PT_EQ(OFF(data_size), 1048, "mmap page: data_size at 1048");
	PT_EQ(OFF(aux_head), 1056, "mmap page: aux_head at 1056");
	PT_EQ(OFF(aux_size), 1080, "mmap page: aux_size at 1080");
	PT_EQ(sizeof(struct perf_event_header), 8, "perf_event_header is 8 bytes");
}

static void test_device(void)
{
	int dev = pt_dev();

	PT_EQ(ioctl(dev, PEA_IOC_VERSION, 0), PEA_ABI_VERSION,
	      "PEA_IOC_VERSION returns the ABI version");
	PT_EQ(pt_ioctl_errno(dev, _IO(PEA_IOC_MAGIC, 0x7f), NULL), ENOTTY,
	      "/dev/pea: unknown ioctl gives ENOTTY");
	PT_EQ(pt_ioctl_errno(dev, PEA_IOC_MAP_CREATE, (void *)8), EFAULT,
	      "MAP_CREATE: bad pointer gives EFAULT");
	PT_EQ(pt_ioctl_errno(dev, PEA_IOC_EVENT_OPEN, (void *)8), EFAULT,
	      "EVENT_OPEN: bad pointer gives EFAULT");
}

static int map_create_errno(struct pea_map_attr a)
{
	int fd = ioctl(pt_dev(), PEA_IOC_MAP_CREATE, &a);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static void test_map_create(void)
{
	struct pea_map_attr good = {
		.key_size = 4, .value_size = 4, .max_entries = 4,
	}, a;
	int fd, fd2;

	PT_EQ(map_create_errno(good), 0, "map create: valid attr succeeds");
	a = good; a.key_size = 8;
	PT_EQ(map_create_errno(a), EINVAL, "map create: key_size 8 gives EINVAL");
	a = good; a.value_size = 8;
	PT_EQ(map_create_errno(a), EINVAL, "map create: value_size 8 gives EINVAL");
	a = good; a.max_entries = 0;
	PT_EQ(map_create_errno(a), EINVAL, "map create: max_entries 0 gives EINVAL");
	a = good; a.max_entries = PEA_MAX_ENTRIES + 1;
	PT_EQ(map_create_errno(a), E2BIG,
	      "map create: max_entries past PEA_MAX_ENTRIES gives E2BIG");
	a = good; a.max_entries = PEA_MAX_ENTRIES;
	PT_EQ(map_create_errno(a), 0,
	      "map create: max_entries PEA_MAX_ENTRIES succeeds");
	a = good; a.map_flags = 1;
	PT_EQ(map_create_errno(a), EINVAL, "map create: unknown flag gives EINVAL");
	a = good; a.map_flags = PEA_F_RDONLY | PEA_F_WRONLY;
	PT_EQ(map_create_errno(a), EINVAL,
	      "map create: RDONLY|WRONLY gives EINVAL");
	a = good; a.map_flags = PEA_F_NUMA_NODE; a.numa_node = 4096;
	PT_EQ(map_create_errno(a), EINVAL,
	      "map create: NUMA_NODE with a bad node gives EINVAL");
	a = good; a.map_flags = PEA_F_NUMA_NODE; a.numa_node = 0;
	PT_EQ(map_create_errno(a), 0, "map create: NUMA_NODE node 0 succeeds");
	a = good; a.open_flags = O_APPEND;
	PT_EQ(map_create_errno(a), EINVAL,
	      "map create: open_flags other than CLOEXEC/NONBLOCK give EINVAL");
	a = good; strcpy(a.name, "bad-name");
	PT_EQ(map_create_errno(a), EINVAL, "map create: name with '-' gives EINVAL");
	a = good; memset(a.name, 'a', sizeof(a.name));
	PT_EQ(map_create_errno(a), EINVAL,
	      "map create: unterminated name gives EINVAL");

	a = good; strcpy(a.name, "abi_dup.1");
	fd = ioctl(pt_dev(), PEA_IOC_MAP_CREATE, &a);
	PT_OK(fd >= 0, "map create: named map succeeds");
	fd2 = ioctl(pt_dev(), PEA_IOC_MAP_CREATE, &a);
	PT_OK(fd2 < 0 && errno == EEXIST,
	      "map create: a name in use gives EEXIST");
	close(fd);
	PT_EQ(map_create_errno(a), 0,
	      "map create: a name is free again once its map is closed");

	a = good; a.open_flags = O_CLOEXEC;
	fd = ioctl(pt_dev(), PEA_IOC_MAP_CREATE, &a);
	PT_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC,
	      "map create: O_CLOEXEC sets FD_CLOEXEC");
	close(fd);
}

/*
 * What perf_event_open() writes back into attr.size when it refuses @attr
 * with E2BIG (a copy of @attr, @len bytes, with attr.size @size, is
 * passed); 0 if it did not.
 */
static unsigned int perf_e2big_size(const struct perf_event_attr *attr,
				    size_t len, __u32 size)
{
	static unsigned char copy[8192];
	struct perf_event_attr *c = (void *)copy;
	long fd;

	memcpy(copy, attr, len);
	c->size = size;
	fd = syscall(SYS_perf_event_open, c, -1, 0, -1, 0);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == E2BIG ? c->size : 0;
}

static void test_event_open(void)
{
	struct perf_event_attr good = pt_output_attr(PERF_SAMPLE_RAW), a;
	struct {
		struct perf_event_attr attr;
		char tail[512];	/* past any kernel's perf_event_attr */
	} big;
	struct pea_event_open o;
	__u64 vals[2], id;
	unsigned int ksize;
	int fd;

	PT_EQ(pt_event_open_errno(&good, 0), 0, "event open: valid attr succeeds");
	a = good; a.type = PERF_TYPE_HARDWARE;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL, "event open: type HARDWARE gives EINVAL");
	a = good; a.config = PERF_COUNT_SW_CPU_CLOCK;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL,
	      "event open: config other than BPF_OUTPUT gives EINVAL");
	a = good; a.sample_type = PERF_SAMPLE_TID;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL,
	      "event open: sample_type without RAW gives EINVAL");
	a = good; a.sample_type |= PERF_SAMPLE_IP;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL,
	      "event open: sample_type IP gives EINVAL");
	a = good; a.sample_period = 2;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL, "event open: sample_period 2 gives EINVAL");
	a = good; a.freq = 1;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL, "event open: freq gives EINVAL");
	a = good; a.inherit = 1;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL, "event open: inherit gives EINVAL");
	a = good; a.exclude_kernel = 1;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL, "event open: exclude_kernel gives EINVAL");
	a = good; a.read_format = PERF_FORMAT_GROUP;
	PT_EQ(pt_event_open_errno(&a, 0), EINVAL,
	      "event open: read_format GROUP gives EINVAL");
	PT_EQ(pt_event_open_errno(&good, -1), EINVAL, "event open: cpu -1 gives EINVAL");
	PT_EQ(pt_event_open_errno(&good, 1 << 20), EINVAL,
	      "event open: cpu past nr_cpu_ids gives EINVAL");
	a = good; a.size = 32;
	PT_EQ(pt_event_open_errno(&a, 0), E2BIG, "event open: attr.size 32 gives E2BIG");
	a = good; a.size = 0;
	PT_EQ(pt_event_open_errno(&a, 0), 0, "event open: attr.size 0 means VER0");
	a = good; a.size = PERF_ATTR_SIZE_VER0;
	PT_EQ(pt_event_open_errno(&a, 0), 0, "event open: attr.size VER0 succeeds");

	memset(&big, 0, sizeof(big));
	big.attr = good;
	big.attr.size = sizeof(big);
	PT_EQ(pt_event_open_errno(&big.attr, 0), 0,
	      "event open: a larger attr with a zero tail succeeds");
	big.tail[400] = 1;
	PT_EQ(pt_event_open_errno(&big.attr, 0), E2BIG,
	      "event open: a larger attr with a non-zero tail gives E2BIG");
	/*
	 * perf_copy_attr() writes the size it knows back into attr.size on
	 * E2BIG: pea writes what perf_event_open() writes on this kernel.
	 */
	ksize = perf_e2big_size(&big.attr, sizeof(big), sizeof(big));
	PT_OK(ksize >= PERF_ATTR_SIZE_VER7 && ksize < sizeof(big),
	      "perf_event_open() writes back attr.size %u on E2BIG", ksize);
	PT_EQ(big.attr.size, ksize,
	      "event open: E2BIG (non-zero tail) writes the kernel's size back");
	a = good; a.size = 32;
	PT_EQ(pt_event_open_errno(&a, 0), E2BIG, "event open: attr.size 32 again");
	PT_EQ(a.size, ksize, "event open: E2BIG (size 32) writes the size back");
	big.attr.size = 8192;
	PT_EQ(pt_event_open_errno(&big.attr, 0), E2BIG,
	      "event open: attr.size past a page gives E2BIG");
	PT_EQ(big.attr.size, ksize,
	      "event open: E2BIG (size 8192) writes the size back");
	PT_EQ(perf_e2big_size(&big.attr, sizeof(big), 8192), ksize,
	      "perf_event_open() writes the same back for size 8192");

	memset(&o, 0, sizeof(o));
	o.attr = (uintptr_t)&good;
	o.flags = 1;
	PT_EQ(pt_ioctl_errno(pt_dev(), PEA_IOC_EVENT_OPEN, &o), EINVAL,
	      "event open: unknown flags give EINVAL");
	o.flags = 0;
	o.reserved = 1;
	PT_EQ(pt_ioctl_errno(pt_dev(), PEA_IOC_EVENT_OPEN, &o), EINVAL,
	      "event open: non-zero reserved gives EINVAL");
	o.reserved = 0;
	o.attr = 8;
	PT_EQ(pt_ioctl_errno(pt_dev(), PEA_IOC_EVENT_OPEN, &o), EFAULT,
	      "event open: bad attr pointer gives EFAULT");

	fd = pt_event_open(0, PERF_SAMPLE_RAW);
	PT_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC,
	      "event open: PEA_FLAG_FD_CLOEXEC sets FD_CLOEXEC");
	PT_EQ(read(fd, vals, 4) < 0 ? errno : 0, ENOSPC,
	      "event read: a 4-byte buffer gives ENOSPC");
	PT_EQ(read(fd, vals, sizeof(vals)), 8, "event read: returns one u64");
	PT_EQ(vals[0], 0, "event read: count 0 before any output");
	close(fd);

	a = good; a.read_format = PERF_FORMAT_ID;
	fd = pt_event_open_attr(&a, 0);
	PT_EQ(ioctl(fd, PERF_EVENT_IOC_ID, &id), 0, "PERF_EVENT_IOC_ID succeeds");
	PT_EQ(read(fd, vals, sizeof(vals)), 16,
	      "event read: read_format ID returns two u64");
	PT_OK(vals[1] == id && id != 0, "event read: the id matches IOC_ID");
	close(fd);
}

static void test_map_ioctls(void)
{
	int map = pt_map_create(NULL, 2, 0);
	int ev0 = pt_event_open(0, PERF_SAMPLE_RAW);
	int ev1 = pt_event_open(1 % pt_nr_cpus(), PERF_SAMPLE_RAW);
	struct pea_map_elem e = { 0 };
	struct pea_map_info info;
	int null_fd = open("/dev/null", O_RDONLY);
	__u64 id0;

	PT_EQ(pt_map_update(map, 2, ev0), E2BIG,
	      "map update: key == max_entries gives E2BIG");
	e.key = 0; e.fd = ev0; e.flags = 1;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_UPDATE, &e), EINVAL,
	      "map update: flags other than ANY give EINVAL");
	/* BPF checks the flags before the key (bpf_fd_array_map_update_elem). */
	e.key = 5; e.fd = ev0; e.flags = 1;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_UPDATE, &e), EINVAL,
	      "map update: bad flags and a bad key give EINVAL (flags first)");
	e.key = 5; e.fd = 999; e.flags = 2;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_UPDATE, &e), EINVAL,
	      "map update: bad flags, key and fd give EINVAL (flags first)");
	/* map_delete_elem(): a non-zero flags field fails CHECK_ATTR first. */
	e.key = 5; e.fd = 0; e.flags = 1;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_DELETE, &e), EINVAL,
	      "map delete: flags and a bad key give EINVAL (flags first)");
	/* map_lookup_elem(): flags other than BPF_F_LOCK fail first. */
	e.key = 5; e.flags = 1;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_LOOKUP, &e), EINVAL,
	      "map lookup: flags and a bad key give EINVAL (flags first)");
	e.key = 5; e.flags = 4;		/* BPF_F_LOCK: these maps have no lock */
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_LOOKUP, &e), EINVAL,
	      "map lookup: BPF_F_LOCK and a bad key give EINVAL (flags first)");
	e.flags = 0;
	PT_EQ(pt_map_update(map, 0, 999), EBADF,
	      "map update: a closed fd gives EBADF");
	PT_EQ(pt_map_update(map, 0, null_fd), EBADF,
	      "map update: a non-event fd gives EBADF");
	PT_EQ(pt_map_update(map, 0, map), EBADF,
	      "map update: a map fd as value gives EBADF");
	PT_EQ(pt_map_delete(map, 0), ENOENT, "map delete: empty slot gives ENOENT");
	PT_EQ(pt_map_delete(map, 5), E2BIG, "map delete: key past end gives E2BIG");
	e.key = 0;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_LOOKUP, &e), ENOENT,
	      "map lookup: empty slot gives ENOENT");
	e.key = 2;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_LOOKUP, &e), E2BIG,
	      "map lookup: key past end gives E2BIG");

	PT_EQ(pt_map_update(map, 0, ev0), 0, "map update: slot 0 succeeds");
	PT_EQ(pt_map_update(map, 1, ev1), 0, "map update: slot 1 succeeds");
	PT_EQ(pt_map_update(map, 1, ev0), 0, "map update: replacing a slot succeeds");
	ioctl(ev0, PERF_EVENT_IOC_ID, &id0);
	memset(&e, 0, sizeof(e));
	e.key = 1;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_LOOKUP, &e), 0,
	      "map lookup: a set slot succeeds");
	PT_OK(e.id == id0 && e.cpu == 0,
	      "map lookup: reports the event's id and cpu");
	/* pad is zero: non-zero fails first, as BPF's CHECK_ATTR does. */
	memset(&e, 0, sizeof(e));
	e.key = 1; e.fd = ev1; e.pad = 1;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_UPDATE, &e), EINVAL,
	      "map update: pad != 0 gives EINVAL");
	e.flags = 1; e.key = 5;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_UPDATE, &e), EINVAL,
	      "map update: pad, flags and key bad give EINVAL");
	memset(&e, 0, sizeof(e));
	e.key = 1; e.pad = 0x80000000;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_LOOKUP, &e), EINVAL,
	      "map lookup: pad != 0 gives EINVAL");
	PT_OK(e.pad == 0x80000000 && e.id == 0 && e.cpu == 0,
	      "map lookup: a refused lookup writes nothing back");
	e.key = 1; e.pad = 1;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_DELETE, &e), EINVAL,
	      "map delete: pad != 0 gives EINVAL");
	memset(&e, 0, sizeof(e));
	e.key = 1;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_LOOKUP, &e), 0,
	      "map lookup: the slot is still set after the refused ioctls");
	PT_OK(e.id == id0 && e.pad == 0,
	      "map lookup: still the first event, pad 0");
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_INFO, &info), 0, "map info succeeds");
	PT_OK(info.max_entries == 2 && info.key_size == 4 &&
	      info.value_size == 4 && info.nr_used == 2 && info.id != 0,
	      "map info: max_entries 2, sizes 4, 2 slots used");
	PT_OK(info.bpf_handle == 0 && !info.reserved[0] && !info.reserved[1],
	      "map info: no BPF handle without PEA_F_BPF_WRITE, reserved 0");
	{
		/* A binary built before bpf_handle: the old size's number. */
		unsigned char old[sizeof(info) + 8];

		memset(old, 0xa5, sizeof(old));
		PT_EQ(pt_ioctl_errno(map, _IOC(_IOC_READ, PEA_IOC_MAGIC, 0x13,
					       PEA_MAP_INFO_SIZE_VER0), old), 0,
		      "map info of the old size (%d bytes) succeeds",
		      PEA_MAP_INFO_SIZE_VER0);
		PT_OK(!memcmp(old, &info, PEA_MAP_INFO_SIZE_VER0) &&
		      old[PEA_MAP_INFO_SIZE_VER0] == 0xa5,
		      "map info of the old size: the same fields, nothing past them");
	}
	PT_EQ(pt_map_delete(map, 1), 0, "map delete: a set slot succeeds");
	PT_EQ(pt_map_delete(map, 1), ENOENT, "map delete: twice gives ENOENT");
	PT_EQ(pt_ioctl_errno(map, _IO(PEA_IOC_MAGIC, 0x1f), NULL), ENOTTY,
	      "map: unknown ioctl gives ENOTTY");
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_UPDATE, (void *)8), EFAULT,
	      "map update: bad pointer gives EFAULT");
	close(map);

	map = pt_map_create(NULL, 2, PEA_F_RDONLY);
	PT_EQ(pt_map_update(map, 0, ev0), EPERM, "RDONLY map: update gives EPERM");
	PT_EQ(pt_map_delete(map, 0), EPERM, "RDONLY map: delete gives EPERM");
	e.key = 5; e.fd = ev0; e.flags = 1;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_UPDATE, &e), EPERM,
	      "RDONLY map: update with bad flags and key gives EPERM (first)");
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_DELETE, &e), EINVAL,
	      "RDONLY map: delete with flags gives EINVAL (before EPERM)");
	memset(&e, 0, sizeof(e));
	e.key = 0; e.fd = ev0; e.pad = 1;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_UPDATE, &e), EINVAL,
	      "RDONLY map: update with pad != 0 gives EINVAL (before EPERM)");
	memset(&e, 0, sizeof(e));
	e.key = 0;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_LOOKUP, &e), ENOENT,
	      "RDONLY map: lookup is allowed");
	close(map);
	map = pt_map_create(NULL, 2, PEA_F_WRONLY);
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_LOOKUP, &e), EPERM,
	      "WRONLY map: lookup gives EPERM");
	e.key = 5; e.flags = 1;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_LOOKUP, &e), EINVAL,
	      "WRONLY map: lookup with flags 1 gives EINVAL (before EPERM)");
	e.flags = 4;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_LOOKUP, &e), EPERM,
	      "WRONLY map: lookup with BPF_F_LOCK gives EPERM (before EINVAL)");
	e.flags = 0; e.key = 0; e.pad = 1;
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_LOOKUP, &e), EINVAL,
	      "WRONLY map: lookup with pad != 0 gives EINVAL (before EPERM)");
	memset(&e, 0, sizeof(e));
	PT_EQ(pt_map_update(map, 0, ev0), 0, "WRONLY map: update is allowed");
	close(map);
	close(ev0);
	close(ev1);
	close(null_fd);
}

static void test_event_ioctls(void)
{
	int fd = pt_event_open(0, PERF_SAMPLE_RAW);
	int fd2 = pt_event_open(0, PERF_SAMPLE_RAW);
	struct pea_event_stats st;
	__u64 id = 0, id2 = 0, lost = 7;

	PT_EQ(ioctl(fd, PERF_EVENT_IOC_ID, &id), 0, "IOC_ID succeeds");
	ioctl(fd2, PERF_EVENT_IOC_ID, &id2);
	PT_OK(id && id2 && id != id2, "IOC_ID: ids are non-zero and unique");
	PT_EQ(pt_ioctl_errno(fd, PERF_EVENT_IOC_ID, (void *)8), EFAULT,
	      "IOC_ID: bad pointer gives EFAULT");
	PT_EQ(pt_ioctl_errno(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, (void *)1), EINVAL,
	      "PAUSE_OUTPUT without a mapping gives EINVAL (as perf)");
	PT_EQ(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0, "IOC_DISABLE succeeds");
	PT_EQ(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0, "IOC_ENABLE succeeds");
	PT_EQ(ioctl(fd, PERF_EVENT_IOC_RESET, 0), 0, "IOC_RESET succeeds");
	PT_EQ(pt_ioctl_errno(fd, PERF_EVENT_IOC_SET_BPF, (void *)0), ENOTTY,
	      "IOC_SET_BPF gives ENOTTY");
	PT_EQ(pt_ioctl_errno(fd, PERF_EVENT_IOC_PERIOD, &id), ENOTTY,
	      "IOC_PERIOD gives ENOTTY");
	PT_EQ(ioctl(fd, PEA_EVENT_IOC_STATS, &st), 0, "IOC_STATS succeeds");
	PT_OK(st.records == 0 && st.lost == 0 && st.cpu == 0 &&
	      st.data_pages == 0, "IOC_STATS: a new event is empty, unmapped");
	PT_EQ(ioctl(fd, PEA_EVENT_IOC_TAKE_LOST, &lost), 0, "IOC_TAKE_LOST succeeds");
	PT_EQ(lost, 0, "IOC_TAKE_LOST: nothing lost yet");
	close(fd);
	close(fd2);
}

static void test_mmap(void)
{
	long ps = pt_page_size();
	int fd = pt_event_open(0, PERF_SAMPLE_RAW);
	struct pea_event_stats st;
	struct pt_ring r, r2;
	void *p;

	p = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, ps);
	PT_OK(p == MAP_FAILED && errno == EINVAL, "mmap: offset != 0 gives EINVAL");
	p = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	PT_OK(p == MAP_FAILED && errno == EINVAL, "mmap: MAP_PRIVATE gives EINVAL");
	p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	PT_OK(p == MAP_FAILED && errno == EINVAL,
	      "mmap: 1 page (no data pages) gives EINVAL");
	p = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	PT_OK(p == MAP_FAILED && errno == EINVAL,
	      "mmap: 1 + 3 pages gives EINVAL");
	p = mmap(NULL, (1 + 2 * PEA_MAX_RING_PAGES) * ps,
		 PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	PT_OK(p == MAP_FAILED && errno == EINVAL,
	      "mmap: more than PEA_MAX_RING_PAGES gives EINVAL");

	PT_EQ(pt_ring_map(&r, fd, 4, PROT_READ | PROT_WRITE), 0,
	      "mmap: 1 + 4 pages succeeds");
	PT_EQ(r.pg->data_offset, ps, "mmap page: data_offset is PAGE_SIZE");
	PT_EQ(r.pg->data_size, 4 * ps, "mmap page: data_size is 4 pages");
	PT_EQ(r.pg->data_head, 0, "mmap page: data_head starts at 0");
	PT_EQ(r.pg->data_tail, 0, "mmap page: data_tail starts at 0");
	PT_EQ(r.pg->size, 96, "mmap page: size is offsetof(__reserved)");
	PT_EQ(r.pg->cap_bit0_is_deprecated, 1,
	      "mmap page: cap_bit0_is_deprecated is 1");
	PT_EQ(r.pg->version, 0, "mmap page: version 0, as Linux leaves it");
	PT_EQ(PEA_PAGE_LOST_HINT(r.pg), 0, "mmap page: no lost hint");
	PT_EQ(ioctl(fd, PEA_EVENT_IOC_STATS, &st), 0, "IOC_STATS while mapped");
	PT_EQ(st.data_pages, 4, "IOC_STATS: data_pages 4 while mapped");

	p = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	PT_OK(p == MAP_FAILED && errno == EINVAL,
	      "mmap: a second mapping of another size gives EINVAL");
	PT_EQ(pt_ring_map(&r2, fd, 4, PROT_READ | PROT_WRITE), 0,
	      "mmap: a second mapping of the same size succeeds");
	r.pg->data_tail = 4242;
	PT_EQ(r2.pg->data_tail, 4242, "mmap: both mappings share the page");
	r.pg->data_tail = 0;
	PT_EQ(munmap((char *)r.pg + ps, ps) < 0 ? errno : 0, EINVAL,
	      "munmap: a partial unmap gives EINVAL");
	p = mremap(r.pg, r.map_len, r.map_len + ps, 0);
	PT_OK(p == MAP_FAILED, "mremap: growing the mapping fails");
	pt_ring_unmap(&r);
	PT_EQ(r2.pg->data_size, 4 * ps,
	      "munmap: the ring survives while another mapping exists");
	pt_ring_unmap(&r2);
	PT_EQ(ioctl(fd, PEA_EVENT_IOC_STATS, &st), 0, "IOC_STATS after munmap");
	PT_EQ(st.data_pages, 0, "IOC_STATS: no ring after the last munmap");
	PT_EQ(pt_ring_map(&r, fd, 2, PROT_READ | PROT_WRITE), 0,
	      "mmap: another size after the last munmap succeeds");
	pt_ring_unmap(&r);
	close(fd);
}

/* An offline CPU: ENODEV, as perf_event_open(). */
static void test_offline_cpu(void)
{
	const char *online = "/sys/devices/system/cpu/cpu3/online";

	PT_EQ(pt_write_file(online, "0"), 0, "CPU 3 taken offline");
	PT_EQ(pt_event_open_errno(&(struct perf_event_attr){
		.size = sizeof(struct perf_event_attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_BPF_OUTPUT,
		.sample_type = PERF_SAMPLE_RAW }, 3), ENODEV,
	      "event open: an offline CPU gives ENODEV");
	PT_EQ(pt_write_file(online, "1"), 0, "CPU 3 back online");
	PT_EQ(pt_event_open_errno(&(struct perf_event_attr){
		.size = sizeof(struct perf_event_attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_BPF_OUTPUT,
		.sample_type = PERF_SAMPLE_RAW }, 3), 0,
	      "event open: CPU 3 online again succeeds");
}

int main(void)
{
	test_page_layout();
	test_device();
	test_map_create();
	test_event_open();
	test_map_ioctls();
	test_event_ioctls();
	test_mmap();
	test_offline_cpu();
	return pt_done();
}
