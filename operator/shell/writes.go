package shell

import (
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Where a command writes, read in the same walk as everything else: the
// targets of output redirections, tee's files, sed -i and perl -i, the
// destination of cp, mv, install, ln, rsync and scp (mv's sources too:
// they go away), dd of=, truncate, touch, chmod and chown, rm and its
// kin, find -delete roots, curl -o/-O and wget -O/-P, tar -x -C, unzip
// -d, patch's files. A program the gate does not know, or code it runs,
// may write anywhere: that is a write with no path, not known.

func (a *analyzer) teeModel(c *cmdCall) bool {
	appendTo := slices.ContainsFunc(c.args, func(w arg) bool { return w.known && (w.val == "-a" || w.val == "--append") })
	ops := operands(c.args)
	for _, w := range ops {
		a.addWrite(w, "tee", false)
		a.wrote(w, c.io.in, appendTo)
	}
	if !appendTo {
		a.clobbers(c, ops)
	}
	return true
}

// copyModel: cp, mv, install, ln, scp write their destination (the last
// operand, or -t DIR); mv's sources go away.
func (a *analyzer) copyModel(c *cmdCall) bool {
	rest := c.args
	ops := operands(rest, "-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group", "-i", "-F", "-P", "-c", "-l", "-J", "-o")
	target, targetKnown := "", true
	for i := 0; i < len(rest); i++ {
		switch v := rest[i].val; {
		case !rest[i].known:
		case (v == "-t" || v == "--target-directory") && i+1 < len(rest):
			target, targetKnown = rest[i+1].val, rest[i+1].known
		case strings.HasPrefix(v, "--target-directory="):
			target = strings.TrimPrefix(v, "--target-directory=")
		case strings.HasPrefix(v, "-t") && len(v) > 2 && !strings.HasPrefix(v, "--"):
			target = v[2:]
		case c.name == "install" && (v == "-d" || v == "--directory"):
			for _, o := range ops {
				a.addWrite(o, c.name, false)
			}
			return true
		}
	}
	var sources []arg
	switch {
	case target != "":
		i := a.addWrite(arg{val: target, known: targetKnown}, c.name, false)
		if i >= 0 {
			a.writes[i].Tree = true
		}
		sources = ops
	case len(ops) > 1:
		if c.name != "ln" && c.name != "mv" || len(ops) == 2 {
			a.clobbers(c, ops[len(ops)-1:]) // find -exec cp /dev/null {}
		}
		i := a.addWrite(ops[len(ops)-1], c.name, false)
		a.wrote(ops[len(ops)-1], input{kind: unknownInput}, false)
		if i >= 0 && len(ops) > 2 {
			a.writes[i].Tree = true
		}
		sources = ops[:len(ops)-1]
	case len(ops) == 1 && c.name == "ln":
		// ln TARGET: a link named after it, here.
		a.addWrite(arg{val: path.Base(ops[0].val), known: ops[0].known}, c.name, false)
	}
	if c.name == "scp" {
		a.remoteCopy("scp", ops, commandText("scp", rest))
	}
	if c.name == "mv" {
		for _, s := range sources {
			a.addWrite(s, "mv", true)
		}
	}
	if target != "" && c.name != "mv" {
		// Each source lands under the target directory by its name.
		for _, s := range sources {
			a.addWrite(arg{val: filepath.Join(target, path.Base(s.val)), known: targetKnown && s.known}, c.name, false)
		}
	}
	return true
}

func (a *analyzer) ddModel(c *cmdCall) bool {
	for _, w := range c.args {
		if v, ok := strings.CutPrefix(w.val, "of="); ok {
			if !slices.ContainsFunc(c.args, func(w arg) bool { return strings.HasPrefix(w.val, "conv=") && strings.Contains(w.val, "notrunc") }) {
				a.clobbers(c, []arg{{val: v, known: w.known}})
			}
			a.addWrite(arg{val: v, known: w.known}, "dd", false)
		}
	}
	return true
}

// fileArgsModel: touch, unlink, shred and rmdir change the files they are
// given (the last three may remove them; truncate has a model of its own).
func (a *analyzer) fileArgsModel(c *cmdCall) bool {
	del := c.name == "unlink" || c.name == "rmdir"
	if c.name == "shred" && refusedLine(c.name, c.args) {
		return true
	}
	if c.name == "shred" {
		del = slices.ContainsFunc(c.args, func(w arg) bool {
			return w.known && (hasShortFlag(w.val, 'u') || strings.HasPrefix(w.val, "--remove"))
		})
	}
	for _, w := range operands(c.args, "-s", "--size", "-r", "--reference", "-d", "--date", "-t", "-n", "--iterations") {
		a.addWrite(w, c.name, del)
	}
	return true
}

// modeModel: chown and chgrp change their files; the first operand is the
// owner (chmod, whose mode may start with a dash, has chmodModel).
func (a *analyzer) modeModel(c *cmdCall) bool {
	if c.name == "chmod" {
		return a.chmodModel(c)
	}
	ops := operands(c.args, "--reference")
	if len(ops) > 0 && !slices.ContainsFunc(c.args, func(w arg) bool { return strings.HasPrefix(w.val, "--reference") }) {
		ops = ops[1:]
	}
	for _, w := range ops {
		a.addWrite(w, c.name, false)
	}
	return true
}

// curlModel: curl writes -o FILE (--output), a file named after the URL
// with -O (--remote-name, into --output-dir), and the files of
// --dump-header, --cookie-jar, --trace, --stderr, --etag-save; what it
// sends is curlNetwork's.
func (a *analyzer) curlModel(c *cmdCall) bool {
	opts, urls := readOpts(c.args, curlShortValue, curlLongValue)
	dir := ""
	remote := false
	var outs []arg
	for _, o := range opts {
		switch o.name {
		case "-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr", "--etag-save", "--hsts", "--alt-svc":
			outs = append(outs, o.val)
		case "--output-dir":
			dir = o.val.val
		case "-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name":
			remote = true
		}
	}
	for _, o := range outs {
		if o.val == "-" || o.val == "/dev/null" {
			continue
		}
		if dir != "" && !filepath.IsAbs(o.val) {
			o = arg{val: filepath.Join(dir, o.val), known: o.known}
		}
		a.addWrite(o, "curl", false)
		a.wrote(o, input{kind: unknownInput}, false)
	}
	if remote {
		for _, u := range urls {
			a.remoteName(u, dir, "curl")
		}
	}
	a.curlNetwork(c, opts, urls)
	return true
}

// remoteName records the file a download names after its URL.
func (a *analyzer) remoteName(u arg, dir, by string) {
	name := "index.html"
	if pu, err := url.Parse(u.val); err == nil && path.Base(pu.Path) != "/" && path.Base(pu.Path) != "." && pu.Path != "" {
		name = path.Base(pu.Path)
	}
	if dir != "" {
		name = filepath.Join(dir, name)
	}
	w := arg{val: name, known: u.known}
	a.addWrite(w, by, false)
	a.wrote(w, input{kind: unknownInput}, false)
}

// wgetModel: wget writes -O FILE (--output-document), else each URL's file
// name in -P DIR (--directory-prefix), a tree of them with -r or -m, and
// its log (-o, -a).
func (a *analyzer) wgetModel(c *cmdCall) bool {
	rest := c.args
	dir, out := "", arg{}
	recursive := false
	var urls []arg
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		v := w.val
		next := func() arg { return optionValue(rest, &i) }
		switch {
		case !w.known:
			urls = append(urls, w)
		case v == "-O" || v == "--output-document":
			out = next()
		case strings.HasPrefix(v, "--output-document="):
			out = arg{val: strings.TrimPrefix(v, "--output-document="), known: true}
		case strings.HasPrefix(v, "-O") && len(v) > 2:
			out = arg{val: v[2:], known: true}
		case v == "-P" || v == "--directory-prefix":
			dir = next().val
		case strings.HasPrefix(v, "--directory-prefix="):
			dir = strings.TrimPrefix(v, "--directory-prefix=")
		case v == "-o" || v == "--output-file" || v == "-a" || v == "--append-output":
			a.addWrite(next(), "wget", false)
		case v == "-r" || v == "--recursive" || v == "-m" || v == "--mirror":
			recursive = true
		case strings.HasPrefix(v, "-"):
		default:
			urls = append(urls, w)
		}
	}
	a.wgetNetwork(c, urls)
	switch {
	case out.val != "" && out.val != "-":
		a.addWrite(out, "wget", false)
		a.wrote(out, input{kind: unknownInput}, false)
	case recursive:
		d := dir
		if d == "" {
			d = "."
		}
		if i := a.addWrite(arg{val: d, known: true}, "wget", false); i >= 0 {
			a.writes[i].Tree = true
		}
	case out.val == "":
		for _, u := range urls {
			a.remoteName(u, dir, "wget")
		}
	}
	return true
}

