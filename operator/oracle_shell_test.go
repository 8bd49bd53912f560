package operator

import (
	"github.com/laserkit/laserkit/operator/shell"

	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testenv"
)

// The shell oracle: real bash and the real tools decide what a command
// does. Each variant of the classes below runs in a throwaway copy of a
// fixture (a working tree with .git/hooks, Claude Code's settings, an MCP
// list, a ponder ledger, a project policy, a tree to delete with a
// write-protected file, rsync sources and destinations, archives, a
// patch, an SQLite database) and, for Redis, against a real redis-server
// on 127.0.0.1. What happened is observed, not predicted:
//
//   - protected: something under .git, .claude, .mcp.json, .ponder or
//     .laserbrain was created, changed or removed;
//   - destroyed: a directory was removed, two or more files that existed
//     were removed or changed (their content, or their mode in a way that
//     loses a permission or erases how their modes differed), a
//     write-protected file went, or data in the database or Redis went (a
//     table dropped or emptied, every row of one changed);
//   - harmless: nothing of that (new files, one file removed, nothing).
//
// The gate must deny each protected or destructive variant with nobody
// there and deny or ask with a person there — never allow, never a note
// (a write into .ponder or .laserbrain is refused in both); each harmless
// one must go ahead with nobody there (allowed, perhaps with a note) and
// never be denied with a person there. A few commands are harmless on this
// machine but refused on purpose (failClosed, each with its reason); the
// test checks that they are both.
//
// `go test -run TestShellOracle ./operator` runs every variant (they are
// fast); `make oracle` runs it with the git oracle's full sweep.

// shellCase is one oracle variant; $SERVER in the command is the fixture's
// HTTP server, $REDIS the Redis port.
type shellCase struct {
	class string
	cmd   string
	needs string // a tool that must work here, else the variant is skipped (loudly)
}

