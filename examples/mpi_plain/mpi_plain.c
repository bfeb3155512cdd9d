/* mpi_plain.c: an MPI program that knows nothing of stepprof (no stepprof
 * header, no profiler), profiled as it is through libstepprof_mpi.so. Each
 * rank runs a toy data-parallel loop: compute a gradient, average it with
 * MPI_Allreduce, and every third iteration broadcast rank 0's learning rate.
 * Run it with the wrapper preloaded and the zero-code variables set; a
 * program without steps stays in step 0, so STEPPROF_STEPS=0:1 records its
 * whole run, written at exit:
 *     mpirun -np 4 -x LD_PRELOAD=.../libstepprof_mpi.so -x STEPPROF_STEPS=0:1 \
 *            -x STEPPROF_RANKS=all -x STEPPROF_OUT=DIR ./mpi_plain
 * tests/examples/mpi_plain_check.py runs it with 4 ranks and checks the
 * traces. */
#include <mpi.h>

#include <stdio.h>

enum { N = 2048, ITERS = 6, BCAST_EVERY = 3 };

static void compute(float *grad, int rank, int iter)
{
    for (int i = 0; i < N; i++)
        grad[i] = (float)((rank + 1) * (iter + i % 5)) / N;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, world;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    static float grad[N];
    double lr = 0.1, sum = 0;
    for (int iter = 0; iter < ITERS; iter++) {
        compute(grad, rank, iter);
        MPI_Allreduce(MPI_IN_PLACE, grad, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        if (iter % BCAST_EVERY == BCAST_EVERY - 1) {
            if (rank == 0) lr *= 0.5;
            MPI_Bcast(&lr, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        }
        sum += lr * grad[0] / world;
    }
    if (rank == 0) printf("mpi_plain: %d ranks, %d iterations, result %g\n", world, ITERS, sum);
    MPI_Finalize();
    return 0;
}
