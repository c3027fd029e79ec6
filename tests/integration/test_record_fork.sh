#!/usr/bin/env bash
# Processes: -b PATH traces every process running PATH, including ones
# started after attaching (a forked and exec'ed child); -p PID only PID.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

FORKER=$TARGETS/forker

# -b: start tracing first, then run forker (parent 100 calls + child 30).
if at_start "$WORK/b" record -q -o "$WORK/b.data" -b "$FORKER"; then
	timeout 30 "$FORKER" >"$WORK/b_tgt.out" 2>&1
	expect_eq "forker exits 0 under -b" "$?" 0
	stop_pid "$AT_PID" INT
	expect_eq "-b: record exits 0 on SIGINT" "$RC" 0
	if report_json "$WORK/b.data" "$WORK/b.json"; then
		expect_eq "-b: fk_work counted in parent and child" \
			"$(fn_sum "$WORK/b.json" fk_work calls)" 130
	fi
else
	fail "-b: tracing starts" "$(tail -n 10 "$WORK/b.err")"
fi

# -b also covers a process that was already running before the attach.
if start_target "$WORK/b2_tgt" "$FORKER" --wait-signal; then
	pid=$TGT_PID
	if at_start "$WORK/b2" record -q -o "$WORK/b2.data" -b "$FORKER"; then
		kill -s USR1 "$pid"
		wait_exit "$pid" 30
		expect_eq "forker --wait-signal exits 0 under -b" "$RC" 0
		stop_pid "$AT_PID" INT
		if report_json "$WORK/b2.data" "$WORK/b2.json"; then
			expect_eq "-b with a running process: parent and child counted" \
				"$(fn_sum "$WORK/b2.json" fk_work calls)" 130
		fi
	else
		fail "-b (running process): tracing starts" "$(tail -n 10 "$WORK/b2.err")"
	fi
fi

# -p PARENT: the exec'ed child is another process and is not traced.
if start_target "$WORK/p_tgt" "$FORKER" --wait-signal; then
	pid=$TGT_PID
	if at_start "$WORK/p" record -q -o "$WORK/p.data" -p "$pid"; then
		kill -s USR1 "$pid"
		wait_exit "$pid" 30
		expect_eq "forker exits 0 under -p" "$RC" 0
		expect_match "forker's child ran" "$(cat "$WORK/p_tgt.out")" '^child fk_work=30$'
		# The traced process is gone: record should end by itself.
		if wait_exit "$AT_PID" 10; then
			ok "-p: record ends when the process exits"
		else
			fail "-p: record ends when the process exits" "still running 10 s after the target"
			stop_pid "$AT_PID" INT
		fi
		expect_eq "-p: record exits 0" "$RC" 0
		if report_json "$WORK/p.data" "$WORK/p.json"; then
			expect_eq "-p PARENT: only the parent's fk_work calls" \
				"$(fn_sum "$WORK/p.json" fk_work calls)" 100
		fi
	else
		fail "-p: tracing starts" "$(tail -n 10 "$WORK/p.err")"
	fi
else
	fail "forker --wait-signal starts"
fi

# -b with a library: its probes count only the calls of processes running
# PATH. One process runs a copy of libuser (another file), execs libuser,
# then the copy again: only the middle image's calls count. The programs
# remember each process's verdict, and exec clears it.
USER=$TARGETS/libuser
COPY=$WORK/libuser-copy
if cp "$USER" "$COPY" && ln -sf "$TARGETS/libattest.so" "$WORK/libattest.so"; then
	if at_start "$WORK/bl" record -q -o "$WORK/bl.data" -b "$USER" -l "$TARGETS/libattest.so"; then
		timeout 30 "$COPY" --then-exec "$USER" --then-exec "$COPY" >"$WORK/bl_tgt.out" 2>&1
		expect_eq "libuser copy, libuser, copy in one process: exits 0" "$?" 0
		stop_pid "$AT_PID" INT
		expect_eq "-b PATH -l LIB: record exits 0" "$RC" 0
		if report_json "$WORK/bl.data" "$WORK/bl.json"; then
			expect_eq "-b PATH -l LIB: only the calls while the process ran PATH" \
				"$(fn "$WORK/bl.json" attest_add calls) $(fn "$WORK/bl.json" attest_mul calls)" "77 33"
		fi
	else
		fail "-b PATH -l LIB: tracing starts" "$(tail -n 10 "$WORK/bl.err")"
	fi
else
	fail "copy of libuser for -b PATH -l LIB"
fi
