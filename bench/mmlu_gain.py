#!/usr/bin/env python3
"""Routing on dev MMLU beliefs (bench/mmlu_beliefs.py output): the confidence router against a
two-model "gain" router (P(local right) - P(strong right), logistic, 5-fold CV). Needs numpy."""
import json, re, sys, math, random
import numpy as np
import argparse
ap = argparse.ArgumentParser()
ap.add_argument("beliefs")
ap.add_argument("--write", help="fit on all rows and write the rule (src-tauri/core/src/router/keep.toml)")
ap.add_argument("--sent", type=float, default=0.48, help="share of the fitting rows the written bar sends to the cloud")
ap.add_argument("--l2", type=float, default=1.0)
ap.add_argument("--skip", type=int, default=0, help="leave out the first N rows by id hash (bench/eval_answer.py's rows) and report the fitted rule on them")
ap.add_argument("--words", type=int, default=0, help="add the question's words (tf-idf, words in at least this many fitting rows; 0: none)")
ap.add_argument("--reps", type=int, default=20, help="cross-validation shuffles")
ap.add_argument("--second", help="beliefs of a second reading (bench/mmlu_beliefs.py --reverse): CV with its agreement as features")
args = ap.parse_args()
import hashlib
rows=[json.loads(l) for l in open(args.beliefs)]
rows.sort(key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest())
held, rows = rows[:args.skip], rows[args.skip:]
NEG = ["NOT", "EXCEPT", "LEAST", "FALSE", "incorrect", "not"]
STATEMENT = ["Statement 1"]


def options(q):
    """The option lines as Tandem reads them (router/selfcheck.rs `options`): "A. x" or "A) x",
    in letter order, at least two."""
    out = []
    for line in q.split("\n"):
        l = line.lstrip()
        if len(l) >= 2 and l[0] == chr(ord("A") + len(out)) and l[1] in ".)" and len(out) < 10:
            rest = l[2:]
            if rest[:1].isspace():
                out.append((l[0], rest.strip()))
    return out if len(out) >= 2 else []


def stem(q):
    lines = q.split("\n")
    for i, l in enumerate(lines):
        l = l.lstrip()
        if len(l) >= 3 and l[0] == "A" and l[1] in ".)" and l[2].isspace():
            return "\n".join(lines[:i]).strip()
    return q.strip()


def feature_row(q, letters):
    """router/keep.rs `features`: the local model's belief between the letters (normalized)
    and the question's shape. Returns (features, pick, chance) or None when no letter has any
    mass."""
    o = [c for c, _ in options(q)] or list("ABCD")
    texts = [t for _, t in options(q)]
    m = np.array([letters.get(L, 0.0) for L in o])
    tot = m.sum()
    if tot <= 0:
        return None
    p = m / tot
    i = int(p.argmax()); pick = o[i]
    srt = np.sort(p)[::-1]
    s = stem(q)
    words = [w for w in re.split(r"[^0-9A-Za-z\u00C0-\uFFFF]+", s) if w]
    optlen = np.mean([len(t) for t in texts]) if texts else 0.0
    return dict(conf=srt[0], margin=srt[0] - srt[1], ent=-(p * np.log(p + 1e-12)).sum(),
                pick_b=float(pick == "B"), qlen=math.log(len(s) + 1),
                digits=math.log(1 + sum(c in "0123456789" for c in q)),
                neg=float(any(w in NEG for w in words)), optlen=math.log(optlen + 1),
                stmt=float(any(t in s for t in STATEMENT))), pick, 1.0 / len(o)


def table(rows):
    X=[];Y=[];S=[];CAT=[];CH=[]
    for r in rows:
        fr = feature_row(r['question'], r['letters'])
        if fr is None:
            continue  # no letter in the top alternatives (none in 1,000 rows); Tandem escalates it
        f, pick, chance = fr
        X.append(f); Y.append(float(pick==r['gold'])); S.append(float(r['strong_ok'])); CAT.append(r['category']); CH.append(chance)
    return X, Y, S, CAT, np.array(CH)


