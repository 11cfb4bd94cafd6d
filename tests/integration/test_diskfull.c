/* A full disk refuses new work only (SPEC 4): a real sluiced whose log
 * has no more room, on a small tmpfs (mounted here when the test runs as
 * root, and unmounted at its end) or under --max-log-bytes, is filled
 * with 2 KB puts through `sluice put --lines` until refused. Then, with
 * the log full: /health says 503 "log full: puts refused" and the metric
 * sluice_log_refusing_puts 1; puts are refused through libsluice, the
 * CLI and the beanstalk face; a take, release, fail, bury, kick, touch,
 * ack and delete each still work. Every task accepted is then drained,
 * exactly once and with its payload, through the CLI, the beanstalk face
 * and libsluice; puts work again by themselves, a snapshot gives the
 * log's room back, and `sluice-log verify` finds the directory sound.
 * And the churn of retries is bounded: on a full log, tasks released and
 * taken again over and over spend a pool, then the retake is refused
 * while what finishes work (an ack, a fail with its text cut, a delete)
 * goes on. Every loop is bounded in count and in time. */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bsc.h"
#include "it.h"
#include "it_http.h"

enum {
	PAYLOAD = 2048,      /* bytes of each task, the line without '\n' */
	FILL_LINES = 12000,  /* more than either log can hold */
	SEG = 1 << 20,       /* --segment-size */
	TMPFS_MB = 12,       /* the tmpfs */
	CLI_DRAIN = 10,      /* tasks drained through the CLI */
	BS_DRAIN = 300,      /* ... through the beanstalk face */
	TAKE_MAX = 100,      /* tasks per take through libsluice */
	OUT_CAP = 256 << 10, /* the CLI's stdout and stderr, captured */
	WAIT_MS = 30000,     /* for what the server does by itself */
};

static const char *const tube = "full";

/* A tmpfs mounted by this test ("" when none): unmounted at teardown,
 * whatever happened. */
static char mnt[600];

static char out[OUT_CAP], err[OUT_CAP];

static int
teardown(void **state)
{
	if (mnt[0] != '\0') {
		if (umount2(mnt, MNT_DETACH) != 0)
			fprintf(stderr, "cannot unmount %s: %s\n", mnt,
			    strerror(errno));
		mnt[0] = '\0';
	}
	return it_teardown(state);
}

/* What was accepted: ids in the order they were given, with the token
 * their payload carries, and whether the task was drained. */
struct accepted {
	uint64_t id[FILL_LINES + 64];
	uint32_t token[FILL_LINES + 64];
	bool done[FILL_LINES + 64];
	size_t n;
};

struct fix {
	struct t_srv *s;
	struct sluice_client *c;
	int http, bs;
	char http_addr[32], bs_addr[32];
	struct accepted acc;
};

/* The payload of token `t`: "t%06u " then 'x' up to PAYLOAD bytes. */
static void
payload_of(uint32_t t, char *p)
{
	int n = snprintf(p, PAYLOAD + 1, "t%06u ", t);

	memset(p + n, 'x', PAYLOAD - (size_t)n);
	p[PAYLOAD] = '\0';
}

static void
accept_id(struct accepted *a, uint64_t id, uint32_t token)
{
	assert_true(a->n < FILL_LINES + 64);
	a->id[a->n] = id;
	a->token[a->n] = token;
	a->done[a->n] = false;
	a->n++;
}

/* Marks task `id`, taken with `payload`, drained; it must be one that was
 * accepted, not drained before, and carry its own payload. */
static void
drained(struct accepted *a, uint64_t id, const void *payload, size_t len)
{
	char want[PAYLOAD + 1];

	for (size_t i = 0; i < a->n; i++) {
		if (a->id[i] != id)
			continue;
		if (a->done[i])
			fail_msg("task %" PRIu64 " drained twice", id);
		payload_of(a->token[i], want);
		if (len != PAYLOAD || memcmp(payload, want, PAYLOAD) != 0)
			fail_msg("task %" PRIu64 " has another payload", id);
		a->done[i] = true;
		return;
	}
	fail_msg("task %" PRIu64 " was never accepted", id);
}

static size_t
count_done(const struct accepted *a)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n; i++)
		n += a->done[i];
	return n;
}

