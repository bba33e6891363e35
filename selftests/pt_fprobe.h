/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether the running kernel has fprobes (PEA_MAP_IOC_ATTACH_FPROBE
 * answers EOPNOTSUPP without): its kallsyms names register_fprobe_ips
 * (Debian's 6.12 does, its 6.1 does not). test_fprobe, test_caps,
 * test_tool_fprobe.
 */
#ifndef _PT_FPROBE_H
#define _PT_FPROBE_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static inline bool pt_kernel_has_fprobe(void)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 &&
		    !strcmp(sym, "register_fprobe_ips")) {
			found = true;
			break;
		}
	fclose(f);
	return found;
}

#endif /* _PT_FPROBE_H */
