// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* adaptrace escaping: one function per output format. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "escape.h"

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

int at_utf8_len(const unsigned char *p)
{
	int n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong forms, surrogates, beyond U+10FFFF. */
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
	    (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

/* The code point of a valid n-byte sequence. */
static uint32_t code_point(const unsigned char *p, int n)
{
	static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	uint32_t c = p[0] & lead_mask[n];

	for (int i = 1; i < n; i++)
		c = c << 6 | (p[i] & 0x3f);
	return c;
}

static const unsigned char *input(const char *s)
{
	return (const unsigned char *)(s ? s : "");
}

void at_esc_json(FILE *f, const char *s)
{
	const unsigned char *p = input(s);

	fputc('"', f);
	while (*p) {
		int n = at_utf8_len(p);

		if (!n) {
			fputs("\\ufffd", f);
			p++;
		} else if (n > 1) {
			uint32_t c = code_point(p, n);

			/* Line and paragraph separators end a line in JavaScript. */
			if (c == 0x2028 || c == 0x2029)
				fprintf(f, "\\u%04x", c);
			else
				fwrite(p, 1, (size_t)n, f);
			p += n;
		} else {
			if (*p == '"' || *p == '\\')
				fprintf(f, "\\%c", *p);
			else if (*p == '\n')
				fputs("\\n", f);
			else if (*p == '\r')
				fputs("\\r", f);
			else if (*p == '\t')
				fputs("\\t", f);
			else if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
			p++;
		}
	}
	fputc('"', f);
}

/* Output to a FILE or into a fixed buffer, never splitting one escape. */
struct sink {
	FILE *f;
	char *buf;
	size_t size, len;
	bool full;
};

static void put(struct sink *k, const char *s, size_t n)
{
	if (k->f) {
		fwrite(s, 1, n, k->f);
		return;
	}
	if (k->full || k->len + n >= k->size) {
		k->full = true;
		return;
	}
	memcpy(k->buf + k->len, s, n);
	k->len += n;
	k->buf[k->len] = '\0';
}

/* Code points a terminal acts on: C1 controls, bidi overrides, separators. */
static bool invisible(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || c == 0x200e || c == 0x200f ||
	       (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

static void text(struct sink *k, const char *s, bool quoted)
{
	const unsigned char *p = input(s);
	char e[16];

	while (*p) {
		int n = at_utf8_len(p);

		if (n > 1 && !invisible(code_point(p, n))) {
			put(k, (const char *)p, (size_t)n);
			p += n;
			continue;
		}
		if (n > 1) {
			snprintf(e, sizeof(e), "\\u%04x", code_point(p, n));
			p += n;
		} else if (*p == '\\' || (quoted && *p == '"')) {
			snprintf(e, sizeof(e), "\\%c", *p++);
		} else if (*p == '\n' || *p == '\r' || *p == '\t') {
			snprintf(e, sizeof(e), "\\%c", *p == '\n' ? 'n' : *p == '\r' ? 'r' : 't');
			p++;
		} else if (!n || *p < 0x20 || *p == 0x7f) {
			snprintf(e, sizeof(e), "\\x%02x", *p++);
		} else {
			e[0] = (char)*p++;
			e[1] = '\0';
		}
		put(k, e, strlen(e));
	}
}

void at_esc_text(FILE *f, const char *s, int quoted)
{
	struct sink k = {.f = f};

	if (quoted)
		fputc('"', f);
	text(&k, s, quoted);
	if (quoted)
		fputc('"', f);
}

const char *at_esc_text_buf(char *buf, size_t size, const char *s)
{
	struct sink k = {.buf = buf, .size = size};

	if (size)
		buf[0] = '\0';
	text(&k, s, false);
	return buf;
}

void at_esc_csv(FILE *f, const char *s)
{
	const unsigned char *p = input(s);
	bool formula = *p && strchr("=+-@\t\r", *p);
	bool quoted = formula || strpbrk((const char *)p, ",\"\r\n");

	if (quoted)
		fputs(formula ? "\"'" : "\"", f);
	while (*p) {
		int n = at_utf8_len(p);

		if (!n) {
			fputs(REPLACEMENT, f);
			p++;
			continue;
		}
		if (*p == '"')
			fputc('"', f);
		fwrite(p, 1, (size_t)n, f);
		p += n;
	}
	if (quoted)
		fputc('"', f);
}

void at_esc_om_label(FILE *f, const char *s)
{
	const unsigned char *p = input(s);

	fputc('"', f);
	while (*p) {
		int n = at_utf8_len(p);

		if (n > 1) {
			fwrite(p, 1, (size_t)n, f);
			p += n;
			continue;
		}
		if (*p == '\\' || *p == '"')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (!n || *p < 0x20 || *p == 0x7f)
			fputs(REPLACEMENT, f);
		else
			fputc(*p, f);
		p++;
	}
	fputc('"', f);
}

void at_esc_xml(FILE *f, const char *s)
{
	const unsigned char *p = input(s);

	while (*p) {
		int n = at_utf8_len(p);

		if (n > 1) {
			uint32_t c = code_point(p, n);

			if (c == 0xfffe || c == 0xffff)
				fputs(REPLACEMENT, f);
			else
				fwrite(p, 1, (size_t)n, f);
			p += n;
			continue;
		}
		switch (n ? *p : 0) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		case '\t':
		case '\n':
		case '\r':
			/* As references, so attribute values keep them. */
			fprintf(f, "&#x%x;", *p);
			break;
		default:
			/* DEL is legal XML but no reader wants it. */
			if (!n || *p < 0x20 || *p == 0x7f)
				fputs(REPLACEMENT, f);
			else
				fputc(*p, f);
		}
		p++;
	}
}

void at_esc_md(FILE *f, const char *s)
{
	const unsigned char *p = input(s);

	while (*p) {
		int n = at_utf8_len(p);

		if (n > 1) {
			if (invisible(code_point(p, n)))
				fputs(REPLACEMENT, f);
			else
				fwrite(p, 1, (size_t)n, f);
			p += n;
			continue;
		}
		if (!n)
			fputs(REPLACEMENT, f);
		else if (*p < 0x20 || *p == 0x7f)
			fputc(' ', f);
		else if (strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", *p))
			fprintf(f, "\\%c", *p);
		else
			fputc(*p, f);
		p++;
	}
}
