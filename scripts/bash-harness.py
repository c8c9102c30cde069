#!/usr/bin/env python3
"""The launch-script evaluator against bash itself, on a real InferenceX tree.

    scripts/bash-harness.py INFERENCEX_TREE [ENGINE_AUDIT_BINARY] [--only SUBSTRING]
        [--family sglang|vllm|trt|amd-sglang|amd-vllm|amd-atom]

Each single-node launch script (benchmarks/single_node/{fixed_seq_len,
fixed_seq_len/deprecated,agentic,speedbench}/*.sh that starts SGLang or vLLM)
runs under real bash, from a copy of the tree, for a grid of the variables it
tests, with stubs first on PATH: a launch of an engine's server records its argv
and environment and exits; everything with effects outside the sandbox (srun,
docker, pip, hf, nvidia-smi, curl, ...) is a no-op; `python3 -c` and other
helpers of the script run for real. `engine-audit show --format json` of the
script (in the original tree) is compared with each run: the command line read
on the matching path against the words bash passed, flag by flag, and the
engine env vars (SGLANG_*, SGL_*, VLLM_*) against the server's environment.
Flags are compared as the tool binds them (`flags`: name and value by the
engine's arity) against bash's words paired flag by flag (`--x=v` and `--x v`
alike); words that are no flag's value (a model path) are not flags.

The AMD multi-node chain (families `amd-*`) runs the way a job runs it:
`amd_utils/server.sh`, the script that `job.slurm` starts in each node's
container, runs under bash with the variables `job.slurm` passes with `docker
run -e` (ENGINE, MODEL_NAME, NODE_RANK, the parallelism switches, the MTP size,
IS_AGENTIC), once per model of the engine's table and per node role and
parallelism. The tool reads that chain as two inputs, the server script and the
model table it reads with `eval "$(python3 -c ...)"`: each launch is compared
with the best-matching command line of `show server.sh` together with the
table's entry for that model (the words the table gives are audited there).

TensorRT-LLM scripts (family `trt`: `trtllm-serve`, behind `mpirun`) hand
most settings over in a YAML file they write with here-documents: the stub
keeps the file the launch names (`--config`, `--extra_llm_api_options`) as it
is at launch, and its keys (dotted paths, values as written) are compared with
the keys `show` reads for the matching command line.

Prints flag, env and config-key recall and precision per family and overall. A word or
value the tool reads as not known matches any value. This is a test tool: the
tool itself never runs audited code. Nothing here is committed data: the tree
is given by its path.
"""

import itertools
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FOLDERS = ["fixed_seq_len", "fixed_seq_len/deprecated", "agentic", "speedbench"]
LAUNCH = re.compile(r"sglang\.launch_server|sglang serve|vllm serve|vllm\.entrypoints|trtllm-serve")
ENGINE_ENV = ("SGLANG_", "SGL_", "VLLM_", "ATOM_", "TRTLLM_", "TLLM_")
CONFIG_OPTIONS = ("--config", "--extra_llm_api_options")
AMD_UTILS = "benchmarks/multi_node/amd_utils"
# ENGINE of the job -> the model table its server script reads.
AMD_TABLES = {"sglang-disagg": "models.yaml", "vllm-disagg": "models_vllm.yaml", "atom-disagg": "models_atom.yaml"}
# Variables whose values the runners and master configs vary, and the values tried.
GRID = {
    "DP_ATTENTION": ["true", "false"],
    "EP_SIZE": ["1", "8"],
    "TP": ["8", "4"],
    "CONC": ["4", "64"],
    "EVAL_ONLY": ["false", "true"],
    "SPEC_DECODING": ["none", "mtp"],
    "KV_OFFLOADING": ["false", "true"],
    "RUN_EVAL": ["false", "true"],
}
MAX_RUNS = 32
# The tree the tool reads (the runs use a copy of it).
ORIGINAL_TREE = None
RUN_SECONDS = 20
BASE_ENV = {
    "MODEL": "/models/m",
    "TP": "8",
    "EP_SIZE": "1",
    "DP_ATTENTION": "false",
    "CONC": "16",
    "ISL": "1024",
    "OSL": "1024",
    "MAX_MODEL_LEN": "4096",
    "RANDOM_RANGE_RATIO": "1",
    "RESULT_FILENAME": "result",
    "PORT": "8888",
    "SPEC_DECODING": "none",
    "EVAL_ONLY": "false",
    "HOME": "/tmp",
}

