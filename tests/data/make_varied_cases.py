#!/usr/bin/env python3
"""Expected step figures for varied scenarios, computed with the seed's own functions.

Regenerate (from the repository root, with the seed beside the checkout):
  /usr/bin/python3 tests/data/make_varied_cases.py ../shared/seed > tests/data/varied_cases.csv

Each row is one data-parallel scenario; the expected columns follow the seed's worked_example()
loop body (layer_step per micro-batch x layers x micro-batches, optimizer sharded over N at HBM
bandwidth, ring all-reduce b_ar P (N-1)/N / link bandwidth, static power over the step time),
generalised to any GPU, d, L, s, vocab, T, micro-batches, N and link bandwidth.
"""
import csv
import importlib.util
import os
import sys

seed_dir = sys.argv[1] if len(sys.argv) > 1 else "../shared/seed"
spec = importlib.util.spec_from_file_location("seed", os.path.join(seed_dir, "backprop_memory_wall.py"))
seed = importlib.util.module_from_spec(spec)
spec.loader.exec_module(seed)

# name, gpu, d, L, s, vocab, T per micro-batch, micro-batches, N, link bytes/s
CASES = [
    ("h100-d2048-n16", "H100-SXM", 2048, 24, 1024, 32000, 1024, 2, 16, 50e9),
    ("a100-40-d1024-n4", "A100-40GB", 1024, 12, 0, 0, 512, 1, 4, 25e9),
    ("b200-d8192-n32", "B200 (approx.)", 8192, 48, 4096, 100000, 4096, 4, 32, 900e9),
    ("a100-80-d768-single", "A100-80GB", 768, 12, 1024, 50257, 1024, 3, 1, 25e9),
    ("h100-d12288-n128", "H100-SXM", 12288, 96, 2048, 50000, 2048, 1, 128, 50e9),
    ("a100-80-d4096-n2-slow", "A100-80GB", 4096, 32, 2048, 50000, 2048, 1, 2, 12.5e9),
    ("a100-80-t1-n8", "A100-80GB", 4096, 32, 2048, 50000, 1, 1, 8, 300e9),
    ("a100-40-d2048-accum16", "A100-40GB", 2048, 16, 2048, 32000, 2048, 16, 8, 100e9),
    ("b200-d512-n3", "B200 (approx.)", 512, 6, 512, 1000, 256, 2, 3, 50e9),
    ("h100-d4096-n256-large-T", "H100-SXM", 4096, 32, 8192, 50000, 32768, 1, 256, 50e9),
    ("a100-80-d16384-n64", "A100-80GB", 16384, 8, 0, 0, 8192, 2, 64, 25e9),
]

out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["name", "gpu", "hidden", "layers", "seq_len", "vocab", "tokens_per_microbatch", "microbatches",
              "gpus", "link_bytes_per_s", "step_time_s", "energy_j", "e_arith_j", "e_hbm_j", "e_static_j",
              "t_allreduce_s", "t_optimizer_s", "intensity", "slowdown"])
for name, gname, d, L, s, vocab, Tm, nm, N, link in CASES:
    g = seed.GPUS[gname]
    P = 12 * d * d * L + 2 * vocab * d
    r = seed.layer_step(d, Tm, g, s=s)
    t_layers = r["t"] * L * nm
    E_arith = r["E_arith"] * L * nm
    E_hbm = (r["E_hbm_w"] + r["E_hbm_a"]) * L * nm
    B_opt = seed.B_OPT_DEFAULT * P / N
    t_opt = B_opt / g["bw"]
    E_hbm += B_opt * g["e_hbm"]
    t_ar = seed.B_AR_DEFAULT * P * (N - 1) / N / link if N > 1 else 0.0
    t = t_layers + t_opt + t_ar
    E_static = g["p_static"] * t
    E = E_arith + E_hbm + E_static
    F_step = r["F"] * L * nm
    I_step = F_step / ((r["B_W"] + r["B_act"]) * L * nm + B_opt)
    out.writerow([name, gname, d, L, s, vocab, Tm, nm, N, repr(link), repr(t), repr(E), repr(E_arith), repr(E_hbm),
                  repr(E_static), repr(t_ar), repr(t_opt), repr(I_step), repr(t / (F_step / g["peak"]))])
