// SPDX-License-Identifier: GPL-2.0
/*
 * pea profile (issue 24): the workload is test_sample's own (/bin/test_sample
 * --work MODE SECS: main() calls a() and b(), three quarters and one
 * quarter of the time, each calling spin(); or k(), reads of /dev/zero),
 * profiled through the tool, its stacks read back from --folded:
 *   - -- CMD: a's share of the spin samples is 0.75 +- 0.08, the stacks end
 *     main;a;spin and main;b;spin exactly, the top stack printed is one of
 *     them (leaf first), and samples + lost == the link's overflows; both
 *     counted in the kernel ("complete (in-kernel)", no sample lost) and
 *     from records (--records);
 *   - kernel and user frames join in one stack (main, then vfs_read [k]);
 *   - a command that exits before the tool reads one record is named (the
 *     rings are not read until it has exited: a quarter-full watermark
 *     that 1 s at 99 Hz does not reach; --records);
 *   - so is one whose code was mapped after its exec (a shared object),
 *     which only the maps read at its exit stop hold;
 *   - -p PID of a process that exits while the tool runs is named;
 *   - -p PID of a process that execs while the tool runs: the frames
 *     before the exec are named by the first program's maps, those after
 *     by the second's, counted in the kernel and from records;
 *   - -- CMD whose command execs another program (this one, run with
 *     --pre-exec, spins then execs the workload): the same split, at the
 *     exec's ptrace stop;
 *   - --build-ids lists the files frames were in with the build-ids the
 *     Makefile linked them with (PT_SAMPLE_BID, PT_PROF_SO_BID);
 *   - --user-only has no kernel frame, --kernel-only no user frame;
 *   - --kernel-only of the whole system is counted in the kernel too
 *     (comm and kernel stack): a reader's read(2) stacks under its comm;
 *   - usage errors.
 */
#include "pea_test.h"
#include "pt_perm.h"
#include "pt_tool.h"
#include "pt_profile.h"

#define WORK	"/bin/test_sample"
#define FOLDED	"/tmp/pt_profile.folded"
#define SVG	"/tmp/pt_profile.svg"
#define BIDS	"/tmp/pt_profile.bids"
#define TOL	0.08

static char out[1 << 20], err[1 << 16];

/* The folded stacks: per line the frames and the weight. */
struct fold {
	unsigned long a, b, spin_other, total, joined, kframes, uframes;
	unsigned long lines, pea, so, unnamed;
	const char *comm;
	bool bad;
};

/* One folded line of read_folded(). */
static void fold_line(void *arg, char *line, unsigned long w)
{
	struct fold *f = arg;
	size_t n = strlen(f->comm);

	/*
	 * The command's, or a sample between its fork from pea and its
	 * exec (comm "pea"), which is honest too.
	 */
	if ((strncmp(line, f->comm, n) || line[n] != ';') &&
	    strncmp(line, "pea;", 4))
		f->bad = true;
	if (!strncmp(line, "pea;", 4))
		f->pea += w;
	pt_fold_spin(line, w, &f->a, &f->b, &f->spin_other, false);
	if (pt_ends_with(line, ";main;pt_prof_so_spin"))
		f->so += w;
	/*
	 * What main() called, unnamed ("[unknown]", "[file+0x..]"): in the
	 * late-mapped object, code no snapshot held. Other unnamed frames
	 * are shown: those of the command's fork from pea before its exec
	 * (comm "pea") run pea's code, which the command's maps do not hold
	 * (docs/profiling.md).
	 */
	if (pt_ends_with(line, ";main;[unknown]") ||
	    strstr(line, ";main;[unknown];") ||
	    strstr(line, ";main;[pt_prof_so"))
		f->unnamed += w;
	if (strstr(line, "[unknown]") || strstr(line, ";[pt_prof_so"))
		pt_diag("unnamed: %.300s %lu", line, w);
	if (strstr(line, "_[k]"))
		f->kframes += w;
	if (strstr(line, ";main"))
		f->uframes += w;
	if (strstr(line, ";main;") && strstr(line, ";vfs_read_[k]"))
		f->joined += w;
}

