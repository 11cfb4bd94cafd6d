/* The token file of --auth (src/util/tokens.c): every parse error with
 * its line, SHA-256 against vectors from `printf ... | sha256sum`, the
 * lookup, what each role may send, tube patterns, and the limit on
 * failed attempts per address. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"

#include "proto/msg.h"
#include "util/tokens.h"

#define H_X "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
/* H_X without its first digit */
#define H_X_TAIL                                                               \
	"d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
#define H_EMPTY                                                                \
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define H_ABC "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/* printf secret-producer | sha256sum */
#define H_PROD                                                                 \
	"46a9599866548c7ceb5b4de808d5c9af9e38959aeea5fcb4463680d6cc7db499"

static void
hex(const uint8_t *h, char out[65])
{
	for (int i = 0; i < AUTH_HASH_LEN; i++)
		sprintf(out + 2 * i, "%02x", h[i]);
}

static void
test_auth_sha256_vectors(void **state)
{
	uint8_t h[AUTH_HASH_LEN];
	char s[65];

	(void)state;
	auth_sha256("x", 1, h);
	hex(h, s);
	assert_string_equal(s, H_X);
	auth_sha256("", 0, h);
	hex(h, s);
	assert_string_equal(s, H_EMPTY);
	auth_sha256("abc", 3, h);
	hex(h, s);
	assert_string_equal(s, H_ABC);
}

static int
parse(const char *text, struct auth *a, char *err)
{
	return auth_parse("tokens", text, strlen(text), a, err);
}

static void
test_auth_parses_lines_comments_and_blanks(void **state)
{
	const char *text = "# tokens of the test\n"
	                   "\n"
	                   "   \t\n"
	                   "mailer producer emails* " H_PROD "\n"
	                   "  # indented comment\n"
	                   "ops admin * " H_X "\r\n"
	                   "billing-w worker billing " H_ABC;
	char err[AUTH_ERR_MAX] = "";
	struct auth a;
	const struct auth_token *t;

	(void)state;
	assert_int_equal(parse(text, &a, err), 0);
	assert_int_equal(a.n, 3);
	assert_string_equal(a.v[0].name, "mailer");
	assert_int_equal(a.v[0].role, AUTH_PRODUCER);
	assert_string_equal(a.v[0].tubes, "emails*");
	assert_int_equal(a.v[0].prefix_len, 6);
	assert_int_equal(a.v[1].role, AUTH_ADMIN);
	assert_true(auth_all_tubes(&a.v[1]));
	assert_false(auth_all_tubes(&a.v[0]));
	assert_int_equal(a.v[2].prefix_len, SIZE_MAX);

	t = auth_find(&a, "secret-producer", 15);
	assert_non_null(t);
	assert_string_equal(t->name, "mailer");
	t = auth_find(&a, "x", 1);
	assert_non_null(t);
	assert_string_equal(t->name, "ops");
	assert_null(auth_find(&a, "secret-produce", 14));
	assert_null(auth_find(&a, "", 0));
	auth_free(&a);

	assert_int_equal(parse("", &a, err), 0);
	assert_int_equal(a.n, 0);
	auth_free(&a);
}

/* Quotas: a token's own, else the default line's, else the built-in
 * default (AUTH_DEFAULT_TUBES tubes, nothing else) for a token not for
 * `*`; a token for `*` has only its own. */
