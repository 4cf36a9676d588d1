/*
 * owner.c - what in the database under test is qchaos's own (owner.h).
 *
 * Every statement here is catalog SQL of the engine, run unprepared on the
 * control connection; the statements that name objects are built by the
 * server (format() with %I / %L on PostgreSQL) or quoted here with
 * backticks doubled (MariaDB), never from user text.
 */
#include "owner.h"
#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARK QC_OWNER_MARK " " QC_VERSION

static int is_marked(const char *comment)
{
    return comment && !strncmp(comment, QC_OWNER_MARK, strlen(QC_OWNER_MARK));
}

/* Appends item to a ", "-separated list in buf (size n), or sep-less for
 * the first; truncated with "..." when full. */
static void list_add(char *buf, size_t n, const char *sep, const char *item)
{
    size_t len = strlen(buf);
    if (len + strlen(sep) + strlen(item) + 4 >= n) {
        if (len + 4 < n && (len < 3 || strcmp(buf + len - 3, "...")))
            strcat(buf, "...");
        return;
    }
    if (len)
        strcat(buf, sep);
    strcat(buf, item);
}

static int check_pg(const qc_driver *d, qc_conn *c, qc_owner *st, qc_err *err)
{
    qc_result r = {0};
    int rc = d->exec(c, -1, 0,
                     "SELECT coalesce(obj_description(oid, 'pg_namespace'), '') AS mark FROM "
                     "pg_namespace WHERE nspname = 'qchaos'",
                     0, NULL, &r, err);
    if (rc != 0)
        goto out;
    st->schema_existed = r.nrows > 0;
    st->schema_ours = r.nrows == 0 || is_marked(qc_result_get(&r, 0, "mark"));
    rc = d->exec(c, -1, 0,
                 "SELECT c.oid, n.nspname || '.' || c.relname AS name, "
                 "coalesce(obj_description(c.oid, 'pg_class'), '') AS mark FROM pg_class c "
                 "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'qchaos' "
                 "AND c.relkind IN ('r', 'p', 'f') ORDER BY 2",
                 0, NULL, &r, err);
    if (rc != 0)
        goto out;
    snprintf(st->foreign_ids, sizeof st->foreign_ids, "{");
    for (int i = 0; i < r.nrows; i++) {
        if (is_marked(qc_result_get(&r, i, "mark")))
            continue;
        const char *name = qc_result_get(&r, i, "name"), *oid = qc_result_get(&r, i, "oid");
        list_add(st->foreign, sizeof st->foreign, ", ", name ? name : "?");
        /* an oid list that does not fit would let a foreign table be marked */
        if (strlen(st->foreign_ids) + strlen(oid ? oid : "0") + 8 >= sizeof st->foreign_ids) {
            rc = qc_err_set(err, QC_EINVAL, "the schema 'qchaos' holds too many tables qchaos did "
                            "not create to keep track of: %s", st->foreign);
            goto out;
        }
        list_add(st->foreign_ids + 1, sizeof st->foreign_ids - 2, ",", oid ? oid : "0");
    }
    strcat(st->foreign_ids, "}");
out:
    qc_result_clear(&r);
    return rc;
}

static int check_mariadb(const qc_driver *d, qc_conn *c, qc_owner *st, qc_err *err)
{
    qc_result r = {0};
    int rc = d->exec(c, -1, 0,
                     "SELECT TABLE_NAME AS name, TABLE_COMMENT AS mark, TABLE_SCHEMA AS db FROM "
                     "information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND "
                     "TABLE_TYPE = 'BASE TABLE' AND TABLE_NAME LIKE 'qchaos\\_%' ORDER BY 1",
                     0, NULL, &r, err);
    for (int i = 0; rc == 0 && i < r.nrows; i++) {
        if (is_marked(qc_result_get(&r, i, "mark")))
            continue;
        const char *name = qc_result_get(&r, i, "name"), *db = qc_result_get(&r, i, "db");
        snprintf(st->where, sizeof st->where, "the database '%s'", db ? db : "?");
        list_add(st->foreign, sizeof st->foreign, ", ", name ? name : "?");
        /* a name list that does not fit would let a foreign table be marked */
        if (strlen(st->foreign_ids) + strlen(name ? name : "?") + 8 >= sizeof st->foreign_ids) {
            rc = qc_err_set(err, QC_EINVAL, "%s holds too many tables qchaos did not create to "
                            "keep track of: %s", st->where, st->foreign);
            break;
        }
        list_add(st->foreign_ids, sizeof st->foreign_ids, "\n", name ? name : "?");
    }
    qc_result_clear(&r);
    return rc;
}

