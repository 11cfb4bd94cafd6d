/* flags_value - the checks of sluiced's flag values, one value each: whole
 * numbers, durations and sizes within their bounds, URLs and addresses
 * the faces can listen on, names etcd keys can hold, and the TLS files
 * read before anything starts. flags.c calls them as it reads argv; each
 * complaint names the flag and what it takes. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <time.h>

#include "proto/msg.h"
#include "server/certdates.h"
#include "server/flags.h"
#include "util/dur.h"
#include "util/log.h"
#include "util/tlsfile.h"

/* Every complaint about the command line: one line, exit code 2. */

int
flags_error(const char *fmt, ...)
{
	va_list ap;

	fputs("sluiced: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

/* A decimal integer in [lo, hi], the whole string. */
int
flags_u64(
    const char *flag, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] < '0' ||
	    s[0] > '9' || v < lo || v > hi)
		return flags_error("%s takes a whole number from %" PRIu64
		                   " to %" PRIu64 ", not '%s'",
		    flag, lo, hi, s);
	*out = v;
	return 0;
}

/* A duration (util/dur.h, as the sluice tool reads them) in [lo, hi] ms. */
int
flags_ms(
    const char *flag, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char a[32], b[32], hint[128];
	uint64_t ms;
	int rc = dur_parse(s, &ms);

	if (rc == DUR_EBARE) {
		dur_hint(hint, sizeof(hint), s);
		return flags_error(
		    "%s %s: a duration needs a unit: %s", flag, s, hint);
	}
	dur_fmt(a, sizeof(a), lo);
	dur_fmt(b, sizeof(b), hi);
	if (rc != 0 || ms < lo || ms > hi)
		return flags_error(
		    "%s takes a duration from %s to %s: " DUR_SYNTAX
		    "; not '%s'",
		    flag, a, b, s);
	*out = ms;
	return 0;
}

/* --http-host NAME: a DNS name or an IP literal, without a port. */
int
flags_http_host(struct config *cfg, const char *name)
{
	size_t n = strlen(name);

	if (cfg->http_nhosts == CONFIG_HTTP_HOSTS_MAX)
		return flags_error("--http-host: at most %d names",
		    (int)CONFIG_HTTP_HOSTS_MAX);
	if (n == 0 || n > 253 ||
	    strspn(name,
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	        "0123456789.-_:[]") != n ||
	    (strchr(name, ':') != NULL && name[0] != '['))
		return flags_error("--http-host takes a host name or an IP "
		                   "address without a port ([::1] for IPv6); "
		                   "not '%s'",
		    name);
	cfg->http_hosts[cfg->http_nhosts++] = name;
	return 0;
}

/* A byte count: a whole number with an optional k, M or G (binary
 * multiples), the whole string, at least 1. */
int
flags_size(const char *flag, const char *s, uint64_t *out)
{
	unsigned long long v;
	uint64_t mult = 1;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end != s && end[0] != '\0' && end[1] == '\0') {
		switch (end[0]) {
		case 'k':
		case 'K':
			mult = UINT64_C(1) << 10;
			end++;
			break;
		case 'M':
			mult = UINT64_C(1) << 20;
			end++;
			break;
		case 'G':
			mult = UINT64_C(1) << 30;
			end++;
			break;
		default:
			break;
		}
	}
	if (errno != 0 || end == s || *end != '\0' || s[0] < '0' ||
	    s[0] > '9' || v == 0 || v > UINT64_MAX / mult) {
		return flags_error("%s takes a number of bytes, with an "
		                   "optional k, M or G (for example 512M), not "
		                   "'%s'",
		    flag, s);
	}
	*out = (uint64_t)v * mult;
	return 0;
}

int
flags_fsync(const char *s, struct config *cfg)
{
	char hint[128];
	uint64_t ms;
	int rc;

	if (strcmp(s, "always") == 0) {
		cfg->fsync = WAL_FSYNC_ALWAYS;
		return 0;
	}
	if (strcmp(s, "never") == 0) {
		cfg->fsync = WAL_FSYNC_NEVER;
		return 0;
	}
	if ((rc = dur_parse(s, &ms)) == DUR_EBARE) {
		dur_hint(hint, sizeof(hint), s);
		return flags_error(
		    "--fsync %s: a duration needs a unit: %s", s, hint);
	}
	if (rc != 0 || ms < 1 || ms > 3600000)
		return flags_error("--fsync takes always, never, or how often "
		                   "to sync: a duration from 1ms to 1h (500ms, "
		                   "10ms, 1s); not '%s'",
		    s);
	cfg->fsync = WAL_FSYNC_INTERVAL;
	cfg->fsync_ms = (uint32_t)ms;
	return 0;
}

