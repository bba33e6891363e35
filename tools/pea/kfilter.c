// SPDX-License-Identifier: GPL-2.0
/*
 * pea: --filter on a kprobe, kretprobe, uprobe or uretprobe, compiled
 * into the kernel's predicate program (struct pea_pred, postfix):
 *
 *	OR    := AND { || AND }
 *	AND   := UNARY { && UNARY }
 *	UNARY := ! UNARY | ( OR ) | EXPR OP VALUE
 *	OP    := == != < > <= >= & ~
 *
 * EXPR is a fetch expression (kfetch.c; a uprobe's: ufetch.c, its
 * +OFF(VALUE) and :TYPE included, or a NAME it printed as; or ctx.NAME,
 * ctxfetch.c, whose ctx.cgroup also takes a "PATH"): one the
 * probe prints is reused,
 * another one is fetched too and not printed. VALUE is a number (decimal,
 * 0x hex, 0 octal, negative; one the value's type holds: a negative one
 * only on a signed value or as a & mask), an enum value's name for an
 * enum, true or false for a bool, or a "string" or 'string' (raw) for a
 * string; on a string == and != are exact and ~ is a glob, as in Linux's
 * event filters (filter_build_regex()) and the tracepoint --filter, and
 * what else Linux's ~ takes ([classes], \ escapes, a leading !) is
 * refused. The bounds
 * are the kernel's: PEA_PRED_MAX instructions, PEA_PRED_DEPTH_MAX values
 * pending, each a clear error here.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pea_tool.h"
#include "ctxfetch.h"
#include "kfilter.h"
#include "ufetch.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define KF_STR_(x)	#x
#define KF_STR(x)	KF_STR_(x)

struct parser {
	struct kfilter_ctx *c;
	const char *s;
	char *msg;
	size_t len;
	unsigned int depth, max_depth, nest;
};

static void skip_ws(struct parser *p)
{
	while (*p->s == ' ' || *p->s == '\t')
		p->s++;
}

static int fail(struct parser *p, const char *fmt, const char *arg)
{
	snprintf(p->msg, p->len, fmt, arg);
	return -EINVAL;
}

static int emit(struct parser *p, struct pea_pred pr)
{
	if (p->c->npreds == PEA_PRED_MAX)
		return fail(p, "more than %s comparisons and operators",
			    KF_STR(PEA_PRED_MAX));
	if (pr.op == PEA_PRED_CMP && ++p->depth > PEA_PRED_DEPTH_MAX)
		return fail(p, "more than %s comparisons pending at once (nest fewer)",
			    KF_STR(PEA_PRED_DEPTH_MAX));
	if (pr.op == PEA_PRED_AND || pr.op == PEA_PRED_OR)
		p->depth--;
	p->c->preds[p->c->npreds++] = pr;
	return 0;
}

static int emit_op(struct parser *p, __u8 op)
{
	struct pea_pred pr;

	memset(&pr, 0, sizeof(pr));
	pr.op = op;
	return emit(p, pr);
}

/* A uprobe expression's ":TYPE" at @s: its length (0: none). */
static size_t type_len(const char *s)
{
	size_t n = 1;

	if (s[0] != ':')
		return 0;
	while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9'))
		n++;
	return n > 1 ? n : 0;
}

/* The length of the fetch expression at p->s. */
static size_t expr_len(const char *s)
{
	size_t n = 0;
	int paren = 0;

	while ((s[n] >= 'a' && s[n] <= 'z') || s[n] == '_')
		n++;
	if ((n && s[n] == '(') || s[0] == '+' ||
	    (s[0] == '-' && s[1] >= '0' && s[1] <= '9')) {
		for (n = 0; s[n]; n++) {
			if (s[n] == '(')
				paren++;
			else if (s[n] == ')' && !--paren)
				return n + 1 + type_len(s + n + 1);
		}
		return 0;
	}
	for (;;) {
		char ch = s[n];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
		    ch == '[' || ch == ']')
			n++;
		else if (ch == '-' && s[n + 1] == '>')
			n += 2;
		else
			return n + type_len(s + n);
	}
}

