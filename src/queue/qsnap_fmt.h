/* qsnap_fmt - the constants of the queue's snapshot format that its
 * writer (qsnap.c, which holds the layout of every entry) and its loader
 * (qsnap_load.c) share: the versions, the sizes, the TASK entry's flag
 * bits. */
#ifndef SLUICE_QUEUE_QSNAP_FMT_H
#define SLUICE_QUEUE_QSNAP_FMT_H

#include "queue/qrec.h"

enum {
	QSNAP_VERSION = 4,
	QSNAP_VERSION_MIN = 2, /* no done tasks, no last take */
	/* 3: DEDUP entries name no tube (keys were one namespace) */
	/* The largest fixed part: a TASK with a 200-byte key and the
	 * longest error. */
	QSNAP_HDR_MAX = 192 + QREC_KEY_MAX + QREC_ERROR_MAX + QREC_RESULT_MAX,
	/* Tasks ahead of the one being written whose memory is fetched. */
	QSNAP_PREFETCH = 8,
	/* The most the key count and the TUBE counts reserve up front: a
	 * damaged count cannot ask for more (past it the key index and the
	 * heaps grow as entries come). The id index is sized for META's
	 * count, whatever it is (see load_meta). */
	QSNAP_RESERVE_MAX = 1 << 24,
};

/* THROTTLE: str16 tube, str16 key, u64 id, i64 until - each open throttle
 * window of a key (throttle.h), after the HOURLY entries; numbered as the
 * record that opens one (PUT_T). Beside queue_snap_type's entries. */
enum { QSNAP_THROTTLE = 30 };

/* CANCEL: u64 id, u64 lease - a taken task that is cancelled (numbered as
 * the record); OUTCOME: u64 id, u8 kind, i64 time, i64 expires, str16
 * tube, str16 text - the outcome of a finished task (outcome.h). After
 * the THROTTLE entries, marks first, outcomes oldest first. */
enum { QSNAP_CANCEL = 46, QSNAP_OUTCOME = 47 };

enum {
	TF_STATE = 0x07,
	TF_KEY = 0x08,
	TF_ERROR = 0x10,
	TF_PERIOD = 0x20,
	TF_REPL = 0x40,
	TF_DETACHED = 0x80,
};

#endif
