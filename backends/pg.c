/*
 * pg.c - the libpq driver (qc_driver_pg).
 *
 * Each qc_conn owns one PGconn and a table of the statements prepared on it,
 * indexed by the protocol's statement id.  A statement is prepared with
 * PQprepare on its first use (no parameter type OIDs: the server infers
 * them) and then run with PQexecPrepared; parameters always travel as text,
 * never pasted into SQL.  Unprepared statements (setup, teardown, DDL) use
 * PQexecParams, i.e. the extended protocol, so one call is one command.
 * exec_batch sends one prepared statement many times in pipeline mode
 * (the enqueue of a chunk of jobs in one round trip, issue 16).
 *
 * Invariants:
 *   - a table entry exists only for a statement the server has confirmed
 *     prepared under entry.name on this connection, with exactly entry.sql;
 *     the same id with different SQL (another protocol on the same
 *     connection) gets a fresh name, so a name never means two texts;
 *   - every PGresult is copied into a qc_result and cleared before return;
 *   - nothing is printed: the notice processor is silenced at open, and
 *     messages only go to qc_err; no message carries the password (the
 *     conninfo is redacted and the password value is scrubbed from libpq's
 *     text);
 *   - no global state: connections are independent and may be used from
 *     different threads, each by one thread at a time.
 */
#include "driver.h"

#include <ctype.h>
#include <errno.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>

typedef struct prep {
    char *sql;     /* text prepared under name; NULL = not prepared */
    char name[32]; /* server-side statement name, "qc<id>" or "qc<id>_<n>" */
} prep;

struct qc_conn {
    PGconn *pg;
    prep *preps; /* indexed by statement id */
    int npreps;
    int renames; /* counter for fresh names when an id changes text */
    int no_prepare; /* 1: unnamed statements only (transaction-mode poolers) */
    PGcancel *cancel; /* made at open; PQcancel on it is thread-safe */
};

