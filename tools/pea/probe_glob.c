// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace: PROBE arguments whose name is a shell glob ('*', '?',
 * '[...]'), expanded into one probe per match before anything is
 * attached, sorted and without duplicates:
 *
 *   kprobe:GLOB, kretprobe:GLOB   the functions kprobes accept, as bpftrace
 *                                 and perf find them: tracefs
 *                                 available_filter_functions (what ftrace
 *                                 can trace; notrace code is not there)
 *                                 minus the kprobes blacklist (debugfs
 *                                 kprobes/blacklist, what
 *                                 kernel/kprobes.c refuses) and the
 *                                 names several kernel symbols share
 *                                 (ksym_names.c: Linux's kprobes refuse
 *                                 them, EADDRNOTAVAIL)
 *   tracepoint:S:N, tp:S:N        the events with a format file (tracefs
 *                                 events/S/N/), 'ftrace' internal ones out
 *   uprobe:PATH:GLOB, uretprobe:  the functions of PATH's .symtab and
 *                                 .dynsym (elfsym.c); a GLOB with "::"
 *                                 the C++ functions of PATH's DWARF by
 *                                 qualified name (ns::Class::meth*,
 *                                 udwarf.c)
 *   syscall:GLOB, sysenter:GLOB   the syscalls with a sys_enter_ event
 *
 * A glob with no match, or more matches than the session may take, is a
 * clear error; how many matched and were skipped is said on stderr.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ksym_names.h"
#include "probe_glob.h"
#include "tpformat.h"
#include "udwarf.h"
#include "upath.h"

#define KPROBE_BLACKLIST	"/sys/kernel/debug/kprobes/blacklist"

struct names {
	char **v;
	size_t n, cap;
};

static int names_add(struct names *s, const char *prefix, const char *name)
{
	size_t len = strlen(prefix) + strlen(name) + 1;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		char **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n] = malloc(len);
	if (!s->v[s->n])
		return -ENOMEM;
	snprintf(s->v[s->n], len, "%s%s", prefix, name);
	s->n++;
	return 0;
}

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort @s and drop repeats. */
static void names_uniq(struct names *s)
{
	size_t i, k = 0;

	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), names_cmp);
	for (i = 1; i < s->n; i++) {
		if (!strcmp(s->v[i], s->v[k]))
			free(s->v[i]);
		else
			s->v[++k] = s->v[i];
	}
	s->n = k + 1;
}

static bool names_has(const struct names *s, const char *name)
{
	return s->n && bsearch(&name, s->v, s->n, sizeof(*s->v), names_cmp);
}

void probe_glob_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/*
 * The ':' before the name or glob of PROBE @text: a uprobe's the last one
 * not in a C++ name's "::" (upath.c), another kind's its first.
 */
static const char *name_colon(const char *text)
{
	if (!strncmp(text, "uprobe:", 7))
		return upath_sym_colon(text + 7);
	if (!strncmp(text, "uretprobe:", 10))
		return upath_sym_colon(text + 10);
	return strchr(text, ':');
}

bool probe_glob_is(const char *text)
{
	const char *name = name_colon(text);

	return name && strpbrk(name, "*?[");
}

/*
 * The kprobes blacklist's function names, sorted ("0xSTART-0xEND\tNAME"
 * lines, or "0xSTART-0xEND\tNAME [MODULE]"); 0, or -errno when it cannot
 * be read (debugfs not mounted, not root).
 */
static int read_blacklist(struct names *bl)
{
	char line[512], *name;
	FILE *f = fopen(KPROBE_BLACKLIST, "r");
	int err = 0;

	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		name = strchr(line, '\t');
		if (!name)
			continue;
		name++;
		name[strcspn(name, " \t\n")] = '\0';
		if (*name)
			err = names_add(bl, "", name);
	}
	fclose(f);
	names_uniq(bl);
	return err;
}

