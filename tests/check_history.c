/*
 * check_history.c - unit tests of the ledger reader (harness/history.h):
 * header and event fields, defaults, torn and bad lines, merging ledgers
 * by seq, invoke pairing, and the speed of a 200,000-line load.
 *
 * Ledgers in C strings are written with ' for " (q() turns them back);
 * ledgers on disk go to mkstemp files under /tmp, removed by each test.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/stat.h>

#include "../harness/audit.h"
#include "../harness/history.h"
#include "../harness/input.h"

/* Sanitizers slow allocation-heavy code by an order of magnitude: time
 * bounds are for ordinary builds. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define QC_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define QC_SANITIZED 1
#endif

/* Returns a copy of text with ' turned into " (free it). */
static char *q(const char *text)
{
    char *s = strdup(text);

    ck_assert_ptr_nonnull(s);
    for (char *p = s; *p != '\0'; p++)
        if (*p == '\'')
            *p = '"';
    return s;
}

/* Parses text (with ' for "); returns the result code, err filled. */
static int parse(qc_history *h, const char *text, qc_err *err)
{
    char *s = q(text);
    int rc;

    memset(h, 0, sizeof *h);
    memset(err, 0, sizeof *err);
    rc = qc_history_parse(h, s, err);
    free(s);
    return rc;
}

