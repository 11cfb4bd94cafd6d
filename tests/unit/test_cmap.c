/* Tests of src/proto/cmap and msg_map: the cluster map in memory (longest
 * prefix, the default, draining), the detail of a moved error, and the
 * map's messages (round trips through the wire, and the specific error
 * of each bad field). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>

#include <cmocka.h>

#include "proto/cmap.h"
#include "proto/msg.h"
#include "sluice.h"
#include "util/buf.h"

#define S(lit) ((struct msg_str) { lit, sizeof(lit) - 1 })

static struct cmap_entry
entry(const char *prefix, const char *cluster, const char *draining)
{
	struct cmap_entry e;

	memset(&e, 0, sizeof(e));
	snprintf(e.prefix, sizeof(e.prefix), "%s", prefix);
	snprintf(e.cluster, sizeof(e.cluster), "%s", cluster);
	if (draining != NULL) {
		snprintf(e.draining[0], sizeof(e.draining[0]), "%s", draining);
		e.ndraining = 1;
	}
	return e;
}

static const char *
owner(const struct cmap *m, const char *tube)
{
	const struct cmap_entry *e = cmap_lookup(m, tube, strlen(tube));

	return e != NULL ? e->cluster : NULL;
}

/* The longest prefix wins; the default takes the rest; without a
 * default a tube is unmapped. */
static void
test_longest_prefix(void **state)
{
	struct cmap m;
	struct cmap_entry e;

	(void)state;
	cmap_init(&m);
	assert_null(owner(&m, "emails"));
	e = entry("billing.", "c2", NULL);
	assert_int_equal(cmap_put(&m, &e), 0);
	e = entry("emails", "c1", NULL);
	assert_int_equal(cmap_put(&m, &e), 0);
	e = entry("billing.eu.", "c3", "c2");
	assert_int_equal(cmap_put(&m, &e), 0);
	assert_string_equal(owner(&m, "billing.us"), "c2");
	assert_string_equal(owner(&m, "billing.eu.1"), "c3");
	assert_string_equal(owner(&m, "billing.eu"), "c2");
	assert_string_equal(owner(&m, "emails"), "c1");
	assert_string_equal(owner(&m, "emails-2"), "c1");
	assert_null(owner(&m, "reports"));
	assert_null(owner(&m, "billing"));
	e = entry("", "c9", NULL);
	assert_int_equal(cmap_put(&m, &e), 0);
	assert_string_equal(owner(&m, "reports"), "c9");
	assert_string_equal(owner(&m, "billing"), "c9");
	/* a prefix set again is replaced, not added */
	e = entry("emails", "c4", NULL);
	assert_int_equal(cmap_put(&m, &e), 0);
	assert_int_equal(m.n, 4);
	assert_string_equal(owner(&m, "emails"), "c4");
	/* sorted by prefix */
	for (size_t i = 1; i < m.n; i++)
		assert_true(strcmp(m.e[i - 1].prefix, m.e[i].prefix) < 0);
	cmap_free(&m);
}

/* Each bad entry is refused with its own error, the map untouched. */
static void
test_bad_entries(void **state)
{
	struct cmap m;
	struct cmap_entry e;

	(void)state;
	cmap_init(&m);
	e = entry("bad tube", "c1", NULL);
	assert_int_equal(cmap_put(&m, &e), SLUICE_ETUBE);
	e = entry("ok", "bad name", NULL);
	assert_int_equal(cmap_put(&m, &e), SLUICE_EINVAL);
	e = entry("ok", "", NULL);
	assert_int_equal(cmap_put(&m, &e), SLUICE_EINVAL);
	e = entry("ok", "c1", "c1"); /* the owner draining itself */
	assert_int_equal(cmap_put(&m, &e), SLUICE_EINVAL);
	e = entry("ok", "c1", "no/slash");
	assert_int_equal(cmap_put(&m, &e), SLUICE_EINVAL);
	assert_int_equal(m.n, 0);
	cmap_free(&m);
}

/* The detail of a moved error: formatted, parsed back, whole URLs only
 * when they do not fit. */
