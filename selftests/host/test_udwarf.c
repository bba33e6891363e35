// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): a user function's signature from DWARF
 * (tools/pea/udwarf.c) and fetch expressions by name against it
 * (ufetch_resolve()), on the functions of selftests/pt_udwarf.h in
 * build/host/udwarf_target (built with -g next to this program):
 *   - each parameter's name, type and register by the x86-64 SysV ABI:
 *     six integer-class ones in arg0..arg5; a double and a struct of two
 *     ints by value in none, the struct taking rdi; the seventh and
 *     eighth integer ones on the stack (at sp+8 and sp+16), and a
 *     char and a 32-byte struct after them; a struct returned in memory
 *     taking rdi; typedefs kept in the names and resolved in the types;
 *   - the enum's values and signedness, the return types;
 *   - the exact struct pea_fetch of each expression: a parameter, fields
 *     at their DWARF offsets behind one and two pointers, a char array
 *     and a char * as strings, a fixed int array, a field of an anonymous
 *     member, ret at a uretprobe, argN and +OFF() still taken;
 *   - each refusal's message (a float, a struct by value, on the stack
 *     at a uretprobe, a float return, a bit field, '.' on a register, an
 *     unknown name);
 *   - the same file without its DWARF (objcopy --strip-debug): the
 *     reason, and a name refused with it; then its DWARF found again in
 *     a debug file named by its build-id (PEA_DEBUG_DIR/.build-id/XX/
 *     REST.debug, objcopy --only-keep-debug), and in one its
 *     .gnu_debuglink names (its CRC checked: another file of that name
 *     is not taken).
 * TAP on stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pea_tool.h"
#include "udwarf.h"
#include "ufetch.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define HOST_TAP_NAME "udwarf"
#include "host_tap.h"
#include "host_fetch.h"

#define A	PEA_FETCH_BASE_ARG
#define R	PEA_FETCH_BASE_RET
#define SP	PEA_FETCH_BASE_SP
#define L	PEA_FETCH_F_LOAD

static char target[4096];

static void param_is(const struct ksig *s, unsigned int i, const char *name,
		     const char *type, int reg, const char *why)
{
	const struct ksig_param *p = i < s->nparams ? &s->params[i] : NULL;
	const char *w = usig_param_why(s, i, true);

	ok(p && !strcmp(p->name, name) && !strcmp(p->type.name, type) &&
	   p->reg == reg && ((!why && !w) || (why && w && !strcmp(w, why))),
	   "%s: parameter %u is %s %s in arg%d%s%s (got %s %s %d %s)",
	   s->func, i, type, name, reg, why ? ", " : "", why ? why : "",
	   p ? p->type.name : "-", p ? p->name : "-", p ? p->reg : -9,
	   w ? w : "");
}

static void fetch_is(const struct ksig *s, const char *expr, bool ret,
		     struct pea_fetch want, bool str, unsigned int nelem,
		     const char *type)
{
	struct kfetch k;
	char why[512] = "";
	int err = ufetch_resolve(s, NULL, expr, ret, &k, why, sizeof(why));

	ok(!err && !memcmp(&k.f, &want, sizeof(want)) && k.str == str &&
	   k.nelem == nelem && !strcmp(k.type.name, type),
	   "'%s': base %u arg %u deref %u type %u size %u flags %u off %d,%d,%d, %s%s (got %s%s: %u %u %u %u %u %u %d,%d,%d %s)",
	   expr, want.base, want.arg, want.nr_deref, want.type, want.size,
	   want.flags, want.offset[0], want.offset[1], want.offset[2], type,
	   str ? " string" : "", err ? "error " : "", why, k.f.base, k.f.arg,
	   k.f.nr_deref, k.f.type, k.f.size, k.f.flags, k.f.offset[0],
	   k.f.offset[1], k.f.offset[2], k.type.name);
	if (!err)
		kfetch_release(&k);
}

/* One fetch expression and the struct pea_fetch it must resolve to. */
struct fcase {
	const char *expr;
	bool ret;		/* at a uretprobe */
	__u8 base, arg, nd, type;
	__u16 size;
	__u8 flags;
	__s32 off[3];
	bool str;		/* a string */
	unsigned int nelem;	/* an array's elements */
	const char *tname;
};

