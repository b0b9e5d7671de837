package lock

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// agree checks the fast path against hclparse on src: whatever the fast
// path accepts, hclparse reads without errors to the same lock, DeclRange
// included. It reports whether the fast path accepted.
func agree(t *testing.T, src []byte) bool {
	t.Helper()
	fast, ok := parseFast(src, "pin.lock.hcl")
	if !ok {
		return false
	}
	slow, diags := parseHCL(src, "pin.lock.hcl")
	if diags.HasErrors() {
		t.Fatalf("the fast path accepted a lock hclparse rejects: %v\n%s", diags, src)
	}
	if diff := cmp.Diff(rawModules(slow), rawModules(fast)); diff != "" {
		t.Fatalf("fast path and hclparse differ (-hclparse +fast):\n%s\n%s", diff, src)
	}
	return true
}

// TestFastPathAgrees: on pin's own locks the fast path is taken and reads
// what hclparse reads.
func TestFastPathAgrees(t *testing.T) {
	sampleSrc, err := os.ReadFile("testdata/sample.lock.hcl")
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string][]byte{
		"empty":      Format(nil),
		"sample":     Format(sample()),
		"golden":     sampleSrc,
		"bench 1000": Format(benchLock(1000)),
		"escapes": Format(&Lock{Modules: []*Module{{
			Name: `a "quoted" name`, Policy: "exact", Image: "registry.example.org/x/y",
			Digest: "sha256:" + strings.Repeat("a", 64), Source: SourcePin,
			Reason: "line one\nline two\twith a tab, a \\ backslash, 100% and $HOME, café",
			Tag:    "1.0",
			Observed: []Observation{{
				Host: "h\"1", Container: "c\\d", Tag: "ü", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			}},
		}}}),
	} {
		t.Run(name, func(t *testing.T) {
			if !agree(t, src) {
				t.Fatalf("the fast path refused a lock Format wrote:\n%s", src)
			}
		})
	}
}

// TestFastPathRefuses: the fast path gives every lock that is not exactly
// Format's, or that Parse must complain about, to hclparse, so that Parse's
// diagnostics are hclparse's.
func TestFastPathRefuses(t *testing.T) {
	good := string(Format(sample()))
	digest := "sha256:" + strings.Repeat("a", 64)
	cases := map[string]string{
		"comment":           strings.Replace(good, "module \"db\"", "# note\nmodule \"db\"", 1),
		"no header":         strings.TrimPrefix(good, header),
		"spacing":           strings.Replace(good, `policy          = "exact"`, `policy = "exact"`, 1),
		"no final newline":  strings.TrimSuffix(good, "\n"),
		"template":          strings.Replace(good, `"the exact pin"`, `"the ${exact} pin"`, 1),
		"escaped template":  strings.Replace(good, `"the exact pin"`, `"the $${exact} pin"`, 1),
		"unicode escape":    strings.Replace(good, `"the exact pin"`, `"the \u0041 pin"`, 1),
		"bad digest":        strings.Replace(good, digest, "sha256:nothex", 1),
		"bad source":        strings.Replace(good, `source          = "pin"`, `source          = "pim"`, 1),
		"bad policy":        strings.Replace(good, `policy          = "exact"`, `policy          = "exactly"`, 1),
		"short image":       strings.Replace(good, `"registry.example.org/db/postgres"`, `"postgres"`, 1),
		"bad date":          strings.Replace(good, `"2026-09-01T12:00:00Z"`, `"2026-09-01"`, 1),
		"unknown attribute": strings.Replace(good, "  reason          = \"the exact pin\"\n", "  reason          = \"the exact pin\"\n  colour          = \"red\"\n", 1),
		"out of order":      header + "\n" + moduleText("b", digest) + "\n" + moduleText("a", digest),
		"duplicate":         header + "\n" + moduleText("a", digest) + "\n" + moduleText("a", digest),
		"missing digest":    header + "\nmodule \"a\" {\n  policy = \"exact\"\n  image  = \"registry.example.org/a/a\"\n  source = \"pin\"\n}\n",
		"non-ASCII label":   header + "\n" + moduleText("é", digest),
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			if src == good {
				t.Fatal("the case changed nothing")
			}
			if _, ok := parseFast([]byte(src), "pin.lock.hcl"); ok {
				t.Fatalf("the fast path accepted:\n%s", src)
			}
			got, gd := Parse([]byte(src), "pin.lock.hcl")
			want, wd := parseHCL([]byte(src), "pin.lock.hcl")
			if diff := cmp.Diff(rawModules(want), rawModules(got)); diff != "" {
				t.Errorf("Parse is not hclparse's result:\n%s", diff)
			}
			if gd.Error() != wd.Error() {
				t.Errorf("Parse's diagnostics %v, hclparse's %v", gd, wd)
			}
		})
	}
	// The control: each module alone is one the fast path takes.
	if !agree(t, []byte(header+"\n"+moduleText("a", digest))) {
		t.Error("the fast path refused a plain module")
	}
}

