/*
 * target.h - which database a run tests, and how it was chosen.
 *
 * libpq's convention (as psql and pgbench follow it): a connection string
 * that omits host, port, dbname, user, password or service is completed
 * from PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD, PGSERVICE ... by
 * libpq itself.  qchaos starts its throwaway server only when no
 * connection setting is given at all: no --dsn and none of the variables
 * below.  The PG* variables apply to the engines reached through libpq
 * (postgres, spanner through PGAdapter), not to ODBC ones.
 */
#ifndef QC_TARGET_H
#define QC_TARGET_H

#include "../backends/driver.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* The PG* variables that select a PostgreSQL target (a NULL-terminated
 * list): PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGPASSWORD PGSERVICE
 * PGSERVICEFILE.  Those that only say how to connect (PGSSLMODE,
 * PGCONNECT_TIMEOUT, PGAPPNAME, ...) are not in it. */
extern const char *const qc_target_env_vars[];

/* Writes the names of the qc_target_env_vars set (non-empty) in the
 * environment into buf as "PGHOST, PGPORT" ("" when none; truncated to n)
 * and returns how many are set.  Thread-safe as getenv is (read only). */
int qc_target_env(char *buf, size_t n);

/* Unsets every environment variable libpq reads (PGSSLMODE, PGOPTIONS,
 * PGCONNECT_TIMEOUT, ... the libpq manual's "Environment Variables"), for
 * a run on the ephemeral server: the user's settings are for the user's
 * servers, and must reach neither qchaos's connections to its own server
 * nor the scripts it runs.  Writes the names it unset into buf as
 * "PGSSLMODE, PGOPTIONS" ("" none) and returns how many.  Not
 * thread-safe: call before any thread starts. */
int qc_target_env_clear(char *buf, size_t n);

/* Builds the "target" object of the ledger header and results.json from
 * the open connection c: {"host", "port", "dbname", "user", "server",
 * "how", and "variables" when PG* variables chose or completed it}.
 * how is "ephemeral", "dsn" or "environment"; vars is the comma list of
 * the PG* variables that took part ("" for none); server the server's
 * product and version.  Never holds a password (the driver's describe
 * reports none).  Returns a new reference, NULL when out of memory. */
json_t *qc_target_json(const qc_driver *d, qc_conn *c, const char *how, const char *vars,
                       const char *server);

/* Prints the one line every run prints about its target, to f:
 * "qchaos: target host=H port=P dbname=D user=U server=S (ephemeral |
 * given by --dsn | from PGHOST, PGPORT ...)". */
void qc_target_print(FILE *f, const json_t *target);

#endif
