// SPDX-License-Identifier: GPL-2.0
/*
 * pea: a tracepoint link's filter on the fields of its event's entry, as
 * the event's tracefs filter is (kernel/trace/trace_events_filter.c).
 *
 * Two forms. The attr's inline @preds (at most PEA_TP_PRED_MAX), all of
 * which must hold, as before filter programs existed. Or @terms (at most
 * PEA_TP_TERM_MAX comparisons, each a struct pea_tp_pred) joined by a
 * postfix program of struct pea_pred (AND, OR, NOT), which is what
 * Linux's filter compiles "a || !(b && c)" into: its predicate_parse()
 * gives && precedence over || and a "!" before a parenthesis inverts the
 * whole group, and a hit the filter rejects is not committed. The tool
 * does the parsing (tools/pea/tpformat.c); the kernel checks the program
 * with the fetch predicates' checker and runs it with their evaluator
 * (pea_pred_prog_check(), pea_pred_run(): pea_pred.c, pea_pred.h).
 *
 * A program's term may compare a value of the task that hit the
 * tracepoint instead of a field (PEA_TP_FIELD_CTX: comm, tid, pid, uid,
 * gid, cgroup id, CPU), read by pea_ctx.c as a probe's context fetches
 * are; Linux's own filter has comm, cpu and common_pid among its fields
 * (trace_define_generic_fields(), filter_pred_comm()).
 *
 * Matching reads only the entry's bytes, never past @len: a field the
 * entry does not hold fails its comparison. No locks, no allocation, any
 * context (the tracepoint's, NMI included).
 */
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "pea_ctx.h"
#include "pea_intval.h"
#include "pea_perm.h"
#include "pea_pred.h"
#include "pea_tp_filter.h"

static bool pea_tp_str_match(const struct pea_tp_pred *p, const char *s,
			     size_t max)
{
	size_t n = strnlen(s, max);
	bool eq;

	if (p->op == PEA_TP_OP_GLOB)
		return pea_glob(p->str, s, n);
	eq = n == strnlen(p->str, PEA_TP_STR_MAX) && !memcmp(s, p->str, n);
	return p->op == PEA_TP_OP_EQ ? eq : !eq;
}

/*
 * A context term: the current task's comm, or an integer value of it
 * compared unsigned (pea_tp_check_pred() bounded @value to its width).
 */
static bool pea_tp_ctx_match(const struct pea_tp_pred *p,
			     struct pid_namespace *pid_ns)
{
	char comm[TASK_COMM_LEN];
	u64 x;

	if (p->offset == PEA_FETCH_CTX_COMM) {
		pea_ctx_comm(comm);
		return pea_tp_str_match(p, comm, sizeof(comm));
	}
	x = pea_ctx_int(pid_ns, p->offset);
	return pea_int_cmp(p->op, x, p->value, false);
}

/*
 * One predicate on the @len bytes of entry @e, never past them, or on the
 * hit's task (ids in @pid_ns).
 */
static bool pea_tp_pred_match(const struct pea_tp_pred *p, const u8 *e,
			      u32 len, struct pid_namespace *pid_ns)
{
	u32 loc, off, n;
	bool sgn;

	if (p->kind == PEA_TP_FIELD_CTX)
		return pea_tp_ctx_match(p, pid_ns);
	if ((u32)p->offset + p->size > len)
		return false;
	switch (p->kind) {
	case PEA_TP_FIELD_UINT:
	case PEA_TP_FIELD_SINT:
		sgn = p->kind == PEA_TP_FIELD_SINT;
		return pea_int_cmp(p->op, pea_int_load(e + p->offset, p->size,
						       sgn), p->value, sgn);
	case PEA_TP_FIELD_STR:
		return pea_tp_str_match(p, (const char *)e + p->offset,
					p->size);
	default:	/* __data_loc, __rel_loc: u32 (length << 16 | offset) */
		memcpy(&loc, e + p->offset, 4);
		off = loc & 0xffff;
		n = loc >> 16;
		if (p->kind == PEA_TP_FIELD_REL_LOC)
			off += p->offset + 4;
		if (off + n > len)
			return false;
		return pea_tp_str_match(p, (const char *)e + off, n);
	}
}

/**
 * pea_tp_preds_match() - whether an entry passes an attr's inline @preds
 * @preds: the predicates (pea_tp_preds_check() accepted them)
 * @nr: their number
 * @e: the entry
 * @len: its bytes
 *
 * Return: whether all hold (true for none).
 */
bool pea_tp_preds_match(const struct pea_tp_pred *preds, u32 nr,
			const u8 *e, u32 len)
{
	u32 i;

	for (i = 0; i < nr; i++)
		if (!pea_tp_pred_match(&preds[i], e, len, NULL))
			return false;
	return true;
}

