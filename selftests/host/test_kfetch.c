// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): fetch expressions (tools/pea/kfetch.c) resolved
 * against a BTF built here with libbpf into the exact struct pea_fetch
 * the kernel evaluates: a register taken as it is, fields behind a
 * pointer, a field of a nested struct, a field of an anonymous union, a
 * char array and a char pointer as strings, str() on an integer, a chain
 * of four pointer reads and the fifth refused, ret at a kretprobe only,
 * a bit field, a missing field and '.' on a register refused; then the
 * values of a block as text and JSON (an int, a string, a cut string, a
 * fault); fixed arrays of integers and bools fetched whole and printed
 * [v,v,...], one over 1024 bytes refused. TAP on stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "pea_tool.h"
#include "kfetch.h"

#define HOST_TAP_NAME "kfetch"
#include "host_tap.h"
#include "host_fetch.h"

static struct ksig sig;

/*
 * struct inner { int x; char name[16]; };		20 bytes
 * struct outer { u64 a; struct inner in; struct inner *next;
 *		  const char *str; union { u32 u; }; u8 bf:3;
 *		  struct outer *self; };				64 bytes
 * long pea_fn(struct outer *o, const char *s, int n);
 */
static struct btf *build(void)
{
	struct btf *b = btf__new_empty();
	int s32, u32, u64, u8, s64, chr, arr, inner, inner_p, cchr_p, un,
	    outer_p, proto;

	s32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	u32 = btf__add_int(b, "unsigned int", 4, 0);
	u64 = btf__add_int(b, "long long unsigned int", 8, 0);
	u8 = btf__add_int(b, "unsigned char", 1, 0);
	s64 = btf__add_int(b, "long int", 8, BTF_INT_SIGNED);
	chr = btf__add_int(b, "char", 1, BTF_INT_SIGNED | BTF_INT_CHAR);
	arr = btf__add_array(b, u32, chr, 16);
	inner = btf__add_struct(b, "inner", 20);
	btf__add_field(b, "x", s32, 0, 0);
	btf__add_field(b, "name", arr, 32, 0);
	inner_p = btf__add_ptr(b, inner);
	cchr_p = btf__add_ptr(b, btf__add_const(b, chr));
	un = btf__add_union(b, NULL, 4);
	btf__add_field(b, "u", u32, 0, 0);
	/* The pointer first, to the struct added next: fields follow it. */
	outer_p = btf__add_ptr(b, btf__type_cnt(b) + 1);
	btf__add_struct(b, "outer", 64);
	btf__add_field(b, "a", u64, 0, 0);
	btf__add_field(b, "in", inner, 64, 0);
	btf__add_field(b, "next", inner_p, 256, 0);
	btf__add_field(b, "str", cchr_p, 320, 0);
	btf__add_field(b, NULL, un, 384, 0);
	btf__add_field(b, "bf", u8, 416, 3);
	btf__add_field(b, "self", outer_p, 448, 0);
	proto = btf__add_func_proto(b, s64);
	btf__add_func_param(b, "o", outer_p);
	btf__add_func_param(b, "s", cchr_p);
	btf__add_func_param(b, "n", s32);
	btf__add_func(b, "pea_fn", BTF_FUNC_GLOBAL, proto);
	return b;
}

/* Resolve @expr; compare with @want (nr_deref and offsets included). */
static void check(const char *expr, bool ret, struct pea_fetch want,
		  bool str)
{
	struct kfetch k;
	char why[256] = "";
	int err = kfetch_parse(&sig, expr, ret, &k, why, sizeof(why));

	ok(!err && !memcmp(&k.f, &want, sizeof(want)) && k.str == str,
	   "'%s': base %u arg %u deref %u type %u size %u flags %u off %d,%d,%d,%d,%d%s (got %s%s: %u %u %u %u %u %u %d,%d,%d,%d,%d)",
	   expr, want.base, want.arg, want.nr_deref, want.type, want.size,
	   want.flags, want.offset[0], want.offset[1], want.offset[2],
	   want.offset[3], want.offset[4], str ? " string" : "",
	   err ? "error " : "", why, k.f.base, k.f.arg, k.f.nr_deref,
	   k.f.type, k.f.size, k.f.flags, k.f.offset[0], k.f.offset[1],
	   k.f.offset[2], k.f.offset[3], k.f.offset[4]);
	if (!err)
		kfetch_release(&k);
}

