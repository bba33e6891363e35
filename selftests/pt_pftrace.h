/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A decoder of the few perfetto.protos fields pea trace --format pftrace
 * writes (tools/pea/trace_pftrace.c), for its tests on the host
 * (selftests/host/test_pftrace.c) and in the guest (test_tool_time):
 * pt_pf_decode() reads a Trace file into pk[]: each TracePacket's
 * timestamp, clock id, sequence id and flags, and its ClockSnapshot
 * (clocks by BuiltinClock id), TrackDescriptor (uuid, name, process or
 * thread) or TrackEvent (type, track, name, category, debug annotations:
 * "args" as JSON, "cpu" and "lost").
 */
#ifndef _PT_PFTRACE_H
#define _PT_PFTRACE_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>

#define MAXPKT		512

struct rd {
	const unsigned char *p, *end;
	bool bad;
};

static inline __u64 rd_varint(struct rd *r)
{
	__u64 v = 0;
	int shift = 0;

	while (r->p < r->end && shift < 64) {
		unsigned char c = *r->p++;

		v |= (__u64)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
		shift += 7;
	}
	r->bad = true;
	return 0;
}

/*
 * The next field of @r: its number and wire type; a varint's value in
 * *@v, a length-delimited field's bytes in @sub. 0 at the end, -1 on
 * anything else (other wire types are not written by pea).
 */
static inline int rd_field(struct rd *r, __u32 *field, __u64 *v, struct rd *sub)
{
	__u64 key, len;

	if (r->p >= r->end)
		return 0;
	key = rd_varint(r);
	*field = key >> 3;
	if ((key & 7) == 0) {
		*v = rd_varint(r);
		return r->bad ? -1 : 1;
	}
	if ((key & 7) != 2)
		return -1;
	len = rd_varint(r);
	if (r->bad || len > (__u64)(r->end - r->p))
		return -1;
	sub->p = r->p;
	sub->end = r->p + len;
	sub->bad = false;
	r->p += len;
	return 1;
}

/* A debug annotation: its name and value (field number of the value). */
#define PT_PF_ANNOT	16
struct pt_annot {
	char name[64];
	__u32 field;		/* 2 bool, 3 uint, 4 int, 6 string, 7 pointer,
				 * 9 JSON, 11 dictionary */
	__u64 v;
	char s[128];
	int ndict;
	struct {
		char name[32];
		__u32 field;
		__u64 v;
		char s[64];
	} dict[2];
};

struct pkt {
	__u64 ts, clock_id, seq, flags;
	bool has_ts;
	int kind;		/* 6 clocks, 11 track event, 60 track */
	__u64 clocks[8];	/* by BuiltinClock id, 0..7 */
	__u64 uuid, pid, tid;	/* TrackDescriptor */
	bool thread, process;
	char name[128];		/* its name, or the event's */
	__u64 type, track;	/* TrackEvent */
	char cat[16], json[1024];
	__u64 cpu, lost;
	int nannot;
	struct pt_annot annot[PT_PF_ANNOT];	/* the first ones */
};

static struct pkt pk[MAXPKT];
static int npk;

static inline void copy_str(char *dst, size_t len, const struct rd *s)
{
	size_t n = s->end - s->p;

	if (n >= len)
		n = len - 1;
	memcpy(dst, s->p, n);
	dst[n] = 0;
}

static inline int dec_desc(struct pkt *k, struct rd *r)
{
	struct rd s = { 0 }, t = { 0 };
	__u32 f, g;
	__u64 v = 0;
	int ret;

	while ((ret = rd_field(r, &f, &v, &s)) > 0) {
		if (f == 1) {
			k->uuid = v;
		} else if (f == 2) {
			copy_str(k->name, sizeof(k->name), &s);
		} else if (f == 3 || f == 4) {
			k->process = f == 3;
			k->thread = f == 4;
			while ((ret = rd_field(&s, &g, &v, &t)) > 0) {
				if (g == 1)
					k->pid = v;
				else if (f == 4 && g == 2)
					k->tid = v;
				else if ((f == 3 && g == 6) ||
					 (f == 4 && g == 5))
					copy_str(k->name, sizeof(k->name), &t);
			}
			if (ret < 0)
				return ret;
		}
	}
	return ret;
}

