// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace: the command line, read segment by segment (getopt_long with
 * '+' stops at each PROBE): the options before the first PROBE are the
 * session's and every probe's defaults (struct probe_opts); those after a
 * PROBE are its own. A PROBE named by a glob (probe_glob.c) is one probe
 * per match, each with the options after it. One session has at most
 * --max-probes probes (TRACE_DEFAULT_MAX_PROBES, TRACE_MAX_PROBES).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "kfetch.h"
#include "net_url.h"
#include "probe_glob.h"
#include "ufetch.h"
#include "trace.h"
#include "walltime.h"

enum {
	OPT_USER = 0x100,
	OPT_KERNEL,
	OPT_PAGES,
	OPT_MAXACTIVE,
	OPT_UNORDERED,
	OPT_INCLUDE_SELF,
	OPT_NO_CHILDREN,
	OPT_FILTER,
	OPT_FORMAT,
	OPT_PACKET,
	OPT_HIST,
	OPT_COUNT_BY,
	OPT_TOP,
	OPT_MAX_KEYS,
	OPT_LHIST,
	OPT_EVENTS,
	OPT_KSTACK,
	OPT_FOLDED,
	OPT_USTACK,
	OPT_SESSION,
	OPT_HOSTNAME,
	OPT_LIVE_INTERVAL,
	OPT_TIME,
	OPT_SNAPSHOT_ON,
	OPT_MAX_PROBES,
	OPT_LATENCY,
	OPT_KEY,
	OPT_MAX_PENDING,
	OPT_OFF_CPU,
	OPT_NO_FPROBE,
};

static const struct option trace_options[] = {
	{ "args", no_argument, NULL, 'a' },
	{ "str", required_argument, NULL, 's' },
	{ "bytes", required_argument, NULL, 'b' },
	{ "user", no_argument, NULL, OPT_USER },
	{ "kernel", no_argument, NULL, OPT_KERNEL },
	{ "pid", required_argument, NULL, 'p' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "duration", required_argument, NULL, 'd' },
	{ "count", required_argument, NULL, 'c' },
	{ "pages", required_argument, NULL, OPT_PAGES },
	{ "maxactive", required_argument, NULL, OPT_MAXACTIVE },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "packet", required_argument, NULL, OPT_PACKET },
	{ "kstack", optional_argument, NULL, OPT_KSTACK },
	{ "ustack", optional_argument, NULL, OPT_USTACK },
	{ "json", no_argument, NULL, 'j' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "flight-recorder", no_argument, NULL, 'F' },
	{ "unordered", no_argument, NULL, OPT_UNORDERED },
	{ "include-self", no_argument, NULL, OPT_INCLUDE_SELF },
	{ "no-children", no_argument, NULL, OPT_NO_CHILDREN },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "session", required_argument, NULL, OPT_SESSION },
	{ "hostname", required_argument, NULL, OPT_HOSTNAME },
	{ "live-interval", required_argument, NULL, OPT_LIVE_INTERVAL },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "snapshot-on", required_argument, NULL, OPT_SNAPSHOT_ON },
	{ "max-probes", required_argument, NULL, OPT_MAX_PROBES },
	{ "hist", required_argument, NULL, OPT_HIST },
	{ "count-by", required_argument, NULL, OPT_COUNT_BY },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "max-keys", required_argument, NULL, OPT_MAX_KEYS },
	{ "lhist", required_argument, NULL, OPT_LHIST },
	{ "interval", required_argument, NULL, 'i' },
	{ "events", no_argument, NULL, OPT_EVENTS },
	{ "folded", required_argument, NULL, OPT_FOLDED },
	{ "latency", no_argument, NULL, OPT_LATENCY },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "max-pending", required_argument, NULL, OPT_MAX_PENDING },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "no-fprobe", no_argument, NULL, OPT_NO_FPROBE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * --lhist MIN,MAX,STEP: integers, MIN < MAX, STEP >= 1, at most
 * PEA_AGG_LINEAR_MAX buckets between (the kernel's rules, so that one
 * table serves in the kernel and from records alike).
 */