var shellCases = []shellCase{
	// Unknown programs that take a command, and known wrappers.
	{"unknown-program", "flock /tmp/oracle.lock rm -rf d", "flock"},
	// A shell reading its script from another descriptor.
	{"unknown-program", "exec 3<<<'rm -rf d'; bash <&3", ""},
	{"unknown-program", "bash 3<<<'rm -rf d' <&3", ""},
	{"unknown-program", "exec 3<<<'ls d'; bash <&3", ""},
	{"unknown-program", "taskset 1 rm -rf d", "taskset"},
	{"unknown-program", "script -qc 'rm -rf d' /dev/null", "script"},
	{"unknown-program", "strace -f -o /dev/null rm -rf d", "strace"},
	{"unknown-program", "setpriv --reuid=0 rm -rf d", "setpriv"},
	{"unknown-program", "chrt -o 0 rm -rf d", "chrt"},
	{"unknown-program", "unshare -r rm -rf d", "unshare"},
	{"unknown-program", "fakeroot rm -rf d", "fakeroot"},
	{"unknown-program", "prlimit --nofile=64 rm -rf d", "prlimit"},
	{"unknown-program", "tar -cf /dev/null src --checkpoint=1 --checkpoint-action=exec='rm -rf d'", "tar"},
	{"unknown-program", "sed -n '1e rm -rf d' src/a.txt", "sed"},
	{"unknown-program", "nice -n 1 rm -rf d", ""},
	{"unknown-program", "timeout 5 rm -rf d", ""},
	{"unknown-program", "taskset 1 ls d", "taskset"},
	{"unknown-program", "flock /tmp/oracle.lock ls d", "flock"},
	{"unknown-program", "strace -f -o /dev/null ls d", "strace"},
	{"unknown-program", "fakeroot ls d", "fakeroot"},
	// Shell expansion before the command word.
	{"expansion", "{rm,-rf,d}", ""},
	{"expansion", "/bin/r? -rf d", ""},
	{"expansion", "/usr/bin/r[m] -rf d", ""},
	{"expansion", `$'\x72\x6d' -rf d`, ""},
	{"expansion", `$'\u0072m' -rf d`, ""},
	{"expansion", `$'\162\155' -rf d`, ""},
	{"expansion", "bash <(echo 'rm -rf d')", ""},
	{"expansion", "source <(echo 'rm -rf d')", ""},
	{"expansion", ". <(printf 'rm -rf d\\n')", ""},
	{"expansion", "bash 3<<<'rm -rf d' /dev/fd/3", ""},
	{"expansion", "sh 0<<<'rm -rf d'", ""},
	{"expansion", "trap 'rm -rf d' EXIT", ""},
	{"expansion", "case x in $(rm -rf d)) ;; esac", ""},
	{"expansion", "case $(rm -rf d) in *) ;; esac", ""},
	{"expansion", "f() { rm -rf d; }; f", ""},
	{"expansion", "f() { \"$@\"; }; f rm -rf d", ""},
	{"expansion", "shopt -s expand_aliases\nalias x='rm -rf d'\nx", ""},
	{"expansion", "echo 'rm -rf d' > s.sh; bash s.sh", ""},
	{"expansion", "printf 'rm -rf d\\n' > s.sh && chmod +x s.sh && ./s.sh", ""},
	{"expansion", "cat > s.sh <<'EOF'\nrm -rf d\nEOF\nsh s.sh", ""},
	{"expansion", "bash < run.sh", ""},
	{"expansion", "bash run.sh", ""},
	{"expansion", "./run.sh", ""},
	{"expansion", "source run.sh", ""},
	{"expansion", "X=rm; $X -rf d", ""},
	{"expansion", "hash -p /bin/rm x; x -rf d", ""},
	{"expansion", "hash -p /bin/ls x; x d", ""},
	{"expansion", "{ls,-la}", ""},
	{"expansion", "f() { ls \"$@\"; }; f d", ""},
	{"expansion", "echo 'ls d' > s.sh; bash s.sh", ""},
	{"expansion", "bash list.sh", ""},
	{"expansion", "trap 'echo bye' EXIT", ""},
	{"expansion", "bash <(echo 'ls d')", ""},
	// Program code in list/argv form, import aliases, encoded strings.
	{"code", `python3 -c "import subprocess; subprocess.run(['rm','-rf','d'])"`, "python3"},
	{"code", `python3 -c "import subprocess as s; s.call(['rm', '-r', 'd'])"`, "python3"},
	{"code", `python3 -c "from subprocess import run as r; r(['rm','-rf','d'])"`, "python3"},
	{"code", `python3 -c "import os,base64; os.system(base64.b64decode('cm0gLXJmIGQ=').decode())"`, "python3"},
	{"code", `python3 -c "import os; os.system(bytes.fromhex('726d202d72662064').decode())"`, "python3"},
	{"code", `python3 -c "import subprocess; subprocess.run(['r'+'m','-rf','d'])"`, "python3"},
	{"code", `node -e "require('child_process').execFileSync('rm',['-rf','d'])"`, "node"},
	{"code", `node -e "const {spawnSync: s} = require('child_process'); s('rm', ['-r', '-f', 'd'])"`, "node"},
	{"code", `perl -e 'system("rm","-rf","d")'`, "perl"},
	{"code", `perl -e 'system { "rm" } "rm", "-rf", "d"'`, "perl"},
	{"code", `perl -MFile::Path=rmtree -e 'rmtree("d")'`, "perl"},
	{"code", `perl -Mre -e 'system("rm -rf d")'`, "perl"},
	{"code", "python3 clean.py", "python3"},
	// Calls the text names only in pieces, or under another name.
	{"code", `python3 -c "from shutil import rmtree as r; r('d')"`, "python3"},
	{"code", `python3 -c "import shutil; getattr(shutil, 'rm' + 'tree')('d')"`, "python3"},
	{"code", `python3 -c "import shutil; f = 'rmt' 'ree'; getattr(shutil, f)('d')"`, "python3"},
	{"code", `python3 -c "__import__('shu' + 'til').rmtree('d')"`, "python3"},
	{"code", `python3 -c "import shutil; shutil.rmtree(chr(100))"`, "python3"},
	{"code", `node -e "require('fs').promises.rm('d', {recursive: true})"`, "node"},
	{"code", `node -e "import('fs/promises').then(f => f.rm('d', {recursive: true}))"`, "node"},
	{"code", `node -e "require('fs')['rm' + 'Sync']('d', {recursive: true})"`, "node"},
	{"code", `node -e "const {rmSync: r} = require('fs'); r('d', {recursive: true})"`, "node"},
	{"code", `node -e "const m = 'f' + 's'; require(m).rmSync('d', {recursive: true})"`, "node"},
	{"code", `perl -Mstrict -we 'print "ok\n"'`, "perl"},
	{"code", `python3 -c "print('hello')"`, "python3"},
	{"code", `node -e "console.log(require('fs').readdirSync('d').length)"`, "node"},
	{"code", `python3 -c "from shutil import copytree; copytree('d', 'd2')"`, "python3"},
	{"code", `node -e "require('fs').promises.readFile('d/a.txt', 'utf8').then(console.log)"`, "node"},
	{"code", `python3 -c "import os; print(getattr(os, 'sep'))"`, "python3"},
	{"code", `perl -e 'print "ok\n"'`, "perl"},
	{"code", "python3 hello.py", "python3"},
	// One step removed: a make recipe, a package.json script.
	{"step", "make clean", "make"},
	{"step", "make all", "make"},
	{"step", "make wipe", "make"},
	{"step", "make -C . clean", "make"},
	{"step", "make -f Makefile.more gone", "make"},
	{"step", `printf 'x:\n\trm -rf d\n' > M2 && make -f M2 x`, "make"},
	{"step", "npm run clean", "npm"},
	{"step", "npm run-script clean", "npm"},
	{"step", "npm test", "npm"},
	{"step", "make", "make"},
	{"step", "make list", "make"},
	{"step", "make -n clean", "make"},
	{"step", "npm run list", "npm"},
	{"step", "make nosuch", "make"},
	// Databases.
	{"database", `sqlite3 db.sqlite "DROP/**/TABLE t"`, "sqlite3"},
	// SQL built at run time: decoded, or from a variable only the shell holds.
	{"database", `sqlite3 db.sqlite "$(echo REVMRVRFIEZST00gdDsK | base64 -d)"`, "sqlite3"},
	{"database", "echo REVMRVRFIEZST00gdDsK | base64 -d | sqlite3 db.sqlite", "sqlite3"},
	{"database", "sqlite3 db.sqlite \"-- a comment\nDROP TABLE t\"", "sqlite3"},
	{"database", `sqlite3 db.sqlite '/* x */ drop table t;'`, "sqlite3"},
	{"database", "sqlite3 db.sqlite <<'SQL'\n/* clean */ DROP\nTABLE t;\nSQL", "sqlite3"},
	{"database", `sqlite3 db.sqlite "SELECT count(*) FROM t"`, "sqlite3"},
	{"database", `sqlite3 db.sqlite ".tables"`, "sqlite3"},
	{"database", `redis-cli -p $REDIS eval "redis.call('flushall')" 0`, "redis-server"},
	{"database", `redis-cli -p $REDIS EVAL "return redis.call('FLUSHDB')" 0`, "redis-server"},
	{"database", `redis-cli -p $REDIS flushall`, "redis-server"},
	{"database", `echo FLUSHALL | redis-cli -p $REDIS`, "redis-server"},
	{"database", `redis-cli -p $REDIS get k`, "redis-server"},
	{"database", `redis-cli -p $REDIS eval "return redis.call('get','k')" 0`, "redis-server"},
	// rsync.
	{"rsync", "rsync -a --delete src2/ dst2/", "rsync"},
	{"rsync", "rsync -a --delete src2/ dst2/ --exclude ' -n'", "rsync"},
	{"rsync", "rsync -a --del src2/ dst2/ --exclude='x -n y'", "rsync"},
	{"rsync", "rsync -a --delete-after src2/ dst2/", "rsync"},
	{"rsync", "rsync -a --remove-source-files src2/ dst2/", "rsync"},
	{"rsync", "rsync -a --remove-sent-files src2/ dst2/", "rsync"},
	{"rsync", `rsync -a -e 'sh -c "rm -rf d; exit 1" x' src2/ localhost:dst2/`, "rsync"},
	{"rsync", "rsync -an --delete src2/ dst2/", "rsync"},
	{"rsync", "rsync --dry-run --delete src2/ dst2/", "rsync"},
	{"rsync", "rsync -a src2/ dst2/", "rsync"},
	{"rsync", "rsync -a --exclude ' -n' src2/ dst2/", "rsync"},
	// Protected files written by ordinary tools.
	{"protected", "mv -t .git/hooks pre-commit", ""},
	{"protected", "tar -C .git/hooks -xf hooks.tar", "tar"},
	{"protected", "tar -xf hooks.tar --directory=.git/hooks", "tar"},
	{"protected", "curl -s -o .git/hooks/pre-commit $SERVER/pre-commit", "curl"},
	{"protected", "curl -s -O --output-dir .git/hooks $SERVER/pre-commit", "curl"},
	{"protected", "wget -q -O .claude/settings.json $SERVER/settings.json", "wget"},
	{"protected", "wget -q -P .git/hooks $SERVER/pre-commit", "wget"},
	{"protected", "unzip -q -o -d .ponder x.zip", "unzip"},
	{"protected", "unzip -q -o -d .claude x.zip", "unzip"},
	{"protected", "patch -s .mcp.json < p.diff", "patch"},
	{"protected", "patch -s -p1 < p1.diff", "patch"},
	{"protected", "install -m 755 pre-commit .git/hooks/pre-commit", ""},
	{"protected", "ln -sf ../../pre-commit .git/hooks/pre-commit", ""},
	{"protected", "cp pre-commit .git/hooks/", ""},
	{"protected", "chmod 700 .git/hooks/pre-push.sample", ""},
	{"protected", "mv .claude .claude-old", ""},
	{"protected", "rm -r .claude", ""},
	{"protected", "echo '{}' > .claude/settings.local.json", ""},
	{"protected", "echo '{}' > .mcp.json", ""},
	{"protected", "echo x >> .ponder/s/ledger.jsonl", ""},
	{"protected", "cp p.json .laserbrain/policy.json", ""},
	{"protected", "cd .git && echo x > hooks/pre-commit", ""},
	{"protected", "dd if=pre-commit of=.git/hooks/pre-commit status=none", ""},
	{"protected", "tar -xf out.tar", "tar"},
	{"protected", "curl -s -o out.txt $SERVER/pre-commit", "curl"},
	{"protected", "wget -q $SERVER/settings.json", "wget"},
	{"protected", "unzip -q x.zip -d unpacked", "unzip"},
	{"protected", "cat .git/hooks/pre-push.sample > /dev/null", ""},
	{"protected", "cp .mcp.json mcp-copy.json", ""},
	{"protected", "ls .claude", ""},
	// The ponder ledger written by the shell: every way a shell and its
	// tools change .ponder, each refused to an agent whoever is there.
	{"ponder", "printf x > .ponder/s/units.json", ""},
	{"ponder", "tee -a .ponder/s/ledger.jsonl <<< x > /dev/null", ""},
	{"ponder", "echo x | tee .ponder/s/ledger.jsonl > /dev/null", ""},
	{"ponder", "sed -i 's/1/2/' .ponder/s/ledger.jsonl", "sed"},
	{"ponder", "perl -pi -e 's/1/2/' .ponder/s/ledger.jsonl", "perl"},
	{"ponder", "cp b.txt .ponder/s/ledger.jsonl", ""},
	{"ponder", "mv b.txt .ponder/s/", ""},
	{"ponder", "mv .ponder/s/ledger.jsonl ledger.bak", ""},
	{"ponder", "rm .ponder/s/ledger.jsonl", ""},
	{"ponder", "rm -rf .ponder", ""},
	{"ponder", "truncate -s 0 .ponder/s/ledger.jsonl", ""},
	{"ponder", "touch .ponder/s/new.json", ""},
	{"ponder", "ln -s ../../b.txt .ponder/s/link", ""},
	{"ponder", "dd if=b.txt of=.ponder/s/ledger.jsonl status=none", ""},
	{"ponder", "cd .ponder; echo x > s/ledger.jsonl", ""},
	{"ponder", "bash -c 'echo x >> .ponder/s/ledger.jsonl'", ""},
	{"ponder", `sh -c "echo x > \"$PWD/.ponder/s/ledger.jsonl\""`, ""},
	{"ponder", `python3 -c "open('.ponder/s/ledger.jsonl','a').write('x')"`, "python3"},
	{"ponder", `node -e "require('fs').appendFileSync('.ponder/s/ledger.jsonl','x')"`, "node"},
	{"ponder", "find .ponder -name '*.jsonl' -delete", ""},
	{"ponder", "D=.ponder/s; echo x > $D/ledger.jsonl", ""},
	{"ponder", "echo x > ./.ponder//s/../s/ledger.jsonl", ""},
	{"ponder", "tar -C .ponder -xf out.tar", "tar"},
	{"ponder", "cat b.txt > .ponder/s/ledger.jsonl", ""},
	{"ponder", "exec 3>>.ponder/s/ledger.jsonl; echo x >&3", ""},
	{"ponder", "install -m 644 b.txt .ponder/s/ledger.jsonl", ""},
	{"ponder", "chmod 000 .ponder/s/ledger.jsonl", ""},
	{"ponder", "rsync -a b.txt .ponder/s/", "rsync"},
	{"ponder", "{ echo x; } >> .ponder/s/ledger.jsonl", ""},
	{"ponder", `echo x >> "$(pwd)/.ponder/s/ledger.jsonl"`, ""},
	{"ponder", "curl -s -o .ponder/s/x $SERVER/x", "curl"},
	{"ponder", "echo x >> .p*/s/ledger.jsonl", ""},
	{"ponder", "wc -l .ponder/s/ledger.jsonl", ""},
	{"ponder", "cp .ponder/s/ledger.jsonl ledger.copy", ""},
	// Runners and wrappers behind their own options, and programs fed
	// the command on their standard input.
	{"unknown-program", "runuser -u $(id -un) -- rm -rf d", "runuser"},
	{"unknown-program", "make -s -f /dev/stdin <<< $'all:\n\trm -rf d'", "make"},
	{"unknown-program", "make -s -f /dev/stdin <<< $'all:\n\tls d'", "make"},
	// Deletions.
	{"delete", "rm -rf d", ""},
	{"delete", "rm -r d", ""},
	{"delete", "rm -R -f d", ""},
	{"delete", "rm --recursive --force d", ""},
	{"delete", "rm --rec d", ""},
	{"delete", "find d -delete", ""},
	{"delete", "find d -type f -exec rm {} +", ""},
	{"delete", "echo d | xargs rm -rf", ""},
	{"delete", "tar --remove-files -cf d.tar d", "tar"},
	{"delete", "zip -qrm d.zip d", "zip"},
	{"delete", "zip -q -r --move d.zip d", "zip"},
	{"delete", "tar -cf d.tar d", "tar"},
	{"delete", "zip -qr d.zip d", "zip"},
	{"delete", "rm b.txt", ""},
	{"delete", "rm -f b.txt", ""},
	{"delete", "rm -rf --help", ""},
	{"delete", "rm d/a.txt", ""},
	{"delete", "rm -rf", ""},
	// Help and dry runs.
	{"help", "shred --help", "shred"},
	{"help", "shred -h", "shred"},
	{"help", "shred -u -h b.txt", "shred"},
	{"help", "rm --help", ""},
	{"help", "rsync --help", "rsync"},
	{"help", "tar --help", "tar"},
	{"help", "cp --help", ""},
	// Mass truncation: the content of many files replaced at once (the
	// names stay, so nothing looks missing); one named file, a file
	// created, an extension or a copy beside each file lose nothing.
	{"truncate", "find src -type f -exec truncate -s 0 {} +", ""},
	{"truncate", "find src -type f -exec truncate -s0 {} \\;", ""},
	{"truncate", "find src -type f -print0 | xargs -0 truncate -s 0", ""},
	{"truncate", "find src -type f | xargs -I{} truncate --size=0 {}", ""},
	{"truncate", "find src -type f | xargs -n1 sh -c ': > \"$0\"'", ""},
	{"truncate", "truncate -s 0 src/*", ""},
	{"truncate", "truncate -s0 src/a.txt src/notes.md", ""},
	{"truncate", "truncate -s 1 src/*", ""},
	{"truncate", "find src -type f -exec sh -c ': > \"$1\"' sh {} \\;", ""},
	{"truncate", "find src -type f -exec sh -c 'for f; do : > \"$f\"; done' sh {} +", ""},
	{"truncate", "find src -type f -exec sh -c 'sort \"$1\" > \"$1\"' sh {} \\;", ""},
	{"truncate", "find src -type f -exec cp /dev/null {} \\;", ""},
	{"truncate", "find src -type f -print0 | xargs -0 -n1 cp /dev/null", ""},
	{"truncate", "find src -type f -exec dd if=/dev/null of={} status=none \\;", ""},
	{"truncate", "find src -type f -execdir sh -c 'echo > {}' \\;", ""},
	{"truncate", "for f in src/*; do : > \"$f\"; done", ""},
	{"truncate", "for f in src/a.txt src/notes.md; do truncate -s 0 \"$f\"; done", ""},
	{"truncate", "ls src/* | while read -r f; do cp /dev/null \"$f\"; done", ""},
	{"truncate", "for f in $(ls src/*); do truncate -s0 $f; done", ""},
	{"truncate", "truncate -s 0 tracked.txt", ""},
	{"truncate", "for f in src/*; do cp \"$f\" \"$f.bak\"; done", ""},
	{"truncate", "for f in new1.txt new2.txt; do : > \"$f\"; done", ""},
	{"truncate", "for f in src/a.txt; do : > \"$f\"; done", ""},
	{"truncate", "truncate -s 0 new1.txt new2.txt", ""},
	{"truncate", "find src -type f -exec truncate -s +0 {} +", ""},
	{"truncate", "find src -type f -exec sh -c 'cat \"$1\" > \"$1.bak\"' sh {} \\;", ""},
	{"truncate", "find src -type f -exec cp {} dst2/ \\;", ""},
	{"truncate", "find src -type f | xargs -n1 sh -c 'cat \"$0\" >> all.txt'", ""},
	// A DELETE or UPDATE with no WHERE (or one naming no column) changes
	// every row; one that selects rows leaves the rest.
	{"sql-rows", `sqlite3 db.sqlite "DELETE FROM t"`, "sqlite3"},
	{"sql-rows", `sqlite3 db.sqlite "delete from t where 1=1"`, "sqlite3"},
	{"sql-rows", `sqlite3 db.sqlite "DELETE FROM t WHERE true;"`, "sqlite3"},
	{"sql-rows", `sqlite3 db.sqlite "DELETE FROM t WHERE 'a'='a'"`, "sqlite3"},
	{"sql-rows", "sqlite3 db.sqlite <<'SQL'\nDELETE\nFROM t;\nSQL", "sqlite3"},
	{"sql-rows", "echo 'DELETE FROM t;' | sqlite3 db.sqlite", "sqlite3"},
	{"sql-rows", `sqlite3 db.sqlite "DELETE /* all */ FROM t -- every row"`, "sqlite3"},
	{"sql-rows", `sqlite3 db.sqlite "WITH k AS (SELECT 1) DELETE FROM t"`, "sqlite3"},
	{"sql-rows", `sqlite3 db.sqlite "SELECT 1; DELETE FROM main.t"`, "sqlite3"},
	{"sql-rows", `sqlite3 db.sqlite "UPDATE t SET x = 0"`, "sqlite3"},
	{"sql-rows", `sqlite3 db.sqlite "UPDATE t SET name = (SELECT max(name) FROM t WHERE x > 5)"`, "sqlite3"},
	{"sql-rows", "sqlite3 db.sqlite < wipe.sql", "sqlite3"},
	{"sql-rows", `sqlite3 db.sqlite ".read wipe.sql"`, "sqlite3"},
	{"sql-rows", "sqlite3 db.sqlite < one.sql", "sqlite3"},
	{"sql-rows", `sqlite3 db.sqlite "DELETE FROM t WHERE x = 1"`, "sqlite3"},
	{"sql-rows", `sqlite3 db.sqlite "DELETE FROM t WHERE x IN (SELECT x FROM t WHERE x > 2)"`, "sqlite3"},
	{"sql-rows", `sqlite3 db.sqlite "UPDATE t SET x = 5 WHERE x = 1"`, "sqlite3"},
	{"sql-rows", `sqlite3 db.sqlite "DELETE FROM t WHERE name = 'a;DELETE FROM t'"`, "sqlite3"},
	{"sql-rows", `sqlite3 db.sqlite "SELECT * FROM t WHERE x = 1; DELETE FROM t WHERE x = 2"`, "sqlite3"},
	// IFS set to something else than blanks: the gate cannot read the
	// words an unquoted expansion makes. With IFS at its default (or
	// unset again) nothing changes.
	{"ifs", "IFS=x; c=rmx-rf; $c d", ""},
	{"ifs", "IFS=x; a=-rfxd; rm $a", ""},
	{"ifs", "export IFS=/; c=rm/-rf/d; $c", ""},
	{"ifs", "printf -v IFS x; c=rmx-rf; $c d", ""},
	{"ifs", "IFS=x eval 'c=rmx-rf; $c d'", ""},
	{"ifs", "f() { local IFS=,; $1; }; f rm,-rf,d", ""},
	{"ifs", "read -r IFS <<< x; c=rmx-rf; $c d", ""},
	{"ifs", "IFS=$' \\t\\n'; c='ls d'; $c", ""},
	{"ifs", "c='ls d'; $c", ""},
	{"ifs", "IFS=x; unset IFS; c='ls d'; $c", ""},
	{"ifs", "IFS=x; c=ls; $c d", ""},
	{"ifs", "IFS=x; c=rmx-rf; echo \"$c\"", ""},
	// A recursive chmod that sets modes or takes permissions away
	// replaces every file's mode; one that only adds, or a chmod of one
	// file, keeps what was there.
	{"chmod", "chmod -R 000 d", ""},
	{"chmod", "chmod -R 755 d", ""},
	{"chmod", "chmod -R go-rwx d", ""},
	{"chmod", "chmod -w -R d", ""},
	{"chmod", "chmod --recursive a=r d", ""},
	{"chmod", "chmod -R --reference=b.txt d", ""},
	{"chmod", "find d -type f -exec chmod 000 {} +", ""},
	{"chmod", "find d -type f | xargs chmod 600", ""},
	{"chmod", "chmod 000 d/*.txt", ""},
	{"chmod", "for f in d/*.txt; do chmod 600 \"$f\"; done", ""},
	{"chmod", "chmod -R u+w d", ""},
	{"chmod", "chmod +x d/*.txt", ""},
	{"chmod", "chmod -R a+r d", ""},
	{"chmod", "chmod 000 b.txt", ""},
	{"chmod", "chmod -R 600 b.txt", ""},
	// Mentions in data.
	{"data", "echo 'rm -rf d'", ""},
	{"data", "grep -rn 'rm -rf' src", ""},
	{"data", "printf '%s\\n' 'git push --force' > notes.txt", ""},
}

