/* sluice_log_state - `sluice-log state DIR [--at LSN]`: the queue rebuilt
 * up to an LSN, as sluiced would start on it.
 *
 * recover() from the log library, exactly as sluiced starts, with
 * upto_lsn = --at, then the queue's counts as of its clock, which is the
 * time of the last record applied: delayed tasks due by then are ready.
 * The JSON has the shape of `sluice stats --json` (keys, order, counter
 * names; role "offline", leader null, durable_lsn = lsn, now = the queue's
 * clock), so the two can be compared, plus what only the log knows
 * (snapshot_lsn, records_replayed, next_id, the oldest task). A tube's
 * flow limits are its counters' limit_* pairs as stats has them (no take
 * waits on a log: limit_waiting_takes is 0), and in the text a line a
 * tube under "flow limits:". */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log/recover.h"
#include "queue/limits.h"
#include "sluice.h"
#include "sluice_log.h"
#include "util/fsutil.h"

struct state_ctx {
	struct queue *q;
	uint64_t n;
	int rc; /* the first record that did not apply */
	uint64_t bad_lsn;
	uint16_t bad_type;
};

static int
state_entry(void *arg, uint16_t type, const void *data, size_t len)
{
	struct state_ctx *c = arg;

	return queue_snapshot_load(c->q, type, data, len);
}

static int
state_rec(const struct rec_hdr *h, const void *body, void *arg)
{
	struct state_ctx *c = arg;
	struct qrec r;
	int rc;

	lt_progress_count("replayed", ++c->n, h->lsn);
	if (h->type >= REC_TYPE_LOG_MIN)
		return 0;
	rc = qrec_decode(h->type, body, h->len - REC_HDR_SIZE, &r);
	if (rc == 0)
		rc = queue_apply(c->q, h->lsn, h->time, &r);
	if (rc != 0) {
		c->rc = rc;
		c->bad_lsn = h->lsn;
		c->bad_type = h->type;
	}
	return rc;
}

struct oldest {
	bool have;
	struct queue_task_view v;
	char tube[QREC_NAME_MAX + 1];
};

static void
find_oldest(struct queue *q, int64_t now, struct oldest *o)
{
	uint32_t n = queue_tube_count(q);

	memset(o, 0, sizeof(*o));
	for (uint32_t i = 0; i < n; i++) {
		struct queue_tube_stats ts;
		struct queue_list_req req = { 0 };
		struct queue_task_view v;
		size_t got = 0;

		if (queue_tube_stats_at(q, now, i, &ts) != 0)
			continue;
		req.tube = ts.name;
		req.tube_len = ts.name_len;
		req.state = QUEUE_ANY;
		req.order = QUEUE_BY_AGE;
		req.limit = 1;
		if (queue_list(q, now, &req, &v, &got) != 0 || got == 0)
			continue;
		if (!o->have || v.created_at < o->v.created_at ||
		    (v.created_at == o->v.created_at && v.id < o->v.id)) {
			o->have = true;
			o->v = v;
			snprintf(o->tube, sizeof(o->tube), "%.*s",
			    (int)ts.name_len, ts.name);
		}
	}
}

static void
state_usage(FILE *f)
{
	fputs("usage: sluice-log state DIR [--at LSN] [--json]\n"
	      "The queue rebuilt up to LSN (default: the end), as sluiced "
	      "would rebuild it;\n"
	      "delayed tasks are counted as of that record's time.\n",
	    f);
}

/* A tube's counts as `sluice stats --json` prints them: states, pause,
 * the oldest ready task's age, and the counters by the server's names. */
