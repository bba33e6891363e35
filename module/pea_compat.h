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
#include <linux/perf_event.h>
#include <linux/hrtimer.h>
#include <linux/capability.h>
#include <linux/err.h>
#include <linux/uprobes.h>
#include <linux/kprobes.h>
#include <linux/slab.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#ifdef CONFIG_KRETPROBE_ON_RETHOOK
#include <linux/rethook.h>
#endif
#include "pea_limits.h"

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

/*
 * The perf_event_open() rule for exclude_kernel == 0: perf_event_paranoid
 * <= 1 or CAP_PERFMON/CAP_SYS_ADMIN, then the LSM hook. Kernels that
 * export perf_allow_kernel() (6.12) get exactly that. Older ones (6.1)
 * export neither sysctl_perf_event_paranoid nor security_perf_event_open():
 * there the sysctl is read through its proc file (pea_perf_paranoid()) and
 * the LSM's PERF_SECURITY_KERNEL hook cannot be called.
 */
static inline int pea_perf_allow_kernel(void)
{
#ifdef PEA_HAVE_PERF_ALLOW_KERNEL
	return perf_allow_kernel();
#else
	if (pea_perf_paranoid() > 1 && !perfmon_capable())
		return -EACCES;
	return 0;
#endif
}

/*
 * A perf context's time and the offset that turns local_clock() into it
 * (perf's ctx->timeoffset, kept for NMI readers). Later kernels group
 * them in struct perf_time_ctx.
 */
static inline u64 pea_ctx_time(const struct perf_event_context *ctx)
{
#ifdef PEA_HAVE_PERF_TIME_CTX
	return READ_ONCE(ctx->time.time);
#else
	return READ_ONCE(ctx->time);
#endif
}

static inline u64 pea_ctx_timeoffset(const struct perf_event_context *ctx)
{
#ifdef PEA_HAVE_PERF_TIME_CTX
	return READ_ONCE(ctx->time.offset);
#else
	return READ_ONCE(ctx->timeoffset);
#endif
}

/* hrtimer_setup() replaced hrtimer_init() + .function in 6.13. */
static inline void pea_hrtimer_setup(struct hrtimer *t,
				     enum hrtimer_restart (*fn)(struct hrtimer *),
				     clockid_t clock, enum hrtimer_mode mode)
{
#ifdef PEA_HAVE_HRTIMER_SETUP
	hrtimer_setup(t, fn, clock, mode);
#else
	hrtimer_init(t, clock, mode);
	t->function = fn;
#endif
}

/*
 * uprobe_register() returns the struct uprobe (or an ERR_PTR) in 6.12,
 * and uprobe_unregister() became uprobe_unregister_nosync(), which no
 * longer waits for handlers in flight, plus uprobe_unregister_sync(),
 * which does. pea_uprobe_unregister() returns when no handler of @uc
 * runs any more, on both.
 */
static inline int pea_uprobe_register_compat(struct inode *inode,
					     loff_t offset,
					     struct uprobe_consumer *uc,
					     struct uprobe **uprobe)
{
#ifdef PEA_HAVE_UPROBE_NOSYNC
	struct uprobe *u = uprobe_register(inode, offset, 0, uc);

	if (IS_ERR(u))
		return PTR_ERR(u);
	*uprobe = u;
	return 0;
#else
	*uprobe = NULL;
	return uprobe_register(inode, offset, uc);
#endif
}

static inline void pea_uprobe_unregister_wait(struct inode *inode,
					      loff_t offset,
					      struct uprobe *uprobe,
					      struct uprobe_consumer *uc)
{
#ifdef PEA_HAVE_UPROBE_NOSYNC
	uprobe_unregister_nosync(uprobe, uc);
	uprobe_unregister_sync();
#else
	uprobe_unregister(inode, offset, uc);
#endif
}

/* The consumer's handlers gained a session cookie (6.13): unused. */
#ifdef PEA_HAVE_UPROBE_HANDLER_DATA
#define PEA_UPROBE_HANDLER_ARGS(uc, regs) \
	struct uprobe_consumer *(uc), struct pt_regs *(regs), __u64 *pea_data
#define PEA_URETPROBE_HANDLER_ARGS(uc, func, regs) \
	struct uprobe_consumer *(uc), unsigned long (func), \
	struct pt_regs *(regs), __u64 *pea_data
#else
#define PEA_UPROBE_HANDLER_ARGS(uc, regs) \
	struct uprobe_consumer *(uc), struct pt_regs *(regs)
#define PEA_URETPROBE_HANDLER_ARGS(uc, func, regs) \
	struct uprobe_consumer *(uc), unsigned long (func), \
	struct pt_regs *(regs)
#endif

/*
 * trace_kprobe refuses functions without an ftrace location where the
 * kernel has CONFIG_DYNAMIC_FTRACE and not CONFIG_KPROBE_EVENTS_ON_NOTRACE
 * (configuration probes): pea_notrace.c.
 */
