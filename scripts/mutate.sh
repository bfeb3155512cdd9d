#!/usr/bin/env bash
# scripts/mutate.sh: mutation testing for stepprof, a developer tool (not run
# by `make test`). It plants one small, realistic bug at a time (a mutant:
# an off-by-one, swapped fields, a wrong comparison, a dropped counter
# increment, a wrong unit, a reversed sort) in a scratch copy of the tree,
# rebuilds incrementally, runs the tests of the mutated stage, and reports
# KILLED (some test failed or timed out) or SURVIVED (every test passed).
# The score is killed / (killed + survived).
#
# Usage:
#   scripts/mutate.sh [--list] [--keep] [--scratch DIR] [--timeout S] [PATTERN...]
#     PATTERN      run only the mutants whose number, file or description
#                  contains one of the patterns (e.g. `analyze`, `12`, `protobuf.c`)
#     --list       print the mutants and exit
#     --scratch D  the scratch copy (default /tmp/stepprof-mutate); kept between
#                  runs so the build there is incremental; the source is
#                  re-synced from this working tree (tracked and untracked,
#                  not ignored files) at every run
#     --timeout S  per-mutant limit for its tests (default 300 s)
#     --keep       leave the last mutant applied (to debug a survivor)
#   Environment: MUTATE_JOBS (build and ctest -j, default 2); MUTATE_EXCLUDE
#   (a ctest -E regex of tests never run; default: the 100 MB cap, corrupt
#   input and failing-allocation tests and test_record's million events,
#   which take one to three minutes each on a busy machine).
#   A run of all the mutants takes about an hour on two busy cores; each
#   group runs only the tests of its stage and the next (group_tests), and
#   stops at the first failing test.
#
# Each mutant is (file, exact original snippet, replacement, description,
# test group). A snippet that is not in its file exactly once (the code
# changed since the mutant was written) is reported as STALE and counted
# apart, never as killed. A mutant that does not compile is BUILD-FAIL, also
# counted apart. Python mutants run `sh python/test.sh` (pytest) with the
# scratch copy's own virtual environment (made once, as python/test.sh does).
#
# Adding a mutant: append a block to the list at the end of this file,
#   M <file> :: <group> :: <description>
#   - <original snippet, exact, one line; <NL> stands for a line break>
#   + <replacement>
# where <group> is one of the names in group_tests below or a ctest -R regex.
# Exit status: 0 when the score is at least MUTATE_MIN_SCORE (default 90),
# 1 otherwise, 2 on a usage or setup error.
set -u

SRC=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=/tmp/stepprof-mutate
TIMEOUT=300
LIST=0
KEEP=0
PATTERNS=()
JOBS=${MUTATE_JOBS:-2}
MIN_SCORE=${MUTATE_MIN_SCORE:-90}
EXCLUDE=${MUTATE_EXCLUDE:-^(record_test_cap_100m|record_test_record|load_test_corrupt|sys_test_alloc)\$}

while [ $# -gt 0 ]; do
    case "$1" in
    --list) LIST=1 ;;
    --keep) KEEP=1 ;;
    --scratch) SCRATCH=$2; shift ;;
    --timeout) TIMEOUT=$2; shift ;;
    -h | --help) sed -n '2,35p' "$0"; exit 0 ;;
    -*) echo "mutate.sh: unknown option $1" >&2; exit 2 ;;
    *) PATTERNS+=("$1") ;;
    esac
    shift
done

# The ctest regex of each test group.
group_tests() {
    case "$1" in
    record) echo '^(record_|api_test_misuse|api_test_profiler|collect_test_tree)' ;;
    collect) echo '^(collect_|analyze_|load_test_roundtrip|load_test_pb_wire|api_test_profiler|api_test_handlers)' ;;
    analyze) echo '^(analyze_|cli_|load_test_roundtrip)' ;;
    export) echo '^(export_test_chrome_json|export_test_json_compat|export_test_json_escape|load_|api_test_handlers|trace_)' ;;
    load) echo '^(load_|cli_)' ;;
    gpu) echo '^(gpu_test_|collect_test_gpu_records|export_test_json_gpu)' ;;
    api) echo '^(api_|record_test_record_bounds)' ;;
    sys) echo '^(sys_test_utf8|export_test_json_escape|load_test_load_json|load_test_load_json_memory)' ;;
    cli) echo '^cli_' ;;
    python) echo PYTHON ;;
    *) echo "$1" ;;
    esac
}

