// SPDX-License-Identifier: GPL-2.0
/*
 * pea: kernel functions' signatures from BTF, read with libbpf's BTF API,
 * and the printing of a register's value by its type.
 *
 * vmlinux's BTF is /sys/kernel/btf/vmlinux; a module's is
 * /sys/kernel/btf/MODULE, split BTF on top of vmlinux's. A function not
 * in vmlinux's BTF is looked for in the module /proc/kallsyms names for
 * it. Types are classified once (struct ktype) and no BTF object is kept
 * past ksig_load(): what prints a value needs only the struct ktype.
 *
 * Registers: the x86-64 calling convention passes the first six integer
 * or pointer parameters in rdi, rsi, rdx, rcx, r8, r9 (arg0..arg5 of a
 * probe record). A struct or union by value of at most 8 bytes takes one
 * register, of at most 16 two, larger ones go on the stack; a parameter
 * after one on the stack keeps its register count (the stack takes none).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "pea_tool.h"
#include "ktypes.h"

#define KALLSYMS	"/proc/kallsyms"

/* Type names longer than KTYPE_NAME_MAX are cut, on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

static const char *btf_dir(void)
{
	const char *d = getenv("PEA_BTF_DIR");

	return d && *d ? d : KTYPES_BTF_DIR;
}

const struct btf_type *ktype_skip_mods(const struct btf *btf, __u32 *id)
{
	const struct btf_type *t;
	int guard = 0;

	while (*id && guard++ < 32) {
		t = btf__type_by_id(btf, *id);
		if (!t)
			return NULL;
		if (!btf_is_typedef(t) && !btf_is_mod(t))
			return t;
		*id = t->type;
	}
	return NULL;
}

/* The C spelling of type @id into @buf. */
static void type_name(const struct btf *btf, __u32 id, char *buf,
		      size_t len, int depth)
{
	const struct btf_type *t = id ? btf__type_by_id(btf, id) : NULL;
	const char *n;
	char sub[KTYPE_NAME_MAX];

	if (!t || depth > 8) {
		snprintf(buf, len, "void");
		return;
	}
	n = btf__name_by_offset(btf, t->name_off);
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_FLOAT:
		snprintf(buf, len, "%s", n && *n ? n : "?");
		break;
	case BTF_KIND_STRUCT:
		snprintf(buf, len, "struct %s", n && *n ? n : "(anon)");
		break;
	case BTF_KIND_UNION:
		snprintf(buf, len, "union %s", n && *n ? n : "(anon)");
		break;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		snprintf(buf, len, "enum %s", n && *n ? n : "(anon)");
		break;
	case BTF_KIND_FWD:
		snprintf(buf, len, "%s %s", btf_kflag(t) ? "union" : "struct",
			 n);
		break;
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		type_name(btf, t->type, sub, sizeof(sub), depth + 1);
		if (btf_kind(t) == BTF_KIND_CONST)
			snprintf(buf, len, "const %s", sub);
		else if (btf_kind(t) == BTF_KIND_VOLATILE)
			snprintf(buf, len, "volatile %s", sub);
		else
			snprintf(buf, len, "%s", sub);
		break;
	case BTF_KIND_PTR:
		type_name(btf, t->type, sub, sizeof(sub), depth + 1);
		snprintf(buf, len, "%s%s*", sub,
			 sub[strlen(sub) - 1] == '*' ? "" : " ");
		break;
	case BTF_KIND_FUNC_PROTO:
		snprintf(buf, len, "(function)");
		break;
	case BTF_KIND_ARRAY:
		type_name(btf, btf_array(t)->type, sub, sizeof(sub), depth + 1);
		snprintf(buf, len, "%s[%u]", sub, btf_array(t)->nelems);
		break;
	default:
		snprintf(buf, len, "?");
		break;
	}
}

static void copy_enum(const struct btf *btf, const struct btf_type *t,
		      struct ktype *k)
{
	unsigned int i, n = btf_vlen(t);

	if (n > KTYPE_ENUM_MAX)
		n = KTYPE_ENUM_MAX;
	k->vals = calloc(n ? n : 1, sizeof(*k->vals));
	if (!k->vals)
		return;
	for (i = 0; i < n; i++) {
		const char *name;
		__s64 v;

		if (btf_is_enum(t)) {
			const struct btf_enum *e = btf_enum(t) + i;

			name = btf__name_by_offset(btf, e->name_off);
			v = k->sgn ? (__s64)e->val : (__s64)(__u32)e->val;
		} else {
			const struct btf_enum64 *e = btf_enum64(t) + i;

			name = btf__name_by_offset(btf, e->name_off);
			v = (__s64)btf_enum64_value(e);
		}
		k->vals[k->nvals].val = v;
		k->vals[k->nvals].name = strdup(name ? name : "?");
		if (!k->vals[k->nvals].name)
			break;
		k->nvals++;
	}
}

