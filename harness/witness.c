/*
 * witness.c - the server-side witness: configuration, the audit trigger,
 * session names, and reading the side table into the ledger (witness.h).
 *
 * Invariants: every name pasted into DDL is an identifier checked here and
 * then against the catalog; values are always bound.  Reading streams the
 * side table in pages (keyset on wid), so a run of millions of row changes
 * never holds more than one page.
 */
#include "witness.h"
#include "owner.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PAGE_ROWS 5000

int qc_witness_is_on(const qc_scenario *s)
{
    const char *v = getenv("QCHAOS_WITNESS");

    if (v != NULL && (!strcasecmp(v, "yes") || !strcasecmp(v, "on") || !strcmp(v, "1")))
        return 1;
    if (v != NULL && (!strcasecmp(v, "no") || !strcasecmp(v, "off") || !strcmp(v, "0")))
        return 0;
    return s->witness_on;
}

/* An identifier, or (dots = 1) schema.identifier. */
static int is_ident(const char *s, int dots)
{
    int ndot = 0;

    if (!isalpha((unsigned char)*s) && *s != '_')
        return 0;
    for (; *s; s++) {
        if (*s == '.') {
            if (++ndot > dots || !(isalpha((unsigned char)s[1]) || s[1] == '_'))
                return 0;
        } else if (!isalnum((unsigned char)*s) && *s != '_') {
            return 0;
        }
    }
    return 1;
}

static char *field_of(qc_witness_cfg *cfg, const char *key, size_t *n)
{
    static const char *const keys[] = {"table", "id", "state", "token", "owner"};
    char *f[] = {cfg->table, cfg->id, cfg->state, cfg->token, cfg->owner};
    size_t sz[] = {sizeof cfg->table, sizeof cfg->id, sizeof cfg->state, sizeof cfg->token,
                   sizeof cfg->owner};

    for (size_t i = 0; i < 5; i++)
        if (!strcmp(key, keys[i])) {
            *n = sz[i];
            return f[i];
        }
    return NULL;
}

/* Applies the protocol header's "-- witness:" words over cfg. */
static int apply_header(const qc_protocol *p, qc_witness_cfg *cfg, qc_err *err)
{
    char buf[1024], *save = NULL, *w;
    int first = 1;

    snprintf(buf, sizeof buf, "%s", p->witness);
    for (w = strtok_r(buf, " \t", &save); w != NULL; w = strtok_r(NULL, " \t", &save), first = 0) {
        char *eq = strchr(w, '=');
        size_t n;
        char *dst;

        if (eq == NULL && first) {
            snprintf(cfg->table, sizeof cfg->table, "%s", w);
            continue;
        }
        if (eq == NULL)
            return qc_err_set(err, QC_EINVAL,
                              "%s:%d: '-- witness:' word '%s' is not key=value (keys: table, "
                              "id, state, token, owner)",
                              p->path, p->witness_line, w);
        *eq = '\0';
        if (!strcmp(w, "library")) {
            for (const char *q = eq + 1; *q; q++)
                if (!isalnum((unsigned char)*q) && *q != '_' && *q != '>' && *q != ',')
                    return qc_err_set(err, QC_EINVAL,
                                      "%s:%d: '-- witness:' library=%s: expected OLD>NEW state "
                                      "changes joined by ',' (NULL: no row)",
                                      p->path, p->witness_line, eq + 1);
            snprintf(cfg->library, sizeof cfg->library, "%s", eq + 1);
            continue;
        }
        dst = field_of(cfg, w, &n);
        if (dst == NULL)
            return qc_err_set(err, QC_EINVAL,
                              "%s:%d: unknown '-- witness:' key '%s' (expected table, id, state, "
                              "token, owner, library)",
                              p->path, p->witness_line, w);
        snprintf(dst, n, "%s", eq + 1);
    }
    return 0;
}

