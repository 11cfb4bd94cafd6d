/* auth - the token file of --auth and what each token may do.
 *
 * A token is a secret a client sends once per connection (the wire op
 * auth); the server keeps only its SHA-256. Each line of the file names
 * one token:
 *
 *     NAME ROLE TUBES SHA256HEX
 *
 * NAME     1..AUTH_NAME_MAX bytes of [A-Za-z0-9_.:-], unique in the file
 * ROLE     producer, worker, admin, replica or monitor
 * TUBES    `*` (every tube), a prefix pattern `emails*`, or one tube name
 * SHA256   64 hex digits: the SHA-256 of the token's bytes
 *
 * Blank lines and lines whose first non-blank is `#` are ignored. A
 * token is looked up by its hash, compared in constant time with every
 * line's (a lookup costs the same whether and where it matches).
 *
 * The table is read by the core at start and on SIGHUP; everything here
 * is pure (no globals), so the unit test drives it directly. */
#ifndef SLUICE_SERVER_AUTH_H
#define SLUICE_SERVER_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_NAME_MAX  64
#define AUTH_TUBES_MAX 201 /* a tube name (200) and its `*` */
#define AUTH_HASH_LEN  32
#define AUTH_TOKEN_MAX 256 /* bytes of a token on the wire */
#define AUTH_ERR_MAX   256

enum auth_role {
	AUTH_PRODUCER = 1, /* put, peek of its tubes */
	AUTH_WORKER = 2,   /* take, ack, release, fail, touch, bury, put */
	AUTH_ADMIN = 3,    /* everything */
	AUTH_REPLICA = 4,  /* the replication stream only */
	AUTH_MONITOR = 5,  /* stats, stats_hourly, history, cluster; /stats,
	                      /metrics, /v1/history */
	AUTH_ROLE_END_
};

struct auth_token {
	char name[AUTH_NAME_MAX + 1];
	uint8_t role;                   /* enum auth_role */
	char tubes[AUTH_TUBES_MAX + 1]; /* as written, `*` included */
	size_t prefix_len; /* a pattern's bytes before its `*`; or SIZE_MAX:
	                      an exact name */
	uint8_t hash[AUTH_HASH_LEN];
};

struct auth {
	struct auth_token *v;
	size_t n;
};

/* Reads the token file `path` into `out` (empty on entry). Returns 0,
 * or -1 with `err` saying, in one line, what is wrong and where
 * ("FILE:LINE: ..."); `out` is then left empty. */
int auth_load(const char *path, struct auth *out, char err[AUTH_ERR_MAX]);

/* Parses the text of a token file (`path` names it in errors). Same
 * results as auth_load. */
int auth_parse(const char *path, const char *text, size_t len, struct auth *out,
    char err[AUTH_ERR_MAX]);

void auth_free(struct auth *a);

/* The line whose hash is `hash`, or NULL; constant time in where (and
 * whether) it matches. */
const struct auth_token *auth_find_hash(
    const struct auth *a, const uint8_t hash[AUTH_HASH_LEN]);

/* The line of token `token` (its bytes), or NULL. */
const struct auth_token *auth_find(
    const struct auth *a, const void *token, size_t len);

void auth_sha256(const void *p, size_t len, uint8_t out[AUTH_HASH_LEN]);

/* Whether two hashes are equal, in time independent of their bytes. */
bool auth_hash_eq(const uint8_t *a, const uint8_t *b);

/* Whether `role` may send the wire op `op` (MSG_OP_*). The tubes the
 * request names are checked apart (auth_tube_ok). */
bool auth_role_allows(int role, uint8_t op);

/* Whether the token's pattern covers `tube` (`len` bytes). */
bool auth_tube_ok(const struct auth_token *t, const char *tube, size_t len);

/* Whether the token's pattern is `*`: the node-wide operations (those
 * that name no tube, or every tube) need it. */
bool auth_all_tubes(const struct auth_token *t);

/* "producer" .. "monitor"; "?" for anything else. */
const char *auth_role_name(int role);

/* The role named `s`, or 0. */
int auth_role_parse(const char *s);

#endif
