/* throughput.h: how fast the recorded steps went and how much of the
 * hardware they used (semantics.md §10): per step and over all steps, the
 * step time, samples/s, tokens/s, FLOPs per step, achieved FLOP/s and MFU
 * (model FLOPs utilisation = achieved FLOP/s / the hardware's peak).
 *
 * It is pure arithmetic on a result: no printing (throughput_text.c renders
 * the Summary's block; the HTML report reads the struct), no clock. Every
 * figure is a finite number >= 0 when known and exactly -1 when unknown, so
 * no caller ever meets nan or inf, and "unknown" is never confused with 0.
 *
 * Where the figures come from:
 * - steps: the result's ProfileStep ranges (any thread, in start order, the
 *   later pieces of a split range skipped), numbered as steps.h numbers them;
 * - num_samples: the step's SP_EVENT_FLAG_SAMPLES value (sp_profiler_step's
 *   argument); a step without it has unknown samples/s and tokens/s;
 * - FLOPs per step: opts.flops_per_step when given, else the sum of the
 *   FLOPs of the operator records (with_flops) whose time lies in the step,
 *   when the result holds any operator record with FLOPs; else unknown;
 * - peak: opts.peak_tflops when given, else the table below by the device
 *   name in the result's GPU device properties, summed over the devices
 *   that ran kernels (the first device when no kernel was recorded); else
 *   unknown, with the reason in peak_unknown.
 *
 * Threads: any; the result must outlive the call only (nothing is borrowed
 * from it afterwards). */
#ifndef SP_ANALYZE_THROUGHPUT_H
#define SP_ANALYZE_THROUGHPUT_H

#include "collect.h"

#include <stddef.h>
#include <stdint.h>

/* The largest accepted option values: beyond them an input is a typo, and
 * every product of figures stays far from a double's range. */
#define SP__TPUT_MAX_TOKENS 1e12 /* tokens per sample */
#define SP__TPUT_MAX_FLOPS 1e30  /* FLOPs per step */
#define SP__TPUT_MAX_PEAK 1e9    /* peak TFLOP/s (1e21 FLOP/s) */

/* What the caller knows that the result does not. 0 means "not given" for
 * each; a value must otherwise be finite, > 0 and at most its maximum. */
typedef struct sp__tput_opts {
    double tokens_per_sample; /* tokens/s = samples/s x this */
    double flops_per_step;    /* FLOPs of one step; wins over recorded FLOPs */
    double peak_tflops;       /* the hardware's peak in TFLOP/s; wins over the table */
} sp__tput_opts;

/* Where the FLOPs per step came from. */
enum { SP__TPUT_FLOPS_NONE, SP__TPUT_FLOPS_RECORDED, SP__TPUT_FLOPS_GIVEN };

/* One recorded step. Every double is -1 when unknown. */
typedef struct sp__tput_step {
    int64_t number;           /* N of ProfileStep#N, else its index */
    int64_t start_ns, end_ns; /* step time = end_ns - start_ns, >= 0 */
    double num_samples;       /* as given to step() */
    double samples_per_s;     /* num_samples / step time; unknown for a zero-length step */
    double tokens_per_s;      /* samples_per_s x tokens_per_sample */
    double flops;             /* FLOPs of the step */
    double flops_per_s;       /* flops / step time */
    double mfu;               /* flops_per_s / peak, a fraction (1 = 100%) */
} sp__tput_step;

/* A figure over the steps that have it known: count of them, the median of
 * their per-step values, and the mean as total over total (for a rate,
 * the sum of its numerator over the sum of their step times, as paddle's
 * ips average is; for the step time and FLOPs, the plain mean). median and
 * mean are -1 when count is 0 or the total time is 0. */
typedef struct sp__tput_stat {
    size_t count;
    double median, mean;
} sp__tput_stat;

typedef struct sp__throughput {
    sp__tput_step *steps; /* in start order; owned, freed by sp__throughput_fini */
    size_t step_count;
    sp__tput_stat step_ns, samples_per_s, tokens_per_s, flops, flops_per_s, mfu;
    double tokens_per_sample; /* the option, -1 when not given */
    int flops_source;         /* SP__TPUT_FLOPS_* */
    double peak_flops;        /* FLOP/s of all the devices counted; -1 unknown */
    int peak_given;           /* 1: from opts.peak_tflops */
    size_t peak_devices;      /* devices whose table peaks were summed (0 when given) */
    /* The table row used ("H100 SXM", static) and the device name it matched
     * (the first counted device's, cut to 255 bytes); "" when none. */
    const char *peak_row;
    char device_name[256];
    /* Why a figure is unknown for every step, as a sentence with no final
     * full stop (static text); NULL when some step has it. */
    const char *samples_unknown, *tokens_unknown, *flops_unknown, *peak_unknown, *mfu_unknown;
} sp__throughput;

/* Checks opts; NULL when they are valid, else a sentence naming the bad
 * field, written to msg (always terminated). */
const char *sp__tput_opts_check(const sp__tput_opts *o, char *msg, size_t size);

/* Fills out from r (NULL counts as a result without steps) and o (NULL: no
 * option given). Returns 0; 1 when o fails sp__tput_opts_check (out then
 * empty); -1 when memory ran out (out empty). out needs no initialisation
 * and must be passed to sp__throughput_fini afterwards in every case. */
int sp__throughput_build(const sp_result *r, const sp__tput_opts *o, sp__throughput *out);
void sp__throughput_fini(sp__throughput *t);

/* The table's peak for one device of this name, in TFLOP/s (dense BF16/FP16
 * tensor math, the vendor's datasheet figure without sparsity), and its row
 * name in *row; -1 (row "") when the name matches no row. */
double sp__tput_peak_tflops(const char *device_name, const char **row);

#endif
