package operator

import (
	"github.com/laserkit/laserkit/operator/shell"

	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testenv"
)

// The deployers' oracle: the real terraform against a local state (a
// terraform_data resource needs no provider and no network) decides what
// a destroy, an apply -destroy or a -replace really destroys; a help
// request or a dry run of terraform, docker and kubectl is proven to be
// one by the tool printing its usage (or its dry run) and nothing in the
// fixture changing. The gate must deny each destroying variant with
// nobody there and deny or ask with a person there; each harmless one
// must go ahead with nobody there and never be denied with a person
// there.

type cliCase struct {
	tool, cmd string
	// shows is what the tool prints when it read the line as the
	// harmless reading (help, a dry run); "" for a destroying variant.
	shows string
}

var cliCases = []cliCase{
	{"terraform", "terraform -chdir=infra destroy -auto-approve", ""},
	{"terraform", "cd infra && terraform destroy -auto-approve", ""},
	{"terraform", "terraform -chdir=infra apply -destroy -auto-approve", ""},
	{"terraform", "terraform -chdir=infra apply -auto-approve -destroy", ""},
	{"terraform", "TF_CLI_ARGS_destroy=-auto-approve terraform -chdir=infra destroy", ""},
	{"terraform", "terraform -chdir=infra apply -replace=terraform_data.x -auto-approve", ""},
	{"terraform", "terraform -chdir=infra destroy -help", "Usage: terraform"},
	{"terraform", "terraform -chdir=infra destroy --help", "Usage: terraform"},
	{"terraform", "terraform -chdir=infra destroy -h", "Usage: terraform"},
	{"terraform", "terraform -help", "Usage: terraform"},
	{"terraform", "terraform -chdir=infra plan -destroy -no-color", "will be destroyed"},
	{"terraform", "terraform -chdir=infra show", "terraform_data.x"},
	{"docker", "docker push --help", "Usage:"},
	{"docker", "docker --context prod push --help", "Usage:"},
	{"docker", "docker rm -h", "Usage:"},
	{"docker", "docker system prune --volumes --help", "Usage:"},
	{"docker", "docker buildx build --push --help", "Usage:"},
	{"kubectl", "kubectl delete --help", "Usage:"},
	{"kubectl", "kubectl -n prod delete ns prod -h", "Usage:"},
	{"kubectl", "kubectl drain node-1 --help", "Usage:"},
	{"kubectl", "kubectl create deployment web --image=nginx --dry-run=client -o name", "deployment.apps/web"},
}

