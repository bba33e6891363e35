// SPDX-License-Identifier: GPL-2.0
/*
 * pea: printing trace events, as aligned columns or as one JSON object per
 * line.
 *
 * JSON strings are always valid UTF-8 (strfmt.c); when a captured string
 * is not, the exact bytes also go out in hex as "str_hex".
 *
 * A kernel stack (--kstack) follows its event's line, one frame per line,
 * innermost first, indented: the address, then "symbol+0xOFF" (with
 * " [module]" for module code) from /proc/kallsyms; in JSON it is
 * "kstack" (those names) and "kstack_addr" (the addresses, "0x..."
 * strings).
 *
 * A kretprobe's ret prints by the function's return type when BTF gives
 * it (ktypes.c): an int sign-extended from its width, an enum by name, a
 * bool as true or false, a pointer in hex; JSON's "ret" is that typed
 * value and "ret_raw" the register as a number when they differ. Without
 * BTF, ret is the register as a signed 64-bit number. The PARAM names
 * given after a kprobe print as name=value after its arguments, and in
 * JSON as the object "params", each by its type.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kfetch.h"
#include "pea_tool.h"
#include "ktypes.h"
#include "walltime.h"
#include "probe_kind.h"
#include "usym.h"

static void put_hex(FILE *f, const unsigned char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		fprintf(f, "%02x", s[i]);
}

/* comm for columns: printable ASCII kept, anything else as '?'. */
static void comm_column(char *dst, const char *comm)
{
	size_t i;

	for (i = 0; i < 15 && comm[i]; i++)
		dst[i] = (comm[i] >= 0x20 && comm[i] < 0x7f) ? comm[i] : '?';
	dst[i] = '\0';
}

/*
 * Whether the text shows the kind's fields: a tracepoint's fetch
 * expressions show instead of its fields, as a kprobe's parameters do
 * (JSON keeps both).
 */
static bool text_fields(const struct trace_fmt *fmt)
{
	return fmt->kind->print_fields && !(fmt->tp && fmt->nfetches);
}

void trace_print_header(FILE *f, const struct trace_fmt *fmt)
{
	if (fmt->json)
		return;
	if (fmt->probe_col) {
		/* Several probes: the common columns; the rest is name=value. */
		fprintf(f, "%-*s %3s %-*s %-16s %7s %7s  %s\n",
			trace_time_width(fmt->time_mode),
			trace_time_label(fmt->time_mode), "CPU",
			fmt->probe_col, "PROBE", "COMM", "PID", "TID",
			"DETAILS");
		return;
	}
	if (fmt->kind->print_header) {
		fmt->kind->print_header(f, fmt);
		return;
	}
	fprintf(f, "%-*s %3s %-16s %7s %7s", trace_time_width(fmt->time_mode),
		trace_time_label(fmt->time_mode), "CPU", "COMM", "PID", "TID");
	if (fmt->retprobe)
		fprintf(f, " %20s %12s", "RET", "LAT(us)");
	if (fmt->args)
		fprintf(f, "  %s", "ARGS");
	if (fmt->nparams || fmt->nfetches)
		fprintf(f, "  %s", "PARAMS");
	if (text_fields(fmt))
		fprintf(f, "  %s", "FIELDS");
	if (fmt->capture_mode == PEA_CAPTURE_STR)
		fprintf(f, "  %s", "STRING");
	else if (fmt->capture_mode == PEA_CAPTURE_FIXED)
		fprintf(f, "  %s", "BYTES");
	fputc('\n', f);
}

static void print_capture_human(FILE *f, const struct trace_fmt *fmt,
				const struct trace_event *ev)
{
	const struct pea_probe_record *r = &ev->rec;

	fputs("  ", f);
	if (r->flags & PEA_REC_F_FAULT) {
		fputs("(fault)", f);
		return;
	}
	if (fmt->capture_mode == PEA_CAPTURE_STR) {
		c_put_str(f, ev->cap, r->capture_len);
		if (r->flags & PEA_REC_F_TRUNCATED)
			fputs("...", f);
	} else {
		put_hex(f, ev->cap, r->capture_len);
	}
}

#define KSYM_BUF	256

static const struct ktype *ret_type(const struct trace_fmt *fmt)
{
	return fmt->sig && ktype_typed(&fmt->sig->ret) ? &fmt->sig->ret :
							 NULL;
}

/* Whether the record holds the block of the probe's fetches. */
static bool has_fetches(const struct trace_fmt *fmt,
			const struct trace_event *ev)
{
	return fmt->nfetches && ev->fetch &&
	       kfetch_block_ok(ev->fetch, ev->fetch_size, fmt->nfetches);
}

