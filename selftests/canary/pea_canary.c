// SPDX-License-Identifier: GPL-2.0
/*
 * pea_canary: one deliberate bug per kernel checker, committed on demand,
 * so that `make check-debug` (and `make check-kcsan`) can prove that each
 * checker of the debug kernel (and of its KCSAN variant) reports it and
 * that scripts/splat-scan.sh classifies the report.
 *
 * Load it only on the debug kernel or its KCSAN variant, in a boot of its
 * own:
 *   echo NAME > /sys/kernel/debug/pea_canary/trigger
 *   cat /sys/kernel/debug/pea_canary/bugs    (every NAME, in a safe order)
 *
 * Every bug is contained: out-of-bounds reads stay inside mapped memory,
 * corrupt lists are never linked to anything live, the lock cycle is
 * taken by one thread so it cannot deadlock, and ODEBUG fixes up the
 * re-initialised timer. Some checkers switch themselves (or lockdep) off
 * after their first report, which fixes the order of the list.
 */

#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

/* Indices the compiler cannot see through. */
static int canary_slab_size = 115;	/* kmalloc-128, partial last granule */
static int canary_vmalloc_size = 3001;	/* a partial last granule */
static int canary_stack_index = 16;
static int canary_array_index = 4;
static int canary_shift = 40;

static DEFINE_MUTEX(canary_lock_a);
static DEFINE_MUTEX(canary_lock_b);

struct canary_rcu_obj {
	int value;
};

static struct canary_rcu_obj __rcu *canary_rcu_ptr;
static struct canary_rcu_obj canary_rcu_obj = { .value = 1 };

/* Where the bad reads go, so that the compiler must emit them. */
static char canary_sink;

/* suspicious RCU usage: rcu_dereference() outside a read-side section. */
static void canary_rcu(void)
{
	struct canary_rcu_obj *p;

	p = rcu_dereference(canary_rcu_ptr);
	if (p)
		WRITE_ONCE(canary_sink, p->value);
}

/* A lockdep cycle: A then B, later B then A, in one thread. */
static void canary_lockdep(void)
{
	mutex_lock(&canary_lock_a);
	mutex_lock(&canary_lock_b);
	mutex_unlock(&canary_lock_b);
	mutex_unlock(&canary_lock_a);

	mutex_lock(&canary_lock_b);
	mutex_lock(&canary_lock_a);
	mutex_unlock(&canary_lock_a);
	mutex_unlock(&canary_lock_b);
}

/* might_sleep() with preemption disabled. */
static void canary_sleep(void)
{
	preempt_disable();
	might_sleep();
	preempt_enable();
}

/* UBSAN array-index-out-of-bounds; the element read is still in @s. */
static void canary_ubsan_index(void)
{
	struct {
		int a[4];
		int b;
	} s = { .a = { 1, 2, 3, 4 }, .b = 5 };
	int i = canary_array_index;

	OPTIMIZER_HIDE_VAR(i);
	WRITE_ONCE(canary_sink, s.a[i]);
}

/* UBSAN shift-out-of-bounds. */
static void canary_ubsan_shift(void)
{
	int v = 1, n = canary_shift;

	OPTIMIZER_HIDE_VAR(n);
	v <<= n;
	WRITE_ONCE(canary_sink, v);
}

struct canary_timer {
	struct timer_list timer;
};

static void canary_timer_fn(struct timer_list *t)
{
}

/*
 * ODEBUG: timer_setup() of an armed timer (re-initialising an active
 * object). Freeing it would only be caught with DEBUG_OBJECTS_FREE.
 */
static void canary_odebug(void)
{
	struct canary_timer *c = kzalloc(sizeof(*c), GFP_KERNEL);

	if (!c)
		return;
	timer_setup(&c->timer, canary_timer_fn, 0);
	mod_timer(&c->timer, jiffies + 3600 * HZ);
	/* ODEBUG reports "init active" and deactivates the timer. */
	timer_setup(&c->timer, canary_timer_fn, 0);
	del_timer_sync(&c->timer);
	kfree(c);
}

/* list_add() next to an entry whose prev pointer is corrupt. */
static void canary_list_add(void)
{
	struct list_head head, a, b;

	INIT_LIST_HEAD(&head);
	list_add(&a, &head);
	a.prev = &b;	/* should be &head */
	/* DEBUG_LIST refuses the add and reports it. */
	list_add(&b, &head);
}

/* list_del() of an entry that was already deleted. */
static void canary_list_del(void)
{
	struct list_head head, a;

	INIT_LIST_HEAD(&head);
	list_add(&a, &head);
	list_del(&a);
	/* a.next is LIST_POISON1 now: DEBUG_LIST refuses and reports. */
	list_del(&a);
}

/* refcount_t underflow: a put on a count that is already 0. */
static void canary_refcount(void)
{
	refcount_t r = REFCOUNT_INIT(0);

	if (refcount_dec_and_test(&r))
		WRITE_ONCE(canary_sink, 1);
}

/* KASAN: a read just past a kmalloc()ed object. */
static void canary_kasan_slab(void)
{
	int size = canary_slab_size;
	char *p;

	OPTIMIZER_HIDE_VAR(size);
	p = kmalloc(size, GFP_KERNEL);
	if (!p)
		return;
	WRITE_ONCE(canary_sink, READ_ONCE(p[size]));
	kfree(p);
}

/*
 * KASAN: a read just past a vmalloc()ed area, inside its last granule:
 * vmalloc() marks that granule's shadow as exactly this many bytes
 * accessible on every allocation. (Past the last granule, the rest of the
 * page is poisoned only if no earlier user of the same addresses left its
 * shadow unpoisoned; with networking in the debug kernel a read at offset
 * 3000 of a 3000-byte area stopped being reported.)
 */
