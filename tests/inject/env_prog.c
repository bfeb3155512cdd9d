/* env_prog.c: a program that marks ranges and steps (sp_step) but creates
 * no profiler, run by test_env.c under STEPPROF_* variables. Linked with the
 * shared library, as a program gets it from its package.
 *   env_prog STEPS          runs STEPS steps, then returns from main
 *   env_prog STEPS wait     runs STEPS steps, prints "ready", then keeps
 *                           stepping until a signal ends it
 *   env_prog STEPS own      runs STEPS steps, then makes a profiler of its
 *                           own (recording steps [0, 1)) and runs 5 steps
 *   env_prog STEPS handler  as wait, with its own SIGTERM handler, which
 *                           ends the program with _exit(42) */
#define _POSIX_C_SOURCE 200809L
#include <stepprof/stepprof.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void own_handler(int sig)
{
    (void)sig;
    _exit(42);
}

static void one_step(void)
{
    sp_range_begin(SP_EVENT_FORWARD, "forward");
    sp_range_begin(SP_EVENT_USER_DEFINED, "inner");
    sp_range_end();
    sp_range_end();
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    int steps = atoi(argv[1]);
    const char *mode = argc > 2 ? argv[2] : "";
    for (int i = 0; i < steps; i++) {
        one_step();
        sp_step(1);
    }
    if (strcmp(mode, "handler") == 0) signal(SIGTERM, own_handler);
    if (strcmp(mode, "wait") == 0 || strcmp(mode, "handler") == 0) {
        printf("ready\n");
        fflush(stdout);
        struct timespec ms = {0, 1000000};
        for (;;) {
            one_step();
            sp_step(1);
            nanosleep(&ms, NULL);
        }
    }
    if (strcmp(mode, "own") == 0) {
        sp_options o;
        sp_options_init(&o);
        sp_scheduler_range(&o.scheduler, 0, 1);
        sp_profiler *p;
        if (sp_profiler_create(&o, &p) != SP_OK || sp_profiler_start(p) != SP_OK) return 3;
        for (int i = 0; i < 5; i++) {
            one_step();
            if (sp_profiler_step(p, 1) != SP_OK) return 4;
        }
        if (sp_profiler_stop(p) != SP_OK) return 5;
        sp_profiler_destroy(p);
    }
    return 0;
}
