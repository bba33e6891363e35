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
 * fixed table of maxactive slots (chosen by the attacher, default
 * PEA_UPROBE_MAXACTIVE), one per task with calls in flight, each a stack
 * of PEA_UPROBE_DEPTH frames (entry time, user stack pointer, arguments,
 * capture). A task claims a free slot with cmpxchg() on the slot's owner
 * word (thread id and generation) and is then the only one to touch it
 * until it gives it back when its last frame returns: no locks, no
 * allocation after the attach. The slot of a task that exited inside the
 * function is taken over when no slot is free; frames from before an
 * exec are dropped at the task's next hit. Returns are matched by the
 * stack pointer: a frame whose entry stack pointer is below the return's
 * belongs to a call that has returned (the frame matched, or deeper
 * frames whose returns pea never saw: longjmp, the kernel's uretprobe
 * depth limit). A return with no frame (table full, deeper than
 * PEA_UPROBE_DEPTH, attached mid-call) writes nothing and counts as
 * missed in PEA_LINK_IOC_INFO.
 *
 * The probe goes on the real inode of the path (d_real_inode()), as the
 * kernel's own uprobe events do, so that a file on overlayfs (a container
 * image) is probed where its code really is.
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

#define PEA_UPROBE_DEPTH	4
#define PEA_UPROBE_MAXACTIVE	64	/* tasks paired at once by default */

/* One call in flight: what its return needs. */
struct pea_uprobe_frame {
	u64 t0;
	unsigned long sp;
	u64 args[6];
	u16 flags;
	u16 capture_len;
};

/*
 * A task's frames. Its owner is l->up.owners[i] of the same index: the
 * owner's global thread id in the low 32 bits (0: free) and a generation
 * in the high 32 bits that every claim and every release advances, so a
 * cmpxchg() from an owner value read earlier fails once the slot has
 * changed hands in between, even back to the same tid (no ABA). Only the
 * task that claimed a slot touches the rest of it: @start and @exec_id
 * (the owner's start_time and self_exec_id, which tell the owner from a
 * later task that reuses its tid, and frames from before an exec), @depth
 * and the frames.
 */
struct pea_uprobe_slot {
	u64 start;
	u64 exec_id;
	u32 depth;
	struct pea_uprobe_frame f[PEA_UPROBE_DEPTH];
};

/* The owner value that follows @old, for thread id @tid (0: free). */
static u64 pea_uprobe_next_owner(u64 old, pid_t tid)
{
	return ((old >> 32) + 1) << 32 | (u32)tid;
}

static pid_t pea_uprobe_owner_tid(u64 owner)
{
	return (pid_t)(u32)owner;
}

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

