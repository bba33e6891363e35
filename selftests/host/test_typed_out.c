// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): typed values in the trace files of pea trace
 * --output (tools/pea/trace_ctf.c, trace_pftrace.c, trace_perfetto.c,
 * through trace_writer_open() as pea trace opens them), fed a synthetic
 * trace: a kprobe with a PARAM and fetches of every kind (signed and
 * unsigned integers, an enum with and without a name for its value, a
 * bool, a pointer, a string, a cut string, a fault), once with its fetch
 * block and once without; and a tracepoint whose format (6.12's
 * filelock:posix_lock_inode) names its values. The CTF metadata is
 * compared exactly, and babeltrace2's reading of the trace value by
 * value; the Perfetto protobuf's debug annotations decoded and compared
 * by type and value; the Chrome JSON's args hold the --json object.
 * TAP on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kfetch.h"
#include "ktypes.h"
#include "pea_tool.h"
#include "probe_kind.h"
#include "tpformat.h"
#include "trace_writer.h"

#define HOST_TAP_NAME "typed out"
#include "host_tap.h"
#include "../pt_pftrace.h"

#define NF	8	/* PEA_FETCH_MAX */
#define T0	1000000000ULL

static struct kfetch kf[NF];
static struct ktype_enum_val ev_vals[] = {
	{ 0, "PT_ZERO" }, { 1, "PT_ONE" }, { -3, "PT_NEG" },
};
static struct ksig_param param = { .name = "cnt", .reg = 1 };
static struct tp_format tpf;
static struct kfetch kb[3];		/* bytes, two narrow enums */
static struct ktype_enum_val e8_vals[] = { { 300, "BIG" }, { 2, "TWO" } };
static struct ksig sig_int, sig_enum;	/* kretprobes' return types */
static struct trace_fmt fmt[5];
static const struct trace_fmt *probes[5] = { &fmt[0], &fmt[1], &fmt[2],
					     &fmt[3], &fmt[4] };

static void int_fetch(struct kfetch *k, const char *expr, __u8 ftype,
		      enum ktype_class cls, unsigned int size, bool sgn,
		      const char *tname)
{
	snprintf(k->expr, sizeof(k->expr), "%s", expr);
	k->f.type = ftype;
	k->type.cls = cls;
	k->type.size = size;
	k->type.sgn = sgn;
	snprintf(k->type.name, sizeof(k->type.name), "%s", tname);
}

