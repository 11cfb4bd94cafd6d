/* cli_vars - a taken task as the SLUICE_* variables a shell worker sees:
 * what `take --sh` prints for eval and what `work` sets in its command's
 * environment, built in one place so that the two always agree.
 *
 * The variables: SLUICE_TASK_ID, SLUICE_LEASE, SLUICE_TUBE,
 * SLUICE_ATTEMPTS, SLUICE_PAYLOAD_SIZE (bytes), and the payload itself
 * when it is at most CLI_VARS_PAYLOAD_MAX bytes: SLUICE_PAYLOAD when it is
 * text (valid UTF-8 without a NUL byte, which no variable can hold), else
 * SLUICE_PAYLOAD_BASE64. A larger payload is in neither (a single
 * environment string is bounded by the kernel, 128 KiB on Linux, and the
 * base64 of 64 KiB is 87 KiB). --sh output first unsets every one of them,
 * so that an eval never leaves a previous task's values behind. */
#ifndef SLUICE_TOOLS_CLI_VARS_H
#define SLUICE_TOOLS_CLI_VARS_H

#include <stdbool.h>
#include <stdio.h>

#include "sluice.h"

enum {
	CLI_VARS_PAYLOAD_MAX = 64 << 10,
	CLI_VARS_MAX = 7, /* how many names there are */
};

struct cli_vars {
	char *entry[CLI_VARS_MAX]; /* "NAME=value", allocated */
	int n;
};

/* Every name a task's variables may use, NULL-terminated. */
extern const char *const cli_vars_names[CLI_VARS_MAX + 1];

/* The variables of `t` into `v`. Returns 0, or -ENOMEM (nothing to free). */
int cli_vars_of(struct cli_vars *v, const struct sluice_task *t);

void cli_vars_free(struct cli_vars *v);

/* True when `entry` ("NAME=value") sets one of cli_vars_names. */
bool cli_vars_is_ours(const char *entry);

/* For eval: "unset" of every name, then `v`'s assignments quoted for sh
 * (with `v` NULL, only the unset). */
void cli_vars_print_sh(FILE *f, const struct cli_vars *v);

#endif
