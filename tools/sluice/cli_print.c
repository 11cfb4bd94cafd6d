/* cli_print - how the sluice tool shows results: JSON with the field names
 * of docs/client.md (the names of take, peek, put, stats, list and errors
 * are fixed; more fields may be added), or aligned text for humans. */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_util.h"
#include "json/json.h"
#include "util/dur.h"

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- tasks ------------------------------------------------------------- */

static bool
payload_omitted(const struct sluice_task *t)
{
	return t->payload_len == 0 && t->size > 0;
}

/* "in 3s" / "3s ago" relative to now, for times near enough to matter. */
static void
fmt_when(char *out, size_t n, uint64_t unix_ms)
{
	char abs[40], rel[32];
	uint64_t now = now_ms();

	cli_fmt_time(abs, sizeof(abs), unix_ms);
	if (unix_ms == 0) {
		snprintf(out, n, "-");
	} else if (unix_ms >= now) {
		dur_fmt(rel, sizeof(rel), unix_ms - now);
		snprintf(out, n, "%s (in %s)", abs, rel);
	} else {
		dur_fmt(rel, sizeof(rel), now - unix_ms);
		snprintf(out, n, "%s (%s ago)", abs, rel);
	}
}

/* Who holds a taken task's lease: "detached", "session 17
 * (127.0.0.1:40312)", or "session" from a server that does not say. */
static void
fmt_holder(char *out, size_t n, const struct sluice_task *t)
{
	if (t->detached)
		snprintf(out, n, "detached");
	else if (t->session == 0)
		snprintf(out, n, "session");
	else if (t->peer == NULL)
		snprintf(out, n, "session %" PRIu32, t->session);
	else
		snprintf(
		    out, n, "session %" PRIu32 " (%s)", t->session, t->peer);
}

/* Its parents (with their outcomes and results) and children. */
static void
task_deps_text(FILE *f, const struct sluice_task *t)
{
	static const char *const outcomes[] = { "not finished", "acked",
		"failed" };
	static const char *const rules[] = { "fail", "ignore", "cancel" };

	if (t->nparents > 0) {
		fprintf(f,
		    "parents       %zu, %" PRIu32 " not acked yet; "
		    "if one fails: %s\n",
		    t->nparents, t->parents_pending,
		    rules[t->on_parent_failure % 3]);
		for (size_t i = 0; i < t->nparents; i++) {
			const struct sluice_parent *p = &t->parents[i];

			fprintf(f, "  %-11" PRIu64 " %s", p->id,
			    outcomes[p->outcome % 3]);
			if (p->result != NULL) {
				fputs(", result ", f);
				cli_print_bytes(f, p->result, p->result_len);
			}
			fputc('\n', f);
		}
	}
	if (t->nchildren > 0) {
		fprintf(f, "children      %" PRIu64 ":", t->nchildren);
		for (size_t i = 0; i < t->nchildren_shown; i++)
			fprintf(f, " %" PRIu64, t->children[i]);
		if (t->nchildren_shown < t->nchildren)
			fputs(" ...", f);
		fputc('\n', f);
	}
}