RECORDER = r"""#!/bin/bash
# A server launch records its argv and env; other python runs for real
# (the script's own helpers), except a program file (a benchmark client).
record() {
    f=$(mktemp "$RECORD_DIR/launch.XXXXXX")
    printf '%s\0' "$@" > "$f.argv"
    env -0 > "$f.env"
    # The configuration file a trtllm-serve launch names, as it is at launch.
    prev=""
    for a in "$@"; do
        case "$a" in --config=*|--extra_llm_api_options=*) cp -- "${a#*=}" "$f.config" 2>/dev/null ;; esac
        case "$prev" in --config|--extra_llm_api_options) cp -- "$a" "$f.config" 2>/dev/null ;; esac
        prev="$a"
    done
    mv "$f" "$f.done"
    exit 0
}
name=$(basename "$0")
case "$name" in
    trtllm-serve) record "$0" "$@"; exit 0 ;;
    vllm) [[ "$1" == "serve" ]] && record "$0" "$@"; exit 0 ;;
    sglang) [[ "$1" == "serve" ]] && record "$0" "$@"; exit 0 ;;
esac
prev=""
for a in "$@"; do
    if [[ "$prev" == "-m" ]]; then
        case "$a" in sglang.launch_server*|vllm.entrypoints*|sglang.srt*|atom.entrypoints*) record "$0" "$@" ;; esac
    fi
    prev="$a"
done
# No arguments: the program comes on stdin (`python3 << EOF`, server_atom.sh's table reader).
[[ $# -eq 0 ]] && exec "$REAL_PYTHON"
case "$1" in
    -c|-m|-) exec "$REAL_PYTHON" "$@" ;;
    -*) exec "$REAL_PYTHON" "$@" ;;
esac
exit 0
"""
NOOP = "#!/bin/sh\nexit 0\n"
# mpirun runs the command after its own options.
MPIRUN = r"""#!/bin/bash
while [[ $# -gt 0 && "$1" == -* ]]; do
    case "$1" in -n|-np|-N|-H|--host|-x|--map-by|--bind-to|--mca) shift 2 ;; *) shift ;; esac
done
exec "$@"
"""
NOOPS = ["srun", "docker", "pip", "pip3", "hf", "huggingface-cli", "nvidia-smi", "rocm-smi", "amd-smi", "curl", "wget",
         "numactl", "sleep", "git", "nohup_", "ibv_devinfo", "sudo", "apt-get", "uv", "lm_eval", "pkill", "kill_"]


def scripts(tree):
    out = []
    for folder in FOLDERS:
        d = tree / "benchmarks/single_node" / folder
        if not d.is_dir():
            continue
        for p in sorted(d.glob("*.sh")):
            text = p.read_text(errors="replace")
            if LAUNCH.search(text):
                out.append(p)
    return out


def family(text):
    if "trtllm-serve" in text:
        return "trt"
    return "vllm" if re.search(r"vllm serve|vllm\.entrypoints", text) else "sglang"


def runs_for(text):
    tested = [v for v in GRID if re.search(r"\$\{?" + v + r"\b", text)]
    combos = list(itertools.product(*[GRID[v] for v in tested]))[:MAX_RUNS]
    return [dict(zip(tested, c)) for c in combos] or [{}]


def stub_dir(work):
    d = work / "bin"
    d.mkdir()
    for name in ["python3", "python", "vllm", "sglang", "trtllm-serve"]:
        (d / name).write_text(RECORDER)
    (d / "mpirun").write_text(MPIRUN)
    for name in NOOPS:
        (d / name).write_text(NOOP)
    for p in d.iterdir():
        p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return d


