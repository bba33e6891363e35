// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace: attach kprobes, kretprobes, uprobes, tracepoints or netfilter
 * hooks (netfilter.c) to a pea map and print their hits.
 *
 * The command line is read segment by segment (getopt_long with '+'
 * stops at each PROBE): the options before the first PROBE are the
 * session's and every probe's defaults (struct probe_opts); those after a
 * PROBE are its own. One session has at most TRACE_MAX_PROBES probes.
 *
 * Set-up order: a map with one slot per possible CPU, one ring per online
 * CPU through libpea, then the probes, so that no hit finds an empty slot.
 * Probe i is attached with producer id i + 1, which every record it writes
 * carries: on_sample() finds the probe by it and decodes the record as
 * that probe's kind (tracepoint and netfilter records say so in their
 * flags, which must agree).
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
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/sysinfo.h>
#include "libpea.h"
#include "aggregate.h"
#include "pea_tool.h"
#include "tpformat.h"
#include "trace_writer.h"

#define DEFAULT_PAGES	64
#define TRACE_MAX_PROBES 64	/* PROBE arguments of one session */
#define TICK_MS		100
#define LIVE_EVERY_NS	1000000000ULL
/*
 * Events decoded but not yet delivered: past this many, a drain delivers
 * them at once, so the batch stays below about 2 MiB however fast records
 * come (a flight recorder's snapshot is bounded by its rings, and comes
 * ordered).
 */
#define BATCH_MAX	4096
/* Record bytes in a ring beyond the raw payload: header and raw size. */
#define RECORD_OVERHEAD	12

