/* cmap_node - the cluster map on the core thread (cmap_node.h).
 *
 * The core holds its own copy of the map (a new one replaces it when the
 * map thread publishes one), so a check is a lookup in memory: the
 * longest prefix of the tube (cmap.c). A change of the map is the map
 * thread's to make (etcd calls block); its request waits here, by id,
 * until the answer comes.
 *
 * The end of a drain: once a second a leader looks at the entries that
 * name its cluster as draining; when it holds nothing of the tubes one
 * governs (no task but done ones, no move's mark or table: a mover, if
 * one runs, ends its move itself), it asks for the entry without its
 * cluster in the draining list, only if the entry is still the one it
 * read (an operator's change made since wins), one entry at a time.
 * An entry found changed meanwhile (a mover ending its move writes the
 * same entry) is looked at again at the next look, by the map the poll
 * brings: the drain's end waits for nothing else, and the other entries
 * for no failure of this one. Only an etcd that did not answer makes it
 * look again DRAIN_RETRY_MS later. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cmap.h"
#include "server/core/core.h"
#include "server/face/face.h"
#include "server/face/http/http.h"
#include "server/failover/cmap_node.h"
#include "server/failover/mapwatch.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/log.h"

enum {
	ETCD_CALL_MS = 2000,
	DRAIN_CHECK_MS = 1000, /* a leader looks at its drains so often */
	DRAIN_RETRY_MS = 5000, /* and again after etcd did not answer */
};

struct cmap_node {
	struct mapwatch *w;
	struct cmap map;
	uint64_t gen;
	bool known; /* a map was read */
	uint64_t next_id;
	struct {
		uint64_t id;
		uint8_t op;
		struct face_ctx *ctx;
	} asks[MAPWATCH_ASKS_MAX];
	uint64_t refused;   /* requests answered EMOVED */
	int64_t next_drain; /* mono ms of the next look at the drains */
	uint64_t drain_ask; /* the change asked for a drain's end; 0 */
	char drain_prefix[MSG_TUBE_MAX + 1];
};

int
cmap_node_open(struct core *c)
{
	struct cmap_node *n;
	char err[256];

	if (c->cfg->etcd == NULL)
		return 0;
	if ((n = calloc(1, sizeof(*n))) == NULL) {
		log_err("map", "out of memory");
		return -1;
	}
	cmap_init(&n->map);
	if (mapwatch_start(&n->w, c->cfg->etcd, ETCD_CALL_MS,
	        (int)c->cfg->map_reread_ms, err, sizeof(err)) != 0) {
		log_err("map", "cannot start the map thread: %s", err);
		free(n);
		return -1;
	}
	c->cmapn = n;
	return 0;
}

void
cmap_node_close(struct core *c)
{
	struct cmap_node *n = c->cmapn;

	if (n == NULL)
		return;
	mapwatch_stop(n->w);
	for (size_t i = 0; i < MAPWATCH_ASKS_MAX; i++)
		if (n->asks[i].ctx != NULL)
			face_ctx_drop(n->asks[i].ctx);
	cmap_free(&n->map);
	free(n);
	c->cmapn = NULL;
}

int
cmap_node_fd(const struct core *c)
{
	return c->cmapn != NULL ? mapwatch_fd(c->cmapn->w) : -1;
}

static void
answer(struct core *c, const struct mapwatch_answer *a)
{
	struct cmap_node *n = c->cmapn;
	static const struct core_reply_how how = { .local = true, .now = true };

	if (a->id == n->drain_ask && a->id != 0) {
		n->drain_ask = 0;
		if (a->rc == 0)
			log_info("map",
			    "drain over: cluster %s holds nothing of prefix "
			    "'%s' and left its draining list revision=%" PRIu64,
			    c->cfg->cluster, n->drain_prefix, a->revision);
		else {
			/* changed meanwhile: looked at again by the new map
			 * at the next look; etcd slow: not each second */
			int64_t wait = a->rc == SLUICE_ESTATE ? DRAIN_CHECK_MS
			                                      : DRAIN_RETRY_MS;

			n->next_drain = clock_mono_ms() + wait;
			log_warn("map",
			    "drain over for prefix '%s', not recorded: %s "
			    "(looked at again in %d s)",
			    n->drain_prefix, a->text, (int)(wait / 1000));
		}
		return;
	}
	for (size_t i = 0; i < MAPWATCH_ASKS_MAX; i++) {
		struct face_ctx *ctx = n->asks[i].ctx;
		uint8_t op = n->asks[i].op;

		if (ctx == NULL || n->asks[i].id != a->id)
			continue;
		n->asks[i].ctx = NULL;
		if (a->rc != 0) {
			core_reply_err_as(
			    c, ctx, &how, op, a->rc, "%s", a->text);
		} else {
			struct msg_rep rep = { .op = op };

			rep.revision = a->revision;
			buf_reset(&c->out);
			msg_encode_rep(&c->out, &rep);
			core_reply_as(c, ctx, &how);
		}
		return;
	}
}

/* Whether `name` falls under the entry of arg (a struct drain_of). */
struct drain_of {
	const struct cmap *map;
	const struct cmap_entry *e;
};

