/* bs - the beanstalk face: beanstalkd's text protocol, on the core thread.
 *
 * Threads. None of its own: the listener and every connection are sockets
 * of the core's loop (server/conn.h), so a command's bytes, its request to
 * the core, the core's answer and the reply text never cross a thread.
 *
 * A connection. Bytes received are parsed (bs_proto.c) into commands,
 * each a `struct bs_req` in the connection's FIFO. A command either gets
 * its reply text at once (local commands, syntax errors), or is encoded
 * as a wire request and posted to the core (net_post_local); its reply is
 * translated to text when the core answers. Replies are written strictly
 * in FIFO order: the head leaves when it is done, then the next.
 *
 * Reserves block, as in beanstalkd: a reserve is posted only once every
 * command before it is answered (so DEADLINE_SOON sees the connection's
 * reservations as they are), and nothing after it is parsed until it is
 * answered (so a later put cannot feed it). Every other command is posted
 * as soon as it is parsed: the core answers one session's requests in
 * order, and a pipelined client gets group commit.
 *
 * Sessions. Each connection is a core session (net_face_session): its
 * reserves are session leases, released by the core when the connection
 * closes (NET_SESSION_CLOSE, posted after its last request). The face
 * remembers the deadline of each job the connection holds only to answer
 * DEADLINE_SOON; authority over jobs stays with the core (MSG_OP_JOB
 * checks the session).
 *
 * Lifetime. A request posted to the core holds its connection
 * (conn_hold) until face_reply/face_drop; conn.c frees the connection,
 * and bs_conn_free its requests, once it is closed and nothing holds it. */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "log/seg.h"
#include "proto/msg.h"
#include "server/face/beanstalk/beanstalk.h"
#include "server/face/beanstalk/bs_proto.h"
#include "server/face/conn.h"
#include "server/face/events.h"
#include "server/face/face.h"
#include "sluice.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/log.h"

enum {
	RECV_MIN = 16 * 1024,    /* input room past the largest command */
	OUT_HIGH = 4 << 20,      /* stop parsing while this much is unsent */
	REQS_MAX = 1024,         /* commands in flight per connection */
	WATCH_MAX = 1024,        /* tubes one connection may watch */
	BULKY_MAX = 4,           /* commands answered with a job body */
	DEADLINE_SOON_MS = 1000, /* beanstalkd's safety margin */
	WAIT_FOREVER_MS = 1 << 30,
};

struct bs_conn;

/* One command of a connection. */
struct bs_req {
	struct bs_req *next; /* the connection's FIFO */
	struct bs_conn *conn;
	struct net_ctx ctx; /* face = &bs_face */
	struct net_ev ev;   /* the posted request */
	struct bs_cmd cmd;  /* strings in it are not valid after parse */
	char tube[BS_NAME_MAX + 1]; /* the command's tube, beanstalk form */
	size_t tube_len;
	bool posted; /* the core holds it */
	bool done;   /* `text` is the reply */
	bool capped; /* reserve: its wait stops at a DEADLINE_SOON */
	bool bulky;  /* answered with a job's body (counted in nbulky) */
	int step;    /* pause-tube: 0 looks the tube up, 1 pauses it */
	struct buf text;
};

struct held {
	uint64_t id;
	int64_t deadline; /* unix ms */
};

struct name {
	char s[BS_NAME_MAX + 1];
	size_t len;
};

struct bs_conn {
	struct bs *bs;
	struct conn *conn;
	struct bs_conn *next, *prev; /* every connection */
	uint32_t session;
	struct bs_parser ps;
	bool eof;     /* out of memory: close */
	bool quit;    /* quit: close once the replies before it are sent */
	bool closed;  /* the socket closed; freed once nothing is held */
	bool waiting; /* a reserve waits in the core */
	bool producer, worker;
	struct bs_req *head, *tail;
	unsigned nreqs;  /* in the FIFO */
	unsigned posted; /* of them, held by the core */
	unsigned nbulky; /* of them, answered with a job's body */
	struct name use;
	struct name *watch;
	size_t nwatch, watch_cap;
	struct held *held;
	size_t nheld, held_cap;
};

/* The counters of the stats command (beanstalkd's cmd-*). */
enum { CMD_COUNTERS = BS_KIND_END_ };

struct bs {
	struct net *net;
	struct bs_config cfg;
	struct bs_conn *conns;
	uint64_t cmds[CMD_COUNTERS];
	uint64_t total_conns, nconns;
	int64_t started_ms;
	char id[17];
	struct buf scratch; /* a request being encoded */
};

static const char *const reply_lines[] = {
	"NOT_FOUND\r\n",
	"TIMED_OUT\r\n",
	"DEADLINE_SOON\r\n",
};

/* ---- replies from the core ------------------------------------------ */

static void answer(struct bs_req *r, nng_msg *m);

static void
face_reply(struct net_ctx *ctx, nng_msg *msg)
{
	answer(
	    (struct bs_req *)((char *)ctx - offsetof(struct bs_req, ctx)), msg);
}

static void
face_drop(struct net_ctx *ctx)
{
	answer((struct bs_req *)((char *)ctx - offsetof(struct bs_req, ctx)),
	    NULL);
}