static void setup(void)
{
	static char text[65536];
	const char *err;
	size_t n;
	FILE *f;

	int_fetch(&kf[0], "a", PEA_FETCH_S32, KT_INT, 4, true, "int");
	int_fetch(&kf[1], "p->mode", PEA_FETCH_S32, KT_ENUM, 4, true,
		  "enum pt_mode");
	kf[1].type.vals = ev_vals;
	kf[1].type.nvals = 3;
	int_fetch(&kf[2], "p->on", PEA_FETCH_U8, KT_BOOL, 1, false, "bool");
	int_fetch(&kf[3], "p->next", PEA_FETCH_U64, KT_PTR, 8, false,
		  "struct pt *");
	int_fetch(&kf[4], "str(p->name)", PEA_FETCH_STR, KT_CHAR_PTR, 8,
		  false, "const char *");
	kf[4].str = true;
	kf[4].f.size = 64;
	int_fetch(&kf[5], "p->next->len", PEA_FETCH_U32, KT_INT, 4, false,
		  "unsigned int");
	int_fetch(&kf[6], "p.name", PEA_FETCH_STR, KT_CHAR_PTR, 8, false,
		  "char *");
	kf[6].str = true;
	kf[6].f.size = 4;
	int_fetch(&kf[7], "p->big", PEA_FETCH_S64, KT_INT, 8, true,
		  "long long");
	param.type.cls = KT_INT;
	param.type.size = 2;
	param.type.sgn = true;
	snprintf(param.type.name, sizeof(param.type.name), "short");

	fmt[0].probe = "kprobe:pt_typed";
	fmt[0].kind = &kprobe_kind;
	fmt[0].json = true;
	fmt[0].fetches = kf;
	fmt[0].nfetches = NF;
	fmt[0].params[0] = &param;
	fmt[0].nparams = 1;

	f = fopen("selftests/host/tpfmt/6.12-filelock-posix_lock_inode", "r");
	if (!f) {
		ok(0, "the 6.12 posix_lock_inode format");
		return;
	}
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	ok(!tp_format_parse(text, &tpf, &err), "the 6.12 posix_lock_inode format parses");
	fmt[1].probe = "tp:filelock:posix_lock_inode";
	fmt[1].kind = &tracepoint_kind;
	fmt[1].json = true;
	fmt[1].tp = &tpf;
	/* A fixed byte array (PEA_FETCH_ARRAY), as the kernel takes one. */
	snprintf(kb[0].expr, sizeof(kb[0].expr), "buf");
	kb[0].f.type = PEA_FETCH_ARRAY;
	kb[0].f.size = 4;
	/* A u8 enum: BIG (300) cannot be in it; with TWO, without. */
	int_fetch(&kb[1], "e8", PEA_FETCH_U8, KT_ENUM, 1, false, "enum e8");
	kb[1].type.vals = e8_vals;
	kb[1].type.nvals = 2;
	int_fetch(&kb[2], "e0", PEA_FETCH_U8, KT_ENUM, 1, false, "enum e0");
	kb[2].type.vals = e8_vals;
	kb[2].type.nvals = 1;
	fmt[2].probe = "kprobe:pt_bytes";
	fmt[2].kind = &kprobe_kind;
	fmt[2].json = true;
	fmt[2].fetches = kb;
	fmt[2].nfetches = 3;
	/* Two kretprobes: an int and an enum return. */
	sig_int.ret.cls = KT_INT;
	sig_int.ret.size = 4;
	sig_int.ret.sgn = true;
	sig_enum.ret = kf[1].type;
	fmt[3].probe = "kretprobe:pt_int";
	fmt[3].sig = &sig_int;
	fmt[4].probe = "kretprobe:pt_enum";
	fmt[4].sig = &sig_enum;
	for (n = 3; n < 5; n++) {
		fmt[n].kind = &kprobe_kind;
		fmt[n].json = true;
		fmt[n].retprobe = true;
	}
}

/* A fetch block: @nr values, each status, step and bytes. */
struct val {
	__u8 status, step;
	const void *p;
	__u16 len;
};

static unsigned char *block(const struct val *v, unsigned int nr,
			    __u32 *size)
{
	unsigned int hdr = sizeof(struct pea_fetch_block) +
			   nr * sizeof(struct pea_fetch_value), off = hdr, i;
	unsigned char *b = calloc(1, 2048);
	struct pea_fetch_block h = { .nr = nr };

	for (i = 0; i < nr; i++) {
		struct pea_fetch_value fv = {
			.offset = off, .len = v[i].len,
			.status = v[i].status, .step = v[i].step,
		};

		memcpy(b + sizeof(h) + i * sizeof(fv), &fv, sizeof(fv));
		if (v[i].len)
			memcpy(b + off, v[i].p, v[i].len);
		off += (v[i].len + 7) & ~7U;
	}
	h.size = off;
	memcpy(b, &h, sizeof(h));
	*size = off;
	return b;
}

static struct trace_event evs[3], evb[2];
static unsigned char tp_raw[88];

