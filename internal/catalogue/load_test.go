package catalogue

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

var errorComment = regexp.MustCompile(`# ERROR: (.+)$`)

// TestBadCatalogues loads each file under testdata/bad and checks that the
// errors reported are exactly those its "# ERROR:" comments announce, on
// those lines, all in one run.
func TestBadCatalogues(t *testing.T) {
	files, _ := filepath.Glob("testdata/bad/*.hcl")
	if len(files) == 0 {
		t.Fatal("no bad catalogues")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want := expectedErrors(t, f)
			_, diags := Load(f)
			var got []string
			for _, d := range diags {
				if d.Severity != hcl.DiagError {
					continue
				}
				if d.Subject == nil {
					t.Errorf("diagnostic %q has no source range", d.Summary)
					continue
				}
				if d.Detail == "" {
					t.Errorf("diagnostic %q has no detail", d.Summary)
				}
				got = append(got, fmt.Sprintf("%d: %s", d.Subject.Start.Line, d.Summary))
			}
			sort.Strings(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

func expectedErrors(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	s := bufio.NewScanner(f)
	for line := 1; s.Scan(); line++ {
		if m := errorComment.FindStringSubmatch(s.Text()); m != nil && !strings.HasPrefix(strings.TrimSpace(s.Text()), "#") {
			want = append(want, fmt.Sprintf("%d: %s", line, m[1]))
		}
	}
	sort.Strings(want)
	return want
}

func TestGoodCatalogue(t *testing.T) {
	c, diags := Load("testdata/good")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if got := len(c.Modules); got != 3 {
		t.Fatalf("modules = %d, want 3", got)
	}
	names := []string{c.Modules[0].Name, c.Modules[1].Name, c.Modules[2].Name}
	if diff := cmp.Diff([]string{"alpine", "db", "forge"}, names); diff != "" {
		t.Errorf("modules not sorted by name (-want +got):\n%s", diff)
	}
	alpine := c.Module("alpine")
	if alpine.Image != "index.docker.io/library/alpine" {
		t.Errorf("short name not normalised: %q", alpine.Image)
	}
	if alpine.Platform() != "linux/arm64/v8" || alpine.Constraint == nil {
		t.Errorf("alpine: platform %q constraint %v", alpine.Platform(), alpine.Constraint)
	}
	forge := c.Module("forge")
	if forge.Pin.Tag != "1.22.6" || !strings.HasPrefix(forge.Pin.Digest, "sha256:0000") {
		t.Errorf("forge pin = %+v", forge.Pin)
	}
	if len(forge.RunsOn) != 2 || forge.RunsOn[0].Container != "forgejo" || forge.RunsOn[1].Container != "" {
		t.Errorf("forge runs_on = %+v", forge.RunsOn)
	}
	db := c.Module("db")
	if db.Pin.Tag != "" || db.Pin.Digest == "" || !db.OneWay || db.Restore == "" {
		t.Errorf("db = %+v", db)
	}
	if v, ok := db.Versioning.Parse("16.4-bookworm"); !ok || v.String() != "16.4" {
		t.Errorf("db versioning did not parse 16.4-bookworm: %+v %v", v, ok)
	}
	h := c.Host("mesh-1")
	if h.Snapshot != filepath.Join("testdata", "good", "mesh-1.json") {
		t.Errorf("snapshot path = %q, want it relative to the catalogue's folder", h.Snapshot)
	}
	if r := c.Registry("registry.example.org"); r == nil || r.MirrorLayout != filepath.Join("testdata", "good", "layout") {
		t.Errorf("registry.example.org = %+v", r)
	}
	if r := c.Registry("index.docker.io"); r == nil || r.MirrorHost != "mirror.example.org:5000" || len(r.TokenHosts) != 1 || r.TokenHosts[0] != "auth.mirror.example.org" {
		t.Errorf("docker.io not normalised or mirror host wrong: %+v", c.Registries)
	}
	for host, want := range map[string][]string{
		"index.docker.io":      {"index.docker.io/library/alpine"},
		"registry.example.org": {"registry.example.org/db/postgres", "registry.example.org/forge/forgejo"},
		"docker.io":            nil, // names are normalised
		"example.org":          nil,
	} {
		if diff := cmp.Diff(want, c.Repositories(host)); diff != "" {
			t.Errorf("Repositories(%q) (-want +got):\n%s", host, diff)
		}
	}
}

func TestParsePin(t *testing.T) {
	const d = "sha256:0000000000000000000000000000000000000000000000000000000000000001"
	tests := []struct {
		in, tag, digest string
		bad             bool
	}{
		{in: "1.22.6", tag: "1.22.6"},
		{in: "v1.2", tag: "v1.2"},
		{in: "1.22.6@" + d, tag: "1.22.6", digest: d},
		{in: d, digest: d},
		{in: "@" + d, digest: d},
		{in: "1.2@sha256:abc", bad: true},
		{in: "-bad", bad: true},
		{in: "", bad: true},
		{in: "a:b", bad: true},
	}
	for _, tt := range tests {
		p, msg := ParsePin(tt.in)
		if (msg != "") != tt.bad {
			t.Errorf("ParsePin(%q) message %q, want bad=%v", tt.in, msg, tt.bad)
			continue
		}
		if !tt.bad && (p.Tag != tt.tag || p.Digest != tt.digest) {
			t.Errorf("ParsePin(%q) = %+v", tt.in, p)
		}
	}
}

func FuzzLoad(f *testing.F) {
	for _, p := range []string{"testdata/good/catalogue.hcl", "testdata/bad/five.hcl", "testdata/environments/catalogue.hcl", "testdata/bad/environments.hcl"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		c, diags := Parse(Source{Filename: "fuzz.hcl", Bytes: src})
		if c == nil {
			t.Fatal("nil catalogue")
		}
		for _, d := range diags {
			if d.Severity == hcl.DiagError && d.Summary == "" {
				t.Fatalf("error without summary: %+v", d)
			}
		}
	})
}

// TestTrackUpstreamPinSaysWhatToWrite: a non-version pin under
// track-upstream is an error at the pin, whose detail says what to write.
func TestTrackUpstreamPinSaysWhatToWrite(t *testing.T) {
	_, diags := Parse(Source{Filename: "c.hcl", Bytes: []byte("module \"nginx\" {\n  image  = \"nginx\"\n  policy = \"track-upstream\"\n  pin    = \"latest\"\n}\n")})
	if len(diags) != 1 || diags[0].Subject.Start.Line != 4 || diags[0].Subject.Start.Column != 12 ||
		!strings.Contains(diags[0].Detail, `To follow the floating tag "latest", write tag = "latest" instead of pin`) || !strings.Contains(diags[0].Detail, `policy = "at-least-running"`) {
		t.Errorf("diagnostics: %v", diags)
	}
}
