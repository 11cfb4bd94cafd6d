/* fault - named fault-injection points for tests of the I/O paths.
 *
 * Compiled in only when SLUICE_FAULT is defined (the sluice_log_fault
 * library of the fault test): in every other build FAULT_HIT(point) is the
 * constant 0 and no fault code exists in the binary. A test arms a point
 * to fail its Nth call from now with an effect; the code at the point
 * calls FAULT_HIT and, when it returns non-zero, behaves as if the system
 * call had failed that way. Counters are atomic: the WAL's preallocator
 * thread hits points too. */
#ifndef SLUICE_UTIL_FAULT_H
#define SLUICE_UTIL_FAULT_H

/* The server's files compiled once for sluiced and sluiced-fault have no
 * fault point: one that needs a point goes to SERVER_FAULT_SOURCES
 * (src/server/CMakeLists.txt). */
#ifdef SLUICE_NO_FAULT_POINTS
#error "a file with fault points: list it in SERVER_FAULT_SOURCES"
#endif

#include <stdbool.h>

enum fault_point {
	FAULT_WAL_WRITE,   /* a write of a batch (io_uring) */
	FAULT_WAL_FSYNC,   /* an fdatasync of a segment or fsync of the dir */
	FAULT_WAL_RENAME,  /* activating a spare segment (rename) */
	FAULT_SEG_ALLOC,   /* preallocating a segment (fallocate) */
	FAULT_SEG_CUT,     /* zeroing a torn tail */
	FAULT_WAL_ODIRECT, /* opening a segment O_DIRECT (-EINVAL: a file
	                    * system that refuses it) */
	FAULT_ELECT_LOST,  /* a create of the leader key that etcd made but
	                    * whose answer is lost: the caller sees a
	                    * timeout (any effect) */
	FAULT_POINT_COUNT
};

enum {
	FAULT_SHORT = 1, /* effect: a short write (about half is written) */
};

/* Pause points: places a test wants held open for a while, to look at the
 * server in that state (a /health that answers "recovering"). */
enum fault_pause {
	FAULT_PAUSE_RECOVER, /* recovery, after the snapshot, before the log */
	FAULT_PAUSE_FSYNC,   /* before each fdatasync of the log: a slow disk */
	FAULT_PAUSE_REMOVE,  /* before the log's needless segments are
	                      * removed (a slow unlink and directory sync) */
	FAULT_PAUSE_BATCH_FIRE, /* a leader holds an ended batch's callbacks
	                         * this long after its end (read with
	                         * FAULT_PAUSE_MS; nothing sleeps), so that
	                         * a test kills it between the two */
	FAULT_PAUSE_MAPWATCH,   /* a node's map thread holds a change of the
	                         * map's entries its poll read this long
	                         * before it publishes it (not its first read
	                         * at start): a node behind the map
	                         * (failover/mapwatch.c) */
	FAULT_PAUSE_ZERO,       /* before each MiB of a spare segment's zeros
	                         * written after it was made (a slow disk
	                         * under the preallocator) */
	FAULT_PAUSE_COUNT
};

#ifdef SLUICE_FAULT

/* Makes the `nth` call (1 = the next one) of `point` fail with `effect`:
 * a negated errno (-EIO, -ENOSPC) or FAULT_SHORT. With `sticky`, every
 * later call fails too (a disk that stays full). Resets the point's
 * count. */
void fault_arm(enum fault_point point, unsigned nth, int effect, bool sticky);

/* Disarms every point and zeroes the counters. */
void fault_reset(void);

/* Calls of `point` since it was armed or reset. */
unsigned fault_calls(enum fault_point point);

/* Times `point` fired since it was armed or reset. */
unsigned fault_fired(enum fault_point point);

/* Counts a call of `point`; returns 0, or the effect when it fires. */
int fault_hit(enum fault_point point);

/* Arms a point from text, for a server process started by a test
 * (sluiced-fault reads $SLUICE_FAULT): "POINT:NTH:EFFECT[:sticky]" with
 * POINT wal_write, wal_fsync, wal_rename, seg_alloc, seg_cut,
 * wal_odirect or elect_lost; EFFECT
 * EIO, ENOSPC or short. NULL or "" arms nothing. Returns 0, or -1 when
 * the text does not parse. */
int fault_arm_spec(const char *spec);

/* Makes every later call of pause point `point` sleep `ms` milliseconds
 * (0 disarms it). fault_reset disarms pauses too. */
void fault_arm_pause(enum fault_pause point, unsigned ms);

/* Sleeps for the time armed at `point`, if any. */
void fault_pause(enum fault_pause point);

/* The milliseconds armed at `point` (0: disarmed): for a caller that
 * waits without blocking its thread (the log's ring commit delays its
 * durable write with a timer on the ring). */
unsigned fault_pause_ms(enum fault_pause point);

/* Arms a pause point from text (sluiced-fault reads $SLUICE_FAULT_PAUSE):
 * "POINT:MS" with POINT recover, fsync, remove, batch_fire, mapwatch or
 * zero.
 * NULL or "" arms nothing.
 * Returns 0, or -1 when the text does not parse. */
int fault_arm_pause_spec(const char *spec);

#define FAULT_HIT(point)      fault_hit(point)
#define FAULT_PAUSE(point)    fault_pause(point)
#define FAULT_PAUSE_MS(point) fault_pause_ms(point)

#else

#define FAULT_HIT(point)      0
#define FAULT_PAUSE(point)    ((void)0)
#define FAULT_PAUSE_MS(point) 0u

#endif

#endif
