/* sluice.h - the public interface of libsluice, the sluice client library.
 *
 * This header is the manual. Every call returns an int: 0 on success, a
 * positive SLUICE_E* code for a sluice error, or a negated errno for a
 * failure reported by the operating system. sluice_strerror() names all
 * three. Out-parameters are written only on success.
 *
 * The error codes are shared by the server, the log tool and the library,
 * and are part of the wire protocol (their numbers never change).
 *
 * The client
 * ----------
 * A `struct sluice_client` is one connection to a sluice server (or to the
 * first reachable of several: a leader and its followers). Every operation
 * is one request and one reply; calls block until the reply, the call's
 * timeout, or the loss of the connection.
 *
 * Threads: one handle per thread. A handle may move between threads but
 * must never be used by two at once.
 *
 * Ownership: strings passed in are only read during the call. Results are
 * either written into caller memory (ids, counts, `struct sluice_after`)
 * or allocated by the library in one block the caller frees with the
 * function named at the call (sluice_task_free, sluice_stats_free,
 * sluice_errors_free, sluice_stats_hourly_free, sluice_history_free,
 * sluice_cluster_free).
 * Out-parameters are written only on success; those documented as
 * optional may be NULL.
 *
 * Errors every call may return, besides those listed with it:
 *   SLUICE_ECONN      no server reachable, or the connection was lost
 *                     while the request was under way (its outcome is then
 *                     unknown; see "Retries" below)
 *   SLUICE_ETIMEDOUT  no reply within the timeout (sluice_set_timeout);
 *                     the outcome is unknown and the handle reconnects on
 *                     the next call, so the server ends the session and
 *                     returns its session-bound leases to ready
 *   SLUICE_EPROTO     the reply did not decode (or is not this request's)
 *   SLUICE_EVERSION   the server does not speak this protocol version
 *   SLUICE_ENOMEM     out of memory
 *   SLUICE_ESHUTDOWN  the server is shutting down
 *   SLUICE_EINVAL     a NULL handle or a required argument missing
 * sluice_errmsg() gives the detail of the last failure.
 *
 * Retries: with several URLs, a follower's SLUICE_ENOTLEADER reply makes
 * the library connect to the leader it names (or the next URL) and send
 * the request once more: the follower executed nothing. While no leader
 * answers (it died and the others elect the next, docs/replication.md),
 * the call keeps looking, pausing a little longer each time (at most
 * 200 ms), until its timeout. A connection lost
 * during a request is reported as SLUICE_ECONN and the request is never
 * sent again behind the caller's back, except for the requests that are
 * safe to repeat: peeks, stats (hourly too), list, errors, cluster, and
 * puts whose tasks all have a key (see docs/protocol.md, "Retrying
 * safely"). A put refused SLUICE_EMOVING (its tube is moving in and its
 * key's task may still be at the source: nothing was done) is sent again
 * after 10 ms, doubling to 200 ms, until the call's timeout; of a batch,
 * only the items refused so. */
#ifndef SLUICE_H
#define SLUICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SLUICE_API __attribute__((visibility("default")))
#else
#define SLUICE_API
#endif

#define SLUICE_VERSION_MAJOR 0
#define SLUICE_VERSION_MINOR 2
#define SLUICE_VERSION_PATCH 0

/* Error codes. Numbers are stable: they travel on the wire. */
enum sluice_error {
	SLUICE_OK = 0,
	SLUICE_ENOTFOUND = 1, /* no task with that id or key */
	SLUICE_ESTALE = 2,    /* the lease is not the task's current one */
	SLUICE_ESTATE = 3,    /* the task is not in a state that allows it */
	SLUICE_EINVAL = 4,    /* an argument is out of range */
	SLUICE_ETUBE = 5,   /* bad tube name: 1-200 bytes of [A-Za-z0-9_.:/-] */
	SLUICE_EKEY = 6,    /* bad key: 1-200 bytes */
	SLUICE_ETOOBIG = 7, /* payload larger than the server's limit */
	SLUICE_EMSGSIZE = 8,    /* message larger than the protocol's limit */
	SLUICE_EPROTO = 9,      /* malformed message */
	SLUICE_ETRUNC = 10,     /* truncated message */
	SLUICE_EVERSION = 11,   /* unsupported protocol version */
	SLUICE_EUNKNOWNOP = 12, /* unknown operation */
	SLUICE_ENOSPC = 13,     /* the log has no room for new tasks (a
	                         * put; or a retry once the log's pool for
	                         * them is spent: see sluice_take) */
	SLUICE_ELOG = 14,       /* the log failed; the node refuses writes */
	SLUICE_ECORRUPT = 15,   /* damaged data on disk */
	SLUICE_ETIMEDOUT = 16,  /* nothing to take, or no reply, in time */
	SLUICE_ENOTLEADER = 17, /* this node is a follower */
	SLUICE_EREPLICA = 18,   /* too few replicas acknowledged in time */
	SLUICE_EEPOCH = 19,     /* a stream or request from an older epoch */
	SLUICE_ECONN = 20,      /* no connection to the server */
	SLUICE_ENOMEM = 21,     /* out of memory */
	SLUICE_ESHUTDOWN = 22,  /* the server is shutting down */
	SLUICE_EEXIST = 23,     /* no longer returned: keys are per tube (a
	                           replace once met a key of another tube) */
	SLUICE_EPAUSED = 24,    /* the tube is paused */
	SLUICE_ELIMIT = 25,     /* a count or text exceeds its limit */
	SLUICE_EAUTH = 26,      /* the server needs a token (--auth): none
	                           sent, or not a known one */
	SLUICE_EPERM = 27,      /* the token's role or tubes do not allow it */
	SLUICE_ENOTEMPTY = 28,  /* the tube still has tasks */
	SLUICE_EGROUP = 29,     /* bad group name: 1-200 bytes of
	                           [A-Za-z0-9_.:/-] */
	SLUICE_ECANCELED = 30,  /* the task was cancelled: its worker stops
	                           (sluice_cancel) */
	SLUICE_ERESULT = 31,    /* an ack's result over 65,535 bytes */
	SLUICE_ESCHED = 32,     /* bad schedule: a cron expression, time zone
	                           or name refused (sluice_errmsg says which) */
	SLUICE_EMOVED = 33,     /* the cluster map gives the tube to another
	                           cluster (docs/scaling.md): the reply names
	                           it and its members; nothing was done */
	SLUICE_EBATCH = 34,     /* the batch is closed or ended: it takes no
	                           more tasks (sluice_batch_close) */
	SLUICE_EMOVING = 35,    /* the tube is moving in: its keys are not
	                           here yet; a keyed put is tried again */
	SLUICE_ERRMAX_
};

