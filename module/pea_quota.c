// SPDX-License-Identifier: GPL-2.0
/*
 * pea: what probe links may hold, per user and in all.
 *
 * A link pins kernel memory nobody else accounts for: the kprobes layer
 * allocates a kretprobe's maxactive instances itself (GFP_KERNEL, no
 * memory cgroup), perf allocates a tracepoint link's per-CPU events.
 * Linux lets only root create kretprobes with a chosen maxactive (tracefs)
 * and bounds the perf kprobe PMU's by the fd limit with a small default
 * maxactive; pea lets CAP_PERFMON choose maxactive up to 4096 with a
 * capture and a stack in each instance, so it bounds them itself, as the
 * key quotas bound keys (a count and bytes per user):
 *
 *   max_user_links     live links of one user (EMLINK beyond), default 256
 *   max_user_probe_kb  the memory they pin (ENOMEM beyond), default 64 MiB
 *   max_probe_kb       the memory all links pin (ENOMEM), default RAM / 8
 *
 * The user is the caller's real uid (its user_struct), as perf charges
 * ring pages. Callers with CAP_SYS_RESOURCE or CAP_SYS_ADMIN are exempt
 * from the per-user bounds, as from RLIMIT_NPROC, and RLIMIT_NPROC's way
 * of asking: capable() runs only for a charge that a bound would refuse,
 * so an attach within the bounds neither logs a denial nor marks the
 * task as having used a privilege.
 *
 * The global bounds keep a quarter for the exempt: links of users without
 * the exemption may take at most three quarters of max_probe_kb and of
 * PEA_MAX_LINKS, so that users who each stay within their own bounds
 * cannot together lock root (or a uprobe, which needs CAP_SYS_ADMIN) out,
 * as the key quotas keep root_maxkeys apart from maxkeys. Retired links
 * (closed kretprobes kept while calls are in flight, pea_link.c) leave
 * those counts but stay registered, so they have bounds of their own, the
 * same numbers: max_user_links per user, three quarters of PEA_MAX_LINKS
 * for the users without the exemption, and PEA_MAX_LINKS for all; a user
 * past them cannot attach (EMLINK) until the calls return. Those bounds
 * keep the probes' per-hit walk of registered kretprobes short.
 * Nobody is exempt from max_probe_kb itself, nor from PEA_MAX_LINKS. The
 * parameters are writable by root at run time (/sys/module/pea/parameters/);
 * a lower bound refuses new charges and leaves existing links alone.
 *
 * What a link is charged (pea_link_charge()): its struct pea_link and
 * per-CPU stats, a kretprobe's instances (pea_kretprobe_mem()), a
 * tracepoint link's perf events and filter program (pea_tp_prog_size()),
 * a uretprobe's pairing table, a probe's fetch chains and predicate
 * (pea_fetch_size(), pea_pred_size()). Memory pea
 * allocates itself for a link is also charged to the caller's memory
 * cgroup (GFP_KERNEL_ACCOUNT); what the kprobes layer and perf allocate
 * cannot be.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/user.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include "pea_internal.h"
#include "pea_link.h"
#include "pea_quota.h"

static unsigned int max_user_links = 256;
module_param(max_user_links, uint, 0644);
MODULE_PARM_DESC(max_user_links,
		 "live probe links per user without CAP_SYS_RESOURCE (default 256)");

static unsigned long max_user_probe_kb = 65536;
module_param(max_user_probe_kb, ulong, 0644);
MODULE_PARM_DESC(max_user_probe_kb,
		 "kernel memory of one user's probe links, KiB (default 65536)");

static unsigned long max_probe_kb;
module_param(max_probe_kb, ulong, 0644);
MODULE_PARM_DESC(max_probe_kb,
		 "kernel memory of all probe links, KiB (default: RAM / 8)");

/* One user's links and bytes; exists while the user has a live link. */
struct pea_quota {
	struct hlist_node node;
	struct user_struct *user;	/* a reference */
	unsigned int links;
	unsigned int retired;	/* retired links, pea_link.c */
	unsigned long bytes;
};

