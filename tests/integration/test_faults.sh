#!/usr/bin/env bash
# Faults around a recording: the output disk fills up, the traced binary is
# replaced on disk, the target execs another program, two recorders trace
# one process, and a -p target in another mount namespace.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

GATED=$TARGETS/gated

# --- The output disk fills up: a clean stop, a message, a readable file.
FULL=$WORK/full
mkdir -p "$FULL"
if mount -t tmpfs -o size=64k adaptrace-test "$FULL"; then
	# Leave about 6 KiB free.
	dd if=/dev/zero of="$FULL/filler" bs=1k count=58 2>/dev/null
	if start_target "$WORK/df_tgt" "$GATED"; then
		kill -s USR1 "$TGT_PID"
		at_run "$WORK/df" record -o "$FULL/t.data" -p "$TGT_PID" --interval 0.01 -d 30
		expect_eq "disk full: record exits 3 (environment)" "$RC" 3
		expect_match "disk full: says the disk is full" "$(cat "$WORK/df.err")" \
			'[Nn]o space left'
		expect_eq "disk full: one error line" \
			"$(grep -c '^adaptrace: .*[Nn]o space left' "$WORK/df.err")" 1
		timeout 30 "$ADAPTRACE" report "$FULL/t.data" --json >"$WORK/df.json" 2>"$WORK/df.rerr"
		expect_eq "disk full: the file reads back (report exits 0)" "$?" 0 ||
			sed 's/^/#   /' "$WORK/df.rerr" | head -n 3
		expect_cmp "disk full: intervals were kept" \
			"$(jq '.functions[] | select(.name == "tick") | .calls' "$WORK/df.json")" -gt 0
		expect_eq "disk full: target still running" "$(alive "$TGT_PID" && echo yes)" yes
		expect_eq "disk full: no probe left in the target" "$(text_diff "$TGT_PID" "$GATED")" 0
		stop_pid "$TGT_PID" TERM
	else
		fail "gated starts"
	fi
	umount "$FULL"
else
	fail "mount a small tmpfs for the disk-full test"
fi

# --- The traced binary is replaced on disk (as a package upgrade does: a
# new file renamed over the old path) while traced with -b and with -p.
BIN=$WORK/bin/gated
mkdir -p "$WORK/bin"
cp "$GATED" "$BIN"
if start_target "$WORK/rp_tgt" "$BIN"; then
	pid=$TGT_PID
	if at_start "$WORK/rp" record -q -o "$WORK/rp.data" -b "$BIN"; then
		kill -s USR1 "$pid"
		sleep 0.3
		cp "$GATED" "$BIN.new" && mv "$BIN.new" "$BIN"
		wait_line "$WORK/rp.err" 'replaced' 5 "$AT_PID"
		expect_match "replaced: a clear message" "$(cat "$WORK/rp.err")" \
			"$BIN.*replaced on disk"
		sleep 0.3
		kill -s USR2 "$pid"
		wait_line "$WORK/rp_tgt.out" '^tick=' 20 "$pid"
		stop_pid "$AT_PID" INT
		expect_eq "replaced: record exits 0" "$RC" 0
		report_json "$WORK/rp.data" "$WORK/rp.json" &&
			expect_eq "replaced: the running process is still counted exactly" \
				"$(fn "$WORK/rp.json" tick calls)" "$(kv "$WORK/rp_tgt.out" tick)"
	else
		fail "replaced: tracing starts" "$(tail -n 5 "$WORK/rp.err")"
	fi
	stop_pid "$pid" TERM
	expect_eq "replaced: target exits 0" "$RC" 0
else
	fail "gated starts (replaced)"
fi

