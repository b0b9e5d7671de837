package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pin-tool/pin/lock"
)

const (
	digWeb   = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	digForge = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshotOf reads every file under dir, to tell that nothing was written.
func snapshotOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

// TestInitExportBadInput: each kind of bad input is exit 2, names the file
// and line, and writes nothing.
func TestInitExportBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		args  []string
		want  string
	}{
		{"compose does not parse", map[string]string{"compose.yaml": "services:\n  web:\n    image: [x\n"},
			[]string{"init", "--compose", "compose.yaml"}, "compose.yaml:3"},
		{"variable without value", map[string]string{"compose.yaml": "services:\n  web:\n    image: reg.example/web:${PIN_TEST_UNSET_TAG}\n"},
			[]string{"init", "--compose", "compose.yaml"}, "compose.yaml:3: bad compose file: variable PIN_TEST_UNSET_TAG has no value and no default"},
		{"invalid image", map[string]string{"compose.yaml": "services:\n  web:\n    image: reg.example/Web:1\n"},
			[]string{"export", "--compose", "compose.yaml"}, `compose.yaml:3: bad compose file: service web: image "reg.example/Web:1" is not a valid reference`},
		{"manifest not kubernetes", map[string]string{"k8s/app.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: a, image: reg.example/a:1}]\n---\nservices:\n  web: {}\n"},
			[]string{"init", "--manifests", "k8s"}, "k8s/app.yaml:7: not a Kubernetes object"},
		{"manifest image invalid", map[string]string{"k8s/app.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - name: a\n    image: reg.example/A:1\n"},
			[]string{"init", "--manifests", "k8s"}, "k8s/app.yaml:7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			before := snapshotOf(t, dir)
			r := pin(t, dir, tc.args...)
			if r.code != exitInput || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, want 2 and %q\n%s%s", r.code, tc.want, r.stdout, r.stderr)
			}
			after := snapshotOf(t, dir)
			if len(after) != len(before) {
				t.Fatalf("files written: %v", after)
			}
			for p, b := range before {
				if after[p] != b {
					t.Fatalf("%s rewritten", p)
				}
			}
		})
	}
}

const manifests = `# forge, as deployed
apiVersion: apps/v1
kind: Deployment
metadata:
  name: forge
spec:
  template:
    spec:
      initContainers:
        - name: migrate
          image: registry.example.org/forge/forgejo:1.27   # same image, migrates first
      containers:
        - name: forge
          image: registry.example.org/forge/forgejo:1.27
---
apiVersion: v1
kind: Service
metadata: {name: forge}
spec: {ports: [{port: 3000}]}
`

