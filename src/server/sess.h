/* sess - the core's table of open sessions: who is at the other end of
 * each (its address), for the log lines of its coming and going and for
 * the last_error of the leases its going ends. Core thread only. */
#ifndef SLUICE_SERVER_SESS_H
#define SLUICE_SERVER_SESS_H

#include <stdint.h>

#include "queue/idx.h"
#include "server/net.h"

struct sess {
	uint32_t id;
	char peer[NET_PEER_MAX]; /* "" when the face could not tell */
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

/* Forgets a session (nothing when it is not in the table). */
void sess_close(struct sess_tab *t, uint32_t id);

#endif
