// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace: --hist and --count-by, aggregated in the tool from the
 * events it delivers.
 *
 * Each option makes one table per probe of the session (--count-by probe:
 * one table for all of them). A histogram has fixed buckets: one for
 * negative values (signed keys only), one for 0, then [2^k, 2^(k+1)) for
 * k = 0..63. A count table is an open-addressing hash table of at most
 * --max-keys distinct keys (AGG_DEFAULT_MAX_KEYS): the events of a key
 * that does not fit are added to the table's "other" total, which is
 * printed. So a session's memory is bounded whatever it traces and for
 * however long: keys are at most AGG_STR_KEY_MAX bytes (a kernel stack,
 * at most PEA_KSTACK_MAX addresses).
 *
 * Tables the kernel can count (agg_kernel()) come from the probe's
 * in-kernel table instead, kernel stacks included (PEA_AGG_KEY_KSTACK:
 * the key is a stack id, resolved with the stacks the same read copies).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <string.h>
#include <time.h>
#include "pea_tool.h"
#include "probe_kind.h"
#include "tpformat.h"
#include "ktypes.h"
#include "aggregate.h"
#include "stacks.h"
#include "kfetch.h"

#define HIST_BUCKETS	65	/* 0, then [2^k, 2^(k+1)) for k = 0..63 */
#define HIST_BAR	40
#define KEY_BYTES_MAX	(PEA_KSTACK_MAX * 8)

enum agg_kind {
	K_LATENCY,
	K_RET,
	K_ARG,
	K_FIELD,
	K_COMM,
	K_PID,
	K_TID,
	K_CPU,
	K_PROBE,
	K_KSTACK,
	K_MULTI,	/* --count-by comm,pid: context keys together */
	K_PAIRED,	/* --latency: ns since the start probe's hit */
	K_FETCH,	/* a fetch expression given after the probe */
};

#define MULTI_MAX	4	/* parts of a K_MULTI key */

struct count_ent {
	__u64 hash;
	__u64 count;
	unsigned char *key;	/* NULL: a free slot */
	__u32 len;
};

/**
 * struct agg_table - one --hist or --count-by table of one probe
 * @text:   the KEY as given
 * @kind:   what it reads
 * @arg:    K_ARG: which argument register
 * @ty:     K_RET, K_ARG by a parameter's name: the type from BTF that the
 *          register's value is read as (NULL: the raw register)
 * @field:  K_FIELD: the probe's tracepoint field
 * @sgn:    numbers are signed (a negative bucket; printed signed)
 * @hex:    numbers print as 0x... (arguments, pointers)
 * @hist:   a histogram, else a count table
 * @probe:  the probe's index (-1: every probe, --count-by probe)
 * @unused: the option is for another probe: no table here
 * @kern:   filled from the probe's table in the kernel (agg_kernel()):
 *          every hit counted, no record needed
 * @kword:  @kern count tables: the key's first word in the kernel's key
 * @parts:  K_MULTI: the kinds of its parts, @nparts of them (K_COMM,
 *          K_PID, K_TID, K_CPU); its key is their bytes in order, 16 for
 *          a comm, 8 for a number
 * @pword:  K_MULTI and @kern: each part's first word in the kernel's key
 * @kf:     K_FETCH: the probe's fetch expression, @fidx its index; a
 *          count key is its status, the failing read, then its bytes (an
 *          integer's 8, zero-extended; a string's or array's own), as
 *          fetch_key() makes it from a record and kern_fetch_key() from
 *          the kernel's key
 */
struct agg_table {
	const char *text;
	enum agg_kind kind;
	unsigned int arg;
	const struct ktype *ty;
	const struct tp_field *field;
	bool sgn, hex, hist;
	int probe;
	bool unused;
	bool kern;
	unsigned int kword;
	enum agg_kind parts[MULTI_MAX];
	unsigned int pword[MULTI_MAX];
	int nparts;
	const struct kfetch *kf;
	unsigned int fidx;
	__u64 total;
	/* histogram, and its values' sum, min and max (signed with @sgn) */
	__u64 neg, b[HIST_BUCKETS];
	/* --lhist: @nlb = lin_n + 2 buckets (below, lin_n, from the last) */
	__u64 *lb;
	unsigned int nlb;
	__u64 sum, vmin, vmax;
	__u64 failed;	/* K_FETCH: hits whose fetch failed: no value */
	/* count table */
	struct count_ent *slots;
	size_t nslots, nkeys;
	__u64 other;
};

struct agg {
	struct agg_opts o;
	int nprobes;
	const struct trace_fmt *const *probes;
	struct agg_table *tabs;	/* [spec][probe], hist specs first */
	int ntabs;
	int *kfd;		/* per probe: its link with a kernel table, or -1 */
	/*
	 * --count-by probe with several probes: probe 0's link, whose table
	 * every probe counts in (PEA_LINK_IOC_AGG_SHARE), keyed by probe and
	 * the other tables' context keys (agg_kernel_shared()); else -1
	 */
	int share_fd;
	struct pea_agg_attr share_attr;
	int share_nparts;
	__u64 lost;		/* records lost in the interval */
	void *kbuf;		/* entries read from the kernel */
	size_t kbuf_len;
	void *sbuf;		/* and the stacks they name */
	size_t sbuf_len;
	const struct pea_agg_stack **stk;	/* by id, the read's stacks */
	size_t nstk;
	struct pea_stack_set *folded;	/* --folded: the session's stacks */
	/* --latency */
	int lat_fd;		/* the start's link, while attached, or -1 */
	struct pea_lat_key lat_keys[2];	/* the start's and the end's */
	__u64 unpaired;		/* ends without a start, in the interval */
	struct pea_lat_info li;	/* the start's counts, last read */
	__u64 overflow_shown;	/* li.overflow at the last print */
};

/* ---- parsing the keys ---- */

static const char hist_keys[] =
	"latency or ret (kretprobe, uretprobe), arg0..arg5 or a parameter's name (kprobe, uprobe), an integer fetch expression given after the probe, or a numeric field of the tracepoint (a field wins over a key of its name; ctx.NAME is the key)";
static const char count_keys[] =
	"comm, pid, tid, cpu, probe, kstack, ret, arg0..arg5, a parameter's name (kprobe, kretprobe: from BTF), a fetch expression given after the probe, or a field of the tracepoint (a field wins over a key of its name; ctx.NAME is the key)";

/* Context keys are spelled ctx.NAME where a tracepoint field is NAME. */
#define CTX_PFX "ctx."

static bool is_argn(const char *s, unsigned int *n)
{
	if (strncasecmp(s, "arg", 3) || s[3] < '0' || s[3] > '5' || s[4])
		return false;
	*n = s[3] - '0';
	return true;
}

static bool fetch_is_bytes(__u8 ty);

/*
 * --count-by comm,pid: context keys together (comm, pid, tid, cpu, each
 * once, as ctx.NAME too: a list names no field), at most 4 words as the
 * kernel's tables hold them (a comm is two); or with one fetch
 * expression of the probe's (--count-by comm,filename: @t->kf, @t->fidx),
 * at most the 16 words of a wide kernel key. 0 or PEA_EXIT_USAGE.
 */
static int parse_multi(struct agg_table *t, const char *text,
		       const struct trace_fmt *fmt)
{
	static const struct {
		const char *name;
		enum agg_kind kind;
	} ctxk[] = {
		{ "comm", K_COMM }, { "pid", K_PID }, { "tid", K_TID },
		{ "cpu", K_CPU },
	};
	const char *p = text, *e;
	unsigned int words = 0;
	bool fetch = false;
	size_t i, n;
	int j;

	t->kind = K_MULTI;
	while (*p) {
		/* str(EXPR,N) has a ',' of its own. */
		e = strncmp(p, "str(", 4) ? p : strchr(p, ')');
		e = strchr(e ? e : p, ',');
		n = e ? (size_t)(e - p) : strlen(p);
		if (n > strlen(CTX_PFX) && !strncmp(p, CTX_PFX, strlen(CTX_PFX))) {
			p += strlen(CTX_PFX);
			n -= strlen(CTX_PFX);
		}
		for (i = 0; i < sizeof(ctxk) / sizeof(ctxk[0]); i++)
			if (strlen(ctxk[i].name) == n && !strncmp(p, ctxk[i].name, n))
				break;
		if (i == sizeof(ctxk) / sizeof(ctxk[0])) {
			/* A fetch expression given after the probe, once. */
			unsigned int f;

			for (f = 0; f < fmt->nfetches; f++)
				if (strlen(fmt->fetches[f].expr) == n &&
				    !strncmp(fmt->fetches[f].expr, p, n))
					break;
			if (f == fmt->nfetches)
				return tool_usage("trace", "--count-by '%s': a list of keys takes comm, pid, tid and cpu, each once, and one fetch expression given after the probe",
						  text);
			if (t->kf)
				return tool_usage("trace", "--count-by '%s': one fetch expression per list",
						  text);
			if (t->nparts == MULTI_MAX)
				return tool_usage("trace", "--count-by '%s': at most %d keys in a list",
						  text, MULTI_MAX);
			t->kf = &fmt->fetches[f];
			t->fidx = f;
			fetch = true;
			words += 1 + (fetch_is_bytes(t->kf->f.type) ?
				      (t->kf->f.size + 7) / 8 : 1);
			t->parts[t->nparts++] = K_FETCH;
			goto next;
		}
		for (j = 0; j < t->nparts; j++)
			if (t->parts[j] == ctxk[i].kind)
				return tool_usage("trace", "--count-by '%s': %s twice",
						  text, ctxk[i].name);
		words += ctxk[i].kind == K_COMM ? 2 : 1;
		if (t->nparts == MULTI_MAX || (!fetch && words > 4))
			return tool_usage("trace", "--count-by '%s': at most 4 words of key (comm takes 2, pid, tid and cpu 1)",
					  text);
		t->parts[t->nparts++] = ctxk[i].kind;
next:
		if (!e)
			break;
		p = e + 1;
		if (!*p)
			return tool_usage("trace", "--count-by '%s': a key after the last ','",
					  text);
	}
	return 0;
}

/* Whether fetch type @ty is a string or an array (a key of bytes). */
static bool fetch_is_bytes(__u8 ty)
{
	return ty == PEA_FETCH_STR || ty == PEA_FETCH_ARRAY;
}

/*
 * @text names one of probe @fmt's fetch expressions, as given after the
 * probe: @t takes its value. A fetch expression wins over a parameter of
 * the same name (it is what the events print). 1 if it did, 0 if @text
 * is no fetch of @fmt's, or PEA_EXIT_USAGE.
 */
static int parse_fetch(struct agg_table *t, const char *text,
		       const struct trace_fmt *fmt, bool hist)
{
	const struct kfetch *k;
	unsigned int i;

	for (i = 0; i < fmt->nfetches; i++)
		if (!strcmp(fmt->fetches[i].expr, text))
			break;
	if (i == fmt->nfetches)
		return 0;
	k = &fmt->fetches[i];
	if (k->join)
		return tool_usage("trace", "%s '%s': join() prints a probe's strings; it is no key (one of them is: EXPR[N])",
				  hist ? "--hist" : "--count-by", text);
	if (hist && k->conv)
		return tool_usage("trace", "--hist '%s': the kernel counts the value as it reads it, not as ntop(), ntohs(), ntohl() or bswap() print it (--count-by takes it)",
				  text);
	if (hist && fetch_is_bytes(k->f.type))
		return tool_usage("trace", "--hist '%s': the fetch is %s; --hist takes a number",
				  text, k->str ? "a string" : "an array");
	t->kind = K_FETCH;
	t->kf = k;
	t->fidx = i;
	t->sgn = k->f.type >= PEA_FETCH_S8 && k->f.type <= PEA_FETCH_S64;
	return 1;
}

