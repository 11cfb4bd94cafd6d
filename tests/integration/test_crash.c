/* Crash under load: client threads put, take and ack while sluiced is
 * killed with SIGKILL at a random moment; it is restarted on the same
 * data, five rounds. Only replies count: every put answered with an id
 * must survive every later crash unless it was acked; every ack answered
 * with success must never come back. A request under way at the kill has
 * an unknown outcome: a put without a reply is not counted, and a task
 * whose ack got no reply may or may not be there. Puts carry no key, so
 * the library never retries them behind our back.
 *
 * Workers ack one task at a time, one at a time with a result text, or
 * all they took in one batch (sluice_ack_batch): an item answered rc 0
 * counts as an answered ack, the items of a batch without a reply are
 * unknown. The server keeps finished tasks (--keep-done 1h), so after
 * each restart every task whose ack was answered is done or gone, never
 * live (ready, delayed, taken, buried), and a sample of those acked with
 * a result, when done, carry their own result text.
 *
 * A third kind of client changes a tube's settings all along (its ttr
 * grows by one each time): the last change answered must be there after
 * every crash, or a later one. A fourth, in turns, upserts keys of tube
 * "rows" (put with key, replace and if_newer: a version one more each
 * time per key) and raises the priority of tasks of tube "upd" by one
 * (sluice_update); nothing takes from either tube. After each restart
 * the task of each key has the version last answered as stored (created
 * or replaced), or a later one, and that version's payload; each task of
 * "upd" has the priority last answered, or a higher one.
 *
 * Every other life of the server writes up to three batches at once
 * (--wal-inflight 3, batches ended by pads): a kill then lands with
 * several writes in flight, and the next start reads a log written both
 * ways.
 *
 * Small snapshot thresholds make the server snapshot during the load, so
 * kills also land during snapshots; a separate test kills the server
 * while a large snapshot is being written and restarts it at once. */
#include <dirent.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "it.h"

enum {
	ROUNDS = 5,
	PUTTERS = 2,
	WORKERS = 3,
	SETTER = PUTTERS + WORKERS, /* sets a tube */
	VERSIONER = SETTER + 1,     /* upserts keys, updates priorities */
	THREADS = VERSIONER + 1,
	TTR_BASE = 10000,
	KEYS = 8, /* keys of tube "rows" */
	UPD = 8,  /* tasks of tube "upd" */
	PRI_BASE = 1000,
	RESULT_SAMPLE = 32, /* acks with a result checked after a restart */
	KILL_MIN_MS = 150,
	KILL_SPAN_MS = 600,
};

struct ids {
	uint64_t *v;
	size_t n, cap;
};

static void
ids_add(struct ids *s, uint64_t id)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint64_t *v = realloc(s->v, cap * sizeof(*v));

		if (v == NULL)
			abort();
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = id;
}

