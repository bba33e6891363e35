// SPDX-License-Identifier: GPL-2.0
/*
 * A kretprobe link closed while calls of its function are in flight is
 * retired, not freed, until the kernel gives those calls' instances back
 * (on 6.12 the whole instance pool waits for them): it keeps its charge
 * for as long as the kernel keeps the memory. What the hostile review of
 * the retired links found, each as an attacker (nobody with CAP_PERFMON)
 * or a bystander (nobody without capabilities) would try it:
 *
 *   - a task that exits inside the function and is never reaped (a
 *     zombie) keeps its instance until it is reaped: the charge stays;
 *   - a thread that execs from another than the group leader takes the
 *     leader's id and start time; stopped by ptrace inside execve, its
 *     call is in flight: the charge stays;
 *   - the leader such an exec replaces is gone: its slot does not stay
 *     taken, so a process exec'ing from new threads cannot make another
 *     user's kretprobe miss its calls;
 *   - a retired link keeps only its charge: not its map (whose name the
 *     owner may take again), nor a place among the links.
 */
#include <pthread.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_exit.h"
#include "pt_perm.h"
#include "pt_quota.h"

#define ROUNDS	3

static int map_fd;

static struct pea_probe_attr big(const char *sym)
{
	struct pea_probe_attr a = pt_probe_attr(sym, PEA_PROBE_F_RETPROBE);

	a.maxactive = PEA_MAXACTIVE_MAX;
	a.capture_mode = PEA_CAPTURE_FIXED;
	a.capture_len = PEA_CAPTURE_MAX;
	a.capture_flags = PEA_CAPTURE_USER;
	a.kstack_depth = PEA_KSTACK_MAX;
	return a;
}

/* vmalloc'd bytes of objpool_init (6.12) / 0 on 6.1 */
static long objpool_vmalloc(void)
{
	FILE *f = fopen("/proc/vmallocinfo", "r");
	char line[512];
	long sum = 0, sz;

	while (f && fgets(line, sizeof(line), f))
		if ((strstr(line, "objpool") || strstr(line, "rethook")) &&
		    sscanf(line, "%*s %ld", &sz) == 1)
			sum += sz;
	if (f)
		fclose(f);
	return sum;
}

/* ---- B: a thread that execs, stopped at PTRACE_EVENT_EXEC ---- */
static int go_pipe[2], tid_pipe[2];

static void *exec_thread(void *arg)
{
	pid_t me = syscall(SYS_gettid);
	char c;
	char *argv[] = { "/proc/self/exe", "--retire-exit", NULL };

	(void)arg;
	if (write(tid_pipe[1], &me, sizeof(me)) != sizeof(me))
		_exit(3);
	if (read(go_pipe[0], &c, 1) != 1)
		_exit(4);
	execv("/proc/self/exe", argv);
	_exit(5);
}

