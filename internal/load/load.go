// Package load reads manifests from files, directories and stdin into typed
// objects. Every object keeps its file and line; every problem becomes a
// diagnostic and loading goes on with the rest.
package load

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/inputfile"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/outdir"
)

// DefaultMaxFileSize is the largest input read; larger ones are MC1006.
const DefaultMaxFileSize = inputfile.DefaultLimit

// StdinName is how standard input is named in diagnostics.
const StdinName = "<stdin>"

// Options configure loading.
type Options struct {
	// Stdin is read for the path "-".
	Stdin io.Reader
	// MaxFileSize overrides DefaultMaxFileSize when positive.
	MaxFileSize int64
	// Workers is the number of files decoded at once; 0 means GOMAXPROCS.
	Workers int
	// Exclude are globs (** allowed) of paths, relative to the directory
	// named as input, that walking directories leaves out; a pattern
	// without "/" matches a file or directory name anywhere. Paths named
	// on the command line are always read.
	Exclude []string
	// Render says how charts and kustomizations are rendered.
	Render RenderOptions
	// FS, when set, is read instead of the OS's file system: Paths are
	// its slash-separated names ("." its root), and diagnostics name
	// files so. It is read as a tree: directories are walked through
	// their entries, links in them are not followed, and its root bounds
	// what a kustomization may read. "-" is still Stdin.
	FS fs.FS
}

// Result is what was loaded.
type Result struct {
	// Objects in input order (file path, then position in the file).
	Objects []model.Object
	// Files read, in input order.
	Files []string
	// Skipped are files read but passed over (no Kubernetes objects in
	// them, or unrendered Helm templates) and directories holding an
	// earlier build, sorted by path.
	Skipped []diag.Skipped
}

