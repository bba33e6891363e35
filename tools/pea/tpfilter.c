// SPDX-License-Identifier: GPL-2.0
/*
 * pea: --filter on a tracepoint, the grammar of the event's tracefs filter
 * (kernel/trace/trace_events_filter.c), compiled against its format into
 * terms (struct pea_tp_pred) and a postfix program over them (struct
 * pea_pred) that the kernel checks and evaluates per hit:
 *
 *	OR    := AND { || AND }
 *	AND   := UNARY { && UNARY }
 *	UNARY := ! UNARY | ( OR ) | FIELD OP VALUE | ctx.NAME OP VALUE
 *	OP    := == != < <= > >= & ~
 *
 * && binds tighter than ||, and ! negates what follows it, a whole
 * parenthesised group included, as Linux's predicate_parse(). VALUE is a
 * number (decimal, 0x hex, 0 octal, negative) the field holds, or a
 * string ("quoted" or 'quoted', raw, as Linux's parse_pred(); or a bare
 * word) for a char array or a __data_loc string; on a string == and !=
 * are exact and ~ is a glob ('*' any run, '?' one byte), as Linux's
 * filter_build_regex() has them. What else Linux's ~ takes ([classes],
 * \ escapes, a leading ! negation) is refused, not matched otherwise. A
 * comparison used twice is one term. The bounds are the kernel's:
 * PEA_TP_TERM_MAX distinct comparisons, PEA_TP_PROG_MAX instructions
 * (comparisons, operators and negations, a double negation dropped) and
 * PEA_PRED_DEPTH_MAX values pending at once, each a clear error here.
 *
 * ctx.NAME is a value of the task that hit the tracepoint, a context term
 * (PEA_TP_FIELD_CTX) the kernel reads as a probe's ctx.NAME fetch
 * (ctxfetch.c): ctx.comm a string, ctx.tid, ctx.pid, ctx.uid, ctx.gid
 * and ctx.cpu unsigned 4-byte numbers, ctx.cgroup an 8-byte id or, with
 * == and !=, a cgroup v2 directory's "PATH" (its id, as bpftrace's
 * cgroupid() and perf's -G). A field of the event named like one (comm,
 * pid, cpu) is the field; ctx.NAME is always the task's. Linux's filter
 * also takes comm, COMM, cpu, CPU and common_cpu where the event has no
 * such field (trace_define_generic_fields()): those are ctx.comm and
 * ctx.cpu here too.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctxfetch.h"
#include "tpfilter.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* '!' and parentheses nested deeper than this are refused (the parser recurses). */
#define TPF_NEST_MAX	64

struct parser {
	const struct tp_format *fmt;
	struct tp_filter *f;
	const char *s;
	char *msg;
	size_t len;
	unsigned int depth, nest;
};

static int fail(struct parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->msg, p->len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void skip_ws(struct parser *p)
{
	while (isspace((unsigned char)*p->s))
		p->s++;
}

static int emit(struct parser *p, __u8 op, unsigned int term)
{
	struct tp_filter *f = p->f;
	struct pea_pred *pr;

	/* !!x is x: the last instruction is the operand's last. */
	if (op == PEA_PRED_NOT && f->nprog &&
	    f->prog[f->nprog - 1].op == PEA_PRED_NOT) {
		f->nprog--;
		return 0;
	}
	if (f->nprog == PEA_TP_PROG_MAX)
		return fail(p, "more than %d comparisons, operators and negations (the kernel's bound)",
			    PEA_TP_PROG_MAX);
	if (op == PEA_PRED_CMP && ++p->depth > PEA_PRED_DEPTH_MAX)
		return fail(p, "more than %d comparisons pending at once (nest fewer parentheses to the right)",
			    PEA_PRED_DEPTH_MAX);
	if (op == PEA_PRED_AND || op == PEA_PRED_OR)
		p->depth--;
	pr = &f->prog[f->nprog++];
	memset(pr, 0, sizeof(*pr));
	pr->op = op;
	if (op == PEA_PRED_CMP)
		pr->fetch = term;
	return 0;
}

/* The index of term @t, added if new. */
static int term_of(struct parser *p, const struct pea_tp_pred *t)
{
	struct tp_filter *f = p->f;
	unsigned int i;

	for (i = 0; i < f->nterms; i++)
		if (!memcmp(&f->terms[i], t, sizeof(*t)))
			return i;
	if (f->nterms == PEA_TP_TERM_MAX)
		return fail(p, "more than %d different comparisons (the kernel's bound)",
			    PEA_TP_TERM_MAX);
	f->terms[f->nterms] = *t;
	return f->nterms++;
}

static int parse_op(struct parser *p, const char *name, __u8 *op)
{
	static const struct {
		const char *text;
		__u8 op;
	} ops[] = {
		{ "==", PEA_TP_OP_EQ }, { "!=", PEA_TP_OP_NE },
		{ "<=", PEA_PRED_OP_LE }, { ">=", PEA_PRED_OP_GE },
		{ "<", PEA_TP_OP_LT }, { ">", PEA_TP_OP_GT },
		{ "&", PEA_TP_OP_AND }, { "~", PEA_TP_OP_GLOB },
	};
	size_t i;

	skip_ws(p);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(p->s, ops[i].text, strlen(ops[i].text)) &&
		    strncmp(p->s, "&&", 2)) {
			*op = ops[i].op;
			p->s += strlen(ops[i].text);
			return 0;
		}
	return fail(p, "expected ==, !=, <, <=, >, >=, & or ~ after '%s' at '%s'",
		    name, p->s);
}

