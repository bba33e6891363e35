// SPDX-License-Identifier: GPL-2.0
/*
 * pea_bench: a benchmark-only producer for bench/pea-bench.
 *
 * /dev/pea_bench takes three ioctls:
 *   PEA_BENCH_IOC_LOOP    time pea_output() (or a piece of it, or a plain
 *                         memcpy into a ring-sized buffer, the floor) in a
 *                         tight loop on the calling CPU, preemption off;
 *   PEA_BENCH_IOC_KPROBE  register a kprobe whose pre-handler calls
 *                         pea_output() with a timestamped payload (or
 *                         returns at once: the no-output baseline);
 *   PEA_BENCH_IOC_KSTATS  read and clear the kprobe's counters.
 * Not a test and not part of pea: nothing here is ABI.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/timekeeping.h>
#include <linux/log2.h>
#include <linux/pea.h>
#include "pea_bench.h"

struct pb_kcount {
	u64 hits;
	u64 ok;
	u64 nospc;
	u64 other;
};

static DEFINE_MUTEX(pb_lock);
static u8 *pb_payload;			/* PEA_BENCH_MAX_PAYLOAD bytes */
static struct pea_map *pb_kp_map;	/* the kprobe's map */
static u32 pb_kp_mode;
static bool pb_kp_registered;
static struct kprobe pb_kp;
static char pb_kp_symbol[64];
static DEFINE_PER_CPU(struct pb_kcount, pb_kcounts);

/* ---- the in-kernel output loop ---- */

static long pb_loop_output(struct pea_map *map, const void *src, u32 size,
			   u32 count, u64 *n_ok)
{
	long ret, last = 0;
	u32 i;

	for (i = 0; i < count; i++) {
		ret = pea_output(map, PEA_F_CURRENT_CPU, src, size);
		if (likely(!ret))
			(*n_ok)++;
		else
			last = ret;
	}
	return last;
}

/* pea_output() failing with @want each time: its parts before the ring. */
static long pb_loop_fail(struct pea_map *map, u64 flags, u64 size, long want,
			 u32 count, u64 *n_ok)
{
	long ret, last = 0;
	u32 i;

	for (i = 0; i < count; i++) {
		ret = pea_output(map, flags, pb_payload, size);
		if (likely(ret == want))
			(*n_ok)++;
		else
			last = ret;
	}
	return last;
}

static long pb_loop_reserve(struct pea_map *map, const void *src, u32 size,
			    u32 count, u64 *n_ok, bool copy)
{
	struct pea_output_handle h;
	long ret, last = 0;
	u32 i;

	for (i = 0; i < count; i++) {
		ret = pea_output_reserve(map, PEA_F_CURRENT_CPU, size, &h);
		if (unlikely(ret)) {
			last = ret;
			continue;
		}
		if (copy)
			memcpy(h.data, src, size);
		pea_output_commit(&h);
		(*n_ok)++;
	}
	return last;
}

static noinline void pb_loop_empty(u32 count, u64 *n_ok)
{
	u32 i;

	for (i = 0; i < count; i++) {
		barrier();
		(*n_ok)++;
	}
}

/* The floor: the same bytes copied into a ring-sized buffer, in order. */
static void pb_loop_memcpy(u8 *ring, unsigned long ring_bytes,
			   const void *src, u32 size, u32 count, u64 *n_ok)
{
	unsigned long off = 0, stride = ALIGN(size, 8);
	u32 i;

	for (i = 0; i < count; i++) {
		if (off + size > ring_bytes)
			off = 0;
		memcpy(ring + off, src, size);
		off += stride;
		(*n_ok)++;
	}
}

static long pb_ioc_loop(struct pea_bench_loop __user *uarg)
{
	struct pea_bench_loop a;
	struct pea_map *map = NULL;
	u8 *ring = NULL;
	u64 t0, t1;
	long err = 0;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	a.map[sizeof(a.map) - 1] = '\0';
	if (a.op >= PEA_BENCH_NR_OPS || a.size > PEA_BENCH_MAX_PAYLOAD)
		return -EINVAL;
	if (a.op == PEA_BENCH_MEMCPY) {
		if (!is_power_of_2(a.ring_bytes) || a.ring_bytes < a.size)
			return -EINVAL;
		ring = vzalloc(a.ring_bytes);
		if (!ring)
			return -ENOMEM;
	} else if (a.op != PEA_BENCH_EMPTY) {
		map = pea_map_get_by_name(a.map);
		if (IS_ERR(map))
			return PTR_ERR(map);
	}

	a.n_ok = 0;
	a.ret = 0;
	preempt_disable();
	a.cpu = smp_processor_id();
	/*
	 * PEA_BENCH_CHECKS must fail at the payload size, not at an index
	 * past the map's slots (-E2BIG too, before the event's checks): an
	 * empty record on this CPU must go through first, untimed.
	 */
	if (a.op == PEA_BENCH_CHECKS) {
		err = pea_output(map, PEA_F_CURRENT_CPU, pb_payload, 0);
		if (err) {
			preempt_enable();
			pea_map_put(map);
			return err;
		}
	}
	t0 = ktime_get_ns();
	switch (a.op) {
	case PEA_BENCH_EMPTY:
		pb_loop_empty(a.count, &a.n_ok);
		break;
	case PEA_BENCH_OUTPUT:
		a.ret = pb_loop_output(map, pb_payload, a.size, a.count,
				       &a.n_ok);
		break;
	case PEA_BENCH_RESERVE:
	case PEA_BENCH_RESERVE_ONLY:
		a.ret = pb_loop_reserve(map, pb_payload, a.size, a.count,
					&a.n_ok, a.op == PEA_BENCH_RESERVE);
		break;
	case PEA_BENCH_GUARD:
		/* Bit 32 is outside PEA_F_INDEX_MASK: -EINVAL. */
		a.ret = pb_loop_fail(map, PEA_F_CURRENT_CPU | BIT_ULL(32),
				     a.size, -EINVAL, a.count, &a.n_ok);
		break;
	case PEA_BENCH_CHECKS:
		/* Past any event's max_payload: -E2BIG, the last check. */
		a.ret = pb_loop_fail(map, PEA_F_CURRENT_CPU, U32_MAX, -E2BIG,
				     a.count, &a.n_ok);
		break;
	case PEA_BENCH_MEMCPY:
		pb_loop_memcpy(ring, a.ring_bytes, pb_payload, a.size,
			       a.count, &a.n_ok);
		break;
	}
	t1 = ktime_get_ns();
	preempt_enable();
	a.ns = t1 - t0;

	if (map)
		pea_map_put(map);
	vfree(ring);
	if (copy_to_user(uarg, &a, sizeof(a)))
		err = -EFAULT;
	return err;
}

