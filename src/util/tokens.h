/* tokens - the token file of --auth and what it says of each token; a
 * library of its own, linked by sluiced (which loads the file and checks
 * every request's token against it) and by the CLI (whose `sluice token
 * new` hashes a new token and checks its line with this same parser).
 *
 * A token is a secret a client sends once per connection (the wire op
 * auth); the server keeps only its SHA-256. Each line of the file names
 * one token:
 *
 *     NAME ROLE TUBES SHA256HEX [QUOTA=VALUE ...]
 *
 * NAME     1..TOKENS_NAME_MAX bytes of [A-Za-z0-9_.:-], unique in the file
 * ROLE     producer, worker, admin, replica or monitor
 * TUBES    `*` (every tube), a prefix pattern `emails*`, or one tube name
 * SHA256   64 hex digits: the SHA-256 of the token's bytes
 * QUOTA    tubes, tasks, bytes or parked, each at most once; VALUE a
 *          whole number (bytes may end in k, m or g: KiB, MiB, GiB) or
 *          `none` (no limit). What each bounds: quota.c.
 *
 * A line `default QUOTA=VALUE ...` (at most one; its first word is
 * `default` and every other one holds a `=`) sets the quotas of the
 * tokens whose TUBES is not `*` where they name none. Without it, and for
 * what it leaves out, those tokens get TOKENS_DEFAULT_TUBES tubes and no
 * other limit; a token for `*` is limited only by its own line.
 *
 * Blank lines and lines whose first non-blank is `#` are ignored. A
 * token is looked up by its hash, compared in constant time with every
 * line's (a lookup costs the same whether and where it matches).
 *
 * The table is read by the core at start and on SIGHUP; everything here
 * is pure (no globals), so the unit test drives it directly. */
#ifndef SLUICE_UTIL_TOKENS_H
#define SLUICE_UTIL_TOKENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOKENS_NAME_MAX  64
#define TOKENS_TUBES_MAX 201 /* a tube name (200) and its `*` */
#define TOKENS_HASH_LEN  32
#define TOKENS_TOKEN_MAX 256 /* bytes of a token on the wire */
#define TOKENS_ERR_MAX   256

enum tokens_role {
	TOKENS_PRODUCER = 1, /* put, peek of its tubes */
	TOKENS_WORKER = 2,   /* take, ack, release, fail, touch, bury, put */
	TOKENS_ADMIN = 3,    /* everything */
	TOKENS_REPLICA = 4,  /* the replication stream only */
	TOKENS_MONITOR = 5,  /* stats, stats_hourly, history, cluster; /stats,
	                      /metrics, /v1/history */
	TOKENS_ROLE_END_
};

/* The quotas of a token (quota.c), each TOKENS_UNLIMITED or a bound. */
enum tokens_quota_kind {
	TOKENS_Q_TUBES,  /* tubes its pattern's namespace may hold */
	TOKENS_Q_TASKS,  /* live tasks there (every state but done) */
	TOKENS_Q_BYTES,  /* their payload bytes */
	TOKENS_Q_PARKED, /* takes of the token waiting at once */
	TOKENS_Q_END_
};

#define TOKENS_UNLIMITED     UINT64_MAX
#define TOKENS_DEFAULT_TUBES 1000 /* a token not for `*`, by default */

struct tokens_entry {
	char name[TOKENS_NAME_MAX + 1];
	uint8_t role;                     /* enum tokens_role */
	char tubes[TOKENS_TUBES_MAX + 1]; /* as written, `*` included */
	size_t prefix_len; /* a pattern's bytes before its `*`; or SIZE_MAX:
	                      an exact name */
	uint8_t hash[TOKENS_HASH_LEN];
	uint64_t quota[TOKENS_Q_END_]; /* in force: its own, else the default */
};

struct tokens {
	struct tokens_entry *v;
	size_t n;
};

/* "tubes", "tasks", "bytes", "parked". */
const char *tokens_quota_name(int kind);

/* Reads the token file `path` into `out` (empty on entry). Returns 0,
 * or -1 with `err` saying, in one line, what is wrong and where
 * ("FILE:LINE: ..."); `out` is then left empty. */
int tokens_load(const char *path, struct tokens *out, char err[TOKENS_ERR_MAX]);

/* Parses the text of a token file (`path` names it in errors). Same
 * results as tokens_load. */
int tokens_parse(const char *path, const char *text, size_t len,
    struct tokens *out, char err[TOKENS_ERR_MAX]);

void tokens_free(struct tokens *a);

/* The line whose hash is `hash`, or NULL; constant time in where (and
 * whether) it matches. */
const struct tokens_entry *tokens_find_hash(
    const struct tokens *a, const uint8_t hash[TOKENS_HASH_LEN]);

/* The line of token `token` (its bytes), or NULL. */
const struct tokens_entry *tokens_find(
    const struct tokens *a, const void *token, size_t len);

void tokens_sha256(const void *p, size_t len, uint8_t out[TOKENS_HASH_LEN]);

