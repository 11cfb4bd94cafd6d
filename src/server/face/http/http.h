/* http - the HTTP face of sluiced (--http ADDR), served by its own
 * HTTP/1.1 server (http_srv.h), each request's head judged before its
 * body is read (the gate, http_gate.c; limits in docs/security.md):
 *
 *   GET  /metrics      Prometheus text format (metrics.c)
 *   GET  /stats        the JSON of `sluice stats --json`
 *   GET  /health       200 "ok", or 503 and the reason
 *   GET  /             the admin page (http_page.c), self-contained
 *   GET  /api/list     ?tube=T&state=S&order=O&limit=N&after=ID
 *                      {"tasks":[...]}
 *   GET  /api/errors   ?tube=T                          {"errors":[...]}
 *   POST /api/kick     ?tube=T&id=N (or &n=N)   only with --http-admin
 *   POST /api/delete   ?id=N                    only with --http-admin
 *   GET  /v1/history   ?tube=T&secs=N   events per second of the last N
 *                      seconds (1..900, default 900), of every tube
 *                      without a tube (json.h's json_history)
 *   *    /v1/...       the task API (http_api.c, docs/http-api.md), which
 *                      the dashboard calls too
 *
 * With --auth, /health stays open and every other page needs
 * `Authorization: Bearer TOKEN`: the core checks the token's role against
 * the page's operation (stats for /metrics and /stats, and history:
 * monitor or admin; list, errors, kick, delete: admin) and the dashboard
 * is the admin's.
 * 401 without a known token, 403 when its role may not.
 *
 * Every answer that needs the queue is a wire request posted to the core
 * (events_post) with this face's context; the core answers it on its thread
 * like any client's, and the answer is formatted on an nng thread. No
 * nng thread ever touches the queue.
 *
 * /health needs no core turn: it reads state the core publishes here
 * (atomics), so it answers during recovery, before the core serves, and
 * while the core is busy.
 *
 * Lifetime: http_open before recovery (answers /health "recovering" and
 * 503 for anything else), http_attach once the core serves, http_quiesce
 * when the core stops taking requests (new ones get 503; those already
 * posted are answered by the core's shutdown), http_close at the end. */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_H

#include <stdbool.h>

#include "util/tokens.h"
#include "server/face/events.h"
#include "server/face/face.h"

struct http;
struct tlsfile;

/* What /health reports, in order of precedence. */
enum http_phase {
	HTTP_RECOVERING, /* start-up: recovery has not finished */
	HTTP_SERVING,
	HTTP_STOPPING,
};

struct http_health {
	enum http_phase phase;
	bool log_failed;  /* the log refuses writes (poisoned) */
	bool follower;    /* this node follows a leader */
	bool leader_lost; /* ... and is not connected to it */
	bool fenced;      /* a leader that learned of a newer leader */
	bool no_lease;    /* ... or whose leader lease ran out (--etcd) */
	bool log_full;    /* the log refuses new work (puts) */
};

/* The HTTP status /health answers for `h` (200 or 503), and the reason
 * ("ok", "recovering", ...). Pure. */
int http_health_status(const struct http_health *h, const char **reason);

enum {
	HTTP_HOSTS_MAX = 16,                 /* --http-host, repeated */
	HTTP_BODY_TIMEOUT_DEFAULT = 60000,   /* --http-body-timeout, ms */
	HTTP_HEADER_TIMEOUT_DEFAULT = 10000, /* --http-header-timeout, ms */
	HTTP_IDLE_TIMEOUT_DEFAULT = 60000,   /* --http-idle-timeout, ms */
	HTTP_MAX_CONNS_DEFAULT = 512,        /* --http-max-conns */
};

/* What the face is opened with. */
struct http_conf {
	const char *addr; /* "127.0.0.1:7780", or a URL "http://..." */
	bool admin;       /* --http-admin: the page may kick and delete */
	const struct tlsfile *tls;  /* the node's certificate: HTTPS */
	bool auth;                  /* --auth: a body is read only once its
	                               request's bearer token is known */
	size_t payload_max;         /* --max-payload: a put's body */
	uint32_t body_timeout_ms;   /* a body's deadline after its headers */
	uint32_t header_timeout_ms; /* a head's, from its first byte */
	uint32_t idle_timeout_ms;   /* a connection without a request */
	uint32_t max_conns;         /* connections open at once */
	/* --http-host: names a request's Host may carry besides the
	 * listener's own address (and, on loopback, localhost) */
	const char *hosts[HTTP_HOSTS_MAX];
	size_t nhosts;
};

/* Starts serving (phase HTTP_RECOVERING). Returns 0, or an nng error as
 * -(1000 + code) (face_strerror names it). */
int http_open(struct http **out, const struct http_conf *conf);

/* The cluster map as the core took it (--etcd): a refusal of another
 * cluster's tube (421, "moved") names its nodes' HTTP URLs from it, and
 * the first in Location. Core thread, at each new map. */
struct cmap;
void http_set_owners(struct http *h, const struct cmap *m);

/* The core serves `net` from now on (phase HTTP_SERVING). */
void http_attach(struct http *h, struct events *net);

/* The session the face's requests come from (after http_attach); 0
 * without a face. Core thread. */
uint32_t http_session(const struct http *h);

/* For --auth, of a request of this face (`ctx` one the face posted, from
 * its session): the SHA-256 of its bearer token into `hash` (false: it
 * carries none), and whether it is the admin's only (the admin page; the
 * other pages are checked by their operation). Core thread. */
bool http_bearer(const struct face_ctx *ctx, uint8_t hash[TOKENS_HASH_LEN],
    bool *admin_only);

/* The address of the client of a request of this face (`ctx` as for
 * http_bearer), "ADDR:PORT": for the log and the pause of a wrong
 * token, counted per address as on the wire. Core thread. */
const char *http_peer(const struct face_ctx *ctx);

/* On the core thread, between its events, at least once per turn of its
 * loop: publishes the state /health reads (`st`, its phase aside), and
 * frees the requests whose answers went out. Cheap. Accepts NULL. */
void http_turn(struct http *h, const struct http_health *st);

/* Phase HTTP_STOPPING: no more requests are posted to the core. Call
 * before the core's last drain of its events. Accepts NULL. */
void http_quiesce(struct http *h);

/* Waits (bounded) for the answers in progress, stops serving and frees
 * everything. Accepts NULL. */
void http_close(struct http *h);

#endif
