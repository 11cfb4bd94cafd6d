/* history - recording a history and its text form; the rules are in
 * check.c. See history.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "history.h"
#include "sluice.h"

static int64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void
hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	pthread_mutex_init(&h->mu, NULL);
	h->t0_ns = mono_ns();
}

void
hist_free(struct hist *h)
{
	free(h->ops);
	pthread_mutex_destroy(&h->mu);
	memset(h, 0, sizeof(*h));
}

int64_t
hist_now(const struct hist *h)
{
	return (mono_ns() - h->t0_ns) / 1000;
}

void
hist_op_init(struct hist_op *op, enum hist_type type)
{
	memset(op, 0, sizeof(*op));
	op->type = (uint8_t)type;
	op->outcome = HIST_OK;
	op->state = HIST_STATE_NONE;
}

void
hist_add(struct hist *h, const struct hist_op *op)
{
	pthread_mutex_lock(&h->mu);
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 4096;
		struct hist_op *ops = realloc(h->ops, cap * sizeof(*ops));

		if (ops == NULL) {
			h->nomem = true;
			pthread_mutex_unlock(&h->mu);
			return;
		}
		h->ops = ops;
		h->cap = cap;
	}
	h->ops[h->n++] = *op;
	pthread_mutex_unlock(&h->mu);
}

/* ---- payloads ---------------------------------------------------------- */

enum { KEY_DIGITS = 16, PAD_SPAN = 40 };

size_t
hist_payload(uint64_t key, char *buf)
{
	int n = snprintf(buf, HIST_PAYLOAD_MAX, "hk-%016" PRIx64 "-", key);
	size_t len = (size_t)n, pad = (size_t)(key % PAD_SPAN);

	memset(buf + len, '.', pad);
	len += pad;
	buf[len] = '\0';
	return len;
}

uint64_t
hist_payload_key(const void *p, size_t len)
{
	char want[HIST_PAYLOAD_MAX], hex[KEY_DIGITS + 1];
	uint64_t key;
	char *end;

	if (len < 3 + KEY_DIGITS + 1 || memcmp(p, "hk-", 3) != 0)
		return 0;
	memcpy(hex, (const char *)p + 3, KEY_DIGITS);
	hex[KEY_DIGITS] = '\0';
	key = strtoull(hex, &end, 16);
	if (*end != '\0' || key == 0)
		return 0;
	if (hist_payload(key, want) != len || memcmp(want, p, len) != 0)
		return 0;
	return key;
}

/* ---- names ------------------------------------------------------------- */

static const char *const type_names[HIST_TYPES_] = {
	[HIST_PUT] = "put",
	[HIST_TAKE] = "take",
	[HIST_ACK] = "ack",
	[HIST_FAIL] = "fail",
	[HIST_RELEASE] = "release",
	[HIST_TOUCH] = "touch",
	[HIST_DELETE] = "delete",
	[HIST_CRASH] = "crash",
	[HIST_FAULT] = "fault",
	[HIST_FINAL] = "final",
	[HIST_SESSION] = "session",
	[HIST_FIRE] = "fire",
};

static const char *const outcome_names[] = {
	[HIST_OK] = "ok",
	[HIST_ERR] = "err",
	[HIST_UNKNOWN] = "unknown",
};

static const char *const face_names[] = {
	[HIST_NOFACE] = "-",
	[HIST_LIB] = "lib",
	[HIST_BS] = "bs",
	[HIST_MV] = "mv",
};

static const char *const fault_names[HIST_FAULTS_] = {
	[HIST_F_KILL] = "kill",
	[HIST_F_KILL_FOLLOWER] = "kill-follower",
	[HIST_F_STOP] = "stop",
	[HIST_F_DISK] = "disk",
	[HIST_F_FAILOVER] = "failover",
	[HIST_F_MOVE] = "move",
	[HIST_F_ELECT] = "elect",
};

/* "ready".."buried", "gone" for 0 */
static const char *const state_names[] = {
	"gone",
	"ready",
	"delayed",
	"taken",
	"buried",
	"done",
	"waiting",
};

