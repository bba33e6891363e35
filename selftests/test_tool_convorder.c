// SPDX-License-Identifier: GPL-2.0
/*
 * Orders (<, <=, >, >=) of converted values in --filter (issue 21):
 * ntohs() of struct sock's port and ntop() of its address, as they
 * print, compared in the kernel byte by byte (tools/pea/kfilter.c,
 * conv_order()). Through /bin/pea in the guest, on kprobe:tcp_connect
 * and connect()s this test makes to closed loopback ports (each
 * ECONNREFUSED after tcp_connect() ran in the calling thread, so every
 * hit is in before the tool is stopped; the link's filtered count also
 * holds other processes' hits, which --pid rejects, and nothing else in
 * the test guest connects over TCP):
 *   - ports 4999 5000 5002 5003 767 6144 1280, chosen so that their
 *     bytes in memory order differently from their values:
 *     ntohs(port) >= 5000 && ntohs(port) < 5003 writes 5000 and 5002,
 *     ntohs(port) <= 767 writes 767, ntohs(port) > 5002 writes 5003 and
 *     6144; the JSON summary's hits, written and filtered out exact;
 *   - 127.0.0.1 127.0.0.2 127.0.0.255 127.0.1.1 127.1.0.0:
 *     ntop(daddr) > "127.0.0.1" && ntop(daddr) <= "127.0.1.1" writes the
 *     middle three;
 *   - an order of a value in a register refused with the reason.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "pea_test.h"
#include "pt_tool.h"
#include "pt_net.h"

#define SK	"sk->__sk_common."
#define DPORT	"ntohs(" SK "skc_dport)"
#define DADDR	"ntop(" SK "skc_daddr)"

static char line[65536];
static char out[1 << 18], err[1 << 16];

static const __u16 ports[] = { 4999, 5000, 5002, 5003, 767, 6144, 1280 };
#define NPORTS	(sizeof(ports) / sizeof(ports[0]))
static const char *const addrs[] = {
	"127.0.0.1", "127.0.0.2", "127.0.0.255", "127.0.1.1", "127.1.0.0",
};
#define NADDRS	(sizeof(addrs) / sizeof(addrs[0]))

/* connect() to @addr:@port: 0 or -errno. */
static int connect_to(const char *addr, __u16 port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (s < 0 || inet_pton(AF_INET, addr, &a.sin_addr) != 1)
		return -EINVAL;
	rc = connect(s, (void *)&a, sizeof(a)) ? -errno : 0;
	close(s);
	return rc;
}

/*
 * pea trace kprobe:tcp_connect PORT ADDR --filter @flt --json, around
 * the connects @fn makes: the events' ports (as printed) in @got, their
 * number returned; the summary checked for @hits, @written.
 */
static int session(const char *flt, void (*fn)(void), unsigned int *got,
		   char (*gaddr)[32], int hits, int written)
{
	char want[256], v[32];
	struct pt_proc p;
	int n = 0, rc, summary = 0;

	PT_OK(pt_trace_start_self(&p, "kprobe:tcp_connect",
				  (char *[]){ DPORT, DADDR, "--json",
					      "--filter", (char *)flt, NULL }),
	      "--filter '%s': attached", flt);
	fn();
	kill(p.pid, SIGINT);
	snprintf(want, sizeof(want),
		 "\"link\":{\"hits\":%d,\"written\":%d,\"filtered\":%d,\"errors\":0,",
		 hits, written, hits - written);
	while (pt_proc_line(&p, false, line, sizeof(line), PT_TOOL_WAIT_MS)) {
		char params[512], *q;

		if (pt_json_streq(line, "type", "summary")) {
			summary += strstr(line, want) != NULL;
			if (!strstr(line, want))
				pt_diag("%s", line);
		}
		if (!pt_json_streq(line, "type", "event") || n >= 16)
			continue;
		if (!pt_json_get(line, "params", params, sizeof(params), NULL))
			params[0] = '\0';
		q = strstr(params, "\"" DPORT "\":");
		got[n] = q ? (unsigned int)atoi(q + strlen("\"" DPORT "\":")) : 0;
		q = strstr(params, "\"" DADDR "\":\"");
		snprintf(v, sizeof(v), "%.*s",
			 q ? (int)strcspn(q + strlen("\"" DADDR "\":\""), "\"") : 0,
			 q ? q + strlen("\"" DADDR "\":\"") : "");
		snprintf(gaddr[n], 32, "%s", v);
		n++;
	}
	pt_proc_drain_err(&p);
	rc = pt_proc_wait(&p);
	PT_EQ(rc, 0, "'%s': exit 0", flt);
	PT_EQ(summary, 1, "'%s': the summary: %d hits, %d written, %d filtered out",
	      flt, hits, written, hits - written);
	pt_proc_close(&p);
	return n;
}