def words_of(q):
    """A question's words for the --words study: runs of two or more ASCII letters, lower-cased."""
    return re.findall(r"[a-z]{2,}", q.lower())


def vocab(texts, min_df):
    """Words in at least `min_df` of the texts, with their smoothed idf (ln((1+n)/(1+df)) + 1)."""
    df = {}
    for t in texts:
        for w in set(words_of(t)):
            df[w] = df.get(w, 0) + 1
    n = len(texts)
    keep = sorted(w for w, c in df.items() if c >= min_df)
    return keep, np.array([math.log((1 + n) / (1 + df[w])) + 1 for w in keep])


def tfidf(texts, voc, idf):
    """Sublinear tf (1 + ln count) times idf, scaled to unit length; words outside `voc` ignored."""
    pos = {w: i for i, w in enumerate(voc)}
    M = np.zeros((len(texts), len(voc)))
    for r, t in enumerate(texts):
        c = {}
        for w in words_of(t):
            if w in pos:
                c[w] = c.get(w, 0) + 1
        for w, k in c.items():
            M[r, pos[w]] = (1 + math.log(k)) * idf[pos[w]]
        norm = np.linalg.norm(M[r])
        if norm > 0:
            M[r] /= norm
    return M


X, Y, S, CAT, CH = table(rows)
QS = [r["question"] for r in rows if feature_row(r["question"], r["letters"]) is not None]
# A local answer whose belief is within this of chance (1 / options) is never kept: the model
# is guessing. Costs nothing measured (5-fold CV PGR at 50% sent 0.737 -> 0.740 at 0.05).
NEAR_CHANCE = 0.05
names=list(X[0].keys())
F=np.array([[x[k] for k in names] for x in X]); Y=np.array(Y); S=np.array(S)
n=len(Y)
print(f"n={n} local={Y.mean():.3f} strong={S.mean():.3f}")
def auc(score,y):
    pos=score[y==1]; neg=score[y==0]
    if len(pos)==0 or len(neg)==0: return float('nan')
    c=0
    for a in pos: c+=(neg<a).sum()+0.5*(neg==a).sum()
    return c/(len(pos)*len(neg))
def pgr_at(keep_score, frac=0.5, Y=Y, S=S):
    # send the lowest `frac` by keep_score
    k=int(math.floor(frac*len(Y)))
    order=np.argsort(keep_score, kind='stable')
    sent=np.zeros(len(Y),bool); sent[order[:k]]=True
    routed=np.where(sent,S,Y).mean()
    return (routed-Y.mean())/(S.mean()-Y.mean()), routed
def logit_fit(F,y,l2=1.0,it=50,W=None):
    """Newton's method, L2 on the standardized weights (and on the word block `W`, unit-length
    rows, taken as they are); returns (predict(F, W), (intercept, mean, scale, weights, word weights))."""
    mu=F.mean(0); sd=F.std(0)+1e-9
    def design(G, V):
        Z=np.hstack([np.ones((len(G),1)),(G-mu)/sd])
        return Z if V is None else np.hstack([Z, V])
    Z=design(F, W)
    w=np.zeros(Z.shape[1])
    for _ in range(it):
        p=1/(1+np.exp(-Z@w))
        g=Z.T@(p-y)+l2*np.r_[0,w[1:]]
        H=(Z*(p*(1-p))[:,None]).T@Z+l2*np.diag(np.r_[0,np.ones(len(w)-1)])
        step=np.linalg.solve(H,g)
        w-=step
        if np.abs(step).max() < 1e-9: break
    k=F.shape[1]
    return (lambda G, V=None: 1/(1+np.exp(-(design(G, V)@w)))), (w[0], mu, sd, w[1:1+k], w[1+k:])
print("AUC conf vs local_ok", round(auc(F[:,0],Y),3), " conf vs strong_ok", round(auc(F[:,0],S),3))
for k,nm in enumerate(names):
    print(f"  {nm:8s} auc(local)={auc(F[:,k],Y):.3f} auc(strong)={auc(F[:,k],S):.3f} auc(gain=strong&!local)={auc(F[:,k],(S==1)&(Y==0)):.3f}")
