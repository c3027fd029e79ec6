/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Escaping for every output format. Symbol names, paths, USDT keys and
 * captured arguments come from the traced program: they are data, and no
 * byte of them may end a string, a field, a cell or a line, or reach a
 * terminal as a control sequence.
 */
#ifndef AT_ESCAPE_H
#define AT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at p (1-4; 1 for ASCII), or 0. */
int at_utf8_len(const unsigned char *p);

/* A JSON string literal, quotes included; bad UTF-8 becomes U+FFFD. */
void at_esc_json(FILE *f, const char *s);
/*
 * Terminal text: printable UTF-8 as it is; control bytes (C0, DEL, C1),
 * bad UTF-8 and backslash as \n, \t, \r, \\ or \xNN. With quoted, also \"
 * and the whole string between double quotes.
 */
void at_esc_text(FILE *f, const char *s, int quoted);
/* The same (unquoted) into buf, cut at a character boundary; returns buf. */
const char *at_esc_text_buf(char *buf, size_t size, const char *s);
/*
 * One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF;
 * a field starting with = + - @ TAB or CR gets a leading ' so that a
 * spreadsheet shows it instead of evaluating it; bad UTF-8 becomes U+FFFD.
 */
void at_esc_csv(FILE *f, const char *s);
/* An OpenMetrics label value, quotes included; bad UTF-8 becomes U+FFFD. */
void at_esc_om_label(FILE *f, const char *s);
/*
 * XML 1.0 text or attribute value: & < > " ' as entities, TAB CR LF as
 * references; characters XML forbids even escaped, DEL and bad UTF-8 become
 * U+FFFD.
 */
void at_esc_xml(FILE *f, const char *s);
/*
 * A Markdown (GFM) table cell: ASCII punctuation backslash-escaped, so no
 * byte can start a tag, link, emphasis or code span, or end the cell; line
 * breaks and control bytes become spaces; bad UTF-8, C1 controls and bidi
 * overrides become U+FFFD.
 */
void at_esc_md(FILE *f, const char *s);

#endif
