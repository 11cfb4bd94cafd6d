/* msg_deps - the protocol's names for dependencies between tasks: a
 * put's parents (flag 0x10) and a task record's (flag 0x40); their codec
 * is msg_deps.c. Part of msg.h, which includes it. */
#ifndef SLUICE_PROTO_MSG_DEPS_H
#define SLUICE_PROTO_MSG_DEPS_H

#include <stdint.h>

/* Dependencies (a put's flag 0x10, a task record's flag 0x40). */
enum {
	MSG_AFTER_MAX = 1000,    /* parents one put may name */
	MSG_CHILDREN_MAX = 1000, /* child ids a task record carries */
	MSG_RESULT_MAX = 65535,  /* bytes of an ack's result */
};

/* What a waiting task does when a parent fails for good. */
enum msg_on_parent {
	MSG_PARENT_FAIL = 0,   /* buried: "task N failed: ERROR" */
	MSG_PARENT_IGNORE = 1, /* the parent counts as done */
	MSG_PARENT_CANCEL = 2, /* deleted; its children follow their rules */
};

/* A parent as its child's record shows it. */
struct msg_parent {
	uint64_t id;
	uint8_t outcome;       /* 0 not finished, 1 acked, 2 failed */
	struct msg_str result; /* acked with a result (0..MSG_RESULT_MAX) */
};

#endif
