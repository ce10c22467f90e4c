"""Tiny MarianMT models made with transformers, as OPUS-MT distributes them (a Hugging Face
directory) and as Marian releases them (``.npz``): SentencePiece models trained on Tatoeba pairs
from ../shared/data (toy pairs where it is absent), a Marian vocabulary (``</s>`` 0, ``<unk>`` 1,
``<pad>`` last and the decoder's start), weights briefly trained so outputs are not degenerate."""
from __future__ import annotations

import gzip
import io
import json
import os
from pathlib import Path

from .conftest import REPO_ROOT, make_toy_pairs

TATOEBA = Path(os.environ.get("NMT_SHARED_DATA", REPO_ROOT.parent / "shared" / "data")) / "tatoeba-deu-eng"
TARGET_TOKENS = (">>deu<<", ">>fra<<")  # the multilingual model's target-language tokens


def sample_pairs(n: int, offset: int = 0) -> list[tuple[str, str]]:
    """Short Tatoeba pairs (toy pairs without ../shared)."""
    if not (TATOEBA / "train.en.gz").is_file():
        return make_toy_pairs(n, seed=offset + 11)
    with gzip.open(TATOEBA / "train.en.gz", "rt", encoding="utf-8") as en, \
            gzip.open(TATOEBA / "train.de.gz", "rt", encoding="utf-8") as de:
        pairs = [(s.strip(), t.strip()) for s, t in zip(en, de) if 2 <= len(s.split()) <= 9]
    step = max(1, len(pairs) // (n + offset + 1))
    return pairs[offset * step::step][:n] if offset == 0 else pairs[step // 2::step][offset:offset + n]


def _spm(lines: list[str], size: int) -> bytes:
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model, vocab_size=size,
                                   character_coverage=1.0, model_type="unigram", bos_id=-1, eos_id=-1, unk_id=0,
                                   pad_id=-1, minloglevel=2, hard_vocab_limit=False)
    return model.getvalue()


def build_hf_marian(out: Path, *, shared: bool = True, multilingual: bool = False, steps: int = 300,
                    seed: int = 0, d_model: int = 32, layers: int = 2, heads: int = 4, ffn: int = 64,
                    pairs: int = 3000) -> Path:
    """A trained tiny MarianMT directory in ``out``; returns it."""
    import torch

    torch.manual_seed(seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # seen: on a busy 2-core machine, one thread trains these tiny models 5x faster
    try:
        return _build(out, shared, multilingual, steps, d_model, layers, heads, ffn, pairs)
    finally:
        torch.set_num_threads(threads)


def _build(out: Path, shared: bool, multilingual: bool, steps: int, d_model: int, layers: int, heads: int, ffn: int,
           pairs: int) -> Path:
    import sentencepiece as spm
    from transformers import GenerationConfig, MarianConfig, MarianMTModel, MarianTokenizer

    data = sample_pairs(pairs)
    out.mkdir(parents=True, exist_ok=True)
    (out / "source.spm").write_bytes(_spm([s for s, _ in data], 300))
    (out / "target.spm").write_bytes(_spm([t for _, t in data], 300))
    src_sp = spm.SentencePieceProcessor(model_file=str(out / "source.spm"))
    tgt_sp = spm.SentencePieceProcessor(model_file=str(out / "target.spm"))

    def table(processors, extra=()) -> dict[str, int]:
        vocab = {"</s>": 0, "<unk>": 1}
        for token in extra:
            vocab.setdefault(token, len(vocab))
        for sp in processors:
            for i in range(sp.get_piece_size()):
                if not sp.is_unknown(i):
                    vocab.setdefault(sp.id_to_piece(i), len(vocab))
        vocab["<pad>"] = len(vocab)
        return vocab

    extra = TARGET_TOKENS if multilingual else ()
    if shared:
        source = target = table([src_sp, tgt_sp], extra)
        (out / "vocab.json").write_text(json.dumps(source, ensure_ascii=False), encoding="utf-8")
    else:
        source, target = table([src_sp], extra), table([tgt_sp])
        (out / "vocab.json").write_text(json.dumps(source, ensure_ascii=False), encoding="utf-8")
        (out / "target_vocab.json").write_text(json.dumps(target, ensure_ascii=False), encoding="utf-8")
    pad = target["<pad>"]
    config = MarianConfig(vocab_size=len(source), decoder_vocab_size=len(target), d_model=d_model,
                          encoder_layers=layers, decoder_layers=layers, encoder_attention_heads=heads,
                          decoder_attention_heads=heads, encoder_ffn_dim=ffn, decoder_ffn_dim=ffn,
                          max_position_embeddings=256, pad_token_id=pad, eos_token_id=0, forced_eos_token_id=0,
                          decoder_start_token_id=pad, activation_function="swish", scale_embedding=True,
                          share_encoder_decoder_embeddings=shared, dropout=0.0)
    model = MarianMTModel(config)
    tokenizer = MarianTokenizer(str(out / "source.spm"), str(out / "target.spm"), str(out / "vocab.json"),
                                target_vocab_file=None if shared else str(out / "target_vocab.json"),
                                separate_vocabs=not shared, source_lang="en", target_lang="de")
    _train(model, tokenizer, data, steps, multilingual)
    model.generation_config = GenerationConfig(num_beams=4, max_length=64, bad_words_ids=[[pad]], pad_token_id=pad,
                                               eos_token_id=0, decoder_start_token_id=pad, forced_eos_token_id=0)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / "README.md").write_text("# tiny-marian\n\n* license: CC-BY 4.0\n\n```\n@inproceedings{tiny,\n  title={Tiny}\n}\n```\n",
                                   encoding="utf-8")
    return out


def _train(model, tokenizer, data, steps: int, multilingual: bool) -> None:
    """Adam on the pairs, tokenized once, in length-sorted batches of 32."""
    import torch

    sources = [(">>deu<< " if multilingual else "") + s for s, _ in data]
    encoded = tokenizer(sources, text_target=[t for _, t in data])
    order = sorted(range(len(data)), key=lambda i: len(encoded["input_ids"][i]))
    batches = [order[i:i + 32] for i in range(0, len(order), 32)]
    pad = model.config.pad_token_id
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    generator = torch.Generator().manual_seed(0)
    for step in range(steps):
        rows = batches[int(torch.randint(len(batches), (1,), generator=generator))]
        src = _padded([encoded["input_ids"][i] for i in rows], pad)
        labels = _padded([encoded["labels"][i] for i in rows], -100)
        loss = model(input_ids=src, attention_mask=src != pad, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()


def _padded(rows: list[list[int]], value: int):
    import torch

    out = torch.full((len(rows), max(map(len, rows))), value, dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, :len(row)] = torch.tensor(row)
    return out


def shared_model(tmp_path_factory, name: str = "tiny-marian", steps: int = 300) -> tuple[Path, Path]:
    """The tiny shared-vocabulary model and its imported bundle (named ``name``), built once per test
    session for every pytest-xdist worker (the first builds under a lock, the others wait and reuse)."""
    from .conftest import held_lock, run_nmt

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the session's directory, above each worker's own
    root = shared / f"shared-{name}-{steps}"
    with held_lock(shared / f"shared-{name}-{steps}.lock"):
        if not (root / "done").is_file():
            model = build_hf_marian(root / "hf", steps=steps)
            imported = run_nmt("import", str(model), "--out", str(root / name))
            assert imported.returncode == 0, imported.stderr
            (root / "done").write_text("built\n")
    return root / "hf", root / name
