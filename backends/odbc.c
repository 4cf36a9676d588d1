/*
 * odbc.c - the unixODBC driver (qc_driver_odbc): MariaDB / MySQL through
 * MariaDB Connector/ODBC, and any other ODBC 3 driver (FreeTDS for SQL
 * Server, psqlODBC) as far as the driver interface goes.
 *
 * One environment handle (ODBC 3) serves every connection.  It lives in the
 * static odbc_env, written only by qc_odbc_global_init() and
 * qc_odbc_global_fini(), which the runner calls before any thread starts and
 * after every thread has been joined; connections only read it (unixODBC
 * allows SQLAllocHandle(SQL_HANDLE_DBC) on one environment from several
 * threads).  That handle, and a mutex that serialises connecting and
 * disconnecting (connect_lock: the MariaDB driver is not thread-safe
 * there), are the driver's only global state.
 *
 * Each qc_conn owns one connection handle and a table of prepared statement
 * handles indexed by the protocol's statement id: SQLPrepare on first use,
 * then only SQLBindParameter + SQLExecute.  Parameters always travel bound
 * (SQL_C_CHAR text, SQL_NULL_DATA for NULL), never pasted into SQL.  Rows are
 * copied out as text (SQLGetData in a loop, so long values arrive whole);
 * of several result sets the last one with columns is the result.
 *
 * abort() drops the connection as a crash would.  ODBC hides the socket, so
 * at open the driver asks the server for the client's TCP port and finds the
 * one socket of this process with that local port and the server's port
 * (/proc/net/tcp{,6} give its inode, /proc/self/fd the descriptor linking
 * to "socket:[inode]": paths only, no other thread's descriptor is
 * touched); abort shuts it down before SQLDisconnect, so the server sees the peer
 * vanish and rolls back any open transaction.  When no socket was found
 * (UNIX socket, proxy, permissions), abort on MariaDB/MySQL has the server
 * KILL the session from a fresh connection instead; odbc.h tells which path
 * runs (qc_odbc_abort_path / qc_odbc_abort_ex).
 *
 * Invariants:
 *   - a table entry holds a statement handle prepared with exactly entry.sql
 *     on this connection; the same id with other SQL is prepared afresh;
 *   - a cached handle is left with no open cursor between calls (its
 *     results are read to SQL_NO_DATA); a handle whose call failed is
 *     freed, never reused (see odbc_exec);
 *   - after a QC_ECONN the connection is marked lost: is_ok() is false and
 *     exec/begin/commit refuse without touching the network;
 *   - the socket descriptor is only shut down while /proc/self/fd still
 *     links it to the socket inode seen at open, so a descriptor number
 *     reused by another thread after the client library closed ours is
 *     never touched;
 *   - nothing is printed; messages go to qc_err only and never carry the
 *     password (its value is scrubbed from driver texts, and the connection
 *     string is only ever quoted redacted).  The connection string itself is
 *     kept (password included) solely to open the KILL fallback connection.
 */
#include "odbc.h"

#include <ctype.h>
#include <dirent.h>
#include <pthread.h>
#include <sql.h>
#include <sqlext.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#define LOGIN_TIMEOUT_S 10 /* SQL_ATTR_LOGIN_TIMEOUT: a stopped server must not hang open */

/* See the file comment: written only by global init / fini. */
static SQLHENV odbc_env = SQL_NULL_HENV;

/* Serialises connecting and disconnecting: MariaDB Connector/ODBC 3.1
 * resets the error state of its (shared) environment object when a
 * connection is allocated or freed, and two threads doing so at once race
 * on it (ThreadSanitizer, two concurrent SQLDriverConnect calls).  It
 * protects no data of ours; it is never held across a statement, only
 * across SQLDriverConnect (bounded by LOGIN_TIMEOUT_S) and
 * SQLDisconnect / SQLFreeHandle of a connection. */
static pthread_mutex_t connect_lock = PTHREAD_MUTEX_INITIALIZER;

enum { DBMS_OTHER = 0, DBMS_MARIADB, DBMS_SQLSERVER, DBMS_POSTGRES };

typedef struct prep {
    SQLHSTMT h; /* prepared handle, SQL_NULL_HSTMT = none */
    char *sql;  /* text prepared on h */
} prep;

struct qc_conn {
    SQLHDBC dbc;
    prep *preps; /* indexed by statement id */
    int npreps;
    int lost;               /* 1 after QC_ECONN: unusable */
    int in_txn;             /* autocommit is off: begin ran, commit / rollback did not */
    int no_prepare;         /* set_option("prepare", "off"): SQLExecDirect only */
    int dbms;               /* DBMS_* from SQL_DBMS_NAME */
    long session;           /* server session id (CONNECTION_ID, @@SPID, backend pid), 0 unknown */
    int sock_fd;            /* the connection's socket, -1 unknown */
    unsigned long sock_ino; /* its socket inode (/proc/self/fd link "socket:[ino]") */
    char *conninfo;         /* the connection string as given: only for the KILL fallback */
    char *password;         /* Pwd / Password value, for scrubbing messages; may be NULL */
    char where[160];        /* "host:port" for messages */
    char dbms_name[64];
    char dbms_ver[64];
    long timeout_s;         /* SQL_ATTR_QUERY_TIMEOUT for new handles, 0 = none */
    /* cancel: the handle being executed (SQL_NULL_HSTMT between calls),
     * published by the owner under cur_mu so another thread's cancel never
     * sees a freed handle.  Held only to publish / clear it and across the
     * cancel request itself, never across the owner's statement. */
    pthread_mutex_t cur_mu;
    SQLHSTMT cur;
};

/* ---- global environment ------------------------------------------------ */

int qc_odbc_global_init(qc_err *err)
{
    SQLHENV env = SQL_NULL_HENV;
    SQLRETURN r;

    if (odbc_env != SQL_NULL_HENV)
        return 0;
    r = SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &env);
    if (!SQL_SUCCEEDED(r))
        return qc_err_set(err, QC_ENOMEM, "odbc: cannot allocate the ODBC environment (rc %d)",
                          (int)r);
    r = SQLSetEnvAttr(env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)(uintptr_t)SQL_OV_ODBC3, 0);
    if (!SQL_SUCCEEDED(r)) {
        SQLFreeHandle(SQL_HANDLE_ENV, env);
        return qc_err_set(err, QC_EIO, "odbc: the driver manager refused ODBC version 3 (rc %d)",
                          (int)r);
    }
    odbc_env = env;
    return 0;
}

