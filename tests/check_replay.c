/*
 * check_replay.c - unit tests of the replay search (harness/replay.c): the
 * orders it tries where a replay diverged, how it judges progress, when it
 * stops, which attempt the replay's folder keeps and how (decision 67).
 * The attempts' ledgers are written by hand: a replay run is the e2e
 * test's part (tests/sched.sh).
 *
 * The entries: w0 a (seq 1), w1 b (seq 2), w0 c (seq 3), w1 d (seq 4),
 * w2 e (seq 5): w0's action ending at c ran while w1's ending at b ended.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness/replay.h"

static qc_sched_entry ents[5];

static void setup(void)
{
    static const int actor[5] = {0, 1, 0, 1, 2};
    static const char *point[5] = {"claim.before", "claim.1", "claim.1", "claim.after",
                                   "claim.before"};
    memset(ents, 0, sizeof ents);
    for (int i = 0; i < 5; i++) {
        ents[i].actor = actor[i];
        snprintf(ents[i].point, sizeof ents[i].point, "%s", point[i]);
        ents[i].job = INT64_MIN;
        ents[i].where = i + 1;
    }
}

/* A ledger of an attempt: diverged at seq (or not at all, seq < 0). */
static void ledger(const char *path, long seq, long consumed)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "{\"type\":\"header\",\"seed\":1}\n");
    fprintf(f, "{\"type\":\"invoke\",\"worker\":0,\"op\":\"claim\",\"seq\":1}\n");
    if (seq >= 0)
        fprintf(f,
                "{\"type\":\"note\",\"note\":\"schedule abandoned\",\"worker\":-3,\"error\":"
                "\"replay diverged\",\"replay_entry\":2,\"replay_seq\":%ld,"
                "\"replay_consumed\":%ld,\"seq\":9}\n",
                seq, consumed);
    fclose(f);
}

/* The order's seqs as a string ("1 3 2 4 5"). */
static const char *seqs(const qc_replay_search *rs)
{
    static char buf[64];
    int n;
    const qc_sched_entry *o = qc_replay_search_order(rs, &n);
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%ld", i ? " " : "", o[i].where);
    return buf;
}

static char path[64];

static void mkpath(void)
{
    snprintf(path, sizeof path, "/tmp/qchaos-check-replay-%d.jsonl", (int)getpid());
}

START_TEST(test_first_attempt_is_the_ledger_order)
{
    qc_replay_search *rs = qc_replay_search_new(ents, 5, 10);
    ck_assert_str_eq(seqs(rs), "1 2 3 4 5");
    ck_assert_int_eq(qc_replay_search_attempts(rs), 0);
    qc_replay_search_free(rs);
}
END_TEST

START_TEST(test_moves_the_diverging_action_ahead_then_later)
{
    char msg[600];
    mkpath();
    qc_replay_search *rs = qc_replay_search_new(ents, 5, 10);
    /* attempt 1 diverged at w0's c (seq 3): c goes right after w0's a,
     * ahead of w1's b, which ended while c's action ran */
    ledger(path, 3, 2);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_str_eq(seqs(rs), "1 3 2 4 5");
    ck_assert_ptr_nonnull(strstr(msg, "w0 claim.1 (seq 3) now before w1 claim.1 (seq 2)"));
    /* attempt 2 diverged at c again, earlier in its order: no progress;
     * the next move of the same base: c one place later (behind d) */
    ledger(path, 3, 1);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_str_eq(seqs(rs), "1 2 4 3 5");
    /* attempt 3 got further (diverged at e, the last place): it is the new
     * base; e has no earlier action of w2 and nothing after it */
    ledger(path, 5, 4);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    /* e's only move: to the very start (w2's first action) */
    ck_assert_str_eq(seqs(rs), "5 1 2 4 3");
    ck_assert_int_eq(qc_replay_search_attempts(rs), 3);
    qc_replay_search_free(rs);
    unlink(path);
}
END_TEST

/* qc_replay_search_stale: attempts in a row that got no further than the
 * furthest before them (the stop rule after a same-way attempt, decision
 * 1140) */
START_TEST(test_stale_counts_attempts_that_got_no_further)
{
    char msg[600];
    mkpath();
    qc_replay_search *rs = qc_replay_search_new(ents, 5, 10);
    ck_assert_int_eq(qc_replay_search_stale(rs), 0);
    ledger(path, 3, 2); /* attempt 1: the first, the furthest so far */
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_int_eq(qc_replay_search_stale(rs), 0);
    ledger(path, 3, 1); /* attempt 2: the same entry moved: no further */
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_int_eq(qc_replay_search_stale(rs), 1);
    ledger(path, 2, 1); /* attempt 3: an earlier entry: no further */
    qc_replay_search_next(rs, path, 0, msg, sizeof msg);
    ck_assert_int_eq(qc_replay_search_stale(rs), 2);
    ledger(path, 5, 4); /* attempt 4: further than any: back to 0 */
    qc_replay_search_next(rs, path, 0, msg, sizeof msg);
    ck_assert_int_eq(qc_replay_search_stale(rs), 0);
    qc_replay_search_free(rs);
    unlink(path);
}
END_TEST

START_TEST(test_moves_an_earlier_action_of_the_same_request)
{
    char msg[600];
    /* w0: a (1), x (3), c (5); w1's b (2) and d (4) ended in between */
    ents[2].actor = 0;
    ents[3].actor = 1;
    ents[4].actor = 0;
    mkpath();
    qc_replay_search *rs = qc_replay_search_new(ents, 5, 10);
    ledger(path, 5, 4); /* diverged at c (seq 5) */
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_str_eq(seqs(rs), "1 2 3 5 4"); /* c ahead of d */
    ledger(path, 5, 3);                       /* no better */
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_str_eq(seqs(rs), "1 3 2 4 5"); /* x (w0's earlier action) ahead of b */
    qc_replay_search_free(rs);
    unlink(path);
}
END_TEST

START_TEST(test_moves_an_earlier_action_one_place_later)
{
    /* every attempt diverges at w1's d (seq 4): w1's b (seq 2), a SELECT
     * that ended before w0's c although c took the row first, is tried
     * behind c: "1 3 2 4 5" */
    char msg[600];
    int found = 0, again;
    mkpath();
    qc_replay_search *rs = qc_replay_search_new(ents, 5, 50);
    ledger(path, 4, 3);
    while ((again = qc_replay_search_next(rs, path, 0, msg, sizeof msg)) == 1)
        if (!strcmp(seqs(rs), "1 3 2 4 5")) {
            found = qc_replay_search_attempts(rs) + 1;
            ck_assert_msg(strstr(msg, "w1 claim.1 (seq 2) now before") != NULL, "%s", msg);
            break;
        }
    ck_assert_msg(found > 0 && found <= 10, "order 1 3 2 4 5 tried at attempt %d", found);
    qc_replay_search_free(rs);
    unlink(path);
}
END_TEST

