/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea trace: the kinds of producer (kprobe and kretprobe, tracepoint,
 * uprobe and uretprobe, netfilter) as the tool sees them. Each kind is a
 * struct probe_kind in a file of its own (kprobe.c, tracepoint.c,
 * uprobe.c, netfilter.c); probe.c finds it by the PROBE argument's prefix
 * in one table. A new kind is one more file and one more table entry:
 * the session, the printers, the aggregations and the trace writers
 * reach a kind only through its struct probe_kind.
 */
#ifndef _PEA_PROBE_KIND_H
#define _PEA_PROBE_KIND_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "pea_tool.h"

/* struct probe_opts.set: which options a segment of the command line gave */
#define PO_ARGS		(1U << 0)
#define PO_CAPTURE	(1U << 1)	/* --str or --bytes */
#define PO_SPACE	(1U << 2)	/* --user or --kernel */
#define PO_PID		(1U << 3)
#define PO_CPU		(1U << 4)
#define PO_MAXACTIVE	(1U << 5)
#define PO_PACKET	(1U << 6)
#define PO_FILTER	(1U << 7)
#define PO_KSTACK	(1U << 8)
#define PO_PARAMS	(1U << 9)	/* PARAM names after the PROBE */
#define PO_USTACK	(1U << 10)	/* --ustack */

#define PROBE_MAX_PARAMS	8	/* PARAM names of one probe */

/*
 * The options that bind to one probe. Those given before the first PROBE
 * are every probe's defaults; those given after a PROBE (before the next
 * one) replace them for that probe only. Per-probe output options
 * (kernel stacks, histograms, counting) belong here too.
 */
struct probe_opts {
	unsigned int set;	/* PO_*: given in this segment */
	bool args;
	bool user, kernel;
	int capture_mode;
	unsigned int capture_arg, capture_len;
	unsigned int pid;
	unsigned int tree;	/* with pid: PEA_PROBE_F_DESCENDANTS, maybe
				 * _DESC_ONLY (every kind's bits 12, 13)
				 */
	int cpu;		/* -1: any */
	unsigned int maxactive;
	unsigned int packet;	/* netfilter: bytes per packet (0: unset) */
	unsigned int kstack;	/* --kstack: frames per stack (0: none) */
	unsigned int ustack;	/* --ustack: user entries (0: none) */
	const char *filter;
	const char *params[PROBE_MAX_PARAMS];	/* printed by name (BTF) */
	unsigned int nparams;
};

/**
 * struct probe_field - a field of a kind's raw record (struct
 * trace_event.raw) as trace files carry it
 * @name:      its name there
 * @offset:    where it starts in the raw record
 * @size:      an integer's bytes (2 or 4), or 0: the bytes that follow the
 *             record's first @offset bytes (its header), as many as the
 *             field before this one (4 bytes) says
 * @is_signed: a signed integer
 */
struct probe_field {
	const char *name;
	unsigned int offset, size;
	bool is_signed;
};

