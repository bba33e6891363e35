// SPDX-License-Identifier: GPL-2.0
/*
 * pea: writing a Perfetto protobuf trace (pea trace --output FILE
 * --format pftrace), which ui.perfetto.dev and trace_processor open and
 * merge with the other Perfetto traces of the same host.
 *
 * The file is a perfetto.protos.Trace: a sequence of TracePacket
 * messages (field 1), all on one packet sequence (id 1):
 *   - first a ClockSnapshot: CLOCK_BOOTTIME, CLOCK_MONOTONIC and
 *     CLOCK_REALTIME read together at open, again at least every
 *     PF_SNAP_EVERY_NS while pea trace runs (its ticks), so that NTP's
 *     slewing of the wall clock and a suspend are followed, and at close;
 *   - a TrackDescriptor for each process and thread when its first event
 *     comes (named by the comm), and one for the "lost records" track;
 *   - each hit a TrackEvent on its thread's track: a kretprobe hit is a
 *     slice (TYPE_SLICE_BEGIN at its entry, return time - latency, and
 *     TYPE_SLICE_END at its return), any other hit an instant;
 *   - lost records are instants on the "lost records" track, with "cpu"
 *     and "lost" (the count) as debug annotations.
 * Event packets are stamped with pea's clock, CLOCK_MONOTONIC
 * (timestamp_clock_id 3); the snapshots let trace_processor convert them
 * to its trace clock, CLOCK_BOOTTIME by default, the clock of ftrace and
 * of Perfetto's own data sources on Linux, and to the wall clock.
 * Every hit carries the object `pea trace --json` prints for it as its
 * "args" debug annotation (a JSON value), then typed debug annotations:
 * a tracepoint's integer and string fields by name (pointers as
 * pointer_value, signed and unsigned integers, strings; a field whose
 * values the print fmt names also as "FIELD_name", a string), a kprobe's
 * PARAM names and fetch expressions by the names --json gives them
 * (bool, int, uint, pointer, string: strings and enums' names; a fault a
 * dictionary {"fault": STEP}, a cut string {"str", "truncated"}).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kfetch.h"
#include "ktypes.h"
#include "pea_tool.h"
#include "tpformat.h"
#include "trace_writer.h"

/* Field numbers of perfetto.protos messages (protos/perfetto/trace/). */
enum {
	PB_TRACE_PACKET = 1,		/* Trace.packet */
	PB_PKT_CLOCK_SNAPSHOT = 6,	/* TracePacket */
	PB_PKT_TIMESTAMP = 8,
	PB_PKT_SEQ_ID = 10,
	PB_PKT_TRACK_EVENT = 11,
	PB_PKT_SEQ_FLAGS = 13,
	PB_PKT_CLOCK_ID = 58,
	PB_PKT_TRACK_DESC = 60,
	PB_CS_CLOCKS = 1,		/* ClockSnapshot */
	PB_CLOCK_ID = 1,		/* ClockSnapshot.Clock */
	PB_CLOCK_TS = 2,
	PB_TD_UUID = 1,			/* TrackDescriptor */
	PB_TD_NAME = 2,
	PB_TD_PROCESS = 3,
	PB_TD_THREAD = 4,
	PB_PD_PID = 1,			/* ProcessDescriptor */
	PB_PD_NAME = 6,
	PB_THD_PID = 1,			/* ThreadDescriptor */
	PB_THD_TID = 2,
	PB_THD_NAME = 5,
	PB_TE_ANNOT = 4,		/* TrackEvent */
	PB_TE_TYPE = 9,
	PB_TE_TRACK = 11,
	PB_TE_CATEGORY = 22,
	PB_TE_NAME = 23,
	PB_DA_BOOL = 2,			/* DebugAnnotation */
	PB_DA_UINT = 3,
	PB_DA_INT = 4,
	PB_DA_STRING = 6,
	PB_DA_POINTER = 7,
	PB_DA_JSON = 9,
	PB_DA_NAME = 10,
	PB_DA_DICT = 11,
};

