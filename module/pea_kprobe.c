// SPDX-License-Identifier: GPL-2.0
/*
 * pea: kprobe and kretprobe producers.
 *
 * PEA_MAP_IOC_ATTACH_PROBE on a map fd attaches a producer and returns a
 * link fd; closing the link detaches it, after in-flight handlers finish.
 * Every hit writes one struct pea_probe_record (plus optional bytes copied
 * from memory an argument points to, with the non-faulting copy routines)
 * through pea_output_reserve() on the current CPU.
 *
 * A kretprobe reads the arguments and the capture at entry, into its
 * instance data, and writes the record at return with the return value
 * and the latency. Its tgid filter applies at entry, its CPU filter at
 * return, on the CPU whose ring gets the record (as a perf kretprobe event
 * bound to a CPU counts the returns on that CPU).
 *
 * The probe is registered disabled, its resolved address published, and
 * only then armed: the first hit already carries the address.
 *
 * With kstack_depth the record ends with the kernel call stack of the hit
 * (pea_kstack.c); a kretprobe's is the one at entry.
 */
#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/pid_namespace.h>
#include <linux/ptrace.h>
#include <linux/security.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include "pea_internal.h"
#include "pea_link.h"
#include "pea_compat.h"
#include "pea_perm.h"

/* What a kretprobe keeps from entry to return. */
struct pea_rp_entry {
	u64 t0;
	u64 args[6];
	u16 flags;
	u16 capture_len;
	u32 kstack_nr;	/* entries at kstack_off in the instance data */
	u8 capture[];
};

static bool pea_link_is_ret(const struct pea_link *l)
{
	return l->flags & PEA_PROBE_F_RETPROBE;
}

/**
 * pea_read_args() - the six arguments of the calling convention
 * @regs: the registers at function entry (kernel or user)
 * @args: six slots to fill
 */
void pea_read_args(struct pt_regs *regs, u64 *args)
{
	unsigned int i;

	for (i = 0; i < 6; i++)
		args[i] = regs_get_kernel_argument(regs, i);
}

/*
 * copy_from_kernel_nofault() refuses non-canonical addresses by the CPU's
 * virtual address width (x86_virt_bits, from CPUID), not by the width the
 * page tables use. With 4-level paging on a CPU that has LA57 (booted
 * no5lvl) an address canonical for 57 bits but not for 48 passes that
 * check, and the load takes a #GP, which the exception fixup survives but
 * reports with a WARNING ("General protection fault in user access"):
 * panic_on_warn would turn a capture into a crash. Check the whole range
 * against the paging mode in use first.
 */
static bool pea_kernel_range_ok(const void *src, size_t len)
{
#ifdef CONFIG_X86_64
	unsigned long start = (unsigned long)src, last = start + len - 1;

	return last >= start &&
	       __is_canonical_address(start, __VIRTUAL_MASK_SHIFT + 1) &&
	       __is_canonical_address(last, __VIRTUAL_MASK_SHIFT + 1);
#else
	return true;
#endif
}

static long pea_copy_nofault(void *dst, const void *src, size_t len,
			     bool user)
{
	if (user)
		return copy_from_user_nofault(dst, (const void __user *)src,
					      len);
	if (!pea_kernel_range_ok(src, len))
		return -EFAULT;
	return copy_from_kernel_nofault(dst, src, len);
}

/*
 * strncpy_from_{user,kernel}_nofault() are not exported to modules: copy
 * page by page (a chunk within one page is readable or not as a whole)
 * and stop at the first NUL. Return the length with the NUL, @count if
 * there is none in @count bytes, or -EFAULT.
 */
static long pea_strncpy_nofault(u8 *dst, const u8 *src, size_t count,
				bool user)
{
	size_t n = 0, chunk;
	u8 *nul;

	while (n < count) {
		chunk = min(count - n, PAGE_SIZE -
			    offset_in_page((unsigned long)(src + n)));
		if (pea_copy_nofault(dst + n, src + n, chunk, user))
			return -EFAULT;
		nul = memchr(dst + n, 0, chunk);
		if (nul)
			return nul - dst + 1;
		n += chunk;
	}
	return count;
}