int
flags_wal_commit(const char *s, struct config *cfg)
{
	if (strcmp(s, "uring") == 0 || strcmp(s, "uring-fsync") == 0 ||
	    strcmp(s, "uring-auto") == 0) {
		cfg->wal_commit = WAL_COMMIT_DIRECT;
		cfg->wal_fsync_op = strcmp(s, "uring-fsync") == 0;
		cfg->wal_adapt = strcmp(s, "uring-auto") == 0;
		return 0;
	}
	if (strcmp(s, "inline") == 0) {
		cfg->wal_commit = WAL_COMMIT_INLINE;
		return 0;
	}
	return flags_error("--wal-commit takes uring (O_DIRECT writes "
	                   "through io_uring, RWF_DSYNC), uring-fsync (the "
	                   "same writes, each followed by an fdatasync "
	                   "through io_uring), uring-auto (the fdatasync while "
	                   "commits hold one or two records on average, "
	                   "RWF_DSYNC otherwise) or "
	                   "inline (pwrite + fdatasync on the loop's thread); "
	                   "not '%s'",
	    s);
}

/* True when `port` is a decimal port number, 1 to 65535. */
static bool
port_ok(const char *port)
{
	uint64_t v = 0;

	if (*port == '\0' || strlen(port) > 5)
		return false;
	for (const char *p = port; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	return v >= 1 && v <= 65535;
}

/* An nng URL (--listen, --repl-listen, --follow): a scheme nng knows,
 * and for the TCP ones a host (for --follow) and a port. `example` is the
 * flag's default port, for the message. */
int
flags_check_url(const char *flag, const char *s, const char *example)
{
	static const char *const schemes[] = { "tcp", "tcp4", "tcp6", "tls+tcp",
		"tls+tcp4", "tls+tcp6", "ipc", "abstract", "ws", "ws4", "ws6",
		"wss", "wss4", "wss6" };
	bool known = false, tcp;
	nng_url *u = NULL;
	int rc = 0;

	if (strstr(s, "://") == NULL)
		return flags_error("%s takes a URL such as tcp://%s, not '%s'",
		    flag, strchr(s, ':') != NULL ? s : example, s);
	if (nng_url_parse(&u, s) != 0)
		return flags_error("%s: '%s' is not a URL (one such as "
		                   "tcp://%s is expected)",
		    flag, s, example);
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		known = known || strcmp(u->u_scheme, schemes[i]) == 0;
	tcp = strncmp(u->u_scheme, "ipc", 3) != 0 &&
	    strcmp(u->u_scheme, "abstract") != 0;
	if (!known)
		rc = flags_error("%s: '%s' is not a transport sluiced speaks "
		                 "(tcp://, tls+tcp://, ipc://, ws://), in '%s'",
		    flag, u->u_scheme, s);
	else if (tcp && !port_ok(u->u_port))
		rc = flags_error("%s: '%s' has no port from 1 to 65535 (a URL "
		                 "such as tcp://%s is expected)",
		    flag, s, example);
	else if (tcp && strcmp(flag, "--follow") == 0 &&
	    u->u_hostname[0] == '\0')
		rc = flags_error("--follow: '%s' names no host (a URL such as "
		                 "tcp://%s is expected)",
		    s, example);
	nng_url_free(u);
	return rc;
}

/* HOST:PORT (--http, --beanstalk; --http also http:// or
 * https://HOST:PORT). */
int
flags_check_addr(const char *flag, const char *s, const char *example)
{
	const char *a = s, *colon;

	if (strcmp(flag, "--http") == 0 && strncmp(a, "http://", 7) == 0)
		a += 7;
	else if (strcmp(flag, "--http") == 0 && strncmp(a, "https://", 8) == 0)
		a += 8;
	colon = strrchr(a, ':');
	if (colon == NULL || !port_ok(colon + 1) || strchr(a, '/') != NULL)
		return flags_error("%s takes HOST:PORT such as %s (PORT from 1 "
		                   "to 65535), not '%s'",
		    flag, example, s);
	return 0;
}

int
flags_check_beanstalk_addr(const char *s)
{
	if (strncmp(s, "unix:", 5) != 0)
		return flags_check_addr("--beanstalk", s, "127.0.0.1:11300");
	if (s[5] == '\0' ||
	    strlen(s + 5) >= sizeof(((struct sockaddr_un *)NULL)->sun_path))
		return flags_error("--beanstalk unix:PATH takes a socket "
		                   "file's path of 1 to %d bytes, not '%s'",
		    (int)sizeof(((struct sockaddr_un *)NULL)->sun_path) - 1, s);
	return 0;
}

/* The beanstalk face has no way to authenticate: beside --auth it
 * listens on loopback only, unless --beanstalk-insecure says otherwise. */
int
flags_check_beanstalk(const struct config *cfg)
{
	const char *host = cfg->beanstalk;

	if (cfg->beanstalk_insecure && cfg->beanstalk == NULL)
		return flags_error("--beanstalk-insecure needs --beanstalk");
	if (cfg->beanstalk_max_job != 0 && cfg->beanstalk == NULL)
		return flags_error(
		    "--beanstalk-max-job-size needs --beanstalk");
	if (cfg->beanstalk_max_job > cfg->max_payload)
		return flags_error("--beanstalk-max-job-size %zu is over "
		                   "--max-payload %zu: the server takes no "
		                   "larger payload",
		    cfg->beanstalk_max_job, cfg->max_payload);
	if (cfg->auth_file == NULL || host == NULL || cfg->beanstalk_insecure)
		return 0;
	if (strncmp(host, "127.", 4) == 0 || strncmp(host, "unix:", 5) == 0 ||
	    strncmp(host, "localhost:", 10) == 0 ||
	    strncmp(host, "[::1]:", 6) == 0)
		return 0;
	return flags_error("--beanstalk %s: the beanstalk protocol cannot "
	                   "send a token, so with --auth it listens on "
	                   "loopback only (add --beanstalk-insecure to allow "
	                   "it)",
	    host);
}

/* --etcd: comma-separated http:// URLs with a port. */
int
flags_check_endpoints(const char *s)
{
	char one[512];
	const char *p = s, *comma;
	size_t len;

	for (int i = 0; i < 16; i++) {
		comma = strchr(p, ',');
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (len == 0 || len >= sizeof(one) ||
		    strncmp(p, "http://", 7) != 0)
			return flags_error("--etcd takes etcd's client URLs "
			                   "such as http://127.0.0.1:2379, "
			                   "separated by commas; not '%s'",
			    s);
		memcpy(one, p, len);
		one[len] = '\0';
		if (strrchr(one + 7, ':') == NULL ||
		    !port_ok(strrchr(one + 7, ':') + 1))
			return flags_error("--etcd: '%s' has no port from 1 to "
			                   "65535 (http://127.0.0.1:2379 is "
			                   "etcd's usual address)",
			    one);
		if (comma == NULL)
			return 0;
		p = comma + 1;
	}
	return flags_error("--etcd takes at most 16 URLs");
}

/* --cluster and --node: 1 to 64 bytes of [A-Za-z0-9_.:-], which go into
 * etcd keys as they are. */
int
flags_check_name(const char *flag, const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 64 ||
	    strspn(s,
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	        "0123456789_.:-") != n)
		return flags_error("%s takes 1 to 64 letters, digits and "
		                   "_ . : -, not '%s'",
		    flag, s);
	return 0;
}

