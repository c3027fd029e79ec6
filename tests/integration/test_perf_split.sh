#!/usr/bin/env bash
# bench/perf_split.py sorts perf samples by process and by what the budget
# costs: a made-up `perf script -F comm,ip,sym` with one sample of each kind
# must come out in its category, at 1e6 / HZ / REQUESTS us a sample.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

SPLIT=$ROOT/bench/perf_split.py
cat >"$WORK/script.txt" <<'PERF'
redis-server 10
	          4a1b20 processCommand (/usr/bin/redis-check-rdb)

redis-server 10
	ffffffff81e2bc15 sock_recvmsg ([kernel.kallsyms])
	ffffffff821ecc51 do_syscall_64 ([kernel.kallsyms])
	          10a929 __libc_recv (/usr/lib/x86_64-linux-gnu/libc.so.6)

redis-server 10
	ffffffffc002a0f4 bpf_prog_ba4a6f65e478aee4_duty_inputs (bpf_prog_ba4a6f65e478aee4_duty_inputs)
	ffffffff814b85e7 bpf_trace_run3 ([kernel.kallsyms])
	ffffffff81e2b40a call_trace_sock_recv_length ([kernel.kallsyms])
	          10a929 __libc_recv (/usr/lib/x86_64-linux-gnu/libc.so.6)

redis-server 10
	ffffffff821f3140 irqentry_exit_to_user_mode ([kernel.kallsyms])
	ffffffff81000c55 asm_exc_int3 ([kernel.kallsyms])
	           67f41 dictFind (/usr/bin/redis-check-rdb)

redis-server 10
	ffffffff821f3140 irqentry_exit_to_user_mode ([kernel.kallsyms])
	ffffffff81000c55 asm_exc_int3 ([kernel.kallsyms])
	           89c20 serverCron (/usr/bin/redis-check-rdb)

redis-server 10
	ffffffff821f3140 irqentry_exit_to_user_mode ([kernel.kallsyms])
	ffffffff81001000 exc_debug_user ([kernel.kallsyms])
	ffffffff81001100 asm_exc_debug ([kernel.kallsyms])
	    7fff00001000 [unknown] ([uprobes])

redis-server 10
	ffffffff81583ad7 uprobe_handle_trampoline ([kernel.kallsyms])
	ffffffff814de1cd __x64_sys_uretprobe ([kernel.kallsyms])

redis-benchmark 11
	ffffffffc002a0e5 bpf_prog_ba4a6f65e478aee4_duty_inputs (bpf_prog_ba4a6f65e478aee4_duty_inputs)
	          10a929 __libc_recv (/usr/lib/x86_64-linux-gnu/libc.so.6)

swapper 0
	ffffffff821f0000 default_idle ([kernel.kallsyms])
PERF
echo dictFind >"$WORK/estimated"
python3 "$SPLIT" --hz 1000 --requests 1000 --estimated "$WORK/estimated" <"$WORK/script.txt" >"$WORK/out" 2>&1
expect_eq "perf_split.py runs" "$?" 0
expect_eq "redis-server: one sample of each kind, 1 us each" \
	"$(grep '^redis-server ' "$WORK/out")" \
	"redis-server total=7.000 user=1.000 kernel=1.000 yard=1.000 win=1.000 exact=1.000 ret=1.000 step=1.000"
expect_eq "redis-benchmark: its yardstick sample" \
	"$(grep '^redis-benchmark ' "$WORK/out")" \
	"redis-benchmark total=1.000 user=0.000 kernel=0.000 yard=1.000 win=0.000 exact=0.000 ret=0.000 step=0.000"
expect_eq "the idle CPUs apart" "$(grep -c '^idle total=1.000 ' "$WORK/out")" 1
expect_eq "an empty profile gives zeros" \
	"$(python3 "$SPLIT" --hz 1000 --requests 1000 </dev/null | grep '^redis-server ')" \
	"redis-server total=0.000 user=0.000 kernel=0.000 yard=0.000 win=0.000 exact=0.000 ret=0.000 step=0.000"
