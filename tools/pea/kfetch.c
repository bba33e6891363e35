// SPDX-License-Identifier: GPL-2.0
/*
 * pea: fetch expressions after a kprobe or kretprobe, resolved with
 * libbpf's BTF API into the chains the kernel evaluates (struct
 * pea_fetch, include/uapi/linux/pea.h), and their values printed by type.
 *
 * Syntax (docs/btf.md), close to bpftrace's args and perf probe's
 * name->field:
 *
 *	EXPR  := CHAIN | str(CHAIN) | str(CHAIN,N)
 *	CHAIN := NAME { ->FIELD | .FIELD }
 *
 * NAME is a parameter of the function (or ret, at a kretprobe). ->
 * follows a pointer to a struct or union, . names a field of one (fields
 * of anonymous members are found as C finds them). The value is the last
 * field's (or the parameter's) type: integers of every width and sign,
 * enums, bool and pointers print by type; a char * and a char array are
 * strings (KFETCH_STR_DEFAULT bytes, as bpftrace's str()); str() makes
 * any pointer a string, N its bytes (1..PEA_FETCH_DATA_MAX). Each ->
 * after the first is one pointer read (PEA_FETCH_DEPTH_MAX of them), a
 * string through a pointer field one more. Whether a pointer is a user
 * or a kernel address is the kernel's to decide, by the address, as its
 * own kprobe fetches do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "pea_tool.h"
#include "ctxfetch.h"
#include "kfetch.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static bool ident_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '_' || (!first && c >= '0' && c <= '9');
}

/* The length of the identifier at @s (0: none). */
static size_t ident_len(const char *s)
{
	size_t n = 0;

	while (ident_char(s[n], n == 0))
		n++;
	return n;
}

bool kfetch_is_expr(const char *text)
{
	size_t n = ident_len(text);

	if (!n)
		return false;
	if (!strncmp(text, "str(", 4))
		return true;
	text += n;
	while (*text) {
		if (!strncmp(text, "->", 2))
			text += 2;
		else if (*text == '.')
			text++;
		else
			return false;
		n = ident_len(text);
		if (!n)
			return false;
		text += n;
	}
	return true;
}

/*
 * Field @name of struct or union @t, looked for in anonymous members
 * too: its offset in bits added to *@bits, its type in *@id. 0, -ENOENT,
 * or -EOPNOTSUPP for a bit field.
 */
static int find_member(const struct btf *btf, const struct btf_type *t,
		       const char *name, __u32 *bits, __u32 *id, int depth)
{
	const struct btf_member *m = btf_members(t);
	unsigned int i, n = btf_vlen(t);

	if (depth > 8)
		return -ENOENT;
	for (i = 0; i < n; i++, m++) {
		const char *mn = btf__name_by_offset(btf, m->name_off);
		__u32 off = btf_member_bit_offset(t, i), mid = m->type;
		const struct btf_type *mt;

		if (mn && *mn) {
			if (strcmp(mn, name))
				continue;
			if (btf_member_bitfield_size(t, i) || off % 8)
				return -EOPNOTSUPP;
			*bits += off;
			*id = m->type;
			return 0;
		}
		mt = ktype_skip_mods(btf, &mid);
		if (mt && (btf_is_struct(mt) || btf_is_union(mt))) {
			__u32 b = *bits + off;
			int err = find_member(btf, mt, name, &b, id, depth + 1);

			if (err != -ENOENT) {
				if (!err)
					*bits = b;
				return err;
			}
		}
	}
	return -ENOENT;
}

static bool is_char(const struct btf *btf, __u32 id)
{
	const struct btf_type *t = ktype_skip_mods(btf, &id);

	return t && btf_is_int(t) && t->size == 1 &&
	       !(btf_int_encoding(t) & BTF_INT_BOOL);
}

/* Walk state: the value is in a register, or in memory at @off. */
struct walk {
	const char *expr;
	__u32 id;
	bool mem;
	__s32 off;
	struct pea_fetch *f;
	char *why;
	size_t len;
};

