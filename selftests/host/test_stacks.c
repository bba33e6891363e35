// SPDX-License-Identifier: GPL-2.0
/*
 * Host test (no kernel): the stack set of pea profile and pea trace
 * --off-cpu (tools/pea/stacks.c) and its folded text (folded.c) and SVG
 * (flame_svg.c): merging by identical frames (a frame is a name and a
 * kind), totals, both orders, the refusals, growth past the tables'
 * first sizes; the exact folded text of a known set, its round trip, a
 * flamegraph.pl-style input with odd names (spaces, templates, '&', '<',
 * UTF-8, Windows line ends, duplicates, "_[k]" and module frames) read
 * to exact counts, each malformed line refused with its number; the SVG's
 * titles, escaping and byte-for-byte repeatability. The SVG's geometry
 * and its rendering are test_flame.sh's. TAP on stdout.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stacks.h"

#define HOST_TAP_NAME "stacks"
#include "host_tap.h"

#define U PEA_FRAME_USER
#define K PEA_FRAME_KERNEL
#define M PEA_FRAME_MODULE
#define P PEA_FRAME_PROCESS

static char *folded_of(const struct pea_stack_set *set)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret = pea_stacks_write_folded(set, f);

	fclose(f);
	if (ret) {
		free(buf);
		return NULL;
	}
	return buf;
}

static char *svg_of(const struct pea_stack_set *set, const char *title)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret = pea_stacks_write_svg(set, f, title, "samples");

	fclose(f);
	if (ret) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Reads @text into a new set; NULL and the message in @err if refused. */
static struct pea_stack_set *parse(const char *text, char *err, size_t errlen)
{
	struct pea_stack_set *set = pea_stacks_new();
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	err[0] = '\0';
	ret = pea_stacks_read_folded(set, f, err, errlen);
	fclose(f);
	if (ret) {
		pea_stacks_free(set);
		return NULL;
	}
	return set;
}

static int count_of(const char *hay, const char *needle)
{
	int c = 0;

	while ((hay = strstr(hay, needle))) {
		c++;
		hay++;
	}
	return c;
}

