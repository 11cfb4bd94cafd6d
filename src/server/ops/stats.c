/* stats - the stats op: the node's figures (the log, snapshots, the
 * connections' bounds, --auth's failed attempts, replication, the
 * cluster) and each tube's, as named pairs (docs/protocol.md), which
 * /metrics, the admin page and the CLI show.
 *
 * A stats of every tube lists a page of them (after an index), or the
 * deepest (top), or without either as many as an old client expects; the
 * idle tubes are left out. Every tube is looked at once for the totals;
 * only those listed are encoded, with their duration histograms when
 * asked. It only reads: its answer needs the local log, and on a failed
 * log it is sent at once (log_failed says why), or metrics would go dark
 * when most needed. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/batch.h"
#include "queue/sched.h"
#include "server/core/core.h"
#include "server/core/waiters.h"
#include "server/face/conn.h"
#include "server/face/face.h"
#include "server/face/nng.h"
#include "server/face/stream.h"
#include "server/failover/cluster.h"
#include "server/failover/cmap_node.h"
#include "server/ops/ops.h"
#include "server/ops/ops_int.h"
#include "server/repl/follow.h"
#include "server/repl/lead.h"
#include "sluice.h"
#include "util/clock.h"

enum {
	TUBE_KVS = 14,
	/* work and wait: a cumulative pair per total bucket, and the sum */
	DURATION_KVS = 2 * (QUEUE_TOTAL_BUCKETS + 1),
	DURATION_TUBES_MAX = 100, /* tubes whose histograms a stats carries */
	NODE_KVS = 75 + 2 * WAL_HIST_BUCKETS,
	/* Tubes a stats of every tube lists without a page or top asked
	 * (old clients): every tube of a node that has no more in use; a
	 * larger node is read a page at a time. About 3 ms of the core. */
	OPS_STATS_TUBES = 1000,
	OPS_PEERS_MAX = 16,
	KV_NAME = 40,
	/* a follower's name in its pairs: follower_NAME_lag_records fits
	 * MSG_NAME_MAX */
	PEER_NAME = MSG_NAME_MAX - 9 - 12,
};

struct tube_kvs {
	struct msg_kv
	    kv[TUBE_KVS + OPS_LIMIT_KVS + OPS_GROUP_KVS + DURATION_KVS + 2];
};

static void
kv(struct msg_kv *out, size_t *n, const char *name, uint64_t value)
{
	out[*n].name = msg_cstr(name);
	out[*n].value = value;
	(*n)++;
}

/* The bounds of the core thread's connections (conn.h): what they
 * refused and closed. */
static void
conns_kvs(struct core *c, struct msg_kv *out, size_t *n)
{
	struct conns_stats st;

	conns_stats(c->conns, &st);
	face_stream_stats(c->fstream, &st);
	kv(out, n, "conns_open", st.open);
	kv(out, n, "conns_accept_exhausted", st.accept_exhausted);
	kv(out, n, "conns_refused_fds", st.refused_fds);
	kv(out, n, "conns_refused_full",
	    st.refused_full + face_nng_pipes_refused(c->nng));
	kv(out, n, "conns_evicted_unauth",
	    st.evicted_unready + c->pipes_evicted);
	kv(out, n, "conns_closed_handshake",
	    st.closed_handshake + c->pipes_closed_handshake);
	kv(out, n, "conns_closed_frame", st.closed_frame);
	kv(out, n, "conns_closed_idle", st.closed_idle);
	kv(out, n, "conns_closed_stalled",
	    st.closed_stalled + face_nng_pipes_stalled(c->nng));
	kv(out, n, "conns_closed_refused", st.closed_refused);
	if (c->repl != NULL) {
		struct lead_conn_stats rs;

		lead_conn_stats(c, &rs);
		kv(out, n, "repl_conns_refused_full", rs.refused_full);
		kv(out, n, "repl_conns_closed_handshake", rs.closed_handshake);
		kv(out, n, "repl_conns_evicted_unauth", rs.evicted_unauth);
		kv(out, n, "repl_conns_closed_other", rs.closed_other);
	}
}