void qc_odbc_global_fini(void)
{
    if (odbc_env != SQL_NULL_HENV)
        SQLFreeHandle(SQL_HANDLE_ENV, odbc_env);
    odbc_env = SQL_NULL_HENV;
}

/* ---- small helpers ----------------------------------------------------- */

/* Finds key (case-insensitive) in an ODBC connection string
 * "k1=v1;k2={v;2}}};..." and copies its value, braces removed and "}}"
 * unescaped, into out.  Returns 1 when found. */
static int conn_get(const char *s, const char *key, char *out, size_t n)
{
    size_t klen = strlen(key);

    while (s != NULL && *s) {
        const char *k, *kend;
        size_t o = 0;
        int match;

        while (*s == ';' || isspace((unsigned char)*s))
            s++;
        k = s;
        while (*s && *s != '=' && *s != ';')
            s++;
        kend = s;
        while (kend > k && isspace((unsigned char)kend[-1]))
            kend--;
        match = (size_t)(kend - k) == klen && strncasecmp(k, key, klen) == 0;
        if (*s != '=')
            continue;
        s++;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '{') {
            for (s++; *s; s++) {
                if (*s == '}' && s[1] == '}')
                    s++;
                else if (*s == '}')
                    break;
                if (match && o + 1 < n)
                    out[o++] = *s;
            }
            if (*s == '}')
                s++;
            while (*s && *s != ';')
                s++;
        } else {
            const char *v = s, *vend;
            while (*s && *s != ';')
                s++;
            vend = s;
            while (vend > v && isspace((unsigned char)vend[-1]))
                vend--;
            for (; match && v < vend && o + 1 < n; v++)
                out[o++] = *v;
        }
        if (match) {
            if (n > 0)
                out[o] = '\0';
            return 1;
        }
    }
    return 0;
}

/* Whether hay contains needle, ignoring ASCII case (strcasestr is a GNU
 * extension). */
static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);

    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return n == 0;
}

/* Whether v can be a host name, an address or a port as an ODBC string
 * gives it: a libpq string read as ODBC yields one attribute "host" whose
 * value is the rest of the string ("127.0.0.1 port=5 password=x"). */
static int plausible_part(const char *v)
{
    return strpbrk(v, " \t\r\n='\"{}@/?&") == NULL;
}

/* "host:port" (or a DSN name, or the redacted string) for messages; never
 * a password, whatever the form of conninfo. */
static void describe_target(const char *conninfo, char *where, size_t n, int *port_out)
{
    char host[128] = "", port[32] = "", driver[128] = "", dsn[128] = "", *comma;
    const char *def = "3306";

    if (!conn_get(conninfo, "Server", host, sizeof host) &&
        !conn_get(conninfo, "Host", host, sizeof host))
        conn_get(conninfo, "Address", host, sizeof host);
    conn_get(conninfo, "Port", port, sizeof port);
    conn_get(conninfo, "Driver", driver, sizeof driver);
    if (strncasecmp(host, "tcp:", 4) == 0)
        memmove(host, host + 4, strlen(host + 4) + 1);
    if ((comma = strchr(host, ',')) != NULL) { /* SQL Server "host,port" */
        *comma = '\0';
        if (port[0] == '\0')
            snprintf(port, sizeof port, "%s", comma + 1);
    }
    if (contains_ci(driver, "tds") || contains_ci(driver, "sql server"))
        def = "1433";
    else if (contains_ci(driver, "postgres"))
        def = "5432";
    if (port[0] == '\0')
        snprintf(port, sizeof port, "%s", def);
    *port_out = atoi(port);
    if (host[0] != '\0' && plausible_part(host) && plausible_part(port)) {
        snprintf(where, n, "%s:%s", host, port);
    } else if (conn_get(conninfo, "DSN", dsn, sizeof dsn) && dsn[0] != '\0' &&
               plausible_part(dsn)) {
        snprintf(where, n, "DSN %s", dsn);
        *port_out = 0;
    } else {
        char red[128];
        qc_redact_conninfo(conninfo, red, sizeof red);
        snprintf(where, n, "'%s'", red);
        *port_out = 0;
    }
    qc_scrub_conninfo(where, n, conninfo);
}

/* Copies msg without the "[vendor][component]" prefixes ODBC layers add. */
static void strip_vendor(const char *msg, char *out, size_t n)
{
    const char *p = msg;
    size_t len;

    while (*p == '[') {
        const char *close = strchr(p, ']');
        if (close == NULL)
            break;
        p = close + 1;
    }
    if (*p == '\0')
        p = msg;
    len = strcspn(p, "\r\n");
    snprintf(out, n, "%.*s", (int)len, p);
}

/* The first diagnostic record of h that is not a mere warning (else the
 * first one): SQLSTATE, native error and message. */
static void read_diag(SQLSMALLINT type, SQLHANDLE h, char state[6], SQLINTEGER *native, char *msg,
                      size_t n)
{
    SQLCHAR st[6], text[1024];
    SQLINTEGER nat;
    SQLSMALLINT len;
    SQLSMALLINT i;
    int have = 0;

    snprintf(state, 6, "HY000");
    *native = 0;
    snprintf(msg, n, "unknown ODBC error");
    for (i = 1; i <= 8; i++) {
        SQLRETURN r = SQLGetDiagRec(type, h, i, st, &nat, text, sizeof text, &len);
        if (!SQL_SUCCEEDED(r))
            break;
        st[5] = '\0';
        text[sizeof text - 1] = '\0';
        if (have && strncmp((char *)st, "01", 2) == 0)
            continue;
        snprintf(state, 6, "%s", (char *)st);
        *native = nat;
        strip_vendor((char *)text, msg, n);
        if (strncmp(state, "01", 2) != 0)
            break;
        have = 1;
    }
}

