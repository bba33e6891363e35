// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace --latency START END (docs/aggregations.md), counted in the
 * kernel:
 *   - a syscall's enter -> exit, paired by thread: raw_syscalls:sys_enter
 *     and sys_exit of this process's nanosleep(140 ms), 3 times: 3 values,
 *     all in the bucket [128M, 256M) ns, no unpaired end;
 *   - runqlat, paired by field: sched:sched_wakeup's pid ->
 *     sched:sched_switch's next_pid of a thread woken 9 times (a futex,
 *     then 8 sleeps): 9 values, in JSON, none overflowed (a switch-in
 *     after a preemption is an unpaired end);
 *   - the pairing kprobes on the test module's pea_st_lat_begin(key) and
 *     _end(key), by arg0, with --max-pending 4 and 10 keys begun: 6
 *     starts not kept, and the 6 ends of those unpaired, on the table;
 *   - --off-cpu --pid of this process: a thread named pea-offcpu blocked
 *     6 times (a futex wait, 5 sleeps of 30 ms), at least 250 ms;
 *   - --off-cpu --pid of this process with pea on the thread's CPU: the
 *     thread's futex wait and 40 sleeps of 1 ms with 50 ms of timer
 *     slack, which end at pea's own timer, so that many of its switch-ins
 *     follow pea's switch-outs: every blocked period counted (pea leaves
 *     its own switch-outs out, not the switch-ins after them);
 *   - the same by hand beside pea, --latency with START's --pid: START
 *     the thread's blocked switch-outs, END its switch-ins, all paired;
 *   - --off-cpu --count-by kstack --folded FILE (offcputime): the same
 *     thread's two rows, one blocked once in futex_wait() (at least 50
 *     ms), one 5 times in do_nanosleep() (at least 100 ms), each with
 *     the stack it blocked on from finish_task_switch(); the folded
 *     file's nanosleep line weighted by the same time in us;
 *   - --off-cpu --count-by kstack -- /bin/sleep 0.3: the command held
 *     before its exec until attached, its pid the filter: its one sleep
 *     in do_nanosleep() (at least 250 ms), no other process's rows;
 *   - --off-cpu --folded FILE -- /bin/sleep 0.3 (stacks without
 *     --count-by): the text table, its row with the stack under it, and
 *     the folded line sleep;...;do_nanosleep_[k];... of 250 ms or more
 *     in us;
 *   - usage errors: --latency with one probe, --key without --latency, a
 *     key that is no field.
 */
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <linux/futex.h>
#include "pt_exit.h"
#include "pt_tool.h"

#define MS	1000000L

static char line[65536];
static char out[1 << 16], err[1 << 14];

/* Stop the tool (SIGINT) and collect its stdout and stderr. */
static int finish(struct pt_proc *p)
{
	usleep(200000);
	kill(p->pid, SIGINT);
	return pt_proc_collect(p, line, sizeof(line), out, sizeof(out), err,
			       sizeof(err));
}

static void test_syscall(void)
{
	char pid[16];
	char *argv[] = { PT_PEA, "trace", "--latency", "--pid", pid,
			 "tp:raw_syscalls:sys_enter", "--filter", "id == 35",
			 "tp:raw_syscalls:sys_exit", "--filter", "id == 35",
			 NULL };
	char bar[128];
	/* 2^27 ns and a little: its log2 bucket has 128 ms of room */
	struct timespec ts = { 0, 140 * MS };
	struct pt_proc p;
	int i, rc;

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (!pt_trace_start(&p, argv)) {
		PT_OK(0, "pea trace --latency raw_syscalls:sys_enter raw_syscalls:sys_exit starts");
		pt_proc_close(&p);
		return;
	}
	for (i = 0; i < 3; i++)
		syscall(SYS_nanosleep, &ts, NULL);	/* id 35 on x86-64 */
	rc = finish(&p);
	PT_EQ(rc, 0, "pea trace --latency exits 0");
	snprintf(bar, sizeof(bar), "\n%-16s %10d |%s|\nmin ", "[128M, 256M)", 3,
		 "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@");
	PT_OK(strstr(out, "tp:raw_syscalls:sys_exit: histogram of latency (ns), 3 values, complete (in-kernel)\n"
		      "since tp:raw_syscalls:sys_enter; unpaired ends 0, starts not kept (pairing table full) 0, starts kept now 0\n") &&
	      strstr(out, bar),
	      "3 nanosleep(140 ms) enter -> exit: 3 values in [128M, 256M), none unpaired");
	pt_diag("%s", out);
}