static void events(void)
{
	static const __s32 a = -22;
	static const __u32 len = 4000000000U, mode1 = 1, mode7 = 7;
	static const __u8 on = 1;
	static const __u64 next = 0xffff888012345678ULL;
	static const __s64 big = -5000000000LL;
	const struct val v1[NF] = {
		{ 0, 0, &a, 4 }, { 0, 0, &mode1, 4 },
		{ 0, 0, &on, 1 }, { 0, 0, &next, 8 }, { 0, 0, "hello", 5 },
		{ PEA_FETCH_FAULT, 1, NULL, 0 },
		{ PEA_FETCH_TRUNCATED, 0, "abcd", 4 }, { 0, 0, &big, 8 },
	};
	const struct val v2[NF] = {
		{ 0, 0, &a, 4 }, { 0, 0, &mode7, 4 },
		{ 0, 0, "\0", 1 }, { 0, 0, "\0\0\0\0\0\0\0\0", 8 },
		{ 0, 0, "", 0 }, { 0, 0, &len, 4 }, { 0, 0, "ab", 2 },
		{ 0, 0, &big, 8 },
	};
	const struct tp_field *fl;
	unsigned int i;
	__u64 x;

	for (i = 0; i < 3; i++) {
		struct pea_probe_record *r = &evs[i].rec;

		r->time_ns = T0 + i * 1000;
		r->pid = 100 + i;
		r->tgid = 100;
		r->cpu = 0;
		memcpy(r->comm, "typed", 6);
		evs[i].ring = 0;
	}
	evs[0].rec.args[1] = 0xffff8000;	/* cnt: a short, -32768 */
	evs[0].rec.flags = PEA_REC_F_FETCH;
	evs[0].fetch = block(v1, NF, &evs[0].fetch_size);
	evs[1].rec.args[1] = 7;
	evs[1].rec.flags = PEA_REC_F_FETCH;
	evs[1].fetch = block(v2, NF, &evs[1].fetch_size);
	evs[2].rec.args[1] = 1;		/* no fetch block */
	/* The byte array: 01 02 03 ff, then a fault at read 2. */
	for (i = 0; i < 2; i++) {
		const struct val vb[2][3] = {
			{ { 0, 0, "\x01\x02\x03\xff", 4 }, { 0, 0, "\x02", 1 },
			  { 0, 0, "\x05", 1 } },
			{ { PEA_FETCH_FAULT, 2, NULL, 0 }, { 0, 0, "\x2c", 1 },
			  { 0, 0, "\x2c", 1 } },
		};

		evb[i].rec = evs[2].rec;
		evb[i].rec.time_ns = T0 + 6000 + i;
		evb[i].rec.flags = PEA_REC_F_FETCH;
		evb[i].fetch = block(vb[i], 3, &evb[i].fetch_size);
	}
	/* The tracepoint's entry: flags FL_POSIX|FL_SLEEP, type F_WRLCK. */
	x = 129;
	fl = tp_field_find(&tpf, "flags");
	if (fl)
		memcpy(tp_raw + fl->offset, &x, fl->size);
	x = 1;
	fl = tp_field_find(&tpf, "type");
	if (fl)
		memcpy(tp_raw + fl->offset, &x, fl->size);
	x = 4242;
	fl = tp_field_find(&tpf, "pid");
	if (fl)
		memcpy(tp_raw + fl->offset, &x, fl->size);
	x = (__u64)-11;
	fl = tp_field_find(&tpf, "ret");
	if (fl)
		memcpy(tp_raw + fl->offset, &x, fl->size);
}

static struct trace_writer *open_out(enum trace_out_format fm,
				     const char *path)
{
	struct trace_out_opts oo = { .format = fm, .path = path,
				     .ordered = true };
	char msg[512];
	struct trace_writer *w = trace_writer_open(&oo, probes, 5, 1, msg,
						   sizeof(msg));

	ok(!!w, "opens %s (%s)", path, w ? "ok" : msg);
	return w;
}

static void feed(struct trace_writer *w)
{
	struct trace_event tev = { 0 };
	char msg[256];
	unsigned int i;


	for (i = 0; i < 3; i++)
		trace_writer_event(w, 0, &evs[i]);
	tev.rec = evs[2].rec;
	tev.rec.time_ns = T0 + 5000;
	tev.raw = tp_raw;
	tev.raw_size = sizeof(tp_raw);
	trace_writer_event(w, 1, &tev);
	for (i = 0; i < 2; i++)
		trace_writer_event(w, 2, &evb[i]);
	/* The kretprobes: -22 and -3 as 32-bit registers, 5 ns. */
	tev = evs[2];
	tev.rec.flags = PEA_REC_F_RETPROBE;
	tev.rec.latency_ns = 5;
	tev.rec.time_ns = T0 + 7000;
	tev.rec.ret = 0xffffffeaLL;
	trace_writer_event(w, 3, &tev);
	tev.rec.time_ns = T0 + 7001;
	tev.rec.ret = 0xfffffffdLL;
	trace_writer_event(w, 4, &tev);
	ok(trace_writer_close(w, msg, sizeof(msg)) == 0, "closes (%s)", msg);
}