static void
counts_json(struct buf *b, uint64_t ready, uint64_t delayed, uint64_t taken,
    uint64_t buried, uint64_t waiting, uint64_t done, int64_t paused_until,
    int64_t oldest_age, const struct queue_counters *c)
{
	buf_printf(b,
	    "{\"ready\":%" PRIu64 ",\"delayed\":%" PRIu64 ",\"taken\":%" PRIu64
	    ",\"buried\":%" PRIu64 ",\"waiting\":%" PRIu64
	    ",\"paused\":%s,\"paused_until\":%" PRId64
	    ",\"oldest_ready_age_ms\":%" PRId64 ",\"done\":%" PRIu64
	    ",\"counters\":",
	    ready, delayed, taken, buried, waiting,
	    paused_until ? "true" : "false", paused_until, oldest_age, done);
	buf_printf(b,
	    "{\"puts\":%" PRIu64 ",\"takes\":%" PRIu64 ",\"acks\":%" PRIu64
	    ",\"releases\":%" PRIu64 ",\"fails\":%" PRIu64
	    ",\"buries\":%" PRIu64 ",\"kicks\":%" PRIu64 ",\"deletes\":%" PRIu64
	    ",\"timeouts\":%" PRIu64 ",\"ttr_expired\":%" PRIu64
	    ",\"session_released\":%" PRIu64 ",\"replaces\":%" PRIu64 "}}",
	    c->put, c->take, c->ack, c->release, c->fail, c->bury, c->kick,
	    c->del, c->ttr_expired + c->session_released, c->ttr_expired,
	    c->session_released, c->replace);
}

/* After a tube's counts: its flow limits' limit_* pairs at the end of
 * its counters, as `sluice stats --json` has them, when it has any. */
static void
state_limits_json(struct buf *b, struct queue *q,
    const struct queue_tube_stats *ts, int64_t now)
{
	struct queue_flow_view v;

	if (queue_tube_flow(q, ts->name, ts->name_len, now, &v) != 0 ||
	    v.lim.set == 0)
		return;
	b->len -= 2; /* the counters' and the counts' closing braces */
	if (v.lim.set & QREC_LIM_RATE)
		buf_printf(b,
		    ",\"limit_rate\":%" PRIu32 ",\"limit_rate_per_ms\":%" PRIu32
		    ",\"limit_burst\":%" PRIu32 ",\"limit_tokens\":%" PRIu64,
		    v.lim.rate, v.lim.per_ms, v.lim.burst, v.tokens);
	if (v.lim.set & QREC_LIM_CONCURRENCY)
		buf_printf(b,
		    ",\"limit_concurrency\":%" PRIu32
		    ",\"limit_slots_used\":%" PRIu64,
		    v.lim.concurrency, v.taken);
	buf_printf(b,
	    ",\"limit_held_rate\":%" PRIu64
	    ",\"limit_held_concurrency\":%" PRIu64
	    ",\"limit_waiting_takes\":0,\"limit_rate_holds\":%" PRIu64
	    ",\"limit_concurrency_holds\":%" PRIu64 "}}",
	    v.holding == QUEUE_FLOW_RATE ? v.held_tasks : 0,
	    v.holding == QUEUE_FLOW_CONCURRENCY ? v.held_tasks : 0, v.held_rate,
	    v.held_conc);
}

/* The flow limits of the tubes that have them, a line a tube, as `sluice
 * stats -t` says them: "rate 10/s, burst 5 (tokens now 5); concurrency
 * 3 (slots in use 2)". */
