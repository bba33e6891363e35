// SPDX-License-Identifier: GPL-2.0
/*
 * pea list: what pea trace can attach to. Kprobe-able functions come from
 * tracefs available_filter_functions (functions ftrace can trace, which
 * is what kprobes accept at entry; lines "NAME [MODULE]"), tracepoints
 * from the events directory (SUBSYS/NAME/format). --check parses every
 * format file as pea trace would. -v shows each function's parameters
 * (their argument registers and types) and return type from BTF
 * (ktypes.c), or why there are none. A PATTERN uprobe:PATH:GLOB lists the
 * functions of PATH's symbol tables instead, -v with their parameters
 * from its DWARF (udwarf.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pea_tool.h"
#include "ktypes.h"
#include "probe_glob.h"
#include "tpformat.h"
#include "udwarf.h"
#include "upath.h"

static const char list_help[] =
"usage: pea list [OPTIONS] [PATTERN]\n"
"\n"
"List what 'pea trace' attaches to, one per line: kprobe:FUNCTION for\n"
"every function kprobes can probe (tracefs available_filter_functions) and\n"
"tracepoint:SUBSYS:NAME for every trace event (tracefs events/). PATTERN is\n"
"a shell glob on the whole line or on the name alone ('sched:*',\n"
"'tracepoint:syscalls:sys_enter_open*', 'vfs_*'). A PATTERN\n"
"uprobe:PATH:GLOB lists the functions of PATH's symbol tables instead.\n"
"\n"
"Options:\n"
"  -k, --kprobes       only functions\n"
"  -t, --tracepoints   only tracepoints\n"
"  -v, --verbose       each function's parameters (argument register, type,\n"
"                      name) and return type from the kernel's BTF\n"
"                      (/sys/kernel/btf), a uprobe's from PATH's DWARF, or\n"
"                      why it has none; each tracepoint's fields as its\n"
"                      format declares them, with the names its print fmt\n"
"                      gives their values\n"
"      --check         parse the format of every listed tracepoint and print\n"
"                      \"N formats parsed, M failed\" on stderr (and each\n"
"                      failure); exit status 1 if any failed\n"
"  -h, --help          this help\n"
"\n"
"Needs tracefs mounted (/sys/kernel/tracing), readable by root.\n";

enum { OPT_CHECK = 0x100 };

static const struct option list_options[] = {
	{ "kprobes", no_argument, NULL, 'k' },
	{ "tracepoints", no_argument, NULL, 't' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static bool match(const char *pat, const char *full, const char *bare)
{
	return !pat || !fnmatch(pat, full, 0) || !fnmatch(pat, bare, 0);
}

/*
 * -v: a function's signature, one line per parameter, then ret; a user
 * function's (@user) says why a parameter is in no register.
 */
static void put_sig(struct ksig *s, bool user)
{
	char reg[16];
	unsigned int i;

	for (i = 0; i < s->nparams; i++) {
		const struct ksig_param *p = &s->params[i];
		const char *why = user ? usig_param_why(s, i, true) : NULL;
		size_t n = strlen(p->type.name);

		if (p->reg >= 0)
			snprintf(reg, sizeof(reg), "arg%d", p->reg);
		else if (p->stack_off > 0)
			snprintf(reg, sizeof(reg), "sp+%d", p->stack_off);
		else
			snprintf(reg, sizeof(reg), "-");
		printf("    %-5s %s%s%s%s%s%s\n", reg, p->type.name,
		       n && p->type.name[n - 1] == '*' ? "" : " ", p->name,
		       why ? "  (" : "", why ? why : "", why ? ")" : "");
	}
	if (s->variadic)
		printf("    %-5s ...\n", "-");
	printf("    %-5s %s\n", "ret", s->ret.name);
	ksig_free(s);
}

static void print_sig(const char *func)
{
	struct ksig *s = NULL;
	char why[512];

	if (ksig_load(func, &s, why, sizeof(why))) {
		printf("    %s\n", why);
		return;
	}
	put_sig(s, false);
}

/*
 * uprobe:PATH:ns::func: the C++ function of that qualified name, by its
 * symbol from PATH's DWARF, -v with its signature.
 */
