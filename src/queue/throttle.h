/* throttle - the keys a put with a throttle window holds: for each (tube,
 * key) whose last accepted throttled put was less than its window ago,
 * the task that put made and the time the window ends. A throttled put
 * of the key before then is ignored (decide_dedup.c), whatever became of
 * the task: taken, done, deleted. The windows are state like any other:
 * a PUT_T record opens one (apply), a snapshot holds those still open
 * (THROTTLE entries), and they are kept apart from the key index so that
 * a key's task and its dedup window work as they always did.
 *
 * Design: an idx of entries by the hash of (tube, key); an entry past its
 * end reads as absent, and queue_tick frees those at most once a second
 * of the queue's clock (a sweep over the entries), so an entry costs its
 * bytes for at most a second past its window. Pure: no I/O. */
#ifndef SLUICE_QUEUE_THROTTLE_H
#define SLUICE_QUEUE_THROTTLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/queue.h"
#include "util/buf.h"

struct throttle {
	uint64_t hash;
	uint64_t id;   /* the task the window's put made */
	int64_t until; /* the window ends (exclusive) */
	uint16_t tube_len;
	uint16_t key_len;
	char data[]; /* tube, then key */
};

/* An empty set of windows (queue_init). */
void qs_throttle_init(struct queue *q);

/* Whether a window of key in tube can be opened: the key has an entry
 * (open or ended, not yet swept), or the windows are fewer than their
 * bound (QREC_THROTTLE_WINDOWS_MAX, or what qs_throttle_set_max set: a
 * test's). */
bool qs_throttle_room(const struct queue *q, const char *tube, size_t tube_len,
    const char *key, size_t key_len);
void qs_throttle_set_max(struct queue *q, uint32_t max);

/* The open window of key in tube at `now`, or NULL. */
const struct throttle *qs_throttle_find(const struct queue *q, int64_t now,
    const char *tube, size_t tube_len, const char *key, size_t key_len);

/* Opens (or moves) the window of key in tube: it names task `id` and ends
 * at `until`. Returns 0 or SLUICE_ENOMEM (then nothing changed). */
int qs_throttle_set(struct queue *q, const char *tube, size_t tube_len,
    const char *key, size_t key_len, uint64_t id, int64_t until);

/* Frees the entries whose window ended by `now` (at most once a second of
 * the clock). */
void qs_throttle_sweep(struct queue *q, int64_t now);

/* Frees every entry and the index. */
void qs_throttle_fini(struct queue *q);

/* The windows' invariants (queue_check): NULL, or what is broken. */
const char *qs_throttle_check(const struct queue *q);

/* Open windows (for queue_check and stats). */
uint64_t qs_throttle_count(const struct queue *q);

/* Appends a line for each open window, in (tube, key) order, to a dump
 * (queue_dump). Returns 0 or SLUICE_ENOMEM. */
int qs_throttle_dump(const struct queue *q, struct buf *out);

/* Emits a THROTTLE entry for every window open at the queue's clock:
 * str16 tube, str16 key, u64 id, i64 until. Allocates nothing. */
int qs_throttle_snapshot_write(
    const struct queue *q, queue_emit_fn *emit, void *arg);

/* Loads one THROTTLE entry. SLUICE_ECORRUPT on a bad entry or a key given
 * twice, SLUICE_ENOMEM. */
int qs_throttle_load(struct queue *q, struct rd *r);

#endif
