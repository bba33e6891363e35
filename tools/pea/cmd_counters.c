// SPDX-License-Identifier: GPL-2.0
/*
 * pea: `pea stat -e` (also `pea counters`): count events on every chosen
 * CPU through pea counter fds and print per-CPU and total counts with
 * their scaling, like `perf stat -a -A`; or, for a command or a process,
 * count its own tasks (stat_task.c), like `perf stat -- CMD` / `-p PID`.
 *
 *   pea stat -e EVENT[,EVENT...] [-a | -C CPUS | -p PID] [--interval MS
 *             [--interval-count N]] [--json] [-- COMMAND [ARG...]]
 *
 * A command is counted per task unless -a or -C asks for CPUs (then it
 * only bounds the run); -p PID counts that process's threads. Without a
 * command it counts until SIGINT or SIGTERM (or the last interval). A count its PMU multiplexed is scaled by enabled / running
 * and shown with the percentage of time it ran; "<not counted>" means it
 * never ran; an event no PMU provides is reported with its errno and what
 * to try, and shown as "<not supported>".
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "libpea.h"
#include "pea_tool.h"
#include "counter_events.h"
#include "stat_task.h"

struct ctr {
	struct pea_ev ev;
	struct pea_counters *cs;	/* NULL: could not be opened */
	struct pea_counter_value *last;	/* per CPU, at the last print */
	struct task_ctr task;		/* task mode: nfds 0 if not opened */
	struct pea_counter_value task_last;
};

/*
 * struct stat_run - one pea stat -e run
 * @task: count tasks (a command's, or @pid's), not CPUs
 * @pid:  with @task: the process of -p, or the forked command
 */
struct stat_run {
	struct ctr *ctrs;
	int n;
	const char *cpus;
	bool json;
	bool task;
	pid_t pid;
	__u64 t0;
	__u64 t_last;
};

static volatile sig_atomic_t stop_requested;

/* "pea stat" or "pea counters": how the user called us, for messages. */
static const char *me = "pea stat";

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static const char *errno_name(int err)
{
	static const struct { int err; const char *name; } names[] = {
		{ ENOENT, "ENOENT" }, { EOPNOTSUPP, "EOPNOTSUPP" },
		{ EINVAL, "EINVAL" }, { EACCES, "EACCES" }, { EPERM, "EPERM" },
		{ ENODEV, "ENODEV" }, { ENOSPC, "ENOSPC" }, { EBUSY, "EBUSY" },
		{ E2BIG, "E2BIG" }, { EMFILE, "EMFILE" }, { ENOMEM, "ENOMEM" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].err == err)
			return names[i].name;
	return "error";
}

static const char *errno_hint(int err, int cpu)
{
	switch (err) {
	case ENOENT:
		if (cpu == -1)
			return "cannot open /dev/pea: is the pea module loaded?";
		return "no PMU on this system provides this event (a virtual machine without a virtual PMU has no hardware or hw-cache events); try a software event such as cpu-clock, task-clock, page-faults or context-switches, or a PMU listed in /sys/bus/event_source/devices";
	case EOPNOTSUPP:
		return "the PMU does not support this event or one of its modifiers; drop :u/:k or choose another event";
	case EINVAL:
		return "the PMU rejected this config or a modifier (a PMU that cannot separate user and kernel mode refuses :u and :k)";
	case EACCES:
	case EPERM:
		if (cpu == -2)
			return "not permitted: perf_event_open(2) on these tasks needs ptrace access to them and kernel.perf_event_paranoid <= 2 (Debian's default 3 needs CAP_PERFMON), and counting kernel mode (no :u) needs <= 1";
		return "not permitted: counting CPU-wide needs kernel.perf_event_paranoid <= 0 or CAP_PERFMON, and counting kernel mode (no :u) needs <= 1";
	case ENODEV:
		return "that CPU is offline; choose online CPUs with -C";
	case ENOSPC:
		return "no free hardware slot for this event on that CPU";
	default:
		return "see the README's Counters section";
	}
}

