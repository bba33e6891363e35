// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace: fetch expressions after a tracepoint, followed in the kernel
 * from a field of the event's entry (struct pea_tp_attr's @fetches, base
 * PEA_FETCH_BASE_FIELD), as an eprobe's "+0($filename):ustring" is
 * (Documentation/trace/eprobetrace.rst) and as bpftrace's
 * str(args->filename).
 *
 * The syntax is the kprobes' (kfetch.c), the event's fields standing for a
 * function's parameters: 'filename', 'str(filename,128)', 'argv[1]',
 * 'join(argv)', 'ctx.comm', and bpftrace's spelling 'args->filename'
 * (args-> is dropped). Each field the expressions name is typed by its C
 * type in the event's format, looked up in the kernel's BTF as a
 * syscall's arguments are (syscall.c: tp_ctype_id()): a char * is a
 * string, a struct pointer can be followed by its members, an integer
 * prints by its type. Without the kernel's BTF a field's bare name still
 * works: a char * field is a string, any other integer or pointer field
 * its value.
 *
 * Whose memory: a syscall event's pointer fields are the caller's __user
 * pointers, so every read of their chains is marked user (kprobe_events'
 * "+u", ustring): the kernel reads them with user copies and asks only a
 * user read's privilege. Any other event's pointers are the kernel's to
 * judge by the address, as its kprobe fetches are (a kernel read, whose
 * privilege the kernel asks).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "kfilter.h"
#include "syscall.h"
#include "tpfetch.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static bool ident_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '_' || (!first && c >= '0' && c <= '9');
}

/*
 * @expr without bpftrace's "args->" before a field (where no name, '.'
 * or '->' goes before it). A quoted string is copied as it is.
 */
static void strip_args(const char *expr, char *out, size_t len)
{
	size_t o = 0;
	const char *p = expr;
	char q = 0;

	while (*p && o + 1 < len) {
		if (q) {
			if (*p == '\\' && p[1] && o + 2 < len)
				out[o++] = *p++;
			else if (*p == q)
				q = 0;
		} else if (*p == '"' || *p == '\'') {
			q = *p;
		} else if (!strncmp(p, "args->", 6) &&
			   (p == expr || (!ident_char(p[-1], false) &&
					  p[-1] != '.' && p[-1] != '>'))) {
			p += 6;
			continue;
		}
		out[o++] = *p++;
	}
	out[o] = '\0';
}

/* The field name @expr starts with, past one "fn(": into @name. */
static void lead_name(const char *expr, char *name, size_t len)
{
	const char *p = expr, *q;
	size_t n = 0;

	for (q = p; ident_char(*q, q == p); q++)
		;
	if (*q == '(')
		p = q + 1;
	while (ident_char(p[n], n == 0) && n + 1 < len)
		n++;
	memcpy(name, p, n);
	name[n] = '\0';
}

/* Field @name of @fmt (not a common_ one), or -1. */
static int field_index(const struct tp_format *fmt, const char *name)
{
	int i;

	for (i = 0; i < fmt->nfields; i++)
		if (!strcmp(fmt->fields[i].name, name) &&
		    strncmp(name, "common_", 7))
			return i;
	return -1;
}

/* Whether a chain may start at @fl: an integer or a pointer of 1..8 bytes. */
static bool field_base_ok(const struct tp_field *fl)
{
	if (fl->size != 1 && fl->size != 2 && fl->size != 4 && fl->size != 8)
		return false;
	return fl->kind == TPF_INT || (fl->kind == TPF_OTHER && fl->pointer);
}

static bool char_ptr(const struct tp_field *fl)
{
	return fl->pointer && strstr(fl->type, "char") &&
	       !strstr(fl->type, "**") && !strstr(fl->type, "* const *") &&
	       !strstr(fl->type, "*const *");
}

/* Without BTF: a field's bare name, its value or (char *) its string. */
static int plain_fetch(const struct tp_field *fl, const char *expr,
		       struct kfetch *k)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->expr, sizeof(k->expr), "%s", expr);
	snprintf(k->type.name, sizeof(k->type.name), "%s", fl->type);
	k->type.size = fl->size;
	if (char_ptr(fl)) {
		k->type.cls = KT_CHAR_PTR;
		k->str = true;
		k->f.type = PEA_FETCH_STR;
		k->f.size = KFETCH_STR_DEFAULT;
		return 0;
	}
	k->type.cls = fl->pointer ? KT_PTR : KT_INT;
	k->type.sgn = fl->is_signed && !fl->pointer;
	k->f.type = tp_int_fetch_type(fl->size, k->type.sgn);
	return 0;
}

