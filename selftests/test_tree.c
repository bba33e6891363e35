// SPDX-License-Identifier: GPL-2.0
/*
 * PEA_*_F_DESCENDANTS and PEA_*_F_DESC_ONLY: a tgid filter that matches a
 * process's tree. Three links (a kprobe on __x64_sys_getppid, the
 * tracepoint syscalls:sys_enter_getppid, a uprobe on pt_target() of this
 * file) filter on a child A of this test. A calls 1 time, forks B, which
 * calls 2 times and has a thread call 8 times, forks C and exits; C,
 * orphaned, calls 4 times once B is reaped. Each call is one getppid()
 * and one pt_target(). With A a child subreaper C is reparented to A and
 * every call of the tree is recorded by every link (15; 14 with
 * DESC_ONLY, A's own left out); without, C goes to init and its 4 are
 * filtered (11). This test's calls and a sibling's never are. A chain of
 * 66 processes below A: the 64 within PEA_TREE_DEPTH_MAX are recorded,
 * the 2 below filtered and counted in @deep. Errnos: EINVAL for either
 * flag without a tgid filter, DESC_ONLY alone, an unknown bit. The link
 * info's older size (without @deep) is still answered. In a new pid
 * namespace, a link whose filter is its pid 2 counts that process's and
 * its child's calls, not its init's nor this test's (outside it, seen as
 * 0: the walk ends there, not counted deep).
 */
#include <dirent.h>
#include <stddef.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <pthread.h>
#include "pea_test.h"
#include "pt_exit.h"
#include "pt_maps.h"
#include "pt_storm.h"

#define NCPU_MAX	64
#define TRACEFS		"/sys/kernel/tracing/events/"
#define CHAIN		(PEA_TREE_DEPTH_MAX + 2)

#define PT_LINK_IOC_INFO_VER1 \
	_IOC(_IOC_READ, PEA_IOC_MAGIC, 0x30, PEA_LINK_INFO_SIZE_VER1)

static int ncpu, map_fd, ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];
static char self[256];
static int tp_id;

__attribute__((noipa, used)) long pt_target(long a)
{
	__asm__ volatile("" ::: "memory");
	return a + 1;
}

/* Returns when a byte comes on @fd: a call that outlasts its caller's parent. */
__attribute__((noipa, used)) long pt_block(int fd)
{
	char ch;

	__asm__ volatile("" ::: "memory");
	return read(fd, &ch, 1);
}

/* @n calls: one getppid() and one pt_target() each. */
static void calls(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		syscall(SYS_getppid);
		pt_target(i);
	}
}

enum { KP, TP, UP, NLINKS };
static const char *const kind[NLINKS] = { "kprobe", "tracepoint", "uprobe" };

/* Link @k on this test's map with @flags (besides CLOEXEC): fd or -errno. */
static int attach(int k, __u32 flags, pid_t tgid)
{
	struct pea_uprobe_attr u;
	struct pea_tp_attr t;
	struct pea_probe_attr p;
	int fd;

	switch (k) {
	case KP:
		p = pt_probe_attr("__x64_sys_getppid", flags);
		p.filter_tgid = tgid;
		fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &p);
		break;
	case TP:
		memset(&t, 0, sizeof(t));
		t.size = sizeof(t);
		t.flags = flags | PEA_TP_F_CLOEXEC;
		t.event_id = tp_id;
		t.filter_cpu = -1;
		t.filter_tgid = tgid;
		snprintf(t.name, sizeof(t.name), "syscalls:sys_enter_getppid");
		fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &t);
		break;
	default:
		memset(&u, 0, sizeof(u));
		u.size = sizeof(u);
		u.flags = flags | PEA_UPROBE_F_CLOEXEC;
		u.path = (uintptr_t)self;
		u.path_fd = -1;
		u.offset = pt_file_off(pt_target);
		u.filter_tgid = tgid;
		fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_UPROBE, &u);
		break;
	}
	return fd < 0 ? -errno : fd;
}

static int info(int link, struct pea_link_info *li)
{
	memset(li, 0, sizeof(*li));
	return ioctl(link, PEA_LINK_IOC_INFO, li);
}

