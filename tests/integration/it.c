/* it - see it.h. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "it.h"

static struct t_srv srvs[IT_SRV_MAX];
static int nsrvs;
static pid_t pids[IT_PIDS_MAX];
static int npids;

int
it_setup(void **state)
{
	/* A write to a child or a socket that went away is an error to
	 * look at (EPIPE), not the end of the test process. */
	signal(SIGPIPE, SIG_IGN);
	nsrvs = 0;
	npids = 0;
	return t_tmpdir_setup(state);
}

int
it_teardown(void **state)
{
	for (int i = 0; i < npids; i++) {
		int status;

		if (pids[i] > 0 && waitpid(pids[i], &status, WNOHANG) == 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], &status, 0);
		}
	}
	for (int i = 0; i < nsrvs; i++)
		if (srvs[i].pid > 0)
			t_srv_stop(&srvs[i], SIGKILL);
	nsrvs = 0;
	npids = 0;
	return t_tmpdir_teardown(state);
}

bool
it_sanitized(void)
{
	const char *s = getenv("SLUICE_SANITIZED");

	return s != NULL && strcmp(s, "1") == 0;
}

long
it_scale(long n, long div, long min)
{
	long v;

	if (!it_sanitized())
		return n;
	v = n / div;
	return v < min ? min : v;
}

static int64_t
clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
it_mono_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

int64_t
it_wall_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}

