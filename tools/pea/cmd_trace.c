// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace: attach kprobes, kretprobes, uprobes, tracepoints or netfilter
 * hooks (netfilter.c) to a pea map and print their hits.
 *
 * This file is the session; the command line is read in trace_opts.c
 * (the help text is trace_help.c) and what it prints is trace_print.c.
 *
 * Set-up order: a map with one slot per possible CPU, one ring per online
 * CPU through libpea, then the probes, so that no hit finds an empty slot.
 * Probe i is attached with producer id i + 1, which every record it writes
 * carries: on_sample() finds the probe by it and decodes the record as
 * that probe's kind (struct probe_kind; tracepoint and netfilter records
 * say so in their flags, which must agree).
 * The rings are drained every 100 ms (or sooner when one passes a quarter
 * full). They are read with PEA_BUFFER_FLAG_ORDERED, so events come in
 * exact time order across CPUs; with --unordered they come in the raw
 * per-CPU order: each drain reads the rings one after the other, each
 * ring in the order it was written. At the end (Ctrl-C, SIGTERM,
 * --duration, --count, or stdout closed) the probes are detached first,
 * the rings drained, and a per-CPU and per-probe summary printed.
 *
 * Streams: events go to stdout. Without --json, the summary, lost-record
 * notices and the live rate line go to stderr. With --json, stdout carries
 * only JSON objects, one per line, each with a "type": "event" for hits,
 * "lost" when records were dropped, and a last "summary"; stderr keeps
 * only the "tracing" banner, errors and the live rate line (on a terminal).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include "libpea.h"
#include "net_url.h"
#include "probe_kind.h"
#include "stat_task.h"
#include "trace.h"
#include "usym.h"
#include "walltime.h"

#define TICK_MS		100
/*
 * Events decoded but not yet delivered: past this many, a drain delivers
 * them at once, so the batch stays below about 2 MiB however fast records
 * come (a flight recorder's snapshot is bounded by its rings, and comes
 * ordered).
 */
#define BATCH_MAX	4096
/* Record bytes in a ring beyond the raw payload: header and raw size. */
#define RECORD_OVERHEAD	12
/* --snapshot-on: its probe's counter is looked at this often... */
#define SNAP_POLL_NS	50000000ULL
/* ...and it takes at most one snapshot a second. */
#define SNAP_MIN_GAP_NS	1000000000ULL

static volatile sig_atomic_t trace_stop, trace_snap, trace_child;

static void on_signal(int sig)
{
	(void)sig;
	trace_stop = 1;
}

/*
 * SIGCHLD: -- CMD ended, or one of its descendants reparented to pea (a
 * child subreaper); the loops reap them.
 */
static void on_child(int sig)
{
	(void)sig;
	trace_child = 1;
}

/* SIGUSR1 with --flight-recorder: a snapshot now, and go on. */
static void on_snapshot(int sig)
{
	(void)sig;
	trace_snap = 1;
}

/* ---- callbacks ---- */

/*
 * Which probe wrote the record at @data: its id is the probe's index + 1,
 * and its flags must say the record has the layout of that probe's kind.
 * NULL if not.
 */
static struct trace_probe *record_probe(struct tracer *t, const void *data,
					__u32 size)
{
	const unsigned char *p = data;
	struct trace_probe *tp;
	__u16 flags;
	__u64 id;

	if (size < offsetof(struct pea_probe_record, flags) + sizeof(flags))
		return NULL;
	memcpy(&id, p + offsetof(struct pea_probe_record, id), sizeof(id));
	memcpy(&flags, p + offsetof(struct pea_probe_record, flags),
	       sizeof(flags));
	if (!id || id > t->o.nprobes)
		return NULL;
	tp = &t->o.probes[id - 1];
	if (!probe_kind_record(tp->spec.kind, flags))
		return NULL;
	return tp;
}

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct tracer *t = ctx;
	struct trace_event *ev;
	struct trace_probe *p;
	int err;

	if (t->n >= BATCH_MAX && !t->o.flight)
		flush_batch(t);
	t->received++;
	if (cpu >= 0 && cpu < t->ncpus) {
		t->cpus[cpu].records++;
		t->cpus[cpu].bytes += size + RECORD_OVERHEAD +
			(t->o.unordered ? 0 : 8);	/* TIME */
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct trace_event *b = realloc(t->batch, cap * sizeof(*b));

		if (!b) {
			t->oom = true;
			return;
		}
		t->batch = b;
		t->cap = cap;
	}
	ev = &t->batch[t->n];
	ev->raw = NULL;
	ev->kstack = NULL;
	ev->kstack_nr = 0;
	ev->ustack = NULL;
	ev->ustack_nr = 0;
	ev->fetch = NULL;
	p = record_probe(t, data, size);
	if (!p) {
		t->malformed++;
		return;
	}
	err = p->spec.kind->decode(data, size, ev);
	if (err == -ENOMEM) {
		t->oom = true;
		return;
	}
	if (err) {
		t->malformed++;
		return;
	}
	if (!t->o.unordered) {
		struct pea_sample_info info;

		/* The time the stream is ordered on: when it was written. */
		if (!pea_sample_info(data, PERF_SAMPLE_TIME, &info))
			ev->rec.time_ns = info.time;
	}
	ev->probe = (int)(p - t->o.probes);
	p->records++;
	ev->ring = cpu;
	ev->seq = t->seq++;
	t->n++;
}

