/* mlp.c: the train_mlp model: three dense layers, ReLU, softmax
 * cross-entropy, a hand-written backward pass and SGD with momentum, all in
 * plain float32 loops. The loops are ordered so that the innermost one walks
 * contiguous memory and the compiler can vectorise it; that is all the
 * speed the demo needs. Each operator opens and closes its own stepprof
 * Operator range with sp_range_begin/sp_range_end, as a framework kernel
 * would, so the trace shows where inside forward and backward time goes. */
#include "mlp.h"

#include "rng.h"

#include <stepprof/stepprof.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { LAYERS = 3 };

/* One dense layer. act holds the output for the current batch: the
 * pre-activation, overwritten in place by ReLU on hidden layers (ReLU's
 * output is positive exactly where its input was, so backward can use it as
 * the mask). grad is the loss gradient with respect to act. */
typedef struct layer {
    int in, out;
    float *w, *b;   /* in x out row-major, and out */
    float *gw, *gb; /* gradients of the last batch */
    float *vw, *vb; /* momentum */
    float *act, *grad; /* max_batch x out */
} layer;

struct mlp {
    layer layers[LAYERS];
    float *prob; /* max_batch x classes: softmax output, kept for backward */
};

/* ------------------------------------------------------------------------ */
/* Operators                                                                 */

/* c = a . w for a (n x in) and w (in x out). */
static void matmul(const float *restrict a, const float *restrict w, float *restrict c,
                   int n, int in, int out)
{
    sp_range_begin(SP_EVENT_OPERATOR, "matmul");
    for (int i = 0; i < n; i++) {
        float *ci = c + (size_t)i * out;
        memset(ci, 0, sizeof(float) * (size_t)out);
        for (int k = 0; k < in; k++) {
            float aik = a[(size_t)i * in + k];
            const float *wk = w + (size_t)k * out;
            for (int j = 0; j < out; j++) ci[j] += aik * wk[j];
        }
    }
    sp_range_end();
}

static void add_bias(float *restrict c, const float *restrict b, int n, int out)
{
    sp_range_begin(SP_EVENT_OPERATOR, "add_bias");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < out; j++) c[(size_t)i * out + j] += b[j];
    sp_range_end();
}

static void relu(float *x, size_t len)
{
    sp_range_begin(SP_EVENT_OPERATOR, "relu");
    for (size_t i = 0; i < len; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
    sp_range_end();
}

/* Writes the softmax of each row of logits into prob and returns the mean
 * cross-entropy. Subtracting the row maximum keeps expf() from overflowing. */
static float softmax_cross_entropy(const float *logits, const int *y, float *prob, int n,
                                   int k, int *correct)
{
    sp_range_begin(SP_EVENT_OPERATOR, "softmax_cross_entropy");
    double loss = 0.0;
    *correct = 0;
    for (int i = 0; i < n; i++) {
        const float *z = logits + (size_t)i * k;
        float *p = prob + (size_t)i * k;
        int best = 0;
        for (int j = 1; j < k; j++) best = z[j] > z[best] ? j : best;
        float sum = 0.0f;
        for (int j = 0; j < k; j++) sum += p[j] = expf(z[j] - z[best]);
        for (int j = 0; j < k; j++) p[j] /= sum;
        loss -= log(fmax(p[y[i]], 1e-30));
        *correct += best == y[i];
    }
    sp_range_end();
    return (float)(loss / n);
}

/* d(mean loss)/d(logits) = (softmax - one_hot) / n. */
static void softmax_cross_entropy_grad(const float *prob, const int *y, float *grad, int n,
                                       int k)
{
    sp_range_begin(SP_EVENT_OPERATOR, "softmax_cross_entropy_grad");
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < k; j++)
            grad[(size_t)i * k + j] = (prob[(size_t)i * k + j] - (j == y[i])) / (float)n;
    }
    sp_range_end();
}

static void relu_grad(const float *act, float *grad, size_t len)
{
    sp_range_begin(SP_EVENT_OPERATOR, "relu_grad");
    for (size_t i = 0; i < len; i++) grad[i] = act[i] > 0.0f ? grad[i] : 0.0f;
    sp_range_end();
}

static void add_bias_grad(const float *restrict grad, float *restrict gb, int n, int out)
{
    sp_range_begin(SP_EVENT_OPERATOR, "add_bias_grad");
    memset(gb, 0, sizeof(float) * (size_t)out);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < out; j++) gb[j] += grad[(size_t)i * out + j];
    sp_range_end();
}

/* For c = a . w: gw = a^T . gc and, unless ga is NULL, ga = gc . w^T. The
 * first layer passes NULL because nothing needs the input's gradient. */
