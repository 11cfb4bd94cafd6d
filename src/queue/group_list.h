/* group_list - a tube's fair groups as an operator sees them: each group
 * with ready or taken tasks, its ready and taken counts and the age of its
 * oldest ready task, the largest backlog first (the GROUPS op, `sluice
 * groups T`, /metrics, the dashboard).
 *
 * Order: more ready tasks first, then more taken, then by tube name, then
 * by group name (the "" group, tasks put without one, first among equals).
 * The counts come from the groups themselves (group.h: a group's heap of
 * ready tasks and its taken count); only the age reads tasks: the ready
 * tasks of the groups listed, never those of the others. A listing costs
 * O(g log max) in the groups considered, O(max) memory, and O(r) in the
 * ready tasks of the `max` groups returned. */
#ifndef SLUICE_QUEUE_GROUP_LIST_H
#define SLUICE_QUEUE_GROUP_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "queue/queue.h"

enum { GROUP_LIST_MAX = 1000 }; /* groups in one listing */

/* One group of a listing. Its strings borrow from the queue: valid until
 * it changes. */
struct group_row {
	const char *tube;
	size_t tube_len;
	const char *name; /* the "" group: len 0 */
	size_t name_len;
	uint64_t ready;
	uint64_t taken;
	uint64_t oldest_ready_age; /* ms the oldest ready task has waited since
	                              it became due; 0 when none is ready */
};

/* The groups with ready or taken tasks of tube `tube`, or with tube_len 0
 * of every tube that has fair groups (a tube without any has none to
 * list: its tasks are its tube's), as of the clock after catching up with
 * `now`: the first `max` (1..GROUP_LIST_MAX) in the order above into
 * out[], *n of them, *total how many there are. The "" group is listed
 * like the others (so a tube without fair groups lists one row, its whole
 * backlog, when named). Errors: SLUICE_ETUBE (a bad name),
 * SLUICE_ENOTFOUND (no such tube), SLUICE_EINVAL (now, max),
 * SLUICE_ENOMEM. */
int group_list(struct queue *q, int64_t now, const char *tube, size_t tube_len,
    struct group_row *out, size_t max, size_t *n, uint64_t *total);

#endif
