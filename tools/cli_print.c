/* cli_print - how the sluice tool shows results: JSON with the field names
 * of docs/client.md (the names of take, peek, put, stats, list and errors
 * are fixed; more fields may be added), or aligned text for humans. */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_util.h"
#include "proto/json.h"

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
		cli_fmt_dur(rel, sizeof(rel), unix_ms - now);
		snprintf(out, n, "%s (in %s)", abs, rel);
	} else {
		cli_fmt_dur(rel, sizeof(rel), now - unix_ms);
		snprintf(out, n, "%s (%s ago)", abs, rel);
	}
}

static void
task_text(FILE *f, const struct sluice_task *t)
{
	char when[96], dur[32];

	fprintf(f, "id            %" PRIu64 "\n", t->id);
	fprintf(f, "tube          %s\n", t->tube);
	fprintf(f, "state         %s%s\n", sluice_state_name(t->state),
	    t->detached ? " (detached lease)" : "");
	if (t->lease)
		fprintf(f, "lease         %" PRIu64 "\n", t->lease);
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
	cli_fmt_dur(dur, sizeof(dur), t->ttr_ms);
	fprintf(f, "ttr           %s\n", dur);
	if (t->period_ms) {
		cli_fmt_dur(dur, sizeof(dur), t->period_ms);
		fprintf(f, "every         %s\n", dur);
	}
	fmt_when(when, sizeof(when), t->created_at);
	fprintf(f, "created_at    %s\n", when);
	if (t->key) {
		fputs("key           ", f);
		cli_print_bytes(f, t->key, strlen(t->key));
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
	if (t->replace_pending) {
		fprintf(f,
		    "replacement   pending, taken when the lease ends: "
		    "priority "
		    "%" PRIu32 ", size %zu\n",
		    t->pending.priority, t->pending.size);
		if (t->pending.payload_len > 0 || t->pending.size == 0) {
			fputs("  payload     ", f);
			cli_print_bytes(
			    f, t->pending.payload, t->pending.payload_len);
			fputc('\n', f);
		}
	}
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
cli_print_task_list(FILE *f, const struct sluice_task *t, size_t n, bool json)
{
	char when[40];

	if (json) {
		json_tasks(f, t, n);
		fputc('\n', f);
		return;
	}
	fprintf(f, "%-10s %-8s %10s %9s  %-23s %8s  %s\n", "ID", "STATE",
	    "PRIORITY", "ATTEMPTS", "RUN_AT", "SIZE", "KEY / LAST_ERROR");
	for (size_t i = 0; i < n; i++) {
		cli_fmt_time(when, sizeof(when), t[i].run_at);
		fprintf(f,
		    "%-10" PRIu64 " %-8s %10" PRIu32 " %9" PRIu32
		    "  %-23s %8zu  ",
		    t[i].id, sluice_state_name(t[i].state), t[i].priority,
		    t[i].attempts, when, t[i].size);
		if (t[i].key)
			cli_print_bytes(f, t[i].key, strlen(t[i].key));
		if (t[i].key && t[i].last_error)
			fputs(" / ", f);
		if (t[i].last_error)
			cli_print_bytes(
			    f, t[i].last_error, strlen(t[i].last_error));
		fputc('\n', f);
	}
}

/* ---- stats --------------------------------------------------------------- */

static void
counts_row(FILE *f, const char *name, const struct sluice_tube_stats *t)
{
	char age[32], paused[40];

	if (t->oldest_ready_age_ms)
		cli_fmt_dur(age, sizeof(age), t->oldest_ready_age_ms);
	else
		snprintf(age, sizeof(age), "-");
	cli_fmt_time(paused, sizeof(paused), t->paused_until);
	fprintf(f,
	    "%-24s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
	    "  %-12s %s\n",
	    name, t->ready, t->delayed, t->taken, t->buried, age,
	    t->paused_until ? paused : "-");
}

static void
kvs_text(FILE *f, const char *title, const struct sluice_kv *kv, size_t n)
{
	if (n == 0)
		return;
	fprintf(f, "%s\n", title);
	for (size_t i = 0; i < n; i++) {
		/* Histogram buckets (log_commit_us_le_16...) are for
		 * machines: --json and /metrics have them. */
		if (strstr(kv[i].name, "_le_") != NULL)
			continue;
		fprintf(f, "  %-22s %" PRIu64 "\n", kv[i].name, kv[i].value);
	}
}

void
cli_print_stats(FILE *f, const struct sluice_stats *s, bool json)
{
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
	fprintf(f, "\n%-24s %9s %9s %9s %9s  %-12s %s\n", "TUBE", "READY",
	    "DELAYED", "TAKEN", "BURIED", "OLDEST", "PAUSED_UNTIL");
	for (size_t i = 0; i < s->ntubes; i++)
		counts_row(f, s->tubes[i].name, &s->tubes[i]);
	counts_row(f, "(all tubes)", &s->totals);
	if (s->ntubes == 1) {
		fputc('\n', f);
		kvs_text(f, s->tubes[0].name, s->tubes[0].kv, s->tubes[0].nkv);
	} else if (s->totals.nkv) {
		fputc('\n', f);
		kvs_text(f, "(all tubes)", s->totals.kv, s->totals.nkv);
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

void
cli_print_after(FILE *f, const struct sluice_after *a, bool json)
{
	char when[96];

	if (json) {
		fprintf(f,
		    "{\"id\":%" PRIu64 ",\"state\":\"%s\",\"run_at\":%" PRIu64
		    ",\"deadline\":%" PRIu64 "%s}\n",
		    a->id, sluice_state_name(a->state), a->run_at, a->deadline,
		    a->replaced ? ",\"replaced\":true" : "");
		return;
	}
	if (a->replaced)
		fprintf(f,
		    "%" PRIu64 " replaced: the new content queued by put "
		    "--replace took its place\n",
		    a->id);
	switch (a->state) {
	case SLUICE_DELAYED:
		fmt_when(when, sizeof(when), a->run_at);
		fprintf(f, "%" PRIu64 " delayed until %s\n", a->id, when);
		break;
	case SLUICE_TAKEN:
		fmt_when(when, sizeof(when), a->deadline);
		fprintf(f, "%" PRIu64 " leased until %s\n", a->id, when);
		break;
	case SLUICE_BURIED:
		fprintf(f, "%" PRIu64 " buried\n", a->id);
		break;
	case SLUICE_READY:
		if (a->replaced)
			fprintf(f, "%" PRIu64 " ready\n", a->id);
		break;
	default:
		break; /* gone or ready: nothing worth saying */
	}
}
