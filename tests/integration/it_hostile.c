/* it_hostile - the hardening tests' shared helpers (see it_hostile.h).
 *
 * The token file is written with tokens_sha256, the server's own hash, so
 * a test never carries a precomputed digest; the certificates are made
 * by the openssl command line, its output kept in openssl.log, once per
 * test process (two RSA keys take a second or more) in a directory of
 * their own that is removed at exit. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "it.h"
#include "it_hostile.h"
#include "it_node.h"
#include "it_probe.h"
#include "util/tokens.h"

void
it_hostile_hash(FILE *f, const char *secret)
{
	uint8_t h[TOKENS_HASH_LEN];

	tokens_sha256(secret, strlen(secret), h);
	for (int k = 0; k < TOKENS_HASH_LEN; k++)
		fprintf(f, "%02x", h[k]);
}

const char *
it_hostile_tokens(void **state, const char *token)
{
	static char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s", t_path(*state, "tokens"));
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "ops admin * ");
	it_hostile_hash(f, token);
	fprintf(f, "\n");
	assert_int_equal(fclose(f), 0);
	return path;
}

/* Runs a shell command in `dir`; asserts it succeeded. */
static void
it_hostile_sh(const char *dir, const char *cmd)
{
	char line[4096];

	snprintf(line, sizeof(line), "cd '%s' && { %s; } >openssl.log 2>&1",
	    dir, cmd);
	assert_int_equal(system(line), 0);
}

static void *certs_dir;
static pid_t certs_pid; /* the process that made them (not a fork) */

static void
certs_remove(void)
{
	if (getpid() == certs_pid)
		t_tmpdir_teardown(&certs_dir);
}

/* The directory of the certificates, made at the first call. */
static const char *
certs_made(void)
{
	if (certs_dir == NULL) {
		assert_int_equal(t_tmpdir_setup(&certs_dir), 0);
		certs_pid = getpid();
		atexit(certs_remove);
		it_hostile_sh(((struct t_dir *)certs_dir)->path,
		    "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key "
		    "-out ca.crt -days 2 -subj /CN=hostile-ca && "
		    "openssl req -newkey rsa:2048 -nodes -keyout srv.key "
		    "-out srv.csr -subj /CN=127.0.0.1 && "
		    "printf 'subjectAltName=IP:127.0.0.1,DNS:127.0.0.1\\n' "
		    ">san && "
		    "openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key "
		    "-CAcreateserial -out srv.crt -days 2 -extfile san");
	}
	return ((struct t_dir *)certs_dir)->path;
}

const char *
it_hostile_tls_setup(struct t_srv *s)
{
	static char ca[600], crt[600], key[600];
	const char *dir = certs_made();

	snprintf(ca, sizeof(ca), "%s/ca.crt", dir);
	snprintf(crt, sizeof(crt), "%s/srv.crt", dir);
	snprintf(key, sizeof(key), "%s/srv.key", dir);
	snprintf(s->url, sizeof(s->url), "tls+tcp://127.0.0.1:%d", s->port);
	s->args[0] = "--tls-cert";
	s->args[1] = crt;
	s->args[2] = "--tls-key";
	s->args[3] = key;
	return ca;
}

uint64_t
it_hostile_wait_kv(
    struct sluice_client *c, const char *name, uint64_t want, int ms)
{
	int64_t end = it_mono_ms() + ms;
	uint64_t v;

	while ((v = it_node_kv(c, name)) < want && it_mono_ms() < end)
		it_sleep_ms(100);
	return v;
}

