/* test_model.c: checks the node model and host time range summary of
 * model.c on hand-built results. Each result is filled like the collector
 * does (events, then sp__tree_build for parents, depth and order), and every
 * expected number is worked out by hand in the comment beside it. The last
 * test fails every allocation of a build in turn (run the sanitizer build for
 * leaks). */
#include "check.h"
#include "collect.h"
#include "sys.h"

#include "model.h"

#include <stdint.h>
#include <string.h>

typedef struct ev_spec {
  const char *name;
  int type;
  int64_t start, end;
  uint8_t flags;
} ev_spec;

#define OP SP_EVENT_OPERATOR
#define OI SP_EVENT_OPERATOR_INNER
#define PS SP_EVENT_PROFILE_STEP
#define FW SP_EVENT_FORWARD
#define BW SP_EVENT_BACKWARD
#define UD SP_EVENT_USER_DEFINED
#define N(a) (sizeof(a) / sizeof(a)[0])

/* Appends a thread (tids must come ascending) and builds its nesting. */
static void add_thread(sp_result *r, uint64_t tid, const ev_spec *ev,
                       size_t n) {
  sp__thread *ts = sp__realloc(r->threads, sizeof *ts * (r->thread_count + 1));
  CHECK(ts != NULL);
  if (!ts)
    return;
  r->threads = ts;
  sp__thread *t = &ts[r->thread_count++];
  memset(t, 0, sizeof *t);
  t->tid = tid;
  t->name = sp__names_from_ptr(&r->names, "thread");
  if (n == 0)
    return;
  t->events = sp__alloc(sizeof *t->events * n);
  CHECK(t->events != NULL);
  if (!t->events)
    return;
  t->count = t->cap = n;
  for (size_t i = 0; i < n; i++) {
    sp__event *e = &t->events[i];
    e->name = sp__names_from_ptr(&r->names, ev[i].name);
    e->type = (uint8_t)ev[i].type;
    e->start_ns = ev[i].start;
    e->end_ns = ev[i].end;
    e->flags = ev[i].flags;
    e->parent = -1;
  }
  sp__tree_build(t->events, n);
}

static const char *node_name(const sp__model *m, const sp__thread_model *t,
                             const sp__node *n) {
  return sp__result_name(m->result, t->thread->events[n->event].name);
}

/* The node of thread t named `name`, or NULL. */
static const sp__node *find(const sp__model *m, size_t t, const char *name) {
  const sp__thread_model *tm = &m->threads[t];
  for (size_t k = 0; k < tm->count; k++)
    if (strcmp(node_name(m, tm, &tm->nodes[k]), name) == 0)
      return &tm->nodes[k];
  return NULL;
}

/* Checks a node's cpu and self_cpu; GPU fields are 0 until device records. */
static void check_node(const sp__model *m, size_t t, const char *name,
                       int64_t cpu, int64_t self) {
  const sp__node *n = find(m, t, name);
  CHECK(n != NULL);
  if (!n)
    return;
  CHECK_EQ(cpu, n->cpu);
  CHECK_EQ(self, n->self_cpu);
  CHECK_EQ(0, n->gpu);
  CHECK_EQ(0, n->self_gpu);
  CHECK_EQ(0, n->ggpu);
}

static const char *parent_name(const sp__model *m, size_t t, const char *name) {
  const sp__node *n = find(m, t, name);
  if (!n)
    return "(missing)";
  if (n->parent < 0)
    return "root";
  const sp__thread_model *tm = &m->threads[t];
  return node_name(m, tm, &tm->nodes[n->parent]);
}

/* step [0,100] > fwd [10,60] > (a [10,20], b [30,50] > c [35,40]); bwd [60,90]
 */
static const ev_spec nested[] = {
    {"step", PS, 0, 100, 0}, {"fwd", FW, 10, 60, 0}, {"a", OP, 10, 20, 0},
    {"b", OP, 30, 50, 0},    {"c", OI, 35, 40, 0},   {"bwd", BW, 60, 90, 0},
};

