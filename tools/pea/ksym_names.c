// SPDX-License-Identifier: GPL-2.0
/*
 * pea: how many kernel symbols share a name, as Linux's kprobe events
 * count them before taking a name (number_of_same_symbols() in
 * kernel/trace/trace_kprobe.c, 6.1 and 6.12): every vmlinux symbol of that
 * name and every module's, of any type; with "MODULE:NAME" that module's
 * only. More than one is EADDRNOTAVAIL there: a static function defined in
 * several files has one name and several addresses, and kallsyms gives
 * the first. pea's kprobe link cannot count them (the kernel's functions
 * that do are not exported to modules), so the tool does, from
 * /proc/kallsyms.
 *
 * The file is read once per process and its names sorted (a glob's
 * matches each ask, and the kernel formats the whole file at every read).
 * Lines of what is no module nor vmlinux ("[bpf]" programs, the
 * "[__builtin__...]" trampolines and kprobe pages) are not counted: Linux
 * does not count them either.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ksym_names.h"

#define KALLSYMS	"/proc/kallsyms"

struct kname {
	char *name;
	char *mod;	/* NULL: vmlinux */
};

static struct kname *knames;
static size_t nknames;
static int knames_err = 1;	/* 1: not read yet */

static int kname_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kname *)a)->name,
		      ((const struct kname *)b)->name);
}

static int knames_load(void)
{
	char line[768], name[512], mod[128];
	const char *path = getenv("PEA_KALLSYMS");	/* host tests */
	size_t cap = 0;
	FILE *f = fopen(path ? path : KALLSYMS, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%*s %*s %511s %127s", name, mod);
		struct kname *k;

		if (n < 1)
			continue;
		if (n == 2 && (!strcmp(mod, "[bpf]") ||
			       !strncmp(mod, "[__builtin__", 12)))
			continue;
		if (nknames == cap) {
			size_t c = cap ? 2 * cap : 1 << 16;
			struct kname *v = realloc(knames, c * sizeof(*v));

			if (!v)
				goto nomem;
			knames = v;
			cap = c;
		}
		k = &knames[nknames];
		k->name = strdup(name);
		k->mod = NULL;
		if (n == 2) {
			mod[strcspn(mod, "]")] = '\0';
			k->mod = strdup(mod[0] == '[' ? mod + 1 : mod);
		}
		if (!k->name || (n == 2 && !k->mod)) {
			free(k->name);
			free(k->mod);
			goto nomem;
		}
		nknames++;
	}
	fclose(f);
	qsort(knames, nknames, sizeof(*knames), kname_cmp);
	return 0;
nomem:
	fclose(f);
	return -ENOMEM;
}

int ksym_name_count(const char *name, struct ksym_count *c)
{
	const char *colon = strchr(name, ':');
	struct kname key, *k;
	size_t mlen = colon ? (size_t)(colon - name) : 0;

	memset(c, 0, sizeof(*c));
	if (knames_err == 1)
		knames_err = knames_load();
	if (knames_err)
		return knames_err;
	key.name = (char *)(colon ? colon + 1 : name);
	k = nknames ? bsearch(&key, knames, nknames, sizeof(*knames),
			      kname_cmp) : NULL;
	if (!k)
		return 0;
	while (k > knames && !strcmp(k[-1].name, key.name))
		k--;
	for (; k < knames + nknames && !strcmp(k->name, key.name); k++) {
		if (colon && (!k->mod || strlen(k->mod) != mlen ||
			      strncmp(k->mod, name, mlen)))
			continue;
		c->total++;
		if (!k->mod) {
			c->vmlinux++;
		} else if (!c->mod[0]) {
			snprintf(c->mod, sizeof(c->mod), "%s", k->mod);
			c->mod_n = 1;
		} else if (strcmp(c->mod, k->mod)) {
			c->more_mods = true;
		} else {
			c->mod_n++;
		}
	}
	return 0;
}

int ksym_name_shared(const char *name, char *why, size_t len)
{
	const char *pick = "probe a caller or a callee whose name is unique";
	struct ksym_count c;
	unsigned int m;
	size_t o;

	if (ksym_name_count(name, &c) || c.total < 2)
		return 0;
	m = c.total - c.vmlinux;
	o = snprintf(why, len, "'%s' names %u kernel symbols (/proc/kallsyms:",
		     name, c.total);
	if (c.vmlinux && o < len)
		o += snprintf(why + o, len - o, " %u in vmlinux", c.vmlinux);
	if (m && o < len)
		o += snprintf(why + o, len - o, "%s %u in module%s %s%s",
			      c.vmlinux ? "," : "", m, c.more_mods ? "s" : "",
			      c.mod, c.more_mods ? " and others" : "");
	if (o < len)
		o += snprintf(why + o, len - o,
			      "); Linux's kprobes refuse such a name (EADDRNOTAVAIL) and pea's kprobe link would take the first: ");
	if (o >= len)
		return c.total;
	if (strchr(name, ':') || !m || (!c.more_mods && c.mod_n > 1))
		snprintf(why + o, len - o, "%s", pick);
	else if (!c.more_mods)
		snprintf(why + o, len - o,
			 "name the module's as kprobe:%s:%s; for vmlinux's, %s",
			 c.mod, name, pick);
	else
		snprintf(why + o, len - o,
			 "name a module's as kprobe:MODULE:%s where that module has one; else %s",
			 name, pick);
	return c.total;
}
