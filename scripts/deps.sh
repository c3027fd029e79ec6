#!/bin/sh
# Install the Debian packages adaptrace needs to build and test, if missing.
set -eu
PKGS="make gcc g++ clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libcapstone-dev
libclang-rt-14-dev jq python3 python3.11 systemtap-sdt-dev util-linux binutils redis-server
redis-tools prometheus tmux libxml2-utils cmark-gfm nginx-light wrk"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "deps.sh: missing packages:$missing; run as root to install them" >&2
		exit 3
	fi
	echo "deps.sh: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
