#!/usr/bin/env python3
"""Measures Tandem's sensitivity engine through its CLI contracts (`tandem scan --jsonl`,
`tandem redact --jsonl`) on labelled data.

    bench/eval_sensitivity.py [--tandem PATH] [--data DIR] [--json OUT]

Span metrics: a predicted span matches a gold span of a compatible tier when their code point
intervals overlap with IoU >= 0.5 (each gold and each prediction matches at most once).
Gold spans of tier `public_or_org` (organisations, places, business registration numbers) are
not sensitive for Tandem: they are not counted, and predictions overlapping them are ignored.
Predicted *content* spans (health conditions, medications, personal finances, legal matters)
have no gold labels in this set: they are counted separately, not as false positives.
"""
import argparse, collections, json, os, subprocess, sys
# tandem never reads ./models on its own: name this checkout's models directory.
os.environ.setdefault("TANDEM_MODELS_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))

SENSITIVE_TIERS = {"secret", "financial", "government_id", "professional_id", "contact"}
CONTENT = {"HEALTH_CONDITION", "MEDICATION", "FINANCIAL_SITUATION", "LEGAL_MATTER", "EDUCATION_RECORD", "PRIVATE_LIFE", "BUSINESS_CONFIDENTIAL"}
STRUCTURED_TIERS = {"secret", "financial", "government_id", "professional_id"}
STRUCTURED_CONTACT = {"EMAIL_ADDRESS", "PHONE_NUMBER", "IP_ADDRESS", "MAC_ADDRESS", "PH_MOBILE_NUMBER", "TR_PHONE_NUMBER"}


def run_jsonl(tandem, args, rows):
    inp = "".join(json.dumps(r) + "\n" for r in rows)
    p = subprocess.run([tandem, *args], input=inp.encode(), capture_output=True, check=False)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)} failed: {p.stderr.decode()[-2000:]}")
    for line in p.stderr.decode().splitlines():
        if line.startswith("notice:"):
            print(line, file=sys.stderr)
    out = [json.loads(l) for l in p.stdout.decode().splitlines()]
    assert len(out) == len(rows), (len(out), len(rows))
    return out


def iou(a, b):
    inter = max(0, min(a["end"], b["end"]) - max(a["start"], b["start"]))
    union = max(a["end"], b["end"]) - min(a["start"], b["start"])
    return inter / union if union else 0.0


def compatible(gold_tier, pred_tier):
    return gold_tier == pred_tier


def f_beta(p, r, beta=2.0):
    return 0.0 if p + r == 0 else (1 + beta * beta) * p * r / (beta * beta * p + r)


class Counts:
    def __init__(self):
        self.tp_gold = self.gold = self.tp_pred = self.pred = 0

    def add(self, other):
        for k in ("tp_gold", "gold", "tp_pred", "pred"):
            setattr(self, k, getattr(self, k) + getattr(other, k))

    def figures(self):
        r = self.tp_gold / self.gold if self.gold else float("nan")
        p = self.tp_pred / self.pred if self.pred else float("nan")
        f2 = f_beta(p if self.pred else 1.0, r if self.gold else 1.0)
        return {"precision": round(p, 4), "recall": round(r, 4), "f2": round(f2, 4), "gold": self.gold, "pred": self.pred}


