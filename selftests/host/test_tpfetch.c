// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): a tracepoint's fetch expressions
 * (tools/pea/tpfetch.c) resolved against real format files of both
 * Debian kernels (selftests/host/tpfmt/: sys_enter_openat, timer_start)
 * and a BTF written here (PEA_BTF_DIR), into the exact struct pea_fetch
 * the kernel evaluates: a field base (PEA_FETCH_BASE_FIELD, the field's
 * offset and size), a char * a string, every read of a syscall event's
 * chain marked user and none of another event's, args-> dropped,
 * str(EXPR,N), an integer field by its BTF type; without BTF bare names
 * only; a field the event lacks, a common field and a string in the
 * entry refused with their messages; a --filter on a fetched string
 * compiled into the predicate program, its fetches added after the
 * printed ones. TAP on stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include "pea_tool.h"
#include "tpfetch.h"

#define HOST_TAP_NAME "tpfetch"
#include "host_tap.h"
#include "host_fetch.h"

static struct tp_format *load(const char *kver, const char *name)
{
	static char text[16384];
	struct tp_format *fmt = calloc(1, sizeof(*fmt));
	const char *err = NULL;
	char path[256];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "selftests/host/tpfmt/%s-%s", kver, name);
	f = fopen(path, "r");
	n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	if (f)
		fclose(f);
	text[n] = 0;
	if (!fmt || !n || tp_format_parse(text, fmt, &err)) {
		ok(0, "%s: parsed (%s)", path, err ? err : "no file");
		free(fmt);
		return NULL;
	}
	return fmt;
}