static void notice_ignore(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* Copies the first line of s into buf. */
static void first_line(const char *s, char *buf, size_t n)
{
    size_t len;

    if (s == NULL)
        s = "";
    len = strcspn(s, "\r\n");
    snprintf(buf, n, "%.*s", (int)len, s);
}

static void free_conn(qc_conn *c)
{
    int i;

    if (c == NULL)
        return;
    if (c->cancel != NULL)
        PQfreeCancel(c->cancel);
    for (i = 0; i < c->npreps; i++)
        free(c->preps[i].sql);
    free(c->preps);
    free(c);
}

static int pg_open(const char *conninfo, qc_conn **out, qc_err *err)
{
    static const char *const keys[] = {"dbname", "fallback_application_name", NULL};
    const char *vals[] = {conninfo, "qchaos", NULL};
    PQconninfoOption *opts = NULL, *o;
    const char *host = NULL, *port = NULL, *password = NULL;
    char *perr = NULL;
    char line[512], redacted[512], msg[768];
    qc_conn *c = NULL;
    int rc = 0;

    *out = NULL;
    opts = PQconninfoParse(conninfo ? conninfo : "", &perr);
    if (opts == NULL) {
        /* The string is not echoed: a mistyped key ("passwrd=") would carry
         * its secret past the redaction. */
        (void)redacted;
        first_line(perr ? perr : "out of memory", line, sizeof line);
        /* libpq quotes the token it stumbled on ("invalid percent-encoded
         * token: ..."), which may be the password. */
        qc_scrub_conninfo(line, sizeof line, conninfo);
        rc = qc_err_set(err, QC_EINVAL, "invalid connection string: %s", line);
        goto out;
    }
    for (o = opts; o->keyword != NULL; o++) {
        if (strcmp(o->keyword, "host") == 0 && o->val && *o->val)
            host = o->val;
        else if (strcmp(o->keyword, "hostaddr") == 0 && o->val && *o->val && host == NULL)
            host = o->val;
        else if (strcmp(o->keyword, "port") == 0 && o->val && *o->val)
            port = o->val;
        else if (strcmp(o->keyword, "password") == 0 && o->val && *o->val)
            password = o->val;
    }
    c = calloc(1, sizeof *c);
    if (c == NULL) {
        rc = qc_err_set(err, QC_ENOMEM, "out of memory opening a connection");
        goto out;
    }
    c->pg = PQconnectdbParams(keys, vals, 1);
    if (c->pg == NULL) {
        rc = qc_err_set(err, QC_ENOMEM, "out of memory opening a connection");
        goto out;
    }
    PQsetNoticeProcessor(c->pg, notice_ignore, NULL);
    if (PQstatus(c->pg) != CONNECTION_OK) {
        const char *h = PQhost(c->pg), *p = PQport(c->pg);

        if (h == NULL || *h == '\0')
            h = host ? host : "localhost";
        if (p == NULL || *p == '\0')
            p = port ? port : "5432";
        first_line(PQerrorMessage(c->pg), line, sizeof line);
        snprintf(msg, sizeof msg, "cannot connect to %s:%s: ", h, p);
        strncat(msg, line, sizeof msg - strlen(msg) - 1);
        qc_scrub_secret(msg, sizeof msg, password);
        qc_scrub_conninfo(msg, sizeof msg, conninfo);
        rc = qc_err_set(err, QC_ECONN, "%s", msg);
        goto out;
    }
    if (qc_driver_session_time_zone()[0] != '\0') {
        /* decision 1120: the interval form takes the offset east-positive
         * (a POSIX string '+05:30' would mean west) */
        char cmd[80];
        PGresult *res;

        snprintf(cmd, sizeof cmd, "SET TIME ZONE INTERVAL '%s' HOUR TO MINUTE",
                 qc_driver_session_time_zone());
        res = PQexec(c->pg, cmd);
        if (PQresultStatus(res) != PGRES_COMMAND_OK) {
            first_line(PQresultErrorMessage(res), line, sizeof line);
            PQclear(res);
            rc = qc_err_set(err, QC_EDB, "setting the session time zone %s: %s",
                            qc_driver_session_time_zone(), line);
            goto out;
        }
        PQclear(res);
    }
    /* Made now, while only this thread knows c: cancel reads it from other
     * threads later.  NULL (out of memory) only means cancel does nothing. */
    c->cancel = PQgetCancel(c->pg);
    *out = c;
    c = NULL;
out:
    if (c != NULL) {
        PQfinish(c->pg);
        free_conn(c);
    }
    PQconninfoFree(opts);
    PQfreemem(perr);
    return rc;
}

/* Maps a failed (or NULL) result to QC_EDB or QC_ECONN; clears res. */
static int map_error(qc_conn *c, PGresult *res, qc_err *err)
{
    char line[512];
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    int rc;

    if (primary != NULL)
        first_line(primary, line, sizeof line);
    else
        first_line(res ? PQresultErrorMessage(res) : PQerrorMessage(c->pg), line, sizeof line);
    if (line[0] == '\0')
        first_line(PQerrorMessage(c->pg), line, sizeof line);
    if (PQstatus(c->pg) == CONNECTION_OK && res != NULL) {
        rc = qc_err_set(err, QC_EDB, "%s %s", state ? state : "XX000", line);
    } else {
        rc = qc_err_set(err, QC_ECONN, "connection lost: %s%s%s", state ? state : "",
                        state ? " " : "", line);
    }
    if (err != NULL && state != NULL)
        snprintf(err->sqlstate, sizeof err->sqlstate, "%s", state);
    PQclear(res);
    return rc;
}

/* Copies a successful result into out (lower-cased column names) and clears
 * res. */
/* Copies res into out in one allocation (qc_result.block): the column
 * array, the cell array, then every name (lower-cased) and cell text. */
static int copy_result(PGresult *res, qc_result *out, qc_err *err)
{
    const char *tag = PQcmdTuples(res);
    int r, col, rc = 0;
    int ncols = PQnfields(res), nrows = PQntuples(res);
    size_t ncells = (size_t)ncols * (size_t)nrows, bytes;

    out->affected = (tag != NULL && *tag) ? strtol(tag, NULL, 10) : -1;
    if (ncols <= 0)
        goto out;
    bytes = ((size_t)ncols + ncells) * sizeof(char *);
    for (col = 0; col < ncols; col++)
        bytes += strlen(PQfname(res, col)) + 1;
    for (r = 0; r < nrows; r++)
        for (col = 0; col < ncols; col++)
            if (!PQgetisnull(res, r, col))
                bytes += (size_t)PQgetlength(res, r, col) + 1;
    char *block = malloc(bytes);
    if (block == NULL) {
        rc = qc_err_set(err, QC_ENOMEM, "out of memory copying a result");
        goto out;
    }
    char **cols = (char **)(void *)block, **cells = nrows > 0 ? cols + ncols : NULL;
    char *s = block + ((size_t)ncols + ncells) * sizeof(char *);
    for (col = 0; col < ncols; col++) {
        const char *name = PQfname(res, col);
        cols[col] = s;
        while (*name)
            *s++ = (char)tolower((unsigned char)*name++);
        *s++ = '\0';
    }
    for (r = 0; r < nrows; r++) {
        for (col = 0; col < ncols; col++) {
            char **cell = &cells[(size_t)r * (size_t)ncols + (size_t)col];
            if (PQgetisnull(res, r, col)) {
                *cell = NULL;
                continue;
            }
            size_t len = (size_t)PQgetlength(res, r, col);
            memcpy(s, PQgetvalue(res, r, col), len);
            s[len] = '\0';
            *cell = s;
            s += len + 1;
        }
    }
    out->block = block;
    out->cols = cols;
    out->cells = cells;
    out->ncols = ncols;
    out->nrows = nrows;
out:
    PQclear(res);
    return rc;
}

/* Takes ownership of res: a command or rows go to out, anything else to
 * err. */
static int finish(qc_conn *c, PGresult *res, qc_result *out, qc_err *err)
{
    ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_EMPTY_QUERY)
        return copy_result(res, out, err);
    return map_error(c, res, err);
}

