// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the escapers: any bytes give output that is valid
 * UTF-8 and cannot break out of its format. JSON decodes back to the input
 * when the input was valid UTF-8.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

static char *out;
static size_t outlen;

static const char *run(void (*e)(FILE *, const char *), const char *s)
{
	FILE *f;

	free(out);
	f = open_memstream(&out, &outlen);
	e(f, s);
	fclose(f);
	return out;
}

static bool valid_utf8(const char *s)
{
	while (*s) {
		int n = at_utf8_len((const unsigned char *)s);

		if (!n)
			return false;
		s += n;
	}
	return true;
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static int hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decode a JSON string literal (as at_esc_json writes it) into dst. */
static bool json_decode(const char *s, char *dst)
{
	if (*s++ != '"')
		return false;
	while (*s != '"') {
		if (!*s || (unsigned char)*s < 0x20)
			return false;
		if (*s != '\\') {
			*dst++ = *s++;
			continue;
		}
		s++;
		if (*s == 'u') {
			unsigned v = 0;

			for (int i = 1; i <= 4; i++) {
				if (hex(s[i]) < 0)
					return false;
				v = v << 4 | (unsigned)hex(s[i]);
			}
			if (v < 0x80) {
				*dst++ = (char)v;
			} else if (v < 0x800) {
				*dst++ = (char)(0xc0 | v >> 6);
				*dst++ = (char)(0x80 | (v & 0x3f));
			} else {
				*dst++ = (char)(0xe0 | v >> 12);
				*dst++ = (char)(0x80 | (v >> 6 & 0x3f));
				*dst++ = (char)(0x80 | (v & 0x3f));
			}
			s += 5;
			continue;
		}
		switch (*s++) {
		case '"':
			*dst++ = '"';
			break;
		case '\\':
			*dst++ = '\\';
			break;
		case 'n':
			*dst++ = '\n';
			break;
		case 'r':
			*dst++ = '\r';
			break;
		case 't':
			*dst++ = '\t';
			break;
		default:
			return false;
		}
	}
	*dst = '\0';
	return s[1] == '\0';
}

static void text_plain(FILE *f, const char *s)
{
	at_esc_text(f, s, 0);
}

static void check_csv(const char *in, const char *o)
{
	size_t n = strlen(o);

	if (!valid_utf8(o))
		abort();
	if (o[0] != '"') {
		if (strpbrk(o, ",\"\r\n") || (*o && strchr("=+-@\t\r", *o)) ||
		    (valid_utf8(in) && strcmp(o, in)))
			abort();
		return;
	}
	if (n < 2 || o[n - 1] != '"')
		abort();
	for (size_t i = 1; i + 1 < n; i++)
		if (o[i] == '"' && o[++i] != '"')
			abort();
}

static void check_xml(const char *o)
{
	static const char *const ent[] = {"&lt;",   "&gt;",  "&amp;", "&quot;",
					  "&apos;", "&#x9;", "&#xa;", "&#xd;"};

	if (!valid_utf8(o) || has_control(o) || strpbrk(o, "<>\"'"))
		abort();
	for (const char *p = strchr(o, '&'); p; p = strchr(p + 1, '&')) {
		size_t k = 0;

		while (k < sizeof(ent) / sizeof(ent[0]) && strncmp(p, ent[k], strlen(ent[k])))
			k++;
		if (k == sizeof(ent) / sizeof(ent[0]))
			abort();
	}
}

static void check_md(const char *o)
{
	if (!valid_utf8(o) || has_control(o) || strstr(o, "\xc2\x9b") || strstr(o, "\xe2\x80\xae"))
		abort();
	/* Every ASCII punctuation byte comes as a backslash pair. */
	for (const char *p = o; *p; p++)
		if (strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", *p)) {
			if (*p != '\\' || !p[1] ||
			    !strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", p[1]))
				abort();
			p++;
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1), *dec, buf[64];
	const char *o;

	memcpy(in, data, size);
	in[size] = '\0';
	dec = malloc(3 * size + 16);

	o = run(at_esc_json, in);
	if (!valid_utf8(o) || has_control(o) || !json_decode(o, dec))
		abort();
	if (valid_utf8(in) && strcmp(dec, in))
		abort();

	o = run(text_plain, in);
	if (!valid_utf8(o) || has_control(o) || strstr(o, "\xc2\x9b") || strstr(o, "\xe2\x80\xae"))
		abort();
	at_esc_text_buf(buf, sizeof(buf), in);
	if (strlen(buf) >= sizeof(buf) || !valid_utf8(buf) || strncmp(buf, o, strlen(buf)))
		abort();

	check_csv(in, run(at_esc_csv, in));

	o = run(at_esc_om_label, in);
	if (!valid_utf8(o) || has_control(o) || o[0] != '"' || o[strlen(o) - 1] != '"')
		abort();

	check_xml(run(at_esc_xml, in));
	check_md(run(at_esc_md, in));
	free(dec);
	free(in);
	return 0;
}
