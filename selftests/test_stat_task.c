// SPDX-License-Identifier: GPL-2.0
/*
 * pea stat -- CMD and -p PID count the command's (the process's) own
 * tasks, as perf stat does: every thread and child, and nothing else.
 *
 * The workload is this program run with "--work": it blocks in N
 * nanosleeps, has a thread block in T and a child in C, spins for a
 * known CPU time, and writes what it measured of itself (its switches
 * from getrusage between its start and end, its CPU time) to a file.
 * Meanwhile a sibling that is not the command's descendant blocks 200
 * times and spins: a CPU-wide count would include it.
 *
 * Bounds, not equalities: Linux counts the switches and CPU time of the
 * exec and of the exit too, which no task can measure of itself, and a
 * tick may preempt it; the bounds say how much. Every nanosleep blocks,
 * so each is at least one switch (voluntary).
 */
#include <pthread.h>
#include <time.h>
#include <sys/resource.h>
#include "pea_test.h"
#include "pt_tool.h"

#define N_MAIN		40
#define N_THREAD	20
#define N_CHILD		30
#define N_SIBLING	200
#define SPIN_NS		30000000ULL	/* 30 ms of CPU */
#define SLACK_SWITCHES	6
#define EXIT_SWITCHES	4	/* per exiting task, after perf left it */
/*
 * The CPU time the command cannot measure of itself: after its report,
 * its exit (libc's, do_exit()'s exit_mm() before perf_event_exit_task()).
 * Under TCG that is guest time, which a loaded host stretches: 6.5 ms
 * once on 6.12 with two guests on the host's two cores. Half the
 * sibling's spin, so that a count with the sibling in it is still out.
 */
#define SLACK_NS	(SPIN_NS / 2)
#define REPORT		"/tmp/pt_stat_task.report"

static void nap(int n)
{
	struct timespec ts = { 0, 1000000 };	/* 1 ms: blocks, unless the host stalls */

	while (n--)
		nanosleep(&ts, NULL);
}

static unsigned long long cputime_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void spin(unsigned long long ns)
{
	unsigned long long t0 = cputime_ns(CLOCK_THREAD_CPUTIME_ID);

	while (cputime_ns(CLOCK_THREAD_CPUTIME_ID) - t0 < ns)
		;
}

static void *thread_fn(void *arg)
{
	(void)arg;
	nap(N_THREAD);
	return NULL;
}

/* The CPU time of the reaped children, ns. */
static unsigned long long children_cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static long switches(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* The command: measures itself and reports to REPORT (a file: no wake-up). */
static int work(void)
{
	long s0 = switches(RUSAGE_SELF), s1, sc;
	pthread_t th;
	pid_t child;
	FILE *f;

	child = fork();
	if (child == 0) {
		nap(N_CHILD);
		_exit(0);
	}
	pthread_create(&th, NULL, thread_fn, NULL);
	nap(N_MAIN);
	spin(SPIN_NS);
	pthread_join(th, NULL);
	waitpid(child, NULL, 0);
	s1 = switches(RUSAGE_SELF);
	sc = switches(RUSAGE_CHILDREN);
	f = fopen(REPORT, "w");
	if (!f)
		return 1;
	fprintf(f, "%ld %ld %llu\n", s1 - s0, sc,
		cputime_ns(CLOCK_PROCESS_CPUTIME_ID) + children_cpu_ns());
	fclose(f);
	return 0;
}

/* Not the command's descendant: blocks and spins beside it. */
static pid_t start_sibling(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		nap(N_SIBLING);
		spin(SPIN_NS);
		_exit(0);
	}
	return pid;
}

/* "counter-value" of @event's JSON line (the tool's own layout), or -1. */
static long long json_value(const char *out, const char *event)
{
	static const char key[] = "\"counter-value\": ";
	const char *l, *v, *nl;
	char needle[96];

	snprintf(needle, sizeof(needle), "\"event\": \"%s\"", event);
	l = strstr(out, needle);
	if (!l)
		return -1;
	nl = strchr(l, '\n');
	v = strstr(l, key);
	if (!v || (nl && v > nl))
		return -1;
	return strtoll(v + sizeof(key) - 1, NULL, 10);
}

