// SPDX-License-Identifier: GPL-2.0
/*
 * pea: predicates on a probe's fetched values (struct pea_pred): a
 * postfix program of comparisons joined by AND, OR and NOT, checked at
 * attach (bounded length and depth, operands of the right kind, one value
 * left) and evaluated at each hit after the fetches, before the record is
 * reserved, as the kernel's event filters run before an event is
 * committed (kernel/trace/trace_events_filter.c evaluates its own
 * postfix program of predicates, with a bounded stack).
 *
 * The evaluation is a bit stack in one u32 (PEA_PRED_DEPTH_MAX <= 32): no
 * locks, no allocation, any context. The check of a program's shape and
 * its evaluation (pea_pred_run(), pea_pred.h) are shared with the
 * tracepoint filter (pea_tp_filter.c), whose programs join comparisons
 * on an event's fields instead.
 */
#include <linux/bitops.h>
#include <linux/bits.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "pea_fetch.h"
#include "pea_intval.h"
#include "pea_pred.h"

static_assert(PEA_PRED_DEPTH_MAX <= 32);

/**
 * pea_glob() - match a byte string against a glob pattern
 * @pat: NUL-terminated: '*' matches any run of bytes, '?' one byte,
 *       anything else itself
 * @s: the bytes
 * @len: their number
 *
 * Iterative, with one backtrack point (the last '*'): O(len * strlen(pat))
 * at worst, no recursion.
 *
 * Return: whether all of @s matches.
 */
bool pea_glob(const char *pat, const char *s, size_t len)
{
	const char *star = NULL;
	size_t i = 0, star_i = 0;

	while (i < len) {
		if (*pat == '*') {
			star = ++pat;
			star_i = i;
		} else if (*pat && (*pat == '?' || *pat == s[i])) {
			pat++;
			i++;
		} else if (star) {
			pat = star;
			i = ++star_i;
		} else {
			return false;
		}
	}
	while (*pat == '*')
		pat++;
	return !*pat;
}

static bool pea_pred_is_str(const struct pea_fetch *f)
{
	return f->type == PEA_FETCH_STR;
}

static bool pea_pred_is_int(const struct pea_fetch *f)
{
	return f->type >= PEA_FETCH_U8 && f->type <= PEA_FETCH_S64;
}

/**
 * pea_pred_fits() - whether an integer operand is one a value can hold
 * @value: the operand, sign-extended to 64 bits if negative
 * @width: the value's bytes (1, 2, 4 or 8)
 * @sgn: whether the value is signed
 * @cmp: the comparison (PEA_TP_OP_* or PEA_PRED_OP_*)
 *
 * Whether the integer operand @value is one a fetch of @width bytes holds:
 * a signed fetch's operand in the signed range of its width, an unsigned
 * one's in the unsigned range, as Linux's filter parses a field's operand
 * for the field's type (kstrtoll or kstrtoull in parse_pred(),
 * kernel/trace/trace_events_filter.c) and compares at its width; where
 * Linux truncates a wider operand, a value no hit can hold is refused
 * here, so "== -1" on a u32 is an error, not a comparison never true. A
 * mask (PEA_TP_OP_AND) is bits: either range of the width, and the
 * comparison masks both sides to the width (pea_pred_cmp()).
 * The tracepoint filter's terms (pea_tp_filter.c) follow the same rule.
 *
 * Return: true if @value fits.
 */
bool pea_pred_fits(u64 value, u32 width, bool sgn, u32 cmp)
{
	bool fits_u, fits_s;

	if (width >= 8)
		return true;
	fits_u = !(value >> (8 * width));
	fits_s = sign_extend64(value, 8 * width - 1) == (s64)value;
	if (cmp == PEA_TP_OP_AND)
		return fits_u || fits_s;
	return sgn ? fits_s : fits_u;
}

static int pea_pred_check_cmp(const struct pea_pred *p,
			      const struct pea_fetch_set *fs)
{
	const struct pea_fetch *f;

	if (p->fetch >= fs->nr)
		return -EINVAL;
	f = &fs->f[p->fetch];
	if (pea_pred_is_str(f)) {
		if (p->value || !memchr(p->str, 0, sizeof(p->str)))
			return -EINVAL;
		return p->cmp == PEA_TP_OP_EQ || p->cmp == PEA_TP_OP_NE ||
		       p->cmp == PEA_TP_OP_GLOB ? 0 : -EINVAL;
	}
	if (!pea_pred_is_int(f) || memchr_inv(p->str, 0, sizeof(p->str)))
		return -EINVAL;
	switch (p->cmp) {
	case PEA_TP_OP_EQ:
	case PEA_TP_OP_NE:
	case PEA_TP_OP_LT:
	case PEA_TP_OP_GT:
	case PEA_TP_OP_AND:
	case PEA_PRED_OP_LE:
	case PEA_PRED_OP_GE:
		return pea_pred_fits(p->value, pea_fetch_width(f->type),
				     f->type >= PEA_FETCH_S8, p->cmp) ?
		       0 : -EINVAL;
	}
	return -EINVAL;
}

/**
 * pea_pred_prog_check() - check a postfix program's shape
 * @prog: the program, as the attacher gave it
 * @nr: its instructions (the caller bounded them)
 * @check_cmp: checks one PEA_PRED_CMP instruction against what it
 *             compares: 0 or a negative errno
 * @ctx: what @check_cmp checks against
 *
 * Walks the stack a hit would see: reserved bytes zero, operators' other
 * fields zero, every operator with its operands, at most
 * PEA_PRED_DEPTH_MAX values pending and exactly one left at the end.
 *
 * Return: 0, -E2BIG (too deep), -EINVAL, or @check_cmp's error.
 */
