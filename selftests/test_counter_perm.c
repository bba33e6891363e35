// SPDX-License-Identifier: GPL-2.0
/*
 * Who may create a counter: perf_event_open()'s rules for a CPU-wide
 * event, at every perf_event_paranoid level including Debian's 3 (nothing
 * without CAP_SYS_ADMIN, EACCES before anything else). Below that every
 * counter is CPU-wide, so it needs paranoid <= 0 or CAP_PERFMON (or
 * CAP_SYS_ADMIN), else EACCES; exclude_kernel == 0 also needs paranoid
 * <= 1 or the capability, checked before the PMU is asked. The checks
 * apply to the caller's credentials: each case runs in a child that
 * opened /dev/pea as root and then became nobody, keeping only the
 * capabilities the case names, and each case also calls the real
 * perf_event_open() (pid -1, CPU 1, the same attr) and must get the same
 * errno.
 */
#include "pea_test.h"
#include "pt_counter.h"
#include "pt_perm.h"

/*
 * Create @type/@config on CPU 1 at perf_event_paranoid @paranoid as
 * nobody with capability @cap (-1: none; -2: stay root), through pea and
 * through perf_event_open() for the same attr. Returns pea's errno (0 if
 * allowed; 200 + errno if the set-up failed) and stores perf's in @perf.
 */
static int try_create(int paranoid, int cap, __u32 type, __u64 config,
		      bool exclude_kernel, int *perf)
{
	struct perf_event_attr a = pt_counter_attr(type, config);
	int status, fd, p[2], err;
	pid_t pid;

	*perf = -1;
	if (pt_perm_write_int(PT_PARANOID, paranoid) || pipe(p))
		return 200 + EIO;
	a.exclude_kernel = exclude_kernel;
	pt_dev();
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (cap != -2 && pt_drop_to_nobody(cap))
			_exit(200 + errno);
		err = pt_perf_open_errno(&a, -1, 1);
		if (write(p[1], &err, sizeof(err)) != sizeof(err))
			_exit(200 + EIO);
		fd = pt_event_open_attr(&a, 1);
		_exit(fd < 0 ? -fd : 0);
	}
	close(p[1]);
	if (read(p[0], perf, sizeof(*perf)) != sizeof(*perf))
		*perf = -1;
	close(p[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

/* Assert pea's errno, and that perf_event_open() gave the same. */
#define CASE(want, desc, ...) do {					\
	const char *__d = (desc);					\
	int __perf, __pea = try_create(__VA_ARGS__, &__perf);		\
	PT_EQ(__pea, want, "%s", __d);					\
	PT_EQ(__perf, __pea, "%s: as perf_event_open()", __d);		\
} while (0)

int main(void)
{
	__u32 sw = PERF_TYPE_SOFTWARE, hw = PERF_TYPE_HARDWARE;
	__u64 pf = PERF_COUNT_SW_PAGE_FAULTS;
	long orig;

	pt_st();	/* anchors the software events' jump labels */
	orig = pt_perm_read_int(PT_PARANOID);
	pt_diag("perf_event_paranoid was %ld", orig);

	CASE(EACCES, "paranoid 3 (Debian), nobody, exclude_kernel: EACCES",
	     3, -1, sw, pf, true);
	CASE(EACCES, "paranoid 3, nobody, kernel counted: EACCES",
	     3, -1, sw, pf, false);
	CASE(EACCES, "paranoid 3, nobody, cycles:u: EACCES before the PMU",
	     3, -1, hw, 0, true);
	CASE(EACCES, "paranoid 3, nobody with CAP_PERFMON: EACCES (Debian wants CAP_SYS_ADMIN)",
	     3, CAP_PERFMON, sw, pf, false);
	CASE(0, "paranoid 3, nobody with CAP_SYS_ADMIN: allowed",
	     3, CAP_SYS_ADMIN, sw, pf, false);
	CASE(0, "paranoid 3, root: allowed", 3, -2, sw, pf, false);
	CASE(EACCES, "paranoid 2, nobody: EACCES (a CPU-wide counter)",
	     2, -1, sw, pf, true);
	CASE(EACCES, "paranoid 2, nobody, kernel counted: EACCES",
	     2, -1, sw, pf, false);
	CASE(EACCES, "paranoid 2, nobody, cycles (kernel): EACCES before the PMU",
	     2, -1, hw, 0, false);
	CASE(ENOENT, "paranoid 2, nobody, cycles:u: ENOENT (the PMU answers first)",
	     2, -1, hw, 0, true);
	CASE(0, "paranoid 2, nobody with CAP_PERFMON: allowed",
	     2, CAP_PERFMON, sw, pf, false);
	CASE(0, "paranoid 2, nobody with CAP_SYS_ADMIN: allowed",
	     2, CAP_SYS_ADMIN, sw, pf, false);
	CASE(EACCES, "paranoid 2, nobody with an unrelated capability: EACCES",
	     2, CAP_SYS_PTRACE, sw, pf, false);
	CASE(EACCES, "paranoid 1, nobody, exclude_kernel: EACCES (CPU-wide needs <= 0)",
	     1, -1, sw, pf, true);
	CASE(EACCES, "paranoid 1, nobody, kernel counted: EACCES",
	     1, -1, sw, pf, false);
	CASE(ENOENT, "paranoid 1, nobody, cycles:u: ENOENT (no PMU)",
	     1, -1, hw, 0, true);
	CASE(0, "paranoid 0, nobody, kernel counted: allowed",
	     0, -1, sw, pf, false);
	CASE(0, "paranoid 0, nobody, exclude_kernel: allowed",
	     0, -1, sw, pf, true);
	CASE(ENOENT, "paranoid 0, nobody, cycles: ENOENT (allowed, but no PMU)",
	     0, -1, hw, 0, false);
	CASE(0, "paranoid -1, nobody: allowed", -1, -1, sw, pf, false);

	PT_EQ(pt_perm_write_int(PT_PARANOID, orig), 0,
	      "perf_event_paranoid restored");
	return pt_done();
}