static int park_pipe[2], go_word;
static volatile pid_t sleeper_tid;
static volatile int sleeper_parking;

/*
 * The thread parks, asleep in read(), once its work is done, until pea
 * has stopped: pthread_join() returns at its mm_release(), and the rest
 * of its do_exit() can still block (an rtlock on the RT kernels, read as
 * D), be woken and be switched in (on 6.1-rt, 14 of 300 joined threads
 * had a wakeup or a switch-in after the join).
 */
static void park(void)
{
	char c;

	sleeper_parking = 1;
	if (read(park_pipe[0], &c, 1) < 0)
		return;
}

/* The test: wait until the thread is parked; 0 or -1. */
static int parked(void)
{
	while (!sleeper_parking)
		usleep(1000);
	return pt_tid_asleep(sleeper_tid);
}

/* After pea stopped: let the thread exit, join it. */
static void unpark(pthread_t th)
{
	close(park_pipe[1]);
	pthread_join(th, NULL);
	close(park_pipe[0]);
}

static int go_park(pthread_t *th, void *(*fn)(void *))
{
	sleeper_tid = 0;
	sleeper_parking = 0;
	go_word = 0;
	return pipe(park_pipe) || pthread_create(th, NULL, fn, NULL);
}

/*
 * The threads are woken by a futex, on one CPU: on PREEMPT_RT a wakeup
 * whose wakee then contends for a lock its waker still holds (a pipe's
 * wait queue lock) or a nanosleep whose hrtimer callback still runs on
 * another CPU (hrtimer_cancel_wait_running()) blocks it on an rtlock,
 * one more wakeup (and D period) than the workload's. FUTEX_WAKE wakes
 * after dropping its bucket lock, and the woken waiter takes no lock.
 */
static void go_wait(void)
{
	sleeper_tid = syscall(SYS_gettid);
	while (!__atomic_load_n(&go_word, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &go_word, FUTEX_WAIT_PRIVATE, 0, NULL,
			NULL, 0);
}

/*
 * Pin the thread, asleep on its futex, to one CPU from here: moving
 * itself off a CPU it runs on would wait for the migration stopper, a
 * blocked period of its own.
 */
static void go_pin(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(1 % pt_nr_cpus(), &set);
	if (sched_setaffinity(sleeper_tid, sizeof(set), &set))
		pt_diag("sched_setaffinity: %s", strerror(errno));
}

/* The calling thread's voluntary switches: its blocked periods. */
static long nvcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? -1 : ru.ru_nvcsw;
}

static void go_wake(void)
{
	__atomic_store_n(&go_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &go_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static volatile long wait_blocked, sleep_blocked;

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, 10 * MS };
	long v0, v1;
	int n;

	v0 = nvcsw();
	go_wait();
	v1 = nvcsw();
	for (n = 0; n < 8; n++)
		nanosleep(&ts, NULL);
	/* each sleep is a wakeup; those that blocked also a switch-in */
	wait_blocked = v1 - v0;
	sleep_blocked = nvcsw() - v1;
	park();
	return arg;
}

