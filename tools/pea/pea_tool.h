/* SPDX-License-Identifier: GPL-2.0 */
/* pea: the command-line tool's shared declarations. */
#ifndef _PEA_TOOL_H
#define _PEA_TOOL_H

struct pea_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);	/* argv[0] is the command */
	const char *help;
};

int cmd_help(int argc, char **argv);
int cmd_stat_counters(int argc, char **argv);	/* cmd_counters.c */

#endif /* _PEA_TOOL_H */
