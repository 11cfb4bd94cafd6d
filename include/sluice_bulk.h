/* sluice_bulk.h - the calls of libsluice that act on many tasks of a tube
 * at once beyond sluice_kick and sluice_delete_where_opts: a kick of the
 * buried tasks of one last error (an error group retried), and the dry
 * runs of a kick and of a delete by state, which count the tasks the
 * call would act on and change nothing (so that a person is asked "kick
 * 37 tasks?" with the number that is so).
 *
 * Part of sluice.h, which includes it: include <sluice.h>, never this
 * file alone (it uses sluice.h's types and SLUICE_API). */
#ifndef SLUICE_BULK_H
#define SLUICE_BULK_H

/* What sluice_kick_opts kicks. */
struct sluice_kick_opts {
	uint32_t n;        /* at most this many (>= 1), lowest ids first */
	const char *error; /* NULL or "": any buried task; else only the
	                      buried tasks whose last error is this text */
	int delayed;       /* none buried: kick delayed ones, soonest first
	                      (not with error) */
	int dry;           /* count what it would kick, kick nothing */
};

/* sluice_kick with options. Returns 0 and `*kicked` (optional: the tasks
 * kicked, or with `dry` the tasks it would kick); SLUICE_ETUBE,
 * SLUICE_EINVAL (n 0, error with delayed), SLUICE_ENOSPC (as sluice_kick),
 * SLUICE_EUNKNOWNOP or SLUICE_EINVAL from a server older than error
 * groups and dry runs. */
SLUICE_API int sluice_kick_opts(struct sluice_client *c, const char *tube,
    const struct sluice_kick_opts *o, uint64_t *kicked);

/* sluice_delete_where_opts's dry run: `*would` (optional) counts the tasks
 * it would delete with `o`, and nothing is deleted. Errors as
 * sluice_delete_where_opts. */
SLUICE_API int sluice_delete_where_dry(struct sluice_client *c,
    const char *tube, const struct sluice_delete_where_opts *o,
    uint64_t *would);

#endif
