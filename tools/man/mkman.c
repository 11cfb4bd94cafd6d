/* mkman - a program's man page, made at build time from its own help, so
 * that `man sluiced` cannot say anything `sluiced --help` does not:
 *
 *   mkman [--commands] PROGRAM OUT [SEE_ALSO...]
 *
 * runs `PROGRAM --help` and `PROGRAM --version`, and with --commands also
 * `PROGRAM WORD --help` for every word its help lists as a command (a
 * line "  WORD ..."; a word is a command when that prints PROGRAM WORD's
 * usage and exits 0), and writes the page to OUT in roff (man(7)),
 * section 1: NAME and SYNOPSIS from the usage and the sentence after it,
 * DESCRIPTION the rest of the help, COMMANDS one subsection each, SEE ALSO
 * the pages named.
 *
 * The help texts are laid out for a terminal by hand, and the page keeps
 * that layout where it matters: a line "  -x, --flag ARG  text" (an
 * option, with the deeper lines after it) becomes a tagged paragraph
 * whose text is filled; a short line ending in ':' at the margin (after a
 * blank or an indented line) a heading; other lines at the margin filled
 * prose; every other indented line (command lists, examples, code) is
 * kept as it is, unfilled. Text is escaped for roff ('\', '-', a leading
 * '.' or '\''), so the page renders without a warning. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
	OUT_MAX = 1 << 20,
	WORDS_MAX = 64,
	HEADING_MAX = 40, /* a heading is at most this long */
};

/* Runs argv; returns its exit status (-1 when it could not run) and its
 * standard output, malloc'd and NUL-ended, in `*out`. Its standard error
 * is dropped. */
static int
run(char *const argv[], char **out)
{
	size_t n = 0;
	int fds[2], status;
	char *b = malloc(OUT_MAX);
	pid_t pid;
	ssize_t r;

	*out = b;
	if (b == NULL || pipe(fds) != 0)
		return -1;
	b[0] = '\0';
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(fds[1], STDOUT_FILENO);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	while (n < OUT_MAX - 1 &&
	    ((r = read(fds[0], b + n, OUT_MAX - 1 - n)) > 0 ||
	        (r < 0 && errno == EINTR)))
		n += r > 0 ? (size_t)r : 0;
	b[n] = '\0';
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- roff ---------------------------------------------------------------
 */

/* Writes `n` bytes of text for roff: '\' as "\e", '-' as "\-" (an ASCII
 * hyphen-minus, as options are typed), '"' in a macro's argument as
 * "\(dq", a non-ASCII character as its "\[uXXXX]"; a leading '.' or '\''
 * behind "\&". */
static void
roff_text(FILE *f, const char *s, size_t n, bool arg)
{
	if (n > 0 && (s[0] == '.' || s[0] == '\''))
		fputs("\\&", f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\') {
			fputs("\\e", f);
		} else if (c == '-') {
			fputs("\\-", f);
		} else if (c == '"' && arg) {
			fputs("\\(dq", f);
		} else if (c >= 0x80) {
			/* UTF-8: 2 to 4 bytes; a stray byte as U+FFFD */
			unsigned cp = 0xfffd;
			size_t len = c >= 0xf0 ? 4
			    : c >= 0xe0        ? 3
			    : c >= 0xc0        ? 2
			                       : 1;

			if (len > 1 && i + len <= n) {
				cp = c & (0x7f >> len);
				for (size_t k = 1; k < len; k++)
					cp = cp << 6 |
					    ((unsigned char)s[i + k] & 0x3f);
				i += len - 1;
			}
			fprintf(f, "\\[u%04X]", cp);
		} else {
			fputc(c, f);
		}
	}
}

static size_t
indent_of(const char *line)
{
	return strspn(line, " ");
}

/* "  -x, --flag ARG  text" or "      --flag ARG": an option's line. */
static bool
is_option(const char *line)
{
	size_t in = indent_of(line);

	return in >= 2 && in <= 6 && line[in] == '-' && line[in + 1] != ' ';
}

enum mode { M_NONE, M_PROSE, M_VERB, M_OPT };

struct page {
	FILE *f;
	enum mode mode;
	bool para;     /* a blank line was seen: a new paragraph is due */
	bool nested;   /* in a command's subsection: headings are bold lines */
	size_t column; /* where most options' texts start (option_column) */
};

/* Ends the unfilled mode, if it was. */
static void
page_mode(struct page *p, enum mode m)
{
	if (p->mode == M_VERB && m != M_VERB)
		fputs(".fi\n", p->f);
	p->mode = m;
}

static void
page_heading(struct page *p, const char *line, size_t n)
{
	page_mode(p, M_NONE);
	if (n > 0 && line[n - 1] == ':')
		n--;
	fputs(p->nested ? ".PP\n.B \"" : ".SS \"", p->f);
	roff_text(p->f, line, n, true);
	fputs("\"\n", p->f);
	p->para = false;
}

/* Where the option's text starts in `line` (n bytes): after the first
 * run of two blanks; else, when the term fills its column, after the
 * blank just before the column where the help's options' texts start. */
