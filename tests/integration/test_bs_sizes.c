/* Payload sizes on every face: a job of exactly --max-payload (set above
 * the protocol's default 1 MiB) goes in and comes back whole through the
 * beanstalk face (put, reserve, peek, stats-job), the native face (put,
 * take) and the HTTP face (POST, GET, take); one byte more is refused
 * cleanly on each (JOB_TOO_BIG, SLUICE_ETOOBIG, 413) and the server goes
 * on serving. --beanstalk-max-job-size 65535 gives the face beanstalkd's
 * put limit (and stats says so) while jobs put through other faces up to
 * --max-payload still come back whole through it. */
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsc.h"
#include "it.h"
#include "it_http.h"

enum {
	MAX = 2 * 1024 * 1024, /* --max-payload: twice the default */
};

struct fix {
	struct t_srv *s;
	struct sluice_client *c;
	int port, hport;
	char addr[32], haddr[32];
};

static void
fix_up(void **state, struct fix *f)
{
	f->s = it_srv(*state, "node");
	f->port = t_free_port();
	f->hport = it_free_port();
	snprintf(f->addr, sizeof(f->addr), "127.0.0.1:%d", f->port);
	snprintf(f->haddr, sizeof(f->haddr), "127.0.0.1:%d", f->hport);
	f->s->args[0] = "--beanstalk";
	f->s->args[1] = f->addr;
	f->s->args[2] = "--http";
	f->s->args[3] = f->haddr;
	f->s->args[4] = "--http-admin";
	f->s->args[5] = "--max-payload";
	f->s->args[6] = "2097152";
	it_start(f->s);
	f->c = it_client(f->s);
}

static void
fix_down(struct fix *f)
{
	sluice_close(f->c);
	assert_int_equal(t_srv_stop(f->s, SIGTERM), 0);
}

/* `n` bytes of a pattern that shows a shifted or cut body, NUL-ended. */
static char *
body(size_t n)
{
	char *p = malloc(n + 1);

	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = (char)('a' + (i * 7 + i / 4096) % 26);
	p[n] = '\0';
	return p;
}

/* "put ...\r\n<body>\r\n" for a job of n bytes. */
static char *
bs_put(const char *b, size_t n, size_t *len)
{
	char *cmd = malloc(n + 64);
	int h;

	assert_non_null(cmd);
	h = snprintf(cmd, 64, "put 5 0 60 %zu\r\n", n);
	memcpy(cmd + h, b, n);
	memcpy(cmd + h + n, "\r\n", 2);
	*len = (size_t)h + n + 2;
	return cmd;
}

/* Asserts that `got` is "<head>\r\n<b>\r\n" where head starts `want`. */
static void
expect_job(const char *got, const char *want, const char *b, size_t n)
{
	const char *nl = strstr(got, "\r\n");

	if (strncmp(got, want, strlen(want)) != 0 || nl == NULL)
		fail_msg("wanted %s..., got %.80s", want, got);
	assert_int_equal(strlen(nl + 2), n + 2);
	assert_memory_equal(nl + 2, b, n);
}

