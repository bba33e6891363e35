// SPDX-License-Identifier: GPL-2.0
/*
 * Probe links are bounded per user and in all: the live links of a user
 * (max_user_links, EMLINK) and the kernel memory they pin, kretprobe
 * instances (maxactive x instance size), tracepoint links' perf events and
 * the links themselves (max_user_probe_kb per user and max_probe_kb in
 * all, ENOMEM). Users with CAP_SYS_RESOURCE or CAP_SYS_ADMIN are exempt
 * from the per-user bounds (as from RLIMIT_NPROC) and from the global
 * ones' reserve (a quarter of each is theirs alone), nobody from the
 * global ones. debugfs pea/quota shows the charges.
 */
#include <sys/utsname.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_exit.h"
#include "pt_perm.h"
#include "pt_quota.h"
#include "pt_close.h"

#define PARAM(x)	"/sys/module/pea/parameters/" x
#define ATTACK_MAX	20	/* 20 x 8 MiB: safe in a 1 GiB guest */
#define LINKS_MAX	300

static int map_fd;

/* The attack: the largest kretprobe instance, 4096 of them. */
static struct pea_probe_attr attack_attr(void)
{
	struct pea_probe_attr a = pt_probe_attr("ksys_mmap_pgoff",
					     PEA_PROBE_F_RETPROBE);

	a.maxactive = PEA_MAXACTIVE_MAX;
	a.capture_mode = PEA_CAPTURE_FIXED;
	a.capture_len = PEA_CAPTURE_MAX;
	a.capture_flags = PEA_CAPTURE_USER;
	a.kstack_depth = PEA_KSTACK_MAX;
	return a;
}

/*
 * A child that becomes @uid with CAP_PERFMON, attaches @a until refused
 * (at most @max), writes the count and the errno to its pipe, and holds
 * the links until the parent closes the other pipe; then closes them
 * from several threads (pt_close.h: hundreds of grace periods in a row
 * otherwise) and exits.
 */
struct holder {
	pid_t pid;
	int n, err;
	int go;		/* write end: closing it releases the links */
};

static void hold_start(struct holder *h, uid_t uid,
		       const struct pea_probe_attr *a, int max)
{
	static int held[PEA_MAX_LINKS];
	int res[2], rel[2], n = 0, err = 0, fd;
	char c;

	if (pipe(res) || pipe(rel))
		pt_fatal("pipe");
	fflush(stdout);
	h->pid = fork();
	if (h->pid == 0) {
		struct pea_probe_attr b = *a;
		struct rlimit rl = { 4096, 4096 };

		close(res[0]);
		close(rel[1]);
		setrlimit(RLIMIT_NOFILE, &rl);
		/* A capture reads memory: CAP_BPF too (docs/security.md). */
		if (pt_drop_to2(uid, CAP_PERFMON, CAP_BPF)) {
			err = 1000;
		} else {
			while (n < max && n < PEA_MAX_LINKS) {
				fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &b);
				if (fd < 0) {
					err = errno;
					break;
				}
				held[n++] = fd;
			}
		}
		if (write(res[1], &n, sizeof(n)) != sizeof(n) ||
		    write(res[1], &err, sizeof(err)) != sizeof(err))
			_exit(1);
		if (read(rel[0], &c, 1) < 0)
			_exit(1);
		pt_close_parallel(held, n);
		_exit(0);
	}
	close(res[1]);
	close(rel[0]);
	h->go = rel[1];
	if (read(res[0], &h->n, sizeof(h->n)) != sizeof(h->n) ||
	    read(res[0], &h->err, sizeof(h->err)) != sizeof(h->err)) {
		h->n = -1;
		h->err = -1;
	}
	close(res[0]);
}

static void hold_end(struct holder *h)
{
	close(h->go);
	waitpid(h->pid, NULL, 0);
}

