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
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/namei.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/threads.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include "pea_internal.h"
#include "pea_agg.h"
#include "pea_link.h"
#include "pea_ustack.h"
#include "pea_provider.h"
#include "pea_probe_rec.h"
#include "pea_fetch.h"
#include "pea_pred.h"
#include "pea_compat.h"

#define PEA_UPROBE_DEPTH	4
#define PEA_UPROBE_MAXACTIVE	64	/* tasks paired at once by default */

/*
 * A slot's owner word: the owner's global thread id (below PID_MAX_LIMIT,
 * 2^22; 0: free), a PENDING bit while a claimer publishes the owner's
 * identity, and a generation in the other 41 bits that every claim and
 * every release advances: a cmpxchg() from an owner word read earlier
 * fails once the slot has changed hands in between, even back to the
 * same tid. 41 bits wrap after 2^41 claims and releases of one slot
 * (weeks at a million calls a second), longer than any handler stays
 * preempted between its read and its cmpxchg().
 */
#define PEA_OWNER_TID_BITS	22
#define PEA_OWNER_TID_MASK	(BIT_ULL(PEA_OWNER_TID_BITS) - 1)
#define PEA_OWNER_PENDING	BIT_ULL(PEA_OWNER_TID_BITS)
#define PEA_OWNER_GEN_SHIFT	(PEA_OWNER_TID_BITS + 1)

/*
 * A function's return pops the return address that was on top of the
 * stack at its first instruction: on x86 the user stack pointer at the
 * return is the entry's plus the address size, 8 for a 64-bit task and 4
 * for a 32-bit one (compat tasks run on both Debian kernels), for the
 * int3 trampoline and 6.12's uretprobe syscall alike, plus what a `ret
 * imm16` pops (i386 functions returning a struct pop its hidden pointer).
 * A return pairs only with the frame of its own entry (pea_uprobe_pop()).
 * pea knows this rule for x86 alone, and refuses uretprobes elsewhere
 * (pea_uprobe_check_attr()).
 */
#define PEA_UPROBE_RET_POP_MAX	32	/* 32-bit: ret imm16 past the address */

/* One call in flight: what its return needs. *//* One call in flight: what its return needs. */
struct pea_uprobe_frame {
	u64 t0;
	unsigned long sp;	/* the return's stack pointer, at the least */
	u64 args[6];
	u16 flags;
	u16 capture_len;
};

/*
 * A task's frames. Its owner is owners[i] of the link, same index. Only
 * the task that claimed a slot writes the rest of it: @start and
 * @exec_id (the owner's start_time and self_exec_id, published before the
 * owner word loses PENDING: they tell the owner from a later task that
 * reuses its tid, and frames from before an exec), @depth and the frames.
 */
struct pea_uprobe_slot {
	u64 start;
	u64 exec_id;
	u32 depth;
	struct pea_uprobe_frame f[PEA_UPROBE_DEPTH];
};

/* The owner word that follows @old, for thread id @tid (0: free). */
static u64 pea_uprobe_next_owner(u64 old, pid_t tid)
{
	return ((old >> PEA_OWNER_GEN_SHIFT) + 1) << PEA_OWNER_GEN_SHIFT |
	       ((u64)tid & PEA_OWNER_TID_MASK);
}

static pid_t pea_uprobe_owner_tid(u64 owner)
{
	return (pid_t)(owner & PEA_OWNER_TID_MASK);
}

/* A uprobe link: the link, then its consumer on (inode, offset). */
struct pea_uprobe_link {
	struct pea_link link;		/* first: pea_link_free() frees it */
	struct uprobe_consumer uc;
	struct path path;		/* holds the inode */
	loff_t offset;
	struct inode *inode;		/* registered on: the path's real inode */
	struct uprobe *uprobe;		/* what uprobe_register() gave, if any */
	u32 nr_slots;			/* uretprobes: tasks paired at once */
	atomic64_t next_reclaim;	/* jiffies_64: the next stale-slot scan */
	atomic64_t *owners;		/* each slot's owner and generation */
	struct pea_uprobe_slot *slots;	/* entries per task */
	u8 *caps;			/* their captures */
};

