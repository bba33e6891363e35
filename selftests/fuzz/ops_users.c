// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzzer family "uprobe_users": uprobes and uretprobes attached from
 * several users at once, with threads parked inside the probed function.
 *
 * Each call runs this program again as a child, "test_fuzz --uprobe-user
 * PERSONA RET MAXACTIVE PARKED CALLS": as root it opens /dev/pea and
 * creates a map, then becomes the persona (root; nobody with only
 * CAP_PERFMON; nobody with nothing) and attaches a uprobe or uretprobe
 * on fz_park() with filter_tgid its own pid. The oracle knows Linux's
 * rule: uprobes need CAP_SYS_ADMIN (the uprobe PMU's), so only root
 * attaches. Attached, the child parks PARKED threads inside fz_park()
 * (blocked in read(2) past the probe), calls it CALLS times itself, releases them and
 * checks the link's counters exactly: a uretprobe pairs the calls of at
 * most MAXACTIVE tasks at once (0: 64) and counts the rest as missed.
 * The exit status carries the result: 0, the attach errno, or 200 + the
 * check that failed. Several worker threads run the family at once, so
 * children of different personas attach, park and detach side by side.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <linux/pea.h>
#include "../pea_test.h"
#include "../pt_perm.h"
#include "fuzz.h"

#define FZ_UU_PARKED_MAX	8
#define FZ_UU_CALLS_MAX		4

enum { FZ_UU_ROOT, FZ_UU_PERFMON, FZ_UU_NONE, FZ_UU_PERSONAS };

static const char *const fz_uu_names[FZ_UU_PERSONAS] = {
	"root", "nobody+CAP_PERFMON", "nobody",
};

/*
 * What Linux's uprobe PMU answers the persona (perf_uprobe_event_init():
 * CAP_SYS_ADMIN), as pea must (docs/security.md).
 */
static int fz_uu_want(int persona)
{
	return persona == FZ_UU_ROOT ? 0 : EACCES;
}

/* Threads inside fz_park(), past its first instruction (the probe). */
static int fz_uu_inside;

/* The probed function: blocks until a byte arrives on @fd. */
__attribute__((noinline)) long fz_park(long fd)
{
	char c;

	__atomic_fetch_add(&fz_uu_inside, 1, __ATOMIC_SEQ_CST);
	return read((int)fd, &c, 1) == 1 ? 1 : 0;
}

/* fz_park's file offset, from the mapping that holds it (0: none). */
static __u64 fz_park_offset(void)
{
	unsigned long addr = (unsigned long)fz_park, start, end, pgoff;
	char line[512], perms[8];
	__u64 off = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %7s %lx", &start, &end, perms,
			   &pgoff) == 4 && addr >= start && addr < end)
			off = addr - start + pgoff;
	if (f)
		fclose(f);
	return off;
}

static void *fz_uu_park_thread(void *arg)
{
	fz_park((long)arg);
	return NULL;
}

