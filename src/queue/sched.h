/* sched - schedules: a cron expression in a time zone that puts a task
 * into a tube at each of its slots. The queue's side, beside queue.h:
 * the schedules themselves, their decisions and records (SCHED_SET,
 * SCHED_DELETE, SCHED_PAUSE, SCHED_FIRE; qrec.h), their snapshot entry.
 *
 * Pure like the rest of the queue: when a slot comes is the server's
 * question (it reads the zone's file and the clock, util/cron.h), and it
 * asks queue_decide_sched_fire() for the record that fires it. What the
 * queue keeps is the decision: `from`, the schedule's last decided slot
 * (or the time it was set or resumed), so a slot at or before `from` never
 * fires again, on this node or on any node that applies the same log.
 * The task a slot puts has the key "NAME@YYYY-MM-DDTHH:MMZ" (the slot in
 * UTC) in its tube: a put of that key already live or in its dedup
 * window makes the slot a skipped one.
 *
 * A schedule holds one allocation: the struct, its four strings and its
 * payload (queue_sched_mem; at most 512 bytes besides the payload). */
#ifndef SLUICE_QUEUE_SCHED_H
#define SLUICE_QUEUE_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/qrec.h"
#include "queue/queue.h"
#include "util/cron.h"

enum {
	QUEUE_SCHED_MAX = 10000, /* schedules a queue holds */
	QUEUE_SCHED_KEY_MAX = QREC_SCHED_NAME_MAX + 32,
};

struct sched {
	struct cron cron; /* parsed from cron_text */
	int64_t from;     /* slots after it are still to come */
	int64_t created_at;
	int64_t updated_at;
	int64_t last_slot; /* the last slot that put a task; 0: none */
	uint64_t last_id;  /* its task */
	uint64_t fired;    /* slots that put a task */
	uint64_t skipped;  /* slots decided without one */
	int64_t next_at;   /* the server's note of the next slot (0: not
	                      known); no part of the state */
	uint32_t pri;
	uint32_t ttr;
	uint32_t max_attempts;
	uint32_t payload_len;
	uint8_t name_len;
	uint8_t tube_len;
	uint8_t cron_len;
	uint8_t tz_len;
	uint8_t catch_up; /* enum qrec_catch_up */
	bool paused;
	/* then name, tube, cron text and zone, each NUL-terminated, and the
	 * payload: sched_name() and the others below */
};

static inline const char *
sched_name(const struct sched *s)
{
	return (const char *)(s + 1);
}

static inline const char *
sched_tube(const struct sched *s)
{
	return sched_name(s) + s->name_len + 1;
}

static inline const char *
sched_cron(const struct sched *s)
{
	return sched_tube(s) + s->tube_len + 1;
}

static inline const char *
sched_tz(const struct sched *s)
{
	return sched_cron(s) + s->cron_len + 1;
}

static inline const void *
sched_payload(const struct sched *s)
{
	return sched_tz(s) + s->tz_len + 1;
}

struct queue_sched_req {
	const char *name;
	size_t name_len;
	const char *tube;
	size_t tube_len;
	const char *cron;
	size_t cron_len;
	const char *tz; /* a zone the server found (tz_load); len 0: UTC */
	size_t tz_len;
	uint8_t catch_up;
	bool paused;
	uint32_t pri;
	uint32_t ttr; /* 0: the configured default */
	uint32_t max_attempts;
	const void *payload;
	size_t payload_len;
};

/* Creates or replaces a schedule; its slots after `now` are to fire.
 * Errors, with a text in err (errlen > 0): SLUICE_ESCHED (a bad name, or a
 * cron expression with the field and the value it refuses), SLUICE_ETUBE,
 * SLUICE_ETOOBIG (payload over max_payload), SLUICE_EINVAL (catch-up, a
 * ttr over the limit, a zone name that is not valid), SLUICE_ELIMIT
 * (QUEUE_SCHED_MAX schedules). Nothing changes on error. */
int queue_decide_sched_set(struct queue *q, int64_t now,
    const struct queue_sched_req *req, struct qrec *out, char *err,
    size_t errlen);

/* Deletes a schedule (tasks it put stay). SLUICE_ENOTFOUND. */
int queue_decide_sched_delete(
    struct queue *q, const char *name, size_t len, struct qrec *out);

/* Pauses (no slot fires) or resumes (slots after `now` fire: those of the
 * pause are skipped). SLUICE_ENOTFOUND; QREC_NONE when already so. */
int queue_decide_sched_pause(struct queue *q, int64_t now, const char *name,
    size_t len, bool paused, struct qrec *out);

/* Decides the schedule's slots up to `slot` (> its `from`): with `put`,
 * the slot's task is put unless its key is taken in the tube (then, as
 * without `put`, the slots are skipped). `keybuf` (QUEUE_SCHED_KEY_MAX
 * bytes) holds the key the record borrows. Errors: SLUICE_ENOTFOUND,
 * SLUICE_ESTATE (paused, or slot not after `from`), those of a put
 * (SLUICE_ELIMIT: max_tasks). *put_id: the task, 0 when none. */
int queue_decide_sched_fire(struct queue *q, int64_t now, const char *name,
    size_t len, int64_t slot, bool put, char *keybuf, struct qrec *out,
    uint64_t *put_id);

/* The schedules, in name order: count, the i-th, one by name (NULL). */
size_t queue_sched_count(const struct queue *q);
struct sched *queue_sched_at(const struct queue *q, size_t i);
struct sched *queue_sched_find(
    const struct queue *q, const char *name, size_t len);

/* Grows at every change of a schedule (each apply of its records), so a
 * reader knows when its notes (next_at) may be out of date. */
uint64_t queue_sched_gen(const struct queue *q);

/* Bytes a schedule holds (its allocation), and all of them. */
size_t queue_sched_mem(const struct sched *s);

/* The key of slot `slot` of schedule `name`: "NAME@YYYY-MM-DDTHH:MMZ"
 * into buf (QUEUE_SCHED_KEY_MAX bytes). Returns its length. */
size_t queue_sched_key(const char *name, size_t len, int64_t slot, char *buf);

/* "none", "one", "all"; a name back to its mode (-1: unknown). */
const char *queue_sched_catch_name(uint8_t mode);
int queue_sched_catch_parse(const char *s, size_t len);

#endif
