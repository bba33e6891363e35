// SPDX-License-Identifier: GPL-2.0
/*
 * Netfilter producers (PEA_MAP_IOC_ATTACH_NF): UDP, TCP and ICMP packets
 * the test sends over loopback, captured at the IPv4 and IPv6 hooks and
 * compared byte for byte with what was sent (IP header fields and
 * checksum, ports, payload), the record header (hook, family, ifindexes,
 * protocol, lengths, task), packet_len clamps, a packet longer than the
 * capture, errnos (attr, family, hook, priority, permissions), link
 * info and debugfs, the caller's network namespace, exact accounting
 * under load with attach and detach, and objects back to baseline. On a
 * kernel without netfilter the ioctl must answer EOPNOTSUPP.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/utsname.h>
#include <limits.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/udp.h>
#include <netinet/tcp.h>
#include <netinet/ip_icmp.h>
#include "pea_test.h"
#include "pt_perm.h"
#include "pt_net.h"

#define NCPU_MAX	64

static int ncpu;
static int map_fd;
static int ev_fd[NCPU_MAX];
static struct pt_ring rings[NCPU_MAX];
static unsigned char rec[65536];
static int lo_idx;
static __u64 next_id = 0x6e660000;

static struct pea_nf_attr nf_attr(int family, int hook, __u32 len)
{
	struct pea_nf_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_NF_F_CLOEXEC;
	a.id = ++next_id;
	a.family = family;
	a.hook = hook;
	a.packet_len = len;
	return a;
}

static int attach(struct pea_nf_attr *a)
{
	int fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_NF, a);

	return fd < 0 ? -errno : fd;
}

static int attach_errno(struct pea_nf_attr *a)
{
	int fd = attach(a);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -fd;
}

static void link_info(int link, struct pea_link_info *li)
{
	memset(li, 0, sizeof(*li));
	if (ioctl(link, PEA_LINK_IOC_INFO, li))
		pt_fatal("PEA_LINK_IOC_INFO");
}

/*
 * Records read from the rings, kept until a test looks for them: several
 * links write into the same rings, so reading one producer's records
 * must not lose another's.
 */
#define NREC	64
static unsigned char stash[NREC][8192];
static __u32 stash_raw[NREC];
static int nstash;

static void stash_rings(void)
{
	struct perf_event_header *h = (void *)rec;
	int cpu;

	for (cpu = 0; cpu < ncpu; cpu++) {
		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type != PERF_RECORD_SAMPLE || nstash >= NREC)
				continue;
			stash_raw[nstash] = *(__u32 *)(rec + 8);
			memcpy(stash[nstash], rec + 12,
			       (size_t)h->size - 12 < sizeof(stash[0]) ?
			       (size_t)h->size - 12 : sizeof(stash[0]));
			nstash++;
		}
	}
}

/*
 * The next record of producer @id whose packet matches @match (NULL: any),
 * taken out of the stash; NULL if none. Its raw size is in *@raw.
 */
static struct pea_nf_record *next_nf(__u64 id,
				     bool (*match)(const struct pea_nf_record *,
						   const void *),
				     const void *arg)
{
	static unsigned char one[8192];
	struct pea_nf_record *r;
	int i;

	stash_rings();
	for (i = 0; i < nstash; i++) {
		r = (void *)stash[i];
		if (r->id != id || (match && !match(r, arg)))
			continue;
		memcpy(one, stash[i], sizeof(one));
		*(__u32 *)(rec + 8) = stash_raw[i];
		memmove(stash[i], stash[i + 1],
			(nstash - i - 1) * sizeof(stash[0]));
		memmove(&stash_raw[i], &stash_raw[i + 1],
			(nstash - i - 1) * sizeof(stash_raw[0]));
		nstash--;
		return (void *)one;
	}
	return NULL;
}

static const unsigned char *pkt(const struct pea_nf_record *r)
{
	return (const unsigned char *)(r + 1);
}

