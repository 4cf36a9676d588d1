/*
 * report.h - the reliability report of a run (DESIGN.md "Outputs and exit
 * codes"): junit.xml, report.md, report.html and gnuplot plots, written from
 * a run folder's results.json and ledger(s).
 *
 * A report never re-derives a verdict: every verdict, count and violation is
 * read from results.json (written by the audit).  The ledger only supplies
 * what results.json does not hold: the events behind each violation's
 * sequence numbers (told in plain words), and the time series of the plots.
 *
 * Files written into the run folder DIR (each written to NAME.tmp, then
 * renamed, so a reader never sees half a file):
 *
 *   junit.xml    <testsuites> holding one <testsuite> (the run) with one
 *                <testcase> per checker, in results.json order:
 *                  PASS            passes (no child element)
 *                  FAIL            <failure> whose text is every stored
 *                                  violation with its evidence
 *                  INCONCLUSIVE    <failure type="INCONCLUSIVE">, or
 *                                  <skipped/> with allow_inconclusive
 *                  NOT_APPLICABLE  <skipped/>
 *                  anything else   <error> (a verdict this version does not
 *                                  know)
 *   report.md    verdict table first; what was tested (scenario and its
 *                description, the protocol's role, settings, fault plan
 *                planned / fired, glossary); the violations counted per
 *                checker, each checker's first and widest told with its
 *                timeline (a table) and evidence; the plots (linked, not
 *                embedded: report.md must render where it is read alone, a
 *                GitHub job summary); every other stored violation; the
 *                command and seed that repeat the run
 *   report.html  the same, self-contained: styles inline, every plot
 *                embedded as a data:image/png;base64 URI, each timeline an
 *                inline SVG (no script; it references no other file to
 *                render; the SVG links of the plots are relative and
 *                optional)
 *   plots/       NAME.dat (data) and NAME.gp (gnuplot script) for each plot,
 *                NAME.png and NAME.svg when gnuplot ran, gnuplot.log (its
 *                output).  Plots: throughput (claimed jobs and completes
 *                per second, the run's phases shaded and labelled, above it
 *                a panel with one row and colour per fault kind and per
 *                failing checker), latency (claim and complete latency
 *                percentiles), latency_time (p50 / p99 per request type per
 *                interval), queue_depth (monitor samples: ready, inflight,
 *                expired, dead and oldest-ready age), idle_polls (each idle
 *                streak's rate with the bound bounded_idle_polling applies),
 *                recovery (histogram of fault -> recovery of the job, ms,
 *                with the recovery bound).
 *                A plot without data is left out and the report says why.
 *
 * gnuplot is looked up in PATH; without it every file but the images is
 * still written, the report says plots were skipped, and so does the note.
 */
#ifndef QC_REPORT_H
#define QC_REPORT_H

#include "../harness/err.h"
#include "../harness/history.h"
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes junit.xml, report.md, report.html and plots/ (PNG+SVG) into dir
 * from dir/results.json and the ledger files.
 *
 * dir:      the run folder (must exist and hold results.json); borrowed.
 * ledgers:  nledgers paths of ledger files (JSON Lines, harness/history.h),
 *           merged by seq as `qchaos audit` does; borrowed.  With
 *           nledgers == 0 (ledgers may then be NULL) dir/ledger.jsonl is
 *           used.
 * allow_inconclusive: when non-zero, INCONCLUSIVE checkers become
 *           <skipped/> in junit.xml instead of failures (the verdict in
 *           report.md/html and the exit code are not changed).
 * note:     may be NULL; else receives (size notelen, always NUL-terminated
 *           when notelen > 0) a one-line remark for the CLI, no trailing
 *           newline, e.g. "plots skipped: gnuplot not found"; "" when there
 *           is nothing to remark (every plot with data was drawn).
 *
 * Returns 0, or a negative QC_E* code with err set (err may be NULL):
 *   QC_EIO     a file could not be read or written (the message names it),
 *              or a ledger could not be opened;
 *   QC_EINVAL  dir is longer than QC__DIR_MAX, or results.json is
 *              malformed (not JSON, not an object, no
 *              "checkers" array, a checker without a "name" or "verdict"
 *              string), or a ledger line is bad ("file:line: ...");
 *   QC_ENOMEM  out of memory.
 * A gnuplot that is missing or fails is not an error (see note).
 *
 * Not thread-safe with respect to other processes writing dir.  It may
 * fork/exec gnuplot (one child at a time, waited for, at most 60 s each).
 * Time: linear in the ledger plus sorting the request latencies; a
 * 200,000-event ledger takes well under a few seconds. */
