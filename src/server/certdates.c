/* certdates - see certdates.h. mbedtls parses the certificate (nng's TLS
 * is built on it); its dates are UTC broken down, turned to Unix seconds
 * with timegm. */
#include <string.h>
#include <time.h>

#include <mbedtls/x509_crt.h>

#include "server/certdates.h"
#include "util/log.h"

static int64_t
x509_secs(const mbedtls_x509_time *t)
{
	struct tm tm = { .tm_year = t->year - 1900,
		.tm_mon = t->mon - 1,
		.tm_mday = t->day,
		.tm_hour = t->hour,
		.tm_min = t->min,
		.tm_sec = t->sec };

	return (int64_t)timegm(&tm);
}

int
certdates_read(const char *pem, int64_t *not_before, int64_t *not_after)
{
	mbedtls_x509_crt crt;
	int rc = -1;

	mbedtls_x509_crt_init(&crt);
	/* a PEM's length counts its NUL; a chain parses as far as it can */
	if (mbedtls_x509_crt_parse(
	        &crt, (const unsigned char *)pem, strlen(pem) + 1) >= 0 &&
	    crt.version != 0) {
		*not_before = x509_secs(&crt.valid_from);
		*not_after = x509_secs(&crt.valid_to);
		rc = 0;
	}
	mbedtls_x509_crt_free(&crt);
	return rc;
}

static void
utc_date(int64_t secs, char *out, size_t cap)
{
	time_t t = (time_t)secs;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int
certdates_check(const char *path, const char *pem, int64_t now)
{
	int64_t from, to;
	char when[32];

	if (certdates_read(pem, &from, &to) != 0)
		return 0;
	if (now > to) {
		utc_date(to, when, sizeof(when));
		log_err("srv",
		    "--tls-cert %s: the certificate expired at %s; every "
		    "client would refuse it: renew it, then start again "
		    "(nothing was written to the data directory)",
		    path, when);
		return -1;
	}
	if (now < from) {
		utc_date(from, when, sizeof(when));
		log_err("srv",
		    "--tls-cert %s: the certificate is not valid before %s "
		    "(is this machine's clock right?); every client would "
		    "refuse it (nothing was written to the data directory)",
		    path, when);
		return -1;
	}
	if (to - now < (int64_t)CERTDATES_WARN_DAYS * 86400) {
		utc_date(to, when, sizeof(when));
		log_warn("srv",
		    "--tls-cert %s: the certificate expires at %s, in %lld "
		    "days: renew it before then (clients refuse an expired "
		    "certificate)",
		    path, when, (long long)((to - now) / 86400));
	}
	return 0;
}
