// SPDX-License-Identifier: GPL-2.0
/*
 * What a kprobe link is when it first fires, and which functions it may
 * probe, against Linux's own kprobe interface in the same guest:
 *
 * - every record carries the probed address, also those written while the
 *   attach is still returning (other CPUs hit the function throughout);
 * - functions without an ftrace location (notrace) are refused with
 *   EINVAL, as trace_kprobe refuses them for the kprobe PMU of
 *   perf_event_open() (CONFIG_KPROBE_EVENTS_ON_NOTRACE unset), and what
 *   pea answers equals what the PMU answers, suffixed symbols included;
 * - a kretprobe's filter_cpu selects the CPU the call returns on, where
 *   the record is written, as a perf kretprobe event bound to a CPU counts
 *   the returns on that CPU.
 */
#include <pthread.h>
#include <time.h>
#include "pea_test.h"
#include "pt_perm.h"

#define NCPU_MAX	64

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];

static int attach(struct pea_probe_attr *a)
{
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_PROBE, a);

	return fd < 0 ? -errno : fd;
}

/* The next probe record of this process on @cpu, or NULL. */
static struct pea_probe_record *next_rec(int cpu)
{
	struct perf_event_header *h = (void *)rec;
	struct pea_probe_record *r;

	while (pt_ring_next(&rings[cpu], rec)) {
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		r = (void *)(rec + 12);
		if (r->tgid != (__u32)getpid())
			continue;
		return r;
	}
	return NULL;
}

/* ---- the kprobe PMU of perf_event_open() ---- */

static int kprobe_pmu_type, kprobe_retprobe_bit = -1;

static int read_pmu(void)
{
	char buf[64];

	if (pt_read_file("/sys/bus/event_source/devices/kprobe/type", buf,
			 sizeof(buf)))
		return -1;
	kprobe_pmu_type = atoi(buf);
	if (pt_read_file("/sys/bus/event_source/devices/kprobe/format/retprobe",
			 buf, sizeof(buf)) ||
	    sscanf(buf, "config:%d", &kprobe_retprobe_bit) != 1)
		return -1;
	return 0;
}

/* perf_event_open() of the kprobe PMU at @sym (CPU 0): 0 or its errno. */
static int perf_kprobe_errno(const char *sym, bool ret, int pid, int cpu,
			     int *fdp)
{
	struct perf_event_attr pa;
	int fd;

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = kprobe_pmu_type;
	pa.config = ret ? 1ULL << kprobe_retprobe_bit : 0;
	pa.config1 = (__u64)(uintptr_t)sym;
	pa.config2 = 0;
	fd = syscall(SYS_perf_event_open, &pa, pid, cpu, -1, 0);
	if (fd < 0)
		return errno;
	if (fdp)
		*fdp = fd;
	else
		close(fd);
	return 0;
}

/* ---- the address is published before the probe is armed ---- */

static volatile int stop;

static void *hammer(void *arg)
{
	pt_pin((int)(long)arg);
	while (!stop)
		syscall(SYS_getppid);
	return NULL;
}

static void addr_cycles(__u32 flags, const char *what)
{
	struct pea_probe_attr a = pt_probe_attr("__x64_sys_getppid", flags);
	struct pea_link_info info;
	struct pea_probe_record *r;
	unsigned long recs = 0, zero = 0, other = 0, bad = 0;
	pthread_t th[NCPU_MAX];
	int i, cpu, link;

	a.filter_tgid = getpid();
	pt_pin(0);
	pt_rings_drain(rings, ncpu);
	stop = 0;
	for (cpu = 1; cpu < ncpu; cpu++)
		pthread_create(&th[cpu], NULL, hammer, (void *)(long)cpu);
	usleep(20000);
	for (i = 0; i < 20; i++) {
		link = attach(&a);
		if (link < 0) {
			bad++;
			continue;
		}
		usleep(5000);
		memset(&info, 0, sizeof(info));
		ioctl(link, PEA_LINK_IOC_INFO, &info);
		close(link);
		for (cpu = 0; cpu < ncpu; cpu++)
			while ((r = next_rec(cpu))) {
				recs++;
				if (!r->addr)
					zero++;
				else if (r->addr != info.addr)
					other++;
			}
	}
	stop = 1;
	for (cpu = 1; cpu < ncpu; cpu++)
		pthread_join(th[cpu], NULL);
	PT_EQ(bad, 0, "%s: 20 attaches while other CPUs call the function",
	      what);
	PT_OK(recs > 0, "%s: the other CPUs left records (%lu)", what, recs);
	PT_EQ(zero, 0, "%s: no record carries addr 0", what);
	PT_EQ(other, 0, "%s: every record carries the link's address", what);
}

/* ---- notrace functions, as the kprobe PMU ---- */

static int attach_errno(struct pea_probe_attr a)
{
	int fd = attach(&a);

	if (fd < 0)
		return -fd;
	close(fd);
	return 0;
}

/*
 * Up to @max text symbols of vmlinux named NAME.SUFFIX that occur once in
 * /proc/kallsyms (the kprobe PMU refuses ambiguous names, EADDRNOTAVAIL),
 * for the suffixed-symbol rule of within_notrace_func().
 */
