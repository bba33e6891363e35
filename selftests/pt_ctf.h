/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CTF traces read back by babeltrace2 and compared with pea trace --json,
 * for the guest tests that write CTF (test_tool_ctf, test_tool_relayd):
 * both sides in a canonical form, "key=value" pairs sorted, so that every
 * field of every event is compared (babeltrace2's "id", "flags" and
 * _length fields, which --json does not print, left out; its timestamp
 * must be time_ns and its cpu_id the cpu).
 */
#ifndef _PT_CTF_H
#define _PT_CTF_H

#include <ctype.h>
#include <stdlib.h>
#include "pt_tool.h"

#ifndef PT_BT
#define PT_BT		"/usr/bin/babeltrace2"
#endif
#define PT_CTF_MAXEV	64
#define PT_CTF_EVLEN	4096

/* ---- canonical forms: "key=value" pairs, sorted ---- */

struct canon {
	char *pair[64];
	int n;
};

static void canon_add(struct canon *c, const char *key, const char *val)
{
	char *buf;

	if (c->n == 64 || asprintf(&buf, "%s=%s", key, val) < 0)
		return;
	c->pair[c->n++] = buf;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The pairs sorted and joined with ';' into @out; frees them. */
static void canon_join(struct canon *c, char *out, size_t len)
{
	size_t n = 0;
	int i;

	qsort(c->pair, c->n, sizeof(c->pair[0]), str_cmp);
	out[0] = 0;
	for (i = 0; i < c->n; i++) {
		n += snprintf(out + n, n < len ? len - n : 0, "%s;", c->pair[i]);
		free(c->pair[i]);
	}
	c->n = 0;
}

static void lower(char *s)
{
	for (; *s; s++)
		*s = tolower((unsigned char)*s);
}

/*
 * One JSON value at *@s in canonical text: strings as their bytes (no
 * quotes), numbers as written, true as 1, arrays "[a,b]", objects
 * "{k=v,...}" in their order. Advances *@s.
 */
static bool json_canon(const char **s, char *out, size_t len)
{
	const char *p = *s;
	size_t n = 0, k;
	char tmp[PT_CTF_EVLEN], key[256];

	if (*p == '"') {
		if (!pt_json_string(&p, out, len, &k) || k >= len)
			return false;
		out[k] = 0;
		lower(out);
	} else if (*p == '[' || *p == '{') {
		bool obj = *p == '{';

		out[n++] = *p++;
		while (*p != (obj ? '}' : ']')) {
			if (obj) {
				if (!pt_json_string(&p, key, sizeof(key), &k) ||
				    k >= sizeof(key) || *p++ != ':')
					return false;
				key[k] = 0;
			}
			if (!json_canon(&p, tmp, sizeof(tmp)))
				return false;
			n += snprintf(out + n, n < len ? len - n : 0, "%s%s%s%s",
				      n > 1 ? "," : "", obj ? key : "",
				      obj ? "=" : "", tmp);
			if (*p == ',')
				p++;
		}
		p++;
		n += snprintf(out + n, n < len ? len - n : 0, "%c",
			      obj ? '}' : ']');
	} else if (!strncmp(p, "true", 4)) {
		snprintf(out, len, "1");
		p += 4;
	} else {
		while (*p && *p != ',' && *p != '}' && *p != ']' && n + 1 < len)
			out[n++] = *p++;
		out[n] = 0;
	}
	*s = p;
	return true;
}

/* A --json event line, canonical; "type" and "probe" left out. */
static bool canon_json(const char *l, char *out, size_t len)
{
	struct canon c = { .n = 0 };
	const char *p = l;
	char key[256], val[PT_CTF_EVLEN];
	size_t k;

	if (*p++ != '{')
		return false;
	while (*p && *p != '}') {
		if (!pt_json_string(&p, key, sizeof(key), &k) || *p++ != ':')
			return false;
		key[k] = 0;
		if (!json_canon(&p, val, sizeof(val)))
			return false;
		if (strcmp(key, "type") && strcmp(key, "probe"))
			canon_add(&c, key, val);
		if (*p == ',')
			p++;
	}
	canon_join(&c, out, len);
	return true;
}

static const char *bt_skip(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

/*
 * One babeltrace2 (text.pretty) value at *@s, canonical as above:
 * "strings" unescaped, 0xHEX lower case, [ [0] = a, ... ] as [a,...],
 * { k = v, ... } as {k=v,...} without the _..._length fields.
 */
static bool bt_canon(const char **s, char *out, size_t len)
{
	const char *p = bt_skip(*s);
	size_t n = 0;
	char tmp[PT_CTF_EVLEN], key[256];

	if (*p == '"') {
		for (p++; *p && *p != '"' && n + 1 < len; p++) {
			if (*p == '\\' && p[1]) {
				p++;
				out[n++] = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
			} else {
				out[n++] = *p;
			}
		}
		if (*p++ != '"')
			return false;
		out[n] = 0;
		lower(out);
	} else if (*p == '[' || *p == '{') {
		bool obj = *p == '{';

		out[n++] = *p++;
		for (;;) {
			size_t k = 0;

			p = bt_skip(p);
			if (*p == (obj ? '}' : ']'))
				break;
			if (obj) {
				while (*p && *p != ' ' && k + 1 < sizeof(key))
					key[k++] = *p++;
			} else {
				while (*p && *p != ' ')	/* [i] */
					p++;
			}
			key[k] = 0;
			p = bt_skip(p);
			if (*p++ != '=')
				return false;
			if (!bt_canon(&p, tmp, sizeof(tmp)))
				return false;
			if (!(obj && key[0] == '_' && strstr(key, "_length")))
				n += snprintf(out + n, n < len ? len - n : 0,
					      "%s%s%s%s", n > 1 ? "," : "",
					      key, obj ? "=" : "", tmp);
			p = bt_skip(p);
			if (*p == ',')
				p++;
		}
		p++;
		n += snprintf(out + n, n < len ? len - n : 0, "%c",
			      obj ? '}' : ']');
	} else {
		while (*p && *p != ',' && *p != ' ' && *p != '}' && *p != ']' &&
		       n + 1 < len)
			out[n++] = *p++;
		out[n] = 0;
		lower(out);
	}
	*s = p;
	return true;
}

/*
 * A babeltrace2 line "[TS] HOST NAME: { cpu_id = C }, { payload }",
 * canonical like canon_json(): "id" and "flags" (not in --json) left
 * out, "truncated" and "fault" only when set; checks that TS equals
 * time_ns, NAME @probe and cpu_id cpu.
 */
static bool canon_bt(const char *l, const char *probe, char *out, size_t len)
{
	struct canon c = { .n = 0 };
	unsigned long long ts;
	unsigned int cpu_id;
	const char *p;
	char key[256], val[PT_CTF_EVLEN], want[64], name[256];
	int k;

	if (sscanf(l, "[%llu] %*s %255[^:]", &ts, name) != 2)
		return false;
	p = strstr(l, ": { cpu_id = ");
	if (!p || sscanf(p, ": { cpu_id = %u }", &cpu_id) != 1)
		return false;
	/* NAME has colons itself: it is what precedes ": { cpu_id". */
	snprintf(name, sizeof(name), "%.*s", (int)(p - l), l);
	if (!strstr(name, probe) || strcmp(name + strlen(name) - strlen(probe), probe))
		return false;
	p = strstr(p, "}, {");
	if (!p)
		return false;
	p += 4;
	for (;;) {
		p = bt_skip(p);
		if (*p == '}' || !*p)
			break;
		for (k = 0; *p && *p != ' ' && k < 255; )
			key[k++] = *p++;
		key[k] = 0;
		p = bt_skip(p);
		if (*p++ != '=' || !bt_canon(&p, val, sizeof(val)))
			return false;
		if (!strcmp(key, "time_ns")) {
			snprintf(want, sizeof(want), "%llu", ts);
			if (strcmp(val, want))
				return false;
		}
		if (!strcmp(key, "cpu") && strtoul(val, NULL, 10) != cpu_id)
			return false;
		if (strcmp(key, "id") && strcmp(key, "flags") &&
		    !(key[0] == '_' && strstr(key, "_length")) &&
		    !((!strcmp(key, "truncated") || !strcmp(key, "fault")) &&
		      !strcmp(val, "0")))
			canon_add(&c, key, val);
		p = bt_skip(p);
		if (*p == ',')
			p++;
	}
	canon_join(&c, out, len);
	return true;
}

/* ---- babeltrace2 ---- */

static char bt_out[1 << 20], bt_err[1 << 16];

/* Run babeltrace2 on @dir: its exit status; output in bt_out/bt_err. */
static int babeltrace(const char *dir)
{
	return pt_run((char *[]){ PT_BT, "--clock-cycles", "--no-delta",
				  (char *)dir, NULL },
		      bt_out, sizeof(bt_out), bt_err, sizeof(bt_err), NULL,
		      NULL);
}

/* The sum of "discarded N events" in bt_err. */
static inline unsigned long long bt_discarded(int *warnings)
{
	unsigned long long sum = 0, n;
	const char *p = bt_err;

	*warnings = 0;
	while ((p = strstr(p, "discarded "))) {
		if (sscanf(p, "discarded %llu events", &n) == 1) {
			sum += n;
			(*warnings)++;
		}
		p++;
	}
	return sum;
}

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The CTF trace in @dir, read by babeltrace2, against the @n --json
 * event lines @json: the same events (as sorted canonical lines), each
 * with the same fields and values, every field of each. Returns how many
 * are the same.
 */
static int pt_ctf_compare(const char *dir, const char *probe,
			  const char *what, char (*json)[PT_CTF_EVLEN], int n)
{
	static char cj[PT_CTF_MAXEV][PT_CTF_EVLEN], cb[PT_CTF_MAXEV][PT_CTF_EVLEN];
	char *pj[PT_CTF_MAXEV], *pb[PT_CTF_MAXEV];
	int rc, nb = 0, bad = 0, i, same = 0;
	char *l, *nl;

	rc = babeltrace(dir);
	PT_EQ(rc, 0, "%s: babeltrace2 reads the CTF trace", what);
	if (rc)
		pt_diag("babeltrace2: %.2000s", bt_err);
	for (l = bt_out; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		if (!nl)
			break;
		*nl = 0;
		if (nb < PT_CTF_MAXEV && canon_bt(l, probe, cb[nb], PT_CTF_EVLEN)) {
			pb[nb] = cb[nb];
			nb++;
		} else {
			bad++;
			pt_diag("babeltrace2 line: %.1000s", l);
		}
	}
	for (i = 0; i < n && i < PT_CTF_MAXEV; i++) {
		if (!canon_json(json[i], cj[i], PT_CTF_EVLEN))
			bad++;
		pj[i] = cj[i];
	}
	PT_EQ(bad, 0, "%s: every babeltrace2 line and JSON line parses", what);
	PT_EQ(nb, n, "%s: as many CTF events as JSON events", what);
	qsort(pj, i, sizeof(pj[0]), strp_cmp);
	qsort(pb, nb, sizeof(pb[0]), strp_cmp);
	for (i = 0; i < n && i < nb; i++) {
		if (!strcmp(pj[i], pb[i]))
			same++;
		else
			pt_diag("differ:\n#  json %s\n#  ctf  %s", pj[i], pb[i]);
	}
	PT_EQ(same, n, "%s: every CTF event has the JSON event's fields and values",
	      what);
	if (n)
		pt_diag("e.g. %s", pj[0]);
	return same;
}

#endif /* _PT_CTF_H */