static void report_open_error(const struct pea_ev *ev, int err, int cpu)
{
	if (cpu >= 0)
		fprintf(stderr,
			"%s: cannot count '%s' (%s) on CPU %d: %s (%s): %s\n",
			me, ev->name, ev->desc, cpu, errno_name(err),
			strerror(err), errno_hint(err, cpu));
	else
		fprintf(stderr, "%s: cannot count '%s' (%s): %s (%s): %s\n",
			me, ev->name, ev->desc, errno_name(err), strerror(err),
			errno_hint(err, cpu));
}

/* 1234567 -> "1,234,567" */
static void fmt_thousands(char *buf, size_t len, __u64 v)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, (uint64_t)v);
	size_t o = 0;
	int i;

	for (i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
}

static void fmt_value(char *buf, size_t len, const struct ctr *c, __u64 v)
{
	char whole[40];

	if (!c->ev.clock) {
		fmt_thousands(buf, len, v);
		return;
	}
	fmt_thousands(whole, sizeof(whole), v / 1000000);
	snprintf(buf, len, "%s.%02u", whole,
		 (unsigned int)(v % 1000000 / 10000));
}

/* An event name as a JSON string (names come from the command line). */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* @cpu: a CPU, -1 for the CPUs' total, -2 for the tasks of task mode. */
static void print_line(const struct stat_run *r, const struct ctr *c,
		       int cpu, const struct pea_counter_value *d, double when)
{
	__u64 scaled = pea_counter_scale(d);
	double pct = d->enabled ? 100.0 * d->running / d->enabled : 0.0;
	char cpu_s[16], val[64];

	if (cpu >= 0)
		snprintf(cpu_s, sizeof(cpu_s), "%d", cpu);
	else
		snprintf(cpu_s, sizeof(cpu_s), "all");

	if (r->json) {
		printf("{");
		if (when >= 0)
			printf("\"interval\": %.9f, ", when);
		if (cpu == -2)
			printf("\"pid\": %d, \"event\": ", (int)r->pid);
		else
			printf("\"cpu\": \"%s\", \"event\": ", cpu_s);
		json_str(c->ev.name);
		printf(", \"counter-value\": %" PRIu64
		       ", \"scaled-value\": %" PRIu64 ", \"unit\": \"%s\", "
		       "\"time-enabled\": %" PRIu64 ", \"time-running\": %" PRIu64
		       ", \"pcnt-running\": %.2f, \"counted\": %s}\n",
		       (uint64_t)d->value, (uint64_t)scaled,
		       c->ev.clock ? "ns" : "", (uint64_t)d->enabled,
		       (uint64_t)d->running, pct, d->running ? "true" : "false");
		return;
	}
	if (when >= 0)
		printf("%15.9f ", when);
	if (cpu >= 0)
		snprintf(cpu_s, sizeof(cpu_s), "CPU%d", cpu);
	else if (cpu == -1)
		snprintf(cpu_s, sizeof(cpu_s), "total");
	else
		snprintf(cpu_s, sizeof(cpu_s), "tasks");
	if (!d->running) {
		printf("%-8s %22s %-5s %s\n", cpu_s, "<not counted>",
		       c->ev.clock ? "msec" : "", c->ev.name);
		return;
	}
	fmt_value(val, sizeof(val), c, scaled);
	printf("%-8s %22s %-5s %-28s", cpu_s, val, c->ev.clock ? "msec" : "",
	       c->ev.name);
	if (d->running < d->enabled)
		printf(" (%.2f%%, scaled from %" PRIu64 ")", pct,
		       (uint64_t)d->value);
	printf("\n");
}

