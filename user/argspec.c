// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --args SPEC: typed argument declarations for detail events. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argspec.h"
#include "util.h"

static const struct {
	const char *name;
	uint32_t type, size;
	bool is_char, is_bool;
} types[] = {
    {"str", AT_ARG_STR, 8, false, false},  {"int", AT_ARG_INT, 8, false, false},
    {"i64", AT_ARG_INT, 8, false, false},  {"long", AT_ARG_INT, 8, false, false},
    {"i32", AT_ARG_INT, 4, false, false},  {"i16", AT_ARG_INT, 2, false, false},
    {"i8", AT_ARG_INT, 1, false, false},   {"uint", AT_ARG_UINT, 8, false, false},
    {"u64", AT_ARG_UINT, 8, false, false}, {"ulong", AT_ARG_UINT, 8, false, false},
    {"u32", AT_ARG_UINT, 4, false, false}, {"u16", AT_ARG_UINT, 2, false, false},
    {"u8", AT_ARG_UINT, 1, false, false},  {"ptr", AT_ARG_PTR, 8, false, false},
    {"char", AT_ARG_INT, 1, true, false},  {"bool", AT_ARG_UINT, 1, false, true},
};

#define TYPE_LIST "str, int, uint, ptr, char, bool, i8..i64, u8..u64"

struct cur {
	const char *s;
	size_t i;
	char *err;
	size_t errlen;
};

static int fail(struct cur *c, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct cur *c, size_t pos, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "column %zu: %s", pos + 1, msg);
	return -1;
}

static void blanks(struct cur *c)
{
	while (c->s[c->i] == ' ' || c->s[c->i] == '\t')
		c->i++;
}

/* What is at pos, for messages: 'word' (printable, short) or "the end". */
static void desc(const struct cur *c, size_t pos, char *buf, size_t len)
{
	size_t n = 0, o = 0;

	if (!c->s[pos]) {
		snprintf(buf, len, "the end");
		return;
	}
	while (c->s[pos + n] && (isalnum((unsigned char)c->s[pos + n]) || c->s[pos + n] == '_'))
		n++;
	if (!n)
		n = 1;
	if (n > 20)
		n = 20;
	buf[o++] = '\'';
	for (size_t i = 0; i < n && o + 6 < len; i++) {
		unsigned char ch = (unsigned char)c->s[pos + i];

		if (isprint(ch) && ch != '\'')
			buf[o++] = (char)ch;
		else
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", ch);
	}
	snprintf(buf + o, len - o, "'");
}

static bool name_char(char ch)
{
	return ch && (isalnum((unsigned char)ch) || strchr("_.$@*?[]!-", ch));
}

/* type := name [':' N] ; ret says whether str and void are allowed. */
static int parse_type(struct cur *c, struct at_argtype *t, bool ret, bool *is_void)
{
	size_t start, n;
	char d[48];

	blanks(c);
	start = c->i;
	while (isalnum((unsigned char)c->s[c->i]))
		c->i++;
	n = c->i - start;
	*is_void = false;
	if (ret && n == 4 && !memcmp(c->s + start, "void", 4)) {
		*is_void = true;
		memset(t, 0, sizeof(*t));
		t->type = AT_ARG_RAW;
		t->size = 8;
		return 0;
	}
	for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++) {
		if (strlen(types[k].name) != n || memcmp(c->s + start, types[k].name, n))
			continue;
		memset(t, 0, sizeof(*t));
		t->type = types[k].type;
		t->size = types[k].size;
		t->is_char = types[k].is_char;
		t->is_bool = types[k].is_bool;
		if (t->type != AT_ARG_STR)
			return 0;
		if (ret)
			return fail(c, start, "a return value cannot be str (use ptr)");
		t->strmax = AT_ARGSPEC_STR_DEFAULT;
		blanks(c);
		if (c->s[c->i] == ':') {
			unsigned long v = 0;
			size_t p;

			c->i++;
			blanks(c);
			p = c->i;
			while (isdigit((unsigned char)c->s[c->i]) && v <= AT_ARGSPEC_STR_MAX)
				v = v * 10 + (unsigned long)(c->s[c->i++] - '0');
			if (p == c->i) {
				desc(c, p, d, sizeof(d));
				return fail(c, p, "expected a length after 'str:', got %s", d);
			}
			if (v < 1 || v > AT_ARGSPEC_STR_MAX || isdigit((unsigned char)c->s[c->i]))
				return fail(c, p, "string length must be 1..%d",
					    AT_ARGSPEC_STR_MAX);
			t->strmax = (uint32_t)v;
		}
		return 0;
	}
	desc(c, start, d, sizeof(d));
	if (!n)
		return fail(c, start, "expected a type (%s%s), got %s", TYPE_LIST,
			    ret ? ", void" : ", ...", d);
	return fail(c, start, "unknown type %s (%s%s)", d, TYPE_LIST, ret ? ", void" : "");
}