static void test_model_nested_self_times(void) {
  sp_result *r = sp__result_new();
  add_thread(r, 1, nested, N(nested));
  sp__model m;
  CHECK_OK(sp__model_build(&m, r));
  CHECK_EQ(1, m.thread_count);
  CHECK_EQ(6, m.threads[0].count);
  check_node(&m, 0, "step", 100, 20); /* 100 - fwd 50 - bwd 30 */
  check_node(&m, 0, "fwd", 50, 20);   /* 50 - a 10 - b 20 */
  check_node(&m, 0, "a", 10, 10);
  check_node(&m, 0, "b", 20, 15); /* 20 - c 5 */
  check_node(&m, 0, "c", 5, 5);
  check_node(&m, 0, "bwd", 30, 30);
  CHECK_STR_EQ("root", parent_name(&m, 0, "step"));
  CHECK_STR_EQ("step", parent_name(&m, 0, "fwd"));
  CHECK_STR_EQ("fwd", parent_name(&m, 0, "b"));
  CHECK_STR_EQ("b", parent_name(&m, 0, "c"));
  CHECK_STR_EQ("step", parent_name(&m, 0, "bwd"));
  /* step's children in start order: fwd then bwd, then none. */
  const sp__thread_model *t = &m.threads[0];
  const sp__node *step = find(&m, 0, "step");
  CHECK(step && step->first_child >= 0);
  if (step && step->first_child >= 0) {
    const sp__node *c1 = &t->nodes[step->first_child];
    CHECK_STR_EQ("fwd", node_name(&m, t, c1));
    CHECK(c1->next_sibling >= 0);
    if (c1->next_sibling >= 0) {
      CHECK_STR_EQ("bwd", node_name(&m, t, &t->nodes[c1->next_sibling]));
      CHECK_EQ(-1, t->nodes[c1->next_sibling].next_sibling);
    }
  }
  CHECK_EQ(-1, find(&m, 0, "c")->first_child);
  /* One of each type: sums are the plain lengths, T the step. */
  CHECK_EQ(100, m.cpu_sum[PS]);
  CHECK_EQ(30, m.cpu_sum[OP]); /* a 10 + b 20, disjoint */
  CHECK_EQ(2, m.calls[OP]);
  CHECK_EQ(5, m.cpu_sum[OI]);
  CHECK_EQ(1, m.calls[FW]);
  CHECK_EQ(100, m.T);
  CHECK_EQ(0, m.T_is_fallback);
  sp__model_fini(&m);
  sp_result_release(r);
}

/* Python calls (with_stack) are transparent to other ranges' self time:
 * step [0,100] > py [10,90] > (user [20,80] > py2 [25,70] > op [30,50]),
 * py [10,90] also > op2 [82,88]. */
static const ev_spec python_calls[] = {
    {"step", PS, 0, 100, 0},         {"py", SP_EVENT_PYTHON_OP, 10, 90, 0},
    {"user", UD, 20, 80, 0},         {"py2", SP_EVENT_PYTHON_OP, 25, 70, 0},
    {"op", OP, 30, 50, 0},           {"op2", OP, 82, 88, 0},
};

static void test_model_python_calls_are_transparent_to_self_time(void) {
  sp_result *r = sp__result_new();
  add_thread(r, 1, python_calls, N(python_calls));
  sp__model m;
  CHECK_OK(sp__model_build(&m, r));
  check_node(&m, 0, "step", 100, 34); /* 100 - user 60 - op2 6 */
  check_node(&m, 0, "py", 80, 14);    /* 80 - its children user 60, op2 6 */
  check_node(&m, 0, "user", 60, 40);  /* 60 - op 20 (py2 is looked through) */
  check_node(&m, 0, "py2", 45, 25);   /* 45 - op 20 */
  check_node(&m, 0, "op", 20, 20);
  CHECK_STR_EQ("py2", parent_name(&m, 0, "op"));
  sp__model_fini(&m);
  sp_result_release(r);
}

