/*
 * check_witness.c - the server-side witness (issue 13): merging witness
 * rows into the history (links, resolved info outcomes), the disagreement
 * checker witness_agrees and the owner checker witness_owner on ledgers
 * that violate them and ledgers that do not, witness rows confirming other
 * checkers' violations, "missing: done", the [witness] configuration, and
 * end-to-end runs with the witness on against the real PostgreSQL
 * (QC_TEST_DSN) and MariaDB (QC_TEST_ODBC) servers tests/run.sh starts.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../backends/protocol.h"
#include "../harness/checkers.h"
#include "../harness/scenario.h"
#include "../harness/witness.h"
#include "../reports/report.h"
#include "ledger_fixture.h"

#define HDR                                                                                        \
    "{'type':'header','seed':1,'lease_ms':5000,'model':'lease','workers':2,'jobs':1,"              \
    "'witness':{'table':'qchaos.jobs','id':'id','state':'state','token':'token',"                  \
    "'owner':'locked_by'}}\n"

/* Enqueue, claim (token a), a complete whose answer was lost, its retry
 * answered rows 0; the snapshot says done. */
#define LOST_ACK_BODY                                                                              \
    "{'seq':1,'type':'invoke','op':'enqueue','worker':-1,'req':0}\n"                               \
    "{'seq':2,'type':'ok','op':'enqueue','worker':-1,'req':0,'job':1,'rows':1}\n"                  \
    "{'seq':3,'t':10,'type':'invoke','op':'claim','worker':1,'inc':0,'req':1}\n"                   \
    "{'seq':4,'t':11,'type':'ok','op':'claim','worker':1,'inc':0,'req':1,'rows':1,'job':1,"        \
    "'token':'a','now':1000,'lease_until':6000}\n"                                                 \
    "{'seq':5,'t':12,'type':'invoke','op':'complete','worker':1,'inc':0,'req':2,'job':1,"          \
    "'token':'a'}\n"                                                                               \
    "{'seq':6,'t':13,'type':'info','op':'complete','worker':1,'inc':0,'req':2,'job':1,"            \
    "'error':'connection lost'}\n"                                                                 \
    "{'seq':7,'t':20,'type':'invoke','op':'complete','worker':1,'inc':0,'req':3,'job':1,"          \
    "'token':'a'}\n"                                                                               \
    "{'seq':8,'t':21,'type':'ok','op':'complete','worker':1,'inc':0,'req':3,'job':1,'rows':0}\n"   \
    "{'seq':9,'type':'snapshot','job':1,'state':'done','attempt':1,'token':'a'}\n"

#define ROW_INSERT                                                                                 \
    "{'seq':10,'type':'witness','wid':1,'session':'qchaos-control','change':'insert','row':'1',"   \
    "'old_state':null,'new_state':'ready','txid':100}\n"
#define ROW_CLAIM                                                                                  \
    "{'seq':11,'type':'witness','wid':2,'session':'qchaos-w1.0','change':'update','row':'1',"      \
    "'old_state':'ready','new_state':'inflight','old_token':null,'new_token':'a',"                 \
    "'new_owner':'w1.0','txid':101}\n"
#define ROW_COMPLETE                                                                               \
    "{'seq':12,'type':'witness','wid':3,'session':'qchaos-w1.0','change':'update','row':'1',"      \
    "'old_state':'inflight','new_state':'done','old_token':'a','new_token':'a',"                   \
    "'old_owner':'w1.0','txid':102}\n"
#define NOTE_DONE "{'seq':13,'type':'note','note':'witness','rows':3,'complete':true}\n"
#define END "{'seq':14,'type':'end','drained':true}\n"

static const qc_event *ev_seq(const qc_history *h, int64_t seq)
{
    for (size_t i = 0; i < h->n; i++)
        if (h->ev[i].seq == seq)
            return &h->ev[i];
    ck_abort_msg("no seq %lld", (long long)seq);
    return NULL;
}

