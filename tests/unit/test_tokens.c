/* The token file of --auth (src/util/tokens.c): every parse error with
 * its line, SHA-256 against vectors from `printf ... | sha256sum`, the
 * lookup, the roles' names, tube patterns, and the limit on
 * failed attempts per address. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"

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
	for (int i = 0; i < TOKENS_HASH_LEN; i++)
		sprintf(out + 2 * i, "%02x", h[i]);
}

static void
test_auth_sha256_vectors(void **state)
{
	uint8_t h[TOKENS_HASH_LEN];
	char s[65];

	(void)state;
	tokens_sha256("x", 1, h);
	hex(h, s);
	assert_string_equal(s, H_X);
	tokens_sha256("", 0, h);
	hex(h, s);
	assert_string_equal(s, H_EMPTY);
	tokens_sha256("abc", 3, h);
	hex(h, s);
	assert_string_equal(s, H_ABC);
}

static int
parse(const char *text, struct tokens *a, char *err)
{
	return tokens_parse("tokens", text, strlen(text), a, err);
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
	char err[TOKENS_ERR_MAX] = "";
	struct tokens a;
	const struct tokens_entry *t;

	(void)state;
	assert_int_equal(parse(text, &a, err), 0);
	assert_int_equal(a.n, 3);
	assert_string_equal(a.v[0].name, "mailer");
	assert_int_equal(a.v[0].role, TOKENS_PRODUCER);
	assert_string_equal(a.v[0].tubes, "emails*");
	assert_int_equal(a.v[0].prefix_len, 6);
	assert_int_equal(a.v[1].role, TOKENS_ADMIN);
	assert_true(tokens_all_tubes(&a.v[1]));
	assert_false(tokens_all_tubes(&a.v[0]));
	assert_int_equal(a.v[2].prefix_len, SIZE_MAX);

	t = tokens_find(&a, "secret-producer", 15);
	assert_non_null(t);
	assert_string_equal(t->name, "mailer");
	t = tokens_find(&a, "x", 1);
	assert_non_null(t);
	assert_string_equal(t->name, "ops");
	assert_null(tokens_find(&a, "secret-produce", 14));
	assert_null(tokens_find(&a, "", 0));
	tokens_free(&a);

	assert_int_equal(parse("", &a, err), 0);
	assert_int_equal(a.n, 0);
	tokens_free(&a);
}

/* Quotas: a token's own, else the default line's, else the built-in
 * default (TOKENS_DEFAULT_TUBES tubes, nothing else) for a token not for
 * `*`; a token for `*` has only its own. */