static void test_set(void)
{
	struct pea_stack_set *set = pea_stacks_new();
	const char *ab[] = { "prog", "main", "a" };
	char m0[] = "prog", m1[] = "main", m2[] = "a";
	const char *dup[] = { m0, m1, m2 };
	const enum pea_frame_kind kab[] = { P, U, U };
	const enum pea_frame_kind kak[] = { P, U, K };
	const char *b[] = { "prog", "main", "b" };
	const char *many[PEA_STACKS_MAX_FRAMES + 1];
	enum pea_frame_kind kmany[PEA_STACKS_MAX_FRAMES + 1];
	const char *empty[] = { "prog", "" };
	enum pea_frame_kind bad[] = { P, 7 };
	struct pea_stack_view *v;
	unsigned int n, i;
	int ret;

	ok(set && pea_stacks_total(set) == 0 && pea_stacks_count(set) == 0,
	   "a new set is empty");
	ok(pea_stacks_add(set, ab, kab, 3, 5) == 0, "add prog;main;a 5");
	ok(pea_stacks_add(set, dup, kab, 3, 7) == 0,
	   "add the same frames from other strings, 7");
	ok(pea_stacks_count(set) == 1 && pea_stacks_total(set) == 12,
	   "equal frames merge: 1 stack, total 12 (got %u, %" PRIu64 ")",
	   pea_stacks_count(set), pea_stacks_total(set));
	ok(pea_stacks_add(set, ab, kak, 3, 12) == 0 &&
	   pea_stacks_count(set) == 2,
	   "the same names with a kernel leaf are another stack");
	ret = pea_stacks_add(set, b, kab, 3, 30);
	ret = ret ? ret : pea_stacks_add(set, ab, kab, 2, 1);
	ok(!ret && pea_stacks_count(set) == 4 && pea_stacks_total(set) == 55,
	   "4 stacks, total 55 (got %u, %" PRIu64 ")", pea_stacks_count(set),
	   pea_stacks_total(set));

	for (i = 0; i <= PEA_STACKS_MAX_FRAMES; i++) {
		many[i] = "f";
		kmany[i] = U;
	}
	ok(pea_stacks_add(set, ab, kab, 0, 1) == -EINVAL, "0 frames: EINVAL");
	ok(pea_stacks_add(set, many, kmany, PEA_STACKS_MAX_FRAMES + 1, 1) ==
	   -EINVAL, "513 frames: EINVAL");
	ok(pea_stacks_add(set, many, kmany, PEA_STACKS_MAX_FRAMES, 1) == 0,
	   "512 frames: accepted");
	ok(pea_stacks_add(set, empty, kab, 2, 1) == -EINVAL,
	   "an empty name: EINVAL");
	ok(pea_stacks_add(set, ab, bad, 2, 1) == -EINVAL,
	   "an unknown kind: EINVAL");
	ret = pea_stacks_add(set, ab, kab, 3, UINT64_MAX - 55);
	ok(ret == -EOVERFLOW && pea_stacks_total(set) == 56,
	   "a weight past 2^64 - 1 in total: EOVERFLOW, total kept 56 (%d)",
	   ret);

	v = pea_stacks_sorted(set, &n);
	ok(v && n == 5 && v[0].weight == 30 && !strcmp(v[0].frames[2], "b") &&
	   v[1].weight == 12 && v[1].kinds[2] == U &&
	   v[2].weight == 12 && v[2].kinds[2] == K &&
	   v[3].weight == 1 && v[3].nframes == PEA_STACKS_MAX_FRAMES &&
	   v[4].weight == 1 && v[4].nframes == 2,
	   "sorted: heaviest first, ties by frames (\"f\" before \"prog\") then kinds");
	free(v);
	v = pea_stacks_by_frames(set, &n);
	ok(v && n == 5 && !strcmp(v[0].frames[0], "f") &&
	   v[1].nframes == 2 && v[2].nframes == 3 && v[2].kinds[2] == U &&
	   v[3].kinds[2] == K && !strcmp(v[4].frames[2], "b"),
	   "by frames: names in strcmp order, a prefix first, then kinds");
	free(v);
	pea_stacks_free(set);
}

static void test_growth(void)
{
	struct pea_stack_set *set = pea_stacks_new();
	char names[3][32];
	const char *f[3] = { names[0], names[1], names[2] };
	const enum pea_frame_kind k[3] = { P, U, K };
	int i, pass, bad = 0;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < 20000; i++) {
			snprintf(names[0], sizeof(names[0]), "proc%d", i % 7);
			snprintf(names[1], sizeof(names[1]), "fn%d", i % 1000);
			snprintf(names[2], sizeof(names[2]), "k%d", i);
			if (pea_stacks_add(set, f, k, 3, i + 1))
				bad++;
		}
	}
	ok(!bad && pea_stacks_count(set) == 20000 &&
	   pea_stacks_total(set) == 2ULL * 20000 * 20001 / 2,
	   "20000 stacks added twice: 20000 stacks, total %llu (got %u, %" PRIu64 ")",
	   2ULL * 20000 * 20001 / 2, pea_stacks_count(set),
	   pea_stacks_total(set));
	pea_stacks_free(set);
}

static const char expect_folded[] =
	"bash;main;read_cmd;__libc_read;entry_SYSCALL_64_after_hwframe_[k];"
	"ksys_read_[k];ext4_file_read_iter [ext4]_[k] 4\n"
	"bash;main;std::map<int, a:b>::find 2\n"
	"bash;main;std::map<int, a:b>::find;memcmp 1\n";

