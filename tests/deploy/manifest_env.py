#!/usr/bin/env python3
"""The shipped deployments' environments start denocd.

For deploy/k8s (the ConfigMap's data plus the Deployment's env) and deploy/compose.yaml (the denocd
service's environment), exactly as written: ``denocd --check-config`` must accept them (exit 0). Without
DENOC_METRICS_PUBLIC the same environment must be refused (exit 2), so the check is one that can fail. Then
a real denocd runs with each environment, its addresses moved to this test's directory and loopback (the
unix socket and store under a scratch directory, /metrics on 127.0.0.1): the health probe answers SERVING
on the socket, /metrics is scraped, and SIGTERM ends it with exit 0.

Environment: DENOCD and DENOC_HEALTH (the programs), DENOC_SOURCE_DIR (the repository).
"""
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

SOURCE = os.environ["DENOC_SOURCE_DIR"]
DENOCD = os.environ["DENOCD"]
HEALTH = os.environ["DENOC_HEALTH"]


def k8s_env():
    with open(os.path.join(SOURCE, "deploy/k8s/configmap.yaml")) as f:
        env = {k: str(v) for k, v in yaml.safe_load(f)["data"].items()}
    with open(os.path.join(SOURCE, "deploy/k8s/deployment.yaml")) as f:
        deployment = yaml.safe_load(f)
    containers = deployment["spec"]["template"]["spec"]["containers"]
    denocd = next(c for c in containers if c["name"] == "denocd")
    for item in denocd.get("env", []):
        if "value" in item:
            env[item["name"]] = str(item["value"])
    return env


def compose_env():
    with open(os.path.join(SOURCE, "deploy/compose.yaml")) as f:
        compose = yaml.safe_load(f)
    return {k: str(v) for k, v in compose["services"]["denocd"]["environment"].items()}


def run_check(env):
    return subprocess.run([DENOCD, "--check-config"], env={"PATH": "/usr/bin:/bin", **env},
                          capture_output=True, text=True, timeout=30)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def serve(name, env):
    with tempfile.TemporaryDirectory(prefix="denoc-manifest-") as work:
        sock = "unix:" + os.path.join(work, "denocd.sock")
        local = dict(env)
        local.update({
            "DENOC_LISTEN": sock,
            "DENOC_HEALTH_ADDRESS": sock,
            "DENOC_STORE_DIR": os.path.join(work, "store"),
            "DENOC_METRICS_LISTEN": "127.0.0.1:0",
            "DENOC_METRICS_PORT_FILE": os.path.join(work, "metrics.port"),
            "DENOC_PORT_FILE": os.path.join(work, "port"),
        })
        log = open(os.path.join(work, "denocd.log"), "w")
        proc = subprocess.Popen([DENOCD], env={"PATH": "/usr/bin:/bin", **local}, stdout=log,
                                stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + 30
            while not os.path.exists(os.path.join(work, "metrics.port")) or not os.path.exists(
                    os.path.join(work, "port")):
                if proc.poll() is not None or time.time() > deadline:
                    fail(name + ": denocd did not start: " + open(os.path.join(work, "denocd.log")).read())
                time.sleep(0.05)
            probe = subprocess.run([HEALTH], env={"PATH": "/usr/bin:/bin", **local}, capture_output=True,
                                   text=True, timeout=30)
            if probe.returncode != 0:
                fail(name + ": the health probe: " + probe.stdout + probe.stderr)
            port = open(os.path.join(work, "metrics.port")).read().strip()
            body = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=10).read().decode()
            if "denoc_models" not in body:
                fail(name + ": /metrics has no denoc_models")
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=60)
            if code != 0:
                fail(name + ": exit %d after SIGTERM" % code)
            print("%s: serves (health SERVING, /metrics scraped, exit 0 on SIGTERM)" % name)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def main():
    for name, env in (("deploy/k8s", k8s_env()), ("deploy/compose.yaml", compose_env())):
        r = run_check(env)
        if r.returncode != 0 or "the configuration is valid" not in r.stdout:
            fail("%s: denocd --check-config: exit %d: %s%s" % (name, r.returncode, r.stdout, r.stderr))
        print("%s: denocd --check-config accepts its environment (%d variables)" % (name, len(env)))
        without = {k: v for k, v in env.items() if k != "DENOC_METRICS_PUBLIC"}
        r = run_check(without)
        if r.returncode != 2 or "DENOC_METRICS_PUBLIC" not in r.stderr + r.stdout:
            fail("%s without DENOC_METRICS_PUBLIC: expected exit 2 naming it, got %d: %s" %
                 (name, r.returncode, r.stderr))
        serve(name, env)
    print("manifest environments: all checks passed")


if __name__ == "__main__":
    main()
