/* gate - the pause before an unknown token is refused, for the client
 * port's faces and the replication port alike (gate.h).
 *
 * The waits are a list, newest first, that the loop walks each turn
 * (gate_serve) and for its next timer (gate_next): it holds at most what
 * the limit of util/tokens.h lets wait at once (its tickets), so a walk
 * stays short. Each wait holds its ticket, the place it takes in the
 * limit's counts, given back when it ends however it ends. A wait whose
 * connection closed meanwhile is let go rather than answered. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "server/core/core.h"
#include "server/core/gate.h"
#include "server/face/face.h"
#include "util/clock.h"
#include "util/log.h"

struct gate_wait {
	struct face_ctx *ctx;
	uint32_t session;
	gate_end_fn *end;            /* the port's ending */
	int64_t due;                 /* monotonic ms */
	struct tokens_ticket ticket; /* its place in the limit's counts */
	struct gate_wait *next;
};

/* Ends a refused request `how` through its port; an answer whose
 * connection closed meanwhile is let go instead. */
static void
end_request(
    struct core *c, struct face_ctx *ctx, gate_end_fn *end, enum tokens_end how)
{
	if (how == TOKENS_END_ANSWER && !face_ctx_alive(ctx))
		how = TOKENS_END_DROP;
	end(c, ctx, how);
}

/* Ends a wait `how` and frees it, its place in the limit given back. */
static void
wait_end(struct core *c, struct gate_wait *w, enum tokens_end how)
{
	tokens_limit_done(&c->tokens_limit, w->ticket);
	end_request(c, w->ctx, w->end, how);
	free(w);
}

/* One line per address and second at the most (the limit says which). */
static void
log_unknown(const char *peer, uint32_t session, const char *what,
    const struct tokens_verdict *v)
{
	char unlogged[40] = "", dropped[40] = "";

	if (!v->log)
		return;
	if (v->unlogged > 0)
		snprintf(unlogged, sizeof(unlogged), " unlogged=%" PRIu64,
		    v->unlogged);
	if (v->dropped > 0)
		snprintf(
		    dropped, sizeof(dropped), " dropped=%" PRIu64, v->dropped);
	log_warn("auth",
	    "refused %s that is not in the file peer=%s session=%" PRIu32
	    " failures=%" PRIu32 "%s%s%s",
	    what, peer, session, v->fails, unlogged, dropped,
	    v->drop          ? " closed"
	        : v->delayed ? " slowed"
	                     : "");
}

void
gate_unknown(struct core *c, struct face_ctx *ctx, uint32_t session,
    const char *peer, const char *what, gate_end_fn *end)
{
	struct gate_wait *w;
	struct tokens_verdict v;

	tokens_limit_fail(
	    &c->tokens_limit, peer, clock_mono_ms(), (uint32_t)random(), &v);
	log_unknown(peer, session, what, &v);
	if (v.drop) {
		end_request(c, ctx, end, TOKENS_END_CLOSE);
		return;
	}
	if ((w = malloc(sizeof(*w))) == NULL) {
		/* no memory to wait in: the peer learns nothing either */
		tokens_limit_done(&c->tokens_limit, v.ticket);
		end_request(c, ctx, end, TOKENS_END_CLOSE);
		return;
	}
	*w = (struct gate_wait) { ctx, session, end, v.due, v.ticket, NULL };
	w->next = c->gate;
	c->gate = w;
}

void
gate_serve(struct core *c, int64_t mono_ms)
{
	struct gate_wait **pw = &c->gate, *w;

	while ((w = *pw) != NULL) {
		if (w->due > mono_ms) {
			pw = &w->next;
			continue;
		}
		*pw = w->next;
		wait_end(c, w, TOKENS_END_ANSWER);
	}
}

void
gate_drop(struct core *c, uint32_t session, gate_end_fn *end)
{
	struct gate_wait **pw = &c->gate, *w;

	while ((w = *pw) != NULL) {
		if (w->session != session || w->end != end) {
			pw = &w->next;
			continue;
		}
		*pw = w->next;
		wait_end(c, w, TOKENS_END_DROP);
	}
}

int64_t
gate_next(const struct core *c)
{
	int64_t min = INT64_MAX;

	for (const struct gate_wait *w = c->gate; w != NULL; w = w->next)
		if (w->due < min)
			min = w->due;
	return min;
}

void
gate_clear(struct core *c)
{
	struct gate_wait *w;

	while ((w = c->gate) != NULL) {
		c->gate = w->next;
		free(w);
	}
}