static __u16 be16(const unsigned char *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

/* UDP destination port @arg (IPv4 or IPv6, no extension headers). */
static bool udp_to(const struct pea_nf_record *r, const void *arg)
{
	unsigned int l3 = r->family == PEA_NF_IPV4 ? 20 : 40;

	return r->protocol == IPPROTO_UDP && r->packet_len >= l3 + 4 &&
	       be16(pkt(r) + l3 + 2) == *(const __u16 *)arg;
}

static void drain_all(void)
{
	pt_rings_drain(rings, ncpu);
	nstash = 0;
}

/* The raw size a record of @r must have: header, packet, padding. */
static void check_raw_size(const struct pea_nf_record *r, const char *what)
{
	__u32 raw = *(__u32 *)(rec + 8);
	__u32 want = sizeof(*r) + r->packet_len;

	/* perf pads u32 size + raw data to 8 bytes. */
	want = ((want + 4 + 7) & ~7U) - 4;
	PT_EQ(raw, want, "%s: raw size %u", what, want);
}

/* ---- UDP over IPv4, all four hooks a local packet passes ---- */

static void check_udp4(const struct pea_nf_record *r, int hook,
		       const unsigned char *payload, size_t plen,
		       __u16 sport, __u16 dport, const char *what)
{
	const unsigned char *p = pkt(r);
	__u32 tot = 20 + 8 + plen;

	PT_EQ(r->flags, PEA_REC_F_NETFILTER, "%s: flags", what);
	PT_EQ(r->family, PEA_NF_IPV4, "%s: family ipv4", what);
	PT_EQ(r->hook, (__u32)hook, "%s: hook %d", what, hook);
	PT_EQ(r->protocol, IPPROTO_UDP, "%s: protocol UDP", what);
	PT_EQ(r->skb_len, tot, "%s: skb_len %u", what, tot);
	PT_EQ(r->packet_len, tot, "%s: packet_len clamped to %u", what, tot);
	PT_EQ(r->cpu < (__u32)ncpu, 1, "%s: cpu %u", what, r->cpu);
	PT_EQ(p[0], 0x45, "%s: version 4, ihl 5", what);
	PT_EQ(be16(p + 2), tot, "%s: IP total length", what);
	PT_EQ(p[8], 64, "%s: TTL 64", what);
	PT_EQ(p[9], IPPROTO_UDP, "%s: IP protocol 17", what);
	PT_EQ(pt_csum_fold(p, 20, 0), 0xffff, "%s: IP header checksum", what);
	PT_OK(!memcmp(p + 12, "\x7f\0\0\x01\x7f\0\0\x01", 8),
	      "%s: 127.0.0.1 -> 127.0.0.1", what);
	PT_EQ(be16(p + 20), sport, "%s: source port %u", what, sport);
	PT_EQ(be16(p + 22), dport, "%s: destination port %u", what, dport);
	PT_EQ(be16(p + 24), 8 + plen, "%s: UDP length", what);
	PT_OK(!memcmp(p + 28, payload, plen), "%s: payload, %zu bytes", what,
	      plen);
	check_raw_size(r, what);
}

static void test_udp4(void)
{
	static const unsigned char msg[] = "pea netfilter udp4 payload";
	static const int hooks[4] = { PEA_NF_LOCAL_OUT, PEA_NF_POST_ROUTING,
				      PEA_NF_PRE_ROUTING, PEA_NF_LOCAL_IN };
	static const char * const names[4] = { "LOCAL_OUT", "POST_ROUTING",
					       "PRE_ROUTING", "LOCAL_IN" };
	const __u16 sport = 40001, dport = 40002;
	struct pea_nf_attr a[4];
	struct pea_link_info li;
	struct pea_nf_record *r;
	int link[4], tx, rxs, i;
	char what[64], got[64];

	tx = pt_udp_bound(AF_INET, sport);
	rxs = pt_udp_bound(AF_INET, dport);
	PT_OK(tx >= 0 && rxs >= 0, "UDP sockets on 127.0.0.1");
	for (i = 0; i < 4; i++) {
		a[i] = nf_attr(PEA_NF_IPV4, hooks[i], PEA_NF_PACKET_MAX);
		link[i] = attach(&a[i]);
		PT_OK(link[i] >= 0, "attach ipv4 %s (%d)", names[i], link[i]);
	}
	drain_all();
	PT_EQ(pt_udp_send(tx, AF_INET, dport, msg, sizeof(msg)),
	      (ssize_t)sizeof(msg), "send one datagram");
	PT_EQ(recv(rxs, got, sizeof(got), 0), (ssize_t)sizeof(msg),
	      "and receive it");
	for (i = 0; i < 4; i++) {
		snprintf(what, sizeof(what), "udp4 %s", names[i]);
		r = next_nf(a[i].id, udp_to, &dport);
		PT_OK(r, "%s: a record", what);
		if (!r)
			continue;
		check_udp4(r, hooks[i], msg, sizeof(msg), sport, dport, what);
		if (hooks[i] == PEA_NF_LOCAL_OUT) {
			/* The sending task, in process context. */
			PT_EQ(r->pid, (__u32)syscall(SYS_gettid), "%s: pid", what);
			PT_EQ(r->tgid, (__u32)getpid(), "%s: tgid", what);
			PT_OK(!strcmp(r->comm, "test_netfilter"), "%s: comm %.16s",
			      what, r->comm);
			PT_EQ(r->ifindex_in, 0, "%s: no input device", what);
			PT_EQ(r->ifindex_out, lo_idx, "%s: output lo", what);
		} else if (hooks[i] == PEA_NF_POST_ROUTING) {
			PT_EQ(r->ifindex_in, 0, "%s: no input device", what);
			PT_EQ(r->ifindex_out, lo_idx, "%s: output lo", what);
		} else {
			/* Receive runs in softirq context: no task. */
			PT_EQ(r->pid, 0, "%s: pid 0 in softirq", what);
			PT_EQ(r->tgid, 0, "%s: tgid 0 in softirq", what);
			PT_EQ(r->comm[0], 0, "%s: empty comm", what);
			PT_EQ(r->ifindex_in, lo_idx, "%s: input lo", what);
			PT_EQ(r->ifindex_out, 0, "%s: no output device", what);
		}
		PT_OK(next_nf(a[i].id, udp_to, &dport) == NULL,
		      "%s: exactly one record", what);
		link_info(link[i], &li);
		PT_EQ(li.id, a[i].id, "%s: info id", what);
		PT_EQ(li.addr, (__u64)(__s64)PEA_NF_PRI_DEFAULT,
		      "%s: info addr is the default priority", what);
		snprintf(what, sizeof(what), "netfilter:ipv4:%s", names[i]);
		PT_OK(!strcmp(li.symbol, what), "info symbol %s", li.symbol);
		PT_EQ(li.hits, li.written, "%s: hits == written (%llu)", what,
		      (unsigned long long)li.hits);
		PT_EQ(li.errors, 0, "%s: no errors", what);
		close(link[i]);
	}
	close(tx);
	close(rxs);
}

/* ---- packet_len: clamps, a short capture, a packet past 4096 ---- */

static void test_clamp(void)
{
	static unsigned char big[6000];
	const __u16 sport = 40011, dport = 40012;
	struct pea_nf_attr a;
	struct pea_nf_record *r;
	int tx, rxs, link;
	unsigned int i;

	for (i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)(i * 13 + 7);
	tx = pt_udp_bound(AF_INET, sport);
	rxs = pt_udp_bound(AF_INET, dport);

	/* 10 bytes: the first 10 of the IP header. */
	a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_IN, 10);
	link = attach(&a);
	PT_OK(link >= 0, "attach packet_len 10");
	drain_all();
	pt_udp_send(tx, AF_INET, dport, big, 100);
	r = next_nf(a.id, NULL, NULL);
	PT_OK(r, "packet_len 10: a record");
	if (r) {
		PT_EQ(r->packet_len, 10, "packet_len 10: 10 bytes");
		PT_EQ(r->skb_len, 128, "skb_len still the whole packet (128)");
		PT_EQ(r->protocol, IPPROTO_UDP, "protocol read past the capture");
		PT_EQ(pkt(r)[0], 0x45, "first byte of the IP header");
		PT_EQ(be16(pkt(r) + 2), 128, "IP total length 128");
		check_raw_size(r, "packet_len 10");
	}
	close(link);

	/* 1 byte. */
	a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_IN, 1);
	link = attach(&a);
	drain_all();
	pt_udp_send(tx, AF_INET, dport, big, 1);
	r = next_nf(a.id, NULL, NULL);
	PT_OK(r && r->packet_len == 1 && r->skb_len == 29 && pkt(r)[0] == 0x45,
	      "packet_len 1: one byte of a 29-byte packet");
	close(link);

	/* 4096 of a 6028-byte packet: linear or paged, byte for byte. */
	a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_IN, PEA_NF_PACKET_MAX);
	link = attach(&a);
	drain_all();
	PT_EQ(pt_udp_send(tx, AF_INET, dport, big, sizeof(big)),
	      (ssize_t)sizeof(big), "send 6000 bytes");
	r = next_nf(a.id, NULL, NULL);
	PT_OK(r, "a 6028-byte packet: a record");
	if (r) {
		PT_EQ(r->skb_len, 6028, "skb_len 6028");
		PT_EQ(r->packet_len, PEA_NF_PACKET_MAX, "4096 bytes kept");
		PT_EQ(be16(pkt(r) + 24), 6008, "UDP length 6008");
		PT_OK(!memcmp(pkt(r) + 28, big, PEA_NF_PACKET_MAX - 28),
		      "the first 4068 payload bytes exact");
		check_raw_size(r, "packet_len 4096");
	}
	close(link);
	close(tx);
	close(rxs);
}

