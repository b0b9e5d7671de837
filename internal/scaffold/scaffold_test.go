package scaffold

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/compose"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/imageref"
)

func load(t *testing.T, src []byte) *catalogue.Catalogue {
	t.Helper()
	cat, diags := catalogue.Parse(catalogue.Source{Filename: "catalogue.hcl", Bytes: src})
	if diags.HasErrors() {
		t.Fatalf("catalogue does not load: %v\n%s", diags, src)
	}
	return cat
}

const existing = `host "dock" {
    docker = "unix:///run/docker.sock"
}

# edited by hand: the pin and the comment stay
module "web" {
    image  = "registry.example.org/pin/web"
    policy = "exact"
    pin    = "1.2"
    runs_on "dock" { compose = "stack/web" }
}
`

// TestComposeInitAddsOnlyWhatIsMissing: a service a module already takes
// over is skipped and its module left byte for byte; build-only and
// inactive services are skipped with their reason; the new blocks follow
// the file's four-space indent; a second run adds nothing.
func TestComposeInitAddsOnlyWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "compose.yaml")
	os.WriteFile(f, []byte(`services:
  web:
    image: registry.example.org/pin/web:1.2
  worker:
    image: registry.example.org/pin/worker:latest@sha256:4a1d9e2a2b60b1d0a8d4ef7b2c7d2a3b1b7d2c5e7f1a2b3c4d5e6f708192a3b4
  db:
    image: postgres:16
    profiles: [db]
  builder:
    build: .
`), 0o644)
	p, err := compose.Load(context.Background(), compose.Options{Files: []string{f}, Env: []string{}, Profiles: []string{}, ProjectName: "stack"})
	if err != nil {
		t.Fatal(err)
	}
	cands, skips, err := FromCompose(p, "dock", catalogue.AtLeastRunning)
	if err != nil {
		t.Fatal(err)
	}
	src := []byte(existing)
	add, more := Plan(load(t, src), cands)
	skips = append(skips, more...)
	out := Render(src, add)
	want := existing + `
# Added by pin init from ` + f + `:5, service worker.
module "worker" {
    image  = "registry.example.org/pin/worker"
    policy = "at-least-running"
    pin    = "latest@sha256:4a1d9e2a2b60b1d0a8d4ef7b2c7d2a3b1b7d2c5e7f1a2b3c4d5e6f708192a3b4"
    runs_on "dock" { compose = "stack/worker" }
}
`
	if d := cmp.Diff(want, string(out)); d != "" {
		t.Fatalf("catalogue (-want +got):\n%s", d)
	}
	var why []string
	for _, s := range skips {
		why = append(why, s.What+": "+s.Why)
	}
	wantWhy := []string{
		"service db: its profiles (db) are not active; name one with --profile",
		"service builder: it is only built (build: without image:): there is no image to pin",
		f + `:3, service web: module "web" already takes it over`,
	}
	if d := cmp.Diff(wantWhy, why); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
	// Again on the result: nothing to add.
	if add, _ := Plan(load(t, out), cands); len(add) != 0 {
		t.Errorf("second run adds %+v", add)
	}
}

// TestNamesDoNotCollide: a name taken by a module of another image falls
// back to the alternative; both taken is a skip, not an overwrite.
func TestNamesDoNotCollide(t *testing.T) {
	cat := load(t, []byte(`module "web" {
  image  = "registry.example.org/other"
  policy = "at-least-running"
  pin    = "1"
}
module "stack-web" {
  image  = "registry.example.org/third"
  policy = "at-least-running"
  pin    = "1"
}
`))
	c := Candidate{Name: "web", Alt: "stack-web", Image: "registry.example.org/web", Policy: catalogue.AtLeastRunning, Pin: "2", From: "x"}
	add, skip := Plan(cat, []Candidate{c})
	if len(add) != 0 || len(skip) != 1 || !strings.Contains(skip[0].Why, `a module named "web" already exists`) {
		t.Fatalf("add %+v skip %+v", add, skip)
	}
	cat.Modules = []*catalogue.Module{cat.Module("web")}
	add, _ = Plan(cat, []Candidate{c})
	if len(add) != 1 || add[0].Name != "stack-web" {
		t.Fatalf("add %+v, want stack-web", add)
	}
}

