package catalogue

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
)

// TestExportBlock: the block's paths are joined to the catalogue file's
// folder (absolute ones kept), profiles = [] is "none" rather than
// COMPOSE_PROFILES, and every setting is read.
func TestExportBlock(t *testing.T) {
	c, diags := Load("testdata/export")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	dir := filepath.Join("testdata", "export")
	want := &Export{
		Compose: []ComposeExport{
			{Files: []string{filepath.Join(dir, "compose.yaml"), filepath.Join(dir, "compose.prod.yaml")}, ProjectName: "stack", Profiles: []string{}},
			{Files: []string{"/srv/other/compose.yaml"}, InPlace: true},
		},
		Manifests: []string{filepath.Join(dir, "deploy")},
		Kustomize: []string{filepath.Join(dir, "overlays", "prod")},
		Env:       []string{filepath.Join(dir, "deploy.env")},
	}
	if diff := cmp.Diff(want, c.Export, cmpopts.IgnoreUnexported(Export{}), cmpopts.IgnoreFields(Export{}, "DeclRange")); diff != "" {
		t.Errorf("export (-want +got):\n%s", diff)
	}
	if c.Export.DeclRange.Start.Line != 2 || c.Export.Compose[1].Profiles != nil {
		t.Errorf("range %v, profiles of the second project %#v (want nil: COMPOSE_PROFILES)", c.Export.DeclRange, c.Export.Compose[1].Profiles)
	}
	// Without the block, nothing changes: no export.
	c, diags = Load("testdata/good")
	if diags.HasErrors() || c.Export != nil {
		t.Errorf("a catalogue without an export block: %v, %+v", diags, c.Export)
	}
}

// TestExportBlockAcrossFiles: a folder catalogue with an export block in
// two files is one mistake, at the second, naming the first.
func TestExportBlockAcrossFiles(t *testing.T) {
	_, diags := Parse(
		Source{Filename: "a.hcl", Bytes: []byte("export {\n  env = [\"a.env\"]\n}\n")},
		Source{Filename: "b.hcl", Bytes: []byte("module \"m\" {\n  image  = \"r.example/m\"\n  policy = \"exact\"\n  pin    = \"1\"\n}\n\nexport {\n  env = [\"b.env\"]\n}\n")},
	)
	if len(diags) != 1 || diags[0].Summary != "Duplicate export block" || diags[0].Subject.Filename != "b.hcl" || diags[0].Subject.Start.Line != 7 ||
		!strings.Contains(diags[0].Detail, "already, at a.hcl:1,1-7. Merge the two") {
		t.Errorf("diagnostics: %v", diags)
	}
}

// TestExportBlockMistakes: what the # ERROR: fixture cannot say: the
// column of each mistake, and that the detail says what to write.
func TestExportBlockMistakes(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line, col int
		summary   string
		detail    string
	}{
		{"label", "export \"prod\" {\n}\n", 1, 8, "Extraneous label for export", "No labels are expected"},
		{"compose as an attribute", "export {\n  compose = [\"compose.yaml\"]\n}\n", 2, 3, "Unsupported argument", `The export block takes compose { files = ["compose.yaml"] }`},
		{"unknown block", "export {\n  helm {\n  }\n}\n", 2, 3, "Unsupported block type", "manifests = [\"deploy/\"]"},
		{"one string for a list", "export {\n  env = \"deploy.env\"\n}\n", 2, 9, "Invalid value", `env must be a list of strings. Write it as a literal, such as env = ["deploy.env"]`},
		{"element of a list", "export {\n  manifests = [\"a\", 3, true, \"\"]\n}\n", 2, 30, "Empty path", "manifests lists an empty path"},
		{"duplicate element", "export {\n  manifests = [\"deploy\",\n    \"./deploy/\"]\n}\n", 3, 5, "Duplicate path", `manifests lists "./deploy/" twice (first at c.hcl:2,16-24)`},
		{"empty project name", "export {\n  compose {\n    files = [\"c.yaml\"]\n    project_name = \" \"\n  }\n}\n", 4, 20, "Empty project name", "as docker compose -p takes it"},
		{"a variable", "export {\n  env = [var.env]\n}\n", 2, 10, "Variables not allowed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := Parse(Source{Filename: "c.hcl", Bytes: []byte(tc.src)})
			if len(diags) != 1 {
				t.Fatalf("want one diagnostic, got %v", diags)
			}
			d := diags[0]
			if d.Summary != tc.summary || d.Subject.Start.Line != tc.line || d.Subject.Start.Column != tc.col || !strings.Contains(d.Detail, tc.detail) {
				t.Errorf("got %s:%d:%d %s: %s", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, d.Summary, d.Detail)
			}
		})
	}
}