static DEFINE_RAW_SPINLOCK(pea_quota_lock);	/* the table and every count */
static DEFINE_HASHTABLE(pea_quotas, 6);
static unsigned long pea_quota_total;	/* bytes, all links */
static unsigned int pea_quota_links;
static unsigned int pea_quota_retired;

static struct pea_quota *pea_quota_find(struct user_struct *user)
{
	struct pea_quota *q;

	hash_for_each_possible(pea_quotas, q, node, (unsigned long)user)
		if (q->user == user)
			return q;
	return NULL;
}

/* What the attachers without the exemption may take of a global @max. */
static unsigned long pea_quota_shared(unsigned long max)
{
	return max - max / 4;
}

/*
 * Whether @l's attacher is exempt from the per-user bounds and the
 * reserve, asked once per link and only when a bound would refuse it.
 * Called without pea_quota_lock (capable() audits), by the attacher.
 */
static bool pea_quota_exempt(struct pea_link *l)
{
	if (!l->quota_asked) {
		l->quota_exempt = capable(CAP_SYS_RESOURCE) ||
				  capable(CAP_SYS_ADMIN);
		l->quota_asked = true;
	}
	return l->quota_exempt;
}

/**
 * pea_quota_link() - count a new link against its user's max_user_links
 * @l: the link, from pea_link_alloc(), charged nothing yet
 *
 * The user is the caller's. Whether the caller is exempt from the
 * per-user bounds and the reserve is asked the first time one would
 * refuse @l, and kept for every later charge of @l.
 *
 * Context: process context (the attach).
 * Return: 0, -EMLINK (max_user_links reached, or three quarters of
 * PEA_MAX_LINKS without the exemption) or -ENOMEM.
 */
int pea_quota_link(struct pea_link *l)
{
	struct user_struct *user = current_user();
	struct pea_quota *q, *new;
	unsigned long flags;
	bool over;
	int err;

	new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
	if (!new)
		return -ENOMEM;
again:
	err = 0;
	raw_spin_lock_irqsave(&pea_quota_lock, flags);
	q = pea_quota_find(user);
	over = (q ? q->links : 0) >= READ_ONCE(max_user_links) ||
	       (q ? q->retired : 0) >= READ_ONCE(max_user_links) ||
	       pea_quota_links >= pea_quota_shared(PEA_MAX_LINKS) ||
	       pea_quota_retired >= pea_quota_shared(PEA_MAX_LINKS);
	if (over && !l->quota_asked) {
		raw_spin_unlock_irqrestore(&pea_quota_lock, flags);
		pea_quota_exempt(l);
		goto again;
	}
	/* Retired links stay registered: nobody may have more than 1024. */
	if ((over && !l->quota_exempt) || pea_quota_retired >= PEA_MAX_LINKS) {
		err = -EMLINK;
		goto out;
	}
	if (!q) {
		q = new;
		new = NULL;
		q->user = get_uid(user);
		hash_add(pea_quotas, &q->node, (unsigned long)user);
	}
	q->links++;
	pea_quota_links++;
	l->quota = q;
out:
	raw_spin_unlock_irqrestore(&pea_quota_lock, flags);
	kfree(new);
	return err;
}

/*
 * Charge @bytes to @l's user. Exempt from the per-user bounds and the
 * reserve: the attacher (cached in @l) or, with @caller, the caller as it
 * is now, asked each time and never cached (an ioctl on the link's fd
 * may come from another task than the attacher). With @obj the bytes
 * are held by an object of their own (pea_quota_charge_obj()), not by
 * @l's charge.
 */
