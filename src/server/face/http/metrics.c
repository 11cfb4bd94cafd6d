/* metrics - the stats reply in Prometheus's text exposition format
 * (version 0.0.4): every family with its HELP and TYPE lines, then its
 * samples. Per-tube families carry a `tube` label; the task counts a
 * `state` label too. Every number comes from one STATS reply, which lists
 * the deepest --metrics-tubes tubes only (the totals cover every tube):
 * a scrape's size is bounded whatever the node's tubes, and its cost on
 * the core is a look at each tube, never O(tasks).
 *
 * docs/operations.md lists every metric with its meaning; keep the two
 * in step. Pure: writes to the FILE it is given, nothing else. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/face/http/http_srv.h"
#include "server/face/http/metrics.h"

/* A value among `n` pairs by name (sluice_kv_get, sluice.h); 0 when the
 * server did not send it. */
static uint64_t
kv_or_0(const struct sluice_kv *kv, size_t n, const char *name)
{
	uint64_t v = 0;

	(void)sluice_kv_get(kv, n, name, &v);
	return v;
}

static uint64_t
node_kv(const struct sluice_stats *s, const char *name)
{
	return kv_or_0(s->kv, s->nkv, name);
}

static bool
node_has(const struct sluice_stats *s, const char *name)
{
	return sluice_kv_get(s->kv, s->nkv, name, NULL) == 0;
}

static uint64_t
tube_kv(const struct sluice_tube_stats *t, const char *name)
{
	return kv_or_0(t->kv, t->nkv, name);
}

static void
family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: backslash, double quote and newline escaped. */
static void
label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void
tube_sample(FILE *f, const char *name, const char *tube, uint64_t v)
{
	fprintf(f, "%s{tube=\"", name);
	label_value(f, tube);
	fprintf(f, "\"} %" PRIu64 "\n", v);
}