static u8 *pea_uprobe_cap(struct pea_link *l, u32 slot, u32 depth)
{
	size_t i = (size_t)slot * PEA_UPROBE_DEPTH + depth;

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

/*
 * Take slot @i from its owner value @old for the current task. The
 * acquire pairs with the release of pea_uprobe_put_slot(): the frames of
 * the previous owner are done with before this one writes them.
 */
static bool pea_uprobe_take(struct pea_link *l, u32 i, u64 old)
{
	struct pea_uprobe_slot *s = &l->up.slots[i];

	if (cmpxchg_acquire(&l->up.owners[i], old,
			    pea_uprobe_next_owner(old, current->pid)) != old)
		return false;
	WRITE_ONCE(s->start, current->start_time);
	s->exec_id = current->self_exec_id;
	s->depth = 0;
	return true;
}

/*
 * The index of the current task's slot, or with @claim of a free one, or
 * else of one whose owner has exited inside the function (its frames can
 * never return); -1 if none. The scan is linear over the link's
 * maxactive slots (what the attacher chose): no task, nor any number of
 * them short of maxactive, can keep another task from a slot.
 */
static int pea_uprobe_slot(struct pea_link *l, bool claim)
{
	u32 n = l->up.nr_slots, h, i, k;
	pid_t me = current->pid;
	struct pea_uprobe_slot *s;
	u64 o;

	h = reciprocal_scale(hash_32(me, 32), n);
	for (k = 0, i = h; k < n; k++, i = i + 1 == n ? 0 : i + 1) {
		o = READ_ONCE(l->up.owners[i]);
		if (pea_uprobe_owner_tid(o) != me)
			continue;
		s = &l->up.slots[i];
		/*
		 * Only a task with our tid can have claimed it: us, or one
		 * that is dead (it cannot run while we hold its tid), whose
		 * slot a third task may be taking over right now (the
		 * cmpxchg() below then fails): its start is read once.
		 */
		if (READ_ONCE(s->start) != current->start_time) {
			/* A dead task's, with our tid: give it back. */
			cmpxchg_release(&l->up.owners[i], o,
					pea_uprobe_next_owner(o, 0));
			continue;
		}
		if (s->exec_id != current->self_exec_id) {
			/* Calls from before an exec never return. */
			s->exec_id = current->self_exec_id;
			s->depth = 0;
		}
		return i;
	}
	if (!claim)
		return -1;
	for (k = 0, i = h; k < n; k++, i = i + 1 == n ? 0 : i + 1) {
		o = READ_ONCE(l->up.owners[i]);
		if (!pea_uprobe_owner_tid(o) && pea_uprobe_take(l, i, o))
			return i;
	}
	for (k = 0, i = h; k < n; k++, i = i + 1 == n ? 0 : i + 1) {
		o = READ_ONCE(l->up.owners[i]);
		if (pea_uprobe_owner_tid(o) &&
		    !pea_tid_alive(pea_uprobe_owner_tid(o)) &&
		    pea_uprobe_take(l, i, o))
			return i;
	}
	return -1;
}

/* Give slot @i back if its last frame returned. */
static void pea_uprobe_put_slot(struct pea_link *l, u32 i)
{
	u64 o = READ_ONCE(l->up.owners[i]);

	if (l->up.slots[i].depth)
		return;
	/* Release: done with the frames before another task takes them. */
	smp_store_release(&l->up.owners[i], pea_uprobe_next_owner(o, 0));
}

/* A uretprobe's entry: keep a frame for the return. */
static int pea_uretprobe_entry(PEA_UPROBE_HANDLER_ARGS(uc, regs))
{
	struct pea_link *l = pea_uc_link(uc);
	unsigned long sp = user_stack_pointer(regs);
	struct pea_uprobe_frame *f;
	struct pea_uprobe_slot *s;
	bool filtered;
	u32 d;
	int i;

	preempt_disable();
	filtered = pea_link_filtered(l);
	preempt_enable();
	if (filtered)
		return 0;
	i = pea_uprobe_slot(l, true);
	if (i < 0)
		return 0;	/* the return counts it as missed */
	s = &l->up.slots[i];
	d = min_t(u32, s->depth, PEA_UPROBE_DEPTH);
	/* Frames at or below this stack pointer have returned unseen. */
	while (d && s->f[d - 1].sp <= sp)
		d--;
	if (d >= PEA_UPROBE_DEPTH) {
		/* Too deep: the outermost call loses its frame. */
		d = PEA_UPROBE_DEPTH - 1;
		memmove(&s->f[0], &s->f[1], sizeof(s->f[0]) * d);
		if (l->up.caps)
			memmove(pea_uprobe_cap(l, i, 0),
				pea_uprobe_cap(l, i, 1),
				(size_t)(l->capture_len + 1) * d);
	}
	f = &s->f[d];
	f->sp = sp;
	pea_read_args(regs, f->args);
	f->flags = PEA_REC_F_UPROBE | PEA_REC_F_RETPROBE;
	f->capture_len = 0;
	if (l->capture_mode != PEA_CAPTURE_NONE)
		f->capture_len = pea_capture(l, f->args,
					     pea_uprobe_cap(l, i, d),
					     &f->flags);
	f->t0 = ktime_get_mono_fast_ns();
	s->depth = d + 1;
	return 0;
}

static int pea_uretprobe_ret(PEA_URETPROBE_HANDLER_ARGS(uc, func, regs))
{
	u64 now = ktime_get_mono_fast_ns();
	struct pea_link *l = pea_uc_link(uc);
	unsigned long sp = user_stack_pointer(regs);
	struct pea_uprobe_frame *f = NULL;
	struct pea_uprobe_slot *s = NULL;
	u32 d = 0;
	int i;

	if (pea_uprobe_other_tgid(l))
		return 0;
	i = pea_uprobe_slot(l, false);
	if (i >= 0) {
		s = &l->up.slots[i];
		d = min_t(u32, s->depth, PEA_UPROBE_DEPTH);
		/* The frame of this call is the outermost one below @sp. */
		while (d && s->f[d - 1].sp < sp)
			f = &s->f[--d];
		s->depth = d;
	}
	preempt_disable();
	if (f)
		pea_link_write(l, f->args, (s64)regs_return_value(regs),
			       now - f->t0, f->flags, pea_uprobe_cap(l, i, d),
			       f->capture_len);
	else
		this_cpu_inc(l->stats->missed);
	preempt_enable();
	if (i >= 0)
		pea_uprobe_put_slot(l, i);
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
	pea_uprobe_unregister_wait(d_real_inode(l->up.path.dentry),
				   l->up.offset, l->up.uprobe, &l->up.uc);
}

/**
 * pea_uprobe_free() - release what a uprobe link holds (from pea_link_free())
 * @l: the link, not registered
 */
void pea_uprobe_free(struct pea_link *l)
{
	if (l->up.path.dentry)
		path_put(&l->up.path);
	kvfree(l->up.owners);
	kvfree(l->up.slots);
	kvfree(l->up.caps);
}

static int pea_uprobe_register(struct pea_link *l, const void *arg)
{
	return pea_uprobe_register_compat(d_real_inode(l->up.path.dentry),
					  l->up.offset, &l->up.uc,
					  &l->up.uprobe);
}

static int pea_uprobe_check_attr(const struct pea_uprobe_attr *a)
{
	if (a->flags & ~PEA_UPROBE_FLAGS)
		return -EINVAL;
	/* As kretprobes': for returns only, at most PEA_MAXACTIVE_MAX. */
	if (a->maxactive > PEA_MAXACTIVE_MAX ||
	    (a->maxactive && !(a->flags & PEA_UPROBE_F_RETPROBE)))
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
	u32 n;

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
		n = a->maxactive ? a->maxactive : PEA_UPROBE_MAXACTIVE;
		l->up.uc.handler = pea_uretprobe_entry;
		l->up.uc.ret_handler = pea_uretprobe_ret;
		l->up.nr_slots = n;
		l->up.owners = kvcalloc(n, sizeof(*l->up.owners),
					GFP_KERNEL_ACCOUNT);
		l->up.slots = kvcalloc(n, sizeof(*l->up.slots),
				       GFP_KERNEL_ACCOUNT);
		if (!l->up.owners || !l->up.slots)
			return -ENOMEM;
		if (a->capture_mode != PEA_CAPTURE_NONE) {
			l->up.caps = kvcalloc((size_t)n * PEA_UPROBE_DEPTH,
					      a->capture_len + 1,
					      GFP_KERNEL_ACCOUNT);
			if (!l->up.caps)
				return -ENOMEM;
		}
	} else {
		l->up.uc.handler = pea_uprobe_handler;
	}
	return 0;
}

/**
 * pea_uprobe_attach() - PEA_MAP_IOC_ATTACH_UPROBE: attach a uprobe producer
 * @map: the map the producer writes into (the ioctl's map fd)
 * @ua: struct pea_uprobe_attr in user memory
 *
 * Return: a link fd, or -EACCES (needs CAP_SYS_ADMIN, as the uprobe
 * PMU), -EFAULT, -EINVAL (attr; not a regular file; offset past the
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

	/*
	 * As the uprobe PMU since "perf: Revert to requiring CAP_SYS_ADMIN for
	 * uprobes" (both Debian kernels): a uprobe rewrites the text of every
	 * process that maps the file, so CAP_PERFMON is not enough. No check
	 * of perf_event_open() before the PMU's asks for more.
	 */
	if (!capable(CAP_SYS_ADMIN))
		return -EACCES;
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
