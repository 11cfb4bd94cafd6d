/* sluice_deps.h - dependencies between tasks: a put may name the tasks
 * it waits for (sluice_put_opts' after, after_keys, on_parent_failure);
 * such a task is SLUICE_WAITING until each of them is acked, and a take
 * of it carries their results (sluice_task's parents). Parents are
 * named by id (after) or by the key of a task of the put's tube
 * (after_keys), 1..1000 together: an unknown one is SLUICE_ENOTFOUND,
 * one acked already counts as done, one failed for good already
 * applies on_parent_failure at once. docs/queue.md says more.
 *
 * Part of sluice.h, which includes it: include <sluice.h>, never this
 * file alone. */
#ifndef SLUICE_DEPS_H
#define SLUICE_DEPS_H

/* A waiting task's rule when a parent fails for good (buried, moved to
 * a dead-letter tube, deleted): buried with "task N failed: ERROR"; the
 * parent counts as done; deleted (its children follow their rules). */
enum sluice_on_parent {
	SLUICE_ON_PARENT_FAIL = 0,
	SLUICE_ON_PARENT_IGNORE = 1,
	SLUICE_ON_PARENT_CANCEL = 2,
};

/* A parent of a task; outcome 0 not finished, 1 acked, 2 failed; its
 * ack's result in a take or a peek (NULL: none). */
struct sluice_parent {
	uint64_t id;
	int outcome;
	const char *result;
	size_t result_len;
};

#endif
