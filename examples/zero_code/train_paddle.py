"""train_paddle.py: a paddle training loop (a 3-layer MLP, SGD, 30 steps,
paddle.io.DataLoader with two worker processes) with no profiler code in it.
Profile it with no change:

    stepprof run -- python train_paddle.py

Each optimizer step ends a step; steps 10 to 19 go to ./profiler_log/, with
paddle's operators inside them (docs/python.md, "Zero-code profiling")."""
import numpy as np
import paddle

STEPS, BATCH = 30, 16


class RandomData(paddle.io.Dataset):
    def __init__(self):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((STEPS * BATCH, 64)).astype("float32")
        self.y = rng.standard_normal((STEPS * BATCH, 1)).astype("float32")

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.x)


class MLP(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.l1 = paddle.nn.Linear(64, 128)
        self.l2 = paddle.nn.Linear(128, 1)

    def forward(self, x):
        return self.l2(paddle.nn.functional.relu(self.l1(x)))


def main():
    paddle.seed(0)
    paddle.set_device("cpu")
    loader = paddle.io.DataLoader(RandomData(), batch_size=BATCH, drop_last=True, num_workers=2)
    model = MLP()
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    for x, y in loader:
        loss = paddle.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()


if __name__ == "__main__":
    main()
