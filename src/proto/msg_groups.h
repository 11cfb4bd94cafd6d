/* msg_groups - the groups op (0x29): a tube's fair groups by backlog,
 * with their ready and taken counts and the age of their oldest ready
 * task (layout: docs/protocol.md, "groups"). Part of msg.h, which includes
 * it where its types are needed: include "proto/msg.h", never this file
 * alone. */
#ifndef SLUICE_PROTO_MSG_GROUPS_H
#define SLUICE_PROTO_MSG_GROUPS_H

enum { MSG_GROUPS_MAX = 1000 }; /* groups in one reply */

/* groups: `tube` first, as the member `tube` of the request it shares its
 * place with. */
struct msg_groups_req {
	struct msg_str tube; /* len 0: every tube that has fair groups */
	uint32_t limit;      /* 1..MSG_GROUPS_MAX, else EINVAL / ELIMIT */
};

/* One group of the reply. */
struct msg_group_row {
	struct msg_str tube;
	struct msg_str group;      /* len 0: the tasks put without one */
	uint64_t ready;            /* its ready tasks */
	uint64_t taken;            /* its tasks taken now */
	uint64_t oldest_ready_age; /* ms; 0 when none is ready */
};

struct msg_groups {
	uint64_t total; /* groups with ready or taken tasks; n of them here */
	uint32_t n;     /* 0..MSG_GROUPS_MAX, the largest backlog first */
	const struct msg_group_row *rows; /* encode */
	struct msg_iter it;               /* decode: msg_next_group_row() */
};

bool msg_next_group_row(struct msg_iter *it, struct msg_group_row *out);

#endif