// Paths loads files, directories (recursively: .yaml, .yml and .json files,
// skipping hidden entries) and "-" for stdin. The only error is ctx's;
// problems with the input are diagnostics.
func Paths(ctx context.Context, paths []string, opts Options) (Result, []diag.Diagnostic, error) {
	// Files are read and decoded as the walk finds them, so that the walk,
	// a system call or more per entry, overlaps the decoding instead of
	// coming before it; the results are put in input order after.
	type job struct {
		i  int
		in input
	}
	type done struct {
		i int
		r fileResult
	}
	jobs := make(chan job, 64)
	workers := cmp.Or(opts.Workers, runtime.GOMAXPROCS(0))
	decoded := make([][]done, workers)
	var first firstGatewayAPI
	// aside are the files read and set aside (firstGatewayAPI), which
	// each worker takes from once its jobs are done: files are set aside
	// only while a worker has jobs, so the last worker to finish takes
	// what is left.
	type readJob struct {
		job
		data []byte
	}
	var asideMu sync.Mutex
	var aside []readJob
	takeAside := func() (readJob, bool) {
		asideMu.Lock()
		defer asideMu.Unlock()
		if len(aside) == 0 {
			return readJob{}, false
		}
		j := aside[0]
		aside = aside[1:]
		return j, true
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			dec := newDecoder()
			dec.fsys = opts.FS
			for j := range jobs {
				data, r, ok := read(j.in, opts)
				if ok {
					wait, claimed := first.admit(data)
					if wait {
						asideMu.Lock()
						aside = append(aside, readJob{j, data})
						asideMu.Unlock()
						continue
					}
					r = decodeInput(dec, j.in, data, opts)
					if claimed {
						first.release()
					}
				}
				decoded[w] = append(decoded[w], done{j.i, r})
			}
			for ctx.Err() == nil {
				j, ok := takeAside()
				if !ok {
					break
				}
				decoded[w] = append(decoded[w], done{j.i, decodeInput(dec, j.in, j.data, opts)})
			}
		})
	}
	inputs, skippedDirs, diags := collect(paths, opts, func(i int, in input) {
		select {
		case jobs <- job{i, in}:
		case <-ctx.Done():
		}
	})
	close(jobs)
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	// When ctx ends the workers finish the file each is reading, which the
	// size limit bounds, so no goroutine outlives the call. Streams are
	// the exception: a read from standard input, a terminal or a pipe
	// named on the command line (a FIFO without a writer blocks in open)
	// can block for good, so with one among the inputs return at once and
	// leave that read behind; nothing but the results it would fill
	// depends on it.
	select {
	case <-finished:
	case <-ctx.Done():
		if slices.ContainsFunc(inputs, func(in input) bool { return in.stdin || in.stream }) {
			return Result{}, nil, fmt.Errorf("load: %w", context.Cause(ctx))
		}
		<-finished
	}
	if err := ctx.Err(); err != nil {
		return Result{}, nil, fmt.Errorf("load: %w", context.Cause(ctx))
	}
	results := make([]fileResult, len(inputs))
	for _, ds := range decoded {
		for _, d := range ds {
			results[d.i] = d.r
		}
	}
	// Input order is by name; names are unique, as each is read once.
	order := make([]int, len(inputs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(inputs[a].name, inputs[b].name) })
	inputs, results = permute(inputs, order), permute(results, order)

	res := Result{Skipped: skippedDirs}
	var objs [][]model.Object
	nested := map[string]bool{}
	for _, r := range results {
		for _, b := range r.bases {
			nested[b] = true
		}
	}
	for i, r := range results {
		if inputs[i].render == renderKustomize && nested[inputs[i].abs] {
			continue // a base of another kustomization: rendered inside it
		}
		diags = append(diags, r.diags...)
		if r.read {
			res.Files = append(res.Files, inputs[i].name)
		}
		if r.skipped != "" {
			res.Skipped = append(res.Skipped, diag.Skipped{File: inputs[i].name, Reason: r.skipped})
		}
		objs = append(objs, r.objs)
	}
	slices.SortStableFunc(res.Skipped, func(a, b diag.Skipped) int { return cmp.Compare(a.File, b.File) })
	var more []diag.Diagnostic
	res.Objects, more = finish(slices.Concat(objs...))
	return res, append(diags, more...), nil
}

// permute returns s in the order of its indexes in order.
func permute[T any](s []T, order []int) []T {
	out := make([]T, len(s))
	for i, j := range order {
		out[i] = s[j]
	}
	return out
}

// Bytes loads one file's content, as Paths would, for tests and fuzzing.
func Bytes(file string, data []byte) ([]model.Object, []diag.Diagnostic) {
	objs, diags, _ := newDecoder().decodeFile(file, data)
	objs, more := finish(objs)
	return objs, append(diags, more...)
}

// BytesWithoutAdmission is Bytes without istiod's admission rules and the
// Gateway API CRDs' rules (the MC1003 findings beyond the Go and proto
// types, and MC1008). Tests of later passes
// load through it, so that a fixture written for what they test is not
// left out by a rule they do not test; the rules are load's to test.
func BytesWithoutAdmission(file string, data []byte) ([]model.Object, []diag.Diagnostic) {
	d := newDecoder()
	d.noAdmission = true
	objs, diags, _ := d.decodeFile(file, data)
	objs, more := finish(objs)
	return objs, append(diags, more...)
}

type input struct {
	name  string // as the user named it, or StdinName
	path  string // what to open; "" for stdin
	stdin bool
	// stream marks a path named on the command line that is not a
	// regular file: a pipe, read as a stream.
	stream bool
	// template marks a file in a Helm chart's templates directory.
	template bool
	// listed marks a file its directory listed as a regular file
	// (inputfile.Options.Listed).
	listed bool
	// render marks a chart or kustomization directory to render; root
	// bounds what a kustomization may read and abs is its absolute path.
	render    renderKind
	root, abs string
}