/* The bits of @f's reads: its pointer reads, and the value's if read. */
static __u8 read_mask(const struct pea_fetch *f)
{
	bool value = (f->flags & PEA_FETCH_F_LOAD) ||
		     f->type == PEA_FETCH_STR || f->type == PEA_FETCH_ARRAY;

	return (__u8)((1U << (f->nr_deref + value)) - 1);
}

/* Start @k's chain at field @fl; mark its reads user if @user. */
static void set_field(struct kfetch *k, const struct tp_field *fl, bool user)
{
	k->f.base = PEA_FETCH_BASE_FIELD;
	k->f.arg = 0;
	k->f.field_offset = fl->offset;
	k->f.field_size = fl->size;
	if (user)
		k->f.user = read_mask(&k->f);
}

/*
 * Fetch @k as the kprobes' parser made it, parameter i standing for field
 * t->field[i]: its base becomes that field of the entry.
 */
static int to_field(const struct tp_format *fmt, struct tp_fetches *t,
		    struct kfetch *k, bool user, char *why, size_t len)
{
	if (k->f.base == PEA_FETCH_BASE_CTX)
		return 0;
	if (k->f.base != PEA_FETCH_BASE_ARG || !t->sig ||
	    k->f.arg >= t->sig->nparams) {
		snprintf(why, len, "'%s': not a chain from a field", k->expr);
		return -EINVAL;
	}
	set_field(k, &fmt->fields[t->field[k->f.arg]], user);
	return 0;
}

/* @fmt's fields named by @exprs, as the parameters of a new t->sig. */
static int make_sig(const struct tp_format *fmt, const char *const *exprs,
		    unsigned int nexpr, struct tp_fetches *t, char *why,
		    size_t len)
{
	char name[KSIG_NAME_MAX], ex[KFETCH_EXPR_MAX];
	const struct btf *vm = ktypes_vmlinux(why, len);
	struct ksig *s;
	unsigned int i, j;
	int fi;

	if (!vm)
		return 0;	/* bare names only: plain_fetch() */
	s = calloc(1, sizeof(*s));
	if (!s)
		goto oom;
	s->own_btf = btf__new_empty_split((struct btf *)vm);
	if (!s->own_btf) {
		free(s);
		goto oom;
	}
	s->btf = s->own_btf;
	snprintf(s->func, sizeof(s->func), "%s", fmt->name);
	ktype_from_btf(s->btf, 0, &s->ret);
	/* The fields named first, then the others (a --filter's). */
	for (i = 0; i < nexpr + (unsigned int)fmt->nfields; i++) {
		if (i < nexpr) {
			strip_args(exprs[i], ex, sizeof(ex));
			lead_name(ex, name, sizeof(name));
			fi = field_index(fmt, name);
		} else {
			fi = i - nexpr;
			snprintf(name, sizeof(name), "%s",
				 fmt->fields[fi].name);
			if (field_index(fmt, name) != fi)
				continue;
		}
		if (fi < 0 || !field_base_ok(&fmt->fields[fi]) ||
		    ksig_param(s, name))
			continue;
		if (s->nparams == KSIG_MAX_PARAMS)
			break;
		j = s->nparams;
		snprintf(s->params[j].name, sizeof(s->params[j].name), "%s",
			 name);
		s->params[j].reg = j;
		s->params[j].type_id = tp_ctype_id(s->own_btf,
						   fmt->fields[fi].type);
		ktype_from_btf(s->btf, s->params[j].type_id,
			       &s->params[j].type);
		t->field[j] = fi;
		s->nparams++;
	}
	t->sig = s;
	return 0;
oom:
	snprintf(why, len, "out of memory");
	return -ENOMEM;
}

int tp_fetch_parse(const struct tp_format *fmt, const char *event, bool user,
		   const char *const *exprs, unsigned int nexpr,
		   struct tp_fetches *out, char *why, size_t len)
{
	char name[KSIG_NAME_MAX], ex[KFETCH_EXPR_MAX];
	unsigned int i, j, n, bytes = 0;
	int fi, err;

