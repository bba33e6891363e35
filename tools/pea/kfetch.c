// SPDX-License-Identifier: GPL-2.0
/*
 * pea: fetch expressions after a kprobe or kretprobe, resolved with
 * libbpf's BTF API into the chains the kernel evaluates (struct
 * pea_fetch, include/uapi/linux/pea.h), and their values printed by type.
 *
 * Syntax (docs/btf.md), close to bpftrace's args and perf probe's
 * name->field:
 *
 *	EXPR  := CHAIN | str(CHAIN) | str(CHAIN,N) | join(CHAIN) |
 *		 join(CHAIN,N) | ntop(CHAIN) | ntohs(CHAIN) | ntohl(CHAIN) |
 *		 bswap(CHAIN)
 *	CHAIN := NAME { ->FIELD | .FIELD | [INDEX] }
 *
 * NAME is a parameter of the function (or ret, at a kretprobe). ->
 * follows a pointer to a struct or union, . names a field of one (fields
 * of anonymous members are found as C finds them), [INDEX] is element
 * INDEX of an array in memory or behind a pointer (one pointer read, as
 * ->). The value is the last field's (or the parameter's) type: integers
 * of every width and sign, enums, bool and pointers print by type, and
 * fixed arrays of them as [v,v,...]; a char * and a char array are
 * strings (KFETCH_STR_DEFAULT bytes, as bpftrace's str()); str() makes
 * any pointer a string, N its bytes (1..PEA_FETCH_DATA_MAX). Each ->
 * after the first is one pointer read (PEA_FETCH_DEPTH_MAX of them), a
 * string through a pointer field one more. Whether a pointer is a user
 * or a kernel address is the kernel's to decide, by the address, as its
 * own kprobe fetches do.
 *
 * As bpftrace's functions of the same names: join(CHAIN) is the strings
 * of a NULL-terminated array of char * (argv), CHAIN[0] .. CHAIN[N-1],
 * one fetch each, printed space-joined up to the first that cannot be
 * read; ntop() prints 4 bytes (an integer or 4 bytes in memory) as an
 * IPv4 address and 16 as IPv6; ntohs() (2 bytes), ntohl() (4) and bswap()
 * (2, 4 or 8) reverse an integer's bytes. The kernel reads the bytes as
 * they are: only the printing differs.
 */
#include <byteswap.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
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

/* The functions of an EXPR: their names, what they print, their width. */
static const struct kfetch_fn {
	const char *name;
	unsigned char conv;
	unsigned int width;	/* the value's bytes; 0: any */
} kfetch_fns[] = {
	{ "str", KFETCH_PLAIN, 0 },
	{ "ntop", KFETCH_NTOP, 0 },
	{ "ntohs", KFETCH_BSWAP, 2 },
	{ "ntohl", KFETCH_BSWAP, 4 },
	{ "bswap", KFETCH_BSWAP, 0 },
	{ "join", KFETCH_PLAIN, 0 },
};

/* The function @text starts with ("NAME("), or NULL. */
static const struct kfetch_fn *fn_of(const char *text)
{
	size_t i, n = ident_len(text);

	if (!n || text[n] != '(')
		return NULL;
	for (i = 0; i < sizeof(kfetch_fns) / sizeof(kfetch_fns[0]); i++)
		if (strlen(kfetch_fns[i].name) == n &&
		    !strncmp(text, kfetch_fns[i].name, n))
			return &kfetch_fns[i];
	return NULL;
}

/* The length of "[DIGITS]" at @s (0: none). */
static size_t index_len(const char *s)
{
	size_t n = 1;

	if (*s != '[')
		return 0;
	while (s[n] >= '0' && s[n] <= '9')
		n++;
	return n > 1 && s[n] == ']' ? n + 1 : 0;
}

