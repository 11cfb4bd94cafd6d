/* move_group - a tube's group settings listed one at a time, for a move
 * to copy them (queue_move.h; glimit.h keeps them): the groups with
 * settings of their own in the order of their names, from a cursor. A
 * scan of the tube's table of overrides per call: a move calls it once
 * per override, and a tube has a handful (at most GLIMIT_OVERRIDES_MAX). */
#include <string.h>

#include "queue/glimit.h"
#include "queue/qstate.h"
#include "sluice.h"

/* a before b: by bytes, a prefix first. */
static bool
name_less(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	return c < 0 || (c == 0 && alen < blen);
}

int
queue_move_group_next(const struct queue *q, const char *tube, size_t len,
    const char *after, size_t after_len, char *name, size_t *name_len)
{
	const struct tube *tb;
	const struct gover *best = NULL;

	*name_len = 0;
	if (!qrec_tube_valid(tube, len))
		return SLUICE_ETUBE;
	if ((tb = qs_tube(q, tube, len)) == NULL)
		return SLUICE_ENOTFOUND;
	if (tb->gconf == NULL)
		return 0;
	for (uint32_t i = 0; i < tb->gconf->over.cap; i++) {
		const struct gover *o = idx_at(&tb->gconf->over, i);

		if (o == NULL ||
		    !name_less(after, after_len, o->name, o->name_len))
			continue;
		if (best == NULL ||
		    name_less(o->name, o->name_len, best->name, best->name_len))
			best = o;
	}
	if (best != NULL) {
		memcpy(name, best->name, best->name_len);
		*name_len = best->name_len;
	}
	return 0;
}
