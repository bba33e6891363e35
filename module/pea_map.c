// SPDX-License-Identifier: GPL-2.0
/*
 * pea: maps, the analogue of BPF_MAP_TYPE_PERF_EVENT_ARRAY.
 *
 * A map is an array of max_entries slots, key a u32 index, value an event
 * fd. Each slot holds a reference on its event; producers read slots
 * under RCU (preemption disabled), so a cleared slot's reference is
 * dropped only after a grace period.
 *
 * Lifetime as in Linux: closing the last map fd clears the slots unless
 * the map has PEA_F_PRESERVE_ELEMS; kernel producers that found the map by
 * name keep it (and, with PRESERVE_ELEMS, its slots) alive.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/ctype.h>
#include <linux/uaccess.h>
#include <linux/nodemask.h>
#include <linux/seq_file.h>
#include <linux/capability.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/rhashtable.h>
#include "pea_internal.h"
#include "pea_provider.h"

#define PEA_BPF_F_LOCK	4ULL	/* BPF_F_LOCK, refused as BPF refuses it here */

static LIST_HEAD(pea_maps);
static DEFINE_MUTEX(pea_maps_lock);	/* the name registry */
/*
 * Live maps created with PEA_F_BPF_WRITE, by their random BPF handle, for
 * the kfuncs (pea_map_find_rcu()): a lock-free RCU lookup whose cost does
 * not grow with the number of maps (the table grows with them, from a
 * worker), callable in NMI.
 */
static struct rhashtable pea_map_handles;
static const struct rhashtable_params pea_handle_params = {
	.key_len = sizeof(u64),
	.key_offset = offsetof(struct pea_map, bpf_handle),
	.head_offset = offsetof(struct pea_map, handle_node),
	.automatic_shrinking = true,
};

/*
 * Moves each time a map leaves pea_map_handles, before the map is handed
 * to call_rcu(): a map a kfunc cached by handle (pea_kfunc.c) stays the
 * handle's map while this has not moved. Written under pea_maps_lock.
 * Never 0: a cache entry never filled (all zeroes) is never valid.
 */
unsigned long pea_map_handles_gen = 1;

/**
 * pea_map_init() - set up the table of BPF handles
 *
 * Return: 0 or -ENOMEM.
 */
int pea_map_init(void)
{
	return rhashtable_init(&pea_map_handles, &pea_handle_params);
}

/** pea_map_exit() - free the table of BPF handles (no map is left) */
void pea_map_exit(void)
{
	rhashtable_destroy(&pea_map_handles);
}

/* The attach commands and their kinds (pea_attach.c), set at load. */
static const struct pea_attach *pea_attach_table __ro_after_init;
static unsigned int pea_attach_nr __ro_after_init;

static void pea_entry_free_rcu(struct rcu_head *rcu)
{
	struct pea_map_entry *entry = container_of(rcu, struct pea_map_entry,
						   rcu);

	pea_event_put(entry->event);
	kfree(entry);
}

/* Replace slot @key with @entry (may be NULL); return whether one was set. */
static bool pea_map_swap(struct pea_map *map, u32 key,
			 struct pea_map_entry *entry)
{
	struct pea_map_entry *old;

	old = unrcu_pointer(xchg(&map->slots[key], RCU_INITIALIZER(entry)));
	if (old)
		call_rcu(&old->rcu, pea_entry_free_rcu);
	return old;
}

static void pea_map_clear(struct pea_map *map)
{
	u32 i;

	mutex_lock(&map->update_lock);
	for (i = 0; i < map->max_entries; i++)
		pea_map_swap(map, i, NULL);
	mutex_unlock(&map->update_lock);
}

void pea_map_get(struct pea_map *map)
{
	refcount_inc(&map->refcnt);
}

static void pea_map_free_rcu(struct rcu_head *rcu)
{
	struct pea_map *map = container_of(rcu, struct pea_map, rcu);

	free_percpu(map->kf_errors);
	kvfree(map->slots);
	kfree(map);
}

/**
 * pea_map_find_rcu() - the live map with a BPF handle, for the kfuncs
 * @handle: the map's BPF handle (pea_map_info.bpf_handle)
 *
 * The map stays valid until the caller leaves its RCU read-side critical
 * section; it may be on its way out (slots being cleared), which the
 * output path sees as empty slots.
 *
 * notrace: it runs before pea_output()'s nesting guard, so a traced
 * program here calling the kfunc would nest without its bound.
 *
 * Context: any, including NMI; inside rcu_read_lock().
 * Return: the map, or NULL.
 */
notrace struct pea_map *pea_map_find_rcu(u64 handle)
{
	return rhashtable_lookup(&pea_map_handles, &handle, pea_handle_params);
}