const char *
hist_type_name(int type)
{
	if (type <= 0 || type >= HIST_TYPES_)
		return "?";
	return type_names[type];
}

const char *
hist_fault_name(int kind)
{
	if (kind <= 0 || kind >= HIST_FAULTS_)
		return "?";
	return fault_names[kind];
}

static int
name_index(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] != NULL && strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

#define NAME_INDEX(names, s)                                                   \
	name_index((names), sizeof(names) / sizeof((names)[0]), (s))

/* ---- text -------------------------------------------------------------- */

int
hist_format(const struct hist_op *op, char *buf, size_t cap)
{
	size_t len = 0;
	bool fault = op->type == HIST_CRASH || op->type == HIST_FAULT;

#define OUT(...)                                                               \
	do {                                                                   \
		int n_ = snprintf(buf + (len < cap ? len : cap),               \
		    len < cap ? cap - len : 0, __VA_ARGS__);                   \
		if (n_ > 0)                                                    \
			len += (size_t)n_;                                     \
	} while (0)
	OUT("%" PRId64 " %" PRId64 " %c%" PRIu32 " %s %s %s", op->invoke,
	    op->complete, fault ? 'n' : 'c', op->client,
	    op->face <= HIST_MV ? face_names[op->face] : "?",
	    hist_type_name(op->type),
	    op->outcome >= HIST_OK && op->outcome <= HIST_UNKNOWN
	        ? outcome_names[op->outcome]
	        : "?");
	if (op->id != 0)
		OUT(" id=%" PRIu64, op->id);
	if (op->lease != 0)
		OUT(" lease=%" PRIu64, op->lease);
	if (op->key != 0)
		OUT(" key=%" PRIx64, op->key);
	if (op->attempts != 0)
		OUT(" att=%" PRIu32, op->attempts);
	if (op->max != 0)
		OUT(" max=%" PRIu32, op->max);
	if (op->ttr != 0)
		OUT(" ttr=%" PRIu32, op->ttr);
	if (op->cap != 0)
		OUT(" cap=%" PRIu32, op->cap);
	if (op->group != 0)
		OUT(" group=%u", (unsigned)op->group);
	if (op->gcap != 0)
		OUT(" gcap=%" PRIu32, op->gcap);
	if (op->after != 0)
		OUT(" after=%" PRIu64, op->after);
	if (op->sched != 0)
		OUT(" sched=%" PRIu32, op->sched);
	if (op->slot != 0)
		OUT(" slot=%" PRId64, op->slot);
	if (op->state >= 0 && op->state <= 6)
		OUT(" state=%s", state_names[op->state]);
	if (op->err != 0)
		OUT(" err=%d", op->err);
	if (fault)
		OUT(" kind=%s", hist_fault_name(op->kind));
#undef OUT
	return (int)len;
}

/* An error code: a SLUICE_E* number. */
static int
err_code(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	return end != s && *end == '\0' && v > 0 && v < 32768 ? (int)v : -1;
}

