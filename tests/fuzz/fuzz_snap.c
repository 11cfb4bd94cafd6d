/* The snapshot reader over arbitrary bytes: it must return 0 or
 * SLUICE_ECORRUPT, never read outside the input, and on success visit
 * entries whose lengths lie inside it. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>

#include "log/snap.h"
#include "sluice.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct span {
	const uint8_t *lo, *hi;
	size_t sum;
};

static int
visit(void *arg, uint16_t type, const void *p, size_t len)
{
	struct span *s = arg;
	const uint8_t *b = p;

	assert(type != SNAP_ENTRY_END);
	assert(b >= s->lo && b + len <= s->hi);
	for (size_t i = 0; i < len; i++)
		s->sum += b[i];
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct span s = { data, data + size, 0 };
	struct snap_info info;
	uint64_t bad;
	int rc;

	rc = snap_parse(data, size, visit, &s, &info, &bad);
	assert(rc == 0 || rc == SLUICE_ECORRUPT);
	if (rc == SLUICE_ECORRUPT)
		assert(bad <= size);
	return 0;
}