static void
test_auth_quotas_own_default_and_built_in(void **state)
{
	const char *text = "a producer A* " H_PROD " tasks=5 bytes=2k\n"
	                   "default tubes=7 parked=3 bytes=none\n"
	                   "b worker B* " H_ABC " tubes=none\n"
	                   "ops admin * " H_X " parked=9\n";
	char err[TOKENS_ERR_MAX] = "";
	struct tokens a;

	(void)state;
	assert_int_equal(parse(text, &a, err), 0);
	assert_int_equal(a.n, 3);
	assert_true(a.v[0].quota[TOKENS_Q_TUBES] == 7);
	assert_true(a.v[0].quota[TOKENS_Q_TASKS] == 5);
	assert_true(a.v[0].quota[TOKENS_Q_BYTES] == 2048);
	assert_true(a.v[0].quota[TOKENS_Q_PARKED] == 3);
	assert_true(a.v[1].quota[TOKENS_Q_TUBES] == TOKENS_UNLIMITED);
	assert_true(a.v[1].quota[TOKENS_Q_TASKS] == TOKENS_UNLIMITED);
	assert_true(a.v[1].quota[TOKENS_Q_BYTES] == TOKENS_UNLIMITED);
	assert_true(a.v[1].quota[TOKENS_Q_PARKED] == 3);
	assert_true(a.v[2].quota[TOKENS_Q_TUBES] == TOKENS_UNLIMITED);
	assert_true(a.v[2].quota[TOKENS_Q_PARKED] == 9);
	tokens_free(&a);
	/* without a default line: the built-in one; a token named
	 * "default" is a token */
	assert_int_equal(parse("default producer A* " H_PROD " bytes=1m\n"
	                       "ops admin * " H_X "\n",
	                     &a, err),
	    0);
	assert_int_equal(a.n, 2);
	assert_string_equal(a.v[0].name, "default");
	assert_true(a.v[0].quota[TOKENS_Q_TUBES] == TOKENS_DEFAULT_TUBES);
	assert_true(a.v[0].quota[TOKENS_Q_TASKS] == TOKENS_UNLIMITED);
	assert_true(a.v[0].quota[TOKENS_Q_BYTES] == 1 << 20);
	assert_true(a.v[1].quota[TOKENS_Q_TUBES] == TOKENS_UNLIMITED);
	assert_string_equal(tokens_quota_name(TOKENS_Q_PARKED), "parked");
	tokens_free(&a);
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
	char err[TOKENS_ERR_MAX];
	struct tokens a;

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
	char text[2048], name[TOKENS_NAME_MAX + 2], tube[203];
	char err[TOKENS_ERR_MAX];
	struct tokens a;

	(void)state;
	memset(name, 'n', TOKENS_NAME_MAX + 1);
	name[TOKENS_NAME_MAX + 1] = '\0';
	snprintf(text, sizeof(text), "%s admin * %s\n", name, H_X);
	assert_int_equal(parse(text, &a, err), -1);
	assert_string_equal(err, "tokens:1: token name longer than 64 bytes");
	name[TOKENS_NAME_MAX] = '\0'; /* exactly the limit: fine */
	snprintf(text, sizeof(text), "%s admin * %s\n", name, H_X);
	assert_int_equal(parse(text, &a, err), 0);
	tokens_free(&a);

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

	assert_int_equal(tokens_parse("tokens", "# a\n#\0b\n", 8, &a, err), -1);
	assert_string_equal(err, "tokens:2: a NUL byte");
}

static void
test_auth_load_reads_a_file_and_names_a_missing_one(void **state)
{
	const char *path = t_path(*state, "tokens");
	char err[TOKENS_ERR_MAX];
	struct tokens a;
	FILE *f;

	assert_int_equal(tokens_load(path, &a, err), -1);
	assert_non_null(strstr(err, "No such file or directory"));
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "mon monitor * %s\n", H_EMPTY);
	fclose(f);
	assert_int_equal(tokens_load(path, &a, err), 0);
	assert_int_equal(a.n, 1);
	assert_non_null(tokens_find(&a, "", 0));
	assert_string_equal(
	    tokens_role_name(tokens_find(&a, "", 0)->role), "monitor");
	tokens_free(&a);
}

/* The roles' names, both ways (which ops each may send: the server's,
 * test_ops_auth.c). */
static void
test_auth_role_names(void **state)
{
	(void)state;
	assert_string_equal(tokens_role_name(TOKENS_WORKER), "worker");
	assert_string_equal(tokens_role_name(0), "?");
	assert_string_equal(tokens_role_name(TOKENS_ROLE_END_), "?");
	assert_int_equal(tokens_role_parse("replica"), TOKENS_REPLICA);
	assert_int_equal(tokens_role_parse(""), 0);
}

static void
test_auth_tube_patterns(void **state)
{
	const char *text = "all admin * " H_X "\n"
	                   "pre producer emails* " H_ABC "\n"
	                   "one worker billing " H_EMPTY "\n";
	char err[TOKENS_ERR_MAX];
	struct tokens a;

	(void)state;
	assert_int_equal(parse(text, &a, err), 0);
	assert_true(tokens_tube_ok(&a.v[0], "anything", 8));
	assert_true(tokens_tube_ok(&a.v[0], "", 0));
	assert_true(tokens_tube_ok(&a.v[1], "emails", 6));
	assert_true(tokens_tube_ok(&a.v[1], "emails.eu", 9));
	assert_false(tokens_tube_ok(&a.v[1], "email", 5));
	assert_false(tokens_tube_ok(&a.v[1], "billing", 7));
	assert_false(tokens_tube_ok(&a.v[1], "xemails", 7));
	assert_true(tokens_tube_ok(&a.v[2], "billing", 7));
	assert_false(tokens_tube_ok(&a.v[2], "billing2", 8));
	assert_false(tokens_tube_ok(&a.v[2], "billin", 6));
	/* compared by length: a prefix of the name is not the name */
	assert_false(tokens_tube_ok(&a.v[2], "billing", 6));
	tokens_free(&a);
}

