// SPDX-License-Identifier: GPL-2.0
/*
 * pea applies the kernel's perf_event_paranoid and perf_event_mlock_kb,
 * whatever the task that loads the module sees as its filesystem: the
 * module is reloaded from a chroot whose /proc/sys/kernel holds other
 * values (paranoid 3, a huge budget, a stack depth of 127), and nobody
 * then gets a counter as perf_event_open() does at the kernel's paranoid
 * -1, and is refused a ring over the kernel's budget of 8 KiB a CPU
 * (EPERM, paranoid 2); a kernel stack deeper than the kernel's
 * perf_event_max_stack (16) is EOVERFLOW, as perf_event_open() answers.
 */
#include <sys/mount.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_counter.h"
#include "pt_perm.h"

#define PEA_KO		"/lib/modules/pea/pea.ko"
#define FAKE		"/tmp/pt_fakeroot"
#define PT_MAX_STACK	"/proc/sys/kernel/perf_event_max_stack"

static int delete_module(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? errno : 0;
}

static int load_pea(void)
{
	int ko = open(PEA_KO, O_RDONLY | O_CLOEXEC), err = 0;

	if (ko < 0)
		return errno;
	if (syscall(SYS_finit_module, ko, "", 0))
		err = errno;
	close(ko);
	return err;
}

/* The module is reloaded from inside a root that lies about the sysctls. */
static int chroot_load(void *arg __attribute__((unused)))
{
	int ko = open(PEA_KO, O_RDONLY | O_CLOEXEC);

	if (ko < 0 || chroot(FAKE) || chdir("/"))
		return 100;
	return syscall(SYS_finit_module, ko, "", 0) ? errno : 0;
}

/* As nobody: a counter through pea, and what perf_event_open() says. */
static int nobody_counter(void *arg)
{
	struct perf_event_attr a = pt_counter_attr(PERF_TYPE_SOFTWARE,
						   PERF_COUNT_SW_PAGE_FAULTS);
	int fd, *perf = arg;

	a.exclude_kernel = 1;
	if (pt_drop_to_nobody(-1))
		return 100;
	if (perf)
		return pt_perf_open_errno(&a, -1, 0);
	fd = pt_event_open_attr(&a, 0);
	return fd < 0 ? -fd : 0;
}

/* As nobody with no RLIMIT_MEMLOCK: map a 64-page ring. */
static int nobody_ring(void *arg __attribute__((unused)))
{
	struct rlimit rl = { 0, 0 };
	void *p;
	int fd;

	if (pt_drop_to_nobody(-1) || setrlimit(RLIMIT_MEMLOCK, &rl))
		return 100;
	fd = pt_event_open(0, PERF_SAMPLE_RAW);
	if (fd < 0)
		return 101;
	p = mmap(NULL, 65 * pt_page_size(), PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? errno : 0;
}

/* perf_event_open() of a sampling event with kernel callchains: errno. */
static int perf_callchain_errno(__u32 max_stack)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 1000000;
	a.sample_type = PERF_SAMPLE_CALLCHAIN;
	a.sample_max_stack = max_stack;
	a.exclude_user = 1;
	return pt_perf_open_errno(&a, 0, -1);
}

/* A kprobe link with a kernel stack of @arg frames, in a child: errno. */
static int kstack_link(void *arg)
{
	struct pea_probe_attr a;
	int map = pt_map_create("pt_kstack", 1, 0), fd;

	if (map < 0)
		return 100;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.filter_cpu = -1;
	a.kstack_depth = (__u32)(long)arg;
	strcpy(a.symbol, "ksys_mmap_pgoff");
	fd = ioctl(map, PEA_MAP_IOC_ATTACH_PROBE, &a);
	return fd < 0 ? errno : 0;
}

static void fake_file(const char *name, const char *val)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), FAKE "/proc/sys/kernel/%s", name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		pt_fatal(path);
	close(fd);
}

int main(void)
{
	long paranoid = pt_perm_read_int(PT_PARANOID);
	long mlock_kb = pt_perm_read_int(PT_MLOCK_KB);
	long max_stack = pt_perm_read_int(PT_MAX_STACK);
	int perf = 0, err;
	struct stat st;

	if (stat(PEA_DEVICE_PATH, &st))
		pt_fatal("stat " PEA_DEVICE_PATH);
	if (system("mkdir -p " FAKE "/proc/sys/kernel"))
		pt_fatal("mkdir");
	fake_file("perf_event_paranoid", "3\n");
	fake_file("perf_event_mlock_kb", "100000\n");
	fake_file("perf_event_max_stack", "127\n");

	err = delete_module("pea_selftest");
	PT_OK(err == 0 || err == ENOENT, "pea_selftest unloaded (%d)", err);
	PT_EQ(delete_module("pea"), 0, "pea unloaded");
	PT_EQ(pt_in_child(chroot_load, NULL), 0,
	      "pea loaded from a root whose sysctls say 3 and 100000");
	PT_EQ(pt_perm_write_int(PT_PARANOID, -1), 0, "perf_event_paranoid -1");
	PT_EQ(pt_perm_write_int(PT_MLOCK_KB, 8), 0, "perf_event_mlock_kb 8");
	PT_EQ(chmod(PEA_DEVICE_PATH, 0666), 0, "/dev/pea opened to others");

	perf = pt_in_child(nobody_counter, &perf);
	PT_EQ(perf, 0, "perf_event_open() as nobody at paranoid -1: a counter");
	PT_EQ(pt_in_child(nobody_counter, NULL), perf,
	      "pea's counter as nobody: as perf, by the kernel's paranoid");
	PT_EQ(pt_perm_write_int(PT_PARANOID, 2), 0, "perf_event_paranoid 2");
	PT_EQ(pt_in_child(nobody_ring, NULL), EPERM,
	      "a 64-page ring over the kernel's 8 KiB x CPUs, no RLIMIT_MEMLOCK: EPERM");

	PT_EQ(pt_perm_write_int(PT_MAX_STACK, 16), 0, "perf_event_max_stack 16");
	PT_EQ(perf_callchain_errno(17), EOVERFLOW,
	      "perf_event_open(), sample_max_stack 17: EOVERFLOW");
	PT_EQ(pt_in_child(kstack_link, (void *)17L), EOVERFLOW,
	      "pea kprobe, kstack_depth 17: EOVERFLOW, by the kernel's bound");
	PT_EQ(perf_callchain_errno(16), 0, "perf_event_open(), sample_max_stack 16");
	PT_EQ(pt_in_child(kstack_link, (void *)16L), 0,
	      "pea kprobe, kstack_depth 16: attaches");
	PT_EQ(pt_perm_write_int(PT_MAX_STACK, max_stack), 0,
	      "perf_event_max_stack restored (%ld)", max_stack);
	PT_EQ(pt_perm_write_int(PT_PARANOID, paranoid), 0,
	      "perf_event_paranoid restored (%ld)", paranoid);
	PT_EQ(pt_perm_write_int(PT_MLOCK_KB, mlock_kb), 0,
	      "perf_event_mlock_kb restored (%ld)", mlock_kb);
	/* Leave pea as the harness loaded it. */
	PT_EQ(delete_module("pea"), 0, "pea unloaded again");
	PT_EQ(load_pea(), 0, "pea loaded from the real root");
	PT_EQ(chmod(PEA_DEVICE_PATH, st.st_mode & 07777), 0,
	      "device mode restored");
	return pt_done();
}
