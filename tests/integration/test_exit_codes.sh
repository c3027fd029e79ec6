#!/usr/bin/env bash
# Exit status contract: CMD's status passes through; bad input is 2 with one
# line on stderr; missing privilege is 3 with one line saying so.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

SIMPLE=$TARGETS/simple

# one_line LABEL ERRFILE: the error is exactly one line, prefixed "adaptrace:".
one_line()
{
	expect_eq "$1: exactly one line on stderr" "$(wc -l <"$2")" 1 || sed 's/^/#   stderr: /' "$2" | head -n 5
	expect_match "$1: the line starts with 'adaptrace:'" "$(cat "$2")" '^adaptrace: '
}

# -- CMD: the command's own status.
at_run "$WORK/exit7" record -q -o "$WORK/exit7.data" -- "$SIMPLE" --exit 7
expect_eq "-- CMD exiting 7: adaptrace exits 7" "$RC" 7
expect_match "-- CMD exiting 7: the command did its work" "$(cat "$WORK/exit7.out")" '^s_beta=45$'
report_json "$WORK/exit7.data" "$WORK/exit7.json" &&
	expect_eq "-- CMD exiting 7: its calls are recorded" "$(fn "$WORK/exit7.json" s_alpha calls)" 123
at_run "$WORK/exit0" record -q -o "$WORK/exit0.data" -- "$SIMPLE"
expect_eq "-- CMD exiting 0: adaptrace exits 0" "$RC" 0

# Killed by a signal: not 0 (the shell convention would be 128+9).
at_run "$WORK/sigkill" record -q -o "$WORK/sigkill.data" -- "$SIMPLE" --signal 9
expect_cmp "-- CMD killed by SIGKILL: adaptrace does not exit 0" "$RC" '>' 0

# No such PID: find one that is free.
nopid=4000000
while [ -e "/proc/$nopid" ]; do nopid=$((nopid - 1)); done
at_run "$WORK/nopid" record -q -o "$WORK/nopid.data" -p "$nopid"
expect_eq "-p with no such PID exits 2" "$RC" 2
one_line "-p with no such PID" "$WORK/nopid.err"

at_run "$WORK/nobin" record -q -o "$WORK/nobin.data" -b /nonexistent/adaptrace-target
expect_eq "-b with no such binary exits 2" "$RC" 2
one_line "-b with no such binary" "$WORK/nobin.err"

at_run "$WORK/nocmd" record -q -o "$WORK/nocmd.data" -- /nonexistent/adaptrace-target
expect_eq "-- CMD with no such command exits 2" "$RC" 2
one_line "-- CMD with no such command" "$WORK/nocmd.err"

at_run "$WORK/noglob" record -q -o "$WORK/noglob.data" -f 'no_such_function_*' -- "$SIMPLE"
expect_eq "-f glob matching nothing exits 2" "$RC" 2
one_line "-f glob matching nothing" "$WORK/noglob.err"
expect_eq "-f glob matching nothing: the command was not run" \
	"$(grep -c '^s_alpha=' "$WORK/noglob.out")" 0

at_run "$WORK/nolib" record -q -o "$WORK/nolib.data" -l /nonexistent/libnothing.so -- "$SIMPLE"
expect_eq "-l with no such library exits 2" "$RC" 2
one_line "-l with no such library" "$WORK/nolib.err"

at_run "$WORK/nofile" report "$WORK/does-not-exist.data"
expect_eq "report of a missing file exits 2" "$RC" 2
one_line "report of a missing file" "$WORK/nofile.err"

at_run "$WORK/badopt" record --no-such-option -- "$SIMPLE"
expect_eq "unknown option exits 2" "$RC" 2

at_run "$WORK/nosub" no-such-subcommand
expect_eq "unknown subcommand exits 2" "$RC" 2

# No privilege: run as nobody without capabilities, from a directory that
# nobody can read and write.
PRIV=$WORK/nopriv
mkdir -p "$PRIV"
chmod 0777 "$PRIV"
chmod 0755 "$WORK"
install -m 0755 "$ADAPTRACE" "$PRIV/adaptrace"
install -m 0755 "$SIMPLE" "$PRIV/simple"
(cd "$PRIV" && timeout -k 5 60 setpriv --reuid=65534 --regid=65534 --clear-groups \
	--inh-caps=-all --bounding-set=-all ./adaptrace record -q -o "$PRIV/out.data" -- ./simple \
	>"$PRIV/run.out" 2>"$PRIV/run.err")
RC=$?
expect_eq "unprivileged record exits 3" "$RC" 3
one_line "unprivileged record" "$PRIV/run.err"
expect_match "unprivileged record: the line names the missing privilege" "$(cat "$PRIV/run.err")" \
	'[Pp]rivilege|[Cc]apabilit|CAP_|root'
expect_eq "unprivileged record: the command was not run" "$(grep -c '^s_alpha=' "$PRIV/run.out")" 0