static void
test_moved_detail(void **state)
{
	char d[MSG_URL_MAX + 1], cl[MSG_NODE_MAX + 1], urls[MSG_URL_MAX + 1];
	char *many = malloc(2000);
	uint64_t rev;

	(void)state;
	cmap_moved_detail(d, sizeof(d), "c2", 17, "tcp://a:1,tcp://b:2");
	assert_string_equal(d, "c2 17 tcp://a:1,tcp://b:2");
	assert_true(
	    cmap_moved_parse(d, strlen(d), cl, &rev, urls, sizeof(urls)));
	assert_string_equal(cl, "c2");
	assert_int_equal(rev, 17);
	assert_string_equal(urls, "tcp://a:1,tcp://b:2");
	cmap_moved_detail(d, sizeof(d), "c2", 0, "");
	assert_string_equal(d, "c2 0 ");
	assert_true(
	    cmap_moved_parse(d, strlen(d), cl, &rev, urls, sizeof(urls)));
	assert_string_equal(urls, "");
	/* 40 URLs of 30 bytes: cut at a URL's end, within MSG_URL_MAX */
	many[0] = '\0';
	for (int i = 0; i < 40; i++)
		sprintf(many + strlen(many), "%stcp://10.0.0.%02d:77110000000",
		    i ? "," : "", i);
	cmap_moved_detail(d, sizeof(d), "c2", 5, many);
	assert_true(strlen(d) <= MSG_URL_MAX);
	assert_true(d[strlen(d) - 1] == '0');
	assert_true(
	    cmap_moved_parse(d, strlen(d), cl, &rev, urls, sizeof(urls)));
	assert_true(strncmp(urls, many, strlen(urls)) == 0);
	assert_true(many[strlen(urls)] == ',');
	free(many);
	/* not a detail */
	assert_false(cmap_moved_parse("c2", 2, cl, &rev, urls, sizeof(urls)));
	assert_false(
	    cmap_moved_parse("c2 x y", 6, cl, &rev, urls, sizeof(urls)));
	assert_false(
	    cmap_moved_parse("a b 1 x", 7, cl, &rev, urls, sizeof(urls)));
	assert_false(cmap_moved_parse(" 1 x", 4, cl, &rev, urls, sizeof(urls)));
}

/* A map with its clusters, through a map reply and back. */
static void
test_map_reply_round_trip(void **state)
{
	const char *const c1[] = { "tcp://b:1", "tcp://a:1" };
	struct cmap m, back;
	struct cmap_entry e;
	struct msg_rep rep = { .op = MSG_OP_MAP }, d;
	struct buf b;

	(void)state;
	cmap_init(&m);
	buf_init(&b);
	m.revision = 42;
	e = entry("", "c1", NULL);
	assert_int_equal(cmap_put(&m, &e), 0);
	e = entry("b.", "c2", "c1");
	assert_int_equal(cmap_put(&m, &e), 0);
	assert_int_equal(cmap_set_cluster(&m, "c1", "tcp://a:1", c1, 2), 0);
	assert_int_equal(cmap_set_cluster(&m, "c2", "", NULL, 0), 0);
	/* the leader first, each member once */
	assert_string_equal(
	    cmap_cluster(&m, "c1")->urls, "tcp://a:1,tcp://b:1");
	assert_int_equal(cmap_to_msg(&m, "c1", &rep.map), 0);
	assert_int_equal(msg_encode_rep(&b, &rep), 0);
	cmap_msg_free(&rep.map);
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &d), 0);
	assert_int_equal(d.map.revision, 42);
	assert_int_equal(d.map.cluster.len, 2);
	assert_int_equal(cmap_from_msg(&back, &d.map), 0);
	assert_int_equal(back.revision, 42);
	assert_int_equal(back.n, 2);
	assert_memory_equal(back.e, m.e, 2 * sizeof(*m.e));
	assert_int_equal(back.nclusters, 2);
	assert_string_equal(
	    cmap_cluster(&back, "c1")->urls, "tcp://a:1,tcp://b:1");
	assert_string_equal(cmap_cluster(&back, "c1")->leader, "tcp://a:1");
	assert_string_equal(cmap_cluster(&back, "c2")->urls, "");
	/* every shorter prefix is truncated, never a success */
	for (size_t len = 0; len < b.len; len++) {
		void *p = malloc(len ? len : 1);

		memcpy(p, b.data, len);
		assert_int_not_equal(msg_decode_rep(p, len, NULL, &d), 0);
		free(p);
	}
	cmap_free(&back);
	cmap_free(&m);
	buf_fini(&b);
}

/* The HTTP URLs a cluster's nodes publish: the leader's first, each
 * member once, kept by a copy and by a new set of client URLs, dropped by
 * the free; none for a cluster the map has not added. */
