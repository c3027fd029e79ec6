#!/usr/bin/env bash
# Detail events: a burst that overflows a deliberately tiny ring buffer
# counts the lost events (per function and per CPU), and every sampled
# call is either an event in the file or a drop: events + dropped ==
# sampled == calls at rate 1. Calls nested deeper than the frames for calls
# in flight count as dropped too. Also --detail on a function attaches without
# disturbing its exact coarse count, and no link is left behind. Both with
# the uprobe session link and with the uprobe + uretprobe fallback.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

STR=$TARGETS/strargs
N=20000

for mode in session fallback perf-links; do
	unset ADAPTRACE_NO_UPROBE_SESSION ADAPTRACE_NO_UPROBE_MULTI
	link=uprobe+uretprobe
	case $mode in
	session) link=session ;;
	fallback) export ADAPTRACE_NO_UPROBE_SESSION=1 ;;
	perf-links) export ADAPTRACE_NO_UPROBE_MULTI=1 ;; # one perf-event link per probe
	esac
	at_run "$WORK/$mode" record -q -o "$WORK/$mode.data" --select none --detail tick \
		--detail-rate 1 --ringbuf-size 4096 -- "$STR" burst "$N"
	expect_eq "$mode: record exits 0" "$RC" 0
	expect_eq "$mode: target made $N calls" "$(kv "$WORK/$mode.out" ticks)" "$N"
	report_json "$WORK/$mode.data" "$WORK/$mode.json" || continue
	j=$WORK/$mode.json
	expect_eq "$mode: detail link used" "$(jq -r .detail_link "$j")" "$link"
	expect_eq "$mode: coarse calls of tick exact" "$(fn "$j" tick calls)" "$N"
	ev=$(jq -r '.functions[] | select(.name == "tick") | .detail.events' "$j")
	dr=$(jq -r '.functions[] | select(.name == "tick") | .detail.dropped' "$j")
	sa=$(jq -r '.functions[] | select(.name == "tick") | .detail.sampled' "$j")
	expect_cmp "$mode: the burst overflowed the ring buffer (dropped)" "$dr" '>' 0
	expect_eq "$mode: sampled calls == calls at rate 1" "$sa" "$N"
	expect_eq "$mode: events + dropped == sampled" "$((ev + dr))" "$sa"
	expect_eq "$mode: dropped_events total" "$(jq -r .dropped_events "$j")" "$dr"
	"$ADAPTRACE" report "$WORK/$mode.data" --events tick --json >"$WORK/$mode.ev" 2>&1
	expect_eq "$mode: report --events lists every event in the file" "$(wc -l <"$WORK/$mode.ev")" "$ev"
	expect_eq "$mode: events carry tick's argument, each value once" \
		"$(jq -r '.args[0]' "$WORK/$mode.ev" | sort -un | wc -l)" "$ev"
	expect_eq "$mode: the return value is the argument" \
		"$(jq -r 'select(.ret != .args[0]) | .ret' "$WORK/$mode.ev" | wc -l)" 0
	"$ADAPTRACE" report "$WORK/$mode.data" >"$WORK/$mode.txt" 2>&1
	expect_match "$mode: the table shows the drops per CPU" "$(cat "$WORK/$mode.txt")" \
		'Dropped detail events of tick per CPU: (cpu[0-9]+=[0-9]+ ?)+$'
	expect_match "$mode: the table has detail columns" "$(cat "$WORK/$mode.txt")" \
		"^tick +$N .* $ev +$dr +1\.0000$"

	# 21 calls in flight: the first 16 get a frame, the 5 below are lost.
	at_run "$WORK/$mode-deep" record -q -o "$WORK/$mode-deep.data" --select none \
		--detail nest --detail-rate 1 -- "$STR" deep 20
	expect_eq "$mode: deep: record exits 0" "$RC" 0
	report_json "$WORK/$mode-deep.data" "$WORK/$mode-deep.json" || continue
	j=$WORK/$mode-deep.json
	expect_eq "$mode: deep: coarse calls of nest exact" "$(fn "$j" nest calls)" 21
	expect_eq "$mode: deep: calls beyond the frames are dropped" \
		"$(jq -c '.functions[] | select(.name == "nest") | [.detail.events, .detail.dropped, .detail.sampled]' "$j")" \
		'[16,5,21]'
done
expect_eq "no detail link left behind" "$(detail_links)" 0