/*
 * The value after the operator, in @val: "quoted" or 'quoted', the text
 * between the quotes taken as it is (no escapes), as Linux's parse_pred()
 * takes it; or a bare word.
 */
static int parse_value(struct parser *p, const char *name, char *val,
		       bool *quoted)
{
	size_t n = 0;
	char q;

	skip_ws(p);
	q = *p->s;
	*quoted = q == '"' || q == '\'';
	if (*quoted) {
		for (p->s++; *p->s && *p->s != q; p->s++) {
			if (n >= PEA_TP_STR_MAX - 1)
				return fail(p, "string longer than %d bytes",
					    PEA_TP_STR_MAX - 1);
			val[n++] = *p->s;
		}
		if (*p->s != q)
			return fail(p, "unterminated string");
		p->s++;
	} else {
		while (*p->s && !isspace((unsigned char)*p->s) &&
		       *p->s != '&' && *p->s != '|' && *p->s != ')' &&
		       *p->s != '(') {
			if (n >= PEA_TP_STR_MAX - 1)
				return fail(p, "value longer than %d bytes",
					    PEA_TP_STR_MAX - 1);
			val[n++] = *p->s++;
		}
		if (!n)
			return fail(p, "'%s': a value is missing", name);
	}
	val[n] = 0;
	return 0;
}

/*
 * Whether @v is a number a field of @size bytes holds, as the kernel
 * checks a term's operand (pea_pred_fits(), module/pea_pred.c): signed
 * range for a signed comparison, unsigned for an unsigned one, either
 * for a & mask.
 */
static bool fits(__u64 v, unsigned int size, bool sgn, __u8 op)
{
	unsigned int bits = 8 * size;
	bool fu, fs;

	if (bits == 64)
		return true;
	fu = !(v >> bits);
	fs = (__s64)(v << (64 - bits)) >> (64 - bits) == (__s64)v;
	if (op == PEA_TP_OP_AND)
		return fu || fs;
	return sgn ? fs : fu;
}

static int number_term(struct parser *p, const struct tp_field *fl,
		       __u8 op, const char *val, bool quoted,
		       struct pea_tp_pred *t)
{
	bool neg = val[0] == '-';
	char *end;

	if (op == PEA_TP_OP_GLOB || quoted)
		return fail(p, "'%s' is a number: use ==, !=, <, <=, >, >= or &",
			    fl->name);
	errno = 0;
	t->value = neg ? (__u64)strtoll(val, &end, 0) : strtoull(val, &end, 0);
	if (*end || errno)
		return fail(p, "'%s' is not a number", val);
	t->kind = fl->is_signed || neg ? PEA_TP_FIELD_SINT : PEA_TP_FIELD_UINT;
	if (!fits(t->value, fl->size, t->kind == PEA_TP_FIELD_SINT, op)) {
		if (t->kind == PEA_TP_FIELD_SINT)
			return fail(p, "'%s': %s is out of range for a %u-byte signed field (%lld..%lld)",
				    fl->name, val, fl->size,
				    -(1LL << (8 * fl->size - 1)),
				    (1LL << (8 * fl->size - 1)) - 1);
		return fail(p, "'%s': %s is out of range for a %u-byte unsigned field (0..%llu)",
			    fl->name, val, fl->size,
			    (1ULL << (8 * fl->size)) - 1);
	}
	return 0;
}

