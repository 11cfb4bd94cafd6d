/* Tenants on one server: a real sluiced with --auth and producers for
 * different tube patterns (`A*`, `B*`). Each test first does what a
 * hostile or careless tenant did to another before keys were per tube
 * and tokens had quotas:
 *  - a key: A's producer squatted B's key, so B's put was answered OK,
 *    created:false, with A's task id, and B's task was never made; a
 *    replace answered EEXIST naming the other tenant's tube;
 *  - peek and delete by key name the tube (a request without one is told
 *    so), and a data directory written before (a version 3 snapshot, its
 *    reservations naming no tube) starts with its keys;
 *  - quotas: a tenant creating tubes, filling tasks or bytes, or parking
 *    takes is stopped at its token's quota with an error naming it, while
 *    the other tenant's puts go on and a healthy client's p99 stays low;
 *    the counts are exact across acks, deletes, moves and a restart, and
 *    SIGHUP changes a quota. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "it.h"
#include "it_hostile.h"
#include "it_http.h"
#include "it_probe.h"
#include "it_sp.h"
#include "log/snap.h"
#include "proto/msg.h"
#include "queue/queue.h"
#include "util/tokens.h"
#include "util/buf.h"

/* token, its line without the hash (and with its quotas) */
struct tok {
	const char *secret;
	const char *line;
};

enum { ADMIN, PROD_A, PROD_B, WORK_A, PROBE, NTOK };

static const char *const secrets[NTOK] = { "adm-secret", "a-secret", "b-secret",
	"wa-secret", "probe-secret" };

/* Writes the token file: `lines` per token (NULL: left out), then
 * `extra` (a default line, or ""). */
static void
write_tokens(const char *path, const char *const lines[NTOK], const char *extra)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "# written by test_tenant\n%s\n", extra);
	for (int i = 0; i < NTOK; i++) {
		char line[256], *sp;

		if (lines[i] == NULL)
			continue;
		/* NAME ROLE TUBES, the hash, then the quotas */
		snprintf(line, sizeof(line), "%s", lines[i]);
		sp = strchr(line, ' ');
		sp = sp ? strchr(sp + 1, ' ') : NULL;
		sp = sp ? strchr(sp + 1, ' ') : NULL;
		if (sp != NULL)
			*sp++ = '\0';
		fprintf(f, "%s ", line);
		it_hostile_hash(f, secrets[i]);
		fprintf(f, " %s\n", sp != NULL ? sp : "");
	}
	assert_int_equal(fclose(f), 0);
}

static const char *const plain[NTOK] = {
	"ops admin *",
	"alice producer A*",
	"bob producer B*",
	"alice-worker worker A*",
	"probe worker probe",
};

struct fix {
	struct t_srv *s;
	char file[600];
};

static void
start(void **state, struct fix *f, const char *const lines[NTOK],
    const char *extra)
{
	f->s = it_srv(*state, "t");
	snprintf(f->file, sizeof(f->file), "%s", t_path(*state, "tokens"));
	write_tokens(f->file, lines, extra);
	f->s->args[0] = "--auth";
	f->s->args[1] = f->file;
	it_start(f->s);
}

static struct sluice_client *
as(const struct fix *f, int who)
{
	struct sluice_client *c = it_client(f->s);

	assert_int_equal(sluice_set_token(c, secrets[who]), 0);
	return c;
}

/* A put of `payload` with `key` (NULL: none), `replace`. */
static int
put_k(struct sluice_client *c, const char *tube, const char *key, bool replace,
    const char *payload, uint64_t *id, int *created)
{
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = tube;
	o.key = key;
	o.replace = replace;
	return sluice_put(c, &o, payload, strlen(payload), id, created);
}

/* What the client was last told names none of `words`. */
static void
says_nothing_of(struct sluice_client *c, const char *const *words, size_t n)
{
	const char *m = sluice_errmsg(c);

	for (size_t i = 0; i < n; i++)
		if (m != NULL && strstr(m, words[i]) != NULL)
			fail_msg("the answer names '%s': %s", words[i], m);
}

/* ---- keys ---------------------------------------------------------- */

/* A squats B's key in its own tube first: B's put still makes B's task,
 * and nothing B is told (ids, tubes, texts) is A's. */