static void
ids_merge(struct ids *dst, const struct ids *src)
{
	for (size_t i = 0; i < src->n; i++)
		ids_add(dst, src->v[i]);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool
ids_has(const struct ids *s, uint64_t id)
{
	return bsearch(&id, s->v, s->n, sizeof(id), cmp_u64) != NULL;
}

struct round {
	const char *url;
	atomic_bool stop;
	atomic_size_t answered; /* puts answered this round */
	struct it_errs *errs;
};

/* A value that only grows: the last one sent, and the last one answered
 * as applied. */
struct counter {
	uint64_t sent, ok;
};

/* The versioner's values, kept across rounds: per key its version, per
 * task of "upd" (by id) its priority. */
struct versions {
	struct counter ver[KEYS], pri[UPD];
	uint64_t upd[UPD];
};

struct client_th {
	pthread_t th;
	struct round *r;
	uint64_t seed;
	struct ids put_ok, ack_ok, ack_unknown;
	struct ids result_ok; /* answered acks that carried a result */
	size_t batched;       /* answered acks of a batch */
	uint64_t ttr; /* the setter: the last ttr it set and saw answered */
	struct versions *v; /* the versioner's */
};

/* The outcome of a request the kill interrupted is unknown; anything
 * else is a failure. */
static bool
lost(int rc)
{
	return rc == SLUICE_ECONN || rc == SLUICE_ETIMEDOUT ||
	    rc == SLUICE_ESHUTDOWN;
}

/* Neither gone nor done. */
static bool
live(int state)
{
	return state != 0 && state != SLUICE_DONE;
}

static struct sluice_client *
th_client(struct round *r)
{
	struct sluice_client *c = it_client_url(r->url);

	if (c != NULL) {
		sluice_set_connect_timeout(c, 300);
		sluice_set_timeout(c, it_sanitized() ? 6000 : 3000);
	}
	return c;
}

static void *
putter_run(void *arg)
{
	struct client_th *t = arg;
	struct sluice_client *c = th_client(t->r);
	struct sluice_batch_item items[8];
	char payload[64];

	if (c == NULL)
		return NULL;
	memset(payload, 'p', sizeof(payload));
	while (!atomic_load(&t->r->stop)) {
		uint64_t id;
		int rc;

		if (t_below(&t->seed, 4) != 0) {
			size_t len = (size_t)t_below(&t->seed, sizeof(payload));

			rc = sluice_put(c, NULL, payload, len, &id, NULL);
			if (rc == 0) {
				ids_add(&t->put_ok, id);
				atomic_fetch_add(&t->r->answered, 1);
			}
		} else {
			for (int i = 0; i < 8; i++) {
				sluice_put_opts_init(&items[i].opts);
				items[i].payload = payload;
				items[i].len = (size_t)i;
			}
			rc = sluice_put_batch(c, items, 8);
			for (int i = 0; rc == 0 && i < 8; i++) {
				if (items[i].rc != 0)
					it_errs_add(t->r->errs,
					    "batch item: %s",
					    sluice_strerror(items[i].rc));
				else
					ids_add(&t->put_ok, items[i].id);
				atomic_fetch_add(&t->r->answered, 1);
			}
		}
		if (rc != 0 && !lost(rc))
			it_errs_add(t->r->errs, "put: %s (%s)",
			    sluice_strerror(rc), sluice_errmsg(c));
	}
	sluice_close(c);
	return NULL;
}

enum { TAKE_MAX = 4 };

/* The result text an ack of task `id` carries. */
static void
result_text(char *buf, size_t cap, uint64_t id)
{
	snprintf(buf, cap, "result of %llu", (unsigned long long)id);
}

/* Files an ack's outcome: answered, or unknown when the kill cut it off
 * (anything else is a failure too). */
static void
ack_outcome(struct client_th *t, uint64_t id, int rc, const char *errmsg)
{
	if (rc == 0) {
		ids_add(&t->ack_ok, id);
		return;
	}
	ids_add(&t->ack_unknown, id);
	if (!lost(rc))
		it_errs_add(t->r->errs, "ack of %llu: %s (%s)",
		    (unsigned long long)id, sluice_strerror(rc), errmsg);
}

/* Acks one task, with its result text or without. */
static void
ack_one(struct client_th *t, struct sluice_client *c,
    const struct sluice_task *task, bool with_result)
{
	struct sluice_ack_opts o = { NULL, NULL };
	char result[64];
	int rc;

	if (with_result) {
		result_text(result, sizeof(result), task->id);
		o.result = result;
	}
	rc = sluice_ack_opts(c, task->id, task->lease, &o, NULL);
	ack_outcome(t, task->id, rc, sluice_errmsg(c));
	if (rc == 0 && with_result)
		ids_add(&t->result_ok, task->id);
}

/* Acks the `n` leases in one batch: each item answered on its own, or
 * all unknown when the request got no reply. */
static void
ack_batch(struct client_th *t, struct sluice_client *c,
    const struct sluice_lease *items, size_t n)
{
	struct sluice_result res[TAKE_MAX];
	int rc;

	if (n == 0)
		return;
	rc = sluice_ack_batch(c, items, n, res);
	for (size_t i = 0; i < n; i++) {
		ack_outcome(t, items[i].id, rc == 0 ? res[i].rc : rc,
		    rc == 0 ? res[i].errmsg : sluice_errmsg(c));
		t->batched += rc == 0 && res[i].rc == 0;
	}
}

/* Takes up to TAKE_MAX tasks and acks most of them: one by one, one by
 * one with a result, or in one batch. */
static void *
worker_run(void *arg)
{
	struct client_th *t = arg;
	struct sluice_client *c = th_client(t->r);
	struct sluice_take_opts o = { NULL, 0, 50, TAKE_MAX, 0 };

	if (c == NULL)
		return NULL;
	while (!atomic_load(&t->r->stop)) {
		struct sluice_task *tasks = NULL;
		struct sluice_lease batch[TAKE_MAX];
		size_t n = 0, nb = 0;
		uint64_t how = t_below(&t->seed, 3);
		int rc;

		o.detach = (int)t_below(&t->seed, 2);
		rc = sluice_take(c, &o, &tasks, &n);
		if (rc == SLUICE_ETIMEDOUT || lost(rc))
			continue;
		if (rc != 0) {
			it_errs_add(t->r->errs, "take: %s (%s)",
			    sluice_strerror(rc), sluice_errmsg(c));
			continue;
		}
		for (size_t i = 0; i < n && i < TAKE_MAX; i++) {
			/* leave some taken: they must come back */
			if (t_below(&t->seed, 8) == 0)
				continue;
			if (how == 2)
				batch[nb++] =
				    (struct sluice_lease) { tasks[i].id,
					    tasks[i].lease };
			else
				ack_one(t, c, &tasks[i], how == 1);
		}
		ack_batch(t, c, batch, nb);
		sluice_task_free(tasks);
	}
	sluice_close(c);
	return NULL;
}

/* Sets tube "cfg"'s ttr to one more each time, from th->ttr on. */
static void *
setter_run(void *arg)
{
	struct client_th *t = arg;
	struct sluice_client *c = th_client(t->r);
	struct sluice_tube_conf conf;

	if (c == NULL)
		return NULL;
	memset(&conf, 0, sizeof(conf));
	conf.set = SLUICE_TS_TTR;
	conf.ttr_ms = t->ttr;
	while (!atomic_load(&t->r->stop)) {
		int rc;

		conf.ttr_ms++;
		rc = sluice_tube_set(c, "cfg", &conf, 0, NULL);
		if (rc == 0)
			t->ttr = conf.ttr_ms;
		else if (!lost(rc))
			it_errs_add(t->r->errs, "tube set: %s (%s)",
			    sluice_strerror(rc), sluice_errmsg(c));
		it_sleep_ms(2);
	}
	sluice_close(c);
	return NULL;
}

static void
key_name(char *buf, size_t cap, int k)
{
	snprintf(buf, cap, "row-%d", k);
}

/* A versioned upsert of key k, one version more than the last sent. */
static void
upsert(struct client_th *t, struct sluice_client *c, int k)
{
	struct counter *ver = &t->v->ver[k];
	struct sluice_put_result res;
	struct sluice_put_opts o;
	char key[16], payload[32];
	int rc;

	key_name(key, sizeof(key), k);
	sluice_put_opts_init(&o);
	o.tube = "rows";
	o.key = key;
	o.replace = 1;
	o.if_newer = ++ver->sent;
	snprintf(
	    payload, sizeof(payload), "v%llu", (unsigned long long)o.if_newer);
	rc = sluice_put_ex(c, &o, payload, strlen(payload), &res);
	/* stale_version only answers the library's retry of a put that
	 * went through: its version is stored, but not known to be */
	if (rc == 0 && (res.created || res.replaced) && !res.stale_version)
		ver->ok = o.if_newer;
	else if (rc != 0 && !lost(rc))
		it_errs_add(t->r->errs, "upsert %s: %s (%s)", key,
		    sluice_strerror(rc), sluice_errmsg(c));
}

/* Raises the priority of "upd"'s task j by one. */
static void
raise_priority(struct client_th *t, struct sluice_client *c, int j)
{
	struct counter *pri = &t->v->pri[j];
	struct sluice_update_opts o;
	int rc;

	sluice_update_opts_init(&o);
	o.priority = (int64_t)++pri->sent;
	rc = sluice_update(c, t->v->upd[j], &o, NULL);
	if (rc == 0)
		pri->ok = pri->sent;
	else if (!lost(rc))
		it_errs_add(t->r->errs, "update of %llu: %s (%s)",
		    (unsigned long long)t->v->upd[j], sluice_strerror(rc),
		    sluice_errmsg(c));
}

/* Upserts a key and raises a priority, in turns, key after key. */
static void *
versioner_run(void *arg)
{
	struct client_th *t = arg;
	struct sluice_client *c = th_client(t->r);

	if (c == NULL)
		return NULL;
	for (int i = 0; !atomic_load(&t->r->stop); i = (i + 1) % KEYS) {
		upsert(t, c, i);
		raise_priority(t, c, i % UPD);
		it_sleep_ms(1);
	}
	sluice_close(c);
	return NULL;
}

/* After a restart: "cfg" has the ttr last answered, or a later one. */
static uint64_t
check_settings(struct sluice_client *c, uint64_t answered)
{
	struct sluice_tube_conf conf;

	it_rc(c, sluice_tube_show(c, "cfg", &conf), 0);
	if (answered > TTR_BASE && conf.ttr_ms < answered)
		fail_msg("tube cfg's ttr %llu was answered, but it is %llu "
		         "after the crash",
		    (unsigned long long)answered,
		    (unsigned long long)conf.ttr_ms);
	return conf.set ? conf.ttr_ms : TTR_BASE;
}

/* After a restart: each key's task has the version last answered as
 * stored, or a later one, and that version's payload; each task of "upd"
 * the priority last answered, or a higher one. */
static void
check_versions(struct sluice_client *c, const struct versions *v)
{
	for (int k = 0; k < KEYS; k++) {
		struct sluice_task *task = NULL;
		char key[16], want[32];
		int rc;

		key_name(key, sizeof(key), k);
		rc = sluice_peek_key(c, "rows", key, &task);
		if (rc == SLUICE_ENOTFOUND && v->ver[k].ok == 0)
			continue; /* never answered: may not exist */
		it_rc(c, rc, 0);
		if (task->version < v->ver[k].ok)
			fail_msg("%s's version %llu was answered, but it is "
			         "%llu after the crash",
			    key, (unsigned long long)v->ver[k].ok,
			    (unsigned long long)task->version);
		snprintf(want, sizeof(want), "v%llu",
		    (unsigned long long)task->version);
		assert_string_equal(task->payload, want);
		sluice_task_free(task);
	}
	for (int j = 0; j < UPD; j++) {
		struct sluice_task *task = it_peek(c, v->upd[j]);

		assert_non_null(task);
		if (task->priority < v->pri[j].ok)
			fail_msg("task %llu's priority %llu was answered, but "
			         "it is %u after the crash",
			    (unsigned long long)v->upd[j],
			    (unsigned long long)v->pri[j].ok, task->priority);
		sluice_task_free(task);
	}
}

/* After a restart: no task whose ack was answered is live; of a sample
 * of those acked with a result, each one done carries its own text (and
 * with finished tasks kept for an hour, some are done). */
static void
check_acked(struct sluice_client *c, const struct ids *ack_ok,
    const struct ids *result_ok, uint64_t *seed)
{
	size_t done = 0;

	for (size_t i = 0; i < ack_ok->n; i++) {
		int st = it_state(c, ack_ok->v[i]);

		if (live(st))
			fail_msg("task %llu was acked but is %s",
			    (unsigned long long)ack_ok->v[i],
			    sluice_state_name(st));
	}
	for (int i = 0; i < RESULT_SAMPLE && result_ok->n > 0; i++) {
		uint64_t id = result_ok->v[t_below(seed, result_ok->n)];
		struct sluice_task *task = it_peek(c, id);
		char want[64];

		if (task == NULL)
			continue;
		assert_int_equal(task->state, SLUICE_DONE);
		result_text(want, sizeof(want), id);
		assert_non_null(task->result);
		assert_string_equal(task->result, want);
		done++;
		sluice_task_free(task);
	}
	assert_true(result_ok->n == 0 || done > 0);
}

/* The checks after each restart; the ttr "cfg" has now. */
static uint64_t
check_restart(const struct t_srv *s, uint64_t ttr, const struct versions *v,
    const struct ids *ack_ok, const struct ids *result_ok, uint64_t *seed)
{
	struct sluice_client *c = it_client(s);

	ttr = check_settings(c, ttr);
	check_versions(c, v);
	check_acked(c, ack_ok, result_ok, seed);
	sluice_close(c);
	return ttr;
}

/* The tasks of "upd", at PRI_BASE, and their counters. */
static void
put_upd(const struct t_srv *s, struct versions *v)
{
	struct sluice_client *c = it_client(s);
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = "upd";
	o.priority = PRI_BASE;
	for (int j = 0; j < UPD; j++) {
		v->upd[j] = it_put_o(c, &o, "u");
		v->pri[j].sent = v->pri[j].ok = PRI_BASE;
	}
	sluice_close(c);
}

typedef void *(*th_fn)(void *);

static th_fn
th_role(int i)
{
	if (i < PUTTERS)
		return putter_run;
	if (i < SETTER)
		return worker_run;
	return i == SETTER ? setter_run : versioner_run;
}

static void
test_crash_under_load(void **state)
{
	static const char *const args[] = { "--snapshot-records", "3000",
		"--keep-done", "1h", "--wal-inflight", "1", NULL };
	struct t_srv *s = it_srv(*state, "node");
	struct client_th th[THREADS];
	uint64_t ttr = TTR_BASE;
	struct ids put_ok = { 0 }, ack_ok = { 0 }, ack_unknown = { 0 };
	struct ids result_ok = { 0 };
	struct versions v = { 0 };
	struct it_errs errs;
	struct sluice_client *c;
	uint64_t seed = t_seed(0x5eed);
	size_t present = 0, gone_unknown = 0, batched = 0;

	for (int i = 0; args[i] != NULL; i++)
		s->args[i] = args[i];
	it_errs_init(&errs);
	it_start(s);
	put_upd(s, &v);
	for (int round = 0; round < ROUNDS; round++) {
		struct round r = { s->url, false, 0, &errs };
		int64_t kill_at =
		    KILL_MIN_MS + (int64_t)t_below(&seed, KILL_SPAN_MS);
		size_t puts = 0, acks = 0;
		int status;

		memset(th, 0, sizeof(th));
		for (int i = 0; i < THREADS; i++) {
			th[i].r = &r;
			th[i].seed = t_rand(&seed);
			th[i].ttr = ttr;
			th[i].v = &v;
			assert_int_equal(
			    pthread_create(&th[i].th, NULL, th_role(i), &th[i]),
			    0);
		}
		it_sleep_ms(kill_at);
		/* A loaded machine may not have answered a put yet: the kill
		 * must land while answered puts exist (bounded wait). */
		for (int i = 0; i < 1000 && atomic_load(&r.answered) == 0; i++)
			it_sleep_ms(10);
		status = t_srv_stop(s, SIGKILL);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		/* the threads end before the restart: a request they send
		 * later must not reach the next server */
		atomic_store(&r.stop, true);
		for (int i = 0; i < THREADS; i++) {
			assert_int_equal(pthread_join(th[i].th, NULL), 0);
			puts += th[i].put_ok.n;
			acks += th[i].ack_ok.n;
			batched += th[i].batched;
			ids_merge(&put_ok, &th[i].put_ok);
			ids_merge(&ack_ok, &th[i].ack_ok);
			ids_merge(&ack_unknown, &th[i].ack_unknown);
			ids_merge(&result_ok, &th[i].result_ok);
			free(th[i].put_ok.v);
			free(th[i].ack_ok.v);
			free(th[i].ack_unknown.v);
			free(th[i].result_ok.v);
		}
		print_message("round %d: killed after %lld ms; %zu puts and "
		              "%zu acks answered\n",
		    round, (long long)kill_at, puts, acks);
		assert_true(puts > 0);
		/* What the kill left: verify agrees with the start below. */
		it_verify_startable(s->data);
		s->args[5] = round % 2 == 0 ? "3" : "1"; /* --wal-inflight */
		it_start(s);
		ttr = check_restart(
		    s, th[SETTER].ttr, &v, &ack_ok, &result_ok, &seed);
	}
	it_errs_check(&errs);
	/* every kind of change was answered at some point */
	assert_true(ack_ok.n > 0 && batched > 0 && result_ok.n > 0);
	assert_true(v.ver[0].ok > 0 && v.pri[0].ok > PRI_BASE);
	qsort(ack_ok.v, ack_ok.n, sizeof(uint64_t), cmp_u64);
	qsort(ack_unknown.v, ack_unknown.n, sizeof(uint64_t), cmp_u64);

	/* the server was restarted after the last kill */
	c = it_client(s);
	for (size_t i = 0; i < put_ok.n; i++) {
		uint64_t id = put_ok.v[i];
		int st = it_state(c, id);

		/* an answered ack was checked after the last restart */
		if (ids_has(&ack_ok, id))
			continue;
		if (ids_has(&ack_unknown, id)) {
			gone_unknown += !live(st);
		} else if (!live(st)) {
			fail_msg("task %llu was put (and never acked) but is "
			         "%s",
			    (unsigned long long)id,
			    st == 0 ? "gone" : sluice_state_name(st));
		} else {
			present++;
		}
	}
	print_message("%zu puts answered, %zu acks answered (%zu in "
	              "batches, %zu with a result; %zu with no answer, %zu "
	              "of those done); %zu tasks still there; versions up to "
	              "%llu, priorities up to %llu answered\n",
	    put_ok.n, ack_ok.n, batched, result_ok.n, ack_unknown.n,
	    gone_unknown, present, (unsigned long long)v.ver[0].ok,
	    (unsigned long long)v.pri[0].ok);
	/* what is still taken was taken detached (session leases ended
	 * with the server) */
	{
		struct sluice_task *l;
		uint64_t taken = it_counts(c, NULL).taken;
		size_t n;

		it_rc(c,
		    sluice_list(c, SLUICE_DEFAULT_TUBE, SLUICE_TAKEN,
		        SLUICE_ORDER_AGE, SLUICE_LIST_MAX, 0, &l, &n),
		    0);
		assert_int_equal(
		    n, taken < SLUICE_LIST_MAX ? taken : SLUICE_LIST_MAX);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(l[i].detached, 1);
		sluice_task_free(l);
	}
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
	free(put_ok.v);
	free(ack_ok.v);
	free(ack_unknown.v);
	free(result_ok.v);
}

/* How many "*.snap.inprogress" files `dir` holds. */
static int
unfinished_snapshots(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		n += len > 16 &&
		    strcmp(e->d_name + len - 16, ".snap.inprogress") == 0;
	}
	closedir(d);
	return n;
}

