/* cluster - automatic failover on the core thread: starts the election
 * thread (elect.c), carries out what it decides (lead, follow, count
 * these followers), tells it the node's state each turn, and answers the
 * cluster and switchover operations.
 *
 * Its state is its own (struct cluster, c->cluster); what the layers
 * below must read of it is written into the core as plain data: the
 * lease's deadline (c->lease_until, which core_check_lease asks before a
 * write), the sync set (c->sync, which the leader's side of replication
 * counts) and a switchover's stop of writes (c->handing). */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/failover/cluster.h"
#include "server/core/core.h"
#include "server/failover/elect.h"
#include "server/repl/follow.h"
#include "server/repl/lead.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/log.h"

struct cluster {
	struct elect *elect;
	struct elect_state st; /* what the thread is told, each turn */
	struct elect_cmd cmd;  /* the command being carried out */
	uint64_t count_gen;    /* the thread's COUNT applied */
	char count[ELECT_MEMBERS_MAX][MSG_URL_MAX + 1]; /* c->sync.urls */
	/* a switchover asked of this leader */
	struct face_ctx *handover_ctx; /* its request, to answer */
	uint64_t handover_id;
	char handover_to[ELECT_NAME_MAX + 1];
	uint32_t handover_ms;
};

/* c->lease_until */
static int64_t
lease_until(const struct core *c)
{
	return elect_lease_until(c->cluster->elect);
}

/* The client URL of the node's own --listen, unless --advertise says. */
int
cluster_open(struct core *c)
{
	const struct config *cfg = c->cfg;
	struct elect_config ec = {
		.endpoints = cfg->etcd,
		.cluster = cfg->cluster,
		.node = cfg->node,
		.client = cfg->advertise,
		.repl = cfg->advertise_repl,
		.http = cfg->advertise_http,
		.ttl_ms = cfg->leader_ttl_ms,
		.sync_replicas = cfg->sync_replicas,
	};
	char err[256];

	struct cluster *cl;

	if (cfg->etcd == NULL)
		return 0;
	cl = calloc(1, sizeof(*cl));
	if (cl == NULL)
		return SLUICE_ENOMEM;
	if (elect_start(&cl->elect, &ec, err, sizeof(err)) != 0) {
		log_err(
		    "cluster", "cannot start the election error=\"%s\"", err);
		free(cl);
		return SLUICE_EINVAL;
	}
	c->cluster = cl;
	c->lease_until = lease_until;
	c->sync = (struct core_sync) { .on = cfg->sync_replicas > 0,
		.urls = cl->count };
	log_info("cluster",
	    "automatic failover through etcd cluster=%s node=%s etcd=%s "
	    "ttl_ms=%u advertise=%s repl=%s http=%s",
	    cfg->cluster, cfg->node, cfg->etcd, cfg->leader_ttl_ms,
	    cfg->advertise, cfg->advertise_repl,
	    cfg->advertise_http != NULL ? cfg->advertise_http : "-");
	return 0;
}

void
cluster_close(struct core *c)
{
	struct cluster *cl = c->cluster;

	if (cl == NULL)
		return;
	/* a clean stop: the lease goes at once, and with it the leader key,
	 * so a follower takes over without waiting for the TTL */
	elect_stop(cl->elect, true);
	c->cluster = NULL;
	c->lease_until = NULL;
	c->sync = (struct core_sync) { 0 };
	free(cl);
}

int
cluster_fd(const struct core *c)
{
	return c->cluster != NULL ? elect_fd(c->cluster->elect) : -1;
}

int64_t
cluster_next_deadline(const struct core *c)
{
	if (c->cluster == NULL || c->follower || c->fenced)
		return INT64_MAX;
	return elect_lease_until(c->cluster->elect);
}

void
cluster_view(const struct core *c, struct elect_view *out)
{
	elect_view(c->cluster->elect, out);
}

const char *
cluster_handover_to(const struct core *c)
{
	return c->cluster != NULL ? c->cluster->handover_to : "";
}

/* The election won: lead with a new epoch, counting no follower until
 * the thread names them. */
