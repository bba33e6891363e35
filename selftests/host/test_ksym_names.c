// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): the names several kernel symbols share
 * (tools/pea/ksym_names.c), counted from a /proc/kallsyms written here
 * as Linux's kprobes count them (number_of_same_symbols()): vmlinux's
 * and the modules', any type (a function and a variable of one name are
 * two), MODULE:NAME that module's only, "[bpf]" and "[__builtin__...]"
 * lines not at all; the refusal's message, exact, with how to name one.
 * TAP on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ksym_names.h"

#define HOST_TAP_NAME "ksym_names"
#include "host_tap.h"

static const char kallsyms[] =
	"ffffffff81000000 T one_vm\n"
	"ffffffff81000100 t dup_vm\n"
	"ffffffff81000200 t dup_vm\n"
	"ffffffff81000300 t dup_vm\n"
	"ffffffff81000400 T dupdata\n"
	"ffffffff82000000 D dupdata\n"
	"ffffffff81000500 t modx\n"
	"ffffffffc0000000 t modx\t[pea_st]\n"
	"ffffffffc0000100 t moddup\t[pea_st]\n"
	"ffffffffc0000200 t moddup\t[pea_st]\n"
	"ffffffffc0000300 t twomods\t[pea_st]\n"
	"ffffffffc1000300 t twomods\t[other_mod]\n"
	"ffffffffc2000000 t bpf_prog_1234_f\t[bpf]\n"
	"ffffffffc2000100 t bpf_prog_1234_f\t[bpf]\n"
	"ffffffffc3000000 t ftrace_trampoline\t[__builtin__ftrace]\n"
	"ffffffffc3000100 t ftrace_trampoline\t[__builtin__ftrace]\n"
	"ffffffffc3000200 t only_mod\t[pea_st]\n";

static const char refuse[] =
	"); Linux's kprobes refuse such a name (EADDRNOTAVAIL) and pea's kprobe link would take the first: ";
static const char pick[] = "probe a caller or a callee whose name is unique";

static void shared(const char *name, int want_n, const char *where,
		   const char *how)
{
	char why[1024], want[1024] = "";
	int n = ksym_name_shared(name, why, sizeof(why));

	if (want_n)
		snprintf(want, sizeof(want), "'%s' names %d kernel symbols (/proc/kallsyms: %s%s%s",
			 name, want_n, where, refuse, how);
	ok(n == want_n && (!n || !strcmp(why, want)),
	   "%s: %d symbols%s%s (got %d%s%s)", name, want_n, n ? ": " : "",
	   n ? want : "", n, n ? ": " : "", n ? why : "");
}

static void count(const char *name, unsigned int total, unsigned int vm)
{
	struct ksym_count c;
	int err = ksym_name_count(name, &c);

	ok(!err && c.total == total && c.vmlinux == vm,
	   "%s: %u symbols, %u in vmlinux (got %d: %u, %u)", name, total, vm,
	   err, c.total, c.vmlinux);
}

int main(void)
{
	char path[] = "/tmp/pea-host-kallsyms-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, kallsyms, sizeof(kallsyms) - 1) !=
	    (ssize_t)sizeof(kallsyms) - 1) {
		perror("kallsyms");
		return 1;
	}
	close(fd);
	setenv("PEA_KALLSYMS", path, 1);
	count("one_vm", 1, 1);
	count("dup_vm", 3, 3);
	count("dupdata", 2, 2);
	count("modx", 2, 1);
	count("pea_st:modx", 1, 0);
	count("pea_st:moddup", 2, 0);
	count("other_mod:twomods", 1, 0);
	count("bpf_prog_1234_f", 0, 0);
	count("ftrace_trampoline", 0, 0);
	count("pea_no_such", 0, 0);
	shared("one_vm", 0, NULL, NULL);
	shared("only_mod", 0, NULL, NULL);
	shared("pea_st:modx", 0, NULL, NULL);
	shared("bpf_prog_1234_f", 0, NULL, NULL);
	shared("dup_vm", 3, "3 in vmlinux", pick);
	shared("dupdata", 2, "2 in vmlinux", pick);
	shared("modx", 2, "1 in vmlinux, 1 in module pea_st",
	       "name the module's as kprobe:pea_st:modx; for vmlinux's, probe a caller or a callee whose name is unique");
	shared("moddup", 2, "2 in module pea_st", pick);
	shared("pea_st:moddup", 2, "2 in module pea_st", pick);
	shared("twomods", 2, "2 in modules pea_st and others",
	       "name a module's as kprobe:MODULE:twomods where that module has one; else probe a caller or a callee whose name is unique");
	unlink(path);
	return host_tap_done();
}
