/* cmap_etcd - the cluster map in etcd (cmap_etcd.h): its keys read into a
 * struct cmap, and its changes written, each one transaction with the
 * marker key. Values are JSON (jansson), written compact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "etcd/cmap_etcd.h"
#include "sluice.h"

enum { TUBES_LEN = sizeof(CMAP_ETCD_TUBES) - 1 };

int
cmap_etcd_revision(struct etcd *e, int64_t *rev)
{
	struct etcd_kv kv;
	bool found;
	int rc;

	if ((rc = etcd_get(e, CMAP_ETCD_MARKER, &found, &kv)) != 0)
		return rc;
	*rev = found ? kv.mod_rev : 0;
	if (found)
		etcd_kv_free(&kv);
	return 0;
}

/* A cluster's name from a JSON string, into `out`. */
static bool
name_of(json_t *j, char out[MSG_NODE_MAX + 1])
{
	const char *s = json_string_value(j);

	if (s == NULL || !msg_cluster_name_valid(msg_cstr(s)))
		return false;
	snprintf(out, MSG_NODE_MAX + 1, "%s", s);
	return true;
}

bool
cmap_etcd_parse(const char *prefix, const void *value, size_t len,
    struct cmap_entry *out, char *why, size_t whylen)
{
	json_t *root = json_loadb(value, len, 0, NULL), *dr;
	bool ok = false;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (strlen(prefix) > MSG_TUBE_MAX ||
	    (prefix[0] != '\0' && !msg_tube_valid(prefix, strlen(prefix)))) {
		snprintf(why, whylen,
		    "prefix '%.*s' is not of a tube name's alphabet",
		    MSG_TUBE_MAX, prefix);
		goto out;
	}
	snprintf(out->prefix, sizeof(out->prefix), "%s", prefix);
	if (!json_is_object(root)) {
		snprintf(why, whylen,
		    "prefix '%s': the value is not a JSON "
		    "object",
		    prefix);
		goto out;
	}
	if (!name_of(json_object_get(root, "cluster"), out->cluster)) {
		snprintf(why, whylen,
		    "prefix '%s': \"cluster\" is not a cluster's name", prefix);
		goto out;
	}
	dr = json_object_get(root, "draining");
	if (dr != NULL &&
	    (!json_is_array(dr) ||
	        json_array_size(dr) > MSG_MAP_DRAINING_MAX)) {
		snprintf(why, whylen,
		    "prefix '%s': \"draining\" is not an array of up to %d "
		    "names",
		    prefix, MSG_MAP_DRAINING_MAX);
		goto out;
	}
	for (i = 0; i < json_array_size(dr); i++)
		if (!name_of(json_array_get(dr, i), out->draining[i]) ||
		    strcmp(out->draining[i], out->cluster) == 0) {
			snprintf(why, whylen,
			    "prefix '%s': \"draining\" holds a bad name or "
			    "the owner itself",
			    prefix);
			goto out;
		}
	out->ndraining = (uint8_t)i;
	ok = true;
out:
	json_decref(root);
	return ok;
}

int
cmap_etcd_read(
    struct etcd *e, struct cmap *out, size_t *bad, char *why, size_t whylen)
{
	struct etcd_kvs kvs;
	size_t nbad = 0;
	int rc;

	cmap_init(out);
	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if ((rc = etcd_get_prefix(e, CMAP_ETCD_ROOT, &kvs)) != 0)
		return rc;
	for (size_t i = 0; i < kvs.n; i++) {
		const struct etcd_kv *kv = &kvs.kv[i];
		struct cmap_entry en;
		char w[200] = "no room for it in the map";

		if (strcmp(kv->key, CMAP_ETCD_MARKER) == 0) {
			if ((uint64_t)kv->mod_rev > out->revision)
				out->revision = (uint64_t)kv->mod_rev;
			continue;
		}
		if (strncmp(kv->key, CMAP_ETCD_TUBES, TUBES_LEN) != 0)
			continue;
		/* an edit by hand counts even without the marker */
		if ((uint64_t)kv->mod_rev > out->revision)
			out->revision = (uint64_t)kv->mod_rev;
		if (!cmap_etcd_parse(kv->key + TUBES_LEN, kv->value, kv->len,
		        &en, w, sizeof(w)) ||
		    cmap_put(out, &en) != 0) {
			if (nbad++ == 0 && why != NULL)
				snprintf(why, whylen, "%s", w);
		}
	}
	etcd_kvs_free(&kvs);
	if (bad != NULL)
		*bad = nbad;
	return 0;
}

/* The client URL and the HTTP URL of a member's or the leader's value;
 * each "" when absent. */
static void
client_of(const struct etcd_kv *kv, char out[MSG_URL_MAX + 1],
    char http[MSG_URL_MAX + 1])
{
	json_t *root = json_loadb((const char *)kv->value, kv->len, 0, NULL);
	const char *s = json_string_value(json_object_get(root, "client"));
	const char *h = json_string_value(json_object_get(root, "http"));

	snprintf(out, MSG_URL_MAX + 1, "%s", s != NULL ? s : "");
	snprintf(http, MSG_URL_MAX + 1, "%s", h != NULL ? h : "");
	json_decref(root);
}