static void
test_auth_quotas_own_default_and_built_in(void **state)
{
	const char *text = "a producer A* " H_PROD " tasks=5 bytes=2k\n"
	                   "default tubes=7 parked=3 bytes=none\n"
	                   "b worker B* " H_ABC " tubes=none\n"
	                   "ops admin * " H_X " parked=9\n";
	char err[AUTH_ERR_MAX] = "";
	struct auth a;

	(void)state;
	assert_int_equal(parse(text, &a, err), 0);
	assert_int_equal(a.n, 3);
	assert_true(a.v[0].quota[AUTH_Q_TUBES] == 7);
	assert_true(a.v[0].quota[AUTH_Q_TASKS] == 5);
	assert_true(a.v[0].quota[AUTH_Q_BYTES] == 2048);
	assert_true(a.v[0].quota[AUTH_Q_PARKED] == 3);
	assert_true(a.v[1].quota[AUTH_Q_TUBES] == AUTH_UNLIMITED);
	assert_true(a.v[1].quota[AUTH_Q_TASKS] == AUTH_UNLIMITED);
	assert_true(a.v[1].quota[AUTH_Q_BYTES] == AUTH_UNLIMITED);
	assert_true(a.v[1].quota[AUTH_Q_PARKED] == 3);
	assert_true(a.v[2].quota[AUTH_Q_TUBES] == AUTH_UNLIMITED);
	assert_true(a.v[2].quota[AUTH_Q_PARKED] == 9);
	auth_free(&a);
	/* without a default line: the built-in one; a token named
	 * "default" is a token */
	assert_int_equal(parse("default producer A* " H_PROD " bytes=1m\n"
	                       "ops admin * " H_X "\n",
	                     &a, err),
	    0);
	assert_int_equal(a.n, 2);
	assert_string_equal(a.v[0].name, "default");
	assert_true(a.v[0].quota[AUTH_Q_TUBES] == AUTH_DEFAULT_TUBES);
	assert_true(a.v[0].quota[AUTH_Q_TASKS] == AUTH_UNLIMITED);
	assert_true(a.v[0].quota[AUTH_Q_BYTES] == 1 << 20);
	assert_true(a.v[1].quota[AUTH_Q_TUBES] == AUTH_UNLIMITED);
	assert_string_equal(auth_quota_name(AUTH_Q_PARKED), "parked");
	auth_free(&a);
}

/* Each bad line, alone after a good one, names its line and problem. */
static void
test_auth_refuses_every_bad_line(void **state)
{
	static const struct {
		const char *line;
		const char *err;
	} bad[] = {
		{ "a producer x",
		    "tokens:2: 3 fields; a line is NAME ROLE "
		    "TUBES SHA256HEX and up to 4 quotas (tubes= tasks= "
		    "bytes= parked=)" },
		{ "a producer x " H_X " more",
		    "tokens:2: \"more\": a quota is tubes=, tasks=, "
		    "bytes= or parked=" },
		{ "a producer x " H_X " tubes=1 tasks=2 bytes=3 parked=4 x=5",
		    "tokens:2: 9 fields; a line is NAME ROLE "
		    "TUBES SHA256HEX and up to 4 quotas (tubes= tasks= "
		    "bytes= parked=)" },
		{ "a producer x " H_X " tubes=1 tubes=2",
		    "tokens:2: quota tubes given twice" },
		{ "a producer x " H_X " tasks=-1",
		    "tokens:2: quota tasks=-1: a whole number, or none" },
		{ "a producer x " H_X " bytes=5q",
		    "tokens:2: quota bytes=5q: a whole number (k, m, g: KiB, "
		    "MiB, GiB), or none" },
		{ "a producer x " H_X " tasks=99999999999999999999",
		    "tokens:2: quota tasks=99999999999999999999: a whole "
		    "number, or none" },
		{ "default tasks=1\ndefault tubes=2",
		    "tokens:3: a second default line" },
		{ "default tasks=one",
		    "tokens:2: quota tasks=one: a whole number, or none" },
		{ "a b@d * " H_X,
		    "tokens:2: unknown role \"b@d\" (producer, "
		    "worker, admin, replica or monitor)" },
		{ "a Admin * " H_X,
		    "tokens:2: unknown role \"Admin\" (producer, "
		    "worker, admin, replica or monitor)" },
		{ "n@me admin * " H_X,
		    "tokens:2: token name \"n@me\": only "
		    "[A-Za-z0-9_.:-]" },
		{ "a admin e*x " H_X,
		    "tokens:2: tube pattern \"e*x\": a tube "
		    "name, a prefix and `*`, or `*`" },
		{ "a admin ** " H_X,
		    "tokens:2: tube pattern \"**\": a tube "
		    "name, a prefix and `*`, or `*`" },
		{ "a admin * abc",
		    "tokens:2: the hash is 3 characters, not 64 "
		    "hex digits (a SHA-256)" },
		{ "a admin * " H_X "0",
		    "tokens:2: the hash is 65 characters, "
		    "not 64 hex digits (a SHA-256)" },
		{ "a admin * g" H_X_TAIL,
		    "tokens:2: the hash has a character "
		    "that is not a hex digit" },
		{ "first admin * " H_ABC,
		    "tokens:2: token name \"first\" "
		    "already used" },
		{ "second admin * " H_X,
		    "tokens:2: the hash of \"second\" is "
		    "also \"first\"'s" },
	};
	char err[AUTH_ERR_MAX];
	struct auth a;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[1024];

		snprintf(text, sizeof(text), "first worker * %s\n%s\n", H_X,
		    bad[i].line);
		err[0] = '\0';
		assert_int_equal(parse(text, &a, err), -1);
		assert_string_equal(err, bad[i].err);
		assert_null(a.v);
		assert_int_equal(a.n, 0);
	}
}

