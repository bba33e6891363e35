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
#define KFETCH_INDEX_MAX	65535	/* EXPR[N]: N at most */

/* How a fetched value prints (struct kfetch.conv). */
enum kfetch_conv {
	KFETCH_PLAIN,	/* by its type */
	KFETCH_NTOP,	/* ntop(): 4 bytes as IPv4, 16 as IPv6 */
	KFETCH_BSWAP,	/* ntohs(), ntohl(), bswap(): bytes reversed */
};

/**
 * struct kfetch - one fetch expression, resolved
 * @expr:  as given: what it prints as
 * @f:     what the kernel evaluates
 * @type:  the value's type (integers, enums, bool, pointers); for strings
 *         the char pointer or array it was read through; for a fixed
 *         array its elements' type
 * @str:   the value is a string
 * @nelem: the value is a fixed array (PEA_FETCH_ARRAY) of @nelem values
 *         of @type; 0 otherwise
 * @conv:  enum kfetch_conv
 * @join:  the first string of a join(): it prints the join's strings,
 *         its own and the @join - 1 that follow it; else 0
 * @joined: a later string of a join(): printed with its first
 */
struct kfetch {
	char expr[KFETCH_EXPR_MAX];
	struct pea_fetch f;
	struct ktype type;
	bool str;
	unsigned int nelem;
	unsigned char conv;
	unsigned int join;
	bool joined;
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

/*
 * @expr as kfetch_parse() takes it, or join(CHAIN) / join(CHAIN,N): the
 * strings CHAIN[0] .. CHAIN[N-1] (N by default @room, the fetches the
 * probe has left), into @out[0..*@n-1], at most @room of them. 0, or
 * -EINVAL with the reason in @why.
 */
int kfetch_parse_n(const struct ksig *sig, const char *expr, bool ret,
		   struct kfetch *out, unsigned int room, unsigned int *n,
		   char *why, size_t len);

/*
 * The value of a join() whose first string is value @i of block @b: its
 * strings up to the first that failed (the end of a NULL-terminated
 * array), space-joined into @buf of @size bytes. Its length; -1 if the
 * first failed (*@step: which read); *@cut: a string was cut.
 */
int kfetch_join(const struct kfetch *k, const void *b, __u32 i, char *buf,
		size_t size, bool *cut, unsigned int *step);

/* An integer value @raw of @k as it prints (ntohs() and bswap() applied). */
__u64 kfetch_conv_int(const struct kfetch *k, __u64 raw);

/* ntop()'s text of @len bytes at @p into @buf (INET6_ADDRSTRLEN bytes). */
const char *kfetch_ntop(const void *p, unsigned int len, char *buf,
			size_t size);
/* The bytes its value takes at most in a record (before rounding). */
unsigned int kfetch_bytes(const struct kfetch *k);

/*
 * Whether block @b of @size bytes holds at least @nr well-formed values
 * (a probe's printed fetches; --filter's may follow them). Value @i of
 * it:
 * "expr=value" in text, "expr":value in JSON (a fault is
 * {"fault":STEP}, a cut string {"str":"...","truncated":true}, a fixed
 * array [v,v,...] in both).
 */
bool kfetch_block_ok(const void *b, __u32 size, __u32 nr);
void kfetch_put(FILE *f, const struct kfetch *k, const void *b, __u32 i);
void kfetch_put_json(FILE *f, const struct kfetch *k, const void *b,
		     __u32 i);

#endif /* _PEA_KFETCH_H */