static const char trace_help[] =
"usage: pea trace [OPTIONS] PROBE [PROBE-OPTIONS] [PROBE [PROBE-OPTIONS]]...\n"
"\n"
"Attach kprobes, kretprobes, uprobes, uretprobes, tracepoints or netfilter\n"
"hooks to a pea map and print every hit.\n"
"\n"
"Several probes (at most 64) share one session: one map and its rings,\n"
"every event tagged with the probe that wrote it, one time order for all.\n"
"Probe options (--args, --str, --bytes, --user, --kernel, --pid, --cpu,\n"
"--filter, --maxactive, --packet, --kstack, --hist, --count-by) given\n"
"after a PROBE apply to it alone; given before the first PROBE they are\n"
"the defaults of every probe (and must then suit every probe's kind: an\n"
"option that does not, e.g. --args for a tracepoint, is a usage error\n"
"naming the probe). An option given after a probe replaces the default\n"
"(--str and --bytes replace each other, as do --user and --kernel;\n"
"--hist and --count-by add tables to the defaults' ones). The other\n"
"options are the session's and may stand anywhere. E.g.\n"
"  pea trace --pid 42 kprobe:vfs_read kretprobe:vfs_write --cpu 0 \\\n"
"      tp:sched:sched_switch --filter 'prev_pid == 42'\n"
"\n"
"PROBE:\n"
"  kprobe:SYMBOL[+OFFSET]   at the entry of kernel function SYMBOL, or OFFSET\n"
"                           bytes into it (an instruction boundary)\n"
"  kretprobe:SYMBOL         at its return: adds the return value and the\n"
"                           latency since entry (arguments and captures are\n"
"                           taken at entry)\n"
"  uprobe:PATH:SYMBOL[+OFFSET]\n"
"                           at the entry of function SYMBOL of the executable\n"
"                           or shared library PATH (from its .symtab or\n"
"                           .dynsym; a number is a file offset), in every\n"
"                           process that runs it: ARGn are its arguments,\n"
"                           --str and --bytes read the process's memory\n"
"  uretprobe:PATH:SYMBOL    at its return, as kretprobe: for user code\n"
"  tracepoint:SUBSYS:NAME   a kernel trace event (tp:SUBSYS:NAME for short;\n"
"                           'pea list' shows them): its fields as tracefs\n"
"                           events/SUBSYS/NAME/format describes them\n"
"  netfilter:FAMILY:HOOK    every packet through a netfilter hook of this\n"
"                           network namespace: FAMILY ipv4 or ipv6, HOOK\n"
"                           PRE_ROUTING, LOCAL_IN, FORWARD, LOCAL_OUT or\n"
"                           POST_ROUTING (any case); packets pass unchanged\n"
"\n"
"Options:\n"
"  -a, --args               show the first six arguments (ARG0..ARG5, hex)\n"
"  -s, --str ARGn[:LEN]     capture the NUL-terminated string ARGn points to,\n"
"                           at most LEN bytes (1..256, default 256)\n"
"  -b, --bytes ARGn:LEN     capture exactly LEN bytes (1..256) at ARGn\n"
"      --user               ARGn is a user-space pointer (the default)\n"
"      --kernel             ARGn is a kernel pointer\n"
"      --filter 'EXPR'      tracepoints: only hits whose fields match, in the\n"
"                           kernel: FIELD OP VALUE joined by &&; OP is ==,\n"
"                           !=, <, >, & (bits in common) on numbers, == and\n"
"                           != on strings, ~ (or == with * or ?) a glob;\n"
"                           e.g. 'pid > 1 && filename ~ \"/usr/bin/*\"'\n"
"      --packet N           netfilter: keep the first N bytes of each packet\n"
"                           from its IP header (1..4096, default 128)\n"
"      --kstack[=DEPTH]     kprobes, kretprobes and tracepoints: record the\n"
"                           kernel call stack of each hit, at most DEPTH\n"
"                           frames (1..127, default 127; a kretprobe's is\n"
"                           the one at entry), printed under the event line,\n"
"                           one frame per line, symbolised from\n"
"                           /proc/kallsyms (module code as sym+0xOFF [mod])\n"
"  -p, --pid PID            only hits in process PID\n"
"  -C, --cpu CPU            only hits on CPU\n"
"  -d, --duration SECONDS   stop after SECONDS (fractions allowed)\n"
"  -c, --count N            stop after N events\n"
"      --pages N            ring data pages per CPU, a power of two\n"
"                           (default 64)\n"
"      --maxactive N        kretprobe: instances in flight at once\n"
"                           (default: the kernel's choice)\n"
"  -j, --json               one JSON object per line (see below)\n"
"  -q, --quiet              print no events, only the summary\n"
"  -F, --flight-recorder    keep only the newest records of each CPU (the\n"
"                           rings overwrite their oldest records instead of\n"
"                           dropping new ones) and print them at the end,\n"
"                           in time order from the horizon on (below)\n"
"      --unordered          the raw per-CPU order: no ordered delivery,\n"
"                           each drain prints ring after ring\n"
"  -o, --output PATH        also write the events shown to a trace file\n"
"                           for viewers, in the --format given\n"
"      --format ctf|perfetto  ctf: PATH is a directory that gets a CTF 1.8\n"
"                           trace (babeltrace2, Trace Compass); perfetto:\n"
"                           PATH is a Chrome Trace Event JSON file\n"
"                           (ui.perfetto.dev, chrome://tracing);\n"
"                           docs/trace-formats.md has the layouts\n"
"  -h, --help               this help\n"
"\n"
"Aggregations (in the tool; a table per probe; docs/aggregations.md):\n"
"      --hist KEY           a log2 histogram of KEY: latency (ns) or ret\n"
"                           (kretprobe, uretprobe), arg0..arg5 (kprobe,\n"
"                           uprobe), or a numeric tracepoint FIELD; buckets\n"
"                           [0], [1], [2, 4), ..., and (..., 0) for negative\n"
"                           values of signed keys (ret, signed fields)\n"
"      --count-by KEY       events per distinct KEY, most first: comm, pid,\n"
"                           tid, cpu, probe, kstack (with --kstack), ret,\n"
"                           arg0..arg5, or a tracepoint FIELD (number or\n"
"                           string); both options may be given up to 8 times\n"
"      --top N              rows per --count-by table (default 10); the\n"
"                           other keys are summed on one line\n"
"      --max-keys N         distinct keys kept per --count-by table (default\n"
"                           10240, at most 1048576): events of keys past it\n"
"                           are counted as \"other keys\", so memory stays\n"
"                           bounded however long the trace runs\n"
"  -i, --interval SECONDS   print the tables every SECONDS (with a time\n"
"                           header) and start them afresh; the last partial\n"
"                           interval prints at the end. Without it, the\n"
"                           tables print once, at the end\n"
"      --events             also print every event (an aggregation turns\n"
"                           the event lines off)\n"
"With --json, a histogram is {\"type\":\"hist\",\"probe\":...,\"key\":...,\n"
"\"count\":N,\"buckets\":[{\"lo\":LO,\"hi\":HI,\"count\":N},...]} (LO <= value <\n"
"HI; non-empty buckets only; negative values: LO -2^63, HI 0) and a count\n"
"table {\"type\":\"count\",\"probe\":...,\"by\":...,\"count\":N,\"keys\":K,\n"
"\"rows\":[{\"key\":...,\"count\":N},...],\"rest\":{\"keys\":K,\"count\":N},\n"
"\"other\":N,\"max_keys\":M}, with \"interval\":I under --interval; they\n"
"come before the summary.\n"
"\n"
"ARGn counts from 0 in the function's C prototype: for\n"
"do_sys_openat2(int dfd, const char __user *filename, struct open_how *how)\n"
"the file name is ARG1.\n"
"\n"
"A tracepoint event prints its fields (not the common_ ones) as\n"
"name=value after the columns; with --json they are the object \"fields\"\n"
"(numbers, strings, arrays as arrays, pointers as \"0x...\" strings), and\n"
"\"probe\" is the tracepoint, \"addr\" its event id.\n"
"\n"
"Output: one line per event on stdout: TIME(s) since the probe was attached,\n"
"CPU, COMM, PID (process), TID (thread), then RET and LAT(us) for a\n"
"kretprobe, ARGS with --args, and the capture: a quoted string (\"...\" after\n"
"it when truncated) or hex bytes, \"(fault)\" when it could not be read.\n"
"Events come in exact time order across CPUs (ordered delivery: TIME is\n"
"when the record was written, just after the hit); with --unordered they\n"
"come in the raw per-CPU order (each drain, every 100 ms or sooner,\n"
"prints one ring after the other, each in the order it was written), and with\n"
"--flight-recorder the rings are read once, when the trace ends, as one\n"
"time-ordered stream from the horizon on: if a CPU's ring wrapped, its\n"
"history before its oldest record is gone, so records of other CPUs older\n"
"than that are left out too (no CPU is missing from what is shown); the\n"
"summary gives the horizon (\"horizon_ns\" with --json, 0: no ring\n"
"wrapped, all shown). Once the probes are attached, \"pea: tracing\n"
"PROBE[, PROBE]... on N CPUs\" goes to stderr. On exit a per-CPU\n"
"summary (records, ring bytes, lost, rate) and the probe's counters go to\n"
"stderr, as do notices of lost records, which are always reported. On a\n"
"terminal, stderr also shows a live rate line.\n"
"\n"
"With --json, stdout has only JSON objects, one per line:\n"
"  {\"type\":\"event\",\"time_ns\":...,\"cpu\":...,\"pid\":...,\"tid\":...,\n"
"   \"comm\":\"...\",\"probe\":\"...\",\"addr\":\"0x...\"[,\"args\":[\"0x...\",...]]\n"
"   [,\"ret\":...,\"latency_ns\":...][,\"str\":\"...\"[,\"truncated\":true]\n"
"   |,\"bytes\":\"hex\"][,\"fault\":true]\n"
"   [,\"kstack\":[\"sym+0xOFF\",...],\"kstack_addr\":[\"0x...\",...]]}\n"
"  {\"type\":\"lost\",\"cpu\":...,\"lost\":...}\n"
"  {\"type\":\"summary\",...}   always the last line\n"
"time_ns is CLOCK_MONOTONIC. Strings are valid UTF-8: bytes that are not\n"
"become U+FFFD, and then \"str_hex\" holds the exact bytes.\n"
"\n"
"With --output, every event shown and every loss also go to PATH: CTF has\n"
"one event class per probe with the fields above (tracepoint fields typed\n"
"from tracefs), a CLOCK_MONOTONIC clock, one stream per CPU, and lost\n"
"records as discarded events ('babeltrace2 PATH' prints it); Perfetto has\n"
"kretprobe hits as slices from entry for the latency on per-thread\n"
"tracks, other hits as instants, losses as \"lost records\" markers, and\n"
"the --json object of each hit in its args.\n"
"\n"
"A netfilter event prints TIME(s), CPU, the hook, the input and output\n"
"ifindex (0: none), then the packet: protocol (TCP, UDP, ICMP, ICMPv6 or\n"
"proto=N), source > destination address (with :port for TCP and UDP,\n"
"[addr]:port for IPv6), type= and code= for ICMP, and len= the packet's\n"
"length from its IP header; IPv6 extension headers are walked to the\n"
"transport header. With --json: \"family\", \"hook\", \"ifindex_in\",\n"
"\"ifindex_out\", \"protocol\" (number, the IP header's), \"transport\"\n"
"(IPv6 behind extension headers: the protocol after them), \"proto\", \"src\",\n"
"\"dst\", \"sport\", \"dport\", \"icmp_type\", \"icmp_code\" (those the\n"
"captured bytes hold), \"len\", \"captured\" (bytes kept) and \"packet\"\n"
"(those bytes in hex), besides time_ns, cpu, pid, tid and comm (the task\n"
"the hook ran in; 0 and \"\" in softirq context).\n"
"\n"
"With several probes, each line has a PROBE column after CPU, then COMM,\n"
"PID and TID, then what its probe records, each part named: ret= and\n"
"lat_us= (kretprobes), args=0x..,... (--args), str=\"...\" or bytes=hex\n"
"or (fault) (captures), a tracepoint's fields, a packet's in= out= and\n"
"decoded line. The summary gives the session's totals (\"probe\" in JSON\n"
"is then the PROBEs separated by spaces, \"link\" their counters added)\n"
"and a table with a row per probe: the events shown, the records read\n"
"and its hits, written, filtered, errors and missed; in JSON that is\n"
"\"probes\":[{\"probe\":...,\"events\":...,\"records\":...,\"link\":{...}}]\n"
"(there with one probe too). --output gives each probe its event class.\n"
"\n"
"Needs the pea module (insmod pea.ko) and root, or: kprobes and\n"
"tracepoints CAP_PERFMON (CAP_SYS_ADMIN at kernel.perf_event_paranoid 3),\n"
"uprobes CAP_SYS_ADMIN, netfilter CAP_NET_ADMIN (docs/security.md).\n"
"Exit status: 0 on success, 1 on a runtime error, 2 on a usage error.\n";

