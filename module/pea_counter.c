// SPDX-License-Identifier: GPL-2.0
/*
 * pea: counter event file descriptors.
 *
 * PEA_IOC_EVENT_OPEN with any attr other than a BPF_OUTPUT one creates a
 * counter: a kernel perf event (perf_event_create_kernel_counter()) bound
 * to one CPU, of any PMU type. Its fd reads like a perf counter fd (the
 * read_format layout), takes ENABLE, DISABLE, RESET and ID, and mmaps one
 * control page where the counter's CPU publishes count, time_enabled and
 * time_running under the perf seqcount, so that any CPU can read it
 * without a system call, which Linux does not offer for CPU-wide counters.
 *
 * Permissions are perf_event_open()'s for a CPU-wide event:
 * perf_event_create_kernel_counter() applies the CPU-wide rule
 * (perf_event_paranoid <= 0 or CAP_PERFMON/CAP_SYS_ADMIN, else EACCES) to
 * the calling task; exclude_kernel == 0 additionally needs paranoid <= 1
 * or the capability (see pea_perf_allow_kernel()).
 *
 * The counter's CPU is the one perf put the event on, event->cpu, not
 * necessarily the one asked for: a PMU whose counters serve a whole
 * package or die (uncore, RAPL and cstate on 6.1; uncore on 6.12)
 * rewrites event->cpu in event_init to the one CPU of its cpumask, and
 * moves its events to another CPU with perf_pmu_migrate_context() when
 * that CPU goes offline (as perf does for a 6.12 PMU with a scope), which
 * changes event->cpu under the context mutex. pea keeps each counter on
 * the list of its owner, c->cpu, which follows event->cpu:
 * pea_counter_rehome() moves counters whose event changed CPU, from a
 * hotplug state torn down after every PMU's (the CPU is dead by then; see
 * pea_counter_init()), from the online callback, and, for a migration at
 * any other time, from a work item the refresh timer queues when it finds
 * a counter that is no longer its CPU's.
 *
 * Page refresh: every read(2) and ioctl refreshes the page through an IPI
 * to the counter's CPU, every in-kernel read on that CPU refreshes it, and
 * a per-CPU hrtimer refreshes all the CPU's counters every
 * counter_refresh_ms. So, while the CPU is online, the page is never older
 * than that period plus the timer's latency (interrupts disabled on that
 * CPU), and PEA_PAGE_COUNTER_TIME says how old it is. The timer follows
 * CPU hotplug: it stops (after a last refresh) when the CPU goes down and
 * restarts when it comes back. Only the owner publishes, and only while
 * event->cpu is the owner (pea_counter_refresh()); a move takes the
 * ownership away (c->cpu = -1) for an RCU grace period, which every
 * publisher (interrupts off) spans, before the new owner gets it: a page
 * never has two writers.
 */
#include <linux/anon_inodes.h>
#include <linux/compat.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include "pea_internal.h"
#include "pea_compat.h"
#include "pea_counter.h"

static unsigned int counter_refresh_ms = 10;
module_param(counter_refresh_ms, uint, 0444);
MODULE_PARM_DESC(counter_refresh_ms,
		 "counter page refresh period in ms (default 10, 0: only on reads)");

#define PEA_REFRESH_MS_MAX	60000U

static u64 pea_refresh_ns;

/* ---- per-CPU refresh timer ---- */

/*
 * struct pea_counter_cpu - the counters bound to one CPU
 * @timer:    refreshes their pages every pea_refresh_ns, pinned to the CPU
 * @counters: RCU list of struct pea_counter, changed under
 *            pea_counter_cpus_lock
 * @nr:       entries in @counters
 * @timer_on: @timer is armed
 */
struct pea_counter_cpu {
	struct hrtimer timer;
	struct list_head counters;
	unsigned int nr;
	bool timer_on;
};

static DEFINE_PER_CPU(struct pea_counter_cpu, pea_counter_cpus);
/* Nests inside cpus_read_lock() and the hotplug callbacks. */
static DEFINE_MUTEX(pea_counter_cpus_lock);
static int pea_cpuhp_state = -1;
static int pea_cpuhp_dead_state = -1;

static void pea_counter_rehome_workfn(struct work_struct *work);
static DECLARE_WORK(pea_counter_rehome_work, pea_counter_rehome_workfn);