/* ---- TCP over IPv4 ---- */

/* A TCP segment to port @arg carrying data (PSH). */
static bool tcp_data_to(const struct pea_nf_record *r, const void *arg)
{
	const unsigned char *p = pkt(r);

	return r->protocol == IPPROTO_TCP && r->packet_len >= 40 &&
	       be16(p + 22) == *(const __u16 *)arg && (p[33] & 0x08);
}

static void test_tcp4(void)
{
	static const unsigned char msg[] = "pea netfilter tcp4 stream bytes";
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const __u16 port = 40021;
	struct pea_nf_attr a;
	struct pea_nf_record *r;
	socklen_t sl = sizeof(sa);
	int ls, cs, as, link, one = 1;
	char got[64];

	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	PT_EQ(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0, "TCP bind");
	PT_EQ(listen(ls, 1), 0, "TCP listen");
	cs = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	PT_EQ(connect(cs, (struct sockaddr *)&sa, sizeof(sa)), 0,
	      "TCP connect");
	as = accept(ls, NULL, NULL);
	PT_OK(as >= 0, "TCP accept");
	pt_rcvtimeo(as);
	getsockname(cs, (struct sockaddr *)&sa, &sl);

	a = nf_attr(PEA_NF_IPV4, PEA_NF_PRE_ROUTING, 200);
	link = attach(&a);
	PT_OK(link >= 0, "attach ipv4 PRE_ROUTING");
	drain_all();
	PT_EQ(send(cs, msg, sizeof(msg), 0), (ssize_t)sizeof(msg), "TCP send");
	PT_EQ(recv(as, got, sizeof(msg), MSG_WAITALL), (ssize_t)sizeof(msg),
	      "TCP receive");
	r = next_nf(a.id, tcp_data_to, &port);
	PT_OK(r, "tcp4: the data segment's record");
	if (r) {
		const unsigned char *p = pkt(r);
		unsigned int doff = (p[32] >> 4) * 4;
		__u32 tot = 20 + doff + sizeof(msg);

		PT_EQ(r->protocol, IPPROTO_TCP, "tcp4: protocol TCP");
		PT_EQ(p[9], IPPROTO_TCP, "tcp4: IP protocol 6");
		PT_EQ(r->skb_len, tot, "tcp4: skb_len %u", tot);
		PT_EQ(r->packet_len, tot, "tcp4: packet_len %u", tot);
		PT_EQ(be16(p + 2), tot, "tcp4: IP total length");
		PT_EQ(pt_csum_fold(p, 20, 0), 0xffff, "tcp4: IP checksum");
		PT_EQ(be16(p + 20), ntohs(sa.sin_port),
		      "tcp4: source port the client's");
		PT_EQ(be16(p + 22), port, "tcp4: destination port %u", port);
		PT_OK(doff >= 20 && doff <= 60, "tcp4: data offset %u", doff);
		PT_EQ(p[33] & 0x18, 0x18, "tcp4: PSH|ACK");
		PT_OK(!memcmp(p + 20 + doff, msg, sizeof(msg)),
		      "tcp4: the stream bytes exact");
		PT_EQ(r->ifindex_in, lo_idx, "tcp4: input lo");
	}
	close(link);
	close(as);
	close(cs);
	close(ls);
}

