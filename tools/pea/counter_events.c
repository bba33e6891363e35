// SPDX-License-Identifier: GPL-2.0
/*
 * pea: event names for `pea counters`.
 *
 * Accepted, like perf:
 *   generic names      cycles, instructions, cache-misses, branch-misses,
 *                      cpu-clock, task-clock, page-faults, context-switches,
 *                      cpu-migrations, ... (the tables below)
 *   hw-cache names     L1-dcache-load-misses, LLC-loads, dTLB-store-misses,
 *                      ... (CACHE-OP-RESULT, from perf's table)
 *   raw events         rHEX (PERF_TYPE_RAW, config HEX)
 *   PMU terms          pmu/config=0x...,config1=0x...,config2=0x.../ with
 *                      the type from /sys/bus/event_source/devices/pmu/type;
 *                      also format terms (pmu/event=0x3c,umask=1/, bit
 *                      layout from .../format/TERM) and event aliases
 *                      (pmu/alias/, from .../events/alias)
 *   modifiers          :u (user only), :k (kernel only), :D (pinned);
 *                      after the closing slash for the PMU form: pmu/.../u
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "counter_events.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

struct ev_name {
	const char *name;
	__u32 type;
	__u64 config;
};

static const struct ev_name generic[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "idle-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "idle-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
	{ "cgroup-switches", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CGROUP_SWITCHES },
};

/* perf's hw-cache names: CACHE-OP(S)-RESULT. */
static const char *const cache_names[PERF_COUNT_HW_CACHE_MAX] = {
	[PERF_COUNT_HW_CACHE_L1D] = "L1-dcache",
	[PERF_COUNT_HW_CACHE_L1I] = "L1-icache",
	[PERF_COUNT_HW_CACHE_LL] = "LLC",
	[PERF_COUNT_HW_CACHE_DTLB] = "dTLB",
	[PERF_COUNT_HW_CACHE_ITLB] = "iTLB",
	[PERF_COUNT_HW_CACHE_BPU] = "branch",
	[PERF_COUNT_HW_CACHE_NODE] = "node",
};

/* Access form ("-loads") and miss form ("-load-misses") per op. */
static const char *const cache_ops[PERF_COUNT_HW_CACHE_OP_MAX][2] = {
	[PERF_COUNT_HW_CACHE_OP_READ] = { "-loads", "-load-misses" },
	[PERF_COUNT_HW_CACHE_OP_WRITE] = { "-stores", "-store-misses" },
	[PERF_COUNT_HW_CACHE_OP_PREFETCH] = { "-prefetches",
					      "-prefetch-misses" },
};

static void seterr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

const char *pea_ev_sysfs_root(void)
{
	const char *d = getenv("PEA_EVENT_SOURCE_DIR");

	return d && *d ? d : "/sys/bus/event_source/devices";
}

static bool lookup_cache(const char *name, __u64 *config)
{
	size_t c, op, res, len;

	for (c = 0; c < PERF_COUNT_HW_CACHE_MAX; c++) {
		len = strlen(cache_names[c]);
		if (strncmp(name, cache_names[c], len))
			continue;
		for (op = 0; op < PERF_COUNT_HW_CACHE_OP_MAX; op++)
			for (res = 0; res < 2; res++)
				if (!strcmp(name + len, cache_ops[op][res])) {
					*config = c | (op << 8) | (res << 16);
					return true;
				}
	}
	return false;
}