// TestManifestsInitAndExport: init --manifests adds one module per image
// (init containers included), once; export --in-place and --kustomize
// write the lock into the files, --env into an env file; a second run
// changes nothing and --check agrees; an edited reference is drift.
func TestManifestsInitAndExport(t *testing.T) {
	// 1.27.1 in the files, 1.27.3 in the lock: an upgrade export writes.
	src := strings.ReplaceAll(manifests, "forgejo:1.27", "forgejo:1.27.1")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"k8s/forge.yaml":         src,
		"k8s/kustomization.yaml": "resources:\n- forge.yaml\n",
	})
	r := pin(t, dir, "init", "--manifests", "k8s")
	if r.code != 0 {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	cat, _ := os.ReadFile(filepath.Join(dir, "catalogue.hcl"))
	if strings.Count(string(cat), "module ") != 1 || !strings.Contains(string(cat), `pin    = "1.27.1"`) || !strings.Contains(r.stdout, `module "forge" already has image`) {
		t.Fatalf("catalogue:\n%s\noutput:\n%s", cat, r.stdout)
	}
	if r := pin(t, dir, "init", "--manifests", "k8s"); r.code != 0 || !strings.Contains(r.stdout, "Nothing to add") {
		t.Fatalf("second init: exit %d\n%s", r.code, r.stdout)
	}
	r = pin(t, dir, "init", "--manifests", "k8s", "--format", "json")
	var out struct {
		Written bool
		Added   []any
		Skipped []struct{ What, Why string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 || out.Written || len(out.Added) != 0 || len(out.Skipped) != 2 {
		t.Fatalf("init --format json: exit %d (%v)\n%s", r.code, err, r.stdout)
	}
	name := strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(string(cat), "module \"", 2)[1], ""), "")
	name = name[:strings.Index(name, "\"")]
	lk := &lock.Lock{Modules: []*lock.Module{{Name: name, Policy: "at-least-running", Image: "registry.example.org/forge/forgejo", Tag: "1.27.3", Digest: digForge, Source: "pin", Reason: "test"}}}
	os.WriteFile(filepath.Join(dir, "pin.lock.hcl"), lock.Format(lk), 0o644)

	if r := pin(t, dir, "export", "--manifests", "k8s", "--in-place", "--check"); r.code != 1 {
		t.Fatalf("export --check before export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"export", "--manifests", "k8s", "--in-place"},
		{"export", "--kustomize", "k8s"},
		{"export", "--env", "deploy.env"},
	} {
		if r := pin(t, dir, args...); r.code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	got, _ := os.ReadFile(filepath.Join(dir, "k8s/forge.yaml"))
	want := strings.ReplaceAll(src, "forgejo:1.27.1 ", "forgejo:1.27.3@"+digForge+" ")
	want = strings.ReplaceAll(want, "forgejo:1.27.1\n", "forgejo:1.27.3@"+digForge+"\n")
	if string(got) != want {
		t.Errorf("manifest:\n%s\nwant:\n%s", got, want)
	}
	kust, _ := os.ReadFile(filepath.Join(dir, "k8s/kustomization.yaml"))
	wantKust := "resources:\n- forge.yaml\nimages:\n- name: registry.example.org/forge/forgejo\n  newName: registry.example.org/forge/forgejo\n  newTag: \"1.27.3\"\n  digest: " + digForge + "\n"
	if string(kust) != wantKust {
		t.Errorf("kustomization:\n%s\nwant:\n%s", kust, wantKust)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "deploy.env"))
	if want := strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_IMAGE=registry.example.org/forge/forgejo:1.27.3@" + digForge + "\n"; string(env) != want {
		t.Errorf("env file %q, want %q", env, want)
	}
	before := snapshotOf(t, dir)
	for _, args := range [][]string{
		{"export", "--manifests", "k8s", "--in-place", "--kustomize", "k8s", "--env", "deploy.env"},
		{"export", "--manifests", "k8s", "--in-place", "--kustomize", "k8s", "--env", "deploy.env", "--check"},
	} {
		if r := pin(t, dir, args...); r.code != 0 {
			t.Fatalf("%v again: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	for p, b := range snapshotOf(t, dir) {
		if before[p] != b {
			t.Errorf("a second run changed %s", p)
		}
	}
	// Someone edits a tag but keeps the digest: drift, reported at its line.
	os.WriteFile(filepath.Join(dir, "k8s/forge.yaml"), []byte(strings.Replace(string(got), "forgejo:1.27.3@", "forgejo:1.22.6@", 1)), 0o644)
	r = pin(t, dir, "export", "--manifests", "k8s", "--in-place", "--check")
	if r.code != 1 || !strings.Contains(r.stderr, "k8s/forge.yaml:11: registry.example.org/forge/forgejo:1.22.6@"+digForge+": the tag 1.22.6 and the digest disagree") {
		t.Fatalf("export --check after an edit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestComposeInPlace: export --compose --in-place rewrites only the image
// values of the services a module covers, keeping comments and quoting;
// an image written with a variable is not written, with the reason, and
// the run exits 1 while the variable reads another image than the lock's;
// set to the locked image, a second run and --check agree.
func TestComposeInPlace(t *testing.T) {
	dir := t.TempDir()
	src := `# deploy of the stack
services:
  web:
    image: "registry.example.org/pin/web:latest"   # floating, pinned by pin
    network_mode: none
  cache:
    image: ${CACHE_IMAGE:-registry.example.org/pin/web:latest}
`
	writeFiles(t, dir, map[string]string{
		"stack/compose.yaml": src,
		"catalogue.hcl": `host "dock" {
  snapshot = "dock.json"
}
module "web" {
  image  = "registry.example.org/pin/web"
  policy = "at-least-running"
  runs_on "dock" { compose = "stack/web" }
}
`,
		"dock.json": `{"schema": 1, "host": "dock", "containers": [], "images": []}`,
	})
	lk := &lock.Lock{Modules: []*lock.Module{{Name: "web", Policy: "at-least-running", Image: "registry.example.org/pin/web", Tag: "latest", Digest: digWeb, Source: "pin", Reason: "test"}}}
	os.WriteFile(filepath.Join(dir, "pin.lock.hcl"), lock.Format(lk), 0o644)
	r := pin(t, dir, "export", "--compose", "stack/compose.yaml", "--in-place", "--offline")
	if r.code != 1 || !strings.Contains(r.stderr, "cannot write stack/compose.yaml:7, service cache: it reads registry.example.org/pin/web:latest here, not the locked registry.example.org/pin/web:latest@"+digWeb+", and the image is set through a variable") {
		t.Fatalf("export --in-place: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Setenv("CACHE_IMAGE", "registry.example.org/pin/web:latest@"+digWeb)
	got, _ := os.ReadFile(filepath.Join(dir, "stack/compose.yaml"))
	if want := strings.Replace(src, `web:latest"`, `web:latest@`+digWeb+`"`, 1); string(got) != want {
		t.Fatalf("compose.yaml:\n%s\nwant:\n%s", got, want)
	}
	r = pin(t, dir, "export", "--compose", "stack/compose.yaml", "--in-place", "--check", "--offline", "--format", "json")
	var out struct {
		Files []struct {
			Path             string
			Changed, Written bool
		}
		References []struct{ Module, New string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); r.code != 0 || err != nil {
		t.Fatalf("--check --format json after export: exit %d (%v)\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	// Both services are references: web written, cache read through its
	// variable.
	if len(out.Files) != 1 || out.Files[0].Changed || out.Files[0].Written || len(out.References) != 2 ||
		out.References[0].New != "registry.example.org/pin/web:latest@"+digWeb || out.References[1].New != out.References[0].New {
		t.Errorf("json: %+v", out)
	}
	if r := pin(t, dir, "export", "--compose", "stack/compose.yaml", "--in-place", "--offline"); r.code != 0 || !strings.Contains(r.stdout, "Nothing to write") {
		t.Fatalf("second export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestInitSaysComposeWarnings: what Compose would warn about (here an
// obsolete "version" attribute) is said in pin's words on standard error,
// not in logrus's format, and does not stop the scaffold.
func TestInitSaysComposeWarnings(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"compose.yaml": "version: \"3.8\"\nservices:\n  web:\n    image: reg.example/web:1.2\n"})
	r := pin(t, dir, "init", "--compose", "compose.yaml")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := "pin: compose: warning: " + filepath.Join(dir, "compose.yaml") + ": the attribute `version` is obsolete"
	if !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "level=warning") {
		t.Errorf("stderr does not say %q in pin's words:\n%s", want, r.stderr)
	}
	if !strings.Contains(r.stdout, `added   module "web"`) {
		t.Errorf("the scaffold did not go on:\n%s", r.stdout)
	}
}
