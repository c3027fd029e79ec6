#!/usr/bin/env bash
# Relevance: among 200 functions, a default 'record' puts process() (5 ms
# when id % 97 == 0, microseconds otherwise) into the detail phase and none
# of the 199 uniform ones; its captured slow calls are exactly those whose
# first argument is a multiple of 97. Both link kinds.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

H=$TARGETS/hundreds

for mode in session fallback; do
	if [ "$mode" = fallback ]; then
		export ADAPTRACE_NO_UPROBE_SESSION=1
	else
		unset ADAPTRACE_NO_UPROBE_SESSION
	fi
	# This VM stalls a thread for over 1 ms 5 to 15 times a second. The
	# uniform functions start with an emulated nop (cheap probes, about 1,100
	# calls a second each) and intervals are 2 s, so a uniform function's p99
	# over 1 ms would take some 20 stalls inside its own calls per interval.
	at_run "$WORK/$mode" record -q --interval 2 -o "$WORK/$mode.data" -- "$H" 10
	expect_eq "$mode: record exits 0" "$RC" 0
	report_json "$WORK/$mode.data" "$WORK/$mode.json" || continue
	j=$WORK/$mode.json
	expect_eq "$mode: 200 functions traced, all called" \
		"$(jq '[.functions[] | select(.name == "process" or (.name | test("^u_[0-9]{3}$")))] | length' "$j")" 200
	expect_eq "$mode: process calls exact" "$(fn "$j" process calls)" "$(kv "$WORK/$mode.out" process)"
	"$ADAPTRACE" report "$WORK/$mode.data" --selection --json >"$WORK/$mode.sel"
	expect_eq "$mode: process entered the detail phase" \
		"$(jq -r 'select(.change == "enter") | .function' "$WORK/$mode.sel" | sort -u)" process
	expect_eq "$mode: no uniform function has events" \
		"$(jq '[.functions[] | select(.name | test("^u_")) | .detail.events] | add' "$j")" 0
	"$ADAPTRACE" report "$WORK/$mode.data" --events process --json >"$WORK/$mode.ev"
	ev=$WORK/$mode.ev
	expect_cmp "$mode: calls of process with a multiple of 97 captured" \
		"$(jq -r 'select(.args[0] % 97 == 0) | .args[0]' "$ev" | wc -l)" '>' 0
	# A fast call preempted for 5 ms by another load also looks slow: most, not all.
	slow=$(jq -r 'select(.duration_ns >= 5000000) | .args[0]' "$ev" | wc -l)
	slow97=$(jq -r 'select(.duration_ns >= 5000000 and .args[0] % 97 == 0) | .args[0]' "$ev" | wc -l)
	expect_cmp "$mode: slow calls (>= 5 ms) are calls with a multiple of 97 ($slow97 of $slow)" \
		"$slow97" '>=' "$(((slow * 9 + 9) / 10))"
	expect_eq "$mode: every call with a multiple of 97 took its 5 ms" \
		"$(jq -r 'select(.args[0] % 97 == 0) | .duration_ns >= 5000000' "$ev" | sort -u)" true
	expect_eq "$mode: process returns 2 * id" \
		"$(jq -r 'select(.ret != 2 * .args[0]) | .ret' "$ev" | wc -l)" 0
	expect_eq "$mode: events in the file match the detail count" \
		"$(wc -l <"$ev")" "$(jq '.functions[] | select(.name == "process") | .detail.events' "$j")"
	"$ADAPTRACE" report "$WORK/$mode.data" --selection >"$WORK/$mode.seltxt"
	expect_match "$mode: report --selection gives the reason" "$(cat "$WORK/$mode.seltxt")" \
		'process +enter .*[a-z]'
done
expect_eq "no detail link left behind" "$(detail_links)" 0