static void
gauge(FILE *f, const char *name, const char *help, uint64_t v)
{
	family(f, name, "gauge", help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

static void
counter(FILE *f, const char *name, const char *help, uint64_t v)
{
	family(f, name, "counter", help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

/* Milliseconds as seconds, exactly. */
static void
seconds(FILE *f, uint64_t ms)
{
	fprintf(f, "%" PRIu64 ".%03" PRIu64 "\n", ms / 1000, ms % 1000);
}

/* v / scale as a sample value or bound: milliseconds (scale 1000) as
 * seconds exactly, anything else to 9 digits. */
static void
scaled(char *out, size_t cap, uint64_t v, double scale)
{
	if (scale == 1000)
		snprintf(
		    out, cap, "%" PRIu64 ".%03" PRIu64, v / 1000, v % 1000);
	else
		snprintf(out, cap, "%.9g", (double)v / scale);
}

/* `name`, then the labels: the tube's (when not NULL) and le (when not
 * NULL). */
static void
series(FILE *f, const char *name, const char *tube, const char *le)
{
	fputs(name, f);
	if (tube == NULL && le == NULL)
		return;
	fputc('{', f);
	if (tube != NULL) {
		fputs("tube=\"", f);
		label_value(f, tube);
		fputs(le != NULL ? "\"," : "\"", f);
	}
	if (le != NULL)
		fprintf(f, "le=\"%s\"", le);
	fputc('}', f);
}

/* The samples of a histogram from the cumulative pairs PREFIX_le_B (the
 * last one PREFIX_le_inf) of kv[], labelled with `tube` unless NULL;
 * `scale` divides the bounds and the sum (us -> s, ms -> s). */
static void
histogram_samples(FILE *f, const struct sluice_kv *kv, size_t nkv,
    const char *name, const char *tube, const char *prefix, double scale,
    uint64_t sum)
{
	size_t plen = strlen(prefix);
	uint64_t count = 0;
	char metric[128], v[32];

	snprintf(metric, sizeof(metric), "%s_bucket", name);
	for (size_t i = 0; i < nkv; i++) {
		const char *n = kv[i].name;
		unsigned long long b;
		char *end;

		if (strncmp(n, prefix, plen) != 0 ||
		    strncmp(n + plen, "_le_", 4))
			continue;
		if (strcmp(n + plen + 4, "inf") == 0) {
			count = kv[i].value;
			continue;
		}
		b = strtoull(n + plen + 4, &end, 10);
		if (*end != '\0')
			continue;
		scaled(v, sizeof(v), b, scale);
		series(f, metric, tube, v);
		fprintf(f, " %" PRIu64 "\n", kv[i].value);
	}
	series(f, metric, tube, "+Inf");
	fprintf(f, " %" PRIu64 "\n", count);
	snprintf(metric, sizeof(metric), "%s_sum", name);
	series(f, metric, tube, NULL);
	scaled(v, sizeof(v), sum, scale);
	fprintf(f, " %s\n", v);
	snprintf(metric, sizeof(metric), "%s_count", name);
	series(f, metric, tube, NULL);
	fprintf(f, " %" PRIu64 "\n", count);
}

/* ---- per tube ----------------------------------------------------------- */

static const struct {
	const char *kv; /* the stats counter */
	const char *name;
	const char *help;
} tube_counters[] = {
	{ "puts", "sluice_tube_puts_total", "Tasks put (created)." },
	{ "takes", "sluice_tube_takes_total", "Tasks handed to workers." },
	{ "acks", "sluice_tube_acks_total", "Tasks acknowledged as done." },
	{ "releases", "sluice_tube_releases_total",
	    "Tasks released back by their workers." },
	{ "fails", "sluice_tube_fails_total",
	    "Tasks failed by their workers (retried later or buried)." },
	{ "buries", "sluice_tube_buries_total",
	    "Tasks buried (by a worker or after max_attempts)." },
	{ "kicks", "sluice_tube_kicks_total",
	    "Buried tasks kicked back to ready." },
	{ "deletes", "sluice_tube_deletes_total", "Tasks deleted." },
	{ "ttr_expired", "sluice_tube_ttr_expired_total",
	    "Leases that ended by ttr expiry (the task went back)." },
	{ "session_released", "sluice_tube_disconnect_releases_total",
	    "Tasks released because the worker's connection closed." },
	{ "replaces", "sluice_tube_replaces_total",
	    "Keyed tasks replaced by a put with replace." },
};

/* The settings in force for each tube (its own, or the server's). */
static void
settings_write(FILE *f, const struct sluice_stats *s)
{
	static const struct {
		const char *name;
		const char *help;
		bool ms;
	} fams[] = {
		{ "sluice_tube_ttr_seconds",
		    "The ttr a put without its own gets in this tube.", true },
		{ "sluice_tube_max_attempts",
		    "The max attempts a put without its own gets; 0: "
		    "unlimited.",
		    false },
		{ "sluice_tube_backoff_base_seconds",
		    "A fail's delay after the first attempt, doubling with "
		    "each.",
		    true },
		{ "sluice_tube_backoff_cap_seconds",
		    "The longest delay of a fail.", true },
		{ "sluice_tube_keep_done_seconds",
		    "How long finished tasks are kept; 0: not kept.", true },
	};

	for (size_t k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
		family(f, fams[k].name, "gauge", fams[k].help);
		for (size_t i = 0; i < s->ntubes; i++) {
			const struct sluice_tube_conf *c = &s->tubes[i].conf;
			const uint64_t v[] = { c->ttr_ms, c->max_attempts,
				c->backoff_base_ms, c->backoff_cap_ms,
				c->keep_done_ms };

			fprintf(f, "%s{tube=\"", fams[k].name);
			label_value(f, s->tubes[i].name);
			fputs("\"} ", f);
			if (fams[k].ms)
				seconds(f, v[k]);
			else
				fprintf(f, "%" PRIu64 "\n", v[k]);
		}
	}
	family(f, "sluice_tube_dead_letter", "gauge",
	    "1 for a tube whose buried tasks go to the dead_letter tube.");
	for (size_t i = 0; i < s->ntubes; i++) {
		if (s->tubes[i].conf.dead_letter[0] == '\0')
			continue;
		fputs("sluice_tube_dead_letter{tube=\"", f);
		label_value(f, s->tubes[i].name);
		fputs("\",dead_letter=\"", f);
		label_value(f, s->tubes[i].conf.dead_letter);
		fputs("\"} 1\n", f);
	}
}

/* A limited tube's sample of `name` labelled limit="rate|concurrency". */
static void
limit_sample(
    FILE *f, const char *name, const char *tube, const char *limit, uint64_t v)
{
	fprintf(f, "%s{tube=\"", name);
	label_value(f, tube);
	fprintf(f, "\",limit=\"%s\"} %" PRIu64 "\n", limit, v);
}

/* The flow limits of the tubes that have them (the limit_* pairs of
 * stats): what each limit holds back now and how often it held a take
 * back, the tokens and slots, the takes that wait on a limit. Tubes
 * without limits have no series here. */
static void
limits_write(FILE *f, const struct sluice_stats *s)
{
	static const struct {
		const char *name, *type, *help, *rate_kv, *conc_kv;
	} fams[] = {
		{ "sluice_tube_limit_held_tasks", "gauge",
		    "Ready tasks a flow limit of the tube holds back now.",
		    "limit_held_rate", "limit_held_concurrency" },
		{ "sluice_tube_limit_holds_total", "counter",
		    "Takes that found the tube's ready tasks held back by "
		    "a limit (since the limit was set or the node started).",
		    "limit_rate_holds", "limit_concurrency_holds" },
		{ "sluice_tube_limit", "gauge",
		    "The limit: tasks a second (rate), tasks taken at once "
		    "(concurrency).",
		    NULL, "limit_concurrency" },
	};
	uint64_t v;

	for (size_t k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
		family(f, fams[k].name, fams[k].type, fams[k].help);
		for (size_t i = 0; i < s->ntubes; i++) {
			const struct sluice_tube_stats *t = &s->tubes[i];

			if (sluice_kv_get(
			        t->kv, t->nkv, "limit_held_rate", NULL) != 0)
				continue; /* no limits */
			if (k == 2) {     /* the rate as tasks a second */
				uint64_t per = tube_kv(t, "limit_rate_per_ms");

				if (per != 0) {
					fprintf(f, "%s{tube=\"", fams[k].name);
					label_value(f, t->name);
					fprintf(f, "\",limit=\"rate\"} %.6g\n",
					    (double)tube_kv(t, "limit_rate") *
					        1000.0 / (double)per);
				}
			} else {
				limit_sample(f, fams[k].name, t->name, "rate",
				    tube_kv(t, fams[k].rate_kv));
			}
			if (k != 2 ||
			    sluice_kv_get(t->kv, t->nkv, fams[k].conc_kv, &v) ==
			        0)
				limit_sample(f, fams[k].name, t->name,
				    "concurrency", tube_kv(t, fams[k].conc_kv));
		}
	}
	family(f, "sluice_tube_limit_tokens", "gauge",
	    "Whole tokens in the tube's rate bucket.");
	for (size_t i = 0; i < s->ntubes; i++)
		if (sluice_kv_get(s->tubes[i].kv, s->tubes[i].nkv,
		        "limit_tokens", &v) == 0)
			tube_sample(
			    f, "sluice_tube_limit_tokens", s->tubes[i].name, v);
	family(f, "sluice_tube_limit_waiting_takes", "gauge",
	    "Takes that wait on the tube while a limit holds it back.");
	for (size_t i = 0; i < s->ntubes; i++)
		if (sluice_kv_get(s->tubes[i].kv, s->tubes[i].nkv,
		        "limit_waiting_takes", &v) == 0)
			tube_sample(f, "sluice_tube_limit_waiting_takes",
			    s->tubes[i].name, v);
}

/* The histograms of work and wait since each tube's first event, from
 * the pairs work_ms_le_B, wait_ms_le_B (stats flag durations: the busiest
 * tubes only, protocol.md) in ms. */
static void
durations_write(FILE *f, const struct sluice_stats *s)
{
	static const struct {
		const char *name, *help, *prefix, *sum;
	} fams[] = {
		{ "sluice_task_duration_seconds",
		    "Work of the tube's acked tasks, take to ack, since the "
		    "tube's first event.",
		    "work_ms", "work_ms_sum" },
		{ "sluice_task_wait_seconds",
		    "Wait of the tube's takes, ready to take, since the "
		    "tube's first event.",
		    "wait_ms", "wait_ms_sum" },
	};
	char inf[32];

	for (size_t k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
		family(f, fams[k].name, "histogram", fams[k].help);
		snprintf(inf, sizeof(inf), "%s_le_inf", fams[k].prefix);
		for (size_t i = 0; i < s->ntubes; i++) {
			const struct sluice_tube_stats *t = &s->tubes[i];

			if (sluice_kv_get(t->kv, t->nkv, inf, NULL) == 0)
				histogram_samples(f, t->kv, t->nkv,
				    fams[k].name, t->name, fams[k].prefix, 1000,
				    tube_kv(t, fams[k].sum));
		}
	}
}

static void
tubes_write(FILE *f, const struct sluice_stats *s)
{
	static const char *const states[] = { "ready", "delayed", "taken",
		"buried", "waiting" };

	family(f, "sluice_tube_tasks", "gauge",
	    "Tasks in the tube by state (ready, delayed, taken, buried, "
	    "waiting for their parents).");
	for (size_t i = 0; i < s->ntubes; i++) {
		const struct sluice_tube_stats *t = &s->tubes[i];
		uint64_t v[5] = { t->ready, t->delayed, t->taken, t->buried,
			tube_kv(t, "waiting") };

		for (int k = 0; k < 5; k++) {
			fputs("sluice_tube_tasks{tube=\"", f);
			label_value(f, t->name);
			fprintf(f, "\",state=\"%s\"} %" PRIu64 "\n", states[k],
			    v[k]);
		}
	}
	family(f, "sluice_tube_oldest_ready_age_seconds", "gauge",
	    "How long the tube's oldest ready task has been ready; 0 when "
	    "none is.");
	for (size_t i = 0; i < s->ntubes; i++) {
		fputs("sluice_tube_oldest_ready_age_seconds{tube=\"", f);
		label_value(f, s->tubes[i].name);
		fputs("\"} ", f);
		seconds(f, s->tubes[i].oldest_ready_age_ms);
	}
	family(f, "sluice_tube_paused", "gauge",
	    "1 while the tube is paused (hands out no task).");
	for (size_t i = 0; i < s->ntubes; i++)
		tube_sample(f, "sluice_tube_paused", s->tubes[i].name,
		    s->tubes[i].paused_until != 0);
	family(f, "sluice_tube_groups", "gauge",
	    "The tube's live fair groups (put with a group; 0: none).");
	for (size_t i = 0; i < s->ntubes; i++)
		tube_sample(f, "sluice_tube_groups", s->tubes[i].name,
		    tube_kv(&s->tubes[i], "groups"));
	for (size_t k = 0; k < sizeof(tube_counters) / sizeof(tube_counters[0]);
	     k++) {
		family(
		    f, tube_counters[k].name, "counter", tube_counters[k].help);
		for (size_t i = 0; i < s->ntubes; i++)
			tube_sample(f, tube_counters[k].name, s->tubes[i].name,
			    tube_kv(&s->tubes[i], tube_counters[k].kv));
	}
	settings_write(f, s);
	limits_write(f, s);
	durations_write(f, s);
}

/* ---- the node ----------------------------------------------------------- */

/* A node histogram from its pairs PREFIX_le_B. */
static void
histogram(FILE *f, const struct sluice_stats *s, const char *name,
    const char *help, const char *prefix, double scale, uint64_t sum)
{
	family(f, name, "histogram", help);
	histogram_samples(f, s->kv, s->nkv, name, NULL, prefix, scale, sum);
}

/* A leader's followers: follower_NAME_acked_lsn, _lag_records, _lag_ms,
 * _ack_ms and _ack_ms_max, labelled follower="NAME" (the member's --node
 * name, or its address: ops/stats.c names them); every follower has an
 * acked_lsn pair, which says its name. */
static void
followers_write(FILE *f, const struct sluice_stats *s)
{
	static const struct {
		const char *kv, *name, *help;
		bool ms;
	} per[] = {
		{ "acked_lsn", "sluice_follower_acked_lsn",
		    "The LSN up to which a follower holds the log durably.",
		    false },
		{ "lag_records", "sluice_follower_lag_records",
		    "Records this leader wrote that a follower has not acked.",
		    false },
		{ "lag_ms", "sluice_follower_lag_seconds",
		    "How long ago the oldest record a follower lacks was "
		    "written.",
		    true },
		{ "ack_ms", "sluice_follower_ack_seconds",
		    "From the append of the record a follower acked last to "
		    "its ack that the record is durable there.",
		    true },
		{ "ack_ms_max", "sluice_follower_ack_max_seconds",
		    "The most sluice_follower_ack_seconds was since the "
		    "follower connected.",
		    true },
	};
	static const char pre[] = "follower_", post[] = "_acked_lsn";
	uint64_t n = node_kv(s, "followers");
	char key[160];

	gauge(f, "sluice_followers", "Followers connected to this leader.", n);
	for (size_t k = 0; k < sizeof(per) / sizeof(per[0]); k++) {
		family(f, per[k].name, "gauge", per[k].help);
		for (size_t i = 0; i < s->nkv; i++) {
			const char *nm = s->kv[i].name;
			size_t len = strlen(nm);
			int w;

			if (len <= strlen(pre) + strlen(post) ||
			    strncmp(nm, pre, strlen(pre)) != 0 ||
			    strcmp(nm + len - strlen(post), post) != 0)
				continue;
			w = (int)(len - strlen(pre) - strlen(post));
			snprintf(key, sizeof(key), "%s%.*s_%s", pre, w,
			    nm + strlen(pre), per[k].kv);
			if (!node_has(s, key))
				continue;
			fprintf(f, "%s{follower=\"%.*s\"} ", per[k].name, w,
			    nm + strlen(pre));
			if (per[k].ms)
				seconds(f, node_kv(s, key));
			else
				fprintf(f, "%" PRIu64 "\n", node_kv(s, key));
		}
	}
}

/* Automatic failover (--etcd): the node's view of its lease. */
static void
cluster_write(FILE *f, const struct sluice_stats *s)
{
	uint64_t err_at = node_kv(s, "cluster_etcd_error_at");

	if (!node_has(s, "cluster_on"))
		return;
	gauge(f, "sluice_cluster_leader",
	    "1 while this node holds the cluster's leader lease in etcd.",
	    node_kv(s, "cluster_leader"));
	family(f, "sluice_cluster_lease_remaining_seconds", "gauge",
	    "How long the leader lease lasts by its last renewal; 0 on a "
	    "node that holds none.");
	fputs("sluice_cluster_lease_remaining_seconds ", f);
	seconds(f, node_kv(s, "cluster_lease_remaining_ms"));
	family(f, "sluice_cluster_lease_renewal_age_seconds", "gauge",
	    "Seconds since this node last renewed its lease in etcd.");
	fputs("sluice_cluster_lease_renewal_age_seconds ", f);
	seconds(f, node_kv(s, "cluster_renewal_age_ms"));
	counter(f, "sluice_cluster_etcd_errors_total",
	    "etcd calls that failed since start (the last one's text: "
	    "sluice cluster).",
	    node_kv(s, "cluster_etcd_errors"));
	family(f, "sluice_cluster_etcd_last_error_timestamp_seconds", "gauge",
	    "Unix time of the last failed etcd call; 0: none.");
	fputs("sluice_cluster_etcd_last_error_timestamp_seconds ", f);
	seconds(f, err_at);
	counter(f, "sluice_cluster_elections_total",
	    "Leader keys this node won since start.",
	    node_kv(s, "cluster_elections"));
}

/* The bounds of the native and beanstalk faces' connections
 * (docs/security.md). */
static void
conns_write(FILE *f, const struct sluice_stats *s)
{
	static const struct {
		const char *reason, *key;
	} why[] = {
		{ "descriptors", "conns_refused_fds" },
		{ "max_conns", "conns_refused_full" },
		{ "unauth_evicted", "conns_evicted_unauth" },
		{ "handshake_timeout", "conns_closed_handshake" },
		{ "frame_timeout", "conns_closed_frame" },
		{ "idle_timeout", "conns_closed_idle" },
		{ "stall_timeout", "conns_closed_stalled" },
		{ "protocol", "conns_closed_refused" },
	};

	if (!node_has(s, "conns_accept_exhausted"))
		return;
	counter(f, "sluice_accept_exhausted_total",
	    "Times accept() found no descriptor left (EMFILE, ENFILE) on the "
	    "native or beanstalk face; the listener paused.",
	    node_kv(s, "conns_accept_exhausted"));
	family(f, "sluice_connections_closed_total", "counter",
	    "Connections of the native and beanstalk faces refused or "
	    "closed by a bound, by reason.");
	for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++)
		fprintf(f,
		    "sluice_connections_closed_total{reason=\"%s\"} %" PRIu64
		    "\n",
		    why[i].reason, node_kv(s, why[i].key));
	if (!node_has(s, "repl_conns_refused_full"))
		return;
	family(f, "sluice_repl_connections_closed_total", "counter",
	    "Connections to the replication port refused or closed by a "
	    "bound, by reason.");
	fprintf(f,
	    "sluice_repl_connections_closed_total{reason=\"max_conns\"} "
	    "%" PRIu64 "\n",
	    node_kv(s, "repl_conns_refused_full"));
	fprintf(f,
	    "sluice_repl_connections_closed_total{reason=\"handshake_timeout\"}"
	    " "
	    "%" PRIu64 "\n",
	    node_kv(s, "repl_conns_closed_handshake"));
	fprintf(f,
	    "sluice_repl_connections_closed_total{reason=\"unauth_evicted\"} "
	    "%" PRIu64 "\n",
	    node_kv(s, "repl_conns_evicted_unauth"));
	fprintf(f,
	    "sluice_repl_connections_closed_total{reason=\"other\"} "
	    "%" PRIu64 "\n",
	    node_kv(s, "repl_conns_closed_other"));
}

static void
node_write(FILE *f, const struct sluice_stats *s)
{
	uint64_t snap_at = node_kv(s, "snapshot_at");

	family(f, "sluice_role", "gauge",
	    "1 for the role this node has now (leader or follower).");
	fprintf(
	    f, "sluice_role{role=\"leader\"} %d\n", s->role == SLUICE_LEADER);
	fprintf(f, "sluice_role{role=\"follower\"} %d\n",
	    s->role == SLUICE_FOLLOWER);
	gauge(f, "sluice_epoch", "The replication epoch of the log.", s->epoch);
	gauge(f, "sluice_leader_lost",
	    "1 on a follower not connected to its leader.",
	    s->role == SLUICE_FOLLOWER && node_has(s, "leader_connected") &&
	        node_kv(s, "leader_connected") == 0);
	gauge(f, "sluice_fenced",
	    "1 on a leader that learned of a newer leader (it refuses "
	    "writes).",
	    node_kv(s, "fenced"));
	gauge(f, "sluice_replication_lag_records",
	    "On a follower: records the leader wrote that this node lacks.",
	    node_kv(s, "lag_records"));
	family(f, "sluice_replication_lag_seconds", "gauge",
	    "On a follower: how long ago the leader wrote its newest record "
	    "while this node still lacks records; 0 when caught up.");
	fputs("sluice_replication_lag_seconds ", f);
	seconds(f, node_kv(s, "lag_ms"));
	gauge(f, "sluice_lsn", "The LSN of the last record written.", s->lsn);
	gauge(f, "sluice_durable_lsn",
	    "The last LSN durable under the fsync policy.", s->durable_lsn);
	family(f, "sluice_uptime_seconds", "gauge",
	    "Seconds since the server started.");
	fputs("sluice_uptime_seconds ", f);
	seconds(f, node_kv(s, "uptime_ms"));
	family(f, "sluice_recovery_seconds", "gauge",
	    "How long start-up recovery (snapshot + log replay) took.");
	fputs("sluice_recovery_seconds ", f);
	seconds(f, node_kv(s, "recovery_ms"));
	gauge(f, "sluice_connections", "Client connections open.",
	    node_kv(s, "sessions"));
	conns_write(f, s);
	gauge(f, "sluice_waiting_takes",
	    "Takes waiting for a task (blocked workers).",
	    node_kv(s, "waiting_takes"));
	gauge(f, "sluice_waiting_results",
	    "Waits for a task's result parked now (wait, the result's long "
	    "poll).",
	    node_kv(s, "waiting_results"));
	gauge(f, "sluice_outcomes",
	    "Outcomes of finished tasks kept for wait (--dedup-window).",
	    node_kv(s, "outcomes"));
	gauge(f, "sluice_outcome_bytes",
	    "Memory the kept outcomes take, at most 64 MiB.",
	    node_kv(s, "outcome_bytes"));
	gauge(f, "sluice_tubes", "Tubes in use.", node_kv(s, "tubes"));
	gauge(f, "sluice_schedules", "Schedules held (sluice schedule).",
	    node_kv(s, "schedules"));
	counter(f, "sluice_schedule_firings_total",
	    "Schedule slots that put a task, decided by this node as leader "
	    "since it started.",
	    node_kv(s, "schedule_firings"));
	gauge(f, "sluice_batches",
	    "Batches held, live and ended ones kept (sluice batch).",
	    node_kv(s, "batches"));
	counter(f, "sluice_batch_firings_total",
	    "Ended batches whose callbacks this node put as leader since it "
	    "started.",
	    node_kv(s, "batch_firings"));
	gauge(f, "sluice_tasks", "Live tasks in every tube and state.",
	    node_kv(s, "tasks"));
	family(f, "sluice_tasks_by_state", "gauge",
	    "Tasks of every tube by state (ready, delayed, taken, buried, "
	    "waiting): the totals, listed tubes or not.");
	fprintf(f,
	    "sluice_tasks_by_state{state=\"ready\"} %" PRIu64 "\n"
	    "sluice_tasks_by_state{state=\"delayed\"} %" PRIu64 "\n"
	    "sluice_tasks_by_state{state=\"taken\"} %" PRIu64 "\n"
	    "sluice_tasks_by_state{state=\"buried\"} %" PRIu64 "\n"
	    "sluice_tasks_by_state{state=\"waiting\"} %" PRIu64 "\n",
	    s->totals.ready, s->totals.delayed, s->totals.taken,
	    s->totals.buried, tube_kv(&s->totals, "waiting"));
	gauge(f, "sluice_tubes_listed",
	    "Tubes with series of their own here: the deepest, at most "
	    "sluiced --metrics-tubes.",
	    s->ntubes);
	counter(f, "sluice_waiting_takes_refused_total",
	    "Takes refused a wait by --max-waiting-takes or "
	    "--max-waiting-takes-per-conn.",
	    node_kv(s, "waiting_takes_refused"));
	gauge(f, "sluice_log_segments",
	    "Log segment files in the data "
	    "directory.",
	    node_kv(s, "log_segments"));
	counter(f, "sluice_log_written_bytes_total",
	    "Bytes written to log segments since start.",
	    node_kv(s, "log_bytes"));
	counter(f, "sluice_log_fsyncs_total",
	    "fdatasyncs of the log since start.", node_kv(s, "log_fsyncs"));
	counter(f, "sluice_log_fsync_op_commits_total",
	    "Group commits made durable by an fdatasync after the write "
	    "(--wal-commit uring-fsync; uring-auto's under few clients) "
	    "rather than by the write itself.",
	    node_kv(s, "log_fsync_op_commits"));
	counter(f, "sluice_log_batches_beside_total",
	    "Group commits written while another was in flight "
	    "(--wal-inflight).",
	    node_kv(s, "log_batches_beside"));
	counter(f, "sluice_log_pads_total",
	    "Pad records that ended a group commit on a block, so that the "
	    "next could be written beside it (--wal-inflight).",
	    node_kv(s, "log_pads"));
	counter(f, "sluice_commit_holds_total",
	    "Group commits held back, nothing in flight, for the writers the "
	    "last one answered to come back.",
	    node_kv(s, "commit_holds"));
	counter(f, "sluice_commit_holds_filled_total",
	    "Holds that ended with as many writes waiting as the last commit "
	    "answered.",
	    node_kv(s, "commit_holds_filled"));
	counter(f, "sluice_commit_holds_ran_out_total",
	    "Holds that ended at their limit: as long as the last commit took, "
	    "at most 1 ms.",
	    node_kv(s, "commit_holds_ran_out"));
	gauge(f, "sluice_log_available_bytes",
	    "Log space left in the current and preallocated segments.",
	    node_kv(s, "log_available"));
	gauge(f, "sluice_log_reserved_bytes",
	    "Log space kept for the records live tasks still need, and for "
	    "retries; puts may not use it.",
	    node_kv(s, "log_reserved"));
	gauge(f, "sluice_log_refusing_puts",
	    "1 while the log is full: puts are refused; takes, acks, fails "
	    "and deletes still work.",
	    node_kv(s, "log_refusing_puts"));
	gauge(f, "sluice_log_files_bytes",
	    "Bytes of log segment files, preallocated ones included.",
	    node_kv(s, "log_files_bytes"));
	gauge(f, "sluice_log_failed",
	    "1 once a log write or fsync failed: writes are refused until "
	    "a restart.",
	    node_kv(s, "log_failed"));
	histogram(f, s, "sluice_log_commit_seconds",
	    "Group commit latency: a batch's write submitted to its "
	    "fdatasync done.",
	    "log_commit_us", 1e6, node_kv(s, "log_commit_us_sum"));
	histogram(f, s, "sluice_log_batch_records",
	    "Records per group-commit batch.", "log_batch", 1,
	    node_kv(s, "log_batch_records"));
	gauge(f, "sluice_snapshot_lsn", "The LSN the newest snapshot covers.",
	    node_kv(s, "snapshot_lsn"));
	counter(f, "sluice_auth_failures_total",
	    "Tokens refused because they are not in the token file (--auth).",
	    node_kv(s, "auth_failures"));
	counter(f, "sluice_auth_delayed_total",
	    "Of those, the ones past their address's allowance, answered "
	    "after a longer pause.",
	    node_kv(s, "auth_delayed"));
	counter(f, "sluice_auth_dropped_total",
	    "Of those, the ones past a bound on the answers waiting (per "
	    "address, or in all): their connection closed unanswered.",
	    node_kv(s, "auth_dropped"));
	family(f, "sluice_snapshot_age_seconds", "gauge",
	    "Seconds since the newest snapshot was published; NaN when "
	    "this process has published none.");
	fputs("sluice_snapshot_age_seconds ", f);
	if (snap_at != 0)
		seconds(f, s->now > snap_at ? s->now - snap_at : 0);
	else
		fputs("NaN\n", f);
	family(f, "sluice_snapshot_duration_seconds", "gauge",
	    "How long the newest snapshot took to write.");
	fputs("sluice_snapshot_duration_seconds ", f);
	seconds(f, node_kv(s, "snapshot_ms"));
	gauge(f, "sluice_sync_replicas",
	    "Followers that must hold a write before it is answered.",
	    node_kv(s, "sync_replicas"));
	followers_write(f, s);
	cluster_write(f, s);
}

void
metrics_write(FILE *f, const struct sluice_stats *s)
{
	node_write(f, s);
	tubes_write(f, s);
}

void
metrics_groups(FILE *f, const struct sluice_group *g, size_t n)
{
	static const struct {
		const char *name, *help;
	} fams[] = {
		{ "sluice_group_ready_tasks",
		    "Ready tasks of a fair group, for the groups of every tube "
		    "with the largest backlog." },
		{ "sluice_group_taken_tasks",
		    "Tasks of a fair group taken now, for the groups of every "
		    "tube with the largest backlog." },
		{ "sluice_group_oldest_ready_age_seconds",
		    "How long the oldest ready task of a fair group has waited "
		    "since it was due, for the groups of every tube with the "
		    "largest backlog." },
	};

	if (n > METRICS_GROUPS)
		n = METRICS_GROUPS;
	for (size_t k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
		family(f, fams[k].name, "gauge", fams[k].help);
		for (size_t i = 0; i < n; i++) {
			fprintf(f, "%s{tube=\"", fams[k].name);
			label_value(f, g[i].tube);
			fputs("\",group=\"", f);
			label_value(f, g[i].group != NULL ? g[i].group : "");
			fputs("\"} ", f);
			if (k == 2)
				seconds(f, g[i].oldest_ready_ms);
			else
				fprintf(f, "%" PRIu64 "\n",
				    k == 0 ? g[i].ready : g[i].taken);
		}
	}
}

void
metrics_http(FILE *f, const struct http_srv_stats *st)
{
	static const char closed[] = "sluice_http_connections_closed_total";

	gauge(f, "sluice_http_connections", "HTTP connections open", st->open);
	family(f, "sluice_http_connections_accepted_total", "counter",
	    "HTTP connections accepted");
	fprintf(f, "sluice_http_connections_accepted_total %" PRIu64 "\n",
	    st->accepted);
	family(f, closed, "counter",
	    "HTTP connections the server closed: past --http-max-conns, a "
	    "head too slow, idle, a malformed head");
	fprintf(
	    f, "%s{reason=\"max_conns\"} %" PRIu64 "\n", closed, st->over_cap);
	fprintf(f, "%s{reason=\"header_timeout\"} %" PRIu64 "\n", closed,
	    st->head_timeouts);
	fprintf(f, "%s{reason=\"idle_timeout\"} %" PRIu64 "\n", closed,
	    st->idle_timeouts);
	fprintf(
	    f, "%s{reason=\"bad_head\"} %" PRIu64 "\n", closed, st->bad_heads);
	family(f, "sluice_http_accept_errors_total", "counter",
	    "HTTP accepts that failed (descriptors or memory run out)");
	fprintf(f, "sluice_http_accept_errors_total %" PRIu64 "\n",
	    st->accept_errors);
}