static void refused(const char *expr, bool ret, const char *msg)
{
	struct kfetch k;
	char why[256] = "";
	int err = kfetch_parse(&sig, expr, ret, &k, why, sizeof(why));

	ok(err == -EINVAL && !strcmp(why, msg), "'%s' refused: %s (got %d %s)",
	   expr, msg, err, why);
	if (!err)
		kfetch_release(&k);
}

#define F	host_fetch

#define A	PEA_FETCH_BASE_ARG
#define L	PEA_FETCH_F_LOAD

static void test_resolve(void)
{
	check("n", false, F(A, 2, 0, PEA_FETCH_S32, 0, 0, 0, 0, 0, 0, 0),
	      false);
	check("o", false, F(A, 0, 0, PEA_FETCH_U64, 0, 0, 0, 0, 0, 0, 0),
	      false);
	check("s", false, F(A, 1, 0, PEA_FETCH_STR, 64, 0, 0, 0, 0, 0, 0),
	      true);
	check("str(s,200)", false,
	      F(A, 1, 0, PEA_FETCH_STR, 200, 0, 0, 0, 0, 0, 0), true);
	check("o->a", false, F(A, 0, 0, PEA_FETCH_U64, 0, L, 0, 0, 0, 0, 0),
	      false);
	check("o->in.x", false,
	      F(A, 0, 0, PEA_FETCH_S32, 0, L, 8, 0, 0, 0, 0), false);
	check("o->in.name", false,
	      F(A, 0, 0, PEA_FETCH_STR, 16, 0, 12, 0, 0, 0, 0), true);
	check("o->next->name", false,
	      F(A, 0, 1, PEA_FETCH_STR, 16, 0, 32, 4, 0, 0, 0), true);
	check("o->next->x", false,
	      F(A, 0, 1, PEA_FETCH_S32, 0, L, 32, 0, 0, 0, 0), false);
	check("o->str", false,
	      F(A, 0, 1, PEA_FETCH_STR, 64, 0, 40, 0, 0, 0, 0), true);
	check("o->u", false, F(A, 0, 0, PEA_FETCH_U32, 0, L, 48, 0, 0, 0, 0),
	      false);
	check("str(o->a,8)", false,
	      F(A, 0, 1, PEA_FETCH_STR, 8, 0, 0, 0, 0, 0, 0), true);
	check("o->self->self->self->a", false,
	      F(A, 0, 3, PEA_FETCH_U64, 0, L, 56, 56, 56, 0, 0), false);
	check("o->self->self->self->self->a", false,
	      F(A, 0, 4, PEA_FETCH_U64, 0, L, 56, 56, 56, 56, 0), false);
	check("ret", true, F(PEA_FETCH_BASE_RET, 0, 0, PEA_FETCH_S64, 0, 0, 0,
			     0, 0, 0, 0), false);
	refused("o->self->self->self->self->self->a", false,
		"'o->self->self->self->self->self->a': more than 4 pointer reads in one expression");
	refused("ret", false,
		"'pea_fn' has no parameter 'ret' (pea list -v kprobe:pea_fn shows them)");
	refused("o->bf", false, "'bf' is a bit field (not fetched)");
	refused("o->nosuch", false, "struct outer has no field 'nosuch'");
	refused("o.a", false,
		"'.a': struct outer * is in a register, not in memory (use -> on a pointer)");
	refused("o->in", false,
		"struct inner is not fetched as a value (integers, enums, bool, pointers and strings are; name one of its fields)");
	refused("n->x", false, "'->x': int is not a pointer");
	refused("str(s,0)", false, "'str(s,0)': str(EXPR,N): N is 1..1024 bytes");
	ok(kfetch_is_expr("how->flags") && kfetch_is_expr("a.b->c") &&
	   kfetch_is_expr("str(x)") && !kfetch_is_expr("kprobe:x") &&
	   !kfetch_is_expr("a->") && !kfetch_is_expr("-x"),
	   "kfetch_is_expr tells expressions from probes");
}