static void fetches_are(const struct ksig *s, const struct fcase *c,
			size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		fetch_is(s, c[i].expr, c[i].ret,
			 host_fetch(c[i].base, c[i].arg, c[i].nd, c[i].type,
				    c[i].size, c[i].flags, c[i].off[0],
				    c[i].off[1], c[i].off[2], 0, 0),
			 c[i].str, c[i].nelem, c[i].tname);
}

#define FETCHES_ARE(s, tab) fetches_are(s, tab, sizeof(tab) / sizeof(tab[0]))

static const struct fcase fn_fetches[] = {
	{ "i", false, A, 0, 0, PEA_FETCH_S32, 0, 0, { 0, 0, 0 }, false, 0, "int" },
	{ "u", false, A, 1, 0, PEA_FETCH_U32, 0, 0, { 0, 0, 0 }, false, 0, "unsigned int" },
	{ "c", false, A, 2, 0, PEA_FETCH_S32, 0, 0, { 0, 0, 0 }, false, 0, "enum pt_ud_color" },
	{ "b", false, A, 3, 0, PEA_FETCH_U8, 0, 0, { 0, 0, 0 }, false, 0, "_Bool" },
	{ "s", false, A, 4, 0, PEA_FETCH_STR, 64, 0, { 0, 0, 0 }, true, 0, "const char *" },
	{ "o", false, A, 5, 0, PEA_FETCH_U64, 0, 0, { 0, 0, 0 }, false, 0, "pt_ud_outer_t *" },
	{ "o->id", false, A, 5, 0, PEA_FETCH_S64, 0, L, { 0, 0, 0 }, false, 0, "long int" },
	{ "o->flags", false, A, 5, 0, PEA_FETCH_U16, 0, L, { 8, 0, 0 }, false, 0, "short unsigned int" },
	{ "o->in", false, A, 5, 0, PEA_FETCH_U64, 0, L, { 16, 0, 0 }, false, 0, "struct pt_ud_inner *" },
	{ "o->in->depth", false, A, 5, 1, PEA_FETCH_S32, 0, L, { 16, 0, 0 }, false, 0, "int" },
	{ "o->in->label", false, A, 5, 2, PEA_FETCH_STR, 64, 0, { 16, 8, 0 }, true, 0, "const char *" },
	{ "str(o->in->label,5)", false, A, 5, 2, PEA_FETCH_STR, 5, 0, { 16, 8, 0 }, true, 0, "const char *" },
	{ "o->tag", false, A, 5, 0, PEA_FETCH_STR, 8, 0, { 24, 0, 0 }, true, 0, "char[8]" },
	{ "o->vals", false, A, 5, 0, PEA_FETCH_ARRAY, 12, 0, { 32, 0, 0 }, false, 3, "int" },
	{ "o->anon_x", false, A, 5, 0, PEA_FETCH_S32, 0, L, { 48, 0, 0 }, false, 0, "int" },
	{ "ret", true, R, 0, 0, PEA_FETCH_S32, 0, 0, { 0, 0, 0 }, false, 0, "int" },
	/* The register syntax still: argN, +OFF(), a :TYPE. */
	{ "arg1", false, A, 1, 0, PEA_FETCH_U64, 0, 0, { 0, 0, 0 }, false, 0, "u64" },
	{ "+8(arg5):u16", false, A, 5, 0, PEA_FETCH_U16, 0, L, { 8, 0, 0 }, false, 0, "u16" },
	{ "ret:s64", true, R, 0, 0, PEA_FETCH_S64, 0, 0, { 0, 0, 0 }, false, 0, "s64" },
};

static const struct fcase stack_fetches[] = {
	{ "f", false, SP, 0, 0, PEA_FETCH_S64, 0, L, { 8, 0, 0 }, false, 0, "long int" },
	{ "g", false, SP, 0, 0, PEA_FETCH_S32, 0, L, { 16, 0, 0 }, false, 0, "int" },
	{ "n", false, SP, 0, 0, PEA_FETCH_U8, 0, L, { 24, 0, 0 }, false, 0, "unsigned char" },
	{ "big.v", false, SP, 0, 0, PEA_FETCH_ARRAY, 32, 0, { 32, 0, 0 }, false, 4, "long int" },
};

static void refused(const struct ksig *s, const char *sig_why,
		    const char *expr, bool ret, const char *msg)
{
	struct kfetch k;
	char why[512] = "";
	int err = ufetch_resolve(s, sig_why, expr, ret, &k, why, sizeof(why));

	ok(err == -EINVAL && !strcmp(why, msg), "'%s' refused: %s (got %d %s)",
	   expr, msg, err, why);
}