def eval_spans(rows, preds):
    by_tier = collections.defaultdict(Counts)
    by_label = collections.defaultdict(Counts)
    structured = Counts()
    total = Counts()
    content_fired = 0
    lookalike_rows = lookalike_clean = 0
    row_tp = row_fp = row_fn = 0
    broad_tp = broad_fp = broad_fn = 0
    misses = collections.Counter()
    for row, pred in zip(rows, preds):
        gold = [g for g in row["spans"] if g["tier"] != "public_or_org"]
        public = [g for g in row["spans"] if g["tier"] == "public_or_org"]
        ps = [p for p in pred.get("spans", []) if p["label"] not in CONTENT]
        content_fired += sum(1 for p in pred.get("spans", []) if p["label"] in CONTENT)
        ps = [p for p in ps if not any(iou(p, g) >= 0.5 for g in public) or any(iou(p, g) >= 0.5 for g in gold)]
        used_p = set()
        gold_hit = []
        for g in gold:
            hit = None
            for i, p in enumerate(ps):
                if i not in used_p and compatible(g["tier"], p["tier"]) and iou(g, p) >= 0.5:
                    hit = i
                    break
            if hit is not None:
                used_p.add(hit)
            gold_hit.append(hit is not None)
            if hit is None:
                misses[g["label"]] += 1
        for g, hit in zip(gold, gold_hit):
            for c in (by_tier[g["tier"]], by_label[g["label"]], total):
                c.gold += 1
                c.tp_gold += hit
            if g["tier"] in STRUCTURED_TIERS or g["label"] in STRUCTURED_CONTACT:
                structured.gold += 1
                structured.tp_gold += hit
        for i, p in enumerate(ps):
            hit = i in used_p
            for c in (by_tier[p["tier"]], by_label[p["label"]], total):
                c.pred += 1
                c.tp_pred += hit
            if p["tier"] in STRUCTURED_TIERS or p["label"] in STRUCTURED_CONTACT:
                structured.pred += 1
                structured.tp_pred += hit
        # Look-alikes: rows with no gold spans at all (failing checksums, placeholders, clean text).
        if not row["spans"]:
            lookalike_rows += 1
            lookalike_clean += not ps
        pred_sensitive = any(p["tier"] in SENSITIVE_TIERS for p in ps)
        g = row["sensitive"]
        row_tp += g and pred_sensitive
        row_fp += (not g) and pred_sensitive
        row_fn += g and not pred_sensitive
        gb = row["sensitive_broad"]
        pb = bool(ps)
        broad_tp += gb and pb
        broad_fp += (not gb) and pb
        broad_fn += gb and not pb
    return {
        "spans_all": total.figures(),
        "structured_and_secrets": structured.figures(),
        "by_tier": {k: v.figures() for k, v in sorted(by_tier.items())},
        "by_label": {k: v.figures() for k, v in sorted(by_label.items())},
        "lookalike_rows": lookalike_rows,
        "lookalike_not_flagged": round(lookalike_clean / lookalike_rows, 4) if lookalike_rows else None,
        "row_sensitive": {"precision": round(row_tp / max(1, row_tp + row_fp), 4), "recall": round(row_tp / max(1, row_tp + row_fn), 4)},
        "row_sensitive_broad": {"precision": round(broad_tp / max(1, broad_tp + broad_fp), 4), "recall": round(broad_tp / max(1, broad_tp + broad_fn), 4)},
        "content_spans_fired": content_fired,
        "top_misses": misses.most_common(15),
    }


def eval_pupa(tandem, data):
    rows = [json.loads(l) for l in open(os.path.join(data, "delegation_pupa.jsonl"))]
    inp = [{"id": r["id"], "text": r["user_query"]} for r in rows]
    out = run_jsonl(tandem, ["redact", "--jsonl"], inp)
    units = protected = 0
    leaked = collections.Counter()
    for r, o in zip(rows, out):
        sent = o["text"].lower()
        query = r["user_query"].lower()
        for u in r["pii_units"]:
            u = u.lower().strip()
            if not u or u not in query:
                continue  # the unit is not literally in the query: nothing to protect
            units += 1
            if u in sent:
                leaked[r["category"]] += 1
            else:
                protected += 1
    return {"pii_units_in_query": units, "protected": protected, "protected_share": round(protected / max(1, units), 4), "leaked_by_category": dict(leaked)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", default=os.environ.get("TANDEM_BIN", "target/debug/tandem"))
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "eval", "dev"))
    ap.add_argument("--json", help="write all figures to this file")
    args = ap.parse_args()
    rows = [json.loads(l) for l in open(os.path.join(args.data, "pii_spans.jsonl"))]
    preds = run_jsonl(args.tandem, ["scan", "--jsonl"], [{"id": r["id"], "text": r["text"]} for r in rows])
    result = {"pii_spans": eval_spans(rows, preds), "pupa": eval_pupa(args.tandem, args.data)}
    s = result["pii_spans"]
    print(f"pii_spans.jsonl ({len(rows)} rows)")
    print(f"  all sensitive spans      P {s['spans_all']['precision']:.3f}  R {s['spans_all']['recall']:.3f}  F2 {s['spans_all']['f2']:.3f}")
    print(f"  structured + secrets     P {s['structured_and_secrets']['precision']:.3f}  R {s['structured_and_secrets']['recall']:.3f}")
    print(f"  look-alikes not flagged  {s['lookalike_not_flagged']:.3f} of {s['lookalike_rows']} rows")
    print(f"  row sensitive            P {s['row_sensitive']['precision']:.3f}  R {s['row_sensitive']['recall']:.3f}  (broad: P {s['row_sensitive_broad']['precision']:.3f} R {s['row_sensitive_broad']['recall']:.3f})")
    for t, f in s["by_tier"].items():
        print(f"    {t:<18} P {f['precision']:.3f}  R {f['recall']:.3f}  F2 {f['f2']:.3f}  gold {f['gold']} pred {f['pred']}")
    print("  top misses:", s["top_misses"])
    p = result["pupa"]
    print(f"delegation_pupa.jsonl: {p['protected']}/{p['pii_units_in_query']} pii_units never sent ({p['protected_share']:.3f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