/* ---- the kprobe producer ---- */

static noinline void pb_kp_output(struct pb_kcount *c)
{
	/* As the BPF programs do: a zeroed stack buffer, the time first. */
	u64 buf[PEA_BENCH_KP_PAYLOAD / 8] = {};
	long ret;

	buf[0] = ktime_get_mono_fast_ns();
	ret = pea_output(pb_kp_map, PEA_F_CURRENT_CPU, buf, sizeof(buf));
	if (likely(!ret))
		c->ok++;
	else if (ret == -ENOSPC)
		c->nospc++;
	else
		c->other++;
}

static int pb_kp_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct pb_kcount *c = this_cpu_ptr(&pb_kcounts);

	c->hits++;
	if (pb_kp_mode == PEA_BENCH_KP_OUTPUT)
		pb_kp_output(c);
	return 0;
}

static void pb_kp_off(void)
{
	if (pb_kp_registered) {
		unregister_kprobe(&pb_kp);
		pb_kp_registered = false;
	}
	if (pb_kp_map) {
		pea_map_put(pb_kp_map);
		pb_kp_map = NULL;
	}
	pb_kp_mode = PEA_BENCH_KP_OFF;
}

static long pb_ioc_kprobe(const struct pea_bench_kprobe __user *uarg)
{
	struct pea_bench_kprobe a;
	struct pea_map *map;
	int err;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	a.map[sizeof(a.map) - 1] = '\0';
	a.symbol[sizeof(a.symbol) - 1] = '\0';
	if (a.mode > PEA_BENCH_KP_OUTPUT)
		return -EINVAL;
	if (a.mode == PEA_BENCH_KP_OUTPUT && a.size != PEA_BENCH_KP_PAYLOAD)
		return -EINVAL;

	pb_kp_off();
	if (a.mode == PEA_BENCH_KP_OFF)
		return 0;
	if (a.mode == PEA_BENCH_KP_OUTPUT) {
		map = pea_map_get_by_name(a.map);
		if (IS_ERR(map))
			return PTR_ERR(map);
		pb_kp_map = map;
	}
	pb_kp_mode = a.mode;
	strscpy(pb_kp_symbol, a.symbol, sizeof(pb_kp_symbol));
	memset(&pb_kp, 0, sizeof(pb_kp));
	pb_kp.symbol_name = pb_kp_symbol;
	pb_kp.pre_handler = pb_kp_pre;
	err = register_kprobe(&pb_kp);
	if (err) {
		pb_kp_off();
		return err;
	}
	pb_kp_registered = true;
	return 0;
}

static long pb_ioc_kstats(struct pea_bench_kstats __user *uarg)
{
	struct pea_bench_kstats s = {};
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct pb_kcount *c = per_cpu_ptr(&pb_kcounts, cpu);

		s.hits += READ_ONCE(c->hits);
		s.ok += READ_ONCE(c->ok);
		s.nospc += READ_ONCE(c->nospc);
		s.other += READ_ONCE(c->other);
		/* Racy against a running kprobe: read between phases. */
		memset(c, 0, sizeof(*c));
	}
	return copy_to_user(uarg, &s, sizeof(s)) ? -EFAULT : 0;
}

static long pb_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	long err;

	mutex_lock(&pb_lock);
	switch (cmd) {
	case PEA_BENCH_IOC_LOOP:
		err = pb_ioc_loop(uarg);
		break;
	case PEA_BENCH_IOC_KPROBE:
		err = pb_ioc_kprobe(uarg);
		break;
	case PEA_BENCH_IOC_KSTATS:
		err = pb_ioc_kstats(uarg);
		break;
	default:
		err = -ENOTTY;
	}
	mutex_unlock(&pb_lock);
	return err;
}

static const struct file_operations pb_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = pb_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice pb_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "pea_bench",
	.fops = &pb_fops,
	.mode = 0600,
};

static int __init pb_init(void)
{
	unsigned int i;
	int err;

	pb_payload = kmalloc(PEA_BENCH_MAX_PAYLOAD, GFP_KERNEL);
	if (!pb_payload)
		return -ENOMEM;
	for (i = 0; i < PEA_BENCH_MAX_PAYLOAD; i++)
		pb_payload[i] = (u8)(i * 7 + 1);
	err = misc_register(&pb_miscdev);
	if (err)
		kfree(pb_payload);
	return err;
}

static void __exit pb_exit(void)
{
	misc_deregister(&pb_miscdev);
	mutex_lock(&pb_lock);
	pb_kp_off();
	mutex_unlock(&pb_lock);
	kfree(pb_payload);
}

module_init(pb_init);
module_exit(pb_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("pea benchmark producers (benchmark only)");