/* Set @t's key from @text for probe @fmt; 0 or PEA_EXIT_USAGE. */
static int parse_key(struct agg_table *t, const char *text,
		     const struct trace_fmt *fmt, bool hist)
{
	const char *opt = hist ? "--hist" : "--count-by";
	const char *allowed = hist ? hist_keys : count_keys;
	const struct tp_field *fl = NULL;
	const struct ksig_param *pa = NULL;
	bool ctx = !strncmp(text, CTX_PFX, strlen(CTX_PFX));

	t->text = text;
	t->hist = hist;
	/* Before lists: str(EXPR,N) has a ','. */
	if (!ctx && fmt->nfetches) {
		int rc = parse_fetch(t, text, fmt, hist);

		if (rc)
			return rc == 1 ? 0 : rc;
	}
	if (fmt->kind->args && !strncmp(text, "str(", 4))
		return tool_usage("trace", "%s '%s': a fetch expression is a key when it is given after the probe too (pea trace %s '%s' %s '%s')",
				  opt, text, fmt->probe, text, opt, text);
	if (!hist && strchr(text, ','))
		return parse_multi(t, text, fmt);
	/*
	 * A tracepoint's own fields win over the context keys of the same
	 * name (sched_wakeup's comm is the woken task's, sys_exit's ret the
	 * syscall's); ctx.NAME always names the context key. Field names are
	 * C identifiers: none has the '.' of ctx.
	 */
	if (ctx)
		text += strlen(CTX_PFX);
	else if (fmt->tp)
		fl = tp_field_find(fmt->tp, text);
	else if (fmt->kind->args)
		pa = ksig_param(fmt->sig, text);
	if (fl)
		goto field;
	if (pa)
		goto param;
	if (!strcmp(text, "latency") || !strcmp(text, "ret")) {
		if (!fmt->retprobe)
			return tool_usage("trace", "%s %s: only a kretprobe or uretprobe has a %s; %s is not one (%s allows %s)",
					  opt, text,
					  text[0] == 'l' ? "latency" : "return value",
					  fmt->probe, opt, allowed);
		t->kind = text[0] == 'l' ? K_LATENCY : K_RET;
		t->sgn = t->kind == K_RET;
		if (t->kind == K_RET && fmt->sig &&
		    ktype_typed(&fmt->sig->ret)) {
			t->ty = &fmt->sig->ret;
			t->sgn = ktype_signed(t->ty);
			t->hex = !hist && ktype_hex(t->ty);
		}
		return 0;
	}
	if (is_argn(text, &t->arg)) {
		if (!fmt->kind->args)
			return tool_usage("trace", "%s %s: %s has no arguments; name one of its fields (%s allows %s)",
					  opt, text, fmt->probe, opt, allowed);
		t->kind = K_ARG;
		t->hex = !hist;
		return 0;
	}
	if (!hist) {
		static const struct {
			const char *name;
			enum agg_kind kind;
		} fixed[] = {
			{ "comm", K_COMM }, { "pid", K_PID }, { "tid", K_TID },
			{ "cpu", K_CPU }, { "probe", K_PROBE },
			{ "kstack", K_KSTACK },
		};
		size_t i;

		for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
			if (strcmp(text, fixed[i].name))
				continue;
			t->kind = fixed[i].kind;
			if (t->kind == K_KSTACK && !fmt->kstack)
				return tool_usage("trace", "--count-by kstack: %s has no kernel stacks (kprobes, kretprobes and tracepoints have)",
						  fmt->probe);
			return 0;
		}
	}
	if (ctx)
		return tool_usage("trace", "%s '%s': %s%s is not a context key (%s allows %s)",
				  opt, t->text, CTX_PFX, text, opt, allowed);
	if (fmt->kind->args &&
	    (strstr(text, "->") || !strncmp(text, "str(", 4)))
		return tool_usage("trace", "%s '%s': a fetch expression is a key when it is given after the probe too (pea trace %s '%s' %s '%s')",
				  opt, text, fmt->probe, text, opt, text);
	if (fmt->kind->args && fmt->sig)
		return tool_usage("trace", "%s '%s': %s has no parameter '%s' (pea list -v shows them; %s allows %s)",
				  opt, text, fmt->probe, text, opt, allowed);
	if (fmt->kind->args && fmt->sig_why && tool_is_ident(text))
		return tool_usage("trace", "%s '%s': %s: %s (%s allows %s)",
				  opt, text, fmt->probe, fmt->sig_why, opt,
				  allowed);
	if (fmt->tp)
		return tool_usage("trace", "%s '%s': %s has no field '%s' (%s allows %s)",
				  opt, text, fmt->probe, text, opt, allowed);
	return tool_usage("trace", "%s '%s': not a key of %s (%s allows %s)",
			  opt, text, fmt->probe, opt, allowed);
param:
	if (pa->reg < 0 || !ktype_typed(&pa->type))
		return tool_usage("trace", "%s '%s': parameter %s of %s is %s%s; keys are integer, enum, bool or pointer parameters in the first six argument registers",
				  opt, text, text, fmt->probe, pa->type.name,
				  pa->reg < 0 ? ", not in an argument register" :
				  ", not a number");
	t->kind = K_ARG;
	t->arg = pa->reg;
	t->ty = &pa->type;
	t->sgn = ktype_signed(t->ty);
	t->hex = ktype_hex(t->ty) && !hist;
	return 0;
field:
	t->kind = K_FIELD;
	t->field = fl;
	if (fl->kind == TPF_INT) {
		t->sgn = fl->is_signed && !fl->pointer;
		t->hex = fl->pointer;
		return 0;
	}
	if (!hist && (fl->kind == TPF_STR || fl->kind == TPF_LOC_STR))
		return 0;
	return tool_usage("trace", "%s '%s': the field is %s; %s takes %s",
			  opt, text,
			  fl->kind == TPF_STR || fl->kind == TPF_LOC_STR ?
			  "a string" : "an array or a struct",
			  opt, hist ? "a number" : "a number or a string");
}

/*
 * A pairing key of probe @fmt: "tid" (ctx.tid), an argument (argN, a
 * parameter's name) or an integer field of 1, 2, 4 or 8 bytes. 0 or
 * PEA_EXIT_USAGE.
 */
static int lat_key_parse(const char *text, const struct trace_fmt *fmt,
			 struct pea_lat_key *k)
{
	struct agg_table t;

	memset(k, 0, sizeof(*k));
	/* A field or parameter named tid wins, as in parse_key(). */
	if (!strcmp(text, CTX_PFX "tid") ||
	    (!strcmp(text, "tid") &&
	     !(fmt->tp ? tp_field_find(fmt->tp, text) != NULL :
	       fmt->kind->args && ksig_param(fmt->sig, text)))) {
		k->kind = PEA_LAT_KEY_TID;
		return 0;
	}
	if (fmt->tp ? !tp_field_find(fmt->tp, text) :
	    !fmt->kind->args ||
	    (!is_argn(text, &k->arg) && !ksig_param(fmt->sig, text)))
		return tool_usage("trace", "--key '%s': %s has no %s '%s' (a key is tid, arg0..arg5, a parameter's name or an integer field)",
				  text, fmt->probe,
				  fmt->tp ? "field" : "argument", text);
	memset(&t, 0, sizeof(t));
	if (parse_key(&t, text, fmt, true))
		return PEA_EXIT_USAGE;
	if (t.kind == K_ARG) {
		k->kind = PEA_LAT_KEY_ARG;
		k->arg = t.arg;
		/* A narrower parameter (BTF): only its bits are the key. */
		if (t.ty && (t.ty->size == 1 || t.ty->size == 2 ||
			     t.ty->size == 4))
			k->size = t.ty->size;
		return 0;
	}
	if (t.kind == K_FIELD && (t.field->size == 1 || t.field->size == 2 ||
				  t.field->size == 4 || t.field->size == 8)) {
		k->kind = PEA_LAT_KEY_FIELD;
		k->offset = t.field->offset;
		k->size = t.field->size;
		return 0;
	}
	return tool_usage("trace", "--key '%s': %s pairs by tid, an argument (arg0..arg5, a parameter's name) or an integer field",
			  text, fmt->probe);
}

/* --latency: the two probes' keys and the histogram's table. */
static int lat_new(struct agg *a, const struct trace_fmt *const *probes)
{
	char start[128], *end;
	int rc;

	snprintf(start, sizeof(start), "%s", a->o.lat_key ? a->o.lat_key : "tid");
	end = strchr(start, ',');
	if (end)
		*end++ = '\0';
	rc = lat_key_parse(start, probes[0], &a->lat_keys[0]);
	if (!rc)
		rc = lat_key_parse(end ? end : start, probes[1],
				   &a->lat_keys[1]);
	if (rc)
		return rc;
	/* hist[0], on the end probe only */
	a->tabs[0].unused = true;
	a->tabs[1].kind = K_PAIRED;
	a->tabs[1].text = "latency";
	a->tabs[1].hist = true;
	a->tabs[1].probe = 1;
	return 0;
}

int agg_new(struct agg **out, const struct agg_opts *o,
	    const struct trace_fmt *const *probes, int nprobes)
{
	struct agg *a;
	int s, p, n, rc;

	*out = NULL;
	if (!o->nhist && !o->ncount)
		return 0;
	n = (o->nhist + o->ncount) * nprobes;
	a = calloc(1, sizeof(*a));
	if (a)
		a->tabs = calloc(n, sizeof(*a->tabs));
	if (!a || !a->tabs) {
		free(a);
		tool_err("out of memory");
		return PEA_EXIT_ERR;
	}
	a->kfd = malloc(nprobes * sizeof(*a->kfd));
	if (!a->kfd) {
		free(a->tabs);
		free(a);
		tool_err("out of memory");
		return PEA_EXIT_ERR;
	}
	for (p = 0; p < nprobes; p++)
		a->kfd[p] = -1;
	a->lat_fd = -1;
	a->share_fd = -1;
	a->o = *o;
	a->nprobes = nprobes;
	a->probes = probes;
	a->ntabs = n;
	for (s = 0; s < o->nhist + o->ncount; s++) {
		bool hist = s < o->nhist;
		const char *text = hist ? o->hist[s] : o->count[s - o->nhist];
		int only = hist ? o->hist_probe[s] : o->count_probe[s - o->nhist];

		if (s == 0 && o->latency && nprobes == 2) {
			rc = lat_new(a, probes);
			if (rc) {
				agg_free(a);
				return rc;
			}
			continue;
		}
		for (p = 0; p < nprobes; p++) {
			struct agg_table *t = &a->tabs[s * nprobes + p];

			if (only >= 0 && only != p) {
				t->unused = true;
				continue;
			}
			rc = parse_key(t, text, probes[p], hist);
			if (!rc && hist && o->lin) {
				t->nlb = o->lin_n + 2;
				t->lb = calloc(t->nlb, sizeof(*t->lb));
				if (!t->lb) {
					tool_err("out of memory");
					rc = PEA_EXIT_ERR;
				}
			}
			if (rc) {
				agg_free(a);
				return rc;
			}
			t->probe = t->kind == K_PROBE ? -1 : p;
		}
	}
	*out = a;
	return 0;
}

