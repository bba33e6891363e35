// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the command-line tool. Each sub-command lives in its own file;
 * this one dispatches.
 */
#include <stdio.h>
#include <string.h>
#include "pea_tool.h"

static const struct pea_cmd cmds[] = {
	{ "trace", cmd_trace, "trace a kernel function or tracepoint through a pea map" },
	{ "list", cmd_list, "list kprobe-able functions and tracepoints" },
	{ "stat", cmd_stat, "show the rings and probes the pea module holds" },
	{ "profile", cmd_profile, "sample on-CPU stacks of a process, a command or every CPU" },
	{ "snapshot", cmd_snapshot, "ask a running pea trace --flight-recorder for a snapshot now" },
	{ "counters", cmd_stat_counters, "count PMU events per CPU (the same as 'pea stat -e')" },
	{ "flamegraph", cmd_flamegraph, "write an SVG flame graph of folded stacks" },
	{ "help", cmd_help, "show this help, or 'pea help COMMAND' for one command" },
};

#define NR_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static const struct pea_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < NR_CMDS; i++)
		if (!strcmp(name, cmds[i].name))
			return &cmds[i];
	return NULL;
}

int cmd_help(int argc, char **argv)
{
	const struct pea_cmd *cmd;
	size_t i;

	if (argc > 1 && strcmp(argv[1], "help")) {
		char help[] = "--help";
		char *sub[] = { argv[1], help, NULL };

		cmd = find_cmd(argv[1]);
		if (!cmd) {
			fprintf(stderr, "pea: no command '%s' (see 'pea --help')\n",
				argv[1]);
			return PEA_EXIT_USAGE;
		}
		return cmd->fn(2, sub);
	}
	printf("usage: pea COMMAND [OPTIONS]\n\n"
	       "pea reads per-CPU perf-protocol rings that the pea kernel module fills\n"
	       "(a BPF_MAP_TYPE_PERF_EVENT_ARRAY without BPF).\n\ncommands:\n");
	for (i = 0; i < NR_CMDS; i++)
		printf("  %-10s %s\n", cmds[i].name, cmds[i].help);
	printf("\nexamples:\n"
	       "  pea trace kprobe:do_sys_openat2 --str ARG1     files being opened\n"
	       "  pea trace kretprobe:vfs_read --pid 1234 -d 5   reads of one process\n"
	       "  pea trace tp:sched:sched_process_exec          programs started\n"
	       "  pea list 'sched:*'                             tracepoints of sched\n"
	       "  pea stat                                       every ring's fill and losses\n"
	       "\n'pea COMMAND --help' describes each command. The pea module must be\n"
	       "loaded (insmod pea.ko); most commands need root.\n"
	       "Exit status: 0 on success, 1 on a runtime error, 2 on a usage error.\n");
	return PEA_EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct pea_cmd *cmd;

	if (argc < 2) {
		cmd_help(1, argv);
		return PEA_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(1, argv);
	cmd = find_cmd(argv[1]);
	if (!cmd) {
		fprintf(stderr, "pea: unknown command '%s' (see 'pea --help')\n",
			argv[1]);
		return PEA_EXIT_USAGE;
	}
	return cmd->fn(argc - 1, argv + 1);
}
