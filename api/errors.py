"""The one error the gateway's routes raise: an HTTP status, a message for the client, and the
seconds after which a retry may succeed. Each API renders it in its own error body."""
from __future__ import annotations


class ApiError(Exception):
    def __init__(self, status: int, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}
