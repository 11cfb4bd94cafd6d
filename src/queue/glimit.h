/* glimit - limits per fair group: a concurrency cap, a rate (a token
 * bucket) and a pause for each named group of a tube (docs/queue.md,
 * "Group limits").
 *
 * Settings. A tube's group settings (tube->gconf, NULL: none) are the
 * limits every named group of it gets (`def`, from `sluice tube set T
 * --group-concurrency N --group-rate R`) and a small table of overrides
 * by group name (`sluice group set T G ...`, `sluice group pause T G`):
 * an override's limits replace the default's limit by limit (a group
 * with its own concurrency keeps the default rate), and a paused group
 * hands out nothing. The table is settings, not groups: an override
 * stays while its group has no task. One GROUP_SET record carries the
 * whole settings of one name (the empty name: the defaults), and the
 * snapshot a GROUP_SET entry for each, after its tube's TUBE_LIMIT.
 * Tasks that name no group (the "" group) are held by the tube's own
 * limits only.
 *
 * Live state. A live group that some setting covers has a struct glive
 * (the tube's groups->lv, by slot; NULL for the others): its limits in
 * force, its pause, its bucket (as a tube's: token-ms at a stamp, full
 * when made or when its rate changes, one token spent by each TAKE at
 * the record's time, so a follower's and a replayed bucket are the
 * leader's) and its place on the queue's gdue heap while it waits for a
 * token. Its cap counts the group's taken tasks (group->taken), which
 * the log and the snapshot restore, so it holds from the first take
 * after a restart or a failover; a bucket starts full then.
 *
 * Holding. A group is held while it is paused, has `concurrency` tasks
 * taken, or waits on the gdue heap for a token (a TAKE left it less than
 * one). A held group leaves the rotation (group.c): its tasks stay
 * ready, a take serves the next group in turn, and nothing looks at the
 * held group until it is let go: a lease of it ends (qs_unplace), its
 * token is due (queue_tick), it is resumed or its limits change. Then
 * it joins the rotation at the back and a waiting take is woken
 * (on_ready), never by polling. A tube without group settings has
 * groups->lv NULL, and placing a task in the rotation costs it that one
 * test. Pure: no I/O, no logging. */
#ifndef SLUICE_QUEUE_GLIMIT_H
#define SLUICE_QUEUE_GLIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/heap.h"
#include "queue/idx.h"
#include "queue/qrec.h"
#include "queue/queue.h"
#include "queue/group.h"
#include "queue/tube.h"
#include "util/buf.h"

struct queue;
struct tube;
struct group;
struct groups;
struct task;

enum {
	GLIMIT_OVERRIDES_MAX = 100000 /* named settings in one tube */
};

/* One group's own settings (an override). */
struct gover {
	struct qrec_limits lim; /* the limits it sets itself */
	bool paused;
	uint8_t name_len;
	char name[];
};

/* A tube's group settings. */
struct gconf {
	struct qrec_limits def; /* every named group's; set 0: none */
	struct idx over;        /* struct gover by the hash of its name */
	uint32_t npaused;       /* overrides that pause their group */
	struct heap *due;       /* the queue's gdue heap */
	uint32_t *nlive;        /* the queue's count of glives */
};

/* A live group's limit state. */
struct glive {
	struct qrec_limits lim; /* in force (set 0 and not paused: none) */
	bool paused;
	uint64_t credit;   /* token-ms in the bucket at `stamp` */
	int64_t stamp;     /* queue ms the credit was counted at */
	int64_t due;       /* on the gdue heap: when a token comes */
	uint32_t hpos;     /* in the queue's gdue heap */
	uint32_t slot;     /* its group's */
	struct groups *gs; /* its tube's groups */
};

/* ---- Called by group.c -------------------------------------------------- */

/* Is g held back (never for the "" group)? */
bool glimit_held(const struct groups *gs, const struct group *g);
/* Groups with ready tasks held back now (0 without group limits). */
uint32_t glimit_held_count(const struct groups *gs);
/* Room in gs->lv for `cap` slots, when gs has one. SLUICE_ENOMEM. */
int glimit_room(struct groups *gs, uint32_t cap);
/* A named group was made in tb: its glive, as its tube's settings say.
 * Returns 0 or SLUICE_ENOMEM (nothing made). */
int glimit_group_new(struct tube *tb, struct group *g);
/* The group goes (it has no task): its glive with it. */
void glimit_group_drop(struct groups *gs, struct group *g);
/* The tube's groups go (group.c's groups_free): every glive with them. */
void glimit_groups_free(struct groups *gs);

/* ---- Called by the queue's state ---------------------------------------- */

/* Initialises and frees the queue's gdue heap. */
void qs_glimit_init(struct queue *q);
void qs_glimit_fini(struct queue *q);
/* t, of tube tb (which has groups), was placed TAKEN / leaves TAKEN: its
 * group's taken count and hold (a group let go wakes a take); a TAKE of
 * t was applied at `time` (tb may have no groups): its group's token. */
void qs_glimit_taken(struct queue *q, struct tube *tb, struct task *t);
void qs_glimit_spend(
    struct queue *q, struct tube *tb, struct task *t, int64_t time);
static inline void
qs_glimit_took(struct queue *q, struct tube *tb, struct task *t, int64_t time)
{
	if (tb->groups != NULL && tb->groups->lv != NULL) /* one test */
		qs_glimit_spend(q, tb, t, time);
}
void qs_glimit_untaken(struct queue *q, struct tube *tb, struct task *t);
/* The clock reached `now`: groups whose token came are let go. */
void qs_glimit_tick(struct queue *q, int64_t now);
/* The earliest token due, or INT64_MAX. */
int64_t qs_glimit_next(const struct queue *q);
/* Group `name`'s own settings in gc, or NULL. */
struct gover *gconf_find(const struct gconf *gc, const char *name, size_t len);
/* The limits in force for group `name` of a tube with settings gc (NULL:
 * none): its own limit by limit, else the default; and its pause. */
void gconf_resolve(const struct gconf *gc, const char *name, size_t len,
    struct qrec_limits *lim, bool *paused);
/* Whole tokens in v's bucket at `now` (0 without a rate). */
uint64_t glive_tokens(const struct glive *v, int64_t now);
/* Frees a tube's group settings (the tube goes; no live group). */
void gconf_free(struct gconf *gc);

/* Applies a GROUP_SET (its tube must exist: SLUICE_ECORRUPT).
 * SLUICE_ENOMEM changes nothing. */
int qs_apply_group_set(
    struct queue *q, int64_t time, const struct qrec_group_set *r);
/* Appends " group_limits:..." and " group NAME:..." for each name with
 * settings, in name order (queue_dump). 0 or SLUICE_ENOMEM. */
int glimit_dump(const struct tube *tb, struct buf *out);
/* Loads a snapshot's GROUP_SET entry for the tube loaded last. */
int qs_glimit_load(struct queue *q, struct rd *r);
/* Emits a tube's GROUP_SET snapshot entries (without allocating). */
int glimit_snapshot(const struct tube *tb, queue_emit_fn *emit, void *arg);
/* True when every invariant of tb's group limits holds. O(groups). */
bool qs_glimit_valid(const struct queue *q, const struct tube *tb);

#endif
