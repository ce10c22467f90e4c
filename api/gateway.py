"""What every route shares: the settings, the key ring, the limits, the fleet, the glossaries, the
job records and the webhook outbox, made once per gateway process from the environment."""
from __future__ import annotations

from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from client.client import TranslationClient
from queue_config.settings import QueueSettings, load_settings

from .errors import ApiError
from .fleet import Fleet
from .glossaries import GlossaryStore
from .job_records import JobRecords
from .keys import KeyRing
from .limits import Limits
from .outbox import Outbox
from .settings import GatewaySettings, WebhookSettings, load_gateway_settings, load_webhook_settings


@dataclass(frozen=True)
class Gateway:
    settings: GatewaySettings
    queue: QueueSettings
    keys: KeyRing
    limits: Limits
    fleet: Fleet
    glossaries: GlossaryStore
    records: JobRecords
    outbox: Outbox

    @classmethod
    def from_settings(cls, settings: GatewaySettings | None = None, queue: QueueSettings | None = None,
                      webhooks: WebhookSettings | None = None) -> "Gateway":
        settings = settings or load_gateway_settings()
        webhooks = webhooks or load_webhook_settings()
        client = TranslationClient(settings=queue or load_settings())
        store = client.store
        limits = Limits(store.redis, settings.character_quota, settings.rate_limit)
        records = JobRecords(store.redis, client.settings.result_expires)
        return cls(settings, client.settings, KeyRing.from_settings(settings), limits, Fleet(client), GlossaryStore(store.redis),
                   records, Outbox(store, records, limits, webhooks))

    async def admit(self, request: Request, key: str | None) -> str:
        """The key id of a request whose ``key`` is valid and within its rate; ``ApiError`` 403 or 429.
        The key id is kept on the request for the access log."""
        key_id = self.keys.identify(key)
        if key_id is None:
            raise ApiError(403, "Authorization failure: missing or invalid API key")
        request.state.key_id = key_id
        await run_in_threadpool(self.limits.check_rate, key_id)
        return key_id

    async def reserve(self, key_id: str, characters: int) -> None:
        await run_in_threadpool(self.limits.reserve, key_id, characters)

    async def refund(self, key_id: str, characters: int) -> None:
        await run_in_threadpool(self.limits.refund, key_id, characters)
