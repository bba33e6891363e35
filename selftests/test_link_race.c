// SPDX-License-Identifier: GPL-2.0
/*
 * A link fd closed while PEA_MAP_IOC_ATTACH_PROBE is still returning it.
 * Programs that close fds by number race attach this way: on every CPU,
 * one thread attaches and detaches in a loop while another closes the fd
 * numbers the next attach will get, for a few seconds, while a reader of
 * debugfs "links" (with a few hundred links listed) keeps the links lock
 * busy, which widens the window an attach spends after its fd is
 * installed. Afterwards every
 * object is gone (debugfs "objects" back at its baseline), attach and
 * detach work, and debugfs "links" is readable (nobody holds its lock).
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_close.h"

#define NCPU_MAX	64
#define RACE_SECONDS	4
#define GUESS		16	/* fd numbers each closer tries past the base */
#define BALLAST		300	/* links listed while the race runs */

static int map_fd, base_fd, ncpu;
static int stop;
static unsigned long attached[NCPU_MAX], closed[NCPU_MAX];
static int attach_err[NCPU_MAX];

static struct pea_probe_attr probe_attr(void)
{
	return pt_probe_attr("ksys_mmap_pgoff", 0);
}

static void *attacher(void *arg)
{
	struct pea_probe_attr a = probe_attr();
	int cpu = (int)(long)arg, fd;

	pt_pin(cpu);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);
		if (fd < 0) {
			/* EMFILE/EMLINK can happen while closers lag. */
			if (errno != EMFILE && errno != EMLINK)
				attach_err[cpu] = errno;
			continue;
		}
		attached[cpu]++;	/* the closers close it */
	}
	return NULL;
}

static void *closer(void *arg)
{
	int cpu = (int)(long)arg, i;

	pt_pin(cpu);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		for (i = 0; i < GUESS; i++)
			if (!close(base_fd + i))
				closed[cpu]++;
	return NULL;
}

/* Exits 0 when debugfs "links" reads to its end with the header line. */
static int read_links(void)
{
	FILE *f = fopen("/sys/kernel/debug/pea/links", "r");
	char line[512];
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n++;
	if (f)
		fclose(f);
	return n >= 1 ? 0 : 1;
}

static void *links_reader(void *arg)
{
	pt_pin((int)(long)arg);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		read_links();
	return NULL;
}

/*
 * Run @fn in a child and wait at most @secs for it: a kernel that died
 * holding the links lock leaves it blocked for good. Returns its exit
 * status, or -1 on a timeout.
 */
static int run_bounded(int (*fn)(void), int secs)
{
	pid_t pid = fork();
	int status, i;

	if (pid == 0)
		_exit(fn());
	for (i = 0; i < secs * 10; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 126;
		usleep(100000);
	}
	kill(pid, SIGKILL);
	return -1;
}

/* Exits 0 when an attach and its detach (close) both succeed. */
static int attach_detach(void)
{
	struct pea_probe_attr a = probe_attr();
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);

	if (fd < 0)
		return 2;
	return close(fd) ? 3 : 0;
}

int main(void)
{
	pthread_t at[NCPU_MAX], ct[NCPU_MAX], rt;
	int before[4], after[4], cpu, ev, ballast[BALLAST], i, errs = 0;
	static int left[4096];
	unsigned long na = 0, nc = 0;
	struct pea_probe_attr a = probe_attr();
	struct rlimit rl = { 4096, 4096 };

	ncpu = pt_setup(NCPU_MAX);
	setrlimit(RLIMIT_NOFILE, &rl);
	PT_EQ(pt_read_objects_settled(before), 0, "debugfs objects readable");
	map_fd = pt_map_create("link_race", 1, 0);
	ev = pt_event_open(0, PERF_SAMPLE_RAW);
	if (map_fd < 0 || ev < 0 || pt_map_update(map_fd, 0, ev))
		pt_fatal("map/event");
	/* They also keep the probe site armed: attaches stay cheap. */
	for (i = 0; i < BALLAST; i++) {
		ballast[i] = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);
		if (ballast[i] < 0)
			pt_fatal("ballast attach");
	}
	/* Every fd above is the race's: the next attach gets base_fd. */
	base_fd = dup(0);
	close(base_fd);

	pthread_create(&rt, NULL, links_reader, (void *)(long)(ncpu - 1));
	for (cpu = 0; cpu < ncpu; cpu++) {
		pthread_create(&at[cpu], NULL, attacher, (void *)(long)cpu);
		pthread_create(&ct[cpu], NULL, closer, (void *)(long)cpu);
	}
	sleep(RACE_SECONDS);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(rt, NULL);
	for (cpu = 0; cpu < ncpu; cpu++) {
		pthread_join(at[cpu], NULL);
		pthread_join(ct[cpu], NULL);
		na += attached[cpu];
		nc += closed[cpu];
		if (attach_err[cpu])
			errs++;
	}
	/*
	 * Links the closers did not reach (past GUESS) are still open:
	 * closed from several threads (pt_close.h), as the ballast below.
	 */
	for (i = base_fd; i < (int)rl.rlim_cur; i++)
		left[i - base_fd] = i;
	pt_close_parallel(left, (int)rl.rlim_cur - base_fd);
	pt_diag("%lu attaches, %lu closes by number", na, nc);
	PT_OK(na > 0 && nc > 0, "the race ran (%lu attaches, %lu closes by number)",
	      na, nc);
	PT_EQ(errs, 0, "no attach failed with an unexpected errno");

	PT_EQ(run_bounded(read_links, 30), 0,
	      "debugfs links is readable after the race");
	PT_EQ(run_bounded(attach_detach, 30), 0,
	      "attach and detach work after the race");
	pt_close_parallel(ballast, BALLAST);
	close(ev);
	close(map_fd);
	/*
	 * Events and maps go through RCU and a workqueue: give them time,
	 * 10 s at most (scaled); the wait ends when they are back.
	 */
	for (cpu = 0; cpu < 100 * pt_time_scale(); cpu++) {
		if (!pt_read_objects(after) && !memcmp(before, after, sizeof(after)))
			break;
		usleep(100000);
	}
	PT_OK(!memcmp(before, after, sizeof(after)),
	      "objects back at baseline: maps %d->%d events %d->%d rings %d->%d links %d->%d",
	      before[0], after[0], before[1], after[1], before[2], after[2],
	      before[3], after[3]);
	return pt_done();
}
