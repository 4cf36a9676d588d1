/*
 * check_sched.c - the schedule over named points (harness/sched.h): the
 * point grammar, which points a protocol has, the [schedule] section's
 * errors (file:line), and the scheduler itself on real threads: a script's
 * order is enforced against threads that would run otherwise, a statement
 * that gets no answer is recorded as blocked and the others go on, a hold
 * whose actor never comes is abandoned (never a hang), PCT is a function of
 * its seed, a replay's entries come from a ledger in seq order, and a
 * replayed actor's wait runs before its grant (decision 66).
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../backends/protocol.h"
#include "../harness/clock.h"
#include "../harness/scenario.h"
#include "../harness/sched.h"

START_TEST(test_point_grammar)
{
    char msg[400];
    const char *good[] = {"claim.before", "claim.after", "claim.1", "claim.12", "reap.1",
                          "complete.commit", "fail.after", "renew.before", "effect.after",
                          "fault.kill_after_claim", "fault.lost_ack"};
    const char *bad[] = {"claim", "claim.0", "claim.x", "work.after", "effect.before",
                         "fault.nope", "claim.1x", "", "claim."};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        ck_assert_msg(qc_point_check(good[i], msg, sizeof msg) == 0, "%s: %s", good[i], msg);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        msg[0] = '\0';
        ck_assert_msg(qc_point_check(bad[i], msg, sizeof msg) != 0, "%s accepted", bad[i]);
        ck_assert_ptr_nonnull(strstr(msg, "expected"));
    }
}
END_TEST

START_TEST(test_point_of_event_names_what_the_worker_passes)
{
    char b[64];
    ck_assert_str_eq(qc_point_of_event("invoke", "claim", NULL, NULL, b, sizeof b),
                     "claim.before");
    ck_assert_str_eq(qc_point_of_event("ok", "complete", NULL, NULL, b, sizeof b),
                     "complete.after");
    ck_assert_str_eq(qc_point_of_event("info", "complete", NULL, NULL, b, sizeof b),
                     "complete.after");
    ck_assert_str_eq(qc_point_of_event("point", NULL, "reap.1", NULL, b, sizeof b), "reap.1");
    ck_assert_str_eq(qc_point_of_event("effect", NULL, NULL, NULL, b, sizeof b), "effect.after");
    ck_assert_str_eq(qc_point_of_event("fault", NULL, NULL, "lost_ack", b, sizeof b),
                     "fault.lost_ack");
    /* the enqueuer's, the monitor's and notes mark no point */
    ck_assert_ptr_null(qc_point_of_event("ok", "enqueue", NULL, NULL, b, sizeof b));
    ck_assert_ptr_null(qc_point_of_event("note", NULL, NULL, NULL, b, sizeof b));
    ck_assert_ptr_null(qc_point_of_event("monitor", NULL, NULL, NULL, b, sizeof b));
}
END_TEST

static const char *two_step_claim =
    "-- engine: postgres\n"
    "-- name: setup\nSELECT 1;\n"
    "-- name: teardown\nSELECT 1;\n"
    "-- name: enqueue\nSELECT 1 AS job_id;\n"
    "-- name: claim\n"
    "SELECT 1 AS job_id;\n"
    "UPDATE t SET x = 1 WHERE id = :job_id RETURNING id AS job_id, 't' AS token, "
    "1 AS lease_until_ms, 1 AS now_ms, 1 AS attempt, 'k' AS op_key, '' AS payload;\n"
    "-- name: complete\nUPDATE t SET x = 2 WHERE id = :job_id;\n"
    "-- name: snapshot\nSELECT 1 AS job_id, 'done' AS state, 1 AS attempt, 't' AS token;\n";

START_TEST(test_points_a_protocol_has)
{
    qc_protocol *p = NULL;
    qc_err err = {0};
    ck_assert_int_eq(qc_protocol_parse("two.sql", two_step_claim, QC_PARAM_DOLLAR, &p, &err), 0);
    ck_assert_int_eq(qc_point_in_protocol("claim.1", p, 0, 0), 1);
    ck_assert_int_eq(qc_point_in_protocol("claim.commit", p, 0, 0), 1);
    ck_assert_int_eq(qc_point_in_protocol("claim.2", p, 0, 0), 0);   /* the last statement */
    ck_assert_int_eq(qc_point_in_protocol("complete.1", p, 0, 0), 0); /* one statement */
    ck_assert_int_eq(qc_point_in_protocol("complete.commit", p, 0, 0), 0);
    ck_assert_int_eq(qc_point_in_protocol("complete.commit", p, 1, 0), 1); /* transaction model */
    ck_assert_int_eq(qc_point_in_protocol("reap.after", p, 0, 0), 0); /* no reap step */
    ck_assert_int_eq(qc_point_in_protocol("effect.after", p, 0, 0), 1);
    /* a claim of several statements is never wrapped: it has its own commit */
    ck_assert_int_eq(qc_claim_commit_held(p, 0, 1), 0);
    qc_protocol_destroy(p);
}
END_TEST

/* Decision 1128: leading SET statements (MariaDB's claim and reap start
 * with SET TRANSACTION ISOLATION LEVEL) are not counted: claim.1 is after
 * the SELECT, claim.2 after the UPDATE, and there is no claim.3; a SET
 * after a data statement counts; a step of SETs then one statement has no
 * numbered point. */
static const char *set_first_claim =
    "-- engine: mariadb\n"
    "-- name: setup\nSELECT 1;\n"
    "-- name: teardown\nSELECT 1;\n"
    "-- name: enqueue\nSELECT 1 AS job_id;\n"
    "-- name: claim\n"
    "SET TRANSACTION ISOLATION LEVEL READ COMMITTED;\n"
    "  /* a comment */ set @t = UUID();\n"
    "SELECT id AS job_id FROM t LIMIT 1 FOR UPDATE SKIP LOCKED;\n"
    "UPDATE t SET x = 1 WHERE id = :job_id;\n"
    "SELECT id AS job_id, 't' AS token, 1 AS lease_until_ms, 1 AS now_ms, 1 AS attempt, "
    "'k' AS op_key, '' AS payload FROM t WHERE id = :job_id;\n"
    "-- name: complete\nSET @x = 1;\nUPDATE t SET x = 2 WHERE id = :job_id;\n"
    "-- name: renew\nUPDATE t SET x = 3 WHERE id = :job_id;\nSET @y = 1;\n"
    "SELECT 1 AS rows;\n"
    "-- name: snapshot\nSELECT 1 AS job_id, 'done' AS state, 1 AS attempt, 't' AS token;\n";

