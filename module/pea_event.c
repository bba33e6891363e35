// SPDX-License-Identifier: GPL-2.0
/*
 * pea: output event file descriptors.
 *
 * An output event is the analogue of a perf event of type
 * PERF_TYPE_SOFTWARE, config PERF_COUNT_SW_BPF_OUTPUT, bound to one CPU.
 * Its fd is mmapped (1 + 2^n pages at offset 0) to read the ring, polled
 * for EPOLLIN | EPOLLRDNORM (EPOLLHUP while unmapped), and takes the perf
 * ioctls that make sense for it.
 *
 * As in Linux, the ring exists while mapped: it is allocated at the first
 * mmap and freed after the last munmap, so a new mapping starts empty.
 */
#include <linux/anon_inodes.h>
#include <linux/compat.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/pid_namespace.h>
#include <linux/cpumask.h>
#include <linux/topology.h>
#include <linux/seq_file.h>
#include "pea_internal.h"
#include "pea_compat.h"
#include "pea_counter.h"

static void pea_event_free_work(struct work_struct *work)
{
	struct pea_event *ev = container_of(work, struct pea_event, free_work);

	pea_event_flush_stop(ev);
	irq_work_sync(&ev->wakeup_work);
	put_pid_ns(ev->pid_ns);
	kfree(ev);
	atomic_dec(&pea_objects.events);
}

static void pea_event_wakeup_irq(struct irq_work *work)
{
	struct pea_event *ev = container_of(work, struct pea_event,
					    wakeup_work);

	wake_up_all(&ev->waitq);
}

static int pea_event_release(struct inode *inode, struct file *file)
{
	pea_event_put(file->private_data);
	return 0;
}

static __poll_t pea_event_poll(struct file *file, poll_table *wait)
{
	struct pea_event *ev = file->private_data;
	__poll_t events = EPOLLHUP;
	struct pea_ring *ring;

	poll_wait(file, &ev->waitq, wait);
	rcu_read_lock();
	ring = rcu_dereference(ev->ring);
	if (ring)
		events = (__force __poll_t)atomic_xchg(&ring->poll, 0);
	rcu_read_unlock();
	return events;
}

static u64 pea_event_count(struct pea_event *ev)
{
	return local64_read(&ev->records) - atomic64_read(&ev->count_base);
}

static ssize_t pea_event_read(struct file *file, char __user *buf,
			      size_t count, loff_t *ppos)
{
	struct pea_event *ev = file->private_data;
	u64 values[2];
	size_t n = 1;

	values[0] = pea_event_count(ev);
	if (ev->read_format & PERF_FORMAT_ID)
		values[n++] = ev->id;
	if (count < n * sizeof(u64))
		return -ENOSPC;
	if (copy_to_user(buf, values, n * sizeof(u64)))
		return -EFAULT;
	return n * sizeof(u64);
}

/**
 * pea_event_show() - print an event's ring and counters on one line
 * @m: the seq_file
 * @ev: the event
 *
 * Prints "event_id data_pages size used records bytes lost lost_pending
 * wakeups"; used is the unread bytes (data_head - data_tail).
 */
void pea_event_show(struct seq_file *m, struct pea_event *ev)
{
	unsigned long pages = 0, size = 0, used = 0;
	struct pea_ring *ring;

	rcu_read_lock();
	ring = rcu_dereference(ev->ring);
	if (ring) {
		pages = ring->nr_pages;
		size = ring->size;
		used = READ_ONCE(ring->user_page->data_head) -
		       READ_ONCE(ring->user_page->data_tail);
		if (ring->backward)
			used = -used;
		used = min(used, size);
	}
	rcu_read_unlock();
	seq_printf(m, "%llu %lu %lu %lu %llu %llu %llu %ld %llu\n", ev->id,
		   pages, size, used, (u64)local64_read(&ev->records),
		   (u64)local64_read(&ev->bytes), (u64)local64_read(&ev->lost),
		   atomic_long_read(&ev->lost_pending),
		   (u64)local64_read(&ev->wakeups));
}

/* ---- mmap ---- */