static void on_lost(void *ctx, int cpu, __u64 cnt)
{
	struct tracer *t = ctx;

	t->lost += cnt;
	if (cpu >= 0 && cpu < t->ncpus)
		t->cpus[cpu].lost_new += cnt;
}

/* ---- set-up and the loop ---- */

static int setup_signals(void)
{
	struct sigaction sa;

	/*
	 * SA_RESTART: a write to a full stdout pipe that a signal cut
	 * before it wrote anything failed with EINTR, which stdio keeps as
	 * an error and pea took for a reader gone: the tables of a Ctrl-C
	 * were never printed, and pea exited 0 (test_tool_kagg, the debug
	 * kernel). The wait still ends: epoll_wait(), poll() and the sleeps
	 * are never restarted (signal(7)).
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGHUP, &sa, NULL))
		return -errno;
	sa.sa_handler = on_child;
	if (sigaction(SIGCHLD, &sa, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);	/* a closed stdout shows as EPIPE */
	return 0;
}

/*
 * -- CMD: whether it ended (reaped, its status kept); the session then
 * ends too, as the loops check after each wait. The orphans of its tree,
 * which pea adopted, are reaped as they end.
 */
static bool child_ended(struct tracer *t)
{
	if (!t->child || t->child_done)
		return t->child_done;
	if (!trace_child)
		return false;
	trace_child = 0;
	if (task_cmd_reap(t->child, &t->child_status))
		t->child_done = true;
	return t->child_done;
}

/*
 * Room for a link fd per probe (a glob may make hundreds) beside the
 * rings' and the output's: the soft RLIMIT_NOFILE raised towards the
 * hard one when it is short, as far as it goes.
 */
static void raise_nofile(const struct tracer *t)
{
	rlim_t want = t->o.nprobes + 2 * (rlim_t)t->ncpus + 64;
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) || r.rlim_cur >= want)
		return;
	r.rlim_cur = r.rlim_max < want ? r.rlim_max : want;
	setrlimit(RLIMIT_NOFILE, &r);
}

/*
 * Attach probe @p, whose records carry @id, on the map (--latency's END
 * on a map of its own when trace_setup() made one); the link fd or
 * -errno.
 */
static int probe_setup(struct tracer *t, struct trace_probe *p, __u64 id)
{
	int map_fd = id == 2 && t->end_map_fd >= 0 ? t->end_map_fd :
						     t->map_fd;

	return p->spec.kind->attach(map_fd, &p->spec, &p->o, id);
}

/*
 * A glob's matches from probe @i on (a kprobe:GLOB's), attached as one
 * link where the kind can (one fprobe for all of them, rather than a
 * kprobe each): @i's link_fd and fprobe_n, the others' link_fd left -1.
 * They cannot share one when the kernel keeps a table per link (in-kernel
 * --count-by, --hist) or a match is the --snapshot-on probe. stderr says
 * which way they went.
 */
static void probe_group(struct tracer *t, unsigned int i)
{
	struct trace_probe *p = &t->o.probes[i];
	struct probe_spec *specs[TRACE_MAX_PROBES];
	unsigned int n = 0, j;
	char why[512];
	int fd;

	if (p->glob_first != i + 1 || !p->spec.kind->attach_multi)
		return;
	for (j = i; j < t->o.nprobes && t->o.probes[j].glob_first == i + 1;
	     j++) {
		if (&t->o.probes[j] == t->o.snapshot_on)
			return;
		specs[n++] = &t->o.probes[j].spec;
	}
	if (n < 2)
		return;
	if (t->o.no_fprobe) {
		fprintf(stderr, "pea: '%s': one kprobe per function, %u links (--no-fprobe)\n",
			p->glob, n);
		return;
	}
	if (t->agg && !t->o.flight && !t->o.count) {
		fprintf(stderr, "pea: '%s': one kprobe per function, %u links (in-kernel tables are one per link)\n",
			p->glob, n);
		return;
	}
	fd = p->spec.kind->attach_multi(t->map_fd, specs, n, &p->o, i + 1,
					why, sizeof(why));
	if (fd >= 0) {
		p->link_fd = fd;
		p->fprobe_n = n;
		fprintf(stderr, "pea: '%s': one fprobe link for %u functions\n",
			p->glob, n);
	} else if (fd == -EOPNOTSUPP) {
		fprintf(stderr, "pea: '%s': one kprobe per function, %u links (this kernel has no fprobe)\n",
			p->glob, n);
	} else if (fd == -ENOTTY) {
		fprintf(stderr, "pea: '%s': one kprobe per function, %u links (the loaded pea module has no fprobe links)\n",
			p->glob, n);
	} else {
		fprintf(stderr, "pea: '%s': one kprobe per function, %u links (%s)\n",
			p->glob, n, why);
	}
}