static const char *
face_peer(const struct net_ctx *ctx)
{
	return ((const struct bs_req *)((const char *)ctx -
	            offsetof(struct bs_req, ctx)))
	    ->conn->conn->peer;
}

static bool
face_alive(const struct net_ctx *ctx)
{
	return !((const struct bs_req *)((const char *)ctx -
	             offsetof(struct bs_req, ctx)))
	            ->conn->closed;
}

static const struct net_face bs_face = { face_reply, face_drop, face_peer,
	face_alive };

/* ---- requests ---------------------------------------------------------- */

static struct bs_req *
req_new(struct bs_conn *c, const struct bs_cmd *cmd)
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

static void
req_free(struct bs_req *r)
{
	if (r == NULL)
		return;
	buf_fini(&r->text);
	free(r);
}

static void
req_text(struct bs_req *r, const char *s)
{
	buf_put(&r->text, s, strlen(s));
	r->done = true;
}

static void req_printf(struct bs_req *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
req_printf(struct bs_req *r, const char *fmt, ...)
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
	struct bs *bs = c->bs;
	nng_msg *m = NULL;

	buf_reset(&bs->scratch);
	if (msg_encode_req(&bs->scratch, q) != 0 || buf_failed(&bs->scratch) ||
	    nng_msg_alloc(&m, 0) != 0 ||
	    nng_msg_append(m, bs->scratch.data, bs->scratch.len) != 0) {
		if (m != NULL)
			nng_msg_free(m);
		req_text(r, "INTERNAL_ERROR\r\n");
		return;
	}
	memset(&r->ev, 0, sizeof(r->ev));
	r->ev.kind = NET_REQUEST;
	r->ev.session = c->session;
	r->ev.ctx = &r->ctx;
	r->ev.msg = m;
	r->posted = true;
	c->posted++;
	conn_hold(c->conn);
	net_post_local(bs->net, &r->ev);
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

/* ---- held jobs (for DEADLINE_SOON) ------------------------------------ */

static void
held_drop(struct bs_conn *c, uint64_t id)
{
	for (size_t i = 0; i < c->nheld; i++) {
		if (c->held[i].id == id) {
			c->held[i] = c->held[--c->nheld];
			return;
		}
	}
}

static void
held_set(struct bs_conn *c, uint64_t id, int64_t deadline)
{
	for (size_t i = 0; i < c->nheld; i++) {
		if (c->held[i].id == id) {
			c->held[i].deadline = deadline;
			return;
		}
	}
	if (c->nheld == c->held_cap) {
		size_t cap = c->held_cap ? c->held_cap * 2 : 8;
		struct held *h = realloc(c->held, cap * sizeof(*h));

		if (h == NULL)
			return; /* only DEADLINE_SOON is lost */
		c->held = h;
		c->held_cap = cap;
	}
	c->held[c->nheld++] = (struct held) { id, deadline };
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

/* ---- the YAML of stats ------------------------------------------------ */

static void
yaml_u(struct buf *b, const char *key, uint64_t v)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "%s: %" PRIu64 "\n", key, v);

	buf_put(b, line, (size_t)n);
}

static void
yaml_s(struct buf *b, const char *key, const char *v, size_t len)
{
	buf_put(b, key, strlen(key));
	buf_put(b, ": ", 2);
	buf_put(b, v, len);
	buf_put(b, "\n", 1);
}

/* "OK <bytes>\r\n<yaml>\r\n" from a body in `y`. */
static void
req_yaml(struct bs_req *r, const struct buf *y)
{
	req_printf(r, "OK %zu\r\n", y->len);
	buf_put(&r->text, y->data, y->len);
	buf_put(&r->text, "\r\n", 2);
}

static uint64_t
kv_find(const struct msg_kvs *kvs, const char *name)
{
	struct msg_iter it = kvs->it;
	struct msg_kv kv;

	while (msg_next_kv(&it, &kv))
		if (kv.name.len == strlen(name) &&
		    memcmp(kv.name.p, name, kv.name.len) == 0)
			return kv.value;
	return 0;
}

static bool
conn_watches(const struct bs_conn *c, const char *p, size_t len)
{
	for (size_t i = 0; i < c->nwatch; i++)
		if (c->watch[i].len == len &&
		    memcmp(c->watch[i].s, p, len) == 0)
			return true;
	return false;
}

struct tube_refs {
	uint64_t using, watching, waiting;
};

static struct tube_refs
tube_refs(const struct bs *bs, const char *p, size_t len)
{
	struct tube_refs t = { 0, 0, 0 };

	for (const struct bs_conn *c = bs->conns; c != NULL; c = c->next) {
		if (c->closed)
			continue;
		if (c->use.len == len && memcmp(c->use.s, p, len) == 0)
			t.using ++;
		if (conn_watches(c, p, len)) {
			t.watching++;
			if (c->waiting)
				t.waiting++;
		}
	}
	return t;
}

static bool
refd(const struct bs *bs, const char *p, size_t len)
{
	struct tube_refs t = tube_refs(bs, p, len);

	return t.using + t.watching > 0;
}

/* A tube exists for beanstalk clients when it holds jobs or a connection
 * uses or watches it ("default" always does). */
