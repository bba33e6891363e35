// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the attach ioctls' one table. Each PEA_MAP_IOC_ATTACH_* command on
 * a map fd reaches the struct pea_provider of its kind of producer; the
 * map looks the command up here (pea_map_attach_init(), at load), and
 * nothing else names a kind. A new kind adds its file and its lines here.
 */
#include <linux/kernel.h>
#include "pea_internal.h"
#include "pea_provider.h"

/*
 * The old sizes of the attach ioctls' numbers (the attr's size is part of
 * them): binaries built before kstack_depth (or, _VER1 and the uprobe's
 * _VER0, before fetches; the tracepoint's _VER1, before its filter
 * program; _VER2, before its fetches) send these.
 */
#define PEA_MAP_IOC_ATTACH_PROBE_VER0 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x14, PEA_PROBE_ATTR_SIZE_VER0)
#define PEA_MAP_IOC_ATTACH_PROBE_VER1 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x14, PEA_PROBE_ATTR_SIZE_VER1)
#define PEA_MAP_IOC_ATTACH_UPROBE_VER0 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x16, PEA_UPROBE_ATTR_SIZE_VER0)
#define PEA_MAP_IOC_ATTACH_TP_VER0 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x15, PEA_TP_ATTR_SIZE_VER0)
#define PEA_MAP_IOC_ATTACH_TP_VER1 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x15, PEA_TP_ATTR_SIZE_VER1)
#define PEA_MAP_IOC_ATTACH_TP_VER2 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x15, PEA_TP_ATTR_SIZE_VER2)

/* pea_nf.c is built where the kernel has netfilter (Kbuild). */
#ifdef PEA_HAVE_NETFILTER
#define PEA_NF_PROVIDER (&pea_nf_provider)
#else
#define PEA_NF_PROVIDER NULL
#endif

/*
 * pea_fprobe.c is built where the kernel has fprobes with the handlers
 * it is written for (Kbuild); elsewhere its command answers EOPNOTSUPP.
 */
#ifdef PEA_HAVE_FPROBE
#define PEA_FPROBE_PROVIDER (&pea_fprobe_provider)
#else
#define PEA_FPROBE_PROVIDER NULL
#endif

static const struct pea_attach pea_attach_cmds[] = {
	{ PEA_MAP_IOC_ATTACH_PROBE, &pea_kprobe_provider },
	{ PEA_MAP_IOC_ATTACH_PROBE_VER0, &pea_kprobe_provider },
	{ PEA_MAP_IOC_ATTACH_PROBE_VER1, &pea_kprobe_provider },
	{ PEA_MAP_IOC_ATTACH_TP, &pea_tp_provider },
	{ PEA_MAP_IOC_ATTACH_TP_VER0, &pea_tp_provider },
	{ PEA_MAP_IOC_ATTACH_TP_VER1, &pea_tp_provider },
	{ PEA_MAP_IOC_ATTACH_TP_VER2, &pea_tp_provider },
	{ PEA_MAP_IOC_ATTACH_UPROBE, &pea_uprobe_provider },
	{ PEA_MAP_IOC_ATTACH_UPROBE_VER0, &pea_uprobe_provider },
	{ PEA_MAP_IOC_ATTACH_NF, PEA_NF_PROVIDER },
	{ PEA_MAP_IOC_ATTACH_SAMPLE, &pea_sample_provider },
	{ PEA_MAP_IOC_ATTACH_FPROBE, PEA_FPROBE_PROVIDER },
};

/**
 * pea_attach_init() - give the map's attach ioctl its table
 *
 * Called at module load, before /dev/pea exists.
 */
void pea_attach_init(void)
{
	pea_map_attach_init(pea_attach_cmds, ARRAY_SIZE(pea_attach_cmds));
}