/* Whether an nng URL listens on every address (0.0.0.0, ::, or none):
 * no use to others as an address to reach. */
static bool
url_wildcard(const char *url)
{
	const char *h = strstr(url, "://");

	if (h == NULL)
		return true;
	h += 3;
	return h[0] == ':' || h[0] == '*' || strncmp(h, "0.0.0.0:", 8) == 0 ||
	    strncmp(h, "[::]:", 5) == 0;
}

int
flags_check_http_url(const char *flag, const char *s)
{
	nng_url *u = NULL;
	int rc = 0;

	if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0)
		return flags_error("%s takes a URL such as "
		                   "http://10.0.0.1:7780, not '%s'",
		    flag, s);
	if (strlen(s) > MSG_URL_MAX || nng_url_parse(&u, s) != 0)
		return flags_error("%s: '%s' is not a URL of at most %d "
		                   "bytes (one such as http://10.0.0.1:7780)",
		    flag, s, MSG_URL_MAX);
	if (u->u_hostname[0] == '\0' || !port_ok(u->u_port) ||
	    (u->u_path[0] != '\0' && strcmp(u->u_path, "/") != 0))
		rc = flags_error("%s: '%s' needs a host and a port, and no "
		                 "path (http://10.0.0.1:7780)",
		    flag, s);
	nng_url_free(u);
	return rc;
}

/* The URL other clusters' nodes name for this node's --http: the given
 * --advertise-http, else --http's address (https:// with TLS), unless it
 * listens on every address. */
static void
advertise_http(struct config *cfg)
{
	static char url[MSG_URL_MAX + 1];
	const char *a = cfg->http, *h;

	if (cfg->advertise_http != NULL || a == NULL)
		return;
	h = strstr(a, "://");
	if (h != NULL)
		a = h + 3;
	if (a[0] == ':' || a[0] == '*' || strncmp(a, "0.0.0.0:", 8) == 0 ||
	    strncmp(a, "[::]:", 5) == 0)
		return;
	snprintf(url, sizeof(url), "%s://%s",
	    cfg->tls_cert != NULL ? "https" : "http", a);
	cfg->advertise_http = url;
}