/* Records of tgid @a, of tgid @c, of any process at all. */
static void count(pid_t a, pid_t c, int *na, int *nc, int *nall)
{
	struct perf_event_header *h = (void *)rec;
	__u32 tgid;
	int cpu;

	*na = *nc = *nall = 0;
	for (cpu = 0; cpu < ncpu; cpu++)
		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			/* pea_probe_record, pea_tp_record: tgid at 32. */
			memcpy(&tgid, rec + 12 + 32, 4);
			*na += tgid == (__u32)a;
			*nc += c && tgid == (__u32)c;
			(*nall)++;
		}
}

static void *thread_fn(void *arg)
{
	calls(*(int *)arg);
	return NULL;
}

/*
 * A's part, told to go by a byte on @go: the tree above, then it reaps
 * what it can and exits. C's number goes to @report.
 */
static void tree_a(bool subreaper, int report)
{
	int go_c[2], done_c[2], st, n = 8;
	pid_t b, c;
	char ch;

	if (subreaper && prctl(PR_SET_CHILD_SUBREAPER, 1))
		_exit(90);
	calls(1);
	if (pipe(go_c) || pipe(done_c))
		_exit(91);
	b = fork();
	if (b == 0) {
		pthread_t t;

		if (pthread_create(&t, NULL, thread_fn, &n))
			_exit(92);
		pthread_join(t, NULL);
		calls(2);
		c = fork();
		if (c == 0) {
			close(go_c[1]);
			close(done_c[0]);
			/* Until B is reaped: orphaned, reparented. */
			if (read(go_c[0], &ch, 1) != 1)
				_exit(93);
			calls(4);
			_exit(0);
		}
		if (write(report, &c, sizeof(c)) != sizeof(c))
			_exit(94);
		_exit(0);
	}
	close(go_c[0]);
	close(done_c[1]);
	if (waitpid(b, &st, 0) != b || !WIFEXITED(st) || WEXITSTATUS(st))
		_exit(95);
	if (write(go_c[1], "g", 1) != 1)
		_exit(96);
	/* C holds done_c's write end until it exits. */
	while (read(done_c[0], &ch, 1) > 0)
		;
	if (subreaper)
		while (waitpid(-1, &st, 0) > 0)
			;
	_exit(0);
}

/* A chain of CHAIN processes below A, each calling once, top first. */
static void chain(void)
{
	int level, st;
	pid_t p;

	for (level = 0; level < CHAIN; level++) {
		p = fork();
		if (p < 0)
			_exit(97);
		if (p) {
			waitpid(p, &st, 0);
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 98);
		}
		calls(1);	/* level + 1 below A */
	}
	_exit(0);
}

/* Fork A, held until a byte on *go_w: the tree, or with @deep the chain. */
static pid_t fork_a(int *go_w, int report[2], bool subreaper, bool deep)
{
	int go[2];
	pid_t a;
	char ch;

	if (pipe(go))
		return -1;
	fflush(stdout);
	a = fork();
	if (a == 0) {
		close(go[1]);
		close(report[0]);
		if (read(go[0], &ch, 1) != 1)
			_exit(99);
		if (deep)
			chain();
		tree_a(subreaper, report[1]);
	}
	close(go[0]);
	*go_w = go[1];
	return a;
}

/* A sibling of A (not in its tree) that calls 32 times when let go. */
static pid_t fork_sibling(int *go_w)
{
	int go[2];
	pid_t s;
	char ch;

	if (pipe(go))
		return -1;
	s = fork();
	if (s == 0) {
		close(go[1]);
		if (read(go[0], &ch, 1) == 1)
			calls(32);
		_exit(0);
	}
	close(go[0]);
	*go_w = go[1];
	return s;
}

/*
 * One run: links with @flags on a fresh A's tree; @want written by each
 * link, of which @want_a by A itself and @want_c by the orphan C;
 * @want_deep counted deep by each.
 */