static struct ksig *load(const char *path, const char *func)
{
	struct ksig *s = NULL;
	char why[512] = "";
	int err = usig_load(path, func, &s, why, sizeof(why));

	ok(!err && s, "%s: its DWARF signature loaded (%d %s)", func, err,
	   why);
	return err ? NULL : s;
}

static void test_fn(void)
{
	struct ksig *s = load(target, "pt_ud_fn");
	const struct ksig_param *c;
	unsigned int i;
	bool names = true;
	static const struct { const char *n; long long v; } vals[] = {
		{ "PT_UD_RED", -1 }, { "PT_UD_GREEN", 1 }, { "PT_UD_BLUE", 7 },
	};

	if (!s)
		return;
	ok(s->nparams == 6 && !s->variadic && !strcmp(s->ret.name, "int") &&
	   s->ret.cls == KT_INT && s->ret.sgn && s->ret.size == 4,
	   "pt_ud_fn: 6 parameters, returns a signed 4-byte int (%u, %s)",
	   s->nparams, s->ret.name);
	param_is(s, 0, "i", "int", 0, NULL);
	param_is(s, 1, "u", "unsigned int", 1, NULL);
	param_is(s, 2, "c", "enum pt_ud_color", 2, NULL);
	param_is(s, 3, "b", "_Bool", 3, NULL);
	param_is(s, 4, "s", "const char *", 4, NULL);
	param_is(s, 5, "o", "pt_ud_outer_t *", 5, NULL);
	c = &s->params[2];
	for (i = 0; i < 3; i++)
		names &= i < c->type.nvals &&
			 !strcmp(c->type.vals[i].name, vals[i].n) &&
			 c->type.vals[i].val == vals[i].v;
	ok(c->type.cls == KT_ENUM && c->type.sgn && c->type.size == 4 &&
	   c->type.nvals == 3 && names,
	   "enum pt_ud_color: signed, 4 bytes, PT_UD_RED -1, PT_UD_GREEN 1, PT_UD_BLUE 7");
	ok(s->params[3].type.cls == KT_BOOL && s->params[1].type.cls == KT_INT &&
	   !s->params[1].type.sgn && s->params[4].type.cls == KT_CHAR_PTR &&
	   s->params[5].type.cls == KT_PTR,
	   "bool, unsigned int, char * and a pointer classified");

	FETCHES_ARE(s, fn_fetches);

	refused(s, NULL, "o->bits", false, "'bits' is a bit field (not fetched)");
	refused(s, NULL, "o.id", false,
		"'.id': pt_ud_outer_t * is in a register, not in memory (use -> on a pointer)");
	refused(s, NULL, "o->nope", false, "struct pt_ud_outer has no field 'nope'");
	refused(s, NULL, "zz", false,
		"'zz': pt_ud_fn has no parameter 'zz' (pea list -v shows them)");
	refused(s, NULL, "ret", false, "'ret': ret is a uretprobe's");
	refused(s, NULL, "i->x", false, "'->x': int is not a pointer");
	ksig_free(s);
}

