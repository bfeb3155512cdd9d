/* test_env_config.c: the STEPPROF_* variables as env_config.c reads them,
 * through a fake environment: what each valid value asks for, and that each
 * malformed value is refused with one line naming the variable. */
#include "check.h"
#include "inject.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The fake environment: NAME=VALUE strings, NULL-terminated. */
static const char *const *fake;

static const char *fake_get(const char *name)
{
    size_t n = strlen(name);
    for (const char *const *v = fake; v && *v; v++)
        if (strncmp(*v, name, n) == 0 && (*v)[n] == '=') return *v + n + 1;
    return NULL;
}

static int read_with(const char *const *vars, sp__env_config *cfg, char *why)
{
    fake = vars;
    return sp__env_config_read(fake_get, cfg, why, 1024);
}

static void test_env_config_unset_asks_nothing(void)
{
    sp__env_config cfg;
    char why[1024];
    const char *const none[] = {"STEPPROF_OUT=/tmp", NULL};
    CHECK_EQ(0, read_with(none, &cfg, why));
    CHECK_EQ(0, (int)strlen(why));
    const char *const empty[] = {"STEPPROF_STEPS=", NULL};
    CHECK_EQ(0, read_with(empty, &cfg, why));
}

static void test_env_config_defaults(void)
{
    sp__env_config cfg;
    char why[1024];
    const char *const vars[] = {"STEPPROF_STEPS=10:20", NULL};
    CHECK_EQ(1, read_with(vars, &cfg, why));
    CHECK_EQ(10, (int)cfg.first_step);
    CHECK_EQ(20, (int)cfg.end_step);
    CHECK(strcmp(cfg.out_dir, "./profiler_log/") == 0);
    CHECK_EQ(0, (int)cfg.targets);
    CHECK_EQ(SP_FORMAT_JSON, cfg.format);
    CHECK_EQ(0, (int)cfg.rank);
    CHECK_EQ(0, cfg.rank_set);
    CHECK_EQ(1, cfg.selected);
    CHECK_EQ(0, cfg.summary);
    CHECK_EQ(0, cfg.quiet);
}

static void test_env_config_every_variable(void)
{
    sp__env_config cfg;
    char why[1024];
    const char *const vars[] = {"STEPPROF_STEPS=0:3", "STEPPROF_OUT=/tmp/sp-out",
                                "STEPPROF_TARGETS=gpu", "STEPPROF_FORMAT=pb",
                                "STEPPROF_SUMMARY=1", "STEPPROF_QUIET=1",
                                "STEPPROF_RANKS=0,3", "LOCAL_RANK=3", NULL};
    CHECK_EQ(1, read_with(vars, &cfg, why));
    CHECK_EQ(0, (int)cfg.first_step);
    CHECK_EQ(3, (int)cfg.end_step);
    CHECK(strcmp(cfg.out_dir, "/tmp/sp-out") == 0);
    CHECK_EQ((int)(SP_TARGET_CPU | SP_TARGET_GPU), (int)cfg.targets);
    CHECK_EQ(SP_FORMAT_PROTOBUF, cfg.format);
    CHECK_EQ(1, cfg.summary);
    CHECK_EQ(1, cfg.quiet);
    CHECK_EQ(3, (int)cfg.rank);
    CHECK_EQ(1, cfg.rank_set);
    CHECK_EQ(1, cfg.selected);
    const char *const gz[] = {"STEPPROF_STEPS=1:2", "STEPPROF_FORMAT=json.gz",
                              "STEPPROF_TARGETS=cpu", NULL};
    CHECK_EQ(1, read_with(gz, &cfg, why));
    CHECK_EQ(SP_FORMAT_JSON_GZ, cfg.format);
    CHECK_EQ((int)SP_TARGET_CPU, (int)cfg.targets);
}

