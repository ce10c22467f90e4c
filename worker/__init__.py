"""Celery workers and the torch-free ONNX Runtime engine: beam search, alignments, documents (issues: engine, workers)."""
