#!/usr/bin/env bash
# record -p on an already-running process: the calls counted equal exactly
# what the process itself counted while it was traced.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

GATED=$TARGETS/gated

if ! start_target "$WORK/tgt" "$GATED"; then
	fail "gated starts" "$(cat "$WORK/tgt.err")"
	exit 1
fi
pid=$TGT_PID
if ! at_start "$WORK/at" record -o "$WORK/pid.data" -p "$pid"; then
	fail "-p PID: tracing starts" "$(tail -n 10 "$WORK/at.err")"
	exit 1
fi
ok "-p PID: tracing starts"
kill -s USR1 "$pid"
sleep 1
kill -s USR2 "$pid"
if wait_line "$WORK/tgt.out" '^tick=[0-9]+$' 20 "$pid"; then
	ticks=$(kv "$WORK/tgt.out" tick)
	expect_cmp "gated ticked" "$ticks" '>' 0
else
	fail "gated prints its count" "$(cat "$WORK/tgt.out")"
	ticks=missing
fi
stop_pid "$AT_PID" INT
expect_eq "record -p exits 0 on SIGINT" "$RC" 0
expect_match "record prints the report table at the end" "$(cat "$WORK/at.err")" 'tick'
expect_eq "gated still running after record" "$(alive "$pid" && echo yes)" yes

if report_json "$WORK/pid.data" "$WORK/pid.json"; then
	expect_eq "tick calls equal the process's own count" "$(fn "$WORK/pid.json" tick calls)" "$ticks"
	expect_eq "max_concurrency of tick (two threads)" "$(fn "$WORK/pid.json" tick max_concurrency)" 2
	expect_match "main is not called while traced" "$(fn "$WORK/pid.json" main calls)" '^(0|missing)$'
	expect_eq "target names the process" \
		"$(jq -r '.target | tostring | test("'"$pid"'|gated")' "$WORK/pid.json")" true
fi

kill -s TERM "$pid"
wait_exit "$pid" 10
expect_eq "gated exits 0 after tracing ended" "$RC" 0
