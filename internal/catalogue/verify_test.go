package catalogue

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyBlocks: a module's verify block wins over its registry's,
// which the registry's other modules inherit; key paths are taken from
// the catalogue's folder; match_repository is off unless set; bad blocks
// say what to write.
func TestVerifyBlocks(t *testing.T) {
	src := `
registry "registry.example.org" {
  verify {
    keys = ["keys/registry.pub"]
  }
}
module "inherits" {
  image  = "registry.example.org/a"
  policy = "track-upstream"
}
module "own" {
  image  = "registry.example.org/b"
  policy = "track-upstream"
  verify {
    keys             = ["/abs/own.pub"]
    match_repository = true
  }
}
module "none" {
  image  = "other.example.org/c"
  policy = "track-upstream"
}
`
	c, diags := Parse(Source{Filename: filepath.Join("/cat", "catalogue.hcl"), Bytes: []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if v := c.Module("inherits").Verify; v == nil || len(v.Keys) != 1 || v.Keys[0] != "/cat/keys/registry.pub" || v.MatchRepository {
		t.Errorf("inherits: %+v", v)
	}
	if v := c.Module("own").Verify; v == nil || v.Keys[0] != "/abs/own.pub" || !v.MatchRepository {
		t.Errorf("own: %+v", v)
	}
	if v := c.Module("none").Verify; v != nil {
		t.Errorf("none: %+v", v)
	}

	for _, tt := range []struct{ body, want string }{
		{`verify {}`, "Empty verify block"},
		{`verify {
    keys   = ["a.pub"]
    issuer = "https://issuer"
  }`, "Two verify methods"},
		{`verify {
    issuer = "https://issuer"
  }`, "Incomplete keyless identity"},
		{`verify {
    issuer        = "https://issuer"
    subject_regex = "("
    trusted_root  = "root.json"
  }`, "Invalid subject_regex"},
		{`verify {
    keys = ["a.pub"]
  }
  verify {
    keys = ["b.pub"]
  }`, "Duplicate verify block"},
	} {
		src := "module \"m\" {\n  image  = \"registry.example.org/m\"\n  policy = \"track-upstream\"\n  " + tt.body + "\n}\n"
		_, diags := Parse(Source{Filename: "c.hcl", Bytes: []byte(src)})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), tt.want) {
			t.Errorf("%s: want %q, got %v", tt.body, tt.want, diags)
		}
	}
}

// TestVerifyKeylessBlock: a keyless identity is read whole, its trusted
// root taken from the catalogue's folder, and inherited from a registry.
func TestVerifyKeylessBlock(t *testing.T) {
	src := `
registry "ghcr.io" {
  verify {
    issuer        = "https://token.actions.githubusercontent.com"
    subject_regex = "^https://github.com/example/.*$"
    trusted_root  = "sigstore/trusted_root.json"
  }
}
module "web" {
  image  = "ghcr.io/example/web"
  policy = "track-upstream"
}
`
	c, diags := Parse(Source{Filename: filepath.Join("/cat", "catalogue.hcl"), Bytes: []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	v := c.Module("web").Verify
	if v == nil || v.Issuer != "https://token.actions.githubusercontent.com" || v.SubjectRegex == nil || !v.SubjectRegex.MatchString("https://github.com/example/web/.github/workflows/release.yml@refs/tags/v1") ||
		v.Subject != "" || v.TrustedRoot != "/cat/sigstore/trusted_root.json" || len(v.Keys) != 0 {
		t.Errorf("web: %+v", v)
	}
}
