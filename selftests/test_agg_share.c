// SPDX-License-Identifier: GPL-2.0
/*
 * Aggregation tables shared by several links (PEA_LINK_IOC_AGG_SHARE): a
 * kprobe and a kretprobe on the test module's pea_st_kstack_target(i),
 * called N times from task and hardirq context on every CPU, count in
 * one table keyed by probe: each link's entry has the exact count, sum,
 * min, max and log2 buckets of i = 0 .. N-1, read through either fd,
 * and read-and-clear returns both; the table outlives the link that made
 * it (the other counts on, reads and clears), is charged once, to its
 * creator's user, until the last link goes; closing one link while the
 * other's writers run loses none of the other's hits; a retired
 * kretprobe lets go of it; fetch values shared by two links with the same
 * fetch types; and every errno (EBADF, EINVAL: itself, a value the kind
 * does not give, a fetch of another type, another pid namespace; ENOENT,
 * EEXIST).
 */
#include <sched.h>
#include <stddef.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_perm.h"
#include "pt_quota.h"
#include "pt_agg.h"

#define NCPU_MAX	64
#define N		2000

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];

/* ---- helpers ---- */

static int share(int link, int owner)
{
	return ioctl(link, PEA_LINK_IOC_AGG_SHARE, owner) ? errno : 0;
}

static int probe_flags(const char *sym, __u32 flags,
		       const struct pea_fetch *f, __u32 nr)
{
	struct pea_probe_attr a = pt_probe_attr(sym, flags);
	int fd;

	a.fetches = nr ? (uintptr_t)f : 0;
	a.nr_fetches = nr;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);
	if (fd < 0)
		pt_fatal("attach kprobe");
	return fd;
}

static int probe(const char *sym, __u32 flags)
{
	return probe_flags(sym, flags, NULL, 0);
}

static __u64 link_id(int link)
{
	struct pea_link_info info;

	if (ioctl(link, PEA_LINK_IOC_INFO, &info))
		pt_fatal("PEA_LINK_IOC_INFO");
	return info.id;
}

/* The entry whose first key word is @k, or NULL. */
static const struct pt_agg_merged *entry(const struct pt_agg_table *t, __u64 k)
{
	int i;

	for (i = 0; i < t->nr; i++)
		if (t->e[i].key[0] == k)
			return &t->e[i];
	return NULL;
}

/* Call pea_st_kstack_target(0 .. @count-1) on this CPU. */
static void calls(bool hardirq, __u32 count)
{
	struct pea_st_kstack_nmi c = {
		.count = count, .hardirq = hardirq, .task = !hardirq,
	};
	int err = pt_ioctl_errno(pt_st(), PEA_ST_IOC_KSTACK_NMI, &c);

	if (err || c.calls != count) {
		errno = err;
		pt_fatal("PEA_ST_IOC_KSTACK_NMI");
	}
}

static int log2_bucket(__u64 v)
{
	int b = 1;

	while (v) {
		b++;
		v >>= 1;
	}
	return b;
}

/* Whether @m holds exactly the calls i = 0 .. @n-1, log2 of i. */
static bool exact(const struct pt_agg_merged *m, __u32 n)
{
	__u64 want[PEA_AGG_LOG2_BUCKETS];
	__u32 i;

	memset(want, 0, sizeof(want));
	for (i = 0; i < n; i++)
		want[log2_bucket(i)]++;
	return m && m->count == n && m->sum == (__s64)n * (n - 1) / 2 &&
	       m->min == 0 && m->max == n - 1 &&
	       !memcmp(m->buckets, want, sizeof(want));
}

/* ---- one table, two probes ---- */