// rawModule is Module without its methods: cmp would otherwise compare
// with Module.Equal, which ignores DeclRange.
type rawModule Module

func rawModules(l *Lock) []rawModule {
	var out []rawModule
	for _, m := range l.Modules {
		out = append(out, rawModule(*m))
	}
	for _, m := range l.Retired {
		r := rawModule(*m)
		r.Name = "retired " + r.Name
		out = append(out, r)
	}
	return out
}

func moduleText(name, digest string) string {
	return fmt.Sprintf("module %q {\n  policy = \"exact\"\n  image  = \"registry.example.org/a/%s\"\n  digest = %q\n  source = \"pin\"\n}\n", name, "x", digest)
}

// TestQuoteAgrees: quote's shortcut writes what hclwrite writes.
func TestQuoteAgrees(t *testing.T) {
	for _, s := range []string{"", "plain", "1.2.3-alpine", "a b", "~>{}", `"`, `\`, "$", "%", "${x}", "%{x}", "$${", "\n", "\x7f", "é", "e\u0301", "\u200b"} {
		want := hclwrite.TokensForValue(cty.StringVal(s)).Bytes()
		if got := quote(s); !bytes.Equal(got, want) {
			t.Errorf("quote(%q) = %s, hclwrite %s", s, got, want)
		}
	}
}

// FuzzFastPathValues builds a lock from fuzzed strings, formats it and
// reads it both ways: where the fast path takes it, it must agree with
// hclparse.
func FuzzFastPathValues(f *testing.F) {
	f.Add("web", "1.2", "newest upstream", "mesh-1", "forgejo", "linux/amd64")
	f.Add(`a"b`, "v$1", "100% of ${x} \\ done\n", "h\t", "é", "e\u0301")
	f.Fuzz(func(t *testing.T, name, tag, reason, host, container, platform string) {
		digest := "sha256:" + strings.Repeat("b", 64)
		l := &Lock{Modules: []*Module{{
			Name: name, Policy: "track-upstream", Image: "registry.example.org/fleet/app",
			Tag: tag, Digest: digest, Reason: reason, Source: SourceUpstream,
			Platforms: map[string]string{platform: digest},
			Observed:  []Observation{{Host: host, Container: container, Tag: tag}},
		}}}
		agree(t, Format(l))
	})
}

// TestParseFallsBackWithRanges: a lock hclparse reads, but not in Format's
// layout, still reads with its ranges.
func TestParseFallsBackWithRanges(t *testing.T) {
	src := header + "\n# hand-edited\n" + moduleText("a", "sha256:"+strings.Repeat("c", 64))
	l, diags := Parse([]byte(src), "pin.lock.hcl")
	if diags.HasErrors() || len(l.Modules) != 1 {
		t.Fatalf("%v", diags)
	}
	want := hcl.Range{Filename: "pin.lock.hcl", Start: hcl.Pos{Line: 6, Column: 1, Byte: len(header) + 15}, End: hcl.Pos{Line: 6, Column: 11, Byte: len(header) + 25}}
	if l.Modules[0].DeclRange != want {
		t.Errorf("DeclRange %v, want %v", l.Modules[0].DeclRange, want)
	}
}
