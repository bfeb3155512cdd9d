/* loader.h: the data loader of the train_mlp demo, a stand-in for paddle's
 * DataLoader. It streams batches of synthetic samples (Gaussian clusters,
 * label = cluster id) and spends deliberate CPU time per sample, as real
 * decoding and augmentation would. With workers == 0 every batch is made on
 * the caller's thread when asked for; with workers > 0 that many threads
 * prefetch batches into a bounded ring, so the caller only waits when they
 * fall behind. Either way batch i has the same contents, because each batch
 * is a pure function of (seed, i), and batches arrive in order. */
#ifndef TRAIN_MLP_LOADER_H
#define TRAIN_MLP_LOADER_H

#include <stdint.h>

typedef struct loader loader;

typedef struct loader_config {
    int workers;       /* prefetching threads; 0 loads inline */
    int batch;         /* samples per batch */
    int dim;           /* features per sample */
    int classes;       /* clusters, and so labels 0..classes-1 */
    float separation;  /* std of the cluster centres; the noise std is 1 */
    int decode_passes; /* jitter+renormalise rounds per sample: the CPU cost */
    int read_ms;       /* a wait per batch, as a read from disk or network would
                          cost: time without CPU, so it does not depend on
                          free cores */
    uint64_t seed;
} loader_config;

/* A batch: x is n x dim row-major, y holds n labels. Borrowed from the
 * loader: valid until the next loader_next or loader_destroy. */
typedef struct batch {
    const float *x;
    const int *y;
    int n;
} batch;

/* Creates a loader and starts its workers. Returns 0, or an errno value
 * (ENOMEM, or what pthread_create returned); *out is then NULL. */
int loader_create(const loader_config *cfg, loader **out);

/* Gives the next batch, waiting for a worker if needed. Hands the previous
 * batch's memory back to the loader. Threads: one consumer thread. */
void loader_next(loader *l, batch *out);

/* Stops and joins the workers (each finishes the batch it is making) and
 * frees everything. NULL does nothing. */
void loader_destroy(loader *l);

#endif /* TRAIN_MLP_LOADER_H */
