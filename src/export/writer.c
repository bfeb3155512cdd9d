/* writer.c: a background thread that writes exports in submission order, so
 * that step() hands a finished span over and returns at once instead of
 * stalling the training loop for the seconds a big trace takes (torch writes
 * on the caller; semantics.md §3.3). A job holds a reference to its result,
 * so the profiler may move on to the next span meanwhile. */
#include "export.h"

#include <pthread.h>
#include <string.h>

typedef struct job {
    struct job *next;
    sp_result *result;
    char *path;
    sp_format format;
} job;

struct sp__writer {
    pthread_mutex_t lock;
    pthread_cond_t wake, idle;
    pthread_t thread;
    job *head, *tail;
    int busy, quit;
    sp_status first_error;
    char error_text[512];
    sp__writer_log_fn log;
    void *log_ctx;
};

static void run_job(sp__writer *w, job *j)
{
    sp_status s = sp__export(j->result, j->path, j->format);
    if (s != SP_OK) {
        if (w->log) w->log(w->log_ctx, sp_last_error());
        pthread_mutex_lock(&w->lock);
        if (w->first_error == SP_OK) {
            w->first_error = s;
            strncpy(w->error_text, sp_last_error(), sizeof w->error_text - 1);
        }
        pthread_mutex_unlock(&w->lock);
    }
    sp_result_release(j->result);
    sp__free(j->path);
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
    w->log = log;
    w->log_ctx = log_ctx;
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
        pthread_cond_destroy(&w->idle);
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
        sp__free(w);
        return sp__fail(SP_ENOMEM, "cannot start the trace writer thread");
    }
    *out = w;
    return SP_OK;
}

sp_status sp__writer_submit(sp__writer *w, const sp_result *r, const char *path, sp_format format)
{
    job *j = sp__alloc(sizeof *j);
    char *copy = sp__strdup(path);
    if (!j || !copy) {
        sp__free(j);
        sp__free(copy);
        return sp__fail(SP_ENOMEM, "out of memory queueing %s", path);
    }
    j->result = sp_result_retain(r);
    j->path = copy;
    j->format = format;
    pthread_mutex_lock(&w->lock);
    if (w->tail)
        w->tail->next = j;
    else
        w->head = j;
    w->tail = j;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    return SP_OK;
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
    pthread_cond_destroy(&w->idle);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    sp__free(w);
}
