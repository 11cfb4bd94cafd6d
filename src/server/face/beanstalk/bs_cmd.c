/* bs_cmd - the beanstalk face's commands: each parsed command becomes
 * a request of the connection's FIFO (bs_req_new), answered at once by
 * the face (use, watch, ignore, list-tube-used, list-tubes-watched,
 * quit, syntax errors) or encoded as a wire request and posted to the
 * core (events_post_local), whose answer bs_reply.c translates.
 *
 * Reserves block, as in beanstalkd: bs_cmd_reserve posts one only when
 * it is the oldest command of its connection, with a wait cut short by
 * the first DEADLINE_SOON of a job the connection holds (the deadlines
 * of held jobs are kept here only for that; authority over jobs stays
 * with the core, which checks the session). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>

#include "proto/msg.h"
#include "server/face/beanstalk/bs_conn.h"
#include "server/face/beanstalk/bs_proto.h"
#include "server/face/conn.h"
#include "server/face/events.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/log.h"

enum {
	WATCH_MAX = 1024,        /* tubes one connection may watch */
	DEADLINE_SOON_MS = 1000, /* beanstalkd's safety margin */
	WAIT_FOREVER_MS = 1 << 30,
};

/* ---- requests ---------------------------------------------------- */

struct bs_req *
bs_req_new(struct bs_conn *c, const struct bs_cmd *cmd)
{
	struct bs_req *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->conn = c;
	r->ctx.face = &bs_face;
	if (cmd != NULL)
		r->cmd = *cmd;
	r->cmd.tube = NULL;
	r->cmd.body = NULL;
	buf_init(&r->text);
	if (c->tail != NULL)
		c->tail->next = r;
	else
		c->head = r;
	c->tail = r;
	c->nreqs++;
	return r;
}

void
bs_req_free(struct bs_req *r)
{
	if (r == NULL)
		return;
	buf_fini(&r->text);
	free(r);
}

void
bs_req_text(struct bs_req *r, const char *s)
{
	buf_put(&r->text, s, strlen(s));
	r->done = true;
}

