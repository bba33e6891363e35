// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the names a trace event's print fmt gives its fields' values. The
 * "print fmt:" line of a tracefs format is the TP_printk() of the event
 * after the preprocessor and the kernel's enum substitution:
 *
 *	print fmt: "... flags=%s type=%s", ..., __print_flags(REC->flags, "|",
 *		{ 1, "FL_POSIX" }, { 2, "FL_FLOCK" }, ...),
 *		__print_symbolic(REC->type, { 0, "F_RDLCK" }, ...)
 *
 * A call on REC->FIELD (or REC->FIELD & MASK) whose values are constant
 * expressions gives the field a table (struct tp_field.sym), printed as
 * the kernel's trace_print_flags_seq() and trace_print_symbols_seq()
 * print them (tpformat.h: tp_format_syms(), tp_sym_format();
 * docs/tracepoints.md).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tpformat.h"

struct sym_parse {
	const char *p, *end;
	bool bad;
};

static void sp_ws(struct sym_parse *s)
{
	while (s->p < s->end && isspace((unsigned char)*s->p))
		s->p++;
}

static bool sp_is(struct sym_parse *s, char c)
{
	sp_ws(s);
	if (s->p < s->end && *s->p == c) {
		s->p++;
		return true;
	}
	return false;
}

static bool id_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static __u64 sp_or(struct sym_parse *s, int depth);

/*
 * A cast, "(unsigned long)", "( gfp_t)": the words and stars up to ')',
 * none starting with a digit and none with a capital (those are the
 * enum and macro names the kernel left: "(FOO) - 1" is no cast). Skipped;
 * whether it was one.
 */
static bool sp_cast(struct sym_parse *s)
{
	const char *q = s->p;
	bool word = false;

	while (q < s->end && (id_char(*q) || *q == '*' || isspace((unsigned char)*q))) {
		if ((id_char(*q) && !word && isdigit((unsigned char)*q)) ||
		    isupper((unsigned char)*q))
			return false;
		word = id_char(*q);
		q++;
	}
	if (q == s->p || q >= s->end || *q != ')')
		return false;
	s->p = q + 1;
	return true;
}

/* A number, a parenthesized expression, a cast, -, ~ or ! of one. */
static __u64 sp_unary(struct sym_parse *s, int depth)
{
	__u64 v;
	char *e;

	sp_ws(s);
	if (depth > 32 || s->p >= s->end) {
		s->bad = true;
		return 0;
	}
	if (sp_is(s, '-'))
		return -sp_unary(s, depth + 1);
	if (sp_is(s, '~'))
		return ~sp_unary(s, depth + 1);
	if (sp_is(s, '!'))
		return !sp_unary(s, depth + 1);
	if (sp_is(s, '(')) {
		if (sp_cast(s))
			return sp_unary(s, depth + 1);
		v = sp_or(s, depth + 1);
		if (!sp_is(s, ')'))
			s->bad = true;
		return v;
	}
	if (!isdigit((unsigned char)*s->p)) {
		s->bad = true;	/* a name the kernel did not resolve */
		return 0;
	}
	errno = 0;
	v = strtoull(s->p, &e, 0);
	if (errno || e > s->end) {
		s->bad = true;
		return 0;
	}
	s->p = e;
	while (s->p < s->end && (*s->p == 'u' || *s->p == 'U' ||
				 *s->p == 'l' || *s->p == 'L'))
		s->p++;
	return v;
}

static __u64 sp_mul(struct sym_parse *s, int depth)
{
	__u64 v = sp_unary(s, depth), r;

	for (;;) {
		sp_ws(s);
		if (sp_is(s, '*')) {
			v *= sp_unary(s, depth);
		} else if (s->p < s->end && (*s->p == '/' || *s->p == '%')) {
			char op = *s->p++;

			r = sp_unary(s, depth);
			if (!r) {
				s->bad = true;
				return 0;
			}
			v = op == '/' ? v / r : v % r;
		} else {
			return v;
		}
	}
}

static __u64 sp_add(struct sym_parse *s, int depth)
{
	__u64 v = sp_mul(s, depth);

	for (;;) {
		if (sp_is(s, '+'))
			v += sp_mul(s, depth);
		else if (sp_is(s, '-'))
			v -= sp_mul(s, depth);
		else
			return v;
	}
}

static __u64 sp_shift(struct sym_parse *s, int depth)
{
	__u64 v = sp_add(s, depth), n;
	char op;

	for (;;) {
		sp_ws(s);
		if (s->end - s->p < 2 || (s->p[0] != '<' && s->p[0] != '>') ||
		    s->p[1] != s->p[0])
			return v;
		op = s->p[0];
		s->p += 2;
		n = sp_add(s, depth);
		if (n > 63) {
			s->bad = true;
			return 0;
		}
		v = op == '<' ? v << n : v >> n;
	}
}

/* & (not &&), then ^, then | (not ||). */
static __u64 sp_and(struct sym_parse *s, int depth)
{
	__u64 v = sp_shift(s, depth);

	for (;;) {
		sp_ws(s);
		if (s->p + 1 < s->end && s->p[0] == '&' && s->p[1] != '&') {
			s->p++;
			v &= sp_shift(s, depth);
		} else {
			return v;
		}
	}
}