/* Whether some probe is filtered on a process (--pid, -- CMD). */
static bool some_pid(const struct tracer *t)
{
	unsigned int i;

	for (i = 0; i < t->o.nprobes; i++)
		if (t->o.probes[i].o.pid)
			return true;
	return false;
}

static int trace_setup(struct tracer *t)
{
	LIBPEA_OPTS(pea_buffer_opts, opts);
	char name[PEA_OBJ_NAME_LEN];
	long page = sysconf(_SC_PAGESIZE);
	unsigned int i;
	int fd;

	snprintf(name, sizeof(name), "trace_%d", (int)getpid());
	fd = pea_map_create(name, t->ncpus, 0);
	if (fd < 0) {
		tool_explain_dev_error("creating a map", fd);
		return PEA_EXIT_ERR;
	}
	t->map_fd = fd;
	/*
	 * The tool's own reads and writes stay out of what it traces; not
	 * with --latency, whose pairs (a wakeup, a switch) have pea as the
	 * other side as often as any task, unless a --pid says whose: pea
	 * may be below that process (its shell's), not what is asked for.
	 */
	if (!t->o.include_self && (!t->o.agg.latency || some_pid(t))) {
		__s32 self = 0;

		if (!ioctl(fd, PEA_MAP_IOC_EXCLUDE_TGID, &self)) {
			/*
			 * The exclusion looks at the running task. A
			 * --latency END keyed by another task's id
			 * (sched_switch's next_pid) or a pointer ends a
			 * period that is not pea's even when pea is the one
			 * running: left out, it would leave its START kept,
			 * and the period lost uncounted. Such an END goes
			 * on a map that leaves nothing out when it writes
			 * no records (no ring there: its hits before its
			 * table exists count as errors). A START left out
			 * shows, as its END unpaired.
			 */
			if (!show_events(t) && !t->o.output &&
			    !t->o.snapshot_on && agg_latency_end_apart(t->agg)) {
				snprintf(name, sizeof(name), "trend_%d",
					 (int)getpid());
				t->end_map_fd = pea_map_create(name, t->ncpus,
							       0);
				if (t->end_map_fd < 0) {
					tool_explain_dev_error("creating a map",
							       t->end_map_fd);
					return PEA_EXIT_ERR;
				}
			}
		} else if (errno == ENOTTY) {
			fprintf(stderr, "pea: the loaded pea module is older than this tool: pea's own events are traced too (reload the module)\n");
		} else {
			tool_explain_dev_error("excluding the tool's process",
					       -errno);
			return PEA_EXIT_ERR;
		}
	}

	if (t->o.flight)
		/*
		 * write_backward rings, read only by a snapshot at the end,
		 * ordered across CPUs from its horizon on.
		 */
		opts.flags = PEA_BUFFER_FLAG_OVERWRITE | PEA_BUFFER_FLAG_ORDERED;
	else
		/* Wake the reader at a quarter full; the tick reads the rest. */
		opts.wakeup_watermark = (__u32)(t->o.pages * page / 4);
	if (!t->o.flight && !t->o.unordered)
		opts.flags = PEA_BUFFER_FLAG_ORDERED;
	t->pb = pea_buffer__new(t->map_fd, t->o.pages, on_sample, on_lost, t,
				&opts);
	if (!t->pb) {
		tool_explain_dev_error("setting up the rings", -errno);
		return PEA_EXIT_ERR;
	}

	raise_nofile(t);
	t->t0 = tool_now_ns();
	/*
	 * Records carry the probe's index + 1: id 0 would be the link's id.
	 * A glob's matches in one fprobe link carry the same ids.
	 */
	for (i = 0; i < t->o.nprobes; i++) {
		struct trace_probe *p = &t->o.probes[i];

		if (p->glob_first && p->glob_first != i + 1 &&
		    t->o.probes[p->glob_first - 1].fprobe_n)
			continue;	/* in its glob's fprobe link */
		probe_group(t, i);
		if (p->fprobe_n)
			continue;	/* no table: probe_group() */
		fd = probe_setup(t, p, i + 1);
		if (fd < 0)
			return PEA_EXIT_ERR;
		p->link_fd = fd;
		/*
		 * What the kernel can count, it counts: every hit, whatever
		 * the rings lose. Not with --count (the tables hold the
		 * events delivered) nor a flight recorder's snapshot.
		 */
		if (t->agg && !t->o.flight && !t->o.count) {
			int err = agg_kernel(t->agg, (int)i, fd,
					     !show_events(t) && !t->o.output &&
					     !t->o.snapshot_on);

			/*
			 * Only the kernel pairs --latency's two probes; a
			 * probe of a shared table said why it cannot join.
			 */
			if (err && agg_kernel_needed(t->agg, (int)i)) {
				if (t->o.agg.latency)
					tool_err("--latency: %s of %s: %s",
						 i ? "the histogram" :
						 "the pairing table",
						 t->o.probes[i].spec.text,
						 strerror(-err));
				return PEA_EXIT_ERR;
			}
		}
	}
	return PEA_EXIT_OK;
}

