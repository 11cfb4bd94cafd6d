/* cmap - the cluster map in memory (cmap.h).
 *
 * Entries are few (an operator writes them) and looked up on every put
 * and take of a node with a map, so they are kept sorted by prefix and a
 * lookup walks the prefixes of the tube from the longest: each is a
 * binary search, at most MSG_TUBE_MAX of them, and usually the first
 * hits. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cmap.h"
#include "sluice.h"

void
cmap_init(struct cmap *m)
{
	memset(m, 0, sizeof(*m));
}

void
cmap_free(struct cmap *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->nclusters; i++) {
		free(m->c[i].urls);
		free(m->c[i].http);
	}
	free(m->c);
	free(m->e);
	memset(m, 0, sizeof(*m));
}

int
cmap_copy(struct cmap *dst, const struct cmap *src)
{
	struct cmap m;

	cmap_init(&m);
	m.revision = src->revision;
	if (src->n > 0) {
		if ((m.e = malloc(src->n * sizeof(*m.e))) == NULL)
			return -ENOMEM;
		memcpy(m.e, src->e, src->n * sizeof(*m.e));
		m.n = src->n;
	}
	if (src->nclusters > 0) {
		if ((m.c = calloc(src->nclusters, sizeof(*m.c))) == NULL)
			goto fail;
		for (; m.nclusters < src->nclusters; m.nclusters++) {
			struct cmap_cluster *c = &m.c[m.nclusters];

			*c = src->c[m.nclusters];
			c->http = NULL;
			if ((c->urls = strdup(c->urls)) == NULL)
				goto fail;
			if (src->c[m.nclusters].http != NULL &&
			    (c->http = strdup(src->c[m.nclusters].http)) ==
			        NULL)
				goto fail;
		}
	}
	*dst = m;
	return 0;
fail:
	cmap_free(&m);
	return -ENOMEM;
}

/* The index of `prefix` (`len` bytes) among the entries, or where it
 * would go (*found false). */
static size_t
find(const struct cmap *m, const char *prefix, size_t len, bool *found)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *p = m->e[mid].prefix;
		size_t plen = strlen(p);
		int d = memcmp(p, prefix, plen < len ? plen : len);

		if (d == 0)
			d = plen < len ? -1 : plen > len ? 1 : 0;
		if (d == 0) {
			*found = true;
			return mid;
		}
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

int
cmap_put(struct cmap *m, const struct cmap_entry *e)
{
	size_t plen = strnlen(e->prefix, sizeof(e->prefix));
	struct cmap_entry *grown;
	bool found;
	size_t at;

	if (plen == sizeof(e->prefix) ||
	    (plen > 0 && !msg_tube_valid(e->prefix, plen)))
		return SLUICE_ETUBE;
	if (!msg_cluster_name_valid(msg_cstr(e->cluster)) ||
	    e->ndraining > MSG_MAP_DRAINING_MAX)
		return SLUICE_EINVAL;
	for (uint8_t i = 0; i < e->ndraining; i++)
		if (!msg_cluster_name_valid(msg_cstr(e->draining[i])) ||
		    strcmp(e->draining[i], e->cluster) == 0)
			return SLUICE_EINVAL;
	at = find(m, e->prefix, plen, &found);
	if (found) {
		m->e[at] = *e;
		return 0;
	}
	if (m->n >= MSG_MAP_ENTRIES_MAX)
		return SLUICE_ELIMIT;
	if ((grown = realloc(m->e, (m->n + 1) * sizeof(*m->e))) == NULL)
		return -ENOMEM;
	m->e = grown;
	memmove(&m->e[at + 1], &m->e[at], (m->n - at) * sizeof(*m->e));
	m->e[at] = *e;
	m->n++;
	return 0;
}

const struct cmap_entry *
cmap_lookup(const struct cmap *m, const char *tube, size_t len)
{
	if (m == NULL || m->n == 0)
		return NULL;
	for (size_t l = len + 1; l-- > 0;) {
		bool found;
		size_t at = find(m, tube, l, &found);

		if (found)
			return &m->e[at];
	}
	return NULL;
}

const struct cmap_cluster *
cmap_cluster(const struct cmap *m, const char *name)
{
	for (size_t i = 0; i < m->nclusters; i++)
		if (strcmp(m->c[i].name, name) == 0)
			return &m->c[i];
	return NULL;
}

/* "LEADER,MEMBER,...": the leader first, then every other member once
 * (empty ones left out); NULL when out of memory. */