static void
state_limits_text(struct buf *b, struct queue *q, int64_t now)
{
	bool any = false;

	for (uint32_t i = 0; i < queue_tube_count(q); i++) {
		struct queue_tube_stats ts;
		struct queue_flow_view v;
		const char *per;

		if (queue_tube_stats_at(q, now, i, &ts) != 0 ||
		    queue_tube_flow(q, ts.name, ts.name_len, now, &v) != 0 ||
		    v.lim.set == 0)
			continue;
		if (!any)
			buf_printf(b, "\nflow limits:\n");
		any = true;
		buf_printf(b, "  %-22.*s", (int)ts.name_len, ts.name);
		per = v.lim.per_ms == 1000    ? "s"
		    : v.lim.per_ms == 60000   ? "m"
		    : v.lim.per_ms == 3600000 ? "h"
		                              : "?";
		if (v.lim.set & QREC_LIM_RATE)
			buf_printf(b,
			    " rate %" PRIu32 "/%s, burst %" PRIu32
			    " (tokens now %" PRIu64 ")%s",
			    v.lim.rate, per, v.lim.burst, v.tokens,
			    v.lim.set & QREC_LIM_CONCURRENCY ? ";" : "");
		if (v.lim.set & QREC_LIM_CONCURRENCY)
			buf_printf(b,
			    " concurrency %" PRIu32 " (slots in use %" PRIu64
			    ")",
			    v.lim.concurrency, v.taken);
		if (v.holding != QUEUE_FLOW_OPEN)
			buf_printf(b, ", %" PRIu64 " ready held back by the %s",
			    v.held_tasks,
			    v.holding == QUEUE_FLOW_RATE ? "rate" : "cap");
		buf_printf(b, "\n");
	}
}

/* After a tube's counts: "settings":{...} the tube sets itself (in the
 * counts' object, as `sluice stats --json` puts them), when it has any. */
static void
state_settings_json(
    struct buf *b, struct queue *q, const struct queue_tube_stats *ts)
{
	struct qrec_tube_conf c;

	if (ts->settings == 0 ||
	    queue_tube_settings(q, ts->name, ts->name_len, &c) != 0)
		return;
	b->len--; /* the counts' closing brace */
	buf_printf(b, ",\"settings\":{\"tube\":");
	lt_json_str(b, ts->name, ts->name_len);
	lt_json_tube_conf(b, &c);
	buf_printf(b, "}}");
}

/* The settings tubes set themselves, a line a tube. */
static void
state_settings_text(struct buf *b, struct queue *q, int64_t now)
{
	bool any = false;

	for (uint32_t i = 0; i < queue_tube_count(q); i++) {
		struct queue_tube_stats ts;
		struct qrec_tube_conf c;

		if (queue_tube_stats_at(q, now, i, &ts) != 0 ||
		    ts.settings == 0 ||
		    queue_tube_settings(q, ts.name, ts.name_len, &c) != 0)
			continue;
		if (!any)
			buf_printf(b, "\nsettings of their own:\n");
		any = true;
		buf_printf(b, "  %-22.*s", (int)ts.name_len, ts.name);
		qrec_tube_conf_format(&c, b);
		buf_printf(b, "\n");
	}
}

/* Checks `--at` against what the directory still holds, by file names:
 * rebuilding a state starts from a snapshot at or before it, or from
 * LSN 1. */
static bool
at_reachable(const struct lt_dir *d, uint64_t at)
{
	uint64_t oldest = 0;

	for (size_t i = 0; i < d->nsnaps; i++) {
		if (d->snaps[i].name_lsn <= at)
			return true;
		if (oldest == 0)
			oldest = d->snaps[i].name_lsn;
	}
	if (d->nsegs == 0 || d->segs[0].name_lsn <= 1)
		return true;
	fprintf(stderr,
	    "sluice-log: the state at LSN %" PRIu64 " cannot be rebuilt "
	    "from %s: it needs a snapshot at or before that LSN, or the log "
	    "from LSN 1, and the log now starts at LSN %" PRIu64,
	    at, d->path, d->segs[0].name_lsn);
	if (oldest != 0)
		fprintf(stderr,
		    "; the oldest snapshot is at LSN %" PRIu64
		    ", the earliest state it can give",
		    oldest);
	fputs("\n", stderr);
	return false;
}