/* Names an error code: 0, a SLUICE_E* code, or a negated errno. The string
 * is static; never NULL. */
SLUICE_API const char *sluice_strerror(int rc);

/* The stable short name of an error code, for programs: "stale_lease",
 * "not_found", ... ("ok" for 0, "system" for a negated errno, "unknown"
 * for a code this library does not know). The names never change. */
SLUICE_API const char *sluice_errname(int rc);

/* ======================================================================
 * The client library (libsluice)
 * ====================================================================== */

/* Task states, as the server reports them. */
enum sluice_state {
	SLUICE_READY = 1,   /* waiting to be taken */
	SLUICE_DELAYED = 2, /* waiting for its run_at */
	SLUICE_TAKEN = 3,   /* leased to a worker */
	SLUICE_BURIED = 4,  /* parked until kicked */
	SLUICE_DONE = 5,    /* acked, kept while its tube retains finished
	                       tasks (sluiced --keep-done) */
	SLUICE_WAITING = 6, /* put after parents not acked yet (after) */
};

/* Dependencies between tasks: sluice_deps.h, part of this header. */
#include "sluice_deps.h"

/* Orders of sluice_list(). */
enum sluice_order {
	SLUICE_ORDER_ATTEMPTS = 1, /* most attempts first */
	SLUICE_ORDER_AGE = 2,      /* oldest first */
	SLUICE_ORDER_RUN_AT = 3,   /* soonest run_at first */
	SLUICE_ORDER_ID = 4,       /* lowest id first (sluice_list_after) */
};

/* Roles in sluice_stats(). */
enum sluice_role {
	SLUICE_LEADER = 1,
	SLUICE_FOLLOWER = 2,
};

#define SLUICE_DEFAULT_URL     "tcp://127.0.0.1:7711"
#define SLUICE_DEFAULT_TUBE    "default"
#define SLUICE_PRI_DEFAULT     1024u
#define SLUICE_TIMEOUT_DEFAULT 30000 /* ms, per call */
#define SLUICE_CONNECT_DEFAULT 2000  /* ms, per URL */
#define SLUICE_BATCH_MAX       1000  /* tasks per batch put, ack, delete */
#define SLUICE_TAKE_MAX        1000  /* tasks per sluice_take */
#define SLUICE_LIST_MAX        1000  /* tasks per sluice_list */
#define SLUICE_TUBE_MAX        200   /* bytes of a tube name */
#define SLUICE_NODE_MAX        64    /* bytes of a node's name (--node) */
#define SLUICE_URL_MAX         512   /* bytes of a URL a server reports */

struct sluice_client;

/* ---- connection ------------------------------------------------------ */

/* Opens a client for `urls`: one URL or several separated by commas
 * ("tcp://10.0.0.1:7711,tcp://10.0.0.2:7711"); NULL or "" means
 * SLUICE_DEFAULT_URL. Nothing is connected yet: the first call connects
 * to the first URL that answers, in order. tcp://HOST:PORT is spoken by
 * the library itself, on the calling thread; the other schemes nng knows
 * (ipc://, inproc://, ws://, tls+tcp://) go through an nng REQ socket.
 *
 * Returns 0 and `*out`, which the caller closes with sluice_close();
 * SLUICE_EINVAL for an empty URL in the list or a NULL `out`;
 * SLUICE_ENOMEM. */
SLUICE_API int sluice_open(const char *urls, struct sluice_client **out);

/* Closes the connection and frees the handle. The server ends the session:
 * tasks this handle took without `detach` return to ready. NULL is a
 * no-op. Never blocks for long: on an nng transport it waits at most 2 s
 * for nng's own close, which then finishes on a thread of its own. */
SLUICE_API void sluice_close(struct sluice_client *c);

/* How long a call waits for its reply, in ms (default
 * SLUICE_TIMEOUT_DEFAULT); < 0 waits forever. A take waits this long on
 * top of its own wait. */
SLUICE_API void sluice_set_timeout(struct sluice_client *c, int ms);

/* How long connecting to one URL may take, in ms (default
 * SLUICE_CONNECT_DEFAULT, at least 1): resolving its host, connecting
 * (a refused connection is tried again meanwhile) and the protocol's
 * greeting. The call's timeout (sluice_set_timeout) does not extend it.
 * A server that answers the greeting with something else (HTTP, the
 * beanstalk protocol) fails the URL at once; sluice_errmsg() names it. */
SLUICE_API void sluice_set_connect_timeout(struct sluice_client *c, int ms);

/* How long, within the connect timeout, a refused connection (nothing
 * listens at the URL) is tried again, in ms: < 0 (the default) all of
 * the connect timeout, so that a server that is restarting is found once
 * it listens; 0 not at all. Then the URL fails with SLUICE_ECONN and a
 * message saying it was refused. A handle with several URLs tries the
 * next one at once instead. The sluice tool gives 250 ms, so that a
 * person asking a server that is not running hears so at once. */
SLUICE_API void sluice_set_refused_retry(struct sluice_client *c, int ms);

/* TLS, for tls+tcp:// URLs (nng's TLS; see docs/security.md). `ca_file`:
 * the CA (PEM) that signed the servers' certificates; a server is
 * accepted only with a certificate it signed, unexpired, for the URL's
 * host. `cert_file` and `key_file` (PEM; both or neither): the client's
 * own certificate, for a server started with --tls-client-auth. The files
 * are read now: a missing, unreadable or invalid one fails here, with
 * SLUICE_EINVAL and sluice_errmsg() naming it; the handle keeps what it
 * had. On 0 the next call connects anew with these. Without a CA a
 * tls+tcp:// URL is refused (nothing is sent unverified). A connection
 * that fails over TLS is named in sluice_errmsg(): a certificate the CA
 * does not verify, a plain server at a TLS URL ("use tcp://..."), and for
 * a tcp:// URL, a TLS server ("use a tls+tcp:// URL"). tcp:// URLs never
 * use TLS. */
SLUICE_API int sluice_set_tls(struct sluice_client *c, const char *ca_file,
    const char *cert_file, const char *key_file);
/* The token the handle sends (the auth op) as the first request of every
 * connection it opens, again after a reconnect, for a server started with
 * --auth (docs/security.md). A copy is kept; NULL or "" sends none. A
 * wrong token makes each call fail with SLUICE_EAUTH. Returns 0,
 * SLUICE_EINVAL (over 256 bytes, or no handle), SLUICE_ENOMEM. */