static void
task_text(FILE *f, const struct sluice_task *t)
{
	char when[96], dur[32];

	fprintf(f, "id            %" PRIu64 "\n", t->id);
	fprintf(f, "tube          %s\n", t->tube);
	if (t->cluster != NULL)
		fprintf(f, "cluster       %s\n", t->cluster);
	fprintf(f, "state         %s\n", sluice_state_name(t->state));
	if (t->lease)
		fprintf(f, "lease         %" PRIu64 "\n", t->lease);
	if (t->state == SLUICE_TAKEN) {
		fmt_holder(when, sizeof(when), t);
		fprintf(f, "holder        %s\n", when);
	}
	fprintf(f, "priority      %" PRIu32 "\n", t->priority);
	if (t->max_attempts)
		fprintf(f, "attempts      %" PRIu32 " of %" PRIu32 "\n",
		    t->attempts, t->max_attempts);
	else
		fprintf(f, "attempts      %" PRIu32 "\n", t->attempts);
	fmt_when(when, sizeof(when), t->run_at);
	fprintf(f, "run_at        %s\n", when);
	if (t->deadline) {
		fmt_when(when, sizeof(when), t->deadline);
		fprintf(f, "deadline      %s\n", when);
	}
	dur_fmt(dur, sizeof(dur), t->ttr_ms);
	fprintf(f, "ttr           %s\n", dur);
	if (t->period_ms) {
		dur_fmt(dur, sizeof(dur), t->period_ms);
		fprintf(f, "every         %s\n", dur);
	}
	fmt_when(when, sizeof(when), t->created_at);
	fprintf(f, "created_at    %s\n", when);
	if (t->key) {
		fputs("key           ", f);
		cli_print_bytes(f, t->key, strlen(t->key));
		fputc('\n', f);
	}
	if (t->version)
		fprintf(f, "version       %" PRIu64 "\n", t->version);
	if (t->group) {
		fputs("group         ", f);
		cli_print_bytes(f, t->group, strlen(t->group));
		fputc('\n', f);
	}
	if (t->last_error) {
		fputs("last_error    ", f);
		cli_print_bytes(f, t->last_error, strlen(t->last_error));
		fputc('\n', f);
	}
	fprintf(f, "size          %zu\n", t->size);
	if (!payload_omitted(t)) {
		fputs("payload       ", f);
		cli_print_bytes(f, t->payload, t->payload_len);
		fputc('\n', f);
	}
	if (t->state == SLUICE_DONE) {
		fmt_when(when, sizeof(when), t->finished_at);
		fprintf(f, "finished_at   %s\n", when);
		dur_fmt(dur, sizeof(dur), t->duration_ms);
		fprintf(f, "duration      %s\n", dur);
		fmt_when(when, sizeof(when), t->kept_until);
		fprintf(f, "kept_until    %s\n", when);
		if (t->result) {
			fputs("result        ", f);
			cli_print_bytes(f, t->result, strlen(t->result));
			fputc('\n', f);
		}
	}
	task_deps_text(f, t);
	if (t->replace_pending) {
		fprintf(f,
		    "replacement   pending, taken when the lease ends: "
		    "priority "
		    "%" PRIu32 ", size %zu\n",
		    t->pending.priority, t->pending.size);
		if (t->pending.version)
			fprintf(f, "  version     %" PRIu64 "\n",
			    t->pending.version);
		if (t->pending.payload_len > 0 || t->pending.size == 0) {
			fputs("  payload     ", f);
			cli_print_bytes(
			    f, t->pending.payload, t->pending.payload_len);
			fputc('\n', f);
		}
	}
}

void
cli_print_task_json(FILE *f, const struct sluice_task *t)
{
	json_task(f, t);
}

void
cli_print_task(FILE *f, const struct sluice_task *t, bool json)
{
	if (json) {
		json_task(f, t);
		fputc('\n', f);
	} else {
		task_text(f, t);
	}
}

void
cli_print_list_head(FILE *f, bool json)
{
	if (json)
		fputs("{\"tasks\":[", f);
	else
		fprintf(f, "%-10s %-8s %10s %9s  %-29s %8s  %s\n", "ID",
		    "STATE", "PRIORITY", "ATTEMPTS", "RUN_AT", "SIZE",
		    "KEY / LAST_ERROR / HOLDER");
}

/* A list row's last column: what is there of group, key, last error,
 * (taken) holder and parents ("after 3,4"), separated by " / ". */
static void
row_text(FILE *f, const struct sluice_task *t)
{
	const char *sep = "";
	char holder[96];

	if (t->group) {
		fputs("group ", f);
		cli_print_bytes(f, t->group, strlen(t->group));
		sep = " / ";
	}
	if (t->key) {
		fputs(sep, f);
		cli_print_bytes(f, t->key, strlen(t->key));
		sep = " / ";
	}
	if (t->last_error) {
		fputs(sep, f);
		cli_print_bytes(f, t->last_error, strlen(t->last_error));
		sep = " / ";
	}
	if (t->state == SLUICE_TAKEN) {
		fmt_holder(holder, sizeof(holder), t);
		fprintf(f, "%s%s", sep, holder);
		sep = " / ";
	}
	if (t->nparents > 0) {
		fprintf(f, "%safter", sep);
		for (size_t i = 0; i < t->nparents; i++)
			fprintf(
			    f, "%s%" PRIu64, i ? "," : " ", t->parents[i].id);
	}
	fputc('\n', f);
}

void
cli_print_list_rows(
    FILE *f, const struct sluice_task *t, size_t n, bool json, bool first)
{
	char when[48];

	if (json) {
		for (size_t i = 0; i < n; i++) {
			if (i > 0 || !first)
				fputc(',', f);
			json_task(f, &t[i]);
		}
		return;
	}
	for (size_t i = 0; i < n; i++) {
		cli_fmt_time(when, sizeof(when), t[i].run_at);
		fprintf(f,
		    "%-10" PRIu64 " %-8s %10" PRIu32 " %9" PRIu32
		    "  %-29s %8zu  ",
		    t[i].id, sluice_state_name(t[i].state), t[i].priority,
		    t[i].attempts, when, t[i].size);
		row_text(f, &t[i]);
	}
}