/* The flags of automatic failover, with their defaults. */
int
flags_check_failover(struct config *cfg)
{
	static char node[80];
	const char *h;

	if (cfg->etcd == NULL) {
		if (cfg->advertise != NULL || cfg->node != NULL ||
		    cfg->advertise_repl != NULL || cfg->advertise_http != NULL)
			return flags_error("--node, --advertise, "
			                   "--advertise-repl and "
			                   "--advertise-http need --etcd");
		return 0;
	}
	advertise_http(cfg);
	if (cfg->follow != NULL)
		return flags_error("--etcd elects the leader: leave --follow "
		                   "out");
	if (cfg->repl_listen == NULL)
		return flags_error("--etcd needs --repl-listen: any node may "
		                   "come to lead, and followers dial it there");
	if (cfg->advertise == NULL) {
		if (url_wildcard(cfg->listen))
			return flags_error("--listen %s is no address others "
			                   "can reach: say --advertise URL",
			    cfg->listen);
		cfg->advertise = cfg->listen;
	}
	if (cfg->advertise_repl == NULL) {
		if (url_wildcard(cfg->repl_listen))
			return flags_error("--repl-listen %s is no address "
			                   "followers can reach: say "
			                   "--advertise-repl URL",
			    cfg->repl_listen);
		cfg->advertise_repl = cfg->repl_listen;
	}
	if (cfg->node == NULL) {
		h = strstr(cfg->advertise, "://");
		snprintf(node, sizeof(node), "%s", h != NULL ? h + 3 : "");
		if (flags_check_name("--node", node) != 0)
			return 2;
		cfg->node = node;
	}
	return 0;
}

/* The TLS flags against the URLs that need them. */
int
flags_check_tls(const struct config *cfg)
{
	const char *const listening[][2] = { { "--listen", cfg->listen },
		{ "--repl-listen", cfg->repl_listen } };

	if ((cfg->tls_cert == NULL) != (cfg->tls_key == NULL))
		return flags_error("--tls-cert and --tls-key go together: give "
		                   "both");
	for (size_t i = 0; i < 2; i++)
		if (listening[i][1] != NULL && tlsfile_url(listening[i][1]) &&
		    cfg->tls_cert == NULL)
			return flags_error(
			    "%s %s needs this node's certificate: "
			    "give --tls-cert FILE and --tls-key "
			    "FILE",
			    listening[i][0], listening[i][1]);
	if (cfg->follow != NULL && tlsfile_url(cfg->follow) &&
	    cfg->tls_ca == NULL)
		return flags_error("--follow %s needs --tls-ca FILE: the CA "
		                   "that signed the leader's certificate",
		    cfg->follow);
	if (cfg->etcd != NULL && cfg->repl_listen != NULL &&
	    tlsfile_url(cfg->repl_listen) && cfg->tls_ca == NULL)
		return flags_error(
		    "--etcd with --repl-listen %s needs --tls-ca "
		    "FILE: a node that comes to follow verifies "
		    "its leader with it",
		    cfg->repl_listen);
	if (cfg->http != NULL && strncmp(cfg->http, "https://", 8) == 0 &&
	    cfg->tls_cert == NULL)
		return flags_error("--http %s needs this node's certificate: "
		                   "give --tls-cert FILE and --tls-key FILE",
		    cfg->http);
	if (cfg->http != NULL && strncmp(cfg->http, "http://", 7) == 0 &&
	    cfg->tls_cert != NULL)
		return flags_error("--http %s: with --tls-cert the HTTP face "
		                   "serves HTTPS; say https:// or HOST:PORT",
		    cfg->http);
	if (cfg->tls_client_auth &&
	    (cfg->tls_ca == NULL || cfg->tls_cert == NULL))
		return flags_error("--tls-client-auth needs --tls-ca (the CA "
		                   "that signs the clients) and --tls-cert");
	return 0;
}

/* Reads and checks the TLS files, before anything is written. */
int
flags_load_tls(struct config *cfg, struct tlsfile *tls)
{
	static const char *const names[3] = { "--tls-ca", "--tls-cert",
		"--tls-key" };
	char err[512];

	if (cfg->tls_ca == NULL && cfg->tls_cert == NULL)
		return 0;
	if (tlsfile_load(tls, cfg->tls_ca, cfg->tls_cert, cfg->tls_key, names,
	        err, sizeof(err)) != 0) {
		log_err("srv",
		    "cannot use TLS file error=\"%s\"; nothing was written to "
		    "the data directory",
		    err);
		return 1;
	}
	tls->client_auth = cfg->tls_client_auth;
	cfg->tls = tls;
	if (tls->cert != NULL &&
	    certdates_check(cfg->tls_cert, tls->cert, (int64_t)time(NULL)) != 0)
		return 1;
	return 0;
}
