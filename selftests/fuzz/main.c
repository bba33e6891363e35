// SPDX-License-Identifier: GPL-2.0
/*
 * test_fuzz: pea's in-guest fuzzer (docs/fuzzing.md).
 *
 *   test_fuzz [--seconds N] [--seed S] [--threads T] [--avoid-known]
 *             [--skip OP,OP] [-v]
 *   test_fuzz --soak [--seconds N]
 *
 * Without arguments it reads the same settings from the kernel command
 * line (pea.fuzz_seconds=, pea.fuzz_seed=, pea.fuzz_threads=,
 * pea.fuzz_avoid_known=1, pea.fuzz_skip=OP,OP, pea.fuzz_mode=soak; `make fuzz` and `make soak`
 * set them), else it fuzzes for 60 s with a random seed. The seed is
 * printed first. Each thread draws its operations from its own PRNG
 * seeded from the seed, so one thread's sequence of operations and
 * arguments is reproducible; how the threads and the kernel's producers
 * interleave is not.
 *
 * Output is TAP: the run's length and operation count, every operation
 * family exercised and reaching success, a sane errno distribution, no
 * invariant broken, debugfs objects back to their baseline.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/pea.h>
#include "../module/pea_selftest.h"
#include "fuzz.h"

#define FZ_MAX_OPS	32
#define FZ_KO		"/lib/modules/pea/pea_selftest.ko"

struct fz_opts fz_opts = { .seconds = 60, .threads = 4 };
int fz_dev = -1, fz_st = -1, fz_ncpu, fz_pmu_type = -1;
long fz_page;
__u64 fz_soak_records;
pthread_rwlock_t fz_world;

static const struct fz_op *fz_ops[FZ_MAX_OPS];
static int fz_nr_ops, fz_total_weight;
static __u64 fz_calls[FZ_MAX_THREADS][FZ_MAX_OPS];
static __u64 fz_errs[FZ_MAX_THREADS][FZ_MAX_OPS][FZ_MAX_ERRNO];

static pthread_mutex_t fz_vlock = PTHREAD_MUTEX_INITIALIZER;
static int fz_nr_violations;

static int tap_n, tap_failed;

void fz_tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	tap_failed += !ok;
	printf("%sok %d - ", ok ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void fz_violation(const char *op, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&fz_vlock);
	if (++fz_nr_violations <= 40) {
		printf("# violation in %s: ", op);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
		fflush(stdout);
	}
	pthread_mutex_unlock(&fz_vlock);
}

int fz_expect(const char *op, const char *what, int err, int want)
{
	if (err != want)
		fz_violation(op, "%s: got %s, want %s", what,
			     err ? strerror(err) : "success", strerror(want));
	return err;
}

int fz_expect_fail(const char *op, const char *what, int err)
{
	if (!err)
		fz_violation(op, "%s: success where failure is required", what);
	return err;
}

/* Errnos pea, perf and the syscalls around them may legitimately give. */
static bool fz_errno_ok(int e)
{
	static const int ok[] = {
		0, EPERM, ENOENT, EINTR, ENXIO, E2BIG, EBADF, EAGAIN, ENOMEM,
		EACCES, EFAULT, EBUSY, EEXIST, ENODEV, EINVAL, EMFILE,
		ENOTTY, ENOSPC, EMLINK, ERANGE, EOPNOTSUPP, EOVERFLOW,
		EILSEQ, ESRCH,
		EPROTO, EAFNOSUPPORT,	/* netfilter: hook, family */
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ok); i++)
		if (ok[i] == e)
			return true;
	return false;
}

static __u64 fz_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static char fz_skip[256];	/* ",op,op," left out by --skip */
static bool fz_skipped[FZ_MAX_OPS];

static bool fz_is_skipped(const struct fz_op *op)
{
	char key[64];

	snprintf(key, sizeof(key), ",%s,", op->name);
	return (op->known_bug && fz_opts.avoid_known) || strstr(fz_skip, key);
}

static void fz_add_ops(const struct fz_op *ops)
{
	for (; ops->name; ops++) {
		if (fz_nr_ops == FZ_MAX_OPS)
			abort();
		fz_skipped[fz_nr_ops] = fz_is_skipped(ops);
		if (!fz_skipped[fz_nr_ops])
			fz_total_weight += ops->weight;
		fz_ops[fz_nr_ops++] = ops;
	}
}

