// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): fetch expressions as --count-by and --hist keys
 * in the tool's own tables (tools/pea/aggregate.c), from events whose
 * fetch blocks are built here as the kernel writes them: counts per
 * string, per signed integer and per enum (by name), a failed fetch on
 * a row of its own, a string the kernel cut at its fetch's size marked
 * as such, a histogram of a signed integer with its negative bucket and
 * its failed values left out; text and JSON; the usage errors (a string
 * as a histogram, an expression not given after the probe). TAP on
 * stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pea_tool.h"
#include "probe_kind.h"
#include "kfetch.h"
#include "aggregate.h"

#define HOST_TAP_NAME "aggfetch"
#include "host_tap.h"

static struct ktype_enum_val states[] = { { 0, "IDLE" }, { 1, "BUSY" } };
static struct kfetch fetches[4];
static struct trace_fmt fmt;

static void setup(void)
{
	struct kfetch *k;

	k = &fetches[0];
	snprintf(k->expr, sizeof(k->expr), "n");
	k->f.type = PEA_FETCH_S32;
	k->type.cls = KT_INT;
	k->type.size = 4;
	k->type.sgn = true;
	snprintf(k->type.name, sizeof(k->type.name), "int");
	k = &fetches[1];
	snprintf(k->expr, sizeof(k->expr), "filename");
	k->f.type = PEA_FETCH_STR;
	k->f.size = 64;
	k->str = true;
	k->type.cls = KT_CHAR_PTR;
	k->type.size = 8;
	snprintf(k->type.name, sizeof(k->type.name), "const char *");
	k = &fetches[2];
	snprintf(k->expr, sizeof(k->expr), "state");
	k->f.type = PEA_FETCH_U32;
	k->type.cls = KT_ENUM;
	k->type.size = 4;
	k->type.vals = states;
	k->type.nvals = 2;
	snprintf(k->type.name, sizeof(k->type.name), "enum st");
	k = &fetches[3];
	snprintf(k->expr, sizeof(k->expr), "str(filename,8)");
	k->f.type = PEA_FETCH_STR;
	k->f.size = 8;
	k->str = true;
	k->type.cls = KT_CHAR_PTR;
	k->type.size = 8;
	fmt.probe = "kprobe:f";
	fmt.kind = &kprobe_kind;
	fmt.args = true;
	fmt.fetches = fetches;
	fmt.nfetches = 3;
}

/* One value of a block: its status and bytes. */
struct val {
	__u8 status, step;
	const void *p;
	__u16 len;
};

static unsigned char blk[4096];

/* An event of probe 0 whose block holds @v[0..2] as the kernel lays it out. */
static void event(struct trace_event *ev, const struct val *v)
{
	struct pea_fetch_block *b = (void *)blk;
	__u32 off = sizeof(*b) + 3 * sizeof(b->values[0]), i;

	memset(ev, 0, sizeof(*ev));
	memset(blk, 0, sizeof(blk));
	off = (off + 7) & ~7U;
	b->nr = 3;
	for (i = 0; i < 3; i++) {
		b->values[i].offset = off;
		b->values[i].len = v[i].len;
		b->values[i].status = v[i].status;
		b->values[i].step = v[i].step;
		memcpy(blk + off, v[i].p, v[i].len);
		off += (v[i].len + 7) & ~7U;
	}
	b->size = off;
	ev->probe = 0;
	ev->fetch = blk;
	ev->fetch_size = off;
}

static struct val ok_int(const __s32 *x)
{
	return (struct val){ PEA_FETCH_OK, 0, x, 4 };
}

static struct val ok_str(const char *s)
{
	return (struct val){ PEA_FETCH_OK, 0, s, strlen(s) };
}

static struct val fault(__u8 step)
{
	return (struct val){ PEA_FETCH_FAULT, step, NULL, 0 };
}

static char out[65536];

/* Print @a's tables into out; its length. */
static size_t print(struct agg *a)
{
	FILE *f = fmemopen(out, sizeof(out) - 1, "w");
	size_t n;

	agg_print(a, f, 0, 0);
	n = ftell(f);
	fclose(f);
	out[n] = 0;
	return n;
}

/* On a failure, what was printed. */
/* The printed tables hold @want (case @what). */
static void has(const char *want, const char *what)
{
	ok(strstr(out, want) != NULL, "%s", what);
}

static void show(void)
{
	if (failed)
		printf("# %s\n", out);
}

