// SPDX-License-Identifier: GPL-2.0
/*
 * pea: uprobe and uretprobe producers.
 *
 * PEA_MAP_IOC_ATTACH_UPROBE on a map fd registers a uprobe consumer on
 * (inode, file offset) and returns a link fd with kprobe links' rules.
 * Uprobe handlers run in the probed task's context, preemptible (6.1:
 * under the uprobe's rwsem; 6.12: under RCU Tasks Trace); pea disables
 * preemption only around the per-CPU part (filters, capture buffers,
 * pea_output_reserve() on the current CPU).
 *
 * A uretprobe needs the arguments and the entry time at return, which
 * the kernel's ret_handler does not carry. Each uretprobe link keeps a
 * fixed table of PEA_UPROBE_SLOTS slots, one per task with calls in
 * flight, each a stack of PEA_UPROBE_DEPTH frames (entry time, user stack
 * pointer, arguments, capture). A task claims a free slot with cmpxchg()
 * and is then the only one to touch it until it gives it back when its
 * last frame returns: no locks, no allocation after the attach. The slot
 * of a task that exited inside the function is taken over when no slot
 * is free. Returns
 * are matched by the stack pointer: a frame whose entry stack pointer is
 * below the return's belongs to a call that has returned (the frame
 * matched, or deeper frames whose returns pea never saw: longjmp, the
 * kernel's uretprobe depth limit). A return with no frame (table full,
 * deeper than PEA_UPROBE_DEPTH, attached mid-call) writes nothing and
 * counts as missed in PEA_LINK_IOC_INFO.
 */
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/namei.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include "pea_internal.h"
#include "pea_link.h"
#include "pea_compat.h"

#define PEA_UPROBE_SLOTS_BITS	6
#define PEA_UPROBE_SLOTS	BIT(PEA_UPROBE_SLOTS_BITS)
#define PEA_UPROBE_DEPTH	4

/* One call in flight: what its return needs. */
struct pea_uprobe_frame {
	u64 t0;
	unsigned long sp;
	u64 args[6];
	u16 flags;
	u16 capture_len;
};

/*
 * A task's frames. @tid (the global thread id, 0: free) is claimed with
 * cmpxchg(); only the claimer writes the rest. @start (the task's
 * start_time) tells a task reusing a dead owner's tid from that owner.
 */
struct pea_uprobe_slot {
	pid_t tid;
	u32 depth;
	u64 start;
	struct pea_uprobe_frame f[PEA_UPROBE_DEPTH];
};

static struct pea_link *pea_uc_link(struct uprobe_consumer *uc)
{
	return container_of(uc, struct pea_link, up.uc);
}

/* The tgid filter, without counting: for returns, counted at entry. */
static bool pea_uprobe_other_tgid(struct pea_link *l)
{
	return l->filter_tgid &&
	       task_tgid_nr_ns(current, l->pid_ns) != l->filter_tgid;
}

static int pea_uprobe_handler(PEA_UPROBE_HANDLER_ARGS(uc, regs))
{
	struct pea_link *l = pea_uc_link(uc);
	u64 args[6];

	preempt_disable();
	if (!pea_link_filtered(l)) {
		pea_read_args(regs, args);
		pea_probe_hit(l, args, PEA_REC_F_UPROBE, regs);
	}
	preempt_enable();
	return 0;
}

static u8 *pea_uprobe_cap(struct pea_link *l, struct pea_uprobe_slot *s,
			  u32 depth)
{
	size_t i = (s - l->up.slots) * PEA_UPROBE_DEPTH + depth;

	if (!l->up.caps)
		return NULL;
	return l->up.caps + i * (l->capture_len + 1);
}

/* Whether a task with global thread id @tid exists (not yet reaped). */
static bool pea_tid_alive(pid_t tid)
{
	bool alive;

	rcu_read_lock();
	alive = pid_task(find_pid_ns(tid, &init_pid_ns), PIDTYPE_PID);
	rcu_read_unlock();
	return alive;
}

/* Take slot @s from @old (0: free); the acquire pairs with put's release. */
static bool pea_uprobe_take(struct pea_uprobe_slot *s, pid_t old)
{
	if (cmpxchg_acquire(&s->tid, old, current->pid) != old)
		return false;
	s->depth = 0;
	s->start = current->start_time;
	return true;
}

/*
 * The current task's slot, or with @claim a free one, or else one whose
 * owner has exited inside the function (its frames can never return).
 */