static char *
join_urls(const char *leader, const char *const *members, size_t n)
{
	size_t cap = 1 + strlen(leader) + 1;
	char *urls;

	for (size_t i = 0; i < n; i++)
		cap += strlen(members[i]) + 1;
	if ((urls = malloc(cap)) == NULL)
		return NULL;
	snprintf(urls, cap, "%s", leader);
	for (size_t i = 0; i < n; i++) {
		if (members[i][0] == '\0' || strcmp(members[i], leader) == 0)
			continue;
		if (urls[0] != '\0')
			strcat(urls, ",");
		strcat(urls, members[i]);
	}
	return urls;
}

int
cmap_set_http(struct cmap *m, const char *name, const char *leader,
    const char *const *members, size_t n)
{
	struct cmap_cluster *c = (struct cmap_cluster *)cmap_cluster(m, name);
	char *http;

	if (c == NULL)
		return SLUICE_ENOTFOUND;
	if ((http = join_urls(leader != NULL ? leader : "", members, n)) ==
	    NULL)
		return -ENOMEM;
	free(c->http);
	c->http = http;
	return 0;
}

int
cmap_set_cluster(struct cmap *m, const char *name, const char *leader,
    const char *const *members, size_t n)
{
	struct cmap_cluster *c = (struct cmap_cluster *)cmap_cluster(m, name);
	char *urls;

	if (leader == NULL)
		leader = "";
	if ((urls = join_urls(leader, members, n)) == NULL)
		return -ENOMEM;
	if (c == NULL) {
		struct cmap_cluster *grown;

		if (m->nclusters >= MSG_MAP_CLUSTERS_MAX) {
			free(urls);
			return SLUICE_ELIMIT;
		}
		grown = realloc(m->c, (m->nclusters + 1) * sizeof(*m->c));
		if (grown == NULL) {
			free(urls);
			return -ENOMEM;
		}
		m->c = grown;
		c = &m->c[m->nclusters++];
		memset(c, 0, sizeof(*c));
		snprintf(c->name, sizeof(c->name), "%s", name);
	} else {
		free(c->urls);
	}
	snprintf(c->leader, sizeof(c->leader), "%s", leader);
	c->urls = urls;
	return 0;
}

static bool
has_name(char (*v)[MSG_NODE_MAX + 1], size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return true;
	return false;
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

size_t
cmap_cluster_names(
    const struct cmap *m, char (*out)[MSG_NODE_MAX + 1], size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++) {
		const struct cmap_entry *e = &m->e[i];

		if (n < max && !has_name(out, n, e->cluster))
			snprintf(out[n++], MSG_NODE_MAX + 1, "%s", e->cluster);
		for (uint8_t k = 0; k < e->ndraining; k++)
			if (n < max && !has_name(out, n, e->draining[k]))
				snprintf(out[n++], MSG_NODE_MAX + 1, "%s",
				    e->draining[k]);
	}
	qsort(out, n, MSG_NODE_MAX + 1, cmp_name);
	return n;
}

void
cmap_moved_detail(char *out, size_t cap, const char *cluster, uint64_t revision,
    const char *urls)
{
	size_t len, room;

	if (cap > MSG_URL_MAX + 1)
		cap = MSG_URL_MAX + 1;
	len = (size_t)snprintf(out, cap, "%s %" PRIu64 " ", cluster, revision);
	if (len >= cap) {
		out[0] = '\0';
		return;
	}
	room = cap - len - 1;
	/* whole URLs only */
	for (const char *p = urls; *p != '\0';) {
		size_t ulen = strcspn(p, ",");
		size_t need = ulen + (out[len - 1] == ' ' ? 0 : 1);

		if (need > room)
			break;
		if (out[len - 1] != ' ')
			out[len++] = ',';
		memcpy(out + len, p, ulen);
		len += ulen;
		room -= need;
		p += ulen;
		p += *p == ',';
	}
	out[len] = '\0';
}

bool
cmap_moved_parse(const char *s, size_t len, char cluster[MSG_NODE_MAX + 1],
    uint64_t *revision, char *urls, size_t urls_cap)
{
	const char *sp = memchr(s, ' ', len), *sp2;
	uint64_t rev = 0;

	if (sp == NULL || sp == s || (size_t)(sp - s) > MSG_NODE_MAX)
		return false;
	if (!msg_cluster_name_valid((struct msg_str) { s, (size_t)(sp - s) }))
		return false;
	sp2 = memchr(sp + 1, ' ', len - (size_t)(sp + 1 - s));
	if (sp2 == NULL || sp2 == sp + 1)
		return false;
	for (const char *p = sp + 1; p < sp2; p++) {
		if (*p < '0' || *p > '9' || rev > UINT64_MAX / 10 - 9)
			return false;
		rev = rev * 10 + (uint64_t)(*p - '0');
	}
	memcpy(cluster, s, (size_t)(sp - s));
	cluster[sp - s] = '\0';
	*revision = rev;
	snprintf(urls, urls_cap, "%.*s", (int)(len - (size_t)(sp2 + 1 - s)),
	    sp2 + 1);
	return true;
}

