// SPDX-License-Identifier: GPL-2.0
/*
 * pea: a user function's parameters and return value from DWARF, for
 * uprobes and uretprobes: read with elfutils' libdw, converted into a BTF
 * of their own with libbpf's BTF writer, so that the fetch expressions of
 * kfetch.c, the types of ktypes.c, --filter and the aggregations take a
 * user function's signature as they take a kernel function's.
 *
 * The DWARF is the file's own, or its separate debug file: by build-id
 * under /usr/lib/debug/.build-id/ (Debian's -dbgsym packages), or where
 * its .gnu_debuglink names one (next to it, in its .debug/, or under
 * /usr/lib/debug by its directory, as gdb looks; its CRC checked).
 * The function is the DW_TAG_subprogram of that name (or linkage name)
 * with code, the one at the symbol's address when several have the name.
 *
 * Types are converted from the function's parameters and return type
 * outward, breadth first by pointer hops: a pointer more than
 * UDWARF_PTR_DEPTH hops away points to void (no fetch chain reaches it),
 * and at most UDWARF_MAX_TYPES DWARF types are taken (the rest are void).
 * Each DWARF type becomes one BTF type (an array of N dimensions N of
 * them), so every id is known before it is written and the writer's
 * forward references need no second pass.
 *
 * Registers follow the x86-64 SysV ABI, as bpftrace maps a uprobe's
 * arguments: each integer-class parameter (integers, enums, bool,
 * pointers) takes the next of rdi, rsi, rdx, rcx, r8, r9 (arg0..arg5);
 * floating-point ones take SSE registers and no integer register; a
 * struct or union by value of at most 16 bytes takes an integer register
 * for each eightbyte that holds an integer and an SSE register for each
 * that holds only floating point (all of it on the stack if they do not
 * all fit), a larger one goes on the stack; a struct returned in memory
 * takes rdi for its address. A parameter on the stack (past the integer
 * registers, or in memory) is at a known offset from the stack pointer
 * at the entry (struct ksig_param.stack_off: 8 for the first, each
 * aligned to 8 bytes, 16 for a 16-byte aligned type, and a whole number
 * of eightbytes), which a uprobe fetches from PEA_FETCH_BASE_SP. The
 * others (floating point in SSE registers, which the kernel gives a
 * uprobe no access to, a struct by value in registers, a 128-bit
 * integer) are refused by name with the reason (usig_param_why()).
 */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <zlib.h>
#include "pea_tool.h"
#include "udwarf.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define UDWARF_MAX_TYPES	8192	/* DWARF types converted per function */
#define UDWARF_PTR_DEPTH	(PEA_FETCH_DEPTH_MAX + 2)
#define UDWARF_MAX_DIMS		8	/* dimensions of one array type */
#define UDWARF_MAX_ENUMS	4096	/* values of one enum */

/* Where a parameter or the return value is (struct usig). */
enum ud_where {
	UW_REG,		/* one integer register (ret: rax) */
	UW_SSE,		/* floating point: SSE registers */
	UW_BYVAL,	/* a struct or union by value */
	UW_STACK,	/* past the six integer registers */
	UW_MEM,		/* in memory (long double, a large struct) */
	UW_PAIR,	/* two integer registers (__int128) */
	UW_VOID,	/* ret: none */
};

/* A signature from DWARF: ksig_free() frees it (the ksig comes first). */
struct usig {
	struct ksig s;
	unsigned char where[KSIG_MAX_PARAMS];
	unsigned char ret_where;
};

/* One DWARF type on the way to BTF. */
struct ud_ent {
	Dwarf_Die die;
	int depth;
	unsigned int nbtf;	/* BTF types it becomes; 0: @alias */
	int alias;		/* nbtf 0: the entry it is (-1: void) */
	__u32 id;		/* its (first) BTF id */
	bool done;
};

struct ud_plan {
	struct ud_ent *e;
	unsigned int n;
	unsigned int *hash;	/* die.addr -> index + 1, open addressing */
	unsigned int hcap;
	unsigned int *lvl[UDWARF_PTR_DEPTH + 2];	/* work per depth */
	unsigned int nlvl[UDWARF_PTR_DEPTH + 2];
};

static unsigned int slot_of(const struct ud_plan *p, const void *addr)
{
	unsigned long h = (unsigned long)(uintptr_t)addr;

	h ^= h >> 17;
	h *= 0x9e3779b97f4a7c15UL;
	return (unsigned int)(h >> 20) & (p->hcap - 1);
}

static int lookup(const struct ud_plan *p, const Dwarf_Die *d)
{
	unsigned int s = slot_of(p, d->addr);

	while (p->hash[s]) {
		if (p->e[p->hash[s] - 1].die.addr == d->addr)
			return (int)p->hash[s] - 1;
		s = (s + 1) & (p->hcap - 1);
	}
	return -1;
}

/* Take DWARF type @d at @depth into the plan: its index, or -1 (void). */
static int visit(struct ud_plan *p, const Dwarf_Die *d, int depth)
{
	int i = lookup(p, d);
	unsigned int s;

	if (i >= 0) {
		struct ud_ent *e = &p->e[i];

		if (!e->done && depth < e->depth) {
			/* Nearer than first seen: do it at this depth. */
			e->depth = depth;
			p->lvl[depth][p->nlvl[depth]++] = i;
		}
		return i;
	}
	if (p->n == UDWARF_MAX_TYPES || depth > UDWARF_PTR_DEPTH)
		return -1;
	i = p->n++;
	memset(&p->e[i], 0, sizeof(p->e[i]));
	p->e[i].die = *d;
	p->e[i].depth = depth;
	p->e[i].alias = -1;
	s = slot_of(p, d->addr);
	while (p->hash[s])
		s = (s + 1) & (p->hcap - 1);
	p->hash[s] = i + 1;
	p->lvl[depth][p->nlvl[depth]++] = i;
	return i;
}

