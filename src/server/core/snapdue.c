/* snapdue - the snapshot cadence: thresholds that grow with the state
 * (snapdue.h says why). */
#include "server/core/snapdue.h"

uint64_t
snapdue_limit(uint64_t floor, uint64_t base, unsigned growth)
{
	uint64_t whole, rest, part;

	if (growth == 0 || base == 0)
		return floor;
	/* base / 100 * growth, plus the remainder's share: exact, and
	 * saturating rather than wrapping. */
	rest = base % 100 * growth / 100;
	if (__builtin_mul_overflow(base / 100, (uint64_t)growth, &whole) ||
	    __builtin_add_overflow(whole, rest, &part))
		return UINT64_MAX;
	return part > floor ? part : floor;
}

bool
snapdue(const struct snapdue_cfg *cfg, const struct snapdue_base *base,
    uint64_t records, uint64_t bytes)
{
	return records >=
	    snapdue_limit(cfg->records, base->entries, cfg->growth) ||
	    bytes >= snapdue_limit(cfg->bytes, base->bytes, cfg->growth);
}