static void test_model_overlapping_children_clamp_self(void) {
  /* y [40,100] partially overlaps x [0,60]: the collector pops x and hangs
   * y on step too (flag OVERLAP). step's children sum 60 + 60 = 120 > 100,
   * so self is clamped at 0. The OP union is [0,100] = 100. */
  static const ev_spec ev[] = {
      {"step", PS, 0, 100, 0}, {"x", OP, 0, 60, 0}, {"y", OP, 40, 100, 0}};
  sp_result *r = sp__result_new();
  add_thread(r, 1, ev, N(ev));
  sp__model m;
  CHECK_OK(sp__model_build(&m, r));
  CHECK_STR_EQ("step", parent_name(&m, 0, "y"));
  CHECK(find(&m, 0, "y") &&
        (r->threads[0].events[find(&m, 0, "y")->event].flags &
         SP_EVENT_FLAG_OVERLAP));
  check_node(&m, 0, "step", 100, 0);
  check_node(&m, 0, "x", 60, 60);
  check_node(&m, 0, "y", 60, 60);
  CHECK_EQ(100, m.cpu_sum[OP]);
  CHECK_EQ(2, m.calls[OP]);
  sp__model_fini(&m);
  sp_result_release(r);
}

static void test_model_two_threads_union_and_sum_calls(void) {
  /* Thread 1: step [0,100], op [10,30]. Thread 2: op [20,40] (a root),
   * step [50,150] > op [60,70].
   * ProfileStep: [0,100] u [50,150] = [0,150] -> 150, calls 2.
   * Operator: [10,30] u [20,40] u [60,70] = [10,40] + [60,70] = 30 + 10 = 40,
   * calls 3. T = 150. */
  static const ev_spec t1[] = {{"s1", PS, 0, 100, 0}, {"o1", OP, 10, 30, 0}};
  static const ev_spec t2[] = {
      {"o2", OP, 20, 40, 0}, {"s2", PS, 50, 150, 0}, {"o3", OP, 60, 70, 0}};
  sp_result *r = sp__result_new();
  add_thread(r, 7, t1, N(t1));
  add_thread(r, 9, t2, N(t2));
  sp__model m;
  CHECK_OK(sp__model_build(&m, r));
  CHECK_EQ(2, m.thread_count);
  CHECK_U64_EQ(7, m.threads[0].thread->tid);
  CHECK_U64_EQ(9, m.threads[1].thread->tid);
  CHECK_EQ(150, m.cpu_sum[PS]);
  CHECK_EQ(2, m.calls[PS]);
  CHECK_EQ(40, m.cpu_sum[OP]);
  CHECK_EQ(3, m.calls[OP]);
  CHECK_EQ(2, m.cpu_ranges[OP].n);
  if (m.cpu_ranges[OP].n == 2) {
    CHECK_EQ(10, m.cpu_ranges[OP].v[0].start);
    CHECK_EQ(40, m.cpu_ranges[OP].v[0].end);
    CHECK_EQ(60, m.cpu_ranges[OP].v[1].start);
    CHECK_EQ(70, m.cpu_ranges[OP].v[1].end);
  }
  CHECK_EQ(150, m.T);
  CHECK_EQ(0, m.T_is_fallback);
  check_node(&m, 1, "s2", 100, 90); /* 100 - o3 10 */
  CHECK_STR_EQ("root", parent_name(&m, 1, "o2"));
  sp__model_fini(&m);
  sp_result_release(r);
}

static void test_model_touching_ranges_merge(void) {
  /* Steps [0,10] and [10,20] touch: one piece [0,20] = 20, calls 2.
   * Operators [10,12] (thread 1) and [5,10] (thread 2) touch across
   * threads: one piece [5,12] = 7, calls 2. */
  static const ev_spec t1[] = {
      {"s1", PS, 0, 10, 0}, {"s2", PS, 10, 20, 0}, {"o1", OP, 10, 12, 0}};
  static const ev_spec t2[] = {{"o2", OP, 5, 10, 0}};
  sp_result *r = sp__result_new();
  add_thread(r, 1, t1, N(t1));
  add_thread(r, 2, t2, N(t2));
  sp__model m;
  CHECK_OK(sp__model_build(&m, r));
  CHECK_STR_EQ("root", parent_name(&m, 0, "s2")); /* s1 closed at 10 */
  CHECK_STR_EQ("s2", parent_name(&m, 0, "o1"));
  CHECK_EQ(1, m.cpu_ranges[PS].n);
  CHECK_EQ(20, m.cpu_sum[PS]);
  CHECK_EQ(2, m.calls[PS]);
  CHECK_EQ(1, m.cpu_ranges[OP].n);
  CHECK_EQ(7, m.cpu_sum[OP]);
  CHECK_EQ(2, m.calls[OP]);
  CHECK_EQ(20, m.T);
  sp__model_fini(&m);
  sp_result_release(r);
}