// failClosed are variants that are harmless on this machine and that the
// gate refuses (or asks about) on purpose.
var failClosed = map[string]string{
	"echo x > .GIT/hooks/pre-commit":                           "on a case-insensitive file system (macOS, Windows) .GIT is .git: the gate protects every case; this Linux file system is case-sensitive",
	"mkdir -p .Claude && echo '{}' > .Claude/settings.json":    "on a case-insensitive file system .Claude is .claude: the gate protects every case",
	"find d -name '*.tmp' -delete":                             "find -delete removes whatever its filter matches, which the gate cannot see (spec A.4 rule 4); here nothing matched",
	"IFS=x; c=lsxd; $c":                                        "IFS=x makes ls d here; the gate does not split words on anything but blanks, so it cannot read what such a word runs",
	`sqlite3 db.sqlite "DELETE FROM t WHERE 1 = 0"`:            "a WHERE that names no column is the same for every row: true deletes them all, false none; the gate does not evaluate it",
	`sqlite3 db.sqlite "$(echo U0VMRUNUIDE7Cg== | base64 -d)"`: "SQL decoded at run time is not read: what it runs (here a SELECT) is unknown to the gate",
	"alias x='rm -rf d'; x":                                    "bash reads a whole line before it expands aliases, and expands none without expand_aliases; the gate expands an alias wherever it is used (the agent's shell may enable expand_aliases, and a later line would run it)",
}