/* Whether a diagnostic means the connection is gone (outcome unknown). */
static int is_conn_lost(const char *state, SQLINTEGER native, const char *msg)
{
    static const char *const states[] = {"08S01", "08003", "08007", "08001",
                                         "08004", "HYT00", "HYT01", NULL};
    static const char *const texts[] = {"server has gone away", "Lost connection",
                                        "Connection was killed", "Communication link failure",
                                        NULL};
    int i;

    for (i = 0; states[i] != NULL; i++)
        if (strcmp(state, states[i]) == 0)
            return 1;
    /* MariaDB / MySQL client and server codes: 2006 gone away, 2013 lost
     * during query, 2055 lost at reading, 1927 connection killed, 1053
     * server shutdown in progress, 4031 (MySQL 8) inactivity disconnect. */
    if (native == 2006 || native == 2013 || native == 2055 || native == 1927 || native == 1053 ||
        native == 4031)
        return 1;
    for (i = 0; texts[i] != NULL; i++)
        if (strstr(msg, texts[i]) != NULL)
            return 1;
    return 0;
}

/* Maps the diagnostics of a failed call on h to QC_EDB or QC_ECONN (marking
 * c lost). */
static int map_error(qc_conn *c, SQLSMALLINT type, SQLHANDLE h, qc_err *err)
{
    char state[6], msg[600];
    SQLINTEGER native;
    int rc;

    read_diag(type, h, state, &native, msg, sizeof msg);
    qc_scrub_secret(msg, sizeof msg, c->password);
    if (is_conn_lost(state, native, msg)) {
        c->lost = 1;
        rc = qc_err_set(err, QC_ECONN, "connection lost: %s %s", state, msg);
    } else {
        rc = qc_err_set(err, QC_EDB, "%s %s", state, msg);
    }
    if (err != NULL)
        snprintf(err->sqlstate, sizeof err->sqlstate, "%s", state);
    return rc;
}

/* ---- results ----------------------------------------------------------- */

/* Reads column col of the current row as text into *out (NULL = SQL NULL),
 * piece by piece so a long value arrives whole. */
static int get_text(qc_conn *c, SQLHSTMT h, SQLUSMALLINT col, char **out, qc_err *err)
{
    size_t cap = 128, len = 0;
    char *buf = malloc(cap), *nb;

    *out = NULL;
    if (buf == NULL)
        return qc_err_set(err, QC_ENOMEM, "out of memory reading column %d", (int)col);
    for (;;) {
        SQLLEN ind = 0;
        SQLRETURN r = SQLGetData(h, col, SQL_C_CHAR, buf + len, (SQLLEN)(cap - len), &ind);
        size_t room = cap - len, want;

        if (r == SQL_NO_DATA)
            break; /* every piece has been returned */
        if (!SQL_SUCCEEDED(r)) {
            free(buf);
            return map_error(c, SQL_HANDLE_STMT, h, err);
        }
        if (ind == SQL_NULL_DATA) {
            free(buf);
            return 0;
        }
        if (ind != SQL_NO_TOTAL && ind >= 0 && (size_t)ind < room) {
            len += (size_t)ind; /* the rest fitted */
            break;
        }
        if (r == SQL_SUCCESS && ind == SQL_NO_TOTAL) {
            len += strnlen(buf + len, room);
            break;
        }
        /* Truncated: the buffer holds room - 1 bytes and a NUL. */
        len += room - 1;
        want = (ind == SQL_NO_TOTAL || ind < 0) ? cap * 2 : len + ((size_t)ind - (room - 1)) + 1;
        if (want < cap * 2)
            want = cap * 2;
        nb = realloc(buf, want);
        if (nb == NULL) {
            free(buf);
            return qc_err_set(err, QC_ENOMEM, "out of memory reading column %d", (int)col);
        }
        buf = nb;
        cap = want;
    }
    buf[len] = '\0';
    *out = buf;
    return 0;
}

/* Copies the current result set (ncols > 0) of h into out. */
static int read_rows(qc_conn *c, SQLHSTMT h, SQLSMALLINT ncols, qc_result *out, qc_err *err)
{
    size_t cap = 0;
    SQLSMALLINT i;
    SQLRETURN r;
    int rc = 0;

    qc_result_clear(out);
    out->ncols = ncols;
    out->affected = -1;
    out->cols = calloc((size_t)ncols, sizeof *out->cols);
    if (out->cols == NULL)
        goto oom;
    for (i = 0; i < ncols; i++) {
        SQLCHAR name[256];
        SQLSMALLINT nlen = 0, type, dec, nullable;
        SQLULEN size;
        char *s;

        r = SQLDescribeCol(h, (SQLUSMALLINT)(i + 1), name, sizeof name, &nlen, &type, &size, &dec,
                           &nullable);
        if (!SQL_SUCCEEDED(r)) {
            rc = map_error(c, SQL_HANDLE_STMT, h, err);
            goto fail;
        }
        name[sizeof name - 1] = '\0';
        if ((s = strdup((char *)name)) == NULL)
            goto oom;
        for (out->cols[i] = s; *s; s++)
            *s = (char)tolower((unsigned char)*s);
    }
    while ((r = SQLFetch(h)) != SQL_NO_DATA) {
        size_t row = (size_t)out->nrows;

        if (!SQL_SUCCEEDED(r)) {
            rc = map_error(c, SQL_HANDLE_STMT, h, err);
            goto fail;
        }
        if (row == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            char **nc = realloc(out->cells, ncap * (size_t)ncols * sizeof *nc);
            if (nc == NULL)
                goto oom;
            memset(nc + cap * (size_t)ncols, 0, (ncap - cap) * (size_t)ncols * sizeof *nc);
            out->cells = nc;
            cap = ncap;
        }
        out->nrows++; /* counted first: a failure below frees the partial row */
        for (i = 0; i < ncols; i++) {
            rc = get_text(c, h, (SQLUSMALLINT)(i + 1), &out->cells[row * (size_t)ncols + (size_t)i],
                          err);
            if (rc != 0)
                goto fail;
        }
    }
    return 0;
oom:
    rc = qc_err_set(err, QC_ENOMEM, "out of memory copying a result");
fail:
    qc_result_clear(out);
    return rc;
}

/* Collects every result of an executed statement: out gets the last result
 * set that has columns (affected -1), else the last row count.  Leaves h
 * without an open cursor on success. */