static void test_model_zero_length_ranges(void) {
  /* z [5,5] is a range (not an instant): a node with cpu 0 under step, so
   * step's self stays 10; it counts a call and adds a zero-length piece. */
  static const ev_spec ev[] = {{"step", PS, 0, 10, 0}, {"z", OP, 5, 5, 0}};
  sp_result *r = sp__result_new();
  add_thread(r, 1, ev, N(ev));
  sp__model m;
  CHECK_OK(sp__model_build(&m, r));
  CHECK_EQ(2, m.threads[0].count);
  CHECK_STR_EQ("step", parent_name(&m, 0, "z"));
  check_node(&m, 0, "step", 10, 10);
  check_node(&m, 0, "z", 0, 0);
  CHECK_EQ(1, m.calls[OP]);
  CHECK_EQ(0, m.cpu_sum[OP]);
  CHECK_EQ(1, m.cpu_ranges[OP].n);
  CHECK_EQ(10, m.T);
  sp__model_fini(&m);
  sp_result_release(r);
}

static void test_model_instants_and_counters_ignored(void) {
  /* Sorted events: mark@-5 (0), step [0,100] (1), op [10,20] (2),
   * mark@50 (3), counter@60 (4). Nodes: step -> event 1, op -> event 2.
   * step self = 100 - 10 = 90; marks add no calls and no time. */
  static const ev_spec ev[] = {
      {"early", UD, -5, -5, SP_EVENT_FLAG_INSTANT},
      {"step", PS, 0, 100, 0},
      {"op", OP, 10, 20, 0},
      {"mark", UD, 50, 50, SP_EVENT_FLAG_INSTANT},
      {"mem", UD, 60, 60, SP_EVENT_FLAG_COUNTER},
  };
  sp_result *r = sp__result_new();
  add_thread(r, 1, ev, N(ev));
  sp__model m;
  CHECK_OK(sp__model_build(&m, r));
  CHECK_EQ(2, m.threads[0].count);
  CHECK_EQ(1, m.threads[0].nodes[0].event);
  CHECK_EQ(2, m.threads[0].nodes[1].event);
  CHECK_EQ(0, m.threads[0].nodes[1].parent);
  CHECK(find(&m, 0, "mark") == NULL);
  check_node(&m, 0, "step", 100, 90);
  CHECK_EQ(0, m.calls[UD]);
  CHECK_EQ(0, m.cpu_sum[UD]);
  CHECK_EQ(0, m.cpu_ranges[UD].n);
  CHECK_EQ(100, m.T);
  sp__model_fini(&m);
  sp_result_release(r);
}

static void test_model_t_from_profile_step(void) {
  /* Steps [0,40] and [50,100] with a gap: T = 40 + 50 = 90, not the span's
   * 210 ([-10,200]) nor the outer 100. */
  static const ev_spec ev[] = {
      {"s1", PS, 0, 40, 0}, {"s2", PS, 50, 100, 0}, {"o", OP, 40, 50, 0}};
  sp_result *r = sp__result_new();
  r->span_start_ns = -10;
  r->span_end_ns = 200;
  add_thread(r, 1, ev, N(ev));
  sp__model m;
  CHECK_OK(sp__model_build(&m, r));
  CHECK_EQ(90, m.T);
  CHECK_EQ(0, m.T_is_fallback);
  sp__model_fini(&m);
  sp_result_release(r);
}