static void
test_auth_refuses_long_names_lines_and_nul(void **state)
{
	char text[2048], name[AUTH_NAME_MAX + 2], tube[203];
	char err[AUTH_ERR_MAX];
	struct auth a;

	(void)state;
	memset(name, 'n', AUTH_NAME_MAX + 1);
	name[AUTH_NAME_MAX + 1] = '\0';
	snprintf(text, sizeof(text), "%s admin * %s\n", name, H_X);
	assert_int_equal(parse(text, &a, err), -1);
	assert_string_equal(err, "tokens:1: token name longer than 64 bytes");
	name[AUTH_NAME_MAX] = '\0'; /* exactly the limit: fine */
	snprintf(text, sizeof(text), "%s admin * %s\n", name, H_X);
	assert_int_equal(parse(text, &a, err), 0);
	auth_free(&a);

	memset(tube, 't', 201);
	tube[201] = '*';
	tube[202] = '\0';
	snprintf(text, sizeof(text), "a admin %s %s\n", tube, H_X);
	assert_int_equal(parse(text, &a, err), -1);
	assert_string_equal(
	    err, "tokens:1: tube pattern longer than 200 bytes");

	memset(text, ' ', 600);
	text[600] = '\0';
	assert_int_equal(parse(text, &a, err), -1);
	assert_string_equal(err, "tokens:1: line longer than 511 bytes");

	assert_int_equal(auth_parse("tokens", "# a\n#\0b\n", 8, &a, err), -1);
	assert_string_equal(err, "tokens:2: a NUL byte");
}

static void
test_auth_load_reads_a_file_and_names_a_missing_one(void **state)
{
	const char *path = t_path(*state, "tokens");
	char err[AUTH_ERR_MAX];
	struct auth a;
	FILE *f;

	assert_int_equal(auth_load(path, &a, err), -1);
	assert_non_null(strstr(err, "No such file or directory"));
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "mon monitor * %s\n", H_EMPTY);
	fclose(f);
	assert_int_equal(auth_load(path, &a, err), 0);
	assert_int_equal(a.n, 1);
	assert_non_null(auth_find(&a, "", 0));
	assert_string_equal(
	    auth_role_name(auth_find(&a, "", 0)->role), "monitor");
	auth_free(&a);
}

/* The whole table: for each role, the ops it may send. */
static void
test_auth_role_by_op(void **state)
{
	static const uint8_t producer[] = { MSG_OP_PUT, MSG_OP_PUT_BATCH,
		MSG_OP_PEEK, MSG_OP_PEEK_KEY, MSG_OP_PEEK_NEXT, MSG_OP_AUTH };
	static const uint8_t worker[] = { MSG_OP_PUT, MSG_OP_PUT_BATCH,
		MSG_OP_TAKE, MSG_OP_ACK, MSG_OP_ACK_BATCH, MSG_OP_RELEASE,
		MSG_OP_FAIL, MSG_OP_TOUCH, MSG_OP_BURY, MSG_OP_AUTH };
	static const uint8_t monitor[] = { MSG_OP_STATS, MSG_OP_STATS_HOURLY,
		MSG_OP_HISTORY, MSG_OP_CLUSTER, MSG_OP_AUTH };
	static const uint8_t replica[] = { MSG_OP_AUTH };
	static const struct {
		int role;
		const uint8_t *ops;
		size_t n;
	} table[] = {
		{ AUTH_PRODUCER, producer, sizeof(producer) },
		{ AUTH_WORKER, worker, sizeof(worker) },
		{ AUTH_MONITOR, monitor, sizeof(monitor) },
		{ AUTH_REPLICA, replica, sizeof(replica) },
	};

	(void)state;
	for (unsigned op = 1; op < MSG_OP_END_; op++) {
		assert_true(auth_role_allows(AUTH_ADMIN, (uint8_t)op));
		assert_false(
		    auth_role_allows(0, (uint8_t)op) && op != MSG_OP_AUTH);
		for (size_t r = 0; r < sizeof(table) / sizeof(table[0]); r++) {
			bool want =
			    memchr(table[r].ops, (int)op, table[r].n) != NULL;

			if (auth_role_allows(table[r].role, (uint8_t)op) !=
			    want)
				fail_msg("role %s op 0x%02x: %s",
				    auth_role_name(table[r].role), op,
				    want ? "refused" : "allowed");
		}
	}
	assert_string_equal(auth_role_name(AUTH_WORKER), "worker");
	assert_string_equal(auth_role_name(0), "?");
	assert_string_equal(auth_role_name(AUTH_ROLE_END_), "?");
	assert_int_equal(auth_role_parse("replica"), AUTH_REPLICA);
	assert_int_equal(auth_role_parse(""), 0);
}

