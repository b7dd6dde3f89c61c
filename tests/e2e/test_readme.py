"""test_readme.py - README's walk-throughs work as written, on a fresh
allotd: every command block of the sections "Quick start (Debian)", "Trying
deferred quota", "Identities" and "Tenancy: who may change the books" is run
in order, in a folder that looks like the repository root (build/allotd,
allot-data), with the real kubectl. `scripts/run.sh [flags]` (re)starts
allotd as that script would (--simulated-nodes 3 and the flags; --port is
the test's own). A command's trailing comment is its expectation: "# yes" /
"# no" is what it prints (kubectl auth can-i), "# 403..." a refusal, any
other a success."""
import os
import re
import shlex
import subprocess
import sys
import tempfile

from e2e_util import free_port

ALLOTD = os.environ["ALLOTD"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECTIONS = ["Quick start (Debian)", "Trying deferred quota", "Identities",
            "Tenancy: who may change the books"]

PRELUDE = r'''
set -u
fails=0
ALLOT_PID=
stop_allotd() {
  [ -n "$ALLOT_PID" ] || return 0
  kill -TERM "$ALLOT_PID" 2>/dev/null
  for _ in $(seq 1 600); do kill -0 "$ALLOT_PID" 2>/dev/null || break; sleep 0.05; done
  kill -9 "$ALLOT_PID" 2>/dev/null
  wait "$ALLOT_PID" 2>/dev/null
  ALLOT_PID=
}
trap stop_allotd EXIT
run_sh() {  # scripts/run.sh FLAGS: allotd as run.sh starts it, on the test's port
  stop_allotd
  local args=() skip=
  for a in "$@"; do
    if [ -n "$skip" ]; then skip=; continue; fi
    case $a in --port) skip=1; continue ;; --port=*) continue ;; esac
    args+=("$a")
  done
  rm -f allot-data/kubeconfig
  build/allotd --simulated-nodes 3 --port "$PORT" "${args[@]}" 2>>allotd.log &
  ALLOT_PID=$!
  for _ in $(seq 1 1200); do [ -s allot-data/kubeconfig ] && return 0; sleep 0.05; done
  echo "FAIL: allotd did not start" >&2; exit 1
}
check() {  # check WANT RC OUT CMD
  local ok=
  case $1 in
    yes|no) [ "$3" = "$1" ] && ok=1 ;;
    403) [ "$2" != 0 ] && case $3 in *forbidden*) ok=1 ;; esac ;;
    *) [ "$2" = 0 ] && ok=1 ;;
  esac
  if [ -z "$ok" ]; then
    fails=$((fails + 1))
    printf 'FAIL: %s\n  want %s, got exit %s:\n%s\n' "$4" "$1" "$2" "$3" >&2
  fi
}
'''


def sections(text):
    """{heading: [lines]} for the headings named in SECTIONS."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^#+ (.*)$", line)
        if m:
            cur = m.group(1).strip() if m.group(1).strip() in SECTIONS else None
            if cur:
                out[cur] = []
            continue
        if cur:
            out[cur].append(line)
    return out


def blocks(lines):
    """The 4-space-indented code blocks, dedented."""
    out, cur = [], []
    for line in lines + [""]:
        if line.startswith("    "):
            cur.append(line[4:])
        elif line.strip() == "" and cur:
            cur.append("")
        else:
            while cur and cur[-1] == "":
                cur.pop()
            if cur:
                out.append(cur)
            cur = []
    return out


def split_comment(line):
    """(code, comment) of one line: a '#' after whitespace outside quotes."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def commands(block):
    """(command text, expectation) for each command of a block."""
    out, i = [], 0
    while i < len(block):
        code, comment = split_comment(block[i])
        parts, i = [code], i + 1
        while parts[-1].endswith("\\") and i < len(block):
            code, c2 = split_comment(block[i])
            comment = comment or c2
            parts.append(code)
            i += 1
        m = re.search(r"<<'?(\w+)'?", parts[-1])
        if m:  # a here-document: up to its terminator
            while i < len(block) and block[i] != m.group(1):
                parts.append(block[i])
                i += 1
            parts.append(block[i] if i < len(block) else m.group(1))
            i += 1
        text = "\n".join(parts).strip()
        if not text:
            continue
        want = "yes" if comment.startswith("yes") else "no" if re.match(r"no\b", comment) else \
            "403" if comment.startswith("403") else "ok"
        out.append((text, want))
    return out


def script(readme):
    parts = [PRELUDE]
    secs = sections(readme)
    for name in SECTIONS:
        if name not in secs:
            sys.exit("FAIL: README has no section %r" % name)
        for block in blocks(secs[name]):
            for text, want in commands(block):
                if text.startswith("scripts/run.sh"):
                    parts.append("run_sh" + text[len("scripts/run.sh"):])
                elif text.startswith("export "):
                    parts.append(text)
                else:
                    parts.append("out=$( {\n%s\n} 2>&1 ); check %s $? \"$out\" %s"
                                 % (text, want, shlex.quote(text)))
    parts.append('[ "$fails" = 0 ] || exit 1')
    return "\n".join(parts) + "\n"


def main():
    readme = open(os.environ.get("README", os.path.join(ROOT, "README.md"))).read()
    tmp = tempfile.mkdtemp(prefix="allot-readme-")
    os.mkdir(os.path.join(tmp, "build"))
    os.symlink(ALLOTD, os.path.join(tmp, "build", "allotd"))
    path = os.path.join(tmp, "readme.sh")
    with open(path, "w") as f:
        f.write(script(readme))
    env = dict(os.environ, PORT=str(free_port()))
    env.pop("KUBECONFIG", None)
    rc = subprocess.call(["bash", path], cwd=tmp, env=env, timeout=240)
    if rc != 0:
        log = os.path.join(tmp, "allotd.log")
        if os.path.exists(log):
            sys.stderr.write("--- allotd log (tail) ---\n" + "".join(open(log).readlines()[-20:]))
    subprocess.call(["rm", "-rf", tmp])
    if rc != 0:
        sys.exit("FAIL: README commands (above)")
    print("test_readme: ok")


if __name__ == "__main__":
    main()