static char *put(const struct kfetch *k, const void *b, __u32 i, bool json)
{
	static char buf[512];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	if (json)
		kfetch_put_json(f, k, b, i);
	else
		kfetch_put(f, k, b, i);
	fclose(f);
	return buf;
}

static void test_print(void)
{
	struct kfetch kn, ks, kc, kf;
	char why[256];
	__u64 blk[16];
	struct pea_fetch_block *b = (void *)blk;
	__s32 neg = -7;

	memset(blk, 0, sizeof(blk));
	kfetch_parse(&sig, "n", false, &kn, why, sizeof(why));
	kfetch_parse(&sig, "s", false, &ks, why, sizeof(why));
	kfetch_parse(&sig, "str(s,3)", false, &kc, why, sizeof(why));
	kfetch_parse(&sig, "o->next->name", false, &kf, why, sizeof(why));
	b->nr = 4;
	b->values[0] = (struct pea_fetch_value){ .offset = 40, .len = 4 };
	memcpy((char *)b + 40, &neg, 4);
	b->values[1] = (struct pea_fetch_value){ .offset = 48, .len = 6 };
	memcpy((char *)b + 48, "a\"b\\c\n", 6);
	b->values[2] = (struct pea_fetch_value){
		.offset = 56, .len = 3, .status = PEA_FETCH_TRUNCATED };
	memcpy((char *)b + 56, "abc", 3);
	b->values[3] = (struct pea_fetch_value){
		.offset = 64, .status = PEA_FETCH_FAULT, .step = 1 };
	b->size = 64;
	ok(kfetch_block_ok(b, 64, 4), "a well-formed block is taken");
	ok(kfetch_block_ok(b, 64, 3),
	   "a block with more values (--filter's fetches) is taken");
	ok(!kfetch_block_ok(b, 64, 5), "a block with fewer values is not");
	b->values[1].len = 30;
	ok(!kfetch_block_ok(b, 64, 4), "a value past the block is not");
	b->values[1].len = 6;
	ok(!strcmp(put(&kn, b, 0, false), "n=-7"), "int text: %s",
	   put(&kn, b, 0, false));
	ok(!strcmp(put(&kn, b, 0, true), "\"n\":-7"), "int JSON: %s",
	   put(&kn, b, 0, true));
	ok(!strcmp(put(&ks, b, 1, false), "s=\"a\\\"b\\\\c\\n\""),
	   "string text escaped: %s", put(&ks, b, 1, false));
	ok(!strcmp(put(&ks, b, 1, true), "\"s\":\"a\\\"b\\\\c\\n\""),
	   "string JSON escaped: %s", put(&ks, b, 1, true));
	ok(!strcmp(put(&kc, b, 2, false), "str(s,3)=\"abc\"..."),
	   "cut string text: %s", put(&kc, b, 2, false));
	ok(!strcmp(put(&kc, b, 2, true),
		   "\"str(s,3)\":{\"str\":\"abc\",\"truncated\":true}"),
	   "cut string JSON: %s", put(&kc, b, 2, true));
	ok(!strcmp(put(&kf, b, 3, false), "o->next->name=(fault@1)"),
	   "fault text: %s", put(&kf, b, 3, false));
	ok(!strcmp(put(&kf, b, 3, true), "\"o->next->name\":{\"fault\":1}"),
	   "fault JSON: %s", put(&kf, b, 3, true));
	kfetch_release(&kn);
	kfetch_release(&ks);
	kfetch_release(&kc);
	kfetch_release(&kf);
}

/*
 * Fixed arrays fetched whole (PEA_FETCH_ARRAY), with another BTF:
 * struct arrs { unsigned int v[4]; short w[3]; _Bool f[2]; int big[300]; };
 * long pea_arr(struct arrs *a);
 */
