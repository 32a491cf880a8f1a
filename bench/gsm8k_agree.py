#!/usr/bin/env python3
"""Issue 20 routing study: does agreement between two local solutions of a worked problem tell
when the local answer is right? For each dev GSM8K row (first N by id hash) the recommended model
(through llama-server, same GGUF) solves the problem in words as Tandem asks it (chat turn,
`selfcheck::WORKED_SYSTEM`, greedy) and as two programs written two ways (plain text, the reply
begun with a code fence, greedy; the programs' arithmetic evaluated by a restricted evaluator).
Reports agreement of the words and the first program, and two of the three. One JSON line a row.
Usage: llama-server -m QWEN_1.5B.gguf -t 2 --port 8099 & python3 bench/gsm8k_agree.py N OUT.jsonl [SKIP]
       (SKIP: leave out the first SKIP rows by id hash, e.g. rows the rules were read on)
       python3 bench/gsm8k_agree.py --report OUT.jsonl
       (GSM8K_WORDS_MAX=N: the words answer's token limit, default 384; GSM8K_WORDS_LIMIT=N with
       --report: replay a lower limit on a run made with a higher one)"""
import ast, hashlib, json, math, operator, os, re, sys, time, urllib.request

URL = "http://127.0.0.1:8099"
WORKED_SYSTEM = ('Solve the problem. Reason briefly, step by step, then write the final answer on '
                 'its own last line as "Answer: <number>".')
POT = ("Question: {q}\n\nWrite a short Python program that computes the answer, using only "
       "arithmetic, and stores the final number in a variable named `answer`.\n\n```python\n")
# The second program (Tandem asks for it only where the words and the first program disagree).
POT2 = ("Question: {q}\n\nAnswer the question with a Python program. First assign each number given "
        "in the question to a variable with a descriptive name, then compute the result step by "
        "step and assign it to `answer`.\n\n```python\n")


# The words answer's token limit (Tandem asks for at least 384). A study run with a higher limit
# also reports the lower one: greedy decoding writes the same first tokens, so a words answer
# longer than `GSM8K_WORDS_LIMIT` tokens counts as cut off there (`--report` with that set).
WORDS_MAX = int(os.environ.get("GSM8K_WORDS_MAX", "384"))
WORDS_LIMIT = int(os.environ["GSM8K_WORDS_LIMIT"]) if os.environ.get("GSM8K_WORDS_LIMIT") else None


def post(path, body):
    req = urllib.request.Request(URL + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req, timeout=900))


def number(s):
    """The last number in `s` (commas and a currency sign dropped)."""
    m = re.findall(r"-?\d[\d,]*(?:\.\d+)?", s.replace("$", ""))
    if not m:
        return None
    try:
        return float(m[-1].replace(",", ""))
    except ValueError:
        return None


OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
       ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
       ast.Pow: operator.pow}
FUNCS = {"round": round, "int": int, "float": float, "abs": abs, "min": min, "max": max,
         "sum": lambda *a: sum(a[0]) if len(a) == 1 else sum(a)}
MATH = {"ceil": math.ceil, "floor": math.floor, "sqrt": math.sqrt}


def evaluate(code):
    """Assignments of arithmetic only, as Tandem's `router::program` reads them: the value of
    `answer`, else the last number printed on its own; any other statement (a condition, a
    loop, an import other than math) means no number."""
    env = {}
    printed = None

    def ev(n):
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):
            return n.value
        if isinstance(n, ast.Name):
            return env[n.id]
        if isinstance(n, ast.BinOp) and type(n.op) in OPS:
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Pow) and abs(b) > 100:
                raise ValueError("power")
            return OPS[type(n.op)](a, b)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in FUNCS:
            return FUNCS[n.func.id](*[ev(a) for a in n.args])
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and getattr(n.func.value, "id", "") == "math" and n.func.attr in MATH):
            return MATH[n.func.attr](*[ev(a) for a in n.args])
        if isinstance(n, (ast.List, ast.Tuple)):
            return [ev(e) for e in n.elts]
        raise ValueError(type(n).__name__)

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    for st in tree.body:
        try:
            if isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) for t in st.targets):
                v = ev(st.value)
                for t in st.targets:
                    env[t.id] = v
            elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name) and type(st.op) in OPS:
                env[st.target.id] = OPS[type(st.op)](env[st.target.id], ev(st.value))
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and getattr(st.value.func, "id", "") == "print":
                try:  # a number printed on its own is the program's result when no `answer` is set
                    v = ev(st.value.args[0]) if len(st.value.args) == 1 else None
                    if isinstance(v, (int, float)):
                        printed = v
                except Exception:
                    pass
                continue
            elif isinstance(st, ast.Import) and [a.name for a in st.names] == ["math"]:
                continue
            else:
                return None
        except Exception:
            return None
    v = env.get("answer", printed)
    return float(v) if isinstance(v, (int, float)) else None


def admits_below_zero(q):
    """As `selfcheck::admits_below_zero`: the question writes a negative number or speaks of one."""
    q = q.lower()
    return (re.search(r"(?<![^\W_])[-\u2212]\d", q) is not None
            or any(w in q for w in ("negative", "below zero", "minus")))


def same(a, b):
    return a is not None and b is not None and abs(a - b) < 1e-6 * max(1, abs(b))