/*
 * The writer of snapshot @n: --output PATH gets PATH.N beside it, in the
 * same format; --output net:// a snapshot session SESSION.N of its own
 * on the same relayd (trace_snapshot_open()). NULL without --output.
 */
static struct trace_writer *snap_writer(struct tracer *t, unsigned int n,
					char *where, size_t len)
{
	struct trace_out_opts oo;
	struct trace_writer *w;
	char msg[512];

	if (!t->o.output)
		return NULL;
	oo = t->out_oo;
	w = trace_snapshot_open(&oo, n, where, len, t->out_probes,
				t->o.nprobes, t->ncpus, msg, sizeof(msg));
	if (!w)
		tool_err("snapshot %u: --output %s: %s", n, where, msg);
	return w;
}

/*
 * SIGUSR1 during a flight recorder: the rings' ordered snapshot now,
 * printed (and written to PATH.N with --output), then a line that states
 * it and its horizon; the rings go on recording.
 */
static void flight_snapshot(struct tracer *t, const char *trigger)
{
	struct trace_writer *main_out = t->out, *w;
	bool main_failed = t->out_failed;
	unsigned int n = ++t->snap_no;
	__u64 shown = t->shown, h, taken = tool_now_ns();
	char path[4096] = "", msg[512];
	int ret;

	/* The rate limit counts from the time the snapshot states. */
	if (trigger)
		t->snap_on_last = taken;
	w = snap_writer(t, n, path, sizeof(path));
	ret = pea_buffer__snapshot(t->pb);
	if (ret < 0 && ret != -EINVAL)
		tool_err("snapshot %u: reading the rings: %s", n,
			 strerror(-ret));
	h = pea_buffer__snapshot_horizon(t->pb);
	t->out = w;
	t->out_failed = false;
	flush_batch(t);
	if (w && trace_writer_close(w, msg, sizeof(msg)) && !t->out_failed)
		tool_err("snapshot %u: writing %s: %s", n, path,
			 msg[0] ? msg : "error");
	t->out = main_out;
	t->out_failed = main_failed;
	shown = t->shown - shown;
	if (t->o.json && !t->out_closed) {
		printf("{\"type\":\"snapshot\",\"snapshot\":%u,\"time_ns\":%llu,\"events\":%llu,\"horizon_ns\":%llu",
		       n, (unsigned long long)taken, (unsigned long long)shown,
		       (unsigned long long)h);
		if (w) {
			fputs(",\"output\":", stdout);
			json_put_str(stdout, path, strlen(path));
		}
		if (trigger) {
			fputs(",\"trigger\":", stdout);
			json_put_str(stdout, trigger, strlen(trigger));
		}
		fputs("}\n", stdout);
		if (fflush(stdout) || ferror(stdout))
			t->out_closed = true;
	} else if (!t->o.json) {
		fprintf(stderr, "pea: snapshot %u: %llu events", n,
			(unsigned long long)shown);
		if (h)
			fprintf(stderr, ", every CPU's records from %.6f s on (the horizon)",
				h > t->t0 ? (h - t->t0) / 1e9 : 0.0);
		else
			fputs(", no ring wrapped: every record", stderr);
		if (w)
			fprintf(stderr, "; written to %s", path);
		if (trigger)
			fprintf(stderr, "; %s fired", trigger);
		fputc('\n', stderr);
	}
}