static void run(const char *what, __u32 flags, bool subreaper, bool deep,
		int want, int want_a, int want_c, int want_deep)
{
	int link[NLINKS], report[2], go_a = -1, go_s = -1, k, na, nc, nall;
	int st = 0;
	struct pea_link_info li;
	pid_t a, s, c = 0;

	if (pipe(report)) {
		PT_OK(0, "%s: a pipe", what);
		return;
	}
	a = fork_a(&go_a, report, subreaper, deep);
	s = fork_sibling(&go_s);
	close(report[1]);
	PT_OK(a > 0 && s > 0, "%s: A and a sibling", what);
	for (k = 0; k < NLINKS; k++) {
		link[k] = attach(k, flags, a);
		PT_OK(link[k] >= 0, "%s: %s attached (%d)", what, kind[k],
		      link[k]);
	}
	pt_rings_drain(rings, ncpu);
	calls(16);	/* this test: not in the tree */
	if (write(go_s, "g", 1) != 1 || write(go_a, "g", 1) != 1)
		pt_diag("%s: no go", what);
	close(go_s);
	close(go_a);
	waitpid(s, &st, 0);
	PT_OK(waitpid(a, &st, 0) == a && WIFEXITED(st) && !WEXITSTATUS(st),
	      "%s: A's tree ran (status 0x%x)", what, st);
	if (!deep && read(report[0], &c, sizeof(c)) != sizeof(c))
		pt_diag("%s: C's number not reported", what);
	close(report[0]);
	count(a, c, &na, &nc, &nall);
	PT_EQ(nall, NLINKS * want, "%s: %d records, %d per link", what,
	      NLINKS * want, want);
	PT_EQ(na, NLINKS * want_a, "%s: %d of them A's own", what,
	      NLINKS * want_a);
	if (!deep)
		PT_EQ(nc, NLINKS * want_c, "%s: %d of them the orphan C's",
		      what, NLINKS * want_c);
	for (k = 0; k < NLINKS; k++) {
		if (link[k] < 0)
			continue;
		PT_OK(!info(link[k], &li), "%s: %s: info", what, kind[k]);
		PT_EQ(li.written, want, "%s: %s: %d written", what, kind[k],
		      want);
		PT_EQ(li.deep, want_deep, "%s: %s: %d counted deep", what,
		      kind[k], want_deep);
		PT_OK(li.filtered >= (__u64)(16 + 32 + want_deep),
		      "%s: %s: this test's 16 and the sibling's 32 filtered (%llu)",
		      what, kind[k], (unsigned long long)li.filtered);
		close(link[k]);
	}
}

/*
 * Inside a new pid namespace (its init X, pid 1): a kprobe link of X's
 * filtered on pid 2 (Y) and descendants; Y calls 3 times, its child Z 5,
 * X 7. X reports written, filtered and deep on @res.
 */
static void ns_init(int res)
{
	struct pea_probe_attr p = pt_probe_attr("__x64_sys_getppid",
						PEA_PROBE_F_DESCENDANTS);
	struct pea_link_info li;
	__u64 v[3] = { ~0ULL, ~0ULL, ~0ULL };
	int go[2], fd, st;
	pid_t y, z;
	char ch;

	if (pipe(go))
		_exit(80);
	y = fork();
	if (y == 0) {
		close(go[1]);
		if (read(go[0], &ch, 1) != 1)
			_exit(81);
		calls(3);
		z = fork();
		if (z == 0) {
			calls(5);
			_exit(0);
		}
		waitpid(z, &st, 0);
		_exit(0);
	}
	close(go[0]);
	p.filter_tgid = 2;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &p);
	if (y == 2 && fd >= 0) {
		calls(7);
		if (write(go[1], "g", 1) != 1)
			_exit(82);
		waitpid(y, &st, 0);
		if (!info(fd, &li)) {
			v[0] = li.written;
			v[1] = li.filtered;
			v[2] = li.deep;
		}
	}
	if (write(res, v, sizeof(v)) != sizeof(v))
		_exit(83);
	_exit(0);
}