def run(n, out_path, skip=0):
    data = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "eval", "dev", "routing_gsm8k.jsonl")
    rows = [json.loads(l) for l in open(data)]
    rows.sort(key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest())
    done = set()
    if os.path.exists(out_path):
        done = {json.loads(l)["id"] for l in open(out_path)}
    out = open(out_path, "a")
    for r in rows[skip:skip + n]:
        if r["id"] in done:
            continue
        q = r["question"].strip()
        t = time.time()
        c = post("/v1/chat/completions", {"messages": [{"role": "system", "content": WORKED_SYSTEM},
                                                       {"role": "user", "content": q}],
                                          "max_tokens": WORDS_MAX, "temperature": 0})
        words = c["choices"][0]["message"]["content"]
        cut = c["choices"][0].get("finish_reason") == "length"
        words_tokens = c.get("usage", {}).get("completion_tokens")
        tw = time.time() - t
        t = time.time()
        p = post("/completion", {"prompt": POT.format(q=q), "n_predict": 256, "temperature": 0,
                                 "stop": ["```"], "cache_prompt": True})
        code = p["content"]
        tp = time.time() - t
        p2 = post("/completion", {"prompt": POT2.format(q=q), "n_predict": 320, "temperature": 0,
                                  "stop": ["```"], "cache_prompt": True})
        last = [l for l in words.strip().splitlines() if l.strip()]
        a_words = number(last[-1]) if last else None
        a_prog = evaluate(code)
        gold = float(r["final_answer"].replace(",", ""))
        out.write(json.dumps({"id": r["id"], "gold": gold, "strong_ok": r["strong_ok"],
                              "words": a_words, "program": a_prog,
                              "words_ok": same(a_words, gold), "program_ok": same(a_prog, gold),
                              "agree": same(a_words, a_prog), "words_cut": cut,
                              "words_tokens": words_tokens, "words_max": WORDS_MAX,
                              "s_words": round(tw, 1),
                              "s_program": round(tp, 1), "text": words, "code": code,
                              "code2": p2["content"]}) + "\n")
        out.flush()


def report(path):
    rows = [json.loads(l) for l in open(path)]
    for r in rows:  # re-read each program with the evaluator as it stands
        if WORDS_LIMIT is not None and (r.get("words_tokens") or 0) > WORDS_LIMIT:
            r["words_cut"], r["words"], r["words_ok"] = True, None, False
        r["program"] = evaluate(r["code"])
        r["program_ok"] = same(r["program"], r["gold"])
        r["agree"] = same(r["words"], r["program"])
    n = len(rows)
    strong = sum(r["strong_ok"] for r in rows) / n
    print(f"rows {n}; strong {strong:.3f}; words {sum(r['words_ok'] for r in rows)/n:.3f}; "
          f"program {sum(r['program_ok'] for r in rows)/n:.3f}; program ran "
          f"{sum(r['program'] is not None for r in rows)/n:.3f}")
    ag = [r for r in rows if r["agree"]]
    print(f"agree {len(ag)}/{n}; right when they agree {sum(r['words_ok'] for r in ag)}/{len(ag)}; "
          f"right when not: words {sum(r['words_ok'] for r in rows if not r['agree'])}/{n-len(ag)}")
    # Keep the agreed answer, send the rest; PGR against local alone (the words answer).
    local = sum(r["words_ok"] for r in rows) / n
    routed = sum(r["words_ok"] if r["agree"] else r["strong_ok"] for r in rows) / n
    gap = strong - local
    print(f"routed {routed:.3f} at {(n-len(ag))/n:.2f} sent; PGR {(routed-local)/gap if gap else float('nan'):.2f}")
    # Two of three: the words, the first program and (where those disagree) the second. As
    # shipped (2026-12-06, twenty-sixth session), a solution cut off at the length limit or
    # below zero where the question allows no such result reaches no number; "before" counts
    # every number.
    questions = {}
    data = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "eval", "dev", "routing_gsm8k.jsonl")
    for l in open(data):
        d = json.loads(l)
        questions[d["id"]] = d["question"]
    kinds = {}
    for rules in (False, True):
        kept = right = dropped = 0
        score = 0.0
        for r in rows:
            a2 = evaluate(r.get("code2", ""))
            w, a1 = r["words"], r["program"]
            if rules:
                admits = admits_below_zero(questions[r["id"]])
                plausible = lambda v: v if v is None or admits or v >= 0 else None
                w0 = (w, a1, a2)
                w = None if r.get("words_cut") else plausible(w)
                a1, a2 = plausible(a1), plausible(a2)
                dropped += (w, a1, a2) != w0
            k, v = (("words = first program", a1) if same(w, a1) else
                    ("first program = second (words differ)", a1) if same(a1, a2) else
                    ("words = second program", a2) if same(w, a2) else ("none agree", None))
            # Which solutions agreed, with how often the kept number and the strong model were right.
            e = kinds.setdefault((rules, k), [0, 0, 0])
            e[0] += 1
            e[1] += v is not None and same(v, r["gold"])
            e[2] += r["strong_ok"]
            if v is None:
                score += r["strong_ok"]
            else:
                kept += 1
                right += same(v, r["gold"])
                score += same(v, r["gold"])
        print(f"two of three agree{' (as shipped)' if rules else ' (before)'} {kept}/{n}, right {right}/{kept}; "
              f"routed {score/n:.3f} at {(n-kept)/n:.2f} sent; PGR {(score/n-local)/gap if gap else float('nan'):.2f}"
              + (f"; rows with a solution cut off or below zero: {dropped}" if rules else ""))
        if rules:
            for (shipped, k), (m, ok, st) in kinds.items():
                if shipped:
                    print(f"  {k}: {m} rows, kept number right {ok}, strong right {st}")
            print(f"words cut off: {sum(bool(r.get('words_cut')) for r in rows)} of {n} "
                  f"(recorded for {sum('words_cut' in r for r in rows)})")
    print(f"seconds a row: words {sum(r['s_words'] for r in rows)/n:.1f}, program {sum(r['s_program'] for r in rows)/n:.1f}")


if __name__ == "__main__":
    if sys.argv[1] == "--report":
        report(sys.argv[2])
    else:
        run(int(sys.argv[1]), sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0)