type fileResult struct {
	objs  []model.Object
	diags []diag.Diagnostic
	read  bool
	// skipped says why a file read was passed over, if it was.
	skipped string
	// bases are the kustomizations a kustomization's build read.
	bases []string
}

// collect expands paths into the files to read, in the order the walk
// finds them, and hands each to found as it is found, with its index. A
// file reached twice (named twice, or through a symlink) is read once.
func collect(paths []string, opts Options, found func(int, input)) ([]input, []diag.Skipped, []diag.Diagnostic) {
	c := collector{seen: map[string]bool{}, walked: map[dirKey]bool{}, exclude: opts.Exclude, noKustomize: opts.Render.NoKustomize, fsys: opts.FS, found: found}
	for _, p := range paths {
		if p == "-" {
			if !c.seen[StdinName] {
				c.seen[StdinName] = true
				c.addInput(input{name: StdinName, stdin: true})
			}
			continue
		}
		if c.fsys != nil {
			c.collectTree(p)
			continue
		}
		c.root = renderRoot(p)
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			c.unreadable(p, "cannot read %s: %s", p, inputfile.Reason(err))
		case fi.IsDir() && outdir.IsEarlierBuild(p):
			c.unreadable(p, "%s is the output of meshc build, not manifests", p)
		case fi.IsDir():
			c.walk(p, "", "", nil)
		case !fi.Mode().IsRegular():
			// A pipe (/dev/fd/N from <(...), a FIFO) is read as a stream
			// under the name given: its symlinks lead nowhere to open.
			c.addStream(p)
		default:
			c.add(p, false)
		}
	}
	return c.inputs, c.skipped, c.diags
}

type collector struct {
	inputs []input
	// found hears of each input as it is added (collect's).
	found   func(int, input)
	diags   []diag.Diagnostic
	skipped []diag.Skipped  // directories passed over
	seen    map[string]bool // real paths already added
	// walked are the directories walked already: one reached through
	// several links is walked once, not once per path.
	walked  map[dirKey]bool
	exclude []string
	// noKustomize walks kustomizations as plain directories.
	noKustomize bool
	// root is what a kustomization found below the path being collected
	// may read (renderRoot).
	root string
	// fsys is Options.FS.
	fsys fs.FS
}

// dirKey identifies a directory however it is reached: its device and
// inode, or else its resolved path.
type dirKey struct {
	dev, ino uint64
	real     string
}

// passedOver reports whether the walked entry at rel (slash-separated,
// relative to the directory named as input) is left out: hidden (.git,
// .github and editor files are not manifests), or excluded.
func (c *collector) passedOver(rel string) bool {
	if strings.HasPrefix(path.Base(rel), ".") {
		return true
	}
	for _, pattern := range c.exclude {
		if ok, _ := doublestar.Match(pattern, rel); ok {
			return true
		}
		if !strings.Contains(pattern, "/") {
			if ok, _ := doublestar.Match(pattern, path.Base(rel)); ok {
				return true
			}
		}
	}
	return false
}

func (c *collector) unreadable(file, format string, args ...any) {
	c.diags = append(c.diags, diag.UnreadableInput.At(diag.ObjectRef{File: file}, format, args...))
}

// addInput adds in and hands it to found.
func (c *collector) addInput(in input) {
	c.inputs = append(c.inputs, in)
	c.found(len(c.inputs)-1, in)
}

// addStream adds a named path that is not a regular file, once per name.
func (c *collector) addStream(p string) {
	if !c.seen[p] {
		c.seen[p] = true
		c.addInput(input{name: p, path: p, stream: true})
	}
}

func (c *collector) add(p string, template bool) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		c.unreadable(p, "cannot read %s: %s", p, inputfile.Reason(err))
		return
	}
	if abs, err := filepath.Abs(real); err == nil {
		real = abs
	}
	c.addReal(p, real, template, false)
}

