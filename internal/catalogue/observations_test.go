package catalogue

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestObservationsHost(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "catalogue.hcl")
	os.WriteFile(p, []byte(`host "edge-1" {
  observations     = "oci://registry.example.org/fleet/observations"
  max_age          = "30m"
  skip_unreachable = true
  verify { keys = ["fleet.pub"] }
}

host "edge-2" {
  observations = "published"
  verify { keys = ["fleet.pub"] }
}

module "app" {
  image  = "registry.example.org/app"
  policy = "at-least-running"
  pin    = "1.0.0"
  runs_on "edge-1" { container = "app" }
}
`), 0o644)
	c, diags := Load(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e1, e2 := c.Host("edge-1"), c.Host("edge-2")
	if e1.Observations != "oci://registry.example.org/fleet/observations" || e1.MaxAge != 30*time.Minute || !e1.SkipUnreachable ||
		e1.Verify == nil || e1.Verify.Keys[0] != filepath.Join(dir, "fleet.pub") {
		t.Errorf("edge-1: %+v", e1)
	}
	if e2.Observations != filepath.Join(dir, "published") || e2.MaxAge != 0 || e2.SkipUnreachable {
		t.Errorf("edge-2: %+v", e2)
	}
}