static void test_pidns(void)
{
	__u64 v[3] = { ~0ULL, ~0ULL, ~0ULL };
	int res[2], st;
	pid_t w;

	if (pipe(res)) {
		PT_OK(0, "pid namespace: a pipe");
		return;
	}
	fflush(stdout);
	w = fork();
	if (w == 0) {
		pid_t x;

		if (unshare(CLONE_NEWPID))
			_exit(84);
		x = fork();
		if (x == 0)
			ns_init(res[1]);
		waitpid(x, &st, 0);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 85);
	}
	close(res[1]);
	calls(16);	/* outside the namespace, meanwhile or not */
	PT_OK(read(res[0], v, sizeof(v)) == sizeof(v),
	      "pid namespace: its init reported");
	close(res[0]);
	waitpid(w, &st, 0);
	PT_OK(WIFEXITED(st) && !WEXITSTATUS(st),
	      "pid namespace: unshared, ran (status 0x%x)", st);
	PT_EQ(v[0], 8, "pid namespace: its pid 2's 3 calls and its child's 5 written");
	PT_OK(v[1] >= 7 && v[1] != ~0ULL,
	      "pid namespace: its init's 7 filtered (%llu)",
	      (unsigned long long)v[1]);
	PT_EQ(v[2], 0, "pid namespace: none counted deep");
}

/*
 * A uretprobe's call entered in the tree returns after its process left
 * it (its parent exited, it went to init): the entry decided, as a
 * kretprobe's does, so the return is written, not dropped unseen (review
 * F2). A forks B, B forks @nkids children C; each C enters pt_block(), B
 * exits, A lets them return. With @maxactive 1 and two C, the second's
 * entry finds no slot: counted missed there, its frameless return
 * ignored, not lost uncounted (re-review G1: missed read 0).
 */
static void uret_leaves(const char *what, int nkids, __u32 maxactive)
{
	struct pea_uprobe_attr u;
	struct pea_link_info li;
	int go[2], blk[2], fd, st, k;
	pid_t a, b;
	char ch;

	if (pipe(go) || pipe(blk)) {
		PT_OK(0, "%s: pipes", what);
		return;
	}
	fflush(stdout);
	a = fork();
	if (a == 0) {
		int done[2];

		close(go[1]);
		if (read(go[0], &ch, 1) != 1 || pipe(done))
			_exit(70);
		b = fork();
		if (b == 0) {
			for (k = 0; k < nkids; k++)
				if (fork() == 0) {
					close(done[0]);
					close(blk[1]);
					pt_block(blk[0]);	/* until A writes */
					_exit(0);
				}
			usleep(300000);		/* each C is in pt_block() */
			_exit(0);
		}
		close(done[1]);
		waitpid(b, &st, 0);	/* each C is reparented away from A */
		usleep(100000);
		for (k = 0; k < nkids; k++)
			if (write(blk[1], "r", 1) != 1)
				_exit(71);
		while (read(done[0], &ch, 1) > 0)	/* every C's end */
			;
		_exit(0);
	}
	close(go[0]);
	close(blk[0]);
	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	u.flags = PEA_UPROBE_F_RETPROBE | PEA_UPROBE_F_CLOEXEC |
		  PEA_UPROBE_F_DESCENDANTS;
	u.maxactive = maxactive;
	u.path = (uintptr_t)self;
	u.path_fd = -1;
	u.offset = pt_file_off(pt_block);
	u.filter_tgid = a;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_UPROBE, &u);
	PT_OK(fd >= 0, "%s: attached (%d)", what, fd < 0 ? -errno : fd);
	if (write(go[1], "g", 1) != 1)
		pt_diag("%s: no go", what);
	close(go[1]);
	close(blk[1]);
	waitpid(a, &st, 0);
	PT_OK(WIFEXITED(st) && !WEXITSTATUS(st), "%s: ran (status 0x%x)",
	      what, st);
	if (fd < 0)
		return;
	PT_OK(!info(fd, &li), "%s: info", what);
	pt_diag("%s: hits %llu written %llu filtered %llu missed %llu", what,
		(unsigned long long)li.hits, (unsigned long long)li.written,
		(unsigned long long)li.filtered, (unsigned long long)li.missed);
	PT_EQ(li.written, 1,
	      "%s: the call entered in it with a frame is written at its return",
	      what);
	PT_EQ(li.missed, (__u64)(nkids - 1),
	      "%s: the calls entered without a frame counted missed", what);
	close(fd);
	pt_rings_drain(rings, ncpu);
}

static void test_uretprobe_leaves(void)
{
	uret_leaves("uretprobe leaving the tree", 1, 0);
	uret_leaves("uretprobe leaving the tree, one frame for two calls", 2, 1);
}

static int dying_hold;	/* where the dying thread waits for the test */