# --- The target execs another program under -p: the recording ends, the
# file is complete and says why.
if start_target "$WORK/ex_tgt" "$GATED"; then
	pid=$TGT_PID
	if at_start "$WORK/ex" record -q -o "$WORK/ex.data" -p "$pid"; then
		kill -s USR1 "$pid"
		sleep 0.3
		kill -s USR2 "$pid"
		wait_line "$WORK/ex_tgt.out" '^tick=' 20 "$pid"
		kill -s HUP "$pid" # gated execs /bin/sleep
		if wait_exit "$AT_PID" 20; then
			expect_eq "exec: record ends by itself with status 0" "$RC" 0
		else
			fail "exec: record ends by itself" "$(tail -n 3 "$WORK/ex.err")"
			stop_pid "$AT_PID" INT
		fi
		expect_match "exec: says the target executed another program" \
			"$(cat "$WORK/ex.err")" 'exec'
		report_json "$WORK/ex.data" "$WORK/ex.json" &&
			expect_eq "exec: counts up to the exec are exact" \
				"$(fn "$WORK/ex.json" tick calls)" "$(kv "$WORK/ex_tgt.out" tick)"
		expect_match "exec: the file's end record says why" \
			"$("$ADAPTRACE" report "$WORK/ex.data" 2>&1)" 'exec'
	else
		fail "exec: tracing starts" "$(tail -n 5 "$WORK/ex.err")"
	fi
	stop_pid "$pid" TERM
else
	fail "gated starts (exec)"
fi

# --- Two recorders on one process at once: both exact.
if start_target "$WORK/two_tgt" "$GATED"; then
	pid=$TGT_PID
	if at_start "$WORK/two_a" record -q -o "$WORK/two_a.data" -p "$pid"; then
		pid_a=$AT_PID
		if at_start "$WORK/two_b" record -q -o "$WORK/two_b.data" -p "$pid"; then
			pid_b=$AT_PID
			kill -s USR1 "$pid"
			sleep 1
			kill -s USR2 "$pid"
			wait_line "$WORK/two_tgt.out" '^tick=' 20 "$pid"
			stop_pid "$pid_b" INT
			expect_eq "two recorders: second exits 0" "$RC" 0
			stop_pid "$pid_a" INT
			expect_eq "two recorders: first exits 0" "$RC" 0
			for x in a b; do
				report_json "$WORK/two_$x.data" "$WORK/two_$x.json" &&
					expect_eq "two recorders: $x counts exactly" \
						"$(fn "$WORK/two_$x.json" tick calls)" \
						"$(kv "$WORK/two_tgt.out" tick)"
			done
		else
			fail "two recorders: second starts" "$(tail -n 5 "$WORK/two_b.err")"
			stop_pid "$pid_a" INT
		fi
	else
		fail "two recorders: first starts" "$(tail -n 5 "$WORK/two_a.err")"
	fi
	expect_eq "two recorders: no probe left in the target" "$(text_diff "$pid" "$GATED")" 0
	stop_pid "$pid" TERM
else
	fail "gated starts (two recorders)"
fi

# --- A -p process in another mount namespace (as in a container): its
# binaries exist only there, on a tmpfs the host cannot see.
NSDIR=$WORK/nsbin
mkdir -p "$NSDIR"
unshare --mount --propagation private bash -c \
	"mount -t tmpfs adaptrace-ns '$NSDIR' && cp '$TARGETS/libuser' '$TARGETS/libattest.so' '$NSDIR/' &&
	 exec '$NSDIR/libuser' --wait-signal" >"$WORK/ns_tgt.out" 2>"$WORK/ns_tgt.err" &
pid=$!
track "$pid"
if wait_line "$WORK/ns_tgt.err" '^ready$' 10 "$pid"; then
	expect_eq "mount namespace: the binary is not visible from here" \
		"$([ -e "$NSDIR/libuser" ] && echo visible || echo hidden)" hidden
	if at_start "$WORK/ns" record -q -o "$WORK/ns.data" -p "$pid" -l libattest; then
		kill -s USR1 "$pid"
		wait_exit "$pid" 20
		expect_eq "mount namespace: target exits 0" "$RC" 0
		wait_exit "$AT_PID" 10 || stop_pid "$AT_PID" INT
		expect_eq "mount namespace: record exits 0" "$RC" 0
		if report_json "$WORK/ns.data" "$WORK/ns.json"; then
			counts_match "mount namespace" "$WORK/ns.json" "$WORK/ns_tgt.out"
			expect_eq "mount namespace: the library is named as the process sees it" \
				"$(fn "$WORK/ns.json" attest_add binary)" "$NSDIR/libattest.so"
		fi
	else
		fail "mount namespace: tracing starts" "$(tail -n 5 "$WORK/ns.err")"
		stop_pid "$pid" TERM
	fi
else
	fail "mount namespace: target starts" "$(cat "$WORK/ns_tgt.err")"
fi