START_TEST(test_moves_an_earlier_action_as_late_as_it_goes)
{
    /* w1 a (seq 1), w0 b (2), w2 c (3), w1 d (4): every attempt diverges
     * at w1's d.  w1's a, a SELECT that skipped the row b's statement held
     * beside it, is tried right before d, behind b and c: "2 3 1 4", among
     * the first order's moves (attempt 3; one place later twice: 5); never
     * after d (an actor's own points keep their order) */
    static const int actor[4] = {1, 0, 2, 1};
    qc_sched_entry e[4];
    char msg[600];
    int found = 0;
    memset(e, 0, sizeof e);
    for (int i = 0; i < 4; i++) {
        e[i].actor = actor[i];
        snprintf(e[i].point, sizeof e[i].point, "%s", i == 0 ? "claim.1" : "claim.after");
        e[i].job = INT64_MIN;
        e[i].where = i + 1;
    }
    mkpath();
    qc_replay_search *rs = qc_replay_search_new(e, 4, 50);
    ledger(path, 4, 3);
    while (qc_replay_search_next(rs, path, 0, msg, sizeof msg) == 1) {
        ck_assert_str_ne(seqs(rs), "2 3 4 1");
        if (!found && !strcmp(seqs(rs), "2 3 1 4"))
            found = qc_replay_search_attempts(rs) + 1;
    }
    ck_assert_msg(found > 0 && found <= 3, "order 2 3 1 4 tried at attempt %d", found);
    qc_replay_search_free(rs);
    unlink(path);
}
END_TEST

/* A ledger of an attempt that diverged at seq where its actor passed
 * point for job (the replay_point / replay_job of the abandon note). */
static void ledger_got(const char *p, long seq, const char *point, long long job)
{
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "{\"type\":\"header\",\"seed\":1}\n");
    fprintf(f,
            "{\"type\":\"note\",\"note\":\"schedule abandoned\",\"worker\":-3,\"error\":"
            "\"replay diverged\",\"replay_entry\":2,\"replay_seq\":%ld,\"replay_consumed\":1,"
            "\"replay_point\":\"%s\",\"replay_job\":%lld,\"seq\":9}\n",
            seq, point, job);
    fclose(f);
}

START_TEST(test_the_taker_of_the_job_goes_first)
{
    /* Three claims in flight at once behind a slow link, answered at the
     * client in another order than the server ran them: w0 claim.before
     * (1), w1 claim.before (2), w2 claim.before (3), w0 claim.after job 3
     * (4), w3 effect.after job 9 (5), w2 claim.after job 1 (6), w1
     * claim.after job 2 (7).  Serially w0's claim gets job 1: the first
     * move is w2's claim.after (job 1's taker) right ahead of w0's; that
     * attempt's w0 gets job 2, and the move from there is w1's, ahead of
     * both; no other move is tried in between. */
    static const int actor[7] = {0, 1, 2, 0, 3, 2, 1};
    static const char *point[7] = {"claim.before", "claim.before", "claim.before", "claim.after",
                                   "effect.after", "claim.after", "claim.after"};
    static const long long job[7] = {INT64_MIN, INT64_MIN, INT64_MIN, 3, 9, 1, 2};
    qc_sched_entry e[7];
    char msg[600], got[40];
    long seq, consumed;
    int64_t gj;
    memset(e, 0, sizeof e);
    for (int i = 0; i < 7; i++) {
        e[i].actor = actor[i];
        snprintf(e[i].point, sizeof e[i].point, "%s", point[i]);
        e[i].job = job[i];
        e[i].where = i + 1;
    }
    mkpath();
    ledger_got(path, 4, "claim.after", 1);
    ck_assert_int_eq(qc_replay_divergence(path, &seq, &consumed, got, sizeof got, &gj), 1);
    ck_assert_str_eq(got, "claim.after");
    ck_assert_int_eq(gj, 1);
    qc_replay_search *rs = qc_replay_search_new(e, 7, 10);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_str_eq(seqs(rs), "1 2 3 6 4 5 7");
    ck_assert_msg(strstr(msg, "w2 claim.after (seq 6)") != NULL && strstr(msg, "taker") != NULL,
                  "%s", msg);
    ledger_got(path, 4, "claim.after", 2);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_str_eq(seqs(rs), "1 2 3 6 7 4 5");
    /* the same job again is no progress: the taker's order is not the
     * base of the next move, the first order's other moves come next */
    ledger_got(path, 4, "claim.after", 2);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_str_ne(seqs(rs), "1 2 3 6 7 4 5");
    qc_replay_search_free(rs);

    /* a taker whose claim began after the diverging entry moves with its
     * invoke: w0 claim.before (1), w0 claim.after job 2 (2), w1
     * claim.before (3), w2 x (4), w1 claim.after job 1 (5) */
    static const int actor2[5] = {0, 0, 1, 2, 1};
    static const char *point2[5] = {"claim.before", "claim.after", "claim.before",
                                    "effect.after", "claim.after"};
    static const long long job2[5] = {INT64_MIN, 2, INT64_MIN, 9, 1};
    for (int i = 0; i < 5; i++) {
        e[i].actor = actor2[i];
        snprintf(e[i].point, sizeof e[i].point, "%s", point2[i]);
        e[i].job = job2[i];
        e[i].where = i + 1;
    }
    rs = qc_replay_search_new(e, 5, 10);
    ledger_got(path, 2, "claim.after", 1);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_str_eq(seqs(rs), "1 3 5 2 4");
    qc_replay_search_free(rs);

    /* no taker move when the actor passed another point, or no job */
    rs = qc_replay_search_new(e, 5, 10);
    ledger_got(path, 2, "complete.before", 1);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_ptr_null(strstr(msg, "taker"));
    qc_replay_search_free(rs);
    unlink(path);
}
END_TEST

