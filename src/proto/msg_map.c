/* msg_map - the wire codec of the cluster map's messages (docs/scaling.md,
 * docs/protocol.md "The cluster map"): map (the map, its revision and
 * each cluster's members), map_set and map_delete. Decoders stand beside
 * encoders; msg.c frames them and sends each op here through
 * msg_map_family.
 *
 * An entry is: str prefix (0 bytes: the default; else a tube name's
 * alphabet), str cluster, u8 n, n x str draining cluster. A cluster of
 * the reply: str name, str leader URL, u32 n, n x str member URL. */
#include <string.h>

#include "proto/msg.h"
#include "proto/msg_wire.h"
#include "sluice.h"

bool
msg_cluster_name_valid(struct msg_str s)
{
	if (s.len == 0 || s.len > MSG_NODE_MAX)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		        (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		        c == ':' || c == '-'))
			return false;
	}
	return true;
}

/* A cluster's name: EINVAL when it is not one. */
static int
get_cluster_name(struct rd *r, struct msg_str *out)
{
	TRY(msg_get_str(r, MSG_NODE_MAX, SLUICE_EINVAL, out));
	return msg_cluster_name_valid(*out) ? 0 : SLUICE_EINVAL;
}

static int
put_cluster_name(struct buf *b, struct msg_str s)
{
	if (!msg_cluster_name_valid(s))
		return SLUICE_EINVAL;
	msg_put_str(b, s);
	return 0;
}

static int
get_entry(struct rd *r, struct msg_map_entry *e)
{
	memset(e, 0, sizeof(*e));
	TRY(msg_get_tube(r, true, &e->prefix));
	TRY(get_cluster_name(r, &e->cluster));
	e->ndraining = rd_u8(r);
	NEED(r);
	if (e->ndraining > MSG_MAP_DRAINING_MAX)
		return SLUICE_ELIMIT;
	for (uint8_t i = 0; i < e->ndraining; i++)
		TRY(get_cluster_name(r, &e->draining[i]));
	return 0;
}

static int
put_entry(struct buf *b, const struct msg_map_entry *e)
{
	TRY(msg_put_tube(b, e->prefix, true));
	TRY(put_cluster_name(b, e->cluster));
	if (e->ndraining > MSG_MAP_DRAINING_MAX)
		return SLUICE_ELIMIT;
	buf_put_u8(b, e->ndraining);
	for (uint8_t i = 0; i < e->ndraining; i++)
		TRY(put_cluster_name(b, e->draining[i]));
	return 0;
}

static int
get_url(struct rd *r, struct msg_str *out)
{
	return msg_get_text(r, MSG_URL_MAX, out);
}

static int
get_map_cluster(struct rd *r, struct msg_map_cluster *c)
{
	struct msg_str url;

	memset(c, 0, sizeof(*c));
	TRY(get_cluster_name(r, &c->name));
	TRY(msg_get_text(r, MSG_URL_MAX, &c->leader));
	c->n = rd_u32(r);
	NEED(r);
	if (c->n > MSG_CLUSTER_MEMBERS_MAX)
		return SLUICE_ELIMIT;
	GET_EACH(&c->it, r, c->n, 0, get_url(r, &url));
	return 0;
}

static int
put_map_cluster(struct buf *b, const struct msg_map_cluster *c)
{
	struct msg_iter it = c->it;
	const struct msg_str *url;
	struct msg_str one;

	TRY(put_cluster_name(b, c->name));
	TRY(msg_put_text(b, c->leader, MSG_URL_MAX));
	if (c->n > MSG_CLUSTER_MEMBERS_MAX)
		return SLUICE_ELIMIT;
	buf_put_u32(b, c->n);
	for (uint32_t i = 0; i < c->n; i++) {
		if ((url = LIST_AT(c->members, i, it, msg_next_url, one)) ==
		    NULL)
			return SLUICE_EINVAL;
		TRY(msg_put_text(b, *url, MSG_URL_MAX));
	}
	return 0;
}