START_TEST(test_points_skip_leading_settings)
{
    qc_protocol *p = NULL;
    qc_err err = {0};
    ck_assert_msg(qc_protocol_parse("set.sql", set_first_claim, QC_PARAM_QMARK, &p, &err) == 0,
                  "%s", err.msg);
    ck_assert_int_eq(p->steps[QC_STEP_CLAIM].nsettings, 2);
    ck_assert_int_eq(qc_point_in_protocol("claim.1", p, 0, 0), 1);
    ck_assert_int_eq(qc_point_in_protocol("claim.2", p, 0, 0), 1);
    ck_assert_int_eq(qc_point_in_protocol("claim.3", p, 0, 0), 0);
    ck_assert_int_eq(p->steps[QC_STEP_COMPLETE].nsettings, 1);
    ck_assert_int_eq(qc_point_in_protocol("complete.1", p, 0, 0), 0);
    ck_assert_int_eq(p->steps[QC_STEP_RENEW].nsettings, 0);
    ck_assert_int_eq(qc_point_in_protocol("renew.1", p, 0, 0), 1);
    ck_assert_int_eq(qc_point_in_protocol("renew.2", p, 0, 0), 1);
    qc_protocol_destroy(p);
}
END_TEST

static const char *one_step_claim =
    "-- engine: postgres\n"
    "-- name: setup\nSELECT 1;\n"
    "-- name: teardown\nSELECT 1;\n"
    "-- name: enqueue\nSELECT 1 AS job_id;\n"
    "-- name: claim\n"
    "UPDATE t SET x = 1 WHERE id = 1 RETURNING id AS job_id, 't' AS token, "
    "1 AS lease_until_ms, 1 AS now_ms, 1 AS attempt, 'k' AS op_key, '' AS payload;\n"
    "-- name: complete\nUPDATE t SET x = 2 WHERE id = :job_id;\n"
    "-- name: snapshot\nSELECT 1 AS job_id, 'done' AS state, 1 AS attempt, 't' AS token;\n";

static const char *autocommit_claim =
    "-- engine: postgres\n"
    "-- name: setup\nSELECT 1;\n"
    "-- name: teardown\nSELECT 1;\n"
    "-- name: enqueue\nSELECT 1 AS job_id;\n"
    "-- name: claim\n"
    "-- autocommit: yes\n"
    "SELECT 1 AS job_id;\n"
    "UPDATE t SET x = 1 WHERE id = :job_id RETURNING id AS job_id, 't' AS token, "
    "1 AS lease_until_ms, 1 AS now_ms, 1 AS attempt, 'k' AS op_key, '' AS payload;\n"
    "-- name: complete\nUPDATE t SET x = 2 WHERE id = :job_id;\n"
    "-- name: snapshot\nSELECT 1 AS job_id, 'done' AS state, 1 AS attempt, 't' AS token;\n";

/* [schedule] hold_claim_commit: a claim of one statement gets claim.commit;
 * not under the transaction model, not without the key, never an
 * autocommit claim of several statements (its locks must go between them). */
START_TEST(test_hold_claim_commit_point)
{
    qc_protocol *p = NULL, *a = NULL;
    qc_err err = {0};
    ck_assert_int_eq(qc_protocol_parse("one.sql", one_step_claim, QC_PARAM_DOLLAR, &p, &err), 0);
    ck_assert_int_eq(qc_point_in_protocol("claim.commit", p, 0, 0), 0);
    ck_assert_int_eq(qc_point_in_protocol("claim.commit", p, 0, 1), 1);
    ck_assert_int_eq(qc_point_in_protocol("claim.commit", p, 1, 1), 0); /* transaction model */
    ck_assert_int_eq(qc_point_in_protocol("claim.1", p, 0, 1), 0);
    ck_assert_int_eq(qc_point_in_protocol("complete.commit", p, 0, 1), 0);
    ck_assert_int_eq(qc_claim_commit_held(p, 0, 1), 1);
    ck_assert_int_eq(qc_claim_commit_held(p, 0, 0), 0);
    ck_assert_int_eq(qc_claim_commit_held(p, 1, 1), 0);
    ck_assert_int_eq(
        qc_protocol_parse("auto.sql", autocommit_claim, QC_PARAM_DOLLAR, &a, &err), 0);
    ck_assert_int_eq(qc_point_in_protocol("claim.1", a, 0, 1), 1);
    ck_assert_int_eq(qc_point_in_protocol("claim.commit", a, 0, 1), 0);
    ck_assert_int_eq(qc_claim_commit_held(a, 0, 1), 0);
    /* hold_complete_commit (decision 1105): complete.commit on a complete
     * of one statement, only with its flag, never in the transaction model
     * (which has it anyway), and the claim's flag stays its own */
    ck_assert_int_eq(qc_point_in_protocol("complete.commit", p, 0, QC_HOLD_COMPLETE_COMMIT), 1);
    ck_assert_int_eq(qc_point_in_protocol("claim.commit", p, 0, QC_HOLD_COMPLETE_COMMIT), 0);
    ck_assert_int_eq(qc_complete_commit_held(p, 0, 1), 1);
    ck_assert_int_eq(qc_complete_commit_held(p, 0, 0), 0);
    ck_assert_int_eq(qc_complete_commit_held(p, 1, 1), 0);
    ck_assert_int_eq(qc_point_in_protocol("complete.commit", a, 0, QC_HOLD_COMPLETE_COMMIT), 1);
    /* hold_reap_commit (decision 1146): reap.commit on a reap of one
     * statement, only with its flag, the transaction model too (the
     * reaper works outside the claims' transactions); no reap, no point */
    qc_protocol *r = NULL;
    char *txt = malloc(strlen(one_step_claim) + 200);
    ck_assert_ptr_nonnull(txt);
    snprintf(txt, strlen(one_step_claim) + 200,
             "%s-- name: reap\nUPDATE t SET x = 0 WHERE x = 1 RETURNING id AS job_id, "
             "'t' AS token, 'ready' AS state;\n",
             one_step_claim);
    ck_assert_int_eq(qc_protocol_parse("reap.sql", txt, QC_PARAM_DOLLAR, &r, &err), 0);
    ck_assert_int_eq(qc_point_in_protocol("reap.commit", r, 0, 0), 0);
    ck_assert_int_eq(qc_point_in_protocol("reap.commit", r, 0, QC_HOLD_REAP_COMMIT), 1);
    ck_assert_int_eq(qc_point_in_protocol("reap.commit", r, 1, QC_HOLD_REAP_COMMIT), 1);
    ck_assert_int_eq(qc_point_in_protocol("claim.commit", r, 0, QC_HOLD_REAP_COMMIT), 0);
    ck_assert_int_eq(qc_point_in_protocol("reap.commit", p, 0, QC_HOLD_REAP_COMMIT), 0);
    ck_assert_int_eq(qc_reap_commit_held(r, 1), 1);
    ck_assert_int_eq(qc_reap_commit_held(r, 0), 0);
    ck_assert_int_eq(qc_reap_commit_held(p, 1), 0);
    qc_protocol_destroy(r);
    free(txt);
    qc_protocol_destroy(p);
    qc_protocol_destroy(a);
}
END_TEST

