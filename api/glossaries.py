"""Glossaries kept for API keys, as DeepL's API v2 manages them: named term lists of one language
pair, uploaded as TSV or CSV entries and used by id. A glossary becomes the job's own glossary
(``JobRequest.glossary``, [source, target] pairs), so the workers never read this store.

    nmt:api:glossary:<key id>:<glossary id>   hash: name, source_lang, target_lang, creation_time,
                                              entry_count, entries (JSON [[source, target], ...])
    nmt:api:glossaries:<key id>               sorted set: glossary id -> creation time

Every key is part of the Redis key, so one API key cannot reach another's glossaries.
"""
from __future__ import annotations

import csv
import io
import json
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

import redis

from queue_config.glossary import MAX_TERMS, GlossaryError, Terms, check_terms, parse_glossary
from queue_config.names import KEY_PREFIX

from .errors import ApiError

ENTRY_FORMATS = ("tsv", "csv")
MAX_NAME = 1024  # characters of a glossary's name
MAX_ID = 64  # characters of a glossary id worth looking up (ours are 36)


@dataclass(frozen=True)
class Glossary:
    glossary_id: str
    name: str
    source_lang: str  # the fleet's codes: "en"
    target_lang: str
    creation_time: str  # ISO 8601 UTC with milliseconds, as DeepL writes it
    terms: Terms

    def info(self) -> dict:
        """DeepL's glossary object (its entries are asked for apart)."""
        return {"glossary_id": self.glossary_id, "name": self.name, "ready": True, "source_lang": self.source_lang,
                "target_lang": self.target_lang, "creation_time": self.creation_time, "entry_count": len(self.terms)}

    def tsv(self) -> str:
        return "".join(f"{source}\t{target}\n" for source, target in self.terms)


def parse_entries(entries: str, entries_format: str, source_lang: str, target_lang: str) -> Terms:
    """The terms of DeepL glossary entries: TSV (``source<TAB>target`` lines) or CSV
    (``source,target`` or ``source,target,source_lang,target_lang`` rows, RFC 4180 quoting).
    ``GlossaryError`` names the line."""
    if entries_format == "tsv":
        terms = parse_glossary(entries, "glossary entries")
    elif entries_format == "csv":
        pairs = []
        for number, row in enumerate(csv.reader(io.StringIO(entries)), 1):
            if not row or not "".join(row).strip():
                continue
            if len(row) not in (2, 4):
                raise GlossaryError(f"glossary entries: line {number}: expected 2 or 4 comma-separated fields, "
                                    f"found {len(row)}")
            if len(row) == 4 and (row[2].strip().lower(), row[3].strip().lower()) != (source_lang, target_lang):
                raise GlossaryError(f"glossary entries: line {number}: languages {row[2]}-{row[3]} differ from the "
                                    f"glossary's {source_lang}-{target_lang}")
            pairs.append(row[:2])
        terms = check_terms(pairs, "glossary entries", max_terms=None)
    else:
        raise GlossaryError(f"entries_format must be one of {', '.join(ENTRY_FORMATS)}, got {entries_format!r}")
    if not terms:
        raise GlossaryError("glossary entries: no term")
    if len(terms) > MAX_TERMS:
        raise GlossaryError(f"glossary entries: {len(terms)} terms; at most {MAX_TERMS} are allowed")
    return terms


class GlossaryStore:
    def __init__(self, client: redis.Redis) -> None:
        self.redis = client

    @staticmethod
    def _key(key_id: str, glossary_id: str) -> str:
        return f"{KEY_PREFIX}:api:glossary:{key_id}:{glossary_id}"

    @staticmethod
    def _index(key_id: str) -> str:
        return f"{KEY_PREFIX}:api:glossaries:{key_id}"

    def count(self, key_id: str) -> int:
        return int(self.redis.zcard(self._index(key_id)))

    def create(self, key_id: str, name: str, source_lang: str, target_lang: str, terms: Terms) -> Glossary:
        now = time.time()
        stamp = datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        glossary = Glossary(str(uuid.uuid4()), name, source_lang, target_lang, stamp, terms)
        with self.redis.pipeline() as pipe:
            pipe.hset(self._key(key_id, glossary.glossary_id), mapping={
                "name": name, "source_lang": source_lang, "target_lang": target_lang, "creation_time": stamp,
                "entry_count": len(terms), "entries": json.dumps([list(t) for t in terms], ensure_ascii=False)})
            pipe.zadd(self._index(key_id), {glossary.glossary_id: now})
            pipe.execute()
        return glossary

    def get(self, key_id: str, glossary_id: str) -> Glossary | None:
        if not glossary_id or len(glossary_id) > MAX_ID:
            return None
        record = self.redis.hgetall(self._key(key_id, glossary_id))
        return _glossary(glossary_id, record) if record else None

    def list(self, key_id: str) -> list[Glossary]:
        ids = self.redis.zrange(self._index(key_id), 0, -1)
        with self.redis.pipeline(transaction=False) as pipe:
            for glossary_id in ids:
                pipe.hgetall(self._key(key_id, glossary_id))
            records = pipe.execute()
        return [_glossary(glossary_id, record) for glossary_id, record in zip(ids, records) if record]

    def delete(self, key_id: str, glossary_id: str) -> bool:
        if not glossary_id or len(glossary_id) > MAX_ID:
            return False
        with self.redis.pipeline() as pipe:
            pipe.delete(self._key(key_id, glossary_id))
            pipe.zrem(self._index(key_id), glossary_id)
            return bool(pipe.execute()[0])


def _glossary(glossary_id: str, record: dict) -> Glossary:
    terms = tuple((source, target) for source, target in json.loads(record["entries"]))
    return Glossary(glossary_id, record["name"], record["source_lang"], record["target_lang"], record["creation_time"],
                    terms)


def terms_for(store: GlossaryStore, key_id: str, glossary_id: str, src: str, tgt: str) -> Terms:
    """The terms of the key's glossary ``glossary_id`` for a job from ``src`` into ``tgt``;
    ``ApiError`` 404 for a glossary the key does not hold, 400 for one of another pair."""
    glossary = store.get(key_id, glossary_id)
    if glossary is None:
        raise ApiError(404, "Glossary not found")
    if (glossary.source_lang, glossary.target_lang) != (src, tgt):
        raise ApiError(400, f"The glossary's languages {glossary.source_lang}-{glossary.target_lang} do not match the "
                            f"request's {src}-{tgt}")
    return glossary.terms