static bool
governs(void *arg, const char *name, size_t len)
{
	const struct drain_of *d = arg;

	return cmap_lookup(d->map, name, len) == d->e;
}

/* The end of a plain drain (the file's opening). */
static void
drain_check(struct core *c)
{
	struct cmap_node *n = c->cmapn;
	const char *self = c->cfg->cluster;
	int64_t now = clock_mono_ms();

	if (c->follower || c->fenced || !n->known || n->drain_ask != 0 ||
	    now < n->next_drain || self == NULL)
		return;
	n->next_drain = now + DRAIN_CHECK_MS;
	for (size_t i = 0; i < n->map.n; i++) {
		const struct cmap_entry *e = &n->map.e[i];
		struct drain_of d = { &n->map, e };
		struct cmap_entry next;
		uint8_t k = 0;

		for (uint8_t j = 0; j < e->ndraining; j++)
			if (strcmp(e->draining[j], self) == 0)
				k = (uint8_t)(j + 1);
		if (k == 0 || !queue_move_drained(c->q, governs, &d))
			continue;
		next = *e;
		memmove(&next.draining[k - 1], &next.draining[k],
		    (size_t)(e->ndraining - k) * sizeof(next.draining[0]));
		next.ndraining--;
		if (mapwatch_ask_if(n->w, ++n->next_id, &next, e)) {
			n->drain_ask = n->next_id;
			snprintf(n->drain_prefix, sizeof(n->drain_prefix), "%s",
			    e->prefix);
		}
		return; /* one at a time */
	}
}

void
cmap_node_turn(struct core *c)
{
	struct cmap_node *n = c->cmapn;
	struct mapwatch_answer a;
	struct cmap next;

	if (n == NULL)
		return;
	if (mapwatch_take(n->w, &n->gen, &next)) {
		cmap_free(&n->map);
		n->map = next;
		n->known = true;
		http_set_owners(c->http, &n->map); /* what its 421s name */
	}
	while (mapwatch_answer(n->w, &a))
		answer(c, &a);
	drain_check(c);
}

/* Answers `op` SLUICE_EMOVED for `tube`, owned by `e`. */
static void
moved(struct core *c, struct face_ctx *ctx, uint8_t op, struct msg_str tube,
    const struct cmap_entry *e)
{
	const struct cmap_cluster *cl =
	    cmap_cluster(&c->cmapn->map, e->cluster);
	char detail[MSG_URL_MAX + 1], text[MSG_TUBE_MAX + 256];

	c->cmapn->refused++;
	cmap_moved_detail(detail, sizeof(detail), e->cluster,
	    c->cmapn->map.revision, cl != NULL ? cl->urls : "");
	snprintf(text, sizeof(text),
	    "moved: tube '%.*s' belongs to cluster %s, not %s (map revision "
	    "%" PRIu64 "%s)",
	    (int)tube.len, tube.p, e->cluster, c->cfg->cluster,
	    c->cmapn->map.revision,
	    cl == NULL || cl->urls[0] == '\0' ? "; its members are not known"
	                                      : "");
	buf_reset(&c->out);
	msg_encode_err(&c->out, op, SLUICE_EMOVED, text, detail);
	core_reply_local(c, ctx);
}

/* The entry that refuses `tube` here, or NULL when it may run. */
static const struct cmap_entry *
foreign(const struct core *c, struct msg_str tube, bool put)
{
	const struct cmap_entry *e =
	    cmap_lookup(&c->cmapn->map, tube.p, tube.len);
	const char *self = c->cfg->cluster;

	if (e == NULL || strcmp(e->cluster, self) == 0)
		return NULL;
	if (!put)
		for (uint8_t i = 0; i < e->ndraining; i++)
			if (strcmp(e->draining[i], self) == 0)
				return NULL;
	return e;
}

bool
cmap_node_admit(struct core *c, struct face_ctx *ctx, const struct msg_req *r)
{
	const struct cmap_entry *e = NULL;
	struct msg_str tube = { "", 0 };
	struct msg_iter it;

	if (c->cmapn == NULL || !c->cmapn->known || c->cmapn->map.n == 0)
		return true;
	switch (r->op) {
	case MSG_OP_PUT:
		tube = r->put.tube;
		e = foreign(c, tube, true);
		break;
	case MSG_OP_PUT_BATCH: {
		struct msg_put p;

		it = r->put_batch.it;
		while (e == NULL && msg_next_put(&it, &p)) {
			tube = p.tube;
			e = foreign(c, tube, true);
		}
		break;
	}
	case MSG_OP_TAKE:
		it = r->take.it;
		while (e == NULL && msg_next_str(&it, &tube))
			e = foreign(c, tube, false);
		break;
	default:
		return true;
	}
	if (e == NULL)
		return true;
	moved(c, ctx, r->op, tube, e);
	return false;
}

bool
cmap_node_figures(const struct core *c, uint64_t *revision, uint64_t *entries,
    uint64_t *moved)
{
	const struct cmap_node *n = c->cmapn;

	if (n == NULL)
		return false;
	*revision = n->map.revision;
	*entries = n->map.n;
	*moved = n->refused;
	return true;
}

