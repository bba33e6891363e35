/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: trace files for viewers (pea trace --output PATH --format FMT).
 *
 * A writer is opened once per session with the probes it will see (their
 * struct trace_fmt, indexed by a probe index: the PROBE's place on the
 * pea trace command line, from 0), then fed every event the session
 * shows, in the order it shows them, with the index of the probe that
 * wrote it, and every lost notice, then closed. Formats:
 *
 *   ctf       a CTF 1.8 trace: TSDL "metadata" and one binary stream per
 *             CPU ring (trace_ctf.c), to a directory or to an
 *             lttng-relayd (trace_sink.h)
 *   perfetto  a Chrome Trace Event JSON file (trace_perfetto.c)
 *   pftrace   a Perfetto protobuf trace with clock snapshots, which lines
 *             up with the host's other Perfetto traces (trace_pftrace.c)
 *
 * trace_out.c opens the writer and sink --output and --format ask for.
 * docs/trace-formats.md describes the layouts.
 */
#ifndef _PEA_TRACE_WRITER_H
#define _PEA_TRACE_WRITER_H

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>
#include "pea_tool.h"

enum trace_out_format {
	TRACE_OUT_NONE = 0,
	TRACE_OUT_CTF,
	TRACE_OUT_PERFETTO,
	TRACE_OUT_PFTRACE,
};

struct trace_writer;

/* What every format implements; see trace_writer_*() below. */
struct trace_writer_ops {
	int (*event)(struct trace_writer *w, unsigned int probe,
		     const struct trace_event *ev);
	int (*lost)(struct trace_writer *w, int cpu, __u64 count);
	int (*tick)(struct trace_writer *w, __u64 now);	/* may be NULL */
	int (*close)(struct trace_writer *w, char *msg, size_t msg_len);
};

/**
 * struct trace_writer - the part every format's writer starts with
 * @ops:     the format's functions
 * @probes:  the probes' formats, @nprobes of them, indexed by probe index
 * @nprobes: how many
 * @ncpus:   CPU rings are 0..@ncpus-1
 * @msg:     the first error in words, if the writer has them ("": none)
 */
struct trace_writer {
	const struct trace_writer_ops *ops;
	const struct trace_fmt *const *probes;
	unsigned int nprobes;
	int ncpus;
	char msg[512];
};

/**
 * struct trace_out_opts - what --output and the options with it ask for
 * @format:           --format
 * @path:             --output: a directory or file, or (CTF) the
 *                    net://HOST[:CTRL[:DATA]] of an lttng-relayd
 * @session:          --session: relayd's session name (net:// only)
 * @hostname:         --hostname: the host relayd files it under
 * @live_interval_ns: packets are ended and (net://) idle streams get
 *                    beacons at least this often (--live-interval; pea
 *                    trace gives it for net:// only, 0: when full)
 * @ordered:          events come in time order across CPUs
 * @start_ns:         with a live interval: when the streams start (ns,
 *                    CLOCK_MONOTONIC; no event is older)
 * @wall_offset_ns:   CLOCK_REALTIME - CLOCK_MONOTONIC: the CTF clock's
 *                    offset, so that viewers show wall-clock times
 * @timeout_ms:       net://: how long relayd may take to answer
 */
struct trace_out_opts {
	enum trace_out_format format;
	const char *path;
	const char *session;
	const char *hostname;
	__u64 live_interval_ns;
	bool ordered;
	__u64 start_ns;
	__s64 wall_offset_ns;
	int timeout_ms;
};

/**
 * struct ctf_opts - how the CTF writer cuts packets
 * @live_interval_ns: end a packet once its first event is this old, and
 *                    (live sinks) give idle streams a beacon this often
 *                    (trace_writer_tick()); 0: only when full or lost
 * @ordered:          events come in time order across CPUs
 * @start_ns:         with a live interval: every CPU's stream starts at
 *                    open, with its empty packet at this time
 * @wall_offset_ns:   the clock's offset to the Unix epoch (0: none)
 */
