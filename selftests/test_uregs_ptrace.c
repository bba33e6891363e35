// SPDX-License-Identifier: GPL-2.0
/*
 * pea.task_ptrace=1 admits a per-task sampler of another process on
 * ptrace read access without the LSM's ptrace hook (docs/security.md);
 * the user registers and stack copy (PEA_SAMPLE_F_USER_REGS) would then
 * hand out that process's raw stack memory, which an LSM ptrace policy
 * exists to deny. So they need what the default needs for another
 * process, CAP_PERFMON (review of dwunw, finding 2). The module is
 * reloaded with task_ptrace=1; as nobody at perf_event_paranoid 2, with
 * a sibling process of nobody's (dumpable: it execs sleep):
 *   - a user-only sampler of the sibling: admitted (task_ptrace);
 *   - the same with the user registers and stack: EACCES;
 *   - its own task with them: admitted (its own thread group);
 *   - perf_event_open() of the sibling with PERF_SAMPLE_REGS_USER |
 *     PERF_SAMPLE_STACK_USER: what Linux answers without an LSM policy,
 *     for the record (pea is stricter there, by design).
 * Then the module is reloaded as the harness loaded it.
 */
#include <sys/syscall.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_perm.h"

#define PEA_KO		"/lib/modules/pea/pea.ko"

static int delete_module(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? errno : 0;
}

static int load_pea(const char *params)
{
	int ko = open(PEA_KO, O_RDONLY | O_CLOEXEC), err = 0;

	if (ko < 0)
		return errno;
	if (syscall(SYS_finit_module, ko, params, 0))
		err = errno;
	close(ko);
	return err;
}

static int map_fd;	/* made by root after the reload, inherited */

/* What the nobody child found: pea's errnos and perf's. */
struct got {
	int other, other_regs, own_regs, perf_other_regs;
};

static int attach(int map, pid_t tid, bool regs)
{
	struct pea_sample_attr s;
	int fd;

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.flags = PEA_SAMPLE_F_CLOEXEC | PEA_SAMPLE_F_FREQ |
		  PEA_SAMPLE_F_TASK | PEA_SAMPLE_F_NO_KERNEL |
		  (regs ? PEA_SAMPLE_F_USER_REGS : 0);
	s.type = PERF_TYPE_SOFTWARE;
	s.config = PERF_COUNT_SW_CPU_CLOCK;
	s.sample = 99;
	s.filter_tgid = tid;
	s.filter_cpu = -1;
	s.ustack_depth = 16;
	s.stack_user = regs ? 8192 : 0;
	fd = ioctl(map, PEA_MAP_IOC_ATTACH_SAMPLE, &s);
	if (fd >= 0)
		close(fd);
	return fd < 0 ? errno : 0;
}

static int nobody(void *arg)
{
	struct got *g = arg;
	struct perf_event_attr a;
	int map = map_fd, p[2], st;
	pid_t sib;
	char c;

	if (pt_drop_to_nobody(-1))
		return 250;
	if (pipe(p))
		return 252;
	sib = fork();
	if (!sib) {
		close(p[0]);
		close(p[1]);
		execl("/bin/sleep", "sleep", "5", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	usleep(200000);		/* past its exec: dumpable */
	g->other = attach(map, sib, false);
	g->other_regs = attach(map, sib, true);
	g->own_regs = attach(map, 0, true);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.freq = 1;
	a.sample_freq = 99;
	a.exclude_kernel = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER |
			PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = 0xff01ffULL;	/* ax..ip, r8..r15 */
	a.sample_stack_user = 8192;
	g->perf_other_regs = pt_perf_open_errno(&a, sib, -1);
	kill(sib, SIGKILL);
	waitpid(sib, &st, 0);
	(void)c;
	close(p[0]);
	close(map);
	return 0;
}

int main(void)
{
	long paranoid = pt_perm_read_int(PT_PARANOID);
	struct got *g;
	struct stat st;
	int err;

	g = mmap(NULL, sizeof(*g), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g == MAP_FAILED)
		pt_fatal("mmap");
	memset(g, 0xff, sizeof(*g));
	if (stat(PEA_DEVICE_PATH, &st))
		pt_fatal("stat " PEA_DEVICE_PATH);
	err = delete_module("pea_selftest");
	PT_OK(err == 0 || err == ENOENT, "pea_selftest unloaded (%d)", err);
	PT_EQ(delete_module("pea"), 0, "pea unloaded");
	PT_EQ(load_pea("task_ptrace=1"), 0, "pea loaded with task_ptrace=1");
	PT_EQ(chmod(PEA_DEVICE_PATH, 0666), 0, "/dev/pea opened to others");
	PT_EQ(pt_perm_write_int(PT_PARANOID, 2), 0, "perf_event_paranoid 2");
	map_fd = pt_map_create("uregs_pt", pt_nr_cpus(), 0);
	PT_OK(map_fd >= 0, "a map (root's)");
	PT_EQ(pt_in_child(nobody, g), 0, "nobody's run");
	close(map_fd);
	close(pt_dev());	/* the module is unloaded next */
	pt_diag("perf_event_open() of the sibling with its user registers and stack: %d",
		g->perf_other_regs);
	PT_EQ(g->other, 0, "task_ptrace=1: a user-only sampler of nobody's other process: admitted");
	PT_EQ(g->other_regs, EACCES,
	      "task_ptrace=1: the same with PEA_SAMPLE_F_USER_REGS: EACCES (its stack memory needs CAP_PERFMON)");
	PT_EQ(g->own_regs, 0,
	      "task_ptrace=1: its own task with PEA_SAMPLE_F_USER_REGS: admitted");
	PT_EQ(pt_perm_write_int(PT_PARANOID, paranoid), 0,
	      "perf_event_paranoid restored (%ld)", paranoid);
	/* Leave pea as the harness loaded it. */
	PT_EQ(delete_module("pea"), 0, "pea unloaded again");
	PT_EQ(load_pea(""), 0, "pea loaded without parameters");
	PT_EQ(chmod(PEA_DEVICE_PATH, st.st_mode & 07777), 0,
	      "device mode restored");
	return pt_done();
}