static enum hrtimer_restart pea_counter_timer_fn(struct hrtimer *t)
{
	struct pea_counter_cpu *pc = container_of(t, struct pea_counter_cpu,
						  timer);
	int cpu = smp_processor_id();
	struct pea_event_value v;
	struct pea_counter *c;
	bool moved = false;

	/* Hotplug stops the timer before it could migrate. */
	if (WARN_ON_ONCE(pc != this_cpu_ptr(&pea_counter_cpus)))
		return HRTIMER_NORESTART;
	rcu_read_lock();
	list_for_each_entry_rcu(c, &pc->counters, node) {
		if (READ_ONCE(c->pe->cpu) != cpu)
			moved = true;	/* not published: see refresh */
		else
			pea_counter_refresh(c, &v);
	}
	rcu_read_unlock();
	if (moved)
		schedule_work(&pea_counter_rehome_work);
	hrtimer_forward_now(t, ns_to_ktime(pea_refresh_ns));
	return HRTIMER_RESTART;
}

/* On the CPU itself, under pea_counter_cpus_lock. */
static void pea_counter_timer_start(struct pea_counter_cpu *pc)
{
	if (!pea_refresh_ns || pc->timer_on)
		return;
	hrtimer_start(&pc->timer, ns_to_ktime(pea_refresh_ns),
		      HRTIMER_MODE_REL_PINNED_HARD);
	pc->timer_on = true;
}

static void pea_counter_timer_stop(struct pea_counter_cpu *pc)
{
	if (!pc->timer_on)
		return;
	hrtimer_cancel(&pc->timer);
	pc->timer_on = false;
}

/* Refresh every counter of this CPU: the hotplug callbacks, in a thread. */
static void pea_counter_cpu_refresh_all(struct pea_counter_cpu *pc)
{
	struct pea_event_value v;
	struct pea_counter *c;

	local_irq_disable();
	list_for_each_entry(c, &pc->counters, node)
		pea_counter_refresh(c, &v);
	local_irq_enable();
}

static void pea_counter_rehome(void);

static int pea_counter_cpu_online(unsigned int cpu)
{
	struct pea_counter_cpu *pc = this_cpu_ptr(&pea_counter_cpus);

	mutex_lock(&pea_counter_cpus_lock);
	if (pc->nr) {
		pea_counter_cpu_refresh_all(pc);
		pea_counter_timer_start(pc);
	}
	/* A PMU's online callback, which ran before, may have moved events. */
	pea_counter_rehome();
	mutex_unlock(&pea_counter_cpus_lock);
	return 0;
}

static int pea_counter_cpu_offline(unsigned int cpu)
{
	struct pea_counter_cpu *pc = this_cpu_ptr(&pea_counter_cpus);

	mutex_lock(&pea_counter_cpus_lock);
	pea_counter_timer_stop(pc);
	/* The page keeps what the counters held when the CPU went down. */
	pea_counter_cpu_refresh_all(pc);
	mutex_unlock(&pea_counter_cpus_lock);
	return 0;
}

/*
 * The dead CPU's PMUs have migrated their events (perf_pmu_migrate_context()
 * in their offline callbacks, or perf's own for a PMU with a scope): move
 * the counters after them. On the control CPU, after the CPU died.
 */
static int pea_counter_cpu_dead(unsigned int cpu)
{
	mutex_lock(&pea_counter_cpus_lock);
	pea_counter_rehome();
	mutex_unlock(&pea_counter_cpus_lock);
	return 0;
}

struct pea_counter_add {
	struct pea_counter_cpu *pc;
	struct pea_counter *c;
};

static void pea_counter_add_ipi(void *info)
{
	struct pea_counter_add *a = info;
	struct pea_event_value v;

	pea_counter_refresh(a->c, &v);
	pea_counter_timer_start(a->pc);
}

/*
 * Make @cpu the owner of @c: list it there and, if the CPU is online,
 * publish a first sample and make sure its timer runs. Under
 * pea_counter_cpus_lock, with CPU hotplug excluded (cpus_read_lock() or
 * a hotplug callback).
 */
static void pea_counter_own(struct pea_counter *c, int cpu)
{
	struct pea_counter_cpu *pc = per_cpu_ptr(&pea_counter_cpus, cpu);
	struct pea_counter_add a = { .pc = pc, .c = c };

	list_add_tail_rcu(&c->node, &pc->counters);
	pc->nr++;
	WRITE_ONCE(c->cpu, cpu);
	if (cpu_online(cpu))
		smp_call_function_single(cpu, pea_counter_add_ipi, &a, 1);
}

