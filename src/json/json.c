/* json - prints sluice.h's results as JSON (the fields are in
 * docs/client.md), for the sluice tool's --json and the server's HTTP
 * face, so both print the same. Strings are escaped here, bytes that are
 * not UTF-8 replaced by U+FFFD; a payload that is not valid UTF-8 is
 * printed as base64 and says so. Writes only to the FILE given. */
#include <inttypes.h>
#include <string.h>

#include "json/json.h"

/* ---- strings ------------------------------------------------------------ */

/* sluice_state_name's names (the library is not linked here). */
static const char *
state_name(int state)
{
	static const char *const names[] = { "none", "ready", "delayed",
		"taken", "buried", "done", "waiting" };

	return state >= 0 && state <= 6 ? names[state] : "unknown";
}

size_t
json_utf8_seq(const unsigned char *p, size_t left)
{
	unsigned c = p[0];
	size_t n;
	unsigned cp, min;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (left < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}
bool
json_utf8_valid(const void *p, size_t len)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < len;) {
		size_t n = json_utf8_seq(s + i, len - i);

		if (n == 0)
			return false;
		i += n;
	}
	return true;
}
void
json_str(FILE *f, const void *p, size_t len)
{
	const unsigned char *s = p;

	fputc('"', f);
	for (size_t i = 0; i < len;) {
		unsigned c = s[i];
		size_t n = json_utf8_seq(s + i, len - i);

		if (n == 0) {
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		if (n > 1) {
			fwrite(s + i, 1, n, f);
			i += n;
			continue;
		}
		switch (c) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc((int)c, f);
		}
		i++;
	}
	fputc('"', f);
}

void
json_cstr(FILE *f, const char *s)
{
	if (s == NULL)
		fputs("null", f);
	else
		json_str(f, s, strlen(s));
}
void
json_base64(FILE *f, const void *p, size_t len)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                          "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *s = p;
	size_t i = 0;

	for (; i + 3 <= len; i += 3) {
		uint32_t v =
		    (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];

		fputc(tab[v >> 18], f);
		fputc(tab[(v >> 12) & 63], f);
		fputc(tab[(v >> 6) & 63], f);
		fputc(tab[v & 63], f);
	}
	if (len - i == 1) {
		uint32_t v = (uint32_t)s[i] << 16;

		fputc(tab[v >> 18], f);
		fputc(tab[(v >> 12) & 63], f);
		fputs("==", f);
	} else if (len - i == 2) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;

		fputc(tab[v >> 18], f);
		fputc(tab[(v >> 12) & 63], f);
		fputc(tab[(v >> 6) & 63], f);
		fputc('=', f);
	}
}

/* "payload":..., or "payload_base64":"..." when the bytes are not UTF-8,
 * or "payload":null when they were left out (list). */
static void
json_payload(FILE *f, const void *p, size_t len, size_t size)
{
	if (len == 0 && size > 0) {
		fputs("\"payload\":null", f);
	} else if (json_utf8_valid(p, len)) {
		fputs("\"payload\":", f);
		json_str(f, p, len);
	} else {
		fputs("\"payload_base64\":\"", f);
		json_base64(f, p, len);
		fputc('"', f);
	}
}

/* A task's dependencies: "parents" (each with its outcome and, in a
 * take or a peek, its result), "parents_pending", "on_parent_failure",
 * "children" (the first 1,000) and "children_count". */