/* Read the pointer the walk is at (in memory at @off). */
static int push_deref(struct walk *w)
{
	if (w->f->nr_deref == PEA_FETCH_DEPTH_MAX) {
		snprintf(w->why, w->len,
			 "'%s': more than %d pointer reads in one expression",
			 w->expr, PEA_FETCH_DEPTH_MAX);
		return -EINVAL;
	}
	w->f->offset[w->f->nr_deref++] = w->off;
	w->off = 0;
	return 0;
}

static int step(const struct btf *btf, struct walk *w, bool arrow,
		const char *field)
{
	__u32 id = w->id, bits = 0;
	const struct btf_type *t = ktype_skip_mods(btf, &id);
	char tn[KTYPE_NAME_MAX];
	struct ktype k;
	int err;

	ktype_from_btf(btf, w->id, &k);
	snprintf(tn, sizeof(tn), "%s", k.name);
	ktype_release(&k);
	if (arrow) {
		if (!t || !btf_is_ptr(t)) {
			snprintf(w->why, w->len, "'->%s': %s is not a pointer",
				 field, tn);
			return -EINVAL;
		}
		id = t->type;
		t = ktype_skip_mods(btf, &id);
		if (w->mem && push_deref(w))
			return -EINVAL;
		w->mem = true;
		w->off = 0;
	} else if (!w->mem) {
		snprintf(w->why, w->len,
			 "'.%s': %s is in a register, not in memory (use -> on a pointer)",
			 field, tn);
		return -EINVAL;
	}
	if (!t || (!btf_is_struct(t) && !btf_is_union(t))) {
		snprintf(w->why, w->len, "'%s%s': %s %s no struct or union",
			 arrow ? "->" : ".", field, tn,
			 arrow ? "points to" : "is");
		return -EINVAL;
	}
	err = find_member(btf, t, field, &bits, &w->id, 0);
	if (err == -EOPNOTSUPP) {
		snprintf(w->why, w->len, "'%s' is a bit field (not fetched)",
			 field);
		return -EINVAL;
	}
	if (err) {
		const char *sn = btf__name_by_offset(btf, t->name_off);

		snprintf(w->why, w->len, "%s %s has no field '%s'",
			 btf_is_union(t) ? "union" : "struct",
			 sn && *sn ? sn : "(anon)", field);
		return -EINVAL;
	}
	w->off += bits / 8;
	return 0;
}

static __u8 int_type(const struct ktype *k)
{
	static const __u8 u[] = { 0, PEA_FETCH_U8, PEA_FETCH_U16, 0,
				  PEA_FETCH_U32, 0, 0, 0, PEA_FETCH_U64 };
	unsigned int size = k->cls == KT_PTR || k->cls == KT_CHAR_PTR ? 8 :
			    k->cls == KT_BOOL ? 1 : k->size;

	if (size > 8 || !u[size])
		return 0;
	return u[size] + (k->sgn && k->cls != KT_BOOL ? 4 : 0);
}

