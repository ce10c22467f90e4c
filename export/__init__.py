"""ONNX export: the encoder and one decoder step into a self-describing, verified model bundle (issue: export)."""
