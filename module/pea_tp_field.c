// SPDX-License-Identifier: GPL-2.0
/*
 * pea: a tracepoint link's fetches checked against the event's own field
 * table, as trace_probe.c's parse_trace_event_arg() looks an eprobe's
 * $field up in trace_get_fields() of the event (kernel/trace/
 * trace_eprobe.c): a chain may start only at a field the event has, of
 * the size it has, that is an integer or a pointer (not a string or an
 * array stored in the entry: an eprobe reads those in place).
 *
 * The table is the list trace_get_fields() (include/linux/trace_events.h)
 * gives, of kernel/trace/trace.h's struct ftrace_event_field, which is
 * not in the headers a module is built with. Its head (link, name, type,
 * filter_type, offset, size) is the same from v3.x to 6.12 (checked in
 * both Debian kernels' sources); only what follows size changed (6.1:
 * int is_signed, len; 6.12: bit fields, len). pea reads the head only.
 *
 * Nothing in the headers can check that head at build time, so each walk
 * checks that what it reads looks like it (pea_tp_field_plausible()): at
 * most PEA_TP_FIELDS_MAX entries, each name readable and NUL-terminated
 * within PEA_TP_FIELD_NAME_MAX bytes (read with a fault-safe copy, never
 * dereferenced; any bytes: user_events' names are the user's), a size
 * and an offset within PERF_MAX_TRACE_SIZE (a size of 0 too: ftrace's
 * own dynamic arrays, ftrace:print's buf), the offset past the common
 * header, a small filter_type. A table that does not is a
 * kernel whose struct differs: the attach is refused with EOPNOTSUPP and
 * one warning names the event, rather than fields being judged by bytes
 * that are not theirs.
 *
 * The list is read without event_mutex: it is built when the event is
 * registered (event_init()'s define_fields) and freed when it is removed,
 * which the caller's perf event, holding a reference to the event
 * (perf_trace_init(): trace_event_try_get_ref()), prevents meanwhile.
 */
#include <linux/list.h>
#include <linux/printk.h>
#include <linux/trace_events.h>
#include "pea_fetch.h"
#include "pea_tp_filter.h"

/* Fields of one event at most (TRACE_EVENT()s have tens). */
#define PEA_TP_FIELDS_MAX	1024
/* A field name's bytes at most, NUL included (user_events' bound). */
#define PEA_TP_FIELD_NAME_MAX	512
/* filter_type below this (enum filter_type has 8 values on 6.1, 11 on 6.12). */
#define PEA_TP_FILTER_TYPES	32

/* The head of struct ftrace_event_field (kernel/trace/trace.h). */
struct pea_event_field {
	struct list_head link;
	const char *name;
	const char *type;
	int filter_type;
	int offset;
	int size;
};

/* Whether @f looks like the head pea reads (the comment above). */
static bool pea_tp_field_plausible(const struct pea_event_field *f)
{
	char name[PEA_TP_FIELD_NAME_MAX];
	long n;

	if (f->size < 0 || f->size > PERF_MAX_TRACE_SIZE ||
	    f->offset < (int)sizeof(struct trace_entry) ||
	    f->offset >= PERF_MAX_TRACE_SIZE ||
	    f->filter_type < 0 || f->filter_type >= PEA_TP_FILTER_TYPES ||
	    !f->name)
		return false;
	n = pea_strncpy_nofault((u8 *)name, (const u8 *)f->name, sizeof(name),
				false);
	/* Readable and NUL-terminated; its bytes are the event's choice. */
	return n >= 1 && !name[n - 1];
}

/*
 * Whether @call has an integer or pointer field at @offset of @size: 1
 * yes, 0 no, -EOPNOTSUPP the table does not look like what pea reads.
 */
static int pea_tp_field_ok(struct trace_event_call *call, u32 offset,
			   u32 size)
{
	struct list_head *head = trace_get_fields(call);
	struct pea_event_field *field;
	bool matched = false;
	int ok = 0;
	u32 n = 0;

	/* Every entry is checked, the one at @offset or not. */
	list_for_each_entry(field, head, link) {
		if (++n > PEA_TP_FIELDS_MAX || !pea_tp_field_plausible(field)) {
			pr_warn_once("pea: trace event %s's field table does not look like struct ftrace_event_field's head as pea reads it (kernel/trace/trace.h): fetches from fields refused\n",
				     trace_event_name(call));
			return -EOPNOTSUPP;
		}
		if (matched || field->offset != (int)offset ||
		    field->size != (int)size)
			continue;
		matched = true;
		ok = field->filter_type == FILTER_OTHER ||
		     field->filter_type == FILTER_PTR_STRING;
	}
	return ok;
}

/**
 * pea_tp_fields_check() - whether each field a fetch starts at is one of
 * the event's
 * @call: the event (a perf event's tp_event, holding its reference)
 * @fs: the link's fetches, or NULL
 *
 * Context: process, with a perf event of @call alive.
 * Return: 0, -EINVAL (a PEA_FETCH_BASE_FIELD fetch whose offset and size
 * name no integer or pointer field of the event: past its entry, a common
 * field, a string, a size other than the field's), as an eprobe's unknown
 * $field is, or -EOPNOTSUPP (the event's field table does not look like
 * the head pea reads: a kernel whose struct differs; warned once).
 */
int pea_tp_fields_check(struct trace_event_call *call,
			const struct pea_fetch_set *fs)
{
	u32 i;
	int ok;

	for (i = 0; fs && i < fs->nr; i++) {
		const struct pea_fetch *f = &fs->f[i];

		if (f->base != PEA_FETCH_BASE_FIELD)
			continue;
		ok = pea_tp_field_ok(call, f->field_offset, f->field_size);
		if (ok < 0)
			return ok;
		if (!ok)
			return -EINVAL;
	}
	return 0;
}