/* Runs `sluice -s URL ARGS...` (NULL-ended) with `in` on stdin. */
static int
cli(const struct t_srv *s, const char *in, ...)
{
	va_list ap;
	int rc;

	va_start(ap, in);
	rc = it_cli_v(s->url, in, out, sizeof(out), err, sizeof(err), ap);
	va_end(ap);
	return rc;
}

/* Mounts a TMPFS_MB tmpfs on `dir` (created). False when this process
 * may not (not root, or no mount in this container). The mount is made
 * in a mount namespace of this process's own where it can have one, so
 * that it goes with the process (and the servers it starts) even if the
 * test is killed before its teardown unmounts it. */
static bool
mount_tmpfs(const char *dir)
{
	static bool private_ns;
	char opts[64];

	if (geteuid() != 0 || mkdir(dir, 0700) != 0)
		return false;
	if (!private_ns && unshare(CLONE_NEWNS) == 0 &&
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
		private_ns = true;
	snprintf(opts, sizeof(opts), "size=%dm,mode=0700", TMPFS_MB);
	if (mount("sluice-test", dir, "tmpfs", 0, opts) != 0) {
		fprintf(stderr, "no tmpfs (%s): ", strerror(errno));
		rmdir(dir);
		return false;
	}
	snprintf(mnt, sizeof(mnt), "%s", dir);
	return true;
}

static void
start(struct fix *f)
{
	int n = 0;

	while (f->s->args[n] != NULL)
		n++;
	f->http = it_free_port();
	f->bs = it_free_port();
	snprintf(f->http_addr, sizeof(f->http_addr), "127.0.0.1:%d", f->http);
	snprintf(f->bs_addr, sizeof(f->bs_addr), "127.0.0.1:%d", f->bs);
	f->s->args[n++] = "--http";
	f->s->args[n++] = f->http_addr;
	f->s->args[n++] = "--beanstalk";
	f->s->args[n++] = f->bs_addr;
	f->s->args[n++] = "--segment-size";
	f->s->args[n++] = "1048576";
	f->s->args[n] = NULL;
	it_start(f->s);
	f->c = it_client(f->s);
}

/* The number at the start of `p` into *v; where it ends. */
static const char *
num(const char *p, unsigned long *v)
{
	size_t n = strspn(p, "0123456789");

	*v = strtoul(p, NULL, 10);
	return p + n;
}

/* Fills the log through `sluice put --lines` until the log refuses: the
 * tool stops at the first refused batch, says how many lines it put, and
 * exits 1, long before the end of its input. */
static void
fill_with_cli(struct fix *f)
{
	static bool refused[FILL_LINES + 2];
	char *in = malloc((size_t)FILL_LINES * (PAYLOAD + 1) + 1);
	unsigned long last, told, line = 0;
	const char *p, *q;
	int64_t t0;
	size_t len = 0;
	int rc;

	assert_non_null(in);
	for (uint32_t i = 1; i <= FILL_LINES; i++) {
		payload_of(i, in + len);
		len += PAYLOAD;
		in[len++] = '\n';
	}
	in[len] = '\0';
	t0 = it_mono_ms();
	rc = cli(f->s, in, "put", "-t", tube, "--lines", NULL);
	free(in);
	if (rc != 1)
		fail_msg("put --lines: exit %d; stderr: %.2000s", rc, err);
	/* Far less than the 120 s it once took; most of it is the fill. */
	assert_true(it_mono_ms() - t0 < 30000);

	/* stderr: the refused lines, then the summary */
	p = strstr(err, "the log is full: stopped after line ");
	if (p == NULL)
		fail_msg("no summary in: %.2000s", err);
	q = num(p + strlen("the log is full: stopped after line "), &last);
	assert_true(strncmp(q, "; ", 2) == 0);
	q = num(q + 2, &told);
	assert_true(strncmp(q, " lines accepted", 15) == 0);
	assert_true(last > 500 && last < FILL_LINES);
	memset(refused, 0, sizeof(refused));
	for (p = err; (p = strstr(p, "sluice: put: line ")) != NULL; p++) {
		unsigned long n;

		q = num(p + strlen("sluice: put: line "), &n);

		assert_true(n >= 1 && n <= last);
		assert_non_null(strstr(q, "log full"));
		refused[n] = true;
	}

	/* stdout: one id per accepted line, in line order */
	p = out;
	for (unsigned long i = 1; i <= last; i++) {
		if (refused[i])
			continue;
		line++;
		if (*p < '0' || *p > '9')
			fail_msg(
			    "%lu ids for %lu accepted lines", line - 1, told);
		unsigned long id;

		q = num(p, &id);
		accept_id(&f->acc, id, (uint32_t)i);
		assert_true(*q == '\n');
		p = q + 1;
	}
	assert_true(*p == '\0');
	assert_int_equal(line, told);
	assert_int_equal(f->acc.n, told);
}

/* Puts through libsluice until refused; once more after a pause, since a
 * spare still being made when the first refusal came is room too; and
 * again while /health says the log has room (a spare made later still,
 * on a loaded machine). */
static void
fill_with_library(struct fix *f)
{
	char payload[PAYLOAD + 1];
	struct sluice_put_opts o;
	uint32_t token = FILL_LINES + 1;

	sluice_put_opts_init(&o);
	o.tube = tube;
	for (int pass = 0; pass < 5; pass++) {
		char *body = NULL;
		int st;

		for (int round = 0, got = 1; round < 10 && got > 0; round++) {
			int rc = 0;

			got = 0;
			for (int i = 0; i < 2000 && rc == 0; i++) {
				uint64_t id;

				payload_of(token, payload);
				rc = sluice_put(
				    f->c, &o, payload, PAYLOAD, &id, NULL);
				if (rc == 0) {
					accept_id(&f->acc, id, token++);
					got++;
				}
			}
			it_rc(f->c, rc, SLUICE_ENOSPC);
			it_sleep_ms(300);
		}
		st = it_http(f->http, "GET", "/health", NULL, NULL, &body);
		free(body);
		if (st == 503)
			return;
	}
	fail_msg("the log had room again after five passes of puts");
}

/* While full: /health, the metric, stats, and a put through each face
 * refused with the reason. */
static void
check_full(struct fix *f)
{
	struct sluice_put_opts o;
	struct bsc b;
	char *body, *got;
	int rc;

	body = it_http_get(f->http, "/health", 503);
	assert_string_equal(body, "log full: puts refused\n");
	free(body);
	body = it_http_get(f->http, "/metrics", 200);
	assert_true(it_metric(body, "sluice_log_refusing_puts") == 1);
	assert_true(it_metric(body, "sluice_log_reserved_bytes") > 0);
	free(body);
	assert_int_equal(it_node_kv(f->c, "log_refusing_puts"), 1);

	sluice_put_opts_init(&o);
	o.tube = tube;
	it_rc(
	    f->c, sluice_put(f->c, &o, "small", 5, NULL, NULL), SLUICE_ENOSPC);
	rc = cli(f->s, NULL, "put", "-t", tube, "one", NULL);
	if (rc != 1 || strstr(err, "log full") == NULL)
		fail_msg("put: exit %d: %s%s", rc, out, err);

	assert_int_equal(bsc_open(&b, f->bs), 0);
	got = bsc_cmd(&b, "use full\r\n");
	assert_string_equal(got, "USING full\r\n");
	free(got);
	got = bsc_cmd(&b, "put 0 0 60 5\r\nhello\r\n");
	assert_string_equal(got, "OUT_OF_MEMORY\r\n");
	free(got);
	bsc_close(&b);
}

/* Takes one task through libsluice (a session lease). */
static struct sluice_task *
take_one(struct fix *f)
{
	struct sluice_take_opts o = { &tube, 1, 0, 1, 0 };
	struct sluice_task *t = NULL;
	size_t n = 0;

	it_rc(f->c, sluice_take(f->c, &o, &t, &n), 0);
	assert_int_equal(n, 1);
	return t;
}

/* With the log full, each operation on accepted work still works. */
static void
operate_while_full(struct fix *f)
{
	char error[1001];
	struct sluice_after a;
	struct sluice_task *t, *u;
	uint64_t lease;

	memset(error, 'e', sizeof(error) - 1);
	error[sizeof(error) - 1] = '\0';

	t = take_one(f); /* release */
	it_rc(f->c, sluice_release(f->c, t->id, t->lease, 0, -1, &a), 0);
	assert_int_equal(a.state, SLUICE_READY);
	sluice_task_free(t);

	t = take_one(f); /* fail, with a long text */
	it_rc(f->c, sluice_fail(f->c, t->id, t->lease, error, 0, &a), 0);
	sluice_task_free(t);

	t = take_one(f); /* bury, kick */
	it_rc(f->c, sluice_bury(f->c, t->id, t->lease, &a), 0);
	assert_int_equal(a.state, SLUICE_BURIED);
	it_rc(f->c, sluice_kick_id(f->c, t->id, &a), 0);
	assert_int_equal(a.state, SLUICE_READY);
	sluice_task_free(t);

	t = take_one(f); /* touch, ack */
	it_rc(f->c, sluice_touch(f->c, t->id, t->lease, &a), 0);
	it_rc(f->c, sluice_ack(f->c, t->id, t->lease, NULL, &a), 0);
	drained(&f->acc, t->id, t->payload, t->payload_len);
	sluice_task_free(t);

	/* a delete of a ready task, and of a taken one */
	it_rc(f->c, sluice_peek_next(f->c, tube, SLUICE_READY, &t), 0);
	it_rc(f->c, sluice_delete(f->c, t->id), 0);
	drained(&f->acc, t->id, t->payload, t->payload_len);
	sluice_task_free(t);
	u = take_one(f);
	lease = u->lease;
	it_rc(f->c, sluice_delete(f->c, u->id), 0);
	it_rc(
	    f->c, sluice_ack(f->c, u->id, lease, NULL, NULL), SLUICE_ENOTFOUND);
	drained(&f->acc, u->id, u->payload, u->payload_len);
	sluice_task_free(u);
}

/* The number after `"name":` in the CLI's JSON. */
static uint64_t
json_u64(const char *json, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\"%s\":", name);
	p = strstr(json, key);
	if (p == NULL)
		fail_msg("no %s in %s", key, json);
	return strtoull(p + strlen(key), NULL, 10);
}

