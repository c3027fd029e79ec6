#!/usr/bin/env bash
# record -- mt: exact call counts of a multi-threaded program, errors, latency
# quantiles against the program's own measurements, recursion (total counted
# once, self time), longjmp (abandoned frames) and max_concurrency.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

MT=$TARGETS/mt
DATA=$WORK/mt.data
JSON=$WORK/mt.json
OUT=$WORK/rec.out

at_run "$WORK/rec" record -o "$DATA" -- "$MT"
expect_eq "record -- mt exits with mt's status" "$RC" 0 || sed 's/^/#   stderr: /' "$WORK/rec.err" | head -n 20
expect_match "record prints the tracing line" "$(cat "$WORK/rec.err")" '^adaptrace: tracing '
expect_match "mt ran to the end under tracing" "$(cat "$OUT")" '^lj_outer:total_ns=[0-9]+$'
report_json "$DATA" "$JSON" || exit 1

# Every "name=count" line of the target is an exact call count.
while IFS='=' read -r name count; do
	expect_eq "calls of $name" "$(fn "$JSON" "$name" calls)" "$count"
done < <(grep -E '^[a-z_0-9]+=[0-9]+$' "$OUT")
expect_eq "calls of main" "$(fn "$JSON" main calls)" 1
expect_eq "calls of thread_main" "$(fn "$JSON" thread_main calls)" 4
expect_eq "functions are listed once each" \
	"$(jq -r '[.functions[].name] | length - (unique | length)' "$JSON")" 0

for noise in _start _init _fini frame_dummy register_tm_clones deregister_tm_clones \
	__do_global_dtors_aux; do
	expect_eq "start-up function $noise is not traced by default" \
		"$(fn "$JSON" "$noise" calls)" missing
done
expect_eq "binary of work_a is the path of mt" "$(fn "$JSON" work_a binary)" "$(realpath "$MT")"

# Errors: maybe_fail returns -1 on every third call.
fails=$(kv "$OUT" 'maybe_fail:errors')
expect_eq "errors of maybe_fail" "$(fn "$JSON" maybe_fail errors)" "$fails"
expect_eq "maybe_fail errors are a third of its calls" \
	"$(($(kv "$OUT" maybe_fail) / 3))" "$fails"

# Latency of plain sleepers against the medians the target measured itself.
for f in nap_1ms nap_10ms; do
	truth=$(kv "$OUT" "$f:p50_ns")
	expect_near "p50 of $f" "$(fn "$JSON" "$f" p50_ns)" "$truth" 15
	expect_near "mean of $f" "$(fn "$JSON" "$f" mean_ns)" "$(kv "$OUT" "$f:mean_ns")" 15
	# Not recursive: time on the stack is the sum of the calls' durations.
	expect_near "total of $f is calls x mean" "$(fn "$JSON" "$f" total_ns)" \
		"$(jq -r --arg n "$f" 'first(.functions[] | select(.name == $n)) | .calls * .mean_ns' "$JSON")" 2
	expect_near "self of $f is its total (calls nothing traced)" "$(fn "$JSON" "$f" self_ns)" \
		"$(fn "$JSON" "$f" total_ns)" 2
done

# Quantiles are ordered and self never exceeds total, for every function.
expect_eq "p50 <= p90 <= p99 <= max for every called function" \
	"$(jq -r '[.functions[] | select(.calls > 0 and .name != "lj_mid" and .name != "lj_inner")
		| select(.p50_ns > .p90_ns or .p90_ns > .p99_ns or .p99_ns > .max_ns) | .name] | join(",")' "$JSON")" ""
expect_eq "self_ns <= total_ns for every function" \
	"$(jq -r '[.functions[] | select(.self_ns > .total_ns) | .name] | join(",")' "$JSON")" ""

# Recursion: rec(50) twice; each level sleeps 1 ms itself and 1 ms in leaf().
rec_truth=$(kv "$OUT" 'rec:outer_total_ns')
rec_total=$(fn "$JSON" rec total_ns)
expect_eq "rec calls are 50 per outermost call" "$(fn "$JSON" rec calls)" 100
expect_near "rec total (recursion counted once) vs measured outermost calls" "$rec_total" "$rec_truth" 10
expect_near "rec self is the sleeping rec did itself" "$(fn "$JSON" rec self_ns)" \
	"$(kv "$OUT" 'rec:self_sleep_ns')" 12
expect_near "rec max is the longest outermost call" "$(fn "$JSON" rec max_ns)" \
	"$(kv "$OUT" 'rec:outer_max_ns')" 10
