"""Native onnxruntime: exactness + speed of A and B (intra_op_num_threads=2)."""
import sys, time, statistics, json
import numpy as np, onnxruntime as ort

H, KV, D, N = 14, 2, 64, 1024
Q = np.fromfile("q.bin", np.float32).reshape(1, N, H * D)
K = np.fromfile("k.bin", np.float32).reshape(1, N, KV * D)
V = np.fromfile("v.bin", np.float32).reshape(1, N, KV * D)

def cache(x, a, b):  # tokens a..b-1 as [1, KV, b-a, D]
    return np.ascontiguousarray(x[:, a:b].reshape(1, b - a, KV, D).transpose(0, 2, 1, 3))

def run(sess, start, T, past_k=None, past_v=None):
    if past_k is None:
        past_k, past_v = cache(K, 0, start), cache(V, 0, start)
    feeds = {"query": Q[:, start:start + T], "key": K[:, start:start + T], "value": V[:, start:start + T],
             "past_key": past_k, "past_value": past_v, "attention_mask": np.ones((1, start + T), np.int64)}
    return sess.run(None, feeds)

def maxdiff(a, b):
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))

res = {}
for name in ["A", "B"]:
    so = ort.SessionOptions(); so.intra_op_num_threads = 2; so.inter_op_num_threads = 1
    s = ort.InferenceSession(f"{name}.onnx", so, providers=["CPUExecutionProvider"])
    r = {}
    full, fk, fv = run(s, 0, N)
    # sanity vs numpy reference
    q = Q.reshape(N, H, D).transpose(1, 0, 2).astype(np.float64); k = cache(K, 0, N)[0].astype(np.float64); v = cache(V, 0, N)[0].astype(np.float64)
    kk = np.repeat(k, H // KV, 0); vv = np.repeat(v, H // KV, 0)
    sc = q @ kk.transpose(0, 2, 1) / 8 + np.triu(np.full((N, N), -np.inf), 1)
    p = np.exp(sc - sc.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
    ref = (p @ vv).transpose(1, 0, 2).reshape(1, N, H * D)
    r["vs_float64_reference"] = maxdiff(full, ref)
    # (1) 1024 one call vs 4 chunks of 256 carrying present -> past
    pk, pv, outs = cache(K, 0, 0), cache(V, 0, 0), []
    for c in range(4):
        o, pk, pv = run(s, c * 256, 256, pk, pv); outs.append(o)
    r["chunked4x256_vs_onecall_output"] = maxdiff(np.concatenate(outs, 1), full)
    r["chunked4x256_vs_onecall_present"] = max(maxdiff(pk, fk), maxdiff(pv, fv))
    # also chunks of uneven size (300, 1, 3, 720)
    pk, pv, outs, pos = cache(K, 0, 0), cache(V, 0, 0), [], 0
    for T in (300, 1, 3, 720):
        o, pk, pv = run(s, pos, T, pk, pv); outs.append(o); pos += T
    r["chunked_300_1_3_720_vs_onecall_output"] = maxdiff(np.concatenate(outs, 1), full)
    # (2) decode at 700..703 vs same rows in a 4-token call from 700, and vs the 1024 one call
    four = run(s, 700, 4)[0]
    dec = [run(s, p, 1)[0] for p in range(700, 704)]
    r["decode700_vs_4tok_row0"] = maxdiff(dec[0][:, 0], four[:, 0])
    r["decode700..703_vs_4tok_rows"] = max(maxdiff(dec[i][:, 0], four[:, i]) for i in range(4))
    r["decode700_vs_onecall1024_row700"] = maxdiff(dec[0][:, 0], full[:, 700])
    r["4tok_vs_onecall1024_rows700..703"] = maxdiff(four, full[:, 700:704])
    # speed
    def timeit(fn, reps=5):
        fn(); fn()
        ts = []
        for _ in range(reps):
            t = time.perf_counter(); fn(); ts.append((time.perf_counter() - t) * 1e3)
        return statistics.median(ts), ts
    feeds_pre = lambda: run(s, 0, N)
    pk, pv = cache(K, 0, N), cache(V, 0, N)
    qd = np.random.default_rng(1).standard_normal((1, 1, H * D), dtype=np.float32)
    kd = np.random.default_rng(2).standard_normal((1, 1, KV * D), dtype=np.float32)
    dfeeds = {"query": qd, "key": kd, "value": kd.copy(), "past_key": pk, "past_value": pv,
              "attention_mask": np.ones((1, N + 1), np.int64)}
    r["prefill_T1024_ms"] = timeit(feeds_pre)
    r["decode_T1_P1024_ms"] = timeit(lambda: s.run(None, dfeeds), reps=51)
    res[name] = r
print(json.dumps(res, indent=1))