/*
 * Whether a comparison can take fetch @k: ntohs(), ntohl(), bswap() and
 * ntop() of 4 bytes have their operand converted to the bytes the kernel
 * reads (conv_value()); ntop() of 16 bytes (an array) has none.
 */
static bool conv_ok(const struct kfetch *k)
{
	return k->conv != KFETCH_NTOP || k->f.type != PEA_FETCH_ARRAY;
}

/* The fetch @expr names: one the probe has, or a new one. */
static int fetch_of(struct parser *p, const char *expr)
{
	struct kfilter_ctx *c = p->c;
	unsigned int i;
	char why[512];

	for (i = 0; i < c->nfetches; i++)
		if (!strcmp(c->fetches[i].expr, expr))
			break;
	if (i < c->nfetches && c->fetches[i].join)
		return fail(p, "'%s': join() prints a probe's strings; it is no filter term (compare one of them: EXPR[N])",
			    expr);
	if (i < c->nfetches && !conv_ok(&c->fetches[i]))
		goto conv;
	if (i < c->nfetches)
		return i;
	if (c->nfetches == c->max)
		return fail(p, "'%s': more than 8 fetches with the filter's",
			    expr);
	if (c->uprobe ?
	    ufetch_resolve(c->sig, NULL, expr, c->ret,
			   &c->fetches[c->nfetches], why, sizeof(why)) :
	    kfetch_parse(c->sig, expr, c->ret, &c->fetches[c->nfetches], why,
			 sizeof(why)))
		return fail(p, "%s", why);
	if (!conv_ok(&c->fetches[c->nfetches])) {
		kfetch_release(&c->fetches[c->nfetches]);
		goto conv;
	}
	return c->nfetches++;
conv:
	return fail(p, "'%s': the kernel compares the bytes it reads: ntop() of 16 bytes takes no comparison (compare the expression inside)",
		    expr);
}

static int parse_op(struct parser *p, __u8 *op)
{
	static const struct { const char *s; __u8 op; } ops[] = {
		{ "==", PEA_TP_OP_EQ }, { "!=", PEA_TP_OP_NE },
		{ "<=", PEA_PRED_OP_LE }, { ">=", PEA_PRED_OP_GE },
		{ "<", PEA_TP_OP_LT }, { ">", PEA_TP_OP_GT },
		{ "&", PEA_TP_OP_AND }, { "~", PEA_TP_OP_GLOB },
	};
	unsigned int i;

	skip_ws(p);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(p->s, ops[i].s, strlen(ops[i].s)) &&
		    strncmp(p->s, "&&", 2)) {
			*op = ops[i].op;
			p->s += strlen(ops[i].s);
			return 0;
		}
	return fail(p, "an operator (== != < > <= >= & ~) expected at '%s'",
		    p->s);
}

/*
 * A "string" or 'string', the text between the quotes as it is (no
 * escapes), as Linux's filters take it (parse_pred()). A ~ pattern with
 * what Linux's glob_match() means and pea_glob() has not ([classes], \
 * escapes, a leading ! that negates) is refused, rather than a pattern
 * that silently matches otherwise.
 */
/*
 * The text between the quote at p->s ('"' or '\'') and its twin, taken
 * as written (Linux's parse_pred() has no escapes), into @buf of @len
 * bytes: 0, or -EINVAL saying @what lacks its closing quote or @too_long.
 */
static int quoted(struct parser *p, char *buf, size_t len, const char *what,
		  const char *too_long)
{
	char q = *p->s++;
	size_t n = 0;

	while (*p->s && *p->s != q) {
		if (n + 1 == len)
			return fail(p, "%s", too_long);
		buf[n++] = *p->s++;
	}
	buf[n] = '\0';
	if (*p->s != q) {
		snprintf(p->msg, p->len, "%s without its closing %c", what, q);
		return -EINVAL;
	}
	p->s++;
	return 0;
}

static int string_value(struct parser *p, const char *expr,
			struct pea_pred *pr)
{
	char why[256];
	int err;