#if defined(PEA_HAVE_DYNAMIC_FTRACE) && \
	!defined(PEA_HAVE_KPROBE_EVENTS_ON_NOTRACE)
#define PEA_REFUSE_NOTRACE 1
int pea_kprobe_notrace(struct kprobe *kp);
#else
static inline int pea_kprobe_notrace(struct kprobe *kp)
{
	return 0;
}
#endif

/*
 * What register_kretprobe() allocates for @maxactive instances of @size
 * bytes (struct kretprobe_instance and the data): a struct rethook, and
 * one kmalloc() per instance on a freelist (6.1), or an objpool (6.12):
 * per possible CPU one vmalloc() (whole pages) of a slot, which holds a
 * ring of roundup_pow_of_two(@maxactive) pointers and its share of the
 * instances, plus the array of the slots.
 */
static inline size_t pea_kretprobe_mem(unsigned int maxactive, size_t size)
{
	size_t total = 0;
#ifdef PEA_HAVE_RETHOOK_OBJPOOL
	unsigned int ncpu = num_possible_cpus(), i = 0, nodes;
	size_t cap = roundup_pow_of_two(maxactive);
	int cpu;

	size = ALIGN(size, sizeof(long));
	for_each_possible_cpu(cpu) {
		nodes = maxactive / ncpu + (i++ < maxactive % ncpu);
		total += PAGE_ALIGN(struct_size_t(struct objpool_slot, entries,
						  cap) + size * nodes);
	}
	total += kmalloc_size_roundup(nr_cpu_ids * sizeof(void *));
#else
	total = (size_t)maxactive * kmalloc_size_roundup(size);
#endif
#ifdef CONFIG_KRETPROBE_ON_RETHOOK
	total += kmalloc_size_roundup(sizeof(struct rethook));
#endif
	return total;
}

/*
 * fprobe links (pea_fprobe.c): Kbuild gives PEA_HAVE_FPROBE only with
 * PEA_HAVE_KPROBES_ON_FTRACE, PEA_HAVE_FPROBE_ENTRY_CB and
 * PEA_HAVE_FPROBE_PT_REGS (handlers that return int and take struct
 * pt_regs) and PEA_HAVE_RETHOOK_OBJPOOL (the return nodes' pool, whose
 * count a closed return link holds).
 */
#ifdef PEA_HAVE_FPROBE
#include <linux/fprobe.h>

/*
 * What register_fprobe_ips() allocates for @nr functions and, with an
 * exit handler, @maxactive return nodes of @data bytes of entry data:
 * the ftrace filter hash (one struct ftrace_func_entry per function and
 * at most 2^12 buckets, as ftrace sizes it; struct ftrace_hash itself,
 * kernel/trace/trace.h's, is four words and an rcu_head), the ops' dynamic
 * trampoline (a page), and the rethook's objpool of nodes: struct
 * fprobe_rethook_node (kernel/trace/fprobe.c: a struct rethook_node, the
 * entry ip and parent ip) and the data.
 */
static inline size_t pea_fprobe_mem(u32 nr, u32 maxactive, size_t data)
{
	size_t total = PAGE_SIZE;
	unsigned int bits = min(fls(nr), 12);

	total += (size_t)nr *
		 kmalloc_size_roundup(sizeof(struct ftrace_func_entry));
	total += kmalloc_size_roundup(4 * sizeof(long) +
				      sizeof(struct rcu_head)) +
		 kmalloc_size_roundup(sizeof(struct hlist_head) << bits);
	if (maxactive)
		total += pea_kretprobe_mem(maxactive,
					   sizeof(struct rethook_node) +
					   2 * sizeof(unsigned long) + data);
	return total;
}
#endif

/*
 * The kfunc set of pea_kfunc.c (PEA_HAVE_KFUNCS: the build gives pea.ko
 * BTF, see Kbuild). Later kernels (6.9) mark a set of kfuncs with
 * BTF_SET8_KFUNCS, and refuse to register a module's set without it.
 */
#ifdef PEA_HAVE_KFUNCS
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>

#ifdef PEA_HAVE_BTF_KFUNCS_START
#define PEA_KFUNCS_START(name)	BTF_KFUNCS_START(name)
#define PEA_KFUNCS_END(name)	BTF_KFUNCS_END(name)
#else
#define PEA_KFUNCS_START(name)	BTF_SET8_START(name)
#define PEA_KFUNCS_END(name)	BTF_SET8_END(name)
#endif

/*
 * The kfunc tag (6.3). Before it, a global function the BTF ids name is
 * kept as it is: never inlined is all it takes.
 */
#ifndef PEA_HAVE_BPF_KFUNC_TAG
#define __bpf_kfunc noinline
#endif