int pea_pred_prog_check(const struct pea_pred *prog, u32 nr,
			int (*check_cmp)(const struct pea_pred *p,
					 const void *ctx),
			const void *ctx)
{
	u32 i, depth = 0;
	int err;

	for (i = 0; i < nr; i++) {
		const struct pea_pred *p = &prog[i];

		if (memchr_inv(p->reserved, 0, sizeof(p->reserved)))
			return -EINVAL;
		if (p->op != PEA_PRED_CMP &&
		    (p->fetch || p->cmp || p->value ||
		     memchr_inv(p->str, 0, sizeof(p->str))))
			return -EINVAL;
		switch (p->op) {
		case PEA_PRED_CMP:
			err = check_cmp(p, ctx);
			if (err)
				return err;
			if (++depth > PEA_PRED_DEPTH_MAX)
				return -E2BIG;
			break;
		case PEA_PRED_AND:
		case PEA_PRED_OR:
			if (depth < 2)
				return -EINVAL;
			depth--;
			break;
		case PEA_PRED_NOT:
			if (!depth)
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
	return depth == 1 ? 0 : -EINVAL;
}

static int pea_pred_check_fetch_cmp(const struct pea_pred *p, const void *fs)
{
	return pea_pred_check_cmp(p, fs);
}

/**
 * pea_pred_copy() - copy and check an attach's predicate
 * @uptr: user pointer to @nr struct pea_pred
 * @nr: instructions, 0..PEA_PRED_MAX
 * @reserved: the attr's field after @nr, which must be zero
 * @fs: the probe's fetches (pea_fetch_copy()), or NULL
 *
 * Return: the set (pea_pred_free()), NULL for none, or ERR_PTR(-E2BIG)
 * (more than PEA_PRED_MAX instructions or PEA_PRED_DEPTH_MAX pending
 * values), -EINVAL, -EFAULT or -ENOMEM.
 */
struct pea_pred_set *pea_pred_copy(u64 uptr, u32 nr, u32 reserved,
				   const struct pea_fetch_set *fs)
{
	struct pea_pred_set *ps;
	int err;

	if (reserved)
		return ERR_PTR(-EINVAL);
	if (!nr)
		return uptr ? ERR_PTR(-EINVAL) : NULL;
	if (nr > PEA_PRED_MAX)
		return ERR_PTR(-E2BIG);
	if (!fs)
		return ERR_PTR(-EINVAL);
	ps = kzalloc(struct_size(ps, p, nr), GFP_KERNEL_ACCOUNT);
	if (!ps)
		return ERR_PTR(-ENOMEM);
	ps->nr = nr;
	if (copy_from_user(ps->p, u64_to_user_ptr(uptr),
			   nr * sizeof(ps->p[0]))) {
		err = -EFAULT;
		goto fail;
	}
	err = pea_pred_prog_check(ps->p, ps->nr, pea_pred_check_fetch_cmp, fs);
	if (err)
		goto fail;
	return ps;
fail:
	kfree(ps);
	return ERR_PTR(err);
}

/**
 * pea_pred_size() - the bytes a predicate holds, for the attacher's quota
 * @ps: the predicate, or NULL
 *
 * Return: its allocation's size (0 for none).
 */
size_t pea_pred_size(const struct pea_pred_set *ps)
{
	return ps ? kmalloc_size_roundup(struct_size(ps, p, ps->nr)) : 0;
}

/**
 * pea_pred_free() - free what pea_pred_copy() returned
 * @ps: the set, or NULL
 */
void pea_pred_free(struct pea_pred_set *ps)
{
	kfree(ps);
}

/* A hit's fetches and their values, for pea_pred_cmp(). */
struct pea_pred_hit {
	const struct pea_fetch_set *fs;
	const u8 *block;
};

/* One comparison on the value of its fetch in the hit's block. */
static bool pea_pred_cmp(const struct pea_pred *p, const void *ctx)
{
	const struct pea_pred_hit *hit = ctx;
	const struct pea_fetch_block *b = (const void *)hit->block;
	const struct pea_fetch_value *v = &b->values[p->fetch];
	const struct pea_fetch *f = &hit->fs->f[p->fetch];
	const u8 *val = hit->block + v->offset;
	bool eq, sgn;
	u64 x;

	if (v->status == PEA_FETCH_FAULT)
		return false;
	if (pea_pred_is_str(f)) {
		if (p->cmp == PEA_TP_OP_GLOB)
			return pea_glob(p->str, val, v->len);
		eq = v->len == strnlen(p->str, sizeof(p->str)) &&
		     !memcmp(val, p->str, v->len);
		return p->cmp == PEA_TP_OP_EQ ? eq : !eq;
	}
	sgn = f->type >= PEA_FETCH_S8;
	x = pea_int_load(val, v->len, sgn);
	if (p->cmp == PEA_TP_OP_AND && v->len < 8)
		return x & p->value & GENMASK_ULL(8 * v->len - 1, 0);
	return pea_int_cmp(p->cmp, x, p->value, sgn);
}

/**
 * pea_pred_eval() - whether a hit's values pass the probe's predicate
 * @ps: the predicate (checked against @fs at attach)
 * @fs: the probe's fetches
 * @block: their values, from pea_fetch_eval()
 *
 * Return: the value the program leaves.
 */
bool pea_pred_eval(const struct pea_pred_set *ps,
		   const struct pea_fetch_set *fs, const void *block)
{
	struct pea_pred_hit hit = { .fs = fs, .block = block };

	return pea_pred_run(ps->p, ps->nr, pea_pred_cmp, &hit);
}