static void pea_counter_disown(struct pea_counter *c)
{
	struct pea_counter_cpu *pc = per_cpu_ptr(&pea_counter_cpus, c->cpu);

	list_del_rcu(&c->node);
	if (!--pc->nr)
		pea_counter_timer_stop(pc);
	WRITE_ONCE(c->cpu, -1);
}

/*
 * Move every counter whose event perf put on another CPU to that CPU's
 * list. The old owner loses the page first; once a grace period has
 * passed (publishers run with interrupts off, NMI included, and the
 * timer walks under RCU) the new owner gets it, so the two never write
 * the page at once. Under pea_counter_cpus_lock, hotplug excluded.
 */
static void pea_counter_rehome(void)
{
	struct pea_counter *c, *tmp;
	LIST_HEAD(moving);
	int cpu, to;

	for_each_possible_cpu(cpu) {
		struct pea_counter_cpu *pc = per_cpu_ptr(&pea_counter_cpus, cpu);

		list_for_each_entry_safe(c, tmp, &pc->counters, node) {
			to = READ_ONCE(c->pe->cpu);
			if (to == cpu || to < 0 || to >= nr_cpu_ids)
				continue;
			pea_counter_disown(c);
			list_add_tail(&c->move, &moving);
		}
	}
	if (list_empty(&moving))
		return;
	synchronize_rcu();
	list_for_each_entry_safe(c, tmp, &moving, move) {
		list_del(&c->move);
		pea_counter_own(c, READ_ONCE(c->pe->cpu));
	}
}

static void pea_counter_rehome_workfn(struct work_struct *work)
{
	cpus_read_lock();
	mutex_lock(&pea_counter_cpus_lock);
	pea_counter_rehome();
	mutex_unlock(&pea_counter_cpus_lock);
	cpus_read_unlock();
}

static void pea_counter_list_add(struct pea_event *ev)
{
	cpus_read_lock();
	mutex_lock(&pea_counter_cpus_lock);
	pea_counter_own(ev->counter, READ_ONCE(ev->counter->pe->cpu));
	mutex_unlock(&pea_counter_cpus_lock);
	cpus_read_unlock();
}

static void pea_counter_list_del(struct pea_event *ev)
{
	cpus_read_lock();
	mutex_lock(&pea_counter_cpus_lock);
	pea_counter_disown(ev->counter);
	mutex_unlock(&pea_counter_cpus_lock);
	cpus_read_unlock();
	/* The timer may still be walking past this counter. */
	synchronize_rcu();
}

static void pea_counter_refresh_ipi(void *info)
{
	struct pea_event_value v;

	pea_counter_refresh(info, &v);
}

/*
 * Refresh the page from the counter's CPU; nothing if it is offline or
 * the counter is moving (its new owner publishes when it gets it).
 */
static void pea_counter_refresh_remote(struct pea_event *ev)
{
	int cpu = READ_ONCE(ev->counter->cpu);

	if (cpu >= 0)
		smp_call_function_single(cpu, pea_counter_refresh_ipi,
					 ev->counter, 1);
}

/**
 * pea_event_cpu() - the CPU an event is bound to, as reported to users
 * @ev: the event
 *
 * For a counter, the CPU perf put it on (event->cpu), which a PMU with a
 * package-wide or die-wide counter chooses, and moves on CPU hotplug;
 * for an output event, the CPU it was opened for.
 *
 * Return: the CPU number.
 */
int pea_event_cpu(const struct pea_event *ev)
{
	if (ev->kind == PEA_EVENT_COUNTER && ev->counter->pe)
		return READ_ONCE(ev->counter->pe->cpu);
	return ev->cpu;
}

/* ---- the fd ---- */

static void pea_counter_free_work(struct work_struct *work)
{
	struct pea_event *ev = container_of(work, struct pea_event, free_work);
	struct pea_counter *c = ev->counter;

	if (c->pe) {
		pea_counter_list_del(ev);
		perf_event_release_kernel(c->pe);
	}
	/* A fault gave it the file's mapping (pea_counter_vm_fault()). */
	virt_to_page(c->page)->mapping = NULL;
	free_page((unsigned long)c->page);
	kfree(c);
	kfree(ev);
	atomic_dec(&pea_objects.events);
}

