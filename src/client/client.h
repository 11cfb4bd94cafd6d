/* client - the handle of libsluice: its connection and the one path every
 * operation takes, client_call(). The operations themselves (ops.c) only
 * build a request and turn the reply into results. */
#ifndef SLUICE_CLIENT_CLIENT_H
#define SLUICE_CLIENT_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "client/conn.h"
#include "client/urls.h"
#include "proto/msg.h"
#include "sluice.h"
#include "util/buf.h"
#include "util/tlsfile.h"

struct sluice_client {
	struct urls urls;
	int timeout_ms;     /* per call; < 0: forever */
	int connect_ms;     /* per URL */
	int refused_ms;     /* a refused connection tried again; < 0: all
	                     * of connect_ms */
	struct tlsfile tls; /* sluice_set_tls; zeroed: none */

	struct conn *conn; /* to urls.v[urls.cur]; NULL: not connected */
	uint32_t seq;      /* numbers the requests, from a random start */
	struct buf out;    /* the encoded request */
	struct buf reply;  /* the last reply; decoded replies borrow from it */
	size_t reply_off;  /* where its body starts */
	struct buf texts;  /* the last batch put's item messages, each ended
	                    * by a NUL */

	char *token;    /* sent first on every connection; NULL: none */
	bool need_auth; /* the connection has not sent it yet */

	char errmsg[1400];
};

/* Sends `req` and waits for its reply, following "not leader" replies and
 * retrying idempotent requests once after a lost connection (see sluice.h).
 * Returns 0 and `*rep` (which borrows from c->reply until the next call),
 * or the error: the reply's status (with errmsg set from its message), an
 * encoder error, SLUICE_ECONN, SLUICE_ETIMEDOUT, SLUICE_EPROTO. `extra_ms`
 * is added to the call's timeout (a take's wait). */
int client_call(struct sluice_client *c, const struct msg_req *req,
    int64_t extra_ms, struct msg_rep *rep);

/* Sets errmsg (printf-style). */
void client_errmsg(struct sluice_client *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
