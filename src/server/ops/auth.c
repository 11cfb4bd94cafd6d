/* auth - --auth on the client port: the auth op binds a session to a
 * token of the file, and every later request is checked against the
 * token's role (ops_auth_role_allows: the ops each role may send) and
 * tube pattern, from memory (the session keeps a pointer to its token's
 * line; a reload re-points it by the token's hash).
 *
 * A token that is not in the file (here and on the HTTP face) is answered
 * after a pause the per-address limit of util/tokens.h sets: core/gate.h
 * keeps it waiting, for this port and the replication port alike, and
 * this file gives the client port's ending (an EAUTH answer, or the
 * connection dropped or closed). A refusal says only "not allowed"; the
 * log line says who and what. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/msg.h"
#include "server/core/core.h"
#include "server/core/gate.h"
#include "server/core/quota.h"
#include "server/face/face.h"
#include "server/face/http/http.h"
#include "server/ops/ops.h"
#include "server/ops/ops_int.h"
#include "server/repl/lead.h"
#include "sluice.h"
#include "util/log.h"

/* ---- what a role may do -------------------------------------------- */

static bool
producer_op(uint8_t op)
{
	return op == MSG_OP_PUT || op == MSG_OP_PUT_BATCH ||
	    op == MSG_OP_PEEK || op == MSG_OP_PEEK_KEY ||
	    op == MSG_OP_PEEK_NEXT || op == MSG_OP_WAIT || op == MSG_OP_MAP;
}

static bool
worker_op(uint8_t op)
{
	switch (op) {
	case MSG_OP_PUT:
	case MSG_OP_PUT_BATCH:
	case MSG_OP_TAKE:
	case MSG_OP_ACK:
	case MSG_OP_ACK_BATCH:
	case MSG_OP_RELEASE:
	case MSG_OP_FAIL:
	case MSG_OP_TOUCH:
	case MSG_OP_BURY:
	case MSG_OP_WAIT:
	case MSG_OP_MAP: /* where the tubes are: every client routes by it */
		return true;
	default:
		return false;
	}
}

static bool
monitor_op(uint8_t op)
{
	return op == MSG_OP_STATS || op == MSG_OP_STATS_HOURLY ||
	    op == MSG_OP_HISTORY || op == MSG_OP_CLUSTER ||
	    op == MSG_OP_GROUPS || op == MSG_OP_MAP;
}

bool
ops_auth_role_allows(int role, uint8_t op)
{
	if (op == MSG_OP_AUTH)
		return true; /* a session may always change its token */
	switch (role) {
	case TOKENS_ADMIN:
		return true;
	case TOKENS_PRODUCER:
		return producer_op(op);
	case TOKENS_WORKER:
		return worker_op(op);
	case TOKENS_MONITOR:
		return monitor_op(op);
	default: /* replica: the replication port only */
		return false;
	}
}

/* ---- the token file --------------------------------------------------- */

int
ops_auth_open(struct core *c)
{
	char err[TOKENS_ERR_MAX];

	if (c->cfg->auth_file == NULL)
		return 0;
	if (tokens_load(c->cfg->auth_file, &c->auth, err) != 0) {
		log_err("auth", "cannot read the token file: %s", err);
		return -1;
	}
	c->auth_on = true;
	log_info("auth", "clients need a token file=%s tokens=%zu",
	    c->cfg->auth_file, c->auth.n);
	return 0;
}

static void
rebind(struct sess *s, void *arg)
{
	const struct tokens *a = arg;

	if (s->authed)
		s->tok = tokens_find_hash(a, s->hash);
}

void
ops_auth_reload(struct core *c)
{
	char err[TOKENS_ERR_MAX];
	struct tokens fresh;

	if (!c->auth_on) {
		log_info("auth", "SIGHUP without --auth: nothing to read");
		return;
	}
	if (tokens_load(c->cfg->auth_file, &fresh, err) != 0) {
		log_err("auth",
		    "cannot read the token file again; the tokens read "
		    "before stay in force: %s",
		    err);
		return;
	}
	sess_each(&c->sess, rebind, &fresh);
	tokens_free(&c->auth);
	c->auth = fresh;
	lead_auth_reload(c);
	quota_apply(c);
	log_info("auth", "token file read again file=%s tokens=%zu",
	    c->cfg->auth_file, c->auth.n);
}

