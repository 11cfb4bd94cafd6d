/* TLS on sluiced's ports, against real servers: certificates are made by
 * the openssl command, once for all the tests of the file (four RSA keys
 * take seconds), in a directory of their own (a CA, a certificate for
 * 127.0.0.1 it signed, an expired one, a client certificate, and a second
 * CA that signed nothing of the server's). A TLS client does its work; a
 * TLS client sends every operation of the protocol and gets its answer;
 * a plain client at a TLS port, a TLS client at a plain port, a client
 * with the wrong CA, one without a CA and an expired certificate are each
 * refused with their own message; --tls-client-auth wants a client
 * certificate; a follower replicates over tls+tcp:// and refuses a leader
 * its CA does not verify; --http serves HTTPS. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "it.h"
#include "it_ops.h"

/* The certificates, by name. */
struct certs {
	char ca[600], ca2[600], cert[600], key[600], old[600], ccert[600],
	    ccert2[600], ckey[600];
};

/* Made by the group's set-up; no test changes them. */
static struct certs group_certs;
static void *certs_dir;

/* Runs a shell command in `dir`; asserts it succeeded. */
static void
sh(const char *dir, const char *cmd)
{
	char line[4096];

	snprintf(line, sizeof(line), "cd '%s' && { %s; } >openssl.log 2>&1",
	    dir, cmd);
	if (system(line) != 0) {
		fprintf(stderr, "failed: %s (see %s/openssl.log)\n", cmd, dir);
		fail();
	}
}

/* A CA, a server certificate for 127.0.0.1 (as an IP and as a name: the
 * TLS engine matches the host against DNS names), the same expired (its
 * end a day before its start), a client certificate, and another CA. */
static void
certs_make(void **dir_state, struct certs *c)
{
	const char *dir = t_path(*dir_state, "");
	static const char *const cmds[] = {
		"openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key "
		"-out ca.crt -days 2 -subj /CN=sluice-test-ca",
		"openssl req -x509 -newkey rsa:2048 -nodes -keyout ca2.key "
		"-out ca2.crt -days 2 -subj /CN=another-ca",
		"openssl req -newkey rsa:2048 -nodes -keyout srv.key -out "
		"srv.csr "
		"-subj /CN=127.0.0.1",
		"printf 'subjectAltName=IP:127.0.0.1,DNS:127.0.0.1\\n' >san",
		"openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key "
		"-CAcreateserial -out srv.crt -days 2 -extfile san",
		"openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key "
		"-CAcreateserial -out old.crt -days -1 -extfile san",
		"openssl req -newkey rsa:2048 -nodes -keyout cli.key -out "
		"cli.csr "
		"-subj /CN=a-client",
		"openssl x509 -req -in cli.csr -CA ca.crt -CAkey ca.key "
		"-CAcreateserial -out cli.crt -days 2",
		"openssl x509 -req -in cli.csr -CA ca2.crt -CAkey ca2.key "
		"-CAcreateserial -out cli2.crt -days 2",
	};

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		sh(dir, cmds[i]);
	snprintf(c->ca, sizeof(c->ca), "%s/ca.crt", dir);
	snprintf(c->ca2, sizeof(c->ca2), "%s/ca2.crt", dir);
	snprintf(c->cert, sizeof(c->cert), "%s/srv.crt", dir);
	snprintf(c->key, sizeof(c->key), "%s/srv.key", dir);
	snprintf(c->old, sizeof(c->old), "%s/old.crt", dir);
	snprintf(c->ccert, sizeof(c->ccert), "%s/cli.crt", dir);
	snprintf(c->ckey, sizeof(c->ckey), "%s/cli.key", dir);
	snprintf(c->ccert2, sizeof(c->ccert2), "%s/cli2.crt", dir);
}

/* The group's certificates, for a test (`state`: its directory, where
 * its servers live). */
static void
make_certs(void **state, struct certs *c)
{
	(void)state;
	*c = group_certs;
}

static int
group_setup(void **state)
{
	(void)state;
	if (t_tmpdir_setup(&certs_dir) != 0)
		return -1;
	certs_make(&certs_dir, &group_certs);
	return 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	return t_tmpdir_teardown(&certs_dir);
}

/* A server whose client port is tls+tcp:// with `cert`. */
static struct t_srv *
tls_srv(void **state, const char *name, const struct certs *c, const char *cert)
{
	struct t_srv *s = it_srv(*state, name);

	snprintf(s->url, sizeof(s->url), "tls+tcp://127.0.0.1:%d", s->port);
	s->args[0] = "--tls-cert";
	s->args[1] = cert;
	s->args[2] = "--tls-key";
	s->args[3] = c->key;
	return s;
}

/* A handle for `url` verifying with `ca` (and showing a client
 * certificate when `ccert`). */
