/* wd - a headless Chromium (Debian's chromium) driven through
 * chromedriver's WebDriver API (Debian's chromium-driver), for the tests
 * of the dashboard: one chromedriver for a test program (wd_start, once;
 * wd_stop at its end), sessions opened and closed by the tests, and the
 * commands the tests use: go to a URL, run a script, wait (bounded) until
 * a script is true, find and click an element, type, answer a dialog,
 * take a screenshot. Every wait is bounded (WD_WAIT_MS). */
#ifndef SLUICE_IT_WD_H
#define SLUICE_IT_WD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

enum { WD_WAIT_MS = 20000 };

/* chromium's path (wd_found), and the arguments every browser gets. */
extern char wd_chromium[1024];
extern const char *const wd_browser_args[];
extern const size_t wd_nbrowser_args;

/* Whether chromium and chromedriver are installed (their paths kept);
 * false after printing which is not (the test then exits 77). */
bool wd_found(void);

/* Starts chromedriver, its log in `dir`/chromedriver.log, unless it runs
 * already; wd_stop stops it and the browsers it started. */
void wd_start(const char *dir);
void wd_stop(void);

/* A WebDriver command; its status and answer (to free). */
int wd(const char *method, const char *path, const char *json, char **out);

/* A new browser session (1200 x 900); its id into sid. wd_end closes it. */
void wd_session(char *sid, size_t cap);

/* The same in two steps, for a test with other things to do while the
 * browser starts (seconds, on a busy machine): wd_session_begin asks
 * for it on a thread of its own (after wd_start), wd_session_wait
 * waits for the answer and puts the id into sid, as wd_session does.
 * wd_session_join only waits for the thread (a test's teardown, after
 * wd_stop, for a test that failed in between). */
struct wd_pending {
	pthread_t th;
	bool started;
	char caps[2048];
	int status;
	char *body;
};
void wd_session_begin(struct wd_pending *p);
void wd_session_wait(struct wd_pending *p, char *sid, size_t cap);
void wd_session_join(struct wd_pending *p);
void wd_end(const char *sid);

void wd_go(const char *sid, const char *url);

/* `script` (JavaScript, no double quote unless escaped for JSON) run in
 * the page: its answer's body (to free). */
char *wd_js(const char *sid, const char *script);

/* Waits (bounded) until `script` returns true in the page. */
void wd_until(const char *sid, const char *script);

/* The number `script` returns. */
double wd_num(const char *sid, const char *script);

/* The element `css`, waited for (bounded): its id. */
void wd_find(const char *sid, const char *css, char *eid, size_t cap);

/* Clicks `css`, found again when the page re-rendered it meanwhile. */
void wd_click(const char *sid, const char *css);

/* Types `text` (WebDriver's keys: \\uE007 is Enter) into `css`. */
void wd_type(const char *sid, const char *css, const char *text);

/* `url` loaded, waited (bounded) until `ready` is true: its DOM as HTML
 * (to free), as chromium --dump-dom would print it. */
char *wd_dom(const char *sid, const char *url, const char *ready);

/* The confirmation dialog, waited for (bounded), says `want`; accepted. */
void wd_confirm(const char *sid, const char *want);

/* A screenshot of the page as `name`.png: into $SLUICE_SCREENSHOTS when
 * set, else into `dir`. Asserted to be a PNG. */
void wd_shot(const char *dir, const char *sid, const char *name);

#endif
