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

/*
 * One scratch slot (a capture, +1 byte for the NUL probe, and a stack)
 * per CPU and nesting level.
 */
struct pea_scratch_bufs {
	int level;
	struct pea_scratch slot[PEA_NEST_MAX];
};

static DEFINE_PER_CPU(struct pea_scratch_bufs, pea_scratch_bufs);
static LIST_HEAD(pea_links);
static DEFINE_MUTEX(pea_links_lock);
static atomic_t pea_nr_links = ATOMIC_INIT(0);

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

/**
 * pea_link_filtered_cpu() - whether the CPU filter rejects this hit
 * @l: the link
 *
 * Counts a rejected hit in the link's filtered counter.
 *
 * Return: true if the hit is to be skipped.
 */
bool pea_link_filtered_cpu(struct pea_link *l)
{
	if (l->filter_cpu >= 0 && smp_processor_id() != l->filter_cpu) {
		this_cpu_inc(l->stats->filtered);
		return true;
	}
	return false;
}

/**
 * pea_link_filtered_tgid() - whether the tgid filter rejects this hit
 * @l: the link
 *
 * Counts a rejected hit in the link's filtered counter.
 *
 * Return: true if the hit is to be skipped.
 */
bool pea_link_filtered_tgid(struct pea_link *l)
{
	if (l->filter_tgid &&
	    task_tgid_nr_ns(current, l->pid_ns) != l->filter_tgid) {
		this_cpu_inc(l->stats->filtered);
		return true;
	}
	return false;
}

/**
 * pea_link_filtered() - whether the tgid and CPU filters reject this hit
 * @l: the link
 *
 * Counts a rejected hit in the link's filtered counter.
 *
 * Return: true if the hit is to be skipped.
 */
bool pea_link_filtered(struct pea_link *l)
{
	return pea_link_filtered_cpu(l) || pea_link_filtered_tgid(l);
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

/**
 * pea_scratch_get() - this CPU's scratch slot for the current nesting level
 *
 * Preemption must be off. Every call, whatever it returns, is paired
 * with a pea_scratch_put().
 *
 * A handler that interrupts another on this CPU (a kprobe in a hardirq,
 * a tracepoint in an NMI) runs to completion before the interrupted one
 * resumes, so the levels nest like a stack: the increment is one
 * per-CPU read-modify-write that no interrupt can split, the slot it
 * returns belongs to this level until the matching decrement, and the
 * compiler barriers keep the slot's loads and stores between the two.
 *
 * Return: the slot, or NULL past PEA_NEST_MAX levels.
 */
struct pea_scratch *pea_scratch_get(void)
{
	int level = this_cpu_inc_return(pea_scratch_bufs.level) - 1;

	barrier();
	if (level >= PEA_NEST_MAX)
		return NULL;
	return this_cpu_ptr(&pea_scratch_bufs.slot[level]);
}

/**
 * pea_scratch_put() - give back the slot of pea_scratch_get()
 */
void pea_scratch_put(void)
{
	barrier();
	this_cpu_dec(pea_scratch_bufs.level);
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

static void pea_link_unregister(struct pea_link *l)
{
	if (l->kind == PEA_LINK_TP)
		pea_tp_unregister(l);
	else if (l->kind == PEA_LINK_UPROBE)
		pea_uprobe_unregister(l);
	else if (l->kind == PEA_LINK_NF)
		pea_nf_unregister(l);
	else if (pea_link_is_ret(l))
		unregister_kretprobe(&l->rp);
	else
		unregister_kprobe(&l->kp);
	/*
	 * Both wait for an RCU grace period after disarming: no handler of
	 * this link runs any more. Calls of a kretprobe's function still in
	 * flight return through the rethook with its handler cleared.
	 */
}

/**
 * pea_link_free() - free a link that is not (or no longer) registered
 * @l: the link, from pea_link_alloc()
 */
void pea_link_free(struct pea_link *l)
{
	if (l->kind == PEA_LINK_UPROBE)
		pea_uprobe_free(l);
	pea_quota_unlink(l);
	if (l->counter_map)
		pea_map_put(l->counter_map);
	pea_map_put(l->map);
	free_percpu(l->stats);
	put_pid_ns(l->pid_ns);
	kfree(l);
	atomic_dec(&pea_nr_links);
	atomic_dec(&pea_objects.links);
}

static int pea_link_release(struct inode *inode, struct file *file)
{
	struct pea_link *l = file->private_data;

	mutex_lock(&pea_links_lock);
	list_del(&l->node);
	mutex_unlock(&pea_links_lock);
	pea_link_unregister(l);
	pea_link_free(l);
	return 0;
}

static void pea_link_sum(struct pea_link *l, struct pea_link_stats *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		struct pea_link_stats *st = per_cpu_ptr(l->stats, cpu);

		/*
		 * Outcomes before hits (pairs with pea_link_count_hit()):
		 * a hit in flight shows as a hit without its outcome, never
		 * the other way round.
		 */
		sum->written += READ_ONCE(st->written);
		sum->errors += READ_ONCE(st->errors);
		sum->filtered += READ_ONCE(st->filtered);
		sum->missed += READ_ONCE(st->missed);
		smp_rmb();	/* pairs with pea_link_count_hit()'s */
		sum->hits += READ_ONCE(st->hits);
	}
}

static unsigned long pea_link_missed(struct pea_link *l,
				     const struct pea_link_stats *sum)
{
	if (l->kind == PEA_LINK_TP || l->kind == PEA_LINK_NF)
		return 0;
	if (l->kind == PEA_LINK_UPROBE)
		return sum->missed;
	return pea_link_is_ret(l) ? l->rp.nmissed + l->rp.kp.nmissed :
				    l->kp.nmissed;
}

static long pea_link_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	struct pea_link *l = file->private_data;
	struct pea_link_info info = {
		.id = l->rec_id,
		.addr = READ_ONCE(l->addr),
		.flags = l->flags,
		.map_id = l->map->id,
	};
	struct pea_link_stats sum;

	if (cmd != PEA_LINK_IOC_INFO)
		return -ENOTTY;
	pea_link_sum(l, &sum);
	info.hits = sum.hits + sum.filtered;
	info.written = sum.written;
	info.filtered = sum.filtered;
	info.errors = sum.errors;
	info.missed = pea_link_missed(l, &sum);
	memcpy(info.symbol, l->symbol, sizeof(info.symbol));
	return copy_to_user((void __user *)arg, &info, sizeof(info)) ?
		-EFAULT : 0;
}

