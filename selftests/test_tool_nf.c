// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace netfilter:FAMILY:HOOK through /bin/pea in the guest: exact
 * decoded lines for UDP and ICMP packets the test sends over loopback
 * (hook, ifindexes, protocol, addresses and ports, ICMP type and code,
 * length), JSON with the same fields and the captured bytes in hex for
 * TCP over IPv4 and UDP over IPv6, --packet clamping, and usage errors.
 * On a kernel without netfilter: the tool's explanation and exit 1.
 */
#include <signal.h>
#include <sys/wait.h>
#include "pea_test.h"
#include "pt_tool.h"
#include "pt_net.h"

static char line[65536];
static int lo_idx;

static void hex(char *out, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

/* The tail of a human line after TIME and CPU. */
static void want_line(char *out, size_t n, const char *hook, int in, int o,
		      const char *pkt)
{
	char ifs[32];

	snprintf(ifs, sizeof(ifs), "in=%d out=%d", in, o);
	snprintf(out, n, " %-12s %-12s %s", hook, ifs, pkt);
}

static void send_echo(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	unsigned char req[16], buf[128];
	unsigned int i;
	__u16 c;
	int s = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);

	memset(req, 0, sizeof(req));
	req[0] = 8;
	req[5] = 1;
	req[7] = 1;
	for (i = 8; i < sizeof(req); i++)
		req[i] = (unsigned char)i;
	c = ~pt_csum_fold(req, sizeof(req), 0);
	req[2] = c >> 8;
	req[3] = c & 0xff;
	pt_rcvtimeo(s);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sendto(s, req, sizeof(req), 0, (struct sockaddr *)&sa, sizeof(sa));
	recv(s, buf, sizeof(buf), 0);	/* the request */
	recv(s, buf, sizeof(buf), 0);	/* the reply */
	close(s);
}

/* Lowercase hook; UDP, an ICMP echo request and its reply, in order. */
static void test_human(void)
{
	static const char msg[] = "pea tool udp4";
	char want[3][256];
	struct pt_proc p;
	int tx, rx, i, n = 0, seen[3] = { 0 }, rc;

	tx = pt_udp_bound(AF_INET, 41001);
	rx = pt_udp_bound(AF_INET, 41002);
	want_line(want[0], sizeof(want[0]), "LOCAL_IN", lo_idx, 0,
		  "UDP 127.0.0.1:41001 > 127.0.0.1:41002 len=42");
	want_line(want[1], sizeof(want[1]), "LOCAL_IN", lo_idx, 0,
		  "ICMP 127.0.0.1 > 127.0.0.1 type=8 code=0 len=36");
	want_line(want[2], sizeof(want[2]), "LOCAL_IN", lo_idx, 0,
		  "ICMP 127.0.0.1 > 127.0.0.1 type=0 code=0 len=36");
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace",
					  "netfilter:ipv4:local_in", "-c", "3",
					  NULL }),
	      "pea trace netfilter:ipv4:local_in attaches");
	pt_udp_send(tx, AF_INET, 41002, msg, sizeof(msg));
	send_echo();
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (n == 0) {
			PT_OK(!strcmp(line, "TIME(s)      CPU HOOK         IFINDEX      PACKET"),
			      "the header: %s", line);
			n++;
			continue;
		}
		for (i = 0; i < 3; i++) {
			size_t lw = strlen(want[i]), ll = strlen(line);

			if (ll > lw && !strcmp(line + ll - lw, want[i])) {
				PT_EQ(seen[0] + seen[1] + seen[2], i,
				      "line %d in order: %s", i, line);
				seen[i]++;
				break;
			}
		}
		if (i == 3)
			pt_diag("other line: %s", line);
		n++;
	}
	rc = pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_EQ(rc, 0, "-c 3: exit 0");
	for (i = 0; i < 3; i++)
		PT_EQ(seen[i], 1, "exactly one line ending \"%s\"", want[i]);
	PT_EQ(n, 4, "the header and 3 lines");
	close(tx);
	close(rx);
}