/* Wait (2 s at most) until task @pid sleeps in @fn. */
static int wait_wchan(pid_t pid, const char *fn)
{
	char path[64], buf[64];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
	for (i = 0; i < 1000 * pt_time_scale(); i++) {
		if (!pt_read_file(path, buf, sizeof(buf)) && !strcmp(buf, fn))
			return 0;
		usleep(10000);
	}
	return -1;
}

/*
 * The retired-link attack (limits review H1): a child that becomes nobody
 * with CAP_PERFMON and, round after round, attaches @a, leaves a process
 * of its own asleep in @a's function (a read of an empty pipe) and
 * closes the link, until an attach is refused or @max rounds. It writes
 * the rounds and the errno, then holds the sleepers until the parent
 * closes the other pipe; its exit wakes them (their pipe loses its
 * writer).
 */
static void park_start(struct holder *h, const struct pea_probe_attr *a,
		       int max)
{
	int res[2], rel[2], sleep[2], n = 0, err = 0, fd;
	pid_t k;
	char c;

	if (pipe(res) || pipe(rel))
		pt_fatal("pipe");
	fflush(stdout);
	h->pid = fork();
	if (h->pid == 0) {
		close(res[0]);
		close(rel[1]);
		/* Dumpable again (pt_drop_to()): /proc/PID/wchan is ours. */
		if (pt_drop_to2(PT_NOBODY, CAP_PERFMON, CAP_BPF) ||
		    pipe(sleep)) {
			err = 1000;
			max = 0;
		}
		while (n < max) {
			fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, a);
			if (fd < 0) {
				err = errno;
				break;
			}
			k = fork();
			if (k == 0) {
				close(fd);	/* the link is the parent's */
				close(sleep[1]);
				_exit(read(sleep[0], &c, 1) != 0);
			}
			if (k < 0 || wait_wchan(k, "pipe_read")) {
				err = 1001;
				break;
			}
			close(fd);
			n++;
		}
		if (write(res[1], &n, sizeof(n)) != sizeof(n) ||
		    write(res[1], &err, sizeof(err)) != sizeof(err))
			_exit(1);
		if (read(rel[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(res[1]);
	close(rel[0]);
	h->go = rel[1];
	if (read(res[0], &h->n, sizeof(h->n)) != sizeof(h->n) ||
	    read(res[0], &h->err, sizeof(h->err)) != sizeof(h->err)) {
		h->n = -1;
		h->err = -1;
	}
	close(res[0]);
}

int main(void)
{
	struct pea_probe_attr atk = attack_attr(), cheap;
	long user_links, user_kb, max_kb, total_kb, l = 0, b = 0, b0, per, free0;
	long root_links, root0, kp_bytes, tp_bytes, max_b;
	struct holder a, c;
	long paranoid = pt_perm_read_int(PT_PARANOID);
	struct utsname u;
	bool debug;
	struct stat st;
	int i, n, fds[LINKS_MAX + 1], bad;

	/* Debian's paranoid 3 gives kprobes to CAP_SYS_ADMIN alone. */
	PT_EQ(pt_perm_write_int(PT_PARANOID, 2), 0,
	      "perf_event_paranoid 2 for the test (was %ld)", paranoid);
	map_fd = pt_map_create("limits_probe", pt_nr_cpus(), 0);
	if (map_fd < 0)
		pt_fatal("map");
	if (stat(PEA_DEVICE_PATH, &st))
		pt_fatal("stat");

	/* The parameters and their defaults. */
	user_links = pt_perm_read_int(PARAM("max_user_links"));
	user_kb = pt_perm_read_int(PARAM("max_user_probe_kb"));
	max_kb = pt_perm_read_int(PARAM("max_probe_kb"));
	total_kb = pt_meminfo("MemTotal");
	PT_EQ(user_links, 256, "max_user_links defaults to 256");
	PT_EQ(user_kb, 65536, "max_user_probe_kb defaults to 64 MiB");
	PT_EQ(max_kb, total_kb / 8, "max_probe_kb defaults to RAM / 8 (%ld KiB)",
	      total_kb / 8);
	PT_OK(pt_quota(-1, &l, &b) == 0 && l == 0 && b == 0,
	      "debugfs quota: nothing charged (%ld links, %ld bytes)", l, b);

	/* The attack: nobody with CAP_PERFMON, huge kretprobes. */
	free0 = pt_meminfo("MemAvailable");
	hold_start(&a, PT_NOBODY, &atk, ATTACK_MAX);
	pt_quota(PT_NOBODY, &l, &b);
	per = a.n > 0 ? b / a.n : 0;
	pt_diag("attack: %d links, then errno %d; %ld bytes charged (%ld per link); MemAvailable fell by %ld KiB",
		a.n, a.err, b, per, free0 - pt_meminfo("MemAvailable"));
	PT_EQ(a.err, ENOMEM, "the attack is refused with ENOMEM");
	PT_OK(a.n >= 1 && a.n < ATTACK_MAX, "the attack got %d links", a.n);
	PT_EQ(l, a.n, "debugfs: the user's live links");
	PT_OK(b <= user_kb * 1024 && b + per > user_kb * 1024,
	      "charged %ld <= max_user_probe_kb, one link more would not fit",
	      b);
	PT_OK(per >= PEA_MAXACTIVE_MAX * (PEA_CAPTURE_MAX + PEA_KSTACK_MAX * 8),
	      "a link is charged at least maxactive x its entry data (%ld)",
	      per);
	/*
	 * The charge is the allocator's size; pea's debug kernel adds
	 * KASAN's redzones (a 2 KiB instance takes a 4 KiB object) and
	 * shadow, up to twice as much.
	 */
	uname(&u);
	debug = strstr(u.release, "-pea-") != NULL;
	PT_OK(free0 - pt_meminfo("MemAvailable") <=
	      (debug ? 2 : 1) * (b + per) / 1024 + 8192,
	      "the memory the links took is what they were charged, within a link%s",
	      debug ? " (twice that with KASAN)" : "");

	/* Another user is not bounded by the first one's charges. */
	hold_start(&c, PT_NOBODY - 1, &atk, 1);
	PT_OK(c.n == 1 && c.err == 0, "another user attaches one (%d, %d)",
	      c.n, c.err);
	hold_end(&c);

	/*
	 * The global bound: users without CAP_SYS_RESOURCE may take three
	 * quarters of it, room for exactly two more links; root the rest.
	 */
	pt_quota(-1, &l, &b0);
	max_b = (b0 + 2 * per + per / 2) * 4 / 3;
	PT_EQ(pt_perm_write_int(PARAM("max_probe_kb"), max_b / 1024), 0,
	      "root lowers max_probe_kb");
	max_b = max_b / 1024 * 1024;
	hold_start(&c, PT_NOBODY - 1, &atk, ATTACK_MAX);
	PT_OK(c.n == 2 && c.err == ENOMEM,
	      "a second user gets the 2 links three quarters of max_probe_kb leave (%d, %d)",
	      c.n, c.err);
	pt_quota(-1, &l, &b);
	for (n = 0, i = 0; i < ATTACK_MAX; i++) {
		fds[i] = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &atk);
		if (fds[i] < 0)
			break;
		n++;
	}
	PT_OK(n == (max_b - b) / per && i < ATTACK_MAX && errno == ENOMEM,
	      "root gets the reserved quarter, %ld links, then ENOMEM: max_probe_kb bounds root too (%d, %d)",
	      (max_b - b) / per, n, i < ATTACK_MAX ? errno : 0);
	pt_close_parallel(fds, n);
	hold_end(&c);
	cheap = pt_probe_attr("ksys_mmap_pgoff", 0);
	PT_EQ(pt_perm_write_int(PARAM("max_probe_kb"), max_kb), 0,
	      "max_probe_kb restored");
	hold_end(&a);
	PT_EQ(pt_quota_settled(PT_NOBODY), 0, "the links' close returns the charge");

	/* Links per user. */
	hold_start(&a, PT_NOBODY, &cheap, LINKS_MAX);
	PT_OK(a.n == user_links && a.err == EMLINK,
	      "nobody with CAP_PERFMON: link %d gives EMLINK (%d)", a.n + 1,
	      a.err);
	hold_start(&c, PT_NOBODY - 1, &cheap, 1);
	PT_OK(c.n == 1 && c.err == 0,
	      "another user still attaches (%d, %d)", c.n, c.err);
	hold_end(&c);
	hold_end(&a);
	pt_quota_settled(PT_NOBODY);

	/*
	 * Users within their own bounds cannot together take every link:
	 * three quarters of PEA_MAX_LINKS is theirs, the rest root's.
	 */
	PT_EQ(pt_perm_write_int(PARAM("max_user_links"), PEA_MAX_LINKS), 0,
	      "root raises max_user_links to %d", PEA_MAX_LINKS);
	hold_start(&a, PT_NOBODY, &cheap, PEA_MAX_LINKS);
	PT_OK(a.n == PEA_MAX_LINKS - PEA_MAX_LINKS / 4 && a.err == EMLINK,
	      "nobody gets %d links, then EMLINK (%d, %d)",
	      PEA_MAX_LINKS - PEA_MAX_LINKS / 4, a.n, a.err);
	n = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &cheap);
	PT_OK(n >= 0, "root still attaches (%d)", n < 0 ? errno : 0);
	if (n >= 0)
		close(n);
	hold_end(&a);
	PT_EQ(pt_perm_write_int(PARAM("max_user_links"), user_links), 0,
	      "max_user_links restored");
	pt_quota_settled(PT_NOBODY);

	/* Root (CAP_SYS_ADMIN) is exempt from the per-user bounds. */
	pt_quota(0, &root_links, &root0);
	setrlimit(RLIMIT_NOFILE, &(struct rlimit){ 4096, 4096 });
	for (bad = 0, i = 0; i <= user_links && i < LINKS_MAX; i++) {
		fds[i] = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &cheap);
		bad += fds[i] < 0;
	}
	PT_EQ(bad, 0, "root attaches max_user_links + 1 links");
	pt_quota(0, &l, &b);
	PT_EQ(l - root_links, user_links + 1, "debugfs counts them");
	kp_bytes = (b - root0) / (user_links + 1);
	pt_close_parallel(fds, user_links + 1 < LINKS_MAX ?
			  user_links + 1 : LINKS_MAX);

	/* A tracepoint link is charged its perf events too. */
	{
		struct pea_tp_attr t;
		char buf[32];
		int fd;

		memset(&t, 0, sizeof(t));
		t.size = sizeof(t);
		t.filter_cpu = -1;
		strcpy(t.name, "syscalls:sys_enter_getppid");
		if (pt_read_file("/sys/kernel/tracing/events/syscalls/sys_enter_getppid/id",
				 buf, sizeof(buf)) &&
		    pt_read_file("/sys/kernel/debug/tracing/events/syscalls/sys_enter_getppid/id",
				 buf, sizeof(buf)))
			buf[0] = 0;
		t.event_id = atoi(buf);
		pt_quota(0, &l, &b0);
		fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, &t);
		pt_quota(0, &l, &b);
		tp_bytes = b - b0;
		PT_OK(fd >= 0 && tp_bytes >= kp_bytes + pt_nr_cpus() * 512,
		      "a tracepoint link is charged its %d perf events (%ld bytes, a kprobe link %ld)",
		      pt_nr_cpus(), tp_bytes, kp_bytes);
		if (fd >= 0)
			close(fd);
	}
	PT_EQ(pt_quota_settled_at(0, root0), root0, "root's charge back where it was");

	/*
	 * A kretprobe closed while calls are in flight keeps its instance
	 * pool (on 6.12 all of it) until they return: the link stays, with
	 * its charge, retired. Round after round of {attach, a sleeper in
	 * the function, close} ends in ENOMEM within max_user_probe_kb.
	 */
	atk = attack_attr();
	strcpy(atk.symbol, "pipe_read");
	park_start(&a, &atk, ATTACK_MAX);
	pt_quota(PT_NOBODY, &l, &b);
	pt_diag("retired links: %d rounds, then errno %d; nobody holds %ld links, %ld bytes",
		a.n, a.err, l, b);
	PT_OK(a.err == ENOMEM && a.n >= 1 && a.n * per <= user_kb * 1024,
	      "rounds of attach, sleeper, close end in ENOMEM within max_user_probe_kb (%d rounds, errno %d)",
	      a.n, a.err);
	PT_OK(l == 0 && b >= a.n * per,
	      "the closed links keep their charge while their calls sleep, not a place among the links (%ld links, %ld bytes)",
	      l, b);
	hold_end(&a);
	PT_EQ(pt_quota_settled(PT_NOBODY), 0,
	      "once the sleepers return, the retired links are freed");

	/*
	 * Retired links stay registered: they have a count bound of their
	 * own, max_user_links, whatever their bytes.
	 */
	PT_EQ(pt_perm_write_int(PARAM("max_user_links"), 3), 0,
	      "root lowers max_user_links to 3");
	cheap = pt_probe_attr("pipe_read", PEA_PROBE_F_RETPROBE);
	park_start(&a, &cheap, ATTACK_MAX);
	PT_OK(a.n == 3 && a.err == EMLINK,
	      "3 links retired with sleepers, then EMLINK (%d, %d)", a.n, a.err);
	hold_end(&a);
	PT_EQ(pt_perm_write_int(PARAM("max_user_links"), user_links), 0,
	      "max_user_links restored");
	PT_EQ(pt_quota_settled(PT_NOBODY), 0,
	      "once their sleepers return, the retired links are freed");

	/*
	 * Calls that never return: a task that exits inside the function
	 * leaves its slot to the next call (its owner is gone), and a link
	 * closed then is freed at once.
	 */
	{
		struct pea_probe_attr ex = pt_probe_attr("do_group_exit",
						PEA_PROBE_F_RETPROBE);
		struct pea_probe_attr en = pt_probe_attr("do_group_exit", 0);
		struct pea_link_info info, einfo;
		int fd, efd, freed;

		ex.maxactive = 2;
		fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &ex);
		efd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &en);
		/*
		 * Each child freed before the next exits (pt_exit.h): its
		 * instance goes back to the kernel's pool of 2 only in
		 * delayed_put_task_struct(), an RCU callback after its last
		 * schedule, which waitpid() does not wait for. Then pea's
		 * rate-limited scan (a jiffy).
		 */
		for (i = 0, freed = 0; fd >= 0 && i < 8; i++) {
			freed += !pt_child_exit_freed();
			pt_after_reap();
		}
		PT_EQ(freed, fd >= 0 ? 8 : 0,
		      "8 children exited, each freed before the next");
		memset(&info, 0, sizeof(info));
		memset(&einfo, 0, sizeof(einfo));
		n = fd >= 0 ? ioctl(fd, PEA_LINK_IOC_INFO, &info) : -1;
		if (efd < 0 || ioctl(efd, PEA_LINK_IOC_INFO, &einfo))
			n = -1;
		PT_OK(n == 0 && einfo.hits >= 8 && info.missed == 0,
		      "8 tasks exit inside a kretprobe of maxactive 2 (%llu entries): none missed (%d, missed %llu)",
		      (unsigned long long)einfo.hits, n,
		      (unsigned long long)info.missed);
		if (efd >= 0)
			close(efd);
		if (fd >= 0)
			close(fd);
		PT_EQ(pt_quota_settled_at(0, root0), root0,
		      "closed with exited calls in it, the link is freed");
	}
	pt_perm_write_int(PT_PARANOID, paranoid);
	return pt_done();
}