/* The final value: a string, or an integer by its type. */
static int finish(const struct btf *btf, struct walk *w, struct kfetch *out,
		  bool want_str, unsigned int n)
{
	__u32 id = w->id;
	const struct btf_type *t = ktype_skip_mods(btf, &id);
	struct pea_fetch *f = w->f;

	ktype_from_btf(btf, w->id, &out->type);
	if (t && btf_is_array(t) && is_char(btf, btf_array(t)->type)) {
		__u32 nel = btf_array(t)->nelems;

		/* A char array: a string where it is. */
		out->str = true;
		f->type = PEA_FETCH_STR;
		f->size = n ? n : nel < PEA_FETCH_DATA_MAX ? nel :
		    PEA_FETCH_DATA_MAX;
		if (!f->size)
			f->size = KFETCH_STR_DEFAULT;
		f->offset[f->nr_deref] = w->off;
		return 0;
	}
	if (want_str || out->type.cls == KT_CHAR_PTR) {
		if (!t || !(btf_is_ptr(t) || (btf_is_int(t) && t->size == 8))) {
			snprintf(w->why, w->len,
				 "str(): %s is no pointer", out->type.name);
			return -EINVAL;
		}
		if (w->mem && push_deref(w))
			return -EINVAL;
		out->str = true;
		f->type = PEA_FETCH_STR;
		f->size = n ? n : KFETCH_STR_DEFAULT;
		return 0;
	}
	f->type = ktype_typed(&out->type) ? int_type(&out->type) : 0;
	if (!f->type) {
		snprintf(w->why, w->len,
			 "%s is not fetched as a value (integers, enums, bool, pointers and strings are; name one of its fields)",
			 out->type.name);
		return -EINVAL;
	}
	if (w->mem) {
		f->flags |= PEA_FETCH_F_LOAD;
		f->offset[f->nr_deref] = w->off;
	}
	return 0;
}

int kfetch_parse(const struct ksig *sig, const char *expr, bool ret,
		 struct kfetch *out, char *why, size_t len)
{
	const char *p = expr, *end;
	char name[KSIG_NAME_MAX];
	struct walk w = { .expr = expr, .f = &out->f, .why = why,
			  .len = len };
	bool want_str = false;
	unsigned long n = 0;
	size_t l;
	int r;

	memset(out, 0, sizeof(*out));
	if (strlen(expr) >= sizeof(out->expr)) {
		snprintf(why, len, "'%.32s...': longer than %d characters",
			 expr, KFETCH_EXPR_MAX - 1);
		return -EINVAL;
	}
	snprintf(out->expr, sizeof(out->expr), "%s", expr);
	r = ctxfetch_parse(expr, out, why, len);
	if (r)
		return r < 0 ? r : 0;
	end = expr + strlen(expr);
	if (!strncmp(p, "str(", 4)) {
		const char *comma, *close = strrchr(p, ')');

		if (!close || close[1]) {
			snprintf(why, len, "'%s': str( without its closing )",
				 expr);
			return -EINVAL;
		}
		want_str = true;
		p += 4;
		end = close;
		comma = memchr(p, ',', end - p);
		if (comma) {
			char *e;

			n = strtoul(comma + 1, &e, 0);
			if (e != end || !n || n > PEA_FETCH_DATA_MAX) {
				snprintf(why, len,
					 "'%s': str(EXPR,N): N is 1..%d bytes",
					 expr, PEA_FETCH_DATA_MAX);
				return -EINVAL;
			}
			end = comma;
		}
	}
	if (!sig || !sig->btf) {
		snprintf(why, len, "'%s': no BTF for this function", expr);
		return -EINVAL;
	}
	l = ident_len(p);
	if (!l || l >= sizeof(name) || p + l > end) {
		snprintf(why, len, "'%s' starts with no name", expr);
		return -EINVAL;
	}
	memcpy(name, p, l);
	name[l] = '\0';
	p += l;
	if (ret && !strcmp(name, "ret") && !ksig_param(sig, name)) {
		out->f.base = PEA_FETCH_BASE_RET;
		w.id = sig->ret_id;
	} else {
		const struct ksig_param *pa = ksig_param(sig, name);

		if (!pa) {
			snprintf(why, len,
				 "'%s' has no parameter '%s' (pea list -v kprobe:%s shows them)",
				 sig->func, name, sig->func);
			return -EINVAL;
		}
		if (pa->reg < 0) {
			snprintf(why, len,
				 "parameter '%s' (%s) is in no argument register",
				 name, pa->type.name);
			return -EINVAL;
		}
		out->f.base = PEA_FETCH_BASE_ARG;
		out->f.arg = pa->reg;
		w.id = pa->type_id;
	}
	while (p < end) {
		bool arrow = !strncmp(p, "->", 2);
		char field[KSIG_NAME_MAX];

		if (!arrow && *p != '.') {
			snprintf(why, len, "'%s': expected -> or . at '%s'",
				 expr, p);
			return -EINVAL;
		}
		p += arrow ? 2 : 1;
		l = ident_len(p);
		if (!l || l >= sizeof(field) || p + l > end) {
			snprintf(why, len, "'%s': a field name expected after %s",
				 expr, arrow ? "->" : ".");
			return -EINVAL;
		}
		memcpy(field, p, l);
		field[l] = '\0';
		p += l;
		if (step(sig->btf, &w, arrow, field))
			return -EINVAL;
	}
	if (finish(sig->btf, &w, out, want_str, n)) {
		ktype_release(&out->type);
		return -EINVAL;
	}
	return 0;
}