void
cmap_node_op_map(struct core *c, struct face_ctx *ctx)
{
	struct msg_rep rep = { .op = MSG_OP_MAP };
	int rc;

	if (c->cmapn == NULL) {
		core_reply_err(c, ctx, MSG_OP_MAP, SLUICE_ESTATE,
		    "no cluster map: this node runs without --etcd");
		return;
	}
	if (!c->cmapn->known) {
		char err[MAPWATCH_TEXT_MAX];

		mapwatch_error(c->cmapn->w, err, sizeof(err));
		core_reply_err(c, ctx, MSG_OP_MAP, SLUICE_ESTATE,
		    "the map has not been read from etcd yet%s%s",
		    err[0] ? ": " : "", err);
		return;
	}
	if ((rc = cmap_to_msg(&c->cmapn->map, c->cfg->cluster, &rep.map)) !=
	    0) {
		core_reply_err(c, ctx, MSG_OP_MAP, SLUICE_ENOMEM, NULL);
		return;
	}
	buf_reset(&c->out);
	rc = msg_encode_rep(&c->out, &rep);
	cmap_msg_free(&rep.map);
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_MAP, rc > 0 ? rc : SLUICE_ENOMEM,
		    "cannot encode the map: %s", sluice_strerror(rc));
		return;
	}
	core_reply_local(c, ctx);
}

/* The entry a map_set asks for, checked; 0 or the error answered. */
static int
entry_of(struct core *c, struct face_ctx *ctx, const struct msg_req *r,
    struct cmap_entry *e)
{
	const struct msg_map_entry *m = &r->map_set;
	struct cmap check;
	int rc;

	memset(e, 0, sizeof(*e));
	snprintf(e->prefix, sizeof(e->prefix), "%.*s", (int)m->prefix.len,
	    m->prefix.p);
	snprintf(e->cluster, sizeof(e->cluster), "%.*s", (int)m->cluster.len,
	    m->cluster.p);
	e->ndraining = m->ndraining;
	for (uint8_t i = 0; i < m->ndraining; i++) {
		snprintf(e->draining[i], sizeof(e->draining[i]), "%.*s",
		    (int)m->draining[i].len, m->draining[i].p);
		for (uint8_t k = 0; k < i; k++)
			if (strcmp(e->draining[k], e->draining[i]) == 0) {
				core_reply_err(c, ctx, r->op, SLUICE_EINVAL,
				    "map set: cluster %s is named twice as "
				    "draining",
				    e->draining[i]);
				return SLUICE_EINVAL;
			}
	}
	cmap_init(&check);
	rc = cmap_put(&check, e);
	cmap_free(&check);
	if (rc == SLUICE_EINVAL) {
		core_reply_err(c, ctx, r->op, rc,
		    "map set: cluster %s is both the owner and draining",
		    e->cluster);
		return rc;
	}
	if (rc != 0)
		core_reply_err(
		    c, ctx, r->op, rc > 0 ? rc : SLUICE_ENOMEM, NULL);
	return rc;
}

void
cmap_node_op_change(
    struct core *c, struct face_ctx *ctx, const struct msg_req *r)
{
	struct cmap_node *n = c->cmapn;
	struct cmap_entry e;
	size_t slot = MAPWATCH_ASKS_MAX;

	if (n == NULL) {
		core_reply_err(c, ctx, r->op, SLUICE_ESTATE,
		    "no cluster map: this node runs without --etcd");
		return;
	}
	if (r->op == MSG_OP_MAP_SET) {
		const struct cmap_entry *have;

		if (entry_of(c, ctx, r, &e) != 0)
			return;
		have = cmap_lookup(&n->map, e.prefix, strlen(e.prefix));
		if (n->map.n >= MSG_MAP_ENTRIES_MAX &&
		    (have == NULL || strcmp(have->prefix, e.prefix) != 0)) {
			core_reply_err(c, ctx, r->op, SLUICE_ELIMIT,
			    "map set: the map holds %d entries, the most it "
			    "may",
			    MSG_MAP_ENTRIES_MAX);
			return;
		}
	} else {
		memset(&e, 0, sizeof(e));
		snprintf(e.prefix, sizeof(e.prefix), "%.*s",
		    (int)r->map_prefix.len, r->map_prefix.p);
	}
	for (size_t i = 0; i < MAPWATCH_ASKS_MAX && slot == MAPWATCH_ASKS_MAX;
	     i++)
		if (n->asks[i].ctx == NULL)
			slot = i;
	if (slot == MAPWATCH_ASKS_MAX ||
	    !mapwatch_ask(n->w, ++n->next_id, r->op == MSG_OP_MAP_DELETE, &e)) {
		core_reply_err(c, ctx, r->op, SLUICE_ELIMIT,
		    "%d changes of the map wait for etcd already; try again",
		    MAPWATCH_ASKS_MAX);
		return;
	}
	n->asks[slot].id = n->next_id;
	n->asks[slot].op = r->op;
	n->asks[slot].ctx = ctx;
}
