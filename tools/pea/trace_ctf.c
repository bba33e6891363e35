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
 * record's fields and packet bytes. A tracepoint field whose values its
 * print fmt names with __print_symbolic() is a CTF enum of those names.
 * PARAM names given after a kprobe follow in a struct _params, each typed
 * from BTF, and fetch expressions in a struct _fetch: one struct each,
 * named by the expression (how->flags: how_flags), holding _status (ok,
 * fault, truncated, or absent when the record has no fetch block), _step
 * (the read that faulted) and _value, typed: an integer with its size,
 * signedness and base (pointers in hex), an enum of its BTF names, a bool
 * as an enum of false and true, a string. A kretprobe's _ret is typed the
 * same from BTF when --json's "ret" is, with _ret_raw (the register)
 * after it unless it is an integer. With --kstack every event then ends
 * with its kernel stack as --json has it: __kstack_length frames, their
 * names as a sequence of strings (_kstack, "symbol+0xOFF") and their
 * addresses as a sequence of hex integers (_kstack_addr); with --ustack
 * by its user stack the same way (__ustack_length, _ustack, the names
 * --json gives, and _ustack_addr; a hit without one: length 0).
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
#include "kfetch.h"
#include "ktypes.h"
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

/* Whether symbol @y's value fits field @fl (its size and sign). */
static bool tp_sym_fits(const struct tp_field *fl, const struct tp_sym *y)
{
	unsigned int bits = fl->size * 8;
	__s64 sv = (__s64)y->val;

	if (bits >= 64)
		return true;
	if (fl->is_signed)
		return sv >= -(1LL << (bits - 1)) && sv < (1LL << (bits - 1));
	return !(y->val >> bits);
}

/*
 * Whether field @fl is declared a CTF enum: the print fmt names its
 * values with __print_symbolic() on the field itself (no mask), and one
 * of them at least fits it.
 */
static bool tp_is_enum(const struct tp_format *tp, const struct tp_field *fl)
{
	unsigned int i;

	if (fl->sym != TP_SYM_SYMBOLIC || fl->sym_mask != ~0ULL)
		return false;
	for (i = 0; i < fl->sym_n; i++)
		if (tp_sym_fits(fl, &tp->syms[fl->sym_first + i]))
			return true;
	return false;
}