static void
test_a_job_at_max_payload_round_trips_on_the_beanstalk_face(void **state)
{
	struct fix f;
	struct bsc b;
	char *big = body(MAX + 1), *cmd, *got, line[96];
	size_t len;
	uint64_t id;

	fix_up(state, &f);
	assert_int_equal(bsc_open(&b, f.port), 0);
	cmd = bs_put(big, MAX, &len);
	assert_int_equal(bsc_send(&b, cmd, len), 0);
	free(cmd);
	got = bsc_reply(&b);
	if (sscanf(got, "INSERTED %" SCNu64, &id) != 1)
		fail_msg("put of %d bytes -> %s", MAX, got);
	free(got);

	snprintf(line, sizeof(line), "peek %" PRIu64 "\r\n", id);
	got = bsc_cmd(&b, line);
	snprintf(line, sizeof(line), "FOUND %" PRIu64 " %d\r\n", id, MAX);
	expect_job(got, line, big, MAX);
	free(got);

	got = bsc_cmd(&b, "reserve-with-timeout 5\r\n");
	snprintf(line, sizeof(line), "RESERVED %" PRIu64 " %d\r\n", id, MAX);
	expect_job(got, line, big, MAX);
	free(got);

	snprintf(line, sizeof(line), "stats-job %" PRIu64 "\r\n", id);
	got = bsc_cmd(&b, line);
	assert_true(strncmp(got, "OK ", 3) == 0);
	assert_non_null(strstr(got, "\nstate: reserved\n"));
	assert_non_null(strstr(got, "\nreserves: 1\n"));
	free(got);

	snprintf(line, sizeof(line), "delete %" PRIu64 "\r\n", id);
	got = bsc_cmd(&b, line);
	assert_string_equal(got, "DELETED\r\n");
	free(got);

	/* one byte over: refused, the body skipped, the connection usable */
	cmd = bs_put(big, MAX + 1, &len);
	assert_int_equal(bsc_send(&b, cmd, len), 0);
	free(cmd);
	got = bsc_reply(&b);
	assert_string_equal(got, "JOB_TOO_BIG\r\n");
	free(got);
	got = bsc_cmd(&b, "put 1 0 60 2\r\nok\r\n");
	assert_true(strncmp(got, "INSERTED ", 9) == 0);
	free(got);
	bsc_close(&b);
	free(big);
	fix_down(&f);
}