static const char *result_sqlstate(const PGresult *res)
{
    const char *s = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    return s ? s : "";
}

/* Makes sure statement id is prepared with sql; returns its name via *name. */
static int ensure_prepared(qc_conn *c, int id, const char *sql, int nparams, const char **name,
                           qc_err *err)
{
    prep *e;
    PGresult *res;
    char *copy;

    if (id >= c->npreps) {
        int n = id + 16, i;
        prep *np = realloc(c->preps, (size_t)n * sizeof *np);
        if (np == NULL)
            return qc_err_set(err, QC_ENOMEM, "out of memory preparing statement %d", id);
        for (i = c->npreps; i < n; i++)
            memset(&np[i], 0, sizeof np[i]);
        c->preps = np;
        c->npreps = n;
    }
    e = &c->preps[id];
    *name = e->name;
    if (e->sql != NULL && strcmp(e->sql, sql) == 0)
        return 0;
    if (e->sql == NULL && e->name[0] == '\0')
        snprintf(e->name, sizeof e->name, "qc%d", id);
    else
        snprintf(e->name, sizeof e->name, "qc%d_%d", id, ++c->renames);
    free(e->sql);
    e->sql = NULL;
    copy = strdup(sql);
    if (copy == NULL)
        return qc_err_set(err, QC_ENOMEM, "out of memory preparing statement %d", id);
    res = PQprepare(c->pg, e->name, sql, nparams, NULL);
    if (res != NULL && PQresultStatus(res) != PGRES_COMMAND_OK &&
        strcmp(result_sqlstate(res), "42P05") == 0 && PQtransactionStatus(c->pg) == PQTRANS_IDLE) {
        /* Already prepared on this backend (a pooler handed us a session
         * that has it): drop it and prepare our text. */
        char dealloc[64];
        PQclear(res);
        snprintf(dealloc, sizeof dealloc, "DEALLOCATE %s", e->name);
        PQclear(PQexec(c->pg, dealloc));
        res = PQprepare(c->pg, e->name, sql, nparams, NULL);
    }
    if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK) {
        free(copy);
        return map_error(c, res, err);
    }
    PQclear(res);
    e->sql = copy;
    return 0;
}

