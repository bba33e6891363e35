// SPDX-License-Identifier: GPL-2.0
/*
 * pea tool: an SVG flame graph of a stack set (stacks.h), one file that a
 * browser opens: no external resources, the script inside it.
 *
 * Layout: the root frame "all" at the bottom, each stack's frames upward
 * from it, siblings left to right in the order of their names (the order
 * of pea_stacks_by_frames(), so equal prefixes merge), each frame as wide
 * as its weight's share of the graph's width; a frame's own weight (the
 * stacks that end in it) is the gap left of its children. Frames narrower
 * than FLAME_MIN_PX are not drawn (nor what stands on them) and the
 * header says how many. Every frame is a <g class="f"> holding a <title>
 * ("NAME (WEIGHT UNIT, SHARE%)"), a <rect> and a <text> clipped to the
 * frame's width, with its depth, its offset and its weight in data-d,
 * data-s and data-w: the script recomputes positions from them to zoom.
 *
 * Colours depend on the frame's kind (a hue family each, the header's
 * legend) and on a hash of its name (the shade within the family), so
 * the same input gives the same file, byte for byte.
 *
 * The script: a click on a frame zooms to it (it fills the width, what
 * stands on it is rescaled, the frames under it are dimmed, the rest is
 * hidden), "Reset zoom" or Escape undoes it; "Search" (or Ctrl-F) asks
 * for a regular expression, highlights the frames whose names match and
 * shows the matched share of the total (overlapping frames counted once);
 * the line at the bottom shows the frame under the pointer. The URL's
 * fragment may ask for both: #zoom=f12&search=RE (URI-encoded), f12 being
 * a frame's id, so a view can be linked to.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "stacks.h"

#define FLAME_WIDTH	1200	/* the image's width, px */
#define FLAME_XPAD	10	/* left and right margins */
#define FLAME_GW	(FLAME_WIDTH - 2 * FLAME_XPAD)
#define FLAME_FRAME_H	16	/* one depth's height, 1 px of it a gap */
#define FLAME_FONT	12	/* frame text size, px */
#define FLAME_CHAR_W	7.44	/* DejaVu Sans Mono at 12 px (7.22) + margin */
#define FLAME_HEAD	52	/* title, buttons, legend */
#define FLAME_FOOT	26	/* the details line */
#define FLAME_MIN_PX	0.1	/* narrower frames are not drawn */
#define FLAME_TITLE_MAX	90	/* characters of the title (17 px, centred) */

struct svg_ctx {
	FILE *out;
	uint64_t total;
	const char *unit;
	unsigned int height;
	unsigned int ids;
	unsigned long elided;
};

/* FNV-1a, 32 bits: the shade of a name's colour. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

/*
 * A frame's colour: a family per kind, the shade from the name's hash.
 * The families do not overlap (the browser test classifies pixels by
 * them, docs/flamegraphs.md lists them): process blue (r 110-140,
 * g 140-170, b 200-230), user red (r 210-250, g 45-85, b 45-75), kernel
 * orange (r 230-255, g 140-180, b 10-40), module yellow (r 200-230,
 * g 190-225, b 40-70), and grey (200, 200, 200) for the root.
 */
static void frame_colour(int root, enum pea_frame_kind kind, const char *name,
			 unsigned int rgb[3])
{
	uint32_t h = name_hash(name);
	unsigned int a = h & 0xff, b = (h >> 8) & 0xff;

	if (root) {
		rgb[0] = 200;
		rgb[1] = 200;
		rgb[2] = 200;
		return;
	}
	switch (kind) {
	case PEA_FRAME_PROCESS:
		rgb[0] = 110 + 30 * a / 255;
		rgb[1] = 140 + 30 * b / 255;
		rgb[2] = 200 + 30 * a / 255;
		break;
	case PEA_FRAME_KERNEL:
		rgb[0] = 230 + 25 * a / 255;
		rgb[1] = 140 + 40 * b / 255;
		rgb[2] = 10 + 30 * a / 255;
		break;
	case PEA_FRAME_MODULE:
		rgb[0] = 200 + 30 * a / 255;
		rgb[1] = 190 + 35 * b / 255;
		rgb[2] = 40 + 30 * a / 255;
		break;
	case PEA_FRAME_USER:
	default:
		rgb[0] = 210 + 40 * a / 255;
		rgb[1] = 45 + 40 * b / 255;
		rgb[2] = 45 + 30 * a / 255;
		break;
	}
}