/* ---- auth ------------------------------------------------------------ */

static void
reply_eauth(struct core *c, struct face_ctx *ctx, uint8_t op, const char *text)
{
	buf_reset(&c->out);
	msg_encode_err(&c->out, op, SLUICE_EAUTH, text, NULL);
	core_reply_local(c, ctx);
}

static const char *
peer_of(const struct sess *s)
{
	return s != NULL && s->peer[0] != '\0' ? s->peer : "-";
}

/* The client port's ending of a request whose token is not in the
 * file (core/gate.h). */
static void
unknown_end(struct core *c, struct face_ctx *ctx, enum tokens_end how)
{
	if (how == TOKENS_END_DROP)
		face_ctx_drop(ctx);
	else if (how == TOKENS_END_CLOSE)
		face_ctx_close(ctx);
	else
		reply_eauth(
		    c, ctx, MSG_OP_AUTH, "unauthenticated: not a known token");
}

static void
op_auth(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct msg_req *req)
{
	struct sess *s = sess_get(&c->sess, session);
	const struct tokens_entry *t;
	uint8_t hash[TOKENS_HASH_LEN];

	tokens_sha256(req->token.p, req->token.len, hash);
	t = tokens_find_hash(&c->auth, hash);
	if (t == NULL || s == NULL) {
		if (s != NULL) /* a failed change loses the token held */
			s->tok = NULL, s->authed = false;
		gate_unknown(
		    c, ctx, session, peer_of(s), "a token", unknown_end);
		return;
	}
	s->tok = t;
	s->authed = true;
	memcpy(s->hash, hash, sizeof(hash));
	log_debug("auth", "session bound token=%s role=%s peer=%s", t->name,
	    tokens_role_name(t->role), peer_of(s));
	ops_reply(c, ctx, &(struct msg_rep) { .op = MSG_OP_AUTH });
}

void
ops_auth_drop(struct core *c, uint32_t session)
{
	gate_drop(c, session, unknown_end);
}

void
ops_auth_close(struct core *c)
{
	/* answered by ops_end_waiters while the sockets were up */
	gate_clear(c);
	tokens_free(&c->auth);
	tokens_limit_free(&c->tokens_limit);
	quota_fini(&c->quota);
}

/* ---- the tubes a request names ---------------------------------------- */

/* A tube of 0 bytes is every tube: the pattern `*` only. */
static bool
tube_ok(const struct tokens_entry *t, struct msg_str tube, struct msg_str *bad)
{
	bool ok = tube.len == 0 ? tokens_all_tubes(t)
	                        : tokens_tube_ok(t, tube.p, tube.len);

	if (!ok)
		*bad = tube;
	return ok;
}

/* Whether task `id` lives in a tube token t may not see: to that token
 * such a task does not exist (an answer must not tell another tenant's
 * live ids from ids that are gone). */
static bool
id_hidden(struct core *c, const struct tokens_entry *t, uint64_t id)
{
	struct queue_task_view v;

	return !tokens_all_tubes(t) && queue_peek(c->q, c->now, id, &v) == 0 &&
	    !tokens_tube_ok(t, v.tube, v.tube_len);
}

bool
ops_auth_hidden(struct core *c, const struct tokens_entry *tok, uint64_t id)
{
	return tok != NULL && id_hidden(c, tok, id);
}

/* A task named by id. An unknown id passes (it is answered ENOTFOUND as
 * without --auth); so does a task of another tube, answered as unknown
 * (*hidden set to its id). */
static bool
id_ok(
    struct core *c, const struct tokens_entry *t, uint64_t id, uint64_t *hidden)
{
	if (id_hidden(c, t, id) && *hidden == 0)
		*hidden = id;
	return true;
}

