/* sluice_groups.h - a tube's fair groups (docs/queue.md, "Fair groups")
 * as libsluice gives them: the listing an operator reads (each group with
 * ready or taken tasks, its ready and taken counts and how long its oldest
 * ready task has waited, the largest backlog first; the server counts
 * them, so the call costs one request whatever the tasks), and the limits
 * of the groups ("Group limits"): the limits every named group of a tube
 * gets, one group's own (which replace those limit by limit), a group's
 * pause, and where a group stands. A group at its concurrency, out of
 * tokens or paused is skipped by the tube's rotation (its tasks stay
 * ready; the next group's task is handed out) until a lease of it ends,
 * its token is due or it is resumed. Settings stay while their group has
 * no task.
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

/* A group and its tube's group settings, as the server answers. */
struct sluice_group_info {
	struct sluice_limits every; /* every named group's (set 0: none) */
	uint32_t overrides;         /* groups with settings of their own */
	uint32_t paused_groups;     /* of them paused */
	uint32_t held_groups;       /* groups held back now */
	/* the group asked for (all 0 for every group) */
	int own;    /* it has settings of its own (own_limits, paused) */
	int paused; /* it hands out nothing */
	int live;   /* it has tasks now */
	struct sluice_limits own_limits; /* its own limits (set 0: none) */
	struct sluice_limits limits;     /* in force: tokens (whole, in its
	                                    bucket), taken (its tasks taken
	                                    now), held (its ready tasks, when
	                                    held back) */
	uint32_t ready;                  /* its ready tasks */
	int holding; /* 0 none, 1 the rate, 2 the concurrency, 3 the pause */
};

/* Sets the limits in set->set and lifts those in `unset` for `group` of
 * `tube`, or, with group NULL or "", for every named group of it (the
 * defaults: `sluice tube set T --group-concurrency N --group-rate R`); a
 * rate's burst 0 is 100 ms of tokens. `*now` (optional) gets the result.
 * The tube must exist (SLUICE_ENOTFOUND). SLUICE_EINVAL: a rate of 0 or
 * over 1000000/s, a burst over 1000000, a concurrency of 0 or over
 * 1000000, a limit both set and lifted (the error's text says which);
 * SLUICE_EGROUP: a group name outside 1-200 bytes of the tube alphabet;
 * SLUICE_ELIMIT: 100000 groups of the tube have settings already.
 * Nothing changes on an error. Retried after a lost connection. */
SLUICE_API int sluice_group_set(struct sluice_client *c, const char *tube,
    const char *group, const struct sluice_limits *set, unsigned unset,
    struct sluice_group_info *now);

/* Pauses / resumes one group of `tube` (group required). Errors as
 * sluice_group_set's. */
SLUICE_API int sluice_group_pause(struct sluice_client *c, const char *tube,
    const char *group, struct sluice_group_info *now);
SLUICE_API int sluice_group_resume(struct sluice_client *c, const char *tube,
    const char *group, struct sluice_group_info *now);

/* Where `group` (NULL or "": only the tube's settings) stands. */
SLUICE_API int sluice_group_show(struct sluice_client *c, const char *tube,
    const char *group, struct sluice_group_info *out);

#endif
