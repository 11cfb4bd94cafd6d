/* task - one task in memory, and the rarely used parts kept beside it.
 *
 * Memory: a task is one allocation holding its fixed fields and its
 * payload (80 bytes + payload), from its queue's pool of slabs, without
 * a malloc header (tslab.h). What only some tasks need - the lease of a
 * taken task, a key, a last error, a period, a pending replacement, the
 * take time and result of a done task - lives
 * in a `task_ext`, allocated when first needed and freed when empty. The
 * id index and the heaps hold pointers to tasks; a task records its
 * position in the heap of its state (hpos) and, while ready, in its tube's
 * age heap (apos); a done task is in its tube's done heap (hpos) and the
 * queue's purge heap (apos), and its run_at is the time it is purged. */
#ifndef SLUICE_QUEUE_TASK_H
#define SLUICE_QUEUE_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tube;
struct task;

/* New content for a taken task, applied when its lease ends. */
struct repl {
	uint64_t version; /* the client's version of this content; 0: none */
	int64_t run_at;
	int64_t period;
	uint32_t pri;
	uint32_t ttr;
	uint32_t max_attempts;
	uint32_t payload_len;
	uint8_t payload[];
};

/* A key of a tube: of a live task (task != NULL), or reserved after its
 * task completed (task == NULL) until `expires`; such dedup entries are listed
 * oldest first through prev/next (a held one is in no list). A done task still
 * points at its dedup entry (ext->key) while the entry lasts. The key holds the
 * client's version of its task's content (a put with if_newer; 0: none), and
 * keeps it once the task completed, for the dedup window: a late put with an
 * older version finds the version of the work already done there. */
struct keyent {
	struct task *task;
	struct keyent *prev;
	struct keyent *next;
	uint64_t id;
	int64_t expires;   /* dedup entry: reserved until then */
	uint64_t version;  /* its (last) task's content's; 0: none */
	uint64_t hash;     /* of (tube, key) */
	uint16_t len;      /* the key's bytes */
	uint16_t tube_len; /* its tube's name's, after the key; 0: a
	                      reservation in every tube (a dedup entry of a
	                      snapshot older than keys per tube) */
	/* Held: the reservation ended, but its done task is still kept and
	 * had a version: the entry stays (out of the dedup list) for that
	 * version, until the done task goes or a put takes the key. */
	uint8_t held;
	char key[]; /* the key, then its tube's name */
};

/* The name of the tube whose key this is (tube_len bytes). */
static inline const char *
keyent_tube(const struct keyent *ke)
{
	return ke->key + ke->len;
}

struct task_ext {
	/* The lease; meaningful while the task is taken (taken_at: the last
	 * take, kept after the lease ends; a done task's duration is
	 * updated_at - taken_at). */
	uint64_t lease;
	uint64_t session;
	int64_t taken_at;
	int64_t deadline;
	struct task *sprev; /* the tasks of one session: a list whose head */
	struct task *snext; /* is in the queue's session index */
	bool taken;
	bool detached;
	/* Set at any time. */
	uint16_t error_len;
	uint16_t result_len;
	char *error;  /* last_error, not NUL-terminated; NULL when none */
	char *result; /* a done task's result; NULL when none */
	int64_t period;
	struct keyent *key;
	struct repl *repl;
};

struct task {
	uint64_t id;
	int64_t run_at; /* delayed: when ready; ready: since when */
	int64_t created_at;
	int64_t updated_at;
	struct task_ext *ext; /* NULL when nothing in it would be set */
	uint32_t tslot;       /* its tube's slot (qs_tube_of) */
	uint32_t pri;
	uint32_t ttr;
	uint32_t attempts;
	uint32_t max_attempts;
	uint32_t hpos; /* in the heap of its state */
	uint32_t apos; /* in its tube's age heap, while ready */
	uint32_t payload_len;
	uint8_t state;    /* enum queue_state */
	uint8_t group[3]; /* its group's slot in its tube (group.h); 0: none */
	uint8_t payload[];
};

struct tslab_pool;

/* The bytes of a task with a payload of `len` bytes. */
static inline size_t
task_size(size_t len)
{
	return offsetof(struct task, payload) + len;
}

/* A task with a copy of the payload, every other field zero, in no heap,
 * from the queue's pool (tslab.h). NULL when out of memory. */
struct task *task_new(struct tslab_pool *pool, const void *payload, size_t len);

/* Frees the task (back to `pool`) and its ext (not its key entry).
 * Accepts NULL. */
void task_free(struct tslab_pool *pool, struct task *t);

struct repl *repl_new(const void *payload, size_t len);

/* Makes sure t->ext exists. Returns 0 or SLUICE_ENOMEM. */
int task_ext_need(struct task *t);

/* Frees t->ext when nothing in it is set. */
void task_ext_trim(struct task *t);

/* Replaces last_error with `copy` (malloc'd; the task owns it from now
 * on). copy NULL: no error. The ext must exist when copy != NULL. */
void task_put_error(struct task *t, char *copy, size_t len);

static inline int64_t
task_period(const struct task *t)
{
	return t->ext ? t->ext->period : 0;
}

static inline bool
task_has_repl(const struct task *t)
{
	return t->ext != NULL && t->ext->repl != NULL;
}

static inline bool
task_has_key(const struct task *t)
{
	return t->ext != NULL && t->ext->key != NULL;
}

/* The client's version of the task's content; 0: none (only a keyed task
 * has one). */
static inline uint64_t
task_version(const struct task *t)
{
	return task_has_key(t) && t->ext->key->task == t ? t->ext->key->version
	                                                 : 0;
}

#endif
