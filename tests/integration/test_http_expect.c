/* The HTTP face's answer to a request's head before its body
 * (docs/http-api.md): `Expect: 100-continue` is answered "100 Continue"
 * when the request is acceptable so far, or with its final refusal at
 * once (413, 403, 404, 405), the body never sent, and the connection
 * closed; another expectation is 417; HTTP/1.0 ignores Expect. A method a
 * known path does not take is 405 with Allow (and the API's JSON error),
 * OPTIONS names them, an unknown path stays 404. curl (which sends Expect
 * for a body over 1 MiB) uploads without waiting its second for an
 * answer. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "it.h"
#include "it_hostile.h"
#include "it_http.h"

enum {
	MAX_PAYLOAD = 2 << 20,
	UPLOAD = (1 << 20) + (1 << 19), /* 1.5 MiB: curl sends Expect */
	/* curl waits 1 s for "100 Continue" before it sends anyway: an
	 * answer within this never waited for it */
	NO_WAIT_MS = 900,
	IO_MS = 5000,
};

struct hs {
	struct t_srv *s;
	int port;
	char addr[64];
};

static void
start_auth(void **state, struct hs *h, bool admin, const char *auth)
{
	static char maxp[32];
	int n = 0;

	h->s = it_srv(*state, "node");
	h->port = it_free_port();
	snprintf(h->addr, sizeof(h->addr), "127.0.0.1:%d", h->port);
	snprintf(maxp, sizeof(maxp), "%d", MAX_PAYLOAD);
	h->s->args[n++] = "--http";
	h->s->args[n++] = h->addr;
	h->s->args[n++] = "--max-payload";
	h->s->args[n++] = maxp;
	if (admin)
		h->s->args[n++] = "--http-admin";
	if (auth != NULL) {
		h->s->args[n++] = "--auth";
		h->s->args[n++] = auth;
	}
	it_start(h->s);
}

static void
start(void **state, struct hs *h, bool admin)
{
	start_auth(state, h, admin, NULL);
}

/* ---- a raw connection ---------------------------------------------------- */

static int
raw_connect(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static void
raw_send(int fd, const void *p, size_t n)
{
	const char *b = p;

	while (n > 0) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		assert_true(w > 0);
		b += w;
		n -= (size_t)w;
	}
}

static void
raw_sends(int fd, const char *s)
{
	raw_send(fd, s, strlen(s));
}

/* Reads until `buf` holds a whole head (through its blank line) and, when
 * it gives a Content-Length, its body; within `ms`. Returns the bytes
 * held (NUL-ended), 0 when nothing whole came. Reads a byte at a time,
 * never into the next answer. */
static size_t
raw_answer(int fd, char *buf, size_t cap, int ms)
{
	int64_t end = it_mono_ms() + ms;
	size_t n = 0;

	buf[0] = '\0';
	while (n + 1 < cap && it_mono_ms() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		char *eoh;
		ssize_t r;

		if (poll(&pfd, 1, 20) <= 0)
			continue;
		r = recv(fd, buf + n, 1, 0); /* one answer, not the next */
		if (r <= 0)
			break;
		n += (size_t)r;
		buf[n] = '\0';
		if ((eoh = strstr(buf, "\r\n\r\n")) != NULL) {
			const char *cl = strstr(buf, "Content-Length: ");
			size_t want = cl != NULL && cl < eoh
			    ? (size_t)strtoul(cl + 16, NULL, 10)
			    : 0;

			if (n >= (size_t)(eoh + 4 - buf) + want)
				return n;
		}
	}
	return 0;
}

static int
status_of(const char *answer)
{
	return strncmp(answer, "HTTP/1.1 ", 9) == 0 ? atoi(answer + 9) : -1;
}

/* A head that expects 100-continue, its body not sent: the final answer
 * comes at once (within NO_WAIT_MS), no "100 Continue" before it, and the
 * connection closes after it. Returns the status, `ans` the answer. */
