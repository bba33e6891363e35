/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: a uprobe's file named without a '/' (uprobe:bash:readline,
 * uprobe:libc:malloc), found as the shell finds a command and the dynamic
 * linker a library (upath.c).
 */
#ifndef _PEA_UPATH_H
#define _PEA_UPATH_H

#include <stddef.h>

/*
 * @name with a '/': itself. Without: the first executable NAME in $PATH,
 * else the first of NAME, libNAME.so, libNAME.so.*, NAME.so, NAME.so.* in
 * $LD_LIBRARY_PATH's directories and the system's library directories.
 * 0 with the path in @out (@len bytes), or -ENOENT.
 */
int upath_resolve(const char *name, char *out, size_t len);

/*
 * The ':' between PATH and SYMBOL in "PATH:SYMBOL" (@rest): the last one
 * that is not part of a "::" (a C++ name's scopes, ns::func), or NULL.
 */
const char *upath_sym_colon(const char *rest);

#endif /* _PEA_UPATH_H */
