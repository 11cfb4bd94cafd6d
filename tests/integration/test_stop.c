/* Graceful stop: SIGTERM while clients are putting, five times. The
 * server finishes what is under way, exits 0 and logs one line; after a
 * restart every put it answered with an id is there. Requests that arrive
 * during the stop are refused (SLUICE_ESHUTDOWN) or find no server
 * (SLUICE_ECONN): never a success that is then lost. A waiting take is
 * answered at the stop, and the process exits soon after its "stopped"
 * line, with clients idle on every face. */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "it.h"
#include "it_sp.h"

enum {
	ROUNDS = 5,
	PUTTERS = 8,
	PUT_MAX = 50000, /* per thread and round, a bound only */
};

struct putter {
	pthread_t th;
	const char *url;
	struct it_errs *errs;
	uint64_t *ids;
	size_t n;
	int last_rc;
	bool keyed; /* half the threads put with keys (retried once) */
	int round, index;
};

static void *
putter_run(void *arg)
{
	struct putter *p = arg;
	struct sluice_client *c = it_client_url(p->url);
	struct sluice_put_opts o;
	char key[64];

	if (c == NULL) {
		it_errs_add(p->errs, "cannot open a client");
		return NULL;
	}
	sluice_set_connect_timeout(c, 300);
	sluice_put_opts_init(&o);
	o.tube = "stop";
	while (p->n < PUT_MAX) {
		uint64_t id;
		int rc;

		if (p->keyed) {
			snprintf(key, sizeof(key), "k%d-%d-%zu", p->round,
			    p->index, p->n);
			o.key = key;
		}
		rc = sluice_put(c, &o, "payload", 7, &id, NULL);
		if (rc == 0) {
			p->ids[p->n++] = id;
			continue;
		}
		p->last_rc = rc;
		if (rc != SLUICE_ESHUTDOWN && rc != SLUICE_ECONN)
			it_errs_add(p->errs, "put: %s (%s)",
			    sluice_strerror(rc), sluice_errmsg(c));
		break;
	}
	sluice_close(c);
	return NULL;
}

/* Lines of the log from byte `from` on. */
static int
log_lines_from(const struct t_srv *s, long from, char *out, size_t cap)
{
	FILE *f = fopen(s->log, "r");
	size_t len;
	int lines = 0;

	assert_non_null(f);
	assert_int_equal(fseek(f, from, SEEK_SET), 0);
	len = fread(out, 1, cap - 1, f);
	out[len] = '\0';
	fclose(f);
	for (size_t i = 0; i < len; i++)
		lines += out[i] == '\n';
	return lines;
}

/* Several rounds: putters start, the server gets SIGTERM at a random
 * moment, must exit 0 with one line, and is started again for the next
 * round; at the end every answered put of every round is there. */
static void
test_sigterm_while_putting(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct putter p[ROUNDS][PUTTERS];
	uint64_t seed = t_seed(0x570b);
	struct it_errs errs;
	struct sluice_client *c;
	char tail[4096];
	size_t all = 0;

	it_errs_init(&errs);
	memset(p, 0, sizeof(p));
	for (int r = 0; r < ROUNDS; r++) {
		size_t total = 0;
		long log_size;
		int status, refused = 0;

		it_start(s);
		for (int i = 0; i < PUTTERS; i++) {
			struct putter *q = &p[r][i];

			q->url = s->url;
			q->errs = &errs;
			q->keyed = i % 2 == 1;
			q->round = r;
			q->index = i;
			q->ids = calloc(PUT_MAX, sizeof(uint64_t));
			assert_non_null(q->ids);
			assert_int_equal(
			    pthread_create(&q->th, NULL, putter_run, q), 0);
		}
		it_sleep_ms(300 + (int64_t)t_below(&seed, 400));
		log_size = t_file_size(s->log);
		status = t_srv_stop(s, SIGTERM);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		for (int i = 0; i < PUTTERS; i++) {
			assert_int_equal(pthread_join(p[r][i].th, NULL), 0);
			total += p[r][i].n;
			refused += p[r][i].last_rc == SLUICE_ESHUTDOWN;
		}
		it_errs_check(&errs);
		print_message("round %d: %zu puts answered before the stop; "
		              "%d threads were refused with ESHUTDOWN, the "
		              "others found no server\n",
		    r, total, refused);
		assert_true(total > 0);
		all += total;

		/* one line at stop, and it says so */
		assert_int_equal(
		    log_lines_from(s, log_size, tail, sizeof(tail)), 1);
		assert_non_null(strstr(tail, "stopped"));
		assert_null(strstr(tail, " err "));
		assert_null(strstr(tail, " warn "));
	}
	print_message("at stop: %s", tail);

	/* every answered put is there after the restart */
	it_start(s);
	c = it_client(s);
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < PUTTERS; i++)
			for (size_t k = 0; k < p[r][i].n; k++)
				if (it_state(c, p[r][i].ids[k]) != SLUICE_READY)
					fail_msg("task %llu was put before a "
					         "stop but is not there",
					    (unsigned long long)p[r][i].ids[k]);
	assert_true(it_counts(c, "stop").ready >= all);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < PUTTERS; i++)
			free(p[r][i].ids);
}

