# CPU worker: the project's `worker` extra only (ONNX Runtime CPU, no torch).
# EXTRAS=worker,monitor adds Flower (the compose file's flower service).
FROM python:3.11-slim
ARG EXTRAS=worker
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY training ./training
COPY export ./export
COPY worker ./worker
COPY queue_config ./queue_config
COPY client ./client
COPY nmt ./nmt
COPY models ./models
RUN pip install ".[${EXTRAS}]" && python -c "import onnxruntime, celery" \
    && ! python -c "import torch" 2>/dev/null
RUN useradd --create-home nmt
USER nmt
ENV NMT_BUNDLES=/app/models/en-de,/app/models/multi30k-en-de NMT_PROVIDER=cpu
CMD ["celery", "-A", "worker", "worker", "--loglevel=INFO"]