// addReal adds the file p whose real path is real, once per real path;
// listed says its directory listed it as a regular file.
func (c *collector) addReal(p, real string, template, listed bool) {
	if c.seen[real] {
		return
	}
	c.seen[real] = true
	c.addInput(input{name: filepath.Clean(p), path: p, template: template, listed: listed})
}

// walk adds the manifests below dir, rel below the directory named as
// input. real is dir's real path, "" when not known yet. ancestors holds
// the real paths of the directories above, to stop at a symlink that
// leads back up.
func (c *collector) walk(dir, real, rel string, ancestors []string) {
	var err error
	if real == "" {
		real, err = filepath.EvalSymlinks(dir)
		if err == nil {
			real, err = filepath.Abs(real)
		}
		if err != nil {
			c.unreadable(dir, "cannot read %s: %s", dir, inputfile.Reason(err))
			return
		}
	}
	if slices.Contains(ancestors, real) {
		c.unreadable(dir, "symlink loop: %s leads back to %s", dir, real)
		return
	}
	info, err := os.Stat(dir)
	if err != nil {
		c.unreadable(dir, "cannot read %s: %s", dir, inputfile.Reason(err))
		return
	}
	key := dirKeyOf(info, real)
	if c.walked[key] {
		return // its files are added already, under the first path
	}
	c.walked[key] = true
	if c.addRendered(dir, real) {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		c.unreadable(dir, "cannot read directory %s: %s", dir, inputfile.Reason(err))
		return
	}
	ancestors = append(ancestors, real)
	// The templates of a Helm chart are not manifests until rendered.
	_, err = os.Stat(filepath.Join(filepath.Dir(dir), "Chart.yaml"))
	template := filepath.Base(dir) == "templates" && err == nil
	for _, e := range entries {
		name := e.Name()
		full := filepath.Join(dir, name)
		entryRel := path.Join(rel, name)
		if c.passedOver(entryRel) {
			continue
		}
		// The listing's type of an entry that is no link is the entry's:
		// asking again would cost a system call per file.
		link := e.Type()&fs.ModeSymlink != 0
		isDir := e.IsDir()
		var err error
		if link {
			var fi fs.FileInfo
			if fi, err = os.Stat(full); err == nil {
				isDir = fi.IsDir()
			}
		}
		switch {
		case err != nil:
			// A dangling link, or one too deep to follow: saying
			// nothing would pass it off as read.
			c.unreadable(full, "cannot read %s: %s", full, inputfile.Reason(err))
		case isDir && outdir.IsEarlierBuild(full):
			// A build's own output inside the inputs is not manifests.
			c.skipped = append(c.skipped, diag.Skipped{File: full, Reason: diag.EarlierBuild})
		case isDir && link && leadsUp(full, real):
			c.unreadable(full, "symlink loop: %s leads back to a directory above it", full)
		case isDir && link && c.intoPseudoFS(full, real):
		case isDir && link:
			c.walk(full, "", entryRel, ancestors)
		case isDir:
			// Like a file, a directory that is no link is real below
			// the real directory.
			c.walk(full, filepath.Join(real, name), entryRel, ancestors)
		case !isManifestName(name):
		case !link:
			// An entry that is no link is real below the real directory:
			// resolving it again would cost a system call per directory
			// of its path.
			c.addReal(full, filepath.Join(real, name), template, e.Type().IsRegular())
		default:
			// What is not a regular file is refused by the reader.
			c.add(full, template)
		}
	}
}

// intoPseudoFS reports, with a diagnostic, a link in the directory from to
// a directory on a pseudo-filesystem (/proc, /sys, ...), which the walk
// does not follow: nothing there is a manifest, and /proc/self alone makes
// the walk endless. Inside a pseudo-filesystem named as input, its links
// are followed as asked.
func (c *collector) intoPseudoFS(link, from string) bool {
	target, err := filepath.EvalSymlinks(link)
	if err != nil {
		return false
	}
	if abs, err := filepath.Abs(target); err == nil {
		target = abs
	}
	name := pseudoFS(target)
	if name == "" || pseudoFS(from) != "" {
		return false
	}
	c.diags = append(c.diags, diag.LinkNotFollowed.At(diag.ObjectRef{File: link},
		"%s links to %s, on the pseudo-filesystem %s; meshc does not follow links out of the inputs into one", link, target, name))
	return true
}