/* ---- ICMP echo over IPv4 (a raw socket) ---- */

static bool icmp_type(const struct pea_nf_record *r, const void *arg)
{
	return r->protocol == IPPROTO_ICMP && r->packet_len >= 28 &&
	       pkt(r)[20] == *(const unsigned char *)arg;
}

static void test_icmp4(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	unsigned char req[8 + 24], reply[128];
	unsigned char t_req = ICMP_ECHO, t_rep = ICMP_ECHOREPLY;
	struct pea_nf_attr aout, ain;
	struct pea_nf_record *r;
	int s, lout, lin;
	__u16 c;
	unsigned int i;

	memset(req, 0, sizeof(req));
	req[0] = ICMP_ECHO;
	req[4] = 0x12;	/* identifier 0x1234 */
	req[5] = 0x34;
	req[7] = 7;	/* sequence 7 */
	for (i = 8; i < sizeof(req); i++)
		req[i] = (unsigned char)('a' + i);
	c = ~pt_csum_fold(req, sizeof(req), 0);
	req[2] = c >> 8;
	req[3] = c & 0xff;

	s = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	PT_OK(s >= 0, "raw ICMP socket");
	pt_rcvtimeo(s);
	aout = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_OUT, 64);
	ain = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_IN, 64);
	lout = attach(&aout);
	lin = attach(&ain);
	PT_OK(lout >= 0 && lin >= 0, "attach LOCAL_OUT and LOCAL_IN");
	drain_all();
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	PT_EQ(sendto(s, req, sizeof(req), 0, (struct sockaddr *)&sa,
		     sizeof(sa)), (ssize_t)sizeof(req), "send an echo request");
	/* The raw socket sees the request, then the reply. */
	PT_EQ(recv(s, reply, sizeof(reply), 0), 20 + (ssize_t)sizeof(req),
	      "raw socket: the request");
	PT_EQ(recv(s, reply, sizeof(reply), 0), 20 + (ssize_t)sizeof(req),
	      "raw socket: the reply");

	r = next_nf(aout.id, icmp_type, &t_req);
	PT_OK(r, "icmp4 LOCAL_OUT: the echo request");
	if (r) {
		PT_EQ(r->protocol, IPPROTO_ICMP, "icmp4: protocol ICMP");
		PT_EQ(r->skb_len, 20 + sizeof(req), "icmp4: skb_len 52");
		PT_EQ(r->packet_len, 20 + sizeof(req), "icmp4: packet_len 52");
		PT_OK(!memcmp(pkt(r) + 20, req, sizeof(req)),
		      "icmp4: the request's ICMP bytes exact");
	}
	r = next_nf(aout.id, icmp_type, &t_rep);
	PT_OK(r, "icmp4 LOCAL_OUT: the kernel's echo reply");
	if (r) {
		PT_EQ(pkt(r)[21], 0, "icmp4 reply: code 0");
		PT_OK(!memcmp(pkt(r) + 24, req + 4, sizeof(req) - 4),
		      "icmp4 reply: identifier, sequence, data echoed");
		PT_EQ(pt_csum_fold(pkt(r) + 20, sizeof(req), 0), 0xffff,
		      "icmp4 reply: ICMP checksum");
		PT_EQ(r->pid, 0, "icmp4 reply: sent from softirq, pid 0");
	}
	r = next_nf(ain.id, icmp_type, &t_rep);
	PT_OK(r && r->hook == PEA_NF_LOCAL_IN && r->ifindex_in == lo_idx,
	      "icmp4 LOCAL_IN: the reply arrives on lo");
	close(lout);
	close(lin);
	close(s);
}