static void test_runqlat(void)
{
	char fw[64], fs[64];
	char *argv[] = { PT_PEA, "trace", "--latency", "--json",
			 "tp:sched:sched_wakeup", "--filter", fw,
			 "tp:sched:sched_switch", "--filter", fs,
			 "--key", "pid,next_pid", NULL };
	const char *h;
	struct pt_proc p;
	pthread_t th;
	int rc;

	if (go_park(&th, sleeper))
		pt_fatal("pipe, pthread_create");
	while (!sleeper_tid)
		usleep(1000);
	/* asleep on the futex, so that the go is a wakeup (not a sleep's guess) */
	PT_EQ(pt_tid_asleep(sleeper_tid), 0,
	      "runqlat: the thread is asleep on its futex before the go");
	go_pin();
	snprintf(fw, sizeof(fw), "pid == %d", (int)sleeper_tid);
	snprintf(fs, sizeof(fs), "next_pid == %d", (int)sleeper_tid);
	if (!pt_trace_start(&p, argv)) {
		PT_OK(0, "pea trace --latency sched:sched_wakeup sched:sched_switch --key pid,next_pid starts");
		pt_proc_close(&p);
		return;
	}
	go_wake();
	PT_EQ(parked(), 0, "runqlat: the thread parked, asleep, after its 8 sleeps");
	rc = finish(&p);
	unpark(th);
	PT_EQ(rc, 0, "pea trace --latency (runqlat) exits 0");
	h = strstr(out, "{\"type\":\"hist\"");
	if (h) {
		/* that line alone */
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(h, "\n"), h);
		h = line;
	}
	PT_OK(wait_blocked == 1 && sleep_blocked >= 4 && sleep_blocked <= 8,
	      "runqlat: the thread blocked on its futex once and in %ld of its 8 sleeps (its voluntary switches)",
	      sleep_blocked);
	/*
	 * 9 wakeups; each period that blocked paired with its switch-in;
	 * a sleep that did not block leaves its wakeup until the next
	 * replaces it, or pending.
	 */
	PT_OK(h && pt_json_streq(h, "probe", "tp:sched:sched_switch") &&
	      pt_json_streq(h, "start", "tp:sched:sched_wakeup") &&
	      pt_json_streq(h, "key", "latency") &&
	      pt_json_streq(h, "unit", "ns") &&
	      strstr(h, "\"complete\":true,\"in_kernel\":true") &&
	      pt_json_num(h, "count", -1) == 1 + sleep_blocked &&
	      pt_json_num(h, "unpaired", -1) >= 0 &&
	      pt_json_num(h, "start_overflow", -1) == 0 &&
	      pt_json_num(h, "pending", -1) >= 0 &&
	      pt_json_num(h, "pending", -1) <= 8 - sleep_blocked,
	      "runqlat of a thread woken 9 times: %lld values (%ld blocked), %lld unpaired (switch-ins after a preemption), in the kernel",
	      h ? pt_json_num(h, "count", -1) : -1, 1 + sleep_blocked,
	      h ? pt_json_num(h, "unpaired", -1) : -1);
	pt_diag("%s", out);
}

static void test_overflow(void)
{
	char *argv[] = { PT_PEA, "trace", "--latency", "--key", "arg0",
			 "--max-pending", "4", "kprobe:pea_st_lat_begin",
			 "kprobe:pea_st_lat_end", NULL };
	struct pea_st_lat a = { .key_base = 100, .nkeys = 10, .rounds = 1,
				.flags = PEA_ST_LAT_BEGIN };
	struct pt_proc p;
	int rc;

	if (!pt_trace_start(&p, argv)) {
		PT_OK(0, "pea trace --latency --max-pending 4 starts");
		pt_proc_close(&p);
		return;
	}
	if (ioctl(pt_st(), PEA_ST_IOC_LAT, &a))
		pt_fatal("PEA_ST_IOC_LAT");
	a.flags = PEA_ST_LAT_END;
	if (ioctl(pt_st(), PEA_ST_IOC_LAT, &a))
		pt_fatal("PEA_ST_IOC_LAT");
	rc = finish(&p);
	PT_EQ(rc, 0, "pea trace --latency --max-pending 4 exits 0");
	PT_OK(strstr(out, "kprobe:pea_st_lat_end: histogram of latency (ns), 4 values, complete (in-kernel)\n"
		      "since kprobe:pea_st_lat_begin; unpaired ends 6, starts not kept (pairing table full) 6, starts kept now 0\n") != NULL,
	      "10 keys begun with room for 4: 4 values, 6 unpaired ends, 6 starts not kept");
	pt_diag("%s", out);
}

static void *offcpu_thread(void *arg)
{
	struct timespec ts = { 0, 30 * MS };
	long v0, v1;
	int n;

	prctl(PR_SET_NAME, "pea-offcpu");
	v0 = nvcsw();
	go_wait();
	v1 = nvcsw();
	for (n = 0; n < 5; n++)
		nanosleep(&ts, NULL);
	/*
	 * Its blocked periods as the scheduler counted them: a 30 ms
	 * nanosleep whose timer fired before do_nanosleep() reached
	 * schedule() (a guest vCPU the host left unscheduled that long)
	 * does not block.
	 */
	wait_blocked = v1 - v0;
	sleep_blocked = nvcsw() - v1;
	park();		/* a blocked period not ended: not counted */
	return arg;
}