SLUICE_API int sluice_set_token(struct sluice_client *c, const char *token);

/* The detail of the last failed call: the server's message, or what went
 * wrong locally (e.g. which URL could not be reached, and what a short
 * look found there: nothing listening, or an HTTP or beanstalkd-protocol
 * server). "" after a success. Valid until the next call on the handle.
 * Never NULL. */
SLUICE_API const char *sluice_errmsg(const struct sluice_client *c);

/* The URL the handle is connected to (or will try first). Valid until the
 * next call. Never NULL. */
SLUICE_API const char *sluice_url(const struct sluice_client *c);

/* ---- put ------------------------------------------------------------ */

/* The options of a put. Initialise with sluice_put_opts_init(): a zeroed
 * struct has priority 0 (most urgent), not the default. */
struct sluice_put_opts {
	const char *tube;  /* NULL: SLUICE_DEFAULT_TUBE */
	uint32_t priority; /* 0 most urgent; default SLUICE_PRI_DEFAULT */
	uint64_t delay_ms; /* ready after this many ms (0: at once) */
	uint64_t run_at;   /* unix ms; when non-zero, used instead of delay */
	uint64_t ttr_ms;   /* lease length; 0: the server's default (60 s) */
	uint32_t max_attempts; /* buried after this many takes; 0: unlimited */
	uint64_t period_ms;    /* recurring: ack reschedules after; 0: once */
	const char *key;       /* NULL: none; else 1-200 bytes, unique among
	                          the live tasks of the tube: a put with a
	                          key live in its tube creates nothing and
	                          returns the existing id (the same key in
	                          another tube is another task) */
	int replace;           /* with key: update the live task instead */
	/* With key and replace: the client's version of this content, >= 1
	 * (such as its source row's updated_at); 0: none. The replace
	 * happens only when it is greater than the version stored with the
	 * live task (none stored: any version is greater); otherwise
	 * nothing changes and the result says stale_version. The put stores
	 * it with the task either way (a new task, or the replaced one); a
	 * put or replace without one leaves the task without a version. A
	 * server older than versions answers SLUICE_EPROTO. */
	uint64_t if_newer;
	/* Deduplication modes, with key only, one at a time, not with
	 * replace, if_newer, delay_ms or run_at; 1 ms to 30 days; 0: off.
	 * debounce_ms: the put replaces the content and settings of the
	 * key's waiting task and makes it due debounce_ms from now (a taken
	 * one gets it when its lease ends, due then as said; with no live
	 * task, a new one due then): of a burst of puts, the last runs,
	 * debounce_ms after it. throttle_ms: a put within throttle_ms of the
	 * key's last accepted throttled put is ignored, whatever became of
	 * that task (the result says throttled and names it); past the
	 * window a live task of the key answers as the key does, else the
	 * put is a new task and opens the next window. A server older than
	 * the modes answers SLUICE_EPROTO. */
	uint64_t debounce_ms;
	uint64_t throttle_ms;
	/* NULL: none. A fair group, such as a tenant's id (1-200 bytes of
	 * [A-Za-z0-9_.:/-]; else SLUICE_EGROUP): within the tube, tasks of
	 * equal priority are handed out in turn across the groups that have
	 * ready tasks (docs/queue.md, "Fair groups"). A replace keeps the
	 * task's group. A server older than groups answers SLUICE_EPROTO. */
	const char *group;
	/* Parents (sluice_deps.h): ids, keys of tasks of its tube, 1..1000
	 * together (unknown: ENOTFOUND); not with replace, if_newer,
	 * period_ms, debounce or throttle (SLUICE_EINVAL). */
	const uint64_t *after;
	size_t nafter;
	const char *const *after_keys;
	size_t nafter_keys;
	int on_parent_failure;
	/* NULL: none. The batch it joins (sluice_batch.h; 1-200 bytes of
	 * [A-Za-z0-9_.:/-]): not with replace, if_newer, period_ms,
	 * debounce or throttle (SLUICE_EINVAL); a closed or ended batch:
	 * SLUICE_EBATCH. A server older than batches answers
	 * SLUICE_EPROTO. */
	const char *batch;
};

/* Sets the defaults: tube NULL ("default"), priority SLUICE_PRI_DEFAULT,
 * everything else 0. */
SLUICE_API void sluice_put_opts_init(struct sluice_put_opts *o);

/* Puts one task of `len` bytes at `payload` (may be NULL when len is 0).
 * `o` NULL means the defaults.
 *
 * Returns 0, `*id` (optional) the task's id and `*created` (optional) 1,
 * or 0 when the key was live in the tube and `*id` is the existing task.
 * Errors: SLUICE_ETUBE, SLUICE_EKEY (key too long or containing NUL),
 * SLUICE_EINVAL (replace without key, if_newer without replace), SLUICE_ETOOBIG
 * (payload over the server's limit), SLUICE_EMSGSIZE, SLUICE_ELIMIT (the
 * server's task or tube limit, or a quota of the token: the message names
 * it), SLUICE_ENOSPC, SLUICE_ELOG, SLUICE_EREPLICA (too few replicas
 * acknowledged: the task may or may not exist), SLUICE_ENOTLEADER (no leader
 * reachable). A keyed put is retried once after a lost connection; if
 * that second sending is refused, the put is SLUICE_ECONN (the first may
 * have been done), not the refusal. */
SLUICE_API int sluice_put(struct sluice_client *c,
    const struct sluice_put_opts *o, const void *payload, size_t len,
    uint64_t *id, int *created);

/* What a put did. */
struct sluice_put_result {
	uint64_t id;       /* the new task, or the live one with the key */
	int created;       /* 1: a new task */
	int replaced;      /* 1: (replace) the live task took the content */
	int stale_version; /* 1: (if_newer) the task's version is as new or
	                      newer: nothing changed */
	int throttled;     /* 1: (throttle_ms) within the key's window:
	                      ignored, id is the task that opened it */
};

/* sluice_put, with everything the put did in `*res` (optional). Errors as
 * sluice_put's, and SLUICE_EINVAL for if_newer without key and replace.
 * A retried put with if_newer whose first try went through answers
 * stale_version (the version stored is then its own). */
SLUICE_API int sluice_put_ex(struct sluice_client *c,
    const struct sluice_put_opts *o, const void *payload, size_t len,
    struct sluice_put_result *res);