static void test_two_probes(void)
{
	struct pea_agg_attr a = pt_agg_attr(8, PEA_AGG_KEY_PROBE, PEA_AGG_VAL_ARG,
					 PEA_AGG_HIST_LOG2);
	long l0, b0, l1, b1, l2, b2, l3, b3;
	__u64 id_kp, id_kr;
	const struct pt_agg_merged *mp, *mr;
	int kp, kr, cpu, irq;
	struct pt_agg_table t;

	kp = probe("pea_st_kstack_target", 0);
	kr = probe("pea_st_kstack_target", PEA_PROBE_F_RETPROBE);
	id_kp = link_id(kp);
	id_kr = link_id(kr);
	pt_quota(-1, &l0, &b0);
	PT_EQ(pt_agg_create(kp, &a), 0,
	      "kprobe: a table keyed by probe of arg0, log2");
	pt_quota(-1, &l1, &b1);
	PT_EQ(share(kr, kp), 0, "kretprobe: shares the kprobe's table");
	pt_quota(-1, &l2, &b2);
	PT_OK(b1 > b0 && b2 == b1,
	      "sharing charges nothing more: %ld bytes for the table, %ld after sharing",
	      b1 - b0, b2 - b0);
	PT_EQ(pt_agg_read(kr, false, &t), 0, "read through the sharer's fd");
	PT_OK(t.nr == 0 && t.hits == 0, "the shared table is empty");
	for (cpu = 0; cpu < ncpu; cpu++) {
		pt_pin(cpu);
		for (irq = 0; irq < 2; irq++) {
			calls(irq, N);
			if (pt_agg_read(kp, false, &t) || t.nr != 2) {
				PT_OK(0, "CPU %d %s: two entries (%d)", cpu,
				      irq ? "hardirq" : "task", t.nr);
				continue;
			}
			PT_OK(t.hits == 2 * N && exact(entry(&t, id_kp), N) &&
			      exact(entry(&t, id_kr), N),
			      "CPU %d %s: read through the creator's fd: each probe's %d calls exact (hits %llu)",
			      cpu, irq ? "hardirq" : "task", N,
			      (unsigned long long)t.hits);
			if (pt_agg_read(kr, true, &t) || t.nr != 2) {
				PT_OK(0, "CPU %d %s: read-and-clear: two entries (%d)",
				      cpu, irq ? "hardirq" : "task", t.nr);
				continue;
			}
			mp = entry(&t, id_kp);
			mr = entry(&t, id_kr);
			PT_OK(t.hits == 2 * N && !t.dropped && !t.errors &&
			      exact(mp, N) && exact(mr, N),
			      "CPU %d %s: read-and-clear through the sharer's fd: kprobe %llu and kretprobe %llu calls, every bucket exact",
			      cpu, irq ? "hardirq" : "task",
			      mp ? (unsigned long long)mp->count : 0,
			      mr ? (unsigned long long)mr->count : 0);
		}
	}
	PT_EQ(pt_agg_read(kp, false, &t), 0, "read after the clears");
	PT_OK(t.nr == 0 && t.hits == 0, "the clear emptied it for both fds");

	/* The creator goes: the table stays, counted and charged. */
	close(kp);
	pt_quota(-1, &l3, &b3);
	PT_OK(b2 - b3 < b1 - b0,
	      "closing the creator keeps the table charged (%ld of %ld bytes back: the link's own)",
	      b2 - b3, b1 - b0);
	pt_pin(0);
	calls(false, N);
	PT_EQ(pt_agg_read(kr, true, &t), 0, "read-and-clear after the creator closed");
	PT_OK(t.nr == 1 && t.hits == N && exact(entry(&t, id_kr), N),
	      "the kretprobe counts on alone: %d calls exact (%d entries, hits %llu)",
	      N, t.nr, (unsigned long long)t.hits);
	close(kr);
	PT_EQ(pt_quota_settled(getuid()), 0,
	      "the last link gives the table's bytes back");
	pt_rings_drain(rings, ncpu);
}

/* ---- closing one link while the other's writers run ---- */

static volatile int stop_writers;
static __u64 writer_calls[NCPU_MAX];

static void *writer(void *arg)
{
	int cpu = (int)(long)arg;

	pt_pin(cpu);
	while (!stop_writers) {
		calls(false, 100);
		writer_calls[cpu] += 100;
	}
	return NULL;
}

