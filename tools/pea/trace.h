/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea trace: what the command's files share. A session (cmd_trace.c) is
 * set up from the command line (trace_opts.c, its help text in
 * trace_help.c) and prints events, lost-record notices, the live line,
 * the tables and the summary (trace_print.c).
 */
#ifndef _PEA_TRACE_H
#define _PEA_TRACE_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "aggregate.h"
#include "pea_tool.h"
#include "probe_kind.h"
#include "trace_writer.h"

#define DEFAULT_PAGES	64
/*
 * Probes of one session: --max-probes, by default the module's default
 * max_user_links (one link per probe), at most PEA_MAX_LINKS (the
 * module's links of all users together).
 */
#define TRACE_DEFAULT_MAX_PROBES	256
#define TRACE_MAX_PROBES		PEA_MAX_LINKS
#define TRACE_BANNER_PROBES	16	/* named one by one in the banner */
/* relayd's fields for them hold this many characters (relayd_proto.h). */
#define TRACE_SESSION_MAX	254
#define TRACE_HOSTNAME_MAX	63
#define TRACE_LIVE_INTERVAL	1.0	/* seconds: --live-interval */
#define TRACE_RELAYD_TIMEOUT_MS	5000	/* relayd's answers, at most */

/* One PROBE of the session: what was asked, how it prints, its link. */
struct trace_probe {
	struct probe_spec spec;
	struct probe_opts own;		/* the options given after it */
	struct probe_opts o;		/* in effect: defaults, then own */
	struct trace_fmt fmt;
	int link_fd;
	__u64 shown, records;		/* events shown, records decoded */
	struct pea_link_info li;	/* at detach */
	bool have_li;
	char *glob_text;		/* a glob's match: its PROBE text, */
	const char *glob;		/* the glob as given */
	unsigned int glob_first;	/* and its first match's index + 1 */
	unsigned int fprobe_n;		/* a glob's first match: the matches
					 * its one fprobe link attaches (its
					 * @link_fd; theirs is -1), else 0
					 */
};

/* The session: options for all probes, and the probes. */
struct trace_opts {
	bool json, quiet, flight, unordered;
	bool include_self;	/* the tool's own hits too */
	bool no_children;	/* --pid, -- CMD: that process only */
	bool no_fprobe;		/* --no-fprobe: a kprobe per glob match */
	double duration;
	unsigned long long count;
	unsigned int pages;
	const char *output;		/* --output */
	enum trace_out_format format;	/* --format */
	const char *session, *hostname;	/* --session, --hostname */
	double live_interval;		/* --live-interval (0: not given) */
	int time_mode;			/* --time: enum trace_time */
	const char *snapshot_on_text;	/* --snapshot-on PROBE, as given */
	struct trace_probe *snapshot_on;	/* and that probe */
	struct agg_opts agg;		/* --hist, --count-by, ... */
	bool top_set, max_keys_set;	/* --top, --max-keys given */
	double interval;		/* --interval (0: at the end only) */
	bool events;			/* --events */
	bool off_cpu;			/* --off-cpu: no PROBE (trace_offcpu.c) */
	bool off_cpu_kstack;		/* with --count-by kstack or --folded */
	struct probe_opts defaults;	/* given before the first PROBE */
	struct ksyms *ksyms;		/* with --kstack: the kernel's symbols */
	struct usyms *usyms;		/* with --ustack: processes' symbols */
	struct trace_probe *probes;
	unsigned int nprobes;
	unsigned int max_probes;	/* --max-probes */
	char **cmd;			/* -- CMD ARGS: argv, NULL-ended */
};

struct cpu_count {
	__u64 records;
	__u64 bytes;
	__u64 lost_new;		/* not yet given to the --output writer */
	__u64 lost_unsaid;	/* not yet announced */
	__u64 lost_total;	/* announced and not, since the start */
	__u64 lost_since_ns;	/* when the first unannounced loss was seen */
	__u64 lost_next_ns;	/* the next announcement, at the earliest */
};

struct tracer {
	struct trace_opts o;
	pid_t child;			/* -- CMD: its pid (0: none) */
	int child_status;		/* its wait status, once it ended */
	int go_fd;			/* lets it exec (task_cmd_go()) */
	bool child_done;
	struct pea_buffer *pb;
	int map_fd;
	int end_map_fd;		/* --latency's END apart (trace_setup()) */

	struct trace_event *batch;
	size_t n, cap;
	__u64 seq;

	struct cpu_count *cpus;
	int ncpus;		/* entries of @cpus: possible CPUs */
	__u64 shown, received, malformed, lost;
	bool out_closed;	/* stdout went away (EPIPE) */
	bool final;		/* the last drain: announce every loss */
	bool oom;

	bool live;		/* stderr is a terminal */
	bool live_shown;	/* the line is on the screen */
	bool live_hidden;	/* cleared for other output: redraw it */
	__u64 live_ns, live_recv;
	double live_rate;
	__u64 t0, t_end;
	__s64 wall_off;		/* CLOCK_REALTIME - CLOCK_MONOTONIC at start */
	struct trace_writer *out;	/* --output, or NULL */
	struct trace_out_opts out_oo;	/* what it was opened with */
	char out_session[TRACE_SESSION_MAX + 1];	/* net://: in effect */
	char out_host[TRACE_HOSTNAME_MAX + 1];
	const struct trace_fmt *out_probes[TRACE_MAX_PROBES];
	bool out_failed;
	struct agg *agg;	/* --hist, --count-by; NULL without */
	unsigned int snap_no;	/* flight recorder: snapshots taken so far */
	__u64 snap_on_written;	/* --snapshot-on: its probe's records seen */
	__u64 snap_on_last;	/* and when it last took a snapshot */
	__u64 next_interval;	/* when the tables print next */
	__u64 lost_at_tables;	/* @lost when the tables last printed */
	unsigned int interval_no;
};

/* ---- trace_help.c ---- */

extern const char trace_help[];

/* ---- trace_opts.c ---- */

/*
 * The command line: session options and probe defaults, then each PROBE
 * with its own options; 0 or an exit status (*@help: --help was given).
 */
int parse_trace_args(int argc, char **argv, struct trace_opts *o,
		     int ncpus, bool *help);

/* ---- trace_offcpu.c ---- */

int trace_offcpu(const struct trace_opts *o, int ncpus);

/* ---- trace_print.c ---- */

bool count_reached(const struct tracer *t);
/* Event lines: off with --quiet, and with an aggregation unless --events. */
bool show_events(const struct tracer *t);
void live_clear(struct tracer *t);
void live_update(struct tracer *t);
void print_tables(struct tracer *t, bool last);
void flush_batch(struct tracer *t);
/* The --output writer's time: packets and beacons that are due. */
void out_tick(struct tracer *t);
void print_summary(struct tracer *t);
void print_banner(const struct tracer *t);

#endif /* _PEA_TRACE_H */
