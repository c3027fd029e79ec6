/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The -b executable filter, for probes that other processes hit too:
 * library probes, and the coarse budget's socket tracepoints.
 */
#ifndef AT_EXE_FILTER_BPF_H
#define AT_EXE_FILTER_BPF_H

/* Identity of the -b executable. */
const volatile __u64 target_ino = 0;
const volatile __u32 target_dev = 0;

/*
 * Direct loads through BTF pointers, which the verifier makes fault-safe
 * (a kernel thread's NULL mm reads as 0): a few ns. The five
 * bpf_probe_read_kernel calls they replace cost ~100 ns, paid on every
 * socket read and write of every process while the yardstick is on.
 */
static __always_inline bool exe_matches(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct inode *inode = task->mm->exe_file->f_inode;

	return inode->i_ino == target_ino && inode->i_sb->s_dev == target_dev;
}

#endif