static int pea_counter_release(struct inode *inode, struct file *file)
{
	pea_event_put(file->private_data);
	return 0;
}

static size_t pea_counter_read_size(const struct pea_event *ev)
{
	return sizeof(u64) * (1 + hweight64(ev->read_format &
					    PEA_COUNTER_READ_FORMAT));
}

static ssize_t pea_counter_read(struct file *file, char __user *buf,
				size_t count, loff_t *ppos)
{
	struct pea_event *ev = file->private_data;
	struct pea_counter *c = ev->counter;
	u64 values[5], enabled, running, raw, base;
	size_t n = 0;

	/* As perf: end of file for a pinned event that could not go on. */
	if (READ_ONCE(c->pe->state) == PERF_EVENT_STATE_ERROR)
		return 0;
	if (count < pea_counter_read_size(ev))
		return -ENOSPC;

	mutex_lock(&c->lock);
	base = atomic64_read(&c->base);
	raw = perf_event_read_value(c->pe, &enabled, &running);
	pea_counter_refresh_remote(ev);
	mutex_unlock(&c->lock);

	values[n++] = raw >= base ? raw - base : 0;
	if (ev->read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
		values[n++] = enabled;
	if (ev->read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
		values[n++] = running;
	if (ev->read_format & PERF_FORMAT_ID)
		values[n++] = ev->id;
	if (ev->read_format & PERF_FORMAT_LOST)
		values[n++] = 0;	/* a counter never samples */
	if (copy_to_user(buf, values, n * sizeof(u64)))
		return -EFAULT;
	return n * sizeof(u64);
}

static long pea_counter_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	struct pea_event *ev = file->private_data;
	struct pea_counter *c = ev->counter;
	u64 enabled, running;

	switch (cmd) {
	case PERF_EVENT_IOC_ENABLE:
	case PERF_EVENT_IOC_DISABLE:
	case PERF_EVENT_IOC_RESET:
		break;
	case PERF_EVENT_IOC_ID:
		return put_user(ev->id, (u64 __user *)arg) ? -EFAULT : 0;
	case PERF_EVENT_IOC_PAUSE_OUTPUT:
		return -EINVAL;	/* as perf for an event without a ring */
	default:
		return -ENOTTY;
	}

	mutex_lock(&c->lock);
	if (cmd == PERF_EVENT_IOC_ENABLE)
		perf_event_enable(c->pe);
	else if (cmd == PERF_EVENT_IOC_DISABLE)
		perf_event_disable(c->pe);
	else
		atomic64_set_release(&c->base,
				     perf_event_read_value(c->pe, &enabled,
							   &running));
	pea_counter_refresh_remote(ev);
	mutex_unlock(&c->lock);
	return 0;
}

/*
 * The page comes from here, as perf_mmap_fault() supplies it: after
 * MADV_DONTNEED it comes back on the next access.
 */
static vm_fault_t pea_counter_vm_fault(struct vm_fault *vmf)
{
	struct pea_event *ev = vmf->vma->vm_file->private_data;

	if (vmf->pgoff)
		return VM_FAULT_SIGBUS;
	vmf->page = virt_to_page(ev->counter->page);
	get_page(vmf->page);
	/* As perf: a page_mkwrite'd page needs a mapping (do_page_mkwrite()). */
	vmf->page->mapping = vmf->vma->vm_file->f_mapping;
	vmf->page->index = 0;
	return 0;
}

static vm_fault_t pea_counter_vm_mkwrite(struct vm_fault *vmf)
{
	return 0;	/* the control page is writable, as perf's */
}

static const struct vm_operations_struct pea_counter_vm_ops = {
	.fault = pea_counter_vm_fault,
	.page_mkwrite = pea_counter_vm_mkwrite,
};

/* Only the control page: one page, shared, at offset 0. */
static int pea_counter_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (!(vma->vm_flags & VM_SHARED) || vma->vm_pgoff != 0 ||
	    vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	pea_vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &pea_counter_vm_ops;
	return 0;
}

/**
 * pea_perf_compat_ioctl() - .compat_ioctl of the event and counter fds
 * @file: the fd's file
 * @cmd: the ioctl number as a 32-bit process encoded it
 * @arg: its argument
 *
 * As perf_compat_ioctl(): the perf ioctls whose number carries the size
 * of a pointer (PERF_EVENT_IOC_ID and the pointer-taking ones) get a
 * 64-bit pointer size; every pea struct has one layout for both.
 *
 * Return: what the fd's ioctl returns.
 */
#ifdef CONFIG_COMPAT
long pea_perf_compat_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	switch (cmd & ~IOCSIZE_MASK) {
	case PERF_EVENT_IOC_SET_FILTER & ~IOCSIZE_MASK:
	case PERF_EVENT_IOC_ID & ~IOCSIZE_MASK:
	case PERF_EVENT_IOC_QUERY_BPF & ~IOCSIZE_MASK:
	case PERF_EVENT_IOC_MODIFY_ATTRIBUTES & ~IOCSIZE_MASK:
		if (_IOC_SIZE(cmd) == sizeof(compat_uptr_t)) {
			cmd &= ~IOCSIZE_MASK;
			cmd |= sizeof(void *) << IOCSIZE_SHIFT;
		}
		break;
	}
	return file->f_op->unlocked_ioctl(file, cmd,
					  (unsigned long)compat_ptr(arg));
}
#endif