static const struct file_operations pea_link_fops = {
	.owner = THIS_MODULE,
	.release = pea_link_release,
	.unlocked_ioctl = pea_link_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

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

/**
 * pea_link_copy_attr() - copy an attach ioctl's attr from user space
 * @a: the kernel's struct, @ksize bytes
 * @ksize: its size
 * @minsize: the smallest size taken (the struct's first version)
 * @ua: the user's struct, which starts with its __u32 size
 *
 * Every attach attr starts with its size. One smaller than @minsize, or
 * larger than a page, is EINVAL; a smaller one than @ksize gets zeroes
 * for the fields it lacks, and a larger one must have zeroes past @ksize
 * (E2BIG otherwise), as copy_struct_from_user() does (and perf with
 * PERF_ATTR_SIZE_VER0).
 *
 * Return: 0, or -EFAULT, -EINVAL or -E2BIG.
 */
int pea_link_copy_attr(void *a, size_t ksize, size_t minsize,
		       const void __user *ua)
{
	u32 size;

	if (get_user(size, (const u32 __user *)ua))
		return -EFAULT;
	if (size < minsize || size > PAGE_SIZE)
		return -EINVAL;
	return copy_struct_from_user(a, ksize, ua, size);
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

/**
 * pea_link_alloc() - a new link on @map, counted against PEA_MAX_LINKS
 * and the caller's max_user_links, its struct charged (pea_quota.c)
 * @map: the map the producer writes into (a reference is taken)
 * @kind: PEA_LINK_*
 * @id: the producer id records carry (0: the link's own id)
 * @flags: the attach flags
 * @filter_tgid: only this process (0: any), in the caller's pid namespace
 * @filter_cpu: only this CPU (-1: any)
 *
 * Return: the link, or ERR_PTR(-EMLINK) (PEA_MAX_LINKS, max_user_links) or
 * ERR_PTR(-ENOMEM) (no memory, max_user_probe_kb, max_probe_kb).
 */
struct pea_link *pea_link_alloc(struct pea_map *map, enum pea_link_kind kind,
				u64 id, u32 flags, int filter_tgid,
				int filter_cpu)
{
	struct pea_link *l;
	int err;

	if (atomic_inc_return(&pea_nr_links) > PEA_MAX_LINKS) {
		atomic_dec(&pea_nr_links);
		return ERR_PTR(-EMLINK);
	}
	l = kzalloc(sizeof(*l), GFP_KERNEL_ACCOUNT);
	if (!l)
		goto undo_count;
	l->stats = alloc_percpu_gfp(struct pea_link_stats, GFP_KERNEL_ACCOUNT);
	if (!l->stats)
		goto free_link;
	err = pea_quota_link(l);
	if (!err) {
		err = pea_link_charge(l, kmalloc_size_roundup(sizeof(*l)) +
				      sizeof(struct pea_link_stats) *
				      num_possible_cpus());
		if (err)
			pea_quota_unlink(l);
	}
	if (err) {
		free_percpu(l->stats);
		kfree(l);
		atomic_dec(&pea_nr_links);
		return ERR_PTR(err);
	}
	atomic_inc(&pea_objects.links);
	pea_map_get(map);
	l->map = map;
	l->kind = kind;
	l->id = pea_next_id();
	l->rec_id = id ? id : l->id;
	l->flags = flags;
	l->filter_tgid = filter_tgid;
	l->filter_cpu = filter_cpu;
	l->pid_ns = get_pid_ns(task_active_pid_ns(current));
	return l;

free_link:
	kfree(l);
undo_count:
	atomic_dec(&pea_nr_links);
	return ERR_PTR(-ENOMEM);
}

/**
 * pea_link_install() - register a link and give it a file and an fd
 * @l: the link, from pea_link_alloc(); freed on failure
 * @cloexec: O_CLOEXEC on the fd
 * @reg: registers the producer (it may fire at once)
 * @arg: passed to @reg
 *
 * The fd number is visible (another thread may close it by number) from
 * fd_install() on: the link is registered, listed and owned by its file
 * before that, and nothing after it can fail.
 *
 * Return: the link fd, or @reg's error, -EMFILE, -ENOMEM.
 */
long pea_link_install(struct pea_link *l, bool cloexec,
		      int (*reg)(struct pea_link *l, const void *arg),
		      const void *arg)
{
	struct file *file;
	long err;
	int fd;

	fd = get_unused_fd_flags(O_RDWR | (cloexec ? O_CLOEXEC : 0));
	if (fd < 0) {
		pea_link_free(l);
		return fd;
	}
	err = reg(l, arg);
	if (err)
		goto put_fd;
	file = anon_inode_getfile("[pea_link]", &pea_link_fops, l, O_RDWR);
	if (IS_ERR(file)) {
		err = PTR_ERR(file);
		pea_link_unregister(l);
		goto put_fd;
	}
	mutex_lock(&pea_links_lock);
	list_add_tail(&l->node, &pea_links);
	mutex_unlock(&pea_links_lock);
	fd_install(fd, file);
	return fd;

put_fd:
	put_unused_fd(fd);
	pea_link_free(l);
	return err;
}

/**
 * pea_links_show() - the debugfs "links" file: one line per live link
 * @m: the seq_file
 * @v: unused
 *
 * Return: 0.
 */
int pea_links_show(struct seq_file *m, void *v)
{
	struct pea_link_stats sum;
	struct pea_link *l;

	seq_puts(m, "# link_id map_id symbol flags hits written filtered errors missed\n");
	mutex_lock(&pea_links_lock);
	list_for_each_entry(l, &pea_links, node) {
		pea_link_sum(l, &sum);
		seq_printf(m, "%llu %llu %s 0x%x %llu %llu %llu %llu %lu\n",
			   l->id, l->map->id, l->symbol, l->flags,
			   sum.hits + sum.filtered, sum.written, sum.filtered,
			   sum.errors, pea_link_missed(l, &sum));
	}
	mutex_unlock(&pea_links_lock);
	return 0;
}
