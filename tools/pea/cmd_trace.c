// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace: attach a kprobe, kretprobe, tracepoint or netfilter hook
 * (netfilter.c) to a pea map and print its hits.
 *
 * Set-up order: a map with one slot per possible CPU, one ring per online
 * CPU through libpea, then the probe, so that no hit finds an empty slot.
 * The rings are drained every 100 ms (or sooner when one passes a quarter
 * full). They are read with PEA_BUFFER_FLAG_ORDERED, so events come in
 * exact time order across CPUs; with --unordered they come in the raw
 * per-CPU order: each drain reads the rings one after the other, each
 * ring in the order it was written. At the end (Ctrl-C, SIGTERM,
 * --duration, --count, or stdout closed) the probe is detached first, the
 * rings drained, and a per-CPU summary printed.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/sysinfo.h>
#include "libpea.h"
#include "pea_tool.h"
#include "tpformat.h"
#include "trace_writer.h"

#define DEFAULT_PAGES	64
#define TICK_MS		100
#define LIVE_EVERY_NS	1000000000ULL
/* Record bytes in a ring beyond the raw payload: header and raw size. */
#define RECORD_OVERHEAD	12

static const char trace_help[] =
"usage: pea trace [OPTIONS] PROBE\n"
"\n"
"Attach a kprobe, kretprobe, uprobe, uretprobe, tracepoint or netfilter\n"
"hook to a pea map and print every hit.\n"
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
"                           dropping new ones) and print them at the end\n"
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
"--flight-recorder the newest records of every CPU are sorted by time\n"
"when the trace ends. Once the probe is\n"
"attached, \"pea: tracing PROBE on N CPUs\" goes to stderr. On exit a per-CPU\n"
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
"length from its IP header. With --json: \"family\", \"hook\",\n"
"\"ifindex_in\", \"ifindex_out\", \"protocol\" (number), \"proto\", \"src\",\n"
"\"dst\", \"sport\", \"dport\", \"icmp_type\", \"icmp_code\" (those the\n"
"captured bytes hold), \"len\", \"captured\" (bytes kept) and \"packet\"\n"
"(those bytes in hex), besides time_ns, cpu, pid, tid and comm (the task\n"
"the hook ran in; 0 and \"\" in softirq context).\n"
"\n"
"Needs root (or CAP_PERFMON) and the pea module (insmod pea.ko);\n"
"netfilter also needs CAP_NET_ADMIN.\n"
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
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct trace_opts {
	struct probe_spec spec;
	bool json, args, quiet, flight, unordered;
	bool user, kernel;
	int capture_mode;
	unsigned int capture_arg, capture_len;
	unsigned int pid;
	int cpu;
	double duration;
	unsigned long long count;
	unsigned int pages;
	unsigned int maxactive;
	unsigned int packet;	/* netfilter: bytes per packet (0: unset) */
	unsigned int kstack;	/* --kstack: frames per stack (0: none) */
	const char *filter;
	const char *output;		/* --output */
	enum trace_out_format format;	/* --format */
};

struct cpu_count {
	__u64 records;
	__u64 bytes;
	__u64 lost_new;		/* not yet announced */
};

struct tracer {
	struct trace_opts o;
	struct trace_fmt fmt;
	struct pea_buffer *pb;
	int map_fd, link_fd;

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
	struct pea_tp_attr tp_attr;	/* tracepoints: predicates filled */
	struct trace_writer *out;	/* --output, or NULL */
	const struct trace_fmt *out_probes[1];
	bool out_failed;
};

static struct tp_format tp_fmt;

static volatile sig_atomic_t trace_stop;

static void on_signal(int sig)
{
	(void)sig;
	trace_stop = 1;
}

/* ---- option parsing ---- */

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

static int parse_capture(struct trace_opts *o, int mode, const char *arg)
{
	const char *rest, *what = mode == PEA_CAPTURE_STR ? "--str" : "--bytes";

	if (o->capture_mode)
		return tool_usage("trace", "only one of --str and --bytes, once");
	if (parse_argn(arg, &rest, &o->capture_arg))
		return tool_usage("trace", "%s '%s': name an argument ARG0..ARG5",
				  what, arg);
	o->capture_mode = mode;
	if (!*rest) {
		if (mode == PEA_CAPTURE_FIXED)
			return tool_usage("trace", "--bytes needs a length: ARGn:LEN");
		o->capture_len = PEA_CAPTURE_MAX;
		return 0;
	}
	if (*rest != ':' ||
	    tool_parse_uint(rest + 1, PEA_CAPTURE_MAX, &o->capture_len) ||
	    !o->capture_len)
		return tool_usage("trace", "%s '%s': the length after ':' must be 1..%d",
				  what, arg, PEA_CAPTURE_MAX);
	return 0;
}