/*
 * PARAM names and fetch expressions after the probe: "name=value ..." by
 * their types.
 */
static void put_params(FILE *f, const struct trace_fmt *fmt,
		       const struct trace_event *ev)
{
	char buf[64];
	unsigned int i;

	for (i = 0; i < fmt->nparams; i++) {
		const struct ksig_param *p = fmt->params[i];

		fprintf(f, "%s%s=%s", i ? " " : "", p->name,
			ktype_format(&p->type, ev->rec.args[p->reg], buf,
				     sizeof(buf)));
	}
	if (!has_fetches(fmt, ev))
		return;
	for (i = 0; i < fmt->nfetches; i++) {
		if (fmt->fetches[i].joined)
			continue;	/* printed with its join()'s first */
		if (i || fmt->nparams)
			fputc(' ', f);
		kfetch_put(f, &fmt->fetches[i], ev->fetch, i);
	}
}

static void put_params_json(FILE *f, const struct trace_fmt *fmt,
			    const struct trace_event *ev)
{
	bool fetches = has_fetches(fmt, ev);
	unsigned int i;

	if (!fmt->nparams && !fetches)
		return;
	fputs(",\"params\":{", f);
	for (i = 0; i < fmt->nparams; i++) {
		const struct ksig_param *p = fmt->params[i];

		if (i)
			fputc(',', f);
		json_put_str(f, p->name, strlen(p->name));
		fputc(':', f);
		ktype_put_json(f, &p->type, ev->rec.args[p->reg]);
	}
	for (i = 0; fetches && i < fmt->nfetches; i++) {
		if (fmt->fetches[i].joined)
			continue;
		if (i || fmt->nparams)
			fputc(',', f);
		kfetch_put_json(f, &fmt->fetches[i], ev->fetch, i);
	}
	fputc('}', f);
}

static void put_ret_json(FILE *f, const struct trace_fmt *fmt, __s64 ret)
{
	const struct ktype *t = ret_type(fmt);

	fputs(",\"ret\":", f);
	ktype_put_json(f, t, (__u64)ret);
	if (t && (t->cls != KT_INT || (__s64)ktype_value(t, ret) != ret))
		fprintf(f, ",\"ret_raw\":%lld", (long long)ret);
}

static void print_kstack_human(FILE *f, const struct trace_fmt *fmt,
			       const struct trace_event *ev)
{
	char buf[KSYM_BUF];
	__u32 i;

	for (i = 0; i < ev->kstack_nr; i++)
		fprintf(f, "        %016llx %s\n",
			(unsigned long long)ev->kstack[i],
			ksyms_format(fmt->ksyms, ev->kstack[i], buf,
				     sizeof(buf)));
}

/*
 * A user frame's name, as pea profile names them (usym.c): from a
 * snapshot of the process's maps, taken at its first record with a user
 * stack; return addresses looked up one byte back (the call). Else the
 * address.
 */
const char *trace_ustack_name(const struct trace_fmt *fmt,
			      const struct trace_event *ev, __u32 i, char *buf,
			      size_t len)
{
	int tgid = (int)ev->rec.tgid;

	if (fmt->usyms && tgid > 0) {
		if (!usyms_known(fmt->usyms, tgid))
			usyms_snap(fmt->usyms, tgid);
		int err = usyms_name(fmt->usyms, tgid,
				     ev->ustack[i] - (i ? 1 : 0), buf, len);

		if (!err || err == -ENOENT)
			return buf;	/* "func" or "[file+0xOFF]" */
	}
	snprintf(buf, len, "0x%llx", (unsigned long long)ev->ustack[i]);
	return buf;
}

static void print_ustack_human(FILE *f, const struct trace_fmt *fmt,
			       const struct trace_event *ev)
{
	char buf[KSYM_BUF];
	__u32 i;

	for (i = 0; i < ev->ustack_nr; i++)
		fprintf(f, "        %016llx %s [u]\n",
			(unsigned long long)ev->ustack[i],
			trace_ustack_name(fmt, ev, i, buf, sizeof(buf)));
}

static void print_ustack_json(FILE *f, const struct trace_fmt *fmt,
			      const struct trace_event *ev)
{
	char buf[KSYM_BUF];
	__u32 i;

	fputs(",\"ustack\":[", f);
	for (i = 0; i < ev->ustack_nr; i++) {
		trace_ustack_name(fmt, ev, i, buf, sizeof(buf));
		if (i)
			fputc(',', f);
		json_put_str(f, buf, strlen(buf));
	}
	fputs("],\"ustack_addr\":[", f);
	for (i = 0; i < ev->ustack_nr; i++)
		fprintf(f, "%s\"0x%llx\"", i ? "," : "",
			(unsigned long long)ev->ustack[i]);
	fputc(']', f);
}