static int parse_lhist(struct agg_opts *a, const char *arg)
{
	long long lo, hi;
	unsigned long long step, n;
	char *end;

	errno = 0;
	lo = strtoll(arg, &end, 0);
	if (errno || end == arg || *end != ',')
		goto bad;
	arg = end + 1;
	hi = strtoll(arg, &end, 0);
	if (errno || end == arg || *end != ',')
		goto bad;
	arg = end + 1;
	if (*arg == '-')
		goto bad;
	step = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || !step || hi <= lo)
		goto bad;
	n = ((unsigned long long)hi - (unsigned long long)lo) / step;
	if (((unsigned long long)hi - (unsigned long long)lo) % step)
		n++;
	if (n > PEA_AGG_LINEAR_MAX)
		return tool_usage("trace", "--lhist: %llu buckets from MIN to MAX by STEP; at most %d",
				  n, PEA_AGG_LINEAR_MAX);
	a->lin = true;
	a->lin_min = lo;
	a->lin_max = hi;
	a->lin_step = step;
	a->lin_n = (unsigned int)n;
	return 0;
bad:
	return tool_usage("trace", "--lhist MIN,MAX,STEP: integers, MIN below MAX, STEP at least 1");
}

/* "ARG1", "arg1" or "1": the argument index 0..5. */
static int parse_argn(const char *s, const char **rest, unsigned int *n)
{
	if (!strncasecmp(s, "arg", 3))
		s += 3;
	if (*s < '0' || *s > '5')
		return -EINVAL;
	*n = *s - '0';
	*rest = s + 1;
	return 0;
}

static int parse_capture(struct probe_opts *o, const char *probe, int mode,
			 const char *arg)
{
	const char *rest, *what = mode == PEA_CAPTURE_STR ? "--str" : "--bytes";

	if (o->set & PO_CAPTURE)
		return probe_usage(probe, "only one of --str and --bytes, once");
	o->set |= PO_CAPTURE;
	if (parse_argn(arg, &rest, &o->capture_arg))
		return probe_usage(probe, "%s '%s': name an argument ARG0..ARG5",
				   what, arg);
	o->capture_mode = mode;
	if (!*rest) {
		if (mode == PEA_CAPTURE_FIXED)
			return probe_usage(probe, "--bytes needs a length: ARGn:LEN");
		o->capture_len = PEA_CAPTURE_MAX;
		return 0;
	}
	if (*rest != ':' ||
	    tool_parse_uint(rest + 1, PEA_CAPTURE_MAX, &o->capture_len) ||
	    !o->capture_len)
		return probe_usage(probe, "%s '%s': the length after ':' must be 1..%d",
				   what, arg, PEA_CAPTURE_MAX);
	return 0;
}

/* A probe option of the segment (@probe NULL: before any probe). */
static int parse_probe_opt(int c, const char *arg, struct probe_opts *po,
			   const char *probe, int ncpus)
{
	unsigned long long v;

	switch (c) {
	case 'a':
		po->args = true;
		po->set |= PO_ARGS;
		return 0;
	case 's':
	case 'b':
		return parse_capture(po, probe, c == 's' ? PEA_CAPTURE_STR :
						    PEA_CAPTURE_FIXED, arg);
	case OPT_USER:
	case OPT_KERNEL:
		if (!(po->set & PO_SPACE))
			po->user = po->kernel = false;
		if (c == OPT_USER)
			po->user = true;
		else
			po->kernel = true;
		po->set |= PO_SPACE;
		return 0;
	case 'p':
		if (tool_parse_uint(arg, INT_MAX, &po->pid) || !po->pid)
			return probe_usage(probe, "--pid '%s': a process id", arg);
		po->set |= PO_PID;
		return 0;
	case 'C':
		if (tool_parse_u64(arg, &v) || v >= (unsigned int)ncpus)
			return probe_usage(probe, "--cpu '%s': this machine has CPUs 0..%d",
					   arg, ncpus - 1);
		po->cpu = (int)v;
		po->set |= PO_CPU;
		return 0;
	case OPT_MAXACTIVE:
		if (tool_parse_uint(arg, 4096, &po->maxactive) || !po->maxactive)
			return probe_usage(probe, "--maxactive '%s': 1..4096", arg);
		po->set |= PO_MAXACTIVE;
		return 0;
	case OPT_FILTER:
		po->filter = arg;
		po->set |= PO_FILTER;
		return 0;
	case OPT_PACKET:
		if (tool_parse_uint(arg, PEA_NF_PACKET_MAX, &po->packet) ||
		    !po->packet)
			return probe_usage(probe, "--packet '%s': 1..%d bytes",
					   arg, PEA_NF_PACKET_MAX);
		po->set |= PO_PACKET;
		return 0;
	case OPT_KSTACK:
		po->kstack = PEA_KSTACK_MAX;
		if (arg && (tool_parse_uint(arg, PEA_KSTACK_MAX, &po->kstack) ||
			    !po->kstack))
			return probe_usage(probe, "--kstack=%s: a depth of 1..%d frames",
					   arg, PEA_KSTACK_MAX);
		po->set |= PO_KSTACK;
		return 0;
	case OPT_USTACK:
		po->ustack = PEA_USTACK_MAX;
		if (arg && (tool_parse_uint(arg, PEA_USTACK_MAX, &po->ustack) ||
			    !po->ustack))
			return probe_usage(probe, "--ustack=%s: a depth of 1..%d entries",
					   arg, PEA_USTACK_MAX);
		po->set |= PO_USTACK;
		return 0;
	}
	return 1;	/* not a probe option */
}