/* Writes text (with ' for ") to a new file under /tmp; path gets its name. */
static void write_temp(char path[64], const char *text)
{
    char *s = q(text);
    int fd;

    snprintf(path, 64, "/tmp/qc_history_XXXXXX");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
    close(fd);
    free(s);
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* ---- inputs that are not ledgers -------------------------------------- */

/* A FIFO or a device is refused at once (no blocking open, no endless
 * read); so is a line longer than QC_MAX_LEDGER_LINE, by its number,
 * before the rest of the file is read. */
START_TEST(test_history_load_fifo_device_and_huge_line_refused)
{
    qc_history h;
    qc_err err = {0};
    char dir[] = "/tmp/qc_history_fifo.XXXXXX", fifo[64], big[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/ledger.jsonl", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    const char *paths[1] = {fifo};
    ck_assert_int_eq(qc_history_load(&h, paths, 1, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "is not a regular file (a FIFO)") != NULL, "%s", err.msg);
    paths[0] = "/dev/zero";
    ck_assert_int_eq(qc_history_load(&h, paths, 1, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "a device") != NULL, "%s", err.msg);

    snprintf(big, sizeof big, "%s/big.jsonl", dir);
    FILE *f = fopen(big, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"type\":\"header\",\"seed\":1}\n", f);
    for (int i = 0; i < QC_MAX_LEDGER_LINE + 10; i++)
        fputc('x', f);
    fputs("\n{\"type\":\"end\"}\n", f);
    fclose(f);
    paths[0] = big;
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(qc_history_load(&h, paths, 1, &err), QC_EINVAL);
    char want[128];
    snprintf(want, sizeof want, "big.jsonl:2: line longer than %d bytes", QC_MAX_LEDGER_LINE);
    ck_assert_msg(strstr(err.msg, want) != NULL, "%s", err.msg);
    unlink(big);
    unlink(fifo);
    rmdir(dir);
}
END_TEST

/* `qchaos audit` on a FIFO or /dev/zero exits 2 with the reason, at once. */
START_TEST(test_audit_cli_fifo_and_dev_zero_exit_2)
{
    char dir[] = "/tmp/qc_history_cli.XXXXXX", cmd[1024];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "mkfifo %s/p && timeout 60 ./qchaos audit %s/p 2>%s/err1; "
             "echo $? >%s/rc1; timeout 60 ./qchaos audit /dev/zero 2>%s/err2; echo $? >%s/rc2",
             dir, dir, dir, dir, dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    for (int k = 1; k <= 2; k++) {
        char p[96], text[512] = "";
        snprintf(p, sizeof p, "%s/rc%d", dir, k);
        FILE *f = fopen(p, "r");
        ck_assert_ptr_nonnull(f);
        int rc = -1;
        ck_assert_int_eq(fscanf(f, "%d", &rc), 1);
        fclose(f);
        snprintf(p, sizeof p, "%s/err%d", dir, k);
        f = fopen(p, "r");
        ck_assert_ptr_nonnull(f);
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = 0;
        fclose(f);
        ck_assert_msg(rc == 2, "audit %d: exit %d (124 = hung), stderr: %s", k, rc, text);
        ck_assert_msg(strstr(text, "is not a regular file") != NULL, "stderr: %s", text);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- header ----------------------------------------------------------- */

START_TEST(test_history_parse_header_fields_filled)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(parse(&h,
                           "{'type':'header','seed':42,'scenario':'default','protocol':'p.sql',"
                           "'model':'transaction','lease_ms':5000,'max_attempts':3,'workers':16,"
                           "'jobs':20000,'reaper_interval_ms':500,'recovery_slack_ms':2000,"
                           "'qchaos':'0.1.0','server':'PostgreSQL 15'}\n"
                           "{'seq':1,'type':'end','drained':true}\n",
                           &err),
                     0);
    ck_assert_uint_eq(h.info.seed, 42);
    ck_assert_str_eq(h.info.model, "transaction");
    ck_assert_int_eq(h.info.lease_ms, 5000);
    ck_assert_int_eq(h.info.max_attempts, 3);
    ck_assert_int_eq(h.info.workers, 16);
    ck_assert_int_eq(h.info.jobs, 20000);
    ck_assert_int_eq(h.info.reaper_interval_ms, 500);
    ck_assert_int_eq(h.info.recovery_slack_ms, 2000);
    ck_assert_uint_eq(h.n, 1); /* the header is not an event */
    ck_assert_int_eq(h.ev[0].type, QC_EV_END);
    ck_assert_int_eq(qc_x(h.ev[0].x)->drained, 1);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_parse_header_missing_numbers_defaults)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(parse(&h, "{'type':'header','seed':5}\n", &err), 0);
    ck_assert_uint_eq(h.info.seed, 5);
    ck_assert_int_eq(h.info.max_attempts, -1);
    ck_assert_int_eq(h.info.lease_ms, 0);
    ck_assert_str_eq(h.info.model, "lease");
    qc_history_fini(&h);

    ck_assert_int_eq(parse(&h, "{'seq':1,'type':'end'}\n", &err), 0);
    ck_assert_int_eq(h.info.max_attempts, -1);
    ck_assert_str_eq(h.info.model, "lease");
    qc_history_fini(&h);
}
END_TEST

/* Issue 18: the header says which optional columns the protocol returns,
 * so a checker can tell "not returned" from "not there". */
START_TEST(test_history_parse_header_columns_per_step)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(parse(&h,
                           "{'type':'header','seed':7,'columns':{"
                           "'reap':['job_id','token'],'snapshot':['job_id','state','attempt',"
                           "'token','error'],'claim':['job_id','token','now_ms'],"
                           "'complete':[],'monitor':['ready'],'future_step':['x']}}\n",
                           &err),
                     0);
    ck_assert_int_eq(h.info.has_columns, 1);
    ck_assert_str_eq(h.info.reap_cols, "job_id,token");
    ck_assert_str_eq(h.info.snapshot_cols, "job_id,state,attempt,token,error");
    ck_assert_str_eq(h.info.complete_cols, "");
    ck_assert_str_eq(h.info.renew_cols, ""); /* no renew step */
    ck_assert_int_eq(qc_run_info_returns(&h.info, "reap", "now_ms"), 0);
    ck_assert_int_eq(qc_run_info_returns(&h.info, "reap", "token"), 1);
    ck_assert_int_eq(qc_run_info_returns(&h.info, "reap", "job"), 0); /* whole names */
    ck_assert_int_eq(qc_run_info_returns(&h.info, "snapshot", "error"), 1);
    ck_assert_int_eq(qc_run_info_returns(&h.info, "complete", "now_ms"), 0);
    ck_assert_int_eq(qc_run_info_returns(&h.info, "monitor", "ready"), -1); /* not kept */
    qc_history_fini(&h);

    /* a ledger from before "columns": unknown, never "not returned" */
    ck_assert_int_eq(parse(&h, "{'type':'header','seed':7}\n", &err), 0);
    ck_assert_int_eq(h.info.has_columns, 0);
    ck_assert_int_eq(qc_run_info_returns(&h.info, "reap", "now_ms"), -1);
    qc_history_fini(&h);

    ck_assert_int_eq(parse(&h, "{'type':'header','seed':7,'columns':['reap']}\n", &err),
                     QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "columns") != NULL, "%s", err.msg);
    qc_history_fini(&h);
    ck_assert_int_eq(parse(&h, "{'type':'header','seed':7,'columns':{'reap':[1]}}\n", &err),
                     QC_EINVAL);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_parse_uint64_seed_kept)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(parse(&h, "{'type':'header','seed':'18446744073709551615'}\n", &err), 0);
    ck_assert(h.info.seed == UINT64_MAX);
    qc_history_fini(&h);
    /* the int64 bit pattern of the same seed */
    ck_assert_int_eq(parse(&h, "{'type':'header','seed':-1}\n", &err), 0);
    ck_assert(h.info.seed == UINT64_MAX);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_load_seed_mismatch_einval)
{
    char a[64], b[64];
    qc_history h;
    qc_err err;

    write_temp(a, "{'type':'header','seed':1}\n{'seq':1,'type':'end'}\n");
    write_temp(b, "{'type':'header','seed':2}\n{'seq':2,'type':'end'}\n");
    const char *paths[] = {a, b};
    memset(&h, 0, sizeof h);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(qc_history_load(&h, paths, 2, &err), QC_EINVAL);
    ck_assert_int_eq(err.code, QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "seed 2 differs from seed 1") != NULL, "%s", err.msg);
    ck_assert_uint_eq(h.n, 0);
    ck_assert_ptr_null(h.ev);
    qc_history_fini(&h);
    unlink(a);
    unlink(b);
}
END_TEST