static int pea_charge(struct pea_link *l, size_t bytes, bool caller,
		      bool obj)
{
	struct pea_quota *q = l->quota;
	unsigned long flags, user_max, max;
	bool over, asked = false, exempt = false;
	int err = -ENOMEM;

	user_max = READ_ONCE(max_user_probe_kb);
	max = READ_ONCE(max_probe_kb);
	user_max = user_max > ULONG_MAX / 1024 ? ULONG_MAX : user_max * 1024;
	max = max > ULONG_MAX / 1024 ? ULONG_MAX : max * 1024;
again:
	raw_spin_lock_irqsave(&pea_quota_lock, flags);
	if (bytes > max || pea_quota_total > max - bytes)
		goto out;
	over = bytes > user_max || q->bytes > user_max - bytes ||
	       pea_quota_total + bytes > pea_quota_shared(max);
	if (over && !(caller ? asked : l->quota_asked)) {
		raw_spin_unlock_irqrestore(&pea_quota_lock, flags);
		if (caller)
			exempt = capable(CAP_SYS_RESOURCE) ||
				 capable(CAP_SYS_ADMIN);
		else
			pea_quota_exempt(l);
		asked = true;
		goto again;
	}
	if (over && !(caller ? exempt : l->quota_exempt))
		goto out;
	q->bytes += bytes;
	pea_quota_total += bytes;
	if (!obj)
		l->charged += bytes;
	err = 0;
out:
	raw_spin_unlock_irqrestore(&pea_quota_lock, flags);
	return err;
}

/**
 * pea_link_charge() - charge @bytes of kernel memory to @l's user
 * @l: the link (counted by pea_quota_link())
 * @bytes: what the link is about to pin
 *
 * Checked against max_user_probe_kb and three quarters of max_probe_kb
 * (unless the attacher is exempt), and max_probe_kb. pea_link_free()
 * returns whatever @l still holds.
 *
 * Context: process context, the attacher (it may ask capable()).
 * Return: 0 or -ENOMEM.
 */
int pea_link_charge(struct pea_link *l, size_t bytes)
{
	return pea_charge(l, bytes, false, false);
}

/**
 * pea_link_charge_caller() - pea_link_charge() from an ioctl on the link
 * @l: the link
 * @bytes: what the link is about to pin
 *
 * The same bounds, but whether the per-user ones apply is the caller's
 * own exemption (CAP_SYS_RESOURCE or CAP_SYS_ADMIN), asked only when a
 * bound would refuse, never the attacher's: a task the fd was handed to
 * gets no more than it may have.
 *
 * Context: process context (it may ask capable()).
 * Return: 0 or -ENOMEM.
 */
int pea_link_charge_caller(struct pea_link *l, size_t bytes)
{
	return pea_charge(l, bytes, true, false);
}

/**
 * pea_quota_charge_obj() - charge an object that may outlive its link
 * @l: the link the caller creates the object through
 * @bytes: what the object pins
 *
 * pea_link_charge_caller()'s bounds, charged to @l's user, but held by
 * the object (an aggregation table shared by several links, pea_agg.c),
 * not by @l: it stays charged to that user, once, for as long as the
 * object lives, whichever of its links goes first, as a BPF map stays
 * charged to its creator while programs of others hold it. The user's
 * entry lives while the object holds bytes.
 *
 * Context: process context (it may ask capable()).
 * Return: @l's user's entry, to give to pea_quota_uncharge_obj(), or
 * ERR_PTR(-ENOMEM).
 */
struct pea_quota *pea_quota_charge_obj(struct pea_link *l, size_t bytes)
{
	int err = pea_charge(l, bytes, true, true);

	return err ? ERR_PTR(err) : l->quota;
}

/**
 * pea_quota_uncharge_obj() - return what pea_quota_charge_obj() took
 * @q: the entry it returned
 * @bytes: the bytes it charged
 *
 * Context: process context.
 */
void pea_quota_uncharge_obj(struct pea_quota *q, size_t bytes)
{
	unsigned long flags;
	bool gone = false;

	raw_spin_lock_irqsave(&pea_quota_lock, flags);
	if (WARN_ON_ONCE(bytes > q->bytes))
		bytes = q->bytes;
	q->bytes -= bytes;
	pea_quota_total -= bytes;
	if (!q->links && !q->retired && !q->bytes) {
		hash_del(&q->node);
		gone = true;
	}
	raw_spin_unlock_irqrestore(&pea_quota_lock, flags);
	if (gone) {
		free_uid(q->user);
		kfree(q);
	}
}

