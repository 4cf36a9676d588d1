/*
 * protocol.c - loads a protocol (backend) file into steps of rewritten SQL
 * statements, checks it, and runs one step on a driver connection.
 *
 * The loader makes one pass over the text.  A lexer cuts it into units
 * (whitespace, a comment, a quoted string / identifier / dollar quote, or
 * one code character); directives ("-- name: claim", "-- engine: x",
 * "-- autocommit: yes") are only recognised on a line that starts outside
 * any quote or comment, so "-- name:" inside a dollar-quoted body is text.
 * Code characters ';' end a statement (except in a "-- split: no" step,
 * which is one batch) and ":name" becomes a placeholder;
 * everything else is copied verbatim, so the SQL a driver sees is the file's
 * SQL minus the comments before each statement.
 *
 * Invariants: every error names "path:line" of the offending construct and
 * leaves nothing allocated; checks that need a whole statement run when it
 * ends, checks that need a whole step when the next "-- name:" or the end of
 * the file arrives, so errors come out in file order.  A loaded protocol is
 * immutable and may be shared by every worker thread.
 */
#include "protocol.h"
#include "../harness/input.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const step_names[QC_STEP_COUNT] = {
    "setup", "teardown", "enqueue",  "claim",   "complete",   "renew",
    "fail",  "reap",     "snapshot", "monitor", "server_pid", "kill_session", "heartbeat",
    "listen", "notify", "monitor_live", "dedup"};

/* Columns the last statement of a step must mention, space separated. */
static const char *const required_cols[QC_STEP_COUNT] = {
    [QC_STEP_CLAIM] = "job_id token lease_until_ms now_ms attempt op_key payload",
    [QC_STEP_ENQUEUE] = "job_id",
    [QC_STEP_SNAPSHOT] = "job_id state attempt token",
    [QC_STEP_MONITOR] = "ready inflight",
    [QC_STEP_MONITOR_LIVE] = "ready inflight",
    [QC_STEP_DEDUP] = "run"};

/* Every column the harness reads from a step's result, space separated:
 * the required ones and the optional ones (README "Protocol files"). */
static const char *const known_cols[QC_STEP_COUNT] = {
    [QC_STEP_ENQUEUE] = "job_id",
    [QC_STEP_CLAIM] =
        "job_id token lease_until_ms now_ms attempt op_key payload group_key message_id",
    [QC_STEP_COMPLETE] = "rows now_ms",
    [QC_STEP_RENEW] = "rows token lease_until_ms now_ms",
    [QC_STEP_FAIL] = "rows now_ms",
    [QC_STEP_REAP] = "job_id token state now_ms",
    [QC_STEP_SNAPSHOT] = "job_id state attempt token error",
    [QC_STEP_MONITOR] = "ready inflight expired dead done oldest_ready_age_ms",
    [QC_STEP_MONITOR_LIVE] = "ready inflight expired dead oldest_ready_age_ms",
    [QC_STEP_SERVER_PID] = "pid",
    [QC_STEP_HEARTBEAT] = "rows lease_until_ms now_ms",
    [QC_STEP_DEDUP] = "run"};

/* Optional result columns a checker rule needs (README "Which columns each
 * rule needs").  The claim's now_ms and lease_until_ms are required in the
 * lease model; in the transaction model lease_until_ms is not asked for. */
static const qc_column_need column_needs[] = {
    {QC_STEP_REAP, "now_ms", "no_early_reap", 0,
     "no_early_reap judges its reap rule by the client's clock bound only"},
    {QC_STEP_REAP, "token", "no_early_reap", 0,
     "no_early_reap cannot tell which lease a reap took (its reap rule judges no reap)"},
    {QC_STEP_REAP, "state", "recovery", 0,
     "recovery does not count a reap into 'dead' as the job's recovery"},
    {QC_STEP_SNAPSHOT, "error", "bounded_failure", 0,
     "bounded_failure cannot see whether a dead poison job kept its error"},
    {QC_STEP_CLAIM, "now_ms", "exclusive_claim", 0,
     "exclusive_claim cannot place a lease on the server clock"},
    {QC_STEP_CLAIM, "lease_until_ms", "no_early_reap", 1,
     "no_early_reap has no lease end to judge a reap or a rejection against"},
    {QC_STEP_COMPLETE, "now_ms", "exclusive_claim", 0,
     "exclusive_claim and group_exclusive end a lease at a lower bound from the client's "
     "clock, not at the complete's server time"},
    {QC_STEP_COMPLETE, "now_ms", "group_order", 0,
     "group_order orders completions by the ledger only, not by server time"},
    {QC_STEP_FAIL, "now_ms", "exclusive_claim", 0,
     "exclusive_claim and group_exclusive end a lease at a lower bound from the client's "
     "clock, not at the fail's server time"},
    {QC_STEP_RENEW, "lease_until_ms", "exclusive_claim", 0,
     "a renew extends no lease for exclusive_claim and no_early_reap"},
    {QC_STEP_RENEW, "now_ms", "exclusive_claim", 0,
     "exclusive_claim places a renew at the latest moment it can have run"}};

static const qc_step_id required_steps[] = {QC_STEP_SETUP, QC_STEP_TEARDOWN, QC_STEP_ENQUEUE,
                                            QC_STEP_CLAIM, QC_STEP_COMPLETE, QC_STEP_SNAPSHOT};

const char *qc_step_name(qc_step_id id)
{
    return ((int)id < 0 || id >= QC_STEP_COUNT) ? "unknown" : step_names[id];
}

/* ---- small helpers ---------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static int sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *np;

        while (b->len + n + 1 > cap)
            cap *= 2;
        np = realloc(b->p, cap);
        if (np == NULL)
            return QC_ENOMEM;
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

static int is_ident(int c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static int is_ident_start(int c)
{
    return isalpha((unsigned char)c) || c == '_';
}

/* Whether word occurs in text, case-insensitively, not inside a longer
 * identifier. */
static int has_word(const char *text, const char *word, size_t wlen)
{
    const char *s;

    for (s = text; *s; s++) {
        if (strncasecmp(s, word, wlen) != 0)
            continue;
        if ((s == text || !is_ident(s[-1])) && !is_ident(s[wlen]))
            return 1;
    }
    return 0;
}

/* Whether name is one of the space-separated words of list. */
static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    const char *s = list;

    while (*s) {
        size_t w = strcspn(s, " ");
        if (w == n && strncmp(s, name, n) == 0)
            return 1;
        s += w;
        s += strspn(s, " ");
    }
    return 0;
}