// clusterValue is the value of the short option v[j] in a cluster of them
// (-xfFILE): the rest of the word, else, the option being last, the next
// word.
func clusterValue(v string, j int, next func() arg) arg {
	if j == len(v)-1 {
		return next()
	}
	return arg{val: v[j+1:], known: true}
}

// tarModel: extracting writes under -C DIR (or here); creating writes the
// archive. The programs tar runs (--to-command, --checkpoint-action=exec,
// -I/--use-compress-program, --info-script, --rsh-command) are scripts.
func (a *analyzer) tarModel(c *cmdCall) bool {
	rest := c.args
	extract, create := false, false
	dir := arg{val: ".", known: true}
	var archive arg
	run := func(s string) { a.subshell(func() { a.walk.script(s, c.d+1) }) }
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		v := w.val
		next := func() arg { return optionValue(rest, &i) }
		if !w.known {
			continue
		}
		if i == 0 && !strings.HasPrefix(v, "-") {
			v = "-" + v // old-style options: tar xzf a.tgz
		}
		switch {
		case v == "--extract" || v == "--get":
			extract = true
		case v == "--create" || v == "--append" || v == "--update":
			create = true
		case v == "-C" || v == "--directory":
			dir = next()
		case strings.HasPrefix(v, "--directory="):
			dir = arg{val: strings.TrimPrefix(v, "--directory="), known: true}
		case v == "-f" || v == "--file":
			archive = next()
		case strings.HasPrefix(v, "--file="):
			archive = arg{val: strings.TrimPrefix(v, "--file="), known: true}
		case strings.HasPrefix(v, "--to-command=") || strings.HasPrefix(v, "--use-compress-program=") || strings.HasPrefix(v, "--info-script=") ||
			strings.HasPrefix(v, "--new-volume-script=") || strings.HasPrefix(v, "--rsh-command="):
			_, s, _ := strings.Cut(v, "=")
			run(s)
		case v == "--to-command" || v == "-I" || v == "--use-compress-program" || v == "-F" || v == "--info-script" || v == "--new-volume-script" || v == "--rsh-command":
			run(next().val)
		case strings.HasPrefix(v, "--checkpoint-action="):
			if s, ok := strings.CutPrefix(strings.TrimPrefix(v, "--checkpoint-action="), "exec="); ok {
				run(s)
			}
		case strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--"):
			for j := 1; j < len(v); j++ {
				switch v[j] {
				case 'x':
					extract = true
				case 'c', 'r', 'u':
					create = true
				case 'f':
					archive, j = clusterValue(v, j, next), len(v)
				case 'C':
					dir, j = clusterValue(v, j, next), len(v)
				case 'I', 'F':
					run(clusterValue(v, j, next).val)
					j = len(v)
				}
			}
		}
	}
	if extract {
		if i := a.addWrite(dir, "tar", false); i >= 0 {
			a.writes[i].Tree = true
		}
	}
	if create && archive.val != "" && archive.val != "-" {
		a.addWrite(archive, "tar", false)
	}
	if create && slices.ContainsFunc(rest, func(w arg) bool { return w.known && w.val == "--remove-files" }) {
		// The files it archives go (like rsync --remove-source-files).
		a.mayWrite("tar")
		a.add(Finding{Label: "parsed: tar --remove-files (deletes the files it archives)", Where: Executed, Command: commandText("tar", rest), unknownPath: true})
	}
	return true
}

