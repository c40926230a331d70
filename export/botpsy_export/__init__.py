"""botpsy_export: Hugging Face / GGUF checkpoints -> verified, quantized ONNX folders for the page.

Entry points: `botpsy_export.api.export_model` and the `botpsy-web export` command
(`botpsy_export.command`). The folder layout is the contract in docs/contracts.md §1.
"""
