// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace: the table of probe kinds (probe_kind.h), and the PROBE
 * argument parsed by the kind its prefix names.
 */
#include <errno.h>
#include <string.h>
#include "probe_kind.h"

static const struct probe_kind *const probe_kinds[] = {
	&kprobe_kind,
	&tracepoint_kind,
	&uprobe_kind,
	&netfilter_kind,
};

#define NR_KINDS	(sizeof(probe_kinds) / sizeof(probe_kinds[0]))

const struct probe_kind *probe_kind_find(const char *text)
{
	const char *const *pfx;
	size_t i;

	for (i = 0; i < NR_KINDS; i++)
		for (pfx = probe_kinds[i]->prefixes; *pfx; pfx++)
			if (!strncmp(text, *pfx, strlen(*pfx)))
				return probe_kinds[i];
	return NULL;
}

bool probe_kind_record(const struct probe_kind *k, __u16 flags)
{
	size_t i;

	for (i = 0; i < NR_KINDS; i++) {
		__u16 f = probe_kinds[i]->rec_flag;
		bool mine = probe_kinds[i] == k;

		if (f && !(flags & f) == mine)
			return false;
	}
	return true;
}

int probe_parse(const char *text, struct probe_spec *spec)
{
	const struct probe_kind *k = probe_kind_find(text);

	memset(spec, 0, sizeof(*spec));
	spec->text = text;
	if (!k) {
		tool_usage("trace", "'%s' is not a probe: write kprobe:SYMBOL[+OFFSET], kretprobe:SYMBOL, uprobe:PATH:SYMBOL, tracepoint:SUBSYS:NAME, syscall:NAME or sysenter:NAME",
			   text);
		return -EINVAL;
	}
	spec->kind = k;
	return k->parse(text, spec);
}
