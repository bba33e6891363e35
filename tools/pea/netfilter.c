// SPDX-License-Identifier: GPL-2.0
/*
 * pea: `pea trace netfilter:FAMILY:HOOK`: parsing the PROBE argument,
 * attaching with PEA_MAP_IOC_ATTACH_NF, and decoding the records (struct
 * pea_nf_record, then the packet's first bytes from its IP header) into
 * one short line or one JSON object per packet.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include "probe_kind.h"
#include "walltime.h"

#define NF_PFX		"netfilter:"

static const char * const nf_hooks[] = {
	[PEA_NF_PRE_ROUTING] = "PRE_ROUTING",
	[PEA_NF_LOCAL_IN] = "LOCAL_IN",
	[PEA_NF_FORWARD] = "FORWARD",
	[PEA_NF_LOCAL_OUT] = "LOCAL_OUT",
	[PEA_NF_POST_ROUTING] = "POST_ROUTING",
};

#define NR_HOOKS	(sizeof(nf_hooks) / sizeof(nf_hooks[0]))

/* A netfilter PROBE's family and hook (struct probe_spec.data). */
struct nf_arg {
	__u32 family, hook;
};

static const char *hook_name(__u32 hook)
{
	return hook < NR_HOOKS ? nf_hooks[hook] : "?";
}

/* "netfilter:ipv4|ipv6:HOOK" (any case) */
static int nf_parse(const char *text, struct probe_spec *spec)
{
	const char *fam = text + strlen(NF_PFX), *hook = strchr(fam, ':');
	size_t lf = hook ? (size_t)(hook - fam) : 0;
	struct nf_arg *nf = PROBE_SPEC_ARG(spec, struct nf_arg);
	unsigned int i;

	if (!hook)
		goto bad;
	if (lf == 4 && !strncasecmp(fam, "ipv4", 4))
		nf->family = PEA_NF_IPV4;
	else if (lf == 4 && !strncasecmp(fam, "ipv6", 4))
		nf->family = PEA_NF_IPV6;
	else
		goto bad;
	for (i = 0; i < NR_HOOKS; i++)
		if (!strcasecmp(hook + 1, nf_hooks[i]))
			break;
	if (i == NR_HOOKS)
		goto bad;
	nf->hook = i;
	snprintf(spec->symbol, sizeof(spec->symbol), "netfilter:%s:%s",
		 nf->family == PEA_NF_IPV4 ? "ipv4" : "ipv6", nf_hooks[i]);
	return 0;
bad:
	tool_usage("trace", "'%s': write netfilter:ipv4|ipv6:HOOK, HOOK one of PRE_ROUTING, LOCAL_IN, FORWARD, LOCAL_OUT, POST_ROUTING",
		   text);
	return -EINVAL;
}

/*
 * Attach a netfilter hook capturing --packet bytes per packet (128 when
 * not given), its records carrying @id (0: the link's).
 */
static int nf_attach(int map_fd, struct probe_spec *spec,
		     const struct probe_opts *o, __u64 id)
{
	unsigned int packet_len = o->packet ? o->packet : 128;
	const struct nf_arg *nf = PROBE_SPEC_ARG(spec, struct nf_arg);
	struct pea_nf_attr a;
	int fd, err;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_NF_F_CLOEXEC;
	a.family = nf->family;
	a.hook = nf->hook;
	a.packet_len = packet_len;
	a.id = id;
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_NF, &a);
	err = errno;
	if (fd >= 0)
		return fd;
	switch (err) {
	case EPERM:
	case EACCES:
		tool_err("cannot attach %s: netfilter hooks need CAP_BPF and CAP_NET_ADMIN (run as root)",
			 spec->text);
		break;
	case EOPNOTSUPP:
		tool_err("cannot attach %s: this kernel has no netfilter (CONFIG_NETFILTER)",
			 spec->text);
		break;
	default:
		probe_explain_common(spec, err, "netfilter");
		break;
	}
	return -err;
}

