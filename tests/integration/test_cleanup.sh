#!/usr/bin/env bash
# Cleanup: whichever way adaptrace ends (end of -- CMD, -d, SIGINT, SIGTERM,
# the traced process killed, adaptrace itself killed), none of its BPF
# programs, links or perf events survive it, the traced process has its
# original text back (no int3 left) and keeps working, and the launched
# command inherits no BPF descriptor.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

GATED=$TARGETS/gated

# snapshot_ids FILE: add the BPF ids adaptrace holds now to FILE.
snapshot_ids()
{
	bpf_ids_of "$AT_PID" >>"$1"
	sort -u -o "$1" "$1"
}

# after_exit LABEL IDS-FILE: adaptrace has ended; nothing of it may remain.
after_exit()
{
	local label=$1 ids=$2 left
	if [ ! -s "$ids" ]; then
		fail "$label: adaptrace held BPF objects while tracing" "no prog/link fd found in /proc/$AT_PID/fdinfo"
		return
	fi
	ok "$label: adaptrace held $(wc -l <"$ids") BPF objects while tracing"
	left=$(bpf_left "$ids")
	expect_eq "$label: no BPF program, link or perf event of adaptrace remains" "$left" ""
}

# target_healthy LABEL PID: the gated process has its text back, still
# counts and exits 0 on request.
target_healthy()
{
	local label=$1 pid=$2
	expect_eq "$label: target's text has no probe left" "$(text_diff "$pid" "$GATED")" 0
	expect_eq "$label: target holds no BPF descriptor" "$(bpf_fds_of "$pid")" ""
	kill -s USR1 "$pid" # starts the calls if they had not started
	sleep 0.3
	kill -s USR2 "$pid"
	if wait_line "$WORK/$label.tgt.out" '^tick=[0-9]+$' 10 "$pid"; then
		expect_cmp "$label: target kept counting" "$(kv "$WORK/$label.tgt.out" tick)" '>' 0
	else
		fail "$label: target kept counting" "no tick line; alive: $(alive "$pid" && echo yes || echo no)"
	fi
	kill -s TERM "$pid"
	wait_exit "$pid" 10
	expect_eq "$label: target exits 0 later" "$RC" 0
}

# traced_gated LABEL [idle] [-b] [ARG...]: start gated, attach "adaptrace
# record ARG..." (-p by default), start the calls unless idle. Sets TGT_PID,
# AT_PID; the ids go to $WORK/LABEL.ids.
traced_gated()
{
	local label=$1 busy=yes
	shift
	[ "${1:-}" = idle ] && { busy=no; shift; }
	: >"$WORK/$label.ids"
	if ! start_target "$WORK/$label.tgt" "$GATED"; then
		fail "$label: gated starts"
		return 1
	fi
	local sel=(-p "$TGT_PID")
	[ "${1:-}" = "-b" ] && { sel=(-b "$GATED"); shift; }
	if ! at_start "$WORK/$label" record -q -o "$WORK/$label.data" "${sel[@]}" "$@"; then
		fail "$label: tracing starts" "$(tail -n 10 "$WORK/$label.err")"
		return 1
	fi
	snapshot_ids "$WORK/$label.ids"
	expect_cmp "$label: probes are in the target's text while tracing" \
		"$(text_diff "$TGT_PID" "$GATED")" '>' 0
	[ "$busy" = yes ] && kill -s USR1 "$TGT_PID"
	sleep 0.5
	snapshot_ids "$WORK/$label.ids"
}

# stop_tracer LABEL SIG: stop adaptrace with SIG. If it hangs, say so, then
# stop the target's calls (a busy uprobe can hold up the kernel's detach).
stop_tracer()
{
	local label=$1 sig=$2
	if stop_pid "$AT_PID" "$sig" 10; then
		[ "$sig" = KILL ] || expect_eq "$label: adaptrace exits 0 on SIG$sig" "$RC" 0
		return
	fi
	fail "$label: adaptrace ends within 10 s of SIG$sig" "$(cat "$WORK/stuck.$AT_PID")"
	kill -s USR2 "$TGT_PID"
	wait_exit "$AT_PID" 20 || fail "$label: adaptrace ends once the target is idle" "$(proc_state "$AT_PID")"
}

