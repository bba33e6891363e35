// SPDX-License-Identifier: GPL-2.0
/*
 * pea: trace event formats. A tracefs format file has one line per field,
 *
 *	field:TYPE NAME[N];	offset:O;	size:S;	signed:0|1;
 *
 * where TYPE may start with __data_loc or __rel_loc (a u32: length << 16
 * | offset of the data, from the entry's start or from the field's end).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pea_tool.h"
#include "tpformat.h"

const char *tp_events_dir(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing/events",
		"/sys/kernel/debug/tracing/events",
	};
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (!access(dirs[i], R_OK))
			return dirs[i];
	return NULL;
}

static int parse_decl(char *decl, struct tp_field *fl)
{
	char *name, *br, *type = decl;
	size_t n;

	while (isspace((unsigned char)*type))
		type++;
	n = strlen(type);
	while (n && isspace((unsigned char)type[n - 1]))
		type[--n] = 0;
	name = strrchr(type, ' ');
	if (!name || !name[1])
		return -EINVAL;
	*name++ = 0;
	br = strchr(name, '[');
	if (br) {
		unsigned long nelem = strtoul(br + 1, NULL, 0);

		*br = 0;
		fl->kind = !strcmp(type, "char") ? TPF_STR : TPF_ARRAY;
		fl->elem_size = nelem ? fl->size / nelem : 0;
	}
	if (strlen(name) >= sizeof(fl->name) || strlen(type) >= sizeof(fl->type) ||
	    !*name)
		return -EINVAL;
	strcpy(fl->name, name);
	strcpy(fl->type, type);
	fl->pointer = !!strchr(type, '*');
	if (!strncmp(type, "__data_loc ", 11) || !strncmp(type, "__rel_loc ", 10)) {
		const char *et = strchr(type, ' ') + 1;
		char *eb = strchr(et, '[');
		size_t el = eb ? (size_t)(eb - et) : strlen(et);

		fl->rel = type[2] == 'r';
		if (fl->size != 4)
			return -EINVAL;
		fl->kind = el == 4 && !strncmp(et, "char", 4) ? TPF_LOC_STR :
			   TPF_LOC_ARRAY;
		fl->elem_size = 0;
		return 0;
	}
	if (!br) {
		fl->kind = (fl->size == 1 || fl->size == 2 || fl->size == 4 ||
			    fl->size == 8) ? TPF_INT : TPF_OTHER;
	} else if (fl->kind == TPF_ARRAY &&
		   (!fl->elem_size || fl->elem_size > 8 ||
		    (fl->elem_size & (fl->elem_size - 1)))) {
		fl->kind = TPF_OTHER;
	}
	return 0;
}

int tp_format_parse(const char *text, struct tp_format *fmt,
		    const char **err)
{
	const char *line = text, *nl;
	char buf[512];

	memset(fmt, 0, sizeof(*fmt));
	fmt->id = -1;
	for (; *line; line = nl + 1) {
		struct tp_field *fl;
		char *semi;
		int sgn;
		size_t len;

		nl = strchr(line, '\n');
		if (!nl)
			nl = line + strlen(line);
		len = nl - line;
		if (len > 11 && !strncmp(line, "print fmt: ", 11))
			tp_format_syms(fmt, line + 11, len - 11);
		if (len >= sizeof(buf)) {
			/* Only "print fmt:" lines are this long. */
			if (!strncmp(line, "\tfield:", 7)) {
				*err = "field line too long";
				return -EINVAL;
			}
			if (!*nl)
				break;
			continue;
		}
		memcpy(buf, line, len);
		buf[len] = 0;
		if (!strncmp(buf, "name: ", 6)) {
			len = strnlen(buf + 6, sizeof(fmt->name) - 1);
			memcpy(fmt->name, buf + 6, len);
			fmt->name[len] = 0;
		} else if (!strncmp(buf, "ID: ", 4)) {
			fmt->id = atoi(buf + 4);
		} else if (!strncmp(buf, "\tfield:", 7)) {
			if (fmt->nfields == TP_MAX_FIELDS) {
				*err = "too many fields";
				return -EINVAL;
			}
			fl = &fmt->fields[fmt->nfields];
			semi = strchr(buf + 7, ';');
			if (!semi ||
			    sscanf(semi, ";\toffset:%u;\tsize:%u;\tsigned:%d;",
				   &fl->offset, &fl->size, &sgn) != 3) {
				*err = "a field line without offset, size and signed";
				return -EINVAL;
			}
			fl->is_signed = sgn;
			*semi = 0;
			if (parse_decl(buf + 7, fl)) {
				*err = "a field declaration without a type and a name";
				return -EINVAL;
			}
			fmt->nfields++;
		}
		if (!*nl)
			break;
	}
	if (fmt->id <= 0) {
		*err = "no ID";
		return -EINVAL;
	}
	if (!fmt->nfields || strcmp(fmt->fields[0].name, "common_type")) {
		*err = "no common_type field first";
		return -EINVAL;
	}
	return 0;
}

int tp_format_load(const char *sys, const char *name, struct tp_format *fmt,
		   const char **err)
{
	static char text[65536];
	const char *dir = tp_events_dir();
	char path[512];
	size_t n;
	FILE *f;

	*err = "tracefs is not mounted (mount -t tracefs tracefs /sys/kernel/tracing)";
	if (!dir)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s/%s/format", dir, sys, name);
	f = fopen(path, "r");
	if (!f) {
		*err = strerror(errno);
		return errno == ENOENT ? -ENOENT : -EINVAL;
	}
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	return tp_format_parse(text, fmt, err);
}