int qc_witness_config(const qc_scenario *s, const qc_protocol *p, qc_witness_cfg *cfg, qc_err *err)
{
    static const char *const keys[] = {"table", "id", "state", "token", "owner"};
    const char *sc[] = {s->witness_table, s->witness_id, s->witness_state, s->witness_token,
                        s->witness_owner};
    int rc;

    memset(cfg, 0, sizeof *cfg);
    if (strcmp(p->engine, "postgres") != 0 && strcmp(p->engine, "mariadb") != 0)
        return qc_err_set(err, QC_EINVAL,
                          "%s: the witness needs triggers qchaos can install: engine postgres or "
                          "mariadb, not %s ([witness] on, or QCHAOS_WITNESS)",
                          p->path, p->engine);
    snprintf(cfg->engine, sizeof cfg->engine, "%s", p->engine);
    snprintf(cfg->table, sizeof cfg->table, "%s",
             !strcmp(p->engine, "postgres") ? "qchaos.jobs" : "qchaos_jobs");
    snprintf(cfg->id, sizeof cfg->id, "id");
    snprintf(cfg->state, sizeof cfg->state, "state");
    snprintf(cfg->token, sizeof cfg->token, "token");
    snprintf(cfg->owner, sizeof cfg->owner, "locked_by");
    if (p->witness != NULL && (rc = apply_header(p, cfg, err)) != 0)
        return rc;
    /* an adapter's library: its table and columns from [adapter] table,
     * id_column, state_column, owner_column; no token column (none of the
     * libraries has one: what an adapter reports as its token is not a
     * column's text) unless [witness] token names one */
    const char *ad[] = {s->adapter_table, s->adapter_id_column, s->adapter_state_column, "-",
                        s->adapter_owner_column[0] ? s->adapter_owner_column : "-"};
    static const char *const adkeys[] = {"table", "id_column", "state_column", NULL,
                                         "owner_column"};
    int adapter = s->adapter_command[0] != '\0';
    for (size_t i = 0; i < 5; i++) {
        size_t n;
        char *dst = field_of(cfg, keys[i], &n);
        int from_ad = adapter && !sc[i][0] && ad[i][0];
        if (sc[i][0])
            snprintf(dst, n, "%s", sc[i]);
        else if (from_ad)
            snprintf(dst, n, "%s", ad[i]);
        const char *from = sc[i][0] || (from_ad && adkeys[i]) ? s->path
                           : p->witness                       ? p->path
                                                              : "the default";
        int line = sc[i][0]               ? qc_scenario_set_line(s, "witness", keys[i])
                   : from_ad && adkeys[i] ? qc_scenario_set_line(s, "adapter", adkeys[i])
                   : p->witness           ? p->witness_line
                                          : 0;
        if (!strcmp(dst, "-") && i >= 3) {
            dst[0] = '\0';
            continue;
        }
        if (!strcmp(dst, "-") || !dst[0])
            return qc_err_set(err, QC_EINVAL, "%s:%d: the witness needs a %s column", from, line,
                              keys[i]);
        if (!is_ident(dst, i == 0))
            return qc_err_set(err, QC_EINVAL,
                              "%s:%d: witness %s '%s' is not a%s name (letters, digits, '_'%s)",
                              from, line, keys[i], dst, i == 0 ? " table" : " column",
                              i == 0 ? ", schema.table" : "");
        if (!strcmp(p->engine, "postgres") && i > 0) /* to_jsonb keys are the folded names */
            for (char *q = dst; *q; q++)
                *q = (char)tolower((unsigned char)*q);
    }
    return 0;
}

void qc_witness_session(int worker, int inc, char *buf, size_t n)
{
    if (worker >= 0)
        snprintf(buf, n, "qchaos-w%d.%d", worker, inc);
    else
        snprintf(buf, n, "qchaos-reaper");
}

