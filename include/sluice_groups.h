/* sluice_groups.h - a tube's fair groups as an operator sees them: each
 * group with ready or taken tasks, its ready and taken counts and how long
 * its oldest ready task has waited, the largest backlog first (the server
 * counts them; the call costs one request whatever the tasks).
 *
 * Part of sluice.h, which includes it: include <sluice.h>, never this
 * file alone (it uses sluice.h's types and SLUICE_API). */
#ifndef SLUICE_GROUPS_H
#define SLUICE_GROUPS_H

enum { SLUICE_GROUPS_MAX = 1000 }; /* groups in one answer */

/* One group. Its strings live in the array's allocation. */
struct sluice_group {
	const char *tube;
	const char *group;        /* NULL: the tasks put without a group */
	uint64_t ready;           /* its ready tasks */
	uint64_t taken;           /* its tasks taken now */
	uint64_t oldest_ready_ms; /* how long its oldest ready task has waited
	                             since it was due; 0: none is ready */
};

/* The fair groups of `tube` (NULL: "default"; "*": of every tube that has
 * fair groups) that have ready or taken tasks, the most ready tasks first
 * (then the most taken, then by tube and group name, tasks without a
 * group first among equals): the first `limit` (1..SLUICE_GROUPS_MAX) into
 * `*groups` (free it with sluice_groups_free(); NULL when *n is 0), *n of
 * them, and `*total` (optional) how many groups there are. A tube without
 * fair groups lists its tasks as the one group NULL; the listing of every
 * tube leaves such tubes out. Errors: SLUICE_ETUBE, SLUICE_ENOTFOUND (no
 * such tube), SLUICE_EINVAL (limit 0), SLUICE_ELIMIT (limit over the
 * maximum), SLUICE_EUNKNOWNOP from a server older than the listing. */
SLUICE_API int sluice_groups(struct sluice_client *c, const char *tube,
    uint32_t limit, struct sluice_group **groups, size_t *n, uint64_t *total);
SLUICE_API void sluice_groups_free(struct sluice_group *groups);

#endif