void agg_free(struct agg *a)
{
	int i;
	size_t j;

	if (!a)
		return;
	for (i = 0; i < a->ntabs; i++) {
		for (j = 0; j < a->tabs[i].nslots; j++)
			free(a->tabs[i].slots[j].key);
		free(a->tabs[i].slots);
		free(a->tabs[i].lb);
	}
	free(a->tabs);
	free(a->kfd);
	free(a->kbuf);
	free(a->sbuf);
	free(a->stk);
	pea_stacks_free(a->folded);
	free(a);
}

/* ---- adding an event ---- */

static __u64 load_int(const unsigned char *p, unsigned int size, bool sgn)
{
	__u64 v = 0;

	memcpy(&v, p, size);	/* little endian */
	if (sgn && size < 8 && (v >> (size * 8 - 1)) & 1)
		v |= ~0ULL << (size * 8);
	return v;
}

/*
 * Fetch @t->fidx of @ev: its value's description and bytes; false if
 * the event has no well-formed block with it.
 */
static bool fetch_val(const struct agg_table *t, const struct trace_event *ev,
		      struct pea_fetch_value *v, const unsigned char **p)
{
	if (!ev->fetch ||
	    !kfetch_block_ok(ev->fetch, ev->fetch_size, t->fidx + 1))
		return false;
	memcpy(v, ev->fetch + sizeof(struct pea_fetch_block) +
	       t->fidx * sizeof(*v), sizeof(*v));
	*p = ev->fetch + v->offset;
	return true;
}

#define FETCH_KEY_MAX	(2 + AGG_STR_KEY_MAX)
/* A K_MULTI key: 16 bytes per context part, a fetch's length and key. */
#define MULTI_KEY_MAX	(MULTI_MAX * 16 + 2 + FETCH_KEY_MAX)

/*
 * A K_FETCH count key from its parts: the status, the failing read,
 * then no bytes (a fault), the integer's 8 (zero-extended), or the
 * string's or array's (at most AGG_STR_KEY_MAX, marked truncated past).
 */
static __u32 fetch_key_of(const struct agg_table *t, __u8 status, __u8 step,
			  const unsigned char *p, __u32 len,
			  unsigned char *out)
{
	__u64 raw = 0;

	out[1] = status == PEA_FETCH_FAULT ? step : 0;
	if (status == PEA_FETCH_FAULT) {
		out[0] = status;
		return 2;
	}
	if (!fetch_is_bytes(t->kf->f.type)) {
		memcpy(&raw, p, len < 8 ? len : 8);
		out[0] = PEA_FETCH_OK;
		memcpy(out + 2, &raw, 8);
		return 10;
	}
	if (len > AGG_STR_KEY_MAX) {
		len = AGG_STR_KEY_MAX;
		status = PEA_FETCH_TRUNCATED;
	}
	out[0] = status;
	memcpy(out + 2, p, len);
	return 2 + len;
}

/* @ev's K_FETCH count key into @out; 0 if it has none. */
static __u32 fetch_key(const struct agg_table *t, const struct trace_event *ev,
		       unsigned char *out)
{
	struct pea_fetch_value v;
	const unsigned char *p;

	if (!fetch_val(t, ev, &v, &p))
		return 0;
	return fetch_key_of(t, v.status, v.step, p, v.len, out);
}

/* The number @t keys on; false if @ev has none (a short raw entry). */
static bool key_num(const struct agg_table *t, const struct trace_event *ev,
		    __u64 *v)
{
	const struct tp_field *fl = t->field;

	switch (t->kind) {
	case K_LATENCY:
		*v = ev->rec.latency_ns;
		return true;
	case K_RET:
		*v = ktype_value(t->ty, (__u64)ev->rec.ret);
		return true;
	case K_ARG:
		*v = ktype_value(t->ty, ev->rec.args[t->arg]);
		return true;
	case K_PID:
		*v = ev->rec.tgid;
		return true;
	case K_TID:
		*v = ev->rec.pid;
		return true;
	case K_CPU:
		*v = ev->rec.cpu;
		return true;
	case K_PROBE:
		*v = (__u64)ev->probe;
		return true;
	case K_FIELD:
		if (!ev->raw || fl->offset + fl->size > ev->raw_size)
			return false;
		*v = load_int(ev->raw + fl->offset, fl->size, fl->is_signed);
		return true;
	case K_FETCH: {
		struct pea_fetch_value fv;
		const unsigned char *p;

		/* A failed fetch has no value (the kernel: errors). */
		if (!fetch_val(t, ev, &fv, &p) || fv.status != PEA_FETCH_OK ||
		    !fv.len || fv.len > 8)
			return false;
		*v = load_int(p, fv.len, t->sgn);
		return true;
	}
	default:
		return false;
	}
}

/* A string field's bytes (up to its NUL) in the raw entry. */
static bool key_field_str(const struct agg_table *t,
			  const struct trace_event *ev,
			  const unsigned char **s, __u32 *len)
{
	const struct tp_field *fl = t->field;
	__u32 loc, off, n;

	if (!ev->raw || fl->offset + fl->size > ev->raw_size)
		return false;
	if (fl->kind == TPF_STR) {
		off = fl->offset;
		n = fl->size;
	} else {
		memcpy(&loc, ev->raw + fl->offset, 4);
		off = loc & 0xffff;
		n = loc >> 16;
		if (fl->rel)
			off += fl->offset + 4;
		if (off + n > ev->raw_size)
			return false;
	}
	*s = ev->raw + off;
	*len = strnlen((const char *)*s, n);
	return true;
}

/*
 * --lhist: the bucket of @v as the kernel's PEA_AGG_HIST_LINEAR puts it
 * (module/pea_agg.c): 0 below lin_min, i in 1..lin_n for [lin_min +
 * (i-1)*step, lin_min + i*step), lin_n + 1 from the last bound on (an
 * unsigned value past 2^63 too).
 */
static unsigned int lin_bucket(const struct agg *a, const struct agg_table *t,
			       __u64 v)
{
	__s64 sv = (__s64)v;
	__u64 i;

	if (!t->sgn && sv < 0)
		return a->o.lin_n + 1;
	if (sv < a->o.lin_min)
		return 0;
	i = ((__u64)sv - (__u64)a->o.lin_min) / a->o.lin_step;
	return i >= a->o.lin_n ? a->o.lin_n + 1 : (unsigned int)i + 1;
}

static unsigned int hist_bucket(__u64 v)
{
	return v ? 64 - __builtin_clzll(v) : 0;
}