int qc_witness_name_session(const qc_driver *d, qc_conn *c, const char *engine, const char *name,
                            qc_err *err)
{
    qc_result r = {0};
    const char *params[1] = {name};
    int rc =
        d->exec(c, -1, 0,
                !strcmp(engine, "postgres") ? "SELECT set_config('application_name', $1, false)"
                                            : "SET @qchaos_app = ?",
                1, params, &r, err);

    qc_result_clear(&r);
    if (rc != 0)
        qc_err_prefix(err, "naming the session %s for the witness", name);
    return rc;
}

int qc_witness_name_actor(const qc_driver *d, qc_conn *c, const qc_scenario *s, const char *engine,
                          int worker, int inc, qc_err *err)
{
    char name[64];

    if (!qc_witness_is_on(s))
        return 0;
    qc_witness_session(worker, inc, name, sizeof name);
    return qc_witness_name_session(d, c, engine, name, err);
}

static int run(const qc_driver *d, qc_conn *c, const char *sql, qc_err *err)
{
    qc_result r = {0};
    int rc = d->exec(c, -1, 0, sql, 0, NULL, &r, err);

    qc_result_clear(&r);
    return rc;
}

/* Every configured column must be one of the table's. */
static int check_columns(const qc_driver *d, qc_conn *c, const qc_witness_cfg *cfg, qc_err *err)
{
    static const char *const keys[] = {"id", "state", "token", "owner"};
    const char *cols[] = {cfg->id, cfg->state, cfg->token, cfg->owner};
    qc_result r = {0};
    char schema[128] = "", table[128];
    const char *dot = strchr(cfg->table, '.');
    int rc;

    if (dot != NULL) {
        snprintf(schema, sizeof schema, "%.*s", (int)(dot - cfg->table), cfg->table);
        snprintf(table, sizeof table, "%s", dot + 1);
    } else {
        snprintf(table, sizeof table, "%s", cfg->table);
    }
    if (!strcmp(cfg->engine, "postgres")) {
        const char *p[1] = {cfg->table};
        rc = d->exec(c, -1, 0,
                     "SELECT a.attname::text AS name FROM pg_attribute a "
                     "WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped",
                     1, p, &r, err);
    } else {
        const char *p[2] = {schema[0] ? schema : NULL, table};
        rc = d->exec(c, -1, 0,
                     "SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS "
                     "WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?",
                     2, p, &r, err);
    }
    if (rc != 0) {
        qc_err_prefix(err, "witness: reading the columns of %s", cfg->table);
        return rc;
    }
    if (r.nrows == 0) {
        qc_result_clear(&r);
        return qc_err_set(err, QC_EINVAL,
                          "witness: no table %s after the protocol's setup ([witness] table, or "
                          "the protocol's '-- witness:' header)",
                          cfg->table);
    }
    for (size_t i = 0; i < 4; i++) {
        int found = 0;
        if (!cols[i][0])
            continue;
        for (int k = 0; k < r.nrows && !found; k++) {
            const char *v = qc_result_get(&r, k, "name");
            found = v != NULL && !strcasecmp(v, cols[i]);
        }
        if (!found) {
            qc_result_clear(&r);
            return qc_err_set(err, QC_EINVAL,
                              "witness: table %s has no column '%s' (the witness's %s column; "
                              "[witness] %s = - when it has none)",
                              cfg->table, cols[i], keys[i], keys[i]);
        }
    }
    qc_result_clear(&r);
    return 0;
}