static_assert(offsetof(struct pea_uprobe_link, link) == 0);

static struct pea_uprobe_link *pea_up(struct pea_link *l)
{
	return container_of(l, struct pea_uprobe_link, link);
}

static struct pea_link *pea_uc_link(struct uprobe_consumer *uc)
{
	return &container_of(uc, struct pea_uprobe_link, uc)->link;
}

static int pea_uprobe_handler(PEA_UPROBE_HANDLER_ARGS(uc, regs))
{
	struct pea_link *l = pea_uc_link(uc);
	u64 args[6];

	pea_read_args(regs, args);
	/* While the handler may still sleep: see pea_fetch_prefault(). */
	if (l->fetch && !pea_link_other_tgid(l))
		pea_fetch_prefault(l->fetch, regs, args, 0);
	preempt_disable();
	if (!pea_link_filtered(l))
		pea_probe_hit(l, args, PEA_REC_F_UPROBE, regs);
	preempt_enable();
	return 0;
}

/* The size of a return address of the task at @regs. */
static unsigned long pea_uprobe_addr_size(struct pt_regs *regs)
{
#ifdef CONFIG_X86_64
	return user_64bit_mode(regs) ? 8 : 4;
#else
	return sizeof(long);
#endif
}

static u8 *pea_uprobe_cap(struct pea_link *l, u32 slot, u32 depth)
{
	struct pea_uprobe_link *up = pea_up(l);
	size_t i = (size_t)slot * PEA_UPROBE_DEPTH + depth;

	if (!up->caps)
		return NULL;
	return up->caps + i * (l->capture_len + 1);
}

/*
 * Whether the owner of slot @i, as its owner word @o names it, can never
 * return into its frames: no task has its tid any more, or the task with
 * it was started later (a reused tid) or has exec'd since. A zombie not
 * yet reaped still counts as alive.
 */
static bool pea_uprobe_stale(struct pea_link *l, u32 i, u64 o)
{
	struct pea_uprobe_link *up = pea_up(l);
	struct pea_uprobe_slot *s = &up->slots[i];
	/* Published before the owner word lost PENDING (acquired by caller). */
	u64 start = READ_ONCE(s->start), exec_id = READ_ONCE(s->exec_id);
	struct task_struct *t;
	bool stale;

	rcu_read_lock();
	t = pid_task(find_pid_ns(pea_uprobe_owner_tid(o), &init_pid_ns),
		     PIDTYPE_PID);
	stale = !t || t->start_time != start ||
		READ_ONCE(t->self_exec_id) != exec_id;
	rcu_read_unlock();
	return stale;
}

/*
 * Take slot @i from its owner word @old for the current task. The
 * acquire pairs with the release of pea_uprobe_put_slot(): the previous
 * owner is done with the frames before this one writes them; the owner's
 * identity is published (release) before the word loses PENDING, for
 * pea_uprobe_stale() of other tasks.
 */
static bool pea_uprobe_take(struct pea_link *l, u32 i, u64 old)
{
	struct pea_uprobe_link *up = pea_up(l);
	struct pea_uprobe_slot *s = &up->slots[i];
	u64 mine = pea_uprobe_next_owner(old, current->pid);

	if (atomic64_cmpxchg_acquire(&up->owners[i], old,
				     mine | PEA_OWNER_PENDING) != old)
		return false;
	WRITE_ONCE(s->start, current->start_time);
	WRITE_ONCE(s->exec_id, current->self_exec_id);
	s->depth = 0;
	atomic64_set_release(&up->owners[i], mine);
	return true;
}

/*
 * A slot whose owner is stale, taken for the current task, or -1. A scan
 * that finds none stops the others of the link for the rest of the
 * jiffy: with every slot held by a live task the scan (a pid lookup per
 * slot) is not repeated on every call; handlers on other CPUs that
 * started theirs in the same jiffy still finish them (at most one per
 * CPU).
 */
