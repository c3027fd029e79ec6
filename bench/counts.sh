#!/bin/bash
# Estimated counts against a full-probe run's, per request: bench/redis.sh -o
# keeps its recordings named by the SETs sent (as many GETs). For each
# function that the full-probe (coarse) recording calls at least 0.5 times
# per request, compares calls per request in each --budget recording.
#
# With -1, the reference follows the event loop's turns too. The probes
# slow redis down, and its turns grow: under every probe a turn reads some
# 50 requests (0.02 turns per request), untraced or under --budget 5 one
# or two (0.7-0.76). Work done once a turn (beforeSleep) or once a turn and
# once a request (listRewind: 1 per request and 2 per turn) then differs
# between the runs, though both counts are right. ONE.data is a full-probe
# recording with one client (redis.sh -c 1 -t: a turn per request); with
# COARSE.data it splits each function's calls into a part per request and
# a part per turn, and the reference of a budget recording is those parts
# times its own requests and turns. Every file must then carry its turns in
# its name (redis.sh -t), and the functions compared are those whose
# reference is 0.5 or more per request.
#
# -v: every function compared, one line each, with its yardstick
# (estimated_by), not only those more than 10 % off.
#
# Usage: bench/counts.sh [-v] [-1 ONE.data] COARSE.data BUDGET.data...
# Environment: ADAPTRACE (default ./adaptrace at the top).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ADAPTRACE=${ADAPTRACE:-$here/../adaptrace}
usage() { sed -n '/^# Usage:/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
one= all=false
while getopts "1:vh" opt; do
	case $opt in 1) one=$OPTARG ;; v) all=true ;; *) usage ;; esac
done
shift $((OPTIND - 1))
(($# >= 2)) || usage
requests() { local b; b=$(basename "$1"); b=${b#*-}; echo $((2 * ${b%%-sets*})); }
# turns FILE: the turns in its name (redis.sh -t), or 0.
turns() { [[ $(basename "$1") =~ -sets-([0-9]+)-turns ]] && echo "${BASH_REMATCH[1]}" || echo 0; }
tmp=${TMPDIR:-/tmp}
trap 'rm -f "$tmp"/counts-*.$$.json' EXIT
full=$1
shift
"$ADAPTRACE" report "$full" --json >"$tmp/counts-full.$$.json"
if [[ -n $one ]]; then
	"$ADAPTRACE" report "$one" --json >"$tmp/counts-one.$$.json"
	for f in "$full" "$one" "$@"; do
		(($(turns "$f") > 0)) || { echo "counts.sh: $f: no turns in its name (record it with redis.sh -t)" >&2; exit 2; }
	done
else
	echo '{"functions":[]}' >"$tmp/counts-one.$$.json"
fi
for f in "$@"; do
	"$ADAPTRACE" report "$f" --json >"$tmp/counts-est.$$.json"
	jq -rn --slurpfile a "$tmp/counts-full.$$.json" --slurpfile o "$tmp/counts-one.$$.json" \
		--slurpfile b "$tmp/counts-est.$$.json" --argjson one "$([[ -n $one ]] && echo true || echo false)" \
		--argjson ra "$(requests "$full")" --argjson ta "$(turns "$full")" \
		--argjson ro "$([[ -n $one ]] && requests "$one" || echo 1)" --argjson to "$([[ -n $one ]] && turns "$one" || echo 0)" \
		--argjson nb "$(requests "$f")" --argjson tb "$(turns "$f")" --arg f "$(basename "$f")" --argjson all "$all" '
		($b[0].functions | map({key: .name, value: .}) | from_entries) as $est |
		($o[0].functions | map({key: .name, value: .calls}) | from_entries) as $c1 |
		# calls = p * requests + q * turns, from the two full-probe runs
		def parts($ca; $co):
			($ra * $to - $ta * $ro) as $det |
			if $one and $det != 0 then
				{p: (($ca * $to - $ta * $co) / $det), q: (($ra * $co - $ca * $ro) / $det)} |
				if .q < 0 then {p: ($ca / $ra), q: 0} elif .p < 0 then {p: 0, q: ($ca / $ta)} else . end
			else {p: ($ca / $ra), q: 0} end;
		[$a[0].functions[] | parts(.calls; ($c1[.name] // 0)) as $k |
		 ($k.p + $k.q * $tb / $nb) as $pa | select($pa >= 0.5) |
		 ($est[.name] // {calls: 0}) as $e | {name, pa: $pa, pb: ($e.calls / $nb), est: ($e.estimated // false), by: ($e.estimated_by // "exact")} |
		 .err = (100 * (.pb - .pa) / .pa)] as $rows |
		"\($f): \($rows | map(select(.err | fabs <= 10)) | length) of \($rows | length) functions called 0.5+ times per request within 10 % per request" +
		(if $one then " (reference by requests and turns: \($tb / $nb * 1000 | round / 1000) turns per request)" else "" end) +
		([$rows[] | select($all or (.err | fabs > 10)) | "\n  \(.name): \(.pa * 1000 | round / 1000) per request, \(if .est then "estimated " else "" end)\(.pb * 1000 | round / 1000) (\(.err * 10 | round / 10) %)" + if $all then " by \(.by)" else "" end] | join(""))'
done
