/* etcd - a small client of etcd's v3 API through its JSON gateway (HTTP
 * POST of JSON to /v3/..., served by etcd 3.4 on its client port), for
 * the leader election of automatic failover (docs/replication.md).
 *
 * BLOCKING: every call sends one request and waits for its answer, up to
 * the client's timeout. Never call it on the core thread (a slow etcd
 * must never stall request handling): it is meant for a thread of its
 * own, the election's. One `struct etcd` is used by one thread at a time;
 * two threads that both talk to etcd each make their own.
 *
 * Endpoints. The client is given several etcd members; a call tries them
 * in turn, from the one that last answered, moving to the next only when
 * a connection cannot be made (nothing was sent, so nothing can have been
 * applied twice). The timeout bounds the whole call, every endpoint
 * tried included. Each call opens its own connection and closes it.
 *
 * Errors. Calls return 0 or one of the module's own codes below (not
 * SLUICE_E* codes: they never reach the wire; the election turns them
 * into log lines and metrics), and etcd_errmsg() says what happened, with
 * the endpoint and the path. After ETCD_ETIMEDOUT or ETCD_EIO the request
 * may or may not have been applied: the caller reads the state back
 * before it relies on either outcome. Keys are C strings; values are
 * bytes. Both travel as base64 in the JSON, as the gateway wants. */
#ifndef SLUICE_ETCD_ETCD_H
#define SLUICE_ETCD_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum etcd_err {
	ETCD_OK = 0,
	ETCD_EINVAL = 1,    /* a bad argument (endpoint URL, TTL, key) */
	ETCD_ENOMEM = 2,    /* out of memory */
	ETCD_ECONNECT = 3,  /* no endpoint accepted a connection */
	ETCD_ETIMEDOUT = 4, /* no complete answer within the timeout */
	ETCD_EIO = 5,       /* the connection failed during the exchange */
	ETCD_EHTTP = 6,     /* etcd answered an HTTP error or an error object */
	ETCD_EJSON = 7,     /* the answer is not the JSON expected: malformed,
	                       a field missing or of the wrong type */
	ETCD_ENOLEASE = 8,  /* the lease does not exist (expired or revoked) */
	ETCD_ERRMAX_
};

/* One key as etcd stores it. Owned by the struct (etcd_kv_free). */
struct etcd_kv {
	char *key;      /* NUL-ended */
	uint8_t *value; /* `len` bytes, then a NUL (so text values are C
	                   strings) */
	size_t len;
	int64_t create_rev; /* revision that created it */
	int64_t mod_rev;    /* revision of its last change */
	int64_t version;    /* changes since it was created (1: the first) */
	int64_t lease;      /* the lease it is bound to; 0: none */
};

/* Keys under a prefix, sorted by key, and the store's revision when they
 * were read (a later watch would start after it). */
struct etcd_kvs {
	struct etcd_kv *kv;
	size_t n;
	int64_t revision;
};

struct etcd;

/* A client of the members `endpoints` ("http://HOST:PORT", several
 * separated by commas), each call bounded by `timeout_ms` (> 0). Returns
 * NULL with a message in `err` (errlen bytes) when an endpoint is not an
 * http:// URL or memory runs out. Talks to nobody until the first call. */
struct etcd *etcd_new(
    const char *endpoints, int timeout_ms, char *err, size_t errlen);

/* Frees the client; NULL is fine. No call may be running. */
void etcd_delete(struct etcd *e);

/* What the last failed call met, e.g. "http://127.0.0.1:2379
 * /v3/kv/put: HTTP 404: etcdserver: requested lease not found". Valid
 * until the next call. */
const char *etcd_errmsg(const struct etcd *e);

/* Name of an ETCD_E* code. */
const char *etcd_strerror(int rc);

/* Grants a lease of `ttl_s` seconds (> 0). On success *id is its ID and
 * *granted_s the TTL etcd granted (etcd may raise a TTL below its
 * minimum). */
int etcd_lease_grant(
    struct etcd *e, int64_t ttl_s, int64_t *id, int64_t *granted_s);

/* Renews lease `id` once, for its full TTL. On success *ttl_s is the TTL
 * it now has. ETCD_ENOLEASE when it has expired or was revoked. */
int etcd_lease_keepalive(struct etcd *e, int64_t id, int64_t *ttl_s);

/* Revokes lease `id`, deleting every key bound to it. ETCD_ENOLEASE
 * when it did not exist. */
int etcd_lease_revoke(struct etcd *e, int64_t id);

/* Sets `key` to `len` bytes of `value`, bound to `lease` (0: none; the key
 * then lives until deleted). ETCD_ENOLEASE when the lease does not
 * exist. */
int etcd_put(struct etcd *e, const char *key, const void *value, size_t len,
    int64_t lease);

/* Creates `key` = `value` bound to `lease` only if `key` does not exist
 * (create_revision == 0), atomically (one etcd transaction). On success
 * *created says whether this call created it; when it did not, *cur (if
 * not NULL) receives the key as it is (the caller frees it with
 * etcd_kv_free). */
int etcd_create(struct etcd *e, const char *key, const void *value, size_t len,
    int64_t lease, bool *created, struct etcd_kv *cur);

/* Sets `key` bound to `lease` (0: none) only if `guard` exists bound to
 * lease `guard_lease`, atomically: a leader writes what only the holder
 * of the leader key may write. *done says whether it was written. */
int etcd_put_if_lease(struct etcd *e, const char *key, const void *value,
    size_t len, int64_t lease, const char *guard, int64_t guard_lease,
    bool *done);

/* Reads `key`. On success *found says whether it exists and, if so, *kv
 * holds it (the caller frees it with etcd_kv_free). */
int etcd_get(struct etcd *e, const char *key, bool *found, struct etcd_kv *kv);

/* Reads every key that starts with `prefix` into *out (the caller frees
 * it with etcd_kvs_free). ETCD_EINVAL for an empty prefix. */
int etcd_get_prefix(struct etcd *e, const char *prefix, struct etcd_kvs *out);

/* Deletes `key`. On success *deleted (if not NULL) says whether it
 * existed. */
int etcd_del(struct etcd *e, const char *key, bool *deleted);

/* In one transaction, without a lease: sets `key` to `len` bytes of
 * `value` (`value` NULL: deletes it, only if it exists) and `marker` to
 * `mlen` bytes of `mval`, so that a reader of the marker sees every
 * change of the keys it marks. *done is false when a delete found no key
 * (then nothing changed); *revision is the store's revision after. */
int etcd_put_marked(struct etcd *e, const char *key, const void *value,
    size_t len, const char *marker, const void *mval, size_t mlen, bool *done,
    int64_t *revision);

/* etcd_put_marked's put (not a delete) made only if `key` holds exactly
 * `elen` bytes of `expect`, in the same transaction: a change made on
 * what was read, never over a change made since. *done false when the
 * key held something else (then nothing changed). */
int etcd_put_marked_if(struct etcd *e, const char *key, const void *value,
    size_t len, const void *expect, size_t elen, const char *marker,
    const void *mval, size_t mlen, bool *done, int64_t *revision);

void etcd_kv_free(struct etcd_kv *kv);
void etcd_kvs_free(struct etcd_kvs *kvs);

#endif
