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
	[SLUICE_EGROUP] = "bad group name (1-200 bytes of [A-Za-z0-9_.:/-])",
	[SLUICE_ECANCELED] = "the task was cancelled: stop working on it",
	[SLUICE_ERESULT] = "result too large (at most 65535 bytes)",
	[SLUICE_ESCHED] = "bad schedule (cron expression, time zone or name)",
	[SLUICE_EBATCH] =
	    "the batch is closed or ended: it takes no more tasks",
	[SLUICE_EMOVED] = "the tube belongs to another cluster (cluster map)",
	[SLUICE_EMOVING] = "the tube is moving in: its keys are not here yet; "
	                   "try again",
};

/* Stable short names, for programs (the HTTP API's "error" field): they
 * never change once given. */
static const char *const short_names[SLUICE_ERRMAX_] = {
	[SLUICE_OK] = "ok",
	[SLUICE_ENOTFOUND] = "not_found",
	[SLUICE_ESTALE] = "stale_lease",
	[SLUICE_ESTATE] = "bad_state",
	[SLUICE_EINVAL] = "invalid",
	[SLUICE_ETUBE] = "bad_tube",
	[SLUICE_EKEY] = "bad_key",
	[SLUICE_ETOOBIG] = "payload_too_large",
	[SLUICE_EMSGSIZE] = "message_too_large",
	[SLUICE_EPROTO] = "malformed",
	[SLUICE_ETRUNC] = "truncated",
	[SLUICE_EVERSION] = "bad_version",
	[SLUICE_EUNKNOWNOP] = "unknown_operation",
	[SLUICE_ENOSPC] = "log_full",
	[SLUICE_ELOG] = "log_failed",
	[SLUICE_ECORRUPT] = "corrupt",
	[SLUICE_ETIMEDOUT] = "timed_out",
	[SLUICE_ENOTLEADER] = "not_leader",
	[SLUICE_EREPLICA] = "too_few_replicas",
	[SLUICE_EEPOCH] = "stale_epoch",
	[SLUICE_ECONN] = "no_connection",
	[SLUICE_ENOMEM] = "out_of_memory",
	[SLUICE_ESHUTDOWN] = "shutting_down",
	[SLUICE_EEXIST] = "key_exists",
	[SLUICE_EPAUSED] = "paused",
	[SLUICE_ELIMIT] = "limit",
	[SLUICE_EAUTH] = "unauthenticated",
	[SLUICE_EPERM] = "not_allowed",
	[SLUICE_ENOTEMPTY] = "not_empty",
	[SLUICE_EGROUP] = "bad_group",
	[SLUICE_ECANCELED] = "cancelled",
	[SLUICE_ERESULT] = "result_too_large",
	[SLUICE_ESCHED] = "bad_schedule",
	[SLUICE_EBATCH] = "batch_closed",
	[SLUICE_EMOVED] = "moved",
	[SLUICE_EMOVING] = "moving_in",
};

const char *
sluice_errname(int rc)
{
	if (rc < 0)
		return "system";
	if (rc < SLUICE_ERRMAX_ && short_names[rc] != NULL)
		return short_names[rc];
	return "unknown";
}

const char *
sluice_strerror(int rc)
{
	if (rc < 0)
		return strerror(-rc);
	if (rc < SLUICE_ERRMAX_ && names[rc] != NULL)
		return names[rc];
	return "unknown error";
}