/* One "name=value" field of a line into `op`. 0 or -1. */
static int
parse_field(struct hist_op *op, const char *f)
{
	const char *eq = strchr(f, '=');
	const char *v;
	char name[16], *end;
	int i;

	if (eq == NULL || (size_t)(eq - f) >= sizeof(name))
		return -1;
	memcpy(name, f, (size_t)(eq - f));
	name[eq - f] = '\0';
	v = eq + 1;
	errno = 0;
	if (strcmp(name, "id") == 0)
		op->id = strtoull(v, &end, 10);
	else if (strcmp(name, "after") == 0)
		op->after = strtoull(v, &end, 10);
	else if (strcmp(name, "lease") == 0)
		op->lease = strtoull(v, &end, 10);
	else if (strcmp(name, "key") == 0)
		op->key = strtoull(v, &end, 16);
	else if (strcmp(name, "att") == 0)
		op->attempts = (uint32_t)strtoul(v, &end, 10);
	else if (strcmp(name, "max") == 0)
		op->max = (uint32_t)strtoul(v, &end, 10);
	else if (strcmp(name, "ttr") == 0)
		op->ttr = (uint32_t)strtoul(v, &end, 10);
	else if (strcmp(name, "cap") == 0)
		op->cap = (uint32_t)strtoul(v, &end, 10);
	else if (strcmp(name, "gcap") == 0)
		op->gcap = (uint32_t)strtoul(v, &end, 10);
	else if (strcmp(name, "sched") == 0)
		op->sched = (uint32_t)strtoul(v, &end, 10);
	else if (strcmp(name, "slot") == 0)
		op->slot = strtoll(v, &end, 10);
	else if (strcmp(name, "group") == 0) {
		unsigned long g = strtoul(v, &end, 10);

		if (g > 255)
			return -1;
		op->group = (uint8_t)g;
	} else if (strcmp(name, "state") == 0) {
		if ((i = NAME_INDEX(state_names, v)) < 0)
			return -1;
		op->state = (int8_t)i;
		return 0;
	} else if (strcmp(name, "err") == 0) {
		if ((i = err_code(v)) < 0)
			return -1;
		op->err = (int16_t)i;
		return 0;
	} else if (strcmp(name, "kind") == 0) {
		if ((i = NAME_INDEX(fault_names, v)) <= 0)
			return -1;
		op->kind = (uint8_t)i;
		return 0;
	} else
		return -1;
	return errno == 0 && *end == '\0' && end != v ? 0 : -1;
}

int
hist_parse(struct hist *h, const char *line)
{
	char copy[512], *save = NULL, *tok[32];
	struct hist_op op;
	size_t n = 0;
	int i;

	while (*line == ' ' || *line == '\t')
		line++;
	if (*line == '\0' || *line == '\n' || *line == '#')
		return 0;
	if (strlen(line) >= sizeof(copy))
		return -1;
	strcpy(copy, line);
	for (char *t = strtok_r(copy, " \t\r\n", &save); t != NULL && n < 32;
	     t = strtok_r(NULL, " \t\r\n", &save))
		tok[n++] = t;
	if (n == 3 && strcmp(tok[0], "end") == 0) {
		h->final_at = strtoll(tok[1], NULL, 10);
		if (strcmp(tok[2], "complete") == 0)
			h->final_complete = true;
		else if (strcmp(tok[2], "incomplete") == 0)
			h->final_complete = false;
		else
			return -1;
		return 0;
	}
	if (n < 6 || (tok[2][0] != 'c' && tok[2][0] != 'n'))
		return -1;
	if ((i = NAME_INDEX(type_names, tok[4])) <= 0)
		return -1;
	hist_op_init(&op, (enum hist_type)i);
	op.invoke = strtoll(tok[0], NULL, 10);
	op.complete = strtoll(tok[1], NULL, 10);
	op.client = (uint32_t)strtoul(tok[2] + 1, NULL, 10);
	if ((i = NAME_INDEX(face_names, tok[3])) < 0)
		return -1;
	op.face = (uint8_t)i;
	if ((i = NAME_INDEX(outcome_names, tok[5])) <= 0)
		return -1;
	op.outcome = (uint8_t)i;
	for (size_t k = 6; k < n; k++)
		if (parse_field(&op, tok[k]) != 0)
			return -1;
	if (op.complete < op.invoke)
		return -1;
	hist_add(h, &op);
	return h->nomem ? -1 : 0;
}

int
hist_save(const struct hist *h, const char *path)
{
	FILE *f = fopen(path, "w");
	char line[512];
	int rc = 0;

	if (f == NULL)
		return -1;
	fprintf(f,
	    "# sluice history: invoke complete client face type "
	    "outcome fields (times in us)\n");
	for (size_t i = 0; i < h->n; i++) {
		hist_format(&h->ops[i], line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
	if (h->final_at != 0)
		fprintf(f, "end %" PRId64 " %s\n", h->final_at,
		    h->final_complete ? "complete" : "incomplete");
	if (ferror(f))
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

int
hist_load(struct hist *h, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int rc = 0;
	size_t lineno = 0;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		if (hist_parse(h, line) != 0) {
			fprintf(stderr, "%s:%zu: cannot read: %s", path, lineno,
			    line);
			rc = -1;
			break;
		}
	}
	fclose(f);
	return rc;
}
