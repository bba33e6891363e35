// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the lttng-relayd sink of the CTF writer (pea trace --output
 * net://HOST[:CTRL[:DATA]] --format ctf).
 *
 * Two TCP connections to the relayd, control and data, with the
 * messages of relayd_proto.c. At open, on the control connection:
 * VERSION 2.8 (relayd answers with its own; pea needs major 2, minor 8
 * or later), CREATE_SESSION (the session name, the host name, the live
 * timer), ADD_STREAM of the "metadata" stream and SEND_METADATA with the
 * TSDL text (no reply). A CPU's stream is added with its first packet:
 * ADD_STREAM "stream_N", then STREAMS_SENT, which shows the streams added
 * so far to live viewers (babeltrace2 2.0 drops a trace it finds without
 * a data stream, so the metadata is shown with the first one; a live
 * writer starts every CPU's stream at open). Each packet goes on the data connection after a
 * data header with the stream's next sequence number, then its index
 * (SEND_INDEX: sizes, timestamps, events_discarded, the CPU) on the
 * control connection; an idle stream's beacon is an index of size 0,
 * which lets viewers go past it up to its timestamp. At close, a live
 * interval (0.5 to 1 s) after the last packets (for viewers to read
 * them), every
 * stream gets CLOSE_STREAM with its last sequence number (the metadata,
 * which has no data packets: -1), and the connections are closed, which
 * ends the session.
 *
 * relayd stores the streams under its output directory as
 * HOST/SESSION-YYYYMMDD-HHMMSS/pea/ (metadata, stream_N, and its index/),
 * byte for byte what a directory sink writes.
 *
 * Blocking sockets, each connect, send and reply bounded by
 * @timeout_ms: the tool waits at most that long once. Any failure (no
 * answer, a reply code other than LTTNG_OK, a connection reset) is kept
 * with a message: the sink sends nothing more and every later call
 * returns the same error, at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "net_url.h"
#include "relayd_proto.h"
#include "trace_sink.h"

#define CTF_STREAM_ID	0	/* pea's one CTF stream class */

struct relayd_stream {
	int cpu;
	__u64 handle;
	__u64 next_seq;		/* of the next packet; also packet_seq_num */
};

struct relayd_sink {
	struct trace_sink s;
	struct net_url url;
	int timeout_ms;
	__u32 live_us;
	int ctrl, data;		/* the connections, -1 when closed */
	__u64 meta;		/* the metadata stream's handle */
	char path[RELAYD_PATH_LEN];
	struct relayd_stream *st;
	int nst;
	int err;		/* the first error: nothing is sent after it */
	unsigned char msg[RELAYD_MSG_MAX];
};

/* ---- errors ---- */

/* Keep the first error with its message; returns it. */
static int rs_fail(struct relayd_sink *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int rs_fail(struct relayd_sink *r, int err, const char *fmt, ...)
{
	va_list ap;

	if (r->err)
		return r->err;
	r->err = err;
	va_start(ap, fmt);
	vsnprintf(r->s.msg, sizeof(r->s.msg), fmt, ap);
	va_end(ap);
	return err;
}

/* The error of an I/O call on connection @fd during @what. */
static int rs_io_fail(struct relayd_sink *r, int fd, int err,
		      const char *what)
{
	unsigned int port = fd == r->data ? r->url.data : r->url.ctrl;
	const char *conn = fd == r->data ? "data" : "control";

	if (err == -ETIMEDOUT)
		return rs_fail(r, err,
			       "lttng-relayd at %s:%u did not answer within %d ms (%s, %s connection); the stream to it stops here",
			       r->url.host, port, r->timeout_ms, what, conn);
	return rs_fail(r, err,
		       "lost the connection to lttng-relayd at %s:%u (%s, %s connection: %s); the stream to it stops here",
		       r->url.host, port, what, conn, strerror(-err));
}

/* ---- sockets ---- */

/* Connect to @host:@port within @timeout_ms; the socket or -errno. */
static int tcp_connect(const char *host, unsigned int port, int timeout_ms)
{
	struct addrinfo hints = { 0 }, *res, *ai;
	struct timeval tv = {
		.tv_sec = timeout_ms / 1000,
		.tv_usec = timeout_ms % 1000 * 1000,
	};
	char service[16];
	int fd = -1, err = -EHOSTUNREACH, one = 1;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(service, sizeof(service), "%u", port);
	if (getaddrinfo(host, service, &hints, &res))
		return -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		struct pollfd pfd;
		socklen_t len = sizeof(err);

		fd = socket(ai->ai_family,
			    ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    ai->ai_protocol);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) &&
		    errno != EINPROGRESS) {
			err = -errno;
			goto next;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, timeout_ms) != 1) {
			err = -ETIMEDOUT;
			goto next;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
			err = errno;
		err = -err;
		if (err)
			goto next;
		/* Blocking from here on, each call bounded by the timeout. */
		if (fcntl(fd, F_SETFL, 0) ||
		    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
		    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
		    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one))) {
			err = -errno;
			goto next;
		}
		break;
