#!/usr/bin/env python3
"""The seed's three-panel figure, regenerated from memwall's own model (`memwall curves`):
(a) HBM intensity of a training step vs tokens per weight visit, (b) the batch needed to leave the
HBM wall vs hidden size, (c) where the joules go vs tokens per weight visit (d = 4096, A100-80GB).

Usage: seed_figure.py [--memwall build/memwall | --curves curves.json] [--out fig.png] [--stacked]
"""
import json
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figure_style  # noqa: E402

D_COLORS = {"768": "#b03a2e", "2048": "#d68910", "4096": "#1f618d", "12288": "#117a65"}
GPU_COLORS = {"A100-40GB": "#5dade2", "A100-80GB": "#1f618d", "H100-SXM": "#b03a2e", "B200 (approx.)": "#7d3c98"}
MODELS = [(768, "GPT-2 small"), (1600, "GPT-2 xl"), (4096, "7B / 13B"), (12288, "GPT-3 175B")]
SHARES = [("arith", "on-chip dynamic (datapath ≈10%, operand delivery ≈90%)", "#1f618d"),
          ("hbm_weights", "HBM: weights + grads", "#c0392b"), ("hbm_activations", "HBM: activations", "#e59866"),
          ("static", "static / leakage (∝ wall time)", "#95a5a6")]


def load_curves(args):
    if args.curves:
        return json.load(open(args.curves))
    out = subprocess.run([args.memwall, "curves"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def panel_intensity(ax, c):
    T = np.array(c["tokens"])
    for d, values in sorted(c["intensity"].items(), key=lambda kv: int(kv[0])):
        ax.plot(T, values, color=D_COLORS.get(d), lw=2, label=f"d = {d}")
    for name, ls in [("A100-80GB", "--"), ("H100-SXM", ":")]:
        beta = c["machine_balance"][name]
        ax.axhline(beta, color="k", ls=ls, lw=1.2)
        ax.text(1.2, beta * 1.12, f"{name}: β = {beta:.0f} FLOP/B", fontsize=8.5)
    beta_e = c["energy_balance_a100"]
    ax.axhline(beta_e, color="gray", ls="-.", lw=1)
    ax.text(1.2, beta_e * 0.62, f"β_E(A100) = {beta_e:.0f}", fontsize=8.5, color="gray")
    ax.plot(T, T / 2, color="0.6", lw=0.8)
    ax.text(4.0, 0.9, "I ≈ T/2", fontsize=8, color="0.4", rotation=39)
    ax.set(xscale="log", yscale="log", xlim=(1, 1e5), ylim=(0.3, 4000),
           xlabel="tokens per weight visit T (micro-batch × sequence length, per device)",
           ylabel="HBM operational intensity of fwd+bwd [FLOP / byte]")
    ax.set_title("(a) Training-step intensity vs. batch (A100 traffic model)", fontsize=10.5)
    ax.legend(fontsize=8.5, loc="lower right")
    ax.grid(alpha=0.3, which="both")


def panel_t_min(ax, c):
    d = np.array(c["hidden"])
    for name in sorted(c["gpu_order"], key=lambda n: list(GPU_COLORS).index(n) if n in GPU_COLORS else 99):
        t = np.array([np.inf if v is None else v for v in c["t_min"][name]])
        beta = c["machine_balance"][name]
        ax.plot(d, t, color=GPU_COLORS.get(name), lw=2,
                label=f"{name} (d_min ≈ {c['d_min'][name]:.0f}, 2β ≈ {2 * beta:.0f})")
    for x, label in MODELS:
        ax.axvline(x, color="0.75", lw=0.8)
        ax.text(x * 1.04, 108, label, fontsize=7.5, color="0.35", rotation=90, va="bottom")
    ax.set(xscale="log", yscale="log", xlim=(300, 30000), ylim=(100, 3e4), xlabel="hidden size d",
           ylabel="minimum tokens per weight visit T_min")
    ax.set_title("(b) Batch needed to leave the HBM wall: T_min = 12·b_w·d·β / (72d − a·β)", fontsize=10.5)
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(alpha=0.3, which="both")


def panel_energy(ax, c):
    T = np.array(c["tokens"])
    ax.stackplot(T, *[np.array(c["energy_share"][k]) for k, _, _ in SHARES], labels=[l for _, l, _ in SHARES],
                 colors=[col for _, _, col in SHARES], alpha=0.9)
    ax.set(xscale="log", xlim=(1, 1e5), ylim=(0, 1), xlabel="tokens per weight visit T",
           ylabel="share of energy per token-layer")
    ax.set_title("(c) Where the joules go, d = 4096 on A100-80GB", fontsize=10.5)
    ax.legend(fontsize=7.5, loc="upper left", framealpha=0.92)
    ax.grid(alpha=0.3)
    t_min = c["t_min_4096"]
    ax.axvline(t_min, color="k", ls="--", lw=1)
    ax.text(t_min * 1.1, 0.45, f"T_min ≈ {t_min:.0f}", fontsize=8.5)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = figure_style.parser(__doc__)
    p.add_argument("--memwall", default=os.path.join(here, "..", "build", "memwall"), help="the memwall binary")
    p.add_argument("--curves", help="a JSON file written by `memwall curves` (instead of running memwall)")
    figure_style.add_out(p, "fig_backprop_memory_wall.png")
    p.add_argument("--stacked", action="store_true", help="three rows (print) instead of one wide row")
    args = p.parse_args()
    c = load_curves(args)
    fig, axes = plt.subplots(3, 1, figsize=(7.4, 9.8)) if args.stacked else plt.subplots(1, 3, figsize=(16.5, 4.9))
    panel_intensity(axes[0], c)
    panel_t_min(axes[1], c)
    panel_energy(axes[2], c)
    fig.tight_layout()
    figure_style.save(fig, args.out, dpi=170, as_drawn=True)  # the seed's figure, pixel for pixel
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
