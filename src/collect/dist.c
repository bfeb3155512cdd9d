/* dist.c: where a span's rank metadata comes from. The collect stage fills
 * it into the result's meta once per span (sp__dist_meta_fill), from the
 * launcher's environment and the host, so that a result carries its rank,
 * world size, host and job wherever and whenever it is written; the
 * exporters and loaders only copy it. */
#include "collect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first of names set to a decimal integer in [0, 2^30), or -1. */
static long env_number(const char *const *names)
{
    for (; *names; names++) {
        const char *v = getenv(*names);
        char *end;
        if (!v || !*v) continue;
        long n = strtol(v, &end, 10);
        if (*end == '\0' && n >= 0 && n < (1l << 30)) return n;
    }
    return -1;
}

/* The process's rank and world size as launchers give them: torchrun and
 * torch.distributed (RANK, WORLD_SIZE), Open MPI (OMPI_COMM_WORLD_*), MPICH
 * and Slurm's PMI (PMI_*), paddle.distributed.launch (PADDLE_TRAINER_ID,
 * PADDLE_TRAINERS_NUM); LOCAL_RANK / LOCAL_WORLD_SIZE only where no global
 * one is set (a single-node launcher). Values that are not plain integers are
 * skipped. A world size that cannot hold the rank becomes rank + 1. Returns 1
 * if a rank variable was set, 0 for the default rank 0 of 1. */
int sp__dist_info(long *rank, long *world_size)
{
    static const char *const rank_vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                            "PADDLE_TRAINER_ID", "LOCAL_RANK", NULL};
    static const char *const size_vars[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                            "PADDLE_TRAINERS_NUM", "LOCAL_WORLD_SIZE", NULL};
    long r = env_number(rank_vars), w = env_number(size_vars);
    *rank = r < 0 ? 0 : r;
    *world_size = w < 1 ? 1 : w;
    if (*world_size <= *rank) *world_size = *rank + 1;
    return r >= 0;
}

int sp__dist_backend_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n >= SP__DIST_BACKEND_MAX) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == ':' || c == ','))
            return 0;
    }
    return 1;
}

/* Copies s into dst (size bytes) when it fits whole; a cut job id or host
 * name would compare equal to the wrong one, so a text too long is left
 * out. Quotes, backslashes and control bytes are kept: the writers escape. */
static void copy_whole(char *dst, size_t size, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    dst[0] = '\0';
    if (n > 0 && n < size) memcpy(dst, s, n + 1);
}

/* The launcher's job identity (trace-format.md, distributedInfo): the
 * first of TORCHELASTIC_RUN_ID, OMPI_MCA_ess_base_jobid and SLURM_JOB_ID,
 * else MASTER_ADDR:MASTER_PORT, else paddle.distributed.launch's
 * PADDLE_MASTER (its rendezvous address, "host:port"), else "". */
static void job_id(char *out, size_t size)
{
    static const char *const vars[] = {"TORCHELASTIC_RUN_ID", "OMPI_MCA_ess_base_jobid",
                                       "SLURM_JOB_ID", NULL};
    for (const char *const *v = vars; *v; v++) {
        copy_whole(out, size, getenv(*v));
        if (out[0]) return;
    }
    const char *addr = getenv("MASTER_ADDR"), *port = getenv("MASTER_PORT");
    out[0] = '\0';
    if (!addr || !*addr || !port || !*port) {
        copy_whole(out, size, getenv("PADDLE_MASTER"));
        return;
    }
    char both[SP__DIST_JOB_MAX + 1];
    int n = snprintf(both, sizeof both, "%s:%s", addr, port);
    if (n > 0 && (size_t)n < size) memcpy(out, both, (size_t)n + 1);
}

void sp__dist_meta_fill(sp__span_meta *m, const char *named_backend)
{
    static const char *const local_rank_vars[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                                  "PADDLE_LOCAL_RANK", NULL};
    static const char *const local_size_vars[] = {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
                                                  "PADDLE_LOCAL_SIZE", NULL};
    static const char *const backend_vars[] = {"STEPPROF_DIST_BACKEND", "PADDLE_DISTRI_BACKEND",
                                               NULL};
    long rank, world_size;
    sp__dist_info(&rank, &world_size);
    m->rank = rank;
    m->world_size = world_size;
    long lr = env_number(local_rank_vars), lw = env_number(local_size_vars);
    m->local_rank = lr < 0 ? rank : lr;
    m->local_world_size = lw < 1 ? world_size : lw;
    if (m->local_world_size <= m->local_rank) m->local_world_size = m->local_rank + 1;
    char host[SP__DIST_HOST_MAX + 1] = "";
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    host[sizeof host - 1] = '\0';
    copy_whole(m->hostname, sizeof m->hostname, host);
    job_id(m->job, sizeof m->job);
    m->dist_backend[0] = '\0';
    if (sp__dist_backend_ok(named_backend)) {
        copy_whole(m->dist_backend, sizeof m->dist_backend, named_backend);
        return;
    }
    for (const char *const *v = backend_vars; *v; v++) {
        if (!sp__dist_backend_ok(getenv(*v))) continue;
        copy_whole(m->dist_backend, sizeof m->dist_backend, getenv(*v));
        return;
    }
}

void sp__dist_meta_default(sp__span_meta *m)
{
    if (m->world_size < 1) m->world_size = 1;
    if (m->rank < 0) m->rank = 0;
    if (m->world_size <= m->rank) m->world_size = m->rank + 1;
    if (m->local_world_size < 1) {
        m->local_rank = m->rank;
        m->local_world_size = m->world_size;
    }
    if (m->local_rank < 0) m->local_rank = 0;
    if (m->local_world_size <= m->local_rank) m->local_world_size = m->local_rank + 1;
}

/* The result names the backend when the program (sp_profiler_set_dist_backend:
 * stepprof's Python package hands over torch.distributed's backend) or the
 * launcher (STEPPROF_DIST_BACKEND, PADDLE_DISTRI_BACKEND) did. torchrun and
 * MPI launchers do not say, so the backend is then the one torch and paddle
 * pick by default for the devices the span traced: "nccl" with GPUs, "gloo"
 * without (trace-format.md section 2, item 3). */
const char *sp__dist_backend(const sp_result *r)
{
    if (r->meta.world_size < 2) return NULL;
    if (r->meta.dist_backend[0]) return r->meta.dist_backend;
    return r->device_prop_count > 0 ? "nccl" : "gloo";
}

void sp_result_dist_info(const sp_result *r, sp_dist_info *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    out->world_size = out->local_world_size = 1;
    out->hostname = out->backend = out->job = "";
    if (!r) return;
    const char *backend = sp__dist_backend(r);
    out->rank = r->meta.rank;
    out->world_size = r->meta.world_size;
    out->local_rank = r->meta.local_rank;
    out->local_world_size = r->meta.local_world_size;
    out->hostname = r->meta.hostname;
    out->backend = backend ? backend : "";
    out->job = r->meta.job;
}
