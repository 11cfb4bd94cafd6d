/* name - the alphabet of tube, group and batch names (A-Z a-z 0-9 _ . : /
 * -), checked by a table: the wire decoder and the queue's records check
 * a name at every put, so the check is one load a byte. */
#ifndef SLUICE_UTIL_NAME_H
#define SLUICE_UTIL_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* 1 for the bytes a name may hold. */
static const unsigned char name_alphabet[256] = {
	['-'] = 1,
	['.'] = 1,
	['/'] = 1,
	['0' ... '9'] = 1,
	[':'] = 1,
	['A' ... 'Z'] = 1,
	['_'] = 1,
	['a' ... 'z'] = 1,
};

/* Whether `p` is 1 to `max` bytes of the alphabet. Reads up to the
 * first byte outside it. */
static inline bool
name_valid(const char *p, size_t len, size_t max)
{
	if (len == 0 || len > max || p == NULL)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!name_alphabet[(unsigned char)p[i]])
			return false;
	return true;
}

#endif