static int fz_pick(struct fz_rng *r)
{
	int w = (int)fz_below(r, (__u64)fz_total_weight), i;

	for (i = 0; i < fz_nr_ops; i++) {
		if (fz_skipped[i])
			continue;
		w -= fz_ops[i]->weight;
		if (w < 0)
			return i;
	}
	return fz_nr_ops - 1;
}

static void *fz_worker(void *arg)
{
	struct fz_thread *t = arg;
	__u64 end = fz_now_ns() + (__u64)fz_opts.seconds * 1000000000ULL;

	fz_self = t;
	while (fz_now_ns() < end) {
		int op = fz_pick(&t->rng), err;

		pthread_rwlock_rdlock(&fz_world);
		err = fz_ops[op]->fn(t);
		pthread_rwlock_unlock(&fz_world);
		fz_calls[t->id][op]++;
		if (err < 0)
			err = -err;
		if (err >= FZ_MAX_ERRNO)
			err = FZ_MAX_ERRNO - 1;
		fz_errs[t->id][op][err]++;
	}
	return NULL;
}

/* A kernel command line setting "pea.fuzz_NAME=VALUE", or NULL. */
static const char *fz_cmdline(const char *name)
{
	static char buf[4096];
	char key[64], *p;
	static int loaded;
	size_t kl;

	if (!loaded) {
		int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : read(fd, buf + 1, sizeof(buf) - 2);

		buf[0] = ' ';
		buf[n > 0 ? n + 1 : 1] = 0;
		if (fd >= 0)
			close(fd);
		loaded = 1;
	}
	snprintf(key, sizeof(key), " pea.fuzz_%s=", name);
	p = strstr(buf, key);
	if (!p)
		return NULL;
	kl = strlen(key);
	return p + kl;
}

static void fz_parse(int argc, char **argv)
{
	const char *v;
	bool seeded = false;
	int i;

	v = fz_cmdline("seconds");
	if (v)
		fz_opts.seconds = (unsigned int)strtoul(v, NULL, 0);
	v = fz_cmdline("seed");
	if (v) {
		fz_opts.seed = strtoull(v, NULL, 0);
		seeded = true;
	}
	v = fz_cmdline("threads");
	if (v)
		fz_opts.threads = atoi(v);
	v = fz_cmdline("avoid_known");
	if (v)
		fz_opts.avoid_known = *v == '1';
	v = fz_cmdline("skip");
	if (v)
		snprintf(fz_skip, sizeof(fz_skip), ",%.*s,",
			 (int)strcspn(v, " \t\n"), v);
	v = fz_cmdline("mode");
	if (v)
		fz_opts.soak = !strncmp(v, "soak", 4);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			fz_opts.seconds = (unsigned int)strtoul(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			fz_opts.seed = strtoull(argv[++i], NULL, 0);
			seeded = true;
		} else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			fz_opts.threads = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--avoid-known")) {
			fz_opts.avoid_known = true;
		} else if (!strcmp(argv[i], "--skip") && i + 1 < argc) {
			snprintf(fz_skip, sizeof(fz_skip), ",%s,", argv[++i]);
		} else if (!strcmp(argv[i], "--soak")) {
			fz_opts.soak = true;
		} else if (!strcmp(argv[i], "-v")) {
			fz_opts.verbose = true;
		} else {
			fprintf(stderr, "usage: %s [--seconds N] [--seed S] [--threads T]\n"
				"       [--avoid-known] [--skip OP,OP] [--soak] [-v]\n",
				argv[0]);
			exit(2);
		}
	}
	if (!seeded) {
		int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

		if (fd < 0 || read(fd, &fz_opts.seed, sizeof(fz_opts.seed)) !=
		    sizeof(fz_opts.seed))
			fz_opts.seed = fz_now_ns();
		if (fd >= 0)
			close(fd);
	}
	if (fz_opts.threads < 1)
		fz_opts.threads = 1;
	if (fz_opts.threads > FZ_MAX_THREADS)
		fz_opts.threads = FZ_MAX_THREADS;
}

static void fz_open_devices(void)
{
	char path[128], buf[32];
	int fd;

	/* High fd numbers, out of the way of the races on low ones. */
	fd = open(PEA_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("Bail out! open %s: %s\n", PEA_DEVICE_PATH, strerror(errno));
		exit(1);
	}
	fz_dev = fcntl(fd, F_DUPFD_CLOEXEC, 900);
	close(fd);
	fd = open(PEA_ST_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int ko = open(FZ_KO, O_RDONLY | O_CLOEXEC);

		if (ko >= 0 && (!syscall(SYS_finit_module, ko, "", 0) ||
				errno == EEXIST))
			fd = open(PEA_ST_DEVICE, O_RDWR | O_CLOEXEC);
		if (ko >= 0)
			close(ko);
	}
	if (fd < 0) {
		printf("Bail out! open %s: %s\n", PEA_ST_DEVICE, strerror(errno));
		exit(1);
	}
	fz_st = fcntl(fd, F_DUPFD_CLOEXEC, 901);
	close(fd);
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type",
		 PEA_ST_PMU_NAME);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		if (n > 0) {
			buf[n] = 0;
			fz_pmu_type = atoi(buf);
		}
		close(fd);
	}
}