enum {
	OPT_USER = 0x100,
	OPT_KERNEL,
	OPT_PAGES,
	OPT_MAXACTIVE,
	OPT_UNORDERED,
	OPT_FILTER,
	OPT_FORMAT,
	OPT_PACKET,
	OPT_HIST,
	OPT_COUNT_BY,
	OPT_TOP,
	OPT_MAX_KEYS,
	OPT_EVENTS,
	OPT_KSTACK,
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
	{ "json", no_argument, NULL, 'j' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "flight-recorder", no_argument, NULL, 'F' },
	{ "unordered", no_argument, NULL, OPT_UNORDERED },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "hist", required_argument, NULL, OPT_HIST },
	{ "count-by", required_argument, NULL, OPT_COUNT_BY },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "max-keys", required_argument, NULL, OPT_MAX_KEYS },
	{ "interval", required_argument, NULL, 'i' },
	{ "events", no_argument, NULL, OPT_EVENTS },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

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

static volatile sig_atomic_t trace_stop;

static void on_signal(int sig)
{
	(void)sig;
	trace_stop = 1;
}

/* ---- option parsing ---- */

/*
 * A usage error about the options of @probe (NULL: before any probe):
 * the message is prefixed with the probe's text.
 */
static int probe_usage(const char *probe, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int probe_usage(const char *probe, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!probe)
		return tool_usage("trace", "%s", msg);
	return tool_usage("trace", "%s: %s", probe, msg);
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
	}
	return 1;	/* not a probe option */
}

