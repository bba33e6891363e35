// SPDX-License-Identifier: GPL-2.0
/*
 * pea: fetch expressions after a uprobe or uretprobe. User code has no
 * BTF here, so the expression says the type, in kprobe_events' and
 * uprobe_events' fetch syntax (Documentation/trace/uprobetracer.rst):
 *
 *	FETCH := [NAME=]VALUE[:TYPE] | [NAME=]str(VALUE[,N])
 *	VALUE := argN | ret | +OFF(VALUE) | -OFF(VALUE)
 *	TYPE  := u8 u16 u32 u64 s8 s16 s32 s64 | string
 *
 * argN is argument register N (0..5), ret the return value (a
 * uretprobe); +OFF(V) is the memory at V + OFF, so +8(+0(arg0)) reads a
 * pointer at arg0 and the value 8 bytes past where it points (at most
 * PEA_FETCH_DEPTH_MAX reads before the value). An integer is u64 unless
 * TYPE says; :string or str() is the NUL-terminated string at the value's
 * address (str(argN) the string argN points to), N bytes
 * (KFETCH_STR_DEFAULT). NAME is what it prints as (the expression
 * itself otherwise). Every read is of the probed process's memory.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctxfetch.h"
#include "udwarf.h"
#include "ufetch.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static const struct {
	const char *name;
	__u8 type;
	unsigned int size;
	bool sgn;
} ufetch_types[] = {
	{ "u8", PEA_FETCH_U8, 1, false }, { "u16", PEA_FETCH_U16, 2, false },
	{ "u32", PEA_FETCH_U32, 4, false }, { "u64", PEA_FETCH_U64, 8, false },
	{ "s8", PEA_FETCH_S8, 1, true }, { "s16", PEA_FETCH_S16, 2, true },
	{ "s32", PEA_FETCH_S32, 4, true }, { "s64", PEA_FETCH_S64, 8, true },
};

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '_' || (!first && c >= '0' && c <= '9');
}

/* The length of a NAME= prefix at @s, '=' included (0: none). */
static size_t name_prefix(const char *s)
{
	size_t n = 0;

	while (name_char(s[n], n == 0))
		n++;
	return n && s[n] == '=' && s[n + 1] != '=' ? n + 1 : 0;
}

bool ufetch_is_expr(const char *text)
{
	text += name_prefix(text);
	return !strncmp(text, "arg", 3) || !strncmp(text, "ret", 3) ||
	       !strncmp(text, "ctx.", 4) ||
	       !strncmp(text, "str(", 4) || text[0] == '+' ||
	       (text[0] == '-' && text[1] >= '0' && text[1] <= '9');
}

struct uparse {
	const char *s;
	struct pea_fetch *f;
	__s32 offs[PEA_FETCH_DEPTH_MAX + 2];
	unsigned int noffs;
	bool ret;
	char *why;
	size_t len;
	const char *expr;
};

static int ufail(struct uparse *p, const char *msg)
{
	snprintf(p->why, p->len, "'%s': %s", p->expr, msg);
	return -EINVAL;
}

/* VALUE at p->s: the base into f, the offsets outermost last. */
static int parse_value(struct uparse *p)
{
	if (p->s[0] == '+' || p->s[0] == '-') {
		char *end;
		long long off = strtoll(p->s, &end, 0);

		if (end == p->s + 1 || *end != '(' || off < INT32_MIN ||
		    off > INT32_MAX)
			return ufail(p, "+OFF(VALUE): an offset, then (");
		p->s = end + 1;
		if (parse_value(p))
			return -EINVAL;
		if (*p->s != ')')
			return ufail(p, "a ')' expected");
		p->s++;
		if (p->noffs == PEA_FETCH_DEPTH_MAX + 1)
			return ufail(p, "more than 4 pointer reads before the value");
		p->offs[p->noffs++] = (__s32)off;
		return 0;
	}
	if (!strncmp(p->s, "arg", 3) && p->s[3] >= '0' && p->s[3] <= '5' &&
	    !name_char(p->s[4], false)) {
		p->f->base = PEA_FETCH_BASE_ARG;
		p->f->arg = p->s[3] - '0';
		p->s += 4;
		return 0;
	}
	if (!strncmp(p->s, "ret", 3) && !name_char(p->s[3], false)) {
		if (!p->ret)
			return ufail(p, "ret is a uretprobe's");
		p->f->base = PEA_FETCH_BASE_RET;
		p->s += 3;
		return 0;
	}
	return ufail(p, "arg0..arg5, ret or +OFF(VALUE) expected");
}

/*
 * The chain: offsets before the last are pointer reads, the last is
 * where the value is read (PEA_FETCH_F_LOAD, or a string's address).
 */
static int chain(struct uparse *p, bool str)
{
	unsigned int i;

	if (!p->noffs)
		return 0;	/* the register: itself, or a string at it */
	if (p->noffs - 1 > PEA_FETCH_DEPTH_MAX)
		return ufail(p, "more than 4 pointer reads before the value");
	p->f->nr_deref = p->noffs - 1;
	for (i = 0; i < p->noffs; i++)
		p->f->offset[i] = p->offs[i];
	if (!str)
		p->f->flags |= PEA_FETCH_F_LOAD;
	return 0;
}

static void set_int(struct kfetch *out, unsigned int i)
{
	out->f.type = ufetch_types[i].type;
	out->type.cls = KT_INT;
	out->type.size = ufetch_types[i].size;
	out->type.sgn = ufetch_types[i].sgn;
	snprintf(out->type.name, sizeof(out->type.name), "%s",
		 ufetch_types[i].name);
}