/*
 * A netfilter record: the task fields go into @ev->rec, the whole record
 * (struct pea_nf_record and the packet bytes) into a new @ev->raw.
 * Returns 0, -EINVAL, or -ENOMEM.
 */
static int nf_decode_record(const void *data, __u32 size,
			    struct trace_event *ev)
{
	const unsigned char *p = data;
	struct pea_nf_record nr;

	if (size < sizeof(nr))
		return -EINVAL;
	memcpy(&nr, p, sizeof(nr));
	if (!(nr.flags & PEA_REC_F_NETFILTER) ||
	    nr.packet_len > size - sizeof(nr) ||
	    nr.packet_len > PEA_NF_PACKET_MAX)
		return -EINVAL;
	memset(&ev->rec, 0, sizeof(ev->rec));
	ev->rec.time_ns = nr.time_ns;
	ev->rec.id = nr.id;
	ev->rec.cpu = nr.cpu;
	ev->rec.pid = nr.pid;
	ev->rec.tgid = nr.tgid;
	ev->rec.flags = nr.flags;
	memcpy(ev->rec.comm, nr.comm, sizeof(nr.comm));
	ev->rec.comm[sizeof(ev->rec.comm) - 1] = '\0';
	/* The whole record, header and packet, for the printers. */
	ev->raw_size = sizeof(nr) + nr.packet_len;
	ev->raw = malloc(ev->raw_size);
	if (!ev->raw)
		return -ENOMEM;
	memcpy(ev->raw, p, ev->raw_size);
	return 0;
}

/* What the captured bytes say about the packet. */
struct nf_pkt {
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	bool addrs;		/* src and dst known */
	bool ports;		/* TCP or UDP ports known */
	bool icmp;		/* ICMP type and code known */
	const char *proto;	/* "TCP", "UDP", "ICMP", "ICMPv6", or NULL */
	unsigned int transport;	/* the protocol after IPv6 extension headers
				 * (else the IP header's) */
	unsigned int sport, dport, type, code;
};

static unsigned int be16(const unsigned char *p)
{
	return p[0] << 8 | p[1];
}

/*
 * IPv6: walk the extension headers from @*off (after the fixed header)
 * while the captured @n bytes hold them: hop-by-hop options, routing,
 * destination options (length in 8-byte units after the first 8),
 * fragment (8 bytes; a fragment other than the first has no transport
 * header: *@first false) and AH (length in 4-byte units after the first
 * 8). Returns the next header after them, with *@off its offset.
 */
static unsigned int ipv6_skip_ext(const unsigned char *pk, unsigned int n,
				  unsigned int nh, unsigned int *off,
				  bool *first)
{
	unsigned int hops;

	for (hops = 0; hops < 16 && *off + 8 <= n; hops++) {
		unsigned int len;

		switch (nh) {
		case 0:		/* hop-by-hop options */
		case 43:	/* routing */
		case 60:	/* destination options */
			len = (pk[*off + 1] + 1) * 8;
			break;
		case 44:	/* fragment */
			len = 8;
			if (be16(pk + *off + 2) & 0xfff8)
				*first = false;
			break;
		case 51:	/* authentication header */
			len = (pk[*off + 1] + 2) * 4;
			break;
		default:
			return nh;
		}
		nh = pk[*off];
		*off += len;
	}
	return nh;
}

static void nf_decode(const struct pea_nf_record *r, const unsigned char *pk,
		      struct nf_pkt *d)
{
	unsigned int n = r->packet_len, l4 = 0, proto = r->protocol;
	bool first = true;	/* not a later fragment */