/* BuiltinClock ids, TrackEvent.Type, TracePacket.SequenceFlags */
#define PB_CLOCK_REALTIME	1
#define PB_CLOCK_MONOTONIC	3
#define PB_CLOCK_BOOTTIME	6
#define PB_TYPE_SLICE_BEGIN	1
#define PB_TYPE_SLICE_END	2
#define PB_TYPE_INSTANT		3
#define PB_SEQ_CLEARED		1
#define PF_SEQ_ID		1
/* A clock snapshot at least this often (ns of CLOCK_MONOTONIC). */
#define PF_SNAP_EVERY_NS	10000000000ULL
/* The "lost records" track: no thread key (bit 63 clear, bit 62 set). */
#define PF_LOST_TRACK		0x4000000000000000ULL

/* A growing byte buffer that messages are encoded into. */
struct pb {
	unsigned char *p;
	size_t len, cap;
	bool oom;
};

static void pb_put(struct pb *b, const void *s, size_t len)
{
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		unsigned char *p;

		while (cap < b->len + len)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, len);
	b->len += len;
}

/* @v as a base-128 varint into @buf (10 bytes at most); its length. */
static size_t varint_enc(unsigned char *buf, __u64 v)
{
	size_t n = 0;

	do {
		buf[n] = v & 0x7f;
		v >>= 7;
		if (v)
			buf[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

static void pb_varint(struct pb *b, __u64 v)
{
	unsigned char buf[10];

	pb_put(b, buf, varint_enc(buf, v));
}

/* A varint field (wire type 0). */
static void pb_uint(struct pb *b, unsigned int field, __u64 v)
{
	pb_varint(b, (__u64)field << 3);
	pb_varint(b, v);
}

/* A length-delimited field (wire type 2): bytes, a string, a message. */
static void pb_bytes(struct pb *b, unsigned int field, const void *s,
		     size_t len)
{
	pb_varint(b, (__u64)field << 3 | 2);
	pb_varint(b, len);
	pb_put(b, s, len);
}

static void pb_str(struct pb *b, unsigned int field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

/* @sub as message field @field of @b; @sub is emptied for reuse. */
static void pb_msg(struct pb *b, unsigned int field, struct pb *sub)
{
	pb_bytes(b, field, sub->p, sub->len);
	b->oom |= sub->oom;
	sub->len = 0;
	sub->oom = false;
}

struct pftrace {
	struct trace_writer w;
	FILE *f;
	struct pb pkt, msg, sub, ent;	/* a packet and its nested messages */
	bool first;			/* no packet written yet */
	__u64 last_ts;			/* the latest event time, ns */
	__u64 next_snap;		/* the next clock snapshot is due */
	__u64 *keys;			/* tracks described; 0 free */
	size_t nkeys, cap;		/* a power of two */
	struct trace_json_line json;	/* one event's --json */
};

static size_t key_slot(const __u64 *t, size_t cap, __u64 key)
{
	size_t i = (key * 0x9e3779b97f4a7c15ULL) >> 7 & (cap - 1);

	while (t[i] && t[i] != key)
		i = (i + 1) & (cap - 1);
	return i;
}

/* Add @key (not 0) to the tracks described: 1 if new, 0 if not, -ENOMEM. */
static int key_add(struct pftrace *p, __u64 key)
{
	size_t i;

	if (2 * (p->nkeys + 1) > p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256, j;
		__u64 *t = calloc(cap, sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (j = 0; j < p->cap; j++)
			if (p->keys[j])
				t[key_slot(t, cap, p->keys[j])] = p->keys[j];
		free(p->keys);
		p->keys = t;
		p->cap = cap;
	}
	i = key_slot(p->keys, p->cap, key);
	if (p->keys[i])
		return 0;
	p->keys[i] = key;
	p->nkeys++;
	return 1;
}

/*
 * Write the TracePacket in p->pkt (its payload field already in it) with
 * the sequence's id, as the Trace's next packet field.
 */
static int pf_packet(struct pftrace *p)
{
	unsigned char hdr[20];
	size_t n;
	int err;

	pb_uint(&p->pkt, PB_PKT_SEQ_ID, PF_SEQ_ID);
	if (p->first) {
		/* No interned data: nothing for a reader to forget. */
		pb_uint(&p->pkt, PB_PKT_SEQ_FLAGS, PB_SEQ_CLEARED);
		p->first = false;
	}
	err = p->pkt.oom ? -ENOMEM : 0;
	/* Trace.packet: its key and length, then the packet. */
	n = varint_enc(hdr, (__u64)PB_TRACE_PACKET << 3 | 2);
	n += varint_enc(hdr + n, p->pkt.len);
	if (!err && (fwrite(hdr, 1, n, p->f) != n ||
		     fwrite(p->pkt.p, 1, p->pkt.len, p->f) != p->pkt.len))
		err = -EIO;
	p->pkt.len = 0;
	p->pkt.oom = false;
	return err;
}

static __u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * A ClockSnapshot packet: the three clocks read between two readings of
 * CLOCK_MONOTONIC, the closest of a few tries; MONOTONIC is their middle.
 * The packet's own time is the BOOTTIME reading (its default clock).
 */
static int pf_clocks(struct pftrace *p)
{
	static const __u32 ids[3] = {
		PB_CLOCK_BOOTTIME, PB_CLOCK_MONOTONIC, PB_CLOCK_REALTIME,
	};
	__u64 best = ~0ULL, v[3] = { 0 };
	int i;

	for (i = 0; i < 5; i++) {
		__u64 m0 = clock_ns(CLOCK_MONOTONIC);
		__u64 bt = clock_ns(CLOCK_BOOTTIME);
		__u64 rt = clock_ns(CLOCK_REALTIME);
		__u64 m1 = clock_ns(CLOCK_MONOTONIC);

		if (m1 - m0 < best) {
			best = m1 - m0;
			v[0] = bt;
			v[1] = m0 + (m1 - m0) / 2;
			v[2] = rt;
		}
	}
	for (i = 0; i < 3; i++) {
		pb_uint(&p->sub, PB_CLOCK_ID, ids[i]);
		pb_uint(&p->sub, PB_CLOCK_TS, v[i]);
		pb_msg(&p->msg, PB_CS_CLOCKS, &p->sub);
	}
	pb_uint(&p->pkt, PB_PKT_TIMESTAMP, v[0]);
	pb_msg(&p->pkt, PB_PKT_CLOCK_SNAPSHOT, &p->msg);
	p->next_snap = v[1] + PF_SNAP_EVERY_NS;
	return pf_packet(p);
}

/* A TrackDescriptor packet: a process's track (@tid 0) or a thread's. */
static int pf_track(struct pftrace *p, __u64 uuid, __u32 pid, __u32 tid,
		    const char *comm)
{
	char name[17];

	snprintf(name, sizeof(name), "%.16s", comm);
	pb_uint(&p->msg, PB_TD_UUID, uuid);
	if (tid) {
		pb_uint(&p->sub, PB_THD_PID, pid);
		pb_uint(&p->sub, PB_THD_TID, tid);
		pb_str(&p->sub, PB_THD_NAME, name);
		pb_msg(&p->msg, PB_TD_THREAD, &p->sub);
	} else {
		pb_uint(&p->sub, PB_PD_PID, pid);
		pb_str(&p->sub, PB_PD_NAME, name);
		pb_msg(&p->msg, PB_TD_PROCESS, &p->sub);
	}
	pb_msg(&p->pkt, PB_PKT_TRACK_DESC, &p->msg);
	return pf_packet(p);
}

/* The head of a TrackEvent packet: its time (CLOCK_MONOTONIC) and type. */
static void pf_te_head(struct pftrace *p, __u64 ts, __u64 track, int type)
{
	pb_uint(&p->pkt, PB_PKT_TIMESTAMP, ts);
	pb_uint(&p->pkt, PB_PKT_CLOCK_ID, PB_CLOCK_MONOTONIC);
	pb_uint(&p->msg, PB_TE_TYPE, type);
	pb_uint(&p->msg, PB_TE_TRACK, track);
}

static int pf_te_end(struct pftrace *p)
{
	pb_msg(&p->pkt, PB_PKT_TRACK_EVENT, &p->msg);
	return pf_packet(p);
}

/* ---- typed debug annotations ---- */

/* An annotation @name of value @v of type @t in p->sub, added to p->msg. */
static void pf_annot_ktype(struct pftrace *p, const char *name,
			   const struct ktype *t, __u64 raw)
{
	__u64 v = ktype_value(t, raw);
	const char *en = ktype_enum_name(t, raw);

	pb_str(&p->sub, PB_DA_NAME, name);
	if (en)
		pb_str(&p->sub, PB_DA_STRING, en);
	else if (ktype_typed(t) && t->cls == KT_BOOL)
		pb_uint(&p->sub, PB_DA_BOOL, !!v);
	else if (ktype_hex(t))
		pb_uint(&p->sub, PB_DA_POINTER, v);
	else if (ktype_signed(t))
		pb_uint(&p->sub, PB_DA_INT, v);	/* int64: two's complement */
	else
		pb_uint(&p->sub, PB_DA_UINT, v);
	pb_msg(&p->msg, PB_TE_ANNOT, &p->sub);
}

/* A dictionary entry of p->sub: @key, an unsigned number or a string. */
static void pf_entry(struct pftrace *p, const char *key, int field, __u64 v,
		     const void *s, size_t len)
{
	pb_str(&p->ent, PB_DA_NAME, key);
	if (field == PB_DA_STRING)
		pb_bytes(&p->ent, field, s, len);
	else
		pb_uint(&p->ent, field, v);
	pb_msg(&p->sub, PB_DA_DICT, &p->ent);
}

/*
 * The probe's PARAM names and fetches, each an annotation named as --json
 * names it, typed as its value: bool, int, uint, pointer, string (an
 * enum's name, a string); a fault is a dictionary {"fault": STEP}, a cut
 * string {"str": ..., "truncated": true}, as in --json.
 */
static void pf_fetches(struct pftrace *p, const struct trace_fmt *fmt,
		       const struct trace_event *ev)
{
	unsigned int i;

	for (i = 0; i < fmt->nparams; i++)
		pf_annot_ktype(p, fmt->params[i]->name, &fmt->params[i]->type,
			       ev->rec.args[fmt->params[i]->reg]);
	if (!fmt->nfetches || !ev->fetch ||
	    !kfetch_block_ok(ev->fetch, ev->fetch_size, fmt->nfetches))
		return;
	for (i = 0; i < fmt->nfetches; i++) {
		const struct kfetch *k = &fmt->fetches[i];
		struct pea_fetch_value v;
		const unsigned char *val;
		__u64 raw = 0;

		if (k->joined)
			continue;	/* in its join()'s string */
		memcpy(&v, ev->fetch + sizeof(struct pea_fetch_block) +
		       i * sizeof(v), sizeof(v));
		val = ev->fetch + v.offset;
		if (k->join) {
			static char s[PEA_FETCH_MAX * (PEA_FETCH_DATA_MAX + 1)];
			unsigned int step;
			bool cut;
			int n = kfetch_join(k, ev->fetch, i, s, sizeof(s), &cut,
					    &step);

			pb_str(&p->sub, PB_DA_NAME, k->expr);
			if (n < 0) {
				pf_entry(p, "fault", PB_DA_UINT, step, NULL, 0);
			} else if (cut) {
				pf_entry(p, "str", PB_DA_STRING, 0, s, n);
				pf_entry(p, "truncated", PB_DA_BOOL, 1, NULL, 0);
			} else {
				pb_bytes(&p->sub, PB_DA_STRING, s, n);
			}
		} else if (v.status == PEA_FETCH_FAULT) {
			pb_str(&p->sub, PB_DA_NAME, k->expr);
			pf_entry(p, "fault", PB_DA_UINT, v.step, NULL, 0);
		} else if (k->str && v.status == PEA_FETCH_TRUNCATED) {
			pb_str(&p->sub, PB_DA_NAME, k->expr);
			pf_entry(p, "str", PB_DA_STRING, 0, val, v.len);
			pf_entry(p, "truncated", PB_DA_BOOL, 1, NULL, 0);
		} else if (k->str) {
			pb_str(&p->sub, PB_DA_NAME, k->expr);
			pb_bytes(&p->sub, PB_DA_STRING, val, v.len);
		} else if (k->conv == KFETCH_NTOP) {
			char a[64];

			kfetch_ntop(val, v.len, a, sizeof(a));
			pb_str(&p->sub, PB_DA_NAME, k->expr);
			pb_bytes(&p->sub, PB_DA_STRING, a, strlen(a));
		} else if (k->f.type == PEA_FETCH_ARRAY) {
			continue;	/* bytes: in "args" */
		} else {
			memcpy(&raw, val, v.len < 8 ? v.len : 8);
			pf_annot_ktype(p, k->expr, &k->type,
				       kfetch_conv_int(k, raw));
			continue;
		}
		pb_msg(&p->msg, PB_TE_ANNOT, &p->sub);
	}
}

/*
 * A tracepoint's integer and string fields, each an annotation of its
 * name: a pointer, a signed or unsigned integer, a string; and beside a
 * field the print fmt names the values of, "FIELD_name" (as --json).
 */
static void pf_tp_fields(struct pftrace *p, const struct tp_format *tp,
			 const unsigned char *raw, __u32 size)
{
	char names[512], key[TP_NAME_LEN + 8];
	int i;

	for (i = 0; raw && i < tp->nfields; i++) {
		const struct tp_field *fl = &tp->fields[i];
		const unsigned char *q = raw + fl->offset;
		__u64 v = 0;

		if (!strncmp(fl->name, "common_", 7) ||
		    fl->offset + fl->size > size)
			continue;
		if (fl->kind == TPF_STR) {
			pb_str(&p->sub, PB_DA_NAME, fl->name);
			pb_bytes(&p->sub, PB_DA_STRING, q,
				 strnlen((const char *)q, fl->size));
			pb_msg(&p->msg, PB_TE_ANNOT, &p->sub);
			continue;
		}
		if (fl->kind != TPF_INT)
			continue;	/* arrays: in "args" */
		memcpy(&v, q, fl->size);
		if (fl->is_signed && fl->size < 8 &&
		    (v >> (fl->size * 8 - 1)) & 1)
			v |= ~0ULL << (fl->size * 8);
		pb_str(&p->sub, PB_DA_NAME, fl->name);
		pb_uint(&p->sub, fl->pointer ? PB_DA_POINTER :
			fl->is_signed ? PB_DA_INT : PB_DA_UINT, v);
		pb_msg(&p->msg, PB_TE_ANNOT, &p->sub);
		snprintf(key, sizeof(key), "%s_name", fl->name);
		if (!tp_sym_format(tp, fl, v, names, sizeof(names)) ||
		    tp_field_find(tp, key))
			continue;
		pb_str(&p->sub, PB_DA_NAME, key);
		pb_str(&p->sub, PB_DA_STRING, names);
		pb_msg(&p->msg, PB_TE_ANNOT, &p->sub);
	}
}

static int pf_event(struct trace_writer *w, unsigned int probe,
		    const struct trace_event *ev)
{
	struct pftrace *p = (struct pftrace *)w;
	const struct trace_fmt *fmt = w->probes[probe];
	const char *json;
	size_t json_len;
	const struct pea_probe_record *r = &ev->rec;
	/* pid 0 is the idle task: keep the key non-zero. */
	__u64 key = ((__u64)r->tgid << 32 | r->pid) + 1;
	int n = key_add(p, key), err;

	if (n < 0)
		return n;
	if (n) {
		/* A process is named once, by the first thread seen in it. */
		n = key_add(p, 1ULL << 63 | r->tgid);
		if (n < 0)
			return n;
		if (n) {
			err = pf_track(p, 1ULL << 63 | r->tgid, r->tgid, 0,
				       r->comm);
			if (err)
				return err;
		}
		err = pf_track(p, key, r->tgid, r->pid, r->comm);
		if (err)
			return err;
	}
	/* The --json object, without its '\n'. */
	json = trace_json_line(&p->json, fmt, ev, &json_len);
	if (!json)
		return -ENOMEM;

	if (fmt->retprobe && (r->flags & PEA_REC_F_RETPROBE)) {
		__u64 start = r->latency_ns > r->time_ns ? 0 :
			      r->time_ns - r->latency_ns;

		pf_te_head(p, start, key, PB_TYPE_SLICE_BEGIN);
	} else {
		pf_te_head(p, r->time_ns, key, PB_TYPE_INSTANT);
	}
	pb_str(&p->msg, PB_TE_CATEGORY, "pea");
	pb_str(&p->msg, PB_TE_NAME, fmt->probe);
	pb_str(&p->sub, PB_DA_NAME, "args");
	pb_bytes(&p->sub, PB_DA_JSON, json, json_len);
	pb_msg(&p->msg, PB_TE_ANNOT, &p->sub);
	if (fmt->tp)
		pf_tp_fields(p, fmt->tp, ev->raw, ev->raw_size);
	pf_fetches(p, fmt, ev);
	err = pf_te_end(p);
	if (!err && fmt->retprobe && (r->flags & PEA_REC_F_RETPROBE)) {
		pf_te_head(p, r->time_ns, key, PB_TYPE_SLICE_END);
		err = pf_te_end(p);
	}
	if (r->time_ns > p->last_ts)
		p->last_ts = r->time_ns;
	return err;
}

static int pf_lost(struct trace_writer *w, int cpu, __u64 count)
{
	struct pftrace *p = (struct pftrace *)w;
	int n = key_add(p, PF_LOST_TRACK);

	if (n < 0)
		return n;
	if (n) {
		pb_uint(&p->msg, PB_TD_UUID, PF_LOST_TRACK);
		pb_str(&p->msg, PB_TD_NAME, "lost records");
		pb_msg(&p->pkt, PB_PKT_TRACK_DESC, &p->msg);
		n = pf_packet(p);
		if (n)
			return n;
	}
	pf_te_head(p, p->last_ts, PF_LOST_TRACK, PB_TYPE_INSTANT);
	pb_str(&p->msg, PB_TE_CATEGORY, "pea");
	pb_str(&p->msg, PB_TE_NAME, "lost records");
	pb_str(&p->sub, PB_DA_NAME, "cpu");
	pb_uint(&p->sub, PB_DA_UINT, cpu);
	pb_msg(&p->msg, PB_TE_ANNOT, &p->sub);
	pb_str(&p->sub, PB_DA_NAME, "lost");
	pb_uint(&p->sub, PB_DA_UINT, count);
	pb_msg(&p->msg, PB_TE_ANNOT, &p->sub);
	return pf_te_end(p);
}

/* pea trace's tick (@now: CLOCK_MONOTONIC ns): a clock snapshot if due. */
static int pf_tick(struct trace_writer *w, __u64 now)
{
	struct pftrace *p = (struct pftrace *)w;
	int err;

	if (now < p->next_snap)
		return 0;
	err = pf_clocks(p);
	p->next_snap = now + PF_SNAP_EVERY_NS;
	return err;
}

static void pf_free(struct pftrace *p)
{
	trace_json_line_close(&p->json);
	free(p->keys);
	free(p->pkt.p);
	free(p->msg.p);
	free(p->sub.p);
	free(p->ent.p);
	free(p);
}

static int pf_close(struct trace_writer *w, char *msg, size_t msg_len)
{
	struct pftrace *p = (struct pftrace *)w;
	int err = pf_clocks(p);

	if (fflush(p->f) || ferror(p->f))
		err = err ? err : -EIO;
	if (fclose(p->f) && !err)
		err = -errno;
	pf_free(p);
	if (msg_len)
		*msg = 0;
	return err;
}

static const struct trace_writer_ops pf_ops = {
	.event = pf_event,
	.lost = pf_lost,
	.tick = pf_tick,
	.close = pf_close,
};

struct trace_writer *trace_pftrace_open(const char *path,
					const struct trace_fmt *const *probes,
					unsigned int nprobes, int ncpus,
					char *err, size_t err_len)
{
	struct pftrace *p = calloc(1, sizeof(*p));

	if (!p) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	p->w.ops = &pf_ops;
	p->w.probes = probes;
	p->w.nprobes = nprobes;
	p->w.ncpus = ncpus;
	p->first = true;
	if (trace_json_line_open(&p->json)) {
		snprintf(err, err_len, "out of memory");
		pf_free(p);
		return NULL;
	}
	p->f = fopen(path, "w");
	if (!p->f) {
		snprintf(err, err_len, "cannot create %s: %s", path,
			 strerror(errno));
		pf_free(p);
		return NULL;
	}
	if (pf_clocks(p)) {
		snprintf(err, err_len, "writing %s: %s", path,
			 strerror(ferror(p->f) ? EIO : ENOMEM));
		fclose(p->f);
		pf_free(p);
		return NULL;
	}
	return &p->w;
}