static void pea_vm_open(struct vm_area_struct *vma)
{
	struct pea_ring *ring = vma->vm_private_data;

	atomic_inc(&ring->mmap_count);
}

static void pea_vm_close(struct vm_area_struct *vma)
{
	struct pea_event *ev = vma->vm_file->private_data;
	struct pea_ring *ring = vma->vm_private_data;

	mutex_lock(&ev->mmap_mutex);
	if (atomic_dec_and_test(&ring->mmap_count)) {
		RCU_INIT_POINTER(ev->ring, NULL);
		pea_mlock_uncharge(&ring->charge);
		pea_ring_free_deferred(ring);
		/* Pollers learn of the hang-up, as perf's ring_buffer_attach(). */
		wake_up_all(&ev->waitq);
	}
	mutex_unlock(&ev->mmap_mutex);
}

static int pea_vm_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;		/* a ring is mapped whole or not at all */
}

/*
 * Pages come from here, as perf_mmap_fault() supplies them: a page that
 * MADV_DONTNEED dropped comes back on the next access. Writes are for the
 * control page (data_tail) only; a write to a data page is SIGBUS.
 */
static vm_fault_t pea_vm_fault(struct vm_fault *vmf)
{
	struct pea_ring *ring = vmf->vma->vm_private_data;

	if (vmf->pgoff && (vmf->flags & FAULT_FLAG_WRITE))
		return VM_FAULT_SIGBUS;
	if (vmf->pgoff > ring->nr_pages)
		return VM_FAULT_SIGBUS;
	vmf->page = ring->pages[vmf->pgoff];
	get_page(vmf->page);
	/*
	 * As perf: do_page_mkwrite() retries the fault for ever on a page
	 * without a mapping. The anon inode's mapping has noop_dirty_folio;
	 * the ring clears it before freeing the page.
	 */
	vmf->page->mapping = vmf->vma->vm_file->f_mapping;
	vmf->page->index = vmf->pgoff;
	return 0;
}

static vm_fault_t pea_vm_mkwrite(struct vm_fault *vmf)
{
	return vmf->pgoff ? VM_FAULT_SIGBUS : 0;
}

static const struct vm_operations_struct pea_vm_ops = {
	.open = pea_vm_open,
	.close = pea_vm_close,
	.may_split = pea_vm_may_split,
	.fault = pea_vm_fault,
	.page_mkwrite = pea_vm_mkwrite,
};

static int pea_event_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pea_event *ev = file->private_data;
	unsigned long vma_size = vma->vm_end - vma->vm_start;
	unsigned long nr_pages = (vma_size >> PAGE_SHIFT) - 1;
	struct pea_charge charge;
	struct pea_ring *ring;
	bool fresh = false;
	int err;

	if (!(vma->vm_flags & VM_SHARED) || vma->vm_pgoff != 0)
		return -EINVAL;
	if (vma_size < 2 * PAGE_SIZE || !is_power_of_2(nr_pages) ||
	    nr_pages > PEA_MAX_RING_PAGES)
		return -EINVAL;

	mutex_lock(&ev->mmap_mutex);
	ring = rcu_dereference_protected(ev->ring,
					 lockdep_is_held(&ev->mmap_mutex));
	if (ring) {
		if (ring->nr_pages != nr_pages) {
			err = -EINVAL;
			goto unlock;
		}
		atomic_inc(&ring->mmap_count);
	} else {
		/* As perf_mmap(): charged before the ring is allocated. */
		err = pea_mlock_charge(&charge, nr_pages + 1, ev->id);
		if (err)
			goto unlock;
		ring = pea_ring_alloc(ev, nr_pages,
				      !(vma->vm_flags & VM_WRITE) ||
				      ev->backward, cpu_to_node(ev->cpu));
		if (!ring) {
			pea_mlock_uncharge(&charge);
			err = -ENOMEM;
			goto unlock;
		}
		pea_mlock_track(&ring->charge, &charge);
		fresh = true;
	}

	/* As perf_mmap(); the pages are faulted in (pea_vm_fault()). */
	pea_vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_private_data = ring;
	vma->vm_ops = &pea_vm_ops;
	if (fresh) {
		rcu_assign_pointer(ev->ring, ring);
		/*
		 * Records dropped before the ring was published, up to this
		 * very moment, are pending: the hint says so. Full barrier
		 * between the publication and the count, paired with
		 * pea_ring_count_lost()'s between the count and its second
		 * look at ev->ring: a writer that found no ring either is
		 * counted here or sees the ring and sets the hint itself.
		 */
		smp_mb();
		if (atomic_long_read(&ev->lost_pending))
			WRITE_ONCE(PEA_PAGE_LOST_HINT(ring->user_page), 1);
	}
	mutex_unlock(&ev->mmap_mutex);
	return 0;