func TestShellOracle(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		testenv.SkipOrFail(t, "bash is not on PATH")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "#!/bin/sh\n# served %s\n", r.URL.Path)
	}))
	defer srv.Close()
	redisPort := startRedis(t)
	root := t.TempDir()
	tmpl := filepath.Join(root, "template")
	shellFixture(t, tmpl)

	var cases []shellCase
	for i, c := range shellCases {
		if *oracleFull || i%2 == 0 {
			cases = append(cases, c) // go test runs every second; make oracle all
		}
	}
	for cmd := range failClosed {
		cases = append(cases, shellCase{class: "fail-closed", cmd: cmd})
	}
	works := map[string]bool{}
	type result struct {
		c        shellCase
		obs      observation
		att, una Decision
		skipped  string
	}
	results := make([]result, len(cases))
	var wg sync.WaitGroup
	next := make(chan int)
	for slot := 0; slot < 2; slot++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c := cases[i]
				cmd := strings.NewReplacer("$SERVER", srv.URL, "$REDIS", strconv.Itoa(redisPort)).Replace(c.cmd)
				if c.needs == "redis-server" && redisPort == 0 || c.needs != "" && c.needs != "redis-server" && !works[c.needs] {
					results[i] = result{c: c, skipped: c.needs + " does not work here"}
					continue
				}
				dir := filepath.Join(root, fmt.Sprintf("run%d", i))
				if out, err := exec.Command("cp", "-a", tmpl, dir).CombinedOutput(); err != nil {
					t.Errorf("cp: %v %s", err, out)
					continue
				}
				work := filepath.Join(dir, "work")
				an := shell.Analyze(cmd, work)
				for try := 0; try < 3 && strings.Contains(an.Why, "stopped after"); try++ {
					an = shell.Analyze(cmd, work) // the budget is wall time: a starved machine may spend it
				}
				pol := Policy{Root: work, Home: filepath.Join(dir, "home")}
				att := Decide(an, Attended, RunState{Read: true}, pol)
				una := Decide(an, Unattended, RunState{Read: true}, pol)
				results[i] = result{c: c, obs: runObserved(t, dir, cmd, redisPort), att: att, una: una}
				_ = exec.Command("chmod", "-R", "u+rwx", dir).Run() // chmod -R 000 variants
				_ = os.RemoveAll(dir)
			}
		}()
	}
	for _, tool := range []string{"flock", "taskset", "script", "strace", "setpriv", "chrt", "unshare", "fakeroot", "prlimit", "tar", "sed",
		"python3", "node", "perl", "sqlite3", "rsync", "curl", "wget", "unzip", "patch", "shred", "runuser", "make", "zip", "npm"} {
		works[tool] = toolWorks(tool)
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()

	type tally struct{ destructive, protected, harmless, skipped int }
	per := map[string]*tally{}
	var classes []string
	wrong := 0
	for _, r := range results {
		tl := per[r.c.class]
		if tl == nil {
			tl = &tally{}
			per[r.c.class] = tl
			classes = append(classes, r.c.class)
		}
		if r.skipped != "" {
			tl.skipped++
			testenv.SkipPartOrFail(t, "%q: skipped: %s", r.c.cmd, r.skipped)
			continue
		}
		o := r.obs
		switch {
		case r.c.class == "fail-closed":
			tl.harmless++
			if !o.harmless() {
				t.Errorf("fail-closed %q: the oracle saw %v; it belongs with the destructive cases", r.c.cmd, o.what())
			}
			if r.una.Action != Deny || r.att.Action == Allow {
				wrong++
				t.Errorf("fail-closed %q: %s attended, %s unattended; listed as refused on purpose (%s)", r.c.cmd, r.att.Action, r.una.Action, failClosed[r.c.cmd])
			}
		case !o.harmless():
			if o.protected() {
				tl.protected++
			} else {
				tl.destructive++
			}
			outright := o.outright()
			if r.una.Action != Deny || r.att.Action == Allow || outright && r.att.Action != Deny {
				wrong++
				t.Errorf("%s: the oracle saw %v, but the gate says %s attended (%s), %s unattended (%s): %q",
					r.c.class, o.what(), r.att.Action, r.att.Rule, r.una.Action, r.una.Rule, r.c.cmd)
			}
		default:
			tl.harmless++
			if r.una.Action != Allow || r.att.Action == Deny {
				wrong++
				t.Errorf("%s: the oracle saw nothing lost, but the gate says %s attended (%s), %s unattended (%s: %s): %q",
					r.c.class, r.att.Action, r.att.Rule, r.una.Action, r.una.Rule, trim(r.una.Reason), r.c.cmd)
			}
		}
	}
	var b strings.Builder
	for _, c := range classes {
		x := per[c]
		fmt.Fprintf(&b, "%-16s destroyed %2d  wrote protected %2d  harmless %2d  skipped %d\n", c, x.destructive, x.protected, x.harmless, x.skipped)
	}
	t.Logf("shell oracle: %d variants, %d wrong\n%s", len(results), wrong, b.String())
}