int qc_report_write(const char *dir, const char *const *ledgers, int nledgers,
                    int allow_inconclusive, char *note, size_t notelen, qc_err *err);

/* What the run tested, as results.json "tested" (docs/results.md): the
 * scenario's description; the protocol (file, role "protocol" or "mutant"
 * when its header has "-- expect:", its description, expect and base);
 * workload, lease and bounds (recovery_bound_ms = lease_ms +
 * reaper_interval_ms + recovery_slack_ms, the recovery checker's bound);
 * fault_settings (stall_factor, restart_delay_ms, poison_mode, the nemesis's
 * terminate_every_ms, restart_at_s, pause_at_s, pause_ms); fault_plan, an
 * array of {kind, spec (the scenario's words: "10 jobs", "1% of jobs",
 * "every 500 ms"), planned (jobs the seeded plan gave the kind, from the
 * ledger's "fault plan" notes; null for server-side kinds), fired (fault
 * events of the kind in the ledger: a poison job fires once per attempt)}.
 *
 * h: the history (borrowed); ledger: the path of its first ledger, whose
 * header line is read (NULL or unreadable: every header value is null).
 * Returns a new reference (the caller owns it), or NULL when out of
 * memory.  Thread-safe (reads only).  Values missing from an older
 * ledger's header are JSON null, never 0. */
json_t *qc_report_tested_json(const qc_history *h, const char *ledger);

/* ---- shared by the files of reports/ only (not for other modules) ---- */

/* The glossary entry of a checker: what it means (returned, static), and
 * what counts as one opportunity (*opportunity, static; may be NULL).  NULL
 * for a name this version does not know. */
const char *qc__glossary(const char *checker, const char **opportunity);

struct qc__results;

/* The "What was tested" section (scenario and its description, the
 * protocol's role, settings, fault plan planned / fired, glossary) from
 * r->tested, in Markdown or HTML; write errors show in ferror(f). */
void qc__tested_md(FILE *f, const struct qc__results *r);
void qc__tested_html(FILE *f, const struct qc__results *r);

/* The "Library behaviour" section (library.c): for a run of a queue
 * library through an adapter with the witness on, what the library did
 * when a stalled worker completed after its lease, when a worker was
 * killed after its claim (time to give the job back, server clock ms) and
 * when the queue was empty (polls per second per worker), with the witness
 * rows that show it.  Writes nothing for other runs.  Not thread-safe
 * (writes f). */
void qc__library_md(FILE *f, const qc_history *h);
void qc__library_html(FILE *f, const qc_history *h);
/* One sentence on the protocol: a mutant is called a known-broken
 * protocol with its header's description and expected checkers; any other
 * protocol gets its description and where it was tested. */
void qc__protocol_line(const struct qc__results *r, char *buf, size_t n);

/* One violation of results.json; strings borrowed from the parsed JSON. */
typedef struct qc__rviolation {
    int has_job;
    int64_t job;
    size_t nseq;
    int64_t *seq;            /* owned by the qc__results; may be NULL */
    const char *explanation; /* "" when absent */
    size_t nwitness;         /* "witness": seqs of the witness rows that confirm it */
    int64_t wseq[8];
} qc__rviolation;

/* One checker of results.json. */
typedef struct qc__rcheck {
    const char *name;      /* never NULL */
    const char *verdict;   /* "PASS", "FAIL", ... as written; never NULL */
    const char *summary;   /* "" when absent */
    long opportunities;    /* -1 when absent */
    long violations_total; /* -1 when absent */
    int judged;            /* 0: the scenario does not judge it ("judged": false) */
    double time_s;         /* "time_s": seconds the checker took; -1 absent */
    double first_violation_s; /* "first_violation_s"; -1 absent or null */
    size_t nv;
    qc__rviolation *v; /* stored violations (owned) */
} qc__rcheck;