static void test_folded(void)
{
	struct pea_stack_set *set = pea_stacks_new(), *back;
	const char *s1[] = { "bash", "main", "read_cmd", "__libc_read",
			     "entry_SYSCALL_64_after_hwframe", "ksys_read",
			     "ext4_file_read_iter [ext4]" };
	const enum pea_frame_kind k1[] = { P, U, U, U, K, K, M };
	const char *s2[] = { "bash", "main", "std::map<int, a;b>::find" };
	const char *s3[] = { "bash", "main", "std::map<int, a;b>::find",
			     "memcmp" };
	const enum pea_frame_kind k2[] = { P, U, U, U };
	struct pea_stack_view *v;
	char err[128], *text, *again;
	unsigned int n;

	pea_stacks_add(set, s3, k2, 4, 1);
	pea_stacks_add(set, s1, k1, 7, 4);
	pea_stacks_add(set, s2, k2, 3, 2);
	text = folded_of(set);
	ok(text && !strcmp(text, expect_folded),
	   "folded text: sorted by frames, kernel and module frames _[k], ';' in a name as ':'");
	if (text && strcmp(text, expect_folded))
		printf("# got:\n%s", text);
	back = text ? parse(text, err, sizeof(err)) : NULL;
	ok(back && pea_stacks_count(back) == 3 && pea_stacks_total(back) == 7,
	   "its re-parse: 3 stacks, 7 in total %s", err);
	v = back ? pea_stacks_by_frames(back, &n) : NULL;
	ok(v && n == 3 && v[0].nframes == 7 && v[0].kinds[0] == P &&
	   v[0].kinds[3] == U && v[0].kinds[4] == K && v[0].kinds[6] == M &&
	   !strcmp(v[0].frames[6], "ext4_file_read_iter [ext4]") &&
	   !strcmp(v[0].frames[5], "ksys_read") && v[0].weight == 4,
	   "the kinds come back from the marks, the marks are not in the names");
	free(v);
	again = back ? folded_of(back) : NULL;
	ok(again && text && !strcmp(again, text),
	   "the re-parse writes the same text");
	free(again);
	free(text);
	pea_stacks_free(back);
	pea_stacks_free(set);
}

/* As flamegraph.pl's collapsers write it, with what they let through. */
static const char odd_input[] =
	"java;start_thread;Ljava/lang/Thread:::run;Interpreter 10\n"
	"java;start_thread;Ljava/lang/Thread:::run;Interpreter 5\r\n"
	"\n"
	"perl;main::foo;Foo::Bar::baz 3\n"
	"a.out;main;operator() (anonymous namespace)::f<int, long>   7\n"
	"a.out;main;a & b < c > \"d\" 'e';[unknown] 2\n"
	"a.out;main;na\xc3\xafve_\xce\xbb;memcpy_[k] 1\n"
	"swapper_[k];do_idle_[k];intel_idle [intel_idle]_[k] 100\n"
	"x;[libc.so.6+0x1234];jitted_[j];x_[k]_[k] 4\n"
	"a.out;main;a & b < c > \"d\" 'e';[unknown] 3\n";

static void test_odd(void)
{
	struct pea_stack_set *set, *back;
	struct pea_stack_view *v;
	char err[128], *text;
	unsigned int n, i;
	int seen = 0;

	set = parse(odd_input, err, sizeof(err));
	ok(set && pea_stacks_count(set) == 7 && pea_stacks_total(set) == 135,
	   "flamegraph.pl-style input: 7 stacks (duplicates summed, CRLF and blank lines), 135 in total (got %u, %" PRIu64 ") %s",
	   set ? pea_stacks_count(set) : 0,
	   set ? pea_stacks_total(set) : 0, err);
	if (!set)
		return;
	v = pea_stacks_by_frames(set, &n);
	for (i = 0; v && i < n; i++) {
		const struct pea_stack_view *s = &v[i];

		if (s->nframes == 3 && !strcmp(s->frames[2],
			"operator() (anonymous namespace)::f<int, long>  ") &&
		    s->weight == 7)
			seen |= 1;	/* the separator is one blank */
		if (s->nframes == 4 && !strcmp(s->frames[2],
					       "a & b < c > \"d\" 'e'") &&
		    s->weight == 5 && s->kinds[3] == U)
			seen |= 2;
		if (s->nframes == 4 &&
		    !strcmp(s->frames[2], "na\xc3\xafve_\xce\xbb") &&
		    !strcmp(s->frames[3], "memcpy") && s->kinds[3] == K)
			seen |= 4;
		if (s->nframes == 3 && s->kinds[0] == K && s->kinds[1] == K &&
		    s->kinds[2] == M && s->weight == 100 &&
		    !strcmp(s->frames[0], "swapper"))
			seen |= 8;	/* kernel at the root: no process */
		if (s->nframes == 4 && !strcmp(s->frames[2], "jitted_[j]") &&
		    s->kinds[2] == U && !strcmp(s->frames[3], "x_[k]") &&
		    s->kinds[3] == K && s->kinds[0] == P)
			seen |= 16;	/* other marks are names */
		if (s->nframes == 4 && s->weight == 15 &&
		    !strcmp(s->frames[2], "Ljava/lang/Thread:::run"))
			seen |= 32;
	}
	free(v);
	ok(seen == 63, "names with spaces, '&<>\"', UTF-8, marks and weights as written (seen 0x%x of 0x3f)",
	   seen);
	text = folded_of(set);
	back = text ? parse(text, err, sizeof(err)) : NULL;
	if (back) {
		char *again = folded_of(back);

		ok(again && !strcmp(again, text) &&
		   pea_stacks_count(back) == 7 &&
		   pea_stacks_total(back) == 135,
		   "written and read again: the same 7 stacks, 135, the same text");
		free(again);
	} else {
		ok(0, "written and read again: %s", err);
	}
	free(text);
	pea_stacks_free(back);
	pea_stacks_free(set);
}