/*
 * A name relayd files the trace under (a directory name): 1..@max
 * letters, digits, '.', '_' and '-', not starting with '.'.
 */
static int check_relayd_name(const char *opt, const char *name, size_t max)
{
	static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "abcdefghijklmnopqrstuvwxyz0123456789._-";
	size_t n = strlen(name);

	if (n && n <= max && name[0] != '.' && strspn(name, ok) == n)
		return 0;
	return tool_usage("trace", "%s '%s': 1..%zu letters, digits, '.', '_' or '-', not starting with '.'",
			  opt, name, max);
}

/* A session option, wherever it was given. */
static int parse_session_opt(int c, const char *arg, struct trace_opts *o)
{
	switch (c) {
	case OPT_SESSION:
		o->session = arg;
		return check_relayd_name("--session", arg, TRACE_SESSION_MAX);
	case OPT_HOSTNAME:
		o->hostname = arg;
		return check_relayd_name("--hostname", arg, TRACE_HOSTNAME_MAX);
	case OPT_SNAPSHOT_ON:
		o->snapshot_on_text = arg;
		return 0;
	case OPT_TIME:
		o->time_mode = trace_time_parse(arg);
		if (o->time_mode < 0)
			return tool_usage("trace", "--time '%s': wall, mono or rel",
					  arg);
		return 0;
	case OPT_LIVE_INTERVAL:
		if (tool_parse_seconds(arg, &o->live_interval) ||
		    o->live_interval < 0.01 || o->live_interval > 3600)
			return tool_usage("trace", "--live-interval '%s': seconds, 0.01..3600",
					  arg);
		return 0;
	case 'd':
		if (tool_parse_seconds(arg, &o->duration))
			return tool_usage("trace", "--duration '%s': a positive number of seconds",
					  arg);
		return 0;
	case 'c':
		if (tool_parse_u64(arg, &o->count) || !o->count)
			return tool_usage("trace", "--count '%s': a positive number", arg);
		return 0;
	case OPT_PAGES:
		if (tool_parse_uint(arg, PEA_MAX_RING_PAGES, &o->pages) ||
		    !o->pages || (o->pages & (o->pages - 1)))
			return tool_usage("trace", "--pages '%s': a power of two, 1..%d",
					  arg, PEA_MAX_RING_PAGES);
		return 0;
	case 'o':
		o->output = arg;
		return 0;
	case OPT_FORMAT:
		o->format = trace_writer_format(arg);
		if (!o->format)
			return tool_usage("trace",
					  "--format '%s': ctf or perfetto (JSON), or pftrace (protobuf)",
					  arg);
		return 0;
	case 'j':
		o->json = true;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case 'F':
		o->flight = true;
		return 0;
	case OPT_UNORDERED:
		o->unordered = true;
		return 0;
	case OPT_INCLUDE_SELF:
		o->include_self = true;
		return 0;
	case OPT_NO_CHILDREN:
		o->no_children = true;
		return 0;
	case OPT_NO_FPROBE:
		o->no_fprobe = true;
		return 0;
	case OPT_TOP:
		if (tool_parse_uint(arg, UINT_MAX, &o->agg.top) || !o->agg.top)
			return tool_usage("trace", "--top '%s': a positive number",
					  arg);
		o->top_set = true;
		return 0;
	case OPT_MAX_KEYS:
		if (tool_parse_uint(arg, AGG_MAX_KEYS_LIMIT, &o->agg.max_keys) ||
		    !o->agg.max_keys)
			return tool_usage("trace", "--max-keys '%s': 1..%d",
					  arg, AGG_MAX_KEYS_LIMIT);
		o->max_keys_set = true;
		return 0;
	case OPT_LHIST:
		if (o->agg.lin)
			return tool_usage("trace", "--lhist once: it shapes every --hist");
		return parse_lhist(&o->agg, arg);
	case 'i':
		if (tool_parse_seconds(arg, &o->interval) || o->interval < 0.1)
			return tool_usage("trace", "--interval '%s': seconds, at least 0.1",
					  arg);
		return 0;
	case OPT_EVENTS:
		o->events = true;
		return 0;
	case OPT_FOLDED:
		o->agg.folded = arg;
		return 0;
	case OPT_MAX_PROBES:
		if (tool_parse_uint(arg, TRACE_MAX_PROBES, &o->max_probes) ||
		    !o->max_probes)
			return tool_usage("trace", "--max-probes '%s': 1..%d (pea's PEA_MAX_LINKS, the links of all users)",
					  arg, TRACE_MAX_PROBES);
		return 0;
	case OPT_LATENCY:
		o->agg.latency = true;
		return 0;
	case OPT_OFF_CPU:
		o->off_cpu = true;
		return 0;
	case OPT_KEY:
		if (!*arg || arg[0] == ',' || arg[strlen(arg) - 1] == ',' ||
		    strchr(strchr(arg, ',') ? strchr(arg, ',') + 1 : arg, ','))
			return tool_usage("trace", "--key '%s': KEY, or START_KEY,END_KEY",
					  arg);
		o->agg.lat_key = arg;
		return 0;
	case OPT_MAX_PENDING:
		if (tool_parse_uint(arg, PEA_LAT_MAX_PENDING,
				    &o->agg.max_pending) || !o->agg.max_pending)
			return tool_usage("trace", "--max-pending '%s': 1..%d",
					  arg, PEA_LAT_MAX_PENDING);
		return 0;
	}
	return 1;
}

