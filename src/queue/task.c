/* task - one task's memory: its allocation with the payload, and the
 * ext of its rarely used parts (task.h). Allocation and the ext's lifetime: an
 * ext exists while the task is taken or has a key, an error, a period, a
 * pending replacement, or is done (its take time and result), and is freed by
 * task_ext_trim() once none holds. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "queue/heap.h"
#include "queue/task.h"
#include "queue/tslab.h"
#include "sluice.h"

struct task *
task_new(struct tslab_pool *pool, const void *payload, size_t len)
{
	struct task *t = tslab_alloc(pool, task_size(len));

	if (t == NULL)
		return NULL;
	memset(t, 0, offsetof(struct task, payload));
	if (len > 0)
		memcpy(t->payload, payload, len);
	t->payload_len = (uint32_t)len;
	t->hpos = HEAP_NONE;
	t->apos = HEAP_NONE;
	return t;
}

void
task_free(struct tslab_pool *pool, struct task *t)
{
	if (t == NULL)
		return;
	if (t->ext != NULL) {
		free(t->ext->error);
		free(t->ext->result);
		free(t->ext->repl);
		free(t->ext);
	}
	tslab_free(pool, t, task_size(t->payload_len));
}

struct repl *
repl_new(const void *payload, size_t len)
{
	struct repl *r = malloc(offsetof(struct repl, payload) + len);

	if (r == NULL)
		return NULL;
	memset(r, 0, offsetof(struct repl, payload));
	if (len > 0)
		memcpy(r->payload, payload, len);
	r->payload_len = (uint32_t)len;
	return r;
}

int
task_ext_need(struct task *t)
{
	if (t->ext != NULL)
		return 0;
	t->ext = calloc(1, sizeof(*t->ext));
	return t->ext ? 0 : SLUICE_ENOMEM;
}

void
task_ext_trim(struct task *t)
{
	struct task_ext *e = t->ext;

	if (e == NULL || e->taken || e->error != NULL || e->period != 0 ||
	    e->key != NULL || e->repl != NULL || e->result != NULL ||
	    e->taken_at != 0)
		return;
	free(e);
	t->ext = NULL;
}

void
task_put_error(struct task *t, char *copy, size_t len)
{
	assert(copy == NULL || t->ext != NULL);
	if (t->ext == NULL)
		return;
	free(t->ext->error);
	t->ext->error = copy;
	t->ext->error_len = copy ? (uint16_t)len : 0;
}