# report_ok LABEL: the trace file is complete and readable.
report_ok()
{
	timeout 60 "$ADAPTRACE" report "$WORK/$1.data" --json >"$WORK/$1.json" 2>"$WORK/$1.json.err"
	expect_eq "$1: report reads the trace file" "$?" 0 || head -n 3 "$WORK/$1.json.err" | sed 's/^/#   /'
}

# 1. SIGINT and SIGTERM with -p, the target idle or busy calling a traced
# function.
for sig in INT TERM; do
	for state in idle busy; do
		label=sig$sig.$state
		args=()
		[ "$state" = idle ] && args=(idle)
		if traced_gated "$label" "${args[@]}"; then
			stop_tracer "$label" "$sig"
			after_exit "$label" "$WORK/$label.ids"
			report_ok "$label"
			target_healthy "$label" "$TGT_PID"
		fi
	done
done

# 2. -d: the recording ends by itself.
label=duration
if traced_gated "$label" -d 2; then
	if wait_exit "$AT_PID" 20; then
		ok "$label: -d 2 ends the recording"
		expect_eq "$label: adaptrace exits 0" "$RC" 0
	else
		fail "$label: -d 2 ends the recording" "still running after 20 s"
		stop_tracer "$label" INT
	fi
	after_exit "$label" "$WORK/$label.ids"
	report_ok "$label"
	target_healthy "$label" "$TGT_PID"
fi

# 3. -b with SIGINT.
label=binary
if traced_gated "$label" -b; then
	stop_tracer "$label" INT
	after_exit "$label" "$WORK/$label.ids"
	target_healthy "$label" "$TGT_PID"
fi

# 4. The traced process is killed with SIGKILL: adaptrace notices and ends.
label=target_killed
if traced_gated "$label"; then
	kill -s KILL "$TGT_PID"
	wait_exit "$TGT_PID" 10
	if wait_exit "$AT_PID" 15; then
		ok "$label: adaptrace ends when the traced process dies"
	else
		fail "$label: adaptrace ends when the traced process dies" "still running 15 s later"
		stop_pid "$AT_PID" INT
	fi
	expect_cmp "$label: adaptrace exit status is not a crash" "$RC" '<' 128
	after_exit "$label" "$WORK/$label.ids"
	report_ok "$label"
fi

# 5. adaptrace itself is killed with SIGKILL: the kernel must drop everything.
label=tracer_killed
if traced_gated "$label"; then
	stop_tracer "$label" KILL
	after_exit "$label" "$WORK/$label.ids"
	target_healthy "$label" "$TGT_PID"
fi

# 6. -- CMD, normal end: the command inherits no BPF descriptor.
label=cmd
: >"$WORK/$label.ids"
if at_start "$WORK/$label" record -q -o "$WORK/$label.data" -- \
	"$TARGETS/simple" --wait-signal --fds; then
	snapshot_ids "$WORK/$label.ids"
	child=$(pgrep -P "$AT_PID" | head -n 1)
	if [ -n "$child" ] && wait_line "$WORK/$label.err" '^ready$' 10; then
		expect_cmp "$label: probes are in the command's text" \
			"$(text_diff "$child" "$TARGETS/simple")" '>' 0
		kill -s USR1 "$child"
	else
		fail "$label: the command runs as a child of adaptrace" "child: '${child}'"
	fi
	wait_exit "$AT_PID" 20 || stop_pid "$AT_PID" INT
	expect_eq "$label: adaptrace exits 0 with the command" "$RC" 0
	expect_eq "$label: the command inherited no BPF descriptor" "$(kv "$WORK/$label.out" bpf_fds)" 0
	after_exit "$label" "$WORK/$label.ids"
	report_ok "$label"
else
	fail "$label: tracing starts" "$(tail -n 10 "$WORK/$label.err")"
fi
