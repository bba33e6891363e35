/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: fetch expressions after a uprobe or uretprobe, in kprobe_events'
 * fetch syntax with the type said (no BTF for user code): ufetch.c.
 */
#ifndef _PEA_UFETCH_H
#define _PEA_UFETCH_H

#include <stdbool.h>
#include <stddef.h>
#include "kfetch.h"

/* Whether @text looks like a uprobe fetch expression rather than a PROBE. */
bool ufetch_is_expr(const char *text);

/*
 * Parse @expr (@ret: a uretprobe, where ret is the return value) into
 * @out, printed as its NAME= or as itself. 0, or -EINVAL with the reason
 * in @why.
 */
int ufetch_parse(const char *expr, bool ret, struct kfetch *out, char *why,
		 size_t len);

/*
 * A uprobe's fetch expression either way: in the syntax above (argN,
 * ret:TYPE, +OFF(VALUE), NAME=, str(argN)), or by name through @sig, the
 * function's signature from DWARF (udwarf.c), in kfetch.c's syntax
 * ('name', 'p->field', 'str(p->name,N)', ret at a uretprobe: typed).
 * @sig_why: why @sig is NULL (a name is then refused with it). 0, or
 * -EINVAL with the reason in @why.
 */
int ufetch_resolve(const struct ksig *sig, const char *sig_why,
		   const char *expr, bool ret, struct kfetch *out, char *why,
		   size_t len);

#endif /* _PEA_UFETCH_H */
