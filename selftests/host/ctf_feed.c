// SPDX-License-Identifier: GPL-2.0
/*
 * ctf_feed: pea's CTF writer (tools/pea/trace_out.c, trace_ctf.c and its
 * sinks, linked in) fed a synthetic trace, for the host tests
 * (selftests/host/test_relayd.sh). No kernel, no module.
 *
 *   ctf_feed [OPTIONS] OUTPUT [OUTPUT]
 *
 * OUTPUT is what pea trace --output takes: a directory or
 * net://HOST[:CTRL[:DATA]]. With two, every call goes to both writers,
 * in the same order (a local copy beside a relayd).
 *
 * The trace: two probes (a kretprobe with a string capture, a kprobe
 * with arguments) on CPUs 0..2 of 4; event i is at T0 + i * STEP ns and
 * on CPU (i % 7 ? i % 2 : 2), so CPU 2 has a few events early on and
 * none after --quiet-after; CPU 3 none at all. After event N/2, CPU 1
 * loses 7 records (trace_writer_lost()). The writer's clock ticks at
 * every event's time, as pea trace's loop would (trace_writer_tick()).
 * Events are paced --pace-us apart in real time.
 *
 * Options:
 *   --events N          events (default 4000)
 *   --pace-us N         real time between events (default 0)
 *   --live-interval-ms N  the live interval (default 100; 0: none, packets
 *                       end only when full or on the loss, as pea trace
 *                       --output DIR has them); events are 250 us apart
 *   --session S, --hostname H   relayd's names (default "feed", "feedhost")
 *   --ready-file FILE   create FILE once the writers are open
 *   --wait-log FILE PATTERN  then wait (at most 20 s) until FILE holds
 *                       PATTERN (a live viewer's attach, in relayd's log)
 *   --timeout-ms N      how long relayd may take to answer (default 5000)
 *   --kill PID N        SIGKILL PID after N events (relayd), and go on
 *   --wall-offset-ns N  the CTF clock's offset to the epoch (default 0)
 *   --dry               build the events but write them nowhere (no
 *                       OUTPUT: the cost of the feeding alone)
 *   --stacks            the kprobe with --kstack and --ustack: its even
 *                       events carry a kernel stack of 2 frames and a
 *                       user stack of 3 (0x4000n0, 0x5000n0, 0x6000n0),
 *                       its odd ones 1 kernel frame and no user stack
 *                       (a kernel thread's hit); unnamed, as addresses
 *   --snapshot N        write it as pea trace writes flight-recorder
 *                       snapshot N of a session with that OUTPUT
 *                       (trace_snapshot_open(): OUTPUT.N, or relayd's
 *                       snapshot session SESSION.N); prints where on
 *                       stdout first: "snapshot N: WHERE"
 *
 * pea trace's messages on stderr ("pea: --output OUT: ..."), and on
 * stdout one line: "fed N calls C max_call_us M failed F feed_us T"
 * (T: the events' feeding, before the close). Exit status
 * as pea trace's: 0, or 1 if a writer failed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "pea_tool.h"
#include "probe_kind.h"
#include "trace_writer.h"

#define NCPUS		4
#define T0		1000000000ULL
#define MAX_OUT		2

static __u64 mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Whether @file holds @pat; waits up to 20 s. */
static int wait_log(const char *file, const char *pat)
{
	int i;

	for (i = 0; i < 2000; i++) {
		char *buf = NULL;
		size_t cap = 0;
		FILE *f = fopen(file, "r");
		bool found = false;

		while (f && getline(&buf, &cap, f) > 0)
			if (strstr(buf, pat))
				found = true;
		free(buf);
		if (f)
			fclose(f);
		if (found)
			return 0;
		usleep(10000);
	}
	return -1;
}

struct feed {
	const char *path[MAX_OUT];
	struct trace_writer *w[MAX_OUT];
	int nout;
	bool failed[MAX_OUT];
	__u64 calls, max_us;
};

