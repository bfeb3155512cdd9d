/* model.c: builds the node model and the host time range summary of a
 * result (model.h, semantics.md §5.2, §5.4, §6.0). One pass per thread over
 * its events, which the collector left sorted by (start asc, end desc) with
 * parent indices: events map to nodes in that order, so nodes are in start
 * order and a valid parent precedes its child. Ranges of each type are
 * gathered per thread in start order (so sp__spans_merge is one linear pass
 * without a buffer), merged, and the merged pieces of all threads merged
 * again at the end: the union across threads. */
#include "model.h"

#include "sys.h"

#include <string.h>

static int node_is_python(const sp__thread_model *t, int32_t k) {
  return t->thread->events[t->nodes[k].event].type == SP_EVENT_PYTHON_OP;
}

/* Gives each range event a node, links children in start order and computes
 * cpu and self_cpu. map has one slot per event (event index -> node index,
 * -1 for marks). Returns -1 when the node array cannot be allocated. */
static int build_nodes(sp__thread_model *t, int32_t *map) {
  const sp__thread *th = t->thread;
  size_t n = 0;
  for (size_t i = 0; i < th->count; i++)
    map[i] = sp__event_is_mark(&th->events[i]) ? -1 : (int32_t)n++;
  t->first_root = -1;
  if (n == 0)
    return 0;
  t->nodes = sp__alloc(sizeof *t->nodes * n);
  if (!t->nodes)
    return -1;
  t->count = n;
  for (size_t i = 0; i < th->count; i++) {
    if (map[i] < 0)
      continue;
    const sp__event *e = &th->events[i];
    sp__node *nd = &t->nodes[map[i]];
    nd->event = (uint32_t)i;
    /* Only an earlier range event can be a parent: anything else (a
     * hand-made result) would break the tree, so it becomes a root. */
    int32_t p = e->parent;
    nd->parent = p >= 0 && (size_t)p < i ? map[p] : -1;
    nd->first_child = nd->next_sibling = -1;
    nd->cpu = e->end_ns > e->start_ns ? e->end_ns - e->start_ns : 0;
    nd->self_cpu = nd->cpu;
  }
  /* Prepending from the last node gives every list in start order. Once a
   * parent's self_cpu is <= 0 it stays clamped at 0, so stop subtracting
   * there: the sum of overlapping children can never overflow.
   * Python calls (PythonOp, with_stack) are transparent to the self time of
   * other ranges: a range's self time excludes its nearest descendants that
   * are not Python calls, as without with_stack, so a record_function range
   * keeps its self time when Python frames lie between it and its ops. A
   * Python call's own self time excludes its direct children. */
  for (size_t k = n; k-- > 0;) {
    sp__node *nd = &t->nodes[k];
    int32_t *head =
        nd->parent >= 0 ? &t->nodes[nd->parent].first_child : &t->first_root;
    nd->next_sibling = *head;
    *head = (int32_t)k;
    int32_t p = nd->parent;
    if (p >= 0 && node_is_python(t, p) && t->nodes[p].self_cpu > 0)
      t->nodes[p].self_cpu -= nd->cpu;
    if (node_is_python(t, (int32_t)k))
      continue;
    while (p >= 0 && node_is_python(t, p))
      p = t->nodes[p].parent;
    if (p >= 0 && t->nodes[p].self_cpu > 0)
      t->nodes[p].self_cpu -= nd->cpu;
  }
  for (size_t k = 0; k < n; k++)
    if (t->nodes[k].self_cpu < 0)
      t->nodes[k].self_cpu = 0;
  return 0;
}

/* Adds one thread's host ranges to the summary: per type, its ranges (in
 * start order) into local[type], merged, then appended to the model's list.
 * local lists are left empty for the next thread. */