/* Field @g of an annotation (@v, or the bytes at @t) into @a. */
static inline void dec_annot(struct pt_annot *a, __u32 g, __u64 v,
			     const struct rd *t)
{
	struct rd e = *t, u = { 0 };
	__u32 h;
	__u64 w = 0;

	if (g == 10) {
		copy_str(a->name, sizeof(a->name), t);
	} else if (g == 2 || g == 3 || g == 4 || g == 7) {
		a->field = g;
		a->v = v;
	} else if (g == 6 || g == 9) {
		a->field = g;
		copy_str(a->s, sizeof(a->s), t);
	} else if (g == 11 && a->ndict < 2) {
		a->field = 11;
		while (rd_field(&e, &h, &w, &u) > 0) {
			if (h == 10)
				copy_str(a->dict[a->ndict].name,
					 sizeof(a->dict[0].name), &u);
			else if (h == 6)
				copy_str(a->dict[a->ndict].s,
					 sizeof(a->dict[0].s), &u);
			else if (h == 2 || h == 3 || h == 4 || h == 7)
				a->dict[a->ndict].v = w;
			if (h != 10)
				a->dict[a->ndict].field = h;
		}
		a->ndict++;
	}
}

static inline int dec_event(struct pkt *k, struct rd *r)
{
	struct rd s = { 0 }, t = { 0 };
	__u32 f, g;
	__u64 v = 0;
	int ret;

	while ((ret = rd_field(r, &f, &v, &s)) > 0) {
		if (f == 9) {
			k->type = v;
		} else if (f == 11) {
			k->track = v;
		} else if (f == 22) {
			copy_str(k->cat, sizeof(k->cat), &s);
		} else if (f == 23) {
			copy_str(k->name, sizeof(k->name), &s);
		} else if (f == 4) {
			char an[16] = "";
			__u64 u = ~0ULL;

			struct pt_annot *a = k->nannot < PT_PF_ANNOT ?
					     &k->annot[k->nannot] : NULL;

			k->nannot++;
			while ((ret = rd_field(&s, &g, &v, &t)) > 0) {
				if (g == 10)
					copy_str(an, sizeof(an), &t);
				else if (g == 3)
					u = v;
				else if (g == 9)
					copy_str(k->json, sizeof(k->json), &t);
				if (a)
					dec_annot(a, g, v, &t);
			}
			if (ret < 0)
				return ret;
			if (!strcmp(an, "cpu"))
				k->cpu = u;
			else if (!strcmp(an, "lost"))
				k->lost = u;
		}
	}
	return ret;
}

static inline int dec_clocks(struct pkt *k, struct rd *r)
{
	struct rd s = { 0 }, t = { 0 };
	__u32 f, g;
	__u64 v = 0, id, ts;
	int ret;

	while ((ret = rd_field(r, &f, &v, &s)) > 0) {
		if (f != 1)
			continue;
		id = ~0ULL;
		ts = 0;
		while ((ret = rd_field(&s, &g, &v, &t)) > 0) {
			if (g == 1)
				id = v;
			else if (g == 2)
				ts = v;
		}
		if (ret < 0)
			return ret;
		if (id < 8)
			k->clocks[id] = ts;
	}
	return ret;
}

/* The Trace in @path into pk[] (npk of them): 0, or -1 if malformed. */
static inline int pt_pf_decode(const char *path)
{
	static unsigned char buf[1 << 20];
	FILE *f = fopen(path, "rb");
	struct rd r, s = { 0 }, t = { 0 };
	size_t len;
	__u32 fld, g;
	__u64 v = 0;
	int ret;

	if (!f)
		return -1;
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	r.p = buf;
	r.end = buf + len;
	r.bad = false;
	npk = 0;
	while ((ret = rd_field(&r, &fld, &v, &s)) > 0) {
		struct pkt *k = &pk[npk];

		if (fld != 1 || npk == MAXPKT)
			return -1;
		memset(k, 0, sizeof(*k));
		while ((ret = rd_field(&s, &g, &v, &t)) > 0) {
			if (g == 8) {
				k->ts = v;
				k->has_ts = true;
			} else if (g == 58) {
				k->clock_id = v;
			} else if (g == 10) {
				k->seq = v;
			} else if (g == 13) {
				k->flags = v;
			} else if (g == 6 || g == 11 || g == 60) {
				k->kind = g;
				ret = g == 6 ? dec_clocks(k, &t) :
				      g == 11 ? dec_event(k, &t) :
				      dec_desc(k, &t);
				if (ret < 0)
					return -1;
			}
		}
		if (ret < 0)
			return -1;
		npk++;
	}
	return ret;
}

#endif /* _PT_PFTRACE_H */