/* ---- events ----------------------------------------------------------- */

/* The record's 32-bit fields (issue 16): req at the edges of its range is
 * read, one past them is refused naming the line and the field. */
START_TEST(test_history_parse_req_range)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(parse(&h,
                           "{'seq':1,'type':'invoke','op':'claim','worker':0,'req':2147483647}\n"
                           "{'seq':2,'type':'invoke','op':'claim','worker':1,'req':-2147483648}\n",
                           &err),
                     0);
    ck_assert_int_eq(h.ev[0].req, 2147483647);
    ck_assert_int_eq(h.ev[1].req, -2147483647 - 1);
    qc_history_fini(&h);
    ck_assert_int_eq(parse(&h,
                           "{'seq':1,'type':'invoke','op':'claim','worker':0,'req':1}\n"
                           "{'seq':2,'type':'invoke','op':'claim','worker':0,'req':2147483648}\n",
                           &err),
                     QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":2: field \"req\" is not an integer in") != NULL, "%s",
                  err.msg);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_parse_event_fields_read)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(
        parse(&h,
              "{'seq':9,'t':13.001,'type':'ok','op':'claim','worker':3,'inc':2,'req':55,"
              "'rows':1,'job':17,'token':'5b1e','lease_until':1764470000123.0,"
              "'now':1764469995123.5,'attempt':1,'op_key':'17','extra':{'ignored':[1,2]}}\n"
              "{'seq':10,'type':'effect','job':17,'applied':true,'new_token':'x','state':'done',"
              "'fault':'poison','error':'boom','worker':null}\n",
              &err),
        0);
    ck_assert_uint_eq(h.n, 2);
    const qc_event *e = &h.ev[0];
    ck_assert_int_eq(e->seq, 9);
    ck_assert_double_eq_tol(e->t, 13.001, 1e-9);
    ck_assert_int_eq(e->type, QC_EV_OK);
    ck_assert_int_eq(e->op, QC_OP_CLAIM);
    ck_assert_int_eq(e->worker, 3);
    ck_assert_int_eq(e->inc, 2);
    ck_assert_int_eq(e->req, 55);
    ck_assert_int_eq(e->rows, 1);
    ck_assert_int_eq(e->job, 17);
    ck_assert_str_eq(qc_s(e->token), "5b1e");
    ck_assert_double_eq(e->lease_until, 1764470000123.0);
    ck_assert_double_eq(e->now, 1764469995123.5);
    ck_assert_int_eq(e->attempt, 1);
    ck_assert_str_eq(qc_s(e->op_key), "17");
    ck_assert_int_eq(e->line, 1);
    ck_assert_int_eq(e->file, 0);
    /* the second line: absent fields read back as documented */
    e = &h.ev[1];
    ck_assert_int_eq(e->type, QC_EV_EFFECT);
    ck_assert_int_eq(e->applied, 1);
    ck_assert_str_eq(qc_s(e->new_token), "x");
    ck_assert_str_eq(qc_s(e->state), "done");
    ck_assert_str_eq(qc_x(e->x)->fault, "poison");
    ck_assert_str_eq(qc_s(e->error), "boom");
    ck_assert_double_eq(e->t, QC_NO_TIME);
    ck_assert_int_eq(e->op, QC_OP_NONE);
    ck_assert_int_eq(e->worker, -1);
    ck_assert_int_eq(e->inc, 0);
    ck_assert_int_eq(e->req, -1);
    ck_assert_int_eq(e->rows, -1);
    ck_assert_double_eq(e->now, QC_NO_TIME);
    ck_assert_double_eq(e->lease_until, QC_NO_TIME);
    ck_assert_int_eq(e->attempt, -1);
    ck_assert_ptr_null(qc_s(e->token));
    ck_assert_ptr_null(qc_s(e->op_key));
    ck_assert_int_eq(e->invoke, -1);
    ck_assert_int_eq(e->line, 2);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_parse_monitor_and_fault_window_read)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(parse(&h,
                           "{'seq':1,'t':5.5,'type':'monitor','ready':10,'inflight':4,'expired':1,"
                           "'dead':0,'done':85,'oldest_ready_age_ms':120.5}\n"
                           "{'seq':2,'t':6,'type':'fault','fault':'stall_beyond_lease','job':3,"
                           "'worker':2,'until_t':9006.25}\n"
                           "{'seq':3,'type':'monitor','ready':2}\n",
                           &err),
                     0);
    ck_assert_int_eq(h.ev[0].type, QC_EV_MONITOR);
    ck_assert_int_eq(qc_x(h.ev[0].x)->ready, 10);
    ck_assert_int_eq(qc_x(h.ev[0].x)->inflight, 4);
    ck_assert_int_eq(qc_x(h.ev[0].x)->expired, 1);
    ck_assert_int_eq(qc_x(h.ev[0].x)->dead, 0);
    ck_assert_int_eq(qc_x(h.ev[0].x)->done, 85);
    ck_assert_double_eq(qc_x(h.ev[0].x)->oldest_ready_age_ms, 120.5);
    ck_assert_double_eq(qc_x(h.ev[0].x)->until_t, QC_NO_TIME);
    ck_assert_int_eq(h.ev[1].type, QC_EV_FAULT);
    ck_assert_double_eq(qc_x(h.ev[1].x)->until_t, 9006.25);
    ck_assert_int_eq(qc_x(h.ev[1].x)->ready, -1);
    ck_assert_int_eq(qc_x(h.ev[2].x)->ready, 2);
    ck_assert_int_eq(qc_x(h.ev[2].x)->inflight, -1);
    ck_assert_int_eq(qc_x(h.ev[2].x)->done, -1);
    ck_assert_double_eq(qc_x(h.ev[2].x)->oldest_ready_age_ms, -1.0);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_parse_unknown_type_and_op_kept_as_other)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(parse(&h,
                           "{'seq':1,'type':'weird','op':'frobnicate','job':3}\n"
                           "{'seq':2,'op':'claim'}\n"
                           "{'seq':3,'type':'monitor'}\n",
                           &err),
                     0);
    ck_assert_uint_eq(h.n, 3);
    ck_assert_int_eq(h.ev[0].type, QC_EV_OTHER);
    ck_assert_int_eq(h.ev[0].op, QC_OP_NONE);
    ck_assert_int_eq(h.ev[0].job, 3);
    ck_assert_int_eq(h.ev[1].type, QC_EV_OTHER);
    ck_assert_int_eq(h.ev[1].op, QC_OP_CLAIM);
    ck_assert_int_eq(h.ev[2].type, QC_EV_MONITOR);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_parse_equal_tokens_interned)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(parse(&h,
                           "{'seq':1,'type':'invoke','op':'complete','job':1,'token':'abc'}\n"
                           "{'seq':2,'type':'ok','op':'complete','job':1,'token':'abc'}\n",
                           &err),
                     0);
    ck_assert_ptr_eq(qc_s(h.ev[0].token), qc_s(h.ev[1].token));
    ck_assert_ptr_nonnull(h.strings);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_parse_completion_paired_with_invoke)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(
        parse(&h,
              "{'seq':1,'type':'invoke','op':'claim','worker':3,'req':7}\n"
              "{'seq':2,'type':'invoke','op':'claim','worker':4,'req':8}\n"
              "{'seq':3,'type':'ok','op':'claim','worker':3,'req':7,'rows':2,'job':10}\n"
              "{'seq':4,'type':'ok','op':'claim','worker':3,'req':7,'rows':2,'job':11}\n"
              "{'seq':5,'type':'ok','op':'claim','worker':4,'req':8,'rows':0}\n"
              /* without req: the worker incarnation's latest invoke */
              "{'seq':6,'type':'invoke','op':'complete','worker':3,'job':10}\n"
              "{'seq':7,'type':'info','op':'complete','worker':3}\n"
              /* another incarnation of worker 3 never sent anything */
              "{'seq':8,'type':'fail','op':'complete','worker':3,'inc':1}\n"
              /* op mismatch: not this invoke's answer */
              "{'seq':9,'type':'ok','op':'renew','worker':3}\n",
              &err),
        0);
    ck_assert_int_eq(h.ev[2].invoke, 0);
    ck_assert_int_eq(h.ev[3].invoke, 0);
    ck_assert_int_eq(h.ev[4].invoke, 1);
    ck_assert_int_eq(h.ev[6].invoke, 5);
    ck_assert_int_eq(h.ev[7].invoke, -1);
    ck_assert_int_eq(h.ev[8].invoke, -1);
    ck_assert_int_eq(h.ev[0].invoke, -1);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_parse_out_of_order_lines_sorted_by_seq)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(parse(&h,
                           "{'seq':3,'type':'end'}\n"
                           "{'seq':1,'type':'invoke','op':'claim','worker':1,'req':1}\n"
                           "\n"
                           "{'seq':2,'type':'ok','op':'claim','worker':1,'req':1,'rows':0}\r\n",
                           &err),
                     0);
    ck_assert_uint_eq(h.n, 3);
    ck_assert_int_eq(h.ev[0].seq, 1);
    ck_assert_int_eq(h.ev[0].line, 2);
    ck_assert_int_eq(h.ev[1].seq, 2);
    ck_assert_int_eq(h.ev[1].line, 4); /* blank lines count; "\r\n" is accepted */
    ck_assert_int_eq(h.ev[2].seq, 3);
    ck_assert_int_eq(h.ev[2].line, 1);
    ck_assert_int_eq(h.ev[1].invoke, 0); /* pairing sees the sorted order */
    qc_history_fini(&h);
}
END_TEST