static int
refused_unsent_within(
    int port, const char *head, char *ans, size_t cap, int64_t bound)
{
	int fd = raw_connect(port);
	int64_t t0 = it_mono_ms(), took;
	int st;

	raw_send(fd, head, strlen(head));
	if (raw_answer(fd, ans, cap, IO_MS) == 0)
		fail_msg("no answer to %s", head);
	took = it_mono_ms() - t0;
	st = status_of(ans);
	if (took >= bound)
		fail_msg("%d after %lld ms: %s", st, (long long)took, head);
	assert_null(strstr(ans, "100 Continue"));
	assert_non_null(strstr(ans, "Connection: close"));
	/* the client sends nothing more, as curl does: the server, which
	 * drops what still comes for a moment, closes at its end */
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	assert_true(it_hostile_closed_within(fd, IO_MS));
	close(fd);
	return st;
}

static int
refused_unsent(int port, const char *head, char *ans, size_t cap)
{
	return refused_unsent_within(port, head, ans, cap, NO_WAIT_MS);
}

/* ---- Expect ----------------------------------------------------------------
 */

/* An acceptable request: "100 Continue" first, then the body goes and is
 * answered, and the connection serves the next request. */
static void
test_continue_then_the_body(void **state)
{
	struct hs h;
	char ans[4096];
	int fd;

	start(state, &h, false);
	fd = raw_connect(h.port);
	raw_sends(fd,
	    "POST /v1/tubes/e/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "Content-Length: 5\r\nExpect: 100-continue\r\n\r\n");
	assert_true(raw_answer(fd, ans, sizeof(ans), NO_WAIT_MS) > 0);
	assert_string_equal(ans, "HTTP/1.1 100 Continue\r\n\r\n");
	raw_sends(fd, "hello");
	assert_true(raw_answer(fd, ans, sizeof(ans), IO_MS) > 0);
	assert_int_equal(status_of(ans), 201);
	assert_null(strstr(ans, "Connection: close"));
	raw_sends(
	    fd, "GET /v1/tubes/e/next HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
	assert_true(raw_answer(fd, ans, sizeof(ans), IO_MS) > 0);
	assert_int_equal(status_of(ans), 200);
	assert_non_null(strstr(ans, "\"payload\":\"hello\""));
	close(fd);
}

/* Refusals known from the head are final at once, the body unsent. */
static void
test_refusals_come_before_the_body(void **state)
{
	static const struct {
		const char *head;
		int want;
		const char *has;
	} cases[] = {
		{ "POST /v1/tubes/e/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		  "Content-Length: 3000000\r\nExpect: 100-continue\r\n\r\n",
		    413, "payload_too_large" },
		{ "POST /v1/tubes/e/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		  "Transfer-Encoding: chunked\r\nExpect: 100-continue\r\n"
		  "Origin: http://elsewhere.example\r\n\r\n",
		    403, "cross-site" },
		{ "POST /v1/tasks/1/update?lease=1 HTTP/1.1\r\nHost: "
		  "127.0.0.1\r\nContent-Length: 10\r\nExpect: "
		  "100-continue\r\n\r\n",
		    403, "--http-admin" },
		{ "PUT /v1/tubes/e/take HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		  "Content-Length: 10\r\nExpect: 100-continue\r\n\r\n",
		    405, "Allow: POST, OPTIONS\r\n" },
		{ "POST /v1/nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		  "Content-Length: 10\r\nExpect: 100-continue\r\n\r\n",
		    404, "not_found" },
		{ "POST /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		  "Content-Length: 10\r\nExpect: 100-continue\r\n\r\n",
		    404, "no such page" },
		{ "POST /v1/tubes/e/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		  "Content-Length: 10\r\nExpect: 200-ok\r\n\r\n",
		    417, "100-continue" },
	};
	struct hs h;
	char ans[4096];

	start(state, &h, false);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st =
		    refused_unsent(h.port, cases[i].head, ans, sizeof(ans));

		if (st != cases[i].want || strstr(ans, cases[i].has) == NULL)
			fail_msg("want %d with \"%s\" for\n%s\ngot\n%s",
			    cases[i].want, cases[i].has, cases[i].head, ans);
	}
	/* the server serves on */
	free(it_http_get(h.port, "/health", 200));
}

/* An expectation other than 100-continue is 417 even without a body; an
 * HTTP/1.0 request's Expect is ignored (no "100 Continue", the body read
 * as it comes). */
static void
test_other_expectations_and_http10(void **state)
{
	struct hs h;
	char ans[4096];
	int fd;

	start(state, &h, false);
	fd = raw_connect(h.port);
	raw_sends(fd,
	    "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: "
	    "something\r\n\r\n");
	assert_true(raw_answer(fd, ans, sizeof(ans), IO_MS) > 0);
	assert_int_equal(status_of(ans), 417);
	close(fd);

	fd = raw_connect(h.port);
	raw_sends(fd,
	    "POST /v1/tubes/e/tasks HTTP/1.0\r\nContent-Length: 2\r\n"
	    "Expect: 100-continue\r\n\r\nhi");
	assert_true(raw_answer(fd, ans, sizeof(ans), IO_MS) > 0);
	assert_int_equal(status_of(ans), 201);
	close(fd);
}

/* With --auth, the token is judged before the body: unknown, 401 (after
 * the pause every wrong token gets); known, its role and the tube the
 * path names, 403 at once; allowed, "100 Continue". */
static void
test_tokens_are_judged_before_the_body(void **state)
{
	static const struct {
		const char *token, *path;
		int want;
	} cases[] = {
		{ "wrong", "/v1/tubes/emails/tasks", 401 },
		{ "worker-token", "/v1/tubes/other/tasks", 403 },
		{ "monitor-token", "/v1/tubes/emails/tasks", 403 },
		{ "worker-token", "/v1/tubes/emails/pause?for=1s", 403 },
		{ "monitor-token", "/v1/tasks/1/ack?lease=1", 403 },
	};
	const char *tokens = t_path(*state, "tokens");
	char head[512], ans[4096];
	struct hs h;
	FILE *f = fopen(tokens, "w");
	int fd;

	assert_non_null(f);
	fprintf(f, "w worker emails* ");
	it_hostile_hash(f, "worker-token");
	fprintf(f, "\nm monitor * ");
	it_hostile_hash(f, "monitor-token");
	fprintf(f, "\n");
	assert_int_equal(fclose(f), 0);
	start_auth(state, &h, true, tokens);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st;

		snprintf(head, sizeof(head),
		    "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		    "Authorization: Bearer %s\r\nContent-Length: 100\r\n"
		    "Expect: 100-continue\r\n\r\n",
		    cases[i].path, cases[i].token);
		st = refused_unsent_within(h.port, head, ans, sizeof(ans),
		    cases[i].want == 401 ? IO_MS : NO_WAIT_MS);
		if (st != cases[i].want)
			fail_msg("want %d for\n%s\ngot\n%s", cases[i].want,
			    head, ans);
	}
	assert_true(
	    it_log_count(h.s, "before the body of an HTTP request") >= 4);
	/* the worker's own tube: the body is asked for, and put */
	fd = raw_connect(h.port);
	raw_sends(fd,
	    "POST /v1/tubes/emails/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "Authorization: Bearer worker-token\r\nContent-Length: 2\r\n"
	    "Expect: 100-continue\r\n\r\n");
	assert_true(raw_answer(fd, ans, sizeof(ans), IO_MS) > 0);
	assert_string_equal(ans, "HTTP/1.1 100 Continue\r\n\r\n");
	raw_sends(fd, "hi");
	assert_true(raw_answer(fd, ans, sizeof(ans), IO_MS) > 0);
	assert_int_equal(status_of(ans), 201);
	close(fd);
}