static void *dying_fn(void *arg)
{
	pid_t id[2] = { (pid_t)syscall(SYS_gettid), getpid() };
	char ch;

	if (write(*(int *)arg, id, sizeof(id)) != sizeof(id))
		return NULL;
	/* until the test watches for its free and its process's */
	if (read(dying_hold, &ch, 1) != 1)
		return NULL;
	return NULL;
}

/*
 * A thread is reaped inside its own exit and runs on (do_task_dead()),
 * its parent pointer no longer updated (review F1): the walk takes it
 * as its process's leader, so a kprobe on do_task_dead() records that
 * thread's last hit. A forks C; C's thread T exits, then C.
 */
static void test_dying_thread(void)
{
	struct pea_probe_attr p = pt_probe_attr("do_task_dead",
						PEA_PROBE_F_DESCENDANTS);
	struct perf_event_header *h = (void *)rec;
	int go[2], rep[2], hold[2], fd, st, cpu, nt = 0, nc = 0, na = 0;
	struct pt_free_watch wa = { .n = 0 }, wc = { .n = 0 }, wt = { .n = 0 };
	int armed = 0, freed = 0;
	struct pea_link_info li;
	pid_t a, t = 0, c = 0, id[2] = { 0, 0 };
	__u32 tid, tgid;
	char ch;

	if (pipe(go) || pipe(rep) || pipe(hold)) {
		PT_OK(0, "dying thread: pipes");
		return;
	}
	dying_hold = hold[0];
	fflush(stdout);
	a = fork();
	if (a == 0) {
		close(go[1]);
		close(hold[1]);
		if (read(go[0], &ch, 1) != 1)
			_exit(60);
		c = fork();
		if (c == 0) {
			pthread_t th;

			if (pthread_create(&th, NULL, dying_fn, &rep[1]))
				_exit(61);
			pthread_join(th, NULL);
			usleep(100000);	/* T is reaped; C lives on a while */
			_exit(0);
		}
		waitpid(c, &st, 0);
		_exit(0);
	}
	close(go[0]);
	close(rep[1]);
	close(hold[0]);
	armed += !pt_free_watch(&wa, a);
	p.filter_tgid = a;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &p);
	PT_OK(fd >= 0, "dying thread: kprobe on do_task_dead attached (%d)",
	      fd < 0 ? -errno : fd);
	pt_rings_drain(rings, ncpu);
	if (write(go[1], "g", 1) != 1)
		pt_diag("dying thread: no go");
	close(go[1]);
	if (read(rep[0], id, sizeof(id)) != sizeof(id))
		pt_diag("dying thread: no tid");
	close(rep[0]);
	t = id[0];
	c = id[1];
	if (t > 0 && c > 0) {
		armed += !pt_free_watch(&wt, t);
		armed += !pt_free_watch(&wc, c);
	}
	if (write(hold[1], "g", 1) != 1)
		pt_diag("dying thread: no hold");
	close(hold[1]);
	waitpid(a, &st, 0);
	/*
	 * Each last hit comes after the wait that reaps its task (A's
	 * after this one): read the counts once A, C and T have been
	 * freed, past their do_task_dead() (pt_exit.h).
	 */
	freed += !pt_free_wait(&wa);
	freed += !pt_free_wait(&wt);
	freed += !pt_free_wait(&wc);
	PT_EQ(freed, 3, "dying thread: A, C and C's thread %d freed (%d watched)",
	      (int)t, armed);
	memset(&li, 0, sizeof(li));
	if (fd >= 0) {
		if (ioctl(fd, PEA_LINK_IOC_INFO, &li))
			pt_diag("dying thread: PEA_LINK_IOC_INFO: %d", errno);
		close(fd);
	}
	for (cpu = 0; cpu < ncpu; cpu++)
		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			memcpy(&tid, rec + 12 + 28, 4);
			memcpy(&tgid, rec + 12 + 32, 4);
			if (tgid == (__u32)a) {
				na++;	/* A's own last hit */
				continue;
			}
			nc++;	/* C's: T's last hit, C's own */
			nt += !tid;	/* a reaped thread's tid reads 0 */
		}
	/*
	 * C's own last hit races with A's wait for C: reaped before it, it
	 * is counted deep, not written (review G3); T's likewise if C ends
	 * first, and A's own with this test's wait for A (seen once on the
	 * debug kernel). Each of the three is one or the other, exactly.
	 */
	PT_OK(na <= 1, "dying thread: A's last hit written at most once (%d)",
	      na);
	PT_EQ(na + nc + (int)li.deep, 3,
	      "dying thread: the last hits of A, of C's thread %d (reaped already) and of C written (%d + %d) or counted deep (%llu)",
	      (int)t, na, nc, (unsigned long long)li.deep);
	PT_OK(nt <= nc && nc >= 1,
	      "dying thread: a reaped thread's hit written with tid 0 (%d of %d)", nt, nc);
}

