package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/lock"
)

const digWebB = "sha256:2222222222222222222222222222222222222222222222222222222222222222"

// exportBlockCatalogue declares its exports in a folder of its own (ops/),
// with paths relative to it. Two modules share the web image and tell
// their Compose services apart by project/service: only with the block's
// project name "stack" (not Compose's default, the folder's name "ops")
// can each service be written.
const exportBlockCatalogue = `host "dock" {
  snapshot = "dock.json"
}

module "web-a" {
  image  = "registry.example.org/pin/web"
  policy = "at-least-running"
  runs_on "dock" { compose = "stack/a" }
}

module "web-b" {
  image  = "registry.example.org/pin/web"
  policy = "at-least-running"
  runs_on "dock" { compose = "stack/b" }
}

module "db" {
  image  = "registry.example.org/pin/db"
  policy = "exact"
  pin    = "2.0"
}

export {
  compose {
    files        = ["compose.yaml"]
    project_name = "stack"
  }
  manifests = ["k8s/raw"]
  kustomize = ["k8s/overlay"]
  env       = ["deploy.env"]
}
`

const dbDeployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: db\nspec:\n  template:\n    spec:\n      containers:\n        - name: db\n          image: registry.example.org/pin/db:2.0\n"

func exportBlockFixture(t *testing.T, catalogue string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"ops/catalogue.hcl":                  catalogue,
		"ops/dock.json":                      `{"schema": 1, "host": "dock", "containers": [], "images": []}`,
		"ops/compose.yaml":                   "services:\n  a:\n    image: registry.example.org/pin/web:1.2\n  b:\n    image: registry.example.org/pin/web:1.3\n  db:\n    image: registry.example.org/pin/db:2.0\n",
		"ops/k8s/raw/db.yaml":                dbDeployment,
		"ops/k8s/overlay/db.yaml":            dbDeployment,
		"ops/k8s/overlay/kustomization.yaml": "resources:\n- db.yaml\n",
	})
	lk := &lock.Lock{Modules: []*lock.Module{
		{Name: "db", Policy: "exact", Image: "registry.example.org/pin/db", Tag: "2.0", Digest: digForge, Source: "pin", Reason: "test"},
		{Name: "web-a", Policy: "at-least-running", Image: "registry.example.org/pin/web", Tag: "1.2", Digest: digWeb, Source: "pin", Reason: "test"},
		{Name: "web-b", Policy: "at-least-running", Image: "registry.example.org/pin/web", Tag: "1.3", Digest: digWebB, Source: "pin", Reason: "test"},
	}}
	if err := os.WriteFile(filepath.Join(dir, "ops", "pin.lock.hcl"), lock.Format(lk), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// relSnapshot is snapshotOf with paths relative to dir.
func relSnapshot(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	for p, b := range snapshotOf(t, dir) {
		r, _ := filepath.Rel(dir, p)
		out[r] = b
	}
	return out
}

// TestExportFromTheCatalogue: pin export with no export flag writes what
// the catalogue's export block declares, paths relative to the
// catalogue's folder, byte for byte what the same exports named by flags
// write; a second run and --check agree.
func TestExportFromTheCatalogue(t *testing.T) {
	at := []string{"--catalogue", "ops/catalogue.hcl", "--lock", "ops/pin.lock.hcl", "--offline"}
	dir := exportBlockFixture(t, exportBlockCatalogue)
	before := relSnapshot(t, dir)
	r := pin(t, dir, append([]string{"export"}, at...)...)
	if r.code != 0 {
		t.Fatalf("export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, f := range []string{"ops/compose.pin.yaml", "ops/deploy.env", "ops/k8s/raw/db.yaml", "ops/k8s/overlay/kustomization.yaml"} {
		if !strings.Contains(r.stdout, "Wrote "+f+".\n") {
			t.Errorf("the output does not say it wrote %s:\n%s", f, r.stdout)
		}
	}
	got := relSnapshot(t, dir)
	if !strings.Contains(got["ops/compose.pin.yaml"], "  a:\n    image: registry.example.org/pin/web:1.2@"+digWeb+"\n  b:\n    image: registry.example.org/pin/web:1.3@"+digWebB+"\n") {
		t.Errorf("the override does not carry each project service's own module:\n%s", got["ops/compose.pin.yaml"])
	}
	if got["ops/compose.yaml"] != before["ops/compose.yaml"] {
		t.Error("in_place is false: compose.yaml itself must not change")
	}

	// The same exports, named by flags, one at a time, in a copy: the
	// first names a file, so the block is not read, and it writes that
	// file alone.
	ref := exportBlockFixture(t, exportBlockCatalogue)
	r = pin(t, ref, append([]string{"export", "--env", "ops/deploy.env"}, at...)...)
	if r.code != 0 || r.stdout != "ops/deploy.env, DB_IMAGE: (none) → registry.example.org/pin/db:2.0@"+digForge+" (module db)\n"+
		"ops/deploy.env, WEB_A_IMAGE: (none) → registry.example.org/pin/web:1.2@"+digWeb+" (module web-a)\n"+
		"ops/deploy.env, WEB_B_IMAGE: (none) → registry.example.org/pin/web:1.3@"+digWebB+" (module web-b)\nWrote ops/deploy.env.\n" {
		t.Fatalf("export --env with a block: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"--compose", "ops/compose.yaml", "--project-name", "stack"},
		{"--manifests", "ops/k8s/raw", "--in-place"},
		{"--kustomize", "ops/k8s/overlay"},
	} {
		if r := pin(t, ref, append(append([]string{"export"}, args...), at...)...); r.code != 0 {
			t.Fatalf("export %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if diff := cmp.Diff(relSnapshot(t, ref), got); diff != "" {
		t.Errorf("the block writes other bytes than the flags (-flags +block):\n%s", diff)
	}

	// A second run changes nothing; --check agrees.
	if r := pin(t, dir, append([]string{"export"}, at...)...); r.code != 0 || !strings.Contains(r.stdout, "Nothing to write") {
		t.Errorf("second run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, dir, append([]string{"export", "--check"}, at...)...); r.code != 0 || !strings.Contains(r.stdout, "Every file agrees with the lock.") {
		t.Errorf("--check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if diff := cmp.Diff(got, relSnapshot(t, dir)); diff != "" {
		t.Errorf("a second run or --check wrote:\n%s", diff)
	}

	// A Compose setting alone changes the block's: --in-place rewrites
	// compose.yaml itself.
	if r := pin(t, dir, append([]string{"export", "--in-place"}, at...)...); r.code != 0 || !strings.Contains(r.stdout, "Wrote ops/compose.yaml.") {
		t.Fatalf("export --in-place: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// And --project-name: Compose's own name for the project covers
	// neither service, which two modules may cover: not written, exit 1.
	r = pin(t, dir, append([]string{"export", "--project-name", "ops"}, at...)...)
	if r.code != exitFindings || !strings.Contains(r.stderr, "cannot write service a: modules web-a, web-b all have image registry.example.org/pin/web") {
		t.Errorf("export --project-name ops: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestExportBlockBadInput: what is wrong with the block, or missing, is
// exit 2 and writes nothing: a path the block names that is not there (at
// its line and column in the catalogue), a block that names no file, no
// block and no flag, a Compose setting without a Compose project.
func TestExportBlockBadInput(t *testing.T) {
	at := []string{"--catalogue", "ops/catalogue.hcl", "--lock", "ops/pin.lock.hcl", "--offline"}
	for _, tc := range []struct {
		name, catalogue string
		remove          string
		args            []string
		want            []string
	}{
		{name: "missing manifests folder", catalogue: exportBlockCatalogue, remove: "ops/k8s/raw",
			want: []string{"ops/catalogue.hcl:28:16: error: Export path not found\n", "The manifests path ops/k8s/raw does not exist. Create it, or fix the path: paths in the export block are relative to the folder of the catalogue file (ops)."}},
		{name: "missing compose file", catalogue: exportBlockCatalogue, remove: "ops/compose.yaml",
			want: []string{"ops/catalogue.hcl:25:21: error: Export path not found\n"}},
		{name: "a block that names nothing", catalogue: exportBlockCatalogue[:strings.Index(exportBlockCatalogue, "export {")] + "export {\n}\n",
			want: []string{"the catalogue's export block at ops/catalogue.hcl:23,1-7 names no file: add compose"}},
		{name: "no block, no flag", catalogue: exportBlockCatalogue[:strings.Index(exportBlockCatalogue, "export {")],
			want: []string{"export needs an export block in the catalogue (export { compose { files = [\"compose.yaml\"] } }), or --compose FILE"}},
		{name: "a setting without a project", catalogue: strings.Replace(exportBlockCatalogue, "compose {\n    files        = [\"compose.yaml\"]\n    project_name = \"stack\"\n  }", "", 1),
			args: []string{"--profile", "build"}, want: []string{"--project-name, --profile or --in-place without --compose: no Compose project to apply the setting to: the catalogue's export block at ops/catalogue.hcl:23,1-7 has no compose block"}},
		{name: "a project name beside an env file", catalogue: exportBlockCatalogue,
			args: []string{"--env", "ops/deploy.env", "--project-name", "other"}, want: []string{"--project-name, --profile or --in-place without --compose: no Compose project to apply the setting to: the command line names files to export to, but no Compose file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := exportBlockFixture(t, tc.catalogue)
			if tc.remove != "" {
				os.RemoveAll(filepath.Join(dir, tc.remove))
			}
			before := relSnapshot(t, dir)
			r := pin(t, dir, append(append([]string{"export"}, tc.args...), at...)...)
			if r.code != exitInput {
				t.Fatalf("exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if diff := cmp.Diff(before, relSnapshot(t, dir)); diff != "" {
				t.Errorf("written:\n%s", diff)
			}
		})
	}
}