/* FOLDED's lines, each of @comm's process (or of pea before its exec). */
static void read_folded(struct fold *f, const char *comm)
{
	bool bad;

	memset(f, 0, sizeof(*f));
	f->comm = comm;
	pt_read_folded(FOLDED, &f->lines, &f->total, &bad, fold_line, f);
	f->bad |= bad;
}

/* "pea profile: N samples, M lost, overflows K ..." on stderr. */
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

static void test_ab(bool records)
{
	char *argv[] = { PT_PEA, "profile", "-F", "499", "--folded", FOLDED,
			 "--svg", SVG, "--top", "3", "--", WORK, "--work", "0",
			 "4", NULL, NULL };
	char head[64] = "";
	unsigned long long n = 0, lost = 0, ovf = 0;
	struct fold f;
	double share;
	const char *top;

	bool ok;

	if (records) {	/* --records before the "--" */
		memmove(argv + 11, argv + 10, 6 * sizeof(argv[0]));
		argv[10] = "--records";
	}
	PT_EQ(profile(argv), 0, "profile %s-- test_sample --work 0: exit 0",
	      records ? "--records " : "");
	ok = counts(&n, &lost, &ovf);
	PT_OK(ok, "the counts line");
	PT_EQ(n + lost, ovf, "samples + lost (%llu + %llu) == overflows", n,
	      lost);
	PT_EQ(!strstr(err, ", complete (in-kernel): "), records,
	      records ? "--records: counted from records" :
	      "counted in the kernel: complete (in-kernel)");
	if (!records)
		PT_EQ(lost, 0, "in the kernel: no sample lost");
	read_folded(&f, "test_sample");
	PT_OK(!f.bad && f.lines, "folded: %lu lines, each test_sample;...;leaf N",
	      f.lines);
	PT_EQ(f.total, n, "folded: weights sum to the samples");
	PT_OK(f.a + f.b >= 200, "a/b: %lu samples in main;a|b;spin", f.a + f.b);
	PT_OK(f.a + f.b >= (f.a + f.b + f.spin_other) * 95 / 100,
	      "a/b: %lu of %lu spin samples end main;a;spin or main;b;spin exactly",
	      f.a + f.b, f.a + f.b + f.spin_other);
	share = f.a + f.b ? (double)f.a / (f.a + f.b) : 0;
	PT_OK(share > 0.75 - TOL && share < 0.75 + TOL,
	      "a/b: a's share %.3f (%lu:%lu) is 0.75 +- %.2f", share, f.a,
	      f.b, TOL);
	/* The heaviest stack first, leaf first: spin, a, main. */
	top = strstr(out, "samples");
	PT_OK(top && strstr(top, "\n        spin\n        a\n        main\n") ==
	      strchr(top, '\n'),
	      "the top stack printed is spin <- a <- main");
	if (!top || !strstr(top, "        spin\n"))
		pt_diag("stdout: %.2000s", out);
	pt_read_file(SVG, head, sizeof(head));
	PT_OK(strstr(head, "<svg") || strstr(head, "<?xml"),
	      "--svg writes an SVG (%.20s...)", head);
}

static void test_kernel(void)
{
	char *argv[] = { PT_PEA, "profile", "-F", "499", "--folded", FOLDED,
			 "--", WORK, "--work", "1", "3", NULL };
	struct fold f;

	PT_EQ(profile(argv), 0, "profile -- test_sample --work 1: exit 0");
	read_folded(&f, "test_sample");
	PT_OK(f.joined >= 10,
	      "read(2): %lu samples of %lu join user main and kernel vfs_read in one stack",
	      f.joined, f.total);
}