/* The type @d refers to (DW_AT_type): true with *@out, false for void. */
static bool type_of(Dwarf_Die *d, Dwarf_Die *out)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(d, DW_AT_type, &a) &&
	       dwarf_formref_die(&a, out);
}

static bool attr_u(Dwarf_Die *d, unsigned int name, Dwarf_Word *v)
{
	Dwarf_Attribute a;

	return dwarf_attr(d, name, &a) && !dwarf_formudata(&a, v);
}

static unsigned int dims(Dwarf_Die *d)
{
	Dwarf_Die c;
	unsigned int n = 0;

	if (dwarf_child(d, &c) == 0) {
		do {
			if (dwarf_tag(&c) == DW_TAG_subrange_type)
				n++;
		} while (n < UDWARF_MAX_DIMS && dwarf_siblingof(&c, &c) == 0);
	}
	return n ? n : 1;
}

/* What entry @i becomes, and the types it refers to, into the plan. */
static void plan_one(struct ud_plan *p, int i)
{
	struct ud_ent *e = &p->e[i];
	Dwarf_Die d = e->die, r, c;
	int depth = e->depth;

	e->done = true;
	e->nbtf = 1;
	switch (dwarf_tag(&d)) {
	case DW_TAG_base_type:
	case DW_TAG_enumeration_type:
	case DW_TAG_subroutine_type:
		break;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		if (type_of(&d, &r))
			visit(p, &r, depth + 1);
		break;
	case DW_TAG_typedef:
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type:
		if (type_of(&d, &r))
			visit(p, &r, depth);
		break;
	case DW_TAG_atomic_type:	/* as the type itself */
		e->nbtf = 0;
		if (type_of(&d, &r))
			p->e[i].alias = visit(p, &r, depth);
		break;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		if (dwarf_hasattr(&d, DW_AT_declaration) ||
		    dwarf_child(&d, &c))
			break;
		do {
			int tag = dwarf_tag(&c);

			if ((tag == DW_TAG_member || tag == DW_TAG_inheritance) &&
			    type_of(&c, &r))
				visit(p, &r, depth);
		} while (dwarf_siblingof(&c, &c) == 0);
		break;
	case DW_TAG_array_type:
		e->nbtf = dims(&d);
		if (type_of(&d, &r))
			visit(p, &r, depth);
		break;
	default:			/* unspecified_type and the rest: void */
		e->nbtf = 0;
		break;
	}
}

/* The BTF id of the type @d refers to (0: void or not converted). */
static __u32 id_of(const struct ud_plan *p, Dwarf_Die *d)
{
	Dwarf_Die r;
	int i, guard = 0;

	if (!type_of(d, &r))
		return 0;
	i = lookup(p, &r);
	while (i >= 0 && !p->e[i].nbtf && guard++ < 32)
		i = p->e[i].alias;
	return i >= 0 && p->e[i].nbtf ? p->e[i].id : 0;
}

static const char *name_or(Dwarf_Die *d, const char *dflt)
{
	const char *n = dwarf_diename(d);

	return n && *n ? n : dflt;
}

static int put_base(struct btf *btf, Dwarf_Die *d)
{
	const char *name = name_or(d, "?");
	int size = dwarf_bytesize(d);
	Dwarf_Word enc = 0;

	attr_u(d, DW_AT_encoding, &enc);
	switch (enc) {
	case DW_ATE_boolean:
		if (size == 1)
			return btf__add_int(btf, name, size, BTF_INT_BOOL);
		break;
	case DW_ATE_signed:
	case DW_ATE_signed_char:
	case DW_ATE_unsigned:
	case DW_ATE_unsigned_char:
	case DW_ATE_UTF:
		if (size == 1 || size == 2 || size == 4 || size == 8 ||
		    size == 16)
			return btf__add_int(btf, name, size,
					    enc == DW_ATE_signed ||
					    enc == DW_ATE_signed_char ?
					    BTF_INT_SIGNED : 0);
		break;
	case DW_ATE_float:
		if (size == 2 || size == 4 || size == 8 || size == 12 ||
		    size == 16)
			return btf__add_float(btf, name, size);
		break;
	default:
		break;
	}
	/* Complex, decimal, odd sizes: a value of its size, not fetched. */
	return btf__add_struct(btf, name, size > 0 ? size : 0);
}

/* A member's offset in bits from its struct's start, or -1. */
static long long member_bits(Dwarf_Die *m, Dwarf_Word bitsize)
{
	Dwarf_Attribute a;
	Dwarf_Word off = 0, v;
	Dwarf_Op *ops;
	size_t nops;

	if (attr_u(m, DW_AT_data_bit_offset, &v))
		return (long long)v;
	if (dwarf_attr(m, DW_AT_data_member_location, &a)) {
		if (dwarf_formudata(&a, &off)) {
			if (dwarf_getlocation(&a, &ops, &nops) || nops != 1 ||
			    ops[0].atom != DW_OP_plus_uconst)
				return -1;
			off = ops[0].number;
		}
	}
	if (bitsize && attr_u(m, DW_AT_bit_offset, &v)) {
		Dwarf_Die t;
		int storage = dwarf_bytesize(m);

		if (storage <= 0 && type_of(m, &t))
			storage = dwarf_bytesize(&t);
		if (storage <= 0 || v + bitsize > (Dwarf_Word)storage * 8)
			return -1;
		return (long long)(off * 8 + storage * 8 - v - bitsize);
	}
	return (long long)off * 8;
}