const struct tp_field *tp_field_find(const struct tp_format *fmt,
				     const char *name)
{
	int i;

	for (i = 0; i < fmt->nfields; i++)
		if (!strcmp(fmt->fields[i].name, name))
			return &fmt->fields[i];
	return NULL;
}

static __u64 load_int(const unsigned char *p, unsigned int size, bool sgn)
{
	__u64 v = 0;

	memcpy(&v, p, size);	/* little endian */
	if (sgn && size < 8 && (v >> (size * 8 - 1)) & 1)
		v |= ~0ULL << (size * 8);
	return v;
}

static void print_int(FILE *f, const struct tp_field *fl,
		      const unsigned char *p, unsigned int size, bool json)
{
	__u64 v = load_int(p, size, fl->is_signed);

	if (fl->pointer)
		fprintf(f, json ? "\"0x%llx\"" : "0x%llx",
			(unsigned long long)v);
	else if (fl->is_signed)
		fprintf(f, "%lld", (long long)v);
	else
		fprintf(f, "%llu", (unsigned long long)v);
}

static void print_str(FILE *f, const unsigned char *s, size_t max, bool json)
{
	size_t n = strnlen((const char *)s, max);

	if (json)
		json_put_str(f, s, n);
	else
		c_put_str(f, s, n);
}

static void print_hex(FILE *f, const unsigned char *p, size_t n, bool json)
{
	size_t i;

	fputs(json ? "\"" : "0x", f);
	for (i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
	if (json)
		fputc('"', f);
}

static void print_array(FILE *f, const struct tp_field *fl,
			const unsigned char *p, size_t n, unsigned int esz,
			bool json)
{
	size_t i;

	fputc('[', f);
	for (i = 0; esz && i + esz <= n; i += esz) {
		if (i)
			fputc(',', f);
		print_int(f, fl, p + i, esz, json);
	}
	fputc(']', f);
}

/* Names as they are, or quoted if they hold a space or a quote. */
static void put_names(FILE *f, const char *s)
{
	const char *p;

	for (p = s; *p; p++)
		if (!isgraph((unsigned char)*p) || *p == '"' || *p == '\\')
			break;
	if (*p)
		c_put_str(f, s, strlen(s));
	else
		fputs(s, f);
}

static void print_field(FILE *f, const struct tp_format *fmt,
			const struct tp_field *fl, const unsigned char *raw,
			__u32 size, bool json)
{
	const unsigned char *p = raw + fl->offset;
	__u32 loc, off, len;
	char names[512];

	switch (fl->kind) {
	case TPF_INT:
		if (!json && tp_sym_format(fmt, fl, load_int(p, fl->size,
							     fl->is_signed),
					   names, sizeof(names)))
			put_names(f, names);
		else
			print_int(f, fl, p, fl->size, json);
		return;
	case TPF_STR:
		print_str(f, p, fl->size, json);
		return;
	case TPF_ARRAY:
		print_array(f, fl, p, fl->size, fl->elem_size, json);
		return;
	case TPF_OTHER:
		print_hex(f, p, fl->size, json);
		return;
	default:
		break;
	}
	memcpy(&loc, p, 4);
	off = loc & 0xffff;
	len = loc >> 16;
	if (fl->rel)
		off += fl->offset + 4;
	if (off + len > size) {
		fputs(json ? "null" : "(bad)", f);
		return;
	}
	if (fl->kind == TPF_LOC_STR) {
		print_str(f, raw + off, len, json);
		return;
	}
	/* Element size from the type: u8/u16/u32/u64, int, long; else bytes. */
	if (strstr(fl->type, "64") || strstr(fl->type, "long"))
		print_array(f, fl, raw + off, len, 8, json);
	else if (strstr(fl->type, "32") || strstr(fl->type, "int"))
		print_array(f, fl, raw + off, len, 4, json);
	else if (strstr(fl->type, "16") || strstr(fl->type, "short"))
		print_array(f, fl, raw + off, len, 2, json);
	else
		print_array(f, fl, raw + off, len, 1, json);
}

/* JSON: the names of a field's value as "NAME_name", if it has some. */
static void put_sym_json(FILE *f, const struct tp_format *fmt,
			 const struct tp_field *fl, const unsigned char *raw)
{
	char key[TP_NAME_LEN + 8], names[512];

	if (!tp_sym_format(fmt, fl, load_int(raw + fl->offset, fl->size,
					     fl->is_signed),
			   names, sizeof(names)))
		return;
	snprintf(key, sizeof(key), "%s_name", fl->name);
	if (tp_field_find(fmt, key))
		return;		/* the format has a field of that name */
	fprintf(f, ",\"%s\":", key);
	json_put_str(f, names, strlen(names));
}

void tp_print_fields(FILE *f, const struct tp_format *fmt,
		     const unsigned char *raw, __u32 size, bool json)
{
	bool first = true;
	int i;

	if (json)
		fputc('{', f);
	for (i = 0; i < fmt->nfields; i++) {
		const struct tp_field *fl = &fmt->fields[i];

		if (!strncmp(fl->name, "common_", 7))
			continue;
		if (fl->offset + fl->size > size)
			continue;	/* not in this entry: never read past it */
		if (json)
			fprintf(f, "%s\"%s\":", first ? "" : ",", fl->name);
		else
			fprintf(f, "%s%s=", first ? "" : " ", fl->name);
		print_field(f, fmt, fl, raw, size, json);
		first = false;
		if (json && fl->kind == TPF_INT && fl->sym)
			put_sym_json(f, fmt, fl, raw);
	}
	if (json)
		fputc('}', f);
}
