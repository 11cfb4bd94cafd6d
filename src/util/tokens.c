/* tokens - the token file of --auth (util/tokens.h): its parser, the
 * SHA-256 of a token, the lookup and the limit on failed attempts (which
 * ops each role may send is the server's: ops/auth.c). The file is small
 * (one line per token) and read whole; a lookup hashes the presented
 * token once and compares the hash with every line's without an early
 * exit. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/sha256.h>

#include "util/tokens.h"

#define TOKENS_FILE_MAX (4u << 20) /* far more lines than anyone writes */

static const char *const role_names[TOKENS_ROLE_END_] = {
	[TOKENS_PRODUCER] = "producer",
	[TOKENS_WORKER] = "worker",
	[TOKENS_ADMIN] = "admin",
	[TOKENS_REPLICA] = "replica",
	[TOKENS_MONITOR] = "monitor",
};

const char *
tokens_role_name(int role)
{
	if (role > 0 && role < TOKENS_ROLE_END_)
		return role_names[role];
	return "?";
}

int
tokens_role_parse(const char *s)
{
	for (int r = 1; r < TOKENS_ROLE_END_; r++)
		if (strcmp(s, role_names[r]) == 0)
			return r;
	return 0;
}

void
tokens_sha256(const void *p, size_t len, uint8_t out[TOKENS_HASH_LEN])
{
	mbedtls_sha256_ret(p, len, out, 0);
}

bool
tokens_hash_eq(const uint8_t *a, const uint8_t *b)
{
	uint8_t d = 0;

	for (size_t i = 0; i < TOKENS_HASH_LEN; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

const struct tokens_entry *
tokens_find_hash(const struct tokens *a, const uint8_t hash[TOKENS_HASH_LEN])
{
	const struct tokens_entry *found = NULL;

	/* Every line is compared: hashes are unique in a table, so at most
	 * one matches, and the time says nothing of which. */
	for (size_t i = 0; i < a->n; i++)
		if (tokens_hash_eq(a->v[i].hash, hash))
			found = &a->v[i];
	return found;
}

const struct tokens_entry *
tokens_find(const struct tokens *a, const void *token, size_t len)
{
	uint8_t h[TOKENS_HASH_LEN];

	tokens_sha256(token, len, h);
	return tokens_find_hash(a, h);
}

bool
tokens_tube_ok(const struct tokens_entry *t, const char *tube, size_t len)
{
	if (t->prefix_len == SIZE_MAX)
		return len == strlen(t->tubes) &&
		    memcmp(tube, t->tubes, len) == 0;
	return len >= t->prefix_len &&
	    memcmp(tube, t->tubes, t->prefix_len) == 0;
}

bool
tokens_all_tubes(const struct tokens_entry *t)
{
	return t->prefix_len == 0;
}

/* ---- failed attempts ------------------------------------------------ */

/* `peer` without its port: "127.0.0.1:5000" -> "127.0.0.1", "[::1]:5000"
 * -> "[::1]"; a peer without one is kept whole. */
static void
peer_addr(const char *peer, char out[TOKENS_ADDR_MAX])
{
	const char *colon = strrchr(peer, ':');
	size_t n = strlen(peer);
	bool port = colon != NULL && colon[1] != '\0' &&
	    strspn(colon + 1, "0123456789") == strlen(colon + 1);

	/* an IPv6 address without brackets has colons and no port */
	if (port &&
	    (strchr(peer, ':') == colon || (colon > peer && colon[-1] == ']')))
		n = (size_t)(colon - peer);
	if (n >= TOKENS_ADDR_MAX)
		n = TOKENS_ADDR_MAX - 1;
	memcpy(out, peer, n);
	out[n] = '\0';
}

/* Whether entry `a` goes before `b` when one must be reused: one with no
 * answer waiting, then the one that failed longest ago. */
static bool
evict_first(const struct tokens_addr *a, const struct tokens_addr *b)
{
	if ((a->waiting == 0) != (b->waiting == 0))
		return a->waiting == 0;
	return a->last < b->last;
}

/* The entry of `addr`: found, new, or another one reused (evict_first).
 * NULL when the table cannot be allocated. */
static struct tokens_addr *
limit_entry(struct tokens_limit *l, const char *addr)
{
	struct tokens_addr *e, *oldest = NULL;

	if (l->v == NULL &&
	    (l->v = calloc(TOKENS_ADDRS, sizeof(*l->v))) == NULL)
		return NULL;
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->v[i].addr, addr) == 0)
			return &l->v[i];
		if (oldest == NULL || evict_first(&l->v[i], oldest))
			oldest = &l->v[i];
	}
	e = l->n < TOKENS_ADDRS ? &l->v[l->n++] : oldest;
	memset(e, 0, sizeof(*e));
	snprintf(e->addr, sizeof(e->addr), "%s", addr);
	e->logged = INT64_MIN / 2;
	e->gen = ++l->gen; /* the tickets of the address it held are void */
	return e;
}