/* The length of the valid UTF-8 sequence at @s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, past U+10FFFF, U+FFFE/U+FFFF */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp > 0x10ffff || cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

/*
 * At most @max characters of @s as XML text (escaped; bytes that are not
 * UTF-8 or not allowed in XML 1.0 become U+FFFD).
 */
static void put_xml(FILE *out, const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;

	for (; *s && max; max--) {
		size_t n = utf8_len(s);

		if (!n || (*s < 0x20 && *s != '\t')) {
			fputs("&#xFFFD;", out);
			s++;
			continue;
		}
		switch (*s) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&apos;", out);
			break;
		default:
			fwrite(s, 1, n, out);
		}
		s += n;
	}
}

/* Characters in @s, as put_xml() counts them. */
static size_t xml_chars(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t c = 0, n;

	for (; *s; c++) {
		n = utf8_len(s);
		s += n ? n : 1;
	}
	return c;
}

/* A frame's label: the name, cut to its width with "..", or nothing. */
static void put_label(FILE *out, const char *name, double width)
{
	long fit = (long)((width - 6) / FLAME_CHAR_W);
	size_t len = xml_chars(name);

	if (fit < 3)
		return;
	if (len <= (size_t)fit) {
		put_xml(out, name, len);
		return;
	}
	put_xml(out, name, fit - 2);
	fputs("..", out);
}

static void put_share(FILE *out, const struct svg_ctx *c, uint64_t w)
{
	fprintf(out, "%" PRIu64 " ", w);
	put_xml(out, c->unit, SIZE_MAX);
	fprintf(out, ", %.2f%%",
		c->total ? (double)w * 100.0 / (double)c->total : 100.0);
}

/* Draws one frame; returns 0 if it is too narrow to be drawn. */
static int put_frame(struct svg_ctx *c, const char *name, int root,
		     enum pea_frame_kind kind, unsigned int depth, uint64_t s,
		     uint64_t w)
{
	double x, width, y;
	unsigned int rgb[3];

	x = FLAME_XPAD + (c->total ? (double)s / c->total * FLAME_GW : 0);
	width = c->total ? (double)w / c->total * FLAME_GW : FLAME_GW;
	if (width < FLAME_MIN_PX) {
		c->elided++;
		return 0;
	}
	y = c->height - FLAME_FOOT - (double)FLAME_FRAME_H * (depth + 1);
	frame_colour(root, kind, name, rgb);
	fprintf(c->out,
		"<g class=\"f\" id=\"f%u\" data-d=\"%u\" data-s=\"%" PRIu64
		"\" data-w=\"%" PRIu64 "\"><title>", c->ids++, depth, s, w);
	put_xml(c->out, name, SIZE_MAX);
	fputs(" (", c->out);
	put_share(c->out, c, w);
	fprintf(c->out,
		")</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%u,%u,%u)\"/><text x=\"%.2f\" y=\"%.0f\">",
		x, y, width, FLAME_FRAME_H - 1, rgb[0], rgb[1], rgb[2],
		x + 3, y + FLAME_FRAME_H - 4);
	put_label(c->out, name, width);
	fputs("</text></g>\n", c->out);
	return 1;
}

/*
 * The frames at index @d of the stacks v[lo..hi), which share their
 * first @d frames and start at offset @s: grouped by name and kind.
 */
static void put_level(struct svg_ctx *c, const struct pea_stack_view *v,
		      unsigned int lo, unsigned int hi, unsigned int d,
		      uint64_t s)
{
	unsigned int i = lo, j;

	while (i < hi && v[i].nframes == d)	/* the parent's own weight */
		s += v[i++].weight;
	while (i < hi) {
		const char *name = v[i].frames[d];
		enum pea_frame_kind kind = v[i].kinds[d];
		uint64_t w = 0;

		/* interned: one pointer per (name, kind) */
		for (j = i; j < hi && v[j].frames[d] == name; j++)
			w += v[j].weight;
		if (put_frame(c, name, 0, kind, d + 1, s, w))
			put_level(c, v, i, j, d + 1, s);
		s += w;
		i = j;
	}
}