/* Copies the space-separated list into buf as "a, b, c". */
static void comma_list(const char *list, char *buf, size_t n)
{
    size_t o = 0;

    for (; *list && o + 3 < n; list++) {
        if (*list == ' ') {
            buf[o++] = ',';
            buf[o++] = ' ';
        } else {
            buf[o++] = *list;
        }
    }
    buf[o] = '\0';
}

void qc_protocol_destroy(qc_protocol *p)
{
    int s, i, k;

    if (p == NULL)
        return;
    for (s = 0; s < QC_STEP_COUNT; s++) {
        for (i = 0; i < p->steps[s].nstmts; i++) {
            qc_stmt *st = &p->steps[s].stmts[i];
            for (k = 0; k < st->nparams; k++)
                free(st->params[k]);
            free(st->params);
            free(st->sql);
        }
        free(p->steps[s].stmts);
        if (p->steps[s].file != p->path)
            free((char *)p->steps[s].file);
    }
    free(p->base);
    free(p->tested);
    free(p->witness);
    free(p->missing);
    free(p->path);
    free(p->engine);
    free(p->model);
    free(p->description);
    free(p->expect);
    free(p->scenario);
    free(p);
}

/* ---- the parser ------------------------------------------------------- */

typedef enum { PH_HEADER, PH_OPTIONS, PH_BODY } phase;
enum { U_SPACE, U_COMMENT, U_QUOTED, U_CODE };

typedef struct parser {
    const char *path;
    const char *text;
    size_t len, pos;
    int line;
    qc_protocol *p;
    qc_err *err;
    phase ph;
    int cur;       /* step being read, -1 before the first "-- name:" */
    int nest;      /* block comments nest (PostgreSQL, SQL Server) */
    int backslash; /* quotes honour backslash escapes (MariaDB, Spanner) */
    int next_id;
    int base_line; /* line of "-- base:" */
    int depth;     /* overlays above this file */
    /* the statement being built */
    sbuf sql;
    int started, first_line;
    char **names; /* parameter names, as qc_stmt.params */
    int *name_lines;
    int nnames, capnames;
} parser;

/* Sets err to QC_EINVAL "path:line: <fmt...>" and returns QC_EINVAL. */
__attribute__((format(printf, 3, 4))) static int fail(parser *ps, int line, const char *fmt, ...)
{
    char msg[640];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return qc_err_set(ps->err, QC_EINVAL, "%s:%d: %s", ps->path, line, msg);
}

static int oom(parser *ps)
{
    return qc_err_set(ps->err, QC_ENOMEM, "%s: out of memory", ps->path);
}

/* Lexes one unit at ps->pos (see the file comment) and returns its kind, or
 * QC_EINVAL for a quote or comment that never ends (named at its first
 * line). */
static int lex_unit(parser *ps)
{
    const char *t = ps->text;
    size_t i = ps->pos, n = ps->len;
    int open = ps->line, kind = U_CODE;
    char c = t[i];

    if (isspace((unsigned char)c)) {
        ps->line += c == '\n';
        i++;
        kind = U_SPACE;
    } else if (c == '-' && i + 1 < n && t[i + 1] == '-') {
        while (i < n && t[i] != '\n')
            i++;
        kind = U_COMMENT;
    } else if (c == '/' && i + 1 < n && t[i + 1] == '*') {
        int depth = 1;
        for (i += 2; i < n && depth > 0; i++) {
            ps->line += t[i] == '\n';
            if (t[i] == '*' && i + 1 < n && t[i + 1] == '/') {
                depth--;
                i++;
            } else if (ps->nest && t[i] == '/' && i + 1 < n && t[i + 1] == '*') {
                depth++;
                i++;
            }
        }
        if (depth > 0)
            return fail(ps, open, "unterminated block comment");
        kind = U_COMMENT;
    } else if (c == '\'' || c == '"' || c == '`') {
        int bs = ps->backslash && c != '`';
        if (c == '\'' && i > 0 && (t[i - 1] == 'E' || t[i - 1] == 'e') &&
            (i < 2 || !is_ident(t[i - 2])))
            bs = 1; /* PostgreSQL E'...' escape string */
        for (i++; i < n; i++) {
            ps->line += t[i] == '\n';
            if (bs && t[i] == '\\' && i + 1 < n) {
                i++;
                ps->line += t[i] == '\n';
            } else if (t[i] == c && i + 1 < n && t[i + 1] == c) {
                i++;
            } else if (t[i] == c) {
                break;
            }
        }
        if (i >= n)
            return fail(ps, open,
                        c == '\'' ? "unterminated quoted string"
                                  : "unterminated quoted identifier");
        i++;
        kind = U_QUOTED;
    } else if (c == '$' && (i == 0 || (!is_ident(t[i - 1]) && t[i - 1] != '$'))) {
        size_t j = i + 1, k, tl;
        if (j < n && is_ident_start(t[j]))
            while (j < n && is_ident(t[j]))
                j++;
        if (j < n && t[j] == '$') {
            tl = j - i + 1;
            for (k = j + 1; k + tl <= n && memcmp(t + k, t + i, tl) != 0; k++)
                ps->line += t[k] == '\n';
            if (k + tl > n)
                return fail(ps, open, "unterminated dollar-quoted string %.*s", (int)tl, t + i);
            i = k + tl;
            kind = U_QUOTED;
        } else {
            i++;
        }
    } else {
        i++;
    }
    ps->pos = i;
    return kind;
}

static int add_param(parser *ps, const char *name, size_t len, int line)
{
    char num[16];
    int k;

    if (ps->p->style == QC_PARAM_DOLLAR) {
        for (k = 0; k < ps->nnames; k++) {
            if (strlen(ps->names[k]) == len && memcmp(ps->names[k], name, len) == 0) {
                snprintf(num, sizeof num, "$%d", k + 1);
                return sb_add(&ps->sql, num, strlen(num)) ? oom(ps) : 0;
            }
        }
    }
    if (ps->nnames == ps->capnames) {
        int cap = ps->capnames ? ps->capnames * 2 : 8;
        char **nn = realloc(ps->names, (size_t)cap * sizeof *nn);
        int *nl;
        if (nn == NULL)
            return oom(ps);
        ps->names = nn;
        nl = realloc(ps->name_lines, (size_t)cap * sizeof *nl);
        if (nl == NULL)
            return oom(ps);
        ps->name_lines = nl;
        ps->capnames = cap;
    }
    ps->names[ps->nnames] = strndup(name, len);
    if (ps->names[ps->nnames] == NULL)
        return oom(ps);
    ps->name_lines[ps->nnames++] = line;
    if (ps->p->style == QC_PARAM_DOLLAR)
        snprintf(num, sizeof num, "$%d", ps->nnames);
    else
        snprintf(num, sizeof num, "?");
    return sb_add(&ps->sql, num, strlen(num)) ? oom(ps) : 0;
}