	if (*p->s != '"' && *p->s != '\'')
		return fail(p, "a \"string\" expected at '%s'", p->s);
	err = quoted(p, pr->str, sizeof(pr->str), "a string",
		     "a string longer than 63 bytes");
	if (err)
		return err;
	if (pr->cmp != PEA_TP_OP_EQ && pr->cmp != PEA_TP_OP_NE &&
	    pr->cmp != PEA_TP_OP_GLOB)
		return fail(p, "%s", "strings take == != and ~ only");
	if (pr->cmp == PEA_TP_OP_GLOB && strpbrk(pr->str, "[\\")) {
		snprintf(why, sizeof(why), "'%s': a ~ pattern takes '*' and '?' only, not '[' or '\\' (Linux's glob_match() classes and escapes)",
			 expr);
		return fail(p, "%s", why);
	}
	if (pr->cmp == PEA_TP_OP_GLOB && pr->str[0] == '!') {
		snprintf(why, sizeof(why), "'%s': a ~ pattern starting with '!' (Linux's negation): write !(%s ~ \"%s\")",
			 expr, expr, pr->str + 1);
		return fail(p, "%s", why);
	}
	return 0;
}

/*
 * Whether the number @word (in pr->value) is one @k's type holds, as the
 * kernel requires (module/pea_pred.c): a signed type's in its signed
 * range, an unsigned one's in its unsigned range (a negative number on an
 * unsigned value is refused, as Linux's filter parses an unsigned field's
 * operand with kstrtoull), a mask for & in either.
 */
static int number_fits(struct parser *p, const struct kfetch *k,
		       const struct pea_pred *pr, const char *word)
{
	static const char *const names[] = {
		"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
	};
	unsigned int t = k->f.type - PEA_FETCH_U8;
	unsigned int bits = 8U << (t % 4);
	__u64 v = pr->value;
	bool sgn = t >= 4, neg = word[0] == '-' && v, fits_u, fits_s;
	char what[160];

	if (t >= 8)
		return 0;
	if (bits == 64) {
		fits_u = !neg;
		fits_s = neg || !(v >> 63);
	} else {
		fits_u = !neg && !(v >> bits);
		fits_s = (__s64)(v << (64 - bits)) >> (64 - bits) == (__s64)v;
	}
	if (pr->cmp == PEA_TP_OP_AND ? fits_u || fits_s : sgn ? fits_s : fits_u)
		return 0;
	if (sgn)
		snprintf(what, sizeof(what), "'%s': %s is out of range for %s (%lld..%lld)",
			 k->expr, word, names[t],
			 bits == 64 ? (long long)INT64_MIN : -(1LL << (bits - 1)),
			 bits == 64 ? (long long)INT64_MAX : (1LL << (bits - 1)) - 1);
	else
		snprintf(what, sizeof(what), "'%s': %s is out of range for %s (0..%llu)",
			 k->expr, word, names[t],
			 bits == 64 ? (unsigned long long)UINT64_MAX :
				      (1ULL << bits) - 1);
	return fail(p, "%s", what);
}

static int number_value(struct parser *p, const struct kfetch *k,
			struct pea_pred *pr)
{
	char word[128], *end;
	size_t n = 0;
	unsigned int i;

	if (pr->cmp == PEA_TP_OP_GLOB)
		return fail(p, "'%s': ~ is for strings", k->expr);
	while (p->s[n] && p->s[n] != ' ' && p->s[n] != ')' &&
	       p->s[n] != '&' && p->s[n] != '|' && n + 1 < sizeof(word))
		n++;
	memcpy(word, p->s, n);
	word[n] = '\0';
	p->s += n;
	if (k->type.cls == KT_BOOL &&
	    (!strcmp(word, "true") || !strcmp(word, "false"))) {
		pr->value = word[0] == 't';
		return 0;
	}
	for (i = 0; k->type.cls == KT_ENUM && i < k->type.nvals; i++)
		if (!strcmp(k->type.vals[i].name, word)) {
			pr->value = (__u64)k->type.vals[i].val;
			return 0;
		}
	errno = 0;
	if (word[0] == '-')
		pr->value = (__u64)strtoll(word, &end, 0);
	else
		pr->value = strtoull(word, &end, 0);
	if (!n || *end || errno)
		return fail(p, "a number expected, not '%s'", word);
	return number_fits(p, k, pr, word);
}

