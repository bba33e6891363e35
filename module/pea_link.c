// SPDX-License-Identifier: GPL-2.0
/*
 * pea: links, what every PEA_MAP_IOC_ATTACH_* returns.
 *
 * A link is a producer attached to a map: its fd, its id, the map it
 * writes into, its filters and per-CPU stats, and its charge against the
 * attacher's quota (pea_quota.c). Closing the fd detaches the producer,
 * after its in-flight handlers finish, and frees the link. PEA_LINK_IOC_INFO
 * and the debugfs "links" file report every live link.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/percpu.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include "pea_internal.h"
#include "pea_agg.h"
#include "pea_lat.h"
#include "pea_fetch.h"
#include "pea_pred.h"
#include "pea_link.h"
#include "pea_provider.h"

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
 * pea_link_excluded() - whether the map excludes the task that hit
 * @l: the link
 *
 * PEA_MAP_IOC_EXCLUDE_TGID: a hit in task context of the excluded
 * process. An interrupt, softirq or NMI that lands on it is not that
 * process's doing (a timer, another task's packet) and is kept. Not
 * counted: the callers count it, or counted it at entry.
 *
 * Return: true if the hit is to be skipped.
 */
bool pea_link_excluded(struct pea_link *l)
{
	struct pid *ex = READ_ONCE(l->map->exclude_tgid);

	/*
	 * Compared, never dereferenced: the map holds it while links run.
	 * The task's own pointer is read once: a group leader being reaped
	 * while it still runs has it cleared by detach_pid().
	 */
	return ex && in_task() &&
	       READ_ONCE(current->signal->pids[PIDTYPE_TGID]) == ex;
}

/* What the tgid filter decides (pea_link_tgid()). */
enum {
	PEA_TGID_IN,		/* the hit is kept */
	PEA_TGID_OUT,		/* another process, or excluded */
	PEA_TGID_DEEP,		/* out, past PEA_TREE_DEPTH_MAX parents */
};

/*
 * PEA_*_F_DESCENDANTS: whether current's process is the filter's or below
 * it. The real_parent chain is read as yama's task_is_descendant() and
 * getppid() read it, under RCU and without tasklist_lock, so it holds in
 * any context (NMI included: no lock, no sleep). Every task reached was
 * the parent of the one below it at some moment of this read-side
 * section, and a parent is reparented away from before it is released,
 * so none is freed before rcu_read_unlock() (delayed_put_task_struct()).
 * A released task's parent pointer is no longer kept up to date: as
 * getppid()'s task_ppid_nr_ns(), the parent is read only while
 * pid_alive() (review F1). A task that namespace does not see ends the
 * walk (tgid 0: a process above one outside it is outside it too), so
 * does the idle task (pid 0).
 */
static int pea_link_in_tree(struct pea_link *l)
{
	struct task_struct *t = current;
	int ret = PEA_TGID_OUT;
	int depth;
	pid_t nr;

	rcu_read_lock();
	for (depth = 0; ; depth++) {
		/*
		 * A released task: a thread reaped at its exit runs on (the
		 * rest of do_exit(), interrupts on it) with a parent nobody
		 * updates any more. Its process's leader, found by the
		 * process's pid, has one until the process is reaped; with
		 * none, the task raced with its process's end: maybe in the
		 * tree, counted deep.
		 */
		if (!pid_alive(t)) {
			/*
			 * A kernel thread is reaped at its exit (kthreadd
			 * ignores SIGCHLD) and is kthreadd's child: every
			 * exiting one comes from kthread_create(), whose
			 * kernel_thread() runs in kthreadd, and kthreadd
			 * never exits, so the pointer is current. Its pid
			 * is gone, but not its number, and kernel threads
			 * live in the initial namespace only: a filter on
			 * that number is this thread's own. Else the walk
			 * goes on from kthreadd. (The flags are read racing
			 * do_task_dead()'s PF_NOFREEZE, never PF_KTHREAD.)
			 */
			if (READ_ONCE(t->flags) & PF_KTHREAD) {
				/* 0 elsewhere: never a tree filter's tgid. */
				nr = l->pid_ns == &init_pid_ns ? t->tgid : 0;
				goto match;
			}
			t = pid_task(task_tgid(t), PIDTYPE_TGID);
			if (!t || !pid_alive(t)) {
				ret = PEA_TGID_DEEP;
				break;
			}
		}
		nr = task_tgid_nr_ns(t, l->pid_ns);
		if (!nr) {
			/*
			 * Released since pid_alive(): __unhash_process()
			 * detaches the task's pid before its process's, so
			 * a tgid gone with the pid still there is another
			 * namespace's task; with the pid gone too, the hit
			 * raced with its process's end (review G2).
			 */
			smp_rmb();
			if (!pid_alive(t))
				ret = PEA_TGID_DEEP;
			break;
		}
match:
		if (nr == l->filter_tgid) {
			if (depth || !(l->filter_tree & PEA_LINK_TREE_ONLY))
				ret = PEA_TGID_IN;
			break;
		}
		if (depth >= PEA_TREE_DEPTH_MAX) {
			ret = PEA_TGID_DEEP;
			break;
		}
		t = rcu_dereference(t->real_parent);
	}
	rcu_read_unlock();
	return ret;
}

