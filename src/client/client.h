/* client - the handle of libsluice: its connection and the one path every
 * operation takes, client_call(). The operations themselves (ops.c) only
 * build a request and turn the reply into results. */
#ifndef SLUICE_CLIENT_CLIENT_H
#define SLUICE_CLIENT_CLIENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <nng/nng.h>

#include "client/urls.h"
#include "proto/msg.h"
#include "sluice.h"
#include "util/buf.h"

struct sluice_client {
	struct urls urls;
	int timeout_ms; /* per call; < 0: forever */
	int connect_ms; /* per URL */

	bool open;       /* sock, ctx are valid */
	nng_socket sock; /* REQ, dialing urls.v[urls.cur] */
	nng_ctx ctx;
	nng_aio *aio;     /* the one send/recv in flight */
	nng_msg *reply;   /* the last reply; decoded replies borrow from it */
	struct buf out;   /* the encoded request */
	struct buf texts; /* the last batch put's item messages, each ended
	                     by a NUL */

	/* Shared with nng's pipe callbacks, under mtx. */
	pthread_mutex_t mtx;
	pthread_cond_t cv; /* signalled when a pipe is added */
	uint32_t pipe;     /* id of the live pipe; 0: none */
	bool busy;         /* a request is in flight on aio */
	bool lost;         /* the pipe went away while busy */

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