/* curl sends `Expect: 100-continue` for a body over 1 MiB and waits a
 * second for an answer before it sends anyway: the upload is done well
 * within that, and a body over --max-payload is refused with nothing of
 * it uploaded. */
static void
test_curl_uploads_without_waiting(void **state)
{
	char curl[512], path[512], cmd[2048], out[256];
	struct hs h;
	FILE *f, *p;
	double secs = -1, up = -1;
	int code = 0;

	if (!it_which("curl", curl, sizeof(curl)))
		skip();
	start(state, &h, false);
	for (int big = 0; big < 2; big++) {
		size_t size = big ? MAX_PAYLOAD + 1 : UPLOAD;
		char *data = malloc(size);

		assert_non_null(data);
		memset(data, 'u', size);
		snprintf(path, sizeof(path), "%s",
		    t_path(*state, big ? "upload-big" : "upload"));
		f = fopen(path, "w");
		assert_non_null(f);
		assert_int_equal(fwrite(data, 1, size, f), size);
		fclose(f);
		free(data);
		snprintf(cmd, sizeof(cmd),
		    "%s -sS --max-time 10 -o /dev/null -w "
		    "'%%{http_code} %%{time_total} %%{size_upload}' "
		    "--data-binary @%s http://%s/v1/tubes/c/tasks",
		    curl, path, h.addr);
		p = popen(cmd, "r");
		assert_non_null(p);
		out[0] = '\0';
		if (fgets(out, sizeof(out), p) == NULL)
			out[0] = '\0';
		pclose(p);
		assert_int_equal(
		    sscanf(out, "%d %lf %lf", &code, &secs, &up), 3);
		if (code != (big ? 413 : 201) || secs * 1000 >= NO_WAIT_MS)
			fail_msg("curl: %s (want %d within %d ms)", out,
			    big ? 413 : 201, NO_WAIT_MS);
		if (big)
			assert_true(up == 0); /* nothing of the body went */
		else
			assert_true(up == UPLOAD);
	}
}