/* With --etcd, the cluster's figures among the stats' node pairs:
 * whether this node holds the leader lease, the lease's remaining ms, ms
 * since its last renewal, etcd calls failed, when the last failed,
 * elections won; and the cluster map's revision, entries and requests
 * refused as another cluster's. */
static void
cluster_kvs(struct core *c, struct msg_kv *out, size_t *n)
{
	uint64_t rev, entries, moved;
	struct elect_view *v;
	int64_t now = clock_now_ms();

	if (c->cluster == NULL || (v = malloc(sizeof(*v))) == NULL)
		return;
	cluster_view(c, v);
	kv(out, n, "cluster_on", 1);
	kv(out, n, "cluster_leader", v->holding);
	kv(out, n, "cluster_lease_remaining_ms",
	    v->holding && v->lease_until > now
	        ? (uint64_t)(v->lease_until - now)
	        : 0);
	kv(out, n, "cluster_renewal_age_ms",
	    v->renewed_at != 0 && now > v->renewed_at
	        ? (uint64_t)(now - v->renewed_at)
	        : 0);
	kv(out, n, "cluster_etcd_errors", v->etcd_errors);
	kv(out, n, "cluster_etcd_error_at", (uint64_t)v->etcd_error_at);
	kv(out, n, "cluster_elections", v->elections);
	free(v);
	if (cmap_node_figures(c, &rev, &entries, &moved)) {
		kv(out, n, "map_revision", rev);
		kv(out, n, "map_entries", entries);
		kv(out, n, "map_moved", moved);
	}
}

/* A follower's name in its pairs (follower_NAME_lag_ms, ...): its --node
 * name when the cluster (--etcd) knows the member of its client URL, else
 * that URL's HOST:PORT, written in the pairs' alphabet (lower case, every
 * other byte '_': "n2", "127_0_0_1_7712"), at most PEER_NAME bytes; a
 * follower that told no URL is "N", its place. Never a bare position
 * when a name is known: a position moves as followers come and go. */
static void
peer_name(struct core *c, const struct lead_peer_info *p, size_t i,
    char out[PEER_NAME + 1])
{
	char node[ELECT_NAME_MAX + 1] = "";
	const char *from = p->url, *sep;
	struct elect_view *v;
	size_t n = 0;

	if (c->cluster != NULL && p->url[0] != '\0' &&
	    (v = malloc(sizeof(*v))) != NULL) {
		cluster_view(c, v);
		for (size_t k = 0; k < v->n && node[0] == '\0'; k++)
			if (strcmp(v->m[k].client, p->url) == 0)
				snprintf(
				    node, sizeof(node), "%s", v->m[k].name);
		free(v);
	}
	if (node[0] != '\0')
		from = node;
	else if ((sep = strstr(from, "://")) != NULL)
		from = sep + 3;
	for (; *from != '\0' && n < PEER_NAME; from++) {
		char ch = *from;

		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		out[n++] = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')
		    ? ch
		    : '_';
	}
	out[n] = '\0';
	if (n == 0)
		snprintf(out, PEER_NAME + 1, "%zu", i + 1);
}

/* A pair whose name is made here; `names` keeps it (KV_NAME bytes per
 * pair). */
