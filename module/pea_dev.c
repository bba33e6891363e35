// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the module and its control device, /dev/pea.
 *
 * ioctls on /dev/pea create map fds (as bpf(BPF_MAP_CREATE)) and output
 * event fds (as perf_event_open()). The device is mode 0600 by default:
 * who may open it may create maps and events.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/workqueue.h>
#include "pea_internal.h"
#include "pea_counter.h"
#include "pea_fetch.h"
#include "pea_provider.h"
#include "pea_quota.h"
#include "pea_ustack.h"

static ushort dev_mode = 0600;
module_param(dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode, "permission bits of /dev/pea (default 0600)");

static long pea_dev_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case PEA_IOC_VERSION:
		return PEA_ABI_VERSION;
	case PEA_IOC_MAP_CREATE:
		return pea_map_create(uarg);
	case PEA_IOC_EVENT_OPEN:
		return pea_event_open(uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations pea_dev_fops = {
	.owner = THIS_MODULE,
	.open = nonseekable_open,
	.unlocked_ioctl = pea_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice pea_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "pea",
	.fops = &pea_dev_fops,
};

static int __init pea_init(void)
{
	int err;

	pea_wq = alloc_workqueue("pea", WQ_UNBOUND, 0);
	if (!pea_wq)
		return -ENOMEM;
	err = pea_fetch_init();
	if (!err) {
		err = pea_ustack_init();
		if (err)
			pea_fetch_exit();
	}
	if (err) {
		destroy_workqueue(pea_wq);
		return err;
	}
	pea_limits_init();
	pea_quota_init();
	pea_attach_init();
	err = pea_map_init();
	if (err) {
		pea_limits_exit();
		pea_ustack_exit();
		pea_fetch_exit();
		destroy_workqueue(pea_wq);
		return err;
	}
	err = pea_counter_init();
	if (err) {
		pea_map_exit();
		pea_limits_exit();
		pea_ustack_exit();
		pea_fetch_exit();
		destroy_workqueue(pea_wq);
		return err;
	}
	pea_miscdev.mode = dev_mode & 0777;
	err = misc_register(&pea_miscdev);
	if (err) {
		pea_counter_exit();
		pea_map_exit();
		pea_limits_exit();
		pea_ustack_exit();
		pea_fetch_exit();
		destroy_workqueue(pea_wq);
		return err;
	}
	pea_debugfs_init();
	/* Last: a module's kfunc sets cannot be unregistered. */
	pea_kfunc_init();
	return 0;
}

static void __exit pea_exit(void)
{
	pea_debugfs_exit();
	misc_deregister(&pea_miscdev);
	pea_links_exit();
	/* Slot entries are freed by RCU callbacks that queue frees. */
	rcu_barrier();
	destroy_workqueue(pea_wq);
	pea_counter_exit();
	pea_map_exit();
	pea_limits_exit();
	pea_ustack_exit();
	pea_fetch_exit();
}

module_init(pea_init);
module_exit(pea_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("pea: per-CPU perf-protocol ring buffers without BPF");
MODULE_AUTHOR("The pea developers");
MODULE_VERSION(PEA_VERSION);