/* One task of a batch: in, the options and payload; out, its result. */
struct sluice_batch_item {
	struct sluice_put_opts opts; /* initialise with sluice_put_opts_init */
	const void *payload;
	size_t len;
	int rc;             /* out: 0 or the SLUICE_E* code of this task */
	uint64_t id;        /* out: its id when rc is 0 */
	int created;        /* out: as sluice_put's */
	const char *errmsg; /* out: when rc != 0, why, in the server's words
	                       ("payload of 2000000 bytes: over the server's
	                       limit of 1048576 bytes"); "" when rc is 0.
	                       Valid until the next call on the handle. */
	int stale_version;  /* out: as sluice_put_result's */
	int throttled;      /* out: as sluice_put_result's */
};

/* Puts `n` tasks (1..SLUICE_BATCH_MAX) in one request and one commit.
 * Each item is taken or refused on its own: a bad one does not refuse its
 * neighbours.
 *
 * Returns 0 when the server answered for each item: each item's `rc`,
 * `id`, `created` and `errmsg` are then set. An item fails alone with
 * SLUICE_ETUBE (bad tube name), SLUICE_EKEY (bad key), SLUICE_EINVAL
 * (replace without a key, or a time out of range), SLUICE_ETOOBIG
 * (payload over the server's limit), SLUICE_ELIMIT (the server's task or
 * tube limit, or a quota of the token: the message names it), or the
 * log's SLUICE_ENOSPC / SLUICE_ELOG. Otherwise no item was put (or, for
 * SLUICE_ECONN/SLUICE_ETIMEDOUT, the outcome is unknown) and the items are
 * untouched: SLUICE_ELIMIT for n over the limit, SLUICE_EINVAL for n 0 or
 * a payload missing, SLUICE_ETUBE or SLUICE_EKEY for a tube or key too long
 * for the message (over 65535 bytes), SLUICE_EMSGSIZE for a batch over the
 * message limit; an item's parents (after, after_keys) bad as sluice_put
 * says them (SLUICE_EINVAL: an id 0, a rule out of range; SLUICE_ELIMIT:
 * over 1,000; SLUICE_EKEY: a key of 0 or over 200 bytes). Retried
 * after a lost connection only when every item has a key. Items refused
 * SLUICE_EMOVING are sent again (above); when such a sending again fails
 * as a whole, those items alone carry its error (SLUICE_ECONN,
 * SLUICE_ETIMEDOUT: unknown; a refusal such as SLUICE_ENOTLEADER: not
 * done) and the call still returns 0: the others were answered. */
SLUICE_API int sluice_put_batch(
    struct sluice_client *c, struct sluice_batch_item *items, size_t n);

/* ---- tasks ---------------------------------------------------------- */

/* A task as take, peek and list return it. Every pointer points into the
 * same allocation as the task itself. */
struct sluice_task {
	uint64_t id;
	uint64_t lease; /* the lease to pass to ack etc.; 0 unless taken */
	int state;      /* SLUICE_READY .. SLUICE_DONE */
	int detached;   /* the lease survives the session */
	uint32_t priority;
	uint32_t attempts;     /* times taken, this take included */
	uint32_t max_attempts; /* 0: unlimited */
	uint64_t ttr_ms;
	uint64_t run_at;     /* unix ms it is (or was) due */
	uint64_t period_ms;  /* 0: not recurring */
	uint64_t created_at; /* unix ms */
	uint64_t updated_at; /* unix ms */
	uint64_t taken_at;   /* unix ms of the last take; 0: never */
	uint64_t deadline;   /* unix ms the lease ends; 0 unless taken */
	const char *tube;
	const char *key;        /* NULL: none */
	const char *last_error; /* NULL: none */
	const void *payload;    /* payload_len bytes, then a NUL not counted */
	size_t payload_len;     /* == size, or 0 when the list omitted it */
	size_t size;            /* the payload's size on the server */
	/* A put with `replace` of a taken task queues its new content until
	 * the lease ends (ack, release, fail, bury, expiry): then the task
	 * takes it and waits again. */
	int replace_pending; /* 1: such a replacement waits; `pending` is it */
	struct {
		uint32_t priority;
		uint32_t max_attempts;
		uint64_t ttr_ms;
		uint64_t run_at; /* as asked; a time past means at once */
		uint64_t period_ms;
		const void *payload; /* as payload above */
		size_t payload_len; /* == size, or 0 when the list omitted it */
		size_t size;
		uint64_t version; /* the replacement's (if_newer); 0: none */
	} pending;
	/* SLUICE_DONE only (else 0 / NULL): */
	uint64_t finished_at; /* unix ms of its ack */
	uint64_t kept_until;  /* unix ms it is purged */
	uint64_t duration_ms; /* its last take to its ack */
	const char *result;   /* the ack's result text; NULL: none */
	/* The client's version of the content, as a put with if_newer
	 * stored it; 0: none. */
	uint64_t version;
	/* Who holds a lease that is not detached (SLUICE_TAKEN): the
	 * server's id of that connection, and its address as the server
	 * sees it ("127.0.0.1:40312"). 0 / NULL otherwise, and NULL when the
	 * server does not know the address (a follower). */
	uint32_t session;
	const char *peer;
	const char *group; /* its fair group; NULL: none */
	/* Its parents (none: NULL, 0), not acked yet of them, its rule;
	 * the first 1,000 of its children, all counted in nchildren. */
	const struct sluice_parent *parents;
	size_t nparents;
	uint32_t parents_pending;
	int on_parent_failure;
	const uint64_t *children;
	size_t nchildren_shown;
	uint64_t nchildren;
	int cancelled; /* taken and cancelled (sluice_cancel) */
	/* The cluster it came from, when taken through a routing handle
	 * (sluice_router_take; valid while that handle is open); else
	 * NULL. */
	const char *cluster;
};

/* Frees what take, peek or list returned: the array and everything its
 * tasks point to. NULL is a no-op. */
SLUICE_API void sluice_task_free(struct sluice_task *tasks);

/* The options of a take. Zero means the default of each field. */
struct sluice_take_opts {
	const char *const *tubes; /* NULL: { "default" } */
	size_t ntubes;            /* 1..64; 0 with tubes NULL */
	uint64_t wait_ms;         /* wait for a task this long; 0: don't */
	uint32_t max;             /* up to this many tasks; 0: 1 */
	int detach;               /* the lease survives this handle's
	                             connection and ends only by ttr (or
	                             ack/release/...); else the tasks return
	                             to ready when the connection closes */
	int strict_order;         /* 0: the most urgent task across the tubes
	                             (priority, then the earliest
	                             due, then the smallest id);
	                             else the tubes in the order given, the
	                             first with a ready task gives it */
	int durable;              /* the reply waits until the take itself
	                             is durable, so that no crash can undo
	                             it (its attempt counted, its lease
	                             held); 0: it leaves once the records
	                             its tasks depend on (their puts or
	                             releases) are, even while other
	                             writes commit, and a crash may make the
	                             task ready again (docs/protocol.md) */
};