static void
json_deps(FILE *f, const struct sluice_task *t)
{
	static const char *const outcomes[] = { "pending", "done", "failed" };
	static const char *const rules[] = { "fail", "ignore", "cancel" };

	if (t->nparents == 0 && t->nchildren == 0)
		return;
	fputs(",\"parents\":[", f);
	for (size_t i = 0; i < t->nparents; i++) {
		const struct sluice_parent *p = &t->parents[i];

		fprintf(f, "%s{\"id\":%" PRIu64 ",\"outcome\":\"%s\"",
		    i ? "," : "", p->id,
		    p->outcome >= 0 && p->outcome <= 2 ? outcomes[p->outcome]
		                                       : "unknown");
		if (p->result == NULL) {
			fputs(",\"result\":null}", f);
		} else if (json_utf8_valid(p->result, p->result_len)) {
			fputs(",\"result\":", f);
			json_str(f, p->result, p->result_len);
			fputc('}', f);
		} else {
			fputs(",\"result_base64\":\"", f);
			json_base64(f, p->result, p->result_len);
			fputs("\"}", f);
		}
	}
	fprintf(f,
	    "],\"parents_pending\":%" PRIu32 ",\"on_parent_failure\":\"%s\""
	    ",\"children\":[",
	    t->parents_pending,
	    t->on_parent_failure >= 0 && t->on_parent_failure <= 2
	        ? rules[t->on_parent_failure]
	        : "unknown");
	for (size_t i = 0; i < t->nchildren_shown; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", t->children[i]);
	fprintf(f, "],\"children_count\":%" PRIu64, t->nchildren);
}

void
json_task(FILE *f, const struct sluice_task *t)
{
	fprintf(f, "{\"id\":%" PRIu64 ",\"lease\":%" PRIu64 ",\"tube\":", t->id,
	    t->lease);
	json_cstr(f, t->tube);
	fprintf(f, ",\"state\":\"%s\",", state_name(t->state));
	json_payload(f, t->payload, t->payload_len, t->size);
	fprintf(f,
	    ",\"attempts\":%" PRIu32 ",\"priority\":%" PRIu32
	    ",\"run_at\":%" PRIu64 ",\"last_error\":",
	    t->attempts, t->priority, t->run_at);
	json_cstr(f, t->last_error);
	fputs(",\"key\":", f);
	json_cstr(f, t->key);
	fprintf(f,
	    ",\"max_attempts\":%" PRIu32 ",\"ttr\":%" PRIu64
	    ",\"period\":%" PRIu64 ",\"created_at\":%" PRIu64
	    ",\"updated_at\":%" PRIu64 ",\"taken_at\":%" PRIu64
	    ",\"deadline\":%" PRIu64 ",\"size\":%zu,\"detached\":%s",
	    t->max_attempts, t->ttr_ms, t->period_ms, t->created_at,
	    t->updated_at, t->taken_at, t->deadline, t->size,
	    t->detached ? "true" : "false");
	if (t->version != 0) /* a put with if_newer stored it */
		fprintf(f, ",\"version\":%" PRIu64, t->version);
	if (t->cancelled)
		fputs(",\"cancelled\":true", f);
	if (t->group != NULL) { /* its fair group */
		fputs(",\"group\":", f);
		json_cstr(f, t->group);
	}
	if (t->cluster != NULL) { /* taken through the cluster map */
		fputs(",\"cluster\":", f);
		json_cstr(f, t->cluster);
	}
	if (t->session != 0) { /* who holds a lease that is not detached */
		fprintf(f, ",\"session\":%" PRIu32 ",\"peer\":", t->session);
		json_cstr(f, t->peer);
	}
	/* a put with replace of a taken task: what it becomes when the
	 * lease ends */
	if (t->replace_pending) {
		fputs(",\"replacement\":{", f);
		json_payload(f, t->pending.payload, t->pending.payload_len,
		    t->pending.size);
		fprintf(f,
		    ",\"priority\":%" PRIu32 ",\"run_at\":%" PRIu64
		    ",\"ttr\":%" PRIu64 ",\"max_attempts\":%" PRIu32
		    ",\"period\":%" PRIu64 ",\"size\":%zu",
		    t->pending.priority, t->pending.run_at, t->pending.ttr_ms,
		    t->pending.max_attempts, t->pending.period_ms,
		    t->pending.size);
		if (t->pending.version != 0)
			fprintf(f, ",\"version\":%" PRIu64, t->pending.version);
		fputc('}', f);
	}
	if (t->state == SLUICE_DONE) {
		fprintf(f,
		    ",\"finished_at\":%" PRIu64 ",\"kept_until\":%" PRIu64
		    ",\"duration_ms\":%" PRIu64 ",\"result\":",
		    t->finished_at, t->kept_until, t->duration_ms);
		json_cstr(f, t->result);
	}
	json_deps(f, t);
	fputc('}', f);
}

void
json_after(FILE *f, const struct sluice_after *a)
{
	fprintf(f,
	    "{\"id\":%" PRIu64 ",\"state\":\"%s\",\"run_at\":%" PRIu64
	    ",\"deadline\":%" PRIu64 "%s}",
	    a->id, a->state == 0 ? "gone" : state_name(a->state), a->run_at,
	    a->deadline, a->replaced ? ",\"replaced\":true" : "");
}

static void
kvs_json(FILE *f, const struct sluice_kv *kv, size_t n)
{
	fputc('{', f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		json_cstr(f, kv[i].name);
		fprintf(f, ":%" PRIu64, kv[i].value);
	}
	fputc('}', f);
}

const char *const json_tube_fields[6] = { "ttr", "max_attempts", "backoff",
	"keep_done", "lost_lease", "dead_letter" };

void
json_limits(FILE *f, const struct sluice_limits *l)
{
	static const char *const unit[] = { "s", "m", "h" };

	fputs("{\"rate\":", f);
	if (l->set & SLUICE_LIM_RATE)
		fprintf(f, "\"%" PRIu32 "/%s\",\"burst\":%" PRIu32, l->rate,
		    unit[l->per_ms == 3600000    ? 2
		            : l->per_ms == 60000 ? 1
		                                 : 0],
		    l->burst);
	else
		fputs("null,\"burst\":null", f);
	if (l->set & SLUICE_LIM_CONCURRENCY)
		fprintf(f, ",\"concurrency\":%" PRIu32, l->concurrency);
	else
		fputs(",\"concurrency\":null", f);
	fprintf(f,
	    ",\"tokens\":%" PRIu64 ",\"taken\":%" PRIu64 ",\"held\":%" PRIu64
	    "}",
	    l->tokens, l->taken, l->held);
}

void
json_tube_conf(FILE *f, const char *tube, const struct sluice_tube_conf *c)
{
	json_tube_conf_limits(f, tube, c, NULL);
}

void
json_tube_conf_limits(FILE *f, const char *tube,
    const struct sluice_tube_conf *c, const struct sluice_limits *l)
{
	const char *sep = "";

	fputc('{', f);
	if (tube != NULL) {
		fputs("\"tube\":", f);
		json_cstr(f, tube);
		fputc(',', f);
	}
	fprintf(f,
	    "\"ttr_ms\":%" PRIu64 ",\"max_attempts\":%" PRIu32
	    ",\"backoff_base_ms\":%" PRIu64 ",\"backoff_cap_ms\":%" PRIu64
	    ",\"keep_done_ms\":%" PRIu64
	    ",\"lost_lease\":\"%s\",\"dead_letter\":",
	    c->ttr_ms, c->max_attempts, c->backoff_base_ms, c->backoff_cap_ms,
	    c->keep_done_ms, c->lost_lease_immediate ? "immediate" : "backoff");
	json_cstr(f, c->dead_letter[0] ? c->dead_letter : NULL);
	fputs(",\"own\":[", f);
	for (unsigned i = 0; i < 6; i++) {
		if (c->set & (1u << i)) {
			fprintf(f, "%s\"%s\"", sep, json_tube_fields[i]);
			sep = ",";
		}
	}
	fputc(']', f);
	if (l != NULL && l->set != 0) {
		fputs(",\"limits\":", f);
		json_limits(f, l);
	}
	fputc('}', f);
}

/* A tube's counts, with its settings (`conf`; NULL for the totals). */
static void
counts_json(FILE *f, const struct sluice_tube_stats *t,
    const struct sluice_tube_conf *conf)
{
	uint64_t waiting = 0; /* its "waiting" pair (tasks after parents) */

	for (size_t i = 0; i < t->nkv; i++)
		if (strcmp(t->kv[i].name, "waiting") == 0)
			waiting = t->kv[i].value;
	fprintf(f,
	    "{\"ready\":%" PRIu64 ",\"delayed\":%" PRIu64 ",\"taken\":%" PRIu64
	    ",\"buried\":%" PRIu64 ",\"waiting\":%" PRIu64
	    ",\"paused\":%s,\"paused_until\":%" PRIu64
	    ",\"oldest_ready_age_ms\":%" PRIu64 ",\"counters\":",
	    t->ready, t->delayed, t->taken, t->buried, waiting,
	    t->paused_until ? "true" : "false", t->paused_until,
	    t->oldest_ready_age_ms);
	kvs_json(f, t->kv, t->nkv);
	if (conf != NULL) {
		fputs(",\"settings\":", f);
		json_tube_conf(f, NULL, conf);
	}
	fputc('}', f);
}

const char *
json_role_name(int role)
{
	return role == SLUICE_LEADER  ? "leader"
	    : role == SLUICE_FOLLOWER ? "follower"
	                              : "unknown";
}

const char *
json_node_role_name(int role)
{
	switch (role) {
	case SLUICE_NODE_FOLLOWER:
		return "follower";
	case SLUICE_NODE_LEADER:
		return "leader";
	case SLUICE_NODE_CANDIDATE:
		return "candidate";
	case SLUICE_NODE_FENCED:
		return "fenced";
	}
	return "unknown";
}

/* ---- results ------------------------------------------------------------ */

static void
json_task_array(FILE *f, const struct sluice_task *t, size_t n)
{
	fputs("{\"tasks\":[", f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		json_task(f, &t[i]);
	}
	fputc(']', f);
}

void
json_tasks(FILE *f, const struct sluice_task *t, size_t n)
{
	json_task_array(f, t, n);
	fputc('}', f);
}

void
json_tasks_page(FILE *f, const struct sluice_task *t, size_t n, uint64_t next)
{
	json_task_array(f, t, n);
	if (next > 0)
		fprintf(f, ",\"next\":%" PRIu64 "}", next);
	else
		fputs(",\"next\":null}", f);
}

void
json_stats(FILE *f, const struct sluice_stats *s)
{
	fprintf(f,
	    "{\"role\":\"%s\",\"epoch\":%" PRIu64 ",\"lsn\":%" PRIu64
	    ",\"durable_lsn\":%" PRIu64 ",\"now\":%" PRIu64 ",\"leader\":",
	    json_role_name(s->role), s->epoch, s->lsn, s->durable_lsn, s->now);
	json_cstr(f, s->leader[0] ? s->leader : NULL);
	fputs(",\"tubes\":{", f);
	for (size_t i = 0; i < s->ntubes; i++) {
		if (i)
			fputc(',', f);
		json_cstr(f, s->tubes[i].name);
		fputc(':', f);
		counts_json(f, &s->tubes[i], &s->tubes[i].conf);
	}
	fputs("},\"totals\":", f);
	counts_json(f, &s->totals, NULL);
	fputs(",\"node\":", f);
	kvs_json(f, s->kv, s->nkv);
	fputc('}', f);
}

void
json_errors(FILE *f, const struct sluice_error_count *e, size_t n)
{
	fputs("{\"errors\":[", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{\"error\":", i ? "," : "");
		json_cstr(f, e[i].text);
		fprintf(f, ",\"count\":%" PRIu64 ",\"ids\":[", e[i].count);
		for (size_t k = 0; k < e[i].nids; k++)
			fprintf(f, "%s%" PRIu64, k ? "," : "", e[i].ids[k]);
		fputs("]}", f);
	}
	fputs("]}", f);
}

void
json_groups(FILE *f, const struct sluice_group *g, size_t n, uint64_t total)
{
	fputs("{\"groups\":[", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{\"group\":", i ? "," : "");
		json_cstr(f, g[i].group);
		fprintf(f,
		    ",\"ready\":%" PRIu64 ",\"taken\":%" PRIu64
		    ",\"oldest_ready_ms\":%" PRIu64 ",\"tube\":",
		    g[i].ready, g[i].taken, g[i].oldest_ready_ms);
		json_cstr(f, g[i].tube);
		fputc('}', f);
	}
	fprintf(f, "],\"total\":%" PRIu64 "}", total);
}

static void
json_dist(FILE *f, const char *name, const struct sluice_dist *d)
{
	fprintf(f,
	    ",\"%s\":{\"count\":%" PRIu64 ",\"total_ms\":%" PRIu64
	    ",\"avg_ms\":%" PRIu64 ",\"max_ms\":%" PRIu64 ",\"p50_ms\":%" PRIu64
	    ",\"p99_ms\":%" PRIu64 "}",
	    name, d->count, d->total_ms, d->count ? d->total_ms / d->count : 0,
	    d->max_ms, d->p50_ms, d->p99_ms);
}

void
json_hours(FILE *f, const struct sluice_hour *h, size_t n)
{
	fputs("{\"hours\":[", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f,
		    "%s{\"start\":%" PRIu64 ",\"acks\":%" PRIu64
		    ",\"fails\":%" PRIu64 ",\"buries\":%" PRIu64
		    ",\"ttr_expired\":%" PRIu64,
		    i ? "," : "", h[i].start, h[i].acks, h[i].fails,
		    h[i].buries, h[i].ttr_expired);
		json_dist(f, "work", &h[i].work);
		json_dist(f, "wait", &h[i].wait);
		fputc('}', f);
	}
	fputs("]}", f);
}

