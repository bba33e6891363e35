// SPDX-License-Identifier: GPL-2.0
/*
 * pea: the command-line tool. Each sub-command lives in its own file;
 * this one dispatches.
 */
#include <stdio.h>
#include <string.h>
#include "pea_tool.h"

static const struct pea_cmd cmds[] = {
	{ "help", cmd_help, "show this help" },
	{ "counters", cmd_stat_counters, "count events per CPU (pea stat -e)" },
};

int cmd_help(int argc, char **argv)
{
	size_t i;

	(void)argc;
	(void)argv;
	printf("usage: pea COMMAND [OPTIONS]\n\ncommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		printf("  %-8s %s\n", cmds[i].name, cmds[i].help);
	printf("\n'pea COMMAND --help' describes each command.\n");
	return 0;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(argc, argv) ? 1 : (argc < 2 ? 2 : 0);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "pea: unknown command '%s' (see 'pea --help')\n",
		argv[1]);
	return 2;
}