/* ---- torn and bad lines ----------------------------------------------- */

START_TEST(test_history_parse_torn_last_line_skipped_and_counted)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(parse(&h,
                           "{'type':'header','seed':1}\n"
                           "{'seq':1,'type':'end'}\n"
                           "{'seq':2,'type':'ok','op':'cla",
                           &err),
                     0);
    ck_assert_uint_eq(h.n, 1);
    ck_assert_uint_eq(h.torn, 1);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_parse_unterminated_valid_last_line_kept)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(parse(&h, "{'seq':1,'type':'end'}\n{'seq':2,'type':'end'}", &err), 0);
    ck_assert_uint_eq(h.n, 2);
    ck_assert_uint_eq(h.torn, 0);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_parse_bad_middle_line_einval_names_line)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(parse(&h,
                           "{'seq':1,'type':'end'}\n"
                           "\n"
                           "{'seq':2,'type':\n"
                           "{'seq':3,'type':'end'}\n",
                           &err),
                     QC_EINVAL);
    ck_assert_msg(strncmp(err.msg, "(text):3: invalid JSON: ", 24) == 0, "%s", err.msg);
    ck_assert_uint_eq(h.n, 0);
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_parse_bad_last_line_with_newline_einval)
{
    qc_history h;
    qc_err err;

    /* it ends with '\n', so it was written whole: not torn */
    ck_assert_int_eq(parse(&h, "{'seq':1,'type':'end'}\n{'seq':2,\n", &err), QC_EINVAL);
    ck_assert_msg(strncmp(err.msg, "(text):2: invalid JSON: ", 24) == 0, "%s", err.msg);
    ck_assert_int_eq(parse(&h, "{'seq':1,'type':'end'}\n[1,2]\n", &err), QC_EINVAL);
    ck_assert_str_eq(err.msg, "(text):2: invalid JSON: not an object");
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_load_bad_line_einval_names_file_and_line)
{
    char a[64], want[128];
    qc_history h;
    qc_err err;

    write_temp(a, "{'type':'header','seed':1}\n{'seq':1,'type':'end'}\nnot json\n"
                  "{'seq':2,'type':'end'}\n");
    const char *paths[] = {a};
    memset(&h, 0, sizeof h);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(qc_history_load(&h, paths, 1, &err), QC_EINVAL);
    snprintf(want, sizeof want, "%s:3: invalid JSON: ", a);
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
    qc_history_fini(&h);
    unlink(a);
}
END_TEST