// unzipModel: unzip writes under -d DIR (or here).
func (a *analyzer) unzipModel(c *cmdCall) bool {
	dir := arg{val: ".", known: true}
	list := false
	for i, w := range c.args {
		if w.known && w.val == "-d" && i+1 < len(c.args) {
			dir = c.args[i+1]
		}
		if w.known && (w.val == "-l" || w.val == "-t" || w.val == "-v" || w.val == "-Z" || w.val == "-p") {
			list = true
		}
	}
	if !list {
		if i := a.addWrite(dir, "unzip", false); i >= 0 {
			a.writes[i].Tree = true
		}
	}
	return true
}

// zipModel: zip writes its archive (the first operand).
func (a *analyzer) zipModel(c *cmdCall) bool {
	ops := operands(c.args, "-b", "-t", "-tt", "-n", "-P", "-x", "-i")
	if len(ops) > 0 {
		a.addWrite(ops[0], "zip", false)
	}
	if slices.ContainsFunc(c.args, func(w arg) bool {
		return w.known && (w.val == "--move" || len(w.val) > 1 && w.val[0] == '-' && w.val[1] != '-' && hasShortFlag(w.val, 'm'))
	}) {
		// zip -m moves the files into the archive: they go.
		var paths []string
		for _, w := range ops[min(1, len(ops)):] {
			a.addWrite(w, "zip", true)
			if p, ok := a.resolve(w); ok {
				paths = append(paths, p)
			}
		}
		a.add(Finding{Label: "parsed: zip -m (deletes the files it archives)", Where: Executed, Command: commandText("zip", c.args), Paths: paths, unknownPath: len(paths) < len(ops)-1 || len(ops) < 2})
	}
	return true
}

