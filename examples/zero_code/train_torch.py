"""train_torch.py: a torch training loop (a 2-layer MLP, SGD, 30 steps,
torch.utils.data.DataLoader with two worker processes) with no profiler code
in it. Profile it with no change:

    stepprof run -- python train_torch.py

Each optimizer step ends a step (torch's global optimizer step hook); steps
10 to 19 go to ./profiler_log/, with torch's operators inside them
(docs/python.md, "Zero-code profiling")."""
import torch

STEPS, BATCH = 30, 16


def main():
    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(STEPS * BATCH, 64),
                                          torch.randn(STEPS * BATCH, 1))
    loader = torch.utils.data.DataLoader(data, batch_size=BATCH, drop_last=True, num_workers=2)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
