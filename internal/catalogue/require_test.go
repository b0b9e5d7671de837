package catalogue

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEnvironmentRequire: an environment without require asks every
// requirement of a build; one with require asks those it names, in
// Requirements' order, running always among them.
func TestEnvironmentRequire(t *testing.T) {
	src := `
host "s1" { snapshot = "s1.json" }
host "p1" { snapshot = "p1.json" }
host "p2" { snapshot = "p2.json" }
environment "staging" { hosts = ["s1"] }
environment "production" {
  hosts = ["p1"]
  from  = "staging"
}
environment "lab" {
  hosts   = ["p2"]
  from    = "staging"
  require = ["no-restart", "running"]
}
`
	c, diags := Parse(Source{Filename: "c.hcl", Bytes: []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	prod, lab := c.Environment("production"), c.Environment("lab")
	if prod.Require != nil {
		t.Errorf("production requires %v", prod.Require)
	}
	if d := cmp.Diff([]string{RequireRunning, RequireNoRestart}, lab.Require); d != "" {
		t.Errorf("lab's require (-want +got):\n%s", d)
	}
	for _, r := range Requirements {
		if !prod.Requires(r) {
			t.Errorf("production does not require %s", r)
		}
		if want := r == RequireRunning || r == RequireNoRestart; lab.Requires(r) != want {
			t.Errorf("lab requires %s: %v", r, lab.Requires(r))
		}
	}
}