void ktype_from_btf(const struct btf *btf, __u32 id, struct ktype *k)
{
	const struct btf_type *t, *to;
	__u32 rid = id, tid;

	memset(k, 0, sizeof(*k));
	type_name(btf, id, k->name, sizeof(k->name), 0);
	t = ktype_skip_mods(btf, &rid);
	if (!t) {
		k->cls = rid ? KT_RAW : KT_VOID;
		return;
	}
	switch (btf_kind(t)) {
	case BTF_KIND_INT: {
		__u32 enc = btf_int_encoding(t);

		k->size = t->size;
		k->sgn = enc & BTF_INT_SIGNED;
		if (enc & BTF_INT_BOOL)
			k->cls = KT_BOOL;
		else if (t->size == 1 || t->size == 2 || t->size == 4 ||
			 t->size == 8)
			k->cls = KT_INT;
		break;
	}
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		k->cls = KT_ENUM;
		k->size = t->size;
		k->sgn = btf_kflag(t);
		if (k->size != 1 && k->size != 2 && k->size != 4 &&
		    k->size != 8) {
			k->cls = KT_RAW;
			break;
		}
		copy_enum(btf, t, k);
		break;
	case BTF_KIND_PTR:
		k->cls = KT_PTR;
		k->size = 8;
		tid = t->type;
		to = ktype_skip_mods(btf, &tid);
		if (to && btf_is_int(to) && to->size == 1 &&
		    !(btf_int_encoding(to) & BTF_INT_BOOL))
			k->cls = KT_CHAR_PTR;
		break;
	case BTF_KIND_STRUCT:
		k->cls = KT_STRUCT;
		k->size = t->size;
		break;
	case BTF_KIND_UNION:
		k->cls = KT_UNION;
		k->size = t->size;
		break;
	default:
		break;
	}
}

void ktype_release(struct ktype *k)
{
	unsigned int i;

	for (i = 0; i < k->nvals; i++)
		free(k->vals[i].name);
	free(k->vals);
	k->vals = NULL;
	k->nvals = 0;
}

/* Registers a parameter of @k takes: 1 or 2, or 0 (on the stack). */
static int regs_of(const struct ktype *k)
{
	if (k->cls == KT_STRUCT || k->cls == KT_UNION)
		return k->size <= 8 ? 1 : k->size <= 16 ? 2 : 0;
	return 1;
}

int ksig_from_btf(const struct btf *btf, const char *func, struct ksig *s)
{
	const struct btf_type *fn, *proto;
	const struct btf_param *p;
	__s32 id = btf__find_by_name_kind(btf, func, BTF_KIND_FUNC);
	unsigned int i, n;
	int reg = 0;

	if (id <= 0)
		return -ENOENT;
	fn = btf__type_by_id(btf, id);
	proto = fn ? btf__type_by_id(btf, fn->type) : NULL;
	if (!proto || !btf_is_func_proto(proto))
		return -ENOENT;
	snprintf(s->func, sizeof(s->func), "%s", func);
	s->btf = btf;
	s->ret_id = proto->type;
	ktype_from_btf(btf, proto->type, &s->ret);
	n = btf_vlen(proto);
	p = btf_params(proto);
	for (i = 0; i < n && s->nparams < KSIG_MAX_PARAMS; i++) {
		struct ksig_param *q = &s->params[s->nparams];
		const char *name = btf__name_by_offset(btf, p[i].name_off);
		int r;

		if (!p[i].type && i == n - 1) {	/* "..." */
			s->variadic = true;
			break;
		}
		snprintf(q->name, sizeof(q->name), "%s", name ? name : "");
		q->type_id = p[i].type;
		ktype_from_btf(btf, p[i].type, &q->type);
		r = regs_of(&q->type);
		if (r && reg >= 0 && reg + r <= 6) {
			q->reg = r == 1 ? reg : -1;	/* two: no one value */
			reg += r;
		} else {
			q->reg = -1;
			if (r)
				reg = 6;	/* the rest is on the stack */
		}
		s->nparams++;
	}
	return 0;
}

void ksig_free(struct ksig *s)
{
	unsigned int i;

	if (!s)
		return;
	ktype_release(&s->ret);
	for (i = 0; i < s->nparams; i++)
		ktype_release(&s->params[i].type);
	btf__free(s->own_btf);
	free(s);
}

