package catalogue

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