/* The tgid filter and the map's excluded process: PEA_TGID_*. */
static int pea_link_tgid(struct pea_link *l)
{
	int ret = PEA_TGID_IN;

	if (!l->filter_tgid)
		;
	else if (l->filter_tree)
		ret = pea_link_in_tree(l);
	else if (task_tgid_nr_ns(current, l->pid_ns) != l->filter_tgid)
		ret = PEA_TGID_OUT;
	if (ret == PEA_TGID_IN && pea_link_excluded(l))
		ret = PEA_TGID_OUT;
	return ret;
}

/**
 * pea_link_other_tgid() - whether the tgid filter, or the map's excluded
 * process, rejects this hit, without counting it
 * @l: the link
 *
 * For a return whose call was counted at entry, and for work done before
 * the hit is decided (a uprobe's page faults for its fetches).
 *
 * Return: true if the hit is to be skipped.
 */
bool pea_link_other_tgid(struct pea_link *l)
{
	return pea_link_tgid(l) != PEA_TGID_IN;
}

/**
 * pea_link_filtered_tgid() - whether the tgid filter, or the map's
 * excluded process, rejects this hit
 * @l: the link
 *
 * Counts a rejected hit in the link's filtered counter, and one the
 * process tree's bound rejected in its deep counter too.
 *
 * Return: true if the hit is to be skipped.
 */