static const char flame_style[] =
"<style>\n"
"text { font-family: \"DejaVu Sans Mono\", Menlo, Consolas, monospace; font-size: 12px; fill: #000; }\n"
"#title { font-size: 17px; font-family: \"DejaVu Sans\", Verdana, sans-serif; }\n"
".btn { cursor: pointer; fill: #1a4f9c; }\n"
".btn:hover { text-decoration: underline; }\n"
"#unzoom { opacity: 0.3; }\n"
"g.f { cursor: pointer; }\n"
"g.f rect { stroke: #f6f6f2; stroke-width: 0.6; }\n"
"g.f:hover rect { stroke: #000; }\n"
"g.f.hit rect { fill: rgb(60,200,90); }\n"
"g.f.anc rect { opacity: 0.55; }\n"
"g.f.out { display: none; }\n"
"</style>\n";

/*
 * The viewer. Positions are recomputed from data-s, data-w and data-d
 * with the writer's formulas (the constants come from the root <svg>'s
 * data-* attributes); labels are cut as put_label() cuts them.
 */
static const char flame_script[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"'use strict';\n"
"var pf = {};\n"
"function pf_name(g) {\n"
"\tvar t = g.firstElementChild.textContent;\n"
"\treturn t.substring(0, t.lastIndexOf(' ('));\n"
"}\n"
"function pf_label(name, width) {\n"
"\tvar fit = Math.floor((width - 6) / pf.cw), chars = Array.from(name);\n"
"\tif (fit < 3)\n"
"\t\treturn '';\n"
"\tif (chars.length <= fit)\n"
"\t\treturn name;\n"
"\treturn chars.slice(0, fit - 2).join('') + '..';\n"
"}\n"
"function pf_place(g, x, width) {\n"
"\tvar r = g.querySelector('rect'), t = g.querySelector('text');\n"
"\tr.setAttribute('x', x.toFixed(2));\n"
"\tr.setAttribute('width', width.toFixed(2));\n"
"\tt.setAttribute('x', (x + 3).toFixed(2));\n"
"\tt.textContent = pf_label(pf_name(g), width);\n"
"}\n"
"function pf_zoom(z) {\n"
"\tvar s0 = +z.dataset.s, w0 = +z.dataset.w, d0 = +z.dataset.d, i;\n"
"\tfor (i = 0; i < pf.frames.length; i++) {\n"
"\t\tvar g = pf.frames[i], s = +g.dataset.s, w = +g.dataset.w;\n"
"\t\tvar d = +g.dataset.d, width;\n"
"\t\tg.classList.remove('anc', 'out');\n"
"\t\tif (d >= d0 && s >= s0 && s + w <= s0 + w0) {\n"
"\t\t\twidth = w0 ? w / w0 * pf.gw : pf.gw;\n"
"\t\t\tif (width < pf.minpx)\n"
"\t\t\t\tg.classList.add('out');\n"
"\t\t\telse\n"
"\t\t\t\tpf_place(g, pf.xpad + (w0 ? (s - s0) / w0 * pf.gw : 0), width);\n"
"\t\t} else if (d < d0 && s <= s0 && s + w >= s0 + w0) {\n"
"\t\t\tg.classList.add('anc');\n"
"\t\t\tpf_place(g, pf.xpad, pf.gw);\n"
"\t\t} else {\n"
"\t\t\tg.classList.add('out');\n"
"\t\t}\n"
"\t}\n"
"\tpf.zoomed = z === pf.root ? null : z;\n"
"\tpf.unzoom.style.opacity = pf.zoomed ? '1' : '0.3';\n"
"\tpf.svg.setAttribute('data-zoom', z.id);\n"
"}\n"
"function pf_search(re) {\n"
"\tvar spans = [], i, sum = 0, end = -1;\n"
"\tfor (i = 0; i < pf.frames.length; i++) {\n"
"\t\tvar g = pf.frames[i];\n"
"\t\tif (re && g !== pf.root && re.test(pf_name(g))) {\n"
"\t\t\tg.classList.add('hit');\n"
"\t\t\tspans.push([+g.dataset.s, +g.dataset.s + +g.dataset.w]);\n"
"\t\t} else {\n"
"\t\t\tg.classList.remove('hit');\n"
"\t\t}\n"
"\t}\n"
"\tspans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
"\tfor (i = 0; i < spans.length; i++) {\n"
"\t\tif (spans[i][0] >= end) {\n"
"\t\t\tsum += spans[i][1] - spans[i][0];\n"
"\t\t\tend = spans[i][1];\n"
"\t\t} else if (spans[i][1] > end) {\n"
"\t\t\tsum += spans[i][1] - end;\n"
"\t\t\tend = spans[i][1];\n"
"\t\t}\n"
"\t}\n"
"\tpf.searching = !!re;\n"
"\tpf.search.textContent = re ? 'Clear search' : 'Search';\n"
"\tpf.matched.textContent = re ? 'Matched: ' + (pf.total ? sum * 100 / pf.total : 0).toFixed(2) +\n"
"\t\t'% (' + sum + ' ' + pf.unit + ')' : '';\n"
"\tpf.svg.setAttribute('data-matched', re ? String(sum) : '');\n"
"}\n"
"function pf_ask() {\n"
"\tif (pf.searching) {\n"
"\t\tpf_search(null);\n"
"\t\treturn;\n"
"\t}\n"
"\tvar text = window.prompt('Search frames (a regular expression)', '');\n"
"\tif (!text)\n"
"\t\treturn;\n"
"\ttry {\n"
"\t\tpf_search(new RegExp(text));\n"
"\t} catch (e) {\n"
"\t\tpf.matched.textContent = 'Bad expression: ' + e.message;\n"
"\t}\n"
"}\n"
"function pf_init() {\n"
"\tvar svg = document.documentElement, i, parts, z = null, re = null;\n"
"\tpf.svg = svg;\n"
"\tpf.total = +svg.dataset.total;\n"
"\tpf.unit = svg.dataset.unit;\n"
"\tpf.gw = +svg.dataset.gw;\n"
"\tpf.xpad = +svg.dataset.xpad;\n"
"\tpf.cw = +svg.dataset.cw;\n"
"\tpf.minpx = +svg.dataset.minpx;\n"
"\tpf.frames = document.querySelectorAll('g.f');\n"
"\tpf.root = document.getElementById('f0');\n"
"\tpf.details = document.getElementById('details');\n"
"\tpf.unzoom = document.getElementById('unzoom');\n"
"\tpf.search = document.getElementById('search');\n"
"\tpf.matched = document.getElementById('matched');\n"
"\tdocument.getElementById('frames').addEventListener('click', function (e) {\n"
"\t\tvar g = e.target.closest('g.f');\n"
"\t\tif (g)\n"
"\t\t\tpf_zoom(g);\n"
"\t});\n"
"\tdocument.getElementById('frames').addEventListener('mouseover', function (e) {\n"
"\t\tvar g = e.target.closest('g.f');\n"
"\t\tpf.details.textContent = g ? g.firstElementChild.textContent : ' ';\n"
"\t});\n"
"\tdocument.getElementById('frames').addEventListener('mouseout', function () {\n"
"\t\tpf.details.textContent = ' ';\n"
"\t});\n"
"\tpf.unzoom.addEventListener('click', function () { pf_zoom(pf.root); });\n"
"\tpf.search.addEventListener('click', pf_ask);\n"
"\twindow.addEventListener('keydown', function (e) {\n"
"\t\tif ((e.ctrlKey || e.metaKey) && e.key === 'f') {\n"
"\t\t\te.preventDefault();\n"
"\t\t\tpf_ask();\n"
"\t\t} else if (e.key === 'Escape') {\n"
"\t\t\tpf_zoom(pf.root);\n"
"\t\t\tpf_search(null);\n"
"\t\t}\n"
"\t});\n"
"\tparts = window.location.hash.substring(1).split('&');\n"
"\tfor (i = 0; i < parts.length; i++) {\n"
"\t\tvar eq = parts[i].indexOf('='), k, v;\n"
"\t\tif (eq < 0)\n"
"\t\t\tcontinue;\n"
"\t\tk = parts[i].substring(0, eq);\n"
"\t\tv = decodeURIComponent(parts[i].substring(eq + 1));\n"
"\t\tif (k === 'zoom')\n"
"\t\t\tz = document.getElementById(v);\n"
"\t\telse if (k === 'search' && v)\n"
"\t\t\ttry { re = new RegExp(v); } catch (e) { re = null; }\n"
"\t}\n"
"\tif (z && z.classList.contains('f'))\n"
"\t\tpf_zoom(z);\n"
"\tif (re)\n"
"\t\tpf_search(re);\n"
"\tsvg.setAttribute('data-ready', '1');\n"
"}\n"
"window.addEventListener('load', pf_init);\n"
"]]></script>\n";

static void put_legend(FILE *out, double x, const char *label,
		       unsigned int r, unsigned int g, unsigned int b)
{
	fprintf(out,
		"<rect x=\"%.0f\" y=\"30\" width=\"12\" height=\"12\" fill=\"rgb(%u,%u,%u)\"/><text x=\"%.0f\" y=\"40\">%s</text>\n",
		x, r, g, b, x + 16, label);
}

int pea_stacks_write_svg(const struct pea_stack_set *set, FILE *out,
			 const char *title, const char *unit)
{
	struct svg_ctx c = { .out = out, .total = pea_stacks_total(set) };
	struct pea_stack_view *v;
	unsigned int n, i, depth = 0;

	v = pea_stacks_by_frames(set, &n);
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (v[i].nframes > depth)
			depth = v[i].nframes;
	c.unit = unit && *unit ? unit : "samples";
	c.height = FLAME_HEAD + FLAME_FRAME_H * (depth + 1) + FLAME_FOOT;
	if (!title || !*title)
		title = "Flame graph";

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out,
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\" data-total=\"%" PRIu64 "\" data-unit=\"",
		FLAME_WIDTH, c.height, FLAME_WIDTH, c.height, c.total);
	put_xml(out, c.unit, SIZE_MAX);
	fprintf(out,
		"\" data-gw=\"%d\" data-xpad=\"%d\" data-cw=\"%.2f\" data-minpx=\"%.1f\">\n",
		FLAME_GW, FLAME_XPAD, FLAME_CHAR_W, FLAME_MIN_PX);
	fputs("<!-- pea flame graph: docs/flamegraphs.md -->\n", out);
	fputs(flame_style, out);
	fputs(flame_script, out);
	fprintf(out,
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" fill=\"#f6f6f2\"/>\n",
		FLAME_WIDTH, c.height);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"20\" text-anchor=\"middle\">",
		FLAME_WIDTH / 2);
	if (xml_chars(title) > FLAME_TITLE_MAX) {	/* clear of the buttons */
		put_xml(out, title, FLAME_TITLE_MAX - 2);
		fputs("..", out);
	} else {
		put_xml(out, title, SIZE_MAX);
	}
	fputs("</text>\n", out);
	fprintf(out,
		"<text id=\"unzoom\" class=\"btn\" x=\"%d\" y=\"20\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%d\" y=\"20\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"40\" text-anchor=\"end\"> </text>\n",
		FLAME_XPAD, FLAME_WIDTH - FLAME_XPAD, FLAME_WIDTH - FLAME_XPAD);
	put_legend(out, FLAME_XPAD, "process", 125, 155, 215);
	put_legend(out, FLAME_XPAD + 90, "user", 230, 65, 60);
	put_legend(out, FLAME_XPAD + 160, "kernel", 242, 160, 25);
	put_legend(out, FLAME_XPAD + 240, "module", 215, 207, 55);

	fputs("<g id=\"frames\">\n", out);
	put_frame(&c, "all", 1, PEA_FRAME_PROCESS, 0, 0, c.total);
	if (c.total)
		put_level(&c, v, 0, n, 0, 0);
	fputs("</g>\n", out);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		FLAME_XPAD, c.height - 8);
	if (c.elided)
		fprintf(out,
			"<text id=\"elided\" x=\"%d\" y=\"40\" text-anchor=\"middle\">frames not drawn: %lu (narrower than %.1f px), nor what stands on them</text>\n",
			FLAME_WIDTH / 2, c.elided, FLAME_MIN_PX);
	fputs("</svg>\n", out);
	free(v);
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}
