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
 *   PEA_BENCH_IOC_KSTATS  read and clear the kprobe's counters;
 *   PEA_BENCH_IOC_FPCALL  call PEA_BENCH_FP_NR functions of this module,
 *                         which pea's fprobe and kprobe links probe (the
 *                         "fprobe" figure), timed.
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

/* ---- functions for the fprobe figure ---- */

#define PB_FP(n)							\
noinline long pea_bench_fp_##n(long a);				\
noinline long pea_bench_fp_##n(long a)				\
{									\
	asm volatile("" : : "r"(a) : "memory");			\
	return a + 1;							\
}

PB_FP(000)
PB_FP(001)
PB_FP(002)
PB_FP(003)
PB_FP(004)
PB_FP(005)
PB_FP(006)
PB_FP(007)
PB_FP(008)
PB_FP(009)
PB_FP(010)
PB_FP(011)
PB_FP(012)
PB_FP(013)
PB_FP(014)
PB_FP(015)
PB_FP(016)
PB_FP(017)
PB_FP(018)
PB_FP(019)
PB_FP(020)
PB_FP(021)
PB_FP(022)
PB_FP(023)
PB_FP(024)
PB_FP(025)
PB_FP(026)
PB_FP(027)
PB_FP(028)
PB_FP(029)
PB_FP(030)
PB_FP(031)
PB_FP(032)
PB_FP(033)
PB_FP(034)
PB_FP(035)
PB_FP(036)
PB_FP(037)
PB_FP(038)
PB_FP(039)
PB_FP(040)
PB_FP(041)
PB_FP(042)
PB_FP(043)
PB_FP(044)
PB_FP(045)
PB_FP(046)
PB_FP(047)
PB_FP(048)
PB_FP(049)
PB_FP(050)
PB_FP(051)
PB_FP(052)
PB_FP(053)
PB_FP(054)
PB_FP(055)
PB_FP(056)
PB_FP(057)
PB_FP(058)
PB_FP(059)
PB_FP(060)
PB_FP(061)
PB_FP(062)
PB_FP(063)
PB_FP(064)
PB_FP(065)
PB_FP(066)
PB_FP(067)
PB_FP(068)
PB_FP(069)
PB_FP(070)
PB_FP(071)
PB_FP(072)
PB_FP(073)
PB_FP(074)
PB_FP(075)
PB_FP(076)
PB_FP(077)
PB_FP(078)
PB_FP(079)
PB_FP(080)
PB_FP(081)
PB_FP(082)
PB_FP(083)
PB_FP(084)
PB_FP(085)
PB_FP(086)
PB_FP(087)
PB_FP(088)
PB_FP(089)
PB_FP(090)
PB_FP(091)
PB_FP(092)
PB_FP(093)
PB_FP(094)
PB_FP(095)
PB_FP(096)
PB_FP(097)
PB_FP(098)
PB_FP(099)
PB_FP(100)
PB_FP(101)
PB_FP(102)
PB_FP(103)
PB_FP(104)
PB_FP(105)
PB_FP(106)
PB_FP(107)
PB_FP(108)
PB_FP(109)
PB_FP(110)
PB_FP(111)
PB_FP(112)
PB_FP(113)
PB_FP(114)
PB_FP(115)
PB_FP(116)
PB_FP(117)
PB_FP(118)
PB_FP(119)
PB_FP(120)
PB_FP(121)
PB_FP(122)
PB_FP(123)
PB_FP(124)
PB_FP(125)
PB_FP(126)
PB_FP(127)
PB_FP(128)
PB_FP(129)
PB_FP(130)
PB_FP(131)
PB_FP(132)
PB_FP(133)
PB_FP(134)
PB_FP(135)
PB_FP(136)
PB_FP(137)
PB_FP(138)
PB_FP(139)
PB_FP(140)
PB_FP(141)
PB_FP(142)
PB_FP(143)
PB_FP(144)
PB_FP(145)
PB_FP(146)
PB_FP(147)
PB_FP(148)
PB_FP(149)
PB_FP(150)
PB_FP(151)
PB_FP(152)
PB_FP(153)
PB_FP(154)
PB_FP(155)
PB_FP(156)
PB_FP(157)
PB_FP(158)
PB_FP(159)
PB_FP(160)
PB_FP(161)
PB_FP(162)
PB_FP(163)
PB_FP(164)
PB_FP(165)
PB_FP(166)
PB_FP(167)
PB_FP(168)
PB_FP(169)
PB_FP(170)
PB_FP(171)
PB_FP(172)
PB_FP(173)
PB_FP(174)
PB_FP(175)
PB_FP(176)
PB_FP(177)
PB_FP(178)
PB_FP(179)
PB_FP(180)
PB_FP(181)
PB_FP(182)
PB_FP(183)
PB_FP(184)
PB_FP(185)
PB_FP(186)
PB_FP(187)
PB_FP(188)
PB_FP(189)
PB_FP(190)
PB_FP(191)
PB_FP(192)
PB_FP(193)
PB_FP(194)
PB_FP(195)
PB_FP(196)
PB_FP(197)
PB_FP(198)
PB_FP(199)