static void test_refuse(void)
{
	struct ksig *s = load(target, "pt_ud_refuse");

	if (!s)
		return;
	param_is(s, 0, "d", "double", -1, "SSE register");
	param_is(s, 1, "pr", "struct pt_ud_pair", -1, "struct by value");
	param_is(s, 2, "a", "long int", 1, NULL);
	param_is(s, 3, "b", "long int", 2, NULL);
	param_is(s, 4, "c", "long int", 3, NULL);
	param_is(s, 5, "e", "long int", 4, NULL);
	param_is(s, 6, "h", "long int", 5, NULL);
	param_is(s, 7, "f", "long int", -1, NULL);
	param_is(s, 8, "g", "long int", -1, NULL);
	ok(s->params[7].stack_off == 8 && s->params[8].stack_off == 16,
	   "pt_ud_refuse: f and g on the stack at sp+8 and sp+16 (got %d %d)",
	   s->params[7].stack_off, s->params[8].stack_off);
	fetch_is(s, "a", false, host_fetch(A, 1, 0, PEA_FETCH_S64, 0, 0, 0, 0, 0, 0, 0),
		 false, 0, "long int");
	fetch_is(s, "g", false, host_fetch(SP, 0, 0, PEA_FETCH_S64, 0, L, 16, 0, 0, 0, 0),
		 false, 0, "long int");
	refused(s, NULL, "d", false,
		"'d': parameter 'd' (double) is passed in an SSE register (xmm, floating point): a uprobe's fetches read the integer registers and memory, and the kernel gives a uprobe no SSE registers to read (struct pt_regs has none): not fetched");
	refused(s, NULL, "pr", false,
		"'pr': parameter 'pr' (struct pt_ud_pair) is a struct or union passed by value: not fetched");
	refused(s, NULL, "g", true,
		"'g': parameter 'g' (long int) is on the stack, and a uretprobe reads its fetches at the return, where the function may have changed its stack copy and the stack pointer has moved: fetch it with a uprobe");
	refused(s, NULL, "ret", true,
		"'ret': ret (double) is returned in xmm0 (floating point), not in rax: not fetched");
	ksig_free(s);

	s = load(target, "pt_ud_big");
	if (!s)
		return;
	param_is(s, 0, "x", "pt_ud_len_t", 1, NULL);
	ok(s->params[0].type.cls == KT_INT && !s->params[0].type.sgn &&
	   s->params[0].type.size == 8,
	   "pt_ud_len_t: the typedef resolved to an unsigned 8-byte integer");
	refused(s, NULL, "ret", true,
		"'ret': ret (struct pt_ud_big) is returned in memory (rax holds its address): not fetched");
	ksig_free(s);
}

/* Parameters on the stack: offsets from the entry's stack pointer. */
static void test_stack(void)
{
	struct ksig *s = load(target, "pt_ud_stack");

	if (!s)
		return;
	param_is(s, 5, "k", "long int", 5, NULL);
	param_is(s, 6, "f", "long int", -1, NULL);
	param_is(s, 7, "g", "int", -1, NULL);
	param_is(s, 8, "n", "unsigned char", -1, NULL);
	param_is(s, 9, "big", "struct pt_ud_big", -1, NULL);
	ok(s->params[6].stack_off == 8 && s->params[7].stack_off == 16 &&
	   s->params[8].stack_off == 24 && s->params[9].stack_off == 32,
	   "pt_ud_stack: f, g, n, big at sp+8, 16, 24, 32 (got %d %d %d %d)",
	   s->params[6].stack_off, s->params[7].stack_off,
	   s->params[8].stack_off, s->params[9].stack_off);
	FETCHES_ARE(s, stack_fetches);
	refused(s, NULL, "big", false,
		"struct pt_ud_big is not fetched as a value (integers, enums, bool, pointers and strings are; name one of its fields)");
	ksig_free(s);
}

/*
 * The stripped copy @stripped's DWARF in a debug file named by its
 * build-id, as Debian's -dbgsym packages install them: found there.
 */
static void debug_file(const char *stripped)
{
	char dir[] = "/tmp/pea-udwarf-dbg-XXXXXX", cmd[8192], why[512] = "";
	struct ksig *s = NULL;
	int err;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	/* readelf -n prints "Build ID: HEX"; the file goes to XX/REST.debug. */
	snprintf(cmd, sizeof(cmd),
		 "id=$(readelf -n '%s' | sed -n 's/.*Build ID: *//p') && "
		 "[ ${#id} -gt 2 ] && mkdir -p '%s/.build-id/'${id%%${id#??}} && "
		 "objcopy --only-keep-debug '%s' '%s/.build-id/'${id%%${id#??}}/${id#??}.debug",
		 stripped, dir, target, dir);
	ok(system(cmd) == 0, "debug file by build-id written under %s", dir);
	setenv("PEA_DEBUG_DIR", dir, 1);
	err = usig_load(stripped, "pt_ud_fn", &s, why, sizeof(why));
	ok(!err && s && s->nparams == 6 && s->params[5].reg == 5 &&
	   !strcmp(s->params[5].type.name, "pt_ud_outer_t *"),
	   "the stripped file's DWARF found by its build-id: pt_ud_fn's o in arg5 (%d %s)",
	   err, why);
	ksig_free(s);
	unsetenv("PEA_DEBUG_DIR");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		ok(0, "rm -rf %s", dir);
}

/*
 * The stripped copy's DWARF in a debug file its .gnu_debuglink names,
 * next to it (objcopy --add-gnu-debuglink): found; a debug file of that
 * name with another CRC (another program's): not taken.
 */