START_TEST(test_an_early_read_goes_before_the_first_taker)
{
    /* A claim that reads, then writes (select_then_update), on a loaded
     * machine: w1's and w2's SELECTs ran before w0's claim of job 5
     * committed, but their claim.1 points were recorded after it.  w1
     * claim.before (1), w2 claim.before (2), w0 claim.before (3), w0
     * claim.1 (4), w0 claim.after job 5 (5), w0 complete.before (6), w2
     * claim.1 (7), w1 claim.1 (8), w2 claim.after job 5 (9), w1
     * claim.after job 5 (10), w3 claim.before (11), w3 claim.1 (12), w3
     * claim.after job 5 (13).  Replayed in that order w2 reads after w0's
     * write and gets job 6: both early reads go right before w0's answer
     * (decision 1140), w3's (begun after it) stays. */
    static const int actor[13] = {1, 2, 0, 0, 0, 0, 2, 1, 2, 1, 3, 3, 3};
    static const char *point[13] = {"claim.before", "claim.before",    "claim.before",
                                    "claim.1",      "claim.after",     "complete.before",
                                    "claim.1",      "claim.1",         "claim.after",
                                    "claim.after",  "claim.before",    "claim.1",
                                    "claim.after"};
    static const long long job[13] = {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, 5,
                                      5,         INT64_MIN, INT64_MIN, 5,         5,
                                      INT64_MIN, INT64_MIN, 5};
    qc_sched_entry e[13];
    char msg[600];
    memset(e, 0, sizeof e);
    for (int i = 0; i < 13; i++) {
        e[i].actor = actor[i];
        snprintf(e[i].point, sizeof e[i].point, "%s", point[i]);
        e[i].job = job[i];
        e[i].where = i + 1;
    }
    mkpath();
    qc_replay_search *rs = qc_replay_search_new(e, 13, 10);
    ledger_got(path, 9, "claim.after", 6);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_str_eq(seqs(rs), "1 2 3 4 7 8 5 6 9 10 11 12 13");
    ck_assert_msg(strstr(msg, "w2 claim.1 (seq 7) now before w0 claim.after (seq 5)") != NULL &&
                      strstr(msg, "its read ran before") != NULL,
                  "%s", msg);
    qc_replay_search_free(rs);

    /* no early read when no other actor took the job after the request
     * began: w0 got job 6 where the run had 5 at seq 5 */
    rs = qc_replay_search_new(e, 13, 10);
    ledger_got(path, 5, "claim.after", 6);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_ptr_null(strstr(msg, "its read ran before"));
    qc_replay_search_free(rs);

    /* nor when the actor passed another point than the run's */
    rs = qc_replay_search_new(e, 13, 10);
    ledger_got(path, 9, "claim.1", 6);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_ptr_null(strstr(msg, "its read ran before"));
    qc_replay_search_free(rs);
    unlink(path);
}
END_TEST

START_TEST(test_stops_when_reproduced)
{
    char msg[600];
    mkpath();
    qc_replay_search *rs = qc_replay_search_new(ents, 5, 10);
    ledger(path, 3, 2);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 1, msg, sizeof msg), 0);
    ck_assert_str_eq(msg, "");
    ck_assert_str_eq(seqs(rs), "1 2 3 4 5");
    qc_replay_search_free(rs);
    unlink(path);
}
END_TEST

START_TEST(test_stops_without_divergence)
{
    char msg[600];
    mkpath();
    qc_replay_search *rs = qc_replay_search_new(ents, 5, 10);
    /* the ledger's own order ran to its end and did not reproduce: there is
     * nothing to reorder */
    ledger(path, -1, 0);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 0);
    ck_assert_str_eq(msg, "");
    qc_replay_search_free(rs);
    unlink(path);
}
END_TEST

START_TEST(test_stops_at_max_attempts_and_when_no_move_is_left)
{
    char msg[600];
    mkpath();
    qc_replay_search *rs = qc_replay_search_new(ents, 5, 2);
    ledger(path, 3, 2);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 0);
    ck_assert_ptr_nonnull(strstr(msg, "2 attempts"));
    qc_replay_search_free(rs);

    /* every attempt diverges at c (seq 3): the search tries each order its
     * moves reach once, then says none is left */
    rs = qc_replay_search_new(ents, 5, 50);
    ledger(path, 3, 2);
    char seen[50][64];
    int nseen = 0, again;
    while ((again = qc_replay_search_next(rs, path, 0, msg, sizeof msg)) == 1) {
        ck_assert_int_lt(nseen, 49);
        for (int i = 0; i < nseen; i++)
            ck_assert_str_ne(seen[i], seqs(rs));
        ck_assert_str_ne(seqs(rs), "1 2 3 4 5");
        snprintf(seen[nseen++], sizeof seen[0], "%s", seqs(rs));
    }
    ck_assert_int_ge(nseen, 2);
    ck_assert_ptr_nonnull(strstr(msg, "no other order"));
    qc_replay_search_free(rs);
    unlink(path);
}
END_TEST

START_TEST(test_divergence_of_a_missing_or_clean_ledger)
{
    long seq, consumed;
    mkpath();
    unlink(path);
    ck_assert_int_eq(qc_replay_divergence(path, &seq, &consumed, NULL, 0, NULL), 0);
    ck_assert_int_eq(seq, -1);
    ledger(path, -1, 0);
    ck_assert_int_eq(qc_replay_divergence(path, &seq, &consumed, NULL, 0, NULL), 0);
    ledger(path, 4, 3);
    ck_assert_int_eq(qc_replay_divergence(path, &seq, &consumed, NULL, 0, NULL), 1);
    ck_assert_int_eq(seq, 4);
    ck_assert_int_eq(consumed, 3);
    unlink(path);
}
END_TEST

START_TEST(test_entries_carry_when_their_action_began)
{
    qc_sched_entry *v = NULL;
    int n = 0;
    qc_err err = {0};
    mkpath();
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    /* lines out of seq order, as threads write them */
    fputs("{\"type\":\"header\",\"seed\":1}\n"
          "{\"type\":\"invoke\",\"worker\":1,\"op\":\"claim\",\"req\":1,\"seq\":2,\"t\":105.0}\n"
          "{\"type\":\"invoke\",\"worker\":0,\"op\":\"claim\",\"req\":1,\"seq\":1,\"t\":100.0}\n"
          "{\"type\":\"ok\",\"worker\":0,\"op\":\"claim\",\"req\":1,\"job\":7,\"rows\":1,"
          "\"seq\":3,\"t\":130.5}\n"
          "{\"type\":\"ok\",\"worker\":1,\"op\":\"claim\",\"req\":1,\"rows\":0,\"seq\":4,"
          "\"t\":140.0}\n"
          "{\"type\":\"effect\",\"worker\":0,\"job\":7,\"seq\":5,\"t\":150.25}\n",
          f);
    fclose(f);
    ck_assert_int_eq(qc_sched_load_replay(path, &v, &n, &err), 0);
    ck_assert_int_eq(n, 5);
    /* w0 claim.before, w1 claim.before: first actions, begin at 0 */
    ck_assert_int_eq(v[0].where, 1);
    ck_assert(v[0].start_ms == 0 && v[1].start_ms == 0);
    /* w0 claim.after began at its claim.before (t 100: the first point) */
    ck_assert_str_eq(v[2].point, "claim.after");
    ck_assert_int_eq(v[2].job, 7);
    ck_assert(v[2].start_ms == 0);
    /* w1 claim.after began at t 105: 5 ms after the first point */
    ck_assert(v[3].start_ms == 5.0);
    /* w0's effect began at its claim's answer, t 130.5 */
    ck_assert_str_eq(v[4].point, "effect.after");
    ck_assert(v[4].start_ms == 30.5);
    free(v);
    unlink(path);
}
END_TEST