// patchModel: patch writes the file it is given, or the files its patch
// names (read from -i FILE or its input, -pN components stripped, under
// -d DIR); a patch it cannot read writes somewhere under the directory.
func (a *analyzer) patchModel(c *cmdCall) bool {
	rest := c.args
	strip := -1
	dir := ""
	var patchFile arg
	var out arg
	dry := false
	var ops []arg
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		v := w.val
		next := func() arg { return optionValue(rest, &i) }
		switch {
		case !w.known:
			ops = append(ops, w)
		case v == "--dry-run":
			dry = true
		case v == "-i" || v == "--input":
			patchFile = next()
		case strings.HasPrefix(v, "--input="):
			patchFile = arg{val: strings.TrimPrefix(v, "--input="), known: true}
		case v == "-o" || v == "--output":
			out = next()
		case v == "-d" || v == "--directory":
			dir = next().val
		case v == "-p" || v == "--strip":
			strip = atoiOr(next().val, strip)
		case strings.HasPrefix(v, "-p") && len(v) > 2:
			strip = atoiOr(v[2:], strip)
		case strings.HasPrefix(v, "--strip="):
			strip = atoiOr(strings.TrimPrefix(v, "--strip="), strip)
		case v == "-B" || v == "--prefix" || v == "-D" || v == "-F" || v == "-r" || v == "-V" || v == "-Y" || v == "-z" || v == "-g":
			next()
		case strings.HasPrefix(v, "-"):
		default:
			ops = append(ops, w)
		}
	}
	if dry {
		return true
	}
	at := func(p string) arg {
		if dir != "" && !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return arg{val: p, known: true}
	}
	switch {
	case out.val != "" && out.val != "-":
		a.addWrite(out, "patch", false)
		return true
	case len(ops) > 0:
		o := ops[0]
		if o.known {
			o = at(o.val)
		}
		a.addWrite(o, "patch", false)
		return true
	}
	text := ""
	ok := false
	switch {
	case patchFile.val != "":
		text, ok, _ = a.scriptText(patchFile, stdio{})
	case c.io.in.kind == literalInput:
		text, ok = c.io.in.text, true
	case c.io.in.kind == fileInput:
		text, ok, _ = a.scriptText(arg{val: c.io.in.text, known: true}, stdio{})
	}
	if !ok {
		d := dir
		if d == "" {
			d = "."
		}
		if i := a.addWrite(arg{val: d, known: true}, "patch", false); i >= 0 {
			a.writes[i].Tree = true
		}
		return true
	}
	for _, f := range patchTargets(text, strip) {
		a.addWrite(at(f), "patch", false)
	}
	return true
}

// atoiOr is s as a number, or def when it is none.
func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}