static void
drain_with_cli(struct fix *f)
{
	for (int i = 0; i < CLI_DRAIN; i++) {
		char id[32], lease[32];
		const char *p;
		char *e;

		assert_int_equal(
		    cli(f->s, NULL, "take", "-t", tube, "--json", NULL), 0);
		snprintf(id, sizeof(id), "%" PRIu64, json_u64(out, "id"));
		snprintf(
		    lease, sizeof(lease), "%" PRIu64, json_u64(out, "lease"));
		p = strstr(out, "\"payload\":\"");
		assert_non_null(p);
		p += strlen("\"payload\":\"");
		e = strchr(p, '"');
		assert_non_null(e);
		drained(&f->acc, strtoull(id, NULL, 10), p, (size_t)(e - p));
		if (cli(f->s, NULL, "ack", id, "--lease", lease, NULL) != 0)
			fail_msg("ack %s: %s", id, err);
	}
}

static void
drain_with_beanstalk(struct fix *f)
{
	struct bsc b;
	char *got;

	assert_int_equal(bsc_open(&b, f->bs), 0);
	got = bsc_cmd(&b, "watch full\r\n");
	assert_string_equal(got, "WATCHING 2\r\n");
	free(got);
	got = bsc_cmd(&b, "ignore default\r\n");
	assert_string_equal(got, "WATCHING 1\r\n");
	free(got);
	for (int i = 0; i < BS_DRAIN; i++) {
		char cmd[64];
		uint64_t id;
		size_t len;
		const char *p;

		got = bsc_cmd(&b, "reserve-with-timeout 0\r\n");
		if (sscanf(got, "RESERVED %" SCNu64 " %zu", &id, &len) != 2)
			fail_msg("reserve: %s", got);
		p = strstr(got, "\r\n");
		assert_non_null(p);
		drained(&f->acc, id, p + 2, len);
		free(got);
		snprintf(cmd, sizeof(cmd), "delete %" PRIu64 "\r\n", id);
		got = bsc_cmd(&b, cmd);
		assert_string_equal(got, "DELETED\r\n");
		free(got);
	}
	bsc_close(&b);
}

