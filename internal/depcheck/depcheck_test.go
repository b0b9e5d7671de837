package depcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/pin-tool/pin"

// pkg is what "go list -json" says of one package.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	Deps       []string
}

// list runs "go list -deps=false -json" over every package of the module
// (tests left out: the graph is about what ships).
func list(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(&out)
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages; is the test run inside the module?", len(pkgs))
	}
	return pkgs
}

func hasPrefix(path string, prefixes ...string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return path == p || strings.HasPrefix(path, p+"/") })
}

var (
	moby     = []string{"github.com/docker/docker", "github.com/docker/cli", "github.com/moby"}
	clientGo = []string{"k8s.io/client-go"}
	cobra    = []string{"github.com/spf13/cobra"}
	// adapters are the only packages that may speak to a Docker Engine or
	// a Kubernetes API server; the test kits start and drive real ones.
	adapters = []string{module + "/internal/host/docker", module + "/internal/host/kubernetes",
		module + "/internal/testkit/testenv", module + "/internal/testkit/testimage", module + "/internal/testkit/faultproxy"}
)

// writer is the one package that writes users' files; it depends on no
// other package of pin.
const writer = module + "/internal/atomicfile"

// TestLockImportsNoPinPackage: the lockfile model stands alone, so that a
// lock can be read and written by anything, and nothing it does depends on
// how pin decides. Its one pin import is the file writer, which stands
// alone too.
func TestLockImportsNoPinPackage(t *testing.T) {
	pkgs := list(t)
	for _, d := range pkgs[module+"/lock"].Deps {
		if hasPrefix(d, module) && d != writer {
			t.Errorf("lock depends on %s", d)
		}
	}
	for _, d := range pkgs[writer].Deps {
		if hasPrefix(d, module) {
			t.Errorf("%s depends on %s", writer, d)
		}
	}
}

// TestOneFileWriter: what the pin binary writes, it writes through the
// one writer (links followed, modes kept, never a file pin did not
// write), so no package of the binary writes or renames a file itself.
// The registry cache writes pin's own files in pin's own folder.
func TestOneFileWriter(t *testing.T) {
	calls := regexp.MustCompile(`\bos\.(WriteFile|Rename|Create)\(|\brenameio\.`)
	pkgs := list(t)
	for _, path := range append(pkgs[module+"/cmd/pin"].Deps, module+"/cmd/pin") {
		p, ok := pkgs[path]
		if !ok || path == writer || path == module+"/internal/registry" {
			continue
		}
		for _, f := range p.GoFiles {
			b, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(b), "\n") {
				if calls.MatchString(line) {
					t.Errorf("%s:%d: %s: write through %s", filepath.Join(path, f), i+1, strings.TrimSpace(line), writer)
				}
			}
		}
	}
}

// TestOnlyAdaptersImportEngines: the Moby client and client-go are
// imported only by the host adapters (and the test kits that start the
// real servers).
func TestOnlyAdaptersImportEngines(t *testing.T) {
	for path, p := range list(t) {
		if hasPrefix(path, adapters...) {
			continue
		}
		for _, imp := range p.Imports {
			if hasPrefix(imp, moby...) || hasPrefix(imp, clientGo...) {
				t.Errorf("%s imports %s: only the host adapters may", path, imp)
			}
		}
	}
}

// TestDecisionsReachNoNetworkClient: the packages that decide (and what
// they stand on) depend, even indirectly, on no CLI framework, no Moby
// client, no client-go, and no signature client (sigstore, go-tuf's
// updater, grpc). They are handed adapters; they build none.
func TestDecisionsReachNoNetworkClient(t *testing.T) {
	pkgs := list(t)
	for _, path := range []string{"resolve", "internal/promote", "internal/observe", "internal/order", "internal/version", "internal/image", "internal/catalogue", "lock"} {
		p, ok := pkgs[module+"/"+path]
		if !ok {
			t.Errorf("package %s not found", path)
			continue
		}
		for _, d := range p.Deps {
			if hasPrefix(d, moby...) || hasPrefix(d, clientGo...) || hasPrefix(d, cobra...) || hasPrefix(d, signing...) {
				t.Errorf("%s depends on %s", path, d)
			}
		}
	}
}

// TestFlowRunsOneWay: data flows catalogue → observe → resolve → lock.
// No lower layer imports a higher one, and only cmd/pin imports cobra.
// Every host adapter (a package under internal/host) has its layer.
func TestFlowRunsOneWay(t *testing.T) {
	pkgs := list(t)
	layers := [][]string{
		{"lock", "internal/image", "internal/version"},
		// The host adapters stand on the snapshot model beside them, and
		// nothing above: observe reads them through its Host interface.
		{"internal/order", "internal/catalogue", "internal/host", "internal/host/docker", "internal/host/kubernetes",
			"internal/host/published", "internal/host/fleet"},
		{"internal/observe", "internal/registry"},
		{"resolve"},
		// Promotion asks resolve's floor rule; nothing below asks it.
		{"internal/promote"},
		{"internal/source"},
		{"cmd/pin"},
	}
	level := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			level[module+"/"+p] = i
		}
	}
	for path, li := range level {
		p, ok := pkgs[path]
		if !ok {
			t.Errorf("package %s not found", path)
			continue
		}
		for _, imp := range p.Imports {
			if lj, ok := level[imp]; ok && lj > li {
				t.Errorf("%s (layer %d) imports %s (layer %d): the flow runs one way", path, li, imp, lj)
			}
		}
	}
	for path := range pkgs {
		if hasPrefix(path, module+"/internal/host") {
			if _, ok := level[path]; !ok {
				t.Errorf("%s is a host adapter with no layer: add it to the layers beside internal/host", path)
			}
		}
	}
	for path, p := range pkgs {
		if path == module+"/cmd/pin" {
			continue
		}
		for _, imp := range p.Imports {
			if hasPrefix(imp, cobra...) {
				t.Errorf("%s imports cobra: only cmd/pin may", path)
			}
		}
	}
}

