// SPDX-License-Identifier: GPL-2.0
/*
 * pea trace: tracepoints (tracepoint:SUBSYS:NAME, tp: for short): parsing
 * the PROBE argument, reading the event's format from tracefs and
 * compiling --filter against it (tpformat.c), fetch expressions after it
 * followed from its fields in the kernel (tpfetch.c), attaching with
 * PEA_MAP_IOC_ATTACH_TP.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include "probe_kind.h"
#include "tpfilter.h"
#include "tpformat.h"
#include "tpfetch.h"

/* A tracepoint PROBE's SUBSYS and NAME (struct probe_spec.data). */
struct tp_arg {
	char sys[64];
	char name[128];
};

/* What a tracepoint probe keeps (struct probe_spec.priv). */
struct tp_probe {
	struct tp_format fmt;		/* from tracefs */
	struct pea_tp_attr attr;
	struct tp_filter filter;	/* --filter, compiled */
	struct tp_fetches fetches;	/* the expressions after it */
};

static bool tp_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

/* "tracepoint:SUBSYS:NAME" or "tp:SUBSYS:NAME" */
static int tp_parse(const char *text, struct probe_spec *spec)
{
	const char *sys = strchr(text, ':') + 1, *name = strchr(sys, ':');
	struct tp_arg *a = PROBE_SPEC_ARG(spec, struct tp_arg);
	size_t i, ls;

	ls = name ? (size_t)(name - sys) : 0;
	if (!name || !ls || !name[1] || ls >= sizeof(a->sys) ||
	    strlen(name + 1) >= sizeof(a->name)) {
		tool_usage("trace", "'%s': write tracepoint:SUBSYS:NAME (see 'pea list')",
			   text);
		return -EINVAL;
	}
	memcpy(a->sys, sys, ls);
	strcpy(a->name, name + 1);
	for (i = 0; a->sys[i]; i++)
		if (!tp_char_ok(a->sys[i]))
			goto bad;
	for (i = 0; a->name[i]; i++)
		if (!tp_char_ok(a->name[i]))
			goto bad;
	snprintf(spec->symbol, sizeof(spec->symbol), "%s:%s", a->sys,
		 a->name);
	return 0;
bad:
	tool_usage("trace", "'%s' is not a tracepoint name", text);
	return -EINVAL;
}

/*
 * A tracepoint probe's format from tracefs, and its --filter compiled;
 * 0 or an exit status.
 */
static int tp_prepare(struct probe_spec *s, const struct probe_opts *o,
		      struct trace_fmt *fmt)
{
	const struct tp_arg *a = PROBE_SPEC_ARG(s, struct tp_arg);
	struct tp_probe *tp;
	const char *why = "";
	char msg[256];
	int err;

	tp = calloc(1, sizeof(*tp));
	if (!tp) {
		tool_err("out of memory");
		return PEA_EXIT_ERR;
	}
	s->priv = tp;
	err = tp_format_load(a->sys, a->name, &tp->fmt, &why);
	if (err == -ENOENT) {
		tool_err("no tracepoint %s:%s (%s; 'pea list tracepoint:%s:*' lists them)",
			 a->sys, a->name, why, a->sys);
		return PEA_EXIT_ERR;
	}
	if (err) {
		tool_err("cannot read the format of %s: %s", s->symbol, why);
		return PEA_EXIT_ERR;
	}
	fmt->tp = &tp->fmt;
	/* A syscall's event: its pointer fields are the caller's. */
	tp->fetches.user = !strcmp(a->sys, "syscalls");
	if (o->nparams) {
		if (tp_fetch_parse(&tp->fmt, s->symbol, tp->fetches.user,
				   o->params, o->nparams, &tp->fetches, msg,
				   sizeof(msg)))
			return probe_usage(s->text, "%s", msg);
		fmt->fetches = tp->fetches.k;
		fmt->nfetches = tp->fetches.n;	/* printed: these */
	}
	if (o->filter &&
	    tp_filter_compile(&tp->fmt, o->filter, &tp->filter, msg,
			      sizeof(msg))) {
		/* Not one on the fields: one on what they point to? */
		char why[256];

		if (tp_fetch_filter(&tp->fmt, o->filter, &tp->fetches, why,
				    sizeof(why)))
			return strstr(why, "has no parameter") ?
			       probe_usage(s->text, "--filter: %s", msg) :
			       probe_usage(s->text, "--filter: %s (as a predicate on fetched values: %s)",
					   msg, why);
		tp->attr.fetch_preds = (uintptr_t)tp->fetches.preds;
		tp->attr.nr_fetch_preds = tp->fetches.npreds;
	} else if (o->filter) {
		tp->attr.terms = (uintptr_t)tp->filter.terms;
		tp->attr.nr_terms = tp->filter.nterms;
		tp->attr.prog = (uintptr_t)tp->filter.prog;
		tp->attr.nr_prog = tp->filter.nprog;
	}
	if (tp->fetches.n) {
		tp->attr.fetches = (uintptr_t)tp->fetches.f;
		tp->attr.nr_fetches = tp->fetches.n;
	}
	return 0;
}