bool pea_link_filtered_tgid(struct pea_link *l)
{
	int ret = pea_link_tgid(l);

	if (ret == PEA_TGID_IN)
		return false;
	if (ret == PEA_TGID_DEEP)
		this_cpu_inc(l->stats->deep);
	this_cpu_inc(l->stats->filtered);
	return true;
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

/**
 * pea_link_free() - free a link that is not (or no longer) registered
 * @l: the link, from pea_link_alloc()
 */
void pea_link_free(struct pea_link *l)
{
	if (l->provider->free)
		l->provider->free(l);
	pea_agg_free(l);
	pea_lat_free(l);
	pea_quota_unlink(l);
	if (!l->retired) {
		if (l->counter_map)
			pea_map_put(l->counter_map);
		pea_map_put(l->map);
		put_pid_ns(l->pid_ns);
		atomic_dec(&pea_nr_links);
	}
	free_percpu(l->stats);
	pea_pred_free(l->pred);
	pea_fetch_free(l->fetch);
	kfree(l);
	atomic_dec(&pea_objects.links);
}

/*
 * Retired links: closed while calls their kind saw start are in flight
 * (a kretprobe's: the kernel keeps those calls' instances, on 6.12 its
 * whole instance pool, until they return). A retired link keeps its
 * charge for as long as the kernel keeps that memory; it gives up what
 * else it held: its maps (whose names their owners may take again), its
 * pid namespace and its place among the links (PEA_MAX_LINKS and its
 * user's max_user_links). A work item asks each retired link's kind ten
 * times a second whether its calls are gone, then unregisters and frees
 * it; module unload hands what is left to the kernel, as Linux's own
 * unregister does.
 */
static LIST_HEAD(pea_retired);
static DEFINE_MUTEX(pea_retired_lock);
static void pea_retired_reap(struct work_struct *work);
static DECLARE_DELAYED_WORK(pea_retired_work, pea_retired_reap);

static void pea_retired_reap(struct work_struct *work)
{
	struct pea_link *l, *tmp;
	LIST_HEAD(done);

	mutex_lock(&pea_retired_lock);
	list_for_each_entry_safe(l, tmp, &pea_retired, node)
		if (!l->provider->busy(l))
			list_move_tail(&l->node, &done);
	if (!list_empty(&pea_retired))
		schedule_delayed_work(&pea_retired_work, HZ / 10);
	mutex_unlock(&pea_retired_lock);
	/* Each unregister waits for a grace period: not under the lock. */
	list_for_each_entry_safe(l, tmp, &done, node) {
		list_del(&l->node);
		l->provider->unregister(l);
		pea_link_free(l);
	}
}

/* Close a registered link: retire it if its kind says so, else free it. */
static void pea_link_close(struct pea_link *l)
{
	if (!l->provider->retire || !l->provider->retire(l)) {
		l->provider->unregister(l);
		pea_link_free(l);
		return;
	}
	/*
	 * No handler of @l reaches its maps, filters or table any more
	 * (@retire): the table, which the kernel does not hold, goes now.
	 */
	pea_agg_retire(l);
	pea_lat_retire(l);
	if (l->counter_map)
		pea_map_put(l->counter_map);
	pea_map_put(l->map);
	l->counter_map = NULL;
	l->map = NULL;
	put_pid_ns(l->pid_ns);
	l->pid_ns = NULL;
	atomic_dec(&pea_nr_links);
	pea_quota_retire(l);
	l->retired = true;
	mutex_lock(&pea_retired_lock);
	list_add_tail(&l->node, &pea_retired);
	schedule_delayed_work(&pea_retired_work, HZ / 10);
	mutex_unlock(&pea_retired_lock);
}

/**
 * pea_links_exit() - at module unload, free the retired links
 *
 * Their calls still in flight return through the kernel's own paths
 * (a kretprobe's rethook with its handler cleared), as after any
 * unregister.
 */
void pea_links_exit(void)
{
	struct pea_link *l, *tmp;

	cancel_delayed_work_sync(&pea_retired_work);
	list_for_each_entry_safe(l, tmp, &pea_retired, node) {
		list_del(&l->node);
		l->provider->unregister(l);
		pea_link_free(l);
	}
}

static int pea_link_release(struct inode *inode, struct file *file)
{
	struct pea_link *l = file->private_data;

	mutex_lock(&pea_links_lock);
	list_del(&l->node);
	mutex_unlock(&pea_links_lock);
	pea_link_close(l);
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
		sum->dropped += READ_ONCE(st->dropped);
		sum->filtered += READ_ONCE(st->filtered);
		sum->missed += READ_ONCE(st->missed);
		sum->deep += READ_ONCE(st->deep);
		smp_rmb();	/* pairs with pea_link_count_hit()'s */
		sum->hits += READ_ONCE(st->hits);
	}
}

/* PEA_LINK_IOC_INFO's answer: the common part, then the kind's. */
static void pea_link_get_info(struct pea_link *l, struct pea_link_info *info)
{
	struct pea_link_stats sum;

	memset(info, 0, sizeof(*info));
	info->id = l->rec_id;
	info->addr = READ_ONCE(l->addr);
	info->flags = l->flags;
	info->map_id = l->map->id;
	pea_link_sum(l, &sum);
	info->hits = sum.hits + sum.filtered;
	info->written = sum.written;
	info->filtered = sum.filtered;
	info->errors = sum.errors;
	info->dropped = sum.dropped;
	info->deep = sum.deep;
	memcpy(info->symbol, l->symbol, sizeof(info->symbol));
	if (l->provider->info)
		l->provider->info(l, &sum, info);
}

static const struct file_operations pea_link_fops;

/*
 * PEA_AGG_VAL_PAIRED's pair_fd: the pairing table of the link behind it,
 * with a reference (pea_lat_get()); -EBADF: no fd; -EINVAL: not a link
 * with one. The file holds its link while we look.
 */
static struct pea_lat *pea_link_pair_fget(int fd)
{
	struct file *file = fget(fd);
	struct pea_lat *lat = NULL;

	if (!file)
		return ERR_PTR(-EBADF);
	if (file->f_op == &pea_link_fops)
		lat = pea_lat_get(file->private_data);
	fput(file);
	return lat ? lat : ERR_PTR(-EINVAL);
}