static void test_model_t_fallback_span_wall_time(void) {
  /* No ProfileStep, span [1000,2000]: T = 1000. */
  static const ev_spec ev[] = {{"o", OP, 1100, 1200, 0}};
  sp_result *r = sp__result_new();
  r->span_start_ns = 1000;
  r->span_end_ns = 2000;
  add_thread(r, 1, ev, N(ev));
  sp__model m;
  CHECK_OK(sp__model_build(&m, r));
  CHECK_EQ(0, m.cpu_sum[PS]);
  CHECK_EQ(1000, m.T);
  CHECK_EQ(1, m.T_is_fallback);
  sp__model_fini(&m);
  sp_result_release(r);

  /* Span 0 (a loaded result): earliest start 5 (thread 2's op) to latest
   * end 50 (thread 1's instant) = 45. */
  static const ev_spec t1[] = {{"o", OP, 10, 20, 0},
                               {"m", UD, 50, 50, SP_EVENT_FLAG_INSTANT}};
  static const ev_spec t2[] = {{"p", OP, 5, 8, 0}};
  r = sp__result_new();
  add_thread(r, 1, t1, N(t1));
  add_thread(r, 2, t2, N(t2));
  CHECK_OK(sp__model_build(&m, r));
  CHECK_EQ(45, m.T);
  CHECK_EQ(1, m.T_is_fallback);
  sp__model_fini(&m);
  sp_result_release(r);

  /* Only a zero-length step: CPUSum[ProfileStep] = 0 still falls back,
   * to [10,30] of the events = 20. */
  static const ev_spec t3[] = {{"s", PS, 10, 10, 0}, {"o", OP, 10, 30, 0}};
  r = sp__result_new();
  add_thread(r, 1, t3, N(t3));
  CHECK_OK(sp__model_build(&m, r));
  CHECK_EQ(1, m.calls[PS]);
  CHECK_EQ(20, m.T);
  CHECK_EQ(1, m.T_is_fallback);
  sp__model_fini(&m);
  sp_result_release(r);
}

static int visits;
static void count_visit(void *ctx, const sp__thread_model *t,
                        const sp__node *n) {
  (void)ctx, (void)t, (void)n;
  visits++;
}

static void test_model_empty_result(void) {
  sp_result *r = sp__result_new();
  sp__model m;
  CHECK_OK(sp__model_build(&m, r));
  CHECK_EQ(0, m.thread_count);
  CHECK_EQ(0, m.T);
  CHECK_EQ(1, m.T_is_fallback);
  visits = 0;
  sp__model_visit(&m, count_visit, NULL);
  CHECK_EQ(0, visits);
  sp__model_fini(&m);
  sp__model_fini(&m); /* twice is safe */

  /* A thread without events, and one with only an instant. */
  static const ev_spec marks[] = {{"m", UD, 3, 3, SP_EVENT_FLAG_INSTANT}};
  add_thread(r, 1, NULL, 0);
  add_thread(r, 2, marks, N(marks));
  CHECK_OK(sp__model_build(&m, r));
  CHECK_EQ(2, m.thread_count);
  CHECK_EQ(0, m.threads[0].count);
  CHECK_EQ(0, m.threads[1].count);
  CHECK_EQ(-1, m.threads[1].first_root);
  CHECK_EQ(0, m.T); /* one point: latest end - earliest start = 0 */
  CHECK_EQ(1, m.T_is_fallback);
  sp__model_visit(&m, count_visit, NULL);
  CHECK_EQ(0, visits);
  sp__model_fini(&m);
  sp_result_release(r);

  CHECK_OK(sp__model_build(&m, NULL));
  CHECK_EQ(1, m.T_is_fallback);
  sp__model_fini(&m);
}

typedef struct order_ctx {
  const sp__model *m;
  char s[64];
  size_t n;
} order_ctx;

static void record_visit(void *ctx, const sp__thread_model *t,
                         const sp__node *n) {
  order_ctx *o = ctx;
  const char *name = node_name(o->m, t, n);
  size_t len = strlen(name);
  if (o->n + len < sizeof o->s) {
    memcpy(o->s + o->n, name, len + 1);
    o->n += len;
  }
}