static int suffixed_symbols(char (*out)[PEA_SYM_LEN], int max)
{
	static char names[200000][48];
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type, mod[128];
	int n = 0, i, j, dup, got = 0;
	unsigned long long addr;

	while (f && fgets(line, sizeof(line), f) && n < 200000) {
		if (sscanf(line, "%llx %c %255s %127s", &addr, &type, name,
			   mod) != 3 || (type != 't' && type != 'T') ||
		    strlen(name) >= sizeof(names[0]))
			continue;
		strcpy(names[n++], name);
	}
	if (f)
		fclose(f);
	for (i = 0; i < n && got < max; i++) {
		if (!strstr(names[i], ".cold") && !strstr(names[i], ".isra.") &&
		    !strstr(names[i], ".constprop.") &&
		    !strstr(names[i], ".part."))
			continue;
		/* Spread them over the kernel: about one in 7. */
		if (i % 7)
			continue;
		for (dup = 0, j = 0; j < n && dup < 2; j++)
			dup += !strcmp(names[i], names[j]);
		if (dup != 1)
			continue;
		strcpy(out[got++], names[i]);
	}
	return got;
}

static void test_notrace(void)
{
	static const char * const notrace[] = {
		"ktime_get_mono_fast_ns",	/* pea's own handler calls it */
		"ktime_get_raw_fast_ns",
		/* Called inside pea's claim loop (review of perf, F1). */
		"pea_ring_clock",
	};
	char (*sfx)[PEA_SYM_LEN] = calloc(40, PEA_SYM_LEN);
	struct pea_probe_attr a;
	int i, n, same = 0, refused = 0, pea, perf;
	bool ret;

	for (i = 0; i < 3; i++) {
		for (ret = false; ; ret = true) {
			a = pt_probe_attr(notrace[i], ret ? PEA_PROBE_F_RETPROBE : 0);
			pea = attach_errno(a);
			perf = perf_kprobe_errno(notrace[i], ret, -1, 0, NULL);
			PT_EQ(perf, EINVAL, "perf kprobe PMU, %s:%s: EINVAL",
			      ret ? "kretprobe" : "kprobe", notrace[i]);
			PT_EQ(pea, perf, "pea %s:%s: as the PMU (EINVAL)",
			      ret ? "kretprobe" : "kprobe", notrace[i]);
			if (ret)
				break;
		}
	}
	a = pt_probe_attr("ktime_get_mono_fast_ns", 0);
	a.offset = 4;
	PT_EQ(attach_errno(a), EINVAL,
	      "pea: an offset inside a notrace function: EINVAL");
	a = pt_probe_attr("ksys_mmap_pgoff", 0);
	pea = attach_errno(a);
	perf = perf_kprobe_errno("ksys_mmap_pgoff", false, -1, 0, NULL);
	PT_OK(pea == 0 && perf == 0,
	      "a traceable function: pea %d, the PMU %d (both attach)", pea,
	      perf);
	n = suffixed_symbols(sfx, 40);
	for (i = 0; i < n; i++) {
		a = pt_probe_attr(sfx[i], 0);
		pea = attach_errno(a);
		perf = perf_kprobe_errno(sfx[i], false, -1, 0, NULL);
		if (pea == perf)
			same++;
		else
			pt_diag("%s: pea %d, the kprobe PMU %d", sfx[i], pea,
				perf);
		refused += perf == EINVAL;
	}
	PT_OK(n >= 10 && same == n,
	      "%d suffixed symbols (%d refused by the PMU): pea answers as the PMU for %d",
	      n, refused, same);
	free(sfx);
}

/* ---- a kretprobe's filter_cpu is the CPU of the return ---- */

static int pipefd[2];
static volatile pid_t reader_tid;
static volatile int reader_go;

static void *reader(void *arg __attribute__((unused)))
{
	char c;

	pt_pin(0);
	reader_tid = gettid();
	/* Enter pipe_read only once the perf event exists too. */
	while (!reader_go)
		usleep(1000);
	if (read(pipefd[0], &c, 1) != 1)
		return (void *)1;
	return NULL;
}

static char task_state(pid_t tid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if (pt_read_file(path, buf, sizeof(buf)))
		return '?';
	p = strrchr(buf, ')');
	return p && p[1] ? p[2] : '?';
}

/*
 * One read() that enters pipe_read on CPU 0, sleeps, is moved to CPU 1 and
 * returns there. Returns the records of this process's reader on each CPU
 * (@got) for a kretprobe on pipe_read with @filter_cpu, and what a perf
 * kretprobe event for the reader bound to @filter_cpu counted.
 */
