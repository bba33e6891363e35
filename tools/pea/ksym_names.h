/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: how many kernel symbols share a name, counted from /proc/kallsyms
 * as Linux's kprobe events count them before taking one (ksym_names.c).
 */
#ifndef _PEA_KSYM_NAMES_H
#define _PEA_KSYM_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/**
 * struct ksym_count - the symbols of one name
 * @total:     all of them (vmlinux's and the modules')
 * @vmlinux:   vmlinux's
 * @mod:       the first module that has one ("" if none)
 * @mod_n:     how many @mod has
 * @more_mods: another module has one too
 */
struct ksym_count {
	unsigned int total, vmlinux, mod_n;
	char mod[64];
	bool more_mods;
};

/*
 * The symbols named @name ("NAME", or "MODULE:NAME": that module's only)
 * into @c: 0, or -errno when /proc/kallsyms cannot be read.
 */
int ksym_name_count(const char *name, struct ksym_count *c);

/*
 * Whether @name names several kernel symbols, which Linux's kprobes
 * refuse (EADDRNOTAVAIL): their number, with what they are and how to
 * name one in @why (@len bytes); 0 for one, none, or no /proc/kallsyms.
 */
int ksym_name_shared(const char *name, char *why, size_t len);

#endif /* _PEA_KSYM_NAMES_H */