int qc_owner_check(const qc_driver *d, qc_conn *c, const char *engine, int allow_existing,
                   qc_owner *st, qc_err *err)
{
    int rc = 0;
    memset(st, 0, sizeof *st);
    snprintf(st->where, sizeof st->where, "the schema 'qchaos'");
    if (!strcmp(engine, "postgres"))
        st->kind = 1;
    else if (!strcmp(engine, "mariadb"))
        st->kind = 2;
    else
        return 0;
    rc = st->kind == 1 ? check_pg(d, c, st, err) : check_mariadb(d, c, st, err);
    if (rc != 0) {
        qc_err_prefix(err, "cannot list the tables qchaos would work on");
        return rc;
    }
    if (st->foreign[0] && !allow_existing)
        return qc_err_set(err, QC_EINVAL,
                          "%s holds tables qchaos did not create: %s; the protocol's teardown "
                          "would drop them: move them away, or run with --allow-existing to let "
                          "qchaos use them",
                          st->where,
                          st->foreign);
    return 0;
}

int qc_owner_mark(const qc_driver *d, qc_conn *c, qc_owner *st, qc_err *err)
{
    qc_result r = {0};
    int rc = 0;
    if (st->kind == 1) {
        const char *params[2] = {MARK, st->foreign_ids[0] ? st->foreign_ids : "{}"};
        rc = d->exec(c, -1, 0,
                     "SELECT format('COMMENT ON TABLE %I.%I IS %L', n.nspname, c.relname, "
                     "$1::text) AS stmt FROM pg_class c JOIN pg_namespace n ON n.oid = "
                     "c.relnamespace WHERE n.nspname = 'qchaos' AND c.relkind IN ('r', 'p', 'f') "
                     "AND c.oid <> ALL ($2::oid[])",
                     2, params, &r, err);
        for (int i = 0; rc == 0 && i < r.nrows; i++) {
            qc_result x = {0};
            const char *stmt = qc_result_get(&r, i, "stmt");
            if (stmt)
                rc = d->exec(c, -1, 0, stmt, 0, NULL, &x, err);
            qc_result_clear(&x);
        }
        /* the schema's comment only when qchaos created it (setup did) */
        if (rc == 0 && !st->schema_existed) {
            qc_result x = {0};
            rc = d->exec(c, -1, 0, "COMMENT ON SCHEMA qchaos IS '" MARK "'", 0, NULL, &x, err);
            qc_result_clear(&x);
            if (rc == 0)
                st->schema_ours = 1;
        }
    } else if (st->kind == 2) {
        rc = d->exec(c, -1, 0,
                     "SELECT TABLE_NAME AS name, TABLE_COMMENT AS mark FROM "
                     "information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND "
                     "TABLE_TYPE = 'BASE TABLE' AND TABLE_NAME LIKE 'qchaos\\_%'",
                     0, NULL, &r, err);
        for (int i = 0; rc == 0 && i < r.nrows; i++) {
            const char *name = qc_result_get(&r, i, "name");
            char stmt[600], quoted[300];
            size_t k = 0;
            if (!name || is_marked(qc_result_get(&r, i, "mark")))
                continue;
            /* a foreign table (kept under --allow-existing) stays unmarked */
            char needle[260];
            snprintf(needle, sizeof needle, "\n%s\n", name);
            char hay[sizeof st->foreign_ids + 2];
            snprintf(hay, sizeof hay, "\n%s\n", st->foreign_ids);
            if (strstr(hay, needle))
                continue;
            for (const char *p = name; *p && k + 3 < sizeof quoted; p++) {
                if (*p == '`')
                    quoted[k++] = '`';
                quoted[k++] = *p;
            }
            quoted[k] = 0;
            snprintf(stmt, sizeof stmt, "ALTER TABLE `%s` COMMENT = '" MARK "'", quoted);
            qc_result x = {0};
            rc = d->exec(c, -1, 0, stmt, 0, NULL, &x, err);
            qc_result_clear(&x);
        }
    }
    qc_result_clear(&r);
    if (rc != 0)
        qc_err_prefix(err, "cannot mark qchaos's tables");
    return rc;
}

void qc_owner_finish(const qc_driver *d, qc_conn *c, const qc_owner *st, char *note, size_t n)
{
    if (n > 0)
        note[0] = 0;
    if (st->kind != 1 || !st->schema_ours || !c || !d->is_ok(c))
        return;
    qc_result r = {0};
    qc_err err = {0};
    /* Without CASCADE: a schema that still holds anything stays. */
    if (d->exec(c, -1, 0, "DROP SCHEMA IF EXISTS qchaos", 0, NULL, &r, &err) != 0)
        snprintf(note, n, "schema 'qchaos' kept: %s", err.msg);
    qc_result_clear(&r);
}

