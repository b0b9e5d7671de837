package depcheck

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// The tools the suite builds from source (scripts/cosign, scripts/helm,
// scripts/kube-apiserver) are modules of their own, built with the flags
// of pin's own checks (CGO_ENABLED=0, -trimpath). Where they and pin
// select the same version of a module, a package compiled for one is in
// the build cache for the others: client-go, the Kubernetes API types,
// gRPC, protobuf and OpenTelemetry are compiled once, not four times, on
// a cold run (about 450 CPU-seconds of the tools' 1,200, measured; see
// CONTRIBUTING.md). A module that two of them require at different
// versions undoes that for everything built on it, silently.
var toolModules = []string{
	"internal/devtools/cosign",
	"internal/devtools/helm",
	"internal/devtools/kube-apiserver",
}

// requirements reads a go.mod: each required module's version, the
// version a replace directive gives it where one does.
func requirements(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(path, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := map[string]string{}
	for _, r := range f.Require {
		req[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range f.Replace {
		if _, ok := req[r.Old.Path]; ok && r.New.Version != "" {
			req[r.Old.Path] = r.New.Version
		}
	}
	return req
}

// TestToolsShareVersions: every module that two of pin's go.mod and the
// tools' go.mod files require, they require at one version.
func TestToolsShareVersions(t *testing.T) {
	files := []string{"go.mod"}
	for _, dir := range toolModules {
		files = append(files, filepath.Join(dir, "go.mod"))
	}
	by := map[string]map[string]string{} // module → file → version
	for _, f := range files {
		for m, v := range requirements(t, filepath.Join("..", "..", f)) {
			if by[m] == nil {
				by[m] = map[string]string{}
			}
			by[m][f] = v
		}
	}
	for _, m := range slices.Sorted(maps.Keys(by)) {
		vs := by[m]
		var seen []string
		for _, f := range files {
			if v, ok := vs[f]; ok && !slices.Contains(seen, v) {
				seen = append(seen, v)
			}
		}
		if len(seen) < 2 {
			continue
		}
		var at []string
		for _, f := range files {
			if v, ok := vs[f]; ok {
				at = append(at, f+" "+v)
			}
		}
		t.Errorf("%s is required at %d versions (%s): require the highest in each (go get %s@VERSION in that module's folder), so that its packages compile once for all of them", m, len(seen), strings.Join(at, ", "), m)
	}
}
