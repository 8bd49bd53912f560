package operator

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testenv"
	"github.com/laserkit/laserkit/operator/shell"
)

// Hosted services' deletes: each label is proven from the CLI's own help
// where the CLI installs here (Debian: gcloud's, az's, mysqladmin's,
// dropdb's and kubectl's packages; npm: vercel, netlify-cli, supabase,
// heroku, wrangler through scripts/install-clis.sh; aws from the
// machine's or Debian's awscli): the help names the verb, and a dry-run
// flag the gate reads as one is in the help too. A CLI that cannot be
// installed here is held to its documentation (doc). No command runs
// against a service: only help.

type hostedCase struct {
	cmd string
	// harmless: the CLI reads it as a dry run (or help): it goes ahead
	// unattended and is never refused attended.
	harmless bool
	// help is the CLI's own help for the verb; shows what it must print.
	help  []string
	shows []string
	// doc is the documentation the label follows where the CLI cannot be
	// installed here.
	doc string
}

var hostedCases = []hostedCase{
	{cmd: "gcloud projects delete my-proj", help: []string{"gcloud", "projects", "delete", "--help"}, shows: []string{"gcloud projects delete", "Deletes the project"}},
	{cmd: "gcloud --project x compute instances delete vm-1 --quiet", help: []string{"gcloud", "compute", "instances", "delete", "--help"}, shows: []string{"gcloud compute instances delete"}},
	{cmd: "gcloud sql instances delete db-1", help: []string{"gcloud", "sql", "instances", "delete", "--help"}, shows: []string{"gcloud sql instances delete"}},
	{cmd: "gcloud storage rm --recursive gs://bucket/dir", help: []string{"gcloud", "storage", "rm", "--help"}, shows: []string{"gcloud storage rm", "--recursive"}},
	{cmd: "aws rds delete-db-instance --db-instance-identifier prod --skip-final-snapshot", help: []string{"aws", "rds", "delete-db-instance", "help"}, shows: []string{"delete-db-instance", "--skip-final-snapshot"}},
	{cmd: "aws ec2 terminate-instances --instance-ids i-1234", help: []string{"aws", "ec2", "terminate-instances", "help"}, shows: []string{"terminate-instances"}},
	{cmd: "aws ec2 terminate-instances --instance-ids i-1234 --no-dry-run", help: []string{"aws", "ec2", "terminate-instances", "help"}, shows: []string{"--no-dry-run"}},
	{cmd: "aws ec2 terminate-instances --instance-ids i-1234 --dry-run", harmless: true, help: []string{"aws", "ec2", "terminate-instances", "help"}, shows: []string{"--dry-run"}},
	{cmd: "aws s3 rb s3://bucket --force", help: []string{"aws", "s3", "rb", "help"}, shows: []string{"rb", "--force"}},
	{cmd: "aws s3 rm s3://bucket/ --recursive", help: []string{"aws", "s3", "rm", "help"}, shows: []string{"--recursive"}},
	{cmd: "aws s3 rm s3://bucket/ --recursive --dryrun", harmless: true, help: []string{"aws", "s3", "rm", "help"}, shows: []string{"--dryrun"}},
	{cmd: "aws dynamodb delete-table --table-name users", help: []string{"aws", "dynamodb", "delete-table", "help"}, shows: []string{"delete-table"}},
	{cmd: "az group delete --name prod-rg --yes", help: []string{"az", "group", "delete", "--help"}, shows: []string{"az group delete", "Delete a resource group"}},
	{cmd: "az storage account delete -n store -g rg --yes", help: []string{"az", "storage", "account", "delete", "--help"}, shows: []string{"az storage account delete"}},
	{cmd: "heroku pg:reset DATABASE_URL --confirm my-app", help: []string{"heroku", "pg:reset", "--help"}, shows: []string{"pg:reset", "delete all data"}},
	{cmd: "heroku apps:destroy -a my-app --confirm my-app", help: []string{"heroku", "apps:destroy", "--help"}, shows: []string{"apps:destroy", "permanently destroy"}},
	{cmd: "heroku addons:destroy heroku-postgresql -a my-app --confirm my-app", help: []string{"heroku", "addons:destroy", "--help"}, shows: []string{"addons:destroy"}},
	{cmd: "supabase db reset", help: []string{"supabase", "db", "reset", "--help"}, shows: []string{"Resets the local database", "supabase db reset"}},
	{cmd: "supabase db reset --linked", help: []string{"supabase", "db", "reset", "--help"}, shows: []string{"--linked"}},
	{cmd: "supabase projects delete abcdefghijklmnopqrst", help: []string{"supabase", "projects", "delete", "--help"}, shows: []string{"Delete a Supabase project"}},
	{cmd: "supabase db push --dry-run", harmless: true, help: []string{"supabase", "db", "push", "--help"}, shows: []string{"--dry-run"}},
	{cmd: "vercel remove my-app --yes", help: []string{"vercel", "remove", "--help"}, shows: []string{"vercel remove", "Remove deployment"}},
	{cmd: "vercel rm my-app --yes", help: []string{"vercel", "rm", "--help"}, shows: []string{"vercel remove"}},
	{cmd: "netlify sites:delete 1234 --force", help: []string{"netlify", "sites:delete", "--help"}, shows: []string{"sites:delete", "Delete a project"}},
	{cmd: "wrangler delete my-worker", help: []string{"wrangler", "delete", "--help"}, shows: []string{"wrangler delete", "Delete a Worker"}},
	{cmd: "wrangler deploy --dry-run=false", help: []string{"wrangler", "deploy", "--help"}, shows: []string{"--dry-run", "[boolean]"}},
	{cmd: "wrangler deploy --dry-run", harmless: true, help: []string{"wrangler", "deploy", "--help"}, shows: []string{"Don't actually deploy"}},
	{cmd: "kubectl delete namespace prod", help: []string{"kubectl", "delete", "--help"}, shows: []string{"Delete resources"}},
	{cmd: "kubectl delete namespace prod --dry-run=none", help: []string{"kubectl", "delete", "--help"}, shows: []string{"--dry-run='none'"}},
	{cmd: "mysqladmin -u root -f drop shop", help: []string{"mysqladmin", "--help"}, shows: []string{"drop databasename"}},
	{cmd: "dropdb -h db.internal shop", help: []string{"dropdb", "--help"}, shows: []string{"removes a PostgreSQL database"}},
	{cmd: "doctl compute droplet delete web-1 --force", doc: "https://docs.digitalocean.com/reference/doctl/reference/compute/droplet/delete/ (aliases d, del, rm)"},
	{cmd: "doctl databases rm db-1 -f", doc: "https://docs.digitalocean.com/reference/doctl/reference/databases/delete/"},
	{cmd: "fly apps destroy my-app --yes", doc: "https://fly.io/docs/flyctl/apps-destroy/ (aliases delete, remove, rm)"},
	{cmd: "flyctl volumes destroy vol_123 -y", doc: "https://fly.io/docs/flyctl/volumes-destroy/"},
	{cmd: "firebase firestore:delete --all-collections --force", doc: "https://firebase.google.com/docs/cli (firestore:delete)"},
	{cmd: "firebase database:remove / --force", doc: "https://firebase.google.com/docs/cli (database:remove)"},
	{cmd: "pulumi destroy --yes", doc: "https://www.pulumi.com/docs/iac/cli/commands/pulumi_destroy/"},
	{cmd: "pulumi stack rm dev --yes", doc: "https://www.pulumi.com/docs/iac/cli/commands/pulumi_stack_rm/"},
	{cmd: "pulumi destroy --preview-only", harmless: true, doc: "https://www.pulumi.com/docs/iac/cli/commands/pulumi_destroy/ (--preview-only)"},
	{cmd: "helm uninstall api", doc: "https://helm.sh/docs/helm/helm_uninstall/"},
	{cmd: "terraform destroy -auto-approve", doc: "proven against a local state by TestCLIOracle"},
	{cmd: "redis-cli -h cache FLUSHALL", doc: "proven against a real redis-server by the shell oracle"},
}

