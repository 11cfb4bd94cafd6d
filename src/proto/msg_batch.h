/* msg_batch - the wire form of the batch ops, batch_show (0x2b) and
 * batch_set (0x2c): their requests and the batch of their replies
 * (docs/protocol.md, docs/queue.md "Batches").
 *
 * Part of proto/msg.h, which includes it after struct msg_str: include
 * "proto/msg.h", never this file alone. */
#ifndef SLUICE_PROTO_MSG_BATCH_H
#define SLUICE_PROTO_MSG_BATCH_H

enum {
	MSG_BATCH_NAME_MAX = 200,
	MSG_BATCH_SUCCESS = 0x01,  /* batch_set: on_success given */
	MSG_BATCH_COMPLETE = 0x02, /* on_complete given */
	MSG_BATCH_CLOSE = 0x04,    /* close the batch (after the callbacks) */
	MSG_BATCH_CANCEL = 0x08,   /* close it and cancel its live tasks */
	MSG_BATCH_ALL = 0x0f,
	MSG_BATCHES_MAX = 1000, /* batches in one list (batch_show 0x01) */
};

/* MSG_OP_BATCH_SHOW: name, or with flag 0x01 (list) a limit instead;
 * MSG_OP_BATCH_SET: name, what (MSG_BATCH_* bits), each callback given
 * as a tube (empty: none from now on) and a payload. */
struct msg_batch_req {
	bool list;      /* batch_show: every batch, up to `limit` */
	uint32_t limit; /* list: 1..MSG_BATCHES_MAX */
	struct msg_str name;
	uint8_t what;
	struct msg_str success_tube;
	struct msg_str success_payload;
	struct msg_str complete_tube;
	struct msg_str complete_payload;
};

/* A batch, as both ops answer. */
struct msg_batch {
	struct msg_str name;
	uint64_t total, waiting, ready, delayed, taken, buried, acked, failed;
	uint64_t started_at; /* unix ms; 0: no task yet */
	uint64_t ended_at;   /* 0: not ended */
	bool closed, ended;
	uint8_t owed;  /* callbacks to put (MSG_BATCH_SUCCESS, _COMPLETE) */
	uint8_t fired; /* callbacks put */
	struct msg_str success_tube; /* empty: none */
	uint64_t success_id;         /* the task put; 0: none */
	struct msg_str complete_tube;
	uint64_t complete_id;
};

/* What the batch ops answer: one batch, or with flag 0x01 (the answer of
 * a batch_show that asked for the list) up to MSG_BATCHES_MAX of them,
 * the open ones first (the latest started first), then the ended ones
 * (the latest ended first), and how many the server holds. */
struct msg_batch_rep {
	bool list;
	struct msg_batch one;      /* !list */
	uint64_t total;            /* list: the batches the server holds */
	uint32_t n;                /* list: the batches in this answer */
	const struct msg_batch *v; /* encode */
	struct msg_iter it;        /* decode: msg_next_batch() */
};

bool msg_next_batch(struct msg_iter *it, struct msg_batch *out);

#endif
