/* merge_write.c: writes the merged trace (docs/trace-format.md §13). An
 * event is copied from its file's text (the lexer's tee) with only pid, ts
 * and id replaced, so whatever a writer put in it, args included, comes
 * through byte for byte. Each rank's process names are written here in
 * place of the file's own. */
#include "merge.h"

#include "json_escape.h"

#include <string.h>

/* Appends v in decimal; faster than printf on the per-event path. */
static void put_int(sp__buf *b, int64_t v)
{
    char s[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        s[sizeof s - 1 - n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) s[sizeof s - 1 - n++] = '-';
    sp__buf_append(b, s + sizeof s - n, (size_t)n);
}

/* ns as microseconds with three decimals; negative times are written as 0
 * (trace-format.md §3). */
static void put_us(sp__buf *b, int64_t ns)
{
    if (ns < 0) ns = 0;
    put_int(b, ns / 1000);
    char f[4] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10),
                 (char)('0' + ns % 10)};
    sp__buf_append(b, f, 4);
}

int64_t sp__merge_gpu_pid(const mg_rank *r, int64_t device)
{
    return 1000 + 100 * (int64_t)r->h.rank + device;
}

int64_t sp__merge_new_ts(const mg_rank *r, int64_t base_out_ns, int64_t ts_ns)
{
    int64_t abs_ns = r->h.base_ns + ts_ns;
    double shift = sp__merge_shift(r->offset_ns, r->drift_ppm, r->t0_ns, abs_ns);
    return abs_ns - base_out_ns + (int64_t)(shift < 0 ? shift - 0.5 : shift + 0.5);
}

static int is_gpu_pid(const mg_rank *r, int64_t pid)
{
    for (int i = 0; i < r->n_pids; i++)
        if (r->pids[i] == pid) return r->pid_gpu[i];
    return 0;
}

typedef struct subst {
    size_t at, end;
    int64_t v;
    int us; /* write v as a time */
} subst;

void sp__merge_put_event(sp__buf *out, const char *text, const mg_event *ev, size_t len,
                         const mg_rank *r, int64_t base_out_ns)
{
    subst s[3];
    int n = 0;
    if (ev->pid_kind) {
        int64_t pid =
            ev->pid_kind == 1 && is_gpu_pid(r, ev->pid) ? sp__merge_gpu_pid(r, ev->pid) : r->h.rank;
        s[n++] = (subst){ev->pid_at, ev->pid_end, pid, 0};
    }
    if (ev->has_ts)
        s[n++] = (subst){ev->ts_at, ev->ts_end, sp__merge_new_ts(r, base_out_ns, ev->ts_ns), 1};
    if (ev->has_id && r->h.rank)
        s[n++] = (subst){ev->id_at, ev->id_end, ev->id + ((int64_t)r->h.rank << 32), 0};
    /* in text order (a writer may order the keys as it likes) */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && s[j].at < s[j - 1].at; j--) {
            subst t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
    size_t from = 0;
    for (int i = 0; i < n; i++) {
        sp__buf_append(out, text + from, s[i].at - from);
        if (s[i].us)
            put_us(out, s[i].v);
        else
            put_int(out, s[i].v);
        from = s[i].end;
    }
    sp__buf_append(out, text + from, len - from);
}

static void put_name(sp__buf *out, const mg_rank *r, int gpu, int64_t device)
{
    sp__buf name;
    sp__buf_init(&name);
    sp__buf_printf(&name, "rank %ld", r->h.rank);
    if (gpu) sp__buf_printf(&name, " GPU %lld", (long long)device);
    if (r->h.hostname[0] && (gpu || !r->has_host_pid))
        sp__buf_printf(&name, " (%s)", r->h.hostname);
    else if (r->h.hostname[0])
        sp__buf_printf(&name, " (%s, pid %lld)", r->h.hostname, (long long)r->host_pid);
    else if (!gpu && r->has_host_pid)
        sp__buf_printf(&name, " (pid %lld)", (long long)r->host_pid);
    sp__json_put_string(out, name.data, name.len);
    sp__buf_fini(&name);
}

void sp__merge_put_sep(sp__buf *out, int *first)
{
    sp__buf_append(out, ",\n", *first ? 1 : 2);
    if (*first) out->data[out->len - 1] = '\n';
    *first = 0;
}

