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
	digOld = "sha256:7777777777777777777777777777777777777777777777777777777777777777"
	digNew = "sha256:8888888888888888888888888888888888888888888888888888888888888888"
)

const twoTags = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
spec:
  template:
    spec:
      containers:
      - name: nginx
        image: nginx:1.7.9
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx2-deployment
spec:
  template:
    spec:
      containers:
      - name: nginx
        image: nginx:1.22.1
`

// TestExportNeverWritesOlder: one module of nginx locked at 1.7.9 (as
// init once merged two Deployments into) and a manifest naming 1.7.9 in
// one Deployment and 1.22.1 in the other: export refuses the 1.22.1 line,
// names it, both images and the rule, writes nothing, and --check fails;
// init on the same files makes one module per image, and their lock is
// written to each line.
func TestExportNeverWritesOlder(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"k8s/nginx.yaml": twoTags,
		"catalogue.hcl":  "module \"nginx-deployment\" {\n  image  = \"nginx\"\n  policy = \"at-least-running\"\n  pin    = \"1.7.9\"\n}\n",
	})
	lk := &lock.Lock{Modules: []*lock.Module{{Name: "nginx-deployment", Policy: "at-least-running", Image: "index.docker.io/library/nginx", Tag: "1.7.9", Digest: digOld, Source: "pin", Reason: "test"}}}
	writeFile(t, filepath.Join(dir, "pin.lock.hcl"), string(lock.Format(lk)))
	before := snapshotOf(t, dir)
	for _, args := range [][]string{
		{"export", "--manifests", "k8s", "--in-place", "--offline"},
		{"export", "--manifests", "k8s", "--in-place", "--offline", "--check"},
	} {
		r := pin(t, dir, args...)
		if r.code != exitFindings || !strings.Contains(r.stderr, "k8s/nginx.yaml:21: refused: module nginx-deployment's lock names nginx:1.7.9@"+digOld+", older than the nginx:1.22.1 written here (version: version 1.7.9 < 1.22.1)") {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stderr, "nginx.yaml:10") {
			t.Errorf("%v: the 1.7.9 line is refused too:\n%s", args, r.stderr)
		}
	}
	for p, b := range snapshotOf(t, dir) {
		if before[p] != b {
			t.Errorf("%s written", p)
		}
	}

	// From scratch: init makes a module per image, export writes each.
	dir = t.TempDir()
	writeFiles(t, dir, map[string]string{"k8s/nginx.yaml": twoTags})
	if r := pin(t, dir, "init", "--manifests", "k8s"); r.code != 0 || strings.Contains(r.stdout, "skipped") {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lk = &lock.Lock{Modules: []*lock.Module{
		{Name: "nginx-deployment", Policy: "at-least-running", Image: "index.docker.io/library/nginx", Tag: "1.7.9", Digest: digOld, Source: "pin", Reason: "test"},
		{Name: "nginx2-deployment", Policy: "at-least-running", Image: "index.docker.io/library/nginx", Tag: "1.22.1", Digest: digNew, Source: "pin", Reason: "test"},
	}}
	writeFile(t, filepath.Join(dir, "pin.lock.hcl"), string(lock.Format(lk)))
	if r := pin(t, dir, "export", "--manifests", "k8s", "--in-place", "--offline"); r.code != 0 {
		t.Fatalf("export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "k8s/nginx.yaml"))
	want := strings.Replace(strings.Replace(twoTags, "nginx:1.7.9", "nginx:1.7.9@"+digOld, 1), "nginx:1.22.1", "nginx:1.22.1@"+digNew, 1)
	if string(got) != want {
		t.Errorf("manifest:\n%s\nwant:\n%s", got, want)
	}
	if r := pin(t, dir, "export", "--manifests", "k8s", "--in-place", "--offline", "--check"); r.code != 0 {
		t.Errorf("--check after export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestByteOrderMarkKept: a manifest and a Compose file that start with a
// byte-order mark are read by init and export, the mark written back as
// it was, and --check agrees after.
func TestByteOrderMarkKept(t *testing.T) {
	bom := "\xef\xbb\xbf"
	man := bom + strings.SplitN(twoTags, "---\n", 2)[0]
	comp := bom + "services:\n  web:\n    image: nginx:1.7.9 # the web\n"
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"k8s/nginx.yaml": man, "compose.yaml": comp})
	if r := pin(t, dir, "init", "--manifests", "k8s"); r.code != 0 || !strings.Contains(r.stdout, "k8s/nginx.yaml:10") {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lk := &lock.Lock{Modules: []*lock.Module{{Name: "nginx-deployment", Policy: "at-least-running", Image: "index.docker.io/library/nginx", Tag: "1.7.9", Digest: digOld, Source: "pin", Reason: "test"}}}
	writeFile(t, filepath.Join(dir, "pin.lock.hcl"), string(lock.Format(lk)))
	for _, args := range [][]string{{"--manifests", "k8s"}, {"--compose", "compose.yaml"}} {
		args = append([]string{"export", "--in-place", "--offline"}, args...)
		if r := pin(t, dir, append(args, "--check")...); r.code != exitFindings {
			t.Errorf("%v --check before: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		if r := pin(t, dir, args...); r.code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		if r := pin(t, dir, append(args, "--check")...); r.code != 0 {
			t.Errorf("%v --check after: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	got, _ := os.ReadFile(filepath.Join(dir, "k8s/nginx.yaml"))
	if want := strings.Replace(man, "nginx:1.7.9", "nginx:1.7.9@"+digOld, 1); string(got) != want {
		t.Errorf("manifest %q, want %q", got, want)
	}
	got, _ = os.ReadFile(filepath.Join(dir, "compose.yaml"))
	if want := strings.Replace(comp, "nginx:1.7.9", "nginx:1.7.9@"+digOld, 1); string(got) != want {
		t.Errorf("compose file %q, want %q", got, want)
	}
}

// TestInitJSONSaysWhatWasWritten: under track-upstream an image whose tag
// is no version is written as tag = "…", and the JSON says tag, not pin;
// a tagless image is latest; what init leaves out is exit 1, the rest
// written.
func TestInitJSONSaysWhatWasWritten(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"compose.yaml": "services:\n  old:\n    image: ubuntu:artful\n  shell:\n    image: busybox\n  app:\n    image: reg.example/app:1.2\n",
		"k8s/rs.yaml":  "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec:\n  template:\n    spec:\n      containers: [{name: a, image: reg.example/a:1}]\n",
		"k8s/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: b, image: reg.example/b:1}]\n",
	})
	r := pin(t, dir, "init", "--compose", "compose.yaml", "--policy", "track-upstream", "--format", "json")
	var out struct {
		Added []map[string]any
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 {
		t.Fatalf("exit %d (%v)\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	cat, _ := os.ReadFile(filepath.Join(dir, "catalogue.hcl"))
	for _, a := range out.Added {
		m := a["module"].(string)
		block := string(cat)[strings.Index(string(cat), "module \""+m+"\""):]
		block = block[:strings.Index(block, "}")]
		for _, k := range []string{"pin", "tag"} {
			v, has := a[k]
			line := k + " "
			if k == "tag" {
				line = "tag    = "
			} else {
				line = "pin    = "
			}
			if written := strings.Contains(block, line); written != has || has && !strings.Contains(block, line+`"`+v.(string)+`"`) {
				t.Errorf("module %s: JSON %s=%v, catalogue:\n%s", m, k, v, block)
			}
		}
	}
	if len(out.Added) != 3 {
		t.Errorf("added %v", out.Added)
	}
	r = pin(t, dir, "init", "--manifests", "k8s")
	if r.code != exitFindings || !strings.Contains(r.stdout, "left out k8s/rs.yaml:7") || !strings.Contains(r.stdout, `added   module "p"`) {
		t.Errorf("a kind init does not read: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestExportNeverWritesOlderCompose: the same rule for a Compose file,
// whether export writes the override or the file in place.
func TestExportNeverWritesOlderCompose(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"compose.yaml":  "services:\n  web:\n    image: nginx:1.22.1\n",
		"catalogue.hcl": "module \"web\" {\n  image  = \"nginx\"\n  policy = \"at-least-running\"\n  pin    = \"1.7.9\"\n}\n",
	})
	lk := &lock.Lock{Modules: []*lock.Module{{Name: "web", Policy: "at-least-running", Image: "index.docker.io/library/nginx", Tag: "1.7.9", Digest: digOld, Source: "pin", Reason: "test"}}}
	writeFile(t, filepath.Join(dir, "pin.lock.hcl"), string(lock.Format(lk)))
	before := snapshotOf(t, dir)
	for _, args := range [][]string{
		{"export", "--compose", "compose.yaml", "--offline"},
		{"export", "--compose", "compose.yaml", "--in-place", "--offline"},
		{"export", "--compose", "compose.yaml", "--in-place", "--offline", "--check"},
	} {
		r := pin(t, dir, args...)
		if r.code != exitFindings || !strings.Contains(r.stderr, "compose.yaml:3: refused: module web's lock names nginx:1.7.9@"+digOld+", older than the nginx:1.22.1 written here") {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	for p, b := range snapshotOf(t, dir) {
		if before[p] != b {
			t.Errorf("%s written", p)
		}
	}
}

// TestTaglessComposeInitAndExport: a Compose file of tagless images goes
// through init (pin = "latest") and export: the lock of latest is what
// the file names, and is written.
func TestTaglessComposeInitAndExport(t *testing.T) {
	dir := t.TempDir()
	src := "services:\n  web:\n    image: example/social\n  worker:\n    image: example/social\n"
	writeFiles(t, dir, map[string]string{"compose.yaml": src})
	if r := pin(t, dir, "init", "--compose", "compose.yaml"); r.code != 0 {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lk := &lock.Lock{Modules: []*lock.Module{{Name: "web", Policy: "at-least-running", Image: "index.docker.io/example/social", Tag: "latest", Digest: digNew, Source: "pin", Reason: "test"}}}
	writeFile(t, filepath.Join(dir, "pin.lock.hcl"), string(lock.Format(lk)))
	if r := pin(t, dir, "export", "--compose", "compose.yaml", "--in-place", "--offline"); r.code != 0 {
		t.Fatalf("export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "compose.yaml"))
	if want := strings.ReplaceAll(src, "example/social\n", "example/social:latest@"+digNew+"\n"); string(got) != want {
		t.Errorf("compose file:\n%s\nwant:\n%s", got, want)
	}
}

// TestExportKustomizeAndEnvNeverWriteOlder: module nginx is locked at
// 1.7.9. A kustomization whose images: entry makes the deployment run
// 1.22.1 (newTag over the manifest's 1.7.9), a kustomization without one
// over a manifest naming 1.22.1, and an env file whose NGINX_IMAGE names
// 1.22.1: export refuses each, naming the file and line, both images and
// the rule, writes nothing (--check fails too); a file already at the
// lock's tag is written.
func TestExportKustomizeAndEnvNeverWriteOlder(t *testing.T) {
	deploy := strings.SplitN(twoTags, "---\n", 2)[0] // nginx:1.7.9, line 10
	newer := strings.Replace(deploy, "nginx:1.7.9", "nginx:1.22.1", 1)
	cases := []struct {
		name  string
		files map[string]string
		args  []string
		at    string
		repo  string // the repository as the lock's reference is written there
	}{
		{"kustomize newTag", map[string]string{
			"k/deploy.yaml":        deploy,
			"k/other.yaml":         strings.Replace(deploy, "name: nginx-deployment", "name: other", 1),
			"k/kustomization.yaml": "resources:\n- deploy.yaml\n- other.yaml\nimages:\n- name: nginx\n  newTag: 1.22.1\n",
		}, []string{"--kustomize", "k"}, "k/kustomization.yaml:5", "nginx"},
		{"kustomize manifest", map[string]string{
			"k/deploy.yaml":        newer,
			"k/kustomization.yaml": "resources:\n- deploy.yaml\n",
		}, []string{"--kustomize", "k"}, "k/deploy.yaml:10", "nginx"},
		{"env", map[string]string{
			"deploy.env": "# the web\nNGINX_IMAGE=nginx:1.22.1\n",
		}, []string{"--env", "deploy.env"}, "deploy.env:2", "index.docker.io/library/nginx"},
	}
	lk := &lock.Lock{Modules: []*lock.Module{{Name: "nginx", Policy: "at-least-running", Image: "index.docker.io/library/nginx", Tag: "1.7.9", Digest: digOld, Source: "pin", Reason: "test"}}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.files["catalogue.hcl"] = "module \"nginx\" {\n  image  = \"nginx\"\n  policy = \"at-least-running\"\n  pin    = \"1.7.9\"\n}\n"
			writeFiles(t, dir, c.files)
			writeFile(t, filepath.Join(dir, "pin.lock.hcl"), string(lock.Format(lk)))
			before := snapshotOf(t, dir)
			for _, check := range []bool{false, true} {
				args := append([]string{"export", "--offline"}, c.args...)
				if check {
					args = append(args, "--check")
				}
				r := pin(t, dir, args...)
				want := c.at + ": refused: module nginx's lock names " + c.repo + ":1.7.9@" + digOld + ", older than the nginx:1.22.1 written here (version: version 1.7.9 < 1.22.1)"
				if r.code != exitFindings || strings.Count(r.stderr, want) != 1 {
					t.Fatalf("%v: exit %d, want %d and %q\n%s%s", args, r.code, exitFindings, want, r.stdout, r.stderr)
				}
			}
			// The JSON says it too, and that nothing was written.
			r := pin(t, dir, append([]string{"export", "--offline", "--format", "json"}, c.args...)...)
			validate(t, compileSchemas(t)["export.schema.json"], "export --format json, refused", r.stdout)
			var out struct {
				Files   []struct{ Written bool }
				Refused []struct{ Where, Module, Kind string }
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != exitFindings || len(out.Refused) != 1 ||
				out.Refused[0] != (struct{ Where, Module, Kind string }{c.at, "nginx", "written-newer"}) || len(out.Files) == 0 || out.Files[0].Written {
				t.Errorf("export --format json: exit %d (%v)\n%s%s", r.code, err, r.stdout, r.stderr)
			}
			for p, b := range snapshotOf(t, dir) {
				if before[p] != b {
					t.Errorf("%s written", p)
				}
			}
			// At the lock's tag, the same file is written.
			for p, s := range c.files {
				writeFile(t, filepath.Join(dir, p), strings.ReplaceAll(s, "1.22.1", "1.7.9"))
			}
			if r := pin(t, dir, append([]string{"export", "--offline"}, c.args...)...); r.code != 0 {
				t.Errorf("at the lock's tag: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}
