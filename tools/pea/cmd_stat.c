// SPDX-License-Identifier: GPL-2.0
/*
 * pea stat: the rings of every map the module holds and the attached
 * probes, from the module's debugfs files. Columns are found by the names
 * in each file's "#" header line, so the files may grow columns.
 *
 * `pea stat -e EVENT` (PMU counters) is another command sharing the name:
 * any -e/--event hands the command line to cmd_stat_counters().
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include "pea_tool.h"

#define DEBUGFS_MAGIC	0x64626720
#define MAX_COLS	32
/* The kfunc file's counters per map: errnos, then may_sleep. */
#define KF_NCOLS	8

static const char stat_help[] =
"usage: pea stat [OPTIONS]\n"
"       pea stat -e EVENT ...   (PMU counters, see 'pea stat -e EVENT --help')\n"
"\n"
"Show the rings of every map the pea module holds, one line per filled\n"
"slot, and the attached probes, from " PEA_DEBUGFS_MAPS "\n"
"and " PEA_DEBUGFS_LINKS ".\n"
"\n"
"Options:\n"
"  -m, --map NAME|ID   only this map (and its probes)\n"
"  -j, --json          one JSON object per line: {\"type\":\"ring\",...} per\n"
"                      filled slot, {\"type\":\"map\",...,\"rings\":0} for a map\n"
"                      with none, {\"type\":\"link\",...} per probe; the fields\n"
"                      are the debugfs columns (null where it has \"-\")\n"
"  -e, --event EVENT   count PMU events instead (a separate command)\n"
"  -h, --help          this help\n"
"\n"
"Ring columns: MAP id and NAME, SLOT (the map key), CPU (of the event),\n"
"RING size (\"-\" while not mmapped), USED bytes written and not yet read\n"
"and FILL (USED of RING), then since the event was opened: RECORDS written,\n"
"BYTES written (headers included), LOST (dropped: ring full, paused, not\n"
"mapped), PENDING (dropped, not yet reported to the reader) and WAKEUPS.\n"
"Then whether BPF programs may call pea's kfunc (kfuncs: on, or off and\n"
"why; docs/kfuncs.md), how many calls named no live map, and per map open\n"
"to BPF writers (PEA_F_BPF_WRITE) the errors of their calls by errno, and\n"
"MAY_SLEEP: zero-copy reserves refused where the context may sleep.\n"
"Probe columns: LINK id, MAP id, PROBE, HITS, WRITTEN, FILTERED (by\n"
"--pid/--cpu), ERRORS (output failed, other than for room), MISSED (by the\n"
"kprobe layer itself) and DROPPED (the ring had no room: full, paused or\n"
"not mapped; the ring's LOST counts them too).\n"
"\n"
"Needs root and debugfs mounted on " PEA_DEBUGFS_DIR "\n"
"(mount -t debugfs none " PEA_DEBUGFS_DIR ").\n"
"Exit status: 0 on success, 1 on a runtime error, 2 on a usage error.\n";

static const struct option stat_options[] = {
	{ "map", required_argument, NULL, 'm' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* One debugfs table: column names from the header, one row at a time. */
struct table {
	FILE *f;
	const char *path;
	char *names[MAX_COLS];
	int ncols;
	char *hdr;		/* backing store of @names */
	char *line;		/* backing store of the current row */
	size_t line_cap;
	char *cells[MAX_COLS];
	int ncells;
};

struct stat_opts {
	const char *map;	/* NAME or ID, or NULL */
	bool json;
};

/* Stand-in until cmd_counters.c, whose definition takes precedence. */
__attribute__((weak)) int cmd_stat_counters(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tool_err("stat -e: PMU counters are not built into this pea");
	return PEA_EXIT_ERR;
}

/* Whether argv asks for PMU counters (-e, -eX, --event, --event=X). */
static bool wants_counters(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strncmp(argv[i], "-e", 2) || !strcmp(argv[i], "--event") ||
		    !strncmp(argv[i], "--event=", 8))
			return true;
	}
	return false;
}

static bool debugfs_mounted(void)
{
	struct statfs sfs;

	return !statfs(PEA_DEBUGFS_DIR, &sfs) &&
	       (unsigned long)sfs.f_type == DEBUGFS_MAGIC;
}