static void feed(struct agg *a)
{
	static const __s32 five = 5, minus1 = -1, three = 3, seven = 7;
	static const __u32 idle = 0, busy = 1, other = 9;
	char longs[65];
	struct trace_event ev;
	struct val v[3];
	int i;

	/* n 5, "/a", BUSY x3 */
	for (i = 0; i < 3; i++) {
		v[0] = ok_int(&five);
		v[1] = ok_str("/a");
		v[2] = (struct val){ PEA_FETCH_OK, 0, &busy, 4 };
		event(&ev, v);
		agg_add(a, &ev);
	}
	/* n -1, "/bb", IDLE x2 */
	for (i = 0; i < 2; i++) {
		v[0] = ok_int(&minus1);
		v[1] = ok_str("/bb");
		v[2] = (struct val){ PEA_FETCH_OK, 0, &idle, 4 };
		event(&ev, v);
		agg_add(a, &ev);
	}
	/* n 3, a NULL filename (fault at read 0), state 9 (no name) */
	v[0] = ok_int(&three);
	v[1] = fault(0);
	v[2] = (struct val){ PEA_FETCH_OK, 0, &other, 4 };
	event(&ev, v);
	agg_add(a, &ev);
	/* n 7, a filename cut at 64 by the kernel, BUSY */
	memset(longs, 'x', 64);
	longs[64] = 0;
	v[0] = ok_int(&seven);
	v[1] = (struct val){ PEA_FETCH_TRUNCATED, 0, longs, 64 };
	v[2] = (struct val){ PEA_FETCH_OK, 0, &busy, 4 };
	event(&ev, v);
	agg_add(a, &ev);
	/* n failed at read 1, "/a", state failed at read 2 */
	v[0] = fault(1);
	v[1] = ok_str("/a");
	v[2] = fault(2);
	event(&ev, v);
	agg_add(a, &ev);
}

static struct agg *make(bool json)
{
	static const struct trace_fmt *probes[1] = { &fmt };
	struct agg_opts o;
	struct agg *a = NULL;
	int rc;

	memset(&o, 0, sizeof(o));
	o.hist[0] = "n";
	o.hist_probe[0] = -1;
	o.nhist = 1;
	o.count[0] = "filename";
	o.count[1] = "n";
	o.count[2] = "state";
	o.count_probe[0] = o.count_probe[1] = o.count_probe[2] = -1;
	o.ncount = 3;
	o.top = 10;
	o.max_keys = 100;
	o.json = json;
	rc = agg_new(&a, &o, probes, 1);
	ok(rc == 0 && a, "agg_new: --hist n --count-by filename, n, state%s (%d)",
	   json ? " --json" : "", rc);
	return a;
}

static void test_json(void)
{
	struct agg *a = make(true);
	char want[1024];

	if (!a)
		return;
	feed(a);
	print(a);
	has("{\"type\":\"count\",\"probe\":\"kprobe:f\",\"by\":\"filename\",\"source\":\"fetch\",\"complete\":true,\"lost\":0,\"count\":8,\"keys\":4,\"rows\":[{\"key\":\"/a\",\"count\":4},{\"key\":\"/bb\",\"count\":2},{\"key\":{\"fault\":0},\"count\":1},{\"key\":{\"str\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\",\"truncated\":true},\"count\":1}],",
	    "count by filename: \"/a\" 4, \"/bb\" 2, the NULL one {\"fault\":0} 1, the cut one {\"str\":...,\"truncated\":true} 1");
	has("\"by\":\"n\",\"source\":\"fetch\",\"complete\":true,\"lost\":0,\"count\":8,\"keys\":5,\"rows\":[{\"key\":5,\"count\":3},{\"key\":-1,\"count\":2},{\"key\":3,\"count\":1},{\"key\":7,\"count\":1},{\"key\":{\"fault\":1},\"count\":1}],",
	    "count by n: 5 x3, -1 x2 (signed), 3, 7 by value, the failed one {\"fault\":1}");
	has("\"by\":\"state\",\"source\":\"fetch\",\"complete\":true,\"lost\":0,\"count\":8,\"keys\":4,\"rows\":[{\"key\":\"BUSY\",\"count\":4},{\"key\":\"IDLE\",\"count\":2},{\"key\":9,\"count\":1},{\"key\":{\"fault\":2},\"count\":1}],",
	    "count by state: the enum's names, 9 as a number, the failed one {\"fault\":2}");
	show();
	snprintf(want, sizeof(want),
		 "\"key\":\"n\",\"source\":\"fetch\",\"complete\":true,\"lost\":0,\"count\":7,\"failed\":1,\"sum\":23,\"min\":-1,\"max\":7,\"avg\":3,\"buckets\":[{\"lo\":-9223372036854775808,\"hi\":0,\"count\":2},{\"lo\":2,\"hi\":4,\"count\":1},{\"lo\":4,\"hi\":8,\"count\":4}]}");
	has(want,
	    "hist of n: 7 values, the failed one left out and said (\"failed\":1), sum 23, min -1, max 7; buckets (..,0) 2, [2,4) 1, [4,8) 4");
	agg_free(a);
}