/* A fail whose SQLSTATE says the server aborted the transaction itself
 * (40001 serialization failure / deadlock victim, 40P01 deadlock) carries
 * its error on its `.after` entry, without the step's prefix; other
 * failures carry none.  A replay hands it to the actor when that entry is
 * its next, never before (decision 1144). */
START_TEST(test_a_server_abort_is_replayed_at_its_request)
{
    qc_sched_entry *v = NULL;
    int n = 0;
    qc_err err = {0};
    char msg[256] = "";
    mkpath();
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"type\":\"header\",\"seed\":1}\n"
          "{\"type\":\"invoke\",\"worker\":1,\"op\":\"complete\",\"req\":1,\"job\":3,"
          "\"seq\":1,\"t\":1.0}\n"
          "{\"type\":\"fail\",\"worker\":1,\"op\":\"complete\",\"req\":1,\"job\":3,"
          "\"error\":\"complete: 40001 Deadlock found when trying to get lock\",\"seq\":2,"
          "\"t\":2.0}\n"
          "{\"type\":\"invoke\",\"worker\":0,\"op\":\"claim\",\"req\":1,\"seq\":3,\"t\":3.0}\n"
          "{\"type\":\"fail\",\"worker\":0,\"op\":\"claim\",\"req\":1,"
          "\"error\":\"claim: 23505 duplicate key value\",\"seq\":4,\"t\":4.0}\n"
          "{\"type\":\"invoke\",\"worker\":0,\"op\":\"renew\",\"req\":2,\"job\":5,"
          "\"seq\":5,\"t\":5.0}\n"
          "{\"type\":\"fail\",\"worker\":0,\"op\":\"renew\",\"req\":2,\"job\":5,"
          "\"error\":\"renew: 40P01 deadlock detected\",\"seq\":6,\"t\":6.0}\n"
          "{\"type\":\"fail\",\"worker\":0,\"op\":\"complete\",\"req\":3,\"job\":5,"
          "\"error\":\"claim: 40001 mislabelled\",\"seq\":7,\"t\":7.0}\n",
          f);
    fclose(f);
    ck_assert_int_eq(qc_sched_load_replay(path, &v, &n, &err), 0);
    ck_assert_int_eq(n, 7);
    ck_assert_str_eq(v[1].point, "complete.after");
    ck_assert_str_eq(v[1].abort_err, "40001 Deadlock found when trying to get lock");
    ck_assert_str_eq(v[3].abort_err, "");         /* 23505: the protocol's, not the server's choice */
    ck_assert_str_eq(v[5].abort_err, "40P01 deadlock detected");
    ck_assert_str_eq(v[6].abort_err, "");         /* the error of another step */
    ck_assert_str_eq(v[0].abort_err, "");         /* an invoke */
    /* a run without a [schedule]: its actors were never held at a point
     * (decision 1148) */
    for (int k = 0; k < n; k++)
        ck_assert_int_eq(v[k].at_once, 1);
    qc_sched *s = qc_sched_new(QC_SCHED_REPLAY, v, n, 2, 1, 3, 200, 5000, NULL, "ledger");
    ck_assert_ptr_nonnull(s);
    qc_sched_begin(s, 1);
    /* before its invoke its next entry is the invoke: nothing to replay */
    ck_assert_int_eq(qc_sched_replay_abort(s, 1, msg, sizeof msg), 0);
    qc_sched_point(s, 1, "complete.before", 3);
    ck_assert_int_eq(qc_sched_replay_abort(s, 1, msg, sizeof msg), 1);
    ck_assert_str_eq(msg, "40001 Deadlock found when trying to get lock");
    /* w0's next entry is its claim's invoke */
    ck_assert_int_eq(qc_sched_replay_abort(s, 0, msg, sizeof msg), 0);
    ck_assert_int_eq(qc_sched_replay_abort(NULL, 1, msg, sizeof msg), 0);
    qc_sched_release(s);
    qc_sched_free(s);
    free(v);
    /* a scripted run held its actors at their points: nothing at once */
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"type\":\"header\",\"seed\":1,\"schedule\":\"script\"}\n"
          "{\"type\":\"invoke\",\"worker\":0,\"op\":\"claim\",\"req\":1,\"seq\":1,\"t\":1.0}\n",
          f);
    fclose(f);
    ck_assert_int_eq(qc_sched_load_replay(path, &v, &n, &err), 0);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(v[0].at_once, 0);
    free(v);
    unlink(path);
}
END_TEST

/* A request answered `info` more than 100 ms after its invoke, with another
 * actor's points between (a partition's TCP timeout): a nowait entry right
 * after its invoke, so that a replay sends it in its turn and grants the
 * next entries meanwhile (decision 997).  A quick info (a cut session), an
 * ok however slow, and an info with no other actor's point between get
 * none. */
