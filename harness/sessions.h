/*
 * sessions.h - the monitor's samples of the workers' server sessions
 * (issue 17, C20): for worker_progress (check_wedged.c), which judges a
 * session that sits in a transaction between its worker's requests.
 */
#ifndef QC_SESSIONS_H
#define QC_SESSIONS_H

#include <stdatomic.h>

#include "../backends/driver.h"
#include "ledger.h"

/* Samples the server sessions of the workers whose session ids pids[0 ..
 * workers-1] publishes (0 = none; worker.c publish_pid) on the control
 * connection c, and appends one "session" event per worker session found
 * to lb:
 *   {"type":"session","worker":3,"pid":4711,"state":"idle in transaction",
 *    "xact_ms":5012.3,"state_ms":5010.9,"sent_t":1234.5}
 * state is PostgreSQL's pg_stat_activity.state ("active", "idle",
 * "idle in transaction", "idle in transaction (aborted)", ...); on MariaDB
 * "idle in transaction" for a Sleep connection with an InnoDB transaction
 * (information_schema.PROCESSLIST joined with INNODB_TRX), "idle" for one
 * without, else "active".  xact_ms: age of the open transaction (server
 * clock, ms; absent when none is open); state_ms: time since the state
 * changed (PostgreSQL state_change; MariaDB PROCESSLIST.TIME_MS), ms;
 * sent_t: client ms since t0 when the query was sent.  A worker whose
 * published id changed while the query ran is left out (it reconnected:
 * the row may be another session's).  The incarnation is not written: the
 * worker's "session" note (worker, inc, pid) in the ledger says it.
 * engine: "postgres" or "mariadb"; others: nothing is sampled.  Returns 0,
 * or the driver's error (nothing appended; the caller carries on: a
 * sample is an opportunity, not a duty).  Main thread only (it uses c). */
int qc_sessions_sample(const qc_driver *d, qc_conn *c, const char *engine, atomic_int *pids,
                       long workers, double t0, qc_lbuf *lb);

#endif