// patchTargets are the files a unified or context diff changes: each
// +++ (and ---) name, -pN leading components stripped (without -p, patch
// uses the base name).
func patchTargets(text string, strip int) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		var name string
		switch {
		case strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "*** "):
			name = strings.TrimSpace(line[4:])
		default:
			continue
		}
		if i := strings.IndexAny(name, "\t"); i >= 0 {
			name = name[:i]
		}
		if name == "/dev/null" || name == "" {
			continue
		}
		switch {
		case strip < 0:
			name = path.Base(name)
		default:
			parts := strings.Split(name, "/")
			if strip >= len(parts) {
				continue
			}
			name = strings.Join(parts[strip:], "/")
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// rsyncModel reads rsync's options: its destination (the last operand) is
// written, --delete and its kin delete files there that the source lacks,
// --remove-source-files (and the old --remove-sent-files) deletes what it
// sent, and -n/--dry-run (alone or in a cluster) changes nothing. -e and
// --rsh run a command here.
func (a *analyzer) rsyncModel(c *cmdCall) bool {
	rest := c.args
	dry, del, removeSrc := false, false, false
	var ops []arg
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		v := w.val
		if !w.known {
			ops = append(ops, w)
			continue
		}
		if v == "--" {
			ops = append(ops, rest[i+1:]...)
			break
		}
		name, val, glued := strings.Cut(v, "=")
		switch {
		case name == "--dry-run":
			dry = true
		case name == "--del" || strings.HasPrefix(name, "--delete"):
			del = true
		case name == "--remove-source-files" || name == "--remove-sent-files":
			removeSrc = true
		case name == "--rsh" || name == "-e":
			if !glued && i+1 < len(rest) {
				i++
				val = rest[i].val
			}
			a.subshell(func() { a.walk.script(val, c.d+1) })
		case strings.HasPrefix(name, "--"):
			if !glued && rsyncValue(name) && i+1 < len(rest) {
				i++
			}
		case strings.HasPrefix(v, "-") && len(v) > 1:
			for j := 1; j < len(v); j++ {
				switch v[j] {
				case 'n':
					dry = true
				case 'e':
					s := v[j+1:]
					if s == "" && i+1 < len(rest) {
						i++
						s = rest[i].val
					}
					a.subshell(func() { a.walk.script(s, c.d+1) })
					j = len(v)
				case 'B', 'f', 'M', 'T':
					if j == len(v)-1 && i+1 < len(rest) {
						i++
					}
					j = len(v)
				}
			}
		default:
			ops = append(ops, w)
		}
	}
	if len(ops) < 2 {
		return true // lists a source, copies nothing
	}
	text := commandText("rsync", rest)
	where, note := Executed, ""
	if dry {
		where, note = DryRun, "a dry run: changes nothing"
	}
	dst := ops[len(ops)-1]
	if !dry {
		a.remoteCopy("rsync", ops, text)
		if i := a.addWrite(dst, "rsync", del); i >= 0 {
			a.writes[i].Tree = true
		}
	}
	if del {
		paths, known := []string{}, true
		if p, ok := a.resolve(dst); ok {
			paths = append(paths, p)
		} else {
			known = false
		}
		a.add(Finding{Label: "parsed: rsync --delete (deletes files at the destination that the source lacks)", Where: where, Note: note, Command: text, Paths: paths, unknownPath: !known})
	}
	if removeSrc {
		var paths []string
		known := true
		for _, s := range ops[:len(ops)-1] {
			if !dry {
				a.addWrite(s, "rsync", true)
			}
			if p, ok := a.resolve(s); ok {
				paths = append(paths, p)
			} else {
				known = false
			}
		}
		a.add(Finding{Label: "parsed: rsync --remove-source-files (deletes the files it sent)", Where: where, Note: note, Command: text, Paths: paths, unknownPath: !known})
	}
	return true
}

// rsyncValue: rsync's long options that take a value.
func rsyncValue(option string) bool {
	switch option {
	case "--exclude", "--include", "--exclude-from", "--include-from", "--filter",
		"--files-from", "--backup-dir", "--suffix", "--rsync-path", "--temp-dir", "--compare-dest",
		"--copy-dest", "--link-dest", "--max-size", "--min-size", "--max-delete", "--timeout",
		"--contimeout", "--port", "--log-file", "--log-file-format", "--out-format", "--password-file",
		"--chmod", "--chown", "--usermap", "--groupmap", "--bwlimit", "--partial-dir", "--modify-window",
		"--compress-level", "--compress-choice", "--checksum-choice", "--block-size", "--skip-compress",
		"--info", "--debug", "--iconv", "--sockopts", "--address", "--protocol", "--outbuf",
		"--remote-option", "--write-batch", "--read-batch", "--only-write-batch", "--stop-after", "--stop-at":
		return true
	}
	return false
}
