"""Validate LangSmith feedback records (JSON Lines) against the Python SDK's FeedbackCreate.

Used by test/eval/langsmith-feedback.test.ts (langsmith pinned in .ci/run). For each line:
FeedbackCreate.model_validate must accept it; every key must be a FeedbackCreate field (pydantic
would ignore an unknown one silently); id, run_id, trace_id, session_id and feedback_source must be
set (the API needs session_id to find a run); a numeric score must have at most 4 decimals (the
SDKs round to 4 before sending; the API rejects more precise scores sent to it directly).
Prints one JSON object: {"version", "records", "errors": ["line N: ..."]}.
"""
import json
import sys

import langsmith
from langsmith.schemas import FeedbackCreate

REQUIRED = ("id", "run_id", "trace_id", "session_id", "feedback_source")


def main(path: str) -> None:
    errors = []
    records = 0
    fields = set(FeedbackCreate.model_fields)
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            records += 1
            obj = json.loads(line)
            try:
                FeedbackCreate.model_validate(obj)
            except Exception as e:  # pydantic.ValidationError
                errors.append(f"line {n}: {e}")
                continue
            unknown = sorted(set(obj) - fields)
            if unknown:
                errors.append(f"line {n}: not FeedbackCreate fields: {unknown}")
            for key in REQUIRED:
                if obj.get(key) is None:
                    errors.append(f"line {n}: no {key}")
            score = obj.get("score")
            if isinstance(score, float) and round(score, 4) != score:
                errors.append(f"line {n}: score {score!r} has more than 4 decimals")
    print(json.dumps({"version": langsmith.__version__, "records": records, "errors": errors}))


if __name__ == "__main__":
    main(sys.argv[1])
