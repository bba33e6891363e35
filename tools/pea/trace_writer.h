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
 *   ctf       a CTF 1.8 trace directory: TSDL "metadata" and one binary
 *             stream file per CPU ring (trace_ctf.c)
 *   perfetto  a Chrome Trace Event JSON file (trace_perfetto.c)
 *
 * docs/trace-formats.md describes both layouts.
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
};

struct trace_writer;

/* What every format implements; see trace_writer_*() below. */
struct trace_writer_ops {
	int (*event)(struct trace_writer *w, unsigned int probe,
		     const struct trace_event *ev);
	int (*lost)(struct trace_writer *w, int cpu, __u64 count);
	int (*close)(struct trace_writer *w);
};

/**
 * struct trace_writer - the part every format's writer starts with
 * @ops:     the format's functions
 * @probes:  the probes' formats, @nprobes of them, indexed by probe index
 * @nprobes: how many
 * @ncpus:   CPU rings are 0..@ncpus-1
 */
struct trace_writer {
	const struct trace_writer_ops *ops;
	const struct trace_fmt *const *probes;
	unsigned int nprobes;
	int ncpus;
};

struct trace_writer *trace_ctf_open(const char *path,
				    const struct trace_fmt *const *probes,
				    unsigned int nprobes, int ncpus,
				    char *err, size_t err_len);
struct trace_writer *trace_perfetto_open(const char *path,
					 const struct trace_fmt *const *probes,
					 unsigned int nprobes, int ncpus,
					 char *err, size_t err_len);

/* "ctf" or "perfetto"; TRACE_OUT_NONE for anything else. */
static inline enum trace_out_format trace_writer_format(const char *name)
{
	if (!strcmp(name, "ctf"))
		return TRACE_OUT_CTF;
	if (!strcmp(name, "perfetto"))
		return TRACE_OUT_PERFETTO;
	return TRACE_OUT_NONE;
}

/*
 * Open a writer of @format at @path for @nprobes probes (@probes stays
 * the caller's until close) on CPUs 0..@ncpus-1. Returns NULL with a
 * message in @err on failure.
 */
static inline struct trace_writer *
trace_writer_open(enum trace_out_format format, const char *path,
		  const struct trace_fmt *const *probes, unsigned int nprobes,
		  int ncpus, char *err, size_t err_len)
{
	if (format == TRACE_OUT_CTF)
		return trace_ctf_open(path, probes, nprobes, ncpus, err,
				      err_len);
	if (format == TRACE_OUT_PERFETTO)
		return trace_perfetto_open(path, probes, nprobes, ncpus, err,
					   err_len);
	snprintf(err, err_len, "unknown trace format");
	return NULL;
}

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

/* Finish the files and free @w; 0 or -errno. */
static inline int trace_writer_close(struct trace_writer *w)
{
	return w->ops->close(w);
}

#endif /* _PEA_TRACE_WRITER_H */