static void test_text(void)
{
	struct agg *a = make(false);

	if (!a)
		return;
	feed(a);
	print(a);
	has("kprobe:f: count by filename, 8 events, 4 keys\n     COUNT  KEY\n         4  /a\n         2  /bb\n         1  (fault@0)\n         1  xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\n",
	    "text: count by filename, the fault as (fault@0), the cut string with ...");
	has("kprobe:f: count by n, 8 events, 5 keys\n     COUNT  KEY\n         3  5\n         2  -1\n         1  3\n         1  7\n         1  (fault@1)\n",
	    "text: count by n, signed, by value, then the fault");
	has("         4  BUSY\n         2  IDLE\n         1  9\n         1  (fault@2)\n",
	    "text: count by state by name");
	ok(strstr(out, "kprobe:f: histogram of n, 7 values, 1 without one (its fetch failed)\n") != NULL &&
	   strstr(out, "min -1, avg 3, max 7, sum 23\n") != NULL,
	   "text: histogram of n, 7 values, 1 without one (its fetch failed), min -1, avg 3, max 7, sum 23");
	show();
	agg_free(a);
}

static void usage(const char *hist, const char *count, const char *want)
{
	static const struct trace_fmt *probes[1] = { &fmt };
	static char err[4096];
	struct agg_opts o;
	struct agg *a = NULL;
	size_t n;
	int rc;

	memset(&o, 0, sizeof(o));
	if (hist) {
		o.hist[0] = hist;
		o.hist_probe[0] = -1;
		o.nhist = 1;
	} else {
		o.count[0] = count;
		o.count_probe[0] = -1;
		o.ncount = 1;
	}
	o.top = 10;
	o.max_keys = 100;
	/* The message to stderr, here a file read back. */
	fflush(stderr);
	if (!freopen("/tmp/pea-host-aggfetch.err", "w+", stderr))
		return;
	rc = agg_new(&a, &o, probes, 1);
	fflush(stderr);
	rewind(stderr);
	n = fread(err, 1, sizeof(err) - 1, stderr);
	err[n] = 0;
	ok(rc == PEA_EXIT_USAGE && !a && strstr(err, want),
	   "%s %s: usage error (%d) saying '%s' (got %s)",
	   hist ? "--hist" : "--count-by", hist ? hist : count, rc, want,
	   err);
	agg_free(a);
}

/* str(EXPR,N) has a ',': a fetch's key, not a list of context keys. */
static void test_comma(void)
{
	static const struct trace_fmt *probes[1] = { &fmt };
	struct agg_opts o;
	struct agg *a = NULL;
	int rc;

	memset(&o, 0, sizeof(o));
	o.count[0] = "str(filename,8)";
	o.count_probe[0] = -1;
	o.ncount = 1;
	o.top = 10;
	o.max_keys = 100;
	o.json = true;
	fmt.nfetches = 4;
	rc = agg_new(&a, &o, probes, 1);
	ok(rc == 0 && a, "--count-by 'str(filename,8)' given after the probe: a key (%d)",
	   rc);
	if (a) {
		print(a);
		has("\"by\":\"str(filename,8)\",\"source\":\"fetch\"",
	    "its table is the fetch's");
		show();
	}
	agg_free(a);
	fmt.nfetches = 3;
}

int main(void)
{
	setup();
	test_json();
	test_text();
	test_comma();
	usage("filename", NULL,
	      "--hist 'filename': the fetch is a string; --hist takes a number");
	usage(NULL, "how->flags",
	      "a fetch expression is a key when it is given after the probe too");
	usage(NULL, "str(x,8)",
	      "a fetch expression is a key when it is given after the probe too");
	return host_tap_done();
}
