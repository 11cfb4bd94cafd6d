/* throttle - the open throttle windows of keys (design in throttle.h). */
#include "queue/throttle.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "queue/qsnap_fmt.h"
#include "queue/qstate.h"
#include "sluice.h"

/* Sweeps at most this often (ms of the queue's clock). */
#define THROTTLE_SWEEP_MS 1000

static uint64_t
throttle_key(const void *item)
{
	return ((const struct throttle *)item)->hash;
}

static uint64_t
throttle_hash(const struct queue *q, const char *tube, size_t tube_len,
    const char *key, size_t key_len)
{
	uint64_t seed = idx_hash_bytes(q->cfg.hash_seed ^ 5, tube, tube_len);

	return idx_hash_bytes(q->cfg.hash_seed ^ 6 ^ seed, key, key_len);
}

struct throttle_arg {
	const char *tube;
	size_t tube_len;
	const char *key;
	size_t key_len;
};

static bool
throttle_eq(const void *item, const void *arg)
{
	const struct throttle *t = item;
	const struct throttle_arg *a = arg;

	return t->tube_len == a->tube_len && t->key_len == a->key_len &&
	    memcmp(t->data, a->tube, a->tube_len) == 0 &&
	    memcmp(t->data + t->tube_len, a->key, a->key_len) == 0;
}

static struct throttle *
throttle_lookup(const struct queue *q, const char *tube, size_t tube_len,
    const char *key, size_t key_len)
{
	struct throttle_arg a = { tube, tube_len, key, key_len };

	if (q->throttles.len == 0)
		return NULL;
	return idx_find_eq(&q->throttles,
	    throttle_hash(q, tube, tube_len, key, key_len), throttle_eq, &a);
}

void
qs_throttle_init(struct queue *q)
{
	idx_init(&q->throttles, throttle_key);
	q->throttle_max = QREC_THROTTLE_WINDOWS_MAX;
}

void
qs_throttle_set_max(struct queue *q, uint32_t max)
{
	q->throttle_max = max;
}

bool
qs_throttle_room(const struct queue *q, const char *tube, size_t tube_len,
    const char *key, size_t key_len)
{
	return q->throttles.len < q->throttle_max ||
	    throttle_lookup(q, tube, tube_len, key, key_len) != NULL;
}

const struct throttle *
qs_throttle_find(const struct queue *q, int64_t now, const char *tube,
    size_t tube_len, const char *key, size_t key_len)
{
	const struct throttle *t =
	    throttle_lookup(q, tube, tube_len, key, key_len);

	return t != NULL && t->until > now ? t : NULL;
}

int
qs_throttle_set(struct queue *q, const char *tube, size_t tube_len,
    const char *key, size_t key_len, uint64_t id, int64_t until)
{
	struct throttle *t = throttle_lookup(q, tube, tube_len, key, key_len);
	int rc;

	if (t == NULL) {
		if ((rc = idx_reserve(&q->throttles, 1)) != 0)
			return rc;
		t = malloc(sizeof(*t) + tube_len + key_len);
		if (t == NULL)
			return SLUICE_ENOMEM;
		t->hash = throttle_hash(q, tube, tube_len, key, key_len);
		t->tube_len = (uint16_t)tube_len;
		t->key_len = (uint16_t)key_len;
		memcpy(t->data, tube, tube_len);
		memcpy(t->data + tube_len, key, key_len);
		idx_insert(&q->throttles, t);
	}
	t->id = id;
	t->until = until;
	return 0;
}

void
qs_throttle_sweep(struct queue *q, int64_t now)
{
	if (q->throttles.len == 0 ||
	    now - q->throttle_swept < THROTTLE_SWEEP_MS)
		return;
	q->throttle_swept = now;
	for (uint32_t i = 0; i < q->throttles.cap; i++) {
		struct throttle *t = idx_at(&q->throttles, i);

		if (t == NULL || t->until > now)
			continue;
		idx_remove(&q->throttles, t);
		free(t);
		/* A removal may move an item back into slot i (or shrink the
		 * table): look at this slot again. */
		if (i >= q->throttles.cap)
			break;
		i--;
	}
}

void
qs_throttle_fini(struct queue *q)
{
	for (uint32_t i = 0; i < q->throttles.cap; i++)
		free(idx_at(&q->throttles, i));
	idx_fini(&q->throttles);
}