/* Checks the parameters of the statement being finished (index idx of the
 * current step). */
static int check_params(parser *ps, const qc_step *st, int idx)
{
    char known[256];
    int k, j, ok;
    size_t i;

    for (k = 0; k < ps->nnames; k++) {
        const char *name = ps->names[k];

        if (ps->cur == QC_STEP_SETUP || ps->cur == QC_STEP_TEARDOWN) {
            return fail(ps, ps->name_lines[k],
                        "step '%s' may not use parameters (found :%s); setup and teardown run "
                        "unprepared",
                        step_names[ps->cur], name);
        }
        if (in_list(QC_PARAM_NAMES, name))
            continue;
        for (ok = 0, j = 0; j < idx && !ok; j++) {
            ok = has_word(st->stmts[j].sql, name, strlen(name));
            for (i = 0; !ok && i < (size_t)st->stmts[j].nparams; i++)
                ok = strcmp(st->stmts[j].params[i], name) == 0;
        }
        if (ok)
            continue;
        comma_list(QC_PARAM_NAMES, known, sizeof known);
        if (idx == 0)
            return fail(ps, ps->name_lines[k],
                        "unknown parameter :%s in step '%s' (expected one of %s)", name,
                        step_names[ps->cur], known);
        return fail(ps, ps->name_lines[k],
                    "unknown parameter :%s in step '%s' statement %d (neither one of %s nor a "
                    "column mentioned by an earlier statement)",
                    name, step_names[ps->cur], idx + 1, known);
    }
    return 0;
}

static void reset_stmt(parser *ps)
{
    int k;

    for (k = 0; k < ps->nnames; k++)
        free(ps->names[k]);
    ps->nnames = 0;
    ps->sql.len = 0;
    if (ps->sql.p != NULL)
        ps->sql.p[0] = '\0';
    ps->started = 0;
}

/* Ends the statement being built: checks it and appends it to the step.
 * Whitespace- or comment-only statements are dropped. */
static int end_statement(parser *ps)
{
    qc_step *st;
    qc_stmt *ns, *s;
    int rc;

    if (!ps->started || ps->cur < 0) {
        reset_stmt(ps);
        return 0;
    }
    st = &ps->p->steps[ps->cur];
    rc = check_params(ps, st, st->nstmts);
    if (rc != 0)
        return rc;
    while (ps->sql.len > 0 && isspace((unsigned char)ps->sql.p[ps->sql.len - 1]))
        ps->sql.p[--ps->sql.len] = '\0';
    ns = realloc(st->stmts, (size_t)(st->nstmts + 1) * sizeof *ns);
    if (ns == NULL)
        return oom(ps);
    st->stmts = ns;
    s = &st->stmts[st->nstmts];
    memset(s, 0, sizeof *s);
    s->sql = strdup(ps->sql.p ? ps->sql.p : "");
    s->params = ps->nnames ? malloc((size_t)ps->nnames * sizeof *s->params) : NULL;
    if (s->sql == NULL || (ps->nnames && s->params == NULL)) {
        free(s->sql);
        free(s->params);
        return oom(ps);
    }
    /* The names move into the statement; reset_stmt must not free them. */
    if (ps->nnames > 0)
        memcpy(s->params, ps->names, (size_t)ps->nnames * sizeof *s->params);
    s->nparams = ps->nnames;
    ps->nnames = 0;
    s->id = ++ps->next_id;
    s->line = ps->first_line;
    st->nstmts++;
    reset_stmt(ps);
    return 0;
}

/* Whether sql is a "SET ..." statement (session or transaction settings),
 * after leading blanks and SQL comments. */
static int is_setting(const char *sql)
{
    const char *q = sql;
    for (;;) {
        while (isspace((unsigned char)*q))
            q++;
        if (q[0] == '-' && q[1] == '-') {
            q += strcspn(q, "\n");
            continue;
        }
        if (q[0] == '/' && q[1] == '*') {
            const char *e = strstr(q + 2, "*/");
            if (e == NULL)
                return 0;
            q = e + 2;
            continue;
        }
        break;
    }
    return strncasecmp(q, "set", 3) == 0 && isspace((unsigned char)q[3]);
}

/* Ends the current step: its last statement must mention the required
 * result columns. */
static int end_step(parser *ps)
{
    const qc_step *st;
    const qc_stmt *last;
    const char *cols, *c;
    int rc;

    if (ps->cur < 0)
        return 0;
    rc = end_statement(ps);
    if (rc != 0)
        return rc;
    st = &ps->p->steps[ps->cur];
    if (st->nstmts == 0)
        return fail(ps, st->line, "step '%s' has no statement", step_names[ps->cur]);
    last = &st->stmts[st->nstmts - 1];
    {
        qc_step *w = &ps->p->steps[ps->cur];
        w->nsettings = 0;
        while (w->nsettings < w->nstmts - 1 && is_setting(w->stmts[w->nsettings].sql))
            w->nsettings++;
    }
    cols = required_cols[ps->cur] ? required_cols[ps->cur] : "";
    for (c = cols; *c; c += strspn(c, " ")) {
        size_t w = strcspn(c, " ");
        /* In the transaction model the claim's lease is its open
         * transaction: there is no lease_until to return. */
        if (ps->cur == QC_STEP_CLAIM && ps->p->model && !strcmp(ps->p->model, "transaction") &&
            w == strlen("lease_until_ms") && !strncmp(c, "lease_until_ms", w)) {
            c += w;
            continue;
        }
        if (!has_word(last->sql, c, w))
            return fail(ps, last->line, "statement '%s' must return column '%.*s'",
                        step_names[ps->cur], (int)w, c);
        c += w;
    }
    ps->cur = -1;
    return 0;
}

static int set_string(parser *ps, char **dst, const char *v)
{
    char *s = strdup(v);

    if (s == NULL)
        return oom(ps);
    free(*dst);
    *dst = s;
    return 0;
}

