// SPDX-License-Identifier: GPL-2.0
/*
 * pea: writing a CTF 1.8 trace (pea trace --output DIR|net://... --format
 * ctf).
 *
 * The trace is a plain-text TSDL metadata and one stream per CPU ring
 * that saw an event or a loss, "stream_CPU", which the writer hands to a
 * sink (trace_sink.h): a directory, or an lttng-relayd that stores the
 * same files and serves them live. Everything is little endian and byte
 * aligned. A stream is a run of packets: the packet
 * header (magic, stream id), the packet context (timestamp_begin/end on
 * the "monotonic" clock, content and packet size in bits, the
 * events_discarded counter, cpu_id), then the events, each an event
 * header (event class id, the timestamp in ns) and the payload. Event
 * class N is probe index N; its payload is pea's record fields, then a
 * kprobe's (or uprobe's) args, ret/latency and capture, a tracepoint's
 * fields in a struct typed from its tracefs format, or a netfilter
 * record's fields and packet bytes. With --kstack every event then ends
 * with its kernel stack as --json has it: __kstack_length frames, their
 * names as a sequence of strings (_kstack, "symbol+0xOFF") and their
 * addresses as a sequence of hex integers (_kstack_addr).
 *
 * Lost records become CTF discarded events: every stream starts with an
 * empty packet whose events_discarded is 0; a lost notice ends the packet
 * under way and adds to the stream's counter, and the packets after it
 * carry the new total, so a reader (babeltrace2) reports the difference
 * as discarded events. Events are kept in memory one packet at a time
 * (at most PACKET_MAX bytes before it is handed on).
 *
 * With a live interval (struct ctf_opts), every CPU's stream starts when
 * the writer opens, with its empty packet at start_ns, and
 * trace_writer_tick() also ends
 * a stream's packet once its first event is that old (any sink: a local
 * copy is cut as the relayd's is), and gives a live sink a beacon for a
 * stream with nothing new: "nothing up to T", T the
 * time of the last event of any stream when the events come in time
 * order (every ring is then proven to hold nothing older), else the
 * stream's own last time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pea_tool.h"
#include "probe_kind.h"
#include "tpformat.h"
#include "trace_sink.h"
#include "trace_writer.h"

#define CTF_MAGIC	0xc1fc1fc1U
#define PACKET_MAX	(256 * 1024)
/* Packet header + context bytes: 2 x u32, 5 x u64, u32. */
#define PACKET_HDR	(8 + 40 + 4)

struct bytes {
	unsigned char *p;
	size_t len, cap;
	bool oom;
};

struct ctf_stream {
	bool started;		/* the empty first packet is out */
	bool dirty;		/* a loss since the last packet */
	struct bytes pkt;	/* events of the packet under way */
	__u64 nev;
	__u64 ts_begin, ts_end;	/* of the packet under way */
	__u64 last_ts;		/* of the last packet written */
	__u64 discarded;	/* the free-running counter */
	__u64 seq;		/* packets handed on */
	__u64 last_emit;	/* tick time of the last packet or beacon */
};

struct ctf_writer {
	struct trace_writer w;
	struct trace_sink *sink;
	struct ctf_opts o;
	struct ctf_stream *s;
	__u64 last_ts;		/* of any event: for loss-only packets */
	__u64 now;		/* of the last tick */
	int err;		/* the first write error */
};

/* ---- byte buffers ---- */

