// SPDX-License-Identifier: GPL-2.0
/*
 * pea_selftest: PEA_ST_IOC_FETCH calls pea_st_fetch_target() with known
 * arguments: a struct pea_st_fobj pointer whose fields are known and
 * whose @next, @null and @bad lead to another object, NULL and an
 * address nothing can read; a kernel string; a user pointer the caller
 * chose; NULL; a number; a negative int. test_fetch and test_tool_fetch
 * probe it with pea's fetch chains and compare every byte.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "pea_selftest.h"
#include "pea_st_fetch.h"

/**
 * pea_st_fetch_target() - the function test_fetch probes
 * @o: the outer object
 * @kstr: PEA_ST_FETCH_KSTR
 * @ustr: a user pointer
 * @null: NULL
 * @n: a number of the caller's
 * @neg: -5
 *
 * Return: PEA_ST_FETCH_RET.
 */
noinline long pea_st_fetch_target(struct pea_st_fobj *o, const char *kstr,
				  const char __user *ustr, void *null, s64 n,
				  int neg)
{
	asm volatile("" : : "r"(o), "r"(kstr), "r"(ustr), "r"(null), "r"(n),
		     "r"(neg) : "memory");
	return PEA_ST_FETCH_RET;
}

static void st_fetch_fill(struct pea_st_fobj *o, bool outer, const char *str,
			  struct pea_st_fobj *next)
{
	int i;

	o->magic = outer ? PEA_ST_FETCH_MAGIC : ~PEA_ST_FETCH_MAGIC;
	o->neg = outer ? -5 : -7;
	o->small = outer ? 0xbeef : 0x1234;
	o->byte = outer ? 0x7f : 0x80;
	o->str = (u64)(unsigned long)str;
	o->next = (u64)(unsigned long)next;
	o->null = 0;
	o->bad = PEA_ST_FETCH_BAD;
	for (i = 0; i < 8; i++)
		o->bytes[i] = (outer ? 1 : 11) + i;
	strscpy(o->name, outer ? "outer-name" : "inner-name", sizeof(o->name));
}

static const char st_outer_str[] = "outer-str";
static const char st_inner_str[] = "inner";

/**
 * st_fetch() - PEA_ST_IOC_FETCH
 * @uarg: struct pea_st_fetch
 *
 * Return: 0, -EFAULT or -ENOMEM.
 */
long st_fetch(void __user *uarg)
{
	struct pea_st_fobj *o;
	struct pea_st_fetch f;
	u32 i;

	if (copy_from_user(&f, uarg, sizeof(f)))
		return -EFAULT;
	o = kcalloc(2, sizeof(*o), GFP_KERNEL);
	if (!o)
		return -ENOMEM;
	st_fetch_fill(&o[1], false, st_inner_str, NULL);
	st_fetch_fill(&o[0], true, st_outer_str, &o[1]);
	for (i = 0; i < f.count; i++)
		f.ret = pea_st_fetch_target(o, PEA_ST_FETCH_KSTR,
					    u64_to_user_ptr(f.ustr), NULL,
					    f.n, -5);
	kfree(o);
	return copy_to_user(uarg, &f, sizeof(f)) ? -EFAULT : 0;
}