static int collect(qc_conn *c, SQLHSTMT h, qc_result *out, qc_err *err)
{
    qc_result cur = {0};
    long count = -1;
    int have_rows = 0, rc;

    for (;;) {
        SQLSMALLINT ncols = 0;
        SQLRETURN r = SQLNumResultCols(h, &ncols);

        if (!SQL_SUCCEEDED(r))
            return map_error(c, SQL_HANDLE_STMT, h, err);
        if (ncols > 0) {
            if ((rc = read_rows(c, h, ncols, &cur, err)) != 0)
                return rc;
            qc_result_move(out, &cur);
            have_rows = 1;
        } else {
            SQLLEN n = -1;
            if (SQL_SUCCEEDED(SQLRowCount(h, &n)))
                count = (long)n;
        }
        r = SQLMoreResults(h);
        if (r == SQL_NO_DATA)
            break;
        if (!SQL_SUCCEEDED(r))
            return map_error(c, SQL_HANDLE_STMT, h, err);
    }
    if (!have_rows)
        qc_result_clear(out);
    out->affected = have_rows ? -1 : count;
    return 0;
}

/* ---- statements -------------------------------------------------------- */

/* Applies c->timeout_s to a new statement handle (best effort: a driver
 * that does not support it leaves statements unbounded). */
static void set_query_timeout(qc_conn *c, SQLHSTMT h)
{
    if (c->timeout_s > 0)
        SQLSetStmtAttr(h, SQL_ATTR_QUERY_TIMEOUT, (SQLPOINTER)(uintptr_t)c->timeout_s,
                       SQL_IS_UINTEGER);
}

/* Publishes (h) or clears (SQL_NULL_HSTMT) the handle being executed. */
static void set_current(qc_conn *c, SQLHSTMT h)
{
    pthread_mutex_lock(&c->cur_mu);
    c->cur = h;
    pthread_mutex_unlock(&c->cur_mu);
}

/* Makes sure statement id has a handle prepared with sql; returns it. */
static int ensure_prepared(qc_conn *c, int id, const char *sql, SQLHSTMT *out, qc_err *err)
{
    prep *e;
    SQLHSTMT h = SQL_NULL_HSTMT;
    SQLRETURN r;
    char *copy;

    if (id >= c->npreps) {
        int n = id + 16, i;
        prep *np = realloc(c->preps, (size_t)n * sizeof *np);
        if (np == NULL)
            return qc_err_set(err, QC_ENOMEM, "out of memory preparing statement %d", id);
        for (i = c->npreps; i < n; i++) {
            np[i].h = SQL_NULL_HSTMT;
            np[i].sql = NULL;
        }
        c->preps = np;
        c->npreps = n;
    }
    e = &c->preps[id];
    if (e->h != SQL_NULL_HSTMT && e->sql != NULL && strcmp(e->sql, sql) == 0) {
        *out = e->h;
        return 0;
    }
    if (e->h != SQL_NULL_HSTMT)
        SQLFreeHandle(SQL_HANDLE_STMT, e->h);
    e->h = SQL_NULL_HSTMT;
    free(e->sql);
    e->sql = NULL;
    if ((copy = strdup(sql)) == NULL)
        return qc_err_set(err, QC_ENOMEM, "out of memory preparing statement %d", id);
    r = SQLAllocHandle(SQL_HANDLE_STMT, c->dbc, &h);
    if (!SQL_SUCCEEDED(r)) {
        free(copy);
        return map_error(c, SQL_HANDLE_DBC, c->dbc, err);
    }
    set_query_timeout(c, h);
    r = SQLPrepare(h, (SQLCHAR *)copy, SQL_NTS);
    if (!SQL_SUCCEEDED(r)) {
        int rc = map_error(c, SQL_HANDLE_STMT, h, err);
        SQLFreeHandle(SQL_HANDLE_STMT, h);
        free(copy);
        return rc;
    }
    e->h = h;
    e->sql = copy;
    *out = h;
    return 0;
}

static int odbc_exec(qc_conn *c, int stmt_id, int prepare, const char *sql, int nparams,
                     const char *const *params, qc_result *out, qc_err *err)
{
    static char empty[1] = "";
    SQLHSTMT h = SQL_NULL_HSTMT;
    SQLLEN *ind = NULL;
    SQLRETURN r;
    int direct = !prepare || stmt_id < 0 || c->no_prepare, rc = 0, i;

    qc_result_clear(out);
    out->affected = -1;
    if (c->lost)
        return qc_err_set(err, QC_ECONN, "connection lost: %s (an earlier request lost it)",
                          c->where);
    if (nparams > 0 && (ind = calloc((size_t)nparams, sizeof *ind)) == NULL)
        return qc_err_set(err, QC_ENOMEM, "out of memory binding %d parameters", nparams);
    if (direct) {
        r = SQLAllocHandle(SQL_HANDLE_STMT, c->dbc, &h);
        if (!SQL_SUCCEEDED(r)) {
            h = SQL_NULL_HSTMT;
            rc = map_error(c, SQL_HANDLE_DBC, c->dbc, err);
            goto out;
        }
        set_query_timeout(c, h);
    } else if ((rc = ensure_prepared(c, stmt_id, sql, &h, err)) != 0) {
        h = SQL_NULL_HSTMT;
        goto out;
    }
    for (i = 0; i < nparams; i++) {
        const char *v = params[i];
        size_t len = v ? strlen(v) : 0;

        ind[i] = v ? (SQLLEN)len : SQL_NULL_DATA;
        r = SQLBindParameter(h, (SQLUSMALLINT)(i + 1), SQL_PARAM_INPUT, SQL_C_CHAR,
                             len > 4000 ? SQL_LONGVARCHAR : SQL_VARCHAR, len ? len : 1, 0,
                             v ? (SQLPOINTER)v : (SQLPOINTER)empty, (SQLLEN)len, &ind[i]);
        if (!SQL_SUCCEEDED(r)) {
            rc = map_error(c, SQL_HANDLE_STMT, h, err);
            goto out;
        }
    }
    set_current(c, h);
    r = direct ? SQLExecDirect(h, (SQLCHAR *)sql, SQL_NTS) : SQLExecute(h);
    if (r == SQL_NO_DATA) {
        /* ODBC 3: a searched UPDATE / DELETE that touched no row. */
        out->affected = 0;
    } else if (!SQL_SUCCEEDED(r)) {
        rc = map_error(c, SQL_HANDLE_STMT, h, err);
    } else {
        rc = collect(c, h, out, err);
    }
    set_current(c, SQL_NULL_HSTMT);
out:
    if (h != SQL_NULL_HSTMT) {
        if (direct) {
            SQLFreeHandle(SQL_HANDLE_STMT, h);
        } else if (rc != 0) {
            /* Never reuse a handle whose call failed: MariaDB Connector/ODBC
             * 3.1.15 blocks for ever in the next SQLExecute of a prepared
             * SELECT that failed after its column metadata was sent (a
             * deadlock in a range SELECT ... FOR UPDATE) once
             * SQLFreeStmt(SQL_CLOSE) ran on it.  Freed, it is prepared
             * afresh on its next use. */
            SQLFreeHandle(SQL_HANDLE_STMT, h);
            c->preps[stmt_id].h = SQL_NULL_HSTMT;
            free(c->preps[stmt_id].sql);
            c->preps[stmt_id].sql = NULL;
        } else {
            SQLFreeStmt(h, SQL_RESET_PARAMS); /* ind is about to be freed */
        }
    }
    free(ind);
    return rc;
}