	memset(out, 0, sizeof(*out));
	err = make_sig(fmt, exprs, nexpr, out, why, len);
	if (err)
		return err;
	out->user = user;
	for (i = 0; i < nexpr; i++) {
		const struct tp_field *fl;

		strip_args(exprs[i], ex, sizeof(ex));
		lead_name(ex, name, sizeof(name));
		fi = field_index(fmt, name);
		fl = fi >= 0 ? &fmt->fields[fi] : NULL;
		if (!fl && strncmp(ex, "ctx.", 4)) {
			snprintf(why, len,
				 "'%s': %s has no field '%s' ('pea list -v tracepoint:%s' shows them)",
				 exprs[i], event, name, event);
			goto fail;
		}
		if (fl && !field_base_ok(fl)) {
			snprintf(why, len,
				 "'%s': field %s (%s) is in the event itself and prints with its fields; a fetch follows an integer or pointer field",
				 exprs[i], name, fl->type);
			goto fail;
		}
		if (out->n == PROBE_MAX_PARAMS) {
			snprintf(why, len, "'%s': more than %d fetches",
				 exprs[i], PEA_FETCH_MAX);
			goto fail;
		}
		if (!out->sig) {
			if (!fl || strcmp(ex, name)) {
				snprintf(why, len,
					 "'%s': without the kernel's BTF a tracepoint's fetch is a field's bare name (no types to follow it by)",
					 exprs[i]);
				goto fail;
			}
			plain_fetch(fl, exprs[i], &out->k[out->n]);
			set_field(&out->k[out->n], fl, user);
			n = 1;
		} else if (kfetch_parse_n(out->sig, ex, false,
					  &out->k[out->n],
					  PROBE_MAX_PARAMS - out->n, &n, why,
					  len)) {
			goto fail;
		}
		for (j = out->n; j < out->n + n; j++) {
			if (out->sig &&
			    to_field(fmt, out, &out->k[j], user, why, len)) {
				out->n = j + 1;
				goto fail;
			}
			bytes += (kfetch_bytes(&out->k[j]) + 7) & ~7U;
		}
		/* The text shows what was written, args-> and all. */
		if (n == 1 || out->k[out->n].join)
			snprintf(out->k[out->n].expr,
				 sizeof(out->k[out->n].expr), "%s", exprs[i]);
		out->n += n;
		if (bytes > PEA_FETCH_DATA_MAX) {
			snprintf(why, len,
				 "the fetches up to '%s' take more than %d bytes per event (each rounded up to 8; str(EXPR,N) takes N)",
				 exprs[i], PEA_FETCH_DATA_MAX);
			goto fail;
		}
	}
	for (i = 0; i < out->n; i++)
		out->f[i] = out->k[i].f;
	return 0;
fail:
	tp_fetch_release(out);
	return -EINVAL;
}

int tp_fetch_filter(const struct tp_format *fmt, const char *filter,
		    struct tp_fetches *t, char *why, size_t len)
{
	struct kfilter_ctx c = {
		.fetches = t->k, .nfetches = t->n, .max = PROBE_MAX_PARAMS,
		.preds = t->preds,
	};
	char *text = malloc(strlen(filter) + 1);
	unsigned int i, n0 = t->n, bytes = 0;
	int err;

	if (!text) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	strip_args(filter, text, strlen(filter) + 1);
	err = t->sig ? 0 : make_sig(fmt, NULL, 0, t, why, len);
	if (!err && !t->sig) {
		snprintf(why, len, "a filter on what a field points to needs the kernel's BTF");
		err = -EINVAL;
	}
	if (!err) {
		c.sig = t->sig;
		err = kfilter_compile(&c, text, why, len);
		/* What it added is released with the others. */
		t->n = c.nfetches;
	}
	free(text);
	for (i = n0; !err && i < t->n; i++)
		err = to_field(fmt, t, &t->k[i], t->user, why, len);
	for (i = 0; !err && i < t->n; i++)
		bytes += (kfetch_bytes(&t->k[i]) + 7) & ~7U;
	if (!err && bytes > PEA_FETCH_DATA_MAX) {
		snprintf(why, len, "its fetches and the printed ones take more than %d bytes per event",
			 PEA_FETCH_DATA_MAX);
		err = -EINVAL;
	}
	if (err)
		return -EINVAL;
	for (i = 0; i < t->n; i++)
		t->f[i] = t->k[i].f;
	t->npreds = c.npreds;
	return 0;
}

void tp_fetch_release(struct tp_fetches *t)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		kfetch_release(&t->k[i]);
	t->n = 0;
	if (t->sig)
		ksig_free(t->sig);
	t->sig = NULL;
}
