// SPDX-License-Identifier: GPL-2.0
/*
 * pea: what a user of /dev/pea may hold, and perf's sysctls.
 *
 * Ring memory is charged as perf_mmap() charges a perf ring buffer, to
 * the same per-user budget (user_struct->perf_mlock, shared with perf):
 * up to perf_event_mlock_kb per online CPU for each user, the rest to the
 * mapping process's pinned_vm against RLIMIT_MEMLOCK unless the caller
 * has CAP_IPC_LOCK or perf_event_paranoid is -1; EPERM otherwise. The
 * charge is taken when the first mmap allocates the ring and returned at
 * its last munmap.
 *
 * perf_event_paranoid, perf_event_mlock_kb, perf_event_max_stack and
 * perf_event_max_sample_rate (sysctl_perf_event_*) are not exported to
 * modules, so they are read through their proc files, at each check,
 * from process context: the kernel's own proc_handler prints the
 * variable. The files are opened when the module loads on a private,
 * kernel-internal mount of procfs (kern_mount(), as every pid namespace's
 * proc_mnt), never through a task's root or mount namespace: a module
 * loaded from a chroot or a container whose /proc/sys shows other values
 * still reads the kernel's; the mount is made by a kworker, so it pins
 * no namespace of the loading task, and the files are read with a kernel
 * credential, so no LSM policy of the caller changes what is read. If a
 * file cannot be opened the module uses
 * perf's most restrictive paranoid level (3, Debian's default), the
 * mlock_kb module parameter (perf's default, 516) and perf's defaults
 * for the stack depth (127) and the sample rate (100000).
 */
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/seq_file.h>
#include <linux/uidgid.h>
#include <linux/workqueue.h>
#include "pea_internal.h"
#include "pea_limits.h"

/* Relative to the root of pea's own procfs mount. */
#define PEA_PARANOID_PATH	"sys/kernel/perf_event_paranoid"
#define PEA_MLOCK_PATH		"sys/kernel/perf_event_mlock_kb"
#define PEA_MAX_STACK_PATH	"sys/kernel/perf_event_max_stack"
#define PEA_SAMPLE_RATE_PATH	"sys/kernel/perf_event_max_sample_rate"
#define PEA_SAMPLE_RATE_DEFAULT	100000	/* perf's DEFAULT_MAX_SAMPLE_RATE */
#define PEA_PARANOID_CLOSED	3	/* Debian's default, the strictest */

static int mlock_kb = 516;
module_param(mlock_kb, int, 0444);
MODULE_PARM_DESC(mlock_kb,
		 "perf_event_mlock_kb to use if its proc file cannot be read (default 516)");

static struct vfsmount *pea_proc_mnt;
static struct file *pea_paranoid_file;
static struct file *pea_mlock_file;
static struct file *pea_max_stack_file;
static struct file *pea_sample_rate_file;

static LIST_HEAD(pea_charges);
static DEFINE_MUTEX(pea_charges_lock);	/* the debugfs list */
static atomic_long_t pea_charged_user;	/* pages, all rings */
static atomic_long_t pea_charged_pinned;

/*
 * The sysctls are read as perf reads its variables: whoever asks. Read
 * with the caller's credential, the read goes through the LSMs' file
 * permission hooks (and sysctl_perm()) as the caller: a task confined so
 * that it cannot read /proc/sys/kernel/perf_event_max_stack would get the
 * fallbacks, which are not the values root set. So it is read with a
 * kernel credential, prepared at load.
 */
static const struct cred *pea_sysctl_cred;

static int pea_sysctl_read(struct file *file, int *val)
{
	const struct cred *old = NULL;
	char buf[24];
	loff_t pos = 0;
	ssize_t n;

	if (!file)
		return -ENOENT;
	if (pea_sysctl_cred)
		old = override_creds(pea_sysctl_cred);
	n = kernel_read(file, buf, sizeof(buf) - 1, &pos);
	if (old)
		revert_creds(old);
	if (n <= 0)
		return n ? n : -EIO;
	buf[n] = '\0';
	return kstrtoint(strim(buf), 10, val);
}

/**
 * pea_perf_paranoid() - the current kernel.perf_event_paranoid
 *
 * Context: process context (reads the proc file).
 * Return: the level, or 3 (deny all but the privileged) if unreadable.
 */