START_TEST(test_history_load_empty_ledger_says_empty)
{
    char a[64], want[160];
    qc_history h;
    qc_err err;

    write_temp(a, "");
    const char *paths[] = {a};
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(qc_history_load(&h, paths, 1, &err), QC_EINVAL);
    snprintf(want, sizeof want, "ledger '%s' is empty", a);
    ck_assert_str_eq(err.msg, want);
    qc_history_fini(&h);
    /* qchaos audit: exit 2 (bad input), not 4 with no word */
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(qc_audit(paths, 1, NULL, NULL, stdout, &err), 2);
    ck_assert_str_eq(err.msg, want);
    unlink(a);
}
END_TEST

START_TEST(test_history_load_without_header_says_so)
{
    char a[64], b[64], want[160];
    qc_history h;
    qc_err err;

    write_temp(a, "{'seq':1,'type':'end'}\n");
    write_temp(b, "{'type':'header','seed':1}\n{'seq':2,'type':'end'}\n");
    const char *paths[] = {b, a}; /* the second of two lacks it */
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(qc_history_load(&h, paths, 2, &err), QC_EINVAL);
    snprintf(want, sizeof want, "ledger '%s' has no header line", a);
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
    qc_history_fini(&h);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(qc_audit(paths + 1, 1, NULL, NULL, stdout, &err), 2);
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
    unlink(a);
    unlink(b);
}
END_TEST