static int put_struct(struct btf *btf, const struct ud_plan *p, Dwarf_Die *d)
{
	int tag = dwarf_tag(d), size = dwarf_bytesize(d), id;
	const char *name = dwarf_diename(d);
	bool uni = tag == DW_TAG_union_type;
	Dwarf_Die c;

	if (dwarf_hasattr(d, DW_AT_declaration) && name && *name)
		return btf__add_fwd(btf, name,
				    uni ? BTF_FWD_UNION : BTF_FWD_STRUCT);
	if (size < 0)
		size = 0;
	id = uni ? btf__add_union(btf, name, size) :
		   btf__add_struct(btf, name, size);
	if (id < 0 || dwarf_hasattr(d, DW_AT_declaration) || dwarf_child(d, &c))
		return id;
	do {
		int mt = dwarf_tag(&c);
		Dwarf_Word bs = 0;
		long long bits;

		if ((mt != DW_TAG_member && mt != DW_TAG_inheritance) ||
		    dwarf_hasattr(&c, DW_AT_external) ||
		    dwarf_hasattr(&c, DW_AT_declaration))
			continue;
		attr_u(&c, DW_AT_bit_size, &bs);
		bits = member_bits(&c, bs);
		if (bits < 0 || bits > UINT32_MAX || bs > 255)
			continue;	/* not placeable: left out */
		/* A base class: an anonymous member, its fields found. */
		btf__add_field(btf, mt == DW_TAG_member ? dwarf_diename(&c) :
			       NULL, id_of(p, &c), (__u32)bits, (__u32)bs);
	} while (dwarf_siblingof(&c, &c) == 0);
	return id;
}

/* An enumerator's value, sign-extended from its form's width if @sgn. */
static bool enum_val(Dwarf_Die *c, bool sgn, __s64 *v)
{
	Dwarf_Attribute a;
	Dwarf_Word u;
	Dwarf_Sword s;
	unsigned int bits;

	if (!dwarf_attr(c, DW_AT_const_value, &a))
		return false;
	switch (dwarf_whatform(&a)) {
	case DW_FORM_sdata:
	case DW_FORM_implicit_const:
		if (dwarf_formsdata(&a, &s))
			return false;
		*v = s;
		return true;
	case DW_FORM_data1:
		bits = 8;
		break;
	case DW_FORM_data2:
		bits = 16;
		break;
	case DW_FORM_data4:
		bits = 32;
		break;
	default:
		bits = 64;
		break;
	}
	if (dwarf_formudata(&a, &u))
		return false;
	if (sgn && bits < 64 && (u >> (bits - 1)) & 1)
		u |= ~0ULL << bits;
	*v = (__s64)u;
	return true;
}

static int put_enum(struct btf *btf, Dwarf_Die *d)
{
	static __s64 vals[UDWARF_MAX_ENUMS];
	static const char *names[UDWARF_MAX_ENUMS];
	const char *name = dwarf_diename(d);
	int size = dwarf_bytesize(d), id;
	unsigned int n = 0, i;
	bool sgn = false, wide = false;
	Dwarf_Word enc;
	Dwarf_Die c, u;

	if (size != 1 && size != 2 && size != 4 && size != 8)
		size = 4;
	if (type_of(d, &u)) {
		while (dwarf_tag(&u) == DW_TAG_typedef && type_of(&u, &u))
			;
		sgn = attr_u(&u, DW_AT_encoding, &enc) &&
		      (enc == DW_ATE_signed || enc == DW_ATE_signed_char);
	}
	if (dwarf_child(d, &c) == 0) {
		do {
			const char *en = dwarf_diename(&c);

			if (dwarf_tag(&c) != DW_TAG_enumerator || !en ||
			    !*en || !enum_val(&c, sgn, &vals[n]))
				continue;
			names[n] = en;
			if (vals[n] < 0 && !sgn)
				sgn = true;	/* no underlying type said */
			if (vals[n] > UINT32_MAX || vals[n] < INT32_MIN ||
			    (sgn && vals[n] > INT32_MAX))
				wide = true;
			n++;
		} while (n < UDWARF_MAX_ENUMS && dwarf_siblingof(&c, &c) == 0);
	}
	if (!sgn && !wide && size <= 4) {
		id = btf__add_enum(btf, name, size);
		for (i = 0; id > 0 && i < n; i++)
			btf__add_enum_value(btf, names[i], vals[i]);
		return id;
	}
	id = btf__add_enum64(btf, name, size, sgn);
	for (i = 0; id > 0 && i < n; i++)
		btf__add_enum64_value(btf, names[i], (__u64)vals[i]);
	return id;
}

