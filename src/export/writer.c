/* writer.c: a background thread that runs jobs in submission order, so that
 * step() hands a finished span over and returns at once instead of stalling
 * the training loop for the time a big span takes to collect and to write
 * (torch does both on the caller; semantics.md §3.3). An export job holds a
 * reference to its result, so the profiler may move on to the next span
 * meanwhile. */
#include "export.h"

#include <pthread.h>
#include <string.h>

typedef struct job {
    struct job *next;
    sp__writer_job_fn run;
    void (*done)(void *ctx);
    void *ctx;
} job;

struct sp__writer {
    pthread_mutex_t lock;
    pthread_cond_t wake, idle, progress;
    pthread_t thread;
    job *head, *tail;
    int busy, quit;
    uint64_t issued, finished; /* tickets: the last given, the last done */
    sp_status first_error;
    char error_text[512];
    sp__writer_log_fn log;
    void *log_ctx;
};

typedef struct export_job {
    sp_result *result;
    char *path;
    sp_format format;
} export_job;

static sp_status run_export(void *ctx)
{
    export_job *e = ctx;
    return sp__export(e->result, e->path, e->format);
}

static void free_export(void *ctx)
{
    export_job *e = ctx;
    sp_result_release(e->result);
    sp__free(e->path);
    sp__free(e);
}

static void run_job(sp__writer *w, job *j)
{
    sp_status s = j->run(j->ctx);
    if (s != SP_OK) {
        if (w->log) w->log(w->log_ctx, sp_last_error());
        pthread_mutex_lock(&w->lock);
        if (w->first_error == SP_OK) {
            w->first_error = s;
            strncpy(w->error_text, sp_last_error(), sizeof w->error_text - 1);
        }
        pthread_mutex_unlock(&w->lock);
    }
    if (j->done) j->done(j->ctx);
    sp__free(j);
}

static void *writer_main(void *arg)
{
    sp__writer *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->head && !w->quit) pthread_cond_wait(&w->wake, &w->lock);
        if (!w->head) break;
        job *j = w->head;
        w->head = j->next;
        if (!w->head) w->tail = NULL;
        w->busy = 1;
        pthread_mutex_unlock(&w->lock);
        run_job(w, j);
        pthread_mutex_lock(&w->lock);
        w->busy = 0;
        w->finished++;
        pthread_cond_broadcast(&w->progress);
        if (!w->head) pthread_cond_broadcast(&w->idle);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

sp_status sp__writer_create(sp__writer **out, sp__writer_log_fn log, void *log_ctx)
{
    sp__writer *w = sp__alloc(sizeof *w);
    if (!w) return sp__fail(SP_ENOMEM, "out of memory starting the trace writer");
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->idle, NULL);
    pthread_cond_init(&w->progress, NULL);
    w->log = log;
    w->log_ctx = log_ctx;
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
        pthread_cond_destroy(&w->progress);
        pthread_cond_destroy(&w->idle);
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
        sp__free(w);
        return sp__fail(SP_ENOMEM, "cannot start the trace writer thread");
    }
    *out = w;
    return SP_OK;
}

sp_status sp__writer_call(sp__writer *w, sp__writer_job_fn run, void (*done)(void *ctx), void *ctx,
                          uint64_t *ticket)
{
    job *j = sp__alloc(sizeof *j);
    if (!j) return sp__fail(SP_ENOMEM, "out of memory queueing work for the writer thread");
    j->run = run;
    j->done = done;
    j->ctx = ctx;
    pthread_mutex_lock(&w->lock);
    if (w->tail)
        w->tail->next = j;
    else
        w->head = j;
    w->tail = j;
    uint64_t t = ++w->issued;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    if (ticket) *ticket = t;
    return SP_OK;
}

sp_status sp__writer_submit(sp__writer *w, const sp_result *r, const char *path, sp_format format)
{
    export_job *e = sp__alloc(sizeof *e);
    char *copy = sp__strdup(path);
    if (!e || !copy) {
        sp__free(e);
        sp__free(copy);
        return sp__fail(SP_ENOMEM, "out of memory queueing %s", path);
    }
    e->result = sp_result_retain(r);
    e->path = copy;
    e->format = format;
    sp_status s = sp__writer_call(w, run_export, free_export, e, NULL);
    if (s != SP_OK) {
        free_export(e);
        return sp__fail(s, "out of memory queueing %s", path);
    }
    return SP_OK;
}

int sp__writer_reached(sp__writer *w, uint64_t t, int wait)
{
    pthread_mutex_lock(&w->lock);
    while (wait && w->finished < t) pthread_cond_wait(&w->progress, &w->lock);
    int reached = w->finished >= t;
    pthread_mutex_unlock(&w->lock);
    return reached;
}

sp_status sp__writer_wait(sp__writer *w)
{
    if (!w) return SP_OK;
    pthread_mutex_lock(&w->lock);
    while (w->head || w->busy) pthread_cond_wait(&w->idle, &w->lock);
    sp_status s = w->first_error;
    char text[512];
    memcpy(text, w->error_text, sizeof text);
    w->first_error = SP_OK;
    w->error_text[0] = '\0';
    pthread_mutex_unlock(&w->lock);
    if (s != SP_OK) return sp__fail(s, "%s", text);
    return SP_OK;
}

void sp__writer_destroy(sp__writer *w)
{
    if (!w) return;
    pthread_mutex_lock(&w->lock);
    w->quit = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->progress);
    pthread_cond_destroy(&w->idle);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    sp__free(w);
}