static void put(struct bytes *b, const void *p, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		unsigned char *q;

		while (cap < b->len + n)
			cap *= 2;
		q = realloc(b->p, cap);
		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* Little endian, as the metadata declares (and as x86 stores them). */
static void put_u8(struct bytes *b, __u8 v)
{
	put(b, &v, 1);
}

static void put_u16(struct bytes *b, __u16 v)
{
	put(b, &v, 2);
}

static void put_u32(struct bytes *b, __u32 v)
{
	put(b, &v, 4);
}

static void put_u64(struct bytes *b, __u64 v)
{
	put(b, &v, 8);
}

/* A CTF string: the bytes up to the first NUL (at most @max), then NUL. */
static void put_str(struct bytes *b, const void *s, size_t max)
{
	put(b, s, strnlen(s, max));
	put_u8(b, 0);
}

/* ---- metadata ---- */

static const char metadata_head[] =
"/* CTF 1.8 */\n"
"\n"
"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
"typealias integer { size = 8; align = 8; signed = false; base = 16; } := xint8_t;\n"
"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
"typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n"
"typealias integer { size = 64; align = 8; signed = false; base = 16; } := xint64_t;\n"
"\n"
"trace {\n"
"\tmajor = 1;\n"
"\tminor = 8;\n"
"\tbyte_order = le;\n"
"\tpacket.header := struct {\n"
"\t\tuint32_t magic;\n"
"\t\tuint32_t stream_id;\n"
"\t};\n"
"};\n"
"\n";

static const char metadata_clock[] =
"clock {\n"
"\tname = monotonic;\n"
"\tdescription = \"CLOCK_MONOTONIC, the clock of pea records\";\n"
"\tfreq = 1000000000;\n";

/*
 * Then the clock's offset: 0, or CLOCK_REALTIME - CLOCK_MONOTONIC as
 * pea trace read it at start (offset_s seconds and offset ns), so that
 * viewers show wall-clock times.
 */
static const char metadata_stream[] =
"\tabsolute = false;\n"
"};\n"
"\n"
"typealias integer {\n"
"\tsize = 64; align = 8; signed = false;\n"
"\tmap = clock.monotonic.value;\n"
"} := uint64_clock_monotonic_t;\n"
"\n"
"stream {\n"
"\tid = 0;\n"
"\tevent.header := struct {\n"
"\t\tuint32_t id;\n"
"\t\tuint64_clock_monotonic_t timestamp;\n"
"\t};\n"
"\tpacket.context := struct {\n"
"\t\tuint64_clock_monotonic_t timestamp_begin;\n"
"\t\tuint64_clock_monotonic_t timestamp_end;\n"
"\t\tuint64_t content_size;\n"
"\t\tuint64_t packet_size;\n"
"\t\tuint64_t events_discarded;\n"
"\t\tuint32_t cpu_id;\n"
"\t};\n"
"};\n"
"\n";

/* A TSDL string literal: quotes and backslashes escaped. */
static void tsdl_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20 && *s != 0x7f)
			fputc(*s, f);
	}
	fputc('"', f);
}

/* Bytes per element of a __data_loc array, from its C type (as tpformat). */
static unsigned int loc_elem_size(const struct tp_field *fl)
{
	if (strstr(fl->type, "64") || strstr(fl->type, "long"))
		return 8;
	if (strstr(fl->type, "32") || strstr(fl->type, "int"))
		return 4;
	if (strstr(fl->type, "16") || strstr(fl->type, "short"))
		return 2;
	return 1;
}

static void tsdl_int(FILE *f, unsigned int bytes, bool sgn, bool hex)
{
	fprintf(f, "integer { size = %u; align = 8; signed = %s; base = %d; }",
		bytes * 8, sgn ? "true" : "false", hex ? 16 : 10);
}

/*
 * A tracepoint's fields, names prefixed with '_' (CTF 1.8 strips one
 * leading underscore, so readers show the tracefs names, and no name can
 * be a TSDL keyword).
 */
static void tsdl_tp_fields(FILE *f, const struct tp_format *tp)
{
	int i;

	fputs("\t\tstruct {\n", f);
	for (i = 0; i < tp->nfields; i++) {
		const struct tp_field *fl = &tp->fields[i];

		if (!strncmp(fl->name, "common_", 7))
			continue;
		fputs("\t\t\t", f);
		switch (fl->kind) {
		case TPF_INT:
			tsdl_int(f, fl->size, fl->is_signed, fl->pointer);
			fprintf(f, " _%s;\n", fl->name);
			break;
		case TPF_STR:
		case TPF_LOC_STR:
			fprintf(f, "string _%s;\n", fl->name);
			break;
		case TPF_ARRAY:
			tsdl_int(f, fl->elem_size, fl->is_signed, fl->pointer);
			fprintf(f, " _%s[%u];\n", fl->name,
				fl->size / fl->elem_size);
			break;
		case TPF_LOC_ARRAY:
			fprintf(f, "uint32_t __%s_length;\n\t\t\t", fl->name);
			tsdl_int(f, loc_elem_size(fl), fl->is_signed,
				 fl->pointer);
			fprintf(f, " _%s[__%s_length];\n", fl->name, fl->name);
			break;
		default:
			fprintf(f, "xint8_t _%s[%u];\n", fl->name, fl->size);
			break;
		}
	}
	fputs("\t\t} _fields;\n", f);
}

