// SPDX-License-Identifier: GPL-2.0
/*
 * PEA_MAP_IOC_EXCLUDE_TGID: a map's excluded process. With this process
 * excluded, a kprobe on __x64_sys_getppid and the tracepoint
 * syscalls:sys_enter_getppid (one attached before the ioctl, one after)
 * record none of its calls, each counted as filtered, and every call of
 * a child; a child excluded by its pid, the other way round. Errnos:
 * EBUSY for a second ioctl, EINVAL for a negative id and for a thread's
 * id (as pidfd_open()), ESRCH for no such process, EFAULT for a bad
 * pointer. More cases: test_exclude_ctx.
 */
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "pea_test.h"

#define NCPU_MAX	64
#define CALLS		7
#define TRACEFS		"/sys/kernel/tracing/events/"

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];

/* Samples in every ring, by the tgid at @tgid_off of the payload. */
static void count(pid_t a, pid_t b, int *na, int *nb, size_t tgid_off)
{
	struct perf_event_header *h = (void *)rec;
	__u32 tgid;
	int cpu;

	*na = *nb = 0;
	for (cpu = 0; cpu < ncpu; cpu++)
		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			memcpy(&tgid, rec + 12 + tgid_off, 4);
			*na += tgid == (__u32)a;
			*nb += tgid == (__u32)b;
		}
}

static void calls(void)
{
	int i;

	for (i = 0; i < CALLS; i++)
		syscall(SYS_getppid);
}

/* A child that makes CALLS calls when told (a byte on @go), then exits. */
static pid_t child_start(int go[2])
{
	pid_t pid;
	char c;

	if (pipe(go))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) == 1)
			calls();
		_exit(0);
	}
	close(go[0]);
	return pid;
}

static void child_run(pid_t pid, int go[2])
{
	int st;

	if (write(go[1], "g", 1) != 1)
		pt_diag("child: no go");
	close(go[1]);
	waitpid(pid, &st, 0);
}

static int tp_link(void)
{
	struct pea_tp_attr a;
	char buf[32];
	int fd;

	if (pt_read_file(TRACEFS "syscalls/sys_enter_getppid/id", buf,
			 sizeof(buf)) < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_TP_F_CLOEXEC;
	a.event_id = atoi(buf);
	a.filter_cpu = -1;
	snprintf(a.name, sizeof(a.name), "syscalls:sys_enter_getppid");
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &a);
	return fd < 0 ? -errno : fd;
}

static int kp_link(void)
{
	struct pea_probe_attr a = pt_probe_attr("__x64_sys_getppid", 0);
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);

	return fd < 0 ? -errno : fd;
}

static __u64 filtered(int link)
{
	struct pea_link_info li;

	memset(&li, 0, sizeof(li));
	return ioctl(link, PEA_LINK_IOC_INFO, &li) ? ~0ULL : li.filtered;
}

static int exclude(int fd, __s32 nr)
{
	return ioctl(fd, PEA_MAP_IOC_EXCLUDE_TGID, &nr) ? errno : 0;
}

/* Both links: @excl's calls filtered, @other's CALLS recorded, each. */
static void run_case(const char *what, bool self_excluded)
{
	int kp, tp, go[2], ns, nc;
	__u64 fk0, ft0;
	pid_t child, cpid;

	cpid = child = child_start(go);
	PT_OK(child > 0, "%s: a child", what);
	if (child <= 0)
		return;
	if (!self_excluded)
		PT_EQ(exclude(map_fd, child), 0,
		      "%s: the child excluded by its pid", what);
	kp = kp_link();
	tp = tp_link();
	PT_OK(kp >= 0 && tp >= 0, "%s: kprobe and tracepoint links (%d %d)",
	      what, kp, tp);
	if (kp < 0 || tp < 0)
		goto out;
	pt_rings_drain(rings, ncpu);
	fk0 = filtered(kp);
	ft0 = filtered(tp);
	calls();
	child_run(child, go);
	child = 0;
	/* pea_probe_record and pea_tp_record: tgid at offset 32. */
	count(getpid(), cpid, &ns, &nc, 32);
	pt_rings_drain(rings, ncpu);
	PT_EQ(filtered(kp) - fk0, CALLS, "%s: kprobe: %d calls filtered",
	      what, CALLS);
	PT_EQ(filtered(tp) - ft0, CALLS, "%s: tracepoint: %d calls filtered",
	      what, CALLS);
	PT_EQ(self_excluded ? ns : nc, 0, "%s: no record of the excluded one's calls",
	      what);
	PT_EQ(self_excluded ? nc : ns, 2 * CALLS,
	      "%s: the other's %d calls, each recorded twice", what, CALLS);
out:
	if (child > 0)
		child_run(child, go);
	if (kp >= 0)
		close(kp);
	if (tp >= 0)
		close(tp);
}