/* Handles "-- key: value"; key and value are NUL-terminated copies. */
/* 1 when s is well-formed UTF-8 (results.json and the reports are). */
static int utf8_ok(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2
                              : (*p & 0xF8) == 0xF0 ? 3 : -1;
        if (n < 0 || (n == 1 && *p < 0xC2))
            return 0;
        for (p++; n > 0; n--, p++)
            if ((*p & 0xC0) != 0x80)
                return 0;
    }
    return 1;
}

/* Options of a step ("-- key: yes|no" lines right after "-- name:"). */
static int is_step_option(const char *key)
{
    return strcasecmp(key, "autocommit") == 0 || strcasecmp(key, "split") == 0;
}

static int directive(parser *ps, const char *key, const char *val)
{
    int i;

    if (strcasecmp(key, "name") == 0) {
        int rc = end_step(ps);
        if (rc != 0)
            return rc;
        for (i = 0; i < QC_STEP_COUNT && strcmp(step_names[i], val) != 0; i++)
            ;
        if (i == QC_STEP_COUNT)
            return fail(ps, ps->line,
                        "unknown step '%s' (expected setup, teardown, enqueue, claim, complete, "
                        "renew, fail, reap, snapshot, monitor, monitor_live, server_pid, kill_session, "
                        "heartbeat, listen, notify, dedup)",
                        val);
        if (ps->p->steps[i].present)
            return fail(ps, ps->line, "duplicate step '%s' (first at line %d)", val,
                        ps->p->steps[i].line);
        ps->p->steps[i].present = 1;
        ps->p->steps[i].line = ps->line;
        ps->cur = i;
        ps->ph = PH_OPTIONS;
        return 0;
    }
    if (ps->ph == PH_HEADER) {
        if (strcasecmp(key, "engine") == 0) {
            if (!in_list("postgres mariadb sqlserver spanner", val))
                return fail(ps, ps->line,
                            "unknown engine '%s' (expected postgres, mariadb, sqlserver, spanner)",
                            val);
            ps->nest = strcmp(val, "postgres") == 0 || strcmp(val, "sqlserver") == 0;
            ps->backslash = strcmp(val, "mariadb") == 0 || strcmp(val, "spanner") == 0;
            return set_string(ps, &ps->p->engine, val);
        }
        if (strcasecmp(key, "model") == 0) {
            if (!in_list("lease transaction adapter", val))
                return fail(ps, ps->line,
                            "unknown model '%s' (expected lease, transaction, adapter)", val);
            return set_string(ps, &ps->p->model, val);
        }
        if (strcasecmp(key, "description") == 0)
            return set_string(ps, &ps->p->description, val);
        if (strcasecmp(key, "expect") == 0)
            return set_string(ps, &ps->p->expect, val);
        if (strcasecmp(key, "scenario") == 0)
            return set_string(ps, &ps->p->scenario, val);
        if (strcasecmp(key, "tested") == 0)
            return set_string(ps, &ps->p->tested, val);
        if (strcasecmp(key, "witness") == 0) {
            /* checked (names, then against the catalog) by harness/witness.c */
            ps->p->witness_line = ps->line;
            return set_string(ps, &ps->p->witness, val);
        }
        if (strcasecmp(key, "missing") == 0) {
            if (!in_list("done dead", val))
                return fail(ps, ps->line,
                            "bad missing state '%s' (expected done or dead: the state of a job "
                            "the snapshot no longer returns)",
                            val);
            return set_string(ps, &ps->p->missing, val);
        }
        if (strcasecmp(key, "base") == 0) {
            if (ps->p->base != NULL)
                return fail(ps, ps->line, "a second '-- base:' (first at line %d)",
                            ps->base_line);
            if (val[0] == '\0')
                return fail(ps, ps->line, "'-- base:' needs a protocol file");
            ps->base_line = ps->line;
            return set_string(ps, &ps->p->base, val);
        }
        return fail(ps, ps->line,
                    "unknown header key '%s' (expected engine, model, description, expect, "
                    "scenario, base, tested, witness, missing)",
                    key);
    }
    if (is_step_option(key) && ps->ph == PH_BODY)
        return fail(ps, ps->line, "option '%s' must come right after '-- name: %s'", key,
                    step_names[ps->cur]);
    if (is_step_option(key)) {
        static const char *const yes[] = {"yes", "true", "1"}, *const no[] = {"no", "false", "0"};
        int on = -1;
        for (i = 0; i < 3 && on < 0; i++) {
            if (strcasecmp(val, yes[i]) == 0)
                on = 1;
            else if (strcasecmp(val, no[i]) == 0)
                on = 0;
        }
        if (on < 0)
            return fail(ps, ps->line, "bad %s value '%s' (expected yes, no, true, false, 1, 0)",
                        key, val);
        if (strcasecmp(key, "autocommit") == 0) {
            ps->p->steps[ps->cur].autocommit = on;
            return 0;
        }
        /* split: no.  One batch with several statements is what SQL
         * Server runs (DECLAREd variables live for the batch); libpq's
         * extended protocol and MariaDB's prepared statements refuse it. */
        if (!on && strcmp(ps->p->engine, "sqlserver") != 0)
            return fail(ps, ps->line,
                        "'split: no' needs an engine that runs a batch of statements "
                        "(sqlserver), not %s",
                        ps->p->engine);
        ps->p->steps[ps->cur].nosplit = !on;
        return 0;
    }
    return fail(ps, ps->line, "unknown option '%s' for step '%s' (expected autocommit, split)",
                key, step_names[ps->cur]);
}

/* Optimal string alignment distance of a and b (an adjacent transposition
 * is one edit), for short words: at most 63 characters each. */
static int edit_distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b), i, j;
    int d[64][64];

    if (la > 63 || lb > 63)
        return 64;
    for (i = 0; i <= la; i++)
        d[i][0] = i;
    for (j = 0; j <= lb; j++)
        d[0][j] = j;
    for (i = 1; i <= la; i++) {
        for (j = 1; j <= lb; j++) {
            int cost = a[i - 1] != b[j - 1], v = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    }
    return d[la][lb];
}

/* The documented key that the lowercase word key is a likely typo of (at
 * most 1 edit, a swap of neighbours counting as one: "effect" is 2 from
 * "expect" and stays prose), among
 * the space-separated list; NULL when none is that close. */
static const char *near_key(const char *key, const char *list, char *buf, size_t n)
{
    const char *s, *best = NULL;
    int bestd = 3;

    for (s = key; *s; s++)
        if (isupper((unsigned char)*s))
            return NULL; /* "-- Author: Jane" is prose */
    for (s = list; *s; s += strspn(s, " ")) {
        size_t w = strcspn(s, " ");
        char cand[32];
        int dist, limit = 1;

        snprintf(cand, sizeof cand, "%.*s", (int)w, s);
        dist = edit_distance(key, cand);
        if (dist <= limit && dist < bestd) {
            bestd = dist;
            snprintf(buf, n, "%s", cand);
            best = buf;
        }
        s += w;
    }
    return best;
}

