// SPDX-License-Identifier: GPL-2.0
/*
 * pea: writing a Chrome Trace Event JSON file (pea trace --output FILE
 * --format perfetto), which Perfetto UI and chrome://tracing open.
 *
 * The file is {"traceEvents":[...],"displayTimeUnit":"ns"}, one trace
 * event per line:
 *   - a kretprobe hit (a record with a latency) is a complete event,
 *     "ph":"X", from its entry ("ts": return time - latency) lasting
 *     "dur" (the latency), on the track of its thread ("pid", "tid");
 *   - any other hit is an instant event, "ph":"i", "s":"t";
 *   - lost records are global instant events named "lost records" with
 *     "cpu" and "lost" (the count) in "args";
 *   - the first event of a thread is preceded by "process_name" and
 *     "thread_name" metadata events ("ph":"M") naming it by its comm.
 * Times are CLOCK_MONOTONIC in microseconds with three decimals (ns).
 * Every hit's "args" is the object `pea trace --json` prints for it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pea_tool.h"
#include "trace_writer.h"

struct pf_writer {
	struct trace_writer w;
	FILE *f;
	bool first;		/* no event written yet: no comma */
	__u64 last_ts;		/* the latest time written, ns */
	__u64 *tids;		/* threads named: pid << 32 | tid; 0 free */
	size_t ntids, cap;	/* a power of two */
	struct trace_json_line args;	/* one event's args */
};

static void pf_sep(struct pf_writer *p)
{
	fputs(p->first ? "\n" : ",\n", p->f);
	p->first = false;
}

static void pf_ts(FILE *f, const char *key, __u64 ns)
{
	fprintf(f, ",\"%s\":%llu.%03llu", key, (unsigned long long)(ns / 1000),
		(unsigned long long)(ns % 1000));
}

/* Add @key (not 0) to the set: 1 if it is new, 0 if not, or -ENOMEM. */
static int tid_add(struct pf_writer *p, __u64 key)
{
	size_t i;

	if (2 * (p->ntids + 1) > p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256, j;
		__u64 *t = calloc(cap, sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (j = 0; j < p->cap; j++) {
			if (!p->tids[j])
				continue;
			for (i = (p->tids[j] * 0x9e3779b97f4a7c15ULL) >> 7 & (cap - 1);
			     t[i]; i = (i + 1) & (cap - 1))
				;
			t[i] = p->tids[j];
		}
		free(p->tids);
		p->tids = t;
		p->cap = cap;
	}
	for (i = (key * 0x9e3779b97f4a7c15ULL) >> 7 & (p->cap - 1); p->tids[i];
	     i = (i + 1) & (p->cap - 1))
		if (p->tids[i] == key)
			return 0;
	p->tids[i] = key;
	p->ntids++;
	return 1;
}

static void pf_name(struct pf_writer *p, const char *what, __u32 pid,
		    __u32 tid, const char *comm)
{
	pf_sep(p);
	fprintf(p->f, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
		what, pid, tid);
	json_put_str(p->f, comm, strnlen(comm, 16));
	fputs("}}", p->f);
}

static int pf_event(struct trace_writer *w, unsigned int probe,
		    const struct trace_event *ev)
{
	struct pf_writer *p = (struct pf_writer *)w;
	const struct trace_fmt *fmt = w->probes[probe];
	const char *json;
	size_t len;
	const struct pea_probe_record *r = &ev->rec;
	/* pid 0 is the idle task: keep the key non-zero. */
	__u64 key = ((__u64)r->tgid << 32 | r->pid) + 1;
	int n = tid_add(p, key);

	if (n < 0)
		return n;
	if (n) {
		/* A process is named once, by the first thread seen in it. */
		n = tid_add(p, 1ULL << 63 | r->tgid);
		if (n < 0)
			return n;
		if (n)
			pf_name(p, "process_name", r->tgid, r->tgid, r->comm);
		pf_name(p, "thread_name", r->tgid, r->pid, r->comm);
	}
	pf_sep(p);
	fputs("{\"name\":", p->f);
	json_put_str(p->f, fmt->probe, strlen(fmt->probe));
	fputs(",\"cat\":\"pea\"", p->f);
	if (fmt->retprobe && (r->flags & PEA_REC_F_RETPROBE)) {
		__u64 start = r->time_ns - r->latency_ns;

		if (r->latency_ns > r->time_ns)
			start = 0;
		fputs(",\"ph\":\"X\"", p->f);
		pf_ts(p->f, "ts", start);
		pf_ts(p->f, "dur", r->time_ns - start);
	} else {
		fputs(",\"ph\":\"i\",\"s\":\"t\"", p->f);
		pf_ts(p->f, "ts", r->time_ns);
	}
	fprintf(p->f, ",\"pid\":%u,\"tid\":%u,\"args\":", r->tgid, r->pid);
	/* The --json object, without its '\n': one trace event a line. */
	json = trace_json_line(&p->args, fmt, ev, &len);
	if (!json)
		return -ENOMEM;
	fwrite(json, 1, len, p->f);
	fputc('}', p->f);
	if (r->time_ns > p->last_ts)
		p->last_ts = r->time_ns;
	return ferror(p->f) ? -EIO : 0;
}

static int pf_lost(struct trace_writer *w, int cpu, __u64 count)
{
	struct pf_writer *p = (struct pf_writer *)w;

	pf_sep(p);
	fputs("{\"name\":\"lost records\",\"cat\":\"pea\",\"ph\":\"i\",\"s\":\"g\"",
	      p->f);
	pf_ts(p->f, "ts", p->last_ts);
	fprintf(p->f, ",\"pid\":0,\"tid\":0,\"args\":{\"cpu\":%d,\"lost\":%llu}}",
		cpu, (unsigned long long)count);
	return ferror(p->f) ? -EIO : 0;
}

static int pf_close(struct trace_writer *w, char *msg, size_t msg_len)
{
	struct pf_writer *p = (struct pf_writer *)w;
	int err;

	fputs("\n],\"displayTimeUnit\":\"ns\"}\n", p->f);
	err = fflush(p->f) || ferror(p->f) ? -EIO : 0;
	if (fclose(p->f) && !err)
		err = -errno;
	trace_json_line_close(&p->args);
	free(p->tids);
	free(p);
	if (msg_len)
		*msg = 0;
	return err;
}

static const struct trace_writer_ops pf_ops = {
	.event = pf_event,
	.lost = pf_lost,
	.close = pf_close,
};

struct trace_writer *trace_perfetto_open(const char *path,
					 const struct trace_fmt *const *probes,
					 unsigned int nprobes, int ncpus,
					 char *err, size_t err_len)
{
	struct pf_writer *p = calloc(1, sizeof(*p));

	if (!p) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	p->w.ops = &pf_ops;
	p->w.probes = probes;
	p->w.nprobes = nprobes;
	p->w.ncpus = ncpus;
	p->first = true;
	if (trace_json_line_open(&p->args)) {
		snprintf(err, err_len, "out of memory");
		free(p);
		return NULL;
	}
	p->f = fopen(path, "w");
	if (!p->f) {
		trace_json_line_close(&p->args);
		snprintf(err, err_len, "cannot create %s: %s", path,
			 strerror(errno));
		free(p);
		return NULL;
	}
	fputs("{\"traceEvents\":[", p->f);
	return &p->w;
}