/* Audits ledger text into a fresh folder; returns the table output and
 * results.json (both malloc'd). */
static void audit_text(const char *text, char **table, char **results)
{
    char a[64], dir[] = "/tmp/qc_audit_XXXXXX", path[128];
    qc_err err;
    char *buf = NULL;
    size_t len = 0;

    write_temp(a, text);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *paths[] = {a};
    FILE *out = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(out);
    memset(&err, 0, sizeof err);
    int code = qc_audit(paths, 1, dir, NULL, out, &err);
    fclose(out);
    ck_assert_msg(code == 0 || code == 1 || code == 4, "audit exit %d: %s", code, err.msg);
    *table = buf;
    snprintf(path, sizeof path, "%s/results.json", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    *results = calloc(1, 1 << 20);
    ck_assert_ptr_nonnull(*results);
    fread(*results, 1, (1 << 20) - 1, f);
    fclose(f);
    unlink(path);
    rmdir(dir);
    unlink(a);
}

START_TEST(test_audit_killed_harness_says_cut_short)
{
    char *table, *results;

    /* no end event, torn last line: the harness was killed mid-write */
    audit_text("{'type':'header','seed':1}\n{'seq':1,'type':'invoke','op':'claim','worker':0,'t':1}\n"
               "{'seq':2,'type':'ok','op':'cl",
               &table, &results);
    ck_assert_msg(strstr(table, "qchaos: the run was cut short: the ledger has no end event") ==
                      table,
                  "%s", table);
    ck_assert_msg(strstr(table, "last line is torn") != NULL, "%s", table);
    ck_assert_msg(strstr(results, "\"cut_short\": true") != NULL, "%s", results);
    ck_assert_msg(strstr(results, "\"cut_short_reason\": \"the ledger has no end event") != NULL,
                  "%s", results);
    free(table);
    free(results);
    /* an interrupted run says so too */
    audit_text("{'type':'header','seed':1}\n{'seq':1,'type':'end','interrupted':true}\n", &table,
               &results);
    ck_assert_msg(strstr(table, "cut short: the run was interrupted") != NULL, "%s", table);
    free(table);
    free(results);
    /* a finished run does not */
    audit_text("{'type':'header','seed':1}\n{'seq':1,'type':'end','interrupted':false}\n", &table,
               &results);
    ck_assert_msg(strstr(table, "cut short") == NULL, "%s", table);
    ck_assert_msg(strstr(results, "\"cut_short\": false") != NULL, "%s", results);
    free(table);
    free(results);
}
END_TEST

START_TEST(test_history_parse_wrong_field_type_einval)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(parse(&h, "{'seq':1,'type':'ok','job':'seventeen'}\n", &err), QC_EINVAL);
    ck_assert_str_eq(err.msg, "(text):1: field \"job\" is not an integer");
    ck_assert_int_eq(parse(&h, "{'seq':1,'type':'ok','now':'noon'}\n", &err), QC_EINVAL);
    ck_assert_str_eq(err.msg, "(text):1: field \"now\" is not a number");
    ck_assert_int_eq(parse(&h, "{'seq':1,'type':'ok','token':[1]}\n", &err), QC_EINVAL);
    ck_assert_str_eq(err.msg, "(text):1: field \"token\" is not a string");
    /* an integer token is kept as its decimal text */
    ck_assert_int_eq(parse(&h, "{'seq':1,'type':'ok','token':12345}\n", &err), 0);
    ck_assert_str_eq(qc_s(h.ev[0].token), "12345");
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_parse_missing_seq_einval)
{
    qc_history h;
    qc_err err;

    ck_assert_int_eq(parse(&h, "{'seq':1,'type':'end'}\n{'type':'ok'}\n", &err), QC_EINVAL);
    ck_assert_str_eq(err.msg, "(text):2: event without \"seq\"");
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_load_missing_file_eio)
{
    const char *paths[] = {"/nonexistent/qchaos/ledger.jsonl"};
    qc_history h;
    qc_err err;

    memset(&h, 0, sizeof h);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(qc_history_load(&h, paths, 1, &err), QC_EIO);
    ck_assert_msg(strstr(err.msg, "/nonexistent/qchaos/ledger.jsonl") != NULL, "%s", err.msg);
    qc_history_fini(&h);
    qc_history_fini(&h); /* fini twice is harmless */
}
END_TEST

/* ---- several ledgers -------------------------------------------------- */

