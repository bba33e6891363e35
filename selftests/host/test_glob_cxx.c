// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): uprobe:PATH:GLOB with "::" in GLOB
 * (tools/pea/probe_glob.c, udwarf.c): the C++ functions of PATH's DWARF
 * whose qualified names match, on selftests/pt_udwarf_cxx.cc built here
 * with g++ -g: each by its qualified name, the two overloads of one name
 * each by its symbol; a glob without "::" still matches symbols; no match
 * and no DWARF said. probe_glob_is() finds the glob after a C++ name's
 * "::". TAP on stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "probe_glob.h"

#define HOST_TAP_NAME "glob_cxx"
#include "host_tap.h"

static char bin[64] = "/tmp/pea-host-cxx-XXXXXX";

/* Expand uretprobe:BIN:@pat: its matches' names after "uretprobe:BIN:". */
static int expand(const char *pat, char *got, size_t len, char *msg,
		  size_t mlen)
{
	struct probe_glob_info info;
	char text[512];
	char **v = NULL;
	size_t n = 0, i, o = 0, pl;
	int err;

	pl = snprintf(text, sizeof(text), "uretprobe:%s:", bin);
	snprintf(text + pl, sizeof(text) - pl, "%s", pat);
	got[0] = '\0';
	err = probe_glob_expand(text, &v, &n, &info, msg, mlen);
	for (i = 0; !err && i < n; i++)
		o += snprintf(got + o, o < len ? len - o : 0, "%s%s",
			      i ? " " : "",
			      strncmp(v[i], text, pl) ? v[i] : v[i] + pl);
	if (!err)
		snprintf(msg, mlen, "%s", info.what);
	probe_glob_free(v, n);
	return err;
}

static void case_is(const char *pat, const char *want, const char *what)
{
	char got[2048], msg[512];
	int err = expand(pat, got, sizeof(got), msg, sizeof(msg));

	ok(!err && !strcmp(got, want) && !strcmp(msg, what),
	   "%s: %s (%s) (got %d: %s; %s)", pat, want, what, err, got, msg);
}

int main(void)
{
	char cmd[1024], got[2048], msg[512];
	int fd = mkstemp(bin), err;

	if (fd < 0)
		return 1;
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "g++ -O2 -g -fno-exceptions -fno-rtti -o %s selftests/pt_udwarf_cxx.cc",
		 bin);
	ok(system(cmd) == 0, "pt_udwarf_cxx.cc built with g++ -g");
	ok(probe_glob_is("uprobe:/bin/x:ns::Class::meth*") &&
	   probe_glob_is("uretprobe:/bin/x:ns::*") &&
	   !probe_glob_is("uprobe:/bin/x:ns::Class::meth") &&
	   !probe_glob_is("uprobe:/a*b/x:ns::f"),
	   "probe_glob_is(): the glob after the C++ name's scopes, not in PATH");
	case_is("pt_ns::*",
		"_ZN5pt_ns4overEi _ZN5pt_ns4overEl pt_ns::Counter::add pt_ns::inner::twice pt_ns::many pt_ns::scale",
		"C++ functions in its DWARF");
	case_is("pt_ns::Counter::a*", "pt_ns::Counter::add",
		"C++ functions in its DWARF");
	case_is("*::tw?ce", "pt_ns::inner::twice", "C++ functions in its DWARF");
	case_is("pt_ns::[io]*",
		"_ZN5pt_ns4overEi _ZN5pt_ns4overEl pt_ns::inner::twice",
		"C++ functions in its DWARF");
	case_is("_ZN5pt_ns4over*", "_ZN5pt_ns4overEi _ZN5pt_ns4overEl",
		"functions in its symbol tables");
	case_is("pt_ns::nope*", "", "C++ functions in its DWARF");
	/* Another path: the DWARF of the last file read is kept. */
	snprintf(cmd, sizeof(cmd), "objcopy --strip-debug %s %s.s", bin, bin);
	ok(system(cmd) == 0, "objcopy --strip-debug");
	unlink(bin);
	strcat(bin, ".s");
	err = expand("pt_ns::*", got, sizeof(got), msg, sizeof(msg));
	ok(err == -ENODATA && strstr(msg, "no DWARF in ") &&
	   strstr(msg, " to match C++ names in (match its symbols, as nm shows them, without '::')"),
	   "no DWARF: -ENODATA, why (%d %s)", err, msg);
	unlink(bin);
	return host_tap_done();
}