static int parse_trace_args(int argc, char **argv, struct trace_opts *o,
			    int ncpus, bool *help)
{
	unsigned long long v;
	int c, ret;

	memset(o, 0, sizeof(*o));
	o->cpu = -1;
	o->pages = DEFAULT_PAGES;
	*help = false;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":as:b:p:C:d:c:jqFho:", trace_options,
				NULL)) != -1) {
		switch (c) {
		case 'a':
			o->args = true;
			break;
		case 's':
		case 'b':
			ret = parse_capture(o, c == 's' ? PEA_CAPTURE_STR :
						       PEA_CAPTURE_FIXED, optarg);
			if (ret)
				return ret;
			break;
		case OPT_USER:
			o->user = true;
			break;
		case OPT_KERNEL:
			o->kernel = true;
			break;
		case 'p':
			if (tool_parse_uint(optarg, INT_MAX, &o->pid) || !o->pid)
				return tool_usage("trace", "--pid '%s': a process id", optarg);
			break;
		case 'C':
			if (tool_parse_u64(optarg, &v) || v >= (unsigned int)ncpus)
				return tool_usage("trace", "--cpu '%s': this machine has CPUs 0..%d",
						  optarg, ncpus - 1);
			o->cpu = (int)v;
			break;
		case 'd':
			if (tool_parse_seconds(optarg, &o->duration))
				return tool_usage("trace", "--duration '%s': a positive number of seconds",
						  optarg);
			break;
		case 'c':
			if (tool_parse_u64(optarg, &o->count) || !o->count)
				return tool_usage("trace", "--count '%s': a positive number", optarg);
			break;
		case OPT_PAGES:
			if (tool_parse_uint(optarg, PEA_MAX_RING_PAGES, &o->pages) ||
			    !o->pages || (o->pages & (o->pages - 1)))
				return tool_usage("trace", "--pages '%s': a power of two, 1..%d",
						  optarg, PEA_MAX_RING_PAGES);
			break;
		case OPT_MAXACTIVE:
			if (tool_parse_uint(optarg, 4096, &o->maxactive) ||
			    !o->maxactive)
				return tool_usage("trace", "--maxactive '%s': 1..4096", optarg);
			break;
		case OPT_FILTER:
			o->filter = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_FORMAT:
			o->format = trace_writer_format(optarg);
			if (!o->format)
				return tool_usage("trace", "--format '%s': ctf or perfetto",
						  optarg);
			break;
		case OPT_KSTACK:
			o->kstack = PEA_KSTACK_MAX;
			if (optarg &&
			    (tool_parse_uint(optarg, PEA_KSTACK_MAX, &o->kstack) ||
			     !o->kstack))
				return tool_usage("trace", "--kstack=%s: a depth of 1..%d frames",
						  optarg, PEA_KSTACK_MAX);
			break;
		case OPT_PACKET:
			if (tool_parse_uint(optarg, PEA_NF_PACKET_MAX,
					    &o->packet) || !o->packet)
				return tool_usage("trace", "--packet '%s': 1..%d bytes",
						  optarg, PEA_NF_PACKET_MAX);
			break;
		case 'j':
			o->json = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'F':
			o->flight = true;
			break;
		case OPT_UNORDERED:
			o->unordered = true;
			break;
		case 'h':
			*help = true;
			return 0;
		case ':':
			return tool_usage("trace", "option '%s' needs a value",
					  argv[optind - 1]);
		default:
			return tool_usage("trace", "unknown option '%s'",
					  argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return tool_usage("trace", "which probe? e.g. pea trace kprobe:do_sys_openat2 --str ARG1");
	if (optind + 1 < argc)
		return tool_usage("trace", "one probe at a time ('%s' is extra)",
				  argv[optind + 1]);
	if (probe_parse(argv[optind], &o->spec))
		return PEA_EXIT_USAGE;
	if (o->spec.tp && (o->args || o->capture_mode || o->user ||
			   o->kernel || o->maxactive))
		return tool_usage("trace", "--args, --str, --bytes, --user, --kernel and --maxactive are for kprobes");
	if (!o->output != !o->format)
		return tool_usage("trace", "--output PATH and --format ctf|perfetto go together");
	if (o->spec.uprobe && (o->kernel || o->maxactive || o->cpu >= 0))
		return tool_usage("trace", "--kernel, --maxactive and --cpu are not for uprobes");
	if (o->filter && !o->spec.tp)
		return tool_usage("trace", "--filter is for tracepoints");
	if (o->spec.nf && (o->args || o->capture_mode || o->user ||
			   o->kernel || o->maxactive || o->pid ||
			   o->cpu >= 0))
		return tool_usage("trace", "--args, --str, --bytes, --user, --kernel, --maxactive, --pid and --cpu are not for netfilter");
	if (o->kstack && (o->spec.uprobe || o->spec.nf))
		return tool_usage("trace", "--kstack is for kprobes, kretprobes and tracepoints");
	if (o->packet && !o->spec.nf)
		return tool_usage("trace", "--packet is for netfilter");
	if (o->user && o->kernel)
		return tool_usage("trace", "--user or --kernel, not both");
	if ((o->user || o->kernel) && !o->capture_mode)
		return tool_usage("trace", "--user and --kernel go with --str or --bytes");
	if (o->maxactive && !o->spec.retprobe)
		return tool_usage("trace", "--maxactive is for kretprobes");
	if (o->flight && o->unordered)
		return tool_usage("trace", "--unordered does not go with --flight-recorder");
	if (o->flight && o->count)
		return tool_usage("trace", "--count does not go with --flight-recorder, which prints what the rings hold at the end");
	return 0;
}

/* ---- callbacks ---- */

static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct tracer *t = ctx;
	struct trace_event *ev;

	t->received++;
	if (cpu >= 0 && cpu < t->ncpus) {
		t->cpus[cpu].records++;
		t->cpus[cpu].bytes += size + RECORD_OVERHEAD +
			(t->o.flight || t->o.unordered ? 0 : 8);	/* TIME */
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
	if (t->fmt.tp || t->fmt.nf) {
		int err = t->fmt.nf ? decode_nf_record(data, size, ev) :
				      decode_tp_record(data, size, ev);

		if (err == -ENOMEM) {
			t->oom = true;
			return;
		}
		if (err) {
			t->malformed++;
			return;
		}
	} else {
		int err = decode_probe_record(data, size, ev);

		if (err == -ENOMEM) {
			t->oom = true;
			return;
		}
		if (err) {
			t->malformed++;
			return;
		}
	}
	if (!t->o.flight && !t->o.unordered) {
		struct pea_sample_info info;

		/* The time the stream is ordered on: when it was written. */
		if (!pea_sample_info(data, PERF_SAMPLE_TIME, &info))
			ev->rec.time_ns = info.time;
	}
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

static int event_cmp(const void *a, const void *b)
{
	const struct trace_event *x = a, *y = b;

	if (x->rec.time_ns != y->rec.time_ns)
		return x->rec.time_ns < y->rec.time_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

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
	err = ev ? trace_writer_event(t->out, 0, ev) :
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
	 * Ordered delivery: already in time order, across batches too;
	 * --unordered keeps the raw per-CPU order of the drain.
	 */
	if (t->o.flight)
		qsort(t->batch, t->n, sizeof(*t->batch), event_cmp);
	for (i = 0; i < t->n && !t->out_closed; i++) {
		if (count_reached(t))
			break;
		t->shown++;
		if (!t->o.quiet)
			trace_print_event(stdout, &t->fmt, &t->batch[i]);
		out_write(t, &t->batch[i], 0, 0);
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

static void print_summary(struct tracer *t, const struct pea_link_info *li,
			  bool have_li)
{
	double secs = (t->t_end - t->t0) / 1e9;
	__u64 rec = 0, bytes = 0, lost = 0;
	size_t i, cnt = pea_buffer__buffer_cnt(t->pb);
	FILE *f = t->o.json ? stdout : stderr;

	if (secs <= 0)
		secs = 1e-9;
	if (t->o.json) {
		if (t->out_closed)
			return;
		fputs("{\"type\":\"summary\",\"probe\":", f);
		json_put_str(f, t->o.spec.text, strlen(t->o.spec.text));
		fprintf(f, ",\"duration_s\":%.6f,\"events\":%llu,\"cpus\":[",
			secs, (unsigned long long)t->shown);
	} else {
		fprintf(f, "\npea: %s: %llu events in %.2f s\n", t->o.spec.text,
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
		if (have_li)
			fprintf(f, ",\"link\":{\"hits\":%llu,\"written\":%llu,\"filtered\":%llu,\"errors\":%llu,\"missed\":%llu}",
				(unsigned long long)li->hits,
				(unsigned long long)li->written,
				(unsigned long long)li->filtered,
				(unsigned long long)li->errors,
				(unsigned long long)li->missed);
		fputs("}\n", f);
		fflush(f);
		return;
	}
	fprintf(f, "%6s %12llu %14llu %10llu %12.1f\n", "all",
		(unsigned long long)rec, (unsigned long long)bytes,
		(unsigned long long)lost, rec / secs);
	if (have_li)
		fprintf(f, "probe: %llu hits, %llu written, %llu filtered out, %llu errors, %llu missed by %s\n",
			(unsigned long long)li->hits,
			(unsigned long long)li->written,
			(unsigned long long)li->filtered,
			(unsigned long long)li->errors,
			(unsigned long long)li->missed,
			t->o.spec.uprobe ? "pairing returns" : "kprobes");
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

static void fill_attr(const struct trace_opts *o, struct pea_probe_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->flags = PEA_PROBE_F_CLOEXEC;
	if (o->spec.retprobe)
		a->flags |= PEA_PROBE_F_RETPROBE;
	memcpy(a->symbol, o->spec.symbol, sizeof(a->symbol));
	a->offset = o->spec.offset;
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

static int trace_setup(struct tracer *t)
{
	LIBPEA_OPTS(pea_buffer_opts, opts);
	struct pea_probe_attr attr;
	char name[PEA_OBJ_NAME_LEN];
	long page = sysconf(_SC_PAGESIZE);
	int fd;

	snprintf(name, sizeof(name), "trace_%d", (int)getpid());
	fd = pea_map_create(name, t->ncpus, 0);
	if (fd < 0) {
		tool_explain_dev_error("creating a map", fd);
		return PEA_EXIT_ERR;
	}
	t->map_fd = fd;

	if (t->o.flight)
		/* write_backward rings, read only by a snapshot at the end. */
		opts.flags = PEA_BUFFER_FLAG_OVERWRITE;
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
	if (t->fmt.tp) {
		t->tp_attr.size = sizeof(t->tp_attr);
		t->tp_attr.flags = PEA_TP_F_CLOEXEC;
		t->tp_attr.event_id = t->fmt.tp->id;
		t->tp_attr.filter_tgid = (__s32)t->o.pid;
		t->tp_attr.filter_cpu = t->o.cpu;
		t->tp_attr.kstack_depth = t->o.kstack;
		snprintf(t->tp_attr.name, sizeof(t->tp_attr.name), "%s",
			 t->o.spec.symbol);
		fd = tp_attach(t->map_fd, &t->tp_attr, &t->o.spec);
	} else if (t->o.spec.uprobe) {
		fd = uprobe_attach(t->map_fd, &t->o.spec, (int)t->o.pid,
				   t->o.capture_mode, t->o.capture_arg,
				   t->o.capture_len);
	} else if (t->o.spec.nf) {
		fd = nf_attach(t->map_fd, &t->o.spec,
			       t->o.packet ? t->o.packet : 128);
	} else {
		fill_attr(&t->o, &attr);
		fd = probe_attach(t->map_fd, &attr, &t->o.spec);
	}
	if (fd < 0)
		return PEA_EXIT_ERR;
	t->link_fd = fd;
	return PEA_EXIT_OK;
}

/* A flight recorder only waits: the rings are read once, at the end. */
static int flight_wait(struct tracer *t, __u64 deadline)
{
	while (!trace_stop) {
		int timeout = -1;

		if (deadline) {
			__u64 now = tool_now_ns();

			if (now >= deadline)
				break;
			timeout = (deadline - now + 999999) / 1000000;
		}
		poll(NULL, 0, timeout);	/* a signal ends it early */
	}
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
		live_update(t);
	}
	return PEA_EXIT_OK;
}

/* Detach, read what is left, print the summary; returns the exit status. */
static int trace_teardown(struct tracer *t, int rc)
{
	struct pea_link_info li;
	bool have_li = false;

	if (t->link_fd >= 0) {
		memset(&li, 0, sizeof(li));
		have_li = !ioctl(t->link_fd, PEA_LINK_IOC_INFO, &li);
		close(t->link_fd);	/* detaches the probe */
		t->link_fd = -1;
	}
	t->t_end = tool_now_ns();
	if (t->pb) {
		/* Whatever the probe wrote before it went away. */
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
		if (rc == PEA_EXIT_OK)
			print_summary(t, &li, have_li);
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
	ksyms_free((struct ksyms *)t->fmt.ksyms);
	return rc;
}

int cmd_trace(int argc, char **argv)
{
	struct tracer t;
	bool help;
	int rc;

	memset(&t, 0, sizeof(t));
	t.map_fd = -1;
	t.link_fd = -1;
	t.ncpus = get_nprocs_conf();
	if (t.ncpus < 1)
		t.ncpus = 1;
	rc = parse_trace_args(argc, argv, &t.o, t.ncpus, &help);
	if (rc)
		return rc;
	if (help) {
		fputs(trace_help, stdout);
		return PEA_EXIT_OK;
	}
	t.fmt.json = t.o.json;
	t.fmt.args = t.o.args;
	t.fmt.retprobe = t.o.spec.retprobe;
	t.fmt.capture_mode = t.o.capture_mode;
	t.fmt.probe = t.o.spec.text;
	t.fmt.nf = t.o.spec.nf;
	t.fmt.kstack = t.o.kstack;
	if (t.o.spec.tp) {
		const char *why = "";
		char msg[256];
		int n, err = tp_format_load(t.o.spec.tp_sys, t.o.spec.tp_name,
					    &tp_fmt, &why);

		if (err == -ENOENT) {
			tool_err("no tracepoint %s:%s (%s; 'pea list tracepoint:%s:*' lists them)",
				 t.o.spec.tp_sys, t.o.spec.tp_name, why,
				 t.o.spec.tp_sys);
			return PEA_EXIT_ERR;
		}
		if (err) {
			tool_err("cannot read the format of %s: %s",
				 t.o.spec.symbol, why);
			return PEA_EXIT_ERR;
		}
		t.fmt.tp = &tp_fmt;
		if (t.o.filter) {
			n = tp_filter_compile(&tp_fmt, t.o.filter,
					      t.tp_attr.preds, msg, sizeof(msg));
			if (n < 0)
				return tool_usage("trace", "--filter: %s", msg);
			t.tp_attr.nr_preds = n;
		}
	}

	t.cpus = calloc(t.ncpus, sizeof(*t.cpus));
	if (!t.cpus) {
		tool_err("out of memory");
		return PEA_EXIT_ERR;
	}
	if (setup_signals()) {
		tool_err("cannot set up signal handlers: %s", strerror(errno));
		free(t.cpus);
		return PEA_EXIT_ERR;
	}
	if (t.o.output) {
		char msg[512];

		t.out_probes[0] = &t.fmt;
		t.out = trace_writer_open(t.o.format, t.o.output, t.out_probes,
					  1, t.ncpus, msg, sizeof(msg));
		if (!t.out) {
			tool_err("--output: %s", msg);
			free(t.cpus);
			return PEA_EXIT_ERR;
		}
	}
	/* Read once: code of a module loaded later prints as an address. */
	if (t.o.kstack) {
		t.fmt.ksyms = ksyms_load();
		if (!t.fmt.ksyms)
			tool_err("warning: cannot read /proc/kallsyms (%s): stack frames print as addresses",
				 strerror(errno));
	}
	rc = trace_setup(&t);
	if (rc == PEA_EXIT_OK) {
		t.fmt.t0_ns = t.t0;
		/* A flight recorder reads nothing until the end. */
		t.live = isatty(STDERR_FILENO) && !t.o.flight;
		t.live_ns = t.t0;
		/* Also with --json: it is on stderr, and says we are attached. */
		fprintf(stderr, "pea: tracing %s on %zu CPUs; Ctrl-C to end\n",
			t.o.spec.text, pea_buffer__buffer_cnt(t.pb));
		if (!t.o.quiet) {
			trace_print_header(stdout, &t.fmt);
			fflush(stdout);
		}
		rc = trace_loop(&t);
	}
	return trace_teardown(&t, rc);
}