static void
test_a_key_squatted_by_one_tenant_is_not_anothers(void **state)
{
	const char *const theirs[] = { "A.jobs", "alice" };
	struct sluice_client *a, *b, *adm;
	struct sluice_task *t = NULL;
	uint64_t ida, idb, id;
	int created = -1;
	char ida_s[32];
	struct fix f;

	start(state, &f, plain, "");
	a = as(&f, PROD_A);
	b = as(&f, PROD_B);
	adm = as(&f, ADMIN);
	it_rc(a, put_k(a, "A.jobs", "invoice-7", false, "a's", &ida, &created),
	    0);
	assert_int_equal(created, 1);
	snprintf(ida_s, sizeof(ida_s), "%llu", (unsigned long long)ida);

	/* B's put of the same key: B's own task, made */
	it_rc(b, put_k(b, "B.jobs", "invoice-7", false, "b's", &idb, &created),
	    0);
	assert_int_equal(created, 1);
	assert_true(idb != ida);
	t = it_peek(adm, idb);
	assert_string_equal(t->tube, "B.jobs");
	assert_memory_equal(t->payload, "b's", 3);
	sluice_task_free(t);
	/* again: B's own id, not A's */
	it_rc(
	    b, put_k(b, "B.jobs", "invoice-7", false, "b's", &id, &created), 0);
	assert_true(created == 0 && id == idb);
	/* a replace: B's task gets the content; no EEXIST, no A */
	it_rc(b, put_k(b, "B.jobs", "invoice-7", true, "b2", &id, &created), 0);
	assert_true(created == 0 && id == idb);
	t = it_peek(adm, idb);
	assert_memory_equal(t->payload, "b2", 2);
	sluice_task_free(t);
	t = it_peek(adm, ida);
	assert_memory_equal(t->payload, "a's", 3);
	sluice_task_free(t);
	/* B's peek by key: B's task; of A's tube: not allowed, and said
	 * without a word of A's task */
	it_rc(b, sluice_peek_key(b, "B.jobs", "invoice-7", &t), 0);
	assert_true(t->id == idb);
	sluice_task_free(t);
	it_rc(b, sluice_peek_key(b, "A.jobs", "invoice-7", &t), SLUICE_EPERM);
	assert_string_equal(sluice_errmsg(b), "not allowed");
	it_rc(b, sluice_peek_key(b, "B.jobs", "nobody", &t), SLUICE_ENOTFOUND);
	says_nothing_of(b, theirs, 2);
	assert_null(strstr(sluice_errmsg(b), ida_s));

	/* A's task named by id: to B as if it did not exist, the same
	 * answer, word for word, as an id that never was */
	{
		struct sluice_client *wa = as(&f, WORK_A);
		struct sluice_result res[2];
		uint64_t none = ida + 1000000;
		char want[96], other[96];

		it_rc(b, sluice_peek(b, none, &t), SLUICE_ENOTFOUND);
		snprintf(want, sizeof(want), "peek %llu: no such task",
		    (unsigned long long)none);
		assert_string_equal(sluice_errmsg(b), want);
		it_rc(b, sluice_peek(b, ida, &t), SLUICE_ENOTFOUND);
		snprintf(want, sizeof(want), "peek %llu: no such task",
		    (unsigned long long)ida);
		assert_string_equal(sluice_errmsg(b), want);
		/* bad arguments are checked as for an unknown id: the same
		 * error (a to-tube that is no tube name) */
		it_rc(wa, sluice_ack(wa, idb, 1, "A bad name", NULL),
		    SLUICE_ETUBE);
		snprintf(other, sizeof(other), "%s", sluice_errmsg(wa));
		it_rc(wa, sluice_ack(wa, none, 1, "A bad name", NULL),
		    SLUICE_ETUBE);
		assert_string_equal(sluice_errmsg(wa), other);
		/* a worker of A acking B's task, alone or in a batch */
		it_rc(wa, sluice_ack(wa, idb, 1, NULL, NULL), SLUICE_ENOTFOUND);
		snprintf(want, sizeof(want), "ack %llu: no such task",
		    (unsigned long long)idb);
		assert_string_equal(sluice_errmsg(wa), want);
		it_rc(
		    wa, sluice_ack(wa, none, 1, NULL, NULL), SLUICE_ENOTFOUND);
		snprintf(want, sizeof(want), "ack %llu: no such task",
		    (unsigned long long)none);
		assert_string_equal(sluice_errmsg(wa), want);
		{
			struct sluice_lease items[2] = { { idb, 1 },
				{ none, 1 } };

			it_rc(wa, sluice_ack_batch(wa, items, 2, res), 0);
		}
		assert_int_equal(res[0].rc, SLUICE_ENOTFOUND);
		assert_int_equal(res[1].rc, SLUICE_ENOTFOUND);
		snprintf(want, sizeof(want), "ack %llu: no such task",
		    (unsigned long long)idb);
		snprintf(other, sizeof(other), "ack %llu: no such task",
		    (unsigned long long)none);
		assert_string_equal(res[0].errmsg, want);
		assert_string_equal(res[1].errmsg, other);
		assert_int_equal(it_state(adm, idb), SLUICE_READY);
		sluice_close(wa);
	}

	/* A's key completed (its dedup window): B's key is still B's */
	{
		struct sluice_task *x = it_take(adm, "A.jobs", 0, 0);

		it_rc(adm, sluice_ack(adm, x->id, x->lease, NULL, NULL), 0);
		sluice_task_free(x);
	}
	it_rc(
	    a, put_k(a, "A.jobs", "invoice-7", false, "a's", &id, &created), 0);
	assert_true(created == 0 && id == ida); /* A's own window */
	it_rc(
	    b, put_k(b, "B.jobs", "invoice-8", false, "b3", &id, &created), 0);
	it_rc(
	    a, put_k(a, "A.jobs", "invoice-8", false, "a3", &ida, &created), 0);
	assert_true(created == 1 && ida != id);

	/* a batch: a key twice in one tube is one task, in two tubes two */
	{
		struct sluice_batch_item it[3];
		const char *tubes[3] = { "A.batch", "A.batch", "A.other" };

		memset(it, 0, sizeof(it));
		for (int i = 0; i < 3; i++) {
			sluice_put_opts_init(&it[i].opts);
			it[i].opts.tube = tubes[i];
			it[i].opts.key = "batch-key";
			it[i].payload = "p";
			it[i].len = 1;
		}
		it_rc(a, sluice_put_batch(a, it, 3), 0);
		assert_true(it[0].rc == 0 && it[0].created == 1);
		assert_true(it[1].rc == 0 && it[1].created == 0);
		assert_true(it[1].id == it[0].id);
		assert_true(it[2].rc == 0 && it[2].created == 1);
		assert_true(it[2].id != it[0].id);
	}
	sluice_close(a);
	sluice_close(b);
	sluice_close(adm);
}