static void test_exit_first(void)
{
	char *argv[] = { PT_PEA, "profile", "-F", "99", "--pages", "64",
			 "--records", "--folded", FOLDED, "--", WORK, "--work",
			 "0", "1", NULL };
	unsigned long long n = 0, lost = 0, ovf = 0;
	struct fold f;

	const char *s;
	unsigned long long after = 0;
	bool ok;

	PT_EQ(profile(argv), 0, "profile of a 1 s command: exit 0");
	ok = counts(&n, &lost, &ovf);
	PT_OK(ok && n >= 20, "%llu samples", n);
	s = strstr(err, "samples read after the process exited");
	while (s && s > err && s[-1] != '\n' && s[-1] != ':')
		s--;
	if (s)
		after = strtoull(s + (*s == ' '), NULL, 10);
	PT_EQ(after, n, "every sample was read after the command had exited");
	read_folded(&f, "test_sample");
	PT_OK(f.a + f.b >= (f.a + f.b + f.spin_other) * 95 / 100 && f.a,
	      "exited before the read: %lu of %lu spin samples named main;a|b;spin",
	      f.a + f.b, f.a + f.b + f.spin_other);
}

/*
 * A command that maps a shared object after its exec, spins in it and
 * exits before the tool reads a record: only the maps read at its exit
 * stop hold the object.
 */
static void test_exit_maps(void)
{
	char *argv[] = { PT_PEA, "profile", "-F", "99", "--pages", "64",
			 "--folded", FOLDED, "--", WORK, "--work", "3", "1",
			 NULL };
	struct fold f;

	PT_EQ(profile(argv), 0, "profile of a command that maps code late: exit 0");
	read_folded(&f, "test_sample");
	PT_OK(f.so >= 20 && !f.unnamed,
	      "the object mapped after the exec: %lu samples end main;pt_prof_so_spin, %lu have an unnamed user frame",
	      f.so, f.unnamed);
}

static void test_pid(void)
{
	char pid_s[16];
	char *work[] = { WORK, "--work", "0", "3", NULL };
	char *argv[] = { PT_PEA, "profile", "-F", "499", "-p", pid_s,
			 "-d", "30", "--folded", FOLDED, NULL };
	struct fold f;
	pid_t pid = fork();

	if (pid == 0) {
		execv(WORK, work);
		_exit(127);
	}
	snprintf(pid_s, sizeof(pid_s), "%d", pid);
	/*
	 * -p reads the maps at its start: wait for the exec, or the forked
	 * image's maps (this program's, at the same addresses) name the
	 * samples (6.12 once: 1,165 samples, none main;a|b;spin).
	 */
	for (int i = 0; i < 500; i++) {
		char path[64], comm[32] = "";

		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		if (!pt_read_file(path, comm, sizeof(comm)) &&
		    !strncmp(comm, "test_sample", 11))
			break;
		usleep(10000);
	}
	PT_EQ(profile(argv), 0, "profile -p PID: exit 0 when the process is gone");
	waitpid(pid, NULL, 0);
	read_folded(&f, "test_sample");
	PT_OK(f.a && f.b && f.a + f.b >= (f.a + f.b + f.spin_other) * 95 / 100,
	      "-p: %lu:%lu samples named main;a|b;spin (%lu other spin)",
	      f.a, f.b, f.spin_other);
}

/*
 * The child of the exec case: its comm is this program's, and it spins in
 * a function of this program until it execs the workload, @loops million
 * loop steps. A number of instructions, not a time: the rest of its
 * samples (faults, the program's start) are instructions too, so the
 * spin's share does not depend on how fast the host runs the guest
 * (under TCG a loaded host stretches the guest's time per instruction;
 * test_tool_profile_self met it).
 */
__attribute__((noinline, used)) void pt_tp_pre_exec_spin(unsigned int loops)
{
	volatile unsigned long n = 0;

	for (unsigned int j = 0; j < loops; j++)
		for (unsigned int i = 0; i < 1000000; i++)
			n++;
}