static bool
tube_exists(const struct bs *bs, const struct msg_tube_stats *ts,
    const char *name, size_t len)
{
	if (len == 7 && memcmp(name, "default", 7) == 0)
		return true;
	if (ts != NULL && ts->ready + ts->delayed + ts->taken + ts->buried > 0)
		return true;
	return refd(bs, name, len);
}

/* Calls fn for every tube beanstalk clients see: "default", the core's
 * tubes in creation order, then those only referenced by connections. */
typedef void tube_fn(
    void *arg, const char *name, size_t len, const struct msg_tube_stats *ts);

static bool
listed(const struct buf *seen, const char *p, size_t len)
{
	for (size_t off = 0; off < seen->len;) {
		size_t n = strlen((const char *)seen->data + off);

		if (n == len && memcmp(seen->data + off, p, len) == 0)
			return true;
		off += n + 1;
	}
	return false;
}

static void
see(struct buf *seen, const char *p, size_t len)
{
	buf_put(seen, p, len);
	buf_put_u8(seen, 0);
}

static void
each_tube(
    const struct bs *bs, const struct msg_stats *st, tube_fn *fn, void *arg)
{
	struct msg_iter it = st->it;
	struct msg_tube_stats ts;
	char name[BS_NAME_MAX + 1];
	struct buf seen;
	size_t n;

	buf_init(&seen);
	fn(arg, "default", 7, NULL);
	see(&seen, "default", 7);
	while (msg_next_tube_stats(&it, &ts)) {
		/* only names a beanstalk client can use (no "x:zz") */
		if (!bs_tube_reachable(ts.name.p, ts.name.len))
			continue;
		n = bs_tube_from_sluice(ts.name.p, ts.name.len, name);
		if (listed(&seen, name, n) || !tube_exists(bs, &ts, name, n))
			continue;
		fn(arg, name, n, &ts);
		see(&seen, name, n);
	}
	for (const struct bs_conn *c = bs->conns; c != NULL; c = c->next) {
		if (c->closed)
			continue;
		for (size_t i = 0; i <= c->nwatch; i++) {
			const struct name *t =
			    i < c->nwatch ? &c->watch[i] : &c->use;

			if (listed(&seen, t->s, t->len))
				continue;
			fn(arg, t->s, t->len, NULL);
			see(&seen, t->s, t->len);
		}
	}
	buf_fini(&seen);
}

static void
list_one(
    void *arg, const char *name, size_t len, const struct msg_tube_stats *ts)
{
	(void)ts;
	buf_put(arg, "- ", 2);
	buf_put(arg, name, len);
	buf_put(arg, "\n", 1);
}

static void
count_one(
    void *arg, const char *name, size_t len, const struct msg_tube_stats *ts)
{
	(void)name;
	(void)len;
	(void)ts;
	(*(uint64_t *)arg)++;
}

static const char *const cmd_stat_names[][2] = {
	{ "cmd-put", "put" },
	{ "cmd-peek", "peek" },
	{ "cmd-peek-ready", "peek-ready" },
	{ "cmd-peek-delayed", "peek-delayed" },
	{ "cmd-peek-buried", "peek-buried" },
	{ "cmd-reserve", "reserve" },
	{ "cmd-reserve-with-timeout", "reserve-with-timeout" },
	{ "cmd-delete", "delete" },
	{ "cmd-release", "release" },
	{ "cmd-use", "use" },
	{ "cmd-watch", "watch" },
	{ "cmd-ignore", "ignore" },
	{ "cmd-bury", "bury" },
	{ "cmd-kick", "kick" },
	{ "cmd-touch", "touch" },
	{ "cmd-stats", "stats" },
	{ "cmd-stats-job", "stats-job" },
	{ "cmd-stats-tube", "stats-tube" },
	{ "cmd-list-tubes", "list-tubes" },
	{ "cmd-list-tube-used", "list-tube-used" },
	{ "cmd-list-tubes-watched", "list-tubes-watched" },
	{ "cmd-pause-tube", "pause-tube" },
};

static uint64_t
cmd_count(const struct bs *bs, const char *name)
{
	for (int k = 1; k < BS_KIND_END_; k++)
		if (strcmp(bs_kind_name((enum bs_kind)k), name) == 0)
			return bs->cmds[k];
	return 0;
}

