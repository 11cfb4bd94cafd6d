/* --auth: a real sluiced with a token file. A session must send auth
 * first; each role may send its operations on its tubes and nothing else
 * (a refusal is SLUICE_EPERM and changes nothing); wrong tokens are
 * refused and logged while others are served; SIGHUP revokes a token on
 * a live connection; the beanstalk face stays on loopback; the
 * replication port serves only followers with a replica token. */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_http.h"
#include "it_node.h"
#include "server/auth.h"

/* token, line without its hash */
static const char *const tokens[][2] = {
	{ "adm-secret", "ops admin *" },
	{ "prod-secret", "mailer producer emails*" },
	{ "work-secret", "mailworker worker emails*" },
	{ "mon-secret", "prom monitor *" },
	{ "rep-secret", "follower replica *" },
};
enum { ADMIN, PRODUCER, WORKER, MONITOR, REPLICA, NROLES };

/* Writes the token file with the tokens whose bit is in `mask`. */
static void
write_tokens(const char *path, unsigned mask)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "# written by test_auth\n\n");
	for (int i = 0; i < NROLES; i++) {
		uint8_t h[AUTH_HASH_LEN];

		if (!(mask & 1u << i))
			continue;
		auth_sha256(tokens[i][0], strlen(tokens[i][0]), h);
		fprintf(f, "%s ", tokens[i][1]);
		for (int k = 0; k < AUTH_HASH_LEN; k++)
			fprintf(f, "%02x", h[k]);
		fprintf(f, "\n");
	}
	assert_int_equal(fclose(f), 0);
}

struct fix {
	struct t_srv *s;
	char file[600];
};

static void
start(void **state, struct fix *f)
{
	f->s = it_srv(*state, "a");
	snprintf(f->file, sizeof(f->file), "%s", t_path(*state, "tokens"));
	write_tokens(f->file, (1u << NROLES) - 1);
	f->s->args[0] = "--auth";
	f->s->args[1] = f->file;
	it_start(f->s);
}

static struct sluice_client *
as(const struct fix *f, int role)
{
	struct sluice_client *c = it_client(f->s);

	if (role >= 0)
		assert_int_equal(sluice_set_token(c, tokens[role][0]), 0);
	return c;
}

static int
put(struct sluice_client *c, const char *tube, uint64_t *id)
{
	struct sluice_put_opts o = { .tube = tube };

	return sluice_put(c, &o, "x", 1, id, NULL);
}

static void
test_no_token_and_wrong_token_are_eauth(void **state)
{
	struct fix f;
	struct sluice_client *none, *wrong, *admin;
	uint64_t id = 0;

	start(state, &f);
	none = as(&f, -1);
	it_rc(none, put(none, "emails", &id), SLUICE_EAUTH);
	assert_non_null(strstr(sluice_errmsg(none), "send auth first"));
	wrong = as(&f, -1);
	assert_int_equal(sluice_set_token(wrong, "adm-secreT"), 0);
	it_rc(wrong, put(wrong, "emails", &id), SLUICE_EAUTH);
	assert_string_equal(
	    sluice_errmsg(wrong), "unauthenticated: not a known token");
	/* others are served meanwhile; nothing was put */
	admin = as(&f, ADMIN);
	assert_int_equal(it_counts(admin, "emails").ready, 0);
	assert_true(it_log_count(f.s,
	                "refused a token that is not in the "
	                "file peer=") >= 1);
	sluice_close(none);
	sluice_close(wrong);
	sluice_close(admin);
}

/* What each role gets for each operation: 1 allowed, 0 EPERM. */
enum {
	OP_PUT,
	OP_PEEK,
	OP_TAKE_ACK,
	OP_STATS,
	OP_KICK,
	OP_PAUSE,
	OP_DELETE,
	OP_FLUSH,
	OP_SNAPSHOT,
	NOPS
};
static const char allowed[NROLES][NOPS] = {
	[ADMIN] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 },
	[PRODUCER] = { 1, 1, 0, 0, 0, 0, 0, 0, 0 },
	[WORKER] = { 1, 0, 1, 0, 0, 0, 0, 0, 0 },
	[MONITOR] = { 0, 0, 0, 1, 0, 0, 0, 0, 0 },
	[REPLICA] = { 0, 0, 0, 0, 0, 0, 0, 0, 0 },
};

/* Runs `op` on tube "emails" (a task `id` there) as `c`; returns its
 * result. */