/* One round of B: returns the stopped tracee's pid, or -errno-ish. */
static pid_t exec_stopped(void)
{
	pid_t c, tid;
	int st;

	if (pipe(go_pipe) || pipe(tid_pipe))
		return -1;
	c = fork();
	if (c == 0) {
		pthread_t th;

		if (pthread_create(&th, NULL, exec_thread, NULL))
			_exit(2);
		for (;;)
			pause();
	}
	if (read(tid_pipe[0], &tid, sizeof(tid)) != sizeof(tid))
		return -2;
	if (ptrace(PTRACE_SEIZE, tid, 0, PTRACE_O_TRACEEXEC))
		return -3;
	if (write(go_pipe[1], "x", 1) != 1)
		return -4;
	for (;;) {
		pid_t w = waitpid(-1, &st, __WALL);

		if (w < 0)
			return -5;
		if (WIFSTOPPED(st) && (st >> 8) == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
			break;
	}
	close(go_pipe[0]);
	close(go_pipe[1]);
	close(tid_pipe[0]);
	close(tid_pipe[1]);
	return c;
}

/*
 * The attacker: nobody with CAP_PERFMON. mode 0: zombies, 1: exec stops.
 * Reports rounds done and errno, then waits for the parent's go before
 * cleaning up (reaping or killing the tracees).
 */
static void attacker(int mode, int res, int rel)
{
	pid_t kids[ROUNDS];
	int n = 0, err = 0, fd, i;
	char c;
	struct pea_probe_attr a = big(mode ? "__x64_sys_execve" : "do_group_exit");

	/* Its capture reads memory: CAP_BPF too (docs/security.md). */
	if (pt_drop_to2(PT_NOBODY, CAP_PERFMON, CAP_BPF)) {
		err = 1000;
		goto out;
	}
	for (n = 0; n < ROUNDS; n++) {
		siginfo_t si;

		fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);
		if (fd < 0) {
			err = errno;
			break;
		}
		if (mode == 2) {
			kids[n] = 0;
		} else if (mode == 0) {
			kids[n] = fork();
			if (kids[n] == 0)
				_exit(0);
			/* A zombie now, not reaped. */
			memset(&si, 0, sizeof(si));
			if (waitid(P_PID, kids[n], &si, WEXITED | WNOWAIT)) {
				err = 1001;
				break;
			}
		} else {
			kids[n] = exec_stopped();
			if (kids[n] < 0) {
				err = 1100 - kids[n];
				close(fd);
				break;
			}
		}
		close(fd);
		usleep(300000);	/* the reaper runs every 100 ms */
	}
out:
	if (write(res, &n, sizeof(n)) != sizeof(n) ||
	    write(res, &err, sizeof(err)) != sizeof(err))
		_exit(1);
	if (read(rel, &c, 1) < 0)
		_exit(1);
	for (i = 0; i < n && mode != 2; i++) {
		if (mode)
			kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, __WALL);
	}
	_exit(0);
}

static void run(int mode, const char *what)
{
	int res[2], rel[2], n = -1, err = -1;
	long l, b, free0, vm0, free1, vm1;
	pid_t p;

	if (pipe(res) || pipe(rel))
		pt_fatal("pipe");
	free0 = pt_meminfo("MemAvailable");
	vm0 = objpool_vmalloc();
	fflush(stdout);
	p = fork();
	if (p == 0) {
		close(res[0]);
		close(rel[1]);
		attacker(mode, res[1], rel[0]);
	}
	close(res[1]);
	close(rel[0]);
	if (read(res[0], &n, sizeof(n)) != sizeof(n) ||
	    read(res[0], &err, sizeof(err)) != sizeof(err))
		n = -1;
	sleep(1);
	pt_quota(PT_NOBODY, &l, &b);
	free1 = pt_meminfo("MemAvailable");
	vm1 = objpool_vmalloc();
	pt_diag("%s: %d rounds (errno %d); nobody charged %ld links %ld bytes; MemAvailable fell %ld KiB; objpool vmalloc grew %ld KiB",
		what, n, err, l, b, free0 - free1, (vm1 - vm0) / 1024);
	if (mode == 2)
		PT_OK(n == ROUNDS && l == 0 && b == 0,
		      "%s: nothing stays charged (%d rounds, %ld links, %ld bytes)",
		      what, n, l, b);
	else
		PT_OK(n == ROUNDS && l == 0 &&
		      b >= (long)ROUNDS * PEA_MAXACTIVE_MAX *
			   (PEA_CAPTURE_MAX + PEA_KSTACK_MAX * 8),
		      "%s: the %d closed links keep their instances' charge, not a place among the links (%ld links, %ld bytes)",
		      what, n, l, b);
	close(rel[1]);
	waitpid(p, NULL, 0);
	PT_EQ(pt_quota_settled(PT_NOBODY), 0,
	      "%s: once the calls are gone, the retired links are freed", what);
	pt_diag("%s: after cleanup MemAvailable %+ld KiB vs start; objpool vmalloc %+ld KiB",
		what, pt_meminfo("MemAvailable") - free0,
		(objpool_vmalloc() - vm0) / 1024);
}