static void
test_a_task_at_max_payload_round_trips_on_the_native_face(void **state)
{
	struct sluice_put_opts o = { 0 };
	struct sluice_task *t;
	struct fix f;
	char *big = body(MAX + 1);
	uint64_t id;
	int created;

	fix_up(state, &f);
	o.tube = "big";
	it_rc(f.c, sluice_put(f.c, &o, big, MAX, &id, &created), 0);
	t = it_peek(f.c, id);
	assert_int_equal(t->payload_len, MAX);
	assert_memory_equal(t->payload, big, MAX);
	sluice_task_free(t);
	t = it_take(f.c, "big", 5000, 0);
	assert_int_equal(t->id, id);
	assert_int_equal(t->payload_len, MAX);
	assert_memory_equal(t->payload, big, MAX);
	it_rc(f.c, sluice_ack(f.c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	it_rc(f.c, sluice_put(f.c, &o, big, MAX + 1, &id, &created),
	    SLUICE_ETOOBIG);
	assert_true(it_put(f.c, "big", "after") > 0);
	free(big);
	fix_down(&f);
}

static void
test_a_task_at_max_payload_round_trips_on_the_http_face(void **state)
{
	struct fix f;
	char *big = body(MAX + 1), *out = NULL, *at, path[96];
	uint64_t id;

	fix_up(state, &f);
	big[MAX] = '\0';
	assert_int_equal(
	    it_http(f.hport, "POST", "/v1/tubes/web/tasks", NULL, big, &out),
	    201);
	id = (uint64_t)it_json_num(out, NULL, "id");
	free(out);

	snprintf(path, sizeof(path), "/v1/tasks/%" PRIu64, id);
	out = it_http_get(f.hport, path, 200);
	at = strstr(out, "\"payload\":\"");
	assert_non_null(at);
	assert_memory_equal(at + 11, big, MAX);
	assert_int_equal(at[11 + MAX], '"');
	free(out);

	assert_int_equal(it_http(f.hport, "POST", "/v1/tubes/web/take?wait=5s",
	                     NULL, NULL, &out),
	    200);
	at = strstr(out, "\"payload\":\"");
	assert_non_null(at);
	assert_memory_equal(at + 11, big, MAX);
	assert_int_equal(at[11 + MAX], '"');
	assert_int_equal((uint64_t)it_json_num(out, NULL, "id"), id);
	free(out);

	/* one byte over: 413, and the server serves on */
	free(big);
	big = body(MAX + 1);
	assert_int_equal(
	    it_http(f.hport, "POST", "/v1/tubes/web/tasks", NULL, big, &out),
	    413);
	free(out);
	assert_int_equal(
	    it_http(f.hport, "POST", "/v1/tubes/web/tasks", NULL, "ok", &out),
	    201);
	free(out);
	free(big);
	fix_down(&f);
}

/* `sluiced ARGS...` (NULL-ended): its exit code, stderr in err. */
static int
sluiced(char *err, size_t cap, ...)
{
	char *argv[16], bin[1024];
	int n = 0;
	va_list ap;

	snprintf(bin, sizeof(bin), "%s", t_bin("sluiced"));
	argv[n++] = bin;
	va_start(ap, cap);
	for (char *a; n < 15 && (a = va_arg(ap, char *)) != NULL;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	return t_run(argv, NULL, NULL, 0, err, cap);
}

static void
test_the_beanstalk_face_takes_beanstalkds_job_size(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct bsc b;
	char addr[32], err[2048], *big = body(100000), *cmd, *got, line[96];
	size_t len;
	uint64_t id;

	/* the flag is checked */
	assert_int_equal(sluiced(err, sizeof(err), "--data", s->data,
	                     "--beanstalk-max-job-size", "65535", NULL),
	    2);
	assert_non_null(
	    strstr(err, "--beanstalk-max-job-size needs --beanstalk"));
	assert_int_equal(
	    sluiced(err, sizeof(err), "--data", s->data, "--beanstalk",
	        "127.0.0.1:1", "--beanstalk-max-job-size", "2000000", NULL),
	    2);
	assert_non_null(strstr(err, "is over --max-payload 1048576"));
	assert_int_equal(
	    sluiced(err, sizeof(err), "--data", s->data, "--beanstalk",
	        "127.0.0.1:1", "--beanstalk-max-job-size", "0", NULL),
	    2);

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", t_free_port());
	s->args[0] = "--beanstalk";
	s->args[1] = addr;
	s->args[2] = "--beanstalk-max-job-size";
	s->args[3] = "65535";
	it_start(s);
	c = it_client(s);
	assert_int_equal(bsc_open(&b, atoi(strchr(addr, ':') + 1)), 0);
	got = bsc_cmd(&b, "stats\r\n");
	assert_non_null(strstr(got, "\nmax-job-size: 65535\n"));
	free(got);
	cmd = bs_put(big, 65535, &len);
	assert_int_equal(bsc_send(&b, cmd, len), 0);
	free(cmd);
	got = bsc_reply(&b);
	assert_true(strncmp(got, "INSERTED ", 9) == 0);
	free(got);
	cmd = bs_put(big, 65536, &len);
	assert_int_equal(bsc_send(&b, cmd, len), 0);
	free(cmd);
	got = bsc_reply(&b);
	assert_string_equal(got, "JOB_TOO_BIG\r\n");
	free(got);

	/* a larger job from the native face still comes back whole */
	free(bsc_cmd(&b, "reserve-with-timeout 0\r\n"));
	it_rc(c, sluice_put(c, NULL, big, 100000, &id, NULL), 0);
	got = bsc_cmd(&b, "reserve-with-timeout 5\r\n");
	snprintf(line, sizeof(line), "RESERVED %" PRIu64 " 100000\r\n", id);
	expect_job(got, line, big, 100000);
	free(got);
	bsc_close(&b);
	sluice_close(c);
	free(big);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_a_job_at_max_payload_round_trips_on_the_beanstalk_face),
		T(test_a_task_at_max_payload_round_trips_on_the_native_face),
		T(test_a_task_at_max_payload_round_trips_on_the_http_face),
		T(test_the_beanstalk_face_takes_beanstalkds_job_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
