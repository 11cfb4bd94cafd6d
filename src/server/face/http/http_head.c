/* http_head - the parser of a request's head (request line and headers)
 * the HTTP face's server (http_srv.c) reads; what it accepts and the
 * status of each refusal are in http_head.h. Pure, fuzzed
 * (tests/fuzz/fuzz_http_head.c). The head is cut into NUL-ended strings
 * in place: each line's CRLF, the request line's two spaces, a header's
 * colon and trailing blanks become NULs. */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "server/face/http/http_head.h"

static bool
tchar(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') ||
	    (ch != 0 && strchr("!#$%&'*+-.^_`|~", ch));
}

/* Whether `s` (NUL-ended) holds no control byte but tabs. */
static bool
printable(const char *s)
{
	for (; *s != '\0'; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			return false;
	return true;
}

int
http_head_parse(char *p, size_t len, struct http_head *out, const char **reason,
    const char **text)
{
	char *stop = p + len;
	char *line_end, *method, *uri, *version, *sp;
	nng_http_req *req = NULL;
	unsigned nh = 0;
	bool has_host = false;

	*out = (struct http_head) { 0 };
	*reason = "Bad Request";
	*text = "malformed request\n";
	*stop = '\0';
	if (memchr(p, '\0', len) != NULL)
		return 400; /* a NUL byte: the strings below would end there */
	if ((line_end = strstr(p, "\r\n")) == NULL) /* NUL-ended at stop */
		return 400;
	*line_end = '\0';
	method = p;
	if ((sp = strchr(method, ' ')) == NULL)
		return 400;
	*sp = '\0';
	uri = sp + 1;
	if ((sp = strchr(uri, ' ')) == NULL)
		return 400;
	*sp = '\0';
	version = sp + 1;
	if (method[0] == '\0' || strlen(method) > HTTP_HEAD_METHOD_MAX)
		return 400;
	for (const char *m = method; *m != '\0'; m++)
		if (!tchar((unsigned char)*m))
			return 400;
	if (uri[0] != '/' || strlen(uri) > HTTP_HEAD_URI_MAX ||
	    !printable(uri) || strchr(uri, ' ') != NULL ||
	    strchr(uri, '\t') != NULL)
		return 400;
	if (strncmp(version, "HTTP/1.", 7) != 0) {
		*reason = "HTTP Version Not Supported";
		*text = "HTTP/1.1 only\n";
		return 505;
	}
	if (strcmp(version, "HTTP/1.1") != 0 &&
	    strcmp(version, "HTTP/1.0") != 0)
		return 400;
	if (nng_http_req_alloc(&req, NULL) != 0 ||
	    nng_http_req_set_method(req, method) != 0 ||
	    nng_http_req_set_uri(req, uri) != 0 ||
	    nng_http_req_set_version(req, version) != 0)
		goto nomem;
	out->close = strcmp(version, "HTTP/1.0") == 0;
	out->head_only = strcmp(method, "HEAD") == 0;
	for (p = line_end + 2; p < stop; p = line_end + 2) {
		char *name = p, *colon, *v, *ve;

		if ((line_end = strstr(p, "\r\n")) == NULL)
			goto bad;
		*line_end = '\0';
		if (++nh > HTTP_HEAD_LINES_MAX) {
			nng_http_req_free(req);
			*reason = "Request Header Fields Too Large";
			*text = "too many header lines\n";
			return 431;
		}
		if ((colon = strchr(name, ':')) == NULL || colon == name)
			goto bad;
		*colon = '\0';
		for (const char *q = name; *q != '\0'; q++)
			if (!tchar((unsigned char)*q))
				goto bad; /* a blank before the colon, a fold */
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		for (ve = v + strlen(v);
		     ve > v && (ve[-1] == ' ' || ve[-1] == '\t');)
			*--ve = '\0';
		if (!printable(v))
			goto bad;
		if (strcasecmp(name, "Host") == 0) {
			if (has_host)
				goto bad; /* RFC 9112 3.2: exactly one */
			has_host = true;
		}
		if (strcasecmp(name, "Connection") == 0 &&
		    strcasestr(v, "close") != NULL)
			out->close = true;
		if (nng_http_req_add_header(req, name, v) != 0)
			goto nomem;
	}
	if (!has_host && strcmp(version, "HTTP/1.1") == 0)
		goto bad; /* RFC 9112 3.2 */
	out->req = req;
	return 0;
bad:
	nng_http_req_free(req);
	return 400;
nomem:
	if (req != NULL)
		nng_http_req_free(req);
	*reason = "Internal Server Error";
	*text = "out of memory\n";
	return 500;
}
