# GPU worker: CUDA 13 runtime with cuDNN, onnxruntime-gpu, the project's `gpu` extra only (no torch).
FROM nvidia/cuda:13.0.0-cudnn-runtime-ubuntu24.04
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_BREAK_SYSTEM_PACKAGES=1
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-pip \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY training ./training
COPY export ./export
COPY worker ./worker
COPY queue_config ./queue_config
COPY client ./client
COPY nmt ./nmt
COPY models ./models
# The gpu extra is the worker extra with the CUDA build of ONNX Runtime in place of the CPU one.
RUN pip install ".[gpu]" \
    && python3 -c "import onnxruntime as o; assert 'CUDAExecutionProvider' in o.get_available_providers()" \
    && ! python3 -c "import torch" 2>/dev/null
RUN useradd --create-home nmt
USER nmt
# cuda: refuse to serve if ONNX Runtime would fall back to the CPU.
ENV NMT_BUNDLES=/app/models/en-de,/app/models/multi30k-en-de NMT_PROVIDER=cuda
CMD ["celery", "-A", "worker", "worker", "--loglevel=INFO", "--concurrency=1"]
