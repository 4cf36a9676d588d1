/*
 * sink.h - the effect sink: the stand-in for the external system a job's
 * side effect reaches (mail server, payment API).  It records every delivery;
 * in idempotent mode it applies a delivery only the first time its op key is
 * seen (as an idempotent destination would), in plain mode it applies every
 * delivery.  The ledger's effect events ("applied": true/false) are what the
 * effects_once checker reads.
 * Thread-safe: many workers deliver concurrently (one mutex per shard).
 */
#ifndef QC_SINK_H
#define QC_SINK_H

#include <stdint.h>

typedef struct qc_sink qc_sink;

/* idempotent: 1 = dedup by op key, 0 = apply every delivery.  per_job: 1
 * = the key is the job id and the op key together, so the idempotent sink
 * dedups one job's redeliveries only, never two jobs that share an op key
 * (the physical copies of one message, [workload] copies: shared/cases.md
 * C23; an op key derived from the message would otherwise hide the
 * outbox's race inside the harness).  NULL on OOM. */
qc_sink *qc_sink_create(int idempotent, int per_job);
void qc_sink_destroy(qc_sink *s);

/* Delivers one effect.  op_key may be NULL (then the job id, as text, is
 * used as the key; with per_job, the job id and the op key).  Returns 1
 * when the sink applied it, 0 when it was a duplicate the idempotent sink
 * dropped. */
int qc_sink_deliver(qc_sink *s, const char *op_key, int64_t job);

/* Deliveries so far, and how many were applied.  Thread-safe. */
void qc_sink_counts(qc_sink *s, long *delivered, long *applied);

#endif