int
lt_cmd_state(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "at", required_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct recover_ops ops = { state_entry, state_rec };
	struct state_ctx sc = { NULL, 0, 0, 0, 0 };
	struct recover_result res;
	struct queue_stats st;
	struct oldest old;
	char err[PATH_MAX + 256], when[40];
	uint64_t at = 0;
	bool json = false, have_at = false;
	struct lt_dir d;
	struct buf b;
	int c, rc;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (!lt_parse_u64("--at", optarg, &at))
				return LT_EXIT_USAGE;
			if (at == 0) {
				fprintf(stderr,
				    "sluice-log: --at wants an LSN >= 1\n");
				return LT_EXIT_USAGE;
			}
			have_at = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			state_usage(stdout);
			return LT_EXIT_OK;
		default:
			state_usage(stderr);
			return LT_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		state_usage(stderr);
		return LT_EXIT_USAGE;
	}
	rc = lt_dir_open(argv[optind], &d, err, sizeof(err));
	if (rc != LT_EXIT_OK) {
		fprintf(stderr, "sluice-log: %s\n", err);
		return rc;
	}
	if (have_at && !at_reachable(&d, at)) {
		lt_dir_free(&d);
		return LT_EXIT_DAMAGE;
	}
	sc.q = queue_new(NULL);
	if (sc.q == NULL) {
		lt_dir_free(&d);
		return LT_EXIT_IO;
	}
	rc = recover(d.path, 0, at, &ops, &sc, &res);
	lt_progress_end();
	if (rc != 0) {
		if (sc.rc != 0)
			fprintf(stderr,
			    "sluice-log: record LSN %" PRIu64
			    " (%s) does not apply to the queue rebuilt before "
			    "it: %s\n",
			    sc.bad_lsn,
			    lt_type_name(sc.bad_type)
			        ? lt_type_name(sc.bad_type)
			        : "?",
			    sluice_strerror(sc.rc));
		fprintf(stderr,
		    "sluice-log: cannot rebuild the queue of %s%s: %s; run "
		    "`sluice-log verify %s`\n",
		    d.path, have_at ? " up to that LSN" : "",
		    sluice_strerror(rc), d.path);
		rc = rc < 0 && rc != -ENOMEM ? LT_EXIT_IO : LT_EXIT_DAMAGE;
		goto out;
	}
	if (have_at && res.last_lsn < at) {
		fprintf(stderr,
		    "sluice-log: LSN %" PRIu64 " is past the end of the log "
		    "(its last LSN is %" PRIu64 ")\n",
		    at, res.last_lsn);
		rc = LT_EXIT_DAMAGE;
		goto out;
	}
	/* As of the queue's clock: the time of the last record applied. */
	queue_stats(sc.q, 0, &st);
	queue_stats(sc.q, st.clock, &st);
	find_oldest(sc.q, st.clock, &old);
	lt_time(st.clock, when, sizeof(when));
	buf_init(&b);
	if (json) {
		int64_t oldest_age = 0;

		buf_printf(&b,
		    "{\"role\":\"offline\",\"epoch\":%" PRIu64
		    ",\"lsn\":%" PRIu64 ",\"durable_lsn\":%" PRIu64
		    ",\"now\":%" PRId64 ",\"leader\":null,\"tubes\":{",
		    res.epoch, res.last_lsn, res.last_lsn, st.clock);
		for (uint32_t i = 0; i < queue_tube_count(sc.q); i++) {
			struct queue_tube_stats ts;

			if (queue_tube_stats_at(sc.q, st.clock, i, &ts) != 0)
				break;
			buf_printf(&b, "%s", i ? "," : "");
			lt_json_str(&b, ts.name, ts.name_len);
			buf_printf(&b, ":");
			counts_json(&b, ts.ready, ts.delayed, ts.taken,
			    ts.buried, ts.waiting, ts.done, ts.paused_until,
			    ts.oldest_ready_age, &ts.ctr);
			state_limits_json(&b, sc.q, &ts, st.clock);
			state_settings_json(&b, sc.q, &ts);
			if (ts.oldest_ready_age > oldest_age)
				oldest_age = ts.oldest_ready_age;
		}
		buf_printf(&b, "},\"totals\":");
		counts_json(&b, st.ready, st.delayed, st.taken, st.buried,
		    st.waiting, st.done, 0, oldest_age, &st.ctr);
		buf_printf(&b,
		    ",\"node\":{\"tubes\":%" PRIu64 ",\"tasks\":%" PRIu64
		    ",\"keys\":%" PRIu64 ",\"snapshot_lsn\":%" PRIu64
		    "},\"snapshot_lsn\":%" PRIu64
		    ",\"records_replayed\":%" PRIu64 ",\"next_id\":%" PRIu64,
		    st.tubes, st.tasks, st.keys, res.snap_lsn, res.snap_lsn,
		    res.records, st.next_id);
		buf_printf(&b, ",\"oldest\":");
		if (old.have) {
			buf_printf(
			    &b, "{\"id\":%" PRIu64 ",\"tube\":", old.v.id);
			lt_json_str(&b, old.tube, strlen(old.tube));
			buf_printf(&b,
			    ",\"state\":\"%s\",\"created_at\":%" PRId64
			    ",\"age_ms\":%" PRId64 "}",
			    queue_state_name(old.v.state), old.v.created_at,
			    st.clock - old.v.created_at);
		} else {
			buf_printf(&b, "null");
		}
		buf_printf(&b, "}\n");
	} else {
		buf_printf(&b,
		    "state of %s at LSN %" PRIu64 " (epoch %" PRIu64
		    "), as of %s\n",
		    d.path, res.last_lsn, res.epoch, when);
		if (res.snap_lsn != 0)
			buf_printf(&b,
			    "rebuilt from the snapshot at LSN %" PRIu64
			    " and %" PRIu64 " records after it\n",
			    res.snap_lsn, res.records);
		else
			buf_printf(&b, "rebuilt from %" PRIu64 " records\n",
			    res.records);
		buf_printf(&b, "\n%-24s %9s %9s %9s %9s %9s  %-12s %s\n",
		    "tube", "ready", "delayed", "taken", "buried", "done",
		    "oldest ready", "paused until");
		for (uint32_t i = 0; i < queue_tube_count(sc.q); i++) {
			struct queue_tube_stats ts;
			char age[24] = "-", until[40] = "-";

			if (queue_tube_stats_at(sc.q, st.clock, i, &ts) != 0)
				break;
			if (ts.ready > 0)
				lt_age(ts.oldest_ready_age, age, sizeof(age));
			if (ts.paused_until != 0)
				lt_time(ts.paused_until, until, sizeof(until));
			buf_printf(&b,
			    "%-24.*s %9" PRIu64 " %9" PRIu64 " %9" PRIu64
			    " %9" PRIu64 " %9" PRIu64 "  %-12s %s\n",
			    (int)ts.name_len, ts.name, ts.ready, ts.delayed,
			    ts.taken, ts.buried, ts.done, age, until);
		}
		buf_printf(&b,
		    "%-24s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
		    " %9" PRIu64 "\n",
		    "(total)", st.ready, st.delayed, st.taken, st.buried,
		    st.done);
		state_settings_text(&b, sc.q, st.clock);
		state_limits_text(&b, sc.q, st.clock);
		if (old.have) {
			char created[40], age[24];

			lt_time(old.v.created_at, created, sizeof(created));
			lt_age(st.clock - old.v.created_at, age, sizeof(age));
			buf_printf(&b,
			    "\noldest task: id %" PRIu64
			    " in %s (%s), created %s, %s before\n",
			    old.v.id, old.tube, queue_state_name(old.v.state),
			    created, age);
		}
	}
	rc = lt_flush(&b, stdout) ? LT_EXIT_OK : LT_EXIT_IO;
	buf_fini(&b);
out:
	queue_free(sc.q);
	lt_dir_free(&d);
	return rc;
}