static void put_process(sp__buf *out, int *first, const mg_rank *r, int64_t ts, int gpu,
                        int64_t device)
{
    int64_t pid = gpu ? sp__merge_gpu_pid(r, device) : r->h.rank;
    for (int k = 0; k < 2; k++) {
        sp__merge_put_sep(out, first);
        sp__buf_puts(out, "{\"ph\":\"M\",\"name\":\"");
        sp__buf_puts(out, k ? "process_sort_index" : "process_name");
        sp__buf_puts(out, "\",\"pid\":");
        put_int(out, pid);
        sp__buf_puts(out, ",\"tid\":0,\"ts\":");
        put_us(out, ts);
        if (k) {
            sp__buf_puts(out, ",\"args\":{\"sort_index\":");
            put_int(out, r->h.rank);
        } else {
            sp__buf_puts(out, ",\"args\":{\"name\":");
            put_name(out, r, gpu, device);
        }
        sp__buf_puts(out, "}}");
    }
}

void sp__merge_put_processes(sp__buf *out, int *first, const mg_rank *r, int64_t base_out_ns)
{
    int64_t ts = r->has_ts_min ? sp__merge_new_ts(r, base_out_ns, r->ts_min_ns) : 0;
    put_process(out, first, r, ts, 0, 0);
    for (int i = 0; i < r->n_pids; i++)
        if (r->pid_gpu[i]) put_process(out, first, r, ts, 1, r->pids[i]);
}

void sp__merge_put_head(sp__buf *out, const mg_rank *ref, long world_size, int64_t base_out_ns)
{
    sp__buf_puts(out, "{\"schemaVersion\":1,\"deviceProperties\":[],\n\"distributedInfo\":{");
    if (ref->h.backend[0]) {
        sp__buf_puts(out, "\"backend\": ");
        sp__json_put_string(out, ref->h.backend, strlen(ref->h.backend));
        sp__buf_puts(out, ", ");
    }
    sp__buf_printf(out, "\"world_size\": %ld, \"job\": ", world_size);
    sp__json_put_string(out, ref->h.job, strlen(ref->h.job));
    sp__buf_printf(
        out,
        "},\n\"stepprof_version\":\"%s\",\n\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":",
        SP_VERSION_STRING);
    put_int(out, base_out_ns);
    sp__buf_puts(out, ",\n\"traceEvents\":[");
}

static void put_double(sp__buf *out, double v)
{
    sp__json_put_double(out, v);
}

void sp__merge_put_tail(sp__buf *out, const mg_rank *ranks, size_t n, const mg_result *res,
                        const char *out_path)
{
    sp__buf_puts(out, "\n],\n\"stepprof_merge\":{\"ranks\":[");
    for (size_t i = 0; i < n; i++) {
        const mg_rank *r = &ranks[i];
        sp__buf_printf(out,
                       "%s\n{\"rank\": %ld, \"world_size\": %ld, \"local_rank\": %ld, "
                       "\"local_world_size\": %ld, \"hostname\": ",
                       i ? "," : "", r->h.rank, r->h.world_size, r->h.local_rank, r->h.local_world_size);
        sp__json_put_string(out, r->h.hostname, strlen(r->h.hostname));
        sp__buf_printf(
            out, ", \"pid\": %lld, \"job\": ", (long long)(r->has_host_pid ? r->host_pid : -1));
        sp__json_put_string(out, r->h.job, strlen(r->h.job));
        sp__buf_puts(out, ", \"backend\": ");
        sp__json_put_string(out, r->h.backend, strlen(r->h.backend));
        sp__buf_puts(out, ", \"source\": ");
        sp__json_put_string(out, r->path, strlen(r->path));
        sp__buf_puts(out, ", \"offset_ns\": ");
        put_int(out, (int64_t)(r->offset_ns < 0 ? r->offset_ns - 0.5 : r->offset_ns + 0.5));
        sp__buf_puts(out, ", \"drift_ppm\": ");
        put_double(out, r->drift_ppm);
        sp__buf_puts(out, ", \"events\": ");
        put_int(out, (int64_t)r->written);
        sp__buf_puts(out, ", \"header\": {");
        sp__buf_append(out, r->keys.data, r->keys.len);
        sp__buf_puts(out, "}}");
    }
    sp__buf_printf(out, "],\n\"aligned\": %s, \"reason\": ", res->aligned ? "true" : "false");
    sp__json_put_string(out, res->reason, strlen(res->reason));
    sp__buf_puts(out, ", \"residual_ns\": ");
    if (res->residual_n) {
        sp__buf_puts(out, "{\"median\": ");
        put_int(out, (int64_t)(res->residual_median_ns + 0.5));
        sp__buf_puts(out, ", \"max\": ");
        put_int(out, (int64_t)(res->residual_max_ns + 0.5));
        sp__buf_puts(out, "}");
    } else {
        sp__buf_puts(out, "null");
    }
    sp__buf_puts(out, "},\n\"traceName\":");
    sp__json_put_string(out, out_path, strlen(out_path));
    sp__buf_puts(out, "}\n");
}
