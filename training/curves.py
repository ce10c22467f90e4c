"""Training-curve PNG from the metrics log (matplotlib, headless)."""
from __future__ import annotations

import json
from pathlib import Path


def plot_curves(metrics_path: Path, out_path: Path) -> None:
    """Plot training loss, validation loss and validation BLEU against steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = [json.loads(line) for line in Path(metrics_path).read_text(encoding="utf-8").splitlines() if line.strip()]
    train = [r for r in records if r["kind"] == "train"]
    valid = [r for r in records if r["kind"] == "valid"]
    fig, (loss_ax, bleu_ax) = plt.subplots(1, 2, figsize=(11, 4))
    loss_ax.plot([r["step"] for r in train], [r["train_loss"] for r in train], label="train (label-smoothed)", lw=0.8)
    loss_ax.plot([r["step"] for r in valid], [r["valid_loss"] for r in valid], "o-", label="validation")
    loss_ax.set(xlabel="step", ylabel="cross-entropy per token", title="loss")
    loss_ax.legend()
    bleu_ax.plot([r["step"] for r in valid], [r["valid_bleu"] for r in valid], "o-", color="tab:green")
    bleu_ax.set(xlabel="step", ylabel="sacreBLEU (greedy)", title="validation BLEU")
    for ax in (loss_ax, bleu_ax):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_path, dpi=100)
    plt.close(fig)