/* A string operand @val of operator @op on @name, into @t->str. */
static int string_term(struct parser *p, const char *name, __u8 op,
		       const char *val, struct pea_tp_pred *t)
{
	if (op != PEA_TP_OP_EQ && op != PEA_TP_OP_NE && op != PEA_TP_OP_GLOB)
		return fail(p, "'%s' is a string: use ==, != or ~", name);
	/*
	 * Linux's ~ (filter_parse_regex(), glob_match()) also has [classes],
	 * \\ escapes and a leading ! that negates; the kernel's glob has '*'
	 * and '?' only: refused, rather than a pattern that silently matches
	 * otherwise.
	 */
	if (op == PEA_TP_OP_GLOB && strpbrk(val, "[\\"))
		return fail(p, "'%s': a ~ pattern takes '*' and '?' only, not '[' or '\\' (Linux's glob_match() classes and escapes)",
			    name);
	if (op == PEA_TP_OP_GLOB && val[0] == '!')
		return fail(p, "'%s': a ~ pattern starting with '!' (Linux's negation): write !(%s ~ \"%s\")",
			    name, name, val + 1);
	memcpy(t->str, val, strlen(val) + 1);
	return 0;
}

/*
 * ctx.cgroup == "PATH": the quoted path (up to PATH_MAX, only its id goes
 * to the kernel) as the id of the cgroup v2 directory it names.
 */
static int cgroup_path(struct parser *p, __u8 op, struct pea_tp_pred *t)
{
	char path[PATH_MAX], why[PATH_MAX + 128];
	char q = *p->s;
	size_t n = 0;
	__u64 id;

	if (op != PEA_TP_OP_EQ && op != PEA_TP_OP_NE)
		return fail(p, "%s", "ctx.cgroup takes == and != with a path");
	for (p->s++; *p->s && *p->s != q; p->s++) {
		if (n + 1 == sizeof(path))
			return fail(p, "%s", "a cgroup path longer than PATH_MAX");
		path[n++] = *p->s;
	}
	if (*p->s != q)
		return fail(p, "unterminated string");
	p->s++;
	path[n] = 0;
	if (ctxfetch_cgroup_id(path, &id, why, sizeof(why)))
		return fail(p, "%s", why);
	t->value = id;
	return 0;
}

/*
 * A context term: ctx.NAME (@name as written) OP VALUE, the task's value
 * the kernel reads (PEA_TP_FIELD_CTX, @offset its PEA_FETCH_CTX_*).
 */
static int ctx_term(struct parser *p, const char *name, const char *key,
		    struct pea_tp_pred *t)
{
	char val[PEA_TP_STR_MAX], why[256];
	unsigned int size;
	struct kfetch k;
	bool quoted;
	char *end;
	__u8 op;
	int err;

	memset(&k, 0, sizeof(k));
	err = ctxfetch_parse(key, &k, why, sizeof(why));
	if (err <= 0)
		return fail(p, "%s", why);
	t->kind = PEA_TP_FIELD_CTX;
	t->offset = k.f.arg;
	err = parse_op(p, name, &op);
	if (err)
		return err;
	t->op = op;
	skip_ws(p);
	if (k.f.arg == PEA_FETCH_CTX_CGROUP && (*p->s == '"' || *p->s == '\''))
		return cgroup_path(p, op, t);
	err = parse_value(p, name, val, &quoted);
	if (err)
		return err;
	if (k.str)
		return string_term(p, name, op, val, t);
	if (op == PEA_TP_OP_GLOB || quoted)
		return fail(p, "'%s' is a number: use ==, !=, <, <=, >, >= or &",
			    name);
	errno = 0;
	t->value = val[0] == '-' ? (__u64)strtoll(val, &end, 0) :
				   strtoull(val, &end, 0);
	if (*end || errno)
		return fail(p, "'%s' is not a number", val);
	size = k.f.type == PEA_FETCH_U64 ? 8 : 4;
	if (!fits(t->value, size, false, op))
		return fail(p, "'%s': %s is out of range (0..%llu)", name, val,
			    (1ULL << (8 * size)) - 1);
	return 0;
}

