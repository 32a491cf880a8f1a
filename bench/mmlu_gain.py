#!/usr/bin/env python3
"""Routing on dev MMLU beliefs (bench/mmlu_beliefs.py output): the confidence router against a
two-model "gain" router (P(local right) - P(strong right), logistic, 5-fold CV). Needs numpy."""
import json, re, sys, math, random
import numpy as np
rows=[json.loads(l) for l in open(sys.argv[1])]
def opts(q):
    return [m.group(1) for m in re.finditer(r'^([A-J])\. ', q, re.M)]
X=[];Y=[];S=[];C=[];CAT=[]
NEG=re.compile(r'\b(NOT|EXCEPT|LEAST|FALSE|incorrect|not)\b')
for r in rows:
    o=opts(r['question']) or list("ABCD")
    m=np.array([r['letters'].get(L,0.0) for L in o])
    tot=m.sum()
    if tot<=0: p=np.ones(len(o))/len(o)
    else: p=m/tot
    i=int(p.argmax()); pick=o[i]
    srt=np.sort(p)[::-1]
    ent=-(p*np.log(p+1e-12)).sum()
    q=r['question']
    stem=q.split('\nA. ')[0]
    optlen=np.mean([len(x) for x in re.findall(r'^[A-J]\. (.*)$', q, re.M)] or [0])
    f=dict(conf=srt[0], margin=srt[0]-srt[1], ent=ent, mass=min(tot,1.0), pickB=float(pick=='B'),
           qlen=math.log(len(stem)+1), digits=math.log(1+sum(c.isdigit() for c in q)), neg=float(bool(NEG.search(stem))),
           optlen=math.log(optlen+1), stmt=float('Statement 1' in q))
    X.append(f); Y.append(float(pick==r['gold'])); S.append(float(r['strong_ok'])); CAT.append(r['category'])
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
def logit_fit(F,y,l2=1.0,it=50):
    mu=F.mean(0); sd=F.std(0)+1e-9
    Z=np.hstack([np.ones((len(F),1)),(F-mu)/sd])
    w=np.zeros(Z.shape[1])
    for _ in range(it):
        p=1/(1+np.exp(-Z@w))
        g=Z.T@(p-y)+l2*np.r_[0,w[1:]]
        H=(Z*(p*(1-p))[:,None]).T@Z+l2*np.diag(np.r_[0,np.ones(len(w)-1)])
        w-=np.linalg.solve(H,g)
    return lambda G: 1/(1+np.exp(-(np.hstack([np.ones((len(G),1)),(G-mu)/sd])@w))), w
print("AUC conf vs local_ok", round(auc(F[:,0],Y),3), " conf vs strong_ok", round(auc(F[:,0],S),3))
for k,nm in enumerate(names):
    print(f"  {nm:8s} auc(local)={auc(F[:,k],Y):.3f} auc(strong)={auc(F[:,k],S):.3f} auc(gain=strong&!local)={auc(F[:,k],(S==1)&(Y==0)):.3f}")
print("baseline conf: PGR@50", [round(x,3) for x in pgr_at(F[:,0])])
# oracle
print("oracle:", [round(x,3) for x in pgr_at(Y-S)])
def cv(feat_idx, target='local', reps=20, folds=5, frac=0.5):
    res=[]
    for rep in range(reps):
        rng=np.random.default_rng(rep); idx=rng.permutation(n); score=np.zeros(n)
        for f in range(folds):
            te=idx[f::folds]; tr=np.setdiff1d(idx,te)
            pl,_=logit_fit(F[tr][:,feat_idx],Y[tr])
            if target=='local':
                score[te]=pl(F[te][:,feat_idx])
            else:
                ps,_=logit_fit(F[tr][:,feat_idx],S[tr])
                score[te]=pl(F[te][:,feat_idx])-ps(F[te][:,feat_idx])
        res.append(pgr_at(score,frac)[0])
    return np.mean(res), np.std(res)
allf=list(range(len(names)))
for label,fi in [("conf",[0]),("conf,margin,ent",[0,1,2]),("+mass,pickB",[0,1,2,3,4]),("all",allf)]:
    print(label, "P(local) CV PGR@50 %.3f±%.3f"%cv(fi,'local'), " gain model %.3f±%.3f"%cv(fi,'gain'))
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
