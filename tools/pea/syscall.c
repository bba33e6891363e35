// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace syscall:NAME: a system call by name, one record per call with
 * its arguments, its return value and its latency, paired per thread as
 * a kretprobe pairs (kprobe.c attaches a kretprobe on the syscall's
 * entry point, __x64_sys_NAME, whose one parameter is the caller's
 * struct pt_regs). The arguments are fetched from those registers, named
 * and typed as the syscall's trace event describes them (tracefs
 * events/syscalls/sys_enter_NAME/format, what bpftrace's args come from):
 * each type looked up in the kernel's BTF (int -100 is -100, umode_t is
 * 16 bits, a pointer prints in hex), a "const char *" whose name says it
 * is a path or a name (filename, pathname, oldname, ...) read as a string
 * of the caller's memory, as bpftrace's str(args->filename). The return
 * value prints signed (long), -2 for ENOENT.
 *
 * x86-64 only: the argument registers are the x86-64 syscall ABI's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "kfetch.h"
#include "syscall.h"
#include "tpformat.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* Syscall argument i's register in struct pt_regs (the x86-64 ABI). */
static const char *const sc_regs[SYSCALL_MAX_ARGS] = {
	"di", "si", "dx", "r10", "r8", "r9",
};

/* A "const char *" that names a file or a name: read as a string. */
static bool str_arg(const struct tp_field *f)
{
	return f->pointer && strstr(f->type, "char") &&
	       (strstr(f->name, "name") || strstr(f->name, "path") ||
		strstr(f->name, "file"));
}

__u8 tp_int_fetch_type(unsigned int size, bool sgn)
{
	switch (size) {
	case 1:
		return sgn ? PEA_FETCH_S8 : PEA_FETCH_U8;
	case 2:
		return sgn ? PEA_FETCH_S16 : PEA_FETCH_U16;
	case 4:
		return sgn ? PEA_FETCH_S32 : PEA_FETCH_U32;
	}
	return sgn ? PEA_FETCH_S64 : PEA_FETCH_U64;
}

/* The register as it is, 8 bytes, named @ctype: a pointer or an integer. */
static void arg_raw(struct kfetch *k, enum ktype_class cls,
		    const char *ctype)
{
	ktype_release(&k->type);
	memset(&k->type, 0, sizeof(k->type));
	k->type.cls = cls;
	k->type.size = 8;
	snprintf(k->type.name, sizeof(k->type.name), "%s", ctype);
	k->f.type = PEA_FETCH_U64;
}

/* C's spellings of BTF's base type names. */
static const struct { const char *c, *btf; } spell[] = {
	{ "unsigned long", "long unsigned int" },
	{ "long", "long int" },
	{ "unsigned", "unsigned int" },
	{ "unsigned short", "short unsigned int" },
	{ "short", "short int" },
	{ "unsigned char", "unsigned char" },
};

/*
 * Type the fetch @k of a register by the event's C type @ctype: a pointer
 * as a pointer, else the BTF type of that name (typedefs and base types;
 * C's "unsigned long" is BTF's "long unsigned int"), else the register
 * as it is (unsigned long).
 */
static void retype(struct kfetch *k, const char *ctype, const struct btf *btf)
{
	char name[TP_TYPE_LEN];
	size_t i, n;
	__s32 id;

	snprintf(name, sizeof(name), "%s",
		 strncmp(ctype, "const ", 6) ? ctype : ctype + 6);
	n = strlen(name);
	while (n && name[n - 1] == ' ')
		name[--n] = '\0';
	if (strchr(name, '*')) {
		arg_raw(k, KT_PTR, ctype);
		return;
	}
	for (i = 0; i < sizeof(spell) / sizeof(spell[0]); i++)
		if (!strcmp(name, spell[i].c))
			snprintf(name, sizeof(name), "%s", spell[i].btf);
	id = btf__find_by_name(btf, name);
	if (id <= 0)
		return;
	ktype_release(&k->type);
	ktype_from_btf(btf, id, &k->type);
	if (k->type.cls != KT_INT && k->type.cls != KT_ENUM &&
	    k->type.cls != KT_BOOL && k->type.cls != KT_PTR) {
		/* A typedef of something else: the register, raw. */
		arg_raw(k, KT_INT, ctype);
		return;
	}
	k->f.type = k->type.cls == KT_PTR ? PEA_FETCH_U64 :
		    tp_int_fetch_type(k->type.size, k->type.sgn &&
			     k->type.cls != KT_BOOL);
}

int syscall_fetches(const char *name, const struct ksig *sig,
		    struct kfetch *out, unsigned int *n, char *why,
		    size_t len)
{
	char ev[TP_NAME_LEN + 16], expr[KFETCH_EXPR_MAX];
	struct tp_format *fmt;
	const char *e = NULL;
	unsigned int arg = 0;
	int i, err;

	*n = 0;
	fmt = malloc(sizeof(*fmt));
	if (!fmt) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	snprintf(ev, sizeof(ev), "sys_enter_%s", name);
	err = tp_format_load("syscalls", ev, fmt, &e);
	if (err) {
		snprintf(why, len, "no trace event syscalls:%s to name its arguments (%s; 'pea list syscalls:sys_enter_*' lists them)",
			 ev, e ? e : strerror(-err));
		free(fmt);
		return -EINVAL;
	}
	err = 0;
	for (i = 0; i < fmt->nfields && arg < SYSCALL_MAX_ARGS; i++) {
		const struct tp_field *f = &fmt->fields[i];
		bool str = str_arg(f);

		if (!strncmp(f->name, "common_", 7) ||
		    !strcmp(f->name, "__syscall_nr"))
			continue;
		/* Arguments are fetched through the regs parameter (BTF). */
		if (!sig || !sig->btf || sig->nparams != 1) {
			snprintf(why, len, "its arguments need the kernel's BTF of %s%s(struct pt_regs *)",
				 SYSCALL_ENTRY_PFX, name);
			err = -EINVAL;
			break;
		}
		snprintf(expr, sizeof(expr), str ? "str(%s->%s)" : "%s->%s",
			 sig->params[0].name, sc_regs[arg]);
		err = kfetch_parse(sig, expr, true, &out[arg], why, len);
		if (err)
			break;
		if (!str)
			retype(&out[arg], f->type, sig->btf);
		snprintf(out[arg].expr, sizeof(out[arg].expr), "%s", f->name);
		arg++;
	}
	free(fmt);
	if (err) {
		while (arg)
			kfetch_release(&out[--arg]);
		return err;
	}
	*n = arg;
	return 0;
}