START_TEST(test_a_slow_lost_answer_does_not_hold_the_others)
{
    qc_sched_entry *v = NULL;
    int n = 0;
    qc_err err = {0};
    mkpath();
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"type\":\"invoke\",\"worker\":0,\"op\":\"complete\",\"req\":1,\"job\":7,"
          "\"seq\":1,\"t\":100.0}\n"
          "{\"type\":\"invoke\",\"worker\":1,\"op\":\"claim\",\"req\":1,\"seq\":2,\"t\":110.0}\n"
          "{\"type\":\"ok\",\"worker\":1,\"op\":\"claim\",\"req\":1,\"job\":8,\"rows\":1,"
          "\"seq\":3,\"t\":120.0}\n"
          "{\"type\":\"info\",\"worker\":0,\"op\":\"complete\",\"req\":1,\"job\":7,"
          "\"seq\":4,\"t\":1100.0}\n"
          /* a quick info with w1's point between: none */
          "{\"type\":\"invoke\",\"worker\":0,\"op\":\"complete\",\"req\":2,\"job\":7,"
          "\"seq\":5,\"t\":1200.0}\n"
          "{\"type\":\"invoke\",\"worker\":1,\"op\":\"complete\",\"req\":2,\"job\":8,"
          "\"seq\":6,\"t\":1201.0}\n"
          "{\"type\":\"info\",\"worker\":0,\"op\":\"complete\",\"req\":2,\"job\":7,"
          "\"seq\":7,\"t\":1210.0}\n"
          /* a slow ok: none */
          "{\"type\":\"ok\",\"worker\":1,\"op\":\"complete\",\"req\":2,\"job\":8,\"rows\":1,"
          "\"seq\":8,\"t\":2500.0}\n"
          /* a slow info with no other actor's point between: none */
          "{\"type\":\"invoke\",\"worker\":0,\"op\":\"complete\",\"req\":3,\"job\":7,"
          "\"seq\":9,\"t\":2600.0}\n"
          "{\"type\":\"info\",\"worker\":0,\"op\":\"complete\",\"req\":3,\"job\":7,"
          "\"seq\":10,\"t\":3600.0}\n",
          f);
    fclose(f);
    ck_assert_int_eq(qc_sched_load_replay(path, &v, &n, &err), 0);
    ck_assert_int_eq(n, 11);
    ck_assert_int_eq(v[0].actor, 0);
    ck_assert_str_eq(v[0].point, "complete.before");
    ck_assert(!v[0].nowait);
    ck_assert_int_eq(v[1].actor, 0);
    ck_assert(v[1].nowait);
    ck_assert_int_eq(v[1].where, 1);
    ck_assert_int_eq(v[2].actor, 1);
    ck_assert_str_eq(v[4].point, "complete.after");
    ck_assert_int_eq(v[4].job, 7);
    for (int k = 2; k < n; k++)
        ck_assert_msg(!v[k].nowait, "entry %d (seq %ld) is nowait", k, v[k].where);
    free(v);
    unlink(path);
}
END_TEST

/* The order the loader gives for a worker behind a slow link, and the
 * leases its entries wait for (decisions 1132, 1133). */
static void write_lines(const char *lines)
{
    mkpath();
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(lines, f);
    fclose(f);
}

static const char *order_of(const qc_sched_entry *v, int n)
{
    static char buf[256];
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%ld", i ? " " : "", v[i].where);
    return buf;
}

static const char slow_link[] =
    /* w0 behind a bandwidth toxic; the reaper direct (its answer sets the
     * clocks' offset: t - now = -99999.8) */
    "{\"type\":\"fault\",\"fault\":\"bandwidth\",\"worker\":-2,\"target\":0,\"seq\":1,"
    "\"t\":1.0}\n"
    "{\"type\":\"invoke\",\"worker\":0,\"op\":\"claim\",\"req\":1,\"seq\":2,\"t\":100.0}\n"
    "{\"type\":\"invoke\",\"worker\":1,\"op\":\"complete\",\"req\":1,\"job\":5,\"seq\":3,"
    "\"t\":150.0}\n"
    "{\"type\":\"ok\",\"worker\":1,\"op\":\"complete\",\"req\":1,\"job\":5,\"rows\":1,"
    "\"now\":100151.0,\"seq\":4,\"t\":152.0}\n"
    "{\"type\":\"invoke\",\"worker\":-1,\"op\":\"reap\",\"req\":1,\"seq\":5,\"t\":200.0}\n"
    "{\"type\":\"ok\",\"worker\":-1,\"op\":\"reap\",\"req\":1,\"job\":3,\"rows\":1,"
    "\"now\":100200.0,\"seq\":6,\"t\":200.2}\n"
    /* w0's claim ran on the server at 100102 (client 102), its answer came
     * at 400: it goes ahead of w1's complete (100151) and the reap (100200),
     * not of its own invoke */
    "{\"type\":\"ok\",\"worker\":0,\"op\":\"claim\",\"req\":1,\"job\":9,\"rows\":1,"
    "\"now\":100102.0,\"lease_until\":100902.0,\"seq\":7,\"t\":400.0}\n"
    /* w1 without a toxic, answered late all the same (a thread slow to
     * run again): its claim ran at 100411, before w0's complete was sent
     * (420 - its offset), so its answer goes ahead of that invoke too
     * (decision 1140) */
    "{\"type\":\"invoke\",\"worker\":1,\"op\":\"claim\",\"req\":2,\"seq\":8,\"t\":410.0}\n"
    "{\"type\":\"invoke\",\"worker\":0,\"op\":\"complete\",\"req\":2,\"job\":9,\"seq\":9,"
    "\"t\":420.0}\n"
    "{\"type\":\"ok\",\"worker\":1,\"op\":\"claim\",\"req\":2,\"job\":10,\"rows\":1,"
    "\"now\":100411.0,\"lease_until\":101211.0,\"seq\":10,\"t\":500.0}\n"
    /* w0's complete (server 100421, after w1's claim at 100411): not moved */
    "{\"type\":\"ok\",\"worker\":0,\"op\":\"complete\",\"req\":2,\"job\":9,\"rows\":1,"
    "\"now\":100421.0,\"seq\":11,\"t\":600.0}\n";