/* Whether two hashes are equal, in time independent of their bytes. */
bool tokens_hash_eq(const uint8_t *a, const uint8_t *b);

/* Whether the token's pattern covers `tube` (`len` bytes). */
bool tokens_tube_ok(const struct tokens_entry *t, const char *tube, size_t len);

/* Whether the token's pattern is `*`: the node-wide operations (those
 * that name no tube, or every tube) need it. */
bool tokens_all_tubes(const struct tokens_entry *t);

/* ---- failed attempts ------------------------------------------------

 * A token that is not in the file (a guess, or a client with a stale
 * one) is answered EAUTH after a pause, counted per peer address (its
 * port left out: every connection of a host is one address):
 *  - the first TOKENS_FREE_FAILS of an address are answered after 100-500
 *    ms each, each connection's on its own;
 *  - the next ones of the address wait in one line: each after the one
 *    before it, by a pause that doubles from 200 ms up to 1 s. So an
 *    address gets about one answer per second however many connections
 *    it opens and requests it sends at once;
 *  - an address quiet for TOKENS_QUIET_MS starts again from nothing.
 * The answers waiting are bounded: TOKENS_WAIT_ADDR_MAX of an address and
 * TOKENS_WAIT_MAX in all. A failure past either is not queued: its
 * connection is closed at once, unanswered (counted as dropped), so that
 * no number of connections and requests makes the line, or the memory it
 * holds, grow without end.
 * TOKENS_ADDRS addresses are remembered; a new one past that takes the
 * place of the one whose last failure is the oldest, one with no answer
 * waiting first. Each failure may be logged: at most one line per address
 * per second, which counts those that were not and those dropped. A good
 * token is never paused. */
#define TOKENS_ADDR_MAX      64
#define TOKENS_ADDRS         1024
#define TOKENS_FREE_FAILS    20
#define TOKENS_QUIET_MS      60000
#define TOKENS_PAUSE_MIN_MS  100
#define TOKENS_PAUSE_SPAN_MS 400
#define TOKENS_PAUSE_MAX_MS  1000
#define TOKENS_LOG_EVERY_MS  1000
#define TOKENS_WAIT_ADDR_MAX 32
#define TOKENS_WAIT_MAX      4096

struct tokens_addr {
	char addr[TOKENS_ADDR_MAX];
	uint32_t fails;    /* since it was last quiet */
	int64_t last;      /* its last failure (monotonic ms) */
	int64_t due;       /* when its latest answer goes out */
	int64_t logged;    /* its last log line */
	uint64_t unlogged; /* failures since, not logged */
	uint64_t dropped;  /* failures since, dropped */
	uint32_t waiting;  /* its answers waiting */
	uint64_t gen;      /* which address holds the entry (tickets) */
};

struct tokens_limit {
	struct tokens_addr
	    *v; /* TOKENS_ADDRS, allocated at the first failure */
	size_t n;
	uint64_t gen;      /* the last entry's gen */
	uint32_t waiting;  /* answers waiting, every address's */
	uint64_t failures; /* every failure */
	uint64_t delayed;  /* those past an address's TOKENS_FREE_FAILS */
	uint64_t dropped;  /* those past a bound on waiting answers */
};

/* A waiting answer's place in the counts, given back by tokens_limit_done
 * (gen 0: its address has no entry, only the total counts it). */
struct tokens_ticket {
	size_t slot;
	uint64_t gen;
};

/* What to do with one failure. */
struct tokens_verdict {
	int64_t due;       /* when to answer it (monotonic ms) */
	bool delayed;      /* past the address's allowance */
	bool drop;         /* past a bound: close its connection now */
	bool log;          /* log it */
	uint64_t unlogged; /* with log: the address's failures not logged
	                      since its line before */
	uint64_t dropped;  /* with log: the address's failures dropped since
	                      its line before, this one included */
	uint32_t fails;    /* the address's failures since it was quiet */
	struct tokens_ticket ticket; /* without drop: give it back */
};

/* Counts a failure from `peer` ("ADDR:PORT", "[ADDR]:PORT", or any name)
 * at `now` (monotonic ms); `rnd` is a random number (the free pauses'
 * spread). Unless v->drop, its answer waits until tokens_limit_done. */
void tokens_limit_fail(struct tokens_limit *l, const char *peer, int64_t now,
    uint32_t rnd, struct tokens_verdict *v);

/* A waiting answer went out, or was let go (its connection closed). */
void tokens_limit_done(struct tokens_limit *l, struct tokens_ticket t);

/* How a refused token's request ends: answered EAUTH when its pause is
 * over, let go (its connection closed meanwhile), or its connection
 * closed (past a bound on waiting answers). */
enum tokens_end { TOKENS_END_ANSWER, TOKENS_END_DROP, TOKENS_END_CLOSE };

void tokens_limit_free(struct tokens_limit *l);

/* "producer" .. "monitor"; "?" for anything else. */
const char *tokens_role_name(int role);

/* The role named `s`, or 0. */
int tokens_role_parse(const char *s);

#endif