/*
 * The BTF type of C type @ctype of a trace event's field ("const char
 * *const *", "struct sockaddr *", "int"): its base type found in @btf's
 * base, the pointers to it added to @btf (split on top of it). 0 (void:
 * a base type not found), or the id.
 */
__s32 tp_ctype_id(struct btf *btf, const char *ctype)
{
	char base[TP_TYPE_LEN], *star, *w;
	unsigned int i, nptr = 0;
	const char *c;
	__s32 id;

	for (c = ctype; *c; c++)
		nptr += *c == '*';
	snprintf(base, sizeof(base), "%s", ctype);
	star = strchr(base, '*');
	if (star)
		*star = '\0';
	/* Qualifiers and the __user annotation name no type. */
	while ((w = strstr(base, "const ")) || (w = strstr(base, "volatile ")) ||
	       (w = strstr(base, "__user")))
		memset(w, ' ', strchr(w, ' ') ? (size_t)(strchr(w, ' ') - w) :
			strlen(w));
	for (w = base; *w == ' '; w++)
		;
	memmove(base, w, strlen(w) + 1);
	for (i = strlen(base); i && base[i - 1] == ' '; i--)
		base[i - 1] = '\0';
	for (i = 0; i < sizeof(spell) / sizeof(spell[0]); i++)
		if (!strcmp(base, spell[i].c))
			snprintf(base, sizeof(base), "%s", spell[i].btf);
	if (!strncmp(base, "struct ", 7))
		id = btf__find_by_name_kind(btf, base + 7, BTF_KIND_STRUCT);
	else if (!strncmp(base, "union ", 6))
		id = btf__find_by_name_kind(btf, base + 6, BTF_KIND_UNION);
	else
		id = btf__find_by_name(btf, base);
	if (id < 0)
		id = 0;		/* void: what it points to is not known */
	if (!nptr && !id)
		id = btf__find_by_name(btf, "long unsigned int");
	for (i = 0; i < nptr && id >= 0; i++)
		id = btf__add_ptr(btf, id);
	return id < 0 ? 0 : id;
}

int syscall_sig(const char *name, const struct ksig *entry,
		struct ksig **out, char *why, size_t len)
{
	char ev[TP_NAME_LEN + 16], expr[KFETCH_EXPR_MAX];
	struct tp_format *fmt = NULL;
	struct ksig *s = NULL;
	const char *e = NULL;
	unsigned int arg = 0;
	int i, err = -ENOMEM;

	*out = NULL;
	if (!entry || !entry->btf || entry->nparams != 1)
		return 0;	/* syscall_fetches() says why */
	fmt = malloc(sizeof(*fmt));
	s = calloc(1, sizeof(*s));
	if (!fmt || !s)
		goto oom;
	snprintf(ev, sizeof(ev), "sys_enter_%s", name);
	if (tp_format_load("syscalls", ev, fmt, &e)) {
		free(fmt);
		free(s);
		return 0;	/* syscall_fetches() says why */
	}
	s->own_btf = btf__new_empty_split((struct btf *)entry->btf);
	if (!s->own_btf)
		goto oom;
	s->btf = s->own_btf;
	snprintf(s->func, sizeof(s->func), "%s", entry->func);
	s->ret_id = entry->ret_id;
	ktype_from_btf(s->btf, s->ret_id, &s->ret);
	for (i = 0; i < fmt->nfields && arg < SYSCALL_MAX_ARGS; i++) {
		const struct tp_field *f = &fmt->fields[i];
		struct ksig_param *pa = &s->params[s->nparams];
		struct kfetch k;

		if (!strncmp(f->name, "common_", 7) ||
		    !strcmp(f->name, "__syscall_nr"))
			continue;
		/* Where the register is in the struct pt_regs. */
		snprintf(expr, sizeof(expr), "%s->%s", entry->params[0].name,
			 sc_regs[arg++]);
		err = kfetch_parse(entry, expr, false, &k, why, len);
		if (err)
			goto fail;
		kfetch_release(&k);
		snprintf(pa->name, sizeof(pa->name), "%s", f->name);
		pa->reg = entry->params[0].reg;
		pa->via = true;
		pa->via_off = k.f.offset[0];
		pa->type_id = tp_ctype_id(s->own_btf, f->type);
		ktype_from_btf(s->btf, pa->type_id, &pa->type);
		s->nparams++;
	}
	/* And the entry point's own parameter (regs), after them. */
	s->params[s->nparams] = entry->params[0];
	s->params[s->nparams].type.vals = NULL;
	s->params[s->nparams].type.nvals = 0;
	s->nparams++;
	free(fmt);
	*out = s;
	return 0;
oom:
	snprintf(why, len, "out of memory");
	err = -ENOMEM;
fail:
	free(fmt);
	ksig_free(s);
	return err;
}