static void canary_kasan_vmalloc(void)
{
	int size = canary_vmalloc_size;
	char *p;

	OPTIMIZER_HIDE_VAR(size);
	p = vmalloc(size);
	if (!p)
		return;
	WRITE_ONCE(canary_sink, READ_ONCE(p[size]));
	vfree(p);
}

/* KASAN: a read just past a stack array, through a pointer. */
static noinline void canary_kasan_stack(void)
{
	char buf[16] = { 0 };
	char *p = buf;
	int i = canary_stack_index;

	OPTIMIZER_HIDE_VAR(p);
	OPTIMIZER_HIDE_VAR(i);
	WRITE_ONCE(canary_sink, READ_ONCE(p[i]));
}

/*
 * KCSAN: a lost-update race. Two kthreads, bound to CPUs 0 and 1,
 * increment one counter with plain loads and stores for two seconds;
 * KCSAN watches one of the loads and sees the other CPU's store change
 * the value ("BUG: KCSAN: data-race in canary_race_fn / canary_race_fn").
 */
static unsigned long canary_racy;

struct canary_racer {
	struct completion done;
	unsigned long end;
};

static int canary_race_fn(void *arg)
{
	struct canary_racer *r = arg;
	unsigned int i;

	while (time_before(jiffies, r->end)) {
		for (i = 0; i < 1000; i++)
			canary_racy++;	/* the race: plain, unlocked */
		cond_resched();
	}
	complete(&r->done);
	return 0;
}

static void canary_kcsan_race(void)
{
	struct canary_racer r[2];
	struct task_struct *t;
	int cpu, started = 0;

	for (cpu = 0; cpu < 2; cpu++) {
		init_completion(&r[cpu].done);
		r[cpu].end = jiffies + 2 * HZ;
		t = kthread_create(canary_race_fn, &r[cpu], "pea_canary_race/%d",
				   cpu);
		if (IS_ERR(t))
			break;
		kthread_bind(t, cpu);
		wake_up_process(t);
		started++;
	}
	for (cpu = 0; cpu < started; cpu++)
		wait_for_completion(&r[cpu].done);
}

struct canary_bug {
	const char *name;
	void (*fn)(void);
	bool present;	/* the kernel has its checker */
};

/*
 * The order a single boot can run them in: lockdep and RCU checks need
 * lockdep alive, and a lockdep report or a KASAN report turns it off.
 * Only the bugs whose checker the kernel has are listed and committed:
 * KASAN's on the debug kernel, KCSAN's on its KCSAN variant.
 */
static const struct canary_bug canary_bugs[] = {
	{ "rcu", canary_rcu, true },
	{ "lockdep", canary_lockdep, true },
	{ "sleep", canary_sleep, true },
	{ "ubsan-index", canary_ubsan_index, true },
	{ "ubsan-shift", canary_ubsan_shift, true },
	{ "odebug", canary_odebug, true },
	{ "list-add", canary_list_add, true },
	{ "list-del", canary_list_del, true },
	{ "refcount", canary_refcount, true },
	{ "kasan-slab", canary_kasan_slab, IS_ENABLED(CONFIG_KASAN) },
	{ "kasan-vmalloc", canary_kasan_vmalloc, IS_ENABLED(CONFIG_KASAN) },
	{ "kasan-stack", canary_kasan_stack, IS_ENABLED(CONFIG_KASAN) },
	{ "kcsan-race", canary_kcsan_race, IS_ENABLED(CONFIG_KCSAN) },
};

static ssize_t canary_trigger_write(struct file *file, const char __user *ubuf,
				    size_t count, loff_t *ppos)
{
	char name[32];
	size_t i;

	if (count == 0 || count >= sizeof(name))
		return -EINVAL;
	if (copy_from_user(name, ubuf, count))
		return -EFAULT;
	name[count] = '\0';
	strim(name);

	for (i = 0; i < ARRAY_SIZE(canary_bugs); i++) {
		if (canary_bugs[i].present &&
		    strcmp(name, canary_bugs[i].name) == 0) {
			pr_info("pea_canary: committing %s\n", name);
			canary_bugs[i].fn();
			return count;
		}
	}
	return -ENOENT;
}

static ssize_t canary_bugs_read(struct file *file, char __user *ubuf,
				size_t count, loff_t *ppos)
{
	char buf[256];
	size_t len = 0, i;

	for (i = 0; i < ARRAY_SIZE(canary_bugs); i++)
		if (canary_bugs[i].present)
			len += scnprintf(buf + len, sizeof(buf) - len, "%s\n",
					 canary_bugs[i].name);
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static const struct file_operations canary_trigger_fops = {
	.owner = THIS_MODULE,
	.write = canary_trigger_write,
	.llseek = noop_llseek,
};

static const struct file_operations canary_bugs_fops = {
	.owner = THIS_MODULE,
	.read = canary_bugs_read,
	.llseek = default_llseek,
};

static struct dentry *canary_dir;

static int __init canary_init(void)
{
	RCU_INIT_POINTER(canary_rcu_ptr, &canary_rcu_obj);
	canary_dir = debugfs_create_dir("pea_canary", NULL);
	debugfs_create_file("trigger", 0200, canary_dir, NULL,
			    &canary_trigger_fops);
	debugfs_create_file("bugs", 0400, canary_dir, NULL, &canary_bugs_fops);
	return 0;
}

static void __exit canary_exit(void)
{
	debugfs_remove(canary_dir);
}

module_init(canary_init);
module_exit(canary_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("pea: deliberate bugs that prove the debug kernel's checkers fire");
