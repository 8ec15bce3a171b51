"""What a training run shows and leaves: its progress while it runs, the lines it ends with and its plots."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tqdm import tqdm

from golden.checkpoint import CHECKPOINT


def device_rate(stats: dict) -> float | None:
    """Simulated cycles per wall second of an epoch's training loop on a co-simulated device (else None)."""
    return stats["sim_cycles"] / max(stats["elapsed"], 1e-9) if "sim_cycles" in stats else None


def clock(seconds: float) -> str:
    """A duration as h:mm:ss or m:ss."""
    m, sec = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


class RunProgress:
    """The progress of a whole run, epoch by epoch: a tqdm bar on a terminal, a line every `every` seconds in a log.
    Counts training samples over all epochs, so its rate and ETA are the run's; the rate is taken over the wall time
    since this process started training, so the test-set inference after each epoch is in it."""

    def __init__(self, epochs: int, epoch_samples: int, initial: int, every: float = 15.0):
        self.epochs, self.epoch_samples, self.every = epochs, epoch_samples, every
        self.total, self.n, self.start_n = epochs * epoch_samples, initial, initial
        self.t0 = self.last = time.time()
        self.postfix = ""
        self.desc = ""
        self.bar = (
            tqdm(
                total=self.total,
                initial=initial,
                unit=" samples",
                file=sys.stdout,
                leave=False,
                mininterval=1.0,
                smoothing=0,
                dynamic_ncols=True,
                bar_format="{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} samples "
                "[{elapsed}, run ETA {remaining}, {rate_fmt}{postfix}]",
            )
            if sys.stdout.isatty()
            else None
        )

    def epoch(self, epoch: int, done: int) -> None:
        """Epoch `epoch` (1-based) starts or resumes with `done` of its samples trained."""
        self.desc = f"epoch {epoch}/{self.epochs}"
        if self.bar is not None:
            self.bar.set_description_str(self.desc, refresh=False)

    def update(self, k: int) -> None:
        self.n += k
        if self.bar is not None:
            self.bar.update(k)
            return
        now = time.time()
        if now - self.last >= self.every:
            self.last = now
            rate = (self.n - self.start_n) / max(now - self.t0, 1e-9)
            eta = (self.total - self.n) / max(rate, 1e-9)
            print(
                f"{self.desc}: {self.n}/{self.total} samples of the run, {rate:.1f} samples/s, run ETA "
                f"{clock(eta)}{self.postfix}",
                flush=True,
            )

    def write(self, line: str) -> None:
        """A line between the progress lines (above the bar on a terminal)."""
        if self.bar is not None:
            self.bar.write(line, file=sys.stdout)
        else:
            print(line, flush=True)

    def note(self, text: str) -> None:
        """What follows the rate: the loss so far, a co-simulated device's speed."""
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)
        self.postfix = f", {text}"

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def summary(report: dict, out: Path, verdict: str) -> str:
    """The lines a finished run ends with: its test accuracy, whether it is bit-exact (`verdict`), the files in
    `out`."""
    names = ("report.json", "weights.npz", "training.png", "ranks.png", CHECKPOINT, "rtl_state.npz")
    written = [n for n in names if (out / n).exists()]
    rs = report.get("rank_schedule") or {}
    budget = (
        ""
        if rs.get("budget_reached") is not False
        else f"  rank budget {rs['budget_text']} NOT reached: {rs['budget_measured']:,.0f} {rs['budget_unit']} against "
        f"at most {rs['budget_allowed']:,} (report.json rank_schedule)\n"
    )
    return (
        f"result: test accuracy {report['test_acc']:.4f} after {report['epochs']} epochs "
        f"({report['model']} on {report['dataset']}, seed {report['seed']}, {report['executor']})\n"
        f"  {verdict}\n" + budget + f"  files in {out}: {', '.join(written)}"
    )


def plot_history(history: list[dict], out: Path, rank_schedule: dict | None = None) -> None:
    if not history:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ep = [h["epoch"] for h in history]
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    ax[0].plot(ep, [h["train_loss"] for h in history], marker="o")
    ax[0].set(xlabel="epoch", ylabel="train loss", title="loss")
    ax[1].plot(ep, [h["train_acc"] for h in history], marker="o", label="train")
    ax[1].plot(ep, [h["test_acc"] for h in history], marker="o", label="test")
    ax[1].set(xlabel="epoch", ylabel="accuracy", title="accuracy")
    ax[1].legend()
    fig.tight_layout()
    fig.savefig(out / "training.png", dpi=100)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 4))
    if rank_schedule is None:
        for li, ranks in enumerate(zip(*[[r for layer in h["ranks"] for r in layer] for h in history])):
            ax.plot(ep, ranks, marker="o", label=f"bond {li}")
        ax.set(xlabel="epoch", ylabel="live rank", title="ranks")
    else:
        plot_rank_steps(ax, rank_schedule, history)
    if history[0]["ranks"] and any(history[0]["ranks"]):
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "ranks.png", dpi=100)
    plt.close(fig)


def plot_rank_steps(ax, rs: dict, history: list[dict]) -> None:
    """Every bond's live rank against the optimizer step, from the step each slice was pruned after, with the
    prune phase shaded, the step the budget was reached (or the prune phase ended short of it) marked and the test
    accuracy after each epoch on a second axis (what the pruning cost)."""
    last = len(history) * rs["steps_per_epoch"]
    for l, layer in enumerate(rs["full_ranks"]):
        for k, full in enumerate(layer):
            steps = sorted(rs["pruned_at_step"].get(f"{l}.{k}", {}).values())
            xs = [0, *[s + 1 for s in steps], last]
            ys = [full, *[full - i for i in range(1, len(steps) + 1)], full - len(steps)]
            ax.step(xs, ys, where="post", label=f"bond {l}.{k}")
    start, ended = rs["prune_start_step"], rs["prune_ended_step"]
    ax.axvspan(start, last if ended is None else ended, color="0.9", label="prune phase")
    if rs["budget_text"] is not None and ended is not None:
        ax.axvline(
            ended,
            color="green" if rs["budget_reached"] else "red",
            linestyle="--",
            label=f"budget {rs['budget_text']} " + ("reached" if rs["budget_reached"] else "not reached"),
        )
    title = f"live ranks: {rs['live_core_params']} of {rs['full_core_params']} core parameters"
    ax.set(xlabel=f"optimizer step ({rs['steps_per_epoch']} an epoch)", ylabel="live rank", title=title)
    acc = ax.twinx()
    acc.plot(
        [h["epoch"] * rs["steps_per_epoch"] for h in history],
        [100 * h["test_acc"] for h in history],
        color="black",
        marker="o",
        linestyle=":",
        label="test accuracy",
    )
    acc.set_ylabel("test accuracy after the epoch (%)")
    acc.legend(loc="lower left", fontsize=8)
