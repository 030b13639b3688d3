"""Sentence embeddings with Python's onnxruntime and tokenizers (PyPI), the
independent implementation retrace's transformers.js embedder is checked
against (test/retrieval/bge-parity.test.ts, docs/models.md).

stdin: {"model_dir": DIR, "onnx": "onnx/model.onnx", "max_length": 512,
        "pooling": "cls" | "mean", "batch": 16, "texts": [...]}
stdout: {"vectors": [[...], ...]}, L2-normalised, one per text in order.

Tokenization follows tokenizer.json as Hugging Face's `tokenizers` applies
it (truncation keeps the special tokens), padding to the longest text of a
batch with the attention mask set; pooling is the [CLS] vector or the
masked mean of the last hidden state.
"""
import json
import os
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def main() -> None:
    req = json.load(sys.stdin)
    model_dir = req["model_dir"]
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(max_length=int(req["max_length"]))
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(
        os.path.join(model_dir, req["onnx"]), sess_options=opts, providers=["CPUExecutionProvider"]
    )
    names = {i.name for i in sess.get_inputs()}
    out = []
    texts = req["texts"]
    batch = int(req.get("batch", 16))
    for start in range(0, len(texts), batch):
        enc = tok.encode_batch(texts[start : start + batch])
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = sess.run(None, feeds)[0]
        if req["pooling"] == "cls":
            pooled = hidden[:, 0, :]
        else:
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        pooled = pooled / np.where(norms == 0, 1, norms)
        out.extend(pooled.astype(float).tolist())
    json.dump({"vectors": out}, sys.stdout)


if __name__ == "__main__":
    main()