/* A key names a task of the tube given with it: the tube is checked, not
 * what the key finds, so the answer says nothing of other tubes' keys. A
 * request without a tube passes here and is answered EINVAL, naming what
 * it lacks. */
static bool
key_ok(const struct tokens_entry *t, const struct msg_by_key *k,
    struct msg_str *bad)
{
	return k->tube.len == 0 || tube_ok(t, k->tube, bad);
}

static bool
batch_ok(
    const struct tokens_entry *t, const struct msg_req *r, struct msg_str *bad)
{
	struct msg_iter it;
	bool ok = true;

	switch (r->op) {
	case MSG_OP_PUT_BATCH: {
		struct msg_put p;

		it = r->put_batch.it;
		while (ok && msg_next_put(&it, &p))
			ok = tube_ok(t, p.tube, bad);
		return ok;
	}
	case MSG_OP_TAKE: {
		struct msg_str s;

		it = r->take.it;
		while (ok && msg_next_str(&it, &s))
			ok = tube_ok(t, s, bad);
		return ok;
	}
	default: /* ack_batch, delete_batch: a task of another tube is
	          * answered as an unknown one, item by item
	          * (ops_auth_hidden) */
		return true;
	}
}

static bool
tubes_ok(struct core *c, const struct tokens_entry *t, const struct msg_req *r,
    struct msg_str *bad, uint64_t *hidden)
{
	switch (r->op) {
	case MSG_OP_PUT:
		return tube_ok(t, r->put.tube, bad);
	case MSG_OP_PUT_BATCH:
	case MSG_OP_TAKE:
	case MSG_OP_ACK_BATCH:
	case MSG_OP_DELETE_BATCH:
	case MSG_OP_CANCEL:
		return batch_ok(t, r, bad);
	case MSG_OP_WAIT: /* a finished task's tube: ops/result.c */
		return id_ok(c, t, r->wait.id, hidden);
	case MSG_OP_ACK:
		return (r->ack.to.len == 0 || tube_ok(t, r->ack.to, bad)) &&
		    id_ok(c, t, r->ack.id, hidden);
	case MSG_OP_RELEASE:
		return id_ok(c, t, r->release.id, hidden);
	case MSG_OP_FAIL:
		return id_ok(c, t, r->fail.id, hidden);
	case MSG_OP_TOUCH:
	case MSG_OP_BURY:
		return id_ok(c, t, r->lease.id, hidden);
	case MSG_OP_UPDATE:
		return id_ok(c, t, r->update.id, hidden);
	case MSG_OP_JOB:
		return id_ok(c, t, r->job.id, hidden);
	case MSG_OP_KICK_ID:
	case MSG_OP_DELETE:
	case MSG_OP_PEEK:
		return id_ok(c, t, r->id, hidden);
	case MSG_OP_DELETE_KEY:
	case MSG_OP_PEEK_KEY:
		return key_ok(t, &r->by_key, bad);
	case MSG_OP_KICK:
		return tube_ok(t, r->kick.tube, bad);
	case MSG_OP_PEEK_NEXT:
		return tube_ok(t, r->peek_next.tube, bad);
	case MSG_OP_LIST:
		return tube_ok(t, r->list.tube, bad);
	case MSG_OP_PAUSE:
		return tube_ok(t, r->pause.tube, bad);
	case MSG_OP_DELETE_WHERE:
		return tube_ok(t, r->where.tube, bad);
	case MSG_OP_TUBE_SET:
		return tube_ok(t, r->tube_set.tube, bad);
	case MSG_OP_TUBE_DELETE:
		return tube_ok(t, r->tube_delete.tube, bad);
	case MSG_OP_GROUP:
		return tube_ok(t, r->group.tube, bad);
	case MSG_OP_SCHED_SET:
		return tube_ok(t, r->sched_set.tube, bad);
	case MSG_OP_BATCH_SET: /* the tubes its callbacks go into */
		return (r->batch.success_tube.len == 0 ||
		           tube_ok(t, r->batch.success_tube, bad)) &&
		    (r->batch.complete_tube.len == 0 ||
		        tube_ok(t, r->batch.complete_tube, bad));
	case MSG_OP_BATCH_SHOW: /* counts, no payload; the list of every
	                           batch (flag 0x01) is node-wide: the names
	                           and callback tubes of every tenant's */
		return !r->batch.list ||
		    tube_ok(t, (struct msg_str) { "", 0 }, bad);
	case MSG_OP_STATS:
		return tube_ok(t, r->stats.tube, bad);
	case MSG_OP_HISTORY:
		return tube_ok(t, r->history.tube, bad);
	case MSG_OP_GROUPS:
		return tube_ok(t, r->groups.tube, bad);
	case MSG_OP_FLUSH:
	case MSG_OP_ERRORS:
	case MSG_OP_TUBE_SHOW:
	case MSG_OP_RELEASE_ALL:
	case MSG_OP_STATS_HOURLY:
		return tube_ok(t, r->tube, bad);
	case MSG_OP_AUTH: /* names no tube: the HTTP face's bearer check
	                     before a body (http.c), for every token */
	case MSG_OP_MAP:  /* the map, for routing: any token's role may */
		return true;
	default: /* node-wide: snapshot, promote, follow, cluster, ... */
		return tube_ok(t, (struct msg_str) { "", 0 }, bad);
	}
}

