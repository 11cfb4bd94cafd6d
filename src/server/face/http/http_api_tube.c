/* http_api_tube - the task API's routes of a tube (http_api_tube.h),
 * each a wire request of the tube: put (POST .../tasks, its options in
 * the query, the payload the body; with ?batch=1 a JSON array of items,
 * http_api_batch.h), take (POST /v1/tubes/a,b/take, one tube or several,
 * waiting up to 60 s), list (GET .../tasks, or one task by its key),
 * delete by state or flush (DELETE .../tasks), the tube's settings (GET,
 * PUT and DELETE /v1/tubes/T), kick, release (every taken task), pause,
 * stats, hourly, errors, the fair groups by backlog (GET .../groups),
 * and the next task of a state (GET .../next).
 * Kick and delete by state take dry_run=1: the count they would act on,
 * for a confirmation that names it; kick takes error=TEXT, an error
 * group's buried tasks. A tube named in the path is
 * checked here; its parameters are read from the query (http_query.h),
 * the first bad one answered 400. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>

#include "json/json.h"
#include "proto/msg.h"
#include "server/face/http/http_api.h"
#include "server/face/http/http_api_answer.h"
#include "server/face/http/http_api_batch.h"
#include "server/face/http/http_api_tube.h"
#include "server/face/http/http_query.h"
#include "sluice.h"
#include "util/rate.h"

enum {
	WAIT_MAX_MS = 60000, /* a take's longest wait */
	LIST_DEFAULT = 50,
	GROUPS_DEFAULT = 100, /* groups of GET .../groups without a limit */
};

/* A tube named in the path, checked: false (answered 400) when not. */
static bool
tube_ok(struct http_api_call *c, const char *tube)
{
	if (msg_tube_valid(tube, strlen(tube)))
		return true;
	http_api_error(c->aio, SLUICE_ETUBE,
	    "bad tube name: 1-200 bytes of [A-Za-z0-9_.:/-] (a / in a path "
	    "is written %2F)");
	return false;
}

/* ---- state names ------------------------------------------------------- */

/* "ready".."waiting" (and "all" when `all`) to MSG_ST_*; -1 when
 * unknown. */
