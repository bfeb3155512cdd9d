/* cli.h: the stepprof command-line tool (main.c dispatches, commands.c holds
 * summary / convert / info, diff.c the before/after comparison and the
 * regression gate, diagnose.c the verdicts, report.c the HTML report, merge.c
 * the merge of a job's ranks). The tool
 * uses only the public API (stepprof.h), as any program could.
 * Exit codes: 0 success, 1 the input (or the output file) is bad, 2 wrong
 * usage. Errors go to stderr as "stepprof: FILE: problem". */
#ifndef SP_CLI_H
#define SP_CLI_H

#include <stepprof/stepprof.h>

enum { CLI_OK = 0, CLI_BAD_INPUT = 1, CLI_USAGE = 2 };

/* Each command gets the arguments after its name. */
int cli_summary(int argc, char **argv);
/* summary of several files: the cross-rank summary (argv as summary's). */
int cli_rank_summary(int argc, char **argv, const char *time_unit);
int cli_convert(int argc, char **argv);
int cli_info(int argc, char **argv);
int cli_diff(int argc, char **argv);
int cli_diagnose(int argc, char **argv);
int cli_report(int argc, char **argv);
int cli_merge(int argc, char **argv);
/* Runs a program with profiling switched on (run.c); returns its exit status. */
int cli_run(int argc, char **argv);

/* Loads path (any format), with progress on a terminal. On failure prints
 * the error and returns CLI_BAD_INPUT. */
int cli_load(const char *path, sp_result **out);
/* cli_load for sp_result_load_ranks: a merged trace gives one result per
 * rank (release with sp_results_release). */
int cli_load_ranks(const char *path, sp_result ***out, size_t *count);
/* The progress bar of a long load on a terminal (progress.c). */
typedef struct cli_progress {
    const char *name; /* the file's base name */
    int shown;        /* a line is on the terminal */
    int64_t start_ns, last_ns;
} cli_progress;
/* Whether a load of a file of file_bytes (regular: a regular file, whose
 * size is known) shows a bar: only when stderr is a terminal, and then for
 * files over 16 MB, for any file with STEPPROF_PROGRESS=1, and never with
 * STEPPROF_PROGRESS=0. */
int cli_progress_wanted(uint64_t file_bytes, int regular);
void cli_progress_begin(cli_progress *p, const char *path);
/* An sp_progress_fn; user is the cli_progress. */
void cli_progress_show(uint64_t done, uint64_t total, void *user);
/* Clears the line, if one was drawn. */
void cli_progress_end(cli_progress *p);

/* Prints "stepprof: <message>" and the command's usage hint; returns CLI_USAGE. */
int cli_usage_error(const char *command, const char *fmt, ...);
/* Whether arg is -h or --help. */
int cli_is_help(const char *arg);
/* Whether argv[*i] is the option name, which takes a value, given as
 * "NAME VALUE" (two arguments; *i is then advanced past VALUE) or as
 * "NAME=VALUE". On a match *value is VALUE, or NULL when NAME is the last
 * argument (see cli_missing_value). */
int cli_option(int argc, char **argv, int *i, const char *name, const char **value);
/* A figure option's value (--tokens-per-sample and the like): a number
 * above 0 and at most max into *out, else a usage error of command. */
int cli_parse_figure(const char *command, const char *option, const char *v, double max, double *out);
/* The usage error for an option given no value; returns CLI_USAGE. */
int cli_missing_value(const char *command, const char *name, const char *what);
/* The usage error for an argument that starts with '-' and is none of the
 * command's options: flags (NULL-terminated) are the options that take no
 * value, so that "--flag=x" is told apart from a misspelt option. */
int cli_unknown_option(const char *command, const char *arg, const char *const *flags);

#endif