/* The rest through libsluice: takes of up to TAKE_MAX, each acked. */
static void
drain_with_library(struct fix *f)
{
	struct sluice_take_opts o = { &tube, 1, 0, TAKE_MAX, 0 };
	int64_t deadline = it_mono_ms() + 120000;
	int rc = 0;

	for (int i = 0; i < FILL_LINES / TAKE_MAX + 10 && rc == 0; i++) {
		struct sluice_task *t = NULL;
		size_t n = 0;

		assert_true(it_mono_ms() < deadline);
		rc = sluice_take(f->c, &o, &t, &n);
		if (rc != 0)
			break;
		for (size_t k = 0; k < n; k++) {
			drained(
			    &f->acc, t[k].id, t[k].payload, t[k].payload_len);
			it_rc(f->c,
			    sluice_ack(f->c, t[k].id, t[k].lease, NULL, NULL),
			    0);
		}
		sluice_task_free(t);
	}
	it_rc(f->c, rc, SLUICE_ETIMEDOUT);
}

/* After the drain: puts are accepted again without anyone's help,
 * /health is 200 again, and a snapshot removed the segments the drain
 * emptied. */
static void
check_room_back(struct fix *f, uint64_t segments_full)
{
	int64_t deadline = it_mono_ms() + WAIT_MS;
	char payload[PAYLOAD + 1];
	struct sluice_put_opts o;
	uint64_t id = 0;
	char *body;
	int rc;

	sluice_put_opts_init(&o);
	o.tube = tube;
	payload_of(0, payload);
	for (int i = 0; i < WAIT_MS / 100; i++) {
		rc = sluice_put(f->c, &o, payload, PAYLOAD, &id, NULL);
		if (rc == 0)
			break;
		it_rc(f->c, rc, SLUICE_ENOSPC);
		it_sleep_ms(100);
	}
	it_rc(f->c, rc, 0);
	accept_id(&f->acc, id, 0);
	for (int i = 0; i < WAIT_MS / 100; i++) {
		body = it_http_get(f->http, "/metrics", 200);
		rc = it_metric(body, "sluice_log_refusing_puts") == 0 &&
		    it_metric(body, "sluice_log_segments") < segments_full &&
		    it_metric(body, "sluice_log_segments") <= 2;
		free(body);
		if (rc)
			break;
		assert_true(it_mono_ms() < deadline);
		it_sleep_ms(100);
	}
	assert_true(rc);
	body = it_http_get(f->http, "/health", 200);
	assert_string_equal(body, "ok\n");
	free(body);
	assert_true(it_log_count(f->s, "snapshot for room") >= 1);
	assert_true(it_log_count(f->s, "segments removed") >= 1);
}