static int install_pg(const qc_driver *d, qc_conn *c, const qc_witness_cfg *cfg, qc_err *err)
{
    char sql[2048];
    int rc;

    if ((rc = run(d, c, "CREATE SCHEMA IF NOT EXISTS qchaos", err)) != 0 ||
        (rc = run(d, c, "DROP TABLE IF EXISTS qchaos.witness", err)) != 0 ||
        (rc = run(d, c,
                  "CREATE TABLE qchaos.witness (wid bigserial PRIMARY KEY, app text, pid int, "
                  "change text NOT NULL, row_id text, old_state text, new_state text, "
                  "old_token text, new_token text, old_owner text, new_owner text, txid bigint, "
                  "stmt_ms float8, server_ms float8)",
                  err)) != 0 ||
        (rc = run(d, c, "COMMENT ON TABLE qchaos.witness IS '" QC_OWNER_MARK " " QC_VERSION "'",
                  err)) != 0)
        return rc;
    /* The column names arrive as trigger arguments; to_jsonb(row) ->> ''
     * is NULL, which is how a column the table lacks reads. */
    rc = run(d, c,
             "CREATE OR REPLACE FUNCTION qchaos.witness_record() RETURNS trigger "
             "LANGUAGE plpgsql AS $qc$\n"
             "DECLARE o jsonb; n jsonb;\n"
             "BEGIN\n"
             "  IF TG_OP <> 'INSERT' THEN o := to_jsonb(OLD); END IF;\n"
             "  IF TG_OP <> 'DELETE' THEN n := to_jsonb(NEW); END IF;\n"
             "  INSERT INTO qchaos.witness (app, pid, change, row_id, old_state, new_state,\n"
             "      old_token, new_token, old_owner, new_owner, txid, stmt_ms, server_ms)\n"
             "  VALUES (current_setting('application_name'), pg_backend_pid(), lower(TG_OP),\n"
             "      coalesce(n, o) ->> TG_ARGV[0], o ->> TG_ARGV[1], n ->> TG_ARGV[1],\n"
             "      o ->> TG_ARGV[2], n ->> TG_ARGV[2], o ->> TG_ARGV[3], n ->> TG_ARGV[3],\n"
             "      txid_current(), extract(epoch FROM statement_timestamp()) * 1000,\n"
             "      extract(epoch FROM clock_timestamp()) * 1000);\n"
             "  RETURN NULL;\n"
             "END $qc$",
             err);
    if (rc != 0)
        return rc;
    snprintf(sql, sizeof sql, "DROP TRIGGER IF EXISTS qchaos_witness ON %s", cfg->table);
    if ((rc = run(d, c, sql, err)) != 0)
        return rc;
    snprintf(sql, sizeof sql,
             "CREATE TRIGGER qchaos_witness AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW "
             "EXECUTE FUNCTION qchaos.witness_record('%s', '%s', '%s', '%s')",
             cfg->table, cfg->id, cfg->state, cfg->token, cfg->owner);
    return run(d, c, sql, err);
}

/* NEW.col / OLD.col, or NULL for a column the table lacks. */
static const char *col(char *buf, size_t n, const char *rec, const char *name)
{
    if (rec == NULL || !name[0])
        return "NULL";
    snprintf(buf, n, "%s.`%s`", rec, name);
    return buf;
}