static void test_command(const char *self)
{
	static char out[8192], err[4096];
	long self_sw = -1, child_sw = -1;
	unsigned long long cpu_ns = 0;
	long long sw, clk;
	pid_t sib;
	FILE *f;
	int rc;

	unlink(REPORT);
	sib = start_sibling();
	rc = pt_run((char *[]){ PT_PEA, "stat", "--json", "-e",
			       "context-switches,task-clock", "--",
			       (char *)self, "--work", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	waitpid(sib, NULL, 0);
	PT_EQ(rc, 0, "pea stat -- CMD: the command's exit status 0");
	f = fopen(REPORT, "r");
	PT_OK(f && fscanf(f, "%ld %ld %llu", &self_sw, &child_sw,
			  &cpu_ns) == 3, "the command reported itself");
	if (f)
		fclose(f);
	sw = json_value(out, "context-switches");
	clk = json_value(out, "task-clock");
	pt_diag("%s%s", out, err);
	pt_diag("command: %ld switches (its threads), %ld (its child), %llu ns CPU (with its child's)",
		self_sw, child_sw, cpu_ns);
	/*
	 * The workload must switch often enough to tell the command from
	 * its sibling. Not every 1 ms nanosleep blocks: when the host
	 * leaves the guest's vCPU unscheduled for over a millisecond, the
	 * timer has expired before do_nanosleep() reaches schedule() (the
	 * debug kernel under load: 58 of 60). Half of them is plenty.
	 */
	PT_OK(self_sw >= (N_MAIN + N_THREAD) / 2 && child_sw >= N_CHILD / 2,
	      "most nanosleeps blocked: %ld >= %d, %ld >= %d", self_sw,
	      (N_MAIN + N_THREAD) / 2, child_sw, N_CHILD / 2);
	/*
	 * getrusage also counts what the exited child and thread switch
	 * after their perf events left them in do_exit(): the last switch
	 * into death, and any lock they block on or preemption on the way
	 * (cgroup_exit()'s css_set_lock sleeps on PREEMPT_RT; the debug and
	 * RT kernels showed 3 in all). At most EXIT_SWITCHES per exiting
	 * task.
	 */
	PT_OK(sw >= self_sw + child_sw - 2 * EXIT_SWITCHES &&
	      sw <= self_sw + child_sw + SLACK_SWITCHES,
	      "context-switches %lld: the command's threads and child (%ld, less at most %d after their events left them), + at most %d of exec and exit; not the sibling's %d",
	      sw, self_sw + child_sw, 2 * EXIT_SWITCHES, SLACK_SWITCHES,
	      N_SIBLING);
	PT_OK(clk >= (long long)SPIN_NS &&
	      clk <= (long long)(cpu_ns + SLACK_NS),
	      "task-clock %lld ns: its spin (%llu) and at most its CPU time %llu + %llu, not the sibling's spin",
	      clk, SPIN_NS, cpu_ns, SLACK_NS);
	PT_OK(strstr(out, "\"pid\": ") != NULL && !strstr(out, "\"cpu\":"),
	      "JSON lines name the command's pid, not CPUs");

	rc = pt_run((char *[]){ PT_PEA, "stat", "-e", "context-switches",
			       "--", (char *)self, "--work", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 0 && strstr(out, "Performance counter stats for '") &&
	      strstr(out, " --work':") && strstr(out, "tasks ") &&
	      !strstr(out, "CPU0"),
	      "text: the command's line, one 'tasks' line, no CPU lines");

	rc = pt_run((char *[]){ PT_PEA, "stat", "-a", "--json", "-e",
			       "context-switches", "--", "/bin/true", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 0 && strstr(out, "\"cpu\": \"all\""),
	      "-a with a command: CPU-wide, as before");
}

static void test_pid(const char *self)
{
	static char out[8192], err[4096];
	char pid_s[16], pid_json[32];
	long long sw;
	pid_t pid;
	int rc;

	(void)self;
	pid = fork();
	if (pid == 0) {
		nap(5);		/* before the count: not counted */
		nap(1000);	/* counted while it lasts */
		_exit(0);
	}
	usleep(20000);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
	snprintf(pid_json, sizeof(pid_json), "\"pid\": %d", (int)pid);
	rc = pt_run((char *[]){ PT_PEA, "stat", "--json", "-e",
			       "context-switches", "-p",
			       pid_s, "--", "/bin/sleep",
			       "0.3", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	sw = json_value(out, "context-switches");
	pt_diag("%s%s", out, err);
	PT_EQ(rc, 0, "pea stat -p PID -- sleep 0.3: exit 0");
	/* 1 ms naps for 0.3 s: at most 300 (each nap is >= 1 ms). */
	PT_OK(sw >= 50 && sw <= 300 + SLACK_SWITCHES,
	      "-p: %lld switches of the process while sleep ran (50..%d)",
	      sw, 300 + SLACK_SWITCHES);
	PT_OK(strstr(out, pid_json) != NULL,
	      "-p: JSON names the process");

	rc = pt_run((char *[]){ PT_PEA, "stat", "-e", "task-clock", "-p",
			       "999999999", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 1 && strstr(err, "no process 999999999"),
	      "-p of no process: exit 1, said");
	rc = pt_run((char *[]){ PT_PEA, "stat", "-e", "task-clock", "-p",
			       "1", "-a", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "choose one"),
	      "-p with -a: a usage error (exit 2)");
	rc = pt_run((char *[]){ PT_PEA, "stat", "-e", "task-clock", "-p",
			       "12x", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 2 && strstr(err, "bad --pid"), "-p 12x: exit 2");
}

int main(int argc, char **argv)
{
	char self[4096];
	ssize_t n;

	if (argc > 1 && !strcmp(argv[1], "--work"))
		return work();
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		pt_fatal("readlink /proc/self/exe");
	self[n] = '\0';
	test_command(self);
	test_pid(self);
	return pt_done();
}