static void
test_auth_tube_patterns(void **state)
{
	const char *text = "all admin * " H_X "\n"
	                   "pre producer emails* " H_ABC "\n"
	                   "one worker billing " H_EMPTY "\n";
	char err[AUTH_ERR_MAX];
	struct auth a;

	(void)state;
	assert_int_equal(parse(text, &a, err), 0);
	assert_true(auth_tube_ok(&a.v[0], "anything", 8));
	assert_true(auth_tube_ok(&a.v[0], "", 0));
	assert_true(auth_tube_ok(&a.v[1], "emails", 6));
	assert_true(auth_tube_ok(&a.v[1], "emails.eu", 9));
	assert_false(auth_tube_ok(&a.v[1], "email", 5));
	assert_false(auth_tube_ok(&a.v[1], "billing", 7));
	assert_false(auth_tube_ok(&a.v[1], "xemails", 7));
	assert_true(auth_tube_ok(&a.v[2], "billing", 7));
	assert_false(auth_tube_ok(&a.v[2], "billing2", 8));
	assert_false(auth_tube_ok(&a.v[2], "billin", 6));
	/* compared by length: a prefix of the name is not the name */
	assert_false(auth_tube_ok(&a.v[2], "billing", 6));
	auth_free(&a);
}

static void
test_auth_hash_eq(void **state)
{
	uint8_t a[AUTH_HASH_LEN], b[AUTH_HASH_LEN];

	(void)state;
	auth_sha256("x", 1, a);
	memcpy(b, a, sizeof(b));
	assert_true(auth_hash_eq(a, b));
	for (int i = 0; i < AUTH_HASH_LEN; i++) {
		b[i] ^= 0x80;
		assert_false(auth_hash_eq(a, b));
		b[i] ^= 0x80;
	}
}

/* An address's first AUTH_FREE_FAILS failures get the free pause; the
 * next wait in one line, each after a pause doubling up to the cap; the
 * port does not matter; another address is apart; a quiet address starts
 * again; the log is at most a line a second, with the count not logged. */
static void
test_auth_limit_per_address(void **state)
{
	struct auth_limit l = { 0 };
	struct auth_verdict v;
	int64_t t = 1000000, prev = 0;

	(void)state;
	for (int i = 1; i <= AUTH_FREE_FAILS; i++) {
		auth_limit_fail(&l, "10.0.0.1:5000", t, (uint32_t)i * 97, &v);
		assert_false(v.delayed);
		assert_true(v.due >= t + AUTH_PAUSE_MIN_MS &&
		    v.due < t + AUTH_PAUSE_MIN_MS + AUTH_PAUSE_SPAN_MS);
		assert_int_equal(v.log, i == 1);
		if (v.due > prev)
			prev = v.due;
	}
	/* another port of the same host: past the allowance */
	for (int i = 1; i <= 6; i++) {
		int64_t pause = AUTH_PAUSE_MIN_MS << (i < 4 ? i : 4);

		if (pause > AUTH_PAUSE_MAX_MS)
			pause = AUTH_PAUSE_MAX_MS;
		auth_limit_fail(&l, "10.0.0.1:6000", t, 0, &v);
		assert_true(v.delayed);
		assert_int_equal(v.due, prev + pause);
		prev = v.due;
	}
	assert_int_equal(l.failures, AUTH_FREE_FAILS + 6);
	assert_int_equal(l.delayed, 6);
	/* a second later: logged, with the 25 that were not */
	auth_limit_fail(&l, "10.0.0.1:6001", t + AUTH_LOG_EVERY_MS, 0, &v);
	assert_true(v.log && v.delayed);
	assert_int_equal(v.unlogged, AUTH_FREE_FAILS + 5);
	assert_int_equal(v.fails, AUTH_FREE_FAILS + 7);
	prev = v.due;
	/* another address, and a name without a port, are apart */
	auth_limit_fail(&l, "10.0.0.2:5000", t, 0, &v);
	assert_true(!v.delayed && v.log && v.fails == 1);
	auth_limit_fail(&l, "[::1]:5000", t, 0, &v);
	auth_limit_fail(&l, "[::1]:5001", t, 0, &v);
	assert_int_equal(v.fails, 2);
	auth_limit_fail(&l, "http", t, 0, &v);
	assert_int_equal(v.fails, 1);
	/* quiet for the window: from nothing again */
	auth_limit_fail(&l, "10.0.0.1:7000", prev + AUTH_QUIET_MS + 1, 0, &v);
	assert_false(v.delayed);
	assert_int_equal(v.fails, 1);
	auth_limit_free(&l);
}

