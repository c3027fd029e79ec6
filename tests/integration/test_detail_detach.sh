#!/usr/bin/env bash
# Stopping a recording while a detailed function is hot (record -p, SIGINT,
# the target keeps running inside its traced main): every return and
# session link is released together, so the detach does not wait forever
# on the kernel's uretprobe SRCU; the target runs on unharmed and no link
# is left. Both link kinds.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

P=$TARGETS/phases

for mode in session fallback; do
	if [ "$mode" = fallback ]; then
		export ADAPTRACE_NO_UPROBE_SESSION=1
	else
		unset ADAPTRACE_NO_UPROBE_SESSION
	fi
	"$P" 100 100 >"$WORK/$mode.tgt" 2>&1 &
	tgt=$!
	track "$tgt"
	wait_exec "$tgt" "$P"
	if ! at_start "$WORK/$mode" record -q -o "$WORK/$mode.data" -p "$tgt" --select none \
		--detail step; then
		fail "$mode: tracing starts" "$(tail -n 5 "$WORK/$mode.err")"
		continue
	fi
	sleep 2
	stop_pid "$AT_PID" INT 20
	expect_eq "$mode: record stops within 20 s of SIGINT while step is hot" "$RC" 0
	[ -s "$WORK/$mode.data" ] && report_json "$WORK/$mode.data" "$WORK/$mode.json" &&
		expect_cmp "$mode: step had events" \
			"$(jq '.functions[] | select(.name == "step") | .detail.events' "$WORK/$mode.json")" '>' 0
	expect_eq "$mode: the target still runs" "$(alive "$tgt" && echo yes)" yes
	expect_eq "$mode: no detail link left" "$(detail_links)" 0
	kill -s TERM "$tgt"
	wait_exit "$tgt" 10
done
