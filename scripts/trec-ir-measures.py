#!/usr/bin/env python3
"""Per-query values of trec_eval measures computed by ir_measures, for the comparison
in test/eval/trec-ir-measures.test.ts (docs/metrics.md, "How this is checked").

    python3 scripts/trec-ir-measures.py QRELS RUN

prints one JSON object {variant: {qid: {trec_eval row name: value}}} on stdout, for
three variants: "default" (relevance level 1), "judged" (trec_eval -J, judged_only)
and "level2" (trec_eval -l2, rel=2). ir_measures (pinned in .ci/run) computes these
through pytrec_eval, which embeds trec_eval 9.0.8's C code; Judged@k comes from
ir_measures' own judged provider. Exit 3 when ir_measures is not installed.
"""
import json
import sys

try:
    import ir_measures
    from ir_measures import AP, RR, Bpref, Judged, NumRel, NumRelRet, NumRet, P, R, Rprec, Success, infAP, nDCG
except ImportError as e:  # pragma: no cover - reported to the test
    print(f"ir_measures is not installed ({e}): pip install ir_measures==0.4.3", file=sys.stderr)
    sys.exit(3)

CUTS = (5, 10, 20)


def default_measures():
    out = {
        "map": AP,
        "Rprec": Rprec,
        "bpref": Bpref,
        "infAP": infAP,
        "recip_rank": RR,
        "num_ret": NumRet,
        "num_rel": NumRel,
        "num_rel_ret": NumRelRet,
    }
    for k in CUTS:
        out[f"map_cut_{k}"] = AP @ k
        out[f"P_{k}"] = P @ k
        out[f"recall_{k}"] = R @ k
        out[f"ndcg_cut_{k}"] = nDCG @ k
        out[f"success_{k}"] = Success @ k
        out[f"judged_{k}"] = Judged @ k
    return out


def judged_measures():
    out = {
        "map": AP(judged_only=True),
        "Rprec": Rprec(judged_only=True),
        "recip_rank": RR(judged_only=True),
    }
    for k in CUTS:
        out[f"P_{k}"] = P(judged_only=True) @ k
        out[f"recall_{k}"] = R(judged_only=True) @ k
        out[f"ndcg_cut_{k}"] = nDCG(judged_only=True) @ k
        out[f"success_{k}"] = Success(judged_only=True) @ k
    return out


def level2_measures():
    out = {
        "map": AP(rel=2),
        "Rprec": Rprec(rel=2),
        "bpref": Bpref(rel=2),
        "infAP": infAP(rel=2),
        "recip_rank": RR(rel=2),
        "num_rel_ret": NumRet(rel=2),
    }
    for k in CUTS:
        out[f"P_{k}"] = P(rel=2) @ k
        out[f"success_{k}"] = Success(rel=2) @ k
    return out


def compute(names, qrels_file, run_file):
    by_measure = {str(m): name for name, m in names.items()}
    qrels = list(ir_measures.read_trec_qrels(qrels_file))
    run = list(ir_measures.read_trec_run(run_file))
    judged = [m for m in names.values() if m.NAME == "Judged"]
    others = [m for m in names.values() if m.NAME != "Judged"]
    values = {}
    for r in ir_measures.iter_calc(others, qrels, run):
        values.setdefault(r.query_id, {})[by_measure[str(r.measure)]] = float(r.value)
    if judged:
        # trec_eval counts a document with a negative qrels value (pooled, not judged) as unjudged;
        # ir_measures' Judged counts every qrels line: give it the judged lines only.
        judged_qrels = [q for q in qrels if q.relevance >= 0]
        # ir_measures' Judged breaks score ties by docno ascending, trec_eval by docno descending:
        # give it trec_eval's order as distinct scores.
        by_query = {}
        for d in run:
            by_query.setdefault(d.query_id, []).append(d)
        trec_order = []
        for qid, docs in by_query.items():
            docs.sort(key=lambda d: d.doc_id, reverse=True)
            docs.sort(key=lambda d: -d.score)  # stable: ties stay by docno descending
            trec_order += [ir_measures.ScoredDoc(qid, d.doc_id, float(len(docs) - i)) for i, d in enumerate(docs)]
        for r in ir_measures.iter_calc(judged, judged_qrels, trec_order):
            values.setdefault(r.query_id, {})[by_measure[str(r.measure)]] = float(r.value)
    return values


def main():
    qrels_file, run_file = sys.argv[1], sys.argv[2]
    out = {
        "default": compute(default_measures(), qrels_file, run_file),
        "judged": compute(judged_measures(), qrels_file, run_file),
        "level2": compute(level2_measures(), qrels_file, run_file),
    }
    json.dump(out, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
