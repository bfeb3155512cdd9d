/* handlers.c: the ready-made on_trace_ready handlers. They name each span's
 * file the way the tools around it expect (paddle's export_chrome_tracing, or
 * torch's tensorboard_trace_handler, which the TensorBoard plugin parses),
 * create the directory, and queue the write on the profiler's writer thread.
 * Worker names are sanitized, so a name from the environment cannot climb out
 * of the directory. */
#define _GNU_SOURCE
#include "api.h"

#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef enum { STYLE_PADDLE, STYLE_TENSORBOARD } naming_style;

typedef struct handler_data {
    naming_style style;
    int gzip;
    sp_format format; /* of the file written: JSON, JSON_GZ or PROTOBUF */
    char *dir;
    char *worker; /* NULL until the first span: defaults are fixed then */
    int dir_ready;
} handler_data;

static void release_data(void *user)
{
    handler_data *d = user;
    if (!d) return;
    sp__free(d->dir);
    sp__free(d->worker);
    sp__free(d);
}

static char *sanitized(const char *name)
{
    char *s = sp__strdup(*name ? name : "_");
    if (!s) return NULL;
    for (char *c = s; *c; c++) {
        int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                 *c == '.' || *c == '-' || *c == '_';
        if (!ok) *c = '_';
    }
    if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0) s[0] = '_';
    return s;
}

/* The plugin reads a trailing ".<digits>" as a span number, so such a worker
 * name gets a '_' appended. */
static char *tensorboard_safe(char *worker)
{
    size_t n = strlen(worker), i = n;
    while (i > 0 && worker[i - 1] >= '0' && worker[i - 1] <= '9') i--;
    if (i == n || i == 0 || worker[i - 1] != '.') return worker;
    char *fixed = sp__alloc(n + 2);
    if (fixed) {
        memcpy(fixed, worker, n);
        fixed[n] = '_';
    }
    sp__free(worker);
    return fixed;
}

/* torch's default worker is "<host>_<pid>": the plugin's Distributed view
 * splits it at the last "_<digits>" into node and process. Under a launcher
 * (a rank variable set, sp__dist_info) the rank goes in between, zero-padded
 * to the width of the largest rank so the plugin's sorted worker list is in
 * rank order: "<host>_rank03_<pid>". Paddle's name stays paddle's. */
static char *default_worker(naming_style style)
{
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    char name[320];
    long rank, world_size;
    int ranked = sp__dist_info(&rank, &world_size);
    if (style == STYLE_PADDLE) {
        snprintf(name, sizeof name, "host_%spid_%d", host, (int)getpid());
    } else if (ranked) {
        int width = snprintf(NULL, 0, "%ld", world_size - 1);
        snprintf(name, sizeof name, "%s_rank%0*ld_%d", host, width, rank, (int)getpid());
    } else {
        snprintf(name, sizeof name, "%s_%d", host, (int)getpid());
    }
    return sanitized(name);
}

static int build_path(handler_data *d, char *path, size_t size)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    const char *sep = d->dir[strlen(d->dir) - 1] == '/' ? "" : "/";
    if (d->style == STYLE_TENSORBOARD) {
        long long ns = (long long)now.tv_sec * 1000000000ll + now.tv_nsec;
        return snprintf(path, size, "%s%s%s.%019lld.pt.trace.json%s", d->dir, sep, d->worker, ns,
                        d->gzip ? ".gz" : "");
    }
    struct tm tm;
    localtime_r(&now.tv_sec, &tm);
    char stamp[64];
    strftime(stamp, sizeof stamp, "%Y_%m_%d_%H_%M_%S", &tm);
    const char *ext = d->format == SP_FORMAT_PROTOBUF ? "pb" : d->gzip ? "json.gz" : "json";
    return snprintf(path, size, "%s%s%s_time_%s_%06ld.paddle_trace.%s", d->dir, sep, d->worker,
                    stamp, now.tv_nsec / 1000, ext);
}

static void on_ready(sp_profiler *prof, void *user)
{
    handler_data *d = user;
    if (!d->worker) d->worker = default_worker(d->style);
    if (d->worker && d->style == STYLE_TENSORBOARD) d->worker = tensorboard_safe(d->worker);
    if (!d->worker) {
        sp__profiler_export_failed(prof, SP_ENOMEM, "trace not written: out of memory");
        return;
    }
    if (!d->dir_ready) {
        sp_status s = sp__mkdirs(d->dir);
        if (s != SP_OK) {
            sp__profiler_export_failed(prof, s, "%s", sp_last_error());
            return;
        }
        d->dir_ready = 1;
    }
    char path[4096];
    int n = build_path(d, path, sizeof path);
    if (n < 0 || (size_t)n >= sizeof path) {
        sp__profiler_export_failed(prof, SP_EIO, "trace not written: path under '%s' is too long",
                                   d->dir);
        return;
    }
    sp_status s = sp__profiler_submit(prof, path, d->format);
    if (s != SP_OK) sp__profiler_export_failed(prof, s, "trace not written: %s", sp_last_error());
}

static sp_status make_handler(sp_trace_handler *out, naming_style style, const char *dir,
                              const char *worker, int gzip)
{
    if (!out) return sp__fail(SP_EINVAL, "handler: out is NULL");
    if (!dir || !*dir) return sp__fail(SP_EINVAL, "handler: dir_name must name a directory");
    handler_data *d = sp__alloc(sizeof *d);
    if (!d) return sp__fail(SP_ENOMEM, "out of memory");
    d->style = style;
    d->gzip = gzip;
    d->format = gzip ? SP_FORMAT_JSON_GZ : SP_FORMAT_JSON;
    d->dir = sp__strdup(dir);
    d->worker = worker ? sanitized(worker) : NULL;
    if (!d->dir || (worker && !d->worker)) {
        release_data(d);
        return sp__fail(SP_ENOMEM, "out of memory");
    }
    out->fn = on_ready;
    out->user = d;
    out->release = release_data;
    return SP_OK;
}

sp_status sp_handler_chrome_tracing(sp_trace_handler *out, const char *dir_name, const char *worker_name)
{
    return make_handler(out, STYLE_PADDLE, dir_name, worker_name, 0);
}

sp_status sp__handler_paddle(sp_trace_handler *out, const char *dir_name, const char *worker_name,
                             sp_format format)
{
    sp_status s = make_handler(out, STYLE_PADDLE, dir_name, worker_name, format == SP_FORMAT_JSON_GZ);
    if (s == SP_OK && format == SP_FORMAT_PROTOBUF) ((handler_data *)out->user)->format = format;
    return s;
}

sp_status sp_handler_tensorboard(sp_trace_handler *out, const char *dir_name, const char *worker_name,
                                 bool use_gzip)
{
    return make_handler(out, STYLE_TENSORBOARD, dir_name, worker_name, use_gzip);
}

static void do_nothing(sp_profiler *prof, void *user)
{
    (void)prof;
    (void)user;
}

sp_trace_handler sp_handler_none(void)
{
    sp_trace_handler h = {do_nothing, NULL, NULL};
    return h;
}
