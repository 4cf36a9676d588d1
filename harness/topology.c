/*
 * topology.c - where a replicated topology is and how to reach it.
 *
 * The topology itself (initdb, pg_basebackup -R, the replication slot,
 * synchronous_standby_names) and the switches of its primary live in
 * scripts/pg-replicated.sh; qchaos only reads the conninfo the script
 * wrote and hands the folder to the nemesis's commands.  Clients reach the
 * primary through libpq's multi-host conninfo (host=a,b port=p,q
 * target_session_attrs=read-write): after a switch a new connection goes to
 * whichever node accepts read-write sessions, as an application's does.
 */
#include "topology.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

const char *qc_topology_dir(const qc_scenario *s)
{
    if (s->topology_dir[0])
        return s->topology_dir;
    if (!s->replicated)
        return NULL;
    const char *v = getenv("QCHAOS_TOPOLOGY_DIR");
    return v != NULL && v[0] ? v : NULL;
}

int qc_topology_dsn(const char *dir, char *out, size_t n, qc_err *err)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/dsn", dir);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return qc_err_set(err, QC_EINVAL,
                          "%s: %s (no replicated topology there: start one with "
                          "scripts/pg-replicated.sh start DIR)",
                          path, strerror(errno));
    int ok = fgets(out, (int)n, f) != NULL;
    fclose(f);
    size_t len = ok ? strlen(out) : 0;
    if (len > 0 && out[len - 1] == '\n')
        out[--len] = '\0';
    else if (len + 1 >= n)
        return qc_err_set(err, QC_EINVAL, "%s:1: conninfo longer than %zu bytes", path, n - 1);
    if (len == 0)
        return qc_err_set(err, QC_EINVAL, "%s:1: expected a libpq conninfo, got an empty file",
                          path);
    return 0;
}

void qc_topology_note_switch(qc_lbuf *lb)
{
    if (lb == NULL)
        return;
    json_t *e = json_object();
    json_object_set_new(e, "type", json_string("note"));
    json_object_set_new(e, "note",
                        json_string("server_count unavailable: the primary was switched during "
                                    "the run (pg_stat_statements counts per server)"));
    qc_ledger_append(lb, e);
}
