"""Expected outputs for vectors/classify.json, from an implementation independent of ours.

This reproduces the reference classify() of the Python SDK (laserbrain/operator.py:
allow patterns annotate, every irreversible pattern that re.search()es with re.I
forces reversible=False and ORs its outward flag, labels in grammar order) with
Python's own `re` engine on the patterns in grammar/grammar.json. It is how the
"out" of each case was produced; the Go side runs regexp2 and must agree.

Run from the module root:  python3 vectors/testdata/classify_reference.py > vectors/classify.json
"""
import json
import re

G = json.load(open("grammar/grammar.json", encoding="utf-8"))
DENY = [(re.compile(r["pattern"], re.I), r["label"], bool(r.get("outward"))) for r in G["operator_patterns"]["irreversible"]]

# (command, declared reversible, declared outward)
CASES = [
    ("git push --force origin main", True, False),
    ("git push origin main --force", True, False),
    ("git push -f", True, False),
    ("git push origin main -f", True, False),
    ("git push --force-with-lease origin main", True, False),
    ("git push --force-if-includes --force-with-lease", True, False),
    ("git push origin +main", True, False),
    ("git push origin main", True, False),
    ("git push\n--force", True, False),
    ("git -C repo push --force", True, False),
    ("git push -fu origin main", True, False),
    ("GIT PUSH --FORCE", True, False),
    ("git reset --hard", True, False),
    ("git reset --hard HEAD~1", True, False),
    ("git reset --soft HEAD~1", True, False),
    ("git  reset   --hard", True, False),
    ("rm -rf build", True, False),
    ("rm -Rf build", True, False),
    ("rm -rvf build", True, False),
    ("rm -fr build", True, False),
    ("rm -rfv build", True, False),
    ("rm -frv build", True, False),
    ("rm -r -f build", True, False),
    ("rm --recursive --force build", True, False),
    ("rm -r build", True, False),
    ("rm -f file.txt", True, False),
    ("sudo rm -rf /", True, False),
    ("echo 'rm -rf /'", True, False),
    ("format -rf", True, False),
    ("wrangler deploy", True, False),
    ("npx wrangler deploy --env production", True, False),
    ("wrangler deploy --dry-run", True, False),
    ("wrangler deploy --outdir dist --dry-run", True, False),
    ("wrangler deploy | tee log --dry-run", True, False),
    ("wrangler deploy; echo --dry-run", True, False),
    ("wrangler deploy && wrangler tail --dry-run", True, False),
    ("wrangler deploy\n--dry-run", True, False),
    ("wrangler deploy --name laserbrain-mcp-remote", True, False),
    ("cd laserbrain-mcp-remote && wrangler deploy", True, False),
    ("wrangler deploy --name laserbrain-mcp-remote --dry-run", True, False),
    ("wrangler deployments list", True, False),
    ("npm publish", True, False),
    ("npm publish --access public", True, False),
    ("npm publish --dry-run", True, False),
    ("npm run publish-docs", True, False),
    ("twine upload dist/*", True, False),
    ("python -m twine upload dist/*", True, False),
    ("python3 -m twine upload dist/*", True, False),
    ("python3.11 -m twine upload dist/*", True, False),
    ("flit publish", True, False),
    ("poetry publish --build", True, False),
    ("uv publish", True, False),
    ("uv build", True, False),
    ("pip install twine", True, False),
    ("git push --force && npm publish && rm -rf dist", True, False),
    ("ls -la", True, False),
    ("ls -la", False, False),
    ("ls -la", True, True),
    ("ls -la", False, True),
    ("git status", True, False),
    ("npm publish", False, True),
    ("git reset --hard", True, True),
    ("", True, False),
    ("gitpush --force", True, False),
    ("git pushx --force", True, False),
    ("trim -rf", True, False),
    ("git push --forced", True, False),
    ("git push --force-with-leases", True, False),
    ("echo ünïcödé && git push -f", True, False),
    ("git\u00a0push --force", True, False),
    ("rm\u3000-rf x", True, False),
    ("git push --force\u00e9", True, False),
]

out = []
for cmd, rev, outw in CASES:
    r, o, labels = rev, outw, []
    for rx, label, is_out in DENY:
        if rx.search(cmd):
            r, o = False, o or is_out
            labels.append(label)
    out.append({"in": {"command": cmd, "reversible": rev, "outward": outw},
                "out": {"reversible": r, "outward": o, "labels": labels}})

print(json.dumps({
    "kind": "classify",
    "source": "grammar-layer classify (operator_patterns of grammar/grammar.json 1.21.0); expected outputs "
              "computed with Python's re by vectors/testdata/classify_reference.py, reproducing the reference "
              "classify() of degibug-del/laserbrain-sdk laserbrain/operator.py",
    "cases": out,
}, indent=2, ensure_ascii=False))
