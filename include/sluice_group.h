/* sluice_group.h - the calls of libsluice that set the limits of a tube's
 * fair groups (docs/queue.md, "Group limits"): the limits every named
 * group of a tube gets, one group's own (which replace those limit by
 * limit), a group's pause, and where a group stands. A group at its
 * concurrency, out of tokens or paused is skipped by the tube's rotation
 * (its tasks stay ready; the next group's task is handed out) until a
 * lease of it ends, its token is due or it is resumed. Settings stay
 * while their group has no task.
 *
 * Part of sluice.h, which includes it: include <sluice.h>, never this
 * file alone (it uses sluice.h's types and SLUICE_API). */
#ifndef SLUICE_GROUP_H
#define SLUICE_GROUP_H

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
