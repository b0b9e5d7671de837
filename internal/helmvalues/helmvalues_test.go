package helmvalues

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestShopImages: every image of the shop chart is found with the values
// path and the reference the chart renders; the subchart's repository is
// its own values', its tag the parent's.
func TestShopImages(t *testing.T) {
	c, err := Read(filepath.Join("testdata", "shop"))
	if err != nil {
		t.Fatal(err)
	}
	found := c.Images()
	var got []string
	for _, img := range found.Images {
		s := fmt.Sprintf("%s %s %s", img.Path, img.Ref, filepath.Base(img.Where))
		if img.Tag != nil {
			s += " tag@" + filepath.Base(img.Tag.Where())
		}
		if img.Marker != nil {
			s += " marker=" + img.Marker.Module + "/" + img.Marker.Part
		}
		got = append(got, s)
	}
	want := []string{
		"db.image registry.example.org/shop/db:16.2 values.yaml:1 tag@values.yaml:36",
		"image registry.example.org/shop/web:2.1.0 values.yaml:3 tag@values.yaml:6",
		"worker.image registry.example.org/shop/worker:2.1.0 values.yaml:12 tag@values.yaml:14",
		"metrics.image registry.example.org/shop/metrics:7 values.yaml:17 tag@values.yaml:19",
		"cache.image registry.example.org/shop/cache:7.2 values.yaml:22",
		"sidecars[0].image registry.example.org/shop/proxy:1.4 values.yaml:26",
		"ui.version 3.0 values.yaml:31 tag@values.yaml:31 marker=ui/tag",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("images (-want +got):\n%s", d)
	}
}

// TestBorrowedAndGlobal: a component map without a tag reads the root's
// image.tag, else global.image.tag, else the appVersion; a byte-order
// mark is read past, its lines kept.
func TestBorrowedAndGlobal(t *testing.T) {
	for _, tc := range []struct{ values, want string }{
		{"image: {repository: r.example/web, tag: \"2.1\"}\nworker:\n  image: {repository: r.example/worker}\n", "r.example/worker:2.1 image.tag true"},
		{"\xef\xbb\xbfglobal:\n  image: {repository: r.example/web, tag: \"2.2\"}\nworker:\n  image: {repository: r.example/worker}\n", "r.example/worker:2.2 global.image.tag true"},
		{"worker:\n  image: {repository: r.example/worker}\n", "r.example/worker:9.9 appVersion false"},
	} {
		f, err := ParseFile("values.yaml", []byte(tc.values), "", "9.9")
		if err != nil {
			t.Fatal(err)
		}
		c := &Chart{Name: "shop", AppVersion: "9.9", Files: []*File{f}}
		var got string
		for _, img := range c.Images().Images {
			if img.Path == "worker.image" {
				got = fmt.Sprintf("%s %s %v", img.Ref, img.TagFrom, img.TagBorrowed)
			}
		}
		if got != tc.want {
			t.Errorf("%q: worker %q, want %q", tc.values, got, tc.want)
		}
	}
}

// TestArgs: a reference inside an argument or under a key not read as an
// image's is found; a repository with a registry port is not one.
func TestArgs(t *testing.T) {
	f, err := ParseFile("values.yaml", []byte("image:\n  repository: localhost:5000/shop/web\n  tag: \"1\"\nargs: [\"--helper=localhost:5000/shop/helper:1.0\"]\nurl: https://example.org/a:b\n"), "", "")
	if err != nil {
		t.Fatal(err)
	}
	found := (&Chart{Files: []*File{f}}).Images()
	var got []string
	for _, a := range found.Args {
		got = append(got, a.Path+" "+a.Ref)
	}
	if d := cmp.Diff([]string{"args[0] localhost:5000/shop/helper:1.0"}, got); d != "" || len(found.Images) != 1 || found.Images[0].Ref != "localhost:5000/shop/web:1" {
		t.Errorf("args (-want +got):\n%s\nimages %+v", d, found.Images)
	}
}
