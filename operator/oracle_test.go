package operator

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The git oracle: real git decides what is destructive. Every spelling
// variant of every destructive git action in scope runs in a throwaway
// repository with a bare remote, uncommitted work (modified, staged, new,
// untracked and ignored files), merged and unmerged branches, stashes, a
// dropped stash, a commit kept only by the reflog and a linked worktree with
// uncommitted work. What happened is observed, not predicted: the gate must
// deny exactly the variants that destroyed something and must not deny the
// ones that did nothing.
//
// Destroyed means: a file's content in any worktree is gone and kept by no
// ref, reflog, index or stash; a commit reachable from a ref or reflog is no
// longer reachable; a stash's changes are gone from stashes and worktrees; an
// unreachable object was pruned; a remote ref was deleted or moved to a
// commit that does not contain its old one. A branch that is only a name
// (deleted while merged) is not a loss.
//
// `go test -run TestGitOracle ./operator` runs a fixed sample (every
// oracleStride-th variant); `make oracle` runs every variant
// (-oracle.full) and prints the counts POLICY.md quotes.

var oracleFull = flag.Bool("oracle.full", false, "run every git oracle variant, not the sample")

const oracleStride = 4

// oracleVariants are the commands the oracle runs, in the fixture's main
// worktree ("work"); ../wt is the linked worktree, origin the bare remote.
func oracleVariants() []string {
	var out []string
	add := func(cmds ...string) { out = append(out, cmds...) }
	prefixes := func(name string, min int) []string {
		var ps []string
		for i := min; i <= len(name); i++ {
			ps = append(ps, "--"+name[:i])
		}
		return ps
	}

	// push: local main and feature have diverged from the remote's, the
	// remote has a branch "old" with no local counterpart.
	for _, f := range prefixes("force", 1) {
		add("git push "+f+" origin main", "git push origin main "+f, "git push origin "+f+" main")
	}
	for _, f := range prefixes("force-with-lease", 6) {
		add("git push "+f+" origin main", "git push origin feature "+f)
	}
	for _, f := range prefixes("force-if-includes", 7) {
		add("git push " + f + " origin main")
	}
	add("git push --force-with-lease=main:origin/main origin main", "git push --force-with-lease --force-if-includes origin main")
	for _, f := range []string{"-f", "-qf", "-fq", "-vf", "-uf", "-fu", "-4f", "-f4"} {
		add("git push "+f+" origin main", "git push origin main "+f)
	}
	add("git push origin +main", "git push origin +main:main", "git push origin +refs/heads/feature:refs/heads/feature", "git push origin main +feature")
	for _, f := range prefixes("mirror", 1) {
		add("git push " + f + " origin")
	}
	for _, f := range prefixes("delete", 1) {
		add("git push "+f+" origin old", "git push origin "+f+" old")
	}
	add("git push -d origin old", "git push origin -d old", "git push -qd origin old", "git push origin :old", "git push origin :refs/heads/old", "git push --delete origin")
	for _, f := range prefixes("prune", 2) {
		add("git push " + f + " origin 'refs/heads/*:refs/heads/*'")
	}
	add("git push origin main", "git push origin feature", "git push", "git push origin merged",
		"git push --force --no-force origin main", "git push -f --no-force origin main", "git push --no-f origin main", "git push --no-force origin main",
		"git push --force --dry-run origin main", "git push -nf origin main", "git push -fn origin main", "git push origin main --force -n",
		"git push --mirror --dry-run origin", "git push --dry-run --delete origin old", "git push --force origin main --help", "git push -h --force origin main",
		"git push --force origin main --porcelain", "git push --force --mirror origin main", "git push --forc origin main",
		"git push --mirror --all origin", "git push --all origin", "git push --tags origin",
		"git -c remote.origin.mirror=true push origin", "git -c remote.origin.mirror=false push origin",
		"git -c remote.origin.push=+refs/heads/main:refs/heads/main push origin", "git -c remote.origin.push=refs/heads/main:refs/heads/main push origin",
		"git push origin $(printf -- --force) main", "git push origin \"$(printf '%s' +main)\"")

	// reset: uncommitted work in the main worktree.
	for _, f := range prefixes("hard", 1) {
		add("git reset "+f, "git reset "+f+" HEAD", "git reset HEAD "+f, "git reset -q "+f, "git reset "+f+" -q")
	}
	add("git reset --hard HEAD~0", "git reset --soft --hard", "git reset --hard --soft", "git reset --hard --no-hard", "git reset --no-hard",
		"git reset --hard -- a.txt", "git reset --hard HEAD a.txt", "git reset --hard HEAD -- a.txt", "git reset --hard --patch",
		"git reset --merge", "git reset --keep", "git reset --mixed", "git reset --soft", "git reset", "git reset --m", "git reset --k",
		"git reset --hard --help", "git reset -h --hard", "git reset --hard --pathspec-from-file=paths.txt", "git reset --hard --quiet", "git reset --hard --no-quiet",
		"git reset --hard a.txt")

	// checkout: paths from the index or a tree-ish, or a forced switch.
	add("git checkout -- a.txt", "git checkout a.txt", "git checkout HEAD a.txt", "git checkout HEAD -- a.txt", "git checkout main a.txt",
		"git checkout merged a.txt", "git checkout .", "git checkout dir", "git checkout -- .", "git checkout HEAD .", "git checkout 'dir/*.txt'",
		"git checkout --pathspec-from-file=paths.txt", "git checkout HEAD --pathspec-from-file=paths.txt",
		"git checkout -f", "git checkout -f main", "git checkout -f merged", "git checkout merged -f", "git checkout -qf merged", "git checkout -fq merged",
		"git checkout --force merged", "git checkout -f -b newbranch", "git checkout -f --detach",
		"git checkout merged", "git checkout main", "git checkout -", "git checkout", "git checkout -bnew1", "git checkout -bfeature2", "git checkout -b new2 HEAD",
		"git checkout -b new3 -- a.txt", "git checkout -p a.txt", "git checkout -- nosuchfile", "git checkout nosuchfile", "git checkout --f merged",
		"git checkout --help a.txt", "git checkout -h -f", "git checkout --force --no-force merged", "git checkout --orphan new4", "git checkout --detach")
	for _, f := range prefixes("force", 2) {
		add("git checkout " + f + " merged")
	}

	// switch.
	for _, f := range prefixes("discard-changes", 2) {
		add("git switch " + f + " merged")
	}
	for _, f := range prefixes("force", 1) {
		add("git switch " + f + " merged")
	}
	add("git switch -f merged", "git switch -qf merged", "git switch -fq merged", "git switch merged -f", "git switch -f", "git switch -c new5 -f",
		"git switch -fc new6", "git switch --detach -f", "git switch -- -f", "git switch merged", "git switch -c new7", "git switch -m merged",
		"git switch --discard-changes --no-discard-changes merged", "git switch --orphan new8", "git switch -f --help merged", "git switch -C new9 -f")

	// restore.
	add("git restore a.txt", "git restore .", "git restore dir", "git restore -- a.txt", "git restore --source=HEAD a.txt", "git restore -s HEAD a.txt",
		"git restore -sHEAD a.txt", "git restore --staged b.txt", "git restore -S b.txt", "git restore --staged --worktree b.txt", "git restore -SW b.txt",
		"git restore -WS b.txt", "git restore -W a.txt", "git restore --worktree a.txt", "git restore --wor a.txt", "git restore --w a.txt", "git restore --st b.txt",
		"git restore --s b.txt", "git restore --no-worktree a.txt", "git restore --staged --no-worktree b.txt", "git restore --worktree --no-worktree a.txt",
		"git restore", "git restore --help a.txt", "git restore -h a.txt", "git restore --help", "git restore -p a.txt", "git restore nosuchfile",
		"git restore --pathspec-from-file=paths.txt", "git restore --staged --pathspec-from-file=paths.txt", "git restore --source=merged a.txt")

	// clean: untracked files (and an ignored one).
	for _, f := range prefixes("force", 1) {
		add("git clean " + f)
	}
	add("git clean -f", "git clean -fd", "git clean -df", "git clean -fx", "git clean -fX", "git clean -xdf", "git clean -f -d", "git clean -d -f",
		"git clean -ff", "git clean -f -e untracked.txt", "git clean -fe untracked.txt", "git clean -n", "git clean -fn", "git clean -nf", "git clean -f -n",
		"git clean --dry-run -f", "git clean -f --dry", "git clean -f --dr", "git clean -f --d", "git clean", "git clean -d", "git clean -x",
		"git clean -f --no-force", "git clean -i", "git clean -f --help", "git clean -hf", "git clean -f --interactive", "git -c clean.requireForce=false clean",
		"git -c clean.requireforce=false clean -d", "git clean -f --quiet", "git clean -fq")

	// branch: topic is unmerged (its commits are on no other ref), merged is.
	add("git branch -D topic", "git branch -d topic", "git branch -d -f topic", "git branch -df topic", "git branch -fd topic",
		"git branch --delete --force topic", "git branch -d --force topic", "git branch -d --forc topic", "git branch -d --for topic",
		"git branch -d --fo topic", "git branch -d --f topic", "git branch --del --forc topic", "git branch --d --force topic", "git branch --de -f topic",
		"git branch topic -D", "git branch -D -q topic", "git branch -qD topic", "git branch -Dq topic", "git branch -d merged", "git branch -D",
		"git branch -D --help topic", "git branch -r -D origin/feature", "git branch -D -r origin/feature", "git branch -d -f --no-force topic",
		"git branch -M merged topic", "git branch -m merged topic", "git branch -C merged topic", "git branch -c merged topic", "git branch -m -f merged topic",
		"git branch -D topic --list", "git branch --list", "git branch -f topic HEAD")

	// stash: two stashes with changes found nowhere else.
	add("git stash drop", "git stash drop stash@{1}", "git stash drop -q", "git stash drop --quiet", "git stash drop --q", "git stash clear",
		"git stash clear now", "git stash -q drop", "git stash list", "git stash drop --help", "git stash drop -h", "git stash show",
		"git stash pop", "git stash apply", "git stash drop nosuchstash", "git stash drop --no-quiet")

	// worktree: ../wt has uncommitted work.
	for _, f := range prefixes("force", 1) {
		add("git worktree remove " + f + " ../wt")
	}
	add("git worktree remove -f ../wt", "git worktree remove ../wt -f", "git worktree remove ../wt", "git worktree remove --force --no-force ../wt",
		"git worktree remove --n ../wt", "git worktree remove --no-f ../wt", "git worktree remove -f -f ../wt", "git worktree remove --force --help ../wt",
		"git worktree prune", "git worktree list", "git worktree remove -f")

	// read-tree.
	for _, f := range prefixes("reset", 3) {
		add("git read-tree -u " + f + " HEAD")
	}
	add("git read-tree --reset -u HEAD", "git read-tree -u --reset merged", "git read-tree --reset HEAD", "git read-tree -u -m HEAD",
		"git read-tree -n -u --reset HEAD", "git read-tree -u --reset --dry-run HEAD", "git read-tree -u --reset", "git read-tree --help -u --reset HEAD",
		"git read-tree --r -u HEAD")

	// update-ref.
	add("git update-ref -d refs/heads/topic", "git update-ref refs/heads/topic -d", "git update-ref refs/heads/topic HEAD",
		"printf 'delete refs/heads/topic\\n' | git update-ref --stdin", "git update-ref -d", "git update-ref --help -d refs/heads/topic")

	// reflog: "temp" is kept only by the reflogs.
	for _, f := range prefixes("expire", 3) {
		add("git reflog expire " + f + "=now --all")
	}
	add("git reflog expire --expire=all --all", "git reflog expire --expire-unreachable=now --all", "git reflog expire --expire-unr=now --all",
		"git reflog expire --expire=now --expire-unreachable=now --all", "git reflog expire --all", "git reflog expire --expire=never --all",
		"git reflog expire --expire=now --all --dry-run", "git reflog expire --expire=now --all --dry", "git reflog expire --expire=now --help --all",
		"git reflog delete HEAD@{1}", "git reflog delete --rewrite HEAD@{1}", "git reflog delete --rew HEAD@{1}", "git reflog delete HEAD@{1} --rewrite",
		"git reflog delete --rewrite --dry-run HEAD@{1}", "git reflog delete --dry-run HEAD@{1}", "git reflog delete --rewrite --no-rewrite HEAD@{1}", "git reflog", "git reflog show")

	// gc and prune: a dropped stash is unreachable.
	for _, f := range prefixes("prune", 3) {
		add("git gc " + f + "=now")
	}
	add("git gc --prune=all", "git gc", "git gc --prune", "git gc --no-prune", "git gc --prune=never", "git -c gc.pruneExpire=now gc",
		"git gc --prune=now --no-prune", "git gc --prune=now --help", "git prune", "git prune -n", "git prune --dry-run", "git prune --expire=now",
		"git prune -v")

	// rebase running a shell command after each commit.
	add("git rebase --autostash -x 'rm -rf dir' HEAD~1", "git rebase --autostash --exec='rm -rf dir' HEAD~1")

	// Globals, aliases and wrappers around a sample of the above.
	for _, c := range []string{"push --forc origin main", "reset --ha", "clean --forc", "branch -d --forc topic", "checkout HEAD a.txt",
		"switch -qf merged", "stash drop", "worktree remove --forc ../wt", "restore a.txt", "read-tree -u --reset HEAD"} {
		add("git -C . "+c, "git --no-pager "+c, "git -c color.ui=never "+c, "git -c alias.zz='"+c+"' zz",
			"bash -c 'git "+c+"'", "env GIT_TRACE=0 git "+c, "command git "+c, "/usr/bin/git "+c, "cd ../wt && cd ../work && git "+c,
			"git -C ../work "+c, "\\git "+c)
	}
	// Configuration that executes or changes meaning: set by git
	// config earlier in the line, through the environment, --config-env,
	// an alias in the repository's config file; variables git runs;
	// subcommands that destroy without a force flag's usual spelling.
	add("git config alias.zz 'reset --hard' && git zz", "git config alias.zz '!rm -rf dir' && git zz", "git config clean.requireForce false && git clean -d",
		"git config remote.origin.mirror true && git push origin", "git config --local alias.zz 'checkout -- a.txt'; git zz",
		"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.zz GIT_CONFIG_VALUE_0='reset --hard' git zz",
		"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=clean.requireForce GIT_CONFIG_VALUE_0=false git clean -d",
		"env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.mirror GIT_CONFIG_VALUE_0=true git push origin",
		"GIT_CONFIG_PARAMETERS=\"'alias.zz'='reset --hard'\" git zz", "GIT_CONFIG_PARAMETERS=\"'clean.requireforce'='false'\" git clean",
		"V='reset --hard' git --config-env=alias.zz=V zz", "V=false git --config-env=clean.requireForce=V clean -d",
		"export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.zz GIT_CONFIG_VALUE_0='!rm -rf dir'; git zz",
		"git nuke", "git -C ../wt nuke",
		"git -c gc.pruneExpire=now maintenance run --task=gc", "git -c gc.pruneExpire=now maintenance run",
		"git checkout-index -f -a", "git checkout-index -f -- a.txt", "git checkout-index --force --all",
		"git rm -r --force dir", "git rm -f a.txt",
		"git send-pack --force ../origin.git main", "git send-pack ../origin.git +main", "git send-pack --mirror ../origin.git",
		"pushd ../wt && git reset --hard", "pushd ../wt >/dev/null; git clean -fd",
		"GIT_EDITOR='rm -rf dir; true' git commit --allow-empty -q", "GIT_EXTERNAL_DIFF='rm -rf dir; true #' git diff",
		"GIT_SSH_COMMAND='rm -rf dir; exit 1 #' git fetch -q ssh://nohost/repo", "export GIT_EDITOR='rm -rf dir; true'; git commit --allow-empty -q",
		"flock /tmp/oracle.lock git reset --hard", "taskset 1 git reset --hard", "fakeroot git clean -fd",
		"git -c protocol.ext.allow=always fetch -q 'ext::sh -c rm% -rf% dir'", "git -c protocol.ext.allow=always ls-remote 'ext::rm -rf dir'")
	// Their harmless neighbours.
	add("git config alias.st status && git st", "git -c clean.requireForce=true clean -d", "git config user.name oracle && git status",
		"git maintenance run --task=gc", "git -c gc.pruneExpire=now maintenance run --task=loose-objects", "git checkout-index -a",
		"git checkout-index -f --prefix=out/ -a", "git rm -r dir", "git rm --cached -rf dir", "git rm -n -rf dir", "git send-pack ../origin.git main",
		"git send-pack --dry-run --force ../origin.git main", "GIT_EDITOR=true git commit --allow-empty -qm x",
		"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.zz GIT_CONFIG_VALUE_0=status git zz", "GIT_CONFIG_PARAMETERS=\"'alias.zz'='log -1'\" git zz",
		"V=status git --config-env=alias.zz=V zz", "git -c protocol.ext.allow=always ls-remote 'ext::ls' || true", "git ok", "taskset 1 git status", "flock /tmp/oracle.lock git log -1", "pushd ../wt && git status")
	// xargs and env - feeding git.
	add("echo a.txt | xargs git checkout --", "printf 'reset --hard' | xargs git", "printf 'git reset --hard\\n' | xargs -I{} sh -c '{}'",
		"echo '\"git reset --hard\"' | xargs sh -c", "echo topic | xargs git branch -D", "echo topic | xargs git branch -d",
		"env - PATH=/usr/bin:/bin git reset --ha", "env -i PATH=/usr/bin:/bin git clean --forc", "echo a.txt | xargs -n1 git restore")
	return out
}