	memset(d, 0, sizeof(*d));
	if (r->family == PEA_NF_IPV6 && n >= 40) {
		l4 = 40;
		proto = ipv6_skip_ext(pk, n, proto, &l4, &first);
	}
	d->transport = proto;
	switch (proto) {
	case 6:
		d->proto = "TCP";
		break;
	case 17:
		d->proto = "UDP";
		break;
	case 1:
		d->proto = "ICMP";
		break;
	case 58:
		d->proto = "ICMPv6";
		break;
	}
	if (r->family == PEA_NF_IPV4 && n >= 20) {
		inet_ntop(AF_INET, pk + 12, d->src, sizeof(d->src));
		inet_ntop(AF_INET, pk + 16, d->dst, sizeof(d->dst));
		d->addrs = true;
		l4 = (pk[0] & 0xf) * 4;
		first = !(be16(pk + 6) & 0x1fff);
	} else if (r->family == PEA_NF_IPV6 && n >= 40) {
		inet_ntop(AF_INET6, pk + 8, d->src, sizeof(d->src));
		inet_ntop(AF_INET6, pk + 24, d->dst, sizeof(d->dst));
		d->addrs = true;
	}
	if (!d->addrs || !first || l4 < 20)
		return;
	if ((proto == 6 || proto == 17) && n >= l4 + 4) {
		d->sport = be16(pk + l4);
		d->dport = be16(pk + l4 + 2);
		d->ports = true;
	} else if ((proto == 1 || proto == 58) && n >= l4 + 2) {
		d->type = pk[l4];
		d->code = pk[l4 + 1];
		d->icmp = true;
	}
}

static void put_addr(FILE *f, const struct pea_nf_record *r, const char *a,
		     bool port, unsigned int p)
{
	if (!port)
		fputs(a, f);
	else if (r->family == PEA_NF_IPV6)
		fprintf(f, "[%s]:%u", a, p);
	else
		fprintf(f, "%s:%u", a, p);
}

/* A single netfilter probe's own columns. */
static void nf_print_header(FILE *f, const struct trace_fmt *fmt)
{
	fprintf(f, "%-*s %3s %-12s %-12s %s\n",
		trace_time_width(fmt->time_mode),
		trace_time_label(fmt->time_mode), "CPU", "HOOK", "IFINDEX",
		"PACKET");
}

/* "PROTO src > dst [type= code=] len=N" */
static void nf_put_packet(FILE *f, const struct pea_nf_record *r,
			  const struct nf_pkt *d)
{
	if (d->proto)
		fprintf(f, "%s", d->proto);
	else
		fprintf(f, "proto=%u", d->transport);
	if (d->addrs) {
		fputc(' ', f);
		put_addr(f, r, d->src, d->ports, d->sport);
		fputs(" > ", f);
		put_addr(f, r, d->dst, d->ports, d->dport);
	}
	if (d->icmp)
		fprintf(f, " type=%u code=%u", d->type, d->code);
	fprintf(f, " len=%u", r->skb_len);
}

static void nf_print_human(FILE *f, const struct trace_fmt *fmt,
			   const struct trace_event *ev)
{
	const struct pea_nf_record *r = (const void *)ev->raw;
	struct nf_pkt d;
	char ifs[32];

	nf_decode(r, ev->raw + sizeof(*r), &d);
	snprintf(ifs, sizeof(ifs), "in=%d out=%d", r->ifindex_in,
		 r->ifindex_out);
	trace_put_time(f, fmt->time_mode, r->time_ns, fmt->t0_ns,
		       fmt->wall_off_ns);
	fprintf(f, " %3u %-12s %-12s ", r->cpu, hook_name(r->hook), ifs);
	nf_put_packet(f, r, &d);
	fputc('\n', f);
}

/* After the common columns (several probes): "in=N out=N PACKET". */
static void nf_print_details(FILE *f, const struct trace_fmt *fmt,
			     const struct trace_event *ev)
{
	const struct pea_nf_record *r = (const void *)ev->raw;
	struct nf_pkt d;

	(void)fmt;
	if (!ev->raw)
		return;
	nf_decode(r, ev->raw + sizeof(*r), &d);
	fprintf(f, "in=%d out=%d ", r->ifindex_in, r->ifindex_out);
	nf_put_packet(f, r, &d);
}