/**
 * pea_link_uncharge() - return @bytes of what pea_link_charge() took
 * @l: the link
 * @bytes: at most what @l holds
 *
 * Context: process context.
 */
void pea_link_uncharge(struct pea_link *l, size_t bytes)
{
	struct pea_quota *q = l->quota;
	unsigned long flags;

	if (WARN_ON_ONCE(bytes > l->charged))
		bytes = l->charged;
	raw_spin_lock_irqsave(&pea_quota_lock, flags);
	q->bytes -= bytes;
	pea_quota_total -= bytes;
	l->charged -= bytes;
	raw_spin_unlock_irqrestore(&pea_quota_lock, flags);
}

/*
 * Drop @l's place among the links (unless it was retired) and, with
 * @uncharge, its charge; the user's entry goes with its last link and
 * its last byte.
 */
static void pea_quota_drop(struct pea_link *l, bool uncharge)
{
	struct pea_quota *q = l->quota, *gone = NULL;
	unsigned long flags;

	if (!q)
		return;
	/*
	 * The charge, the counts and the emptiness test in one critical
	 * section: another link's drop must not find this link's bytes gone
	 * and free the entry before this one has looked at it a last time.
	 */
	raw_spin_lock_irqsave(&pea_quota_lock, flags);
	if (uncharge) {
		q->bytes -= l->charged;
		pea_quota_total -= l->charged;
		l->charged = 0;
	}
	if (!l->retired) {
		pea_quota_links--;
		q->links--;
	}
	if (!l->retired && !uncharge) {
		/* Retiring: counted among the retired until freed. */
		pea_quota_retired++;
		q->retired++;
	} else if (l->retired && uncharge) {
		pea_quota_retired--;
		q->retired--;
	}
	if (!q->links && !q->retired && !q->bytes) {
		hash_del(&q->node);
		gone = q;
	}
	raw_spin_unlock_irqrestore(&pea_quota_lock, flags);
	if (uncharge)
		l->quota = NULL;
	if (gone) {
		free_uid(gone->user);
		kfree(gone);
	}
}

/**
 * pea_quota_retire() - a retired link gives up its place among the links
 * @l: the link, not yet marked retired; it keeps its charge
 */
void pea_quota_retire(struct pea_link *l)
{
	pea_quota_drop(l, false);
}

/**
 * pea_quota_unlink() - return a link's charge and its count
 * @l: the link, being freed
 */
void pea_quota_unlink(struct pea_link *l)
{
	pea_quota_drop(l, true);
}

/**
 * pea_quota_show() - the debugfs "quota" file
 * @m: the seq_file
 * @v: unused
 *
 * One line per user with live links: uid, links, bytes charged; then
 * "total LINKS BYTES".
 *
 * Return: 0.
 */
int pea_quota_show(struct seq_file *m, void *v)
{
	struct pea_quota *q;
	unsigned long flags;
	int bkt;

	seq_puts(m, "# uid links bytes\n");
	/*
	 * A seq_file grows its buffer and retries: nothing under the lock
	 * allocates or sleeps. Every charge is taken in process context; the
	 * lock is raw only because nothing under it can sleep.
	 */
	raw_spin_lock_irqsave(&pea_quota_lock, flags);
	hash_for_each(pea_quotas, bkt, q, node)
		seq_printf(m, "%u %u %lu\n",
			   from_kuid(&init_user_ns, q->user->uid), q->links,
			   q->bytes);
	seq_printf(m, "total %u %lu\n", pea_quota_links, pea_quota_total);
	raw_spin_unlock_irqrestore(&pea_quota_lock, flags);
	return 0;
}

/**
 * pea_quota_init() - max_probe_kb's default, an eighth of RAM
 */
void pea_quota_init(void)
{
	if (!max_probe_kb)
		max_probe_kb = (totalram_pages() << (PAGE_SHIFT - 10)) / 8;
}