START_TEST(test_slow_link_answers_go_in_the_servers_order)
{
    qc_sched_entry *v = NULL;
    int n = 0;
    qc_err err = {0};
    write_lines(slow_link);
    ck_assert_int_eq(qc_sched_load_replay(path, &v, &n, &err), 0);
    ck_assert_str_eq(order_of(v, n), "2 7 3 4 5 6 8 10 9 11");
    free(v);
    /* three claims in flight at once, answered C, A, B, run by the server
     * B (100), C (102), A (104): B's answer goes ahead of C's and A's and
     * of C's invoke (C's request ran after it), not of its own; C's and
     * A's stay (each ran after the one before it) */
    write_lines("{\"type\":\"fault\",\"fault\":\"bandwidth\",\"worker\":-2,\"target\":0,"
                "\"seq\":90,\"t\":1.0}\n"
                "{\"type\":\"fault\",\"fault\":\"bandwidth\",\"worker\":-2,\"target\":1,"
                "\"seq\":91,\"t\":1.0}\n"
                "{\"type\":\"fault\",\"fault\":\"bandwidth\",\"worker\":-2,\"target\":2,"
                "\"seq\":92,\"t\":1.0}\n"
                "{\"type\":\"invoke\",\"worker\":0,\"op\":\"claim\",\"req\":1,\"seq\":101,"
                "\"t\":10.0}\n"
                "{\"type\":\"invoke\",\"worker\":1,\"op\":\"claim\",\"req\":1,\"seq\":102,"
                "\"t\":10.1}\n"
                "{\"type\":\"invoke\",\"worker\":2,\"op\":\"claim\",\"req\":1,\"seq\":103,"
                "\"t\":10.2}\n"
                "{\"type\":\"ok\",\"worker\":2,\"op\":\"claim\",\"req\":1,\"job\":2,\"rows\":1,"
                "\"now\":102.0,\"seq\":104,\"t\":400.0}\n"
                "{\"type\":\"ok\",\"worker\":0,\"op\":\"claim\",\"req\":1,\"job\":3,\"rows\":1,"
                "\"now\":104.0,\"seq\":105,\"t\":400.1}\n"
                "{\"type\":\"ok\",\"worker\":1,\"op\":\"claim\",\"req\":1,\"job\":1,\"rows\":1,"
                "\"now\":100.0,\"seq\":106,\"t\":400.2}\n");
    ck_assert_int_eq(qc_sched_load_replay(path, &v, &n, &err), 0);
    ck_assert_str_eq(order_of(v, n), "101 102 106 103 104 105");
    free(v);
    /* A's answer (104) never passes the invoke of B's request, which the
     * server ran first (100): B's answer goes ahead of A's instead */
    write_lines("{\"type\":\"fault\",\"fault\":\"bandwidth\",\"worker\":-2,\"target\":0,"
                "\"seq\":90,\"t\":1.0}\n"
                "{\"type\":\"fault\",\"fault\":\"bandwidth\",\"worker\":-2,\"target\":1,"
                "\"seq\":91,\"t\":1.0}\n"
                "{\"type\":\"invoke\",\"worker\":0,\"op\":\"claim\",\"req\":1,\"seq\":201,"
                "\"t\":10.0}\n"
                "{\"type\":\"invoke\",\"worker\":1,\"op\":\"claim\",\"req\":1,\"seq\":202,"
                "\"t\":10.1}\n"
                "{\"type\":\"ok\",\"worker\":0,\"op\":\"claim\",\"req\":1,\"job\":2,\"rows\":1,"
                "\"now\":104.0,\"seq\":203,\"t\":400.0}\n"
                "{\"type\":\"ok\",\"worker\":1,\"op\":\"claim\",\"req\":1,\"job\":1,\"rows\":1,"
                "\"now\":100.0,\"seq\":204,\"t\":400.2}\n");
    ck_assert_int_eq(qc_sched_load_replay(path, &v, &n, &err), 0);
    ck_assert_str_eq(order_of(v, n), "201 202 204 203");
    free(v);
    /* without the toxic, the same: every worker's answers go in the
     * order the server ran them (decision 1140; before, only those behind
     * a toxic: "2 3 4 5 6 7 8 9 10 11") */
    write_lines(strstr(slow_link, "\n") + 1);
    ck_assert_int_eq(qc_sched_load_replay(path, &v, &n, &err), 0);
    ck_assert_str_eq(order_of(v, n), "2 7 3 4 5 6 8 10 9 11");
    free(v);
    unlink(path);
}
END_TEST