static struct pea_uprobe_slot *pea_uprobe_slot(struct pea_link *l,
					       bool claim)
{
	u32 h = hash_32(current->pid, PEA_UPROBE_SLOTS_BITS), i;
	struct pea_uprobe_slot *s;
	pid_t tid;

	for (i = 0; i < PEA_UPROBE_SLOTS; i++) {
		s = &l->up.slots[(h + i) % PEA_UPROBE_SLOTS];
		if (READ_ONCE(s->tid) != current->pid)
			continue;
		if (s->start == current->start_time)
			return s;
		/* A dead task's, with our tid: give it back, as a reclaim. */
		cmpxchg(&s->tid, current->pid, 0);
	}
	if (!claim)
		return NULL;
	for (i = 0; i < PEA_UPROBE_SLOTS; i++) {
		s = &l->up.slots[(h + i) % PEA_UPROBE_SLOTS];
		if (!READ_ONCE(s->tid) && pea_uprobe_take(s, 0))
			return s;
	}
	for (i = 0; i < PEA_UPROBE_SLOTS; i++) {
		s = &l->up.slots[(h + i) % PEA_UPROBE_SLOTS];
		tid = READ_ONCE(s->tid);
		if (tid && !pea_tid_alive(tid) && pea_uprobe_take(s, tid))
			return s;
	}
	return NULL;
}

static void pea_uprobe_put_slot(struct pea_uprobe_slot *s)
{
	if (!s->depth)	/* release: done with the frames, then free */
		smp_store_release(&s->tid, 0);
}

/* A uretprobe's entry: keep a frame for the return. */
static int pea_uretprobe_entry(PEA_UPROBE_HANDLER_ARGS(uc, regs))
{
	struct pea_link *l = pea_uc_link(uc);
	unsigned long sp = user_stack_pointer(regs);
	struct pea_uprobe_frame *f;
	struct pea_uprobe_slot *s;
	bool filtered;

	preempt_disable();
	filtered = pea_link_filtered(l);
	preempt_enable();
	if (filtered)
		return 0;
	s = pea_uprobe_slot(l, true);
	if (!s)
		return 0;	/* the return counts it as missed */
	/* Frames at or below this stack pointer have returned unseen. */
	while (s->depth && s->f[s->depth - 1].sp <= sp)
		s->depth--;
	if (s->depth == PEA_UPROBE_DEPTH) {
		/* Too deep: the outermost call loses its frame. */
		memmove(&s->f[0], &s->f[1], sizeof(s->f[0]) *
			(PEA_UPROBE_DEPTH - 1));
		if (l->up.caps)
			memmove(pea_uprobe_cap(l, s, 0),
				pea_uprobe_cap(l, s, 1),
				(size_t)(l->capture_len + 1) *
				(PEA_UPROBE_DEPTH - 1));
		s->depth--;
	}
	f = &s->f[s->depth];
	f->sp = sp;
	pea_read_args(regs, f->args);
	f->flags = PEA_REC_F_UPROBE | PEA_REC_F_RETPROBE;
	f->capture_len = 0;
	if (l->capture_mode != PEA_CAPTURE_NONE)
		f->capture_len = pea_capture(l, f->args,
					     pea_uprobe_cap(l, s, s->depth),
					     &f->flags);
	f->t0 = ktime_get_mono_fast_ns();
	s->depth++;
	return 0;
}

static int pea_uretprobe_ret(PEA_URETPROBE_HANDLER_ARGS(uc, func, regs))
{
	u64 now = ktime_get_mono_fast_ns();
	struct pea_link *l = pea_uc_link(uc);
	unsigned long sp = user_stack_pointer(regs);
	struct pea_uprobe_frame *f = NULL;
	struct pea_uprobe_slot *s;

	if (pea_uprobe_other_tgid(l))
		return 0;
	s = pea_uprobe_slot(l, false);
	/* The frame of this call is the outermost one below @sp. */
	while (s && s->depth && s->f[s->depth - 1].sp < sp)
		f = &s->f[--s->depth];
	preempt_disable();
	if (f)
		pea_link_write(l, f->args, (s64)regs_return_value(regs),
			       now - f->t0, f->flags,
			       pea_uprobe_cap(l, s, s->depth), f->capture_len);
	else
		this_cpu_inc(l->stats->missed);
	preempt_enable();
	if (s)
		pea_uprobe_put_slot(s);
	return 0;
}

/**
 * pea_uprobe_unregister() - remove a registered uprobe link's consumer
 * @l: the link
 *
 * Returns when no handler of the link runs any more. Calls of a
 * uretprobe's function in flight return through the kernel's trampoline
 * without calling it.
 */
void pea_uprobe_unregister(struct pea_link *l)
{
	pea_uprobe_unregister_wait(d_inode(l->up.path.dentry), l->up.offset,
				   l->up.uprobe, &l->up.uc);
}

/**
 * pea_uprobe_free() - release what a uprobe link holds (from pea_link_free())
 * @l: the link, not registered
 */
void pea_uprobe_free(struct pea_link *l)
{
	if (l->up.path.dentry)
		path_put(&l->up.path);
	kvfree(l->up.slots);
	kvfree(l->up.caps);
}

static int pea_uprobe_register(struct pea_link *l, const void *arg)
{
	return pea_uprobe_register_compat(d_inode(l->up.path.dentry),
					  l->up.offset, &l->up.uc,
					  &l->up.uprobe);
}

