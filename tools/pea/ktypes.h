/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: the types of a kernel function's parameters and return value, from
 * the kernel's BTF (/sys/kernel/btf/vmlinux, /sys/kernel/btf/MODULE) read
 * with libbpf's BTF API, and how a register's value of such a type prints
 * (docs/btf.md).
 */
#ifndef _PEA_KTYPES_H
#define _PEA_KTYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct btf;
struct btf_type;

/* What a value of a type is, for printing and aggregating it. */
enum ktype_class {
	KT_RAW,		/* not typed here: the register as it is */
	KT_INT,		/* an integer of @size bytes, @sgn */
	KT_BOOL,	/* _Bool */
	KT_ENUM,	/* an enum: its values' names */
	KT_CHAR_PTR,	/* char * (any const, signedness) */
	KT_PTR,		/* any other pointer */
	KT_STRUCT,	/* a struct by value */
	KT_UNION,	/* a union by value */
	KT_VOID,	/* void (a return type) */
};

#define KTYPE_NAME_MAX		96	/* a type's C spelling, bytes */
#define KTYPE_ENUM_MAX		512	/* enum values kept */
#define KSIG_MAX_PARAMS		16
#define KSIG_NAME_MAX		64

struct ktype_enum_val {
	__s64 val;
	char *name;
};

/**
 * struct ktype - a classified type
 * @cls:   what it is
 * @size:  its bytes (1, 2, 4, 8 for integers and enums; 8 for pointers)
 * @sgn:   a signed integer or enum
 * @name:  its C spelling ("int", "unsigned int", "enum foo",
 *         "const char *", "struct file *", a typedef's name)
 * @vals:  KT_ENUM: its values, @nvals of them
 */
struct ktype {
	enum ktype_class cls;
	unsigned int size;
	bool sgn;
	char name[KTYPE_NAME_MAX];
	struct ktype_enum_val *vals;
	unsigned int nvals;
};

/**
 * struct ksig_param - one parameter of a function
 * @name: its name in BTF ("" when it has none)
 * @type: its type
 * @reg:  the argument register it arrives in (0..5: arg0..arg5 of the
 *        x86-64 calling convention), or -1 (on the stack, or past a
 *        parameter whose place is not known)
 */
struct ksig_param {
	char name[KSIG_NAME_MAX];
	struct ktype type;
	int reg;
	__u32 type_id;	/* its BTF type in struct ksig.btf */
	int stack_off;	/* reg -1, on the stack: its offset from the stack
			 * pointer at the function's entry (8: the first;
			 * the return address is at 0); 0: not there
			 * (known from DWARF only: udwarf.c)
			 */
	bool via;	/* in memory at register @reg's address +
			 * @via_off (a syscall's argument in the struct
			 * pt_regs its entry point is given: syscall.c)
			 */
	int via_off;
};

/**
 * struct ksig - a function's signature
 * @func:    its name
 * @module:  the module it is in ("" for vmlinux)
 * @ret:     the return type
 * @params:  the parameters, @nparams of them
 * @variadic: ends in "..."
 * @btf:     the BTF the types are from (vmlinux's, kept for the process,
 *           or the module's, freed with the ksig): fetch chains walk it
 * @ret_id:  the return type's BTF id
 */
struct ksig {
	char func[KSIG_NAME_MAX * 2];
	char module[KSIG_NAME_MAX];
	struct ktype ret;
	struct ksig_param params[KSIG_MAX_PARAMS];
	unsigned int nparams;
	bool variadic;
	const struct btf *btf;
	struct btf *own_btf;	/* freed with the ksig */
	__u32 ret_id;
};

/* Where the kernel's BTF is; tests point it elsewhere (PEA_BTF_DIR). */
#define KTYPES_BTF_DIR	"/sys/kernel/btf"

/*
 * The signature of kernel function @func: from vmlinux's BTF, or from its
 * module's (the module /proc/kallsyms names; MODULE:NAME, as kprobe:
 * takes it, that module's). 0 with *@out set (free it
 * with ksig_free()), or -errno with the reason in @why (@len bytes): the
 * kernel has no BTF (-ENOENT, ENODATA: the function is not in it).
 */
int ksig_load(const char *func, struct ksig **out, char *why, size_t len);

/*
 * vmlinux's BTF, loaded once for the process, or NULL with the reason in
 * @why (@len bytes).
 */
const struct btf *ktypes_vmlinux(char *why, size_t len);
/* The signature of the BTF FUNC @func in @btf: 0 or -ENOENT. */
int ksig_from_btf(const struct btf *btf, const char *func, struct ksig *s);

void ksig_free(struct ksig *s);

/*
 * Skip typedefs and qualifiers from BTF type *@id (updated): the type, or
 * NULL for void or a chain over 32 deep.
 */
const struct btf_type *ktype_skip_mods(const struct btf *btf, __u32 *id);

/* Classify BTF type @id of @btf into @t (enum values copied). */
void ktype_from_btf(const struct btf *btf, __u32 id, struct ktype *t);
void ktype_release(struct ktype *t);

/* Whether @t prints differently from the raw 64-bit register. */
static inline bool ktype_typed(const struct ktype *t)
{
	return t && (t->cls == KT_INT || t->cls == KT_BOOL ||
		     t->cls == KT_ENUM || t->cls == KT_CHAR_PTR ||
		     t->cls == KT_PTR);
}

/*
 * A register's @raw value as a value of @t: cut to its width, then sign-
 * or zero-extended to 64 bits (an int -22 that arrives as 0xffffffea is
 * -22).
 */
__u64 ktype_value(const struct ktype *t, __u64 raw);

/* Whether values of @t are signed numbers; whether they print in hex. */
bool ktype_signed(const struct ktype *t);
bool ktype_hex(const struct ktype *t);

/*
 * @raw as a value of @t in @buf (@len bytes): an integer in decimal, a
 * bool as true or false, an enum by its value's name (the number when no
 * name has it), a pointer as 0x...; an untyped @t: the register as a
 * signed number. Returns @buf.
 */
const char *ktype_format(const struct ktype *t, __u64 raw, char *buf,
			 size_t len);

/*
 * The same as a JSON value: a number, true or false, an enum's name as a
 * string (a number when no name has it), a pointer as a "0x..." string.
 */
void ktype_put_json(FILE *f, const struct ktype *t, __u64 raw);

/* The name of enum @t's value @raw, or NULL (no name, no enum). */
const char *ktype_enum_name(const struct ktype *t, __u64 raw);

/* The parameter called @name, or NULL. */
const struct ksig_param *ksig_param(const struct ksig *s, const char *name);

/* "int do_unlinkat(int dfd, struct filename *name)" */
void ksig_print(FILE *f, const struct ksig *s);

#endif /* _PEA_KTYPES_H */
