import json, sys, collections
txt = sys.stdin.read(); txt = txt[txt.index('['):]
ev = json.loads(txt[:txt.rindex(']') + 1])
runs = [e for e in ev if e["name"] == "model_run"]
last = runs[-1]; t0, t1 = last["ts"], last["ts"] + last["dur"]
agg = collections.Counter()
for e in ev:
    if e.get("cat") == "Node" and e["name"].endswith("_kernel_time") and t0 <= e["ts"] <= t1:
        agg[e["args"]["op_name"]] += e["dur"]
print("model_run ms", last["dur"] / 1000, {k: round(v / 1000, 1) for k, v in agg.most_common(8)})
