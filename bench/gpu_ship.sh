#!/usr/bin/env bash
# Packs what bench/gpu_check.py needs on a lent GPU machine into .gpuship/1 .. .gpuship/N, one
# piece per device call (each call carries the working tree too: 64 MiB in all).
#
# The machine has PyTorch, transformers and onnx (CUDA 13) but no onnxruntime-gpu, CTranslate2 or
# this project's text dependencies, and reaches no registry. Everything travels as one xz stream
# of tar archives, unpacked there with:
#     cat $HOME/gs/part-* | xz -dc -T0 | tar -x -i -C $HOME/site
# into a directory that goes first on PYTHONPATH. docs/benchmarks.md ("CUDA") has the calls, the
# figures and what the recipe in ../shared/gpu/README.md leaves out.
#
#     bash bench/gpu_ship.sh            # from the project's root, with its virtual environment
#
# Before the calls, move models/ and snapshots/ out of the checkout (they alone exceed a call's
# 64 MiB; the bundle gpu_check.py decodes travels in the stream) and move them back after.
set -euo pipefail
root=$(pwd)
work=${GPU_SHIP_WORK:-/tmp/gpu-ship}
piece=${GPU_SHIP_PIECE:-54000000}  # bytes per piece; the working tree (about 6 MB) rides along
shared=${NMT_SHARED_DATA:-$root/../shared/data}
wheels=(onnxruntime-gpu==1.31.1 ctranslate2==4.8.5 sentencex==1.0.* sacremoses==0.1.* py3langid==0.4.*)

for ignored in /.gpuship/ /.gpuload/; do
  grep -qxF "$ignored" .git/info/exclude 2>/dev/null || echo "$ignored" >> .git/info/exclude
done
rm -rf "$work" && mkdir -p "$work/wheels" "$work/site"
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform any -d "$work/wheels" "${wheels[@]}"
for wheel in "$work"/wheels/*.whl; do
  python3 -m zipfile -e "$wheel" "$work/site"
done

# The payload: the shipped bundle, the sentences, the imported model's small files (its weights
# are made there from the seed: bench/marian_speed.py's recipe).
rm -rf .gpuload && mkdir -p .gpuload/marian-hf
cp -r models/en-de .gpuload/
gzip -dc "$shared/wmt-newstest-de-en/newstest2014.en.gz" > .gpuload/newstest2014.en
python3 - <<'EOF'
import argparse, shutil, sys
from pathlib import Path
sys.path.insert(0, "bench")
from marian_speed import DEFAULT_WORK_DIR, build_model_dir

args = argparse.Namespace(vocab=58101, d_model=512, layers=6, heads=8, ffn=2048, seed=1)
built = build_model_dir(DEFAULT_WORK_DIR / "L6-d512-h8-f2048-v58101-seed1" / "hf", args)
for name in ("config.json", "generation_config.json", "source.spm", "target.spm", "special_tokens_map.json",
             "tokenizer_config.json", "vocab.json", "README.md"):
    shutil.copy(built / name, Path(".gpuload/marian-hf") / name)
EOF

(tar -C "$work/site" -cf - . | xz -9e -T2; tar -cf - .gpuload | xz -6 -T2) > "$work/all.xz"
rm -rf .gpuship && mkdir -p .gpuship
(cd .gpuship && split -b "$piece" -d -a 1 "$work/all.xz" part-)
n=0
for part in .gpuship/part-*; do
  n=$((n + 1)); mkdir -p ".gpuship/$n"; mv "$part" ".gpuship/$n/"
done
echo "$(stat -c %s "$work/all.xz") bytes in $n pieces: .gpuship/1 .. .gpuship/$n"
