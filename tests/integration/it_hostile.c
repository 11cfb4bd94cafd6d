/* it_hostile - the hardening tests' shared helpers (see it_hostile.h).
 *
 * The token file is written with tokens_sha256, the server's own hash, so
 * a test never carries a precomputed digest; the certificates are made
 * by the openssl command line, its output kept in openssl.log, once per
 * test process (two RSA keys take a second or more) in a directory of
 * their own that is removed at exit. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
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

/* The twin of `s`: a server of its own (a name of its own, so a second
 * look of a test starts afresh) on the transport of s->url. */
static struct t_srv *
look_twin(void **state, const struct t_srv *s, const char *ca)
{
	static int n;
	char name[32];
	struct t_srv *t;

	snprintf(name, sizeof(name), "twin%d", ++n);
	t = it_srv(*state, name);
	if (strncmp(s->url, "tls+tcp://", 10) == 0) {
		assert_non_null(ca);
		it_hostile_tls_setup(t);
	} else if (strncmp(s->url, "ws://", 5) == 0) {
		snprintf(t->url, sizeof(t->url), "ws://127.0.0.1:%d", t->port);
	} else {
		assert_int_equal(strncmp(s->url, "tcp://", 6), 0);
	}
	it_start(t);
	return t;
}

void
it_look_start(struct it_look *l, void **state, const struct t_srv *s,
    const char *tube, const char *tok, const char *ca)
{
	memset(l, 0, sizeof(*l));
	l->twin = look_twin(state, s, ca);
	it_probe_spawn(&l->probe, s->url, tube, tok, ca);
	it_probe_spawn(&l->twin_probe, l->twin->url, tube, NULL, ca);
	it_probe_arm(&l->probe);
	it_probe_arm(&l->twin_probe);
}

struct it_probe_result
it_look_stop(struct it_look *l, const char *what, size_t min_calls)
{
	char twin[160];

	/* both windows end together: each stops after its round */
	atomic_store(&l->probe.stop, true);
	atomic_store(&l->twin_probe.stop, true);
	l->r = it_probe_stop(&l->probe, what);
	snprintf(twin, sizeof(twin), "%s (its twin)", what);
	l->twin_r = it_probe_stop(&l->twin_probe, twin);
	t_srv_stop(l->twin, SIGKILL);
	assert_int_equal(l->r.errors, 0);
	assert_true(l->r.calls > min_calls);
	/* a baseline only when every call of it was served */
	assert_int_equal(l->twin_r.errors, 0);
	assert_true(l->twin_r.calls > min_calls);
	return l->r;
}

void
it_look_p99_ok(const struct it_look *l, const char *what)
{
	double bound = it_hostile_p99_bound();

	if (l->r.p99_ms < bound)
		return;
	fprintf(stderr, "%s: p99 %.2f ms over %.0f ms; its twin's %.2f ms\n",
	    what, l->r.p99_ms, bound, l->twin_r.p99_ms);
	assert_true(l->r.p99_ms < 3 * l->twin_r.p99_ms);
}

void
it_look_ok(struct it_look *l, const char *what)
{
	it_look_stop(l, what, 20);
	it_look_p99_ok(l, what);
}
