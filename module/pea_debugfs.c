// SPDX-License-Identifier: GPL-2.0
/*
 * pea: debugfs files for `pea stat` and for leak checks.
 *
 *   /sys/kernel/debug/pea/maps     one line per filled slot of every map
 *   /sys/kernel/debug/pea/links    one line per live probe link
 *   /sys/kernel/debug/pea/objects  live maps, events, rings and links
 *   /sys/kernel/debug/pea/mlock    ring pages charged, per ring and in all
 *   /sys/kernel/debug/pea/quota    probe links and memory, per user and in all
 *   /sys/kernel/debug/pea/kfunc    the kfuncs' state, their errors per map
 *
 * Each file starts with a "#" line naming its columns.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include "pea_internal.h"
#include "pea_quota.h"

static struct dentry *pea_debugfs_dir;

static int pea_objects_show(struct seq_file *m, void *v)
{
	seq_puts(m, "# maps events rings links\n");
	seq_printf(m, "%d %d %d %d\n", atomic_read(&pea_objects.maps),
		   atomic_read(&pea_objects.events),
		   atomic_read(&pea_objects.rings),
		   atomic_read(&pea_objects.links));
	return 0;
}

DEFINE_SHOW_ATTRIBUTE(pea_maps);
DEFINE_SHOW_ATTRIBUTE(pea_links);
DEFINE_SHOW_ATTRIBUTE(pea_objects);
DEFINE_SHOW_ATTRIBUTE(pea_mlock);
DEFINE_SHOW_ATTRIBUTE(pea_quota);
DEFINE_SHOW_ATTRIBUTE(pea_kfunc);

/**
 * pea_debugfs_init() - create /sys/kernel/debug/pea
 *
 * debugfs failures are not fatal: pea works without its stats files.
 */
void pea_debugfs_init(void)
{
	pea_debugfs_dir = debugfs_create_dir("pea", NULL);
	debugfs_create_file("maps", 0400, pea_debugfs_dir, NULL,
			    &pea_maps_fops);
	debugfs_create_file("links", 0400, pea_debugfs_dir, NULL,
			    &pea_links_fops);
	debugfs_create_file("objects", 0400, pea_debugfs_dir, NULL,
			    &pea_objects_fops);
	debugfs_create_file("mlock", 0400, pea_debugfs_dir, NULL,
			    &pea_mlock_fops);
	debugfs_create_file("quota", 0400, pea_debugfs_dir, NULL,
			    &pea_quota_fops);
	debugfs_create_file("kfunc", 0400, pea_debugfs_dir, NULL,
			    &pea_kfunc_fops);
}

/**
 * pea_debugfs_exit() - remove /sys/kernel/debug/pea
 */
void pea_debugfs_exit(void)
{
	debugfs_remove(pea_debugfs_dir);
}