/* A random handle, never 0 nor another map's; under pea_maps_lock. */
static int pea_map_add_handle(struct pea_map *map)
{
	int err = 0;

	do {
		map->bpf_handle = get_random_u64();
		if (!map->bpf_handle)
			continue;
		err = rhashtable_lookup_insert_fast(&pea_map_handles,
						    &map->handle_node,
						    pea_handle_params);
	} while (!map->bpf_handle || err == -EEXIST);
	if (err)
		map->bpf_handle = 0;
	return err;
}

/**
 * pea_map_put() - drop a reference to a map
 * @map: the map, from pea_map_get_by_name()
 *
 * Context: process context; may sleep.
 */
void pea_map_put(struct pea_map *map)
{
	if (!refcount_dec_and_mutex_lock(&map->refcnt, &pea_maps_lock))
		return;
	list_del(&map->node);
	if (map->bpf_handle) {
		rhashtable_remove_fast(&pea_map_handles, &map->handle_node,
				       pea_handle_params);
		/*
		 * The removal before the new generation: a kfunc that reads
		 * the new one finds no map by the handle any more (pairs with
		 * pea_kf_map()'s smp_rmb()); one that read the old one before
		 * its lookup caches the map with the old generation, which
		 * no longer validates it. Either way inside a read-side
		 * critical section that call_rcu() below waits for.
		 */
		smp_wmb();
		WRITE_ONCE(pea_map_handles_gen, pea_map_handles_gen + 1);
	}
	mutex_unlock(&pea_maps_lock);
	pea_map_clear(map);
	/* No link is left: none compares with it any more. */
	put_pid(map->exclude_tgid);
	/* A kfunc may still hold the map it found by handle: after RCU. */
	call_rcu(&map->rcu, pea_map_free_rcu);
	atomic_dec(&pea_objects.maps);
}
EXPORT_SYMBOL_GPL(pea_map_put);

/**
 * pea_map_get_by_name() - find a map by the name user space gave it
 * @name: the name
 *
 * Context: process context; may sleep.
 * Return: the map with a reference held (drop it with pea_map_put()), or
 * ERR_PTR(-ENOENT).
 */
struct pea_map *pea_map_get_by_name(const char *name)
{
	struct pea_map *map, *found = ERR_PTR(-ENOENT);

	if (!name || !name[0])
		return found;
	mutex_lock(&pea_maps_lock);
	list_for_each_entry(map, &pea_maps, node) {
		if (!strcmp(map->name, name) &&
		    refcount_inc_not_zero(&map->refcnt)) {
			found = map;
			break;
		}
	}
	mutex_unlock(&pea_maps_lock);
	return found;
}
EXPORT_SYMBOL_GPL(pea_map_get_by_name);

/* ---- map fd ---- */

static int pea_map_release(struct inode *inode, struct file *file)
{
	struct pea_map *map = file->private_data;

	if (atomic_dec_and_test(&map->usercnt) &&
	    !(map->map_flags & PEA_F_PRESERVE_ELEMS))
		pea_map_clear(map);
	pea_map_put(map);
	return 0;
}

static long pea_map_update(struct pea_map *map, struct pea_map_elem *elem)
{
	struct pea_map_entry *entry;
	struct pea_event *ev;

	if (map->map_flags & PEA_F_RDONLY)
		return -EPERM;
	if (elem->flags != PEA_ANY)
		return -EINVAL;	/* fd arrays take BPF_ANY only, checked first */
	if (elem->key >= map->max_entries)
		return -E2BIG;
	ev = pea_event_fget(elem->fd);
	if (IS_ERR(ev))
		return PTR_ERR(ev);
	entry = kmalloc(sizeof(*entry), GFP_KERNEL_ACCOUNT);
	if (!entry) {
		pea_event_put(ev);
		return -ENOMEM;
	}
	entry->event = ev;
	mutex_lock(&map->update_lock);
	pea_map_swap(map, elem->key, entry);
	mutex_unlock(&map->update_lock);
	return 0;
}

static long pea_map_delete(struct pea_map *map, struct pea_map_elem *elem)
{
	bool found;

	/* map_delete_elem() takes no flags: CHECK_ATTR fails first. */
	if (elem->flags)
		return -EINVAL;
	if (map->map_flags & PEA_F_RDONLY)
		return -EPERM;
	if (elem->key >= map->max_entries)
		return -E2BIG;
	mutex_lock(&map->update_lock);
	found = pea_map_swap(map, elem->key, NULL);
	mutex_unlock(&map->update_lock);
	return found ? 0 : -ENOENT;
}

