/* The sluice tool when it cannot reach a server says why, at once:
 *  - a host that does not resolve is named as such (it once said "still
 *    resolving" the moment resolution had failed);
 *  - an http:// URL is the HTTP API's address: the message says which
 *    URLs the tool speaks and names the tcp:// form (it once said "Not
 *    supported");
 *  - a refused connection (no sluiced there) fails within a fraction of a
 *    second, not after the whole connect timeout, with a hint: is sluiced
 *    running there? (`make run`); for tcp:// and ipc:// alike. The
 *    library's own default is unchanged: a handle waits for a server that
 *    is restarting and finds it once it listens.
 * Against real servers on loopback. */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_http.h"

enum { OUT_MAX = 64 << 10 };

static char out[OUT_MAX], err[OUT_MAX];

/* `sluice -s URL ARGS...`; its exit code, and in `*ms` how long it took. */
static int
cli_at(const char *url, int64_t *ms, ...)
{
	int64_t t0 = it_mono_ms();
	va_list ap;
	int rc;

	va_start(ap, ms);
	rc = it_cli_v(url, NULL, out, sizeof(out), err, sizeof(err), ap);
	va_end(ap);
	*ms = it_mono_ms() - t0;
	return rc;
}

static void
has(const char *needle)
{
	if (strstr(err, needle) == NULL)
		fail_msg("stderr \"%s\" lacks \"%s\"", err, needle);
}

/* A name that does not resolve: said so, and named. */
static void
test_an_unknown_host_is_named(void **state)
{
	int64_t ms;

	(void)state;
	assert_int_equal(cli_at("tcp://nosuchhost.invalid:7711", &ms,
	                     "--timeout", "10s", "stats", NULL),
	    1);
	if (strstr(err, "still resolving") != NULL) {
		/* only a resolver that is really still at it by the
		 * deadline may say so (a machine without DNS may be) */
		assert_true(ms >= 9000);
		return;
	}
	has("tcp://nosuchhost.invalid:7711: the host nosuchhost.invalid "
	    "could not be resolved (");
}

/* An http:// URL, even the real server's HTTP port: the tool names the
 * URLs it speaks and the tcp:// form. */
static void
test_an_http_url_is_explained(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	char haddr[64], hurl[96];
	int64_t ms;

	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", it_free_port());
	snprintf(hurl, sizeof(hurl), "http://%s", haddr);
	s->args[0] = "--http";
	s->args[1] = haddr;
	it_start(s);
	assert_int_equal(cli_at(hurl, &ms, "stats", NULL), 1);
	has("is the HTTP API's address (sluiced --http)");
	has("the sluice tool speak the sluice protocol, at sluiced's --listen "
	    "address: tcp://127.0.0.1:PORT (tcp://127.0.0.1:7711 by default;");
	assert_null(strstr(err, "Not supported"));
	snprintf(hurl, sizeof(hurl), "https://%s/v1/stats", haddr);
	assert_int_equal(cli_at(hurl, &ms, "stats", NULL), 1);
	has("address: tls+tcp://127.0.0.1:PORT (");
	/* and the server's --listen URL answers */
	assert_int_equal(cli_at(s->url, &ms, "stats", NULL), 0);
}

/* Nothing listens: a fraction of a second, not the connect timeout
 * (--timeout 10s here), and the hint names the URL. */
