// SPDX-License-Identifier: GPL-2.0
/*
 * A retired kretprobe link keeps no pid namespace, with a context fetch
 * (PEA_FETCH_BASE_CTX) as without: pea_link_close() gives the link's pid
 * namespace up at retirement (review-h1 M2), and the fetch set took a
 * reference of its own until the ctx review's F1 (before 1, during 2).
 *
 * The attacher G is pid 1 of a new pid namespace (root, init user ns).
 * It attaches kretprobe:pipe_read, with or without a ctx.pid fetch; a
 * sleeper S (nobody) then sleeps in pipe_read(); G closes its link (it is
 * retired: S's call is in flight) and the namespace's tasks all exit.
 * How many pid namespaces root may still create is measured by the
 * smallest /proc/sys/user/max_pid_namespaces under which one more
 * unshare(CLONE_NEWPID) succeeds: before, while S sleeps, after S woke.
 * The dead namespace still counted while S sleeps is the pinned one.
 */
#include <grp.h>
#include <sched.h>
#include <sys/wait.h>
#include "pea_test.h"

#define MAXNS "/proc/sys/user/max_pid_namespaces"

static int map_fd;

static void write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");

	if (!f)
		pt_fatal(path);
	fprintf(f, "%ld\n", v);
	fclose(f);
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f && fscanf(f, "%ld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/* 0 if a child may unshare(CLONE_NEWPID) now, else its errno. */
static int try_newpid(void)
{
	pid_t x;
	int st;

	fflush(stdout);
	x = fork();
	if (x == 0)
		_exit(unshare(CLONE_NEWPID) ? errno : 0);
	if (x < 0 || waitpid(x, &st, 0) != x || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* The smallest max_pid_namespaces under which one more may be created. */
static long min_max(void)
{
	long m;

	/* a freed namespace is uncounted after a grace period */
	usleep(1000000 * pt_time_scale());
	for (m = 1; m <= 256; m++) {
		write_long(MAXNS, m);
		if (!try_newpid())
			break;
	}
	write_long(MAXNS, 100000);	/* room for the scenario */
	return m <= 256 ? m : -1;
}

static void scenario(bool ctx)
{
	const char *what = ctx ? "ctx.pid fetch" : "no fetch";
	int ready[2], go[2], sl[2], r = -1;
	long m0, m1, m2;
	pid_t c, s;
	char ch;

	m0 = min_max();
	if (pipe(ready) || pipe(go))
		pt_fatal("pipe");
	fflush(stdout);
	c = fork();
	if (c == 0) {
		pid_t g;

		if (unshare(CLONE_NEWPID))
			_exit(90);
		g = fork();
		if (g == 0) {
			struct pea_probe_attr a =
				pt_probe_attr("pipe_read", PEA_PROBE_F_RETPROBE);
			struct pea_fetch f;
			int lfd;

			memset(&f, 0, sizeof(f));
			f.base = PEA_FETCH_BASE_CTX;
			f.arg = PEA_FETCH_CTX_PID;
			f.type = PEA_FETCH_U32;
			if (ctx) {
				a.fetches = (uintptr_t)&f;
				a.nr_fetches = 1;
			}
			lfd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);
			r = lfd >= 0 ? getpid() : -errno;
			if (write(ready[1], &r, sizeof(r)) != sizeof(r) ||
			    read(go[0], &ch, 1) != 1)
				_exit(8);
			close(lfd);	/* retired: S is in pipe_read() */
			_exit(0);
		}
		waitpid(g, NULL, 0);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &r, sizeof(r)) != sizeof(r))
		pt_fatal("G");
	pt_diag("%s: G (pid %d in its namespace) attached: %d", what, r, r);
	if (pipe(sl))
		pt_fatal("pipe");
	fflush(stdout);
	s = fork();
	if (s == 0) {
		close(sl[1]);
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(9);
		_exit(read(sl[0], &ch, 1) < 0);
	}
	close(sl[0]);
	usleep(300000);		/* S asleep in pipe_read() */
	if (write(go[1], "x", 1) != 1)
		pt_fatal("go");
	waitpid(c, NULL, 0);	/* the namespace has no task left */
	m1 = min_max();
	close(sl[1]);		/* S wakes */
	waitpid(s, NULL, 0);
	usleep(500000);		/* the reaper: 10 times a second */
	m2 = min_max();
	pt_diag("%s: namespaces counted (min max_pid_namespaces): before %ld, while S sleeps %ld, after S woke %ld",
		what, m0, m1, m2);
	PT_OK(r > 0, "%s: the attach in a new pid namespace (%d)", what, r);
	PT_OK(m1 == m0,
	      "%s: a retired link keeps no pid namespace while another user sleeps in the function (before %ld, during %ld, after %ld)",
	      what, m0, m1, m2);
	close(ready[0]);
	close(go[1]);
}

int main(void)
{
	long old = read_long(MAXNS);

	setvbuf(stdout, NULL, _IOLBF, 0);

	map_fd = pt_map_create("fetchns", pt_nr_cpus(), 0);
	if (map_fd < 0)
		pt_fatal("map");
	scenario(false);
	scenario(true);
	write_long(MAXNS, old);
	return pt_done();
}
