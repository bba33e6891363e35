// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace --output: the writer of --format and, for CTF, its sink: an
 * lttng-relayd for a net:// address, else a directory; and the writers
 * of flight-recorder snapshots.
 */
#include <stdio.h>
#include <string.h>
#include "net_url.h"
#include "relayd_proto.h"
#include "trace_sink.h"
#include "trace_writer.h"

struct trace_writer *trace_writer_open(const struct trace_out_opts *o,
				       const struct trace_fmt *const *probes,
				       unsigned int nprobes, int ncpus,
				       char *err, size_t err_len)
{
	struct ctf_opts co = {
		.live_interval_ns = o->live_interval_ns,
		.ordered = o->ordered,
		.start_ns = o->start_ns,
		.wall_offset_ns = o->wall_offset_ns,
	};
	struct trace_sink *sink;

	if (o->format == TRACE_OUT_PERFETTO)
		return trace_perfetto_open(o->path, probes, nprobes, ncpus,
					   err, err_len);
	if (o->format == TRACE_OUT_PFTRACE)
		return trace_pftrace_open(o->path, probes, nprobes, ncpus,
					  err, err_len);
	if (o->format != TRACE_OUT_CTF) {
		snprintf(err, err_len, "unknown trace format");
		return NULL;
	}
	if (net_url_is(o->path)) {
		struct relayd_opts ro = {
			.url = o->path,
			.session = o->session,
			.hostname = o->hostname,
			.live_us = (__u32)(o->live_interval_ns / 1000),
			.timeout_ms = o->timeout_ms,
		};

		sink = sink_relayd_open(&ro, err, err_len);
	} else {
		sink = sink_dir_open(o->path, err, err_len);
	}
	if (!sink)
		return NULL;
	return trace_ctf_open(sink, &co, probes, nprobes, ncpus, err, err_len);
}

struct trace_writer *trace_snapshot_open(const struct trace_out_opts *o,
					 unsigned int n, char *where,
					 size_t where_len,
					 const struct trace_fmt *const *probes,
					 unsigned int nprobes, int ncpus,
					 char *err, size_t err_len)
{
	struct ctf_opts co = {
		.ordered = true,
		.wall_offset_ns = o->wall_offset_ns,
	};
	struct trace_out_opts so = {
		.format = o->format,
		.ordered = true,
		.wall_offset_ns = o->wall_offset_ns,
	};
	struct relayd_opts ro = {
		.url = o->path,
		.hostname = o->hostname,
		.timeout_ms = o->timeout_ms,
		.snapshot = true,
	};
	char session[RELAYD_SESSION_NAME_LEN + 16];
	struct trace_sink *sink;

	if (!net_url_is(o->path)) {
		snprintf(where, where_len, "%s.%u", o->path, n);
		so.path = where;
		return trace_writer_open(&so, probes, nprobes, ncpus, err,
					 err_len);
	}
	snprintf(session, sizeof(session), "%s.%u", o->session, n);
	snprintf(where, where_len, "%s (host %s, session %s)", o->path,
		 o->hostname, session);
	if (strlen(session) >= RELAYD_SESSION_NAME_LEN) {
		snprintf(err, err_len,
			 "the snapshot's session name %s is longer than relayd's %d bytes",
			 session, RELAYD_SESSION_NAME_LEN - 1);
		return NULL;
	}
	ro.session = session;
	sink = sink_relayd_open(&ro, err, err_len);
	if (!sink)
		return NULL;
	return trace_ctf_open(sink, &co, probes, nprobes, ncpus, err, err_len);
}
