"""The HTTP gateway (``nmt serve``): DeepL- and LibreTranslate-compatible APIs and a job API with
webhooks over the Celery fleet.

It never decodes: requests become jobs in the job store (``client``, ``queue_config``) and their
results are read back, so the gateway stays small and scales with the workers.
"""