def run_bash(script, settings, stubs, records, sandbox, workspace, base_env=BASE_ENV):
    # A fresh folder per run: a stub killed with its job may still be writing.
    records = Path(tempfile.mkdtemp(prefix="records", dir=records))
    env = dict(base_env)
    env.update(settings)
    env["PATH"] = f"{stubs}:/usr/bin:/bin"
    env["RECORD_DIR"] = str(records)
    env["REAL_PYTHON"] = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
    # What the script does after its server started (benchmark clients, evals)
    # is not looked at: the run stops a moment after the first launch.
    proc = subprocess.Popen(["bash", str(script)], env=env, cwd=sandbox, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    started = time.time()
    seen = None
    while proc.poll() is None and time.time() - started < RUN_SECONDS:
        if seen is None and any(records.glob("*.done")):
            seen = time.time()
        if seen is not None and time.time() - seen > 0.5:
            break
        time.sleep(0.05)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    launches = []
    for done in sorted(records.glob("*.done")):
        base = str(done)[: -len(".done")]
        # The run's copy of the tree stands for the tree the tool read: a path
        # the script builds from `$0` names the real tree's file.
        argv = [w.replace(str(workspace), "/workspace").replace(str(sandbox), str(ORIGINAL_TREE))
                for w in Path(base + ".argv").read_bytes().decode(errors="replace").split("\0") if w]
        env = {}
        given = set()
        for kv in Path(base + ".env").read_bytes().decode(errors="replace").split("\0"):
            k, _, v = kv.partition("=")
            # Engine variables the job itself passes in (job.slurm's `docker run
            # -e`, the harness's settings) are not the scripts' doing: they are
            # left out of both sides (a script that exports one again with the
            # job's value, `export ATOM_WS_PATH="$WS_PATH"`, changes nothing).
            if not k.startswith(ENGINE_ENV):
                continue
            if base_env.get(k) == v or settings.get(k) == v:
                given.add(k)
            else:
                env[k] = v.replace(str(workspace), "/workspace").replace(str(sandbox), str(ORIGINAL_TREE))
        config = Path(base + ".config")
        launches.append((after_launcher(argv), env, given, config_keys(config.read_text(errors="replace")) if config.is_file() else None))
    return launches


def config_keys(text):
    """The keys of a configuration file as bash wrote it: dotted path -> the
    value as written (every scalar as text), `map`, or `list of N`."""
    import yaml
    try:
        root = yaml.load(text, Loader=yaml.BaseLoader)
    except yaml.YAMLError:
        return {"<not YAML>": text}
    out = {}

    def walk(node, prefix):
        for k, v in (node or {}).items():
            path = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, dict):
                out[path] = "map"
                walk(v, path)
            elif isinstance(v, list):
                out[path] = f"list of {len(v)}"
            else:
                out[path] = v
    if isinstance(root, dict):
        walk(root, "")
    return out


def role_config(role):
    """The keys `show` reads for a command line's configuration file; a value
    not known is `None` (matches any value)."""
    out = {}
    for k in role.get("config") or []:
        v = k.get("value") or {}
        kind = v.get("type")
        out[k["key"]] = {"scalar": v.get("text"), "map": "map", "null": "null"}.get(kind) if kind != "list" else f"list of {v.get('len')}"
    return out


def config_score(shown, passed):
    """Keys both have with values that agree (a value not known agrees)."""
    return sum(1 for k, v in shown.items() if k in passed and (v is None or v == passed[k] or (v == "null" and passed[k] in ("", "null", "~"))))


def after_launcher(argv):
    for i, w in enumerate(argv):
        if w.rsplit("/", 1)[-1] == "trtllm-serve":
            rest = argv[i + 1:]
            return rest[1:] if rest[:1] == ["serve"] else rest
        if w == "serve" or re.match(r"sglang\.launch_server|vllm\.entrypoints|atom\.entrypoints", w):
            return argv[i + 1:]
    return argv


def is_flag(w):
    return isinstance(w, str) and w.startswith("-") and len(w) > 1 and not re.match(r"-[\d.]", w)


def pairs(words):
    """(flag, value) pairs of a command line: a `-x` word and the words up to the
    next one. A word the tool does not know is `None`, or `(None, raw)` when its
    flag name is written (`--tp="$TP"`)."""
    out = []
    i = 0
    while i < len(words):
        w = words[i]
        if isinstance(w, tuple):
            m = re.match(r"(--?[\w.-]+)=", w[1] or "")
            out.append((m.group(1), None) if m else ("<positional>", None))
            i += 1
            continue
        if is_flag(w):
            if "=" in w:
                k, _, v = w.partition("=")
                out.append((k, v))
                i += 1
                continue
            j = i + 1
            vals = []
            while j < len(words) and not is_flag(words[j]) and not (isinstance(words[j], tuple) and re.match(r"--?[\w.-]+=", words[j][1] or "")):
                vals.append(None if isinstance(words[j], tuple) else words[j])
                j += 1
            out.append((w, tuple(vals)))
            i = j
        else:
            out.append(("<positional>", w))
            i += 1
    return out


def matches(shown, passed):
    """A shown pair against a passed one: a value not known matches any value."""
    if shown[0] != passed[0]:
        return False
    a, b = shown[1], passed[1]
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(x is None or x == y for x, y in zip(a, b))
    return a is None or a == b


