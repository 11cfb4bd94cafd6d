/* fuzz_auth - what --auth reads from others, on arbitrary bytes.
 *
 * The first byte picks the input (odd: a wire request, as 'q' in the
 * corpus; even: a token file, as 'f'), the rest is it.
 *
 * A request that decodes as auth carries 1..MSG_TOKEN_MAX bytes inside
 * the message, encodes again to the same bytes, and the server's lookup
 * (SHA-256, compared with every line in constant time) finds a line of a
 * fixed table exactly when the token is that line's token: no near miss
 * passes, no listed token fails.
 *
 * A token file that parses has what util/tokens.h promises of every line (a
 * name of 1..TOKENS_NAME_MAX bytes, unique; a known role; a pattern whose
 * prefix fits it) and each line's hash finds that line; one that does not
 * parse leaves the table empty and says why. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/msg.h"
#include "util/tokens.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(int cond)
{
	if (!cond)
		abort();
}

/* The table the requests' tokens are looked up in. */
static const char *const known[] = { "s3cret", "adm-secret", "rep-secret" };
enum { NKNOWN = sizeof(known) / sizeof(known[0]) };

static const struct tokens *
table(void)
{
	static struct tokens a;
	static int ready;
	static const char *const lines[NKNOWN] = { "app worker emails*",
		"ops admin *", "node-b replica *" };
	char text[1024], err[TOKENS_ERR_MAX];
	size_t len = 0;

	if (ready)
		return &a;
	for (int i = 0; i < NKNOWN; i++) {
		uint8_t h[TOKENS_HASH_LEN];

		tokens_sha256(known[i], strlen(known[i]), h);
		len += (size_t)snprintf(
		    text + len, sizeof(text) - len, "%s ", lines[i]);
		for (int k = 0; k < TOKENS_HASH_LEN; k++)
			len += (size_t)snprintf(
			    text + len, sizeof(text) - len, "%02x", h[k]);
		text[len++] = '\n';
	}
	check(tokens_parse("fuzz", text, len, &a, err) == 0 && a.n == NKNOWN);
	ready = 1;
	return &a;
}

static void
request(const uint8_t *p, size_t len)
{
	const struct tokens_entry *t;
	struct msg_req q;
	struct buf b;
	int want = -1;

	if (msg_decode_req(p, len, NULL, &q) != 0 || q.op != MSG_OP_AUTH)
		return;
	check(q.token.len >= 1 && q.token.len <= MSG_TOKEN_MAX);
	check((const uint8_t *)q.token.p >= p &&
	    (const uint8_t *)q.token.p + q.token.len <= p + len);
	buf_init(&b);
	check(msg_encode_req(&b, &q) == 0);
	check(b.len == len && memcmp(b.data, p, len) == 0);
	buf_fini(&b);

	for (int i = 0; i < NKNOWN; i++)
		if (strlen(known[i]) == q.token.len &&
		    memcmp(known[i], q.token.p, q.token.len) == 0)
			want = i;
	t = tokens_find(table(), q.token.p, q.token.len);
	check((t != NULL) == (want >= 0));
	check(t == NULL || t == &table()->v[want]);
}

static void
token_file(const uint8_t *p, size_t len)
{
	struct tokens a = { 0 };
	char err[TOKENS_ERR_MAX] = "";

	if (tokens_parse("fuzz", (const char *)p, len, &a, err) != 0) {
		check(a.n == 0 && a.v == NULL);
		check(err[0] != '\0' && memchr(err, '\0', sizeof(err)) != NULL);
		return;
	}
	for (size_t i = 0; i < a.n; i++) {
		const struct tokens_entry *t = &a.v[i];
		size_t n = strnlen(t->name, sizeof(t->name));

		check(n >= 1 && n <= TOKENS_NAME_MAX);
		check(t->role >= TOKENS_PRODUCER && t->role < TOKENS_ROLE_END_);
		check(t->prefix_len == SIZE_MAX ||
		    t->prefix_len < strnlen(t->tubes, sizeof(t->tubes)));
		for (size_t j = 0; j < i; j++)
			check(strcmp(a.v[j].name, t->name) != 0);
		check(tokens_find_hash(&a, t->hash) != NULL);
	}
	tokens_free(&a);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] % 2 == 0)
		token_file(data + 1, size - 1);
	else
		request(data + 1, size - 1);
	return 0;
}