static int pea_uprobe_reclaim(struct pea_link *l, u32 h)
{
	struct pea_uprobe_link *up = pea_up(l);
	u32 n = up->nr_slots, i, k;
	u64 o, now = get_jiffies_64();

	/* After a scan that found nothing, none for the rest of the jiffy. */
	if (time_before64(now, (u64)atomic64_read(&up->next_reclaim)))
		return -1;
	for (k = 0, i = h; k < n; k++, i = i + 1 == n ? 0 : i + 1) {
		o = atomic64_read_acquire(&up->owners[i]);
		if (pea_uprobe_owner_tid(o) && !(o & PEA_OWNER_PENDING) &&
		    pea_uprobe_stale(l, i, o) && pea_uprobe_take(l, i, o))
			return i;
	}
	atomic64_set(&up->next_reclaim, now + 1);
	return -1;
}

/*
 * The index of the current task's slot, or with @claim of a free one, or
 * else of a stale one (pea_uprobe_reclaim()); -1 if none. One pass over
 * the link's maxactive owner words (8 bytes each) finds the task's slot
 * and the first free one; no task, nor any number of them fewer than
 * maxactive, can keep another task from a slot.
 */
static int pea_uprobe_slot(struct pea_link *l, bool claim)
{
	struct pea_uprobe_link *up = pea_up(l);
	u32 n = up->nr_slots, h, i, k, nfree = 0;
	pid_t me = current->pid;
	int free = -1;
	u64 o;

	h = reciprocal_scale(hash_32(me, 32), n);
	for (k = 0, i = h; k < n; k++, i = i + 1 == n ? 0 : i + 1) {
		o = atomic64_read_acquire(&up->owners[i]);
		if (!pea_uprobe_owner_tid(o) && !(o & PEA_OWNER_PENDING)) {
			if (free < 0)
				free = i;
			nfree++;
			continue;
		}
		/* A claim in flight with our tid is never ours: we are here. */
		if (pea_uprobe_owner_tid(o) != me || (o & PEA_OWNER_PENDING))
			continue;
		/*
		 * Ours, or a dead task's with our tid (it cannot run while
		 * we hold its tid), which a third task may be taking over
		 * right now (our cmpxchg() then fails).
		 */
		if (READ_ONCE(up->slots[i].start) != current->start_time) {
			atomic64_cmpxchg_release(&up->owners[i], o,
						 pea_uprobe_next_owner(o, 0));
			continue;
		}
		/* Calls from before an exec never return: claim it anew. */
		if (READ_ONCE(up->slots[i].exec_id) != current->self_exec_id &&
		    !pea_uprobe_take(l, i, o))
			continue;
		return i;
	}
	if (!claim)
		return -1;
	/* The first free one, or another if it was taken meanwhile. */
	for (k = 0, i = free; free >= 0 && k < n && nfree;
	     k++, i = i + 1 == n ? 0 : i + 1) {
		o = atomic64_read(&up->owners[i]);
		if (o & (PEA_OWNER_TID_MASK | PEA_OWNER_PENDING))
			continue;
		if (pea_uprobe_take(l, i, o))
			return i;
		nfree--;
	}
	return pea_uprobe_reclaim(l, h);
}

/* Give slot @i back if its last frame returned. */
static void pea_uprobe_put_slot(struct pea_link *l, u32 i)
{
	struct pea_uprobe_link *up = pea_up(l);
	u64 o = atomic64_read(&up->owners[i]);

	if (up->slots[i].depth)
		return;
	/* Release: done with the frames before another task takes them. */
	atomic64_set_release(&up->owners[i], pea_uprobe_next_owner(o, 0));
}