void
cli_print_task_list(
    FILE *f, const struct sluice_task *t, size_t n, uint64_t omitted, bool json)
{
	cli_print_list_head(f, json);
	cli_print_list_rows(f, t, n, json, true);
	if (json)
		fprintf(f, "],\"omitted\":%" PRIu64 "}\n", omitted);
	else if (omitted > 0)
		fprintf(f,
		    "(%" PRIu64 " more not shown: --limit N shows up to %d, "
		    "--state and --order choose which, --after ID and --all "
		    "page through them)\n",
		    omitted, SLUICE_LIST_MAX);
}

void
cli_print_list_next(FILE *f, uint64_t next, bool json)
{
	if (json && next > 0)
		fprintf(f, "],\"next\":%" PRIu64 "}\n", next);
	else if (json)
		fputs("],\"next\":null}\n", f);
	else if (next > 0)
		fprintf(f,
		    "(there may be more: --after %" PRIu64 " shows the next "
		    "page)\n",
		    next);
}

/* ---- stats --------------------------------------------------------------- */

/* A tube's waiting tasks (its "waiting" pair; 0 when it has none). */
static uint64_t
waiting_of(const struct sluice_tube_stats *t)
{
	uint64_t v = 0;

	(void)sluice_kv_get(t->kv, t->nkv, "waiting", &v);
	return v;
}

/* A tube's row; with `waiting`, a WAITING column after BURIED. */
static void
counts_row(
    FILE *f, const char *name, const struct sluice_tube_stats *t, bool waiting)
{
	char age[32], paused[48];

	if (t->oldest_ready_age_ms)
		dur_fmt(age, sizeof(age), t->oldest_ready_age_ms);
	else
		snprintf(age, sizeof(age), "-");
	cli_fmt_time(paused, sizeof(paused), t->paused_until);
	fprintf(f, "%-24s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64,
	    name, t->ready, t->delayed, t->taken, t->buried);
	if (waiting)
		fprintf(f, " %9" PRIu64, waiting_of(t));
	fprintf(f, "  %-12s %s\n", age, t->paused_until ? paused : "-");
}

static bool
ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && strcmp(s + n - t, tail) == 0;
}

/* One key/value for people, by what its name says it is: a duration
 * (NAME_ms, shown as NAME, or NAME_took for what the last snapshot and
 * recovery took), a time (NAME_at), a size (log_bytes, log_reserved,
 * log_available), else a count. */
static void
kv_text(FILE *f, const struct sluice_kv *kv)
{
	char label[64], val[64];
	size_t n = strlen(kv->name);

	snprintf(label, sizeof(label), "%s", kv->name);
	if (ends_with(kv->name, "_ms") && n - 3 < sizeof(label)) {
		/* how long a thing took, or how long ago: snapshot_ms is
		 * the last snapshot's duration */
		label[n - 3] = '\0';
		if (strcmp(label, "snapshot") == 0 ||
		    strcmp(label, "recovery") == 0)
			snprintf(
			    label + n - 3, sizeof(label) - (n - 3), "_took");
		dur_fmt(val, sizeof(val), kv->value);
	} else if (ends_with(kv->name, "_at")) {
		cli_fmt_time(val, sizeof(val), kv->value);
	} else if (ends_with(kv->name, "_bytes") ||
	    strcmp(kv->name, "log_reserved") == 0 ||
	    strcmp(kv->name, "log_available") == 0) {
		cli_fmt_size(val, sizeof(val), kv->value);
	} else {
		snprintf(val, sizeof(val), "%" PRIu64, kv->value);
	}
	fprintf(f, "  %-22s %s\n", label, val);
}

static void
kvs_text(FILE *f, const char *title, const struct sluice_kv *kv, size_t n)
{
	if (n == 0)
		return;
	fprintf(f, "%s\n", title);
	for (size_t i = 0; i < n; i++) {
		/* Histograms (log_commit_us_le_16..., their _sum) are for
		 * machines: --json and /metrics have them. */
		if (strstr(kv[i].name, "_le_") != NULL ||
		    ends_with(kv[i].name, "_sum"))
			continue;
		kv_text(f, &kv[i]);
	}
}

