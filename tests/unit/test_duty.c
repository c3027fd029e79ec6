// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The duty cycle's pure rules: how long a closed window may linger, and when one comes early. */
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "duty.h"

int main(void)
{
	/* Nothing read yet: the usual run-on. */
	check(at_duty_linger_lengths(0, 0, false) == 3, "linger: no interval yet, 3 lengths");
	/* Turn ends seen in half the intervals or more: the usual run-on. */
	check(at_duty_linger_lengths(8, 4, false) == 3, "linger: turns seen in 4 of 8, 3 lengths");
	check(at_duty_linger_lengths(9, 9, false) == 3, "linger: turns seen in all, 3 lengths");
	/* Scarce: a redis read path saw 1 turn end in 9 intervals; 3 functions went 36-54 % low. */
	check(at_duty_linger_lengths(9, 1, false) == 6, "linger: turns seen in 1 of 9, 6 lengths");
	check(at_duty_linger_lengths(1, 0, false) == 6, "linger: no turn in the first, 6 lengths");
	/* None seen in 2 intervals or more: long enough for a turn of 50 requests. */
	check(at_duty_linger_lengths(2, 0, false) == 15, "linger: no turn in 2, 15 lengths");
	check(at_duty_linger_lengths(10, 0, true) == 18,
	      "linger: no turn in 10, a tail, 15 + 3 lengths");
	check(at_duty_linger_lengths(9, 4, false) == 6, "linger: turns seen in 4 of 9, 6 lengths");
	/*
	 * A turn in its tail gets 3 lengths past either cap: with a shared cap of
	 * 6, turns that ended late lost their tails, and evictClients (once a
	 * beforeSleep, after the replies) came out 36 % low.
	 */
	check(at_duty_linger_lengths(8, 4, true) == 6, "linger: a tail, 3 + 3 lengths");
	check(at_duty_linger_lengths(9, 1, true) == 9,
	      "linger: a tail while scarce, 6 + 3 lengths");
	/* No overflow at the extremes. */
	check(at_duty_linger_lengths(UINT32_MAX, UINT32_MAX, false) == 3,
	      "linger: every interval turned, at the counters' limit");
	check(at_duty_linger_lengths(UINT32_MAX, 0, false) == 15,
	      "linger: none turned, at the counters' limit");
	/* A lull: no read, no end. */
	check(at_duty_turns_too_few(0, 0, 814), "turns: a lull is too few");
	check(at_duty_turns_too_few(0, 0, 0), "turns: nothing read, nothing expected, too few");
	/* Reads, no end: one turn that outlasted the window. */
	check(at_duty_turns_too_few(46, 0, 1135), "turns: no end is too few");
	/* m7's: 53 reads (50 hang-ups) and 1 end where 590 reads were due. */
	check(at_duty_turns_too_few(53, 1, 590), "turns: clients leaving are too few");
	/* Turns slowed by the probes, reads kept: enough. */
	check(!at_duty_turns_too_few(531, 19, 640), "turns: 19 ends, 531 reads of 640, enough");
	check(!at_duty_turns_too_few(144, 5, 440), "turns: 5 ends, 144 reads of 440, enough");
	check(!at_duty_turns_too_few(25, 1, 100), "turns: a quarter of the reads due, enough");
	check(at_duty_turns_too_few(24, 1, 100), "turns: under a quarter, too few");
	/* Nothing due (no interval with reads yet): any end will do. */
	check(!at_duty_turns_too_few(3, 1, 0), "turns: nothing due, an end, enough");
	/* Slots of 500 ms: a turn window gives its slot to a shift once in 4. */
	check(at_duty_swap_ok(false, 0, 3000000000ULL, 500000000ULL), "swap: the first, yes");
	check(!at_duty_swap_ok(false, 2000000000ULL, 3000000000ULL, 500000000ULL),
	      "swap: 2 slots after the last, no");
	check(at_duty_swap_ok(false, 1000000000ULL, 3000000000ULL, 500000000ULL),
	      "swap: 4 slots after the last, yes");
	/* o20's: a retry opened in a lull came due in a run of SETs 2 slots after a swap. */
	check(at_duty_swap_ok(true, 2000000000ULL, 3000000000ULL, 500000000ULL),
	      "swap: a retry, whenever");
	/* p7's: a look found a run of GETs 11 ms into the slot, the turn window opened at 102. */
	check(at_duty_turn_waits_look(1, false, 0, 3000000000ULL, 500000000ULL),
	      "wait: a look found a shift, the turn window waits for the next");
	/* 5 in a row before the slot began: the window opens early only at a look in it. */
	check(at_duty_turn_waits_look(5, false, 0, 3000000000ULL, 500000000ULL),
	      "wait: a shift found before the slot, it waits");
	check(!at_duty_turn_waits_look(0, false, 0, 3000000000ULL, 500000000ULL),
	      "wait: no shift found, it opens");
	check(!at_duty_turn_waits_look(1, false, 2000000000ULL, 3000000000ULL, 500000000ULL),
	      "wait: it could not give its slot away, it opens");
	check(at_duty_turn_waits_look(1, true, 2000000000ULL, 3000000000ULL, 500000000ULL),
	      "wait: a retry can, it waits");
	{
		struct at_reads last[AT_READ_CLASSES] = {0}, cur[AT_READ_CLASSES] = {0};

		/* redis-benchmark's SETs (class 13) seen in the windows, then its GETs (class 4).
		 */
		last[13] = (struct at_reads){.all = 100000, .on = 400};
		cur[13] = last[13];
		cur[4] = (struct at_reads){.all = 11000};
		check(at_duty_shifted(cur, last, NULL, AT_READ_CLASSES, 0),
		      "shift: GETs no window saw");
		/* The GETs seen by 3 window reads: not new any more. */
		cur[4].on = 3;
		check(!at_duty_shifted(cur, last, NULL, AT_READ_CLASSES, 0),
		      "shift: GETs seen 3 times");
		cur[4].on = 2;
		/* A quarter of the reads since the last look, at least. */
		cur[13].all = last[13].all + 3 * 11000;
		check(at_duty_shifted(cur, last, NULL, AT_READ_CLASSES, 0),
		      "shift: a quarter unseen");
		cur[13].all++;
		check(!at_duty_shifted(cur, last, NULL, AT_READ_CLASSES, 0),
		      "shift: under a quarter unseen");
		/* Too few reads to matter: a connection's first reads. */
		cur[13].all = last[13].all;
		cur[4].all = AT_DUTY_SHIFT_MIN_READS - 1;
		check(!at_duty_shifted(cur, last, NULL, AT_READ_CLASSES, 0),
		      "shift: 29 new reads, too few");
		cur[4].all = AT_DUTY_SHIFT_MIN_READS;
		check(at_duty_shifted(cur, last, NULL, AT_READ_CLASSES, 0), "shift: 30 new reads");
		/* A burst of connections or hang-ups is not a new kind of request. */
		cur[4].all = 0;
		cur[AT_CLASS_FIRST].all = 1000;
		cur[AT_CLASS_ACCEPT].all = 1000;
		cur[AT_CLASS_EOF].all = 1000;
		check(!at_duty_shifted(cur, last, NULL, AT_READ_CLASSES, 0),
		      "shift: connections come and go");
		/* GETs seen before the latest move, none since: new to the moved functions. */
		{
			uint64_t from[AT_READ_CLASSES] = {0};

			cur[AT_CLASS_FIRST].all = cur[AT_CLASS_ACCEPT].all = cur[AT_CLASS_EOF].all =
			    0;
			cur[4] = (struct at_reads){.all = 11000, .on = 401};
			from[4] = 400;
			check(at_duty_shifted(cur, last, from, AT_READ_CLASSES, 0),
			      "shift: GETs seen only before the move");
			cur[4].on = 403;
			check(!at_duty_shifted(cur, last, from, AT_READ_CLASSES, 0),
			      "shift: GETs seen 3 times since the move");
		}
		/* In a lull: fewer reads than min_all, half what the latest interval's rate makes.
		 */
		cur[4].on = 0;
		check(!at_duty_shifted(cur, last, NULL, AT_READ_CLASSES, 11001),
		      "shift: 11000 reads where 22002 were due");
		check(at_duty_shifted(cur, last, NULL, AT_READ_CLASSES, 11000),
		      "shift: 11000 reads where 22000 were due");
		/* Nothing read since the last look, or a counter behind it. */
		check(!at_duty_shifted(last, last, NULL, AT_READ_CLASSES, 0),
		      "shift: nothing read");
		cur[4] = (struct at_reads){0};
		last[4].all = 500;
		check(!at_duty_shifted(cur, last, NULL, AT_READ_CLASSES, 0),
		      "shift: a counter behind");
	}
	/* An early window that saw too few reads of the sizes it opened for. */
	{
		struct at_reads open[AT_READ_CLASSES] = {{0}}, now[AT_READ_CLASSES] = {{0}};
		uint32_t gets = 1u << 4, sets = 1u << 13;

		open[4].on = now[4].on = 10;
		now[13].on = 500;
		check(at_duty_early_missed(open, now, gets), "early: GETs opened it, it saw SETs");
		now[4].on = 12;
		check(at_duty_early_missed(open, now, gets), "early: 2 GETs are too few");
		now[4].on = 13;
		check(!at_duty_early_missed(open, now, gets), "early: 3 GETs seen");
		now[4].on = 10;
		check(!at_duty_early_missed(open, now, gets | sets),
		      "early: one class of two seen");
		check(!at_duty_early_missed(open, now, 0), "early: opened for nothing");
	}
	printf("# %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
