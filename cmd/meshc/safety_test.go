package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/meshc/meshc/internal/hugepages/atstart"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/outdir/outdirtest"
)

// The tests below are the reproductions of the OUT-safety issue, one per
// item: each must end in a clear error or the documented behaviour, and
// nothing outside OUT may ever be removed.

const bookinfoDir = "../../examples/bookinfo"

// TestMain lets a test run the test binary as meshc itself, for what needs
// a process of its own: signals, resource limits. The tests themselves
// collect as the runtime does by default, main's policy aside.
func TestMain(m *testing.M) {
	if os.Getenv("MESHC_TEST_MAIN") == "1" {
		main()
	}
	atstart.Resume()
	os.Exit(m.Run())
}

// meshcCmd is meshc as a child process.
func meshcCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "MESHC_TEST_MAIN=1")
	return cmd
}

// snapshot is every file below dir with its content, to tell whether a
// directory changed.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			files[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Errorf("%s: %d entries before, %d after", what, len(before), len(after))
		return
	}
	for k, v := range before {
		if w, ok := after[k]; !ok || w != v {
			t.Errorf("%s: %s changed", what, k)
		}
	}
}

// built makes a first build of bookinfo into a new OUT and returns it.
func built(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := meshc(t, "", "build", bookinfoDir, "-o", out, "-q"); code != 0 {
		t.Fatalf("first build: exit %d\n%s", code, errOut)
	}
	return out
}

// Item 1: ., .., an empty path, the home directory and / are refused before
// any analysis (the input does not even exist), and nothing is touched.
func TestBuildRefusesDangerousOUT(t *testing.T) {
	home := writeFiles(t, map[string]string{".bashrc": "x"})
	t.Setenv("HOME", home)
	wd, _ := os.Getwd()
	before := snapshot(t, wd)
	for _, tc := range []struct{ out, want string }{
		{".", "working directory"},
		{"..", "working directory or one of its parents"},
		{"", "the path is empty"},
		{home, "it is the home directory or one of its parents\n"},
		{filepath.Dir(home), "it is the home directory or one of its parents\n"},
		{"/", "root directory"},
	} {
		code, _, errOut := meshc(t, "", "build", "/nonexistent/manifests", "-o", tc.out)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "MC1006") {
			t.Errorf("-o %q: exit %d, stderr %q; want 2 and %q before any loading", tc.out, code, errOut, tc.want)
		}
	}
	// Not even --force moves /, the working or home directory or their
	// parents.
	for _, out := range []string{".", "..", "/", home, filepath.Dir(home)} {
		if code, _, errOut := meshc(t, "", "build", "/nonexistent/manifests", "-o", out, "--force"); code != exitUsage || !strings.Contains(errOut, "refusing") {
			t.Errorf("-o %s --force: exit %d, stderr %q; want a refusal", out, code, errOut)
		}
	}
	sameTree(t, "working directory", before, snapshot(t, wd))
	if _, err := os.Stat(filepath.Join(home, ".bashrc")); err != nil {
		t.Error("home directory touched")
	}
}

// Item 2: the input itself as OUT is refused, with or without --force.
func TestBuildRefusesInputAsOUT(t *testing.T) {
	m := writeFiles(t, map[string]string{"ns.yaml": goodNS})
	before := snapshot(t, m)
	for _, args := range [][]string{{"-o", m}, {"-o", m + "/"}, {"-o", m, "--force"}, {"-o", filepath.Dir(m)}} {
		code, _, errOut := meshc(t, "", append([]string{"build", m}, args...)...)
		if code != exitUsage || !strings.Contains(errOut, "input") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	sameTree(t, "input", before, snapshot(t, m))
}

// Item 3: a build that fails — unreadable input, findings at --fail-on, a
// write error — leaves the previous OUT as it was; --fail-on none builds.
func TestBuildFailureKeepsOUT(t *testing.T) {
	out := built(t)
	before := snapshot(t, out)
	broken := writeFiles(t, map[string]string{"broken.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: [x\n"})
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing input", []string{"/nonexistent"}, exitUsage, "nothing written: some input could not be read (MC1006)"},
		{"missing input beside a good one", []string{bookinfoDir, "/nonexistent", "--fail-on", "none"}, exitUsage, "MC1006"},
		{"error finding", []string{bookinfoDir, broken}, exitFindings, "nothing written: findings reach --fail-on error (--fail-on none builds anyway); " + out + " left as it was"},
	} {
		code, _, errOut := meshc(t, "", append(append([]string{"build"}, tc.args...), "-o", out)...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant %d and %q", tc.name, code, errOut, tc.code, tc.want)
		}
		sameTree(t, tc.name, before, snapshot(t, out))
	}
	// A write that fails (the file size limit stands in for a full disk).
	cmd := exec.Command("sh", "-c", `ulimit -f 64 && exec "$0" "$@"`, os.Args[0], "build", bookinfoDir, "-o", out, "--format", "xds")
	cmd.Env = append(os.Environ(), "MESHC_TEST_MAIN=1")
	errOut, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != exitUsage || !strings.Contains(string(errOut), "file too large") {
		t.Errorf("write error: exit %d (%v), output:\n%s", code, err, errOut)
	}
	sameTree(t, "write error", before, snapshot(t, out))
	assertNothingBeside(t, out)
	// --fail-on none writes despite the error.
	if code, _, errOut := meshc(t, "", "build", bookinfoDir, broken, "-o", out, "--fail-on", "none", "-q"); code != 0 || !strings.Contains(errOut, "MC1001") {
		t.Errorf("--fail-on none: exit %d\n%s", code, errOut)
	}
}

