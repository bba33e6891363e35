// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace: what a session prints: the events of each drain (and to the
 * --output writer), lost-record notices, the live rate line, the
 * aggregation tables, the banner and the summary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libpea.h"
#include "net_url.h"
#include "trace.h"

#define LIVE_EVERY_NS	1000000000ULL

bool count_reached(const struct tracer *t)
{
	return t->o.count && t->shown >= t->o.count;
}

void live_clear(struct tracer *t)
{
	if (t->live_shown) {
		fputs("\r\033[K", stderr);
		t->live_shown = false;
		t->live_hidden = true;
	}
}

/* Redraw the live line once a second, or at once after it was cleared. */
void live_update(struct tracer *t)
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

/*
 * The --output writer failed (@err): say so once, in its words if it has
 * them, and write nothing more to it. The trace goes on.
 */
static void out_failed(struct tracer *t, int err)
{
	if (!err)
		return;
	if (t->out->msg[0])
		tool_err("--output %s: %s", t->o.output, t->out->msg);
	else
		tool_err("writing %s: %s", t->o.output, strerror(-err));
	t->out_failed = true;
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
	out_failed(t, err);
}

void out_tick(struct tracer *t)
{
	if (t->out && !t->out_failed)
		out_failed(t, trace_writer_tick(t->out, tool_now_ns()));
}

/*
 * Losses go to the --output writer as they are seen, and are announced
 * at most once a second per CPU (and at the end), each notice with the
 * losses since the last one, the CPU's total and the time the first of
 * them was seen (CLOCK_MONOTONIC ns, the clock of the event times).
 */
static void announce_lost(struct tracer *t)
{
	__u64 now = tool_now_ns();
	int cpu;

	for (cpu = 0; cpu < t->ncpus; cpu++) {
		struct cpu_count *c = &t->cpus[cpu];
		__u64 n = c->lost_new;

		if (n) {
			c->lost_new = 0;
			out_write(t, NULL, cpu, n);
			if (!c->lost_unsaid)
				c->lost_since_ns = now;
			c->lost_unsaid += n;
			c->lost_total += n;
		}
		if (!c->lost_unsaid || (!t->final && now < c->lost_next_ns))
			continue;
		n = c->lost_unsaid;
		c->lost_unsaid = 0;
		c->lost_next_ns = now + 1000000000ULL;
		if (t->o.json && !t->out_closed)
			printf("{\"type\":\"lost\",\"cpu\":%d,\"lost\":%llu,\"total\":%llu,\"time_ns\":%llu}\n",
			       cpu, (unsigned long long)n,
			       (unsigned long long)c->lost_total,
			       (unsigned long long)c->lost_since_ns);
		else
			fprintf(stderr, "pea: lost %llu records on CPU %d (%llu in all there; the ring was full: try --pages %u, or --pid/--cpu to trace less)\n",
				(unsigned long long)n, cpu,
				(unsigned long long)c->lost_total,
				t->o.pages * 4 > PEA_MAX_RING_PAGES ?
				PEA_MAX_RING_PAGES : t->o.pages * 4);
	}
}

/* Event lines: off with --quiet, and with an aggregation unless --events. */
bool show_events(const struct tracer *t)
{
	return !t->o.quiet && (!t->agg || t->o.events);
}

/* Print the aggregation tables: @last at the end, else when it is time. */
void print_tables(struct tracer *t, bool last)
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
	agg_print(t->agg, stdout, t->o.interval ? ++t->interval_no : 0,
		  t->lost - t->lost_at_tables);
	t->lost_at_tables = t->lost;
	if (fflush(stdout) || ferror(stdout))
		t->out_closed = true;
}

/* Print the batch in time order; stop at --count. */
void flush_batch(struct tracer *t)
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
		free(t->batch[i].ustack);
		free(t->batch[i].fetch);
	}
	t->n = 0;
	announce_lost(t);
	if (!t->out_closed && (fflush(stdout) || ferror(stdout)))
		t->out_closed = true;	/* EPIPE: whoever read it is gone */
}

