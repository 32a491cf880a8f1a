#!/usr/bin/env python3
"""Secrets breadth beyond the rule set's own sources: recall of `tandem scan --jsonl` on the
positive cases of another scanner's detector tests (trufflehog's ~900 vendor detectors, whose
`Test*_Pattern` cases plant a key in a log line, a config, an XML credential store...).

    bench/eval_secrets_breadth.py --tandem PATH --trufflehog CHECKOUT [--misses OUT]

CHECKOUT is a trufflehog source tree (its `pkg/detectors/*/*_test.go` are read at run time;
nothing of it is copied here, and no rule is derived from it: it is AGPL-3.0, and the point is
to measure what principle-based detection finds without vendor lists). A case's wanted value
counts as found when secret-tier findings cover >= 80% of its characters. Values the test
builds from several pieces are reduced to their longest piece that appears in the input.
"""
import argparse, collections, glob, json, os, re, subprocess, sys
os.environ.setdefault("TANDEM_MODELS_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))

def read_str(s, i):
    """s[i] is a quote; return (value, next_index)."""
    q = s[i]
    if q == '`':
        j = s.index('`', i + 1)
        return s[i + 1:j], j + 1
    out = []
    j = i + 1
    while j < len(s):
        c = s[j]
        if c == '\\':
            n = s[j + 1]
            m = {'n': '\n', 't': '\t', 'r': '\r', '"': '"', '\\': '\\', "'": "'", '0': '\0'}
            if n in m:
                out.append(m[n]); j += 2
            elif n == 'x':
                out.append(chr(int(s[j + 2:j + 4], 16))); j += 4
            elif n == 'u':
                out.append(chr(int(s[j + 2:j + 6], 16))); j += 6
            else:
                out.append(n); j += 2
            continue
        if c == q:
            return ''.join(out), j + 1
        out.append(c); j += 1
    raise ValueError('unterminated')

def split_expr(s, i):
    """Return the end index of an expression starting at i (stops at ',' or '}' or ')' at depth 0)."""
    depth = 0
    j = i
    while j < len(s):
        c = s[j]
        if c in '"`':
            _, j = read_str(s, j); continue
        if c in '({[':
            depth += 1
        elif c in ')}]':
            if depth == 0:
                return j
            depth -= 1
        elif c == ',' and depth == 0:
            return j
        j += 1
    return j

def go_sprintf(fmt, args):
    out = []; k = 0; i = 0
    while i < len(fmt):
        c = fmt[i]
        if c == '%' and i + 1 < len(fmt):
            n = fmt[i + 1]
            if n == '%':
                out.append('%'); i += 2; continue
            # skip flags/width
            j = i + 1
            while j < len(fmt) and fmt[j] in '-+ #0123456789.':
                j += 1
            verb = fmt[j]
            a = args[k] if k < len(args) else ''
            k += 1
            out.append(str(a) if verb != 'q' else json.dumps(a))
            i = j + 1; continue
        out.append(c); i += 1
    return ''.join(out)

class Ev:
    def __init__(self, env):
        self.env = env
    def ev(self, e):
        e = e.strip()
        if not e:
            raise ValueError('empty')
        # concatenation at depth 0
        parts = []; depth = 0; j = 0; start = 0
        while j < len(e):
            c = e[j]
            if c in '"`':
                _, j = read_str(e, j); continue
            if c in '({[': depth += 1
            elif c in ')}]': depth -= 1
            elif c == '+' and depth == 0:
                parts.append(e[start:j]); start = j + 1
            j += 1
        parts.append(e[start:])
        if len(parts) > 1:
            return ''.join(self.ev(p) for p in parts)
        if e[0] in '"`':
            v, j = read_str(e, 0)
            if e[j:].strip():
                raise ValueError('trailing ' + e[j:])
            return v
        m = re.match(r'fmt\.Sprintf\((.*)\)\s*$', e, re.S)
        if m:
            args = self.args(m.group(1))
            return go_sprintf(args[0], args[1:])
        m = re.match(r'strings\.Repeat\((.*)\)\s*$', e, re.S)
        if m:
            a = self.args_raw(m.group(1))
            return self.ev(a[0]) * int(a[1])
        if re.fullmatch(r'[A-Za-z_][A-Za-z0-9_]*', e):
            if e in self.env:
                return self.env[e]
            raise ValueError('unknown ' + e)
        raise ValueError('unsupported ' + e[:60])
    def args_raw(self, s):
        out = []; i = 0
        while i < len(s):
            j = split_expr(s, i)
            out.append(s[i:j]); i = j + 1
        return [a for a in out if a.strip()]
    def args(self, s):
        return [self.ev(a) for a in self.args_raw(s)]

def env_of(src):
    env = {}
    for m in re.finditer(r'^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::=|=)\s*', src, re.M):
        i = m.end()
        j = split_expr(src, i)
        # expression must be on one logical statement; cut at newline outside strings
        expr = src[i:j]
        # trim to end of line unless string spans lines
        try:
            v = Ev(env).ev(expr.split('\n')[0] if not expr.lstrip().startswith(('`', 'fmt', '"')) else expr.strip().split('\n\t')[0])
            if isinstance(v, str):
                env[m.group(1)] = v
        except Exception:
            try:
                v = Ev(env).ev(expr)
                if isinstance(v, str):
                    env[m.group(1)] = v
            except Exception:
                pass
    return env

def cases(path):
    src = open(path, encoding='utf-8', errors='replace').read()
    src = re.sub(r'^\s*//.*$', '', src, flags=re.M)
    env = env_of(src)
    ev = Ev(env)
    out = []
    for m in re.finditer(r'\binput:\s*', src):
        i = m.end()
        j = split_expr(src, i)
        try:
            inp = ev.ev(src[i:j])
        except Exception as e:
            continue
        w = re.compile(r'\bwant:\s*').search(src, j)
        nxt = src.find('input:', j)
        if not w or (nxt != -1 and w.start() > nxt):
            continue
        k = w.end()
        if src.startswith('nil', k) or src.startswith('[]string{}', k):
            out.append((inp, []))
            continue
        if not src.startswith('[]string{', k):
            continue
        k += len('[]string{')
        end = k; depth = 0
        while end < len(src):
            c = src[end]
            if c in '"`':
                _, end = read_str(src, end); continue
            if c in '({[': depth += 1
            elif c in ')}]':
                if depth == 0: break
                depth -= 1
            end += 1
        try:
            want = ev.args(src[k:end])
        except Exception:
            continue
        out.append((inp, want))
    return out



def load_cases(root):
    rows = []
    for p in sorted(glob.glob(os.path.join(root, "pkg/detectors/*/*_test.go"))):
        if "integration" in p:
            continue
        det = p.split("/")[-2]
        try:
            cs = cases(p)
        except Exception:
            continue  # a test file this small evaluator cannot read
        for k, (inp, want) in enumerate(cs):
            rows.append({"id": f"{det}-{k}", "detector": det, "text": inp, "want": want})
    return rows


def pieces(w, text):
    out = []; i = 0
    while i < len(w):
        k = len(w)
        while k > i and w[i:k] not in text:
            k -= 1
        if k - i < 4:
            return None
        out.append(w[i:k]); i = k
        while i < len(w) and w[i] in ":;|,":
            i += 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--trufflehog", required=True)
    ap.add_argument("--misses")
    a = ap.parse_args()
    rows = load_cases(a.trufflehog)
    for r in rows:
        ws = []
        for w in r["want"]:
            if w in r["text"]:
                ws.append(w)
            else:
                ps = pieces(w, r["text"])
                if ps:
                    ws.append(max(ps, key=len))
        r["want"] = ws if len(ws) == len(r["want"]) else []
    pos = [r for r in rows if r["want"]]
    inp = "".join(json.dumps({"id": r["id"], "text": r["text"]}) + "\n" for r in pos)
    p = subprocess.run([a.tandem, "scan", "--jsonl"], input=inp.encode(), capture_output=True)
    if p.returncode:
        sys.exit(p.stderr.decode()[-2000:])
    outs = [json.loads(l) for l in p.stdout.decode().split("\n") if l.strip()]
    assert len(outs) == len(pos), (len(outs), len(pos))
    tot = found = 0
    misses = []
    by_det = collections.defaultdict(lambda: [0, 0])
    for r, o in zip(pos, outs):
        text = r["text"]
        for w in r["want"]:
            s = text.index(w); e = s + len(w)
            cov = set()
            for f in o["spans"]:
                if f["tier"] == "secret":
                    cov |= set(range(max(f["start"], s), min(f["end"], e)))
            tot += 1
            by_det[r["detector"]][1] += 1
            if len(cov) >= 0.8 * len(w):
                found += 1
                by_det[r["detector"]][0] += 1
            else:
                misses.append({"id": r["id"], "want": w, "text": text})
    full = sum(1 for v in by_det.values() if v[0] == v[1])
    print(f"trufflehog pattern tests: {len(pos)} cases, {tot} values, {len(by_det)} detectors")
    print(f"  values found as secrets  {found}/{tot} = {found / tot:.3f}")
    print(f"  detectors with every value found  {full}/{len(by_det)}")
    if a.misses:
        with open(a.misses, "w") as fh:
            json.dump(misses, fh, indent=1)


if __name__ == "__main__":
    main()
