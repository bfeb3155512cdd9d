/* loader.c: the train_mlp data loader (see loader.h). Samples are drawn
 * around fixed cluster centres and then "decoded": a few rounds of jitter
 * and renormalisation whose only purpose is to cost CPU time per sample, the
 * way image decoding and augmentation do in a real input pipeline.
 *
 * With workers, batches live in a ring of `depth` slots; batch i always goes
 * to slot i % depth. A worker may claim batch i only once batch i - depth has
 * been handed back (i < free_below + depth), so a slot is never written while
 * the consumer reads it, and the consumer takes batches strictly in order,
 * waiting until slot next % depth holds batch next. All bookkeeping is under
 * one mutex; the sample data itself is written outside it and published by
 * the slot's `ready` field, stored (release) under the mutex.
 *
 * The consumer enters the kernel only when it must: a batch that is
 * already there is read through `ready` (acquire), and slots are handed
 * back a quarter of the ring at a time, and skipped when a worker holds the
 * mutex (a later call hands them all back). On a busy machine every lock
 * wait or wakeup is a point where the consumer can lose its core for a time
 * slice, and a consumer queued behind a preempted worker waits for that
 * worker's next slice although its batch was ready: such waits would show
 * as data loading time that the loader did not cause. */
#include "loader.h"

#include "rng.h"

#include <stepprof/stepprof.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Each worker keeps two batches ahead, like paddle's prefetch_factor = 2. */
enum { PREFETCH_PER_WORKER = 2 };

/* Jitter added per decode pass, small against the unit noise so that the
 * passes cost time without blurring the classes. */
#define DECODE_JITTER 0.05f

typedef struct slot {
    float *x;
    int *y;
    _Atomic int64_t ready; /* the batch the slot holds once complete; -1 before */
} slot;

typedef struct worker {
    struct loader *l;
    pthread_t thread;
    int id;
} worker;

struct loader {
    loader_config cfg;
    float *centres; /* classes x dim; read-only once created */
    int depth;      /* slots in the ring; 1 when loading inline */
    slot *slots;
    worker *workers;
    int started; /* workers whose thread was created, joined by destroy */
    bool sync_ready;
    pthread_mutex_t mu;
    pthread_cond_t can_fill; /* a slot was handed back, or stop */
    pthread_cond_t can_take; /* a batch became ready */
    int64_t claimed;    /* next batch index a worker will make */
    int64_t free_below; /* every batch below this was handed back */
    int64_t next;       /* next batch the consumer takes */
    bool stop;
};

/* Gives x zero mean and unit variance, as an input pipeline normalises. */
static void standardise(float *x, int dim)
{
    float mean = 0.0f, var = 0.0f;
    for (int d = 0; d < dim; d++) mean += x[d];
    mean /= (float)dim;
    for (int d = 0; d < dim; d++) var += (x[d] - mean) * (x[d] - mean);
    float inv = 1.0f / sqrtf(var / (float)dim + 1e-6f);
    for (int d = 0; d < dim; d++) x[d] = (x[d] - mean) * inv;
}

/* Draws one sample of class `label` and "decodes" it. */
static void decode_sample(const loader *l, float *x, int label, rng *r)
{
    int dim = l->cfg.dim;
    const float *c = l->centres + (size_t)label * dim;
    for (int d = 0; d < dim; d++) x[d] = c[d] + rng_gauss(r);
    standardise(x, dim);
    for (int p = 0; p < l->cfg.decode_passes; p++) {
        for (int d = 0; d < dim; d++) x[d] += DECODE_JITTER * rng_gauss(r);
        standardise(x, dim);
    }
}

/* Makes batch `index` into s. The scope (rather than a begin/end pair) keeps
 * a worker's range balanced when recording starts or stops mid-batch. */