/*
 * The share of the pre-exec samples outside execve() that must be the
 * spin's: the rest are in the kernel (page faults, the program's start,
 * the tick), which the debug kernel's KASAN and lockdep make about five
 * times longer (651 of 688, 94.6%, there).
 */
static unsigned long pre_exec_pct(void)
{
	return pt_time_scale() > 1 ? 90 : 95;
}

struct pre_exec {
	unsigned long all, spin, exec;
};

/* One folded line of count_pre_exec(). */
static void pre_exec_line(void *arg, char *line, unsigned long w)
{
	static const char comm[] = "test_tool_profi;";
	struct pre_exec *c = arg;

	if (strncmp(line, comm, sizeof(comm) - 1))
		return;
	c->all += w;
	if (strstr(line, ";pt_tp_pre_exec_spin"))
		c->spin += w;
	else if (strstr(line, ";__x64_sys_execve_[k]"))
		c->exec += w;
	else
		pt_diag("exec: %.200s", line);
}

/*
 * The samples of the pre-exec process, comm test_tool_profi, in the
 * folded output: @all of them; @spin those of pt_tp_pre_exec_spin;
 * @exec those inside an execve(), the kernel loading a program (under
 * -- CMD the command's own exec too, whose comm is set before the
 * loading): how long that is depends on the kernel and the host's load,
 * not on which maps name the samples (50 of 475 samples on the debug
 * kernel in a rehearsal, where the spin had 405).
 */
static void count_pre_exec(unsigned long *all, unsigned long *spin,
			   unsigned long *exec)
{
	struct pre_exec c = { 0 };
	unsigned long lines, total;
	bool bad;

	pt_read_folded(FOLDED, &lines, &total, &bad, pre_exec_line, &c);
	*all = c.all;
	*spin = c.spin;
	*exec = c.exec;
}

/* Whether the spin has its share of what is outside execve(). */
static bool pre_exec_ok(unsigned long all, unsigned long spin,
			unsigned long exec)
{
	return spin >= 20 && spin >= (all - exec) * pre_exec_pct() / 100;
}

/* The held child: spins in this program's image, then execs the workload. */
static void pid_exec_child(void)
{
	char *work[] = { WORK, "--work", "0", "2", NULL };

	pt_tp_pre_exec_spin(400);
	execv(WORK, work);
}

static void test_pid_exec(bool records)
{
	const char *how = records ? "records" : "in-kernel";
	char pid_s[16];
	char *argv[] = { PT_PEA, "profile", "-F", "499", "-p", pid_s,
			 "-d", "60", "--folded", FOLDED,
			 records ? "--records" : NULL, NULL };
	unsigned long pre, pre_named, in_exec;
	struct fold f;
	int status = 0;
	char what[32];
	pid_t pid, tool;

	/*
	 * The child waits in read() until released, in this program's image:
	 * the tool reads those maps at its start.
	 */
	snprintf(what, sizeof(what), "exec (%s)", how);
	if (!pt_profile_held(what, pid_exec_child, pid_s, sizeof(pid_s), argv,
			     FOLDED, &pid, &tool))
		return;
	waitpid(pid, NULL, 0);
	waitpid(tool, &status, 0);
	PT_OK(WIFEXITED(status) && !WEXITSTATUS(status),
	      "exec (%s): profile -p PID exits 0 when the process is gone (0x%x)",
	      how, status);
	count_pre_exec(&pre, &pre_named, &in_exec);
	read_folded(&f, "test_sample");
	PT_OK(pre_exec_ok(pre, pre_named, in_exec),
	      "exec (%s): before the exec %lu of %lu samples (%lu more in execve()) in pt_tp_pre_exec_spin",
	      how, pre_named, pre - in_exec, in_exec);
	PT_OK(f.a && f.b && f.a + f.b >= (f.a + f.b + f.spin_other) * 95 / 100,
	      "exec (%s): after it %lu:%lu samples named main;a|b;spin (%lu other spin)",
	      how, f.a, f.b, f.spin_other);
}

