/* cli_token - `sluice token new NAME ROLE TUBES`: a new random token for
 * sluiced --auth and the line of its token file, checked by the token
 * file's own parser (util/tokens.c). Talks to no server. */
#include <errno.h>
#include <sys/random.h>

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"
#include "util/tokens.h"

static const char token_usage[] =
    "usage: sluice token new NAME ROLE TUBES [--json]\n";
static const char token_help[] =
    "\nPrints a new random token (32 bytes, in hex) for sluiced --auth,\n"
    "and the line to add to its token file (the token's SHA-256 in place\n"
    "of the token): ROLE is producer, worker, admin, replica or monitor,\n"
    "TUBES `*`, a prefix and `*` (emails*) or one tube. Send SIGHUP to\n"
    "sluiced after changing the file. Talks to no server.\n\n"
    "      --json   print {\"token\":TOKEN,\"line\":LINE}\n";

static int
cmd_token(struct cli *cli, int argc, char **argv)
{
	char token[2 * 32 + 1], line[512], err[TOKENS_ERR_MAX];
	uint8_t raw[32], hash[TOKENS_HASH_LEN];
	struct tokens check;
	bool json = false;
	int rc, n;

	if ((rc = cli_simple_args(cli, argc, argv, 4, &json)) >= 0)
		return rc;
	if (strcmp(argv[optind], "new") != 0)
		return cli_usage_error(
		    cli, "unknown \"%s\" (token new)", argv[optind]);
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return cli_fail(cli, -errno, "token new: getrandom");
	for (size_t i = 0; i < sizeof(raw); i++)
		sprintf(token + 2 * i, "%02x", raw[i]);
	tokens_sha256(token, strlen(token), hash);
	n = snprintf(line, sizeof(line), "%s %s %s ", argv[optind + 1],
	    argv[optind + 2], argv[optind + 3]);
	for (size_t i = 0; i < sizeof(hash) && n > 0 && n < 400; i++)
		n += snprintf(
		    line + n, sizeof(line) - (size_t)n, "%02x", hash[i]);
	/* the server's own parser says whether the line is good */
	if (tokens_parse("line", line, strlen(line), &check, err) != 0)
		return cli_usage_error(cli, "%s", strchr(err, ' ') + 1);
	tokens_free(&check);
	if (json) {
		fputs("{\"token\":", stdout);
		cli_json_cstr(stdout, token);
		fputs(",\"line\":", stdout);
		cli_json_cstr(stdout, line);
		fputs("}\n", stdout);
	} else {
		printf("token: %s\nline:  %s\n", token, line);
	}
	return EXIT_OK;
}

CLI_COMMAND(token, cmd_token);