const char *
qs_throttle_check(const struct queue *q)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < q->throttles.cap; i++) {
		const struct throttle *t = idx_at(&q->throttles, i);

		if (t == NULL)
			continue;
		n++;
		if (!qrec_tube_valid(t->data, t->tube_len) || t->key_len == 0 ||
		    t->key_len > QREC_KEY_MAX)
			return "a throttle window's tube or key is invalid";
		if (t->id == 0 || t->id >= q->next_id || t->until < 1)
			return "a throttle window names no task of the queue";
		if (t->hash !=
		        throttle_hash(q, t->data, t->tube_len,
		            t->data + t->tube_len, t->key_len) ||
		    throttle_lookup(q, t->data, t->tube_len,
		        t->data + t->tube_len, t->key_len) != t)
			return "a throttle window is not found by its key";
	}
	return n == q->throttles.len ? NULL
	                             : "the throttle windows are miscounted";
}

uint64_t
qs_throttle_count(const struct queue *q)
{
	return q->throttles.len;
}

static int
throttle_cmp(const void *a, const void *b)
{
	const struct throttle *x = *(const struct throttle *const *)a;
	const struct throttle *y = *(const struct throttle *const *)b;
	size_t nx = x->tube_len + x->key_len, ny = y->tube_len + y->key_len;
	int c;

	if (x->tube_len != y->tube_len)
		return x->tube_len < y->tube_len ? -1 : 1;
	c = memcmp(x->data, y->data, nx < ny ? nx : ny);
	return c != 0 ? c : (nx > ny) - (nx < ny);
}

int
qs_throttle_dump(const struct queue *q, struct buf *out)
{
	const struct throttle **v;
	size_t n = 0;

	if (q->throttles.len == 0)
		return 0;
	if ((v = malloc(q->throttles.len * sizeof(*v))) == NULL)
		return SLUICE_ENOMEM;
	for (uint32_t i = 0; i < q->throttles.cap; i++) {
		const struct throttle *t = idx_at(&q->throttles, i);

		if (t != NULL && t->until > q->clock)
			v[n++] = t;
	}
	qsort(v, n, sizeof(*v), throttle_cmp);
	for (size_t i = 0; i < n; i++) {
		buf_printf(out, "throttle ");
		buf_put_escaped(
		    out, v[i]->data + v[i]->tube_len, v[i]->key_len);
		buf_printf(out, " tube=%.*s id=%" PRIu64 " until=%" PRId64 "\n",
		    (int)v[i]->tube_len, v[i]->data, v[i]->id, v[i]->until);
	}
	free(v);
	return 0;
}

/* Little-endian writers into a fixed buffer large enough for an entry. */
static size_t
put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return (size_t)n;
}

int
qs_throttle_snapshot_write(
    const struct queue *q, queue_emit_fn *emit, void *arg)
{
	uint8_t mem[2 + QREC_NAME_MAX + 2 + QREC_KEY_MAX + 16];

	for (uint32_t i = 0; i < q->throttles.cap; i++) {
		const struct throttle *t = idx_at(&q->throttles, i);
		size_t n = 0;
		int rc;

		if (t == NULL || t->until <= q->clock)
			continue;
		n += put_le(mem + n, t->tube_len, 2);
		memcpy(mem + n, t->data, t->tube_len);
		n += t->tube_len;
		n += put_le(mem + n, t->key_len, 2);
		memcpy(mem + n, t->data + t->tube_len, t->key_len);
		n += t->key_len;
		n += put_le(mem + n, t->id, 8);
		n += put_le(mem + n, (uint64_t)t->until, 8);
		if ((rc = emit(arg, QSNAP_THROTTLE, mem, n, NULL, 0)) != 0)
			return rc;
	}
	return 0;
}

int
qs_throttle_load(struct queue *q, struct rd *r)
{
	size_t tube_len, key_len;
	const char *tube = rd_str16(r, QREC_NAME_MAX, &tube_len);
	const char *key = rd_str16(r, QREC_KEY_MAX, &key_len);
	uint64_t id = rd_u64(r);
	int64_t until = rd_i64(r);

	if (rd_failed(r) || rd_left(r) != 0 ||
	    !qrec_tube_valid(tube, tube_len) || key_len == 0 || id == 0 ||
	    id >= q->next_id || until <= 0 || until > QREC_TIME_MAX ||
	    throttle_lookup(q, tube, tube_len, key, key_len) != NULL)
		return SLUICE_ECORRUPT;
	return qs_throttle_set(q, tube, tube_len, key, key_len, id, until);
}