static int pea_uprobe_check_attr(const struct pea_uprobe_attr *a)
{
	if (a->flags & ~PEA_UPROBE_FLAGS || a->reserved)
		return -EINVAL;
	if (!memchr(a->name, 0, sizeof(a->name)))
		return -EINVAL;
	if (a->path ? a->path_fd != -1 : a->path_fd < 0)
		return a->path ? -EINVAL : -EBADF;
	if (a->offset > LLONG_MAX || a->filter_tgid < 0)
		return -EINVAL;
	if (a->capture_mode == PEA_CAPTURE_NONE)
		return a->capture_arg || a->capture_len ? -EINVAL : 0;
	if (a->capture_mode > PEA_CAPTURE_FIXED || a->capture_arg > 5 ||
	    !a->capture_len || a->capture_len > PEA_CAPTURE_MAX)
		return -EINVAL;
	return 0;
}

static int pea_uprobe_path(const struct pea_uprobe_attr *a, struct path *p)
{
	struct file *f;
	int err;

	if (a->path) {
		err = user_path_at(AT_FDCWD, u64_to_user_ptr(a->path),
				   LOOKUP_FOLLOW, p);
		if (err)
			return err;
	} else {
		f = fget(a->path_fd);
		if (!f)
			return -EBADF;
		*p = f->f_path;
		path_get(p);
		fput(f);
	}
	/* As the uprobe PMU: a regular file, the offset within it. */
	if (!d_is_reg(p->dentry) ||
	    a->offset > i_size_read(d_inode(p->dentry))) {
		path_put(p);
		return -EINVAL;
	}
	return 0;
}

static int pea_uprobe_setup(struct pea_link *l, const struct pea_uprobe_attr *a)
{
	l->capture_arg = a->capture_arg;
	l->capture_mode = a->capture_mode;
	l->capture_len = a->capture_len;
	l->capture_flags = PEA_CAPTURE_USER;
	l->addr = a->offset;
	l->up.offset = a->offset;
	if (a->name[0])
		memcpy(l->symbol, a->name, sizeof(l->symbol));
	else
		snprintf(l->symbol, sizeof(l->symbol), "%pd+0x%llx",
			 l->up.path.dentry, a->offset);
	if (a->flags & PEA_UPROBE_F_RETPROBE) {
		l->up.uc.handler = pea_uretprobe_entry;
		l->up.uc.ret_handler = pea_uretprobe_ret;
		l->up.slots = kvcalloc(PEA_UPROBE_SLOTS, sizeof(*l->up.slots),
				       GFP_KERNEL_ACCOUNT);
		if (!l->up.slots)
			return -ENOMEM;
		if (a->capture_mode != PEA_CAPTURE_NONE) {
			l->up.caps = kvcalloc(PEA_UPROBE_SLOTS *
					      PEA_UPROBE_DEPTH,
					      a->capture_len + 1,
					      GFP_KERNEL_ACCOUNT);
			if (!l->up.caps)
				return -ENOMEM;
		}
	} else {
		l->up.uc.handler = pea_uprobe_handler;
	}
	/* A uretprobe's pairing table is the attacher's (pea_quota.c). */
	return pea_link_charge(l, l->up.slots ? PEA_UPROBE_SLOTS * (sizeof(*l->up.slots) +
			       (l->up.caps ? PEA_UPROBE_DEPTH * (a->capture_len + 1) : 0)) : 0);
}

/**
 * pea_uprobe_attach() - PEA_MAP_IOC_ATTACH_UPROBE: attach a uprobe producer
 * @map: the map the producer writes into (the ioctl's map fd)
 * @ua: struct pea_uprobe_attr in user memory
 *
 * Return: a link fd, or -EPERM (needs CAP_PERFMON or CAP_SYS_ADMIN, as
 * kprobes), -EFAULT, -EINVAL (attr; not a regular file; offset past the
 * file's end or refused by uprobe_register()), -E2BIG (attr tail), -EBADF
 * (path_fd), -ENOENT and the other path lookup errors, -EMLINK
 * (PEA_MAX_LINKS live), -ENOMEM, -EMFILE, uprobe_register()'s errors.
 */
long pea_uprobe_attach(struct pea_map *map,
		       const struct pea_uprobe_attr __user *ua)
{
	struct pea_uprobe_attr a;
	struct pea_link *l;
	struct path path;
	long err;

	if (!perfmon_capable())
		return -EPERM;
	err = pea_link_copy_attr(&a, sizeof(a), sizeof(a), ua);
	if (err)
		return err;
	err = pea_uprobe_check_attr(&a);
	if (err)
		return err;
	err = pea_uprobe_path(&a, &path);
	if (err)
		return err;
	l = pea_link_alloc(map, PEA_LINK_UPROBE, a.id, a.flags, a.filter_tgid,
			   -1);
	if (IS_ERR(l)) {
		path_put(&path);
		return PTR_ERR(l);
	}
	l->up.path = path;
	err = pea_uprobe_setup(l, &a);
	if (err) {
		pea_link_free(l);
		return err;
	}
	return pea_link_install(l, a.flags & PEA_UPROBE_F_CLOEXEC,
				pea_uprobe_register, NULL);
}