/*
 * Beside pea: the thread sleeps 40 x 1 ms with 50 ms of timer slack, on
 * the CPU pea runs on. Each sleep's timer may then fire at any hrtimer
 * interrupt of that CPU from 1 ms on: pea's own 20 ms sleep's, when pea
 * is often switched in first and the thread right after pea's next
 * switch-out, a switch-in whose current task is pea. (Where the sleeps'
 * timers expire in a thread, ktimers/N on PREEMPT_RT, or on a guest of
 * one CPU, whose other tasks' timers end them first, pea is that task
 * less often: the 6.1 and 6.12 runs are the ones that failed first.)
 */
static void *offcpu_beside_thread(void *arg)
{
	struct timespec ts = { 0, 1 * MS };
	long v0, v1;
	int n;

	prctl(PR_SET_NAME, "pea-offcpu");
	prctl(PR_SET_TIMERSLACK, 50 * MS);
	v0 = nvcsw();
	go_wait();
	v1 = nvcsw();
	for (n = 0; n < 40; n++)
		nanosleep(&ts, NULL);
	wait_blocked = v1 - v0;
	sleep_blocked = nvcsw() - v1;
	park();
	return arg;
}

/*
 * The off-CPU workload @fn under a started pea trace @p: the thread waits
 * on its futex (asleep before the go, then 100 ms more), sleeps and
 * parks; pea is stopped while it is parked. pea's exit status.
 */
static int offcpu_run(struct pt_proc *p, void *(*fn)(void *))
{
	pthread_t th;
	int rc;

	if (go_park(&th, fn))
		pt_fatal("pipe, pthread_create");
	while (!sleeper_tid)
		usleep(1000);
	/* asleep on the futex before the go: the wait is a blocked period */
	PT_EQ(pt_tid_asleep(sleeper_tid), 0,
	      "the thread is asleep on its futex before the go");
	go_pin();
	usleep(100000);		/* the workload: that wait blocks 100 ms */
	go_wake();
	PT_EQ(parked(), 0, "the thread parked, asleep, after its 5 sleeps");
	rc = finish(p);
	unpark(th);
	return rc;
}

/*
 * The thread's row in @out, pea trace --off-cpu --json's, copied into
 * @row (@len bytes); where it is, or NULL.
 */
static const char *offcpu_tid_row(char *row, size_t len)
{
	const char *h = strstr(out, "{\"type\":\"offcpu\""), *rp;
	char want[64];

	snprintf(want, sizeof(want), "{\"pid\":%d,\"comm\":\"pea-offcpu\"",
		 (int)sleeper_tid);
	rp = h ? strstr(h, want) : NULL;
	if (rp)
		snprintf(row, len, "%.*s", (int)strcspn(rp, "}") + 1, rp);
	return rp;
}

static void test_offcpu(void)
{
	char pid[16];
	char *argv[] = { PT_PEA, "trace", "--off-cpu", "--pid", pid,
			 "--json", "--top", "50", NULL };
	char row[512] = "";
	const char *rp;
	struct pt_proc p;
	int rc;

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (!pt_trace_start(&p, argv)) {
		PT_OK(0, "pea trace --off-cpu --pid starts");
		pt_proc_close(&p);
		return;
	}
	rc = offcpu_run(&p, offcpu_thread);
	PT_EQ(rc, 0, "pea trace --off-cpu exits 0");
	rp = offcpu_tid_row(row, sizeof(row));
	/* its futex wait, then 5 sleeps of 30 ms: each that blocked */
	PT_OK(wait_blocked == 1 && sleep_blocked >= 3 && sleep_blocked <= 5,
	      "the thread blocked on its futex once and in %ld of its 5 sleeps (its voluntary switches)",
	      sleep_blocked);
	PT_OK(strstr(out, "\"replaced\":0,") != NULL,
	      "--off-cpu: no task blocked again with no switch-in seen");
	PT_OK(rp && pt_json_num(row, "count", -1) == 1 + sleep_blocked &&
	      pt_json_num(row, "ns", -1) >= 100 * MS + sleep_blocked * 20 * MS &&
	      pt_json_num(row, "ns", -1) < 2000 * MS,
	      "the thread pea-offcpu (tid %d): %lld blocked periods (%ld: a futex wait, %ld sleeps of 30 ms), %lld ns",
	      (int)sleeper_tid, rp ? pt_json_num(row, "count", -1) : -1,
	      1 + sleep_blocked, sleep_blocked,
	      rp ? pt_json_num(row, "ns", -1) : -1);
	pt_diag("%s", out);
}

/* Pin the calling thread to @cpu (its children and threads inherit it). */
static void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		pt_diag("sched_setaffinity: %s", strerror(errno));
}