/* A session option, wherever it was given. */
static int parse_session_opt(int c, const char *arg, struct trace_opts *o)
{
	switch (c) {
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
			return tool_usage("trace", "--format '%s': ctf or perfetto",
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
	case 'i':
		if (tool_parse_seconds(arg, &o->interval) || o->interval < 0.1)
			return tool_usage("trace", "--interval '%s': seconds, at least 0.1",
					  arg);
		return 0;
	case OPT_EVENTS:
		o->events = true;
		return 0;
	}
	return 1;
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

/* What goes with the aggregation options; 0 or PEA_EXIT_USAGE. */
static int check_agg_args(const struct trace_opts *o)
{
	bool agg = o->agg.nhist || o->agg.ncount;

	if (!agg && (o->interval || o->events))
		return tool_usage("trace", "--interval and --events go with --hist or --count-by");
	if (!o->agg.ncount && (o->top_set || o->max_keys_set))
		return tool_usage("trace", "--top and --max-keys go with --count-by");
	if (o->interval && o->flight)
		return tool_usage("trace", "--interval does not go with --flight-recorder, which reads the rings only at the end");
	if (o->events && o->quiet)
		return tool_usage("trace", "--events and --quiet contradict each other");
	return 0;
}

/*
 * Parse the options of one segment: argv[1..] up to the next PROBE (or
 * the end). Returns 0 with *@next the index in @argv of that PROBE
 * (@argc: none), or a usage error's exit status.
 */
static int parse_segment(int argc, char **argv, struct trace_opts *o,
			 struct probe_opts *po, const char *probe, int ncpus,
			 bool *help, int *next)
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
}

/* Whether the options in effect for @p suit its kind. */
static int probe_validate(const struct trace_probe *p)
{
	const struct probe_opts *o = &p->o;
	const struct probe_spec *s = &p->spec;
	const char *n = s->text;

	if (s->tp && (o->args || o->capture_mode || o->user || o->kernel ||
		      o->maxactive))
		return probe_usage(n, "--args, --str, --bytes, --user, --kernel and --maxactive are for kprobes");
	if (s->uprobe && (o->kernel || o->maxactive || o->cpu >= 0))
		return probe_usage(n, "--kernel, --maxactive and --cpu are not for uprobes");
	if (o->filter && !s->tp)
		return probe_usage(n, "--filter is for tracepoints");
	if (s->nf && (o->args || o->capture_mode || o->user || o->kernel ||
		      o->maxactive || o->pid || o->cpu >= 0))
		return probe_usage(n, "--args, --str, --bytes, --user, --kernel, --maxactive, --pid and --cpu are not for netfilter");
	if (o->kstack && (s->uprobe || s->nf))
		return probe_usage(n, "--kstack is for kprobes, kretprobes and tracepoints");
	if (o->packet && !s->nf)
		return probe_usage(n, "--packet is for netfilter");
	if (o->user && o->kernel)
		return probe_usage(n, "--user or --kernel, not both");
	if ((o->user || o->kernel) && !o->capture_mode)
		return probe_usage(n, "--user and --kernel go with --str or --bytes");
	if (o->maxactive && !s->retprobe)
		return probe_usage(n, "--maxactive is for kretprobes");
	return 0;
}

/*
 * The command line: session options and probe defaults, then each PROBE
 * with its own options. Session options are taken anywhere.
 */
static int parse_trace_args(int argc, char **argv, struct trace_opts *o,
			    int ncpus, bool *help)
{
	struct probe_opts *po = &o->defaults;
	const char *probe = NULL;
	int pos = 1, next = 1, ret;
	unsigned int i;

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
				    probe, ncpus, help, &next);
		if (ret || *help)
			return ret;
		pos += next - 1;
		if (pos >= argc)
			break;
		if (o->nprobes == TRACE_MAX_PROBES)
			return tool_usage("trace", "at most %d probes in one session ('%s' is one more)",
					  TRACE_MAX_PROBES, argv[pos]);
		if (probe_parse(argv[pos], &o->probes[o->nprobes].spec))
			return PEA_EXIT_USAGE;
		probe = argv[pos];
		po = &o->probes[o->nprobes].own;
		po->cpu = -1;
		o->nprobes++;
		pos++;
	}
	if (!o->nprobes)
		return tool_usage("trace", "which probe? e.g. pea trace kprobe:do_sys_openat2 --str ARG1");
	for (i = 0; i < o->nprobes; i++) {
		struct trace_probe *p = &o->probes[i];

		probe_opts_merge(&p->o, &o->defaults, &p->own);
		p->link_fd = -1;
		ret = probe_validate(p);
		if (ret)
			return ret;
	}
	if (!o->output != !o->format)
		return tool_usage("trace", "--output PATH and --format ctf|perfetto go together");
	if (o->flight && o->unordered)
		return tool_usage("trace", "--unordered does not go with --flight-recorder");
	if (o->flight && o->count)
		return tool_usage("trace", "--count does not go with --flight-recorder, which prints what the rings hold at the end");
	return check_agg_args(o);
}

static void flush_batch(struct tracer *t);

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
	if (!(flags & PEA_REC_F_TRACEPOINT) != !tp->spec.tp ||
	    !(flags & PEA_REC_F_NETFILTER) != !tp->spec.nf)
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
	p = record_probe(t, data, size);
	if (!p) {
		t->malformed++;
		return;
	}
	if (p->spec.nf)
		err = decode_nf_record(data, size, ev);
	else if (p->spec.tp)
		err = decode_tp_record(data, size, ev);
	else
		err = decode_probe_record(data, size, ev);
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

/* ---- output ---- */

