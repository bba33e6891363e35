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

static __u8 int_type(unsigned int size, bool sgn)
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

/*
 * Type the fetch @k of a register by the event's C type @ctype: a pointer
 * as a pointer, else the BTF type of that name (typedefs and base types;
 * C's "unsigned long" is BTF's "long unsigned int"), else the register
 * as it is (unsigned long).
 */
static void retype(struct kfetch *k, const char *ctype, const struct btf *btf)
{
	static const struct { const char *c, *btf; } spell[] = {
		{ "unsigned long", "long unsigned int" },
		{ "long", "long int" },
		{ "unsigned", "unsigned int" },
		{ "unsigned short", "short unsigned int" },
		{ "short", "short int" },
		{ "unsigned char", "unsigned char" },
	};
	char name[TP_TYPE_LEN];
	size_t i, n;
	__s32 id;

	snprintf(name, sizeof(name), "%s",
		 strncmp(ctype, "const ", 6) ? ctype : ctype + 6);
	n = strlen(name);
	while (n && name[n - 1] == ' ')
		name[--n] = '\0';
	if (strchr(name, '*')) {
		ktype_release(&k->type);
		memset(&k->type, 0, sizeof(k->type));
		k->type.cls = KT_PTR;
		k->type.size = 8;
		snprintf(k->type.name, sizeof(k->type.name), "%s", ctype);
		k->f.type = PEA_FETCH_U64;
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
		ktype_release(&k->type);
		memset(&k->type, 0, sizeof(k->type));
		k->type.cls = KT_INT;
		k->type.size = 8;
		snprintf(k->type.name, sizeof(k->type.name), "%s", ctype);
		k->f.type = PEA_FETCH_U64;
		return;
	}
	k->f.type = k->type.cls == KT_PTR ? PEA_FETCH_U64 :
		    int_type(k->type.size, k->type.sgn &&
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
		snprintf(why, len, "syscall:%s: no trace event syscalls:%s to name its arguments (%s; 'pea list syscalls:sys_enter_*' lists them)",
			 name, ev, e ? e : strerror(-err));
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
			snprintf(why, len, "syscall:%s: its arguments need the kernel's BTF of %s%s(struct pt_regs *)",
				 name, SYSCALL_ENTRY_PFX, name);
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
