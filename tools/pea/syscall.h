/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea trace syscall:NAME: the syscall's arguments, named and typed by its
 * trace event, fetched from the registers its entry point is given
 * (syscall.c).
 */
#ifndef _PEA_SYSCALL_H
#define _PEA_SYSCALL_H

#include <stddef.h>
#include "kfetch.h"

#define SYSCALL_PFX		"syscall:"
#define SYSENTER_PFX		"sysenter:"	/* a kprobe at the entry */
#define SYSCALL_ENTRY_PFX	"__x64_sys_"	/* the entry point's prefix */
#define SYSCALL_MAX_ARGS	6

/*
 * The fetches of syscall @name's arguments against @sig, the signature
 * of its entry point (SYSCALL_ENTRY_PFX NAME; NULL without BTF, which a
 * syscall without arguments does without): up to SYSCALL_MAX_ARGS into
 * @out, their number in *@n. 0, or -errno with the reason in @why.
 */
int syscall_fetches(const char *name, const struct ksig *sig,
		    struct kfetch *out, unsigned int *n, char *why,
		    size_t len);

/*
 * What fetch expressions after syscall:NAME (and sysenter:NAME) name:
 * the syscall's arguments, each in its register in the struct pt_regs
 * its entry point @entry is given, typed as its trace event says (a
 * "const char *const *" argv is one: argv[1], join(argv)), then @entry's
 * own parameter. 0 with *@out set (NULL: the entry point or the event
 * has no types; syscall_fetches() says why), or -errno with the reason
 * in @why. Free it with ksig_free().
 */
int syscall_sig(const char *name, const struct ksig *entry,
		struct ksig **out, char *why, size_t len);

struct btf;

/*
 * The BTF type of C type @ctype of a trace event's field ("const char
 * *const *", "struct sockaddr *", "int"): its base type found in @btf's
 * base, the pointers to it added to @btf (split BTF on top of it). 0
 * (void: a base type not found), or the id. Syscall arguments' types
 * (syscall_sig()) and a tracepoint's fields' (tpfetch.c).
 */
__s32 tp_ctype_id(struct btf *btf, const char *ctype);

/* The PEA_FETCH_U8..S64 type of an integer of @size bytes (8: any other). */
__u8 tp_int_fetch_type(unsigned int size, bool sgn);

#endif /* _PEA_SYSCALL_H */
