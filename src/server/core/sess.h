/* sess - the core's table of open sessions: who is at the other end of
 * each (its address), for the log lines of its coming and going and for
 * the last_error of the leases its going ends. Core thread only. */
#ifndef SLUICE_SERVER_CORE_SESS_H
#define SLUICE_SERVER_CORE_SESS_H

#include <stdbool.h>
#include <stdint.h>

#include "queue/idx.h"
#include "server/face/face.h"

struct tokens_entry;

struct sess {
	uint32_t id;
	char peer[FACE_PEER_MAX]; /* "" when the face could not tell */
	/* --auth: the line of the session's token, NULL before a good auth
	 * or after its token left the file; `authed` says which */
	const struct tokens_entry *tok;
	bool authed;
	int64_t opened_ms; /* monotonic: the handshake timeout of nng pipes */
	uint8_t hash[32];  /* the token's SHA-256, to find it after a reload */
	/* its face asks for lost leases ready at once (face.lost_lease_ready):
	 * set by its first request */
	bool lost_ready;
};

struct sess_tab {
	struct idx ids; /* struct sess by id */
};

void sess_tab_init(struct sess_tab *t);

/* Frees every entry. */
void sess_tab_fini(struct sess_tab *t);

/* Records an open session (`peer` NULL: not known). Returns 0 or
 * -ENOMEM (the session is then served unnamed). */
int sess_open(struct sess_tab *t, uint32_t id, const char *peer);

/* The open session `id`, or NULL. Borrowed until sess_close(). */
const struct sess *sess_find(const struct sess_tab *t, uint32_t id);

/* The open session `id` to change, or NULL. */
struct sess *sess_get(struct sess_tab *t, uint32_t id);

/* Calls fn on every open session. */
void sess_each(
    struct sess_tab *t, void (*fn)(struct sess *s, void *arg), void *arg);

/* Forgets a session (nothing when it is not in the table). */
void sess_close(struct sess_tab *t, uint32_t id);

#endif