// observation is what a command did to the fixture.
type observation struct {
	lostFiles   []string // files that existed and were removed or changed
	lostDirs    []string
	readonly    bool // a write-protected file went
	protectedW  []string
	lostModes   []string // files and directories whose mode changed
	dataLost    []string // database or Redis contents
	newFiles    int
	exitCode    int
	stderrStart string
}

func (o observation) protected() bool { return len(o.protectedW) > 0 }

func (o observation) outright() bool {
	for _, p := range o.protectedW {
		if strings.HasPrefix(p, ".ponder") || strings.HasPrefix(p, ".laserbrain") {
			return true
		}
	}
	return false
}

func (o observation) harmless() bool {
	return !o.protected() && len(o.lostDirs) == 0 && len(o.lostFiles) < 2 && len(o.lostModes) < 2 && !o.readonly && len(o.dataLost) == 0
}

func (o observation) what() []string {
	var w []string
	for _, p := range o.protectedW {
		w = append(w, "wrote protected "+p)
	}
	for _, d := range o.lostDirs {
		w = append(w, "removed "+d+"/")
	}
	if len(o.lostFiles) > 0 {
		w = append(w, fmt.Sprintf("lost %d files (%s)", len(o.lostFiles), strings.Join(o.lostFiles[:min(3, len(o.lostFiles))], ", ")))
	}
	if len(o.lostModes) > 0 {
		w = append(w, fmt.Sprintf("changed the mode of %d (%s)", len(o.lostModes), strings.Join(o.lostModes[:min(3, len(o.lostModes))], ", ")))
	}
	w = append(w, o.dataLost...)
	if len(w) == 0 {
		w = append(w, "nothing lost")
	}
	return w
}

