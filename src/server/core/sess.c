/* sess - see sess.h. An id index (queue/idx.h) of one small allocation
 * per session: a session lives as long as its connection, so opening and
 * closing one is the only cost, never a request's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/core/sess.h"
#include "util/clock.h"

static uint64_t
sess_key(const void *item)
{
	return ((const struct sess *)item)->id;
}

void
sess_tab_init(struct sess_tab *t)
{
	idx_init(&t->ids, sess_key);
}

void
sess_tab_fini(struct sess_tab *t)
{
	for (uint32_t i = 0; i < t->ids.cap; i++)
		free(idx_at(&t->ids, i));
	idx_fini(&t->ids);
}

int
sess_open(struct sess_tab *t, uint32_t id, const char *peer)
{
	struct sess *s;

	if (sess_find(t, id) != NULL)
		return 0;
	if (idx_reserve(&t->ids, 1) != 0 || (s = malloc(sizeof(*s))) == NULL)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->opened_ms = clock_mono_ms();
	snprintf(s->peer, sizeof(s->peer), "%s", peer != NULL ? peer : "");
	idx_insert(&t->ids, s);
	return 0;
}

const struct sess *
sess_find(const struct sess_tab *t, uint32_t id)
{
	return idx_find(&t->ids, id);
}

struct sess *
sess_get(struct sess_tab *t, uint32_t id)
{
	return idx_find(&t->ids, id);
}

void
sess_each(struct sess_tab *t, void (*fn)(struct sess *s, void *arg), void *arg)
{
	for (uint32_t i = 0; i < t->ids.cap; i++) {
		struct sess *s = idx_at(&t->ids, i);

		if (s != NULL)
			fn(s, arg);
	}
}

void
sess_close(struct sess_tab *t, uint32_t id)
{
	struct sess *s = idx_find(&t->ids, id);

	if (s == NULL)
		return;
	idx_remove(&t->ids, s);
	free(s);
}