/* The table holds AUTH_ADDRS addresses: a new one past that takes the
 * place of the one that failed longest ago. */
static void
test_auth_limit_evicts_the_oldest(void **state)
{
	struct auth_limit l = { 0 };
	struct auth_verdict v;
	char peer[64];

	(void)state;
	for (int k = 0; k < 3; k++)
		auth_limit_fail(&l, "10.9.9.9:1", 0, 0, &v);
	for (int i = 0; i < AUTH_ADDRS + 10; i++) {
		snprintf(peer, sizeof(peer), "10.1.%d.%d:1", i / 256, i % 256);
		auth_limit_fail(&l, peer, 1 + i, 0, &v);
		assert_int_equal(v.fails, 1);
	}
	assert_int_equal(l.n, AUTH_ADDRS);
	/* 10.9.9.9 failed first: it was forgotten */
	auth_limit_fail(&l, "10.9.9.9:1", AUTH_ADDRS + 20, 0, &v);
	assert_int_equal(v.fails, 1);
	auth_limit_free(&l);
}

/* Fails of `peer` at `t` until one is dropped (at most `max`): how many
 * were queued, their tickets in `tk`. */
static int
fill(struct auth_limit *l, const char *peer, int64_t t, int max,
    struct auth_ticket *tk)
{
	struct auth_verdict v;

	for (int i = 0; i < max; i++) {
		auth_limit_fail(l, peer, t, 0, &v);
		if (v.drop)
			return i;
		tk[i] = v.ticket;
	}
	return max;
}

/* At most AUTH_WAIT_ADDR_MAX answers of an address wait, and
 * AUTH_WAIT_MAX in all: a failure past either is dropped (counted, not
 * queued: it does not push the line further), and logged with the count
 * of those dropped; an answer given back makes room again, and the line
 * is no longer than the answers left in it. */
static void
test_auth_limit_bounds_the_waiting_answers(void **state)
{
	static struct auth_ticket tk[AUTH_WAIT_MAX];
	struct auth_limit l = { 0 };
	struct auth_verdict v;
	int64_t t = 1000000, due;
	char peer[64];
	int n, total;

	(void)state;
	n = fill(&l, "10.0.0.1:1", t, AUTH_WAIT_MAX, tk);
	assert_int_equal(n, AUTH_WAIT_ADDR_MAX);
	assert_int_equal(l.waiting, AUTH_WAIT_ADDR_MAX);
	assert_int_equal(l.dropped, 1);
	due = l.v[0].due;
	for (int i = 0; i < 5; i++) { /* another port: the same address */
		auth_limit_fail(&l, "10.0.0.1:2", t, 0, &v);
		assert_true(v.drop && !v.delayed && !v.log);
	}
	assert_int_equal(l.v[0].due, due);
	assert_int_equal(l.dropped, 6);
	assert_int_equal(l.failures, AUTH_WAIT_ADDR_MAX + 6);
	assert_int_equal(l.delayed, AUTH_WAIT_ADDR_MAX - AUTH_FREE_FAILS);
	/* a second later, still full: logged, with the dropped counted */
	auth_limit_fail(&l, "10.0.0.1:3", t + AUTH_LOG_EVERY_MS, 0, &v);
	assert_true(v.drop && v.log);
	assert_int_equal(v.dropped, 7);
	assert_int_equal(v.unlogged, AUTH_WAIT_ADDR_MAX + 5);
	/* one answer out: room for one more */
	auth_limit_done(&l, tk[0]);
	auth_limit_fail(&l, "10.0.0.1:4", t + AUTH_LOG_EVERY_MS, 0, &v);
	assert_false(v.drop);
	assert_true(v.delayed);
	tk[0] = v.ticket;
	auth_limit_fail(&l, "10.0.0.1:4", t + AUTH_LOG_EVERY_MS, 0, &v);
	assert_true(v.drop);
	/* every answer out: the address's line is empty */
	for (int i = 0; i < n; i++)
		auth_limit_done(&l, tk[i]);
	assert_int_equal(l.v[0].waiting, 0);
	assert_int_equal(l.waiting, 0);
	/* the line is as long as the answers in it: none now */
	auth_limit_fail(&l, "10.0.0.1:5", t + AUTH_LOG_EVERY_MS, 0, &v);
	assert_true(v.delayed && !v.drop);
	assert_true(v.due <= t + AUTH_LOG_EVERY_MS + AUTH_PAUSE_MAX_MS);
	auth_limit_done(&l, v.ticket);

	/* in all: AUTH_WAIT_MAX from many addresses, then every one full */
	total = 0;
	for (int a = 0; total < AUTH_WAIT_MAX; a++) {
		snprintf(peer, sizeof(peer), "10.2.%d.%d:1", a / 250, a % 250);
		total += fill(&l, peer, t, AUTH_WAIT_MAX - total, tk + total);
		assert_true(a < AUTH_ADDRS);
	}
	assert_int_equal(l.waiting, AUTH_WAIT_MAX);
	auth_limit_fail(&l, "10.3.0.1:1", t, 0, &v);
	assert_true(v.drop);
	assert_int_equal(v.fails, 1);
	auth_limit_done(&l, tk[0]);
	auth_limit_done(&l, tk[1]);
	auth_limit_fail(&l, "10.3.0.1:1", t, 0, &v);
	assert_false(v.drop);
	for (int i = 2; i < AUTH_WAIT_MAX; i++)
		auth_limit_done(&l, tk[i]);
	auth_limit_done(&l, v.ticket);
	assert_int_equal(l.waiting, 0);
	auth_limit_free(&l);
}

