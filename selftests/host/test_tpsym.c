// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): the names a tracepoint's print fmt gives its
 * fields' values (__print_flags(), __print_symbolic(); tools/pea/
 * tpsym.c, printed by tpformat.c), read from real format files of
 * Debian's 6.1 and 6.12 kernels (selftests/host/tpfmt/, copied from
 * their tracefs): which fields get a table and how many entries, the
 * values printed as the kernel prints them (flags joined, unnamed bits
 * as 0x..., a mask applied, the name of a masked 0), the text and JSON
 * of an entry, the calls left out (on an expression, or with names the
 * kernel did not resolve), and --count-by rows by name (a value the mask
 * cuts with its number beside). TAP on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pea_tool.h"
#include "tpformat.h"
#include "probe_kind.h"
#include "aggregate.h"

#define HOST_TAP_NAME "tpsym"
#include "host_tap.h"

static struct tp_format fmt;

static int load(const char *kver, const char *name)
{
	static char text[65536];
	char path[256];
	const char *err = "";
	size_t len;
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "selftests/host/tpfmt/%s-%s", kver, name);
	f = fopen(path, "r");
	if (!f) {
		ok(0, "%s: cannot open", path);
		return -1;
	}
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = 0;
	r = tp_format_parse(text, &fmt, &err);
	ok(r == 0, "%s %s parses (%s)", kver, name, r ? err : "ok");
	return r;
}

static int tables(void)
{
	int i, n = 0;

	for (i = 0; i < fmt.nfields; i++)
		n += fmt.fields[i].sym != TP_SYM_NONE;
	return n;
}

static const struct tp_field *field(const char *name)
{
	const struct tp_field *fl = tp_field_find(&fmt, name);

	if (!fl)
		ok(0, "no field %s", name);
	return fl;
}

/* Field @name's table: its kind, entries and mask as expected. */
static void table(const char *kver, const char *name, enum tp_sym_kind kind,
		  unsigned int nent, __u64 mask)
{
	const struct tp_field *fl = field(name);

	if (!fl)
		return;
	ok(fl->sym == kind && fl->sym_n == nent && fl->sym_mask == mask,
	   "%s %s %s: %s of %u entries, mask 0x%llx (got %d, %u, 0x%llx)",
	   kver, fmt.name, name, kind == TP_SYM_FLAGS ? "flags" : "symbols",
	   nent, (unsigned long long)mask, fl->sym, fl->sym_n,
	   (unsigned long long)fl->sym_mask);
}

/* @v of field @name prints as @want (NULL: no name applies). */
static void names(const char *kver, const char *name, __u64 v,
		  const char *want)
{
	const struct tp_field *fl = field(name);
	char buf[512];
	const char *got;

	if (!fl)
		return;
	got = tp_sym_format(&fmt, fl, v, buf, sizeof(buf));
	ok(want ? got && !strcmp(got, want) : !got,
	   "%s %s %s = 0x%llx: %s (got %s)", kver, fmt.name, name,
	   (unsigned long long)v, want ? want : "no name",
	   got ? got : "no name");
}

static void put(unsigned char *raw, const char *name, __u64 v)
{
	const struct tp_field *fl = field(name);

	if (fl)
		memcpy(raw + fl->offset, &v, fl->size);
}

static void diff(const char *got, const char *want)
{
	if (strcmp(got, want))
		printf("#   got  %s\n#   want %s\n", got, want);
}