/* TCP over IPv4 at LOCAL_OUT, JSON: the SYN of a connect. */
static void test_json_tcp4(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char buf[16384];
	struct pt_proc p;
	int ls, cs, one = 1, events = 0, rc;

	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cs = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(cs, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(41012);
	bind(ls, (struct sockaddr *)&sa, sizeof(sa));
	listen(ls, 1);
	sa.sin_port = htons(41011);
	PT_EQ(bind(cs, (struct sockaddr *)&sa, sizeof(sa)), 0,
	      "client bound to 127.0.0.1:41011");
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace",
					  "netfilter:IPV4:LOCAL_OUT", "--json",
					  "-c", "1", "--packet", "4096", NULL }),
	      "pea trace netfilter:IPV4:LOCAL_OUT --json attaches");
	sa.sin_port = htons(41012);
	PT_EQ(connect(cs, (struct sockaddr *)&sa, sizeof(sa)), 0, "connect");
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		PT_OK(pt_json_valid(line), "valid JSON: %.200s", line);
		if (pt_json_streq(line, "type", "summary")) {
			PT_EQ(pt_json_num(line, "events", -1), 1,
			      "summary: 1 event");
			continue;
		}
		if (!pt_json_streq(line, "type", "event"))
			continue;
		events++;
		PT_OK(pt_json_streq(line, "probe", "netfilter:IPV4:LOCAL_OUT"),
		      "probe as given");
		PT_OK(pt_json_streq(line, "family", "ipv4"), "family ipv4");
		PT_OK(pt_json_streq(line, "hook", "LOCAL_OUT"), "hook LOCAL_OUT");
		PT_EQ(pt_json_num(line, "ifindex_in", -1), 0, "ifindex_in 0");
		PT_EQ(pt_json_num(line, "ifindex_out", -1), lo_idx,
		      "ifindex_out lo");
		PT_EQ(pt_json_num(line, "protocol", -1), 6, "protocol 6");
		PT_OK(pt_json_streq(line, "proto", "TCP"), "proto TCP");
		PT_OK(pt_json_streq(line, "src", "127.0.0.1") &&
		      pt_json_streq(line, "dst", "127.0.0.1"), "addresses");
		PT_EQ(pt_json_num(line, "sport", -1), 41011, "sport 41011");
		PT_EQ(pt_json_num(line, "dport", -1), 41012, "dport 41012");
		PT_EQ(pt_json_num(line, "pid", -1), getpid(),
		      "pid: connect() runs in this process");
		PT_OK(pt_json_streq(line, "comm", "test_tool_nf"), "comm");
		/* A SYN with MSS, SACK, timestamps and window scale: 60. */
		PT_EQ(pt_json_num(line, "len", -1), 60, "len 60");
		PT_EQ(pt_json_num(line, "captured", -1), 60, "captured 60");
		PT_OK(pt_json_get(line, "packet", buf, sizeof(buf), NULL) &&
		      strlen(buf) == 120, "packet: 60 bytes in hex");
		/* Version, length; protocol; addresses; ports; SYN flag. */
		PT_OK(!strncmp(buf, "4500003c", 8) && !strncmp(buf + 18, "06", 2) &&
		      !strncmp(buf + 24, "7f0000017f000001", 16) &&
		      !strncmp(buf + 40, "a033a034", 8) &&
		      !strncmp(buf + 66, "02", 2),
		      "packet hex: header, addresses, ports 0xa033 0xa034, SYN (%.80s)",
		      buf);
	}
	rc = pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_EQ(rc, 0, "exit 0");
	PT_EQ(events, 1, "one event");
	close(cs);
	close(ls);
}

