/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: trace event formats (tracefs events/SUBSYS/NAME/format) and
 * printing a raw entry by them (a --filter on them: tpfilter.h; the names
 * their print fmt gives values: tpsym.c).
 */
#ifndef _PEA_TPFORMAT_H
#define _PEA_TPFORMAT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include <linux/pea.h>

#define TP_MAX_FIELDS	128
#define TP_NAME_LEN	64
#define TP_TYPE_LEN	128
/* Names from the print fmt's __print_flags and __print_symbolic, in all */
#define TP_SYM_MAX	512
#define TP_SYM_TEXT	16384

enum tp_sym_kind {
	TP_SYM_NONE,
	TP_SYM_FLAGS,		/* __print_flags(REC->field, "|", ...) */
	TP_SYM_SYMBOLIC,	/* __print_symbolic(REC->field, ...) */
};

/* One { value, "name" } of a table: the name at @name in sym_text. */
struct tp_sym {
	__u64 val;
	unsigned int name;
};

enum tp_field_kind {
	TPF_INT,	/* an integer of size 1, 2, 4 or 8 */
	TPF_STR,	/* char[N] */
	TPF_ARRAY,	/* TYPE[N], not char */
	TPF_LOC_STR,	/* __data_loc / __rel_loc char[] */
	TPF_LOC_ARRAY,	/* __data_loc / __rel_loc TYPE[] */
	TPF_OTHER,	/* anything else: printed in hex */
};

struct tp_field {
	char name[TP_NAME_LEN];
	char type[TP_TYPE_LEN];
	unsigned int offset, size;
	bool is_signed;
	bool rel;		/* __rel_loc rather than __data_loc */
	bool pointer;		/* the type has a '*' */
	enum tp_field_kind kind;
	unsigned int elem_size;	/* arrays: bytes per element (0: unknown) */
	/*
	 * TPF_INT: the names the print fmt gives its values, if it does: a
	 * table of @sym_n entries from struct tp_format.syms[@sym_first],
	 * looked up after masking with @sym_mask (REC->field & MASK), flags
	 * joined by @sym_delim (tp_sym_format()); @sym_zero: the name of a
	 * masked 0 when the call is the true arm of "COND ? CALL : \"NAME\""
	 * with COND its own first argument (sched_switch's "R").
	 */
	enum tp_sym_kind sym;
	unsigned int sym_first, sym_n;
	__u64 sym_mask;
	char sym_delim[8];
	char sym_zero[16];
};

struct tp_format {
	char name[TP_NAME_LEN * 2];
	int id;
	int nfields;
	struct tp_field fields[TP_MAX_FIELDS];
	unsigned int nsyms, sym_len;	/* used of @syms and @sym_text */
	struct tp_sym syms[TP_SYM_MAX];
	char sym_text[TP_SYM_TEXT];
};

/* The tracefs events directory (mounted tracefs, or debugfs's), or NULL. */
const char *tp_events_dir(void);

/* Parse a format file's text; 0 or -EINVAL with *err set to a message. */
int tp_format_parse(const char *text, struct tp_format *fmt,
		    const char **err);
/* Read and parse events/SYS/NAME/format; 0, -ENOENT or -EINVAL. */
int tp_format_load(const char *sys, const char *name, struct tp_format *fmt,
		   const char **err);

const struct tp_field *tp_field_find(const struct tp_format *fmt,
				     const char *name);

/*
 * Read the tables of __print_flags() and __print_symbolic() calls on a
 * field (REC->NAME, or REC->NAME & MASK) in @pfmt, the text after
 * "print fmt: ", into @fmt's fields. Calls on anything else, or whose
 * values are not constant expressions, are left out; the count of
 * tables read is returned.
 */
int tp_format_syms(struct tp_format *fmt, const char *pfmt, size_t len);

/*
 * The names of value @v of field @fl as the kernel prints them: flags
 * set joined by the delimiter, any bits no name has last as 0x...; a
 * symbol's name; the name of the "COND ? CALL : NAME" around the call
 * for a masked 0. Returns @buf, or NULL when no name applies (no table,
 * flags 0 with no such name, a symbol not in the table).
 */
const char *tp_sym_format(const struct tp_format *fmt,
			  const struct tp_field *fl, __u64 v, char *buf,
			  size_t len);

/*
 * The fields of @raw (@size bytes) as "name=value ..." or a JSON object.
 * A field with names (tp_sym_format()) prints them in the text; JSON
 * keeps its number and adds "NAME_name":"names" after it.
 */
void tp_print_fields(FILE *f, const struct tp_format *fmt,
		     const unsigned char *raw, __u32 size, bool json);

#endif /* _PEA_TPFORMAT_H */
