/* http_respond - how the HTTP face answers a request: the response is
 * built whole (http_srv.h's http_res: status line, headers, body) and
 * set as the output of the request's aio, which the server then writes;
 * nothing here writes to a socket. Every status the face sends has its
 * reason phrase here. The face's own pages answer in plain text or
 * {"error":TEXT,"code":N}; the task API's error objects are its own
 * (http_api_answer.c), built on http_respond_x. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>

#include "json/json.h"
#include "server/face/http/http_respond.h"
#include "server/face/http/http_srv.h"
#include "sluice.h"

/* The reason phrase of every status the face sends (RFC 9110 15; nng's
 * server, which served the face before, knew some of them only: "413
 * Unknown HTTP Status"). */
static const char *
reason_of(uint16_t status)
{
	switch (status) {
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 204:
		return "No Content";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 409:
		return "Conflict";
	case 413:
		return "Content Too Large";
	case 417:
		return "Expectation Failed";
	case 421:
		return "Misdirected Request";
	case 429:
		return "Too Many Requests";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 503:
		return "Service Unavailable";
	default:
		return status < 300 ? "OK"
		    : status < 500  ? "Client Error"
		                    : "Server Error";
	}
}

/* The response, with one more header `hname: hval` unless hname is NULL;
 * `close`: the connection is closed once it is written. */
void
http_respond_x(nng_aio *aio, uint16_t status, const char *ctype,
    const void *body, size_t len, const char *hname, const char *hval,
    bool close)
{
	struct http_res *res = http_res_new(
	    status, reason_of(status), ctype, body, len, hname, hval, close);

	if (res == NULL) {
		nng_aio_finish(aio, NNG_ENOMEM);
		return;
	}
	nng_aio_set_output(aio, 0, res);
	nng_aio_finish(aio, 0);
}

void
http_respond(nng_aio *aio, uint16_t status, const char *ctype, const void *body,
    size_t len, const char *hname, const char *hval)
{
	http_respond_x(aio, status, ctype, body, len, hname, hval, false);
}

void
http_respond_text(nng_aio *aio, uint16_t status, const char *text)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s\n", text);

	http_respond(aio, status, "text/plain; charset=utf-8", line,
	    n < 0                          ? 0
	        : (size_t)n < sizeof(line) ? (size_t)n
	                                   : sizeof(line) - 1,
	    NULL, NULL);
}

/* A refusal of --auth: no more than that is said (the log says who and
 * why). 401 asks for a bearer token; 403: the token's role may not. */
void
http_respond_refused(nng_aio *aio, int code)
{
	if (code == SLUICE_EAUTH) {
		static const char text[] = "unauthenticated\n";

		http_respond(aio, 401, "text/plain; charset=utf-8", text,
		    sizeof(text) - 1, "WWW-Authenticate", "Bearer");
	} else {
		http_respond_text(aio, 403, "not allowed");
	}
}

/* {"error":TEXT,"code":N} with an HTTP status that fits the code. */
void
http_respond_err(nng_aio *aio, int code, const char *text, size_t len)
{
	uint16_t status = code == SLUICE_ENOTFOUND ? 404
	    : code == SLUICE_ETUBE || code == SLUICE_EINVAL ||
	        code == SLUICE_ELIMIT || code == SLUICE_ESTATE ||
	        code == SLUICE_ERESULT
	    ? 400
	    : code == SLUICE_ESHUTDOWN ? 503
	                               : 500;
	char *body = NULL;
	size_t blen = 0;
	FILE *f = open_memstream(&body, &blen);

	if (f == NULL) {
		http_respond_text(aio, 500, "out of memory");
		return;
	}
	fputs("{\"error\":", f);
	json_str(f, text, len);
	fprintf(f, ",\"code\":%d}", code);
	fclose(f);
	http_respond(aio, status, "application/json", body, blen, NULL, NULL);
	free(body);
}

void
http_respond_errc(nng_aio *aio, int code, const char *text)
{
	http_respond_err(aio, code, text, strlen(text));
}
