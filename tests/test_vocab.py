"""SentencePiece vocabularies: training, special ids and round trips."""
from __future__ import annotations

from training.vocab import BOS_ID, EOS_ID, PAD_ID, UNK_ID, Vocab, train_vocab

from .conftest import make_toy_pairs


def test_sentencepiece_round_trip_and_special_ids(tmp_path):
    pairs = make_toy_pairs(300)
    vocab = train_vocab([s for s, _ in pairs] + [t for _, t in pairs], size=80)
    sp = vocab.processor
    assert (sp.pad_id(), sp.unk_id(), sp.bos_id(), sp.eos_id()) == (PAD_ID, UNK_ID, BOS_ID, EOS_ID)
    for text in ("A big dog sees the red ball.", "Der mann läuft heim.", "  the  small   cat  "):
        ids = vocab.encode(text)
        assert all(i > EOS_ID for i in ids)
        assert vocab.decode(ids) == " ".join(text.split())
    # Characters never seen in training become unk rather than failing.
    assert UNK_ID in vocab.encode("q")
    # Saved and reloaded models encode identically.
    vocab.save(tmp_path / "spm.model")
    assert Vocab.load(tmp_path / "spm.model").encode("Ein hund isst.") == vocab.encode("Ein hund isst.")


def test_decode_drops_special_ids():
    vocab = train_vocab([s for s, _ in make_toy_pairs(200)], size=60)
    ids = vocab.encode("The cat runs home.")
    assert vocab.decode([BOS_ID, *ids, EOS_ID, PAD_ID]) == "The cat runs home."


def test_small_corpus_yields_smaller_vocabulary_instead_of_failing():
    vocab = train_vocab(["tiny corpus", "two lines"], size=8000)
    assert 4 < len(vocab) < 8000