static bool count_reached(const struct tracer *t)
{
	return t->o.count && t->shown >= t->o.count;
}

static void live_clear(struct tracer *t)
{
	if (t->live_shown) {
		fputs("\r\033[K", stderr);
		t->live_shown = false;
		t->live_hidden = true;
	}
}

/* Redraw the live line once a second, or at once after it was cleared. */
static void live_update(struct tracer *t)
{
	__u64 now = tool_now_ns();

	if (!t->live)
		return;
	if (now - t->live_ns >= LIVE_EVERY_NS) {
		t->live_rate = (t->received - t->live_recv) * 1e9 /
			       (double)(now - t->live_ns);
		t->live_ns = now;
		t->live_recv = t->received;
	} else if (!t->live_hidden) {
		return;
	}
	t->live_hidden = false;
	fprintf(stderr, "\r\033[K[pea trace] %llu records, %.1f/s, %llu lost",
		(unsigned long long)t->received, t->live_rate,
		(unsigned long long)t->lost);
	t->live_shown = true;
}

/* Hand an event (or, @ev NULL, a loss) to the --output writer. */
static void out_write(struct tracer *t, const struct trace_event *ev,
		      int cpu, __u64 lost)
{
	int err;

	if (!t->out || t->out_failed)
		return;
	err = ev ? trace_writer_event(t->out, ev->probe, ev) :
		   trace_writer_lost(t->out, cpu, lost);
	if (err) {
		tool_err("writing %s: %s", t->o.output, strerror(-err));
		t->out_failed = true;
	}
}

static void announce_lost(struct tracer *t)
{
	int cpu;

	for (cpu = 0; cpu < t->ncpus; cpu++) {
		__u64 n = t->cpus[cpu].lost_new;

		if (!n)
			continue;
		t->cpus[cpu].lost_new = 0;
		out_write(t, NULL, cpu, n);
		if (t->o.json && !t->out_closed)
			printf("{\"type\":\"lost\",\"cpu\":%d,\"lost\":%llu}\n",
			       cpu, (unsigned long long)n);
		else
			fprintf(stderr, "pea: lost %llu records on CPU %d (the ring was full: try --pages %u, or --pid/--cpu to trace less)\n",
				(unsigned long long)n, cpu,
				t->o.pages * 4 > PEA_MAX_RING_PAGES ?
				PEA_MAX_RING_PAGES : t->o.pages * 4);
	}
}

/* Event lines: off with --quiet, and with an aggregation unless --events. */
static bool show_events(const struct tracer *t)
{
	return !t->o.quiet && (!t->agg || t->o.events);
}

/* Print the aggregation tables: @last at the end, else when it is time. */
static void print_tables(struct tracer *t, bool last)
{
	__u64 now;

	if (!t->agg || t->out_closed)
		return;
	if (!last) {
		now = tool_now_ns();
		if (!t->o.interval || now < t->next_interval)
			return;
		while (t->next_interval <= now)
			t->next_interval += (__u64)(t->o.interval * 1e9);
	}
	live_clear(t);
	agg_print(t->agg, stdout, t->o.interval ? ++t->interval_no : 0);
	if (fflush(stdout) || ferror(stdout))
		t->out_closed = true;
}

/* Print the batch in time order; stop at --count. */
static void flush_batch(struct tracer *t)
{
	bool lost = false;
	size_t i;
	int cpu;

	for (cpu = 0; cpu < t->ncpus && !lost; cpu++)
		lost = t->cpus[cpu].lost_new;
	/* Lines are about to go out on the live line's terminal: make room. */
	if ((t->n && isatty(STDOUT_FILENO)) || lost)
		live_clear(t);
	/*
	 * Ordered delivery (and an ordered snapshot): already in time
	 * order, across batches too; --unordered keeps the raw per-CPU
	 * order of the drain.
	 */
	for (i = 0; i < t->n && !t->out_closed; i++) {
		const struct trace_event *ev = &t->batch[i];
		struct trace_probe *p = &t->o.probes[ev->probe];

		if (count_reached(t))
			break;
		t->shown++;
		p->shown++;
		if (t->agg)
			agg_add(t->agg, ev);
		if (show_events(t))
			trace_print_event(stdout, &p->fmt, ev);
		out_write(t, ev, 0, 0);
	}
	for (i = 0; i < t->n; i++) {
		free(t->batch[i].raw);
		free(t->batch[i].kstack);
	}
	t->n = 0;
	announce_lost(t);
	if (!t->out_closed && (fflush(stdout) || ferror(stdout)))
		t->out_closed = true;	/* EPIPE: whoever read it is gone */
}

static void json_link(FILE *f, const struct pea_link_info *li)
{
	fprintf(f, "\"link\":{\"hits\":%llu,\"written\":%llu,\"filtered\":%llu,\"errors\":%llu,\"missed\":%llu}",
		(unsigned long long)li->hits,
		(unsigned long long)li->written,
		(unsigned long long)li->filtered,
		(unsigned long long)li->errors,
		(unsigned long long)li->missed);
}

/* The probes' texts, separated by @sep, as one JSON string. */
static void json_probe_list(FILE *f, const struct tracer *t, const char *sep)
{
	size_t len = 0, n;
	unsigned int i;
	char *buf;

	for (i = 0; i < t->o.nprobes; i++)
		len += strlen(t->o.probes[i].spec.text) + strlen(sep);
	buf = malloc(len + 1);
	if (!buf) {
		json_put_str(f, "", 0);
		return;
	}
	for (i = 0, len = 0; i < t->o.nprobes; i++) {
		n = strlen(t->o.probes[i].spec.text);
		if (i) {
			memcpy(buf + len, sep, strlen(sep));
			len += strlen(sep);
		}
		memcpy(buf + len, t->o.probes[i].spec.text, n);
		len += n;
	}
	json_put_str(f, buf, len);
	free(buf);
}