int pea_perf_paranoid(void)
{
	int val;

	if (pea_sysctl_read(pea_paranoid_file, &val))
		return PEA_PARANOID_CLOSED;
	return val;
}

static int pea_perf_mlock_kb(void)
{
	int val;

	if (pea_sysctl_read(pea_mlock_file, &val))
		return mlock_kb;
	return val;
}

/**
 * pea_perf_max_stack() - the current kernel.perf_event_max_stack
 *
 * Context: process context (reads the proc file).
 * Return: the frames a perf callchain may hold, or PEA_KSTACK_MAX (perf's
 * default, 127) if unreadable.
 */
int pea_perf_max_stack(void)
{
	int val;

	if (pea_sysctl_read(pea_max_stack_file, &val))
		return PEA_KSTACK_MAX;
	return val;
}

/**
 * pea_perf_max_sample_rate() - the current kernel.perf_event_max_sample_rate
 *
 * Context: process context (reads the proc file).
 * Return: the highest sampling frequency perf_event_open() takes, or
 * perf's default (100000) if unreadable.
 */
int pea_perf_max_sample_rate(void)
{
	int val;

	if (pea_sysctl_read(pea_sample_rate_file, &val))
		return PEA_SAMPLE_RATE_DEFAULT;
	return val;
}

/**
 * pea_mlock_charge() - charge @pages ring pages to the caller, as perf_mmap()
 * @c: filled with the charge, for pea_mlock_uncharge()
 * @pages: pages of the ring, control page included
 * @event_id: the ring's event, for debugfs
 *
 * Context: process context, inside mmap (current->mm is the mapping's).
 * Return: 0, or -EPERM when the pages fit neither the user's
 * perf_event_mlock_kb budget nor RLIMIT_MEMLOCK (and no CAP_IPC_LOCK).
 */
int pea_mlock_charge(struct pea_charge *c, unsigned long pages, u64 event_id)
{
	struct user_struct *user = current_user();
	unsigned long user_locked, user_lock_limit, locked, lock_limit;
	long user_extra = pages, extra = 0;
	int kb = pea_perf_mlock_kb();

	user_lock_limit = kb > 0 ? (unsigned long)kb >> (PAGE_SHIFT - 10) : 0;
	user_lock_limit *= num_online_cpus();
	user_locked = atomic_long_read(&user->perf_mlock);
	/* The sysctl may have shrunk below what is charged already. */
	if (user_locked > user_lock_limit)
		user_locked = user_lock_limit;
	user_locked += user_extra;
	if (user_locked > user_lock_limit) {
		extra = user_locked - user_lock_limit;
		user_extra -= extra;
	}

	lock_limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	locked = atomic64_read(&current->mm->pinned_vm) + extra;
	if (locked > lock_limit && pea_perf_paranoid() > -1 &&
	    !capable(CAP_IPC_LOCK))
		return -EPERM;

	atomic_long_add(user_extra, &user->perf_mlock);
	atomic64_add(extra, &current->mm->pinned_vm);
	c->user = get_uid(user);
	mmgrab(current->mm);
	c->mm = current->mm;
	c->user_pages = user_extra;
	c->pinned_pages = extra;
	c->event_id = event_id;
	INIT_LIST_HEAD(&c->node);
	atomic_long_add(user_extra, &pea_charged_user);
	atomic_long_add(extra, &pea_charged_pinned);
	return 0;
}

/**
 * pea_mlock_track() - move a charge into its ring and list it in debugfs
 * @dst: the ring's charge
 * @src: what pea_mlock_charge() filled
 */
void pea_mlock_track(struct pea_charge *dst, const struct pea_charge *src)
{
	*dst = *src;
	mutex_lock(&pea_charges_lock);
	list_add_tail(&dst->node, &pea_charges);
	mutex_unlock(&pea_charges_lock);
}

/**
 * pea_mlock_uncharge() - return what pea_mlock_charge() took
 * @c: the charge
 *
 * The pinned pages go back to the mm that was charged, whichever process
 * unmaps last.
 */