/* An entry of posix_lock_inode printed in text and JSON. */
static void entry(const char *kver, bool new_names)
{
	const char *flags = new_names ? "flags" : "fl_flags";
	const char *type = new_names ? "type" : "fl_type";
	const char *pid = new_names ? "pid" : "fl_pid";
	unsigned char raw[88] = { 0 };
	char *text = NULL, *want;
	size_t len = 0;
	FILE *f;

	put(raw, "common_type", fmt.id);
	put(raw, "fl", 0xffff888001234500ULL);
	put(raw, "i_ino", 12);
	put(raw, pid, 4242);
	put(raw, flags, 129);		/* FL_POSIX | FL_SLEEP */
	put(raw, type, 1);		/* F_WRLCK */
	put(raw, "fl_start", 10);
	put(raw, "fl_end", 19);
	put(raw, "ret", -11);
	f = open_memstream(&text, &len);
	tp_print_fields(f, &fmt, raw, sizeof(raw), false);
	fclose(f);
	if (asprintf(&want, "fl=0xffff888001234500 i_ino=12 s_dev=0 %s=0x0 %s=0 %s=4242 %s=FL_POSIX|FL_SLEEP %s=F_WRLCK fl_start=10 fl_end=19 ret=-11",
		     new_names ? "blocker" : "fl_blocker",
		     new_names ? "owner" : "fl_owner", pid, flags, type) < 0)
		return;
	ok(!strcmp(text, want), "%s posix_lock_inode in text: names for %s and %s",
	   kver, flags, type);
	diff(text, want);
	free(text);
	free(want);
	text = NULL;
	f = open_memstream(&text, &len);
	tp_print_fields(f, &fmt, raw, sizeof(raw), true);
	fclose(f);
	if (asprintf(&want, "{\"fl\":\"0xffff888001234500\",\"i_ino\":12,\"s_dev\":0,\"%s\":\"0x0\",\"%s\":0,\"%s\":4242,\"%s\":129,\"%s_name\":\"FL_POSIX|FL_SLEEP\",\"%s\":1,\"%s_name\":\"F_WRLCK\",\"fl_start\":10,\"fl_end\":19,\"ret\":-11}",
		     new_names ? "blocker" : "fl_blocker",
		     new_names ? "owner" : "fl_owner", pid, flags, flags,
		     type, type) < 0)
		return;
	ok(!strcmp(text, want), "%s posix_lock_inode in JSON: numbers kept, NAME_name beside them",
	   kver);
	diff(text, want);
	free(text);
	free(want);
}

static void kernel(const char *kver)
{
	bool k612 = !strcmp(kver, "6.12");
	const char *flags = k612 ? "flags" : "fl_flags";
	const char *type = k612 ? "type" : "fl_type";

	if (!load(kver, "filelock-posix_lock_inode")) {
		ok(tables() == 2, "%s posix_lock_inode: 2 tables (got %d)",
		   kver, tables());
		table(kver, flags, TP_SYM_FLAGS, 12, ~0ULL);
		table(kver, type, TP_SYM_SYMBOLIC, 3, ~0ULL);
		names(kver, flags, 129, "FL_POSIX|FL_SLEEP");
		names(kver, flags, 4096 | 1024, "FL_OFDLCK|FL_RECLAIM");
		/* Bits no name has: last, in hex, as the kernel does. */
		names(kver, flags, 0x2081, "FL_POSIX|FL_SLEEP|0x2000");
		names(kver, flags, 0, NULL);
		names(kver, type, 0, "F_RDLCK");
		names(kver, type, 2, "F_UNLCK");
		names(kver, type, 7, NULL);
		entry(kver, k612);
	}
	if (!load(kver, "sched-sched_switch")) {
		ok(tables() == 1, "%s sched_switch: 1 table (got %d)", kver,
		   tables());
		/* REC->prev_state & ((((0x7f) + 1) << 1) - 1) */
		table(kver, "prev_state", TP_SYM_FLAGS, 8, 0xff);
		names(kver, "prev_state", 1, "S");
		names(kver, "prev_state", 2, "D");
		names(kver, "prev_state", 0x80, "I");
		names(kver, "prev_state", 0x102, "D");	/* the mask */
		/* (REC->prev_state & M) ? __print_flags(...) : "R" */
		names(kver, "prev_state", 0, "R");
		names(kver, "prev_state", 0x100, "R");
	}
	if (!load(kver, "irq-softirq_entry")) {
		table(kver, "vec", TP_SYM_SYMBOLIC, 10, ~0ULL);
		names(kver, "vec", 1, "TIMER");
		names(kver, "vec", 9, "RCU");
		names(kver, "vec", 10, NULL);
	}
	if (!load(kver, "timer-hrtimer_init")) {
		/* mode's names are HRTIMER_MODE_*, which the kernel left. */
		ok(tables() == 1, "%s hrtimer_init: 1 table, clockid's (got %d)",
		   kver, tables());
		table(kver, "clockid", TP_SYM_SYMBOLIC, 4, ~0ULL);
		names(kver, "clockid", 1, "CLOCK_MONOTONIC");
		names(kver, "clockid", 11, "CLOCK_TAI");
		names(kver, "mode", 1, NULL);
	}
	if (!load(kver, "timer-timer_start")) {
		table(kver, "flags", TP_SYM_FLAGS, 4, 0x3c0000);
		names(kver, "flags", 0x40000 | 5, "M");
		names(kver, "flags", 0x280000, "D|I");
	}
	if (!load(kver, "kmem-kmalloc")) {
		table(kver, "gfp_flags", TP_SYM_FLAGS, k612 ? 35 : 36, ~0ULL);
		names(kver, "gfp_flags", 0xcc0, "GFP_KERNEL");
		/* (REC->gfp_flags) ? __print_flags(...) : "none" */
		names(kver, "gfp_flags", 0, "none");
		/* __GFP_ATOMIC (0x200) is gone in 6.12 */
		names(kver, "gfp_flags", k612 ? 0x820 : 0xa20, "GFP_ATOMIC");
		if (k612)
			names(kver, "gfp_flags", 0xa20, "GFP_ATOMIC|0x200");
	}
	/* The syscalls' formats give numbers only: no names. */
	if (!load(kver, "syscalls-sys_enter_openat"))
		ok(tables() == 0 && fmt.nsyms == 0,
		   "%s sys_enter_openat: no table (got %d)", kver, tables());
}