/* ---- tube settings ------------------------------------------------------- */

void
cli_tube_setting_text(
    const struct sluice_tube_conf *c, unsigned i, char *out, size_t n)
{
	char a[32], b[32];

	switch (1u << i) {
	case SLUICE_TS_TTR:
		dur_fmt(out, n, c->ttr_ms);
		break;
	case SLUICE_TS_MAX_ATTEMPTS:
		if (c->max_attempts == 0)
			snprintf(out, n, "unlimited");
		else
			snprintf(out, n, "%" PRIu32, c->max_attempts);
		break;
	case SLUICE_TS_BACKOFF:
		dur_fmt(a, sizeof(a), c->backoff_base_ms);
		dur_fmt(b, sizeof(b), c->backoff_cap_ms);
		snprintf(out, n, "%s, doubling, at most %s", a, b);
		break;
	case SLUICE_TS_KEEP_DONE:
		if (c->keep_done_ms == 0)
			snprintf(out, n, "not kept");
		else
			dur_fmt(out, n, c->keep_done_ms);
		break;
	case SLUICE_TS_LOST_LEASE:
		snprintf(out, n, "%s",
		    c->lost_lease_immediate ? "ready at once (immediate)"
		                            : "as a fail (backoff)");
		break;
	default:
		snprintf(out, n, "%s",
		    c->dead_letter[0] ? c->dead_letter
		                      : "none: buried in place");
		break;
	}
}

/* The settings tubes set themselves, one line a tube ("-" for none). */
static void
own_settings(FILE *f, const struct sluice_stats *s)
{
	char val[SLUICE_TUBE_MAX + 64];
	bool any = false;

	for (size_t i = 0; i < s->ntubes; i++) {
		const struct sluice_tube_conf *c = &s->tubes[i].conf;
		const char *sep = "";

		if (c->set == 0)
			continue;
		if (!any)
			fprintf(f,
			    "\nsettings of their own (the others are the "
			    "server's)\n");
		any = true;
		fprintf(f, "  %-22s ", s->tubes[i].name);
		for (unsigned k = 0; k < 6; k++) {
			if (!(c->set & (1u << k)))
				continue;
			cli_tube_setting_text(c, k, val, sizeof(val));
			fprintf(f, "%s%s %s", sep, json_tube_fields[k], val);
			sep = "; ";
		}
		fputc('\n', f);
	}
}

void
cli_print_stats(FILE *f, const struct sluice_stats *s, bool json)
{
	bool waiting;

	if (json) {
		json_stats(f, s);
		fputc('\n', f);
		return;
	}
	fprintf(f, "role        %s\n", json_role_name(s->role));
	if (s->leader[0])
		fprintf(f, "leader      %s\n", s->leader);
	fprintf(f, "epoch       %" PRIu64 "\n", s->epoch);
	fprintf(f, "lsn         %" PRIu64 " (durable %" PRIu64 ")\n", s->lsn,
	    s->durable_lsn);
	kvs_text(f, "node", s->kv, s->nkv);
	/* WAITING (tasks put after parents) only once some task waits:
	 * the table stays as it was for those who use no dependencies */
	waiting = waiting_of(&s->totals) > 0;
	for (size_t i = 0; i < s->ntubes; i++)
		waiting = waiting || waiting_of(&s->tubes[i]) > 0;
	fprintf(f, "\n%-24s %9s %9s %9s %9s", "TUBE", "READY", "DELAYED",
	    "TAKEN", "BURIED");
	if (waiting)
		fprintf(f, " %9s", "WAITING");
	fprintf(f, "  %-12s %s\n", "OLDEST", "PAUSED_UNTIL");
	for (size_t i = 0; i < s->ntubes; i++)
		counts_row(f, s->tubes[i].name, &s->tubes[i], waiting);
	counts_row(f, "(all tubes)", &s->totals, waiting);
	own_settings(f, s);
	if (s->ntubes == 1) {
		fputc('\n', f);
		kvs_text(f, s->tubes[0].name, s->tubes[0].kv, s->tubes[0].nkv);
	} else if (s->totals.nkv) {
		fputc('\n', f);
		kvs_text(f, "(all tubes)", s->totals.kv, s->totals.nkv);
	}
}

/* ---- cluster ------------------------------------------------------------- */

/* A member's lease: "until TIME (in 2.1s)", or "-" without one. */
static void
lease_cell(char *out, size_t n, const struct sluice_member *m)
{
	char when[96];

	if (m->lease_until <= 0) {
		snprintf(out, n, "-");
		return;
	}
	fmt_when(when, sizeof(when), (uint64_t)m->lease_until);
	snprintf(out, n, "until %s", when);
}

