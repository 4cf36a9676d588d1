/*
 * check_idle.c - bounded_idle_polling on hand-written ledgers: clean, and
 * violating each part (rate, pause, pickup, server count), asserting the
 * verdict, the count, the numbers in the message and the seq evidence.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/checkers.h"

/* Ledger text with ' for " (readability). */
static void check(const char *text, qc_check *c)
{
    char *s = strdup(text);
    ck_assert_ptr_nonnull(s);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    qc_history h;
    memset(&h, 0, sizeof h);
    qc_err err = {0};
    ck_assert_msg(qc_history_parse(&h, s, &err) == 0, "%s", err.msg);
    free(s);
    ck_assert_int_eq(qc_check_bounded_idle_polling(&h, c), 0);
    qc_history_fini(&h);
}

/* Bounds: 2 polls/s (C16's 0.5 s interval), pause 600 ms, pickup 1500 ms,
 * base = cap = 500 (no ramp). */
#define HEADER                                                                                     \
    "{'type':'header','seed':1,'idle_base_ms':500,'idle_cap_ms':500,'idle_jitter':0,"              \
    "'max_idle_polls_per_s':2,'max_idle_pause_ms':600,'max_pickup_ms':1500}\n"

/* Worker w's empty claim: invoke at t, answer at t+1, request id req. */
static void empty_claim(char *buf, size_t n, size_t *len, int w, double t, int *seq, int req)
{
    *len += (size_t)snprintf(buf + *len, n - *len,
                             "{'seq':%d,'t':%.1f,'type':'invoke','op':'claim','worker':%d,'inc':0,"
                             "'req':%d}\n"
                             "{'seq':%d,'t':%.1f,'type':'ok','op':'claim','worker':%d,'inc':0,"
                             "'req':%d,'rows':0}\n",
                             *seq, t, w, req, *seq + 1, t + 1, w, req);
    *seq += 2;
}

/* 4 s of polling every `every` ms by worker 0, starting at t0. */
static void streak(char *buf, size_t n, size_t *len, double t0, double every, int count,
                   int *seq, int *req)
{
    for (int i = 0; i < count; i++)
        empty_claim(buf, n, len, 0, t0 + i * every, seq, (*req)++);
}

START_TEST(test_idle_polling_every_500ms_passes)
{
    static char buf[65536];
    size_t len = (size_t)snprintf(buf, sizeof buf, "%s", HEADER);
    int seq = 1, req = 1;
    streak(buf, sizeof buf, &len, 0, 500, 9, &seq, &req); /* 4 s window, 9 polls */
    qc_check c;
    check(buf, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.nviolations, 0);
    /* 1 streak + 8 pauses */
    ck_assert_int_eq(c.opportunities, 9);
    free(c.v);
}
END_TEST

/* C16's right value: at most ceil(D x 2/s) + 2 polls. 4 s at 100 ms = 41
 * polls against ceil(4.001 x 2) + 2 = 11. */