/**
 * pea_capture() - copy what argument capture_arg points to
 * @l: the link
 * @args: the six arguments
 * @buf: capture_len + 1 bytes
 * @flags: gets PEA_REC_F_CAPTURE and maybe _FAULT or _TRUNCATED
 *
 * Return: the bytes kept in @buf.
 */
u32 pea_capture(struct pea_link *l, const u64 *args, u8 *buf, u16 *flags)
{
	const void *ptr = (const void *)(unsigned long)args[l->capture_arg];
	bool user = l->capture_flags & PEA_CAPTURE_USER;
	u32 len = l->capture_len;
	long n;

	*flags |= PEA_REC_F_CAPTURE;
	if (l->capture_mode == PEA_CAPTURE_FIXED) {
		if (pea_copy_nofault(buf, ptr, len, user)) {
			*flags |= PEA_REC_F_FAULT;
			return 0;
		}
		return len;
	}

	/* A string: ask for one byte more to learn whether it was cut. */
	n = pea_strncpy_nofault(buf, ptr, len + 1, user);
	if (n <= 0) {
		*flags |= PEA_REC_F_FAULT;
		return 0;
	}
	if (n == len + 1 && buf[len]) {
		*flags |= PEA_REC_F_TRUNCATED;
		return len;
	}
	return n - 1;	/* the NUL is not kept */
}

static void pea_link_write_stack(struct pea_link *l, const u64 *args, s64 ret,
				 u64 latency, u16 flags, const void *cap,
				 u32 caplen, const u64 *ips, u32 nr)
{
	struct pea_output_handle h;
	struct pea_probe_record *r;
	struct task_struct *task = current;
	u32 extra = l->counter_map ? sizeof(struct pea_event_value) : 0;
	u32 used = sizeof(*r) + extra + caplen;

	if (nr)
		flags |= PEA_REC_F_KSTACK;
	pea_link_count_hit(l);
	if (pea_output_reserve(l->map, PEA_F_CURRENT_CPU,
			       pea_kstack_rec_size(used, nr), &h)) {
		this_cpu_inc(l->stats->errors);
		return;
	}
	r = h.data;
	if (extra) {
		flags |= PEA_REC_F_COUNTERS;
		if (pea_read_value(l->counter_map, PEA_F_CURRENT_CPU,
				   (struct pea_event_value *)(r + 1), extra))
			flags |= PEA_REC_F_COUNTER_ERR;
	}
	r->time_ns = ktime_get_mono_fast_ns();
	r->id = l->rec_id;
	r->addr = READ_ONCE(l->addr);	/* published before arming */
	r->cpu = smp_processor_id();
	r->pid = task_pid_nr_ns(task, l->pid_ns);
	r->tgid = task_tgid_nr_ns(task, l->pid_ns);
	r->flags = flags;
	r->capture_len = caplen;
	strscpy_pad(r->comm, task->comm, sizeof(r->comm));
	memcpy(r->args, args, sizeof(r->args));
	r->ret = ret;
	r->latency_ns = latency;
	memcpy((u8 *)(r + 1) + extra, cap, caplen);
	if (nr)
		pea_kstack_put(r, used, ips, nr);
	pea_output_commit(&h);
	this_cpu_inc(l->stats->written);
}

/**
 * pea_link_write() - write one struct pea_probe_record into the link's map
 * @l: the link
 * @args: the six arguments
 * @ret: the return value (returns), else 0
 * @latency: entry to return in ns (returns), else 0
 * @flags: PEA_REC_F_*
 * @cap: the capture, @caplen bytes
 * @caplen: bytes of @cap
 *
 * Preemption must be off: the record goes to this CPU's event.
 */
void pea_link_write(struct pea_link *l, const u64 *args, s64 ret,
		    u64 latency, u16 flags, const void *cap, u32 caplen)
{
	pea_link_write_stack(l, args, ret, latency, flags, cap, caplen, NULL,
			     0);
}

/**
 * pea_probe_hit() - write the record of an entry hit, with its capture
 * and, with kstack_depth, its kernel stack
 * @l: the link
 * @args: the six arguments
 * @flags: PEA_REC_F_* the record carries beyond the capture's
 * @regs: the registers at the hit (the stack is unwound from them)
 *
 * The capture and the stack go into this nesting level's scratch slot
 * first, so that the record is reserved at its exact size. Preemption
 * must be off: the slot is this CPU's.
 */