static int thread_go[2];

/* A thread that lives until told: its id names a live thread. */
static void *thread_fn(void *arg)
{
	char c;

	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	if (read(thread_go[0], &c, 1) != 1)
		return NULL;
	return NULL;
}

static void test_errnos(void)
{
	pthread_t t;
	pid_t tid = 0;
	int i, m = pt_map_create("exclude2", 1, 0);

	PT_OK(m >= 0, "a second map");
	if (m < 0)
		return;
	PT_EQ(exclude(m, -1), EINVAL, "a negative id: EINVAL");
	PT_EQ(exclude(m, 0x3ffffff0), ESRCH, "no such process: ESRCH");
	if (pipe(thread_go) || pthread_create(&t, NULL, thread_fn, &tid)) {
		PT_OK(0, "a thread");
	} else {
		while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE))
			usleep(1000);
		PT_EQ(exclude(m, tid), EINVAL,
		      "a live thread's id (%d): EINVAL, as pidfd_open()", tid);
		if (write(thread_go[1], "g", 1) != 1)
			pt_diag("thread: no go");
		pthread_join(t, NULL);
		/*
		 * The join returns when the exiting thread clears its tid
		 * (mm_release()), before exit_notify() releases its pid:
		 * wait until the kernel no longer finds it (10 s at most).
		 */
		for (i = 0; i < 10000 &&
		     !(syscall(SYS_tgkill, getpid(), tid, 0) && errno == ESRCH);
		     i++)
			usleep(1000);
		PT_EQ(exclude(m, tid), ESRCH, "an exited thread's id: ESRCH");
	}
	PT_EQ(ioctl(m, PEA_MAP_IOC_EXCLUDE_TGID, (void *)8) ? errno : 0,
	      EFAULT, "a bad pointer: EFAULT");
	PT_EQ(exclude(m, getpid()), 0, "this process by its pid");
	PT_EQ(exclude(m, 0), EBUSY, "a second exclusion: EBUSY");
	close(m);
}

int main(void)
{
	int i;

	ncpu = pt_setup(NCPU_MAX);
	ncpu = pt_cpu_map("exclude", 16, &map_fd, ev_fd, rings);
	run_case("none excluded, the child by pid", false);
	for (i = 0; i < ncpu; i++)
		close(ev_fd[i]);
	close(map_fd);
	ncpu = pt_cpu_map("exclude1", 16, &map_fd, ev_fd, rings);
	/* A link attached before the exclusion is bound by it too. */
	{
		int early = kp_link(), go[2];
		int ns, nc;
		pid_t child;

		PT_EQ(exclude(map_fd, 0), 0, "this process excluded (0)");
		child = child_start(go);
		pt_rings_drain(rings, ncpu);
		calls();
		child_run(child, go);
		count(getpid(), child, &ns, &nc, 32);
		PT_OK(early >= 0 && ns == 0 && nc == CALLS,
		      "a kprobe attached before: 0 of this process's calls, the child's %d (got %d, %d)",
		      CALLS, ns, nc);
		if (early >= 0)
			close(early);
	}
	run_case("this process excluded", true);
	for (i = 0; i < ncpu; i++)
		close(ev_fd[i]);
	close(map_fd);
	test_errnos();
	return pt_done();
}