/* JSON: "probes":[{"probe":...,"events":...,"records":...,"link":...}] */
static void json_probes(FILE *f, const struct tracer *t)
{
	unsigned int i;

	fputs(",\"probes\":[", f);
	for (i = 0; i < t->o.nprobes; i++) {
		const struct trace_probe *p = &t->o.probes[i];

		fputs(i ? ",{\"probe\":" : "{\"probe\":", f);
		json_put_str(f, p->spec.text, strlen(p->spec.text));
		fprintf(f, ",\"events\":%llu,\"records\":%llu",
			(unsigned long long)p->shown,
			(unsigned long long)p->records);
		if (p->have_li) {
			fputc(',', f);
			json_link(f, &p->li);
		}
		fputc('}', f);
	}
	fputc(']', f);
}

/* Text: one line per probe, its events, records and link counters. */
static void text_probes(FILE *f, const struct tracer *t)
{
	int w = 5;
	unsigned int i;

	for (i = 0; i < t->o.nprobes; i++)
		if ((int)strlen(t->o.probes[i].spec.text) > w)
			w = strlen(t->o.probes[i].spec.text);
	fprintf(f, "%-*s %10s %10s %10s %10s %10s %8s %8s\n", w, "PROBE",
		"EVENTS", "RECORDS", "HITS", "WRITTEN", "FILTERED", "ERRORS",
		"MISSED");
	for (i = 0; i < t->o.nprobes; i++) {
		const struct trace_probe *p = &t->o.probes[i];

		fprintf(f, "%-*s %10llu %10llu", w, p->spec.text,
			(unsigned long long)p->shown,
			(unsigned long long)p->records);
		if (p->have_li)
			fprintf(f, " %10llu %10llu %10llu %8llu %8llu\n",
				(unsigned long long)p->li.hits,
				(unsigned long long)p->li.written,
				(unsigned long long)p->li.filtered,
				(unsigned long long)p->li.errors,
				(unsigned long long)p->li.missed);
		else
			fprintf(f, " %10s %10s %10s %8s %8s\n", "-", "-", "-",
				"-", "-");
	}
}

/*
 * The summary. With one probe it is what it always was; with several,
 * the session's counters add up the probes', and the per-probe ones
 * follow (text: a table; JSON: "probes", there with one probe too).
 */
static void print_summary(struct tracer *t)
{
	double secs = (t->t_end - t->t0) / 1e9;
	__u64 rec = 0, bytes = 0, lost = 0;
	size_t i, cnt = pea_buffer__buffer_cnt(t->pb);
	FILE *f = t->o.json ? stdout : stderr;
	bool multi = t->o.nprobes > 1, have_li = false;
	struct pea_link_info li;
	unsigned int k;

	memset(&li, 0, sizeof(li));
	for (k = 0; k < t->o.nprobes; k++) {
		const struct trace_probe *p = &t->o.probes[k];

		if (!p->have_li)
			continue;
		have_li = true;
		li.hits += p->li.hits;
		li.written += p->li.written;
		li.filtered += p->li.filtered;
		li.errors += p->li.errors;
		li.missed += p->li.missed;
	}
	if (secs <= 0)
		secs = 1e-9;
	if (t->o.json) {
		if (t->out_closed)
			return;
		fputs("{\"type\":\"summary\",\"probe\":", f);
		json_probe_list(f, t, " ");
		fprintf(f, ",\"duration_s\":%.6f,\"events\":%llu,\"cpus\":[",
			secs, (unsigned long long)t->shown);
	} else {
		if (multi)
			fprintf(f, "\npea: %u probes: %llu events in %.2f s\n",
				t->o.nprobes, (unsigned long long)t->shown, secs);
		else
			fprintf(f, "\npea: %s: %llu events in %.2f s\n",
				t->o.probes[0].spec.text,
				(unsigned long long)t->shown, secs);
		fprintf(f, "%6s %12s %14s %10s %12s\n", "CPU", "RECORDS",
			"BYTES", "LOST", "RATE/s");
	}
	for (i = 0; i < cnt; i++) {
		int cpu = pea_buffer__buffer_cpu(t->pb, i);
		struct cpu_count *c = &t->cpus[cpu];
		__u64 l = 0;

		pea_buffer__lost(t->pb, i, &l);
		rec += c->records;
		bytes += c->bytes;
		lost += l;
		if (t->o.json)
			fprintf(f, "%s{\"cpu\":%d,\"records\":%llu,\"bytes\":%llu,\"lost\":%llu,\"rate\":%.3f}",
				i ? "," : "", cpu,
				(unsigned long long)c->records,
				(unsigned long long)c->bytes,
				(unsigned long long)l, c->records / secs);
		else
			fprintf(f, "%6d %12llu %14llu %10llu %12.1f\n", cpu,
				(unsigned long long)c->records,
				(unsigned long long)c->bytes,
				(unsigned long long)l, c->records / secs);
	}
	if (t->o.json) {
		fprintf(f, "],\"records\":%llu,\"bytes\":%llu,\"lost\":%llu,\"malformed\":%llu",
			(unsigned long long)rec, (unsigned long long)bytes,
			(unsigned long long)lost,
			(unsigned long long)t->malformed);
		if (have_li) {
			fputc(',', f);
			json_link(f, &li);
		}
		json_probes(f, t);
		if (t->o.flight)
			fprintf(f, ",\"horizon_ns\":%llu", (unsigned long long)
				pea_buffer__snapshot_horizon(t->pb));
		fputs("}\n", f);
		fflush(f);
		return;
	}
	fprintf(f, "%6s %12llu %14llu %10llu %12.1f\n", "all",
		(unsigned long long)rec, (unsigned long long)bytes,
		(unsigned long long)lost, rec / secs);
	if (multi)
		text_probes(f, t);
	else if (have_li)
		fprintf(f, "probe: %llu hits, %llu written, %llu filtered out, %llu errors, %llu missed by %s\n",
			(unsigned long long)li.hits,
			(unsigned long long)li.written,
			(unsigned long long)li.filtered,
			(unsigned long long)li.errors,
			(unsigned long long)li.missed,
			t->o.probes[0].spec.uprobe ? "pairing returns" : "kprobes");
	if (t->o.flight) {
		__u64 h = pea_buffer__snapshot_horizon(t->pb);

		if (!h)
			fputs("pea: flight recorder: no ring wrapped; every record is shown\n",
			      f);
		else
			fprintf(f, "pea: flight recorder: every CPU's records from %.6f s on (the horizon; a ring that wrapped lost what came before)\n",
				h > t->t0 ? (h - t->t0) / 1e9 : 0.0);
	}
	if (lost)
		fprintf(f, "pea: %llu records were lost in all: the rings filled faster than they were read (try a larger --pages)\n",
			(unsigned long long)lost);
	if (t->malformed)
		fprintf(f, "pea: %llu records could not be decoded\n",
			(unsigned long long)t->malformed);
}