/*
 * ctx.cgroup == "/sys/fs/cgroup/PATH": the directory's cgroup id, as
 * bpftrace's cgroupid("PATH") and perf's -G. The path may be long (a
 * container's): only its 8-byte id goes to the kernel.
 */
static int cgroup_value(struct parser *p, struct pea_pred *pr)
{
	char path[PATH_MAX], why[PATH_MAX + 128];
	__u64 id;
	int err;

	if (pr->cmp != PEA_TP_OP_EQ && pr->cmp != PEA_TP_OP_NE)
		return fail(p, "%s", "ctx.cgroup takes == and != with a path");
	err = quoted(p, path, sizeof(path), "a cgroup path",
		     "a cgroup path longer than PATH_MAX");
	if (err)
		return err;
	if (ctxfetch_cgroup_id(path, &id, why, sizeof(why)))
		return fail(p, "%s", why);
	pr->value = id;
	return 0;
}

/* The operand of ntop(X): a quoted "A.B.C.D" into @a. */
static int ipv4_operand(struct parser *p, const struct kfetch *k,
			struct in_addr *a)
{
	char addr[64], why[KFETCH_EXPR_MAX + 128];
	int err;

	if (*p->s != '"' && *p->s != '\'') {
		snprintf(why, sizeof(why),
			 "'%s': an address \"A.B.C.D\" expected at '%.32s'",
			 k->expr, p->s);
		return fail(p, "%s", why);
	}
	err = quoted(p, addr, sizeof(addr), "an address", "an address too long");
	if (err)
		return err;
	if (inet_pton(AF_INET, addr, a) != 1) {
		snprintf(why, sizeof(why), "'%s': '%s' is no IPv4 address",
			 k->expr, addr);
		return fail(p, "%s", why);
	}
	return 0;
}

/*
 * A comparison of ntohs(X), ntohl(X), bswap(X) (the number as printed)
 * or ntop(X) of 4 bytes ("A.B.C.D"): the kernel compares X's bytes as it
 * reads them, so the operand is turned into those bytes. == and != (and
 * & for the swaps) only: an order of the printed value is no order of
 * the bytes, and conv_order() takes <, <=, > and >=.
 */
static int conv_value(struct parser *p, const struct kfetch *k,
		      struct pea_pred *pr)
{
	unsigned int bits = kfetch_bytes(k) * 8;
	char why[KFETCH_EXPR_MAX + 128];
	struct in_addr a;
	int err;

	if (pr->cmp != PEA_TP_OP_EQ && pr->cmp != PEA_TP_OP_NE &&
	    (k->conv == KFETCH_NTOP || pr->cmp != PEA_TP_OP_AND)) {
		snprintf(why, sizeof(why),
			 "'%s': %s takes ==, !=, <, <=, > and >= only",
			 k->expr, k->conv == KFETCH_NTOP ? "an address" :
			 "a swapped value (and &)");
		return fail(p, "%s", why);
	}
	if (k->conv == KFETCH_BSWAP) {
		err = number_value(p, k, pr);
		if (err)
			return err;
		pr->value = kfetch_conv_int(k, pr->value);
		if (k->f.type >= PEA_FETCH_S8 && bits < 64)
			/* The kernel sign-extends the value it reads. */
			pr->value = (__u64)((__s64)(pr->value << (64 - bits)) >>
					    (64 - bits));
		return 0;
	}
	err = ipv4_operand(p, k, &a);
	if (err)
		return err;
	pr->value = 0;
	memcpy(&pr->value, &a, 4);	/* as the kernel reads the 4 bytes */
	return 0;
}

/* Whether fetch @i of the filter is a signed integer. */
static bool c_fetch_signed(struct parser *p, int i)
{
	__u8 t = p->c->fetches[i].f.type;

	return t >= PEA_FETCH_S8 && t <= PEA_FETCH_S64;
}

/*
 * The fetch of byte @i of converted fetch @k (its value's first byte
 * the printed value's most significant one): one the filter has, or a
 * new one, not printed. A U8, or an S8 for the first byte of a signed
 * swapped value (its sign). Its index, or -EINVAL.
 */