# ---- the mutant list (read from the end of this file) ----
FILES=() GROUPS_=() DESCS=() ORIGS=() REPLS=()
parse_list() {
    local line state=0 f g d
    while IFS= read -r line; do
        case "$line" in
        "M "*)
            line=${line#M }
            f=${line%% :: *}
            line=${line#* :: }
            g=${line%% :: *}
            d=${line#* :: }
            state=1 ;;
        "- "*)
            [ $state = 1 ] && ORIG=${line#- } && state=2 ;;
        "+ "*)
            if [ $state = 2 ]; then
                FILES+=("$f"); GROUPS_+=("$g"); DESCS+=("$d"); ORIGS+=("$ORIG"); REPLS+=("${line#+ }")
            fi
            state=0 ;;
        esac
    done < <(sed -n "/^: <<'MUTANTS'\$/,/^MUTANTS\$/p" "$0")
}
parse_list

selected() { # index
    local i=$1 p
    [ ${#PATTERNS[@]} -eq 0 ] && return 0
    for p in "${PATTERNS[@]}"; do
        case "$((i + 1)) ${FILES[$i]} ${GROUPS_[$i]} ${DESCS[$i]}" in
        "$p "* | *"$p"*) return 0 ;;
        esac
    done
    return 1
}

if [ $LIST = 1 ]; then
    for i in "${!FILES[@]}"; do
        selected "$i" || continue
        printf '%3d  %-34s %-8s %s\n' $((i + 1)) "${FILES[$i]}" "${GROUPS_[$i]}" "${DESCS[$i]}"
    done
    exit 0
fi

# apply FILE ORIG REPL: replaces the one occurrence; exit 3 when it is not
# there exactly once (stale).
apply() {
    python3 - "$1" "$2" "$3" <<'EOF'
import sys
path, orig, repl = sys.argv[1:4]
dec = lambda s: s.replace("<NL>", "\n")
orig, repl = dec(orig), dec(repl)
text = open(path, encoding="utf-8").read()
if text.count(orig) != 1:
    sys.exit(3)
open(path, "w", encoding="utf-8").write(text.replace(orig, repl))
EOF
}

# ---- the scratch copy: synced, configured and built once ----
echo "mutate: scratch copy in $SCRATCH"
mkdir -p "$SCRATCH" || exit 2
# Only files whose content differs are copied, and they get the time of the
# copy: an older source time would hide the change from make, which would
# keep objects built from the scratch copy's previous content.
(cd "$SRC" && git ls-files -z -c -o --exclude-standard) | while IFS= read -r -d '' f; do
    [ -f "$SRC/$f" ] || continue
    if ! cmp -s "$SRC/$f" "$SCRATCH/$f"; then
        mkdir -p "$(dirname "$SCRATCH/$f")" && cp "$SRC/$f" "$SCRATCH/$f" ||
            { echo "mutate: cannot copy $f" >&2; exit 2; }
    fi
done || exit 2
BUILD=$SCRATCH/build
LOG=$SCRATCH/mutate-logs
mkdir -p "$LOG"
# An interrupted run left a mutant applied: the copy above restored the
# file, with an older time than its object, so make it look changed.
if [ -f "$LOG/applied" ]; then
    touch "$SCRATCH/$(cat "$LOG/applied")"
    rm -f "$LOG/applied"
fi
# python/test.sh's virtual environment: a copy of this tree's, if it has one,
# saves fetching pip, setuptools and pytest again.
if [ ! -d "$BUILD/python-venv" ] && [ -x "$SRC/build/python-venv/bin/python" ]; then
    mkdir -p "$BUILD" && cp -a "$SRC/build/python-venv" "$BUILD/python-venv"
fi
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    cmake -S "$SCRATCH" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSP_BUILD_BENCH=OFF \
        >"$LOG/configure.log" 2>&1 || { echo "mutate: configure failed, see $LOG/configure.log" >&2; exit 2; }
fi
echo "mutate: building the unmutated tree"
if ! cmake --build "$BUILD" -j"$JOBS" >"$LOG/build.log" 2>&1; then
    echo "mutate: the unmutated tree does not build, see $LOG/build.log" >&2
    exit 2
fi

# build_for GROUP: builds only what the group's tests run (a C test's
# target bears its name), plus the CLI, the demo and the fake GPU libraries.
ALL_TARGETS=$(cmake --build "$BUILD" --target help 2>/dev/null | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p')
build_for() {
    local re t targets=""
    re=$(group_tests "$1")
    if [ "$re" != PYTHON ]; then
        for t in $(cd "$BUILD" && ctest -N -R "$re" -E "$EXCLUDE" | sed -n 's/^ *Test *#[0-9]*: \(.*\)$/\1/p') \
            stepprof_cli train_mlp gpu_live_gpu fake_cuda fake_cupti stepprof stepprof_static; do
            case " $(echo $ALL_TARGETS) " in *" $t "*) targets="$targets $t" ;; esac
        done
    fi
    [ -n "$targets" ] || targets=all
    cmake --build "$BUILD" -j"$JOBS" --target $targets
}

# run_tests GROUP: 0 when every test passes.
run_tests() {
    local re
    re=$(group_tests "$1")
    if [ "$re" = PYTHON ]; then
        (cd "$SCRATCH" && timeout "$TIMEOUT" sh python/test.sh -x -q -p no:cacheprovider)
    else
        (cd "$BUILD" && timeout "$TIMEOUT" ctest -j"$JOBS" --timeout "$TIMEOUT" --stop-on-failure -R "$re" -E "$EXCLUDE" \
            --output-on-failure)
    fi
}

killed=0 survived=0 stale=0 buildfail=0
SURVIVORS=() STALES=()
for i in "${!FILES[@]}"; do
    selected "$i" || continue
    n=$((i + 1))
    f=${FILES[$i]}
    tag=$(printf '%3d %-34s %s' $n "$f" "${DESCS[$i]}")
    target=$SCRATCH/$f
    if [ ! -f "$target" ]; then
        echo "STALE      $tag (no such file)"
        stale=$((stale + 1)); STALES+=("$n")
        continue
    fi
    cp -p "$target" "$LOG/original"
    echo "$f" >"$LOG/applied"
    apply "$target" "${ORIGS[$i]}" "${REPLS[$i]}"
    rc=$?
    if [ $rc -ne 0 ]; then
        rm -f "$LOG/applied"
        echo "STALE      $tag (snippet not found exactly once)"
        stale=$((stale + 1)); STALES+=("$n")
        continue
    fi
    out=$LOG/mutant-$n.log
    if ! build_for "${GROUPS_[$i]}" >"$out" 2>&1; then
        echo "BUILD-FAIL $tag"
        buildfail=$((buildfail + 1))
    elif run_tests "${GROUPS_[$i]}" >>"$out" 2>&1; then
        echo "SURVIVED   $tag"
        survived=$((survived + 1)); SURVIVORS+=("$n")
    else
        echo "KILLED     $tag"
        killed=$((killed + 1))
    fi
    if [ $KEEP = 1 ]; then
        echo "mutate: mutant $n left applied in $target (--keep)"
        break
    fi
    # Restore the content; the new mtime makes the next build recompile it.
    cat "$LOG/original" >"$target"
    rm -f "$LOG/applied"
done
if [ $KEEP = 0 ] && [ $((killed + survived + buildfail)) -gt 0 ]; then
    cmake --build "$BUILD" -j"$JOBS" >"$LOG/rebuild.log" 2>&1 # leave the scratch build clean
fi

total=$((killed + survived))
echo
echo "mutate: killed $killed, survived $survived, stale $stale, build-fail $buildfail"
[ ${#SURVIVORS[@]} -gt 0 ] && echo "mutate: survivors: ${SURVIVORS[*]} (logs in $LOG)"
[ ${#STALES[@]} -gt 0 ] && echo "mutate: stale: ${STALES[*]}"
if [ $total -eq 0 ]; then
    echo "mutate: no mutant ran"
    exit 1
fi
score=$((100 * killed / total))
echo "mutate: score $killed/$total = $(awk "BEGIN{printf \"%.1f\", 100*$killed/$total}")%"
[ $score -ge "$MIN_SCORE" ] && exit 0
exit 1

# The mutants (a here-document that the shell never runs). Keep each snippet
# to a line of core logic that is unlikely to be reformatted; <NL> joins
# lines when one line is not unique.
: <<'MUTANTS'
M src/record/record.c :: record :: event type bound off by one (type == COUNT accepted)
- if ((unsigned)type < SP_EVENT_TYPE_COUNT) return type;
+ if ((unsigned)type <= SP_EVENT_TYPE_COUNT) return type;
M src/record/record.c :: record :: misuse counter not bumped for a bad event type
- if (tb) count(&tb->misuse);<NL>    return SP_EVENT_USER_DEFINED;
+ (void)tb;<NL>    return SP_EVENT_USER_DEFINED;
M src/record/record.c :: record :: a dropped begin is not remembered, so its end is kept
- if (kind == FOR_BEGIN) tb->dropped_open++;
+ if (kind == FOR_BEGIN) (void)0;
M src/record/record.c :: record :: an over-long name is cut without the mark that counts it
- if (len > SP__NAME_MAX_BYTES) len = SP__NAME_MAX_BYTES + 1;
+ if (len > SP__NAME_MAX_BYTES) len = SP__NAME_MAX_BYTES;
M src/collect/tree.c :: collect :: a range that starts where the previous ends nests inside it
- while (sp > 0 && events[stack[sp - 1]].end_ns <= e->start_ns) sp--;
+ while (sp > 0 && events[stack[sp - 1]].end_ns < e->start_ns) sp--;
M src/collect/tree.c :: collect :: depth off by one
- e->depth = (uint32_t)sp;
+ e->depth = (uint32_t)sp + 1;
M src/collect/tree.c :: collect :: overlap counter not bumped
- overlaps++;
+ (void)overlaps;
M src/collect/scheduler.c :: collect :: last RECORD step is not RECORD_AND_RETURN
- if (m < period - 1) return SP_STATE_RECORD;
+ if (m < period) return SP_STATE_RECORD;
M src/collect/scheduler.c :: collect :: repeat allows one cycle too many
- if (s->repeat > 0 && n / period >= s->repeat) return SP_STATE_CLOSED;
+ if (s->repeat > 0 && n / period > s->repeat) return SP_STATE_CLOSED;
M src/collect/attribute.c :: collect :: a range contains its end time
- static int contains(const sp__event *e, int64_t ts) { return e->start_ns <= ts && ts < e->end_ns; }
+ static int contains(const sp__event *e, int64_t ts) { return e->start_ns <= ts && ts <= e->end_ns; }
M src/collect/attribute.c :: collect :: memory events attributed one ns early
- for (size_t k = 0; k < t->mem_count; k++) t->mems[k].host = innermost_at(t, t->mems[k].ts_ns, 1);
+ for (size_t k = 0; k < t->mem_count; k++) t->mems[k].host = innermost_at(t, t->mems[k].ts_ns - 1, 1);
M src/analyze/table_items.c :: analyze :: GPUMin sorts descending
- case SP__SORT_GPU_MIN: return -(double)s->gpu_min;
+ case SP__SORT_GPU_MIN: return (double)s->gpu_min;
M src/analyze/table_items.c :: analyze :: GPUAvg reads the CPU total
- case SP__SORT_GPU_AVG: return (double)s->gpu / (double)s->calls;
+ case SP__SORT_GPU_AVG: return (double)s->cpu / (double)s->calls;
M src/analyze/table_items.c :: analyze :: GPU max keeps the minimum
- if (s->calls == 0 || n.ggpu > s->gpu_max) s->gpu_max = n.ggpu;
+ if (s->calls == 0 || n.ggpu < s->gpu_max) s->gpu_max = n.ggpu;
M src/analyze/table_items.c :: analyze :: a later piece of a range cut at steps counts as a call
- if (!sp__model_call(t, node, &n, &start, &end)) return; /* counted with its first piece */
+ sp__model_call(t, node, &n, &start, &end);
M src/analyze/model_split.c :: analyze :: the pieces of a cut range are not summed
- add_times(&w->call, &t->nodes[p->node]);
+ (void)add_times;
M src/analyze/table_items.c :: analyze :: GPUMax sorts by the GPU total
- case SP__SORT_GPU_MAX: return (double)s->gpu_max;
+ case SP__SORT_GPU_MAX: return (double)s->gpu;
M src/analyze/table_items.c :: analyze :: CPUMin sorts descending
- case SP__SORT_CPU_MIN: return -(double)s->cpu_min;
+ case SP__SORT_CPU_MIN: return (double)s->cpu_min;
M src/analyze/model.c :: analyze :: Overview counts only the outermost range of a type
- m->calls[e->type]++;
+ if (e->parent < 0 || ev[e->parent].type != e->type) m->calls[e->type]++;
M src/analyze/intervals.c :: analyze :: merging shrinks a span instead of growing it
- else if (v[i].end > v[k].end) v[k].end = v[i].end; /* touching joins */
+ else if (v[i].end < v[k].end) v[k].end = v[i].end; /* touching joins */
M src/analyze/table_overview.c :: analyze :: Overview rows sorted by time ascending
- if (a->time != b->time) return a->time > b->time ? -1 : 1;
+ if (a->time != b->time) return a->time < b->time ? -1 : 1;
M src/analyze/table_overview.c :: analyze :: Overview drops the Memset GPU row
- for (int g = 0; g < 3; g++)
+ for (int g = 0; g < 2; g++)
M src/analyze/table_operator.c :: analyze :: Operator rows sorted backwards
- if (a->key != b->key) return a->key > b->key ? -1 : 1;
+ if (a->key != b->key) return a->key < b->key ? -1 : 1;
M src/export/chrome_json.c :: export :: ProfilerStep number cut one byte short
- put_joined(out, "ProfilerStep#", name + 12, len - 12, "");
+ put_joined(out, "ProfilerStep#", name + 13, len - 13, "");
M src/export/chrome_json.c :: export :: a reserved free written as [memory]
- int reserved = m->type == SP_MEM_RESERVED_ALLOCATE || m->type == SP_MEM_RESERVED_FREE;
+ int reserved = m->type == SP_MEM_RESERVED_ALLOCATE;
M src/export/chrome_json.c :: export :: world size may stay below rank + 1
- if (*world_size <= *rank) *world_size = *rank + 1;
+ if (*world_size < *rank) *world_size = *rank + 1;
M src/export/protobuf.c :: export :: .pb device context written from the stream
- e->context_id = dev->context;
+ e->context_id = dev->stream;
M src/export/protobuf.c :: export :: .pb parentid off by one
- node->parentid = e->parent < 0 ? 0 : (int64_t)e->parent + 1;
+ node->parentid = e->parent < 0 ? 0 : (int64_t)e->parent;
M src/export/protobuf.c :: export :: .pb correlation id of a runtime call from its callback id
- e->correlation_id = rt->correlation;
+ e->correlation_id = rt->cbid;
M src/export/nodetree.proto :: export :: HostTraceEventProto process_id on a wrong field number
- optional uint64 process_id = 5;
+ optional uint64 process_id = 7;
M src/export/nodetree.proto :: export :: DeviceTraceEventProto stream_id on a wrong field number
- optional uint64 stream_id = 7;
+ optional uint64 stream_id = 12;
M src/export/json_escape.c :: export :: tab escaped as \n
- case '\t': esc[1] = 't'; break;
+ case '\t': esc[1] = 'n'; break;
M src/load/load_pb.c :: load :: .pb stream read from the context id
- rec->stream = (uint32_t)d->stream_id;
+ rec->stream = (uint32_t)d->context_id;
M src/load/load_pb.c :: load :: .pb runtime correlation read from its callback id
- rt->correlation = e->correlation_id;
+ rt->correlation = e->callback_id;
M src/load/load_pb.c :: load :: .pb device context read from the device id
- rec->context = (uint32_t)d->context_id;
+ rec->context = (uint32_t)d->device_id;
M src/load/load_json.c :: load :: [reserved memory] loaded as plain memory
- return add_memory(l, kind == RESERVED);
+ return add_memory(l, 0);
M src/load/load_json.c :: load :: reserved peak keeps the minimum
- if ((uint64_t)e->total_reserved > p->reserved) p->reserved = (uint64_t)e->total_reserved;
+ if ((uint64_t)e->total_reserved < p->reserved) p->reserved = (uint64_t)e->total_reserved;
M src/load/json_lex.c :: load :: \u escapes below 0x800 encoded as three bytes
- } else if (cp < 0x800) {
+ } else if (cp < 0x80) {
M src/gpu/cupti_records.c :: gpu :: kernel context read from its stream
- r->context = k->contextId;
+ r->context = k->streamId;
M src/gpu/cupti_records.c :: gpu :: registers per thread read from local memory
- d->registers = k->registersPerThread;
+ d->registers = k->localMemoryPerThread;
M src/gpu/cupti_records.c :: gpu :: memcpy bytes dropped
- r->bytes = m->bytes;<NL>    r->detail.copy.copy_kind = kind;
+ r->bytes = 0;<NL>    r->detail.copy.copy_kind = kind;
M src/gpu/cupti_flusher.c :: gpu :: a start without a flush function starts a thread
- if (f.running || !flush) return;
+ if (f.running) return;
M src/gpu/kinds.c :: gpu :: an unknown kind name parses as the first kind
- return count - 1;
+ return 0;
M src/api/handlers.c :: api :: rank padded to the width of the world size, not its largest rank
- int width = snprintf(NULL, 0, "%ld", world_size - 1);
+ int width = snprintf(NULL, 0, "%ld", world_size);
M src/api/profiler.c :: api :: a step range named after the next step
- int len = snprintf(name, sizeof name, "ProfileStep#%lld", (long long)p->step_num);
+ int len = snprintf(name, sizeof name, "ProfileStep#%lld", (long long)p->step_num + 1);
M src/api/profiler.c :: api :: the scheduler asked about the previous step
- sp_status s = transition(p, sp_scheduler_state(&p->opts.scheduler, p->step_num));
+ sp_status s = transition(p, sp_scheduler_state(&p->opts.scheduler, p->step_num - 1));
M src/sys/utf8.c :: sys :: overlong three-byte forms accepted
- if (c == 0xE0) lo = 0xA0;
+ if (c == 0xE0) lo = 0x80;
M src/sys/utf8.c :: sys :: C0/C1 lead bytes accepted
- if (c < 0xC2 || c > 0xF4) return 0; /* continuation, overlong C0/C1, or >F4 */
+ if (c < 0xC0 || c > 0xF4) return 0; /* continuation, overlong C0/C1, or >F4 */
M tools/stepprof/commands.c :: cli :: --thread-sep ignored
- opts.thread_sep = true;
+ opts.thread_sep = false;
M tools/stepprof/commands.c :: cli :: --no-op-detail ignored
- opts.op_detail = false;
+ opts.op_detail = true;
M tools/stepprof/commands.c :: cli :: sort key names shifted (CPUMax and CPUMin swapped)
- static const char *const sort_names[] = {"CPUTotal", "CPUAvg", "CPUMax", "CPUMin",
+ static const char *const sort_names[] = {"CPUTotal", "CPUAvg", "CPUMin", "CPUMax",
M python/stepprof/_result.py :: python :: events() swaps start and end
- return [Event(n, TracerEventType(t), f, s, e, p, d, v)
+ return [Event(n, TracerEventType(t), f, e, s, p, d, v)
M python/stepprof/_result.py :: python :: tree() puts the first event's children at the root
- (nodes[p].children_node if p >= 0 else roots).append(node)
+ (nodes[p].children_node if p > 0 else roots).append(node)
M python/_stepprof/result.c :: python :: events as tuples swap start and end
- (long long)e.start_ns, (long long)e.end_ns,
+ (long long)e.end_ns, (long long)e.start_ns,
M python/stepprof/_enums.py :: python :: SortedKeys.GPUMax has GPUMin's value
-     GPUMax = 6
+     GPUMax = 7
MUTANTS