/* ---- transactions ------------------------------------------------------ */

static int set_autocommit(qc_conn *c, int on, qc_err *err)
{
    SQLRETURN r = SQLSetConnectAttr(
        c->dbc, SQL_ATTR_AUTOCOMMIT,
        (SQLPOINTER)(uintptr_t)(on ? SQL_AUTOCOMMIT_ON : SQL_AUTOCOMMIT_OFF), SQL_IS_UINTEGER);

    if (!SQL_SUCCEEDED(r))
        return map_error(c, SQL_HANDLE_DBC, c->dbc, err);
    return 0;
}

static int odbc_begin(qc_conn *c, qc_err *err)
{
    int rc;

    if (c->lost)
        return qc_err_set(err, QC_ECONN, "connection lost: %s (an earlier request lost it)",
                          c->where);
    if ((rc = set_autocommit(c, 0, err)) != 0)
        return rc;
    c->in_txn = 1;
    return 0;
}

/* Ends the transaction (SQL_COMMIT / SQL_ROLLBACK) and turns autocommit
 * back on.  A failed COMMIT leaves the transaction open for the caller's
 * rollback; a rollback always restores autocommit when it can. */
static int end_txn(qc_conn *c, SQLSMALLINT how, qc_err *err)
{
    SQLRETURN r;
    int rc = 0;

    if (c->lost)
        return qc_err_set(err, QC_ECONN, "connection lost: %s (an earlier request lost it)",
                          c->where);
    r = SQLEndTran(SQL_HANDLE_DBC, c->dbc, how);
    if (!SQL_SUCCEEDED(r)) {
        rc = map_error(c, SQL_HANDLE_DBC, c->dbc, err);
        if (how == SQL_COMMIT || c->lost)
            return rc;
    }
    if (c->in_txn) {
        qc_err ignored;
        int rc2 = set_autocommit(c, 1, rc == 0 ? err : &ignored);
        if (rc == 0)
            rc = rc2;
        if (rc2 == 0)
            c->in_txn = 0;
    }
    return rc;
}

static int odbc_commit(qc_conn *c, qc_err *err)
{
    return end_txn(c, SQL_COMMIT, err);
}

static int odbc_rollback(qc_conn *c, qc_err *err)
{
    return end_txn(c, SQL_ROLLBACK, err);
}

/* ---- connections ------------------------------------------------------- */

/* Frees the statement handles, disconnects (ignoring errors) and frees c. */
static void release(qc_conn *c)
{
    int i;

    for (i = 0; i < c->npreps; i++) {
        if (c->preps[i].h != SQL_NULL_HSTMT)
            SQLFreeHandle(SQL_HANDLE_STMT, c->preps[i].h);
        free(c->preps[i].sql);
    }
    free(c->preps);
    if (c->dbc != SQL_NULL_HDBC) {
        SQLRETURN r;

        pthread_mutex_lock(&connect_lock);
        r = SQLDisconnect(c->dbc);
        if (!SQL_SUCCEEDED(r)) {
            /* 25000: a transaction is open (the spec lets drivers refuse). */
            SQLEndTran(SQL_HANDLE_DBC, c->dbc, SQL_ROLLBACK);
            SQLDisconnect(c->dbc);
        }
        SQLFreeHandle(SQL_HANDLE_DBC, c->dbc);
        pthread_mutex_unlock(&connect_lock);
    }
    if (c->conninfo != NULL) {
        memset(c->conninfo, 0, strlen(c->conninfo));
        free(c->conninfo);
    }
    if (c->password != NULL) {
        memset(c->password, 0, strlen(c->password));
        free(c->password);
    }
    pthread_mutex_destroy(&c->cur_mu);
    free(c);
}

/* Port after the last ':' of "addr:port" ("127.0.0.1:54321", "[::1]:5"). */
static int port_of(const char *hostport)
{
    const char *colon = hostport ? strrchr(hostport, ':') : NULL;
    char *end;
    long p;

    if (colon == NULL)
        return 0;
    p = strtol(colon + 1, &end, 10);
    return (*end == '\0' && p > 0 && p < 65536) ? (int)p : 0;
}

/* Inodes of this network namespace's established TCP sockets (IPv4 and
 * IPv6) whose local port is lport and, when rport > 0, whose remote port is
 * rport, read from /proc/net/tcp{,6}; up to max into out.  Returns how many. */
static int tcp_inodes(int lport, int rport, unsigned long *out, int max)
{
    static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
    char line[512];
    int n = 0;
    size_t i;

    for (i = 0; i < sizeof files / sizeof files[0]; i++) {
        FILE *f = fopen(files[i], "r");

        if (f == NULL)
            continue;
        while (fgets(line, sizeof line, f) != NULL) {
            unsigned lp, rp, st;
            unsigned long inode;

            /* sl local:port remote:port st tx:rx tr:when retrnsmt uid timeout inode */
            if (sscanf(line, " %*u: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%x %x %*s %*s %*s %*u %*u %lu",
                       &lp, &rp, &st, &inode) != 4)
                continue; /* the header line */
            if ((int)lp != lport || (rport > 0 && (int)rp != rport) || st != 1 /* ESTABLISHED */)
                continue;
            if (n < max)
                out[n] = inode;
            n++;
        }
        fclose(f);
    }
    return n < max ? n : max;
}

