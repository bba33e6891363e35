// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): --filter on a kprobe (tools/pea/kfilter.c)
 * compiled against a BTF built here with libbpf into the exact postfix
 * program the kernel evaluates (struct pea_pred): ||, && and ! with
 * parentheses in their order; numbers checked against the width and
 * sign of the value they are compared with, as the kernel checks them
 * at attach (module/pea_pred.c, the predicate review's F2): a negative
 * number on an unsigned value, or one wider than the value, is refused
 * with the range, and a mask for & may be either. TAP on stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "pea_tool.h"
#include "kfilter.h"

#define HOST_TAP_NAME "kfilter"
#include "host_tap.h"

static struct ksig sig, sig_str;
static const struct ksig *cur_sig = &sig;

/*
 * long pea_fn(unsigned int u, int s, signed char c, unsigned char b,
 *	       unsigned long long q, long long sq);
 * long pea_fn_str(const char *name);
 */
static struct btf *build(void)
{
	struct btf *b = btf__new_empty();
	int u32, s32, s8, u8, u64, s64, ch, proto;

	u32 = btf__add_int(b, "unsigned int", 4, 0);
	s32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	s8 = btf__add_int(b, "signed char", 1, BTF_INT_SIGNED);
	u8 = btf__add_int(b, "unsigned char", 1, 0);
	u64 = btf__add_int(b, "long long unsigned int", 8, 0);
	s64 = btf__add_int(b, "long long int", 8, BTF_INT_SIGNED);
	ch = btf__add_int(b, "char", 1, BTF_INT_CHAR);
	ch = btf__add_ptr(b, btf__add_const(b, ch));
	proto = btf__add_func_proto(b, s64);
	btf__add_func_param(b, "u", u32);
	btf__add_func_param(b, "s", s32);
	btf__add_func_param(b, "c", s8);
	btf__add_func_param(b, "b", u8);
	btf__add_func_param(b, "q", u64);
	btf__add_func_param(b, "sq", s64);
	btf__add_func(b, "pea_fn", BTF_FUNC_GLOBAL, proto);
	proto = btf__add_func_proto(b, s64);
	btf__add_func_param(b, "name", ch);
	btf__add_func(b, "pea_fn_str", BTF_FUNC_GLOBAL, proto);
	return b;
}

struct compiled {
	struct kfetch fetches[PEA_FETCH_MAX];
	struct pea_pred preds[PEA_PRED_MAX];
	struct kfilter_ctx c;
	char msg[256];
	int err;
};

static void compile(struct compiled *r, const char *text)
{
	memset(r, 0, sizeof(*r));
	r->c.sig = cur_sig;
	r->c.fetches = r->fetches;
	r->c.max = PEA_FETCH_MAX;
	r->c.preds = r->preds;
	r->err = kfilter_compile(&r->c, text, r->msg, sizeof(r->msg));
}

static void release(struct compiled *r)
{
	unsigned int i;

	for (i = 0; i < r->c.nfetches; i++)
		kfetch_release(&r->fetches[i]);
}

/* @text compiles into one comparison of fetch type @type with @value. */
static void value(const char *text, __u8 type, __u8 cmp, __u64 want)
{
	struct compiled r;

	compile(&r, text);
	ok(!r.err && r.c.npreds == 1 && r.c.nfetches == 1 &&
	   r.fetches[0].f.type == type && r.preds[0].op == PEA_PRED_CMP &&
	   r.preds[0].cmp == cmp && r.preds[0].value == want,
	   "'%s': type %u cmp %u value 0x%llx (got %d %s: %u preds, type %u cmp %u value 0x%llx)",
	   text, type, cmp, (unsigned long long)want, r.err, r.msg,
	   r.c.npreds, r.fetches[0].f.type, r.preds[0].cmp,
	   (unsigned long long)r.preds[0].value);
	release(&r);
}

static void refused(const char *text, const char *msg)
{
	struct compiled r;

	compile(&r, text);
	ok(r.err == -EINVAL && !strcmp(r.msg, msg), "'%s' refused: %s (got %d %s)",
	   text, msg, r.err, r.msg);
	release(&r);
}

static void test_width(void)
{
	value("u == 4294967295", PEA_FETCH_U32, PEA_TP_OP_EQ, 0xffffffff);
	value("u & -8", PEA_FETCH_U32, PEA_TP_OP_AND, (__u64)-8);
	value("u & 0xf0", PEA_FETCH_U32, PEA_TP_OP_AND, 0xf0);
	value("u == -0", PEA_FETCH_U32, PEA_TP_OP_EQ, 0);
	value("s == -1", PEA_FETCH_S32, PEA_TP_OP_EQ, (__u64)-1);
	value("s >= -2147483648", PEA_FETCH_S32, PEA_PRED_OP_GE,
	      (__u64)-2147483648LL);
	value("s & 0x80000000", PEA_FETCH_S32, PEA_TP_OP_AND, 0x80000000);
	value("c & 0xff", PEA_FETCH_S8, PEA_TP_OP_AND, 0xff);
	value("c < -128", PEA_FETCH_S8, PEA_TP_OP_LT, (__u64)-128);
	value("b <= 255", PEA_FETCH_U8, PEA_PRED_OP_LE, 255);
	value("q == 0xffffffffffffffff", PEA_FETCH_U64, PEA_TP_OP_EQ,
	      (__u64)-1);
	value("q & -1", PEA_FETCH_U64, PEA_TP_OP_AND, (__u64)-1);
	value("sq > -9223372036854775808", PEA_FETCH_S64, PEA_TP_OP_GT,
	      1ULL << 63);
	value("sq != 0x7fffffffffffffff", PEA_FETCH_S64, PEA_TP_OP_NE,
	      0x7fffffffffffffffULL);
	refused("u == -1", "'u': -1 is out of range for u32 (0..4294967295)");
	refused("u < -1", "'u': -1 is out of range for u32 (0..4294967295)");
	refused("u == 0x100000000",
		"'u': 0x100000000 is out of range for u32 (0..4294967295)");
	refused("s == 0x80000000",
		"'s': 0x80000000 is out of range for s32 (-2147483648..2147483647)");
	refused("s & 0x100000000",
		"'s': 0x100000000 is out of range for s32 (-2147483648..2147483647)");
	refused("c & 0x100", "'c': 0x100 is out of range for s8 (-128..127)");
	refused("c == 255", "'c': 255 is out of range for s8 (-128..127)");
	refused("c == -129", "'c': -129 is out of range for s8 (-128..127)");
	refused("b == 256", "'b': 256 is out of range for u8 (0..255)");
	refused("q == -1",
		"'q': -1 is out of range for u64 (0..18446744073709551615)");
	refused("sq == 0x8000000000000000",
		"'sq': 0x8000000000000000 is out of range for s64 (-9223372036854775808..9223372036854775807)");
	refused("sq == 99999999999999999999",
		"a number expected, not '99999999999999999999'");
}

/* The program of @text: its ops and comparisons as letters, in order. */
static void program(const char *text, const char *want)
{
	struct compiled r;
	char got[64] = "";
	unsigned int i;
	size_t n = 0;

	compile(&r, text);
	for (i = 0; i < r.c.npreds && n + 2 < sizeof(got); i++) {
		const struct pea_pred *p = &r.preds[i];

		if (p->op == PEA_PRED_CMP)
			got[n++] = (char)('0' + p->value);
		else
			got[n++] = p->op == PEA_PRED_AND ? '&' :
				   p->op == PEA_PRED_OR ? '|' : '!';
	}
	got[n] = '\0';
	ok(!r.err && !strcmp(got, want), "'%s' is %s (got %d %s: %s)", text,
	   want, r.err, r.msg, got);
	release(&r);
}

static void test_grammar(void)
{
	program("s == 1 || s == 2 && s == 3", "123&|");
	program("(s == 1 || s == 2) && s == 3", "12|3&");
	program("!(s == 1) && !s == 2", "1!2!&");
	program("!!(s == 1 || !(s == 2 && s == 3))", "123&!|!!");
	/* The parser recurses: '!' and '(' nest at most 64 deep. */
	{
		char text[256];
		int i;

		for (i = 0; i < 65; i++)
			text[i] = i % 2 ? '(' : '!';
		snprintf(text + 65, sizeof(text) - 65, "s == 1");
		for (i = 0; i < 32; i++)
			strcat(text, ")");
		refused(text, "'!' and parentheses nested deeper than 64");
	}
}

/* A string comparison: == and != exact, ~ a glob, as Linux's filters. */
static void string_cmp(const char *text, __u8 cmp, const char *str)
{
	struct compiled r;

	compile(&r, text);
	ok(!r.err && r.c.npreds == 1 && r.fetches[0].str &&
	   r.preds[0].cmp == cmp && !strcmp(r.preds[0].str, str),
	   "'%s': cmp %u '%s' (got %d %s: cmp %u '%s')", text, cmp, str,
	   r.err, r.msg, r.preds[0].cmp, r.preds[0].str);
	release(&r);
}

static void test_strings(void)
{
	cur_sig = &sig_str;
	string_cmp("name == \"ab*\"", PEA_TP_OP_EQ, "ab*");
	string_cmp("name != \"a?\"", PEA_TP_OP_NE, "a?");
	string_cmp("name ~ \"ab*\"", PEA_TP_OP_GLOB, "ab*");
	string_cmp("name == \"abc\"", PEA_TP_OP_EQ, "abc");
	/* Quotes as Linux's parse_pred(): ' or ", the text raw. */
	string_cmp("name == 'ab'", PEA_TP_OP_EQ, "ab");
	string_cmp("name == \"a\\*b\"", PEA_TP_OP_EQ, "a\\*b");
	string_cmp("name != 'a\"b'", PEA_TP_OP_NE, "a\"b");
	/* What Linux's ~ means and pea's glob has not: refused. */
	refused("name ~ \"a[bc]\"",
		"'name': a ~ pattern takes '*' and '?' only, not '[' or '\\' (Linux's glob_match() classes and escapes)");
	refused("name ~ \"a\\*\"",
		"'name': a ~ pattern takes '*' and '?' only, not '[' or '\\' (Linux's glob_match() classes and escapes)");
	refused("name ~ \"!x\"",
		"'name': a ~ pattern starting with '!' (Linux's negation): write !(name ~ \"x\")");
	cur_sig = &sig;
}

int main(void)
{
	struct btf *b = build();

	ok(b && !ksig_from_btf(b, "pea_fn", &sig) &&
	   !ksig_from_btf(b, "pea_fn_str", &sig_str),
	   "the test BTF, pea_fn and pea_fn_str");
	test_width();
	test_grammar();
	test_strings();
	return host_tap_done();
}