static void
lead(struct core *c, const struct elect_cmd *cmd)
{
	uint64_t epoch = 0;
	int rc;

	c->handing = false;
	c->sync.n = 0;
	if (!c->follower && !c->fenced) {
		elect_led(c->cluster->elect, wal_epoch(c->wal));
		return;
	}
	rc = follow_lead(c, cmd->min_epoch, &epoch);
	if (rc != 0) {
		log_err(
		    "cluster", "cannot lead error=\"%s\"", sluice_strerror(rc));
		epoch = 0;
	}
	elect_led(c->cluster->elect, epoch);
}

static void
follow(struct core *c, const struct elect_cmd *cmd)
{
	int rc;

	if (c->follower && c->fol != NULL &&
	    strcmp(follow_url(c), cmd->url) == 0)
		return;
	c->handing = false;
	rc = follow_switch(c, cmd->url);
	if (rc != 0)
		log_warn("cluster", "cannot follow leader=%s error=\"%s\"",
		    cmd->url, face_strerror(rc));
}

static void
count(struct core *c, const struct elect_cmd *cmd)
{
	struct cluster *cl = c->cluster;

	c->sync.n = cmd->nurls;
	for (size_t i = 0; i < cmd->nurls; i++)
		memcpy(cl->count[i], cmd->urls[i], sizeof(cl->count[i]));
	cl->count_gen = cmd->gen;
}

/* ---- the cluster and switchover operations ------------------------------ */

enum { SWITCHOVER_DEFAULT_MS = 10000 };

static const char no_etcd[] =
    "automatic failover is off: this node runs without --etcd";

void
cluster_op_view(struct core *c, struct face_ctx *ctx)
{
	struct msg_rep rep = { .op = MSG_OP_CLUSTER };
	struct msg_member *mm;
	struct elect_view *v;
	int64_t now = clock_now_ms();

	if (c->cluster == NULL) {
		core_reply_err(c, ctx, MSG_OP_CLUSTER, SLUICE_ESTATE, no_etcd);
		return;
	}
	v = malloc(sizeof(*v));
	mm = calloc(ELECT_MEMBERS_MAX, sizeof(*mm));
	if (v == NULL || mm == NULL) {
		free(v);
		free(mm);
		core_reply_err(c, ctx, MSG_OP_CLUSTER, SLUICE_ENOMEM, NULL);
		return;
	}
	elect_view(c->cluster->elect, v);
	for (size_t i = 0; i < v->n; i++) {
		const struct elect_member *m = &v->m[i];

		mm[i].name = msg_cstr(m->name);
		mm[i].client = msg_cstr(m->client);
		mm[i].repl = msg_cstr(m->repl);
		mm[i].role =
		    m->role < MSG_NODE_ROLE_END_ ? m->role : MSG_NODE_CANDIDATE;
		mm[i].flags = (m->sync ? MSG_MEMBER_SYNC : 0) |
		    (m->lease ? MSG_MEMBER_LEASE : 0);
		mm[i].epoch = m->epoch;
		mm[i].durable_lsn = m->lsn;
		mm[i].lag_records = m->lag;
		mm[i].lease_until = m->lease_until;
		mm[i].age_ms =
		    m->at != 0 && now > m->at ? (uint64_t)(now - m->at) : 0;
	}
	rep.cluster.cluster = msg_cstr(v->cluster);
	rep.cluster.node = msg_cstr(v->node);
	rep.cluster.leader = msg_cstr(v->leader);
	rep.cluster.ttl_ms = v->ttl_ms;
	rep.cluster.etcd_error = msg_cstr(v->etcd_error);
	rep.cluster.n = (uint32_t)v->n;
	rep.cluster.members = mm;
	buf_reset(&c->out);
	msg_encode_rep(&c->out, &rep);
	core_reply_local(c, ctx);
	free(mm);
	free(v);
}

void
cluster_op_switchover(
    struct core *c, struct face_ctx *ctx, const struct msg_switchover *req)
{
	struct cluster *cl = c->cluster;

	if (cl == NULL) {
		core_reply_err(
		    c, ctx, MSG_OP_SWITCHOVER, SLUICE_ESTATE, no_etcd);
		return;
	}
	if (cl->handover_ctx != NULL) {
		core_reply_err(c, ctx, MSG_OP_SWITCHOVER, SLUICE_ESTATE,
		    "switchover: one to %s is under way", cl->handover_to);
		return;
	}
	if (req->node.len == strlen(c->cfg->node) &&
	    memcmp(req->node.p, c->cfg->node, req->node.len) == 0) {
		core_reply_err(c, ctx, MSG_OP_SWITCHOVER, SLUICE_ESTATE,
		    "switchover: %s leads already", c->cfg->node);
		return;
	}
	snprintf(cl->handover_to, sizeof(cl->handover_to), "%.*s",
	    (int)req->node.len, req->node.p);
	cl->handover_ms =
	    req->timeout_ms != 0 ? req->timeout_ms : SWITCHOVER_DEFAULT_MS;
	cl->handover_ctx = ctx;
	cl->handover_id++;
	c->handing = true; /* no writes from now on: the target catches up */
	log_info("cluster", "switchover asked to=%s timeout_ms=%u",
	    cl->handover_to, cl->handover_ms);
}

