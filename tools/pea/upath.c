// SPDX-License-Identifier: GPL-2.0
/*
 * pea: a uprobe's file by name. An executable is looked for in $PATH as
 * execvp() does; a library in $LD_LIBRARY_PATH, then the directories
 * Debian's dynamic linker searches on x86-64 (ld.so(8): the multiarch
 * directories, then /lib and /usr/lib), as libNAME.so or its versioned
 * file (libc: libc.so.6), so uprobe:libc:malloc is
 * /lib/x86_64-linux-gnu/libc.so.6. The directories are read, not ld.so's
 * cache.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "upath.h"

static const char *const lib_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
	"/usr/lib64", "/lib", "/usr/lib",
};

static bool is_file(const char *path, bool exec)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) &&
	       (!exec || !access(path, X_OK));
}

/* @dir/@file if it is a regular file (@exec: executable). */
static bool try_path(const char *dir, const char *file, bool exec, char *out,
		     size_t len)
{
	int n = snprintf(out, len, "%s/%s", *dir ? dir : ".", file);

	return n > 0 && (size_t)n < len && is_file(out, exec);
}

/* Each directory of the ':'-separated @list: whether @fn found it there. */
static bool each_dir(const char *list, const char *name, char *out,
		     size_t len,
		     bool (*fn)(const char *dir, const char *name, char *out,
				size_t len))
{
	char dir[4096];
	const char *p = list, *c;

	while (p && *p) {
		size_t n;

		c = strchr(p, ':');
		n = c ? (size_t)(c - p) : strlen(p);
		if (n < sizeof(dir)) {
			memcpy(dir, p, n);
			dir[n] = '\0';
			if (fn(dir, name, out, len))
				return true;
		}
		p = c ? c + 1 : NULL;
	}
	return false;
}

static bool find_exec(const char *dir, const char *name, char *out,
		      size_t len)
{
	return try_path(dir, name, true, out, len);
}

/* The lowest-sorting entry of @dir that starts with @prefix. */
static bool try_versioned(const char *dir, const char *prefix, char *out,
			  size_t len)
{
	char best[256] = "";
	struct dirent *e;
	size_t n = strlen(prefix);
	DIR *d = opendir(dir);

	if (!d)
		return false;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, n) &&
		    strlen(e->d_name) < sizeof(best) &&
		    (!best[0] || strcmp(e->d_name, best) < 0)) {
			char path[4352];

			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			if (is_file(path, false))
				snprintf(best, sizeof(best), "%s", e->d_name);
		}
	closedir(d);
	return best[0] && try_path(dir, best, false, out, len);
}

static bool find_lib(const char *dir, const char *name, char *out,
		     size_t len)
{
	char f[512];
	bool lib = !strncmp(name, "lib", 3);

	if (try_path(dir, name, false, out, len))
		return true;
	if (!lib) {
		snprintf(f, sizeof(f), "lib%s.so", name);
		if (try_path(dir, f, false, out, len))
			return true;
		snprintf(f, sizeof(f), "lib%s.so.", name);
		if (try_versioned(dir, f, out, len))
			return true;
	}
	snprintf(f, sizeof(f), "%s.so", name);
	if (try_path(dir, f, false, out, len))
		return true;
	snprintf(f, sizeof(f), "%s.so.", name);
	return try_versioned(dir, f, out, len);
}

int upath_resolve(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	size_t i;

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return 0;
	}
	if (!*name)
		return -ENOENT;
	if (each_dir(path ? path : "/usr/local/bin:/usr/bin:/bin", name, out,
		     len, find_exec))
		return 0;
	if (each_dir(getenv("LD_LIBRARY_PATH"), name, out, len, find_lib))
		return 0;
	for (i = 0; i < sizeof(lib_dirs) / sizeof(lib_dirs[0]); i++)
		if (find_lib(lib_dirs[i], name, out, len))
			return 0;
	return -ENOENT;
}

const char *upath_sym_colon(const char *rest)
{
	const char *p = rest + strlen(rest);

	while (p-- > rest) {
		if (*p != ':')
			continue;
		if (p > rest && p[-1] == ':') {
			p--;	/* "::": skip both */
			continue;
		}
		if (p[1] == ':')
			continue;
		return p;
	}
	return NULL;
}