START_TEST(test_merge_lost_ack_committed_resolved)
{
    qc_history h;
    qc_witness_counts wc;

    memset(&h, 0, sizeof h);
    load(&h, HDR LOST_ACK_BODY ROW_INSERT ROW_CLAIM ROW_COMPLETE NOTE_DONE END);
    ck_assert_int_eq(h.info.witness, 1);
    ck_assert_int_eq(h.info.witness_complete, 1);
    const qc_event *w = ev_seq(&h, 11);
    ck_assert_int_eq(w->type, QC_EV_WITNESS);
    ck_assert_int_eq(qc_x(w->x)->w_actor, QC_ACTOR_WORKER);
    ck_assert_int_eq(qc_x(w->x)->w_worker, 1);
    ck_assert_int_eq(qc_x(w->x)->w_job, 1);
    /* the witness row's fields never pose as a request's */
    ck_assert(w->job == QC_NO_JOB && qc_s(w->token) == NULL && w->op == QC_OP_NONE);
    /* the claim's answer is linked to its row, the lost complete to its
     * commit; the retry (rows 0) to nothing */
    ck_assert_int_eq(h.ev[ev_seq(&h, 4)->w_ev].seq, 11);
    ck_assert_int_eq(ev_seq(&h, 6)->w_resolved, 1);
    ck_assert_int_eq(h.ev[ev_seq(&h, 6)->w_ev].seq, 12);
    ck_assert_int_eq(ev_seq(&h, 8)->w_ev, -1);
    qc_witness_counts_get(&h, &wc);
    ck_assert_int_eq(wc.rows, 3);
    ck_assert_int_eq(wc.info_complete, 1);
    ck_assert_int_eq(wc.committed, 1);
    ck_assert_int_eq(wc.unresolved, 0);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_merge_lost_ack_not_committed_resolved_as_not)
{
    qc_history h;
    qc_check c;

    memset(&h, 0, sizeof h);
    /* no complete row: the lost complete did not commit */
    load(&h, HDR LOST_ACK_BODY ROW_INSERT ROW_CLAIM NOTE_DONE END);
    ck_assert_int_eq(ev_seq(&h, 6)->w_resolved, 0);
    qc_history_fini(&h);
    /* read in part: unknown, and the client's changes are not judged */
    memset(&h, 0, sizeof h);
    load(&h, HDR LOST_ACK_BODY ROW_INSERT ROW_CLAIM
         "{'seq':13,'type':'note','note':'witness','rows':2,'complete':false}\n" END);
    ck_assert_int_eq(ev_seq(&h, 6)->w_resolved, -1);
    qc_history_fini(&h);
    run(qc_check_witness_agrees,
        HDR LOST_ACK_BODY ROW_INSERT "{'seq':13,'type':'note','note':'witness','complete':false}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_msg(strstr(c.summary, "not judged") != NULL, "%s", c.summary);
    free(c.v);
}
END_TEST

START_TEST(test_agrees_matching_accounts_pass)
{
    qc_check c;

    run(qc_check_witness_agrees, HDR LOST_ACK_BODY ROW_INSERT ROW_CLAIM ROW_COMPLETE NOTE_DONE END,
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.nviolations, 0);
    /* enqueue and claim answers, and three rows */
    ck_assert_int_eq(c.opportunities, 5);
    free(c.v);
}
END_TEST

START_TEST(test_agrees_ok_without_row_fails)
{
    qc_check c;
    const int64_t seqs[] = {8};

    /* the retry is answered rows 1, the lost one committed nothing: the
     * client says it changed the row, the server has no such change */
    char *text = strdup(HDR LOST_ACK_BODY ROW_INSERT ROW_CLAIM NOTE_DONE END);
    char *p = strstr(text, "'rows':0}");
    ck_assert_ptr_nonnull(p);
    p[7] = '1';
    run(qc_check_witness_agrees, text, &c);
    free(text);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    assert_violation(&c, 0, 1, seqs, 1);
    ck_assert_msg(strstr(c.v[0].msg, "no such row change") != NULL, "%s", c.v[0].msg);
    free(c.v);
}
END_TEST

START_TEST(test_agrees_row_of_failed_request_fails)
{
    qc_check c;
    const int64_t seqs[] = {6, 12};

    /* the complete was answered "fail" (it did not take effect), but the
     * server committed it */
    char *text = strdup(HDR LOST_ACK_BODY ROW_INSERT ROW_CLAIM ROW_COMPLETE NOTE_DONE END);
    char *p = strstr(text, "'type':'info'");
    ck_assert_ptr_nonnull(p);
    memcpy(p, "'type':'fail'", 13);
    run(qc_check_witness_agrees, text, &c);
    free(text);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    assert_violation(&c, 0, 1, seqs, 2);
    ck_assert_msg(strstr(c.v[0].msg, "told its request failed") != NULL, "%s", c.v[0].msg);
    free(c.v);
}
END_TEST

START_TEST(test_agrees_foreign_session_fails)
{
    qc_check c;
    const int64_t seqs[] = {13};

    run(qc_check_witness_agrees,
        HDR LOST_ACK_BODY ROW_INSERT ROW_CLAIM ROW_COMPLETE
        "{'seq':13,'type':'witness','wid':4,'session':'psql','change':'update','row':'1',"
        "'old_state':'done','new_state':'ready'}\n"
        "{'seq':14,'type':'note','note':'witness','rows':4,'complete':true}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    assert_violation(&c, 0, 1, seqs, 1);
    ck_assert_msg(strstr(c.v[0].msg, "'psql'") != NULL, "%s", c.v[0].msg);
    free(c.v);
}
END_TEST

START_TEST(test_witness_checkers_without_witness_not_applicable)
{
    qc_check c;
    const char *nohdr = "{'type':'header','seed':1,'lease_ms':5000}\n";
    char text[4096];

    snprintf(text, sizeof text, "%s%s", nohdr, LOST_ACK_BODY);
    run(qc_check_witness_agrees, text, &c);
    ck_assert_int_eq(c.verdict, QC_NOT_APPLICABLE);
    free(c.v);
    run(qc_check_witness_owner, text, &c);
    ck_assert_int_eq(c.verdict, QC_NOT_APPLICABLE);
    free(c.v);
}
END_TEST

/* Worker 1 claims (a), the reaper gives the job back, worker 2 claims (b);
 * then a completion of the job by the session named in ROW_LAST. */
#define OWNER_BODY(LAST_SESSION)                                                                   \
    "{'seq':1,'type':'witness','wid':1,'session':'qchaos-control','change':'insert','row':'7',"    \
    "'new_state':'ready'}\n"                                                                       \
    "{'seq':2,'type':'witness','wid':2,'session':'qchaos-w1.0','change':'update','row':'7',"       \
    "'old_state':'ready','new_state':'inflight','new_token':'a'}\n"                                \
    "{'seq':3,'type':'witness','wid':3,'session':'qchaos-reaper','change':'update','row':'7',"     \
    "'old_state':'inflight','new_state':'ready','old_token':'a','new_token':null}\n"               \
    "{'seq':4,'type':'witness','wid':4,'session':'qchaos-w2.0','change':'update','row':'7',"       \
    "'old_state':'ready','new_state':'inflight','new_token':'b'}\n"                                \
    "{'seq':5,'type':'witness','wid':5,'session':'" LAST_SESSION "','change':'update','row':'7',"  \
    "'old_state':'inflight','new_state':'done','old_token':'b','new_token':'b'}\n"

START_TEST(test_owner_stale_session_accepted_fails)
{
    qc_check c;
    const int64_t seqs[] = {4, 5};

    run(qc_check_witness_owner, HDR OWNER_BODY("qchaos-w1.0"), &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_int_eq(c.opportunities, 1);
    assert_violation(&c, 0, 7, seqs, 2);
    ck_assert_msg(strstr(c.v[0].msg, "qchaos-w2.0 held its latest claim") != NULL, "%s",
                  c.v[0].msg);
    free(c.v);
}
END_TEST

START_TEST(test_owner_owner_completes_passes)
{
    qc_check c;

    run(qc_check_witness_owner, HDR OWNER_BODY("qchaos-w2.0"), &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    free(c.v);
    /* a reaped job finished by its old owner: no one held it */
    run(qc_check_witness_owner,
        HDR "{'seq':2,'type':'witness','wid':2,'session':'qchaos-w1.0','change':'update',"
            "'row':'7','old_state':'ready','new_state':'inflight','new_token':'a'}\n"
            "{'seq':3,'type':'witness','wid':3,'session':'qchaos-reaper','change':'update',"
            "'row':'7','old_state':'inflight','new_state':'ready','old_token':'a'}\n"
            "{'seq':4,'type':'witness','wid':4,'session':'qchaos-w1.0','change':'update',"
            "'row':'7','old_state':'ready','new_state':'done'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_msg(strstr(c.v[0].msg, "no session held it") != NULL, "%s", c.v[0].msg);
    free(c.v);
}
END_TEST

/* A protocol with no token column: the owner of a row change is the
 * session that made it, and the claims are the rows OK claims made. */
#define TOKENLESS_HDR                                                                              \
    "{'type':'header','seed':1,'lease_ms':5000,'witness':{'table':'q','id':'id',"                  \
    "'state':'state','token':null,'owner':null}}\n"
#define TOKENLESS_BODY(COMPLETER)                                                                  \
    "{'seq':1,'type':'ok','op':'claim','worker':1,'inc':0,'req':1,'rows':1,'job':7,"               \
    "'token':'x','now':1,'lease_until':9}\n"                                                       \
    "{'seq':2,'type':'ok','op':'reap','worker':-1,'req':2,'job':7,'state':'ready'}\n"              \
    "{'seq':3,'type':'ok','op':'claim','worker':2,'inc':0,'req':3,'rows':1,'job':7,"               \
    "'token':'y','now':20,'lease_until':29}\n"                                                     \
    "{'seq':4,'type':'invoke','op':'complete','worker':" COMPLETER ",'inc':0,'req':4,'job':7}\n"   \
    "{'seq':5,'type':'ok','op':'complete','worker':" COMPLETER ",'inc':0,'req':4,'job':7,"         \
    "'rows':1}\n"                                                                                  \
    "{'seq':6,'type':'witness','wid':1,'session':'qchaos-w1.0','change':'update','row':'7',"       \
    "'old_state':'ready','new_state':'inflight'}\n"                                                \
    "{'seq':7,'type':'witness','wid':2,'session':'qchaos-reaper','change':'update','row':'7',"     \
    "'old_state':'inflight','new_state':'ready'}\n"                                                \
    "{'seq':8,'type':'witness','wid':3,'session':'qchaos-w2.0','change':'update','row':'7',"       \
    "'old_state':'ready','new_state':'inflight'}\n"                                                \
    "{'seq':9,'type':'witness','wid':4,'session':'qchaos-w" COMPLETER ".0','change':'update',"     \
    "'row':'7','old_state':'inflight','new_state':'done'}\n"                                       \
    "{'seq':10,'type':'note','note':'witness','rows':4,'complete':true}\n"

START_TEST(test_owner_tokenless_protocol_judged_by_session)
{
    qc_check c;
    const int64_t seqs[] = {8, 9};

    run(qc_check_witness_owner, TOKENLESS_HDR TOKENLESS_BODY("1"), &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    assert_violation(&c, 0, 7, seqs, 2);
    ck_assert_msg(strstr(c.summary, "claims by linked claim requests") != NULL, "%s", c.summary);
    free(c.v);
    run(qc_check_witness_owner, TOKENLESS_HDR TOKENLESS_BODY("2"), &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    free(c.v);
    run(qc_check_witness_agrees, TOKENLESS_HDR TOKENLESS_BODY("1"), &c);
    ck_assert_int_eq(c.verdict, QC_PASS); /* the accounts agree: the queue did it */
    free(c.v);
}
END_TEST

/* The lost complete committed and its retry was answered rows 1 as well
 * (the protocol does not check the state): double_complete sees two
 * completes only with the witness, and names its rows. */
START_TEST(test_double_complete_from_witness_fails_with_rows)
{
    qc_history h;
    qc_check *c = NULL;
    size_t n = 0;

    char *text = strdup(HDR LOST_ACK_BODY ROW_INSERT ROW_CLAIM ROW_COMPLETE
                        "{'seq':13,'type':'witness','wid':4,'session':'qchaos-w1.0','change':"
                        "'update','row':'1','old_state':'done','new_state':'done','old_token':"
                        "'a','new_token':'a','txid':103}\n"
                        "{'seq':14,'type':'note','note':'witness','rows':4,'complete':true}\n");
    char *p = strstr(text, "'rows':0}");
    ck_assert_ptr_nonnull(p);
    p[7] = '1';
    memset(&h, 0, sizeof h);
    load(&h, text);
    free(text);
    ck_assert_int_eq(ev_seq(&h, 6)->w_resolved, 1);
    ck_assert_int_eq(qc_check_all(&h, &c, &n), 0);
    const qc_check *dc = NULL, *wa = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(c[i].name, "double_complete"))
            dc = &c[i];
        if (!strcmp(c[i].name, "witness_agrees"))
            wa = &c[i];
    }
    ck_assert_ptr_nonnull(dc);
    ck_assert_int_eq(dc->verdict, QC_FAIL);
    ck_assert_int_eq(dc->nviolations, 1);
    ck_assert_int_eq(dc->v[0].job, 1);
    /* the two completes' rows confirm it */
    ck_assert_int_eq(dc->v[0].nwitness, 2);
    ck_assert(dc->v[0].wseq[0] == 12 || dc->v[0].wseq[0] == 13);
    ck_assert(dc->v[0].wseq[1] == 12 || dc->v[0].wseq[1] == 13);
    ck_assert_int_eq(wa->verdict, QC_PASS);
    qc_checks_free(c, n);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_missing_done_counts_completed_jobs_only)
{
    qc_check c;
    const int64_t seqs[] = {5};
    const char *hdr = "{'type':'header','seed':1,'lease_ms':5000,'missing':'done'}\n";
    char text[4096];

    /* job 1 completed and deleted; job 2 deleted without a complete; job
     * 3 failed back to ready (no_lost_jobs: not done or dead) */
    snprintf(text, sizeof text,
             "%s"
             "{'seq':1,'type':'ok','op':'enqueue','worker':-1,'job':1,'rows':1}\n"
             "{'seq':2,'type':'ok','op':'claim','worker':1,'req':1,'rows':1,'job':1,"
             "'token':'a','now':1,'lease_until':9}\n"
             "{'seq':3,'type':'invoke','op':'complete','worker':1,'req':2,'job':1,'token':'a'}\n"
             "{'seq':4,'type':'ok','op':'complete','worker':1,'req':2,'job':1,'rows':1}\n"
             "{'seq':5,'type':'ok','op':'enqueue','worker':-1,'job':2,'rows':1}\n"
             "{'seq':6,'type':'ok','op':'enqueue','worker':-1,'job':3,'rows':1}\n"
             "{'seq':7,'type':'ok','op':'claim','worker':1,'req':3,'rows':1,'job':3,"
             "'token':'c','now':1,'lease_until':9}\n"
             "{'seq':8,'type':'invoke','op':'fail','worker':1,'req':4,'job':3,'token':'c'}\n"
             "{'seq':9,'type':'ok','op':'fail','worker':1,'req':4,'job':3,'rows':1}\n"
             "{'seq':10,'type':'snapshot','job':3,'state':'ready'}\n"
             "{'seq':11,'type':'end','drained':true}\n",
             hdr);
    run(qc_check_no_lost_jobs, text, &c);
    ck_assert_int_eq(c.nviolations, 2);
    assert_violation(&c, 0, 2, seqs, 1);
    ck_assert_int_eq(c.v[1].job, 3);
    free(c.v);
    run(qc_check_acked_durable, text, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    free(c.v);
}
END_TEST

/* Decision 1100: "missing: done" and a queue empty at the end.  The
 * snapshot step returned no rows and the runner wrote a job-less snapshot
 * event: job 1 (completed, deleted) passes, job 2 (deleted without a
 * complete) is lost, and acked_durable judges job 1's complete.  Without
 * the event there was no snapshot: both INCONCLUSIVE, never PASS. */
START_TEST(test_missing_done_empty_snapshot_marker)
{
    qc_check c;
    const char *hdr = "{'type':'header','seed':1,'lease_ms':5000,'missing':'done'}\n";
    const char *body = "{'seq':1,'type':'ok','op':'enqueue','worker':-1,'job':1,'rows':1}\n"
                       "{'seq':2,'type':'ok','op':'claim','worker':1,'req':1,'rows':1,'job':1,"
                       "'token':'a','now':1,'lease_until':9}\n"
                       "{'seq':3,'type':'invoke','op':'complete','worker':1,'req':2,'job':1,"
                       "'token':'a'}\n"
                       "{'seq':4,'type':'ok','op':'complete','worker':1,'req':2,'job':1,'rows':1}\n"
                       "{'seq':5,'type':'ok','op':'enqueue','worker':-1,'job':2,'rows':1}\n";
    char text[4096];

    snprintf(text, sizeof text, "%s%s{'seq':6,'type':'snapshot'}\n"
             "{'seq':7,'type':'end','drained':true}\n", hdr, body);
    run(qc_check_no_lost_jobs, text, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_int_eq(c.v[0].job, 2);
    free(c.v);
    run(qc_check_acked_durable, text, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    free(c.v);

    snprintf(text, sizeof text, "%s%s{'seq':6,'type':'end','drained':true}\n", hdr, body);
    run(qc_check_no_lost_jobs, text, &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    free(c.v);
    run(qc_check_acked_durable, text, &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    free(c.v);
}
END_TEST

START_TEST(test_config_sources_and_bad_names)
{
    qc_scenario s;
    qc_protocol *p = NULL;
    qc_witness_cfg cfg;
    qc_err err;

    memset(&err, 0, sizeof err);
    qc_scenario_defaults(&s);
    ck_assert_int_eq(qc_protocol_parse("x.sql",
                                       "-- engine: postgres\n"
                                       "-- witness: pgboss.job id=id state=State token=- owner=-\n"
                                       "-- name: setup\nSELECT 1;\n-- name: teardown\nSELECT 1;\n"
                                       "-- name: enqueue\nSELECT 1 AS job_id;\n"
                                       "-- name: claim\nSELECT 1 AS job_id, 1 AS token, 1 AS "
                                       "lease_until_ms, 1 AS now_ms, 1 AS attempt, 1 AS op_key, "
                                       "1 AS payload;\n"
                                       "-- name: complete\nSELECT 1;\n"
                                       "-- name: snapshot\nSELECT 1 AS job_id, 1 AS state, 1 AS "
                                       "attempt, 1 AS token;\n",
                                       QC_PARAM_DOLLAR, &p, &err),
                     0);
    ck_assert_int_eq(qc_witness_config(&s, p, &cfg, &err), 0);
    ck_assert_str_eq(cfg.table, "pgboss.job");
    ck_assert_str_eq(cfg.state, "state"); /* folded, as PostgreSQL names it */
    ck_assert_str_eq(cfg.token, "");
    ck_assert_str_eq(cfg.owner, "");
    /* the scenario wins; a name that is not one is refused with its line */
    snprintf(s.witness_token, sizeof s.witness_token, "token; DROP TABLE x");
    ck_assert_int_eq(qc_witness_config(&s, p, &cfg, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "is not a column name") != NULL, "%s", err.msg);
    snprintf(s.witness_token, sizeof s.witness_token, "singleton_key");
    ck_assert_int_eq(qc_witness_config(&s, p, &cfg, &err), 0);
    ck_assert_str_eq(cfg.token, "singleton_key");
    qc_protocol_destroy(p);
    /* the repository's own file: its table by convention, and the
     * optional per-worker heartbeat step of a test protocol */
    p = NULL;
    ck_assert_int_eq(
        qc_protocol_load("tests/protocols/worker_heartbeat.sql", QC_PARAM_DOLLAR, &p, &err), 0);
    qc_scenario_defaults(&s);
    ck_assert_int_eq(qc_witness_config(&s, p, &cfg, &err), 0);
    ck_assert_str_eq(cfg.table, "qchaos.jobs");
    ck_assert_str_eq(cfg.owner, "locked_by");
    ck_assert_int_eq(p->steps[QC_STEP_HEARTBEAT].present, 1);
    ck_assert_int_eq(qc_protocol_reads(p, QC_STEP_HEARTBEAT, "worker"), 1);
    ck_assert_int_eq(qc_protocol_returns(p, QC_STEP_HEARTBEAT, "lease_until_ms"), 1);
    ck_assert_int_eq(p->steps[QC_STEP_RENEW].present, 1); /* from its base */
    qc_protocol_destroy(p);
    /* a scenario file: [witness] keys, and an unknown one refused */
    qc_scenario_defaults(&s);
    const char *ini = "[witness]\non = yes\ntable = app.jobs\nowner = worker_id\n";
    ck_assert_int_eq(qc_scenario_parse(&s, "w.ini", ini, strlen(ini), &err), 0);
    ck_assert_int_eq(s.witness_on, 1);
    ck_assert_str_eq(s.witness_table, "app.jobs");
    const char *bad = "[witness]\ncolumn = x\n";
    ck_assert_int_ne(qc_scenario_parse(&s, "w.ini", bad, strlen(bad), &err), 0);
    ck_assert_msg(strstr(err.msg, "w.ini:2") != NULL && strstr(err.msg, "column") != NULL, "%s",
                  err.msg);
    /* a library's file and scenario: [adapter]'s table and columns, no
     * token, the file's declared own changes; a bad declaration refused */
    p = NULL;
    ck_assert_int_eq(qc_protocol_load("backends/adapters/pgboss.sql", QC_PARAM_DOLLAR, &p, &err),
                     0);
    qc_scenario_defaults(&s);
    const char *ad = "[adapter]\ncommand = node x.js\ntable = qchaos_pgboss.job\nid_column = id\n"
                     "state_column = state\nowner_column = started_on\n[witness]\non = yes\n";
    ck_assert_int_eq(qc_scenario_parse(&s, "a.ini", ad, strlen(ad), &err), 0);
    ck_assert_int_eq(qc_witness_config(&s, p, &cfg, &err), 0);
    ck_assert_str_eq(cfg.table, "qchaos_pgboss.job");
    ck_assert_str_eq(cfg.owner, "started_on");
    ck_assert_str_eq(cfg.token, "");
    ck_assert_str_eq(cfg.library, "active>NULL");
    json_t *hj = qc_witness_header_json(&cfg);
    ck_assert_str_eq(json_string_value(json_object_get(hj, "library")), "active>NULL");
    json_decref(hj);
    qc_protocol_destroy(p);
    p = NULL;
    ck_assert_int_eq(qc_protocol_parse("y.sql",
                                       "-- engine: postgres\n"
                                       "-- witness: pgboss.job library=active>NULL;DROP\n"
                                       "-- name: setup\nSELECT 1;\n-- name: teardown\nSELECT 1;\n"
                                       "-- name: enqueue\nSELECT 1 AS job_id;\n"
                                       "-- name: claim\nSELECT 1 AS job_id, 1 AS token, 1 AS "
                                       "lease_until_ms, 1 AS now_ms, 1 AS attempt, 1 AS op_key, "
                                       "1 AS payload;\n"
                                       "-- name: complete\nSELECT 1;\n"
                                       "-- name: snapshot\nSELECT 1 AS job_id, 1 AS state, 1 AS "
                                       "attempt, 1 AS token;\n",
                                       QC_PARAM_DOLLAR, &p, &err),
                     0);
    ck_assert_int_eq(qc_witness_config(&s, p, &cfg, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "y.sql:2") != NULL && strstr(err.msg, "OLD>NEW") != NULL, "%s",
                  err.msg);
    qc_protocol_destroy(p);
}
END_TEST

/* ---- end to end, on the servers tests/run.sh starts ---- */

static const char *dsn, *odbc;
static char outdir[256];

static int sh(const char *cmd)
{
    int st = system(cmd);
    ck_assert_msg(WIFEXITED(st), "died: %s", cmd);
    return WEXITSTATUS(st);
}

static json_t *results_of(const char *dir)
{
    char p[1024];
    json_error_t je;
    snprintf(p, sizeof p, "%s/results.json", dir);
    json_t *r = json_load_file(p, 0, &je);
    ck_assert_msg(r != NULL, "cannot read %s: %s", p, je.text);
    return r;
}

static const char *verdict_of(json_t *r, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "checkers"), i, c)
    {
        if (!strcmp(json_string_value(json_object_get(c, "name")), name))
            return json_string_value(json_object_get(c, "verdict"));
    }
    ck_abort_msg("no checker %s", name);
    return NULL;
}

static long wnum(json_t *r, const char *key)
{
    json_t *w = json_object_get(r, "witness");
    ck_assert_msg(json_is_object(w), "results.json has no witness section");
    return (long)json_integer_value(json_object_get(w, key));
}

/* lost_ack with the witness: every lost answer resolved, the accounts
 * agree, the audit of the folder judges the same, the schema is gone. */
static void lost_ack_resolved(const char *engine_args, const char *target, const char *name)
{
    char cmd[4096], dir[512], adir[600];
    snprintf(dir, sizeof dir, "%s/%s", outdir, name);
    snprintf(cmd, sizeof cmd,
             "QCHAOS_WITNESS=yes ./qchaos run scenarios/lost_ack.ini %s --jobs 600 --seed 5 "
             "--dsn '%s' --out %s --no-progress >%s.log 2>&1",
             engine_args, target, dir, dir);
    ck_assert_msg(sh(cmd) == 0, "%s: exit not 0 (see %s.log)", name, dir);
    json_t *r = results_of(dir);
    long info = wnum(r, "info_outcomes_of_complete");
    ck_assert_msg(info > 0, "%s: no lost ack to resolve", name);
    ck_assert_int_eq(wnum(r, "unresolved"), 0);
    ck_assert_int_eq(wnum(r, "resolved_committed") + wnum(r, "resolved_not_committed"),
                     wnum(r, "info_outcomes"));
    ck_assert(json_is_true(json_object_get(json_object_get(r, "witness"), "complete")));
    ck_assert_str_eq(verdict_of(r, "witness_agrees"), "PASS");
    ck_assert_str_eq(verdict_of(r, "witness_owner"), "PASS");
    ck_assert_str_eq(verdict_of(r, "acked_durable"), "PASS");
    snprintf(adir, sizeof adir, "%s-audit", dir);
    snprintf(cmd, sizeof cmd, "./qchaos audit --out %s %s >%s.log 2>&1", adir, dir, adir);
    ck_assert_int_eq(sh(cmd), 0);
    json_t *a = results_of(adir);
    ck_assert_int_eq(wnum(a, "resolved_committed"), wnum(r, "resolved_committed"));
    ck_assert_str_eq(verdict_of(a, "witness_agrees"), "PASS");
    json_decref(a);
    json_decref(r);
}

START_TEST(test_e2e_pg_lost_ack_every_info_resolved)
{
    char cmd[2048];

    lost_ack_resolved("", dsn, "pg-lost-ack");
    /* the side table, function and schema went with the run */
    snprintf(cmd, sizeof cmd,
             "test \"$(psql '%s' -XAtc \"SELECT count(*) FROM pg_namespace WHERE nspname = "
             "'qchaos'\")\" = 0",
             dsn);
    ck_assert_int_eq(sh(cmd), 0);
}
END_TEST

START_TEST(test_e2e_mariadb_lost_ack_every_info_resolved)
{
    lost_ack_resolved("--protocol backends/mariadb/skip_locked.sql", odbc, "maria-lost-ack");
}
END_TEST

/* A complete that ignores the token, under the targeted stale complete:
 * the witness shows a session finishing a job another session owned. */
START_TEST(test_e2e_pg_mutant_caught_by_witness_owner)
{
    char cmd[4096], dir[512];
    snprintf(dir, sizeof dir, "%s/mutant", outdir);
    snprintf(cmd, sizeof cmd,
             "QCHAOS_WITNESS=yes ./qchaos run scenarios/gate/stale_complete.ini --protocol "
             "backends/postgres/mutants/complete_without_token.sql --seed 3 --dsn '%s' --out %s "
             "--no-progress >%s.log 2>&1",
             dsn, dir, dir);
    ck_assert_int_eq(sh(cmd), 1);
    json_t *r = results_of(dir);
    ck_assert_str_eq(verdict_of(r, "witness_owner"), "FAIL");
    ck_assert_str_eq(verdict_of(r, "witness_agrees"), "PASS");
    /* stale_token_rejected's violations name the rows that confirm them */
    size_t i;
    json_t *c, *found = NULL;
    json_array_foreach(json_object_get(r, "checkers"), i, c)
    {
        if (!strcmp(json_string_value(json_object_get(c, "name")), "stale_token_rejected"))
            found = c;
    }
    ck_assert_ptr_nonnull(found);
    ck_assert_str_eq(json_string_value(json_object_get(found, "verdict")), "FAIL");
    json_t *v0 = json_array_get(json_object_get(found, "violations"), 0);
    ck_assert_msg(json_array_size(json_object_get(v0, "witness")) > 0,
                  "stale_token_rejected's violation names no witness row");
    json_decref(r);
}
END_TEST

/* The correct protocol over fault scenarios with the witness on: every
 * judged checker (the witness's included) passes with opportunities, and
 * every answer of unknown outcome is resolved. */
static const char *const witness_scenarios[][2] = {{"kill_after_claim", "--jobs 600"},
                                                   {"stall_beyond_lease", ""},
                                                   {"txn", "--jobs 300"},
                                                   {"chaos", "--jobs 600"}};

START_TEST(test_e2e_pg_fault_scenario_with_witness_passes)
{
    const char *sc = witness_scenarios[_i][0];
    char cmd[4096], dir[512];
    size_t i;
    json_t *j;

    snprintf(dir, sizeof dir, "%s/scen-%s", outdir, sc);
    snprintf(cmd, sizeof cmd,
             "QCHAOS_WITNESS=yes ./qchaos run scenarios/%s.ini %s --seed 9 --dsn '%s' "
             "--out %s --no-progress >%s.log 2>&1",
             sc, witness_scenarios[_i][1], dsn, dir, dir);
    int rc = sh(cmd);
    /* chaos is a load test: a stale request is not guaranteed to happen,
     * so stale_token_rejected may have no opportunity (exit 4); never a
     * violation */
    ck_assert_msg(rc == 0 || (rc == 4 && !strcmp(sc, "chaos")),
                  "%s with the witness did not pass: exit %d (see %s.log)", sc, rc, dir);
    json_t *r = results_of(dir);
    int judged_witness = 0;
    json_array_foreach(json_object_get(r, "judged"), i, j)
    {
        const char *name = json_string_value(j);
        judged_witness += !strncmp(name, "witness_", 8);
        ck_assert_msg(!strcmp(verdict_of(r, name), "PASS") ||
                          (!strcmp(sc, "chaos") && !strcmp(verdict_of(r, name), "INCONCLUSIVE")),
                      "%s: %s is %s", sc, name, verdict_of(r, name));
    }
    ck_assert_int_eq(judged_witness, 2);
    ck_assert_int_eq(wnum(r, "unresolved"), 0);
    ck_assert_int_gt(wnum(r, "rows"), 0);
    json_decref(r);
}
END_TEST

/* A protocol with a per-worker heartbeat step (tests/protocols/
 * worker_heartbeat.sql): work of two leases is kept alive by the worker's
 * heartbeat alone (no renew), killed workers' jobs are reaped, and the
 * witness explains the heartbeat's row changes. */
START_TEST(test_e2e_pg_worker_heartbeat_keeps_leases)
{
    char cmd[4096], ini[512], dir[512], cwd[1024];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    snprintf(ini, sizeof ini, "%s/heartbeat.ini", outdir);
    snprintf(dir, sizeof dir, "%s/heartbeat", outdir);
    FILE *f = fopen(ini, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "[scenario]\nname = heartbeat\nprotocol = %s/tests/protocols/worker_heartbeat.sql\n"
            "[workload]\nworkers = 4\njobs = 12\nwork_ms = 1500-2000\n[lease]\nlease_ms = 800\n"
            "reaper_interval_ms = 100\n[sink]\nidempotent = no\n[policy]\nheartbeat = yes\n"
            "[faults]\nkill_after_claim = 2\n[witness]\non = yes\n[checks]\n"
            "judge = exclusive_claim, double_complete, no_lost_jobs, acked_durable, effects_once, "
            "recovery\n",
            cwd);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "./qchaos run %s --seed 2 --dsn '%s' --out %s --no-progress >%s.log 2>&1", ini, dsn,
             dir, dir);
    ck_assert_msg(sh(cmd) == 0, "the heartbeat run did not pass (see %s.log)", dir);
    json_t *r = results_of(dir);
    ck_assert_str_eq(verdict_of(r, "effects_once"), "PASS");
    ck_assert_str_eq(verdict_of(r, "witness_agrees"), "PASS");
    ck_assert_str_eq(verdict_of(r, "witness_owner"), "PASS");
    json_decref(r);
    /* the workers heartbeat (and never renew), and the heartbeats changed rows */
    snprintf(cmd, sizeof cmd,
             "grep -q '\"type\":\"ok\",\"op\":\"heartbeat\".*\"rows\":1' %s/ledger.jsonl && "
             "! grep -q '\"op\":\"renew\"' %s/ledger.jsonl",
             dir, dir);
    ck_assert_int_eq(sh(cmd), 0);
}
END_TEST

START_TEST(test_e2e_pg_bad_column_exit_2)
{
    char cmd[4096], ini[512];
    snprintf(ini, sizeof ini, "%s/badcol.ini", outdir);
    FILE *f = fopen(ini, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "[scenario]\nprotocol = %s/backends/postgres/skip_locked.sql\n[workload]\n"
            "jobs = 10\nworkers = 1\n[witness]\non = yes\nowner = worker_name\n",
            getcwd((char[1024]){0}, 1024));
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "./qchaos run %s --dsn '%s' --out %s/badcol --no-progress >%s/badcol.log 2>&1", ini,
             dsn, outdir, outdir);
    ck_assert_int_eq(sh(cmd), 2);
    snprintf(cmd, sizeof cmd, "grep -q \"has no column 'worker_name'\" %s/badcol.log", outdir);
    ck_assert_int_eq(sh(cmd), 0);
}
END_TEST

/* An adapter's library (pg-boss's shape): no token column, the witness's
 * rows name the library's ids (lib_id 'u1' is qchaos's job 1), the
 * enqueuer's session is qchaos-enq.0, and the library's own expiry runs in
 * a worker's session (w0.0 deletes the stalled w2.0's active job and
 * re-inserts it as retry, one transaction), declared in the library's file
 * as library=active>NULL.  W is the session whose complete committed
 * (qchaos-w0.0: the new owner; qchaos-w2.0: the stalled one, after its
 * lease: a stale complete the library honoured). */
#define LIB_HDR(lib)                                                                               \
    "{'type':'header','seed':1,'lease_ms':2000,'model':'lease','workers':3,'jobs':1,"              \
    "'witness':{'table':'qchaos_pgboss.job','id':'id','state':'state','token':null,"               \
    "'owner':null" lib "}}\n"
#define LIB_BODY(W, R0, R2)                                                                        \
    "{'seq':1,'type':'invoke','op':'enqueue','worker':-1,'req':0}\n"                               \
    "{'seq':2,'type':'ok','op':'enqueue','worker':-1,'req':0,'job':1,'rows':1,'lib_id':'u1'}\n"    \
    "{'seq':3,'t':10,'type':'ok','op':'claim','worker':2,'inc':0,'req':1,'rows':1,'job':1,"        \
    "'lib_id':'u1'}\n"                                                                             \
    "{'seq':4,'t':3000,'type':'ok','op':'claim','worker':0,'inc':0,'req':2,'rows':1,'job':1,"      \
    "'lib_id':'u1'}\n"                                                                             \
    "{'seq':5,'t':3100,'type':'invoke','op':'complete','worker':0,'inc':0,'req':3,'job':1}\n"      \
    "{'seq':6,'t':3101,'type':'ok','op':'complete','worker':0,'inc':0,'req':3,'job':1,'rows':" R0  \
    "}\n"                                                                                          \
    "{'seq':7,'t':3200,'type':'invoke','op':'complete','worker':2,'inc':0,'req':4,'job':1}\n"      \
    "{'seq':8,'t':3201,'type':'ok','op':'complete','worker':2,'inc':0,'req':4,'job':1,'rows':" R2  \
    "}\n"                                                                                          \
    "{'seq':9,'type':'snapshot','job':1,'state':'done','attempt':2}\n"                             \
    "{'seq':10,'type':'witness','wid':1,'session':'qchaos-enq.0','change':'insert','row':'u1',"    \
    "'new_state':'created','txid':40}\n"                                                           \
    "{'seq':11,'type':'witness','wid':2,'session':'qchaos-w2.0','change':'update','row':'u1',"     \
    "'old_state':'created','new_state':'active','txid':41}\n"                                      \
    "{'seq':12,'type':'witness','wid':3,'session':'qchaos-w0.0','change':'delete','row':'u1',"     \
    "'old_state':'active','txid':50}\n"                                                            \
    "{'seq':13,'type':'witness','wid':4,'session':'qchaos-w0.0','change':'insert','row':'u1',"     \
    "'new_state':'retry','txid':50}\n"                                                             \
    "{'seq':14,'type':'witness','wid':5,'session':'qchaos-w0.0','change':'update','row':'u1',"     \
    "'old_state':'retry','new_state':'active','txid':51}\n"                                        \
    "{'seq':15,'type':'witness','wid':6,'session':'" W "','change':'update','row':'u1',"           \
    "'old_state':'active','new_state':'completed','txid':52}\n"                                    \
    "{'seq':16,'type':'note','note':'witness','rows':6,'complete':true}\n"                         \
    "{'seq':17,'type':'end','drained':true}\n"
#define LIB_DECL ",'library':'active>NULL'"

START_TEST(test_adapter_library_rows_by_lib_id_and_own_expiry)
{
    qc_history h;
    qc_check c;

    memset(&h, 0, sizeof h);
    load(&h, LIB_HDR(LIB_DECL) LIB_BODY("qchaos-w0.0", "1", "0"));
    ck_assert_str_eq(h.info.witness_library, "active>NULL");
    /* the library's id names the job; the enqueuer is the control session */
    ck_assert_int_eq(qc_x(ev_seq(&h, 12)->x)->w_job, 1);
    ck_assert_int_eq(qc_x(ev_seq(&h, 10)->x)->w_actor, QC_ACTOR_CONTROL);
    ck_assert_int_eq(h.ev[ev_seq(&h, 2)->w_ev].seq, 10);
    /* w0.0's complete is its update after its claim's row, not the
     * expiry's delete by the same session before it */
    ck_assert_int_eq(h.ev[ev_seq(&h, 4)->w_ev].seq, 14);
    ck_assert_int_eq(h.ev[ev_seq(&h, 6)->w_ev].seq, 15);
    ck_assert(qc__witness_library_change(&h, ev_seq(&h, 12)));
    ck_assert(!qc__witness_library_change(&h, ev_seq(&h, 13)));
    ck_assert(!qc__witness_library_change(&h, ev_seq(&h, 15)));
    qc_history_fini(&h);
    run(qc_check_witness_agrees, LIB_HDR(LIB_DECL) LIB_BODY("qchaos-w0.0", "1", "0"), &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_msg(strstr(c.summary, "declared in its file): 1") != NULL, "%s", c.summary);
    free(c.v);
    run(qc_check_witness_owner, LIB_HDR(LIB_DECL) LIB_BODY("qchaos-w0.0", "1", "0"), &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    free(c.v);
    /* undeclared, the expiry is a change no request explains (and the
     * insert of its transaction with it) */
    run(qc_check_witness_agrees, LIB_HDR("") LIB_BODY("qchaos-w0.0", "1", "0"), &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 2);
    free(c.v);
}
END_TEST

START_TEST(test_adapter_stale_complete_honoured_fails_owner)
{
    qc_check c;
    const int64_t seqs[] = {14, 15};

    /* the stalled w2.0 completes after the expiry and w0.0's claim, and the
     * library takes it: the witness shows the stale complete committed */
    run(qc_check_witness_owner, LIB_HDR(LIB_DECL) LIB_BODY("qchaos-w2.0", "0", "1"), &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    assert_violation(&c, 0, 1, seqs, 2);
    free(c.v);
    run(qc_check_witness_agrees, LIB_HDR(LIB_DECL) LIB_BODY("qchaos-w2.0", "0", "1"), &c);
    ck_assert_int_eq(c.verdict, QC_PASS); /* the accounts agree: the library did it */
    free(c.v);
}
END_TEST

/* The report's "Library behaviour" rows (reports/library.c) on an adapter
 * run: the stalled w2.0's complete committed (witness row 6) after w0.0
 * claimed the job again (row 5); w1.0 fetched every 500 ms while idle. */
START_TEST(test_library_behaviour_rows_cite_witness)
{
    qc_history h;
    char buf[8192];

    memset(&h, 0, sizeof h);
    load(&h,
         "{'type':'header','seed':1,'lease_ms':2000,'model':'lease','workers':3,'jobs':1,"
         "'adapter':{'library':'pg-boss','version':'10.4.2'},"
         "'witness':{'table':'qchaos_pgboss.job','id':'id','state':'state','token':null,"
         "'owner':null,'library':'active>NULL'}}\n"
         "{'seq':1,'type':'invoke','op':'enqueue','worker':-1,'req':0}\n"
         "{'seq':2,'type':'ok','op':'enqueue','worker':-1,'req':0,'job':1,'rows':1,'lib_id':'u1'}\n"
         "{'seq':3,'t':10,'type':'ok','op':'claim','worker':2,'inc':0,'req':1,'rows':1,'job':1,'"
         "lib_id':'u1'}\n"
         "{'seq':4,'t':11,'type':'fault','fault':'stall_beyond_lease','worker':2,'inc':0,'job':1}\n"
         "{'seq':5,'t':3000,'type':'ok','op':'claim','worker':0,'inc':0,'req':2,'rows':1,'job':1,'"
         "lib_id':'u1'}\n"
         "{'seq':6,'t':3100,'type':'invoke','op':'complete','worker':2,'inc':0,'req':3,'job':1}\n"
         "{'seq':7,'t':3101,'type':'ok','op':'complete','worker':2,'inc':0,'req':3,'job':1,'rows':"
         "1}\n"
         "{'seq':8,'t':3200,'type':'ok','op':'claim','worker':1,'inc':0,'req':4,'rows':0}\n"
         "{'seq':9,'t':3700,'type':'ok','op':'claim','worker':1,'inc':0,'req':5,'rows':0}\n"
         "{'seq':10,'t':4200,'type':'ok','op':'claim','worker':1,'inc':0,'req':6,'rows':0}\n"
         "{'seq':11,'t':4700,'type':'ok','op':'claim','worker':1,'inc':0,'req':7,'rows':0}\n"
         "{'seq':12,'type':'snapshot','job':1,'state':'done','attempt':2}\n"
         "{'seq':13,'type':'witness','wid':1,'session':'qchaos-enq.0','change':'insert','row':'u1',"
         "'new_state':'created','txid':40,'server_ms':1000}\n"
         "{'seq':14,'type':'witness','wid':2,'session':'qchaos-w2.0','change':'update','row':'u1','"
         "old_state':'created','new_state':'active','txid':41,'server_ms':1010}\n"
         "{'seq':15,'type':'witness','wid':3,'session':'qchaos-w0.0','change':'delete','row':'u1','"
         "old_state':'active','txid':50,'server_ms':2500}\n"
         "{'seq':16,'type':'witness','wid':4,'session':'qchaos-w0.0','change':'insert','row':'u1','"
         "new_state':'retry','txid':50,'server_ms':2500}\n"
         "{'seq':17,'type':'witness','wid':5,'session':'qchaos-w0.0','change':'update','row':'u1','"
         "old_state':'retry','new_state':'active','txid':51,'server_ms':3000}\n"
         "{'seq':18,'type':'witness','wid':6,'session':'qchaos-w2.0','change':'update','row':'u1','"
         "old_state':'active','new_state':'completed','txid':52,'server_ms':3100}\n"
         "{'seq':19,'type':'note','note':'witness','rows':6,'complete':true}\n"
         "{'seq':20,'type':'end','drained':true}\n");
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    qc__library_md(f, &h);
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    ck_assert_msg(strstr(buf, "## Library behaviour") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "pg-boss 10.4.2") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "1 stalled workers: 1 stale completes / fails honoured after "
                              "another worker claimed the job again") != NULL,
                  "%s", buf);
    ck_assert_msg(strstr(buf, "witness row 6 (qchaos-w2.0: active -\\> completed)") != NULL, "%s",
                  buf);
    ck_assert_msg(strstr(buf, "witness row 5 (qchaos-w0.0: retry -\\> active)") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "no kill_after_claim fault") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "median 2.0, max 2.0 polls per second per worker") != NULL, "%s",
                  buf);
    qc_history_fini(&h);
    /* not an adapter run: no section */
    memset(&h, 0, sizeof h);
    load(&h, HDR LOST_ACK_BODY ROW_INSERT ROW_CLAIM ROW_COMPLETE NOTE_DONE END);
    f = tmpfile();
    qc__library_md(f, &h);
    ck_assert_int_eq(ftell(f), 0);
    fclose(f);
    qc_history_fini(&h);
}
END_TEST

/* Minion's shape: worker 0's session repairs the killed worker 1's job
 * (active -> failed, failed -> inactive, declared as the library's own),
 * then claims it (inactive -> active): the claim is that row, not the
 * repair's. */
START_TEST(test_adapter_claim_not_a_declared_library_change)
{
    qc_history h;
    qc_check c;
    const char *ledger =
        "{'type':'header','seed':1,'lease_ms':4000,'model':'lease','workers':2,'jobs':1,"
        "'witness':{'table':'m.minion_jobs','id':'id','state':'state','token':null,"
        "'owner':'worker','library':'active>failed,failed>inactive'}}\n"
        "{'seq':1,'type':'ok','op':'enqueue','worker':-1,'req':0,'job':1,'rows':1,'lib_id':'9'}\n"
        "{'seq':2,'t':10,'type':'ok','op':'claim','worker':1,'inc':0,'req':1,'rows':1,'job':1,"
        "'lib_id':'9'}\n"
        "{'seq':3,'t':11,'type':'fault','fault':'kill_after_claim','worker':1,'inc':0,'job':1}\n"
        "{'seq':4,'t':5000,'type':'ok','op':'claim','worker':0,'inc':0,'req':2,'rows':1,'job':1,"
        "'lib_id':'9'}\n"
        "{'seq':5,'t':5100,'type':'invoke','op':'complete','worker':0,'inc':0,'req':3,'job':1}\n"
        "{'seq':6,'t':5101,'type':'ok','op':'complete','worker':0,'inc':0,'req':3,'job':1,"
        "'rows':1}\n"
        "{'seq':7,'type':'snapshot','job':1,'state':'done','attempt':2}\n"
        "{'seq':8,'type':'witness','wid':1,'session':'qchaos-enq.0','change':'insert','row':'9',"
        "'new_state':'inactive','txid':1}\n"
        "{'seq':9,'type':'witness','wid':2,'session':'qchaos-w1.0','change':'update','row':'9',"
        "'old_state':'inactive','new_state':'active','txid':2}\n"
        "{'seq':10,'type':'witness','wid':3,'session':'qchaos-w0.0','change':'update','row':'9',"
        "'old_state':'active','new_state':'failed','txid':3}\n"
        "{'seq':11,'type':'witness','wid':4,'session':'qchaos-w0.0','change':'update','row':'9',"
        "'old_state':'failed','new_state':'inactive','txid':4}\n"
        "{'seq':12,'type':'witness','wid':5,'session':'qchaos-w0.0','change':'update','row':'9',"
        "'old_state':'inactive','new_state':'active','txid':5}\n"
        "{'seq':13,'type':'witness','wid':6,'session':'qchaos-w0.0','change':'update','row':'9',"
        "'old_state':'active','new_state':'finished','txid':6}\n"
        "{'seq':14,'type':'note','note':'witness','rows':6,'complete':true}\n"
        "{'seq':15,'type':'end','drained':true}\n";

    memset(&h, 0, sizeof h);
    load(&h, ledger);
    ck_assert_int_eq(h.ev[ev_seq(&h, 4)->w_ev].seq, 12);
    ck_assert_int_eq(h.ev[ev_seq(&h, 6)->w_ev].seq, 13);
    qc_history_fini(&h);
    run(qc_check_witness_agrees, ledger, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_msg(strstr(c.summary, "declared in its file): 2") != NULL, "%s", c.summary);
    free(c.v);
    run(qc_check_witness_owner, ledger, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    free(c.v);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("witness");
    TCase *m = tcase_create("merge");
    tcase_set_timeout(m, 30);
    tcase_add_test(m, test_merge_lost_ack_committed_resolved);
    tcase_add_test(m, test_merge_lost_ack_not_committed_resolved_as_not);
    suite_add_tcase(s, m);
    TCase *a = tcase_create("agrees");
    tcase_set_timeout(a, 30);
    tcase_add_test(a, test_agrees_matching_accounts_pass);
    tcase_add_test(a, test_agrees_ok_without_row_fails);
    tcase_add_test(a, test_agrees_row_of_failed_request_fails);
    tcase_add_test(a, test_agrees_foreign_session_fails);
    tcase_add_test(a, test_witness_checkers_without_witness_not_applicable);
    suite_add_tcase(s, a);
    TCase *o = tcase_create("owner");
    tcase_set_timeout(o, 30);
    tcase_add_test(o, test_owner_stale_session_accepted_fails);
    tcase_add_test(o, test_adapter_library_rows_by_lib_id_and_own_expiry);
    tcase_add_test(o, test_adapter_stale_complete_honoured_fails_owner);
    tcase_add_test(o, test_library_behaviour_rows_cite_witness);
    tcase_add_test(o, test_adapter_claim_not_a_declared_library_change);
    tcase_add_test(o, test_owner_owner_completes_passes);
    tcase_add_test(o, test_owner_tokenless_protocol_judged_by_session);
    tcase_add_test(o, test_double_complete_from_witness_fails_with_rows);
    tcase_add_test(o, test_missing_done_counts_completed_jobs_only);
    tcase_add_test(o, test_missing_done_empty_snapshot_marker);
    suite_add_tcase(s, o);
    TCase *c = tcase_create("config");
    tcase_set_timeout(c, 30);
    tcase_add_test(c, test_config_sources_and_bad_names);
    suite_add_tcase(s, c);
    if (dsn) {
        TCase *e = tcase_create("e2e_pg");
        tcase_set_timeout(e, 240);
        tcase_add_test(e, test_e2e_pg_lost_ack_every_info_resolved);
        tcase_add_test(e, test_e2e_pg_mutant_caught_by_witness_owner);
        tcase_add_test(e, test_e2e_pg_bad_column_exit_2);
        tcase_add_test(e, test_e2e_pg_worker_heartbeat_keeps_leases);
        tcase_add_loop_test(e, test_e2e_pg_fault_scenario_with_witness_passes, 0,
                            (int)(sizeof witness_scenarios / sizeof *witness_scenarios));
        suite_add_tcase(s, e);
    }
    if (odbc) {
        TCase *e = tcase_create("e2e_mariadb");
        tcase_set_timeout(e, 240);
        tcase_add_test(e, test_e2e_mariadb_lost_ack_every_info_resolved);
        suite_add_tcase(s, e);
    }
    return s;
}

int main(void)
{
    dsn = getenv("QC_TEST_DSN");
    odbc = getenv("QC_TEST_ODBC");
    if (dsn != NULL && !*dsn)
        dsn = NULL;
    if (odbc != NULL && !*odbc)
        odbc = NULL;
    if (dsn == NULL)
        fprintf(stderr, "check_witness: QC_TEST_DSN unset: no PostgreSQL runs\n");
    if (odbc == NULL)
        fprintf(stderr, "check_witness: QC_TEST_ODBC unset: no MariaDB runs\n");
    snprintf(outdir, sizeof outdir, "/tmp/qc_witness.%d", (int)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", outdir);
    if (system(cmd) != 0)
        return EXIT_FAILURE;
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
