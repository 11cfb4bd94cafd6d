/* cli_vars - a taken task as the SLUICE_* variables a shell worker sees,
 * for `take --sh` and `work` alike (see cli_vars.h for the rules).
 *
 * Each variable is built once as "NAME=value" (what an environment holds);
 * --sh prints the same entries with the value quoted for sh. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "cli_vars.h"

const char *const cli_vars_names[CLI_VARS_MAX + 1] = { "SLUICE_TASK_ID",
	"SLUICE_LEASE", "SLUICE_TUBE", "SLUICE_ATTEMPTS", "SLUICE_PAYLOAD_SIZE",
	"SLUICE_PAYLOAD", "SLUICE_PAYLOAD_BASE64", NULL };

/* Adds NAME=value, the value written by `fn` (or the `len` bytes at `p`
 * when `fn` is NULL). */
static int
add(struct cli_vars *v, const char *name, const void *p, size_t len,
    void (*fn)(FILE *, const void *, size_t))
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (f == NULL)
		return -ENOMEM;
	fprintf(f, "%s=", name);
	if (fn != NULL)
		fn(f, p, len);
	else
		fwrite(p, 1, len, f);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	v->entry[v->n++] = buf;
	return 0;
}

static int
add_u64(struct cli_vars *v, const char *name, uint64_t n)
{
	char num[24];

	snprintf(num, sizeof(num), "%" PRIu64, n);
	return add(v, name, num, strlen(num), NULL);
}

int
cli_vars_of(struct cli_vars *v, const struct sluice_task *t)
{
	const char *p = t->payload;
	size_t len = t->payload_len;
	int rc;

	memset(v, 0, sizeof(*v));
	if ((rc = add_u64(v, "SLUICE_TASK_ID", t->id)) != 0 ||
	    (rc = add_u64(v, "SLUICE_LEASE", t->lease)) != 0 ||
	    (rc = add(v, "SLUICE_TUBE", t->tube, strlen(t->tube), NULL)) != 0 ||
	    (rc = add_u64(v, "SLUICE_ATTEMPTS", t->attempts)) != 0 ||
	    (rc = add_u64(v, "SLUICE_PAYLOAD_SIZE", len)) != 0)
		goto fail;
	if (len > CLI_VARS_PAYLOAD_MAX)
		return 0;
	if (cli_utf8_valid(p, len) && memchr(p, '\0', len) == NULL)
		rc = add(v, "SLUICE_PAYLOAD", p, len, NULL);
	else
		rc = add(v, "SLUICE_PAYLOAD_BASE64", p, len, cli_base64);
	if (rc == 0)
		return 0;
fail:
	cli_vars_free(v);
	return rc;
}

void
cli_vars_free(struct cli_vars *v)
{
	for (int i = 0; i < v->n; i++)
		free(v->entry[i]);
	v->n = 0;
}

bool
cli_vars_is_ours(const char *entry)
{
	for (int i = 0; cli_vars_names[i] != NULL; i++) {
		size_t n = strlen(cli_vars_names[i]);

		if (strncmp(entry, cli_vars_names[i], n) == 0 &&
		    entry[n] == '=')
			return true;
	}
	return false;
}

void
cli_vars_print_sh(FILE *f, const struct cli_vars *v)
{
	fputs("unset", f);
	for (int i = 0; cli_vars_names[i] != NULL; i++)
		fprintf(f, " %s", cli_vars_names[i]);
	fputc('\n', f);
	for (int i = 0; v != NULL && i < v->n; i++) {
		const char *e = v->entry[i], *eq = strchr(e, '=');

		/* the value in single quotes, a quote inside as '\'' */
		fprintf(f, "%.*s='", (int)(eq - e), e);
		for (const char *p = eq + 1; *p != '\0'; p++) {
			if (*p == '\'')
				fputs("'\\''", f);
			else
				fputc(*p, f);
		}
		fputs("'\n", f);
	}
}
