/* bs_stats - the YAML the beanstalk face answers with: stats (the
 * server's counters as beanstalkd names them, from the core's stats and
 * the face's own: connections, commands by kind), stats-tube,
 * stats-job, and the tube lists. Tubes are what beanstalk clients see:
 * "default", the core's tubes in creation order, then those only
 * referenced by a connection's use or watch list (beanstalkd creates a
 * tube on use). Pure formatting of what the core answered: no I/O. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "proto/msg.h"
#include "server/face/beanstalk/bs_conn.h"
#include "server/face/beanstalk/bs_proto.h"
#include "log/seg.h"
#include "sluice.h"
#include "util/buf.h"
#include "util/clock.h"

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
void
bs_req_yaml(struct bs_req *r, const struct buf *y)
{
	bs_req_printf(r, "OK %zu\r\n", y->len);
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

bool
bs_conn_watches(const struct bs_conn *c, const char *p, size_t len)
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
tube_refs(const struct face_beanstalk *bs, const char *p, size_t len)
{
	struct tube_refs t = { 0, 0, 0 };

	for (const struct bs_conn *c = bs->conns; c != NULL; c = c->next) {
		if (c->closed)
			continue;
		if (c->use.len == len && memcmp(c->use.s, p, len) == 0)
			t.using ++;
		if (bs_conn_watches(c, p, len)) {
			t.watching++;
			if (c->waiting)
				t.waiting++;
		}
	}
	return t;
}

static bool
refd(const struct face_beanstalk *bs, const char *p, size_t len)
{
	struct tube_refs t = tube_refs(bs, p, len);

	return t.using + t.watching > 0;
}

/* A tube exists for beanstalk clients when it holds jobs or a connection
 * uses or watches it ("default" always does). */
bool
bs_tube_exists(const struct face_beanstalk *bs, const struct msg_tube_stats *ts,
    const char *name, size_t len)
{
	if (len == 7 && memcmp(name, "default", 7) == 0)
		return true;
	if (ts != NULL && ts->ready + ts->delayed + ts->taken + ts->buried > 0)
		return true;
	return refd(bs, name, len);
}

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

void
bs_each_tube(const struct face_beanstalk *bs, const struct msg_stats *st,
    bs_tube_fn *fn, void *arg)
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
		if (listed(&seen, name, n) || !bs_tube_exists(bs, &ts, name, n))
			continue;
		fn(arg, name, n, &ts);
		see(&seen, name, n);
	}
	for (const struct bs_conn *c = bs->conns; c != NULL; c = c->next) {
		if (c->closed)
			continue;
		for (size_t i = 0; i <= c->nwatch; i++) {
			const struct bs_name *t =
			    i < c->nwatch ? &c->watch[i] : &c->use;

			if (listed(&seen, t->s, t->len))
				continue;
			fn(arg, t->s, t->len, NULL);
			see(&seen, t->s, t->len);
		}
	}
	buf_fini(&seen);
}

void
bs_list_one(
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
cmd_count(const struct face_beanstalk *bs, const char *name)
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

void
bs_stats_yaml(
    struct face_beanstalk *bs, const struct msg_stats *st, struct buf *y)
{
	uint64_t ntubes = 0, producers = 0, workers = 0, waiting = 0;
	char host[256] = "", line[128];
	struct rusage ru;
	struct utsname un;

	bs_each_tube(bs, st, count_one, &ntubes);
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
	if (bs->cfg.draining != NULL && *bs->cfg.draining)
		yaml_s(y, "draining", "true", 4);
	else
		yaml_s(y, "draining", "false", 5);
	yaml_s(y, "id", bs->id, strlen(bs->id));
	gethostname(host, sizeof(host) - 1);
	yaml_s(y, "hostname", host, strlen(host));
	memset(&un, 0, sizeof(un));
	uname(&un);
	yaml_s(y, "os", un.version, strlen(un.version));
	yaml_s(y, "platform", un.machine, strlen(un.machine));
}

void
bs_tube_yaml(struct face_beanstalk *bs, const char *name, size_t len,
    const struct msg_tube_stats *ts, struct buf *y)
{
	struct tube_refs t = tube_refs(bs, name, len);
	int64_t now = clock_now_ms(), left = 0, pause = 0;

	if (ts->paused_until > (uint64_t)now) {
		left = ((int64_t)ts->paused_until - now) / 1000;
		pause = ((int64_t)ts->paused_until - now + 999) / 1000;
	}
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
	/* the core keeps when a pause ends, not how long it was: the time
	 * left rounded up, which is the pause's length for its first
	 * second (a client that pauses for N s and looks sees N) */
	yaml_u(y, "pause", (uint64_t)pause);
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
	default: /* a task waiting for its parents too: beanstalkd has no
	            such state, and neither can be reserved */
		return "buried";
	}
}

static uint64_t
secs(int64_t ms)
{
	return ms > 0 ? (uint64_t)(ms / 1000) : 0;
}

/* The core counts a task's takes (reserves), not how each ended: the
 * reserves that left the job ready or delayed again stand for releases,
 * which is beanstalkd's count when a job's reservations end by release,
 * and counts a ttr expiry or a closed connection as one too. A job
 * reserved now, or buried, owes one reserve to that. Clients retry a job
 * while this is under their maximum (beaneater's Jobs#process!): with 0
 * they would retry for ever. */
static uint64_t
releases(const struct msg_task *t)
{
	uint32_t held = t->state == MSG_ST_TAKEN || t->state == MSG_ST_BURIED;

	return t->attempts > held ? t->attempts - held : 0;
}

void
bs_job_yaml(const struct msg_task *t, struct buf *y)
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
	yaml_u(y, "releases", releases(t));
	yaml_u(y, "buries", t->state == MSG_ST_BURIED ? 1 : 0);
	yaml_u(y, "kicks", 0);
}