static void json_link(FILE *f, const struct pea_link_info *li)
{
	fprintf(f, "\"link\":{\"hits\":%llu,\"written\":%llu,\"filtered\":%llu,\"errors\":%llu,\"missed\":%llu,\"dropped\":%llu}",
		(unsigned long long)li->hits,
		(unsigned long long)li->written,
		(unsigned long long)li->filtered,
		(unsigned long long)li->errors,
		(unsigned long long)li->missed,
		(unsigned long long)li->dropped);
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
		/* Its link is its glob's fprobe, the counters theirs. */
		if (p->fprobe_n)
			fprintf(f, ",\"fprobe_functions\":%u", p->fprobe_n);
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
	fprintf(f, "%-*s %10s %10s %10s %10s %10s %8s %8s %10s\n", w, "PROBE",
		"EVENTS", "RECORDS", "HITS", "WRITTEN", "FILTERED", "ERRORS",
		"MISSED", "DROPPED");
	for (i = 0; i < t->o.nprobes; i++) {
		const struct trace_probe *p = &t->o.probes[i];

		fprintf(f, "%-*s %10llu %10llu", w, p->spec.text,
			(unsigned long long)p->shown,
			(unsigned long long)p->records);
		if (p->have_li)
			fprintf(f, " %10llu %10llu %10llu %8llu %8llu %10llu\n",
				(unsigned long long)p->li.hits,
				(unsigned long long)p->li.written,
				(unsigned long long)p->li.filtered,
				(unsigned long long)p->li.errors,
				(unsigned long long)p->li.missed,
				(unsigned long long)p->li.dropped);
		else
			fprintf(f, " %10s %10s %10s %8s %8s %10s\n", "-", "-",
				"-", "-", "-", "-");
	}
	for (i = 0; i < t->o.nprobes; i++)
		if (t->o.probes[i].fprobe_n)
			fprintf(f, "(%s: one fprobe link for its %u functions, its counters on the line of %s)\n",
				t->o.probes[i].glob, t->o.probes[i].fprobe_n,
				t->o.probes[i].spec.text);
}

/*
 * The summary. With one probe it is what it always was; with several,
 * the session's counters add up the probes', and the per-probe ones
 * follow (text: a table; JSON: "probes", there with one probe too).
 */
void print_summary(struct tracer *t)
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
		li.deep += p->li.deep;
		li.hits += p->li.hits;
		li.written += p->li.written;
		li.filtered += p->li.filtered;
		li.errors += p->li.errors;
		li.missed += p->li.missed;
		li.dropped += p->li.dropped;
	}
	if (secs <= 0)
		secs = 1e-9;
	if (li.deep)	/* the kernel's bound of the process-tree filter */
		fprintf(stderr, "pea: %llu hits of processes more than %d generations below the traced one, or already reaped at the hit, were filtered out: some may have been in its tree\n",
			(unsigned long long)li.deep, PEA_TREE_DEPTH_MAX);
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
		fprintf(f, "probe: %llu hits, %llu written, %llu filtered out, %llu errors, %llu missed by %s, %llu dropped (ring full)\n",
			(unsigned long long)li.hits,
			(unsigned long long)li.written,
			(unsigned long long)li.filtered,
			(unsigned long long)li.errors,
			(unsigned long long)li.missed,
			t->o.probes[0].spec.kind->missed_by ?: "kprobes",
			(unsigned long long)li.dropped);
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

/* "kprobe:a, kretprobe:b" for the banner, on stderr. */
void print_banner(const struct tracer *t)
{
	unsigned int i;

	fputs("pea: tracing ", stderr);
	/* Globs make many: their number then, the summary names each. */
	if (t->o.nprobes > TRACE_BANNER_PROBES)
		fprintf(stderr, "%u probes (%s ... %s)", t->o.nprobes,
			t->o.probes[0].spec.text,
			t->o.probes[t->o.nprobes - 1].spec.text);
	for (i = 0; t->o.nprobes <= TRACE_BANNER_PROBES && i < t->o.nprobes;
	     i++)
		fprintf(stderr, "%s%s", i ? ", " : "",
			t->o.probes[i].spec.text);
	fprintf(stderr, " on %zu CPUs; Ctrl-C to end\n",
		pea_buffer__buffer_cnt(t->pb));
	if (t->out_session[0]) {
		struct net_url u;
		char err[8];

		if (net_url_parse(t->o.output, &u, err, sizeof(err)))
			return;
		fprintf(stderr, "pea: streaming to lttng-relayd %s as host %s, session %s; watch live with babeltrace2 --input-format=lttng-live net://%s%s%s:LIVE_PORT/host/%s/%s (relayd's -L port, %d by default)\n",
			t->o.output, t->out_host, t->out_session,
			strchr(u.host, ':') ? "[" : "", u.host,
			strchr(u.host, ':') ? "]" : "", t->out_host,
			t->out_session, NET_URL_LIVE_PORT);
	}
}
