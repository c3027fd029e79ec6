#!/usr/bin/env bash
# Stationarity: step() has a constant profile, so after its sampling cycles
# it leaves the detail phase (its probe parked while step stays hot: the
# recording must not hang); when its latency changes mid-run, the coarse
# histogram drifts and it comes back. The trace file's selection log shows
# both. Both link kinds.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

P=$TARGETS/phases

for mode in session fallback; do
	if [ "$mode" = fallback ]; then
		export ADAPTRACE_NO_UPROBE_SESSION=1
	else
		unset ADAPTRACE_NO_UPROBE_SESSION
	fi
	at_run "$WORK/$mode" record -q -o "$WORK/$mode.data" --select all -f step -- "$P" 12 18
	expect_eq "$mode: record exits 0 (no hang at a runtime detach)" "$RC" 0
	expect_eq "$mode: the target switched" "$(kv "$WORK/$mode.out" switched)" 1
	"$ADAPTRACE" report "$WORK/$mode.data" --selection --json >"$WORK/$mode.sel"
	sel=$WORK/$mode.sel
	expect_eq "$mode: step entered, left, entered again" \
		"$(jq -r 'select(.function == "step" and .change != "rate") | .change' "$sel" | head -n 3 | tr '\n' ' ')" \
		"enter leave enter "
	left=$(jq -r 'select(.function == "step" and .change == "leave") | .ts_ns' "$sel" | head -n 1)
	back=$(jq -r 'select(.function == "step" and .change == "enter") | .ts_ns' "$sel" | sed -n 2p)
	expect_cmp "$mode: it left before the switch at 12 s" "${left:-x}" "<" 12000000000
	expect_cmp "$mode: it came back after the switch" "${back:-x}" ">=" 12000000000
	expect_match "$mode: the leave says stationary" \
		"$(jq -r 'select(.function == "step" and .change == "leave") | .reason' "$sel" | head -n 1)" \
		'stationary'
	"$ADAPTRACE" report "$WORK/$mode.data" --events step --json >"$WORK/$mode.ev"
	expect_eq "$mode: no event of step between leaving and coming back" \
		"$(jq -r --argjson a "${left:-0}" --argjson b "${back:-0}" \
			'select(.ts_ns > $a + 1000000000 and .ts_ns + .duration_ns < $b - 1000000000) | .ts_ns' \
			"$WORK/$mode.ev" | wc -l)" 0
	expect_cmp "$mode: events of the slow phase were captured" \
		"$(jq -r 'select(.duration_ns >= 1500000) | .ts_ns' "$WORK/$mode.ev" | wc -l)" '>' 0
done
expect_eq "no detail link left behind" "$(detail_links)" 0
