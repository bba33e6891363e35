/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: integers read out of raw bytes (a tracepoint's fields, a fetched
 * value) and compared, for the tracepoint filter (pea_tp_filter.c), the
 * fetch predicates (pea_pred.c) and the aggregation tables (pea_agg.c),
 * which must agree on them. Any context; nothing here is ABI.
 */
#ifndef _PEA_INTVAL_H
#define _PEA_INTVAL_H

#include <linux/string.h>
#include <linux/types.h>
#include <uapi/linux/pea.h>

/*
 * The integer of @size bytes at @p (1, 2 or 4; any other size reads 8),
 * at any alignment, sign-extended to 64 bits if @is_signed.
 */
static inline u64 pea_int_load(const void *p, u32 size, bool is_signed)
{
	u16 v16;
	u32 v32;
	u64 v64;
	u8 v8;

	switch (size) {
	case 1:
		v8 = *(const u8 *)p;
		return is_signed ? (u64)(s64)(s8)v8 : v8;
	case 2:
		memcpy(&v16, p, 2);
		return is_signed ? (u64)(s64)(s16)v16 : v16;
	case 4:
		memcpy(&v32, p, 4);
		return is_signed ? (u64)(s64)(s32)v32 : v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}

/*
 * @v @op @want, as signed or unsigned 64-bit numbers: PEA_TP_OP_EQ, _NE,
 * _LT, _GT, PEA_PRED_OP_LE, _GE; any other @op is PEA_TP_OP_AND, true
 * when the two share a set bit. The callers checked @op at attach.
 */
static inline bool pea_int_cmp(u32 op, u64 v, u64 want, bool sgn)
{
	switch (op) {
	case PEA_TP_OP_EQ:
		return v == want;
	case PEA_TP_OP_NE:
		return v != want;
	case PEA_TP_OP_LT:
		return sgn ? (s64)v < (s64)want : v < want;
	case PEA_TP_OP_GT:
		return sgn ? (s64)v > (s64)want : v > want;
	case PEA_PRED_OP_LE:
		return sgn ? (s64)v <= (s64)want : v <= want;
	case PEA_PRED_OP_GE:
		return sgn ? (s64)v >= (s64)want : v >= want;
	default:	/* PEA_TP_OP_AND */
		return v & want;
	}
}

#endif /* _PEA_INTVAL_H */
