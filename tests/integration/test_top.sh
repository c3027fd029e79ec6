#!/usr/bin/env bash
# adaptrace top: live under tmux (keys switch the sort, q quits) and plain
# when stdout is not a terminal.
. "$(dirname "$0")/../lib.sh"

"$TARGETS/ab/base/fifty" 1000000 >/dev/null &
TGT=$!
track "$TGT"
wait_exec "$TGT" "$TARGETS/ab/base/fifty"

# --- plain: stdout is a file.
at_run "$WORK/plain" top -p "$TGT" -f 'f??' --interval 0.2 -d 1 --rows 5 --sort calls
expect_eq "plain top: exit status 0" "$RC" 0
expect_match "plain top: a header per interval with the sort key" "$(cat "$WORK/plain.out")" \
	'^interval 1 .*sort: calls$'
expect_eq "plain top: no escape sequences" "$(grep -c $'\033' "$WORK/plain.out")" 0
expect_match "plain top: rows of the target's functions" "$(cat "$WORK/plain.out")" \
	'^f[0-4][0-9] +[0-9.]+ +[0-9.]+[mun]?s +[0-9.]+[mun]?s +[0-9.]+%$'
expect_eq "plain top: at most --rows 5 rows per interval" \
	"$(awk '/^interval / { if (n > m) m = n; n = 0; next } /^f[0-9][0-9] / { n++ } END { if (n > m) m = n; print m }' "$WORK/plain.out")" 5

# --- live under tmux.
if ! command -v tmux >/dev/null; then
	fail "tmux is installed (scripts/deps.sh)"
	exit 1
fi
SOCK="$WORK/tmux.sock"
tmux -S "$SOCK" new-session -d -x 120 -y 40 -s attop \
	"'$ADAPTRACE' top -p $TGT -f 'f??' --interval 0.3 2>'$WORK/tmux.err'; echo TOP-EXIT=\$?; sleep 30"
TMUX_PID=$(tmux -S "$SOCK" display -p '#{pid}')
track "$TMUX_PID"
pane()
{
	tmux -S "$SOCK" capture-pane -p -t attop
}
# wait_pane REGEX SECONDS
wait_pane()
{
	local deadline=$((SECONDS + $2))
	while [ "$SECONDS" -lt "$deadline" ]; do
		pane | grep -Eq -- "$1" && return 0
		sleep 0.2
	done
	return 1
}
if wait_pane '^f[0-4][0-9] ' 30; then
	ok "tmux: top shows the target's functions"
else
	fail "tmux: top shows the target's functions" "$(pane)" "$(cat "$WORK/tmux.err")"
fi
expect_match "tmux: header with the keys" "$(pane)" 'sort: share +keys: s c 5 9 n, q quits'
tmux -S "$SOCK" send-keys -t attop c
if wait_pane 'sort: calls' 10; then
	ok "tmux: key c sorts by calls"
else
	fail "tmux: key c sorts by calls" "$(pane)"
fi
tmux -S "$SOCK" send-keys -t attop 9
if wait_pane 'sort: p99' 10; then
	ok "tmux: key 9 sorts by p99"
else
	fail "tmux: key 9 sorts by p99" "$(pane)"
fi
tmux -S "$SOCK" send-keys -t attop q
if wait_pane '^TOP-EXIT=0' 10; then
	ok "tmux: key q quits with status 0"
else
	fail "tmux: key q quits with status 0" "$(pane)" "$(cat "$WORK/tmux.err")"
fi
tmux -S "$SOCK" kill-server 2>/dev/null
expect_eq "the target still runs after top quit" "$(alive "$TGT" && echo yes)" yes