/* The fields of a kind's raw record (struct probe_field). */
static void tsdl_raw_fields(FILE *f, const struct probe_kind *k)
{
	const struct probe_field *fl = k->fields;
	unsigned int i;

	for (i = 0; i < k->nr_fields; i++) {
		if (!fl[i].size && i)
			fprintf(f, "\t\txint8_t _%s[_%s];\n", fl[i].name,
				fl[i - 1].name);
		else if (fl[i].is_signed)
			fprintf(f, "\t\tinteger { size = %u; align = 8; signed = true; } _%s;\n",
				fl[i].size * 8, fl[i].name);
		else
			fprintf(f, "\t\tuint%u_t _%s;\n", fl[i].size * 8,
				fl[i].name);
	}
}

static void tsdl_event(FILE *f, unsigned int id, const struct trace_fmt *fmt)
{
	fputs("event {\n\tname = ", f);
	tsdl_str(f, fmt->probe);
	fprintf(f, ";\n\tid = %u;\n\tstream_id = 0;\n", id);
	fputs("\tfields := struct {\n"
	      "\t\tuint64_t _time_ns;\n"
	      "\t\tuint64_t _id;\n"
	      "\t\txint64_t _addr;\n"
	      "\t\tuint32_t _cpu;\n"
	      "\t\tuint32_t _pid;\n"
	      "\t\tuint32_t _tid;\n"
	      "\t\tuint16_t _flags;\n"
	      "\t\tstring _comm;\n", f);
	if (fmt->args)
		fputs("\t\txint64_t _args[6];\n", f);
	if (fmt->retprobe)
		fputs("\t\tint64_t _ret;\n\t\tuint64_t _latency_ns;\n", f);
	if (fmt->capture_mode == PEA_CAPTURE_STR)
		fputs("\t\tstring _str;\n\t\tuint8_t _truncated;\n", f);
	else if (fmt->capture_mode == PEA_CAPTURE_FIXED)
		fputs("\t\tuint16_t _bytes_len;\n\t\txint8_t _bytes[_bytes_len];\n",
		      f);
	if (fmt->capture_mode != PEA_CAPTURE_NONE)
		fputs("\t\tuint8_t _fault;\n", f);
	if (fmt->tp)
		tsdl_tp_fields(f, fmt->tp);
	if (fmt->kind->fields)
		tsdl_raw_fields(f, fmt->kind);
	if (fmt->kstack)
		fputs("\t\tuint32_t __kstack_length;\n"
		      "\t\tstring _kstack[__kstack_length];\n"
		      "\t\txint64_t _kstack_addr[__kstack_length];\n", f);
	fputs("\t};\n};\n\n", f);
}

/* The TSDL text, built in memory and handed to the sink. */
static int write_metadata(struct ctf_writer *c)
{
	char host[256], *text = NULL;
	size_t len = 0;
	unsigned int i;
	FILE *f;
	int err;

	f = open_memstream(&text, &len);
	if (!f)
		return -errno;
	if (gethostname(host, sizeof(host)))
		strcpy(host, "unknown");
	host[sizeof(host) - 1] = 0;
	fputs(metadata_head, f);
	fputs("env {\n\thostname = ", f);
	tsdl_str(f, host);
	fputs(";\n\ttracer_name = \"pea\";\n};\n\n", f);
	fputs(metadata_clock, f);
	if (c->o.wall_offset_ns > 0)
		fprintf(f, "\toffset_s = %lld;\n\toffset = %lld;\n",
			(long long)(c->o.wall_offset_ns / 1000000000LL),
			(long long)(c->o.wall_offset_ns % 1000000000LL));
	else
		fputs("\toffset = 0;\n", f);
	fputs(metadata_stream, f);
	for (i = 0; i < c->w.nprobes; i++)
		tsdl_event(f, i, c->w.probes[i]);
	if (fflush(f) || ferror(f)) {
		fclose(f);
		free(text);
		return -ENOMEM;
	}
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	err = c->sink->ops->metadata(c->sink, text, len);
	free(text);
	return err;
}

/* ---- streams and packets ---- */