static void test_array(void)
{
	struct btf *b = btf__new_empty();
	struct ksig as;
	struct kfetch kw, kf;
	char why[256] = "";
	__u64 blk[8];
	struct pea_fetch_block *bl = (void *)blk;
	__s16 w[3] = { -1, 2, 300 };
	int u32, s16, bo, s32, s64, arrs, arrs_p, proto, err;

	u32 = btf__add_int(b, "unsigned int", 4, 0);
	s16 = btf__add_int(b, "short int", 2, BTF_INT_SIGNED);
	bo = btf__add_int(b, "_Bool", 1, BTF_INT_BOOL);
	s32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	s64 = btf__add_int(b, "long int", 8, BTF_INT_SIGNED);
	btf__add_array(b, u32, u32, 4);		/* id 6 */
	btf__add_array(b, u32, s16, 3);		/* id 7 */
	btf__add_array(b, u32, bo, 2);		/* id 8 */
	btf__add_array(b, u32, s32, 300);	/* id 9 */
	arrs = btf__add_struct(b, "arrs", 1224);
	btf__add_field(b, "v", 6, 0, 0);
	btf__add_field(b, "w", 7, 128, 0);
	btf__add_field(b, "f", 8, 176, 0);
	btf__add_field(b, "big", 9, 192, 0);
	arrs_p = btf__add_ptr(b, arrs);
	proto = btf__add_func_proto(b, s64);
	btf__add_func_param(b, "a", arrs_p);
	btf__add_func(b, "pea_arr", BTF_FUNC_GLOBAL, proto);
	memset(&as, 0, sizeof(as));
	ok(!ksig_from_btf(b, "pea_arr", &as), "the arrays' BTF and pea_arr");
	err = kfetch_parse(&as, "a->v", false, &kw, why, sizeof(why));
	ok(!err && kw.f.type == PEA_FETCH_ARRAY && kw.f.size == 16 &&
	   kw.f.offset[0] == 0 && !kw.f.flags && kw.nelem == 4 &&
	   !strcmp(kw.type.name, "unsigned int"),
	   "'a->v': an array of 4 unsigned ints, 16 bytes at 0 (%d %s)", err,
	   why);
	if (!err)
		kfetch_release(&kw);
	err = kfetch_parse(&as, "a->f", false, &kf, why, sizeof(why));
	ok(!err && kf.f.type == PEA_FETCH_ARRAY && kf.f.size == 2 &&
	   kf.f.offset[0] == 22 && kf.nelem == 2,
	   "'a->f': 2 bools, 2 bytes at 22 (%d %s)", err, why);
	err = kfetch_parse(&as, "a->big", false, &kw, why, sizeof(why));
	ok(err == -EINVAL &&
	   !strcmp(why, "'a->big': int[300] is 1200 bytes; a fetched array is 1..1024"),
	   "'a->big' refused: more than 1024 bytes (%s)", why);
	err = kfetch_parse(&as, "a->w", false, &kw, why, sizeof(why));
	ok(!err && kw.f.size == 6 && kw.f.offset[0] == 16 && kw.nelem == 3,
	   "'a->w': 3 shorts, 6 bytes at 16 (%d %s)", err, why);
	memset(blk, 0, sizeof(blk));
	bl->nr = 2;
	bl->values[0] = (struct pea_fetch_value){ .offset = 32, .len = 6 };
	memcpy((char *)bl + 32, w, 6);
	bl->values[1] = (struct pea_fetch_value){ .offset = 40, .len = 2 };
	memcpy((char *)bl + 40, "\1\0", 2);
	bl->size = 48;
	ok(!strcmp(put(&kw, bl, 0, false), "a->w=[-1,2,300]"),
	   "short array text: %s", put(&kw, bl, 0, false));
	ok(!strcmp(put(&kw, bl, 0, true), "\"a->w\":[-1,2,300]"),
	   "short array JSON: %s", put(&kw, bl, 0, true));
	ok(!strcmp(put(&kf, bl, 1, true), "\"a->f\":[true,false]"),
	   "bool array JSON: %s", put(&kf, bl, 1, true));
	kfetch_release(&kw);
	kfetch_release(&kf);
	ktype_release(&as.ret);
	ktype_release(&as.params[0].type);
	btf__free(b);
}

int main(void)
{
	struct btf *b = build();

	ok(b && !ksig_from_btf(b, "pea_fn", &sig), "the test BTF and pea_fn");
	test_resolve();
	test_print();
	test_array();
	btf__free(b);
	return host_tap_done();
}