static char *slurp(const char *path)
{
	static char buf[1 << 16];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	return buf;
}

static void same(const char *what, const char *got, const char *want)
{
	ok(got && !strcmp(got, want), "%s", what);
	if (!got || strcmp(got, want))
		printf("#   got  %s\n#   want %s\n", got ? got : "(none)",
		       want);
}

static const char want_meta[] =
"\t\tstruct {\n"
"\t\t\tinteger { size = 16; align = 8; signed = true; base = 10; } _cnt;\n"
"\t\t} _params;\n"
"\t\tstruct {\n"
"\t\t\tstruct {\n"
"\t\t\t\tenum : uint8_t { ok = 0, fault = 1, truncated = 2, absent = 3 } _status;\n"
"\t\t\t\tuint8_t _step;\n"
"\t\t\t\tinteger { size = 32; align = 8; signed = true; base = 10; } _value;\n"
"\t\t\t} _a;\t/* a */\n"
"\t\t\tstruct {\n"
"\t\t\t\tenum : uint8_t { ok = 0, fault = 1, truncated = 2, absent = 3 } _status;\n"
"\t\t\t\tuint8_t _step;\n"
"\t\t\t\tenum : integer { size = 32; align = 8; signed = true; base = 10; } { \"PT_ZERO\" = 0, \"PT_ONE\" = 1, \"PT_NEG\" = -3 } _value;\n"
"\t\t\t} _p_mode;\t/* p->mode */\n"
"\t\t\tstruct {\n"
"\t\t\t\tenum : uint8_t { ok = 0, fault = 1, truncated = 2, absent = 3 } _status;\n"
"\t\t\t\tuint8_t _step;\n"
"\t\t\t\tenum : integer { size = 8; align = 8; signed = false; base = 10; } { \"false\" = 0, \"true\" = 1 } _value;\n"
"\t\t\t} _p_on;\t/* p->on */\n"
"\t\t\tstruct {\n"
"\t\t\t\tenum : uint8_t { ok = 0, fault = 1, truncated = 2, absent = 3 } _status;\n"
"\t\t\t\tuint8_t _step;\n"
"\t\t\t\tinteger { size = 64; align = 8; signed = false; base = 16; } _value;\n"
"\t\t\t} _p_next;\t/* p->next */\n"
"\t\t\tstruct {\n"
"\t\t\t\tenum : uint8_t { ok = 0, fault = 1, truncated = 2, absent = 3 } _status;\n"
"\t\t\t\tuint8_t _step;\n"
"\t\t\t\tstring _value;\n"
"\t\t\t} _str_p_name;\t/* str(p->name) */\n"
"\t\t\tstruct {\n"
"\t\t\t\tenum : uint8_t { ok = 0, fault = 1, truncated = 2, absent = 3 } _status;\n"
"\t\t\t\tuint8_t _step;\n"
"\t\t\t\tinteger { size = 32; align = 8; signed = false; base = 10; } _value;\n"
"\t\t\t} _p_next_len;\t/* p->next->len */\n"
"\t\t\tstruct {\n"
"\t\t\t\tenum : uint8_t { ok = 0, fault = 1, truncated = 2, absent = 3 } _status;\n"
"\t\t\t\tuint8_t _step;\n"
"\t\t\t\tstring _value;\n"
"\t\t\t} _p_name;\t/* p.name */\n"
"\t\t\tstruct {\n"
"\t\t\t\tenum : uint8_t { ok = 0, fault = 1, truncated = 2, absent = 3 } _status;\n"
"\t\t\t\tuint8_t _step;\n"
"\t\t\t\tinteger { size = 64; align = 8; signed = true; base = 10; } _value;\n"
"\t\t\t} _p_big;\t/* p->big */\n"
"\t\t} _fetch;\n";