void pea_probe_hit(struct pea_link *l, const u64 *args, u16 flags,
		   struct pt_regs *regs)
{
	struct pea_scratch *s;
	u32 caplen = 0, nr;

	if (l->capture_mode == PEA_CAPTURE_NONE && !l->kstack_depth) {
		pea_link_write(l, args, 0, 0, flags, NULL, 0);
		return;
	}
	/* Handlers run with preemption off; a nested one takes the next slot. */
	s = pea_scratch_get();
	if (s) {
		if (l->capture_mode != PEA_CAPTURE_NONE)
			caplen = pea_capture(l, args, s->cap, &flags);
		nr = pea_kstack_save(regs, READ_ONCE(l->addr), s->ips,
				     l->kstack_depth);
		pea_link_write_stack(l, args, 0, 0, flags, s->cap, caplen,
				     s->ips, nr);
	} else {
		this_cpu_inc(l->stats->errors);
	}
	pea_scratch_put();
}

static int pea_kprobe_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct pea_link *l = container_of(kp, struct pea_link, kp);
	u64 args[6];

	if (pea_link_filtered(l))
		return 0;
	pea_read_args(regs, args);
	pea_probe_hit(l, args, 0, regs);
	return 0;
}

/* The stack a kretprobe instance keeps from entry (kstack_depth slots). */
static u64 *pea_rp_kstack(struct pea_link *l, struct kretprobe_instance *ri)
{
	return (u64 *)(ri->data + l->kstack_off);
}

static int pea_kretprobe_entry(struct kretprobe_instance *ri,
			       struct pt_regs *regs)
{
	struct pea_link *l = container_of(get_kretprobe(ri), struct pea_link,
					  rp);
	struct pea_rp_entry *e = (struct pea_rp_entry *)ri->data;

	/* The CPU filter applies at return, where the record is written. */
	if (pea_link_filtered_tgid(l))
		return 1;	/* no return handler for this call */
	pea_read_args(regs, e->args);
	e->flags = PEA_REC_F_RETPROBE;
	e->capture_len = 0;
	if (l->capture_mode != PEA_CAPTURE_NONE)
		e->capture_len = pea_capture(l, e->args, e->capture, &e->flags);
	/* The instance is this call's alone until its return handler ran. */
	e->kstack_nr = pea_kstack_save(regs, READ_ONCE(l->addr),
				       pea_rp_kstack(l, ri), l->kstack_depth);
	e->t0 = ktime_get_mono_fast_ns();
	return 0;
}

static int pea_kretprobe_ret(struct kretprobe_instance *ri,
			     struct pt_regs *regs)
{
	struct pea_link *l = container_of(get_kretprobe(ri), struct pea_link,
					  rp);
	struct pea_rp_entry *e = (struct pea_rp_entry *)ri->data;

	if (pea_link_filtered_cpu(l))
		return 0;
	pea_link_write_stack(l, e->args, (s64)regs_return_value(regs),
			     ktime_get_mono_fast_ns() - e->t0, e->flags,
			     e->capture, e->capture_len, pea_rp_kstack(l, ri),
			     e->kstack_nr);
	return 0;
}