static void matmul_grad(const float *restrict a, const float *restrict w,
                        const float *restrict gc, float *restrict gw, float *restrict ga,
                        int n, int in, int out)
{
    sp_range_begin(SP_EVENT_OPERATOR, "matmul_grad");
    memset(gw, 0, sizeof(float) * (size_t)in * (size_t)out);
    for (int i = 0; i < n; i++) {
        const float *gci = gc + (size_t)i * out;
        for (int k = 0; k < in; k++) {
            float aik = a[(size_t)i * in + k];
            float *gwk = gw + (size_t)k * out;
            for (int j = 0; j < out; j++) gwk[j] += aik * gci[j];
        }
        for (int k = 0; ga && k < in; k++) {
            const float *wk = w + (size_t)k * out;
            float s = 0.0f;
            for (int j = 0; j < out; j++) s += gci[j] * wk[j];
            ga[(size_t)i * in + k] = s;
        }
    }
    sp_range_end();
}

static void sgd(float *restrict p, float *restrict v, const float *restrict g, size_t len,
                float lr, float momentum)
{
    for (size_t i = 0; i < len; i++) {
        v[i] = momentum * v[i] + g[i];
        p[i] -= lr * v[i];
    }
}

/* ------------------------------------------------------------------------ */
/* Model                                                                     */

static int layer_init(layer *l, int in, int out, int max_batch, rng *r)
{
    size_t nw = (size_t)in * out, na = (size_t)max_batch * out;
    l->in = in;
    l->out = out;
    l->w = malloc(sizeof(float) * nw);
    l->gw = calloc(nw, sizeof(float));
    l->vw = calloc(nw, sizeof(float));
    l->b = calloc((size_t)out, sizeof(float));
    l->gb = calloc((size_t)out, sizeof(float));
    l->vb = calloc((size_t)out, sizeof(float));
    l->act = calloc(na, sizeof(float));
    l->grad = calloc(na, sizeof(float));
    if (!l->w || !l->gw || !l->vw || !l->b || !l->gb || !l->vb || !l->act || !l->grad)
        return -1;
    /* He initialisation keeps the ReLU activations' scale steady with depth. */
    float scale = sqrtf(2.0f / (float)in);
    for (size_t i = 0; i < nw; i++) l->w[i] = scale * rng_gauss(r);
    return 0;
}

static void layer_fini(layer *l)
{
    free(l->w);
    free(l->gw);
    free(l->vw);
    free(l->b);
    free(l->gb);
    free(l->vb);
    free(l->act);
    free(l->grad);
}

mlp *mlp_create(int in, int hidden1, int hidden2, int classes, int max_batch, uint64_t seed)
{
    int sizes[LAYERS + 1] = {in, hidden1, hidden2, classes};
    mlp *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    rng r = rng_stream(seed, 0);
    for (int i = 0; i < LAYERS; i++) {
        if (layer_init(&m->layers[i], sizes[i], sizes[i + 1], max_batch, &r) != 0) goto fail;
    }
    m->prob = calloc((size_t)max_batch * classes, sizeof(float));
    if (!m->prob) goto fail;
    return m;
fail:
    mlp_destroy(m);
    return NULL;
}

void mlp_destroy(mlp *m)
{
    if (!m) return;
    for (int i = 0; i < LAYERS; i++) layer_fini(&m->layers[i]);
    free(m->prob);
    free(m);
}

float mlp_forward(mlp *m, const float *x, const int *y, int n, int *correct)
{
    const float *input = x;
    for (int i = 0; i < LAYERS; i++) {
        layer *l = &m->layers[i];
        matmul(input, l->w, l->act, n, l->in, l->out);
        add_bias(l->act, l->b, n, l->out);
        if (i < LAYERS - 1) relu(l->act, (size_t)n * l->out);
        input = l->act;
    }
    layer *top = &m->layers[LAYERS - 1];
    return softmax_cross_entropy(top->act, y, m->prob, n, top->out, correct);
}

void mlp_backward(mlp *m, const float *x, const int *y, int n)
{
    layer *top = &m->layers[LAYERS - 1];
    softmax_cross_entropy_grad(m->prob, y, top->grad, n, top->out);
    for (int i = LAYERS - 1; i >= 0; i--) {
        layer *l = &m->layers[i];
        layer *below = i > 0 ? &m->layers[i - 1] : NULL;
        if (i < LAYERS - 1) relu_grad(l->act, l->grad, (size_t)n * l->out);
        add_bias_grad(l->grad, l->gb, n, l->out);
        matmul_grad(below ? below->act : x, l->w, l->grad, l->gw, below ? below->grad : NULL,
                    n, l->in, l->out);
    }
}

void mlp_sgd(mlp *m, float lr, float momentum)
{
    sp_range_begin(SP_EVENT_OPERATOR, "sgd");
    for (int i = 0; i < LAYERS; i++) {
        layer *l = &m->layers[i];
        sgd(l->w, l->vw, l->gw, (size_t)l->in * l->out, lr, momentum);
        sgd(l->b, l->vb, l->gb, (size_t)l->out, lr, momentum);
    }
    sp_range_end();
}
