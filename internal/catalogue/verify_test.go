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

// TestAllowUnverified: allow_unverified is a reason in words, and needs a
// verify policy to keep anything (the module's own, or its registry's).
func TestAllowUnverified(t *testing.T) {
	src := `
registry "registry.example.org" {
  verify {
    keys = ["cosign.pub"]
  }
}
module "inherits" {
  image            = "registry.example.org/a"
  policy           = "track-upstream"
  allow_unverified = "the vendor deleted 1.4.2's signature by mistake; re-signing asked in SUP-1234"
}
`
	c, diags := Parse(Source{Filename: "c.hcl", Bytes: []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if m := c.Module("inherits"); !strings.HasPrefix(m.AllowUnverified, "the vendor deleted") || m.Verify == nil {
		t.Errorf("inherits: %q, verify %v", m.AllowUnverified, m.Verify)
	}
	for _, tt := range []struct{ image, value, want string }{
		{"registry.example.org/m", `"\u200b"`, "Empty reason to keep an unverified image"},
		{"registry.example.org/m", `"  "`, "Empty reason to keep an unverified image"},
		{"other.example.org/m", `"why"`, "allow_unverified without a verify policy"},
	} {
		src := src + "module \"m\" {\n  image  = \"" + tt.image + "\"\n  policy = \"track-upstream\"\n  allow_unverified = " + tt.value + "\n}\n"
		_, diags := Parse(Source{Filename: "c.hcl", Bytes: []byte(src)})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), tt.want) || diags[0].Subject == nil || diags[0].Subject.Start.Line != 15 {
			t.Errorf("%s %s: want %q at line 15, got %v", tt.image, tt.value, tt.want, diags)
		}
	}
}