static int parse(const char *text, qc_scenario *s, qc_err *err)
{
    qc_scenario_defaults(s);
    return qc_scenario_parse(s, "race.ini", text, strlen(text), err);
}

START_TEST(test_schedule_section_errors_name_the_line)
{
    qc_scenario s;
    qc_err err = {0};
    ck_assert_int_eq(parse("[workload]\nworkers = 2\n[schedule]\nstep = w0 claim.1\n"
                           "step = w1 claim.after\n",
                           &s, &err),
                     0);
    ck_assert_int_eq(s.nsteps, 2);
    ck_assert_str_eq(s.steps[1].actor, "w1");
    ck_assert_str_eq(s.steps[1].point, "claim.after");
    ck_assert_int_eq(s.steps[1].line, 5);
    ck_assert_int_eq(qc_scenario_validate(&s, &err), 0);

    ck_assert_int_ne(parse("[schedule]\nstep = w0 claim.foo\n", &s, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "race.ini:2"));
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown point 'claim.foo'"));
    ck_assert_int_ne(parse("[schedule]\n\nstep = bob claim.1\n", &s, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "race.ini:3"));
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown actor 'bob'"));
    ck_assert_int_ne(parse("[schedule]\nstep = w0\n", &s, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "ACTOR POINT"));
    ck_assert_int_ne(parse("[schedule]\nexplore = random\n", &s, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "pct"));
    ck_assert_int_eq(parse("[schedule]\nhold_claim_commit = yes\n", &s, &err), 0);
    ck_assert_int_eq(s.hold_claim_commit, 1);
    ck_assert_int_eq(parse("[schedule]\n", &s, &err), 0);
    ck_assert_int_eq(s.hold_claim_commit, 0);
    ck_assert_int_ne(parse("[schedule]\nhold_claim_commit = maybe\n", &s, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "race.ini:2"));
    ck_assert_ptr_nonnull(strstr(err.msg, "yes or no"));
    /* a worker the run does not have: the step's line */
    ck_assert_int_eq(parse("[workload]\nworkers = 2\n[schedule]\nstep = w0 claim.1\n"
                           "step = w2 claim.1\n",
                           &s, &err),
                     0);
    ck_assert_int_ne(qc_scenario_validate(&s, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "race.ini:5"));
    ck_assert_ptr_nonnull(strstr(err.msg, "w2"));
    /* a script and an exploration at once */
    ck_assert_int_eq(parse("[schedule]\nstep = w0 claim.1\nexplore = pct\n", &s, &err), 0);
    ck_assert_int_ne(qc_scenario_validate(&s, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "not both"));
}
END_TEST

/* Threads that stand for actors: each passes its points in order and logs
 * the start of each action (what it does after the schedule let it go). */
typedef struct actor_run {
    qc_sched *s;
    int actor;
    const char *const *points; /* NULL-terminated */
    int delay_first_us;        /* sleep before the first point (a slow start) */
    int block_us;              /* at point index 1: a statement this long in flight */
    int exit_early;            /* stop after the first point */
} actor_run;

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char order[64][24];
static int norder;

static void log_action(int actor, const char *what)
{
    pthread_mutex_lock(&log_mu);
    if (norder < 64)
        snprintf(order[norder++], sizeof order[0], "w%d %s", actor, what);
    pthread_mutex_unlock(&log_mu);
}

static void *actor_main(void *arg)
{
    actor_run *r = arg;
    qc_sched_begin(r->s, r->actor);
    if (r->delay_first_us)
        usleep((useconds_t)r->delay_first_us);
    for (int i = 0; r->points[i] != NULL; i++) {
        log_action(r->actor, r->points[i]); /* the action that ends at this point */
        if (i == 1 && r->block_us) {
            qc_sched_request(r->s, r->actor, 1);
            usleep((useconds_t)r->block_us);
            qc_sched_request(r->s, r->actor, 0);
        }
        qc_sched_point(r->s, r->actor, r->points[i], 1);
        if (r->exit_early)
            break;
    }
    qc_sched_exit(r->s, r->actor);
    return NULL;
}

static const char *claim_points[] = {"claim.before", "claim.1", "claim.after", NULL};

static int pos(const char *what)
{
    for (int i = 0; i < norder; i++)
        if (!strcmp(order[i], what))
            return i;
    return -1;
}