/* Whether descriptor fd of this process is the socket with that inode, by
 * its /proc/self/fd link: a path lookup that never touches the descriptor
 * itself (another thread may be using or closing it). */
static int fd_is_socket(int fd, unsigned long inode)
{
    char path[64], link[64], want[64];
    ssize_t len;

    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    snprintf(want, sizeof want, "socket:[%lu]", inode);
    len = readlink(path, link, sizeof link - 1);
    if (len <= 0)
        return 0;
    link[len] = '\0';
    return strcmp(link, want) == 0;
}

/* Finds this process's TCP connection from local port local_port to
 * server port peer_port (0: any): its socket inode from /proc/net/tcp*,
 * then the descriptor linking to that inode in /proc/self/fd.  Returns the
 * descriptor and its inode, or -1 when none or several fit.  Only paths
 * are read, no descriptor of ours or of another thread is touched. */
static int find_socket(int local_port, int peer_port, unsigned long *ino)
{
    unsigned long inodes[8];
    int ninodes, found = -1, nfound = 0, k;
    DIR *d;
    struct dirent *e;

    if (local_port <= 0)
        return -1;
    ninodes = tcp_inodes(local_port, peer_port, inodes, 8);
    if (ninodes == 0 && peer_port > 0) /* a proxy or NAT may change the port */
        ninodes = tcp_inodes(local_port, 0, inodes, 8);
    if (ninodes == 0 || (d = opendir("/proc/self/fd")) == NULL)
        return -1;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);

        if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end != '\0')
            continue;
        for (k = 0; k < ninodes; k++) {
            if (fd_is_socket((int)fd, inodes[k])) {
                found = (int)fd;
                *ino = inodes[k];
                nfound++;
            }
        }
    }
    closedir(d);
    return nfound == 1 ? found : -1;
}

/* Runs a one-row query unprepared and copies two cells (either may be
 * NULL: not wanted). */
static int query_pair(qc_conn *c, const char *sql, char *a, size_t an, char *b, size_t bn,
                      qc_err *err)
{
    qc_result r = {0};
    int rc = odbc_exec(c, -1, 0, sql, 0, NULL, &r, err);

    if (rc == 0 && r.nrows > 0 && r.ncols > 0) {
        if (a != NULL)
            snprintf(a, an, "%s", r.cells[0] ? r.cells[0] : "");
        if (b != NULL && r.ncols > 1)
            snprintf(b, bn, "%s", r.cells[1] ? r.cells[1] : "");
    }
    qc_result_clear(&r);
    return rc;
}

/* Learns the server's session id and the client's port, then finds the
 * socket.  A DBMS that will not tell leaves both unknown (not an error);
 * only a lost connection fails. */
static int probe_session(qc_conn *c, int server_port, qc_err *err)
{
    char id[32] = "", peer[128] = "";
    qc_err ignored;
    int rc = 0, port = 0;

    if (contains_ci(c->dbms_name, "mariadb") || contains_ci(c->dbms_name, "mysql"))
        c->dbms = DBMS_MARIADB;
    else if (contains_ci(c->dbms_name, "sql server"))
        c->dbms = DBMS_SQLSERVER;
    else if (contains_ci(c->dbms_name, "postgres"))
        c->dbms = DBMS_POSTGRES;
    switch (c->dbms) {
    case DBMS_MARIADB:
        /* HOST is "addr:port" of the client as the server sees it; a
         * session always sees its own PROCESSLIST row. */
        rc = query_pair(c,
                        "SELECT CONNECTION_ID(), HOST FROM information_schema.PROCESSLIST "
                        "WHERE ID = CONNECTION_ID()",
                        id, sizeof id, peer, sizeof peer, &ignored);
        port = port_of(peer);
        break;
    case DBMS_SQLSERVER:
        rc = query_pair(c,
                        "SELECT @@SPID, client_tcp_port FROM sys.dm_exec_connections "
                        "WHERE session_id = @@SPID",
                        id, sizeof id, peer, sizeof peer, &ignored);
        if (rc == QC_EDB) /* no VIEW SERVER STATE: at least the session id */
            rc = query_pair(c, "SELECT @@SPID", id, sizeof id, NULL, 0, &ignored);
        port = atoi(peer);
        break;
    case DBMS_POSTGRES:
        rc = query_pair(c, "SELECT pg_backend_pid(), inet_client_port()", id, sizeof id, peer,
                        sizeof peer, &ignored);
        port = atoi(peer);
        break;
    default:
        break;
    }
    if (rc == QC_ECONN)
        return qc_err_set(err, QC_ECONN,
                          "cannot connect to %s: connection lost right after login: %s", c->where,
                          ignored.msg);
    c->session = strtol(id, NULL, 10);
    c->sock_fd = find_socket(port, server_port, &c->sock_ino);
    return 0;
}

/* ODBC's SQL_DBMS_VER is "##.##.####" ("10.11.000019"): drops the leading
 * zeros of each part of an all-digit dotted version ("10.11.19"). */
static void tidy_version(char *v)
{
    char out[64];
    size_t o = 0;
    const char *p;

    for (p = v; *p; p++)
        if (!isdigit((unsigned char)*p) && *p != '.')
            return;
    for (p = v; *p && o + 1 < sizeof out;) {
        while (*p == '0' && isdigit((unsigned char)p[1]))
            p++;
        while (isdigit((unsigned char)*p) && o + 1 < sizeof out)
            out[o++] = *p++;
        if (*p == '.' && o + 1 < sizeof out)
            out[o++] = *p++;
        else if (*p != '\0')
            break;
    }
    out[o] = '\0';
    snprintf(v, 64, "%s", out);
}

/* Connects; probe = 0 skips the session probe (the KILL helper). */
static int set_session_time_zone(qc_conn *c, qc_err *err);