static void debug_link(const char *stripped)
{
	char dir[] = "/tmp/pea-udwarf-lnk-XXXXXX", cmd[16384], why[512] = "",
	     good[4200], bad[4200], self[4096];
	struct ksig *s = NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int err;

	if (!mkdtemp(dir) || n <= 0) {
		ok(0, "mkdtemp, /proc/self/exe");
		return;
	}
	self[n] = 0;
	snprintf(good, sizeof(good), "%s/good", dir);
	snprintf(bad, sizeof(bad), "%s/bad", dir);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && objcopy --only-keep-debug '%s' good.debug && "
		 "objcopy --only-keep-debug '%s' bad.debug && "
		 "cp '%s' good && cp '%s' bad && "
		 "objcopy --add-gnu-debuglink=good.debug good && "
		 "objcopy --add-gnu-debuglink=good.debug bad && "
		 "mkdir .debug && mv bad.debug .debug/good.debug",
		 dir, target, self, stripped, stripped);
	ok(system(cmd) == 0, "debug files and links written under %s", dir);
	err = usig_load(good, "pt_ud_fn", &s, why, sizeof(why));
	ok(!err && s && s->nparams == 6 && s->params[2].reg == 2 &&
	   !strcmp(s->params[2].type.name, "enum pt_ud_color"),
	   "the stripped file's DWARF found by its .gnu_debuglink next to it: pt_ud_fn's c in arg2 (%d %s)",
	   err, why);
	ksig_free(s);
	s = NULL;
	/*
	 * bad links good.debug too; with that gone, .debug/good.debug (this
	 * program's DWARF, another CRC) is where it would be found: taken,
	 * pt_ud_fn would be missing from it (-ENOENT), not the file (-ENODATA).
	 */
	snprintf(cmd, sizeof(cmd), "rm '%s/good.debug'", dir);
	ok(system(cmd) == 0, "the matching debug file removed");
	err = usig_load(bad, "pt_ud_fn", &s, why, sizeof(why));
	ok(err == -ENODATA && !s,
	   "a debug file of the linked name with another CRC is not taken (%d %s)",
	   err, why);
	ksig_free(s);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		ok(0, "rm -rf %s", dir);
}

static void test_missing(void)
{
	char path[] = "/tmp/pea-udwarf-XXXXXX", cmd[8192], why[512] = "",
	     want[5120];
	struct ksig *s = NULL;
	int fd = mkstemp(path), err;

	err = usig_load(target, "pt_ud_none", &s, why, sizeof(why));
	snprintf(want, sizeof(want),
		 "no function 'pt_ud_none' with code in the DWARF of %s (inlined everywhere, or from a file built without -g)",
		 target);
	ok(err == -ENOENT && !s && !strcmp(why, want),
	   "a function not in the DWARF: -ENOENT, the reason (%d %s)", err,
	   why);
	if (fd < 0) {
		ok(0, "mkstemp");
		return;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "objcopy --strip-debug '%s' '%s'", target,
		 path);
	ok(system(cmd) == 0, "objcopy --strip-debug");
	err = usig_load(path, "pt_ud_fn", &s, why, sizeof(why));
	snprintf(want, sizeof(want),
		 "no DWARF in %s (built without -g, or stripped; no debug file by its build-id in /usr/lib/debug/.build-id or by its .gnu_debuglink either)",
		 path);
	ok(err == -ENODATA && !s && !strcmp(why, want),
	   "no DWARF: -ENODATA, the reason (%d %s)", err, why);
	snprintf(cmd, sizeof(cmd),
		 "'o->id': %s; name registers instead (argN[:TYPE], +OFF(argN):TYPE, str(argN))",
		 want);
	refused(NULL, want, "o->id", false, cmd);
	fetch_is(NULL, "+8(arg5):u16", false,
		 host_fetch(A, 5, 0, PEA_FETCH_U16, 0, L, 8, 0, 0, 0, 0),
		 false, 0, "u16");
	debug_file(path);
	debug_link(path);
	unlink(path);
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", target, sizeof(target) - 1);
	char *slash;

	if (n <= 0)
		return 1;
	target[n] = 0;
	slash = strrchr(target, '/');
	snprintf(slash + 1, sizeof(target) - (slash + 1 - target),
		 "udwarf_target");
	test_fn();
	test_refuse();
	test_stack();
	test_missing();
	return host_tap_done();
}