static int add_thread_ranges(sp__model *m, const sp__thread_model *t,
                             sp__spans *local) {
  const sp__event *ev = t->thread->events;
  /* Counted first, so that each list is sized once rather than grown (and
   * copied) a doubling at a time: a thread holds up to millions. */
  size_t want[SP_EVENT_TYPE_COUNT] = {0};
  for (size_t k = 0; k < t->count; k++) {
    uint8_t ty = ev[t->nodes[k].event].type;
    if (ty < SP_EVENT_TYPE_COUNT)
      want[ty]++;
  }
  for (int ty = 0; ty < SP_EVENT_TYPE_COUNT; ty++)
    sp__spans_reserve(&local[ty], want[ty]);
  for (size_t k = 0; k < t->count; k++) {
    const sp__event *e = &ev[t->nodes[k].event];
    if (e->type >= SP_EVENT_TYPE_COUNT)
      continue;
    sp__spans_add(&local[e->type], e->start_ns, e->end_ns);
    if (!(e->flags & SP_EVENT_FLAG_SPLIT_CONT)) /* a range cut at steps: once */
      m->calls[e->type]++;
  }
  int rc = 0;
  for (int ty = 0; ty < SP_EVENT_TYPE_COUNT; ty++) {
    sp__spans *l = &local[ty];
    if (l->failed)
      rc = -1;
    sp__spans_merge(l);
    for (size_t i = 0; i < l->n; i++)
      sp__spans_add(&m->cpu_ranges[ty], l->v[i].start, l->v[i].end);
    if (m->cpu_ranges[ty].failed)
      rc = -1;
    l->n = 0;
  }
  return rc;
}

/* §6.0's denominator and its fallback. */
static void pick_t(sp__model *m) {
  m->T = m->cpu_sum[SP_EVENT_PROFILE_STEP];
  if (m->T > 0)
    return;
  m->T_is_fallback = 1;
  const sp_result *r = m->result;
  if (!r)
    return;
  if (r->span_end_ns > r->span_start_ns) {
    m->T = r->span_end_ns - r->span_start_ns;
    return;
  }
  int any = 0;
  int64_t lo = 0, hi = 0;
  for (size_t t = 0; t < r->thread_count; t++) {
    const sp__thread *th = &r->threads[t];
    for (size_t i = 0; i < th->count; i++) {
      const sp__event *e = &th->events[i];
      if (!any || e->start_ns < lo)
        lo = e->start_ns;
      if (!any || e->end_ns > hi)
        hi = e->end_ns;
      any = 1;
    }
  }
  m->T = any && hi > lo ? hi - lo : 0;
}

int64_t sp__model_in_steps(const sp__model *m, int64_t start, int64_t end,
                           int *counts) {
  if (end < start)
    end = start;
  if (m->T_is_fallback) {
    *counts = 1;
    return end - start;
  }
  const sp__spans *u = &m->cpu_ranges[SP_EVENT_PROFILE_STEP];
  /* The first piece that ends at or after start (pieces are merged: sorted
   * and apart, so their ends ascend too). */
  size_t lo = 0, hi = u->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (u->v[mid].end < start)
      lo = mid + 1;
    else
      hi = mid;
  }
  int64_t in = 0;
  int touches = 0;
  for (size_t i = lo; i < u->n && u->v[i].start <= end; i++) {
    int64_t a = u->v[i].start > start ? u->v[i].start : start;
    int64_t b = u->v[i].end < end ? u->v[i].end : end;
    if (b > a)
      in += b - a;
    touches = 1;
  }
  /* A range of positive length counts when some of it lies in a step; a
   * zero-length one when a step contains its point. */
  *counts = end > start ? in > 0 : touches;
  return in;
}

int sp__model_clip_to_steps(const sp__model *m, sp__spans *s) {
  if (m->T_is_fallback)
    return 0;
  sp__spans in;
  sp__spans_init(&in);
  if (sp__spans_intersect(&in, s, &m->cpu_ranges[SP_EVENT_PROFILE_STEP]) != 0) {
    sp__spans_fini(s);
    s->failed = 1;
    return -1;
  }
  sp__spans_merge(s);
  if (sp__spans_length(&in) < sp__spans_length(s)) {
    sp__spans tmp = *s;
    *s = in;
    in = tmp;
  }
  sp__spans_fini(&in);
  return 0;
}