print("baseline conf: PGR@50", [round(x,3) for x in pgr_at(F[:,0])])
# oracle
print("oracle:", [round(x,3) for x in pgr_at(Y-S)])
def cv(feat_idx, target='local', reps=None, folds=5, frac=0.5, min_df=0):
    res=[]
    for rep in range(reps or args.reps):
        rng=np.random.default_rng(rep); idx=rng.permutation(n); score=np.zeros(n)
        for f in range(folds):
            te=idx[f::folds]; tr=np.setdiff1d(idx,te)
            Wtr=Wte=None
            if min_df:
                voc, idf = vocab([QS[i] for i in tr], min_df)
                Wtr=tfidf([QS[i] for i in tr], voc, idf); Wte=tfidf([QS[i] for i in te], voc, idf)
            pl,_=logit_fit(F[tr][:,feat_idx],Y[tr],args.l2,W=Wtr)
            if target=='local':
                score[te]=pl(F[te][:,feat_idx],Wte)
            else:
                ps,_=logit_fit(F[tr][:,feat_idx],S[tr],args.l2,W=Wtr)
                score[te]=pl(F[te][:,feat_idx],Wte)-ps(F[te][:,feat_idx],Wte)
            score[te]=np.where(F[te][:,0] < CH[te] + NEAR_CHANCE, -np.inf, score[te])
        res.append(pgr_at(score,frac)[0])
    return np.mean(res), np.std(res)
allf=list(range(len(names)))
for label,fi in [("conf",[0]),("conf,margin,ent",[0,1,2]),("+pick_b",[0,1,2,3]),("all",allf)]:
    print(label, "P(local) CV PGR@50 %.3f±%.3f"%cv(fi,'local'), " gain model %.3f±%.3f"%cv(fi,'gain'))
if args.second:
    # The same question read again with its options reversed: does agreement between the two
    # readings say more about who is right? (Measured 2026-12-06: no; bench/RESULTS.md.)
    rev = {json.loads(l)["id"]: json.loads(l) for l in open(args.second)}
    kept_rows = [r for r in rows if feature_row(r["question"], r["letters"]) is not None]
    ext = []
    for r in kept_rows:
        o = [c for c, _ in options(r["question"])] or list("ABCD")
        p1 = np.array([r["letters"].get(L, 0.0) for L in o]); p1 /= p1.sum()
        p2 = np.array([rev[r["id"]]["letters"].get(L, 0.0) for L in o]) if r["id"] in rev else np.ones(len(o))
        p2 = p2 / p2.sum() if p2.sum() > 0 else np.ones(len(o)) / len(o)
        ext.append([float(p1.argmax() == p2.argmax()), p2.max(), p2[p1.argmax()]])
    F0 = F
    F = np.hstack([F0, np.array(ext)])
    k = F0.shape[1]
    print(f"second reading on {sum(r['id'] in rev for r in kept_rows)} of {n} rows; the two agree on {np.mean([e[0] for e in ext]):.1%}")
    for label, fi in [("9 features", allf), ("+ agree", allf + [k]), ("+ agree, second conf, second belief in the first pick", allf + [k, k + 1, k + 2])]:
        print(f"  {label}: gain model CV PGR@50 %.3f±%.3f" % cv(fi, 'gain'))
    F = F0
if args.words:
    if args.write:
        sys.exit("--words is measured, not shipped (no gain in CV; bench/RESULTS.md): router/keep.rs reads no word block")
    for md in [args.words]:
        print(f"all + words in >= {md} rows: gain model CV PGR@50 %.3f±%.3f"%cv(allf,'gain',min_df=md),
              " at 40%% sent %.3f±%.3f"%cv(allf,'gain',min_df=md,frac=0.4))
# band routing: send the 50% of rows whose confidence ranks in a window [q, q+0.5] of the conf quantiles
conf=F[:,0]
ranks=np.argsort(np.argsort(conf))/n
print("band (send conf-quantile window starting at q):")
for q in [0,0.05,0.1,0.15,0.2,0.25,0.3]:
    score=np.where((ranks>=q)&(ranks<q+0.5),0,1)+ranks*1e-6
    print("  q=%.2f PGR=%.3f"%(q,pgr_at(score)[0]))