/* UDP over IPv6 at PRE_ROUTING, JSON, --packet 64 and --packet 10. */
static void test_json_udp6(void)
{
	static const unsigned char msg[16] = "pea udp6 16 byte";
	static const unsigned char lo6[16] = { [15] = 1 };
	unsigned char mid[64];
	char buf[16384], whex[256];
	const char *plen[2] = { "64", "10" };
	struct pt_proc p;
	int tx, rx, pass, events, rc;

	tx = pt_udp_bound(AF_INET6, 41021);
	rx = pt_udp_bound(AF_INET6, 41022);
	PT_OK(tx >= 0 && rx >= 0, "UDP sockets on ::1");
	/* Bytes 4..45 of the packet: all but the flow label and checksum. */
	memset(mid, 0, sizeof(mid));
	mid[1] = 24;		/* payload length */
	mid[2] = 17;		/* next header */
	mid[3] = 64;		/* hop limit */
	memcpy(mid + 4, lo6, 16);
	memcpy(mid + 20, lo6, 16);
	mid[36] = 41021 >> 8;
	mid[37] = 41021 & 0xff;
	mid[38] = 41022 >> 8;
	mid[39] = 41022 & 0xff;
	mid[41] = 24;		/* UDP length */
	for (pass = 0; pass < 2; pass++) {
		events = 0;
		PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace",
						  "netfilter:ipv6:PRE_ROUTING",
						  "-j", "-c", "1", "--packet",
						  (char *)plen[pass], NULL }),
		      "pea trace netfilter:ipv6:PRE_ROUTING --packet %s",
		      plen[pass]);
		pt_udp_send(tx, AF_INET6, 41022, msg, sizeof(msg));
		while (pt_proc_line(&p, false, line, sizeof(line),
				    PT_TOOL_WAIT_MS)) {
			if (!pt_json_streq(line, "type", "event"))
				continue;
			events++;
			PT_OK(pt_json_streq(line, "family", "ipv6") &&
			      pt_json_streq(line, "hook", "PRE_ROUTING"),
			      "ipv6 PRE_ROUTING");
			PT_EQ(pt_json_num(line, "ifindex_in", -1), lo_idx,
			      "ifindex_in lo");
			PT_EQ(pt_json_num(line, "protocol", -1), 17, "protocol 17");
			PT_EQ(pt_json_num(line, "pid", -1), 0, "softirq: pid 0");
			PT_EQ(pt_json_num(line, "len", -1), 64, "len 64");
			PT_OK(pt_json_get(line, "packet", buf, sizeof(buf), NULL),
			      "packet present");
			if (pass == 0) {
				PT_OK(pt_json_streq(line, "src", "::1") &&
				      pt_json_streq(line, "dst", "::1"),
				      "addresses ::1");
				PT_EQ(pt_json_num(line, "sport", -1), 41021,
				      "sport");
				PT_EQ(pt_json_num(line, "dport", -1), 41022,
				      "dport");
				PT_EQ(pt_json_num(line, "captured", -1), 64,
				      "captured 64");
				hex(whex, mid, 42);
				PT_OK(strlen(buf) == 128 && buf[0] == '6' &&
				      !strncmp(buf + 8, whex, 84),
				      "packet hex: IPv6 and UDP headers exact");
				hex(whex, msg, sizeof(msg));
				PT_OK(!strcmp(buf + 96, whex),
				      "packet hex: the payload exact");
			} else {
				PT_EQ(pt_json_num(line, "captured", -1), 10,
				      "--packet 10: captured 10");
				PT_EQ(strlen(buf), 20, "20 hex digits");
				PT_OK(!pt_json_get(line, "src", buf, sizeof(buf),
						   NULL) &&
				      !pt_json_get(line, "sport", buf,
						   sizeof(buf), NULL),
				      "no address or port beyond the capture");
				PT_OK(pt_json_streq(line, "proto", "UDP"),
				      "proto from the record: UDP");
			}
		}
		rc = pt_proc_wait(&p);
		pt_proc_close(&p);
		PT_EQ(rc, 0, "exit 0");
		PT_EQ(events, 1, "one event");
	}
	close(tx);
	close(rx);
}

/*
 * UDP over IPv6 behind a destination options header (IPV6_DSTOPTS, a
 * PadN option: 8 bytes): the decoder walks past it to the ports.
 */
