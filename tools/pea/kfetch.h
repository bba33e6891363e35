/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: fetch expressions after a kprobe or kretprobe ('filename',
 * 'how->flags', 'str(file->f_path.dentry->d_name.name)'), resolved
 * against the function's BTF into the struct pea_fetch the kernel
 * evaluates (kfetch.c), and their values printed by type (docs/btf.md).
 */
#ifndef _PEA_KFETCH_H
#define _PEA_KFETCH_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/pea.h>
#include "ktypes.h"

#define KFETCH_EXPR_MAX		128	/* an expression's bytes, NUL included */
#define KFETCH_STR_DEFAULT	64	/* a string's bytes, as bpftrace's str() */

/**
 * struct kfetch - one fetch expression, resolved
 * @expr:  as given: what it prints as
 * @f:     what the kernel evaluates
 * @type:  the value's type (integers, enums, bool, pointers); for strings
 *         the char pointer or array it was read through
 * @str:   the value is a string
 */
struct kfetch {
	char expr[KFETCH_EXPR_MAX];
	struct pea_fetch f;
	struct ktype type;
	bool str;
};

/* Whether @text looks like a fetch expression rather than a PROBE. */
bool kfetch_is_expr(const char *text);

/*
 * Resolve @expr against @sig (@ret: a kretprobe, where 'ret' names the
 * return value) into @out. 0, or -EINVAL with the reason in @why.
 */
int kfetch_parse(const struct ksig *sig, const char *expr, bool ret,
		 struct kfetch *out, char *why, size_t len);
void kfetch_release(struct kfetch *k);
/* The bytes its value takes at most in a record (before rounding). */
unsigned int kfetch_bytes(const struct kfetch *k);

/*
 * Whether block @b of @size bytes holds at least @nr well-formed values
 * (a probe's printed fetches; --filter's may follow them). Value @i of
 * it:
 * "expr=value" in text, "expr":value in JSON (a fault is
 * {"fault":STEP}, a cut string {"str":"...","truncated":true}).
 */
bool kfetch_block_ok(const void *b, __u32 size, __u32 nr);
void kfetch_put(FILE *f, const struct kfetch *k, const void *b, __u32 i);
void kfetch_put_json(FILE *f, const struct kfetch *k, const void *b,
		     __u32 i);

#endif /* _PEA_KFETCH_H */