static void print_kstack_json(FILE *f, const struct trace_fmt *fmt,
			      const struct trace_event *ev)
{
	char buf[KSYM_BUF];
	__u32 i;

	fputs(",\"kstack\":[", f);
	for (i = 0; i < ev->kstack_nr; i++) {
		ksyms_format(fmt->ksyms, ev->kstack[i], buf, sizeof(buf));
		if (i)
			fputc(',', f);
		json_put_str(f, buf, strlen(buf));
	}
	fputs("],\"kstack_addr\":[", f);
	for (i = 0; i < ev->kstack_nr; i++)
		fprintf(f, "%s\"0x%llx\"", i ? "," : "",
			(unsigned long long)ev->kstack[i]);
	fputc(']', f);
}

static void print_event_human(FILE *f, const struct trace_fmt *fmt,
			      const struct trace_event *ev)
{
	const struct pea_probe_record *r = &ev->rec;
	char comm[16], ret[64];
	int i;

	comm_column(comm, r->comm);
	trace_put_time(f, fmt->time_mode, r->time_ns, fmt->t0_ns,
		       fmt->wall_off_ns);
	fprintf(f, " %3u %-16s %7u %7u", r->cpu, comm, r->tgid, r->pid);
	if (fmt->retprobe)
		fprintf(f, " %20s %12.3f",
			ktype_format(ret_type(fmt), r->ret, ret, sizeof(ret)),
			r->latency_ns / 1e3);
	if (fmt->args) {
		fputs(" ", f);
		for (i = 0; i < 6; i++)
			fprintf(f, " 0x%llx", (unsigned long long)r->args[i]);
	}
	if (fmt->nparams || fmt->nfetches) {
		fputs("  ", f);
		put_params(f, fmt, ev);
	}
	if (fmt->capture_mode != PEA_CAPTURE_NONE)
		print_capture_human(f, fmt, ev);
	if (text_fields(fmt) && ev->raw) {
		fputs("  ", f);
		fmt->kind->print_fields(f, fmt, ev);
	}
	fputc('\n', f);
	if (ev->kstack_nr)
		print_kstack_human(f, fmt, ev);
	if (ev->ustack_nr)
		print_ustack_human(f, fmt, ev);
}

/* Between the columns and the details two spaces, then one. */
static void detail_sep(FILE *f, bool *first)
{
	fputs(*first ? "  " : " ", f);
	*first = false;
}

/*
 * Several probes: TIME, CPU, PROBE, COMM, PID, TID, then what this probe
 * has, each part named: ret= lat_us= args= str= bytes= (fault), then the
 * kind's own fields (a tracepoint's, a packet's).
 */
static void print_event_multi(FILE *f, const struct trace_fmt *fmt,
			      const struct trace_event *ev)
{
	const struct pea_probe_record *r = &ev->rec;
	bool first = true;
	char comm[16], ret[64];
	int i;

	comm_column(comm, r->comm);
	trace_put_time(f, fmt->time_mode, r->time_ns, fmt->t0_ns,
		       fmt->wall_off_ns);
	fprintf(f, " %3u %-*s %-16s %7u %7u", r->cpu, fmt->probe_col,
		fmt->probe, comm, r->tgid, r->pid);
	if (fmt->retprobe) {
		detail_sep(f, &first);
		fprintf(f, "ret=%s lat_us=%.3f",
			ktype_format(ret_type(fmt), r->ret, ret, sizeof(ret)),
			r->latency_ns / 1e3);
	}
	if (fmt->args) {
		detail_sep(f, &first);
		fputs("args=", f);
		for (i = 0; i < 6; i++)
			fprintf(f, "%s0x%llx", i ? "," : "",
				(unsigned long long)r->args[i]);
	}
	if (fmt->nparams || fmt->nfetches) {
		detail_sep(f, &first);
		put_params(f, fmt, ev);
	}
	if (fmt->capture_mode != PEA_CAPTURE_NONE) {
		detail_sep(f, &first);
		if (r->flags & PEA_REC_F_FAULT) {
			fputs("(fault)", f);
		} else if (fmt->capture_mode == PEA_CAPTURE_STR) {
			fputs("str=", f);
			c_put_str(f, ev->cap, r->capture_len);
			if (r->flags & PEA_REC_F_TRUNCATED)
				fputs("...", f);
		} else {
			fputs("bytes=", f);
			put_hex(f, ev->cap, r->capture_len);
		}
	}
	if (text_fields(fmt) && ev->raw) {
		detail_sep(f, &first);
		fmt->kind->print_fields(f, fmt, ev);
	}
	fputc('\n', f);
}