static void run_two(actor_run *a, actor_run *b)
{
    pthread_t ta, tb;
    norder = 0;
    ck_assert_int_eq(pthread_create(&ta, NULL, actor_main, a), 0);
    ck_assert_int_eq(pthread_create(&tb, NULL, actor_main, b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
}

START_TEST(test_script_order_is_enforced)
{
    /* w0 starts slowly; without the schedule w1 would read and write
     * first.  The script: both read (claim.1), then both write. */
    qc_sched_entry e[] = {{0, "claim.1", INT64_MIN, 0, 4, 0, 0, 0, 0, "", 0},
                          {1, "claim.1", INT64_MIN, 0, 5, 0, 0, 0, 0, "", 0},
                          {0, "claim.after", INT64_MIN, 0, 6, 0, 0, 0, 0, "", 0},
                          {1, "claim.after", INT64_MIN, 0, 7, 0, 0, 0, 0, "", 0}};
    qc_sched *s = qc_sched_new(QC_SCHED_SCRIPT, e, 4, 2, 1, 3, 200, 5000, NULL, "race.ini");
    actor_run a = {s, 0, claim_points, 100000, 0, 0}, b = {s, 1, claim_points, 0, 0, 0};
    run_two(&a, &b);
    /* w1's read (the action ending at claim.1) starts after w0's read ended */
    ck_assert_int_lt(pos("w0 claim.1"), pos("w1 claim.before"));
    /* both reads happen before either write */
    ck_assert_int_lt(pos("w1 claim.1"), pos("w0 claim.after"));
    ck_assert_int_lt(pos("w0 claim.after"), pos("w1 claim.after"));
    int done, total, blocked, wire;
    qc_sched_stats(s, &done, &total, &blocked, &wire);
    ck_assert_int_eq(done, 4);
    ck_assert_int_eq(total, 4);
    ck_assert_int_eq(blocked, 0);
    ck_assert_ptr_null(qc_sched_abandoned(s));
    qc_sched_free(s);
}
END_TEST

START_TEST(test_blocked_statement_lets_the_next_step_go)
{
    /* w0's second statement gets no answer for 600 ms (a row lock); the
     * script's next step is w1's: it must not wait for w0's answer. */
    qc_sched_entry e[] = {{0, "claim.after", INT64_MIN, 0, 4, 0, 0, 0, 0, "", 0},
                          {1, "claim.after", INT64_MIN, 0, 5, 0, 0, 0, 0, "", 0}};
    qc_sched *s = qc_sched_new(QC_SCHED_SCRIPT, e, 2, 2, 1, 3, 100, 5000, NULL, "lock.ini");
    actor_run a = {s, 0, claim_points, 0, 600000, 0}, b = {s, 1, claim_points, 0, 0, 0};
    run_two(&a, &b);
    /* w1 finished its claim while w0's statement was still blocked */
    ck_assert_int_lt(pos("w1 claim.after"), pos("w0 claim.after"));
    int done, total, blocked, wire;
    qc_sched_stats(s, &done, &total, &blocked, &wire);
    ck_assert_int_eq(blocked, 1);
    ck_assert_int_eq(done, 2);
    ck_assert_ptr_null(qc_sched_abandoned(s));
    qc_sched_free(s);
}
END_TEST

START_TEST(test_hold_that_never_comes_is_abandoned)
{
    /* w1 stops after its first point: the script's w1 claim.after can
     * never come.  The schedule gives up (naming the step's line) and w0
     * goes on: no hang. */
    qc_sched_entry e[] = {{1, "claim.before", INT64_MIN, 0, 3, 0, 0, 0, 0, "", 0},
                          {1, "claim.after", INT64_MIN, 0, 9, 0, 0, 0, 0, "", 0},
                          {0, "claim.after", INT64_MIN, 0, 10, 0, 0, 0, 0, "", 0}};
    qc_sched *s = qc_sched_new(QC_SCHED_SCRIPT, e, 3, 2, 1, 3, 100, 300, NULL, "hold.ini");
    actor_run a = {s, 0, claim_points, 0, 0, 0}, b = {s, 1, claim_points, 0, 0, 1};
    run_two(&a, &b);
    const char *why = qc_sched_abandoned(s);
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, "hold.ini:9") != NULL, "%s", why);
    ck_assert_msg(strstr(why, "w1 claim.after") != NULL, "%s", why);
    ck_assert_int_ge(pos("w0 claim.after"), 0);
    qc_sched_free(s);

    /* the same with an actor that is alive but never gets there in time */
    qc_sched_entry f[] = {{0, "claim.after", INT64_MIN, 0, 4, 0, 0, 0, 0, "", 0},
                          {1, "claim.after", INT64_MIN, 0, 5, 0, 0, 0, 0, "", 0}};
    s = qc_sched_new(QC_SCHED_SCRIPT, f, 2, 2, 1, 3, 100, 200, NULL, "slow.ini");
    actor_run c = {s, 0, claim_points, 700000, 0, 0}, d = {s, 1, claim_points, 0, 0, 0};
    run_two(&c, &d);
    why = qc_sched_abandoned(s);
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, "slow.ini:4") != NULL && strstr(why, "did not come within 200 ms"),
                  "%s", why);
    qc_sched_free(s);
}
END_TEST

/* Decision 963: the reaper keeps passing and finds nothing (job INT64_MIN
 * at reap.after) while w0 is held between its renew's statements (it may
 * hold the job's row) or, in the twin, at a point between steps.  (A
 * worker's empty "claim.after job" releases at once: decision 61.) */
typedef struct empty_claimer {
    qc_sched *s;
    int actor, polls;
    const char *const *cycle; /* the points of one empty poll; NULL: before, after */
} empty_claimer;

static const char *s_reap_before_after[] = {"reap.before", "reap.after", NULL};

static void *empty_claims(void *arg)
{
    empty_claimer *r = arg;
    const char *const *cycle = r->cycle != NULL ? r->cycle : s_reap_before_after;
    qc_sched_begin(r->s, r->actor);
    for (int i = 0; i < r->polls; i++)
        for (int k = 0; cycle[k] != NULL; k++) {
            qc_sched_point(r->s, r->actor, cycle[k], INT64_MIN);
            usleep(10000);
        }
    qc_sched_exit(r->s, r->actor);
    return NULL;
}

static const char *s_after_then_renew[] = {"claim.after", "renew.before", "renew.1",
                                          "renew.after", NULL};
static const char *s_claim_only[] = {"claim.before", "claim.after", "complete.before",
                                     "complete.after", NULL};

