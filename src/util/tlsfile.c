/* tlsfile - reads the PEM files of TLS (a CA, a certificate, its key)
 * and turns them into nng TLS configurations for sluiced and libsluice
 * (tlsfile.h).
 *
 * The files are checked in two steps: the text must hold a PEM block of
 * the right kind (a clear message for the usual mistakes: a key given as
 * the certificate, a DER file, an empty file), then the TLS engine must
 * take it (nng parses it with mbedtls; its reason is passed on). Whether
 * the key matches the certificate the engine says only at a handshake. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/tlsfile.h"

enum { PEM_MAX = 1 << 20 }; /* a CA bundle is a few hundred KiB at most */

/* The whole file, NUL-terminated, into *out; or -1 with the reason. */
static int
read_text(
    const char *name, const char *path, char **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *text;
	size_t n;

	if (f == NULL) {
		snprintf(err, errlen, "%s %s: %s", name, path, strerror(errno));
		return -1;
	}
	text = malloc(PEM_MAX + 1);
	if (text == NULL) {
		fclose(f);
		snprintf(err, errlen, "%s %s: out of memory", name, path);
		return -1;
	}
	n = fread(text, 1, PEM_MAX + 1, f);
	if (ferror(f) || n > PEM_MAX) {
		snprintf(err, errlen, "%s %s: %s", name, path,
		    ferror(f) ? strerror(errno) : "larger than 1 MiB");
		fclose(f);
		free(text);
		return -1;
	}
	fclose(f);
	text[n] = '\0';
	*out = text;
	return 0;
}

/* Reads `path` and checks that it holds a PEM block whose label ends
 * with `label` ("CERTIFICATE", "PRIVATE KEY"). */
static int
read_pem(const char *name, const char *path, const char *label,
    const char *what, char **out, char *err, size_t errlen)
{
	char *text, *begin;

	if (read_text(name, path, &text, err, errlen) != 0)
		return -1;
	begin = strstr(text, "-----BEGIN ");
	while (begin != NULL) {
		char *end = strstr(begin + 11, "-----");
		size_t ll = strlen(label);

		if (end != NULL && (size_t)(end - begin - 11) >= ll &&
		    memcmp(end - ll, label, ll) == 0) {
			*out = text;
			return 0;
		}
		begin = strstr(begin + 11, "-----BEGIN ");
	}
	snprintf(err, errlen,
	    "%s %s: no PEM %s in it (a file beginning "
	    "with -----BEGIN %s----- is expected)",
	    name, path, what, label);
	free(text);
	return -1;
}

int
tlsfile_load(struct tlsfile *t, const char *ca, const char *cert,
    const char *key, const char *const names[3], char *err, size_t errlen)
{
	nng_tls_config *cfg = NULL;
	int rv;

	memset(t, 0, sizeof(*t));
	if ((cert == NULL) != (key == NULL)) {
		snprintf(err, errlen, "%s and %s go together: give both",
		    names[1], names[2]);
		return -1;
	}
	if ((ca != NULL &&
	        read_pem(names[0], ca, "CERTIFICATE", "certificate", &t->ca,
	            err, errlen) != 0) ||
	    (cert != NULL &&
	        read_pem(names[1], cert, "CERTIFICATE", "certificate", &t->cert,
	            err, errlen) != 0) ||
	    (key != NULL &&
	        read_pem(names[2], key, "PRIVATE KEY", "private key", &t->key,
	            err, errlen) != 0))
		goto fail;
	if ((rv = nng_tls_config_alloc(&cfg, NNG_TLS_MODE_CLIENT)) != 0) {
		snprintf(err, errlen, "TLS: %s", nng_strerror(rv));
		goto fail;
	}
	if (t->ca != NULL &&
	    (rv = nng_tls_config_ca_chain(cfg, t->ca, NULL)) != 0) {
		snprintf(err, errlen, "%s %s: not a valid certificate (%s)",
		    names[0], ca, nng_strerror(rv));
		goto fail;
	}
	if (t->cert != NULL &&
	    (rv = nng_tls_config_own_cert(cfg, t->cert, t->key, NULL)) != 0) {
		snprintf(err, errlen,
		    "%s %s, %s %s: not a valid certificate and key (%s)",
		    names[1], cert, names[2], key, nng_strerror(rv));
		goto fail;
	}
	nng_tls_config_free(cfg);
	return 0;

fail:
	if (cfg != NULL)
		nng_tls_config_free(cfg);
	tlsfile_fini(t);
	return -1;
}

void
tlsfile_fini(struct tlsfile *t)
{
	free(t->ca);
	free(t->cert);
	free(t->key);
	memset(t, 0, sizeof(*t));
}

bool
tlsfile_url(const char *url)
{
	return strncmp(url, "tls+", 4) == 0 || strncmp(url, "wss", 3) == 0;
}

int
tlsfile_server(const struct tlsfile *t, nng_tls_config **out)
{
	nng_tls_config *cfg;
	int rv;

	if (t->cert == NULL)
		return NNG_EINVAL;
	if ((rv = nng_tls_config_alloc(&cfg, NNG_TLS_MODE_SERVER)) != 0)
		return rv;
	if ((rv = nng_tls_config_own_cert(cfg, t->cert, t->key, NULL)) != 0 ||
	    (t->client_auth && t->ca != NULL &&
	        (rv = nng_tls_config_ca_chain(cfg, t->ca, NULL)) != 0) ||
	    (rv = nng_tls_config_auth_mode(cfg,
	         t->client_auth ? NNG_TLS_AUTH_MODE_REQUIRED
	                        : NNG_TLS_AUTH_MODE_NONE)) != 0) {
		nng_tls_config_free(cfg);
		return rv;
	}
	*out = cfg;
	return 0;
}

int
tlsfile_client(const struct tlsfile *t, const char *url, nng_tls_config **out)
{
	nng_tls_config *cfg;
	nng_url *u = NULL;
	int rv;

	if (t->ca == NULL)
		return NNG_EINVAL;
	if ((rv = nng_url_parse(&u, url)) != 0)
		return rv;
	if ((rv = nng_tls_config_alloc(&cfg, NNG_TLS_MODE_CLIENT)) != 0) {
		nng_url_free(u);
		return rv;
	}
	if ((rv = nng_tls_config_ca_chain(cfg, t->ca, NULL)) != 0 ||
	    (rv = nng_tls_config_auth_mode(cfg, NNG_TLS_AUTH_MODE_REQUIRED)) !=
	        0 ||
	    (rv = nng_tls_config_server_name(cfg, u->u_hostname)) != 0 ||
	    (t->cert != NULL &&
	        (rv = nng_tls_config_own_cert(cfg, t->cert, t->key, NULL)) !=
	            0)) {
		nng_tls_config_free(cfg);
		nng_url_free(u);
		return rv;
	}
	nng_url_free(u);
	*out = cfg;
	return 0;
}