START_TEST(test_entries_that_found_a_lease_run_out_wait_for_it)
{
    qc_sched_entry *v = NULL;
    int n = 0;
    qc_err err = {0};
    write_lines(
        /* jobs 1 and 2 claimed (leases to 1500 and 1700); 3 claimed and
         * completed; the reap returns 1 and 2: its entry waits for the
         * lease that ran out last, job 2's */
        "{\"type\":\"ok\",\"worker\":0,\"op\":\"claim\",\"req\":1,\"job\":1,\"rows\":1,"
        "\"now\":700.0,\"lease_until\":1500.0,\"seq\":1,\"t\":1.0}\n"
        "{\"type\":\"ok\",\"worker\":1,\"op\":\"claim\",\"req\":1,\"job\":2,\"rows\":1,"
        "\"now\":700.0,\"lease_until\":1500.0,\"seq\":2,\"t\":2.0}\n"
        "{\"type\":\"ok\",\"worker\":1,\"op\":\"renew\",\"req\":2,\"job\":2,\"rows\":1,"
        "\"now\":900.0,\"lease_until\":1700.0,\"seq\":3,\"t\":3.0}\n"
        "{\"type\":\"ok\",\"worker\":2,\"op\":\"claim\",\"req\":1,\"job\":3,\"rows\":1,"
        "\"now\":700.0,\"lease_until\":1500.0,\"seq\":4,\"t\":4.0}\n"
        "{\"type\":\"ok\",\"worker\":2,\"op\":\"complete\",\"req\":2,\"job\":3,\"rows\":1,"
        "\"now\":800.0,\"seq\":5,\"t\":5.0}\n"
        "{\"type\":\"ok\",\"worker\":-1,\"op\":\"reap\",\"req\":1,\"job\":1,\"rows\":2,"
        "\"now\":1800.0,\"seq\":6,\"t\":6.0}\n"
        "{\"type\":\"ok\",\"worker\":-1,\"op\":\"reap\",\"req\":1,\"job\":2,\"rows\":2,"
        "\"now\":1800.0,\"seq\":7,\"t\":6.1}\n"
        /* an early reap (a live lease taken back: the bug to show again)
         * waits for nothing */
        "{\"type\":\"ok\",\"worker\":1,\"op\":\"claim\",\"req\":4,\"job\":4,\"rows\":1,"
        "\"now\":1810.0,\"lease_until\":2610.0,\"seq\":71,\"t\":7.0}\n"
        "{\"type\":\"ok\",\"worker\":-1,\"op\":\"reap\",\"req\":2,\"job\":4,\"rows\":1,"
        "\"now\":1820.0,\"seq\":72,\"t\":7.1}\n"
        /* a claim taking over job 3 after its complete: nothing to wait
         * for; job 2 again, released by the reap: nothing either */
        "{\"type\":\"ok\",\"worker\":2,\"op\":\"claim\",\"req\":3,\"job\":3,\"rows\":1,"
        "\"now\":1900.0,\"lease_until\":2700.0,\"seq\":8,\"t\":8.0}\n"
        "{\"type\":\"ok\",\"worker\":0,\"op\":\"claim\",\"req\":2,\"job\":2,\"rows\":1,"
        "\"now\":1900.0,\"lease_until\":2700.0,\"seq\":9,\"t\":9.0}\n"
        /* job 3's lease never given back and run out: taken over */
        "{\"type\":\"ok\",\"worker\":1,\"op\":\"claim\",\"req\":3,\"job\":3,\"rows\":1,"
        "\"now\":2800.0,\"lease_until\":3600.0,\"seq\":10,\"t\":10.0}\n"
        /* the enqueuer's fault (worker -1, as the reaper): no reaper's point */
        "{\"type\":\"fault\",\"fault\":\"notify_lost\",\"worker\":-1,\"job\":4,"
        "\"seq\":74,\"t\":7.3}\n"
        /* a claim of two statements and a COMMIT that took job 5's run
         * out lease over: its first statement's answer (claim.1) waits
         * for it too, not its invoke, nor w0's earlier entries */
        "{\"type\":\"ok\",\"worker\":0,\"op\":\"claim\",\"req\":5,\"job\":5,\"rows\":1,"
        "\"now\":1000.0,\"lease_until\":1200.0,\"seq\":75,\"t\":7.5}\n"
        "{\"type\":\"invoke\",\"worker\":0,\"op\":\"claim\",\"req\":6,\"seq\":76,\"t\":7.6}\n"
        "{\"type\":\"point\",\"point\":\"claim.1\",\"worker\":0,\"req\":6,\"seq\":77,\"t\":7.7}\n"
        "{\"type\":\"point\",\"point\":\"claim.commit\",\"worker\":0,\"req\":6,\"seq\":78,"
        "\"t\":7.8}\n"
        "{\"type\":\"ok\",\"worker\":0,\"op\":\"claim\",\"req\":6,\"job\":5,\"rows\":1,"
        "\"now\":1300.0,\"lease_until\":2100.0,\"seq\":79,\"t\":7.9}\n"
        /* an empty reap: replayed as one (no job), not as "any" */
        "{\"type\":\"ok\",\"worker\":-1,\"op\":\"reap\",\"req\":3,\"rows\":0,"
        "\"seq\":11,\"t\":11.0}\n"
        /* the run stops: what comes after is not ordered */
        "{\"type\":\"note\",\"note\":\"run stopping\",\"worker\":-3,\"seq\":80,\"t\":12.0}\n"
        "{\"type\":\"info\",\"worker\":2,\"op\":\"complete\",\"req\":9,\"job\":3,"
        "\"seq\":81,\"t\":13.0}\n");
    ck_assert_int_eq(qc_sched_load_replay(path, &v, &n, &err), 0);
    ck_assert_int_eq(n, 17);
    ck_assert_int_eq(v[9].where, 11);
    ck_assert(v[9].job == QC_SCHED_NO_JOB);
    for (int k = 0; k < n; k++) {
        int want = v[k].where == 6 || v[k].where == 10 || v[k].where == 77 || v[k].where == 79;
        ck_assert_int_ne(v[k].where, 81);
        ck_assert_msg(v[k].expiry == want, "entry seq %ld: expiry %d", v[k].where, v[k].expiry);
    }
    ck_assert_int_eq(v[5].where, 6);
    ck_assert_int_eq(v[5].expired_job, 2);
    ck_assert_int_eq(v[8].where, 10);
    ck_assert_int_eq(v[8].expired_job, 3);
    for (int k = 0; k < n; k++)
        if (v[k].where == 77) {
            ck_assert_str_eq(v[k].point, "claim.1");
            ck_assert_int_eq(v[k].expired_job, 5);
            ck_assert(v[k].start_lease == 1200.0);
        }
    free(v);
    unlink(path);
}
END_TEST

/* An edited ledger is refused with its line, not replayed as something
 * else (decision 1135). */
START_TEST(test_an_edited_ledger_is_refused_with_its_line)
{
    qc_sched_entry *v = NULL;
    int n = 0;
    qc_err err = {0};
    static const char *edits[] = {
        /* a worker the run does not have */
        "{\"type\":\"invoke\",\"worker\":5,\"op\":\"claim\",\"req\":1,\"seq\":2,\"t\":1.0}\n",
        /* one past int */
        "{\"type\":\"invoke\",\"worker\":9223372036854775807,\"op\":\"claim\",\"req\":1,"
        "\"seq\":2,\"t\":1.0}\n",
        "{\"type\":\"invoke\",\"worker\":-2147483649,\"op\":\"claim\",\"req\":1,\"seq\":2,"
        "\"t\":1.0}\n",
        /* a seq that is text, or negative */
        "{\"type\":\"invoke\",\"worker\":0,\"op\":\"claim\",\"req\":1,\"seq\":\"2\",\"t\":1.0}\n",
        "{\"type\":\"invoke\",\"worker\":0,\"op\":\"claim\",\"req\":1,\"seq\":-2,\"t\":1.0}\n"};
    for (size_t k = 0; k < sizeof edits / sizeof *edits; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "{\"type\":\"header\",\"seed\":1,\"workers\":2}\n"
                 "{\"type\":\"invoke\",\"worker\":1,\"op\":\"claim\",\"req\":1,\"seq\":1,"
                 "\"t\":0.5}\n%s",
                 edits[k]);
        write_lines(text);
        memset(&err, 0, sizeof err);
        ck_assert_int_eq(qc_sched_load_replay(path, &v, &n, &err), QC_EINVAL);
        ck_assert_msg(strstr(err.msg, ":3: ") != NULL, "edit %zu: %s", k, err.msg);
    }
    /* the unedited ledger loads */
    write_lines("{\"type\":\"header\",\"seed\":1,\"workers\":2}\n"
                "{\"type\":\"invoke\",\"worker\":1,\"op\":\"claim\",\"req\":1,\"seq\":1,\"t\":0.5}\n"
                "{\"type\":\"note\",\"note\":\"schedule abandoned\",\"worker\":-3,\"seq\":2}\n");
    ck_assert_int_eq(qc_sched_load_replay(path, &v, &n, &err), 0);
    ck_assert_int_eq(n, 1);
    free(v);
    unlink(path);
}
END_TEST