/* Killed while its snapshot worker writes a large snapshot, the server
 * can be restarted at once: nothing of the snapshot may outlive it
 * holding the data directory's lock or the listening port, and the
 * unfinished file is removed at the start. */
static void
test_restart_while_a_snapshot_was_being_written(void **state)
{
	enum { SIZE = 4096 };
	/* 40 MiB of tasks, 20 under the sanitizers: either way the snapshot
	 * takes far longer than the 30 ms after which the kill comes (one of
	 * 40 MiB took about a second on a loaded 2-core test machine, most of
	 * it writing and syncing), and each restart reads it all again */
	const int tasks = it_sanitized() ? 5000 : 10000;
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_batch_item *items = calloc(1000, sizeof(*items));
	char *payload = malloc(SIZE);
	struct sluice_client *c;
	uint64_t lsn;

	assert_non_null(items);
	assert_non_null(payload);
	memset(payload, 's', SIZE);
	it_start(s);
	c = it_client(s);
	for (int b = 0; b < tasks / 1000; b++) {
		for (int i = 0; i < 1000; i++) {
			sluice_put_opts_init(&items[i].opts);
			items[i].payload = payload;
			items[i].len = SIZE;
		}
		it_rc(c, sluice_put_batch(c, items, 1000), 0);
	}
	for (int round = 0; round < 3; round++) {
		/* a snapshot request, then the kill as soon as the worker is
		 * at work: the reply never comes */
		sluice_set_timeout(c, 30);
		assert_int_not_equal(sluice_snapshot(c, &lsn), 0);
		sluice_close(c);
		assert_true(WIFSIGNALED(t_srv_stop(s, SIGKILL)));
		/* The killed snapshot's file is left; verify calls the
		 * directory sound, and the start removes the file. */
		it_verify_startable(s->data);
		it_start(s);
		assert_int_equal(unfinished_snapshots(s->data), 0);
		c = it_client(s);
		sluice_set_timeout(c, IT_CALL_MS * (it_sanitized() ? 3 : 1));
		assert_int_equal(it_counts(c, NULL).ready, tasks);
	}
	/* A whole snapshot of it, written and synced: on a disk that other
	 * tests keep busy that took over 10 s (IT_CALL_MS). The wait only
	 * bounds a hang; nothing here is timed. */
	sluice_set_timeout(c, 60000);
	it_rc(c, sluice_snapshot(c, &lsn), 0);
	assert_true(lsn > 0);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
	free(items);
	free(payload);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_crash_under_load),
		T(test_restart_while_a_snapshot_was_being_written),
	};
#undef T
	return cmocka_run_group_tests_name("crash", tests, NULL, NULL);
}
