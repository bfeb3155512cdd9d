/* test_dist.c: a span's rank metadata and collectives. The rank, world
 * size, local rank and size, host and job come from the launcher's
 * environment when the span is collected (not when it is written), and
 * collectives marked with sp_profiler_add_comm_info join their
 * Communication ranges; both survive JSON, .json.gz and .pb and read back
 * through sp_result_dist_info and the loaded result. */
#include "added_events.h"
#include "check.h"
#include "collect.h"
#include "stepprof/stepprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const VARS[] = {"RANK",
                                   "WORLD_SIZE",
                                   "OMPI_COMM_WORLD_RANK",
                                   "OMPI_COMM_WORLD_SIZE",
                                   "PMI_RANK",
                                   "PMI_SIZE",
                                   "LOCAL_RANK",
                                   "LOCAL_WORLD_SIZE",
                                   "OMPI_COMM_WORLD_LOCAL_RANK",
                                   "OMPI_COMM_WORLD_LOCAL_SIZE",
                                   "TORCHELASTIC_RUN_ID",
                                   "OMPI_MCA_ess_base_jobid",
                                   "SLURM_JOB_ID",
                                   "MASTER_ADDR",
                                   "MASTER_PORT",
                                   "STEPPROF_DIST_BACKEND",
                                   "PADDLE_DISTRI_BACKEND",
                                   "PADDLE_TRAINER_ID",
                                   "PADDLE_TRAINERS_NUM",
                                   "PADDLE_LOCAL_RANK",
                                   "PADDLE_LOCAL_SIZE",
                                   "PADDLE_MASTER"};

static void clear_env(void)
{
    for (size_t i = 0; i < sizeof VARS / sizeof *VARS; i++)
        unsetenv(VARS[i]);
}

static void set_env(const char *pairs)
{
    clear_env();
    char copy[512];
    snprintf(copy, sizeof copy, "%s", pairs);
    char *save = NULL;
    for (char *kv = strtok_r(copy, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) continue;
        *eq = '\0';
        setenv(kv, eq + 1, 1);
    }
}

static void check_meta(const char *env, long rank, long world, long lrank, long lworld,
                       const char *job)
{
    set_env(env);
    sp__span_meta m;
    memset(&m, 0, sizeof m);
    sp__dist_meta_fill(&m, NULL);
    CHECK_EQ(rank, m.rank);
    CHECK_EQ(world, m.world_size);
    CHECK_EQ(lrank, m.local_rank);
    CHECK_EQ(lworld, m.local_world_size);
    CHECK_STR_EQ(job, m.job);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    CHECK_STR_EQ(host, m.hostname);
    clear_env();
}

static void test_dist_meta_from_the_launcher(void)
{
    check_meta("", 0, 1, 0, 1, "");
    check_meta("RANK=5 WORLD_SIZE=8 LOCAL_RANK=1 LOCAL_WORLD_SIZE=4", 5, 8, 1, 4, "");
    check_meta("RANK=5 WORLD_SIZE=8", 5, 8, 5, 8, ""); /* no local variables: the world's */
    check_meta("OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK=1 "
               "OMPI_COMM_WORLD_LOCAL_SIZE=2 OMPI_MCA_ess_base_jobid=1234 SLURM_JOB_ID=99",
               3, 4, 1, 2, "1234");
    check_meta(
        "RANK=1 WORLD_SIZE=2 TORCHELASTIC_RUN_ID=none SLURM_JOB_ID=99 MASTER_ADDR=h MASTER_PORT=1",
        1, 2, 1, 2, "none");
    check_meta("RANK=1 WORLD_SIZE=2 SLURM_JOB_ID=99 MASTER_ADDR=h MASTER_PORT=1", 1, 2, 1, 2, "99");
    check_meta("RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500", 1, 2, 1, 2,
               "127.0.0.1:29500");
    check_meta("RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1", 1, 2, 1, 2, ""); /* half an address */
    check_meta("LOCAL_RANK=3 LOCAL_WORLD_SIZE=2", 3, 4, 3, 4, ""); /* a size too small grows */
    /* paddle.distributed.launch's variables, after the others. */
    check_meta("PADDLE_TRAINER_ID=1 PADDLE_TRAINERS_NUM=4 PADDLE_LOCAL_RANK=1 PADDLE_LOCAL_SIZE=2 "
               "PADDLE_MASTER=127.0.0.1:6170",
               1, 4, 1, 2, "127.0.0.1:6170");
    check_meta("RANK=2 WORLD_SIZE=8 PADDLE_TRAINER_ID=1 PADDLE_TRAINERS_NUM=4 MASTER_ADDR=a "
               "MASTER_PORT=1 PADDLE_MASTER=b:2",
               2, 8, 2, 8, "a:1");
}

