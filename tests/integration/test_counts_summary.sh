#!/usr/bin/env bash
# bench/counts_summary.py sums up counts.sh -v over rounds: recordings with
# every function within 10 %, the estimates' mean and worst error (exact
# functions left out), and each miss with its round and recording.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

SUMMARY=$ROOT/bench/counts_summary.py
cat >"$WORK/counts.txt" <<'COUNTS'
r1 budget-220000-sets-1-turns.1.data: 3 of 3 functions called 0.5+ times per request within 10 % per request (reference by requests and turns: 0.6 turns per request)
r1   call: 1 per request, 1 (0 %) by exact
r1   dictFind: 3 per request, estimated 3.06 (2 %) by reads
r1   zfree: 4 per request, estimated 3.84 (-4 %) by writes
r2 budget-218000-sets-1-turns.2.data: 2 of 3 functions called 0.5+ times per request within 10 % per request (reference by requests and turns: 0.6 turns per request)
r2   call: 1 per request, 0.8 (-20 %) by exact
r2   dictFind: 3 per request, estimated 3.3 (10 %) by reads
r2   zfree: 4 per request, estimated 3.6 (-10 %) by writes
COUNTS
python3 "$SUMMARY" "$WORK/counts.txt" >"$WORK/out" 2>&1
expect_eq "counts_summary.py runs" "$?" 0
expect_eq "recordings, estimates, mean and worst" "$(head -n 1 "$WORK/out")" \
	"1 of 2 recordings with every function within ±10 %; 4 estimates, mean error 6.50 %, worst +10.0 %"
expect_eq "the one miss, exact or not, with its round" "$(tail -n +2 "$WORK/out")" \
	"  r2 budget-218000-sets-1-turns.2.data: call -20.0 %"
python3 "$SUMMARY" /dev/null >"$WORK/empty" 2>&1
expect_eq "no counts: an error" "$?" 1
expect_eq "its one line" "$(cat "$WORK/empty")" "counts_summary.py: no counts.sh lines in the input"