/* Say why @path cannot be opened (errno @err) and what to do. */
static void explain_open_error(const char *path, int err)
{
	struct stat st;

	if (err == EACCES || err == EPERM) {
		tool_err("%s: permission denied (debugfs is readable by root only: run as root)",
			 path);
	} else if (err == ENOENT && !debugfs_mounted()) {
		tool_err("%s: debugfs is not mounted; mount it first: mount -t debugfs none %s",
			 path, PEA_DEBUGFS_DIR);
	} else if (err == ENOENT && stat("/sys/module/pea", &st)) {
		tool_err("%s: the pea module is not loaded (insmod pea.ko)",
			 path);
	} else if (err == ENOENT) {
		tool_err("%s: missing although pea is loaded: the module is older than this tool",
			 path);
	} else {
		tool_err("%s: %s", path, strerror(err));
	}
}

static int table_open(struct table *t, const char *path)
{
	char *tok, *save = NULL;
	ssize_t len;

	memset(t, 0, sizeof(*t));
	t->path = path;
	t->f = fopen(path, "re");
	if (!t->f)
		return -errno;
	len = getline(&t->hdr, &t->line_cap, t->f);
	t->line_cap = 0;
	if (len <= 0 || t->hdr[0] != '#') {
		tool_err("%s: no '#' header line: the module is newer or older than this tool",
			 path);
		return -EPROTO;
	}
	for (tok = strtok_r(t->hdr + 1, " \t\n", &save);
	     tok && t->ncols < MAX_COLS; tok = strtok_r(NULL, " \t\n", &save))
		t->names[t->ncols++] = tok;
	return 0;
}

/* Read the next row into t->cells; false at the end. */
static bool table_next(struct table *t)
{
	char *tok, *save = NULL;

	while (getline(&t->line, &t->line_cap, t->f) > 0) {
		if (t->line[0] == '#' || t->line[0] == '\n')
			continue;
		t->ncells = 0;
		for (tok = strtok_r(t->line, " \t\n", &save);
		     tok && t->ncells < MAX_COLS;
		     tok = strtok_r(NULL, " \t\n", &save))
			t->cells[t->ncells++] = tok;
		if (t->ncells)
			return true;
	}
	return false;
}

/* The current row's cell of column @name, "-" if there is none. */
static const char *cell(const struct table *t, const char *name)
{
	int i;

	for (i = 0; i < t->ncols && i < t->ncells; i++)
		if (!strcmp(t->names[i], name))
			return t->cells[i];
	return "-";
}

static bool cell_num(const struct table *t, const char *name,
		     unsigned long long *v)
{
	return !tool_parse_u64(cell(t, name), v);
}

static void table_close(struct table *t)
{
	if (t->f)
		fclose(t->f);
	free(t->hdr);
	free(t->line);
}

static bool map_selected(const struct stat_opts *o, const char *id,
			 const char *name)
{
	return !o->map || !strcmp(o->map, id) || !strcmp(o->map, name);
}

/* A JSON value from a debugfs cell: the number, a string, or null. */
static void json_cell(FILE *f, const struct table *t, const char *name,
		      bool string)
{
	const char *v = cell(t, name);
	unsigned long long n;

	if (!strcmp(v, "-"))
		fputs("null", f);
	else if (string)
		json_put_str(f, v, strlen(v));
	else if (!tool_parse_u64(v, &n))
		fprintf(f, "%llu", n);
	else
		json_put_str(f, v, strlen(v));
}

static void json_row(FILE *f, const struct table *t, const char *type,
		     const char *const *strings)
{
	const char *const *s;
	int i;

	fprintf(f, "{\"type\":\"%s\"", type);
	for (i = 0; i < t->ncols; i++) {
		bool string = false;

		for (s = strings; *s; s++)
			string |= !strcmp(*s, t->names[i]);
		fprintf(f, ",\"%s\":", t->names[i]);
		json_cell(f, t, t->names[i], string);
	}
}

/* 262144 -> "256K"; exact multiples only, else bytes. */
static void human_size(char *buf, size_t len, unsigned long long v)
{
	if (v && !(v % (1ULL << 20)))
		snprintf(buf, len, "%lluM", v >> 20);
	else if (v && !(v % 1024))
		snprintf(buf, len, "%lluK", v >> 10);
	else
		snprintf(buf, len, "%llu", v);
}