static size_t
option_split(const char *line, size_t n, size_t column)
{
	size_t in = indent_of(line), t = in;

	while (t < n && !(line[t] == ' ' && t + 1 < n && line[t + 1] == ' '))
		t++;
	if (t == n && column > in + 1 && column < n &&
	    line[column - 1] == ' ' && line[column] != ' ')
		t = column - 1;
	return t;
}

/* The column most of the options' texts start at, in `text`. */
static size_t
option_column(const char *text)
{
	unsigned count[128] = { 0 };
	size_t best = 0;

	for (const char *line = text; *line != '\0';) {
		size_t n = strcspn(line, "\n"), in = indent_of(line), t;

		if (is_option(line)) {
			t = in;
			while (t + 1 < n &&
			    !(line[t] == ' ' && line[t + 1] == ' '))
				t++;
			t += strspn(line + t, " ");
			if (t < n && t < 128)
				count[t]++;
		}
		line += n + (line[n] == '\n');
	}
	for (size_t c = 1; c < 128; c++)
		if (count[c] > count[best])
			best = c;
	return best;
}

/* An option: the term in bold, up to its text (option_split); the text,
 * if any, filled. */
static void
page_option(struct page *p, const char *line, size_t n)
{
	size_t in = indent_of(line), t = option_split(line, n, p->column);
	const char *text;

	page_mode(p, M_OPT);
	fputs(".TP\n\\fB", p->f);
	roff_text(p->f, line + in, t - in, false);
	fputs("\\fR\n", p->f);
	text = line + t + strspn(line + t, " ");
	if (text < line + n) {
		roff_text(p->f, text, (size_t)(line + n - text), false);
		fputc('\n', p->f);
	}
	p->para = false;
}

/* The body of a help text: everything after its usage lines. */
static void
page_body(struct page *p, const char *text)
{
	const char *line, *next;
	bool prev_blank = true, prev_indented = false;
	size_t prev_in = 0;

	p->mode = M_NONE;
	p->para = true;
	p->column = option_column(text);
	for (line = text; *line != '\0'; line = next) {
		size_t n = strcspn(line, "\n"), in = indent_of(line);
		bool blank = in == n;

		next = line[n] == '\n' ? line + n + 1 : line + n;
		if (blank) {
			p->para = true;
			prev_blank = true;
			prev_indented = false;
			continue;
		}
		if (in == 0 && line[n - 1] == ':' && n <= HEADING_MAX &&
		    (prev_blank || prev_indented)) {
			page_heading(p, line, n);
		} else if (is_option(line) &&
		    !(p->mode == M_VERB && !p->para && in > prev_in)) {
			/* (under a line kept as it is, deeper: kept too) */
			page_option(p, line, n);
		} else if (p->mode == M_OPT && !p->para && in > 6) {
			/* the option's text goes on */
			roff_text(p->f, line + in, n - in, false);
			fputc('\n', p->f);
		} else if (in == 0) {
			if (p->mode != M_PROSE || p->para) {
				page_mode(p, M_PROSE);
				fputs(".PP\n", p->f);
			}
			roff_text(p->f, line, n, false);
			fputc('\n', p->f);
		} else {
			if (p->mode != M_VERB || p->para) {
				page_mode(p, M_NONE);
				fputs(".PP\n.nf\n", p->f);
				p->mode = M_VERB;
			}
			roff_text(p->f, line, n, false);
			fputc('\n', p->f);
		}
		p->para = false;
		prev_blank = false;
		prev_indented = in > 0;
		prev_in = in;
	}
	page_mode(p, M_NONE);
}

/* The usage lines at the start of `help` ("usage: PROG ..." and the
 * lines under it, indented at least as deep as what follows "usage: "),
 * unfilled, "usage: " and that indent left out. Returns where the rest
 * starts. */
static const char *
page_usage(struct page *p, const char *help)
{
	const char *line = help;

	if (strncmp(line, "usage: ", 7) != 0)
		return help;
	fputs(".nf\n", p->f);
	for (bool first = true; *line != '\0'; first = false) {
		size_t n = strcspn(line, "\n"), in = indent_of(line);
		const char *s = line + 7;

		if (!first && (in < 7 || in == n))
			break;
		roff_text(p->f, s, (size_t)(line + n - s), false);
		fputc('\n', p->f);
		line += n + (line[n] == '\n');
	}
	fputs(".fi\n", p->f);
	return line;
}

/* ---- the page ------------------------------------------------------------
 */

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

/* The commands the help lists: the first word of each line "  WORD ..."
 * for which `PROGRAM WORD --help` prints PROGRAM WORD's usage. Their
 * helps go in `helps`; returns how many. */
