/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints in the selftests: an event's id from tracefs, and a
 * tracepoint filter program (struct pea_tp_attr's @terms and @prog) put
 * together term by term.
 */
#ifndef PT_TP_H
#define PT_TP_H

#include "pea_test.h"

/* The id of trace event SYS/NAME from tracefs, or -1. */
static inline int pt_tp_id(const char *sys, const char *name)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/%s/id",
		 sys, name);
	if (pt_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return atoi(buf);
}

/*
 * An attr for trace event @name ("SUBSYS:NAME") of id @id: O_CLOEXEC, any
 * CPU, the hits of process @tgid only (0: any).
 */
static inline struct pea_tp_attr pt_tp_attr(const char *name, int id,
					    int tgid)
{
	struct pea_tp_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PEA_TP_F_CLOEXEC;
	a.event_id = id;
	a.filter_cpu = -1;
	a.filter_tgid = tgid;
	strncpy(a.name, name, sizeof(a.name) - 1);
	return a;
}

/* A field of an event's format: where it is in the entry. */
struct pt_tp_field {
	unsigned int offset, size;
};

/*
 * Field @fname of SYS/NAME's tracefs format (a "TYPE fname" or an array
 * "TYPE fname[N]") into @f: 0, or -1 if there is none.
 */
static inline int pt_tp_get_field(const char *sys, const char *name,
				  const char *fname, struct pt_tp_field *f)
{
	static char buf[16384];
	char path[256], pat[96], *p, *q;
	int sgn;

	snprintf(path, sizeof(path),
		 "/sys/kernel/tracing/events/%s/%s/format", sys, name);
	if (pt_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	snprintf(pat, sizeof(pat), " %s", fname);
	for (p = strstr(buf, "field:"); p; p = strstr(p + 1, "field:")) {
		q = strchr(p, ';');
		if (!q)
			return -1;
		*q = 0;
		if ((strlen(p) > strlen(pat) &&
		     !strcmp(p + strlen(p) - strlen(pat), pat)) ||
		    (strstr(p, pat) && strstr(p, pat)[strlen(pat)] == '[')) {
			*q = ';';
			return sscanf(q, "; offset:%u; size:%u; signed:%d",
				      &f->offset, &f->size, &sgn) == 3 ? 0 : -1;
		}
		*q = ';';
	}
	return -1;
}

/* A filter program with room past the bounds, to test them. */
struct pt_tp_prog {
	struct pea_tp_pred terms[PEA_TP_TERM_MAX + 8];
	struct pea_pred p[PEA_TP_PROG_MAX + 8];
	unsigned int nt, np;
};

static inline void pt_tp_prog_reset(struct pt_tp_prog *g)
{
	memset(g, 0, sizeof(*g));
}

static inline void pt_tp_put_op(struct pt_tp_prog *g, int op)
{
	g->p[g->np++].op = op;
}

/* A new term, and the PEA_PRED_CMP that pushes it. */
static inline struct pea_tp_pred *pt_tp_put_term(struct pt_tp_prog *g)
{
	struct pea_tp_pred *t = &g->terms[g->nt];

	g->p[g->np].op = PEA_PRED_CMP;
	g->p[g->np++].fetch = g->nt++;
	return t;
}

static inline void pt_tp_prog_attr(struct pea_tp_attr *a,
				   const struct pt_tp_prog *g)
{
	a->terms = (uintptr_t)g->terms;
	a->nr_terms = g->nt;
	a->prog = (uintptr_t)g->p;
	a->nr_prog = g->np;
}

#endif