static void refused(const char *text, const char *msg)
{
	struct pea_stack_set *set;
	char err[128];

	set = parse(text, err, sizeof(err));
	ok(!set && !strcmp(err, msg), "refused: '%s' (got '%s')", msg, err);
	pea_stacks_free(set);
}

static void test_refusals(void)
{
	char big[PEA_STACKS_MAX_FRAMES * 2 + 16];
	int i;

	refused("a;b 1\na;b\n", "line 2: no weight at the end of the line");
	refused("a;b 1\n\na;;b 3\n", "line 3: an empty frame");
	refused(";a 3\n", "line 1: an empty frame");
	refused("a;b 1.5\n", "line 1: fractional weights are not supported");
	refused("a;b1\n",
		"line 1: the weight is not separated from the stack by a space");
	refused("5\n",
		"line 1: the weight is not separated from the stack by a space");
	refused(" 5\n", "line 1: no frames before the weight");
	refused("a 18446744073709551616\n",
		"line 1: the weight does not fit in 64 bits");
	refused("a 18446744073709551615\nb 1\n",
		"line 2: the weights' sum does not fit in 64 bits");
	for (i = 0; i <= PEA_STACKS_MAX_FRAMES; i++)
		memcpy(big + 2 * i, "f;", 2);
	strcpy(big + 2 * PEA_STACKS_MAX_FRAMES + 1, " 1\n");
	refused(big, "line 1: more frames than PEA_STACKS_MAX_FRAMES (512)");
}

static void test_svg(void)
{
	struct pea_stack_set *set = pea_stacks_new();
	const char *s1[] = { "prog", "main", "a<b>&\"c\"", "spin" };
	const char *s2[] = { "prog", "main", "b", "bad\xff\x01utf8" };
	const enum pea_frame_kind k[] = { P, U, U, K };
	char *svg, *again;

	pea_stacks_add(set, s1, k, 4, 3);
	pea_stacks_add(set, s2, k, 4, 7);
	svg = svg_of(set, "t<1>");
	again = svg_of(set, "t<1>");
	ok(svg && !strncmp(svg, "<?xml ", 6) && strstr(svg, "</svg>\n"),
	   "an SVG document");
	ok(svg && again && !strcmp(svg, again),
	   "the same set writes the same bytes");
	ok(svg && strstr(svg, "<title>a&lt;b&gt;&amp;&quot;c&quot; (3 samples, 30.00%)</title>"),
	   "a title: the escaped name, its weight and share");
	ok(svg && strstr(svg, "<title>bad&#xFFFD;&#xFFFD;utf8 (7 samples, 70.00%)</title>"),
	   "bytes that are not UTF-8 or not XML characters become U+FFFD");
	ok(svg && strstr(svg, "<title>all (10 samples, 100.00%)</title>") &&
	   strstr(svg, "<title>main (10 samples, 100.00%)</title>"),
	   "the root and merged prefixes carry the sum");
	ok(svg && count_of(svg, "<g class=\"f\"") == 7,
	   "7 frames: all, prog, main, two children, two leaves (got %d)",
	   svg ? count_of(svg, "<g class=\"f\"") : -1);
	ok(svg && strstr(svg, ">t&lt;1&gt;</text>"), "the escaped title");
	free(svg);
	free(again);
	svg = svg_of(set, "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789");
	ok(svg && strstr(svg, ">0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567..</text>"),
	   "a title past 90 characters is cut to 88 and \"..\", clear of the buttons");
	free(svg);
	pea_stacks_free(set);
}

