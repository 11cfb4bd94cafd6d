/* http_page - the dashboard of GET /: one self-contained HTML document,
 * dashboard.html (style and script inline, no external asset, no network
 * fetch but this node's own JSON), embedded in the binary at build time
 * (embed.cmake), so it works where the node is reachable and nothing
 * else is.
 *
 * What the page shows and the routes it polls are described at the top
 * of its script and in docs/operations.md. Every server-provided text is
 * put in the DOM as text (textContent), never as HTML. */
#include <stdlib.h>
#include <string.h>

#include "server/face/http/http_page.h"

extern const unsigned char dashboard_html[];
extern const size_t dashboard_html_len;

char *
http_page_build(bool admin, size_t *len)
{
	const char *page = (const char *)dashboard_html;
	const char *mark = strstr(page, "@ADMIN@");
	size_t mlen = strlen("@ADMIN@"), head, tail;
	char *p;

	if (mark == NULL)
		return NULL;
	head = (size_t)(mark - page);
	tail = dashboard_html_len - head - mlen;
	if ((p = malloc(head + 1 + tail + 1)) == NULL)
		return NULL;
	memcpy(p, page, head);
	p[head] = admin ? '1' : '0';
	memcpy(p + head + 1, mark + mlen, tail + 1);
	*len = head + 1 + tail;
	return p;
}