/*
 * The program types pea registers its kfuncs for. Kernels that filter
 * kfuncs per program (btf_kfunc_filter_t, 6.6) have the common hook
 * (6.2): BPF_PROG_TYPE_UNSPEC's set serves every program type. Before,
 * module kfuncs serve only the hooks of tracing (fentry, fexit, fmod_ret,
 * tp_btf, LSM, iterators), XDP, TC and SYSCALL programs; tracing and LSM
 * share a hook, so LSM is not registered apart (a second set on a hook
 * fails, and a failure frees every set of the module).
 */
#ifdef PEA_HAVE_KFUNC_COMMON_HOOK
#define PEA_KFUNC_PROG_TYPES_NAME	"all program types"
#else
#define PEA_KFUNC_PROG_TYPES_NAME	"tracing lsm xdp tc syscall programs"
#endif

static inline unsigned int
pea_kfunc_prog_types(const enum bpf_prog_type **types)
{
#ifdef PEA_HAVE_KFUNC_COMMON_HOOK
	static const enum bpf_prog_type t[] = { BPF_PROG_TYPE_UNSPEC };
#else
	static const enum bpf_prog_type t[] = {
		BPF_PROG_TYPE_TRACING, BPF_PROG_TYPE_XDP,
		BPF_PROG_TYPE_SCHED_CLS, BPF_PROG_TYPE_SYSCALL,
	};
#endif
	*types = t;
	return ARRAY_SIZE(t);
}

/*
 * The zero-copy kfuncs (pea_kf_reserve(), pea_kf_rec_data(),
 * pea_kf_commit()) keep preemption disabled from the reserve to the
 * commit while the program's own code runs between them, so only
 * programs that cannot sleep may call them, and the verifier must be
 * the one to say so. With a per-program filter (6.6) the common hook's
 * set refuses sleepable programs, SYSCALL programs (bpf_sys_bpf() sleeps
 * whatever their flags) and extensions. Before, a set serves a whole
 * hook: the tracing hook takes fentry.s and lsm.s programs and the
 * SYSCALL hook bpf_sys_bpf() callers, so only XDP's and TC's sets have
 * the zero-copy kfuncs. PREEMPT_RT has none: there a map or helper
 * between reserve and commit may take a spinlock_t, which sleeps. The
 * kfuncs are built there too (in pea's BTF, so a program naming them
 * loads as far as the verifier), in no hook's set: "calling kernel
 * function pea_kf_reserve is not allowed".
 * The filter also refuses programs that call bpf_throw() (6.7), whose
 * unwinding from a global subprogram the verifier does not check for
 * held references; 6.1 has no bpf_throw().
 */
#ifdef CONFIG_PREEMPT_RT
#define PEA_KFUNC_ZC_OFF \
	"PREEMPT_RT: a spinlock_t a program takes between reserve and commit would sleep with preemption off"
#elif defined(PEA_HAVE_KFUNC_COMMON_HOOK)
#define PEA_KFUNC_ZC_TYPES_NAME \
	"programs that cannot sleep or throw (not sleepable, syscall, extension or calling bpf_throw)"
#else
#define PEA_KFUNC_ZC_TYPES_NAME	"xdp tc programs"
#endif

/* Whether the hook of @type gets the set with the zero-copy kfuncs. */
static inline bool pea_kfunc_zc_hook(enum bpf_prog_type type)
{
#if defined(PEA_KFUNC_ZC_OFF)
	return false;
#elif defined(PEA_HAVE_KFUNC_COMMON_HOOK)
	return true;
#else
	return type == BPF_PROG_TYPE_XDP || type == BPF_PROG_TYPE_SCHED_CLS;
#endif
}

#ifdef PEA_HAVE_KFUNC_COMMON_HOOK
/* Where the sleepable bit lives: struct bpf_prog (6.10) or its aux. */
static inline bool pea_bpf_prog_sleepable(const struct bpf_prog *prog)
{
#ifdef PEA_HAVE_BPF_PROG_SLEEPABLE
	return prog->sleepable;
#else
	return prog->aux->sleepable;
#endif
}
#endif
#endif /* PEA_HAVE_KFUNCS */

/*
 * Tasks with a memory map but no user context of their own, whose pt_regs
 * are copies from their creator (ip 0): no user stack is walked for them,
 * as get_perf_callchain() does not on 6.12 (is_user_task()): kernel
 * threads and user workers (io_uring's, vhost's). Before user workers had
 * a flag of their own, io_uring's workers are PF_IO_WORKER.
 */
#ifdef PEA_HAVE_PF_USER_WORKER
#define PEA_PF_NO_USER_CTX	(PF_KTHREAD | PF_USER_WORKER | PF_IO_WORKER)
#else
#define PEA_PF_NO_USER_CTX	(PF_KTHREAD | PF_IO_WORKER)
#endif

#endif /* _PEA_COMPAT_H */