next:
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd >= 0 ? fd : err;
}

/* Send @n buffers whole; 0 or -errno (-ETIMEDOUT: no progress in time). */
static int send_iov(int fd, struct iovec *iov, int n)
{
	struct msghdr mh = { 0 };

	mh.msg_iov = iov;
	mh.msg_iovlen = n;
	while (mh.msg_iovlen) {
		ssize_t k = sendmsg(fd, &mh, MSG_NOSIGNAL);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		while (mh.msg_iovlen && (size_t)k >= mh.msg_iov->iov_len) {
			k -= mh.msg_iov->iov_len;
			mh.msg_iov++;
			mh.msg_iovlen--;
		}
		if (mh.msg_iovlen) {
			mh.msg_iov->iov_base = (char *)mh.msg_iov->iov_base + k;
			mh.msg_iov->iov_len -= k;
		}
	}
	return 0;
}

/* Receive exactly @n bytes; 0 or -errno (-ECONNRESET: relayd closed). */
static int recv_all(int fd, void *buf, size_t n)
{
	unsigned char *p = buf;

	while (n) {
		ssize_t k = recv(fd, p, n, 0);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		if (!k)
			return -ECONNRESET;
		p += k;
		n -= k;
	}
	return 0;
}

/* ---- commands ---- */

/*
 * Send the @len bytes of r->msg (plus @extra, @extra_len bytes) on the
 * control connection and read a reply of @reply_len bytes into @reply
 * (none if 0). Its last four bytes are the reply code unless @what is a
 * VERSION; anything but LTTNG_OK fails.
 */
static int rs_cmd(struct relayd_sink *r, size_t len, const void *extra,
		  size_t extra_len, unsigned char *reply, size_t reply_len,
		  const char *what)
{
	struct iovec iov[2] = {
		{ .iov_base = r->msg, .iov_len = len },
		{ .iov_base = (void *)extra, .iov_len = extra_len },
	};
	__u32 code;
	int err;

	if (r->err)
		return r->err;
	err = send_iov(r->ctrl, iov, extra_len ? 2 : 1);
	if (!err && reply_len)
		err = recv_all(r->ctrl, reply, reply_len);
	if (err)
		return rs_io_fail(r, r->ctrl, err, what);
	if (!reply_len || !strcmp(what, "VERSION"))
		return 0;
	code = relayd_get_u32(reply + reply_len - 4);
	if (code != RELAYD_OK)
		return rs_fail(r, -EPROTO,
			       "lttng-relayd at %s:%u refused %s (reply code %u); the stream to it stops here",
			       r->url.host, r->url.ctrl, what, code);
	return 0;
}

static int rs_add_stream(struct relayd_sink *r, const char *channel,
			 __u64 *handle)
{
	unsigned char reply[RELAYD_REPLY_STREAM];
	int err;

	err = rs_cmd(r, relayd_msg_add_stream(r->msg, channel, r->path),
		     NULL, 0, reply, sizeof(reply), "ADD_STREAM");
	if (!err)
		*handle = relayd_get_u64(reply);
	return err;
}

static int rs_streams_sent(struct relayd_sink *r)
{
	unsigned char reply[RELAYD_REPLY_GENERIC];

	return rs_cmd(r, relayd_msg_streams_sent(r->msg), NULL, 0, reply,
		      sizeof(reply), "STREAMS_SENT");
}

static int rs_index(struct relayd_sink *r, const struct relayd_index *ix)
{
	unsigned char reply[RELAYD_REPLY_GENERIC];

	return rs_cmd(r, relayd_msg_index(r->msg, ix), NULL, 0, reply,
		      sizeof(reply), "SEND_INDEX");
}