START_TEST(test_idle_polling_busy_loop_fails_with_rate_and_bound)
{
    static char buf[65536];
    size_t len = (size_t)snprintf(buf, sizeof buf, "%s", HEADER);
    int seq = 1, req = 1;
    streak(buf, sizeof buf, &len, 0, 100, 41, &seq, &req);
    qc_check c;
    check(buf, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_msg(strstr(c.v[0].msg, "41 empty claims in 4001 ms"), "%s", c.v[0].msg);
    ck_assert_msg(strstr(c.v[0].msg, "(10.2/s)"), "%s", c.v[0].msg);
    ck_assert_msg(strstr(c.v[0].msg, "bound 2.00/s allows at most 11"), "%s", c.v[0].msg);
    ck_assert_int_eq(c.v[0].nseq, 2);
    ck_assert_int_eq(c.v[0].seq[0], 2);  /* first empty claim's answer */
    ck_assert_int_eq(c.v[0].seq[1], 82); /* last one's */
    free(c.v);
}
END_TEST

/* A pause of 3 s after an empty claim: the pause bound (600 ms). */
START_TEST(test_idle_polling_long_pause_fails)
{
    static char buf[65536];
    size_t len = (size_t)snprintf(buf, sizeof buf, "%s", HEADER);
    int seq = 1, req = 1;
    empty_claim(buf, sizeof buf, &len, 0, 0, &seq, req++);
    empty_claim(buf, sizeof buf, &len, 0, 500, &seq, req++);
    empty_claim(buf, sizeof buf, &len, 0, 3501, &seq, req++);
    qc_check c;
    check(buf, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_msg(strstr(c.v[0].msg, "paused 3000 ms after an empty claim; bound 600 ms"), "%s",
                  c.v[0].msg);
    ck_assert_int_eq(c.v[0].seq[0], 4);
    ck_assert_int_eq(c.v[0].seq[1], 6);
    free(c.v);
}
END_TEST

/* A job falls due at 1000 ms (enqueued at 300 with delay 700) on an empty
 * queue; worker 1's claim sent at 1500, after it fell due and before
 * anyone claimed it, found nothing: the queue missed a due job. */
START_TEST(test_idle_polling_due_job_missed_by_empty_claim_fails)
{
    const char *text =
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
               "{'seq':2,'t':1,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':0}\n"
               "{'seq':3,'t':300,'type':'ok','op':'enqueue','worker':-1,'job':5,'delay_ms':700}\n"
               "{'seq':4,'t':1500,'type':'invoke','op':'claim','worker':1,'inc':0,'req':2}\n"
               "{'seq':5,'t':1501,'type':'ok','op':'claim','worker':1,'inc':0,'req':2,'rows':0}\n"
               "{'seq':6,'t':1600,'type':'invoke','op':'claim','worker':0,'inc':0,'req':3,"
               "'pause_ms':180}\n"
               "{'seq':7,'t':1601,'type':'ok','op':'claim','worker':0,'inc':0,'req':3,'rows':1,"
               "'job':5,'token':'a'}\n";
    qc_check c;
    check(text, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_msg(c.v[0].job == 5, "%s", c.v[0].msg);
    ck_assert_msg(strstr(c.v[0].msg, "was due and ready (enqueued seq 3) but the claim by worker 1 "
                                     "sent at seq 4"),
                  "%s", c.v[0].msg);
    ck_assert_int_eq(c.v[0].seq[0], 3);
    ck_assert_int_eq(c.v[0].seq[1], 4);
    ck_assert_int_eq(c.v[0].seq[2], 5);
    free(c.v);
}
END_TEST

/* Decision 1119 (a failover in CI): job 5 was claimed by a claim whose
 * answer was lost (info, no job: the ledger does not know it took job 5),
 * so it was in flight under that lease when worker 1's claim found
 * nothing; the reaper took it back (an OK reap of job 5) and worker 0
 * claimed it.  The reap proves the job was held: no violation.  The same
 * ledger without the reap is the missed job above. */
START_TEST(test_idle_polling_job_held_by_unknown_claim_until_reaped_passes)
{
    const char *text =
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
               "{'seq':2,'t':1,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':0}\n"
               "{'seq':3,'t':300,'type':'ok','op':'enqueue','worker':-1,'job':5,'delay_ms':700}\n"
               "{'seq':4,'t':1100,'type':'invoke','op':'claim','worker':2,'inc':0,'req':9}\n"
               "{'seq':5,'t':1120,'type':'info','op':'claim','worker':2,'inc':0,'req':9,"
               "'error':'connection lost'}\n"
               "{'seq':6,'t':1500,'type':'invoke','op':'claim','worker':1,'inc':0,'req':2}\n"
               "{'seq':7,'t':1501,'type':'ok','op':'claim','worker':1,'inc':0,'req':2,'rows':0}\n"
               "{'seq':8,'t':1550,'type':'invoke','op':'reap','worker':-1,'inc':0,'req':4}\n"
               "{'seq':9,'t':1551,'type':'ok','op':'reap','worker':-1,'inc':0,'req':4,'rows':1,"
               "'job':5,'token':'x','state':'ready'}\n"
               "{'seq':10,'t':1600,'type':'invoke','op':'claim','worker':0,'inc':0,'req':3,"
               "'pause_ms':180}\n"
               "{'seq':11,'t':1601,'type':'ok','op':'claim','worker':0,'inc':0,'req':3,'rows':1,"
               "'job':5,'token':'a'}\n";
    qc_check c;
    check(text, &c);
    ck_assert_msg(c.verdict != QC_FAIL, "%s", c.nviolations ? c.v[0].msg : c.summary);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* A starved client (issue 11): worker 0 planned a 180 ms pause but its
 * thread woke 3 s later; the job that fell due meanwhile was claimed as
 * soon as it asked.  The policy planned the right pause and the queue gave
 * the job to the first claim after it fell due: no violation. */
START_TEST(test_idle_polling_starved_pause_and_late_pickup_passes)
{
    const char *text =
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
               "{'seq':2,'t':1,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':0}\n"
               "{'seq':3,'t':300,'type':'ok','op':'enqueue','worker':-1,'job':5,'delay_ms':700}\n"
               "{'seq':4,'t':3001,'type':'invoke','op':'claim','worker':0,'inc':0,'req':2,"
               "'pause_ms':180}\n"
               "{'seq':5,'t':3002,'type':'ok','op':'claim','worker':0,'inc':0,'req':2,'rows':1,"
               "'job':5,'token':'a'}\n";
    qc_check c;
    check(text, &c);
    ck_assert_msg(c.verdict == QC_PASS, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    free(c.v);
}
END_TEST

/* An empty claim that overlaps a claim which lost its connection (it may
 * have locked the due job and rolled back: SKIP LOCKED skips it) proves
 * nothing. */
START_TEST(test_idle_polling_empty_claim_beside_lost_claim_not_judged)
{
    const char *text =
        HEADER "{'seq':1,'t':0,'type':'ok','op':'enqueue','worker':-1,'job':5,'delay_ms':0}\n"
               "{'seq':2,'t':100,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
               "{'seq':3,'t':100,'type':'invoke','op':'claim','worker':1,'inc':0,'req':2}\n"
               "{'seq':4,'t':101,'type':'ok','op':'claim','worker':1,'inc':0,'req':2,'rows':0}\n"
               "{'seq':5,'t':102,'type':'info','op':'claim','worker':0,'inc':0,'req':1,"
               "'error':'connection lost'}\n"
               "{'seq':6,'t':300,'type':'invoke','op':'claim','worker':1,'inc':0,'req':3,"
               "'pause_ms':180}\n"
               "{'seq':7,'t':301,'type':'ok','op':'claim','worker':1,'inc':0,'req':3,'rows':1,"
               "'job':5,'token':'a'}\n";
    qc_check c;
    check(text, &c);
    ck_assert_msg(c.nviolations == 0, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    free(c.v);
}
END_TEST

/* The same job claimed 200 ms after it fell due: PASS; no empty claim ran
 * after it fell due, so no pickup was judged. */
START_TEST(test_idle_polling_quick_pickup_passes)
{
    const char *text =
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
               "{'seq':2,'t':1,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':0}\n"
               "{'seq':3,'t':300,'type':'ok','op':'enqueue','worker':-1,'job':5,'delay_ms':700}\n"
               "{'seq':4,'t':301,'type':'ok','op':'enqueue','worker':-1,'job':6,'delay_ms':700}\n"
               "{'seq':5,'t':500,'type':'invoke','op':'claim','worker':0,'inc':0,'req':2}\n"
               "{'seq':6,'t':501,'type':'ok','op':'claim','worker':0,'inc':0,'req':2,'rows':0}\n"
               "{'seq':7,'t':1000,'type':'invoke','op':'claim','worker':0,'inc':0,'req':3}\n"
               "{'seq':8,'t':1200,'type':'ok','op':'claim','worker':0,'inc':0,'req':3,'rows':1,"
               "'job':5,'token':'a'}\n"
               "{'seq':9,'t':3000,'type':'invoke','op':'claim','worker':0,'inc':0,'req':4}\n"
               "{'seq':10,'t':3001,'type':'ok','op':'claim','worker':0,'inc':0,'req':4,'rows':1,"
               "'job':6,'token':'b'}\n";
    qc_check c;
    check(text, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    /* 1 streak, 2 pauses (1->500, 501->1000) */
    ck_assert_int_eq(c.opportunities, 3);
    free(c.v);
}
END_TEST

/* The server counted far more claim statements than the ledger shows: the
 * harness's word does not stand alone. */
START_TEST(test_idle_polling_server_count_mismatch_fails)
{
    static char buf[65536];
    size_t len = (size_t)snprintf(buf, sizeof buf, "%s", HEADER);
    int seq = 1, req = 1;
    streak(buf, sizeof buf, &len, 0, 500, 5, &seq, &req);
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "{'seq':%d,'t':3000,'type':'note','note':'server_count','op':'claim',"
                            "'calls':500}\n",
                            seq);
    qc_check c;
    check(buf, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_msg(strstr(c.v[0].msg, "5 claim requests (5 answered) but the server counted 500"),
                  "%s", c.v[0].msg);
    ck_assert_int_eq(c.v[0].seq[0], seq);
    free(c.v);
}
END_TEST

/* On a shared server (--dsn: qchaos did not start it), other clients may
 * run the same claim statement: a higher server count proves nothing there,
 * a lower one still does. */
START_TEST(test_idle_polling_server_count_higher_on_shared_server_passes)
{
    static char buf[65536];
    size_t len = (size_t)snprintf(buf, sizeof buf, "%s", HEADER);
    int seq = 1, req = 1;
    streak(buf, sizeof buf, &len, 0, 500, 5, &seq, &req);
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "{'seq':%d,'t':3000,'type':'note','note':'server_count','op':'claim',"
                            "'calls':500,'exclusive':false}\n",
                            seq);
    qc_check c;
    check(buf, &c);
    ck_assert_msg(c.nviolations == 0, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    free(c.v);
}
END_TEST

START_TEST(test_idle_polling_server_count_agrees_passes)
{
    static char buf[65536];
    size_t len = (size_t)snprintf(buf, sizeof buf, "%s", HEADER);
    int seq = 1, req = 1;
    streak(buf, sizeof buf, &len, 0, 500, 5, &seq, &req);
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "{'seq':%d,'t':3000,'type':'note','note':'server_count','op':'claim',"
                            "'calls':5}\n",
                            seq);
    qc_check c;
    check(buf, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_msg(strstr(c.summary, "ledger 5 claim requests (5 answered), server 5"), "%s",
                  c.summary);
    free(c.v);
}
END_TEST

/* No empty claims, no pickups, no server count: nothing to judge. */
/* ---- LISTEN/NOTIFY wake-ups (issue 17, C28) ----
 * Worker 0 LISTENs (seq 1), claims empty (2, 3) and waits from t 22 on a
 * 6000 ms fallback timer; job 7 is enqueued with its notify in the
 * enqueue's transaction (notify_t 99, answered at t 100, seq 4).  The
 * bound is 1500 ms. */
#define LISTEN_OPEN                                                                                \
    "{'seq':1,'t':10,'type':'note','note':'listen','state':'open','worker':0,'inc':0}\n"           \
    "{'seq':2,'t':20,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"                   \
    "{'seq':3,'t':21,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':0}\n"
#define ENQ7 "{'seq':4,'t':100,'type':'ok','op':'enqueue','worker':-1,'job':7,'notify':'commit'," \
             "'notify_t':99}\n"

/* The notification never came: the worker slept to its timer at 6022 and
 * claimed job 7 only then, 5922 ms after it was committed. */
START_TEST(test_idle_listen_timer_without_notification_fails)
{
    qc_check c;
    check(HEADER LISTEN_OPEN ENQ7
          "{'seq':5,'t':6030,'type':'invoke','op':'claim','worker':0,'inc':0,'req':2,"
          "'wake':'poll','wait_t':22,'wait_ms':6000}\n"
          "{'seq':6,'t':6031,'type':'ok','op':'claim','worker':0,'inc':0,'req':2,'rows':1,"
          "'job':7,'token':'a'}\n",
          &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert(c.v[0].job == 7);
    ck_assert_msg(strstr(c.v[0].msg, "job 7 (notify sent at 99 ms, enqueue answered at 100) was "
                                     "not claimed within 1500 ms: worker 0 (incarnation 0), "
                                     "listening since 10 ms, waited from 22 ms to its fallback "
                                     "timer at 6022 ms with no notification"),
                  "%s", c.v[0].msg);
    ck_assert_int_eq(c.v[0].nseq, 3);
    int64_t want[3] = {1, 4, 5}, got[3] = {c.v[0].seq[0], c.v[0].seq[1], c.v[0].seq[2]};
    for (int i = 0; i < 3; i++) {
        int found = 0;
        for (int k = 0; k < 3; k++)
            found |= got[k] == want[i];
        ck_assert_msg(found, "seq %lld not in the evidence", (long long)want[i]);
    }
    free(c.v);
}
END_TEST

/* The same wait, but worker 1 was woken and claimed job 7 at t 150: the
 * job was picked up within the bound (judged: one opportunity), and the
 * 6000 ms listen wait is not a pause of the idle policy. */
START_TEST(test_idle_listen_job_picked_up_by_another_passes)
{
    qc_check c;
    check(HEADER LISTEN_OPEN ENQ7
          "{'seq':5,'t':150,'type':'invoke','op':'claim','worker':1,'inc':0,'req':9,"
          "'wake':'notify','wait_t':30,'wait_ms':6000}\n"
          "{'seq':6,'t':151,'type':'ok','op':'claim','worker':1,'inc':0,'req':9,'rows':1,"
          "'job':7,'token':'a'}\n"
          "{'seq':7,'t':6030,'type':'invoke','op':'claim','worker':0,'inc':0,'req':2,"
          "'wake':'poll','wait_t':22,'wait_ms':6000}\n"
          "{'seq':8,'t':6031,'type':'ok','op':'claim','worker':0,'inc':0,'req':2,'rows':0}\n",
          &c);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_int_eq(c.verdict, QC_PASS);
    /* the streak of 2 empty claims of worker 0, and job 7 judged; no pause */
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_msg(strstr(c.summary, "0 pauses"), "%s", c.summary);
    ck_assert_msg(strstr(c.summary, "1 notified jobs judged"), "%s", c.summary);
    free(c.v);
}
END_TEST

/* A wait that a notification ended (wake "notify") cannot show one that
 * never came: worker 0, woken at 2,000 ms, past job 7's bound (100 +
 * 1,500 ms), is no opportunity for the pickup rule (decision 1142; it
 * counted one and could not fail). */
START_TEST(test_idle_listen_notify_wait_not_judged)
{
    qc_check c;
    check(HEADER LISTEN_OPEN ENQ7
          "{'seq':5,'t':2000,'type':'invoke','op':'claim','worker':0,'inc':0,'req':2,"
          "'wake':'notify','wait_t':22,'wait_ms':6000}\n"
          "{'seq':6,'t':2001,'type':'ok','op':'claim','worker':0,'inc':0,'req':2,'rows':1,"
          "'job':7,'token':'a'}\n",
          &c);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_msg(strstr(c.summary, "0 notified jobs judged"), "%s", c.summary);
    free(c.v);
}
END_TEST

/* The listen connection was lost and opened again after the notify was
 * sent: the notification could not reach it, so the long wait is not
 * judged (the fallback is the only path then). */
START_TEST(test_idle_listen_relisten_after_notify_not_judged)
{
    qc_check c;
    check(HEADER LISTEN_OPEN
          "{'seq':4,'t':50,'type':'note','note':'listen','state':'lost','worker':0,'inc':0}\n"
          ENQ7
          "{'seq':5,'t':120,'type':'note','note':'listen','state':'open','worker':0,'inc':0}\n"
          "{'seq':6,'t':6030,'type':'invoke','op':'claim','worker':0,'inc':0,'req':2,"
          "'wake':'poll','wait_t':22,'wait_ms':6000}\n"
          "{'seq':7,'t':6031,'type':'ok','op':'claim','worker':0,'inc':0,'req':2,'rows':1,"
          "'job':7,'token':'a'}\n",
          &c);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_msg(strstr(c.summary, "0 notified jobs judged"), "%s", c.summary);
    free(c.v);
}
END_TEST

/* The worker's claim before the wait was sent after the notify (t 99.5 >
 * 99, before the enqueue's answer): the notification may have been read
 * by an earlier wait whose claim missed the job, so this wait is not
 * judged against it. */
START_TEST(test_idle_listen_notify_before_previous_claim_not_judged)
{
    qc_check c;
    check(HEADER
          "{'seq':1,'t':10,'type':'note','note':'listen','state':'open','worker':0,'inc':0}\n"
          "{'seq':2,'t':99.5,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
          "{'seq':3,'t':100,'type':'ok','op':'enqueue','worker':-1,'job':7,'notify':'commit',"
          "'notify_t':99}\n"
          "{'seq':4,'t':101,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':0}\n"
          "{'seq':7,'t':6130,'type':'invoke','op':'claim','worker':0,'inc':0,'req':2,"
          "'wake':'poll','wait_t':102,'wait_ms':6000}\n"
          "{'seq':8,'t':6131,'type':'ok','op':'claim','worker':0,'inc':0,'req':2,'rows':1,"
          "'job':7,'token':'a'}\n",
          &c);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_msg(strstr(c.summary, "0 notified jobs judged"), "%s", c.summary);
    free(c.v);
}
END_TEST

/* The run ended while worker 0 still waited (note "listen wait", "stop",
 * at t 3000, nothing in its socket) and job 7 was claimed only by worker
 * 1 at t 2900, 2800 ms after its commit: the silence up to the note is
 * the evidence. */
START_TEST(test_idle_listen_wait_cut_by_end_of_run_fails)
{
    qc_check c;
    check(HEADER LISTEN_OPEN ENQ7
          "{'seq':5,'t':2900,'type':'invoke','op':'claim','worker':1,'inc':0,'req':9}\n"
          "{'seq':6,'t':2901,'type':'ok','op':'claim','worker':1,'inc':0,'req':9,'rows':1,"
          "'job':7,'token':'a'}\n"
          "{'seq':7,'t':3000,'type':'note','note':'listen wait','wake':'stop','worker':0,"
          "'inc':0,'wait_t':22,'wait_ms':6000}\n",
          &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_msg(strstr(c.v[0].msg, "waited from 22 ms to the end of the run at 3000 ms with no "
                                     "notification"),
                  "%s", c.v[0].msg);
    free(c.v);
}
END_TEST

/* A dead listen connection answering every wait at once: 40 empty claims
 * in 196 ms, each after a "lost" wake.  The rate rule catches the hot loop
 * (ceil(0.196 x 2) + 2 = 3 allowed); the waits are not judged as pauses. */
START_TEST(test_idle_listen_dead_connection_hot_loop_fails)
{
    static char buf[65536];
    size_t len = (size_t)snprintf(buf, sizeof buf, "%s", HEADER);
    int seq = 1;
    for (int i = 0; i < 40; i++) {
        len += (size_t)snprintf(buf + len, sizeof buf - len,
                                "{'seq':%d,'t':%.1f,'type':'invoke','op':'claim','worker':0,"
                                "'inc':0,'req':%d%s}\n"
                                "{'seq':%d,'t':%.1f,'type':'ok','op':'claim','worker':0,"
                                "'inc':0,'req':%d,'rows':0}\n",
                                seq, i * 5.0, i + 1,
                                i ? ",'wake':'lost','wait_t':1,'wait_ms':1000" : "", seq + 1,
                                i * 5.0 + 1, i + 1);
        seq += 2;
    }
    qc_check c;
    check(buf, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_msg(strstr(c.v[0].msg, "40 empty claims in 196 ms"), "%s", c.v[0].msg);
    ck_assert_msg(strstr(c.summary, "0 pauses"), "%s", c.summary);
    free(c.v);
}
END_TEST

START_TEST(test_idle_polling_busy_queue_inconclusive)
{
    const char *text =
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
               "{'seq':2,'t':1,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':1,"
               "'job':1,'token':'a'}\n";
    qc_check c;
    check(text, &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("idle");
    TCase *tc = tcase_create("bounded_idle_polling");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_idle_polling_every_500ms_passes);
    tcase_add_test(tc, test_idle_polling_busy_loop_fails_with_rate_and_bound);
    tcase_add_test(tc, test_idle_polling_long_pause_fails);
    tcase_add_test(tc, test_idle_polling_due_job_missed_by_empty_claim_fails);
    tcase_add_test(tc, test_idle_polling_job_held_by_unknown_claim_until_reaped_passes);
    tcase_add_test(tc, test_idle_polling_starved_pause_and_late_pickup_passes);
    tcase_add_test(tc, test_idle_polling_empty_claim_beside_lost_claim_not_judged);
    tcase_add_test(tc, test_idle_polling_quick_pickup_passes);
    tcase_add_test(tc, test_idle_polling_server_count_mismatch_fails);
    tcase_add_test(tc, test_idle_polling_server_count_agrees_passes);
    tcase_add_test(tc, test_idle_polling_server_count_higher_on_shared_server_passes);
    tcase_add_test(tc, test_idle_polling_busy_queue_inconclusive);
    tcase_add_test(tc, test_idle_listen_timer_without_notification_fails);
    tcase_add_test(tc, test_idle_listen_job_picked_up_by_another_passes);
    tcase_add_test(tc, test_idle_listen_relisten_after_notify_not_judged);
    tcase_add_test(tc, test_idle_listen_notify_wait_not_judged);
    tcase_add_test(tc, test_idle_listen_dead_connection_hot_loop_fails);
    tcase_add_test(tc, test_idle_listen_notify_before_previous_claim_not_judged);
    tcase_add_test(tc, test_idle_listen_wait_cut_by_end_of_run_fails);
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
