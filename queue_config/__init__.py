"""Celery/Redis settings and the job message format, shared by the client and the workers (issue: workers)."""