/* CPU @cpu's stream; added to the session (and shown) if @add. */
static struct relayd_stream *rs_stream(struct relayd_sink *r, int cpu,
				       bool add)
{
	struct relayd_stream *st;
	char channel[32];
	int i;

	for (i = 0; i < r->nst; i++)
		if (r->st[i].cpu == cpu)
			return &r->st[i];
	if (!add)
		return NULL;
	st = realloc(r->st, (r->nst + 1) * sizeof(*st));
	if (!st) {
		rs_fail(r, -ENOMEM, "out of memory");
		return NULL;
	}
	r->st = st;
	st += r->nst;
	memset(st, 0, sizeof(*st));
	st->cpu = cpu;
	snprintf(channel, sizeof(channel), "stream_%d", cpu);
	if (rs_add_stream(r, channel, &st->handle) || rs_streams_sent(r))
		return NULL;
	r->nst++;
	return st;
}

/* ---- the sink ---- */

static int rs_metadata(struct trace_sink *s, const char *text, size_t len)
{
	struct relayd_sink *r = (struct relayd_sink *)s;
	int err;

	/* Shown to viewers with the first data stream (rs_stream()). */
	err = rs_add_stream(r, "metadata", &r->meta);
	if (!err)
		err = rs_cmd(r, relayd_msg_metadata(r->msg, r->meta, len),
			     text, len, NULL, 0, "SEND_METADATA");
	return err;
}

static int rs_packet(struct trace_sink *s, const struct ctf_packet *p)
{
	struct relayd_sink *r = (struct relayd_sink *)s;
	struct relayd_stream *st;
	size_t len = p->head_len + p->body_len;
	unsigned char hdr[RELAYD_DATA_HDR_LEN];
	struct iovec iov[3] = {
		{ .iov_base = hdr, .iov_len = sizeof(hdr) },
		{ .iov_base = (void *)p->head, .iov_len = p->head_len },
		{ .iov_base = (void *)p->body, .iov_len = p->body_len },
	};
	struct relayd_index ix = { 0 };
	int err;

	if (r->err)
		return r->err;
	st = rs_stream(r, p->cpu, true);
	if (!st)
		return r->err;
	relayd_data_hdr(hdr, st->handle, st->next_seq, (__u32)len);
	err = send_iov(r->data, iov, p->body_len ? 3 : 2);
	if (err)
		return rs_io_fail(r, r->data, err, "a packet");
	ix.handle = st->handle;
	ix.net_seq = st->next_seq;
	ix.packet_bits = (__u64)len * 8;
	ix.content_bits = ix.packet_bits;
	ix.ts_begin = p->ts_begin;
	ix.ts_end = p->ts_end;
	ix.discarded = p->discarded;
	ix.stream_id = CTF_STREAM_ID;
	ix.instance = p->cpu;
	ix.packet_seq = p->seq;
	st->next_seq++;
	return rs_index(r, &ix);
}

static int rs_beacon(struct trace_sink *s, int cpu, __u64 ts,
		     __u64 discarded)
{
	struct relayd_sink *r = (struct relayd_sink *)s;
	struct relayd_stream *st;
	struct relayd_index ix = { 0 };

	if (r->err)
		return r->err;
	st = rs_stream(r, cpu, false);
	if (!st || !st->next_seq)
		return 0;	/* relayd keeps a stream active till data */
	ix.handle = st->handle;
	ix.net_seq = st->next_seq - 1;
	ix.ts_begin = ts;
	ix.ts_end = ts;
	ix.discarded = discarded;
	ix.stream_id = CTF_STREAM_ID;
	ix.instance = cpu;
	ix.packet_seq = st->next_seq - 1;
	return rs_index(r, &ix);
}

