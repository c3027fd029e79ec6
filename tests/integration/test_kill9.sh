#!/usr/bin/env bash
# kill -9 of the recorder: the trace file still reads back up to its last
# complete interval, report says the end record is missing, and the kernel
# dropped every probe with the process.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

GATED=$TARGETS/gated

if ! start_target "$WORK/tgt" "$GATED"; then
	fail "gated starts" "$(cat "$WORK/tgt.err")"
	exit 1
fi
pid=$TGT_PID
if ! at_start "$WORK/at" record -o "$WORK/k.data" --interval 0.2 -p "$pid"; then
	fail "-p PID: tracing starts" "$(tail -n 10 "$WORK/at.err")"
	exit 1
fi
kill -s USR1 "$pid"
sleep 1.5
kill -s KILL "$AT_PID"
# Bounded wait: while gated keeps calling tick(), the kernel's detach in the
# dying recorder can block (bpf_uprobe_multi_link_release, synchronize_srcu).
if ! wait_exit "$AT_PID" 10; then
	fail "adaptrace is gone within 10 s of SIGKILL" "$(proc_state "$AT_PID")"
	kill -s USR2 "$pid"
	wait_exit "$AT_PID" 20
fi
expect_eq "adaptrace died of SIGKILL" "$RC" 137
kill -s USR2 "$pid"
wait_line "$WORK/tgt.out" '^tick=[0-9]+$' 20 "$pid"
ticks=$(kv "$WORK/tgt.out" tick)

timeout -k 5 60 "$ADAPTRACE" report "$WORK/k.data" >"$WORK/rep.out" 2>"$WORK/rep.err"
expect_eq "report on the killed recording exits 0" "$?" 0
expect_match "report warns that the end record is missing" "$(cat "$WORK/rep.err")" 'no end record'
if report_json "$WORK/k.data" "$WORK/k.json"; then
	expect_eq "complete is false" "$(jq -r .complete "$WORK/k.json")" false
	calls=$(fn "$WORK/k.json" tick calls)
	expect_cmp "tick calls recorded before the kill" "$calls" '>' 0
	expect_cmp "no more calls than the process made" "$calls" '<=' "$ticks"
fi
expect_eq "no probe left in the target's text after SIGKILL" "$(text_diff "$pid" "$GATED")" 0
expect_eq "gated still running" "$(alive "$pid" && echo yes)" yes