static int list_qualified(const char *pat, const char *p, bool verbose)
{
	const char *colon = upath_sym_colon(p);
	char name[4096], file[4096], msg[1024], sym[PEA_SYM_LEN];
	struct ksig *s = NULL;

	if (!colon || colon == p)
		return tool_usage("list", "'%s': write uprobe:PATH:GLOB", pat);
	snprintf(name, sizeof(name), "%.*s", (int)(colon - p), p);
	if (upath_resolve(name, file, sizeof(file))) {
		tool_err("%s: no such executable or library", pat);
		return PEA_EXIT_ERR;
	}
	if (usig_linkage_name(file, colon + 1, sym, sizeof(sym), msg,
			      sizeof(msg))) {
		tool_err("%s: %s", pat, msg);
		return PEA_EXIT_ERR;
	}
	printf("%s  (%s)\n", pat, sym);
	if (!verbose)
		return 0;
	if (usig_load(file, sym, &s, msg, sizeof(msg)))
		printf("    %s\n", msg);
	else
		put_sig(s, true);
	return 0;
}

/* uprobe:PATH:GLOB: the functions of PATH, -v with their DWARF. */
static int list_uprobes(const char *pat, bool verbose)
{
	struct probe_glob_info info;
	char msg[512], name[4096], file[4096], **v;
	const char *p = strchr(pat, ':') + 1, *sym = strrchr(pat, ':');
	size_t n, i;
	int rc = 0;

	if (strstr(p, "::") && !strpbrk(p, "*?["))
		return list_qualified(pat, p, verbose);
	if (sym <= p || !sym[1])
		return tool_usage("list", "'%s': write uprobe:PATH:GLOB", pat);
	snprintf(name, sizeof(name), "%.*s", (int)(sym - p), p);
	msg[0] = 0;
	if (upath_resolve(name, file, sizeof(file)) ||
	    probe_glob_expand(pat, &v, &n, &info, msg, sizeof(msg))) {
		tool_err("%s: %s", pat, msg[0] ? msg :
			 "no such executable or library");
		return PEA_EXIT_ERR;
	}
	if (!n) {
		tool_err("%s: no function of that name in its symbol tables",
			 pat);
		rc = PEA_EXIT_ERR;
	}
	for (i = 0; i < n; i++) {
		struct ksig *s = NULL;

		printf("%s\n", v[i]);
		if (!verbose)
			continue;
		if (usig_load(file, strrchr(v[i], ':') + 1, &s, msg,
			      sizeof(msg)))
			printf("    %s\n", msg);
		else
			put_sig(s, true);
	}
	probe_glob_free(v, n);
	return rc;
}