/* ---- set-up and the loop ---- */

static int setup_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: end the wait */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGHUP, &sa, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);	/* a closed stdout shows as EPIPE */
	return 0;
}

static void fill_attr(const struct trace_probe *p, __u64 id,
		      struct pea_probe_attr *a)
{
	const struct probe_opts *o = &p->o;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->flags = PEA_PROBE_F_CLOEXEC;
	if (p->spec.retprobe)
		a->flags |= PEA_PROBE_F_RETPROBE;
	memcpy(a->symbol, p->spec.symbol, sizeof(a->symbol));
	a->offset = p->spec.offset;
	a->id = id;
	a->filter_tgid = (__s32)o->pid;
	a->filter_cpu = o->cpu;
	a->capture_mode = o->capture_mode;
	if (o->capture_mode) {
		a->capture_arg = o->capture_arg;
		a->capture_len = o->capture_len;
		a->capture_flags = o->kernel ? 0 : PEA_CAPTURE_USER;
	}
	a->maxactive = o->maxactive;
	a->kstack_depth = o->kstack;
}

/* Attach probe @p, whose records carry @id; the link fd or -errno. */
static int probe_setup(struct tracer *t, struct trace_probe *p, __u64 id)
{
	struct pea_probe_attr attr;

	if (p->spec.tp) {
		p->tp_attr.size = sizeof(p->tp_attr);
		p->tp_attr.flags = PEA_TP_F_CLOEXEC;
		p->tp_attr.id = id;
		p->tp_attr.event_id = p->tpf->id;
		p->tp_attr.filter_tgid = (__s32)p->o.pid;
		p->tp_attr.filter_cpu = p->o.cpu;
		p->tp_attr.kstack_depth = p->o.kstack;
		snprintf(p->tp_attr.name, sizeof(p->tp_attr.name), "%s",
			 p->spec.symbol);
		return tp_attach(t->map_fd, &p->tp_attr, &p->spec);
	}
	if (p->spec.uprobe)
		return uprobe_attach(t->map_fd, &p->spec, id, (int)p->o.pid,
				     p->o.capture_mode, p->o.capture_arg,
				     p->o.capture_len);
	if (p->spec.nf)
		return nf_attach(t->map_fd, &p->spec, id,
				 p->o.packet ? p->o.packet : 128);
	fill_attr(p, id, &attr);
	return probe_attach(t->map_fd, &attr, &p->spec);
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

	t->t0 = tool_now_ns();
	/* Records carry the probe's index + 1: id 0 would be the link's id. */
	for (i = 0; i < t->o.nprobes; i++) {
		fd = probe_setup(t, &t->o.probes[i], i + 1);
		if (fd < 0)
			return PEA_EXIT_ERR;
		t->o.probes[i].link_fd = fd;
	}
	return PEA_EXIT_OK;
}

/*
 * A flight recorder only waits: the rings are read once, at the end. The
 * stop signals are blocked but inside ppoll(): one that came between the
 * check of trace_stop and the wait would otherwise be lost, and poll()
 * without a timeout would never return.
 */
static int flight_wait(struct tracer *t, __u64 deadline)
{
	sigset_t stop, old;

	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, &old);
	while (!trace_stop) {
		struct timespec ts, *tsp = NULL;

		if (deadline) {
			__u64 now = tool_now_ns();

			if (now >= deadline)
				break;
			ts.tv_sec = (deadline - now) / 1000000000ULL;
			ts.tv_nsec = (deadline - now) % 1000000000ULL;
			tsp = &ts;
		}
		ppoll(NULL, 0, tsp, &old);	/* a signal ends it early */
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	(void)t;
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
	while (!trace_stop && !t->out_closed && !count_reached(t)) {
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
		print_tables(t, false);
		live_update(t);
	}
	return PEA_EXIT_OK;
}