static void make_batch(const loader *l, slot *s, int64_t index)
{
    SP_SCOPE(SP_EVENT_PYTHON_USER_DEFINED, "load_batch");
    rng r = rng_stream(l->cfg.seed, (uint64_t)index);
    for (int i = 0; i < l->cfg.batch; i++) {
        s->y[i] = (int)(rng_next(&r) % (uint64_t)l->cfg.classes);
        decode_sample(l, s->x + (size_t)i * l->cfg.dim, s->y[i], &r);
    }
    if (l->cfg.read_ms > 0) {
        struct timespec left = {l->cfg.read_ms / 1000, (long)(l->cfg.read_ms % 1000) * 1000000L};
        while (nanosleep(&left, &left) != 0 && errno == EINTR) {
        }
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    loader *l = w->l;
    /* Named before any range, so that the trace labels the loader threads. */
    char name[16];
    snprintf(name, sizeof name, "load_worker_%d", w->id % 100);
    pthread_setname_np(pthread_self(), name);
    /* The consumer wakes a worker each time it hands a slot back. Linux tends
     * to run a woken thread on the waker's CPU, so a normal worker would
     * preempt the training thread for a whole batch while another core sits
     * idle. SCHED_BATCH wakeups never preempt, which leaves the training
     * thread its core, as dedicated loader cores would. Best effort: a
     * refusal only makes the demo noisier. */
    struct sched_param param = {0};
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
    for (;;) {
        pthread_mutex_lock(&l->mu);
        while (!l->stop && l->claimed >= l->free_below + l->depth)
            pthread_cond_wait(&l->can_fill, &l->mu);
        if (l->stop) break;
        int64_t index = l->claimed++;
        pthread_mutex_unlock(&l->mu);

        slot *s = &l->slots[index % l->depth];
        make_batch(l, s, index);

        pthread_mutex_lock(&l->mu);
        atomic_store_explicit(&s->ready, index, memory_order_release);
        pthread_cond_signal(&l->can_take);
        pthread_mutex_unlock(&l->mu);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

/* Frees what loader_create allocated; the threads are already joined. */
static void free_loader(loader *l)
{
    if (l->sync_ready) {
        pthread_cond_destroy(&l->can_take);
        pthread_cond_destroy(&l->can_fill);
        pthread_mutex_destroy(&l->mu);
    }
    for (int i = 0; l->slots && i < l->depth; i++) {
        free(l->slots[i].x);
        free(l->slots[i].y);
    }
    free(l->slots);
    free(l->workers);
    free(l->centres);
    free(l);
}

/* Allocates the centres and the ring; returns 0 or ENOMEM. */
static int alloc_buffers(loader *l)
{
    const loader_config *c = &l->cfg;
    l->centres = malloc(sizeof(float) * (size_t)c->classes * (size_t)c->dim);
    l->slots = calloc((size_t)l->depth, sizeof *l->slots);
    /* One spare entry so that calloc never sees 0 (which may return NULL). */
    l->workers = calloc((size_t)c->workers + 1, sizeof *l->workers);
    if (!l->centres || !l->slots || !l->workers) return ENOMEM;
    for (int i = 0; i < l->depth; i++) {
        l->slots[i].x = malloc(sizeof(float) * (size_t)c->batch * (size_t)c->dim);
        l->slots[i].y = malloc(sizeof(int) * (size_t)c->batch);
        atomic_init(&l->slots[i].ready, -1);
        if (!l->slots[i].x || !l->slots[i].y) return ENOMEM;
    }
    /* Batch i draws from stream i; the centres take the last stream, which
     * no batch index reaches. */
    rng r = rng_stream(c->seed, UINT64_MAX);
    for (size_t i = 0; i < (size_t)c->classes * (size_t)c->dim; i++)
        l->centres[i] = c->separation * rng_gauss(&r);
    return 0;
}

static int init_sync(loader *l)
{
    int err = pthread_mutex_init(&l->mu, NULL);
    if (err) return err;
    if ((err = pthread_cond_init(&l->can_fill, NULL)) != 0) goto fail_mu;
    if ((err = pthread_cond_init(&l->can_take, NULL)) != 0) goto fail_fill;
    l->sync_ready = true;
    return 0;
fail_fill:
    pthread_cond_destroy(&l->can_fill);
fail_mu:
    pthread_mutex_destroy(&l->mu);
    return err;
}

int loader_create(const loader_config *cfg, loader **out)
{
    *out = NULL;
    loader *l = calloc(1, sizeof *l);
    if (!l) return ENOMEM;
    l->cfg = *cfg;
    l->depth = cfg->workers > 0 ? cfg->workers * PREFETCH_PER_WORKER : 1;
    int err = alloc_buffers(l);
    if (!err) err = init_sync(l);
    for (int i = 0; !err && i < cfg->workers; i++) {
        l->workers[i] = (worker){.l = l, .id = i};
        err = pthread_create(&l->workers[i].thread, NULL, worker_main, &l->workers[i]);
        if (!err) l->started++;
    }
    if (err) {
        loader_destroy(l);
        return err;
    }
    *out = l;
    return 0;
}

/* Hands back every batch below next (the consumer is done with them) and
 * wakes one worker per slot freed: a skipped hand-back frees several at
 * once, and one worker alone would refill them one 'read' after another.
 * Called with the mutex held. */
static void hand_back(loader *l)
{
    for (int64_t i = l->free_below; i < l->next; i++)
        pthread_cond_signal(&l->can_fill);
    l->free_below = l->next;
}

void loader_next(loader *l, batch *out)
{
    slot *s = &l->slots[l->next % l->depth];
    if (l->cfg.workers == 0) {
        make_batch(l, s, l->next);
    } else {
        int64_t quarter = l->depth >= 4 ? l->depth / 4 : 1;
        if (l->next - l->free_below >= quarter && pthread_mutex_trylock(&l->mu) == 0) {
            hand_back(l);
            pthread_mutex_unlock(&l->mu);
        }
        if (atomic_load_explicit(&s->ready, memory_order_acquire) != l->next) {
            pthread_mutex_lock(&l->mu);
            hand_back(l);
            while (atomic_load_explicit(&s->ready, memory_order_acquire) != l->next)
                pthread_cond_wait(&l->can_take, &l->mu);
            pthread_mutex_unlock(&l->mu);
        }
    }
    l->next++;
    out->x = s->x;
    out->y = s->y;
    out->n = l->cfg.batch;
}

void loader_destroy(loader *l)
{
    if (!l) return;
    if (l->started > 0) {
        pthread_mutex_lock(&l->mu);
        l->stop = true;
        pthread_cond_broadcast(&l->can_fill);
        pthread_mutex_unlock(&l->mu);
        for (int i = 0; i < l->started; i++) pthread_join(l->workers[i].thread, NULL);
    }
    free_loader(l);
}