static int pg_exec(qc_conn *c, int stmt_id, int prepare, const char *sql, int nparams,
                   const char *const *params, qc_result *out, qc_err *err)
{
    PGresult *res;
    const char *name = NULL;
    int rc, attempt;

    qc_result_clear(out);
    if (!prepare || stmt_id < 0 || c->no_prepare) {
        res = PQexecParams(c->pg, sql, nparams, NULL, params, NULL, NULL, 0);
        return finish(c, res, out, err);
    }
    for (attempt = 0;; attempt++) {
        rc = ensure_prepared(c, stmt_id, sql, nparams, &name, err);
        if (rc != 0)
            return rc;
        res = PQexecPrepared(c->pg, name, nparams, params, NULL, NULL, 0);
        if (res != NULL && PQresultStatus(res) == PGRES_FATAL_ERROR &&
            strcmp(result_sqlstate(res), "26000") == 0) {
            /* The server lost the statement (a pooler swapped backends,
             * DEALLOCATE ALL, DISCARD): forget it; re-prepare once, which
             * only works outside a transaction (inside, the error aborted
             * it). */
            free(c->preps[stmt_id].sql);
            c->preps[stmt_id].sql = NULL;
            if (attempt == 0 && PQtransactionStatus(c->pg) == PQTRANS_IDLE) {
                PQclear(res);
                continue;
            }
        }
        return finish(c, res, out, err);
    }
}

/* One statement n times in pipeline mode (driver.h exec_batch).  The
 * statement is prepared first, outside the pipeline (ensure_prepared is a
 * round trip of its own, once per connection); then n Bind/Execute pairs
 * and one Sync go out (libpq flushes as its buffer fills and, when the
 * socket would block, reads the server's answers meanwhile, so a long
 * pipeline does not deadlock on full socket buffers), and the n answers
 * are read in order.  After the first error the server skips to the Sync:
 * the later runs answer PGRES_PIPELINE_ABORTED. */
static int pg_exec_batch(qc_conn *c, int stmt_id, const char *sql, int nparams, int n,
                         const char *const *params, qc_result *outs, int *failed, qc_err *err)
{
    const char *name = NULL;
    int rc = 0, i, sent = 0, synced = 0;

    *failed = -1;
    for (i = 0; i < n; i++)
        qc_result_clear(&outs[i]);
    if (c->no_prepare || stmt_id < 0) {
        for (i = 0; i < n && rc == 0; i++)
            if ((rc = pg_exec(c, stmt_id, 1, sql, nparams, params + (size_t)i * (size_t)nparams,
                              &outs[i], err)) != 0)
                *failed = i;
        return rc;
    }
    if ((rc = ensure_prepared(c, stmt_id, sql, nparams, &name, err)) != 0) {
        *failed = 0;
        return rc;
    }
    if (PQenterPipelineMode(c->pg) != 1) {
        *failed = 0;
        return map_error(c, NULL, err);
    }
    for (i = 0; i < n; i++) {
        if (PQsendQueryPrepared(c->pg, name, nparams, params + (size_t)i * (size_t)nparams, NULL,
                                NULL, 0) != 1)
            break;
        sent++;
    }
    synced = PQpipelineSync(c->pg) == 1;
    for (i = 0; i < sent; i++) {
        PGresult *res = PQgetResult(c->pg);
        PGresult *extra;
        ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

        if (res == NULL && PQstatus(c->pg) != CONNECTION_OK) {
            if (rc == 0) {
                rc = map_error(c, NULL, err);
                *failed = i;
            }
            break;
        }
        /* each query's results end with a NULL */
        while ((extra = PQgetResult(c->pg)) != NULL)
            PQclear(extra);
        if (rc != 0 || st == PGRES_PIPELINE_ABORTED) {
            PQclear(res);
            continue;
        }
        if ((rc = finish(c, res, &outs[i], err)) != 0)
            *failed = i;
    }
    if (rc == 0 && sent < n) {
        rc = map_error(c, NULL, err);
        *failed = sent;
    }
    if (synced && PQstatus(c->pg) == CONNECTION_OK) {
        /* the Sync's own result, then out of pipeline mode */
        PGresult *res;
        while ((res = PQgetResult(c->pg)) != NULL) {
            ExecStatusType st = PQresultStatus(res);
            PQclear(res);
            if (st == PGRES_PIPELINE_SYNC)
                break;
        }
    }
    if (PQexitPipelineMode(c->pg) != 1 && rc == 0) {
        rc = map_error(c, NULL, err);
        *failed = n - 1;
    }
    return rc;
}

/* Runs a transaction-control command; COMMIT that the server turned into a
 * ROLLBACK (the transaction had failed) is reported as QC_EDB. */
