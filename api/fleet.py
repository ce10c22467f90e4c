"""The gateway's side of the fleet: texts and documents become jobs through ``TranslationClient``,
and results are read back from the job store. Redis calls are blocking, so they run in the thread
pool; waiting is ``asyncio.sleep`` between polls, so a waiting request holds no thread."""
from __future__ import annotations

import asyncio
import math
import time
from typing import Awaitable, Callable

import redis
from starlette.concurrency import run_in_threadpool

from client.client import ClientError, JobNotFoundError, TranslationClient
from queue_config.glossary import Terms
from queue_config.jobstore import INPUT_FAILURE, JobStatus
from queue_config.messages import MessageError
from queue_config.result_store import ResultStoreError

from .errors import ApiError

POLL_FIRST, POLL_MAX = 0.02, 0.25  # seconds between looks at the jobs' states, backing off


class Fleet:
    def __init__(self, client: TranslationClient) -> None:
        self.client = client
        self.store = client.store

    def pairs(self) -> list[tuple[str, str]]:
        """(source, target) language pairs the workers have announced."""
        return [tuple(pair.split("-", 1)) for pair in self.store.served_pairs(max_age=float("inf"))]  # type: ignore[misc]

    async def translate(self, texts: list[str], src: str, tgt: str, fmt: str | None, timeout: float,
                        gone: Callable[[], Awaitable[bool]], glossary: Terms = ()) -> list[str]:
        """Each text translated as one job (small ones are batched together by the workers); a text
        of only whitespace comes back as it is. Waits as ``wait`` does."""
        wanted = [i for i, text in enumerate(texts) if text.strip()]
        documents = [{"text": texts[i], "src": src, "tgt": tgt, "format": fmt, "name": "api",
                      "glossary": glossary or None} for i in wanted]
        jobs = await _call(self.client.submit_many, documents) if documents else []
        ids = [job.id for job in jobs]
        await self.wait(ids, timeout, gone)
        results = await _call(self.store.results_of, ids)  # from Redis, or the result store (NMT_RESULT_STORE)
        out = list(texts)
        for i, result in zip(wanted, results):
            if result is None:
                raise ApiError(500, "A finished translation has no stored result")
            out[i] = result["text"]
        return out

    async def wait(self, ids: list[str], timeout: float, gone: Callable[[], Awaitable[bool]]) -> None:
        """Return when every job of ``ids`` is done. ``ApiError`` 400 when one failed because its
        document cannot be read (corrupt, not of its format: the client's to fix), 500 when one
        failed otherwise or was cancelled, 503 with Retry-After when the fleet has not finished them
        all within ``timeout`` seconds; the jobs are then cancelled, as they are when ``gone()`` says
        the client has left."""
        deadline, delay = time.monotonic() + timeout, POLL_FIRST
        try:
            while ids:
                states = await _call(self.store.states, ids)
                ended = {i: s for i, s in states.items() if s in ("failed", "cancelled", "unknown")}
                if ended:
                    job_id, state = next(iter(ended.items()))
                    status: JobStatus = await _call(self.store.status, job_id)
                    if status.failure == INPUT_FAILURE:
                        raise ApiError(400, f"Invalid request: the document cannot be read: {status.error}")
                    raise ApiError(500, f"Translation {state}: {status.error or 'no reason given'}")
                if all(s == "done" for s in states.values()):
                    return
                if time.monotonic() >= deadline:
                    raise ApiError(503, f"The translation fleet did not answer within {timeout:g} s; retry later",
                                   retry_after=max(1, math.ceil(timeout)))
                if await gone():
                    raise ApiError(499, "The client closed the request")
                await asyncio.sleep(min(delay, max(0.0, deadline - time.monotonic())))
                delay = min(delay * 1.5, POLL_MAX)
        except ApiError:
            if ids:
                await _call(self._cancel, ids)
            raise

    def _cancel(self, ids: list[str]) -> None:
        for job_id in ids:
            try:
                self.client.job(job_id).cancel()
            except JobNotFoundError:  # its record expired: nothing left to stop
                pass

    async def submit_document(self, data: str | bytes, src: str, tgt: str, fmt: str, name: str,
                              glossary: Terms = (), options: dict | None = None, model: str | None = None) -> str:
        """Enqueue one document; its job id."""
        [job] = await _call(self.client.submit_many, [{"text": data, "src": src, "tgt": tgt, "format": fmt,
                                                       "name": name, "glossary": glossary or None,
                                                       "options": options, "model": model}])
        return job.id

    async def cancel(self, job_id: str) -> bool:
        """Cancel a job that has not ended (and revoke its task); False when it had ended, ``ApiError``
        404 when the job store has no record of it (nothing is written then)."""
        return await _call(self.client.job(job_id).cancel)

    async def status(self, job_id: str) -> JobStatus:
        return await _call(self.store.status, job_id)

    async def result(self, job_id: str) -> dict | None:
        return await _call(self.store.result, job_id)


async def _call(function, *args):
    """``function(*args)`` in the thread pool, its client and Redis errors as ``ApiError``s."""
    try:
        return await run_in_threadpool(function, *args)
    except MessageError as exc:
        raise ApiError(400, str(exc)) from None
    except ValueError as exc:  # UnknownLanguagePairError, UnknownModelError, JobExistsError
        raise ApiError(400, str(exc)) from None
    except JobNotFoundError:
        raise ApiError(404, "Job not found") from None
    except (ClientError, ResultStoreError) as exc:
        raise ApiError(500, str(exc)) from None
    except redis.RedisError as exc:
        raise ApiError(503, f"The job store is unreachable ({type(exc).__name__}); retry later", retry_after=5) from None