def role_pairs(role):
    """The tool's own reading of a command line: its flags as bound by the
    engine's arity (`flags` of `show --format json`). A value it does not
    know is `None`, which matches any value."""
    out = []
    for f in role.get("flags") or []:
        v = f.get("value") or {}
        kind = v.get("type")
        if kind == "switch" and not v.get("on", True):
            continue
        if kind == "switch":
            value = ()
        elif kind == "scalar":
            value = (v.get("text"),)
        elif kind == "list":
            value = tuple(i.get("value") if isinstance(i, dict) else i for i in v.get("items") or [])
        else:
            value = None
        # A single-dash form (vLLM's `-cc.x=v`) keeps its dash in the name.
        name = f["name"] if f["name"].startswith("-") else "--" + f["name"]
        out.append((name, value))
    return out


def passed_pairs(argv):
    """bash's words as (flag, values) pairs, `--x=v` as `--x` with one value;
    words before the first flag (the model of `vllm serve MODEL`, read as the
    subcommand's argument) are not flags and are left out."""
    out = []
    for name, value in pairs(argv):
        if name == "<positional>":
            continue
        out.append((name, (value,) if isinstance(value, str) else value))
    return out


# The condition `show` gives an export that only some of the paths merged past
# the evaluator's cap have: the tool does not claim it reaches the launch.
MAYBE = "on some of the paths merged past the cap on paths only"


def role_env(role, common):
    env = {}
    for e in list(common) + list(role.get("env") or []):
        if e["name"].startswith(ENGINE_ENV) and e.get("condition") != MAYBE:
            env[e["name"]] = e["value"] if isinstance(e.get("value"), str) else None
    return env


def score(shown_pairs, passed_pairs):
    left = list(passed_pairs)
    hit = 0
    for s in shown_pairs:
        for k, p in enumerate(left):
            if matches(s, p):
                hit += 1
                del left[k]
                break
    return hit


def show_roles(binary, path):
    """Every command line of `show --format json PATH`, with its deployment's
    name and common env."""
    shown = json.loads(subprocess.run([binary, "show", "--format", "json", str(path)], capture_output=True, text=True).stdout or "{}")
    roles = []
    for f in shown.get("files", []):
        for d in f.get("deployments", []):
            for r in d.get("roles", []):
                roles.append((d.get("name"), r, d.get("common_env", [])))
    return roles


def env_score(shown, env):
    """Engine env vars the tool shows that bash set (a value not known matches
    any value), less those it shows that bash did not set."""
    hit = sum(1 for k, v in shown.items() if k in env and (v is None or v == env[k]))
    return hit - (len(shown) - hit)


def best_role(roles, passed, env=None, config=None, also=()):
    """The shown command line (one path through the script) that agrees best
    with bash's words, then with bash's engine env: paths that differ only in
    an export (`if [ $TP -lt 8 ]; then export X=0; fi` with `$TP` unknown to
    the tool) are told apart by it. A claim that matches a word in `also`
    (one another reader already matched) is neither a hit nor a wrong claim.
    (pairs, hits, env)."""
    best = None
    for _, r, common in roles:
        sp = role_pairs(r)
        hit = score(sp, passed)
        restated = score([s_ for s_ in sp if not any(matches(s_, p_) for p_ in passed)], list(also))
        shown_env = role_env(r, common)
        shown_config = role_config(r)
        c = config_score(shown_config, config or {})
        key = (hit - (len(sp) - hit - restated), hit, env_score(shown_env, env or {}), 2 * c - len(shown_config) - len(config or {}))
        if best is None or key > best[0]:
            best = (key, sp, hit, shown_env, shown_config)
    return (best[1], best[2], best[3], best[4]) if best else ([], 0, {}, {})