static int install_mariadb(const qc_driver *d, qc_conn *c, const qc_witness_cfg *cfg, qc_err *err)
{
    static const struct {
        const char *suffix, *event, *change, *old, *new_;
    } trig[] = {{"i", "INSERT", "insert", NULL, "NEW"},
                {"u", "UPDATE", "update", "OLD", "NEW"},
                {"d", "DELETE", "delete", "OLD", NULL}};
    char sql[4096], b[8][200];
    int rc;

    if ((rc = run(d, c, "DROP TABLE IF EXISTS qchaos_witness", err)) != 0 ||
        (rc = run(
             d, c,
             "CREATE TABLE qchaos_witness (wid BIGINT UNSIGNED NOT NULL AUTO_INCREMENT "
             "PRIMARY KEY, app VARCHAR(128) NULL, pid BIGINT NULL, change_ VARCHAR(8) NOT "
             "NULL, row_id VARCHAR(255) NULL, old_state VARCHAR(255) NULL, new_state "
             "VARCHAR(255) NULL, old_token VARCHAR(255) NULL, new_token VARCHAR(255) NULL, "
             "old_owner VARCHAR(255) NULL, new_owner VARCHAR(255) NULL, txid BIGINT NULL, "
             "stmt_ms DOUBLE NULL, server_ms DOUBLE NULL) ENGINE = InnoDB COMMENT = '" QC_OWNER_MARK
             " " QC_VERSION "'",
             err)) != 0)
        return rc;
    for (size_t i = 0; i < 3; i++) {
        snprintf(sql, sizeof sql, "DROP TRIGGER IF EXISTS qchaos_witness_%s", trig[i].suffix);
        if ((rc = run(d, c, sql, err)) != 0)
            return rc;
        snprintf(sql, sizeof sql,
                 "CREATE TRIGGER qchaos_witness_%s AFTER %s ON %s FOR EACH ROW "
                 "INSERT INTO qchaos_witness (app, pid, change_, row_id, old_state, new_state, "
                 "old_token, new_token, old_owner, new_owner, stmt_ms, server_ms) VALUES "
                 "(@qchaos_app, CONNECTION_ID(), '%s', %s, %s, %s, %s, %s, %s, %s, "
                 "TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000, "
                 "TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) / 1000)",
                 trig[i].suffix, trig[i].event, cfg->table, trig[i].change,
                 col(b[0], sizeof b[0], trig[i].new_ ? trig[i].new_ : trig[i].old, cfg->id),
                 col(b[1], sizeof b[1], trig[i].old, cfg->state),
                 col(b[2], sizeof b[2], trig[i].new_, cfg->state),
                 col(b[3], sizeof b[3], trig[i].old, cfg->token),
                 col(b[4], sizeof b[4], trig[i].new_, cfg->token),
                 col(b[5], sizeof b[5], trig[i].old, cfg->owner),
                 col(b[6], sizeof b[6], trig[i].new_, cfg->owner));
        if ((rc = run(d, c, sql, err)) != 0)
            return rc;
    }
    return 0;
}

int qc_witness_install(const qc_driver *d, qc_conn *c, const qc_witness_cfg *cfg, qc_err *err)
{
    int rc = check_columns(d, c, cfg, err);

    if (rc != 0)
        return rc;
    rc = !strcmp(cfg->engine, "postgres") ? install_pg(d, c, cfg, err)
                                          : install_mariadb(d, c, cfg, err);
    if (rc != 0)
        qc_err_prefix(err, "witness: installing the trigger on %s", cfg->table);
    return rc;
}

static json_t *str_or_null(const char *v)
{
    return v != NULL ? json_string(v) : json_null();
}

static json_t *num_or_null(const char *v)
{
    char *end;
    double x;

    if (v == NULL)
        return json_null();
    x = strtod(v, &end);
    return end != v ? json_real(x) : json_null();
}

