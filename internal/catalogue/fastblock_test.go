package catalogue

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// sameAsHCL checks that, when fastBlock takes src, hclsyntax parses src
// without a diagnostic into the same syntax tree, every field (unexported
// ones too) compared. It returns whether fastBlock took it.
func sameAsHCL(t *testing.T, src []byte, start hcl.Pos) bool {
	t.Helper()
	fast, ok := fastBlock(src, "f.hcl", start)
	if !ok {
		return false
	}
	slow, diags := hclsyntax.ParseConfig(src, "f.hcl", start)
	if len(diags) > 0 {
		t.Fatalf("fastBlock took %q, which hclsyntax refuses: %v", src, diags)
	}
	if d := cmp.Diff(slow.Body, fast.Body, cmp.Exporter(func(reflect.Type) bool { return true })); d != "" {
		t.Fatalf("fastBlock's tree of %q differs from hclsyntax's (-hclsyntax +fast):\n%s", src, d)
	}
	return true
}

// TestFastBlockCatalogues: every piece of the test catalogues and of a
// fleet written as pinbench writes one is either left to hclsyntax or
// read into hclsyntax's very tree; the plain ones are read fast.
func TestFastBlockCatalogues(t *testing.T) {
	var files []string
	for _, root := range []string{"testdata", "../../examples"} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(path, ".hcl") && !strings.HasSuffix(path, ".lock.hcl") {
				files = append(files, path)
			}
			return nil
		})
	}
	if len(files) < 5 {
		t.Fatalf("%d catalogues", len(files))
	}
	fast, all := 0, 0
	for _, f := range append(files, "../../catalogue.hcl") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range splitBlocks(b) {
			all++
			if sameAsHCL(t, b[p.Byte:p.end], p.Pos) {
				fast++
			}
		}
	}
	t.Logf("%d of %d pieces of the test catalogues read fast", fast, all)
	if fast == 0 {
		t.Error("no piece of the test catalogues read fast")
	}

	// A fleet as pinbench writes it: every block but those with a nested
	// block (runs_on) is plain.
	src := fleetCatalogue(200)
	fast, all = 0, 0
	for _, p := range splitBlocks(src) {
		all++
		if sameAsHCL(t, src[p.Byte:p.end], p.Pos) {
			fast++
		}
	}
	// The first piece has the comment; 20 modules have runs_on.
	if want := all - 1 - 20; fast != want {
		t.Errorf("%d of %d pieces of the fleet read fast, want %d", fast, all, want)
	}
	// And the catalogue read from them is the one read whole.
	whole, diags := parseWhole([]Source{{Filename: "fleet.hcl", Bytes: src}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	blocks, ok := parseInBlocks([]Source{{Filename: "fleet.hcl", Bytes: src}})
	if !ok {
		t.Fatal("the fleet is not read in blocks")
	}
	opts := cmp.Options{cmp.Exporter(func(reflect.Type) bool { return true }), cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Files" }, cmp.Ignore())}
	if d := cmp.Diff(whole, blocks, opts); d != "" {
		t.Errorf("the fleet in blocks (-whole +blocks):\n%s", d)
	}
}

// fleetCatalogue writes n modules as pinbench writes a fleet: a registry,
// 50 snapshot hosts, modules pinned by tag and digest, one in five on
// calendar versions, one in ten running on a host (runs_on).
func fleetCatalogue(n int) []byte {
	var b strings.Builder
	b.WriteString("# fleet\n\nregistry \"127.0.0.1:5000\" {\n  insecure = true\n}\n\n")
	for i := range 50 {
		fmt.Fprintf(&b, "host \"h-%d\" {\n  snapshot = \"h-%d.json\"\n}\n", i, i)
	}
	for i := range n {
		pin := fmt.Sprintf("1.2.%d", i)
		if i%5 == 0 {
			pin = fmt.Sprintf("2026.01.%02d", 1+i%28) // a calendar version
		}
		fmt.Fprintf(&b, "\nmodule \"m-%04d\" {\n  image  = \"127.0.0.1:5000/p/m-%04d\"\n  policy = \"track-upstream\"\n  pin    = \"%s@sha256:%064d\"\n", i, i, pin, i)
		if i%5 == 0 {
			b.WriteString("  versioning = \"calver\"\n  prerelease = false\n")
		}
		if i%10 == 0 {
			fmt.Fprintf(&b, "  runs_on %q { container = \"c\" }\n", fmt.Sprint("h-", i%50))
		}
		b.WriteString("}\n")
	}
	return []byte(b.String())
}

// BenchmarkParseFleet1100 reads a 1,100-module catalogue as pin does.
func BenchmarkParseFleet1100(b *testing.B) {
	src := fleetCatalogue(1100)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, diags := Parse(Source{Filename: "fleet.hcl", Bytes: src}); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}

// FuzzFastBlock: whatever fastBlock takes, hclsyntax parses into the same
// tree.
func FuzzFastBlock(f *testing.F) {
	for _, s := range []string{
		"module \"a\" {\n  image  = \"r.example/a\"\n  one_way = true\n}\n\n",
		"module \"a\" {\n  pin = \"1@sha256:00\"\n}",
		"module \"a\" {\n  x = false\n  x = true\n}\n",
		"host \"h\" {\n  snapshot = \"s.json\"\n}\n",
		"module \"a\" {\n}\n",
		"module \"a\" {\n  tag = \"\"\n}\n",
		"module \"a-b_c\" {\n  any_variant=true\n}\n\n\n",
		"module \"a\" {\n  image = \"x\" # c\n}\n",
		"module \"a\" {\n\timage = \"x\"\n}\n",
		"module \"a\" {\n  image = \"x\"\n }\n",
		"module \"a\" {\n  image = \"x\"\n}\n# next\n",
		"module \"a\" {\n  image = \"x\"\n}\r\n",
		"module \"a\" {\n  9x = \"x\"\n}\n",
		"module \"a\" {\n  x- = \"x\"\n}\n",
		"module \"a\" {\n  image = \"${var}\"\n}\n",
		"module \"a\" {\n  image = \"a$${b}\"\n}\n",
		"module \"a\" {\n  image = \"%{ if true }x%{ endif }\"\n}\n",
		"module \"a\" {\n  image = \"a\\\"b\"\n}\n",
		"module \"a\" {\n  image = \"a\\nb\"\n}\n",
		"module \"${x}\" {\n  image = \"x\"\n}\n",
		"module \"é\" {\n  image = \"x\"\n}\n",
		"module \"a\" {\n  image = \"é\"\n}\n",
	} {
		f.Add(s, 3, 7)
	}
	f.Fuzz(func(t *testing.T, src string, line, byteOff int) {
		if line < 1 || line > 1e6 || byteOff < 0 || byteOff > 1e9 {
			return
		}
		sameAsHCL(t, []byte(src), hcl.Pos{Line: line, Column: 1, Byte: byteOff})
	})
}