static __u64 fnv1a(const unsigned char *p, __u32 len)
{
	__u64 h = 0xcbf29ce484222325ULL;
	__u32 i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Double the slots (rehashing); false when out of memory. */
static bool count_grow(struct agg_table *t, size_t nslots)
{
	struct count_ent *s = calloc(nslots, sizeof(*s));
	size_t i, j;

	if (!s)
		return false;
	for (i = 0; i < t->nslots; i++) {
		if (!t->slots[i].key)
			continue;
		for (j = t->slots[i].hash & (nslots - 1); s[j].key;
		     j = (j + 1) & (nslots - 1))
			;
		s[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = s;
	t->nslots = nslots;
	return true;
}

static void count_add(struct agg *a, struct agg_table *t,
		      const unsigned char *key, __u32 len, __u64 n)
{
	__u64 h = fnv1a(key, len);
	struct count_ent *e;
	size_t i;

	t->total += n;
	if (t->nslots) {
		for (i = h & (t->nslots - 1); t->slots[i].key;
		     i = (i + 1) & (t->nslots - 1)) {
			e = &t->slots[i];
			if (e->hash == h && e->len == len &&
			    !memcmp(e->key, key, len)) {
				e->count += n;
				return;
			}
		}
	}
	if (t->nkeys >= a->o.max_keys) {
		t->other += n;
		return;
	}
	/* At most half full: the slots stay below 4 * max_keys. */
	if ((t->nkeys + 1) * 2 > t->nslots &&
	    !count_grow(t, t->nslots ? t->nslots * 2 : 64)) {
		t->other += n;
		return;
	}
	for (i = h & (t->nslots - 1); t->slots[i].key;
	     i = (i + 1) & (t->nslots - 1))
		;
	e = &t->slots[i];
	e->key = malloc(len ? len : 1);
	if (!e->key) {
		t->other += n;
		return;
	}
	memcpy(e->key, key, len);
	e->len = len;
	e->hash = h;
	e->count = n;
	t->nkeys++;
}

/* Whether @x < @y as the table's values (signed with @sgn). */
static bool val_lt(const struct agg_table *t, __u64 x, __u64 y)
{
	return t->sgn ? (__s64)x < (__s64)y : x < y;
}

/* Add @n values of sum @sum, min @lo and max @hi to @t's stats. */
static void hist_stats(struct agg_table *t, __u64 sum, __u64 lo, __u64 hi,
		       __u64 n)
{
	if (!n)
		return;
	if (!t->total || val_lt(t, lo, t->vmin))
		t->vmin = lo;
	if (!t->total || val_lt(t, t->vmax, hi))
		t->vmax = hi;
	t->sum += sum;	/* wraps past 64 bits */
}

/*
 * A K_MULTI key's bytes: each part's, a comm as 16 bytes NUL-padded, a
 * fetch as the length of its count key (2 bytes) and that key
 * (fetch_key_of()); 0 if the event has no fetch block for it.
 */
static __u32 multi_key(const struct agg_table *t, const struct trace_event *ev,
		       unsigned char *out)
{
	__u32 len = 0, n;
	__u16 n16;
	__u64 v;
	int i;

	for (i = 0; i < t->nparts; i++) {
		if (t->parts[i] == K_FETCH) {
			n = fetch_key(t, ev, out + len + 2);
			if (!n)
				return 0;
			n16 = (__u16)n;
			memcpy(out + len, &n16, 2);
			len += 2 + n;
			continue;
		}
		if (t->parts[i] == K_COMM) {
			memset(out + len, 0, 16);
			memcpy(out + len, ev->rec.comm,
			       strnlen(ev->rec.comm, sizeof(ev->rec.comm)));
			len += 16;
			continue;
		}
		v = t->parts[i] == K_PID ? ev->rec.tgid :
		    t->parts[i] == K_TID ? ev->rec.pid : ev->rec.cpu;
		memcpy(out + len, &v, 8);
		len += 8;
	}
	return len;
}

void agg_add(struct agg *a, const struct trace_event *ev)
{
	int probe = ev->probe >= 0 && ev->probe < a->nprobes ? ev->probe : 0;
	int s, nspecs = a->o.nhist + a->o.ncount;

	for (s = 0; s < nspecs; s++) {
		struct agg_table *t = &a->tabs[s * a->nprobes + probe];
		unsigned char mk[MULTI_KEY_MAX];
		const unsigned char *key;
		__u32 len;
		__u64 v;

		if (t->probe < 0)	/* one table for all probes */
			t = &a->tabs[s * a->nprobes];
		if (t->unused || t->kern)
			continue;
		if (t->hist) {
			if (!key_num(t, ev, &v)) {
				struct pea_fetch_value fv;
				const unsigned char *p;

				if (t->kind == K_FETCH &&
				    fetch_val(t, ev, &fv, &p) &&
				    fv.status != PEA_FETCH_OK)
					t->failed++;
				continue;
			}
			hist_stats(t, v, v, v, 1);
			t->total++;
			if (t->lb)
				t->lb[lin_bucket(a, t, v)]++;
			else if (t->sgn && (__s64)v < 0)
				t->neg++;
			else
				t->b[hist_bucket(v)]++;
			continue;
		}
		if (t->kind == K_MULTI) {
			len = multi_key(t, ev, mk);
			if (!len)
				continue;
			key = mk;
		} else if (t->kind == K_FETCH) {
			len = fetch_key(t, ev, mk);
			if (!len)
				continue;
			key = mk;
		} else if (t->kind == K_COMM) {
			key = (const unsigned char *)ev->rec.comm;
			len = strnlen(ev->rec.comm, sizeof(ev->rec.comm));
		} else if (t->kind == K_KSTACK) {
			key = (const unsigned char *)ev->kstack;
			len = ev->kstack ? ev->kstack_nr * 8 : 0;
			if (len > KEY_BYTES_MAX)
				len = KEY_BYTES_MAX;
		} else if (t->kind == K_FIELD && t->field->kind != TPF_INT) {
			if (!key_field_str(t, ev, &key, &len))
				continue;
			if (len > AGG_STR_KEY_MAX)
				len = AGG_STR_KEY_MAX;
		} else {
			if (!key_num(t, ev, &v))
				continue;
			key = (const unsigned char *)&v;
			len = sizeof(v);
		}
		count_add(a, t, key, len, 1);
	}
}


/* ---- tables in the kernel (PEA_LINK_IOC_AGG_*) ---- */

/* The kernel key part of a context key, or NONE. */
static __u8 kern_key_of(enum agg_kind kind)
{
	switch (kind) {
	case K_COMM:
		return PEA_AGG_KEY_COMM;
	case K_PID:
		return PEA_AGG_KEY_PID;
	case K_TID:
		return PEA_AGG_KEY_TID;
	case K_CPU:
		return PEA_AGG_KEY_CPU;
	case K_KSTACK:
		return PEA_AGG_KEY_KSTACK;
	case K_FETCH:
		return PEA_AGG_KEY_FETCH;
	default:
		return PEA_AGG_KEY_NONE;
	}
}

/*
 * The kernel's key_fetch_size for fetch table @t: an integer's 0 (one
 * word), a string's or array's bytes; -1 if they are more than a wide
 * kernel key holds (PEA_AGG_WIDE_FETCH_KEY_MAX: the table stays with the
 * records, which keep AGG_STR_KEY_MAX bytes). Past PEA_AGG_FETCH_KEY_MAX
 * the table's key is wide (PEA_AGG_F_WIDE_KEY): a 64-byte str() is 9
 * words.
 */
static int kern_fetch_size(const struct agg_table *t)
{
	if (!fetch_is_bytes(t->kf->f.type))
		return 0;
	return t->kf->f.size <= PEA_AGG_WIDE_FETCH_KEY_MAX ? t->kf->f.size :
	       -1;
}

/* The words key part @k takes in the kernel's key of @at. */
static int kern_part_words(const struct pea_agg_attr *at, __u8 k)
{
	if (k == PEA_AGG_KEY_FETCH)
		return 1 + (at->key_fetch_size ?
			    (at->key_fetch_size + 7) / 8 : 1);
	return k == PEA_AGG_KEY_COMM ? 2 : 1;
}

/* The word of key part @k in the kernel key of @at, or -1 if absent. */
static int kern_word(const struct pea_agg_attr *at, int nparts, __u8 k)
{
	int i, w = 0;

	for (i = 0; i < nparts; i++) {
		if (at->keys[i] == k)
			return w;
		w += kern_part_words(at, at->keys[i]);
	}
	return -1;
}

/*
 * Whether a count table's key is made of context keys (the first part's
 * kernel key, or NONE).
 */
static __u8 kern_key(const struct agg_table *t)
{
	int j;

	if (t->kf && kern_fetch_size(t) < 0)	/* K_FETCH, or a list's */
		return PEA_AGG_KEY_NONE;
	if (t->kind != K_MULTI)
		return kern_key_of(t->kind);
	for (j = 0; j < t->nparts; j++)
		if (!kern_key_of(t->parts[j]))
			return PEA_AGG_KEY_NONE;
	return kern_key_of(t->parts[0]);
}

/*
 * Whether the kernel computes histogram @t exactly as agg_add() would:
 * a latency, an argument register as it is (no BTF type), or an integer
 * field, signed or not as the tool takes it (the kernel's log2 buckets
 * are the tool's, the negative and [2^63, 2^64) ones included). A typed
 * ret or parameter differs from the raw register: those stay with the
 * records.
 */
static bool kern_hist_ok(const struct agg_table *t)
{
	if (t->kind == K_LATENCY || t->kind == K_PAIRED)
		return true;
	if (t->kind == K_FETCH)	/* an integer (parse_fetch()) */
		return true;
	if (t->kind == K_ARG)
		return !t->ty && !t->sgn;
	return t->kind == K_FIELD && t->field->kind == TPF_INT &&
	       (t->field->size == 1 || t->field->size == 2 ||
		t->field->size == 4 || t->field->size == 8);
}

/*
 * Whether count table @t's key parts are all in the kernel key of @at
 * (@nparts parts), a fetch's as its own; sets where each part's words
 * are (@t->pword).
 */
static bool kern_fits(struct agg_table *t, const struct pea_agg_attr *at,
		      int nparts)
{
	int np = t->kind == K_MULTI ? t->nparts : 1, j, w;

	if (!kern_key(t))
		return false;
	/* Its fetch part (K_FETCH, or a list's) is the kernel key's one. */
	if (t->kf &&
	    (at->key_fetch != t->fidx ||
	     (int)at->key_fetch_size != kern_fetch_size(t)))
		return false;
	for (j = 0; j < np; j++) {
		w = kern_word(at, nparts,
			      kern_key_of(t->kind == K_MULTI ? t->parts[j] :
					  t->kind));
		if (w < 0)
			return false;
		t->pword[j] = w;
	}
	return true;
}

static struct agg_table *tab_of(struct agg *a, int s, int p)
{
	return &a->tabs[s * a->nprobes + p];
}

/*
 * Whether the session counts in one kernel table shared by its probes:
 * several probes, --count-by probe, no histogram, every other count table
 * keyed by context keys only (comm, pid, tid, cpu, a list of them), which
 * every kind with tables gives (netfilter has none). The probe table is
 * then the shared table's entries summed per probe, and each probe's
 * other tables its entries of that probe.
 */
static bool agg_shared(const struct agg *a)
{
	int s, p, nspecs = a->o.nhist + a->o.ncount;
	bool probe = false;

	if (a->nprobes < 2 || a->o.latency || a->o.nhist)
		return false;
	for (p = 0; p < a->nprobes; p++)
		if (a->probes[p]->kind == &netfilter_kind)
			return false;
	for (s = 0; s < nspecs; s++) {
		for (p = 0; p < a->nprobes; p++) {
			const struct agg_table *t = &a->tabs[s * a->nprobes + p];

			if (t->unused)
				continue;
			if (t->kind == K_PROBE) {
				probe = true;
				continue;
			}
			if ((t->kind != K_COMM && t->kind != K_PID &&
			     t->kind != K_TID && t->kind != K_CPU &&
			     t->kind != K_MULTI) || t->kf)
				return false;
		}
	}
	return probe;
}

/*
 * The shared table's attr (agg_shared()): the probe's word first, then
 * each context key the count tables take, once, in a wide key if they
 * need more than four words (at most 1 + 2 + 1 + 1 + 1).
 */
static void shared_attr(struct agg *a, struct pea_agg_attr *attr,
			int *nparts)
{
	int s, p, j, i, words = 1, nspecs = a->o.nhist + a->o.ncount;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->keys[0] = PEA_AGG_KEY_PROBE;
	*nparts = 1;
	for (s = 0; s < nspecs; s++) {
		for (p = 0; p < a->nprobes; p++) {
			const struct agg_table *t = tab_of(a, s, p);
			int np = t->kind == K_MULTI ? t->nparts : 1;

			if (t->unused || t->kind == K_PROBE)
				continue;
			for (j = 0; j < np; j++) {
				__u8 k = kern_key_of(t->kind == K_MULTI ?
						     t->parts[j] : t->kind);

				for (i = 0; i < *nparts && attr->keys[i] != k;
				     i++)
					;
				if (i < *nparts || *nparts == PEA_AGG_KEY_PARTS)
					continue;
				attr->keys[(*nparts)++] = k;
				words += kern_part_words(attr, k);
			}
		}
	}
	if (words > PEA_AGG_KEY_WORDS)
		attr->flags |= PEA_AGG_F_WIDE_KEY;
	attr->max_keys = a->o.max_keys < PEA_AGG_MAX_KEYS ? a->o.max_keys :
			 PEA_AGG_MAX_KEYS;
}

/*
 * agg_kernel() of a session whose probes share one table: probe 0's link
 * creates it, the others count in it. The tables it fills are marked
 * @kern as each probe joins; a probe that cannot join is an error (every
 * kind agg_shared() lets in gives these keys).
 */
static int agg_kernel_shared(struct agg *a, int p, int link_fd,
			     bool no_records)
{
	int s, nspecs = a->o.nhist + a->o.ncount;
	struct pea_agg_attr *attr = &a->share_attr;

	if (p == 0) {
		shared_attr(a, attr, &a->share_nparts);
		if (no_records)
			attr->flags |= PEA_AGG_F_NO_RECORDS;
		if (ioctl(link_fd, PEA_LINK_IOC_AGG_CREATE, attr))
			return -errno;	/* an older module: the records */
		a->share_fd = link_fd;
		a->kfd[0] = link_fd;
	} else {
		if (a->share_fd < 0)
			return 0;
		if (ioctl(link_fd, PEA_LINK_IOC_AGG_SHARE, a->share_fd)) {
			int err = errno;

			tool_err("%s: counting in the kernel table of %s: %s",
				 a->probes[p]->probe, a->probes[0]->probe,
				 strerror(err));
			return -err;
		}
	}
	for (s = 0; s < nspecs; s++) {
		struct agg_table *t = tab_of(a, s, p);

		if (t->unused)
			continue;
		if (t->kind == K_PROBE) {
			/* Complete once the last probe counts in the kernel. */
			if (p == a->nprobes - 1) {
				tab_of(a, s, 0)->kern = true;
				tab_of(a, s, 0)->kword = 0;
			}
			continue;
		}
		if (kern_fits(t, attr, a->share_nparts)) {
			t->kern = true;
			t->kword = t->pword[0];
		}
	}
	return 0;
}

bool agg_latency_end_apart(const struct agg *a)
{
	int s;

	if (!a || !a->o.latency || a->lat_keys[1].kind == PEA_LAT_KEY_TID)
		return false;
	/* No table of END's but the latency's. */
	for (s = 0; s < a->o.nhist + a->o.ncount; s++) {
		const struct agg_table *t = &a->tabs[s * a->nprobes + 1];

		if (!t->unused && t->kind != K_PAIRED)
			return false;
	}
	return true;
}

bool agg_kernel_needed(const struct agg *a, int p)
{
	return a && ((a->o.latency && p < 2) ||
		     (p > 0 && a->share_fd >= 0));
}

int agg_kernel(struct agg *a, int p, int link_fd, bool no_records)
{
	int s, nspecs, words = 0, nparts = 0, i;
	struct agg_table *hist = NULL;
	struct pea_agg_attr attr;
	bool all = true;

	if (!a)
		return 0;
	if (a->o.latency && p == 0) {
		/*
		 * The start: its hits are kept in the kernel, not written,
		 * unless another table of it counts its records.
		 */
		struct pea_lat_attr la;

		for (s = 1; s < a->o.nhist + a->o.ncount; s++)
			if (!tab_of(a, s, 0)->unused)
				no_records = false;
		memset(&la, 0, sizeof(la));
		la.size = sizeof(la);
		la.flags = no_records ? PEA_LAT_F_NO_RECORDS : 0;
		la.max_pending = a->o.max_pending;
		la.key = a->lat_keys[0];
		if (ioctl(link_fd, PEA_LINK_IOC_LAT_CREATE, &la))
			return -errno;
		a->lat_fd = link_fd;
		return 0;
	}
	if (agg_shared(a))
		return agg_kernel_shared(a, p, link_fd, no_records);
	nspecs = a->o.nhist + a->o.ncount;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	/* The first histogram the kernel can compute, keyed by nothing. */
	for (s = 0; s < a->o.nhist && !hist; s++)
		if (!tab_of(a, s, p)->unused && kern_hist_ok(tab_of(a, s, p)))
			hist = tab_of(a, s, p);
	if (hist) {
		attr.max_keys = 1;
		attr.hist = PEA_AGG_HIST_LOG2;
		if (a->o.lin) {
			attr.hist = PEA_AGG_HIST_LINEAR;
			attr.lin_min = a->o.lin_min;
			attr.lin_max = a->o.lin_max;
			attr.lin_step = a->o.lin_step;
		}
		if (hist->kind == K_PAIRED) {
			if (a->lat_fd < 0)
				return -EBADF;
			attr.value = PEA_AGG_VAL_PAIRED;
			attr.pair_fd = a->lat_fd;
			attr.pair_key = a->lat_keys[1];
		} else if (hist->kind == K_LATENCY) {
			attr.value = PEA_AGG_VAL_LATENCY;
		} else if (hist->kind == K_ARG) {
			attr.value = PEA_AGG_VAL_ARG;
			attr.val_arg = hist->arg;
		} else if (hist->kind == K_FETCH) {
			/* Signed as the fetch's type, in the kernel too. */
			attr.value = PEA_AGG_VAL_FETCH;
			attr.val_fetch = hist->fidx;
		} else {
			attr.value = PEA_AGG_VAL_FIELD;
			attr.val_offset = hist->field->offset;
			attr.val_size = hist->field->size;
			if (hist->sgn)
				attr.flags |= PEA_AGG_F_SIGNED;
		}
	} else {
		/* Else the context count tables, their keys in one. */
		for (s = a->o.nhist; s < nspecs; s++) {
			struct agg_table *t = tab_of(a, s, p);
			int np = t->kind == K_MULTI ? t->nparts : 1, j;

			if (t->unused || t->probe < 0 || !kern_key(t))
				continue;
			for (j = 0; j < np; j++) {
				__u8 k = kern_key_of(t->kind == K_MULTI ?
						     t->parts[j] : t->kind);
				struct pea_agg_attr with = attr;

				for (i = 0; i < nparts && attr.keys[i] != k;
				     i++)
					;
				/* One fetch per key: another's, records. */
				if (i < nparts || nparts == PEA_AGG_KEY_PARTS)
					continue;
				if (k == PEA_AGG_KEY_FETCH) {
					with.key_fetch = t->fidx;
					with.key_fetch_size = kern_fetch_size(t);
				}
				if (words + kern_part_words(&with, k) >
				    PEA_AGG_WIDE_KEY_WORDS)
					continue;
				attr = with;
				attr.keys[nparts++] = k;
				words += kern_part_words(&attr, k);
			}
		}
		if (!nparts)
			return 0;
		/* More than struct pea_agg_entry's four words: wide entries. */
		if (words > PEA_AGG_KEY_WORDS)
			attr.flags |= PEA_AGG_F_WIDE_KEY;
		attr.max_keys = a->o.max_keys < PEA_AGG_MAX_KEYS ?
				a->o.max_keys : PEA_AGG_MAX_KEYS;
		/* Stacks: as many as keys, as deep as --kstack's. */
		if (kern_word(&attr, nparts, PEA_AGG_KEY_KSTACK) >= 0) {
			attr.max_stacks = attr.max_keys;
			attr.stack_depth = a->probes[p]->kstack_depth ?
					   a->probes[p]->kstack_depth :
					   PEA_KSTACK_MAX;
		}
	}
	/* Records are needed unless the kernel takes every table of @p. */
	for (s = 0; s < nspecs; s++) {
		struct agg_table *t = tab_of(a, s, p);

		if (t->probe < 0 && !tab_of(a, s, 0)->unused)
			all = false;	/* --count-by probe: from records */
		else if (!t->unused &&
			 !(hist ? t == hist :
			   !t->hist && kern_fits(t, &attr, nparts)))
			all = false;
	}
	if (all && no_records)
		attr.flags |= PEA_AGG_F_NO_RECORDS;
	if (ioctl(link_fd, PEA_LINK_IOC_AGG_CREATE, &attr))
		return -errno;	/* an older module: the records path */
	a->kfd[p] = link_fd;
	if (hist) {
		hist->kern = true;
		return 0;
	}
	for (s = a->o.nhist; s < nspecs; s++) {
		struct agg_table *t = tab_of(a, s, p);

		if (t->unused || t->probe < 0 ||
		    !kern_fits(t, &attr, nparts))
			continue;	/* no room in the key: from records */
		t->kern = true;
		t->kword = t->pword[0];
	}
	return 0;
}

static int stk_cmp(const void *x, const void *y)
{
	const struct pea_agg_stack *a = *(const struct pea_agg_stack *const *)x;
	const struct pea_agg_stack *b = *(const struct pea_agg_stack *const *)y;

	return (a->id > b->id) - (a->id < b->id);
}

/* Index the @nr stacks of @size bytes a read wrote into a->sbuf, by id. */
static int kern_stacks(struct agg *a, __u32 nr, __u64 size)
{
	const unsigned char *p = a->sbuf, *end = p + size;
	size_t i;

	free(a->stk);
	a->nstk = 0;
	a->stk = nr ? malloc(nr * sizeof(*a->stk)) : NULL;
	if (nr && !a->stk)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		const struct pea_agg_stack *s = (const void *)p;

		if ((size_t)(end - p) < sizeof(*s) ||
		    (size_t)(end - p) < sizeof(*s) + s->nr * 8ULL)
			return -EPROTO;
		a->stk[i] = s;
		p += sizeof(*s) + s->nr * 8ULL;
	}
	a->nstk = nr;
	qsort(a->stk, nr, sizeof(*a->stk), stk_cmp);
	return 0;
}

/* The stack of id @id in the last read, or NULL. */
static const struct pea_agg_stack *kern_stack(const struct agg *a, __u64 id)
{
	size_t lo = 0, hi = a->nstk;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->stk[mid]->id == id)
			return a->stk[mid];
		if (a->stk[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * The count key (fetch_key_of()) of the fetch part at word @w of a
 * kernel key of @kw words: the status word, then the bytes (see the
 * uapi). Its length.
 */
static __u32 kern_fetch_key(const struct agg_table *t, const __u64 *key,
			    __u32 kw, __u32 w, unsigned char *out)
{
	__u64 sw = key[w];
	__u32 n = PEA_AGG_FETCH_KEY_LEN(sw);
	__u32 room = (kw - w - 1) * 8;

	return fetch_key_of(t, PEA_AGG_FETCH_KEY_STATUS(sw),
			    PEA_AGG_FETCH_KEY_STEP(sw),
			    (const unsigned char *)&key[w + 1],
			    n < room ? n : room, out);
}

/*
 * Add one kernel entry to the kernel tables of probe @p: its key of @kw
 * words (PEA_AGG_KEY_WORDS, or PEA_AGG_WIDE_KEY_WORDS in a wide table's
 * struct pea_agg_entry_wide), and its fields @e, as struct
 * pea_agg_entry's after its key.
 */
static void kern_add(struct agg *a, int p, const __u64 *key, __u32 kw,
		     const struct pea_agg_entry *e, __u32 nb)
{
	int s, nspecs = a->o.nhist + a->o.ncount;
	__u32 b, len;
	__u64 v;

	for (s = 0; s < nspecs; s++) {
		struct agg_table *t = tab_of(a, s, p);

		if (t->probe < 0)	/* one table for all probes */
			t = tab_of(a, s, 0);
		if (!t->kern)
			continue;
		if (t->hist) {
			/* Kernel buckets: negative, 0, then [2^k, 2^(k+1)). */
			hist_stats(t, (__u64)e->sum, (__u64)e->min,
				   (__u64)e->max, e->count);
			t->total += e->count;
			if (t->lb) {
				/* The kernel's linear buckets are ours. */
				for (b = 0; b < nb && b < a->o.lin_n + 2; b++)
					t->lb[b] += e->buckets[b];
				continue;
			}
			if (nb > 0)
				t->neg += e->buckets[0];
			for (b = 1; b < nb && b - 1 < HIST_BUCKETS; b++)
				t->b[b - 1] += e->buckets[b];
			continue;
		}
		if (t->kind == K_MULTI) {
			unsigned char mk[MULTI_KEY_MAX];
			int j;

			for (j = 0, len = 0; j < t->nparts; j++) {
				if (t->parts[j] == K_FETCH) {
					__u32 n = kern_fetch_key(t, key, kw,
								 t->pword[j],
								 mk + len + 2);
					__u16 n16 = (__u16)n;

					memcpy(mk + len, &n16, 2);
					len += 2 + n;
					continue;
				}
				if (t->parts[j] == K_COMM) {
					memcpy(mk + len, &key[t->pword[j]], 16);
					len += 16;
				} else {
					memcpy(mk + len, &key[t->pword[j]], 8);
					len += 8;
				}
			}
			count_add(a, t, mk, len, e->count);
		} else if (t->kind == K_FETCH) {
			unsigned char fk[FETCH_KEY_MAX];

			len = kern_fetch_key(t, key, kw, t->kword, fk);
			count_add(a, t, fk, len, e->count);
		} else if (t->kind == K_COMM) {
			len = strnlen((const char *)&key[t->kword], 16);
			count_add(a, t, (const unsigned char *)&key[t->kword],
				  len, e->count);
		} else if (t->kind == K_KSTACK) {
			const struct pea_agg_stack *st = kern_stack(a,
							key[t->kword]);

			/* Id 0: no stack, as a record without one. */
			if (key[t->kword] && !st) {
				t->other += e->count;
				t->total += e->count;
				continue;
			}
			len = st ? st->nr * 8 : 0;
			count_add(a, t, st ? (const unsigned char *)st->ips :
				  NULL, len > KEY_BYTES_MAX ? KEY_BYTES_MAX : len,
				  e->count);
		} else {
			v = key[t->kword];
			/* A probe's records carry its index + 1 (cmd_trace.c). */
			if (t->kind == K_PROBE)
				v--;
			count_add(a, t, (const unsigned char *)&v, sizeof(v),
				  e->count);
		}
	}
}

/* Read and clear probe @p's kernel table into its tables. */
static void kern_collect(struct agg *a, int p)
{
	struct pea_agg_read r;
	int s, nspecs = a->o.nhist + a->o.ncount;
	__u32 i, kw;

	if (a->kfd[p] < 0)
		return;
	for (;;) {
		memset(&r, 0, sizeof(r));
		r.size = sizeof(r);
		r.flags = PEA_AGG_READ_F_CLEAR;
		r.buf = (uintptr_t)a->kbuf;
		r.buf_len = a->kbuf_len;
		r.stacks = (uintptr_t)a->sbuf;
		r.stacks_len = a->sbuf_len;
		if (!ioctl(a->kfd[p], PEA_LINK_IOC_AGG_READ, &r))
			break;
		if (errno != ENOSPC) {
			tool_err("reading the kernel's table of %s: %s",
				 a->probes[p]->probe, strerror(errno));
			return;
		}
		/* Nothing was cleared: again with room for all of them. */
		if ((size_t)r.nr_entries * r.entry_size > a->kbuf_len) {
			free(a->kbuf);
			a->kbuf_len = (size_t)r.nr_entries * r.entry_size +
				      4096;
			a->kbuf = malloc(a->kbuf_len);
		}
		if (r.stacks_size > a->sbuf_len) {
			free(a->sbuf);
			a->sbuf_len = r.stacks_size + 65536;
			a->sbuf = malloc(a->sbuf_len);
		}
		if ((r.nr_entries && !a->kbuf) || (r.stacks_size && !a->sbuf)) {
			a->kbuf_len = a->kbuf ? a->kbuf_len : 0;
			a->sbuf_len = a->sbuf ? a->sbuf_len : 0;
			tool_err("out of memory reading the kernel's table");
			return;
		}
	}
	if (kern_stacks(a, r.nr_stacks, r.stacks_size)) {
		tool_err("reading the kernel's stacks of %s: malformed or out of memory",
			 a->probes[p]->probe);
		return;
	}
	a->unpaired += r.unpaired;
	/* The key's words: what the entry's size leaves after its fields. */
	kw = (r.entry_size - 8ULL * r.nr_buckets -
	      (sizeof(struct pea_agg_entry) - 8 * PEA_AGG_KEY_WORDS)) / 8;
	if (r.nr_entries && kw != PEA_AGG_KEY_WORDS &&
	    kw != PEA_AGG_WIDE_KEY_WORDS) {
		tool_err("reading the kernel's table of %s: entries of %u bytes",
			 a->probes[p]->probe, r.entry_size);
		return;
	}
	for (i = 0; i < r.nr_entries; i++) {
		const char *ent = (const char *)a->kbuf +
				  (size_t)i * r.entry_size;
		const __u64 *key = (const __u64 *)ent;
		int pp = p;

		/* A shared table: the probe is the key's first word. */
		if (a->share_fd >= 0) {
			if (!key[0] || key[0] > (__u64)a->nprobes)
				continue;
			pp = (int)key[0] - 1;
		}
		/* The fields after the key, where struct pea_agg_entry has them. */
		kern_add(a, pp, key, kw, (const struct pea_agg_entry *)
			 (ent + 8 * (kw - PEA_AGG_KEY_WORDS)), r.nr_buckets);
	}
	/* A fetch's hits without a value (the kernel's errors). */
	for (s = 0; s < a->o.nhist; s++)
		if (tab_of(a, s, p)->kern && tab_of(a, s, p)->kind == K_FETCH)
			tab_of(a, s, p)->failed += r.errors;
	/*
	 * Hits whose key did not fit: the count tables' "other" (of a shared
	 * table, whose probe is unknown: the probe table's).
	 */
	for (s = a->o.nhist; s < nspecs; s++) {
		struct agg_table *t = tab_of(a, s, p);

		if (a->share_fd >= 0 && t->kind != K_PROBE)
			continue;
		if (t->kern) {
			t->other += r.dropped;
			t->total += r.dropped;
		}
	}
}

/* The start's counts, while its link is there. */
static void lat_info_read(struct agg *a)
{
	if (a->lat_fd >= 0 && ioctl(a->lat_fd, PEA_LINK_IOC_LAT_INFO, &a->li))
		tool_err("reading the pairing table: %s", strerror(errno));
}

void agg_kernel_detach(struct agg *a, int p)
{
	if (a && a->o.latency && p == 0 && a->lat_fd >= 0) {
		lat_info_read(a);
		a->lat_fd = -1;
	}
	if (!a || a->kfd[p] < 0)
		return;
	kern_collect(a, p);
	a->kfd[p] = -1;
}

/* ---- printing ---- */

static const char *probe_name(const struct agg *a, const struct agg_table *t)
{
	return t->probe < 0 ? "all probes" : a->probes[t->probe]->probe;
}

/* A bucket bound 2^k as bpftrace writes it: 512, 1K, 2K, ..., 8E. */
static void pow2_label(char *buf, size_t len, unsigned int k)
{
	static const char units[] = " KMGTPE";
	unsigned int u = k / 10;

	if (u >= sizeof(units) - 1)
		u = sizeof(units) - 2;
	if (u)
		snprintf(buf, len, "%llu%c", 1ULL << (k - 10 * u), units[u]);
	else
		snprintf(buf, len, "%llu", 1ULL << k);
}

static void bucket_label(char *buf, size_t len, int i)
{
	char lo[24], hi[24];

	if (i < 0) {
		snprintf(buf, len, "(..., 0)");
	} else if (i == 0) {
		snprintf(buf, len, "[0]");
	} else if (i == 1) {
		snprintf(buf, len, "[1]");
	} else {
		pow2_label(lo, sizeof(lo), i - 1);
		pow2_label(hi, sizeof(hi), i);
		snprintf(buf, len, "[%s, %s)", lo, hi);
	}
}

static void print_bar_line(FILE *f, const char *label, __u64 n, __u64 max)
{
	int w = max ? (int)((n * HIST_BAR + max - 1) / max) : 0;

	fprintf(f, "%-16s %10llu |", label, (unsigned long long)n);
	fprintf(f, "%.*s%*s|\n", w,
		"@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@", HIST_BAR - w, "");
}

static const char *hist_unit(const struct agg_table *t)
{
	return t->kind == K_LATENCY || t->kind == K_PAIRED ? "ns" : NULL;
}

/*
 * --latency: what no bucket shows, for the interval: ends without a
 * start, starts the kernel could not keep (its pairing table full).
 */
static void lat_print_human(FILE *f, const struct agg *a)
{
	fprintf(f, "since %s; unpaired ends %llu, starts not kept (pairing table full) %llu, starts kept now %u\n",
		a->probes[0]->probe, (unsigned long long)a->unpaired,
		(unsigned long long)(a->li.overflow - a->overflow_shown),
		a->li.pending);
}

static void lat_print_json(FILE *f, const struct agg *a)
{
	fputs(",\"start\":", f);
	json_put_str(f, a->probes[0]->probe, strlen(a->probes[0]->probe));
	fprintf(f, ",\"unpaired\":%llu,\"start_overflow\":%llu,\"pending\":%u",
		(unsigned long long)a->unpaired,
		(unsigned long long)(a->li.overflow - a->overflow_shown),
		a->li.pending);
}

/*
 * How complete a table is, after its header: every hit counted in the
 * kernel, or the records that arrived (and how many the session lost
 * meanwhile; nothing said when none was).
 */
static void put_origin(FILE *f, const struct agg *a, const struct agg_table *t)
{
	if (t->kern)
		fputs(", complete (in-kernel)", f);
	else if (a->lost)
		fprintf(f, ", sampled from records (%llu records lost)",
			(unsigned long long)a->lost);
	fputc('\n', f);
}

static void put_origin_json(FILE *f, const struct agg *a,
			    const struct agg_table *t)
{
	fprintf(f, ",\"complete\":%s", t->kern || !a->lost ? "true" : "false");
	if (t->kern)
		fputs(",\"in_kernel\":true", f);
	else
		fprintf(f, ",\"lost\":%llu", (unsigned long long)a->lost);
}

static void put_val(FILE *f, const struct agg_table *t, __u64 v)
{
	if (t->sgn)
		fprintf(f, "%lld", (long long)v);
	else
		fprintf(f, "%llu", (unsigned long long)v);
}

/* The mean, rounded toward zero (of the sum as it wrapped). */
static __u64 hist_avg(const struct agg_table *t)
{
	if (!t->total)
		return 0;
	if (t->sgn)
		return (__u64)((__s64)t->sum / (__s64)t->total);
	return t->sum / t->total;
}

/* --lhist: bucket @i's bounds, lin_min + (i-1)*step and + i*step. */
static void lin_bounds(const struct agg *a, unsigned int i, __s64 *lo,
		       __s64 *hi)
{
	*lo = (__s64)((__u64)a->o.lin_min + (__u64)(i - 1) * a->o.lin_step);
	*hi = (__s64)((__u64)a->o.lin_min + (__u64)i * a->o.lin_step);
}

/*
 * The names a tracepoint field's print fmt gives value @v (tpsym.c), in
 * @buf, or NULL: not a field key, or no name applies.
 */
static const char *field_names(const struct agg *a, const struct agg_table *t,
			       __u64 v, char *buf, size_t len)
{
	const struct tp_format *tp;

	if (t->kind != K_FIELD || t->field->kind != TPF_INT || t->probe < 0)
		return NULL;
	tp = a->probes[t->probe]->tp;
	return tp ? tp_sym_format(tp, t->field, v, buf, len) : NULL;
}

/*
 * --lhist with a step of 1 on a field with names: a bucket holds one
 * value, so it is labelled with that value's names too.
 */
static const char *lin_names(const struct agg *a, const struct agg_table *t,
			     unsigned int i, char *buf, size_t len)
{
	if (a->o.lin_step != 1 || i == 0 || i == a->o.lin_n + 1)
		return NULL;
	return field_names(a, t, (__u64)(a->o.lin_min + (__s64)(i - 1)), buf,
			   len);
}

static void lin_label(char *buf, size_t len, const struct agg *a,
		      unsigned int i)
{
	__s64 lo, hi;

	if (i == 0) {
		snprintf(buf, len, "(..., %lld)", (long long)a->o.lin_min);
		return;
	}
	lin_bounds(a, i, &lo, &hi);
	if (i == a->o.lin_n + 1)
		snprintf(buf, len, "[%lld, ...)", (long long)lo);
	else
		snprintf(buf, len, "[%lld, %lld)", (long long)lo, (long long)hi);
}

static void put_stats_line(FILE *f, const struct agg_table *t);

/* --lhist: the buckets from the first to the last that is not empty. */
static void lin_print_human(FILE *f, const struct agg *a,
			    const struct agg_table *t)
{
	unsigned int i, n = a->o.lin_n + 2;
	int lo = -1, hi = -1;
	__u64 max = 0;
	char label[320], names[256];

	for (i = 0; i < n; i++) {
		if (!t->lb[i])
			continue;
		if (lo < 0)
			lo = i;
		hi = i;
		if (t->lb[i] > max)
			max = t->lb[i];
	}
	for (i = lo; lo >= 0 && (int)i <= hi; i++) {
		lin_label(label, sizeof(label), a, i);
		if (lin_names(a, t, i, names, sizeof(names)))
			snprintf(label + strlen(label),
				 sizeof(label) - strlen(label), " %s", names);
		print_bar_line(f, label, t->lb[i], max);
	}
	put_stats_line(f, t);
}

static void hist_print_human(FILE *f, const struct agg *a,
			     const struct agg_table *t)
{
	const char *unit = hist_unit(t);
	__u64 max = t->neg;
	char label[64];
	int i, lo = -1, hi = -1;

	fprintf(f, "%s: histogram of %s%s%s%s, %llu values",
		probe_name(a, t), t->text, unit ? " (" : "", unit ? unit : "",
		unit ? ")" : "", (unsigned long long)t->total);
	if (t->failed)
		fprintf(f, ", %llu without one (its fetch failed)",
			(unsigned long long)t->failed);
	put_origin(f, a, t);
	if (t->kind == K_PAIRED)
		lat_print_human(f, a);
	if (t->lb) {
		lin_print_human(f, a, t);
		return;
	}
	for (i = 0; i < HIST_BUCKETS; i++) {
		if (!t->b[i])
			continue;
		if (lo < 0)
			lo = i;
		hi = i;
		if (t->b[i] > max)
			max = t->b[i];
	}
	if (t->neg)
		print_bar_line(f, "(..., 0)", t->neg, max);
	for (i = lo; lo >= 0 && i <= hi; i++) {
		bucket_label(label, sizeof(label), i);
		print_bar_line(f, label, t->b[i], max);
	}
	put_stats_line(f, t);
}

/* "min M, avg A, max X, sum S" of the values, when there were any. */
static void put_stats_line(FILE *f, const struct agg_table *t)
{
	if (!t->total)
		return;
	fputs("min ", f);
	put_val(f, t, t->vmin);
	fputs(", avg ", f);
	put_val(f, t, hist_avg(t));
	fputs(", max ", f);
	put_val(f, t, t->vmax);
	fputs(", sum ", f);
	put_val(f, t, t->sum);
	fputc('\n', f);
}

/* 2^@k as decimal digits, k = 0..64. */
static void pow2_str(char *buf, size_t len, int k)
{
	if (k == 64)
		snprintf(buf, len, "18446744073709551616");
	else
		snprintf(buf, len, "%llu", 1ULL << k);
}

/*
 * Where a table's key comes from: a tracepoint's field, the probe's own
 * values (return value, latency, arguments), or the context of the hit.
 */
static const char *key_source(const struct agg_table *t)
{
	switch (t->kind) {
	case K_FIELD:
		return "field";
	case K_FETCH:
		return "fetch";
	case K_LATENCY:
	case K_PAIRED:
	case K_RET:
	case K_ARG:
		return "probe";
	default:
		return "context";
	}
}

/*
 * --lhist in JSON: "linear":{"min","max","step"}, then the buckets that
 * are not empty, "lo" and "hi" their bounds, null where open (below
 * lin_min, from the last bound on).
 */
static void lin_print_json(FILE *f, const struct agg *a,
			   const struct agg_table *t)
{
	unsigned int i, n = a->o.lin_n + 2;
	bool first = true;
	char names[256];
	__s64 lo, hi;

	fprintf(f, ",\"linear\":{\"min\":%lld,\"max\":%lld,\"step\":%llu}",
		(long long)a->o.lin_min, (long long)a->o.lin_max,
		(unsigned long long)a->o.lin_step);
	fputs(",\"buckets\":[", f);
	for (i = 0; i < n; i++) {
		if (!t->lb[i])
			continue;
		fputs(first ? "{\"lo\":" : ",{\"lo\":", f);
		first = false;
		lin_bounds(a, i, &lo, &hi);
		if (i == 0)
			fputs("null", f);
		else
			fprintf(f, "%lld", (long long)lo);
		if (i == 0)
			fprintf(f, ",\"hi\":%lld", (long long)a->o.lin_min);
		else if (i == n - 1)
			fputs(",\"hi\":null", f);
		else
			fprintf(f, ",\"hi\":%lld", (long long)hi);
		if (lin_names(a, t, i, names, sizeof(names))) {
			fputs(",\"name\":", f);
			json_put_str(f, names, strlen(names));
		}
		fprintf(f, ",\"count\":%llu}", (unsigned long long)t->lb[i]);
	}
	fputs("]}\n", f);
}

static void hist_print_json(FILE *f, const struct agg *a,
			    const struct agg_table *t, unsigned int interval)
{
	const char *unit = hist_unit(t);
	char lo[32], hi[32];
	bool first = true;
	int i;

	fputs("{\"type\":\"hist\",\"probe\":", f);
	json_put_str(f, probe_name(a, t), strlen(probe_name(a, t)));
	fputs(",\"key\":", f);
	json_put_str(f, t->text, strlen(t->text));
	fprintf(f, ",\"source\":\"%s\"", key_source(t));
	put_origin_json(f, a, t);
	if (t->kind == K_PAIRED)
		lat_print_json(f, a);
	if (unit)
		fprintf(f, ",\"unit\":\"%s\"", unit);
	if (interval)
		fprintf(f, ",\"interval\":%u", interval);
	fprintf(f, ",\"count\":%llu", (unsigned long long)t->total);
	if (t->kind == K_FETCH)
		fprintf(f, ",\"failed\":%llu", (unsigned long long)t->failed);
	if (t->total) {
		fputs(",\"sum\":", f);
		put_val(f, t, t->sum);
		fputs(",\"min\":", f);
		put_val(f, t, t->vmin);
		fputs(",\"max\":", f);
		put_val(f, t, t->vmax);
		fputs(",\"avg\":", f);
		put_val(f, t, hist_avg(t));
	}
	if (t->lb) {
		lin_print_json(f, a, t);
		return;
	}
	fputs(",\"buckets\":[", f);
	if (t->neg) {
		fprintf(f, "{\"lo\":-9223372036854775808,\"hi\":0,\"count\":%llu}",
			(unsigned long long)t->neg);
		first = false;
	}
	for (i = 0; i < HIST_BUCKETS; i++) {
		if (!t->b[i])
			continue;
		/* Bucket 0 is [0, 1), bucket i is [2^(i-1), 2^i). */
		if (i)
			pow2_str(lo, sizeof(lo), i - 1);
		else
			snprintf(lo, sizeof(lo), "0");
		pow2_str(hi, sizeof(hi), i);
		fprintf(f, "%s{\"lo\":%s,\"hi\":%s,\"count\":%llu}",
			first ? "" : ",", lo, hi,
			(unsigned long long)t->b[i]);
		first = false;
	}
	fputs("]}\n", f);
}

static __u64 ent_num(const struct count_ent *e)
{
	__u64 v;

	memcpy(&v, e->key, sizeof(v));
	return v;
}

static bool key_is_num(const struct agg_table *t)
{
	return t->kind != K_COMM && t->kind != K_KSTACK && t->kind != K_MULTI &&
	       t->kind != K_FETCH &&
	       !(t->kind == K_FIELD && t->field->kind != TPF_INT);
}

static const struct agg_table *sort_tab;

/* Count descending, then key ascending (numbers by value). */
static int ent_cmp(const void *x, const void *y)
{
	const struct count_ent *a = *(const struct count_ent *const *)x;
	const struct count_ent *b = *(const struct count_ent *const *)y;
	__u32 n;
	int c;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	if (sort_tab->kind == K_FETCH && a->len == 10 && b->len == 10 &&
	    a->key[0] == PEA_FETCH_OK && b->key[0] == PEA_FETCH_OK) {
		/* Two integers: by value, signed as the fetch's type. */
		__u64 u = load_int(a->key + 2, kfetch_bytes(sort_tab->kf),
				   sort_tab->sgn);
		__u64 v = load_int(b->key + 2, kfetch_bytes(sort_tab->kf),
				   sort_tab->sgn);

		if (sort_tab->sgn)
			return (__s64)u < (__s64)v ? -1 : (__s64)u > (__s64)v;
		return u < v ? -1 : u > v;
	}
	if (key_is_num(sort_tab)) {
		__u64 u = ent_num(a), v = ent_num(b);

		if (sort_tab->sgn)
			return (__s64)u < (__s64)v ? -1 : (__s64)u > (__s64)v;
		return u < v ? -1 : u > v;
	}
	n = a->len < b->len ? a->len : b->len;
	c = memcmp(a->key, b->key, n);
	return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* A string key for the columns: printable ASCII as is, the rest \xNN. */
static void put_text(FILE *f, const unsigned char *s, __u32 len)
{
	__u32 i;

	for (i = 0; i < len; i++) {
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\\')
			fputc(s[i], f);
		else
			fprintf(f, "\\x%02x", s[i]);
	}
}

/*
 * A fetch's key as its events print it (kfetch_put()): a failed one
 * "(fault@STEP)" ({"fault":STEP}), a string cut "..." ({"str":...,
 * "truncated":true}), an integer by its type.
 */
static void put_fetch_bytes(FILE *f, const struct agg_table *t,
			    const unsigned char *key, __u32 len, bool json)
{
	const unsigned char *p = key + 2;
	__u32 n = len - 2;
	char buf[64];
	__u64 raw;

	if (key[0] == PEA_FETCH_FAULT) {
		fprintf(f, json ? "{\"fault\":%u}" : "(fault@%u)", key[1]);
		return;
	}
	if (t->kf->conv == KFETCH_NTOP) {
		kfetch_ntop(p, fetch_is_bytes(t->kf->f.type) ? n : 4, buf,
			    sizeof(buf));
		if (json)
			json_put_str(f, buf, strlen(buf));
		else
			fputs(buf, f);
		return;
	}
	if (!fetch_is_bytes(t->kf->f.type)) {
		memcpy(&raw, p, 8);
		raw = kfetch_conv_int(t->kf, raw);
		if (json)
			ktype_put_json(f, &t->kf->type, raw);
		else
			fputs(ktype_format(&t->kf->type, raw, buf, sizeof(buf)),
			      f);
		return;
	}
	if (json) {
		if (key[0] == PEA_FETCH_TRUNCATED)
			fputs("{\"str\":", f);
		json_put_str(f, p, n);
		if (key[0] == PEA_FETCH_TRUNCATED)
			fputs(",\"truncated\":true}", f);
		return;
	}
	put_text(f, p, n);
	if (key[0] == PEA_FETCH_TRUNCATED)
		fputs("...", f);
}

static void put_fetch_key(FILE *f, const struct agg_table *t,
			  const struct count_ent *e, bool json)
{
	put_fetch_bytes(f, t, e->key, e->len, json);
}

/* A key as text: JSON (a value) or for the columns. */
static void put_key(FILE *f, struct agg *a, const struct agg_table *t,
		    const struct count_ent *e, bool json)
{
	char sym[256];
	__u32 i;
	__u64 v;

	if (t->kind == K_KSTACK) {
		/* The session's symbols, loaded once with --kstack (or NULL). */
		const struct ksyms *ks = a->probes[t->probe]->ksyms;

		fputs(json ? "[" : "", f);
		for (i = 0; i + 8 <= e->len; i += 8) {
			memcpy(&v, e->key + i, 8);
			ksyms_format(ks, v, sym, sizeof(sym));	/* NULL: 0x... */
			if (json)
				json_put_str(f, sym, strlen(sym));
			else
				fprintf(f, "\n    %s", sym);
			if (json && i + 8 < e->len)
				fputc(',', f);
		}
		fputs(json ? "]" : "", f);
		return;
	}
	if (t->kind == K_MULTI) {
		/* JSON: an array, comm a string; columns: space-separated. */
		__u32 off = 0;
		int k;

		fputs(json ? "[" : "", f);
		for (k = 0; k < t->nparts; k++) {
			if (k)
				fputs(json ? "," : " ", f);
			if (t->parts[k] == K_FETCH) {
				__u16 n16;

				memcpy(&n16, e->key + off, 2);
				put_fetch_bytes(f, t, e->key + off + 2, n16,
						json);
				off += 2 + n16;
				continue;
			}
			if (t->parts[k] == K_COMM) {
				__u32 n = strnlen((const char *)e->key + off, 16);

				if (json)
					json_put_str(f, e->key + off, n);
				else
					put_text(f, e->key + off, n);
				off += 16;
				continue;
			}
			memcpy(&v, e->key + off, 8);
			fprintf(f, "%llu", (unsigned long long)v);
			off += 8;
		}
		fputs(json ? "]" : "", f);
		return;
	}
	if (t->kind == K_FETCH) {
		put_fetch_key(f, t, e, json);
		return;
	}
	if (!key_is_num(t)) {
		if (json)
			json_put_str(f, e->key, e->len);
		else
			put_text(f, e->key, e->len);
		return;
	}
	v = ent_num(e);
	if (!json && field_names(a, t, v, sym, sizeof(sym))) {
		/* The names the print fmt gives it, as the event prints. */
		put_text(f, (const unsigned char *)sym, strlen(sym));
		/*
		 * Bits the call's mask drops (sched_switch's preempted 256,
		 * "R" as 0 is): the number keeps the rows apart.
		 */
		if ((v & ~t->field->sym_mask) && t->sgn)
			fprintf(f, " (%lld)", (long long)v);
		else if (v & ~t->field->sym_mask)
			fprintf(f, " (%llu)", (unsigned long long)v);
	} else if (t->kind == K_PROBE) {
		const char *p = v < (__u64)a->nprobes ?
				a->probes[v]->probe : "?";

		if (json)
			json_put_str(f, p, strlen(p));
		else
			fputs(p, f);
	} else if (t->ty && (t->ty->cls == KT_ENUM || t->ty->cls == KT_BOOL)) {
		/* The typed value, already extended: its name, true or false. */
		char buf[64];

		if (json)
			ktype_put_json(f, t->ty, v);
		else
			fputs(ktype_format(t->ty, v, buf, sizeof(buf)), f);
	} else if (t->hex) {
		fprintf(f, json ? "\"0x%llx\"" : "0x%llx",
			(unsigned long long)v);
	} else if (t->sgn) {
		fprintf(f, "%lld", (long long)v);
	} else {
		fprintf(f, "%llu", (unsigned long long)v);
	}
}

/* JSON: a field key with names has them in "key_name", as events do. */
static void put_key_names_json(FILE *f, struct agg *a,
			       const struct agg_table *t,
			       const struct count_ent *e)
{
	char names[256];

	if (!key_is_num(t) || !field_names(a, t, ent_num(e), names,
					   sizeof(names)))
		return;
	fputs(",\"key_name\":", f);
	json_put_str(f, names, strlen(names));
}

static void count_print(FILE *f, struct agg *a, const struct agg_table *t,
			unsigned int interval)
{
	struct count_ent **rows = NULL;
	__u64 rest = 0;
	size_t i, n = 0, top = a->o.top;
	bool json = a->o.json;

	if (t->nkeys)
		rows = malloc(t->nkeys * sizeof(*rows));
	if (t->nkeys && !rows) {
		tool_err("out of memory printing the --count-by %s table",
			 t->text);
		return;
	}
	for (i = 0; i < t->nslots; i++)
		if (t->slots[i].key)
			rows[n++] = &t->slots[i];
	sort_tab = t;
	if (n)
		qsort(rows, n, sizeof(*rows), ent_cmp);
	if (top > n)
		top = n;
	for (i = top; i < n; i++)
		rest += rows[i]->count;
	if (json) {
		fputs("{\"type\":\"count\",\"probe\":", f);
		json_put_str(f, probe_name(a, t), strlen(probe_name(a, t)));
		fputs(",\"by\":", f);
		json_put_str(f, t->text, strlen(t->text));
		fprintf(f, ",\"source\":\"%s\"", key_source(t));
		put_origin_json(f, a, t);
		if (interval)
			fprintf(f, ",\"interval\":%u", interval);
		fprintf(f, ",\"count\":%llu,\"keys\":%zu,\"rows\":[",
			(unsigned long long)t->total, n);
		for (i = 0; i < top; i++) {
			fputs(i ? ",{\"key\":" : "{\"key\":", f);
			put_key(f, a, t, rows[i], true);
			put_key_names_json(f, a, t, rows[i]);
			fprintf(f, ",\"count\":%llu}",
				(unsigned long long)rows[i]->count);
		}
		fprintf(f, "],\"rest\":{\"keys\":%zu,\"count\":%llu},\"other\":%llu,\"max_keys\":%u}\n",
			n - top, (unsigned long long)rest,
			(unsigned long long)t->other, a->o.max_keys);
		free(rows);
		return;
	}
	fprintf(f, "%s: count by %s, %llu events, %zu keys",
		probe_name(a, t), t->text, (unsigned long long)t->total, n);
	put_origin(f, a, t);
	fprintf(f, "%10s  %s\n", "COUNT", "KEY");
	for (i = 0; i < top; i++) {
		fprintf(f, "%10llu  ", (unsigned long long)rows[i]->count);
		put_key(f, a, t, rows[i], false);
		fputc('\n', f);
	}
	if (n > top)
		fprintf(f, "%10llu  (%zu more key%s)\n", (unsigned long long)rest,
			n - top, n - top > 1 ? "s" : "");
	if (t->other)
		fprintf(f, "%10llu  (other keys: past the cap of %u distinct keys)\n",
			(unsigned long long)t->other, a->o.max_keys);
	free(rows);
}

/*
 * --folded: add kstack table @t's rows to the session's stacks, root
 * first, each frame the function it is in (a return address names its
 * call: one byte back). 0 or -errno.
 */
static int folded_add(struct agg *a, const struct agg_table *t)
{
	static char names[PEA_KSTACK_MAX][128];
	const struct ksyms *ks = a->probes[t->probe]->ksyms;
	const char *frames[PEA_KSTACK_MAX];
	enum pea_frame_kind kinds[PEA_KSTACK_MAX];
	unsigned int n, j;
	size_t i;
	__u64 v;
	int err;

	if (!a->folded) {
		a->folded = pea_stacks_new();
		if (!a->folded)
			return -ENOMEM;
	}
	for (i = 0; i < t->nslots; i++) {
		const struct count_ent *e = &t->slots[i];

		if (!e->key)
			continue;
		n = e->len / 8;
		for (j = 0; j < n; j++) {
			memcpy(&v, e->key + (n - 1 - j) * 8, 8);
			ksyms_func(ks, v - (n - 1 - j ? 1 : 0), names[j],
				   sizeof(names[j]));
			frames[j] = names[j];
			kinds[j] = strchr(names[j], '[') &&
				   strcmp(names[j], "[unknown]") ?
				   PEA_FRAME_MODULE : PEA_FRAME_KERNEL;
		}
		if (!n) {	/* no stack (records without one) */
			frames[n] = "[unknown]";
			kinds[n++] = PEA_FRAME_KERNEL;
		}
		err = pea_stacks_add(a->folded, frames, kinds, n, e->count);
		if (err)
			return err;
	}
	return 0;
}

int agg_write_folded(struct agg *a)
{
	FILE *f;
	int err;

	if (!a || !a->o.folded)
		return 0;
	if (!a->folded) {
		a->folded = pea_stacks_new();
		if (!a->folded) {
			tool_err("out of memory");
			return PEA_EXIT_ERR;
		}
	}
	f = fopen(a->o.folded, "we");
	err = f ? pea_stacks_write_folded(a->folded, f) : -errno;
	if (f && fclose(f) && !err)
		err = -errno;
	if (err) {
		tool_err("--folded %s: %s", a->o.folded, strerror(-err));
		return PEA_EXIT_ERR;
	}
	return 0;
}

static void table_reset(struct agg_table *t)
{
	size_t i;

	t->total = 0;
	t->failed = 0;
	t->sum = 0;
	t->vmin = 0;
	t->vmax = 0;
	t->neg = 0;
	memset(t->b, 0, sizeof(t->b));
	if (t->lb)
		memset(t->lb, 0, t->nlb * sizeof(*t->lb));
	for (i = 0; i < t->nslots; i++)
		free(t->slots[i].key);
	free(t->slots);
	t->slots = NULL;
	t->nslots = 0;
	t->nkeys = 0;
	t->other = 0;
}

void agg_print(struct agg *a, FILE *f, unsigned int interval, __u64 lost)
{
	int i;

	if (!a)
		return;
	a->lost = lost;
	for (i = 0; i < a->nprobes; i++)
		kern_collect(a, i);
	if (a->o.latency)
		lat_info_read(a);
	if (interval && !a->o.json) {
		time_t now = time(NULL);
		struct tm tm;
		char ts[16];

		localtime_r(&now, &tm);
		strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
		fprintf(f, "\n[%s] interval %u\n", ts, interval);
	}
	for (i = 0; i < a->ntabs; i++) {
		struct agg_table *t = &a->tabs[i];

		if ((t->probe < 0 && i % a->nprobes) || t->unused)
			continue;	/* --count-by probe: the first only */
		if (!a->o.json)
			fputc('\n', f);	/* a blank line before each table */
		if (t->hist && a->o.json)
			hist_print_json(f, a, t, interval);
		else if (t->hist)
			hist_print_human(f, a, t);
		else
			count_print(f, a, t, interval);
		if (a->o.folded && t->kind == K_KSTACK && folded_add(a, t))
			tool_err("--folded: out of memory: stacks missing");
		table_reset(t);
	}
	a->unpaired = 0;
	a->overflow_shown = a->li.overflow;
	fflush(f);
}