func TestCLIOracle(t *testing.T) {
	root := t.TempDir()
	tmpl := filepath.Join(root, "template")
	tfOK := terraformFixture(t, tmpl)
	env := []string{"HOME=" + filepath.Join(root, "home"), "PATH=" + os.Getenv("PATH"), "LANG=C", "TF_CLI_CONFIG_FILE=/dev/null",
		"TF_INPUT=0", "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "KUBECONFIG=" + filepath.Join(root, "home", "kubeconfig"),
		"DOCKER_CONFIG=" + filepath.Join(root, "home", "docker")}
	works := map[string]bool{"terraform": tfOK}
	for _, tool := range []string{"docker", "kubectl"} {
		_, err := exec.LookPath(tool)
		works[tool] = err == nil
	}
	wrong, destroyed, harmless := 0, 0, 0
	for i, c := range cliCases {
		if !works[c.tool] {
			if c.tool == "terraform" {
				// No registry a new machine reaches serves terraform (nor
				// OpenTofu): skipped, loudly, even under CI.
				t.Logf("SKIPPED: %q: terraform is not installed", c.cmd)
				continue
			}
			testenv.SkipPartOrFail(t, "%q: %s does not work here (docker: Debian's docker.io, the client is enough; kubectl: Debian's kubernetes-client)", c.cmd, c.tool)
			continue
		}
		dir := filepath.Join(root, fmt.Sprintf("run%d", i))
		if out, err := exec.Command("cp", "-a", tmpl, dir).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		an := shell.Analyze(c.cmd, dir)
		att := Decide(an, Attended, RunState{Read: true}, Policy{})
		una := Decide(an, Unattended, RunState{Read: true}, Policy{})

		pre, preIDs := snapshot(dir), terraformIDs(dir)
		run := exec.Command("bash", "-c", c.cmd)
		run.Dir, run.Env = dir, env
		timer := time.AfterFunc(90*time.Second, func() { _ = run.Process.Kill() })
		out, _ := run.CombinedOutput()
		timer.Stop()
		post, postIDs := snapshot(dir), terraformIDs(dir)
		var lost []string
		for _, id := range preIDs {
			if !strings.Contains(" "+strings.Join(postIDs, " ")+" ", " "+id+" ") {
				lost = append(lost, "resource "+id)
			}
		}
		changed := false
		for rel, e := range pre {
			if post[rel] != e && !strings.HasPrefix(rel, "infra/.terraform") {
				changed = true
			}
		}
		switch {
		case len(lost) > 0:
			destroyed++
			if una.Action != Deny || att.Action == Allow {
				wrong++
				t.Errorf("terraform destroyed %v, but the gate says %s attended (%s), %s unattended (%s): %q", lost, att.Action, att.Rule, una.Action, una.Rule, c.cmd)
			}
		case c.shows == "":
			t.Errorf("%q destroyed nothing here (a destroying variant): %s", c.cmd, trim(string(out)))
		default:
			harmless++
			if !strings.Contains(string(out), c.shows) || changed {
				t.Errorf("%q: the tool did not read it as harmless (want %q in its output; fixture changed %v): %s", c.cmd, c.shows, changed, trim(string(out)))
			}
			if una.Action != Allow || att.Action == Deny {
				wrong++
				t.Errorf("the tool read %q as harmless, but the gate says %s attended (%s), %s unattended (%s: %s)", c.cmd, att.Action, att.Rule, una.Action, una.Rule, trim(una.Reason))
			}
		}
		_ = os.RemoveAll(dir)
	}
	t.Logf("cli oracle: %d variants: %d destroyed (all must be refused), %d harmless; %d wrong", destroyed+harmless, destroyed, harmless, wrong)
}

// terraformFixture is a working tree whose infra/ holds a configuration
// with one terraform_data resource, initialised and applied, so a destroy
// has something to destroy. It reports whether terraform works here.
func terraformFixture(t *testing.T, dir string) bool {
	t.Helper()
	infra := filepath.Join(dir, "infra")
	if err := os.MkdirAll(infra, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("terraform"); err != nil {
		return false
	}
	if err := os.WriteFile(filepath.Join(infra, "main.tf"), []byte("resource \"terraform_data\" \"x\" {\n  input = \"oracle\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-input=false"}, {"apply", "-auto-approve", "-input=false"}} {
		c := exec.Command("terraform", args...)
		c.Dir = infra
		c.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "TF_CLI_CONFIG_FILE=/dev/null", "CHECKPOINT_DISABLE=1"}
		if out, err := c.CombinedOutput(); err != nil {
			t.Logf("terraform %s: %v %s", args[0], err, trim(string(out)))
			return false
		}
	}
	return len(terraformIDs(dir)) == 1
}

// terraformIDs are the ids of the resources in infra's local state.
func terraformIDs(dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, "infra", "terraform.tfstate"))
	if err != nil {
		return nil
	}
	var st struct {
		Resources []struct {
			Instances []struct {
				Attributes struct {
					ID string `json:"id"`
				} `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if json.Unmarshal(b, &st) != nil {
		return nil
	}
	var ids []string
	for _, r := range st.Resources {
		for _, in := range r.Instances {
			ids = append(ids, in.Attributes.ID)
		}
	}
	return ids
}
