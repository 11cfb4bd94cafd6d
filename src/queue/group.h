/* group - a tube's fair groups: tasks of equal priority are handed out in
 * turn across the groups that have ready tasks.
 *
 * A put may name a group (1-200 bytes of the tube-name alphabet); the
 * tasks that name none form the "" group. A tube in which no task names a
 * group has no `groups` at all (tb->groups NULL) and keeps its one ready
 * heap, so its take path is what it always was and costs one check more.
 * Once a task names a group, the tube's ready tasks are split: the ""
 * group's stay in tb->ready, every named group has a heap of its own, and
 * the groups with ready tasks form the rotation, a heap of groups by (the
 * priority of their best ready task, their turn). A take serves the
 * rotation's top group's best task (by priority, due time, id) and gives
 * that group the next turn (the back of the line); a group that gets a
 * ready task after it had none joins at the back. So the order is:
 * priority first, then the groups in turn, then due time, then id. Every
 * operation is O(log n) in the tasks of a group and the groups of a tube.
 *
 * A group exists while tasks name it (in any state, done ones too) and is
 * freed with its last one; when the last named group goes, the tube's
 * groups go too. A task records its group as a 24-bit number in its
 * tube's table of groups (three bytes that the task's alignment left
 * free), 0 for none. A live group costs its struct (40 bytes and the
 * name: one 64-byte block for a name of up to 16 bytes), a slot in the
 * table (8 bytes), in the name index (8 bytes, at most 3/4 full) and in
 * the rotation (8 bytes): under 100 bytes for a name of up to 16 bytes,
 * 16 more for each 16 bytes of name beyond. A group of a tube with group
 * limits (glimit.h) costs 8 bytes more, and 88 with limits of its own. Its
 * heap keeps room for every task that names it, so placing a task in it
 * never allocates; while that is one task the room is inside the struct
 * (the place of the pointer to it).
 *
 * Each group counts its tasks taken now (`taken`, kept by glimit.c's
 * qs_glimit_taken/untaken from where a task is placed and unplaced): the
 * "" group's starts as the tube's taken tasks when its first named group
 * comes, since until then every taken task was the "" group's. So the
 * named groups' and the "" group's add up to the tube's ntaken.
 *
 * The turns are not in the log or the snapshot: a replay repeats them, a
 * snapshot restarts the rotation (every group's turn from 0, in the order
 * of the table). Pure: no I/O, no logging. */
#ifndef SLUICE_QUEUE_GROUP_H
#define SLUICE_QUEUE_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/heap.h"
#include "queue/idx.h"
#include "queue/task.h"

struct tube;
struct glive;

enum {
	GROUP_NAME_MAX = 200,           /* bytes of a group's name */
	GROUP_SLOTS_MAX = (1 << 24) - 1 /* live groups in one tube */
};

struct group {
	union {
		void **item; /* its ready tasks: a heap by (pri, run_at, id) */
		void *one;   /* the heap's one item while cap is 1 */
	};
	uint32_t len;       /* ready tasks */
	uint32_t cap;       /* room: at least ntasks */
	uint32_t turn;      /* the rotation serves the smallest first */
	uint32_t rpos;      /* in the rotation, while it has ready tasks */
	uint32_t ntasks;    /* tasks that name it, in every state */
	uint32_t pri;       /* the priority of its best ready task */
	uint32_t taken;     /* its tasks taken now (glimit.h) */
	uint32_t slot : 24; /* its number in the table; 0: the "" group */
	uint32_t name_len : 8;
	char name[];
};

/* The tubes that have fair groups, through their groups: the queue keeps
 * one, so that a listing of every tube's groups visits these only. */
struct groups_list {
	struct groups *head;
	uint32_t n;
};

struct groups {
	struct tube *tube;
	struct groups_list *all; /* the list it is in (NULL: not yet) */
	struct groups *lprev, *lnext;
	struct idx names;     /* named groups by the hash of their name */
	struct heap rotation; /* groups with ready tasks */
	struct group **table; /* by slot; a free slot holds the next free
	                         one, shifted left once and tagged 1 */
	uint32_t cap;         /* slots in the table, slot 0 unused */
	uint32_t free;        /* the first free slot; 0: none */
	uint32_t n;           /* named groups */
	uint32_t turn;        /* the last turn given (renumbered before it
	                         wraps: group.c) */
	struct glive **lv;    /* group limits by slot (glimit.h); NULL:
	                         the tube has no group settings */
	uint32_t lv_cap;      /* slots in lv */
	uint32_t *nlive;      /* the queue's count of glives */
	struct heap *due;     /* the queue's gdue heap */
	struct group none;    /* the "" group: its heap is tb->ready; last,
	                         since a group ends in its name */
};

/* Is this a valid group name (1..GROUP_NAME_MAX bytes of
 * [A-Za-z0-9_.:/-])? */
bool group_name_valid(const char *name, size_t len);

/* The named group of tb, or NULL. */
struct group *groups_find(const struct tube *tb, const char *name, size_t len);

/* Finds or creates the group `name` of tb (its groups too, then in
 * `all`), with room for one more task. Returns 0 or SLUICE_ENOMEM /
 * SLUICE_ELIMIT (a tube with GROUP_SLOTS_MAX groups), changing nothing
 * that groups_undo() does not take back. */
int groups_prepare(struct groups_list *all, struct tube *tb, const char *name,
    size_t len, struct group **out);
/* Takes back a groups_prepare() whose task never joined. */
void groups_undo(struct tube *tb, struct group *g);
/* t (not placed, of tube tb) names g from now on. */
void groups_join(struct tube *tb, struct group *g, struct task *t);
/* t (not placed) no longer names its group: an empty group is freed, and
 * with the last one the tube's groups. */
void groups_leave(struct tube *tb, struct task *t);

/* The group of t (the "" group for none); tb->groups is not NULL. */
struct group *groups_of(const struct tube *tb, const struct task *t);

/* Places a ready task in its group's heap / takes it out. */
void groups_push(struct groups *gs, struct task *t);
void groups_remove(struct groups *gs, struct task *t);
/* The next ready task to hand out, or NULL. */
struct task *groups_top(const struct groups *gs);
/* After g's ready tasks or its hold changed: in the rotation iff it has
 * ready tasks and is not held (glimit.h). */
void groups_rotate(struct groups *gs, struct group *g);
/* t, a ready task, is being taken: its group gets the next turn. */
void groups_served(struct groups *gs, const struct task *t);

/* The heap of a named group's ready tasks (group_items(g)[0] its best). */
static inline void *const *
group_items(const struct group *g)
{
	return g->cap > 1 ? g->item : (void *const *)&g->one;
}

/* Frees the groups of a tube that goes (its tasks are being freed). */
void groups_free(struct groups *gs);

/* True when every invariant holds. O(n). */
bool groups_valid(const struct groups *gs);

/* The task's group's number in its tube's table; 0: none. */
static inline uint32_t
group_slot(const struct task *t)
{
	return (uint32_t)t->group[0] | (uint32_t)t->group[1] << 8 |
	    (uint32_t)t->group[2] << 16;
}

/* Sets it (groups_join, and a task that takes another's place). */
static inline void
group_slot_set(struct task *t, uint32_t slot)
{
	t->group[0] = (uint8_t)slot;
	t->group[1] = (uint8_t)(slot >> 8);
	t->group[2] = (uint8_t)(slot >> 16);
}

#endif