static int pea_check_probe_attr(const struct pea_probe_attr *a)
{
	const char *end = memchr(a->symbol, 0, sizeof(a->symbol));
	int err;

	if (a->flags & ~PEA_PROBE_FLAGS)
		return -EINVAL;
	if (!(a->flags & PEA_PROBE_F_COUNTERS) && a->counter_map)
		return -EINVAL;
	if (!end || end == a->symbol)
		return -EINVAL;
	if ((a->flags & PEA_PROBE_F_RETPROBE) && a->offset)
		return -EINVAL;
	/* kprobe.offset is an unsigned int: refuse what it cannot hold. */
	if (a->offset > UINT_MAX)
		return -EINVAL;
	/* As tracefs: maxactive is for kretprobes, at most 4096 of them. */
	if (a->maxactive > PEA_MAXACTIVE_MAX ||
	    (a->maxactive && !(a->flags & PEA_PROBE_F_RETPROBE)))
		return -EINVAL;
	if (a->filter_tgid < 0 || a->filter_cpu < -1 ||
	    a->filter_cpu >= (int)nr_cpu_ids)
		return -EINVAL;
	err = pea_kstack_check(a->kstack_depth, a->reserved);
	if (err)
		return err;
	if (a->capture_mode == PEA_CAPTURE_NONE)
		return a->capture_arg || a->capture_len || a->capture_flags ?
			-EINVAL : 0;
	if (a->capture_mode > PEA_CAPTURE_FIXED || a->capture_arg > 5 ||
	    !a->capture_len || a->capture_len > PEA_CAPTURE_MAX ||
	    (a->capture_flags & ~PEA_CAPTURE_USER))
		return -EINVAL;
	return 0;
}

/*
 * Arm a kprobe registered disabled, once its address is published and its
 * function passed trace_kprobe's notrace rule. The address is stored
 * before enable_kprobe() patches the probe in: arming synchronises every
 * CPU (text_poke_bp()'s IPIs, or ftrace's update) after the store, so a
 * handler that runs finds it (READ_ONCE(), paired with this WRITE_ONCE()).
 */
static int pea_kprobe_arm(struct pea_link *l, struct kprobe *kp)
{
	int err;

	WRITE_ONCE(l->addr, (unsigned long)kp->addr);
	err = pea_kprobe_notrace(kp);
	if (!err)
		err = enable_kprobe(kp);
	return err;
}

/*
 * With every kprobe disarmed (debugfs kprobes/enabled 0) enable_kprobe()
 * succeeds but leaves the probe disabled, and re-arming all kprobes skips
 * disabled ones: such a link would never fire. Registered again without
 * KPROBE_FLAG_DISABLED (its address published, its function checked), it
 * is armed with the others, as Linux's kprobe events are. Nothing fires
 * in between: no kprobe is armed.
 */
static int pea_kprobe_rearm(struct pea_link *l)
{
	struct kprobe *kp = pea_link_is_ret(l) ? &l->rp.kp : &l->kp;

	if (!kprobe_disabled(kp))
		return 0;
	if (pea_link_is_ret(l))
		unregister_kretprobe(&l->rp);
	else
		unregister_kprobe(&l->kp);
	kp->addr = NULL;	/* resolved from the symbol again */
	kp->flags = 0;
	return pea_link_is_ret(l) ? register_kretprobe(&l->rp) :
				    register_kprobe(&l->kp);
}

static int pea_link_register(struct pea_link *l, const void *arg)
{
	const struct pea_probe_attr *a = arg;
	size_t isize;
	int err;

	if (pea_link_is_ret(l)) {
		l->rp.kp.symbol_name = l->symbol;
		l->rp.kp.flags = KPROBE_FLAG_DISABLED;
		l->rp.entry_handler = pea_kretprobe_entry;
		l->rp.handler = pea_kretprobe_ret;
		l->kstack_off = pea_kstack_offset(sizeof(struct pea_rp_entry) +
				(a->capture_mode ? a->capture_len + 1 : 0));
		l->rp.data_size = l->kstack_off +
				  a->kstack_depth * sizeof(u64);
		/* register_kretprobe()'s default, made explicit: it is charged. */
		l->rp.maxactive = a->maxactive ? a->maxactive :
				  max_t(unsigned int, 10,
					2 * num_possible_cpus());
		isize = sizeof(struct kretprobe_instance) + l->rp.data_size;
		err = pea_link_charge(l, pea_kretprobe_mem(l->rp.maxactive,
							   isize));
		if (err)
			return err;
		err = register_kretprobe(&l->rp);
		if (err)
			return err;
		err = pea_kprobe_arm(l, &l->rp.kp);
		if (err)
			unregister_kretprobe(&l->rp);
	} else {
		l->kp.symbol_name = l->symbol;
		l->kp.offset = a->offset;
		l->kp.flags = KPROBE_FLAG_DISABLED;
		l->kp.pre_handler = pea_kprobe_pre;
		err = register_kprobe(&l->kp);
		if (err)
			return err;
		err = pea_kprobe_arm(l, &l->kp);
		if (err)
			unregister_kprobe(&l->kp);
	}
	return err ? err : pea_kprobe_rearm(l);
}

