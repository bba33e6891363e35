// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): the BTF side of pea trace (tools/pea/ktypes.c)
 * on a BTF built here with libbpf: each type's class, width and sign
 * (ints of every width, bool, signed and unsigned enums, char pointers,
 * other pointers, structs by value, typedefs and const), a function's
 * parameters and their argument registers (a 16-byte struct takes two, a
 * 24-byte one the stack), sign extension from each width, the text and
 * JSON of each class, the signature as pea list -v prints it, the "no
 * BTF" messages of ksig_load() (PEA_BTF_DIR pointed at an empty or
 * written directory), and a kretprobe event printed by the tool's own
 * printer (output.c) with a typed ret. TAP on stdout.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include "pea_tool.h"
#include "probe_kind.h"
#include "ktypes.h"

#define HOST_TAP_NAME "ktypes"
#include "host_tap.h"

static const char *fmt_of(const struct ktype *t, __u64 raw)
{
	static char buf[64];

	return ktype_format(t, raw, buf, sizeof(buf));
}

static const char *json_of(const struct ktype *t, __u64 raw)
{
	static char buf[256];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	ktype_put_json(f, t, raw);
	fclose(f);
	return buf;
}

static void check_fmt(const struct ktype *t, __u64 raw, const char *text,
		      const char *json)
{
	ok(!strcmp(fmt_of(t, raw), text), "%s 0x%llx prints %s (got %s)",
	   t->name, (unsigned long long)raw, text, fmt_of(t, raw));
	ok(!strcmp(json_of(t, raw), json), "%s 0x%llx in JSON is %s (got %s)",
	   t->name, (unsigned long long)raw, json, json_of(t, raw));
}

/* ids of the test BTF's types */
struct ids {
	int s8, u8, s16, u16, s32, u32, s64, u64, bool_, chr, enm, uenm,
	    cchr, cchr_p, st, st_p, st16, st24, tdef, voidp;
};

static struct btf *build(struct ids *id)
{
	struct btf *b = btf__new_empty();
	int proto;

	id->s8 = btf__add_int(b, "signed char", 1, BTF_INT_SIGNED);
	id->u8 = btf__add_int(b, "unsigned char", 1, 0);
	id->s16 = btf__add_int(b, "short int", 2, BTF_INT_SIGNED);
	id->u16 = btf__add_int(b, "short unsigned int", 2, 0);
	id->s32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	id->u32 = btf__add_int(b, "unsigned int", 4, 0);
	id->s64 = btf__add_int(b, "long int", 8, BTF_INT_SIGNED);
	id->u64 = btf__add_int(b, "long unsigned int", 8, 0);
	id->bool_ = btf__add_int(b, "_Bool", 1, BTF_INT_BOOL);
	id->chr = btf__add_int(b, "char", 1, BTF_INT_SIGNED | BTF_INT_CHAR);
	id->enm = btf__add_enum(b, "pea_mode", 4);
	btf__add_enum_value(b, "PEA_OFF", 0);
	btf__add_enum_value(b, "PEA_ON", 1);
	btf__add_enum_value(b, "PEA_BAD", -1);
	id->uenm = btf__add_enum(b, "pea_flags8", 1);
	btf__add_enum_value(b, "PEA_F_A", 1);
	btf__add_enum_value(b, "PEA_F_HIGH", 200);
	id->cchr = btf__add_const(b, id->chr);
	id->cchr_p = btf__add_ptr(b, id->cchr);
	id->st = btf__add_struct(b, "pea_thing", 8);
	btf__add_field(b, "x", id->u64, 0, 0);
	id->st_p = btf__add_ptr(b, id->st);
	id->st16 = btf__add_struct(b, "pea_pair", 16);
	btf__add_field(b, "a", id->u64, 0, 0);
	btf__add_field(b, "b", id->u64, 64, 0);
	id->st24 = btf__add_struct(b, "pea_big", 24);
	btf__add_field(b, "a", id->u64, 0, 0);
	id->tdef = btf__add_typedef(b, "pea_ssize_t", id->s64);
	id->voidp = btf__add_ptr(b, 0);

