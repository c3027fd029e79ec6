#!/usr/bin/env bash
# adaptrace export (chrome, csv, openmetrics) and record --openmetrics-file,
# on a real recording of simple and of the 50-function target.
. "$(dirname "$0")/../lib.sh"

at_run "$WORK/rec" record -q --interval 0.03 -o "$WORK/fifty.data" \
	--openmetrics-file "$WORK/live.prom" -f 'f??' -- "$TARGETS/ab/base/fifty" 400
expect_eq "record --openmetrics-file: exit status 0" "$RC" 0
at_run "$WORK/rec2" record -q -o "$WORK/simple.data" -- "$TARGETS/simple"

# --- csv: one row per function per interval, calls adding up exactly.
at_run "$WORK/csv" export "$WORK/fifty.data" --format csv
expect_eq "csv: exit status 0" "$RC" 0
expect_eq "csv: header" "$(head -n 1 "$WORK/csv.out")" \
	"start_ns,end_ns,binary,function,kind,calls,returns,total_ns,self_ns,mean_ns,p50_ns,p90_ns,p99_ns,min_ns,max_ns,errors,max_concurrency,probed_ns"
expect_eq "csv: f07's calls over all intervals sum to 400" \
	"$(awk -F, '$4 == "f07" { n += $6 } END { print n }' "$WORK/csv.out")" 400
expect_eq "csv: at most one row per function per interval" \
	"$(tail -n +2 "$WORK/csv.out" | cut -d, -f1,4 | sort | uniq -d | wc -l)" 0
expect_cmp "csv: several intervals" "$(tail -n +2 "$WORK/csv.out" | cut -d, -f1 | sort -u | wc -l)" '>=' 3
at_run "$WORK/csvs" export "$WORK/simple.data" --format csv -o "$WORK/simple.csv"
expect_eq "csv -o: s_alpha 123 calls, s_beta 45" \
	"$(awk -F, '$4 == "s_alpha" { a += $6 } $4 == "s_beta" { b += $6 } END { print a, b }' "$WORK/simple.csv")" "123 45"

# --- openmetrics: promtool accepts it; counters and histograms are exact.
at_run "$WORK/om" export "$WORK/simple.data" --format openmetrics
expect_eq "openmetrics: exit status 0" "$RC" 0
if command -v promtool >/dev/null; then
	check "openmetrics passes promtool check metrics" sh -c "promtool check metrics <'$WORK/om.out'"
	check "record --openmetrics-file passes promtool check metrics" sh -c "promtool check metrics <'$WORK/live.prom'"
else
	fail "promtool is installed (Debian package prometheus; scripts/deps.sh)"
fi
expect_eq "openmetrics: adaptrace_calls_total of s_alpha" \
	"$(sed -n 's/^adaptrace_calls_total{binary="simple",function="s_alpha"} //p' "$WORK/om.out")" 123
expect_eq "openmetrics: +Inf bucket and _count of s_beta equal its 45 calls" \
	"$(grep -E '^adaptrace_latency_seconds_(bucket\{binary="simple",function="s_beta",le="\+Inf"\}|count\{binary="simple",function="s_beta"\}) ' "$WORK/om.out" | awk '{ print $2 }' | tr '\n' ' ')" "45 45 "
expect_eq "openmetrics: buckets are cumulative (never decrease)" \
	"$(awk '/^adaptrace_latency_seconds_bucket/ { split($0, a, "le="); key = a[1]; if (key == prev && $2 < last) bad++; prev = key; last = $2 } END { print bad + 0 }' "$WORK/om.out")" 0
expect_eq "openmetrics: ends with # EOF" "$(tail -n 1 "$WORK/om.out")" "# EOF"
expect_eq "record --openmetrics-file: final counts (f07 400 calls)" \
	"$(sed -n 's/^adaptrace_calls_total{binary="fifty",function="f07"} //p' "$WORK/live.prom")" 400
expect_eq "record --openmetrics-file: no temporary file left" \
	"$(find "$WORK" -name 'live.prom.tmp*' | wc -l)" 0

# --- chrome: trace-event JSON with the required fields.
at_run "$WORK/ch" export "$WORK/fifty.data" --format chrome
expect_eq "chrome: exit status 0" "$RC" 0
expect_eq "chrome: valid JSON with a traceEvents array" \
	"$(jq -r '.traceEvents | type' "$WORK/ch.out" 2>&1)" array
expect_eq "chrome: every event has name, ph, ts, pid, tid" \
	"$(jq '[.traceEvents[] | select((has("name") and has("ph") and has("ts") and has("pid") and has("tid")) | not)] | length' "$WORK/ch.out")" 0
expect_cmp "chrome: a calls/s counter (ph C) of f07 in every interval" \
	"$(jq '[.traceEvents[] | select(.ph == "C" and .name == "calls/s f07" and (.args["calls/s"] | type) == "number")] | length' "$WORK/ch.out")" '>=' 3
expect_eq "chrome: a process_name metadata event" \
	"$(jq '[.traceEvents[] | select(.ph == "M" and .name == "process_name")] | length' "$WORK/ch.out")" 1
# chrome with detail events: one complete event ("ph":"X") per captured call,
# with its decoded arguments, on the thread that made it.
at_run "$WORK/det" record -q -o "$WORK/det.data" --select none --detail greet \
	--args 'greet(str,i32):i32' -- "$TARGETS/strargs"
expect_eq "detail recording for chrome: exit status 0" "$RC" 0
at_run "$WORK/chd" export "$WORK/det.data" --format chrome
expect_eq "chrome with events: exit status 0" "$RC" 0
expect_eq "chrome: one complete event per captured greet call" \
	"$(jq '[.traceEvents[] | select(.ph == "X" and .name == "greet")] | length' "$WORK/chd.out")" \
	"$("$ADAPTRACE" report "$WORK/det.data" --events --json | jq -s '[.[] | select(.function == "greet")] | length')"
expect_eq "chrome: the first greet event carries its arguments" \
	"$(jq -c '[.traceEvents[] | select(.ph == "X" and .name == "greet")][0].args | [.. | strings | select(. == "alice")] | length' "$WORK/chd.out")" 1
expect_eq "chrome: complete events have a duration and the caller's pid and tid" \
	"$(jq '[.traceEvents[] | select(.ph == "X") | select((.dur | type) != "number" or .pid <= 0 or .tid <= 0)] | length' "$WORK/chd.out")" 0
at_run "$WORK/bad" export "$WORK/fifty.data" --format svg
expect_eq "unknown --format: exit status 2" "$RC" 2
at_run "$WORK/bad" export "$WORK/none.data" --format csv
expect_eq "missing file: exit status 2" "$RC" 2
