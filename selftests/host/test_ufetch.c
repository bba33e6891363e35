// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): fetch expressions after a uprobe
 * (tools/pea/ufetch.c) into the exact struct pea_fetch the kernel
 * evaluates: a register as u64 or cut to a type, +OFF(VALUE) reads and
 * their order, a string at a register or at an address, str(V,N), NAME=,
 * ret at a uretprobe only, four reads before the value and not five, and
 * what is refused with the reason; then --filter on them (kfilter.c)
 * naming a fetch by its NAME or as an expression with its :TYPE. TAP on
 * stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "pea_tool.h"
#include "kfilter.h"
#include "ufetch.h"

#define HOST_TAP_NAME "ufetch"
#include "host_tap.h"

static struct pea_fetch F(__u8 base, __u8 arg, __u8 nd, __u8 type,
			  __u16 size, __u8 flags, __s32 o0, __s32 o1, __s32 o2)
{
	struct pea_fetch f;

	memset(&f, 0, sizeof(f));
	f.base = base;
	f.arg = arg;
	f.nr_deref = nd;
	f.type = type;
	f.size = size;
	f.flags = flags;
	f.offset[0] = o0;
	f.offset[1] = o1;
	f.offset[2] = o2;
	return f;
}

#define A	PEA_FETCH_BASE_ARG
#define R	PEA_FETCH_BASE_RET
#define L	PEA_FETCH_F_LOAD

static void check(const char *expr, bool ret, struct pea_fetch want,
		  const char *name, bool str)
{
	struct kfetch k;
	char why[256] = "";
	int err = ufetch_parse(expr, ret, &k, why, sizeof(why));

	ok(!err && !memcmp(&k.f, &want, sizeof(want)) && k.str == str &&
	   !strcmp(k.expr, name),
	   "'%s': base %u arg %u deref %u type %u size %u flags %u off %d,%d,%d as '%s' (got %s%s: %u %u %u %u %u %u %d,%d,%d '%s')",
	   expr, want.base, want.arg, want.nr_deref, want.type, want.size,
	   want.flags, want.offset[0], want.offset[1], want.offset[2], name,
	   err ? "error " : "", why, k.f.base, k.f.arg, k.f.nr_deref,
	   k.f.type, k.f.size, k.f.flags, k.f.offset[0], k.f.offset[1],
	   k.f.offset[2], k.expr);
}

static void refused(const char *expr, bool ret, const char *msg)
{
	struct kfetch k;
	char why[256] = "";
	int err = ufetch_parse(expr, ret, &k, why, sizeof(why));

	ok(err == -EINVAL && !strcmp(why, msg), "'%s' refused: %s (got %d %s)",
	   expr, msg, err, why);
}

static void test_parse(void)
{
	check("arg1", false, F(A, 1, 0, PEA_FETCH_U64, 0, 0, 0, 0, 0), "arg1",
	      false);
	check("n=arg1:s32", false, F(A, 1, 0, PEA_FETCH_S32, 0, 0, 0, 0, 0),
	      "n", false);
	check("+8(arg2):u32", false,
	      F(A, 2, 0, PEA_FETCH_U32, 0, L, 8, 0, 0), "+8(arg2):u32", false);
	check("-4(arg2):s16", false,
	      F(A, 2, 0, PEA_FETCH_S16, 0, L, -4, 0, 0), "-4(arg2):s16", false);
	check("x=+8(+16(arg0))", false,
	      F(A, 0, 1, PEA_FETCH_U64, 0, L, 16, 8, 0), "x", false);
	check("str(arg0)", false, F(A, 0, 0, PEA_FETCH_STR, 64, 0, 0, 0, 0),
	      "str(arg0)", true);
	check("s=arg0:string", false,
	      F(A, 0, 0, PEA_FETCH_STR, 64, 0, 0, 0, 0), "s", true);
	check("name=str(+0(+16(arg2)),32)", false,
	      F(A, 2, 1, PEA_FETCH_STR, 32, 0, 16, 0, 0), "name", true);
	check("ret:s32", true, F(R, 0, 0, PEA_FETCH_S32, 0, 0, 0, 0, 0),
	      "ret:s32", false);
	check("+0(+0(+0(+0(+0(arg0)))))", false,
	      F(A, 0, 4, PEA_FETCH_U64, 0, L, 0, 0, 0), "+0(+0(+0(+0(+0(arg0)))))",
	      false);
	refused("+0(+0(+0(+0(+0(+0(arg0))))))", false,
		"'+0(+0(+0(+0(+0(+0(arg0))))))': more than 4 pointer reads before the value");
	refused("ret", false, "'ret': ret is a uretprobe's");
	refused("arg6", false,
		"'arg6': arg0..arg5, ret or +OFF(VALUE) expected");
	refused("arg1:u128", false,
		"'arg1:u128': the type is u8, u16, u32, u64, s8, s16, s32, s64 or string");
	refused("+8(arg1", false, "'+8(arg1': a ')' expected");
	refused("str(arg1,0)", false,
		"'str(arg1,0)': str(VALUE,N): N is 1..1024 bytes");
	refused("arg1 x", false,
		"'arg1 x': unexpected text after the value (a :TYPE?)");
	ok(ufetch_is_expr("n=arg1:s32") && ufetch_is_expr("+8(arg2):u32") &&
	   ufetch_is_expr("str(arg0)") && !ufetch_is_expr("uprobe:/bin/x:f") &&
	   !ufetch_is_expr("--pid"),
	   "what looks like a uprobe fetch and what does not");
}

static void test_filter(void)
{
	struct kfetch fetches[PEA_FETCH_MAX];
	struct pea_pred preds[PEA_PRED_MAX];
	struct kfilter_ctx c = {
		.uprobe = true, .fetches = fetches, .max = PEA_FETCH_MAX,
		.preds = preds,
	};
	char msg[256] = "";
	int err;

	ufetch_parse("n=arg1:s32", false, &fetches[0], msg, sizeof(msg));
	c.nfetches = 1;
	err = kfilter_compile(&c, "n > -3 && (+8(arg2):u32 == 7 || str(arg0) ~ \"a*\")",
			      msg, sizeof(msg));
	ok(!err && c.nfetches == 3 && c.npreds == 5 &&
	   preds[0].fetch == 0 && preds[0].cmp == PEA_TP_OP_GT &&
	   preds[0].value == (__u64)-3 && preds[1].fetch == 1 &&
	   preds[1].value == 7 && fetches[1].f.type == PEA_FETCH_U32 &&
	   preds[2].fetch == 2 && preds[2].cmp == PEA_TP_OP_GLOB &&
	   preds[3].op == PEA_PRED_OR && preds[4].op == PEA_PRED_AND,
	   "--filter on a NAME, a +OFF(arg):u32 and a str(): 3 fetches, 5 instructions (got %d %s: %u, %u)",
	   err, msg, c.nfetches, c.npreds);
	c.nfetches = 1;
	err = kfilter_compile(&c, "+8(arg2):u32 == -1", msg, sizeof(msg));
	ok(err == -EINVAL &&
	   !strcmp(msg, "'+8(arg2):u32': -1 is out of range for u32 (0..4294967295)"),
	   "--filter: -1 on a u32 is refused (got %d %s)", err, msg);
}

int main(void)
{
	test_parse();
	test_filter();
	return host_tap_done();
}