void
it_sleep_ms(int64_t ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

struct t_srv *
it_srv(void *state, const char *name)
{
	struct t_dir *d = state;
	struct t_srv *s;

	assert_true(nsrvs < IT_SRV_MAX);
	s = &srvs[nsrvs++];
	t_srv_init(s, d->path, name);
	return s;
}

void
it_start(struct t_srv *s)
{
	assert_int_equal(t_srv_start(s), 0);
}

void
it_crash_restart(struct t_srv *s, struct sluice_client **c)
{
	int status = t_srv_stop(s, SIGKILL);

	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	if (c != NULL) {
		sluice_close(*c);
		*c = NULL;
	}
	it_start(s);
	if (c != NULL)
		*c = it_client(s);
}

void
it_track_pid(pid_t pid)
{
	assert_true(npids < IT_PIDS_MAX);
	pids[npids++] = pid;
}

struct sluice_client *
it_client_url(const char *url)
{
	struct sluice_client *c;

	if (sluice_open(url, &c) != 0)
		return NULL;
	sluice_set_timeout(c, (int)(IT_CALL_MS * (it_sanitized() ? 3 : 1)));
	sluice_set_connect_timeout(
	    c, (int)(IT_CONNECT_MS * (it_sanitized() ? 2 : 1)));
	return c;
}

struct sluice_client *
it_client(const struct t_srv *s)
{
	struct sluice_client *c = it_client_url(s->url);

	assert_non_null(c);
	return c;
}

void
it_rc_at(struct sluice_client *c, int rc, int want, const char *file, int line)
{
	if (rc == want)
		return;
	print_error("%s:%d: got %d (%s), want %d (%s); message: %s\n", file,
	    line, rc, sluice_strerror(rc), want, sluice_strerror(want),
	    c != NULL ? sluice_errmsg(c) : "");
	_fail(file, line);
}

uint64_t
it_put_o(struct sluice_client *c, const struct sluice_put_opts *o,
    const char *payload)
{
	uint64_t id = 0;
	int created = -1;

	it_rc(c, sluice_put(c, o, payload, strlen(payload), &id, &created), 0);
	assert_true(id > 0);
	return id;
}

uint64_t
it_put(struct sluice_client *c, const char *tube, const char *payload)
{
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = tube;
	return it_put_o(c, &o, payload);
}

struct sluice_task *
it_take(struct sluice_client *c, const char *tube, uint64_t wait_ms, int detach)
{
	const char *tubes[1] = { tube };
	struct sluice_take_opts o = { tubes, 1, wait_ms, 1, detach };
	struct sluice_task *t = NULL;
	size_t n = 0;

	it_rc(c, sluice_take(c, &o, &t, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(t->state, SLUICE_TAKEN);
	return t;
}

struct sluice_task *
it_peek(struct sluice_client *c, uint64_t id)
{
	struct sluice_task *t = NULL;
	int rc = sluice_peek(c, id, &t);

	if (rc == SLUICE_ENOTFOUND)
		return NULL;
	it_rc(c, rc, 0);
	return t;
}

int
it_state(struct sluice_client *c, uint64_t id)
{
	struct sluice_task *t = it_peek(c, id);
	int st = t != NULL ? t->state : 0;

	sluice_task_free(t);
	return st;
}

int64_t
it_wait_state(
    struct sluice_client *c, uint64_t id, int state, int64_t timeout_ms)
{
	int64_t t0 = it_mono_ms(), now;

	for (int i = 0; i < 1000000; i++) {
		now = it_mono_ms();
		if (it_state(c, id) == state)
			return now - t0;
		if (now - t0 > timeout_ms)
			break;
		it_sleep_ms(5);
	}
	return -1;
}

struct it_counts
it_counts(struct sluice_client *c, const char *tube)
{
	struct sluice_stats *st = NULL;
	const struct sluice_tube_stats *ts;
	struct it_counts k = { 0, 0, 0, 0 };
	int rc = sluice_stats(c, tube, &st);

	if (rc == SLUICE_ENOTFOUND && tube != NULL)
		return k; /* a tube the server never had holds nothing */
	it_rc(c, rc, 0);
	if (tube != NULL) {
		assert_int_equal(st->ntubes, 1);
		assert_string_equal(st->tubes[0].name, tube);
		ts = &st->tubes[0];
	} else {
		ts = &st->totals;
	}
	k.ready = ts->ready;
	k.delayed = ts->delayed;
	k.taken = ts->taken;
	k.buried = ts->buried;
	sluice_stats_free(st);
	return k;
}

uint64_t
it_node_kv(struct sluice_client *c, const char *name)
{
	struct sluice_stats *st = NULL;
	uint64_t v = 0;

	it_rc(c, sluice_stats(c, NULL, &st), 0);
	assert_int_equal(sluice_kv_get(st->kv, st->nkv, name, &v), 0);
	sluice_stats_free(st);
	return v;
}

void
it_errs_init(struct it_errs *e)
{
	pthread_mutex_init(&e->mtx, NULL);
	e->n = 0;
	e->first[0] = '\0';
}

void
it_errs_add(struct it_errs *e, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&e->mtx);
	if (e->n++ == 0) {
		va_start(ap, fmt);
		vsnprintf(e->first, sizeof(e->first), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&e->mtx);
}

void
it_errs_check(struct it_errs *e)
{
	pthread_mutex_lock(&e->mtx);
	if (e->n > 0)
		print_error(
		    "%lu failures in threads; the first: %s\n", e->n, e->first);
	pthread_mutex_unlock(&e->mtx);
	assert_int_equal(e->n, 0);
}

int
it_log_count(const struct t_srv *s, const char *needle)
{
	char line[4096];
	FILE *f = fopen(s->log, "r");
	int n = 0;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, needle) != NULL)
			n++;
	fclose(f);
	return n;
}

void
it_cli_argv(struct it_argv *a, const char *url, va_list ap)
{
	int argc = 0;

	snprintf(a->bin, sizeof(a->bin), "%s", t_bin("sluice"));
	a->argv[argc++] = a->bin;
	a->argv[argc++] = "-s";
	a->argv[argc++] = (char *)url;
	for (char *s;
	     argc < IT_CLI_ARGS - 1 && (s = va_arg(ap, char *)) != NULL;)
		a->argv[argc++] = s;
	a->argv[argc] = NULL;
}

char it_out[IT_OUT_MAX], it_err[IT_OUT_MAX];

int
it_sluice(const struct t_srv *s, ...)
{
	va_list ap;
	int rc;

	va_start(ap, s);
	rc = it_cli_v(
	    s->url, NULL, it_out, sizeof(it_out), it_err, sizeof(it_err), ap);
	va_end(ap);
	return rc;
}

int
it_cli_v(const char *url, const char *in, char *out, size_t outcap, char *err,
    size_t errcap, va_list ap)
{
	struct it_argv a;

	it_cli_argv(&a, url, ap);
	return t_run(a.argv, in, out, outcap, err, errcap);
}

int
it_cli(const char *url, const char *in, char *out, size_t outcap, char *err,
    size_t errcap, ...)
{
	va_list ap;
	int rc;

	va_start(ap, errcap);
	rc = it_cli_v(url, in, out, outcap, err, errcap, ap);
	va_end(ap);
	return rc;
}

int
it_log_tool(char *out, size_t outcap, ...)
{
	char bin[1024], *argv[16];
	int argc = 0;
	va_list ap;

	snprintf(bin, sizeof(bin), "%s", t_bin("sluice-log"));
	argv[argc++] = bin;
	va_start(ap, outcap);
	for (char *s; argc < 15 && (s = va_arg(ap, char *)) != NULL;)
		argv[argc++] = s;
	va_end(ap);
	argv[argc] = NULL;
	return t_run(argv, NULL, out, outcap, NULL, 0);
}

void
it_verify_startable(const char *data)
{
	static char out[64 << 10];
	int rc = it_log_tool(out, sizeof(out), "verify", data, NULL);

	if (rc != 0 && rc != 3) {
		fprintf(stderr,
		    "sluice-log verify %s: exit %d, but sluiced starts on it "
		    "(or is about to):\n%s\n",
		    data, rc, out);
		fail();
	}
}
