/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: the kinds of producer, each a const struct pea_provider in a file
 * of its own, and the table that maps each attach command to one
 * (pea_attach.c). The link core (pea_link.c) and the map's attach ioctl
 * (pea_map.c) see a kind only through this header. Nothing here is ABI.
 */
#ifndef _PEA_PROVIDER_H
#define _PEA_PROVIDER_H

#include <linux/compiler_types.h>
#include <linux/types.h>

struct pea_agg_attr;
struct pea_link;
struct pea_link_info;
struct pea_link_stats;
struct pea_map;

/**
 * struct pea_provider - one kind of producer, as the link core sees it
 * @link_size:  bytes of its links: its own struct, whose first member is
 *              the struct pea_link the core knows (pea_link_alloc())
 * @attach:     its PEA_MAP_IOC_ATTACH_* on @map with the attr at @ua: the
 *              permission checks, the attr copied (pea_link_copy_attr())
 *              and checked, the link allocated (pea_link_alloc()) and
 *              filled, then pea_link_install(); a link fd or -errno
 * @reg:        register the producer of @l with what @attach handed
 *              pea_link_install(); it may fire at once
 * @unregister: undo @reg; returns when no handler of @l runs any more
 * @retire:     optional: at close, instead of @unregister at once: stop
 *              new calls of @l and say whether calls it saw start are
 *              still in flight (true), in which case the core keeps @l
 *              retired, with its charge, until @busy says they are gone,
 *              then calls @unregister and frees it (pea_link.c); after
 *              @retire no handler of @l reaches its maps or filters
 * @busy:       with @retire: whether calls of @l are still in flight
 * @free:       optional: release what the kind holds in @l, whether @reg
 *              ran or not (pea_link_free())
 * @info:       optional: the kind's part of PEA_LINK_IOC_INFO, which the
 *              debugfs links file prints too: @info->missed, from the
 *              stats summed in @sum (0 without @info)
 * @agg_check:  optional: whether the kind's hits give the value a table
 *              asks for (@a checked otherwise already): 0 or -EINVAL;
 *              without it the kind has no tables (EOPNOTSUPP). A kind
 *              that has them hands every hit to pea_agg_hit() (pea_agg.h)
 *
 * Each kind has one const struct pea_provider in a file of its own; the
 * link core reaches a kind only through it, and the map's attach ioctl
 * finds it in one table (struct pea_attach, pea_attach.c).
 */
struct pea_provider {
	size_t link_size;
	long (*attach)(struct pea_map *map, const void __user *ua);
	int (*reg)(struct pea_link *l, const void *arg);
	void (*unregister)(struct pea_link *l);
	bool (*retire)(struct pea_link *l);
	bool (*busy)(struct pea_link *l);
	void (*free)(struct pea_link *l);
	void (*info)(struct pea_link *l,
		     const struct pea_link_stats *sum,
		     struct pea_link_info *info);
	int (*agg_check)(struct pea_link *l, const struct pea_agg_attr *a);
};

/**
 * struct pea_attach - an attach command and the kind it attaches
 * @cmd:      a PEA_MAP_IOC_ATTACH_* ioctl number (with its attr's size)
 * @provider: the kind, NULL if this kernel has none (EOPNOTSUPP)
 */
struct pea_attach {
	unsigned int cmd;
	const struct pea_provider *provider;
};

/* The kinds (pea_kprobe.c, pea_tp.c, pea_uprobe.c, pea_nf.c, pea_sample.c). */
extern const struct pea_provider pea_kprobe_provider;
extern const struct pea_provider pea_tp_provider;
extern const struct pea_provider pea_uprobe_provider;
extern const struct pea_provider pea_sample_provider;
#ifdef PEA_HAVE_NETFILTER
extern const struct pea_provider pea_nf_provider;
#endif
#ifdef PEA_HAVE_FPROBE
extern const struct pea_provider pea_fprobe_provider;	/* pea_fprobe.c */
#endif

/* pea_attach.c */
void pea_attach_init(void);

#endif /* _PEA_PROVIDER_H */