/* The lease ops' force: an operator's override, the admin's. (A
 * release_all, an override of every lease of a tube, is the admin's by
 * its role already: ops_auth_role_allows.) */
static bool
forced(const struct msg_req *r)
{
	return r->op != MSG_OP_RELEASE_ALL && ops_req_forced(r);
}

static void
refuse(struct core *c, struct face_ctx *ctx, const struct tokens_entry *t,
    const char *peer, const struct msg_req *r, struct msg_str bad)
{
	log_warn("auth", "not allowed token=%s role=%s peer=%s op=%s tube=%.*s",
	    t->name, tokens_role_name(t->role), peer, msg_op_name(r->op),
	    bad.len > 0 ? (int)bad.len : 1, bad.len > 0 ? bad.p : "-");
	/* answered before the op runs: for the local log alone */
	core_reply_err_as(c, ctx, &(struct core_reply_how) { .local = true },
	    r->op, SLUICE_EPERM, "not allowed");
}

/* A request naming a task of a tube the token may not see goes on with
 * that task hidden from the queue (*hidden: ops_handle hides it,
 * queue_hide, for the request's dispatch only): it is answered exactly as
 * one naming an id that does not exist, its arguments checked the same
 * way, so that nothing tells the two apart. Logged as refused. */
static void
log_hidden(const struct tokens_entry *t, const char *peer,
    const struct msg_req *r, uint64_t id)
{
	log_warn("auth",
	    "not allowed token=%s role=%s peer=%s op=%s id=%" PRIu64
	    " (a task of another tube: answered as not found)",
	    t->name, tokens_role_name(t->role), peer, msg_op_name(r->op), id);
}

/* Whether token `t` may send `req`: its role, the force of the lease ops
 * (the admin's), and the tubes the request names. Refused (answered and
 * logged) when not; else *tok is `t` (its quotas, core/quota.h) and
 * *hidden the task to hide, if any. */
static bool
token_allows(struct core *c, struct face_ctx *ctx, const struct tokens_entry *t,
    const char *peer, const struct msg_req *req,
    const struct tokens_entry **tok, uint64_t *hidden)
{
	struct msg_str bad = { "", 0 };

	*hidden = 0;
	if (!ops_auth_role_allows(t->role, req->op) ||
	    (forced(req) && t->role != TOKENS_ADMIN) ||
	    !tubes_ok(c, t, req, &bad, hidden)) {
		refuse(c, ctx, t, peer, req, bad);
		return false;
	}
	if (*hidden != 0)
		log_hidden(t, peer, req, *hidden);
	*tok = t;
	return true;
}