static void held_and_empty_cycle(const char *const *w0_points, const char *const *cycle,
                                 qc_sched_entry *e, int n, const char **abandoned,
                                 const char **released, qc_sched **out)
{
    qc_sched *s = qc_sched_new(QC_SCHED_SCRIPT, e, n, 1, 1, 3, 100, 300, NULL, "toctou.ini");
    actor_run a = {s, 0, w0_points, 0, 0, 0};
    empty_claimer b = {s, QC_SCHED_REAPER, 40, cycle};
    pthread_t ta, tb;
    norder = 0;
    ck_assert_int_eq(pthread_create(&ta, NULL, actor_main, &a), 0);
    ck_assert_int_eq(pthread_create(&tb, NULL, empty_claims, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    *abandoned = qc_sched_abandoned(s);
    *released = qc_sched_released(s);
    *out = s;
}

static void held_and_empty(const char *const *w0_points, qc_sched_entry *e, int n,
                           const char **abandoned, const char **released, qc_sched **out)
{
    held_and_empty_cycle(w0_points, NULL, e, n, abandoned, released, out);
}

/* Decision 1128: MariaDB's empty reap passes reap.1 and reap.commit and
 * not reap.after: the reaper's last point is most often reap.commit when
 * the hold runs out.  Still polling, still empty-handed: released. */
static const char *s_reap_mid_step[] = {"reap.1", "reap.commit", NULL};

START_TEST(test_empty_handed_reap_between_its_statements_releases)
{
    const char *ab, *rel;
    qc_sched *s;
    qc_sched_entry e[] = {{0, "renew.1", INT64_MIN, 0, 4, 0, 0, 0, 0, "", 0},
                          {QC_SCHED_REAPER, "reap.after", QC_SCHED_ANY_JOB, 0, 5, 0, 0, 0, 0, "", 0},
                          {0, "renew.after", INT64_MIN, 0, 6, 0, 0, 0, 0, "", 0}};
    held_and_empty_cycle(s_after_then_renew, s_reap_mid_step, e, 3, &ab, &rel, &s);
    ck_assert_msg(ab == NULL, "%s", ab);
    ck_assert_ptr_nonnull(rel);
    ck_assert_msg(strstr(rel, "toctou.ini:5") && strstr(rel, "w0 was held at renew.1"), "%s",
                  rel);
    qc_sched_free(s);
    /* the same reaper with nobody held mid-step: abandoned, as before */
    qc_sched_entry f[] = {{0, "claim.after", INT64_MIN, 0, 4, 0, 0, 0, 0, "", 0},
                          {QC_SCHED_REAPER, "reap.after", QC_SCHED_ANY_JOB, 0, 5, 0, 0, 0, 0, "", 0},
                          {0, "complete.after", INT64_MIN, 0, 6, 0, 0, 0, 0, "", 0}};
    held_and_empty_cycle(s_claim_only, s_reap_mid_step, f, 3, &ab, &rel, &s);
    ck_assert_ptr_null(rel);
    ck_assert_ptr_nonnull(ab);
    qc_sched_free(s);
}
END_TEST

START_TEST(test_empty_handed_step_while_another_is_held_mid_step_releases)
{
    const char *ab, *rel;
    qc_sched *s;
    /* w0 held at renew.1, "reaper reap.after job" never gets the job: the
     * script is released (judged as it ran), not abandoned */
    qc_sched_entry e[] = {{0, "renew.1", INT64_MIN, 0, 4, 0, 0, 0, 0, "", 0},
                          {QC_SCHED_REAPER, "reap.after", QC_SCHED_ANY_JOB, 0, 5, 0, 0, 0, 0, "", 0},
                          {0, "renew.after", INT64_MIN, 0, 6, 0, 0, 0, 0, "", 0}};
    held_and_empty(s_after_then_renew, e, 3, &ab, &rel, &s);
    ck_assert_msg(ab == NULL, "%s", ab);
    ck_assert_ptr_nonnull(rel);
    ck_assert_msg(strstr(rel, "toctou.ini:5") && strstr(rel, "w0 was held at renew.1"), "%s",
                  rel);
    qc_sched_free(s);
}
END_TEST

START_TEST(test_empty_handed_step_with_nobody_held_mid_step_is_abandoned)
{
    const char *ab, *rel;
    qc_sched *s;
    /* the same wait with w0 held between steps (claim.after), holding no
     * statement open: nothing keeps the job back but the queue, so the
     * script is abandoned (INCONCLUSIVE), as before */
    qc_sched_entry e[] = {{0, "claim.after", INT64_MIN, 0, 4, 0, 0, 0, 0, "", 0},
                          {QC_SCHED_REAPER, "reap.after", QC_SCHED_ANY_JOB, 0, 5, 0, 0, 0, 0, "", 0},
                          {0, "complete.after", INT64_MIN, 0, 6, 0, 0, 0, 0, "", 0}};
    held_and_empty(s_claim_only, e, 3, &ab, &rel, &s);
    ck_assert_ptr_null(rel);
    ck_assert_ptr_nonnull(ab);
    ck_assert_msg(strstr(ab, "toctou.ini:5") && strstr(ab, "did not come within 300 ms"), "%s",
                  ab);
    qc_sched_free(s);
}
END_TEST

/* Decision 965: w1's claim ends empty after its first statement (a
 * locking read that skipped the row w0 holds): it passes claim.after with
 * no job where the script waits for its claim.1. */
static void *empty_after_first_statement(void *arg)
{
    actor_run *r = arg;
    qc_sched_begin(r->s, r->actor);
    for (int i = 0; i < 20; i++) {
        qc_sched_point(r->s, r->actor, "claim.before", INT64_MIN);
        qc_sched_point(r->s, r->actor, "claim.after", INT64_MIN);
        usleep(10000);
    }
    qc_sched_exit(r->s, r->actor);
    return NULL;
}

START_TEST(test_claim_that_ends_before_its_scripted_statement_releases)
{
    qc_sched_entry e[] = {{0, "claim.1", INT64_MIN, 0, 4, 0, 0, 0, 0, "", 0},
                          {1, "claim.1", INT64_MIN, 0, 5, 0, 0, 0, 0, "", 0},
                          {0, "claim.after", INT64_MIN, 0, 6, 0, 0, 0, 0, "", 0},
                          {1, "claim.after", INT64_MIN, 0, 7, 0, 0, 0, 0, "", 0}};
    qc_sched *s = qc_sched_new(QC_SCHED_SCRIPT, e, 4, 2, 1, 3, 100, 2000, NULL, "naive.ini");
    qc_sched_exit(s, QC_SCHED_REAPER);
    actor_run a = {s, 0, claim_points, 0, 0, 0}, b = {s, 1, NULL, 0, 0, 0};
    pthread_t ta, tb;
    norder = 0;
    ck_assert_int_eq(pthread_create(&ta, NULL, actor_main, &a), 0);
    ck_assert_int_eq(pthread_create(&tb, NULL, empty_after_first_statement, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    const char *ab = qc_sched_abandoned(s), *rel = qc_sched_released(s);
    ck_assert_msg(ab == NULL, "%s", ab);
    ck_assert_ptr_nonnull(rel);
    ck_assert_msg(strstr(rel, "naive.ini:5") && strstr(rel, "ended empty before that point"), "%s",
                  rel);
    qc_sched_free(s);
}
END_TEST

static const char *many_points[] = {"claim.before", "claim.after", "effect.after",
                                    "complete.before", "complete.after", "claim.before",
                                    "claim.after", "effect.after", "complete.before",
                                    "complete.after", NULL};

static void pct_order(uint64_t seed, char out[64][24], int *n)
{
    qc_sched *s = qc_sched_new(QC_SCHED_PCT, NULL, 0, 2, seed, 3, 2000, 5000, NULL, "pct");
    qc_sched_exit(s, QC_SCHED_REAPER); /* this run has no reaper */
    actor_run a = {s, 0, many_points, 0, 0, 0}, b = {s, 1, many_points, 0, 0, 0};
    run_two(&a, &b);
    memcpy(out, order, sizeof order);
    *n = norder;
    qc_sched_free(s);
}

START_TEST(test_pct_order_is_a_function_of_the_seed)
{
    static char o1[64][24], o2[64][24];
    int n1, n2;
    pct_order(7, o1, &n1);
    pct_order(7, o2, &n2);
    ck_assert_int_eq(n1, 20);
    ck_assert_int_eq(n1, n2);
    for (int i = 0; i < n1; i++)
        ck_assert_str_eq(o1[i], o2[i]);
}
END_TEST

START_TEST(test_replay_entries_from_a_ledger)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/qc_sched_%d.jsonl", (int)getpid());
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    /* lines out of seq order, a claim of two rows, a blocked action, the
     * enqueuer and notes (no points) */
    fputs("{\"type\":\"header\",\"seq\":0}\n"
          "{\"type\":\"ok\",\"op\":\"enqueue\",\"worker\":-1,\"job\":1,\"seq\":1}\n"
          "{\"type\":\"invoke\",\"op\":\"claim\",\"worker\":1,\"req\":1,\"seq\":3}\n"
          "{\"type\":\"invoke\",\"op\":\"claim\",\"worker\":0,\"req\":0,\"seq\":2}\n"
          "{\"type\":\"point\",\"point\":\"claim.1\",\"worker\":0,\"req\":0,\"seq\":4}\n"
          "{\"type\":\"blocked\",\"worker\":1,\"point\":\"claim.before\",\"seq\":5}\n"
          "{\"type\":\"ok\",\"op\":\"claim\",\"worker\":0,\"req\":0,\"rows\":2,\"job\":1,\"seq\":6}\n"
          "{\"type\":\"ok\",\"op\":\"claim\",\"worker\":0,\"req\":0,\"rows\":2,\"job\":2,\"seq\":7}\n"
          "{\"type\":\"note\",\"note\":\"hold\",\"worker\":0,\"seq\":8}\n"
          "{\"type\":\"ok\",\"op\":\"claim\",\"worker\":1,\"req\":1,\"rows\":0,\"seq\":9}\n"
          "{\"type\":\"effect\",\"worker\":0,\"job\":1,\"seq\":10}\n",
          f);
    fclose(f);
    qc_sched_entry *v = NULL;
    int n = 0;
    qc_err err = {0};
    ck_assert_int_eq(qc_sched_load_replay(path, &v, &n, &err), 0);
    ck_assert_int_eq(n, 7);
    const char *want[] = {"claim.before", "claim.before", "claim.1", "claim.before",
                          "claim.after", "claim.after", "effect.after"};
    const int who[] = {0, 1, 0, 1, 0, 1, 0};
    for (int i = 0; i < n; i++) {
        ck_assert_str_eq(v[i].point, want[i]);
        ck_assert_int_eq(v[i].actor, who[i]);
    }
    ck_assert_int_eq(v[3].nowait, 1);      /* the blocked action */
    ck_assert_int_eq(v[4].job, INT64_MIN); /* a claim of two rows: any first job */
    ck_assert_int_eq(v[6].job, 1);
    ck_assert_int_eq(v[6].where, 10);
    free(v);

    f = fopen(path, "w");
    fputs("{\"type\":\"header\",\"seq\":0}\nnot json\n{\"type\":\"ok\"}\n", f);
    fclose(f);
    ck_assert_int_ne(qc_sched_load_replay(path, &v, &n, &err), 0);
    ck_assert_msg(strstr(err.msg, ":2:") != NULL, "%s", err.msg);
    unlink(path);
}
END_TEST

/* A replay: w0's empty claim is answered first; its next action begins
 * with a wait (an idle pause, a LISTEN wait) that, in the earlier run,
 * lasted while w1 claimed and completed, and w1's work waited in turn on
 * something w0's wait let go (here a flag w0 sets once it is waiting).
 * Held at its point until its claim.before is due, as a replay did before
 * decision 66, w0 never begins that wait in time: w1 waits for nothing
 * (bounded: it gives up after 20 s and says so).  Waiting for its grant
 * only at its next event (qc_sched_turn), w0 waits alongside w1. */
typedef struct lazy_run {
    qc_sched *s;
    int actor;
    int saw_flag; /* w1: the flag came while it worked */
} lazy_run;

static pthread_mutex_t flag_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flag_cv = PTHREAD_COND_INITIALIZER;
static int w0_waiting;

static void *lazy_main(void *arg)
{
    lazy_run *r = arg;
    qc_sched_begin(r->s, r->actor);
    if (r->actor == 0) {
        qc_sched_turn(r->s, 0);
        log_action(0, "claim.after");
        qc_sched_point(r->s, 0, "claim.after", INT64_MIN); /* empty */
        pthread_mutex_lock(&flag_mu);
        w0_waiting = 1; /* its wait begins */
        pthread_cond_broadcast(&flag_cv);
        pthread_mutex_unlock(&flag_mu);
        usleep(50000);
        qc_sched_turn(r->s, 0); /* the wait is over: its claim in its turn */
        log_action(0, "claim.before");
        qc_sched_point(r->s, 0, "claim.before", INT64_MIN);
    } else {
        qc_sched_turn(r->s, 1);
        log_action(1, "claim.after");
        qc_sched_point(r->s, 1, "claim.after", 1);
        /* its work: done once w0 is in its wait (at most 20 s) */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 20;
        pthread_mutex_lock(&flag_mu);
        while (!w0_waiting)
            if (pthread_cond_timedwait(&flag_cv, &flag_mu, &ts) != 0)
                break;
        r->saw_flag = w0_waiting;
        pthread_mutex_unlock(&flag_mu);
        qc_sched_turn(r->s, 1);
        log_action(1, "effect.after");
        qc_sched_point(r->s, 1, "effect.after", 1);
    }
    qc_sched_exit(r->s, r->actor);
    return NULL;
}

START_TEST(test_replay_lets_a_wait_run_before_its_grant)
{
    qc_sched_entry e[] = {{0, "claim.after", INT64_MIN, 0, 1, 0, 0, 0, 0, "", 0},
                          {1, "claim.after", 1, 0, 2, 0, 0, 0, 0, "", 0},
                          {1, "effect.after", 1, 0, 3, 0, 0, 0, 0, "", 0},
                          {0, "claim.before", INT64_MIN, 0, 4, 0, 0, 0, 0, "", 0}};
    qc_sched *s = qc_sched_new(QC_SCHED_REPLAY, e, 4, 2, 1, 3, 60000, 60000, NULL, "w.jsonl");
    qc_sched_exit(s, QC_SCHED_REAPER);
    lazy_run a = {s, 0, 0}, b = {s, 1, 0};
    pthread_t ta, tb;
    norder = 0;
    w0_waiting = 0;
    ck_assert_int_eq(pthread_create(&ta, NULL, lazy_main, &a), 0);
    ck_assert_int_eq(pthread_create(&tb, NULL, lazy_main, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    ck_assert_msg(b.saw_flag, "w1's work waited 20 s for w0's wait, which never began");
    ck_assert_ptr_null(qc_sched_abandoned(s));
    int done, total, blocked, wire;
    qc_sched_stats(s, &done, &total, &blocked, &wire);
    ck_assert_int_eq(done, 4);
    /* the points in the ledger's order all the same */
    ck_assert_int_lt(pos("w0 claim.after"), pos("w1 claim.after"));
    ck_assert_int_lt(pos("w1 effect.after"), pos("w0 claim.before"));
    qc_sched_free(s);
}
END_TEST

/* A replayed worker behind a slow link: its claim is answered by the
 * server at once (the proxy says so: qc_sched_server_answered) and its
 * answer takes 300 ms on the wire; wire_us 0: no proxy, nobody says. */
typedef struct wire_run {
    qc_sched *s;
    int actor, wire_us;
    int64_t job;
} wire_run;

static void *wire_main(void *arg)
{
    wire_run *r = arg;
    qc_sched_begin(r->s, r->actor);
    qc_sched_turn(r->s, r->actor);
    log_action(r->actor, "claim.before");
    qc_sched_point(r->s, r->actor, "claim.before", INT64_MIN);
    qc_sched_request(r->s, r->actor, 1); /* its turn, then the claim goes out */
    log_action(r->actor, "sent");
    if (r->wire_us) {
        qc_sched_server_answered(r->s, r->actor);
        usleep((useconds_t)r->wire_us);
    }
    qc_sched_request(r->s, r->actor, 0);
    log_action(r->actor, "claim.after");
    qc_sched_point(r->s, r->actor, "claim.after", r->job);
    qc_sched_exit(r->s, r->actor);
    return NULL;
}

START_TEST(test_replay_lets_an_answer_on_the_wire_overlap)
{
    qc_sched_entry e[] = {{0, "claim.before", INT64_MIN, 0, 1, 0, 0, 0, 0, "", 0},
                          {0, "claim.after", 7, 0, 2, 0, 0, 0, 0, "", 0},
                          {1, "claim.before", INT64_MIN, 0, 3, 0, 0, 0, 0, "", 0},
                          {1, "claim.after", 8, 0, 4, 0, 0, 0, 0, "", 0}};
    for (int proxy = 1; proxy >= 0; proxy--) {
        qc_sched *s = qc_sched_new(QC_SCHED_REPLAY, e, 4, 2, 1, 3, 60000, 60000, NULL, "w.jsonl");
        qc_sched_exit(s, QC_SCHED_REAPER);
        wire_run a = {s, 0, proxy ? 300000 : 0, 7}, b = {s, 1, 0, 8};
        pthread_t ta, tb;
        norder = 0;
        ck_assert_int_eq(pthread_create(&ta, NULL, wire_main, &a), 0);
        ck_assert_int_eq(pthread_create(&tb, NULL, wire_main, &b), 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        ck_assert_ptr_null(qc_sched_abandoned(s));
        int done, total, blocked, wire;
        qc_sched_stats(s, &done, &total, &blocked, &wire);
        ck_assert_int_eq(done, 4);
        ck_assert_int_eq(wire, proxy);
        /* w1's claim goes out after w0's was answered by the server, and,
         * with the proxy, before w0's answer arrived */
        ck_assert_int_lt(pos("w0 sent"), pos("w1 sent"));
        if (proxy)
            ck_assert_int_lt(pos("w1 claim.after"), pos("w0 claim.after"));
        else
            ck_assert_int_lt(pos("w0 claim.after"), pos("w1 sent"));
        qc_sched_free(s);
    }
}
END_TEST

/* An entry whose action found a lease run out in the earlier run waits
 * until the replay's own lease of that job has run out (decision 1133). */
START_TEST(test_replay_waits_for_the_lease_an_entry_found_run_out)
{
    qc_sched_entry e[] = {{QC_SCHED_REAPER, "reap.after", INT64_MIN, 0, 1, 0, 1, 5, 0, "", 0}};
    qc_sched *s = qc_sched_new(QC_SCHED_REPLAY, e, 1, 1, 1, 3, 60000, 60000, NULL, "w.jsonl");
    qc_sched_exit(s, 0);
    /* the server's clock is the client's plus 10 s; job 5's lease ends
     * 400 ms from now */
    double server_now = qc_clock_ms() + 10000.0;
    qc_sched_lease(s, INT64_MIN, -1, server_now);
    qc_sched_lease(s, 5, server_now + 400.0, server_now);
    double t0 = qc_clock_ms();
    qc_sched_begin(s, QC_SCHED_REAPER);
    qc_sched_turn(s, QC_SCHED_REAPER);
    double waited = qc_clock_ms() - t0;
    ck_assert_msg(waited >= 390.0, "the reap went after %.0f ms, before the lease ran out", waited);
    qc_sched_point(s, QC_SCHED_REAPER, "reap.after", 5);
    ck_assert_ptr_null(qc_sched_abandoned(s));
    qc_sched_free(s);
}
END_TEST

/* A COMMIT goes out right after its `.commit` point, not at its answer's
 * turn, when the earlier run was free (at_once): held back, its
 * transaction's locks made another actor's statement that the run
 * answered in between wait (decision 1145).  Here w1's entry comes between
 * w0's claim.commit and its answer, and w1 never acts: w0's COMMIT is sent
 * at once, the schedule still waiting at w1's entry.  Of a scripted run
 * (at_once 0, decision 1148) the COMMIT waits for its answer's turn, as
 * the script held it: the hold timeout abandons the replay. */
START_TEST(test_replay_sends_a_commit_at_its_point)
{
    for (int once = 1; once >= 0; once--) {
        qc_sched_entry e[] = {{0, "claim.commit", INT64_MIN, 0, 1, 0, 0, 0, 0, "", once},
                              {1, "claim.before", INT64_MIN, 0, 2, 0, 0, 0, 0, "", once},
                              {0, "claim.after", 5, 0, 3, 0, 0, 0, 0, "", once}};
        qc_sched *s =
            qc_sched_new(QC_SCHED_REPLAY, e, 3, 2, 1, 3, 60000, 1000, NULL, "w.jsonl");
        qc_sched_exit(s, QC_SCHED_REAPER);
        qc_sched_begin(s, 0);
        qc_sched_point(s, 0, "claim.commit", INT64_MIN);
        qc_sched_request(s, 0, 1);
        if (once) {
            ck_assert_int_eq(qc_sched_replay_reached(s, 2), 1); /* claim.commit passed */
            ck_assert_int_eq(qc_sched_replay_reached(s, 3), 0); /* w1's entry still open */
            ck_assert_ptr_null(qc_sched_abandoned(s));
        } else {
            ck_assert_ptr_nonnull(qc_sched_abandoned(s)); /* held until the timeout */
        }
        qc_sched_request(s, 0, 0);
        qc_sched_release(s);
        qc_sched_free(s);
    }
}
END_TEST

/* An empty reap of the earlier run is replayed as one: the reaper that
 * takes a job there diverges at once (decision 1135). */
START_TEST(test_replay_empty_reap_is_no_job)
{
    qc_sched_entry e[] = {{QC_SCHED_REAPER, "reap.after", QC_SCHED_NO_JOB, 0, 7, 0, 0, 0, 0, "", 0}};
    qc_sched *s = qc_sched_new(QC_SCHED_REPLAY, e, 1, 1, 1, 3, 60000, 60000, NULL, "w.jsonl");
    qc_sched_exit(s, 0);
    qc_sched_begin(s, QC_SCHED_REAPER);
    qc_sched_turn(s, QC_SCHED_REAPER);
    qc_sched_point(s, QC_SCHED_REAPER, "reap.after", 5);
    ck_assert_ptr_nonnull(qc_sched_abandoned(s));
    ck_assert_msg(strstr(qc_sched_abandoned(s), "(no job) expected, the reaper passed reap.after "
                                                "(job 5)") != NULL,
                  "%s", qc_sched_abandoned(s));
    qc_sched_free(s);
    /* and one that takes nothing passes it */
    s = qc_sched_new(QC_SCHED_REPLAY, e, 1, 1, 1, 3, 60000, 60000, NULL, "w.jsonl");
    qc_sched_exit(s, 0);
    qc_sched_begin(s, QC_SCHED_REAPER);
    qc_sched_turn(s, QC_SCHED_REAPER);
    qc_sched_point(s, QC_SCHED_REAPER, "reap.after", INT64_MIN);
    ck_assert_ptr_null(qc_sched_abandoned(s));
    int done, total, blocked, wire;
    qc_sched_stats(s, &done, &total, &blocked, &wire);
    ck_assert_int_eq(done, 1);
    qc_sched_free(s);
}
END_TEST

/* qc_sched_replay_next: an actor's next point in the earlier run, which
 * the worker's own-lease test follows in a replay (decision 1111). */
START_TEST(test_replay_next_is_the_actors_next_entry)
{
    qc_sched_entry e[] = {{1, "claim.after", 6, 0, 1, 0, 0, 0, 0, "", 0},
                          {0, "claim.after", 5, 0, 2, 0, 0, 0, 0, "", 0},
                          {1, "effect.after", 6, 0, 3, 0, 0, 0, 0, "", 0},
                          {0, "claim.before", INT64_MIN, 0, 4, 0, 0, 0, 0, "", 0}};
    char point[40];
    int64_t job = 0;
    qc_sched *s = qc_sched_new(QC_SCHED_REPLAY, e, 4, 2, 1, 3, 60000, 60000, NULL, "w.jsonl");
    ck_assert_int_eq(qc_sched_replay_next(s, 0, point, sizeof point, &job), 1);
    ck_assert_str_eq(point, "claim.after");
    ck_assert_int_eq(job, 5);
    ck_assert_int_eq(qc_sched_replay_next(s, QC_SCHED_REAPER, point, sizeof point, &job), 0);
    /* w1 passes its first point: its next is the effect of job 6 */
    qc_sched_begin(s, 1);
    qc_sched_point(s, 1, "claim.after", 6);
    ck_assert_int_eq(qc_sched_replay_next(s, 1, point, sizeof point, &job), 1);
    ck_assert_str_eq(point, "effect.after");
    ck_assert_int_eq(job, 6);
    /* a replay that ended decides nothing */
    qc_sched_release(s);
    ck_assert_int_eq(qc_sched_replay_next(s, 0, point, sizeof point, &job), 0);
    qc_sched_free(s);
    /* neither does a script, or no schedule */
    s = qc_sched_new(QC_SCHED_SCRIPT, e, 4, 2, 1, 3, 60000, 60000, NULL, "x.ini");
    ck_assert_int_eq(qc_sched_replay_next(s, 0, point, sizeof point, &job), 0);
    qc_sched_free(s);
    ck_assert_int_eq(qc_sched_replay_next(NULL, 0, point, sizeof point, &job), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sched");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_point_grammar);
    tcase_add_test(tc, test_point_of_event_names_what_the_worker_passes);
    tcase_add_test(tc, test_points_a_protocol_has);
    tcase_add_test(tc, test_points_skip_leading_settings);
    tcase_add_test(tc, test_hold_claim_commit_point);
    tcase_add_test(tc, test_schedule_section_errors_name_the_line);
    tcase_add_test(tc, test_script_order_is_enforced);
    tcase_add_test(tc, test_blocked_statement_lets_the_next_step_go);
    tcase_add_test(tc, test_hold_that_never_comes_is_abandoned);
    tcase_add_test(tc, test_claim_that_ends_before_its_scripted_statement_releases);
    tcase_add_test(tc, test_empty_handed_step_while_another_is_held_mid_step_releases);
    tcase_add_test(tc, test_empty_handed_reap_between_its_statements_releases);
    tcase_add_test(tc, test_empty_handed_step_with_nobody_held_mid_step_is_abandoned);
    tcase_add_test(tc, test_pct_order_is_a_function_of_the_seed);
    tcase_add_test(tc, test_replay_entries_from_a_ledger);
    tcase_add_test(tc, test_replay_lets_an_answer_on_the_wire_overlap);
    tcase_add_test(tc, test_replay_empty_reap_is_no_job);
    tcase_add_test(tc, test_replay_waits_for_the_lease_an_entry_found_run_out);
    tcase_add_test(tc, test_replay_sends_a_commit_at_its_point);
    tcase_add_test(tc, test_replay_lets_a_wait_run_before_its_grant);
    tcase_add_test(tc, test_replay_next_is_the_actors_next_entry);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
