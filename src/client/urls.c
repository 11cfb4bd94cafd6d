/* urls - the list of server URLs a client handle may connect to: parsed
 * from "URL[,URL...]" (spaces around the commas ignored; an entry without
 * "://" refused; none at all is SLUICE_DEFAULT_URL), and grown when a
 * "not leader" reply names a URL not in the list yet. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "client/urls.h"
#include "sluice.h"

void
urls_fini(struct urls *u)
{
	for (size_t i = 0; i < u->n; i++)
		free(u->v[i]);
	free(u->v);
	memset(u, 0, sizeof(*u));
}

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Appends `len` bytes at `p` as a new URL. */
static int
append(struct urls *u, const char *p, size_t len)
{
	char **v;
	char *s;

	if (len == 0)
		return SLUICE_EINVAL;
	if ((v = realloc(u->v, (u->n + 1) * sizeof(*v))) == NULL)
		return SLUICE_ENOMEM;
	u->v = v;
	if ((s = strndup(p, len)) == NULL)
		return SLUICE_ENOMEM;
	u->v[u->n++] = s;
	return 0;
}

int
urls_parse(const char *s, struct urls *out)
{
	struct urls u = { 0 };
	int rc = 0;

	if (s == NULL || *s == '\0')
		s = SLUICE_DEFAULT_URL;
	for (const char *p = s;; p++) {
		const char *end = strchr(p, ',');
		const char *a = p, *b = end ? end : p + strlen(p);

		while (a < b && is_space(*a))
			a++;
		while (b > a && is_space(b[-1]))
			b--;
		if (memmem(a, (size_t)(b - a), "://", 3) == NULL || a[0] == ':')
			rc = SLUICE_EINVAL;
		else
			rc = append(&u, a, (size_t)(b - a));
		if (rc != 0 || end == NULL)
			break;
		p = end;
	}
	if (rc != 0) {
		urls_fini(&u);
		return rc;
	}
	*out = u;
	return 0;
}

int
urls_find_or_add(struct urls *u, const char *url, size_t len, size_t *idx)
{
	int rc;

	for (size_t i = 0; i < u->n; i++) {
		if (strlen(u->v[i]) == len && memcmp(u->v[i], url, len) == 0) {
			*idx = i;
			return 0;
		}
	}
	if ((rc = append(u, url, len)) != 0)
		return rc;
	*idx = u->n - 1;
	return 0;
}