unlock:
	mutex_unlock(&ev->mmap_mutex);
	return err;
}

/* ---- ioctls ---- */

static long pea_event_take_lost(struct pea_event *ev, u64 __user *uptr)
{
	struct pea_ring *ring;
	u64 lost;

	rcu_read_lock();
	ring = rcu_dereference(ev->ring);
	if (ring)
		WRITE_ONCE(PEA_PAGE_LOST_HINT(ring->user_page), 0);
	rcu_read_unlock();
	/* Full barrier: the hint is clear before the count is taken. */
	lost = atomic_long_xchg(&ev->lost_pending, 0);
	if (put_user(lost, uptr)) {
		atomic_long_add(lost, &ev->lost_pending);
		return -EFAULT;
	}
	return 0;
}

static long pea_event_stats(struct pea_event *ev,
			    struct pea_event_stats __user *ustats)
{
	struct pea_event_stats st = {
		.records = local64_read(&ev->records),
		.bytes = local64_read(&ev->bytes),
		.lost = local64_read(&ev->lost),
		.lost_pending = atomic_long_read(&ev->lost_pending),
		.wakeups = local64_read(&ev->wakeups),
		.cpu = ev->cpu,
	};
	struct pea_ring *ring;

	rcu_read_lock();
	ring = rcu_dereference(ev->ring);
	if (ring)
		st.data_pages = ring->nr_pages;
	rcu_read_unlock();
	return copy_to_user(ustats, &st, sizeof(st)) ? -EFAULT : 0;
}

static long pea_event_pause(struct pea_event *ev, unsigned long arg)
{
	struct pea_ring *ring;
	long err = 0;

	rcu_read_lock();
	ring = rcu_dereference(ev->ring);
	if (ring)	/* writers drop what exceeds the limit */
		WRITE_ONCE(ring->limit, arg ? 0 : ring->size);
	else
		err = -EINVAL;	/* as perf: nothing mapped, nothing to pause */
	rcu_read_unlock();
	return err;
}