static void
test_auth_hash_eq(void **state)
{
	uint8_t a[TOKENS_HASH_LEN], b[TOKENS_HASH_LEN];

	(void)state;
	tokens_sha256("x", 1, a);
	memcpy(b, a, sizeof(b));
	assert_true(tokens_hash_eq(a, b));
	for (int i = 0; i < TOKENS_HASH_LEN; i++) {
		b[i] ^= 0x80;
		assert_false(tokens_hash_eq(a, b));
		b[i] ^= 0x80;
	}
}

/* An address's first TOKENS_FREE_FAILS failures get the free pause; the
 * next wait in one line, each after a pause doubling up to the cap; the
 * port does not matter; another address is apart; a quiet address starts
 * again; the log is at most a line a second, with the count not logged. */
static void
test_auth_limit_per_address(void **state)
{
	struct tokens_limit l = { 0 };
	struct tokens_verdict v;
	int64_t t = 1000000, prev = 0;

	(void)state;
	for (int i = 1; i <= TOKENS_FREE_FAILS; i++) {
		tokens_limit_fail(&l, "10.0.0.1:5000", t, (uint32_t)i * 97, &v);
		assert_false(v.delayed);
		assert_true(v.due >= t + TOKENS_PAUSE_MIN_MS &&
		    v.due < t + TOKENS_PAUSE_MIN_MS + TOKENS_PAUSE_SPAN_MS);
		assert_int_equal(v.log, i == 1);
		if (v.due > prev)
			prev = v.due;
	}
	/* another port of the same host: past the allowance */
	for (int i = 1; i <= 6; i++) {
		int64_t pause = TOKENS_PAUSE_MIN_MS << (i < 4 ? i : 4);

		if (pause > TOKENS_PAUSE_MAX_MS)
			pause = TOKENS_PAUSE_MAX_MS;
		tokens_limit_fail(&l, "10.0.0.1:6000", t, 0, &v);
		assert_true(v.delayed);
		assert_int_equal(v.due, prev + pause);
		prev = v.due;
	}
	assert_int_equal(l.failures, TOKENS_FREE_FAILS + 6);
	assert_int_equal(l.delayed, 6);
	/* a second later: logged, with the 25 that were not */
	tokens_limit_fail(&l, "10.0.0.1:6001", t + TOKENS_LOG_EVERY_MS, 0, &v);
	assert_true(v.log && v.delayed);
	assert_int_equal(v.unlogged, TOKENS_FREE_FAILS + 5);
	assert_int_equal(v.fails, TOKENS_FREE_FAILS + 7);
	prev = v.due;
	/* another address, and a name without a port, are apart */
	tokens_limit_fail(&l, "10.0.0.2:5000", t, 0, &v);
	assert_true(!v.delayed && v.log && v.fails == 1);
	tokens_limit_fail(&l, "[::1]:5000", t, 0, &v);
	tokens_limit_fail(&l, "[::1]:5001", t, 0, &v);
	assert_int_equal(v.fails, 2);
	tokens_limit_fail(&l, "http", t, 0, &v);
	assert_int_equal(v.fails, 1);
	/* quiet for the window: from nothing again */
	tokens_limit_fail(
	    &l, "10.0.0.1:7000", prev + TOKENS_QUIET_MS + 1, 0, &v);
	assert_false(v.delayed);
	assert_int_equal(v.fails, 1);
	tokens_limit_free(&l);
}

/* The table holds TOKENS_ADDRS addresses: a new one past that takes the
 * place of the one that failed longest ago. */
