"""The Python client and CLI that enqueue documents and collect results; never imports the worker (issue: workers)."""