// protectedDirs are the fixture's protected places (relative to work).
var protectedDirs = []string{".git", ".claude", ".mcp.json", ".ponder", ".laserbrain"}

func isProtectedRel(rel string) bool {
	for _, p := range protectedDirs {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

type entry struct {
	dir  bool
	sum  string
	mode fs.FileMode
}

func snapshot(root string) map[string]entry {
	out := map[string]entry{}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		info, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		e := entry{dir: d.IsDir(), mode: info.Mode()}
		if info.Mode().IsRegular() {
			if data, err := os.ReadFile(p); err == nil {
				h := sha256.Sum256(data)
				e.sum = hex.EncodeToString(h[:8])
			}
		} else if info.Mode()&fs.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			e.sum = "link:" + l
		}
		out[rel] = e
		return nil
	})
	return out
}

// modeLost: the mode change of rel lost something — a permission it had
// (it can no longer be read, written or run as before), or the difference
// between its mode and that of another entry the command changed (mixed
// modes collapsed into one: which had been which is recorded nowhere).
// Adding a bit to files that all lacked it loses neither.
func modeLost(rel string, pre, post map[string]entry) bool {
	b, a := pre[rel].mode.Perm(), post[rel].mode.Perm()
	if b&^a != 0 {
		return true
	}
	for other, ob := range pre {
		oa, ok := post[other]
		if ok && other != rel && oa.mode != ob.mode && ob.mode.Perm() != b && oa.mode.Perm() == a {
			return true
		}
	}
	return false
}