// assertNothingBeside: only OUT is in OUT's parent, its lock gone too.
func assertNothingBeside(t *testing.T, out string) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Dir(out))
	for _, e := range entries {
		if n := e.Name(); n != filepath.Base(out) {
			t.Errorf("left beside OUT: %s", n)
		}
	}
}

// Item 4: a directory meshc did not write is refused (and kept) unless
// --force, a file even with it; a symlinked OUT is written through, the
// link kept.
func TestBuildOUTKinds(t *testing.T) {
	dir := writeFiles(t, map[string]string{"file.txt": "mine", "envoy/README": "mine", "envoy/sub/cert.pem": "secret"})
	before := snapshot(t, dir)
	for _, tc := range []struct {
		out   string
		force bool
		want  string
	}{
		{"file.txt", false, "it is a file, and OUT must be a directory or absent\n"},
		{"file.txt", true, "it is a file, and OUT must be a directory or absent\n"},
		{"envoy", false, "it is a directory meshc did not write, holding README, sub/; --force replaces it whole"},
	} {
		args := []string{"build", bookinfoDir, "-o", filepath.Join(dir, tc.out)}
		if tc.force {
			args = append(args, "--force")
		}
		code, _, errOut := meshc(t, "", args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s, force %v: exit %d, stderr %q", tc.out, tc.force, code, errOut)
		}
	}
	sameTree(t, "refused targets", before, snapshot(t, dir))
	// An earlier build the user added a file to is refused too.
	out := built(t)
	if err := os.WriteFile(filepath.Join(out, "NOTES"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := meshc(t, "", "build", bookinfoDir, "-o", out); code != exitUsage || !strings.Contains(errOut, "holds files meshc did not write: NOTES") {
		t.Errorf("earlier build with NOTES: exit %d, stderr %q", code, errOut)
	}
	// --force replaces a foreign directory whole.
	if code, _, errOut := meshc(t, "", "build", bookinfoDir, "-o", filepath.Join(dir, "envoy"), "--force", "-q"); code != 0 {
		t.Errorf("envoy --force: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "envoy", "index.json")); err != nil {
		t.Errorf("envoy --force: %v", err)
	}
	// A symlink: the build goes to its target, the link stays a link.
	target := filepath.Join(t.TempDir(), "real")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if code, _, errOut := meshc(t, "", "build", bookinfoDir, "-o", link, "-q"); code != 0 {
			t.Fatalf("symlink: exit %d\n%s", code, errOut)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if _, err := os.Stat(filepath.Join(target, "index.json")); err != nil {
		t.Errorf("target not written: %v", err)
	}
}

// Item 5: OUT inside the input, built twice: the second build does not read
// the first one's output, and lint passes over it too.
func TestBuildTwiceIntoInput(t *testing.T) {
	m := t.TempDir()
	if err := os.CopyFS(m, os.DirFS(bookinfoDir)); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if code, _, errOut := meshc(t, "", "build", m, "-o", filepath.Join(m, "out"), "-q"); code != 0 || errOut != "" {
			t.Fatalf("build %d: exit %d\n%s", i+1, code, errOut)
		}
	}
	if code, out, _ := meshc(t, "", "lint", m); code != 0 || !strings.Contains(out, "in 21 objects from 6 files") {
		t.Errorf("lint: exit %d\n%s", code, out)
	}
	// Named directly, an output is not taken for manifests.
	if code, out, _ := meshc(t, "", "lint", filepath.Join(m, "out")); code != exitUsage || !strings.Contains(out, "is the output of meshc build, not manifests") {
		t.Errorf("lint OUT: exit %d\n%s", code, out)
	}
}

const sameNameWorkloads = `apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {selector: {app: web}, ports: [{port: 80, name: http}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: i}]}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: shop}
spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: i}]}}}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, labels: {app: web}}
spec: {containers: [{name: c, image: i}]}
`

type indexFile struct {
	Proxies []struct {
		Name, Kind, Path, SHA256 string
		Shared                   []string
	}
}

func readIndex(t *testing.T, out string) indexFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx indexFile
	if err := json.Unmarshal(data, &idx); err != nil {
		t.Fatal(err)
	}
	return idx
}

// Item 6: a Deployment, a StatefulSet and a Pod named shop/web are three
// files; index.json lists each once with its own file's hash; two builds
// give the same bytes.
func TestBuildSameNameWorkloads(t *testing.T) {
	in := writeFiles(t, map[string]string{"web.yaml": sameNameWorkloads})
	var first map[string]string
	for i := range 2 {
		out := filepath.Join(t.TempDir(), "out")
		if code, _, errOut := meshc(t, "", "build", in, "-o", out, "-q"); code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		idx := readIndex(t, out)
		seen := map[string]bool{}
		for _, p := range idx.Proxies {
			data, err := os.ReadFile(filepath.Join(out, p.Path))
			if err != nil {
				t.Fatal(err)
			}
			// The hash covers the proxy's own file, path and content, and
			// the names of its shared files, which are content hashes.
			h := sha256.New()
			h.Write([]byte(p.Path))
			h.Write(data)
			for _, s := range p.Shared {
				h.Write([]byte(s))
			}
			if hex.EncodeToString(h.Sum(nil)) != p.SHA256 || seen[p.Path] || len(p.Shared) != 2 {
				t.Errorf("%s %s: path %s listed twice or hash does not match", p.Kind, p.Name, p.Path)
			}
			seen[p.Path] = true
		}
		if want := []string{"shop/web_deployment.json", "shop/web_pod.json", "shop/web_statefulset.json"}; len(seen) != 3 || !seen[want[0]] || !seen[want[1]] || !seen[want[2]] {
			t.Errorf("paths %v, want %v", seen, want)
		}
		snap := snapshot(t, out)
		if i == 1 {
			sameTree(t, "second build", first, snap)
		}
		first = snap
	}
}

// Item 7: a valid 253-character Pod name builds, under a shortened name.
func TestBuildLongPodName(t *testing.T) {
	name := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61)
	in := writeFiles(t, map[string]string{"pod.yaml": fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: shop, labels: {app: web}}
spec: {containers: [{name: c, image: i}]}
`, name)})
	if len(name) != 253 {
		t.Fatalf("name of %d characters", len(name))
	}
	for _, format := range []string{"bootstrap", "xds"} {
		out := filepath.Join(t.TempDir(), "out")
		if code, _, errOut := meshc(t, "", "build", in, "-o", out, "--format", format, "-q"); code != 0 {
			t.Fatalf("%s: exit %d\n%s", format, code, errOut)
		}
		idx := readIndex(t, out)
		if len(idx.Proxies) != 1 || idx.Proxies[0].Name != name || len(filepath.Base(idx.Proxies[0].Path)) > 255 {
			t.Errorf("%s: index %+v", format, idx.Proxies)
		}
	}
}

// genMesh writes a mesh large enough that building it takes a while.
func genMesh(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, _, err := meshgen.Write(dir, meshgen.Options{Namespaces: 20, ServicesPerNS: 10, SidecarEveryNth: -1}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// waitTemp waits until a build's temporary directory beside out holds a
// proxy's file, and returns the directory.
func waitTemp(t *testing.T, out string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".meshc-tmp-*"))
		for _, tmp := range tmps {
			if files, _ := filepath.Glob(filepath.Join(tmp, "ns-*", "*.json")); len(files) > 0 {
				return tmp
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the build never started writing")
	return ""
}

// Item 8: SIGINT, SIGTERM and SIGHUP while writing end the build with 130,
// 143 and 129,
// the temporary directory removed and OUT as it was; a temporary left by
// kill -9 is removed by the next build; SIGINT while reading a pipe ends
// at once.
func TestBuildSignals(t *testing.T) {
	mesh := genMesh(t)
	out := built(t)
	before := snapshot(t, out)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}} {
		cmd := meshcCmd("build", mesh, "-o", out, "-q", "--fail-on", "none")
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitTemp(t, out)
		if err := cmd.Process.Signal(tc.sig); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != tc.code || !strings.Contains(errOut.String(), "left as it was") {
			t.Errorf("%v: exit %d, stderr %q; want %d", tc.sig, code, errOut.String(), tc.code)
		}
		sameTree(t, tc.sig.String(), before, snapshot(t, out))
		assertNothingBeside(t, out)
	}

	// kill -9 leaves the temporary directory; the next build removes it.
	cmd := meshcCmd("build", mesh, "-o", out, "-q", "--fail-on", "none")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tmp := waitTemp(t, out)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("kill -9 left nothing to clean: %v", err)
	}
	if code, _, errOut := meshc(t, "", "build", bookinfoDir, "-o", out, "-q"); code != 0 {
		t.Fatalf("build after kill -9: exit %d\n%s", code, errOut)
	}
	assertNothingBeside(t, out)

	// SIGINT while standard input never ends.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	lint := meshcCmd("lint", "-")
	lint.Stdin = r
	if err := lint.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	// Time to reach the read; a signal before meshc's handler is in place
	// kills it as the shell's 130 too, which the check below allows.
	time.Sleep(time.Second)
	start := time.Now()
	_ = lint.Process.Signal(syscall.SIGINT)
	_ = lint.Wait()
	ws, _ := lint.ProcessState.Sys().(syscall.WaitStatus)
	byHandler, bySignal := ws.ExitStatus() == 130, ws.Signaled() && ws.Signal() == syscall.SIGINT
	if !byHandler && !bySignal || time.Since(start) > 5*time.Second {
		t.Errorf("lint - interrupted: %v after %v, want exit 130 at once", lint.ProcessState, time.Since(start))
	}
}

// Item 9: eight builds into one OUT at once all succeed, one after the
// other; a reader never finds index.json missing; nothing is left beside.
func TestBuildConcurrent(t *testing.T) {
	out := built(t)
	stopWatching := outdirtest.WatchMissing(filepath.Join(out, "index.json"))
	var wg sync.WaitGroup
	codes := make([]int, 8)
	outs := make([]string, 8)
	for i := range 8 {
		wg.Go(func() {
			format := []string{"bootstrap", "xds"}[i%2]
			codes[i], _, outs[i] = meshc(t, "", "build", bookinfoDir, "-o", out, "--format", format, "-q")
		})
	}
	wg.Wait()
	missing := stopWatching()
	for i, code := range codes {
		if code != 0 {
			t.Errorf("build %d: exit %d\n%s", i, code, outs[i])
		}
	}
	if missing > 0 {
		t.Errorf("index.json missing %d times", missing)
	}
	assertNothingBeside(t, out)
}

// Item 10: /dev/fd/N and FIFOs named on the command line are read as
// streams; an entry too deep to name is MC1006, not skipped.
func TestLintReadsPipesAndReportsDeepPaths(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.WriteString(w, goodNS); w.Close() }()
	defer r.Close()
	if code, out, _ := meshc(t, "", "lint", fmt.Sprintf("/dev/fd/%d", r.Fd())); code != 0 || !strings.Contains(out, "2 objects from 1 file") {
		t.Errorf("/dev/fd: exit %d\n%s", code, out)
	}

	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			_, _ = io.WriteString(f, goodNS)
			f.Close()
		}
	}()
	if code, out, _ := meshc(t, "", "lint", fifo); code != 0 || !strings.Contains(out, "2 objects from 1 file") {
		t.Errorf("FIFO: exit %d\n%s", code, out)
	}

	// Directories nested past PATH_MAX, made relative to each other.
	root := t.TempDir()
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("d", 200)
	for range 25 {
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	unix.Close(fd)
	if code, out, _ := meshc(t, "", "lint", root); code != exitUsage || !strings.Contains(out, "MC1006") || !strings.Contains(out, "file name too long") {
		t.Errorf("deep path: exit %d\n%s", code, out)
	}
}

// Item 11: with --dedup, a namespace named shared keeps its own directory;
// the content-addressed files are in _shared/, which no namespace can be.
func TestDedupNamespaceNamedShared(t *testing.T) {
	in := writeFiles(t, map[string]string{"shared.yaml": strings.ReplaceAll(sameNameWorkloads, "shop", "shared")})
	out := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := meshc(t, "", "build", in, "-o", out, "--dedup", "-q"); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	ns, _ := os.ReadDir(filepath.Join(out, "shared"))
	if len(ns) != 3 {
		t.Errorf("namespace shared holds %v, want its three bootstraps", ns)
	}
	if shared, _ := os.ReadDir(filepath.Join(out, "_shared")); len(shared) < 2 {
		t.Errorf("_shared holds %v, want the clusters and listeners", shared)
	}
}