// leadsUp reports whether the symlink link points at dir or a directory
// above it, which would make the walk endless.
func leadsUp(link, dir string) bool {
	target, err := filepath.EvalSymlinks(link)
	if err == nil {
		target, err = filepath.Abs(target)
	}
	if err != nil {
		return false
	}
	return dir == target || strings.HasPrefix(dir, strings.TrimSuffix(target, string(filepath.Separator))+string(filepath.Separator))
}

func isManifestName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// read reads input in, the data to decode; ok is false when it cannot, r
// saying why. A chart or kustomization is read as decodeInput renders
// it: data is nil.
func read(in input, opts Options) (data []byte, r fileResult, ok bool) {
	if in.render != renderNone {
		return nil, r, true
	}
	limit := cmp.Or(opts.MaxFileSize, DefaultMaxFileSize)
	var err error
	switch {
	case in.stdin && opts.Stdin == nil:
		return nil, unreadableResult(in.name, "standard input is not available"), false
	case in.stdin:
		data, err = inputfile.ReadStream(opts.Stdin, in.name, limit)
	case opts.FS != nil:
		data, err = inputfile.ReadFS(opts.FS, in.path, inputfile.Options{Limit: limit, Name: in.name})
	default:
		data, err = inputfile.Read(in.path, inputfile.Options{Limit: limit, Stream: in.stream, Listed: in.listed, Name: in.name})
	}
	if err != nil {
		return nil, unreadableResult(in.name, "%s", err), false
	}
	if msg := notText(data); msg != "" {
		return nil, unreadableResult(in.name, "%s %s", in.name, msg), false
	}
	return data, r, true
}

// decodeInput decodes data, read from in (nothing for a chart or
// kustomization, which it renders).
func decodeInput(dec *decoder, in input, data []byte, opts Options) fileResult {
	if in.render != renderNone {
		return renderInput(dec, in, opts)
	}
	limit := cmp.Or(opts.MaxFileSize, DefaultMaxFileSize)
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if in.stdin || in.stream {
		if objs, diags, ok := dec.decodeAnnotated(in.name, data, limit); ok {
			return fileResult{objs: objs, diags: diags, read: true}
		}
	}
	if in.template && bytes.Contains(data, []byte("{{")) {
		return fileResult{read: true, skipped: diag.HelmTemplate}
	}
	objs, diags, notObjects := dec.decodeFile(in.name, data)
	switch {
	case notObjects:
		return fileResult{read: true, skipped: diag.NotKubernetes}
	case len(objs) == 0 && bytes.Contains(data, []byte("{{")) && slices.ContainsFunc(diags, diag.InvalidYAML.Is):
		// Template actions that break the YAML: a chart's template
		// outside its templates directory.
		return fileResult{read: true, skipped: diag.HelmTemplate}
	}
	return fileResult{objs: objs, diags: diags, read: true}
}

// firstGatewayAPI keeps the other workers off Gateway API files while one
// decodes the first: the first object of a Gateway API resource prepares
// its CRD's schema and CEL rules (internal/crdschema), which takes a run
// several milliseconds, and a worker reaching another such object meanwhile
// would wait for it. Set aside, such files are decoded after the others,
// by whichever worker is free. Which worker decodes a file changes no
// result.
type firstGatewayAPI struct {
	// state is 0 before a Gateway API file, 1 while the first is
	// decoded, 2 after.
	state atomic.Int32
}

// gatewayAPIGroup is in every Gateway API object's apiVersion.
var gatewayAPIGroup = []byte("gateway.networking.")