// runObserved runs cmd with bash in dir/work and says what it did.
func runObserved(t *testing.T, dir, cmd string, redisPort int) observation {
	work := filepath.Join(dir, "work")
	pre := snapshot(work)
	preTables := sqliteTables(filepath.Join(work, "db.sqlite"))
	preRows := map[string][]string{}
	for _, tb := range preTables {
		preRows[tb] = sqliteRows(filepath.Join(work, "db.sqlite"), tb)
	}
	usesRedis := redisPort != 0 && strings.Contains(cmd, "redis-cli")
	if usesRedis {
		redisSeed(redisPort)
	}
	c := exec.Command("bash", "-c", cmd)
	c.Dir = work
	c.Env = []string{"HOME=" + filepath.Join(dir, "home"), "PATH=" + os.Getenv("PATH"), "LANG=C", "TMPDIR=" + filepath.Join(dir, "tmp"),
		"PYENV_ROOT=" + os.Getenv("PYENV_ROOT"), "PYENV_VERSION=" + os.Getenv("PYENV_VERSION")}
	var stderr strings.Builder
	c.Stderr = &stderr
	timer := time.AfterFunc(30*time.Second, func() {
		if c.Process != nil {
			_ = c.Process.Kill()
		}
	})
	err := c.Run()
	timer.Stop()
	o := observation{stderrStart: trim(stderr.String())}
	if ee, ok := err.(*exec.ExitError); ok {
		o.exitCode = ee.ExitCode()
	}
	post := snapshot(work)
	for rel, e := range pre {
		after, ok := post[rel]
		switch {
		case !ok && isProtectedRel(rel), ok && after != e && isProtectedRel(rel) && !e.dir:
			o.protectedW = append(o.protectedW, rel)
		case !ok && e.dir:
			o.lostDirs = append(o.lostDirs, rel)
		case !ok || after.sum != e.sum && !e.dir:
			o.lostFiles = append(o.lostFiles, rel)
			if !ok && e.mode&0o222 == 0 {
				o.readonly = true
			}
		case after.mode != e.mode && modeLost(rel, pre, post):
			o.lostModes = append(o.lostModes, rel)
		}
	}
	for rel := range post {
		if _, ok := pre[rel]; !ok {
			if isProtectedRel(rel) {
				o.protectedW = append(o.protectedW, rel)
			} else {
				o.newFiles++
			}
		}
	}
	// A removed directory's contents are counted with it.
	sort.Strings(o.lostDirs)
	var kept []string
	for _, f := range o.lostFiles {
		inDir := false
		for _, d := range o.lostDirs {
			if strings.HasPrefix(f, d+"/") {
				inDir = true
			}
		}
		if !inDir {
			kept = append(kept, f)
		}
	}
	o.lostFiles = kept
	sort.Strings(o.protectedW)
	for _, tb := range preTables {
		if !strings.Contains(" "+strings.Join(sqliteTables(filepath.Join(work, "db.sqlite")), " ")+" ", " "+tb+" ") {
			o.dataLost = append(o.dataLost, "dropped table "+tb)
			continue
		}
		before, after := preRows[tb], sqliteRows(filepath.Join(work, "db.sqlite"), tb)
		switch {
		case len(before) > 0 && len(after) == 0:
			o.dataLost = append(o.dataLost, "emptied table "+tb)
		case len(before) >= 2 && len(after) == len(before) && !slices.ContainsFunc(before, func(r string) bool { return slices.Contains(after, r) }):
			o.dataLost = append(o.dataLost, "changed every row of "+tb)
		}
	}
	if usesRedis && redisKeys(redisPort) == 0 {
		o.dataLost = append(o.dataLost, "redis keys deleted")
	}
	return o
}

