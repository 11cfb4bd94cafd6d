/* msg_node - the wire codec of the messages that act on the node and
 * its cluster: snapshot, promote, follow, auth, cluster (the members as
 * etcd knows them) and switchover. Decoders stand beside encoders; msg.c
 * frames them and sends each op here through msg_node_family. */
#include <assert.h>
#include <string.h>

#include "proto/msg.h"
#include "proto/msg_wire.h"
#include "sluice.h"

/* One member of a cluster reply. */
static int
get_member(struct rd *r, struct msg_member *out)
{
	memset(out, 0, sizeof(*out));
	TRY(msg_get_node(r, false, &out->name));
	TRY(msg_get_text(r, MSG_URL_MAX, &out->client));
	TRY(msg_get_text(r, MSG_URL_MAX, &out->repl));
	out->role = rd_u8(r);
	out->flags = rd_u8(r);
	out->epoch = rd_u64(r);
	out->durable_lsn = rd_u64(r);
	out->lag_records = rd_u64(r);
	out->lease_until = (int64_t)rd_u64(r);
	out->age_ms = rd_u64(r);
	NEED(r);
	if (out->role >= MSG_NODE_ROLE_END_ || (out->flags & ~MSG_MEMBER_ALL))
		return SLUICE_EPROTO;
	return 0;
}

static int
enc_member(struct buf *b, const struct msg_member *mb)
{
	if (mb->role >= MSG_NODE_ROLE_END_ || (mb->flags & ~MSG_MEMBER_ALL))
		return SLUICE_EINVAL;
	TRY(msg_put_node(b, mb->name, false));
	TRY(msg_put_text(b, mb->client, MSG_URL_MAX));
	TRY(msg_put_text(b, mb->repl, MSG_URL_MAX));
	buf_put_u8(b, mb->role);
	buf_put_u8(b, mb->flags);
	buf_put_u64(b, mb->epoch);
	buf_put_u64(b, mb->durable_lsn);
	buf_put_u64(b, mb->lag_records);
	buf_put_u64(b, (uint64_t)mb->lease_until);
	buf_put_u64(b, mb->age_ms);
	return 0;
}

static int
get_cluster(struct rd *r, struct msg_cluster *c)
{
	struct msg_member mb;

	TRY(msg_get_node(r, false, &c->cluster));
	TRY(msg_get_node(r, false, &c->node));
	TRY(msg_get_node(r, true, &c->leader));
	c->ttl_ms = rd_u32(r);
	NEED(r);
	TRY(msg_get_text(r, MSG_TEXT_MAX, &c->etcd_error));
	c->n = rd_u32(r);
	NEED(r);
	if (c->n > MSG_CLUSTER_MEMBERS_MAX)
		return SLUICE_ELIMIT;
	GET_EACH(&c->it, r, c->n, 0, get_member(r, &mb));
	return 0;
}

static int
enc_cluster(struct buf *b, const struct msg_cluster *c)
{
	struct msg_iter it = c->it;
	const struct msg_member *e;
	struct msg_member one;

	TRY(msg_put_node(b, c->cluster, false));
	TRY(msg_put_node(b, c->node, false));
	TRY(msg_put_node(b, c->leader, true));
	buf_put_u32(b, c->ttl_ms);
	TRY(msg_put_text(b, c->etcd_error, MSG_TEXT_MAX));
	if (c->n > MSG_CLUSTER_MEMBERS_MAX)
		return SLUICE_ELIMIT;
	buf_put_u32(b, c->n);
	for (uint32_t i = 0; i < c->n; i++) {
		if ((e = LIST_AT(c->members, i, it, msg_next_member, one)) ==
		    NULL)
			return SLUICE_EINVAL;
		TRY(enc_member(b, e));
	}
	return 0;
}

bool
msg_next_member(struct msg_iter *it, struct msg_member *out)
{
	NEXT(it, get_member(&it->r, out));
}

/* ---- requests ---------------------------------------------------------- */

/* Decodes the body of a request of this family (the head is checked). */
static int
msg_node_get_req(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_req *q)
{
	(void)flags;
	(void)pmax;

	switch (op) {
	case MSG_OP_SNAPSHOT:
	case MSG_OP_PROMOTE:
	case MSG_OP_CLUSTER:
		return 0;
	case MSG_OP_FOLLOW:
		TRY(msg_get_text(r, MSG_URL_MAX, &q->url));
		return q->url.len == 0 ? SLUICE_EINVAL : 0;
	case MSG_OP_AUTH:
		TRY(msg_get_text(r, MSG_TOKEN_MAX, &q->token));
		return q->token.len == 0 ? SLUICE_EINVAL : 0;
	case MSG_OP_SWITCHOVER:
		TRY(msg_get_node(r, false, &q->switchover.node));
		q->switchover.timeout_ms = rd_u32(r);
		NEED(r);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

/* Encodes the body of a request of this family, checked as its decoder
 * checks it. */
static int
msg_node_put_req(struct buf *b, const struct msg_req *q)
{
	switch (q->op) {
	case MSG_OP_SNAPSHOT:
	case MSG_OP_PROMOTE:
	case MSG_OP_CLUSTER:
		return 0;
	case MSG_OP_FOLLOW:
		if (q->url.len == 0)
			return SLUICE_EINVAL;
		return msg_put_text(b, q->url, MSG_URL_MAX);
	case MSG_OP_AUTH:
		if (q->token.len == 0)
			return SLUICE_EINVAL;
		return msg_put_text(b, q->token, MSG_TOKEN_MAX);
	case MSG_OP_SWITCHOVER:
		TRY(msg_put_node(b, q->switchover.node, false));
		buf_put_u32(b, q->switchover.timeout_ms);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

/* ---- replies ----------------------------------------------------------- */

/* Decodes the body of a reply (status 0) of this family. */
static int
msg_node_get_rep(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_rep *m)
{
	(void)flags;
	(void)pmax;

	switch (op) {
	case MSG_OP_SNAPSHOT:
	case MSG_OP_PROMOTE:
		return msg_get_count(r, m);
	case MSG_OP_FOLLOW:
	case MSG_OP_AUTH:
		return 0;
	case MSG_OP_CLUSTER:
		return get_cluster(r, &m->cluster);
	case MSG_OP_SWITCHOVER:
		TRY(msg_get_text(r, MSG_URL_MAX, &m->switchover.leader));
		m->switchover.epoch = rd_u64(r);
		NEED(r);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

/* Encodes the body of a reply (status 0) of this family. */
static int
msg_node_put_rep(struct buf *b, const struct msg_rep *m)
{
	switch (m->op) {
	case MSG_OP_SNAPSHOT:
	case MSG_OP_PROMOTE:
		return msg_put_count(b, m);
	case MSG_OP_FOLLOW:
	case MSG_OP_AUTH:
		return 0;
	case MSG_OP_CLUSTER:
		return enc_cluster(b, &m->cluster);
	case MSG_OP_SWITCHOVER:
		TRY(msg_put_text(b, m->switchover.leader, MSG_URL_MAX));
		buf_put_u64(b, m->switchover.epoch);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

const struct msg_family msg_node_family = {
	.get_req = msg_node_get_req,
	.put_req = msg_node_put_req,
	.get_rep = msg_node_get_rep,
	.put_rep = msg_node_put_rep,
};