/* Detach every probe, keeping its counters. */
static void trace_detach(struct tracer *t)
{
	unsigned int i;

	for (i = 0; i < t->o.nprobes; i++) {
		struct trace_probe *p = &t->o.probes[i];

		if (p->link_fd < 0)
			continue;
		memset(&p->li, 0, sizeof(p->li));
		p->have_li = !ioctl(p->link_fd, PEA_LINK_IOC_INFO, &p->li);
		close(p->link_fd);	/* detaches the probe */
		p->link_fd = -1;
	}
}

static void trace_free_probes(struct trace_opts *o)
{
	unsigned int i;

	ksyms_free(o->ksyms);
	o->ksyms = NULL;
	if (!o->probes)
		return;
	for (i = 0; i < o->nprobes; i++)
		free(o->probes[i].tpf);
	free(o->probes);
	o->probes = NULL;
}

/* Detach, read what is left, print the summary; returns the exit status. */
static int trace_teardown(struct tracer *t, int rc)
{
	trace_detach(t);
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
			flush_batch(t);
		}
		live_clear(t);
		if (rc == PEA_EXIT_OK) {
			print_tables(t, true);
			print_summary(t);
		}
		pea_buffer__free(t->pb);
	}
	if (t->out) {
		int err = trace_writer_close(t->out);

		if (err && !t->out_failed)
			tool_err("writing %s: %s", t->o.output, strerror(-err));
		if ((err || t->out_failed) && rc == PEA_EXIT_OK)
			rc = PEA_EXIT_ERR;
		t->out = NULL;
	}
	if (t->map_fd >= 0)
		close(t->map_fd);
	free(t->batch);
	free(t->cpus);
	agg_free(t->agg);
	trace_free_probes(&t->o);
	return rc;
}

/*
 * A tracepoint probe's format from tracefs, and its --filter compiled;
 * 0 or an exit status.
 */
static int probe_load_tp(struct trace_probe *p)
{
	struct probe_spec *s = &p->spec;
	const char *why = "";
	char msg[256];
	int n, err;

	p->tpf = malloc(sizeof(*p->tpf));
	if (!p->tpf) {
		tool_err("out of memory");
		return PEA_EXIT_ERR;
	}
	err = tp_format_load(s->tp_sys, s->tp_name, p->tpf, &why);
	if (err == -ENOENT) {
		tool_err("no tracepoint %s:%s (%s; 'pea list tracepoint:%s:*' lists them)",
			 s->tp_sys, s->tp_name, why, s->tp_sys);
		return PEA_EXIT_ERR;
	}
	if (err) {
		tool_err("cannot read the format of %s: %s", s->symbol, why);
		return PEA_EXIT_ERR;
	}
	p->fmt.tp = p->tpf;
	if (p->o.filter) {
		n = tp_filter_compile(p->tpf, p->o.filter, p->tp_attr.preds,
				      msg, sizeof(msg));
		if (n < 0)
			return probe_usage(p->spec.text, "--filter: %s", msg);
		p->tp_attr.nr_preds = n;
	}
	return 0;
}

/* How probe @p prints; @probe_col: the PROBE column's width (0: none). */
static void probe_fmt(struct tracer *t, struct trace_probe *p, int probe_col)
{
	p->fmt.json = t->o.json;
	p->fmt.args = p->o.args;
	p->fmt.retprobe = p->spec.retprobe;
	p->fmt.capture_mode = p->o.capture_mode;
	p->fmt.probe = p->spec.text;
	p->fmt.nf = p->spec.nf;
	p->fmt.kstack = p->o.kstack;
	p->fmt.ksyms = t->o.ksyms;
	p->fmt.probe_col = probe_col;
}

/* "kprobe:a, kretprobe:b" for the banner, on stderr. */
static void print_banner(const struct tracer *t)
{
	unsigned int i;

	fputs("pea: tracing ", stderr);
	for (i = 0; i < t->o.nprobes; i++)
		fprintf(stderr, "%s%s", i ? ", " : "",
			t->o.probes[i].spec.text);
	fprintf(stderr, " on %zu CPUs; Ctrl-C to end\n",
		pea_buffer__buffer_cnt(t->pb));
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
	/* Several probes: every line names its probe, in a column. */
	for (i = 0; t.o.nprobes > 1 && i < t.o.nprobes; i++)
		if ((int)strlen(t.o.probes[i].spec.text) > probe_col)
			probe_col = strlen(t.o.probes[i].spec.text);
	/*
	 * Kernel stacks: the symbols, read once for every probe (code of a
	 * module loaded later prints as an address).
	 */
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
		if (p->spec.tp) {
			rc = probe_load_tp(p);
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
	if (setup_signals()) {
		tool_err("cannot set up signal handlers: %s", strerror(errno));
		free(t.cpus);
		agg_free(t.agg);
		trace_free_probes(&t.o);
		return PEA_EXIT_ERR;
	}
	if (t.o.output) {
		char msg[512];

		t.out = trace_writer_open(t.o.format, t.o.output, t.out_probes,
					  t.o.nprobes, t.ncpus, msg,
					  sizeof(msg));
		if (!t.out) {
			tool_err("--output: %s", msg);
			free(t.cpus);
			agg_free(t.agg);
			trace_free_probes(&t.o);
			return PEA_EXIT_ERR;
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
		rc = trace_loop(&t);
	}
	return trace_teardown(&t, rc);
}
