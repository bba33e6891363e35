/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: differences between the kernels pea builds against.
 *
 * Each PEA_HAVE_* macro comes from a feature probe in Kbuild (a grep of
 * the target kernel's headers), not from a version number.
 */
#ifndef _PEA_COMPAT_H
#define _PEA_COMPAT_H

#include <linux/mm.h>

/* vm_flags became read-only behind vm_flags_set() in 6.3. */
static inline void pea_vm_flags_set(struct vm_area_struct *vma,
				    unsigned long flags)
{
#ifdef PEA_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

#endif /* _PEA_COMPAT_H */