static int
run_op(struct sluice_client *c, int op, uint64_t id)
{
	struct sluice_task *t = NULL;
	struct sluice_stats *st = NULL;
	const char *tubes[] = { "emails" };
	struct sluice_take_opts to = { .tubes = tubes, .ntubes = 1 };
	uint64_t n, v;
	size_t got = 0;
	int rc;

	switch (op) {
	case OP_PUT:
		return put(c, "emails", &v);
	case OP_PEEK:
		rc = sluice_peek(c, id, &t);
		sluice_task_free(t);
		return rc;
	case OP_TAKE_ACK:
		if ((rc = sluice_take(c, &to, &t, &got)) == 0 && got == 1)
			rc = sluice_ack(c, t->id, t->lease, NULL, NULL);
		sluice_task_free(t);
		return rc;
	case OP_STATS:
		rc = sluice_stats(c, "emails", &st);
		sluice_stats_free(st);
		return rc;
	case OP_KICK:
		return sluice_kick(c, "emails", 1, &n);
	case OP_PAUSE:
		return sluice_pause(c, "emails", 0, &n);
	case OP_DELETE:
		return sluice_delete(c, id);
	case OP_FLUSH:
		return sluice_flush(c, "emails", &n);
	default:
		return sluice_snapshot(c, &n);
	}
}

static void
test_every_op_by_every_role(void **state)
{
	struct fix f;
	struct sluice_client *admin;

	start(state, &f);
	admin = as(&f, ADMIN);
	for (int role = 0; role < NROLES; role++) {
		struct sluice_client *c = as(&f, role);

		for (int op = 0; op < NOPS; op++) {
			uint64_t id = it_put(admin, "emails", "p");
			struct it_counts before = it_counts(admin, "emails");
			struct it_counts after;
			int rc = run_op(c, op, id);

			if (allowed[role][op]) {
				if (rc != 0)
					fail_msg("role %d op %d: %s", role, op,
					    sluice_errmsg(c));
			} else {
				if (rc != SLUICE_EPERM)
					fail_msg("role %d op %d: rc %d %s",
					    role, op, rc, sluice_errmsg(c));
				assert_string_equal(
				    sluice_errmsg(c), "not allowed");
				after = it_counts(admin, "emails");
				assert_memory_equal(
				    &before, &after, sizeof(before));
				assert_int_equal(
				    it_state(admin, id), SLUICE_READY);
			}
			/* the next op starts from an empty tube */
			assert_int_equal(
			    sluice_flush(admin, "emails", NULL), 0);
		}
		sluice_close(c);
	}
	assert_true(
	    it_log_count(f.s, "not allowed token=prom role=monitor") >= 1);
	sluice_close(admin);
}