static long (* const pb_fp_funcs[PEA_BENCH_FP_NR])(long a) = {
	pea_bench_fp_000, pea_bench_fp_001, pea_bench_fp_002, pea_bench_fp_003, pea_bench_fp_004,
	pea_bench_fp_005, pea_bench_fp_006, pea_bench_fp_007, pea_bench_fp_008, pea_bench_fp_009,
	pea_bench_fp_010, pea_bench_fp_011, pea_bench_fp_012, pea_bench_fp_013, pea_bench_fp_014,
	pea_bench_fp_015, pea_bench_fp_016, pea_bench_fp_017, pea_bench_fp_018, pea_bench_fp_019,
	pea_bench_fp_020, pea_bench_fp_021, pea_bench_fp_022, pea_bench_fp_023, pea_bench_fp_024,
	pea_bench_fp_025, pea_bench_fp_026, pea_bench_fp_027, pea_bench_fp_028, pea_bench_fp_029,
	pea_bench_fp_030, pea_bench_fp_031, pea_bench_fp_032, pea_bench_fp_033, pea_bench_fp_034,
	pea_bench_fp_035, pea_bench_fp_036, pea_bench_fp_037, pea_bench_fp_038, pea_bench_fp_039,
	pea_bench_fp_040, pea_bench_fp_041, pea_bench_fp_042, pea_bench_fp_043, pea_bench_fp_044,
	pea_bench_fp_045, pea_bench_fp_046, pea_bench_fp_047, pea_bench_fp_048, pea_bench_fp_049,
	pea_bench_fp_050, pea_bench_fp_051, pea_bench_fp_052, pea_bench_fp_053, pea_bench_fp_054,
	pea_bench_fp_055, pea_bench_fp_056, pea_bench_fp_057, pea_bench_fp_058, pea_bench_fp_059,
	pea_bench_fp_060, pea_bench_fp_061, pea_bench_fp_062, pea_bench_fp_063, pea_bench_fp_064,
	pea_bench_fp_065, pea_bench_fp_066, pea_bench_fp_067, pea_bench_fp_068, pea_bench_fp_069,
	pea_bench_fp_070, pea_bench_fp_071, pea_bench_fp_072, pea_bench_fp_073, pea_bench_fp_074,
	pea_bench_fp_075, pea_bench_fp_076, pea_bench_fp_077, pea_bench_fp_078, pea_bench_fp_079,
	pea_bench_fp_080, pea_bench_fp_081, pea_bench_fp_082, pea_bench_fp_083, pea_bench_fp_084,
	pea_bench_fp_085, pea_bench_fp_086, pea_bench_fp_087, pea_bench_fp_088, pea_bench_fp_089,
	pea_bench_fp_090, pea_bench_fp_091, pea_bench_fp_092, pea_bench_fp_093, pea_bench_fp_094,
	pea_bench_fp_095, pea_bench_fp_096, pea_bench_fp_097, pea_bench_fp_098, pea_bench_fp_099,
	pea_bench_fp_100, pea_bench_fp_101, pea_bench_fp_102, pea_bench_fp_103, pea_bench_fp_104,
	pea_bench_fp_105, pea_bench_fp_106, pea_bench_fp_107, pea_bench_fp_108, pea_bench_fp_109,
	pea_bench_fp_110, pea_bench_fp_111, pea_bench_fp_112, pea_bench_fp_113, pea_bench_fp_114,
	pea_bench_fp_115, pea_bench_fp_116, pea_bench_fp_117, pea_bench_fp_118, pea_bench_fp_119,
	pea_bench_fp_120, pea_bench_fp_121, pea_bench_fp_122, pea_bench_fp_123, pea_bench_fp_124,
	pea_bench_fp_125, pea_bench_fp_126, pea_bench_fp_127, pea_bench_fp_128, pea_bench_fp_129,
	pea_bench_fp_130, pea_bench_fp_131, pea_bench_fp_132, pea_bench_fp_133, pea_bench_fp_134,
	pea_bench_fp_135, pea_bench_fp_136, pea_bench_fp_137, pea_bench_fp_138, pea_bench_fp_139,
	pea_bench_fp_140, pea_bench_fp_141, pea_bench_fp_142, pea_bench_fp_143, pea_bench_fp_144,
	pea_bench_fp_145, pea_bench_fp_146, pea_bench_fp_147, pea_bench_fp_148, pea_bench_fp_149,
	pea_bench_fp_150, pea_bench_fp_151, pea_bench_fp_152, pea_bench_fp_153, pea_bench_fp_154,
	pea_bench_fp_155, pea_bench_fp_156, pea_bench_fp_157, pea_bench_fp_158, pea_bench_fp_159,
	pea_bench_fp_160, pea_bench_fp_161, pea_bench_fp_162, pea_bench_fp_163, pea_bench_fp_164,
	pea_bench_fp_165, pea_bench_fp_166, pea_bench_fp_167, pea_bench_fp_168, pea_bench_fp_169,
	pea_bench_fp_170, pea_bench_fp_171, pea_bench_fp_172, pea_bench_fp_173, pea_bench_fp_174,
	pea_bench_fp_175, pea_bench_fp_176, pea_bench_fp_177, pea_bench_fp_178, pea_bench_fp_179,
	pea_bench_fp_180, pea_bench_fp_181, pea_bench_fp_182, pea_bench_fp_183, pea_bench_fp_184,
	pea_bench_fp_185, pea_bench_fp_186, pea_bench_fp_187, pea_bench_fp_188, pea_bench_fp_189,
	pea_bench_fp_190, pea_bench_fp_191, pea_bench_fp_192, pea_bench_fp_193, pea_bench_fp_194,
	pea_bench_fp_195, pea_bench_fp_196, pea_bench_fp_197, pea_bench_fp_198, pea_bench_fp_199,
};

static long pb_ioc_fpcall(struct pea_bench_fpcall __user *uarg)
{
	struct pea_bench_fpcall a;
	long sum = 0;
	u64 t0;
	u32 r, i;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (!a.nfuncs || a.nfuncs > PEA_BENCH_FP_NR || !a.rounds)
		return -EINVAL;
	preempt_disable();
	t0 = ktime_get_ns();
	for (r = 0; r < a.rounds; r++)
		for (i = 0; i < a.nfuncs; i++)
			sum += pb_fp_funcs[i](r);
	a.ns = ktime_get_ns() - t0;
	preempt_enable();
	asm volatile("" : : "r"(sum));
	return copy_to_user(uarg, &a, sizeof(a)) ? -EFAULT : 0;
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
	case PEA_BENCH_IOC_FPCALL:
		err = pb_ioc_fpcall(uarg);
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