/* ---- methods ---------------------------------------------------------------
 */

/* Every known path answers a method it does not take with 405, Allow
 * listing those it takes, and the API's JSON error; OPTIONS names them;
 * an unknown path is 404. */
static void
test_a_wrong_method_is_405_with_allow(void **state)
{
	static const struct {
		const char *method, *path, *allow; /* NULL: 404 */
	} cases[] = {
		{ "GET", "/v1/tubes/x/take", "POST, OPTIONS" },
		{ "POST", "/metrics", "GET, HEAD, OPTIONS" },
		{ "DELETE", "/", "GET, HEAD, OPTIONS" },
		{ "PUT", "/health", "GET, HEAD, OPTIONS" },
		{ "GET", "/api/kick", "POST, OPTIONS" },
		{ "POST", "/v1/stats", "GET, HEAD, OPTIONS" },
		{ "POST", "/v1/history", "GET, HEAD, OPTIONS" },
		{ "POST", "/v1/cluster", "GET, HEAD, OPTIONS" },
		{ "GET", "/v1/tubes/x/release", "POST, OPTIONS" },
		{ "GET", "/v1/snapshot", "POST, OPTIONS" },
		{ "POST", "/v1/tubes/x", "GET, HEAD, PUT, DELETE, OPTIONS" },
		{ "PATCH", "/v1/tubes/x/tasks",
		    "GET, HEAD, POST, DELETE, OPTIONS" },
		{ "PUT", "/v1/tasks/5", "GET, HEAD, DELETE, OPTIONS" },
		{ "GET", "/v1/tasks/5/ack", "POST, OPTIONS" },
		{ "HEAD", "/v1/tasks/ack", "POST, OPTIONS" },
		{ "POST", "/v1/keys/k", "GET, HEAD, DELETE, OPTIONS" },
		{ "GET", "/v1/nothing", NULL },
		{ "GET", "/v1/tasks/5/nothing", NULL },
		{ "POST", "/nothing", NULL },
	};
	struct hs h;
	char *body, want[128];

	start(state, &h, true);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *m = cases[i].method, *path = cases[i].path;
		int st = it_http(h.port, m, path, NULL, NULL, &body);
		bool head = strcmp(m, "HEAD") == 0;

		if (cases[i].allow == NULL) {
			if (st != 404)
				fail_msg("%s %s: %d, want 404", m, path, st);
			free(body);
			continue;
		}
		snprintf(want, sizeof(want), "Allow: %s\r\n", cases[i].allow);
		if (st != 405 || strstr(it_http_head(), want) == NULL ||
		    (!head && strstr(body, "\"error\":") == NULL))
			fail_msg("%s %s: %d\n%s%s\nwant 405 and %s", m, path,
			    st, it_http_head(), body ? body : "", want);
		free(body);
		st = it_http(h.port, "OPTIONS", path, NULL, NULL, &body);
		assert_int_equal(st, 200);
		assert_non_null(strstr(it_http_head(), want));
		free(body);
	}
	/* what a path takes still works */
	body = it_http_get(h.port, "/v1/stats", 200);
	free(body);
	assert_int_equal(
	    it_http(h.port, "POST", "/v1/tubes/x/tasks", NULL, "p", &body),
	    201);
	free(body);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, it_setup, it_teardown)
		T(test_continue_then_the_body),
		T(test_refusals_come_before_the_body),
		T(test_other_expectations_and_http10),
		T(test_tokens_are_judged_before_the_body),
		T(test_curl_uploads_without_waiting),
		T(test_a_wrong_method_is_405_with_allow),
#undef T
	};

	return cmocka_run_group_tests_name("http_expect", tests, NULL, NULL);
}