/*
 * --latency START END: the histogram of the time between them is the
 * first --hist, on END (aggregate.c). 0 or PEA_EXIT_USAGE.
 */
static int check_latency_args(struct trace_opts *o)
{
	struct agg_opts *a = &o->agg;
	int i;

	if (!a->latency) {
		if (a->lat_key || a->max_pending)
			return tool_usage("trace", "--key and --max-pending go with --latency");
		return 0;
	}
	if (o->nprobes != 2)
		return tool_usage("trace", "--latency takes two PROBEs, START and END (%u given)",
				  o->nprobes);
	if (o->flight || o->count)
		return tool_usage("trace", "--latency is counted in the kernel: not with --flight-recorder or --count");
	if (a->nhist == AGG_MAX_SPECS)
		return tool_usage("trace", "at most %d --hist options with --latency",
				  AGG_MAX_SPECS - 1);
	for (i = a->nhist; i > 0; i--) {
		a->hist[i] = a->hist[i - 1];
		a->hist_probe[i] = a->hist_probe[i - 1];
	}
	a->hist[0] = "latency";
	a->hist_probe[0] = 1;
	a->nhist++;
	if (!a->max_pending)
		a->max_pending = AGG_DEFAULT_MAX_PENDING;
	return 0;
}

/*
 * One --hist or --count-by KEY, for probe @probe (-1: given before the
 * first PROBE, for every probe). Checked against the probes later.
 */