static int tp_attach(int map_fd, struct probe_spec *spec,
		     const struct probe_opts *o, __u64 id)
{
	struct tp_probe *tp = spec->priv;
	struct pea_tp_attr *attr = &tp->attr;
	int fd, err;

	attr->size = sizeof(*attr);
	attr->flags = PEA_TP_F_CLOEXEC;
	attr->id = id;
	attr->event_id = tp->fmt.id;
	attr->filter_tgid = (__s32)o->pid;
	if (o->pid)
		attr->flags |= o->tree;
	attr->filter_cpu = o->cpu;
	attr->kstack_depth = o->kstack;
	attr->ustack_depth = o->ustack;
	snprintf(attr->name, sizeof(attr->name), "%s", spec->symbol);
	fd = ioctl(map_fd, PEA_MAP_IOC_ATTACH_TP, attr);
	err = errno;

	if (fd >= 0)
		return fd;
	switch (err) {
	case EPERM:
		if (attr->nr_fetches) {
			tool_err("cannot attach %s: attaching tracepoints needs CAP_PERFMON, or CAP_SYS_ADMIN at kernel.perf_event_paranoid 3, and fetches that read memory CAP_BPF and CAP_PERFMON, and kernel memory no kernel lockdown (run as root)",
				 spec->text);
			break;
		}
		if (tp_filter_has_ctx(&tp->filter, true)) {
			tool_err("cannot attach %s: attaching tracepoints needs CAP_PERFMON, or CAP_SYS_ADMIN at kernel.perf_event_paranoid 3, and a filter on ctx.uid or ctx.gid CAP_BPF and CAP_PERFMON (run as root)",
				 spec->text);
			break;
		}
		/* fall through */
	case EACCES:
		tool_err("cannot attach %s: attaching tracepoints needs CAP_PERFMON, or CAP_SYS_ADMIN at kernel.perf_event_paranoid 3 (run as root)",
			 spec->text);
		break;
	case EINVAL:
		if (attr->nr_fetches) {
			tool_err("cannot attach %s: the kernel refuses event id %u or its fetches (a pea module older than the tool follows no tracepoint field)",
				 spec->text, attr->event_id);
			break;
		}
		if (tp_filter_has_ctx(&tp->filter, false)) {
			tool_err("cannot attach %s: the kernel refuses event id %u or the filter's ctx. terms (a pea module older than the tool takes none)",
				 spec->text, attr->event_id);
			break;
		}
		tool_err("cannot attach %s: the kernel refuses event id %u (gone since the format was read, or not traceable through perf)",
			 spec->text, attr->event_id);
		break;
	default:
		probe_explain_common(spec, err, "tracepoint");
		break;
	}
	return -err;
}

static void tp_release(struct probe_spec *spec)
{
	struct tp_probe *tp = spec->priv;

	if (tp)
		tp_fetch_release(&tp->fetches);
	free(spec->priv);
	spec->priv = NULL;
}