static void test_ctf(void)
{
	char dir[] = "/tmp/pea-typed.XXXXXX", path[512], *m, *q, cmd[600];
	struct trace_writer *w;
	char line[8192];
	int nl = 0, nb = 0, nr = 0;
	FILE *f;

	if (!mkdtemp(dir))
		return;
	snprintf(path, sizeof(path), "%s/ctf", dir);
	w = open_out(TRACE_OUT_CTF, path);
	if (!w)
		return;
	feed(w);
	snprintf(path, sizeof(path), "%s/ctf/metadata", dir);
	m = slurp(path);
	q = strstr(m, "\t\tstruct {\n\t\t\tinteger { size = 16");
	if (q) {
		char *e = strstr(q, "} _fetch;\n");

		if (e)
			e[strlen("} _fetch;\n")] = 0;
	}
	same("CTF metadata: _params and _fetch of kprobe:pt_typed, each typed",
	     q, want_meta);
	q = strstr(m + (q ? strlen(q) + (q - m) + 1 : 0),
		   "enum : integer { size = 8; align = 8; signed = false; base = 10; } {");
	same("CTF metadata: posix_lock_inode's type (__print_symbolic) is an enum of F_RDLCK, F_WRLCK, F_UNLCK",
	     q ? strtok(q, "\n") : NULL,
	     "enum : integer { size = 8; align = 8; signed = false; base = 10; } { \"F_RDLCK\" = 0, \"F_WRLCK\" = 1, \"F_UNLCK\" = 2 } _type;");

	snprintf(cmd, sizeof(cmd), "babeltrace2 --clock-cycles %s/ctf 2>&1", dir);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "params = {");
		static const char *const want[] = {
			"params = { cnt = -32768 }, fetch = { a = { status = ( \"ok\" : container = 0 ), step = 0, value = -22 }, p_mode = { status = ( \"ok\" : container = 0 ), step = 0, value = ( \"PT_ONE\" : container = 1 ) }, p_on = { status = ( \"ok\" : container = 0 ), step = 0, value = ( \"true\" : container = 1 ) }, p_next = { status = ( \"ok\" : container = 0 ), step = 0, value = 0xFFFF888012345678 }, str_p_name = { status = ( \"ok\" : container = 0 ), step = 0, value = \"hello\" }, p_next_len = { status = ( \"fault\" : container = 1 ), step = 1, value = 0 }, p_name = { status = ( \"truncated\" : container = 2 ), step = 0, value = \"abcd\" }, p_big = { status = ( \"ok\" : container = 0 ), step = 0, value = -5000000000 } } }\n",
			"params = { cnt = 7 }, fetch = { a = { status = ( \"ok\" : container = 0 ), step = 0, value = -22 }, p_mode = { status = ( \"ok\" : container = 0 ), step = 0, value = ( <unknown> : container = 7 ) }, p_on = { status = ( \"ok\" : container = 0 ), step = 0, value = ( \"false\" : container = 0 ) }, p_next = { status = ( \"ok\" : container = 0 ), step = 0, value = 0x0 }, str_p_name = { status = ( \"ok\" : container = 0 ), step = 0, value = \"\" }, p_next_len = { status = ( \"ok\" : container = 0 ), step = 0, value = 4000000000 }, p_name = { status = ( \"ok\" : container = 0 ), step = 0, value = \"ab\" }, p_big = { status = ( \"ok\" : container = 0 ), step = 0, value = -5000000000 } } }\n",
			"params = { cnt = 1 }, fetch = { a = { status = ( \"absent\" : container = 3 ), step = 0, value = 0 }, p_mode = { status = ( \"absent\" : container = 3 ), step = 0, value = ( \"PT_ZERO\" : container = 0 ) }, p_on = { status = ( \"absent\" : container = 3 ), step = 0, value = ( \"false\" : container = 0 ) }, p_next = { status = ( \"absent\" : container = 3 ), step = 0, value = 0x0 }, str_p_name = { status = ( \"absent\" : container = 3 ), step = 0, value = \"\" }, p_next_len = { status = ( \"absent\" : container = 3 ), step = 0, value = 0 }, p_name = { status = ( \"absent\" : container = 3 ), step = 0, value = \"\" }, p_big = { status = ( \"absent\" : container = 3 ), step = 0, value = 0 } } }\n",
		};

		if (p && nl < 3) {
			char what[64];

			snprintf(what, sizeof(what),
				 "babeltrace2: event %d's params and fetches, exact", nl);
			same(what, p, want[nl]);
			nl++;
		} else if (strstr(line, "posix_lock_inode")) {
			p = strstr(line, "pid = 4242");
			same("babeltrace2: posix_lock_inode's flags as a number, type by name",
			     p ? p : line,
			     "pid = 4242, flags = 129, type = ( \"F_WRLCK\" : container = 1 ), fl_start = 0, fl_end = 0, ret = -11 } }\n");
		} else if (strstr(line, "kretprobe:pt_int")) {
			p = strstr(line, "ret = ");
			same("babeltrace2: an int return: ret -22 (32 bits), no ret_raw",
			     p, "ret = -22, latency_ns = 5 }\n");
			nr++;
		} else if (strstr(line, "kretprobe:pt_enum")) {
			p = strstr(line, "ret = ");
			same("babeltrace2: an enum return by name, the register as ret_raw",
			     p, "ret = ( \"PT_NEG\" : container = -3 ), ret_raw = 4294967293, latency_ns = 5 }\n");
			nr++;
		} else if (strstr(line, "pt_bytes") && nb < 2) {
			static const char *const wb[] = {
				"fetch = { buf = { status = ( \"ok\" : container = 0 ), step = 0, _value_length = 4, value = [ [0] = 0x1, [1] = 0x2, [2] = 0x3, [3] = 0xFF ] }, "
				"e8 = { status = ( \"ok\" : container = 0 ), step = 0, value = ( \"TWO\" : container = 2 ) }, "
				"e0 = { status = ( \"ok\" : container = 0 ), step = 0, value = 5 } } }\n",
				"fetch = { buf = { status = ( \"fault\" : container = 1 ), step = 2, _value_length = 0, value = [ ] }, "
				"e8 = { status = ( \"ok\" : container = 0 ), step = 0, value = ( <unknown> : container = 44 ) }, "
				"e0 = { status = ( \"ok\" : container = 0 ), step = 0, value = 44 } } }\n",
			};

			p = strstr(line, "fetch = {");
			same(nb ? "babeltrace2: a byte array's fault: no bytes, step 2; u8 enums"
				: "babeltrace2: a byte array of 4, exact; a u8 enum of the names that fit it (TWO), one with none an integer",
			     p, wb[nb]);
			nb++;
		}
	}
	ok(f && pclose(f) == 0 && nl == 3 && nb == 2 && nr == 2,
	   "babeltrace2 reads the trace: 3 + 2 kprobe events, 2 kretprobe events");
	m = slurp(path);	/* again: the checks above cut it */
	ok(!!strstr(m, "\t\tinteger { size = 32; align = 8; signed = true; base = 10; } _ret;\n\t\tuint64_t _latency_ns;\n"),
	   "CTF metadata: an int return is a 32-bit signed _ret");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		ok(0, "rm");
}