/* Hand on one packet: header, context, and @n bytes of events. */
static int packet_write(struct ctf_writer *c, int cpu, __u64 begin,
			__u64 end, __u64 discarded, size_t n)
{
	struct ctf_stream *s = &c->s[cpu];
	struct bytes h = { 0 };
	__u64 bits = (__u64)(PACKET_HDR + n) * 8;
	struct ctf_packet p = {
		.cpu = cpu,
		.seq = s->seq,
		.ts_begin = begin,
		.ts_end = end,
		.discarded = discarded,
		.body = s->pkt.p,
		.body_len = n,
	};
	int err;

	put_u32(&h, CTF_MAGIC);
	put_u32(&h, 0);			/* stream_id */
	put_u64(&h, begin);
	put_u64(&h, end);
	put_u64(&h, bits);		/* content_size */
	put_u64(&h, bits);		/* packet_size */
	put_u64(&h, discarded);
	put_u32(&h, cpu);
	if (h.oom)
		return -ENOMEM;
	p.head = h.p;
	p.head_len = h.len;
	err = c->sink->ops->packet(c->sink, &p);
	free(h.p);
	s->seq++;
	s->last_ts = end;
	s->last_emit = c->now;
	return err;
}

/*
 * Write the packet under way (maybe without events, after a loss), after
 * the stream's empty first packet.
 */
static int stream_flush(struct ctf_writer *c, int cpu)
{
	struct ctf_stream *s = &c->s[cpu];
	__u64 t;
	int err;

	if (s->pkt.oom)
		return -ENOMEM;
	if (!s->started) {
		/* events_discarded 0 first, so every loss shows as a delta. */
		t = s->nev ? s->ts_begin : c->last_ts;
		err = packet_write(c, cpu, t, t, 0, 0);
		if (err)
			return err;
		s->started = true;
	}
	if (s->nev) {
		err = packet_write(c, cpu, s->ts_begin, s->ts_end,
				   s->discarded, s->pkt.len);
	} else if (s->dirty) {
		/* No events: a point after what the stream already has. */
		t = s->last_ts > c->last_ts ? s->last_ts : c->last_ts;
		err = packet_write(c, cpu, t, t, s->discarded, 0);
	}
	s->pkt.len = 0;
	s->nev = 0;
	s->dirty = false;
	return err;
}

/* Keep the first error, with the sink's words for it if it has any. */
static int ctf_fail(struct ctf_writer *c, int err)
{
	if (err && !c->err) {
		c->err = err;
		snprintf(c->w.msg, sizeof(c->w.msg), "%s", c->sink->msg);
	}
	return err;
}

/* ---- events ---- */

/*
 * A tracepoint's fields as the metadata declares them. Parts the entry
 * does not hold (a field past its end, a bad __data_loc) go out empty or
 * zero.
 */
static void put_tp_fields(struct bytes *b, const struct tp_format *tp,
			  const unsigned char *raw, __u32 size)
{
	static const unsigned char zero[256];
	int i;

	for (i = 0; i < tp->nfields; i++) {
		const struct tp_field *fl = &tp->fields[i];
		bool in = raw && fl->offset + fl->size <= size;
		const unsigned char *p = in ? raw + fl->offset : zero;
		__u32 loc, off, len, esz;

		if (!strncmp(fl->name, "common_", 7))
			continue;
		switch (fl->kind) {
		case TPF_INT:
			put(b, p, fl->size);	/* as stored: little endian */
			continue;
		case TPF_STR:
			if (in)
				put_str(b, p, fl->size);
			else
				put_u8(b, 0);
			continue;
		case TPF_ARRAY:
		case TPF_OTHER:
			if (in) {
				put(b, p, fl->size);
			} else {
				unsigned int n;

				for (n = 0; n < fl->size; n++)
					put_u8(b, 0);
			}
			continue;
		default:
			break;
		}
		loc = 0;
		if (in)
			memcpy(&loc, p, 4);
		off = (loc & 0xffff) + (fl->rel ? fl->offset + 4 : 0);
		len = loc >> 16;
		if (!in || off + len > size)
			len = 0;
		if (fl->kind == TPF_LOC_STR) {
			if (len)
				put_str(b, raw + off, len);
			else
				put_u8(b, 0);
			continue;
		}
		esz = loc_elem_size(fl);
		put_u32(b, len / esz);
		put(b, raw + off, len / esz * esz);
	}
}

/*
 * The fields of a kind's raw record (struct probe_field), zero when the
 * record is too short; a byte count past what it holds puts no bytes.
 */