static int byte_fetch(struct parser *p, const struct kfetch *k,
		      unsigned int i)
{
	struct kfilter_ctx *c = p->c;
	struct pea_fetch f = k->f;
	struct kfetch *b;
	unsigned int j;

	f.type = !i && k->conv == KFETCH_BSWAP && k->f.type >= PEA_FETCH_S8 ?
		 PEA_FETCH_S8 : PEA_FETCH_U8;
	f.offset[f.nr_deref] += i;
	for (j = 0; j < c->nfetches; j++)
		if (!c->fetches[j].conv && !c->fetches[j].str &&
		    !c->fetches[j].join && !c->fetches[j].nelem &&
		    !memcmp(&c->fetches[j].f, &f, sizeof(f)))
			return j;
	if (c->nfetches == c->max)
		return fail(p, "'%s': more than 8 fetches with the filter's (an order of a converted value fetches each of its bytes)",
			    k->expr);
	b = &c->fetches[c->nfetches];
	memset(b, 0, sizeof(*b));
	snprintf(b->expr, sizeof(b->expr), "%.*s@%u",
		 (int)sizeof(b->expr) - 8, k->expr, i);
	b->f = f;
	b->type.cls = KT_INT;
	b->type.size = 1;
	b->type.sgn = f.type == PEA_FETCH_S8;
	snprintf(b->type.name, sizeof(b->type.name), "%s",
		 b->type.sgn ? "s8" : "u8");
	return c->nfetches++;
}

/*
 * An order (<, <=, >, >=) of ntohs(X), ntohl(X), bswap(X) or ntop(X) of 4
 * bytes: the printed value's order is the order of X's bytes in memory,
 * first byte most significant (network order), which the kernel compares
 * one byte fetch at a time, the first byte that differs deciding:
 *
 *	B0 < v0 || (B0 == v0 && (B1 < v1 || (B1 == v1 && ... Bn-1 OP vn-1)))
 *
 * (> for >, >=; the last byte takes OP itself). A value in a register has
 * no bytes to fetch apart: the kernel compares it whole, so it is
 * refused.
 */
static int conv_order(struct parser *p, const struct kfetch *k, __u8 cmp)
{
	unsigned int n = kfetch_bytes(k), i;
	__u8 strict = cmp == PEA_TP_OP_LT || cmp == PEA_PRED_OP_LE ?
		      PEA_TP_OP_LT : PEA_TP_OP_GT;
	char why[KFETCH_EXPR_MAX + 256];
	unsigned char v[8];
	int idx[8], err;
	struct pea_pred pr;

	if (!(k->f.flags & PEA_FETCH_F_LOAD) || n < 2 || n > 8) {
		snprintf(why, sizeof(why),
			 "'%s': the value is in a register, which the kernel compares whole: an order of its reversed bytes is none it can test (==, != and & only)",
			 k->expr);
		return fail(p, "%s", why);
	}
	memset(&pr, 0, sizeof(pr));
	pr.cmp = cmp;
	if (k->conv == KFETCH_BSWAP) {
		err = number_value(p, k, &pr);
		if (err)
			return err;
		for (i = 0; i < n; i++)
			v[i] = (unsigned char)(pr.value >> (8 * (n - 1 - i)));
	} else {
		struct in_addr a;

		err = ipv4_operand(p, k, &a);
		if (err)
			return err;
		memcpy(v, &a, 4);	/* network order: first byte first */
	}
	for (i = 0; i < n; i++) {
		idx[i] = byte_fetch(p, k, i);
		if (idx[i] < 0)
			return idx[i];
	}
	for (i = 0; i < n; i++) {
		bool sgn = c_fetch_signed(p, idx[i]);
		__u64 val = sgn ? (__u64)(__s64)(signed char)v[i] : v[i];

		memset(&pr, 0, sizeof(pr));
		pr.op = PEA_PRED_CMP;
		pr.fetch = idx[i];
		pr.value = val;
		pr.cmp = i == n - 1 ? cmp : strict;
		err = emit(p, pr);
		if (!err && i < n - 1) {
			pr.cmp = PEA_TP_OP_EQ;
			err = emit(p, pr);
		}
		if (err)
			return err;
	}
	for (i = 0; i < n - 1; i++) {
		err = emit_op(p, PEA_PRED_AND);
		if (!err)
			err = emit_op(p, PEA_PRED_OR);
		if (err)
			return err;
	}
	return 0;
}

