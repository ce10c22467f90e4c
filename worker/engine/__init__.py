"""The torch-free inference core: bundle, ONNX Runtime, search, alignment. No Celery, kombu or Redis."""