static void
test_auth_limit_evicts_the_oldest(void **state)
{
	struct tokens_limit l = { 0 };
	struct tokens_verdict v;
	char peer[64];

	(void)state;
	for (int k = 0; k < 3; k++)
		tokens_limit_fail(&l, "10.9.9.9:1", 0, 0, &v);
	for (int i = 0; i < TOKENS_ADDRS + 10; i++) {
		snprintf(peer, sizeof(peer), "10.1.%d.%d:1", i / 256, i % 256);
		tokens_limit_fail(&l, peer, 1 + i, 0, &v);
		assert_int_equal(v.fails, 1);
	}
	assert_int_equal(l.n, TOKENS_ADDRS);
	/* 10.9.9.9 failed first: it was forgotten */
	tokens_limit_fail(&l, "10.9.9.9:1", TOKENS_ADDRS + 20, 0, &v);
	assert_int_equal(v.fails, 1);
	tokens_limit_free(&l);
}

/* Fails of `peer` at `t` until one is dropped (at most `max`): how many
 * were queued, their tickets in `tk`. */
static int
fill(struct tokens_limit *l, const char *peer, int64_t t, int max,
    struct tokens_ticket *tk)
{
	struct tokens_verdict v;

	for (int i = 0; i < max; i++) {
		tokens_limit_fail(l, peer, t, 0, &v);
		if (v.drop)
			return i;
		tk[i] = v.ticket;
	}
	return max;
}

/* At most TOKENS_WAIT_ADDR_MAX answers of an address wait, and
 * TOKENS_WAIT_MAX in all: a failure past either is dropped (counted, not
 * queued: it does not push the line further), and logged with the count
 * of those dropped; an answer given back makes room again, and the line
 * is no longer than the answers left in it. */
static void
test_auth_limit_bounds_the_waiting_answers(void **state)
{
	static struct tokens_ticket tk[TOKENS_WAIT_MAX];
	struct tokens_limit l = { 0 };
	struct tokens_verdict v;
	int64_t t = 1000000, due;
	char peer[64];
	int n, total;

	(void)state;
	n = fill(&l, "10.0.0.1:1", t, TOKENS_WAIT_MAX, tk);
	assert_int_equal(n, TOKENS_WAIT_ADDR_MAX);
	assert_int_equal(l.waiting, TOKENS_WAIT_ADDR_MAX);
	assert_int_equal(l.dropped, 1);
	due = l.v[0].due;
	for (int i = 0; i < 5; i++) { /* another port: the same address */
		tokens_limit_fail(&l, "10.0.0.1:2", t, 0, &v);
		assert_true(v.drop && !v.delayed && !v.log);
	}
	assert_int_equal(l.v[0].due, due);
	assert_int_equal(l.dropped, 6);
	assert_int_equal(l.failures, TOKENS_WAIT_ADDR_MAX + 6);
	assert_int_equal(l.delayed, TOKENS_WAIT_ADDR_MAX - TOKENS_FREE_FAILS);
	/* a second later, still full: logged, with the dropped counted */
	tokens_limit_fail(&l, "10.0.0.1:3", t + TOKENS_LOG_EVERY_MS, 0, &v);
	assert_true(v.drop && v.log);
	assert_int_equal(v.dropped, 7);
	assert_int_equal(v.unlogged, TOKENS_WAIT_ADDR_MAX + 5);
	/* one answer out: room for one more */
	tokens_limit_done(&l, tk[0]);
	tokens_limit_fail(&l, "10.0.0.1:4", t + TOKENS_LOG_EVERY_MS, 0, &v);
	assert_false(v.drop);
	assert_true(v.delayed);
	tk[0] = v.ticket;
	tokens_limit_fail(&l, "10.0.0.1:4", t + TOKENS_LOG_EVERY_MS, 0, &v);
	assert_true(v.drop);
	/* every answer out: the address's line is empty */
	for (int i = 0; i < n; i++)
		tokens_limit_done(&l, tk[i]);
	assert_int_equal(l.v[0].waiting, 0);
	assert_int_equal(l.waiting, 0);
	/* the line is as long as the answers in it: none now */
	tokens_limit_fail(&l, "10.0.0.1:5", t + TOKENS_LOG_EVERY_MS, 0, &v);
	assert_true(v.delayed && !v.drop);
	assert_true(v.due <= t + TOKENS_LOG_EVERY_MS + TOKENS_PAUSE_MAX_MS);
	tokens_limit_done(&l, v.ticket);

	/* in all: TOKENS_WAIT_MAX from many addresses, then every one full */
	total = 0;
	for (int a = 0; total < TOKENS_WAIT_MAX; a++) {
		snprintf(peer, sizeof(peer), "10.2.%d.%d:1", a / 250, a % 250);
		total += fill(&l, peer, t, TOKENS_WAIT_MAX - total, tk + total);
		assert_true(a < TOKENS_ADDRS);
	}
	assert_int_equal(l.waiting, TOKENS_WAIT_MAX);
	tokens_limit_fail(&l, "10.3.0.1:1", t, 0, &v);
	assert_true(v.drop);
	assert_int_equal(v.fails, 1);
	tokens_limit_done(&l, tk[0]);
	tokens_limit_done(&l, tk[1]);
	tokens_limit_fail(&l, "10.3.0.1:1", t, 0, &v);
	assert_false(v.drop);
	for (int i = 2; i < TOKENS_WAIT_MAX; i++)
		tokens_limit_done(&l, tk[i]);
	tokens_limit_done(&l, v.ticket);
	assert_int_equal(l.waiting, 0);
	tokens_limit_free(&l);
}