/* -- CMD of a command that execs the workload after spinning here. */
static void test_cmd_exec(bool records)
{
	const char *how = records ? "records" : "in-kernel";
	char self[256];
	char *argv[] = { PT_PEA, "profile", "-F", "499", "--folded", FOLDED,
			 "--", self, "--pre-exec", NULL, NULL };
	char *argv_r[] = { PT_PEA, "profile", "-F", "499", "--folded", FOLDED,
			   "--records", "--", self, "--pre-exec", NULL };
	unsigned long pre, pre_named, in_exec;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct fold f;

	if (n <= 0) {
		PT_OK(0, "-- CMD exec (%s): readlink /proc/self/exe", how);
		return;
	}
	self[n] = '\0';
	PT_EQ(profile(records ? argv_r : argv), 0,
	      "-- CMD exec (%s): exit 0", how);
	count_pre_exec(&pre, &pre_named, &in_exec);
	read_folded(&f, "test_sample");
	PT_OK(pre_exec_ok(pre, pre_named, in_exec),
	      "-- CMD exec (%s): before the second exec %lu of %lu samples (%lu more in execve()) in pt_tp_pre_exec_spin",
	      how, pre_named, pre - in_exec, in_exec);
	PT_OK(f.a && f.b && f.a + f.b >= (f.a + f.b + f.spin_other) * 95 / 100,
	      "-- CMD exec (%s): after it %lu:%lu samples named main;a|b;spin (%lu other spin)",
	      how, f.a, f.b, f.spin_other);
}

/*
 * -- CMD whose command execs when the tool, its time up, ends it with
 * SIGTERM: the exec's ptrace stop comes after the links are closed.
 */
static void test_cmd_exec_at_end(void)
{
	char self[256];
	char *argv[] = { PT_PEA, "profile", "-F", "99", "-d", "1", "--", self,
			 "--exec-on-term", NULL };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		PT_OK(0, "-- CMD exec at the end: readlink /proc/self/exe");
		return;
	}
	self[n] = '\0';
	PT_EQ(profile(argv), 0,
	      "-- CMD exec at the end: the command execs at the tool's SIGTERM, exit 0");
}

/* The lines of --build-ids FILE: the program and the late-mapped object. */
static void test_build_ids(void)
{
	char *argv[] = { PT_PEA, "profile", "-F", "99", "--pages", "64",
			 "--folded", FOLDED, "--build-ids", BIDS, "--", WORK,
			 "--work", "3", "1", NULL };
	static char buf[4096];
	char want[256], *so;
	int lines;

	unlink(BIDS);
	PT_EQ(profile(argv), 0, "--build-ids: exit 0");
	PT_EQ(pt_read_file(BIDS, buf, sizeof(buf)), 0, "--build-ids: %s written",
	      BIDS);
	pt_diag("build-ids: %s", buf);
	snprintf(want, sizeof(want), "%s %s\n", PT_SAMPLE_BID + 2, WORK);
	PT_OK(strstr(buf, want) != NULL, "--build-ids: '%.*s' listed",
	      (int)strlen(want) - 1, want);
	snprintf(want, sizeof(want), "%s /tmp/pt_prof_so.", PT_PROF_SO_BID + 2);
	so = strstr(buf, want);
	PT_OK(so && strstr(so, ".so\n"),
	      "--build-ids: the late-mapped object's '%s...so' listed", want);
	for (so = buf, lines = 0; (so = strchr(so, '\n')); so++)
		lines++;
	PT_EQ(lines, 2, "--build-ids: two files, no other");
}

