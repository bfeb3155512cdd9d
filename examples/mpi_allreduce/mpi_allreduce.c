/* mpi_allreduce.c: an MPI program profiled with stepprof's C API. Each rank
 * runs a toy data-parallel loop (compute a gradient, average it with
 * MPI_Allreduce) and marks each MPI_Allreduce as a Communication range with
 * sp_profiler_add_comm_info: the operation, the process group, the bytes
 * this rank sends and the collective's sequence number, which is the same
 * on every rank for the same call. Each rank writes its own trace,
 * DIR/rank<R>.json (the rank, world size, host and job come from Open
 * MPI's environment). Run:
 *     mpirun -np 4 ./mpi_allreduce DIR
 * tests/examples/mpi_allreduce.sh runs it with 4 ranks and checks the
 * traces. */
#include <mpi.h>
#include <stepprof/stepprof.h>

#include <stdio.h>
#include <string.h>

enum { N = 4096, STEPS = 6 };

static void compute(float *grad, int rank, int step)
{
    sp_range_begin(SP_EVENT_FORWARD, "compute");
    for (int i = 0; i < N; i++)
        grad[i] = (float)((rank + 1) * (step + i % 7)) / N;
    sp_range_end();
}

/* The averaging collective, as a Communication range that carries what it
 * did. seq counts this rank's collectives on MPI_COMM_WORLD. */
static void average(sp_profiler *prof, float *grad, int world, int64_t *seq)
{
    sp_range_begin(SP_EVENT_COMMUNICATION, "MPI_Allreduce");
    sp_comm_info c = {
        0, 0, "allreduce", 9, "MPI_COMM_WORLD", 14, world, (int64_t)(N * sizeof *grad), (*seq)++};
    sp_profiler_add_comm_info(prof, &c, 1);
    MPI_Allreduce(MPI_IN_PLACE, grad, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    sp_range_end();
    for (int i = 0; i < N; i++)
        grad[i] /= (float)world;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, world;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    const char *dir = argc > 1 ? argv[1] : ".";
    sp_options o;
    sp_options_init(&o);
    sp_profiler *prof;
    if (sp_profiler_create(&o, &prof) != SP_OK) {
        fprintf(stderr, "rank %d: %s\n", rank, sp_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    sp_profiler_set_dist_backend(prof, "mpi");
    sp_profiler_start(prof);
    static float grad[N];
    int64_t seq = 0;
    for (int step = 0; step < STEPS; step++) {
        compute(grad, rank, step);
        average(prof, grad, world, &seq);
        sp_profiler_step(prof, 1);
    }
    int rc = 0;
    if (sp_profiler_stop(prof) != SP_OK) rc = 1;
    char path[1024];
    snprintf(path, sizeof path, "%s/rank%d.json", dir, rank);
    if (rc == 0 && sp_profiler_export(prof, path, SP_FORMAT_JSON) != SP_OK) rc = 1;
    if (rc) fprintf(stderr, "rank %d: %s\n", rank, sp_last_error());
    sp_profiler_destroy(prof);
    MPI_Finalize();
    return rc;
}
