// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): a uprobe's file by name (tools/pea/upath.c) in
 * directories made here: a path as it is; a command in $PATH (the first
 * executable one); a library in $LD_LIBRARY_PATH as NAME, libNAME.so and
 * its lowest versioned file libNAME.so.N; libNAME given as such; and no
 * such file. TAP on stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "upath.h"

#define HOST_TAP_NAME "upath"
#include "host_tap.h"

static char root[64];

static void make_file(const char *rel, mode_t mode)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, mode);
	if (fd >= 0)
		close(fd);
	chmod(p, mode);
}

static void expect(const char *name, const char *rel)
{
	char out[512] = "", want[256];
	int err = upath_resolve(name, out, sizeof(out));

	if (!rel) {
		ok(err == -ENOENT, "'%s': not found (got %d %s)", name, err, out);
		return;
	}
	snprintf(want, sizeof(want), "%s%s", strcmp(rel, name) ? root : "",
		 rel);
	ok(!err && !strcmp(out, want), "'%s' is %s (got %d %s)", name, want,
	   err, out);
}

int main(void)
{
	char p[256], l[256];

	snprintf(root, sizeof(root), "/tmp/pea-upath-%d", (int)getpid());
	mkdir(root, 0755);
	snprintf(p, sizeof(p), "%s/bin1", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/bin2", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/lib", root);
	mkdir(p, 0755);
	make_file("bin1/tool", 0644);		/* not executable: skipped */
	make_file("bin2/tool", 0755);
	make_file("lib/libfoo.so.2", 0644);
	make_file("lib/libfoo.so.1", 0644);
	make_file("lib/libbar.so", 0644);
	make_file("lib/baz.so.3", 0644);
	snprintf(p, sizeof(p), "%s/bin1:%s/bin2", root, root);
	setenv("PATH", p, 1);
	snprintf(l, sizeof(l), "%s/lib", root);
	setenv("LD_LIBRARY_PATH", l, 1);
	expect("/bin/sh", "/bin/sh");
	expect("tool", "/bin2/tool");
	expect("foo", "/lib/libfoo.so.1");
	expect("libfoo", "/lib/libfoo.so.1");
	expect("bar", "/lib/libbar.so");
	expect("libbar.so", "/lib/libbar.so");
	expect("baz", "/lib/baz.so.3");
	expect("pea-no-such-thing", NULL);
	snprintf(p, sizeof(p), "/bin/rm -rf %s", root);
	if (system(p))
		ok(0, "clean up %s", root);
	return host_tap_done();
}