/* ---- C: slots leaked by the leader a non-leader exec replaces ---- */
static void *loop_thread(void *arg)
{
	char *argv[] = { "/proc/self/exe", "--retire-loop", arg, NULL };

	execv("/proc/self/exe", argv);
	_exit(5);
}

/* In the exec'd image: one more exec from a new thread, or hold. */
static int exec_loop(int left)
{
	static char buf[16];
	pthread_t th;

	if (left <= 0) {
		/* Tell the test, then live on: the process keeps its pid. */
		if (write(3, "d", 1) != 1)
			return 1;
		for (;;)
			pause();
	}
	snprintf(buf, sizeof(buf), "%d", left - 1);
	if (pthread_create(&th, NULL, loop_thread, buf))
		return 2;
	for (;;)
		pause();	/* zapped by the exec: do_group_exit */
}

static void leak_slots(void)
{
	struct pea_probe_attr ex = pt_probe_attr("do_group_exit",
						 PEA_PROBE_F_RETPROBE);
	struct pea_link_info info;
	unsigned long long missed0;
	int fd, p[2], i, n;
	pid_t b;
	char c;

	ex.maxactive = 4;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &ex);
	if (fd < 0 || pipe(p))
		pt_fatal("attach");
	fflush(stdout);
	b = fork();
	if (b == 0) {
		/* B: nobody, no capabilities; fd 3 is the pipe. */
		dup2(p[1], 3);
		if (setgroups(0, NULL) || setresgid(PT_NOBODY, PT_NOBODY, PT_NOBODY) ||
		    setresuid(PT_NOBODY, PT_NOBODY, PT_NOBODY))
			_exit(9);
		_exit(exec_loop(6));
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		pt_fatal("exec loop");
	usleep(100000);
	memset(&info, 0, sizeof(info));
	ioctl(fd, PEA_LINK_IOC_INFO, &info);
	pt_diag("after B's 6 execs: hits %llu written %llu missed %llu",
		(unsigned long long)info.hits, (unsigned long long)info.written,
		(unsigned long long)info.missed);
	/* What B's own churn missed (the kernel's pool of 4) is not ours. */
	missed0 = info.missed;
	/*
	 * Each child is freed before the next exits (pt_exit.h): waitpid()
	 * returns before its last schedule, and its instance goes back to
	 * the kernel's pool only in delayed_put_task_struct(), an RCU
	 * callback after it. Then pea's rate-limited scan (a jiffy).
	 */
	for (i = 0, n = 0; i < 8; i++) {
		n += !pt_child_exit_freed();
		pt_after_reap();
	}
	PT_EQ(n, 8, "8 children of root exited, each freed before the next");
	memset(&info, 0, sizeof(info));
	ioctl(fd, PEA_LINK_IOC_INFO, &info);
	pt_diag("then 8 exits of root's children: hits %llu written %llu missed %llu",
		(unsigned long long)info.hits, (unsigned long long)info.written,
		(unsigned long long)info.missed);
	/*
	 * Before, every later exit was missed (8: the dead leaders' slots
	 * stayed taken). The kernel's own pool of 4 gives an exited task's
	 * instance back only after a grace period and its callbacks, which
	 * the debug kernel once took longer than pt_after_reap() waits: its
	 * misses (rp.nmissed, in the same count) are not pea's.
	 */
	PT_OK(info.missed - missed0 < 4,
	      "an unprivileged process's execs do not make root's do_group_exit kretprobe (maxactive 4) miss later exits (missed %llu of 8)",
	      (unsigned long long)(info.missed - missed0));
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);
	close(fd);
	close(p[0]);
}