static long pea_event_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	struct pea_event *ev = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case PERF_EVENT_IOC_ENABLE:
		WRITE_ONCE(ev->oncpu, ev->cpu);
		return 0;
	case PERF_EVENT_IOC_DISABLE:
		WRITE_ONCE(ev->oncpu, -1);
		return 0;
	case PERF_EVENT_IOC_RESET:
		atomic64_set(&ev->count_base, local64_read(&ev->records));
		return 0;
	case PERF_EVENT_IOC_ID:
		return put_user(ev->id, (u64 __user *)uarg) ? -EFAULT : 0;
	case PERF_EVENT_IOC_PAUSE_OUTPUT:
		return pea_event_pause(ev, arg);
	case PEA_EVENT_IOC_STATS:
		return pea_event_stats(ev, uarg);
	case PEA_EVENT_IOC_TAKE_LOST:
		return pea_event_take_lost(ev, uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations pea_event_fops = {
	.owner = THIS_MODULE,
	.release = pea_event_release,
	.read = pea_event_read,
	.poll = pea_event_poll,
	.mmap = pea_event_mmap,
	.unlocked_ioctl = pea_event_ioctl,
	.compat_ioctl = pea_perf_compat_ioctl,
};

/**
 * pea_event_fget() - take a reference to the event behind an fd
 * @fd: a file descriptor of the calling process
 *
 * Output and counter event fds both qualify: map slots hold either kind.
 *
 * Return: the event, or ERR_PTR(-EBADF) if @fd is not a pea event.
 */
struct pea_event *pea_event_fget(int fd)
{
	struct pea_event *ev;
	struct file *file = fget(fd);

	if (!file)
		return ERR_PTR(-EBADF);
	if (file->f_op != &pea_event_fops && file->f_op != &pea_counter_fops) {
		fput(file);
		return ERR_PTR(-EBADF);
	}
	ev = file->private_data;
	refcount_inc(&ev->refcnt);
	fput(file);
	return ev;
}

/* Everything an output event does not honour must be zero. */
static int pea_check_output_attr(const struct perf_event_attr *attr)
{
	struct perf_event_attr rest = *attr;

	if (attr->type != PERF_TYPE_SOFTWARE ||
	    attr->config != PERF_COUNT_SW_BPF_OUTPUT)
		return -EINVAL;
	if (!(attr->sample_type & PERF_SAMPLE_RAW) ||
	    (attr->sample_type & ~PEA_SAMPLE_TYPES))
		return -EINVAL;
	if (attr->sample_period > 1 || (attr->read_format & ~PERF_FORMAT_ID))
		return -EINVAL;
	/* The NMI-safe clocks; perf's others (REALTIME...) are not offered. */
	if (attr->use_clockid && attr->clockid != CLOCK_MONOTONIC &&
	    attr->clockid != CLOCK_MONOTONIC_RAW)
		return -EINVAL;

	rest.size = 0;
	rest.type = 0;
	rest.config = 0;
	rest.sample_period = 0;
	rest.sample_type = 0;
	rest.read_format = 0;
	rest.disabled = 0;
	rest.watermark = 0;
	rest.write_backward = 0;
	rest.wakeup_events = 0;
	rest.use_clockid = 0;
	rest.clockid = 0;	/* ignored without use_clockid, as by perf */
	rest.sample_id_all = 0;
	return memchr_inv(&rest, 0, sizeof(rest)) ? -EINVAL : 0;
}

static int pea_copy_attr(struct perf_event_attr *attr,
			 struct perf_event_attr __user *uattr)
{
	u32 size;
	int err;

	if (get_user(size, &uattr->size))
		return -EFAULT;
	if (!size)
		size = PERF_ATTR_SIZE_VER0;
	if (size < PERF_ATTR_SIZE_VER0 || size > PAGE_SIZE)
		goto err_size;
	err = copy_struct_from_user(attr, sizeof(*attr), uattr, size);
	if (err == -E2BIG)
		goto err_size;
	if (err)
		return err;
	attr->size = size;
	return 0;

err_size:
	/* As perf_copy_attr(): tell the caller the size this kernel knows. */
	put_user(sizeof(*attr), &uattr->size);
	return -E2BIG;
}

static struct pea_event *pea_event_alloc(const struct perf_event_attr *attr,
					 int cpu)
{
	struct pea_event *ev;

	ev = kzalloc_node(sizeof(*ev), GFP_KERNEL_ACCOUNT, cpu_to_node(cpu));
	if (!ev)
		return NULL;
	atomic_inc(&pea_objects.events);
	refcount_set(&ev->refcnt, 1);
	ev->kind = PEA_EVENT_OUTPUT;
	ev->cpu = cpu;
	ev->oncpu = attr->disabled ? -1 : cpu;
	ev->id = pea_next_id();
	ev->sample_type = attr->sample_type;
	ev->read_format = attr->read_format;
	ev->watermark = attr->watermark;
	ev->backward = attr->write_backward;
	if (attr->watermark)
		ev->wakeup_watermark = attr->wakeup_watermark;
	else
		ev->wakeup_events = attr->wakeup_events;
	ev->fixed_size = sizeof(struct perf_event_header) +
		8 * hweight64(attr->sample_type &
			      (PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CPU));
	ev->max_payload = PEA_MAX_RECORD - ev->fixed_size - 4;
	ev->lost_size = PEA_LOST_RECORD_SIZE;
	if (attr->sample_id_all)
		ev->lost_size += ev->fixed_size - sizeof(struct perf_event_header);
	if (attr->use_clockid)
		ev->clock = attr->clockid == CLOCK_MONOTONIC_RAW ?
			    PEA_CLOCK_MONO_RAW : PEA_CLOCK_MONO;
	ev->pid_ns = get_pid_ns(task_active_pid_ns(current));
	mutex_init(&ev->mmap_mutex);
	atomic_long_set(&ev->lost_pending, 0);
	local64_set(&ev->records, 0);
	local64_set(&ev->bytes, 0);
	local64_set(&ev->lost, 0);
	local64_set(&ev->wakeups, 0);
	init_waitqueue_head(&ev->waitq);
	init_irq_work(&ev->wakeup_work, pea_event_wakeup_irq);
	pea_event_flush_init(ev);
	INIT_WORK(&ev->free_work, pea_event_free_work);
	return ev;
}

/**
 * pea_event_open() - PEA_IOC_EVENT_OPEN: create an output event fd
 * @uarg: struct pea_event_open in user memory
 *
 * An attr other than PERF_TYPE_SOFTWARE/PERF_COUNT_SW_BPF_OUTPUT makes a
 * counter event instead: see pea_counter_open() for its errors.
 *
 * Return: the new fd, or -EFAULT, -E2BIG (attr.size, or a non-zero tail past
 * the kernel's perf_event_attr: sizeof(struct perf_event_attr) is written
 * back to attr.size, as perf_event_open() does), -EINVAL (attr,
 * flags or cpu), -ENODEV (offline cpu), -ENOMEM, -EMFILE.
 */
long pea_event_open(const struct pea_event_open __user *uarg)
{
	struct perf_event_attr attr;
	struct pea_event_open arg;
	struct pea_event *ev;
	int err, fd;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if ((arg.flags & ~PEA_EVENT_OPEN_FLAGS) || arg.reserved32 ||
	    arg.reserved)
		return -EINVAL;
	/* flush_us goes with PEA_FLAG_FLUSH, and only with it. */
	if ((arg.flags & PEA_FLAG_FLUSH) ?
	    !arg.flush_us || arg.flush_us > PEA_FLUSH_US_MAX : arg.flush_us)
		return -EINVAL;
	err = pea_copy_attr(&attr, u64_to_user_ptr(arg.attr));
	if (err)
		return err;
	/* Anything but a BPF_OUTPUT event is a counter (pea_counter.c). */
	if (attr.type != PERF_TYPE_SOFTWARE ||
	    attr.config != PERF_COUNT_SW_BPF_OUTPUT)
		return pea_counter_open(&attr, &arg);
	err = pea_check_output_attr(&attr);
	if (err)
		return err;
	/* Adaptive wake-ups compare with data_tail, which backward ignores. */
	if ((arg.flags & PEA_FLAG_ADAPTIVE_WAKEUP) && attr.write_backward)
		return -EINVAL;
	/* Ordered: every record carries a time on a clock all CPUs share. */
	if ((arg.flags & PEA_FLAG_ORDERED) &&
	    (!(attr.sample_type & PERF_SAMPLE_TIME) || !attr.use_clockid))
		return -EINVAL;
	if (arg.cpu < 0 || arg.cpu >= nr_cpu_ids)
		return -EINVAL;
	if (!cpu_online(arg.cpu))
		return -ENODEV;

	ev = pea_event_alloc(&attr, arg.cpu);
	if (!ev)
		return -ENOMEM;
	ev->adaptive = !!(arg.flags & PEA_FLAG_ADAPTIVE_WAKEUP);
	ev->ordered = !!(arg.flags & PEA_FLAG_ORDERED);
	if (arg.flags & PEA_FLAG_FLUSH)
		ev->flush_ns = (u64)arg.flush_us * NSEC_PER_USEC;
	fd = anon_inode_getfd("[pea_event]", &pea_event_fops, ev,
			      O_RDWR | ((arg.flags & PEA_FLAG_FD_CLOEXEC) ?
					O_CLOEXEC : 0));
	if (fd < 0)
		pea_event_put(ev);
	return fd;
}
