#!/usr/bin/env python3
"""Time (and optionally train to the end) the MNIST CA-CNN recipe in PyTorch.

The model is the one `caml bench` times: one CA-CNN layer (kernel k, depth d,
stride 1, 'same' padding, relu value) -> dense 128 relu -> dense 10, softmax
cross-entropy, batch 100, Adagrad lr 0.01. Run both on the same machine in one
session to compare, with the same list of thread counts:

    build/app/caml bench --synthetic --threads 1,2,4
    python3 bench/torch_reference.py --synthetic --threads 1,2,4

Each count starts from the same weights and batches; the table gives steps/s
and the speed-up over the first count, as caml bench's does.

Needs Debian's python3-torch (PyTorch 1.13) and python3-numpy:
    apt-get install python3-torch python3-numpy
With --train-steps N it also trains N steps and prints the test accuracy and
the sigma-map AUC (the same measure as `caml train`'s sigma_auc).
"""
import argparse
import gzip
import os
import resource
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def read_idx(path):
    for candidate in (path, path + ".gz"):
        if os.path.exists(candidate):
            opener = gzip.open if candidate.endswith(".gz") else open
            with opener(candidate, "rb") as f:
                data = f.read()
            magic, = struct.unpack(">I", data[:4])
            ndim = magic & 0xFF
            dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
            return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)
    raise FileNotFoundError(path)


def load_mnist(data_dir):
    d = os.path.join(data_dir, "mnist")
    xs = read_idx(os.path.join(d, "train-images-idx3-ubyte")).astype(np.float32) / 255
    ys = read_idx(os.path.join(d, "train-labels-idx1-ubyte")).astype(np.int64)
    xt = read_idx(os.path.join(d, "t10k-images-idx3-ubyte")).astype(np.float32) / 255
    yt = read_idx(os.path.join(d, "t10k-labels-idx1-ubyte")).astype(np.int64)
    return (torch.from_numpy(xs[:, None]), torch.from_numpy(ys),
            torch.from_numpy(xt[:, None]), torch.from_numpy(yt))


class CaCnnNet(torch.nn.Module):
    """out_p = chi_p * relu(W c_p + b) + (1 - chi_p) * w0, chi_p = sigmoid(u c_p + b_chi)."""

    def __init__(self, kernel, depth, context_aware=True):
        super().__init__()
        self.depth = depth
        self.context_aware = context_aware
        channels = depth + 1 if context_aware else depth
        self.conv = torch.nn.Conv2d(1, channels, kernel, padding="same")
        self.w0 = torch.nn.Parameter(torch.empty(depth).uniform_(-0.1, 0.1))
        self.hidden = torch.nn.Linear(depth * 28 * 28, 128)
        self.out = torch.nn.Linear(128, 10)

    def features(self, x):
        z = self.conv(x)
        if not self.context_aware:
            return F.relu(z), None
        v = F.relu(z[:, :self.depth])
        chi = torch.sigmoid(z[:, self.depth:])
        return chi * v + (1 - chi) * self.w0.view(1, -1, 1, 1), chi

    def forward(self, x):
        h, _ = self.features(x)
        return self.out(F.relu(self.hidden(h.flatten(1))))