/* The election thread finished a switchover: answer it; on failure this
 * node takes writes again. */
static void
handed(struct core *c, const struct elect_cmd *cmd)
{
	struct cluster *cl = c->cluster;
	struct msg_rep rep = { .op = MSG_OP_SWITCHOVER };
	struct face_ctx *ctx = cl->handover_ctx;

	cl->handover_ctx = NULL;
	c->handing = false;
	if (ctx == NULL)
		return;
	/* The answer depends on no record of this node's: it goes now,
	 * before the node steps down and fails what waits for its log. */
	if (cmd->rc != 0) {
		log_warn("cluster", "switchover failed to=%s error=\"%s\"",
		    cl->handover_to, cmd->text);
		core_reply_err_as(c, ctx,
		    &(struct core_reply_how) { .now = true }, MSG_OP_SWITCHOVER,
		    cmd->rc, "%s", cmd->text);
	} else {
		log_info("cluster",
		    "switchover done leader=%s url=%s epoch=%" PRIu64,
		    cl->handover_to, cmd->url, cmd->epoch);
		rep.switchover.leader = msg_cstr(cmd->url);
		rep.switchover.epoch = cmd->epoch;
		buf_reset(&c->out);
		msg_encode_rep(&c->out, &rep);
		core_reply_as(c, ctx,
		    &(struct core_reply_how) { .local = true, .now = true });
	}
}

/* Every field of the node's state the thread reads. */
static void
publish(struct core *c)
{
	struct cluster *cl = c->cluster;
	struct elect_state *s = &cl->st;
	struct lead_peer_info peers[ELECT_PEERS_MAX];
	uint64_t lag_ms;

	memset(s, 0, offsetof(struct elect_state, peers));
	if (!c->follower)
		s->role = c->fenced ? ELECT_FENCED : ELECT_LEADER;
	else
		s->role = c->fol != NULL ? ELECT_FOLLOWER : ELECT_CANDIDATE;
	s->epoch = wal_epoch(c->wal);
	s->last_lsn = wal_last_lsn(c->wal);
	s->durable_lsn = wal_durable_lsn(c->wal);
	s->commit_lsn = core_commit_lsn(c);
	follow_lag(c, &s->lag_records, &lag_ms);
	if (c->follower && c->fol != NULL)
		snprintf(
		    s->following, sizeof(s->following), "%s", follow_url(c));
	s->count_gen = cl->count_gen;
	if (!c->follower) {
		s->npeers = lead_peers(c, peers, ELECT_PEERS_MAX);
		for (size_t i = 0; i < s->npeers; i++) {
			snprintf(s->peers[i].url, sizeof(s->peers[i].url), "%s",
			    peers[i].url);
			s->peers[i].acked_lsn = peers[i].acked_lsn;
		}
	}
	s->handover = cl->handover_ctx != NULL;
	s->handover_id = cl->handover_id;
	snprintf(s->handover_to, sizeof(s->handover_to), "%s", cl->handover_to);
	s->handover_ms = cl->handover_ms;
	elect_publish(cl->elect, s);
}

void
cluster_turn(struct core *c)
{
	struct cluster *cl = c->cluster;
	struct elect_cmd *cmd;

	if (cl == NULL)
		return;
	cmd = &cl->cmd;
	while (elect_next_cmd(cl->elect, cmd)) {
		switch (cmd->kind) {
		case ELECT_CMD_LEAD:
			lead(c, cmd);
			break;
		case ELECT_CMD_FOLLOW:
			follow(c, cmd);
			break;
		case ELECT_CMD_COUNT:
			count(c, cmd);
			break;
		case ELECT_CMD_HANDED:
			handed(c, cmd);
			break;
		}
	}
	core_check_lease(c);
	publish(c);
}