/* The pause of the failure `e` just counted; v->delayed past the
 * address's allowance: its answer waits at the end of the address's
 * line, which is no longer than the answers still in it (those of
 * closed connections left it). */
static void
limit_pause(struct tokens_limit *l, struct tokens_addr *e, int64_t now,
    struct tokens_verdict *v)
{
	if (e->fails > TOKENS_FREE_FAILS) {
		uint32_t step = e->fails - TOKENS_FREE_FAILS;
		int64_t pause = (int64_t)TOKENS_PAUSE_MIN_MS
		    << (step < 4 ? step : 4);
		int64_t end = now + (int64_t)e->waiting * TOKENS_PAUSE_MAX_MS;

		if (pause > TOKENS_PAUSE_MAX_MS)
			pause = TOKENS_PAUSE_MAX_MS;
		if (e->due < end)
			end = e->due;
		v->due = (end > now ? end : now) + pause;
		v->delayed = true;
		l->delayed++;
		e->due = v->due;
	} else if (v->due > e->due) {
		e->due = v->due;
	}
}

void
tokens_limit_fail(struct tokens_limit *l, const char *peer, int64_t now,
    uint32_t rnd, struct tokens_verdict *v)
{
	char addr[TOKENS_ADDR_MAX];
	struct tokens_addr *e;

	memset(v, 0, sizeof(*v));
	l->failures++;
	v->due =
	    now + TOKENS_PAUSE_MIN_MS + (int64_t)(rnd % TOKENS_PAUSE_SPAN_MS);
	v->log = true;
	peer_addr(peer, addr);
	e = limit_entry(l, addr);
	v->drop = l->waiting >= TOKENS_WAIT_MAX ||
	    (e != NULL && e->waiting >= TOKENS_WAIT_ADDR_MAX);
	if (v->drop)
		l->dropped++;
	else
		l->waiting++;
	if (e == NULL)
		return;
	if (e->fails > 0 &&
	    now - (e->due > e->last ? e->due : e->last) > TOKENS_QUIET_MS)
		e->fails = 0;
	v->fails = ++e->fails;
	if (v->drop) {
		e->dropped++;
	} else {
		limit_pause(l, e, now, v);
		e->waiting++;
		v->ticket =
		    (struct tokens_ticket) { (size_t)(e - l->v), e->gen };
	}
	e->last = now;
	v->log = now - e->logged >= TOKENS_LOG_EVERY_MS;
	if (v->log) {
		v->unlogged = e->unlogged;
		v->dropped = e->dropped;
		e->unlogged = e->dropped = 0;
		e->logged = now;
	} else {
		e->unlogged++;
	}
}

void
tokens_limit_done(struct tokens_limit *l, struct tokens_ticket t)
{
	struct tokens_addr *e = t.slot < l->n ? &l->v[t.slot] : NULL;

	if (l->waiting > 0)
		l->waiting--;
	if (t.gen != 0 && e != NULL && e->gen == t.gen && e->waiting > 0)
		e->waiting--;
}