#define HEADER_KEYS "engine model description expect scenario base tested witness missing"
#define OPTION_KEYS "autocommit split"

/* What a "-- key:" line at the start of a line is: 1 a directive (a
 * documented key, handled by directive()), 0 a comment (any other word:
 * "-- note: ...", "-- Author: ..."), or QC_EINVAL for a lowercase word one
 * or two letters away from a documented key ("-- engin: postgres"). */
static int key_kind(parser *ps, const char *key)
{
    char lower[64], near[32];
    const char *typo;
    size_t i;

    for (i = 0; key[i] && i + 1 < sizeof lower; i++)
        lower[i] = (char)tolower((unsigned char)key[i]);
    lower[i] = '\0';
    if (strcmp(lower, "name") == 0 || is_step_option(key))
        return 1;
    if (ps->ph == PH_BODY)
        return 0; /* a free comment inside a step body */
    if (in_list(HEADER_KEYS, lower))
        return 1; /* in PH_OPTIONS: directive() says it is misplaced */
    if (ps->ph == PH_HEADER) {
        typo = near_key(key, HEADER_KEYS " name", near, sizeof near);
        if (typo != NULL)
            return fail(ps, ps->line, "unknown header key '%s' (did you mean '%s'?)", key, typo);
        return 0;
    }
    typo = near_key(key, OPTION_KEYS " name", near, sizeof near);
    if (typo != NULL)
        return fail(ps, ps->line, "unknown option '%s' for step '%s' (did you mean '%s'?)", key,
                    step_names[ps->cur], typo);
    return 0;
}

/* At the start of a line outside quotes and comments: consumes the line and
 * returns 1 when it is a directive, 0 when it is anything else (left for the
 * lexer), or an error. */
static int line_start(parser *ps)
{
    const char *t = ps->text + ps->pos, *end = ps->text + ps->len;
    const char *eol = memchr(t, '\n', (size_t)(end - t)), *s = t, *k, *v, *ve;
    char key[64], val[4096];
    int rc;

    if (eol == NULL)
        eol = end;
    while (s < eol && (*s == ' ' || *s == '\t'))
        s++;
    if (eol - s < 2 || s[0] != '-' || s[1] != '-')
        return 0;
    for (s += 2; s < eol && (*s == ' ' || *s == '\t'); s++)
        ;
    k = s;
    if (s >= eol || !is_ident_start(*s))
        return 0;
    while (s < eol && is_ident(*s))
        s++;
    if (s >= eol || *s != ':' || s - k >= (long)sizeof key)
        return 0;
    snprintf(key, sizeof key, "%.*s", (int)(s - k), k);
    s++;
    if (s < eol && !isspace((unsigned char)*s) && strcasecmp(key, "name") != 0)
        return 0; /* "-- see http://..." is a comment, not a key */
    rc = key_kind(ps, key);
    if (rc <= 0)
        return rc; /* 0: a comment line ("-- note: ..."), or a mistyped key */
    for (v = s; v < eol && isspace((unsigned char)*v); v++)
        ;
    for (ve = eol; ve > v && isspace((unsigned char)ve[-1]); ve--)
        ;
    if (ve - v >= (long)sizeof val) /* a cut path would name another file */
        return fail(ps, ps->line, "value of '%s' too long (at most %zu characters)", key,
                    sizeof val - 1);
    snprintf(val, sizeof val, "%.*s", (int)(ve - v), v);
    if (!utf8_ok(val))
        return fail(ps, ps->line, "value of '%s' is not UTF-8", key);
    rc = directive(ps, key, val);
    if (rc != 0)
        return rc;
    ps->pos = (size_t)(eol - ps->text) + (eol < end);
    ps->line += eol < end;
    return 1;
}

/* A code character or quoted unit: SQL text must be inside a step. */
static int significant(parser *ps, int line)
{
    if (ps->ph == PH_HEADER)
        return fail(ps, line, "SQL outside a step (expected -- name: before it)");
    ps->ph = PH_BODY;
    if (!ps->started) {
        ps->started = 1;
        ps->first_line = line;
    }
    return 0;
}

static int parse_units(parser *ps)
{
    const char *t = ps->text;
    int rc = 0;

    while (rc == 0 && ps->pos < ps->len) {
        size_t start = ps->pos;
        int line = ps->line, kind;

        if (start == 0 || t[start - 1] == '\n') {
            rc = line_start(ps);
            if (rc != 0) { /* 1: a directive line was consumed */
                rc = rc > 0 ? 0 : rc;
                continue;
            }
        }
        kind = lex_unit(ps);
        if (kind < 0)
            return kind;
        if (kind == U_CODE && t[start] == ';' &&
            (ps->cur < 0 || !ps->p->steps[ps->cur].nosplit)) {
            rc = end_statement(ps);
            continue;
        }
        if (kind == U_QUOTED || kind == U_CODE)
            rc = significant(ps, line);
        else if (!ps->started)
            continue;
        if (rc == 0 && kind == U_CODE && t[start] == ':' && (start == 0 || t[start - 1] != ':') &&
            start + 1 < ps->len && t[start + 1] != ':' && is_ident_start(t[start + 1])) {
            size_t e = start + 1;
            while (e < ps->len && is_ident(t[e]))
                e++;
            ps->pos = e;
            rc = add_param(ps, t + start + 1, e - start - 1, line);
        } else if (rc == 0 && sb_add(&ps->sql, t + start, ps->pos - start) != 0) {
            rc = oom(ps);
        }
    }
    return rc;
}

static int load_file(const char *path, qc_param_style style, qc_protocol **out, qc_err *err,
                     int depth);

/* Overlay: loads ps->p->base and takes from it every step this file does
 * not have. */