void
bs_req_printf(struct bs_req *r, const char *fmt, ...)
{
	char line[BS_LINE_MAX + 64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0)
		buf_put(&r->text, line,
		    (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	r->done = true;
}

/* Encodes `q` and posts it; on failure the request is answered with
 * INTERNAL_ERROR at once. */
static void
req_post(struct bs_req *r, const struct msg_req *q)
{
	struct bs_conn *c = r->conn;
	struct face_beanstalk *bs = c->bs;
	nng_msg *m = NULL;

	buf_reset(&bs->scratch);
	if (msg_encode_req(&bs->scratch, q) != 0 || buf_failed(&bs->scratch) ||
	    nng_msg_alloc(&m, 0) != 0 ||
	    nng_msg_append(m, bs->scratch.data, bs->scratch.len) != 0) {
		if (m != NULL)
			nng_msg_free(m);
		bs_req_text(r, "INTERNAL_ERROR\r\n");
		return;
	}
	memset(&r->ev, 0, sizeof(r->ev));
	r->ev.kind = EVENT_REQUEST;
	r->ev.session = c->session;
	r->ev.ctx = &r->ctx;
	r->ev.msg = m;
	r->posted = true;
	c->posted++;
	conn_hold(c->conn);
	events_post_local(bs->events, &r->ev);
}

/* The sluice name of a beanstalk tube name (the caller checked it), or
 * false when its escaped form is too long. */
static bool
sluice_tube(const char *p, size_t len, char *out, struct msg_str *s)
{
	size_t n = bs_tube_to_sluice(p, len, out);

	*s = (struct msg_str) { out, n };
	return n > 0;
}

/* ---- held jobs (for DEADLINE_SOON) ------------------------------- */

void
bs_held_drop(struct bs_conn *c, uint64_t id)
{
	for (size_t i = 0; i < c->nheld; i++) {
		if (c->held[i].id == id) {
			c->held[i] = c->held[--c->nheld];
			return;
		}
	}
}

void
bs_held_set(struct bs_conn *c, uint64_t id, int64_t deadline)
{
	for (size_t i = 0; i < c->nheld; i++) {
		if (c->held[i].id == id) {
			c->held[i].deadline = deadline;
			return;
		}
	}
	if (c->nheld == c->held_cap) {
		size_t cap = c->held_cap ? c->held_cap * 2 : 8;
		struct bs_held *h = realloc(c->held, cap * sizeof(*h));

		if (h == NULL)
			return; /* only DEADLINE_SOON is lost */
		c->held = h;
		c->held_cap = cap;
	}
	c->held[c->nheld++] = (struct bs_held) { id, deadline };
}

/* The earliest deadline of the jobs still held; INT64_MAX when none. */
static int64_t
held_next(struct bs_conn *c, int64_t now)
{
	int64_t min = INT64_MAX;

	for (size_t i = 0; i < c->nheld;) {
		if (c->held[i].deadline <= now) {
			c->held[i] = c->held[--c->nheld]; /* expired: gone */
			continue;
		}
		if (c->held[i].deadline < min)
			min = c->held[i].deadline;
		i++;
	}
	return min;
}

int
bs_reserve_soon(struct bs_req *r)
{
	struct bs_conn *c = r->conn;
	int64_t now_us = clock_now_us(), soon = held_next(c, now_us);

	/* beanstalkd's rule: a reservation of this connection ends within
	 * the safety margin, by the microsecond */
	if (soon != INT64_MAX &&
	    soon - now_us <= (int64_t)DEADLINE_SOON_MS * 1000)
		return 1;
	if (r->until > clock_mono_ms() && !c->closed) {
		bs_cmd_reserve(r); /* the core's timer ended the wait early */
		return r->posted ? 2 : 0;
	}
	return 0;
}

/* ---- commands ---------------------------------------------------- */

/* A delay of `s` seconds in the core's milliseconds. The core counts it
 * from its turn's clock, a whole millisecond that may begin up to 1 ms
 * before the command arrived: one more keeps a delayed job from being
 * reservable before its delay has passed. */
static uint64_t
delay_ms(uint32_t s)
{
	return s == 0 ? 0 : (uint64_t)s * 1000 + 1;
}

static void
cmd_put(struct bs_req *r, const struct bs_cmd *cmd)
{
	struct bs_conn *c = r->conn;
	struct msg_req q = { .op = MSG_OP_PUT };
	char tube[BS_NAME_MAX];
	uint64_t ttr = (uint64_t)cmd->ttr * 1000;

	c->producer = true;
	sluice_tube(c->use.s, c->use.len, tube, &q.put.tube);
	q.put.priority = cmd->pri;
	q.put.when = delay_ms(cmd->delay);
	q.put.ttr = ttr < c->bs->cfg.max_ttr_ms ? ttr : c->bs->cfg.max_ttr_ms;
	q.put.payload = (struct msg_str) { cmd->body, cmd->body_len };
	req_post(r, &q);
}

/* reserve, reserve-with-timeout: posted when it is the oldest command. */
void
bs_cmd_reserve(struct bs_req *r)
{
	struct bs_conn *c = r->conn;
	struct msg_req q = { .op = MSG_OP_TAKE };
	struct msg_str tubes[MSG_TAKE_TUBES_MAX];
	char names[MSG_TAKE_TUBES_MAX][BS_NAME_MAX];
	int64_t now_us = clock_now_us(), mono = clock_mono_ms();
	int64_t soon = held_next(c, now_us), left_us;
	uint64_t wait = WAIT_FOREVER_MS;

	c->worker = true;
	if (c->nwatch > MSG_TAKE_TUBES_MAX) {
		/* the core takes from at most 64 tubes at once */
		bs_req_text(r, "BAD_FORMAT\r\n");
		return;
	}
	if (r->until == 0) { /* the command's own wait */
		if (r->cmd.kind == BS_RESERVE_TIMEOUT && r->cmd.timeout >= 0)
			wait = r->cmd.timeout > WAIT_FOREVER_MS / 1000
			    ? WAIT_FOREVER_MS
			    : (uint64_t)r->cmd.timeout * 1000;
		r->until = mono + (int64_t)wait;
	} else { /* posted again (bs_reserve_soon): what is left of it */
		wait = r->until > mono ? (uint64_t)(r->until - mono) : 0;
	}
	/* A ready job is reserved whatever the deadlines; the wait for one
	 * ends at the safety margin of the first job held, a millisecond
	 * late rather than early (bs_reserve_soon checks it). */
	r->capped = false;
	left_us = soon == INT64_MAX ? INT64_MAX : soon - now_us;
	if (left_us <= DEADLINE_SOON_MS * 1000) {
		wait = 0;
		r->capped = true;
	} else if (soon != INT64_MAX &&
	    (left_us - DEADLINE_SOON_MS * 1000 + 999) / 1000 < (int64_t)wait) {
		wait = (uint64_t)((left_us - DEADLINE_SOON_MS * 1000 + 999) /
		    1000);
		r->capped = true;
	}
	for (size_t i = 0; i < c->nwatch; i++)
		sluice_tube(
		    c->watch[i].s, c->watch[i].len, names[i], &tubes[i]);
	q.take.wait = wait;
	q.take.max = 1;
	q.take.ntubes = (uint32_t)c->nwatch;
	q.take.tubes = tubes;
	c->waiting = wait > 0;
	req_post(r, &q);
}

static void
cmd_job(struct bs_req *r, uint8_t verb)
{
	struct msg_req q = { .op = MSG_OP_JOB };

	q.job.verb = verb;
	q.job.id = r->cmd.id;
	q.job.priority = r->cmd.pri;
	q.job.delay = delay_ms(r->cmd.delay);
	req_post(r, &q);
}

static void
cmd_peek_next(struct bs_req *r, uint8_t state)
{
	struct bs_conn *c = r->conn;
	struct msg_req q = { .op = MSG_OP_PEEK_NEXT };
	char tube[BS_NAME_MAX];

	sluice_tube(c->use.s, c->use.len, tube, &q.peek_next.tube);
	q.peek_next.state = state;
	req_post(r, &q);
}

/* A stats request: of one tube (`tube` set), or of all. */
static void
cmd_stats(struct bs_req *r, bool one)
{
	struct msg_req q = { .op = MSG_OP_STATS };
	char tube[BS_NAME_MAX];

	if (one)
		sluice_tube(r->tube, r->tube_len, tube, &q.tube);
	else /* list-tubes: the most one stats reply lists */
		q.stats = (struct msg_stats_req) { .page = true,
			.limit = MSG_STATS_TUBES_MAX };
	req_post(r, &q);
}

void
bs_cmd_repost_pause(struct bs_req *r)
{
	struct msg_req q = { .op = MSG_OP_PAUSE };
	char tube[BS_NAME_MAX];

	r->step = 1;
	sluice_tube(r->tube, r->tube_len, tube, &q.pause.tube);
	q.pause.duration = (uint64_t)r->cmd.delay * 1000;
	/* the tube exists for beanstalk clients (used or watched) even when
	 * the core has never seen a job in it */
	q.pause.create = true;
	if (r->conn->closed) {
		r->done = true;
		return;
	}
	req_post(r, &q);
}

static void
watch_yaml(struct bs_req *r)
{
	struct bs_conn *c = r->conn;
	struct buf y;

	buf_init(&y);
	buf_put(&y, "---\n", 4);
	for (size_t i = 0; i < c->nwatch; i++) {
		buf_put(&y, "- ", 2);
		buf_put(&y, c->watch[i].s, c->watch[i].len);
		buf_put(&y, "\n", 1);
	}
	bs_req_yaml(r, &y);
	buf_fini(&y);
}

static void
cmd_watch(struct bs_req *r, const struct bs_cmd *cmd)
{
	struct bs_conn *c = r->conn;

	if (!bs_conn_watches(c, cmd->tube, cmd->tube_len)) {
		if (c->nwatch == c->watch_cap) {
			size_t cap = c->watch_cap * 2;
			struct bs_name *w = cap <= WATCH_MAX
			    ? realloc(c->watch, cap * sizeof(*w))
			    : NULL;

			if (w == NULL) {
				bs_req_text(r, "OUT_OF_MEMORY\r\n");
				return;
			}
			c->watch = w;
			c->watch_cap = cap;
		}
		memcpy(c->watch[c->nwatch].s, cmd->tube, cmd->tube_len);
		c->watch[c->nwatch].len = cmd->tube_len;
		c->nwatch++;
	}
	bs_req_printf(r, "WATCHING %zu\r\n", c->nwatch);
}

static void
cmd_ignore(struct bs_req *r, const struct bs_cmd *cmd)
{
	struct bs_conn *c = r->conn;

	for (size_t i = 0; i < c->nwatch; i++) {
		if (c->watch[i].len != cmd->tube_len ||
		    memcmp(c->watch[i].s, cmd->tube, cmd->tube_len) != 0)
			continue;
		if (c->nwatch == 1) {
			bs_req_text(r, "NOT_IGNORED\r\n");
			return;
		}
		/* the last tube takes its place, as in beanstalkd, so
		 * list-tubes-watched shows the same order */
		c->watch[i] = c->watch[--c->nwatch];
		break;
	}
	bs_req_printf(r, "WATCHING %zu\r\n", c->nwatch);
}

/* Whether the command is answered with a job's body (up to
 * max-job-size): those of a connection not yet written are few, so a
 * client that pipelines peeks and never reads holds little (the output
 * mark and BULKY_MAX bodies). */
bool
bs_cmd_bulky(enum bs_kind k)
{
	return k == BS_PEEK || k == BS_PEEK_READY || k == BS_PEEK_DELAYED ||
	    k == BS_PEEK_BURIED || k == BS_RESERVE || k == BS_RESERVE_TIMEOUT ||
	    k == BS_RESERVE_JOB;
}

/* One parsed command: its request, answered now or posted. */
void
bs_cmd_exec(struct bs_conn *c, const struct bs_cmd *cmd)
{
	struct bs_req *r = bs_req_new(c, cmd);
	char tmp[BS_NAME_MAX];

	if (r == NULL) {
		c->eof = true; /* out of memory: give up on this client */
		return;
	}
	if (bs_cmd_bulky(cmd->kind)) {
		r->bulky = true;
		c->nbulky++;
	}
	if (cmd->tube != NULL) {
		memcpy(r->tube, cmd->tube, cmd->tube_len);
		r->tube_len = cmd->tube_len;
		r->tube[r->tube_len] = '\0';
		/* a name whose sluice form is too long */
		if (bs_tube_to_sluice(cmd->tube, cmd->tube_len, tmp) == 0) {
			bs_req_text(r, "BAD_FORMAT\r\n");
			return;
		}
	}
	switch (cmd->kind) {
	case BS_PUT:
		cmd_put(r, cmd);
		break;
	case BS_USE:
		memcpy(c->use.s, cmd->tube, cmd->tube_len);
		c->use.len = cmd->tube_len;
		bs_req_printf(r, "USING %.*s\r\n", (int)c->use.len, c->use.s);
		break;
	case BS_RESERVE:
	case BS_RESERVE_TIMEOUT:
		break; /* posted when it is the oldest (conn_flush) */
	case BS_RESERVE_JOB:
		cmd_job(r, MSG_JOB_TAKE);
		break;
	case BS_DELETE:
		cmd_job(r, MSG_JOB_DELETE);
		break;
	case BS_RELEASE:
		cmd_job(r, MSG_JOB_RELEASE);
		break;
	case BS_BURY:
		cmd_job(r, MSG_JOB_BURY);
		break;
	case BS_TOUCH:
		cmd_job(r, MSG_JOB_TOUCH);
		break;
	case BS_WATCH:
		cmd_watch(r, cmd);
		break;
	case BS_IGNORE:
		cmd_ignore(r, cmd);
		break;
	case BS_PEEK: {
		struct msg_req q = { .op = MSG_OP_PEEK };

		q.id = cmd->id;
		req_post(r, &q);
		break;
	}
	case BS_PEEK_READY:
		cmd_peek_next(r, MSG_ST_READY);
		break;
	case BS_PEEK_DELAYED:
		cmd_peek_next(r, MSG_ST_DELAYED);
		break;
	case BS_PEEK_BURIED:
		cmd_peek_next(r, MSG_ST_BURIED);
		break;
	case BS_KICK: {
		struct msg_req q = { .op = MSG_OP_KICK };
		char tube[BS_NAME_MAX];

		if (cmd->bound == 0) {
			bs_req_text(r, "KICKED 0\r\n");
			break;
		}
		sluice_tube(c->use.s, c->use.len, tube, &q.kick.tube);
		q.kick.n =
		    cmd->bound > UINT32_MAX ? UINT32_MAX : (uint32_t)cmd->bound;
		q.kick.delayed = true;
		req_post(r, &q);
		break;
	}
	case BS_KICK_JOB: {
		struct msg_req q = { .op = MSG_OP_KICK_ID };

		q.id = cmd->id;
		req_post(r, &q);
		break;
	}
	case BS_STATS_JOB: {
		struct msg_req q = { .op = MSG_OP_PEEK };

		q.id = cmd->id;
		req_post(r, &q);
		break;
	}
	case BS_STATS_TUBE:
	case BS_PAUSE_TUBE:
		cmd_stats(r, true);
		break;
	case BS_STATS:
	case BS_LIST_TUBES:
		cmd_stats(r, false);
		break;
	case BS_LIST_TUBE_USED:
		bs_req_printf(r, "USING %.*s\r\n", (int)c->use.len, c->use.s);
		break;
	case BS_LIST_TUBES_WATCHED:
		watch_yaml(r);
		break;
	case BS_QUIT:
		r->done = true; /* conn_flush closes when it gets there */
		break;
	default:
		bs_req_text(r, "INTERNAL_ERROR\r\n");
		break;
	}
}