static struct sluice_client *
tls_client(const char *url, const char *ca, const struct certs *c, bool ccert)
{
	struct sluice_client *h = it_client_url(url);

	assert_non_null(h);
	it_rc(h,
	    sluice_set_tls(
	        h, ca, ccert ? c->ccert : NULL, ccert ? c->ckey : NULL),
	    0);
	sluice_set_connect_timeout(h, 1000);
	return h;
}

/* A call that must fail to connect, with `want` in the message. */
static void
refused(struct sluice_client *h, const char *want)
{
	struct sluice_stats *st = NULL;

	it_rc(h, sluice_stats(h, NULL, &st), SLUICE_ECONN);
	if (strstr(sluice_errmsg(h), want) == NULL) {
		fprintf(stderr, "message \"%s\" lacks \"%s\"\n",
		    sluice_errmsg(h), want);
		fail();
	}
	sluice_close(h);
}

static void
test_tls_client_does_its_work(void **state)
{
	struct certs c;
	struct t_srv *s;
	struct sluice_client *h, *other;
	struct sluice_stats *st = NULL;
	struct it_counts counts;
	struct sluice_task *t;
	uint64_t id;

	make_certs(state, &c);
	s = tls_srv(state, "a", &c, c.cert);
	it_start(s);
	h = tls_client(s->url, c.ca, &c, false);
	id = it_put(h, "tls", "over TLS");
	t = it_take(h, "tls", 0, 0);
	assert_true(t->id == id);
	assert_memory_equal(t->payload, "over TLS", 8);
	it_rc(h, sluice_ack(h, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	it_rc(h, sluice_stats(h, "tls", &st), 0);
	sluice_stats_free(st);
	counts = it_counts(h, "tls");
	assert_true(counts.ready == 0 && counts.taken == 0);

	/* the session is the TLS connection: a task taken without detach
	 * is ready again once its handle is closed */
	other = tls_client(s->url, c.ca, &c, false);
	id = it_put(h, "tls", "again");
	t = it_take(h, "tls", 0, 0);
	sluice_task_free(t);
	assert_int_equal(it_state(other, id), SLUICE_TAKEN);
	sluice_close(h);
	assert_true(it_wait_state(other, id, SLUICE_READY, 5000) >= 0);
	sluice_close(other);
}

/* Every operation a client may send, over one TLS connection, each with
 * its answer and its effect checked (it_ops.h); the node operations a lone
 * leader cannot do are refused with their own errors. */
static void
test_every_operation_over_tls(void **state)
{
	struct certs c;
	struct t_srv *s;
	struct sluice_client *h;

	make_certs(state, &c);
	s = tls_srv(state, "a", &c, c.cert);
	it_start(s);
	h = tls_client(s->url, c.ca, &c, false);
	for (size_t i = 0; i < it_nops; i++)
		it_op_ok(&it_ops[i], h, h, "tls", (int)i);
	sluice_close(h);
}

/* Each wrong pairing, told apart. */
static void
test_mismatches_are_named(void **state)
{
	struct certs c;
	struct t_srv *s, *plain;
	struct sluice_client *h;
	char url[96];

	make_certs(state, &c);
	s = tls_srv(state, "a", &c, c.cert);
	it_start(s);
	plain = it_srv(*state, "plain");
	it_start(plain);

	/* a plain client at the TLS port */
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", s->port);
	h = it_client_url(url);
	refused(h, "speaks TLS, not the sluice protocol: use a tls+tcp:// URL");

	/* a TLS client at a plain port */
	snprintf(url, sizeof(url), "tls+tcp://127.0.0.1:%d", plain->port);
	h = tls_client(url, c.ca, &c, false);
	refused(h, "speaks the sluice protocol without TLS: use tcp://");

	/* the wrong CA */
	h = tls_client(s->url, c.ca2, &c, false);
	refused(h, "the server's certificate is not signed by the CA given");

	/* no CA at all */
	h = it_client_url(s->url);
	refused(h, "a TLS URL needs the CA");

	/* a CA file that is no certificate: refused at once */
	h = it_client_url(s->url);
	it_rc(h, sluice_set_tls(h, c.key, NULL, NULL), SLUICE_EINVAL);
	assert_non_null(strstr(sluice_errmsg(h), "no PEM certificate"));
	sluice_close(h);
}

/* An expired certificate stops the start, with its date and what to
 * do, before the data directory is made: every client would refuse it. */
static void
test_expired_certificate_is_refused(void **state)
{
	struct certs c;
	struct t_srv *s;

	make_certs(state, &c);
	s = tls_srv(state, "a", &c, c.old);
	assert_int_equal(t_srv_start(s), -1);
	assert_int_equal(it_log_count(s, "the certificate expired at"), 1);
	assert_int_equal(it_log_count(s, "renew it"), 1);
	assert_int_equal(access(s->data, F_OK), -1);
}

/* --tls-client-auth: a certificate signed by --tls-ca, or nothing. */
static void
test_client_auth_wants_a_certificate(void **state)
{
	struct certs c;
	struct t_srv *s;
	struct sluice_client *h;

	make_certs(state, &c);
	s = tls_srv(state, "a", &c, c.cert);
	s->args[4] = "--tls-ca";
	s->args[5] = c.ca;
	s->args[6] = "--tls-client-auth";
	it_start(s);
	refused(tls_client(s->url, c.ca, &c, false),
	    "the server requires a client certificate");
	/* a certificate the server's CA did not sign: the server refused
	 * it, and the message says so (not the server's certificate) */
	h = it_client_url(s->url);
	it_rc(h, sluice_set_tls(h, c.ca, c.ccert2, c.ckey), 0);
	sluice_set_connect_timeout(h, 1000);
	refused(h, "the server refused this client's certificate");
	h = tls_client(s->url, c.ca, &c, true);
	it_put(h, "tls", "with a certificate");
	sluice_close(h);
}

/* Bad files stop the start before the data directory is made. */
static void
test_bad_files_stop_the_start(void **state)
{
	struct certs c;
	struct t_srv *s;
	int status;

	make_certs(state, &c);
	s = tls_srv(state, "a", &c, c.key); /* a key for the certificate */
	status = t_srv_start(s);
	assert_int_equal(status, -1);
	assert_int_equal(it_log_count(s, "--tls-cert"), 1);
	assert_int_equal(it_log_count(s, "no PEM certificate"), 1);
	assert_int_equal(access(s->data, F_OK), -1);
}

/* A follower dials its leader's tls+tcp:// replication port, verifying
 * the leader with --tls-ca; one with another CA gets nothing. */
static void
test_follower_replicates_over_tls(void **state)
{
	struct certs c;
	struct t_srv *l, *f, *g;
	struct sluice_client *lc, *fc, *gc;
	char repl[80];
	uint64_t id;

	make_certs(state, &c);
	l = it_srv(*state, "leader");
	snprintf(repl, sizeof(repl), "tls+tcp://127.0.0.1:%d", t_free_port());
	l->args[0] = "--repl-listen";
	l->args[1] = repl;
	l->args[2] = "--tls-cert";
	l->args[3] = c.cert;
	l->args[4] = "--tls-key";
	l->args[5] = c.key;
	it_start(l);
	f = it_srv(*state, "follower");
	f->args[0] = "--follow";
	f->args[1] = repl;
	f->args[2] = "--tls-ca";
	f->args[3] = c.ca;
	it_start(f);
	g = it_srv(*state, "stranger");
	g->args[0] = "--follow";
	g->args[1] = repl;
	g->args[2] = "--tls-ca";
	g->args[3] = c.ca2;
	it_start(g);

	lc = it_client(l);
	fc = it_client(f);
	gc = it_client(g);
	id = it_put(lc, "repl", "shipped over TLS");
	assert_true(it_wait_state(fc, id, SLUICE_READY, 10000) >= 0);
	/* the stranger warns that it cannot reach its leader, and never
	 * holds the task */
	for (int i = 0; i < 100 && it_log_count(g, "over TLS") < 1; i++)
		it_sleep_ms(100);
	assert_true(it_log_count(g, "over TLS") >= 1);
	assert_int_equal(it_state(gc, id), 0);
	assert_int_equal(it_log_count(l, "follower joined"), 1);
	sluice_close(lc);
	sluice_close(fc);
	sluice_close(gc);
}

/* --http with a certificate serves HTTPS, verified by curl --cacert. */
static void
test_https_metrics(void **state)
{
	struct certs c;
	struct t_srv *s;
	char haddr[64], cmd[1200], out[600], rest[4096];
	FILE *p;
	size_t n;

	make_certs(state, &c);
	s = tls_srv(state, "a", &c, c.cert);
	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", t_free_port());
	s->args[4] = "--http";
	s->args[5] = haddr;
	it_start(s);
	snprintf(cmd, sizeof(cmd),
	    "curl -sS --max-time 5 --cacert '%s' https://%s/metrics", c.ca,
	    haddr);
	assert_non_null(p = popen(cmd, "r"));
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	while (fread(rest, 1, sizeof(rest), p) > 0) {
		/* read it all: curl fails when its output is cut */
	}
	assert_int_equal(pclose(p), 0);
	assert_non_null(strstr(out, "sluice_"));
	/* the other CA does not verify it */
	snprintf(cmd, sizeof(cmd),
	    "curl -sS --max-time 5 --cacert '%s' https://%s/health "
	    ">/dev/null 2>&1",
	    c.ca2, haddr);
	assert_int_not_equal(system(cmd), 0);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_tls_client_does_its_work),
		T(test_every_operation_over_tls),
		T(test_mismatches_are_named),
		T(test_expired_certificate_is_refused),
		T(test_client_auth_wants_a_certificate),
		T(test_bad_files_stop_the_start),
		T(test_follower_replicates_over_tls),
		T(test_https_metrics),
	};
#undef T
	return cmocka_run_group_tests_name(
	    "tls", tests, group_setup, group_teardown);
}