/* With steps, a host type whose ranges reach outside them keeps only its
 * time inside, and counts only the ranges that lie (partly) inside
 * (model.h): a range left open in a crash dump and closed at the dump's
 * end, or one on another thread that outlived the last step, can no longer
 * outweigh T. A type wholly inside the steps is left as it is (its
 * zero-length pieces included), and so are CUDA runtime calls, whose time
 * is the launch cost wherever it fell (model_gpu.c). */
static int clip_to_steps(sp__model *m) {
  const sp__spans *u = &m->cpu_ranges[SP_EVENT_PROFILE_STEP];
  int recount[SP_EVENT_TYPE_COUNT] = {0}, any = 0;
  sp__spans in;
  sp__spans_init(&in);
  for (int ty = 0; ty < SP_EVENT_TYPE_COUNT; ty++) {
    if (ty == SP_EVENT_PROFILE_STEP || ty == SP_EVENT_CUDA_RUNTIME || m->cpu_ranges[ty].n == 0)
      continue;
    if (sp__spans_intersect(&in, &m->cpu_ranges[ty], u) != 0) {
      sp__spans_fini(&in);
      return -1;
    }
    int64_t len = sp__spans_length(&in);
    if (len == m->cpu_sum[ty])
      continue;
    sp__spans tmp = m->cpu_ranges[ty];
    m->cpu_ranges[ty] = in;
    in = tmp;
    m->cpu_sum[ty] = len;
    m->calls[ty] = 0;
    recount[ty] = any = 1;
  }
  sp__spans_fini(&in);
  for (size_t t = 0; any && t < m->thread_count; t++) {
    const sp__thread_model *tm = &m->threads[t];
    for (size_t k = 0; k < tm->count; k++) {
      const sp__event *e = &tm->thread->events[tm->nodes[k].event];
      if (e->type >= SP_EVENT_TYPE_COUNT || !recount[e->type])
        continue;
      /* A range cut at step edges always lies partly in a step (one side of
       * each cut is inside one), so it counts once, by its first piece. */
      if (e->flags & SP_EVENT_FLAG_SPLIT) {
        m->calls[e->type] += !(e->flags & SP_EVENT_FLAG_SPLIT_CONT);
        continue;
      }
      int counts;
      sp__model_in_steps(m, e->start_ns, e->end_ns, &counts);
      m->calls[e->type] += counts;
    }
  }
  return 0;
}

/* Calls fn for each node of t in §5.4 first-seen order: depth first from
 * the root, children pushed in start order, so the last-starting child is
 * visited first. stack holds t->count slots. */
#define FOR_EACH_FIRST_SEEN(t, stack, nd, body)                                \
  do {                                                                         \
    size_t sp_ = 0;                                                            \
    for (int32_t c_ = (t)->first_root; c_ >= 0; c_ = (t)->nodes[c_].next_sibling) \
      (stack)[sp_++] = c_;                                                     \
    while (sp_ > 0) {                                                          \
      int32_t idx_ = (stack)[--sp_];                                           \
      const sp__node *nd = &(t)->nodes[idx_];                                  \
      body;                                                                    \
      for (int32_t c_ = nd->first_child; c_ >= 0; c_ = (t)->nodes[c_].next_sibling) \
        (stack)[sp_++] = c_;                                                   \
    }                                                                          \
  } while (0)

/* Records the visit order once; without memory, visits walk the tree. */
static void plan_visit(sp__thread_model *t, int32_t *stack) {
  if (t->count == 0 || !(t->order = sp__alloc(sizeof *t->order * t->count)))
    return;
  size_t k = 0;
  FOR_EACH_FIRST_SEEN(t, stack, nd, t->order[k++] = (int32_t)(nd - t->nodes));
}