// TestFromHost: one module per Compose service whatever its replicas, one
// per plain container, none for what a module takes over or what never
// started.
func TestFromHost(t *testing.T) {
	cat := load(t, []byte(`host "dock" {}
module "db" {
  image  = "postgres"
  policy = "at-least-running"
  runs_on "dock" { container = "db" }
}
`))
	compose := func(svc string) map[string]string {
		return map[string]string{catalogue.ComposeProjectLabel: "stack", catalogue.ComposeServiceLabel: svc}
	}
	s := &host.Snapshot{Host: "dock", Containers: []host.Container{
		{ID: "1", Name: "stack-web-1", Image: "127.0.0.1:5000/pin/web:latest", State: "running", Labels: compose("web")},
		{ID: "2", Name: "stack-web-2", Image: "127.0.0.1:5000/pin/web:latest", State: "running", Labels: compose("web")},
		{ID: "3", Name: "db", Image: "postgres:16", State: "running"},
		{ID: "4", Name: "cache", Image: "redis:7", State: "exited"},
		{ID: "5", Name: "fresh", Image: "redis:7", State: "created"},
		{ID: "6", Name: "orphan", Pod: "orphan-x7", Workload: "replicaset/orphan", Image: "redis:7", State: "running"},
	}}
	cands, skips := FromHost(cat, "dock", s)
	add, more := Plan(cat, cands)
	skips = append(skips, more...)
	var got []string
	for _, c := range add {
		got = append(got, c.Name+" "+c.Image+" "+c.RunsOn.Compose+c.RunsOn.Container)
	}
	if d := cmp.Diff([]string{"cache redis cache", "web 127.0.0.1:5000/pin/web stack/web"}, got); d != "" {
		t.Errorf("added (-want +got):\n%s", d)
	}
	if len(skips) != 4 {
		t.Errorf("skipped %+v, want db (taken over), fresh (never started), a pod of a bare ReplicaSet, stack-web-2 (same service)", skips)
	}
	out := Render(nil, add)
	if _, diags := catalogue.Parse(catalogue.Source{Filename: "c.hcl", Bytes: append([]byte("host \"dock\" {}\n"), out...)}); diags.HasErrors() {
		t.Fatalf("rendered modules do not load: %v\n%s", diags, out)
	}
}

func TestFromManifests(t *testing.T) {
	src := []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: forge}
spec:
  template:
    spec:
      initContainers:
      - {name: migrate, image: "registry.example.org/forge/migrate:1.27"}
      containers:
      - {name: forge, image: "registry.example.org/forge/forgejo:1.27"}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: backup}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - {name: dump, image: "postgres:16"}
`)
	refs, objs, err := imageref.ManifestRefs("k.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, o := range objs {
		kinds[strings.ToLower(o.Kind)+"/"+o.Name] = o.Kind
	}
	cands, _, err := FromManifests(refs, kinds, "prod", catalogue.AtLeastRunning)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cands {
		got = append(got, c.Name+" "+c.Pin+" "+c.RunsOn.Workload+" "+c.RunsOn.Container)
	}
	want := []string{"forge-migrate 1.27 deployment/forge migrate", "forge-forge 1.27 deployment/forge forge", "backup 16 cronjob/backup dump"}
	// (forge holds two images, so each module is named after its container.)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("candidates (-want +got):\n%s", d)
	}
}

func TestAddDigests(t *testing.T) {
	cands := []Candidate{
		{Image: "postgres", Pin: "16", From: "a"},
		{Image: "registry.example.org/web", Pin: "1@sha256:00", From: "b"},
		{Image: "registry.example.org/host", From: "c"},
	}
	var asked []string
	err := AddDigests(context.Background(), cands, func(_ context.Context, repo, tag string) (string, error) {
		asked = append(asked, repo+":"+tag)
		return "sha256:ab", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"index.docker.io/library/postgres:16"}, asked); d != "" {
		t.Errorf("asked (-want +got):\n%s", d)
	}
	if cands[0].Pin != "16@sha256:ab" || cands[1].Pin != "1@sha256:00" || cands[2].Pin != "" {
		t.Errorf("pins %q %q %q", cands[0].Pin, cands[1].Pin, cands[2].Pin)
	}
}

// TestTrackUpstreamPins: under track-upstream a pin's tag chooses which
// versions to follow, so what init writes for a floating tag or a digest
// alone must be what the catalogue takes: the rendered file loads
// without a diagnostic, and says what the module follows.
func TestTrackUpstreamPins(t *testing.T) {
	const digest = "sha256:0123456789012345678901234567890123456789012345678901234567890123"
	for _, tc := range []struct{ pin, want, not string }{
		{"latest", `tag += "latest"`, `pin +=`},
		{"latest@" + digest, `tag += "latest"`, `pin +=`},
		{digest, "", `(pin|tag) +=`},
		{"1.27.3@" + digest, `pin += "1\.27\.3@` + digest + `"`, `tag +=`},
		{"artful", `tag += "artful"`, `pin +=`},
	} {
		t.Run(tc.pin, func(t *testing.T) {
			c := Candidate{Name: "web", Image: "registry.example.org/web", Policy: catalogue.TrackUpstream, Pin: tc.pin, From: "x"}
			out := Render(nil, []Candidate{c})
			if tc.want != "" && !regexp.MustCompile(tc.want).Match(out) || regexp.MustCompile(tc.not).Match(out) {
				t.Fatalf("rendered:\n%s\nwant %q and no %q", out, tc.want, tc.not)
			}
			load(t, out)
		})
	}
}