/* Read a small sysfs file into @buf, without the trailing newline. */
static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static int parse_u64(const char *s, __u64 *v)
{
	char *end;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

static __u64 *config_field(struct perf_event_attr *attr, const char *name)
{
	if (!strcmp(name, "config"))
		return &attr->config;
	if (!strcmp(name, "config1"))
		return &attr->config1;
	if (!strcmp(name, "config2"))
		return &attr->config2;
	return NULL;
}

/*
 * Apply @value through a sysfs format such as "config:0-7,32-35": the
 * value's bits fill the listed bit positions in order.
 */
static int apply_format(struct perf_event_attr *attr, const char *format,
			__u64 value, char *err, size_t errlen)
{
	char field[16], *ranges;
	const char *colon = strchr(format, ':');
	unsigned int bit = 0;
	__u64 *dst;
	char *p;

	if (!colon || (size_t)(colon - format) >= sizeof(field))
		goto bad;
	memcpy(field, format, colon - format);
	field[colon - format] = '\0';
	dst = config_field(attr, field);
	if (!dst)
		goto bad;
	ranges = strdup(colon + 1);
	if (!ranges)
		return -ENOMEM;
	for (p = strtok(ranges, ","); p; p = strtok(NULL, ",")) {
		unsigned int lo, hi, b;

		if (sscanf(p, "%u-%u", &lo, &hi) != 2) {
			if (sscanf(p, "%u", &lo) != 1) {
				free(ranges);
				goto bad;
			}
			hi = lo;
		}
		if (hi < lo || hi > 63) {
			free(ranges);
			goto bad;
		}
		for (b = lo; b <= hi; b++, bit++) {
			*dst &= ~(1ULL << b);
			if (bit < 64 && (value >> bit) & 1)
				*dst |= 1ULL << b;
		}
	}
	free(ranges);
	if (bit < 64 && value >> bit) {
		seterr(err, errlen, "value 0x%llx does not fit format '%s'",
		       (unsigned long long)value, format);
		return -EINVAL;
	}
	return 0;
bad:
	seterr(err, errlen, "cannot use format '%s'", format);
	return -EINVAL;
}

static int apply_terms(const char *pmu, char *terms,
		       struct perf_event_attr *attr, int depth,
		       char *err, size_t errlen);

/* One term of a PMU event: NAME=VALUE, NAME (format bit or alias). */
static int apply_term(const char *pmu, char *term,
		      struct perf_event_attr *attr, int depth,
		      char *err, size_t errlen)
{
	char path[512], text[512];
	char *eq = strchr(term, '=');
	__u64 value = 1, *field;

	if (eq) {
		*eq = '\0';
		if (!strcmp(term, "name"))
			return 0;	/* perf's display name: accepted, unused */
		if (parse_u64(eq + 1, &value)) {
			seterr(err, errlen, "bad value '%s' for '%s'", eq + 1,
			       term);
			return -EINVAL;
		}
	}
	if (!*term) {
		seterr(err, errlen, "empty term");
		return -EINVAL;
	}
	field = config_field(attr, term);
	if (field) {
		*field = value;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s/format/%s", pea_ev_sysfs_root(),
		 pmu, term);
	if (!read_text(path, text, sizeof(text)))
		return apply_format(attr, text, value, err, errlen);
	if (!eq && depth == 0) {
		snprintf(path, sizeof(path), "%s/%s/events/%s",
			 pea_ev_sysfs_root(), pmu, term);
		if (!read_text(path, text, sizeof(text)))
			return apply_terms(pmu, text, attr, depth + 1, err,
					   errlen);
	}
	seterr(err, errlen, "PMU '%s' has no term or event '%s'", pmu, term);
	return -EINVAL;
}

static int apply_terms(const char *pmu, char *terms,
		       struct perf_event_attr *attr, int depth,
		       char *err, size_t errlen)
{
	char *save = NULL, *t;
	int ret;

	for (t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*t))
			t++;
		ret = apply_term(pmu, t, attr, depth, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

static int apply_modifiers(const char *mods, struct perf_event_attr *attr,
			   char *err, size_t errlen)
{
	bool u = false, k = false;
	const char *m;

	for (m = mods; *m; m++) {
		switch (*m) {
		case 'u':
			u = true;
			break;
		case 'k':
			k = true;
			break;
		case 'D':
			attr->pinned = 1;
			break;
		default:
			seterr(err, errlen, "unknown modifier '%c'", *m);
			return -EINVAL;
		}
	}
	/* perf: naming one level excludes the others. */
	if (u != k) {
		attr->exclude_kernel = !k;
		attr->exclude_user = !u;
		attr->exclude_hv = 1;
	}
	return 0;
}

/* pmu/terms/[mods] */
static int parse_pmu_event(struct pea_ev *ev, char *s, char *err,
			   size_t errlen)
{
	char *slash = strchr(s, '/'), *end, path[512], text[64];
	__u64 type;
	int ret;

	*slash = '\0';
	end = strrchr(slash + 1, '/');
	if (!end) {
		seterr(err, errlen, "missing closing '/' in '%s'", ev->name);
		return -EINVAL;
	}
	*end = '\0';
	snprintf(path, sizeof(path), "%s/%s/type", pea_ev_sysfs_root(), s);
	if (read_text(path, text, sizeof(text)) || parse_u64(text, &type)) {
		seterr(err, errlen, "no PMU named '%s' (see %s)", s,
		       pea_ev_sysfs_root());
		return -ENOENT;
	}
	ev->attr.type = type;
	ret = apply_terms(s, slash + 1, &ev->attr, 0, err, errlen);
	if (ret)
		return ret;
	snprintf(ev->desc, sizeof(ev->desc), "PMU %s (type %u), config 0x%llx",
		 s, ev->attr.type, (unsigned long long)ev->attr.config);
	return apply_modifiers(end + 1 + (end[1] == ':'), &ev->attr, err,
			       errlen);
}

static int parse_name(struct pea_ev *ev, char *s, char *err, size_t errlen)
{
	char *colon;
	size_t i;

	if (strchr(s, '/'))
		return parse_pmu_event(ev, s, err, errlen);

	colon = strchr(s, ':');
	if (colon)
		*colon++ = '\0';
	for (i = 0; i < ARRAY_SIZE(generic); i++) {
		if (strcmp(s, generic[i].name))
			continue;
		ev->attr.type = generic[i].type;
		ev->attr.config = generic[i].config;
		snprintf(ev->desc, sizeof(ev->desc), "%s event 0x%llx",
			 generic[i].type == PERF_TYPE_HARDWARE ? "hardware" :
			 "software", (unsigned long long)generic[i].config);
		goto mods;
	}
	if (lookup_cache(s, &ev->attr.config)) {
		ev->attr.type = PERF_TYPE_HW_CACHE;
		snprintf(ev->desc, sizeof(ev->desc), "hw-cache event 0x%llx",
			 (unsigned long long)ev->attr.config);
		goto mods;
	}
	if (s[0] == 'r' && s[1] && strspn(s + 1, "0123456789abcdefABCDEF") ==
	    strlen(s + 1)) {
		ev->attr.type = PERF_TYPE_RAW;
		ev->attr.config = strtoull(s + 1, NULL, 16);
		snprintf(ev->desc, sizeof(ev->desc), "raw event 0x%llx",
			 (unsigned long long)ev->attr.config);
		goto mods;
	}
	seterr(err, errlen,
	       "unknown event '%s' (try cycles, instructions, cache-misses, cpu-clock, task-clock, page-faults, context-switches, rHEX or pmu/config=0x.../)",
	       s);
	return -EINVAL;
mods:
	return colon ? apply_modifiers(colon, &ev->attr, err, errlen) : 0;
}

static int parse_event(struct pea_ev *ev, char *s, char *err, size_t errlen)
{
	int ret;

	memset(&ev->attr, 0, sizeof(ev->attr));
	ev->attr.size = sizeof(ev->attr);
	ret = parse_name(ev, s, err, errlen);
	/* Clocks count ns, in whatever form they were named. */
	ev->clock = ev->attr.type == PERF_TYPE_SOFTWARE &&
		    (ev->attr.config == PERF_COUNT_SW_CPU_CLOCK ||
		     ev->attr.config == PERF_COUNT_SW_TASK_CLOCK);
	return ret;
}

int pea_ev_parse_list(const char *list, struct pea_ev **evs, int *n,
		      char *err, size_t errlen)
{
	struct pea_ev *out = NULL, *grown;
	const char *p = list, *start;
	int cnt = 0, ret;

	if (!*list) {
		seterr(err, errlen, "empty event list");
		return -EINVAL;
	}
	while (*p) {
		bool in_pmu = false;
		char buf[PEA_EV_NAME_LEN];
		size_t len;

		/* A comma inside pmu/.../ belongs to the event. */
		for (start = p; *p && (in_pmu || *p != ','); p++)
			if (*p == '/')
				in_pmu = !in_pmu;
		len = p - start;
		if (*p)
			p++;
		if (!len || len >= sizeof(buf)) {
			seterr(err, errlen, len ? "event name too long" :
			       "empty event in list");
			ret = -EINVAL;
			goto fail;
		}
		grown = realloc(out, (cnt + 1) * sizeof(*out));
		if (!grown) {
			ret = -ENOMEM;
			goto fail;
		}
		out = grown;
		memset(&out[cnt], 0, sizeof(out[cnt]));
		memcpy(out[cnt].name, start, len);
		memcpy(buf, start, len);
		buf[len] = '\0';
		ret = parse_event(&out[cnt], buf, err, errlen);
		if (ret)
			goto fail;
		cnt++;
	}
	*evs = out;
	*n = cnt;
	return 0;
fail:
	free(out);
	return ret;
}