static double
tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void
stats_yaml(struct bs *bs, const struct msg_stats *st, struct buf *y)
{
	uint64_t ntubes = 0, producers = 0, workers = 0, waiting = 0;
	char host[256] = "", line[128];
	struct rusage ru;
	struct utsname un;

	each_tube(bs, st, count_one, &ntubes);
	for (const struct bs_conn *c = bs->conns; c != NULL; c = c->next) {
		if (c->closed)
			continue;
		producers += c->producer;
		workers += c->worker;
		waiting += c->waiting;
	}
	buf_put(y, "---\n", 4);
	/* urgent (priority < 1024) is not counted by the core */
	yaml_u(y, "current-jobs-urgent", 0);
	yaml_u(y, "current-jobs-ready", st->totals.ready);
	yaml_u(y, "current-jobs-reserved", st->totals.taken);
	yaml_u(y, "current-jobs-delayed", st->totals.delayed);
	yaml_u(y, "current-jobs-buried", st->totals.buried);
	for (size_t i = 0; i < sizeof(cmd_stat_names) / sizeof(*cmd_stat_names);
	     i++)
		yaml_u(y, cmd_stat_names[i][0],
		    cmd_count(bs, cmd_stat_names[i][1]));
	yaml_u(y, "job-timeouts", kv_find(&st->totals.more, "ttr_expired"));
	yaml_u(y, "total-jobs", kv_find(&st->totals.more, "puts"));
	yaml_u(y, "max-job-size", bs->cfg.max_job);
	yaml_u(y, "current-tubes", ntubes);
	yaml_u(y, "current-connections", bs->nconns);
	yaml_u(y, "current-producers", producers);
	yaml_u(y, "current-workers", workers);
	yaml_u(y, "current-waiting", waiting);
	yaml_u(y, "total-connections", bs->total_conns);
	yaml_u(y, "pid", (uint64_t)getpid());
	/* the protocol this face speaks, as beanstalkd says it (clients
	 * compare it to enable commands: kick-job needs 1.8); sluice's own
	 * version has a field of its own */
	yaml_s(y, "version", BS_VERSION, strlen(BS_VERSION));
	snprintf(line, sizeof(line), "\"%d.%d.%d\"", SLUICE_VERSION_MAJOR,
	    SLUICE_VERSION_MINOR, SLUICE_VERSION_PATCH);
	yaml_s(y, "sluice-version", line, strlen(line));
	memset(&ru, 0, sizeof(ru));
	getrusage(RUSAGE_SELF, &ru);
	snprintf(line, sizeof(line), "%.6f", tv_s(ru.ru_utime));
	yaml_s(y, "rusage-utime", line, strlen(line));
	snprintf(line, sizeof(line), "%.6f", tv_s(ru.ru_stime));
	yaml_s(y, "rusage-stime", line, strlen(line));
	yaml_u(
	    y, "uptime", (uint64_t)((clock_now_ms() - bs->started_ms) / 1000));
	yaml_u(y, "binlog-oldest-index", 0);
	yaml_u(y, "binlog-current-index", kv_find(&st->more, "log_segments"));
	yaml_u(y, "binlog-records-migrated", 0);
	yaml_u(y, "binlog-records-written", st->lsn);
	yaml_u(y, "binlog-max-size",
	    bs->cfg.seg_size ? bs->cfg.seg_size : SEG_SIZE_DEFAULT);
	yaml_s(y, "draining", "false", 5);
	yaml_s(y, "id", bs->id, strlen(bs->id));
	gethostname(host, sizeof(host) - 1);
	yaml_s(y, "hostname", host, strlen(host));
	memset(&un, 0, sizeof(un));
	uname(&un);
	yaml_s(y, "os", un.version, strlen(un.version));
	yaml_s(y, "platform", un.machine, strlen(un.machine));
}

static void
tube_yaml(struct bs *bs, const char *name, size_t len,
    const struct msg_tube_stats *ts, struct buf *y)
{
	struct tube_refs t = tube_refs(bs, name, len);
	int64_t now = clock_now_ms(), left = 0;

	if (ts->paused_until > (uint64_t)now)
		left = ((int64_t)ts->paused_until - now) / 1000;
	buf_put(y, "---\n", 4);
	yaml_s(y, "name", name, len);
	yaml_u(y, "current-jobs-urgent", 0);
	yaml_u(y, "current-jobs-ready", ts->ready);
	yaml_u(y, "current-jobs-reserved", ts->taken);
	yaml_u(y, "current-jobs-delayed", ts->delayed);
	yaml_u(y, "current-jobs-buried", ts->buried);
	yaml_u(y, "total-jobs", kv_find(&ts->more, "puts"));
	yaml_u(y, "current-using", t.using);
	yaml_u(y, "current-watching", t.watching);
	yaml_u(y, "current-waiting", t.waiting);
	yaml_u(y, "cmd-delete", kv_find(&ts->more, "deletes"));
	yaml_u(y, "cmd-pause-tube", 0);
	/* the core keeps when a pause ends, not how long it was */
	yaml_u(y, "pause", (uint64_t)left);
	yaml_u(y, "pause-time-left", (uint64_t)left);
}

static const char *
state_word(uint8_t st)
{
	switch (st) {
	case MSG_ST_READY:
		return "ready";
	case MSG_ST_DELAYED:
		return "delayed";
	case MSG_ST_TAKEN:
		return "reserved";
	default:
		return "buried";
	}
}

static uint64_t
secs(int64_t ms)
{
	return ms > 0 ? (uint64_t)(ms / 1000) : 0;
}

static void
job_yaml(const struct msg_task *t, struct buf *y)
{
	char name[BS_NAME_MAX + 1];
	size_t n = bs_tube_from_sluice(t->tube.p, t->tube.len, name);
	int64_t now = clock_now_ms(), left = 0;

	if (t->state == MSG_ST_TAKEN)
		left = (int64_t)t->deadline - now;
	else if (t->state == MSG_ST_DELAYED)
		left = (int64_t)t->run_at - now;
	buf_put(y, "---\n", 4);
	yaml_u(y, "id", t->id);
	yaml_s(y, "tube", name, n);
	yaml_s(y, "state", state_word(t->state), strlen(state_word(t->state)));
	yaml_u(y, "pri", t->priority);
	yaml_u(y, "age", secs(now - (int64_t)t->created_at));
	/* the delay given at the last put or release */
	yaml_u(y, "delay", secs((int64_t)t->run_at - (int64_t)t->updated_at));
	yaml_u(y, "ttr", t->ttr / 1000);
	yaml_u(y, "time-left", secs(left));
	yaml_u(y, "file", 0);
	yaml_u(y, "reserves", t->attempts);
	yaml_u(y, "timeouts", 0);
	yaml_u(y, "releases", 0);
	yaml_u(y, "buries", 0);
	yaml_u(y, "kicks", 0);
}