/*
 * --off-cpu --pid of this process, pea on the thread's CPU: the thread's
 * switch-ins that follow pea's switch-outs are its blocked periods' ends
 * too. pea leaves its own process out of what it keeps (pea may be below
 * the --pid process); that is its switch-outs, not another task's
 * switch-in on the CPU pea leaves.
 */
/*
 * The workload beside pea (@argv) on CPU 1: pea forked there, the thread
 * pinned there (go_pin()), the test's polls on CPU 0. pea's exit status,
 * or -1 if it did not start (said).
 */
static int beside_run(char *const argv[], const char *what)
{
	int cpu = 1 % pt_nr_cpus(), rc = -1;
	struct pt_proc p;
	cpu_set_t all;
	bool started;

	if (sched_getaffinity(0, sizeof(all), &all))
		pt_fatal("sched_getaffinity");
	pin_self(cpu);
	started = pt_trace_start(&p, argv);
	pin_self(cpu ? 0 : cpu);
	if (started)
		rc = offcpu_run(&p, offcpu_beside_thread);
	else
		pt_proc_close(&p);
	sched_setaffinity(0, sizeof(all), &all);
	PT_OK(started, "%s (pea on CPU %d) starts", what, cpu);
	if (!started)
		return -1;
	PT_EQ(rc, 0, "%s (pea on CPU %d) exits 0", what, cpu);
	PT_OK(wait_blocked == 1 && sleep_blocked >= 30 && sleep_blocked <= 40,
	      "beside pea: the thread blocked on its futex once and in %ld of its 40 sleeps (its voluntary switches)",
	      sleep_blocked);
	return rc;
}

static void test_offcpu_beside(void)
{
	char pid[16];
	char *argv[] = { PT_PEA, "trace", "--off-cpu", "--pid", pid,
			 "--json", "--top", "50", NULL };
	char row[512] = "";
	const char *rp;

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (beside_run(argv, "pea trace --off-cpu --pid"))
		return;
	rp = offcpu_tid_row(row, sizeof(row));
	PT_OK(strstr(out, "\"replaced\":0,") != NULL,
	      "--off-cpu beside pea: no task blocked again with no switch-in seen");
	PT_OK(rp && pt_json_num(row, "count", -1) == 1 + sleep_blocked &&
	      pt_json_num(row, "ns", -1) >= 100 * MS + sleep_blocked * MS &&
	      pt_json_num(row, "ns", -1) < 5000 * MS,
	      "--off-cpu beside pea: the thread pea-offcpu (tid %d): %lld blocked periods (%ld: a futex wait, %ld sleeps of 1 ms or more), %lld ns",
	      (int)sleeper_tid, rp ? pt_json_num(row, "count", -1) : -1,
	      1 + sleep_blocked, sleep_blocked,
	      rp ? pt_json_num(row, "ns", -1) : -1);
	pt_diag("%s", out);
}

/*
 * The same pairing by hand, --latency START END beside pea: START a
 * blocked switch-out of the thread (by its comm) of this process (--pid
 * and a count by prev_comm, START's alone), END its switch-in, by
 * prev_pid and next_pid. pea leaves its own process out with --pid;
 * END, keyed by the task switched in and with no table but the
 * latency's, is on a map that leaves nothing out.
 */
static void test_latency_beside(void)
{
	char pid[16];
	char *argv[] = { PT_PEA, "trace", "--latency", "--json",
			 "tp:sched:sched_switch", "--pid", pid, "--filter",
			 "prev_state > 0 && prev_state < 16 && prev_comm == \"pea-offcpu\"",
			 "--count-by", "prev_comm",
			 "tp:sched:sched_switch", "--filter",
			 "next_comm == \"pea-offcpu\"",
			 "--key", "prev_pid,next_pid", NULL };
	const char *h;

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (beside_run(argv, "pea trace --latency --pid (off-CPU by hand)"))
		return;
	h = strstr(out, "{\"type\":\"hist\"");
	if (h) {
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(h, "\n"), h);
		h = line;
	}
	PT_OK(h && strstr(h, "\"complete\":true,\"in_kernel\":true") &&
	      pt_json_num(h, "count", -1) == 1 + sleep_blocked &&
	      pt_json_num(h, "start_overflow", -1) == 0 &&
	      pt_json_num(h, "pending", -1) == 1,
	      "--latency beside pea: %lld values, the thread's blocked periods (%ld: a futex wait, %ld sleeps), %lld kept now (its park)",
	      h ? pt_json_num(h, "count", -1) : -1, 1 + sleep_blocked,
	      sleep_blocked, h ? pt_json_num(h, "pending", -1) : -1);
	h = strstr(out, "{\"type\":\"count\"");
	PT_OK(h && strstr(h, "\"pea-offcpu\""),
	      "START's own count by prev_comm: %.200s", h ? h : "(none)");
	pt_diag("%s", out);
}