unsigned int kfetch_bytes(const struct kfetch *k)
{
	static const unsigned char w[] = { 0, 1, 2, 4, 8, 1, 2, 4, 8 };

	if (k->f.type == PEA_FETCH_STR || k->f.type == PEA_FETCH_ARRAY)
		return k->f.size;
	return k->f.type < sizeof(w) ? w[k->f.type] : 0;
}

void kfetch_release(struct kfetch *k)
{
	ktype_release(&k->type);
}

bool kfetch_block_ok(const void *b, __u32 size, __u32 nr)
{
	struct pea_fetch_block h;
	struct pea_fetch_value v;
	__u32 i, hdr = sizeof(h) + nr * sizeof(v);

	if (size < sizeof(h))
		return false;
	memcpy(&h, b, sizeof(h));
	if (h.nr < nr || h.nr > PEA_FETCH_MAX || h.size > size)
		return false;
	hdr = sizeof(h) + h.nr * sizeof(v);
	if (h.size < hdr)
		return false;
	for (i = 0; i < h.nr; i++) {
		memcpy(&v, (const char *)b + sizeof(h) + i * sizeof(v),
		       sizeof(v));
		if (v.offset < hdr || v.offset > h.size ||
		    v.len > h.size - v.offset)
			return false;
	}
	return true;
}

static struct pea_fetch_value value_of(const void *b, __u32 i)
{
	struct pea_fetch_value v;

	memcpy(&v, (const char *)b + sizeof(struct pea_fetch_block) +
	       i * sizeof(v), sizeof(v));
	return v;
}

static __u64 int_of(const void *b, const struct pea_fetch_value *v)
{
	__u64 raw = 0;

	memcpy(&raw, (const char *)b + v->offset, v->len < 8 ? v->len : 8);
	return raw;
}

void kfetch_put(FILE *f, const struct kfetch *k, const void *b, __u32 i)
{
	struct pea_fetch_value v = value_of(b, i);
	char buf[64];

	fprintf(f, "%s=", k->expr);
	if (v.status == PEA_FETCH_FAULT) {
		fprintf(f, "(fault@%u)", v.step);
	} else if (k->str) {
		c_put_str(f, (const char *)b + v.offset, v.len);
		if (v.status == PEA_FETCH_TRUNCATED)
			fputs("...", f);
	} else {
		fputs(ktype_format(&k->type, int_of(b, &v), buf, sizeof(buf)),
		      f);
	}
}

void kfetch_put_json(FILE *f, const struct kfetch *k, const void *b,
		     __u32 i)
{
	struct pea_fetch_value v = value_of(b, i);

	json_put_str(f, k->expr, strlen(k->expr));
	fputc(':', f);
	if (v.status == PEA_FETCH_FAULT) {
		fprintf(f, "{\"fault\":%u}", v.step);
	} else if (k->str && v.status == PEA_FETCH_TRUNCATED) {
		fputs("{\"str\":", f);
		json_put_str(f, (const char *)b + v.offset, v.len);
		fputs(",\"truncated\":true}", f);
	} else if (k->str) {
		json_put_str(f, (const char *)b + v.offset, v.len);
	} else {
		ktype_put_json(f, &k->type, int_of(b, &v));
	}
}
