// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The socket yardsticks' sampling: /proc/PID/io, rates, shifts and what is imputed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "yardstick.h"

static const char proc_io[] = "rchar: 232581331\n"
			      "wchar: 39477835\n"
			      "syscr: 2835902\n"
			      "syscw: 2719762\n"
			      "read_bytes: 411971584\n"
			      "write_bytes: 37744640\n"
			      "cancelled_write_bytes: 6303744\n";

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1, fabs(b));
}

static void test_parse(void)
{
	struct at_io io;

	check(at_io_parse(proc_io, &io) && io.reads == 2835902 && io.writes == 2719762 &&
		  io.read_bytes == 232581331 && io.write_bytes == 39477835,
	      "parse: /proc/PID/io's four counters");
	check(!at_io_parse("rchar: 1\nwchar: 2\nsyscr: 3\n", &io), "parse: syscw missing");
	check(!at_io_parse("rchar: 1\nwchar: 2\nsyscr: x\nsyscw: 4\n", &io),
	      "parse: a counter that is not a number");
	check(!at_io_parse("rchar: 1\nwchar: 2\nsyscr: 3x\nsyscw: 4\n", &io),
	      "parse: trailing garbage after a counter");
	check(!at_io_parse("rchar: 1\nwchar: 2\nxsyscr: 3\nsyscw: 4\n", &io),
	      "parse: a key inside another word does not count");
	check(!at_io_parse("rchar: 1\nwchar: 2\nsyscr: 99999999999999999999999\nsyscw: 4\n", &io),
	      "parse: a counter past 64 bits");
	check(!at_io_parse("", &io), "parse: empty");
}

static void test_slots(void)
{
	bool reads = true, writes = true;

	for (uint32_t k = 0; k < AT_READ_CLASSES; k++)
		reads = reads && !at_yard_write_slot(k) && at_yard_imputed_slot(k);
	for (uint32_t k = 0; k < AT_READ_CLASSES; k++)
		writes = writes && at_yard_write_slot(AT_WR_CLASS(k));
	check(reads, "slots: the read classes follow the read calls");
	check(writes && at_yard_write_slot(AT_BY_TIME),
	      "slots: the writes, and per read class, follow the write calls");
	check(at_yard_write_slot(AT_TURNS) && !at_yard_write_slot(AT_WAKES),
	      "slots: turns' ends are writes, wakeups reads");
	check(!at_yard_imputed_slot(AT_RP_TURNS) && !at_yard_imputed_slot(AT_RP_WRITES) &&
		  at_yard_imputed_slot(AT_WAKES),
	      "slots: the read path's are counted in windows only");
}

/* A sample of redis's SET phase: 450 reads of 45 bytes (10 of them hang-ups), 450 replies of 5. */
static void set_sample(uint64_t *counted, struct at_io *io)
{
	memset(counted, 0, AT_REFCALLS * sizeof(*counted));
	counted[3] = 440;
	counted[0] = 10;
	counted[AT_BY_TIME] = 450;
	counted[AT_WR_CLASS(3)] = 450;
	counted[AT_TURNS] = 45;
	counted[AT_WAKES] = 46;
	counted[AT_RP_TURNS] = 4;
	*io = (struct at_io){450, 450, 440 * 45, 450 * 5};
}

static void test_rates(void)
{
	uint64_t counted[AT_REFCALLS];
	struct at_io io;
	struct at_yard_rates r;

	set_sample(counted, &io);
	check(at_yard_rates_of(counted, &io, &r), "rates: a sample of 900 calls stands");
	check(near(r.per_call[3], 440.0 / 450) && near(r.per_call[0], 10.0 / 450) &&
		  near(r.per_call[AT_WAKES], 46.0 / 450),
	      "rates: the read slots per read call");
	check(near(r.per_call[AT_BY_TIME], 1) && near(r.per_call[AT_WR_CLASS(3)], 1) &&
		  near(r.per_call[AT_TURNS], 0.1),
	      "rates: the write slots per write call");
	check(r.per_call[AT_RP_TURNS] == 0, "rates: the read path's are not rates");
	check(near(r.read_size, 44) && near(r.write_size, 5) && near(r.writes_per_read, 1),
	      "rates: the calls' mean sizes and writes per read");
	io = (struct at_io){10, 9, 450, 45};
	check(!at_yard_rates_of(counted, &io, &r), "rates: 19 calls are too few");
	/* Reads only: the write slots get no rate, and the writes will call for a sample. */
	memset(counted, 0, sizeof(counted));
	counted[5] = 300;
	io = (struct at_io){300, 0, 300 * 36, 0};
	check(at_yard_rates_of(counted, &io, &r) && r.reads && !r.writes &&
		  near(r.per_call[5], 1) && r.per_call[AT_BY_TIME] == 0,
	      "rates: a sample without writes");
}

