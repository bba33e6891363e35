// SPDX-License-Identifier: GPL-2.0
/*
 * pea profile --call-graph dwarf (issue 24): this program is built
 * WITHOUT frame pointers (-fomit-frame-pointer -O2, with .eh_frame; no
 * call turned into a jump), and as a workload (--work MODE SECS) its
 * main() calls a() and b(), which spend three quarters and one quarter
 * of the time in spin(), by construction; or k(), reads of /dev/zero.
 *   - --call-graph dwarf: every spin sample's stack ends main;a;spin or
 *     main;b;spin exactly, a's share is 0.75 +- 0.08, and samples + lost
 *     == the link's overflows;
 *   - frame pointers (the default) cannot name them: no stack ends
 *     main;a;spin or main;b;spin;
 *   - kernel and user frames join in one stack: main;k;...;vfs_read [k];
 *   - a SIZE past what a record holds is cut to it (64256 bytes);
 *   - usage errors.
 */
#include "pea_test.h"
#include "pt_tool.h"
#include "pt_profile.h"

#define SELF	"/bin/test_tool_dwunw"
#define FOLDED	"/tmp/pt_dwunw.folded"
#define TOL	0.08
#define SPIN_N	50000

static volatile unsigned long sink;
static char out[1 << 20], err[1 << 16];

__attribute__((noinline, noipa)) void spin(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline, noipa)) void a(void)
{
	spin(3 * SPIN_N);
}

__attribute__((noinline, noipa)) void b(void)
{
	spin(SPIN_N);
}

__attribute__((noinline, noipa)) void k(int fd)
{
	static char buf[1 << 16];

	if (read(fd, buf, sizeof(buf)) < 0)
		_exit(3);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct fold {
	unsigned long a, b, spin_other, total, joined, lines;
	bool bad;
};

/* One folded line of read_folded(). */
static void fold_line(void *arg, char *line, unsigned long w)
{
	struct fold *f = arg;

	pt_fold_spin(line, w, &f->a, &f->b, &f->spin_other, true);
	if (strstr(line, ";main;k;") && strstr(line, ";vfs_read_[k]"))
		f->joined += w;
}

static void read_folded(struct fold *f)
{
	memset(f, 0, sizeof(*f));
	pt_read_folded(FOLDED, &f->lines, &f->total, &f->bad, fold_line, f);
}

static bool counts(unsigned long long *n, unsigned long long *lost,
		   unsigned long long *ovf)
{
	return pt_profile_counts(err, n, lost, ovf);
}

static int profile(char *const argv[])
{
	int rc;

	unlink(FOLDED);
	rc = pt_run(argv, out, sizeof(out), err, sizeof(err), NULL, NULL);
	pt_diag("stderr: %s", err);
	return rc;
}

static void test_dwarf(void)
{
	char *argv[] = { PT_PEA, "profile", "-F", "499", "--call-graph",
			 "dwarf", "--folded", FOLDED, "--", SELF, "--work",
			 "0", "4", NULL };
	unsigned long long n = 0, lost = 0, ovf = 0;
	struct fold f;
	double share;

	PT_EQ(profile(argv), 0, "profile --call-graph dwarf -- test_tool_dwunw --work 0: exit 0");
	PT_OK(counts(&n, &lost, &ovf), "the counts line");
	PT_EQ(n + lost, ovf, "samples + lost (%llu + %llu) == overflows", n,
	      lost);
	PT_OK(strstr(err, "user stacks unwound with libdw from 8192 bytes of stack") != NULL,
	      "says the stacks were unwound with libdw from 8192 bytes");
	read_folded(&f);
	PT_OK(!f.bad && f.lines, "folded: %lu lines", f.lines);
	PT_EQ(f.total, n, "folded: weights sum to the samples");
	PT_OK(f.a + f.b >= 200, "dwarf: %lu samples in main;a|b;spin",
	      f.a + f.b);
	PT_EQ(f.spin_other, 0,
	      "dwarf: every spin sample (%lu) ends main;a;spin or main;b;spin exactly",
	      f.a + f.b + f.spin_other);
	share = f.a + f.b ? (double)f.a / (f.a + f.b) : 0;
	PT_OK(share > 0.75 - TOL && share < 0.75 + TOL,
	      "dwarf: a's share %.3f (%lu:%lu) is 0.75 +- %.2f", share, f.a,
	      f.b, TOL);
}

static void test_fp(void)
{
	char *argv[] = { PT_PEA, "profile", "-F", "499", "--folded", FOLDED,
			 "--", SELF, "--work", "0", "2", NULL };
	struct fold f;

	PT_EQ(profile(argv), 0, "profile (frame pointers) -- test_tool_dwunw: exit 0");
	read_folded(&f);
	PT_OK(!f.bad && f.spin_other >= 100,
	      "fp: %lu samples in spin", f.spin_other);
	PT_EQ(f.a + f.b, 0,
	      "fp: without frame pointers no stack names main;a|b;spin");
}

static void test_joined(void)
{
	char *argv[] = { PT_PEA, "profile", "-F", "499", "--call-graph",
			 "dwarf,4096", "--folded", FOLDED, "--", SELF,
			 "--work", "1", "3", NULL };
	struct fold f;

	PT_EQ(profile(argv), 0, "profile --call-graph dwarf,4096 -- test_tool_dwunw --work 1: exit 0");
	PT_OK(strstr(err, "from 4096 bytes of stack") != NULL,
	      "dwarf,4096: 4096 bytes");
	read_folded(&f);
	PT_OK(f.joined >= 10,
	      "read(2): %lu samples of %lu join main;k;...;vfs_read [k] in one stack",
	      f.joined, f.total);
}

static void test_usage(void)
{
	char *bad[] = { PT_PEA, "profile", "--call-graph", "lbr", NULL };
	char *zero[] = { PT_PEA, "profile", "--call-graph", "dwarf,0", NULL };
	char *big[] = { PT_PEA, "profile", "--call-graph", "dwarf,65536",
			NULL };
	char *konly[] = { PT_PEA, "profile", "--call-graph", "dwarf",
			  "--kernel-only", NULL };

	PT_EQ(profile(bad), 2, "--call-graph lbr: usage error");
	PT_EQ(profile(zero), 2, "--call-graph dwarf,0: usage error");
	PT_EQ(profile(big), 2, "--call-graph dwarf,65536: usage error");
	PT_EQ(profile(konly), 2, "--call-graph dwarf --kernel-only: usage error");
}

/* The most a record with 127 kernel frames holds: 64256 bytes. */
static void test_cut(void)
{
	char *argv[] = { PT_PEA, "profile", "-F", "99", "--call-graph",
			 "dwarf,65528", "--folded", FOLDED, "--", SELF,
			 "--work", "0", "0.3", NULL };

	PT_EQ(profile(argv), 0, "profile --call-graph dwarf,65528: exit 0");
	PT_OK(strstr(err, "from 64256 bytes of stack") != NULL,
	      "dwarf,65528: cut to the 64256 bytes a record holds");
}

/* Inlined: main() itself calls a(), b() and k(). */
static inline __attribute__((always_inline)) int work(char **argv)
{
	int mode = atoi(argv[2]), fd = open("/dev/zero", O_RDONLY);
	double end = now() + atof(argv[3]);

	if (fd < 0)
		return 4;
	while (now() < end) {
		if (mode == 0) {
			a();
			b();
		} else {
			k(fd);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--work"))
		return work(argv);
	test_usage();
	test_dwarf();
	test_fp();
	test_joined();
	test_cut();
	return pt_done();
}