/* ---- UDP over IPv6 ---- */

static void test_udp6(void)
{
	static const unsigned char msg[] = "pea netfilter udp6 payload!";
	static const unsigned char lo6[16] = { [15] = 1 };
	const __u16 sport = 40031, dport = 40032;
	struct pea_nf_attr aout, apre;
	struct pea_nf_record *r;
	int tx, rxs, lout, lpre, pass;
	char got[64];

	tx = pt_udp_bound(AF_INET6, sport);
	rxs = pt_udp_bound(AF_INET6, dport);
	PT_OK(tx >= 0 && rxs >= 0, "UDP sockets on ::1 (%d %d)", tx, rxs);
	aout = nf_attr(PEA_NF_IPV6, PEA_NF_LOCAL_OUT, PEA_NF_PACKET_MAX);
	apre = nf_attr(PEA_NF_IPV6, PEA_NF_PRE_ROUTING, PEA_NF_PACKET_MAX);
	lout = attach(&aout);
	lpre = attach(&apre);
	PT_OK(lout >= 0 && lpre >= 0, "attach ipv6 LOCAL_OUT and PRE_ROUTING");
	drain_all();
	PT_EQ(pt_udp_send(tx, AF_INET6, dport, msg, sizeof(msg)),
	      (ssize_t)sizeof(msg), "send one datagram to ::1");
	PT_EQ(recv(rxs, got, sizeof(got), 0), (ssize_t)sizeof(msg),
	      "and receive it");
	for (pass = 0; pass < 2; pass++) {
		const char *what = pass ? "udp6 PRE_ROUTING" : "udp6 LOCAL_OUT";
		const unsigned char *p;
		__u32 tot = 40 + 8 + sizeof(msg);

		r = next_nf(pass ? apre.id : aout.id, udp_to, &dport);
		PT_OK(r, "%s: a record", what);
		if (!r)
			continue;
		p = pkt(r);
		PT_EQ(r->family, PEA_NF_IPV6, "%s: family ipv6", what);
		PT_EQ(r->hook, pass ? PEA_NF_PRE_ROUTING : PEA_NF_LOCAL_OUT,
		      "%s: hook", what);
		PT_EQ(r->protocol, IPPROTO_UDP, "%s: next header UDP", what);
		PT_EQ(r->skb_len, tot, "%s: skb_len %u", what, tot);
		PT_EQ(r->packet_len, tot, "%s: packet_len %u", what, tot);
		PT_EQ(p[0] >> 4, 6, "%s: version 6", what);
		PT_EQ(be16(p + 4), 8 + sizeof(msg), "%s: payload length", what);
		PT_EQ(p[6], IPPROTO_UDP, "%s: next header 17", what);
		PT_EQ(p[7], 64, "%s: hop limit 64", what);
		PT_OK(!memcmp(p + 8, lo6, 16) && !memcmp(p + 24, lo6, 16),
		      "%s: ::1 -> ::1", what);
		PT_EQ(be16(p + 40), sport, "%s: source port", what);
		PT_EQ(be16(p + 42), dport, "%s: destination port", what);
		PT_EQ(be16(p + 44), 8 + sizeof(msg), "%s: UDP length", what);
		PT_OK(!memcmp(p + 48, msg, sizeof(msg)), "%s: payload exact",
		      what);
		PT_EQ(pass ? r->ifindex_in : r->ifindex_out, lo_idx,
		      "%s: device lo", what);
		check_raw_size(r, what);
	}
	close(lout);
	close(lpre);
	close(tx);
	close(rxs);
}

/* ---- FORWARD sees nothing local; priorities; info; debugfs ---- */