static void test_shifts(void)
{
	uint64_t counted[AT_REFCALLS];
	struct at_io io;
	struct at_yard_rates r;

	set_sample(counted, &io);
	at_yard_rates_of(counted, &io, &r);
	io = (struct at_io){460, 460, 460 * 44, 460 * 5};
	check(!at_yard_shifted(&r, &io), "shift: the same calls");
	/* redis-benchmark's GETs: 36-byte reads, 9-byte replies. */
	io = (struct at_io){460, 460, 460 * 36, 460 * 9};
	check(at_yard_shifted(&r, &io), "shift: SETs to GETs");
	/* A 350-byte read of /proc/self/stat among 460 requests. */
	io = (struct at_io){461, 460, 460 * 44 + 350, 460 * 5};
	check(!at_yard_shifted(&r, &io), "shift: one file read among the requests is none");
	/* A poll's writes per read wander: a turn's reads and writes fall in different polls. */
	io = (struct at_io){400, 452, 400 * 44, 452 * 5};
	check(!at_yard_shifted(&r, &io), "shift: 1.13 writes a read against 1 is none");
	io = (struct at_io){400, 600, 400 * 44, 600 * 5};
	check(at_yard_shifted(&r, &io), "shift: 1.5 writes a read against 1");
	io = (struct at_io){20, 10, 20 * 36, 10 * 9};
	check(!at_yard_shifted(&r, &io), "shift: 30 calls are too few to tell");
	memset(counted, 0, sizeof(counted));
	counted[5] = 300;
	io = (struct at_io){300, 0, 300 * 36, 0};
	at_yard_rates_of(counted, &io, &r);
	io = (struct at_io){300, 50, 300 * 36, 50 * 9};
	check(at_yard_shifted(&r, &io), "shift: writes where the sample saw none");
}

static void test_impute(void)
{
	uint64_t counted[AT_REFCALLS], part[AT_REFCALLS] = {0};
	double imputed[AT_REFCALLS] = {0};
	struct at_io io;
	struct at_yard_rates r;

	set_sample(counted, &io);
	at_yard_rates_of(counted, &io, &r);
	/* Out for 9000 reads and as many writes. */
	io = (struct at_io){9000, 9000, 9000 * 44, 9000 * 5};
	at_yard_impute(&r, &io, NULL, imputed);
	check(near(imputed[3], 8800) && near(imputed[0], 200) && near(imputed[AT_BY_TIME], 9000) &&
		  near(imputed[AT_TURNS], 900) && near(imputed[AT_WAKES], 920),
	      "impute: out, every call at the sample's rates");
	check(imputed[AT_RP_TURNS] == 0 && imputed[AT_RP_WRITES] == 0,
	      "impute: nothing on the read path");
	/* Going in: 900 calls, of which the programs counted those after they were in. */
	memset(imputed, 0, sizeof(imputed));
	io = (struct at_io){900, 900, 900 * 44, 900 * 5};
	part[3] = 500;
	part[AT_BY_TIME] = 950; /* more than the rate says: nothing to add */
	at_yard_impute(&r, &io, part, imputed);
	check(near(imputed[3], 880 - 500) && imputed[AT_BY_TIME] == 0 && near(imputed[0], 20),
	      "impute: going in, only what the programs did not count");
}

int main(void)
{
	test_parse();
	test_slots();
	test_rates();
	test_shifts();
	test_impute();
	printf("# %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