static int
state_of(const char *s, bool all)
{
	static const char *const names[] = { "all", "ready", "delayed", "taken",
		"buried", "done", "waiting" };

	for (int i = all ? 0 : 1; i < 7; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

/* ---- put --------------------------------------------------------------- */

/* debounce=DUR, throttle=DUR: a window of at least 1 ms (the server
 * checks the rest: a key, one mode, at most 30 days). */
static void
put_mode_opt(struct http_api_call *c, const char *name, uint64_t *ms)
{
	if (http_query_dur(&c->q, name, ms) && *ms == 0)
		http_query_bad(&c->q, name, "a window of 1ms to 30d, not 0");
}

/* A put's options from the query: the task options (http_query_opts),
 * then its own (every, key, replace, debounce, throttle). A run_at after a
 * delay of more than 0 is refused. */
static void
put_opts(struct http_api_call *c, struct msg_put *p, char *key, size_t key_cap)
{
	struct http_query_opts o;

	http_query_opts(&c->q, false, &o);
	p->priority = o.set_priority ? o.priority : 1024;
	if (o.set_delay) {
		p->when = o.delay;
		p->at = false;
	}
	if (o.set_run_at) {
		if (p->when != 0)
			http_query_bad(
			    &c->q, "run_at", "give delay or run_at, not both");
		p->when = o.run_at;
		p->at = true;
	}
	p->ttr = o.ttr;
	p->max_attempts = o.max_attempts;
	http_query_dur(&c->q, "every", &p->period);
	if (http_query_str(&c->q, "key", key, key_cap))
		p->key = msg_cstr(key);
	p->replace = http_query_flag(&c->q, "replace");
	put_mode_opt(c, "debounce", &p->debounce);
	put_mode_opt(c, "throttle", &p->throttle);
}

/* The parents of a put: after=ID,ID,... (up to 1000), after_key=KEY (a
 * task of the tube), on_parent_failure=fail|ignore|cancel. The ids go
 * to ids[], the list's text to text[], the key to key[]. */
struct put_after {
	uint64_t ids[MSG_AFTER_MAX];
	char text[MSG_AFTER_MAX * 21 + 2];
	char key[MSG_KEY_MAX + 2];
	struct msg_str keys[1];
};

static void
put_after_opts(struct http_api_call *c, struct msg_put *p, struct put_after *a)
{
	char rule[16];
	uint32_t n = 0;

	if (http_query_str(&c->q, "after", a->text, sizeof(a->text))) {
		for (char *save = NULL, *tok = strtok_r(a->text, ",", &save);
		     tok != NULL; tok = strtok_r(NULL, ",", &save)) {
			char *end;
			unsigned long long v = strtoull(tok, &end, 10);

			if (*end != '\0' || v == 0 || tok[0] == '-' ||
			    n == MSG_AFTER_MAX) {
				http_query_bad(&c->q, "after",
				    "task ids >= 1, separated by commas, at "
				    "most 1000");
				return;
			}
			a->ids[n++] = v;
		}
		p->after = a->ids;
		p->nafter = n;
	}
	if (http_query_str(&c->q, "after_key", a->key, sizeof(a->key))) {
		a->keys[0] = msg_cstr(a->key);
		p->after_keys = a->keys;
		p->nafter_keys = 1;
	}
	if (http_query_str(&c->q, "on_parent_failure", rule, sizeof(rule))) {
		if (strcmp(rule, "fail") == 0)
			p->on_parent_failure = MSG_PARENT_FAIL;
		else if (strcmp(rule, "ignore") == 0)
			p->on_parent_failure = MSG_PARENT_IGNORE;
		else if (strcmp(rule, "cancel") == 0)
			p->on_parent_failure = MSG_PARENT_CANCEL;
		else
			http_query_bad(&c->q, "on_parent_failure",
			    "fail, ignore or cancel");
		if (p->nafter + p->nafter_keys == 0)
			http_query_bad(&c->q, "on_parent_failure",
			    "needs after or after_key");
	}
	p->ext = p->nafter + p->nafter_keys > 0;
}

static void
put_one(struct http_api_call *c, const char *tube)
{
	struct msg_req req = { .op = MSG_OP_PUT };
	char key[MSG_KEY_MAX + 2], group[MSG_TUBE_MAX + 2];
	char batch[MSG_BATCH_NAME_MAX + 2];
	struct put_after *after = NULL;

	req.put.tube = msg_cstr(tube);
	put_opts(c, &req.put, key, sizeof(key));
	/* parents: encoded before http_api_send_shape returns */
	if (http_query_has(c->q.uri, "after") ||
	    http_query_has(c->q.uri, "after_key") ||
	    http_query_has(c->q.uri, "on_parent_failure")) {
		if ((after = malloc(sizeof(*after))) == NULL) {
			http_api_error(c->aio, SLUICE_ENOMEM, "out of memory");
			return;
		}
		put_after_opts(c, &req.put, after);
	}
	/* the batch it joins (in_batch=NAME; ?batch=1 is a batch put) */
	if (http_query_str(&c->q, "in_batch", batch, sizeof(batch))) {
		req.put.batch = msg_cstr(batch);
		req.put.ext = true;
	}
	/* its fair group: the core says EGROUP for a bad one */
	if (http_query_str(&c->q, "group", group, sizeof(group)))
		req.put.group = msg_cstr(group);
	req.put.payload = (struct msg_str) { c->body, c->body_len };
	http_api_send_shape(c, &req, SH_PUT);
	free(after);
}

/* POST /v1/tubes/T/tasks?batch=1: a JSON array of items; those refused
 * here are answered in their place, the others go to the core. */
static void
put_batch(struct http_api_call *c, const char *tube)
{
	struct http_api_batch b;
	struct http_api_ans *a = NULL;
	struct msg_req req = { .op = MSG_OP_PUT_BATCH };
	int rc = http_api_batch_puts(&b, c->body, c->body_len, tube);

	if (rc == SLUICE_EINVAL) {
		http_api_error(c->aio, SLUICE_EINVAL,
		    "batch: the body is a JSON array of 1..1000 items "
		    "{\"payload\":\"...\",...}");
		goto out;
	}
	if (rc != 0) {
		http_api_error(c->aio, SLUICE_ENOMEM, "out of memory");
		goto out;
	}
	if ((a = http_api_ans_new(c->aio, SH_PUT_BATCH, b.n)) == NULL)
		goto out; /* answered */
	a->n = (uint32_t)b.n;
	memcpy(a->errs, b.errs, b.n * sizeof(*b.errs));
	req.put_batch.items = b.puts;
	req.put_batch.n = (uint32_t)b.nputs;
	req.put_batch.messages = true;
	if (req.put_batch.n == 0) { /* every item refused here */
		char *body = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&body, &len);

		if (f == NULL) {
			http_api_error(c->aio, SLUICE_ENOMEM, "out of memory");
			goto out;
		}
		http_api_put_results(f, a, NULL);
		fclose(f);
		http_api_json(c->aio, 200, body, len);
		free(body);
		goto out;
	}
	http_api_send(c, &req, a);
	a = NULL;
out:
	free(a);
	http_api_batch_fini(&b);
}

/* ---- take -------------------------------------------------------------- */

/* POST /v1/tubes/a,b/take?wait=DUR&n=N&order=strict */
static void
take(struct http_api_call *c, char *tubes)
{
	struct msg_str names[MSG_TAKE_TUBES_MAX];
	struct msg_req req = { .op = MSG_OP_TAKE };
	char order[16];
	uint64_t n = 1;

	for (char *save = NULL, *t = strtok_r(tubes, ",", &save); t != NULL;
	     t = strtok_r(NULL, ",", &save)) {
		if (req.take.ntubes == MSG_TAKE_TUBES_MAX) {
			http_api_error(
			    c->aio, SLUICE_ELIMIT, "take: at most 64 tubes");
			return;
		}
		if (!tube_ok(c, t))
			return;
		names[req.take.ntubes++] = msg_cstr(t);
	}
	if (req.take.ntubes == 0 && !tube_ok(c, ""))
		return;
	if (http_query_dur(&c->q, "wait", &req.take.wait) &&
	    req.take.wait > WAIT_MAX_MS)
		http_query_bad(&c->q, "wait", "at most 60s");
	if (http_query_u64(&c->q, "n", MSG_TAKE_MAX, &n) && n == 0)
		http_query_bad(&c->q, "n", "1..1000");
	if (http_query_str(&c->q, "order", order, sizeof(order))) {
		if (strcmp(order, "strict") == 0)
			req.take.strict = true;
		else if (strcmp(order, "priority") != 0)
			http_query_bad(&c->q, "order",
			    "strict (in the order given) or priority");
	}
	req.take.max = (uint32_t)n;
	req.take.detach = true; /* HTTP keeps no session */
	req.take.durable = true;
	req.take.tubes = names;
	http_api_send_shape(c, &req, SH_TASKS);
}

/* ---- a tube's routes --------------------------------------------------- */

static void
list(struct http_api_call *c, const char *tube)
{
	struct msg_req req = { .op = MSG_OP_LIST };
	char v[16], key[MSG_KEY_MAX + 2];
	uint64_t limit = LIST_DEFAULT, after = 0;
	struct http_api_ans *a;

	if (http_query_str(
	        &c->q, "key", key, sizeof(key))) { /* a search by key */
		struct http_api_ans *a =
		    http_api_ans_new(c->aio, SH_KEY_TASKS, 0);

		if (a == NULL)
			return;
		snprintf(a->tube, sizeof(a->tube), "%s", tube);
		req.op = MSG_OP_PEEK_KEY;
		req.by_key.key = msg_cstr(key);
		req.by_key.tube = msg_cstr(tube);
		http_api_send(c, &req, a);
		return;
	}
	req.list.tube = msg_cstr(tube);
	req.list.order = MSG_ORDER_ATTEMPTS;
	if (http_query_str(&c->q, "state", v, sizeof(v))) {
		int st = state_of(v, true);

		if (st < 0 || st == MSG_ST_DONE)
			http_query_bad(&c->q, "state",
			    "all, ready, delayed, taken, buried or waiting");
		else
			req.list.state = (uint8_t)st;
	}
	if (http_query_str(&c->q, "order", v, sizeof(v))) {
		req.list.order = strcmp(v, "attempts") == 0 ? MSG_ORDER_ATTEMPTS
		    : strcmp(v, "age") == 0                 ? MSG_ORDER_AGE
		    : strcmp(v, "run_at") == 0              ? MSG_ORDER_RUN_AT
		    : strcmp(v, "id") == 0                  ? MSG_ORDER_ID
		                                            : 0;
		if (req.list.order == 0)
			http_query_bad(
			    &c->q, "order", "attempts, age, run_at or id");
	}
	/* The cursor: only ids above it, so it pages in id order only. */
	if (http_query_u64(&c->q, "after", UINT64_MAX, &after)) {
		if (http_query_has(c->q.uri, "order") &&
		    req.list.order != MSG_ORDER_ID)
			http_query_bad(&c->q, "after",
			    "pages in id order only (order=id)");
		req.list.order = MSG_ORDER_ID;
		req.list.after = after;
	}
	if (http_query_u64(&c->q, "limit", MSG_LIST_MAX, &limit) && limit == 0)
		http_query_bad(&c->q, "limit", "1..1000");
	req.list.limit = (uint32_t)limit;
	req.list.payloads = http_query_flag(&c->q, "payloads");
	/* In id order a page says where the next one starts. */
	a = http_api_ans_new(
	    c->aio, req.list.order == MSG_ORDER_ID ? SH_PAGE : SH_TASKS, 0);
	if (a == NULL)
		return;
	a->limit = req.list.limit;
	http_api_send(c, &req, a);
}

/* The states of ?state=S[,S...] as MSG_STATE_BIT()s; 0 when one is
 * unknown or none is given. */
static uint8_t
states_of(const char *v)
{
	char buf[64], *save = NULL;
	uint8_t states = 0;

	snprintf(buf, sizeof(buf), "%s", v);
	for (char *s = strtok_r(buf, ",", &save); s != NULL;
	     s = strtok_r(NULL, ",", &save)) {
		int st = state_of(s, false);

		if (st < 0)
			return 0;
		states |= MSG_STATE_BIT(st);
	}
	return states;
}

/* DELETE /v1/tubes/T/tasks?state=S[,S...]&older=DUR (last changed that
 * long ago) or &created_before=DUR (created that long ago), &force=1 for
 * taken tasks; or ?all=1: flush */
static void
delete_where(struct http_api_call *c, const char *tube)
{
	struct msg_req req = { .op = MSG_OP_DELETE_WHERE };
	bool older, created;
	char v[64];

	if (http_query_flag(&c->q, "all")) {
		req.op = MSG_OP_FLUSH;
		req.tube = msg_cstr(tube);
		http_api_send_count(c, &req, "deleted");
		return;
	}
	req.where.tube = msg_cstr(tube);
	req.where.aged = true;
	if (!http_query_str(&c->q, "state", v, sizeof(v)) ||
	    (req.where.states = states_of(v)) == 0) {
		http_api_error(c->aio, SLUICE_EINVAL,
		    "delete: ?state=S (ready, delayed, taken, buried, done; "
		    "several with commas) and older=DUR or created_before=DUR, "
		    "or ?all=1 for every task of the tube");
		return;
	}
	older = http_query_dur(&c->q, "older", &req.where.older);
	created = http_query_dur(&c->q, "created_before", &req.where.older);
	if (older && created)
		http_query_bad(&c->q, "created_before",
		    "not with older (the age counts from the last change, or "
		    "from the creation)");
	req.where.by = created ? MSG_AGE_CREATED : MSG_AGE_UPDATED;
	c->force = http_query_flag(&c->q, "force");
	req.where.force = c->force;
	req.where.dry = http_query_flag(&c->q, "dry_run");
	http_api_send_count(
	    c, &req, req.where.dry ? "would_delete" : "deleted");
}

/* POST /v1/tubes/T/kick?n=N&delayed=1, or &error=TEXT (the buried tasks
 * of that last error), each with dry_run=1 (the count, nothing kicked) */
static void
kick(struct http_api_call *c, const char *tube)
{
	struct msg_req req = { .op = MSG_OP_KICK };
	char error[MSG_TEXT_MAX + 2];
	uint64_t n = 1;

	req.kick.tube = msg_cstr(tube);
	if (http_query_u64(&c->q, "n", UINT32_MAX, &n) && n == 0)
		http_query_bad(&c->q, "n", "at least 1");
	req.kick.n = (uint32_t)n;
	req.kick.delayed = http_query_flag(&c->q, "delayed");
	if (http_query_str(&c->q, "error", error, sizeof(error))) {
		if (error[0] == '\0' || strlen(error) > MSG_TEXT_MAX)
			http_query_bad(&c->q, "error",
			    "a last error's text, 1..1024 bytes");
		else if (req.kick.delayed)
			http_query_bad(&c->q, "error",
			    "kicks buried tasks only (not with delayed=1)");
		req.kick.error = msg_cstr(error);
	} else if (http_query_has(c->q.uri, "error")) {
		http_query_bad(
		    &c->q, "error", "a last error's text, 1..1024 bytes");
	}
	req.kick.dry = http_query_flag(&c->q, "dry_run");
	http_api_send_count(c, &req, req.kick.dry ? "would_kick" : "kicked");
}

void
http_api_limits(struct http_api_call *c, struct msg_flow *flow, uint8_t *lunset)
{
	char v[64];
	uint64_t x;

	if (http_query_str(&c->q, "rate", v, sizeof(v))) {
		if (strcmp(v, "none") == 0)
			*lunset |= MSG_LIM_RATE;
		else if (rate_parse(v, &flow->rate, &flow->per_ms) != 0)
			http_query_bad(&c->q, "rate", RATE_SYNTAX " or none");
		else
			flow->set |= MSG_LIM_RATE;
	}
	if (http_query_u64(&c->q, "burst", 1000000, &x)) {
		flow->burst = (uint32_t)x;
		if (!(flow->set & MSG_LIM_RATE))
			http_query_bad(&c->q, "burst", "a burst with its rate");
	}
	if (http_query_str(&c->q, "concurrency", v, sizeof(v))) {
		char *end = NULL;
		unsigned long n = strtoul(v, &end, 10);

		if (strcmp(v, "none") == 0)
			*lunset |= MSG_LIM_CONCURRENCY;
		else if (v[0] < '0' || v[0] > '9' || *end != '\0' ||
		    n > 1000000)
			http_query_bad(&c->q, "concurrency",
			    "a whole number of tasks (1 to 1000000) or none");
		else {
			flow->concurrency = (uint32_t)n;
			flow->set |= MSG_LIM_CONCURRENCY;
		}
	}
}

/* The limits of a tube's PUT; the reply carries them, changed or not. */
static void
limits_of(struct http_api_call *c, struct msg_tube_set *m)
{
	http_api_limits(c, &m->flow, &m->lunset);
	m->limits = true;
}

/* PUT /v1/tubes/T?ttr=..&unset=ttr,backoff&rate=100/s&concurrency=10 */
static void
tube_set(struct http_api_call *c, const char *tube)
{
	struct msg_req req = { .op = MSG_OP_TUBE_SET };
	struct msg_tube_conf *k = &req.tube_set.conf;
	char v[MSG_TUBE_MAX + 2];
	uint64_t x;
	bool base, cap;
	struct http_api_ans *a;

	req.tube_set.tube = msg_cstr(tube);
	if (http_query_dur(&c->q, "ttr", &k->ttr))
		k->set |= MSG_TS_TTR;
	if (http_query_u64(&c->q, "max_attempts", UINT32_MAX, &x)) {
		k->max_attempts = (uint32_t)x;
		k->set |= MSG_TS_MAX_ATTEMPTS;
	}
	/* both read (either may be bad), either sets the backoff */
	base = http_query_dur(&c->q, "backoff_base", &k->backoff_base);
	cap = http_query_dur(&c->q, "backoff_cap", &k->backoff_cap);
	if (base || cap)
		k->set |= MSG_TS_BACKOFF;
	if (http_query_dur(&c->q, "keep_done", &k->keep_done))
		k->set |= MSG_TS_KEEP_DONE;
	if (http_query_str(&c->q, "lost_lease", v, sizeof(v))) {
		k->lost_lease_immediate = strcmp(v, "immediate") == 0;
		if (!k->lost_lease_immediate && strcmp(v, "backoff") != 0)
			http_query_bad(
			    &c->q, "lost_lease", "immediate or backoff");
		k->set |= MSG_TS_LOST_LEASE;
	}
	if (http_query_str(&c->q, "dead_letter", v, sizeof(v))) {
		k->dead_letter = msg_cstr(v);
		k->set |= MSG_TS_DEAD_LETTER;
	}
	if (http_query_str(&c->q, "unset", v, sizeof(v))) {
		for (char *save = NULL, *f = strtok_r(v, ",", &save); f != NULL;
		     f = strtok_r(NULL, ",", &save)) {
			unsigned i = 0;

			while (i < 6 && strcmp(f, json_tube_fields[i]) != 0)
				i++;
			if (strcmp(f, "rate") == 0)
				req.tube_set.lunset |= MSG_LIM_RATE;
			else if (strcmp(f, "concurrency") == 0)
				req.tube_set.lunset |= MSG_LIM_CONCURRENCY;
			else if (i == 6)
				http_query_bad(&c->q, "unset",
				    "a list of ttr, max_attempts, backoff, "
				    "keep_done, lost_lease, dead_letter, rate, "
				    "concurrency");
			else
				req.tube_set.unset |= (uint8_t)(1u << i);
		}
	}
	limits_of(c, &req.tube_set);
	if ((a = http_api_ans_new(c->aio, SH_CONF, 0)) == NULL)
		return;
	snprintf(a->tube, sizeof(a->tube), "%s", tube);
	http_api_send(c, &req, a);
}

static void
tube_show(struct http_api_call *c, const char *tube)
{
	struct msg_req req = { .op = MSG_OP_TUBE_SHOW };
	struct http_api_ans *a = http_api_ans_new(c->aio, SH_CONF, 0);

	if (a == NULL)
		return;
	snprintf(a->tube, sizeof(a->tube), "%s", tube);
	req.tube_set.tube = msg_cstr(tube);
	req.tube_set.limits = true;
	http_api_send(c, &req, a);
}

/* /v1/tubes/T[/VERB] */
void
http_api_tube_route(struct http_api_call *c)
{
	const char *m = c->method, *verb = c->nseg > 2 ? c->seg[2] : "";
	char *tube = (char *)c->seg[1];
	struct msg_req req = { 0 };

	if (strcmp(verb, "take") == 0 && strcmp(m, "POST") == 0) {
		take(c, tube);
		return;
	}
	if (!tube_ok(c, tube))
		return;
	if (c->nseg == 2) {
		if (strcmp(m, "GET") == 0) {
			tube_show(c, tube);
		} else if (strcmp(m, "PUT") == 0) {
			tube_set(c, tube);
		} else {
			req.op = MSG_OP_TUBE_DELETE;
			req.tube_delete.tube = msg_cstr(tube);
			req.tube_delete.force = http_query_flag(&c->q, "force");
			http_api_send_count(c, &req, "deleted");
		}
	} else if (strcmp(verb, "tasks") == 0) {
		if (strcmp(m, "POST") == 0 && http_query_flag(&c->q, "batch"))
			put_batch(c, tube);
		else if (strcmp(m, "POST") == 0)
			put_one(c, tube);
		else if (strcmp(m, "GET") == 0)
			list(c, tube);
		else
			delete_where(c, tube);
	} else if (strcmp(verb, "kick") == 0) {
		kick(c, tube);
	} else if (strcmp(verb, "release") == 0) {
		req.op = MSG_OP_RELEASE_ALL; /* every taken task, at once */
		req.tube = msg_cstr(tube);
		http_api_send_count(c, &req, "released");
	} else if (strcmp(verb, "pause") == 0) {
		req.op = MSG_OP_PAUSE;
		req.pause.tube = msg_cstr(tube);
		if (!http_query_dur(&c->q, "for", &req.pause.duration) &&
		    c->q.err[0] == 0)
			http_query_bad(
			    &c->q, "for", "a duration is needed (0 resumes)");
		http_api_send_shape(c, &req, SH_PAUSE);
	} else if (strcmp(verb, "stats") == 0) {
		req.op = MSG_OP_STATS;
		req.stats.tube = msg_cstr(tube);
		req.stats.settings = true;
		http_api_send_shape(c, &req, SH_STATS);
	} else if (strcmp(verb, "hourly") == 0) {
		req.op = MSG_OP_STATS_HOURLY;
		req.tube = msg_cstr(tube);
		http_api_send_shape(c, &req, SH_HOURS);
	} else if (strcmp(verb, "groups") == 0) {
		uint64_t limit = GROUPS_DEFAULT;

		/* ?limit=N (1..1000): the first N by backlog, with the total */
		if (http_query_u64(&c->q, "limit", MSG_GROUPS_MAX, &limit) &&
		    limit == 0)
			http_query_bad(&c->q, "limit", "1..1000");
		req.op = MSG_OP_GROUPS;
		req.groups.tube = msg_cstr(tube);
		req.groups.limit = (uint32_t)(limit ? limit : 1);
		http_api_send_shape(c, &req, SH_GROUPS);
	} else if (strcmp(verb, "errors") == 0) {
		char st[16];

		req.op = MSG_OP_ERRORS; /* with example ids, as json_errors */
		req.errors.tube = msg_cstr(tube);
		req.errors.ids = true;
		/* ?state=buried (the default), ready, delayed, taken, all */
		if (http_query_str(&c->q, "state", st, sizeof(st))) {
			int s = state_of(st, true);

			if (s < 0 || s == MSG_ST_DONE || s == MSG_ST_WAITING)
				http_query_bad(&c->q, "state",
				    "buried, ready, delayed, taken or all");
			req.errors.set_state = s != MSG_ST_BURIED;
			req.errors.state = (uint8_t)(s < 0 ? 0 : s);
		}
		http_api_send_shape(c, &req, SH_ERRORS);
	} else { /* next */
		char st[16] = "ready";
		int s;

		http_query_str(&c->q, "state", st, sizeof(st));
		s = state_of(st, false);
		if (s != MSG_ST_READY && s != MSG_ST_DELAYED &&
		    s != MSG_ST_BURIED && s != MSG_ST_WAITING)
			http_query_bad(&c->q, "state",
			    "ready, delayed, buried or waiting");
		req.op = MSG_OP_PEEK_NEXT;
		req.peek_next.tube = msg_cstr(tube);
		req.peek_next.state = (uint8_t)(s > 0 ? s : MSG_ST_READY);
		http_api_send_shape(c, &req, SH_TASK);
	}
}
