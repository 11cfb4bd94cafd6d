/* config - sluiced's settings, as its flags set them (flags.c fills them,
 * from the defaults of SPEC section 6 on): one struct every layer reads
 * and none writes once the server runs. The bottom of src/server: it
 * includes nothing of the server, so the faces, the core, replication
 * and failover can all see what they were told. Each field names its
 * flag; docs/operations.md and docs/security.md say what each does. */
#ifndef SLUICE_SERVER_CONFIG_H
#define SLUICE_SERVER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log/wal.h"

struct tlsfile;

enum { CONFIG_HTTP_HOSTS_MAX = 16 };

struct config {
	const char *data_dir;       /* --data */
	const char *listen;         /* --listen: the client URL */
	enum wal_fsync fsync;       /* --fsync always|MS|never */
	uint32_t fsync_ms;          /* --fsync MS */
	enum wal_commit wal_commit; /* --wal-commit uring|uring-fsync|
	                             * uring-auto|inline */
	bool wal_fsync_op;          /* --wal-commit uring-fsync */
	bool wal_adapt;             /* --wal-commit uring-auto */
	unsigned wal_inflight;      /* --wal-inflight */
	const char *repl_listen;    /* --repl-listen */
	const char *follow;         /* --follow */
	unsigned sync_replicas;     /* --sync-replicas */
	uint32_t sync_timeout_ms;   /* --sync-timeout */
	const char *http;           /* --http */
	bool http_admin; /* --http-admin: the page may kick, delete */
	const char
	    *http_hosts[CONFIG_HTTP_HOSTS_MAX]; /* --http-host, repeated */
	size_t http_nhosts;
	uint32_t http_body_timeout_ms;   /* --http-body-timeout */
	uint32_t http_header_timeout_ms; /* --http-header-timeout */
	uint32_t http_idle_timeout_ms;   /* --http-idle-timeout */
	uint32_t http_max_conns;         /* --http-max-conns */
	const char *beanstalk;           /* --beanstalk */
	size_t beanstalk_max_job; /* --beanstalk-max-job-size; 0: none of its
	                             own (--max-payload) */
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
	unsigned snap_growth;     /* --snapshot-growth: per cent */
	unsigned keep_segments;   /* --keep-segments */
	unsigned keep_snapshots;  /* --keep-snapshots, >= 1 */
	unsigned snap_reuse_s;    /* --snapshot-reuse: seconds; 0: never */
	uint32_t default_ttr_ms;  /* --ttr */
	uint32_t dedup_ms;        /* --dedup-window */
	int64_t keep_done_ms;     /* --keep-done */
	uint64_t max_done;        /* --max-done */
	uint8_t lost_lease_retry; /* --lost-lease-retry: enum queue_retry */
	uint64_t max_log_bytes;   /* --max-log-bytes: segment and spare files,
	                           * at most; 0: no limit */
	uint64_t max_waits;       /* --max-waiting-takes: on the node; 0: no
	                           * limit */
	uint32_t max_waits_conn;  /* --max-waiting-takes-per-conn; 0: none */
	uint32_t metrics_tubes;   /* --metrics-tubes: tubes with series of
	                           * their own in /metrics */
	/* automatic failover (docs/replication.md) */
	const char *etcd;           /* --etcd: endpoints; NULL: manual */
	const char *cluster;        /* --cluster */
	const char *node;           /* --node */
	const char *advertise;      /* --advertise: the client URL */
	const char *advertise_repl; /* --advertise-repl */
	const char *advertise_http; /* --advertise-http, else from --http;
	                               NULL: none published */
	uint32_t leader_ttl_ms;     /* --leader-ttl */
	uint32_t map_reread_ms;     /* --map-reread: the map's full reads */
	/* TLS (docs/security.md) */
	const char *tls_cert;      /* --tls-cert */
	const char *tls_key;       /* --tls-key */
	const char *tls_ca;        /* --tls-ca */
	bool tls_client_auth;      /* --tls-client-auth */
	const struct tlsfile *tls; /* their contents; NULL: no TLS */
	/* connection bounds of the native and beanstalk faces, and what
	 * of them tls+tcp:// can have (docs/security.md); 0: none */
	unsigned max_conns;          /* --max-conns, per face */
	unsigned max_unauth_conns;   /* --max-unauth-conns, per face */
	uint32_t handshake_ms;       /* --handshake-timeout */
	uint32_t frame_ms;           /* --frame-timeout */
	uint32_t idle_ms;            /* --idle-timeout */
	uint32_t stall_ms;           /* --stall-timeout */
	uint64_t max_queued_bytes;   /* --max-queued-bytes */
	unsigned max_queued_replies; /* --max-queued-replies */
};

/* The connection bounds' defaults (docs/security.md). */
enum {
	CONFIG_DEFAULT_MAX_CONNS = 10000,
	CONFIG_DEFAULT_MAX_UNAUTH = 1000,
	CONFIG_DEFAULT_HANDSHAKE_MS = 10000,
	CONFIG_DEFAULT_FRAME_MS = 30000,
	CONFIG_DEFAULT_STALL_MS = 30000,
	CONFIG_DEFAULT_QUEUED_BYTES = 4 << 20,
	CONFIG_DEFAULT_QUEUED_REPLIES = 256,
};

/* Defaults of the limits on shared resources (docs/security.md). */
enum {
	CONFIG_DEFAULT_MAX_WAITS = 100000,
	CONFIG_DEFAULT_MAX_WAITS_CONN = 256,
	CONFIG_DEFAULT_METRICS_TUBES = 100,
};

#endif