/* ---- translating the core's replies ---------------------------------- */

static void
job_text(struct bs_req *r, const char *word, const struct msg_task *t)
{
	req_printf(r, "%s %" PRIu64 " %zu\r\n", word, t->id, t->payload.len);
	buf_put(&r->text, t->payload.p, t->payload.len);
	buf_put(&r->text, "\r\n", 2);
}

/* Whether the command names a job by its id. */
static bool
names_job(enum bs_kind k)
{
	return k == BS_DELETE || k == BS_RELEASE || k == BS_BURY ||
	    k == BS_TOUCH || k == BS_PEEK || k == BS_KICK_JOB ||
	    k == BS_STATS_JOB || k == BS_RESERVE_JOB;
}

/* An error reply as a beanstalk line: every status of the core, as
 * beanstalkd would answer in its place (docs/beanstalk.md). */
static void
err_text(struct bs_req *r, const struct msg_rep *rep)
{
	switch (rep->status) {
	case SLUICE_ENOTFOUND:
	case SLUICE_ESTALE:
	case SLUICE_ESTATE:
	case SLUICE_EPERM:     /* beanstalkd has no other job to show */
	case SLUICE_EEXIST:    /* not reached: beanstalk jobs have no key */
	case SLUICE_ENOTEMPTY: /* not reached: no tube is deleted here */
		req_text(r, reply_lines[0]);
		break;
	case SLUICE_EINVAL:
	case SLUICE_ETUBE:
	case SLUICE_EKEY:
		/* a job command's id no job can have (kick-job 0):
		 * beanstalkd finds no such job */
		req_text(r,
		    names_job(r->cmd.kind) ? reply_lines[0] : "BAD_FORMAT\r\n");
		break;
	case SLUICE_ETIMEDOUT:
		req_text(r, reply_lines[1]);
		break;
	case SLUICE_ESHUTDOWN:
		req_text(r, "DRAINING\r\n");
		break;
	case SLUICE_ETOOBIG:
	case SLUICE_EMSGSIZE:
		req_text(r,
		    r->cmd.kind == BS_PUT ? "JOB_TOO_BIG\r\n"
		                          : "OUT_OF_MEMORY\r\n");
		break;
	case SLUICE_ENOMEM:
	case SLUICE_ENOSPC:
	case SLUICE_ELIMIT:
	case SLUICE_ELOG: /* beanstalkd's when its binlog takes no write */
	case SLUICE_EPAUSED:
		req_text(r, "OUT_OF_MEMORY\r\n");
		break;
	case SLUICE_ENOTLEADER:
		/* not beanstalkd's: a follower names where writes go */
		req_printf(r, "NOT_LEADER %.*s\r\n", (int)rep->err.leader.len,
		    rep->err.leader.p);
		break;
	default:
		/* EPROTO, ETRUNC, EVERSION, EUNKNOWNOP, ECORRUPT, EEPOCH,
		 * EAUTH: a fault of this server, as beanstalkd means it;
		 * EREPLICA: done here, not known to be on the replicas */
		req_text(r, "INTERNAL_ERROR\r\n");
		break;
	}
}

static void
first_task(const struct msg_rep *rep, struct msg_task *t, bool *have)
{
	struct msg_iter it = rep->tasks.it;

	*have = rep->tasks.n > 0 && msg_next_task(&it, t);
}

static void repost_pause(struct bs_req *r);

/* stats-tube and pause-tube of a tube the core never had (ENOTFOUND): it
 * exists here all the same while a connection uses or watches it. */
static void
unknown_tube(struct bs_req *r)
{
	struct msg_tube_stats none;
	struct buf y;

	if (!tube_exists(r->conn->bs, NULL, r->tube, r->tube_len)) {
		req_text(r, reply_lines[0]);
		return;
	}
	if (r->cmd.kind == BS_PAUSE_TUBE) {
		repost_pause(r);
		return;
	}
	memset(&none, 0, sizeof(none));
	buf_init(&y);
	tube_yaml(r->conn->bs, r->tube, r->tube_len, &none, &y);
	req_yaml(r, &y);
	buf_fini(&y);
}