/* Takes up to `o->max` tasks. `o` NULL: one task from "default", no wait.
 *
 * Returns 0, `*tasks` an array of `*n` >= 1 tasks (free it with
 * sluice_task_free()), each with state SLUICE_TAKEN and its lease.
 * SLUICE_ETIMEDOUT when no task was ready before the wait ended (nothing
 * is taken); SLUICE_ETUBE; SLUICE_ELIMIT (max or ntubes over the limit);
 * SLUICE_ELOG (a take is logged); SLUICE_ENOSPC only when the next task
 * was taken before (released, failed, its lease lost) and the full log's
 * pool for such retries is spent, and wait_ms is 0 (a take that may wait
 * waits for room as for a task): a full log refuses puts, not the first
 * take of a task it accepted. Never retried. */
SLUICE_API int sluice_take(struct sluice_client *c,
    const struct sluice_take_opts *o, struct sluice_task **tasks, size_t *n);

/* The state of a task after ack, release, fail, touch, bury or kick_id. */
struct sluice_after {
	uint64_t id;
	int state;         /* 0: gone (acked and not recurring), else
	                      SLUICE_READY .. SLUICE_DONE */
	uint64_t run_at;   /* SLUICE_DELAYED: unix ms it becomes ready */
	uint64_t deadline; /* SLUICE_TAKEN: unix ms the lease ends */
	int replaced;      /* ack, release, fail, bury: 1 when a replacement
	                      (a put with replace while the task was taken)
	                      took the task's place: it waits again, with the
	                      new content, as `state` says */
};

/* The lease operations name a task by id and the lease its take returned.
 * They return 0 and, when `after` is not NULL, the task's state after the
 * operation. Their errors, in this order of precedence: SLUICE_ENOTFOUND
 * (no such task), SLUICE_ESTATE (the task is not taken, whatever the
 * lease), SLUICE_ESTALE (the lease is not the task's current one: it
 * expired, or the task was released or taken again; lease 0 is always
 * refused: a lease is required); then SLUICE_ENOSPC (on a full log, only
 * for touch and for an ack that keeps the task alive, recurring or with
 * to_tube, once the pool for retries is spent; a fail's error text is
 * then cut to 256 bytes rather than refused), SLUICE_ELOG,
 * SLUICE_EREPLICA. None is retried.
 *
 * SLUICE_FORCE as the lease is an operator's override: the request goes
 * without a lease and with the protocol's force flag, the server skips the
 * lease check (not the state check) and logs it with the client's address.
 * It also lets sluice_bury park a ready or delayed task. */
#define SLUICE_FORCE UINT64_MAX

/* Done. The task is deleted, or a recurring one rescheduled at its run_at
 * plus period; with `to_tube` (NULL: none) it moves, atomically, to that
 * tube as a ready task. Also SLUICE_ETUBE. */
SLUICE_API int sluice_ack(struct sluice_client *c, uint64_t id, uint64_t lease,
    const char *to_tube, struct sluice_after *after);

/* The options of sluice_ack_opts(). Zero means none. */
struct sluice_ack_opts {
	const char *to_tube; /* move the task to this tube, as sluice_ack */
	const char *result;  /* up to 65535 bytes (else SLUICE_ERESULT),
	                        kept with the task when its tube retains
	                        finished tasks (SLUICE_DONE), and for the
	                        tasks put after it; dropped otherwise */
};

/* sluice_ack with options: as sluice_ack, and the task's result. A task
 * kept as done reports `after->state` SLUICE_DONE. */
SLUICE_API int sluice_ack_opts(struct sluice_client *c, uint64_t id,
    uint64_t lease, const struct sluice_ack_opts *o,
    struct sluice_after *after);

/* Back to ready, or delayed by `delay_ms`; `priority` >= 0 sets a new
 * priority (< 0 keeps it; above UINT32_MAX: SLUICE_EINVAL). */
SLUICE_API int sluice_release(struct sluice_client *c, uint64_t id,
    uint64_t lease, uint64_t delay_ms, int64_t priority,
    struct sluice_after *after);

/* sluice_release, and `front` 1: ready at once at its place before the take
 * (not behind the tasks due; with a delay SLUICE_EINVAL; SLUICE_EPROTO
 * from a server older than it). */
struct sluice_release_opts {
	uint64_t delay_ms;
	int64_t priority;
	int front;
};
SLUICE_API int sluice_release_opts(struct sluice_client *c, uint64_t id,
    uint64_t lease, const struct sluice_release_opts *o,
    struct sluice_after *after);

/* The take of `lease` undone: the task waits again where it was before it,
 * its attempt uncounted (for a task taken and not worked on). The holder's
 * only: SLUICE_FORCE is SLUICE_EINVAL; SLUICE_EPROTO from older servers. */
SLUICE_API int sluice_untake(struct sluice_client *c, uint64_t id,
    uint64_t lease, struct sluice_after *after);

/* Failed, with `error` (NULL: none; up to 1024 bytes, else SLUICE_ELIMIT)
 * as its last error. Delayed by `delay_ms`, or with `delay_ms` < 0 by the
 * server's backoff (1 s doubling per attempt, at most 1 h); buried when
 * attempts reached max_attempts. */
SLUICE_API int sluice_fail(struct sluice_client *c, uint64_t id, uint64_t lease,
    const char *error, int64_t delay_ms, struct sluice_after *after);

/* Failed for good (bad input no retry can mend): buried at once, whatever
 * the attempts, with `error` as its last error (as sluice_fail). */
SLUICE_API int sluice_fail_fatal(struct sluice_client *c, uint64_t id,
    uint64_t lease, const char *error, struct sluice_after *after);

/* Extends the lease by the task's ttr from now (`after->deadline`). */
SLUICE_API int sluice_touch(struct sluice_client *c, uint64_t id,
    uint64_t lease, struct sluice_after *after);

/* Parks the task until kicked. A ready or delayed task is parked only
 * with SLUICE_FORCE (else SLUICE_ESTATE). */
SLUICE_API int sluice_bury(struct sluice_client *c, uint64_t id, uint64_t lease,
    struct sluice_after *after);