/**
 * struct probe_kind - one kind of producer
 * @prefixes: the PROBE prefixes that name it ("kprobe:", ...), NULL-ended
 * @parse:    fill @spec from the PROBE argument @text (one of @prefixes);
 *            0 or -EINVAL after a usage message
 * @prepare:  optional: what the kind needs before attaching, with the
 *            options in effect (a tracepoint's format, its --filter
 *            compiled), its description of the fields into @fmt; 0 or
 *            an exit status after a message
 * @attach:   attach @spec with options @o to @map_fd, its records
 *            carrying @id; the link fd, or -errno after explaining the
 *            error and what to do about it
 * @attach_multi: optional: attach the @n specs @specs (a glob's matches,
 *            all with the options @o) as one link whose records carry
 *            @id + i for @specs[i]; the link fd, -EOPNOTSUPP (the kernel
 *            has no such link), -ENOTTY (the module has none), or -EXDEV with the reason in @why (they
 *            cannot share one link, or the kernel refused it): the caller
 *            then attaches each with @attach
 * @release:  optional: free what @prepare kept in @spec->priv
 * @opts:     the kind-specific options it takes: PO_FILTER, PO_KSTACK,
 *            PO_PACKET, PO_PARAMS (the others are refused with their own
 *            messages)
 * @check_opts: optional: the options in effect @o that the kind refuses,
 *            checked before @opts: a usage message, or NULL
 * @rec_flag: the PEA_REC_F_* bit that marks the kind's records, when they
 *            are not a struct pea_probe_record (0)
 * @decode:   decode a record of @size bytes into the kind-neutral @ev
 *            (its struct pea_probe_record part, captures, the raw bytes
 *            the kind's printers read, the kernel stack); 0, -EINVAL (not
 *            such a record) or -ENOMEM
 * @print_header: optional: the kind's own columns, for a session of one
 *            probe of this kind, as text
 * @print_event: optional: the kind's own line (text) or JSON object for
 *            each event, instead of the common columns and members
 * @print_fields: optional: the kind's own fields of an event after the
 *            common columns and parts, as text (name=value ...)
 * @json_fields: optional: the same as members of the event's JSON object
 *            (each with its leading comma)
 * @fields:   optional: the fields of its raw record that trace files
 *            carry, @nr_fields of them
 * @args:     its records carry the argument registers (--args, argN keys)
 * @missed_by: what its link's missed counter counts, for the summary
 *            (NULL: "kprobes")
 */
struct probe_kind {
	const char *const *prefixes;
	int (*parse)(const char *text, struct probe_spec *spec);
	int (*prepare)(struct probe_spec *spec, const struct probe_opts *o,
		       struct trace_fmt *fmt);
	int (*attach)(int map_fd, struct probe_spec *spec,
		      const struct probe_opts *o, __u64 id);
	int (*attach_multi)(int map_fd, struct probe_spec *const *specs,
			    unsigned int n, const struct probe_opts *o,
			    __u64 id, char *why, size_t len);
	void (*release)(struct probe_spec *spec);
	unsigned int opts;
	const char *(*check_opts)(const struct probe_opts *o);
	__u16 rec_flag;
	int (*decode)(const void *data, __u32 size, struct trace_event *ev);
	void (*print_header)(FILE *f, const struct trace_fmt *fmt);
	void (*print_event)(FILE *f, const struct trace_fmt *fmt,
			    const struct trace_event *ev);
	void (*print_fields)(FILE *f, const struct trace_fmt *fmt,
			     const struct trace_event *ev);
	void (*json_fields)(FILE *f, const struct trace_fmt *fmt,
			    const struct trace_event *ev);
	const struct probe_field *fields;
	unsigned int nr_fields;
	bool args;
	const char *missed_by;
};

/*
 * The kind's own struct @type in @spec->data (struct probe_spec), checked
 * at build time to fit.
 */
#define PROBE_SPEC_ARG(spec, type)					\
	((void)sizeof(char[sizeof(type) <= PROBE_SPEC_DATA ? 1 : -1]),	\
	 (type *)(void *)(spec)->data)

extern const struct probe_kind kprobe_kind;	/* kprobe.c */
extern const struct probe_kind tracepoint_kind;	/* tracepoint.c */
extern const struct probe_kind uprobe_kind;	/* uprobe.c */
extern const struct probe_kind netfilter_kind;	/* netfilter.c */

/* ---- probe.c ---- */

/* The kind whose prefix @text starts with, or NULL. */
const struct probe_kind *probe_kind_find(const char *text);

/*
 * Whether a record whose flags are @flags has the layout of kind @k: it
 * carries @k's mark and no other kind's.
 */
bool probe_kind_record(const struct probe_kind *k, __u16 flags);

/* ---- probe_msg.c ---- */

/*
 * What every attach ioctl answers alike: too many links, a module without
 * this kind of producer (@what: "probe", "tracepoint", ...), and any other
 * errno, by its name.
 */
void probe_explain_common(const struct probe_spec *spec, int err,
			  const char *what);

/*
 * A usage error about the options of @probe (NULL: before any probe):
 * the message is prefixed with the probe's text.
 */
int probe_usage(const char *probe, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* _PEA_PROBE_KIND_H */