static void kvf(struct msg_kv *out, size_t *n, char (*names)[KV_NAME],
    uint64_t value, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void
kvf(struct msg_kv *out, size_t *n, char (*names)[KV_NAME], uint64_t value,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(names[*n], KV_NAME, fmt, ap);
	va_end(ap);
	kv(out, n, names[*n], value);
}

/* The log's histograms as cumulative counts: log_commit_us_le_B (commits
 * whose latency, submit to fdatasync done, was below B us) and
 * log_batch_le_B (batches of at most B records), the last bucket of each
 * being every one (_le_inf). */
static void
node_hist_kvs(const struct wal_stats *ws, struct msg_kv *node, size_t *nn,
    char (*names)[KV_NAME])
{
	uint64_t sum = 0;

	for (int i = 0; i < WAL_HIST_BUCKETS; i++) {
		sum += ws->commit_hist[i];
		if (i < WAL_HIST_BUCKETS - 1)
			kvf(node, nn, names, sum, "log_commit_us_le_%llu",
			    16ULL << i);
		else
			kvf(node, nn, names, sum, "log_commit_us_le_inf");
	}
	kv(node, nn, "log_commit_us_sum", ws->commit_us_sum);
	sum = 0;
	for (int i = 0; i < WAL_HIST_BUCKETS; i++) {
		sum += ws->batch_hist[i];
		if (i < WAL_HIST_BUCKETS - 1)
			kvf(node, nn, names, sum, "log_batch_le_%llu",
			    1ULL << i);
		else
			kvf(node, nn, names, sum, "log_batch_le_inf");
	}
	kv(node, nn, "log_batch_records", ws->batch_records);
}

static void
counters_kvs(const struct queue_counters *q, uint64_t done, uint64_t waiting,
    struct tube_kvs *k, struct msg_kvs *out)
{
	size_t n = 0;

	kv(k->kv, &n, "puts", q->put);
	kv(k->kv, &n, "takes", q->take);
	kv(k->kv, &n, "acks", q->ack);
	kv(k->kv, &n, "releases", q->release);
	kv(k->kv, &n, "fails", q->fail);
	kv(k->kv, &n, "buries", q->bury);
	kv(k->kv, &n, "kicks", q->kick);
	kv(k->kv, &n, "deletes", q->del);
	kv(k->kv, &n, "timeouts", q->ttr_expired + q->session_released);
	kv(k->kv, &n, "ttr_expired", q->ttr_expired);
	kv(k->kv, &n, "session_released", q->session_released);
	kv(k->kv, &n, "replaces", q->replace);
	kv(k->kv, &n, "done", done);       /* kept now, not cumulative */
	kv(k->kv, &n, "waiting", waiting); /* for their parents, now */
	out->n = (uint32_t)n;
	out->kvs = k->kv;
}

/* The names of the duration pairs (protocol.md): work_ms_le_B and
 * wait_ms_le_B for the bounds of queue_total_bound(), _le_inf for the
 * last bucket; made once (the core is one thread). */
static const char *
duration_name(int which, int c)
{
	static char names[2][QUEUE_TOTAL_BUCKETS][KV_NAME];
	static bool made;

	if (!made) {
		for (int w = 0; w < 2; w++) {
			const char *p = w == 0 ? "work_ms" : "wait_ms";

			for (int b = 0; b < QUEUE_TOTAL_BUCKETS - 1; b++)
				snprintf(names[w][b], KV_NAME, "%s_le_%" PRId64,
				    p, queue_total_bound(b));
			snprintf(names[w][QUEUE_TOTAL_BUCKETS - 1], KV_NAME,
			    "%s_le_inf", p);
		}
		made = true;
	}
	return names[which][c];
}

/* Appends one histogram's pairs after the tube's counters. */
static void
duration_kvs(
    struct tube_kvs *k, size_t *n, int which, const struct queue_total *t)
{
	uint64_t sum = 0;

	for (int b = 0; b < QUEUE_TOTAL_BUCKETS; b++) {
		sum += t->bucket[b];
		kv(k->kv, n, duration_name(which, b), sum);
	}
	kv(k->kv, n, which == 0 ? "work_ms_sum" : "wait_ms_sum", t->total_ms);
}

struct busy {
	uint64_t events; /* takes and acks in the tube's totals */
	uint32_t pos;    /* in the reply's list */
};

static int
busy_cmp(const void *a, const void *b)
{
	const struct busy *x = a, *y = b;

	if (x->events != y->events)
		return x->events > y->events ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Stats flag durations: the histograms of the DURATION_TUBES_MAX listed
 * tubes with the most takes and acks (ties: the one listed first, made
 * first), after their counters. Returns 0 or SLUICE_ENOMEM. */
static int
durations_add(struct core *c, struct msg_tube_stats *tubes, uint32_t n,
    struct tube_kvs *tkvs)
{
	struct queue_total work, wait;
	struct queue_tube_stats ts;
	struct busy *busy = calloc(n ? n : 1, sizeof(*busy));
	uint32_t nb = 0;

	if (busy == NULL)
		return SLUICE_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (queue_tube_stats(c->q, c->now, tubes[i].name.p,
		        tubes[i].name.len, &ts) != 0 ||
		    queue_tube_totals(c->q, ts.index, &work, &wait) != 0)
			continue;
		if (work.count + wait.count > 0)
			busy[nb++] =
			    (struct busy) { work.count + wait.count, i };
	}
	qsort(busy, nb, sizeof(*busy), busy_cmp);
	for (uint32_t j = 0; j < nb && j < DURATION_TUBES_MAX; j++) {
		struct msg_tube_stats *t = &tubes[busy[j].pos];
		size_t k = t->more.n;

		if (queue_tube_stats(
		        c->q, c->now, t->name.p, t->name.len, &ts) != 0 ||
		    queue_tube_totals(c->q, ts.index, &work, &wait) != 0)
			continue;
		duration_kvs(&tkvs[busy[j].pos], &k, 0, &work);
		duration_kvs(&tkvs[busy[j].pos], &k, 1, &wait);
		t->more.n = (uint32_t)k;
	}
	free(busy);
	return 0;
}

/* A tube's counts, and its settings when the stats asked for them. */
static void
tube_to_msg(struct core *c, const struct queue_tube_stats *ts,
    struct tube_kvs *k, bool settings, struct msg_tube_stats *out)
{
	struct qrec_tube_conf conf;

	memset(out, 0, sizeof(*out));
	out->name = (struct msg_str) { ts->name, ts->name_len };
	out->ready = ts->ready;
	out->delayed = ts->delayed;
	out->taken = ts->taken;
	out->buried = ts->buried;
	out->paused_until = (uint64_t)ts->paused_until;
	out->oldest_ready_age = (uint64_t)ts->oldest_ready_age;
	counters_kvs(&ts->ctr, ts->done, ts->waiting, k, &out->more);
	out->more.n += (uint32_t)ops_limit_kvs(
	    c, ts->name, ts->name_len, k->kv, out->more.n);
	out->more.n += (uint32_t)ops_group_kvs(
	    c, ts->name, ts->name_len, k->kv, out->more.n);
	if (ts->groups > 0) { /* its fair groups: named ones, and those
		                 with ready tasks ("" among them) */
		size_t n = out->more.n;

		kv(k->kv, &n, "groups", ts->groups);
		kv(k->kv, &n, "groups_ready", ts->groups_ready);
		out->more.n = (uint32_t)n;
	}
	if (settings &&
	    queue_tube_settings(c->q, ts->name, ts->name_len, &conf) == 0)
		ops_tube_conf_to_msg(&conf, &out->conf);
}

/* Tubes come and go as in beanstalkd: a tube with no task, no pause, no
 * settings and no take waiting on it is idle, and the listings (stats of every
 * tube, hence /metrics and the admin page) leave it out. The queue keeps it
 * (and its counters): a task put in it brings it back, and stats of that tube
 * alone still answer. */

/* Idle: nothing in it, not paused, no take waiting on it. */
static bool
tube_idle(const struct core *c, const struct queue_tube_stats *ts)
{
	if (ts->ready + ts->delayed + ts->taken + ts->buried + ts->done +
	            ts->waiting >
	        0 ||
	    ts->paused_until != 0 || ts->settings != 0)
		return false;
	if (ops_limit_has(c, ts->name, ts->name_len) ||
	    ops_group_kvs(c, ts->name, ts->name_len,
	        (struct msg_kv[OPS_GROUP_KVS]) { 0 }, 0) > 0)
		return false;
	return !waiters_on(&c->waits, ts->name, ts->name_len);
}

/* A tube a stats reply lists: its depth (top) and index. */
struct stats_pick {
	uint64_t depth;
	uint32_t index;
};

/* How many tubes a stats of every tube lists: a page's limit; the
 * deepest --metrics-tubes when top asks for the server's choice; without
 * either, OPS_STATS_TUBES (old clients: every tube of a small node). */
static uint32_t
stats_limit(const struct core *c, const struct msg_stats_req *q)
{
	if (q->top && q->limit == 0)
		return c->cfg->metrics_tubes;
	if (q->page || q->top)
		return q->limit;
	return OPS_STATS_TUBES;
}

/* Deeper first; among equals, the tube made first. */
static bool
pick_before(const struct stats_pick *a, const struct stats_pick *b)
{
	return a->depth != b->depth ? a->depth > b->depth : a->index < b->index;
}

static int
pick_cmp(const void *a, const void *b)
{
	return pick_before(a, b) ? -1 : pick_before(b, a) ? 1 : 0;
}

/* Keeps the `cap` deepest tubes in pick[] (*n of them), a min-heap of
 * the order pick_before: its root is the one to drop first. */
static void
pick_deepest(struct stats_pick *pick, uint32_t *n, uint32_t cap,
    const struct queue_tube_stats *ts)
{
	struct stats_pick x = { ts->ready + ts->delayed + ts->taken +
		    ts->buried + ts->waiting,
		ts->index };
	uint32_t i;

	if (cap == 0)
		return;
	if (*n < cap) {
		i = (*n)++;
		while (i > 0 && pick_before(&pick[(i - 1) / 2], &x)) {
			pick[i] = pick[(i - 1) / 2];
			i = (i - 1) / 2;
		}
		pick[i] = x;
		return;
	}
	if (!pick_before(&x, &pick[0]))
		return;
	i = 0;
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		const struct stats_pick *best = &x;

		if (l < *n && pick_before(best, &pick[l]))
			m = l, best = &pick[l];
		if (r < *n && pick_before(best, &pick[r]))
			m = r;
		if (m == i)
			break;
		pick[i] = pick[m];
		i = m;
	}
	pick[i] = x;
}