/* An event's annotations after "args": "name=TYPE:value ..." */
static void annots(const struct pkt *k, char *out, size_t len)
{
	static const char *const tn[] = {
		[2] = "bool", [3] = "uint", [4] = "int", [6] = "string",
		[7] = "pointer", [9] = "json", [11] = "dict",
	};
	size_t n = 0;
	int i, j;

	out[0] = 0;
	for (i = 1; i < k->nannot && i < PT_PF_ANNOT; i++) {
		const struct pt_annot *a = &k->annot[i];

		n += snprintf(out + n, n < len ? len - n : 0, "%s%s=%s:", i > 1 ? " " : "",
			      a->name, a->field < 12 && tn[a->field] ? tn[a->field] : "?");
		if (a->field == 6)
			n += snprintf(out + n, n < len ? len - n : 0, "\"%s\"", a->s);
		else if (a->field == 4)
			n += snprintf(out + n, n < len ? len - n : 0, "%lld", (long long)a->v);
		else if (a->field == 7)
			n += snprintf(out + n, n < len ? len - n : 0, "0x%llx", (unsigned long long)a->v);
		else if (a->field != 11)
			n += snprintf(out + n, n < len ? len - n : 0, "%llu", (unsigned long long)a->v);
		for (j = 0; a->field == 11 && j < a->ndict; j++) {
			if (a->dict[j].field == 6)
				n += snprintf(out + n, n < len ? len - n : 0, "%s%s=\"%s\"", j ? "," : "{",
					      a->dict[j].name, a->dict[j].s);
			else
				n += snprintf(out + n, n < len ? len - n : 0, "%s%s=%s:%llu", j ? "," : "{",
					      a->dict[j].name, tn[a->dict[j].field] ? tn[a->dict[j].field] : "?",
					      (unsigned long long)a->dict[j].v);
		}
		if (a->field == 11)
			n += snprintf(out + n, n < len ? len - n : 0, "}");
	}
}

