package catalogue

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestGuideProvenBuilds loads the catalogue of docs/guides/proven-builds.md
// (its first hcl block) and checks what the guide says of it.
func TestGuideProvenBuilds(t *testing.T) {
	b, err := os.ReadFile("../../docs/guides/proven-builds.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```hcl\n")
	src, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("the guide has no hcl block")
	}
	c, diags := Parse(Source{Filename: "proven-builds.hcl", Bytes: []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if c.Module("proxy").MinAge != 7*24*time.Hour || c.Module("web").MinAge != 0 || c.MinAge != 3*24*time.Hour {
		t.Errorf("min_age: proxy %v, web %v, catalogue %v", c.Module("proxy").MinAge, c.Module("web").MinAge, c.MinAge)
	}
	if p := c.Environment("production"); p.Require != nil || !p.Requires(RequireHealthy) || p.Soak != 24*time.Hour {
		t.Errorf("production: %+v", p)
	}
}