/* The pid of the task named @comm, or 0. */
static pid_t pid_of_comm(const char *comm)
{
	char path[300], buf[32];
	struct dirent *d;
	pid_t pid = 0;
	DIR *dir;

	dir = opendir("/proc");
	while (dir && !pid && (d = readdir(dir))) {
		if (atoi(d->d_name) <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		if (pt_read_file(path, buf, sizeof(buf)) < 0)
			continue;
		buf[strcspn(buf, "\n")] = 0;
		if (!strcmp(buf, comm))
			pid = atoi(d->d_name);
	}
	if (dir)
		closedir(dir);
	return pid;
}

static int kthread_link(pid_t tgid)
{
	struct pea_probe_attr p = pt_probe_attr("do_task_dead",
						PEA_PROBE_F_DESCENDANTS);

	p.filter_tgid = tgid;
	return ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &p);
}

/*
 * A kernel thread is reaped at its exit (kthreadd ignores SIGCHLD) and
 * runs on into do_task_dead() with its pid gone: it is in no user
 * process's tree, whatever the filter, and none of its hits is counted
 * deep (one was, and made the dying-thread case count 4 of 3 when a
 * kworker ended meanwhile). The test module's task storm starts a
 * kthread on each CPU, and its stop ends them. A link on such a
 * kthread's own tree takes its last hit as its own (review of the fix,
 * L2).
 */
static void test_kthread_exit(void)
{
	struct pea_link_info li, lk;
	int fd, fk = -1, i;
	pid_t k;

	fd = kthread_link(getpid());
	PT_OK(fd >= 0, "kthread exit: kprobe on do_task_dead attached (%d)",
	      fd < 0 ? -errno : fd);
	if (fd < 0)
		return;
	PT_EQ(pt_storm_start("tree", 1U << PEA_ST_TASK), 0,
	      "kthread exit: a kthread started on each CPU");
	/* A link on the kthread of CPU 0 itself: its own last hit is in. */
	k = pid_of_comm("pea_st/0");
	PT_OK(k > 0, "kthread exit: pea_st/0 is pid %d", (int)k);
	if (k > 0)
		fk = kthread_link(k);
	PT_OK(fk >= 0, "kthread exit: a link on pea_st/0's tree (%d)",
	      fk < 0 ? -errno : fk);
	usleep(20000);
	PT_EQ(pt_storm_stop(), 0, "kthread exit: the kthreads stopped");
	/* kthread_stop() returns at the thread's exit_mm(), before its end. */
	memset(&li, 0, sizeof(li));
	memset(&lk, 0, sizeof(lk));
	for (i = 0; i < 100 * pt_time_scale(); i++) {
		if (info(fd, &li) || (li.hits >= (__u64)ncpu &&
				      (fk < 0 || info(fk, &lk) ||
				      lk.written + lk.dropped)))
			break;
		usleep(100000);
	}
	pt_diag("kthread exit: pea_st/0's link: hits %llu written %llu dropped %llu filtered %llu deep %llu",
		(unsigned long long)lk.hits, (unsigned long long)lk.written,
		(unsigned long long)lk.dropped, (unsigned long long)lk.filtered,
		(unsigned long long)lk.deep);
	PT_OK(li.hits >= (__u64)ncpu,
	      "kthread exit: %llu hits of do_task_dead (>= %d, the kthreads' last)",
	      (unsigned long long)li.hits, ncpu);
	PT_EQ(li.deep, 0, "kthread exit: none counted deep");
	PT_EQ(li.written, 0, "kthread exit: none written");
	/* The storm's records may have filled the ring: written or dropped. */
	PT_EQ(lk.hits - lk.filtered, 1,
	      "kthread exit: pea_st/0's own last hit taken in its tree");
	PT_EQ(lk.written + lk.dropped, 1,
	      "kthread exit: pea_st/0's last hit written or counted dropped");
	PT_EQ(lk.deep, 0, "kthread exit: pea_st/0's tree: none counted deep");
	close(fd);
	if (fk >= 0)
		close(fk);
	pt_rings_drain(rings, ncpu);
}