static void
member_row(
    FILE *f, const struct sluice_member *m, bool leads, int name_w, int lease_w)
{
	char lag[24], lease[128], age[32], seen[40];

	bool down = json_member_down(m);

	if (m->role == SLUICE_NODE_LEADER || down)
		snprintf(lag, sizeof(lag), "-");
	else
		snprintf(lag, sizeof(lag), "%" PRIu64, m->lag_records);
	lease_cell(lease, sizeof(lease), m);
	if (m->client_url[0] == '\0') {
		snprintf(seen, sizeof(seen), "never");
	} else if (m->age_ms == 0) {
		snprintf(seen, sizeof(seen), "now");
	} else {
		dur_fmt(age, sizeof(age), m->age_ms);
		snprintf(seen, sizeof(seen), "%s ago", age);
	}
	fprintf(f,
	    "%s %-*s  %-9s %6" PRIu64 " %10" PRIu64 " %8s  %-4s  %-*s  %s\n",
	    leads ? "*" : " ", name_w, m->name,
	    down ? "down" : json_node_role_name(m->role), m->epoch,
	    m->durable_lsn, lag, m->sync ? "yes" : "-", lease_w, lease, seen);
}

void
cli_print_cluster(FILE *f, const struct sluice_cluster *c, bool json)
{
	int name_w = 4, lease_w = 5;
	char ttl[32], lease[128];

	if (json) {
		json_cluster(f, c);
		fputc('\n', f);
		return;
	}
	for (size_t i = 0; i < c->n; i++) {
		int w = (int)strlen(c->members[i].name);

		lease_cell(lease, sizeof(lease), &c->members[i]);
		name_w = w > name_w ? w : name_w;
		w = (int)strlen(lease);
		lease_w = w > lease_w ? w : lease_w;
	}
	dur_fmt(ttl, sizeof(ttl), c->ttl_ms);
	fprintf(f, "cluster %s, as node %s sees it: ", c->cluster, c->node);
	if (c->leader[0])
		fprintf(f, "leader %s, lease ttl %s\n", c->leader, ttl);
	else
		fprintf(f, "no leader, lease ttl %s\n", ttl);
	fprintf(f, "  %-*s  %-9s %6s %10s %8s  %-4s  %-*s  %s\n", name_w,
	    "NAME", "ROLE", "EPOCH", "LSN", "LAG", "SYNC", lease_w, "LEASE",
	    "SEEN");
	for (size_t i = 0; i < c->n; i++)
		member_row(f, &c->members[i],
		    strcmp(c->members[i].name, c->leader) == 0, name_w,
		    lease_w);
	if (c->etcd_error[0]) {
		fputs("etcd's last error: ", f);
		cli_print_bytes(f, c->etcd_error, strlen(c->etcd_error));
		fputc('\n', f);
	}
}

/* ---- errors and after ---------------------------------------------------- */

void
cli_print_errors(
    FILE *f, const struct sluice_error_count *e, size_t n, bool json)
{
	if (json) {
		json_errors(f, e, n);
		fputc('\n', f);
		return;
	}
	fprintf(f, "%10s  %s\n", "COUNT", "ERROR");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%10" PRIu64 "  ", e[i].count);
		if (e[i].text[0])
			cli_print_bytes(f, e[i].text, strlen(e[i].text));
		else
			fputs("(none)", f);
		fputc('\n', f);
	}
}

/* One line per kind from `from` to `to` of a history: the name, then
 * the count of the whole window (sum) or of the last slot (a depth: now),
 * the average per slot or per second, and the peak. */
static void
history_lines(FILE *f, const struct sluice_history *h, unsigned from,
    unsigned to, bool depth)
{
	static const char *const names[SLUICE_H_KINDS] = { "puts", "takes",
		"acks", "fails", "buries", "ttr expiries", "ready", "delayed",
		"taken", "buried" };
	double secs = (double)h->n * h->step_ms / 1000;

	for (unsigned k = from; k < to; k++) {
		uint64_t total = 0, peak = 0;

		for (size_t i = 0; i < h->n; i++) {
			total += h->count[k][i];
			if (h->count[k][i] > peak)
				peak = h->count[k][i];
		}
		if (depth)
			fprintf(f, "%-13s %9" PRIu32 " %9.1f %9" PRIu64 "\n",
			    names[k], h->n ? h->count[k][h->n - 1] : 0,
			    h->n ? (double)total / h->n : 0, peak);
		else
			fprintf(f, "%-13s %9" PRIu64 " %9.1f %9.1f\n", names[k],
			    total, secs > 0 ? (double)total / secs : 0,
			    (double)peak * 1000 / h->step_ms);
	}
}

