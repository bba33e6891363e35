// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace --output: the writer of --format and, for CTF, its sink: an
 * lttng-relayd for a net:// address, else a directory.
 */
#include <stdio.h>
#include "net_url.h"
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