static void test_forward_prio(void)
{
	static const unsigned char msg[] = "fw";
	const __u16 sport = 40041, dport = 40042;
	struct pea_nf_attr a, b;
	struct pea_link_info li;
	struct pea_nf_record *r;
	char dbg[8192], line[128];
	int tx, rxs, lfw, lprio, i;

	tx = pt_udp_bound(AF_INET, sport);
	rxs = pt_udp_bound(AF_INET, dport);
	a = nf_attr(PEA_NF_IPV4, PEA_NF_FORWARD, 64);
	lfw = attach(&a);
	PT_OK(lfw >= 0, "attach ipv4 FORWARD");
	b = nf_attr(PEA_NF_IPV4, PEA_NF_POST_ROUTING, 64);
	b.flags |= PEA_NF_F_PRIORITY;
	b.priority = -150;	/* NF_IP_PRI_MANGLE */
	lprio = attach(&b);
	PT_OK(lprio >= 0, "attach ipv4 POST_ROUTING at priority -150");
	drain_all();
	for (i = 0; i < 5; i++)
		pt_udp_send(tx, AF_INET, dport, msg, sizeof(msg));
	link_info(lfw, &li);
	PT_EQ(li.hits, 0, "FORWARD: no hit for local traffic");
	PT_EQ(li.addr, (__u64)(__s64)PEA_NF_PRI_DEFAULT,
	      "FORWARD: default priority");
	link_info(lprio, &li);
	PT_EQ(li.hits, 5, "priority -150: 5 hits");
	PT_EQ(li.written, 5, "priority -150: 5 written");
	PT_EQ(li.addr, (__u64)(__s64)-150, "info addr is the priority");
	PT_EQ(li.flags, PEA_NF_F_CLOEXEC | PEA_NF_F_PRIORITY,
	      "info flags are the attach flags");
	for (i = 0; i < 5; i++) {
		r = next_nf(b.id, udp_to, &dport);
		if (!r)
			break;
	}
	PT_EQ(i, 5, "5 records at priority -150");
	PT_OK(next_nf(a.id, NULL, NULL) == NULL, "none from FORWARD");
	PT_EQ(fcntl(lprio, F_GETFD), FD_CLOEXEC, "link fd O_CLOEXEC");

	snprintf(line, sizeof(line), " netfilter:ipv4:POST_ROUTING 0x%x 5 5 0 0 0 0\n",
		 PEA_NF_F_CLOEXEC | PEA_NF_F_PRIORITY);
	PT_OK(pt_read_file("/sys/kernel/debug/pea/links", dbg, sizeof(dbg)) == 0 &&
	      strstr(dbg, line), "debugfs links:%s", line);
	close(lprio);
	close(lfw);
	PT_OK(pt_read_file("/sys/kernel/debug/pea/links", dbg, sizeof(dbg)) == 0 &&
	      !strstr(dbg, "netfilter:"), "debugfs: no netfilter link after close");
	close(tx);
	close(rxs);
}

/* ---- errnos ---- */

/* Nobody with the capabilities of mask *@arg (0: none) attaches. */
static int perm_child(void *arg)
{
	struct pea_nf_attr a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_IN, 64);

	if (pt_drop_to_nobody_caps(*(__u64 *)arg))
		return 100;
	return attach_errno(&a);
}

/*
 * Nobody becomes root of a user namespace of its own with a network
 * namespace in it (unshare -Urn): every capability there, CAP_NET_ADMIN
 * over that netns included, none in the initial one.
 */
static int userns_child(void *arg)
{
	struct pea_nf_attr a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_IN, 64);

	(void)arg;
	if (pt_drop_to_nobody_caps(0))
		return 100;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET))
		return 200 + errno;
	return attach_errno(&a);
}

/* Root in a new network namespace: traffic there, not in the parent's. */
static int netns_child(void *arg)
{
	static const unsigned char msg[] = "in a new netns";
	const __u16 dport = 40052;
	struct pea_nf_attr a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_OUT, 64);
	struct pea_link_info li;
	int link, tx;

	(void)arg;
	if (unshare(CLONE_NEWNET))
		return 100;
	if (pt_lo_up() < 0)
		return 101;
	link = attach(&a);
	if (link < 0)
		return 102;
	tx = pt_udp_bound(AF_INET, 40051);
	/* A receiver: no ICMP port unreachable through LOCAL_OUT. */
	if (tx < 0 || pt_udp_bound(AF_INET, dport) < 0)
		return 103;
	if (pt_udp_send(tx, AF_INET, dport, msg, sizeof(msg)) != sizeof(msg))
		return 104;
	usleep(200000);	/* the parent sends meanwhile: not counted */
	link_info(link, &li);
	if (li.hits != 1 || li.written != 1)
		return 110 + li.hits;
	return 0;
}

