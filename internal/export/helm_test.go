package export

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/helmvalues"
	"github.com/pin-tool/pin/lock"
)

// shopModules are a module per image of the shop chart, each locked at
// digest sha256:<n>…, n its place here.
var shopModules = []struct{ name, image, tag string }{
	{"shop", "registry.example.org/shop/web", "2.1.0"},
	{"worker", "registry.example.org/shop/worker", "2.1.0"},
	{"metrics", "registry.example.org/shop/metrics", "7"},
	{"cache", "registry.example.org/shop/cache", "7.2"},
	{"sidecars-0", "registry.example.org/shop/proxy", "1.4"},
	{"ui", "registry.example.org/shop/ui", "3.0"},
	{"db", "registry.example.org/shop/db", "16.2"},
}

func digestN(i int) string { return "sha256:" + strings.Repeat(fmt.Sprint(i+1), 64) }

func shopCoverage(t *testing.T, extra string) *Coverage {
	t.Helper()
	src := extra
	lk := &lock.Lock{}
	for i, m := range shopModules {
		src += fmt.Sprintf("module %q {\n  image  = %q\n  policy = \"at-least-running\"\n  pin    = %q\n}\n", m.name, m.image, m.tag)
		lk.Modules = append(lk.Modules, &lock.Module{Name: m.name, Image: m.image, Tag: m.tag, Digest: digestN(i)})
	}
	cat, diags := catalogue.Parse(catalogue.Source{Filename: "c.hcl", Bytes: []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return NewCoverage(cat, lk)
}

// copyChart copies the chart folder src to a temporary folder.
func copyChart(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestHelmWritesOnlyTagsAndDigests: the shop chart's values get the lock:
// a digest field its digest (the tag left as it is when it is the
// lock's), a tag field with no digest field tag@digest (quoted where the
// plain value would not read as a string), a whole reference the locked
// reference as the file spells its repository, the subchart's tag in the
// parent's values; every other byte stays, and a second run over the
// result changes nothing.
func TestHelmWritesOnlyTagsAndDigests(t *testing.T) {
	dir := copyChart(t, filepath.Join("..", "helmvalues", "testdata", "shop"))
	cov := shopCoverage(t, "")
	c, err := helmvalues.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Helm(cov, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 0 {
		t.Fatalf("skipped %+v", res.Skipped)
	}
	old := string(c.Files[0].Src)
	want := old
	for _, r := range []struct{ from, to string }{
		{`digest: ""`, `digest: "` + digestN(0) + `"`},
		{`tag: ""   # empty`, `tag: "2.1.0@` + digestN(1) + `"   # empty`},
		{"tag: 7\n", "tag: 7@" + digestN(2) + "\n"},
		{`'registry.example.org/shop/cache:7.2'`, `'registry.example.org/shop/cache:7.2@` + digestN(3) + `'`},
		{"proxy:1.4\n", "proxy:1.4@" + digestN(4) + "\n"},
		{`version: "3.0"`, `version: "3.0@` + digestN(5) + `"`},
		{`tag: "16.2"`, `tag: "16.2@` + digestN(6) + `"`},
	} {
		if strings.Count(want, r.from) != 1 {
			t.Fatalf("%q is not once in the values", r.from)
		}
		want = strings.Replace(want, r.from, r.to, 1)
	}
	var got []string
	for _, f := range res.Files {
		got = append(got, filepath.Base(filepath.Dir(f.Path))+"/"+filepath.Base(f.Path))
		if f.Path == c.Files[0].Path {
			if d := cmp.Diff(want, string(f.Bytes)); d != "" {
				t.Errorf("values.yaml (-want +got):\n%s", d)
			}
		} else if string(f.Bytes) != string(f.Old) {
			t.Errorf("%s changed:\n%s", f.Path, f.Bytes)
		}
	}
	if d := cmp.Diff([]string{"shop/values.yaml", "db/values.yaml"}, got); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	// Again over the result: nothing changes.
	os.WriteFile(c.Files[0].Path, res.Files[0].Bytes, 0o644)
	c, _ = helmvalues.Read(dir)
	res, err = Helm(cov, c)
	if err != nil || res.Files[0].Changed() || len(res.Skipped) != 0 {
		t.Errorf("second run: %v, skipped %+v\n%s", err, res.Skipped, res.Files[0].Bytes)
	}
}

// TestHelmBorrowedTagAndArguments: a component without a tag of its own
// borrows the chart's image.tag; writing one tag@digest there would give
// both images one digest, so both are refused with what to add, nothing
// written there. An image named only inside a container argument is
// found and said, never skipped silently. A values repository other than
// the module's is not rewritten.
func TestHelmBorrowedTagAndArguments(t *testing.T) {
	dir := t.TempDir()
	writeChart := func(values string) *helmvalues.Chart {
		os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: shop\nversion: 0.1.0\nappVersion: \"2.1.0\"\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "values.yaml"), []byte(values), 0o644)
		c, err := helmvalues.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cov := shopCoverage(t, "")
	values := `image:
  repository: registry.example.org/shop/web
  tag: "2.1.0"
worker:
  image:
    repository: registry.example.org/shop/worker
  args: ["--cache-image=registry.example.org/shop/cache:7.2", "-v"]
  helper: registry.example.org/shop/proxy:1.4
`
	res, err := Helm(cov, writeChart(values))
	if err != nil {
		t.Fatal(err)
	}
	var why []string
	for _, s := range res.Skipped {
		if !s.Unwritten {
			t.Errorf("not counted as unwritten: %+v", s)
		}
		why = append(why, s.What+": "+s.Why)
	}
	wantWhy := []string{
		filepath.Join(dir, "values.yaml") + `:1, image: its tag is image.tag (` + filepath.Join(dir, "values.yaml") + `:3), which image, worker.image read too: one value cannot pin them all at their own digests; add digest: "" (or tag: "") to image so that it has its own`,
		filepath.Join(dir, "values.yaml") + `:5, worker.image: its tag is image.tag (` + filepath.Join(dir, "values.yaml") + `:3), which image, worker.image read too: one value cannot pin them all at their own digests; add digest: "" (or tag: "") to worker.image so that it has its own`,
		filepath.Join(dir, "values.yaml") + `:7, worker.args[0]: it names registry.example.org/shop/cache:7.2 in "--cache-image=registry.example.org/shop/cache:7.2", a value pin does not read as an image (a container argument, a key not named image): pin does not write it there; give the image a key of its own, or mark the value with # pin: cache`,
		filepath.Join(dir, "values.yaml") + `:8, worker.helper: it names registry.example.org/shop/proxy:1.4 in "registry.example.org/shop/proxy:1.4", a value pin does not read as an image (a container argument, a key not named image): pin does not write it there; give the image a key of its own, or mark the value with # pin: sidecars-0`,
	}
	if d := cmp.Diff(wantWhy, why); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
	if res.Files[0].Changed() {
		t.Errorf("values written:\n%s", res.Files[0].Bytes)
	}
	// With a digest field of its own, the worker is written there; the
	// web image's tag@digest would still be read by the worker: refused.
	res, err = Helm(cov, writeChart(strings.Replace(values, "    repository: registry.example.org/shop/worker\n", "    repository: registry.example.org/shop/worker\n    digest: \"\"\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	got := string(res.Files[0].Bytes)
	if strings.Contains(got, `tag: "2.1.0@`) || !strings.Contains(got, `digest: "`+digestN(1)+`"`) || len(res.Skipped) != 3 || !strings.HasPrefix(res.Skipped[0].What, filepath.Join(dir, "values.yaml")+":1, image") {
		t.Errorf("skipped %+v\n%s", res.Skipped, got)
	}
	// Another repository in the values than the module's: refused.
	res, _ = Helm(shopCoverage(t, ""), writeChart("cache:\n  image: registry.example.org/other/cache:7.2 # pin: cache\n"))
	if len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Why, "only the tag and digest are pin's to write") || res.Files[0].Changed() {
		t.Errorf("another repository: %+v\n%s", res.Skipped, res.Files[0].Bytes)
	}
}
