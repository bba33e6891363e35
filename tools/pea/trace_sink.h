/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: where the CTF writer (trace_ctf.c) puts a trace. The writer builds
 * the TSDL metadata and whole packets; a sink stores or sends them:
 *
 *   sink_dir.c     a directory: "metadata" and one "stream_CPU" file per
 *                  CPU ring (pea trace --output DIR)
 *   sink_relayd.c  an lttng-relayd, over its producer protocol 2.8
 *                  (pea trace --output net://HOST[:CTRL[:DATA]]), which
 *                  stores the same files and serves them to live viewers
 *
 * The writer calls metadata once, first; then packets, each stream's in
 * order; beacons (live sinks only) for streams with nothing to send; then
 * close, whatever happened before.
 */
#ifndef _PEA_TRACE_SINK_H
#define _PEA_TRACE_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/**
 * struct ctf_packet - one finished packet of a CPU's stream
 * @cpu:        the stream: CPU ring @cpu
 * @seq:        the packet's number in its stream, from 0
 * @ts_begin:   the packet context's timestamp_begin (ns, monotonic)
 * @ts_end:     its timestamp_end
 * @discarded:  its events_discarded (the stream's running total)
 * @head:       header and context bytes, @head_len of them
 * @head_len:   how many
 * @body:       the events, @body_len bytes (may be 0)
 * @body_len:   how many
 *
 * The packet is @head followed by @body; its content and packet size are
 * (@head_len + @body_len) * 8 bits.
 */
struct ctf_packet {
	int cpu;
	__u64 seq;
	__u64 ts_begin, ts_end;
	__u64 discarded;
	const void *head;
	size_t head_len;
	const void *body;
	size_t body_len;
};

struct trace_sink;

/* What every sink implements; 0 or -errno, with @msg set on an error. */
struct trace_sink_ops {
	int (*metadata)(struct trace_sink *s, const char *text, size_t len);
	int (*packet)(struct trace_sink *s, const struct ctf_packet *p);
	/*
	 * Stream @cpu has nothing up to @ts (ns) beyond what was sent, and
	 * its discarded total is @discarded. Only for live sinks (NULL for
	 * the others).
	 */
	int (*beacon)(struct trace_sink *s, int cpu, __u64 ts,
		      __u64 discarded);
	/*
	 * Finish and free @s (also after an error); the first error's
	 * message goes to @msg (@msg_len bytes; none if 0).
	 */
	int (*close)(struct trace_sink *s, char *msg, size_t msg_len);
};

/**
 * struct trace_sink - the part every sink starts with
 * @ops:  its functions
 * @live: viewers read it while it is written: the writer cuts packets at
 *        least every live interval and sends beacons for idle streams
 * @msg:  the first error, in words, for the user ("" if none)
 */
struct trace_sink {
	const struct trace_sink_ops *ops;
	bool live;
	char msg[512];
};

/*
 * A directory sink: creates @dir if needed; NULL with a message in @err
 * on failure.
 */
struct trace_sink *sink_dir_open(const char *dir, char *err, size_t err_len);

/**
 * struct relayd_opts - how to reach an lttng-relayd, and as whom
 * @url:          net://HOST[:CTRL[:DATA]] (net_url.h)
 * @session:      the session name: relayd's and its live viewers' name
 *                of the trace
 * @hostname:     the host name relayd files the session under
 * @live_us:      the live interval, in µs (relayd's live timer)
 * @timeout_ms:   how long a connect, a send or a reply may take
 * @snapshot:     a snapshot session: one flight-recorder snapshot, whole
 *                when it is sent (no live timer, no beacons)
 */
struct relayd_opts {
	const char *url;
	const char *session;
	const char *hostname;
	__u32 live_us;
	int timeout_ms;
	bool snapshot;
};

/*
 * Connect to the relayd of @o and create its session; NULL with a
 * message in @err on failure.
 */
struct trace_sink *sink_relayd_open(const struct relayd_opts *o,
				    char *err, size_t err_len);

#endif /* _PEA_TRACE_SINK_H */