static int connect_to(const char *conninfo, int probe, qc_conn **out, qc_err *err)
{
    char pwd[256] = "", state[6], msg[600], full[1024];
    SQLINTEGER native;
    SQLSMALLINT len;
    SQLRETURN r;
    qc_conn *c;
    int rc = 0, server_port = 0;

    *out = NULL;
    if (odbc_env == SQL_NULL_HENV)
        return qc_err_set(err, QC_EINVAL, "odbc driver: qc_odbc_global_init() was not called");
    if (conninfo == NULL)
        conninfo = "";
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return qc_err_set(err, QC_ENOMEM, "out of memory opening a connection");
    c->sock_fd = -1;
    c->dbc = SQL_NULL_HDBC;
    c->cur = SQL_NULL_HSTMT;
    pthread_mutex_init(&c->cur_mu, NULL);
    describe_target(conninfo, c->where, sizeof c->where, &server_port);
    if ((conn_get(conninfo, "Pwd", pwd, sizeof pwd) ||
         conn_get(conninfo, "Password", pwd, sizeof pwd)) &&
        pwd[0] != '\0' && (c->password = strdup(pwd)) == NULL)
        goto oom;
    memset(pwd, 0, sizeof pwd);
    if ((c->conninfo = strdup(conninfo)) == NULL)
        goto oom;
    pthread_mutex_lock(&connect_lock);
    r = SQLAllocHandle(SQL_HANDLE_DBC, odbc_env, &c->dbc);
    if (!SQL_SUCCEEDED(r)) {
        pthread_mutex_unlock(&connect_lock);
        c->dbc = SQL_NULL_HDBC;
        goto oom;
    }
    SQLSetConnectAttr(c->dbc, SQL_ATTR_LOGIN_TIMEOUT, (SQLPOINTER)(uintptr_t)LOGIN_TIMEOUT_S,
                      SQL_IS_UINTEGER);
    r = SQLDriverConnect(c->dbc, NULL, (SQLCHAR *)c->conninfo, SQL_NTS, NULL, 0, &len,
                         SQL_DRIVER_NOPROMPT);
    pthread_mutex_unlock(&connect_lock);
    if (!SQL_SUCCEEDED(r)) {
        read_diag(SQL_HANDLE_DBC, c->dbc, state, &native, msg, sizeof msg);
        snprintf(full, sizeof full, "cannot connect to %s: %s %s", c->where, state, msg);
        qc_scrub_secret(full, sizeof full, c->password);
        qc_scrub_conninfo(full, sizeof full, conninfo);
        rc = qc_err_set(err, QC_ECONN, "%s", full);
        if (err != NULL)
            snprintf(err->sqlstate, sizeof err->sqlstate, "%s", state);
        pthread_mutex_lock(&connect_lock);
        SQLFreeHandle(SQL_HANDLE_DBC, c->dbc);
        pthread_mutex_unlock(&connect_lock);
        c->dbc = SQL_NULL_HDBC;
        goto fail;
    }
    if (!SQL_SUCCEEDED(SQLGetInfo(c->dbc, SQL_DBMS_NAME, c->dbms_name, sizeof c->dbms_name, &len)))
        snprintf(c->dbms_name, sizeof c->dbms_name, "ODBC");
    if (!SQL_SUCCEEDED(SQLGetInfo(c->dbc, SQL_DBMS_VER, c->dbms_ver, sizeof c->dbms_ver, &len)))
        c->dbms_ver[0] = '\0';
    tidy_version(c->dbms_ver);
    if (probe && (rc = probe_session(c, server_port, err)) != 0)
        goto fail;
    if (probe && qc_driver_session_time_zone()[0] != '\0' &&
        (rc = set_session_time_zone(c, err)) != 0)
        goto fail;
    *out = c;
    return 0;
oom:
    rc = qc_err_set(err, QC_ENOMEM, "out of memory opening a connection to %s", c->where);
fail:
    release(c);
    return rc;
}

/* decision 1120: the run's session time zone (driver.h).  SET takes no
 * placeholder: the value is a checked +HH:MM offset. */
static int set_session_time_zone(qc_conn *c, qc_err *err)
{
    const char *tz = qc_driver_session_time_zone();
    char sql[80];
    qc_result r = {0};
    int rc;

    if (c->dbms == DBMS_MARIADB)
        snprintf(sql, sizeof sql, "SET time_zone = '%s'", tz);
    else if (c->dbms == DBMS_POSTGRES)
        snprintf(sql, sizeof sql, "SET TIME ZONE INTERVAL '%s' HOUR TO MINUTE", tz);
    else
        return qc_err_set(err, QC_EINVAL,
                          "[faults] session_time_zone: %s has no session time zone to set",
                          c->dbms_name);
    rc = odbc_exec(c, -1, 0, sql, 0, NULL, &r, err);
    qc_result_clear(&r);
    if (rc != 0)
        qc_err_prefix(err, "setting the session time zone %s", tz);
    return rc;
}

static int odbc_open(const char *conninfo, qc_conn **out, qc_err *err)
{
    return connect_to(conninfo, 1, out, err);
}

/* Whether c->sock_fd is still the socket found at open. */
static int socket_still_ours(const qc_conn *c)
{
    return c->sock_fd >= 0 && fd_is_socket(c->sock_fd, c->sock_ino);
}

int qc_odbc_abort_path(qc_conn *c)
{
    if (c == NULL)
        return QC_ODBC_ABORT_NONE;
    if (socket_still_ours(c))
        return QC_ODBC_ABORT_SOCKET;
    if (c->dbms == DBMS_MARIADB && c->session > 0 && !c->lost)
        return QC_ODBC_ABORT_KILL;
    return QC_ODBC_ABORT_NONE;
}

/* Has the server kill c's session from a fresh connection (MariaDB /
 * MySQL).  Returns 1 when the KILL was accepted. */
static int kill_from_outside(qc_conn *c)
{
    qc_conn *k = NULL;
    qc_result r = {0};
    qc_err ignored;
    char id[32];
    const char *params[1] = {id};
    int ok;

    if (connect_to(c->conninfo, 0, &k, &ignored) != 0)
        return 0;
    snprintf(id, sizeof id, "%ld", c->session);
    ok = odbc_exec(k, -1, 0, "KILL CONNECTION ?", 1, params, &r, &ignored) == 0;
    qc_result_clear(&r);
    release(k);
    return ok;
}

int qc_odbc_abort_ex(qc_conn *c)
{
    int path;

    if (c == NULL)
        return QC_ODBC_ABORT_NONE;
    path = qc_odbc_abort_path(c);
    if (path == QC_ODBC_ABORT_SOCKET) {
        /* The client library can no longer say goodbye: the server sees
         * the connection reset, like a crashed process's. */
        shutdown(c->sock_fd, SHUT_RDWR);
    } else if (path == QC_ODBC_ABORT_KILL && !kill_from_outside(c)) {
        path = QC_ODBC_ABORT_NONE;
    }
    c->lost = 1;
    release(c);
    return path;
}

