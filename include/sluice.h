/* sluice.h - the public interface of libsluice, the sluice client library.
 *
 * This header is the manual. Every call returns an int: 0 on success, a
 * positive SLUICE_E* code for a sluice error, or a negated errno for a
 * failure reported by the operating system. sluice_strerror() names all
 * three. Out-parameters are written only on success.
 *
 * The client handle and its functions arrive with the client library; the
 * error codes are shared by the server, the log tool and the library, and
 * are part of the wire protocol (their numbers never change). */
#ifndef SLUICE_H
#define SLUICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SLUICE_API __attribute__((visibility("default")))
#else
#define SLUICE_API
#endif

#define SLUICE_VERSION_MAJOR 0
#define SLUICE_VERSION_MINOR 1
#define SLUICE_VERSION_PATCH 0

/* Error codes. Numbers are stable: they travel on the wire. */
enum sluice_error {
	SLUICE_OK = 0,
	SLUICE_ENOTFOUND = 1, /* no task with that id or key */
	SLUICE_ESTALE = 2,    /* the lease is not the task's current one */
	SLUICE_ESTATE = 3,    /* the task is not in a state that allows it */
	SLUICE_EINVAL = 4,    /* an argument is out of range */
	SLUICE_ETUBE = 5,   /* bad tube name: 1-200 bytes of [A-Za-z0-9_.:/-] */
	SLUICE_EKEY = 6,    /* bad key: 1-200 bytes */
	SLUICE_ETOOBIG = 7, /* payload larger than the server's limit */
	SLUICE_EMSGSIZE = 8,    /* message larger than the protocol's limit */
	SLUICE_EPROTO = 9,      /* malformed message */
	SLUICE_ETRUNC = 10,     /* truncated message */
	SLUICE_EVERSION = 11,   /* unsupported protocol version */
	SLUICE_EUNKNOWNOP = 12, /* unknown operation */
	SLUICE_ENOSPC = 13,     /* the log has no room for new tasks */
	SLUICE_ELOG = 14,       /* the log failed; the node refuses writes */
	SLUICE_ECORRUPT = 15,   /* damaged data on disk */
	SLUICE_ETIMEDOUT = 16,  /* nothing to take, or no reply, in time */
	SLUICE_ENOTLEADER = 17, /* this node is a follower */
	SLUICE_EREPLICA = 18,   /* too few replicas acknowledged in time */
	SLUICE_EEPOCH = 19,     /* a stream or request from an older epoch */
	SLUICE_ECONN = 20,      /* no connection to the server */
	SLUICE_ENOMEM = 21,     /* out of memory */
	SLUICE_ESHUTDOWN = 22,  /* the server is shutting down */
	SLUICE_EEXIST = 23,     /* the key belongs to a live task */
	SLUICE_EPAUSED = 24,    /* the tube is paused */
	SLUICE_ELIMIT = 25,     /* a count or text exceeds its limit */
	SLUICE_ERRMAX_
};

/* Names an error code: 0, a SLUICE_E* code, or a negated errno. The string
 * is static; never NULL. */
SLUICE_API const char *sluice_strerror(int rc);

#ifdef __cplusplus
}
#endif
#endif
