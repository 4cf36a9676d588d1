/*
 * cli.h - pieces of the command line that tests call: the shell quoting of
 * an argument and the command that repeats a run.  Nothing here prints.
 */
#ifndef QC_CLI_H
#define QC_CLI_H

#include <getopt.h>
#include <stdint.h>

/* Returns arg quoted for a POSIX shell, malloc'd (the caller frees): as is
 * when it is not empty and holds only [A-Za-z0-9_./=:,@+%-], else in single
 * quotes with each ' written '\'' (the empty string is '').  NULL when out
 * of memory. */
char *qc_cli_quote(const char *arg);

/* The shell command that repeats one run, malloc'd (the caller frees), NULL
 * when out of memory.
 *   prog      how to call qchaos ("qchaos", "./qchaos"), written first
 *   argc/argv the subcommand and its arguments as the user typed them
 *             (argv[0] = "run"), in their order, before getopt_long
 *             reordered them
 *   opts      the subcommand's getopt_long table: which options take a value
 *             and what an abbreviation (--jo for --jobs) stands for
 *   seed/out  this run's seed and output folder
 * The arguments keep the user's order.  --seed and --out (any spelling
 * getopt_long accepts: --seed N, --seed=N, --se N) get this run's value in
 * place; when absent, "--seed SEED --out OUT" is appended.  --repeat and its
 * value are dropped.  The value of --dsn and --worker-dsn goes through
 * qc_redact_conninfo (the password becomes ***).  Every word is quoted with
 * qc_cli_quote, so a shell splits the line back into the same words. */
char *qc_cli_repeat_line(const char *prog, int argc, char *const *argv, const struct option *opts,
                         uint64_t seed, const char *out);

#endif