/*
 * Module functions as /proc/kallsyms lists them ("NAME [MODULE]"), read
 * once per process and sorted by name: a glob's hundreds of probes each
 * ask, and the kernel formats the whole file at every read.
 */
struct mod_sym {
	char *name;
	size_t seq;		/* its line's place: equal names keep it */
	char mod[KSIG_NAME_MAX];
};

static struct mod_sym *mod_syms;
static size_t nmod_syms;
static bool mod_syms_read;

static int mod_sym_name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct mod_sym *)a)->name,
		      ((const struct mod_sym *)b)->name);
}

static int mod_sym_cmp(const void *a, const void *b)
{
	const struct mod_sym *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static void mod_syms_load(void)
{
	char line[512], name[256], m[KSIG_NAME_MAX + 2];
	size_t cap = 0;
	FILE *f = fopen(KALLSYMS, "r");

	mod_syms_read = true;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%*s %*s %255s %65s", name, m);

		if (n != 2 || m[0] != '[')
			continue;
		if (nmod_syms == cap) {
			size_t c = cap ? 2 * cap : 1024;
			struct mod_sym *v = realloc(mod_syms, c * sizeof(*v));

			if (!v)
				break;
			mod_syms = v;
			cap = c;
		}
		mod_syms[nmod_syms].name = strdup(name);
		if (!mod_syms[nmod_syms].name)
			break;
		m[strcspn(m, "]")] = '\0';
		snprintf(mod_syms[nmod_syms].mod, KSIG_NAME_MAX, "%s", m + 1);
		mod_syms[nmod_syms].seq = nmod_syms;
		nmod_syms++;
	}
	fclose(f);
	qsort(mod_syms, nmod_syms, sizeof(*mod_syms), mod_sym_cmp);
}

/* The module /proc/kallsyms names for function @func, or "" (vmlinux). */
static void func_module(const char *func, char *mod, size_t len)
{
	struct mod_sym key = { .name = (char *)func }, *m;

	*mod = '\0';
	if (!mod_syms_read)
		mod_syms_load();
	m = nmod_syms ? bsearch(&key, mod_syms, nmod_syms, sizeof(*mod_syms),
				mod_sym_name_cmp) : NULL;
	if (!m)
		return;
	/* The first of equal names in kallsyms' order, as a scan finds. */
	while (m > mod_syms && !strcmp(m[-1].name, func))
		m--;
	snprintf(mod, len, "%s", m->mod);
}

static struct btf *vmlinux_btf;	/* loaded once for the process */

const struct btf *ktypes_vmlinux(char *why, size_t len)
{
	char path[512];
	int err;

	if (!vmlinux_btf) {
		snprintf(path, sizeof(path), "%s/vmlinux", btf_dir());
		vmlinux_btf = btf__parse(path, NULL);
		if (!vmlinux_btf) {
			err = errno;
			snprintf(why, len,
				 "no BTF: %s: %s (a kernel without CONFIG_DEBUG_INFO_BTF); ret and arguments are raw registers",
				 path, strerror(err));
			vmlinux_btf = NULL;
		}
	}
	return vmlinux_btf;
}

int ksig_load(const char *func, struct ksig **out, char *why, size_t len)
{
	char path[512], mod[KSIG_NAME_MAX];
	struct btf *mbtf;
	const char *colon;
	struct ksig *s;
	int err;

	*out = NULL;
	if (!ktypes_vmlinux(why, len))
		return -ENOENT;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	colon = strchr(func, ':');
	if (colon) {
		/* MODULE:NAME (a kprobe's): that module's function. */
		snprintf(mod, sizeof(mod), "%.*s", (int)(colon - func), func);
		func = colon + 1;
	} else if (!ksig_from_btf(vmlinux_btf, func, s)) {
		*out = s;
		return 0;
	} else {
		func_module(func, mod, sizeof(mod));
	}
	if (!*mod) {
		free(s);
		snprintf(why, len,
			 "no BTF for '%s' in vmlinux (not a kernel function, or static and inlined or renamed by the compiler); ret and arguments are raw registers",
			 func);
		return -ENODATA;
	}
	snprintf(path, sizeof(path), "%s/%s", btf_dir(), mod);
	mbtf = btf__parse_split(path, vmlinux_btf);
	if (!mbtf) {
		err = errno;
		free(s);
		snprintf(why, len,
			 "no BTF for module %s: %s: %s (built without BTF: CONFIG_DEBUG_INFO_BTF_MODULES and pahole, with the kernel's vmlinux); ret and arguments are raw registers",
			 mod, path, strerror(err));
		return -ENODATA;
	}
	err = ksig_from_btf(mbtf, func, s);
	if (err) {
		btf__free(mbtf);
		free(s);
		snprintf(why, len,
			 "no BTF for '%s' in module %s's BTF; ret and arguments are raw registers",
			 func, mod);
		return -ENODATA;
	}
	snprintf(s->module, sizeof(s->module), "%s", mod);
	s->own_btf = mbtf;
	*out = s;
	return 0;
}