void
json_history(FILE *f, const struct sluice_history *h)
{
	static const char *const names[SLUICE_H_KINDS] = { "puts", "takes",
		"acks", "fails", "buries", "ttr_expired", "ready", "delayed",
		"taken", "buried" };
	unsigned kinds = h->depth ? SLUICE_H_KINDS : SLUICE_H_READY;

	fprintf(f, "{\"start\":%" PRIu64 ",\"step_ms\":%" PRIu32, h->start,
	    h->step_ms);
	for (unsigned k = 0; k < kinds; k++) {
		fprintf(f, ",\"%s\":[", names[k]);
		for (size_t i = 0; i < h->n; i++)
			fprintf(f, "%s%" PRIu32, i ? "," : "", h->count[k][i]);
		fputc(']', f);
	}
	fputc('}', f);
}

/* A string that may be empty: null when it is. */
static void
json_opt(FILE *f, const char *s)
{
	json_cstr(f, s[0] ? s : NULL);
}

bool
json_member_down(const struct sluice_member *m)
{
	return m->client_url[0] == '\0' || m->age_ms > SLUICE_MEMBER_DOWN_MS;
}

static void
json_member(FILE *f, const struct sluice_member *m)
{
	fputs("{\"name\":", f);
	json_cstr(f, m->name);
	fprintf(f,
	    ",\"role\":\"%s\",\"client_url\":", json_node_role_name(m->role));
	json_opt(f, m->client_url);
	fputs(",\"repl_url\":", f);
	json_opt(f, m->repl_url);
	fprintf(f,
	    ",\"sync\":%s,\"lease\":%s,\"epoch\":%" PRIu64
	    ",\"durable_lsn\":%" PRIu64 ",\"lag_records\":%" PRIu64
	    ",\"lease_until\":%" PRId64 ",\"age_ms\":%" PRIu64 ",\"down\":%s}",
	    m->sync ? "true" : "false", m->lease ? "true" : "false", m->epoch,
	    m->durable_lsn, m->lag_records, m->lease_until, m->age_ms,
	    json_member_down(m) ? "true" : "false");
}

