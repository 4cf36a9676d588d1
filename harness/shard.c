/*
 * shard.c - the coordination of a run split over several qchaos processes
 * (shard.h has who does what).  The processes share nothing but the
 * database under test, so they meet in one small table of qchaos's schema,
 * qchaos.qchaos_shards, which shard 0 creates after setup (and so marks as
 * qchaos's, owner.h) and drops before its teardown's schema check.  Only
 * PostgreSQL is supported (the statements below are PostgreSQL's; the
 * runner refuses --shard on other engines).
 *
 * Invariant: a row's stage never goes down (GREATEST in the update), so a
 * count of shards "at stage S or beyond" only grows.
 */
#include "shard.h"
#include "clock.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern volatile sig_atomic_t qc_interrupted;

int qc_shard_parse(const char *arg, int *index, int *count, qc_err *err)
{
    char *end;
    long i, n;

    i = strtol(arg, &end, 10);
    if (end == arg || *end != '/' || arg[0] == '-')
        goto bad;
    const char *p = end + 1;
    n = strtol(p, &end, 10);
    if (end == p || *end || *p == '-' || n < 1 || n > QC_SHARD_MAX || i < 0 || i >= n)
        goto bad;
    *index = (int)i;
    *count = (int)n;
    return 0;
bad:
    return qc_err_set(err, QC_EINVAL, "--shard expects I/N with 0 <= I < N <= %d, got '%s'",
                      QC_SHARD_MAX, arg);
}

long qc_shard_share(long n, int index, int count)
{
    if (count <= 1)
        return n;
    return n / count + (index < n % count ? 1 : 0);
}

static int exec_sql(const qc_driver *d, qc_conn *c, const char *sql, int np,
                    const char *const *params, qc_result *r, qc_err *err)
{
    qc_result tmp = {0};
    int rc = d->exec(c, -1, 0, sql, np, params, r ? r : &tmp, err);
    qc_result_clear(&tmp);
    return rc;
}

int qc_shard_create(const qc_driver *d, qc_conn *c, uint64_t seed, int count, qc_err *err)
{
    char s[32], n[16];
    snprintf(s, sizeof s, "%" PRIu64, seed);
    snprintf(n, sizeof n, "%d", count);
    const char *params[2] = {s, n};
    int rc = exec_sql(d, c, "DROP TABLE IF EXISTS qchaos.qchaos_shards", 0, NULL, NULL, err);
    if (rc == 0)
        rc = exec_sql(d, c,
                      "CREATE TABLE qchaos.qchaos_shards (shard int PRIMARY KEY, shards int NOT "
                      "NULL, seed numeric NOT NULL, stage int NOT NULL, jobs bigint)",
                      0, NULL, NULL, err);
    if (rc == 0)
        rc = exec_sql(d, c,
                      "INSERT INTO qchaos.qchaos_shards VALUES (0, $2::int, $1::numeric, 1, NULL)",
                      2, params, NULL, err);
    if (rc != 0)
        qc_err_prefix(err, "shard 0: the coordination table qchaos.qchaos_shards");
    return rc;
}