static int rs_close(struct trace_sink *s, char *msg, size_t msg_len)
{
	struct relayd_sink *r = (struct relayd_sink *)s;
	unsigned char reply[RELAYD_REPLY_GENERIC];
	__u32 wait_us = r->live_us < 500000 ? 500000 :
			r->live_us > 1000000 ? 1000000 : r->live_us;
	struct timespec ts = {
		.tv_sec = wait_us / 1000000,
		.tv_nsec = wait_us % 1000000 * 1000,
	};
	int i, err;

	/*
	 * The last packets are out: give live viewers a live interval (at
	 * least half a second, babeltrace2 looks again every 100 ms when
	 * it waits, and at most a second) to read them before the streams
	 * close. babeltrace2 2.0 ends a session it finds closed, unread
	 * indexes and all.
	 */
	if (!r->err && r->nst && r->s.live)
		nanosleep(&ts, NULL);
	for (i = 0; i < r->nst; i++) {
		struct relayd_stream *st = &r->st[i];

		rs_cmd(r, relayd_msg_close_stream(r->msg, st->handle,
						  st->next_seq - 1),
		       NULL, 0, reply, sizeof(reply), "CLOSE_STREAM");
	}
	if (r->meta)
		rs_cmd(r, relayd_msg_close_stream(r->msg, r->meta, -1ULL),
		       NULL, 0, reply, sizeof(reply), "CLOSE_STREAM");
	if (r->data >= 0)
		close(r->data);
	if (r->ctrl >= 0)
		close(r->ctrl);
	err = r->err;
	if (msg_len)
		snprintf(msg, msg_len, "%s", r->s.msg);
	free(r->st);
	free(r);
	return err;
}

static const struct trace_sink_ops relayd_ops = {
	.metadata = rs_metadata,
	.packet = rs_packet,
	.beacon = rs_beacon,
	.close = rs_close,
};

/* Relayd's answer to VERSION: 2.8 or later (it then speaks 2.8). */
static int rs_version(struct relayd_sink *r)
{
	unsigned char reply[RELAYD_REPLY_VERSION];
	__u32 major, minor;
	int err;

	err = rs_cmd(r, relayd_msg_version(r->msg, RELAYD_MAJOR, RELAYD_MINOR),
		     NULL, 0, reply, sizeof(reply), "VERSION");
	if (err)
		return err;
	major = relayd_get_u32(reply);
	minor = relayd_get_u32(reply + 4);
	if (major != RELAYD_MAJOR || minor < RELAYD_MINOR)
		return rs_fail(r, -EPROTO,
			       "lttng-relayd at %s:%u speaks protocol %u.%u; pea needs %u.%u or later",
			       r->url.host, r->url.ctrl, major, minor,
			       RELAYD_MAJOR, RELAYD_MINOR);
	return 0;
}

static int rs_create_session(struct relayd_sink *r,
			     const struct relayd_opts *o)
{
	unsigned char reply[RELAYD_REPLY_SESSION];

	return rs_cmd(r, relayd_msg_create_session(r->msg, o->session,
						   o->hostname, o->live_us,
						   o->snapshot),
		      NULL, 0, reply, sizeof(reply), "CREATE_SESSION");
}

static int rs_connect(struct relayd_sink *r, unsigned int port,
		      const char *conn)
{
	int fd = tcp_connect(r->url.host, port, r->timeout_ms);

	if (fd == -EADDRNOTAVAIL)
		return rs_fail(r, fd, "cannot resolve the lttng-relayd host '%s'",
			       r->url.host);
	if (fd < 0)
		return rs_fail(r, fd,
			       "cannot connect to lttng-relayd at %s:%u (%s port): %s",
			       r->url.host, port, conn,
			       fd == -ETIMEDOUT ? "no answer in time" :
			       strerror(-fd));
	return fd;
}

struct trace_sink *sink_relayd_open(const struct relayd_opts *o,
				    char *err, size_t err_len)
{
	struct relayd_sink *r = calloc(1, sizeof(*r));
	char date[32];
	time_t now = time(NULL);
	struct tm tm;

	if (!r) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	r->s.ops = &relayd_ops;
	r->s.live = !o->snapshot;
	r->ctrl = -1;
	r->data = -1;
	r->timeout_ms = o->timeout_ms;
	r->live_us = o->live_us;
	if (net_url_parse(o->url, &r->url, err, err_len))
		goto fail_msg;
	localtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y%m%d-%H%M%S", &tm);
	snprintf(r->path, sizeof(r->path), "%s/%s-%s/pea", o->hostname,
		 o->session, date);
	r->ctrl = rs_connect(r, r->url.ctrl, "control");
	if (r->ctrl < 0 || rs_version(r) || rs_create_session(r, o))
		goto fail;
	r->data = rs_connect(r, r->url.data, "data");
	if (r->data < 0)
		goto fail;
	return &r->s;
fail:
	snprintf(err, err_len, "%s", r->s.msg);
fail_msg:
	if (r->ctrl >= 0)
		close(r->ctrl);
	free(r);
	return NULL;
}
