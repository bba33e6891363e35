/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the permission and limit selftests: becoming nobody with a
 * chosen capability, opening /dev/pea to other users, the perf sysctls.
 * Include after pea_test.h (and pt_counter.h: pt_pmu_type()).
 */
#ifndef _PT_PERM_H
#define _PT_PERM_H

#include <grp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/capability.h>

#define PT_NOBODY	65534
#define PT_PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define PT_MLOCK_KB	"/proc/sys/kernel/perf_event_mlock_kb"

#ifndef CAP_PERFMON
#define CAP_PERFMON	38
#endif
#ifndef CAP_BPF
#define CAP_BPF		39
#endif

static inline int pt_perm_write_int(const char *path, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	return pt_write_file(path, buf);
}

/* An integer file such as a sysctl; -1000000 if unreadable. */
static inline long pt_perm_read_int(const char *path)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1000000;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1000000;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/*
 * Become nobody for good, keeping only the capabilities in @caps (bit N:
 * capability N); -errno or 0. Supplementary groups are dropped too.
 */
static inline int pt_drop_to_nobody_caps(__u64 caps)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (caps && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return -errno;
	if (setgroups(0, NULL) ||
	    setresgid(PT_NOBODY, PT_NOBODY, PT_NOBODY) ||
	    setresuid(PT_NOBODY, PT_NOBODY, PT_NOBODY))
		return -errno;
	memset(data, 0, sizeof(data));
	data[0].effective = data[0].permitted = (__u32)caps;
	data[1].effective = data[1].permitted = (__u32)(caps >> 32);
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

/* Become nobody for good, keeping only capability @cap (-1: none). */
static inline int pt_drop_to_nobody(int cap)
{
	return pt_drop_to_nobody_caps(cap >= 0 ? 1ULL << cap : 0);
}

/*
 * Be nobody for a while: real and effective uid nobody (so the kernel
 * charges nobody's user_struct and clears the effective capabilities),
 * saved uid root, so that pt_back_to_root() can return.
 */
static inline int pt_as_nobody(void)
{
	return setresuid(PT_NOBODY, PT_NOBODY, 0) ? -errno : 0;
}

static inline int pt_back_to_root(void)
{
	return setresuid(0, 0, 0) ? -errno : 0;
}

/* Run @fn(@arg) in a child; returns its exit status (255 if killed). */
static inline int pt_in_child(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(fn(arg));
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 254;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

/* perf_event_open(2) and close: 0 if it opened, else the errno. */
static inline int pt_perf_open_errno(struct perf_event_attr *a, int pid,
				     int cpu)
{
	int fd = syscall(SYS_perf_event_open, a, pid, cpu, -1, 0);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * A perf_event_open() attr for the uprobe PMU (type @type) on @path at
 * file offset @off, a uretprobe with @ret: the PMU's "retprobe" format
 * bit is config:0, the path config1, the offset config2.
 */
static inline struct perf_event_attr pt_uprobe_pmu_attr(int type,
							const char *path,
							__u64 off, bool ret)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = ret;
	a.config1 = (uintptr_t)path;
	a.config2 = off;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_RAW;
	a.exclude_kernel = 1;
	return a;
}

#endif /* _PT_PERM_H */
