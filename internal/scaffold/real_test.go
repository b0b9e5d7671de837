package scaffold

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/compose"
	"github.com/pin-tool/pin/internal/imageref"
)

// runOn runs init on an empty catalogue in a temporary folder with what
// was found, and returns the report and the catalogue written.
func runOn(t *testing.T, f Found, o Options) (*Report, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalogue.hcl")
	cur, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), cur, f, o)
	if err != nil {
		t.Fatalf("init: %v", err)
	}
	b, _ := os.ReadFile(path)
	if rep.Written {
		load(t, b)
	}
	return rep, string(b)
}

func manifestsOf(t *testing.T, file string) Found {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	refs, objs, err := imageref.ManifestRefs(file, src)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, o := range objs {
		kinds[strings.ToLower(o.Kind)+"/"+o.Name] = o.Kind
	}
	return Found{Manifests: refs, Kinds: kinds}
}

func added(rep *Report) []string {
	var out []string
	for _, c := range rep.Added {
		pin, tag := Written(c)
		out = append(out, c.Name+" "+c.Image+" pin="+pin+" tag="+tag)
	}
	return out
}

// TestTaglessImagesAreLatest: a Compose file whose services name images
// without a tag (as well-known projects' own files do) is imported whole:
// a tagless image is the latest tag Compose runs it as, said so above its
// module; a second service of the very same image is covered by the
// first, not left out.
func TestTaglessImagesAreLatest(t *testing.T) {
	file := filepath.Join("testdata", "real", "compose.yaml")
	p, err := compose.Load(context.Background(), compose.Options{Files: []string{file}, Env: []string{}, Profiles: []string{}, ProjectName: "social"})
	if err != nil {
		t.Fatal(err)
	}
	for _, policy := range []catalogue.Policy{catalogue.AtLeastRunning, catalogue.Exact, catalogue.TrackUpstream} {
		rep, cat := runOn(t, Found{Project: p}, Options{Policy: policy})
		want := []string{"db postgres pin=14-alpine tag=", "shell ubuntu pin=latest tag=", "web example/social pin=latest tag="}
		if policy == catalogue.TrackUpstream {
			// 14-alpine is a version of one part (postgres:14): a pin, not a floating tag.
			want = []string{"db postgres pin=14-alpine tag=", "shell ubuntu pin= tag=latest", "web example/social pin= tag=latest"}
		}
		if d := cmp.Diff(want, added(rep)); d != "" {
			t.Errorf("%s: added (-want +got):\n%s\n%s", policy, d, cat)
		}
		if rep.Left() != 0 || len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Why, `module "web" already has image example/social:latest`) {
			t.Errorf("%s: skipped %+v", policy, rep.Skipped)
		}
		if !strings.Contains(cat, "# ubuntu names no tag: Compose runs it as ubuntu:latest, so the module follows latest.\nmodule \"shell\"") {
			t.Errorf("%s: no word of latest above shell:\n%s", policy, cat)
		}
	}
}

// TestLeftOutIsPerModule: a module that would not load is left out with
// what the catalogue would say of it and where it was read, never with a
// line of the catalogue init has not written; the others are written.
func TestLeftOutIsPerModule(t *testing.T) {
	cur := &Current{Target: "catalogue.hcl"}
	good := Candidate{Name: "db", Image: "postgres", Policy: catalogue.AtLeastRunning, Pin: "16", From: "compose.yaml:4, service db"}
	bad := Candidate{Name: "web", Image: "example/social", Policy: catalogue.AtLeastRunning, From: "compose.yaml:6, service web"}
	ok, left := cur.loadable(nil, []Candidate{bad, good})
	if len(ok) != 1 || ok[0].Name != "db" || len(left) != 1 {
		t.Fatalf("kept %+v, left %+v", ok, left)
	}
	if l := left[0]; !l.Left || l.What != bad.From || !strings.Contains(l.Why, "Nothing to lock") || !strings.Contains(l.Why, "Add pin") || strings.Contains(l.Why, "catalogue.hcl") {
		t.Errorf("left out: %+v", l)
	}
}

// TestTwoTagsOfOneRepository: two Deployments of one repository at two
// tags are two modules, each pinned at its own, the second saying so;
// never one module pinned at the first with the second skipped.
func TestTwoTagsOfOneRepository(t *testing.T) {
	rep, cat := runOn(t, manifestsOf(t, filepath.Join("testdata", "real", "two-tags.yaml")), Options{Policy: catalogue.AtLeastRunning})
	want := []string{"nginx-deployment nginx pin=1.7.9 tag=", "nginx2-deployment nginx pin=1.22.1 tag="}
	if d := cmp.Diff(want, added(rep)); d != "" || len(rep.Skipped) != 0 {
		t.Fatalf("added (-want +got):\n%s\nskipped %+v", d, rep.Skipped)
	}
	if !strings.Contains(cat, `# Module "nginx-deployment" has this repository at another image (nginx:1.7.9)`) {
		t.Errorf("the second module does not say so:\n%s", cat)
	}
}

// TestObjectOfSeveralContainers: the modules of an object holding several
// containers are named <object>-<container>, whether or not their images
// share a repository.
func TestObjectOfSeveralContainers(t *testing.T) {
	found := manifestsOf(t, filepath.Join("testdata", "real", "pair.yaml"))
	for _, o := range []Options{{Policy: catalogue.AtLeastRunning}, {Policy: catalogue.AtLeastRunning, Host: "prod"}} {
		cands, _, err := FromManifests(found.Manifests, found.Kinds, o.Host, o.Policy)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range cands {
			names = append(names, c.Name)
		}
		if d := cmp.Diff([]string{"pair-nginx", "pair-nginx2"}, names); d != "" {
			t.Errorf("host %q: names (-want +got):\n%s", o.Host, d)
		}
	}
}

// TestByteOrderMark: a manifest or a Compose file that starts with a
// byte-order mark is read, with its lines.
func TestByteOrderMark(t *testing.T) {
	rep, _ := runOn(t, manifestsOf(t, filepath.Join("testdata", "real", "bom.yaml")), Options{Policy: catalogue.AtLeastRunning})
	if len(rep.Added) != 1 || !strings.HasPrefix(rep.Added[0].From, filepath.Join("testdata", "real", "bom.yaml")+":10,") {
		t.Errorf("manifest: %+v", rep.Added)
	}
	file := filepath.Join("testdata", "real", "bom-compose.yaml")
	p, err := compose.Load(context.Background(), compose.Options{Files: []string{file}, Env: []string{}, Profiles: []string{}, ProjectName: "bom"})
	if err != nil {
		t.Fatal(err)
	}
	rep, _ = runOn(t, Found{Project: p}, Options{Policy: catalogue.AtLeastRunning})
	if len(rep.Added) != 1 || rep.Added[0].From != file+":3, service web" {
		t.Errorf("compose: %+v", rep.Added)
	}
}
