#!/usr/bin/python3
"""Writes scenarios/published/: one memwall scenario per published training layout.

The layouts are ../shared/published-layouts/layouts.json (75 real runs as their sources state them;
no results). Each file names its source and lists what it assumes where the source is silent or
where memwall's catalog has no exact match. The mapping rules are the ones below, the same for
every row; nothing is tuned per row. Run again after changing a rule:

    /usr/bin/python3 scripts/published_scenarios.py [layouts.json] [out_dir]
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The source's GPU -> memwall's catalog name, and the catalog fabric of that system.
GPUS = [("A100", "A100-80GB", "dgx-a100-hdr"), ("H100", "H100-SXM", "dgx-h100-ndr"),
        ("GB200", "GB200", "gb200-nvl72"), ("GB300", "GB300", "gb200-nvl72"), ("B200", "B200", "dgx-h100-ndr"),
        ("H800", "H800", "hgx-h800-ndr")]
# Vocabularies the source leaves out, by model family (the models' own tokenizers).
VOCAB = {"GPT3": 50257, "LLAMA2": 32000, "NEMOTRON": 256000, "MIXTRAL": 32000}
# Facts layouts.json leaves out that the run's own published launch script states: run id -> (recompute,
# where it is stated). Read from the script, never chosen to make a row fit or match.
STATED_RECOMPUTE = {
    "bloom_176b_384gpu": ("full", "bigscience-workshop/bigscience train/tr11-176B-ml/tr11-176B-ml.slurm: "
                                  "--checkpoint-activations"),
}

# Pipeline layouts the run's own recipe states (Megatron-Core's pipeline_model_parallel_layout syntax;
# 'm' a multi-token-prediction layer), where the layers do not split evenly: run id -> (layout, where it
# is stated). Read from the recipe, never chosen to make a row fit or match.
STATED_LAYOUT = {
    "mb_25.09_h100_deepseekv3_dropless": (
        "Et|(tt|)*30mL", "NVIDIA-NeMo/Megatron-Bridge v0.1.0rc4 scripts/performance/run_script.py: layout "
        "Et|(tt|)*30mL for h100; the DeepSeek-V3 recipe's mtp_num_layers 1"),
    "mb_25.11_gb200_deepseekv3_bf16": (
        "Et*3|(t*4|)*14ttL", "NVIDIA-NeMo/Megatron-Bridge branch gaod/r0.2.0_test (commit d19cb73c), the 25.11 "
        "GB200 DeepSeek-V3 'w/o MTP' setting: layout Et*3|(t*4|)*14ttL, mtp_num_layers None"),
    "mb_25.11_gb300_deepseekv3_bf16": (
        "Et*3|(t*4|)*14ttL", "NVIDIA-NeMo/Megatron-Bridge branch gaod/r0.2.0_test (commit d19cb73c), the 25.11 "
        "GB300 DeepSeek-V3 setting: layout Et*3|(t*4|)*14ttL, mtp_num_layers None"),
    "automodel_deepseekv3_256gpu": (
        "Ett|(tt|)*28(t|)*2tL", "NVIDIA-NeMo/Automodel 89e3a9fd examples/benchmark/configs/deepseek_v3_te_deepep.yaml "
        "(layers_per_stage 2) and its stage splitter: 32 stages, the first 29 of 2 layers, the last 3 of 1"),
}
# Training settings the run's own recipe or report states where layouts.json is silent (recompute
# modules, optimizer dtypes, FP8 weights) or where its row contradicts itself: run id -> (keys, where).
# Read from the source, never chosen to make a row fit or match. Keys under "training" replace
# memwall's defaults; "micro_batch" and "virtual_stages" replace the row's where it is inconsistent.
STATED_TRAINING = {
    "nemo_24.07_h100_nemotron_340b": (
        {"training": {"activation_recompute": "selective", "fp8_params": True,
                      "optimizer_dtypes": {"main_params": "bf16", "exp_avg": "bf16", "exp_avg_sq": "bf16"}}},
        "the 24.07 perf config is not public; NVIDIA/dgxc-benchmarking v24.11.1 (35a9aecc, NeMo 24.09) "
        "nemotron/nemotron4-340b-synth.yaml and configure.sh run this layout with selective recompute, "
        "fp8_params, distributed_fused_adam with dtype bf16 (state and stored params bf16), grad_sync_dtype bf16"),
    "mb_25.11_h100_gptoss120b_bf16": (
        {"micro_batch": 1, "training": {"activation_recompute": "none"}},
        "the table's MBS 4 and GA 2 contradict its GBS 512 on DP 16 (512 / (4 x 16) = 8); the released "
        "config (Megatron-Bridge v0.2.0 7af9601c scripts/performance/configs/gpt_oss/workload_base_configs.py) "
        "sets micro_batch_size 1, and its recompute_modules [layernorm, moe_act] act only with "
        "recompute_granularity selective, which nothing sets there (Megatron-LM 0d8e0714 transformer_layer.py)"),
    "mb_25.11_gb200_deepseekv3_bf16": (
        {"training": {"activation_recompute": "selective", "recompute_modules": ["mla_up_proj"],
                      "grad_reduce_in_fp32": False,
                      "optimizer_dtypes": {"main_params": "fp32", "exp_avg": "bf16", "exp_avg_sq": "bf16"}}},
        "Megatron-Bridge branch gaod/r0.2.0_test (d19cb73c) GB200 setting: recompute_modules [mla_up_proj], "
        "granularity selective; v0.2.0 deepseek_llm_pretrain.py: grad_reduce_in_fp32 False, precision-aware "
        "optimizer with fp32 main params and bf16 exp_avg / exp_avg_sq"),
    "mb_25.11_gb300_deepseekv3_bf16": (
        {"virtual_stages": 8,
         "training": {"activation_recompute": "selective", "recompute_modules": ["mlp", "moe_act"],
                      "grad_reduce_in_fp32": False,
                      "optimizer_dtypes": {"main_params": "fp32", "exp_avg": "bf16", "exp_avg_sq": "bf16"}}},
        "Megatron-Bridge branch gaod/r0.2.0_test (d19cb73c) GB300 setting: PP 2, EP 32, recompute_modules "
        "[mlp, moe_act], layout Et*3|(t*4|)*14ttL: its 16 pieces over PP 2 are VP 8 (Megatron-LM asserts the "
        "layout matches VP), not the table's VP 4; v0.2.0 deepseek_llm_pretrain.py: grad_reduce_in_fp32 False, "
        "fp32 main params, bf16 exp_avg / exp_avg_sq"),
    "automodel_deepseekv3_256gpu": (
        {"training": {"activation_recompute": "full",
                      "optimizer_dtypes": {"main_params": "none", "exp_avg": "bf16", "exp_avg_sq": "bf16"}}},
        "NVIDIA-NeMo/Automodel 89e3a9fd examples/benchmark/configs/deepseek_v3_te_deepep.yaml: "
        "activation_checkpointing true (each decoder block checkpointed: components/moe/parallelizer.py "
        "apply_ac); the model is cast to bf16 and torch.optim.Adam keeps its state in the parameters' dtype"),
    "deepseekv3_2048gpu": (
        {"training": {"activation_recompute": "selective",
                      "recompute_modules": ["layernorm", "mla_up_proj", "moe_act"], "grad_reduce_in_fp32": True,
                      "optimizer_dtypes": {"main_params": "fp32", "exp_avg": "bf16", "exp_avg_sq": "bf16"}}},
        "DeepSeek-V3 report (arXiv 2412.19437) 3.2.3: all RMSNorm and MLA up-projections recomputed; 3.3.2: "
        "the MoE SwiGLU's output recomputed from its cached input; 3.3.3: AdamW moments in BF16, master "
        "weights and gradients in FP32"),
}

# DeepSeek-V3's multi-head latent attention (deepseek-ai/DeepSeek-V3 config.json), for rows that name
# MLA without its sizes.
DEEPSEEK_V3_MLA = {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_head_dim": 128, "qk_rope_head_dim": 64,
                   "v_head_dim": 128}


def mla_of(row):
    """MLA sizes from the row's note (e.g. 'MLA: q_lora_rank 1536, kv_lora_rank 512, qk_head_dim 128,
    qk_pos_emb_head_dim 64, v_head_dim 128'), or DeepSeek-V3's for a row that names MLA; else None."""
    note = (row["moe"] or {}).get("note") or ""
    if "MLA:" in note:
        text = note.split("MLA:", 1)[1].split(";", 1)[0]
        sizes = dict((k.strip(), int(v)) for k, v in (part.strip().rsplit(" ", 1) for part in text.split(",")))
        sizes["qk_rope_head_dim"] = sizes.pop("qk_pos_emb_head_dim")
        return sizes
    if "MLA" in str(row["model"]) and "deepseek" in str(row["model"]).lower():
        return dict(DEEPSEEK_V3_MLA)
    return None


def gpu_and_fabric(row, assumed):
    stated = row["gpu"]
    for prefix, name, fabric in GPUS:
        if stated.startswith(prefix) and not (prefix == "B200" and stated.startswith("GB")):
            if stated != name and not stated.startswith(("A100-SXM4-80GB", "H100-SXM-80GB")):
                assumed.append(f"GPU '{stated}' as the catalog's {name}")
            if prefix == "B200":
                assumed.append("no DGX B200 fabric in the catalog: DGX H100's (NVLink 4, NDR)")
            if prefix == "GB300":
                assumed.append("GB300 NVL72 as the catalog's gb200-nvl72 fabric (the same NVLink 5 domain)")
            if "RoCE" in row["interconnect"]:
                assumed.append(f"fabric '{row['interconnect']}' as {fabric}")
            return name, fabric
    return stated, "dgx-h100-ndr"  # not in the catalog: memwall refuses the GPU by name


def model_of(row, assumed):
    m = {"hidden": row["hidden"], "layers": row["layers"], "heads": row["heads"]}
    m["kv_heads"] = row["kv_heads"] or row["heads"]
    if row["head_dim"] and row["head_dim"] * row["heads"] != row["hidden"]:
        assumed.append(f"head size {row['head_dim']} x {row['heads']} heads != hidden: memwall uses hidden / heads")
    ffn = str(row["ffn_type"]).lower()
    if "swiglu" in ffn:
        m["ffn"] = "swiglu"
    elif "gated" in ffn:
        m["ffn"] = "swiglu"
        assumed.append(f"MLP '{row['ffn_type']}' counted as SwiGLU (gated, 3 matrices)")
    elif "squared_relu" in ffn:
        m["ffn"] = "gelu"
        assumed.append("squared-ReLU MLP counted as GELU (2 matrices, same FLOPs)")
    else:
        m["ffn"] = "gelu"
        if row["ffn_type"] is None:
            assumed.append("MLP type not stated: GELU (2 matrices)")
    if row["ffn_hidden"]:
        m["ffn_hidden"] = row["ffn_hidden"]
    elif not row["moe"]:
        assumed.append("MLP width not stated: 4 x hidden")
    vocab = row["vocab"]
    if not vocab:
        family = next((f for f in VOCAB if row["model"].upper().startswith(f)), None)
        vocab = VOCAB.get(family, 32000)
        assumed.append(f"vocabulary not stated: {vocab} ({family or 'unknown family'})")
    m["vocab"] = vocab
    m["seq_len"] = row["seq"]
    # Narayanan et al. 2021 and Korthikanti et al. 2022 count full attention; the others use causal kernels.
    m["causal"] = not row["id"].startswith(("narayanan", "korthikanti", "bloom"))
    if row["moe"]:
        mo = row["moe"]
        moe = {"experts": mo["experts"], "top_k": mo["top_k"], "expert_ffn_hidden": mo["expert_ffn"],
               "shared_experts": mo.get("shared_experts") or 0}
        first_dense = mo.get("first_dense") or mo.get("dense_layers_first")
        if first_dense:
            moe["first_dense"] = first_dense
        if mo.get("shared_ffn") and mo["shared_ffn"] != mo["expert_ffn"]:
            assumed.append(f"shared expert width {mo['shared_ffn']} taken as the routed experts' {mo['expert_ffn']}")
        note = mo.get("note") or ""
        if "MLA:" in note:  # the MLA sizes are modelled; what else the note says is not
            note = note.split(";", 1)[1].strip() if ";" in note else ""
        if note:
            assumed.append(f"not modelled: {note}")
        m["moe"] = moe
    layout = STATED_LAYOUT.get(row["id"], ("", ""))[0]
    if "m" in layout:  # the recipe trains multi-token prediction modules, one per 'm'
        m["mtp_layers"] = layout.count("m")
    mla = mla_of(row)
    if mla:
        m["mla"] = mla
        m.pop("kv_heads", None)
        if not (row["moe"] or {}).get("note"):
            assumed.append("MLA sizes not stated: DeepSeek-V3's (deepseek-ai/DeepSeek-V3 config.json)")
    return m


def parallelism_of(row, assumed):
    p = {"tensor": row["tp"], "pipeline": row["pp"]}
    if row["cp"] and row["cp"] > 1:
        p["context"] = row["cp"]
    if row["ep"] and row["ep"] > 1:
        p["expert"] = row["ep"]
        if row["tp"] > 1 and (row["dp"] * (row["cp"] or 1)) % row["ep"] != 0:
            p["expert_tensor_parallel"] = 1
            assumed.append("expert_tensor_parallel 1: EP exceeds DP x CP, so the source folds experts over TP ranks")
    vp = STATED_TRAINING.get(row["id"], ({}, ""))[0].get("virtual_stages", row["vp"])
    if isinstance(vp, int) and vp > 1:
        p["virtual_stages"] = vp
        # Megatron-Core's split of 126 (Llama 3.1 405B) and 94 (Qwen3 235B) layers over PP x VP.
        if (row["layers"] + 2) % (row["pp"] * vp) == 0 and row["layers"] % (row["pp"] * vp) != 0:
            p["account_for_embedding"] = True
            p["account_for_loss"] = True
            assumed.append("embedding and loss counted as pipeline layers (Megatron-Core's account_for_*)")
    elif vp is not None and not isinstance(vp, int):
        assumed.append(f"pipeline schedule '{vp}' as 1F1B")
    if row["id"] in STATED_LAYOUT:
        layout, where = STATED_LAYOUT[row["id"]]
        p["pipeline_layout"] = f'"{layout}"'
        assumed.append(f"pipeline layout {layout}, as the recipe states ({where})")
    sp = row["sp"]
    if sp is None and row["tp"] > 1 and row["id"].startswith(("mb_", "nemo_", "megatronlm_")):
        sp = True
        assumed.append("sequence parallelism on with TP (NeMo / Megatron-Bridge default)")
    if sp and row["tp"] > 1:
        p["sequence_parallel"] = True
    return p


def training_of(row, assumed):
    prec = str(row["precision"]).lower()
    fp8 = "fp8" in prec or "float8" in prec
    if not fp8 and "bf16" not in prec and "16" not in prec:
        assumed.append(f"precision '{row['precision']}': 16-bit mixed")
    rec = str(row["recompute"]).lower()
    recompute = "full" if "full" in rec else ("selective" if "selective" in rec else "none")
    if row["recompute"] is None and row["id"] in STATED_RECOMPUTE:
        recompute, where = STATED_RECOMPUTE[row["id"]]
        assumed.append(f"activation recompute {recompute}, as the launch script states ({where})")
    elif row["recompute"] is None:
        assumed.append("activation recompute not stated: none")
    stated, where = STATED_TRAINING.get(row["id"], ({}, ""))
    if "training" in stated:
        recompute = stated["training"].get("activation_recompute", recompute)
        if row["recompute"] is None or recompute not in rec:
            assumed[:] = [a for a in assumed if not a.startswith("activation recompute not stated")]
        assumed.append(f"training settings as the source states them ({where})")
    if row["fsdp"]:
        sharding = "zero3"
    elif row["id"].startswith(("narayanan", "korthikanti")):
        sharding = "none"  # Megatron-LM before its distributed optimizer
    else:
        sharding = "zero1"
        assumed.append("optimizer state sharded over data-parallel ranks (Megatron-Core's distributed optimizer / ZeRO-1)")
    training = {"sharding": sharding, "precision": "fp8" if fp8 else "bf16", "activation_recompute": recompute}
    for key, value in stated.get("training", {}).items():
        training[key] = value
    return training


def flow(d):
    """A mapping in YAML flow style (the values are numbers, booleans and plain words)."""
    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, dict):
            return flow(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return str(v)
    return "{" + ", ".join(f"{k}: {value(v)}" for k, v in d.items()) + "}"


def scenario_text(row):
    assumed = []
    gpu, fabric = gpu_and_fabric(row, assumed)
    model = model_of(row, assumed)
    par = parallelism_of(row, assumed)
    training = training_of(row, assumed)
    micro_batch = STATED_TRAINING.get(row["id"], ({}, ""))[0].get("micro_batch", row["mbs"] or 1)
    lines = [f"# {row['id']}: {row['model']} on {row['gpus']} x {row['gpu']}",
             f"# Source: {row['source']}"]
    if row.get("arch_source"):
        lines.append(f"# Architecture: {row['arch_source']}")
    lines.append(f"# Interconnect as stated: {row['interconnect']}")
    lines.append(f"# Precision as stated: {row['precision']}; recompute as stated: {row['recompute']}")
    lines.append("# Written by scripts/published_scenarios.py from ../shared/published-layouts/layouts.json.")
    for a in assumed:
        lines.append(f"# Assumed: {a}")
    lines += [f"name: {row['id']}",
              f"gpu: {gpu}",
              f"model: {flow(model)}",
              f"batch: {flow({'global_batch': row['gbs'] or row['gpus'], 'micro_batch': micro_batch})}",
              f"cluster: {flow({'gpus': row['gpus'], 'fabric': fabric})}",
              f"parallelism: {flow(par)}",
              f"training: {flow(training)}"]
    if not row["gbs"]:
        lines.insert(-7, "# Assumed: global batch not stated: one sequence per GPU")
    if not row["mbs"] and "micro_batch" not in STATED_TRAINING.get(row["id"], ({}, ""))[0]:
        lines.insert(-7, "# Assumed: micro-batch not stated: one sequence")
    return "\n".join(lines) + "\n"


def main():
    layouts = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "published-layouts",
                                                                   "layouts.json")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "scenarios", "published")
    os.makedirs(out, exist_ok=True)
    rows = json.load(open(layouts))
    for row in rows:
        with open(os.path.join(out, row["id"] + ".yaml"), "w") as f:
            f.write(scenario_text(row))
    print(f"wrote {len(rows)} scenarios to {out}")


if __name__ == "__main__":
    main()