static void test_errors(void)
{
	struct pea_nf_attr a;
	struct utsname u;
	__u64 caps;
	struct {
		struct pea_nf_attr a;
		__u64 tail;
	} big;

	a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_IN, 0);
	PT_EQ(attach_errno(&a), EINVAL, "packet_len 0: EINVAL");
	a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_IN, PEA_NF_PACKET_MAX + 1);
	PT_EQ(attach_errno(&a), E2BIG, "packet_len 4097: E2BIG");
	a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_IN, PEA_NF_PACKET_MAX);
	PT_EQ(attach_errno(&a), 0, "packet_len 4096: accepted");
	a = nf_attr(3, PEA_NF_LOCAL_IN, 64);
	PT_EQ(attach_errno(&a), EAFNOSUPPORT, "family 3 (ARP): EAFNOSUPPORT");
	a = nf_attr(0, PEA_NF_LOCAL_IN, 64);
	PT_EQ(attach_errno(&a), EAFNOSUPPORT, "family 0: EAFNOSUPPORT");
	a = nf_attr(PEA_NF_IPV6, 5, 64);
	PT_EQ(attach_errno(&a), EPROTO, "hook 5: EPROTO");
	a = nf_attr(PEA_NF_IPV4, 0xffffffff, 64);
	PT_EQ(attach_errno(&a), EPROTO, "hook ~0: EPROTO");
	a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_IN, 64);
	a.flags |= 1U << 7;
	PT_EQ(attach_errno(&a), EINVAL, "unknown flag: EINVAL");
	a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_IN, 64);
	a.reserved = 1;
	PT_EQ(attach_errno(&a), EINVAL, "reserved set: EINVAL");
	a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_IN, 64);
	a.priority = 100;
	PT_EQ(attach_errno(&a), EINVAL,
	      "a priority without PEA_NF_F_PRIORITY: EINVAL");
	a.flags |= PEA_NF_F_PRIORITY;
	PT_EQ(attach_errno(&a), 0, "with it: accepted");
	a.priority = INT_MIN;
	PT_EQ(attach_errno(&a), ERANGE, "priority INT_MIN: ERANGE");
	a.priority = INT_MAX;
	PT_EQ(attach_errno(&a), ERANGE, "priority INT_MAX: ERANGE");
	a.priority = INT_MIN + 1;
	PT_EQ(attach_errno(&a), 0, "priority INT_MIN + 1: accepted");
	a.priority = INT_MAX - 1;
	PT_EQ(attach_errno(&a), 0, "priority INT_MAX - 1: accepted");
	a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_IN, 64);
	a.size = sizeof(a) - 8;
	PT_EQ(attach_errno(&a), EINVAL, "short size: EINVAL");
	memset(&big, 0, sizeof(big));
	big.a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_IN, 64);
	big.a.size = sizeof(big);
	PT_EQ(attach_errno(&big.a), 0, "a longer attr with a zero tail: ok");
	big.tail = 1;
	PT_EQ(attach_errno(&big.a), E2BIG, "a non-zero tail: E2BIG");
	PT_EQ(pt_ioctl_errno(map_fd, PEA_MAP_IOC_ATTACH_NF, (void *)8), EFAULT,
	      "a bad pointer: EFAULT");

	/* A BPF program at a network hook's rule: CAP_BPF + CAP_NET_ADMIN. */
	caps = 1ULL << CAP_PERFMON;
	PT_EQ(pt_in_child(perm_child, &caps), EPERM,
	      "nobody with CAP_PERFMON only: EPERM");
	caps = 1ULL << CAP_NET_ADMIN;
	PT_EQ(pt_in_child(perm_child, &caps), EPERM,
	      "nobody with CAP_NET_ADMIN only: EPERM (no CAP_BPF)");
	caps = 1ULL << CAP_BPF;
	PT_EQ(pt_in_child(perm_child, &caps), EPERM,
	      "nobody with CAP_BPF only: EPERM");
	caps = 1ULL << CAP_NET_ADMIN | 1ULL << CAP_BPF;
	PT_EQ(pt_in_child(perm_child, &caps), 0,
	      "nobody with CAP_NET_ADMIN and CAP_BPF: allowed");
	caps = 0;
	PT_EQ(pt_in_child(perm_child, &caps), EPERM,
	      "nobody without capabilities: EPERM");
	uname(&u);
	if (strstr(u.release, "-pea-"))
		/*
		 * x86_64_defconfig: no CONFIG_USER_NS, so nobody cannot make
		 * the network namespace either.
		 */
		PT_EQ(pt_in_child(userns_child, NULL), 200 + EPERM,
		      "pea's debug kernels have no user namespaces: unshare EPERM");
	else
		PT_EQ(pt_in_child(userns_child, NULL), EPERM,
		      "nobody as root of its own user and network namespace: EPERM");

	{
		const __u16 dport = 40052;
		int tx = pt_udp_bound(AF_INET, 40053);
		int rx = pt_udp_bound(AF_INET, dport);
		pid_t pid;
		int status = 0, i;

		fflush(stdout);
		pid = fork();
		if (pid == 0)
			_exit(netns_child(NULL));
		for (i = 0; i < 10; i++) {
			pt_udp_send(tx, AF_INET, dport, "x", 1);
			usleep(10000);
		}
		waitpid(pid, &status, 0);
		PT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : 255, 0,
		      "a link in a new netns sees its packet, not the parent's");
		close(tx);
		close(rx);
	}
	drain_all();
}

/* ---- load: attach and detach while packets flow; exact accounting ---- */

static volatile int load_stop;

static void *load_fn(void *arg)
{
	int s = pt_udp_bound(AF_INET, 0);
	char b[64] = { 0 };

	(void)arg;
	while (!load_stop)
		pt_udp_send(s, AF_INET, 40061, b, sizeof(b));
	close(s);
	return NULL;
}

static void load_start(pthread_t *th, int n)
{
	int i;

	load_stop = 0;
	for (i = 0; i < n; i++)
		pthread_create(&th[i], NULL, load_fn, NULL);
}