static void test_modes(void)
{
	char *u[] = { PT_PEA, "profile", "-F", "499", "--user-only",
		      "--folded", FOLDED, "--", WORK, "--work", "0", "2",
		      NULL };
	char *k[] = { PT_PEA, "profile", "-F", "499", "--kernel-only",
		      "--folded", FOLDED, "--", WORK, "--work", "1", "2",
		      NULL };
	struct fold f;

	PT_EQ(profile(u), 0, "--user-only: exit 0");
	read_folded(&f, "test_sample");
	PT_OK(f.total >= 50 && !f.kframes && f.uframes,
	      "--user-only: %lu samples, %lu with kernel frames, %lu with main",
	      f.total, f.kframes, f.uframes);
	PT_EQ(profile(k), 0, "--kernel-only: exit 0");
	read_folded(&f, "test_sample");
	PT_OK(f.total >= 50 && f.kframes == f.total && !f.uframes,
	      "--kernel-only: %lu samples, %lu with kernel frames, %lu with main",
	      f.total, f.kframes, f.uframes);
}

/* --kernel-only, every task: counted in the kernel, keyed by comm. */
static void test_kernel_wide(void)
{
	char *work[] = { WORK, "--work", "1", "3", NULL };
	char *argv[] = { PT_PEA, "profile", "-F", "499", "--kernel-only",
			 "-d", "1.5", "--folded", FOLDED, NULL };
	unsigned long long n = 0, lost = 0, ovf = 0, reads = 0, w;
	static char line[1 << 16];
	pid_t pid = fork();
	char *sp;
	FILE *in;

	if (pid == 0) {
		execv(WORK, work);
		_exit(127);
	}
	usleep(200000);
	PT_EQ(profile(argv), 0, "profile --kernel-only of every task: exit 0");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	PT_OK(counts(&n, &lost, &ovf) && n + lost == ovf && !lost &&
	      strstr(err, ", complete (in-kernel): "),
	      "counted in the kernel: %llu samples, %llu lost, %llu overflows",
	      n, lost, ovf);
	in = fopen(FOLDED, "r");
	while (in && fgets(line, sizeof(line), in)) {
		sp = strrchr(line, ' ');
		w = sp ? strtoull(sp + 1, NULL, 10) : 0;
		if (!strncmp(line, "test_sample;", 12) &&
		    strstr(line, ";vfs_read_[k]"))
			reads += w;
	}
	if (in)
		fclose(in);
	PT_OK(reads >= 10,
	      "%llu samples of the reader under its comm through vfs_read [k]",
	      reads);
}

static void test_usage(void)
{
	char *both[] = { PT_PEA, "profile", "--kernel-only", "--user-only",
			 "--", WORK, "--work", "0", "1", NULL };
	char *f0[] = { PT_PEA, "profile", "-F", "0", NULL };
	char *nop[] = { PT_PEA, "profile", "-p", "99999999", NULL };
	char *pages[] = { PT_PEA, "profile", "--pages", "3", NULL };

	PT_EQ(profile(both), 2, "--kernel-only --user-only: usage error");
	PT_EQ(profile(f0), 2, "-F 0: usage error");
	PT_EQ(profile(pages), 2, "--pages 3: usage error");
	PT_EQ(profile(nop), 1, "-p of no process: error");
	PT_OK(strstr(err, "no process 99999999") != NULL, "-p: says there is no such process");
}

static void become_nobody(void *arg)
{
	(void)arg;
	if (pt_drop_to_nobody_caps(0))
		_exit(126);
}

/*
 * -- CMD samples the command's tasks with inheritance: the child it forks
 * (test_sample --work 5: a() in the command, b() in its child) too.
 */
static void test_fork(void)
{
	char *argv[] = { PT_PEA, "profile", "-F", "499", "--folded", FOLDED,
			 "--", WORK, "--work", "5", "2", NULL };
	unsigned long long n = 0, lost = 0, ovf = 0;
	struct fold f;
	bool ok;

	/* The child is named: its maps are read at its exit stop (traced). */
	PT_EQ(profile(argv), 0, "profile -- test_sample --work 5: exit 0");
	ok = counts(&n, &lost, &ovf);
	PT_OK(ok && n + lost == ovf,
	      "fork: samples + lost (%llu + %llu) == overflows (%llu)", n,
	      lost, ovf);
	read_folded(&f, "test_sample");
	PT_OK(f.a >= 50 && f.b >= 50,
	      "fork: the command's a() (%lu) and its child's b() (%lu) are both sampled",
	      f.a, f.b);
}