static void migrate_once(int filter_cpu, int got[], __u64 *perf_count,
			 int *rec_cpu)
{
	struct pea_probe_attr a = pt_probe_attr("pipe_read", PEA_PROBE_F_RETPROBE);
	struct pea_probe_record *r;
	pthread_t th;
	cpu_set_t set;
	int link, pfd = -1, cpu, i;

	a.filter_tgid = getpid();
	a.filter_cpu = filter_cpu;
	memset(got, 0, sizeof(int) * ncpu);
	*perf_count = ~0ULL;
	*rec_cpu = -1;
	if (pipe(pipefd))
		pt_fatal("pipe");
	pt_pin(ncpu - 1);
	link = attach(&a);
	reader_tid = 0;
	reader_go = 0;
	pthread_create(&th, NULL, reader, NULL);
	while (!reader_tid)
		usleep(1000);
	perf_kprobe_errno("pipe_read", true, reader_tid, filter_cpu, &pfd);
	reader_go = 1;
	/* Asleep in pipe_read: entered on CPU 0. */
	for (i = 0; i < 500 && task_state(reader_tid) != 'S'; i++)
		usleep(2000);
	usleep(50000 * pt_time_scale());
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	sched_setaffinity(reader_tid, sizeof(set), &set);
	if (write(pipefd[1], "x", 1) != 1)
		pt_fatal("write");
	pthread_join(th, NULL);
	if (pfd >= 0) {
		if (read(pfd, perf_count, sizeof(*perf_count)) !=
		    sizeof(*perf_count))
			*perf_count = ~0ULL;
		close(pfd);
	}
	if (link >= 0)
		close(link);
	for (cpu = 0; cpu < ncpu; cpu++)
		while ((r = next_rec(cpu)))
			if (r->pid == (__u32)reader_tid) {
				got[cpu]++;
				*rec_cpu = r->cpu;
			}
	close(pipefd[0]);
	close(pipefd[1]);
}

static void test_kretprobe_cpu(void)
{
	int got[NCPU_MAX], cpu, others, rec_cpu;
	__u64 perf;

	pt_rings_drain(rings, ncpu);
	migrate_once(1, got, &perf, &rec_cpu);
	PT_EQ(perf, 1, "perf kretprobe event on CPU 1: counts the return there");
	PT_EQ(got[1], 1, "filter_cpu 1: the return on CPU 1 is recorded there");
	PT_EQ(rec_cpu, 1, "filter_cpu 1: the record says CPU 1");
	for (others = 0, cpu = 0; cpu < ncpu; cpu++)
		others += cpu == 1 ? 0 : got[cpu];
	PT_EQ(others, 0, "filter_cpu 1: nothing on the other CPUs");

	migrate_once(0, got, &perf, &rec_cpu);
	PT_EQ(perf, 0, "perf kretprobe event on CPU 0 (the entry's): counts nothing");
	for (others = 0, cpu = 0; cpu < ncpu; cpu++)
		others += got[cpu];
	PT_EQ(others, 0, "filter_cpu 0 (the entry's CPU): no record");
}

/*
 * Attached while root has disarmed every kprobe (debugfs kprobes/enabled
 * 0): the link fires once kprobes are armed again, as a kprobe event or a
 * perf kprobe attached then does.
 */
static void test_globally_disarmed(__u32 flags, const char *what)
{
	const char *knob = "/sys/kernel/debug/kprobes/enabled";
	struct pea_probe_attr a = pt_probe_attr("__x64_sys_getppid", flags);
	struct pea_link_info info;
	int link, i;

	a.filter_tgid = getpid();
	PT_EQ(pt_write_file(knob, "0"), 0, "%s: kprobes disarmed", what);
	link = attach(&a);
	PT_OK(link >= 0, "%s: attaches while kprobes are disarmed (%d)", what,
	      link);
	syscall(SYS_getppid);
	PT_EQ(pt_write_file(knob, "1"), 0, "%s: kprobes armed again", what);
	for (i = 0; i < 3; i++)
		syscall(SYS_getppid);
	if (link >= 0) {
		memset(&info, 0, sizeof(info));
		ioctl(link, PEA_LINK_IOC_INFO, &info);
		PT_EQ(info.hits, 3,
		      "%s: the 3 calls after re-arming hit, the one before not",
		      what);
		close(link);
	}
	pt_rings_drain(rings, ncpu);
}

/* For the suite's time (make check): how long each part took. */
static double now_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	double t;

	ncpu = pt_cpu_map("probe_arm", 16, &map_fd, ev_fd, rings);
	if (ncpu > NCPU_MAX || ncpu < 3) {
		pt_diag("needs 3 to %d CPUs, has %d", NCPU_MAX, ncpu);
		PT_OK(0, "CPUs");
		return pt_done();
	}
	PT_EQ(read_pmu(), 0, "the kprobe PMU's type and retprobe bit");
	t = now_secs();
	addr_cycles(0, "kprobe");
	addr_cycles(PEA_PROBE_F_RETPROBE, "kretprobe");
	pt_diag("addr_cycles: %.1f s", now_secs() - t);
	t = now_secs();
	test_notrace();
	pt_diag("test_notrace: %.1f s", now_secs() - t);
	t = now_secs();
	test_kretprobe_cpu();
	pt_diag("test_kretprobe_cpu: %.1f s", now_secs() - t);
	t = now_secs();
	test_globally_disarmed(0, "disarmed kprobe");
	test_globally_disarmed(PEA_PROBE_F_RETPROBE, "disarmed kretprobe");
	pt_diag("test_globally_disarmed: %.1f s", now_secs() - t);
	return pt_done();
}