/* The child: see the top of the file. */
int fz_uprobe_user(int argc, char **argv)
{
	int persona, ret, maxactive, parked, calls, map, link, i;
	int p[2], q[2];
	struct pea_map_attr mc;
	struct pea_uprobe_attr a;
	struct pea_link_info info;
	pthread_t th[FZ_UU_PARKED_MAX];
	__u64 want_written, want_missed;
	unsigned int slots;

	if (argc < 7)
		return 250;
	persona = atoi(argv[2]);
	ret = atoi(argv[3]);
	maxactive = atoi(argv[4]);
	parked = atoi(argv[5]);
	calls = atoi(argv[6]);
	if (parked > FZ_UU_PARKED_MAX || pipe(p) || pipe(q))
		return 251;
	alarm(60);
	map = open("/dev/pea", O_RDWR | O_CLOEXEC);
	memset(&mc, 0, sizeof(mc));
	mc.key_size = 4;
	mc.value_size = 4;
	mc.max_entries = 1;
	mc.open_flags = O_CLOEXEC;
	snprintf(mc.name, sizeof(mc.name), "fz_uu_%d", getpid());
	map = map < 0 ? -1 : ioctl(map, PEA_IOC_MAP_CREATE, &mc);
	if (map < 0)
		return 252;
	memset(&a, 0, sizeof(a));
	a.offset = fz_park_offset();
	if (persona != FZ_UU_ROOT &&
	    pt_drop_to_nobody(persona == FZ_UU_PERFMON ? CAP_PERFMON : -1))
		return 253;
	a.size = sizeof(a);
	a.flags = PEA_UPROBE_F_CLOEXEC | (ret ? PEA_UPROBE_F_RETPROBE : 0);
	a.path = (__u64)(unsigned long)"/proc/self/exe";
	a.path_fd = -1;
	a.filter_tgid = getpid();
	a.maxactive = ret ? maxactive : 0;
	link = ioctl(map, PEA_MAP_IOC_ATTACH_UPROBE, &a);
	if (link < 0)
		return errno < 200 ? errno : 199;
	for (i = 0; i < parked; i++)
		if (pthread_create(&th[i], NULL, fz_uu_park_thread,
				   (void *)(long)p[0]))
			return 201;
	/* Each is past the entry probe once it counted itself. */
	for (i = 0; i < 3000 && __atomic_load_n(&fz_uu_inside,
						 __ATOMIC_SEQ_CST) < parked; i++)
		usleep(1000);
	if (__atomic_load_n(&fz_uu_inside, __ATOMIC_SEQ_CST) != parked)
		return 202;
	for (i = 0; i < calls; i++)
		if (write(q[1], "x", 1) != 1 || fz_park(q[0]) != 1)
			return 203;
	for (i = 0; i < parked; i++)
		if (write(p[1], "x", 1) != 1)
			return 204;
	for (i = 0; i < parked; i++)
		pthread_join(th[i], NULL);
	memset(&info, 0, sizeof(info));
	if (ioctl(link, PEA_LINK_IOC_INFO, &info))
		return 205;
	/*
	 * A uprobe writes every call; a uretprobe pairs those of at most
	 * maxactive tasks at once: with the parked ones holding them all,
	 * this task's calls are missed, and so are the parked threads'
	 * past maxactive. The map has no event: every write is an error.
	 */
	slots = maxactive ? (unsigned int)maxactive : 64;
	want_written = 0;
	want_missed = 0;
	if (!ret) {
		want_written = calls + parked;
	} else {
		want_written = parked < (int)slots ? (unsigned int)parked : slots;
		want_missed = parked - want_written;
		if (parked < (int)slots)
			want_written += calls;
		else
			want_missed += calls;
	}
	/* Other children's calls are filtered out (and counted in hits). */
	if (info.hits - info.filtered != want_written ||
	    info.errors != want_written)
		return 206;
	if (info.written || info.missed != want_missed)
		return 207;
	close(link);
	return 0;
}

static int op_uprobe_users(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	char args[5][16];
	int persona, got, status;
	pid_t child;

	persona = (int)fz_below(r, FZ_UU_PERSONAS);
	snprintf(args[0], sizeof(args[0]), "%d", persona);
	snprintf(args[1], sizeof(args[1]), "%d", (int)fz_below(r, 2));
	snprintf(args[2], sizeof(args[2]), "%d", (int)fz_below(r, 9));
	snprintf(args[3], sizeof(args[3]), "%d",
		 (int)fz_below(r, FZ_UU_PARKED_MAX + 1));
	snprintf(args[4], sizeof(args[4]), "%d",
		 (int)fz_below(r, FZ_UU_CALLS_MAX + 1));
	child = fork();
	if (child == 0) {
		execl("/proc/self/exe", "test_fuzz", "--uprobe-user", args[0],
		      args[1], args[2], args[3], args[4], (char *)NULL);
		_exit(249);
	}
	if (child < 0)
		return errno;
	if (waitpid(child, &status, 0) != child)
		return errno;
	got = WIFEXITED(status) ? WEXITSTATUS(status) : 255;
	if (got >= 199) {
		fz_violation("uprobe_users",
			     "%s child (ret %s, maxactive %s, %s parked, %s calls) failed its check %d",
			     fz_uu_names[persona], args[1], args[2], args[3],
			     args[4], got);
		return 0;
	}
	return fz_expect("uprobe_users", fz_uu_names[persona], got,
			 fz_uu_want(persona));
}

const struct fz_op fz_ops_users[] = {
	{ "uprobe_users", op_uprobe_users, 1, false },
	{ NULL, NULL, 0, false },
};
