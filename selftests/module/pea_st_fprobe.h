/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea_selftest: the functions fprobe links are tested on
 * (pea_st_fprobe.c).
 */
#ifndef _PEA_ST_FPROBE_H
#define _PEA_ST_FPROBE_H

long st_fprobe(void __user *uarg);

#endif /* _PEA_ST_FPROBE_H */
