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
#include <linux/types.h>
#include "aggregate.h"
#include "pea_tool.h"
#include "tpformat.h"
#include "trace_writer.h"

#define DEFAULT_PAGES	64
#define TRACE_MAX_PROBES 64	/* PROBE arguments of one session */

/* struct probe_opts.set: which options a segment of the command line gave */
#define PO_ARGS		(1U << 0)
#define PO_CAPTURE	(1U << 1)	/* --str or --bytes */
#define PO_SPACE	(1U << 2)	/* --user or --kernel */
#define PO_PID		(1U << 3)
#define PO_CPU		(1U << 4)
#define PO_MAXACTIVE	(1U << 5)
#define PO_PACKET	(1U << 6)
#define PO_FILTER	(1U << 7)
#define PO_KSTACK	(1U << 8)

/*
 * The options that bind to one probe. Those given before the first PROBE
 * are every probe's defaults; those given after a PROBE (before the next
 * one) replace them for that probe only. Per-probe output options
 * (kernel stacks, histograms, counting) belong here too.
 */
struct probe_opts {
	unsigned int set;	/* PO_*: given in this segment */
	bool args;
	bool user, kernel;
	int capture_mode;
	unsigned int capture_arg, capture_len;
	unsigned int pid;
	int cpu;		/* -1: any */
	unsigned int maxactive;
	unsigned int packet;	/* netfilter: bytes per packet (0: unset) */
	unsigned int kstack;	/* --kstack: frames per stack (0: none) */
	const char *filter;
};

/* One PROBE of the session: what was asked, how it prints, its link. */
struct trace_probe {
	struct probe_spec spec;
	struct probe_opts own;		/* the options given after it */
	struct probe_opts o;		/* in effect: defaults, then own */
	struct trace_fmt fmt;
	struct tp_format *tpf;		/* tracepoints: the format */
	struct pea_tp_attr tp_attr;	/* tracepoints: predicates filled */
	int link_fd;
	__u64 shown, records;		/* events shown, records decoded */
	struct pea_link_info li;	/* at detach */
	bool have_li;
};

/* The session: options for all probes, and the probes. */
struct trace_opts {
	bool json, quiet, flight, unordered;
	double duration;
	unsigned long long count;
	unsigned int pages;
	const char *output;		/* --output */
	enum trace_out_format format;	/* --format */
	struct agg_opts agg;		/* --hist, --count-by, ... */
	bool top_set, max_keys_set;	/* --top, --max-keys given */
	double interval;		/* --interval (0: at the end only) */
	bool events;			/* --events */
	struct probe_opts defaults;	/* given before the first PROBE */
	struct ksyms *ksyms;		/* with --kstack: the kernel's symbols */
	struct trace_probe *probes;
	unsigned int nprobes;
};

struct cpu_count {
	__u64 records;
	__u64 bytes;
	__u64 lost_new;		/* not yet announced */
};

struct tracer {
	struct trace_opts o;
	struct pea_buffer *pb;
	int map_fd;

	struct trace_event *batch;
	size_t n, cap;
	__u64 seq;

	struct cpu_count *cpus;
	int ncpus;		/* entries of @cpus: possible CPUs */
	__u64 shown, received, malformed, lost;
	bool out_closed;	/* stdout went away (EPIPE) */
	bool oom;

	bool live;		/* stderr is a terminal */
	bool live_shown;	/* the line is on the screen */
	bool live_hidden;	/* cleared for other output: redraw it */
	__u64 live_ns, live_recv;
	double live_rate;
	__u64 t0, t_end;
	struct trace_writer *out;	/* --output, or NULL */
	const struct trace_fmt *out_probes[TRACE_MAX_PROBES];
	bool out_failed;
	struct agg *agg;	/* --hist, --count-by; NULL without */
	__u64 next_interval;	/* when the tables print next */
	unsigned int interval_no;
};

/* ---- trace_help.c ---- */

extern const char trace_help[];

/* ---- trace_opts.c ---- */

/*
 * A usage error about the options of @probe (NULL: before any probe):
 * the message is prefixed with the probe's text.
 */
int probe_usage(const char *probe, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The command line: session options and probe defaults, then each PROBE
 * with its own options; 0 or an exit status (*@help: --help was given).
 */
int parse_trace_args(int argc, char **argv, struct trace_opts *o,
		     int ncpus, bool *help);

/* ---- trace_print.c ---- */

bool count_reached(const struct tracer *t);
/* Event lines: off with --quiet, and with an aggregation unless --events. */
bool show_events(const struct tracer *t);
void live_clear(struct tracer *t);
void live_update(struct tracer *t);
void print_tables(struct tracer *t, bool last);
void flush_batch(struct tracer *t);
void print_summary(struct tracer *t);
void print_banner(const struct tracer *t);

#endif /* _PEA_TRACE_H */