static void
test_tube_patterns_hold(void **state)
{
	struct fix f;
	struct sluice_client *prod, *work, *admin;
	const char *billing[] = { "billing" };
	struct sluice_take_opts to = { .tubes = billing, .ntubes = 1 };
	struct sluice_task *t = NULL;
	size_t n = 0;
	uint64_t id, bid;

	start(state, &f);
	prod = as(&f, PRODUCER);
	work = as(&f, WORKER);
	admin = as(&f, ADMIN);
	it_rc(prod, put(prod, "emails.eu", &id), 0);
	it_rc(prod, put(prod, "billing", &id), SLUICE_EPERM);
	it_rc(prod, put(prod, "email", &id), SLUICE_EPERM);
	assert_int_equal(it_counts(admin, "billing").ready, 0);
	/* a task of another tube, named by id: refused */
	bid = it_put(admin, "billing", "b");
	it_rc(prod, sluice_peek(prod, bid, &t), SLUICE_EPERM);
	it_rc(work, sluice_take(work, &to, &t, &n), SLUICE_EPERM);
	/* a worker's ack may not move a task out of its tubes */
	t = it_take(work, "emails.eu", 0, 0);
	it_rc(work, sluice_ack(work, t->id, t->lease, "billing", NULL),
	    SLUICE_EPERM);
	it_rc(work, sluice_ack(work, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	assert_int_equal(it_counts(admin, "billing").ready, 1);
	sluice_close(prod);
	sluice_close(work);
	sluice_close(admin);
}

static void
test_sighup_revokes_a_token_on_a_live_connection(void **state)
{
	struct fix f;
	struct sluice_client *prod, *admin;
	int64_t end;
	uint64_t id;
	int rc = 0;

	start(state, &f);
	prod = as(&f, PRODUCER);
	admin = as(&f, ADMIN);
	it_rc(prod, put(prod, "emails", &id), 0);
	write_tokens(f.file, 1u << ADMIN); /* the producer is gone */
	assert_int_equal(kill(f.s->pid, SIGHUP), 0);
	end = it_mono_ms() + 10000;
	while (it_mono_ms() < end && (rc = put(prod, "emails", &id)) == 0)
		it_sleep_ms(20);
	it_rc(prod, rc, SLUICE_EAUTH);
	/* the admin's session goes on; a bad file keeps the tokens */
	assert_true(it_counts(admin, "emails").ready >= 1);
	FILE *bad = fopen(f.file, "w");
	assert_non_null(bad);
	fputs("ops admin *\n", bad);
	fclose(bad);
	assert_int_equal(kill(f.s->pid, SIGHUP), 0);
	end = it_mono_ms() + 10000;
	while (it_mono_ms() < end &&
	    it_log_count(f.s, "cannot read the token file again") < 1)
		it_sleep_ms(20);
	assert_int_equal(
	    it_log_count(f.s, "cannot read the token file again"), 1);
	assert_true(it_counts(admin, "emails").ready >= 1);
	sluice_close(prod);
	sluice_close(admin);
}

/* Many wrong tokens at once: GUESSERS connections, each GUESSES calls
 * with a wrong token. libsluice sends its token as a connection's first
 * request, and once more when a call is refused EAUTH: the first call of
 * a connection sends it twice, each later one once (after the request
 * itself is refused "send auth first"). So 200 x (49 + 1) = 10,000
 * refused tokens, each answered after 100-500 ms (15 s or so in all). */
enum { GUESSERS = 200, GUESSES = 49, GUESS_MS = 120000 };

static atomic_int guessers_done;

struct guesser {
	const struct fix *f;
	int64_t deadline;
	int i, calls, eauth;
	pthread_t th;
};

static void *
guess(void *arg)
{
	struct guesser *g = arg;
	struct sluice_client *c = it_client(g->f->s);
	char token[32];
	uint64_t id;

	snprintf(token, sizeof(token), "guess-%d", g->i);
	if (sluice_set_token(c, token) == 0)
		for (; g->calls < GUESSES && it_mono_ms() < g->deadline;
		     g->calls++)
			g->eauth += put(c, "emails", &id) == SLUICE_EAUTH;
	sluice_close(c);
	atomic_fetch_add(&guessers_done, 1);
	return NULL;
}

/* 10,000 wrong tokens from 200 connections: every one refused EAUTH and
 * logged, while a good client's puts go on being served. */
static void
test_ten_thousand_wrong_tokens(void **state)
{
	static struct guesser g[GUESSERS];
	struct sluice_client *adm;
	struct fix f;
	int64_t deadline;
	int good = 0, calls = 0, eauth = 0;
	uint64_t id;

	start(state, &f);
	adm = as(&f, ADMIN);
	deadline = it_mono_ms() + GUESS_MS;
	atomic_store(&guessers_done, 0);
	for (int i = 0; i < GUESSERS; i++) {
		g[i] =
		    (struct guesser) { .f = &f, .deadline = deadline, .i = i };
		assert_int_equal(
		    pthread_create(&g[i].th, NULL, guess, &g[i]), 0);
	}
	/* the good client, while they guess: every put served */
	while (good < 100000 && it_mono_ms() < deadline &&
	    atomic_load(&guessers_done) < GUESSERS) {
		it_rc(adm, put(adm, "emails", &id), 0);
		good++;
	}
	for (int i = 0; i < GUESSERS; i++) {
		assert_int_equal(pthread_join(g[i].th, NULL), 0);
		calls += g[i].calls;
		eauth += g[i].eauth;
	}
	print_message("wrong tokens: %d calls, %d refused tokens; good puts "
	              "meanwhile: %d\n",
	    calls, GUESSERS * (GUESSES + 1), good);
	assert_int_equal(calls, GUESSERS * GUESSES);
	assert_int_equal(eauth, calls);
	/* served during the guessing (which lasts 5 s at the least), not
	 * only after it */
	assert_true(good >= 10);
	/* nothing of theirs was put; each refusal is in the log */
	assert_int_equal(it_counts(adm, "emails").ready, good);
	assert_int_equal(
	    it_log_count(f.s, "refused a token that is not in the file"),
	    GUESSERS * (GUESSES + 1));
	sluice_close(adm);
}

/* sluice_peek's result for `id` (the task freed). */
static int
peek_rc(struct sluice_client *c, uint64_t id)
{
	struct sluice_task *t = NULL;
	int rc = sluice_peek(c, id, &t);

	if (rc == 0)
		sluice_task_free(t);
	return rc;
}

/* One HTTP request with `token`'s bearer (role < 0: none), asserted to
 * answer `want`; its body (to free). */
static char *
http_as(int port, const char *method, const char *path, int role, int want)
{
	char hdr[400], *body = NULL;
	int st;

	hdr[0] = '\0';
	if (role >= 0)
		snprintf(hdr, sizeof(hdr),
		    "Authorization: Bearer %s\r\nX-Sluice-Admin: 1\r\n",
		    tokens[role][0]);
	else
		snprintf(hdr, sizeof(hdr), "X-Sluice-Admin: 1\r\n");
	st = it_http(
	    port, method, path, hdr, method[0] == 'P' ? "" : NULL, &body);
	if (st != want)
		fail_msg("%s %s as %d: status %d, wanted %d: %s", method, path,
		    role, st, want, body != NULL ? body : "(none)");
	return body;
}

/* The HTTP face asks for a bearer token: /health stays open, /metrics
 * and /stats need monitor or admin (401 without a known token, 403 for
 * another role), the admin page and its actions the admin; a refusal says
 * no more than that, and the log says who. */
static void
test_http_bearer_tokens(void **state)
{
	struct fix f;
	struct sluice_client *adm;
	char addr[64], path[96];
	int port = it_free_port();
	uint64_t id;
	char *body;

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	f.s = it_srv(*state, "a");
	snprintf(f.file, sizeof(f.file), "%s", t_path(*state, "tokens"));
	write_tokens(f.file, (1u << NROLES) - 1);
	f.s->args[0] = "--auth";
	f.s->args[1] = f.file;
	f.s->args[2] = "--http";
	f.s->args[3] = addr;
	f.s->args[4] = "--http-admin";
	it_start(f.s);
	adm = as(&f, ADMIN);
	assert_int_equal(put(adm, "emails", &id), 0);

	free(http_as(port, "GET", "/health", -1, 200));
	body = http_as(port, "GET", "/metrics", -1, 401);
	assert_string_equal(body, "unauthenticated\n");
	assert_non_null(strcasestr(it_http_head(), "WWW-Authenticate: Bearer"));
	free(body);
	free(http_as(port, "GET", "/stats", -1, 401));
	body = http_as(port, "GET", "/metrics", WORKER, 403);
	assert_string_equal(body, "not allowed\n");
	free(body);
	body = http_as(port, "GET", "/metrics", MONITOR, 200);
	assert_non_null(strstr(body, "sluice_"));
	free(body);
	free(http_as(port, "GET", "/stats", ADMIN, 200));
	/* the dashboard's history: a monitor's too */
	free(http_as(port, "GET", "/v1/history?secs=10", -1, 401));
	free(http_as(port, "GET", "/v1/history?secs=10", WORKER, 403));
	body = http_as(port, "GET", "/v1/history?secs=10", MONITOR, 200);
	assert_non_null(strstr(body, "\"step_ms\":1000"));
	free(body);

	/* a wrong token: 401 after the pause, logged */
	snprintf(path, sizeof(path), "%s", "/metrics");
	{
		char *b = NULL;
		int st = it_http(port, "GET", path,
		    "Authorization: Bearer not-a-token\r\n", NULL, &b);

		assert_int_equal(st, 401);
		assert_string_equal(b, "unauthenticated\n");
		free(b);
	}

	/* the dashboard and its actions: the admin's */
	free(http_as(port, "GET", "/", MONITOR, 403));
	body = http_as(port, "GET", "/", ADMIN, 200);
	assert_non_null(strstr(body, "<html"));
	free(body);
	snprintf(
	    path, sizeof(path), "/api/delete?id=%llu", (unsigned long long)id);
	free(http_as(port, "POST", path, -1, 401));
	free(http_as(port, "POST", path, MONITOR, 403));
	assert_int_equal(peek_rc(adm, id), 0); /* still there */
	body = http_as(port, "POST", path, ADMIN, 200);
	assert_non_null(strstr(body, "\"deleted\":1"));
	free(body);
	assert_int_equal(peek_rc(adm, id), SLUICE_ENOTFOUND);

	assert_true(it_log_count(f.s,
	                "refused an HTTP request without a bearer token") >= 3);
	assert_int_equal(
	    it_log_count(f.s, "refused a token that is not in the file"), 1);
	assert_true(it_log_count(f.s, "not allowed token=mailworker") >= 1);
	assert_true(it_log_count(f.s, "not allowed token=prom") >= 2);
	assert_int_equal(it_log_count(f.s, "does not check tokens"), 0);
	sluice_close(adm);
}

/* `sluice token new` makes a token and its line; the CLI sends it from
 * $SLUICE_TOKEN or --token-file. */
static void
test_cli_token_new_env_and_file(void **state)
{
	struct fix f;
	char out[1024], err[1024], token[128], line[512], tfile[600];
	struct sluice_client *admin;
	FILE *tf;
	int64_t end;

	start(state, &f);
	assert_int_equal(
	    it_cli(f.s->url, NULL, out, sizeof(out), err, sizeof(err), "token",
	        "new", "cli", "worker", "emails*", NULL),
	    0);
	assert_int_equal(
	    sscanf(out, "token: %127s\nline: %511[^\n]", token, line), 2);
	assert_int_equal(strlen(token), 64);
	assert_int_equal(it_cli(f.s->url, NULL, NULL, 0, err, sizeof(err),
	                     "token", "new", "x", "boss", "*", NULL),
	    2);
	assert_non_null(strstr(err, "unknown role \"boss\""));

	assert_non_null(tf = fopen(f.file, "a"));
	fprintf(tf, "%s\n", line);
	fclose(tf);
	assert_int_equal(kill(f.s->pid, SIGHUP), 0);
	end = it_mono_ms() + 10000;
	while (it_mono_ms() < end &&
	    it_log_count(f.s, "token file read again") < 1)
		it_sleep_ms(20);

	assert_int_equal(it_cli(f.s->url, NULL, NULL, 0, err, sizeof(err),
	                     "put", "-t", "emails", "a", NULL),
	    1);
	assert_non_null(strstr(err, "send auth first"));
	setenv("SLUICE_TOKEN", token, 1);
	assert_int_equal(it_cli(f.s->url, NULL, NULL, 0, err, sizeof(err),
	                     "put", "-t", "emails", "b", NULL),
	    0);
	assert_int_equal(it_cli(f.s->url, NULL, NULL, 0, err, sizeof(err),
	                     "put", "-t", "billing", "c", NULL),
	    1);
	assert_non_null(strstr(err, "not allowed"));
	unsetenv("SLUICE_TOKEN");
	snprintf(tfile, sizeof(tfile), "%s", t_path(*state, "mytoken"));
	assert_non_null(tf = fopen(tfile, "w"));
	fprintf(tf, "%s\n", token);
	fclose(tf);
	assert_int_equal(
	    it_cli(f.s->url, NULL, NULL, 0, err, sizeof(err), "--token-file",
	        tfile, "put", "-t", "emails", "d", NULL),
	    0);
	admin = as(&f, ADMIN);
	assert_int_equal(it_counts(admin, "emails").ready, 2);
	assert_int_equal(it_counts(admin, "billing").ready, 0);
	sluice_close(admin);
}

/* sluiced refuses to start on a bad token file, and a beanstalk face
 * off loopback beside --auth. */
static void
test_bad_file_and_beanstalk_refused_at_start(void **state)
{
	struct t_srv *s = it_srv(*state, "b");
	char file[600];
	FILE *f;

	snprintf(file, sizeof(file), "%s", t_path(*state, "bad"));
	assert_non_null(f = fopen(file, "w"));
	fputs("# one good line would be NAME ROLE TUBES HASH\nops boss *\n", f);
	fclose(f);
	s->args[0] = "--auth";
	s->args[1] = file;
	assert_int_not_equal(t_srv_start(s), 0);
	assert_int_equal(it_log_count(s, "bad:2: 3 fields"), 1);

	s = it_srv(*state, "c");
	write_tokens(file, 1);
	s->args[0] = "--auth";
	s->args[1] = file;
	s->args[2] = "--beanstalk";
	s->args[3] = "0.0.0.0:1";
	assert_int_not_equal(t_srv_start(s), 0);
	assert_int_equal(it_log_count(s, "listens on loopback only"), 1);
}

/* Waits (bounded) until `s`'s log has `needle`; returns its count. */
static int
log_wait(const struct t_srv *s, const char *needle)
{
	int64_t end = it_mono_ms() + IT_NODE_WAIT_MS;
	int n;

	while ((n = it_log_count(s, needle)) < 1 && it_mono_ms() < end)
		it_sleep_ms(20);
	return n;
}

/* A follower of `l` that shows token `role` (-1: none) from a file
 * (`from_file`) or $SLUICE_REPL_TOKEN. */
static void
follower(void **state, struct it_node *f, const char *name,
    const struct it_node *l, int role, bool from_file)
{
	static char files[4][600];
	static int next;
	char *file = files[next++ % 4];
	FILE *tf;

	it_node_init(state, f, name);
	it_node_follows(f, l);
	if (role >= 0 && from_file) {
		snprintf(file, sizeof(files[0]), "%s.token", f->s->data);
		assert_non_null(tf = fopen(file, "w"));
		fprintf(tf, "%s\n", tokens[role][0]);
		assert_int_equal(fclose(tf), 0);
		it_node_arg(f, "--repl-token-file", file);
	} else if (role >= 0) {
		setenv("SLUICE_REPL_TOKEN", tokens[role][0], 1);
	}
	it_node_start(f);
	unsetenv("SLUICE_REPL_TOKEN");
}

/* With --auth the replication port serves a follower with a replica
 * token (from a file) and refuses one with a worker token (from the
 * environment) or none: it stays empty, says why, and the leader's log names
 * it. A token removed by SIGHUP stops the stream of a live follower. */
static void
test_replication_port_refuses_a_non_replica(void **state)
{
	struct it_node l, rep, work, none;
	char file[600];
	uint64_t lsn;

	snprintf(file, sizeof(file), "%s", t_path(*state, "tokens"));
	write_tokens(file, (1u << NROLES) - 1);
	it_node_init(state, &l, "leader");
	it_node_arg(&l, "--auth", file);
	it_node_start(&l);
	it_rc(l.c, sluice_set_token(l.c, tokens[ADMIN][0]), 0);
	for (int i = 0; i < 20; i++)
		it_put(l.c, "emails", "x");

	follower(state, &rep, "rep", &l, REPLICA, true);
	follower(state, &work, "work", &l, WORKER, false);
	follower(state, &none, "none", &l, -1, false);
	it_node_caught_up(&l, &rep);
	assert_int_equal(it_counts(rep.c, "emails").ready, 20);
	assert_int_equal(
	    log_wait(l.s, "follower authenticated token=follower"), 1);

	/* the refused stay empty and say why, once */
	assert_int_equal(log_wait(work.s,
	                     "the leader refuses this node's replication "
	                     "token"),
	    1);
	assert_int_equal(log_wait(none.s,
	                     "the leader refuses this node's replication "
	                     "token"),
	    1);
	assert_int_equal(it_log_count(work.s, "not allowed"), 1);
	assert_int_equal(it_log_count(none.s, "send a replication token"), 1);
	assert_int_equal(it_node_lsn(&work, NULL), 0);
	assert_int_equal(it_node_lsn(&none, NULL), 0);
	assert_true(log_wait(l.s,
	                "its token may not replicate (role replica or "
	                "admin, tubes *) token=mailworker role=worker "
	                "peer=127.0.0.1:") >= 1);
	assert_true(log_wait(l.s,
	                "refused a follower: it sent no token token=- "
	                "role=- peer=127.0.0.1:") >= 1);

	/* the replica token removed: the live follower's stream stops */
	write_tokens(file, 1u << ADMIN);
	assert_int_equal(kill(l.s->pid, SIGHUP), 0);
	assert_int_equal(log_wait(l.s,
	                     "a follower's token was removed or may no "
	                     "longer replicate token=follower"),
	    1);
	assert_true(log_wait(rep.s,
	                "the leader refuses this node's replication "
	                "token") >= 1);
	lsn = it_node_lsn(&rep, NULL);
	it_put(l.c, "emails", "after");
	it_sleep_ms(300);
	assert_int_equal(it_node_lsn(&rep, NULL), lsn);
	assert_int_equal(it_node_lsn(&work, NULL), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_no_token_and_wrong_token_are_eauth, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_every_op_by_every_role, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_tube_patterns_hold, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_sighup_revokes_a_token_on_a_live_connection, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_cli_token_new_env_and_file, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_ten_thousand_wrong_tokens, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_http_bearer_tokens, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_bad_file_and_beanstalk_refused_at_start, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_replication_port_refuses_a_non_replica, it_setup,
		    it_node_teardown),
	};
	return cmocka_run_group_tests_name("auth", tests, NULL, NULL);
}
