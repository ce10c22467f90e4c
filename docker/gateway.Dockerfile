# The HTTP gateway (nmt serve): the project's `api` extra only. It submits to the workers through
# Redis and never decodes, so the image has neither ONNX Runtime, numpy, torch nor the models.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY queue_config ./queue_config
COPY client ./client
COPY api ./api
COPY nmt ./nmt
RUN pip install ".[api]" && python -c "import fastapi, uvicorn, celery, prometheus_client" \
    && ! python -c "import onnxruntime" 2>/dev/null && ! python -c "import numpy" 2>/dev/null
RUN useradd --create-home nmt
USER nmt
EXPOSE 8000
# 0.0.0.0 inside the container: nmt serve then refuses to start without NMT_API_KEYS.
CMD ["nmt", "serve", "--host", "0.0.0.0", "--port", "8000"]