START_TEST(test_history_load_two_ledgers_merge_in_seq_order)
{
    char a[64], b[64];
    qc_history h;
    qc_err err;

    write_temp(a, "{'type':'header','seed':9,'lease_ms':3000}\n"
                  "{'seq':1,'type':'end','worker':1}\n"
                  "{'seq':5,'type':'end','worker':1}\n"
                  "{'seq':3,'type':'end','worker':1}\n");
    write_temp(b, "{'type':'header','seed':9,'lease_ms':4000}\n"
                  "{'seq':2,'type':'end','worker':2}\n"
                  "{'seq':4,'type':'end','worker':2}\n"
                  "{'seq':5,'type':'end','worker':2}\n"
                  "{'seq':6,'type':'end','worker':2}\n");
    const char *paths[] = {a, b};
    memset(&h, 0, sizeof h);
    memset(&err, 0, sizeof err);
    ck_assert_msg(qc_history_load(&h, paths, 2, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(h.n, 7);
    const int64_t seq[] = {1, 2, 3, 4, 5, 5, 6};
    const int file[] = {0, 1, 0, 1, 0, 1, 1}; /* a tie keeps file order */
    const int line[] = {2, 2, 4, 3, 3, 4, 5};
    for (size_t i = 0; i < 7; i++) {
        ck_assert_int_eq(h.ev[i].seq, seq[i]);
        ck_assert_int_eq(h.ev[i].file, file[i]);
        ck_assert_int_eq(h.ev[i].line, line[i]);
    }
    ck_assert_uint_eq(h.info.seed, 9);
    ck_assert_int_eq(h.info.lease_ms, 3000); /* the first header describes the run */
    qc_history_fini(&h);
    unlink(a);
    unlink(b);
}
END_TEST

START_TEST(test_op_name_each_op_named)
{
    ck_assert_str_eq(qc_op_name(QC_OP_NONE), "none");
    ck_assert_str_eq(qc_op_name(QC_OP_ENQUEUE), "enqueue");
    ck_assert_str_eq(qc_op_name(QC_OP_CLAIM), "claim");
    ck_assert_str_eq(qc_op_name(QC_OP_COMPLETE), "complete");
    ck_assert_str_eq(qc_op_name(QC_OP_RENEW), "renew");
    ck_assert_str_eq(qc_op_name(QC_OP_FAIL), "fail");
    ck_assert_str_eq(qc_op_name(QC_OP_REAP), "reap");
}
END_TEST

/* ---- size ------------------------------------------------------------- */

/* 200,000 lines as the ledger writer emits them, some out of seq order, and
 * a torn tail: loads in well under the 2 s asserted (about 0.5 s here). */
START_TEST(test_history_load_200k_lines_fast)
{
    enum { LINES = 200000 };
    size_t cap = (size_t)LINES * 220, len = 0;
    char *text = malloc(cap), path[64];
    qc_history h;
    qc_err err;
    struct timespec t0;
    FILE *f;
    int fd;

    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text + len, cap - len, "{\"type\":\"header\",\"seed\":3}\n");
    for (int i = 1; i <= LINES; i += 2) {
        /* pairs of lines swapped: seq i+1 is written before seq i */
        int job = i / 2 + 1, w = job % 16;
        len += (size_t)snprintf(
            text + len, cap - len,
            "{\"seq\":%d,\"t\":%.3f,\"type\":\"ok\",\"op\":\"claim\",\"worker\":%d,\"inc\":0,"
            "\"req\":%d,\"rows\":1,\"job\":%d,\"token\":\"%08x%08x%08x%08x\","
            "\"lease_until\":%.1f,\"now\":%.1f,\"attempt\":1,\"op_key\":\"%d\"}\n"
            "{\"seq\":%d,\"t\":%.3f,\"type\":\"invoke\",\"op\":\"claim\",\"worker\":%d,\"inc\":0,"
            "\"req\":%d}\n",
            i + 1, i * 0.5 + 0.25, w, job, job, (unsigned)job * 2654435761u, (unsigned)job,
            (unsigned)~job, (unsigned)job * 40503u, 1764469995123.0 + i + 5000, 1764469995123.0 + i,
            job, i, i * 0.5, w, job);
    }
    len += (size_t)snprintf(text + len, cap - len, "{\"seq\":%d,\"type\":\"e", LINES + 1);
    snprintf(path, sizeof path, "/tmp/qc_history_XXXXXX");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    free(text);

    const char *paths[] = {path};
    memset(&h, 0, sizeof h);
    memset(&err, 0, sizeof err);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_msg(qc_history_load(&h, paths, 1, &err) == 0, "%s", err.msg);
    double ms = ms_since(&t0);
    unlink(path);
    ck_assert_uint_eq(h.n, LINES);
    ck_assert_uint_eq(h.torn, 1);
    for (size_t i = 0; i < h.n; i++)
        ck_assert_int_eq(h.ev[i].seq, (int64_t)i + 1);
    ck_assert_int_eq(h.ev[1].invoke, 0);
    ck_assert_int_eq(h.ev[LINES - 1].invoke, LINES - 2);
    /* A speed target is a benchmark number, never a timed assertion. */
    fprintf(stderr, "check_history: loading 200,000 lines took %.0f ms\n", ms);
    qc_history_fini(&h);
}
END_TEST

/* A ledger big enough to be cut into parts parsed in parallel: line
 * numbers, in events and in errors, still count from the file's start. */
START_TEST(test_history_parse_large_ledger_line_numbers_exact)
{
    enum { LINES = 60000, BAD = 47123 };
    size_t cap = (size_t)LINES * 100, len = 0;
    char *text = malloc(cap);
    qc_history h;
    qc_err err;

    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text + len, cap - len, "{\"type\":\"header\",\"seed\":4}\n");
    for (int i = 2; i <= LINES; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "{\"seq\":%d,\"t\":%d.5,\"type\":\"effect\",\"job\":%d,"
                                "\"token\":\"tok-%d\",\"applied\":true}\n",
                                i, i, i, i % 1000);
    ck_assert_uint_gt(len, 4u << 20);
    memset(&h, 0, sizeof h);
    memset(&err, 0, sizeof err);
    ck_assert_msg(qc_history_parse(&h, text, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(h.n, LINES - 1);
    for (size_t i = 0; i < h.n; i++) {
        ck_assert_int_eq(h.ev[i].line, (int)i + 2);
        ck_assert_int_eq(h.ev[i].seq, (int64_t)i + 2);
        ck_assert_int_eq(h.ev[i].job, (int64_t)i + 2);
    }
    ck_assert_uint_eq(h.info.seed, 4);
    qc_history_fini(&h);

    /* break one line late in the file */
    char *p = text;
    for (int line = 1; line < BAD; line++)
        p = strchr(p, '\n') + 1;
    p[1] = 'x';
    ck_assert_int_eq(qc_history_parse(&h, text, &err), QC_EINVAL);
    ck_assert_msg(strncmp(err.msg, "(text):47123: invalid JSON: ", 28) == 0, "%s", err.msg);
    free(text);
    qc_history_fini(&h);
}
END_TEST

static Suite *history_suite(void)
{
    Suite *s = suite_create("history");
    TCase *tc;

    tc = tcase_create("header");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_history_parse_header_fields_filled);
    tcase_add_test(tc, test_history_parse_header_missing_numbers_defaults);
    tcase_add_test(tc, test_history_parse_uint64_seed_kept);
    tcase_add_test(tc, test_history_parse_header_columns_per_step);
    tcase_add_test(tc, test_history_load_seed_mismatch_einval);
    suite_add_tcase(s, tc);

    tc = tcase_create("events");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_history_parse_event_fields_read);
    tcase_add_test(tc, test_history_parse_req_range);
    tcase_add_test(tc, test_history_parse_monitor_and_fault_window_read);
    tcase_add_test(tc, test_history_parse_unknown_type_and_op_kept_as_other);
    tcase_add_test(tc, test_history_parse_equal_tokens_interned);
    tcase_add_test(tc, test_history_parse_completion_paired_with_invoke);
    tcase_add_test(tc, test_history_parse_out_of_order_lines_sorted_by_seq);
    tcase_add_test(tc, test_op_name_each_op_named);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad_input");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_history_parse_torn_last_line_skipped_and_counted);
    tcase_add_test(tc, test_history_parse_unterminated_valid_last_line_kept);
    tcase_add_test(tc, test_history_parse_bad_middle_line_einval_names_line);
    tcase_add_test(tc, test_history_parse_bad_last_line_with_newline_einval);
    tcase_add_test(tc, test_history_load_bad_line_einval_names_file_and_line);
    tcase_add_test(tc, test_history_parse_wrong_field_type_einval);
    tcase_add_test(tc, test_history_parse_missing_seq_einval);
    tcase_add_test(tc, test_history_load_missing_file_eio);
    tcase_add_test(tc, test_history_load_empty_ledger_says_empty);
    tcase_add_test(tc, test_history_load_without_header_says_so);
    tcase_add_test(tc, test_audit_killed_harness_says_cut_short);
    suite_add_tcase(s, tc);

    tc = tcase_create("merge");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_history_load_two_ledgers_merge_in_seq_order);
    suite_add_tcase(s, tc);

    tc = tcase_create("size");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_history_load_200k_lines_fast);
    tcase_add_test(tc, test_history_parse_large_ledger_line_numbers_exact);
    tcase_add_test(tc, test_history_load_fifo_device_and_huge_line_refused);
    tcase_add_test(tc, test_audit_cli_fifo_and_dev_zero_exit_2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(history_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