int sp__model_build(sp__model *m, const sp_result *r) {
  sp__spans local[SP_EVENT_TYPE_COUNT];
  memset(m, 0, sizeof *m);
  m->result = r;
  for (int ty = 0; ty < SP_EVENT_TYPE_COUNT; ty++) {
    sp__spans_init(&m->cpu_ranges[ty]);
    sp__spans_init(&local[ty]);
  }
  for (int ty = 0; ty < 3; ty++)
    sp__spans_init(&m->gpu_ranges[ty]);
  size_t nthreads = r ? r->thread_count : 0, most = 0;
  if (nthreads) {
    m->threads = sp__alloc(sizeof *m->threads * nthreads);
    if (!m->threads)
      goto fail;
    m->thread_count = nthreads;
  }
  for (size_t t = 0; t < nthreads; t++) {
    m->threads[t].thread = &r->threads[t];
    m->threads[t].first_root = -1;
    if (r->threads[t].count > most)
      most = r->threads[t].count;
  }
  /* The visit stack doubles as the event -> node map while building. */
  if (most) {
    m->stack = sp__alloc(sizeof *m->stack * most);
    if (!m->stack)
      goto fail;
  }
  for (size_t t = 0; t < nthreads; t++) {
    if (build_nodes(&m->threads[t], m->stack) != 0)
      goto fail;
    if (add_thread_ranges(m, &m->threads[t], local) != 0)
      goto fail;
  }
  if (r && sp__model_add_gpu(m) != 0)
    goto fail;
  for (size_t t = 0; t < nthreads; t++)
    if (sp__model_join_split(&m->threads[t]) != 0)
      goto fail;
  for (size_t t = 0; t < nthreads; t++)
    plan_visit(&m->threads[t], m->stack);
  for (int ty = 0; ty < SP_EVENT_TYPE_COUNT; ty++) {
    sp__spans_merge(&m->cpu_ranges[ty]);
    m->cpu_sum[ty] = sp__spans_length(&m->cpu_ranges[ty]);
    sp__spans_fini(&local[ty]);
  }
  pick_t(m);
  if (!m->T_is_fallback && clip_to_steps(m) != 0)
    goto fail;
  return 0;
fail:
  for (int ty = 0; ty < SP_EVENT_TYPE_COUNT; ty++)
    sp__spans_fini(&local[ty]);
  m->failed = 1;
  return -1;
}

void sp__model_fini(sp__model *m) {
  if (!m)
    return;
  for (size_t t = 0; t < m->thread_count; t++) {
    sp__free(m->threads[t].nodes);
    sp__free(m->threads[t].order);
    sp__free(m->threads[t].wholes);
  }
  sp__free(m->threads);
  for (int ty = 0; ty < SP_EVENT_TYPE_COUNT; ty++)
    sp__spans_fini(&m->cpu_ranges[ty]);
  for (int ty = 0; ty < 3; ty++)
    sp__spans_fini(&m->gpu_ranges[ty]);
  sp__free(m->device_ids);
  sp__free(m->device_kernel_sum);
  m->device_ids = NULL;
  m->device_kernel_sum = NULL;
  m->device_count = 0;
  sp__free(m->stack);
  m->threads = NULL;
  m->thread_count = 0;
  m->stack = NULL;
}

void sp__model_visit(const sp__model *m, sp__visit_fn fn, void *ctx) {
  if (!m || m->failed)
    return;
  for (size_t t = 0; t < m->thread_count; t++) {
    const sp__thread_model *tm = &m->threads[t];
    if (tm->order) {
      for (size_t k = 0; k < tm->count; k++)
        fn(ctx, tm, &tm->nodes[tm->order[k]]);
      continue;
    }
    /* Every node is pushed once, so the stack (one slot per event of the
     * largest thread) is enough. */
    FOR_EACH_FIRST_SEEN(tm, m->stack, nd, fn(ctx, tm, nd));
  }
}

int32_t sp__model_node_of(const sp__thread_model *t, int32_t ev)
{
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((int32_t)t->nodes[mid].event < ev)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->count && (int32_t)t->nodes[lo].event == ev ? (int32_t)lo : -1;
}