int ufetch_parse(const char *expr, bool ret, struct kfetch *out, char *why,
		 size_t len)
{
	struct uparse p = { .f = &out->f, .ret = ret, .why = why,
			    .len = len, .expr = expr };
	size_t np = name_prefix(expr);
	unsigned long n = 0;
	bool str = false;
	unsigned int i;
	int r;

	memset(out, 0, sizeof(*out));
	if (strlen(expr) >= sizeof(out->expr))
		return ufail(&p, "too long");
	if (np)
		snprintf(out->expr, np, "%s", expr);
	else
		snprintf(out->expr, sizeof(out->expr), "%s", expr);
	p.s = expr + np;
	r = ctxfetch_parse(p.s, out, why, len);
	if (r)
		return r < 0 ? r : 0;
	if (!strncmp(p.s, "str(", 4)) {
		str = true;
		p.s += 4;
		if (parse_value(&p))
			return -EINVAL;
		if (*p.s == ',') {
			char *end;

			n = strtoul(p.s + 1, &end, 0);
			if (end == p.s + 1 || !n || n > PEA_FETCH_DATA_MAX)
				return ufail(&p, "str(VALUE,N): N is 1..1024 bytes");
			p.s = end;
		}
		if (*p.s != ')' || p.s[1])
			return ufail(&p, "str( without its closing )");
	} else {
		if (parse_value(&p))
			return -EINVAL;
		i = 3;	/* u64 */
		if (*p.s == ':') {
			p.s++;
			if (!strcmp(p.s, "string")) {
				str = true;
			} else {
				for (i = 0; i < 8; i++)
					if (!strcmp(p.s, ufetch_types[i].name))
						break;
				if (i == 8)
					return ufail(&p, "the type is u8, u16, u32, u64, s8, s16, s32, s64 or string");
			}
		} else if (*p.s) {
			return ufail(&p, "unexpected text after the value (a :TYPE?)");
		}
		if (!str)
			set_int(out, i);
	}
	if (chain(&p, str))
		return -EINVAL;
	if (str) {
		out->str = true;
		out->f.type = PEA_FETCH_STR;
		out->f.size = n ? n : KFETCH_STR_DEFAULT;
		out->type.cls = KT_CHAR_PTR;
		out->type.size = 8;
		snprintf(out->type.name, sizeof(out->type.name), "char *");
	}
	return 0;
}

/* The length of the identifier at @s (0: none). */
static size_t ident_len(const char *s)
{
	size_t n = 0;

	while (name_char(s[n], n == 0))
		n++;
	return n;
}

/*
 * Whether @expr is in the register syntax: NAME=, +OFF(, a :TYPE, ctx.,
 * argN and ret (unless a parameter has the name; where there is DWARF, a
 * uretprobe's ret is its typed return value instead). Other names are
 * parameters (refused with the reason when there is no DWARF).
 */
static bool raw_syntax(const struct ksig *sig, const char *expr, bool ret)
{
	const char *p = expr;
	char name[KSIG_NAME_MAX];
	size_t n;

	if (name_prefix(expr) || strchr(expr, ':'))
		return true;
	if (!strncmp(p, "str(", 4))
		p += 4;
	if (*p == '+' || *p == '-' || !strncmp(p, "ctx.", 4))
		return true;
	n = ident_len(p);
	if (!n || n >= sizeof(name))
		return !sig;
	memcpy(name, p, n);
	name[n] = 0;
	if (!strcmp(name, "ret"))	/* a parameter of that name wins */
		return !sig || (!ret && !ksig_param(sig, name));
	if (n == 4 && !strncmp(name, "arg", 3) && name[3] >= '0' &&
	    name[3] <= '5')
		return !ksig_param(sig, name);
	return false;
}

int ufetch_resolve(const struct ksig *sig, const char *sig_why,
		   const char *expr, bool ret, struct kfetch *out, char *why,
		   size_t len)
{
	const struct ksig_param *pa;
	const char *p = expr, *r;
	char name[KSIG_NAME_MAX];
	size_t n;

	if (raw_syntax(sig, expr, ret))
		return ufetch_parse(expr, ret, out, why, len);
	memset(out, 0, sizeof(*out));
	if (!sig) {
		snprintf(why, len,
			 "'%s': %s; name registers instead (argN[:TYPE], +OFF(argN):TYPE, str(argN))",
			 expr, sig_why ? sig_why : "no DWARF for this function");
		return -EINVAL;
	}
	n = ident_len(p);
	if (n && p[n] == '(')	/* str(), ntop(), ...: its expression */
		p += n + 1;
	n = ident_len(p);
	if (n && n < sizeof(name)) {
		memcpy(name, p, n);
		name[n] = 0;
		pa = ksig_param(sig, name);
		if (!pa && ret && !strcmp(name, "ret")) {
			r = usig_ret_why(sig);
			if (r) {
				snprintf(why, len,
					 "'%s': ret (%s) %s: not fetched",
					 expr, sig->ret.name, r);
				return -EINVAL;
			}
		} else if (!pa) {
			snprintf(why, len,
				 "'%s': %s has no parameter '%s' (pea list -v shows them)",
				 expr, sig->func, name);
			return -EINVAL;
		} else if (pa->reg < 0 && pa->stack_off > 0 && ret) {
			snprintf(why, len,
				 "'%s': parameter '%s' (%s) is on the stack, and a uretprobe reads its fetches at the return, where the function may have changed its stack copy and the stack pointer has moved: fetch it with a uprobe",
				 expr, name, pa->type.name);
			return -EINVAL;
		} else if (pa->reg < 0 && !pa->stack_off) {
			snprintf(why, len,
				 "'%s': parameter '%s' (%s) %s: not fetched",
				 expr, name, pa->type.name,
				 usig_param_why(sig, pa - sig->params, false));
			return -EINVAL;
		}
	}
	return kfetch_parse(sig, expr, ret, out, why, len);
}
