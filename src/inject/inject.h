/* inject.h: zero-code profiling, the part inside the library. The STEPPROF_*
 * environment is read into an sp__env_config (env_config.c) once, at load;
 * env.c makes the process's profiler from it and hands it over to the first
 * profiler the program creates; exit_signals.c stops a span still recording
 * when SIGTERM or SIGINT ends the process. Only src/inject/ and
 * sp_profiler_create (src/api/profiler.c) include it. */
#ifndef SP_INJECT_H
#define SP_INJECT_H

#include <stepprof/stepprof.h>

#include <stddef.h>
#include <stdint.h>

/* What the STEPPROF_* variables ask for. Filled by sp__env_config_read. */
typedef struct sp__env_config {
    int64_t first_step, end_step; /* steps [first_step, end_step) */
    char out_dir[4096];           /* a directory, never a file prefix */
    unsigned targets;             /* SP_TARGET_* bits; 0: the library's default */
    sp_format format;             /* JSON, JSON_GZ or PROTOBUF */
    int summary;                  /* 0: tables into a .txt beside the trace; 1: also stdout */
    int quiet;                    /* no informational lines (errors still printed) */
    long rank;                    /* this process's rank (0 without a launcher) */
    int rank_set;                 /* a launcher's rank variable was set */
    int selected;                 /* STEPPROF_RANKS includes rank */
} sp__env_config;

/* Reads the environment through get (getenv in the library; tests pass
 * their own). Returns 1 if STEPPROF_STEPS asks for profiling and every
 * variable is valid, 0 if STEPPROF_STEPS is unset or empty (nothing is
 * asked; *why is ""), -1 if a value is malformed: *why (size bytes) then
 * holds one line naming the variable, its value and what was expected. The
 * output directory is only checked here (a path that exists and is not a
 * directory, or whose last part names a trace file, is refused), not
 * created: sp__env_config_make_dir does that. */
int sp__env_config_read(const char *(*get)(const char *name), sp__env_config *cfg, char *why,
                        size_t size);

/* Parses "START:END" (0 <= START < END, decimal). Returns 0 on success. */
int sp__env_parse_steps(const char *text, int64_t *first, int64_t *end);

/* Whether ranks ("all", or a comma-separated list of ranks) includes rank;
 * -1 if the list is malformed. */
int sp__env_rank_selected(const char *ranks, long rank);

/* Creates cfg->out_dir (mkdir -p) and checks it can be written. Returns 0,
 * or -1 with one line in why. */
int sp__env_config_make_dir(const sp__env_config *cfg, char *why, size_t size);

/* Called by sp_profiler_create with the program's options. When the
 * environment made the process's profiler and no program profiler has taken
 * its place yet, that profiler is stopped and freed (a span it was
 * recording is written), the program's profiler takes the environment's
 * schedule, targets and trace handler (written into *adopted, the
 * program's own handler is released), one line says so, and 1 is returned.
 * Otherwise 0 and nothing changes. */
int sp__env_adopt(const sp_options *opts, sp_options *adopted);

/* The environment's trace handler (paddle's file names in STEPPROF_OUT, the
 * STEPPROF_FORMAT, the summary tables beside each trace, the end line), for
 * a profiler that takes the environment's place without passing through
 * sp__env_adopt: a Python program's own profiler, made after the injected
 * one took the adoption (python/stepprof/_autorun.py). SP_ESTATE when the
 * variables did not start profiling in this process. */
sp_status sp__env_handler(sp_trace_handler *out);

/* Whether sp_profiler_create runs for the environment's own profiler (its
 * schedule is STEPPROF_STEPS's). */
int sp__env_creating(void);

/* Drops the environment's profiler, if it made one that no program profiler
 * has taken yet: what it recorded is dropped, nothing is written or said,
 * and sp_step and sp__env_adopt find none from then on. For a process that
 * the variables select but that must not be profiled: the Python package
 * calls it in a distributed launcher's own process and in multiprocessing's
 * children (python/stepprof/_autorun.py). Threads: not concurrently with
 * sp_step. */
void sp__env_discard(void);

/* Installs the SIGTERM and SIGINT hook of exit_signals.c (once). */
void sp__exit_signals_install(void);

#endif