/* A request on the wire by hand: the reply's status and text. */
static int
raw_call(int fd, uint32_t rid, const struct msg_req *q, char *text, size_t cap)
{
	struct buf out, in;
	struct msg_rep rep;
	uint32_t bt;
	int status;

	buf_init(&out);
	buf_init(&in);
	assert_int_equal(msg_encode_req(&out, q), 0);
	it_sp_send(fd, 0x80000000u | rid, out.data, out.len);
	assert_true(it_sp_recv(fd, &bt, 1, &in));
	assert_int_equal(msg_decode_rep(in.data, in.len, NULL, &rep), 0);
	status = rep.status;
	text[0] = '\0';
	if (status != 0)
		snprintf(text, cap, "%.*s", (int)rep.err.message.len,
		    rep.err.message.p);
	buf_fini(&out);
	buf_fini(&in);
	return status;
}

/* peek and delete by key name the key's tube (libsluice, the CLI); a
 * client from before, whose request names no tube, is told what it
 * lacks. */
static void
test_peek_and_delete_by_key_name_the_tube(void **state)
{
	struct msg_req q;
	struct sluice_client *a, *b, *adm;
	struct sluice_task *t = NULL;
	uint64_t ida, idb, id;
	char text[1100], out[4096], err[4096];
	struct fix f;
	int fd;

	start(state, &f, plain, "");
	a = as(&f, PROD_A);
	b = as(&f, PROD_B);
	adm = as(&f, ADMIN);
	it_rc(a, put_k(a, "A.x", "same", false, "a", &ida, NULL), 0);
	it_rc(b, put_k(b, "B.x", "same", false, "b", &idb, NULL), 0);
	it_rc(adm, sluice_peek_key(adm, "A.x", "same", &t), 0);
	assert_true(t->id == ida);
	sluice_task_free(t);
	it_rc(adm, sluice_peek_key(adm, "B.x", "same", &t), 0);
	assert_true(t->id == idb);
	sluice_task_free(t);
	/* a delete by key takes the one of its tube only */
	it_rc(adm, sluice_delete_key(adm, "B.x", "same", &id), 0);
	assert_true(id == idb);
	assert_int_equal(it_state(adm, ida), SLUICE_READY);
	it_rc(
	    adm, sluice_delete_key(adm, "B.x", "same", &id), SLUICE_ENOTFOUND);
	/* the CLI: --key with -t */
	setenv("SLUICE_TOKEN", secrets[ADMIN], 1);
	assert_int_equal(
	    it_cli(f.s->url, NULL, out, sizeof(out), err, sizeof(err), "peek",
	        "--key", "same", "-t", "A.x", "--json", NULL),
	    0);
	assert_non_null(strstr(out, "\"tube\":\"A.x\""));
	assert_int_equal(it_cli(f.s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "peek", "--key", "same", NULL),
	    1); /* the tube "default" has no such key */
	unsetenv("SLUICE_TOKEN");

	/* an old client: no tube */
	fd = it_sp_open(f.s->port);
	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_AUTH;
	q.token = (struct msg_str) { secrets[ADMIN], strlen(secrets[ADMIN]) };
	assert_int_equal(raw_call(fd, 1, &q, text, sizeof(text)), 0);
	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_PEEK_KEY;
	q.key = (struct msg_str) { "same", 4 };
	assert_int_equal(
	    raw_call(fd, 2, &q, text, sizeof(text)), SLUICE_EINVAL);
	assert_non_null(strstr(text, "names no tube"));
	q.op = MSG_OP_DELETE_KEY;
	assert_int_equal(
	    raw_call(fd, 3, &q, text, sizeof(text)), SLUICE_EINVAL);
	assert_non_null(strstr(text, "keys are per tube"));
	assert_int_equal(it_state(adm, ida), SLUICE_READY);
	close(fd);
	sluice_close(a);
	sluice_close(b);
	sluice_close(adm);
}