static int merge_base(parser *ps)
{
    qc_protocol *p = ps->p, *b = NULL;
    char *resolved;
    const char *slash = strrchr(ps->path, '/');
    size_t dl = (p->base[0] != '/' && slash != NULL) ? (size_t)(slash - ps->path) + 1 : 0;
    int rc, s, id = 0;

    if (ps->depth >= 4)
        return fail(ps, ps->base_line, "base '%s': more than 4 overlays deep (a cycle?)",
                    p->base);
    if ((resolved = malloc(dl + strlen(p->base) + 1)) == NULL)
        return oom(ps);
    memcpy(resolved, ps->path, dl);
    strcpy(resolved + dl, p->base);
    free(p->base);
    p->base = resolved;
    rc = load_file(p->base, p->style, &b, ps->err, ps->depth + 1);
    if (rc != 0) {
        /* The base could not be opened, or is not a regular file
         * (qc_open_input's "protocol '...'"): name the line that asked for
         * it. */
        if (rc == QC_EIO ||
            (rc == QC_EINVAL && ps->err != NULL && !strncmp(ps->err->msg, "protocol '", 10))) {
            char why[sizeof ps->err->msg];
            snprintf(why, sizeof why, "%s", ps->err->msg);
            rc = fail(ps, ps->base_line, "base: %s", why);
        }
        return rc;
    }
    if (strcmp(b->engine, p->engine) != 0 || strcmp(b->model, p->model) != 0) {
        rc = fail(ps, ps->base_line,
                  "engine %s, model %s differ from base '%s' (engine %s, model %s); say them "
                  "in the header",
                  p->engine, p->model, p->base, b->engine, b->model);
        qc_protocol_destroy(b);
        return rc;
    }
    for (s = 0; s < QC_STEP_COUNT; s++) {
        if (p->steps[s].present || !b->steps[s].present)
            continue;
        p->steps[s] = b->steps[s];
        if (b->steps[s].file == b->path) {
            p->steps[s].file = strdup(b->path);
            if (p->steps[s].file == NULL)
                rc = oom(ps);
        }
        memset(&b->steps[s], 0, sizeof b->steps[s]);
    }
    if (p->tested == NULL && b->tested != NULL) { /* say whose it is */
        const char *bname = strrchr(b->path, '/');
        size_t tn = strlen(b->tested) + strlen(b->path) + 32;
        if ((p->tested = malloc(tn)) == NULL) {
            qc_protocol_destroy(b);
            return oom(ps);
        }
        snprintf(p->tested, tn, "as its base %s: %s", bname ? bname + 1 : b->path, b->tested);
    }
    /* the queue's table and how it stores a finished job are the base's */
    if (p->witness == NULL && b->witness != NULL) {
        p->witness = b->witness;
        p->witness_line = b->witness_line;
        b->witness = NULL;
    }
    if (p->missing == NULL && b->missing != NULL) {
        p->missing = b->missing;
        b->missing = NULL;
    }
    qc_protocol_destroy(b);
    /* statement ids key each connection's prepared statements: unique again */
    for (s = 0; s < QC_STEP_COUNT; s++)
        for (int i = 0; i < p->steps[s].nstmts; i++)
            p->steps[s].stmts[i].id = ++id;
    return rc;
}

static int parse_text(const char *path, const char *text, qc_param_style style,
                      qc_protocol **out, qc_err *err, int depth)
{
    parser ps;
    int rc, last_line = 1;
    size_t i, k;

    *out = NULL;
    memset(&ps, 0, sizeof ps);
    ps.depth = depth;
    ps.path = path ? path : "(protocol)";
    ps.text = text ? text : "";
    ps.len = strlen(ps.text);
    ps.line = 1;
    ps.err = err;
    ps.cur = -1;
    ps.nest = 1; /* PH_HEADER; PostgreSQL rules until "-- engine:" says otherwise */
    ps.p = calloc(1, sizeof *ps.p);
    if (ps.p == NULL) {
        rc = oom(&ps);
        goto out;
    }
    ps.p->style = style;
    ps.p->path = strdup(ps.path);
    ps.p->engine = strdup("postgres");
    ps.p->model = strdup("lease");
    if (ps.p->path == NULL || ps.p->engine == NULL || ps.p->model == NULL) {
        rc = oom(&ps);
        goto out;
    }
    rc = parse_units(&ps);
    if (rc == 0)
        rc = end_step(&ps);
    for (k = 0; rc == 0 && k < QC_STEP_COUNT; k++)
        if (ps.p->steps[k].present)
            ps.p->steps[k].file = ps.p->path;
    if (rc == 0 && ps.p->base != NULL)
        rc = merge_base(&ps);
    if (rc != 0)
        goto out;
    for (i = 0; i < ps.len; i++)
        last_line += ps.text[i] == '\n' && i + 1 < ps.len;
    /* LISTEN / NOTIFY are PostgreSQL's (issue 17): refused at load for any
     * other engine, at the step's own line (its file: a base's step is the
     * base's). */
    for (k = QC_STEP_LISTEN; k <= QC_STEP_NOTIFY; k++) {
        const qc_step *st = &ps.p->steps[k];
        if (st->present && strcmp(ps.p->engine, "postgres") != 0) {
            rc = qc_err_set(err, QC_EINVAL,
                            "%s:%d: step '%s' needs LISTEN/NOTIFY, which engine %s does not "
                            "have (only postgres: workers of other engines poll)",
                            st->file ? st->file : ps.path, st->line, step_names[k],
                            ps.p->engine);
            goto out;
        }
    }
    for (k = 0; k < sizeof required_steps / sizeof required_steps[0]; k++) {
        const char *name = step_names[required_steps[k]];
        /* model adapter (docs/adapters.md): the library enqueues, claims
         * and completes; the file gives setup, teardown and snapshot */
        qc_step_id sid = required_steps[k];
        if (!strcmp(ps.p->model, "adapter") &&
            (sid == QC_STEP_ENQUEUE || sid == QC_STEP_CLAIM || sid == QC_STEP_COMPLETE))
            continue;
        if (!ps.p->steps[required_steps[k]].present) {
            rc = fail(&ps, last_line, "missing required statement '%s' (expected -- name: %s)",
                      name, name);
            goto out;
        }
    }
    /* the outbox check (C23) is keyed by the message id, which the worker
     * takes from the claim's answer: a dedup step without it could never
     * be bound */
    if (ps.p->steps[QC_STEP_DEDUP].present &&
        !qc_protocol_returns(ps.p, QC_STEP_CLAIM, "message_id")) {
        const qc_step *st = &ps.p->steps[QC_STEP_DEDUP];
        rc = qc_err_set(err, QC_EINVAL,
                        "%s:%d: step 'dedup' needs :message_id, but statement 'claim' (%s:%d) "
                        "returns no column 'message_id'",
                        st->file ? st->file : ps.path, st->line,
                        ps.p->steps[QC_STEP_CLAIM].file ? ps.p->steps[QC_STEP_CLAIM].file
                                                        : ps.path,
                        ps.p->steps[QC_STEP_CLAIM].line);
        goto out;
    }
    *out = ps.p;
    ps.p = NULL;
out:
    reset_stmt(&ps);
    free(ps.sql.p);
    free(ps.names);
    free(ps.name_lines);
    qc_protocol_destroy(ps.p);
    return rc;
}