/* `s` as a C string into `out` (cap bytes). */
static void
cstr(char *out, size_t cap, struct msg_str s)
{
	snprintf(out, cap, "%.*s", (int)s.len, s.p);
}

int
cmap_from_msg(struct cmap *m, const struct msg_map *mm)
{
	struct msg_iter it = mm->it, cit = mm->cit;
	struct msg_map_entry me;
	struct msg_map_cluster mc;
	int rc = 0;

	cmap_init(m);
	m->revision = mm->revision;
	while (rc == 0 && msg_next_map_entry(&it, &me)) {
		struct cmap_entry e;

		memset(&e, 0, sizeof(e));
		cstr(e.prefix, sizeof(e.prefix), me.prefix);
		cstr(e.cluster, sizeof(e.cluster), me.cluster);
		e.ndraining = me.ndraining;
		for (uint8_t i = 0; i < me.ndraining; i++)
			cstr(e.draining[i], sizeof(e.draining[i]),
			    me.draining[i]);
		rc = cmap_put(m, &e);
	}
	while (rc == 0 && msg_next_map_cluster(&cit, &mc)) {
		char name[MSG_NODE_MAX + 1], leader[MSG_URL_MAX + 1];
		char(*urls)[MSG_URL_MAX + 1] = NULL;
		const char **ptrs = NULL;
		struct msg_str u;
		size_t n = 0;

		cstr(name, sizeof(name), mc.name);
		cstr(leader, sizeof(leader), mc.leader);
		if (mc.n > 0 &&
		    ((urls = calloc(mc.n, sizeof(*urls))) == NULL ||
		        (ptrs = calloc(mc.n, sizeof(*ptrs))) == NULL))
			rc = -ENOMEM;
		while (rc == 0 && msg_next_url(&mc.it, &u)) {
			cstr(urls[n], sizeof(urls[n]), u);
			ptrs[n] = urls[n];
			n++;
		}
		if (rc == 0)
			rc = cmap_set_cluster(m, name, leader, ptrs, n);
		free(ptrs);
		free(urls);
	}
	if (rc != 0)
		cmap_free(m);
	return rc;
}

int
cmap_to_msg(const struct cmap *m, const char *self, struct msg_map *mm)
{
	struct msg_map_entry *e = NULL;
	struct msg_map_cluster *c = NULL;
	size_t nurls = 0;
	struct msg_str *urls = NULL;

	memset(mm, 0, sizeof(*mm));
	mm->revision = m->revision;
	mm->cluster = msg_cstr(self);
	for (size_t i = 0; i < m->nclusters; i++)
		for (const char *p = m->c[i].urls; *p != '\0'; nurls++) {
			p += strcspn(p, ",");
			p += *p == ',';
		}
	if ((m->n > 0 && (e = calloc(m->n, sizeof(*e))) == NULL) ||
	    (m->nclusters > 0 &&
	        (c = calloc(m->nclusters, sizeof(*c))) == NULL) ||
	    (nurls > 0 && (urls = calloc(nurls, sizeof(*urls))) == NULL)) {
		free(e);
		free(c);
		free(urls);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->n; i++) {
		e[i].prefix = msg_cstr(m->e[i].prefix);
		e[i].cluster = msg_cstr(m->e[i].cluster);
		e[i].ndraining = m->e[i].ndraining;
		for (uint8_t k = 0; k < e[i].ndraining; k++)
			e[i].draining[k] = msg_cstr(m->e[i].draining[k]);
	}
	nurls = 0;
	for (size_t i = 0; i < m->nclusters; i++) {
		c[i].name = msg_cstr(m->c[i].name);
		c[i].leader = msg_cstr(m->c[i].leader);
		c[i].members = urls != NULL ? &urls[nurls] : NULL;
		for (const char *p = m->c[i].urls; *p != '\0';) {
			size_t l = strcspn(p, ",");

			if (c[i].n < MSG_CLUSTER_MEMBERS_MAX) {
				urls[nurls++] = (struct msg_str) { p, l };
				c[i].n++;
			}
			p += l;
			p += *p == ',';
		}
	}
	mm->n = (uint32_t)m->n;
	mm->entries = e;
	mm->nclusters = (uint32_t)m->nclusters;
	mm->clusters = c;
	return 0;
}

void
cmap_msg_free(struct msg_map *mm)
{
	/* the first cluster's members begin the one array of URLs */
	if (mm->nclusters > 0)
		free((void *)mm->clusters[0].members);
	free((void *)mm->entries);
	free((void *)mm->clusters);
	mm->entries = NULL;
	mm->clusters = NULL;
}
