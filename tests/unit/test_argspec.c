// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests: the --args SPEC parser. */
#include <string.h>

#include "argspec.h"
#include "check.h"

static char err[256];

static void parses(const char *text, const char *want)
{
	struct at_argspec a;
	char buf[256] = "", name[400];

	if (!at_argspec_parse(text, &a, err, sizeof(err)))
		at_argspec_format(&a, buf, sizeof(buf));
	snprintf(name, sizeof(name), "\"%s\" parses as %s", text, want);
	check(!strcmp(buf, want), name);
	if (strcmp(buf, want))
		printf("#   got \"%s\" (%s)\n", buf, err);
	at_argspec_free(&a);
}

static void bad(const char *text, const char *msg)
{
	struct at_argspec a;
	char name[400];
	int rc = at_argspec_parse(text, &a, err, sizeof(err));

	snprintf(name, sizeof(name), "\"%s\" fails: %s", text, msg);
	check(rc == -1 && !a.name && !strcmp(err, msg), name);
	if (rc == 0 || strcmp(err, msg))
		printf("#   got rc %d: %s\n", rc, err);
	at_argspec_free(&a);
}

int main(void)
{
	struct at_argspec a, specs[2];
	struct at_argtype t;

	parses("parse(str,int,ptr)", "parse(str:64,int,ptr)");
	parses(" parse ( str:16 , i32 , ... ) ", "parse(str:16,i32,...)");
	parses("f()", "f()");
	parses("f(...)", "f(...)");
	parses("f(char,bool,u8,i16,u16,u32,u64)", "");
	parses("f(char,bool,u8,i16,u16,u32)", "f(char,bool,u8,i16,u16,u32)");
	parses("f(i64,long,uint,ulong,u64,i8)", "f(int,int,uint,uint,uint,i8)");
	parses("f(str):int", "f(str:64):int");
	parses("f(str) : void", "f(str:64):void");
	parses("lookup_*(str:256)", "lookup_*(str:256)");
	parses("_ZN3foo3barEv(ptr)", "_ZN3foo3barEv(ptr)");

	bad("", "column 1: expected a function name, got the end (example: 'parse(str,int)')");
	bad("(int)", "column 1: expected a function name, got '(' (example: 'parse(str,int)')");
	bad("parse", "column 6: expected '(' after the function name, got the end");
	bad("parse(strng,int)", "column 7: unknown type 'strng' ("
				"str, int, uint, ptr, char, "
				"bool, i8..i64, u8..u64)");
	bad("parse(str,)", "column 11: expected a type (str, int, uint, ptr, char, bool, i8..i64, "
			   "u8..u64, ...), got ')'");
	bad("parse(str:0)", "column 11: string length must be 1..256");
	bad("parse(str:257)", "column 11: string length must be 1..256");
	bad("parse(str:99999999999999999999)", "column 11: string length must be 1..256");
	bad("parse(str:)", "column 11: expected a length after 'str:', got ')'");
	bad("parse(int int)", "column 11: expected ',' or ')', got 'int'");
	bad("parse(int", "column 10: expected ',' or ')', got the end");
	bad("parse(...,int)", "column 10: expected ')' after '...', got ','");
	bad("f(int,int,int,int,int,int,int)",
	    "column 27: more than 6 arguments (only the register arguments can be read)");
	bad("f(int):str", "column 8: a return value cannot be str (use ptr)");
	bad("f(int) x", "column 8: unexpected 'x' after the argument list");
	bad("f(void)", "column 3: unknown type 'void' (str, int, uint, ptr, char, bool, i8..i64, "
		       "u8..u64)");

	at_argspec_parse("parse(str:8,i32,...)", &a, err, sizeof(err));
	check(at_argspec_nregs(&a) == 6 && a.arg[0].type == AT_ARG_STR && a.arg[0].strmax == 8 &&
		  at_argspec_type(&a, 1).type == AT_ARG_INT && at_argspec_type(&a, 1).size == 4 &&
		  at_argspec_type(&a, 4).type == AT_ARG_RAW,
	      "types per register; '...' makes the rest raw");
	t = at_argspec_type(&a, 1);
	check(at_argtype_value(&t, 0xdeadbeefffffffffULL) == (uint64_t)-1 &&
		  at_argtype_value(&t, 0xffffffff00000007ULL) == 7,
	      "i32 keeps the low 32 bits, sign-extended");
	at_argspec_free(&a);
	at_argspec_parse("f(u8,bool)", &a, err, sizeof(err));
	t = at_argspec_type(&a, 0);
	check(at_argspec_nregs(&a) == 2 && at_argtype_value(&t, 0x1ff) == 0xff && a.arg[1].is_bool,
	      "u8 keeps the low byte; declared count without '...'");
	check(at_argspec_nregs(NULL) == 6 && at_argspec_type(NULL, 0).type == AT_ARG_RAW,
	      "undeclared: six raw registers");
	at_argspec_free(&a);
	at_argspec_parse("lookup_*(str)", &specs[0], err, sizeof(err));
	at_argspec_parse("*(int)", &specs[1], err, sizeof(err));
	check(at_argspec_find(specs, 2, "lookup_user") == &specs[0] &&
		  at_argspec_find(specs, 2, "other") == &specs[1] &&
		  at_argspec_find(specs, 1, "other") == NULL,
	      "the first matching glob wins");
	at_argspec_free(&specs[0]);
	at_argspec_free(&specs[1]);
	check(strstr(at_argspec_help(), "str[:N]") != NULL, "help text names the types");
	printf("# %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