static void put_raw_fields(struct bytes *b, const struct probe_kind *k,
			   const unsigned char *raw, __u32 size)
{
	const struct probe_field *fl = k->fields;
	unsigned int i, hdr = 0;
	__u32 seq = 0;
	bool ok;

	for (i = 0; i < k->nr_fields; i++)
		if (!fl[i].size)
			hdr = fl[i].offset;
		else if (fl[i].offset + fl[i].size > hdr)
			hdr = fl[i].offset + fl[i].size;
	ok = raw && size >= hdr;
	for (i = 0; i < k->nr_fields; i++) {
		unsigned char v[4] = { 0 };

		if (!fl[i].size) {
			if (seq)
				put(b, raw + fl[i].offset, seq);
			continue;
		}
		if (ok)
			memcpy(v, raw + fl[i].offset, fl[i].size);
		if (i + 1 < k->nr_fields && !fl[i + 1].size) {
			memcpy(&seq, v, sizeof(seq));
			if (seq > size - hdr) {
				seq = 0;
				memset(v, 0, sizeof(v));
			}
		}
		put(b, v, fl[i].size);
	}
}

static void put_kstack(struct bytes *b, const struct trace_fmt *fmt,
		       const struct trace_event *ev)
{
	char buf[256];
	__u32 i;

	put_u32(b, ev->kstack_nr);
	for (i = 0; i < ev->kstack_nr; i++) {
		ksyms_format(fmt->ksyms, ev->kstack[i], buf, sizeof(buf));
		put_str(b, buf, sizeof(buf));
	}
	for (i = 0; i < ev->kstack_nr; i++)
		put_u64(b, ev->kstack[i]);
}

static int ctf_event(struct trace_writer *w, unsigned int probe,
		     const struct trace_event *ev)
{
	struct ctf_writer *c = (struct ctf_writer *)w;
	const struct trace_fmt *fmt = w->probes[probe];
	const struct pea_probe_record *r = &ev->rec;
	int cpu = ev->ring;
	struct ctf_stream *s;
	struct bytes *b;
	int i, err;

	if (c->err)
		return c->err;
	if (cpu < 0 || cpu >= w->ncpus)
		cpu = r->cpu < (__u32)w->ncpus ? (int)r->cpu : 0;
	s = &c->s[cpu];
	b = &s->pkt;
	if (!s->nev)
		s->ts_begin = r->time_ns;
	s->ts_end = r->time_ns;
	if (r->time_ns > c->last_ts)
		c->last_ts = r->time_ns;
	s->nev++;
	put_u32(b, probe);
	put_u64(b, r->time_ns);
	put_u64(b, r->time_ns);
	put_u64(b, r->id);
	put_u64(b, r->addr);
	put_u32(b, r->cpu);
	put_u32(b, r->tgid);
	put_u32(b, r->pid);
	put_u16(b, r->flags);
	put_str(b, r->comm, sizeof(r->comm));
	if (fmt->args)
		for (i = 0; i < 6; i++)
			put_u64(b, r->args[i]);
	if (fmt->retprobe) {
		put_u64(b, (__u64)r->ret);
		put_u64(b, r->latency_ns);
	}
	if (fmt->capture_mode == PEA_CAPTURE_STR) {
		put_str(b, ev->cap, r->capture_len);
		put_u8(b, !!(r->flags & PEA_REC_F_TRUNCATED));
	} else if (fmt->capture_mode == PEA_CAPTURE_FIXED) {
		put_u16(b, r->capture_len);
		put(b, ev->cap, r->capture_len);
	}
	if (fmt->capture_mode != PEA_CAPTURE_NONE)
		put_u8(b, !!(r->flags & PEA_REC_F_FAULT));
	if (fmt->tp)
		put_tp_fields(b, fmt->tp, ev->raw, ev->raw_size);
	if (fmt->kind->fields)
		put_raw_fields(b, fmt->kind, ev->raw, ev->raw_size);
	if (fmt->kstack)
		put_kstack(b, fmt, ev);
	if (b->oom)
		return ctf_fail(c, -ENOMEM);
	if (b->len >= PACKET_MAX) {
		err = stream_flush(c, cpu);
		if (err)
			return ctf_fail(c, err);
	}
	return 0;
}

static int ctf_lost(struct trace_writer *w, int cpu, __u64 count)
{
	struct ctf_writer *c = (struct ctf_writer *)w;
	struct ctf_stream *s = &c->s[cpu];
	int err;

	if (c->err)
		return c->err;
	/* The events before the loss end a packet; the next ones count it. */
	err = stream_flush(c, cpu);
	if (err)
		return ctf_fail(c, err);
	s->discarded += count;
	s->dirty = true;
	return 0;
}

/*
 * The tick at @now (ns, the clock of the events): end the packets whose
 * first event is a live interval old (and those of a loss), and tell a
 * live sink of the streams with nothing new for that long that they have
 * nothing up to the horizon.
 */