void pea_mlock_uncharge(struct pea_charge *c)
{
	mutex_lock(&pea_charges_lock);
	list_del_init(&c->node);
	mutex_unlock(&pea_charges_lock);
	atomic_long_sub(c->user_pages, &pea_charged_user);
	atomic_long_sub(c->pinned_pages, &pea_charged_pinned);
	atomic_long_sub(c->user_pages, &c->user->perf_mlock);
	atomic64_sub(c->pinned_pages, &c->mm->pinned_vm);
	mmdrop(c->mm);
	free_uid(c->user);
}

/**
 * pea_mlock_show() - the debugfs "mlock" file
 * @m: the seq_file
 * @v: unused
 *
 * One line per mapped ring: its event, the uid charged, the pages charged
 * to the user's perf_mlock and to the mapping's pinned_vm; then the sums.
 *
 * Return: 0.
 */
int pea_mlock_show(struct seq_file *m, void *v)
{
	struct pea_charge *c;

	seq_puts(m, "# event_id uid user_pages pinned_pages\n");
	mutex_lock(&pea_charges_lock);
	list_for_each_entry(c, &pea_charges, node)
		seq_printf(m, "%llu %u %lu %lu\n", c->event_id,
			   from_kuid(&init_user_ns, c->user->uid),
			   c->user_pages, c->pinned_pages);
	mutex_unlock(&pea_charges_lock);
	seq_printf(m, "total - %ld %ld\n", atomic_long_read(&pea_charged_user),
		   atomic_long_read(&pea_charged_pinned));
	return 0;
}

static struct file *pea_sysctl_open(const char *path)
{
	struct file *f;

	if (!pea_proc_mnt)
		return NULL;
	f = file_open_root_mnt(pea_proc_mnt, path, O_RDONLY, 0);
	if (IS_ERR(f)) {
		pr_warn("pea: cannot open %s (%ld): using the fallback\n",
			path, PTR_ERR(f));
		return NULL;
	}
	return f;
}

/*
 * The mount, from a kworker: a procfs mount pins the pid namespace (and
 * its user namespace) of the task that makes it, and a kworker's is the
 * initial one, whatever namespace the module is loaded from.
 */
static void pea_proc_mount(struct work_struct *work)
{
	struct file_system_type *proc = get_fs_type("proc");
	struct vfsmount *mnt = proc ? kern_mount(proc) : ERR_PTR(-ENODEV);

	if (IS_ERR(mnt))
		pr_warn("pea: cannot mount procfs (%ld): using the fallbacks\n",
			PTR_ERR(mnt));
	else
		pea_proc_mnt = mnt;
}

/**
 * pea_limits_init() - mount procfs for pea, open the perf sysctls' files
 *
 * procfs is built in: get_fs_type() takes no module reference for it
 * (and put_filesystem() is not exported). The files are read with a
 * kernel credential (pea_sysctl_read()).
 */
void pea_limits_init(void)
{
	struct work_struct work;

	INIT_WORK_ONSTACK(&work, pea_proc_mount);
	schedule_work(&work);
	flush_work(&work);
	destroy_work_on_stack(&work);
	pea_sysctl_cred = prepare_kernel_cred(&init_task);
	if (!pea_sysctl_cred)
		pr_warn("pea: no kernel credential: the sysctls are read with the caller's\n");
	pea_paranoid_file = pea_sysctl_open(PEA_PARANOID_PATH);
	pea_mlock_file = pea_sysctl_open(PEA_MLOCK_PATH);
	pea_max_stack_file = pea_sysctl_open(PEA_MAX_STACK_PATH);
	pea_sample_rate_file = pea_sysctl_open(PEA_SAMPLE_RATE_PATH);
}

/**
 * pea_limits_exit() - close them, unmount pea's procfs
 */
void pea_limits_exit(void)
{
	if (pea_paranoid_file)
		filp_close(pea_paranoid_file, NULL);
	if (pea_mlock_file)
		filp_close(pea_mlock_file, NULL);
	if (pea_max_stack_file)
		filp_close(pea_max_stack_file, NULL);
	if (pea_sample_rate_file)
		filp_close(pea_sample_rate_file, NULL);
	if (pea_proc_mnt)
		kern_unmount(pea_proc_mnt);
	if (pea_sysctl_cred)
		put_cred(pea_sysctl_cred);
}
