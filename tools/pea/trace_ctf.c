// SPDX-License-Identifier: GPL-2.0
/*
 * pea: writing a CTF 1.8 trace (pea trace --output DIR --format ctf).
 *
 * DIR gets a plain-text TSDL "metadata" file and one stream file per CPU
 * ring that saw an event or a loss, "stream_CPU". Everything is little
 * endian and byte aligned. A stream is a run of packets: the packet
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
 * (at most PACKET_MAX bytes before it is written out).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "pea_tool.h"
#include "probe_kind.h"
#include "tpformat.h"
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
	int fd;			/* -1 until the first event or loss */
	bool started;		/* the empty first packet is out */
	bool dirty;		/* a loss since the last packet */
	struct bytes pkt;	/* events of the packet under way */
	__u64 nev;
	__u64 ts_begin, ts_end;	/* of the packet under way */
	__u64 last_ts;		/* of the last packet written */
	__u64 discarded;	/* the free-running counter */
};

struct ctf_writer {
	struct trace_writer w;
	char *dir;
	struct ctf_stream *s;
	__u64 last_ts;		/* of any event: for loss-only packets */
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

static const char metadata_stream[] =
"clock {\n"
"\tname = monotonic;\n"
"\tdescription = \"CLOCK_MONOTONIC, the clock of pea records\";\n"
"\tfreq = 1000000000;\n"
"\toffset = 0;\n"
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

static int write_metadata(struct ctf_writer *c)
{
	char path[4096], host[256];
	unsigned int i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/metadata", c->dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	if (gethostname(host, sizeof(host)))
		strcpy(host, "unknown");
	host[sizeof(host) - 1] = 0;
	fputs(metadata_head, f);
	fputs("env {\n\thostname = ", f);
	tsdl_str(f, host);
	fputs(";\n\ttracer_name = \"pea\";\n};\n\n", f);
	fputs(metadata_stream, f);
	for (i = 0; i < c->w.nprobes; i++)
		tsdl_event(f, i, c->w.probes[i]);
	if (fflush(f) || ferror(f)) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) ? -errno : 0;
}

/* ---- streams and packets ---- */

static int write_all(int fd, const void *p, size_t n)
{
	const unsigned char *q = p;

	while (n) {
		ssize_t k = write(fd, q, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		q += k;
		n -= k;
	}
	return 0;
}

static int stream_open(struct ctf_writer *c, int cpu)
{
	struct ctf_stream *s = &c->s[cpu];
	char path[4096];

	if (s->fd >= 0)
		return 0;
	snprintf(path, sizeof(path), "%s/stream_%d", c->dir, cpu);
	s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	return s->fd < 0 ? -errno : 0;
}

/* Write one packet: header, context, and @n bytes of events from @s->pkt. */
static int packet_write(struct ctf_writer *c, int cpu, __u64 begin,
			__u64 end, __u64 discarded, size_t n)
{
	struct ctf_stream *s = &c->s[cpu];
	struct bytes h = { 0 };
	__u64 bits = (__u64)(PACKET_HDR + n) * 8;
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
	err = write_all(s->fd, h.p, h.len);
	free(h.p);
	if (!err && n)
		err = write_all(s->fd, s->pkt.p, n);
	s->last_ts = end;
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
	err = stream_open(c, cpu);
	if (err)
		return err;
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

static int ctf_fail(struct ctf_writer *c, int err)
{
	if (err && !c->err)
		c->err = err;
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

static int ctf_close(struct trace_writer *w)
{
	struct ctf_writer *c = (struct ctf_writer *)w;
	int cpu, err = c->err;

	for (cpu = 0; cpu < w->ncpus; cpu++) {
		struct ctf_stream *s = &c->s[cpu];

		if (!err && (s->nev || s->dirty))
			err = stream_flush(c, cpu);
		if (s->fd >= 0 && close(s->fd) && !err)
			err = -errno;
		free(s->pkt.p);
	}
	free(c->s);
	free(c->dir);
	free(c);
	return err;
}

static const struct trace_writer_ops ctf_ops = {
	.event = ctf_event,
	.lost = ctf_lost,
	.close = ctf_close,
};

struct trace_writer *trace_ctf_open(const char *path,
				    const struct trace_fmt *const *probes,
				    unsigned int nprobes, int ncpus,
				    char *err, size_t err_len)
{
	struct ctf_writer *c = calloc(1, sizeof(*c));
	struct stat st;
	int i, ret;

	if (!c || ncpus < 1) {
		snprintf(err, err_len, "out of memory");
		free(c);
		return NULL;
	}
	c->w.ops = &ctf_ops;
	c->w.probes = probes;
	c->w.nprobes = nprobes;
	c->w.ncpus = ncpus;
	c->dir = strdup(path);
	c->s = calloc(ncpus, sizeof(*c->s));
	if (!c->dir || !c->s) {
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	for (i = 0; i < ncpus; i++)
		c->s[i].fd = -1;
	if (mkdir(path, 0755) && errno != EEXIST) {
		snprintf(err, err_len, "cannot create the directory %s: %s",
			 path, strerror(errno));
		goto fail;
	}
	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, err_len, "%s is not a directory", path);
		goto fail;
	}
	ret = write_metadata(c);
	if (ret) {
		snprintf(err, err_len, "cannot write %s/metadata: %s", path,
			 strerror(-ret));
		goto fail;
	}
	return &c->w;
fail:
	free(c->s);
	free(c->dir);
	free(c);
	return NULL;
}
