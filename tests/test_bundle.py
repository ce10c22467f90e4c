"""The bundle reader validates on load: each broken bundle gives an error naming the problem."""
from __future__ import annotations

import json
import shutil

import onnx
import pytest

from worker.engine.bundle import BundleError, load_bundle, signature_for, verify_graphs

from .conftest import REPO_ROOT

pytestmark = pytest.mark.slow


@pytest.fixture
def bundle_copy(tiny_bundle, tmp_path):
    return shutil.copytree(tiny_bundle, tmp_path / "bundle")


def rewrite_manifest(path, change):
    manifest = json.loads((path / "manifest.json").read_text())
    change(manifest)
    (path / "manifest.json").write_text(json.dumps(manifest))


def test_missing_directory_and_manifest(tmp_path):
    with pytest.raises(BundleError, match="bundle directory not found"):
        load_bundle(tmp_path / "nope")
    with pytest.raises(BundleError, match="missing manifest.json"):
        load_bundle(tmp_path)


def test_missing_file_is_named(bundle_copy):
    (bundle_copy / "decoder_step.onnx").unlink()
    with pytest.raises(BundleError, match="missing file decoder_step.onnx"):
        load_bundle(bundle_copy)


def test_hash_mismatch_is_named(bundle_copy):
    with open(bundle_copy / "spm.model", "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(BundleError, match="sha256 mismatch for spm.model"):
        load_bundle(bundle_copy)


def test_unknown_format_version(bundle_copy):
    rewrite_manifest(bundle_copy, lambda m: m.update(format_version=99))
    with pytest.raises(BundleError, match="unknown format version 99; this worker reads version 1"):
        load_bundle(bundle_copy)


def test_malformed_manifest(bundle_copy):
    (bundle_copy / "manifest.json").write_text("{not json")
    with pytest.raises(BundleError, match="not valid JSON"):
        load_bundle(bundle_copy)


def test_missing_key_is_named(bundle_copy):
    rewrite_manifest(bundle_copy, lambda m: m.pop("special_ids"))
    with pytest.raises(BundleError, match="missing key 'special_ids'"):
        load_bundle(bundle_copy)


def test_tampered_signature(bundle_copy):
    rewrite_manifest(bundle_copy, lambda m: m.update(signature="en-de.fp32.000000000000"))
    with pytest.raises(BundleError, match="signature .* does not match"):
        load_bundle(bundle_copy)


def test_graph_inputs_that_do_not_match_the_manifest(bundle_copy):
    def rename(manifest):
        manifest["graphs"]["decoder_step"]["inputs"][0]["name"] = "previous_ids"
        manifest["signature"] = signature_for(manifest)
    rewrite_manifest(bundle_copy, rename)
    with pytest.raises(BundleError, match=r"graph 'decoder_step' has inputs \['prev_ids'.*manifest says \['previous_ids'"):
        verify_graphs(load_bundle(bundle_copy))


def test_graph_that_is_not_onnx(bundle_copy):
    (bundle_copy / "encoder.onnx").write_bytes(b"garbage")
    def rehash(manifest):
        import hashlib
        manifest["files"]["encoder.onnx"] = hashlib.sha256(b"garbage").hexdigest()
        manifest["signature"] = signature_for(manifest)
    rewrite_manifest(bundle_copy, rehash)
    with pytest.raises(BundleError, match=r"graph 'encoder' \(encoder.onnx\) does not load"):
        verify_graphs(load_bundle(bundle_copy))


def test_valid_bundle_loads(tiny_bundle):
    bundle = load_bundle(tiny_bundle)
    verify_graphs(bundle)
    assert onnx.load(str(bundle.graph_path("encoder"))).opset_import[0].version >= 17


def test_update_manifest_sets_decoding_settings_keeps_the_signature_and_refuses_identity_keys(tmp_path):
    from worker.engine.bundle import update_manifest

    from .conftest import REPO_ROOT

    bundle = tmp_path / "bundle"
    shutil.copytree(REPO_ROOT / "models" / "multi30k-en-de", bundle)
    before = load_bundle(bundle)
    update_manifest(bundle, stand_ins=["Paris", "Tom"])
    after = load_bundle(bundle)
    assert after.manifest["stand_ins"] == ["Paris", "Tom"] and after.signature == before.signature
    assert {k: v for k, v in after.manifest.items() if k != "stand_ins"} == \
        {k: v for k, v in before.manifest.items() if k != "stand_ins"}
    with pytest.raises(BundleError, match="files, signature define the bundle's files and cannot be updated"):
        update_manifest(bundle, signature="x", files={})
    assert load_bundle(bundle).signature == before.signature


def test_a_relative_bundle_path_is_also_found_beside_the_packages(tmp_path, monkeypatch):
    from worker.engine.bundle import resolve_bundle_path

    monkeypatch.chdir(tmp_path)  # nothing called models/ here
    found = resolve_bundle_path("models/multi30k-en-de")
    assert found.is_absolute() and (found / "manifest.json").is_file()
    assert resolve_bundle_path(None) == REPO_ROOT / "models" / "en-de"