def compare(t, misses, label, settings, argv, env, roles, table_roles=(), given=frozenset(), config=None):
    """One launch against the tool's reading: the best command line of the
    script, and for the AMD chain also the best entry of the model table for
    the words the script's line left unmatched."""
    t["launches"] += 1
    passed = passed_pairs(argv)
    sp, _, senv, sconfig = best_role(roles, passed, env, config)
    if table_roles:
        left = list(passed)
        taken = []
        for s_ in sp:
            for k, p_ in enumerate(left):
                if matches(s_, p_):
                    taken.append(left.pop(k))
                    break
        tp, _, tenv, _ = best_role(table_roles, left, env, also=taken)
        # A word both readers state (the script's `--block-size ${BLOCK_SIZE}` and
        # the table's `--block-size 16`) is one word: the table's statement of
        # a word already matched is not a second claim, unless its value differs.
        sp = sp + [t_ for t_ in tp if not any(matches(t_, p_) for p_ in taken) or any(matches(t_, p_) for p_ in left)]
        senv = {**tenv, **senv}
    senv = {k: v for k, v in senv.items() if k not in given}
    hit = score(sp, passed)
    t["fp"] += len(passed)
    t["fs"] += len(sp)
    t["fh"] += hit
    t["ep"] += len(env)
    t["es"] += len(senv)
    eh = sum(1 for k, v in senv.items() if k in env and (v is None or v == env[k]))
    t["eh"] += eh
    config = config or {}
    ch = config_score(sconfig, config)
    t["cp"] += len(config)
    t["cs"] += len(sconfig)
    t["ch"] += ch
    if hit < len(passed) or hit < len(sp) or eh < len(env) or eh < len(senv) or ch < len(config) or ch < len(sconfig):
        agree = lambda k: k in sconfig and k in config and config_score({k: sconfig[k]}, config) == 1
        misses.append((label, settings, [p for p in passed if not any(matches(s_, p) for s_ in sp)],
                       [s_ for s_ in sp if not any(matches(s_, p) for p in passed)],
                       sorted(set(env) - set(senv)), sorted(set(senv) - set(env)),
                       {k: v for k, v in config.items() if not agree(k)}, {k: v for k, v in sconfig.items() if not agree(k)}))


def new_totals():
    return {"scripts": 0, "runs": 0, "launches": 0, "fp": 0, "fs": 0, "fh": 0, "ep": 0, "es": 0, "eh": 0, "cp": 0, "cs": 0, "ch": 0}


def amd_jobs(tree):
    """(family, ENGINE, table key, settings) for every model of every engine
    table of the AMD chain: the node roles and parallelism a job can have."""
    import yaml
    jobs = []
    for engine, table in AMD_TABLES.items():
        path = tree / AMD_UTILS / table
        if not path.is_file():
            continue
        keys = list((yaml.safe_load(path.read_text()) or {}).keys())
        fam = "amd-" + engine.split("-")[0]
        for key in keys:
            agentic = key.endswith("-AgentX")
            model = re.sub(r"-(AgentX|DI)$", "", key)
            if key.endswith("-DI") or agentic or f"{key}-DI" not in keys:
                base = {"ENGINE": engine, "MODEL_NAME": model, "MODEL_PATH": f"/models/{model}",
                        "IS_AGENTIC": "1" if agentic else "0"}
                # Node 0 is the first prefill node; node 1, with one prefill and
                # one decode worker of one node each, the decode node.
                for mtp in ["0", "1"]:
                    for dp, ep in [("true", "true"), ("false", "false")]:
                        jobs.append((fam, key, dict(base, NODE_RANK="0", DECODE_MTP_SIZE=mtp,
                                                    PREFILL_ENABLE_DP=dp, PREFILL_ENABLE_EP=ep)))
                    for dp, ep in [("true", "true"), ("false", "true"), ("false", "false")]:
                        jobs.append((fam, key, dict(base, NODE_RANK="1", DECODE_MTP_SIZE=mtp,
                                                    DECODE_ENABLE_DP=dp, DECODE_ENABLE_EP=ep)))
    return jobs


def amd_base(sandbox):
    ws = str(sandbox / AMD_UTILS)
    return {"HOME": "/tmp", "WS_PATH": ws, "SGLANG_WS_PATH": ws, "VLLM_WS_PATH": ws, "ATOM_WS_PATH": ws,
            "MODEL_DIR": "/models", "NNODES": "2", "xP": "1", "yD": "1", "IPADDRS": "10.0.0.1,10.0.0.2",
            "NODE0_ADDR": "10.0.0.1", "PREFILL_TP_SIZE": "8", "DECODE_TP_SIZE": "8", "PREFILL_TP": "8",
            "DECODE_TP": "8", "PREFILL_NUM_WORKERS": "1", "DECODE_NUM_WORKERS": "1", "PREFILL_ENABLE_DP": "true",
            "PREFILL_ENABLE_EP": "true", "DECODE_ENABLE_DP": "true", "DECODE_ENABLE_EP": "true",
            "DECODE_MTP_SIZE": "0", "GPUS_PER_NODE": "8", "IBDEVICES": "rdma0", "SLURM_JOB_ID": "1",
            "BENCH_INPUT_LEN": "1024", "BENCH_OUTPUT_LEN": "1024", "BENCH_MAX_CONCURRENCY": "4x8",
            "KV_OFFLOADING": "none", "DRY_RUN": "0", "RUN_EVAL": "false", "EVAL_ONLY": "false",
            "SPEC_DECODING": "none", "DISAGG": "true", "IS_MULTINODE": "true"}