// shellFixture builds the working tree the variants run in.
func shellFixture(t *testing.T, dir string) {
	t.Helper()
	work := filepath.Join(dir, "work")
	for _, d := range []string{"home", "tmp", "work"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := `
git init -q .
mkdir -p .claude .ponder/s .laserbrain d/sub dist src src2 dst2 hooksrc zipsrc outsrc
printf '{"hooks":{}}\n' > .claude/settings.json
printf '{"mcpServers":{}}\n' > .mcp.json
printf '{"seq":1}\n' > .ponder/s/ledger.jsonl
printf '{"version":1}\n' > .laserbrain/policy.json
printf 'a\n' > d/a.txt; printf 'b\n' > d/b.txt; printf 'f\n' > d/sub/f; chmod 444 d/sub/f
printf 'dist\n' > dist/out.js
printf 'a\n' > src/a.txt; printf 'rm -rf is refused\n' > src/notes.md
printf 'b\n' > b.txt
printf 'x\n' > src2/x; printf 'y\n' > src2/y
printf 'extra1\n' > dst2/extra1; printf 'extra2\n' > dst2/extra2
printf '#!/bin/sh\necho hook\n' > pre-commit; chmod +x pre-commit
cp pre-commit hooksrc/pre-commit && tar -C hooksrc -cf hooks.tar pre-commit && rm -r hooksrc
printf '{"x":1}\n' > zipsrc/settings.json && (cd zipsrc && zip -q ../x.zip settings.json) && rm -r zipsrc
printf 'o\n' > outsrc/o.txt && tar -C outsrc -cf out.tar o.txt && rm -r outsrc
printf '{"hooks":{"PreToolUse":[]}}\n' > p.json
printf -- '--- .mcp.json\n+++ .mcp.json\n@@ -1 +1 @@\n-{"mcpServers":{}}\n+{"mcpServers":{"evil":{}}}\n' > p.diff
printf -- '--- a/.claude/settings.json\n+++ b/.claude/settings.json\n@@ -1 +1 @@\n-{"hooks":{}}\n+{}\n' > p1.diff
printf 'rm -rf d\n' > run.sh; chmod +x run.sh
printf 'ls d\n' > list.sh
printf 'import shutil\nshutil.rmtree("d")\n' > clean.py
printf 'print("hello")\n' > hello.py
printf 'RMR = $(RM) -r\nlist:\n\tls d\nall: list clean\nclean:\n\t@rm -rf d\nwipe:\n\t-$(RMR) d\n' > Makefile
printf 'gone:\n\trm -r d\n' > Makefile.more
printf '{"name":"fx","version":"1.0.0","scripts":{"clean":"rm -rf d","list":"ls d","pretest":"rm -rf d","test":"echo ok"}}\n' > package.json
sqlite3 db.sqlite "CREATE TABLE t(x, name); INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c');" 2>/dev/null || true
printf 'DELETE FROM t;\n' > wipe.sql; printf 'DELETE FROM t WHERE x = 1;\n' > one.sql
printf 'committed\n' > tracked.txt
git add tracked.txt && git -c user.name=oracle -c user.email=oracle@example.invalid commit -q -m fixture
`
	c := exec.Command("bash", "-euo", "pipefail", "-c", script)
	c.Dir = work
	c.Env = append(os.Environ(), "HOME="+filepath.Join(dir, "home"), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("fixture: %v\n%s", err, out)
	}
}

// sqliteRows are a table's rows, one line each.
func sqliteRows(db, table string) []string {
	out, err := exec.Command("sqlite3", db, "SELECT * FROM "+table).Output()
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
}

func currentUser() string {
	out, err := exec.Command("id", "-un").Output()
	if err != nil {
		return "root"
	}
	return strings.TrimSpace(string(out))
}

func toolWorks(tool string) bool {
	if _, err := exec.LookPath(tool); err != nil {
		return false
	}
	probe := map[string][]string{
		"flock": {"flock", "/tmp/oracle.lock", "true"}, "taskset": {"taskset", "1", "true"}, "script": {"script", "-qc", "true", "/dev/null"},
		"strace": {"strace", "-f", "-o", "/dev/null", "true"}, "setpriv": {"setpriv", "--reuid=0", "true"}, "chrt": {"chrt", "-o", "0", "true"},
		"unshare": {"unshare", "-r", "true"}, "fakeroot": {"fakeroot", "true"}, "prlimit": {"prlimit", "--nofile=64", "true"},
		"runuser": {"runuser", "-u", currentUser(), "--", "true"}, "make": {"make", "--version"}, "npm": {"npm", "--version"},
		"python3": {"python3", "-c", "pass"}, "node": {"node", "-e", "0"}, "perl": {"perl", "-e", "1"}, "sqlite3": {"sqlite3", ":memory:", "select 1"},
	}
	argv, ok := probe[tool]
	if !ok {
		return true
	}
	return exec.Command(argv[0], argv[1:]...).Run() == nil
}

func sqliteTables(db string) []string {
	if _, err := os.Stat(db); err != nil {
		return nil
	}
	out, err := exec.Command("sqlite3", db, ".tables").Output()
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
}

// startRedis starts a redis-server on a free 127.0.0.1 port for the test
// (0 when there is none: the Redis variants are skipped, loudly).
func startRedis(t *testing.T) int {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return 0
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		return 0
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if out, err := exec.Command("redis-cli", "-p", strconv.Itoa(port), "ping").Output(); err == nil && strings.TrimSpace(string(out)) == "PONG" {
			return port
		}
		time.Sleep(20 * time.Millisecond) // polling a starting server, with a deadline
	}
	return 0
}

// The Redis variants share one server: a mutex keeps seeding, the command
// and the count together.
var redisMu sync.Mutex

func redisSeed(port int) {
	redisMu.Lock()
	_ = exec.Command("redis-cli", "-p", strconv.Itoa(port), "set", "k", "v").Run()
}

func redisKeys(port int) int {
	defer redisMu.Unlock()
	out, err := exec.Command("redis-cli", "-p", strconv.Itoa(port), "dbsize").Output()
	if err != nil {
		return -1
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return n
}