static __u64 sp_xor(struct sym_parse *s, int depth)
{
	__u64 v = sp_and(s, depth);

	while (sp_is(s, '^'))
		v ^= sp_and(s, depth);
	return v;
}

static __u64 sp_or(struct sym_parse *s, int depth)
{
	__u64 v = sp_xor(s, depth);

	for (;;) {
		sp_ws(s);
		if (s->p + 1 < s->end && s->p[0] == '|' && s->p[1] != '|') {
			s->p++;
			v |= sp_xor(s, depth);
		} else {
			return v;
		}
	}
}

/* A C string literal at s->p into @out (@len bytes); false if none. */
static bool sp_string(struct sym_parse *s, char *out, size_t len)
{
	size_t n = 0;

	sp_ws(s);
	if (s->p >= s->end || *s->p != '"')
		return false;
	for (s->p++; s->p < s->end && *s->p != '"'; s->p++) {
		char c = *s->p;

		if (c == '\\' && s->p + 1 < s->end)
			c = *++s->p;
		if (n + 1 >= len)
			return false;
		out[n++] = c;
	}
	if (s->p >= s->end)
		return false;
	s->p++;
	out[n] = 0;
	return true;
}

/* The end of the argument at s->p: the ',' or ')' outside parens and strings. */
static const char *arg_end(const char *p, const char *end)
{
	int depth = 0;

	for (; p < end; p++) {
		if (*p == '"') {
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\')
					p++;
		} else if (*p == '(' || *p == '{') {
			depth++;
		} else if (*p == ')' || *p == '}') {
			if (!depth)
				return p;
			depth--;
		} else if (*p == ',' && !depth) {
			return p;
		}
	}
	return end;
}

/*
 * The first argument, [p, e): "REC->NAME", maybe in parentheses, maybe
 * "& MASK" after it: its field, or NULL.
 */
static struct tp_field *sym_field(struct tp_format *fmt, const char *p,
				  const char *e, __u64 *mask)
{
	struct sym_parse s = { .p = p, .end = e };
	char name[TP_NAME_LEN];
	size_t n = 0;
	int open = 0;
	int i;

	while (sp_is(&s, '('))
		open++;
	sp_ws(&s);
	if (s.end - s.p < 5 || strncmp(s.p, "REC->", 5))
		return NULL;
	for (s.p += 5; s.p < s.end && id_char(*s.p) && n + 1 < sizeof(name);
	     s.p++)
		name[n++] = *s.p;
	name[n] = 0;
	*mask = ~0ULL;
	if (sp_is(&s, '&')) {
		*mask = sp_shift(&s, 0);
		if (s.bad)
			return NULL;
	}
	while (open-- > 0)
		if (!sp_is(&s, ')'))
			return NULL;
	sp_ws(&s);
	if (s.p != s.end)
		return NULL;
	for (i = 0; i < fmt->nfields; i++)
		if (!strcmp(fmt->fields[i].name, name))
			return fmt->fields[i].kind == TPF_INT ?
			       &fmt->fields[i] : NULL;
	return NULL;
}

/* [p, e) without spaces and parentheses into @out; false if too long. */
static bool bare(const char *p, const char *e, char *out, size_t len)
{
	size_t n = 0;

	for (; p < e; p++) {
		if (isspace((unsigned char)*p) || *p == '(' || *p == ')')
			continue;
		if (n + 1 >= len)
			return false;
		out[n++] = *p;
	}
	out[n] = 0;
	return true;
}

/*
 * Whether the call at @call (in the print fmt's arguments from @begin) is
 * the true arm of "COND ? CALL" where COND is its first argument [a, e).
 */
static bool sym_cond(const char *begin, const char *call, const char *a,
		     const char *e)
{
	static char c1[1024], c2[1024];
	const char *q = call, *c;
	int depth = 0;

	while (q > begin && isspace((unsigned char)q[-1]))
		q--;
	if (q == begin || q[-1] != '?')
		return false;
	q--;
	/* COND: back to the ',' or '(' that opens it. */
	for (c = q; c > begin; c--) {
		char ch = c[-1];

		if (ch == '"')
			return false;
		if (ch == ')')
			depth++;
		else if (ch == '(' && !depth--)
			break;
		else if (ch == ',' && !depth)
			break;
	}
	return bare(c, q, c1, sizeof(c1)) && bare(a, e, c2, sizeof(c2)) &&
	       *c1 && !strcmp(c1, c2);
}

/*
 * One call's table at @p (after "__print_flags(" or "__print_symbolic("
 * at @call, in the arguments from @begin) into @fmt: 1 if read, 0 if not.
 */
