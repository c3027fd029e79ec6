// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the escapers: exact output for each format's edge cases. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "escape.h"

typedef void (*escaper)(FILE *f, const char *s);

static char out[4096];

static const char *run(escaper e, const char *s)
{
	FILE *f;

	memset(out, 0, sizeof(out));
	f = fmemopen(out, sizeof(out) - 1, "w");
	e(f, s);
	fclose(f);
	return out;
}

static void text_plain(FILE *f, const char *s)
{
	at_esc_text(f, s, 0);
}

static void text_quoted(FILE *f, const char *s)
{
	at_esc_text(f, s, 1);
}

static void expect(escaper e, const char *in, const char *want, const char *name)
{
	const char *got = run(e, in);

	check(!strcmp(got, want), name);
	if (strcmp(got, want))
		printf("#   got '%s', want '%s'\n", got, want);
}

static void test_utf8_len(void)
{
	check(at_utf8_len((const unsigned char *)"a") == 1, "utf8: ASCII is 1");
	check(at_utf8_len((const unsigned char *)"\xc3\xa9") == 2, "utf8: e-acute is 2");
	check(at_utf8_len((const unsigned char *)"\xe2\x82\xac") == 3, "utf8: euro is 3");
	check(at_utf8_len((const unsigned char *)"\xf0\x9f\x98\x80") == 4, "utf8: emoji is 4");
	check(at_utf8_len((const unsigned char *)"\xc0\xaf") == 0, "utf8: overlong 2-byte");
	check(at_utf8_len((const unsigned char *)"\xe0\x80\xaf") == 0, "utf8: overlong 3-byte");
	check(at_utf8_len((const unsigned char *)"\xed\xa0\x80") == 0, "utf8: surrogate");
	check(at_utf8_len((const unsigned char *)"\xf4\x90\x80\x80") == 0, "utf8: > U+10FFFF");
	check(at_utf8_len((const unsigned char *)"\xe2\x82") == 0, "utf8: cut at the NUL");
	check(at_utf8_len((const unsigned char *)"\x80") == 0, "utf8: lone continuation");
	check(at_utf8_len((const unsigned char *)"\xff") == 0, "utf8: 0xff");
}