static void
test_cluster_http(void **state)
{
	const char *const urls[] = { "tcp://b:1", "tcp://a:1", "tcp://c:1" };
	const char *const http[] = { "http://b:2", "http://a:2", "" };
	struct cmap m, copy;

	(void)state;
	cmap_init(&m);
	assert_int_equal(
	    cmap_set_http(&m, "c1", "http://a:2", http, 3), SLUICE_ENOTFOUND);
	assert_int_equal(cmap_set_cluster(&m, "c1", "tcp://a:1", urls, 3), 0);
	assert_null(cmap_cluster(&m, "c1")->http);
	assert_int_equal(cmap_set_http(&m, "c1", "http://a:2", http, 3), 0);
	assert_string_equal(
	    cmap_cluster(&m, "c1")->http, "http://a:2,http://b:2");
	assert_int_equal(cmap_set_cluster(&m, "c1", "tcp://b:1", urls, 3), 0);
	assert_string_equal(
	    cmap_cluster(&m, "c1")->http, "http://a:2,http://b:2");
	assert_int_equal(cmap_set_cluster(&m, "c2", "", NULL, 0), 0);
	assert_int_equal(cmap_set_http(&m, "c2", "", NULL, 0), 0);
	assert_string_equal(cmap_cluster(&m, "c2")->http, "");
	assert_int_equal(cmap_copy(&copy, &m), 0);
	cmap_free(&m);
	assert_string_equal(
	    cmap_cluster(&copy, "c1")->http, "http://a:2,http://b:2");
	assert_string_equal(cmap_cluster(&copy, "c2")->http, "");
	cmap_free(&copy);
}

/* map_set and map_delete: each bad field refused by the encoder and the
 * decoder with its own error. */
static void
test_map_set_errors(void **state)
{
	struct msg_req q = { .op = MSG_OP_MAP_SET }, d;
	struct buf b;

	(void)state;
	buf_init(&b);
	q.map_set.prefix = S("billing.");
	q.map_set.cluster = S("c2");
	q.map_set.ndraining = 1;
	q.map_set.draining[0] = S("c1");
	assert_int_equal(msg_encode_req(&b, &q), 0);
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &d), 0);
	assert_int_equal(d.map_set.ndraining, 1);
	assert_int_equal(d.map_set.prefix.len, 8);
	assert_memory_equal(d.map_set.draining[0].p, "c1", 2);
	assert_true(msg_req_idempotent(&q));
	buf_reset(&b);
	q.map_set.prefix = S("bad prefix");
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_ETUBE);
	q.map_set.prefix = S("");
	q.map_set.cluster = S("c 2");
	buf_reset(&b);
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_EINVAL);
	q.map_set.cluster = S("c2");
	q.map_set.ndraining = MSG_MAP_DRAINING_MAX + 1;
	buf_reset(&b);
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_ELIMIT);
	/* the decoder: a cluster name with a space, by hand */
	buf_reset(&b);
	assert_int_equal(
	    msg_encode_req(&b,
	        &(struct msg_req) { .op = MSG_OP_MAP_SET,
	            .map_set = { .prefix = S(""), .cluster = S("c2") } }),
	    0);
	b.data[b.len - 2] = ' '; /* "c2" -> " 2" */
	assert_int_equal(
	    msg_decode_req(b.data, b.len, NULL, &d), SLUICE_EINVAL);
	/* map_delete: the default prefix is 0 bytes */
	buf_reset(&b);
	assert_int_equal(msg_encode_req(&b,
	                     &(struct msg_req) { .op = MSG_OP_MAP_DELETE,
	                         .map_prefix = S("") }),
	    0);
	assert_int_equal(b.len, 6);
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &d), 0);
	assert_int_equal(d.map_prefix.len, 0);
	assert_false(msg_req_idempotent(&d));
	assert_string_equal(msg_op_name(MSG_OP_MAP), "map");
	assert_string_equal(msg_op_name(MSG_OP_MAP_SET), "map_set");
	assert_string_equal(msg_op_name(MSG_OP_MAP_DELETE), "map_delete");
	assert_string_equal(sluice_errname(SLUICE_EMOVED), "moved");
	buf_fini(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_longest_prefix),
		cmocka_unit_test(test_bad_entries),
		cmocka_unit_test(test_moved_detail),
		cmocka_unit_test(test_map_reply_round_trip),
		cmocka_unit_test(test_cluster_http),
		cmocka_unit_test(test_map_set_errors),
	};

	return cmocka_run_group_tests_name("cmap", tests, NULL, NULL);
}
