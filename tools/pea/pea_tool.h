/* SPDX-License-Identifier: GPL-2.0 */
/* pea: the command-line tool's shared declarations. */
#ifndef _PEA_TOOL_H
#define _PEA_TOOL_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include <linux/pea.h>

/* Exit statuses of every command. */
#define PEA_EXIT_OK	0	/* success */
#define PEA_EXIT_ERR	1	/* runtime error: module, device, kernel */
#define PEA_EXIT_USAGE	2	/* bad command line */

/* Where the module publishes its statistics (debugfs). */
#define PEA_DEBUGFS_DIR		"/sys/kernel/debug"
#define PEA_DEBUGFS_MAPS	PEA_DEBUGFS_DIR "/pea/maps"
#define PEA_DEBUGFS_LINKS	PEA_DEBUGFS_DIR "/pea/links"
#define PEA_DEBUGFS_KFUNC	PEA_DEBUGFS_DIR "/pea/kfunc"

struct pea_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);	/* argv[0] is the command */
	const char *help;
};

int cmd_help(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);	/* cmd_flamegraph.c */
int cmd_trace(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_profile(int argc, char **argv);

struct tp_format;
struct ksig;
struct kfetch;

/*
 * `pea stat -e EVENT ...` (PMU counters) lives in cmd_counters.c;
 * cmd_stat() hands the whole command line over to it whenever argv holds
 * -e/--event. cmd_stat.c has a weak stand-in that says counters are not
 * built in, which the real definition replaces at link time.
 */
int cmd_stat_counters(int argc, char **argv);	/* cmd_counters.c */

/* ---- util.c ---- */

/* "pea: " + message + newline on stderr. */
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Report a usage error of @cmd ("pea CMD: message; see 'pea CMD --help'")
 * and return PEA_EXIT_USAGE.
 */
int tool_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Explain a failure (-errno @err) to reach the module through /dev/pea
 * while doing @what, with what to do about it.
 */
void tool_explain_dev_error(const char *what, int err);

/* Strict number parsers: the whole string, no sign for unsigned. */
int tool_parse_u64(const char *s, unsigned long long *v);
bool tool_is_ident(const char *s);
int tool_parse_uint(const char *s, unsigned int max, unsigned int *v);
int tool_parse_seconds(const char *s, double *v);

/* CLOCK_MONOTONIC in ns, the clock probe records carry. */
__u64 tool_now_ns(void);

/* ---- probe.c ---- */

/* Bytes of struct probe_spec.data: a kind's parsed PROBE argument. */
#define PROBE_SPEC_DATA	(4096 + 64)

/**
 * struct probe_spec - a parsed PROBE argument
 * @retprobe: at the return (kretprobe:, uretprobe:)
 * @symbol:   the function, or what names the probe (SUBSYS:NAME, ...)
 * @offset:   +OFFSET
 * @text:     the argument as given, for messages and output
 * @kind:     the kind of producer (probe_kind.h)
 * @priv:     what the kind keeps for this probe (its prepare and release)
 * @data:     the rest of the argument as the kind parsed it (its own
 *            struct, which must fit: a uprobe's path, a tracepoint's
 *            SUBSYS and NAME, a netfilter hook's family and hook)
 */
struct probe_kind;

struct probe_spec {
	bool retprobe;
	char symbol[PEA_SYM_LEN];
	__u64 offset;
	const char *text;
	const struct probe_kind *kind;
	void *priv;
	union {
		unsigned char data[PROBE_SPEC_DATA];
		__u64 data_align;
	};
};

/*
 * Parse a PROBE argument by the kind its prefix names ("kprobe:",
 * "kretprobe:", "tracepoint:" or "tp:", "uprobe:", "uretprobe:",
 * "netfilter:"); 0 or -EINVAL (message printed).
 */
int probe_parse(const char *text, struct probe_spec *spec);

/* ---- elfsym.c ---- */

int elf_sym_offset(const char *path, const char *name, __u64 *off);
int elf_sym_each(const char *path, void (*fn)(void *arg, const char *name),
		 void *arg);

/* ---- decode.c ---- */

/**
 * struct trace_event - one decoded probe record
 * @rec:     the fixed part as the kernel wrote it
 * @ring:    the CPU of the ring it came from
 * @seq:     arrival order, to sort stably
 * @cap:     the captured bytes (@rec.capture_len of them)
 * @raw:     a tracepoint's raw entry (malloc'd; NULL for probes)
 * @raw_size: its bytes
 * @probe:   which of the session's probes wrote it (index, from rec.id)
 * @kstack:  with PEA_REC_F_KSTACK, the kernel stack's addresses (malloc'd,
 *           innermost first; NULL without)
 * @kstack_nr: entries of @kstack
 * @ustack:  with PEA_REC_F_USTACK, the user stack's addresses (malloc'd,
 *           innermost first; NULL without)
 * @ustack_nr: entries of @ustack
 */
struct trace_event {
	struct pea_probe_record rec;
	int ring;
	__u64 seq;
	unsigned char cap[PEA_CAPTURE_MAX];
	unsigned char *raw;
	__u32 raw_size;
	int probe;
	__u64 *kstack;
	__u32 kstack_nr;
	__u64 *ustack;
	__u32 ustack_nr;
	unsigned char *fetch;	/* PEA_REC_F_FETCH: the block, malloc()ed */
	__u32 fetch_size;
};

/*
 * Decode a sample payload of @size bytes into @ev. Returns 0, or -EINVAL
 * if it cannot be a probe record (too short, capture past its end).
 */
int decode_probe_record(const void *data, __u32 size, struct trace_event *ev);

/*
 * PEA_REC_F_FETCH in ev->rec.flags: the struct pea_fetch_block at the
 * 8-byte boundary after @used of the record's @size bytes, copied into
 * ev->fetch (a probe's record, a tracepoint's after its entry); *@used
 * then ends after it. 0, -EINVAL or -ENOMEM.
 */
int fetch_copy(const unsigned char *p, __u32 size, __u32 *used,
	       struct trace_event *ev);

/*
 * The kernel stack of a record whose other parts take @used of its @size
 * bytes: its entry count in *@nr (0 without PEA_REC_F_KSTACK), or -EINVAL
 * when the record cannot hold what it claims.
 */
int kstack_check(const unsigned char *p, __u32 size, __u32 used,
		 __u16 flags, __u32 *nr);
/* Copy the @nr entries checked by kstack_check() into ev->kstack. */
int kstack_copy(const unsigned char *p, __u32 used, __u32 nr,
		struct trace_event *ev);
/*
 * With PEA_REC_F_USTACK, the user stack that follows the kernel stack
 * (@knr entries, 0: none) of a record whose other parts take @used of its
 * @size bytes, into ev->ustack. Returns 0, -EINVAL or -ENOMEM.
 */
int ustack_take(const unsigned char *p, __u32 size, __u32 used, __u32 knr,
		__u16 flags, struct trace_event *ev);

/* ---- strfmt.c ---- */

/* JSON string literal of @len bytes (quotes included). */
void json_put_str(FILE *f, const void *s, size_t len);
/* C-style quoted string: printable ASCII as is, the rest escaped. */
void c_put_str(FILE *f, const void *s, size_t len);
/* Whether @len bytes at @s are valid UTF-8. */
bool utf8_valid(const unsigned char *s, size_t len);

/* ---- ksym.c ---- */

/* The kernel's symbols from /proc/kallsyms, module symbols included. */
struct ksyms;

/* Load them; NULL with errno set on failure. */
struct ksyms *ksyms_load(void);
void ksyms_free(struct ksyms *ks);

/*
 * @addr as "symbol+0xOFF" ("symbol+0xOFF [module]" for module code), or
 * "0x..." when no symbol covers it, into @buf (@len bytes). Returns @buf.
 */
const char *ksyms_format(const struct ksyms *ks, __u64 addr, char *buf,
			 size_t len);
/*
 * The function @addr is in, as a flame graph's frame names it: "func",
 * "func [module]", or "[unknown]" (also with @ks NULL). Returns @buf.
 */
const char *ksyms_func(const struct ksyms *ks, __u64 addr, char *buf,
		       size_t len);

/* ---- output.c ---- */

/* What a trace prints besides the fixed columns. */
struct trace_fmt {
	bool json;
	bool args;		/* the six argument registers */
	bool retprobe;		/* ret and latency */
	int capture_mode;	/* PEA_CAPTURE_* */
	const char *probe;	/* the PROBE text */
	const struct tp_format *tp;	/* a tracepoint's format, else NULL */
	const struct probe_kind *kind;	/* how its records print */
	__u64 t0_ns;		/* times print relative to this */
	int probe_col;		/* several probes: PROBE column width, else 0 */
	bool kstack;		/* --kstack: records carry kernel stacks */
	unsigned int kstack_depth;	/* and this many frames at most */
	const struct ksyms *ksyms;	/* and these name their frames (or NULL) */
	struct usyms *usyms;	/* --ustack: names user frames (or NULL) */
	bool ustack;		/* --ustack: records carry user stacks */
	int time_mode;		/* --time: enum trace_time (walltime.h) */
	__s64 wall_off_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	const struct ksig *sig;	/* the function's types from BTF, or NULL */
	const char *sig_why;	/* and why not (a kprobe without BTF) */
	/* PARAM names given after the PROBE: printed on each event */
	const struct ksig_param *params[8];
	unsigned int nparams;
	/* fetch expressions after the PROBE (kfetch.c), in the record */
	const struct kfetch *fetches;
	unsigned int nfetches;
};

void trace_print_header(FILE *f, const struct trace_fmt *fmt);
const char *trace_ustack_name(const struct trace_fmt *fmt,
			      const struct trace_event *ev, __u32 i, char *buf,
			      size_t len);
void trace_print_event(FILE *f, const struct trace_fmt *fmt,
		       const struct trace_event *ev);

/*
 * An event's --json object as a string, for the writers that embed it
 * (trace_perfetto.c, trace_pftrace.c): rendered into a memory stream the
 * writer keeps open and reuses.
 */
struct trace_json_line {
	FILE *mem;
	char *buf;
	size_t len;
};

int trace_json_line_open(struct trace_json_line *j);
/*
 * @ev's --json object as @fmt prints it, without its '\n': *@len bytes
 * at the return value, valid until the next call; NULL when out of memory.
 */
const char *trace_json_line(struct trace_json_line *j,
			    const struct trace_fmt *fmt,
			    const struct trace_event *ev, size_t *len);
void trace_json_line_close(struct trace_json_line *j);

#endif /* _PEA_TOOL_H */