/* PEA_LINK_IOC_AGG_CREATE: the attr as the attach ioctls take theirs. */
static long pea_link_agg_create(struct pea_link *l, const void __user *ua)
{
	struct pea_lat *pair = NULL;
	struct pea_agg_attr a;
	u32 nr_lin;
	long err;

	err = pea_link_copy_attr(&a, sizeof(a), PEA_AGG_ATTR_SIZE_VER0, ua);
	if (err)
		return err;
	/* The attr before the fd it names (review F2). */
	err = pea_agg_check(l, &a, &nr_lin);
	if (err)
		return err;
	if (a.value == PEA_AGG_VAL_PAIRED) {
		pair = pea_link_pair_fget(a.pair_fd);
		if (IS_ERR(pair))
			return PTR_ERR(pair);
	}
	err = pea_agg_create(l, &a, pair);
	if (err)
		pea_lat_put(pair);	/* the table took it only with 0 */
	return err;
}

/*
 * PEA_LINK_IOC_AGG_READ: the request as an attr; pea_agg_read() writes
 * its out fields back (as many bytes as the caller's size has) before it
 * clears anything.
 */
static long pea_link_agg_read(struct pea_link *l, void __user *ua)
{
	struct pea_agg_read r;
	long err;

	err = pea_link_copy_attr(&r, sizeof(r), PEA_AGG_READ_SIZE_VER0, ua);
	if (err)
		return err;
	return pea_agg_read(l, &r, ua, min_t(u32, r.size, sizeof(r)));
}

/*
 * PEA_LINK_IOC_AGG_SHARE: @fd names the link whose table @l counts in.
 * As PERF_EVENT_IOC_SET_OUTPUT's fd (perf_fget_light()): EBADF when it
 * is no fd or not a link's; holding it is what reading its table takes.
 */
static long pea_link_agg_share(struct pea_link *l, int fd)
{
	struct file *file = fget(fd);
	long err;

	if (!file)
		return -EBADF;
	if (file->f_op == &pea_link_fops)
		err = pea_agg_share(l, file->private_data);
	else
		err = -EBADF;
	fput(file);
	return err;
}

/* PEA_LINK_IOC_LAT_CREATE: the attr as the attach ioctls take theirs. */
static long pea_link_lat_create(struct pea_link *l, const void __user *ua)
{
	struct pea_lat_attr a;
	long err;

	err = pea_link_copy_attr(&a, sizeof(a), PEA_LAT_ATTR_SIZE_VER0, ua);
	return err ? err : pea_lat_create(l, &a);
}

static long pea_link_lat_info(struct pea_link *l, void __user *ua)
{
	struct pea_lat_info info;
	long err;

	err = pea_lat_get_info(l, &info);
	if (err)
		return err;
	return copy_to_user(ua, &info, sizeof(info)) ? -EFAULT : 0;
}

/*
 * The older numbers of the table ioctls (the struct's size is part of
 * them), which binaries built with an older pea.h send: their structs
 * carry their size, which pea_link_copy_attr() and pea_agg_read() go by,
 * as module/pea_attach.c does for the attach ioctls (review F1).
 */
#define PEA_LINK_IOC_AGG_CREATE_VER0 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x38, PEA_AGG_ATTR_SIZE_VER0)
#define PEA_LINK_IOC_AGG_CREATE_VER1 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x38, PEA_AGG_ATTR_SIZE_VER1)
#define PEA_LINK_IOC_AGG_CREATE_VER2 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x38, PEA_AGG_ATTR_SIZE_VER2)
#define PEA_LINK_IOC_AGG_CREATE_VER3 \
	_IOC(_IOC_WRITE, PEA_IOC_MAGIC, 0x38, PEA_AGG_ATTR_SIZE_VER3)
#define PEA_LINK_IOC_AGG_READ_VER0 \
	_IOC(_IOC_READ | _IOC_WRITE, PEA_IOC_MAGIC, 0x39, PEA_AGG_READ_SIZE_VER0)
#define PEA_LINK_IOC_AGG_READ_VER1 \
	_IOC(_IOC_READ | _IOC_WRITE, PEA_IOC_MAGIC, 0x39, PEA_AGG_READ_SIZE_VER1)