/* Calls the parser must leave out or take, on made-up print fmts. */
static void synthetic(void)
{
	static const char head[] =
		"name: t\nID: 5\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:char s[8];\toffset:12;\tsize:8;\tsigned:0;\n\n";
	static const struct {
		const char *pfmt;
		int tables;
		const char *name;	/* of a = -1 */
	} c[] = {
		{ "\"%s\", __print_symbolic(REC->a, { -1, \"MINUS\" }, { 1 << 2, \"FOUR\" })", 1, "MINUS" },
		{ "\"%s\", __print_symbolic((1 << REC->a), { 1, \"X\" })", 0, NULL },
		{ "\"%s\", __print_symbolic(REC->s, { 1, \"X\" })", 0, NULL },
		{ "\"%s\", __print_symbolic(REC->a, { FOO, \"X\" })", 0, NULL },
		{ "\"__print_flags(REC->a, \\\"|\\\", { 1, \\\"X\\\" })\", REC->a", 0, NULL },
		{ "\"%s\", __print_flags(REC->a, \"|\", { (( int)~0), \"ALL\" })", 1, "ALL" },
		{ "\"%s\", __print_symbolic(REC->a, { 1, \"X\" }", 0, NULL },
		{ "\"%s\", __print_symbolic(REC->a, { (unsigned long)-1, \"Y\" }) \"", 1, "Y" },
		/* a name in parentheses is no cast: the table is left out */
		{ "\"%s\", __print_symbolic(REC->a, { (FOO) - 1, \"X\" })", 0, NULL },
		/* a ternary on another condition: no name for 0 */
		{ "\"%s\", REC->s[0] ? __print_flags(REC->a, \"|\", { 2, \"B\" }) : \"Z\"", 1, "B|0xfffffffffffffffd" },
	};
	char text[1024], buf[64];
	const char *err;
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const struct tp_field *fl;
		const char *got;
		int r;

		snprintf(text, sizeof(text), "%sprint fmt: %s\n", head,
			 c[i].pfmt);
		r = tp_format_parse(text, &fmt, &err);
		fl = tp_field_find(&fmt, "a");
		got = fl ? tp_sym_format(&fmt, fl, ~0ULL, buf, sizeof(buf)) :
			   NULL;
		ok(!r && tables() == c[i].tables &&
		   (c[i].name ? got && !strcmp(got, c[i].name) : !got),
		   "print fmt: %s: %d table(s), a = -1 is %s (got %d, %s)",
		   c[i].pfmt, c[i].tables, c[i].name ? c[i].name : "no name",
		   tables(), got ? got : "no name");
	}
}