static long pea_map_lookup(struct pea_map *map, struct pea_map_elem *elem)
{
	struct pea_map_entry *entry;
	long err = 0;

	/*
	 * map_lookup_elem()'s order: flags but BPF_F_LOCK, the fd's right to
	 * read, then BPF_F_LOCK (these maps have no lock), then the key.
	 */
	if (elem->flags & ~PEA_BPF_F_LOCK)
		return -EINVAL;
	if (map->map_flags & PEA_F_WRONLY)
		return -EPERM;
	if (elem->flags)
		return -EINVAL;
	if (elem->key >= map->max_entries)
		return -E2BIG;
	rcu_read_lock();
	entry = rcu_dereference(map->slots[elem->key]);
	if (entry) {
		elem->id = entry->event->id;
		elem->cpu = pea_event_cpu(entry->event);
	} else {
		err = -ENOENT;
	}
	rcu_read_unlock();
	return err;
}

static long pea_map_info(struct pea_map *map, struct pea_map_info __user *u,
			 size_t size)
{
	struct pea_map_info info = {
		.key_size = 4,
		.value_size = 4,
		.max_entries = map->max_entries,
		.map_flags = map->map_flags,
		.numa_node = map->numa_node,
		.id = map->id,
		.bpf_handle = map->bpf_handle,
	};
	u32 i;

	memcpy(info.name, map->name, sizeof(info.name));
	rcu_read_lock();
	for (i = 0; i < map->max_entries; i++)
		if (rcu_access_pointer(map->slots[i]))
			info.nr_used++;
	rcu_read_unlock();
	return copy_to_user(u, &info, size) ? -EFAULT : 0;
}

/**
 * pea_map_attach_init() - the table of the attach ioctls
 * @table: each PEA_MAP_IOC_ATTACH_* and its kind of producer
 * @nr: entries in @table
 *
 * Called once, at module load, before /dev/pea exists.
 */
void pea_map_attach_init(const struct pea_attach *table, unsigned int nr)
{
	pea_attach_table = table;
	pea_attach_nr = nr;
}

/* PEA_MAP_IOC_ATTACH_*: the kind's attach, which returns a link fd. */
static long pea_map_attach(struct pea_map *map, unsigned int cmd,
			   const void __user *uarg)
{
	const struct pea_attach *a;

	for (a = pea_attach_table; a < pea_attach_table + pea_attach_nr; a++)
		if (a->cmd == cmd)
			return a->provider ? a->provider->attach(map, uarg) :
					     -EOPNOTSUPP;
	return -ENOTTY;
}

/*
 * PEA_MAP_IOC_EXCLUDE_TGID: @uarg points at a tgid of the caller's pid
 * namespace, 0 for the caller's process. Set once: readers compare the
 * pointer with no lock, so it never changes while links run.
 */
static long pea_map_exclude_tgid(struct pea_map *map, const void __user *uarg)
{
	struct pid *pid;
	s32 nr;

	/* A read-only map's fd changes nothing of it, as delete. */
	if (map->map_flags & PEA_F_RDONLY)
		return -EPERM;
	if (copy_from_user(&nr, uarg, sizeof(nr)))
		return -EFAULT;
	if (nr < 0)
		return -EINVAL;
	if (!nr) {
		pid = get_pid(task_tgid(current));
	} else {
		rcu_read_lock();
		pid = get_pid(find_vpid(nr));
		rcu_read_unlock();
		if (!pid)
			return -ESRCH;
		/* A thread's id names no process: EINVAL, as pidfd_open(). */
		if (!pid_has_task(pid, PIDTYPE_TGID)) {
			bool thread = pid_has_task(pid, PIDTYPE_PID);

			put_pid(pid);
			return thread ? -EINVAL : -ESRCH;
		}
	}
	if (cmpxchg(&map->exclude_tgid, NULL, pid)) {
		put_pid(pid);
		return -EBUSY;
	}
	return 0;
}

static long pea_map_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct pea_map *map = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct pea_map_elem elem;
	long err;

	switch (cmd) {
	case PEA_MAP_IOC_UPDATE:
	case PEA_MAP_IOC_DELETE:
	case PEA_MAP_IOC_LOOKUP:
		if (copy_from_user(&elem, uarg, sizeof(elem)))
			return -EFAULT;
		/* As BPF's CHECK_ATTR() on unused bpf_attr bytes: first. */
		if (elem.pad)
			return -EINVAL;
		break;
	case PEA_MAP_IOC_INFO:
		return pea_map_info(map, uarg, sizeof(struct pea_map_info));
	case PEA_MAP_IOC_INFO_VER0:
		return pea_map_info(map, uarg, PEA_MAP_INFO_SIZE_VER0);
	case PEA_MAP_IOC_EXCLUDE_TGID:
		return pea_map_exclude_tgid(map, uarg);
	default:
		return pea_map_attach(map, cmd, uarg);
	}

	switch (cmd) {
	case PEA_MAP_IOC_UPDATE:
		return pea_map_update(map, &elem);
	case PEA_MAP_IOC_DELETE:
		return pea_map_delete(map, &elem);
	default:
		err = pea_map_lookup(map, &elem);
		if (!err && copy_to_user(uarg, &elem, sizeof(elem)))
			err = -EFAULT;
		return err;
	}
}