/* ---- a data directory of the layout before ------------------------- */

struct rewrite {
	struct snap_writer w;
	int rc;
};

/* Copies each entry as a version 3 snapshot has it: META says 3, a DEDUP
 * entry has no tube (str16 key, u64 id, i64 expires). */
static int
to_v3(void *arg, uint16_t type, const void *data, size_t len)
{
	struct rewrite *rw = arg;
	uint8_t tmp[512];
	const uint8_t *d = data;

	if (type == QSNAP_META) {
		assert_true(len <= sizeof(tmp));
		memcpy(tmp, data, len);
		le_store_u32(tmp, 3);
		d = tmp;
	} else if (type == QSNAP_DEDUP) {
		size_t off = 2 + le_load_u16(d) + 16;

		assert_true(off + 2 + le_load_u16(d + off) == len);
		len = off;
	}
	return snap_writer_add(&rw->w, type, d, len, NULL, 0);
}

/* Rewrites the newest snapshot of `dir` in the layout of version 3. */
static void
snapshot_to_v3(const char *dir)
{
	static uint8_t buf[1 << 20];
	struct rewrite rw;
	struct snap_info info;
	char path[700];
	uint64_t *lsns;
	size_t n;

	assert_int_equal(snap_list(dir, &lsns, &n), 0);
	assert_true(n >= 1);
	assert_int_equal(snap_path(path, sizeof(path), dir, lsns[n - 1]), 0);
	assert_int_equal(snap_load(path, NULL, NULL, &info, NULL), 0);
	assert_int_equal(snap_writer_open(&rw.w, dir, info.lsn, info.epoch,
	                     info.time, buf, sizeof(buf)),
	    0);
	assert_int_equal(snap_load(path, to_v3, &rw, NULL, NULL), 0);
	assert_int_equal(snap_writer_commit(&rw.w), 0);
	free(lsns);
}

/* A directory whose snapshot has the layout before keys were per tube
 * (version 3), and a log after it: sluiced starts with every key where
 * it was - the live tasks', a done task's reservation, and one whose task
 * is gone (held in every tube until it expires, as when it was made). */