void
json_cluster(FILE *f, const struct sluice_cluster *c)
{
	fputs("{\"cluster\":", f);
	json_cstr(f, c->cluster);
	fputs(",\"node\":", f);
	json_cstr(f, c->node);
	fputs(",\"leader\":", f);
	json_opt(f, c->leader);
	fprintf(f, ",\"ttl_ms\":%" PRIu32 ",\"etcd_error\":", c->ttl_ms);
	json_opt(f, c->etcd_error);
	fputs(",\"members\":[", f);
	for (size_t i = 0; i < c->n; i++) {
		if (i)
			fputc(',', f);
		json_member(f, &c->members[i]);
	}
	fputs("]}", f);
}

bool
json_within(const void *p, size_t len, size_t max_values, unsigned max_depth)
{
	const unsigned char *s = p, *end = s + len;
	size_t values = 1;
	unsigned depth = 0;

	for (; s < end; s++) {
		switch (*s) {
		case '"': /* a string: skipped, its escapes with it */
			for (s++; s < end && *s != '"'; s++)
				if (*s == '\\')
					s++;
			break;
		case '[':
		case '{':
			if (++depth > max_depth || ++values > max_values)
				return false;
			break;
		case ']':
		case '}':
			if (depth > 0)
				depth--;
			break;
		case ',':
			if (++values > max_values)
				return false;
			break;
		default:
			break;
		}
	}
	return true;
}