void
tokens_limit_free(struct tokens_limit *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- the file ------------------------------------------------------ */

struct parse {
	const char *path;
	unsigned line;
	char *err;
};

static int fail(struct parse *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
fail(struct parse *p, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(p->err, TOKENS_ERR_MAX, "%s:%u: %s", p->path, p->line, what);
	return -1;
}

static bool
name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == ':' ||
	    ch == '-';
}

static bool
tube_char(char ch)
{
	return name_char(ch) || ch == '/';
}

static int
parse_name(struct parse *p, const char *s, struct tokens_entry *t)
{
	size_t n = strlen(s);

	if (n > TOKENS_NAME_MAX)
		return fail(
		    p, "token name longer than %d bytes", TOKENS_NAME_MAX);
	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i]))
			return fail(
			    p, "token name \"%s\": only [A-Za-z0-9_.:-]", s);
	memcpy(t->name, s, n + 1);
	return 0;
}

static int
parse_tubes(struct parse *p, const char *s, struct tokens_entry *t)
{
	size_t n = strlen(s);
	bool star = n > 0 && s[n - 1] == '*';
	size_t body = star ? n - 1 : n;

	if (body > 200)
		return fail(p, "tube pattern longer than 200 bytes");
	for (size_t i = 0; i < body; i++)
		if (!tube_char(s[i]))
			return fail(p,
			    "tube pattern \"%s\": a tube name, a prefix and "
			    "`*`, "
			    "or `*`",
			    s);
	memcpy(t->tubes, s, n + 1);
	t->prefix_len = star ? body : SIZE_MAX;
	return 0;
}

