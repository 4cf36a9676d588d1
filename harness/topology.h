/*
 * topology.h - the replicated PostgreSQL topology a run may stand on
 * (README "Failover"): a primary and a streaming replica that
 * scripts/pg-replicated.sh starts in a folder (DIR/dsn holds the multi-host
 * conninfo, DIR/primary and DIR/replica the two servers), whose primary the
 * nemesis switches once (nemesis.h).
 */
#ifndef QC_TOPOLOGY_H
#define QC_TOPOLOGY_H

#include <stddef.h>

#include "err.h"
#include "ledger.h"
#include "scenario.h"

/* The folder of a replicated topology started outside qchaos: [topology]
 * dir, else (kind = replicated only) the environment variable
 * QCHAOS_TOPOLOGY_DIR when it is set and not empty; NULL when neither (a
 * replicated run without --dsn then starts its own).  Borrowed from s or
 * the environment.  Thread-safe as getenv. */
const char *qc_topology_dir(const qc_scenario *s);

/* Reads the first line of DIR/dsn (written by pg-replicated.sh start) into
 * out (size n): the multi-host libpq conninfo with
 * target_session_attrs=read-write.  Errors: QC_EINVAL "DIR/dsn: ..." when
 * the file is missing, empty or longer than n. */
int qc_topology_dsn(const char *dir, char *out, size_t n, qc_err *err);

/* Writes the note "server_count unavailable: ..." of a run whose primary
 * was switched: pg_stat_statements counts per server, so the claim calls
 * read before the switch (old primary) and after it (new primary) are of
 * two servers and their difference is no count.  Any thread (lb is the
 * caller's). */
void qc_topology_note_switch(qc_lbuf *lb);

#endif