// TestExportCheck: a path the block names that is not there is a
// diagnostic at that path in the block, at export time: loading does not
// look (pin admit loads the catalogue where no deploy file is).
func TestExportCheck(t *testing.T) {
	c, diags := Load("testdata/export")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := diagLines(c.Export.Check())
	if diff := cmp.Diff([]string{"testdata/export/catalogue.hcl:9:17: Export path not found: The Compose file /srv/other/compose.yaml does not exist."}, got); diff != "" {
		t.Errorf("check (-want +got):\n%s", diff)
	}

	dir := t.TempDir()
	src := "export {\n  compose {\n    files = [\"compose.yaml\", \"gone.yaml\"]\n  }\n  manifests = [\"deploy\"]\n  kustomize = [\"base\", \"overlay\"]\n  env = [\"deploy.env\", \"secrets/deploy.env\"]\n}\n"
	for name, text := range map[string]string{"catalogue.hcl": src, "compose.yaml": "services: {}\n", "base/kustomization.yaml": "resources: []\n", "overlay/other.yaml": "x: 1\n"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	c, diags = Load(filepath.Join(dir, "catalogue.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got = diagLines(c.Export.Check())
	cat := filepath.Join(dir, "catalogue.hcl")
	want := []string{
		cat + ":3:30: Export path not found: The Compose file " + filepath.Join(dir, "gone.yaml") + " does not exist.",
		cat + ":5:16: Export path not found: The manifests path " + filepath.Join(dir, "deploy") + " does not exist.",
		cat + ":6:24: Export path not found: The kustomize folder " + filepath.Join(dir, "overlay", "kustomization.yaml") + " does not exist.",
		cat + ":7:24: Export path not found: The env file's folder " + filepath.Join(dir, "secrets") + " does not exist.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("check (-want +got):\n%s", diff)
	}
	for _, d := range c.Export.Check() {
		if !strings.Contains(d.Detail, "relative to the folder of the catalogue file ("+dir+")") {
			t.Errorf("detail does not say what paths are relative to: %s", d.Detail)
		}
	}
	var none *Export
	if none.Check() != nil {
		t.Error("no block: diagnostics")
	}
}

func diagLines(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		first, _, _ := strings.Cut(d.Detail, " Create it")
		out = append(out, fmt.Sprintf("%s:%d:%d: %s: %s", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, d.Summary, first))
	}
	return out
}

// TestExportOverride: flags that name a file replace the whole block
// (as docker compose -f replaces compose.yaml); flags that only set a
// Compose setting change the block's project (as -p replaces name:).
func TestExportOverride(t *testing.T) {
	block := &Export{
		Compose: []ComposeExport{{Files: []string{"compose.yaml"}, ProjectName: "stack", Profiles: []string{"build"}}},
		Env:     []string{"deploy.env"},
	}
	two := &Export{Compose: []ComposeExport{{Files: []string{"a/compose.yaml"}}, {Files: []string{"b/compose.yaml"}, InPlace: true}}}
	for _, tc := range []struct {
		name  string
		block *Export
		cmd   Export
		want  Export
		err   bool
	}{
		{name: "no flags: the block", block: block, want: *block},
		{name: "no flags, no block: nothing", want: Export{}},
		{name: "a file replaces the block", block: block, cmd: Export{Compose: []ComposeExport{{}}, Kustomize: []string{"k"}}, want: Export{Kustomize: []string{"k"}, Compose: []ComposeExport{}}},
		{name: "a Compose file replaces the block's settings too", block: block, cmd: Export{Compose: []ComposeExport{{Files: []string{"other.yaml"}}}},
			want: Export{Compose: []ComposeExport{{Files: []string{"other.yaml"}}}}},
		{name: "settings change the block's project", block: block, cmd: Export{Compose: []ComposeExport{{ProjectName: "p", Profiles: []string{}, InPlace: true}}},
			want: Export{Compose: []ComposeExport{{Files: []string{"compose.yaml"}, ProjectName: "p", Profiles: []string{}, InPlace: true}}, Env: []string{"deploy.env"}}},
		{name: "profiles and in place go to every project", block: two, cmd: Export{Compose: []ComposeExport{{Profiles: []string{"x"}, InPlace: true}}},
			want: Export{Compose: []ComposeExport{{Files: []string{"a/compose.yaml"}, Profiles: []string{"x"}, InPlace: true}, {Files: []string{"b/compose.yaml"}, Profiles: []string{"x"}, InPlace: true}}}},
		{name: "one project name for two projects", block: two, cmd: Export{Compose: []ComposeExport{{ProjectName: "p"}}}, err: true},
		{name: "a setting without a project", block: &Export{Env: []string{"e"}}, cmd: Export{Compose: []ComposeExport{{InPlace: true}}}, err: true},
		{name: "a setting without a block", cmd: Export{Compose: []ComposeExport{{Profiles: []string{"x"}}}}, err: true},
		{name: "a project name beside files of no Compose project", block: block, cmd: Export{Compose: []ComposeExport{{ProjectName: "p"}}, Env: []string{"e"}}, err: true},
		{name: "profiles beside files of no Compose project", cmd: Export{Compose: []ComposeExport{{Profiles: []string{"x"}}}, Kustomize: []string{"k"}}, err: true},
		{name: "in place beside manifests (which it is for)", cmd: Export{Compose: []ComposeExport{{InPlace: true}}, Manifests: []string{"k8s"}},
			want: Export{Compose: []ComposeExport{}, Manifests: []string{"k8s"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.block.Override(tc.cmd)
			if tc.err {
				if !errors.Is(err, ErrExportSetting) {
					t.Errorf("want an ErrExportSetting, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(Export{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// The block itself is not changed by an override.
	if block.Compose[0].ProjectName != "stack" || two.Compose[0].InPlace {
		t.Errorf("Override changed the block: %+v %+v", block, two)
	}
}