int qc_protocol_parse(const char *path, const char *text, qc_param_style style, qc_protocol **out,
                      qc_err *err)
{
    return parse_text(path, text, style, out, err, 0);
}

int qc_protocol_load(const char *path, qc_param_style style, qc_protocol **out, qc_err *err)
{
    return load_file(path, style, out, err, 0);
}

static int load_file(const char *path, qc_param_style style, qc_protocol **out, qc_err *err,
                     int depth)
{
    FILE *f = NULL;
    sbuf b = {NULL, 0, 0};
    char chunk[8192];
    size_t n;
    int rc = 0;

    *out = NULL;
    /* a FIFO or a device is refused without blocking */
    if ((rc = qc_open_input(path, "protocol", &f, err)) != 0)
        goto out;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (memchr(chunk, '\0', n) != NULL) {
            rc = qc_err_set(err, QC_EINVAL, "%s: binary file (NUL byte)", path);
            goto out;
        }
        if (sb_add(&b, chunk, n) != 0) {
            rc = qc_err_set(err, QC_ENOMEM, "%s: out of memory", path);
            goto out;
        }
    }
    if (ferror(f)) {
        rc = qc_err_set(err, QC_EIO, "cannot read protocol '%s': %s", path, strerror(errno));
        goto out;
    }
    rc = parse_text(path, b.p ? b.p : "", style, out, err, depth);
out:
    if (f != NULL)
        fclose(f);
    free(b.p);
    return rc;
}

/* ---- what a loaded protocol reads and returns ------------------------- */

int qc_protocol_returns(const qc_protocol *p, qc_step_id step, const char *column)
{
    const qc_step *st;

    if (p == NULL || column == NULL || (int)step < 0 || step >= QC_STEP_COUNT)
        return 0;
    st = &p->steps[step];
    if (!st->present || st->nstmts == 0)
        return 0;
    return has_word(st->stmts[st->nstmts - 1].sql, column, strlen(column));
}

int qc_protocol_reads(const qc_protocol *p, qc_step_id step, const char *param)
{
    const qc_step *st;
    int i, k;

    if (p == NULL || param == NULL || (int)step < 0 || step >= QC_STEP_COUNT)
        return 0;
    st = &p->steps[step];
    for (i = 0; st->present && i < st->nstmts; i++)
        for (k = 0; k < st->stmts[i].nparams; k++)
            if (strcmp(st->stmts[i].params[k], param) == 0)
                return 1;
    return 0;
}

const char *qc_protocol_known_columns(qc_step_id step)
{
    if ((int)step < 0 || step >= QC_STEP_COUNT || known_cols[step] == NULL)
        return "";
    return known_cols[step];
}

size_t qc_protocol_columns(const qc_protocol *p, qc_step_id step, char *buf, size_t n)
{
    const char *c = qc_protocol_known_columns(step);
    size_t o = 0, count = 0;

    if (n > 0)
        buf[0] = '\0';
    for (; *c; c += strspn(c, " ")) {
        size_t w = strcspn(c, " ");
        char col[32];

        snprintf(col, sizeof col, "%.*s", (int)w, c);
        c += w;
        if (!qc_protocol_returns(p, step, col))
            continue;
        if (n > 0 && o + w + 2 <= n) {
            o += (size_t)snprintf(buf + o, n - o, "%s%s", o ? "," : "", col);
            count++;
        }
    }
    return count;
}

const qc_column_need *qc_protocol_column_needs(size_t *n)
{
    *n = sizeof column_needs / sizeof column_needs[0];
    return column_needs;
}

/* ---- running a step --------------------------------------------------- */

void qc_params_set(qc_params *p, const char *name, const char *value)
{
    int i;

    if (p == NULL || name == NULL)
        return;
    for (i = 0; i < p->n && i < QC_MAX_PARAMS; i++) {
        if (p->name[i] == name || (p->name[i][0] == name[0] && strcmp(p->name[i], name) == 0)) {
            p->value[i] = value;
            return;
        }
    }
    /* A full table drops the name: the step then fails with QC_ESTATE
     * "no value for parameter", which names it. */
    if (p->n < QC_MAX_PARAMS) {
        p->name[p->n] = name;
        p->value[p->n] = value;
        p->n++;
    }
}

/* Finds name among the first rows of res[0..upto) (latest first), then in
 * in.  Returns 1 and sets *val (NULL = SQL NULL) when found. */
static int lookup(const qc_result *res, int upto, const qc_params *in, const char *name,
                  const char **val)
{
    int j, col;

    for (j = upto - 1; j >= 0; j--) {
        col = qc_result_col(&res[j], name);
        if (col >= 0 && res[j].nrows > 0) {
            *val = res[j].cells[col];
            return 1;
        }
    }
    for (j = 0; in != NULL && j < in->n && j < QC_MAX_PARAMS; j++) {
        if (in->name[j] != NULL && strcmp(in->name[j], name) == 0) {
            *val = in->value[j];
            return 1;
        }
    }
    return 0;
}

static int run_step(const qc_driver *d, qc_conn *c, const qc_protocol *p, qc_step_id step,
                    const qc_params *in, qc_result *out, qc_err *err, int manage_txn,
                    const qc_step_hooks *h);

int qc_protocol_run_hooked(const qc_driver *d, qc_conn *c, const qc_protocol *p, qc_step_id step,
                           const qc_params *in, qc_result *out, qc_err *err, int manage_txn,
                           const qc_step_hooks *h)
{
    return run_step(d, c, p, step, in, out, err, manage_txn, h);
}

int qc_protocol_run(const qc_driver *d, qc_conn *c, const qc_protocol *p, qc_step_id step,
                    const qc_params *in, qc_result *out, qc_err *err)
{
    return run_step(d, c, p, step, in, out, err, 1, NULL);
}

int qc_protocol_run_in_txn(const qc_driver *d, qc_conn *c, const qc_protocol *p, qc_step_id step,
                           const qc_params *in, qc_result *out, qc_err *err)
{
    return run_step(d, c, p, step, in, out, err, 0, NULL);
}