# curve of baseline
print("baseline curve:", [(f, round(pgr_at(conf,f)[0],2)) for f in (0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8)])
# strong_ok rate by conf decile
order=np.argsort(conf)
for d in range(5):
    sl=order[d*n//5:(d+1)*n//5]
    print(f"  conf quintile {d}: conf {conf[sl].min():.2f}-{conf[sl].max():.2f} local {Y[sl].mean():.2f} strong {S[sl].mean():.2f} gain {((S[sl]==1)&(Y[sl]==0)).mean():.2f} loss {((S[sl]==0)&(Y[sl]==1)).mean():.2f}")

if args.write:
    pl, lw = logit_fit(F, Y, args.l2)
    ps, sw = logit_fit(F, S, args.l2)
    gain = np.where(F[:, 0] < CH + NEAR_CHANCE, -np.inf, pl(F) - ps(F))
    # The bar: the gain below which the fitting rows' lowest `--sent` share goes to the cloud.
    bar = float(np.quantile(gain, args.sent))
    kept = gain >= bar
    print(f"fitted on {n}: bar {bar:.4f} sends {1 - kept.mean():.1%}, in-sample PGR {pgr_at(gain, 1 - kept.mean())[0]:.3f}")
    def vec(v):
        return "[" + ", ".join(f"{float(x):.6g}" for x in v) + "]"
    with open(args.write, "w") as out:
        out.write(f"""# Keeping a local multiple-choice answer (router/keep.rs). Written by
# `python3 bench/mmlu_gain.py BELIEFS.jsonl --skip {args.skip} --write` from the recommended model's letter beliefs
# on dev MMLU (bench/mmlu_beliefs.py); do not edit by hand, fit again.
# P(local right) and P(strong right) are logistic models over standardized features; the answer
# is kept when P(local right) - P(strong right) >= bar, and never when the model's belief is within
# near_chance of chance (1 / options). The bar sends {args.sent:.0%} of the fitting
# questions to the cloud. "strong right" is GPT-4-1106's grading in RouteLLM's MMLU responses.

[choice]
model = "qwen2.5-coder-1.5b-instruct (Q4_K_M), plain-text MMLU prompt"
fitted = "{n} dev MMLU questions by id hash, after the first {args.skip} (left for bench/eval_answer.py); local right {Y.mean():.3f}, strong right {S.mean():.3f}; L2 {args.l2}"
bar = {bar:.6g}
near_chance = {NEAR_CHANCE}
negation = {json.dumps(NEG)}
statement = {json.dumps(STATEMENT)}
features = {json.dumps(names)}

[choice.local]
intercept = {lw[0]:.6g}
mean = {vec(lw[1])}
scale = {vec(lw[2])}
weights = {vec(lw[3])}

[choice.strong]
intercept = {sw[0]:.6g}
mean = {vec(sw[1])}
scale = {vec(sw[2])}
weights = {vec(sw[3])}
""")
    print("wrote", args.write)
    if held:
        hX, hY, hS, _, hCH = table(held)
        hF = np.array([[x[k] for k in names] for x in hX]); hY = np.array(hY); hS = np.array(hS)
        g = np.where(hF[:, 0] < hCH + NEAR_CHANCE, -np.inf, pl(hF) - ps(hF))
        kept = g >= bar
        hsent = 1 - kept.mean()
        routed = np.where(kept, hY, hS).mean()
        print(f"held-out {len(hY)} rows (not fitted on): local {hY.mean():.3f} strong {hS.mean():.3f}; "
              f"at the bar sent {hsent:.1%} routed {routed:.3f} PGR {(routed - hY.mean()) / (hS.mean() - hY.mean()):.3f}; "
              f"confidence router at the same share PGR {pgr_at(hF[:, 0], hsent, hY, hS)[0]:.3f}")
