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

#endif /* _PEA_SYSCALL_H */