const struct file_operations pea_counter_fops = {
	.owner = THIS_MODULE,
	.release = pea_counter_release,
	.read = pea_counter_read,
	.mmap = pea_counter_mmap,
	.unlocked_ioctl = pea_counter_ioctl,
	.compat_ioctl = pea_perf_compat_ioctl,
};

/* ---- creation ---- */

/* A counter counts: everything it does not honour must be zero. */
static int pea_check_counter_attr(const struct perf_event_attr *attr)
{
	struct perf_event_attr rest = *attr;

	if (attr->read_format & ~(u64)PEA_COUNTER_READ_FORMAT)
		return -EINVAL;
	rest.size = 0;
	rest.type = 0;
	rest.config = 0;
	rest.config1 = 0;
	rest.config2 = 0;
#ifdef PERF_ATTR_SIZE_VER8
	rest.config3 = 0;
#endif
	rest.bp_type = 0;
	rest.read_format = 0;
	rest.disabled = 0;
	rest.inherit = 0;
	rest.pinned = 0;
	rest.exclusive = 0;
	rest.exclude_user = 0;
	rest.exclude_kernel = 0;
	rest.exclude_hv = 0;
	rest.exclude_idle = 0;
	rest.exclude_host = 0;
	rest.exclude_guest = 0;
	return memchr_inv(&rest, 0, sizeof(rest)) ? -EINVAL : 0;
}

static struct pea_event *pea_counter_alloc(const struct perf_event_attr *attr,
					   int cpu)
{
	int node = cpu_to_node(cpu);
	struct pea_counter *c;
	struct pea_event *ev;
	struct page *page;

	/* Charged to the caller's memory cgroup; the fd bounds the count. */
	ev = kzalloc_node(sizeof(*ev), GFP_KERNEL_ACCOUNT, node);
	c = kzalloc_node(sizeof(*c), GFP_KERNEL_ACCOUNT, node);
	page = alloc_pages_node(node, GFP_KERNEL_ACCOUNT | __GFP_ZERO, 0);
	if (!ev || !c || !page) {
		kfree(ev);
		kfree(c);
		if (page)
			__free_page(page);
		return NULL;
	}
	atomic_inc(&pea_objects.events);
	refcount_set(&ev->refcnt, 1);
	ev->kind = PEA_EVENT_COUNTER;
	ev->cpu = cpu;
	ev->oncpu = -1;		/* never an output target */
	ev->id = pea_next_id();
	ev->read_format = attr->read_format;
	INIT_WORK(&ev->free_work, pea_counter_free_work);
	ev->counter = c;

	c->page = page_address(page);
	c->page->cap_bit0_is_deprecated = 1;
	c->page->size = offsetof(struct perf_event_mmap_page, __reserved);
	PEA_PAGE_COUNTER_PERIOD(c->page) = pea_refresh_ns;
	atomic64_set(&c->base, 0);
	local_set(&c->publishing, 0);
	mutex_init(&c->lock);
	INIT_LIST_HEAD(&c->node);
	INIT_LIST_HEAD(&c->move);
	c->cpu = -1;
	return ev;
}

