/* json - sluice's results as JSON, exactly as `sluice ... --json` prints
 * them (field names in docs/client.md): stats, tasks, error groups. The
 * command-line tool and the server's HTTP face (/stats, the admin page's
 * API) both print through here, so the two never drift apart.
 *
 * Pure: writes to the FILE it is given (a memory stream in the server),
 * nothing else; works on the public result types of sluice.h. Strings
 * are escaped per RFC 8259; bytes that are not UTF-8 become U+FFFD. */
#ifndef SLUICE_JSON_JSON_H
#define SLUICE_JSON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sluice.h"

/* The length of the valid UTF-8 sequence at `p` (of at most `left` bytes,
 * left >= 1), or 0 when it is not one. */
size_t json_utf8_seq(const unsigned char *p, size_t left);

/* True when `len` bytes at `p` are valid UTF-8 (no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
bool json_utf8_valid(const void *p, size_t len);

/* `len` bytes as a JSON string, quotes included. */
void json_str(FILE *f, const void *p, size_t len);

/* json_str of a C string, or `null` for NULL. */
void json_cstr(FILE *f, const char *s);

/* Standard base64 (RFC 4648, with padding) of `len` bytes. */
void json_base64(FILE *f, const void *p, size_t len);

/* "leader", "follower" or "unknown". */
const char *json_role_name(int role);

/* A cluster member's: "follower", "leader", "candidate", "fenced" or
 * "unknown". */
const char *json_node_role_name(int role);

/* One task: {"id":N,"lease":N,"tube":"t","state":"ready","payload":...}
 * ("payload_base64" when the bytes are not UTF-8, null when omitted;
 * "session":N,"peer":"addr"|null when a session holds its lease). */
void json_task(FILE *f, const struct sluice_task *t);

/* What ack, release, fail, touch, bury, kick (of one) and update leave:
 * {"id":N,"state":"delayed","run_at":MS,"deadline":MS} (and
 * "replaced":true when a pending replacement took the task's place). */
void json_after(FILE *f, const struct sluice_after *a);

/* One schedule: {"name":"n","tube":"t","cron":"0 2 * * *","tz":"UTC",
 * "catch_up":"one","paused":false,...,"next_at":MS,...,"payload":...}
 * ("payload":null when it was left out); and {"schedules":[...]}. */
void json_schedule(FILE *f, const struct sluice_schedule *s);
void json_schedules(FILE *f, const struct sluice_schedule *s, size_t n);

/* {"tasks":[...]} */
void json_tasks(FILE *f, const struct sluice_task *t, size_t n);
/* A page of a list in id order: its tasks and "next", the cursor of the
 * page after it (the last id of a full page) or null at the end. */
void json_tasks_page(
    FILE *f, const struct sluice_task *t, size_t n, uint64_t next);

/* {"role":"leader","epoch":N,...,"tubes":{...},"totals":{...},
 * "node":{...}} */
void json_stats(FILE *f, const struct sluice_stats *s);

/* A tube's settings: {"tube":"t" (when `tube` is not NULL),"ttr_ms":N,
 * "max_attempts":N,"backoff_base_ms":N,"backoff_cap_ms":N,
 * "keep_done_ms":N,"lost_lease":"immediate"|"backoff","dead_letter":"t"
 * or null,"own":["ttr",...]} - the values in force, and which of them
 * the tube sets itself. */
void json_tube_conf(
    FILE *f, const char *tube, const struct sluice_tube_conf *c);

/* The same with the tube's flow limits last, when it has any (`l` NULL
 * or l->set 0: none written, the settings' object as before):
 * ...,"limits":{"rate":"100/s" or null,"burst":N or null,
 * "concurrency":N or null,"tokens":N,"taken":N,"held":N}} */
void json_tube_conf_limits(FILE *f, const char *tube,
    const struct sluice_tube_conf *c, const struct sluice_limits *l);

/* {"rate":...,"held":N} alone, as in json_tube_conf_limits. */
void json_limits(FILE *f, const struct sluice_limits *l);

/* The names of the settings, in SLUICE_TS_* bit order: "ttr",
 * "max_attempts", "backoff", "keep_done", "lost_lease", "dead_letter". */
extern const char *const json_tube_fields[6];

/* {"errors":[{"error":"text","count":N,"ids":[ID,...]},...]}: ids, up to
 * 3 example tasks, lowest first. */
void json_errors(FILE *f, const struct sluice_error_count *e, size_t n);

/* {"groups":[{"group":G,"ready":N,"taken":N,"oldest_ready_ms":N,
 * "tube":T},...],"total":N}: a tube's fair groups by backlog (group null:
 * the tasks put without one); total counts every group, listed or not. */
void json_groups(
    FILE *f, const struct sluice_group *g, size_t n, uint64_t total);

/* {"hours":[{"start":MS,"acks":N,"fails":N,"buries":N,"ttr_expired":N,
 * "work":DIST,"wait":DIST},...]}, DIST = {"count":N,"total_ms":N,
 * "avg_ms":N,"max_ms":N,"p50_ms":N,"p99_ms":N} (avg rounded down). */
void json_hours(FILE *f, const struct sluice_hour *h, size_t n);

/* {"start":MS,"step_ms":N,"puts":[...],"takes":[...],"acks":[...],
 * "fails":[...],"buries":[...],"ttr_expired":[...]}: n counts each,
 * oldest first; slot i starts at start + i * step_ms. */
void json_history(FILE *f, const struct sluice_history *h);

/* {"cluster":"c","node":"n","leader":"a"|null,"ttl_ms":N,
 * "etcd_error":"text"|null,"members":[{"name":"a","role":"leader",
 * "client_url":"u"|null,"repl_url":"u"|null,"sync":false,"lease":true,
 * "epoch":N,"durable_lsn":N,"lag_records":N,"lease_until":MS,
 * "age_ms":N},...]} */
void json_cluster(FILE *f, const struct sluice_cluster *c);

/* Whether member `m` is down: its key not refreshed for
 * SLUICE_MEMBER_DOWN_MS, or no URL (a member of the sync set whose key is
 * gone and that the node never saw). */
bool json_member_down(const struct sluice_member *m);

/* No newline is written after any of them. */

/* ---- reading: a bound before a parser builds anything ------------------ */

/* Whether the JSON text of `len` bytes at `p` is small enough in values
 * to be parsed: at most `max_values` values (an array, an object, a
 * member, an element: each comma and each opening counts one) nested at
 * most `max_depth` deep. A parser spends tens of bytes on each value,
 * so `[0,0,...]` of 16 MB would cost some 225 MB: with this bound a
 * parse costs about the text's size plus max_values times that. A scan
 * of the bytes (strings skipped), linear, allocating nothing; it does not
 * validate (the parser does). */
bool json_within(
    const void *p, size_t len, size_t max_values, unsigned max_depth);

#endif