static int put_array(struct btf *btf, const struct ud_plan *p,
		     const struct ud_ent *e)
{
	Dwarf_Die d = e->die, c;
	__u32 n[UDWARF_MAX_DIMS], elem = id_of(p, &d);
	unsigned int k = 0, j;
	int id = -1;

	if (dwarf_child(&d, &c) == 0) {
		do {
			Dwarf_Word v;
			Dwarf_Attribute a;
			Dwarf_Sword s;

			if (dwarf_tag(&c) != DW_TAG_subrange_type)
				continue;
			n[k] = 0;
			if (attr_u(&c, DW_AT_count, &v))
				n[k] = v > UINT32_MAX ? 0 : (__u32)v;
			else if (dwarf_attr(&c, DW_AT_upper_bound, &a) &&
				 !dwarf_formsdata(&a, &s) && s >= 0 &&
				 s < UINT32_MAX)
				n[k] = (__u32)s + 1;
			k++;
		} while (k < UDWARF_MAX_DIMS && dwarf_siblingof(&c, &c) == 0);
	}
	if (!k)
		n[k++] = 0;
	for (j = 0; j < k; j++) {
		/* int a[2][3]: an array of 2 arrays of 3 ints, in order. */
		id = btf__add_array(btf, 1, j + 1 < k ? e->id + j + 1 : elem,
				    n[j]);
		if (id < 0)
			break;
	}
	return id;
}

/* Write entry @e as BTF: its first id, or a negative error. */
static int put_one(struct btf *btf, const struct ud_plan *p,
		   const struct ud_ent *e)
{
	Dwarf_Die d = e->die;
	__u32 ref = id_of(p, &d);

	switch (dwarf_tag(&d)) {
	case DW_TAG_base_type:
		return put_base(btf, &d);
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		return btf__add_ptr(btf, ref);
	case DW_TAG_typedef:
		return btf__add_typedef(btf, name_or(&d, "?"), ref);
	case DW_TAG_const_type:
		return btf__add_const(btf, ref);
	case DW_TAG_volatile_type:
		return btf__add_volatile(btf, ref);
	case DW_TAG_restrict_type:
		return btf__add_restrict(btf, ref);
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		return put_struct(btf, p, &d);
	case DW_TAG_enumeration_type:
		return put_enum(btf, &d);
	case DW_TAG_array_type:
		return put_array(btf, p, e);
	case DW_TAG_subroutine_type:
		return btf__add_func_proto(btf, 0);
	default:
		return -EINVAL;
	}
}

/* ---- the x86-64 SysV classification of a parameter ---- */

enum { UC_NONE, UC_INT, UC_SSE, UC_MEM };

static int merge(int a, int b)
{
	if (a == b || b == UC_NONE)
		return a;
	if (a == UC_NONE)
		return b;
	if (a == UC_MEM || b == UC_MEM)
		return UC_MEM;
	return a == UC_INT || b == UC_INT ? UC_INT : UC_SSE;
}

/* The classes of the eightbytes of type @id placed at byte @off. */
static void classify(const struct btf *btf, __u32 id, __u64 off, int cls[2],
		     int depth)
{
	const struct btf_type *t = ktype_skip_mods(btf, &id);
	__s64 sz = t ? btf__resolve_size(btf, id) : 0;
	unsigned int i;
	__u64 b;
	int c;

	if (!t || sz <= 0 || depth > 16)
		return;
	if (btf_is_struct(t) || btf_is_union(t)) {
		for (i = 0; i < btf_vlen(t); i++) {
			__u64 mo = off + btf_member_bit_offset(t, i) / 8;

			if (btf_member_bitfield_size(t, i) && mo / 8 < 2)
				cls[mo / 8] = merge(cls[mo / 8], UC_INT);
			else if (btf_member_bitfield_size(t, i))
				cls[1] = UC_MEM;
			else
				classify(btf, btf_members(t)[i].type, mo, cls,
					 depth + 1);
		}
		return;
	}
	if (btf_is_array(t)) {
		__u32 el = btf_array(t)->type;
		__s64 es = btf__resolve_size(btf, el);

		for (i = 0; es > 0 && i < btf_array(t)->nelems &&
		     i * es < 16; i++)
			classify(btf, el, off + i * es, cls, depth + 1);
		return;
	}
	c = btf_is_float(t) ? (sz > 8 ? UC_MEM : UC_SSE) : UC_INT;
	if (off % (sz < 8 ? sz : 8))
		c = UC_MEM;	/* unaligned: the whole in memory */
	for (b = off / 8; b <= (off + sz - 1) / 8; b++) {
		if (b > 1) {
			cls[1] = UC_MEM;
			break;
		}
		cls[b] = merge(cls[b], c);
	}
}

/*
 * Where a value of type @id goes: UW_REG (one integer register),
 * UW_PAIR, UW_SSE, UW_BYVAL (a struct or union in registers) or UW_MEM
 * (in memory), with the integer and SSE registers it takes in *@ni and
 * *@ns; *@agg: it is a struct or union.
 */
static int place(const struct btf *btf, __u32 id, int *ni, int *ns,
		 bool *agg)
{
	const struct btf_type *t = ktype_skip_mods(btf, &id);
	__s64 sz = t ? btf__resolve_size(btf, id) : 0;
	int cls[2] = { UC_NONE, UC_NONE }, i;

	*ni = *ns = 0;
	*agg = t && (btf_is_struct(t) || btf_is_union(t));
	if (!t)
		return UW_VOID;
	if (sz > 16)
		return UW_MEM;
	classify(btf, id, 0, cls, 0);
	for (i = 0; i < 2; i++) {
		if (cls[i] == UC_MEM)
			return UW_MEM;
		*ni += cls[i] == UC_INT;
		*ns += cls[i] == UC_SSE;
	}
	if (*agg)
		return UW_BYVAL;
	if (*ns)
		return UW_SSE;
	return *ni == 2 ? UW_PAIR : UW_REG;
}

/*
 * Whether type @id is aligned to 16 bytes (a 16-byte integer or floating
 * point type, or a struct, union or array holding one): its place on the
 * stack is then aligned to 16, else to 8.
 */