#define STR_(x) #x
#define STR(x) STR_(x)

int qc_owner_lock(const qc_driver *d, qc_conn *c, const char *engine, int shared, int *taken,
                  qc_err *err)
{
    qc_result r = {0};
    int rc = 0;
    *taken = 0;
    if (!strcmp(engine, "postgres")) {
        /* tried for up to QC_RUN_LOCK_WAIT_MS: a run that just ended has
         * closed its connection, but its server process may not have
         * exited yet and still holds the lock (CI: the next broken-adapter
         * run of tests/adapters.sh met it); a run still going holds it far
         * longer */
        double until = qc_clock_ms() + QC_RUN_LOCK_WAIT_MS;
        for (;;) {
            rc = d->exec(c, -1, 0,
                         shared ? "SELECT pg_try_advisory_lock_shared(" STR(
                                      QC_RUN_LOCK_CLASS) ", " STR(QC_RUN_LOCK_OBJ) ") AS got"
                                : "SELECT pg_try_advisory_lock(" STR(QC_RUN_LOCK_CLASS) ", " STR(
                                      QC_RUN_LOCK_OBJ) ") AS got",
                         0, NULL, &r, err);
            if (rc != 0)
                goto out;
            const char *got = qc_result_get(&r, 0, "got");
            if (got && (got[0] == 't' || got[0] == '1')) {
                *taken = 1;
                goto out;
            }
            if (qc_clock_ms() >= until)
                break;
            qc_result_clear(&r);
            qc_clock_sleep_ms(100);
        }
        /* who holds it (a granted lock of another session on this database) */
        qc_err e2 = {0};
        char who[400] = "another session";
        if (d->exec(c, -1, 0,
                    "SELECT a.pid, coalesce(nullif(a.application_name, ''), '-') AS app, "
                    "coalesce(host(a.client_addr), 'local socket') AS client, "
                    "to_char(a.backend_start, 'YYYY-MM-DD HH24:MI:SS TZ') AS since, "
                    "l.mode FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                    "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = " STR(
                        QC_RUN_LOCK_CLASS) " AND l.objid = " STR(QC_RUN_LOCK_OBJ) " AND "
                                           "l.database = (SELECT oid FROM pg_database WHERE "
                                           "datname = current_database()) AND l.pid <> "
                                           "pg_backend_pid() ORDER BY a.backend_start LIMIT 1",
                    0, NULL, &r, &e2) == 0 &&
            r.nrows > 0) {
            const char *mode = qc_result_get(&r, 0, "mode");
            snprintf(who, sizeof who, "server process %s (application_name %s, from %s, since %s%s)",
                     qc_result_get(&r, 0, "pid"), qc_result_get(&r, 0, "app"),
                     qc_result_get(&r, 0, "client"), qc_result_get(&r, 0, "since"),
                     mode && !strcmp(mode, "ShareLock") ? ", the shards of a --shard run" : "");
        }
        rc = qc_err_set(err, QC_ESTATE,
                        "another qchaos run is using this database: %s holds its run lock "
                        "(advisory lock %d, %d).  Two runs on one database drop and recreate "
                        "each other's tables and report violations that are not real: give each "
                        "run a database of its own (or wait for that one to end)%s",
                        who, QC_RUN_LOCK_CLASS, QC_RUN_LOCK_OBJ,
                        shared ? "; the shards of one run must be started together" : "");
    } else if (!strcmp(engine, "mariadb") || !strcmp(engine, "mysql")) {
        if (shared)
            goto out;
        rc = d->exec(c, -1, 0,
                     "SELECT GET_LOCK(CONCAT('qchaos-run:', COALESCE(DATABASE(), '')), " STR(
                         QC_RUN_LOCK_WAIT_S) ") AS got, "
                     "IS_USED_LOCK(CONCAT('qchaos-run:', COALESCE(DATABASE(), ''))) AS holder",
                     0, NULL, &r, err);
        if (rc != 0)
            goto out;
        const char *got = qc_result_get(&r, 0, "got");
        if (got && !strcmp(got, "1")) {
            *taken = 1;
            goto out;
        }
        const char *holder = qc_result_get(&r, 0, "holder");
        rc = qc_err_set(err, QC_ESTATE,
                        "another qchaos run is using this database: connection %s holds its run "
                        "lock (GET_LOCK 'qchaos-run:' and the database's name).  Two runs on one "
                        "database drop and recreate each other's tables and report violations "
                        "that are not real: give each run a database of its own (or wait for "
                        "that one to end)",
                        holder ? holder : "?");
    }
out:
    qc_result_clear(&r);
    return rc;
}