/* A format with a field named FIELD_name keeps that field's own value. */
static void clash(void)
{
	static const char text[] =
		"name: t\nID: 5\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:int a_name;\toffset:12;\tsize:4;\tsigned:1;\n\n"
		"print fmt: \"%s %d\", __print_symbolic(REC->a, { 1, \"ONE\" }), REC->a_name\n";
	unsigned char raw[16] = { 0 };
	char *out = NULL;
	size_t len = 0;
	const char *err;
	FILE *f;

	raw[8] = 1;
	raw[12] = 7;
	ok(!tp_format_parse(text, &fmt, &err), "a format with fields a and a_name parses");
	f = open_memstream(&out, &len);
	tp_print_fields(f, &fmt, raw, sizeof(raw), true);
	fclose(f);
	ok(!strcmp(out, "{\"a\":1,\"a_name\":7}"),
	   "JSON: no a_name beside a when the format has a field a_name (got %s)", out);
	free(out);
	out = NULL;
	f = open_memstream(&out, &len);
	tp_print_fields(f, &fmt, raw, sizeof(raw), false);
	fclose(f);
	ok(!strcmp(out, "a=ONE a_name=7"), "text: a=ONE a_name=7 (got %s)", out);
	free(out);
}

/*
 * --count-by of a field with names (aggregate.c): sched_switch's
 * prev_state by name, a value with bits the mask drops (256: preempted,
 * "R" as 0 is; 258, "D" as 2 is) with its number beside, JSON's key the
 * number and key_name the names.
 */
static void count_by_names(void)
{
	static const __s64 vals[] = { 1, 1, 1, 0, 0, 256, 2, 258 };
	static const struct trace_fmt *probes[1];
	static struct trace_fmt tf;
	static unsigned char raw[256];
	const struct tp_field *fl;
	struct trace_event ev;
	struct agg_opts o;
	struct agg *a;
	char *out = NULL;
	size_t len, i;
	bool json;
	FILE *f;

	if (load("6.1", "sched-sched_switch"))
		return;
	fl = field("prev_state");
	if (!fl)
		return;
	tf.probe = "tp:sched:sched_switch";
	tf.kind = &tracepoint_kind;
	tf.tp = &fmt;
	probes[0] = &tf;
	for (json = false; ; json = true) {
		memset(&o, 0, sizeof(o));
		o.count[0] = "prev_state";
		o.count_probe[0] = -1;
		o.ncount = 1;
		o.top = 10;
		o.max_keys = 100;
		o.json = json;
		a = NULL;
		if (agg_new(&a, &o, probes, 1) || !a) {
			ok(0, "agg_new: --count-by prev_state");
			return;
		}
		for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
			memset(&ev, 0, sizeof(ev));
			memcpy(raw + fl->offset, &vals[i], 8);
			ev.raw = raw;
			ev.raw_size = sizeof(raw);
			agg_add(a, &ev);
		}
		f = open_memstream(&out, &len);
		agg_print(a, f, 0, 0);
		fclose(f);
		agg_free(a);
		if (!json)
			ok(strstr(out, "     COUNT  KEY\n"
				       "         3  S\n"
				       "         2  R\n"
				       "         1  D\n"
				       "         1  R (256)\n"
				       "         1  D (258)\n") != NULL,
			   "text: S 3, R 2, D 1, then R (256) and D (258): the bits the mask drops shown (got %s)",
			   out);
		else
			ok(strstr(out, "\"rows\":[{\"key\":1,\"key_name\":\"S\",\"count\":3},{\"key\":0,\"key_name\":\"R\",\"count\":2},{\"key\":2,\"key_name\":\"D\",\"count\":1},{\"key\":256,\"key_name\":\"R\",\"count\":1},{\"key\":258,\"key_name\":\"D\",\"count\":1}]") != NULL,
			   "JSON: the numbers as keys, the names as key_name (got %s)",
			   out);
		free(out);
		out = NULL;
		if (json)
			break;
	}
}

int main(void)
{
	kernel("6.1");
	kernel("6.12");
	synthetic();
	clash();
	count_by_names();
	return host_tap_done();
}