/* A frame of 1 in 2^20 is 0.001 px: not drawn, nor its children; said. */
static void test_svg_narrow(void)
{
	struct pea_stack_set *set = pea_stacks_new();
	const char *big[] = { "prog", "main", "hot" };
	const char *tiny[] = { "prog", "main", "cold", "colder" };
	const enum pea_frame_kind k[] = { P, U, U, U };
	char *svg;

	pea_stacks_add(set, big, k, 3, (1 << 20) - 1);
	pea_stacks_add(set, tiny, k, 4, 1);
	svg = svg_of(set, NULL);
	ok(svg && count_of(svg, "<g class=\"f\"") == 4 &&
	   !strstr(svg, "<title>cold") && !strstr(svg, "<title>colder"),
	   "a frame narrower than 0.1 px is not drawn, nor what stands on it");
	ok(svg && strstr(svg, ">frames not drawn: 1 (narrower than 0.1 px), nor what stands on them</text>"),
	   "the header says how many were left out");
	ok(svg && strstr(svg, "<title>main (1048576 samples, 100.00%)</title>") &&
	   strstr(svg, ">Flame graph</text>"),
	   "their weight stays in their parents; no title: \"Flame graph\"");
	free(svg);
	pea_stacks_free(set);
}

/*
 * 3000 lines of random bytes from the format's own alphabet (separators,
 * digits, marks, UTF-8 and bytes that are not): each is refused with a
 * line number or read; what is read writes a text that reads back to
 * the same text, and its SVG is written. xorshift32, fixed seed.
 */
static void test_random_lines(void)
{
	static const char *const bits[] = {
		";", " ", "\t", "0", "7", "42", "a", "main", "_[k]", " [ext4]",
		"[", "]", ".", "\xc3\xa9", "\xff", "&", "<", "\r", ";;", "1.5",
	};
	uint32_t x = 2463534242u;
	int i, j, read_ok = 0, refused_ok = 0, bad = 0;

	for (i = 0; i < 3000; i++) {
		char line[256] = "", err[128];
		struct pea_stack_set *set, *back;
		char *text, *again, *svg;
		int parts;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		parts = 1 + x % 12;
		for (j = 0; j < parts; j++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			strcat(line, bits[x % (sizeof(bits) / sizeof(bits[0]))]);
		}
		if (x & 1)
			strcat(line, " 3");
		strcat(line, "\n");
		set = parse(line, err, sizeof(err));
		if (!set) {
			if (!strncmp(err, "line 1: ", 8))
				refused_ok++;
			else
				bad++;
			continue;
		}
		text = folded_of(set);
		back = text ? parse(text, err, sizeof(err)) : NULL;
		again = back ? folded_of(back) : NULL;
		svg = svg_of(set, line);
		if (again && !strcmp(again, text) && svg &&
		    pea_stacks_total(back) == pea_stacks_total(set))
			read_ok++;
		else
			bad++;
		free(svg);
		free(again);
		free(text);
		pea_stacks_free(back);
		pea_stacks_free(set);
	}
	ok(!bad && read_ok && refused_ok,
	   "3000 random lines: %d read and written back to the same text and total, %d refused with their line, %d otherwise",
	   read_ok, refused_ok, bad);
}

int main(void)
{
	test_set();
	test_growth();
	test_folded();
	test_odd();
	test_refusals();
	test_svg();
	test_svg_narrow();
	test_random_lines();
	return host_tap_done();
}