/* sluice_bury with `error` (NULL or "": none, the last error is kept; up
 * to 1024 bytes, else SLUICE_ELIMIT) recorded as the task's last error:
 * why it was parked, for `sluice errors`. */
SLUICE_API int sluice_bury_error(struct sluice_client *c, uint64_t id,
    uint64_t lease, const char *error, struct sluice_after *after);

/* A task and the lease its take returned: an item of sluice_ack_batch. */
struct sluice_lease {
	uint64_t id;
	uint64_t lease;
};

/* One item's result in sluice_ack_batch and sluice_delete_batch. */
struct sluice_result {
	int rc;             /* 0 or the SLUICE_E* code of this item */
	const char *errmsg; /* when rc != 0, why, in the server's words
	                       ("ack 8: lease 1002 is stale: ..."); "" when
	                       rc is 0. Valid until the next call on the
	                       handle. */
};

/* Acks `n` tasks (1..SLUICE_BATCH_MAX) in one request and one commit, as
 * many sluice_ack calls without `to_tube` would (a recurring task is
 * rescheduled). Each item follows the lease rule on its own: a bad one
 * does not refuse its neighbours. There is no force in a batch: an item
 * with lease SLUICE_FORCE is simply stale.
 *
 * Returns 0 when the server answered for each item: results[i] is then
 * set for each, rc 0 or SLUICE_ENOTFOUND, SLUICE_ESTATE, SLUICE_ESTALE (as
 * sluice_ack), SLUICE_ENOSPC (a recurring task's ack, as sluice_ack's),
 * SLUICE_ELOG. Otherwise `results` are untouched and the error is the
 * request's: SLUICE_ELIMIT (n over the limit), SLUICE_EINVAL (n 0 or an
 * array missing), SLUICE_EREPLICA (too few replicas acknowledged: the
 * acks may or may not hold), SLUICE_EUNKNOWNOP (a server older than the
 * batch forms). Never retried. */
SLUICE_API int sluice_ack_batch(struct sluice_client *c,
    const struct sluice_lease *items, size_t n, struct sluice_result *results);

/* Deletes `n` tasks by id (1..SLUICE_BATCH_MAX) in one request and one
 * commit, each on its own (SLUICE_ENOTFOUND for an unknown id). Returns
 * as sluice_ack_batch. */
SLUICE_API int sluice_delete_batch(struct sluice_client *c, const uint64_t *ids,
    size_t n, struct sluice_result *results);

/* ---- update ---------------------------------------------------------- */

/* What sluice_update changes. Initialise with sluice_update_opts_init():
 * every field then says "unchanged"; set those to change. */
struct sluice_update_opts {
	int64_t priority;     /* 0..UINT32_MAX; < 0: unchanged */
	int64_t delay_ms;     /* ready after this many ms from now; < 0:
	                         unchanged */
	uint64_t run_at;      /* unix ms, instead of delay_ms; 0: unchanged */
	int64_t ttr_ms;       /* 1..; < 0: unchanged */
	int64_t max_attempts; /* 0 (unlimited)..UINT32_MAX; < 0: unchanged */
	int set_payload;      /* non-zero: the payload becomes payload[len] */
	const void *payload;
	size_t len;
};

/* Every field unchanged. */
SLUICE_API void sluice_update_opts_init(struct sluice_update_opts *o);

/* Changes a ready, delayed or buried task in place, without a key:
 * attempts, key, tube and id stay; its updated_at becomes now (a buried
 * task goes to the back of the kick order). A new run time makes the task
 * ready or delayed by it. A taken task may change its priority only, at
 * once (it sits in no priority order while taken: its release, fail or
 * lost lease brings it back with the new one). Returns 0 and, when
 * `after` is not NULL, the task's state after. Errors: SLUICE_ENOTFOUND,
 * SLUICE_ESTATE (a taken task and anything but the priority; a buried task
 * and a run time: kick it first), SLUICE_EINVAL (nothing to change, both
 * delay and run_at, a value out of range), SLUICE_ETOOBIG, SLUICE_ENOSPC
 * (a new payload on a full log), SLUICE_ELOG, SLUICE_EREPLICA,
 * SLUICE_EUNKNOWNOP (a server older than update). Never retried. */
SLUICE_API int sluice_update(struct sluice_client *c, uint64_t id,
    const struct sluice_update_opts *o, struct sluice_after *after);

/* ---- admin ------------------------------------------------------------ */

/* Moves up to `n` (>= 1) buried tasks of `tube` back to ready. Returns 0
 * and `*kicked` (optional); SLUICE_ETUBE, SLUICE_EINVAL (n 0);
 * SLUICE_ENOSPC when nothing was kicked because the log is full and its
 * pool for retries is spent (kicks, like pauses, are retries). */
SLUICE_API int sluice_kick(
    struct sluice_client *c, const char *tube, uint32_t n, uint64_t *kicked);

/* Moves one buried task back to ready. SLUICE_ENOTFOUND, SLUICE_ESTATE
 * (not buried), SLUICE_ENOSPC (as sluice_kick). */
SLUICE_API int sluice_kick_id(
    struct sluice_client *c, uint64_t id, struct sluice_after *after);

/* Deletes a task in any state. SLUICE_ENOTFOUND. */
SLUICE_API int sluice_delete(struct sluice_client *c, uint64_t id);

/* Deletes the task holding `key` in `tube` (NULL: "default"; keys are
 * per tube); `*id` (optional) is its id. SLUICE_ENOTFOUND, SLUICE_EKEY,
 * SLUICE_ETUBE. */
SLUICE_API int sluice_delete_key(
    struct sluice_client *c, const char *tube, const char *key, uint64_t *id);

/* Deletes every task of `tube`; `*deleted` (optional) counts them.
 * SLUICE_ETUBE. */
SLUICE_API int sluice_flush(
    struct sluice_client *c, const char *tube, uint64_t *deleted);

/* Deletes, in one request and one logged change, every task of `tube` in
 * `state` (SLUICE_READY, SLUICE_DELAYED, SLUICE_BURIED or SLUICE_DONE;
 * else SLUICE_EINVAL) at least `older_ms` old: by its creation, a done
 * task by its ack. Their keys are free at once. `*deleted` (optional)
 * counts them. SLUICE_ETUBE. */
SLUICE_API int sluice_delete_where(struct sluice_client *c, const char *tube,
    int state, uint64_t older_ms, uint64_t *deleted);

/* sluice_delete_where of the tasks in any of `states` (SLUICE_STATE_BIT()s;
 * taken only with `force`: leases end, holders' acks get ENOTFOUND) last
 * changed (updated_at; by_created: created) older_ms ago or more. */