/* The thread's row in @out whose kstack has @func, from @from; or NULL. */
static const char *offcpu_row(const char *from, pid_t tid, const char *func,
			      char *row, size_t len)
{
	char want[64], fn[64];
	const char *rp;

	snprintf(want, sizeof(want), "{\"pid\":%d,\"comm\":\"pea-offcpu\"",
		 (int)tid);
	snprintf(fn, sizeof(fn), "\"%s+", func);
	for (rp = strstr(from, want); rp; rp = strstr(rp + 1, want)) {
		snprintf(row, len, "%.*s", (int)strcspn(rp, "}") + 1, rp);
		if (strstr(row, fn))
			return rp;
	}
	return NULL;
}

static void test_offcpu_kstack(void)
{
	char pid[16], path[] = "/tmp/pea-offcpu.folded";
	char *argv[] = { PT_PEA, "trace", "--off-cpu", "--pid", pid,
			 "--count-by", "kstack", "--folded", path, "--json",
			 "--top", "50", NULL };
	char want[64], pr[8192] = "", sr[8192] = "", folded[1 << 16];
	const char *h, *rp, *fl;
	long long pns, sns, rows = 0, w = -1;
	struct pt_proc p;
	int rc;

	snprintf(pid, sizeof(pid), "%d", getpid());
	unlink(path);
	if (!pt_trace_start(&p, argv)) {
		PT_OK(0, "pea trace --off-cpu --count-by kstack starts");
		pt_proc_close(&p);
		return;
	}
	rc = offcpu_run(&p, offcpu_thread);
	PT_EQ(rc, 0, "pea trace --off-cpu --count-by kstack exits 0");
	h = strstr(out, "{\"type\":\"offcpu\",\"by\":\"pid,comm,kstack\"");
	PT_OK(h != NULL, "the table is by pid, comm and kernel stack");
	if (!h)
		h = out;
	snprintf(want, sizeof(want), "{\"pid\":%d,\"comm\":\"pea-offcpu\"",
		 (int)sleeper_tid);
	for (rp = strstr(h, want); rp; rp = strstr(rp + 1, want))
		rows++;
	PT_EQ(rows, 2, "the thread pea-offcpu (tid %d) blocked on 2 kernel stacks",
	      (int)sleeper_tid);
	rp = offcpu_row(h, sleeper_tid, "futex_wait", pr, sizeof(pr));
	pns = rp ? pt_json_num(pr, "ns", -1) : -1;
	PT_OK(rp && pt_json_num(pr, "count", -1) == 1 && pns >= 50 * MS &&
	      pns < 2000 * MS,
	      "its futex wait: 1 blocked period in futex_wait(), %lld ns (50 ms .. 2 s)",
	      pns);
	PT_OK(rp && strstr(pr, "[\"finish_task_switch") != NULL,
	      "the stack's leaf is finish_task_switch: %.200s",
	      strstr(pr, "kstack") ? strstr(pr, "kstack") : pr);
	rp = offcpu_row(h, sleeper_tid, "do_nanosleep", sr, sizeof(sr));
	sns = rp ? pt_json_num(sr, "ns", -1) : -1;
	PT_OK(wait_blocked == 1 && sleep_blocked >= 3 && sleep_blocked <= 5,
	      "the thread blocked on its futex once and in %ld of its 5 sleeps (its voluntary switches)",
	      sleep_blocked);
	PT_OK(rp && pt_json_num(sr, "count", -1) == sleep_blocked &&
	      sns >= sleep_blocked * 20 * MS && sns < 2000 * MS,
	      "its 5 sleeps of 30 ms: %ld blocked periods in do_nanosleep() (each that blocked), %lld ns (20 ms each .. 2 s)",
	      sleep_blocked, sns);
	PT_OK(rp && !strstr(sr, "\"futex_wait+") && !strstr(pr, "\"do_nanosleep+"),
	      "the two stacks are apart");
	/* Folded: comm;root...;leaf us, the sleeps' line weighted alike. */
	memset(folded, 0, sizeof(folded));
	PT_OK(!pt_read_file(path, folded, sizeof(folded)) && folded[0],
	      "--folded %s written", path);
	for (fl = folded; *fl; fl += strcspn(fl, "\n") + (fl[strcspn(fl, "\n")] != 0)) {
		size_t n = strcspn(fl, "\n");
		char l[8192];

		snprintf(l, sizeof(l), "%.*s", (int)n, fl);
		if (!strncmp(l, "pea-offcpu;", 11) &&
		    strstr(l, ";do_nanosleep_[k];") &&
		    strstr(l, ";finish_task_switch") && strrchr(l, ' ')) {
			w = atoll(strrchr(l, ' ') + 1);
			break;
		}
	}
	PT_OK(w >= sns / 1000 && w < 2000000,
	      "the folded line pea-offcpu;...;do_nanosleep_[k];...;finish_task_switch* weighs %lld us (the row's %lld us, more if other threads of that comm slept there)",
	      w, sns / 1000);
	pt_diag("%s", out);
	pt_diag("%s", folded);
	unlink(path);
}

