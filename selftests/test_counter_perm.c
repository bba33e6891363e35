// SPDX-License-Identifier: GPL-2.0
/*
 * Who may create a counter: perf_event_open()'s rules for a CPU-wide
 * event. Every counter is CPU-wide, so it needs perf_event_paranoid <= 0
 * or CAP_PERFMON (or CAP_SYS_ADMIN), else EACCES; exclude_kernel == 0 also
 * needs paranoid <= 1 or the capability (implied by the first rule). The
 * checks apply to the caller's credentials: each case runs in a child
 * that opened /dev/pea as root and then became nobody, keeping only the
 * capabilities the case names. A PMU that lacks the event still answers
 * first when the kernel does not need to be counted (ENOENT, as perf).
 */
#include <sys/prctl.h>
#include <linux/capability.h>
#include "pea_test.h"
#include "pt_counter.h"

#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define NOBODY		65534

#ifndef CAP_PERFMON
#define CAP_PERFMON	38
#endif

static int set_paranoid(int level)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", level);
	return pt_write_file(PARANOID, buf);
}

/* Become nobody, keeping only @cap (-1: none); -errno or 0. */
static int drop_to_nobody(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (cap >= 0 && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return -errno;
	if (setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return -errno;
	memset(data, 0, sizeof(data));
	if (cap >= 0) {
		data[cap / 32].effective = 1U << (cap % 32);
		data[cap / 32].permitted = 1U << (cap % 32);
	}
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

/*
 * Create @type/@config on CPU 1 at perf_event_paranoid @paranoid as
 * nobody with capability @cap (-1: none; -2: stay root). Returns 0 or the
 * errno of the creation (or 200 + errno if the set-up failed).
 */
static int try_create(int paranoid, int cap, __u32 type, __u64 config,
		      bool exclude_kernel)
{
	struct perf_event_attr a = pt_counter_attr(type, config);
	int status, fd;
	pid_t pid;

	if (set_paranoid(paranoid))
		return 200 + EIO;
	a.exclude_kernel = exclude_kernel;
	pt_dev();
	pid = fork();
	if (pid == 0) {
		if (cap != -2 && drop_to_nobody(cap))
			_exit(200 + errno);
		fd = pt_event_open_attr(&a, 1);
		_exit(fd < 0 ? -fd : 0);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

int main(void)
{
	__u32 sw = PERF_TYPE_SOFTWARE, hw = PERF_TYPE_HARDWARE;
	__u64 pf = PERF_COUNT_SW_PAGE_FAULTS;
	char orig[16];

	pt_st();	/* anchors the software events' jump labels */
	if (pt_read_file(PARANOID, orig, sizeof(orig)))
		pt_fatal("read " PARANOID);
	pt_diag("perf_event_paranoid was %d", atoi(orig));

	PT_EQ(try_create(2, -1, sw, pf, true), EACCES,
	      "paranoid 2, nobody: EACCES (a CPU-wide counter)");
	PT_EQ(try_create(1, -1, sw, pf, true), EACCES,
	      "paranoid 1, nobody, exclude_kernel: EACCES (CPU-wide needs <= 0)");
	PT_EQ(try_create(1, -1, sw, pf, false), EACCES,
	      "paranoid 1, nobody, kernel counted: EACCES");
	PT_EQ(try_create(0, -1, sw, pf, false), 0,
	      "paranoid 0, nobody, kernel counted: allowed (<= 0 and <= 1)");
	PT_EQ(try_create(0, -1, sw, pf, true), 0,
	      "paranoid 0, nobody, exclude_kernel: allowed");
	PT_EQ(try_create(-1, -1, sw, pf, false), 0,
	      "paranoid -1, nobody: allowed");
	PT_EQ(try_create(2, CAP_PERFMON, sw, pf, false), 0,
	      "paranoid 2, nobody with CAP_PERFMON: allowed");
	PT_EQ(try_create(2, CAP_SYS_ADMIN, sw, pf, false), 0,
	      "paranoid 2, nobody with CAP_SYS_ADMIN: allowed");
	PT_EQ(try_create(2, CAP_SYS_PTRACE, sw, pf, false), EACCES,
	      "paranoid 2, nobody with an unrelated capability: EACCES");
	PT_EQ(try_create(3, CAP_PERFMON, sw, pf, false), 0,
	      "paranoid 3 (Debian's level), CAP_PERFMON: allowed");
	PT_EQ(try_create(3, -2, sw, pf, false), 0, "paranoid 3, root: allowed");
	PT_EQ(try_create(3, -1, sw, pf, true), EACCES,
	      "paranoid 3, nobody: EACCES");
	PT_EQ(try_create(1, -1, hw, 0, true), ENOENT,
	      "paranoid 1, nobody, cycles:u: ENOENT (no PMU answers before the CPU-wide rule, as perf)");
	PT_EQ(try_create(0, -1, hw, 0, false), ENOENT,
	      "paranoid 0, nobody, cycles: ENOENT (allowed, but no PMU)");

	PT_EQ(pt_write_file(PARANOID, orig), 0, "perf_event_paranoid restored");
	return pt_done();
}