int qc_shard_join(const qc_driver *d, qc_conn *c, uint64_t seed, int index, int count,
                  double timeout_s, qc_err *err)
{
    char s[32], n[16], i[16];
    snprintf(s, sizeof s, "%" PRIu64, seed);
    snprintf(n, sizeof n, "%d", count);
    snprintf(i, sizeof i, "%d", index);
    const char *params[3] = {s, n, i};
    double start = qc_clock_ms();

    for (;;) {
        qc_result r = {0};
        qc_err ignore = {0};
        /* an error while the table is not there yet: polled again (the
         * control connection is in autocommit, nothing stays aborted) */
        int rc = exec_sql(d, c,
                          "SELECT count(*) AS n FROM qchaos.qchaos_shards WHERE shard = 0 AND "
                          "seed = $1::numeric AND shards = $2::int AND stage BETWEEN 1 AND 4",
                          2, params, &r, &ignore);
        const char *v = rc == 0 ? qc_result_get(&r, 0, "n") : NULL;
        int found = v && atol(v) > 0;
        qc_result_clear(&r);
        if (found)
            break;
        if (qc_interrupted)
            return qc_err_set(err, QC_ECONN, "shard %d of %d: interrupted", index, count);
        if (qc_clock_ms() - start > timeout_s * 1000.0)
            return qc_err_set(err, QC_ECONN,
                              "shard %d of %d: shard 0 did not set up the run (seed %s) within "
                              "%.0f s (start shard 0 too, with the same --seed and scenario)",
                              index, count, s, timeout_s);
        qc_clock_sleep_ms(200);
    }
    int rc = exec_sql(d, c,
                      "INSERT INTO qchaos.qchaos_shards VALUES ($3::int, $2::int, $1::numeric, 1, "
                      "NULL) ON CONFLICT (shard) DO UPDATE SET stage = 1, jobs = NULL, seed = "
                      "EXCLUDED.seed, shards = EXCLUDED.shards",
                      3, params, NULL, err);
    if (rc != 0)
        qc_err_prefix(err, "shard %d of %d: joining", index, count);
    return rc;
}

int qc_shard_set(const qc_driver *d, qc_conn *c, int index, int stage, long jobs, qc_err *err)
{
    char i[16], st[16], j[32];
    snprintf(i, sizeof i, "%d", index);
    snprintf(st, sizeof st, "%d", stage);
    snprintf(j, sizeof j, "%ld", jobs);
    const char *params[3] = {i, st, jobs >= 0 ? j : NULL};
    return exec_sql(d, c,
                    "UPDATE qchaos.qchaos_shards SET stage = GREATEST(stage, $2::int), jobs = "
                    "COALESCE($3::bigint, jobs) WHERE shard = $1::int",
                    3, params, NULL, err);
}

int qc_shard_count_at(const qc_driver *d, qc_conn *c, int stage)
{
    char st[16];
    snprintf(st, sizeof st, "%d", stage);
    const char *params[1] = {st};
    qc_result r = {0};
    qc_err ignore = {0};
    if (exec_sql(d, c, "SELECT count(*) AS n FROM qchaos.qchaos_shards WHERE stage >= $1::int", 1,
                 params, &r, &ignore) != 0) {
        qc_result_clear(&r);
        return -1;
    }
    const char *v = qc_result_get(&r, 0, "n");
    int n = v ? atoi(v) : -1;
    qc_result_clear(&r);
    return n;
}

int qc_shard_wait(const qc_driver *d, qc_conn **c, const char *dsn, int stage, int count,
                  double timeout_s, qc_err *err)
{
    double start = qc_clock_ms();
    int have = -1;
    static const char *const names[] = {"", "joined", "enqueued", "drained", "stopped",
                                        "finished"};

    for (;;) {
        if (*c == NULL || !d->is_ok(*c)) {
            qc_err ignore = {0};
            if (*c)
                d->close(*c);
            *c = NULL;
            if (d->open(dsn, c, &ignore) != 0)
                *c = NULL;
        }
        if (*c != NULL && (have = qc_shard_count_at(d, *c, stage)) >= count)
            return 0;
        if (qc_interrupted)
            return qc_err_set(err, QC_ECONN, "interrupted while waiting for the other shards");
        if (qc_clock_ms() - start > timeout_s * 1000.0)
            return qc_err_set(err, QC_ECONN, "%d of %d shards %s within %.0f s", have < 0 ? 0 : have,
                              count, names[stage], timeout_s);
        /* 20 ms: the shards leave a barrier within about that of each
         * other (the query reads N rows) */
        qc_clock_sleep_ms(20);
    }
}

void qc_shard_drop(const qc_driver *d, qc_conn *c)
{
    qc_err ignore = {0};
    exec_sql(d, c, "DROP TABLE IF EXISTS qchaos.qchaos_shards", 0, NULL, NULL, &ignore);
}
