/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pea: trace event formats (tracefs events/SUBSYS/NAME/format) and
 * printing a raw entry by them (a --filter on them: tpfilter.h).
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
};

struct tp_format {
	char name[TP_NAME_LEN * 2];
	int id;
	int nfields;
	struct tp_field fields[TP_MAX_FIELDS];
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

/* The fields of @raw (@size bytes) as "name=value ..." or a JSON object. */
void tp_print_fields(FILE *f, const struct tp_format *fmt,
		     const unsigned char *raw, __u32 size, bool json);

#endif /* _PEA_TPFORMAT_H */