static sp_profiler *make(void)
{
    sp_options o;
    sp_options_init(&o);
    return make_quiet(&o);
}

/* A span under rank 3 of 4 (local 1 of 2, job "job-7") holding an
 * "MPI_Allreduce" Communication range marked as allreduce #5 of group
 * "world", a "bcast" one whose record comes after a child range began, and
 * a Forward range given a record that must not stick to it. */
static sp_profiler *record_ranked(void)
{
    set_env("RANK=3 WORLD_SIZE=4 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 TORCHELASTIC_RUN_ID=job-7 "
            "STEPPROF_DIST_BACKEND=mpi");
    sp_profiler *p = make();
    CHECK_OK(sp_profiler_start(p));
    sp_range_begin(SP_EVENT_COMMUNICATION, "MPI_Allreduce");
    sp_comm_info c = {0, 0, "allreduce", 9, "world", 5, 4, 4096, 5};
    CHECK_OK(sp_profiler_add_comm_info(p, &c, 1));
    sp_range_end();
    sp_range_begin(SP_EVENT_COMMUNICATION, "MPI_Bcast");
    sp_range_begin(SP_EVENT_OPERATOR, "pack");
    sp_comm_info b = {0, 0, "broadcast", 9, "", 0, 0, -1, -1};
    CHECK_OK(sp_profiler_add_comm_info(p, &b, 1)); /* inside the child: the Communication range's */
    sp_range_end();
    sp_range_end();
    sp_range_begin(SP_EVENT_FORWARD, "forward");
    CHECK_OK(sp_profiler_add_comm_info(p, &c, 1)); /* no Communication range: dropped */
    sp_range_end();
    CHECK_OK(sp_profiler_stop(p));
    clear_env(); /* what the result says must not depend on the environment from here */
    return p;
}

/* The collective record of t attached to the range named name, or NULL. */
static const sp__comm *comm_of(const sp_result *r, const char *name)
{
    const sp__comm *found = NULL;
    for (size_t i = 0; i < r->thread_count; i++) {
        const sp__thread *t = &r->threads[i];
        for (size_t k = 0; k < t->comm_count; k++) {
            int32_t h = t->comms[k].host;
            if (h >= 0 && strcmp(sp__result_name(r, t->events[h].name), name) == 0) {
                CHECK(found == NULL); /* one record per range here */
                found = &t->comms[k];
            }
        }
    }
    return found;
}

static void check_result(const sp_result *r, const char *what)
{
    printf("  %s\n", what);
    sp_dist_info d;
    sp_result_dist_info(r, &d);
    CHECK_EQ(3, d.rank);
    CHECK_EQ(4, d.world_size);
    CHECK_EQ(1, d.local_rank);
    CHECK_EQ(2, d.local_world_size);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    CHECK_STR_EQ(host, d.hostname);
    CHECK_STR_EQ("mpi", d.backend);
    CHECK_STR_EQ("job-7", d.job);
    const sp__comm *a = comm_of(r, "MPI_Allreduce");
    CHECK(a != NULL);
    if (a) {
        CHECK_STR_EQ("allreduce", sp__result_name(r, a->collective));
        CHECK_STR_EQ("world", sp__result_name(r, a->group));
        CHECK_EQ(4, a->group_size);
        CHECK_EQ(4096, a->bytes);
        CHECK_EQ(5, a->seq);
    }
    const sp__comm *b = comm_of(r, "MPI_Bcast");
    CHECK(b != NULL);
    if (b) {
        CHECK_STR_EQ("broadcast", sp__result_name(r, b->collective));
        CHECK_STR_EQ("", sp__result_name(r, b->group));
        CHECK_EQ(-1, b->bytes);
        CHECK_EQ(-1, b->seq);
    }
    CHECK(comm_of(r, "forward") == NULL);
    CHECK(comm_of(r, "pack") == NULL);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *text = calloc(1, 1 << 20);
    if (text) fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    return text;
}