static bool align16(const struct btf *btf, __u32 id, int depth)
{
	const struct btf_type *t = ktype_skip_mods(btf, &id);
	unsigned int i;

	if (!t || depth > 16)
		return false;
	if (btf_is_int(t) || btf_is_float(t))
		return t->size == 16;
	if (btf_is_array(t))
		return align16(btf, btf_array(t)->type, depth + 1);
	if (btf_is_struct(t) || btf_is_union(t))
		for (i = 0; i < btf_vlen(t); i++)
			if (align16(btf, btf_members(t)[i].type, depth + 1))
				return true;
	return false;
}

/*
 * Parameter @q goes on the stack: its offset from the stack pointer at
 * the entry (past the return address), after the stack bytes taken so far
 * (*@stk), each parameter aligned to 8 bytes (16 if its type is) and
 * taking a whole number of eightbytes.
 */
static void put_on_stack(const struct btf *btf, struct ksig_param *q,
			 int *stk)
{
	__s64 sz = btf__resolve_size(btf, q->type_id);
	__u32 id = q->type_id;
	const struct btf_type *t = ktype_skip_mods(btf, &id);

	if (sz <= 0)
		return;
	if (align16(btf, q->type_id, 0))
		*stk = (*stk + 15) & ~15;
	/* A floating-point value is not fetched (its reason stays). */
	if (t && !btf_is_float(t))
		q->stack_off = 8 + *stk;
	*stk += (int)((sz + 7) & ~7);
}

/* The registers of each parameter, and where the return value is. */
static void assign_regs(struct usig *u)
{
	struct ksig *s = &u->s;
	int ni, ns, ints = 0, sses = 0, stk = 0;
	unsigned int i;
	bool agg;

	u->ret_where = place(s->btf, s->ret_id, &ni, &ns, &agg);
	if (u->ret_where == UW_MEM)
		ints = 1;	/* rdi: where to write it */
	for (i = 0; i < s->nparams; i++) {
		struct ksig_param *q = &s->params[i];
		int w = place(s->btf, q->type_id, &ni, &ns, &agg);

		q->reg = -1;
		q->stack_off = 0;
		u->where[i] = w == UW_MEM && agg ? UW_BYVAL : w;
		if (w == UW_MEM) {
			put_on_stack(s->btf, q, &stk);
			continue;
		}
		if (ints + ni > 6 || sses + ns > 8) {
			/* On the stack, whole; the registers stay free. */
			if (w == UW_REG)
				u->where[i] = UW_STACK;
			put_on_stack(s->btf, q, &stk);
			continue;
		}
		if (w == UW_REG)
			q->reg = ints;
		ints += ni;
		sses += ns;
	}
}

const char *usig_param_why(const struct ksig *s, unsigned int i, bool brief)
{
	const struct usig *u = (const struct usig *)s;

	if (!s || i >= s->nparams || s->params[i].reg >= 0 ||
	    s->params[i].stack_off > 0)
		return NULL;
	switch (u->where[i]) {
	case UW_SSE:
		return brief ? "SSE register" :
		       "is passed in an SSE register (xmm, floating point): a uprobe's fetches read the integer registers and memory, and the kernel gives a uprobe no SSE registers to read (struct pt_regs has none)";
	case UW_BYVAL:
		return brief ? "struct by value" :
		       "is a struct or union passed by value";
	case UW_STACK:
		return brief ? "stack" :
		       "is past the six integer argument registers (on the stack)";
	case UW_PAIR:
		return brief ? "two registers" :
		       "takes two integer registers (a 128-bit integer)";
	default:
		return brief ? "memory" : "is passed in memory (on the stack)";
	}
}

const char *usig_ret_why(const struct ksig *s)
{
	const struct usig *u = (const struct usig *)s;

	switch (u->ret_where) {
	case UW_REG:
	case UW_VOID:
		return NULL;
	case UW_SSE:
		return "is returned in xmm0 (floating point), not in rax";
	case UW_PAIR:
		return "is returned in rdx:rax (a 128-bit integer)";
	case UW_BYVAL:
		return "is a struct or union returned by value in registers";
	default:
		return "is returned in memory (rax holds its address)";
	}
}

/* ---- finding the function ---- */

struct find_ctx {
	const char *name;
	GElf_Addr addr;		/* the symbol's value, 0: not known */
	Dwarf_Die best;
	int found;		/* 1: by name, 2: by name and address */
};

static int find_cb(Dwarf_Die *d, void *arg)
{
	struct find_ctx *c = arg;
	const char *n = dwarf_diename(d), *ln;
	Dwarf_Attribute a;
	Dwarf_Addr lo;

	ln = dwarf_attr_integrate(d, DW_AT_linkage_name, &a) ?
	     dwarf_formstring(&a) : NULL;
	if ((!n || strcmp(n, c->name)) && (!ln || strcmp(ln, c->name)))
		return DWARF_CB_OK;
	if (dwarf_hasattr(d, DW_AT_declaration) ||
	    (dwarf_entrypc(d, &lo) && !dwarf_hasattr(d, DW_AT_ranges)))
		return DWARF_CB_OK;	/* no code of its own */
	if (c->addr && !dwarf_entrypc(d, &lo) && lo == c->addr) {
		c->best = *d;
		c->found = 2;
		return DWARF_CB_ABORT;
	}
	if (!c->found) {
		c->best = *d;
		c->found = 1;
	}
	return DWARF_CB_OK;
}

static bool find_func(Dwarf *dw, struct find_ctx *c)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (c->found < 2 &&
	       !dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + hsize, &cu))
			dwarf_getfuncs(&cu, find_cb, c, 0);
		off = next;
	}
	return c->found;
}