/* One cluster's keys into `m`. */
static int
read_cluster(struct etcd *e, struct cmap *m, const char *name)
{
	char prefix[MSG_NODE_MAX + 16], leader[MSG_URL_MAX + 1] = "";
	char leader_http[MSG_URL_MAX + 1] = "";
	char(*urls)[MSG_URL_MAX + 1] = NULL, (*http)[MSG_URL_MAX + 1] = NULL;
	const char *ptrs[MSG_CLUSTER_MEMBERS_MAX];
	const char *hptrs[MSG_CLUSTER_MEMBERS_MAX];
	struct etcd_kvs kvs;
	size_t n = 0, plen;
	int rc;

	plen = (size_t)snprintf(prefix, sizeof(prefix), "/sluice/%s/", name);
	if ((rc = etcd_get_prefix(e, prefix, &kvs)) != 0)
		return rc;
	urls = calloc(MSG_CLUSTER_MEMBERS_MAX, sizeof(*urls));
	http = calloc(MSG_CLUSTER_MEMBERS_MAX, sizeof(*http));
	if (urls == NULL || http == NULL) {
		free(urls);
		free(http);
		etcd_kvs_free(&kvs);
		return ETCD_ENOMEM;
	}
	for (size_t i = 0; i < kvs.n; i++) {
		const char *rest = kvs.kv[i].key + plen;

		if (strcmp(rest, "leader") == 0)
			client_of(&kvs.kv[i], leader, leader_http);
		else if (strncmp(rest, "members/", 8) == 0 &&
		    n < MSG_CLUSTER_MEMBERS_MAX) {
			client_of(&kvs.kv[i], urls[n], http[n]);
			ptrs[n] = urls[n];
			hptrs[n] = http[n];
			n++;
		}
	}
	rc = cmap_set_cluster(m, name, leader, ptrs, n) == 0 &&
	        cmap_set_http(m, name, leader_http, hptrs, n) == 0
	    ? 0
	    : ETCD_ENOMEM;
	free(urls);
	free(http);
	etcd_kvs_free(&kvs);
	return rc;
}

int
cmap_etcd_cluster(struct etcd *e, struct cmap *m, const char *name)
{
	return read_cluster(e, m, name);
}

int
cmap_etcd_members(struct etcd *e, struct cmap *m)
{
	char(*names)[MSG_NODE_MAX + 1];
	size_t n;
	int rc = 0;

	names = calloc(MSG_MAP_CLUSTERS_MAX, sizeof(*names));
	if (names == NULL)
		return ETCD_ENOMEM;
	n = cmap_cluster_names(m, names, MSG_MAP_CLUSTERS_MAX);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = read_cluster(e, m, names[i]);
	free(names);
	return rc;
}

/* An entry's value as the map writes it (free it); NULL: no memory. */
static char *
entry_text(const struct cmap_entry *en)
{
	json_t *v = json_pack("{s:s}", "cluster", en->cluster), *dr;
	char *text = NULL;

	if (v == NULL)
		return NULL;
	if (en->ndraining > 0) {
		if ((dr = json_array()) == NULL ||
		    json_object_set_new(v, "draining", dr) != 0)
			goto out;
		for (uint8_t i = 0; i < en->ndraining; i++)
			if (json_array_append_new(
			        dr, json_string(en->draining[i])) != 0)
				goto out;
	}
	text = json_dumps(v, JSON_COMPACT);
out:
	json_decref(v);
	return text;
}

int
cmap_etcd_set(struct etcd *e, const struct cmap_entry *en, int64_t *rev)
{
	char key[sizeof(CMAP_ETCD_TUBES) + MSG_TUBE_MAX];
	char *text = entry_text(en);
	bool done;
	int rc;

	if (text == NULL)
		return ETCD_ENOMEM;
	snprintf(key, sizeof(key), "%s%s", CMAP_ETCD_TUBES, en->prefix);
	rc = etcd_put_marked(e, key, text, strlen(text), CMAP_ETCD_MARKER,
	    en->prefix, strlen(en->prefix), &done, rev);
	free(text);
	return rc;
}

static bool
same_entry(const struct cmap_entry *a, const struct cmap_entry *b)
{
	if (strcmp(a->cluster, b->cluster) != 0 || a->ndraining != b->ndraining)
		return false;
	for (uint8_t i = 0; i < a->ndraining; i++)
		if (strcmp(a->draining[i], b->draining[i]) != 0)
			return false;
	return true;
}

int
cmap_etcd_set_if(struct etcd *e, const struct cmap_entry *en,
    const struct cmap_entry *old, bool *done, int64_t *rev)
{
	char key[sizeof(CMAP_ETCD_TUBES) + MSG_TUBE_MAX], why[128];
	struct cmap_entry cur;
	struct etcd_kv kv;
	bool found = false;
	char *text;
	int rc;

	*done = false;
	snprintf(key, sizeof(key), "%s%s", CMAP_ETCD_TUBES, en->prefix);
	/* the value as it is, whatever its spacing: the put is made over
	 * those bytes, if they still say what `old` says */
	if ((rc = etcd_get(e, key, &found, &kv)) != 0 || !found)
		return rc;
	if (!cmap_etcd_parse(
	        en->prefix, kv.value, kv.len, &cur, why, sizeof(why)) ||
	    !same_entry(&cur, old)) {
		etcd_kv_free(&kv);
		return 0;
	}
	if ((text = entry_text(en)) == NULL) {
		etcd_kv_free(&kv);
		return ETCD_ENOMEM;
	}
	rc = etcd_put_marked_if(e, key, text, strlen(text), kv.value, kv.len,
	    CMAP_ETCD_MARKER, en->prefix, strlen(en->prefix), done, rev);
	free(text);
	etcd_kv_free(&kv);
	return rc;
}

int
cmap_etcd_delete(struct etcd *e, const char *prefix, bool *found, int64_t *rev)
{
	char key[sizeof(CMAP_ETCD_TUBES) + MSG_TUBE_MAX];

	snprintf(key, sizeof(key), "%s%s", CMAP_ETCD_TUBES, prefix);
	return etcd_put_marked(e, key, NULL, 0, CMAP_ETCD_MARKER, prefix,
	    strlen(prefix), found, rev);
}