static int sym_call(struct tp_format *fmt, enum tp_sym_kind kind,
		    const char *begin, const char *call, const char *p,
		    const char *end)
{
	const char *e = arg_end(p, end);
	struct sym_parse s = { .end = end };
	unsigned int first = fmt->nsyms, text = fmt->sym_len;
	char delim[8] = "", name[256];
	struct tp_field *fl;
	__u64 mask;

	if (e >= end || *e != ',')
		return 0;
	fl = sym_field(fmt, p, e, &mask);
	if (!fl || fl->sym)
		return 0;
	s.p = e + 1;
	if (kind == TP_SYM_FLAGS &&
	    (!sp_string(&s, delim, sizeof(delim)) || !sp_is(&s, ',')))
		return 0;
	do {
		struct tp_sym *y;
		size_t n;

		if (!sp_is(&s, '{'))
			break;
		e = arg_end(s.p, end);
		if (e >= end || *e != ',')
			goto drop;
		s.end = e;
		if (fmt->nsyms == TP_SYM_MAX)
			goto drop;
		y = &fmt->syms[fmt->nsyms];
		y->val = sp_or(&s, 0);
		sp_ws(&s);
		if (s.bad || s.p != e)
			goto drop;
		s.end = end;
		s.p = e + 1;
		if (!sp_string(&s, name, sizeof(name)) || !sp_is(&s, '}'))
			goto drop;
		n = strlen(name) + 1;
		if (fmt->sym_len + n > sizeof(fmt->sym_text))
			goto drop;
		memcpy(fmt->sym_text + fmt->sym_len, name, n);
		y->name = fmt->sym_len;
		fmt->sym_len += n;
		fmt->nsyms++;
	} while (sp_is(&s, ','));
	if (!sp_is(&s, ')') || fmt->nsyms == first)
		goto drop;
	fl->sym_zero[0] = 0;
	if (sym_cond(begin, call, p, arg_end(p, end)) && sp_is(&s, ':') &&
	    !sp_string(&s, fl->sym_zero, sizeof(fl->sym_zero)))
		fl->sym_zero[0] = 0;
	fl->sym = kind;
	fl->sym_first = first;
	fl->sym_n = fmt->nsyms - first;
	fl->sym_mask = mask;
	memcpy(fl->sym_delim, delim, sizeof(delim));
	return 1;
drop:
	fmt->nsyms = first;
	fmt->sym_len = text;
	return 0;
}

int tp_format_syms(struct tp_format *fmt, const char *pfmt, size_t len)
{
	static const struct {
		const char *call;
		enum tp_sym_kind kind;
	} calls[] = {
		{ "__print_flags(", TP_SYM_FLAGS },
		{ "__print_flags_u64(", TP_SYM_FLAGS },
		{ "__print_symbolic(", TP_SYM_SYMBOLIC },
		{ "__print_symbolic_u64(", TP_SYM_SYMBOLIC },
	};
	struct sym_parse s = { .p = pfmt, .end = pfmt + len };
	const char *begin;
	int n = 0;
	size_t i;

	/* The format string first: its text is not code. */
	sp_ws(&s);
	if (s.p < s.end && *s.p == '"') {
		const char *q;

		for (q = s.p + 1; q < s.end && *q != '"'; q++)
			if (*q == '\\')
				q++;
		s.p = q < s.end ? q + 1 : s.end;
	}
	begin = s.p;
	while (s.p < s.end) {
		if (*s.p == '"') {
			for (s.p++; s.p < s.end && *s.p != '"'; s.p++)
				if (*s.p == '\\')
					s.p++;
			s.p++;
			continue;
		}
		for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
			size_t cl = strlen(calls[i].call);

			if ((size_t)(s.end - s.p) > cl &&
			    !strncmp(s.p, calls[i].call, cl) &&
			    (s.p == pfmt || !id_char(s.p[-1]))) {
				n += sym_call(fmt, calls[i].kind, begin, s.p,
					      s.p + cl, s.end);
				s.p += cl - 1;
				break;
			}
		}
		s.p++;
	}
	return n;
}

const char *tp_sym_format(const struct tp_format *fmt,
			  const struct tp_field *fl, __u64 v, char *buf,
			  size_t len)
{
	const struct tp_sym *y = fmt->syms + fl->sym_first;
	size_t n = 0;
	unsigned int i;

	if (!fl->sym || !len)
		return NULL;
	v &= fl->sym_mask;
	buf[0] = 0;
	if (!v && fl->sym_zero[0]) {
		snprintf(buf, len, "%s", fl->sym_zero);
		return buf;
	}
	if (fl->sym == TP_SYM_SYMBOLIC) {
		for (i = 0; i < fl->sym_n; i++)
			if (y[i].val == v) {
				snprintf(buf, len, "%s",
					 fmt->sym_text + y[i].name);
				return buf;
			}
		return NULL;
	}
	/* As the kernel's trace_print_flags_seq(). */
	for (i = 0; i < fl->sym_n && v; i++) {
		if ((v & y[i].val) != y[i].val)
			continue;
		v &= ~y[i].val;
		n += snprintf(buf + n, n < len ? len - n : 0, "%s%s",
			      n ? fl->sym_delim : "",
			      fmt->sym_text + y[i].name);
	}
	if (v)
		n += snprintf(buf + n, n < len ? len - n : 0, "%s0x%llx",
			      n ? fl->sym_delim : "",
			      (unsigned long long)v);
	return n ? buf : NULL;
}