/* The value of function symbol @name in @elf's .symtab or .dynsym, or 0. */
static GElf_Addr sym_value(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;
			size_t i, n;

			if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			data = elf_getdata(scn, NULL);
			n = sh.sh_size / sh.sh_entsize;
			for (i = 0; data && i < n; i++) {
				GElf_Sym sym;
				const char *sn;

				if (!gelf_getsym(data, (int)i, &sym) ||
				    sym.st_shndx == SHN_UNDEF ||
				    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
				     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC))
					continue;
				sn = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (sn && !strcmp(sn, name))
					return sym.st_value;
			}
		}
	}
	return 0;
}

/*
 * The file open last with its DWARF, kept for the process (a glob asks
 * many times); a file without is looked at again each time.
 */
static struct {
	char path[4096];
	int fd, dfd;
	Elf *elf, *delf;
	Dwarf *dw;
} cache = { .fd = -1, .dfd = -1 };

static void cache_close(void)
{
	if (cache.dw)
		dwarf_end(cache.dw);
	if (cache.delf)
		elf_end(cache.delf);
	if (cache.elf)
		elf_end(cache.elf);
	if (cache.dfd >= 0)
		close(cache.dfd);
	if (cache.fd >= 0)
		close(cache.fd);
	memset(&cache, 0, sizeof(cache));
	cache.fd = -1;
	cache.dfd = -1;
}

/* Where debug files are; tests point it elsewhere (PEA_DEBUG_DIR). */
static const char *debug_dir(void)
{
	const char *d = getenv("PEA_DEBUG_DIR");

	return d && *d ? d : UDWARF_DEBUG_DIR;
}

/* The CRC-32 of the file open at @fd, as .gnu_debuglink holds it. */
static uLong file_crc(int fd)
{
	static unsigned char buf[65536];
	uLong crc = crc32(0, NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	return crc;
}

/*
 * The DWARF of debug file @path (kept open in the cache), or NULL; with
 * @crc, only if the file's CRC-32 is *@crc (a debug link names a file,
 * and only its CRC says it is this file's).
 */
static Dwarf *open_debug(const char *path, const GElf_Word *crc)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Dwarf *dw = NULL;
	Elf *e = NULL;

	if (fd < 0)
		return NULL;
	if (!crc || file_crc(fd) == *crc) {
		e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		dw = e ? dwarf_begin_elf(e, DWARF_C_READ, NULL) : NULL;
	}
	if (!dw) {
		if (e)
			elf_end(e);
		close(fd);
		return NULL;
	}
	cache.dfd = fd;
	cache.delf = e;
	return dw;
}

/* The debug file named by the file's build-id, or NULL. */
static Dwarf *by_build_id(void)
{
	const unsigned char *id;
	char path[512];
	ssize_t n = dwelf_elf_gnu_build_id(cache.elf, (const void **)&id);
	size_t i, o;

	if (n < 2)
		return NULL;
	o = snprintf(path, sizeof(path), "%s/.build-id/%02x/", debug_dir(),
		     id[0]);
	for (i = 1; i < (size_t)n && o + 3 < sizeof(path); i++)
		o += snprintf(path + o, sizeof(path) - o, "%02x", id[i]);
	snprintf(path + o, sizeof(path) - o, ".debug");
	return open_debug(path, NULL);
}

/*
 * The debug file .gnu_debuglink names, where gdb looks for it: next to
 * the file, in its .debug/, and under the debug directory by the file's
 * directory; with the CRC the link holds. NULL if none.
 */
static Dwarf *by_debuglink(const char *file)
{
	char dir[4096], path[8192], *real, *slash;
	GElf_Word crc;
	const char *name = dwelf_elf_gnu_debuglink(cache.elf, &crc);
	Dwarf *dw;

	if (!name || !*name || strchr(name, '/'))
		return NULL;
	real = realpath(file, NULL);
	if (!real)
		return NULL;
	slash = strrchr(real, '/');
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - real), real);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	dw = strcmp(path, real) ? open_debug(path, &crc) : NULL;
	if (!dw) {
		snprintf(path, sizeof(path), "%s/.debug/%s", dir, name);
		dw = open_debug(path, &crc);
	}
	if (!dw) {
		snprintf(path, sizeof(path), "%s%s/%s", debug_dir(), dir, name);
		dw = open_debug(path, &crc);
	}
	free(real);
	return dw;
}

static int open_file(const char *path, char *why, size_t len)
{
	if (cache.dw && !strcmp(cache.path, path))
		return 0;
	cache_close();
	elf_version(EV_CURRENT);
	snprintf(cache.path, sizeof(cache.path), "%s", path);
	cache.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (cache.fd < 0) {
		int err = errno;

		snprintf(why, len, "cannot open %s: %s", path, strerror(err));
		cache.path[0] = 0;
		return -EBADF;
	}
	cache.elf = elf_begin(cache.fd, ELF_C_READ_MMAP, NULL);
	if (!cache.elf || elf_kind(cache.elf) != ELF_K_ELF) {
		snprintf(why, len, "%s is not an ELF file", path);
		cache_close();
		return -ENOEXEC;
	}
	cache.dw = dwarf_begin_elf(cache.elf, DWARF_C_READ, NULL);
	if (!cache.dw)
		cache.dw = by_build_id();
	if (!cache.dw)
		cache.dw = by_debuglink(path);
	return cache.dw ? 0 : -ENODATA;
}

/* ---- C++: a function by its qualified name (ns::func) ---- */

