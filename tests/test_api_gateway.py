"""``nmt serve`` end to end: a real redis-server, a real ``celery -A worker worker`` serving the
shipped multi30k-en-de bundle and real uvicorn gateways, driven by the official ``deepl`` library
(and plain HTTP where the library would retry on its own)."""
from __future__ import annotations

import html
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

deepl = pytest.importorskip("deepl")

from client.client import TranslationClient  # noqa: E402
from queue_config.jobstore import JobStore  # noqa: E402

from .conftest import REPO_ROOT, zip_of  # noqa: E402
from .queue_harness import CeleryWorker, RedisServer, free_port, wait_for  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BUNDLE = REPO_ROOT / "models" / "multi30k-en-de"
KEY, QUOTA_KEY, RATE_KEY, OTHER_KEY = "key-main-7f3c", "key-quota-91ab", "key-rate-55d0", "key-other-2c4e"
TEXTS = ["A man is riding a bicycle.", "Two dogs are playing in the snow."]


class Gateway:
    """``python -m nmt serve`` on a free loopback port, stopped by the pid this test started."""

    def __init__(self, name: str, env: dict[str, str], log_dir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log_dir / f"{name}.log"
        self.env = env
        self.process: subprocess.Popen | None = None

    def start(self) -> "Gateway":
        env = os.environ.copy() | self.env | {"PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen([sys.executable, "-m", "nmt", "serve", "--port", str(self.port)], cwd=REPO_ROOT,
                                        env=env, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT)
        wait_for(lambda: self._up() or self.process.poll() is not None, 30, f"gateway on port {self.port}")
        assert self.process.poll() is None, self.log.read_text()[-3000:]
        return self

    def _up(self) -> bool:
        try:
            return requests.get(self.url + "/openapi.json", timeout=1).status_code == 200
        except requests.ConnectionError:
            return False

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """Redis and one worker serving en-de; yields the broker URL."""
    root = tmp_path_factory.mktemp("api")
    redis_server = RedisServer(root / "redis").start()
    worker = CeleryWorker("api-w1", {"NMT_BROKER_URL": redis_server.url, "NMT_BUNDLES": str(BUNDLE)}, root)
    try:
        worker.start()
        yield redis_server.url, root
    finally:
        worker.stop()
        redis_server.stop()


@pytest.fixture(scope="module")
def gateways(fleet):
    """Start gateways by name with NMT_API_* settings; each is stopped at the end of the module."""
    url, root = fleet
    started: dict[str, Gateway] = {}

    def start(name: str, **settings: str) -> Gateway:
        if name not in started:
            env = {"NMT_BROKER_URL": url} | {f"NMT_API_{k.upper()}": str(v) for k, v in settings.items()}
            started[name] = Gateway(name, env, root).start()
        return started[name]

    yield start
    for gateway in started.values():
        gateway.stop()


@pytest.fixture(scope="module")
def main(gateways) -> Gateway:
    return gateways("main", keys=f"{KEY},{OTHER_KEY},sha256:{'0' * 64}")


def test_the_deepl_library_translates_a_list_of_texts_as_the_fleet_does(main, fleet):
    translator = deepl.Translator(KEY, server_url=main.url)
    results = translator.translate_text(TEXTS, source_lang="EN", target_lang="DE")
    assert len(results) == 2
    direct = TranslationClient(broker_url=fleet[0])
    for source, result in zip(TEXTS, results):
        assert result.detected_source_lang == "EN"
        assert result.billed_characters == len(source)
        assert result.text.strip() and result.text != source
        # The same bundle, the same decoding defaults: the gateway adds nothing and loses nothing.
        assert result.text == direct.submit(text=source, src="en", tgt="de").wait(timeout=60).text


def test_a_single_text_without_source_lang_and_html_tags_come_back(main):
    translator = deepl.Translator(KEY, server_url=main.url)
    plain = translator.translate_text("A dog runs.", target_lang="de")
    assert isinstance(plain, deepl.TextResult) and plain.detected_source_lang == "EN" and plain.text
    tagged = translator.translate_text("<p>A man sees a <b>dog</b>.</p>", source_lang="EN", target_lang="DE",
                                       tag_handling="html", split_sentences="nonewlines", preserve_formatting=True,
                                       formality="prefer_less")
    assert tagged.text.startswith("<p>") and tagged.text.endswith("</p>") and tagged.text.count("<b>") == 1


def test_languages_list_what_the_workers_announced(main):
    translator = deepl.Translator(KEY, server_url=main.url)
    assert [(lang.code, lang.name) for lang in translator.get_source_languages()] == [("EN", "English")]
    [target] = translator.get_target_languages()
    assert (target.code, target.name, target.supports_formality) == ("DE", "German", False)


def test_a_pair_the_fleet_does_not_serve_and_formality_it_cannot_honour_are_400(main):
    translator = deepl.Translator(KEY, server_url=main.url)
    with pytest.raises(deepl.DeepLException, match="language pair de-en not supported") as caught:
        translator.translate_text("Ein Hund.", source_lang="DE", target_lang="EN-GB")
    assert caught.value.http_status_code == 400
    with pytest.raises(deepl.DeepLException, match="'formality' is not supported") as caught:
        translator.translate_text("A dog.", source_lang="EN", target_lang="DE", formality="more")
    assert caught.value.http_status_code == 400


def test_a_wrong_or_missing_key_is_refused_and_no_key_is_logged(main):
    with pytest.raises(deepl.AuthorizationException):
        deepl.Translator("not-a-key", server_url=main.url).translate_text("A dog.", target_lang="DE")
    with pytest.raises(deepl.AuthorizationException):
        deepl.Translator("not-a-key", server_url=main.url).get_usage()
    bare = requests.post(main.url + "/v2/translate", data={"text": "A dog.", "target_lang": "DE"}, timeout=30)
    assert bare.status_code == 403 and "message" in bare.json()
    # The older auth_key parameter, form-encoded with repeated text fields, as older tools send it.
    form = requests.post(main.url + "/v2/translate", params={"auth_key": KEY},
                         data={"text": ["A dog.", "A cat."], "target_lang": "DE"}, timeout=60)
    assert form.status_code == 200 and len(form.json()["translations"]) == 2
    # The access log line is written as the response ends: wait for it rather than race it.
    wait_for(lambda: "/v2/translate 200" in main.log.read_text(), 10, "the access log line of the 200")
    logged = main.log.read_text()
    assert "/v2/translate 403" in logged
    assert KEY not in logged and "not-a-key" not in logged


def test_bodies_over_the_cap_get_413(main):
    translator = deepl.Translator(KEY, server_url=main.url)
    with pytest.raises(deepl.DeepLException) as caught:
        translator.translate_text("A dog runs. " * 12_000, source_lang="EN", target_lang="DE")  # 144,000 bytes
    assert caught.value.http_status_code == 413
    chunked = requests.post(main.url + "/v2/translate", headers={"Authorization": f"DeepL-Auth-Key {KEY}",
                                                                 "Content-Type": "application/json"},
                            data=iter([b'{"target_lang": "DE", "text": ["' + b"a" * 70_000, b"a" * 70_000 + b'"]}']),
                            timeout=30)
    assert chunked.status_code == 413 and "Too Large" in chunked.json()["message"]
    with pytest.raises(deepl.DeepLException) as caught:
        translator.translate_text(["A dog."] * 51, source_lang="EN", target_lang="DE")
    assert caught.value.http_status_code == 413


def test_the_quota_is_kept_per_key_and_reached_with_456(gateways):
    gateway = gateways("quota", keys=QUOTA_KEY, character_quota="40")
    translator = deepl.Translator(QUOTA_KEY, server_url=gateway.url)
    translator.translate_text("A man is riding a bicycle.", source_lang="EN", target_lang="DE")  # 26 characters
    usage = translator.get_usage()
    assert (usage.character.count, usage.character.limit) == (26, 40)
    with pytest.raises(deepl.QuotaExceededException):
        translator.translate_text("Two dogs are playing.", source_lang="EN", target_lang="DE")  # 21 more
    assert translator.get_usage().character.count == 26  # a refused request costs nothing
    translator.translate_text("A dog.", source_lang="EN", target_lang="DE")
    assert translator.get_usage().character.count == 32


def test_requests_over_the_rate_get_429_with_retry_after(gateways):
    gateway = gateways("rate", keys=RATE_KEY, rate_limit="2")
    headers = {"Authorization": f"DeepL-Auth-Key {RATE_KEY}"}
    answers = [requests.get(gateway.url + "/v2/usage", headers=headers, timeout=10) for _ in range(3)]
    if answers[-1].status_code != 429:  # the first two straddled a minute's end: the third window is new
        answers.append(requests.get(gateway.url + "/v2/usage", headers=headers, timeout=10))
    assert [a.status_code for a in answers[:2]] == [200, 200] and answers[-1].status_code == 429
    assert 1 <= int(answers[-1].headers["Retry-After"]) <= 60


def test_a_request_the_fleet_cannot_answer_in_time_gets_503_and_its_jobs_are_cancelled(gateways, fleet):
    store = JobStore.from_url(fleet[0], 3600)
    store.announce_pairs(["en-fr"])  # announced, but no worker consumes nmt.en-fr
    try:
        gateway = gateways("slow", keys=KEY, timeout="2", file_timeout="2")
        started = time.monotonic()
        answer = requests.post(gateway.url + "/v2/translate", headers={"Authorization": f"DeepL-Auth-Key {KEY}"},
                               json={"text": ["A dog.", "A cat."], "source_lang": "EN", "target_lang": "FR"}, timeout=30)
    finally:
        store.redis.hdel("nmt:pairs", "en-fr")
    assert answer.status_code == 503 and int(answer.headers["Retry-After"]) >= 1
    assert 2 <= time.monotonic() - started < 10
    fr_jobs = [key for key in store.redis.scan_iter("nmt:job:*") if key.count(":") == 2
               and store.redis.hget(key, "tgt") == "fr"]
    assert len(fr_jobs) == 2 and {store.redis.hget(key, "state") for key in fr_jobs} == {"cancelled"}


def test_a_file_the_fleet_cannot_translate_in_time_gets_503_its_job_is_cancelled_and_refunded(gateways, fleet):
    store = JobStore.from_url(fleet[0], 3600)
    store.announce_pairs(["en-fr"])  # announced, but no worker consumes nmt.en-fr
    try:
        gateway = gateways("slow", keys=KEY, timeout="2", file_timeout="2")
        usage = deepl.Translator(KEY, server_url=gateway.url).get_usage().character.count
        started = time.monotonic()
        answer = requests.post(gateway.url + "/translate_file", data={"source": "en", "target": "fr", "api_key": KEY},
                               files={"file": ("late-letter.txt", b"A dog runs.")}, timeout=30)
        elapsed = time.monotonic() - started
    finally:
        store.redis.hdel("nmt:pairs", "en-fr")
    assert answer.status_code == 503 and int(answer.headers["Retry-After"]) >= 1 and "error" in answer.json()
    assert 2 <= elapsed < 10
    [job] = [key for key in store.redis.scan_iter("nmt:job:*") if key.count(":") == 2
             and store.redis.hget(key, "name") == "late-letter"]
    assert store.redis.hget(job, "state") == "cancelled"
    assert deepl.Translator(KEY, server_url=gateway.url).get_usage().character.count == usage


def test_an_html_document_round_trips_through_translate_document_from_filepath(main, tmp_path):
    page = tmp_path / "page.html"
    page.write_text("<!DOCTYPE html>\n<html><head><title>A dog</title></head>\n<body>\n<h1>A man is riding a bicycle.</h1>\n"
                    "<p>Two dogs are playing in the <b>snow</b>.</p>\n</body></html>\n", encoding="utf-8")
    out = tmp_path / "page.de.html"
    translator = deepl.Translator(KEY, server_url=main.url)
    status = translator.translate_document_from_filepath(page, out, source_lang="EN", target_lang="DE")
    assert status.done and status.billed_characters == len(page.read_text(encoding="utf-8"))
    translated = out.read_text(encoding="utf-8")
    # a page that declares no charset is written saying UTF-8
    assert translated.startswith("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>") and translated.count("<b>") == 1
    assert "A man is riding a bicycle." not in translated and "<h1>" in translated
    # Another key cannot read it, nor can a wrong document key.
    handle = translator.translate_document_upload(page.read_bytes(), filename="page.html", target_lang="DE")
    forged = deepl.DocumentHandle(handle.document_id, "0" * 64)
    with pytest.raises(deepl.DeepLException, match="Not found"):
        translator.translate_document_get_status(forged)


def test_a_document_over_the_document_cap_gets_413_and_an_unknown_type_400(main):
    translator = deepl.Translator(KEY, server_url=main.url)
    cap = 20_000_000  # NMT_MAX_DOCUMENT_BYTES's default
    with pytest.raises(deepl.DeepLException) as caught:
        translator.translate_document_upload(b"<p>A dog.</p>" * (cap // 13 + 1), filename="big.html", target_lang="DE")
    assert caught.value.http_status_code == 413
    with pytest.raises(deepl.DeepLException, match="not supported") as caught:
        translator.translate_document_upload(b"%PDF-1.4", filename="scan.pdf", target_lang="DE")
    assert caught.value.http_status_code == 400


def test_openapi_docs_are_served(main):
    assert requests.get(main.url + "/docs", timeout=10).status_code == 200
    paths = requests.get(main.url + "/openapi.json", timeout=10).json()["paths"]
    assert {"/v2/translate", "/v2/languages", "/v2/usage", "/v2/glossaries", "/v2/glossary-language-pairs",
            "/v1/jobs", "/v1/jobs/{job_id}", "/v1/jobs/{job_id}/result"} <= set(paths)
    assert "application/x-www-form-urlencoded" in paths["/v2/translate"]["post"]["requestBody"]["content"]


def test_a_keys_file_of_digests_admits_its_keys_only(gateways, fleet):
    key = "key-from-file-31d7"
    digest = subprocess.run([sys.executable, "-m", "nmt", "serve", "--hash-key"], input=key + "\n", cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    path = fleet[1] / "api-keys"
    path.write_text(f"# the gateway's keys, as digests\n{digest}\n")
    gateway = gateways("keys-file", keys_file=str(path))
    assert deepl.Translator(key, server_url=gateway.url).translate_text("A dog.", target_lang="DE").text
    with pytest.raises(deepl.AuthorizationException):
        deepl.Translator(KEY, server_url=gateway.url).translate_text("A dog.", target_lang="DE")
    assert key not in gateway.log.read_text()


def test_serve_refuses_a_public_address_without_keys():
    env = {k: v for k, v in os.environ.items() if k != "NMT_API_KEYS"}
    out = subprocess.run([sys.executable, "-m", "nmt", "serve", "--host", "0.0.0.0", "--port", str(free_port())],
                         cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "without API keys" in out.stderr


def test_libretranslatepy_lists_languages_and_translates(main):
    from libretranslatepy import LibreTranslateAPI

    libre = LibreTranslateAPI(main.url, api_key=KEY)
    assert libre.languages() == [{"code": "en", "name": "English", "targets": ["de"]}]
    translated = libre.translate(TEXTS[0], "en", "de")
    assert translated == deepl.Translator(KEY, server_url=main.url).translate_text(TEXTS[0], target_lang="DE").text
    listed = requests.post(main.url + "/translate", json={"q": TEXTS, "source": "auto", "target": "de",
                                                          "format": "text", "api_key": KEY}, timeout=60).json()
    assert len(listed["translatedText"]) == 2 and listed["detectedLanguage"]["language"] == "en"
    refused = requests.post(main.url + "/translate", data={"q": "A dog.", "source": "en", "target": "de",
                                                           "api_key": "wrong"}, timeout=30)
    assert refused.status_code == 403 and "error" in refused.json()


def test_libretranslatepy_detects_languages_and_api_key_is_asked_for_as_libretranslate_asks(main):
    import urllib.error

    from libretranslatepy import LibreTranslateAPI

    libre = LibreTranslateAPI(main.url, api_key=KEY)
    [english] = libre.detect("Two dogs are playing in the snow.")
    assert english["language"] == "en" and 90 <= english["confidence"] <= 100
    assert libre.detect("Zwei Hunde spielen im Schnee, während ein Mann zuschaut.")[0]["language"] == "de"
    # every language the detector knows, not only those the fleet serves
    assert libre.detect("Tout le monde aime les vacances au bord de la mer en été.")[0]["language"] == "fr"
    # a list is judged as a whole, each text weighted by its length
    mixed = requests.post(main.url + "/detect", json={"api_key": KEY, "q": [
        "A man in a blue shirt is standing on a ladder and cleaning windows.", "Ein Hund läuft."]}, timeout=10).json()
    assert [g["language"] for g in mixed] == ["en", "de"] and mixed[0]["confidence"] > mixed[1]["confidence"] > 0
    # nothing to tell: the fleet's source language with no confidence, as LibreTranslate answers
    assert libre.detect("12345 !!!") == [{"confidence": 0.0, "language": "en"}]
    missing = requests.post(main.url + "/detect", data={"api_key": KEY}, timeout=10)
    assert missing.status_code == 400 and missing.json() == {"error": "Invalid request: missing q parameter"}
    assert requests.get(main.url + "/detect", params={"q": "A dog.", "api_key": KEY}, timeout=10).status_code == 405
    keyless = requests.post(main.url + "/detect", data={"q": "A dog runs."}, timeout=10)
    assert keyless.status_code == 400 and "get an API key" in keyless.json()["error"]
    with pytest.raises(urllib.error.HTTPError) as caught:
        LibreTranslateAPI(main.url, api_key="wrong").detect("A dog runs.")
    assert caught.value.code == 403 and json.loads(caught.value.read()) == {"error": "Invalid API key"}


def test_libre_auto_source_uses_the_detected_language_and_refuses_one_the_fleet_does_not_translate(main):
    answer = requests.post(main.url + "/translate", json={"q": "Zwei Hunde spielen im Schnee, während ein Mann zuschaut.",
                                                          "source": "auto", "target": "de", "api_key": KEY}, timeout=30)
    assert answer.status_code == 400 and answer.json() == {"error": "de is not supported"}
    # A text too short to tell reliably goes to the one source the fleet translates into the target from.
    short = requests.post(main.url + "/translate", json={"q": "Hello", "source": "auto", "target": "de",
                                                         "api_key": KEY}, timeout=60).json()
    assert short["detectedLanguage"]["language"] == "en" and short["translatedText"]
    unknown = requests.post(main.url + "/translate", json={"q": "A dog.", "source": "en", "target": "zz",
                                                           "api_key": KEY}, timeout=30)
    assert unknown.status_code == 400 and unknown.json() == {"error": "zz is not supported"}


def _translate_file(url: str, name: str, data: bytes, source: str = "en", key: str | None = KEY, **extra):
    fields = {"source": source, "target": "de"} | ({"api_key": key} if key else {}) | extra
    return requests.post(url + "/translate_file", data=fields, files={"file": (name, data)}, timeout=120)


def test_translate_file_gives_a_download_url_of_the_same_translation_as_a_deepl_document(main, tmp_path):
    page = ("<!DOCTYPE html>\n<html><body>\n<h1>A man is riding a bicycle.</h1>\n"
            "<p>Two dogs are playing in the <b>snow</b>.</p>\n</body></html>\n")
    before = deepl.Translator(KEY, server_url=main.url).get_usage().character.count
    answer = _translate_file(main.url, "my page.html", page.encode("utf-8"), source="auto")
    assert answer.status_code == 200, answer.text
    url = answer.json()["translatedFileUrl"]
    assert url.startswith(main.url + "/download_file/") and url.endswith(".my_page.de.html")
    download = requests.get(url, params={"api_key": KEY}, timeout=30)
    assert download.status_code == 200 and download.headers["content-type"].startswith("text/html")
    assert 'filename="my_page.de.html"' in download.headers["content-disposition"]
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    deepl.Translator(KEY, server_url=main.url).translate_document_from_filepath(
        tmp_path / "page.html", tmp_path / "page.de.html", source_lang="EN", target_lang="DE")
    assert download.content == (tmp_path / "page.de.html").read_bytes() and b"<b>" in download.content
    after = deepl.Translator(KEY, server_url=main.url).get_usage().character.count
    assert after - before == 2 * len(page)  # the file, then the DeepL document
    # The URL is its uploader's: no key, another key, a forged token or a changed name get nothing.
    assert requests.get(url, timeout=10).status_code == 400
    assert requests.get(url, params={"api_key": OTHER_KEY}, timeout=10).status_code == 404
    token, name = url.rsplit("/", 1)[1].split(".", 1)
    forged = f"{main.url}/download_file/{'A' * len(token)}.{name}"
    assert requests.get(forged, params={"api_key": KEY}, timeout=10).status_code == 404
    renamed = f"{main.url}/download_file/{token}.other.de.html"
    assert requests.get(renamed, params={"api_key": KEY}, timeout=10).status_code == 404
    bad = requests.get(f"{main.url}/download_file/not-a-token.txt", params={"api_key": KEY}, timeout=10)
    assert bad.status_code == 400 and bad.json() == {"error": "Invalid filename"}


def test_translate_file_round_trips_a_docx_file(main, tmp_path):
    docx = pytest.importorskip("docx")
    document = docx.Document()
    document.add_paragraph("A man is riding a bicycle.")
    document.add_paragraph("Two dogs are playing in the snow.")
    document.save(tmp_path / "letter.docx")
    answer = _translate_file(main.url, "letter.docx", (tmp_path / "letter.docx").read_bytes())
    assert answer.status_code == 200, answer.text
    download = requests.get(answer.json()["translatedFileUrl"], params={"api_key": KEY}, timeout=30)
    assert download.status_code == 200 and 'filename="letter.de.docx"' in download.headers["content-disposition"]
    (tmp_path / "letter.de.docx").write_bytes(download.content)
    translated = [p.text for p in docx.Document(tmp_path / "letter.de.docx").paragraphs]
    direct = [deepl.Translator(KEY, server_url=main.url).translate_text(p.text, source_lang="EN", target_lang="DE").text
              for p in document.paragraphs]
    assert translated == direct and all(translated)


@pytest.mark.parametrize("name, fields, message", [
    ("a.exe", {}, "Invalid request: file format not supported"),
    ("a.txt", {"source": ""}, "Invalid request: missing source parameter"),
    ("a.txt", {"target": "zz"}, "zz is not supported"),
    ("a.txt", {"source": "fr"}, "fr is not supported"),
])
def test_translate_file_refuses_what_libretranslate_refuses(main, name, fields, message):
    answer = requests.post(main.url + "/translate_file", data={"source": "en", "target": "de", "api_key": KEY} | fields,
                           files={"file": (name, b"A dog runs.")}, timeout=30)
    assert answer.status_code == 400 and answer.json() == {"error": message}



# Files a client may send that no reader can read: each fails in the worker, and the answer is the
# client's 400 naming the problem in words (never 500, never a Python exception's text).
CORRUPT_FILES = [
    ("zip.docx", b"PK\x03\x04 cut short", "zip: not a valid DOCX file: it is not a ZIP package"),
    ("parts.docx", zip_of({"[Content_Types].xml": b"<Types/>", "word/other.xml": b"<x/>"}),
     "parts: not a valid DOCX file: "),
    ("main.docx", zip_of({"[Content_Types].xml": b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/'
                                               b'content-types"/>'}),
     "main: not a valid DOCX file: the package has no main document part"),
    ("cues.srt", b"1\n00:00:01,000 -> nonsense\nText\n", "cues: not a valid SRT file: line 1 does not start"),
    ("cues.vtt", b"not a caption file\n", "cues: not a valid WebVTT file: it does not begin with a 'WEBVTT' line"),
    ("units.xlf", b"<xliff version='1.2'><file><body><trans-unit", "units: not a valid XLIFF file"),
    ("catalog.po", b'msgid "a\nmsgstr', "catalog: not a valid gettext PO file: Syntax error in po file (line 2)"),
]


@pytest.mark.parametrize("name, data, message", CORRUPT_FILES, ids=[name for name, _, _ in CORRUPT_FILES])
def test_a_corrupt_file_is_the_clients_400_naming_the_problem_and_costs_nothing(main, name, data, message):
    usage = {"Authorization": f"DeepL-Auth-Key {KEY}"}
    before = requests.get(main.url + "/v2/usage", headers=usage, timeout=10).json()["character_count"]
    answer = _translate_file(main.url, name, data)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error.startswith("Invalid request: the document cannot be read: " + message), error
    for internal in ("Error:", "Traceback", "object has no attribute", "lxml", "File is not a zip file"):
        assert internal not in error
    assert requests.get(main.url + "/v2/usage", headers=usage, timeout=10).json()["character_count"] == before


def test_empty_texts_are_refused_as_deepl_and_libretranslate_refuse_them(main):
    for text in ("", []):
        deepl_answer = requests.post(main.url + "/v2/translate", headers={"Authorization": f"DeepL-Auth-Key {KEY}"},
                                     json={"text": text, "target_lang": "DE"}, timeout=30)
        assert deepl_answer.status_code == 400 and deepl_answer.json() == {"message": "Parameter 'text' not specified."}
        libre = requests.post(main.url + "/translate", json={"q": text, "source": "en", "target": "de", "api_key": KEY},
                              timeout=30)
        assert libre.status_code == 400 and libre.json() == {"error": "Invalid request: missing q parameter"}
    among = requests.post(main.url + "/v2/translate", headers={"Authorization": f"DeepL-Auth-Key {KEY}"},
                          data={"text": [TEXTS[0], ""], "target_lang": "DE"}, timeout=60)
    assert among.status_code == 200 and [t["text"] == "" for t in among.json()["translations"]] == [False, True]
    listed = requests.post(main.url + "/translate", json={"q": [TEXTS[0], ""], "source": "en", "target": "de",
                                                          "api_key": KEY}, timeout=60)
    assert listed.status_code == 200 and [t == "" for t in listed.json()["translatedText"]] == [False, True]
    for empty in (b"", b" \n\n "):
        answer = _translate_file(main.url, "blank.txt", empty)
        assert answer.status_code == 400 and answer.json() == {"error": "Invalid request: empty file"}


def test_translate_file_needs_a_file_and_a_key(main):
    no_file = requests.post(main.url + "/translate_file", data={"source": "en", "target": "de", "api_key": KEY},
                            timeout=30)
    assert no_file.status_code == 400 and no_file.json() == {"error": "Invalid request: missing file parameter"}
    keyless = _translate_file(main.url, "a.txt", b"A dog runs.", key=None)
    assert keyless.status_code == 400 and "get an API key" in keyless.json()["error"]
    wrong = _translate_file(main.url, "a.txt", b"A dog runs.", key="wrong")
    assert wrong.status_code == 403 and wrong.json() == {"error": "Invalid API key"}


def test_a_glossary_made_with_the_deepl_library_is_applied_listed_read_and_deleted(main, tmp_path):
    translator = deepl.Translator(KEY, server_url=main.url)
    assert [(p.source_lang, p.target_lang) for p in translator.get_glossary_languages()] == [("en", "de")]
    glossary = translator.create_glossary("animals", "EN", "DE", {"dog": "Köter", "ice cream": "Speiseeis"})
    assert glossary.ready and glossary.entry_count == 2 and (glossary.source_lang, glossary.target_lang) == ("EN", "DE")
    sentence = "A man sees a dog."
    plain = translator.translate_text(sentence, source_lang="EN", target_lang="DE").text
    forced = translator.translate_text(sentence, source_lang="EN", target_lang="DE", glossary=glossary).text
    assert "Köter" not in plain and "Köter" in forced
    from_csv = translator.create_glossary_from_csv("csv", "EN", "DE", 'dog,Köter\n"cat, big",Großkatze,en,de\n')
    assert translator.get_glossary_entries(from_csv) == {"dog": "Köter", "cat, big": "Großkatze"}
    assert translator.get_glossary_entries(glossary) == {"dog": "Köter", "ice cream": "Speiseeis"}
    assert {g.glossary_id for g in translator.list_glossaries()} == {glossary.glossary_id, from_csv.glossary_id}
    assert translator.get_glossary(glossary.glossary_id).name == "animals"
    # A document translated with a glossary, through the same library.
    page, out = tmp_path / "dog.html", tmp_path / "dog.de.html"
    page.write_text("<html><body><p>A man sees a dog.</p></body></html>\n", encoding="utf-8")
    translator.translate_document_from_filepath(page, out, source_lang="EN", target_lang="DE", glossary=glossary)
    assert "Köter" in html.unescape(out.read_text(encoding="utf-8"))  # a page without a <head>: references
    # Another key sees none of them and cannot use them.
    other = deepl.Translator(OTHER_KEY, server_url=main.url)
    assert other.list_glossaries() == []
    with pytest.raises(deepl.GlossaryNotFoundException):
        other.get_glossary(glossary.glossary_id)
    with pytest.raises(deepl.DeepLException, match="Glossary not found") as caught:
        other.translate_text(sentence, source_lang="EN", target_lang="DE", glossary=glossary.glossary_id)
    assert caught.value.http_status_code == 404
    with pytest.raises(deepl.GlossaryNotFoundException):
        other.delete_glossary(glossary.glossary_id)
    translator.delete_glossary(glossary)
    assert [g.glossary_id for g in translator.list_glossaries()] == [from_csv.glossary_id]
    with pytest.raises(deepl.GlossaryNotFoundException):
        translator.get_glossary(glossary.glossary_id)
    translator.delete_glossary(from_csv)


@pytest.mark.parametrize("entries, entries_format, message", [
    ("dog Köter", "tsv", "expected 'source<TAB>target'"),
    ("dog\tKöter\nDog\tHund", "tsv", "gives it as"),
    ("dog,Köter,en,fr", "csv", "differ from the glossary's en-de"),
    ("dog", "csv", "expected 2 or 4"),
    ("dog\tKöter", "xlsx", "entries_format"),
])
def test_glossary_entries_that_cannot_be_used_get_400_naming_the_problem(main, entries, entries_format, message):
    answer = requests.post(main.url + "/v2/glossaries", headers={"Authorization": f"DeepL-Auth-Key {KEY}"},
                           json={"name": "bad", "source_lang": "en", "target_lang": "de", "entries": entries,
                                 "entries_format": entries_format}, timeout=10)
    assert answer.status_code == 400 and message in answer.json()["message"]


def test_a_glossary_needs_source_lang_and_its_own_pair(main):
    translator = deepl.Translator(KEY, server_url=main.url)
    with pytest.raises(deepl.DeepLException, match="Unsupported glossary source and target language pair"):
        translator.create_glossary("fr", "EN", "FR", {"dog": "chien"})
    glossary = translator.create_glossary("pair", "EN", "DE", {"dog": "Köter"})
    try:
        answer = requests.post(main.url + "/v2/translate", headers={"Authorization": f"DeepL-Auth-Key {KEY}"},
                               json={"text": ["A dog."], "target_lang": "DE", "glossary_id": glossary.glossary_id},
                               timeout=30)
        assert answer.status_code == 400 and "requires the source_lang" in answer.json()["message"]
    finally:
        translator.delete_glossary(glossary)


def test_webhooks_are_refused_with_a_clear_400_when_no_host_is_allowed(main):
    answer = requests.post(main.url + "/v1/jobs", headers={"Authorization": f"Bearer {KEY}"},
                           data={"target_lang": "de", "callback_url": "http://127.0.0.1:9/hook"},
                           files={"file": ("a.txt", b"A dog.", "text/plain")}, timeout=10)
    assert answer.status_code == 400 and "Webhooks are off" in answer.json()["error"]