static void print_ring_human(const struct table *t)
{
	unsigned long long size = 0, used = 0;
	char ring[32] = "-", fill[16] = "-";
	const char *name = cell(t, "name");

	if (cell_num(t, "size", &size) && size) {
		human_size(ring, sizeof(ring), size);
		if (cell_num(t, "used", &used))
			snprintf(fill, sizeof(fill), "%.1f%%",
				 100.0 * used / size);
	}
	printf("%5s %-15s %5s %4s %7s %10s %6s %12s %14s %10s %8s %8s\n",
	       cell(t, "map_id"), name, cell(t, "slot"), cell(t, "cpu"),
	       ring, size ? cell(t, "used") : "-", fill, cell(t, "records"),
	       cell(t, "bytes"), cell(t, "lost"), cell(t, "lost_pending"),
	       cell(t, "wakeups"));
}

static int show_maps(const struct stat_opts *o, bool *found)
{
	static const char *const strings[] = { "name", NULL };
	struct table t;
	int err, rows = 0;

	err = table_open(&t, PEA_DEBUGFS_MAPS);
	if (err) {
		if (err != -EPROTO)
			explain_open_error(PEA_DEBUGFS_MAPS, -err);
		table_close(&t);
		return PEA_EXIT_ERR;
	}
	while (table_next(&t)) {
		const char *slot = cell(&t, "slot");

		if (!map_selected(o, cell(&t, "map_id"), cell(&t, "name")))
			continue;
		*found = true;
		if (o->json) {
			bool empty = !strcmp(slot, "-");

			json_row(stdout, &t, empty ? "map" : "ring", strings);
			fputs(empty ? ",\"rings\":0}\n" : "}\n", stdout);
			continue;
		}
		if (!rows++)
			printf("%5s %-15s %5s %4s %7s %10s %6s %12s %14s %10s %8s %8s\n",
			       "MAP", "NAME", "SLOT", "CPU", "RING", "USED",
			       "FILL", "RECORDS", "BYTES", "LOST", "PENDING",
			       "WAKEUPS");
		print_ring_human(&t);
	}
	table_close(&t);
	return PEA_EXIT_OK;
}

static void probe_name(char *buf, size_t len, const struct table *t)
{
	unsigned long long flags = 0;

	cell_num(t, "flags", &flags);
	snprintf(buf, len, "%s:%s",
		 (flags & PEA_PROBE_F_RETPROBE) ? "kretprobe" : "kprobe",
		 cell(t, "symbol"));
}

static int show_links(const struct stat_opts *o)
{
	static const char *const strings[] = { "symbol", NULL };
	char probe[PEA_SYM_LEN + 16];
	struct table t;
	int err, rows = 0;

	err = table_open(&t, PEA_DEBUGFS_LINKS);
	if (err) {
		table_close(&t);
		/* A module without probe support has no links file. */
		if (err == -ENOENT)
			return PEA_EXIT_OK;
		if (err != -EPROTO)
			explain_open_error(PEA_DEBUGFS_LINKS, -err);
		return PEA_EXIT_ERR;
	}
	while (table_next(&t)) {
		if (o->map && strcmp(o->map, cell(&t, "map_id")))
			continue;
		probe_name(probe, sizeof(probe), &t);
		if (o->json) {
			json_row(stdout, &t, "link", strings);
			fputs(",\"probe\":", stdout);
			json_put_str(stdout, probe, strlen(probe));
			fputs("}\n", stdout);
			continue;
		}
		if (!rows++)
			printf("\n%5s %5s %-32s %12s %12s %10s %8s %8s %10s\n",
			       "LINK", "MAP", "PROBE", "HITS", "WRITTEN",
			       "FILTERED", "ERRORS", "MISSED", "DROPPED");
		printf("%5s %5s %-32s %12s %12s %10s %8s %8s %10s\n",
		       cell(&t, "link_id"), cell(&t, "map_id"), probe,
		       cell(&t, "hits"), cell(&t, "written"),
		       cell(&t, "filtered"), cell(&t, "errors"),
		       cell(&t, "missed"), cell(&t, "dropped"));
	}
	table_close(&t);
	return PEA_EXIT_OK;
}

/*
 * The kfunc's state and the calls naming no live map (debugfs "kfunc"),
 * then per map the errors of BPF programs' calls, where there were any.
 * A module without the file (older) shows nothing.
 */