/* results.json, parsed.  Every string is borrowed from root (owned). */
typedef struct qc__results {
    void *root;          /* json_t *, owned */
    const char *verdict; /* overall; "" when absent */
    int exit_code;       /* -1 when absent */
    int has_seed;
    uint64_t seed;
    const char *scenario, *scenario_file, *protocol, *engine; /* "" absent */
    const char *tested; /* where the protocol was run (its "-- tested:"), "" absent */
    const char *version, *server; /* versions.qchaos / versions.server */
    const char *command;          /* NULL when absent (audit) */
    /* target: where the run went (results.json "target"); "" absent */
    const char *target_host, *target_port, *target_dbname, *target_user, *target_how;
    double elapsed_s;             /* metrics.elapsed_s, -1 when absent */
    long workers, jobs;           /* metrics, -1 when absent */
    size_t nc;
    qc__rcheck *c; /* owned */
    json_t *tested_json; /* results.json "tested" (borrowed from root), or one
                       qc_report_write built from the ledger (owned when
                       tested_owned); NULL when neither */
    int tested_owned;
    int mutant;     /* tested.protocol.role is "mutant" */
} qc__results;

/* Reads path into r (caller-allocated).  Errors: QC_EIO (cannot read),
 * QC_EINVAL (malformed, naming the field), QC_ENOMEM.  On error r is left
 * empty; qc__results_fini is always safe. */
int qc__results_load(qc__results *r, const char *path, qc_err *err);
void qc__results_fini(qc__results *r);

/* What plots.c produced, read by the markdown/html writers. */
#define QC__MAX_PLOTS 8
#define QC__MAX_NOTES 8

typedef struct qc__plot {
    char name[32];  /* file stem under plots/: "throughput" */
    char title[96]; /* caption in plain words */
    int drawn;      /* 1 when NAME.png and NAME.svg were written */
} qc__plot;

typedef struct qc__plots {
    int gnuplot_found;  /* gnuplot was found in PATH */
    int gnuplot_failed; /* it ran and failed for at least one plot */
    size_t n;
    qc__plot p[QC__MAX_PLOTS];
    size_t nnotes;
    char notes[QC__MAX_NOTES][192]; /* one line each: "recovery-time histogram
                                       skipped: no fault with a job" */
    /* Figures for the report text (counts; ms). */
    long claim_n, complete_n;             /* paired requests measured */
    double claim_pct[5], complete_pct[5]; /* p50 p90 p99 p99.9 max */
    long faults, recovered;               /* faults the recovery checker judges / with a measured recovery time */
    double recovery_p50, recovery_max;    /* ms; -1 when nothing recovered */
    double bin_ms;                        /* time-series bin width */
} qc__plots;

/* Writes plots/NAME.dat and NAME.gp into dir/plots (created) from h and
 * the violations of r, removes stale NAME.png / NAME.svg, and fills *out
 * (plots with data, figures, notes); drawing (gnuplot_found, drawn) is left
 * to qc_report_write.  Errors: QC_EIO (a data or script file cannot be
 * written), QC_ENOMEM. */
int qc__plots_make(const char *dir, const qc_history *h, const qc__results *r, qc__plots *out,
                   qc_err *err);

/* Writes dir/junit.xml.  Errors: QC_EIO naming the file. */
int qc__junit_write(const char *dir, const qc__results *r, const qc_history *h,
                    int allow_inconclusive, qc_err *err);

/* Writes dir/report.md and dir/report.html.  Errors: QC_EIO naming the
 * file, QC_ENOMEM. */
int qc__markdown_write(const char *dir, const qc__results *r, const qc_history *h,
                       const qc__plots *p, qc_err *err);
int qc__html_write(const char *dir, const qc__results *r, const qc_history *h, const qc__plots *p,
                   qc_err *err);

/* The event with sequence number seq (the first, when several ledgers
 * repeat it), or NULL.  O(log n). */
const qc_event *qc__report_find_seq(const qc_history *h, int64_t seq);