bool
it_hostile_closed_within(int fd, int ms)
{
	char b[65536];
	int64_t end = it_mono_ms() + ms;

	while (it_mono_ms() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		r = recv(fd, b, sizeof(b), MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
			return true;
	}
	return false;
}

int
it_hostile_closed_count(const int *fds, int n, int ms, bool *closed)
{
	char b[65536];
	struct pollfd *pfd = calloc((size_t)n, sizeof(*pfd));
	bool *done = calloc((size_t)n, sizeof(*done));
	int64_t end = it_mono_ms() + ms;
	int count = 0;

	assert_non_null(pfd);
	assert_non_null(done);
	while (count < n && it_mono_ms() < end) {
		for (int i = 0; i < n; i++) /* a closed one is left out */
			pfd[i] = (struct pollfd) { .fd = done[i] ? -1 : fds[i],
				.events = POLLIN };
		if (poll(pfd, (nfds_t)n, 50) <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			ssize_t r;

			if (done[i] || pfd[i].revents == 0)
				continue;
			r = recv(fds[i], b, sizeof(b), MSG_DONTWAIT);
			if (r == 0 ||
			    (r < 0 && errno != EAGAIN && errno != EINTR)) {
				done[i] = true;
				count++;
			}
		}
	}
	if (closed != NULL)
		memcpy(closed, done, (size_t)n * sizeof(*done));
	free(pfd);
	free(done);
	return count;
}

double
it_hostile_p99_bound(void)
{
	return it_sanitized() ? IT_HOSTILE_P99_SAN_MS : IT_HOSTILE_P99_MS;
}

/* The calm look is a baseline only when every call of it was served: a
 * client refused each call (a tube its token does not name) answers fast
 * and would make any p99 look slow, or a slow one look fine. */
static void
it_hostile_calm_ok(const struct it_probe_result *calm)
{
	assert_int_equal(calm->errors, 0);
	assert_true(calm->calls > 20);
}

/* How long the calm look runs: as long as the look under the attack did
 * (at least 1 s, at most 10), so that both p99s come from windows as
 * long, with as much of the machine's other work in them; on a loaded
 * machine a 1 s look beside a 3 s one was the calmer by chance. */
static int
calm_ms(const struct it_probe_result *r)
{
	return r->ms < 1000 ? 1000 : r->ms > 10000 ? 10000 : (int)r->ms;
}

void
it_hostile_p99_ok(const struct it_probe_result *r, const char *what,
    const char *url, const char *tube, const char *tok)
{
	struct it_probe_result calm;
	double bound = it_hostile_p99_bound();
	struct it_probe q;

	if (r->p99_ms < bound)
		return;
	if (tok != NULL)
		it_probe_start_token(&q, url, tube, tok);
	else
		it_probe_start(&q, url, tube);
	it_sleep_ms(calm_ms(r));
	calm = it_probe_stop(&q, "calm");
	free(q.us);
	it_hostile_calm_ok(&calm);
	fprintf(stderr, "%s: p99 %.2f ms over %.0f ms; calm %.2f ms\n", what,
	    r->p99_ms, bound, calm.p99_ms);
	assert_true(r->p99_ms < 3 * calm.p99_ms);
}

void
it_hostile_probe_tls_ok(struct it_probe *p, const char *what, const char *url,
    const char *tok, const char *ca)
{
	it_hostile_probe_tls_ok_beside(p, what, url, tok, ca, NULL);
}

void
it_hostile_probe_tls_ok_beside(struct it_probe *p, const char *what,
    const char *url, const char *tok, const char *ca,
    const struct it_hostile_beside *b)
{
	struct it_probe_result r = it_probe_stop(p, what), calm;
	double bound = it_hostile_p99_bound();
	struct it_probe q;

	assert_true(r.calls > 20);
	assert_int_equal(r.errors, 0);
	free(p->us);
	if (r.p99_ms < bound)
		return;
	/* the probe's own tube: the one its token is allowed */
	it_probe_start_tls(&q, url, p->tube, tok, ca);
	if (b != NULL)
		b->start(b->arg);
	it_sleep_ms(calm_ms(&r));
	calm = it_probe_stop(&q, b != NULL ? "calm beside" : "calm");
	if (b != NULL)
		b->stop(b->arg);
	free(q.us);
	it_hostile_calm_ok(&calm);
	fprintf(stderr, "%s: p99 %.2f ms over %.0f ms; calm%s %.2f ms\n", what,
	    r.p99_ms, bound, b != NULL ? " beside" : "", calm.p99_ms);
	assert_true(r.p99_ms < 3 * calm.p99_ms);
}