static void test_close_under_writers(void)
{
	struct pea_agg_attr a = pt_agg_attr(8, PEA_AGG_KEY_PROBE, PEA_AGG_VAL_NONE,
					 PEA_AGG_HIST_NONE);
	__u64 id_kp, id_kr, total = 0, got_kp = 0, got_kr = 0, hits = 0;
	pthread_t th[NCPU_MAX];
	const struct pt_agg_merged *m;
	int kp, kr, cpu, i;
	struct pt_agg_table t;

	kp = probe("pea_st_kstack_target", 0);
	kr = probe("pea_st_kstack_target", PEA_PROBE_F_RETPROBE);
	id_kp = link_id(kp);
	id_kr = link_id(kr);
	a.flags = PEA_AGG_F_NO_RECORDS;
	PT_EQ(pt_agg_create(kr, &a), 0, "a kretprobe's table, no records");
	PT_EQ(share(kp, kr), 0, "the kprobe shares it");
	stop_writers = 0;
	for (cpu = 0; cpu < ncpu; cpu++)
		if (pthread_create(&th[cpu], NULL, writer, (void *)(long)cpu))
			pt_fatal("pthread_create");
	for (i = 0; i < 20; i++) {
		usleep(20000);
		if (i == 10)
			close(kp);	/* under the writers */
		if (pt_agg_read(kr, true, &t))
			break;
		hits += t.hits;
		m = entry(&t, id_kp);
		got_kp += m ? m->count : 0;
		m = entry(&t, id_kr);
		got_kr += m ? m->count : 0;
	}
	stop_writers = 1;
	for (cpu = 0; cpu < ncpu; cpu++) {
		pthread_join(th[cpu], NULL);
		total += writer_calls[cpu];
	}
	PT_EQ(pt_agg_read(kr, true, &t), 0, "the last read-and-clear");
	hits += t.hits;
	m = entry(&t, id_kp);
	got_kp += m ? m->count : 0;
	m = entry(&t, id_kr);
	got_kr += m ? m->count : 0;
	PT_OK(got_kr == total && got_kp > 0 && got_kp < total &&
	      hits == got_kp + got_kr,
	      "the kprobe closed under %d writers: the kretprobe's %llu of %llu calls all counted over 21 read-and-clears, the kprobe's %llu until it closed, hits %llu == their sum",
	      ncpu, (unsigned long long)got_kr, (unsigned long long)total,
	      (unsigned long long)got_kp, (unsigned long long)hits);
	close(kr);
}

/* ---- a retired kretprobe lets go of the table ---- */

static int block_pipe[2];

static void *blocked_reader(void *arg)
{
	char c;

	if (read(block_pipe[0], &c, 1) != 1)
		return arg;
	return NULL;
}

static void test_retired(void)
{
	struct pea_agg_attr a = pt_agg_attr(8, PEA_AGG_KEY_PROBE, PEA_AGG_VAL_NONE,
					 PEA_AGG_HIST_NONE);
	pthread_t th;
	int kp, kr;
	struct pt_agg_table t;
	__u64 id_kp;

	if (pipe(block_pipe))
		pt_fatal("pipe");
	kp = probe("pea_st_kstack_target", 0);
	id_kp = link_id(kp);
	kr = probe("pipe_read", PEA_PROBE_F_RETPROBE);
	if (pthread_create(&th, NULL, blocked_reader, NULL))
		pt_fatal("pthread_create");
	usleep(200000);		/* in pipe_read(), asleep */
	PT_EQ(pt_agg_create(kr, &a), 0, "a table on kretprobe:pipe_read");
	PT_EQ(share(kp, kr), 0, "a kprobe shares it");
	close(kr);		/* retired: a call is in flight */
	pt_pin(0);
	calls(false, N);
	PT_EQ(pt_agg_read(kp, true, &t), 0, "read-and-clear after the creator retired");
	PT_OK(t.nr == 1 && t.hits == N && entry(&t, id_kp) &&
	      entry(&t, id_kp)->count == N,
	      "the kprobe counts on: %d calls (hits %llu)", N,
	      (unsigned long long)t.hits);
	if (write(block_pipe[1], "x", 1) != 1)
		pt_fatal("write");
	pthread_join(th, NULL);
	close(block_pipe[0]);
	close(block_pipe[1]);
	close(kp);
	PT_EQ(pt_quota_settled(getuid()), 0,
	      "everything given back once both are gone");
}

/* ---- fetched values ---- */