/* A uretprobe's entry: keep a frame for the return. */
static int pea_uretprobe_entry(PEA_UPROBE_HANDLER_ARGS(uc, regs))
{
	struct pea_link *l = pea_uc_link(uc);
	struct pea_uprobe_link *up = pea_up(l);
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
	if (i < 0) {
		/*
		 * The return counts it as missed; a tree's return, which
		 * cannot tell a call kept here from one filtered, ignores
		 * every return without a frame: count it now (review G1).
		 */
		if (l->filter_tree)
			this_cpu_inc(l->stats->missed);
		return 0;
	}
	s = &up->slots[i];
	d = min_t(u32, READ_ONCE(s->depth), PEA_UPROBE_DEPTH);
	/* Frames entered at or below this stack pointer returned unseen. */
	while (d && s->f[d - 1].sp - pea_uprobe_addr_size(regs) <= sp)
		d--;
	if (d >= PEA_UPROBE_DEPTH) {
		/* Too deep: the outermost call loses its frame. */
		if (l->filter_tree)
			this_cpu_inc(l->stats->missed);	/* as above */
		d = PEA_UPROBE_DEPTH - 1;
		memmove(&s->f[0], &s->f[1], sizeof(s->f[0]) * d);
		if (up->caps)
			memmove(pea_uprobe_cap(l, i, 0),
				pea_uprobe_cap(l, i, 1),
				(size_t)(l->capture_len + 1) * d);
	}
	f = &s->f[d];
	f->sp = sp + pea_uprobe_addr_size(regs);
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

/*
 * The frame a return at @sp pairs with, popped from @s (depth @*d), or
 * NULL. Frames hold the stack pointer their return has at the least
 * (f->sp): those at or below @sp are this call's and deeper ones', whose
 * returns never came, and all go; this call's is the outermost of them,
 * if it is within @pop bytes (what a ret imm16 popped) of @sp. A 64-bit
 * task's return is exact (@pop 0): a deeper call's frame can never stand
 * in for an evicted one.
 */
static struct pea_uprobe_frame *pea_uprobe_pop(struct pea_uprobe_slot *s,
					       u32 *d, unsigned long sp,
					       unsigned long pop)
{
	struct pea_uprobe_frame *f = NULL;

	while (*d && s->f[*d - 1].sp <= sp)
		f = &s->f[--(*d)];
	return f && sp - f->sp <= pop ? f : NULL;
}

/* What a return may pop beyond its address (i386's ret imm16). */
static unsigned long pea_uprobe_ret_pop(struct pt_regs *regs)
{
	return pea_uprobe_addr_size(regs) == 8 ? 0 : PEA_UPROBE_RET_POP_MAX;
}

static int pea_uretprobe_ret(PEA_URETPROBE_HANDLER_ARGS(uc, func, regs))
{
	u64 now = ktime_get_mono_fast_ns();
	struct pea_link *l = pea_uc_link(uc);
	struct pea_uprobe_link *up = pea_up(l);
	unsigned long sp = user_stack_pointer(regs);
	struct pea_uprobe_frame *f = NULL;
	struct pea_uprobe_slot *s;
	u32 d = 0;
	int i;

	/*
	 * A process tree can lose a process between a call and its return
	 * (its parent exits, it is reparented away): the entry decided, as a
	 * kretprobe's does, and a frame it kept is written whatever the tree
	 * says now. A tgid never changes: its test can come first.
	 */
	if (!l->filter_tree && pea_link_other_tgid(l))
		return 0;
	i = pea_uprobe_slot(l, false);
	if (i >= 0) {
		s = &up->slots[i];
		d = min_t(u32, READ_ONCE(s->depth), PEA_UPROBE_DEPTH);
		f = pea_uprobe_pop(s, &d, sp, pea_uprobe_ret_pop(regs));
		s->depth = d;
	}
	/*
	 * No frame in a tree: filtered at its entry, or missed and counted
	 * there (no slot, or evicted as too deep); never counted here.
	 */
	if (!f && l->filter_tree) {
		if (i >= 0)
			pea_uprobe_put_slot(l, i);
		return 0;
	}
	/* While the handler may still sleep: see pea_fetch_prefault(). */
	if (f && l->fetch)
		pea_fetch_prefault(l->fetch, regs, f->args,
				   (s64)regs_return_value(regs));
	preempt_disable();
	if (f)
		pea_link_write(l, regs, f->args, (s64)regs_return_value(regs),
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
static void pea_uprobe_unregister(struct pea_link *l)
{
	struct pea_uprobe_link *up = pea_up(l);

	pea_uprobe_unregister_wait(up->inode, up->offset, up->uprobe, &up->uc);
}

/**
 * pea_uprobe_free() - release what a uprobe link holds (from pea_link_free())
 * @l: the link, not registered
 */
static void pea_uprobe_free(struct pea_link *l)
{
	struct pea_uprobe_link *up = pea_up(l);

	if (up->path.dentry)
		path_put(&up->path);
	kvfree(up->owners);
	kvfree(up->slots);
	kvfree(up->caps);
}

/*
 * The real inode is resolved once, here, and unregistered by the same
 * pointer (as trace_uprobe keeps tu->inode): a copy-up on overlayfs
 * between attach and detach makes d_real_inode() name the upper inode,
 * where 6.1's uprobe_unregister() would find no uprobe and leave the
 * consumer registered. The held path pins the overlay dentry and, through
 * it, the layer's dentry and inode.
 */
static int pea_uprobe_register(struct pea_link *l, const void *arg)
{
	struct pea_uprobe_link *up = pea_up(l);

	up->inode = d_real_inode(up->path.dentry);
	return pea_uprobe_register_compat(up->inode, up->offset,
					  &up->uc, &up->uprobe);
}

static int pea_uprobe_check_attr(const struct pea_uprobe_attr *a)
{
	int err;

	BUILD_BUG_ON((PID_MAX_LIMIT - 1) & ~PEA_OWNER_TID_MASK);	/* tids fit */
#ifndef CONFIG_X86
	/* Where a return's stack pointer is, is known for x86 only. */
	if (a->flags & PEA_UPROBE_F_RETPROBE)
		return -EOPNOTSUPP;
#endif
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
	err = pea_link_tree_check(a->flags, a->filter_tgid);
	if (err)
		return err;
	err = pea_ustack_check(a->ustack_depth);
	if (err)
		return err;
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
	struct pea_uprobe_link *up = pea_up(l);
	u32 n;
	int err;

	l->capture_arg = a->capture_arg;
	l->capture_mode = a->capture_mode;
	l->capture_len = a->capture_len;
	l->capture_flags = PEA_CAPTURE_USER;
	l->addr = a->offset;
	pea_ustack_link(l, a->ustack_depth);
	up->offset = a->offset;
	if (a->name[0])
		memcpy(l->symbol, a->name, sizeof(l->symbol));
	else
		snprintf(l->symbol, sizeof(l->symbol), "%pd+0x%llx",
			 up->path.dentry, a->offset);
	if (!(a->flags & PEA_UPROBE_F_RETPROBE)) {
		up->uc.handler = pea_uprobe_handler;
		return 0;
	}
	n = a->maxactive ? a->maxactive : PEA_UPROBE_MAXACTIVE;
	up->uc.handler = pea_uretprobe_entry;
	up->uc.ret_handler = pea_uretprobe_ret;
	up->nr_slots = n;
	/* jiffies start 5 minutes before wrapping: not 0. */
	atomic64_set(&up->next_reclaim, get_jiffies_64());
	/* The pairing table is the attacher's (pea_quota.c), before it exists. */
	err = pea_link_charge(l, (size_t)n * (sizeof(*up->owners) +
			      sizeof(*up->slots) +
			      (a->capture_mode != PEA_CAPTURE_NONE ?
			       PEA_UPROBE_DEPTH * (a->capture_len + 1) : 0)));
	if (err)
		return err;
	up->owners = kvcalloc(n, sizeof(*up->owners), GFP_KERNEL_ACCOUNT);
	up->slots = kvcalloc(n, sizeof(*up->slots), GFP_KERNEL_ACCOUNT);
	if (!up->owners || !up->slots)
		return -ENOMEM;
	if (a->capture_mode != PEA_CAPTURE_NONE) {
		up->caps = kvcalloc((size_t)n * PEA_UPROBE_DEPTH,
				    a->capture_len + 1, GFP_KERNEL_ACCOUNT);
		if (!up->caps)
			return -ENOMEM;
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
 * file's end or refused by uprobe_register()), -E2BIG (attr tail; fetches
 * past PEA_FETCH_MAX, PEA_FETCH_DEPTH_MAX or PEA_FETCH_DATA_MAX; a
 * predicate past PEA_PRED_MAX or PEA_PRED_DEPTH_MAX), -EBADF
 * (path_fd), -ENOENT and the other path lookup errors, -EMLINK
 * (PEA_MAX_LINKS live), -ENOMEM, -EMFILE, uprobe_register()'s errors.
 */
static long pea_uprobe_attach(struct pea_map *map, const void __user *ua)
{
	struct pea_fetch_set *fs;
	struct pea_pred_set *ps;
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
	err = pea_link_copy_attr(&a, sizeof(a), PEA_UPROBE_ATTR_SIZE_VER0, ua);
	if (err)
		return err;
	err = pea_uprobe_check_attr(&a);
	if (err)
		return err;
	fs = pea_fetch_copy(a.fetches, a.nr_fetches, a.reserved2,
			    PEA_FETCH_KIND_USER |
			    (a.flags & PEA_UPROBE_F_RETPROBE ?
			     PEA_FETCH_KIND_RET : 0));
	if (IS_ERR(fs))
		return PTR_ERR(fs);
	ps = pea_pred_copy(a.preds, a.nr_preds, 0, fs);
	if (IS_ERR(ps)) {
		pea_fetch_free(fs);
		return PTR_ERR(ps);
	}
	err = pea_uprobe_path(&a, &path);
	if (err) {
		pea_pred_free(ps);
		pea_fetch_free(fs);
		return err;
	}
	l = pea_link_alloc(map, &pea_uprobe_provider, a.id, a.flags,
			   a.filter_tgid, -1);
	if (IS_ERR(l)) {
		pea_pred_free(ps);
		pea_fetch_free(fs);
		path_put(&path);
		return PTR_ERR(l);
	}
	l->filter_tree = pea_link_tree(a.flags);
	l->fetch = fs;
	l->pred = ps;
	pea_up(l)->path = path;
	/* Freed with the link; charged as its other memory is. */
	err = fs ? pea_link_charge(l, pea_fetch_size(fs) +
				   pea_pred_size(ps)) : 0;
	if (err) {
		pea_link_free(l);
		return err;
	}
	err = pea_uprobe_setup(l, &a);
	if (err) {
		pea_link_free(l);
		return err;
	}
	return pea_link_install(l, a.flags & PEA_UPROBE_F_CLOEXEC, NULL);
}

/* Missed: the returns that found no entry (PEA_UPROBE_DEPTH, maxactive). */
static void pea_uprobe_info(struct pea_link *l,
			    const struct pea_link_stats *sum,
			    struct pea_link_info *info)
{
	info->missed = sum->missed;
}

/* A uprobe's table: a probe's, without a kernel stack to key by. */
static int pea_uprobe_agg_check(struct pea_link *l,
				const struct pea_agg_attr *a)
{
	if (pea_agg_attr_has_key(a, PEA_AGG_KEY_KSTACK))
		return -EINVAL;
	return pea_probe_agg_check(l, a);
}

const struct pea_provider pea_uprobe_provider = {
	.link_size = sizeof(struct pea_uprobe_link),
	.attach = pea_uprobe_attach,
	.reg = pea_uprobe_register,
	.unregister = pea_uprobe_unregister,
	.free = pea_uprobe_free,
	.info = pea_uprobe_info,
	.agg_check = pea_uprobe_agg_check,
};