# The mean covers every level's inclusive duration, as rec measured them itself.
expect_near "rec mean over all levels" "$(fn "$JSON" rec mean_ns)" \
	"$(awk -v t="$(kv "$OUT" 'rec:levels_ns')" 'BEGIN { printf "%.0f", t / 100 }')" 12
expect_eq "rec max_concurrency (outermost activations, one thread)" \
	"$(fn "$JSON" rec max_concurrency)" 1
expect_near "leaf total is its self" "$(fn "$JSON" leaf self_ns)" "$(fn "$JSON" leaf total_ns)" 2
expect_near "leaf total is what leaf measured" "$(fn "$JSON" leaf total_ns)" \
	"$(kv "$OUT" 'leaf:total_ns')" 12
expect_near "p50 of leaf" "$(fn "$JSON" leaf p50_ns)" "$(kv "$OUT" 'leaf:p50_ns')" 15

# longjmp: lj_inner jumps back into lj_outer, leaving lj_mid and lj_inner.
expect_near "lj_outer total vs measured" "$(fn "$JSON" lj_outer total_ns)" \
	"$(kv "$OUT" 'lj_outer:total_ns')" 15
expect_near "p50 of lj_after (runs after the longjmp)" "$(fn "$JSON" lj_after p50_ns)" \
	"$(kv "$OUT" 'lj_after:p50_ns')" 15
expect_near "lj_after total is its self" "$(fn "$JSON" lj_after self_ns)" \
	"$(fn "$JSON" lj_after total_ns)" 2
abandoned=$(jq -r '[.diagnostics | to_entries[] | select(.key | test("abandon")) | .value] | add // "missing"' \
	"$JSON" 2>/dev/null)
expect_cmp "diagnostics count abandoned frames" "${abandoned:-missing}" '>' 0

# Concurrency: all four threads sit in conc_wait at once.
expect_eq "max_concurrency of conc_wait" "$(fn "$JSON" conc_wait max_concurrency)" 4
expect_eq "max_concurrency of main" "$(fn "$JSON" main max_concurrency)" 1
expect_cmp "max_concurrency of work_a" "$(fn "$JSON" work_a max_concurrency)" '<=' 4

expect_cmp "duration covers the run" "$(jq -r '.duration_ns' "$JSON")" '>=' "$rec_truth"

# More threads alive at once than the coarse programs' 1024 thread slots:
# by pigeonhole some keep their frames in task storage instead, and both
# kinds must count and time alike. Threads that exit inside a traced call
# never return from it; the exit frees their frames (max_concurrency 1).
MANY=$WORK/many
at_run "$MANY" record -q -o "$MANY.data" -- "$TARGETS/manythreads"
expect_eq "manythreads: record exits 0" "$RC" 0 || sed 's/^/#   stderr: /' "$MANY.err" | head -n 10
if report_json "$MANY.data" "$MANY.json"; then
	counts_match "manythreads" "$MANY.json" "$MANY.out"
	expect_eq "manythreads: no unmatched returns" "$(jq .diagnostics.unmatched_returns "$MANY.json")" 0
	expect_eq "manythreads: every call into tw_inner returned" \
		"$(fn "$MANY.json" tw_inner returns)" "$(fn "$MANY.json" tw_inner calls)"
	expect_eq "manythreads: tw_outer's self time is its total less tw_inner's" \
		"$(fn "$MANY.json" tw_outer self_ns)" \
		"$(($(fn "$MANY.json" tw_outer total_ns) - $(fn "$MANY.json" tw_inner total_ns)))"
	expect_eq "manythreads: a thread's exit ends its call in flight (max_concurrency)" \
		"$(fn "$MANY.json" tw_exit_inside max_concurrency)" 1
	expect_eq "manythreads: exiting inside tw_exit_inside and exiter abandons 2 frames each" \
		"$(jq .diagnostics.abandoned_frames "$MANY.json")" 6
fi

# A thread other than the leader execs from inside a traced call: it takes
# the leader's thread id, and the frames under both old ids are abandoned
# (main's, and execer's with tw_exec_inside's) rather than left to a thread
# that gets one of those ids later.
at_run "$MANY.exec" record -q -o "$MANY.exec.data" -- "$TARGETS/manythreads" exec
expect_eq "manythreads exec: record exits 0" "$RC" 0 || sed 's/^/#   stderr: /' "$MANY.exec.err" | head -n 10
if report_json "$MANY.exec.data" "$MANY.exec.json"; then
	expect_eq "manythreads exec: tw_exec_inside called once" "$(fn "$MANY.exec.json" tw_exec_inside calls)" 1
	expect_eq "manythreads exec: the frames of both old thread ids are abandoned" \
		"$(jq .diagnostics.abandoned_frames "$MANY.exec.json")" 3
fi
