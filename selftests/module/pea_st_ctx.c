// SPDX-License-Identifier: GPL-2.0
/*
 * pea_selftest: context payload append (PEA_F_CTXLEN_MASK).
 *
 * PEA_ST_IOC_CTX_OUTPUT builds a context with known bytes, a socket
 * buffer (all linear, or a linear head and page fragments) or a plain
 * buffer, and writes it with pea_skb_output() or pea_output_ctx() after
 * the caller's metadata, so that user space can check every byte, from
 * task context or from an NMI (a self-IPI) on the calling CPU.
 */
#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/sched/clock.h>
#include <asm/apic.h>
#include <asm/nmi.h>
#include <linux/pea.h>
#include "pea_selftest.h"
#include "pea_st_ctx.h"

/* Calls of the copy callbacks; the ioctl runs under the module's mutex. */
static struct {
	u32 copies;
	u64 off;
	u64 len;
	u32 short_at;
} cx;

static unsigned long st_ctx_copy(void *dst, const void *src,
				 unsigned long off, unsigned long len)
{
	cx.copies++;
	cx.off = off;
	cx.len = len;
	memcpy(dst, src + off, len);
	return 0;
}

/* Copies the first cx.short_at bytes, reports the rest not copied. */
static unsigned long st_ctx_copy_short(void *dst, const void *src,
				       unsigned long off, unsigned long len)
{
	unsigned long n = min_t(unsigned long, len, cx.short_at);

	cx.copies++;
	cx.off = off;
	cx.len = len;
	memcpy(dst, src + off, n);
	return len - n;
}

static void st_ctx_fill(u8 *p, u32 from, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		p[i] = pea_st_ctx_byte(from + i);
}

#ifdef CONFIG_NET
/* A socket buffer of @a->len bytes: @a->headlen linear, then frags. */
static struct sk_buff *st_ctx_skb(const struct pea_st_ctx_output *a)
{
	bool paged = a->kind == PEA_ST_SKB_PAGED;
	u32 head = paged ? min(a->headlen, a->len) : a->len;
	u32 done, n, off, i = 0;
	struct sk_buff *skb;
	struct page *page;

	if (paged && (!a->frag_size || a->frag_size > PAGE_SIZE / 2))
		return ERR_PTR(-EINVAL);
	skb = alloc_skb(head, GFP_KERNEL);
	if (!skb)
		return ERR_PTR(-ENOMEM);
	st_ctx_fill(skb_put(skb, head), 0, head);
	for (done = head; done < a->len; done += n, i++) {
		if (i >= MAX_SKB_FRAGS) {
			kfree_skb(skb);
			return ERR_PTR(-EINVAL);
		}
		page = alloc_page(GFP_KERNEL);
		if (!page) {
			kfree_skb(skb);
			return ERR_PTR(-ENOMEM);
		}
		n = min(a->frag_size, a->len - done);
		off = pea_st_frag_off(i);
		memset(page_address(page), 0xee, PAGE_SIZE);
		st_ctx_fill(page_address(page) + off, done, n);
		skb_fill_page_desc(skb, i, page, off, n);
		skb->len += n;
		skb->data_len += n;
		skb->truesize += PAGE_SIZE;
	}
	return skb;
}

static void st_ctx_skb_free(struct sk_buff *skb)
{
	consume_skb(skb);
}

#else
/* Without networking there are no socket buffers: the ioctl refuses. */
static struct sk_buff *st_ctx_skb(const struct pea_st_ctx_output *a)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static void st_ctx_skb_free(struct sk_buff *skb)
{
}
#endif /* CONFIG_NET */

static long st_ctx_call(struct pea_map *map, struct pea_st_ctx_output *a,
			const void *meta, struct sk_buff *skb, const void *ctx)
{
	switch (a->kind) {
#ifdef CONFIG_NET
	case PEA_ST_SKB_LINEAR:
	case PEA_ST_SKB_PAGED:
	case PEA_ST_SKB_NULL:
		return pea_skb_output(map, a->flags, skb, meta, a->meta_size);
#endif
	case PEA_ST_CTX_COPY:
		return pea_output_ctx(map, a->flags, meta, a->meta_size, ctx,
				      st_ctx_copy);
	case PEA_ST_CTX_SHORT:
		return pea_output_ctx(map, a->flags, meta, a->meta_size, ctx,
				      st_ctx_copy_short);
	case PEA_ST_CTX_MEMCPY:
		return pea_output_ctx(map, a->flags, meta, a->meta_size, ctx,
				      NULL);
	default:
		return pea_output_ctx(map, a->flags, meta, a->meta_size, NULL,
				      st_ctx_copy);
	}
}