static int parse_agg_opt(struct agg_opts *a, bool hist, const char *key,
			 int probe)
{
	const char *opt = hist ? "--hist" : "--count-by";
	int *n = hist ? &a->nhist : &a->ncount;

	if (*n == AGG_MAX_SPECS)
		return tool_usage("trace", "at most %d %s options", AGG_MAX_SPECS,
				  opt);
	if (!*key)
		return tool_usage("trace", "%s needs a key", opt);
	if (!hist && !strcmp(key, "probe"))
		probe = -1;	/* one table for the session, wherever given */
	if (hist) {
		a->hist_probe[*n] = probe;
		a->hist[(*n)++] = key;
	} else {
		a->count_probe[*n] = probe;
		a->count[(*n)++] = key;
	}
	return 0;
}

/*
 * Whether a --count-by kstack table is for probe @p (-1: for any probe).
 */
static bool count_by_kstack(const struct trace_opts *o, int p)
{
	int i;

	for (i = 0; i < o->agg.ncount; i++)
		if (!strcmp(o->agg.count[i], "kstack") &&
		    (p < 0 || o->agg.count_probe[i] < 0 ||
		     o->agg.count_probe[i] == p))
			return true;
	return false;
}

/* What goes with the aggregation options; 0 or PEA_EXIT_USAGE. */
static int check_agg_args(const struct trace_opts *o)
{
	bool agg = o->agg.nhist || o->agg.ncount;

	if (!agg && (o->interval || o->events))
		return tool_usage("trace", "--interval and --events go with --hist or --count-by");
	if (o->agg.lin && !o->agg.nhist)
		return tool_usage("trace", "--lhist goes with --hist: it makes the histograms linear");
	if (!o->agg.ncount && (o->top_set || o->max_keys_set))
		return tool_usage("trace", "--top and --max-keys go with --count-by");
	if (o->interval && o->flight)
		return tool_usage("trace", "--interval does not go with --flight-recorder, which reads the rings only at the end");
	if (o->events && o->quiet)
		return tool_usage("trace", "--events and --quiet contradict each other");
	if (o->agg.folded && !count_by_kstack(o, -1))
		return tool_usage("trace", "--folded FILE writes the stacks of --count-by kstack");
	return 0;
}

/*
 * Parse the options of one segment: argv[1..] up to the next PROBE (or
 * the end). Returns 0 with *@next the index in @argv of that PROBE
 * (@argc: none), or a usage error's exit status.
 */
static int parse_segment(int argc, char **argv, struct trace_opts *o,
			 struct probe_opts *po, const char *probe, int ncpus,
			 bool *help, int *next, bool *dashdash)
{
	int index = probe ? (int)o->nprobes - 1 : -1;
	int c, ret;

	opterr = 0;
	optind = 0;	/* start over, at argv[1] */
	while ((c = getopt_long(argc, argv, "+:as:b:p:C:d:c:jqFho:i:",
				trace_options, NULL)) != -1) {
		if (c == 'h') {
			*help = true;
			return 0;
		}
		if (c == ':')
			return tool_usage("trace", "option '%s' needs a value",
					  argv[optind - 1]);
		if (c == '?')
			return tool_usage("trace", "unknown option '%s'",
					  argv[optind - 1]);
		if (c == OPT_HIST || c == OPT_COUNT_BY)
			ret = parse_agg_opt(&o->agg, c == OPT_HIST, optarg,
					    index);
		else
			ret = parse_probe_opt(c, optarg, po, probe, ncpus);
		if (ret == 1)
			ret = parse_session_opt(c, optarg, o);
		if (ret == 1)
			return tool_usage("trace", "unknown option '%s'",
					  argv[optind - 1]);
		if (ret)
			return ret;
	}
	*next = optind;
	/* getopt took a "--" before the first word it did not read */
	*dashdash = optind > 1 && !strcmp(argv[optind - 1], "--");
	return 0;
}