static const struct file_operations pea_map_fops = {
	.owner = THIS_MODULE,
	.release = pea_map_release,
	.unlocked_ioctl = pea_map_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/**
 * pea_map_fget() - take a kernel reference to the map behind an fd
 * @fd: a file descriptor of the calling process
 *
 * Return: the map (drop it with pea_map_put()), or ERR_PTR(-EBADF).
 */
struct pea_map *pea_map_fget(int fd)
{
	struct file *file = fget(fd);
	struct pea_map *map;

	if (!file)
		return ERR_PTR(-EBADF);
	if (file->f_op != &pea_map_fops) {
		fput(file);
		return ERR_PTR(-EBADF);
	}
	map = file->private_data;
	pea_map_get(map);
	fput(file);
	return map;
}

/* Names as bpf_obj_name_cpy(): [A-Za-z0-9_.], NUL-terminated. */
static int pea_check_name(const char *name)
{
	const char *end = memchr(name, 0, PEA_OBJ_NAME_LEN);
	const char *c;

	if (!end)
		return -EINVAL;
	for (c = name; c < end; c++)
		if (!isalnum(*c) && *c != '_' && *c != '.')
			return -EINVAL;
	return 0;
}

static int pea_check_map_attr(const struct pea_map_attr *attr, int *node)
{
	if (attr->key_size != 4 || attr->value_size != 4)
		return -EINVAL;
	if (attr->max_entries == 0)
		return -EINVAL;
	if (attr->max_entries > PEA_MAX_ENTRIES)
		return -E2BIG;
	if (attr->map_flags & ~PEA_MAP_FLAGS_MASK)
		return -EINVAL;
	if ((attr->map_flags & PEA_F_RDONLY) &&
	    (attr->map_flags & PEA_F_WRONLY))
		return -EINVAL;
	if (attr->open_flags & ~(O_CLOEXEC | O_NONBLOCK))
		return -EINVAL;
	*node = NUMA_NO_NODE;
	if (attr->map_flags & PEA_F_NUMA_NODE) {
		if (attr->numa_node >= nr_node_ids ||
		    !node_online(attr->numa_node))
			return -EINVAL;
		*node = attr->numa_node;
	}
	return pea_check_name(attr->name);
}

/**
 * pea_map_create() - PEA_IOC_MAP_CREATE: create a map and its fd
 * @uattr: struct pea_map_attr in user memory
 *
 * Return: the new fd, or -EFAULT, -EINVAL (sizes, flags, node, name),
 * -E2BIG (max_entries past PEA_MAX_ENTRIES), -EPERM (a name without
 * CAP_PERFMON or CAP_SYS_ADMIN), -EEXIST (name in use), -ENOMEM, -EMFILE.
 */
long pea_map_create(const struct pea_map_attr __user *uattr)
{
	struct pea_map_attr attr;
	struct pea_map *map, *other;
	size_t slots_size;
	int node, err, fd;

	if (copy_from_user(&attr, uattr, sizeof(attr)))
		return -EFAULT;
	err = pea_check_map_attr(&attr, &node);
	if (err)
		return err;
	/*
	 * Kernel producers hand their data to whichever map holds the name
	 * they look up: holding a name needs the privilege to read kernel
	 * data, so no unprivileged user can squat it.
	 */
	if (attr.name[0] && !perfmon_capable())
		return -EPERM;

	map = kzalloc_node(sizeof(*map), GFP_KERNEL_ACCOUNT, node);
	if (!map)
		return -ENOMEM;
	slots_size = array_size(attr.max_entries, sizeof(*map->slots));
	map->slots = kvzalloc_node(slots_size, GFP_KERNEL_ACCOUNT, node);
	if (!map->slots) {
		kfree(map);
		return -ENOMEM;
	}
	if (attr.map_flags & PEA_F_BPF_WRITE) {
		map->kf_errors = __alloc_percpu_gfp(PEA_KF_NR_ERR * sizeof(u64),
						    __alignof__(u64),
						    GFP_KERNEL_ACCOUNT);
		if (!map->kf_errors) {
			kvfree(map->slots);
			kfree(map);
			return -ENOMEM;
		}
	}
	atomic_inc(&pea_objects.maps);
	refcount_set(&map->refcnt, 1);
	atomic_set(&map->usercnt, 1);
	map->max_entries = attr.max_entries;
	map->map_flags = attr.map_flags;
	map->numa_node = node;
	map->id = pea_next_id();
	memcpy(map->name, attr.name, sizeof(map->name));
	mutex_init(&map->update_lock);

	mutex_lock(&pea_maps_lock);
	if (map->name[0]) {
		list_for_each_entry(other, &pea_maps, node) {
			if (!strcmp(other->name, map->name)) {
				mutex_unlock(&pea_maps_lock);
				free_percpu(map->kf_errors);
				kvfree(map->slots);
				kfree(map);
				atomic_dec(&pea_objects.maps);
				return -EEXIST;
			}
		}
	}
	if (map->map_flags & PEA_F_BPF_WRITE) {
		err = pea_map_add_handle(map);
		if (err) {
			mutex_unlock(&pea_maps_lock);
			free_percpu(map->kf_errors);
			kvfree(map->slots);
			kfree(map);
			atomic_dec(&pea_objects.maps);
			return err;
		}
	}
	list_add_tail(&map->node, &pea_maps);
	mutex_unlock(&pea_maps_lock);

	fd = anon_inode_getfd("[pea_map]", &pea_map_fops, map,
			      O_RDWR | (attr.open_flags &
					(O_CLOEXEC | O_NONBLOCK)));
	if (fd < 0) {
		atomic_dec(&map->usercnt);
		pea_map_put(map);
	}
	return fd;
}

/**
 * pea_maps_show() - the debugfs "maps" file: one line per filled slot
 * @m: the seq_file
 * @v: unused
 *
 * Return: 0.
 */
int pea_maps_show(struct seq_file *m, void *v)
{
	struct pea_map_entry *entry;
	struct pea_map *map;
	bool any;
	u32 i;

	seq_puts(m, "# map_id name max_entries slot cpu event_id data_pages size used records bytes lost lost_pending wakeups\n");
	mutex_lock(&pea_maps_lock);
	list_for_each_entry(map, &pea_maps, node) {
		any = false;
		rcu_read_lock();
		for (i = 0; i < map->max_entries; i++) {
			entry = rcu_dereference(map->slots[i]);
			if (!entry)
				continue;
			any = true;
			seq_printf(m, "%llu %s %u %u %d ", map->id,
				   map->name[0] ? map->name : "-",
				   map->max_entries, i,
				   pea_event_cpu(entry->event));
			pea_event_show(m, entry->event);
		}
		rcu_read_unlock();
		if (!any)
			seq_printf(m, "%llu %s %u - - - - - - - - - - -\n",
				   map->id, map->name[0] ? map->name : "-",
				   map->max_entries);
	}
	mutex_unlock(&pea_maps_lock);
	return 0;
}

/**
 * pea_maps_kf_show() - the handle table's size, and per map the errors
 * of the kfuncs on it
 * @m: the seq_file of the debugfs "kfunc" file
 *
 * "handles N buckets B": the maps with a BPF handle and the table's
 * buckets (it grows past 3/4 full), so a lookup walks a chain of about
 * one map however many there are.
 */
void pea_maps_kf_show(struct seq_file *m)
{
	const struct bucket_table *tbl;
	struct pea_map *map;
	u64 sum;
	int i, cpu;

	rcu_read_lock();
	tbl = rcu_dereference(pea_map_handles.tbl);
	seq_printf(m, "handles %u buckets %u\n",
		   atomic_read(&pea_map_handles.nelems), tbl->size);
	rcu_read_unlock();
	seq_puts(m, "# map_id name bpf_write einval e2big enoent eopnotsupp ebusy enospc efault may_sleep\n");
	mutex_lock(&pea_maps_lock);
	list_for_each_entry(map, &pea_maps, node) {
		seq_printf(m, "%llu %s %d", map->id,
			   map->name[0] ? map->name : "-",
			   !!(map->map_flags & PEA_F_BPF_WRITE));
		for (i = 0; i < PEA_KF_NR_ERR; i++) {
			sum = 0;
			if (map->kf_errors)
				for_each_possible_cpu(cpu)
					sum += *per_cpu_ptr(&map->kf_errors[i],
							    cpu);
			seq_printf(m, " %llu", sum);
		}
		seq_putc(m, '\n');
	}
	mutex_unlock(&pea_maps_lock);
}