int qc_witness_read(const qc_driver *d, qc_conn *c, const qc_witness_cfg *cfg, qc_lbuf *lb,
                    long *rows, qc_err *err)
{
    static const char *const cols[] = {"old_state", "new_state", "old_token",
                                       "new_token", "old_owner", "new_owner"};
    const int pg = !strcmp(cfg->engine, "postgres");
    const char *sql =
        pg ? "SELECT wid, app, pid, change AS chg, row_id, old_state, new_state, old_token, "
             "new_token, old_owner, new_owner, txid, stmt_ms, server_ms FROM qchaos.witness "
             "WHERE wid > $1::bigint ORDER BY wid LIMIT 5000"
           : "SELECT wid, app, pid, change_ AS chg, row_id, old_state, new_state, old_token, "
             "new_token, old_owner, new_owner, txid, stmt_ms, server_ms FROM qchaos_witness "
             "WHERE wid > CAST(? AS UNSIGNED) ORDER BY wid LIMIT 5000";
    char last[32] = "0";
    long n = 0;
    int rc = 0;

    for (;;) {
        qc_result r = {0};
        const char *p[1] = {last};
        if ((rc = d->exec(c, -1, 0, sql, 1, p, &r, err)) != 0) {
            qc_err_prefix(err, "witness: reading %s", pg ? "qchaos.witness" : "qchaos_witness");
            break;
        }
        for (int i = 0; i < r.nrows; i++) {
            const char *wid = qc_result_get(&r, i, "wid");
            json_t *e = json_object();
            json_object_set_new(e, "type", json_string("witness"));
            json_object_set_new(e, "wid", json_integer(wid ? strtoll(wid, NULL, 10) : 0));
            json_object_set_new(e, "session", str_or_null(qc_result_get(&r, i, "app")));
            const char *pid = qc_result_get(&r, i, "pid");
            if (pid != NULL)
                json_object_set_new(e, "pid", json_integer(strtoll(pid, NULL, 10)));
            json_object_set_new(e, "change", str_or_null(qc_result_get(&r, i, "chg")));
            json_object_set_new(e, "row", str_or_null(qc_result_get(&r, i, "row_id")));
            for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++)
                json_object_set_new(e, cols[k], str_or_null(qc_result_get(&r, i, cols[k])));
            const char *tx = qc_result_get(&r, i, "txid");
            if (tx != NULL)
                json_object_set_new(e, "txid", json_integer(strtoll(tx, NULL, 10)));
            json_object_set_new(e, "stmt_ms", num_or_null(qc_result_get(&r, i, "stmt_ms")));
            json_object_set_new(e, "server_ms", num_or_null(qc_result_get(&r, i, "server_ms")));
            qc_ledger_append(lb, e);
            if (wid != NULL)
                snprintf(last, sizeof last, "%s", wid);
        }
        n += r.nrows;
        int more = r.nrows == PAGE_ROWS;
        qc_result_clear(&r);
        if (!more)
            break;
    }
    json_t *e = json_object();
    json_object_set_new(e, "type", json_string("note"));
    json_object_set_new(e, "note", json_string("witness"));
    json_object_set_new(e, "rows", json_integer(n));
    json_object_set_new(e, "complete", json_boolean(rc == 0));
    if (rc != 0)
        json_object_set_new(e, "error", json_string(err->msg));
    qc_ledger_append(lb, e);
    *rows = n;
    return rc;
}

void qc_witness_remove(const qc_driver *d, qc_conn *c, const qc_witness_cfg *cfg)
{
    char sql[512];
    qc_err ignore = {0};

    if (!strcmp(cfg->engine, "postgres")) {
        /* the table may be gone already (a library's own teardown) */
        snprintf(sql, sizeof sql,
                 "DO $qc$ BEGIN IF to_regclass('%s') IS NOT NULL THEN "
                 "DROP TRIGGER IF EXISTS qchaos_witness ON %s; END IF; END $qc$",
                 cfg->table, cfg->table);
        run(d, c, sql, &ignore);
        run(d, c, "DROP TABLE IF EXISTS qchaos.witness", &ignore);
        run(d, c, "DROP FUNCTION IF EXISTS qchaos.witness_record()", &ignore);
    } else {
        run(d, c, "DROP TRIGGER IF EXISTS qchaos_witness_i", &ignore);
        run(d, c, "DROP TRIGGER IF EXISTS qchaos_witness_u", &ignore);
        run(d, c, "DROP TRIGGER IF EXISTS qchaos_witness_d", &ignore);
        run(d, c, "DROP TABLE IF EXISTS qchaos_witness", &ignore);
    }
}

json_t *qc_witness_header_json(const qc_witness_cfg *cfg)
{
    json_t *o = json_object();

    json_object_set_new(o, "table", json_string(cfg->table));
    json_object_set_new(o, "id", json_string(cfg->id));
    json_object_set_new(o, "state", json_string(cfg->state));
    json_object_set_new(o, "token", cfg->token[0] ? json_string(cfg->token) : json_null());
    json_object_set_new(o, "owner", cfg->owner[0] ? json_string(cfg->owner) : json_null());
    if (cfg->library[0])
        json_object_set_new(o, "library", json_string(cfg->library));
    return o;
}