#define UDWARF_MAX_OVERLOADS	8	/* linkage names told in an error */

struct qual_ctx {
	const char *qname;
	char names[UDWARF_MAX_OVERLOADS][PEA_SYM_LEN];
	unsigned int n, more;
};

/*
 * The qualified name of function @d (its declaration's scopes, as
 * c++filt prints them without the parameters: ns::inner::func,
 * ns::K::meth, (anonymous namespace)::f) into @buf; false if cut.
 */
static bool qual_name(Dwarf_Die *d, char *buf, size_t len)
{
	Dwarf_Attribute a;
	Dwarf_Die decl = *d, *scopes = NULL;
	const char *n = dwarf_diename(d);
	size_t o = 0;
	int ns, i;

	if (!n)
		return false;
	if (dwarf_attr(d, DW_AT_specification, &a))
		dwarf_formref_die(&a, &decl);
	ns = dwarf_getscopes_die(&decl, &scopes);
	buf[0] = 0;
	/* scopes[0] is the function, the last the CU: outermost first. */
	for (i = ns - 1; i >= 1; i--) {
		int tag = dwarf_tag(&scopes[i]);
		const char *sn = dwarf_diename(&scopes[i]);

		if (tag != DW_TAG_namespace && tag != DW_TAG_structure_type &&
		    tag != DW_TAG_class_type && tag != DW_TAG_union_type)
			continue;
		o += snprintf(buf + o, o < len ? len - o : 0, "%s::",
			      sn ? sn : "(anonymous namespace)");
	}
	free(scopes);
	o += snprintf(buf + o, o < len ? len - o : 0, "%s", n);
	return o < len;
}

/*
 * Function @d's qualified name into @q and its symbol (the linkage name,
 * else the DWARF name), if it has code of its own, its name fits @q and
 * its symbol PEA_SYM_LEN; NULL if not.
 */
static const char *qual_code_sym(Dwarf_Die *d, char *q, size_t len)
{
	Dwarf_Attribute a;
	const char *ln;
	Dwarf_Addr lo;

	if (dwarf_hasattr(d, DW_AT_declaration) ||
	    (dwarf_entrypc(d, &lo) && !dwarf_hasattr(d, DW_AT_ranges)))
		return NULL;	/* no code of its own */
	if (!qual_name(d, q, len))
		return NULL;
	ln = dwarf_attr_integrate(d, DW_AT_linkage_name, &a) ?
	     dwarf_formstring(&a) : dwarf_diename(d);
	if (!ln || strlen(ln) >= PEA_SYM_LEN)
		return NULL;
	return ln;
}

static int qual_cb(Dwarf_Die *d, void *arg)
{
	struct qual_ctx *c = arg;
	char q[PEA_SYM_LEN * 2];
	const char *ln = qual_code_sym(d, q, sizeof(q));
	unsigned int i;

	if (!ln || strcmp(q, c->qname))
		return DWARF_CB_OK;
	for (i = 0; i < c->n; i++)
		if (!strcmp(c->names[i], ln))
			return DWARF_CB_OK;	/* the same, in another CU */
	if (c->n == UDWARF_MAX_OVERLOADS) {
		c->more++;
		return DWARF_CB_OK;
	}
	snprintf(c->names[c->n++], PEA_SYM_LEN, "%s", ln);
	return DWARF_CB_OK;
}