/* A ticket outlives the entry of its address: once the entry holds
 * another address, giving it back counts only in the total. An entry
 * with answers waiting is reused last. */
static void
test_auth_limit_tickets_outlive_their_entry(void **state)
{
	struct auth_limit l = { 0 };
	struct auth_verdict v, first;
	char peer[64];

	(void)state;
	auth_limit_fail(&l, "10.9.9.9:1", 0, 0, &first);
	for (int i = 0; i < AUTH_ADDRS; i++) {
		snprintf(peer, sizeof(peer), "10.1.%d.%d:1", i / 256, i % 256);
		auth_limit_fail(&l, peer, 1 + i, 0, &v);
		if (i > 0)
			auth_limit_done(&l, v.ticket);
	}
	/* 10.1.0.0 took no entry's place; 10.1.0.1, done, made room */
	assert_int_equal(l.n, AUTH_ADDRS);
	auth_limit_fail(&l, "10.9.9.9:1", AUTH_ADDRS + 10, 0, &v);
	assert_int_equal(v.fails, 2);
	/* every entry with an answer waiting: the oldest goes */
	for (int i = 0; i < AUTH_ADDRS; i++) {
		snprintf(peer, sizeof(peer), "10.4.%d.%d:1", i / 256, i % 256);
		auth_limit_fail(&l, peer, AUTH_ADDRS + 20 + i, 0, &v);
		assert_int_equal(v.fails, 1);
	}
	assert_int_equal(l.waiting, 3 + AUTH_ADDRS);
	auth_limit_done(&l, first.ticket); /* its entry is another's now */
	assert_int_equal(l.waiting, 2 + AUTH_ADDRS);
	for (size_t i = 0; i < l.n; i++)
		assert_int_equal(l.v[i].waiting, 1);
	auth_limit_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth_sha256_vectors),
		cmocka_unit_test(test_auth_parses_lines_comments_and_blanks),
		cmocka_unit_test(test_auth_refuses_every_bad_line),
		cmocka_unit_test(test_auth_quotas_own_default_and_built_in),
		cmocka_unit_test(test_auth_refuses_long_names_lines_and_nul),
		cmocka_unit_test_setup_teardown(
		    test_auth_load_reads_a_file_and_names_a_missing_one,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test(test_auth_role_by_op),
		cmocka_unit_test(test_auth_tube_patterns),
		cmocka_unit_test(test_auth_hash_eq),
		cmocka_unit_test(test_auth_limit_per_address),
		cmocka_unit_test(test_auth_limit_evicts_the_oldest),
		cmocka_unit_test(test_auth_limit_bounds_the_waiting_answers),
		cmocka_unit_test(test_auth_limit_tickets_outlive_their_entry),
	};
	return cmocka_run_group_tests_name("tokens", tests, NULL, NULL);
}