static long pea_link_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	struct pea_link *l = file->private_data;
	struct pea_link_info info;

	switch (cmd) {
	case PEA_LINK_IOC_INFO:
	case PEA_LINK_IOC_INFO_VER0:
	case PEA_LINK_IOC_INFO_VER1:
		pea_link_get_info(l, &info);
		/*
		 * The first size has no dropped: its errors keep their
		 * meaning there, drops included.
		 */
		if (cmd == PEA_LINK_IOC_INFO_VER0)
			info.errors += info.dropped;
		return copy_to_user((void __user *)arg, &info,
				    _IOC_SIZE(cmd)) ? -EFAULT : 0;
	case PEA_LINK_IOC_AGG_CREATE:
	case PEA_LINK_IOC_AGG_CREATE_VER0:
	case PEA_LINK_IOC_AGG_CREATE_VER1:
	case PEA_LINK_IOC_AGG_CREATE_VER2:
	case PEA_LINK_IOC_AGG_CREATE_VER3:
		return pea_link_agg_create(l, (const void __user *)arg);
	case PEA_LINK_IOC_AGG_READ:
	case PEA_LINK_IOC_AGG_READ_VER0:
	case PEA_LINK_IOC_AGG_READ_VER1:
		return pea_link_agg_read(l, (void __user *)arg);
	case PEA_LINK_IOC_LAT_CREATE:
		return pea_link_lat_create(l, (const void __user *)arg);
	case PEA_LINK_IOC_LAT_INFO:
		return pea_link_lat_info(l, (void __user *)arg);
	case PEA_LINK_IOC_AGG_SHARE:
		return pea_link_agg_share(l, (int)arg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations pea_link_fops = {
	.owner = THIS_MODULE,
	.release = pea_link_release,
	.unlocked_ioctl = pea_link_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

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

/**
 * pea_link_alloc() - a new link on @map, counted against PEA_MAX_LINKS
 * and the caller's max_user_links, its struct charged (pea_quota.c)
 * @map: the map the producer writes into (a reference is taken)
 * @provider: its kind
 * @id: the producer id records carry (0: the link's own id)
 * @flags: the attach flags
 * @filter_tgid: only this process (0: any), in the caller's pid namespace
 * @filter_cpu: only this CPU (-1: any)
 *
 * Return: the link, or ERR_PTR(-EMLINK) (PEA_MAX_LINKS, max_user_links) or
 * ERR_PTR(-ENOMEM) (no memory, max_user_probe_kb, max_probe_kb).
 */
struct pea_link *pea_link_alloc(struct pea_map *map,
				const struct pea_provider *provider, u64 id,
				u32 flags, int filter_tgid, int filter_cpu)
{
	struct pea_link *l;
	int err;

	if (atomic_inc_return(&pea_nr_links) > PEA_MAX_LINKS) {
		atomic_dec(&pea_nr_links);
		return ERR_PTR(-EMLINK);
	}
	l = kzalloc(provider->link_size, GFP_KERNEL_ACCOUNT);
	if (!l)
		goto undo_count;
	l->stats = alloc_percpu_gfp(struct pea_link_stats, GFP_KERNEL_ACCOUNT);
	if (!l->stats)
		goto free_link;
	err = pea_quota_link(l);
	if (!err) {
		err = pea_link_charge(l,
				      kmalloc_size_roundup(provider->link_size) +
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
	l->provider = provider;
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
 * @arg: passed to its provider's reg, which registers the producer (it
 *       may fire at once)
 *
 * The fd number is visible (another thread may close it by number) from
 * fd_install() on: the link is registered, listed and owned by its file
 * before that, and nothing after it can fail.
 *
 * Return: the link fd, or reg's error, -EMFILE, -ENOMEM.
 */
long pea_link_install(struct pea_link *l, bool cloexec, const void *arg)
{
	struct file *file;
	long err;
	int fd;

	fd = get_unused_fd_flags(O_RDWR | (cloexec ? O_CLOEXEC : 0));
	if (fd < 0) {
		pea_link_free(l);
		return fd;
	}
	err = l->provider->reg(l, arg);
	if (err)
		goto put_fd;
	file = anon_inode_getfile("[pea_link]", &pea_link_fops, l, O_RDWR);
	if (IS_ERR(file)) {
		/* Registered: calls may have started, as after a close. */
		put_unused_fd(fd);
		pea_link_close(l);
		return PTR_ERR(file);
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
	struct pea_link_info info;
	struct pea_link *l;

	seq_puts(m, "# link_id map_id symbol flags hits written filtered errors missed dropped\n");
	mutex_lock(&pea_links_lock);
	list_for_each_entry(l, &pea_links, node) {
		pea_link_get_info(l, &info);
		seq_printf(m, "%llu %llu %s 0x%x %llu %llu %llu %llu %llu %llu\n",
			   l->id, l->map->id, l->symbol, l->flags, info.hits,
			   info.written, info.filtered, info.errors,
			   info.missed, info.dropped);
	}
	mutex_unlock(&pea_links_lock);
	return 0;
}
