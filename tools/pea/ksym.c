// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the kernel's symbols from /proc/kallsyms, to print kernel stacks
 * (--kstack) and count them (--count-by kstack).
 *
 * The file is read once: the text symbols (types t, T, w, W), vmlinux's
 * and every loaded module's, go into one array sorted by address, their
 * names into one pool; an address is looked up by binary search (the
 * last symbol at or below it). Memory is bounded: at most KSYM_MAX
 * symbols and KSYM_POOL_MAX bytes of names (a kernel has about 10^5 text
 * symbols, a few MiB of names). Without the privilege to see addresses
 * (kptr_restrict) kallsyms shows zeroes: the table is then empty and
 * every address prints as hex.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pea_tool.h"

#define KSYM_MAX	(4U << 20)
#define KSYM_POOL_MAX	(256U << 20)
/* An address this far past its symbol is past the end of the text. */
#define KSYM_SPAN_MAX	(16ULL << 20)

struct ksym {
	__u64 addr;
	__u32 name;	/* offset in the pool: "name" or "name [module]" */
	__u32 mod;	/* offset of the module name in the pool, or 0 */
};

struct ksyms {
	struct ksym *syms;
	size_t nr;
	char *pool;
	size_t pool_len;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Append @len bytes and a NUL to the pool; the offset, or 0 on failure. */
static __u32 pool_add(struct ksyms *ks, size_t *cap, const char *s,
		      size_t len)
{
	size_t off = ks->pool_len;

	if (off + len + 1 > KSYM_POOL_MAX)
		return 0;
	if (off + len + 1 > *cap) {
		size_t ncap = *cap ? *cap * 2 : 1 << 20;
		char *p;

		while (ncap < off + len + 1)
			ncap *= 2;
		p = realloc(ks->pool, ncap);
		if (!p)
			return 0;
		ks->pool = p;
		*cap = ncap;
	}
	memcpy(ks->pool + off, s, len);
	ks->pool[off + len] = '\0';
	ks->pool_len = off + len + 1;
	return (__u32)off;
}

static int ksyms_parse(struct ksyms *ks, FILE *f)
{
	size_t cap = 0, pool_cap = 0;
	char line[1024];
	bool any_addr = false;

	/* Offset 0 of the pool means "none". */
	if (!pool_add(ks, &pool_cap, "", 0) && ks->pool_len != 1)
		return -ENOMEM;
	while (fgets(line, sizeof(line), f)) {
		char *name, *mod, *end, type;
		unsigned long long addr;
		struct ksym *s;

		addr = strtoull(line, &end, 16);
		if (end == line || *end != ' ')
			continue;
		type = end[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (end[2] != ' ')
			continue;
		name = end + 3;
		name[strcspn(name, "\n")] = '\0';
		mod = strchr(name, '\t');
		if (mod) {
			*mod++ = '\0';
			if (*mod == '[')
				mod++;
			mod[strcspn(mod, "]")] = '\0';
		}
		if (!*name)
			continue;
		if (addr)
			any_addr = true;
		if (ks->nr == KSYM_MAX)
			break;
		if (ks->nr == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			struct ksym *p = realloc(ks->syms, ncap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			ks->syms = p;
			cap = ncap;
		}
		s = &ks->syms[ks->nr];
		s->addr = addr;
		s->name = pool_add(ks, &pool_cap, name, strlen(name));
		s->mod = mod && *mod ? pool_add(ks, &pool_cap, mod,
						strlen(mod)) : 0;
		if (!s->name)
			return -ENOMEM;
		ks->nr++;
	}
	if (ferror(f))
		return -EIO;
	if (!any_addr)
		ks->nr = 0;	/* kptr_restrict: no addresses to go by */
	qsort(ks->syms, ks->nr, sizeof(*ks->syms), ksym_cmp);
	return 0;
}

struct ksyms *ksyms_load(void)
{
	struct ksyms *ks = calloc(1, sizeof(*ks));
	FILE *f;
	int err;

	if (!ks)
		return NULL;
	f = fopen("/proc/kallsyms", "re");
	if (!f) {
		err = -errno;
		free(ks);
		errno = -err;
		return NULL;
	}
	err = ksyms_parse(ks, f);
	fclose(f);
	if (err) {
		ksyms_free(ks);
		errno = -err;
		return NULL;
	}
	return ks;
}

void ksyms_free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->pool);
	free(ks);
}

/* The last symbol at or below @addr, or NULL. */
static const struct ksym *ksym_find(const struct ksyms *ks, __u64 addr)
{
	size_t lo = 0, hi;

	if (!ks || !ks->nr || addr < ks->syms[0].addr)
		return NULL;
	hi = ks->nr;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (addr - ks->syms[lo].addr >= KSYM_SPAN_MAX)
		return NULL;
	return &ks->syms[lo];
}

const char *ksyms_func(const struct ksyms *ks, __u64 addr, char *buf,
		       size_t len)
{
	const struct ksym *s = ksym_find(ks, addr);

	if (!len)
		return buf;
	if (!s)
		snprintf(buf, len, "[unknown]");
	else if (s->mod)
		snprintf(buf, len, "%s [%s]", ks->pool + s->name,
			 ks->pool + s->mod);
	else
		snprintf(buf, len, "%s", ks->pool + s->name);
	return buf;
}

const char *ksyms_format(const struct ksyms *ks, __u64 addr, char *buf,
			 size_t len)
{
	const struct ksym *s = ksym_find(ks, addr);

	if (!len)
		return buf;
	if (!s)
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	else if (s->mod)
		snprintf(buf, len, "%s+0x%llx [%s]", ks->pool + s->name,
			 (unsigned long long)(addr - s->addr),
			 ks->pool + s->mod);
	else
		snprintf(buf, len, "%s+0x%llx", ks->pool + s->name,
			 (unsigned long long)(addr - s->addr));
	return buf;
}
