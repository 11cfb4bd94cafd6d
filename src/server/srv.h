/* srv - sluiced itself: start-up (recovery), the core thread's event loop,
 * and shutdown. The loop owns the queue and the log writer; every request
 * is decided, logged and applied on it, and answered once the log holds
 * what the answer depends on. */
#ifndef SLUICE_SERVER_SRV_H
#define SLUICE_SERVER_SRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log/wal.h"

struct tlsfile;

enum { SRV_HTTP_HOSTS_MAX = 16 };

struct srv_config {
	const char *data_dir;     /* --data */
	const char *listen;       /* --listen: the client URL */
	enum wal_fsync fsync;     /* --fsync always|MS|never */
	uint32_t fsync_ms;        /* --fsync MS */
	const char *repl_listen;  /* --repl-listen */
	const char *follow;       /* --follow */
	unsigned sync_replicas;   /* --sync-replicas */
	uint32_t sync_timeout_ms; /* --sync-timeout */
	const char *http;         /* --http */
	bool http_admin;          /* --http-admin: the page may kick, delete */
	const char *http_hosts[SRV_HTTP_HOSTS_MAX]; /* --http-host, repeated */
	size_t http_nhosts;
	uint32_t http_body_timeout_ms;   /* --http-body-timeout */
	uint32_t http_header_timeout_ms; /* --http-header-timeout */
	uint32_t http_idle_timeout_ms;   /* --http-idle-timeout */
	uint32_t http_max_conns;         /* --http-max-conns */
	const char *beanstalk;           /* --beanstalk */
	bool beanstalk_insecure;  /* --beanstalk-insecure: beside --auth, on
	                             a non-loopback address */
	const char *auth_file;    /* --auth: the token file; NULL: open */
	const char *repl_token;   /* --repl-token-file's first line, or
	                             $SLUICE_REPL_TOKEN: what this node shows
	                             a leader with --auth; NULL: none */
	size_t max_payload;       /* --max-payload */
	uint64_t seg_size;        /* --segment-size */
	uint64_t snap_records;    /* --snapshot-records */
	uint64_t snap_bytes;      /* --snapshot-bytes */
	unsigned keep_segments;   /* --keep-segments */
	uint32_t default_ttr_ms;  /* --ttr */
	uint32_t dedup_ms;        /* --dedup-window */
	int64_t keep_done_ms;     /* --keep-done */
	uint64_t max_done;        /* --max-done */
	uint8_t lost_lease_retry; /* --lost-lease-retry: enum queue_retry */
	uint64_t max_log_bytes;   /* --max-log-bytes: segment and spare files,
	                           * at most; 0: no limit */
	/* automatic failover (docs/replication.md) */
	const char *etcd;           /* --etcd: endpoints; NULL: manual */
	const char *cluster;        /* --cluster */
	const char *node;           /* --node */
	const char *advertise;      /* --advertise: the client URL */
	const char *advertise_repl; /* --advertise-repl */
	uint32_t leader_ttl_ms;     /* --leader-ttl */
	/* TLS (docs/security.md) */
	const char *tls_cert;      /* --tls-cert */
	const char *tls_key;       /* --tls-key */
	const char *tls_ca;        /* --tls-ca */
	bool tls_client_auth;      /* --tls-client-auth */
	const struct tlsfile *tls; /* their contents; NULL: no TLS */
};

/* Fills the defaults of SPEC §6. */
void srv_config_defaults(struct srv_config *cfg);

/* Recovers, serves until SIGTERM or SIGINT, then finishes what is in
 * flight and stops. Returns the process exit code: 0 after a clean stop,
 * 1 when start-up failed (the reason is logged). */
int srv_run(const struct srv_config *cfg);

#endif