void
json_schedule(FILE *f, const struct sluice_schedule *s)
{
	fputs("{\"name\":", f);
	json_cstr(f, s->name);
	fputs(",\"tube\":", f);
	json_cstr(f, s->tube);
	fputs(",\"cron\":", f);
	json_cstr(f, s->cron);
	fputs(",\"tz\":", f);
	json_cstr(f, s->tz);
	fprintf(f,
	    ",\"catch_up\":\"%s\",\"paused\":%s,\"priority\":%" PRIu32
	    ",\"ttr\":%" PRIu64 ",\"max_attempts\":%" PRIu32
	    ",\"created_at\":%" PRIu64 ",\"updated_at\":%" PRIu64
	    ",\"next_at\":%" PRIu64 ",\"last_slot\":%" PRIu64
	    ",\"last_id\":%" PRIu64 ",\"fired\":%" PRIu64
	    ",\"skipped\":%" PRIu64 ",\"size\":%zu,",
	    s->catch_up, s->paused ? "true" : "false", s->priority, s->ttr_ms,
	    s->max_attempts, s->created_at, s->updated_at, s->next_at,
	    s->last_slot, s->last_id, s->fired, s->skipped, s->size);
	json_payload(f, s->payload, s->payload_len,
	    s->payload == NULL && s->size == 0 ? 1 : s->size);
	fputc('}', f);
}

void
json_schedules(FILE *f, const struct sluice_schedule *s, size_t n)
{
	fputs("{\"schedules\":[", f);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			fputc(',', f);
		json_schedule(f, &s[i]);
	}
	fputs("]}", f);
}
