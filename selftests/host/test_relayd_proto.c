// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel, no daemon): the bytes of each relayd protocol 2.8
 * message pea sends (tools/pea/relayd_proto.c), net:// addresses
 * (net_url.c), and what the relayd sink (sink_relayd.c) says when a
 * fake relayd on 127.0.0.1 answers with an old version, a refusal or a
 * closed connection. TAP on stdout.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "net_url.h"
#include "relayd_proto.h"
#include "trace_sink.h"

#define HOST_TAP_NAME "relayd_proto"
#include "host_tap.h"

static __u64 be64(const unsigned char *p)
{
	return relayd_get_u64(p);
}

static __u32 be32(const unsigned char *p)
{
	return relayd_get_u32(p);
}

/* The control header: circuit 0, @size, @cmd, version 0. */
static int hdr_is(const unsigned char *p, __u64 size, __u32 cmd)
{
	return be64(p) == 0 && be64(p + 8) == size && be32(p + 16) == cmd &&
	       be32(p + 20) == 0;
}

static int zeros(const unsigned char *p, size_t len)
{
	while (len--)
		if (*p++)
			return 0;
	return 1;
}

static void test_messages(void)
{
	static unsigned char b[RELAYD_MSG_MAX];
	struct relayd_index ix = {
		.handle = 1, .net_seq = 2, .packet_bits = 3, .content_bits = 4,
		.ts_begin = 5, .ts_end = 6, .discarded = 7, .stream_id = 8,
		.instance = 9, .packet_seq = 0x0102030405060708ULL,
	};
	char name[300];
	size_t len;
	int i, good;

	len = relayd_msg_version(b, 2, 8);
	ok(len == 32 && hdr_is(b, 8, 5) && be32(b + 24) == 2 &&
	   be32(b + 28) == 8, "VERSION 2.8: 24-byte header (cmd 5) + major, minor (%zu bytes)",
	   len);

	memset(b, 0xaa, sizeof(b));
	len = relayd_msg_create_session(b, "sess", "host", 1000000, false);
	ok(len == 24 + 255 + 64 + 8 && hdr_is(b, 327, 2) &&
	   !memcmp(b + 24, "sess", 4) && zeros(b + 28, 251) &&
	   !memcmp(b + 279, "host", 4) && zeros(b + 283, 60) &&
	   be32(b + 343) == 1000000 && be32(b + 347) == 0,
	   "CREATE_SESSION (2.4): name[255], hostname[64] NUL-padded, live timer 1000000 us, snapshot 0 (%zu bytes)",
	   len);

	memset(name, 'x', sizeof(name));
	name[sizeof(name) - 1] = 0;
	relayd_msg_create_session(b, name, name, 1, false);
	ok(b[24 + 254] == 0 && b[24 + 253] == 'x' && b[279 + 63] == 0 &&
	   b[279 + 62] == 'x', "CREATE_SESSION: too long names are cut to keep their field's NUL");

	len = relayd_msg_create_session(b, "s.2", "h", 0, true);
	ok(len == 24 + 255 + 64 + 8 && be32(b + 343) == 0 &&
	   be32(b + 347) == 1,
	   "CREATE_SESSION of a snapshot: live timer 0, snapshot 1");

	memset(b, 0xaa, sizeof(b));
	len = relayd_msg_add_stream(b, "stream_3", "h/s-20261127-000000/pea");
	ok(len == 4400 && hdr_is(b, 4376, 1) && !memcmp(b + 24, "stream_3", 9) &&
	   zeros(b + 33, 255) &&
	   !memcmp(b + 288, "h/s-20261127-000000/pea", 24) &&
	   zeros(b + 312, 4072) && zeros(b + 4384, 16),
	   "ADD_STREAM (2.2): channel[264], path[4096], tracefile size and count 0 (%zu bytes)",
	   len);

	len = relayd_msg_streams_sent(b);
	ok(len == 24 && hdr_is(b, 0, 16), "STREAMS_SENT: a header, cmd 16, no payload");

	len = relayd_msg_metadata(b, 0x1122334455667788ULL, 1880);
	ok(len == 36 && hdr_is(b, 1892, 6) && be64(b + 24) == 0x1122334455667788ULL &&
	   be32(b + 32) == 0,
	   "SEND_METADATA: size 12 + text, the stream's handle, padding 0 (the text follows)");

	len = relayd_msg_index(b, &ix);
	good = len == 104 && hdr_is(b, 80, 13);
	for (i = 0; i < 9; i++)
		good = good && be64(b + 24 + 8 * i) == (__u64)i + 1;
	ok(good && be64(b + 96) == 0x0102030405060708ULL,
	   "SEND_INDEX (2.8): handle, net seq, packet and content bits, begin, end, discarded, stream id, instance, packet seq (%zu bytes)",
	   len);

	len = relayd_msg_close_stream(b, 12, -1ULL);
	ok(len == 40 && hdr_is(b, 16, 7) && be64(b + 24) == 12 &&
	   be64(b + 32) == -1ULL, "CLOSE_STREAM: handle, last sequence number (-1: none)");

	len = relayd_data_hdr(b, 13, 4, 16173);
	ok(len == 32 && be64(b) == 0 && be64(b + 8) == 13 && be64(b + 16) == 4 &&
	   be32(b + 24) == 16173 && be32(b + 28) == 0,
	   "data header: circuit 0, handle, net seq, size, padding 0 (%zu bytes)",
	   len);
}

