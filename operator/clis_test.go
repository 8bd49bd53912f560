package operator

import (
	"testing"

	"github.com/laserkit/laserkit/operator/shell"
)

// The publishers and deployers whose tool cannot run here
// (helm, terragrunt, gh, vercel, twine, uv, pnpm: none is served by the
// registries this machine reaches, and docker has no daemon), read from
// each tool's documented command line: global options and their values
// before the subcommand, the subcommand's aliases (helm's uninstall is
// also un, del, delete), wrapper subcommands (pnpm recursive, terragrunt
// run-all), the method option of gh api, vercel's --target. What the real
// tools do is proven where they run (TestPublishOracle: npm and cargo;
// TestCLIOracle: terraform, docker and kubectl help and dry runs). Each
// publishing or destroying line is refused with nobody there and never
// allowed with a person there (never a note); each neighbour — help, a dry
// run, a read — goes ahead with nobody there and is never refused with a
// person there.
func TestDeployersWithoutTheirTool(t *testing.T) {
	destroys := []string{
		"helm un web", "helm uninstall web", "helm --namespace prod un web", "helm -n prod del web", "helm --kube-context prod delete web",
		"helm uninstall web --dry-run=false", "helm uninstal web",
		"terragrunt run-all destroy", "terragrunt --terragrunt-working-dir infra run-all destroy", "terragrunt run --all destroy",
		"terragrunt destroy-all", "terragrunt run-all destroy --terragrunt-non-interactive",
		"gh api -X DELETE repos/o/r", "gh api --method DELETE repos/o/r", "gh api repos/o/r -X DELETE", "gh api -XDELETE repos/o/r",
		"gh api --method=DELETE repos/o/r", "gh repo delete o/r --yes", "gh release delete v1 -y",
		"vercel --target=production", "vercel --target production", "vercel deploy --prod", "vercel --prod",
		"vercel -A x.json --target=production", "vercel remove app --yes",
		"docker --context prod push img", "docker -c prod push img", "docker --host ssh://x push img", "docker image push img",
		"docker buildx build --push -t img .", "docker buildx build -t img . --push", "docker buildx build --output type=registry -t img .",
		"docker exec web rm -rf /data", "docker run --rm -v $PWD:/w alpine rm -rf /w",
		"pnpm -r publish", "pnpm recursive publish", "pnpm --filter app publish", "pnpm -r exec rm -rf dist",
		"pnpm --filter app exec rm -rf dist", "npm -w app exec -- rm -rf dist", "yarn workspace app exec rm -rf dist",
		"python -m twine upload dist/*", "python3 -m twine upload dist/*", "twine upload dist/*", "uv tool run twine upload dist/*",
		"uvx twine upload dist/*", "uv publish", "uv run twine upload dist/*", "uv --directory pkg run rm -rf dist",
		"kubectl delete pod x --dry-run=none", "kubectl --context prod delete ns prod",
	}
	harmless := []string{
		"helm un web --dry-run", "helm uninstall --help", "helm un -h", "helm list", "helm status web",
		"terragrunt destroy --help", "terragrunt run-all plan",
		"gh api repos/o/r", "gh api -X GET repos/o/r", "gh api --help", "gh repo view o/r",
		"vercel --help", "vercel deploy --help", "vercel ls",
		"docker push --help", "docker build -t img .", "docker buildx build -t img .", "docker run --rm alpine ls",
		"pnpm -r publish --dry-run", "pnpm publish --help", "pnpm -r exec ls",
		"twine --help", "python -m twine upload --help", "python -m twine check dist/*", "uv tool run ruff check",
		"kubectl delete pod x --dry-run=client", "kubectl delete pod x --dry-run=server", "kubectl get pods -n prod",
	}
	for _, cmd := range destroys {
		an := shell.Analyze(cmd, "")
		una := Decide(an, Unattended, RunState{Read: true}, Policy{})
		att := Decide(an, Attended, RunState{Read: true}, Policy{})
		if una.Action != Deny || att.Action == Allow {
			t.Errorf("%q: %s unattended (%s), %s attended (%s); want refused unattended, never allowed attended", cmd, una.Action, una.Rule, att.Action, att.Rule)
		}
	}
	for _, cmd := range harmless {
		an := shell.Analyze(cmd, "")
		una := Decide(an, Unattended, RunState{Read: true}, Policy{})
		att := Decide(an, Attended, RunState{Read: true}, Policy{})
		if una.Action != Allow || att.Action == Deny {
			t.Errorf("%q: %s unattended (%s: %s), %s attended (%s); want it to go ahead", cmd, una.Action, una.Rule, trim(una.Reason), att.Action, att.Rule)
		}
	}
}

