#!/usr/bin/env bash
# Stationarity: step() has a constant profile, so after its sampling cycles
# it leaves the detail phase (its probe parked while step stays hot: the
# recording must not hang); when its latency changes (the test tells the
# target to switch once step has left), the coarse histogram drifts and it
# comes back. The trace file's selection log shows both. Both link kinds.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

P=$TARGETS/phases

for mode in session fallback; do
	if [ "$mode" = fallback ]; then
		export ADAPTRACE_NO_UPROBE_SESSION=1
	else
		unset ADAPTRACE_NO_UPROBE_SESSION
	fi
	# The target switches when told: after record -v has said that step
	# left detail and took the latency reference that a drift is judged
	# against, so the test waits for behaviour, not for a clock.
	"$ADAPTRACE" record -q -v -o "$WORK/$mode.data" --select all -f step -- \
		"$P" --on-signal 6 >"$WORK/$mode.out" 2>"$WORK/$mode.err" &
	rec=$!
	track "$rec"
	if wait_line "$WORK/$mode.err" ' step parked: latency reference taken' 90 "$rec"; then
		ok "$mode: step left detail and has its drift reference (record -v says so)"
	else
		fail "$mode: step left detail and has its drift reference (record -v says so)" \
			"$(tail -n 5 "$WORK/$mode.err")"
	fi
	pkill -USR1 -P "$rec" -x phases
	wait_exit "$rec" 90 || stop_pid "$rec" INT 20
	expect_eq "$mode: record exits 0 (no hang at a runtime detach)" "$RC" 0
	expect_eq "$mode: the target switched" "$(kv "$WORK/$mode.out" switched)" 1
	"$ADAPTRACE" report "$WORK/$mode.data" --selection --json >"$WORK/$mode.sel"
	sel=$WORK/$mode.sel
	expect_eq "$mode: step entered, left, entered again" \
		"$(jq -r 'select(.function == "step" and .change != "rate") | .change' "$sel" | head -n 3 | tr '\n' ' ')" \
		"enter leave enter "
	left=$(jq -r 'select(.function == "step" and .change == "leave") | .ts_ns' "$sel" | head -n 1)
	back=$(jq -r 'select(.function == "step" and .change == "enter") | .ts_ns' "$sel" | sed -n 2p)
	expect_match "$mode: the leave says stationary" \
		"$(jq -r 'select(.function == "step" and .change == "leave") | .reason' "$sel" | head -n 1)" \
		'stationary'
	expect_match "$mode: the return says the latency drifted" \
		"$(jq -r 'select(.function == "step" and .change == "enter") | .reason' "$sel" | sed -n 2p)" \
		'^back to detail: latency drifted'
	"$ADAPTRACE" report "$WORK/$mode.data" --events step --json >"$WORK/$mode.ev"
	expect_eq "$mode: no event of step between leaving and coming back" \
		"$(jq -r --argjson a "${left:-0}" --argjson b "${back:-0}" \
			'select(.ts_ns > $a + 1000000000 and .ts_ns + .duration_ns < $b - 1000000000) | .ts_ns' \
			"$WORK/$mode.ev" | wc -l)" 0
	# Every call after the switch takes 1.5-2.5 ms: a return caused by the
	# switch (not by noise before it) captures slow calls only.
	expect_cmp "$mode: events after the return (slow phase)" \
		"$(jq -r --argjson b "${back:-0}" 'select(.ts_ns >= $b) | .ts_ns' "$WORK/$mode.ev" | wc -l)" '>' 0
	expect_eq "$mode: it came back after the switch: no fast call after the return" \
		"$(jq -r --argjson b "${back:-0}" 'select(.ts_ns >= $b and .duration_ns < 1400000) | .ts_ns' \
			"$WORK/$mode.ev" | wc -l)" 0
done
expect_eq "no detail link left behind" "$(detail_links)" 0