static void
scenario(void **state, struct fix *f)
{
	char *argv[4];
	struct it_counts n;
	uint64_t segments_full;
	(void)state;

	start(f);
	fill_with_cli(f);
	fill_with_library(f);
	segments_full = it_node_kv(f->c, "log_segments");
	check_full(f);
	operate_while_full(f);
	drain_with_cli(f);
	drain_with_beanstalk(f);
	drain_with_library(f);
	n = it_counts(f->c, tube);
	assert_true(
	    n.ready == 0 && n.delayed == 0 && n.taken == 0 && n.buried == 0);
	assert_int_equal(count_done(&f->acc), f->acc.n); /* nothing lost */
	check_room_back(f, segments_full);

	sluice_close(f->c);
	assert_int_equal(t_srv_stop(f->s, SIGTERM), 0);
	argv[0] = (char *)t_bin("sluice-log");
	argv[1] = "verify";
	argv[2] = f->s->data;
	argv[3] = NULL;
	if (t_run(argv, NULL, out, sizeof(out), err, sizeof(err)) != 0)
		fail_msg("sluice-log verify: %s%s", out, err);
}

/* A data directory on a tmpfs of TMPFS_MB: the disk itself fills. */
static void
test_a_full_tmpfs_refuses_puts_only(void **state)
{
	static struct fix f;

	memset(&f, 0, sizeof(f));
	f.s = it_srv(*state, "tmpfs");
	if (!mount_tmpfs(f.s->data)) {
		fprintf(stderr, "skipped: needs root and a tmpfs\n");
		skip();
	}
	scenario(state, &f);
}

/* A data directory whose log may take 6 MiB (--max-log-bytes). */
static void
test_max_log_bytes_refuses_puts_only(void **state)
{
	static struct fix f;

	memset(&f, 0, sizeof(f));
	f.s = it_srv(*state, "capped");
	f.s->args[0] = "--max-log-bytes";
	f.s->args[1] = "6M";
	scenario(state, &f);
}

