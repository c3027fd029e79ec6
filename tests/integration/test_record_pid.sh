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

# Stopped while two threads call tick() flat out. The return probes come off
# first, so calls entered after that never return to us: they count as left
# without returning, not as frames piling up past the shadow stack's depth.
if start_target "$WORK/hot" "$GATED"; then
	hpid=$TGT_PID
	kill -s USR1 "$hpid"
	if at_start "$WORK/athot" record -o "$WORK/hot.data" -p "$hpid" -f tick --select none; then
		sleep 1
		stop_pid "$AT_PID" INT
		expect_eq "record -p on a hot loop exits 0 on SIGINT" "$RC" 0
		if report_json "$WORK/hot.data" "$WORK/hot.json"; then
			expect_cmp "tick was called while traced" "$(fn "$WORK/hot.json" tick calls)" '>' 1000
			expect_eq "no shadow-stack overflow as the probes come off a hot function" \
				"$(jq .diagnostics.stack_overflow "$WORK/hot.json")" 0
		fi
	else
		fail "-p on a hot loop: tracing starts" "$(tail -n 10 "$WORK/athot.err")"
	fi
	kill -s USR2 "$hpid"
	wait_line "$WORK/hot.out" '^tick=[0-9]+$' 20 "$hpid" || true
	kill -s TERM "$hpid"
	wait_exit "$hpid" 10
	expect_eq "gated (hot loop) exits 0" "$RC" 0
else
	fail "gated starts (hot loop)" "$(cat "$WORK/hot.err")"
fi
