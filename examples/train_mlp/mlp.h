/* mlp.h: the model of the train_mlp demo, a classifier with two hidden ReLU
 * layers (in -> hidden1 -> hidden2 -> classes) trained with softmax
 * cross-entropy and SGD with momentum. Everything is float32 on the CPU with
 * a hand-written backward pass, so the demo needs no framework. Each
 * operator marks itself as a stepprof Operator range, the way a framework's
 * kernels would; the caller marks the forward/backward/optimizer phases.
 * An mlp is used by one thread at a time. */
#ifndef TRAIN_MLP_MLP_H
#define TRAIN_MLP_MLP_H

#include <stdint.h>

typedef struct mlp mlp;

/* Creates a model with He-initialised weights drawn from seed, with
 * activation buffers for batches of up to max_batch samples (every call below
 * takes n <= max_batch). Returns NULL when out of memory. */
mlp *mlp_create(int in, int hidden1, int hidden2, int classes, int max_batch, uint64_t seed);

/* Frees the model. NULL does nothing. */
void mlp_destroy(mlp *m);

/* Runs the forward pass on n samples (x is n x in, row-major; y holds class
 * ids) and keeps what backward needs. Returns the mean cross-entropy loss and
 * stores in *correct how many samples the model classified right. */
float mlp_forward(mlp *m, const float *x, const int *y, int n, int *correct);

/* Computes the gradients of the loss of the last mlp_forward call; x and y
 * must be the same arrays. */
void mlp_backward(mlp *m, const float *x, const int *y, int n);

/* One SGD step with momentum (v = momentum * v + grad; w -= lr * v). */
void mlp_sgd(mlp *m, float lr, float momentum);

#endif /* TRAIN_MLP_MLP_H */