// TestUnknownProgramsRunTheirInput: what a program the gate does not know
// reads on standard input is no more data than its arguments (at and
// batch run it later, with no atd here to prove it; make -f /dev/stdin is
// proven by TestShellOracle), and the runners behind global options run
// their words.
func TestUnknownProgramsRunTheirInput(t *testing.T) {
	for _, cmd := range []string{"at now <<< 'rm -rf d'", "echo 'rm -rf d' | at now", "batch <<< 'rm -rf d'", "at now <<EOF\nrm -rf d\nEOF",
		"runuser -u nobody -- rm -rf d", "pnpm -r exec rm -rf dist", "npm --workspaces exec -- rm -rf d"} {
		an := shell.Analyze(cmd, "")
		una := Decide(an, Unattended, RunState{Read: true}, Policy{})
		att := Decide(an, Attended, RunState{Read: true}, Policy{})
		if una.Action != Deny || att.Action == Allow {
			t.Errorf("%q: %s unattended (%s), %s attended (%s)", cmd, una.Action, una.Rule, att.Action, att.Rule)
		}
	}
	for _, cmd := range []string{"at now <<< 'ls'", "cat <<< 'rm -rf d'", "grep x <<< 'rm -rf d'", "runuser -u nobody -- ls"} {
		an := shell.Analyze(cmd, "")
		if d := Decide(an, Unattended, RunState{Read: true}, Policy{}); d.Action != Allow {
			t.Errorf("%q: %s unattended (%s)", cmd, d.Action, d.Rule)
		}
	}
}

// The SQL a database client runs is read the same way whichever client
// takes it (sqlModel hands every client's text to one reading). psql and
// mysql cannot run here; sqlite3 can, and TestShellOracle proves each of
// these statements against it (every row deleted or rewritten, or rows
// left). So each statement given to psql -c, mysql -e, a heredoc or a
// pipe must be answered as the sqlite3 form the oracle proved.
func TestSQLClientsReadAlike(t *testing.T) {
	proven := map[string]bool{}
	for _, c := range shellCases {
		if c.class == "sql-rows" {
			proven[c.cmd] = true
		}
	}
	statements := []string{
		"DELETE FROM t", "delete from t where 1=1", "DELETE FROM t WHERE true;", "DELETE FROM t WHERE 'a'='a'",
		"WITH k AS (SELECT 1) DELETE FROM t", "UPDATE t SET x = 0",
		"DELETE FROM t WHERE x = 1", "UPDATE t SET x = 5 WHERE x = 1", "DELETE FROM t WHERE name = 'a;DELETE FROM t'",
	}
	for _, sql := range statements {
		sqlite := `sqlite3 db.sqlite "` + sql + `"`
		if !proven[sqlite] {
			t.Fatalf("%q is not in the shell oracle's sql-rows cases", sqlite)
		}
		want := Decide(shell.Analyze(sqlite, ""), Unattended, RunState{Read: true}, Policy{})
		for _, form := range []string{
			`psql -c "` + sql + `"`, `psql -d app --command="` + sql + `"`, `mysql -u app -e "` + sql + `" app`,
			"psql app <<'SQL'\n" + sql + "\nSQL", `echo "` + sql + `" | mysql app`, `mariadb --execute="` + sql + `"`,
		} {
			got := Decide(shell.Analyze(form, ""), Unattended, RunState{Read: true}, Policy{})
			if got.Action != want.Action || got.Rule != want.Rule {
				t.Errorf("%q: %s (%s), but sqlite3 with the same SQL: %s (%s)", form, got.Action, got.Rule, want.Action, want.Rule)
			}
		}
	}
}