/* Wait until debugfs objects equals @base; false after @secs seconds. */
bool fz_objects_wait(const long base[4], long now[4], int secs)
{
	int i;

	for (i = 0; i < secs * 10; i++) {
		if (!fz_debugfs_objects(now) && !memcmp(now, base, 4 * sizeof(long)))
			return true;
		usleep(100000);
	}
	return false;
}

static int fz_run(void)
{
	struct fz_thread th[FZ_MAX_THREADS];
	pthread_rwlockattr_t ra;
	long base[4], now[4];
	__u64 t0, total = 0, ok_ops = 0, calls[FZ_MAX_OPS], errs[FZ_MAX_ERRNO];
	__u64 op_ok[FZ_MAX_OPS];
	bool every = true, succ = true, sane = true, settled;
	int i, j, k, err;
	double secs;

	fz_add_ops(fz_ops_obj);
	fz_add_ops(fz_ops_mm);
	fz_add_ops(fz_ops_prod);
	fz_add_ops(fz_ops_attach);
	fz_add_ops(fz_ops_users);
	fz_add_ops(fz_ops_kfunc);
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra,
				      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&fz_world, &ra);

	/*
	 * The previous test program's objects may still be on their way
	 * out (events and rings are freed after an RCU grace period and a
	 * work item, which take longer on PREEMPT_RT): give them time to go
	 * before the baseline is taken, so that they do not count as ours.
	 */
	memset(base, 0, sizeof(base));
	t0 = fz_now_ns();
	if (!fz_objects_wait(base, now, 10))
		printf("# objects of earlier programs did not go in 10 s\n");
	else if (fz_now_ns() - t0 > 100000000ULL)
		printf("# waited %llu ms for earlier programs' objects to be freed\n",
		       (unsigned long long)(fz_now_ns() - t0) / 1000000);
	if (fz_debugfs_objects(base)) {
		printf("Bail out! /sys/kernel/debug/pea/objects unreadable\n");
		return 1;
	}
	printf("# baseline objects: %ld maps %ld events %ld rings %ld links\n",
	       base[0], base[1], base[2], base[3]);
	err = fz_prod_start();
	fz_tap(!err, "fuzz: storm started on map fz0 (%s)", err ? strerror(err) : "ok");

	t0 = fz_now_ns();
	for (i = 0; i < fz_opts.threads; i++) {
		__u64 x = fz_opts.seed + (__u64)i;

		memset(&th[i], 0, sizeof(th[i]));
		th[i].id = i;
		th[i].rng.s = fz_splitmix(&x) | 1;
		pthread_create(&th[i].tid, NULL, fz_worker, &th[i]);
	}
	for (i = 0; i < fz_opts.threads; i++)
		pthread_join(th[i].tid, NULL);
	secs = (double)(fz_now_ns() - t0) / 1e9;

	fz_prod_stop();
	fz_close_all();
	settled = fz_objects_wait(base, now, 20);

	memset(errs, 0, sizeof(errs));
	printf("# %-20s %10s %10s  errnos (count)\n", "operation", "calls", "ok");
	for (j = 0; j < fz_nr_ops; j++) {
		char line[512];
		int len = 0;

		calls[j] = 0;
		op_ok[j] = 0;
		for (i = 0; i < fz_opts.threads; i++) {
			calls[j] += fz_calls[i][j];
			op_ok[j] += fz_errs[i][j][0];
		}
		line[0] = 0;
		for (k = 1; k < FZ_MAX_ERRNO; k++) {
			__u64 n = 0;

			for (i = 0; i < fz_opts.threads; i++)
				n += fz_errs[i][j][k];
			errs[k] += n;
			if (n && len < (int)sizeof(line) - 40)
				len += snprintf(line + len, sizeof(line) - len,
						" %s(%llu)", k == FZ_MAX_ERRNO - 1 ?
						"OTHER" : strerrorname_np(k) ?: "?",
						(unsigned long long)n);
		}
		printf("# %-20s %10llu %10llu %s\n", fz_ops[j]->name,
		       (unsigned long long)calls[j],
		       (unsigned long long)op_ok[j], line);
		total += calls[j];
		ok_ops += op_ok[j];
		if (fz_skipped[j])
			continue;
		if (!calls[j]) {
			every = false;
			printf("# %s never ran\n", fz_ops[j]->name);
		}
	}
	for (k = 1; k < FZ_MAX_ERRNO; k++)
		if (errs[k] && !fz_errno_ok(k)) {
			sane = false;
			printf("# unexpected errno %d (%s): %llu times\n", k,
			       k == FZ_MAX_ERRNO - 1 ? "out of range" : strerror(k),
			       (unsigned long long)errs[k]);
		}
	/* The families that must get past validation to mean anything. */
	for (j = 0; j < fz_nr_ops; j++) {
		/*
		 * Not "output": most of its calls are refused by design (bad
		 * index, CPU, size, full ring) and the storm writes records
		 * all along anyway.
		 */
		static const char *const must[] = {
			"map_create", "event_open", "map_ioctl", "map_fill",
			"event_ioctl", "mmap", "ring", "remap", "attach",
			"counter_open", "debugfs", "link_ioctl", "attach_tp",
			"attach_uprobe", "uprobe_users",
		};
		unsigned int m;

		for (m = 0; m < ARRAY_SIZE(must); m++)
			if (!strcmp(fz_ops[j]->name, must[m]) && !op_ok[j]) {
				succ = false;
				printf("# %s never succeeded\n", fz_ops[j]->name);
			}
		/* Only where the kernel has fprobes (else EOPNOTSUPP). */
		if (!strcmp(fz_ops[j]->name, "attach_fprobe") && !op_ok[j] &&
		    fz_have_fprobe()) {
			succ = false;
			printf("# %s never succeeded\n", fz_ops[j]->name);
		}
	}
	printf("# seed %llu: %llu operations in %.1f s (%.0f/s), %llu succeeded, ",
	       (unsigned long long)fz_opts.seed, (unsigned long long)total,
	       secs, total / secs, (unsigned long long)ok_ops);
	printf("%llu storm records\n", (unsigned long long)fz_soak_records);
	fz_tap(secs >= fz_opts.seconds * 0.95,
	       "fuzz: ran %.0f s (asked %u) with %d threads",
	       secs, fz_opts.seconds, fz_opts.threads);
	fz_tap(total > 0, "fuzz: %llu operations", (unsigned long long)total);
	fz_tap(every, "fuzz: every operation family ran");
	fz_tap(succ, "fuzz: every operation family that creates or reads succeeded at least once");
	fz_tap(sane, "fuzz: errno distribution sane (only errnos Linux gives for these calls)");
	fz_tap(fz_nr_violations == 0,
	       "fuzz: no invariant broken (%d violations)", fz_nr_violations);
	if (!settled)
		printf("# objects now: %ld maps %ld events %ld rings %ld links\n",
		       now[0], now[1], now[2], now[3]);
	fz_tap(settled, "fuzz: debugfs objects back to the baseline");
	return 0;
}