static int list_kprobes(const char *dir, const char *pat, bool verbose)
{
	char path[512], line[512], full[600];
	FILE *f;

	/* dir is .../events: the file sits one level up. */
	snprintf(path, sizeof(path), "%s/../available_filter_functions", dir);
	f = fopen(path, "r");
	if (!f) {
		tool_err("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, " \t\n")] = 0;
		if (!*line)
			continue;
		snprintf(full, sizeof(full), "kprobe:%s", line);
		if (!match(pat, full, line))
			continue;
		printf("%s\n", full);
		if (verbose)
			print_sig(line);
	}
	fclose(f);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted "SUBSYS:NAME" of every event with a format file. */
static char **read_events(const char *dir, size_t *n)
{
	char **v = NULL, path[1024];
	size_t cap = 0;
	struct dirent *s, *e;
	DIR *d = opendir(dir), *sd;

	*n = 0;
	if (!d)
		return NULL;
	while ((s = readdir(d))) {
		if (s->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, s->d_name);
		sd = opendir(path);
		if (!sd)
			continue;
		while ((e = readdir(sd))) {
			char fpath[1300];
			FILE *f;

			if (e->d_name[0] == '.')
				continue;
			snprintf(fpath, sizeof(fpath), "%s/%s/format", path,
				 e->d_name);
			f = fopen(fpath, "r");
			if (!f)
				continue;
			fclose(f);
			if (*n == cap) {
				char **nv;

				cap = cap ? 2 * cap : 1024;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv)
					break;
				v = nv;
			}
			if (asprintf(&v[*n], "%s:%s", s->d_name, e->d_name) > 0)
				(*n)++;
		}
		closedir(sd);
	}
	closedir(d);
	if (v)
		qsort(v, *n, sizeof(*v), name_cmp);
	return v;
}

/*
 * -v: a tracepoint's own fields (not the common_ ones), declared as its
 * tracefs format declares them, and the names its print fmt gives their
 * values (__print_flags, __print_symbolic), as pea trace prints them.
 */
static void list_tp_fields(const struct tp_format *fmt)
{
	int i;
	unsigned int k;

	for (i = 0; i < fmt->nfields; i++) {
		const struct tp_field *f = &fmt->fields[i];

		if (!strncmp(f->name, "common_", 7))
			continue;
		if ((f->kind == TPF_STR || f->kind == TPF_ARRAY) &&
		    f->elem_size)
			printf("    %s %s[%u]", f->type, f->name,
			       f->size / f->elem_size);
		else
			printf("    %s %s", f->type, f->name);
		if (f->sym != TP_SYM_NONE && f->sym_n) {
			printf("  (%s:", f->sym == TP_SYM_FLAGS ? "flags" :
			       "values");
			if (f->sym_zero[0])
				printf(" %s=0x0", f->sym_zero);
			for (k = 0; k < f->sym_n; k++) {
				const struct tp_sym *y =
					&fmt->syms[f->sym_first + k];

				printf(" %s=0x%llx", fmt->sym_text + y->name,
				       (unsigned long long)y->val);
			}
			putchar(')');
		}
		putchar('\n');
	}
}

static int list_tracepoints(const char *dir, const char *pat, bool check,
			    bool verbose)
{
	static struct tp_format fmt;
	size_t n, i, parsed = 0, failed = 0;
	char **ev = read_events(dir, &n);
	char full[600];

	for (i = 0; i < n; i++) {
		snprintf(full, sizeof(full), "tracepoint:%s", ev[i]);
		if (!match(pat, full, ev[i])) {
			free(ev[i]);
			continue;
		}
		printf("%s\n", full);
		if (check || verbose) {
			char *colon = strchr(ev[i], ':');
			const char *why = "";

			*colon = 0;
			if (tp_format_load(ev[i], colon + 1, &fmt, &why)) {
				failed += check;
				if (check)
					tool_err("%s:%s: %s", ev[i], colon + 1,
						 why);
				if (verbose)
					printf("    no format: %s\n", why);
			} else {
				parsed++;
				if (verbose)
					list_tp_fields(&fmt);
			}
		}
		free(ev[i]);
	}
	free(ev);
	if (check)
		fprintf(stderr, "pea: %zu formats parsed, %zu failed\n", parsed,
			failed);
	return failed ? -1 : 0;
}

int cmd_list(int argc, char **argv)
{
	bool kp = true, tp = true, check = false, verbose = false;
	const char *dir, *pat = NULL;
	int c, rc = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ktvh", list_options, NULL)) != -1) {
		switch (c) {
		case 'k':
			tp = false;
			break;
		case 't':
			kp = false;
			break;
		case 'v':
			verbose = true;
			break;
		case OPT_CHECK:
			check = true;
			break;
		case 'h':
			fputs(list_help, stdout);
			return PEA_EXIT_OK;
		default:
			return tool_usage("list", "unknown option '%s'",
					  argv[optind - 1]);
		}
	}
	if (!kp && !tp)
		return tool_usage("list", "--kprobes or --tracepoints, not both");
	if (optind < argc)
		pat = argv[optind++];
	if (optind < argc)
		return tool_usage("list", "one PATTERN at most ('%s' is extra)",
				  argv[optind]);
	if (pat && (!strncmp(pat, "uprobe:", 7) ||
		    !strncmp(pat, "uretprobe:", 10))) {
		rc = list_uprobes(pat, verbose);
		if (fflush(stdout))
			rc = PEA_EXIT_ERR;
		return rc;
	}
	dir = tp_events_dir();
	if (!dir) {
		tool_err("tracefs is not mounted (mount -t tracefs tracefs /sys/kernel/tracing) or not readable (run as root)");
		return PEA_EXIT_ERR;
	}
	if (kp && list_kprobes(dir, pat, verbose))
		rc = PEA_EXIT_ERR;
	if (tp && list_tracepoints(dir, pat, check, verbose))
		rc = PEA_EXIT_ERR;
	if (fflush(stdout))
		rc = PEA_EXIT_ERR;
	return rc;
}
