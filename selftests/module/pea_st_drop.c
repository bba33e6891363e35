// SPDX-License-Identifier: GPL-2.0
/*
 * pea_selftest: PEA_ST_IOC_DROP_ARM and PEA_ST_IOC_DROP_END.
 *
 * A kretprobe on pea.ko's pea_ring_alloc() makes one pea_output() into
 * a map at the moment a fresh ring exists but its event does not point
 * to it yet (pea_event_mmap() publishes it after pea_ring_alloc()
 * returns). The record is dropped and counted as pending; the test then
 * checks that the mapping it gets shows the lost hint.
 */
#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/kprobes.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/pea.h>
#include "pea_selftest.h"
#include "pea_st_drop.h"

static struct pea_map *st_drop_map;	/* under st_lock */
static u64 st_drop_flags;
static atomic_t st_drop_armed;
static long st_drop_ret;
static bool st_drop_registered;		/* under st_lock */

static int st_drop_handler(struct kretprobe_instance *ri,
			   struct pt_regs *regs)
{
	u64 v = 0x5eedULL;

	if (atomic_cmpxchg(&st_drop_armed, 1, 0) == 1)
		WRITE_ONCE(st_drop_ret, pea_output(st_drop_map, st_drop_flags,
						   &v, sizeof(v)));
	return 0;
}

static struct kretprobe st_drop_rp;

/* Called with st_lock held. */
long st_drop_arm(void __user *uarg)
{
	struct pea_st_drop arg;
	struct pea_map *map;
	int err;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (st_drop_registered)
		return -EBUSY;
	arg.map[sizeof(arg.map) - 1] = 0;
	map = pea_map_get_by_name(arg.map);
	if (IS_ERR(map))
		return PTR_ERR(map);
	st_drop_map = map;
	st_drop_flags = arg.flags;
	st_drop_ret = 1;
	memset(&st_drop_rp, 0, sizeof(st_drop_rp));
	st_drop_rp.kp.symbol_name = "pea_ring_alloc";
	st_drop_rp.handler = st_drop_handler;
	st_drop_rp.maxactive = 4;
	atomic_set(&st_drop_armed, 1);
	err = register_kretprobe(&st_drop_rp);
	if (err) {
		atomic_set(&st_drop_armed, 0);
		pea_map_put(map);
		st_drop_map = NULL;
		return err;
	}
	st_drop_registered = true;
	return 0;
}

/* Called with st_lock held. */
long st_drop_end(void __user *uarg)
{
	struct pea_st_drop arg;

	if (!st_drop_registered)
		return -ENOENT;
	unregister_kretprobe(&st_drop_rp);
	st_drop_registered = false;
	memset(&arg, 0, sizeof(arg));
	arg.fired = !atomic_xchg(&st_drop_armed, 0);
	arg.ret = READ_ONCE(st_drop_ret);
	pea_map_put(st_drop_map);
	st_drop_map = NULL;
	return copy_to_user(uarg, &arg, sizeof(arg)) ? -EFAULT : 0;
}

void st_drop_exit(void)
{
	if (st_drop_registered) {
		unregister_kretprobe(&st_drop_rp);
		pea_map_put(st_drop_map);
	}
}