	/* int pea_fn(int a, unsigned int b, enum pea_mode m, bool f,
	 *            const char *s, struct pea_thing *p, struct pea_pair pr,
	 *            struct pea_big big, short h) */
	proto = btf__add_func_proto(b, id->s32);
	btf__add_func_param(b, "a", id->s32);
	btf__add_func_param(b, "b", id->u32);
	btf__add_func_param(b, "m", id->enm);
	btf__add_func_param(b, "f", id->bool_);
	btf__add_func_param(b, "s", id->cchr_p);
	btf__add_func_param(b, "pr", id->st16);
	btf__add_func_param(b, "big", id->st24);
	btf__add_func_param(b, "h", id->s16);
	btf__add_func(b, "pea_fn", BTF_FUNC_GLOBAL, proto);

	proto = btf__add_func_proto(b, id->enm);
	btf__add_func_param(b, "p", id->st_p);
	btf__add_func_param(b, "", 0);	/* ... */
	btf__add_func(b, "pea_mode_of", BTF_FUNC_GLOBAL, proto);

	proto = btf__add_func_proto(b, 0);
	btf__add_func(b, "pea_void", BTF_FUNC_GLOBAL, proto);
	return b;
}

static void test_classes(const struct btf *b, const struct ids *id)
{
	static const struct {
		const char *what;
		int which;
		enum ktype_class cls;
		unsigned int size;
		bool sgn;
		const char *name;
	} cases[] = {
		{ "s8", 0, KT_INT, 1, true, "signed char" },
		{ "u8", 1, KT_INT, 1, false, "unsigned char" },
		{ "s16", 2, KT_INT, 2, true, "short int" },
		{ "u16", 3, KT_INT, 2, false, "short unsigned int" },
		{ "s32", 4, KT_INT, 4, true, "int" },
		{ "u32", 5, KT_INT, 4, false, "unsigned int" },
		{ "s64", 6, KT_INT, 8, true, "long int" },
		{ "u64", 7, KT_INT, 8, false, "long unsigned int" },
		{ "bool", 8, KT_BOOL, 1, false, "_Bool" },
		{ "enum", 10, KT_ENUM, 4, true, "enum pea_mode" },
		{ "enum8", 11, KT_ENUM, 1, false, "enum pea_flags8" },
		{ "const char *", 13, KT_CHAR_PTR, 8, false, "const char *" },
		{ "struct", 14, KT_STRUCT, 8, false, "struct pea_thing" },
		{ "struct *", 15, KT_PTR, 8, false, "struct pea_thing *" },
		{ "typedef", 18, KT_INT, 8, true, "pea_ssize_t" },
		{ "void *", 19, KT_PTR, 8, false, "void *" },
	};
	const int *ids = (const int *)id;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ktype t;

		ktype_from_btf(b, ids[cases[i].which], &t);
		ok(t.cls == cases[i].cls && t.size == cases[i].size &&
		   t.sgn == cases[i].sgn && !strcmp(t.name, cases[i].name),
		   "%s: class %d, %u bytes, %s, \"%s\" (got %d, %u, %d, \"%s\")",
		   cases[i].what, cases[i].cls, cases[i].size,
		   cases[i].sgn ? "signed" : "unsigned", cases[i].name, t.cls,
		   t.size, t.sgn, t.name);
		ktype_release(&t);
	}
}

