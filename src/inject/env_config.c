/* env_config.c: reads the STEPPROF_* variables into an sp__env_config and
 * refuses malformed values with one line that names the variable, its value
 * and what was expected, so that a mistyped setting never profiles something
 * else than what was asked, nor writes files in an unexpected place. It has
 * no side effect but sp__env_config_make_dir's mkdir; env.c acts on it. */
#define _GNU_SOURCE
#include "export.h"
#include "inject.h"
#include "sys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A decimal integer in [0, 2^40) spanning exactly [s, s + n). */
static int parse_count(const char *s, size_t n, int64_t *out)
{
    if (n == 0 || n > 12) return -1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v >= ((int64_t)1 << 40)) return -1;
    *out = v;
    return 0;
}

int sp__env_parse_steps(const char *text, int64_t *first, int64_t *end)
{
    if (!text) return -1;
    const char *colon = strchr(text, ':');
    if (!colon) return -1;
    int64_t a, b;
    if (parse_count(text, (size_t)(colon - text), &a) != 0) return -1;
    if (parse_count(colon + 1, strlen(colon + 1), &b) != 0) return -1;
    if (b <= a) return -1;
    *first = a;
    *end = b;
    return 0;
}

int sp__env_rank_selected(const char *ranks, long rank)
{
    if (strcmp(ranks, "all") == 0) return 1;
    int selected = 0;
    const char *p = ranks;
    for (;;) {
        size_t n = strcspn(p, ",");
        int64_t r;
        if (parse_count(p, n, &r) != 0) return -1;
        if (r == rank) selected = 1;
        if (p[n] == '\0') return selected;
        p += n + 1;
    }
}

/* The launchers' rank variables, in the order the first set one wins. */
static long read_rank(const char *(*get)(const char *), int *set)
{
    static const char *const vars[] = {"RANK", "LOCAL_RANK", "PADDLE_TRAINER_ID",
                                       "OMPI_COMM_WORLD_RANK", "PMI_RANK", NULL};
    for (const char *const *v = vars; *v; v++) {
        const char *s = get(*v);
        int64_t r;
        if (s && *s && parse_count(s, strlen(s), &r) == 0) {
            *set = 1;
            return (long)r;
        }
    }
    *set = 0;
    return 0;
}

static int parse_targets(const char *s, unsigned *out)
{
    unsigned bits = 0;
    for (const char *p = s;;) {
        size_t n = strcspn(p, ",");
        if (n == 3 && strncmp(p, "cpu", 3) == 0)
            bits |= SP_TARGET_CPU;
        else if (n == 3 && strncmp(p, "gpu", 3) == 0)
            bits |= SP_TARGET_GPU;
        else
            return -1;
        if (p[n] == '\0') break;
        p += n + 1;
    }
    *out = bits | SP_TARGET_CPU; /* the host is always recorded */
    return 0;
}

static int parse_format(const char *s, sp_format *out)
{
    if (strcmp(s, "json") == 0)
        *out = SP_FORMAT_JSON;
    else if (strcmp(s, "json.gz") == 0)
        *out = SP_FORMAT_JSON_GZ;
    else if (strcmp(s, "pb") == 0)
        *out = SP_FORMAT_PROTOBUF;
    else
        return -1;
    return 0;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

/* The seed integration's mistake was a file prefix given as the directory:
 * a path that exists as something else, or whose last part is a trace file
 * name, is refused rather than turned into a directory of that name. */
static int check_out_dir(const char *dir, char *why, size_t size)
{
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        snprintf(why, size, "STEPPROF_OUT='%s' is a file, not a directory (traces are written "
                            "into a directory, one file per recorded span)", dir);
        return -1;
    }
    static const char *const tails[] = {".json", ".json.gz", ".gz", ".pb", ".txt", NULL};
    for (const char *const *t = tails; *t; t++) {
        if (ends_with(dir, *t)) {
            snprintf(why, size, "STEPPROF_OUT='%s' names a file; it must name a directory (the "
                                "file names are chosen inside it)", dir);
            return -1;
        }
    }
    return 0;
}

int sp__env_config_read(const char *(*get)(const char *), sp__env_config *cfg, char *why,
                        size_t size)
{
    memset(cfg, 0, sizeof *cfg);
    why[0] = '\0';
    const char *steps = get("STEPPROF_STEPS");
    if (!steps || !*steps) return 0;
    if (sp__env_parse_steps(steps, &cfg->first_step, &cfg->end_step) != 0) {
        snprintf(why, size, "STEPPROF_STEPS='%s' is not START:END with 0 <= START < END (for "
                            "example 10:20, steps 10 to 19)", steps);
        return -1;
    }
    const char *out = get("STEPPROF_OUT");
    if (!out || !*out) out = "./profiler_log/";
    if (strlen(out) >= sizeof cfg->out_dir) {
        snprintf(why, size, "STEPPROF_OUT is longer than %zu bytes", sizeof cfg->out_dir - 1);
        return -1;
    }
    if (check_out_dir(out, why, size) != 0) return -1;
    memcpy(cfg->out_dir, out, strlen(out) + 1);
    const char *targets = get("STEPPROF_TARGETS");
    if (targets && *targets && parse_targets(targets, &cfg->targets) != 0) {
        snprintf(why, size, "STEPPROF_TARGETS='%s' is not a comma-separated list of cpu and gpu",
                 targets);
        return -1;
    }
    const char *format = get("STEPPROF_FORMAT");
    cfg->format = SP_FORMAT_JSON;
    if (format && *format && parse_format(format, &cfg->format) != 0) {
        snprintf(why, size, "STEPPROF_FORMAT='%s' is not json, json.gz or pb", format);
        return -1;
    }
    const char *summary = get("STEPPROF_SUMMARY"), *quiet = get("STEPPROF_QUIET");
    cfg->summary = summary && strcmp(summary, "1") == 0;
    cfg->quiet = quiet && strcmp(quiet, "1") == 0;
    cfg->rank = read_rank(get, &cfg->rank_set);
    const char *ranks = get("STEPPROF_RANKS");
    if (!ranks || !*ranks) ranks = "0";
    cfg->selected = sp__env_rank_selected(ranks, cfg->rank);
    if (cfg->selected < 0) {
        snprintf(why, size, "STEPPROF_RANKS='%s' is not 'all' or a comma-separated list of ranks "
                            "(for example 0 or 0,3)", ranks);
        return -1;
    }
    return 1;
}

int sp__env_config_make_dir(const sp__env_config *cfg, char *why, size_t size)
{
    if (sp__mkdirs(cfg->out_dir) != SP_OK) {
        snprintf(why, size, "cannot create the output directory: %s", sp_last_error());
        return -1;
    }
    if (access(cfg->out_dir, W_OK | X_OK) != 0) {
        snprintf(why, size, "cannot write into the output directory '%s': %s", cfg->out_dir,
                 strerror(errno));
        return -1;
    }
    return 0;
}
