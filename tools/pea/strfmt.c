// SPDX-License-Identifier: GPL-2.0
/*
 * pea: strings for output. JSON strings are always valid UTF-8: valid
 * UTF-8 sequences pass through, quotes, backslashes and control
 * characters are escaped, and any byte that is not part of a valid
 * sequence becomes U+FFFD. C-style strings keep printable ASCII.
 */
#include <stdio.h>
#include "pea_tool.h"

/* Length of the valid UTF-8 sequence at @s (at most @len bytes), or 0. */
static size_t utf8_seq_len(const unsigned char *s, size_t len)
{
	unsigned int cp;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n > len)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates, past U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

bool utf8_valid(const unsigned char *s, size_t len)
{
	size_t i = 0, n;

	while (i < len) {
		n = utf8_seq_len(s + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

void json_put_str(FILE *f, const void *str, size_t len)
{
	const unsigned char *s = str;
	size_t i = 0, n;

	fputc('"', f);
	while (i < len) {
		unsigned char c = s[i];

		switch (c) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				fprintf(f, "\\u%04x", c);
			} else if (c < 0x80) {
				fputc(c, f);
			} else {
				n = utf8_seq_len(s + i, len - i);
				if (n) {
					fwrite(s + i, 1, n, f);
					i += n;
					continue;
				}
				fputs("\\ufffd", f);
			}
			break;
		}
		i++;
	}
	fputc('"', f);
}

void c_put_str(FILE *f, const void *str, size_t len)
{
	const unsigned char *s = str;
	size_t i;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (c >= 0x20 && c < 0x7f)
			fputc(c, f);
		else
			fprintf(f, "\\x%02x", c);
	}
	fputc('"', f);
}