static void load_end(pthread_t *th, int n)
{
	int i;

	load_stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* Records of producer @id and lost counts in every ring. */
static void count_rings(__u64 id, __u64 *got, __u64 *lost)
{
	struct perf_event_header *h = (void *)rec;
	int cpu;

	for (cpu = 0; cpu < ncpu; cpu++) {
		__u64 pend = 0;

		while (pt_ring_next(&rings[cpu], rec)) {
			if (h->type == PERF_RECORD_LOST)
				*lost += ((__u64 *)(rec + 8))[1];
			else if (h->type == PERF_RECORD_SAMPLE &&
				 ((struct pea_nf_record *)(rec + 12))->id == id)
				(*got)++;
		}
		if (!ioctl(ev_fd[cpu], PEA_EVENT_IOC_TAKE_LOST, &pend))
			*lost += pend;
	}
}

static void test_load(void)
{
	__u64 written = 0, hits = 0, errors = 0, other = 0, got = 0, lost = 0;
	int objs[4] = { 0 }, objs0[4] = { 0 };
	int i, link, bad = 0, nth = ncpu < 4 ? ncpu : 4;
	pthread_t th[4];
	/* A drain socket, so the load's datagrams are not refused. */
	int sink = pt_udp_bound(AF_INET, 40061);

	pt_read_objects_settled(objs0);
	drain_all();
	load_start(th, nth);
	for (i = 0; i < 30; i++) {
		struct pea_nf_attr a = nf_attr(PEA_NF_IPV4, i % 5 == 2 ?
					       PEA_NF_LOCAL_OUT : i % 5,
					       i % 2 ? 64 : 4096);

		link = attach(&a);
		if (link < 0) {
			bad++;
			continue;
		}
		usleep(2000);
		close(link);
	}
	load_end(th, nth);
	PT_EQ(bad, 0, "30 attaches and detaches under load");
	drain_all();

	/*
	 * Exact accounting: attach under load, stop the load, read the
	 * counters, detach: every hit is in a ring or counted lost.
	 */
	for (i = 0; i < 10; i++) {
		struct pea_nf_attr a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_OUT,
					       1024);
		struct pea_link_info li;

		for (int c = 0; c < ncpu; c++) {
			__u64 pend;

			pt_ring_drain(&rings[c]);
			ioctl(ev_fd[c], PEA_EVENT_IOC_TAKE_LOST, &pend);
		}
		load_start(th, nth);
		link = attach(&a);
		/* Long enough to fill the rings: some records are lost. */
		usleep(100000);
		load_end(th, nth);
		if (link < 0) {
			bad++;
			continue;
		}
		link_info(link, &li);
		close(link);
		written += li.written;
		errors += li.dropped;
		other += li.errors;
		hits += li.hits;
		count_rings(a.id, &got, &lost);
	}
	PT_EQ(bad, 0, "10 more attaches under load");
	PT_OK(hits > 0 && got + lost == hits,
	      "accounting: %llu received + %llu lost == %llu hits",
	      (unsigned long long)got, (unsigned long long)lost,
	      (unsigned long long)hits);
	PT_OK(got == written && lost == errors && other == 0,
	      "received == written (%llu), lost == the link's drops (%llu), no errors",
	      (unsigned long long)written, (unsigned long long)errors);
	close(sink);
	drain_all();
	for (i = 0; i < 1000 && pt_read_objects(objs) == 0 &&
	     memcmp(objs, objs0, sizeof(objs)); i++)
		usleep(1000);
	PT_EQ(objs[3], objs0[3], "links back to baseline (%d)", objs[3]);
	PT_EQ(objs[0], objs0[0], "maps back to baseline (%d)", objs[0]);
}

static void test_no_netfilter(void)
{
	struct pea_nf_attr a = nf_attr(PEA_NF_IPV4, PEA_NF_LOCAL_IN, 64);
	int objs[4], objs0[4];

	pt_diag("a kernel without netfilter: the attach must be refused");
	pt_read_objects_settled(objs0);
	PT_EQ(attach_errno(&a), EOPNOTSUPP, "no netfilter: EOPNOTSUPP");
	a.packet_len = 0;
	PT_EQ(attach_errno(&a), EOPNOTSUPP, "whatever the attr: EOPNOTSUPP");
	PT_EQ(pt_read_objects(objs), 0, "objects readable");
	PT_EQ(objs[3], objs0[3], "no link created");
}

int main(void)
{
	pt_dev();
	ncpu = pt_cpu_map("nf", 64, &map_fd, ev_fd, rings);
	if (!pt_have_netfilter()) {
		test_no_netfilter();
		return pt_done();
	}
	lo_idx = pt_lo_up();
	PT_OK(lo_idx > 0, "lo is up, ifindex %d", lo_idx);
	test_udp4();
	test_clamp();
	test_tcp4();
	test_icmp4();
	test_udp6();
	test_forward_prio();
	test_errors();
	test_load();
	return pt_done();
}