static void test_udp6_ext(void)
{
	static const unsigned char dstopts[8] = { 0, 0, 1, 4, 0, 0, 0, 0 };
	static const char msg[8] = "pea ext";
	char want[128];
	struct pt_proc p;
	int tx, rx, events = 0, text = 0, rc;

	tx = pt_udp_bound(AF_INET6, 41031);
	rx = pt_udp_bound(AF_INET6, 41032);
	PT_OK(tx >= 0 && rx >= 0 &&
	      !setsockopt(tx, IPPROTO_IPV6, IPV6_DSTOPTS, dstopts,
			  sizeof(dstopts)),
	      "UDP sockets on ::1, destination options on the sender");
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace",
					  "netfilter:ipv6:LOCAL_OUT", "-j",
					  "-c", "1", NULL }),
	      "pea trace netfilter:ipv6:LOCAL_OUT -j");
	pt_udp_send(tx, AF_INET6, 41032, msg, sizeof(msg));
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		if (!pt_json_streq(line, "type", "event"))
			continue;
		events++;
		PT_OK(pt_json_num(line, "protocol", -1) == 60 &&
		      pt_json_num(line, "transport", -1) == 17 &&
		      pt_json_streq(line, "proto", "UDP") &&
		      pt_json_num(line, "sport", -1) == 41031 &&
		      pt_json_num(line, "dport", -1) == 41032 &&
		      pt_json_num(line, "len", -1) == 40 + 8 + 8 + 8,
		      "next header 60 (destination options), then UDP 41031 > 41032, len 64: %.400s",
		      line);
	}
	rc = pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_EQ(rc, 0, "exit 0");
	PT_EQ(events, 1, "one event");

	/* The text line names the transport and the ports too. */
	PT_OK(pt_trace_start(&p, (char *[]){ PT_PEA, "trace",
					  "netfilter:ipv6:LOCAL_OUT", "-c",
					  "1", NULL }),
	      "pea trace netfilter:ipv6:LOCAL_OUT");
	pt_udp_send(tx, AF_INET6, 41032, msg, sizeof(msg));
	snprintf(want, sizeof(want), "UDP [::1]:41031 > [::1]:41032 len=64");
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS))
		text += strstr(line, want) != NULL;
	rc = pt_proc_wait(&p);
	pt_proc_close(&p);
	PT_OK(rc == 0 && text == 1, "one line with \"%s\" (%d)", want, text);
	close(tx);
	close(rx);
}

static void test_usage(void)
{
	static const char *const bad[][4] = {
		{ "netfilter:ipv4:LOCAL_IN", "--packet", "0", "packet 0" },
		{ "netfilter:ipv4:LOCAL_IN", "--packet", "4097", "packet 4097" },
		{ "netfilter:ipv5:LOCAL_IN", "-q", "-q", "family ipv5" },
		{ "netfilter:ipv4:INPUT", "-q", "-q", "hook INPUT" },
		{ "netfilter:ipv4", "-q", "-q", "no hook" },
		{ "netfilter:ipv4:LOCAL_IN", "--pid", "1", "--pid" },
		{ "kprobe:vfs_read", "--packet", "64", "--packet on a kprobe" },
	};
	static char out[65536], err[65536];
	unsigned int i;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = pt_run((char *[]){ PT_PEA, "trace", (char *)bad[i][0],
					(char *)bad[i][1], (char *)bad[i][2],
					NULL },
			    out, sizeof(out), err, sizeof(err), NULL, NULL);
		PT_EQ(rc, 2, "usage error, exit 2: %s", bad[i][3]);
		PT_OK(strstr(err, "see 'pea trace --help'"),
		      "%s: %.200s", bad[i][3], err);
	}
	rc = pt_run((char *[]){ PT_PEA, "trace", "--help", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_OK(rc == 0 && strstr(out, "netfilter:FAMILY:HOOK") &&
	      strstr(out, "--packet N"), "pea trace --help documents netfilter");
}

static void test_no_netfilter(void)
{
	static char out[65536], err[65536];
	int rc;

	rc = pt_run((char *[]){ PT_PEA, "trace", "netfilter:ipv4:LOCAL_IN",
				"-c", "1", NULL },
		    out, sizeof(out), err, sizeof(err), NULL, NULL);
	PT_EQ(rc, 1, "no netfilter: exit 1");
	PT_OK(strstr(err, "pea: cannot attach netfilter:ipv4:LOCAL_IN: this kernel has no netfilter (CONFIG_NETFILTER)"),
	      "the explanation: %.300s", err);
}

int main(void)
{
	pt_dev();
	test_usage();
	if (!pt_have_netfilter()) {
		test_no_netfilter();
		return pt_done();
	}
	lo_idx = pt_lo_up();
	PT_OK(lo_idx > 0, "lo up, ifindex %d", lo_idx);
	test_human();
	test_json_tcp4();
	test_json_udp6();
	test_udp6_ext();
	return pt_done();
}