/* @eff = @def with what @own gave replaced. */
static void probe_opts_merge(struct probe_opts *eff,
			     const struct probe_opts *def,
			     const struct probe_opts *own)
{
	*eff = *def;
	eff->set = own->set;
	if (own->set & PO_ARGS)
		eff->args = own->args;
	if (own->set & PO_CAPTURE) {
		eff->capture_mode = own->capture_mode;
		eff->capture_arg = own->capture_arg;
		eff->capture_len = own->capture_len;
	}
	if (own->set & PO_SPACE) {
		eff->user = own->user;
		eff->kernel = own->kernel;
	}
	if (own->set & PO_PID)
		eff->pid = own->pid;
	if (own->set & PO_CPU)
		eff->cpu = own->cpu;
	if (own->set & PO_MAXACTIVE)
		eff->maxactive = own->maxactive;
	if (own->set & PO_PACKET)
		eff->packet = own->packet;
	if (own->set & PO_FILTER)
		eff->filter = own->filter;
	if (own->set & PO_KSTACK)
		eff->kstack = own->kstack;
	if (own->set & PO_USTACK)
		eff->ustack = own->ustack;
	memcpy(eff->params, own->params, sizeof(eff->params));
	eff->nparams = own->nparams;
}

/* Whether the options in effect for @p suit its kind. */
static int probe_validate(const struct trace_probe *p)
{
	const struct probe_opts *o = &p->o;
	const struct probe_spec *s = &p->spec;
	const char *n = s->text;

	const struct probe_kind *k = s->kind;
	const char *msg = k->check_opts ? k->check_opts(o) : NULL;

	if (msg)
		return probe_usage(n, "%s", msg);
	if (o->filter && !(k->opts & PO_FILTER))
		return probe_usage(n, "--filter is for tracepoints, kprobes, kretprobes, uprobes and uretprobes");
	if (o->kstack && !(k->opts & PO_KSTACK))
		return probe_usage(n, "--kstack is for kprobes, kretprobes and tracepoints");
	if (o->ustack && !(k->opts & PO_USTACK))
		return probe_usage(n, "--ustack is for kprobes, kretprobes, tracepoints, uprobes and uretprobes");
	if (o->packet && !(k->opts & PO_PACKET))
		return probe_usage(n, "--packet is for netfilter");
	if (o->user && o->kernel)
		return probe_usage(n, "--user or --kernel, not both");
	if ((o->user || o->kernel) && !o->capture_mode)
		return probe_usage(n, "--user and --kernel go with --str or --bytes");
	if (o->maxactive && !s->retprobe)
		return probe_usage(n, "--maxactive is for kretprobes and uretprobes");
	if (o->nparams && !(k->opts & PO_PARAMS))
		return probe_usage(n, "fetches ('%s') are for kprobes, kretprobes (their types from BTF), tracepoints (from their fields), uprobes and uretprobes",
				   o->params[0]);
	return 0;
}

/*
 * More probes than the session takes (@more: the PROBE that would be
 * one past TRACE_MAX_PROBES, or NULL: more than --max-probes).
 */
static int too_many(const struct trace_opts *o, const char *more)
{
	unsigned int max = more ? TRACE_MAX_PROBES : o->max_probes;
	const struct trace_probe *p = &o->probes[max];

	if (!more && p->glob)
		return tool_usage("trace", "more than %u probes in one session ('%s' of '%s' is one more): --max-probes N takes up to %d; each probe is a link, and the module bounds one user's links by its max_user_links (default 256; CAP_SYS_ADMIN is exempt) and all users' by %d",
				  max, p->spec.text, p->glob, TRACE_MAX_PROBES,
				  PEA_MAX_LINKS);
	return tool_usage("trace", "more than %u probes in one session ('%s' is one more): --max-probes N takes up to %d; each probe is a link, and the module bounds one user's links by its max_user_links (default 256; CAP_SYS_ADMIN is exempt) and all users' by %d",
			  max, more ? more : p->spec.text, TRACE_MAX_PROBES,
			  PEA_MAX_LINKS);
}

/*
 * PROBE @text named by a glob: one probe per match, after what the
 * session has; each remembers the first (whose options it takes).
 */