/* The HTTP face's check of a request's token before its body (an auth
 * request, http_gate.c): its token field names the operation the
 * request's route will send and the tube its path names ("OP" or "OP
 * TUBE", OP a number), or is "bearer" (a page of the face's own). The
 * role, and that tube, are judged as they will be once the body is in
 * (a task named by id, or the tubes of a take, only then); refused (403,
 * its body never read) when they may not. */
static bool
http_precheck(struct core *c, struct face_ctx *ctx,
    const struct tokens_entry *t, const char *peer, struct msg_str what)
{
	char buf[MSG_TOKEN_MAX + 1], *end;
	struct msg_str tube = { "", 0 }, bad = { "", 0 };
	unsigned long op;

	if (what.len == 0 || what.len >= sizeof(buf) || what.p[0] < '0' ||
	    what.p[0] > '9')
		return true;
	memcpy(buf, what.p, what.len);
	buf[what.len] = '\0';
	op = strtoul(buf, &end, 10);
	if (op == 0 || op > UINT8_MAX || op == MSG_OP_AUTH ||
	    (*end != '\0' && *end != ' '))
		return true;
	if (*end == ' ')
		tube = msg_cstr(end + 1);
	if (ops_auth_role_allows(t->role, (uint8_t)op) &&
	    (tube.len == 0 || tube_ok(t, tube, &bad)))
		return true;
	log_warn("auth",
	    "not allowed token=%s role=%s peer=%s op=%s tube=%.*s (before "
	    "the body of an HTTP request)",
	    t->name, tokens_role_name(t->role), peer, msg_op_name((uint8_t)op),
	    bad.len > 0 ? (int)bad.len : 1, bad.len > 0 ? bad.p : "-");
	core_reply_err_as(c, ctx, &(struct core_reply_how) { .local = true },
	    MSG_OP_AUTH, SLUICE_EPERM, "not allowed");
	return false;
}

/* A request of the HTTP face: each carries its own bearer token (HTTP
 * has no session to bind), and its client's address (the face's). */
static bool
http_check(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct msg_req *req, const struct tokens_entry **tok,
    uint64_t *hidden)
{
	const char *peer = http_peer(ctx);
	uint8_t hash[TOKENS_HASH_LEN];
	const struct tokens_entry *t;
	bool admin_only;

	if (!http_bearer(ctx, hash, &admin_only)) {
		log_warn("auth",
		    "refused an HTTP request without a bearer token peer=%s "
		    "op=%s",
		    peer, msg_op_name(req->op));
		reply_eauth(c, ctx, req->op, "unauthenticated");
		return false;
	}
	if ((t = tokens_find_hash(&c->auth, hash)) == NULL) {
		gate_unknown(c, ctx, session, peer, "a token", unknown_end);
		return false;
	}
	if (admin_only && t->role != TOKENS_ADMIN) {
		refuse(c, ctx, t, peer, req, (struct msg_str) { "", 0 });
		return false;
	}
	if (req->op == MSG_OP_AUTH &&
	    !http_precheck(c, ctx, t, peer, req->token))
		return false;
	return token_allows(c, ctx, t, peer, req, tok, hidden);
}

bool
ops_auth_check(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct msg_req *req, const struct tokens_entry **tok,
    uint64_t *hidden)
{
	const struct sess *s;

	*tok = NULL;
	*hidden = 0;
	if (!c->auth_on)
		return true;
	if (c->http != NULL && session == http_session(c->http))
		return http_check(c, ctx, session, req, tok, hidden);
	if (req->op == MSG_OP_AUTH) {
		op_auth(c, ctx, session, req);
		return false;
	}
	s = sess_find(&c->sess, session);
	if (s == NULL || s->tok == NULL) {
		reply_eauth(c, ctx, req->op,
		    s != NULL && s->authed
		        ? "unauthenticated: the token is no longer valid"
		        : "unauthenticated: send auth first");
		return false;
	}
	return token_allows(c, ctx, s->tok, peer_of(s), req, tok, hidden);
}
