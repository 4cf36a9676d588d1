/*
 * sessions.c - the monitor's samples of the workers' server sessions
 * (sessions.h).  The query names the sessions by the ids the workers
 * published, so no session name is needed (the witness's application_name
 * is only set when the witness is on, decision 301); the ledger's
 * "session" note of each connect ties an id to a worker incarnation.
 */
#include "sessions.h"
#include "clock.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SAMPLED 4096

int qc_sessions_sample(const qc_driver *d, qc_conn *c, const char *engine, atomic_int *pids,
                       long workers, double t0, qc_lbuf *lb)
{
    int pg = !strcmp(engine, "postgres"), my = !strcmp(engine, "mariadb");
    long n = workers < MAX_SAMPLED ? workers : MAX_SAMPLED;
    int *before = NULL;
    char *list = NULL;
    size_t cap, len = 0;
    qc_result r = {0};
    qc_err err = {0};
    int rc = 0, any = 0;

    if ((!pg && !my) || n <= 0 || pids == NULL)
        return 0;
    before = calloc((size_t)n, sizeof *before);
    cap = (size_t)n * 12 + 8;
    list = malloc(cap);
    if (before == NULL || list == NULL) {
        rc = QC_ENOMEM;
        goto out;
    }
    list[len++] = pg ? '{' : '(';
    for (long i = 0; i < n; i++) {
        before[i] = atomic_load(&pids[i]);
        if (before[i] <= 0)
            continue;
        len += (size_t)snprintf(list + len, cap - len, "%s%d", any ? "," : "", before[i]);
        any = 1;
    }
    list[len++] = pg ? '}' : ')';
    list[len] = '\0';
    if (!any)
        goto out;
    double sent = qc_clock_ms() - t0;
    if (pg) {
        const char *params[1] = {list};
        rc = d->exec(c, -1, 0,
                     "SELECT pid, state, "
                     "(extract(epoch FROM clock_timestamp() - xact_start) * 1000)::float8 "
                     "AS xact_ms, "
                     "(extract(epoch FROM clock_timestamp() - state_change) * 1000)::float8 "
                     "AS state_ms FROM pg_stat_activity WHERE pid = ANY($1::int[])",
                     1, params, &r, &err);
    } else {
        /* The ids are the integers the workers published, not text from
         * outside: the list is written into the statement. */
        char *q = malloc(len + 640);
        if (q == NULL) {
            rc = QC_ENOMEM;
            goto out;
        }
        snprintf(q, len + 640,
                 "SELECT p.ID AS pid, CASE WHEN p.COMMAND <> 'Sleep' THEN 'active' "
                 "WHEN t.trx_id IS NULL THEN 'idle' ELSE 'idle in transaction' END AS state, "
                 "TIMESTAMPDIFF(MICROSECOND, t.trx_started, NOW(6)) / 1000.0 AS xact_ms, "
                 "p.TIME_MS AS state_ms FROM information_schema.PROCESSLIST p "
                 "LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID "
                 "WHERE p.ID IN %s",
                 list);
        rc = d->exec(c, -1, 0, q, 0, NULL, &r, &err);
        free(q);
    }
    if (rc != 0)
        goto out;
    for (int row = 0; row < r.nrows; row++) {
        const char *pv = qc_result_get(&r, row, "pid");
        const char *st = qc_result_get(&r, row, "state");
        const char *xv = qc_result_get(&r, row, "xact_ms");
        const char *sv = qc_result_get(&r, row, "state_ms");
        int pid = pv ? atoi(pv) : 0;
        long w = -1;
        if (pid <= 0)
            continue;
        for (long i = 0; i < n && w < 0; i++)
            if (before[i] == pid && atomic_load(&pids[i]) == pid)
                w = i;
        if (w < 0)
            continue; /* reconnected meanwhile, or not a worker's */
        json_t *e = json_object();
        json_object_set_new(e, "type", json_string("session"));
        json_object_set_new(e, "worker", json_integer(w));
        json_object_set_new(e, "pid", json_integer(pid));
        if (st)
            json_object_set_new(e, "state", json_string(st));
        if (xv)
            json_object_set_new(e, "xact_ms", json_real(strtod(xv, NULL)));
        if (sv)
            json_object_set_new(e, "state_ms", json_real(strtod(sv, NULL)));
        json_object_set_new(e, "sent_t", json_real(sent));
        qc_ledger_append(lb, e);
    }
out:
    qc_result_clear(&r);
    free(before);
    free(list);
    return rc;
}