bool kfetch_is_expr(const char *text)
{
	size_t n = ident_len(text);

	if (!n)
		return false;
	if (fn_of(text))
		return true;
	text += n;
	while (*text) {
		if (*text == '[') {
			n = index_len(text);
			if (!n)
				return false;
			text += n;
			continue;
		}
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

/*
 * [@idx]: element @idx of the array the walk is at (in memory), or of
 * the ones a pointer points to (one pointer read, as ->).
 */
static int index_step(const struct btf *btf, struct walk *w,
		      unsigned long idx)
{
	__u32 id = w->id;
	const struct btf_type *t = ktype_skip_mods(btf, &id);
	char tn[KTYPE_NAME_MAX];
	struct ktype k;
	__s64 size;

	ktype_from_btf(btf, w->id, &k);
	snprintf(tn, sizeof(tn), "%s", k.name);
	ktype_release(&k);
	if (t && btf_is_array(t)) {
		const struct btf_array *a = btf_array(t);

		if (idx >= a->nelems) {
			snprintf(w->why, w->len,
				 "'%s': [%lu] is past the %u elements of %s",
				 w->expr, idx, a->nelems, tn);
			return -EINVAL;
		}
		size = btf__resolve_size(btf, a->type);
		if (size <= 0)
			goto sizeless;
		w->id = a->type;
		w->off += idx * size;
		return 0;
	}
	if (!t || !btf_is_ptr(t)) {
		snprintf(w->why, w->len,
			 "'%s': [%lu] on %s, which is no pointer or array",
			 w->expr, idx, tn);
		return -EINVAL;
	}
	size = btf__resolve_size(btf, t->type);
	if (size <= 0)
		goto sizeless;
	if ((__u64)idx * size > 0x7fffffff) {
		snprintf(w->why, w->len, "'%s': [%lu] is too far", w->expr,
			 idx);
		return -EINVAL;
	}
	if (w->mem && push_deref(w))
		return -EINVAL;
	w->mem = true;
	w->id = t->type;
	w->off = idx * size;
	return 0;
sizeless:
	snprintf(w->why, w->len, "'%s': [%lu]: the elements of %s have no size",
		 w->expr, idx, tn);
	return -EINVAL;
}

/*
 * ntop(): 4 or 16 bytes. An integer is fetched as one; a struct, union
 * or array in memory (struct in6_addr, u8[4]) as its bytes. 0, 1 (an
 * integer: finish() goes on), or -EINVAL.
 */
static int finish_ntop(const struct btf *btf, struct walk *w,
		       struct kfetch *out)
{
	__u32 id = w->id;
	const struct btf_type *t = ktype_skip_mods(btf, &id);
	__s64 size = t ? btf__resolve_size(btf, id) : 0;

	out->conv = KFETCH_NTOP;
	if (t && (btf_is_int(t) || btf_is_enum(t)) && size == 4)
		return 1;
	if (!t || (size != 4 && size != 16) ||
	    !(btf_is_struct(t) || btf_is_union(t) || btf_is_array(t))) {
		snprintf(w->why, w->len,
			 "ntop(): %s is %lld bytes; an IPv4 address is 4, an IPv6 one 16",
			 out->type.name, (long long)size);
		return -EINVAL;
	}
	if (!w->mem) {
		snprintf(w->why, w->len,
			 "ntop(): %s is in a register, not in memory",
			 out->type.name);
		return -EINVAL;
	}
	w->f->type = PEA_FETCH_ARRAY;
	w->f->size = size;
	w->f->offset[w->f->nr_deref] = w->off;
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

/*
 * A fixed array of integers, enums, bools or pointers in memory: all of
 * its values, exactly (PEA_FETCH_ARRAY). 0, 1 (not such an array), or
 * -EINVAL (too large; the reason in w->why).
 */
static int finish_array(const struct btf *btf, struct walk *w,
			struct kfetch *out, const struct btf_array *a)
{
	struct ktype e;
	unsigned int size;

	ktype_from_btf(btf, a->type, &e);
	size = e.cls == KT_PTR || e.cls == KT_CHAR_PTR ? 8 :
	       e.cls == KT_BOOL ? 1 : e.size;
	if (!ktype_typed(&e) || !int_type(&e)) {
		ktype_release(&e);
		return 1;
	}
	if (!a->nelems || a->nelems > PEA_FETCH_DATA_MAX / size) {
		snprintf(w->why, w->len,
			 "'%s': %s is %u bytes; a fetched array is 1..%d",
			 w->expr, out->type.name, a->nelems * size,
			 PEA_FETCH_DATA_MAX);
		ktype_release(&e);
		return -EINVAL;
	}
	ktype_release(&out->type);
	out->type = e;
	out->nelem = a->nelems;
	w->f->type = PEA_FETCH_ARRAY;
	w->f->size = a->nelems * size;
	w->f->offset[w->f->nr_deref] = w->off;
	return 0;
}

/*
 * The final value: a string, or an integer by its type; @fn: the
 * function around the chain (NULL: none), str()'s @n.
 */
static int finish(const struct btf *btf, struct walk *w, struct kfetch *out,
		  const struct kfetch_fn *fn, unsigned int n)
{
	__u32 id = w->id;
	const struct btf_type *t = ktype_skip_mods(btf, &id);
	struct pea_fetch *f = w->f;
	bool want_str = fn && !strcmp(fn->name, "str");
	int r;

	ktype_from_btf(btf, w->id, &out->type);
	if (fn && fn->conv == KFETCH_NTOP) {
		r = finish_ntop(btf, w, out);
		if (r <= 0)
			return r;
	}
	if (fn && fn->conv == KFETCH_BSWAP) {
		unsigned int size = t && (btf_is_int(t) || btf_is_enum(t)) ?
				    t->size : 0;

		out->conv = KFETCH_BSWAP;
		if (!size || (fn->width && size != fn->width) ||
		    (!fn->width && size == 1) ||
		    (t && btf_is_int(t) &&
		     (btf_int_encoding(t) & BTF_INT_BOOL))) {
			if (fn->width)
				snprintf(w->why, w->len,
					 "%s(): %s is no integer of %u bytes",
					 fn->name, out->type.name, fn->width);
			else
				snprintf(w->why, w->len,
					 "%s(): %s is no integer of 2, 4 or 8 bytes",
					 fn->name, out->type.name);
			return -EINVAL;
		}
	}
	if (out->conv && out->type.cls == KT_ENUM) {
		/* Swapped or an address: the number, not a name. */
		out->type.cls = KT_INT;
	}
	if (t && btf_is_array(t) && is_char(btf, btf_array(t)->type) &&
	    !out->conv) {
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
	if (t && btf_is_array(t) && !want_str && w->mem) {
		int r = finish_array(btf, w, out, btf_array(t));

		if (r <= 0)
			return r;
	}
	if (want_str || (out->type.cls == KT_CHAR_PTR && !out->conv)) {
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
	const struct kfetch_fn *fn;
	char name[KSIG_NAME_MAX];
	struct walk w = { .expr = expr, .f = &out->f, .why = why,
			  .len = len };
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
	fn = fn_of(p);
	if (fn && !strcmp(fn->name, "join")) {
		snprintf(why, len,
			 "'%s': join() prints a probe's strings; it is no filter term, key or part of another expression",
			 expr);
		return -EINVAL;
	}
	if (fn) {
		const char *comma, *close = strrchr(p, ')');

		if (!close || close[1]) {
			snprintf(why, len, "'%s': %s( without its closing )",
				 expr, fn->name);
			return -EINVAL;
		}
		p += strlen(fn->name) + 1;
		end = close;
		comma = memchr(p, ',', end - p);
		if (comma && strcmp(fn->name, "str")) {
			snprintf(why, len, "'%s': %s() takes one expression",
				 expr, fn->name);
			return -EINVAL;
		}
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
		if (pa->reg >= 0 && pa->via) {
			/* In memory at the register's address + via_off. */
			out->f.base = PEA_FETCH_BASE_ARG;
			out->f.arg = pa->reg;
			w.mem = true;
			w.off = pa->via_off;
		} else if (pa->reg < 0 && pa->stack_off > 0 && !ret) {
			/* In memory at the entry's stack pointer + offset. */
			out->f.base = PEA_FETCH_BASE_SP;
			w.mem = true;
			w.off = pa->stack_off;
		} else if (pa->reg < 0) {
			snprintf(why, len,
				 "parameter '%s' (%s) is in no argument register",
				 name, pa->type.name);
			return -EINVAL;
		} else {
			out->f.base = PEA_FETCH_BASE_ARG;
			out->f.arg = pa->reg;
		}
		w.id = pa->type_id;
	}
	while (p < end) {
		bool arrow = !strncmp(p, "->", 2);
		char field[KSIG_NAME_MAX];

		if (*p == '[') {
			char *e;
			unsigned long idx = strtoul(p + 1, &e, 10);

			if (!index_len(p) || e > end || idx > KFETCH_INDEX_MAX) {
				snprintf(why, len,
					 "'%s': [N] with N 0..%d expected at '%s'",
					 expr, KFETCH_INDEX_MAX, p);
				return -EINVAL;
			}
			if (index_step(sig->btf, &w, idx))
				return -EINVAL;
			p = e + 1;
			continue;
		}
		if (!arrow && *p != '.') {
			snprintf(why, len, "'%s': expected ->, . or [ at '%s'",
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
	if (finish(sig->btf, &w, out, fn, n)) {
		ktype_release(&out->type);
		return -EINVAL;
	}
	return 0;
}

int kfetch_parse_n(const struct ksig *sig, const char *expr, bool ret,
		   struct kfetch *out, unsigned int room, unsigned int *n,
		   char *why, size_t len)
{
	const struct kfetch_fn *fn = fn_of(expr);
	char chain[KFETCH_EXPR_MAX], elem[KFETCH_EXPR_MAX + 8];
	const char *close, *comma;
	unsigned long want = room;
	unsigned int i;

	*n = 0;
	if (!fn || strcmp(fn->name, "join")) {
		if (!room) {
			snprintf(why, len, "'%s': more than %d fetches", expr,
				 PEA_FETCH_MAX);
			return -EINVAL;
		}
		if (kfetch_parse(sig, expr, ret, out, why, len))
			return -EINVAL;
		*n = 1;
		return 0;
	}
	close = strrchr(expr, ')');
	if (strlen(expr) >= KFETCH_EXPR_MAX || !close || close[1]) {
		snprintf(why, len, "'%.32s': join( without its closing )",
			 expr);
		return -EINVAL;
	}
	snprintf(chain, sizeof(chain), "%.*s", (int)(close - expr - 5),
		 expr + 5);
	comma = strchr(chain, ',');
	if (comma) {
		char *e;

		want = strtoul(comma + 1, &e, 0);
		if (*e || !want || want > PEA_FETCH_MAX) {
			snprintf(why, len,
				 "'%s': join(EXPR,N): N is 1..%d strings (one fetch each)",
				 expr, PEA_FETCH_MAX);
			return -EINVAL;
		}
		chain[comma - chain] = '\0';
	}
	if (!room) {
		snprintf(why, len, "'%s': the probe has no fetch left for it (%d at most)",
			 expr, PEA_FETCH_MAX);
		return -EINVAL;
	}
	if (want > room) {
		snprintf(why, len,
			 "'%s': %lu strings, one fetch each, and the probe's other fetches are more than %d (write join(EXPR,N) with N at most %u)",
			 expr, want, PEA_FETCH_MAX, room);
		return -EINVAL;
	}
	for (i = 0; i < want; i++) {
		snprintf(elem, sizeof(elem), "%s[%u]", chain, i);
		if (strlen(elem) >= KFETCH_EXPR_MAX) {
			snprintf(why, len, "'%s': longer than %d characters",
				 elem, KFETCH_EXPR_MAX - 1);
			goto fail;
		}
		if (kfetch_parse(sig, elem, ret, &out[i], why, len))
			goto fail;
		if (!out[i].str || out[i].conv) {
			snprintf(why, len,
				 "'%s': %s is %s, not a string (join() takes an array of char *)",
				 expr, elem, out[i].type.name);
			kfetch_release(&out[i]);
			goto fail;
		}
		out[i].joined = i > 0;
	}
	snprintf(out[0].expr, sizeof(out[0].expr), "%s", expr);
	out[0].join = want;
	*n = want;
	return 0;
fail:
	while (i)
		kfetch_release(&out[--i]);
	return -EINVAL;
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

/* A fixed array's values, [v,v,...], in text or JSON. */
static void put_array(FILE *f, const struct kfetch *k, const void *b,
		      const struct pea_fetch_value *v, bool json)
{
	unsigned int i, size = k->f.size / k->nelem;
	char buf[64];

	fputc('[', f);
	for (i = 0; i < k->nelem && (i + 1) * size <= v->len; i++) {
		__u64 raw = 0;

		memcpy(&raw, (const char *)b + v->offset + i * size, size);
		if (i)
			fputc(',', f);
		if (json)
			ktype_put_json(f, &k->type, raw);
		else
			fputs(ktype_format(&k->type, raw, buf, sizeof(buf)), f);
	}
	fputc(']', f);
}

__u64 kfetch_conv_int(const struct kfetch *k, __u64 raw)
{
	if (k->conv != KFETCH_BSWAP)
		return raw;
	switch (kfetch_bytes(k)) {
	case 2:
		return bswap_16((__u16)raw);
	case 4:
		return bswap_32((__u32)raw);
	}
	return bswap_64(raw);
}

const char *kfetch_ntop(const void *p, unsigned int len, char *buf,
			size_t size)
{
	if ((len != 4 && len != 16) ||
	    !inet_ntop(len == 4 ? AF_INET : AF_INET6, p, buf, size))
		snprintf(buf, size, "?");
	return buf;
}

int kfetch_join(const struct kfetch *k, const void *b, __u32 i, char *buf,
		size_t size, bool *cut, unsigned int *step)
{
	size_t n = 0;
	unsigned int j;

	*cut = false;
	*step = 0;
	if (size)
		*buf = '\0';
	for (j = 0; j < (k->join ? k->join : 1); j++) {
		struct pea_fetch_value v = value_of(b, i + j);

		if (v.status == PEA_FETCH_FAULT) {
			if (!j) {
				*step = v.step;
				return -1;
			}
			break;	/* the array's NULL, or one not readable */
		}
		if (v.status == PEA_FETCH_TRUNCATED)
			*cut = true;
		if (j && n + 1 < size)
			buf[n++] = ' ';
		if (n + v.len >= size) {
			*cut = true;
			break;
		}
		memcpy(buf + n, (const char *)b + v.offset, v.len);
		n += v.len;
	}
	if (size)
		buf[n < size ? n : size - 1] = '\0';
	return n;
}

/* A join()'s text: PEA_FETCH_MAX strings and their spaces at most. */
#define KFETCH_JOIN_BUF	(PEA_FETCH_MAX * (PEA_FETCH_DATA_MAX + 1))

void kfetch_put(FILE *f, const struct kfetch *k, const void *b, __u32 i)
{
	struct pea_fetch_value v = value_of(b, i);
	char buf[64];

	fprintf(f, "%s=", k->expr);
	if (k->join) {
		static char s[KFETCH_JOIN_BUF];
		unsigned int step;
		bool cut;
		int n = kfetch_join(k, b, i, s, sizeof(s), &cut, &step);

		if (n < 0) {
			fprintf(f, "(fault@%u)", step);
			return;
		}
		c_put_str(f, s, n);
		if (cut)
			fputs("...", f);
	} else if (v.status == PEA_FETCH_FAULT) {
		fprintf(f, "(fault@%u)", v.step);
	} else if (k->conv == KFETCH_NTOP) {
		fputs(kfetch_ntop((const char *)b + v.offset, v.len, buf,
				  sizeof(buf)), f);
	} else if (k->nelem) {
		put_array(f, k, b, &v, false);
	} else if (k->str) {
		c_put_str(f, (const char *)b + v.offset, v.len);
		if (v.status == PEA_FETCH_TRUNCATED)
			fputs("...", f);
	} else {
		fputs(ktype_format(&k->type, kfetch_conv_int(k, int_of(b, &v)),
				   buf, sizeof(buf)), f);
	}
}

void kfetch_put_json(FILE *f, const struct kfetch *k, const void *b,
		     __u32 i)
{
	struct pea_fetch_value v = value_of(b, i);
	char buf[64];

	json_put_str(f, k->expr, strlen(k->expr));
	fputc(':', f);
	if (k->join) {
		static char s[KFETCH_JOIN_BUF];
		unsigned int step;
		bool cut;
		int n = kfetch_join(k, b, i, s, sizeof(s), &cut, &step);

		if (n < 0) {
			fprintf(f, "{\"fault\":%u}", step);
		} else if (cut) {
			fputs("{\"str\":", f);
			json_put_str(f, s, n);
			fputs(",\"truncated\":true}", f);
		} else {
			json_put_str(f, s, n);
		}
	} else if (v.status == PEA_FETCH_FAULT) {
		fprintf(f, "{\"fault\":%u}", v.step);
	} else if (k->conv == KFETCH_NTOP) {
		kfetch_ntop((const char *)b + v.offset, v.len, buf,
			    sizeof(buf));
		json_put_str(f, buf, strlen(buf));
	} else if (k->nelem) {
		put_array(f, k, b, &v, true);
	} else if (k->str && v.status == PEA_FETCH_TRUNCATED) {
		fputs("{\"str\":", f);
		json_put_str(f, (const char *)b + v.offset, v.len);
		fputs(",\"truncated\":true}", f);
	} else if (k->str) {
		json_put_str(f, (const char *)b + v.offset, v.len);
	} else {
		ktype_put_json(f, &k->type, kfetch_conv_int(k, int_of(b, &v)));
	}
}