#define SLUICE_STATE_BIT(s) (1u << (s))
struct sluice_delete_where_opts {
	unsigned states;
	uint64_t older_ms;
	int by_created;
	int force;
};
SLUICE_API int sluice_delete_where_opts(struct sluice_client *c,
    const char *tube, const struct sluice_delete_where_opts *o,
    uint64_t *deleted);

/* Releases every taken task of `tube` at once (an operator's act, as a
 * release with SLUICE_FORCE of each: the leases end, the tasks are ready
 * again with their attempts); `*released` (optional) counts them.
 * SLUICE_ETUBE. */
SLUICE_API int sluice_release_all(
    struct sluice_client *c, const char *tube, uint64_t *released);

/* A kick of an error group, and dry runs: sluice_bulk.h, part of this
 * header. */
#include "sluice_bulk.h"

/* Waiting for a task's result, and cancelling: sluice_result.h. */
#include "sluice_result.h"

/* One task by id, by key in its tube (NULL: "default"; keys are per
 * tube), or the next of a tube to leave `state`
 * (SLUICE_READY: the next to be taken; SLUICE_DELAYED: the soonest due;
 * SLUICE_BURIED: the oldest buried; SLUICE_DONE: the one finished
 * longest ago; other states SLUICE_EINVAL). A done task is found by its
 * key while the key is reserved (the dedup window). Returns 0
 * and `*task` (one task, free it with sluice_task_free());
 * SLUICE_ENOTFOUND; SLUICE_EKEY; SLUICE_ETUBE. Retried after a lost
 * connection. */
SLUICE_API int sluice_peek(
    struct sluice_client *c, uint64_t id, struct sluice_task **task);
SLUICE_API int sluice_peek_key(struct sluice_client *c, const char *tube,
    const char *key, struct sluice_task **task);
SLUICE_API int sluice_peek_next(struct sluice_client *c, const char *tube,
    int state, struct sluice_task **task);

/* The settings a tube may carry (sluice_tube_set): each one is the
 * tube's own, or the server's default. */
enum sluice_tube_field {
	SLUICE_TS_TTR = 0x01,          /* a put's ttr when it gives none */
	SLUICE_TS_MAX_ATTEMPTS = 0x02, /* a put's max_attempts when it gives
	                                  none (0) */
	SLUICE_TS_BACKOFF = 0x04,      /* a fail's delay: base, doubling, cap */
	SLUICE_TS_KEEP_DONE = 0x08,    /* how long finished tasks are kept */
	SLUICE_TS_LOST_LEASE = 0x10,   /* a lost lease (ttr, disconnect): ready
	                                  at once, or the fail's backoff */
	SLUICE_TS_DEAD_LETTER = 0x20,  /* where buried tasks go, ready */
	SLUICE_TS_ALL = 0x3f
};

struct sluice_tube_conf {
	unsigned set; /* SLUICE_TS_*: the fields the tube sets itself; in a
	                 result the others hold the server's defaults */
	uint64_t ttr_ms;
	uint32_t max_attempts; /* 0: unlimited */
	uint64_t backoff_base_ms;
	uint64_t backoff_cap_ms;
	uint64_t keep_done_ms;    /* 0: finished tasks are not kept */
	int lost_lease_immediate; /* 1: ready at once; 0: as a fail */
	char dead_letter[SLUICE_TUBE_MAX + 1]; /* "": none */
};

/* Changes a tube's settings: the fields in set->set take set's values,
 * those in `unset` go back to the server's defaults, the others stay.
 * `set` may be NULL (only unset); `*now` (optional) gets the settings
 * after the change. A tube set this way is made if need be and listed by
 * stats even without tasks. Returns 0; SLUICE_ETUBE (the tube or the
 * dead letter's name); SLUICE_EINVAL (a field both set and unset, ttr 0
 * or over 7 days, a backoff cap below its base, a dead letter that is the
 * tube itself); SLUICE_ELIMIT (too many tubes). Retried after a lost
 * connection (setting values is idempotent). */
SLUICE_API int sluice_tube_set(struct sluice_client *c, const char *tube,
    const struct sluice_tube_conf *set, unsigned unset,
    struct sluice_tube_conf *now);

/* The settings in force for `tube` (set says which are its own). A tube
 * the server does not have shows the defaults. SLUICE_ETUBE. */
SLUICE_API int sluice_tube_show(
    struct sluice_client *c, const char *tube, struct sluice_tube_conf *conf);

/* A tube's flow limits (docs/queue.md, "Flow limits"): at most `rate`
 * tasks handed out per `per_ms` (1000, 60000 or 3600000: /s, /m, /h), up
 * to `burst` at once (0 when set: 100 ms of tokens, at least 1), and at
 * most `concurrency` tasks taken at once. */
enum { SLUICE_LIM_RATE = 0x01, SLUICE_LIM_CONCURRENCY = 0x02 };
struct sluice_limits {
	unsigned set; /* SLUICE_LIM_*: the limits the tube has */
	uint32_t rate, per_ms, burst, concurrency;
	/* in a result: whole tokens in the bucket, tasks taken (slots in
	 * use), ready tasks a limit holds back now */
	uint64_t tokens, taken, held;
};

/* Sets the limits in set->set and lifts those in `unset`; `*now`
 * (optional) gets them after. The tube must exist (SLUICE_ENOTFOUND);
 * SLUICE_EINVAL: a rate of 0 or over 1000000/s, a burst over 1000000, a
 * concurrency of 0 (the error's text says which); nothing changes then. */
SLUICE_API int sluice_tube_limit(struct sluice_client *c, const char *tube,
    const struct sluice_limits *set, unsigned unset, struct sluice_limits *now);
/* The limits of `tube` and where they stand (set 0: none). */
SLUICE_API int sluice_tube_limits(
    struct sluice_client *c, const char *tube, struct sluice_limits *now);
/* A tube's fair groups by backlog, and their limits: sluice_groups.h,
 * part of this header. */
#include "sluice_groups.h"

/* Removes `tube` and its settings; with `force` its tasks too, in one
 * commit (their keys are free at once). `*deleted` (optional): the tasks
 * deleted. SLUICE_ENOTFOUND (no such tube), SLUICE_ENOTEMPTY (tasks left,
 * without force), SLUICE_ETUBE. */
SLUICE_API int sluice_tube_delete(
    struct sluice_client *c, const char *tube, int force, uint64_t *deleted);

/* A named counter of stats (see docs/protocol.md for the names). */
struct sluice_kv {
	const char *name;
	uint64_t value;
};