static void
translate(struct bs_req *r, const struct msg_rep *rep)
{
	struct bs_conn *c = r->conn;
	struct msg_task t;
	struct buf y;
	bool have;

	if (rep->status == SLUICE_ENOTFOUND && r->step == 0 &&
	    (r->cmd.kind == BS_STATS_TUBE || r->cmd.kind == BS_PAUSE_TUBE)) {
		unknown_tube(r);
		return;
	}
	if (rep->status != 0) {
		if (rep->status == SLUICE_ETIMEDOUT && r->capped)
			req_text(r, reply_lines[2]);
		else
			err_text(r, rep);
		return;
	}
	buf_init(&y);
	switch (r->cmd.kind) {
	case BS_PUT:
		req_printf(r, "INSERTED %" PRIu64 "\r\n", rep->put.id);
		break;
	case BS_RESERVE:
	case BS_RESERVE_TIMEOUT:
	case BS_RESERVE_JOB:
		first_task(rep, &t, &have);
		if (!have) {
			req_text(r, reply_lines[r->capped ? 2 : 1]);
			break;
		}
		held_set(c, t.id, (int64_t)t.deadline);
		job_text(r, "RESERVED", &t);
		break;
	case BS_DELETE:
		held_drop(c, r->cmd.id);
		req_text(r, "DELETED\r\n");
		break;
	case BS_RELEASE:
		held_drop(c, r->cmd.id);
		req_text(r, "RELEASED\r\n");
		break;
	case BS_BURY:
		held_drop(c, r->cmd.id);
		req_text(r, "BURIED\r\n");
		break;
	case BS_TOUCH:
		first_task(rep, &t, &have);
		if (have)
			held_set(c, t.id, (int64_t)t.deadline);
		req_text(r, "TOUCHED\r\n");
		break;
	case BS_PEEK:
	case BS_PEEK_READY:
	case BS_PEEK_DELAYED:
	case BS_PEEK_BURIED:
		job_text(r, "FOUND", &rep->task);
		break;
	case BS_KICK:
		req_printf(r, "KICKED %" PRIu64 "\r\n", rep->count);
		break;
	case BS_KICK_JOB:
		req_text(r, "KICKED\r\n");
		break;
	case BS_STATS_JOB:
		job_yaml(&rep->task, &y);
		req_yaml(r, &y);
		break;
	case BS_STATS_TUBE:
	case BS_PAUSE_TUBE: {
		struct msg_iter it = rep->stats.it;
		struct msg_tube_stats ts;

		if (r->cmd.kind == BS_PAUSE_TUBE && r->step == 1) {
			req_text(r, "PAUSED\r\n");
			break;
		}
		if (!msg_next_tube_stats(&it, &ts) ||
		    !tube_exists(c->bs, &ts, r->tube, r->tube_len)) {
			req_text(r, reply_lines[0]);
			break;
		}
		if (r->cmd.kind == BS_PAUSE_TUBE) {
			repost_pause(r);
			break;
		}
		tube_yaml(c->bs, r->tube, r->tube_len, &ts, &y);
		req_yaml(r, &y);
		break;
	}
	case BS_STATS:
		stats_yaml(c->bs, &rep->stats, &y);
		req_yaml(r, &y);
		break;
	case BS_LIST_TUBES:
		buf_put(&y, "---\n", 4);
		each_tube(c->bs, &rep->stats, list_one, &y);
		req_yaml(r, &y);
		break;
	default:
		req_text(r, "INTERNAL_ERROR\r\n");
		break;
	}
	buf_fini(&y);
}

/* ---- commands ---------------------------------------------------------- */

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
	q.put.when = (uint64_t)cmd->delay * 1000;
	q.put.ttr = ttr < c->bs->cfg.max_ttr_ms ? ttr : c->bs->cfg.max_ttr_ms;
	q.put.payload = (struct msg_str) { cmd->body, cmd->body_len };
	req_post(r, &q);
}

/* reserve, reserve-with-timeout: posted when it is the oldest command. */
static void
cmd_reserve(struct bs_req *r)
{
	struct bs_conn *c = r->conn;
	struct msg_req q = { .op = MSG_OP_TAKE };
	struct msg_str tubes[MSG_TAKE_TUBES_MAX];
	char names[MSG_TAKE_TUBES_MAX][BS_NAME_MAX];
	int64_t now = clock_now_ms(), soon = held_next(c, now);
	uint64_t wait = WAIT_FOREVER_MS;

	c->worker = true;
	if (c->nwatch > MSG_TAKE_TUBES_MAX) {
		/* the core takes from at most 64 tubes at once */
		req_text(r, "BAD_FORMAT\r\n");
		return;
	}
	if (r->cmd.kind == BS_RESERVE_TIMEOUT && r->cmd.timeout >= 0)
		wait = r->cmd.timeout > WAIT_FOREVER_MS / 1000
		    ? WAIT_FOREVER_MS
		    : (uint64_t)r->cmd.timeout * 1000;
	/* A ready job is reserved whatever the deadlines; the wait for one
	 * ends at the safety margin of the first job held. */
	if (soon != INT64_MAX &&
	    (soon - now <= DEADLINE_SOON_MS ||
	        soon - now - DEADLINE_SOON_MS < (int64_t)wait)) {
		wait = soon - now <= DEADLINE_SOON_MS
		    ? 0
		    : (uint64_t)(soon - now - DEADLINE_SOON_MS);
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
	q.job.delay = (uint64_t)r->cmd.delay * 1000;
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

static void
repost_pause(struct bs_req *r)
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
	req_yaml(r, &y);
	buf_fini(&y);
}

static void
cmd_watch(struct bs_req *r, const struct bs_cmd *cmd)
{
	struct bs_conn *c = r->conn;

	if (!conn_watches(c, cmd->tube, cmd->tube_len)) {
		if (c->nwatch == c->watch_cap) {
			size_t cap = c->watch_cap * 2;
			struct name *w = cap <= WATCH_MAX
			    ? realloc(c->watch, cap * sizeof(*w))
			    : NULL;

			if (w == NULL) {
				req_text(r, "OUT_OF_MEMORY\r\n");
				return;
			}
			c->watch = w;
			c->watch_cap = cap;
		}
		memcpy(c->watch[c->nwatch].s, cmd->tube, cmd->tube_len);
		c->watch[c->nwatch].len = cmd->tube_len;
		c->nwatch++;
	}
	req_printf(r, "WATCHING %zu\r\n", c->nwatch);
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
			req_text(r, "NOT_IGNORED\r\n");
			return;
		}
		/* the last tube takes its place, as in beanstalkd, so
		 * list-tubes-watched shows the same order */
		c->watch[i] = c->watch[--c->nwatch];
		break;
	}
	req_printf(r, "WATCHING %zu\r\n", c->nwatch);
}

