package catalogue

import (
	"testing"
	"time"
)

// TestMinAge: min_age on a track-upstream module, and the catalogue's as
// the default of those that say none ("0" says none); other policies
// take no default, and a bad age is a ranged diagnostic.
func TestMinAge(t *testing.T) {
	src := `min_age = "3d"

host "h" { snapshot = "h.json" }

module "own" {
  image   = "r.example/own"
  policy  = "track-upstream"
  min_age = "36h"
}

module "inherits" {
  image  = "r.example/inherits"
  policy = "track-upstream"
}

module "none" {
  image   = "r.example/none"
  policy  = "track-upstream"
  min_age = "0"
}

module "runs" {
  image  = "r.example/runs"
  policy = "at-least-running"
  runs_on "h" { container = "runs" }
}
`
	c, diags := Parse(Source{Filename: "c.hcl", Bytes: []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if c.MinAge != 72*time.Hour {
		t.Errorf("catalogue min_age %v", c.MinAge)
	}
	for name, want := range map[string]time.Duration{"own": 36 * time.Hour, "inherits": 72 * time.Hour, "none": 0, "runs": 0} {
		if got := c.Module(name).MinAge; got != want {
			t.Errorf("%s: min_age %v, want %v", name, got, want)
		}
	}

	for _, bad := range []string{`"three days"`, `"-3d"`, `"3"`, `3`} {
		_, diags := Parse(Source{Filename: "bad.hcl", Bytes: []byte("module \"m\" {\n  image   = \"r.example/m\"\n  policy  = \"track-upstream\"\n  min_age = " + bad + "\n}\n")})
		if !diags.HasErrors() || diags[0].Subject == nil || diags[0].Subject.Start.Line != 4 {
			t.Errorf("min_age = %s: %v", bad, diags)
		}
	}
	_, diags = Parse(Source{Filename: "a.hcl", Bytes: []byte(`min_age = "1d"`)}, Source{Filename: "b.hcl", Bytes: []byte(`min_age = "2d"`)})
	if !diags.HasErrors() || diags[0].Summary != "Duplicate min_age" {
		t.Errorf("two catalogue min_ages: %v", diags)
	}
	for in, want := range map[string]time.Duration{"3d": 72 * time.Hour, "1d12h": 36 * time.Hour, "90m": 90 * time.Minute, "0": 0} {
		if got, err := ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v", in, got, err)
		}
		if got, _ := ParseAge(FormatAge(want)); got != want {
			t.Errorf("FormatAge(%v) = %q does not read back", want, FormatAge(want))
		}
	}
}
