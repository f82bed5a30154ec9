# Unauthenticated flood: N GET /authorize (7 KB of state+nonce each) against a release server
# binary on loopback; prints its RSS and data-directory growth. Usage: preauth-flood.py BIN N
import os, subprocess, sys, time, socket, tempfile, json, urllib.request, threading, http.client
bin_, n = sys.argv[1], int(sys.argv[2])
d = tempfile.mkdtemp()
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
base = f"http://127.0.0.1:{port}"
env = dict(os.environ, AUTHRIM_DATA_DIR=d, AUTHRIM_LISTEN=f"127.0.0.1:{port}", AUTHRIM_ISSUER=base,
           AUTHRIM_ADMIN_TOKEN="t", AUTHRIM_LOG="warn", AUTHRIM_MAX_CONNECTIONS_PER_ADDRESS="10000")
p = subprocess.Popen([bin_, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    try:
        urllib.request.urlopen(base + "/healthz"); break
    except Exception: time.sleep(0.1)
req = urllib.request.Request(base + "/admin/clients", data=json.dumps({"client_id": "rp", "redirect_uris": ["https://rp.example/cb"]}).encode(),
                             headers={"Authorization": "Bearer t", "Content-Type": "application/json"})
urllib.request.urlopen(req)
def rss(): return int([l for l in open(f"/proc/{p.pid}/status") if l.startswith("VmRSS")][0].split()[1]) * 1024
def disk(): return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
state, nonce = "s" * 3500, "n" * 3500
def worker(lo, hi):
    c = http.client.HTTPConnection("127.0.0.1", port)
    for i in range(lo, hi):
        c.request("GET", f"/authorize?response_type=code&client_id=rp&redirect_uri=https%3A%2F%2Frp.example%2Fcb&scope=openid&nonce={nonce}&state={state}{i}")
        r = c.getresponse(); r.read()
        assert r.status == 200, r.status
worker(0, 500)
r0, d0, t0 = rss(), disk(), time.time()
threads = [threading.Thread(target=worker, args=(k * n // 8, (k + 1) * n // 8)) for k in range(8)]
[t.start() for t in threads]; [t.join() for t in threads]
time.sleep(1)
r1, d1 = rss(), disk()
print(json.dumps({"bin": bin_, "requests": n, "seconds": round(time.time() - t0, 1), "rss_before_mib": round(r0 / 2**20, 1),
                  "rss_after_mib": round(r1 / 2**20, 1), "rss_growth_mib": round((r1 - r0) / 2**20, 1),
                  "data_before_mib": round(d0 / 2**20, 2), "data_after_mib": round(d1 / 2**20, 2), "data_growth_mib": round((d1 - d0) / 2**20, 2)}))
p.terminate(); p.wait()