static int
find_commands(char *prog, const char *name, const char *help, char words[][32],
    char **helps)
{
	int nw = 0;

	for (const char *line = help; *line != '\0';) {
		size_t n = strcspn(line, "\n");
		size_t w =
		    n > 2 ? strspn(line + 2, "abcdefghijklmnopqrstuvwxyz") : 0;
		char usage[128], *out = NULL;
		char *argv[] = { prog, words[nw], "--help", NULL };
		bool dup = false;

		if (nw < WORDS_MAX && indent_of(line) == 2 && w > 0 && w < 32 &&
		    line[2 + w] == ' ') {
			snprintf(words[nw], 32, "%.*s", (int)w, line + 2);
			for (int i = 0; i < nw; i++)
				dup = dup || strcmp(words[i], words[nw]) == 0;
			snprintf(usage, sizeof(usage), "usage: %s %s", name,
			    words[nw]);
			if (!dup && run(argv, &out) == 0 &&
			    strncmp(out, usage, strlen(usage)) == 0)
				helps[nw++] = out;
			else
				free(out);
		}
		line += n + (line[n] == '\n');
	}
	return nw;
}

int
main(int argc, char **argv)
{
	bool commands = argc > 1 && strcmp(argv[1], "--commands") == 0;
	char words[WORDS_MAX][32], *helps[WORDS_MAX], *help, *version;
	char *prog, *upper, *a_help[3], *a_version[3];
	const char *name, *rest, *ver, *out;
	struct page p = { 0 };
	size_t n;
	int nw = 0;

	if (argc < 3 + commands) {
		fprintf(stderr,
		    "usage: mkman [--commands] PROGRAM OUT [SEE_ALSO...]\n");
		return 2;
	}
	prog = argv[1 + commands];
	out = argv[2 + commands];
	name = base_name(prog);
	a_help[0] = a_version[0] = prog;
	a_help[1] = "--help";
	a_version[1] = "--version";
	a_help[2] = a_version[2] = NULL;
	if (run(a_help, &help) != 0 || strncmp(help, "usage: ", 7) != 0 ||
	    run(a_version, &version) != 0) {
		fprintf(stderr, "mkman: %s --help or --version failed\n", prog);
		return 1;
	}
	if (commands)
		nw = find_commands(prog, name, help, words, helps);
	if ((p.f = fopen(out, "w")) == NULL) {
		fprintf(stderr, "mkman: %s: %s\n", out, strerror(errno));
		return 1;
	}
	/* "sluiced 0.2.0": the version is the last word */
	version[strcspn(version, "\n")] = '\0';
	ver = strrchr(version, ' ') ? strrchr(version, ' ') + 1 : version;
	upper = strdup(name);
	for (char *c = upper; *c != '\0'; c++)
		if (*c >= 'a' && *c <= 'z')
			*c = (char)(*c - 'a' + 'A');
	fprintf(p.f,
	    ".\\\" %s(1): made from `%s --help` when sluice is built; the "
	    "text\n.\\\" lives in the program, not here.\n",
	    name, name);
	fputs(".TH ", p.f);
	roff_text(p.f, upper, strlen(upper), false);
	fprintf(p.f, " 1 \"\" \"sluice %s\" \"sluice\"\n", ver);
	/* ragged right, no hyphens: flags stay whole, as typed */
	fputs(".ad l\n.nh\n", p.f);
	fputs(".SH NAME\n", p.f);
	roff_text(p.f, name, strlen(name), false);
	fputs(" \\- ", p.f);

	/* SYNOPSIS: the usage; NAME's text: the sentence after it */
	{
		FILE *f = p.f;
		const char *s;

		p.f = tmpfile();
		if (p.f == NULL)
			return 1;
		rest = page_usage(&p, help);
		rest += strspn(rest, "\n");
		n = strcspn(rest, "\n");
		s = rest;
		if (n > 0 && s[n - 1] == '.')
			n--;
		if (n > 0 && s[0] >= 'A' && s[0] <= 'Z') {
			fputc(s[0] - 'A' + 'a', f);
			s++;
			n--;
		}
		roff_text(f, s, n, false);
		fputs("\n.SH SYNOPSIS\n", f);
		rewind(p.f);
		for (int c; (c = fgetc(p.f)) != EOF;)
			fputc(c, f);
		fclose(p.f);
		p.f = f;
	}
	fputs(".SH DESCRIPTION\n", p.f);
	page_body(&p, rest);
	if (nw > 0) {
		fputs(".SH COMMANDS\n", p.f);
		p.nested = true;
		for (int i = 0; i < nw; i++) {
			fprintf(p.f, ".SS \"");
			roff_text(p.f, name, strlen(name), true);
			fprintf(p.f, " %s\"\n", words[i]);
			page_body(&p, page_usage(&p, helps[i]));
			free(helps[i]);
		}
	}
	if (argc > 3 + commands) {
		fputs(".SH \"SEE ALSO\"\n", p.f);
		for (int i = 3 + commands; i < argc; i++) {
			fputs(".BR ", p.f);
			roff_text(p.f, argv[i], strlen(argv[i]), false);
			fprintf(p.f, " (1)%s\n", i + 1 < argc ? "," : "");
		}
	}
	free(upper);
	free(help);
	free(version);
	if (fclose(p.f) != 0) {
		fprintf(stderr, "mkman: %s: %s\n", out, strerror(errno));
		return 1;
	}
	return 0;
}