/*
 * --snapshot-on PROBE: whether that probe wrote a record since the last
 * look (its link's written counter grew) and the last snapshot it took
 * (its time_ns, set by flight_snapshot()) is SNAP_MIN_GAP_NS old; fires
 * in between wait for the next look after it.
 */
static bool snap_on_fired(struct tracer *t, __u64 now)
{
	struct trace_probe *p = t->o.snapshot_on;
	struct pea_link_info li;

	if (!p || p->link_fd < 0 ||
	    (t->snap_on_last && now < t->snap_on_last + SNAP_MIN_GAP_NS))
		return false;
	memset(&li, 0, sizeof(li));
	if (ioctl(p->link_fd, PEA_LINK_IOC_INFO, &li) ||
	    li.written == t->snap_on_written)
		return false;
	t->snap_on_written = li.written;
	return true;
}

/*
 * A flight recorder only waits: the rings are read at the end, at each
 * SIGUSR1, and when the --snapshot-on probe fires (flight_snapshot()). The stop signals and SIGUSR1 are blocked
 * but inside ppoll(): one that came between the check of trace_stop and
 * the wait would otherwise be lost, and poll() without a timeout would
 * never return.
 */
static int flight_wait(struct tracer *t, __u64 deadline)
{
	sigset_t stop, old;

	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigaddset(&stop, SIGUSR1);
	sigaddset(&stop, SIGCHLD);
	sigprocmask(SIG_BLOCK, &stop, &old);
	while (!trace_stop && !child_ended(t)) {
		struct timespec ts, *tsp = NULL;
		__u64 now = tool_now_ns(), wait = ~0ULL;

		if (trace_snap) {
			trace_snap = 0;
			flight_snapshot(t, NULL);
			continue;
		}
		if (snap_on_fired(t, now)) {
			flight_snapshot(t, t->o.snapshot_on->spec.text);
			continue;
		}
		if (deadline) {
			if (now >= deadline)
				break;
			wait = deadline - now;
		}
		if (t->o.snapshot_on && wait > SNAP_POLL_NS)
			wait = SNAP_POLL_NS;
		if (wait != ~0ULL) {
			ts.tv_sec = wait / 1000000000ULL;
			ts.tv_nsec = wait % 1000000000ULL;
			tsp = &ts;
		}
		ppoll(NULL, 0, tsp, &old);	/* a signal ends it early */
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return PEA_EXIT_OK;
}

static int trace_loop(struct tracer *t)
{
	__u64 deadline = t->o.duration ?
		t->t0 + (__u64)(t->o.duration * 1e9) : 0;
	bool warned = false;
	int ret;

	if (t->o.flight)
		return flight_wait(t, deadline);
	while (!trace_stop && !t->out_closed && !count_reached(t) &&
	       !child_ended(t)) {
		int timeout = TICK_MS;

		if (deadline) {
			__u64 now = tool_now_ns();

			if (now >= deadline)
				break;
			if (deadline - now < TICK_MS * 1000000ULL)
				timeout = (deadline - now + 999999) / 1000000;
		}
		ret = pea_buffer__poll(t->pb, timeout);
		if (ret >= 0 || ret == -EINTR)
			ret = pea_buffer__consume(t->pb);
		if (ret == -EINVAL && !warned) {
			/* The reader skipped what it could not parse. */
			tool_err("warning: a ring held a malformed record; skipped");
			warned = true;
		} else if (ret < 0 && ret != -EINTR && ret != -EINVAL) {
			tool_err("reading the rings: %s", strerror(-ret));
			return PEA_EXIT_ERR;
		}
		if (t->oom) {
			tool_err("out of memory");
			return PEA_EXIT_ERR;
		}
		flush_batch(t);
		out_tick(t);
		print_tables(t, false);
		live_update(t);
	}
	return PEA_EXIT_OK;
}

/* A probe's counters, then its link closed: the probe detached. */
static void probe_detach(struct trace_probe *p)
{
	memset(&p->li, 0, sizeof(p->li));
	p->have_li = !ioctl(p->link_fd, PEA_LINK_IOC_INFO, &p->li);
	close(p->link_fd);
	p->link_fd = -1;
}

/*
 * Closing a tracepoint, kprobe or fprobe link waits for the kernel's grace
 * periods (perf's tracepoint unregister, unregister_kprobe()), each tens
 * of milliseconds or more: a glob's hundreds of probes detached one after
 * another kept the tool from its last records and its exit for tens of
 * seconds (45 s for tp:syscalls:sys_enter_* on PREEMPT_RT in the guest).
 * Without tables, probes are detached from up to DETACHERS threads, each
 * probe's counters read just before its own close, as in one thread; the
 * closes wait on the same grace periods.
 */
#define DETACHERS	16

struct detach_job {
	struct tracer *t;
	unsigned int next;
};

static void *detacher(void *arg)
{
	struct detach_job *j = arg;
	unsigned int i;

	while ((i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) <
	       j->t->o.nprobes)
		if (j->t->o.probes[i].link_fd >= 0)
			probe_detach(&j->t->o.probes[i]);
	return NULL;
}

/* Detach every probe, keeping its counters. */
static void trace_detach(struct tracer *t)
{
	struct detach_job j = { t, 0 };
	pthread_t th[DETACHERS];
	unsigned int i, n = 0;

	/*
	 * With tables, one by one, in order: a table is read as its probe
	 * (the first of those that share it) is detached.
	 */
	if (t->agg) {
		for (i = 0; i < t->o.nprobes; i++) {
			if (t->o.probes[i].link_fd < 0)
				continue;
			/* its table goes with it */
			agg_kernel_detach(t->agg, (int)i);
			probe_detach(&t->o.probes[i]);
		}
		return;
	}
	while (n < DETACHERS && n + 1 < t->o.nprobes &&
	       !pthread_create(&th[n], NULL, detacher, &j))
		n++;
	detacher(&j);
	while (n)
		pthread_join(th[--n], NULL);
}

static void trace_free_probes(struct trace_opts *o)
{
	unsigned int i;

	ksyms_free(o->ksyms);
	o->ksyms = NULL;
	usyms_free(o->usyms);
	o->usyms = NULL;
	if (!o->probes)
		return;
	for (i = 0; i < o->nprobes; i++) {
		struct probe_spec *s = &o->probes[i].spec;

		if (s->kind && s->kind->release)
			s->kind->release(s);
		free(o->probes[i].glob_text);
	}
	free(o->probes);
	o->probes = NULL;
}

/*
 * -- CMD after the probes are gone: one still running (the session ended
 * first: --duration, --count, Ctrl-C, an error) gets SIGTERM; its end is
 * said on stderr.
 */
static void trace_cmd_end(struct tracer *t)
{
	if (!t->child)
		return;
	if (t->go_fd >= 0)	/* never let go: it exits at once */
		close(t->go_fd);
	t->go_fd = -1;
	if (!t->child_done) {
		if (waitpid(t->child, &t->child_status, WNOHANG) != t->child) {
			kill(t->child, SIGTERM);
			waitpid(t->child, &t->child_status, 0);
		}
		t->child_done = true;
	}
	if (WIFEXITED(t->child_status))
		fprintf(stderr, "pea: %s (pid %d) exited with status %d\n",
			t->o.cmd[0], (int)t->child,
			WEXITSTATUS(t->child_status));
	else if (WIFSIGNALED(t->child_status))
		fprintf(stderr, "pea: %s (pid %d) was killed by signal %d\n",
			t->o.cmd[0], (int)t->child,
			WTERMSIG(t->child_status));
}

/* Detach, read what is left, print the summary; returns the exit status. */
static int trace_teardown(struct tracer *t, int rc)
{
	trace_detach(t);
	trace_cmd_end(t);
	t->t_end = tool_now_ns();
	if (t->pb) {
		/* Whatever the probes wrote before they went away. */
		if (rc == PEA_EXIT_OK && !t->oom) {
			int ret = t->o.flight ? pea_buffer__snapshot(t->pb) :
						pea_buffer__consume(t->pb);

			if (ret < 0 && ret != -EINVAL) {
				tool_err("reading the rings: %s", strerror(-ret));
				rc = PEA_EXIT_ERR;
			}
			t->final = true;
			flush_batch(t);
		}
		live_clear(t);
		if (rc == PEA_EXIT_OK) {
			print_tables(t, true);
			print_summary(t);
			rc = agg_write_folded(t->agg);
		}
		pea_buffer__free(t->pb);
	}
	if (t->out) {
		char msg[512];
		int err = trace_writer_close(t->out, msg, sizeof(msg));

		if (err && !t->out_failed && msg[0])
			tool_err("--output %s: %s", t->o.output, msg);
		else if (err && !t->out_failed)
			tool_err("writing %s: %s", t->o.output, strerror(-err));
		if ((err || t->out_failed) && rc == PEA_EXIT_OK)
			rc = PEA_EXIT_ERR;
		t->out = NULL;
	}
	if (t->map_fd >= 0)
		close(t->map_fd);
	if (t->end_map_fd >= 0)
		close(t->end_map_fd);
	free(t->batch);
	free(t->cpus);
	agg_free(t->agg);
	trace_free_probes(&t->o);
	return rc;
}

/* How probe @p prints; @probe_col: the PROBE column's width (0: none). */
static void probe_fmt(struct tracer *t, struct trace_probe *p, int probe_col)
{
	p->fmt.json = t->o.json;
	p->fmt.args = p->o.args;
	p->fmt.retprobe = p->spec.retprobe;
	p->fmt.capture_mode = p->o.capture_mode;
	p->fmt.probe = p->spec.text;
	p->fmt.kind = p->spec.kind;
	p->fmt.kstack = p->o.kstack;
	p->fmt.kstack_depth = p->o.kstack;
	p->fmt.ksyms = t->o.ksyms;
	p->fmt.usyms = t->o.usyms;
	p->fmt.ustack = p->o.ustack;
	p->fmt.probe_col = probe_col;
	p->fmt.time_mode = t->o.time_mode;
	p->fmt.wall_off_ns = t->wall_off;
}

/*
 * What --output asks for; for an lttng-relayd, the session and host names
 * in effect: --session or "pea-PID", --hostname or this machine's name.
 */
static void out_opts(struct tracer *t, struct trace_out_opts *oo)
{
	struct utsname u;

	memset(oo, 0, sizeof(*oo));
	oo->format = t->o.format;
	oo->path = t->o.output;
	oo->ordered = !t->o.unordered;
	oo->wall_offset_ns = t->wall_off;
	if (!net_url_is(t->o.output))
		return;
	if (t->o.session)
		snprintf(t->out_session, sizeof(t->out_session), "%s",
			 t->o.session);
	else
		snprintf(t->out_session, sizeof(t->out_session), "pea-%d",
			 (int)getpid());
	if (t->o.hostname)
		snprintf(t->out_host, sizeof(t->out_host), "%s",
			 t->o.hostname);
	else if (!uname(&u))	/* at most TRACE_HOSTNAME_MAX of it */
		snprintf(t->out_host, sizeof(t->out_host), "%.*s",
			 TRACE_HOSTNAME_MAX, u.nodename);
	else
		snprintf(t->out_host, sizeof(t->out_host), "unknown");
	oo->session = t->out_session;
	oo->hostname = t->out_host;
	oo->live_interval_ns = (__u64)((t->o.live_interval ?
					t->o.live_interval :
					TRACE_LIVE_INTERVAL) * 1e9);
	oo->start_ns = tool_now_ns();	/* before any probe is attached */
	oo->timeout_ms = TRACE_RELAYD_TIMEOUT_MS;
}

/*
 * -- CMD: fork it, held before its exec until the probes are attached
 * (task_cmd_fork()). What it, its threads and every process below it do
 * is traced, from its exec on: pea makes itself their child subreaper,
 * so a process whose parent exits stays below pea, and every probe
 * filters on pea's descendants, not pea (PEA_*_F_DESC_ONLY; exact, the
 * kernel's bound of PEA_TREE_DEPTH_MAX generations aside). With
 * --no-children, the command's pid is every probe's --pid instead.
 */
static int trace_cmd_fork(struct tracer *t)
{
	unsigned int i, tree = 0;
	pid_t pid;
	int err;

	if (!t->o.no_children) {
		err = task_cmd_subreaper();
		if (err) {
			tool_err("cannot follow the command's children: PR_SET_CHILD_SUBREAPER: %s (--no-children traces the command's process only)",
				 strerror(-err));
			return PEA_EXIT_ERR;
		}
		tree = PEA_PROBE_F_DESCENDANTS | PEA_PROBE_F_DESC_ONLY;
	}
	fflush(NULL);
	t->child = task_cmd_fork(t->o.cmd, &t->go_fd, "pea trace");
	if (t->child < 0) {
		t->child = 0;
		tool_err("cannot start %s: %s", t->o.cmd[0], strerror(errno));
		return PEA_EXIT_ERR;
	}
	pid = tree ? getpid() : t->child;
	for (i = 0; i < t->o.nprobes; i++) {
		t->o.probes[i].o.pid = (unsigned int)pid;
		t->o.probes[i].o.tree = tree;
	}
	return 0;
}

int cmd_trace(int argc, char **argv)
{
	struct tracer t;
	unsigned int i;
	int probe_col = 0;
	bool help;
	int rc;

	memset(&t, 0, sizeof(t));
	t.map_fd = -1;
	t.end_map_fd = -1;
	t.go_fd = -1;
	t.ncpus = get_nprocs_conf();
	if (t.ncpus < 1)
		t.ncpus = 1;
	rc = parse_trace_args(argc, argv, &t.o, t.ncpus, &help);
	if (rc || help) {
		trace_free_probes(&t.o);
		if (help)
			fputs(trace_help, stdout);
		return rc;
	}
	if (t.o.off_cpu) {
		rc = trace_offcpu(&t.o, t.ncpus);
		trace_free_probes(&t.o);
		return rc;
	}
	/* Wall-clock times: the offset from the records' clock, once. */
	t.wall_off = wall_offset_ns(NULL);
	/* Several probes: every line names its probe, in a column. */
	for (i = 0; t.o.nprobes > 1 && i < t.o.nprobes; i++)
		if ((int)strlen(t.o.probes[i].spec.text) > probe_col)
			probe_col = strlen(t.o.probes[i].spec.text);
	/*
	 * Kernel stacks: the symbols, read once for every probe (code of a
	 * module loaded later prints as an address).
	 */
	/* User stacks: named from each process's maps, read as it comes. */
	for (i = 0; i < t.o.nprobes; i++) {
		if (!t.o.probes[i].o.ustack)
			continue;
		t.o.usyms = usyms_new();
		if (!t.o.usyms)
			tool_err("warning: out of memory: user frames print as addresses");
		break;
	}
	for (i = 0; i < t.o.nprobes; i++) {
		if (!t.o.probes[i].o.kstack)
			continue;
		t.o.ksyms = ksyms_load();
		if (!t.o.ksyms)
			tool_err("warning: cannot read /proc/kallsyms (%s): stack frames print as addresses",
				 strerror(errno));
		break;
	}
	for (i = 0; i < t.o.nprobes; i++) {
		struct trace_probe *p = &t.o.probes[i];

		probe_fmt(&t, p, probe_col);
		if (p->spec.kind->prepare) {
			rc = p->spec.kind->prepare(&p->spec, &p->o, &p->fmt);
			if (rc) {
				trace_free_probes(&t.o);
				return rc;
			}
		}
		t.out_probes[i] = &p->fmt;
	}
	t.o.agg.json = t.o.json;
	rc = agg_new(&t.agg, &t.o.agg, t.out_probes, (int)t.o.nprobes);
	if (rc) {
		trace_free_probes(&t.o);
		return rc;
	}

	t.cpus = calloc(t.ncpus, sizeof(*t.cpus));
	if (!t.cpus) {
		tool_err("out of memory");
		agg_free(t.agg);
		trace_free_probes(&t.o);
		return PEA_EXIT_ERR;
	}
	if (setup_signals() ||
	    (t.o.flight && signal(SIGUSR1, on_snapshot) == SIG_ERR)) {
		tool_err("cannot set up signal handlers: %s", strerror(errno));
		free(t.cpus);
		agg_free(t.agg);
		trace_free_probes(&t.o);
		return PEA_EXIT_ERR;
	}
	if (t.o.output) {
		struct trace_out_opts oo;
		char msg[512];

		out_opts(&t, &oo);
		t.out_oo = oo;
		t.out = trace_writer_open(&oo, t.out_probes, t.o.nprobes,
					  t.ncpus, msg, sizeof(msg));
		if (!t.out) {
			tool_err("--output: %s", msg);
			free(t.cpus);
			agg_free(t.agg);
			trace_free_probes(&t.o);
			return PEA_EXIT_ERR;
		}
	}
	if (t.o.cmd) {
		char msg[512];

		rc = trace_cmd_fork(&t);
		if (rc) {
			if (t.out)
				trace_writer_close(t.out, msg, sizeof(msg));
			t.out = NULL;
			free(t.cpus);
			agg_free(t.agg);
			trace_free_probes(&t.o);
			return rc;
		}
	}
	rc = trace_setup(&t);
	if (rc == PEA_EXIT_OK) {
		for (i = 0; i < t.o.nprobes; i++)
			t.o.probes[i].fmt.t0_ns = t.t0;
		t.next_interval = t.t0 + (__u64)(t.o.interval * 1e9);
		/* A flight recorder reads nothing until the end. */
		t.live = isatty(STDERR_FILENO) && !t.o.flight;
		t.live_ns = t.t0;
		/* Also with --json: it is on stderr, and says we are attached. */
		print_banner(&t);
		if (show_events(&t)) {
			trace_print_header(stdout, &t.o.probes[0].fmt);
			fflush(stdout);
		}
		/* -- CMD: exec'ed now that every probe is attached. */
		if (t.child && task_cmd_go(t.go_fd))
			tool_err("cannot start %s: it ended before its exec",
				 t.o.cmd[0]);
		t.go_fd = -1;
		rc = trace_loop(&t);
	}
	return trace_teardown(&t, rc);
}