static int parse_pred(struct parser *p)
{
	char name[TP_NAME_LEN], val[PEA_TP_STR_MAX];
	const char *start = p->s;
	const struct tp_field *fl;
	struct pea_tp_pred t;
	bool quoted;
	size_t n;
	__u8 op = 0;
	int err, idx;

	if (!strncmp(p->s, "ctx.", 4))
		p->s += 4;
	while (isalnum((unsigned char)*p->s) || *p->s == '_')
		p->s++;
	n = p->s - start;
	if (!n || n >= sizeof(name) || (n == 4 && !strncmp(start, "ctx.", 4)))
		return fail(p, "expected a field name, '!' or '(' at '%s'",
			    start);
	memcpy(name, start, n);
	name[n] = 0;
	memset(&t, 0, sizeof(t));
	fl = strncmp(name, "ctx.", 4) ? tp_field_find(p->fmt, name) : NULL;
	if (!fl && !strncmp(name, "ctx.", 4))
		err = ctx_term(p, name, name, &t);
	else if (!fl && (!strcmp(name, "comm") || !strcmp(name, "COMM")))
		err = ctx_term(p, name, "ctx.comm", &t);
	else if (!fl && (!strcmp(name, "cpu") || !strcmp(name, "CPU") ||
			 !strcmp(name, "common_cpu")))
		err = ctx_term(p, name, "ctx.cpu", &t);
	else if (!fl)
		return fail(p, "%s has no field '%s'", p->fmt->name, name);
	if (!fl) {
		if (err)
			return err;
		idx = term_of(p, &t);
		return idx < 0 ? idx : emit(p, PEA_PRED_CMP, idx);
	}
	err = parse_op(p, name, &op);
	if (!err)
		err = parse_value(p, name, val, &quoted);
	if (err)
		return err;
	t.offset = fl->offset;
	t.size = fl->size;
	if (fl->kind == TPF_STR || fl->kind == TPF_LOC_STR) {
		t.kind = fl->kind == TPF_STR ? PEA_TP_FIELD_STR :
			 fl->rel ? PEA_TP_FIELD_REL_LOC : PEA_TP_FIELD_DATA_LOC;
		err = string_term(p, name, op, val, &t);
		if (err)
			return err;
	} else if (fl->kind == TPF_INT) {
		err = number_term(p, fl, op, val, quoted, &t);
		if (err)
			return err;
	} else {
		return fail(p, "'%s' cannot be filtered (an array or a struct)",
			    name);
	}
	t.op = op;
	idx = term_of(p, &t);
	return idx < 0 ? idx : emit(p, PEA_PRED_CMP, idx);
}

static int parse_or(struct parser *p);

static int parse_unary(struct parser *p)
{
	int err;

	skip_ws(p);
	if (*p->s == '!' && p->s[1] != '=') {
		if (++p->nest > TPF_NEST_MAX)
			return fail(p, "'!' and parentheses nested deeper than %d",
				    TPF_NEST_MAX);
		p->s++;
		err = parse_unary(p);
		p->nest--;
		return err ? err : emit(p, PEA_PRED_NOT, 0);
	}
	if (*p->s == '(') {
		if (++p->nest > TPF_NEST_MAX)
			return fail(p, "'!' and parentheses nested deeper than %d",
				    TPF_NEST_MAX);
		p->s++;
		err = parse_or(p);
		if (err)
			return err;
		skip_ws(p);
		if (*p->s != ')')
			return fail(p, "expected ')' at '%s'", p->s);
		p->s++;
		p->nest--;
		return 0;
	}
	return parse_pred(p);
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
			err = emit(p, PEA_PRED_AND, 0);
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
			err = emit(p, PEA_PRED_OR, 0);
	}
	return err;
}

int tp_filter_compile(const struct tp_format *fmt, const char *expr,
		      struct tp_filter *f, char *msg, size_t msg_len)
{
	struct parser p = {
		.fmt = fmt, .f = f, .s = expr, .msg = msg, .len = msg_len,
	};
	int err;

	memset(f, 0, sizeof(*f));
	err = parse_or(&p);
	if (err)
		return err;
	skip_ws(&p);
	if (*p.s == ')')
		return fail(&p, "a ')' without its '(' at '%s'", p.s);
	if (*p.s)
		return fail(&p, "expected &&, || or the end at '%s'", p.s);
	return 0;
}

bool tp_filter_has_ctx(const struct tp_filter *f, bool cred)
{
	unsigned int i;

	for (i = 0; i < f->nterms; i++)
		if (f->terms[i].kind == PEA_TP_FIELD_CTX &&
		    (!cred || f->terms[i].offset == PEA_FETCH_CTX_UID ||
		     f->terms[i].offset == PEA_FETCH_CTX_GID))
			return true;
	return false;
}