// oracleSetup builds the fixture in dir: dir/origin.git (bare), dir/work
// (the main worktree) and dir/wt (a linked worktree).
func oracleSetup(t testing.TB, dir string) {
	t.Helper()
	work := filepath.Join(dir, "work")
	run := func(cwd string, script string) {
		t.Helper()
		c := exec.Command("bash", "-euo", "pipefail", "-c", script)
		c.Dir = cwd
		c.Env = oracleEnv(dir)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("fixture: %v\n%s\n%s", err, script, out)
		}
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	run(dir, `git init -q --bare -b main origin.git`)
	run(work, `
git init -q -b main
git remote add origin ../origin.git
printf 'a\n' > a.txt; printf 'b\n' > b.txt; mkdir dir; printf 'c\n' > dir/c.txt; printf '*.log\n' > .gitignore
git add . && git commit -qm base
git push -q -u origin main
git branch merged && git push -q origin merged
git switch -qc feature && printf 'f\n' > feature.txt && git add feature.txt && git commit -qm feature && git push -q -u origin feature
git commit -q --amend -m 'feature, rewritten locally'
git switch -q main
# The remote's main moves on without us; ours moves elsewhere: diverged.
remote=$(git commit-tree -p HEAD -m 'remote only' "$(git write-tree)")
git push -q origin "$remote":refs/heads/main
git push -q origin main:refs/heads/old && git fetch -q origin
git push -q origin :refs/heads/old 2>/dev/null || true
git push -q origin "$remote":refs/heads/old
git fetch -q --prune origin
# Our main once held the remote's tip (fetched, then moved away from it), so
# --force-if-includes lets a lease through, as after a rebase.
git reset -q --hard origin/main && git reset -q --hard HEAD~1
printf 'm2\n' > m2.txt && git add m2.txt && git commit -qm m2
# topic: an unmerged branch whose commit no other ref or reflog holds.
topic=$(git commit-tree -p HEAD -m topic "$(printf '100644 blob %s\ttopic.txt\n' "$(printf 'topic\n' | git hash-object -w --stdin)" | git mktree)")
git update-ref refs/heads/topic "$topic"
# Stashes: one dropped (unreachable), two kept, each with changes found nowhere else.
printf 'dropped\n' > a.txt && git stash -q && git stash drop -q
printf 'stash one\n' > a.txt && git stash -q
printf 'stash two\n' > b.txt && printf 'stash two untracked\n' > st.txt && git stash -q -u
# temp: a commit only HEAD's reflog keeps (HEAD@{1}).
git checkout -q --detach && printf 'temp\n' > temp.txt && git add temp.txt && git commit -qm temp && git checkout -q main
git worktree add -q ../wt -b wtbranch
printf 'wt work\n' > ../wt/a.txt && printf 'wt untracked\n' > ../wt/wtnew.txt
# Uncommitted work here: modified, staged, new, untracked and ignored files.
printf 'work a\n' > a.txt
printf 'work b\n' > b.txt && git add b.txt
printf 'work c\n' > dir/c.txt
printf 'new\n' > new.txt && git add new.txt
printf 'untracked\n' > untracked.txt
printf 'a.txt\n' > paths.txt
printf 'log\n' > debug.log
# Aliases in the repository's own configuration file.
git config alias.nuke 'reset --hard'
git config alias.ok 'log -1'
`)
}