static void test_offcpu_cmd(void)
{
	char *argv[] = { PT_PEA, "trace", "--off-cpu", "--count-by", "kstack",
			 "--json", "--", "/bin/sleep", "0.3", NULL };
	char want[64], row[8192] = "";
	const char *h, *rp, *e;
	long long ns, rows = 0, mine = 0;
	int rc, pid = -1;

	rc = pt_run(argv, out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 0, "pea trace --off-cpu -- /bin/sleep 0.3 exits 0");
	e = strstr(err, "pea: /bin/sleep (pid ");
	if (e)
		pid = atoi(e + strlen("pea: /bin/sleep (pid "));
	PT_OK(e && pid > 0 && strstr(e, ") exited with status 0\n"),
	      "it says the command (pid %d) exited with status 0: %s", pid,
	      err);
	h = strstr(out, "{\"type\":\"offcpu\",\"by\":\"pid,comm,kstack\"");
	if (!h)
		h = out;
	snprintf(want, sizeof(want), "{\"pid\":%d,", pid);
	for (rp = strstr(h, "{\"pid\":"); rp; rp = strstr(rp + 1, "{\"pid\":")) {
		rows++;
		mine += !strncmp(rp, want, strlen(want));
	}
	PT_OK(rows >= 1 && mine == rows,
	      "every row is the command's (pid %d): %lld of %lld", pid, mine,
	      rows);
	snprintf(want, sizeof(want), "{\"pid\":%d,\"comm\":\"sleep\"", pid);
	for (rp = strstr(h, want); rp; rp = strstr(rp + 1, want)) {
		snprintf(row, sizeof(row), "%.*s", (int)strcspn(rp, "}") + 1, rp);
		if (strstr(row, "\"do_nanosleep+"))
			break;
	}
	ns = rp ? pt_json_num(row, "ns", -1) : -1;
	PT_OK(rp && pt_json_num(row, "count", -1) == 1 && ns >= 250 * MS &&
	      ns < 2000 * MS,
	      "sleep 0.3 blocked once in do_nanosleep(): %lld periods, %lld ns (250 ms .. 2 s)",
	      rp ? pt_json_num(row, "count", -1) : -1, ns);
	pt_diag("%s", out);
}

