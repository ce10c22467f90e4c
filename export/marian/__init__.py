"""Import Marian Transformers (Hugging Face MarianMT directories, Marian's own ``.npz`` releases)
into the project's signed bundle: the encoder graph and one decoder step with a key/value cache.
``nmt import`` is its command line (``export.marian.cli``)."""