struct sluice_tube_stats {
	const char *name; /* "" for the totals */
	uint64_t ready, delayed, taken, buried;
	uint64_t paused_until;        /* unix ms; 0: not paused */
	uint64_t oldest_ready_age_ms; /* 0: nothing ready */
	size_t nkv;
	const struct sluice_kv *kv;   /* cumulative counters: "puts", ... */
	struct sluice_tube_conf conf; /* the tube's settings (not the
	                                 totals') */
};

struct sluice_stats {
	int role; /* SLUICE_LEADER or SLUICE_FOLLOWER */
	uint64_t epoch;
	uint64_t lsn;         /* last LSN written */
	uint64_t durable_lsn; /* last LSN durable */
	uint64_t now;         /* the server's clock, unix ms */
	const char *leader;   /* a follower's leader URL; "" on a leader */
	struct sluice_tube_stats totals;
	size_t nkv;
	const struct sluice_kv *kv; /* log and replication state */
	size_t ntubes;
	const struct sluice_tube_stats *tubes;
};

/* Counts of every tube, or of `tube` alone (NULL: every tube). Returns 0
 * and `*stats` (free it with sluice_stats_free()); SLUICE_ETUBE. Retried
 * after a lost connection. Of every tube, a server lists at most 1000
 * (in the order they were made; the pair `tubes_next` is not 0 when more
 * follow): read a larger node with sluice_stats_page. */
SLUICE_API int sluice_stats(
    struct sluice_client *c, const char *tube, struct sluice_stats **stats);

#define SLUICE_STATS_PAGE_MAX 10000 /* tubes per sluice_stats_page */

/* A page of the stats of every tube: up to `limit` (1..
 * SLUICE_STATS_PAGE_MAX) tubes in use from cursor `after` on (0 first),
 * in the order they were made, and in `*next` the cursor of the next
 * page, 0 after the last: every tube in use is listed once. Totals and
 * pairs as sluice_stats. Errors as sluice_stats, and SLUICE_EINVAL
 * (limit 0), SLUICE_ELIMIT (over the maximum), SLUICE_EPROTO (a server
 * older than pages). */
SLUICE_API int sluice_stats_page(struct sluice_client *c, uint32_t after,
    uint32_t limit, struct sluice_stats **stats, uint32_t *next);
SLUICE_API void sluice_stats_free(struct sluice_stats *stats);

/* The value named `name` among `n` pairs: 0 and `*value`, or
 * SLUICE_ENOTFOUND. */
SLUICE_API int sluice_kv_get(
    const struct sluice_kv *kv, size_t n, const char *name, uint64_t *value);

/* Up to `limit` (1..SLUICE_LIST_MAX) tasks of `tube` in `state` (0: every
 * state) in `order` (SLUICE_ORDER_*); payloads only when `payloads` is
 * non-zero (else each task's payload is empty and `size` gives its
 * length). Returns 0, `*tasks` and `*n` (possibly 0; free with
 * sluice_task_free()); SLUICE_ETUBE, SLUICE_EINVAL, SLUICE_ELIMIT.
 * Retried after a lost connection. */
SLUICE_API int sluice_list(struct sluice_client *c, const char *tube, int state,
    int order, uint32_t limit, int payloads, struct sluice_task **tasks,
    size_t *n);

/* sluice_list's page after a cursor: the tasks with an id above `after`,
 * lowest first (`order` must be SLUICE_ORDER_ID when `after` is not 0:
 * SLUICE_EINVAL otherwise). Start with 0 and pass the last id of each
 * page until a page holds fewer than `limit` tasks: every task that
 * lives through the walk is listed exactly once, whatever else changes
 * meanwhile (ids never move; tasks put during it come after). A server
 * older than this call refuses a cursor with SLUICE_EPROTO. */
SLUICE_API int sluice_list_after(struct sluice_client *c, const char *tube,
    int state, int order, uint64_t after, uint32_t limit, int payloads,
    struct sluice_task **tasks, size_t *n);

struct sluice_error_count {
	const char *text; /* a last_error ("" for tasks without one) */
	uint64_t count;   /* tasks of the tube with it */
	uint64_t ids[3];  /* examples: the ids of up to 3 of them, lowest
	                     first (a server older than this library sends
	                     none) */
	size_t nids;
};

/* The buried tasks of `tube` (a retried task keeps its last error) grouped
 * by last error, most frequent first, with example ids: 0, `*errors` and
 * `*n` (free with sluice_errors_free()); SLUICE_ETUBE. sluice_errors_state:
 * those in `state` (SLUICE_READY .. SLUICE_BURIED, 0: every live one). */
SLUICE_API int sluice_errors(struct sluice_client *c, const char *tube,
    struct sluice_error_count **errors, size_t *n);
SLUICE_API int sluice_errors_state(struct sluice_client *c, const char *tube,
    int state, struct sluice_error_count **errors, size_t *n);
SLUICE_API void sluice_errors_free(struct sluice_error_count *errors);

/* A tube's statistics over time, per hour (48 hours) and per second (15
 * minutes): sluice_history.h, part of this header. */
#include "sluice_history.h"

/* Hands out no task of `tube` for `ms` ms (0: resume now). `*until`
 * (optional): unix ms the pause ends, 0 when resumed. SLUICE_ETUBE,
 * SLUICE_ENOSPC (as sluice_kick). */
SLUICE_API int sluice_pause(
    struct sluice_client *c, const char *tube, uint64_t ms, uint64_t *until);

/* ---- the node and its cluster -------------------------------------- */

/* Snapshots, promotion, following, and automatic failover's cluster view
 * and switchover: sluice_node.h, part of this header. */
#include "sluice_node.h"

/* ---- schedules ------------------------------------------------------ */

/* Cron schedules that put tasks: sluice_sched.h, part of this header. */
#include "sluice_sched.h"
/* Batches of tasks with callbacks: sluice_batch.h, part of this header. */
#include "sluice_batch.h"
/* ---- several clusters ---------------------------------------------- */

/* The cluster map and the routing handle: sluice_map.h, part of this
 * header. */
#include "sluice_map.h"
#include "sluice_move.h" /* a tube moved between clusters */

/* ---- names --------------------------------------------------------- */

/* "ready", "delayed", "taken", "buried"; "gone" for 0; "?" otherwise. */
SLUICE_API const char *sluice_state_name(int state);

/* "follower", "leader", "candidate", "fenced"; "?" otherwise. */
SLUICE_API const char *sluice_node_role_name(int role);

#ifdef __cplusplus
}
#endif
#endif