static void print_unsupported(const struct stat_run *r, const struct ctr *c,
			      double when)
{
	if (r->json) {
		printf("{");
		if (when >= 0)
			printf("\"interval\": %.9f, ", when);
		printf("\"cpu\": \"all\", \"event\": ");
		json_str(c->ev.name);
		printf(", \"counter-value\": null, \"supported\": false}\n");
		return;
	}
	if (when >= 0)
		printf("%15.9f ", when);
	printf("%-8s %22s %-5s %s\n", "total", "<not supported>", "",
	       c->ev.name);
}

/* Print each counter's change since the last print (all of it at first). */
static void print_counts(struct stat_run *r, double when)
{
	int i;

	for (i = 0; i < r->n; i++) {
		struct ctr *c = &r->ctrs[i];
		struct pea_counter_value total = { 0 }, v, d;
		size_t k;

		if (r->task && c->task.nfds) {
			if (task_ctr_read(&c->task, &v))
				v = c->task_last;
			d.value = v.value - c->task_last.value;
			d.enabled = v.enabled - c->task_last.enabled;
			d.running = v.running - c->task_last.running;
			c->task_last = v;
			print_line(r, c, -2, &d, when);
			continue;
		}
		if (!c->cs) {
			print_unsupported(r, c, when);
			continue;
		}
		for (k = 0; k < pea_counters__cnt(c->cs); k++) {
			int cpu = pea_counters__cpu(c->cs, k);

			if (pea_counters__read(c->cs, k, &v))
				v = c->last[k];	/* a failed pinned counter */
			d.value = v.value - c->last[k].value;
			d.enabled = v.enabled - c->last[k].enabled;
			d.running = v.running - c->last[k].running;
			c->last[k] = v;
			print_line(r, c, cpu, &d, when);
			total.value += d.value;
			total.enabled += d.enabled;
			total.running += d.running;
		}
		print_line(r, c, -1, &total, when);
	}
	fflush(stdout);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pea stat -e EVENT[,EVENT...] [-a | -C CPUS | -p PID]\n"
		"                [--interval MS [--interval-count N]] [--json] [-- COMMAND [ARG...]]\n"
		"       (or: pea counters -e ...)\n"
		"\n"
		"With COMMAND, count its own tasks (every thread and child, from its exec),\n"
		"like perf stat -- COMMAND; with -p PID, that process's threads. With -a or\n"
		"-C, or with neither COMMAND nor -p, count on every CPU (or CPUS, e.g. 0-3,8)\n"
		"through pea counters and print per-CPU and total counts, like perf stat -a -A\n"
		"(COMMAND then only bounds the run). Without COMMAND, count until interrupted.\n"
		"\n"
		"  -e, --event EVENTS      perf event names: cycles, instructions, cache-misses,\n"
		"                          branch-misses, cpu-clock, task-clock, page-faults,\n"
		"                          context-switches, cpu-migrations, L1-dcache-load-misses,\n"
		"                          ..., rHEX, pmu/config=0x...,config1=0x.../, pmu/alias/;\n"
		"                          modifiers :u (user), :k (kernel), :D (pinned)\n"
		"  -a, --all-cpus          count on every online CPU, not the tasks\n"
		"  -C, --cpu CPUS          count on these CPUs (implies -a)\n"
		"  -p, --pid PID           count the threads of process PID (and their children)\n"
		"  -I, --interval MS       print the counts of every MS milliseconds\n"
		"      --interval-count N  stop after N intervals\n"
		"  -j, --json              one JSON object per line\n"
		"\n"
		"A multiplexed count is scaled by time enabled / time running and shown with\n"
		"the share of time it ran; <not counted>: it never ran.\n");
}

/* Task mode: each event on the command (@r->pid, forked) or process. */
static int open_task_counters(struct stat_run *r, bool cmd)
{
	int i, err, opened = 0;

	for (i = 0; i < r->n; i++) {
		struct ctr *c = &r->ctrs[i];

		err = cmd ? task_ctr_open_cmd(&c->task, &c->ev.attr, r->pid) :
			    task_ctr_open_pid(&c->task, &c->ev.attr, r->pid);
		if (err == -ESRCH) {
			fprintf(stderr, "%s: no process %d\n", me, (int)r->pid);
			return err;
		}
		if (err) {
			report_open_error(&c->ev, -err, -2);
			continue;
		}
		opened++;
	}
	return opened;
}