void
ops_stats(struct core *c, struct face_ctx *ctx, const struct msg_req *req)
{
	struct msg_rep rep = { .op = MSG_OP_STATS };
	struct msg_stats *s = &rep.stats;
	struct msg_tube_stats *tubes = NULL;
	struct tube_kvs *tkvs = NULL, totkv;
	struct msg_kv node[NODE_KVS + 5 * OPS_PEERS_MAX];
	char names[NODE_KVS + 5 * OPS_PEERS_MAX][KV_NAME];
	struct lead_peer_info peers[OPS_PEERS_MAX];
	char pnames[OPS_PEERS_MAX][5][MSG_NAME_MAX + 1];
	size_t npeers;
	struct queue_tube_stats ts;
	struct queue_stats qs;
	struct wal_stats ws;
	size_t nn = 0, nctx, nidle;
	uint32_t ntubes = 0, count, listed = 0, limit, cap, npick = 0, next = 0;
	struct stats_pick *pick;
	int64_t oldest = 0;

	queue_stats(c->q, c->now, &qs);
	wal_stats(c->wal, &ws);
	count = queue_tube_count(c->q);
	limit = stats_limit(c, &req->stats);
	if (req->tube.len > 0)
		limit = 1;
	cap = limit < count ? limit : count;
	tubes = calloc(cap ? cap : 1, sizeof(*tubes));
	tkvs = calloc(cap ? cap : 1, sizeof(*tkvs));
	pick = calloc(cap ? cap : 1, sizeof(*pick));
	if (tubes == NULL || tkvs == NULL || pick == NULL) {
		free(tubes);
		free(tkvs);
		free(pick);
		core_reply_err(c, ctx, MSG_OP_STATS, SLUICE_ENOMEM, NULL);
		return;
	}
	if (req->tube.len > 0) {
		if (queue_tube_stats(
		        c->q, c->now, req->tube.p, req->tube.len, &ts) != 0) {
			free(tubes);
			free(tkvs);
			free(pick);
			core_reply_err(c, ctx, MSG_OP_STATS, SLUICE_ENOTFOUND,
			    "stats of tube '%.*s': no such tube (a tube exists "
			    "once a task was put in it)",
			    (int)req->tube.len, req->tube.p);
			return;
		}
		tube_to_msg(c, &ts, &tkvs[0], req->stats.settings, &tubes[0]);
		ntubes = 1;
	}
	/* Every tube is looked at (the totals, the oldest ready task); only
	 * those listed are encoded. */
	for (uint32_t i = 0; i < count; i++) {
		if (queue_tube_stats_at(c->q, c->now, i, &ts) != 0)
			break;
		if (ts.oldest_ready_age > oldest)
			oldest = ts.oldest_ready_age;
		if (tube_idle(c, &ts))
			continue;
		listed++;
		if (req->tube.len > 0)
			continue;
		if (req->stats.top) {
			pick_deepest(pick, &npick, cap, &ts);
		} else if (i >= req->stats.after) {
			if (npick < cap)
				pick[npick++] = (struct stats_pick) { 0, i };
			else if (next == 0)
				next = i;
		}
	}
	if (req->stats.top)
		qsort(pick, npick, sizeof(*pick), pick_cmp);
	for (uint32_t j = 0; j < npick; j++) {
		if (queue_tube_stats_at(c->q, c->now, pick[j].index, &ts) != 0)
			continue;
		tube_to_msg(
		    c, &ts, &tkvs[ntubes], req->stats.settings, &tubes[ntubes]);
		ntubes++;
	}
	free(pick);
	if (req->stats.durations &&
	    durations_add(c, tubes, ntubes, tkvs) != 0) {
		free(tubes);
		free(tkvs);
		core_reply_err(c, ctx, MSG_OP_STATS, SLUICE_ENOMEM, NULL);
		return;
	}

	s->role = c->follower ? MSG_ROLE_FOLLOWER : MSG_ROLE_LEADER;
	if (c->follower)
		s->leader = msg_cstr(follow_leader_url(c));
	s->epoch = wal_epoch(c->wal);
	s->lsn = wal_last_lsn(c->wal);
	s->durable_lsn = wal_durable_lsn(c->wal);
	s->now = (uint64_t)c->now;
	s->totals.ready = qs.ready;
	s->totals.delayed = qs.delayed;
	s->totals.taken = qs.taken;
	s->totals.buried = qs.buried;
	s->totals.oldest_ready_age = (uint64_t)oldest;
	counters_kvs(&qs.ctr, qs.done, qs.waiting, &totkv, &s->totals.more);
	face_nng_counts(c->nng, &nctx, &nidle);
	kv(node, &nn, "uptime_ms", (uint64_t)(c->now - c->started_ms));
	kv(node, &nn, "tubes", listed);
	if (req->tube.len == 0) {
		kv(node, &nn, "tubes_listed", ntubes);
		kv(node, &nn, "tubes_next", next);
	}
	kv(node, &nn, "tasks", qs.tasks);
	kv(node, &nn, "keys", qs.keys);
	kv(node, &nn, "sessions", c->sessions);
	kv(node, &nn, "waiting_takes", c->waits.n);
	kv(node, &nn, "waiting_takes_refused", c->waits_refused);
	kv(node, &nn, "waiting_results", c->rwaits.n);
	kv(node, &nn, "outcomes", queue_outcome_count(c->q));
	kv(node, &nn, "outcome_bytes", queue_outcome_bytes(c->q));
	kv(node, &nn, "log_segments", ws.segments);
	kv(node, &nn, "log_bytes", ws.bytes);
	kv(node, &nn, "log_fsyncs", ws.fsyncs);
	kv(node, &nn, "log_batches", ws.batches);
	kv(node, &nn, "log_fsync_op_commits", ws.fsync_op_commits);
	kv(node, &nn, "log_batches_beside", ws.fly_beside);
	kv(node, &nn, "log_pads", ws.pads);
	kv(node, &nn, "commit_holds", c->cohort.holds);
	kv(node, &nn, "commit_holds_filled", c->cohort.filled);
	kv(node, &nn, "commit_holds_ran_out", c->cohort.ran_out);
	kv(node, &nn, "log_failed", ws.poisoned);
	kv(node, &nn, "log_reserved", ws.reserved);
	kv(node, &nn, "log_available", ws.avail);
	kv(node, &nn, "log_refusing_puts", ws.refusing);
	kv(node, &nn, "log_files_bytes", ws.files_bytes);
	kv(node, &nn, "log_max_bytes", c->cfg->max_log_bytes);
	kv(node, &nn, "snapshot_lsn", c->snap.last_lsn);
	kv(node, &nn, "snapshot_at", (uint64_t)c->snap.last_at);
	kv(node, &nn, "snapshot_ms", (uint64_t)c->snap.last_ms);
	kv(node, &nn, "recovery_ms", (uint64_t)c->recovery_ms);
	node_hist_kvs(&ws, node, &nn, names);
	kv(node, &nn, "sync_replicas", c->cfg->sync_replicas);
	kv(node, &nn, "fenced", c->fenced);
	kv(node, &nn, "auth_failures", c->tokens_limit.failures);
	kv(node, &nn, "auth_delayed", c->tokens_limit.delayed);
	kv(node, &nn, "auth_dropped", c->tokens_limit.dropped);
	kv(node, &nn, "schedules", queue_sched_count(c->q));
	kv(node, &nn, "schedule_firings", c->sched.fired);
	kv(node, &nn, "batches", queue_batch_count(c->q));
	kv(node, &nn, "batch_firings", ops_batch_firings());
	conns_kvs(c, node, &nn);
	cluster_kvs(c, node, &nn);
	if (c->follower) {
		uint64_t lag, lag_ms;

		follow_lag(c, &lag, &lag_ms);
		kv(node, &nn, "leader_connected", follow_connected(c));
		kv(node, &nn, "lag_records", lag);
		kv(node, &nn, "lag_ms", lag_ms);
	}
	npeers = lead_peers(c, peers, OPS_PEERS_MAX);
	kv(node, &nn, "followers", npeers);
	for (size_t i = 0; i < npeers; i++) {
		char who[PEER_NAME + 1];

		peer_name(c, &peers[i], i, who);
		snprintf(pnames[i][0], sizeof(pnames[i][0]),
		    "follower_%s_acked_lsn", who);
		snprintf(pnames[i][1], sizeof(pnames[i][1]),
		    "follower_%s_lag_records", who);
		snprintf(pnames[i][2], sizeof(pnames[i][2]),
		    "follower_%s_lag_ms", who);
		kv(node, &nn, pnames[i][0], peers[i].acked_lsn);
		kv(node, &nn, pnames[i][1], peers[i].lag_records);
		kv(node, &nn, pnames[i][2], peers[i].lag_ms);
		snprintf(pnames[i][3], sizeof(pnames[i][3]),
		    "follower_%s_ack_ms", who);
		snprintf(pnames[i][4], sizeof(pnames[i][4]),
		    "follower_%s_ack_ms_max", who);
		kv(node, &nn, pnames[i][3], peers[i].ack_ms);
		kv(node, &nn, pnames[i][4], peers[i].ack_ms_max);
	}
	s->more.n = (uint32_t)nn;
	s->more.kvs = node;
	s->ntubes = ntubes;
	s->tubes = tubes;
	s->settings = req->stats.settings;
	/* A failed log makes nothing durable again: stats answer anyway
	 * (log_failed says why), or metrics would go dark when most
	 * needed. */
	ops_reply_as(c, ctx, &rep,
	    &(struct core_reply_how) {
	        .local = true, .read = true, .now = ws.poisoned });
	free(tubes);
	free(tkvs);
}