static void odbc_abort(qc_conn *c)
{
    (void)qc_odbc_abort_ex(c);
}

void qc__odbc_forget_socket(qc_conn *c)
{
    if (c != NULL)
        c->sock_fd = -1;
}

static void odbc_close(qc_conn *c)
{
    if (c == NULL)
        return;
    if (c->in_txn && !c->lost)
        SQLEndTran(SQL_HANDLE_DBC, c->dbc, SQL_ROLLBACK);
    release(c);
}

static void odbc_server_version(qc_conn *c, char *buf, size_t n)
{
    if (n == 0)
        return;
    if (c == NULL)
        snprintf(buf, n, "ODBC");
    else if (c->dbms_ver[0] != '\0')
        snprintf(buf, n, "%s %s", c->dbms_name, c->dbms_ver);
    else
        snprintf(buf, n, "%s", c->dbms_name);
}

static int odbc_is_ok(qc_conn *c)
{
    return c != NULL && !c->lost;
}

static int odbc_set_option(qc_conn *c, const char *key, const char *value, qc_err *err)
{
    if (strcmp(key, "prepare") == 0) {
        c->no_prepare = value != NULL && strcmp(value, "off") == 0;
        return 0;
    }
    if (strcmp(key, "statement_timeout_ms") == 0) {
        char *end = NULL, sql[80];
        long ms = value ? strtol(value, &end, 10) : -1;
        qc_result r = {0};
        int rc;

        if (value == NULL || *value == '\0' || *end != '\0' || ms < 0 || ms > 2147483647L)
            return qc_err_set(err, QC_EINVAL, "odbc driver: statement_timeout_ms must be 0.."
                              "2147483647, got '%s'", value ? value : "");
        if (c->dbms != DBMS_MARIADB) {
            /* whole seconds, rounded up: 1 ms must not mean "none" */
            c->timeout_s = (ms + 999) / 1000;
            return 0;
        }
        /* MariaDB's own limit (seconds, fractions allowed; 0 = none) is
         * what Connector/ODBC would use for SQL_ATTR_QUERY_TIMEOUT too;
         * setting it once covers every statement of the session. */
        /* SET takes no placeholder: the value is a number we printed */
        snprintf(sql, sizeof sql, "SET SESSION max_statement_time = %ld.%03ld", ms / 1000,
                 ms % 1000);
        rc = odbc_exec(c, -1, 0, sql, 0, NULL, &r, err);
        qc_result_clear(&r);
        return rc;
    }
    return qc_err_set(err, QC_EINVAL, "odbc driver: unknown option '%s'", key);
}

/* MariaDB / MySQL: KILL QUERY from a fresh connection, which works whatever
 * the connector does with SQLCancel from another thread; elsewhere
 * SQLCancel on the handle (SQL Server and psqlODBC send the server's
 * cancel request).  Called with c->cur_mu held. */
static int cancel_current(qc_conn *c)
{
    qc_conn *k = NULL;
    qc_result r = {0};
    qc_err ignored;
    char id[32];
    const char *params[1] = {id};
    int rc;

    if (c->dbms != DBMS_MARIADB || c->session <= 0)
        return SQL_SUCCEEDED(SQLCancel(c->cur)) ? 0 : QC_ECONN;
    if (connect_to(c->conninfo, 0, &k, &ignored) != 0)
        return QC_ECONN;
    snprintf(id, sizeof id, "%ld", c->session);
    rc = odbc_exec(k, -1, 0, "KILL QUERY ?", 1, params, &r, &ignored) == 0 ? 0 : QC_ECONN;
    qc_result_clear(&r);
    release(k);
    return rc;
}

static int odbc_cancel(qc_conn *c)
{
    int rc = 0;

    if (c == NULL)
        return 0;
    pthread_mutex_lock(&c->cur_mu);
    if (c->cur != SQL_NULL_HSTMT)
        rc = cancel_current(c);
    pthread_mutex_unlock(&c->cur_mu);
    return rc;
}

static int odbc_backend_pid(qc_conn *c)
{
    return c ? (int)c->session : 0;
}

/* SQLGetInfo text into buf ("" when the driver does not answer). */
static void info_text(qc_conn *c, SQLUSMALLINT what, char *buf, size_t n)
{
    SQLSMALLINT len = 0;

    buf[0] = '\0';
    if (!SQL_SUCCEEDED(SQLGetInfo(c->dbc, what, buf, (SQLSMALLINT)n, &len)))
        buf[0] = '\0';
    buf[n - 1] = '\0';
}

static void odbc_describe(qc_conn *c, qc_conn_target *t)
{
    char *comma;

    memset(t, 0, sizeof *t);
    if (c == NULL || c->lost)
        return;
    if (!conn_get(c->conninfo, "Server", t->host, sizeof t->host) &&
        !conn_get(c->conninfo, "Host", t->host, sizeof t->host) &&
        !conn_get(c->conninfo, "Address", t->host, sizeof t->host))
        info_text(c, SQL_SERVER_NAME, t->host, sizeof t->host);
    if (strncasecmp(t->host, "tcp:", 4) == 0)
        memmove(t->host, t->host + 4, strlen(t->host + 4) + 1);
    if ((comma = strchr(t->host, ',')) != NULL) { /* SQL Server "host,port" */
        *comma = '\0';
        snprintf(t->port, sizeof t->port, "%.15s", comma + 1);
    }
    if (t->port[0] == '\0')
        conn_get(c->conninfo, "Port", t->port, sizeof t->port);
    info_text(c, SQL_DATABASE_NAME, t->dbname, sizeof t->dbname);
    info_text(c, SQL_USER_NAME, t->user, sizeof t->user);
}

const qc_driver qc_driver_odbc = {
    .name = "odbc",
    .style = QC_PARAM_QMARK,
    .open = odbc_open,
    .exec = odbc_exec,
    .begin = odbc_begin,
    .commit = odbc_commit,
    .rollback = odbc_rollback,
    .abort = odbc_abort,
    .close = odbc_close,
    .server_version = odbc_server_version,
    .is_ok = odbc_is_ok,
    .set_option = odbc_set_option,
    .backend_pid = odbc_backend_pid,
    .cancel = odbc_cancel,
    .describe = odbc_describe,
};