/* Such a field: a CTF enum of its names (the values that fit it). */
static void tsdl_tp_enum(FILE *f, const struct tp_format *tp,
			 const struct tp_field *fl)
{
	bool first = true;
	unsigned int i;

	fputs("enum : ", f);
	tsdl_int(f, fl->size, fl->is_signed, false);
	fputs(" {", f);
	for (i = 0; i < fl->sym_n; i++) {
		const struct tp_sym *y = &tp->syms[fl->sym_first + i];

		if (!tp_sym_fits(fl, y))
			continue;
		fputs(first ? " " : ", ", f);
		first = false;
		tsdl_str(f, tp->sym_text + y->name);
		if (fl->is_signed)
			fprintf(f, " = %lld", (long long)y->val);
		else
			fprintf(f, " = %llu", (unsigned long long)y->val);
	}
	fputs(" }", f);
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
			if (tp_is_enum(tp, fl))
				tsdl_tp_enum(f, tp, fl);
			else
				tsdl_int(f, fl->size, fl->is_signed,
					 fl->pointer);
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

/* Whether enum value @v of @t fits @bytes. */
static bool enum_val_fits(const struct ktype *t, __s64 v, unsigned int bytes)
{
	if (bytes >= 8)
		return true;
	if (t->sgn)
		return v >= -(1LL << (bytes * 8 - 1)) &&
		       v < (1LL << (bytes * 8 - 1));
	return !((__u64)v >> (bytes * 8));
}

/*
 * A value of BTF-classified type @t, @bytes wide as the record holds it:
 * an enum as a CTF enum of its names, a bool as one of "false" and
 * "true", a pointer as a hex integer, any other integer with its size and
 * signedness.
 */
static void tsdl_ktype(FILE *f, const struct ktype *t, unsigned int bytes)
{
	unsigned int i, n = 0;

	for (i = 0; t->cls == KT_ENUM && i < t->nvals; i++)
		n += enum_val_fits(t, t->vals[i].val, bytes);
	if (t->cls == KT_BOOL || n) {
		fputs("enum : ", f);
		tsdl_int(f, bytes, t->cls == KT_ENUM && t->sgn, false);
		fputs(" {", f);
		if (t->cls == KT_BOOL)
			fputs(" \"false\" = 0, \"true\" = 1", f);
		/* Only the values its width can hold. */
		for (i = 0, n = 0; t->cls == KT_ENUM && i < t->nvals; i++) {
			__s64 v = t->vals[i].val;

			if (!enum_val_fits(t, v, bytes))
				continue;
			fputs(n++ ? ", " : " ", f);
			tsdl_str(f, t->vals[i].name);
			if (t->sgn)
				fprintf(f, " = %lld", (long long)v);
			else
				fprintf(f, " = %llu", (unsigned long long)v);
		}
		fputs(" }", f);
		return;
	}
	/* An enum none of whose names fit is its integer. */
	tsdl_int(f, bytes, (t->cls == KT_INT || t->cls == KT_ENUM ||
			    !ktype_typed(t)) && ktype_signed(t), ktype_hex(t));
}

/* The bytes a typed register value takes in the trace (8 if untyped). */
static unsigned int ktype_width(const struct ktype *t)
{
	if (!ktype_typed(t) || t->cls == KT_PTR || t->cls == KT_CHAR_PTR)
		return 8;
	if (t->cls == KT_BOOL)
		return 1;
	return t->size == 1 || t->size == 2 || t->size == 4 ? t->size : 8;
}

/* Whether a kretprobe's return value is typed from BTF (as --json's). */
static bool ret_typed(const struct trace_fmt *fmt)
{
	return fmt->sig && ktype_typed(&fmt->sig->ret);
}

/* @expr with each run of characters other than [A-Za-z0-9_] one '_'. */
static void ctf_ident(const char *expr, char *out, size_t len)
{
	size_t n = 0;

	for (; *expr && n + 1 < len; expr++) {
		char c = *expr;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_')
			out[n++] = c;
		else if (n && out[n - 1] != '_')
			out[n++] = '_';
	}
	while (n && out[n - 1] == '_')
		n--;
	out[n] = 0;
}

/*
 * Fetch @i's name in the metadata: its expression (or NAME=) as
 * ctf_ident() makes it ("how->flags": how_flags), "fetch" if nothing is
 * left, and _N (its index) after it when an earlier fetch has the same.
 */
static void ctf_fetch_name(const struct trace_fmt *fmt, unsigned int i,
			   char *out, size_t len)
{
	char other[KFETCH_EXPR_MAX];
	unsigned int j;

	ctf_ident(fmt->fetches[i].expr, out, len);
	if (!*out)
		snprintf(out, len, "fetch");
	for (j = 0; j < i; j++) {
		ctf_ident(fmt->fetches[j].expr, other, sizeof(other));
		if (!*other)
			snprintf(other, sizeof(other), "fetch");
		if (!strcmp(other, out)) {
			size_t n = strlen(out);

			snprintf(out + n, len - n, "_%u", i);
			break;
		}
	}
}

/*
 * The probe's fetches (kfetch.h), each a struct named by ctf_fetch_name():
 * _status (ok, fault, truncated: struct pea_fetch_value's; absent: the
 * record holds no well-formed block of them), _step (the read that
 * faulted), then the value: a string, bytes (_length and a sequence of
 * hex bytes) or an integer typed as tsdl_ktype() (0 when not read).
 */
static void tsdl_fetches(FILE *f, const struct trace_fmt *fmt)
{
	char name[KFETCH_EXPR_MAX];
	const char *s;
	unsigned int i;

	fputs("\t\tstruct {\n", f);
	for (i = 0; i < fmt->nfetches; i++) {
		const struct kfetch *k = &fmt->fetches[i];

		if (k->joined)
			continue;	/* in its join()'s string */
		ctf_fetch_name(fmt, i, name, sizeof(name));
		fputs("\t\t\tstruct {\n\t\t\t\tenum : uint8_t { ok = 0, fault = 1, truncated = 2, absent = 3 } _status;\n"
		      "\t\t\t\tuint8_t _step;\n\t\t\t\t", f);
		if (k->f.type == PEA_FETCH_STR || k->conv == KFETCH_NTOP) {
			fputs("string _value;\n", f);
		} else if (k->f.type == PEA_FETCH_ARRAY) {
			fputs("uint16_t __value_length;\n\t\t\t\txint8_t _value[__value_length];\n",
			      f);
		} else {
			tsdl_ktype(f, &k->type, kfetch_bytes(k));
			fputs(" _value;\n", f);
		}
		fprintf(f, "\t\t\t} _%s;\t/* ", name);
		/* The expression as given, in a comment that it cannot end. */
		for (s = k->expr; *s; s++)
			if (*s != '*' || s[1] != '/')
				fputc(*s, f);
		fputs(" */\n", f);
	}
	fputs("\t\t} _fetch;\n", f);
}

/* The PARAM names given after the probe: _params, each by its type. */
static void tsdl_params(FILE *f, const struct trace_fmt *fmt)
{
	unsigned int i;

	fputs("\t\tstruct {\n", f);
	for (i = 0; i < fmt->nparams; i++) {
		const struct ksig_param *p = fmt->params[i];

		fputs("\t\t\t", f);
		tsdl_ktype(f, &p->type, ktype_width(&p->type));
		fprintf(f, " _%s;\n", p->name);
	}
	fputs("\t\t} _params;\n", f);
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
	if (fmt->retprobe && ret_typed(fmt)) {
		/* As --json: "ret" typed, "ret_raw" the register beside it. */
		fputs("\t\t", f);
		tsdl_ktype(f, &fmt->sig->ret, ktype_width(&fmt->sig->ret));
		fputs(" _ret;\n", f);
		if (fmt->sig->ret.cls != KT_INT)
			fputs("\t\tint64_t _ret_raw;\n", f);
		fputs("\t\tuint64_t _latency_ns;\n", f);
	} else if (fmt->retprobe) {
		fputs("\t\tint64_t _ret;\n\t\tuint64_t _latency_ns;\n", f);
	}
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
	if (fmt->nparams)
		tsdl_params(f, fmt);
	if (fmt->nfetches)
		tsdl_fetches(f, fmt);
	if (fmt->kstack)
		fputs("\t\tuint32_t __kstack_length;\n"
		      "\t\tstring _kstack[__kstack_length];\n"
		      "\t\txint64_t _kstack_addr[__kstack_length];\n", f);
	if (fmt->ustack)
		fputs("\t\tuint32_t __ustack_length;\n"
		      "\t\tstring _ustack[__ustack_length];\n"
		      "\t\txint64_t _ustack_addr[__ustack_length];\n", f);
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

/* @v's low @bytes bytes, little endian as the metadata declares. */
static void put_uint(struct bytes *b, __u64 v, unsigned int bytes)
{
	put(b, &v, bytes);
}

static void put_params(struct bytes *b, const struct trace_fmt *fmt,
		       const struct trace_event *ev)
{
	unsigned int i;

	for (i = 0; i < fmt->nparams; i++) {
		const struct ksig_param *p = fmt->params[i];

		put_uint(b, ktype_value(&p->type, ev->rec.args[p->reg]),
			 ktype_width(&p->type));
	}
}

/* The fetches as tsdl_fetches() declares them. */
static void put_fetches(struct bytes *b, const struct trace_fmt *fmt,
			const struct trace_event *ev)
{
	bool ok = ev->fetch && kfetch_block_ok(ev->fetch, ev->fetch_size,
					       fmt->nfetches);
	unsigned int i;

	for (i = 0; i < fmt->nfetches; i++) {
		const struct kfetch *k = &fmt->fetches[i];
		struct pea_fetch_value v = { .status = 3 };
		const unsigned char *val = NULL;
		__u64 raw = 0;

		if (k->joined)
			continue;	/* in its join()'s string */
		if (ok) {
			memcpy(&v, ev->fetch + sizeof(struct pea_fetch_block) +
			       i * sizeof(v), sizeof(v));
			if (v.status != PEA_FETCH_FAULT)
				val = ev->fetch + v.offset;
			else
				v.len = 0;
		}
		if (ok && k->join) {
			static char s[PEA_FETCH_MAX * (PEA_FETCH_DATA_MAX + 1)];
			unsigned int step;
			bool cut;
			int n = kfetch_join(k, ev->fetch, i, s, sizeof(s), &cut,
					    &step);

			put_u8(b, n < 0 ? PEA_FETCH_FAULT :
			       cut ? PEA_FETCH_TRUNCATED : PEA_FETCH_OK);
			put_u8(b, n < 0 ? step : 0);
			put_str(b, s, n < 0 ? 0 : n);
			continue;
		}
		put_u8(b, v.status);
		put_u8(b, v.status == PEA_FETCH_FAULT ? v.step : 0);
		if (k->conv == KFETCH_NTOP) {
			char a[64] = "";

			if (val)
				kfetch_ntop(val, v.len, a, sizeof(a));
			put_str(b, a, strlen(a));
		} else if (k->f.type == PEA_FETCH_STR) {
			if (val)
				put_str(b, val, v.len);
			else
				put_u8(b, 0);
		} else if (k->f.type == PEA_FETCH_ARRAY) {
			put_u16(b, val ? v.len : 0);
			if (val)
				put(b, val, v.len);
		} else {
			if (val)
				memcpy(&raw, val, v.len < 8 ? v.len : 8);
			put_uint(b, val ? kfetch_conv_int(k, raw) : 0,
				 kfetch_bytes(k));
		}
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

/* The user stack as --json has it; none (a kernel thread's hit): 0. */
static void put_ustack(struct bytes *b, const struct trace_fmt *fmt,
		       const struct trace_event *ev)
{
	char buf[256];	/* output.c's KSYM_BUF, as put_kstack()'s */
	__u32 i;

	put_u32(b, ev->ustack_nr);
	for (i = 0; i < ev->ustack_nr; i++)
		put_str(b, trace_ustack_name(fmt, ev, i, buf, sizeof(buf)),
			sizeof(buf));
	for (i = 0; i < ev->ustack_nr; i++)
		put_u64(b, ev->ustack[i]);
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
	if (fmt->retprobe && ret_typed(fmt)) {
		put_uint(b, ktype_value(&fmt->sig->ret, (__u64)r->ret),
			 ktype_width(&fmt->sig->ret));
		if (fmt->sig->ret.cls != KT_INT)
			put_u64(b, (__u64)r->ret);
		put_u64(b, r->latency_ns);
	} else if (fmt->retprobe) {
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
	if (fmt->nparams)
		put_params(b, fmt, ev);
	if (fmt->nfetches)
		put_fetches(b, fmt, ev);
	if (fmt->kstack)
		put_kstack(b, fmt, ev);
	if (fmt->ustack)
		put_ustack(b, fmt, ev);
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