static void test_values(const struct btf *b, const struct ids *id)
{
	struct ktype t;

	ktype_from_btf(b, id->s32, &t);
	check_fmt(&t, 4294967274ULL, "-22", "-22");	/* 0xffffffea */
	check_fmt(&t, 0xdeadbeef0000002aULL, "42", "42");	/* high bits */
	ok(ktype_value(&t, 0x80000000ULL) == 0xffffffff80000000ULL,
	   "int: 0x80000000 extends to INT_MIN");
	ok(ktype_signed(&t) && !ktype_hex(&t), "int: signed, decimal");
	ktype_release(&t);
	ktype_from_btf(b, id->u32, &t);
	check_fmt(&t, 0xffffffffffffffffULL, "4294967295", "4294967295");
	ok(!ktype_signed(&t), "unsigned int: unsigned");
	ktype_release(&t);
	ktype_from_btf(b, id->s8, &t);
	check_fmt(&t, 0x1ff, "-1", "-1");
	ktype_release(&t);
	ktype_from_btf(b, id->u8, &t);
	check_fmt(&t, 0x1ff, "255", "255");
	ktype_release(&t);
	ktype_from_btf(b, id->s16, &t);
	check_fmt(&t, 0x18000, "-32768", "-32768");
	ktype_release(&t);
	ktype_from_btf(b, id->u16, &t);
	check_fmt(&t, 0xfffff, "65535", "65535");
	ktype_release(&t);
	ktype_from_btf(b, id->s64, &t);
	check_fmt(&t, 4294967274ULL, "4294967274", "4294967274");
	check_fmt(&t, (__u64)-22LL, "-22", "-22");
	ktype_release(&t);
	ktype_from_btf(b, id->u64, &t);
	check_fmt(&t, (__u64)-1LL, "18446744073709551615",
		  "18446744073709551615");
	ktype_release(&t);
	ktype_from_btf(b, id->bool_, &t);
	check_fmt(&t, 0x100, "false", "false");	/* only the low byte */
	check_fmt(&t, 0x101, "true", "true");
	ktype_release(&t);
	ktype_from_btf(b, id->enm, &t);
	check_fmt(&t, 1, "PEA_ON", "\"PEA_ON\"");
	check_fmt(&t, 0xffffffffULL, "PEA_BAD", "\"PEA_BAD\"");
	check_fmt(&t, 7, "7", "7");	/* no name has it */
	ktype_release(&t);
	ktype_from_btf(b, id->uenm, &t);
	check_fmt(&t, 0xc8, "PEA_F_HIGH", "\"PEA_F_HIGH\"");
	check_fmt(&t, 0x301, "PEA_F_A", "\"PEA_F_A\"");
	ktype_release(&t);
	ktype_from_btf(b, id->st_p, &t);
	check_fmt(&t, 0xffff888012345678ULL, "0xffff888012345678",
		  "\"0xffff888012345678\"");
	ok(ktype_hex(&t) && !ktype_signed(&t), "pointer: hex, unsigned");
	ktype_release(&t);
	ktype_from_btf(b, id->cchr_p, &t);
	check_fmt(&t, 0x7ffc0000, "0x7ffc0000", "\"0x7ffc0000\"");
	ktype_release(&t);
	ktype_from_btf(b, id->st, &t);
	check_fmt(&t, 4294967274ULL, "4294967274", "4294967274");	/* raw */
	ok(!ktype_typed(&t), "a struct by value is not typed (the raw register)");
	ktype_release(&t);
	/* No BTF: the register as a signed number, as before. */
	ok(!strcmp(fmt_of(NULL, (__u64)-5LL), "-5") &&
	   !strcmp(json_of(NULL, 4294967274ULL), "4294967274"),
	   "no type: the register, signed");
}

static const char *sig_text(const struct ksig *s)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	ksig_print(f, s);
	fclose(f);
	return buf;
}

static void test_sig(const struct btf *b)
{
	static const int regs[] = { 0, 1, 2, 3, 4, -1, -1, 7 };
	struct ksig s = { 0 }, m = { 0 }, v = { 0 };
	unsigned int i;

	ok(ksig_from_btf(b, "pea_fn", &s) == 0 && s.nparams == 8,
	   "pea_fn: found, 8 parameters (got %u)", s.nparams);
	ok(!strcmp(sig_text(&s),
		   "int pea_fn(int a, unsigned int b, enum pea_mode m, _Bool f, const char *s, struct pea_pair pr, struct pea_big big, short int h)"),
	   "pea_fn's signature: %s", sig_text(&s));
	for (i = 0; i < 8 && i < s.nparams; i++) {
		int want = regs[i] == 7 ? 5 : regs[i];

		/*
		 * pr (16 bytes) takes arg5 and arg6: no register of its own
		 * that holds it; big (24 bytes) goes on the stack; h takes
		 * the sixth... which pr used up: none.
		 */
		if (i == 7)
			want = -1;
		ok(s.params[i].reg == want, "pea_fn: %s in register %d (got %d)",
		   s.params[i].name, want, s.params[i].reg);
	}
	ok(ksig_param(&s, "m") == &s.params[2] && !ksig_param(&s, "zz") &&
	   !ksig_param(&s, ""), "ksig_param: by name, none for others");
	ok(ksig_from_btf(b, "pea_mode_of", &m) == 0 && m.variadic &&
	   m.nparams == 1 && m.ret.cls == KT_ENUM &&
	   !strcmp(sig_text(&m), "enum pea_mode pea_mode_of(struct pea_thing *p, ...)"),
	   "pea_mode_of: %s", sig_text(&m));
	ok(ksig_from_btf(b, "pea_void", &v) == 0 && v.ret.cls == KT_VOID &&
	   !strcmp(sig_text(&v), "void pea_void(void)"),
	   "pea_void: %s", sig_text(&v));
	ok(ksig_from_btf(b, "nosuch", &v) == -ENOENT, "nosuch: -ENOENT");
	for (i = 0; i < s.nparams; i++)
		ktype_release(&s.params[i].type);
	ktype_release(&s.ret);
	ktype_release(&m.params[0].type);
	ktype_release(&m.ret);
}