/* A BTF with the base types the formats name, as "vmlinux" in @dir. */
static int write_btf(const char *dir)
{
	struct btf *b = btf__new_empty();
	char path[256];
	const void *raw;
	__u32 size;
	FILE *f;
	int us;

	btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	btf__add_int(b, "char", 1, BTF_INT_SIGNED | BTF_INT_CHAR);
	btf__add_int(b, "long unsigned int", 8, 0);
	btf__add_int(b, "unsigned int", 4, 0);
	us = btf__add_int(b, "short unsigned int", 2, 0);
	btf__add_typedef(b, "umode_t", us);
	raw = btf__raw_data(b, &size);
	snprintf(path, sizeof(path), "%s/vmlinux", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fwrite(raw, 1, size, f);
	fclose(f);
	btf__free(b);
	return 0;
}

static bool same(const struct pea_fetch *a, __u8 type, __u16 size,
		 __u16 off, __u16 fsize, __u8 user, __u8 flags)
{
	struct pea_fetch w = host_fetch(PEA_FETCH_BASE_FIELD, 0, 0, type, size,
					flags, 0, 0, 0, 0, 0);

	w.user = user;
	w.field_offset = off;
	w.field_size = fsize;
	return !memcmp(a, &w, sizeof(w));
}

static void show(const char *what, const struct pea_fetch *f)
{
	printf("# %s: base %u arg %u nd %u type %u size %u flags %u user %u off %u/%u o0 %d\n",
	       what, f->base, f->arg, f->nr_deref, f->type, f->size, f->flags,
	       f->user, f->field_offset, f->field_size, f->offset[0]);
}

static void test_openat(const char *kver, bool btf)
{
	struct tp_format *fmt = load(kver, "syscalls-sys_enter_openat");
	const char *e1[] = { "filename", "args->flags", "str(args->filename,8)",
			     "dfd" };
	const char *bad[][2] = {
		{ "nothing", "'nothing': syscalls:sys_enter_openat has no field 'nothing'" },
		{ "common_pid", "has no field 'common_pid'" },
	};
	struct tp_fetches t;
	char why[512] = "";
	unsigned int i;
	int rc;

	if (!fmt)
		return;
	memset(&t, 0, sizeof(t));
	rc = tp_fetch_parse(fmt, "syscalls:sys_enter_openat", true, e1,
			    btf ? 4 : 2, &t, why, sizeof(why));
	ok(!rc && t.n == (btf ? 4U : 2U), "%s%s: %u expressions resolved (%s)",
	   kver, btf ? "" : " without BTF", btf ? 4 : 2, why);
	if (!rc) {
		ok(same(&t.f[0], PEA_FETCH_STR, KFETCH_STR_DEFAULT, 24, 8, 1, 0) &&
		   t.k[0].str && !strcmp(t.k[0].expr, "filename"),
		   "%s: filename: a user string (read 0 user) from field 24/8", kver);
		show("filename", &t.f[0]);
		ok(same(&t.f[1], btf ? PEA_FETCH_S32 : PEA_FETCH_U64, 0, 32, 8, 0, 0) &&
		   !strcmp(t.k[1].expr, "args->flags"),
		   "%s: args->flags: field 32/8 as it is (%s), nothing read, printed as given",
		   kver, btf ? "int: s32" : "no BTF: the 8 bytes");
		show("flags", &t.f[1]);
	}
	if (!rc && btf) {
		ok(same(&t.f[2], PEA_FETCH_STR, 8, 24, 8, 1, 0),
		   "%s: str(args->filename,8): 8 bytes", kver);
		ok(same(&t.f[3], PEA_FETCH_S32, 0, 16, 8, 0, 0) &&
		   t.k[3].type.cls == KT_INT,
		   "%s: dfd: an int (-100 prints -100)", kver);
	}
	tp_fetch_release(&t);
	if (!btf) {
		rc = tp_fetch_parse(fmt, "syscalls:sys_enter_openat", true,
				    &e1[2], 1, &t, why, sizeof(why));
		ok(rc == -EINVAL && strstr(why, "without the kernel's BTF a tracepoint's fetch is a field's bare name"),
		   "%s without BTF: str() refused: %s", kver, why);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = tp_fetch_parse(fmt, "syscalls:sys_enter_openat", true,
				    &bad[i][0], 1, &t, why, sizeof(why));
		ok(rc == -EINVAL && strstr(why, bad[i][1]), "%s: '%s' refused: %s",
		   kver, bad[i][0], why);
	}
	if (btf) {
		/* --filter: filename reused, flags added (fetched, not printed). */
		rc = tp_fetch_parse(fmt, "syscalls:sys_enter_openat", true, e1,
				    1, &t, why, sizeof(why));
		rc = rc ? rc : tp_fetch_filter(fmt, "args->filename ~ \"/etc/*\" && flags == 0",
					       &t, why, sizeof(why));
		ok(!rc && t.n == 2 && t.npreds == 3 &&
		   t.preds[0].op == PEA_PRED_CMP && t.preds[0].fetch == 0 &&
		   t.preds[0].cmp == PEA_TP_OP_GLOB &&
		   !strcmp(t.preds[0].str, "/etc/*") &&
		   t.preds[1].op == PEA_PRED_CMP && t.preds[1].fetch == 1 &&
		   t.preds[1].cmp == PEA_TP_OP_EQ && !t.preds[1].value &&
		   t.preds[2].op == PEA_PRED_AND &&
		   same(&t.f[1], PEA_FETCH_S32, 0, 32, 8, 0, 0),
		   "%s: --filter 'args->filename ~ \"/etc/*\" && flags == 0': CMP(0 ~) CMP(1 ==) AND, flags fetched after filename (%s)",
		   kver, why);
		tp_fetch_release(&t);
	}
	free(fmt);
}

/* A kernel event: no read marked user. */
static void test_timer(const char *kver)
{
	struct tp_format *fmt = load(kver, "timer-timer_start");
	const char *e[] = { "str(timer)", "function", "flags" };
	const struct tp_field *fl;
	struct tp_fetches t;
	char why[512] = "";
	int rc;

	if (!fmt)
		return;
	fl = tp_field_find(fmt, "flags");
	rc = tp_fetch_parse(fmt, "timer:timer_start", false, e, 3, &t, why,
			    sizeof(why));
	/* flags: at 40 on 6.1, 48 on 6.12 (a field before it there). */
	ok(!rc && t.n == 3 && fl && fl->size == 4 &&
	   same(&t.f[0], PEA_FETCH_STR, KFETCH_STR_DEFAULT, 8, 8, 0, 0) &&
	   same(&t.f[1], PEA_FETCH_U64, 0, 16, 8, 0, 0) &&
	   t.k[1].type.cls == KT_PTR &&
	   same(&t.f[2], PEA_FETCH_U32, 0, fl->offset, 4, 0, 0),
	   "%s timer_start: str(timer) a kernel read (no user bit), function a pointer as it is, flags a u32 of 4 bytes (%s)",
	   kver, why);
	if (!rc) {
		show("str(timer)", &t.f[0]);
		show("function", &t.f[1]);
		show("flags", &t.f[2]);
	}
	tp_fetch_release(&t);
	free(fmt);
}

int main(void)
{
	char dir[] = "/tmp/pea-tpfetch-XXXXXX", path[256];

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return host_tap_done();
	}
	setenv("PEA_BTF_DIR", dir, 1);
	test_openat("6.1", false);
	ok(!write_btf(dir), "a vmlinux BTF written");
	test_openat("6.1", true);
	test_openat("6.12", true);
	test_timer("6.1");
	test_timer("6.12");
	snprintf(path, sizeof(path), "%s/vmlinux", dir);
	unlink(path);
	rmdir(dir);
	return host_tap_done();
}