func oracleEnv(dir string) []string {
	env := []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "LANG=C", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "GIT_SEQUENCE_EDITOR=true", "PAGER=cat", "GIT_PAGER=cat", "MANPAGER=cat",
		"GIT_AUTHOR_NAME=oracle", "GIT_AUTHOR_EMAIL=oracle@example.invalid", "GIT_COMMITTER_NAME=oracle", "GIT_COMMITTER_EMAIL=oracle@example.invalid"}
	return env
}

// oracleState is what the fixture holds that could be destroyed.
type oracleState struct {
	files       map[string]string // worktree path → blob id
	reachable   map[string]bool   // objects reachable from refs, reflogs, indexes
	commits     []string          // commits reachable from refs and reflogs
	stash       map[string]bool   // the stashes' own commits
	stashBlobs  []string          // blobs the stashes changed
	unreachable []string          // objects nothing reaches
	remote      map[string]string // remote ref → commit
}

func gitOut(t testing.TB, dir, cwd string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = cwd
	c.Env = oracleEnv(dir)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		// Errorf, not Fatalf: observations run on worker goroutines.
		t.Errorf("git %s in %s: %v\n%s", strings.Join(args, " "), cwd, err, errb.String())
	}
	return out.String()
}

func blobID(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func observe(t testing.TB, dir string) oracleState {
	t.Helper()
	work := filepath.Join(dir, "work")
	s := oracleState{files: map[string]string{}, reachable: map[string]bool{}, remote: map[string]string{}}
	for _, wt := range []string{"work", "wt"} {
		root := filepath.Join(dir, wt)
		_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if e.Name() == ".git" {
				if e.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if e.Type().IsRegular() {
				if data, err := os.ReadFile(p); err == nil {
					rel, _ := filepath.Rel(dir, p)
					s.files[rel] = blobID(data)
				}
			}
			return nil
		})
	}
	for _, id := range strings.Fields(gitOut(t, dir, work, "rev-list", "--objects", "--no-object-names", "--all", "--reflog", "--indexed-objects")) {
		s.reachable[id] = true
	}
	s.commits = strings.Fields(gitOut(t, dir, work, "rev-list", "--all", "--reflog"))
	all := strings.Fields(gitOut(t, dir, work, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"))
	for _, id := range all {
		if !s.reachable[id] {
			s.unreachable = append(s.unreachable, id)
		}
	}
	s.stash = map[string]bool{}
	for _, st := range strings.Fields(gitOut(t, dir, work, "stash", "list", "--format=%H")) {
		// A stash is a commit whose first parent is HEAD at the time, the
		// second the index, the third (with -u) the untracked files.
		parents := strings.Fields(gitOut(t, dir, work, "rev-list", "--parents", "-n1", st))[1:]
		s.stash[st] = true
		for _, p := range parents[1:] {
			s.stash[p] = true
		}
		base := map[string]bool{}
		for _, id := range strings.Fields(gitOut(t, dir, work, "ls-tree", "-r", "--format=%(objectname)", parents[0])) {
			base[id] = true
		}
		trees := []string{st}
		if len(parents) > 2 {
			trees = append(trees, parents[2])
		}
		for _, tr := range trees {
			for _, id := range strings.Fields(gitOut(t, dir, work, "ls-tree", "-r", "--format=%(objectname)", tr)) {
				if !base[id] {
					s.stashBlobs = append(s.stashBlobs, id)
				}
			}
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(gitOut(t, dir, filepath.Join(dir, "origin.git"), "for-each-ref", "--format=%(refname) %(objectname)")), "\n") {
		if name, id, ok := strings.Cut(line, " "); ok {
			s.remote[name] = id
		}
	}
	return s
}

// destroyed compares the state before and after a command and lists what
// was lost.
func destroyed(t testing.TB, dir string, pre, post oracleState) []string {
	var lost []string
	inWorktree := map[string]bool{}
	for _, id := range post.files {
		inWorktree[id] = true
	}
	for p, id := range pre.files {
		if post.files[p] != id && !post.reachable[id] && !inWorktree[id] {
			lost = append(lost, "work in "+p)
		}
	}
	postCommits := map[string]bool{}
	for _, c := range post.commits {
		postCommits[c] = true
	}
	for _, c := range pre.commits {
		// A stash's own commits are judged by their changes, which
		// survive a pop.
		if !postCommits[c] && !pre.stash[c] {
			lost = append(lost, "commit "+c[:8])
		}
	}
	for _, id := range pre.stashBlobs {
		if !post.reachable[id] && !inWorktree[id] {
			lost = append(lost, "stashed change "+id[:8])
		}
	}
	present := map[string]bool{}
	for id := range post.reachable {
		present[id] = true
	}
	for _, id := range post.unreachable {
		present[id] = true
	}
	for _, id := range pre.unreachable {
		if !present[id] {
			lost = append(lost, "unreachable object "+id[:8]+" pruned")
		}
	}
	for ref, old := range pre.remote {
		now, ok := post.remote[ref]
		switch {
		case !ok:
			lost = append(lost, "remote "+ref+" deleted")
		case now != old:
			c := exec.Command("git", "merge-base", "--is-ancestor", old, now)
			c.Dir = filepath.Join(dir, "origin.git")
			c.Env = oracleEnv(dir)
			if c.Run() != nil {
				lost = append(lost, "remote "+ref+" rewritten")
			}
		}
	}
	sort.Strings(lost)
	return lost
}

type oracleResult struct {
	cmd        string
	lost       []string
	decision   Answer // attended (or nothing known about who is there)
	unattended Answer
	why        string
}

// gitFailClosed are variants that destroy nothing on this fixture and that
// the gate does not let go ahead unattended on purpose, with the reason.
var gitFailClosed = map[string]string{
	"git clean -i":               "git clean -i deletes what the answers on its input choose; here its input is empty",
	"git clean -f -i":            "git clean -i deletes what the answers on its input choose; here its input is empty",
	"git clean -fi":              "git clean -i deletes what the answers on its input choose; here its input is empty",
	"git clean -f --interactive": "git clean -i deletes what the answers on its input choose; here its input is empty",
}

func TestGitOracle(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	variants := oracleVariants()
	if !*oracleFull {
		var sample []string
		for i := 0; i < len(variants); i += oracleStride {
			sample = append(sample, variants[i])
		}
		variants = sample
	}
	const slots = 2
	root := t.TempDir()
	results := make([]oracleResult, len(variants))
	var wg sync.WaitGroup
	next := make(chan int)
	start := time.Now()
	for slot := 0; slot < slots; slot++ {
		dir := filepath.Join(root, fmt.Sprintf("slot%d", slot))
		tmpl := dir + ".template"
		oracleSetup(t, dir)
		pre := observe(t, dir)
		if out, err := exec.Command("cp", "-a", dir, tmpl).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = oracleRun(t, dir, tmpl, variants[i], pre)
			}
		}()
	}
	for i := range variants {
		next <- i
	}
	close(next)
	wg.Wait()

	var destructive, harmless, harmlessAsk, harmlessAllow, wrong int
	for _, r := range results {
		if len(r.lost) > 0 {
			// Destroyed something: refused with nobody there, refused or
			// asked with a person there; never allowed, never a note.
			destructive++
			if r.unattended != Deny || r.decision == Allow {
				wrong++
				t.Errorf("destroyed %v, but the gate says %s attended, %s unattended: %q (%s)", r.lost, r.decision, r.unattended, r.cmd, r.why)
			}
			continue
		}
		// Destroyed nothing: goes ahead with nobody there (perhaps with a
		// note), never refused with a person there.
		harmless++
		why, listed := gitFailClosed[r.cmd]
		switch {
		case r.decision == Deny:
			wrong++
			t.Errorf("destroyed nothing, but the gate denies: %q (%s)", r.cmd, r.why)
		case r.unattended != Allow && !listed:
			wrong++
			t.Errorf("destroyed nothing, but the gate refuses it unattended: %q (%s)", r.cmd, r.why)
		case r.unattended == Allow && listed && why != "":
			t.Errorf("listed as refused unattended on purpose, now allowed: %q", r.cmd)
		}
		switch r.decision {
		case Ask:
			harmlessAsk++
		default:
			harmlessAllow++
		}
		if testing.Verbose() && os.Getenv("ORACLE_VERBOSE") != "" {
			t.Logf("harmless %s: %q", r.decision, r.cmd)
		}
	}
	t.Logf("git oracle (git %s): %d variants in %v: %d destroyed something (all must be denied), %d destroyed nothing (%d allowed, %d asked); %d wrong",
		strings.TrimSpace(strings.TrimPrefix(gitVersion(), "git version ")), len(results), time.Since(start).Round(time.Second),
		destructive, harmless, harmlessAllow, harmlessAsk, wrong)
}

func gitVersion() string {
	out, _ := exec.Command("git", "version").Output()
	return string(out)
}

func oracleRun(t testing.TB, dir, tmpl, cmd string, pre oracleState) oracleResult {
	if err := os.RemoveAll(dir); err != nil {
		t.Error(err)
	}
	if out, err := exec.Command("cp", "-a", tmpl, dir).CombinedOutput(); err != nil {
		t.Errorf("cp: %v %s", err, out)
	}
	work := filepath.Join(dir, "work")
	r := classifyIn(work, cmd)
	for try := 0; try < 3 && strings.Contains(r.Why, "stopped after"); try++ {
		// The budget is wall time: on a starved machine it can run out
		// before a 20 µs classification gets a core. This test is about
		// the model, so ask again.
		r = classifyIn(work, cmd)
	}
	c := exec.Command("bash", "-c", cmd)
	c.Dir = work
	c.Env = oracleEnv(dir)
	c.Stdin = nil
	timer := time.AfterFunc(60*time.Second, func() {
		if c.Process != nil {
			_ = c.Process.Kill()
		}
	})
	_, _ = c.CombinedOutput() // failing is an answer too: git refused
	timer.Stop()
	post := observe(t, dir)
	return oracleResult{cmd: cmd, lost: destroyed(t, dir, pre, post), decision: r.Decision, unattended: r.answerFor(Unattended, "").Action, why: r.Why}
}