static int open_counters(struct stat_run *r)
{
	int i, opened = 0;

	for (i = 0; i < r->n; i++) {
		struct ctr *c = &r->ctrs[i];
		LIBPEA_OPTS(pea_counters_opts, opts);
		struct perf_event_attr attr = c->ev.attr;

		attr.disabled = 1;
		c->cs = pea_counters__new(&attr, r->cpus, &opts);
		if (!c->cs) {
			report_open_error(&c->ev, errno, opts.err_cpu);
			continue;
		}
		c->last = calloc(pea_counters__cnt(c->cs), sizeof(*c->last));
		if (!c->last) {
			perror(me);
			return -ENOMEM;
		}
		opened++;
	}
	return opened;
}

static void close_counters(struct stat_run *r)
{
	int i;

	for (i = 0; i < r->n; i++) {
		pea_counters__free(r->ctrs[i].cs);
		free(r->ctrs[i].last);
		task_ctr_close(&r->ctrs[i].task);
	}
	free(r->ctrs);
}

static void set_enabled(struct stat_run *r, bool on)
{
	int i;

	for (i = 0; i < r->n; i++) {
		if (r->ctrs[i].cs)
			(void)(on ? pea_counters__enable(r->ctrs[i].cs) :
			       pea_counters__disable(r->ctrs[i].cs));
		task_ctr_enable(&r->ctrs[i].task, on);
	}
}