/* RANK wins over the local rank and the others; only rank 0 by default. */
static void test_env_config_ranks(void)
{
    sp__env_config cfg;
    char why[1024];
    const char *const rank1[] = {"STEPPROF_STEPS=1:2", "RANK=1", "LOCAL_RANK=0", NULL};
    CHECK_EQ(1, read_with(rank1, &cfg, why));
    CHECK_EQ(1, (int)cfg.rank);
    CHECK_EQ(0, cfg.selected);
    const char *const all[] = {"STEPPROF_STEPS=1:2", "PMI_RANK=7", "STEPPROF_RANKS=all", NULL};
    CHECK_EQ(1, read_with(all, &cfg, why));
    CHECK_EQ(7, (int)cfg.rank);
    CHECK_EQ(1, cfg.selected);
    const char *const paddle[] = {"STEPPROF_STEPS=1:2", "PADDLE_TRAINER_ID=2",
                                  "OMPI_COMM_WORLD_RANK=5", "STEPPROF_RANKS=2", NULL};
    CHECK_EQ(1, read_with(paddle, &cfg, why));
    CHECK_EQ(2, (int)cfg.rank);
    CHECK_EQ(1, cfg.selected);
    CHECK_EQ(1, sp__env_rank_selected("0,3", 3));
    CHECK_EQ(0, sp__env_rank_selected("0,3", 1));
    CHECK_EQ(-1, sp__env_rank_selected("0,,3", 1));
    CHECK_EQ(-1, sp__env_rank_selected("", 0));
}

/* Each malformed value: -1 and one line naming the variable and the value. */
static void expect_refused(const char *var, const char *value)
{
    char set[200];
    snprintf(set, sizeof set, "%s=%s", var, value);
    const char *const vars[] = {strcmp(var, "STEPPROF_STEPS") ? "STEPPROF_STEPS=1:2" : set, set,
                                NULL};
    sp__env_config cfg;
    char why[1024];
    CHECK_EQ(-1, read_with(vars, &cfg, why));
    CHECK(strstr(why, var) == why);
    CHECK(strstr(why, value) != NULL);
    CHECK(strchr(why, '\n') == NULL);
}

static void test_env_config_refuses_malformed_values(void)
{
    const char *const steps[] = {"10", "20:10", "5:5", "a:b", "10:20x", "-1:3", ":3", "3:",
                                 "1:2:3", " 1:2", "99999999999999:99999999999999"};
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
        expect_refused("STEPPROF_STEPS", steps[i]);
    expect_refused("STEPPROF_TARGETS", "xpu");
    expect_refused("STEPPROF_TARGETS", "cpu,");
    expect_refused("STEPPROF_FORMAT", "protobuf");
    expect_refused("STEPPROF_RANKS", "first");
    expect_refused("STEPPROF_RANKS", "0;3");
}

/* The seed integration's mistake: a file prefix or a file where the
 * directory goes. */
static void test_env_config_refuses_a_file_as_directory(void)
{
    expect_refused("STEPPROF_OUT", "./log/trace.json");
    expect_refused("STEPPROF_OUT", "run1.json.gz");
    char file[] = "/tmp/stepprof-envcfg-XXXXXX";
    int fd = mkstemp(file);
    CHECK(fd >= 0);
    if (fd < 0) return;
    close(fd);
    expect_refused("STEPPROF_OUT", file);
    unlink(file);
}

static void test_env_config_make_dir(void)
{
    char base[] = "/tmp/stepprof-envdir-XXXXXX";
    CHECK(mkdtemp(base) != NULL);
    sp__env_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char why[1024];
    snprintf(cfg.out_dir, sizeof cfg.out_dir, "%s/a/b/", base);
    CHECK_EQ(0, sp__env_config_make_dir(&cfg, why, sizeof why));
    /* Below a regular file: cannot be created, one line says so. */
    char file[300];
    snprintf(file, sizeof file, "%s/file", base);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    snprintf(cfg.out_dir, sizeof cfg.out_dir, "%s/file/sub", base);
    CHECK_EQ(-1, sp__env_config_make_dir(&cfg, why, sizeof why));
    CHECK(strstr(why, "cannot create the output directory") == why);
    CHECK(strchr(why, '\n') == NULL);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    CHECK_EQ(0, system(cmd));
}

int main(void)
{
    RUN_TEST(test_env_config_unset_asks_nothing);
    RUN_TEST(test_env_config_defaults);
    RUN_TEST(test_env_config_every_variable);
    RUN_TEST(test_env_config_ranks);
    RUN_TEST(test_env_config_refuses_malformed_values);
    RUN_TEST(test_env_config_refuses_a_file_as_directory);
    RUN_TEST(test_env_config_make_dir);
    return TEST_SUMMARY();
}