static void test_model_visit_order(void) {
  /* Thread 1: A [0,100] > (B [10,20], C [30,60] > (D [35,40], E [45,50]),
   * F [70,80]); G [200,210] a second root. Thread 2: X [0,5] > Y [1,2].
   * Stack: push A, G; pop G; pop A, push B, C, F; pop F; pop C, push D, E;
   * pop E; pop D; pop B. Then thread 2: X, Y. -> "GAFCEDBXY". */
  static const ev_spec t1[] = {
      {"A", OP, 0, 100, 0},   {"B", OP, 10, 20, 0},
      {"C", OP, 30, 60, 0},   {"D", OI, 35, 40, 0},
      {"E", OI, 45, 50, 0},   {"F", OP, 70, 80, 0},
      {"G", UD, 200, 210, 0}, {"i", UD, 36, 36, SP_EVENT_FLAG_INSTANT},
  };
  static const ev_spec t2[] = {{"X", OP, 0, 5, 0}, {"Y", OP, 1, 2, 0}};
  sp_result *r = sp__result_new();
  add_thread(r, 1, t1, N(t1));
  add_thread(r, 2, t2, N(t2));
  sp__model m;
  CHECK_OK(sp__model_build(&m, r));
  order_ctx o = {&m, "", 0};
  sp__model_visit(&m, record_visit, &o);
  CHECK_STR_EQ("GAFCEDBXY", o.s);
  sp__model_fini(&m);
  sp_result_release(r);
}

static void test_model_alloc_failure_everywhere(void) {
  /* Three threads (one without events) so that every kind of allocation
   * happens: thread array, stack, nodes, per-thread and merged lists. */
  static const ev_spec t2[] = {
      {"o2", OP, 20, 40, 0}, {"s2", PS, 50, 150, 0}, {"o3", OP, 60, 70, 0}};
  sp_result *r = sp__result_new();
  add_thread(r, 1, nested, N(nested));
  add_thread(r, 2, NULL, 0);
  add_thread(r, 3, t2, N(t2));
  sp__model want;
  sp__alloc_fail_at(0);
  CHECK_OK(sp__model_build(&want, r));
  uint64_t made = sp__alloc_fail_at(0);
  CHECK(made >= 5);
  int failures = 0;
  for (uint64_t k = 1; k <= made + 1; k++) {
    sp__model m;
    sp__alloc_fail_at(k);
    int rc = sp__model_build(&m, r);
    sp__alloc_fail_at(0);
    if (rc == 0) {
      CHECK_EQ(0, m.failed);
      CHECK_EQ(want.T, m.T);
      for (int ty = 0; ty < SP_EVENT_TYPE_COUNT; ty++) {
        CHECK_EQ(want.cpu_sum[ty], m.cpu_sum[ty]);
        CHECK_EQ(want.calls[ty], m.calls[ty]);
      }
    } else {
      CHECK_EQ(-1, rc);
      CHECK_EQ(1, m.failed);
      failures++;
      visits = 0;
      sp__model_visit(&m, count_visit, NULL);
      CHECK_EQ(0, visits);
    }
    sp__model_fini(&m);
  }
  CHECK(failures > 0);
  CHECK_EQ(150, want.cpu_sum[PS]); /* [0,100] u [50,150] = [0,150] */
  CHECK_EQ(4, want.calls[OP]);     /* a, b (thread 1) + o2, o3 (thread 3) */
  sp__model_fini(&want);
  sp_result_release(r);
}

int main(void) {
  RUN_TEST(test_model_nested_self_times);
  RUN_TEST(test_model_python_calls_are_transparent_to_self_time);
  RUN_TEST(test_model_overlapping_children_clamp_self);
  RUN_TEST(test_model_two_threads_union_and_sum_calls);
  RUN_TEST(test_model_touching_ranges_merge);
  RUN_TEST(test_model_zero_length_ranges);
  RUN_TEST(test_model_instants_and_counters_ignored);
  RUN_TEST(test_model_t_from_profile_step);
  RUN_TEST(test_model_t_fallback_span_wall_time);
  RUN_TEST(test_model_empty_result);
  RUN_TEST(test_model_visit_order);
  RUN_TEST(test_model_alloc_failure_everywhere);
  return TEST_SUMMARY();
}
