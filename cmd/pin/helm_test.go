package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/lock"
)

// shopImages are the images of the shop chart (internal/helmvalues/
// testdata/shop): repository and the tag its values name.
var shopImages = [][2]string{
	{"registry.example.org/shop/web", "2.1.0"},
	{"registry.example.org/shop/worker", "2.1.0"},
	{"registry.example.org/shop/metrics", "7"},
	{"registry.example.org/shop/cache", "7.2"},
	{"registry.example.org/shop/proxy", "1.4"},
	{"registry.example.org/shop/ui", "3.0"},
	{"registry.example.org/shop/db", "16.2"},
}

// shopWorld is a world whose mirror holds every image of the shop chart
// at its tag, and a copy of the chart in its folder (w.dir/shop).
func shopWorld(t *testing.T) *world {
	t.Helper()
	w := newWorld(t)
	for _, im := range shopImages {
		w.tag(im[0], im[1], w.build(im[0]+":"+im[1], im[1], "2026-11-01T00:00:00Z"))
	}
	src := filepath.Join("..", "..", "internal", "helmvalues", "testdata", "shop")
	filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(w.dir, "shop", rel), 0o755)
		}
		b, _ := os.ReadFile(p)
		return os.WriteFile(filepath.Join(w.dir, "shop", rel), b, 0o644)
	})
	return w
}

// TestHelmInitResolveExport: from the shop chart's values alone (its ui
// image's tag marked # pin: ui, its module written by hand), pin init
// adds a module per image, one of them in the subchart; pin resolve
// locks them from the mirror; pin export --helm writes the lock into the
// values, --check failing before and passing after; and the real helm
// renders every container of the chart (the subchart's too) as
// repository[:tag]@<the locked digest>, its values schema still passing,
// with nothing in the values changed but the tags and digests.
func TestHelmInitResolveExport(t *testing.T) {
	w := shopWorld(t)
	w.write([]string{"registry.example.org"}, "module \"ui\" {\n  image  = \"registry.example.org/shop/ui\"\n  policy = \"at-least-running\"\n  pin    = \"3.0\"\n}\n")
	r := pin(t, w.dir, "init", "--helm", "shop")
	if r.code != 0 || strings.Count(r.stdout, "added ") != 6 {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, w.dir, "resolve", "--offline"); r.code != 0 {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lk, _, diags := lock.Load(filepath.Join(w.dir, "pin.lock.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	locked := map[string]string{} // repository → digest
	for _, m := range lk.Modules {
		locked[m.Image] = m.Digest
	}
	if len(locked) != len(shopImages) {
		t.Fatalf("locked %v", locked)
	}
	values := filepath.Join(w.dir, "shop", "values.yaml")
	before, _ := os.ReadFile(values)
	sub, _ := os.ReadFile(filepath.Join(w.dir, "shop", "charts", "db", "values.yaml"))
	if r := pin(t, w.dir, "export", "--helm", "shop", "--offline", "--check"); r.code != exitFindings {
		t.Fatalf("export --check before: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, w.dir, "export", "--helm", "shop", "--offline"); r.code != 0 {
		t.Fatalf("export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, w.dir, "export", "--helm", "shop", "--offline", "--check"); r.code != 0 {
		t.Fatalf("export --check after: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	after, _ := os.ReadFile(values)
	onlyValuesChanged(t, string(before), string(after), 7)
	if got, _ := os.ReadFile(filepath.Join(w.dir, "shop", "charts", "db", "values.yaml")); string(got) != string(sub) {
		t.Errorf("the subchart's values changed:\n%s", got)
	}

	helm := testenv.Helm(t)
	out := testenv.HelmRun(t, helm, w.dir, "template", "rel", "shop")
	images := renderedImages(t, out)
	if len(images) != len(shopImages) {
		t.Fatalf("rendered %d images, want %d:\n%s", len(images), len(shopImages), out)
	}
	for _, img := range images {
		m := regexp.MustCompile(`^([^:@]+(?::[0-9]+)?/[^:@]+)(?::[^@]+)?@(sha256:[0-9a-f]{64})$`).FindStringSubmatch(img)
		if m == nil {
			t.Errorf("helm renders %s, not pinned by digest", img)
		} else if locked[m[1]] != m[2] {
			t.Errorf("helm renders %s, want %s@%s", img, m[1], locked[m[1]])
		}
	}
}

// onlyValuesChanged checks that after is before with n lines changed,
// each only in its value: the text before the value (the key) and after
// it (a comment) are kept.
func onlyValuesChanged(t *testing.T, before, after string, n int) {
	t.Helper()
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	if len(a) != len(b) {
		t.Fatalf("lines %d, were %d:\n%s", len(a), len(b), after)
	}
	changed := 0
	for i := range b {
		if a[i] == b[i] {
			continue
		}
		changed++
		key, _, _ := strings.Cut(b[i], ": ")
		_, comment, _ := strings.Cut(b[i], " #")
		if !strings.HasPrefix(a[i], key+": ") || !strings.HasSuffix(a[i], comment) || !strings.Contains(a[i], "sha256:") {
			t.Errorf("line %d: %q became %q", i+1, b[i], a[i])
		}
	}
	if changed != n {
		t.Errorf("%d lines changed, want %d:\n%s", changed, n, after)
	}
}

// renderedImages are the images of every container of helm template's
// output.
func renderedImages(t *testing.T, out string) []string {
	t.Helper()
	var images []string
	for _, doc := range strings.Split(out, "\n---") {
		var obj struct {
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct{ Image string }
					}
				}
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("helm template output: %v\n%s", err, doc)
		}
		for _, c := range obj.Spec.Template.Spec.Containers {
			images = append(images, c.Image)
		}
	}
	slices.Sort(images)
	return images
}

// TestHelmNeverWritesOlder: a lock entry older than the image the values
// render (the worker locked at 2.0.0, the values rendering 2.1.0) is
// refused at its line, nothing written, --check failing too.
func TestHelmNeverWritesOlder(t *testing.T) {
	w := shopWorld(t)
	w.tag("registry.example.org/shop/worker", "2.0.0", w.build("registry.example.org/shop/worker:2.0.0", "2.0.0", "2026-10-01T00:00:00Z"))
	w.write([]string{"registry.example.org"}, "module \"ui\" {\n  image  = \"registry.example.org/shop/ui\"\n  policy = \"at-least-running\"\n  pin    = \"3.0\"\n}\n")
	if r := pin(t, w.dir, "init", "--helm", "shop"); r.code != 0 {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	editFile(t, filepath.Join(w.dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, "registry.example.org/shop/worker\"\n  policy = \"at-least-running\"\n  pin    = \"2.1.0\"", "registry.example.org/shop/worker\"\n  policy = \"at-least-running\"\n  pin    = \"2.0.0\"", 1)
	})
	if r := pin(t, w.dir, "resolve", "--offline"); r.code != 0 {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	before := snapshotOf(t, w.dir)
	for _, check := range []bool{false, true} {
		args := []string{"export", "--helm", "shop", "--offline"}
		if check {
			args = append(args, "--check")
		}
		r := pin(t, w.dir, args...)
		if r.code != exitFindings || !strings.Contains(r.stderr, "shop/values.yaml:12: refused: module worker's lock names registry.example.org/shop/worker:2.0.0@sha256:") || !strings.Contains(r.stderr, "older than the registry.example.org/shop/worker:2.1.0 written here (version: version 2.0.0 < 2.1.0)") {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	for p, b := range snapshotOf(t, w.dir) {
		if before[p] != b {
			t.Errorf("%s written", p)
		}
	}
}