START_TEST(test_kept_attempt_is_the_one_that_reproduced_else_the_furthest)
{
    char msg[600];
    int rep, place;
    mkpath();
    /* attempt 1 diverges at c (seq 3, entry 3), attempt 2 at d (seq 4):
     * further; attempt 3 reproduces */
    qc_replay_search *rs = qc_replay_search_new(ents, 5, 10);
    ck_assert_int_eq(qc_replay_search_kept(rs, &rep, &place), 0); /* none run yet */
    ledger(path, 3, 2);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_int_eq(qc_replay_search_kept(rs, &rep, &place), 1);
    ck_assert_int_eq(rep, 0);
    ck_assert_int_eq(place, 2);
    ledger(path, 4, 3);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_int_eq(qc_replay_search_kept(rs, &rep, &place), 2);
    ck_assert_int_eq(rep, 0);
    ledger(path, 1, 0); /* diverged at once, but failed the same way */
    ck_assert_int_eq(qc_replay_search_next(rs, path, 1, msg, sizeof msg), 0);
    ck_assert_int_eq(qc_replay_search_kept(rs, &rep, &place), 3);
    ck_assert_int_eq(rep, 1);
    qc_replay_search_free(rs);

    /* none reproduces; the one that did not diverge got furthest; the
     * earliest among equals */
    rs = qc_replay_search_new(ents, 5, 3);
    ledger(path, 3, 2);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ledger(path, 3, 2);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 1);
    ck_assert_int_eq(qc_replay_search_kept(rs, &rep, &place), 1);
    ledger(path, -1, 0);
    ck_assert_int_eq(qc_replay_search_next(rs, path, 0, msg, sizeof msg), 0);
    ck_assert_int_eq(qc_replay_search_kept(rs, &rep, &place), 3);
    ck_assert_int_eq(rep, 0);
    ck_assert_int_eq(place, 5); /* the order's length: it did not diverge */
    qc_replay_search_free(rs);
    unlink(path);
}
END_TEST

/* Writes text into dir/name. */
static void put(const char *dir, const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* The text of dir/name ("" when it cannot be read). */
static const char *get(const char *dir, const char *name)
{
    static char buf[4096];
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "r");
    buf[0] = '\0';
    if (f != NULL) {
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        buf[k] = '\0';
        fclose(f);
    }
    return buf;
}

START_TEST(test_the_folder_keeps_the_kept_attempt)
{
    char out[128], a2[160], a3[160], a1[160], cmd[300];
    qc_err err = {0};
    snprintf(out, sizeof out, "/tmp/qchaos-check-keep-%d", (int)getpid());
    snprintf(a1, sizeof a1, "%s/attempt-1", out);
    snprintf(a2, sizeof a2, "%s/attempt-2", out);
    snprintf(a3, sizeof a3, "%s/attempt-3", out);
    qc_replay_attempt_dir(out, 1, cmd, sizeof cmd);
    ck_assert_str_eq(cmd, out);
    qc_replay_attempt_dir(out, 2, cmd, sizeof cmd);
    ck_assert_str_eq(cmd, a2);
    ck_assert_int_eq(mkdir(out, 0755), 0);
    /* a stale attempt of an earlier replay, and a folder that is not one */
    ck_assert_int_eq(mkdir(a3, 0755), 0);
    put(a3, "ledger.jsonl", "stale\n");
    snprintf(cmd, sizeof cmd, "%s/attempt-x", out);
    ck_assert_int_eq(mkdir(cmd, 0755), 0);
    ck_assert_int_eq(qc_replay_clear_attempts(out, &err), 1);
    ck_assert_int_ne(access(a3, F_OK), 0);
    ck_assert_int_eq(access(cmd, F_OK), 0);
    rmdir(cmd);
    /* attempt 1 in out, attempt 2 in out/attempt-2; attempt 2 is kept */
    put(out, "ledger.jsonl", "one\n");
    put(out, "results.json", "{\"checkers\": []}");
    ck_assert_int_eq(mkdir(a2, 0755), 0);
    put(a2, "ledger.jsonl", "two\n");
    put(a2, "results.json", "{\"checkers\": [], \"n\": 2}");
    ck_assert_int_eq(qc_replay_keep(out, 2, 2, &err), 0);
    ck_assert_str_eq(get(out, "ledger.jsonl"), "two\n");
    ck_assert_str_eq(get(a1, "ledger.jsonl"), "one\n");
    ck_assert_str_eq(get(a2, "ledger.jsonl"), "two\n");
    ck_assert_int_eq(qc_replay_annotate(out, "runs/x", 2, 2, 1, 0, 3, 5, &err), 0);
    const char *r = get(out, "results.json");
    ck_assert_msg(strstr(r, "\"kept\": 2") && strstr(r, "\"reproduced\": true") &&
                      strstr(r, "\"diverged_at_entry\": 4") && strstr(r, "attempt-2") &&
                      strstr(r, "\"n\": 2"),
                  "%s", r);
    /* the attempt's own results stay as they were */
    ck_assert_ptr_null(strstr(get(a2, "results.json"), "\"replay\""));
    /* one attempt: nothing moves; an unreadable results.json is an error */
    ck_assert_int_eq(qc_replay_keep(a2, 1, 1, &err), 0);
    ck_assert_str_eq(get(a2, "ledger.jsonl"), "two\n");
    ck_assert_int_ne(qc_replay_annotate(a3, "runs/x", 1, 1, 0, 0, -1, 5, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "results.json"));
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("replay");
    TCase *t = tcase_create("search");
    tcase_add_checked_fixture(t, setup, NULL);
    tcase_add_test(t, test_first_attempt_is_the_ledger_order);
    tcase_add_test(t, test_moves_the_diverging_action_ahead_then_later);
    tcase_add_test(t, test_moves_an_earlier_action_of_the_same_request);
    tcase_add_test(t, test_moves_an_earlier_action_one_place_later);
    tcase_add_test(t, test_moves_an_earlier_action_as_late_as_it_goes);
    tcase_add_test(t, test_the_taker_of_the_job_goes_first);
    tcase_add_test(t, test_an_early_read_goes_before_the_first_taker);
    tcase_add_test(t, test_stale_counts_attempts_that_got_no_further);
    tcase_add_test(t, test_slow_link_answers_go_in_the_servers_order);
    tcase_add_test(t, test_entries_that_found_a_lease_run_out_wait_for_it);
    tcase_add_test(t, test_an_edited_ledger_is_refused_with_its_line);
    tcase_add_test(t, test_stops_when_reproduced);
    tcase_add_test(t, test_stops_without_divergence);
    tcase_add_test(t, test_stops_at_max_attempts_and_when_no_move_is_left);
    tcase_add_test(t, test_divergence_of_a_missing_or_clean_ledger);
    tcase_add_test(t, test_entries_carry_when_their_action_began);
    tcase_add_test(t, test_a_server_abort_is_replayed_at_its_request);
    tcase_add_test(t, test_a_slow_lost_answer_does_not_hold_the_others);
    tcase_add_test(t, test_kept_attempt_is_the_one_that_reproduced_else_the_furthest);
    tcase_add_test(t, test_the_folder_keeps_the_kept_attempt);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