static void show_kfunc(const struct stat_opts *o)
{
	static const char *const names[KF_NCOLS] = {
		"EINVAL", "E2BIG", "ENOENT", "EOPNOTSUPP", "EBUSY", "ENOSPC",
		"EFAULT", "MAY_SLEEP",
	};
	char line[512], state[256] = "", types[128] = "", name[32];
	unsigned long long id, bad = 0, c[KF_NCOLS];
	bool table = false;
	int bpfw, rows = 0, i, n;
	FILE *f = fopen(PEA_DEBUGFS_KFUNC, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!table) {
			if (!strncmp(line, "state ", 6))
				snprintf(state, sizeof(state), "%.255s", line + 6);
			else if (!strncmp(line, "program_types ", 14))
				snprintf(types, sizeof(types), "%.127s", line + 14);
			else if (!strncmp(line, "bad_handle ", 11))
				bad = strtoull(line + 11, NULL, 10);
			else if (line[0] == '#')
				table = true;
			if (!table)
				continue;
			if (o->json) {
				fputs("{\"type\":\"kfunc\",\"state\":", stdout);
				json_put_str(stdout, state, strlen(state));
				fputs(",\"program_types\":", stdout);
				json_put_str(stdout, types, strlen(types));
				printf(",\"bad_handle\":%llu}\n", bad);
			} else {
				printf("\nkfuncs: %s%s%s%s; calls naming no map: %llu\n",
				       state, types[0] ? " (" : "", types,
				       types[0] ? ")" : "", bad);
			}
			continue;
		}
		/* A module before may_sleep has 7 counters: the 8th is 0. */
		c[7] = 0;
		n = sscanf(line, "%llu %31s %d %llu %llu %llu %llu %llu %llu %llu %llu",
			   &id, name, &bpfw, &c[0], &c[1], &c[2], &c[3], &c[4],
			   &c[5], &c[6], &c[7]);
		if (n != 10 && n != 11)
			continue;
		if (o->map && strcmp(o->map, name) && strtoull(o->map, NULL, 10) != id)
			continue;
		if (!bpfw)
			continue;
		if (o->json) {
			printf("{\"type\":\"kfunc_map\",\"map_id\":%llu,\"bpf_write\":%d",
			       id, bpfw);
			for (i = 0; i < KF_NCOLS; i++)
				printf(",\"%s\":%llu", names[i], c[i]);
			fputs("}\n", stdout);
			continue;
		}
		if (!rows++) {
			printf("%5s %-15s %3s", "MAP", "NAME", "BPF");
			for (i = 0; i < KF_NCOLS; i++)
				printf(" %10s", names[i]);
			putchar('\n');
		}
		printf("%5llu %-15s %3s", id, name, bpfw ? "yes" : "no");
		for (i = 0; i < KF_NCOLS; i++)
			printf(" %10llu", c[i]);
		putchar('\n');
	}
	fclose(f);
}

/* With --map NAME, links name the map by id: find it. */
static const char *map_id_of(const char *name, char *buf, size_t len)
{
	struct table t;
	const char *ret = name;

	if (table_open(&t, PEA_DEBUGFS_MAPS)) {
		table_close(&t);
		return name;
	}
	while (table_next(&t))
		if (!strcmp(cell(&t, "name"), name)) {
			snprintf(buf, len, "%s", cell(&t, "map_id"));
			ret = buf;
			break;
		}
	table_close(&t);
	return ret;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_opts o = { NULL, false };
	char idbuf[32];
	bool found = false;
	int c, rc;

	if (wants_counters(argc, argv))
		return cmd_stat_counters(argc, argv);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":m:jh", stat_options, NULL)) != -1) {
		switch (c) {
		case 'm':
			o.map = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			fputs(stat_help, stdout);
			return PEA_EXIT_OK;
		case ':':
			return tool_usage("stat", "option '%s' needs a value",
					  argv[optind - 1]);
		default:
			return tool_usage("stat", "unknown option '%s'",
					  argv[optind - 1]);
		}
	}
	if (optind < argc)
		return tool_usage("stat", "unexpected argument '%s'", argv[optind]);

	rc = show_maps(&o, &found);
	if (rc)
		return rc;
	if (o.map && !found) {
		tool_err("no map '%s' (pea stat lists them all)", o.map);
		return PEA_EXIT_ERR;
	}
	if (!found && !o.json)
		printf("no maps\n");
	show_kfunc(&o);
	if (o.map)
		o.map = map_id_of(o.map, idbuf, sizeof(idbuf));
	rc = show_links(&o);
	fflush(stdout);
	return rc;
}