struct killer {
	pthread_t th;
	pid_t pid;
};

static void *
killer_run(void *arg)
{
	struct killer *k = arg;

	it_sleep_ms(300);
	kill(k->pid, SIGTERM);
	return NULL;
}

/* A take blocked in a wait is answered (with nothing) at the stop, at
 * once, not at the end of its wait. */
static void
test_sigterm_answers_waiting_takes(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	const char *tubes[] = { "empty" };
	struct sluice_take_opts o = { tubes, 1, 20000, 1, 0 };
	struct sluice_client *c;
	struct sluice_task *t;
	struct killer killer;
	int64_t t0;
	size_t n;
	int rc, status;

	it_start(s);
	c = it_client(s);
	(void)it_put(c, "other", "x");
	/* SIGTERM from another thread 300 ms after the take starts */
	killer.pid = s->pid;
	assert_int_equal(
	    pthread_create(&killer.th, NULL, killer_run, &killer), 0);
	t0 = it_mono_ms();
	rc = sluice_take(c, &o, &t, &n);
	assert_int_equal(pthread_join(killer.th, NULL), 0);
	print_message("the waiting take ended after %lld ms: %s\n",
	    (long long)(it_mono_ms() - t0), sluice_strerror(rc));
	assert_true(rc == SLUICE_ETIMEDOUT || rc == SLUICE_ECONN);
	assert_true(it_mono_ms() - t0 < 5000);
	status = t_srv_stop(s, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	sluice_close(c);
}

/* The process ends soon after its "stopped" line, with a client idle on
 * each face (a session, an HTTP keep-alive connection, a beanstalk
 * connection): nothing waits out a timer at the exit. */
static void
test_sigterm_exits_at_once(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	char http[32], bs[32];
	struct sluice_client *c;
	int64_t t0, ms;
	int status, hfd, bfd;

	snprintf(http, sizeof(http), "127.0.0.1:%d", t_free_port());
	snprintf(bs, sizeof(bs), "127.0.0.1:%d", t_free_port());
	s->args[0] = "--http";
	s->args[1] = http;
	s->args[2] = "--beanstalk";
	s->args[3] = bs;
	s->args[4] = NULL;
	it_start(s);
	c = it_client(s);
	(void)it_put(c, "idle", "x");
	hfd = it_sp_dial(atoi(strchr(http, ':') + 1));
	bfd = it_sp_dial(atoi(strchr(bs, ':') + 1));
	assert_true(hfd >= 0 && bfd >= 0);
	it_sleep_ms(200); /* accepted and idle, not in the middle of accept */
	t0 = it_mono_ms();
	status = t_srv_stop(s, SIGTERM);
	ms = it_mono_ms() - t0;
	print_message("sluiced exited %lld ms after SIGTERM\n", (long long)ms);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true(ms < (it_sanitized() ? 3000 : 1000));
	close(hfd);
	close(bfd);
	sluice_close(c);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_sigterm_while_putting),
		T(test_sigterm_answers_waiting_takes),
		T(test_sigterm_exits_at_once),
	};
#undef T
	return cmocka_run_group_tests_name("stop", tests, NULL, NULL);
}