// TestHostedDeleteOracle checks every case's answer; the help of one case
// per CLI runs (every case's with -oracle.full: each CLI takes seconds to
// start).
func TestHostedDeleteOracle(t *testing.T) {
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C", "PAGER=cat", "NO_COLOR=1", "DO_NOT_TRACK=1",
		"CLOUDSDK_CORE_DISABLE_PROMPTS=1", "CLOUDSDK_CONFIG=" + filepath.Join(home, "gcloud"), "AZURE_CONFIG_DIR=" + filepath.Join(home, "azure"),
		"VERCEL_TELEMETRY_DISABLED=1", "NETLIFY_TELEMETRY_DISABLED=1", "WRANGLER_SEND_METRICS=false", "AWS_PAGER="}
	helped := runHelps(t, env, home)
	for _, c := range hostedCases {
		an := shell.Analyze(c.cmd, "")
		att := Decide(an, Attended, RunState{Read: true}, Policy{})
		una := Decide(an, Unattended, RunState{Read: true}, Policy{})
		switch {
		case c.harmless && (una.Action != Allow || att.Action == Deny):
			t.Errorf("%q is a dry run, but the gate says %s attended, %s unattended (%s)", c.cmd, att.Action, una.Action, una.Reason)
		case !c.harmless && (una.Action != Deny || att.Action == Allow):
			t.Errorf("%q deletes hosted resources, but the gate says %s attended, %s unattended (%s)", c.cmd, att.Action, una.Action, an.Why)
		}
		if c.help == nil {
			if c.doc == "" {
				t.Errorf("%q: neither help nor documentation proves its label", c.cmd)
			}
			continue
		}
		out, ran := helped[strings.Join(c.help, " ")]
		if !ran {
			continue
		}
		for _, want := range c.shows {
			if !strings.Contains(out, want) {
				t.Errorf("%s does not print %q: the label of %q is not proven by the CLI's help:\n%s", strings.Join(c.help, " "), want, c.cmd, trim(out))
			}
		}
	}
}

