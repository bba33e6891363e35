/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea tool: DWARF unwinding of a sample's user stack copy (udwunw.c).
 */
#ifndef _PEA_UDWUNW_H
#define _PEA_UDWUNW_H

#include <stddef.h>
#include <linux/types.h>
#include <linux/pea.h>

struct usyms;
struct udwunw;

struct udwunw *udwunw_new(const struct usyms *us);
void udwunw_free(struct udwunw *w);

/*
 * Unwind the user stack of a sample of the process whose maps @us keeps
 * under @key, from the registers and stack copy of @ur (@len bytes from
 * @ur, the record's struct pea_user_regs and stack bytes): the user ip,
 * then the return addresses of its callers, innermost first, into @ips
 * (at most @max). A new snapshot of @key's maps (usyms_gen()) reports its
 * files anew. Returns the entries written (at least the ip for a
 * 64-bit task), or -EINVAL for a malformed @ur.
 */
int udwunw_unwind(struct udwunw *w, int key, const struct pea_user_regs *ur,
		  size_t len, __u64 *ips, int max);

#endif /* _PEA_UDWUNW_H */
