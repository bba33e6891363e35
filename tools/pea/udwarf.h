/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: a user function's parameters and return value by name and type,
 * from the DWARF of its ELF file read with elfutils' libdw, converted into
 * the BTF the kprobe fetches walk (udwarf.c).
 */
#ifndef _PEA_UDWARF_H
#define _PEA_UDWARF_H

#include <stddef.h>
#include "ktypes.h"

/*
 * Where Debian's separate debug files are (-dbgsym packages), by
 * build-id; PEA_DEBUG_DIR in the environment replaces it (tests).
 */
#define UDWARF_DEBUG_DIR	"/usr/lib/debug"

/*
 * The signature of function @func of the ELF file at @path, from its
 * DWARF (or its debug file: by build-id under UDWARF_DEBUG_DIR/.build-id/,
 * or by its .gnu_debuglink), its types
 * in a BTF of their own (s->own_btf, freed with ksig_free()). Each
 * parameter's register is where the x86-64 SysV ABI passes it: arg0..arg5
 * for integer, enum, bool and pointer parameters in rdi, rsi, rdx, rcx,
 * r8, r9, or -1: on the stack at stack_off from the entry's stack
 * pointer, or nowhere pea can read (usig_param_why() says why). 0 with *@out set, or -errno
 * with the reason in @why (@len bytes): -ENODATA (no DWARF), -ENOENT (no
 * such function in it), -EBADF (cannot open), -ENOEXEC (not ELF), -ENOMEM.
 */
int usig_load(const char *path, const char *func, struct ksig **out,
	      char *why, size_t len);

/*
 * The symbol (DWARF linkage name) of the C++ function @qname
 * ("ns::func", "ns::Class::method": the scopes of its declaration, as
 * c++filt prints them without the parameters) of the ELF file at @path,
 * into @out (@olen bytes). 0, or -errno with the reason in @why:
 * -ENODATA (no DWARF), -ENOENT (no such function), -EEXIST (overloads:
 * their symbols listed), -EBADF, -ENOEXEC, -ENOMEM.
 */
int usig_linkage_name(const char *path, const char *qname, char *out,
		      size_t olen, char *why, size_t len);

/*
 * @fn(@arg, qname, symbol) for each C++ function with code in the DWARF
 * of the ELF file at @path whose qualified name (as usig_linkage_name()
 * takes it) matches the shell glob @pat; a function in several CUs, or
 * an overload, is called for each. 0, or -errno with the reason in @why:
 * -ENODATA (no DWARF), -EBADF, -ENOEXEC, -ENOMEM.
 */
int usig_qual_each(const char *path, const char *pat,
		   void (*fn)(void *arg, const char *qname, const char *sym),
		   void *arg, char *why, size_t len);

/*
 * Why parameter @i of @s (from usig_load()) cannot be fetched ("is
 * passed in an SSE register ..."), or NULL (in a register or on the
 * stack); @brief: in a few words.
 */
const char *usig_param_why(const struct ksig *s, unsigned int i, bool brief);

/* Why @s's return value is not in rax as one value, or NULL. */
const char *usig_ret_why(const struct ksig *s);

#endif /* _PEA_UDWARF_H */
