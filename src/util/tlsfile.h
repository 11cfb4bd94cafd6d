/* tlsfile - the PEM files of TLS (a CA, a certificate and its key) read
 * once, checked, and turned into nng TLS configurations.
 *
 * Both sides use it: sluiced for --tls-cert, --tls-key and --tls-ca (its
 * listeners, its HTTPS face, a follower's dial to its leader), libsluice
 * for sluice_set_tls(). The files are read when they are given, so a
 * missing, unreadable or invalid file is reported at once, with the flag
 * or argument it came from, and never at the first connection.
 *
 * A configuration is made per use: a dialer's names the host it must
 * find in the server's certificate (nng_tls_config_server_name), which
 * differs per URL. The text stays in memory for that. */
#ifndef SLUICE_UTIL_TLSFILE_H
#define SLUICE_UTIL_TLSFILE_H

#include <stdbool.h>
#include <stddef.h>

#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>

struct tlsfile {
	char *ca;         /* PEM: the CA that signs the peers; NULL: none */
	char *cert;       /* PEM: our own certificate (chain); NULL: none */
	char *key;        /* PEM: its private key; NULL with cert */
	bool client_auth; /* a server requires a certificate signed by ca */
};

/* Reads and checks the files (any may be NULL; cert and key go together).
 * `names` are what to call each in a message, e.g. "--tls-ca". Returns 0;
 * or -1 with one line in `err` naming the file and what is wrong with it
 * (missing, unreadable, not PEM, refused by the TLS engine). On failure
 * `t` holds nothing to free. */
int tlsfile_load(struct tlsfile *t, const char *ca, const char *cert,
    const char *key, const char *const names[3], char *err, size_t errlen);

void tlsfile_fini(struct tlsfile *t);

/* Whether `url` is one TLS carries (tls+tcp://, tls+tcp4://, wss://...). */
bool tlsfile_url(const char *url);

/* A server's configuration: our certificate; the peers' verified against
 * ca when client_auth. Returns 0 or an nng error. */
int tlsfile_server(const struct tlsfile *t, nng_tls_config **out);

/* A client's configuration for `url`: the server's certificate must be
 * signed by ca and name the URL's host; ours is shown when we have one.
 * Returns 0 or an nng error (NNG_EINVAL: no CA to verify with). */
int tlsfile_client(
    const struct tlsfile *t, const char *url, nng_tls_config **out);

#endif