static int add_glob(struct trace_opts *o, const char *text)
{
	struct probe_glob_info info;
	unsigned int first = o->nprobes;
	char msg[512], **v;
	size_t n, i;
	int err;

	err = probe_glob_expand(text, &v, &n, &info, msg, sizeof(msg));
	if (err)
		return tool_usage("trace", "'%s': %s", text, msg);
	if (!n) {
		probe_glob_free(v, n);
		if (info.shared)
			return tool_usage("trace", "'%s' matches no %s (%zu on the kprobes blacklist, which the kernel refuses; %zu names that several kernel symbols share, which kprobes refuse: EADDRNOTAVAIL)",
					  text, info.what, info.skipped,
					  info.shared);
		if (info.skipped)
			return tool_usage("trace", "'%s' matches no %s (%zu on the kprobes blacklist, which the kernel refuses)",
					  text, info.what, info.skipped);
		return tool_usage("trace", "'%s' matches no %s", text,
				  info.what);
	}
	for (i = 0; i < n && !err; i++) {
		struct trace_probe *p = &o->probes[o->nprobes];

		if (o->nprobes == TRACE_MAX_PROBES) {
			err = too_many(o, text);
			break;
		}
		o->nprobes++;
		p->glob_text = v[i];	/* freed with the probe */
		p->glob = text;
		p->glob_first = first + 1;
		if (probe_parse(v[i], &p->spec))
			err = PEA_EXIT_USAGE;
	}
	for (; i < n; i++)
		free(v[i]);
	free(v);
	if (err)
		return err;
	fprintf(stderr, "pea: '%s': %zu %s", text, n, info.what);
	if (info.skipped)
		fprintf(stderr, " (%zu more on the kprobes blacklist skipped)",
			info.skipped);
	else if (info.kprobes && !info.blacklist_read)
		fputs(" (the kprobes blacklist is unreadable: debugfs not mounted?)",
		      stderr);
	if (info.shared)
		fprintf(stderr, " (%zu more that several kernel symbols share skipped: kprobes refuse such names)",
			info.shared);
	fputc('\n', stderr);
	return 0;
}

/*
 * The command line: session options and probe defaults, then each PROBE
 * with its own options. Session options are taken anywhere.
 */