static int parse_or(struct parser *p);

static int parse_unary(struct parser *p)
{
	struct pea_pred pr;
	char expr[KFETCH_EXPR_MAX];
	unsigned int before;
	size_t n;
	int idx, err;

	skip_ws(p);
	if ((*p->s == '!' && p->s[1] != '=') || *p->s == '(') {
		/* The parser recurses: bounded, as tpfilter.c's. */
		if (++p->nest > 64)
			return fail(p, "%s", "'!' and parentheses nested deeper than 64");
	}
	if (*p->s == '!' && p->s[1] != '=') {
		p->s++;
		err = parse_unary(p);
		p->nest--;
		return err ? err : emit_op(p, PEA_PRED_NOT);
	}
	if (*p->s == '(') {
		p->s++;
		err = parse_or(p);
		if (err)
			return err;
		skip_ws(p);
		if (*p->s != ')')
			return fail(p, "a ')' expected at '%s'", p->s);
		p->s++;
		p->nest--;
		return 0;
	}
	n = expr_len(p->s);
	if (!n || n >= sizeof(expr))
		return fail(p, "a fetch expression expected at '%s'", p->s);
	memcpy(expr, p->s, n);
	expr[n] = '\0';
	p->s += n;
	before = p->c->nfetches;
	idx = fetch_of(p, expr);
	if (idx < 0)
		return idx;
	memset(&pr, 0, sizeof(pr));
	pr.op = PEA_PRED_CMP;
	pr.fetch = idx;
	err = parse_op(p, &pr.cmp);
	if (err)
		return err;
	skip_ws(p);
	if (p->c->fetches[idx].conv && conv_ok(&p->c->fetches[idx]) &&
	    (pr.cmp == PEA_TP_OP_LT || pr.cmp == PEA_TP_OP_GT ||
	     pr.cmp == PEA_PRED_OP_LE || pr.cmp == PEA_PRED_OP_GE)) {
		struct kfetch k = p->c->fetches[idx];

		/* Its bytes are fetched instead: not it, unless printed. */
		if ((unsigned int)idx < before)
			return conv_order(p, &k, pr.cmp);
		p->c->nfetches--;
		err = conv_order(p, &k, pr.cmp);
		kfetch_release(&k);
		return err;
	}
	if (p->c->fetches[idx].conv)
		err = conv_value(p, &p->c->fetches[idx], &pr);
	else if (p->c->fetches[idx].str)
		err = string_value(p, expr, &pr);
	else if (ctxfetch_is_cgroup(&p->c->fetches[idx].f) &&
		 (*p->s == '"' || *p->s == '\''))
		err = cgroup_value(p, &pr);
	else if (p->c->fetches[idx].f.type == PEA_FETCH_ARRAY)
		err = fail(p, "'%s': an array takes no comparison", expr);
	else
		err = number_value(p, &p->c->fetches[idx], &pr);
	return err ? err : emit(p, pr);
}

static int parse_and(struct parser *p)
{
	int err = parse_unary(p);

	while (!err) {
		skip_ws(p);
		if (strncmp(p->s, "&&", 2))
			break;
		p->s += 2;
		err = parse_unary(p);
		if (!err)
			err = emit_op(p, PEA_PRED_AND);
	}
	return err;
}

static int parse_or(struct parser *p)
{
	int err = parse_and(p);

	while (!err) {
		skip_ws(p);
		if (strncmp(p->s, "||", 2))
			break;
		p->s += 2;
		err = parse_and(p);
		if (!err)
			err = emit_op(p, PEA_PRED_OR);
	}
	return err;
}

int kfilter_compile(struct kfilter_ctx *c, const char *text, char *msg,
		    size_t len)
{
	struct parser p = { .c = c, .s = text, .msg = msg, .len = len };
	int err;

	c->npreds = 0;
	err = parse_or(&p);
	if (err)
		return err;
	skip_ws(&p);
	if (*p.s)
		return fail(&p, "unexpected '%s'", p.s);
	return 0;
}
