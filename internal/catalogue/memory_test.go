package catalogue

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
)

// TestFilesWithoutSyntax: a catalogue that loads without a diagnostic
// keeps its files' bytes (for quoting) and not their syntax trees, most of
// its memory; one with a diagnostic keeps the tree, so that each
// diagnostic says which block it is in.
func TestFilesWithoutSyntax(t *testing.T) {
	good := `module "web" {
  image  = "registry.example.org/web"
  policy = "track-upstream"
  pin    = "1.2.3@sha256:` + strings.Repeat("a", 64) + `"
}
`
	c, diags := Parse(Source{Filename: "good.hcl", Bytes: []byte(good)})
	if diags.HasErrors() || len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	f := c.Files["good.hcl"]
	if f == nil || string(f.Bytes) != good {
		t.Fatalf("file bytes not kept: %+v", f)
	}
	if f.Body != nil || f.Nav != nil {
		t.Error("the syntax tree of a catalogue without diagnostics was kept")
	}
	if len(c.Modules) != 1 || c.Modules[0].Pin.Tag != "1.2.3" {
		t.Fatalf("modules: %+v", c.Modules)
	}

	bad := strings.Replace(good, `"track-upstream"`, `"sometimes"`, 1)
	c, diags = Parse(Source{Filename: "bad.hcl", Bytes: []byte(bad)})
	if !diags.HasErrors() {
		t.Fatal("no error for an unknown policy")
	}
	if f := c.Files["bad.hcl"]; f == nil || f.Body == nil {
		t.Fatal("the syntax tree of a catalogue with diagnostics was dropped")
	}
	var b strings.Builder
	if err := hcl.NewDiagnosticTextWriter(&b, c.Files, 0, false).WriteDiagnostics(diags); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `in module "web"`) {
		t.Errorf("diagnostic without its block:\n%s", b.String())
	}

	// Load, from a file, drops it too.
	p := filepath.Join(t.TempDir(), "catalogue.hcl")
	if err := os.WriteFile(p, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	c, diags = Load(p)
	if len(diags) != 0 {
		t.Fatal(diags)
	}
	if f := c.Files[p]; f == nil || f.Body != nil || string(f.Bytes) != good {
		t.Errorf("Load kept %+v", f)
	}
}

// TestParseInBlocks: reading a catalogue a top-level block at a time gives
// what parsing it whole gives, positions included; a file that does not
// split cleanly (a line starting "module " inside a heredoc or a comment)
// or that has any diagnostic is parsed whole.
func TestParseInBlocks(t *testing.T) {
	files, _ := filepath.Glob("testdata/good/*.hcl")
	more, _ := filepath.Glob("testdata/kubernetes/*.hcl")
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no catalogues")
	}
	opts := cmp.Options{cmpopts.IgnoreFields(Catalogue{}, "Files"), cmp.Exporter(func(reflect.Type) bool { return true })}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs := []Source{{Filename: f, Bytes: b}}
		whole, diags := parseWhole(srcs)
		blocks, ok := parseInBlocks(srcs)
		if diags.HasErrors() {
			if ok {
				t.Errorf("%s: read in blocks although it has errors: %v", f, diags)
			}
			continue
		}
		if len(diags) > 0 {
			continue // warnings: parsed whole, so that they say where they are
		}
		if !ok {
			t.Errorf("%s: not read in blocks", f)
			continue
		}
		if diff := cmp.Diff(whole, blocks, opts); diff != "" {
			t.Errorf("%s: in blocks (-whole +blocks):\n%s", f, diff)
		}
	}

	pin := "1.2.3@sha256:" + strings.Repeat("a", 64)
	tricky := map[string]string{
		"heredoc": "host \"h\" {\n  snapshot = \"s.json\"\n}\nmodule \"a\" {\n  image  = \"r.example/a\"\n  policy = \"track-upstream\"\n  pin    = \"" + pin + "\"\n  runs_on \"h\" {\n    container = <<EOT\nmodule \"b\" {\nEOT\n  }\n}\n",
		"comment": "/*\nmodule \"b\" {\n*/\nmodule \"a\" {\n  image  = \"r.example/a\"\n  policy = \"track-upstream\"\n  pin    = \"" + pin + "\"\n}\n",
	}
	for name, src := range tricky {
		srcs := []Source{{Filename: name + ".hcl", Bytes: []byte(src)}}
		if _, ok := parseInBlocks(srcs); ok {
			t.Errorf("%s: split inside a %s and read in blocks", name, name)
		}
		c, diags := Parse(srcs...)
		if len(diags) > 0 || len(c.Modules) != 1 || c.Modules[0].Name != "a" {
			t.Errorf("%s: Parse = %d modules, %v", name, len(c.Modules), diags)
		}
	}
	// Positions: the second block's range is where it is in the file.
	src := "# fleet\n\nmodule \"a\" {\n  image  = \"r.example/a\"\n  policy = \"track-upstream\"\n  pin    = \"" + pin + "\"\n}\n\nmodule \"b\" {\n  image  = \"r.example/b\"\n  policy = \"track-upstream\"\n  pin    = \"" + pin + "\"\n}\n"
	c, ok := parseInBlocks([]Source{{Filename: "p.hcl", Bytes: []byte(src)}})
	if !ok {
		t.Fatal("not read in blocks")
	}
	whole, _ := parseWhole([]Source{{Filename: "p.hcl", Bytes: []byte(src)}})
	if diff := cmp.Diff(whole, c, opts); diff != "" {
		t.Errorf("positions (-whole +blocks):\n%s", diff)
	}
	// Where an attribute's value is, as diagnostics after loading say it:
	// b's pin is on line 12, its value from column 12 to the line's end.
	got, ok := c.Module("b").AttrRange("pin")
	at := strings.LastIndex(src, `"`+pin+`"`)
	want := hcl.Range{Filename: "p.hcl", Start: hcl.Pos{Line: 12, Column: 12, Byte: at}, End: hcl.Pos{Line: 12, Column: 12 + len(pin) + 2, Byte: at + len(pin) + 2}}
	if !ok || got != want {
		t.Errorf("AttrRange(pin) = %v, %v; want %v", got, ok, want)
	}
	if got, ok := c.Module("b").AttrRange("tag"); ok {
		t.Errorf("AttrRange(tag) of a module without one = %v", got)
	}
}
