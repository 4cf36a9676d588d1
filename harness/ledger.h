/*
 * ledger.h - the append-only record of a run (JSON Lines), writer side.
 * The format is documented in history.h, which reads it back.
 *
 * Design: every thread that records events owns a qc_lbuf.  Appending
 * formats the event into that buffer under the buffer's own mutex, which only
 * the writer thread ever contends for (to swap the buffer out), so a worker
 * never waits on another worker.  One writer thread drains all buffers to
 * the file every 20 ms.  Sequence numbers come from one atomic counter taken
 * at append time, so seq order is consistent with real time; lines in the file
 * may be out of seq order across threads and the reader sorts them.
 */
#ifndef QC_LEDGER_H
#define QC_LEDGER_H

#include <jansson.h>
#include <stdint.h>
#include "err.h"

typedef struct qc_ledger qc_ledger;
typedef struct qc_lbuf qc_lbuf;

/* Creates path (truncating), writes header (borrowed; "type":"header" is
 * added) as the first line and starts the writer thread.  t0 is the run's
 * monotonic origin (qc_clock_ms()) for the events' "t".
 * Errors: QC_EIO naming the path. */
int qc_ledger_open(const char *path, json_t *header, double t0, qc_ledger **out, qc_err *err);

/* A new buffer for one thread, owned by the ledger (freed at close).
 * Thread-safe.  Returns NULL on out of memory. */
qc_lbuf *qc_ledger_buf(qc_ledger *l);

/* Appends ev (reference stolen) with "seq" and "t" added last (ms since t0,
 * to the microsecond, 3 decimals; members of ev with those names are
 * replaced); returns the seq.  The line is ev's members in insertion order,
 * written by ledger.c's own serializer (strings escaped as jansson escapes
 * them; a real that is a whole number of thousandths, such as a server
 * epoch ms, with 3 decimals, any other in the shortest form that reads back
 * as the same double; nested values through json_dumps), so history.c reads
 * back exactly the values appended.  Called only by the thread owning b;
 * it allocates only when the line outgrows b's scratch space.  Out of
 * memory: the event is dropped and qc_ledger_close reports QC_EIO. */
int64_t qc_ledger_append(qc_lbuf *b, json_t *ev);

/* Number of events appended so far (all buffers).  Thread-safe. */
int64_t qc_ledger_count(qc_ledger *l);

/* Stops the writer, writes everything still buffered, fsyncs and closes.
 * All threads using buffers must have stopped.  Accepts NULL.
 * Errors: QC_EIO when a write failed at any time during the run. */
int qc_ledger_close(qc_ledger *l, qc_err *err);

#endif