int main(int argc, char **argv)
{
	struct rlimit rl = { 1024, 1024 };

	if (argc > 1 && !strcmp(argv[1], "--uprobe-user"))
		return fz_uprobe_user(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	fz_parse(argc, argv);
	printf("# seed %llu\n", (unsigned long long)fz_opts.seed);
	printf("# replay: test_fuzz --seed %llu --seconds %u --threads %d%s%s%.*s\n",
	       (unsigned long long)fz_opts.seed, fz_opts.seconds,
	       fz_opts.threads, fz_opts.avoid_known ? " --avoid-known" : "",
	       fz_skip[0] ? " --skip " : "",
	       fz_skip[0] ? (int)strlen(fz_skip) - 2 : 0, fz_skip + 1);
	fflush(stdout);
	setrlimit(RLIMIT_NOFILE, &rl);
	fz_page = sysconf(_SC_PAGESIZE);
	fz_ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (fz_ncpu > PEA_ST_MAX_CPUS)
		fz_ncpu = PEA_ST_MAX_CPUS;
	fz_guard_init();
	fz_open_devices();
	if (fz_opts.soak)
		fz_soak();
	else
		fz_run();
	printf("1..%d\n", tap_n);
	printf("# %d passed, %d failed\n", tap_n - tap_failed, tap_failed);
	return tap_failed ? 1 : 0;
}
