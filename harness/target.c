/*
 * target.c - which database a run tests, and how it was chosen (target.h).
 *
 * What is recorded comes from the live connection (the driver's describe),
 * not from the string that was given: a service file or a PG* variable may
 * have filled in what the string left out, and the record must say where
 * the run really went.
 */
#include "target.h"

#include <stdlib.h>
#include <string.h>

const char *const qc_target_env_vars[] = {"PGHOST",     "PGHOSTADDR", "PGPORT",
                                          "PGDATABASE", "PGUSER",     "PGPASSWORD",
                                          "PGSERVICE",  "PGSERVICEFILE", NULL};

int qc_target_env(char *buf, size_t n)
{
    int count = 0;
    size_t len = 0;

    if (n > 0)
        buf[0] = '\0';
    for (int i = 0; qc_target_env_vars[i] != NULL; i++) {
        const char *v = getenv(qc_target_env_vars[i]);
        if (v == NULL || *v == '\0')
            continue;
        if (len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", count ? ", " : "",
                                    qc_target_env_vars[i]);
        count++;
    }
    return count;
}

/* Every variable of the libpq manual's "Environment Variables" (PostgreSQL
 * 16), the target ones included. */
static const char *const libpq_vars[] = {
    "PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD", "PGPASSFILE",
    "PGREQUIREAUTH", "PGCHANNELBINDING", "PGSERVICE", "PGSERVICEFILE", "PGOPTIONS", "PGAPPNAME",
    "PGSSLMODE", "PGREQUIRESSL", "PGSSLCOMPRESSION", "PGSSLCERT", "PGSSLKEY", "PGSSLROOTCERT",
    "PGSSLCRL", "PGSSLCRLDIR", "PGSSLSNI", "PGREQUIREPEER", "PGSSLMINPROTOCOLVERSION",
    "PGSSLMAXPROTOCOLVERSION", "PGGSSENCMODE", "PGKRBSRVNAME", "PGGSSLIB", "PGGSSDELEGATION",
    "PGCONNECT_TIMEOUT", "PGCLIENTENCODING", "PGTARGETSESSIONATTRS", "PGLOADBALANCEHOSTS",
    "PGDATESTYLE", "PGTZ", "PGGEQO", "PGSYSCONFDIR", NULL};

int qc_target_env_clear(char *buf, size_t n)
{
    int count = 0;
    size_t len = 0;

    if (n > 0)
        buf[0] = '\0';
    for (int i = 0; libpq_vars[i] != NULL; i++) {
        if (getenv(libpq_vars[i]) == NULL)
            continue;
        unsetenv(libpq_vars[i]);
        if (len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", count ? ", " : "", libpq_vars[i]);
        count++;
    }
    return count;
}

json_t *qc_target_json(const qc_driver *d, qc_conn *c, const char *how, const char *vars,
                       const char *server)
{
    qc_conn_target t;
    json_t *o = json_object();

    if (o == NULL)
        return NULL;
    memset(&t, 0, sizeof t);
    if (d != NULL && d->describe != NULL && c != NULL)
        d->describe(c, &t);
    json_object_set_new(o, "host", json_string(t.host));
    json_object_set_new(o, "port", json_string(t.port));
    json_object_set_new(o, "dbname", json_string(t.dbname));
    json_object_set_new(o, "user", json_string(t.user));
    json_object_set_new(o, "server", json_string(server ? server : ""));
    json_object_set_new(o, "how", json_string(how));
    if (vars != NULL && *vars) {
        json_t *a = json_array();
        char copy[256];
        char *save = NULL;
        snprintf(copy, sizeof copy, "%s", vars);
        for (char *v = strtok_r(copy, ", ", &save); v; v = strtok_r(NULL, ", ", &save))
            json_array_append_new(a, json_string(v));
        json_object_set_new(o, "variables", a);
    }
    return o;
}

static const char *field(const json_t *t, const char *k)
{
    const char *v = json_string_value(json_object_get(t, k));
    return v && *v ? v : "?";
}

void qc_target_print(FILE *f, const json_t *target)
{
    const char *how = field(target, "how");
    char vars[256] = "";
    size_t len = 0, i;
    json_t *v;

    json_array_foreach(json_object_get(target, "variables"), i, v)
    {
        if (len < sizeof vars)
            len += (size_t)snprintf(vars + len, sizeof vars - len, "%s%s", i ? ", " : "",
                                    json_string_value(v));
    }
    fprintf(f, "qchaos: target host=%s port=%s dbname=%s user=%s server=%s (", field(target, "host"),
            field(target, "port"), field(target, "dbname"), field(target, "user"),
            field(target, "server"));
    if (!strcmp(how, "ephemeral"))
        fprintf(f, "ephemeral");
    else if (!strcmp(how, "environment"))
        fprintf(f, "from %s", vars);
    else
        fprintf(f, "given by --dsn");
    fprintf(f, ")\n");
}
