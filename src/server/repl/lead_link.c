/* lead_link - the connections to a leader's replication port: each one
 * known from its open, with its peer's address and, under --auth, the
 * token its first fetch showed (checked here: a replica or admin token
 * for every tube); its acks and snapshot reads need that fetch to have
 * passed. A refusal is logged once, not at each of a refused follower's
 * many retries. A token removed from the file (SIGHUP) takes its
 * follower's state with it.
 *
 * The port's bounds are face/stream.c's where it serves the URL; on nng's
 * own socket (abstract://, wss://) lead_link_sweep keeps the same: a
 * connection with no token past --handshake-timeout is closed, and past
 * REPL_UNAUTH_MAX unauthenticated ones the oldest are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/replmsg.h"
#include "server/core/core.h"
#include "server/face/face.h"
#include "server/face/nng.h"
#include "server/repl/lead.h"
#include "server/repl/lead_int.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/log.h"

struct lead_link *
lead_link_find(struct lead *rp, uint32_t session)
{
	for (struct lead_link *l = rp->links; l != NULL; l = l->next)
		if (l->session == session)
			return l;
	return NULL;
}

void
lead_link_open(struct lead *rp, uint32_t session, const char *addr)
{
	struct lead_link *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return; /* its fetches are refused: no place for its token */
	l->session = session;
	l->opened_ms = clock_mono_ms();
	snprintf(l->addr, sizeof(l->addr), "%s",
	    addr != NULL && addr[0] != '\0' ? addr : "-");
	l->next = rp->links;
	rp->links = l;
}

void
lead_link_close(struct lead *rp, uint32_t session)
{
	for (struct lead_link **pl = &rp->links; *pl != NULL;
	     pl = &(*pl)->next) {
		struct lead_link *l = *pl;

		if (l->session == session) {
			*pl = l->next;
			free(l);
			return;
		}
	}
}

/* Whether the connection may replicate: always without --auth; with it,
 * once a fetch showed a replica (or admin) token for every tube. */
bool
lead_link_authed(struct core *c, uint32_t session)
{
	const struct lead_link *l;

	if (!c->auth_on)
		return true;
	l = lead_link_find(c->repl, session);
	return l != NULL && l->authed;
}

static bool
role_replicates(const struct tokens_entry *t)
{
	return (t->role == TOKENS_REPLICA || t->role == TOKENS_ADMIN) &&
	    tokens_all_tubes(t);
}

/* Logs a refusal of link `l` (NULL: its open was not recorded) once,
 * until another one comes: a refused follower asks again and again. */
static void
link_refused(struct lead_link *l, int rc, const char *why,
    const struct tokens_entry *t, struct msg_str url)
{
	if (l != NULL && l->refused == rc)
		return;
	if (l != NULL)
		l->refused = rc;
	log_warn("repl",
	    "refused a follower: %s token=%s role=%s peer=%s follower=%.*s",
	    why, t != NULL ? t->name : "-",
	    t != NULL ? tokens_role_name(t->role) : "-",
	    l != NULL ? l->addr : "-", url.len > 0 ? (int)url.len : 4,
	    url.len > 0 ? url.p : "none");
}

int
lead_link_token(struct core *c, uint32_t session, struct msg_str token,
    struct msg_str url, const char **text)
{
	struct lead_link *l = lead_link_find(c->repl, session);
	const struct tokens_entry *t = NULL;
	uint8_t hash[TOKENS_HASH_LEN];

	if (token.len > 0) {
		tokens_sha256(token.p, token.len, hash);
		t = tokens_find_hash(&c->auth, hash);
	}
	if (token.len == 0) {
		link_refused(l, SLUICE_EAUTH, "it sent no token", NULL, url);
		*text = "unauthenticated: send a replication token";
		return SLUICE_EAUTH;
	}
	if (t == NULL || l == NULL) {
		*text = "unauthenticated: not a known token";
		return LEAD_LINK_UNKNOWN; /* answered after a pause: gate.h */
	}
	if (!role_replicates(t)) {
		link_refused(l, SLUICE_EPERM,
		    "its token may not replicate (role replica or admin, "
		    "tubes *)",
		    t, url);
		*text = "not allowed";
		return SLUICE_EPERM;
	}
	l->authed = true;
	l->refused = 0;
	memcpy(l->hash, hash, sizeof(hash));
	snprintf(l->token, sizeof(l->token), "%s", t->name);
	log_info("repl", "follower authenticated token=%s peer=%s", t->name,
	    l->addr);
	return 0;
}

/* nng's socket (abstract://, wss://; face/stream.c bounds the others),
 * under
 * --auth, once a second: a connection that has not shown a
 * replication token within --handshake-timeout is closed, and past
 * REPL_UNAUTH_MAX such connections the oldest are (the list is newest
 * first). */
void
lead_link_sweep(struct core *c, int64_t now)
{
	struct lead *rp = c->repl;
	uint32_t handshake_ms = c->cfg->handshake_ms;
	unsigned unauth = 0;

	if (!c->auth_on || now < rp->check_ms || rp->fs != NULL)
		return;
	rp->check_ms = now + REPL_CHECK_MS;
	for (struct lead_link *l = rp->links; l != NULL; l = l->next) {
		if (l->authed || l->closing)
			continue;
		if (handshake_ms != 0 &&
		    now - l->opened_ms >= (int64_t)handshake_ms) {
			log_debug("repl",
			    "closed a connection: no replication token within "
			    "the handshake timeout peer=%s",
			    l->addr);
			l->closing = true;
			if (face_nng_close_pipe(rp->nng, l->session))
				rp->closed_handshake++;
			continue;
		}
		if (++unauth > REPL_UNAUTH_MAX) {
			l->closing = true;
			if (face_nng_close_pipe(rp->nng, l->session))
				rp->evicted_unauth++;
		}
	}
}

/* A parked fetch of a follower whose token went is answered at once:
 * its follower learns why now, not when its request times out. */
static void
refuse_parked(struct core *c, uint32_t session)
{
	struct lead_peer *p = lead_peer_get(c, session, false);

	if (p == NULL || p->ctx == NULL)
		return;
	lead_send_err(c, p->ctx, REPLMSG_OP_FETCH, SLUICE_EAUTH,
	    "unauthenticated: the token is no longer valid");
	p->ctx = NULL;
}

void
lead_answer_unknown(struct core *c, struct face_ctx *ctx, enum tokens_end how)
{
	if (c->repl == NULL)
		return; /* closed: its contexts went with its socket */
	if (how == TOKENS_END_DROP)
		face_ctx_drop(ctx);
	else if (how == TOKENS_END_CLOSE)
		face_ctx_close(ctx);
	else
		lead_send_err(c, ctx, REPLMSG_OP_FETCH, SLUICE_EAUTH,
		    "unauthenticated: not a known token");
}

void
lead_auth_reload(struct core *c)
{
	if (c->repl == NULL)
		return;
	for (struct lead_link *l = c->repl->links; l != NULL; l = l->next) {
		const struct tokens_entry *t;

		if (!l->authed)
			continue;
		t = tokens_find_hash(&c->auth, l->hash);
		if (t != NULL && role_replicates(t))
			continue;
		/* Its next fetch shows the token again, and is refused; its
		 * follower state goes (stats, --sync-replicas). */
		log_warn("repl",
		    "a follower's token was removed or may no longer "
		    "replicate token=%s peer=%s",
		    l->token, l->addr);
		l->authed = false;
		refuse_parked(c, l->session);
		lead_peer_drop(c->repl, l->session);
	}
}