int usig_linkage_name(const char *path, const char *qname, char *out,
		      size_t olen, char *why, size_t len)
{
	struct qual_ctx *c;
	Dwarf_Off off = 0, next;
	size_t hsize, o;
	unsigned int i;
	int err;

	err = open_file(path, why, len);
	if (err == -ENODATA)
		snprintf(why, len,
			 "'%s': no DWARF in %s to find a C++ name in (name the function by its symbol, as nm shows it)",
			 qname, path);
	if (err)
		return err;
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	c->qname = qname;
	while (!dwarf_nextcu(cache.dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu;

		if (dwarf_offdie(cache.dw, off + hsize, &cu))
			dwarf_getfuncs(&cu, qual_cb, c, 0);
		off = next;
	}
	err = 0;
	if (!c->n) {
		snprintf(why, len,
			 "no function '%s' with code in the DWARF of %s",
			 qname, path);
		err = -ENOENT;
	} else if (c->n > 1) {
		o = snprintf(why, len,
			     "'%s' names %u functions in %s (overloads); name one by its symbol:",
			     qname, c->n + c->more, path);
		for (i = 0; i < c->n && o < len; i++)
			o += snprintf(why + o, len - o, " %s", c->names[i]);
		if (c->more && o < len)
			snprintf(why + o, len - o, " ...");
		err = -EEXIST;
	} else {
		snprintf(out, olen, "%s", c->names[0]);
	}
	free(c);
	return err;
}

/* The functions whose qualified names match a glob (uprobe:PATH:ns::*). */
struct qual_each_ctx {
	const char *pat;
	void (*fn)(void *arg, const char *qname, const char *sym);
	void *arg;
};

static int qual_each_cb(Dwarf_Die *d, void *arg)
{
	struct qual_each_ctx *c = arg;
	char q[PEA_SYM_LEN * 2];
	const char *ln = qual_code_sym(d, q, sizeof(q));

	if (ln && strlen(q) < PEA_SYM_LEN && !fnmatch(c->pat, q, 0))
		c->fn(c->arg, q, ln);
	return DWARF_CB_OK;
}

int usig_qual_each(const char *path, const char *pat,
		   void (*fn)(void *arg, const char *qname, const char *sym),
		   void *arg, char *why, size_t len)
{
	struct qual_each_ctx c = { .pat = pat, .fn = fn, .arg = arg };
	Dwarf_Off off = 0, next;
	size_t hsize;
	int err;

	err = open_file(path, why, len);
	if (err == -ENODATA)
		snprintf(why, len,
			 "no DWARF in %s to match C++ names in (match its symbols, as nm shows them, without '::')",
			 path);
	if (err)
		return err;
	while (!dwarf_nextcu(cache.dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu;

		if (dwarf_offdie(cache.dw, off + hsize, &cu))
			dwarf_getfuncs(&cu, qual_each_cb, &c, 0);
		off = next;
	}
	return 0;
}

/* ---- the signature ---- */

static int plan_alloc(struct ud_plan *p)
{
	unsigned int d;

	memset(p, 0, sizeof(*p));
	p->hcap = 2 * UDWARF_MAX_TYPES;
	p->e = calloc(UDWARF_MAX_TYPES, sizeof(*p->e));
	p->hash = calloc(p->hcap, sizeof(*p->hash));
	if (!p->e || !p->hash)
		return -ENOMEM;
	for (d = 0; d < UDWARF_PTR_DEPTH + 2; d++) {
		/* A type can be queued again at a nearer depth: twice. */
		p->lvl[d] = calloc(2 * UDWARF_MAX_TYPES, sizeof(*p->lvl[d]));
		if (!p->lvl[d])
			return -ENOMEM;
	}
	return 0;
}

static void plan_free(struct ud_plan *p)
{
	unsigned int d;

	for (d = 0; d < UDWARF_PTR_DEPTH + 2; d++)
		free(p->lvl[d]);
	free(p->e);
	free(p->hash);
}

/* The function @fn's types, then it, into @btf: 0 or -errno. */
static int build_btf(struct btf *btf, Dwarf_Die *fn, const char *name)
{
	struct ud_plan p;
	Dwarf_Die c, r, params[KSIG_MAX_PARAMS];
	unsigned int np = 0, i, d;
	bool variadic = false;
	int err, id, proto;
	__u32 next;

	err = plan_alloc(&p);
	if (err)
		goto out;
	if (type_of(fn, &r))
		visit(&p, &r, 0);
	if (dwarf_child(fn, &c) == 0) {
		do {
			int tag = dwarf_tag(&c);

			if (tag == DW_TAG_unspecified_parameters)
				variadic = true;
			if (tag != DW_TAG_formal_parameter ||
			    np == KSIG_MAX_PARAMS)
				continue;
			params[np++] = c;
			if (type_of(&c, &r))
				visit(&p, &r, 0);
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	for (d = 0; d <= UDWARF_PTR_DEPTH; d++) {
		while (p.nlvl[d]) {
			int k = p.lvl[d][--p.nlvl[d]];

			if (!p.e[k].done)
				plan_one(&p, k);
		}
	}
	/* Every id before any is written: id 1 is the arrays' index type. */
	next = 2;
	for (i = 0; i < p.n; i++) {
		p.e[i].id = next;
		next += p.e[i].nbtf;
	}
	err = -EINVAL;
	if (btf__add_int(btf, "__ARRAY_SIZE_TYPE__", 4, 0) != 1)
		goto out;
	for (i = 0; i < p.n; i++) {
		if (!p.e[i].nbtf)
			continue;
		id = put_one(btf, &p, &p.e[i]);
		if (id < 0 || (__u32)id + 1 != p.e[i].id + p.e[i].nbtf ||
		    (p.e[i].nbtf == 1 && (__u32)id != p.e[i].id))
			goto out;
	}
	proto = btf__add_func_proto(btf, id_of(&p, fn));
	if (proto < 0)
		goto out;
	for (i = 0; i < np; i++)
		if (btf__add_func_param(btf, dwarf_diename(&params[i]),
					id_of(&p, &params[i])))
			goto out;
	if (variadic && btf__add_func_param(btf, NULL, 0))
		goto out;
	if (btf__add_func(btf, name, BTF_FUNC_GLOBAL, proto) < 0)
		goto out;
	err = 0;
out:
	plan_free(&p);
	return err;
}

int usig_load(const char *path, const char *func, struct ksig **out,
	      char *why, size_t len)
{
	struct find_ctx c = { .name = func };
	struct usig *u;
	struct btf *btf;
	int err;

	*out = NULL;
	err = open_file(path, why, len);
	if (err == -ENODATA)
		snprintf(why, len,
			 "no DWARF in %s (built without -g, or stripped; no debug file by its build-id in %s/.build-id or by its .gnu_debuglink either)",
			 path, debug_dir());
	if (err)
		return err;
	c.addr = sym_value(cache.elf, func);
	if (!find_func(cache.dw, &c)) {
		snprintf(why, len,
			 "no function '%s' with code in the DWARF of %s (inlined everywhere, or from a file built without -g)",
			 func, path);
		return -ENOENT;
	}
	u = calloc(1, sizeof(*u));
	btf = btf__new_empty();
	if (!u || !btf) {
		free(u);
		btf__free(btf);
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	err = build_btf(btf, &c.best, func);
	if (!err)
		err = ksig_from_btf(btf, func, &u->s);
	if (err) {
		btf__free(btf);
		free(u);
		snprintf(why, len, err == -ENOMEM ? "out of memory" :
			 "the DWARF types of '%s' in %s could not be converted",
			 func, path);
		return err == -ENOMEM ? err : -ENODATA;
	}
	u->s.own_btf = btf;
	assign_regs(u);
	*out = &u->s;
	return 0;
}