static void sleep_until(__u64 deadline)
{
	struct timespec ts = {
		.tv_sec = deadline / 1000000000ULL,
		.tv_nsec = deadline % 1000000000ULL,
	};

	/* A signal ends the sleep early: the caller checks. */
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

int cmd_stat_counters(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "pid", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'I' },
		{ "interval-count", required_argument, NULL, 'N' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct stat_run r = { 0 };
	struct pea_ev *evs = NULL;
	const char *events = NULL;
	long interval_ms = 0, count = 0, done = 0;
	int opt, status = 0, ret = 0, opened, i;
	bool child_done = false, all_cpus = false;
	pid_t child = -1;
	long pid = 0;
	int go_fd = -1;
	char err[512];
	char *end;

	me = argc > 0 && !strcmp(argv[0], "counters") ? "pea counters" :
	     "pea stat";
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+e:C:ap:I:jh", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'e':
			events = optarg;
			break;
		case 'C':
			r.cpus = optarg;
			all_cpus = true;
			break;
		case 'a':
			all_cpus = true;
			break;
		case 'p':
			pid = strtol(optarg, &end, 10);
			if (*end || pid <= 0 || pid > INT32_MAX) {
				fprintf(stderr, "%s: bad --pid '%s'\n", me, optarg);
				return 2;
			}
			break;
		case 'I':
			interval_ms = strtol(optarg, &end, 10);
			if (*end || interval_ms < 10) {
				fprintf(stderr, "%s: --interval needs at least 10 (ms)\n", me);
				return 2;
			}
			break;
		case 'N':
			count = strtol(optarg, &end, 10);
			if (*end || count < 1) {
				fprintf(stderr, "%s: bad --interval-count\n", me);
				return 2;
			}
			break;
		case 'j':
			r.json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!events) {
		fprintf(stderr, "%s: -e EVENT is required\n", me);
		usage(stderr);
		return 2;
	}
	if (pid && all_cpus) {
		fprintf(stderr, "%s: -p counts a process's tasks, -a and -C count CPUs: choose one\n", me);
		return 2;
	}
	r.task = !all_cpus && (pid || optind < argc);
	if (count && !interval_ms) {
		fprintf(stderr, "%s: --interval-count needs --interval\n", me);
		return 2;
	}
	if (pea_ev_parse_list(events, &evs, &r.n, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", me, err);
		return 2;
	}
	r.ctrs = calloc(r.n, sizeof(*r.ctrs));
	if (!r.ctrs) {
		free(evs);
		return 1;
	}
	for (i = 0; i < r.n; i++)
		r.ctrs[i].ev = evs[i];
	free(evs);

	/* Task mode needs no pea device: its events are Linux's own. */
	i = r.task ? -1 : pea_open_dev();
	if (!r.task && i < 0) {
		fprintf(stderr, "%s: cannot open %s: %s: is the pea module loaded?\n",
			me, PEA_DEVICE_PATH, strerror(-i));
		close_counters(&r);
		return 1;
	}
	if (i >= 0)
		close(i);

	if (r.task && !pid) {
		/* Stopped before its exec until its events are open. */
		child = task_cmd_fork(argv + optind, &go_fd, me);
		if (child < 0) {
			perror(me);
			close_counters(&r);
			return 1;
		}
		r.pid = child;
	} else if (r.task) {
		r.pid = (pid_t)pid;
	}
	opened = r.task ? open_task_counters(&r, !pid) : open_counters(&r);
	if (opened <= 0) {
		if (go_fd >= 0)
			close(go_fd);	/* the child exits unrun */
		if (child > 0)
			waitpid(child, &status, 0);
		close_counters(&r);
		return 1;
	}

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* A command's events start at its exec (enable_on_exec). */
	if (go_fd < 0)
		set_enabled(&r, true);
	r.t0 = r.t_last = mono_ns();
	if (go_fd >= 0) {
		if (task_cmd_go(go_fd)) {
			perror(me);
			ret = 1;
			goto out;
		}
	} else if (optind < argc) {
		/* CPU-wide: the command only bounds the run; it goes at once. */
		child = task_cmd_fork(argv + optind, &go_fd, me);
		if (child < 0 || task_cmd_go(go_fd)) {
			perror(me);
			ret = 1;
			goto out;
		}
	}

	while (!stop_requested && !child_done) {
		if (interval_ms) {
			__u64 deadline = r.t0 + (__u64)(done + 1) *
					 interval_ms * 1000000ULL;

			sleep_until(deadline);
			if (child > 0 && waitpid(child, &status, WNOHANG) == child)
				child_done = true;
			if (mono_ns() < deadline)
				continue;	/* interrupted */
			print_counts(&r, (double)(mono_ns() - r.t0) / 1e9);
			if (count && ++done >= count)
				break;
			if (!count)
				done++;
		} else if (child > 0) {
			if (waitpid(child, &status, 0) == child)
				child_done = true;
		} else {
			sleep_until(mono_ns() + 100000000ULL);
		}
	}
	set_enabled(&r, false);

	if (!interval_ms) {
		if (!r.json && r.task && !pid) {
			printf("\n Performance counter stats for '");
			for (i = optind; i < argc; i++)
				printf("%s%s", i > optind ? " " : "", argv[i]);
			printf("':\n\n");
		} else if (!r.json && r.task) {
			printf("\n Performance counter stats for process id '%ld':\n\n",
			       pid);
		} else if (!r.json) {
			printf("\n Performance counter stats for 'system wide' (CPUs %s):\n\n",
			       r.cpus ? r.cpus : "all online");
		}
		print_counts(&r, -1);
		if (r.json)
			printf("{\"elapsed-ns\": %" PRIu64 "}\n",
			       (uint64_t)(mono_ns() - r.t0));
		else
			printf("\n %15.9f seconds time elapsed\n\n",
			       (double)(mono_ns() - r.t0) / 1e9);
	}
	if (child > 0 && !child_done) {
		kill(child, SIGTERM);
		waitpid(child, &status, 0);
		child_done = true;
	}
	if (child > 0 && child_done)
		ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
out:
	close_counters(&r);
	return ret;
}