static int simple(qc_conn *c, const char *cmd, qc_err *err)
{
    PGresult *res = PQexec(c->pg, cmd);
    qc_result r = {0};
    int rc;

    if (res != NULL && PQresultStatus(res) == PGRES_COMMAND_OK && strcmp(cmd, "COMMIT") == 0 &&
        strcmp(PQcmdStatus(res), "ROLLBACK") == 0) {
        PQclear(res);
        rc = qc_err_set(err, QC_EDB, "25P02 COMMIT rolled back an aborted transaction");
        if (err != NULL)
            snprintf(err->sqlstate, sizeof err->sqlstate, "25P02");
        return rc;
    }
    rc = finish(c, res, &r, err);
    qc_result_clear(&r);
    return rc;
}

static int pg_begin(qc_conn *c, qc_err *err)
{
    return simple(c, "BEGIN", err);
}

static int pg_commit(qc_conn *c, qc_err *err)
{
    return simple(c, "COMMIT", err);
}

static int pg_rollback(qc_conn *c, qc_err *err)
{
    return simple(c, "ROLLBACK", err);
}

static void pg_abort(qc_conn *c)
{
    int fd;

    if (c == NULL)
        return;
    /* Shut the socket down first: PQfinish's Terminate message then cannot
     * reach the server, which sees the connection vanish mid-session. */
    fd = PQsocket(c->pg);
    if (fd >= 0)
        shutdown(fd, SHUT_RDWR);
    PQfinish(c->pg);
    free_conn(c);
}

static void pg_close(qc_conn *c)
{
    if (c == NULL)
        return;
    PQfinish(c->pg);
    free_conn(c);
}

static void pg_server_version(qc_conn *c, char *buf, size_t n)
{
    const char *v = c ? PQparameterStatus(c->pg, "server_version") : NULL;
    int num = c ? PQserverVersion(c->pg) : 0;

    if (n == 0)
        return;
    if (v != NULL && *v)
        snprintf(buf, n, "PostgreSQL %.*s", (int)strcspn(v, " "), v);
    else if (num >= 100000)
        snprintf(buf, n, "PostgreSQL %d.%d", num / 10000, num % 10000);
    else if (num > 0)
        snprintf(buf, n, "PostgreSQL %d.%d.%d", num / 10000, num / 100 % 100, num % 100);
    else
        snprintf(buf, n, "PostgreSQL");
}

static int pg_is_ok(qc_conn *c)
{
    return c != NULL && PQstatus(c->pg) == CONNECTION_OK;
}

static int pg_set_option(qc_conn *c, const char *key, const char *value, qc_err *err)
{
    if (!strcmp(key, "prepare")) {
        c->no_prepare = !strcmp(value, "off");
        return 0;
    }
    if (!strcmp(key, "statement_timeout_ms")) {
        char *end = NULL, cmd[64];
        long ms = value ? strtol(value, &end, 10) : -1;
        qc_result r = {0};
        int rc;

        if (value == NULL || *value == '\0' || *end != '\0' || ms < 0 || ms > 2147483647L)
            return qc_err_set(err, QC_EINVAL, "pg driver: statement_timeout_ms must be 0.."
                              "2147483647, got '%s'", value ? value : "");
        snprintf(cmd, sizeof cmd, "SET statement_timeout = %ld", ms);
        rc = finish(c, PQexec(c->pg, cmd), &r, err);
        qc_result_clear(&r);
        return rc;
    }
    return qc_err_set(err, QC_EINVAL, "pg driver: unknown option '%s'", key);
}

static int pg_backend_pid(qc_conn *c)
{
    return c ? PQbackendPID(c->pg) : 0;
}

static int pg_cancel(qc_conn *c)
{
    char buf[256];

    if (c == NULL || c->cancel == NULL)
        return 0;
    /* PQcancel only reads the PGcancel: safe beside the owner's PQexec*. */
    return PQcancel(c->cancel, buf, (int)sizeof buf) ? 0 : QC_ECONN;
}

/* Copies libpq's parse error msg into out (size n) with every quoted part
 * that is not a connection keyword or a single character replaced by ***:
 * libpq quotes the whole URI ("... in URI: \"postgresql://u:secret@[x\"")
 * or a word of the string, which may be a password. */