/* ---- D: a sleeper of another user keeps a closed named map's name ---- */
static void map_name(void)
{
	int sl[2], res[2], rel[2], r[3] = { -1, -1, -1 };
	pid_t a, b;
	char c;

	if (pipe(sl) || pipe(res) || pipe(rel))
		pt_fatal("pipe");
	fflush(stdout);
	a = fork();
	if (a == 0) {
		struct pea_probe_attr k = pt_probe_attr("pipe_read",
							PEA_PROBE_F_RETPROBE);
		int mfd, lfd;

		close(rel[1]);
		close(sl[0]);
		close(sl[1]);
		if (pt_drop_to(PT_NOBODY - 1, CAP_PERFMON))
			_exit(9);
		mfd = pt_map_create("mon", 4, 0);
		lfd = mfd >= 0 ? ioctl(mfd, PEA_MAP_IOC_ATTACH_PROBE, &k) : -1;
		r[0] = lfd >= 0 ? 0 : -errno;
		/* tell the test to start B's sleeper, wait for it */
		if (write(res[1], &r[0], sizeof(int)) != sizeof(int) ||
		    read(rel[0], &c, 1) != 1)
			_exit(8);
		close(lfd);
		close(mfd);
		usleep(300000);
		mfd = pt_map_create("mon", 4, 0);
		r[1] = mfd;
		if (mfd >= 0)
			close(mfd);
		if (write(res[1], &r[1], sizeof(int)) != sizeof(int) ||
		    read(rel[0], &c, 1) != 1)
			_exit(8);
		usleep(500000);
		mfd = pt_map_create("mon", 4, 0);
		r[2] = mfd;
		if (write(res[1], &r[2], sizeof(int)) != sizeof(int))
			_exit(8);
		_exit(0);
	}
	if (read(res[0], &r[0], sizeof(int)) != sizeof(int))
		pt_fatal("A");
	b = fork();
	if (b == 0) {
		/* B: nobody, no capabilities, asleep in pipe_read */
		close(sl[1]);
		if (setgroups(0, NULL) || setresgid(PT_NOBODY, PT_NOBODY, PT_NOBODY) ||
		    setresuid(PT_NOBODY, PT_NOBODY, PT_NOBODY))
			_exit(9);
		_exit(read(sl[0], &c, 1) < 0);
	}
	close(sl[0]);
	usleep(300000);
	if (write(rel[1], "x", 1) != 1 ||
	    read(res[0], &r[1], sizeof(int)) != sizeof(int))
		pt_fatal("A2");
	close(sl[1]);	/* B wakes: EOF */
	waitpid(b, NULL, 0);
	if (write(rel[1], "x", 1) != 1 ||
	    read(res[0], &r[2], sizeof(int)) != sizeof(int))
		pt_fatal("A3");
	waitpid(a, NULL, 0);
	pt_diag("A attach %d; re-create \"mon\" while B sleeps: %d; after B woke: %d",
		r[0], r[1], r[2]);
	PT_OK(r[0] == 0 && r[1] >= 0 && r[2] >= 0,
	      "another user's sleeper does not keep a closed map's name (%d, %d)",
	      r[1], r[2]);
}

int main(int argc, char **argv)
{
	long paranoid;

	if (argc > 1 && !strcmp(argv[1], "--retire-exit"))
		return 0;
	if (argc > 2 && !strcmp(argv[1], "--retire-loop"))
		return exec_loop(atoi(argv[2]));
	paranoid = pt_perm_read_int(PT_PARANOID);
	pt_perm_write_int(PT_PARANOID, 2);
	map_fd = pt_map_create("retire", pt_nr_cpus(), 0);
	if (map_fd < 0)
		pt_fatal("map");
	run(2, "control: attach and close, no call in flight");
	run(0, "zombie exits inside do_group_exit");
	run(1, "non-leader exec stopped at PTRACE_EVENT_EXEC in __x64_sys_execve");
	leak_slots();
	map_name();
	pt_perm_write_int(PT_PARANOID, paranoid);
	return pt_done();
}