/* Retries spend the pool, then stop; finishing work does not. */
static void
test_retries_stop_when_the_pool_is_spent(void **state)
{
	static struct fix f;
	struct sluice_take_opts wait = { &tube, 1, 300, 1, 0 };
	struct sluice_task *held[2], *t, *p;
	char error[1001];
	int64_t deadline;
	size_t n;
	long cycles = 0;
	int rc = 0;

	memset(&f, 0, sizeof(f));
	f.s = it_srv(*state, "churn");
	f.s->args[0] = "--max-log-bytes";
	f.s->args[1] = "4M";
	start(&f);
	fill_with_library(&f);
	assert_true(f.acc.n > 200);
	held[0] = take_one(&f);
	held[1] = take_one(&f);

	/* take, release, again: every task once (first takes), then
	 * retakes from the pool until it is spent */
	deadline = it_mono_ms() + 120000;
	while (cycles < 100000 && it_mono_ms() < deadline) {
		struct sluice_take_opts o = { &tube, 1, 0, 1, 0 };

		t = NULL;
		rc = sluice_take(f.c, &o, &t, &n);
		if (rc != 0)
			break;
		it_rc(
		    f.c, sluice_release(f.c, t->id, t->lease, 0, -1, NULL), 0);
		sluice_task_free(t);
		cycles++;
	}
	it_rc(f.c, rc, SLUICE_ENOSPC);
	assert_true(cycles > (long)f.acc.n);
	assert_non_null(strstr(sluice_errmsg(f.c), "log full"));
	/* a take that may wait waits for room, as for a task */
	it_rc(f.c, sluice_take(f.c, &wait, &t, &n), SLUICE_ETIMEDOUT);
	it_rc(f.c, sluice_touch(f.c, held[1]->id, held[1]->lease, NULL),
	    SLUICE_ENOSPC);

	/* what finishes work goes on: a fail (its text cut to what the
	 * reserve holds), an ack */
	memset(error, 'e', sizeof(error) - 1);
	error[sizeof(error) - 1] = '\0';
	it_rc(f.c,
	    sluice_fail(f.c, held[0]->id, held[0]->lease, error, 0, NULL), 0);
	it_rc(f.c, sluice_peek(f.c, held[0]->id, &p), 0);
	assert_non_null(p->last_error);
	assert_int_equal(strlen(p->last_error), 256);
	sluice_task_free(p);
	it_rc(f.c, sluice_ack(f.c, held[1]->id, held[1]->lease, NULL, NULL), 0);
	drained(&f.acc, held[1]->id, held[1]->payload, held[1]->payload_len);
	sluice_task_free(held[0]);
	sluice_task_free(held[1]);

	/* deletes give reserve back: retakes come back, and the rest
	 * drains */
	for (int i = 0; i < 1000; i++) {
		it_rc(f.c, sluice_peek_next(f.c, tube, SLUICE_READY, &p), 0);
		it_rc(f.c, sluice_delete(f.c, p->id), 0);
		drained(&f.acc, p->id, p->payload, p->payload_len);
		sluice_task_free(p);
		t = NULL;
		rc = sluice_take(f.c, &wait, &t, &n);
		if (rc == 0)
			break;
		it_rc(f.c, rc, SLUICE_ETIMEDOUT);
	}
	it_rc(f.c, rc, 0);
	drained(&f.acc, t->id, t->payload, t->payload_len);
	it_rc(f.c, sluice_ack(f.c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	drain_with_library(&f);
	assert_int_equal(count_done(&f.acc), f.acc.n);
	check_room_back(&f, it_node_kv(f.c, "log_segments") + 1);
	sluice_close(f.c);
	assert_int_equal(t_srv_stop(f.s, SIGTERM), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_a_full_tmpfs_refuses_puts_only, it_setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_max_log_bytes_refuses_puts_only, it_setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_retries_stop_when_the_pool_is_spent, it_setup,
		    teardown),
	};

	signal(SIGPIPE, SIG_IGN); /* the CLI stops reading its input */
	return cmocka_run_group_tests_name("diskfull", tests, NULL, NULL);
}