static void url_ok(const char *s, const char *host, unsigned int c,
		   unsigned int d)
{
	struct net_url u;
	char err[256];
	int r = net_url_parse(s, &u, err, sizeof(err));

	ok(!r && !strcmp(u.host, host) && u.ctrl == c && u.data == d,
	   "%s: host %s, control %u, data %u", s, host, c, d);
}

static void url_bad(const char *s)
{
	struct net_url u;
	char err[256] = "";
	int r = net_url_parse(s, &u, err, sizeof(err));

	ok(r == -EINVAL && strstr(err, "net://HOST[:CTRL[:DATA]]"),
	   "'%s' is refused: %s", s, err);
}

static void test_urls(void)
{
	url_ok("net://127.0.0.1", "127.0.0.1", 5342, 5343);
	url_ok("net://relay.example:6000", "relay.example", 6000, 5343);
	url_ok("net://127.0.0.1:6000:6001", "127.0.0.1", 6000, 6001);
	url_ok("net://[::1]:7:8", "::1", 7, 8);
	url_ok("net://[::1]", "::1", 5342, 5343);
	url_bad("net://");
	url_bad("net://host:");
	url_bad("net://host:0");
	url_bad("net://host:65536");
	url_bad("net://host:1:2:3");
	url_bad("net://host/x");
	url_bad("net://[::1");
	url_bad("tcp://host");
}

/*
 * A fake relayd on 127.0.0.1: takes one control connection and answers
 * VERSION with @major.@minor, then CREATE_SESSION with @code; with
 * @hangup it closes the connection at the first command instead. Its
 * port, or -1; *@pid its process.
 */
static int fake_relayd(__u32 major, __u32 minor, __u32 code, int hangup,
		       pid_t *pid)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int ls = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(ls, 1) || getsockname(ls, (struct sockaddr *)&a, &alen))
		return -1;
	*pid = fork();
	if (*pid < 0)
		return -1;
	if (!*pid) {
		unsigned char h[24], p[4400], r[12] = { 0 };
		int c = accept(ls, NULL, NULL);

		while (c >= 0 && recv(c, h, 24, MSG_WAITALL) == 24) {
			__u64 size = be64(h + 8);
			__u32 cmd = be32(h + 16);

			if (hangup)
				_exit(0);
			if (size > sizeof(p) ||
			    recv(c, p, size, MSG_WAITALL) != (ssize_t)size)
				_exit(1);
			if (cmd == RELAYD_VERSION) {
				r[0] = major >> 24; r[1] = major >> 16;
				r[2] = major >> 8; r[3] = major;
				r[4] = minor >> 24; r[5] = minor >> 16;
				r[6] = minor >> 8; r[7] = minor;
				send(c, r, 8, 0);
			} else if (cmd == RELAYD_CREATE_SESSION) {
				memset(r, 0, sizeof(r));
				r[11] = code;	/* after the u64 session id */
				send(c, r, 12, 0);
			}
		}
		_exit(0);
	}
	close(ls);
	return ntohs(a.sin_port);
}

static void sink_fails(__u32 major, __u32 minor, __u32 code, int hangup,
		       const char *want, const char *what)
{
	struct relayd_opts o = {
		.session = "s", .hostname = "h", .live_us = 1000000,
		.timeout_ms = 2000,
	};
	struct trace_sink *s;
	char url[64], err[512] = "", w[512];
	pid_t pid = -1;
	int port = fake_relayd(major, minor, code, hangup, &pid);

	snprintf(url, sizeof(url), "net://127.0.0.1:%d:%d", port, port);
	snprintf(w, sizeof(w), want, port);
	o.url = url;
	s = port > 0 ? sink_relayd_open(&o, err, sizeof(err)) : NULL;
	ok(port > 0 && !s && !strcmp(err, w), "%s: %s", what, err);
	if (s)
		s->ops->close(s, NULL, 0);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static void test_refusals(void)
{
	sink_fails(2, 4, 10, 0,
		   "lttng-relayd at 127.0.0.1:%d speaks protocol 2.4; pea needs 2.8 or later",
		   "a relayd of protocol 2.4");
	sink_fails(3, 0, 10, 0,
		   "lttng-relayd at 127.0.0.1:%d speaks protocol 3.0; pea needs 2.8 or later",
		   "a relayd of another major version");
	sink_fails(2, 13, 11, 0,
		   "lttng-relayd at 127.0.0.1:%d refused CREATE_SESSION (reply code 11); the stream to it stops here",
		   "CREATE_SESSION refused");
	sink_fails(2, 13, 10, 1,
		   "lost the connection to lttng-relayd at 127.0.0.1:%d (VERSION, control connection: Connection reset by peer); the stream to it stops here",
		   "the connection closed at the first command");
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_messages();
	test_urls();
	test_refusals();
	return host_tap_done();
}
