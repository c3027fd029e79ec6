#!/usr/bin/env bash
# --args: typed arguments with exact values (C int is i32: the upper half of
# its register is undefined); strings read up to their bound and marked
# truncated beyond it; return values decoded. Both link kinds.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

STR=$TARGETS/strargs
long=$(printf 'x%.0s' $(seq 1 63))

for mode in session fallback; do
	if [ "$mode" = fallback ]; then
		export ADAPTRACE_NO_UPROBE_SESSION=1
	else
		unset ADAPTRACE_NO_UPROBE_SESSION
	fi
	at_run "$WORK/$mode" record -q -o "$WORK/$mode.data" --select none --detail greet \
		--detail pair --args 'greet(str,i32):i32' --args 'pair(str:16,str,u32):u32' -- "$STR"
	expect_eq "$mode: record exits 0" "$RC" 0
	"$ADAPTRACE" report "$WORK/$mode.data" --events --json >"$WORK/$mode.ev" 2>"$WORK/$mode.everr"
	ev=$WORK/$mode.ev
	expect_eq "$mode: four calls captured" "$(wc -l <"$ev")" 4
	expect_eq "$mode: greet(\"alice\", 7)" \
		"$(jq -c 'select(.function == "greet") | [.args, .ret, .truncated]' "$ev" | sed -n 1p)" \
		'[["alice",7],14,[]]'
	expect_eq "$mode: greet(\"bob\", -3) (negative int)" \
		"$(jq -c 'select(.function == "greet") | [.args, .ret, .truncated]' "$ev" | sed -n 2p)" \
		'[["bob",-3],-6,[]]'
	expect_eq "$mode: a 300-byte string is cut at 63 bytes and marked" \
		"$(jq -c 'select(.function == "greet") | [.args, .truncated]' "$ev" | sed -n 3p)" \
		"[[\"$long\",42],[0]]"
	expect_eq "$mode: pair(str:16, str, u32):u32" \
		"$(jq -c 'select(.function == "pair") | [.args, .ret, .truncated]' "$ev")" \
		'[["0123456789abcde","",4000000000],2000000000,[0]]'
	"$ADAPTRACE" report "$WORK/$mode.data" --events greet >"$WORK/$mode.txt" 2>&1
	expect_match "$mode: text shows the cut string with ..." "$(cat "$WORK/$mode.txt")" \
		"\\(\"$long\"\\.\\.\\., 42\\)$"
	expect_match "$mode: text shows a negative int" "$(cat "$WORK/$mode.txt")" '\("bob", -3\)$'
done

at_run "$WORK/bad" record -q -o "$WORK/bad.data" --args 'greet(strng)' -- "$STR"
expect_eq "a bad --args spec exits 2" "$RC" 2
expect_match "... with one line naming --args" "$(cat "$WORK/bad.err")" "^adaptrace: --args 'greet\\(strng\\)': "
at_run "$WORK/bad2" record -q -o "$WORK/bad2.data" --select 'latent &' -- "$STR"
expect_eq "a bad --select expression exits 2" "$RC" 2
expect_eq "... in one line" "$(wc -l <"$WORK/bad2.err")" 1
expect_eq "no detail link left behind" "$(detail_links)" 0
