"""Training: corpus, SentencePiece, the Bahdanau-attention model and its training loop."""