/*
 * A tracepoint record (struct pea_tp_record and the raw entry): the
 * header goes into @ev->rec, the entry into a new @ev->raw. Returns 0,
 * -EINVAL, or -ENOMEM.
 */
static int tp_decode(const void *data, __u32 size, struct trace_event *ev)
{
	const unsigned char *p = data;
	struct pea_tp_record tr;
	__u32 nr, used;
	int err;

	ev->kstack = NULL;
	ev->kstack_nr = 0;
	ev->ustack = NULL;
	ev->ustack_nr = 0;
	ev->fetch = NULL;
	ev->fetch_size = 0;
	if (size < sizeof(tr))
		return -EINVAL;
	memcpy(&tr, p, sizeof(tr));
	if (!(tr.flags & PEA_REC_F_TRACEPOINT) ||
	    tr.raw_size > size - sizeof(tr))
		return -EINVAL;
	memset(&ev->rec, 0, sizeof(ev->rec));
	ev->rec.flags = tr.flags;
	/* The fetched values follow the entry, before the stacks. */
	used = sizeof(tr) + tr.raw_size;
	err = fetch_copy(p, size, &used, ev);
	if (err)
		return err;
	if (kstack_check(p, size, used, tr.flags, &nr)) {
		free(ev->fetch);
		ev->fetch = NULL;
		return -EINVAL;
	}
	ev->rec.time_ns = tr.time_ns;
	ev->rec.id = tr.id;
	ev->rec.addr = tr.event_id;
	ev->rec.cpu = tr.cpu;
	ev->rec.pid = tr.pid;
	ev->rec.tgid = tr.tgid;
	ev->rec.flags = tr.flags;
	memcpy(ev->rec.comm, tr.comm, sizeof(tr.comm));
	ev->rec.comm[sizeof(ev->rec.comm) - 1] = '\0';
	ev->raw = malloc(tr.raw_size ? tr.raw_size : 1);
	if (!ev->raw) {
		free(ev->fetch);
		ev->fetch = NULL;
		return -ENOMEM;
	}
	memcpy(ev->raw, p + sizeof(tr), tr.raw_size);
	ev->raw_size = tr.raw_size;
	err = kstack_copy(p, used, nr, ev);
	if (!err)
		err = ustack_take(p, size, used, nr, tr.flags, ev);
	if (err) {
		free(ev->kstack);
		ev->kstack = NULL;
		ev->kstack_nr = 0;
		free(ev->raw);
		ev->raw = NULL;
		free(ev->fetch);
		ev->fetch = NULL;
	}
	return err;
}

static const char *tp_check_opts(const struct probe_opts *o)
{
	if (o->args || o->capture_mode || o->user || o->kernel ||
	    o->maxactive)
		return "--args, --str, --bytes, --user, --kernel and --maxactive are for kprobes";
	return NULL;
}

/*
 * The fields (not the common_ ones) as name=value ... (not shown with
 * fetch expressions: output.c's text_fields()).
 */
static void tp_print_text(FILE *f, const struct trace_fmt *fmt,
			  const struct trace_event *ev)
{
	tp_print_fields(f, fmt->tp, ev->raw, ev->raw_size, false);
}

/* ... and as the JSON object "fields". */
static void tp_print_json(FILE *f, const struct trace_fmt *fmt,
			  const struct trace_event *ev)
{
	fputs(",\"fields\":", f);
	tp_print_fields(f, fmt->tp, ev->raw, ev->raw_size, true);
}

static const char *const tp_prefixes[] = { "tracepoint:", "tp:", NULL };

const struct probe_kind tracepoint_kind = {
	.prefixes = tp_prefixes,
	.parse = tp_parse,
	.prepare = tp_prepare,
	.attach = tp_attach,
	.release = tp_release,
	.opts = PO_FILTER | PO_KSTACK | PO_USTACK | PO_PARAMS,
	.check_opts = tp_check_opts,
	.rec_flag = PEA_REC_F_TRACEPOINT,
	.decode = tp_decode,
	.print_fields = tp_print_text,
	.json_fields = tp_print_json,
};