static void nf_print_json(FILE *f, const struct trace_fmt *fmt,
			  const struct trace_event *ev)
{
	const struct pea_nf_record *r = (const void *)ev->raw;
	const unsigned char *pk = ev->raw + sizeof(*r);
	struct nf_pkt d;
	__u32 i;

	nf_decode(r, pk, &d);
	fprintf(f, "{\"type\":\"event\",\"time_ns\":%llu",
		(unsigned long long)r->time_ns);
	trace_put_time_wall_json(f, fmt->time_mode, r->time_ns,
				 fmt->wall_off_ns);
	fprintf(f, ",\"cpu\":%u,\"pid\":%u,\"tid\":%u,\"comm\":", r->cpu,
		r->tgid, r->pid);
	json_put_str(f, ev->rec.comm, strnlen(ev->rec.comm,
					      sizeof(ev->rec.comm)));
	fputs(",\"probe\":", f);
	json_put_str(f, fmt->probe, strlen(fmt->probe));
	fprintf(f, ",\"family\":\"%s\",\"hook\":\"%s\",\"ifindex_in\":%d,\"ifindex_out\":%d,\"protocol\":%u",
		r->family == PEA_NF_IPV4 ? "ipv4" : "ipv6",
		hook_name(r->hook), r->ifindex_in, r->ifindex_out,
		r->protocol);
	if (d.transport != r->protocol)
		fprintf(f, ",\"transport\":%u", d.transport);
	if (d.proto)
		fprintf(f, ",\"proto\":\"%s\"", d.proto);
	if (d.addrs)
		fprintf(f, ",\"src\":\"%s\",\"dst\":\"%s\"", d.src, d.dst);
	if (d.ports)
		fprintf(f, ",\"sport\":%u,\"dport\":%u", d.sport, d.dport);
	if (d.icmp)
		fprintf(f, ",\"icmp_type\":%u,\"icmp_code\":%u", d.type, d.code);
	fprintf(f, ",\"len\":%u,\"captured\":%u,\"packet\":\"", r->skb_len,
		r->packet_len);
	for (i = 0; i < r->packet_len; i++)
		fprintf(f, "%02x", pk[i]);
	fputs("\"}\n", f);
}

/* A single netfilter probe's own line, or its own JSON object. */
static void nf_print_event(FILE *f, const struct trace_fmt *fmt,
			   const struct trace_event *ev)
{
	if (!ev->raw)
		return;
	if (fmt->json)
		nf_print_json(f, fmt, ev);
	else
		nf_print_human(f, fmt, ev);
}

static const char *nf_check_opts(const struct probe_opts *o)
{
	/* --filter is refused first, as for every kind without it. */
	if (o->filter)
		return NULL;
	if (o->args || o->capture_mode || o->user || o->kernel ||
	    o->maxactive || o->pid || o->cpu >= 0)
		return "--args, --str, --bytes, --user, --kernel, --maxactive, --pid and --cpu are not for netfilter";
	return NULL;
}

/* What trace files (--output) carry of a netfilter record. */
static const struct probe_field nf_fields[] = {
	{ "family", offsetof(struct pea_nf_record, family), 4, false },
	{ "hook", offsetof(struct pea_nf_record, hook), 4, false },
	{ "protocol", offsetof(struct pea_nf_record, protocol), 2, false },
	{ "ifindex_in", offsetof(struct pea_nf_record, ifindex_in), 4, true },
	{ "ifindex_out", offsetof(struct pea_nf_record, ifindex_out), 4, true },
	{ "skb_len", offsetof(struct pea_nf_record, skb_len), 4, false },
	{ "packet_len", offsetof(struct pea_nf_record, packet_len), 4, false },
	{ "packet", sizeof(struct pea_nf_record), 0, false },
};

static const char *const nf_prefixes[] = { NF_PFX, NULL };

const struct probe_kind netfilter_kind = {
	.prefixes = nf_prefixes,
	.parse = nf_parse,
	.attach = nf_attach,
	.opts = PO_PACKET,
	.check_opts = nf_check_opts,
	.rec_flag = PEA_REC_F_NETFILTER,
	.decode = nf_decode_record,
	.print_header = nf_print_header,
	.print_event = nf_print_event,
	.print_fields = nf_print_details,
	.fields = nf_fields,
	.nr_fields = sizeof(nf_fields) / sizeof(nf_fields[0]),
};