static void test_json(void)
{
	expect(at_esc_json, NULL, "\"\"", "json: NULL is the empty string");
	expect(at_esc_json, "a\"b\\c", "\"a\\\"b\\\\c\"", "json: quote and backslash");
	expect(at_esc_json, "\n\r\t\x01\x1b\x7f", "\"\\n\\r\\t\\u0001\\u001b\\u007f\"",
	       "json: control bytes");
	expect(at_esc_json, "\xff\xfe", "\"\\ufffd\\ufffd\"", "json: bad bytes are U+FFFD");
	expect(at_esc_json, "\xc0\xaf", "\"\\ufffd\\ufffd\"", "json: overlong slash");
	expect(at_esc_json, "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"", "json: surrogate");
	expect(at_esc_json, "x\xe2\x82", "\"x\\ufffd\\ufffd\"", "json: sequence cut at the end");
	expect(at_esc_json, "\xc3\xa9\xf0\x9f\x98\x80", "\"\xc3\xa9\xf0\x9f\x98\x80\"",
	       "json: valid UTF-8 passes");
	expect(at_esc_json,
	       "a\xe2\x80\xa8"
	       "b",
	       "\"a\\u2028b\"", "json: U+2028 escaped");
}

static void test_text(void)
{
	char buf[8];

	expect(text_plain, "plain name", "plain name", "text: printable unchanged");
	expect(text_plain, "\x1b[2J", "\\x1b[2J", "text: ESC shown, not sent");
	expect(text_plain, "a\nb\rc\td\\", "a\\nb\\rc\\td\\\\", "text: line breaks and backslash");
	expect(text_plain, "\x7f\x01", "\\x7f\\x01", "text: DEL and C0");
	expect(text_plain,
	       "\xc2\x9b"
	       "1m",
	       "\\u009b1m", "text: C1 CSI shown");
	expect(text_plain,
	       "\xe2\x80\xae"
	       "abc",
	       "\\u202eabc", "text: bidi override shown");
	expect(text_plain, "\xff\xc3\xa9", "\\xff\xc3\xa9", "text: bad byte, then valid UTF-8");
	expect(text_plain, "say \"hi\"", "say \"hi\"", "text: quotes unquoted");
	expect(text_quoted, "say \"hi\"", "\"say \\\"hi\\\"\"", "text: quotes when quoted");
	expect(text_plain, NULL, "", "text: NULL");
	check(!strcmp(at_esc_text_buf(buf, sizeof(buf), "abcdefghij"), "abcdefg"),
	      "text buf: cut to fit");
	check(!strcmp(at_esc_text_buf(buf, sizeof(buf), "abcde\x1b"), "abcde"),
	      "text buf: an escape that does not fit is left out whole");
	check(!strcmp(at_esc_text_buf(buf, sizeof(buf), "abcdef\xc3\xa9"), "abcdef"),
	      "text buf: never half a character");
	check(!strcmp(at_esc_text_buf(buf, 1, "abc"), ""), "text buf: size 1");
}

static void test_csv(void)
{
	expect(at_esc_csv, "main", "main", "csv: plain field unquoted");
	expect(at_esc_csv, "a,b", "\"a,b\"", "csv: comma quoted");
	expect(at_esc_csv, "a\"b", "\"a\"\"b\"", "csv: quote doubled");
	expect(at_esc_csv, "a\r\nb", "\"a\r\nb\"", "csv: line break quoted");
	expect(at_esc_csv, "=cmd|' /C calc'!A0", "\"'=cmd|' /C calc'!A0\"", "csv: = defused");
	expect(at_esc_csv, "+1", "\"'+1\"", "csv: + defused");
	expect(at_esc_csv, "-1", "\"'-1\"", "csv: - defused");
	expect(at_esc_csv, "@SUM(A1)", "\"'@SUM(A1)\"", "csv: @ defused");
	expect(at_esc_csv, "\tx", "\"'\tx\"", "csv: TAB defused");
	expect(at_esc_csv, "a=b", "a=b", "csv: = inside is harmless");
	expect(at_esc_csv, "", "", "csv: empty");
	expect(at_esc_csv,
	       "a\xff"
	       "b",
	       "a\xef\xbf\xbd"
	       "b",
	       "csv: bad UTF-8 replaced");
}

static void test_om(void)
{
	expect(at_esc_om_label, "a\\b\"c\nd", "\"a\\\\b\\\"c\\nd\"",
	       "openmetrics: the three escapes");
	expect(at_esc_om_label,
	       "\xff"
	       "x\x01",
	       "\"\xef\xbf\xbdx\xef\xbf\xbd\"",
	       "openmetrics: bad UTF-8 and controls become U+FFFD");
	expect(at_esc_om_label, "\xc3\xa9", "\"\xc3\xa9\"", "openmetrics: UTF-8 passes");
}

static void test_xml(void)
{
	expect(at_esc_xml, "<a href='x'>&\"</a>",
	       "&lt;a href=&apos;x&apos;&gt;&amp;&quot;&lt;/a&gt;", "xml: the five entities");
	expect(at_esc_xml, "]]>", "]]&gt;", "xml: CDATA end harmless");
	expect(at_esc_xml, "a\tb\nc\r", "a&#x9;b&#xa;c&#xd;", "xml: whitespace as references");
	expect(at_esc_xml, "\x01\x1b", "\xef\xbf\xbd\xef\xbf\xbd", "xml: forbidden C0 replaced");
	expect(at_esc_xml, "\xef\xbf\xbe", "\xef\xbf\xbd", "xml: U+FFFE replaced");
	expect(at_esc_xml, "\xfe", "\xef\xbf\xbd", "xml: bad UTF-8 replaced");
}

static void test_md(void)
{
	expect(at_esc_md, "|a|b|", "\\|a\\|b\\|", "md: pipes cannot end the cell");
	expect(at_esc_md, "<script>", "\\<script\\>", "md: no HTML");
	expect(at_esc_md, "[x](http://e)", "\\[x\\]\\(http\\:\\/\\/e\\)", "md: no link");
	expect(at_esc_md, "*a*_b_`c`", "\\*a\\*\\_b\\_\\`c\\`", "md: no emphasis or code");
	expect(at_esc_md, "a\nb\\", "a b\\\\", "md: newline is a space, backslash escaped");
	expect(at_esc_md, "\xff", "\xef\xbf\xbd", "md: bad UTF-8 replaced");
	expect(at_esc_md, "main", "main", "md: plain unchanged");
	expect(at_esc_md,
	       "a\xe2\x80\xae"
	       "b\xc2\x9b",
	       "a\xef\xbf\xbd"
	       "b\xef\xbf\xbd",
	       "md: bidi override and C1 replaced");
}

int main(void)
{
	test_utf8_len();
	test_json();
	test_text();
	test_csv();
	test_om();
	test_xml();
	test_md();
	printf("# %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
