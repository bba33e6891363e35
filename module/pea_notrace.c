// SPDX-License-Identifier: GPL-2.0
/*
 * pea: which functions a kprobe link may probe beyond what kprobes
 * themselves refuse: trace_kprobe's notrace rule.
 *
 * Linux's kprobe events, the tracefs ones and the perf kprobe PMU alike
 * (create_local_trace_kprobe() and tracefs both end in
 * __register_trace_kprobe()), refuse with EINVAL a probe in a function
 * that has no ftrace location, unless the kernel is built with
 * CONFIG_KPROBE_EVENTS_ON_NOTRACE (not on Debian) or without
 * CONFIG_DYNAMIC_FTRACE (within_notrace_func() in
 * kernel/trace/trace_kprobe.c, 6.1 and 6.12 alike). notrace marks code
 * the tracers themselves run, such as ktime_get_mono_fast_ns(), which
 * pea's own handlers call. A symbol with a suffix (foo.cold, foo.isra.0,
 * foo.constprop.0, foo.part.0) is a piece of foo that the compiler split
 * out: it is judged by whether foo has an ftrace location.
 *
 * Neither ftrace_location() nor kallsyms_lookup_size_offset() is exported
 * to modules. The containing function comes from sprint_symbol()
 * ("name+offset/size"), and whether it has an ftrace location from
 * ftrace_set_filter_ip() on a private, never registered ftrace_ops: it
 * resolves the address with ftrace_location() and answers EINVAL when
 * there is none, as __within_notrace_func() decides. A suffixed symbol's
 * base is found by name with ftrace_set_filter() (EINVAL when no ftrace
 * record has that name); trace_kprobe looks the name up in kallsyms and
 * checks its first match, so a base name that several functions share
 * is judged by any of them here.
 */
#include <linux/ftrace.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "pea_compat.h"

#ifdef PEA_REFUSE_NOTRACE
/*
 * Ask ftrace through a private ops: by address (@ip, a function's first
 * byte) or by name (@name). 1 if there is an ftrace location, 0 if not,
 * or a negative errno.
 */
static int pea_ftrace_has(unsigned long ip, char *name)
{
	struct ftrace_ops *ops = kzalloc(sizeof(*ops), GFP_KERNEL);
	int err;

	if (!ops)
		return -ENOMEM;
	if (name)
		err = ftrace_set_filter(ops, (unsigned char *)name,
					strlen(name), 1);
	else
		err = ftrace_set_filter_ip(ops, ip, 0, 1);
	ftrace_free_filter(ops);
	kfree(ops);
	if (err == -EINVAL)
		return 0;
	return err ? err : 1;
}

/**
 * pea_kprobe_notrace() - whether trace_kprobe would refuse @kp's function
 * @kp: a kprobe registered disabled (its addr resolved)
 *
 * Context: process context (may sleep).
 * Return: 0, -EINVAL (a notrace function), or -ENOMEM.
 */
int pea_kprobe_notrace(struct kprobe *kp)
{
	char buf[KSYM_SYMBOL_LEN], *plus, *dot;
	unsigned long off, size;
	int ret;

	/* An ftrace-based kprobe sits on the function's ftrace location. */
	if (kp->flags & KPROBE_FLAG_FTRACE)
		return 0;
	sprint_symbol(buf, (unsigned long)kp->addr);
	plus = strchr(buf, '+');
	/* No symbol: within_notrace_func() does not refuse it either. */
	if (!plus || sscanf(plus, "+%lx/%lx", &off, &size) != 2 || !size)
		return 0;
	ret = pea_ftrace_has((unsigned long)kp->addr - off, NULL);
	if (ret)
		return ret < 0 ? ret : 0;
	*plus = '\0';
	dot = strchr(buf, '.');
	if (!dot)
		return -EINVAL;
	*dot = '\0';
	ret = pea_ftrace_has(0, buf);
	if (ret < 0)
		return ret;
	return ret ? 0 : -EINVAL;
}
#endif
