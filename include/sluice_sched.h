/* sluice_sched.h - the calls of libsluice that keep schedules: a cron
 * expression in a time zone that puts a task into a tube at each of its
 * slots (docs/queue.md, "Schedules").
 *
 * Part of sluice.h, which includes it: include <sluice.h>, never this
 * file alone (it uses sluice.h's types and SLUICE_API). */
#ifndef SLUICE_SCHED_H
#define SLUICE_SCHED_H

/* A schedule's options; a NULL options pointer means the defaults
 * (priority 1024), a zero field its default (but priority 0 is 0). */
struct sluice_schedule_opts {
	const char *tz;        /* a zoneinfo name ("Europe/Paris"); NULL: UTC */
	const char *catch_up;  /* slots missed while no leader ran: "none"
	                          (skipped), "one" (the last fires; NULL: the
	                          default), "all" (each fires, at most 1,000) */
	uint32_t priority;     /* of each task (0: the most urgent) */
	uint64_t ttr_ms;       /* of each task; 0: the server's default */
	uint32_t max_attempts; /* of each task; 0: unlimited */
	int paused;            /* 1: set paused (no slot fires until resumed) */
};

/* A schedule as the server holds it. Strings and payload live in the
 * same allocation as the struct (one sluice_schedule_free()). */
struct sluice_schedule {
	const char *name;
	const char *tube;
	const char *cron;
	const char *tz;       /* "UTC" when none was given */
	const char *catch_up; /* "none", "one", "all" */
	int paused;
	uint32_t priority;
	uint64_t ttr_ms;
	uint32_t max_attempts;
	uint64_t created_at; /* unix ms */
	uint64_t updated_at;
	uint64_t next_at;    /* unix ms of its next slot; 0: none (paused) */
	uint64_t last_slot;  /* the last slot that put a task; 0: none yet */
	uint64_t last_id;    /* that task's id */
	uint64_t fired;      /* slots that put a task */
	uint64_t skipped;    /* slots decided without one (missed, or the
	                        slot's key taken in the tube) */
	size_t size;         /* the payload's size */
	const void *payload; /* NULL when left out (sluice_schedule_list) */
	size_t payload_len;
};

/* Creates or replaces schedule `name` (1-64 bytes of [A-Za-z0-9_.:/-]):
 * at each slot of `cron` ("M H DOM MON DOW", or @hourly, @daily, ...;
 * local times of opts->tz) a task with `payload` is put into `tube`, its
 * key "NAME@YYYY-MM-DDTHH:MMZ" (the slot in UTC). Slots after now fire;
 * each fires once, across restarts and failovers. Returns 0 and, when
 * `out` is not NULL, the schedule (free with sluice_schedule_free());
 * SLUICE_ESCHED (a cron expression the server refuses, naming the field
 * and the value; an unknown time zone; a bad name: sluice_errmsg() says
 * which), SLUICE_ETUBE, SLUICE_ETOOBIG, SLUICE_EINVAL (catch_up),
 * SLUICE_ELIMIT (10,000 schedules). Nothing changes on error. */
SLUICE_API int sluice_schedule_set(struct sluice_client *c, const char *name,
    const char *tube, const char *cron, const void *payload, size_t len,
    const struct sluice_schedule_opts *opts, struct sluice_schedule **out);

/* Every schedule, by name, without payloads: `*out` (an array of `*n`,
 * free with sluice_schedule_free(); NULL when none). */
SLUICE_API int sluice_schedule_list(
    struct sluice_client *c, struct sluice_schedule **out, size_t *n);

/* One schedule with its payload; SLUICE_ENOTFOUND. */
SLUICE_API int sluice_schedule_show(
    struct sluice_client *c, const char *name, struct sluice_schedule **out);

/* Pauses (no slot fires) or resumes a schedule (the slots of the pause
 * are skipped: those after the resume fire); deletes one (the tasks it
 * put stay). SLUICE_ENOTFOUND. */
SLUICE_API int sluice_schedule_pause(struct sluice_client *c, const char *name);
SLUICE_API int sluice_schedule_resume(
    struct sluice_client *c, const char *name);
SLUICE_API int sluice_schedule_delete(
    struct sluice_client *c, const char *name);

/* Frees what sluice_schedule_set, _list or _show returned; NULL is fine. */
SLUICE_API void sluice_schedule_free(struct sluice_schedule *s);

#endif