static void scrub_quoted(const char *msg, char *out, size_t n)
{
    PQconninfoOption *defs = PQconndefaults(), *d;
    size_t len = 0;
    const char *p = msg;

    while (*p && len + 1 < n) {
        const char *close = *p == '"' ? strchr(p + 1, '"') : NULL;
        size_t w = close ? (size_t)(close - p - 1) : 0;
        int keep = close == NULL || w <= 1;

        for (d = defs; !keep && d && d->keyword; d++)
            keep = strlen(d->keyword) == w && strncmp(d->keyword, p + 1, w) == 0;
        if (keep) {
            const char *end = close ? close + 1 : p + 1;
            while (p < end && len + 1 < n)
                out[len++] = *p++;
            continue;
        }
        len += (size_t)snprintf(out + len, n - len, "\"***\"");
        if (len >= n)
            len = n - 1;
        p = close + 1;
    }
    out[len] = '\0';
    PQconninfoFree(defs);
}

static int pg_check_conninfo(const char *conninfo, qc_err *err)
{
    char *perr = NULL;
    char line[512], safe[512];
    PQconninfoOption *opts = PQconninfoParse(conninfo ? conninfo : "", &perr);
    int rc = 0;

    if (opts == NULL) {
        scrub_quoted(perr ? perr : "out of memory", safe, sizeof safe);
        first_line(safe, line, sizeof line);
        rc = qc_err_set(err, perr ? QC_EINVAL : QC_ENOMEM, "invalid connection string: %s%s", line,
                        strstr(line, "\"***\"") != NULL
                            ? " (the quoted part is hidden: it may be a password; every setting "
                              "is key=value)"
                            : "");
    }
    PQconninfoFree(opts);
    PQfreemem(perr);
    return rc;
}

static void pg_describe(qc_conn *c, qc_conn_target *t)
{
    const char *h = c ? PQhost(c->pg) : NULL, *p = c ? PQport(c->pg) : NULL;
    const char *db = c ? PQdb(c->pg) : NULL, *u = c ? PQuser(c->pg) : NULL;

    memset(t, 0, sizeof *t);
    snprintf(t->host, sizeof t->host, "%s", h ? h : "");
    snprintf(t->port, sizeof t->port, "%s", p ? p : "");
    snprintf(t->dbname, sizeof t->dbname, "%s", db ? db : "");
    snprintf(t->user, sizeof t->user, "%s", u ? u : "");
}

/* Drains every notification libpq has already parsed. */
static int drain_notifies(qc_conn *c)
{
    int n = 0;
    PGnotify *nt;

    while ((nt = PQnotifies(c->pg)) != NULL) {
        PQfreemem(nt);
        n++;
    }
    return n;
}

static int pg_wait_notify(qc_conn *c, long timeout_ms, int *count, qc_err *err)
{
    int fd;

    *count = 0;
    if (c == NULL || PQstatus(c->pg) != CONNECTION_OK)
        return qc_err_set(err, QC_ECONN, "listen connection lost");
    if ((*count = drain_notifies(c)) > 0)
        return 0;
    fd = PQsocket(c->pg);
    if (fd < 0)
        return qc_err_set(err, QC_ECONN, "listen connection lost (no socket)");
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int pr = poll(&pfd, 1, timeout_ms < 0 ? 0 : (int)timeout_ms);
    if (pr < 0 && errno != EINTR)
        return qc_err_set(err, QC_ECONN, "listen connection: poll: %s", strerror(errno));
    /* Whatever poll said, read what is there: a notification that came in
     * just as the time ran out is still a notification. */
    if (PQconsumeInput(c->pg) == 0 || PQstatus(c->pg) != CONNECTION_OK) {
        char line[256];
        first_line(PQerrorMessage(c->pg), line, sizeof line);
        return qc_err_set(err, QC_ECONN, "listen connection lost: %s",
                          line[0] ? line : "server closed the connection");
    }
    *count += drain_notifies(c);
    return 0;
}

const qc_driver qc_driver_pg = {
    .name = "pg",
    .style = QC_PARAM_DOLLAR,
    .open = pg_open,
    .exec = pg_exec,
    .begin = pg_begin,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .abort = pg_abort,
    .close = pg_close,
    .server_version = pg_server_version,
    .is_ok = pg_is_ok,
    .set_option = pg_set_option,
    .backend_pid = pg_backend_pid,
    .cancel = pg_cancel,
    .check_conninfo = pg_check_conninfo,
    .describe = pg_describe,
    .wait_notify = pg_wait_notify,
    .exec_batch = pg_exec_batch,
};