static int
hex_val(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static int
parse_hash(struct parse *p, const char *s, struct tokens_entry *t)
{
	if (strlen(s) != 2 * TOKENS_HASH_LEN)
		return fail(p,
		    "the hash is %zu characters, not 64 hex digits "
		    "(a SHA-256)",
		    strlen(s));
	for (size_t i = 0; i < TOKENS_HASH_LEN; i++) {
		int hi = hex_val(s[2 * i]), lo = hex_val(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return fail(p,
			    "the hash has a character that is not "
			    "a hex digit");
		t->hash[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* ---- quotas ----------------------------------------------------------- */

static const char *const quota_names[TOKENS_Q_END_] = {
	[TOKENS_Q_TUBES] = "tubes",
	[TOKENS_Q_TASKS] = "tasks",
	[TOKENS_Q_BYTES] = "bytes",
	[TOKENS_Q_PARKED] = "parked",
};

const char *
tokens_quota_name(int kind)
{
	return kind >= 0 && kind < TOKENS_Q_END_ ? quota_names[kind] : "?";
}

/* NAME=VALUE into q[] (set[] says which were given). */
static int
parse_quota(struct parse *p, const char *w, uint64_t *q, bool *set)
{
	const char *eq = strchr(w, '=');
	unsigned long long v;
	uint64_t mul = 1;
	char *end;
	int k;

	for (k = 0; k < TOKENS_Q_END_; k++)
		if (eq != NULL && (size_t)(eq - w) == strlen(quota_names[k]) &&
		    memcmp(w, quota_names[k], (size_t)(eq - w)) == 0)
			break;
	if (k == TOKENS_Q_END_)
		return fail(p,
		    "\"%s\": a quota is tubes=, tasks=, bytes= or parked=", w);
	if (set[k])
		return fail(p, "quota %s given twice", quota_names[k]);
	set[k] = true;
	if (strcmp(eq + 1, "none") == 0) {
		q[k] = TOKENS_UNLIMITED;
		return 0;
	}
	errno = 0;
	v = eq[1] >= '0' && eq[1] <= '9' ? strtoull(eq + 1, &end, 10) : 0;
	if (k == TOKENS_Q_BYTES && (eq[1] >= '0' && eq[1] <= '9')) {
		mul = *end == 'k' ? 1u << 10
		    : *end == 'm' ? 1u << 20
		    : *end == 'g' ? 1u << 30
		                  : 1;
		end += mul != 1;
	}
	if (eq[1] < '0' || eq[1] > '9' || *end != '\0' || errno != 0 ||
	    v > (TOKENS_UNLIMITED - 1) / mul)
		return fail(p, "quota %s=%s: a whole number%s, or none",
		    quota_names[k], eq + 1,
		    k == TOKENS_Q_BYTES ? " (k, m, g: KiB, MiB, GiB)" : "");
	q[k] = (uint64_t)v * mul;
	return 0;
}

/* The quota fields f[0..n) into q[]; set[] says which were given. */
static int
parse_quotas(struct parse *p, char **f, int n, uint64_t *q, bool *set)
{
	for (int k = 0; k < TOKENS_Q_END_; k++)
		set[k] = false;
	for (int i = 0; i < n; i++)
		if (parse_quota(p, f[i], q, set) != 0)
			return -1;
	return 0;
}

enum { LINE_FIELDS_MAX = 4 + TOKENS_Q_END_ };

/* Splits a line into at most LINE_FIELDS_MAX words; the count, or more
 * than the maximum when there are more. */
static int
split(char *line, char **f)
{
	char *save = NULL;
	int n = 0;

	for (char *w = strtok_r(line, " \t\r", &save); w != NULL;
	     w = strtok_r(NULL, " \t\r", &save))
		if (n < LINE_FIELDS_MAX)
			f[n++] = w;
		else
			n++;
	return n;
}

/* Whether the line's words are a `default` line. */
static bool
default_line(char **f, int n)
{
	if (n < 1 || strcmp(f[0], "default") != 0)
		return false;
	for (int i = 1; i < n && i < LINE_FIELDS_MAX; i++)
		if (strchr(f[i], '=') == NULL)
			return false;
	return true;
}

/* One token line's words, NUL-terminated, into `t`; set[] says which
 * quotas it gave. */
static int
parse_line(struct parse *p, char **f, int n, struct tokens_entry *t, bool *set)
{
	if (n < 4 || n > LINE_FIELDS_MAX)
		return fail(p,
		    "%d fields; a line is NAME ROLE TUBES SHA256HEX and up to "
		    "%d quotas (tubes= tasks= bytes= parked=)",
		    n, TOKENS_Q_END_);
	if (parse_name(p, f[0], t) != 0)
		return -1;
	if ((t->role = (uint8_t)tokens_role_parse(f[1])) == 0)
		return fail(p,
		    "unknown role \"%s\" (producer, worker, admin, "
		    "replica or monitor)",
		    f[1]);
	if (parse_tubes(p, f[2], t) != 0 || parse_hash(p, f[3], t) != 0)
		return -1;
	return parse_quotas(p, f + 4, n - 4, t->quota, set);
}

/* A name or a hash twice would make a lookup ambiguous. */
static int
check_unique(
    struct parse *p, const struct tokens *a, const struct tokens_entry *t)
{
	for (size_t i = 0; i < a->n; i++) {
		if (strcmp(a->v[i].name, t->name) == 0)
			return fail(
			    p, "token name \"%s\" already used", t->name);
		if (tokens_hash_eq(a->v[i].hash, t->hash))
			return fail(p, "the hash of \"%s\" is also \"%s\"'s",
			    t->name, a->v[i].name);
	}
	return 0;
}

/* The quotas of a file: the `default` line's, and per token which it
 * gave itself (filled in at the end, when the default is known). */
struct quota_parse {
	bool have_default;
	uint64_t def[TOKENS_Q_END_];
	bool def_set[TOKENS_Q_END_];
	bool (*own)[TOKENS_Q_END_]; /* per token */
};

static int
add_line(struct parse *p, struct tokens *a, struct quota_parse *qp, char *line)
{
	char *f[LINE_FIELDS_MAX];
	int n = split(line, f);
	bool set[TOKENS_Q_END_], (*own)[TOKENS_Q_END_];
	struct tokens_entry t, *v;

	if (default_line(f, n)) {
		if (qp->have_default)
			return fail(p, "a second default line");
		if (n > 1 + TOKENS_Q_END_)
			return fail(
			    p, "default: up to %d quotas", TOKENS_Q_END_);
		qp->have_default = true;
		return parse_quotas(p, f + 1, n - 1, qp->def, qp->def_set);
	}
	memset(&t, 0, sizeof(t));
	if (parse_line(p, f, n, &t, set) != 0 || check_unique(p, a, &t) != 0)
		return -1;
	if ((v = realloc(a->v, (a->n + 1) * sizeof(*v))) == NULL)
		return fail(p, "out of memory");
	a->v = v;
	if ((own = realloc(qp->own, (a->n + 1) * sizeof(*own))) == NULL)
		return fail(p, "out of memory");
	qp->own = own;
	memcpy(qp->own[a->n], set, sizeof(set));
	a->v[a->n++] = t;
	return 0;
}

/* Each token's quotas in force: its own; else, for a token not for `*`,
 * the default line's, else the built-in default (TOKENS_DEFAULT_TUBES
 * tubes, nothing else bounded); a token for `*` has no other. */
static void
settle_quotas(struct tokens *a, const struct quota_parse *qp)
{
	for (size_t i = 0; i < a->n; i++) {
		struct tokens_entry *t = &a->v[i];
		bool all = tokens_all_tubes(t);

		for (int k = 0; k < TOKENS_Q_END_; k++) {
			if (qp->own[i][k])
				continue;
			if (all)
				t->quota[k] = TOKENS_UNLIMITED;
			else if (qp->def_set[k])
				t->quota[k] = qp->def[k];
			else
				t->quota[k] = k == TOKENS_Q_TUBES
				    ? TOKENS_DEFAULT_TUBES
				    : TOKENS_UNLIMITED;
		}
	}
}

static bool
blank_or_comment(const char *s)
{
	s += strspn(s, " \t\r");
	return *s == '\0' || *s == '#';
}

int
tokens_parse(const char *path, const char *text, size_t len, struct tokens *out,
    char err[TOKENS_ERR_MAX])
{
	struct parse p = { .path = path, .line = 0, .err = err };
	struct quota_parse qp;
	size_t at = 0;

	memset(&qp, 0, sizeof(qp));
	out->v = NULL;
	out->n = 0;
	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl != NULL ? (size_t)(nl - text) - at : len - at;
		char line[512];
		int rc = 0;

		p.line++;
		if (n >= sizeof(line))
			rc = fail(
			    &p, "line longer than %zu bytes", sizeof(line) - 1);
		else if (memchr(text + at, '\0', n) != NULL)
			rc = fail(&p, "a NUL byte");
		if (rc == 0) {
			memcpy(line, text + at, n);
			line[n] = '\0';
			if (!blank_or_comment(line))
				rc = add_line(&p, out, &qp, line);
		}
		if (rc != 0) {
			free(qp.own);
			tokens_free(out);
			return -1;
		}
		at += n + 1;
	}
	settle_quotas(out, &qp);
	free(qp.own);
	return 0;
}

int
tokens_load(const char *path, struct tokens *out, char err[TOKENS_ERR_MAX])
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t n = 0;
	int rc = -1;

	out->v = NULL;
	out->n = 0;
	if (f == NULL)
		snprintf(err, TOKENS_ERR_MAX, "%s: %s", path, strerror(errno));
	else if ((text = malloc(TOKENS_FILE_MAX + 1)) == NULL)
		snprintf(err, TOKENS_ERR_MAX, "%s: out of memory", path);
	else if ((n = fread(text, 1, TOKENS_FILE_MAX + 1, f)), ferror(f))
		snprintf(err, TOKENS_ERR_MAX, "%s: read failed", path);
	else if (n > TOKENS_FILE_MAX)
		snprintf(err, TOKENS_ERR_MAX, "%s: larger than %u bytes", path,
		    TOKENS_FILE_MAX);
	else
		rc = tokens_parse(path, text, n, out, err);
	free(text);
	if (f != NULL)
		fclose(f);
	return rc;
}

void
tokens_free(struct tokens *a)
{
	free(a->v);
	a->v = NULL;
	a->n = 0;
}