static void test_errnos(void)
{
	static const __u32 bad[] = {
		PEA_PROBE_F_DESC_ONLY,
		1U << 14,
	};
	int k, i, fd;

	for (k = 0; k < NLINKS; k++) {
		fd = attach(k, PEA_PROBE_F_DESCENDANTS, 0);
		PT_EQ(fd, -EINVAL, "%s: DESCENDANTS without a tgid filter: EINVAL",
		      kind[k]);
		fd = attach(k, PEA_PROBE_F_DESCENDANTS | PEA_PROBE_F_DESC_ONLY,
			    0);
		PT_EQ(fd, -EINVAL, "%s: DESC_ONLY without a tgid filter: EINVAL",
		      kind[k]);
		for (i = 0; i < 2; i++) {
			fd = attach(k, bad[i], getpid());
			PT_EQ(fd, -EINVAL, "%s: flags 0x%x: EINVAL", kind[k],
			      bad[i]);
			if (fd >= 0)
				close(fd);
		}
		fd = attach(k, PEA_PROBE_F_DESCENDANTS | PEA_PROBE_F_DESC_ONLY,
			    getpid());
		PT_OK(fd >= 0, "%s: both flags with a tgid filter (%d)",
		      kind[k], fd);
		if (fd >= 0)
			close(fd);
	}
}

static void test_info_sizes(void)
{
	unsigned char old[PEA_LINK_INFO_SIZE_VER1 + 8];
	int fd = attach(KP, PEA_PROBE_F_DESCENDANTS, getpid());

	PT_OK(fd >= 0, "a link for the info sizes");
	if (fd < 0)
		return;
	PT_EQ(offsetof(struct pea_link_info, deep), PEA_LINK_INFO_SIZE_VER1,
	      "deep at the older size's end");
	memset(old, 0xa5, sizeof(old));
	PT_EQ(ioctl(fd, PT_LINK_IOC_INFO_VER1, old), 0,
	      "the info ioctl of the size before deep (%d)",
	      PEA_LINK_INFO_SIZE_VER1);
	PT_EQ(old[PEA_LINK_INFO_SIZE_VER1], 0xa5,
	      "no byte written past that size");
	close(fd);
}

int main(void)
{
	char buf[32];
	ssize_t n;

	ncpu = pt_setup(NCPU_MAX);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0)
		self[n] = 0;
	if (pt_read_file(TRACEFS "syscalls/sys_enter_getppid/id", buf,
			 sizeof(buf)) >= 0)
		tp_id = atoi(buf);
	PT_OK(tp_id > 0 && n > 0, "the tracepoint's id and this file's path");
	ncpu = pt_cpu_map("tree", 64, &map_fd, ev_fd, rings);
	run("A a subreaper, DESCENDANTS", PEA_PROBE_F_DESCENDANTS, true,
	    false, 15, 1, 4, 0);
	run("A a subreaper, DESC_ONLY",
	    PEA_PROBE_F_DESCENDANTS | PEA_PROBE_F_DESC_ONLY, true, false, 14,
	    0, 4, 0);
	run("A not a subreaper: the orphan leaves the tree",
	    PEA_PROBE_F_DESCENDANTS, false, false, 11, 1, 0, 0);
	run("no flag: A alone", 0, true, false, 1, 1, 0, 0);
	run("a chain of 66 below A", PEA_PROBE_F_DESCENDANTS, false, true,
	    PEA_TREE_DEPTH_MAX, 0, 0, CHAIN - PEA_TREE_DEPTH_MAX);
	test_pidns();
	test_uretprobe_leaves();
	test_dying_thread();
	test_kthread_exit();
	test_errnos();
	test_info_sizes();
	return pt_done();
}