// runHelps runs the cases' helps (one per CLI unless -oracle.full), four
// at a time, and returns what each printed, by its command line.
func runHelps(t *testing.T, env []string, home string) map[string]string {
	bins := map[string]string{}
	out := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, 4)
	for _, c := range hostedCases {
		key := strings.Join(c.help, " ")
		if c.help == nil || out[key] != "" {
			continue
		}
		bin, ok := bins[c.help[0]]
		if ok && !*oracleFull {
			continue
		}
		if !ok {
			bin = hostedCLI(t, c.help[0])
			bins[c.help[0]] = bin
		}
		if bin == "" {
			continue
		}
		out[key] = "(running)"
		wg.Add(1)
		go func(args []string) {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			cmd := exec.Command(bin, args...)
			cmd.Env, cmd.Dir = env, home
			timer := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
			b, _ := cmd.CombinedOutput()
			timer.Stop()
			mu.Lock()
			out[key] = ansi.ReplaceAllString(string(b), "")
			mu.Unlock()
		}(c.help[1:])
	}
	wg.Wait()
	return out
}

// ansi is a terminal's escape sequence (gcloud and aws format their help).
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// hostedCLI finds a hosted service's CLI: on PATH, else where
// scripts/install-clis.sh keeps it; "" (skipped, or failed under CI)
// when it is in neither.
func hostedCLI(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if out, err := exec.Command("../scripts/install-clis.sh", "--path", name).Output(); err == nil {
		if p := strings.TrimSpace(string(out)); p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	testenv.SkipPartOrFail(t, "%s is not installed (scripts/install-clis.sh, or Debian's package): its help cannot prove the labels", name)
	return ""
}
