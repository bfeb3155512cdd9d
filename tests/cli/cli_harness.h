/* cli_harness.h: runs the stepprof tool as a user would, in a scratch
 * directory, keeping what it printed: the CLI tests of one command each
 * share it. Call cli_harness_start first and cli_harness_end last. */
#ifndef SP_TESTS_CLI_HARNESS_H
#define SP_TESTS_CLI_HARNESS_H

#include "fixture.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static char cli_dir[] = "/tmp/sp_cli_XXXXXX";
static char out_text[1 << 16], err_text[1 << 14];

static inline void cli_harness_start(void) { CHECK(mkdtemp(cli_dir) != NULL); }

static inline void cli_harness_end(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", cli_dir);
    CHECK_EQ(0, system(cmd));
}

/* The contents of a file of the scratch directory ("" when absent). */
static inline void slurp(const char *name, char *buf, size_t size)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", cli_dir, name);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
}

/* Runs `stepprof ARGS` in the scratch directory; returns its exit status,
 * with its output in out_text and err_text. */
static inline int cli(const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd %s && %s %s >out 2>err", cli_dir, SP_CLI, args);
    int status = system(cmd);
    slurp("out", out_text, sizeof out_text);
    slurp("err", err_text, sizeof err_text);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Saves r (released) in the scratch directory: JSON, or else a .pb. */
static inline void save(sp_result *r, const char *name, sp_format format)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", cli_dir, name);
    if (format == SP_FORMAT_JSON)
        CHECK_EQ(SP_OK, sp_result_export(r, path, format));
    else
        CHECK_EQ(SP_OK, sp_result_export_protobuf(r, path));
    sp_result_release(r);
}

#endif