/* A ticket outlives the entry of its address: once the entry holds
 * another address, giving it back counts only in the total. An entry
 * with answers waiting is reused last. */
static void
test_auth_limit_tickets_outlive_their_entry(void **state)
{
	struct tokens_limit l = { 0 };
	struct tokens_verdict v, first;
	char peer[64];

	(void)state;
	tokens_limit_fail(&l, "10.9.9.9:1", 0, 0, &first);
	for (int i = 0; i < TOKENS_ADDRS; i++) {
		snprintf(peer, sizeof(peer), "10.1.%d.%d:1", i / 256, i % 256);
		tokens_limit_fail(&l, peer, 1 + i, 0, &v);
		if (i > 0)
			tokens_limit_done(&l, v.ticket);
	}
	/* 10.1.0.0 took no entry's place; 10.1.0.1, done, made room */
	assert_int_equal(l.n, TOKENS_ADDRS);
	tokens_limit_fail(&l, "10.9.9.9:1", TOKENS_ADDRS + 10, 0, &v);
	assert_int_equal(v.fails, 2);
	/* every entry with an answer waiting: the oldest goes */
	for (int i = 0; i < TOKENS_ADDRS; i++) {
		snprintf(peer, sizeof(peer), "10.4.%d.%d:1", i / 256, i % 256);
		tokens_limit_fail(&l, peer, TOKENS_ADDRS + 20 + i, 0, &v);
		assert_int_equal(v.fails, 1);
	}
	assert_int_equal(l.waiting, 3 + TOKENS_ADDRS);
	tokens_limit_done(&l, first.ticket); /* its entry is another's now */
	assert_int_equal(l.waiting, 2 + TOKENS_ADDRS);
	for (size_t i = 0; i < l.n; i++)
		assert_int_equal(l.v[i].waiting, 1);
	tokens_limit_free(&l);
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
		cmocka_unit_test(test_auth_role_names),
		cmocka_unit_test(test_auth_tube_patterns),
		cmocka_unit_test(test_auth_hash_eq),
		cmocka_unit_test(test_auth_limit_per_address),
		cmocka_unit_test(test_auth_limit_evicts_the_oldest),
		cmocka_unit_test(test_auth_limit_bounds_the_waiting_answers),
		cmocka_unit_test(test_auth_limit_tickets_outlive_their_entry),
	};
	return cmocka_run_group_tests_name("tokens", tests, NULL, NULL);
}