static void test_pftrace(void)
{
	static const char *const want[] = {
		"cnt=int:-32768 a=int:-22 p->mode=string:\"PT_ONE\" p->on=bool:1 p->next=pointer:0xffff888012345678 str(p->name)=string:\"hello\" p->next->len=dict:{fault=uint:1} p.name=dict:{str=\"abcd\",truncated=bool:1} p->big=int:-5000000000",
		"cnt=int:7 a=int:-22 p->mode=int:7 p->on=bool:0 p->next=pointer:0x0 str(p->name)=string:\"\" p->next->len=uint:4000000000 p.name=string:\"ab\" p->big=int:-5000000000",
		"cnt=int:1",
		"fl=pointer:0x0 i_ino=uint:0 s_dev=uint:0 blocker=pointer:0x0 owner=uint:0 pid=uint:4242 flags=uint:129 flags_name=string:\"FL_POSIX|FL_SLEEP\" type=uint:1 type_name=string:\"F_WRLCK\" fl_start=int:0 fl_end=int:0 ret=int:-11",
	};
	char path[] = "/tmp/pea-typed.XXXXXX", got[2048], what[96];
	struct trace_writer *w;
	int fd = mkstemp(path), i, ne = 0;

	if (fd < 0)
		return;
	close(fd);
	w = open_out(TRACE_OUT_PFTRACE, path);
	if (!w)
		return;
	feed(w);
	ok(pt_pf_decode(path) == 0, "the Perfetto trace decodes");
	for (i = 0; i < npk; i++) {
		if (pk[i].kind != 11)
			continue;
		if (ne < 4) {
			annots(&pk[i], got, sizeof(got));
			snprintf(what, sizeof(what),
				 "pftrace: event %d's typed debug annotations, exact", ne);
			same(what, got, want[ne]);
			ok(pk[i].nannot >= 1 && !strcmp(pk[i].annot[0].name, "args") &&
			   pk[i].annot[0].field == 9,
			   "pftrace: event %d keeps its --json object as \"args\"", ne);
		}
		ne++;
	}
	ok(ne == 10, "pftrace: 10 events, the kretprobes' as slices (got %d)", ne);
	unlink(path);
}

static void test_perfetto_json(void)
{
	char path[] = "/tmp/pea-typed.XXXXXX", *t;
	struct trace_writer *w;
	int fd = mkstemp(path);

	if (fd < 0)
		return;
	close(fd);
	w = open_out(TRACE_OUT_PERFETTO, path);
	if (!w)
		return;
	feed(w);
	t = slurp(path);
	ok(!!strstr(t, "\"params\":{\"cnt\":-32768,\"a\":-22,\"p->mode\":\"PT_ONE\",\"p->on\":true,\"p->next\":\"0xffff888012345678\",\"str(p->name)\":\"hello\",\"p->next->len\":{\"fault\":1},\"p.name\":{\"str\":\"abcd\",\"truncated\":true},\"p->big\":-5000000000}"),
	   "perfetto (JSON): the args hold the typed params of --json");
	ok(!!strstr(t, "\"flags\":129,\"flags_name\":\"FL_POSIX|FL_SLEEP\",\"type\":1,\"type_name\":\"F_WRLCK\""),
	   "perfetto (JSON): the tracepoint's flags and type with their names");
	unlink(path);
}

int main(void)
{
	setup();
	events();
	test_ctf();
	test_pftrace();
	test_perfetto_json();
	return host_tap_done();
}