__u64 ktype_value(const struct ktype *t, __u64 raw)
{
	unsigned int bits;

	if (!t || (t->cls != KT_INT && t->cls != KT_ENUM && t->cls != KT_BOOL))
		return raw;
	if (t->cls == KT_BOOL)
		return (raw & 0xff) != 0;
	bits = t->size * 8;
	if (bits >= 64)
		return raw;
	raw &= (1ULL << bits) - 1;
	if (t->sgn && (raw >> (bits - 1)) & 1)
		raw |= ~0ULL << bits;
	return raw;
}

bool ktype_signed(const struct ktype *t)
{
	if (!ktype_typed(t))
		return true;	/* the raw register: as before, signed */
	return (t->cls == KT_INT || t->cls == KT_ENUM) && t->sgn;
}

bool ktype_hex(const struct ktype *t)
{
	return t && (t->cls == KT_PTR || t->cls == KT_CHAR_PTR);
}

static const char *enum_name(const struct ktype *t, __u64 v)
{
	unsigned int i;

	for (i = 0; i < t->nvals; i++)
		if ((__u64)t->vals[i].val == v ||
		    ktype_value(t, (__u64)t->vals[i].val) == v)
			return t->vals[i].name;
	return NULL;
}

const char *ktype_format(const struct ktype *t, __u64 raw, char *buf,
			 size_t len)
{
	__u64 v = ktype_value(t, raw);
	const char *n;

	if (!ktype_typed(t)) {
		snprintf(buf, len, "%lld", (long long)raw);
		return buf;
	}
	switch (t->cls) {
	case KT_BOOL:
		snprintf(buf, len, "%s", v ? "true" : "false");
		break;
	case KT_ENUM:
		n = enum_name(t, v);
		if (n)
			snprintf(buf, len, "%s", n);
		else if (t->sgn)
			snprintf(buf, len, "%lld", (long long)v);
		else
			snprintf(buf, len, "%llu", (unsigned long long)v);
		break;
	case KT_PTR:
	case KT_CHAR_PTR:
		snprintf(buf, len, "0x%llx", (unsigned long long)v);
		break;
	default:
		if (t->sgn)
			snprintf(buf, len, "%lld", (long long)v);
		else
			snprintf(buf, len, "%llu", (unsigned long long)v);
		break;
	}
	return buf;
}

void ktype_put_json(FILE *f, const struct ktype *t, __u64 raw)
{
	char buf[64];
	__u64 v = ktype_value(t, raw);
	const char *n;

	if (ktype_typed(t) && t->cls == KT_ENUM) {
		n = enum_name(t, v);
		if (n) {
			json_put_str(f, n, strlen(n));
			return;
		}
	}
	ktype_format(t, raw, buf, sizeof(buf));
	if (ktype_hex(t))
		fprintf(f, "\"%s\"", buf);
	else
		fputs(buf, f);
}

const char *ktype_enum_name(const struct ktype *t, __u64 raw)
{
	if (!ktype_typed(t) || t->cls != KT_ENUM)
		return NULL;
	return enum_name(t, ktype_value(t, raw));
}

const struct ksig_param *ksig_param(const struct ksig *s, const char *name)
{
	unsigned int i;

	if (!s || !*name)
		return NULL;
	for (i = 0; i < s->nparams; i++)
		if (!strcmp(s->params[i].name, name))
			return &s->params[i];
	return NULL;
}

static void put_decl(FILE *f, const char *type, const char *name)
{
	size_t n = strlen(type);

	fprintf(f, "%s%s%s", type, n && type[n - 1] == '*' ? "" : " ", name);
}

void ksig_print(FILE *f, const struct ksig *s)
{
	unsigned int i;

	put_decl(f, s->ret.name, s->func);
	fputc('(', f);
	for (i = 0; i < s->nparams; i++) {
		if (i)
			fputs(", ", f);
		put_decl(f, s->params[i].type.name, s->params[i].name);
	}
	if (s->variadic)
		fputs(s->nparams ? ", ..." : "...", f);
	else if (!s->nparams)
		fputs("void", f);
	fputc(')', f);
}