static void test_dist_result_carries_rank_and_collectives(void)
{
    sp_profiler *p = record_ranked();
    const sp_result *live = sp_profiler_result(p);
    CHECK(live != NULL);
    if (!live) return;
    check_result(live, "live");
    char dir[] = "/tmp/sp_test_dist_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    const char *suffixes[] = {"t.json", "t.json.gz", "t.pb"};
    for (size_t i = 0; i < 3; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, suffixes[i]);
        sp_format fmt = i == 2 ? SP_FORMAT_PROTOBUF : SP_FORMAT_AUTO;
        CHECK_OK(sp_result_export(live, path, fmt));
        if (i == 0) {
            char *text = slurp(path);
            CHECK(text != NULL);
            /* HTA's "rank":\s+(\d+) finds distributedInfo's rank first. */
            CHECK(text &&
                  strstr(text, "\"distributedInfo\":{\"backend\": \"mpi\", \"rank\": 3, "
                               "\"world_size\": 4, \"local_rank\": 1, \"local_world_size\": 2, "
                               "\"hostname\": "));
            CHECK(text && strstr(text, ", \"job\": \"job-7\"},\n"));
            CHECK(text && strstr(text, "\"Collective name\":\"allreduce\",\"Process Group Name\":"
                                       "\"world\",\"Group size\":4,\"bytes\":4096,\"seq\":5,"
                                       "\"Event Type\":\"Communication\""));
            free(text);
        }
        sp_result *back = NULL;
        CHECK_OK(sp_result_load(path, NULL, &back));
        if (back) check_result(back, suffixes[i]);
        sp_result_release(back);
        remove(path);
    }
    rmdir(dir);
    sp_profiler_destroy(p);
}

static void test_dist_comm_info_bad_arguments(void)
{
    sp_comm_info c = {0, 0, "allreduce", 9, "", 0, 0, -1, -1};
    CHECK_EQ(SP_EINVAL, sp_profiler_add_comm_info(NULL, &c, 1));
    sp_profiler *p = make();
    CHECK_EQ(SP_ESTATE, sp_profiler_add_comm_info(p, &c, 1)); /* no span yet */
    CHECK_OK(sp_profiler_start(p));
    CHECK_EQ(SP_EINVAL, sp_profiler_add_comm_info(p, NULL, 1));
    CHECK_OK(sp_profiler_add_comm_info(p, NULL, 0));
    sp_comm_info bad = c;
    bad.group = NULL;
    bad.group_len = 2;
    CHECK_EQ(SP_EINVAL, sp_profiler_add_comm_info(p, &bad, 1));
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
    /* A loaded file without the keys: a single process's defaults. */
    sp_dist_info d;
    sp_result_dist_info(NULL, &d);
    CHECK_EQ(0, d.rank);
    CHECK_EQ(1, d.world_size);
    CHECK_STR_EQ("", d.backend);
}

/* An older file's distributedInfo (rank and world size only): the local
 * rank and size are the world's, the host and job unknown. */
static void test_dist_older_json_defaults(void)
{
    char path[] = "/tmp/sp_test_dist_old_XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    if (fd < 0) return;
    const char text[] =
        "{\"distributedInfo\":{\"backend\": \"gloo\", \"rank\": 2, \"world_size\": 4},\n"
        "\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"a\","
        "\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2}]}\n";
    CHECK(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
    close(fd);
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    sp_dist_info d;
    sp_result_dist_info(r, &d);
    CHECK_EQ(2, d.rank);
    CHECK_EQ(4, d.world_size);
    CHECK_EQ(2, d.local_rank);
    CHECK_EQ(4, d.local_world_size);
    CHECK_STR_EQ("", d.hostname);
    CHECK_STR_EQ("", d.job);
    CHECK_STR_EQ("gloo", d.backend);
    sp_result_release(r);
    remove(path);
}

int main(void)
{
    RUN_TEST(test_dist_meta_from_the_launcher);
    RUN_TEST(test_dist_result_carries_rank_and_collectives);
    RUN_TEST(test_dist_comm_info_bad_arguments);
    RUN_TEST(test_dist_older_json_defaults);
    return TEST_SUMMARY();
}
