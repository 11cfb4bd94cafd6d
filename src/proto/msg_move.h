/* msg_move - the messages of a tube's move between clusters
 * (docs/scaling.md "Moving a tube", docs/protocol.md): move_out (0x35,
 * to the source), move_in (0x36, to the target), move_end (0x37, to the
 * target). Part of msg.h, which includes it where struct msg_str,
 * msg_iter and msg_tasks are defined: include "proto/msg.h", never this
 * file alone. */
#ifndef SLUICE_PROTO_MSG_MOVE_H
#define SLUICE_PROTO_MSG_MOVE_H

enum {
	MSG_MOVE_HOLD = 1, /* move_out: hold up to `max` tasks, answer them */
	MSG_MOVE_DROP = 2, /* move_out: drop the held tasks named */
	MSG_MOVE_KEYS = 3, /* move_out: the tube's key reservations */
	MSG_MOVE_LIVE = 4, /* move_out: the keys of the tube's live tasks */
	MSG_MOVE_KEEP = 5, /* move_out: the source's drain waits for the
	                      mover (until move_end there) */
	/* move_in's kinds, in the header's flags (0: copies) */
	MSG_MOVE_IN_PLACE = 0x01, /* placeholders of the source's live keys */
	MSG_MOVE_IN_PEND = 0x02,  /* keyed puts wait: keys pending (n 0) */
	MSG_MOVE_IN_READY = 0x04, /* the keys are here: puts go on (n 0) */
	MSG_MOVE_MAX = 1000, /* tasks held, dropped or copied by one request */
	MSG_MOVE_REP_TASKS = 0x01, /* reply flags: a hold's tasks */
	MSG_MOVE_REP_RES = 0x02,   /* move_in's results */
};

/* move_out, move_in, move_end. */
struct msg_move_req {
	uint8_t kind;           /* move_out: MSG_MOVE_HOLD .. MSG_MOVE_KEEP;
	                           move_in: 0 or one MSG_MOVE_IN_* flag */
	struct msg_str tube;    /* 1..MSG_TUBE_MAX bytes */
	struct msg_str source;  /* move_in: the source cluster, 1..MSG_NODE_MAX
	                           bytes of [A-Za-z0-9_.:-] */
	uint32_t max;           /* hold, keys: 1..MSG_MOVE_MAX */
	uint64_t after;         /* keys: of tasks whose ids are above it */
	uint32_t n;             /* drop: pairs; move_in: tasks (1..MAX; 0
	                           for pend and ready) */
	const uint64_t *ids;    /* drop, encode: n ids */
	const uint64_t *leases; /* drop, encode: and their leases */
	struct msg_iter it;     /* drop, decode: msg_next_move_drop() */
	/* move_in: the tasks as the source holds them (state: before
	 * their hold), as a take's reply carries them; a key reservation
	 * as keys answers it (state MSG_ST_DONE) */
	const struct msg_task *tasks; /* encode */
	struct msg_iter tasks_it;     /* decode: msg_next_task() */
};

bool msg_next_move_drop(struct msg_iter *it, uint64_t *id, uint64_t *lease);

/* One task of move_in's reply: 0 and its copy's id, or the SLUICE_E*
 * code that refused it. */
struct msg_move_res {
	uint16_t status;
	uint64_t id;
};

/* The reply: hold, the tasks held (held before first: a batch a mover
 * lost), each with its state before the hold and its lease; live, a
 * task each (id, tube, key, state now; no payload), lowest id first;
 * keep, n 1 when the mark was made now (move_in pend, ready: the same);
 * keys, a
 * task each (state MSG_ST_DONE, the id of the task whose key it was, its
 * tube and key, run_at: when the reservation ends, its version), lowest
 * id first, and none when there are no more; drop, how
 * many went (n); move_in, a result per task (n); move_end, n the source
 * ids the table held. */
struct msg_move_rep {
	uint32_t ntasks;              /* hold */
	const struct msg_task *tasks; /* hold, encode */
	struct msg_iter tasks_it;     /* hold, decode: msg_next_task() */
	uint32_t n;
	const struct msg_move_res *res; /* move_in, encode */
	struct msg_iter it; /* move_in, decode: msg_next_move_res() */
	uint8_t shape;      /* decode: MSG_MOVE_REP_TASKS or _RES as sent
	                       (lists of none say so only here) */
};

bool msg_next_move_res(struct msg_iter *it, struct msg_move_res *out);

#endif
