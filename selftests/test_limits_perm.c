// SPDX-License-Identifier: GPL-2.0
/*
 * Who may do what once /dev/pea is opened to other users (mode 0666):
 * anyone who can open it creates unnamed maps and output events and maps
 * their rings (charged, see test_limits_mlock); a map name, by which
 * kernel producers find a map and hand it their data, needs CAP_PERFMON
 * or CAP_SYS_ADMIN (EPERM), so no unprivileged user can squat a name a
 * producer will look up; kprobes need what the kprobe PMU needs (EACCES,
 * test_caps).
 */
#include "pea_test.h"
#include "pt_perm.h"

static int dev = -1;

static int map_create(const char *name)
{
	struct pea_map_attr a = {
		.key_size = 4, .value_size = 4, .max_entries = 4,
		.open_flags = O_CLOEXEC,
	};
	int fd;

	if (name)
		strncpy(a.name, name, sizeof(a.name) - 1);
	fd = ioctl(dev, PEA_IOC_MAP_CREATE, &a);
	return fd < 0 ? -errno : fd;
}

static int map_create_errno(const char *name)
{
	int fd = map_create(name);

	if (fd < 0)
		return -fd;
	close(fd);
	return 0;
}

static int perfmon_child(void *arg)
{
	if (pt_back_to_root() || pt_drop_to_nobody(CAP_PERFMON))
		return 100;
	return map_create_errno(arg);
}

int main(void)
{
	struct perf_event_attr attr = pt_output_attr(PERF_SAMPLE_RAW);
	struct pea_event_open o = {
		.attr = (uintptr_t)&attr, .cpu = 0,
		.flags = PEA_FLAG_FD_CLOEXEC,
	};
	struct pea_probe_attr pa;
	struct stat st;
	int map, ev, root_map;
	char payload[8] = "pea";
	void *ring;

	if (stat(PEA_DEVICE_PATH, &st))
		pt_fatal("stat " PEA_DEVICE_PATH);
	pt_st();	/* the test module, opened as root */
	PT_EQ(chmod(PEA_DEVICE_PATH, 0666), 0, "/dev/pea opened to others");
	PT_EQ(pt_as_nobody(), 0, "now nobody");
	dev = open(PEA_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	PT_OK(dev >= 0, "nobody opens /dev/pea");

	map = map_create(NULL);
	PT_OK(map >= 0, "nobody creates an unnamed map");
	PT_EQ(map_create_errno("pt_squat"), EPERM,
	      "nobody creating a named map: EPERM");
	ev = ioctl(dev, PEA_IOC_EVENT_OPEN, &o);
	PT_OK(ev >= 0, "nobody creates an output event");
	ring = mmap(NULL, 2 * pt_page_size(), PROT_READ | PROT_WRITE,
		    MAP_SHARED, ev, 0);
	PT_OK(ring != MAP_FAILED, "nobody maps its ring");
	PT_EQ(pt_map_update(map, 0, ev), 0, "nobody puts it in its map");
	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	strcpy(pa.symbol, "ksys_mmap_pgoff");
	PT_EQ(pt_ioctl_errno(map, PEA_MAP_IOC_ATTACH_PROBE, &pa), EACCES,
	      "nobody attaching a kprobe to its map: EACCES (as the kprobe PMU)");
	PT_EQ(pt_in_child(perfmon_child, "pt_perfmon"), 0,
	      "nobody with CAP_PERFMON creates a named map");

	PT_EQ(pt_back_to_root(), 0, "root again");
	PT_EQ(pt_output("pt_squat", PEA_F_CURRENT_CPU, payload, sizeof(payload)),
	      -ENOENT, "a producer looking up the name finds nothing");
	root_map = map_create("pt_squat");
	PT_OK(root_map >= 0, "root creates the named map");
	PT_EQ(map_create_errno("pt_squat"), EEXIST, "root again: EEXIST");
	PT_EQ(pt_as_nobody(), 0, "nobody again");
	PT_EQ(map_create_errno("pt_squat"), EPERM,
	      "nobody, name taken: still EPERM (nothing learnt)");
	PT_EQ(pt_back_to_root(), 0, "root again");

	close(root_map);
	if (ring != MAP_FAILED)
		munmap(ring, 2 * pt_page_size());
	close(ev);
	close(map);
	PT_EQ(chmod(PEA_DEVICE_PATH, st.st_mode & 07777), 0,
	      "device mode restored");
	return pt_done();
}
