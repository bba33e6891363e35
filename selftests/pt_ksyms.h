/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel text symbols from /proc/kallsyms for the selftests: the name of
 * the function an address is in.
 */
#ifndef PT_KSYMS_H
#define PT_KSYMS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pt_ksym {
	unsigned long long addr;
	char name[128];
};

static struct pt_ksym *pt_ksyms;
static size_t pt_nr_ksyms;

static int pt_ksym_cmp(const void *a, const void *b)
{
	const struct pt_ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Read the text symbols (t, T) of /proc/kallsyms, sorted. */
static inline void pt_ksyms_read(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], type, name[128];
	unsigned long long addr;
	size_t cap = 0;

	if (!f)
		pt_fatal("/proc/kallsyms");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %127s", &addr, &type, name) != 3)
			continue;
		if (type != 't' && type != 'T')
			continue;
		if (pt_nr_ksyms == cap) {
			cap = cap ? cap * 2 : 65536;
			pt_ksyms = realloc(pt_ksyms, cap * sizeof(*pt_ksyms));
			if (!pt_ksyms)
				pt_fatal("realloc");
		}
		pt_ksyms[pt_nr_ksyms].addr = addr;
		strcpy(pt_ksyms[pt_nr_ksyms].name, name);
		pt_nr_ksyms++;
	}
	fclose(f);
	qsort(pt_ksyms, pt_nr_ksyms, sizeof(*pt_ksyms), pt_ksym_cmp);
}

/* The text symbol at or below @addr, or "?". */
static inline const char *pt_ksym_name(unsigned long long addr)
{
	size_t lo = 0, hi = pt_nr_ksyms;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (pt_ksyms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (!pt_nr_ksyms || pt_ksyms[lo].addr > addr)
		return "?";
	return pt_ksyms[lo].name;
}

#endif /* PT_KSYMS_H */