static int expand_kprobe(const char *prefix, const char *pat,
			 struct names *out, struct probe_glob_info *info,
			 char *msg, size_t len)
{
	const char *dir = tp_events_dir();
	struct names bl = { 0 }, skip = { 0 }, shared = { 0 };
	char path[4096], line[512];
	struct ksym_count kc;
	FILE *f;
	int err = 0;

	if (!dir) {
		snprintf(msg, len, "tracefs is not mounted or not readable (run as root): the functions kprobes can probe are in its available_filter_functions");
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/../available_filter_functions", dir);
	f = fopen(path, "r");
	if (!f) {
		err = -errno;
		snprintf(msg, len, "cannot read %s: %s", path, strerror(-err));
		return err;
	}
	info->blacklist_read = !read_blacklist(&bl);
	while (!err && fgets(line, sizeof(line), f)) {
		line[strcspn(line, " \t\n")] = '\0';
		if (!*line || fnmatch(pat, line, 0))
			continue;
		if (names_has(&bl, line))
			err = names_add(&skip, "", line);
		else if (!ksym_name_count(line, &kc) && kc.total > 1)
			err = names_add(&shared, "", line);
		else
			err = names_add(out, prefix, line);
	}
	fclose(f);
	names_uniq(&skip);	/* a name may be listed twice (statics) */
	names_uniq(&shared);
	info->skipped = skip.n;
	info->shared = shared.n;
	probe_glob_free(skip.v, skip.n);
	probe_glob_free(shared.v, shared.n);
	probe_glob_free(bl.v, bl.n);
	return err;
}

static int expand_tracepoint(const char *prefix, const char *pat,
			     struct names *out, char *msg, size_t len)
{
	const char *dir = tp_events_dir();
	char path[4096], name[512];
	struct dirent *s, *e;
	DIR *d, *sd;
	int err = 0;

	if (!dir) {
		snprintf(msg, len, "tracefs is not mounted (mount -t tracefs tracefs /sys/kernel/tracing) or not readable (run as root)");
		return -ENOENT;
	}
	d = opendir(dir);
	if (!d) {
		err = -errno;
		snprintf(msg, len, "cannot read %s: %s", dir, strerror(-err));
		return err;
	}
	while (!err && (s = readdir(d))) {
		if (s->d_name[0] == '.' || !strcmp(s->d_name, "ftrace"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, s->d_name);
		sd = opendir(path);
		if (!sd)
			continue;
		while (!err && (e = readdir(sd))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(name, sizeof(name), "%s:%s", s->d_name,
				 e->d_name);
			if (fnmatch(pat, name, 0))
				continue;
			snprintf(path, sizeof(path), "%s/%s/%s/format", dir,
				 s->d_name, e->d_name);
			if (access(path, R_OK))
				continue;
			err = names_add(out, prefix, name);
		}
		closedir(sd);
	}
	closedir(d);
	return err;
}

/*
 * syscall:GLOB and sysenter:GLOB (@prefix): the NAMEs of events
 * syscalls/sys_enter_NAME.
 */
static int expand_syscall(const char *prefix, const char *pat,
			  struct names *out, char *msg, size_t len)
{
	const char *dir = tp_events_dir();
	char path[4096];
	struct dirent *e;
	DIR *d;
	int err = 0;

	if (!dir) {
		snprintf(msg, len, "tracefs is not mounted (mount -t tracefs tracefs /sys/kernel/tracing) or not readable (run as root)");
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/syscalls", dir);
	d = opendir(path);
	if (!d) {
		err = -errno;
		snprintf(msg, len, "cannot read %s: %s", path, strerror(-err));
		return err;
	}
	while (!err && (e = readdir(d)))
		if (!strncmp(e->d_name, "sys_enter_", 10) &&
		    !fnmatch(pat, e->d_name + 10, 0))
			err = names_add(out, prefix, e->d_name + 10);
	closedir(d);
	return err;
}

struct uprobe_ctx {
	struct names *out;
	const char *prefix;	/* "uprobe:PATH:" */
	const char *pat;
	int err;
};

static void uprobe_one(void *arg, const char *name)
{
	struct uprobe_ctx *c = arg;

	if (!c->err && !fnmatch(c->pat, name, 0))
		c->err = names_add(c->out, c->prefix, name);
}

/* A C++ function a glob matched: its qualified name and its symbol. */
struct qual {
	char *q, *sym;
};

struct qual_ctx {
	struct qual *v;
	size_t n, cap;
	int err;
};

static void qual_one(void *arg, const char *q, const char *sym)
{
	struct qual_ctx *c = arg;

	if (c->err)
		return;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct qual *v = realloc(c->v, cap * sizeof(*v));

		if (!v) {
			c->err = -ENOMEM;
			return;
		}
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n].q = strdup(q);
	c->v[c->n].sym = strdup(sym);
	if (!c->v[c->n].q || !c->v[c->n].sym) {
		free(c->v[c->n].q);
		free(c->v[c->n].sym);
		c->err = -ENOMEM;
		return;
	}
	c->n++;
}

static int qual_cmp(const void *a, const void *b)
{
	const struct qual *x = a, *y = b;
	int r = strcmp(x->q, y->q);

	return r ? r : strcmp(x->sym, y->sym);
}

/*
 * uprobe:PATH:GLOB with "::" in GLOB: the C++ functions whose qualified
 * names match it, from @file's DWARF (udwarf.c), each as PREFIX + its
 * qualified name, or, for the overloads of one name, each by its symbol
 * (the name alone would be ambiguous).
 */
static int expand_cxx(const char *prefix, const char *file,
		      const char *pat, struct names *out, char *msg,
		      size_t len)
{
	struct qual_ctx c = { 0 };
	size_t i, j, k;
	int err;

	err = usig_qual_each(file, pat, qual_one, &c, msg, len);
	if (!err)
		err = c.err;
	if (!err && c.n)
		qsort(c.v, c.n, sizeof(*c.v), qual_cmp);
	for (i = 0; !err && i < c.n; i = j) {
		size_t syms = 1;

		for (j = i + 1; j < c.n && !strcmp(c.v[j].q, c.v[i].q); j++)
			syms += !!strcmp(c.v[j].sym, c.v[j - 1].sym);
		for (k = i; !err && k < j; k++)
			if (syms == 1)
				err = k == i ? names_add(out, prefix, c.v[k].q) :
				      0;
			else if (k == i || strcmp(c.v[k].sym, c.v[k - 1].sym))
				err = names_add(out, prefix, c.v[k].sym);
	}
	for (i = 0; i < c.n; i++) {
		free(c.v[i].q);
		free(c.v[i].sym);
	}
	free(c.v);
	return err;
}

static int expand_uprobe(const char *text, const char *sym,
			 struct names *out, char *msg, size_t len)
{
	struct uprobe_ctx c = { .out = out, .pat = sym };
	const char *p = strchr(text, ':') + 1;
	size_t n = sym - text;	/* "uprobe:PATH:" */
	char *prefix = strndup(text, n), *path = strndup(p, sym - 1 - p);
	int err = -ENOMEM;

	if (prefix && path) {
		char file[4096];

		c.prefix = prefix;
		err = upath_resolve(path, file, sizeof(file));
		if (!err && strstr(sym, "::")) {
			err = expand_cxx(prefix, file, sym, out, msg, len);
			if (err && err != -ENOMEM) {
				free(prefix);
				free(path);
				return err;	/* @msg says why */
			}
		} else if (!err) {
			err = elf_sym_each(file, uprobe_one, &c);
		}
		if (!err)
			err = c.err;
		if (err && err != -ENOMEM)
			snprintf(msg, len, "cannot read the symbols of %s: %s",
				 path, err == -ENOEXEC ?
				 "not a 64-bit little-endian ELF executable or library" :
				 strerror(-err));
	}
	free(prefix);
	free(path);
	return err;
}

int probe_glob_expand(const char *text, char ***out, size_t *n,
		      struct probe_glob_info *info, char *msg, size_t len)
{
	static const char *const kp[] = { "kprobe:", "kretprobe:" };
	static const char *const tp[] = { "tracepoint:", "tp:" };
	static const char *const up[] = { "uprobe:", "uretprobe:" };
	struct names s = { 0 };
	const char *sym = name_colon(text);
	int err = -EINVAL, i;

	sym = sym ? sym + 1 : text;

	memset(info, 0, sizeof(*info));
	msg[0] = '\0';
	if (strchr(sym, '+')) {
		snprintf(msg, len, "a glob takes no +OFFSET");
		return -EINVAL;
	}
	for (i = 0; i < 2; i++) {
		size_t kl = strlen(kp[i]), tl = strlen(tp[i]),
		       ul = strlen(up[i]);

		if (!strncmp(text, kp[i], kl)) {
			info->what = "functions kprobes can probe";
			info->kprobes = true;
			err = expand_kprobe(kp[i], text + kl, &s, info, msg,
					    len);
			break;
		}
		if (!strncmp(text, tp[i], tl)) {
			info->what = "tracepoints";
			err = expand_tracepoint(tp[i], text + tl, &s, msg,
						len);
			break;
		}
		if (!strncmp(text, up[i], ul) && sym > text + ul + 1) {
			info->what = strstr(sym, "::") ?
				     "C++ functions in its DWARF" :
				     "functions in its symbol tables";
			err = expand_uprobe(text, sym, &s, msg, len);
			break;
		}
	}
	for (i = 0; i < 2; i++) {
		static const char *const sc[] = { "syscall:", "sysenter:" };

		if (!strncmp(text, sc[i], strlen(sc[i]))) {
			info->what = "syscalls";
			err = expand_syscall(sc[i], text + strlen(sc[i]), &s,
					     msg, len);
		}
	}
	if (err == -EINVAL && !msg[0])
		snprintf(msg, len, "globs are for kprobe:, kretprobe:, tracepoint:, uprobe:, syscall: and sysenter: names");
	if (err == -ENOMEM)
		snprintf(msg, len, "out of memory");
	if (err) {
		probe_glob_free(s.v, s.n);
		return err;
	}
	names_uniq(&s);
	*out = s.v;
	*n = s.n;
	return 0;
}