/* The calls of one ioctl, made where the caller asked. */
static struct {
	struct pea_map *map;
	struct pea_st_ctx_output *a;
	const void *meta;
	struct sk_buff *skb;
	const void *ctx;
	int done;
} cr;

static DEFINE_PER_CPU(int, cr_nmi_armed);

static void st_ctx_calls(void)
{
	struct pea_st_ctx_output *a = cr.a;
	u32 i;

	a->n_ok = 0;
	a->ret = 0;
	for (i = 0; i < a->count; i++) {
		a->ret = st_ctx_call(cr.map, a, cr.meta, cr.skb, cr.ctx);
		if (!a->ret)
			a->n_ok++;
	}
	a->cpu = raw_smp_processor_id();
	a->in_nmi = !!in_nmi();
	WRITE_ONCE(cr.done, 1);
}

static int st_ctx_nmi(unsigned int type, struct pt_regs *regs)
{
	if (!this_cpu_read(cr_nmi_armed))
		return NMI_DONE;
	this_cpu_write(cr_nmi_armed, 0);
	st_ctx_calls();
	return NMI_HANDLED;
}

/* Make the calls in an NMI sent to this CPU; waits at most a second. */
static long st_ctx_calls_in_nmi(void)
{
	long err;
	u64 start;

	err = register_nmi_handler(NMI_LOCAL, st_ctx_nmi, 0, "pea_st_ctx");
	if (err)
		return err;
	preempt_disable();
	this_cpu_write(cr_nmi_armed, 1);
	apic->send_IPI_self(NMI_VECTOR);
	start = local_clock();
	while (!READ_ONCE(cr.done) && local_clock() - start < NSEC_PER_SEC)
		cpu_relax();
	this_cpu_write(cr_nmi_armed, 0);
	preempt_enable();
	unregister_nmi_handler(NMI_LOCAL, "pea_st_ctx");
	return READ_ONCE(cr.done) ? 0 : -ETIMEDOUT;
}

/**
 * st_ctx_output() - PEA_ST_IOC_CTX_OUTPUT
 * @uarg: a struct pea_st_ctx_output
 *
 * Return: 0 with the results in @uarg, or a negative errno.
 */
long st_ctx_output(void __user *uarg)
{
	struct pea_st_ctx_output a;
	struct sk_buff *skb = NULL;
	struct pea_map *map;
	void *meta, *ctx = NULL;
	u64 copy;
	long err = 0;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	a.map[sizeof(a.map) - 1] = 0;
	if (a.kind >= PEA_ST_CTX_NR_KINDS || a.len > (1U << 20))
		return -EINVAL;
	copy = a.meta_size > (1U << 20) ? 1 : a.meta_size;
	meta = kvmalloc(copy ? copy : 1, GFP_KERNEL);
	if (!meta)
		return -ENOMEM;
	if (copy_from_user(meta, u64_to_user_ptr(a.meta), copy)) {
		err = -EFAULT;
		goto out_meta;
	}
	if (a.kind == PEA_ST_SKB_LINEAR || a.kind == PEA_ST_SKB_PAGED ||
	    (!IS_ENABLED(CONFIG_NET) && a.kind == PEA_ST_SKB_NULL)) {
		skb = st_ctx_skb(&a);
		if (IS_ERR(skb)) {
			err = PTR_ERR(skb);
			goto out_meta;
		}
		a.nr_frags = skb_shinfo(skb)->nr_frags;
		a.data_len = skb->data_len;
	} else if (a.kind != PEA_ST_SKB_NULL) {
		ctx = kvmalloc(a.len ? a.len : 1, GFP_KERNEL);
		if (!ctx) {
			err = -ENOMEM;
			goto out_meta;
		}
		st_ctx_fill(ctx, 0, a.len);
	}
	map = pea_map_get_by_name(a.map);
	if (IS_ERR(map)) {
		err = PTR_ERR(map);
		goto out_ctx;
	}
	memset(&cx, 0, sizeof(cx));
	cx.short_at = a.short_at;
	cr.map = map;
	cr.a = &a;
	cr.meta = meta;
	cr.skb = skb;
	cr.ctx = ctx;
	cr.done = 0;
	if (a.nmi)
		err = st_ctx_calls_in_nmi();
	else
		st_ctx_calls();
	a.copies = cx.copies;
	a.copy_off = cx.off;
	a.copy_len = cx.len;
	pea_map_put(map);
	if (!err && copy_to_user(uarg, &a, sizeof(a)))
		err = -EFAULT;
out_ctx:
	st_ctx_skb_free(skb);
	kvfree(ctx);
out_meta:
	kvfree(meta);
	return err;
}