static void test_fetch(void)
{
	struct pea_fetch s64[1], u16[1];
	struct pea_agg_attr a = pt_agg_attr(8, PEA_AGG_KEY_PROBE, PEA_AGG_VAL_FETCH,
					 PEA_AGG_HIST_NONE);
	struct pea_st_fetch f = { .n = 7, .count = 10 };
	int k1, k2, k3;
	struct pt_agg_table t;
	const struct pt_agg_merged *m1, *m2;

	memset(s64, 0, sizeof(s64));
	s64[0].base = PEA_FETCH_BASE_ARG;
	s64[0].arg = 4;		/* n */
	s64[0].type = PEA_FETCH_S64;
	u16[0] = s64[0];
	u16[0].type = PEA_FETCH_U16;
	k1 = probe_flags("pea_st_fetch_target", 0, s64, 1);
	k2 = probe_flags("pea_st_fetch_target", 0, s64, 1);
	k3 = probe_flags("pea_st_fetch_target", 0, u16, 1);
	PT_EQ(pt_agg_create(k1, &a), 0, "a table of a fetched s64, keyed by probe");
	PT_EQ(share(k3, k1), EINVAL,
	      "a link whose fetch 0 is a u16, not an s64: EINVAL");
	PT_EQ(share(k2, k1), 0, "another kprobe with the same fetch shares it");
	if (ioctl(pt_st(), PEA_ST_IOC_FETCH, &f))
		pt_fatal("PEA_ST_IOC_FETCH");
	f.n = -3;
	if (ioctl(pt_st(), PEA_ST_IOC_FETCH, &f))
		pt_fatal("PEA_ST_IOC_FETCH");
	PT_EQ(pt_agg_read(k2, true, &t), 0, "read-and-clear");
	m1 = entry(&t, link_id(k1));
	m2 = entry(&t, link_id(k2));
	PT_OK(t.nr == 2 && m1 && m2 && m1->count == 20 && m2->count == 20 &&
	      m1->sum == 40 && m2->sum == 40 && m1->min == -3 &&
	      m2->max == 7 && t.errors == 0,
	      "each probe: 20 calls, sum 40, min -3, max 7 (%d entries)", t.nr);
	close(k1);
	close(k2);
	close(k3);
}

/* ---- errnos ---- */

static void test_errors(void)
{
	struct pea_agg_attr a = pt_agg_attr(4, PEA_AGG_KEY_NONE, PEA_AGG_VAL_RET,
					 PEA_AGG_HIST_NONE);
	struct pea_agg_attr c = pt_agg_attr(4, PEA_AGG_KEY_PROBE, PEA_AGG_VAL_NONE,
					 PEA_AGG_HIST_NONE);
	int kp, kp2, kr, status, nul;
	pid_t pid;

	kp = probe("pea_st_kstack_target", 0);
	kp2 = probe("pea_st_kstack_target", 0);
	kr = probe("pea_st_kstack_target", PEA_PROBE_F_RETPROBE);
	nul = open("/dev/null", O_RDONLY);
	PT_EQ(share(kp, kr), ENOENT, "a link without a table: ENOENT");
	PT_EQ(share(kp, -1), EBADF, "fd -1: EBADF");
	PT_EQ(share(kp, 1000), EBADF, "a closed fd: EBADF");
	PT_EQ(share(kp, nul), EBADF, "/dev/null: EBADF");
	PT_EQ(share(kp, map_fd), EBADF, "a map's fd: EBADF");
	PT_EQ(pt_agg_create(kr, &a), 0, "a kretprobe's table of ret");
	PT_EQ(share(kr, kr), EINVAL, "itself: EINVAL");
	PT_EQ(share(kp, kr), EINVAL,
	      "a kprobe with the kretprobe's table of ret (no return value): EINVAL");
	PT_EQ(pt_agg_create(kp2, &c), 0, "a kprobe's own table");
	PT_EQ(share(kp2, kr), EEXIST, "a link with a table: EEXIST");
	PT_EQ(pt_agg_create(kp, &c), 0, "the first kprobe's table");
	PT_EQ(share(kp2, kp), EEXIST, "a link with a table, another's: EEXIST");
	PT_EQ(pt_ioctl_errno(kp, PEA_LINK_IOC_AGG_CREATE, &c), EEXIST,
	      "a second table: EEXIST");

	/* Another pid namespace: its pid keys would mean other pids. */
	pid = fork();
	if (pid == 0) {
		int in, err;

		if (unshare(CLONE_NEWPID))
			_exit(100);
		pid = fork();
		if (pid == 0) {
			in = probe("pea_st_kstack_target", 0);
			err = share(in, kp);
			_exit(err);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status))
			_exit(101);
		_exit(WEXITSTATUS(status));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		pt_fatal("fork");
	PT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, EINVAL,
	      "a link of another pid namespace: EINVAL");
	close(nul);
	close(kp);
	close(kp2);
	close(kr);
}

/* ---- what the hostile review found ---- */

static int probe_id(const char *sym, __u32 flags, __u64 id)
{
	struct pea_probe_attr a = pt_probe_attr(sym, flags);
	int fd;

	a.id = id;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, &a);
	if (fd < 0)
		pt_fatal("attach kprobe with an id");
	return fd;
}

/*
 * F1: a paired table's keys are the kind's to check too: a kprobe gives
 * no user stack, paired or not (the paired one was created, and could
 * be shared into a kind that refuses the key).
 */
