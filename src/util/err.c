/* err - names for the three kinds of result code (see sluice.h): 0,
 * positive SLUICE_E* codes and negated errno values. */
#include <string.h>

#include "sluice.h"

static const char *const names[SLUICE_ERRMAX_] = {
	[SLUICE_OK] = "success",
	[SLUICE_ENOTFOUND] = "no such task",
	[SLUICE_ESTALE] = "stale lease: the task was taken again or released",
	[SLUICE_ESTATE] = "task is not in a state that allows this operation",
	[SLUICE_EINVAL] = "invalid argument",
	[SLUICE_ETUBE] = "bad tube name (1-200 bytes of [A-Za-z0-9_.:/-])",
	[SLUICE_EKEY] = "bad key (1-200 bytes)",
	[SLUICE_ETOOBIG] = "payload too large",
	[SLUICE_EMSGSIZE] = "message too large",
	[SLUICE_EPROTO] = "malformed message",
	[SLUICE_ETRUNC] = "truncated message",
	[SLUICE_EVERSION] = "unsupported protocol version",
	[SLUICE_EUNKNOWNOP] = "unknown operation",
	[SLUICE_ENOSPC] = "log full: no room for new tasks",
	[SLUICE_ELOG] = "log write failed: the node refuses writes",
	[SLUICE_ECORRUPT] = "damaged data on disk",
	[SLUICE_ETIMEDOUT] = "timed out",
	[SLUICE_ENOTLEADER] = "not leader",
	[SLUICE_EREPLICA] = "too few replicas acknowledged in time",
	[SLUICE_EEPOCH] = "stale epoch",
	[SLUICE_ECONN] = "no connection to the server",
	[SLUICE_ENOMEM] = "out of memory",
	[SLUICE_ESHUTDOWN] = "server is shutting down",
	[SLUICE_EEXIST] = "key belongs to a live task",
	[SLUICE_EPAUSED] = "tube is paused",
	[SLUICE_ELIMIT] = "limit exceeded",
	[SLUICE_EAUTH] = "unauthenticated: this server needs a token",
	[SLUICE_EPERM] = "not allowed",
	[SLUICE_ENOTEMPTY] = "the tube still has tasks",
};

const char *
sluice_strerror(int rc)
{
	if (rc < 0)
		return strerror(-rc);
	if (rc < SLUICE_ERRMAX_ && names[rc] != NULL)
		return names[rc];
	return "unknown error";
}
