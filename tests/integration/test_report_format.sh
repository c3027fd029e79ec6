#!/usr/bin/env bash
# report: the text table (columns, --sort, --top, --hist), --json with every
# key of design.md.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

DATA=$WORK/mt.data
JSON=$WORK/mt.json
at_run "$WORK/rec" record -q -o "$DATA" -- "$TARGETS/mt"
expect_eq "record -- mt exits 0" "$RC" 0 || sed 's/^/#   stderr: /' "$WORK/rec.err" | head -n 5
report_json "$DATA" "$JSON" || exit 1
jq -r '.functions[].name' "$JSON" | sort -u >"$WORK/names"

# rows FILE: the function names of the table rows, in order (a row is a line
# with a whitespace-separated field that is a function name).
rows()
{
	# The table ends at the first empty line; the footer may name functions too.
	awk 'NR == FNR { name[$1] = 1; next }
		/^$/ { exit }
		{ for (i = 1; i <= NF; i++) if ($i in name) { print $i; break } }' "$WORK/names" "$1"
}

# report_text LABEL OUT ARG...: "adaptrace report DATA ARG..." into OUT; one check.
report_text()
{
	local label=$1 out=$2
	shift 2
	timeout -k 5 60 "$ADAPTRACE" report "$DATA" "$@" >"$out" 2>"$out.err"
	expect_eq "$label exits 0" "$?" 0 || head -n 3 "$out.err" | sed 's/^/#   /'
}

report_text "report" "$WORK/plain.txt"
header=$(grep -iE 'calls' "$WORK/plain.txt" | head -n 1 | tr '[:upper:]' '[:lower:]')
for col in function calls total self mean p50 p90 p99 max errors; do
	expect_match "table header has column '$col'" "$header" "(^|[^a-z0-9])$col([^a-z0-9]|$)"
done
expect_eq "report lists every function once" "$(rows "$WORK/plain.txt" | sort | uniq -d)" ""
expect_eq "report lists every function of the JSON" "$(rows "$WORK/plain.txt" | sort -u)" \
	"$(cat "$WORK/names")"

# --sort calls: calls do not increase down the table.
report_text "report --sort calls" "$WORK/sorted.txt" --sort calls
order=$(rows "$WORK/sorted.txt" | while read -r n; do fn "$JSON" "$n" calls; done | tr '\n' ' ')
expect_eq "--sort calls orders rows by calls, descending" \
	"$(tr ' ' '\n' <<<"$order" | grep . | sort -n -r -s | tr '\n' ' ')" "$order"
expect_eq "--sort calls: work_a (most calls) comes first" "$(rows "$WORK/sorted.txt" | head -n 1)" work_a

# --sort total: total_ns does not increase.
report_text "report --sort total" "$WORK/bytotal.txt" --sort total
order=$(rows "$WORK/bytotal.txt" | while read -r n; do fn "$JSON" "$n" total_ns; done | tr '\n' ' ')
expect_eq "--sort total orders rows by total, descending" \
	"$(tr ' ' '\n' <<<"$order" | grep . | sort -n -r -s | tr '\n' ' ')" "$order"

# --top 3.
report_text "report --top 3" "$WORK/top3.txt" --top 3
expect_eq "--top 3 shows 3 rows" "$(rows "$WORK/top3.txt" | wc -l)" 3
report_text "report --sort calls --top 3" "$WORK/top3c.txt" --sort calls --top 3
expect_eq "--sort calls --top 3 shows the 3 most called" "$(rows "$WORK/top3c.txt" | tr '\n' ' ')" \
	"$(jq -r '[.functions[] | {name, calls}] | sort_by(-.calls) | .[0:3][] | .name' "$JSON" | tr '\n' ' ')"

# --hist: histogram bars for the matching functions only.
report_text "report --hist 'nap_*'" "$WORK/hist.txt" --hist 'nap_*'
bars='(#|\*|@|█|▏|▎|▍|▌|▋|▊|▉|■|\|)\1\1'
expect_cmp "--hist draws bars" "$(grep -cE "$bars" "$WORK/hist.txt")" '>=' 2
expect_cmp "--hist adds lines to the report" "$(wc -l <"$WORK/hist.txt")" '>' \
	"$(wc -l <"$WORK/plain.txt")"
expect_match "--hist names nap_10ms" "$(grep -vE "$bars" "$WORK/hist.txt")" 'nap_10ms'
expect_eq "report without --hist draws no bars" \
	"$(grep -cE "$bars" "$WORK/plain.txt")" 0

# --json: every key of design.md, with its type.
expect_eq "--json top-level keys" \
	"$(jq -r '[has("target"), (.duration_ns | type), (.functions | type), (.usdt | type),
		(.dropped_events | type), (.diagnostics | type), (.turn_ends_unseen | type)] | join(",")' "$JSON")" \
	"true,number,array,array,number,object,boolean"
expect_eq "--json function keys and types (every function)" \
	"$(jq -r '[.functions[] | [(.name | type), (.binary | type), (.calls | type), (.total_ns | type),
		(.self_ns | type), (.mean_ns | type), (.p50_ns | type), (.p90_ns | type), (.p99_ns | type),
		(.max_ns | type), (.errors | type), (.max_concurrency | type), (.detail | type),
		(.detail.events | type), (.detail.dropped | type), (.detail.rate | type)] | join(",")] | unique | join(" ")' "$JSON")" \
	"string,string,number,number,number,number,number,number,number,number,number,number,object,number,number,number"
expect_eq "--json: every function has calls >= 0 and a non-empty name" \
	"$(jq -r '[.functions[] | select(.calls < 0 or .name == "")] | length' "$JSON")" 0