/* ksig_load() on a BTF directory of our own (PEA_BTF_DIR). */
static void test_load(struct btf *b)
{
	char dir[] = "/tmp/pea-ktypes-XXXXXX", path[256], why[512];
	const void *raw;
	struct ksig *s;
	__u32 size;
	FILE *f;
	int rc;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	setenv("PEA_BTF_DIR", dir, 1);
	rc = ksig_load("pea_fn", &s, why, sizeof(why));
	snprintf(path, sizeof(path), "no BTF: %s/vmlinux: No such file or directory (a kernel without CONFIG_DEBUG_INFO_BTF); ret and arguments are raw registers",
		 dir);
	ok(rc == -ENOENT && !s && !strcmp(why, path),
	   "no vmlinux BTF: -ENOENT, \"%s\"", why);

	raw = btf__raw_data(b, &size);
	snprintf(path, sizeof(path), "%s/vmlinux", dir);
	f = fopen(path, "w");
	fwrite(raw, 1, size, f);
	fclose(f);
	rc = ksig_load("pea_fn", &s, why, sizeof(why));
	ok(rc == 0 && s && s->nparams == 8 && !s->module[0],
	   "vmlinux BTF written: pea_fn found in it");
	ksig_free(s);
	rc = ksig_load("pea_not_there_at_all", &s, why, sizeof(why));
	ok(rc == -ENODATA && strstr(why, "no BTF for 'pea_not_there_at_all' in vmlinux"),
	   "a function not in it: -ENODATA, \"%s\"", why);
	unlink(path);
	rmdir(dir);
}

/* The tool's printer: a kretprobe's typed ret in text and JSON. */
static void test_printer(const struct btf *b)
{
	struct ksig *s = calloc(1, sizeof(*s));
	struct trace_fmt fmt = {
		.retprobe = true, .probe = "kretprobe:pea_fn",
		.kind = &kprobe_kind, .t0_ns = 1000000000ULL,
	};
	struct trace_event ev;
	static char buf[2048];
	FILE *f;

	ksig_from_btf(b, "pea_fn", s);
	fmt.sig = s;
	memset(&ev, 0, sizeof(ev));
	ev.rec.time_ns = 1500000000ULL;
	ev.rec.ret = 4294967274LL;
	ev.rec.latency_ns = 2000;
	ev.rec.tgid = ev.rec.pid = 42;
	strcpy(ev.rec.comm, "x");
	f = fmemopen(buf, sizeof(buf), "w");
	trace_print_event(f, &fmt, &ev);
	fclose(f);
	ok(strstr(buf, "                  -22        2.000\n") != NULL,
	   "text: RET is -22: %.*s", (int)strcspn(buf, "\n"), buf);
	fmt.json = true;
	f = fmemopen(buf, sizeof(buf), "w");
	trace_print_event(f, &fmt, &ev);
	fclose(f);
	ok(strstr(buf, ",\"ret\":-22,\"ret_raw\":4294967274,\"latency_ns\":2000") != NULL,
	   "JSON: \"ret\":-22,\"ret_raw\":4294967274: %.*s", (int)strcspn(buf, "\n"), buf);
	ev.rec.ret = -22;
	f = fmemopen(buf, sizeof(buf), "w");
	trace_print_event(f, &fmt, &ev);
	fclose(f);
	ok(strstr(buf, ",\"ret\":-22,\"latency_ns\"") != NULL,
	   "JSON: no ret_raw when the register is the value: %.*s", (int)strcspn(buf, "\n"), buf);
	fmt.sig = NULL;
	ev.rec.ret = 4294967274LL;
	f = fmemopen(buf, sizeof(buf), "w");
	trace_print_event(f, &fmt, &ev);
	fclose(f);
	ok(strstr(buf, ",\"ret\":4294967274,\"latency_ns\"") != NULL,
	   "JSON without BTF: the register, as before: %.*s", (int)strcspn(buf, "\n"), buf);
	ksig_free(s);
}

int main(void)
{
	struct ids id;
	struct btf *b;

	setvbuf(stdout, NULL, _IOLBF, 0);
	b = build(&id);

	test_classes(b, &id);
	test_values(b, &id);
	test_sig(b);
	test_load(b);
	test_printer(b);
	btf__free(b);
	return host_tap_done();
}
