/* reserve - how much log space is kept for work already accepted, so that
 * a full disk refuses new work only (SPEC 4).
 *
 * The rule (docs/log-format.md, "Space reservation"). Each live task
 * needs the records that finish it: a waiting task (ready or delayed) a
 * take and an end; a taken task its end; a buried task a kick, a take and
 * an end. The end is the largest record that may end a lease from the
 * reserve: an ack, a release, a bury (or beanstalk's release-then-bury),
 * a lost lease, or a fail, setback or bury whose error text is cut to
 * RESERVE_ERROR_MAX bytes (less the dead-letter tube's name when it moves
 * the task there; a lost lease's reason is at most RESERVE_WHY_MAX).
 * Their sum over the live tasks is the floor. Every size is that of the
 * record as the log writes it (header, body, padding), measured by
 * encoding one.
 *
 * The log (wal.h) keeps three levels:
 *   - records that finish accepted work (a first take, an ack, a fail,
 *     a release, a bury, a delete, a lost lease) may use everything: each
 *     uses what its own task reserved;
 *   - retries (the take of a task taken before, a touch, a kick, the ack
 *     of a recurring task or a move to another tube, a pause) must leave
 *     the floor: they spend the pool, and are refused once it is spent;
 *   - new work (puts, replaces) must leave the floor, the pool and a new
 *     task's take and end.
 * Pure: no I/O, no state. */
#ifndef SLUICE_SERVER_CORE_RESERVE_H
#define SLUICE_SERVER_CORE_RESERVE_H

#include <stddef.h>
#include <stdint.h>

enum {
	RESERVE_ERROR_MAX = 256, /* a fail's error text written from the
	                          * reserve, at most (longer ones are cut) */
	RESERVE_WHY_MAX = 128,   /* a lost lease's reason ("ttr expired
	                          * after 60s", "worker disconnected (peer)"),
	                          * at most: never cut */
	RESERVE_POOL = 1 << 20,  /* room for retries once new work is
	                          * refused ... */
	RESERVE_POOL_DIV = 8,    /* ... at most this part of --max-log-bytes */
};

/* Bytes in the log of the records a task may still need. */
struct reserve_sizes {
	uint64_t take; /* a take (TAKE_LEASE) */
	uint64_t end;  /* the largest end of a lease written from the reserve */
	uint64_t kick; /* a kick */
};

/* Live tasks by state. */
struct reserve_counts {
	uint64_t ready, delayed, taken, buried;
};

/* Measures the sizes by encoding each record (qrec_encode) and framing
 * it (rec_size). */
void reserve_sizes_init(struct reserve_sizes *z);

/* The floor: what every live task in `n` still needs, and one take more
 * (a retry that starts a task over is checked before its record adds the
 * task's next take). Saturates at UINT64_MAX. */
uint64_t reserve_floor(
    const struct reserve_sizes *z, const struct reserve_counts *n);

/* The pool for a log limited to `max_bytes` (0: no limit): RESERVE_POOL,
 * at most max_bytes / RESERVE_POOL_DIV. */
uint64_t reserve_pool(uint64_t max_bytes);

/* What new work must leave beyond the floor: the pool, and the take and
 * end of the task it creates. */
uint64_t reserve_margin(const struct reserve_sizes *z, uint64_t pool);

/* The length to which a fail's error text of `len` bytes is cut when it
 * is written from the reserve: at most `max` bytes (RESERVE_ERROR_MAX,
 * less the name of the dead-letter tube the fail moves the task to),
 * never in the middle of a UTF-8 character. */
size_t reserve_error_len(const char *text, size_t len, size_t max);

#endif