/*
 * One predicate or term: field kind and size, operator and operand. A
 * term (@term) also takes PEA_PRED_OP_LE and _GE, and its integer
 * operand must be one the field holds (pea_pred_fits()), as a fetch
 * predicate's; the inline predicates keep the rules they always had. A
 * context term (PEA_TP_FIELD_CTX) is a term's only: @offset a
 * PEA_FETCH_CTX_* value, @size 0, the comm a string, the rest unsigned
 * integers of pea_ctx_width() bytes.
 */
static int pea_tp_check_pred(const struct pea_tp_pred *p, bool term)
{
	bool num = p->kind == PEA_TP_FIELD_UINT || p->kind == PEA_TP_FIELD_SINT;
	u32 size = p->size;

	if (p->reserved)
		return -EINVAL;
	switch (p->kind) {
	case PEA_TP_FIELD_CTX:
		/* @offset the value, @size 0: the kernel knows its width. */
		if (!term || p->size || !pea_ctx_width(p->offset))
			return -EINVAL;
		num = p->offset != PEA_FETCH_CTX_COMM;
		size = pea_ctx_width(p->offset);
		break;
	case PEA_TP_FIELD_UINT:
	case PEA_TP_FIELD_SINT:
		if (p->size != 1 && p->size != 2 && p->size != 4 &&
		    p->size != 8)
			return -EINVAL;
		break;
	case PEA_TP_FIELD_STR:
		if (!p->size)
			return -EINVAL;
		break;
	case PEA_TP_FIELD_DATA_LOC:
	case PEA_TP_FIELD_REL_LOC:
		if (p->size != 4)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (num) {
		if (memchr_inv(p->str, 0, sizeof(p->str)))
			return -EINVAL;
		if (p->op >= PEA_TP_OP_EQ && p->op <= PEA_TP_OP_AND)
			;
		else if (!term ||
			 (p->op != PEA_PRED_OP_LE && p->op != PEA_PRED_OP_GE))
			return -EINVAL;
		if (term && !pea_pred_fits(p->value, size,
					   p->kind == PEA_TP_FIELD_SINT, p->op))
			return -EINVAL;
		return 0;
	}
	if (p->op != PEA_TP_OP_EQ && p->op != PEA_TP_OP_NE &&
	    p->op != PEA_TP_OP_GLOB)
		return -EINVAL;
	if (p->value || !memchr(p->str, 0, sizeof(p->str)))
		return -EINVAL;
	return 0;
}

/**
 * pea_tp_preds_check() - check an attr's inline @preds
 * @a: the attr
 *
 * Return: 0, or -EINVAL (more than PEA_TP_PRED_MAX, a malformed one, a
 * context one (a program's terms only), or an unused one not zero).
 */
int pea_tp_preds_check(const struct pea_tp_attr *a)
{
	u32 i;
	int err;

	if (a->nr_preds > PEA_TP_PRED_MAX)
		return -EINVAL;
	for (i = 0; i < a->nr_preds; i++) {
		err = pea_tp_check_pred(&a->preds[i], false);
		if (err)
			return err;
	}
	if (memchr_inv(&a->preds[a->nr_preds], 0,
		       (PEA_TP_PRED_MAX - a->nr_preds) * sizeof(a->preds[0])))
		return -EINVAL;
	return 0;
}

/* A program's PEA_PRED_CMP: a term's index, nothing else. */
static int pea_tp_check_cmp(const struct pea_pred *p, const void *ctx)
{
	const struct pea_tp_prog *tpp = ctx;

	if (p->fetch >= tpp->nr_terms || p->cmp || p->value ||
	    memchr_inv(p->str, 0, sizeof(p->str)))
		return -EINVAL;
	return 0;
}

static size_t pea_tp_prog_bytes(u32 nr_terms, u32 nr_prog)
{
	return size_add(struct_size_t(struct pea_tp_prog, prog, nr_prog),
			array_size(nr_terms, sizeof(struct pea_tp_pred)));
}

/**
 * pea_tp_prog_copy() - copy and check an attr's filter program
 * @a: the attr (its other fields checked)
 *
 * Return: the program (pea_tp_prog_free()), NULL for none, or
 * ERR_PTR(-E2BIG) (more than PEA_TP_TERM_MAX terms, PEA_TP_PROG_MAX
 * instructions or PEA_PRED_DEPTH_MAX values pending), -EINVAL (terms
 * without a program or the reverse, a pointer without a count, inline
 * @preds too, a malformed term or instruction, a program that does not
 * leave one value), -EFAULT, -EPERM (a term of the uid or gid without
 * CAP_BPF and CAP_PERFMON: pea_perm_kernel_read(), before the terms and
 * the program are checked; the counts' E2BIG and the copy's EFAULT come
 * first) or -ENOMEM.
 */
struct pea_tp_prog *pea_tp_prog_copy(const struct pea_tp_attr *a)
{
	struct pea_tp_prog *tpp;
	struct pea_tp_pred *terms;
	u32 i;
	int err;

	if ((!a->nr_terms && a->terms) || (!a->nr_prog && a->prog))
		return ERR_PTR(-EINVAL);
	if (!a->nr_terms && !a->nr_prog)
		return NULL;
	if (a->nr_terms > PEA_TP_TERM_MAX || a->nr_prog > PEA_TP_PROG_MAX)
		return ERR_PTR(-E2BIG);
	if (!a->nr_terms || !a->nr_prog || a->nr_preds)
		return ERR_PTR(-EINVAL);
	tpp = kzalloc(pea_tp_prog_bytes(a->nr_terms, a->nr_prog),
		      GFP_KERNEL_ACCOUNT);
	if (!tpp)
		return ERR_PTR(-ENOMEM);
	tpp->nr_terms = a->nr_terms;
	tpp->nr_prog = a->nr_prog;
	terms = (struct pea_tp_pred *)&tpp->prog[a->nr_prog];
	tpp->terms = terms;
	if (copy_from_user(tpp->prog, u64_to_user_ptr(a->prog),
			   a->nr_prog * sizeof(tpp->prog[0])) ||
	    copy_from_user(terms, u64_to_user_ptr(a->terms),
			   a->nr_terms * sizeof(terms[0]))) {
		err = -EFAULT;
		goto fail;
	}
	/*
	 * A uid or gid term takes what bpf_get_current_uid_gid() in a
	 * tracepoint program takes, asked before the program is checked, as
	 * bpf(BPF_PROG_LOAD) answers EPERM before its verifier.
	 */
	for (i = 0; i < tpp->nr_terms; i++)
		if (terms[i].kind == PEA_TP_FIELD_CTX &&
		    pea_ctx_is_cred(terms[i].offset)) {
			err = pea_perm_kernel_read();
			if (err)
				goto fail;
			break;
		}
	for (i = 0; i < tpp->nr_terms; i++) {
		err = pea_tp_check_pred(&terms[i], true);
		if (err)
			goto fail;
	}
	err = pea_pred_prog_check(tpp->prog, tpp->nr_prog, pea_tp_check_cmp,
				  tpp);
	if (err)
		goto fail;
	return tpp;
fail:
	kfree(tpp);
	return ERR_PTR(err);
}

/**
 * pea_tp_prog_size() - the bytes a filter program holds, for the quota
 * @tpp: the program, or NULL
 *
 * Return: its allocation's size (0 for none).
 */
size_t pea_tp_prog_size(const struct pea_tp_prog *tpp)
{
	return tpp ? kmalloc_size_roundup(pea_tp_prog_bytes(tpp->nr_terms,
							    tpp->nr_prog)) : 0;
}

/**
 * pea_tp_prog_free() - free what pea_tp_prog_copy() returned
 * @tpp: the program, or NULL
 */
void pea_tp_prog_free(struct pea_tp_prog *tpp)
{
	kfree(tpp);
}

/* An entry, the program's terms and the link's pid ns, for pea_tp_term_match(). */
struct pea_tp_hit {
	const struct pea_tp_pred *terms;
	const u8 *e;
	u32 len;
	struct pid_namespace *pid_ns;
};

static bool pea_tp_term_match(const struct pea_pred *p, const void *ctx)
{
	const struct pea_tp_hit *hit = ctx;

	return pea_tp_pred_match(&hit->terms[p->fetch], hit->e, hit->len,
				 hit->pid_ns);
}

/**
 * pea_tp_prog_match() - whether an entry passes a filter program
 * @tpp: the program (pea_tp_prog_copy())
 * @e: the entry
 * @len: its bytes
 * @pid_ns: the pid namespace a context term's tid and pid are in (the
 *          link's)
 *
 * Return: the value the program leaves.
 */
bool pea_tp_prog_match(const struct pea_tp_prog *tpp, const u8 *e, u32 len,
		       struct pid_namespace *pid_ns)
{
	struct pea_tp_hit hit = {
		.terms = tpp->terms, .e = e, .len = len, .pid_ns = pid_ns,
	};

	return pea_pred_run(tpp->prog, tpp->nr_prog, pea_tp_term_match, &hit);
}