// admit says whether a file with content data is to wait (wait), or is
// the first Gateway API file, which the caller then decodes and releases
// (claimed).
func (f *firstGatewayAPI) admit(data []byte) (wait, claimed bool) {
	if f.state.Load() == 2 || !bytes.Contains(data, gatewayAPIGroup) {
		return false, false
	}
	if f.state.CompareAndSwap(0, 1) {
		return false, true
	}
	return f.state.Load() == 1, false
}

// release says the first Gateway API file is decoded.
func (f *firstGatewayAPI) release() { f.state.Store(2) }

func unreadableResult(file, format string, args ...any) fileResult {
	return fileResult{diags: []diag.Diagnostic{diag.UnreadableInput.At(diag.ObjectRef{File: file}, format, args...)}}
}

// notText says why data is not a text manifest, or "".
func notText(data []byte) string {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return fmt.Sprintf("is binary (a NUL byte at offset %d), not a text manifest", i)
	}
	if !utf8.Valid(data) {
		return "is not UTF-8 text"
	}
	return ""
}

// finish numbers objects in input order, drops duplicates (MC1004) and
// reports kinds meshc does not model (MC1005), one diagnostic per kind.
func finish(objs []model.Object) ([]model.Object, []diag.Diagnostic) {
	var diags []diag.Diagnostic
	// first[i] is the position of the first object with the identity of
	// the object at i, when that is another: identities in order put an
	// object's copies right after it.
	order, ids := model.OrderByID(objs)
	first := make([]int, len(objs))
	for k, i := range order {
		first[i] = i
		if k > 0 && ids[i].Name != "" && ids[i] == ids[order[k-1]] {
			first[i] = first[order[k-1]]
		}
	}
	copies := map[model.ID]int{}
	kept := objs[:0:0]
	type unknownKind struct{ group, kind string }
	var unknownOrder []unknownKind
	unknown := map[unknownKind][]*model.ObjectMeta{}
	for i, o := range objs {
		m := o.Meta()
		// Nameless objects (an IstioOperator) have no identity to clash.
		if first[i] != i {
			id := ids[i]
			prev := objs[first[i]]
			copies[id]++
			d := diag.DefinedTwice.At(m.Ref(), id, prev.Meta().Ref().Location()).Keyed(diag.Part("copy", strconv.Itoa(copies[id]+1)))
			d.Related = []diag.Related{{ObjectRef: prev.Meta().Ref(), Note: "first definition, kept"}}
			diags = append(diags, d)
			continue
		}
		m.Seq = len(kept)
		kept = append(kept, o)
		if _, ok := o.(*model.Unknown); ok {
			if known, ok := model.LookupKind(m.Group(), m.Kind); ok && known.Quiet() {
				continue // a Secret or a ServiceAccount: nothing the mesh reads
			}
			k := unknownKind{m.Group(), m.Kind}
			if unknown[k] == nil {
				unknownOrder = append(unknownOrder, k)
			}
			unknown[k] = append(unknown[k], m)
		}
	}
	for _, k := range unknownOrder {
		metas := unknown[k]
		d := diag.KindNotModelled.At(metas[0].Ref(), metas[0].APIVersion, k.kind, countObjects(len(metas)))
		if known, ok := model.LookupKind(k.group, k.kind); ok {
			d = diag.KindNotBuilt.At(metas[0].Ref(), metas[0].APIVersion, k.kind, countObjects(len(metas)), known.Meaning())
		}
		for _, m := range metas[1:min(len(metas), 11)] {
			d.Related = append(d.Related, diag.Related{ObjectRef: m.Ref(), Note: "also ignored"})
		}
		if len(metas) > 11 {
			d.Related = append(d.Related, diag.Related{Note: fmt.Sprintf("and %d more", len(metas)-11)})
		}
		diags = append(diags, d)
	}
	return kept, diags
}

func countObjects(n int) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}
