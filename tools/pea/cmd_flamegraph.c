// SPDX-License-Identifier: GPL-2.0
/*
 * pea flamegraph [--title T] [--unit U] [FILE]: folded stacks in (pea's
 * own, pea trace --off-cpu's, or any tool's that writes flamegraph.pl's
 * format), an SVG flame graph out (stacks.h, docs/flamegraphs.md).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "pea_tool.h"
#include "stacks.h"

static const char flamegraph_help[] =
"usage: pea flamegraph [--title TITLE] [--unit UNIT] [FILE] > out.svg\n"
"\n"
"Read folded stacks (one line a stack: 'root;...;leaf WEIGHT', as pea\n"
"profile --folded, pea trace --off-cpu, flamegraph.pl's stackcollapse\n"
"scripts and inferno write them) from FILE or standard input, and write\n"
"an SVG flame graph to standard output: frames as wide as their weight,\n"
"hover for the weight and share, click to zoom, Search to highlight.\n"
"Frames ending in _[k] are kernel frames ('func [module]_[k]': a\n"
"module's), the first frame of a line is the process. Equal stacks are\n"
"summed. See docs/flamegraphs.md.\n"
"\n"
"  --title TITLE   the graph's title (default: Flame graph)\n"
"  --unit UNIT     what a weight counts (default: samples; 'us' for\n"
"                  off-CPU time)\n"
"\n"
"Exit status: 0 when written, 1 if the input does not parse (the line is\n"
"named) or the output fails, 2 on a usage error.\n";

int cmd_flamegraph(int argc, char **argv)
{
	const char *title = NULL, *unit = "samples", *path = NULL;
	struct pea_stack_set *set;
	char err[256];
	FILE *in = stdin;
	int i, ret;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(flamegraph_help, stdout);
			return PEA_EXIT_OK;
		} else if (!strcmp(a, "--title") || !strcmp(a, "--unit")) {
			if (i + 1 >= argc)
				return tool_usage("flamegraph", "%s needs a value", a);
			if (a[2] == 't')
				title = argv[++i];
			else
				unit = argv[++i];
		} else if (!strncmp(a, "--title=", 8)) {
			title = a + 8;
		} else if (!strncmp(a, "--unit=", 7)) {
			unit = a + 7;
		} else if (a[0] == '-' && a[1]) {
			return tool_usage("flamegraph", "unknown option '%s'", a);
		} else if (path) {
			return tool_usage("flamegraph", "one input file at most ('%s' and '%s')",
					  path, a);
		} else {
			path = a;
		}
	}
	if (!*unit)
		return tool_usage("flamegraph", "--unit needs a name");
	if (path && strcmp(path, "-")) {
		in = fopen(path, "r");
		if (!in) {
			tool_err("flamegraph: %s: %s", path, strerror(errno));
			return PEA_EXIT_ERR;
		}
	} else {
		path = "standard input";
	}
	set = pea_stacks_new();
	if (!set) {
		tool_err("flamegraph: out of memory");
		ret = PEA_EXIT_ERR;
		goto out;
	}
	ret = pea_stacks_read_folded(set, in, err, sizeof(err));
	if (ret) {
		tool_err("flamegraph: %s: %s", path, err);
		ret = PEA_EXIT_ERR;
		goto out;
	}
	if (!pea_stacks_count(set))
		tool_err("flamegraph: %s: no stacks (an empty graph is written)",
			 path);
	ret = pea_stacks_write_svg(set, stdout, title, unit);
	if (ret) {
		tool_err("flamegraph: writing the SVG: %s", strerror(-ret));
		ret = PEA_EXIT_ERR;
	}
out:
	pea_stacks_free(set);
	if (in != stdin)
		fclose(in);
	return ret;
}