/* The server's clock at the run's start (client t = 0), epoch ms: the
 * median over answered requests carrying a server "now" of now minus the
 * midpoint of the request's invoke and answer (client ms).  Server times
 * are shown as "server +X ms" = time - origin: an estimate of where on the
 * run's clock the server read its time, exact in the differences between
 * two server times (the same origin is subtracted).  QC_NO_TIME when no
 * request carries a server time.  O(n) expected (qc__select_kth). */
double qc__report_server_origin(const qc_history *h);

/* The k-th smallest of a[0..n) (k < n; a holds no NaN): the value a[k]
 * would hold were a sorted; reorders a in place.  Hoare's selection with
 * median-of-three pivots, O(n) expected.  No allocation; not thread-safe
 * on one array. */
double qc__select_kth(double *a, size_t n, size_t k);

/* Copies a checker's explanation s into buf (size n, NUL-terminated) with
 * every raw server epoch in it (a number of 12 or more integer digits, as
 * in "server time 1796137582472") shown relative to origin as "+X ms"
 * ("server +X ms" after "server time"); with origin QC_NO_TIME the text
 * is copied as it is.  The checkers write their own words; the report
 * never shows epoch milliseconds. */
void qc__report_explain(const char *s, double origin, char *buf, size_t n);

/* Tells ledger event seq in plain words into buf (size n, NUL-terminated),
 * e.g. "seq 12 at 1532.3 ms: worker 3 (incarnation 0)'s complete of job 17
 * with token 5b1e was acknowledged, 1 row(s) changed; server +1530 ms".
 * Client times are ms since the run started; server times are shown
 * relative to origin (qc__report_server_origin; QC_NO_TIME: as offsets from
 * the event's own server time only), never as raw epoch ms.  A seq missing
 * from the ledger says so. */
void qc__report_describe(const qc_history *h, double origin, int64_t seq, char *buf, size_t n);

/* The timeline of one violation (Jepsen's timeline.html): one lane per
 * actor that touched the violation's job (worker incarnations, the reaper,
 * the nemesis), each request a bar from its invoke to its answer coloured
 * by outcome (ok, fail, info, no answer), each lease a bar from its
 * claim's (or renew's) server time to its lease_until (server times moved
 * onto the run's clock by origin), effects and faults as marks, every
 * item labelled with its ledger seq; the seqs the violation cites are
 * outlined.  Times are ms since the run started.
 *
 * qc__timeline_svg writes an inline <svg> (escaped; no script) to f;
 * qc__timeline_md writes a Markdown table (seq, time, lane, event) of the
 * same items.  Both return 0, or -1 when the violation has no job and no
 * seq found in the ledger (nothing written).  At most
 * QC__TIMELINE_MAX_ITEMS items, the cited ones first. */
#define QC__TIMELINE_MAX_ITEMS 48
int qc__timeline_svg(FILE *f, const qc_history *h, double origin, const qc__rviolation *v);
int qc__timeline_md(FILE *f, const qc_history *h, double origin, const qc__rviolation *v);

/* Escapers: write s to f with & < > " ' escaped as XML/HTML entities
 * (control characters other than tab and newline become U+FFFD, which XML
 * 1.0 cannot carry); qc__md_escape backslash-escapes Markdown punctuation
 * and turns newlines into spaces.  Return 0 or -1 on a write error (ferror
 * is also set). */
int qc__xml_escape(FILE *f, const char *s);
int qc__md_escape(FILE *f, const char *s);

/* File writing with one cleanup path: opens DIR/NAME.tmp for writing. */
FILE *qc__report_open(const char *dir, const char *name, qc_err *err);
/* Closes f and renames DIR/NAME.tmp to DIR/NAME; on any earlier write
 * error (ferror) or close error removes the .tmp and returns QC_EIO naming
 * DIR/NAME.  f may be NULL (returns QC_EIO with err untouched). */
int qc__report_close(FILE *f, const char *dir, const char *name, qc_err *err);

/* Longest run folder name accepted (QC_EINVAL beyond), so every path the
 * writers build fits in a QC__PATH_MAX buffer. */
#define QC__DIR_MAX 2048
#define QC__PATH_MAX 4096

/* How many violations per checker the md/html reports tell in full (the
 * rest are counted; all stored ones are in junit.xml and results.json). */
#define QC__REPORT_MAX_TOLD 20

#endif
