/* span_jobs.c: a span's collection as a job of its profiler's writer thread
 * (semantics.md §3.3), so that the step() that ends a span returns at once
 * and the next span records meanwhile. The records stay in the recording
 * buffers until the job drains them: the drain stops at the span's stop
 * tick, so what the next span records is left for it, and the memory cap
 * covers both spans' records by construction. Every other change to the
 * buffers (a discard, a trim) queues behind the collection on the same
 * thread, or waits for it. Exports of a span still being collected queue
 * behind it too, and find its result when they run. */
#include "api.h"

#include <stdatomic.h>
#include <stdio.h>

struct sp__span_job {
    _Atomic int refs;
    sp__span_end end;
    sp_result *result; /* set by the writer thread; NULL if the span was lost */
    char error[512];   /* why it was lost */
    uint64_t stop_ticks; /* the hold on the buffers (sp__record_hold) */
    uint64_t ticket;
    struct sp__span_job *next;
};

static void job_release(void *ctx)
{
    sp__span_job *j = ctx;
    if (atomic_fetch_sub(&j->refs, 1) != 1) return;
    sp__span_end_free(&j->end);
    sp_result_release(j->result);
    sp__free(j);
}

void (*sp__span_collect_hook)(void);

static sp_status run_collect(void *ctx)
{
    sp__span_job *j = ctx;
    if (sp__span_collect_hook) sp__span_collect_hook();
    sp_status s = sp__collect_span_build(&j->end, &j->result);
    sp__record_unhold(j->stop_ticks);
    if (s == SP_OK) return SP_OK;
    j->result = NULL;
    snprintf(j->error, sizeof j->error, "%s", sp_last_error());
    return sp__fail(s, "span lost: %s", j->error);
}

sp_status sp__span_queue_collect(sp__span_queue *q, sp__writer *w, sp__span_end *e,
                                 uint64_t *ticket)
{
    sp__span_job *j = sp__alloc(sizeof *j);
    if (!j) return sp__fail(SP_ENOMEM, "out of memory queueing the span's collection");
    atomic_init(&j->refs, 2); /* the queue's and the writer's */
    j->end = *e;
    j->stop_ticks = e->stop.ticks;
    sp__record_hold(j->stop_ticks);
    sp_status s = sp__writer_call(w, run_collect, job_release, j, &j->ticket);
    if (s != SP_OK) {
        sp__record_unhold(j->stop_ticks);
        sp__free(j); /* e still owns its parts */
        return s;
    }
    if (q->tail)
        q->tail->next = j;
    else
        q->head = j;
    q->tail = j;
    *ticket = j->ticket;
    return SP_OK;
}

sp_result *sp__span_queue_adopt(sp__span_queue *q, sp__writer *w, int wait)
{
    sp_result *newest = NULL;
    while (q->head && sp__writer_reached(w, q->head->ticket, wait)) {
        sp__span_job *j = q->head;
        q->head = j->next;
        if (!q->head) q->tail = NULL;
        if (j->result) {
            sp_result_release(newest);
            newest = sp_result_retain(j->result);
        }
        job_release(j);
    }
    return newest;
}

int sp__span_queue_empty(const sp__span_queue *q) { return q->head == NULL; }

size_t sp__span_queue_length(const sp__span_queue *q)
{
    size_t n = 0;
    for (const sp__span_job *j = q->head; j; j = j->next) n++;
    return n;
}

uint64_t sp__span_queue_oldest_ticket(const sp__span_queue *q) { return q->head ? q->head->ticket : 0; }

void sp__span_queue_fini(sp__span_queue *q)
{
    while (q->head) {
        sp__span_job *j = q->head;
        q->head = j->next;
        job_release(j);
    }
    q->tail = NULL;
}

/* An export of a span queued for collection: it runs after the collection,
 * on the same thread, and writes what that gave. */
typedef struct job_export {
    sp__span_job *job;
    char *path;
    sp_format format;
} job_export;

static sp_status run_job_export(void *ctx)
{
    job_export *x = ctx;
    if (!x->job->result)
        return sp__fail(SP_ENOMEM, "%s not written: the span was lost (%s)", x->path,
                        x->job->error);
    return sp__export(x->job->result, x->path, x->format);
}

static void free_job_export(void *ctx)
{
    job_export *x = ctx;
    job_release(x->job);
    sp__free(x->path);
    sp__free(x);
}

sp_status sp__span_queue_export(sp__span_queue *q, sp__writer *w, const char *path,
                                sp_format format)
{
    job_export *x = sp__alloc(sizeof *x);
    char *copy = sp__strdup(path);
    if (!x || !copy) {
        sp__free(x);
        sp__free(copy);
        return sp__fail(SP_ENOMEM, "out of memory queueing %s", path);
    }
    x->job = q->tail;
    x->path = copy;
    x->format = format;
    atomic_fetch_add(&x->job->refs, 1);
    sp_status s = sp__writer_call(w, run_job_export, free_job_export, x, NULL);
    if (s != SP_OK) free_job_export(x);
    return s;
}

/* A discard of the records written up to `ticks`, then a trim of the pooled
 * chunks if asked, behind the collections queued before it. */
typedef struct records_job {
    uint64_t ticks;
    int trim;
    sp__count_marks counts; /* the drops up to the discard, not the next span's */
    int has_counts;
} records_job;

static sp_status run_records(void *ctx)
{
    records_job *r = ctx;
    sp__record_drain_marked(r->ticks, r->has_counts ? &r->counts : NULL, NULL, NULL);
    if (r->trim) sp__record_trim();
    return SP_OK;
}

static void free_records(void *ctx)
{
    records_job *r = ctx;
    sp__count_marks_free(&r->counts);
    sp__free(r);
}

sp_status sp__records_discard_queued(sp__writer *w, uint64_t ticks, int trim, uint64_t *ticket)
{
    records_job *r = sp__alloc(sizeof *r);
    if (!r) return sp__fail(SP_ENOMEM, "out of memory queueing a discard");
    r->ticks = ticks;
    r->trim = trim;
    r->has_counts = sp__record_mark_counts(&r->counts) == 0;
    sp_status s = sp__writer_call(w, run_records, free_records, r, ticket);
    if (s != SP_OK) free_records(r);
    return s;
}
