#!/usr/bin/env bash
# The coarse probes' cost: measured at start-up, stored in the file, shown
# per function by report, and a one-time warning when they alone cost the
# target more than --budget (which then bounds only the detail phase). Two
# threads calling an empty tick() flat out spend nearly all their time in
# the probes, on any machine.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

GATED=$TARGETS/gated

if ! start_target "$WORK/tgt" "$GATED"; then
	fail "gated starts" "$(cat "$WORK/tgt.err")"
	exit 1
fi
pid=$TGT_PID
kill -s USR1 "$pid"
# Without session links there is no duty cycle (test_duty), so the coarse
# probes stay on tick() and the warning comes.
ADAPTRACE_NO_UPROBE_SESSION=1 at_run "$WORK/at" record -o "$WORK/cost.data" -p "$pid" -f tick \
	--budget 5 -d 8
expect_eq "record -p -d 8 exits 0" "$RC" 0
warn=$(grep 'warning: the coarse probes' "$WORK/at.err")
expect_match "one warning: the coarse probes cost more than the budget" "$warn" \
	'slow the target down by about [0-9]+ %, more than the 5 % budget, which bounds only the detail phase'
expect_match "the warning names the costliest function" "$warn" 'costliest: tick [0-9]+ %'
expect_eq "the warning comes once" "$(grep -c 'warning: the coarse probes' "$WORK/at.err")" 1
expect_match "the footer gives the probe cost" "$(cat "$WORK/at.err")" \
	'Probe cost: about [0-9.]+ ms of the target.s CPU per second \([0-9]+ ns a call; most: tick '

if report_json "$WORK/cost.data" "$WORK/cost.json"; then
	expect_cmp "probe_hit_ns was measured" "$(jq .probe_hit_ns "$WORK/cost.json")" '>' 0
	expect_eq "without session links no yardsticks ran, and none is costed" \
		"$(jq 'has("yardstick_event_ns") or has("socket_events")' "$WORK/cost.json")" false
	expect_cmp "tick's probe_ms_per_s" "$(fn "$WORK/cost.json" tick probe_ms_per_s)" '>' 0
	expect_eq "probe_ms_per_s is calls x cost / duration" \
		"$(jq -r '.probe_hit_ns as $h | .duration_ns as $d | .functions[] | select(.name == "tick") |
			((.calls * $h / $d * 1000) - .probe_ms_per_s | fabs < 0.01)' "$WORK/cost.json")" true
fi

# Without the detail phase nothing measures the cost: 0, and no footer line.
at_run "$WORK/none" record -o "$WORK/none.data" -p "$pid" -f tick --select none -d 1
expect_eq "record --select none exits 0" "$RC" 0
if report_json "$WORK/none.data" "$WORK/none.json"; then
	expect_eq "--select none: probe_hit_ns is 0" "$(jq .probe_hit_ns "$WORK/none.json")" 0
	expect_eq "--select none: probe_ms_per_s is 0" "$(fn "$WORK/none.json" tick probe_ms_per_s)" 0
fi
expect_eq "--select none: no probe-cost footer" "$(grep -c 'Probe cost' "$WORK/none.err")" 0

kill -s USR2 "$pid"
wait_line "$WORK/tgt.out" '^tick=[0-9]+$' 20 "$pid" || true
kill -s TERM "$pid"
wait_exit "$pid" 10
expect_eq "gated exits 0" "$RC" 0