/**
 * pea_counter_open() - PEA_IOC_EVENT_OPEN of a counter
 * @attr: the perf_event_attr, copied in; not BPF_OUTPUT
 * @arg: the request (cpu, flags)
 *
 * Return: the new fd, or -EINVAL (an attr field a counter does not honour,
 * read_format bits other than PEA_COUNTER_READ_FORMAT, cpu out of range,
 * a wake-up flag or flush_us: a counter has no ring),
 * -EACCES (exclude_kernel == 0 without perf_event_paranoid <= 1 or the
 * capability, on kernels that export that check; any counter without
 * paranoid <= 0 or CAP_PERFMON/CAP_SYS_ADMIN), any error of
 * perf_event_create_kernel_counter(): -ENOENT (no PMU provides the type or
 * config: e.g. hardware events without a PMU), -EOPNOTSUPP or -EINVAL
 * (the PMU refuses the config or an exclude bit), -ENODEV (offline cpu),
 * -ENOSPC (no hardware slot for a pinned breakpoint), or -ENOMEM, -EMFILE.
 */
long pea_counter_open(struct perf_event_attr *attr,
		      const struct pea_event_open *arg)
{
	struct perf_event *pe;
	struct pea_event *ev;
	int err, fd;

	/*
	 * Debian's perf_event_paranoid 3 (perf_event_open() checks it first,
	 * with capable(CAP_SYS_ADMIN)). The LSM's PERF_SECURITY_OPEN hook that
	 * follows it in perf_event_open() is not exported to modules.
	 */
	if (pea_perf_paranoid() > 2 && !capable(CAP_SYS_ADMIN))
		return -EACCES;
	err = pea_check_counter_attr(attr);
	if (err)
		return err;
	if ((arg->flags & ~PEA_FLAG_FD_CLOEXEC) || arg->flush_us)
		return -EINVAL;
	if (arg->cpu < 0 || arg->cpu >= nr_cpu_ids)
		return -EINVAL;
	/* perf_event_open() checks this one before creating the event. */
	if (!attr->exclude_kernel) {
		err = pea_perf_allow_kernel();
		if (err)
			return err;
	}

	ev = pea_counter_alloc(attr, arg->cpu);
	if (!ev)
		return -ENOMEM;
	pe = perf_event_create_kernel_counter(attr, arg->cpu, NULL, NULL, NULL);
	if (IS_ERR(pe)) {
		pea_event_put(ev);
		return PTR_ERR(pe);
	}
	ev->counter->pe = pe;
	pea_counter_list_add(ev);

	fd = anon_inode_getfd("[pea_counter]", &pea_counter_fops, ev,
			      O_RDWR | ((arg->flags & PEA_FLAG_FD_CLOEXEC) ?
					O_CLOEXEC : 0));
	if (fd < 0)
		pea_event_put(ev);
	return fd;
}

/* ---- module ---- */

int pea_counter_init(void)
{
	unsigned int cpu;
	int state;

	pea_refresh_ns = (u64)min(counter_refresh_ms, PEA_REFRESH_MS_MAX) *
			 NSEC_PER_MSEC;
	for_each_possible_cpu(cpu) {
		struct pea_counter_cpu *pc = per_cpu_ptr(&pea_counter_cpus, cpu);

		INIT_LIST_HEAD(&pc->counters);
		hrtimer_init(&pc->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		pc->timer.function = pea_counter_timer_fn;
	}
	/*
	 * A prepare-section state is torn down on the control CPU once the
	 * CPU is dead, after every online-section state, so after any PMU's
	 * offline callback has migrated its events.
	 */
	state = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN,
					  "pea/counter:dead", NULL,
					  pea_counter_cpu_dead);
	if (state < 0)
		return state;
	pea_cpuhp_dead_state = state;
	state = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN,
					  "pea/counter:online",
					  pea_counter_cpu_online,
					  pea_counter_cpu_offline);
	if (state < 0) {
		pea_counter_exit();
		return state;
	}
	pea_cpuhp_state = state;
	return 0;
}

void pea_counter_exit(void)
{
	/* Every counter is gone: their fds pin the module. */
	if (pea_cpuhp_state >= 0)
		cpuhp_remove_state_nocalls(pea_cpuhp_state);
	pea_cpuhp_state = -1;
	if (pea_cpuhp_dead_state >= 0)
		cpuhp_remove_state_nocalls(pea_cpuhp_dead_state);
	pea_cpuhp_dead_state = -1;
	cancel_work_sync(&pea_counter_rehome_work);
}