int parse_trace_args(int argc, char **argv, struct trace_opts *o,
		     int ncpus, bool *help)
{
	struct probe_opts *po = &o->defaults;
	const char *probe = NULL;
	int pos = 1, next = 1, ret;
	unsigned int i, first;
	bool net, dashdash;

	memset(o, 0, sizeof(*o));
	o->defaults.cpu = -1;
	o->pages = DEFAULT_PAGES;
	o->agg.top = AGG_DEFAULT_TOP;
	o->agg.max_keys = AGG_DEFAULT_MAX_KEYS;
	*help = false;
	o->probes = calloc(TRACE_MAX_PROBES, sizeof(*o->probes));
	if (!o->probes) {
		tool_err("out of memory");
		return PEA_EXIT_ERR;
	}
	for (;;) {
		/* argv[pos - 1] stands in for the program name. */
		ret = parse_segment(argc - pos + 1, argv + pos - 1, o, po,
				    probe, ncpus, help, &next, &dashdash);
		if (ret || *help)
			return ret;
		pos += next - 1;
		if (dashdash) {		/* -- CMD ARGS: the rest */
			if (pos >= argc)
				return tool_usage("trace", "-- needs a command to run, e.g. -- ls -l");
			o->cmd = argv + pos;
			break;
		}
		if (pos >= argc)
			break;
		if (probe && (kfetch_is_expr(argv[pos]) ||
			      (!probe_kind_find(argv[pos]) &&
			       ufetch_is_expr(argv[pos])))) {
			/* FETCH: a parameter, a field behind it (kfetch.c). */
			if (po->nparams == PROBE_MAX_PARAMS)
				return probe_usage(probe, "at most %d fetches per probe ('%s' is one more)",
						   PROBE_MAX_PARAMS, argv[pos]);
			po->params[po->nparams++] = argv[pos++];
			po->set |= PO_PARAMS;
			continue;
		}
		first = o->nprobes;
		if (probe_glob_is(argv[pos])) {
			ret = add_glob(o, argv[pos]);
			if (ret)
				return ret;
		} else {
			if (o->nprobes == TRACE_MAX_PROBES)
				return too_many(o, argv[pos]);
			if (probe_parse(argv[pos], &o->probes[o->nprobes].spec))
				return PEA_EXIT_USAGE;
			o->nprobes++;
		}
		probe = argv[pos];
		po = &o->probes[first].own;
		po->cpu = -1;
		pos++;
	}
	if (o->no_children && !o->cmd && !(o->defaults.set & PO_PID)) {
		for (i = 0; i < o->nprobes; i++)
			if (o->probes[i].own.set & PO_PID)
				break;
		if (i == o->nprobes)
			return tool_usage("trace", "--no-children goes with --pid or -- CMD");
	}
	if (o->off_cpu) {
		/*
		 * Its own probes; --pid, --duration, --top, --json, and
		 * --count-by kstack and --folded FILE for kernel stacks.
		 */
		o->off_cpu_kstack = o->agg.folded || count_by_kstack(o, -1);
		if (o->nprobes || o->agg.nhist ||
		    o->agg.ncount > (o->off_cpu_kstack ? 1 : 0) ||
		    (o->agg.ncount && !count_by_kstack(o, -1)) ||
		    o->agg.latency || o->output || o->flight || o->count ||
		    o->interval || o->events || o->defaults.set & ~PO_PID)
			return tool_usage("trace", "--off-cpu takes no PROBE and, besides --pid or -- CMD, --duration, --top, --json, --count-by kstack and --folded FILE, no other option");
		if (o->cmd && o->defaults.pid)
			return tool_usage("trace", "--off-cpu: --pid or -- CMD, not both (-- CMD traces the command's process)");
		return 0;
	}
	if (!o->nprobes)
		return tool_usage("trace", "which probe? e.g. pea trace kprobe:do_sys_openat2 --str ARG1");
	if (!o->max_probes)
		o->max_probes = TRACE_DEFAULT_MAX_PROBES;
	if (o->nprobes > o->max_probes)
		return too_many(o, NULL);
	for (i = 0; i < o->nprobes; i++) {
		struct trace_probe *p = &o->probes[i];

		if (p->glob_first)	/* a glob's match: the glob's options */
			p->own = o->probes[p->glob_first - 1].own;
		probe_opts_merge(&p->o, &o->defaults, &p->own);
		if (o->cmd && p->o.pid)
			return probe_usage(p->spec.text, "--pid or -- CMD, not both (-- CMD traces the command's process)");
		if (o->cmd)	/* its pid once forked (cmd_trace.c) */
			p->o.pid = INT_MAX;
		else if (p->o.pid && !o->no_children)
			p->o.tree = PEA_PROBE_F_DESCENDANTS;
		p->link_fd = -1;
		/*
		 * --count-by kstack is stackcount: the kernel counts the
		 * stacks; without a table there (an older module) the
		 * records carry them, as with --kstack.
		 */
		if (!p->o.kstack && (p->spec.kind->opts & PO_KSTACK) &&
		    count_by_kstack(o, (int)i))
			p->o.kstack = PEA_KSTACK_MAX;
		ret = probe_validate(p);
		if (ret)
			return ret;
	}
	if (!o->output != !o->format)
		return tool_usage("trace", "--output PATH and --format ctf|perfetto|pftrace go together");
	net = o->output && net_url_is(o->output);
	if (net && o->format != TRACE_OUT_CTF)
		return tool_usage("trace", "--output net://... (an lttng-relayd) takes --format ctf");
	if (!net && (o->session || o->hostname || o->live_interval))
		return tool_usage("trace", "--session, --hostname and --live-interval go with --output net://...");
	if (net) {
		char err[512];
		struct net_url u;

		if (net_url_parse(o->output, &u, err, sizeof(err)))
			return tool_usage("trace", "--output %s", err);
	}
	if (o->snapshot_on_text) {
		if (!o->flight)
			return tool_usage("trace", "--snapshot-on goes with --flight-recorder");
		for (i = 0; i < o->nprobes && !o->snapshot_on; i++)
			if (!strcmp(o->probes[i].spec.text, o->snapshot_on_text))
				o->snapshot_on = &o->probes[i];
		if (!o->snapshot_on)
			return tool_usage("trace", "--snapshot-on '%s': name one of the session's PROBEs as given",
					  o->snapshot_on_text);
	}
	if (o->flight && o->unordered)
		return tool_usage("trace", "--unordered does not go with --flight-recorder");
	if (o->flight && o->count)
		return tool_usage("trace", "--count does not go with --flight-recorder, which prints what the rings hold at the end");
	ret = check_latency_args(o);
	return ret ? ret : check_agg_args(o);
}