static void print_capture_json(FILE *f, const struct trace_fmt *fmt,
			       const struct trace_event *ev)
{
	const struct pea_probe_record *r = &ev->rec;

	if (fmt->capture_mode == PEA_CAPTURE_STR) {
		fputs(",\"str\":", f);
		json_put_str(f, ev->cap, r->capture_len);
		if (!utf8_valid(ev->cap, r->capture_len)) {
			fputs(",\"str_hex\":\"", f);
			put_hex(f, ev->cap, r->capture_len);
			fputc('"', f);
		}
		if (r->flags & PEA_REC_F_TRUNCATED)
			fputs(",\"truncated\":true", f);
	} else if (fmt->capture_mode == PEA_CAPTURE_FIXED) {
		fputs(",\"bytes\":\"", f);
		put_hex(f, ev->cap, r->capture_len);
		fputc('"', f);
	}
	if (r->flags & PEA_REC_F_FAULT)
		fputs(",\"fault\":true", f);
}

static void print_event_json(FILE *f, const struct trace_fmt *fmt,
			     const struct trace_event *ev)
{
	const struct pea_probe_record *r = &ev->rec;
	int i;

	fprintf(f, "{\"type\":\"event\",\"time_ns\":%llu",
		(unsigned long long)r->time_ns);
	trace_put_time_wall_json(f, fmt->time_mode, r->time_ns,
				 fmt->wall_off_ns);
	fprintf(f, ",\"cpu\":%u,\"pid\":%u,\"tid\":%u,\"comm\":", r->cpu,
		r->tgid, r->pid);
	json_put_str(f, r->comm, strnlen(r->comm, sizeof(r->comm)));
	fputs(",\"probe\":", f);
	json_put_str(f, fmt->probe, strlen(fmt->probe));
	fprintf(f, ",\"addr\":\"0x%llx\"", (unsigned long long)r->addr);
	if (fmt->args) {
		fputs(",\"args\":[", f);
		for (i = 0; i < 6; i++)
			fprintf(f, "%s\"0x%llx\"", i ? "," : "",
				(unsigned long long)r->args[i]);
		fputc(']', f);
	}
	put_params_json(f, fmt, ev);
	if (fmt->retprobe) {
		put_ret_json(f, fmt, r->ret);
		fprintf(f, ",\"latency_ns\":%llu",
			(unsigned long long)r->latency_ns);
	}
	if (fmt->capture_mode != PEA_CAPTURE_NONE)
		print_capture_json(f, fmt, ev);
	if (fmt->kind->json_fields && ev->raw)
		fmt->kind->json_fields(f, fmt, ev);
	if (ev->kstack_nr)
		print_kstack_json(f, fmt, ev);
	if (ev->ustack_nr)
		print_ustack_json(f, fmt, ev);
	fputs("}\n", f);
}

void trace_print_event(FILE *f, const struct trace_fmt *fmt,
		       const struct trace_event *ev)
{
	if (fmt->probe_col && !fmt->json)
		print_event_multi(f, fmt, ev);
	else if (fmt->kind->print_event)
		fmt->kind->print_event(f, fmt, ev);
	else if (fmt->json)
		print_event_json(f, fmt, ev);
	else
		print_event_human(f, fmt, ev);
}

/* 0 or -ENOMEM. */
int trace_json_line_open(struct trace_json_line *j)
{
	j->buf = NULL;
	j->len = 0;
	j->mem = open_memstream(&j->buf, &j->len);
	return j->mem ? 0 : -ENOMEM;
}

const char *trace_json_line(struct trace_json_line *j,
			    const struct trace_fmt *fmt,
			    const struct trace_event *ev, size_t *len)
{
	struct trace_fmt f = *fmt;

	f.json = true;
	j->len = 0;
	rewind(j->mem);
	trace_print_event(j->mem, &f, ev);
	if (fflush(j->mem) || !j->buf)
		return NULL;
	*len = strcspn(j->buf, "\n");
	return j->buf;
}

void trace_json_line_close(struct trace_json_line *j)
{
	if (j->mem)
		fclose(j->mem);
	free(j->buf);
	j->mem = NULL;
	j->buf = NULL;
}