def main():
    args = [a for a in sys.argv[1:]]
    only = None
    if "--only" in args:
        k = args.index("--only")
        only = args[k + 1]
        del args[k:k + 2]
    only_family = None
    if "--family" in args:
        k = args.index("--family")
        only_family = args[k + 1]
        del args[k:k + 2]
    if not args:
        print(__doc__)
        sys.exit(2)
    tree = Path(args[0]).resolve()
    global ORIGINAL_TREE
    ORIGINAL_TREE = tree
    binary = args[1] if len(args) > 1 else "engine-audit"
    totals = {}
    misses = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sandbox = work / "tree"
        shutil.copytree(tree, sandbox, ignore=shutil.ignore_patterns(".git"), symlinks=True)
        workspace = work / "workspace"
        workspace.mkdir()
        # The scripts write under /workspace (the container's mount): here, the sandbox's.
        for p in sandbox.rglob("*.sh"):
            t = p.read_text(errors="replace")
            if "/workspace" in t:
                p.write_text(t.replace("/workspace", str(workspace)))
        stubs = stub_dir(work)
        (work / "records").mkdir()
        for script in scripts(tree):
            rel = script.relative_to(tree)
            if only and only not in str(rel):
                continue
            text = script.read_text(errors="replace")
            fam = family(text)
            if only_family and fam != only_family:
                continue
            roles = show_roles(binary, script)
            t = totals.setdefault(fam, new_totals())
            t["scripts"] += 1
            for settings in runs_for(text):
                t["runs"] += 1
                for argv, env, given, config in run_bash(sandbox / rel, settings, stubs, work / "records", sandbox, workspace):
                    # Only TensorRT-LLM's file is read as keys; vLLM's and SGLang's
                    # `--config` files of more flags are named unread (EA306) instead.
                    config = config if fam == "trt" else None
                    compare(t, misses, str(rel), settings, argv, env, roles, given=given, config=config)
        server = tree / AMD_UTILS / "server.sh"
        jobs = [j for j in amd_jobs(tree) if (not only_family or j[0] == only_family) and (not only or only in j[1])]
        if jobs and server.is_file():
            roles = show_roles(binary, server)
            tables = {e: show_roles(binary, tree / AMD_UTILS / tb) for e, tb in AMD_TABLES.items()}
            base = amd_base(sandbox)
            seen_models = set()
            for fam, key, settings in jobs:
                t = totals.setdefault(fam, new_totals())
                if (fam, key) not in seen_models:
                    seen_models.add((fam, key))
                    t["scripts"] += 1
                t["runs"] += 1
                table_roles = [r for r in tables[settings["ENGINE"]] if r[0] == key]
                for argv, env, given, _ in run_bash(sandbox / AMD_UTILS / "server.sh", settings, stubs, work / "records",
                                                    sandbox, workspace, base):
                    compare(t, misses, f"{AMD_UTILS}/server.sh [{key}]", settings, argv, env, roles, table_roles, given)
    all_t = {k: sum(t[k] for t in totals.values()) for k in new_totals()}
    print(f"{'family':<10} {'scripts':>7} {'runs':>6} {'launches':>8} {'flag recall':>11} {'flag precision':>14} {'env recall':>10} {'env precision':>13}"
          f" {'config recall':>13} {'config precision':>16}")
    for name, t in sorted(totals.items()) + [("all", all_t)]:
        ratio = lambda a, b: f"{a / b:.3f}" if b else "-"
        print(f"{name:<10} {t['scripts']:>7} {t['runs']:>6} {t['launches']:>8} {ratio(t['fh'], t['fp']):>11} {ratio(t['fh'], t['fs']):>14} "
              f"{ratio(t['eh'], t['ep']):>10} {ratio(t['eh'], t['es']):>13} {ratio(t['ch'], t['cp']):>13} {ratio(t['ch'], t['cs']):>16}")
    if os.environ.get("HARNESS_MISSES"):
        for m in misses:
            print("MISS", json.dumps(m))


if __name__ == "__main__":
    main()