int qc_protocol_run_batch(const qc_driver *d, qc_conn *c, const qc_protocol *p, qc_step_id step,
                          const qc_params *in, int n, qc_result *outs, qc_err *err)
{
    const qc_step *st;
    const qc_stmt *s;
    const char **vals;
    int rc = 0, i, k, failed = -1;

    if ((int)step < 0 || step >= QC_STEP_COUNT || !p->steps[step].present)
        return qc_err_set(err, QC_EINVAL, "step '%s' is not in protocol %s", qc_step_name(step),
                          p->path);
    st = &p->steps[step];
    if (d->exec_batch == NULL || st->nstmts != 1 || n <= 1) {
        for (i = 0; i < n && rc == 0; i++)
            rc = run_step(d, c, p, step, &in[i], &outs[i], err, 0, NULL);
        return rc;
    }
    s = &st->stmts[0];
    vals = calloc((size_t)n * (size_t)(s->nparams > 0 ? s->nparams : 1), sizeof *vals);
    if (vals == NULL)
        return qc_err_set(err, QC_ENOMEM, "%s: out of memory", step_names[step]);
    for (i = 0; i < n; i++)
        for (k = 0; k < s->nparams; k++)
            if (!lookup(NULL, 0, &in[i], s->params[k], &vals[(size_t)i * (size_t)s->nparams + k])) {
                free(vals);
                return qc_err_set(err, QC_ESTATE,
                                  "step '%s' statement 1 (line %d): no value for parameter :%s",
                                  step_names[step], s->line, s->params[k]);
            }
    rc = d->exec_batch(c, s->id, s->sql, s->nparams, n, vals, outs, &failed, err);
    if (rc == QC_EDB || rc == QC_ECONN)
        qc_err_prefix(err, "%s", step_names[step]);
    free(vals);
    return rc;
}

#define WIRE(in_)                                                                          \
    do {                                                                                   \
        if (h != NULL && h->wire != NULL)                                                  \
            h->wire(h->ctx, in_);                                                          \
    } while (0)

/* hooks->abort (decision 1144): 1 with err set to the error it gave, the
 * statement not sent. */
static int hook_abort(const qc_step_hooks *h, qc_err *err)
{
    char msg[256];
    if (h == NULL || h->abort == NULL || !h->abort(h->ctx, msg, sizeof msg))
        return 0;
    qc_err_set(err, QC_EDB, "%s", msg);
    if (err != NULL) {
        size_t sl = strcspn(msg, " ");
        snprintf(err->sqlstate, sizeof err->sqlstate, "%.*s", (int)(sl < 7 ? sl : 7), msg);
    }
    return 1;
}

static void hook_point(const qc_step_hooks *h, qc_step_id step, const char *what)
{
    char name[40];
    if (h == NULL || h->point == NULL)
        return;
    snprintf(name, sizeof name, "%s.%s", step_names[step], what);
    h->point(h->ctx, name);
}

static int run_step(const qc_driver *d, qc_conn *c, const qc_protocol *p, qc_step_id step,
                    const qc_params *in, qc_result *out, qc_err *err, int manage_txn,
                    const qc_step_hooks *h)
{
    const qc_step *st;
    qc_result *res = NULL;
    const char **vals = NULL;
    qc_err ignored;
    int rc = 0, i, k, last = 0, began = 0, prepare, maxp = 1, aborted = 0;

    qc_result_clear(out);
    if ((int)step < 0 || step >= QC_STEP_COUNT || !p->steps[step].present) {
        return qc_err_set(err, QC_EINVAL, "step '%s' is not in protocol %s", qc_step_name(step),
                          p->path);
    }
    st = &p->steps[step];
    prepare = step != QC_STEP_SETUP && step != QC_STEP_TEARDOWN;
    for (i = 0; i < st->nstmts; i++)
        maxp = st->stmts[i].nparams > maxp ? st->stmts[i].nparams : maxp;
    res = calloc((size_t)st->nstmts, sizeof *res);
    vals = calloc((size_t)maxp, sizeof *vals);
    if (res == NULL || vals == NULL) {
        rc = qc_err_set(err, QC_ENOMEM, "%s: out of memory", step_names[step]);
        goto out;
    }
    if (manage_txn && st->nstmts > 1 && !st->autocommit) {
        rc = d->begin(c, err);
        if (rc != 0)
            goto fail;
        began = 1;
    }
    for (i = 0; i < st->nstmts; i++) {
        const qc_stmt *s = &st->stmts[i];

        for (k = 0; k < s->nparams; k++) {
            if (!lookup(res, i, in, s->params[k], &vals[k])) {
                rc = qc_err_set(err, QC_ESTATE,
                                "step '%s' statement %d (line %d): no value for parameter :%s",
                                step_names[step], i + 1, s->line, s->params[k]);
                goto fail;
            }
        }
        /* 2: a leading setting, whose answer ends no action (no point
         * follows it: the action goes on to the next statement) */
        WIRE(i < st->nsettings ? 2 : 1);
        if (i >= st->nsettings && hook_abort(h, err))
            rc = aborted = QC_EDB; /* the replayed server's abort, the statement not sent */
        else
            rc = d->exec(c, s->id, prepare, s->sql, s->nparams, vals, &res[i], err);
        WIRE(0);
        if (rc != 0)
            goto fail;
        last = i;
        if (i + 1 < st->nstmts && res[i].ncols > 0 && res[i].nrows == 0)
            break; /* nothing to work on: the step ends here */
        if (i + 1 < st->nstmts && i >= st->nsettings) {
            /* points count the statements after the leading settings
             * (decision 1128) */
            char n[12];
            snprintf(n, sizeof n, "%d", i + 1 - st->nsettings);
            hook_point(h, step, n);
        }
    }
    if (began) {
        hook_point(h, step, "commit");
        WIRE(1);
        rc = hook_abort(h, err) ? (aborted = QC_EDB) : d->commit(c, err);
        WIRE(0);
        if (rc != 0)
            goto fail;
    }
    qc_result_move(out, &res[last]);
    goto out;
fail:
    /* a replayed abort rolls back whatever transaction is open, the
     * worker's own (the transaction model) too: the server rolled back
     * its victim's (MariaDB, SQL Server); PostgreSQL left it aborted,
     * which ends the same once rolled back (decision 1144) */
    if ((began || aborted) && rc != QC_ECONN)
        d->rollback(c, &ignored);
    if (rc == QC_EDB || rc == QC_ECONN)
        qc_err_prefix(err, "%s", step_names[step]);
out:
    for (i = 0; res != NULL && i < st->nstmts; i++)
        qc_result_clear(&res[i]);
    free(res);
    free(vals);
    return rc;
}
