/*
 * usage.h - what the harness process itself costs: CPU time and memory,
 * read from the kernel (getrusage(2) RUSAGE_SELF: every thread of this
 * process, not the servers it drives, nor child processes such as
 * PgBouncer), so that a run can say how much of the machine it took from
 * the database it tests (issue 16: 1,000 workers through PgBouncer with
 * the harness under half a core and 200 MB).
 */
#ifndef QC_USAGE_H
#define QC_USAGE_H

#include "err.h"
#include <jansson.h>

/* One reading.  user_s / sys_s: CPU seconds this process has used since it
 * started (all threads); wall_ms: qc_clock_ms() (monotonic ms) when read;
 * maxrss_kb: the peak resident set size so far, KiB (a high-water mark:
 * it never goes down). */
typedef struct qc_usage {
    double user_s, sys_s;
    double wall_ms;
    long maxrss_kb;
} qc_usage;

/* Reads the process's usage now into *u.  Thread-safe (getrusage and
 * clock_gettime only).  Never fails: a failed getrusage leaves zeros. */
void qc_usage_now(qc_usage *u);

/* The JSON object results.json keeps under metrics.harness (reference
 * owned by the caller): the CPU the process used from *from to *to
 * (cpu_s, cpu_user_s, cpu_sys_s: seconds), the wall time between
 * (wall_s), cpu_s / wall_s (cores: 0.5 is half a core), CPU per 1,000
 * `jobs` (cpu_ms_per_1000_jobs, only when jobs > 0) and the peak RSS
 * up to *to (peak_rss_mb, MiB).  Returns NULL on out of memory. */
json_t *qc_usage_json(const qc_usage *from, const qc_usage *to, long jobs);

/* Makes room for `need` open file descriptors in this process (one per
 * database connection, listener and file: 1,000 workers need more than
 * the usual soft limit of 1024): raises the soft RLIMIT_NOFILE up to the
 * hard limit when it is lower than need, as `ulimit -n` would.  *soft_out
 * (may be NULL) gets the soft limit in force afterwards.  Call from the
 * main thread before the workers start.  Errors: QC_EINVAL when the hard
 * limit is below need (the message names both numbers and the fix), QC_EIO
 * when getrlimit/setrlimit fail. */
int qc_usage_reserve_fds(long need, long *soft_out, qc_err *err);

/* The stack size of a worker thread, bytes (pthread_attr_setstacksize):
 * 512 KiB.  The deepest worker stacks measured (resident pages of the
 * stack mappings, /proc/PID/smaps) were 28 KiB through libpq (1,000
 * workers through PgBouncer) and 48 KiB through ODBC (MariaDB Connector);
 * glibc's default of 8 MiB a thread reserves 8 GB of address space at
 * 1,000 workers. */
#define QC_WORKER_STACK_BYTES (512 * 1024)

#endif