def sigma_auc(images, chi):
    """ROC AUC of chi between pixels > 0.5 and pixels == 0 (ties half)."""
    img = images.flatten().numpy()
    c = chi.flatten().numpy()
    keep = (img > 0.5) | (img == 0)
    img, c = img[keep], c[keep]
    fg = img > 0.5
    order = np.argsort(c, kind="mergesort")
    ranks = np.empty(len(c))
    sorted_c = c[order]
    i = 0
    while i < len(c):
        j = i
        while j < len(c) and sorted_c[j] == sorted_c[i]:
            j += 1
        ranks[order[i:j]] = 0.5 * (i + 1 + j)
        i = j
    n_fg, n_bg = fg.sum(), (~fg).sum()
    auc = (ranks[fg].sum() - n_fg * (n_fg + 1) / 2) / (n_fg * n_bg)
    return max(auc, 1 - auc), ("foreground" if auc >= 0.5 else "background")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kernel", type=int, default=8)
    p.add_argument("--depth", type=int, default=8)
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--threads", default=str(os.cpu_count() or 1),
                   help="thread counts to time, e.g. 1,2,4 (default: every core)")
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--cnn", action="store_true", help="plain conv instead of CA-CNN")
    p.add_argument("--synthetic", action="store_true", help="random images instead of MNIST")
    p.add_argument("--data-dir", default=os.environ.get(
        "CAML_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "datasets", "data")))
    p.add_argument("--train-steps", type=int, default=0,
                   help="afterwards train this many steps and report test accuracy")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()

    try:
        counts = [int(c) for c in a.threads.split(",")]
        if not counts or min(counts) < 1 or len(set(counts)) != len(counts):
            raise ValueError
    except ValueError:
        p.error("--threads %s: give distinct whole numbers from 1, e.g. 1,2,4" % a.threads)

    torch.manual_seed(a.seed)
    if a.synthetic:
        g = torch.Generator().manual_seed(1)
        xs = torch.rand(10000, 1, 28, 28, generator=g) * (torch.rand(10000, 1, 28, 28, generator=g) > 0.8)
        ys = torch.randint(0, 10, (10000,), generator=g)
        xt, yt = xs[:1000], ys[:1000]
    else:
        xs, ys, xt, yt = load_mnist(a.data_dir)

    model = CaCnnNet(a.kernel, a.depth, context_aware=not a.cnn)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    n = xs.shape[0]

    def run(threads):
        torch.set_num_threads(threads)
        model.load_state_dict(start)
        opt = torch.optim.Adagrad(model.parameters(), lr=0.01, initial_accumulator_value=0.1)
        gen = torch.Generator().manual_seed(a.seed)

        def step():
            idx = torch.randint(0, n, (a.batch,), generator=gen)
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(xs[idx]), ys[idx])
            loss.backward()
            opt.step()

        for i in range(a.warmup):
            step()
        t0 = time.perf_counter()
        for i in range(a.steps):
            step()
        return a.steps / (time.perf_counter() - t0), step

    rates = []
    step = None
    for t in counts:
        rate, step = run(t)
        rates.append(rate)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"torch {torch.__version__}, {'CNN' if a.cnn else 'CA-CNN'} k{a.kernel} d{a.depth}, "
          f"batch {a.batch}, {'synthetic' if a.synthetic else 'MNIST'} data, "
          f"{os.cpu_count()} cores")
    if len(counts) == 1:
        print(f"training: {rates[0]:.1f} steps/s, {rates[0] * a.batch:.0f} images/s "
              f"({a.steps} steps after {a.warmup} warm-up) on {counts[0]} threads")
    else:
        print(f"training, {a.steps} steps after {a.warmup} warm-up at each thread count:")
        print(f"  {'threads':>7} {'steps/s':>10} {'images/s':>10} {'speed-up':>9}")
        for t, r in zip(counts, rates):
            print(f"  {t:>7} {r:>10.1f} {r * a.batch:>10.0f} {r / rates[0]:>8.2f}×")
    print(f"peak memory (max RSS): {peak_mb:.0f} MB")

    if a.train_steps > 0:
        for i in range(a.train_steps):
            step()
        with torch.no_grad():
            correct = 0
            for s in range(0, xt.shape[0], 1000):
                correct += (model(xt[s:s + 1000]).argmax(1) == yt[s:s + 1000]).sum().item()
            print(f"after {a.warmup + a.steps + a.train_steps} steps: test accuracy "
                  f"{correct / xt.shape[0]:.4f}")
            if not a.cnn:
                _, chi = model.features(xt[:1000])
                auc, side = sigma_auc(xt[:1000], chi)
                print(f"sigma_auc {auc:.4f} (chi higher on the {side})")


if __name__ == "__main__":
    sys.exit(main())