static int refused_conns;

static void connect_ports(void)
{
	unsigned int i;

	for (i = 0; i < NPORTS; i++)
		refused_conns += connect_to("127.0.0.1", ports[i]) ==
				 -ECONNREFUSED;
}

static void connect_addrs(void)
{
	unsigned int i;

	for (i = 0; i < NADDRS; i++)
		refused_conns += connect_to(addrs[i], 5001) == -ECONNREFUSED;
}

static void port_case(const char *flt, const unsigned int *want, int nw)
{
	unsigned int got[16];
	char ga[16][32];
	int n, i, same;

	refused_conns = 0;
	n = session(flt, connect_ports, got, ga, NPORTS, nw);
	PT_EQ(refused_conns, (int)NPORTS, "'%s': %zu connects refused", flt,
	      NPORTS);
	for (i = 0, same = n == nw; same && i < nw; i++)
		same = got[i] == want[i] && !strcmp(ga[i], "127.0.0.1");
	PT_OK(same, "'%s': %d events, the ports exact", flt, nw);
	for (i = 0; !same && i < n; i++)
		pt_diag("event %d: port %u addr %s", i, got[i], ga[i]);
}

static void test_ports(void)
{
	static const unsigned int range[] = { 5000, 5002 }, low[] = { 767 },
				  high[] = { 5003, 6144 };

	port_case(DPORT " >= 5000 && " DPORT " < 5003", range, 2);
	port_case(DPORT " <= 767", low, 1);
	port_case(DPORT " > 5002", high, 2);
}

static void test_addrs(void)
{
	static const char flt[] = DADDR " > \"127.0.0.1\" && " DADDR " <= \"127.0.1.1\"";
	unsigned int got[16];
	char ga[16][32];
	int n, i, same;

	refused_conns = 0;
	n = session(flt, connect_addrs, got, ga, NADDRS, 3);
	PT_EQ(refused_conns, (int)NADDRS, "'%s': %zu connects refused", flt,
	      NADDRS);
	for (i = 0, same = n == 3; same && i < 3; i++)
		same = !strcmp(ga[i], addrs[i + 1]) && got[i] == 5001;
	PT_OK(same, "'%s': 127.0.0.2, 127.0.0.255 and 127.0.1.1 exact", flt);
	for (i = 0; !same && i < n; i++)
		pt_diag("event %d: port %u addr %s", i, got[i], ga[i]);
}

static void test_refused(void)
{
	int rc = pt_run((char *[]){ PT_PEA, "trace", "kprobe:tcp_v4_connect",
				    "--filter", "bswap(addr_len) < 5", NULL },
			out, sizeof(out), err, sizeof(err), NULL, NULL);

	PT_OK(rc == 2 && strstr(err, "'bswap(addr_len)': the value is in a register, which the kernel compares whole: an order of its reversed bytes is none it can test (==, != and & only)"),
	      "bswap() of a register parameter: an order refused, why");
	if (rc != 2)
		pt_diag("exit %d: %s", rc, err);
}

int main(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		/* The debug kernel: no BTF, and the reason said. */
		int rc = pt_run((char *[]){ PT_PEA, "trace",
					    "kprobe:tcp_connect", "--filter",
					    DPORT " < 5", NULL }, out,
				sizeof(out), err, sizeof(err), NULL, NULL);

		PT_OK(rc == 2 && strstr(err, "no BTF"),
		      "no BTF: the filter refused with the reason (%s)", err);
		return pt_done();
	}
	PT_OK(pt_lo_up() > 0, "lo is up");
	test_ports();
	test_addrs();
	test_refused();
	return pt_done();
}