struct ctf_opts {
	__u64 live_interval_ns;
	bool ordered;
	__u64 start_ns;
	__s64 wall_offset_ns;
};

struct trace_sink;

/* A CTF writer to @sink, which it owns from here on (closed on failure). */
struct trace_writer *trace_ctf_open(struct trace_sink *sink,
				    const struct ctf_opts *o,
				    const struct trace_fmt *const *probes,
				    unsigned int nprobes, int ncpus,
				    char *err, size_t err_len);
struct trace_writer *trace_perfetto_open(const char *path,
					 const struct trace_fmt *const *probes,
					 unsigned int nprobes, int ncpus,
					 char *err, size_t err_len);
struct trace_writer *trace_pftrace_open(const char *path,
					const struct trace_fmt *const *probes,
					unsigned int nprobes, int ncpus,
					char *err, size_t err_len);

/* "ctf", "perfetto" or "pftrace"; TRACE_OUT_NONE for anything else. */
static inline enum trace_out_format trace_writer_format(const char *name)
{
	if (!strcmp(name, "ctf"))
		return TRACE_OUT_CTF;
	if (!strcmp(name, "perfetto"))
		return TRACE_OUT_PERFETTO;
	if (!strcmp(name, "pftrace"))
		return TRACE_OUT_PFTRACE;
	return TRACE_OUT_NONE;
}

/*
 * Open the writer (and sink) of @o for @nprobes probes (@probes stays
 * the caller's until close) on CPUs 0..@ncpus-1 (trace_out.c). Returns
 * NULL with a message in @err on failure.
 */
struct trace_writer *trace_writer_open(const struct trace_out_opts *o,
				       const struct trace_fmt *const *probes,
				       unsigned int nprobes, int ncpus,
				       char *err, size_t err_len);

/*
 * The writer of flight-recorder snapshot @n (from 1) of a session whose
 * --output @o describes, in the same format, holding the snapshot whole
 * (no live interval): beside a file or directory PATH, PATH.N; for an
 * lttng-relayd, a snapshot session of its own named SESSION.N on the same
 * relayd and host, which relayd stores as HOST/SESSION.N-DATE-TIME/pea/.
 * What it is written to, in words, goes to @where (@where_len bytes).
 * NULL with a message in @err on failure.
 */
struct trace_writer *trace_snapshot_open(const struct trace_out_opts *o,
					 unsigned int n, char *where,
					 size_t where_len,
					 const struct trace_fmt *const *probes,
					 unsigned int nprobes, int ncpus,
					 char *err, size_t err_len);

/* One event of probe @probe; 0 or -errno (a write error). */
static inline int trace_writer_event(struct trace_writer *w,
				     unsigned int probe,
				     const struct trace_event *ev)
{
	if (probe >= w->nprobes)
		return -EINVAL;
	return w->ops->event(w, probe, ev);
}

/* @count records lost on the ring of CPU @cpu, after the events so far. */
static inline int trace_writer_lost(struct trace_writer *w, int cpu,
				    __u64 count)
{
	if (cpu < 0 || cpu >= w->ncpus)
		return -EINVAL;
	return w->ops->lost(w, cpu, count);
}

/*
 * The time is @now (ns, CLOCK_MONOTONIC): a live writer ends packets and
 * sends beacons that are due. 0 or -errno.
 */
static inline int trace_writer_tick(struct trace_writer *w, __u64 now)
{
	return w->ops->tick ? w->ops->tick(w, now) : 0;
}

/*
 * Finish the files (or streams) and free @w; 0 or -errno, and then the
 * first error in words in @msg ("" if there are none).
 */
static inline int trace_writer_close(struct trace_writer *w, char *msg,
				     size_t msg_len)
{
	return w->ops->close(w, msg, msg_len);
}

#endif /* _PEA_TRACE_WRITER_H */