static void
test_an_old_data_directory_keeps_its_keys(void **state)
{
	static const char *const keep[NTOK] = { "ops admin *", NULL, NULL, NULL,
		NULL };
	struct sluice_client *adm;
	struct sluice_task *t = NULL;
	struct sluice_tube_conf conf;
	uint64_t live, done, gone, tail, id, lsn;
	int created = -1;
	struct fix f;

	start(state, &f, keep, "");
	adm = as(&f, ADMIN);
	memset(&conf, 0, sizeof(conf));
	conf.keep_done_ms = 3600 * 1000;
	conf.set = SLUICE_TS_KEEP_DONE;
	it_rc(adm, sluice_tube_set(adm, "kept", &conf, 0, NULL), 0);
	it_rc(adm, put_k(adm, "A.live", "k-live", false, "l", &live, NULL), 0);
	it_rc(adm, put_k(adm, "kept", "k-done", false, "d", &done, NULL), 0);
	it_rc(adm, put_k(adm, "A.gone", "k-gone", false, "g", &gone, NULL), 0);
	t = it_take(adm, "kept", 0, 0);
	it_rc(adm, sluice_ack(adm, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	t = it_take(adm, "A.gone", 0, 0);
	it_rc(adm, sluice_ack(adm, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	it_rc(adm, sluice_snapshot(adm, &lsn), 0);
	/* and a record after the snapshot, in the log */
	it_rc(adm, put_k(adm, "A.tail", "k-tail", false, "t", &tail, NULL), 0);
	sluice_close(adm);
	assert_int_equal(t_srv_stop(f.s, SIGKILL), SIGKILL);
	snapshot_to_v3(f.s->data);

	it_start(f.s);
	adm = as(&f, ADMIN);
	it_rc(adm, sluice_peek_key(adm, "A.live", "k-live", &t), 0);
	assert_true(t->id == live);
	sluice_task_free(t);
	it_rc(adm, sluice_peek_key(adm, "A.tail", "k-tail", &t), 0);
	assert_true(t->id == tail);
	sluice_task_free(t);
	it_rc(adm, sluice_peek_key(adm, "kept", "k-done", &t), 0);
	assert_true(t->id == done && t->state == SLUICE_DONE);
	sluice_task_free(t);
	/* live and reserved keys still dedup */
	it_rc(
	    adm, put_k(adm, "A.live", "k-live", false, "x", &id, &created), 0);
	assert_true(created == 0 && id == live);
	it_rc(adm, put_k(adm, "kept", "k-done", false, "x", &id, &created), 0);
	assert_true(created == 0 && id == done);
	it_rc(
	    adm, put_k(adm, "A.gone", "k-gone", false, "x", &id, &created), 0);
	assert_true(created == 0 && id == gone);
	/* per tube from now on */
	it_rc(
	    adm, put_k(adm, "B.live", "k-live", false, "y", &id, &created), 0);
	assert_true(created == 1 && id != live);
	/* and once more after a restart that writes the new layout */
	it_rc(adm, sluice_snapshot(adm, &lsn), 0);
	it_crash_restart(f.s, &adm);
	assert_int_equal(sluice_set_token(adm, secrets[ADMIN]), 0);
	it_rc(adm, sluice_peek_key(adm, "A.live", "k-live", &t), 0);
	assert_true(t->id == live);
	sluice_task_free(t);
	it_rc(adm, put_k(adm, "kept", "k-done", false, "x", &id, &created), 0);
	assert_true(created == 0 && id == done);
	it_rc(
	    adm, put_k(adm, "A.gone", "k-gone", false, "x", &id, &created), 0);
	assert_true(created == 0 && id == gone);
	sluice_close(adm);
}

/* ---- quotas ---------------------------------------------------------- */

static int
put_p(struct sluice_client *c, const char *tube, const char *payload)
{
	return put_k(c, tube, NULL, false, payload, NULL, NULL);
}

/* tubes, tasks and bytes: the limit is hit with an error naming it; the
 * other tenant is not touched; acks, deletes and moves give room back
 * exactly; the counts survive a restart; SIGHUP changes a quota. */
static void
test_quotas_bound_a_tenant_and_not_the_others(void **state)
{
	static const char *const lines[NTOK] = {
		"ops admin *",
		"alice producer A* tubes=3 tasks=5 bytes=1k",
		"bob producer B*",
		"alice-worker worker A* parked=2",
		"probe worker probe",
	};
	static const char *const more[NTOK] = {
		"ops admin *",
		"alice producer A* tubes=3 tasks=6 bytes=1k",
		"bob producer B*",
		"alice-worker worker A* parked=2",
		"probe worker probe",
	};
	char big[700];
	struct sluice_client *a, *b, *adm, *wa;
	struct sluice_task *t;
	struct fix f;
	int rc;

	start(state, &f, lines, "default tubes=10");
	a = as(&f, PROD_A);
	b = as(&f, PROD_B);
	adm = as(&f, ADMIN);
	wa = as(&f, WORK_A);
	/* tubes: three, then the fourth is refused, named */
	it_rc(a, put_p(a, "A.1", "x"), 0);
	it_rc(a, put_p(a, "A.2", "x"), 0);
	it_rc(a, put_p(a, "A.3", "x"), 0);
	it_rc(a, put_p(a, "A.4", "x"), SLUICE_ELIMIT);
	assert_non_null(strstr(sluice_errmsg(a), "quota tubes=3"));
	assert_non_null(strstr(sluice_errmsg(a), "'alice'"));
	/* an existing tube still takes puts */
	it_rc(a, put_p(a, "A.1", "x"), 0);
	/* the other tenant: its own default (tubes=10), untouched by A */
	for (int i = 0; i < 10; i++) {
		char tube[16];

		snprintf(tube, sizeof(tube), "B.%d", i);
		it_rc(b, put_p(b, tube, "y"), 0);
	}
	it_rc(b, put_p(b, "B.10", "y"), SLUICE_ELIMIT);
	assert_non_null(strstr(sluice_errmsg(b), "quota tubes=10"));
	it_rc(b, put_p(b, "B.0", "y"), 0);

	/* tasks: 4 so far; one more, then refused */
	it_rc(a, put_p(a, "A.2", "x"), 0);
	it_rc(a, put_p(a, "A.2", "x"), SLUICE_ELIMIT);
	assert_non_null(strstr(sluice_errmsg(a), "quota tasks=5"));
	/* an ack gives one back, exactly one */
	t = it_take(wa, "A.2", 0, 0);
	it_rc(wa, sluice_ack(wa, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	it_rc(a, put_p(a, "A.2", "x"), 0);
	it_rc(a, put_p(a, "A.2", "x"), SLUICE_ELIMIT);
	/* a move inside the namespace changes nothing ... */
	t = it_take(wa, "A.3", 0, 0);
	it_rc(wa, sluice_ack(wa, t->id, t->lease, "A.1", NULL), 0);
	sluice_task_free(t);
	it_rc(a, put_p(a, "A.2", "x"), SLUICE_ELIMIT);
	/* ... a move out of it gives one back, a delete another */
	t = it_take(adm, "A.1", 0, 0);
	it_rc(adm, sluice_ack(adm, t->id, t->lease, "C.out", NULL), 0);
	sluice_task_free(t);
	it_rc(a, put_p(a, "A.2", "x"), 0);
	it_rc(a, put_p(a, "A.2", "x"), SLUICE_ELIMIT);
	t = it_take(adm, "A.1", 0, 0);
	it_rc(adm, sluice_delete(adm, t->id), 0);
	sluice_task_free(t);
	/* bytes: 1 KiB in all; 4 tasks hold 4 bytes */
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	it_rc(a, put_p(a, "A.2", big), 0);
	t = it_take(wa, "A.2", 0, 0);
	it_rc(wa, sluice_ack(wa, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	it_rc(a, put_p(a, "A.2", big), SLUICE_ELIMIT);
	assert_non_null(strstr(sluice_errmsg(a), "quota bytes=1024"));
	/* B's puts go on all along */
	it_rc(b, put_p(b, "B.1", big), 0);

	/* a restart: the counts are rebuilt, the limits hold */
	sluice_close(a);
	sluice_close(b);
	sluice_close(wa);
	it_crash_restart(f.s, &adm);
	assert_int_equal(sluice_set_token(adm, secrets[ADMIN]), 0);
	a = as(&f, PROD_A);
	b = as(&f, PROD_B);
	it_rc(a, put_p(a, "A.4", "x"), SLUICE_ELIMIT);
	assert_non_null(strstr(sluice_errmsg(a), "quota tubes=3"));
	{
		struct sluice_stats *st;
		uint64_t live = 0;

		it_rc(adm, sluice_stats(adm, NULL, &st), 0);
		for (size_t i = 0; i < st->ntubes; i++)
			if (st->tubes[i].name[0] == 'A')
				live += st->tubes[i].ready +
				    st->tubes[i].delayed + st->tubes[i].taken +
				    st->tubes[i].buried;
		sluice_stats_free(st);
		/* fill to the limit, whatever is there: exactly 5 */
		while (live < 5) {
			it_rc(a, put_p(a, "A.3", "x"), 0);
			live++;
		}
	}
	it_rc(a, put_p(a, "A.3", "x"), SLUICE_ELIMIT);
	assert_non_null(strstr(sluice_errmsg(a), "quota tasks=5"));
	it_rc(b, put_p(b, "B.2", "y"), 0);

	/* SIGHUP: a quota raised, in force on the live connection */
	write_tokens(f.file, more, "default tubes=10");
	assert_int_equal(kill(f.s->pid, SIGHUP), 0);
	rc = SLUICE_ELIMIT;
	for (int64_t end = it_mono_ms() + 10000;
	     rc == SLUICE_ELIMIT && it_mono_ms() < end; it_sleep_ms(20))
		rc = put_p(a, "A.3", "x");
	it_rc(a, rc, 0);
	it_rc(a, put_p(a, "A.3", "x"), SLUICE_ELIMIT);
	assert_non_null(strstr(sluice_errmsg(a), "quota tasks=6"));
	sluice_close(a);
	sluice_close(b);
	sluice_close(adm);
}

/* A token for `*` is bounded by its own line only; a tube set that would
 * make a tube past it is refused as a put is. */
static void
test_a_node_wide_token_has_only_its_own_quotas(void **state)
{
	static const char *const lines[NTOK] = {
		"ops admin * tubes=2",
		"alice producer A*",
		"bob producer B*",
		"alice-worker worker A*",
		"probe worker probe",
	};
	struct sluice_client *adm, *a;
	struct sluice_tube_conf conf;
	char addr[64], hdr[128], *body = NULL;
	int port = it_free_port(), st;
	struct fix f;

	/* with the HTTP face too: a quota is one rule on every face */
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	f.s = it_srv(*state, "t");
	snprintf(f.file, sizeof(f.file), "%s", t_path(*state, "tokens"));
	write_tokens(f.file, lines, "default tubes=1");
	f.s->args[0] = "--auth";
	f.s->args[1] = f.file;
	f.s->args[2] = "--http";
	f.s->args[3] = addr;
	it_start(f.s);
	adm = as(&f, ADMIN);
	a = as(&f, PROD_A);
	it_rc(adm, put_p(adm, "x1", "x"), 0);
	it_rc(adm, put_p(adm, "x2", "x"), 0);
	memset(&conf, 0, sizeof(conf));
	conf.ttr_ms = 5000;
	conf.set = SLUICE_TS_TTR;
	it_rc(adm, sluice_tube_set(adm, "x3", &conf, 0, NULL), SLUICE_ELIMIT);
	assert_non_null(strstr(sluice_errmsg(adm), "quota tubes=2"));
	it_rc(adm, sluice_tube_set(adm, "x1", &conf, 0, NULL), 0);
	/* the default line is A's (one tube), not the admin's; A's tube
	 * is in the admin's namespace too, where the admin's bound holds */
	it_rc(a, put_p(a, "A.1", "x"), 0);
	it_rc(a, put_p(a, "A.2", "x"), SLUICE_ELIMIT);
	assert_non_null(strstr(sluice_errmsg(a), "quota tubes=1"));
	snprintf(
	    hdr, sizeof(hdr), "Authorization: Bearer %s\r\n", secrets[PROD_A]);
	st = it_http(port, "POST", "/v1/tubes/A.2/tasks", hdr, "x", &body);
	assert_int_equal(st, 400);
	assert_non_null(strstr(body, "quota tubes=1 of token 'alice'"));
	free(body);
	st = it_http(port, "POST", "/v1/tubes/A.1/tasks", hdr, "x", &body);
	assert_int_equal(st, 201);
	free(body);
	it_rc(adm, put_p(adm, "A.1", "x"), 0);
	it_rc(adm, put_p(adm, "x4", "x"), SLUICE_ELIMIT);
	assert_non_null(strstr(sluice_errmsg(adm), "hold 3 tubes"));
	sluice_close(adm);
	sluice_close(a);
}

struct parked {
	struct fix *f;
	int rc;
	size_t n;
};

static void *
park_main(void *arg)
{
	struct parked *p = arg;
	struct sluice_client *c = it_client(p->f->s);
	const char *tubes[] = { "A.empty" };
	struct sluice_take_opts to = {
		.tubes = tubes, .ntubes = 1, .wait_ms = 4000
	};
	struct sluice_task *t = NULL;

	if (sluice_set_token(c, secrets[WORK_A]) != 0) {
		p->rc = -1;
	} else {
		p->rc = sluice_take(c, &to, &t, &p->n);
		sluice_task_free(t);
	}
	sluice_close(c);
	return NULL;
}

/* parked: a worker token's takes waiting at once; the next one is
 * refused at once, named; when they end, room again. */
static void
test_parked_takes_quota(void **state)
{
	static const char *const lines[NTOK] = {
		"ops admin *",
		"alice producer A*",
		"bob producer B*",
		"alice-worker worker A* parked=2",
		"probe worker probe",
	};
	struct parked p[2];
	pthread_t th[2];
	struct sluice_client *wa, *adm;
	const char *tubes[] = { "A.empty" };
	struct sluice_take_opts to = {
		.tubes = tubes, .ntubes = 1, .wait_ms = 100
	};
	struct sluice_task *t = NULL;
	size_t n = 0;
	struct fix f;
	int64_t end;

	start(state, &f, lines, "");
	adm = as(&f, ADMIN);
	wa = as(&f, WORK_A);
	for (int i = 0; i < 2; i++) {
		p[i] = (struct parked) { &f, 0, 0 };
		assert_int_equal(
		    pthread_create(&th[i], NULL, park_main, &p[i]), 0);
	}
	end = it_mono_ms() + 3000;
	while (it_node_kv(adm, "waiting_takes") < 2 && it_mono_ms() < end)
		it_sleep_ms(10);
	assert_true(it_node_kv(adm, "waiting_takes") == 2);
	it_rc(wa, sluice_take(wa, &to, &t, &n), SLUICE_ELIMIT);
	assert_non_null(strstr(sluice_errmsg(wa), "quota parked=2"));
	/* a take that does not wait is not parked */
	to.wait_ms = 0;
	it_rc(wa, sluice_take(wa, &to, &t, &n), SLUICE_ETIMEDOUT);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(p[i].rc, SLUICE_ETIMEDOUT);
	}
	/* they timed out: room again */
	to.wait_ms = 100;
	it_rc(wa, sluice_take(wa, &to, &t, &n), SLUICE_ETIMEDOUT);
	sluice_close(wa);
	sluice_close(adm);
}

/* A tenant creating tubes as fast as it can is stopped at its quota;
 * the other tenant goes on creating and putting, and a healthy client's
 * p99 stays under 50 ms meanwhile (it_look_p99_ok: 250 ms sanitized,
 * or three times its twin's on a busy machine). */
static void
test_a_tenant_creating_tubes_does_not_stop_the_others(void **state)
{
	static const char *const lines[NTOK] = {
		"ops admin *",
		"alice producer A* tubes=200",
		"bob producer B*",
		"alice-worker worker A*",
		"probe worker probe",
	};
	struct sluice_client *a, *b;
	struct it_look look;
	long attempts = it_scale(3000, 3, 600), refused = 0;
	struct fix f;

	start(state, &f, lines, "");
	a = as(&f, PROD_A);
	b = as(&f, PROD_B);
	it_look_start(&look, state, f.s, "probe", secrets[PROBE], NULL);
	it_sleep_ms(200);
	for (long i = 0; i < attempts; i++) {
		char tube[32];
		int rc;

		snprintf(tube, sizeof(tube), "A.t%ld", i);
		rc = put_p(a, tube, "x");
		if (rc == SLUICE_ELIMIT)
			refused++;
		else
			it_rc(a, rc, 0);
		if (i % 50 == 0) {
			snprintf(tube, sizeof(tube), "B.t%ld", i / 50);
			it_rc(b, put_p(b, tube, "y"), 0);
		}
	}
	it_look_stop(&look, "tenant creating tubes", 30);
	assert_int_equal(refused, attempts - 200);
	assert_non_null(strstr(sluice_errmsg(a), "quota tubes=200"));
	it_rc(b, put_p(b, "B.after", "y"), 0);
	it_look_p99_ok(&look, "tenant creating tubes");
	sluice_close(a);
	sluice_close(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_a_key_squatted_by_one_tenant_is_not_anothers, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_peek_and_delete_by_key_name_the_tube, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_an_old_data_directory_keeps_its_keys, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_quotas_bound_a_tenant_and_not_the_others, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_node_wide_token_has_only_its_own_quotas, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_parked_takes_quota, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_tenant_creating_tubes_does_not_stop_the_others,
		    it_setup, it_teardown),
	};
	return cmocka_run_group_tests_name("tenant", tests, NULL, NULL);
}