/*
 * As perf record: at paranoid 2 nobody may not sample every CPU, nor
 * kernel stacks, but may sample its own command in user mode (a task's
 * rule: its own process).
 */
static void test_perm(void)
{
	char *own[] = { PT_PEA, "profile", "-F", "499", "--user-only",
			"--folded", FOLDED, "--", WORK, "--work", "0", "2",
			NULL };
	char *ownk[] = { PT_PEA, "profile", "--", WORK, "--work", "0", "1",
			 NULL };
	char *argv[] = { PT_PEA, "profile", "-d", "1", NULL };
	struct fold f;
	long paranoid = pt_perm_read_int(PT_PARANOID);
	struct stat st;
	int rc;

	if (stat(PEA_DEVICE_PATH, &st))
		pt_fatal("stat " PEA_DEVICE_PATH);
	PT_EQ(chmod(PEA_DEVICE_PATH, 0666), 0, "/dev/pea opened to others");
	PT_EQ(pt_perm_write_int(PT_PARANOID, 2), 0, "perf_event_paranoid 2");
	rc = pt_run(argv, out, sizeof(out), err, sizeof(err), become_nobody,
		    NULL);
	PT_EQ(rc, 1, "nobody at paranoid 2: exit 1");
	PT_OK(strstr(err, "CAP_PERFMON") != NULL,
	      "nobody at paranoid 2: the message names CAP_PERFMON (%.200s)",
	      err);
	unlink(FOLDED);
	rc = pt_run(own, out, sizeof(out), err, sizeof(err), become_nobody,
		    NULL);
	PT_EQ(rc, 0, "nobody at paranoid 2: --user-only -- CMD: exit 0 (%.200s)",
	      err);
	read_folded(&f, "test_sample");
	PT_OK(f.a + f.b >= 50 && !f.kframes,
	      "nobody at paranoid 2: its command sampled in user mode (%lu in main;a|b;spin)",
	      f.a + f.b);
	rc = pt_run(ownk, out, sizeof(out), err, sizeof(err), become_nobody,
		    NULL);
	PT_EQ(rc, 1, "nobody at paranoid 2: kernel stacks of its command: exit 1");
	PT_OK(strstr(err, "perf_event_paranoid <= 1") != NULL,
	      "nobody at paranoid 2: the message names perf_event_paranoid <= 1 (%.200s)",
	      err);
	PT_EQ(pt_perm_write_int(PT_PARANOID, paranoid), 0,
	      "perf_event_paranoid restored");
	PT_EQ(chmod(PEA_DEVICE_PATH, st.st_mode & 07777), 0,
	      "device mode restored");
}

static void exec_on_term(int sig)
{
	char *work[] = { WORK, "--work", "0", "1", NULL };

	(void)sig;
	execv(WORK, work);
	_exit(127);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--exec-on-term")) {
		/* Spins until the tool's SIGTERM, then execs the workload. */
		signal(SIGTERM, exec_on_term);
		pt_tp_pre_exec_spin(20000);
		return 1;
	}
	if (argc == 2 && !strcmp(argv[1], "--pre-exec")) {
		char *work[] = { WORK, "--work", "0", "2", NULL };

		pt_tp_pre_exec_spin(400);
		execv(WORK, work);
		return 127;
	}
	test_usage();
	test_perm();
	test_ab(false);
	test_ab(true);
	test_kernel();
	test_exit_first();
	test_exit_maps();
	test_pid();
	test_pid_exec(false);
	test_pid_exec(true);
	test_cmd_exec(false);
	test_cmd_exec(true);
	test_cmd_exec_at_end();
	test_build_ids();
	test_fork();
	test_modes();
	test_kernel_wide();
	return pt_done();
}