// TestComposeStaysAtTheEdge: compose-go and the YAML library that
// round-trips files are imported only by the packages that read and write
// users' Compose files and manifests, and the packages that decide reach
// neither, even indirectly.
func TestComposeStaysAtTheEdge(t *testing.T) {
	libs := []string{"github.com/compose-spec/compose-go", "github.com/goccy/go-yaml"}
	edge := []string{module + "/internal/compose", module + "/internal/imageref", module + "/internal/export", module + "/internal/scaffold", module + "/internal/helmvalues"}
	pkgs := list(t)
	for path, p := range pkgs {
		if hasPrefix(path, edge...) {
			continue
		}
		for _, imp := range p.Imports {
			if hasPrefix(imp, libs...) {
				t.Errorf("%s imports %s: only %s may", path, imp, strings.Join(edge, ", "))
			}
		}
	}
	for _, path := range []string{"resolve", "internal/observe", "internal/order", "internal/version", "internal/image", "internal/catalogue", "lock", "internal/source"} {
		for _, d := range pkgs[module+"/"+path].Deps {
			if hasPrefix(d, libs...) || hasPrefix(d, edge...) {
				t.Errorf("%s depends on %s", path, d)
			}
		}
	}
}

// TestBinaryLinksNoClientset: pin reads five kinds of three Kubernetes
// API groups. client-go's clientset and its scheme register every group
// Kubernetes has when any pin command starts (35 MiB of the binary, 14 MiB
// of `pin --help`'s peak RSS, 7 ms of its start), so the binary links
// neither; package kubernetes builds a REST client of its own groups.
func TestBinaryLinksNoClientset(t *testing.T) {
	heavy := []string{"k8s.io/client-go/kubernetes", "k8s.io/client-go/kubernetes/scheme", "k8s.io/client-go/discovery"}
	for _, d := range list(t)[module+"/cmd/pin"].Deps {
		if slices.Contains(heavy, d) {
			t.Errorf("cmd/pin links %s (%s)", d, whoImports(t, d))
		}
	}
}

// whoImports names the packages of cmd/pin's build that import path.
func whoImports(t *testing.T, path string) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/cmd/pin")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var by []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && slices.Contains(f[1:], path) {
			by = append(by, f[0])
		}
	}
	if len(by) > 3 {
		by = append(by[:3], fmt.Sprintf("and %d more", len(by)-3))
	}
	return "imported by " + strings.Join(by, ", ")
}

// signing lists the modules of signature verification: sigstore and
// sigstore-go, the TUF client, and the gRPC stack they pull in.
var signing = []string{"github.com/sigstore", "github.com/theupdateframework", "google.golang.org/grpc"}

// TestDecisionsLinkNoSigstore: the decision and what it stands on reach
// no signature library, even indirectly. resolve declares the verifier it
// asks (resolve.Verifier) and internal/verify only the words of a verdict;
// the sigstore implementation (internal/verify/sigstore) is built by the
// composition root and handed in.
func TestDecisionsLinkNoSigstore(t *testing.T) {
	pkgs := list(t)
	for _, path := range []string{"resolve", "internal/verify", "internal/observe", "internal/order", "internal/catalogue", "lock"} {
		p, ok := pkgs[module+"/"+path]
		if !ok {
			t.Errorf("package %s not found", path)
			continue
		}
		for _, d := range p.Deps {
			if hasPrefix(d, signing...) {
				t.Errorf("%s depends on %s (%s)", path, d, signingImporters(t, module+"/"+path))
				break
			}
		}
	}
}

// signingImporters names the packages of pin in root's build that import
// a signing package themselves.
func signingImporters(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, root)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var by []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && hasPrefix(f[0], module) && slices.ContainsFunc(f[1:], func(imp string) bool { return hasPrefix(imp, signing...) }) {
			by = append(by, f[0])
		}
	}
	return "imported by " + strings.Join(by, ", ")
}

// TestBinaryLinksNoKit: internal/testkit (the tests' servers, images,
// proxy and truth) and internal/devtools (the benchmark, the tools that
// build test servers) stand apart from what pin ships: the binary links
// none of them.
func TestBinaryLinksNoKit(t *testing.T) {
	kits := []string{module + "/internal/testkit", module + "/internal/devtools"}
	for _, d := range list(t)[module+"/cmd/pin"].Deps {
		if hasPrefix(d, kits...) {
			t.Errorf("cmd/pin links %s (%s)", d, whoImports(t, d))
		}
	}
}