/* Whether the command is answered with a job's body (up to
 * max-job-size): those of a connection not yet written are few, so a
 * client that pipelines peeks and never reads holds little (the output
 * mark and BULKY_MAX bodies). */
static bool
is_bulky(enum bs_kind k)
{
	return k == BS_PEEK || k == BS_PEEK_READY || k == BS_PEEK_DELAYED ||
	    k == BS_PEEK_BURIED || k == BS_RESERVE || k == BS_RESERVE_TIMEOUT ||
	    k == BS_RESERVE_JOB;
}

/* One parsed command: its request, answered now or posted. */
static void
exec(struct bs_conn *c, const struct bs_cmd *cmd)
{
	struct bs_req *r = req_new(c, cmd);
	char tmp[BS_NAME_MAX];

	if (r == NULL) {
		c->eof = true; /* out of memory: give up on this client */
		return;
	}
	if (is_bulky(cmd->kind)) {
		r->bulky = true;
		c->nbulky++;
	}
	if (cmd->tube != NULL) {
		memcpy(r->tube, cmd->tube, cmd->tube_len);
		r->tube_len = cmd->tube_len;
		r->tube[r->tube_len] = '\0';
		/* a name whose sluice form is too long */
		if (bs_tube_to_sluice(cmd->tube, cmd->tube_len, tmp) == 0) {
			req_text(r, "BAD_FORMAT\r\n");
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
		req_printf(r, "USING %.*s\r\n", (int)c->use.len, c->use.s);
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
			req_text(r, "KICKED 0\r\n");
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
		req_printf(r, "USING %.*s\r\n", (int)c->use.len, c->use.s);
		break;
	case BS_LIST_TUBES_WATCHED:
		watch_yaml(r);
		break;
	case BS_QUIT:
		r->done = true; /* conn_flush closes when it gets there */
		break;
	default:
		req_text(r, "INTERNAL_ERROR\r\n");
		break;
	}
}

/* ---- connections ------------------------------------------------------- */

static void conn_progress(struct bs_conn *c);

static bool
is_reserve(const struct bs_req *r)
{
	return r->cmd.kind == BS_RESERVE || r->cmd.kind == BS_RESERVE_TIMEOUT;
}

/* Moves the replies of the done commands at the head to the output. */
static void
conn_flush(struct bs_conn *c)
{
	struct bs_req *r;

	while ((r = c->head) != NULL) {
		if (!r->done && !r->posted && is_reserve(r))
			cmd_reserve(r);
		if (!r->done)
			return;
		c->head = r->next;
		if (c->head == NULL)
			c->tail = NULL;
		c->nreqs--;
		if (r->cmd.kind == BS_QUIT)
			c->quit = true;
		conn_write(c->conn, r->text.data, r->text.len);
		conn_msg_queued(c->conn);
		if (r->bulky)
			c->nbulky--;
		req_free(r);
	}
}

/* Parses what was received into commands, while the connection may take
 * more. */
static void
conn_parse(struct bs_conn *c)
{
	struct conn *k = c->conn;
	size_t max_job = c->bs->cfg.max_job;

	while (!c->quit && !c->closed && !c->eof && k->in_off < k->in_len &&
	    c->nreqs < REQS_MAX && conn_unsent(k) < OUT_HIGH &&
	    conn_room(k, c->nreqs - (c->waiting ? 1 : 0))) {
		struct bs_cmd cmd;
		enum bs_err err;
		size_t n;

		/* a reserve blocks what follows it; quit ends the input */
		if (c->tail != NULL &&
		    ((is_reserve(c->tail) && !c->tail->done) ||
		        c->tail->cmd.kind == BS_QUIT))
			break;
		n = bs_parse(&c->ps, (const char *)k->in + k->in_off,
		    k->in_len - k->in_off, max_job, &cmd, &err);
		if (n == 0) {
			conn_want_more(k); /* the frame timeout runs */
			break;
		}
		/* parsed again once a body is written (parsing a whole
		 * command changes no state) */
		if (err == BS_OK && is_bulky(cmd.kind) &&
		    c->nbulky >= BULKY_MAX)
			break;
		c->bs->cmds[cmd.count_as]++;
		if (err != BS_OK) {
			struct bs_req *r = req_new(c, NULL);

			if (r == NULL) {
				c->eof = true;
				break;
			}
			req_text(r, bs_err_line(err));
		} else if (cmd.kind != BS_NONE) {
			exec(c, &cmd);
		}
		conn_consume(k, n);
		conn_flush(c);
	}
}

/* After any event on the connection: reply, parse, close when done. */
static void
conn_progress(struct bs_conn *c)
{
	if (c->closed)
		return;
	conn_flush(c);
	conn_parse(c);
	if (c->eof) {
		conn_close(c->conn);
		return;
	}
	if (c->quit && c->head == NULL)
		conn_close_when_sent(c->conn);
}

/* The core's answer `m` (NULL: dropped) to a posted request. */
static void
answer(struct bs_req *r, nng_msg *m)
{
	struct bs_conn *c = r->conn;
	struct conn *k = c->conn;
	struct msg_rep rep;

	r->posted = false;
	c->posted--;
	if (is_reserve(r))
		c->waiting = false;
	if (c->closed || m == NULL) {
		/* gone, or dropped by the core (its session ended) */
		if (m == NULL && !c->closed)
			req_text(r, "INTERNAL_ERROR\r\n");
		if (c->closed)
			r->done = true;
	} else if (msg_decode_rep(
	               nng_msg_body(m), nng_msg_len(m), NULL, &rep) != 0) {
		req_text(r, "INTERNAL_ERROR\r\n");
	} else {
		/* translate may post the request again (pause-tube) */
		translate(r, &rep);
	}
	if (m != NULL)
		nng_msg_free(m);
	conn_progress(c);
	conn_release(k);
}

/* ---- connections -------------------------------------------------------- */

static void
bs_conn_input(struct conn *k)
{
	conn_progress(k->data);
}

static int
bs_conn_open(struct conn *k, void *arg)
{
	struct bs *bs = arg;
	struct bs_conn *c = calloc(1, sizeof(*c));

	if (c != NULL) {
		c->watch_cap = 4;
		c->watch = calloc(c->watch_cap, sizeof(*c->watch));
	}
	if (c == NULL || c->watch == NULL) {
		free(c);
		return -ENOMEM;
	}
	c->bs = bs;
	c->conn = k;
	c->session = net_face_session(bs->net);
	memcpy(c->use.s, "default", 7);
	c->use.len = 7;
	c->watch[0] = c->use;
	c->nwatch = 1;
	if (net_post_session_local(
	        bs->net, NET_SESSION_OPEN, c->session, k->peer) != 0) {
		free(c->watch);
		free(c);
		return -ENOMEM;
	}
	k->data = c;
	k->in_max = BS_LINE_MAX + bs->cfg.max_job + 2 + RECV_MIN;
	conn_ready(k); /* no handshake, no authentication */
	c->next = bs->conns;
	if (bs->conns != NULL)
		bs->conns->prev = c;
	bs->conns = c;
	bs->nconns++;
	bs->total_conns++;
	return 0;
}

/* The socket closed (as beanstalkd, replies not sent yet are dropped):
 * the core releases the session's leases. */
static void
bs_conn_closed(struct conn *k)
{
	struct bs_conn *c = k->data;
	struct bs *bs = c->bs;

	c->closed = true;
	c->waiting = false;
	bs->nconns--;
	if (net_post_session_local(
	        bs->net, NET_SESSION_CLOSE, c->session, NULL) != 0)
		log_warn("bs",
		    "cannot tell the core that session %u ended; "
		    "its jobs return at their ttr",
		    c->session);
}

static void
bs_conn_free(struct conn *k)
{
	struct bs_conn *c = k->data;
	struct bs *bs = c->bs;

	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		bs->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	while (c->head != NULL) {
		struct bs_req *r = c->head;

		c->head = r->next;
		req_free(r);
	}
	free(c->watch);
	free(c->held);
	free(c);
}

/* Not idle while a command is in the core (a waiting reserve included)
 * or the connection holds reserved jobs. */
static bool
bs_conn_busy(const struct conn *k)
{
	const struct bs_conn *c = k->data;

	return c->posted > 0 || c->nheld > 0;
}

static const struct conn_face bs_conn_face = {
	.name = "bs",
	.open = bs_conn_open,
	.input = bs_conn_input,
	.closed = bs_conn_closed,
	.free = bs_conn_free,
	.busy = bs_conn_busy,
};

/* ---- start and stop ------------------------------------------------------ */

int
bs_open(struct bs **out, struct net *net, struct conns *cs,
    const struct bs_config *cfg)
{
	struct bs *bs = calloc(1, sizeof(*bs));
	int rc;

	if (bs == NULL)
		return -ENOMEM;
	bs->net = net;
	bs->cfg = *cfg;
	bs->started_ms = clock_now_ms();
	snprintf(bs->id, sizeof(bs->id), "%016" PRIx64,
	    (uint64_t)clock_mono_ns() ^ ((uint64_t)getpid() << 32));
	buf_init(&bs->scratch);
	rc = conns_listen(cs, cfg->addr, &bs_conn_face, bs);
	if (rc != 0) {
		bs_free(bs);
		return rc;
	}
	*out = bs;
	return 0;
}

void
bs_free(struct bs *bs)
{
	if (bs == NULL)
		return;
	buf_fini(&bs->scratch);
	free(bs);
}
