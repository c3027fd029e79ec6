/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Entry points of the subcommands; each returns the exit status. */
#ifndef AT_COMMANDS_H
#define AT_COMMANDS_H

int cmd_list(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_top(int argc, char **argv);

#endif