/*
 * Kernel lockdown, as Linux applies it: trace_kprobe refuses to register
 * a kprobe under LOCKDOWN_KPROBES, and BPF loses bpf_probe_read_kernel()
 * under LOCKDOWN_BPF_READ_KERNEL (both at the confidentiality level);
 * user-pointer reads stay allowed.
 */
static int pea_probe_lockdown(const struct pea_probe_attr *a)
{
	int err = security_locked_down(LOCKDOWN_KPROBES);

	if (err)
		return err;
	if (a->capture_mode != PEA_CAPTURE_NONE &&
	    !(a->capture_flags & PEA_CAPTURE_USER))
		return security_locked_down(LOCKDOWN_BPF_READ_KERNEL);
	return 0;
}

/**
 * pea_probe_attach() - PEA_MAP_IOC_ATTACH_PROBE: attach a producer
 * @map: the map the producer writes into (the ioctl's map fd)
 * @ua: struct pea_probe_attr in user memory
 *
 * Return: a link fd, or -EACCES (as the kprobe PMU: CAP_PERFMON or
 * CAP_SYS_ADMIN; at perf_event_paranoid 3, CAP_SYS_ADMIN), -EPERM (a
 * kernel-memory capture without CAP_BPF and CAP_PERFMON; kernel lockdown),
 * -EFAULT, -EINVAL (attr; size below PEA_PROBE_ATTR_SIZE_VER0; offset past
 * UINT_MAX, maxactive past PEA_MAXACTIVE_MAX or on a kprobe, kstack_depth
 * past PEA_KSTACK_MAX, reserved not zero), -E2BIG (attr tail), -EBADF
 * (counter_map is not a map fd), -EOPNOTSUPP (kstack_depth where pea
 * cannot unwind), -EOVERFLOW (kstack_depth past perf_event_max_stack),
 * -EMLINK (PEA_MAX_LINKS live, or the caller's
 * max_user_links), -ENOENT (no such symbol), -EILSEQ (offset not at an
 * instruction), -EINVAL (a function kprobes refuse; a notrace function,
 * as trace_kprobe), -ENOMEM (no memory; max_user_probe_kb or
 * max_probe_kb reached), -EMFILE.
 */
long pea_probe_attach(struct pea_map *map,
		      const struct pea_probe_attr __user *ua)
{
	struct pea_probe_attr a;
	struct pea_link *l;
	long err;

	err = pea_perm_kprobe();
	if (err)
		return err;
	err = pea_link_copy_attr(&a, sizeof(a), PEA_PROBE_ATTR_SIZE_VER0, ua);
	if (err)
		return err;
	err = pea_check_probe_attr(&a);
	if (err)
		return err;
	/* Kernel memory behind an argument: a kprobe program's rule. */
	if (a.capture_mode != PEA_CAPTURE_NONE &&
	    !(a.capture_flags & PEA_CAPTURE_USER)) {
		err = pea_perm_kernel_read();
		if (err)
			return err;
	}
	err = pea_probe_lockdown(&a);
	if (err)
		return err;
	l = pea_link_alloc(map, PEA_LINK_KPROBE, a.id, a.flags, a.filter_tgid,
			   a.filter_cpu);
	if (IS_ERR(l))
		return PTR_ERR(l);
	l->capture_arg = a.capture_arg;
	l->capture_mode = a.capture_mode;
	l->capture_len = a.capture_len;
	l->capture_flags = a.capture_flags;
	l->kstack_depth = a.kstack_depth;
	memcpy(l->symbol, a.symbol, sizeof(l->symbol));
	if (a.flags & PEA_PROBE_F_COUNTERS) {
		l->counter_map = pea_map_fget(a.counter_map);
		if (IS_ERR(l->counter_map)) {
			err = PTR_ERR(l->counter_map);
			l->counter_map = NULL;
			pea_link_free(l);
			return err;
		}
	}
	return pea_link_install(l, a.flags & PEA_PROBE_F_CLOEXEC,
				pea_link_register, &a);
}