static int
get_map(struct rd *r, struct msg_map *m)
{
	struct msg_map_entry e;
	struct msg_map_cluster mc;

	m->revision = rd_u64(r);
	NEED(r);
	TRY(msg_get_node(r, true, &m->cluster));
	m->n = rd_u32(r);
	NEED(r);
	if (m->n > MSG_MAP_ENTRIES_MAX)
		return SLUICE_ELIMIT;
	GET_EACH(&m->it, r, m->n, 0, get_entry(r, &e));
	m->nclusters = rd_u32(r);
	NEED(r);
	if (m->nclusters > MSG_MAP_CLUSTERS_MAX)
		return SLUICE_ELIMIT;
	GET_EACH(&m->cit, r, m->nclusters, 0, get_map_cluster(r, &mc));
	return 0;
}

static int
put_map(struct buf *b, const struct msg_map *m)
{
	struct msg_iter it = m->it, cit = m->cit;
	const struct msg_map_cluster *c;
	const struct msg_map_entry *e;
	struct msg_map_cluster cone;
	struct msg_map_entry one;

	buf_put_u64(b, m->revision);
	TRY(msg_put_node(b, m->cluster, true));
	if (m->n > MSG_MAP_ENTRIES_MAX || m->nclusters > MSG_MAP_CLUSTERS_MAX)
		return SLUICE_ELIMIT;
	buf_put_u32(b, m->n);
	for (uint32_t i = 0; i < m->n; i++) {
		e = LIST_AT(m->entries, i, it, msg_next_map_entry, one);
		if (e == NULL)
			return SLUICE_EINVAL;
		TRY(put_entry(b, e));
	}
	buf_put_u32(b, m->nclusters);
	for (uint32_t i = 0; i < m->nclusters; i++) {
		c = LIST_AT(m->clusters, i, cit, msg_next_map_cluster, cone);
		if (c == NULL)
			return SLUICE_EINVAL;
		TRY(put_map_cluster(b, c));
	}
	return 0;
}

bool
msg_next_map_entry(struct msg_iter *it, struct msg_map_entry *out)
{
	NEXT(it, get_entry(&it->r, out));
}

bool
msg_next_map_cluster(struct msg_iter *it, struct msg_map_cluster *out)
{
	NEXT(it, get_map_cluster(&it->r, out));
}

bool
msg_next_url(struct msg_iter *it, struct msg_str *out)
{
	NEXT(it, get_url(&it->r, out));
}

/* ---- requests ---------------------------------------------------------- */

static int
msg_map_get_req(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_req *q)
{
	(void)flags;
	(void)pmax;

	switch (op) {
	case MSG_OP_MAP:
		return 0;
	case MSG_OP_MAP_SET:
		return get_entry(r, &q->map_set);
	case MSG_OP_MAP_DELETE:
		return msg_get_tube(r, true, &q->map_prefix);
	}
	return SLUICE_EUNKNOWNOP;
}

static int
msg_map_put_req(struct buf *b, const struct msg_req *q)
{
	switch (q->op) {
	case MSG_OP_MAP:
		return 0;
	case MSG_OP_MAP_SET:
		return put_entry(b, &q->map_set);
	case MSG_OP_MAP_DELETE:
		return msg_put_tube(b, q->map_prefix, true);
	}
	return SLUICE_EUNKNOWNOP;
}

/* ---- replies ----------------------------------------------------------- */

static int
msg_map_get_rep(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_rep *m)
{
	(void)flags;
	(void)pmax;

	switch (op) {
	case MSG_OP_MAP:
		return get_map(r, &m->map);
	case MSG_OP_MAP_SET:
	case MSG_OP_MAP_DELETE:
		m->revision = rd_u64(r);
		NEED(r);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

static int
msg_map_put_rep(struct buf *b, const struct msg_rep *m)
{
	switch (m->op) {
	case MSG_OP_MAP:
		return put_map(b, &m->map);
	case MSG_OP_MAP_SET:
	case MSG_OP_MAP_DELETE:
		buf_put_u64(b, m->revision);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

const struct msg_family msg_map_family = {
	.get_req = msg_map_get_req,
	.put_req = msg_map_put_req,
	.get_rep = msg_map_get_rep,
	.put_rep = msg_map_put_rep,
};