/* One writer call's result: pea trace's message, once, as it prints it. */
static void result(struct feed *f, int i, int err, __u64 t)
{
	t = mono_us() - t;
	f->calls++;
	if (t > f->max_us)
		f->max_us = t;
	if (!err || f->failed[i])
		return;
	f->failed[i] = true;
	if (f->w[i]->msg[0])
		tool_err("--output %s: %s", f->path[i], f->w[i]->msg);
	else
		tool_err("writing %s: %s", f->path[i], strerror(-err));
}

int main(int argc, char **argv)
{
	struct trace_out_opts oo = {
		.format = TRACE_OUT_CTF,
		.session = "feed",
		.hostname = "feedhost",
		.ordered = true,
		.start_ns = T0,
		.timeout_ms = 5000,
	};
	struct trace_fmt fmt[2] = {
		{ .retprobe = true, .capture_mode = PEA_CAPTURE_STR,
		  .probe = "kretprobe:feed_fn", .kind = &kprobe_kind },
		{ .args = true, .probe = "kprobe:feed_other",
		  .kind = &kprobe_kind },
	};
	const struct trace_fmt *probes[2] = { &fmt[0], &fmt[1] };
	const char *log_file = NULL, *log_pat = NULL, *ready = NULL;
	unsigned long events = 4000, pace = 0, live_ms = 100, kill_after = 0;
	unsigned int snap = 0;
	struct feed f = { 0 };
	bool dry = false, stacks = false;
	__u64 kst[2], ust[3];
	int kill_pid = 0, rc = 0, i, a;
	__u64 step, t_feed;
	unsigned long n;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--events") && a + 1 < argc) {
			events = strtoul(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--pace-us") && a + 1 < argc) {
			pace = strtoul(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--live-interval-ms") &&
			   a + 1 < argc) {
			live_ms = strtoul(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--session") && a + 1 < argc) {
			oo.session = argv[++a];
		} else if (!strcmp(argv[a], "--hostname") && a + 1 < argc) {
			oo.hostname = argv[++a];
		} else if (!strcmp(argv[a], "--ready-file") && a + 1 < argc) {
			ready = argv[++a];
		} else if (!strcmp(argv[a], "--timeout-ms") && a + 1 < argc) {
			oo.timeout_ms = atoi(argv[++a]);
		} else if (!strcmp(argv[a], "--wait-log") && a + 2 < argc) {
			log_file = argv[++a];
			log_pat = argv[++a];
		} else if (!strcmp(argv[a], "--wall-offset-ns") &&
			   a + 1 < argc) {
			oo.wall_offset_ns = strtoll(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--snapshot") && a + 1 < argc) {
			snap = strtoul(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--dry")) {
			dry = true;
		} else if (!strcmp(argv[a], "--stacks")) {
			stacks = true;
			fmt[1].kstack = true;
			fmt[1].kstack_depth = 2;
			fmt[1].ustack = true;
		} else if (!strcmp(argv[a], "--kill") && a + 2 < argc) {
			kill_pid = atoi(argv[++a]);
			kill_after = strtoul(argv[++a], NULL, 0);
		} else if (argv[a][0] != '-' && f.nout < MAX_OUT) {
			f.path[f.nout++] = argv[a];
		} else {
			fprintf(stderr, "ctf_feed: bad argument '%s'\n", argv[a]);
			return 2;
		}
	}
	if (!f.nout && !dry) {
		fprintf(stderr, "ctf_feed: no OUTPUT\n");
		return 2;
	}
	oo.live_interval_ns = live_ms * 1000000ULL;
	step = 250000;
	signal(SIGPIPE, SIG_IGN);	/* as pea trace */

	for (i = 0; i < f.nout; i++) {
		char msg[512];

		oo.path = f.path[i];
		if (snap) {
			char where[4200];

			f.w[i] = trace_snapshot_open(&oo, snap, where,
						     sizeof(where), probes, 2,
						     NCPUS, msg, sizeof(msg));
			printf("snapshot %u: %s\n", snap, where);
		} else {
			f.w[i] = trace_writer_open(&oo, probes, 2, NCPUS, msg,
						   sizeof(msg));
		}
		if (!f.w[i]) {
			tool_err("--output: %s", msg);
			return PEA_EXIT_ERR;
		}
	}
	if (ready) {
		FILE *r = fopen(ready, "w");

		if (r)
			fclose(r);
	}
	if (log_file && wait_log(log_file, log_pat)) {
		fprintf(stderr, "ctf_feed: '%s' never came in %s\n", log_pat,
			log_file);
		rc = PEA_EXIT_ERR;
	}

	t_feed = mono_us();
	for (n = 0; n < events && !rc; n++) {
		struct trace_event ev;
		int cpu = n % 7 ? (int)(n % 2) : 2;
		unsigned int probe = n % 3 == 0;
		__u64 t;

		if (cpu == 2 && n > events / 4)
			cpu = 0;	/* CPU 2 goes quiet */
		memset(&ev, 0, sizeof(ev));
		ev.rec.time_ns = T0 + n * step;
		ev.rec.id = probe + 1;
		ev.rec.addr = 0xffffffff81000000ULL + probe * 0x40;
		ev.rec.cpu = cpu;
		ev.rec.pid = 1000 + n % 5;
		ev.rec.tgid = 1000;
		snprintf(ev.rec.comm, sizeof(ev.rec.comm), "feed%lu", n % 3);
		if (probe == 0) {
			ev.rec.ret = (__s64)n - 100;
			ev.rec.latency_ns = 500 + n;
			ev.rec.capture_len = snprintf((char *)ev.cap,
						      sizeof(ev.cap),
						      "/tmp/file-%lu", n);
		} else {
			for (i = 0; i < 6; i++)
				ev.rec.args[i] = n * 16 + i;
		}
		if (probe == 1 && stacks) {
			kst[0] = 0xffffffff81000100ULL + n;
			kst[1] = 0xffffffff81000200ULL + n;
			ev.kstack = kst;
			ev.kstack_nr = n % 2 ? 1 : 2;
			for (i = 0; i < 3 && n % 2 == 0; i++)
				ust[i] = 0x400000ULL + i * 0x100000 + n * 16;
			ev.ustack = n % 2 ? NULL : ust;
			ev.ustack_nr = n % 2 ? 0 : 3;
		}
		ev.ring = cpu;
		ev.probe = probe;
		for (i = 0; i < f.nout; i++) {
			if (f.failed[i])
				continue;
			t = mono_us();
			result(&f, i, trace_writer_event(f.w[i], probe, &ev), t);
			if (n == events / 2 && !f.failed[i]) {
				t = mono_us();
				result(&f, i, trace_writer_lost(f.w[i], 1, 7), t);
			}
			if (f.failed[i])
				continue;
			t = mono_us();
			result(&f, i, trace_writer_tick(f.w[i], ev.rec.time_ns),
			       t);
		}
		if (kill_pid && n + 1 == kill_after)
			kill(kill_pid, SIGKILL);
		if (pace)
			usleep(pace);
	}
	t_feed = mono_us() - t_feed;
	for (i = 0; i < f.nout; i++) {
		char msg[512];
		__u64 t = mono_us();
		int err = trace_writer_close(f.w[i], msg, sizeof(msg));

		f.calls++;
		t = mono_us() - t;
		if (t > f.max_us)
			f.max_us = t;
		if (err && !f.failed[i]) {
			if (msg[0])
				tool_err("--output %s: %s", f.path[i], msg);
			else
				tool_err("writing %s: %s", f.path[i],
					 strerror(-err));
		}
		if (err || f.failed[i])
			rc = PEA_EXIT_ERR;
	}
	printf("fed %lu calls %llu max_call_us %llu failed %d feed_us %llu\n",
	       n, (unsigned long long)f.calls, (unsigned long long)f.max_us,
	       rc != 0, (unsigned long long)t_feed);
	return rc;
}