static int ctf_tick(struct trace_writer *w, __u64 now)
{
	struct ctf_writer *c = (struct ctf_writer *)w;
	__u64 iv = c->o.live_interval_ns;
	int cpu, err;

	if (c->err)
		return c->err;
	if (!iv)
		return 0;
	c->now = now;
	for (cpu = 0; cpu < w->ncpus; cpu++) {
		struct ctf_stream *s = &c->s[cpu];
		__u64 ts;

		if (s->nev || s->dirty) {
			if (!s->dirty && now < s->ts_begin + iv)
				continue;
			err = stream_flush(c, cpu);
			if (err)
				return ctf_fail(c, err);
			continue;
		}
		if (!s->started || now < s->last_emit + iv ||
		    !c->sink->live || !c->sink->ops->beacon)
			continue;
		ts = s->last_ts;
		if (c->o.ordered && c->last_ts > ts)
			ts = c->last_ts;
		err = c->sink->ops->beacon(c->sink, cpu, ts, s->discarded);
		if (err)
			return ctf_fail(c, err);
		s->last_emit = now;
	}
	return 0;
}

static int ctf_close(struct trace_writer *w, char *msg, size_t msg_len)
{
	struct ctf_writer *c = (struct ctf_writer *)w;
	char sink_msg[sizeof(c->sink->msg)];
	int cpu, err = c->err, serr;

	for (cpu = 0; cpu < w->ncpus; cpu++) {
		struct ctf_stream *s = &c->s[cpu];

		if (!err && (s->nev || s->dirty))
			err = ctf_fail(c, stream_flush(c, cpu));
		free(s->pkt.p);
	}
	/*
	 * Every event is out: the streams that end earlier have nothing up
	 * to the last event, so that a live viewer shows everything before
	 * they close.
	 */
	for (cpu = 0; !err && c->sink->live && c->o.live_interval_ns &&
	     cpu < w->ncpus; cpu++) {
		struct ctf_stream *s = &c->s[cpu];

		if (s->started && s->last_ts < c->last_ts)
			err = ctf_fail(c, c->sink->ops->beacon(c->sink, cpu,
							       c->last_ts,
							       s->discarded));
	}
	/* The sink finishes (a relayd's streams are closed) in any case. */
	serr = c->sink->ops->close(c->sink, sink_msg, sizeof(sink_msg));
	if (!err && serr) {
		err = serr;
		snprintf(w->msg, sizeof(w->msg), "%s", sink_msg);
	}
	snprintf(msg, msg_len, "%s", w->msg);
	free(c->s);
	free(c);
	return err;
}

static const struct trace_writer_ops ctf_ops = {
	.event = ctf_event,
	.lost = ctf_lost,
	.tick = ctf_tick,
	.close = ctf_close,
};

struct trace_writer *trace_ctf_open(struct trace_sink *sink,
				    const struct ctf_opts *o,
				    const struct trace_fmt *const *probes,
				    unsigned int nprobes, int ncpus,
				    char *err, size_t err_len)
{
	struct ctf_writer *c = calloc(1, sizeof(*c));
	int i, ret;

	if (c && ncpus > 0)
		c->s = calloc(ncpus, sizeof(*c->s));
	if (!c || !c->s) {
		snprintf(err, err_len, "out of memory");
		free(c);
		sink->ops->close(sink, NULL, 0);
		return NULL;
	}
	c->w.ops = &ctf_ops;
	c->w.probes = probes;
	c->w.nprobes = nprobes;
	c->w.ncpus = ncpus;
	c->sink = sink;
	c->o = *o;
	ret = write_metadata(c);
	/*
	 * Live: every stream starts now, so that a viewer (babeltrace2
	 * drops a trace that has no data stream when it attaches) has them
	 * all, and each can get beacons (relayd takes them only for a
	 * stream with data).
	 */
	for (i = 0; !ret && o->live_interval_ns && i < ncpus; i++) {
		ret = packet_write(c, i, o->start_ns, o->start_ns, 0, 0);
		c->s[i].started = true;
	}
	c->last_ts = o->start_ns;
	if (ret) {
		snprintf(err, err_len, "%s", sink->msg[0] ? sink->msg :
			 strerror(-ret));
		sink->ops->close(sink, NULL, 0);
		for (i = 0; i < ncpus; i++)
			free(c->s[i].pkt.p);
		free(c->s);
		free(c);
		return NULL;
	}
	return &c->w;
}