int at_argspec_parse(const char *text, struct at_argspec *out, char *err, size_t errlen)
{
	struct cur c = {text, 0, err, errlen};
	size_t start;
	char d[48];
	bool is_void;

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = 0;
	blanks(&c);
	start = c.i;
	while (name_char(text[c.i]))
		c.i++;
	if (c.i == start) {
		desc(&c, start, d, sizeof(d));
		return fail(&c, start,
			    "expected a function name, got %s (example: 'parse(str,int)')", d);
	}
	if (c.i - start > 255)
		return fail(&c, start, "function name longer than 255 bytes");
	out->name = strndup(text + start, c.i - start);
	if (!out->name)
		return fail(&c, start, "out of memory");
	blanks(&c);
	if (text[c.i] != '(') {
		desc(&c, c.i, d, sizeof(d));
		at_argspec_free(out);
		return fail(&c, c.i, "expected '(' after the function name, got %s", d);
	}
	c.i++;
	blanks(&c);
	if (text[c.i] != ')') {
		for (;;) {
			blanks(&c);
			if (!strncmp(text + c.i, "...", 3)) {
				c.i += 3;
				out->rest_raw = true;
				blanks(&c);
				if (text[c.i] != ')') {
					desc(&c, c.i, d, sizeof(d));
					at_argspec_free(out);
					return fail(&c, c.i, "expected ')' after '...', got %s", d);
				}
				break;
			}
			if (out->nargs == AT_MAX_ARGS) {
				at_argspec_free(out);
				return fail(&c, c.i,
					    "more than %d arguments (only the register arguments "
					    "can be read)",
					    AT_MAX_ARGS);
			}
			if (parse_type(&c, &out->arg[out->nargs], false, &is_void)) {
				at_argspec_free(out);
				return -1;
			}
			out->nargs++;
			blanks(&c);
			if (text[c.i] == ',') {
				c.i++;
				continue;
			}
			if (text[c.i] == ')')
				break;
			desc(&c, c.i, d, sizeof(d));
			at_argspec_free(out);
			return fail(&c, c.i, "expected ',' or ')', got %s", d);
		}
	}
	c.i++; /* ')' */
	blanks(&c);
	if (text[c.i] == ':') {
		c.i++;
		if (parse_type(&c, &out->ret, true, &is_void)) {
			at_argspec_free(out);
			return -1;
		}
		out->has_ret = true;
		out->ret_void = is_void;
		blanks(&c);
	}
	if (text[c.i]) {
		desc(&c, c.i, d, sizeof(d));
		at_argspec_free(out);
		return fail(&c, c.i, "unexpected %s after the argument list", d);
	}
	return 0;
}

void at_argspec_free(struct at_argspec *a)
{
	free(a->name);
	a->name = NULL;
}

const struct at_argspec *at_argspec_find(const struct at_argspec *specs, size_t n, const char *fn)
{
	for (size_t i = 0; i < n; i++)
		if (specs[i].name && at_glob_match(specs[i].name, fn))
			return &specs[i];
	return NULL;
}

uint32_t at_argspec_nregs(const struct at_argspec *a)
{
	if (!a || a->rest_raw)
		return AT_MAX_ARGS;
	return a->nargs;
}

struct at_argtype at_argspec_type(const struct at_argspec *a, uint32_t i)
{
	struct at_argtype t = {.type = AT_ARG_RAW, .size = 8};

	if (a && i < a->nargs)
		return a->arg[i];
	return t;
}

uint64_t at_argtype_value(const struct at_argtype *t, uint64_t reg)
{
	uint32_t bits = t->size * 8;

	if ((t->type != AT_ARG_INT && t->type != AT_ARG_UINT) || bits >= 64 || !bits)
		return reg;
	reg &= (1ULL << bits) - 1;
	if (t->type == AT_ARG_INT && (reg >> (bits - 1)) & 1)
		reg |= ~((1ULL << bits) - 1);
	return reg;
}

static const char *type_name(const struct at_argtype *t)
{
	for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++)
		if (types[k].type == t->type && types[k].size == t->size &&
		    types[k].is_char == t->is_char && types[k].is_bool == t->is_bool)
			return types[k].name;
	return "raw";
}

char *at_argspec_format(const struct at_argspec *a, char *buf, size_t len)
{
	size_t o = 0;

#define PUT(...)                                                                                   \
	do {                                                                                       \
		if (o < len)                                                                       \
			o += (size_t)snprintf(buf + o, len - o, __VA_ARGS__);                      \
	} while (0)
	if (len)
		buf[0] = 0;
	PUT("%s(", a->name ? a->name : "?");
	for (uint32_t i = 0; i < a->nargs; i++) {
		PUT("%s%s", i ? "," : "", type_name(&a->arg[i]));
		if (a->arg[i].type == AT_ARG_STR)
			PUT(":%u", a->arg[i].strmax);
	}
	if (a->rest_raw)
		PUT("%s...", a->nargs ? "," : "");
	PUT(")");
	if (a->has_ret)
		PUT(":%s", a->ret_void ? "void" : type_name(&a->ret));
#undef PUT
	return buf;
}

const char *at_argspec_help(void)
{
	return "  --args 'NAME(TYPE,...)[:RTYPE]' declares how to decode NAME's arguments\n"
	       "  (NAME may be a glob; the first match wins). TYPE: str[:N] (string, N bytes,\n"
	       "  default 64, at most 256, longer ones marked truncated), int i64 long i32 i16\n"
	       "  i8, uint u64 ulong u32 u16 u8, ptr, char, bool; '...' captures the other\n"
	       "  registers raw. At most 6 arguments. RTYPE: a TYPE but str, or void.\n"
	       "  Undeclared arguments are six raw 64-bit registers.\n";
}