static void test_paired_keys(void)
{
	struct pea_lat_attr la;
	struct pea_agg_attr a = pt_agg_attr(8, PEA_AGG_KEY_USTACK,
					 PEA_AGG_VAL_PAIRED, PEA_AGG_HIST_LOG2);
	int start, end, end2;

	start = probe("pea_st_kstack_target", 0);
	end = probe("pea_st_kstack_target", PEA_PROBE_F_RETPROBE);
	end2 = probe("pea_st_kstack_target", PEA_PROBE_F_RETPROBE);
	memset(&la, 0, sizeof(la));
	la.size = sizeof(la);
	la.max_pending = 16;
	PT_EQ(pt_ioctl_errno(start, PEA_LINK_IOC_LAT_CREATE, &la), 0,
	      "F1: a start link, paired by tid");
	a.pair_fd = start;
	a.max_stacks = 8;
	a.stack_depth = 8;
	PT_EQ(pt_agg_create(end, &a), EINVAL,
	      "F1: a kretprobe's paired table keyed by a user stack: EINVAL, as unpaired");
	a.keys[0] = PEA_AGG_KEY_KSTACK;
	PT_EQ(pt_agg_create(end, &a), 0,
	      "F1: the same keyed by the kernel stack, which a kretprobe gives: created");
	PT_EQ(share(end2, end), 0, "F1: another kretprobe shares it");
	close(end2);
	close(end);
	close(start);
}

/*
 * F2: the probe key is the links' record ids, which user space chooses:
 * a link whose id is already counted in a table keyed by probe cannot
 * join it (EINVAL), one with another id can; without the probe key ids
 * do not matter.
 */
static void test_same_id(void)
{
	struct pea_agg_attr a = pt_agg_attr(8, PEA_AGG_KEY_PROBE, PEA_AGG_VAL_NONE,
					 PEA_AGG_HIST_NONE);
	struct pea_agg_attr c = pt_agg_attr(8, PEA_AGG_KEY_CPU, PEA_AGG_VAL_NONE,
					 PEA_AGG_HIST_NONE);
	int l7, m7, l8, n7, o7, p7;
	struct pt_agg_table t;

	l7 = probe_id("pea_st_kstack_target", 0, 7);
	m7 = probe_id("pea_st_kstack_target", PEA_PROBE_F_RETPROBE, 7);
	l8 = probe_id("pea_st_kstack_target", PEA_PROBE_F_RETPROBE, 8);
	PT_EQ(pt_agg_create(l7, &a), 0, "F2: a table keyed by probe on a link of id 7");
	PT_EQ(share(m7, l7), EINVAL,
	      "F2: another link of id 7 cannot join it: EINVAL (its rows would merge)");
	PT_EQ(share(l8, l7), 0, "F2: a link of id 8 can");
	close(l8);
	n7 = probe_id("pea_st_kstack_target", PEA_PROBE_F_RETPROBE, 7);
	PT_EQ(share(n7, l7), EINVAL, "F2: nor a third link of id 7");
	close(n7);
	l8 = probe_id("pea_st_kstack_target", PEA_PROBE_F_RETPROBE, 8);
	PT_EQ(share(l8, l7), 0,
	      "F2: id 8 again, once the first link of id 8 is closed");
	pt_pin(0);
	calls(false, 10);
	PT_EQ(pt_agg_read(l7, true, &t), 0, "F2: read-and-clear");
	PT_OK(t.nr == 2 && entry(&t, 7) && entry(&t, 7)->count == 10 &&
	      entry(&t, 8) && entry(&t, 8)->count == 10,
	      "F2: ids 7 and 8 apart, 10 calls each (%d keys)", t.nr);
	close(l8);
	close(l7);
	/* The creator gone, its id is free: a new link of id 7 can join. */
	o7 = probe_id("pea_st_kstack_target", 0, 7);
	PT_EQ(pt_agg_create(o7, &c), 0, "F2: a table keyed by cpu on a link of id 7");
	PT_EQ(share(m7, o7), 0,
	      "F2: without the probe key, a link of the same id 7 joins it");
	p7 = probe_id("pea_st_kstack_target", 0, 9);
	close(m7);
	close(o7);
	close(p7);
}

int main(void)
{
	ncpu = pt_setup(NCPU_MAX);
	ncpu = pt_cpu_map("aggsh", 1, &map_fd, ev_fd, rings);
	test_two_probes();
	test_close_under_writers();
	test_retired();
	test_fetch();
	test_errors();
	test_paired_keys();
	test_same_id();
	return pt_done();
}