static void test_offcpu_folded(void)
{
	char path[] = "/tmp/pea-offcpu-cmd.folded";
	char *argv[] = { PT_PEA, "trace", "--off-cpu", "--folded", path, "--",
			 "/bin/sleep", "0.3", NULL };
	char folded[1 << 14], l[4096];
	const char *h, *fl, *r;
	long long w = -1, us = -1;
	int rc;

	unlink(path);
	rc = pt_run(argv, out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 0, "pea trace --off-cpu --folded FILE -- /bin/sleep 0.3 exits 0");
	h = strstr(out, "off-CPU time by pid, comm and kernel stack, ");
	PT_OK(h && strstr(h, ", complete (in-kernel)\n"),
	      "--folded alone means kernel stacks: the header says so");
	/* "   OFF-CPU(us) COUNT PID  sleep", then its frames, 4 spaces in. */
	r = h ? strstr(h, "  sleep\n    finish_task_switch") : NULL;
	if (r) {
		const char *bol = r;

		while (bol > out && bol[-1] != '\n')
			bol--;
		us = atoll(bol);
	}
	PT_OK(r && strstr(r, "\n    do_nanosleep+") &&
	      strstr(r, "\n    do_nanosleep+") < strstr(r + 1, "\n    entry_SYSCALL") &&
	      us >= 250000 && us < 2000000,
	      "the sleep row (%lld us, 250 ms .. 2 s) has its stack under it, finish_task_switch first, do_nanosleep above the syscall entry",
	      us);
	memset(folded, 0, sizeof(folded));
	PT_OK(!pt_read_file(path, folded, sizeof(folded)) && folded[0],
	      "--folded %s written", path);
	for (fl = folded; *fl; fl += strcspn(fl, "\n") + (fl[strcspn(fl, "\n")] != 0)) {
		snprintf(l, sizeof(l), "%.*s", (int)strcspn(fl, "\n"), fl);
		if (!strncmp(l, "sleep;", 6) && strstr(l, ";do_nanosleep_[k];") &&
		    strrchr(l, ' ')) {
			w = atoll(strrchr(l, ' ') + 1);
			break;
		}
	}
	PT_OK(w == us, "the folded line sleep;...;do_nanosleep_[k];... weighs %lld us, the row's %lld",
	      w, us);
	pt_diag("%s", out);
	pt_diag("%s", folded);
	unlink(path);
}

static void test_usage(void)
{
	char *one[] = { PT_PEA, "trace", "--latency", "tp:sched:sched_switch",
			NULL };
	char *nolat[] = { PT_PEA, "trace", "--key", "pid",
			  "tp:sched:sched_switch", NULL };
	char *offp[] = { PT_PEA, "trace", "--off-cpu", "tp:sched:sched_switch",
			 NULL };
	char *offcomm[] = { PT_PEA, "trace", "--off-cpu", "--count-by", "comm",
			    NULL };
	char *offpid[] = { PT_PEA, "trace", "--off-cpu", "--pid", "1", "--",
			   "/bin/true", NULL };
	char *badkey[] = { PT_PEA, "trace", "--latency", "--key", "nosuch",
			   "tp:sched:sched_wakeup", "tp:sched:sched_switch", NULL };

	PT_EQ(pt_run(one, out, sizeof(out), err, sizeof(err), NULL, NULL), 2,
	      "--latency with one probe: usage error");
	PT_OK(strstr(err, "--latency takes two PROBEs, START and END (1 given)") != NULL,
	      "it says why: %s", err);
	PT_EQ(pt_run(nolat, out, sizeof(out), err, sizeof(err), NULL, NULL), 2,
	      "--key without --latency: usage error");
	PT_OK(strstr(err, "--key and --max-pending go with --latency") != NULL,
	      "it says why: %s", err);
	PT_EQ(pt_run(offp, out, sizeof(out), err, sizeof(err), NULL, NULL), 2,
	      "--off-cpu with a PROBE: usage error");
	PT_OK(strstr(err, "--off-cpu takes no PROBE") != NULL,
	      "it says why: %s", err);
	PT_EQ(pt_run(offcomm, out, sizeof(out), err, sizeof(err), NULL, NULL), 2,
	      "--off-cpu --count-by comm: usage error (kstack is its only key)");
	PT_OK(strstr(err, "--count-by kstack and --folded FILE, no other option") != NULL,
	      "it says why: %s", err);
	PT_EQ(pt_run(offpid, out, sizeof(out), err, sizeof(err), NULL, NULL), 2,
	      "--off-cpu --pid 1 -- CMD: usage error");
	PT_OK(strstr(err, "--off-cpu: --pid or -- CMD, not both") != NULL,
	      "it says why: %s", err);
	PT_EQ(pt_run(badkey, out, sizeof(out), err, sizeof(err), NULL, NULL), 2,
	      "--key nosuch: usage error");
	PT_OK(strstr(err, "--key 'nosuch': tp:sched:sched_wakeup has no field 'nosuch'") != NULL,
	      "it says why: %s", err);
}

int main(void)
{
	pt_setup(64);
	test_syscall();
	test_runqlat();
	test_overflow();
	test_offcpu();
	test_offcpu_beside();
	test_latency_beside();
	test_offcpu_kstack();
	test_offcpu_cmd();
	test_offcpu_folded();
	test_usage();
	return pt_done();
}