void
cli_print_history(FILE *f, const struct sluice_history *h, bool json)
{
	if (json) {
		json_history(f, h);
		fputc('\n', f);
		return;
	}
	fprintf(f, "%-13s %9s %9s %9s   (last %.0f s, %u s per slot)\n",
	    "EVENT", "COUNT", "AVG/S", "PEAK/S",
	    (double)h->n * h->step_ms / 1000, h->step_ms / 1000);
	history_lines(f, h, 0, SLUICE_H_READY, false);
	if (!h->depth)
		return;
	fprintf(f, "%-13s %9s %9s %9s\n", "STATE", "NOW", "AVG", "PEAK");
	history_lines(f, h, SLUICE_H_READY, SLUICE_H_KINDS, true);
}

/* A duration column: "-" when there is nothing to measure. */
static void
dur_cell(FILE *f, uint64_t count, uint64_t ms)
{
	char s[32];

	if (count == 0)
		snprintf(s, sizeof(s), "-");
	else
		dur_fmt(s, sizeof(s), ms);
	fprintf(f, " %9s", s);
}

void
cli_print_hourly(FILE *f, const struct sluice_hour *h, size_t n, bool json)
{
	if (json) {
		json_hours(f, h, n);
		fputc('\n', f);
		return;
	}
	fprintf(f, "%-17s %7s %6s %6s %6s %9s %9s %9s %9s %9s %9s %9s\n",
	    "HOUR (UTC)", "ACKS", "FAILS", "BURIES", "TTR", "WORK", "AVG",
	    "P50", "P99", "WAIT AVG", "P50", "P99");
	for (size_t i = 0; i < n; i++) {
		const struct sluice_dist *w = &h[i].work, *q = &h[i].wait;
		time_t t = (time_t)(h[i].start / 1000);
		struct tm tm;
		char hour[32];

		gmtime_r(&t, &tm);
		strftime(hour, sizeof(hour), "%Y-%m-%d %H:00", &tm);
		fprintf(f,
		    "%-17s %7" PRIu64 " %6" PRIu64 " %6" PRIu64 " %6" PRIu64,
		    hour, h[i].acks, h[i].fails, h[i].buries, h[i].ttr_expired);
		dur_cell(f, w->count, w->total_ms);
		dur_cell(f, w->count, w->count ? w->total_ms / w->count : 0);
		dur_cell(f, w->count, w->p50_ms);
		dur_cell(f, w->count, w->p99_ms);
		dur_cell(f, q->count, q->count ? q->total_ms / q->count : 0);
		dur_cell(f, q->count, q->p50_ms);
		dur_cell(f, q->count, q->p99_ms);
		fputc('\n', f);
	}
}

void
cli_print_after(FILE *f, const char *verb, const struct sluice_after *a,
    const char *to, bool json)
{
	char when[96];

	if (json) {
		json_after(f, a);
		fputc('\n', f);
		return;
	}
	fprintf(f, "%s %" PRIu64, verb, a->id);
	if (to != NULL) {
		fputs(", moved to ", f);
		cli_print_bytes(f, to, strlen(to));
	}
	if (a->replaced)
		fputs(", replaced by the content queued by put --replace", f);
	switch (a->state) {
	case SLUICE_READY:
		/* kick's and ack --to's ready goes without saying */
		if (strcmp(verb, "kicked") != 0 && to == NULL)
			fputs(", ready", f);
		break;
	case SLUICE_DELAYED:
		fmt_when(when, sizeof(when), a->run_at);
		fprintf(f,
		    strcmp(verb, "failed") == 0      ? ", retry at %s"
		        : strcmp(verb, "acked") == 0 ? ", runs again at %s"
		                                     : ", delayed until %s",
		    when);
		break;
	case SLUICE_TAKEN:
		fmt_when(when, sizeof(when), a->deadline);
		fprintf(f, ", leased until %s", when);
		break;
	case SLUICE_BURIED:
		if (strcmp(verb, "buried") != 0)
			fputs(", buried", f);
		break;
	case SLUICE_DONE:
		fputs(", kept as done", f);
		break;
	default:
		break; /* gone: what the verb says */
	}
	fputc('\n', f);
}