static void
test_a_refused_connection_fails_fast_with_a_hint(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	char url[80], want[160];
	int64_t ms;

	/* a server that was there and stopped */
	it_start(s);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	assert_int_equal(
	    cli_at(s->url, &ms, "--timeout", "10s", "stats", NULL), 1);
	snprintf(want, sizeof(want),
	    "%s: connection refused: no server listens there", s->url);
	has(want);
	snprintf(
	    want, sizeof(want), "sluice: is sluiced running at %s? ", s->url);
	has(want);
	has("`make run`");
	if (ms > 5000)
		fail_msg("a refused connection took %" PRId64 " ms", ms);

	/* a take and a put alike; the hint comes once */
	assert_int_equal(cli_at(s->url, &ms, "--timeout", "10s", "put", "-t",
	                     "x", "y", NULL),
	    1);
	assert_true(ms < 5000);
	assert_int_equal(cli_at(s->url, &ms, "--timeout", "10s", "take", "-t",
	                     "x", "-w", "1s", NULL),
	    1);
	assert_true(ms < 5000);
	{
		const char *h = strstr(err, "is sluiced running");

		assert_non_null(h);
		assert_null(strstr(h + 1, "is sluiced running"));
	}

	/* ipc:// goes through nng, whose dialer retries for ever */
	snprintf(url, sizeof(url), "ipc://%s", t_path(*state, "nothing.sock"));
	assert_int_equal(
	    cli_at(url, &ms, "--timeout", "10s", "stats", NULL), 1);
	snprintf(want, sizeof(want),
	    "%s: connection refused: no server listens there", url);
	has(want);
	if (ms > 5000)
		fail_msg("a refused ipc:// took %" PRId64 " ms", ms);

	/* tls+tcp:// too (any CA: nothing gets as far as a handshake) */
	{
		char cmd[2048], ca[600];

		snprintf(ca, sizeof(ca), "%s", t_path(*state, "ca.crt"));
		snprintf(cmd, sizeof(cmd),
		    "openssl req -x509 -newkey rsa:2048 -nodes -keyout "
		    "'%s.key' -out '%s' -days 1 -subj /CN=t >/dev/null 2>&1",
		    ca, ca);
		assert_int_equal(system(cmd), 0);
		snprintf(
		    url, sizeof(url), "tls+tcp://127.0.0.1:%d", t_free_port());
		assert_int_equal(cli_at(url, &ms, "--tls-ca", ca, "--timeout",
		                     "10s", "stats", NULL),
		    1);
		snprintf(want, sizeof(want),
		    "%s: connection refused: no server listens there", url);
		has(want);
		if (ms > 5000)
			fail_msg(
			    "a refused tls+tcp:// took %" PRId64 " ms", ms);
	}
}

struct later {
	struct t_srv *s;
	int rc;
};

static void *
start_later(void *arg)
{
	struct later *l = arg;

	it_sleep_ms(500);
	l->rc = t_srv_start(l->s);
	return NULL;
}

/* A libsluice handle keeps its default: a refused connection is tried
 * again for the whole connect timeout, so a restarting server is found. */
static void
test_the_library_still_waits_for_a_restart(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct later l = { s, -1 };
	struct sluice_client *c;
	struct sluice_stats *st = NULL;
	pthread_t th;
	int rc;

	it_start(s);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	assert_int_equal(sluice_open(s->url, &c), 0);
	sluice_set_connect_timeout(c, 20000);
	assert_int_equal(pthread_create(&th, NULL, start_later, &l), 0);
	rc = sluice_stats(c, NULL, &st);
	pthread_join(th, NULL);
	assert_int_equal(l.rc, 0);
	if (rc != 0)
		fail_msg("stats: %s", sluice_errmsg(c));
	sluice_stats_free(st);

	/* and with the tool's bound, a handle fails fast */
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	sluice_close(c);
	assert_int_equal(sluice_open(s->url, &c), 0);
	sluice_set_connect_timeout(c, 10000);
	sluice_set_refused_retry(c, 0);
	{
		int64_t t0 = it_mono_ms();

		assert_int_equal(sluice_stats(c, NULL, &st), SLUICE_ECONN);
		assert_true(it_mono_ms() - t0 < 5000);
		assert_non_null(strstr(sluice_errmsg(c), "connection refused"));
	}
	sluice_close(c);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_an_unknown_host_is_named),
		T(test_an_http_url_is_explained),
		T(test_a_refused_connection_fails_fast_with_a_hint),
		T(test_the_library_still_waits_for_a_restart),
	};
#undef T
	return cmocka_run_group_tests_name("cli errors", tests, NULL, NULL);
}
